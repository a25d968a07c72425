//! Sub-agents defined in Markdown files: `<dir>/agents/NAME.md`, a front matter block (description,
//! model, tools) and the prompt as the body.
//!
//! ```markdown
//! ---
//! description: Reviews a change for bugs; give it the files or the diff to look at
//! model: anthropic/claude-haiku-4-5
//! tools: read, grep, glob
//! ---
//! You review code. …
//! ```
//!
//! The global config directory's `agents/` is always read; the workspace's `.pith/agents/` only
//! when the workspace is trusted (an agent's prompt and tools are instructions to the model).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::AgentConfig;
use super::load::ConfigError;

/// Largest agent file read: a prompt, not a book.
const MAX_FILE: u64 = 256 * 1024;

/// Whether `name` can name an agent (a file stem, a `[agent.NAME]` key).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The agents in the `*.md` files of `dir` (missing: none), by file stem.
pub fn read_dir(dir: &Path) -> Result<BTreeMap<String, AgentConfig>, ConfigError> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => {
            return Err(ConfigError::File {
                path: dir.to_path_buf(),
                message: format!("cannot read the agents directory: {e}"),
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    for path in paths {
        let Some(name) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let file_err = |message: String| ConfigError::File {
            path: path.clone(),
            message,
        };
        if !valid_name(&name) {
            return Err(file_err(
                "an agent's file name must be letters, digits, '-' or '_' (it names the agent)"
                    .into(),
            ));
        }
        // A symlink or a FIFO planted in a repository is not followed or waited on.
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| file_err(format!("cannot read agent file: {e}")))?;
        if !meta.is_file() {
            return Err(file_err("an agent file must be a regular file".into()));
        }
        if meta.len() > MAX_FILE {
            return Err(file_err(format!(
                "agent file is {} bytes; at most {MAX_FILE} are read",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| file_err(format!("cannot read agent file: {e}")))?;
        out.insert(name, parse(&path, &text)?);
    }
    Ok(out)
}

/// One agent file: front matter between `---` lines, then the prompt.
pub fn parse(path: &Path, text: &str) -> Result<AgentConfig, ConfigError> {
    let at = |line: usize, message: &str| ConfigError::At {
        path: path.to_path_buf(),
        line,
        column: 1,
        message: message.to_string(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l.trim_end() == "---" => {}
        _ => {
            return Err(at(
                1,
                "an agent file starts with a front matter block between `---` lines (description, model, tools)",
            ));
        }
    }
    let (mut agent, end) = read_front_matter(&mut lines, &at)?;
    if agent.description.trim().is_empty() {
        return Err(at(
            end,
            "an agent needs a `description:` (the model chooses agents by it)",
        ));
    }
    let body: Vec<&str> = lines.map(|(_, l)| l).collect();
    let prompt = body.join("\n").trim().to_string();
    if !prompt.is_empty() {
        agent.prompt = Some(prompt);
    }
    Ok(agent)
}

/// The front matter after its opening line, up to the closing `---`: the agent it describes and
/// the closing line's number. `at` makes the error for a line.
fn read_front_matter<'a>(
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
    at: &dyn Fn(usize, &str) -> ConfigError,
) -> Result<(AgentConfig, usize), ConfigError> {
    let mut agent = AgentConfig::default();
    // `tools:` with the list on the following `- name` lines
    let mut list_open = false;
    for (i, line) in lines {
        let n = i + 1;
        let trimmed = line.trim();
        if trimmed == "---" {
            return Ok((agent, n));
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ") {
            if !list_open {
                return Err(at(n, "a list item outside `tools:`"));
            }
            agent
                .tools
                .get_or_insert_with(Vec::new)
                .push(unquote(item).to_string());
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            return Err(at(n, "expected `key: value`"));
        };
        list_open = set_key(&mut agent, key.trim(), unquote(value.trim()))
            .map_err(|message| at(n, &message.to_string()))?;
    }
    Err(at(
        1,
        "the front matter block is not closed with a `---` line",
    ))
}

/// Sets one front matter key of `agent`. Returns whether it opens a `tools:` list on the lines
/// that follow; the error is the message for the key's line.
fn set_key(agent: &mut AgentConfig, key: &str, value: &str) -> Result<bool, FrontMatterError> {
    match key {
        "description" => agent.description = value.to_string(),
        "model" => {
            if !value.is_empty() {
                super::load::check_model_name(value).map_err(FrontMatterError::Model)?;
                agent.model = Some(value.to_string());
            }
        }
        "tools" => {
            let list = value.trim_start_matches('[').trim_end_matches(']');
            let tools: Vec<String> = list
                .split(',')
                .map(|t| unquote(t.trim()).to_string())
                .filter(|t| !t.is_empty())
                .collect();
            let open = tools.is_empty();
            agent.tools = Some(tools);
            return Ok(open);
        }
        "disable" => agent.disable = value == "true",
        // OpenCode's files say `mode: subagent`; every agent here is one
        "mode" | "name" => {}
        other => return Err(FrontMatterError::UnknownKey(other.to_string())),
    }
    Ok(false)
}

/// What is wrong with one line of an agent's front matter.
#[derive(Debug, thiserror::Error)]
enum FrontMatterError {
    #[error(transparent)]
    Model(#[from] super::load::BadModelName),
    #[error("unknown front matter key `{0}` (known: description, model, tools, disable)")]
    UnknownKey(String),
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// Adds the agents of the Markdown files to `agents`: the global directory's first, then the
/// workspace's when `trusted` (a warning names what an untrusted one would have added). An agent
/// already in the config files keeps its `[agent.NAME]` settings.
pub(crate) fn merge_markdown(
    agents: &mut BTreeMap<String, AgentConfig>,
    global_dir: Option<&Path>,
    workspace: &Path,
    trusted: bool,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let mut found = BTreeMap::new();
    if let Some(dir) = global_dir {
        found.extend(read_dir(&dir.join("agents"))?);
    }
    let ws_dir = workspace.join(".pith").join("agents");
    if trusted {
        found.extend(read_dir(&ws_dir)?);
    } else if let Ok(entries) = std::fs::read_dir(&ws_dir) {
        let n = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .count();
        if n > 0 {
            warnings.push(format!(
                "{}: {n} agent file(s) not used: this directory is not trusted; run `pith --trust` here to use them",
                ws_dir.display()
            ));
        }
    }
    for (name, agent) in found {
        agents.entry(name).or_insert(agent);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("/x/agents/review.md")
    }

    #[test]
    fn reads_front_matter_and_prompt() {
        let a = parse(
            p(),
            "---\ndescription: \"Reviews code\"\nmodel: anthropic/claude-haiku-4-5\ntools: read, grep\n---\n\nYou review.\nCarefully.\n",
        )
        .unwrap();
        assert_eq!(a.description, "Reviews code");
        assert_eq!(a.model.as_deref(), Some("anthropic/claude-haiku-4-5"));
        assert_eq!(a.tools, Some(vec!["read".to_string(), "grep".to_string()]));
        assert_eq!(a.prompt.as_deref(), Some("You review.\nCarefully."));
    }

    #[test]
    fn tools_as_yaml_lists() {
        let a = parse(p(), "---\ndescription: d\ntools: [read, 'glob']\n---\n").unwrap();
        assert_eq!(a.tools, Some(vec!["read".to_string(), "glob".to_string()]));
        let a = parse(
            p(),
            "---\ndescription: d\ntools:\n  - read\n  - list\n---\nx",
        )
        .unwrap();
        assert_eq!(a.tools, Some(vec!["read".to_string(), "list".to_string()]));
        assert_eq!(a.prompt.as_deref(), Some("x"));
    }

    #[test]
    fn bad_files_name_file_and_line() {
        let e = parse(p(), "no front matter").unwrap_err().to_string();
        assert!(e.starts_with("/x/agents/review.md:1:1:"), "{e}");
        let e = parse(p(), "---\ndescription: d\ncolour: red\n---\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/x/agents/review.md:3:1:") && e.contains("colour"),
            "{e}"
        );
        let e = parse(p(), "---\ntools: read\n---\nprompt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("description"), "{e}");
        let e = parse(p(), "---\ndescription: d\n").unwrap_err().to_string();
        assert!(e.contains("not closed"), "{e}");
        let e = parse(p(), "---\ndescription: d\nmodel: nomodel\n---\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/x/agents/review.md:3:1:"), "{e}");
    }

    #[test]
    fn the_workspace_directory_needs_trust() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(".pith/agents");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scan.md"), "---\ndescription: scans\n---\nScan.").unwrap();
        let mut agents = BTreeMap::new();
        let mut warnings = Vec::new();
        merge_markdown(&mut agents, None, ws.path(), false, &mut warnings).unwrap();
        assert!(agents.is_empty());
        assert!(warnings[0].contains("not trusted"), "{warnings:?}");
        merge_markdown(&mut agents, None, ws.path(), true, &mut warnings).unwrap();
        assert_eq!(agents["scan"].prompt.as_deref(), Some("Scan."));
        // what the config files say about an agent wins over a file of the same name
        let mut agents = BTreeMap::from([(
            "scan".to_string(),
            AgentConfig {
                description: "from config".into(),
                ..AgentConfig::default()
            },
        )]);
        merge_markdown(&mut agents, None, ws.path(), true, &mut warnings).unwrap();
        assert_eq!(agents["scan"].description, "from config");
    }
}
