//! Reading one SKILL.md: its front matter's keys (the peers' names and shapes), its name checked
//! the peers' way (warned about, kept), its description (or its body's first paragraph).

use std::path::{Path, PathBuf};

use super::{MAX_DESCRIPTION, Scope, Skill, front_matter};

/// A malformed `SKILL.md`, named with its file and line (`path:3: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct ParseError {
    pub path: PathBuf,
    pub line: usize,
    pub problem: String,
}

/// Whether `name` follows the Agent Skills rule: 1–64 lowercase letters, digits and hyphens,
/// no hyphen first, last or doubled.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A name pith can still route as `/NAME` (letters, digits, `-`, `_`, `.`).
fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A `SKILL.md` of the folder `folder`: the skill and the warnings it earns (a name that breaks
/// the rule or does not match its folder: kept, as the peers keep it).
pub fn parse(path: &Path, folder: &str, text: &str) -> Result<(Skill, Vec<String>), ParseError> {
    let at = |line: usize, problem: String| ParseError {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (pairs, body_start) = match front_matter::split(text) {
        Ok(Some(split)) => split,
        Ok(None) => (Vec::new(), 0),
        Err(e) => return Err(at(e.line, e.problem)),
    };
    let mut warnings = Vec::new();
    let Keys {
        name,
        description,
        allowed,
        hint,
        model_invocable,
        user_invocable,
    } = keys(pairs).map_err(|(line, problem)| at(line, problem))?;
    let lines: Vec<&str> = text.lines().collect();
    let body = lines[body_start.min(lines.len())..]
        .join("\n")
        .trim()
        .to_string();
    let name = resolve_name(path, folder, name, &mut warnings);
    if !usable_name(&name) {
        return Err(at(1, format!("no usable name (folder {folder})")));
    }
    // Without a description, the peers fall back on the body's first paragraph.
    let description = match description.filter(|d| !d.trim().is_empty()) {
        Some(d) => d,
        None => body
            .split("\n\n")
            .map(|p| p.trim().trim_start_matches('#').trim())
            .find(|p| !p.is_empty())
            .unwrap_or("")
            .to_string(),
    };
    if description.is_empty() {
        return Err(at(1, "no description and no text".into()));
    }
    let description = pith_protocol::text::one_line_max(&description, MAX_DESCRIPTION);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok((
        Skill {
            name,
            description,
            allowed_tools: allowed,
            argument_hint: hint,
            model_invocable,
            user_invocable,
            body,
            path: path.to_path_buf(),
            dir,
            scope: Scope::User,
            root: String::new(),
        },
        warnings,
    ))
}

/// The front matter's keys pith reads.
struct Keys {
    name: Option<(String, usize)>,
    description: Option<String>,
    allowed: Option<Vec<String>>,
    hint: String,
    model_invocable: bool,
    user_invocable: bool,
}

/// The keys of `pairs`; `Err((line, why))` for one of the wrong shape.
fn keys(pairs: Vec<front_matter::Pair>) -> Result<Keys, (usize, String)> {
    use front_matter::Value;
    let mut k = Keys {
        name: None,
        description: None,
        allowed: None,
        hint: String::new(),
        model_invocable: true,
        user_invocable: true,
    };
    let flag = |t: &str, line: usize, key: &str| match t.trim() {
        "true" | "yes" => Ok(true),
        "false" | "no" => Ok(false),
        _ => Err((line, format!("`{key}` must be true or false"))),
    };
    for (key, value, line) in pairs {
        match (key.as_str(), value) {
            ("name", Value::Text(t)) => k.name = Some((t.trim().to_string(), line)),
            ("description", Value::Text(t)) => k.description = Some(t),
            ("allowed-tools" | "allowed_tools", Value::Text(t)) => {
                k.allowed = Some(split_tools(&t));
            }
            ("allowed-tools" | "allowed_tools", Value::List(l)) => {
                k.allowed = Some(l.iter().flat_map(|e| split_tools(e)).collect());
            }
            ("argument-hint", Value::Text(t)) => k.hint = pith_protocol::text::one_line(&t),
            // `argument-hint: [version]` is a YAML list; the peers show it as written
            ("argument-hint", Value::List(l)) => k.hint = format!("[{}]", l.join(", ")),
            ("disable-model-invocation", Value::Text(t)) => {
                k.model_invocable = !flag(&t, line, &key)?;
            }
            ("user-invocable", Value::Text(t)) => k.user_invocable = flag(&t, line, &key)?,
            ("name" | "description" | "disable-model-invocation" | "user-invocable", _) => {
                return Err((line, format!("`{key}` must be text")));
            }
            _ => {} // license, metadata, version, model, … are other tools' business
        }
    }
    Ok(k)
}

/// The skill's name: the front matter's (warned about when it breaks the rule or does not
/// match its folder), else the folder's.
fn resolve_name(
    path: &Path,
    folder: &str,
    name: Option<(String, usize)>,
    warnings: &mut Vec<String>,
) -> String {
    match name {
        Some((n, line)) if !usable_name(&n) => {
            warnings.push(format!(
                "{}:{line}: `{n}` cannot be a skill's name (lowercase letters, digits, hyphens); the folder's name {folder} is used",
                path.display()
            ));
            folder.to_string()
        }
        Some((n, line)) => {
            if !valid_name(&n) {
                warnings.push(format!(
                    "{}:{line}: a skill's name should be lowercase letters, digits and hyphens: {n}",
                    path.display()
                ));
            } else if n != folder {
                warnings.push(format!(
                    "{}:{line}: the skill's name {n} does not match its folder {folder}",
                    path.display()
                ));
            }
            n
        }
        None => folder.to_string(),
    }
}

/// `Read, Grep, Bash(git status:*)` or `Read Grep Bash(git status:*)`: one entry each, a
/// parenthesis kept whole.
fn split_tools(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let separators_are_commas = s.contains(',');
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            c if c.is_whitespace() && depth == 0 && !separators_are_commas => {
                out.push(std::mem::take(&mut cur));
            }
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}
