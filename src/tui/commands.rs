//! Slash commands: the table, filtering for the popup, and parsing what the user typed.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Compact,
    Context,
    Model,
    Sessions,
    New,
    Export,
    Help,
    Quit,
}

pub struct Spec {
    pub command: Command,
    pub name: &'static str,
    pub args: &'static str,
    pub about: &'static str,
    pub aliases: &'static [&'static str],
}

pub const COMMANDS: &[Spec] = &[
    Spec {
        command: Command::Compact,
        name: "compact",
        args: "[focus]",
        about: "summarise the conversation to free context",
        aliases: &[],
    },
    Spec {
        command: Command::Context,
        name: "context",
        args: "",
        about: "what the context window is made of",
        aliases: &[],
    },
    Spec {
        command: Command::Model,
        name: "model",
        args: "[provider/model]",
        about: "switch the model",
        aliases: &[],
    },
    Spec {
        command: Command::Sessions,
        name: "sessions",
        args: "",
        about: "resume a stored session",
        aliases: &["resume"],
    },
    Spec {
        command: Command::New,
        name: "new",
        args: "",
        about: "start a fresh session",
        aliases: &["clear"],
    },
    Spec {
        command: Command::Export,
        name: "export",
        args: "[path]",
        about: "write the whole session to a file",
        aliases: &[],
    },
    Spec {
        command: Command::Help,
        name: "help",
        args: "",
        about: "commands and keys",
        aliases: &["?"],
    },
    Spec {
        command: Command::Quit,
        name: "quit",
        args: "",
        about: "exit pith",
        aliases: &["exit", "q"],
    },
];

pub fn spec(c: Command) -> &'static Spec {
    COMMANDS
        .iter()
        .find(|s| s.command == c)
        .expect("every command has a spec")
}

/// The word being typed when the composer holds `/wor` (no space yet), else `None`.
pub fn typing_command(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('/')?;
    if rest.contains(char::is_whitespace) || rest.contains('/') {
        return None;
    }
    Some(rest)
}

/// Commands matching `prefix` for the popup: prefix matches first, then substring matches.
pub fn filter(prefix: &str) -> Vec<&'static Spec> {
    let p = prefix.to_ascii_lowercase();
    let mut out: Vec<&Spec> = COMMANDS
        .iter()
        .filter(|s| s.name.starts_with(&p) || s.aliases.iter().any(|a| a.starts_with(&p)))
        .collect();
    for s in COMMANDS {
        if !out.iter().any(|o| o.command == s.command) && s.name.contains(&p) {
            out.push(s);
        }
    }
    out
}

/// `/name args` → the command and its trimmed argument (empty → `None`). `None` when the text is
/// not a command at all (e.g. a path such as `/usr/bin/env is missing`).
pub fn parse(text: &str) -> Option<Result<(Command, Option<String>), String>> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let lname = name.to_ascii_lowercase();
    let found = COMMANDS
        .iter()
        .find(|s| s.name == lname || s.aliases.contains(&lname.as_str()));
    Some(match found {
        Some(s) => Ok((s.command, (!args.is_empty()).then(|| args.to_string()))),
        None => Err(format!(
            "unknown command /{name} — type / to see the commands"
        )),
    })
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
        assert_eq!(parse("/exit"), Some(Ok((Command::Quit, None))));
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/usr/bin/env is missing"), None);
        assert!(matches!(parse("/nope"), Some(Err(_))));
    }

    #[test]
    fn filtering() {
        let names: Vec<_> = filter("co").iter().map(|s| s.name).collect();
        assert_eq!(names, ["compact", "context"]);
        assert_eq!(filter("").len(), COMMANDS.len());
        let names: Vec<_> = filter("e").iter().map(|s| s.name).collect();
        assert_eq!(names[0], "export", "prefix before substring: {names:?}");
        assert!(names.contains(&"sessions"));
        assert_eq!(typing_command("/comp"), Some("comp"));
        assert_eq!(typing_command("/compact now"), None);
        assert_eq!(typing_command("plain"), None);
    }
}
