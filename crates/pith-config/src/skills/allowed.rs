//! `allowed-tools` as Claude Code writes it (`Read`, `Grep`, `Bash(git:*)`, `Bash(npm run test)`,
//! `mcp__github__search`), mapped to pith's tools. The list only ever narrows what the model may
//! call while the skill is active; it grants nothing (ARCHITECTURE.md §4.7).

/// One entry: a pith tool, and for `bash` the command prefix it is narrowed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRule {
    /// pith's name (`bash`, `read`, `github_search`).
    pub tool: String,
    /// `bash` only: the command must start with this (whole words); `None`: any command.
    pub prefix: Option<String>,
    /// `bash` only: the command must be `prefix` exactly (`Bash(npm run test)`, no `*`).
    pub exact: bool,
}

/// The rules of `entries`, and the entries pith has no tool for (told once, never fatal).
pub fn parse_allowed(entries: &[String]) -> (Vec<ToolRule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    for e in entries {
        let (name, pattern) = match e.split_once('(') {
            Some((n, rest)) => (n.trim(), Some(rest.trim_end_matches(')').trim())),
            None => (e.trim(), None),
        };
        let Some(tool) = pith_name(name) else {
            unknown.push(e.clone());
            continue;
        };
        let (prefix, exact) = match pattern {
            Some(p) if tool == "bash" => (bash_prefix(p), !p.ends_with('*')),
            // a path pattern on a file tool is not narrowed further
            _ => (None, false),
        };
        rules.push(ToolRule {
            exact: exact && prefix.is_some(),
            tool,
            prefix,
        });
    }
    (rules, unknown)
}

/// pith's tool for a peer's name, case-insensitively.
fn pith_name(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("mcp__") {
        // Claude Code's `mcp__SERVER__TOOL` is pith's `SERVER_TOOL`
        let (server, tool) = rest.split_once("__")?;
        return Some(format!("{server}_{tool}"));
    }
    let mapped = match lower.as_str() {
        "bash" | "shell" | "run_shell_command" => "bash",
        "read" | "view" | "read_file" | "notebookread" => "read",
        "write" | "write_file" => "write",
        "edit" | "multiedit" | "replace" | "notebookedit" | "apply_patch" => "edit",
        "glob" => "glob",
        "grep" | "search_file_content" => "grep",
        "ls" | "list" | "list_directory" => "list",
        "webfetch" | "web_fetch" | "fetch" => "webfetch",
        "todowrite" | "todoread" | "write_todos" => "todowrite",
        "task" | "agent" => "task",
        "recall" => "recall",
        "skill" => "skill",
        "tool_search" | "toolsearch" => "tool_search",
        _ => return None,
    };
    Some(mapped.to_string())
}

/// The command prefix of a bash pattern: `git:*` and `git *` are `git`, `npm run test` itself;
/// `*` alone is any command.
fn bash_prefix(pattern: &str) -> Option<String> {
    let p = pattern
        .strip_suffix(":*")
        .or_else(|| pattern.strip_suffix(" *"))
        .or_else(|| pattern.strip_suffix('*'))
        .unwrap_or(pattern)
        .trim();
    (!p.is_empty()).then(|| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(tool: &str, prefix: Option<&str>) -> ToolRule {
        ToolRule {
            tool: tool.into(),
            exact: false,
            prefix: prefix.map(str::to_string),
        }
    }

    #[test]
    fn maps_claude_code_names_and_bash_patterns() {
        let entries: Vec<String> = [
            "Read",
            "grep",
            "Bash(git status:*)",
            "Bash(npm run test)",
            "Bash(*)",
            "MultiEdit",
            "mcp__github__search_issues",
            "WebSearch",
        ]
        .map(String::from)
        .to_vec();
        let (rules, unknown) = parse_allowed(&entries);
        assert_eq!(
            rules,
            vec![
                rule("read", None),
                rule("grep", None),
                rule("bash", Some("git status")),
                ToolRule {
                    exact: true,
                    ..rule("bash", Some("npm run test"))
                },
                rule("bash", None),
                rule("edit", None),
                rule("github_search_issues", None),
            ]
        );
        assert_eq!(unknown, vec!["WebSearch".to_string()]);
    }
}
