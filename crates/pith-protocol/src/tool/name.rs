//! A tool's name, parsed once: one of pith's own tools, a tool of an MCP server
//! (`{server}_{tool}`), or any other name. The name is stored and sent as the string it was
//! given; [`ToolName`]'s `Display` (and its serde form) gives that string back unchanged.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// pith's own tools: the built-in registry's (pith-tools), the sub-agent tool, the MCP loader
/// and plan mode's exit. Front ends match these exhaustively, so a new one fails to compile
/// where it must be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    Bash,
    Read,
    Write,
    Edit,
    Glob,
    Grep,
    List,
    TodoWrite,
    Recall,
    WebFetch,
    Task,
    ToolSearch,
    ExitPlanMode,
    Remember,
    Skill,
    /// New output of a background job (`bash` with `background: true`).
    JobOutput,
    /// Stops a background job.
    JobKill,
    WebSearch,
}

impl Builtin {
    /// Every built-in tool.
    pub const ALL: [Builtin; 18] = [
        Builtin::Bash,
        Builtin::Read,
        Builtin::Write,
        Builtin::Edit,
        Builtin::Glob,
        Builtin::Grep,
        Builtin::List,
        Builtin::TodoWrite,
        Builtin::Recall,
        Builtin::WebFetch,
        Builtin::Task,
        Builtin::ToolSearch,
        Builtin::ExitPlanMode,
        Builtin::Remember,
        Builtin::Skill,
        Builtin::JobOutput,
        Builtin::JobKill,
        Builtin::WebSearch,
    ];

    /// The name the model calls it by (and the store keeps).
    pub const fn as_str(self) -> &'static str {
        match self {
            Builtin::Bash => "bash",
            Builtin::Read => "read",
            Builtin::Write => "write",
            Builtin::Edit => "edit",
            Builtin::Glob => "glob",
            Builtin::Grep => "grep",
            Builtin::List => "list",
            Builtin::TodoWrite => "todowrite",
            Builtin::Recall => "recall",
            Builtin::WebFetch => "webfetch",
            Builtin::Task => "task",
            Builtin::ToolSearch => "tool_search",
            Builtin::ExitPlanMode => "exit_plan_mode",
            Builtin::Remember => "remember",
            Builtin::Skill => "skill",
            Builtin::JobOutput => "job_output",
            Builtin::JobKill => "job_kill",
            Builtin::WebSearch => "websearch",
        }
    }

    /// The built-in tool called `name`, if one is.
    pub fn named(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.as_str() == name)
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's name, by what it names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// One of pith's own tools.
    Builtin(Builtin),
    /// A tool of an MCP server, offered as `{server}_{tool}`. `tool` is the name as offered: a
    /// server's tool name that providers would refuse, or one too long, is offered changed
    /// (with a hash), and stays so here.
    Mcp { server: String, tool: String },
    /// Any other name (a tool of an earlier build, another agent's, a test's).
    Other(String),
}

impl ToolName {
    /// What `name` names. Built-in names come first: `tool_search` is not an MCP `search`.
    pub fn parse(name: &str) -> ToolName {
        if let Some(b) = Builtin::named(name) {
            return ToolName::Builtin(b);
        }
        match mcp_split(name) {
            Some((server, tool)) => ToolName::Mcp {
                server: server.to_string(),
                tool: tool.to_string(),
            },
            None => ToolName::Other(name.to_string()),
        }
    }

    /// The built-in tool it names, if it names one.
    pub fn builtin(&self) -> Option<Builtin> {
        match self {
            ToolName::Builtin(b) => Some(*b),
            ToolName::Mcp { .. } | ToolName::Other(_) => None,
        }
    }

    /// Whether it names the built-in tool `b`.
    pub fn is(&self, b: Builtin) -> bool {
        self.builtin() == Some(b)
    }
}

/// The server and tool of an MCP tool's name `{server}_{tool}`. Server names are letters, digits
/// and `-` (the config refuses others, and the built-in names), so the first `_` separates the
/// two.
fn mcp_split(name: &str) -> Option<(&str, &str)> {
    let (server, tool) = name.split_once('_')?;
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-';
    (!server.is_empty() && server.chars().all(plain) && !tool.is_empty()).then_some((server, tool))
}

impl From<Builtin> for ToolName {
    fn from(b: Builtin) -> ToolName {
        ToolName::Builtin(b)
    }
}

impl From<&str> for ToolName {
    fn from(name: &str) -> ToolName {
        ToolName::parse(name)
    }
}

impl FromStr for ToolName {
    type Err = Infallible;

    fn from_str(name: &str) -> Result<ToolName, Infallible> {
        Ok(ToolName::parse(name))
    }
}

impl PartialEq<Builtin> for ToolName {
    fn eq(&self, b: &Builtin) -> bool {
        self.is(*b)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolName::Builtin(b) => f.write_str(b.as_str()),
            ToolName::Mcp { server, tool } => write!(f, "{server}_{tool}"),
            ToolName::Other(name) => f.write_str(name),
        }
    }
}

impl Serialize for ToolName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ToolName, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(ToolName::parse(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_back_to_itself() {
        for b in Builtin::ALL {
            assert_eq!(ToolName::parse(b.as_str()), ToolName::Builtin(b), "{b}");
            assert_eq!(ToolName::from(b).to_string(), b.as_str());
        }
        let mut names: Vec<_> = Builtin::ALL.iter().map(|b| b.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            Builtin::ALL.len(),
            "two built-ins share a name"
        );
    }

    #[test]
    fn mcp_names_split_at_the_first_underscore() {
        let mcp = |name: &str| match ToolName::parse(name) {
            ToolName::Mcp { server, tool } => Some((server, tool)),
            _ => None,
        };
        let pair = |s: &str, t: &str| Some((s.to_string(), t.to_string()));
        assert_eq!(
            mcp("chrome-devtools_click"),
            pair("chrome-devtools", "click")
        );
        assert_eq!(mcp("github_create_issue"), pair("github", "create_issue"));
        assert_eq!(mcp("srv__thing"), pair("srv", "_thing"));
        for not_mcp in [
            "tool_search",
            "exit_plan_mode",
            "_x",
            "srv_",
            "a.b_c",
            "bash",
        ] {
            assert_eq!(mcp(not_mcp), None, "{not_mcp}");
        }
    }

    #[test]
    fn names_pith_does_not_have_are_other() {
        for other in [
            "multiedit",
            "patch",
            "shell",
            "ls",
            "search",
            "fetch",
            "_x",
            "a.b_c",
        ] {
            assert_eq!(ToolName::parse(other), ToolName::Other(other.into()));
        }
    }

    #[test]
    fn the_string_never_changes() {
        for name in [
            "bash",
            "tool_search",
            "github_create_issue",
            "srv__thing",
            "multiedit",
            "",
            "a.b_c",
        ] {
            let parsed: ToolName = name.parse().unwrap();
            assert_eq!(parsed.to_string(), name);
            let json = serde_json::to_string(&parsed).unwrap();
            assert_eq!(json, serde_json::to_string(name).unwrap());
            let back: ToolName = serde_json::from_str(&json).unwrap();
            assert_eq!(back, parsed);
        }
    }

    #[test]
    fn a_name_compares_with_a_builtin() {
        assert_eq!(ToolName::parse("bash"), Builtin::Bash);
        assert_ne!(ToolName::parse("bash"), Builtin::Read);
        assert!(!ToolName::parse("github_bash").is(Builtin::Bash));
        assert_eq!(ToolName::parse("grep").builtin(), Some(Builtin::Grep));
    }
}
