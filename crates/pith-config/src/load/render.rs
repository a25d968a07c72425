//! `pith config`: the effective configuration as TOML, each value commented with its origin,
//! secrets redacted.

use std::fmt::Write as _;

use super::{Loaded, join_key};

/// The effective config as TOML with a `# from <origin>` comment on each value. Headers whose name
/// looks secret show `"<redacted>"`; `api_key_env` shows the variable's name and whether it is set,
/// never its value (`is_set` says whether a variable is set).
pub fn render_effective(loaded: &Loaded, is_set: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::from("# Effective pith configuration (later sources win).\n");
    if loaded.files.is_empty() {
        out.push_str("# No config file found: built-in defaults and environment only.\n");
    } else {
        out.push_str("# Files read, in order:\n");
        for f in &loaded.files {
            let _ = writeln!(out, "#   {}", f.display());
        }
    }
    for w in &loaded.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    match toml::Value::try_from(&loaded.config) {
        Ok(toml::Value::Table(t)) => {
            out.push('\n');
            emit(&mut out, &t, &[], loaded, is_set);
        }
        Ok(_) => {}
        Err(e) => {
            let _ = writeln!(out, "# cannot render the configuration: {e}");
        }
    }
    out
}

fn emit(
    out: &mut String,
    table: &toml::Table,
    path: &[&str],
    loaded: &Loaded,
    is_set: &dyn Fn(&str) -> bool,
) {
    let prefix = path.iter().fold(String::new(), |acc, k| join_key(&acc, k));
    let in_headers = path.len() == 3
        && ((path[0] == "provider" && path[2] == "headers")
            || (path[0] == "mcp" && matches!(path[2], "headers" | "env")));
    let mut keys: Vec<&String> = table.keys().collect();
    keys.sort();
    for k in keys.iter().filter(|k| !table[k.as_str()].is_table()) {
        let value = &table[k.as_str()];
        let key = join_key(&prefix, k);
        let origin = loaded.origin(&key);
        let shown = if in_headers && crate::is_secret_name(k) {
            "\"<redacted>\"".to_string()
        } else {
            value.to_string()
        };
        let mut note = format!("from {origin}");
        if path.len() == 2 && path[0] == "provider" && k.as_str() == "api_key_env" {
            match value.as_str() {
                Some(var) if super::is_env_name(var) => {
                    let state = if is_set(var) { "is set" } else { "is not set" };
                    let _ = write!(note, "; {var} {state}");
                }
                Some(_) => {
                    let _ = writeln!(
                        out,
                        "{} = \"<redacted>\"  # {note}; not a variable name",
                        super::key_str(k)
                    );
                    continue;
                }
                None => {}
            }
        }
        let _ = writeln!(out, "{} = {shown}  # {note}", super::key_str(k));
    }
    for k in keys.iter().filter(|k| table[k.as_str()].is_table()) {
        let Some(sub) = table[k.as_str()].as_table() else {
            continue;
        };
        let mut sub_path = path.to_vec();
        sub_path.push(k.as_str());
        let header = join_key(&prefix, k);
        let has_values = sub.values().any(|v| !v.is_table());
        if has_values || (sub.is_empty() && path.is_empty()) {
            let _ = writeln!(out, "\n[{header}]");
            if sub.is_empty() {
                out.push_str("# (none set)\n");
            }
        }
        emit(out, sub, &sub_path, loaded, is_set);
    }
}
