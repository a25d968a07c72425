//! Slash commands, shared by the front ends: the table (names, aliases, arguments, what each
//! does), filtering for the TUI's popup, and parsing what the user typed.

use std::str::FromStr;

use strum::{EnumMessage, EnumProperty, IntoEnumIterator};

/// A slash command. Its name is the lowercase variant (or `to_string`), its aliases the other
/// `serialize` names; `message` says what it does, `args` what it takes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::EnumMessage,
    strum::EnumProperty,
)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum Command {
    #[strum(
        message = "summarise the conversation to free context",
        props(args = "[focus]")
    )]
    Compact,
    #[strum(message = "what the context window is made of")]
    Context,
    #[strum(
        message = "carry TEXT word for word into every request (alone: list pins)",
        props(args = "[text]")
    )]
    Pin,
    #[strum(message = "remove a pin (/pin lists them)", props(args = "N | all"))]
    Unpin,
    #[strum(message = "switch the model", props(args = "[provider/model]"))]
    Model,
    #[strum(
        message = "how hard the model reasons: minimal, low, medium, high, or default",
        props(args = "[level]")
    )]
    Effort,
    #[strum(message = "plan first: only reading tools run until you accept a plan (shift+tab)")]
    Plan,
    #[strum(
        message = "store an API key for a provider (asks for it here)",
        props(args = "[provider]")
    )]
    Login,
    #[strum(
        to_string = "sessions",
        serialize = "resume",
        message = "resume a stored session"
    )]
    Sessions,
    #[strum(message = "open the transcript of a sub-agent this session started")]
    Agents,
    #[strum(
        to_string = "new",
        serialize = "clear",
        message = "start a fresh session"
    )]
    New,
    #[strum(message = "write the whole session to a file", props(args = "[path]"))]
    Export,
    #[strum(
        message = "MCP servers: state, tools and their cost (also: login NAME)",
        props(args = "[restart NAME]")
    )]
    Mcp,
    #[strum(
        message = "attach an MCP resource to your next message",
        props(args = "[server:uri]")
    )]
    Resource,
    #[strum(
        message = "write or update AGENTS.md from what the agent finds in the project",
        props(args = "[focus]")
    )]
    Init,
    #[strum(message = "take back the last turn: its file changes and its messages")]
    Undo,
    #[strum(message = "put back the turn /undo took back")]
    Redo,
    #[strum(message = "go back to an earlier prompt (files and conversation)")]
    Rewind,
    #[strum(
        message = "copy the last answer, its Nth code block, or the last URL shown",
        props(args = "[N|url]")
    )]
    Copy,
    #[strum(message = "write the prompt in $VISUAL / $EDITOR (also Ctrl+G)")]
    Editor,
    #[strum(to_string = "help", serialize = "?", message = "commands and keys")]
    Help,
    #[strum(message = "the key bindings in effect ([keys] in the config changes them)")]
    Keys,
    #[strum(message = "the hooks in force and the file that set each")]
    Hooks,
    #[strum(
        message = "pick the colour theme (previews as you move)",
        props(args = "[name]")
    )]
    Theme,
    #[strum(
        to_string = "quit",
        serialize = "exit",
        serialize = "q",
        message = "exit pith"
    )]
    Quit,
    #[strum(
        message = "work toward an objective until a check says it is met (alone: show it)",
        props(args = "[text [--budget N turns|N tokens] | pause | resume | clear]")
    )]
    Goal,
    #[strum(message = "the memory files: list them, open one in $VISUAL / $EDITOR")]
    Memory,
    #[strum(
        message = "add a line to a memory file (asks which, or --user / --project)",
        props(args = "text")
    )]
    Remember,
    #[strum(message = "the skills found: name, where from, what each costs")]
    Skills,
    #[strum(message = "background jobs: command, age, state, last line; stop one")]
    Ps,
    #[strum(
        to_string = "paste-image",
        message = "attach the image on the clipboard (also ctrl+v)"
    )]
    PasteImage,
}

impl Command {
    /// Every command, in the order the popup and `/help` list them.
    pub fn all() -> impl Iterator<Item = Command> {
        Command::iter()
    }

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// What it takes, e.g. `[focus]`; empty for none.
    pub fn args(self) -> &'static str {
        self.get_str("args").unwrap_or("")
    }

    /// What it does.
    pub fn about(self) -> &'static str {
        self.get_message().unwrap_or("")
    }

    /// Changes the session, so it runs only between turns (the engine queues it).
    pub fn waits_for_turn(self) -> bool {
        !matches!(
            self,
            Command::Help
                | Command::Login
                | Command::Keys
                | Command::Hooks
                | Command::Theme
                | Command::Context
                | Command::Quit
                | Command::Sessions
                | Command::Agents
                | Command::Copy
                | Command::Editor
                | Command::Plan
                // `/goal` alone is answered at once; pause and clear stop the turn
                | Command::Goal
                | Command::Skills
                | Command::Ps
                | Command::PasteImage
        )
    }

    /// Other names it answers to.
    pub(crate) fn aliases(self) -> impl Iterator<Item = &'static str> {
        let name = self.name();
        self.get_serializations()
            .iter()
            .copied()
            .filter(move |s| *s != name)
    }
}

/// The word being typed when the composer holds `/wor` (no space yet), else `None`.
pub fn typing_command(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('/')?;
    if rest.contains(char::is_whitespace) || rest.contains('/') {
        return None;
    }
    Some(rest)
}

/// Commands matching `prefix` for the popup: prefix matches (of the name or an alias) first,
/// then substring matches of the name.
pub fn filter(prefix: &str) -> Vec<Command> {
    let p = prefix.to_ascii_lowercase();
    let mut out: Vec<Command> = Command::all()
        .filter(|c| c.name().starts_with(&p) || c.aliases().any(|a| a.starts_with(&p)))
        .collect();
    for c in Command::all() {
        if !out.contains(&c) && c.name().contains(&p) {
            out.push(c);
        }
    }
    out
}

/// `/name args` → (name, trimmed args). `None` when the text is no command line: it does not
/// start with `/`, is `/` alone, or its first word holds another `/` (a path such as
/// `/usr/bin/env is missing`).
pub fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    (!name.is_empty() && !name.contains('/')).then_some((name, args))
}

/// `/name args` → the command and its trimmed argument (empty → `None`). `None` when the text is
/// not a command at all (e.g. a path such as `/usr/bin/env is missing`).
pub fn parse(text: &str) -> Option<Result<(Command, Option<String>), UnknownCommand>> {
    let (name, args) = split(text)?;
    Some(match Command::from_str(name) {
        Ok(c) => Ok((c, (!args.is_empty()).then(|| args.to_string()))),
        Err(_) => Err(UnknownCommand {
            name: name.to_string(),
        }),
    })
}

/// A `/name` that is no built-in command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown command /{name} — type / to see the commands")]
pub struct UnknownCommand {
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_commands() {
        assert_eq!(
            parse("/compact keep the API decisions"),
            Some(Ok((
                Command::Compact,
                Some("keep the API decisions".into())
            )))
        );
        assert_eq!(parse("/compact"), Some(Ok((Command::Compact, None))));
        assert_eq!(
            parse("  /Compact  x "),
            Some(Ok((Command::Compact, Some("x".into()))))
        );
        assert_eq!(parse("/exit"), Some(Ok((Command::Quit, None))));
        assert_eq!(parse("/q"), Some(Ok((Command::Quit, None))));
        assert_eq!(parse("/RESUME"), Some(Ok((Command::Sessions, None))));
        assert_eq!(parse("/?"), Some(Ok((Command::Help, None))));
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/usr/bin/env is missing"), None);
        assert!(matches!(parse("/nope"), Some(Err(_))));
    }

    #[test]
    fn the_table() {
        let names: Vec<&str> = Command::all().map(Command::name).collect();
        assert_eq!(
            names,
            [
                "compact",
                "context",
                "pin",
                "unpin",
                "model",
                "effort",
                "plan",
                "login",
                "sessions",
                "agents",
                "new",
                "export",
                "mcp",
                "resource",
                "init",
                "undo",
                "redo",
                "rewind",
                "copy",
                "editor",
                "help",
                "keys",
                "hooks",
                "theme",
                "quit",
                "goal",
                "memory",
                "remember",
                "skills",
                "ps",
                "paste-image"
            ]
        );
        assert_eq!(Command::Compact.args(), "[focus]");
        assert_eq!(Command::Context.args(), "");
        assert_eq!(Command::New.about(), "start a fresh session");
        assert_eq!(Command::Quit.aliases().collect::<Vec<_>>(), ["exit", "q"]);
        assert_eq!(Command::Model.aliases().count(), 0);
        assert!(Command::all().all(|c| !c.about().is_empty()));
    }

    #[test]
    fn filtering() {
        let names: Vec<_> = filter("co").iter().map(|c| c.name()).collect();
        assert_eq!(names, ["compact", "context", "copy"]);
        assert_eq!(filter("").len(), Command::all().count());
        let names: Vec<_> = filter("e").iter().map(|c| c.name()).collect();
        assert_eq!(
            names[..3],
            ["effort", "export", "editor"],
            "prefix before substring: {names:?}"
        );
        assert!(names.contains(&"sessions"));
        assert_eq!(
            filter("res"),
            [Command::Sessions, Command::Resource],
            "by alias and by name"
        );
        assert_eq!(typing_command("/comp"), Some("comp"));
        assert_eq!(typing_command("/compact now"), None);
        assert_eq!(typing_command("plain"), None);
    }
}
