//! What a line typed as a prompt is: a built-in slash command, a custom command, an MCP prompt,
//! an unknown command, or the prompt itself. The TUI and `pith run` both route through
//! [`route`], so a line means the same in both.
//!
//! The rules, in order:
//! 1. A line is a command only when it starts with `/` and its first word holds no other `/`:
//!    `/usr/bin/env is missing` is a prompt. `/` alone is a prompt too.
//! 2. `/SERVER:PROMPT args` of a server the front end knows is that server's prompt (or an error
//!    when the server is known not to offer it).
//! 3. A custom command of that name (they cannot shadow built-ins: `custom_commands` skips them).
//! 4. A built-in command or one of its aliases.
//! 5. A skill of that name (ARCHITECTURE.md §4.7): its instructions are sent as the user's
//!    message with the arguments, as Claude Code sends them — a custom command (`Route::Custom`).
//! 6. Anything else is an unknown command: an error, never sent to the model.

use std::path::Path;
use std::str::FromStr;

use crate::commands::Command;
use crate::custom_commands::{Commands, Expanded};
use crate::event::Op;

/// Where a line goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// Not a command: send it as the prompt.
    Prompt,
    Builtin {
        command: Command,
        /// The trimmed text after the name; `None` when empty.
        args: Option<String>,
    },
    Custom(Expanded),
    McpPrompt {
        server: String,
        prompt: String,
        args: String,
    },
    /// A command that cannot run, in one line (an MCP prompt a server does not offer).
    Invalid(String),
    /// No command of this name.
    Unknown {
        name: String,
        /// The closest known command, when one is close.
        suggestion: Option<String>,
    },
}

impl Route {
    /// The one line a front end shows for [`Route::Invalid`] and [`Route::Unknown`].
    pub fn error(&self) -> Option<String> {
        match self {
            Route::Invalid(e) => Some(e.clone()),
            Route::Unknown {
                name,
                suggestion: Some(s),
            } => Some(format!("unknown command /{name} (did you mean /{s}?)")),
            Route::Unknown { name, .. } => Some(format!("unknown command /{name}")),
            _ => None,
        }
    }
}

/// What a front end knows of the MCP servers' prompts: `None` when there is no server of that
/// name, `Some(true)` when it offers the prompt (or cannot tell yet), `Some(false)` when not.
pub(crate) type McpLookup<'a> = &'a dyn Fn(&str, &str) -> Option<bool>;

/// Routes `text` (see the module's rules).
pub fn route(text: &str, custom: &Commands, mcp: McpLookup<'_>) -> Route {
    let Some((name, args)) = crate::commands::split(text) else {
        return Route::Prompt;
    };
    if let Some((server, prompt, args)) = pith_protocol::mcp_prompt::parse_command(text) {
        match mcp(&server, &prompt) {
            Some(true) => {
                return Route::McpPrompt {
                    server,
                    prompt,
                    args,
                };
            }
            Some(false) => {
                return Route::Invalid(format!(
                    "{server} has no prompt named {prompt} (type /{server}: to see its prompts)"
                ));
            }
            None => {}
        }
    }
    if let Some(c) = custom.get(name) {
        return Route::Custom(c.expand(args));
    }
    if let Ok(command) = Command::from_str(name) {
        return Route::Builtin {
            command,
            args: (!args.is_empty()).then(|| args.to_string()),
        };
    }
    if let Some(s) = custom.skills.get(name).filter(|s| s.user_invocable) {
        return Route::Custom(skill_command(s, args));
    }
    Route::Unknown {
        name: name.to_string(),
        suggestion: closest(name, custom),
    }
}

/// `/NAME args` of a skill: its instructions with the arguments, as the user's message.
pub fn skill_command(s: &crate::config::skills::Skill, args: &str) -> Expanded {
    let args = args.trim();
    Expanded {
        label: if args.is_empty() {
            format!("/{}", s.name)
        } else {
            format!("/{} {args}", s.name)
        },
        text: s.render(args),
        model: None,
        agent: None,
    }
}

/// The op of a line every front end sends alike: the prompt itself, `/compact [focus]`,
/// `/pin [text]`, `/unpin N|all` (anything else after it is invalid), `/goal …`, `/init [focus]`
/// (for the project in `workspace`), a custom command, an MCP prompt, `/memory` (the list) and
/// `/remember [--user | --project] TEXT` (the project's file unless told: only the TUI asks
/// which). Any other
/// route comes back as it is: the front end runs it or refuses it.
pub fn shared_op(route: Route, text: &str, workspace: &Path) -> Result<Op, Route> {
    Ok(match route {
        Route::Prompt => Op::user_turn(text),
        Route::Builtin {
            command: Command::Compact,
            args,
        } => Op::Compact { focus: args },
        Route::Builtin {
            command: Command::Pin,
            args,
        } => Op::Pin { text: args },
        Route::Builtin {
            command: Command::Unpin,
            args,
        } => unpin_op(args.as_deref()).map_err(Route::Invalid)?,
        Route::Builtin {
            command: Command::Init,
            args,
        } => command_op(
            crate::message::new_id(),
            crate::custom_commands::init(workspace, args.as_deref().unwrap_or("")),
        ),
        Route::Builtin {
            command: Command::Memory,
            ..
        } => Op::ListMemory,
        Route::Builtin {
            command: Command::Remember,
            args,
        } => remember_op(args.as_deref().unwrap_or("")).map_err(Route::Invalid)?,
        Route::Custom(e) => command_op(crate::message::new_id(), e),
        Route::Builtin {
            command: Command::Goal,
            args,
        } => Op::Goal {
            id: crate::message::new_id(),
            action: crate::goal_args::goal_action(args.as_deref()).map_err(Route::Invalid)?,
        },
        Route::McpPrompt {
            server,
            prompt,
            args,
        } => Op::McpPrompt {
            id: crate::message::new_id(),
            server,
            prompt,
            args,
        },
        other => return Err(other),
    })
}

/// The op of `/remember ARGS` where no one is asked which file: the project's unless
/// `--user` (or `user:`) says otherwise.
pub fn remember_op(args: &str) -> Result<Op, String> {
    let (scope, text) = crate::memory::remember_args(args);
    if text.is_empty() {
        return Err("/remember [--user | --project] TEXT adds a line to a memory file".into());
    }
    Ok(Op::Remember {
        text: text.to_string(),
        scope: scope.unwrap_or(crate::event::MemoryScope::Project),
    })
}

/// What `/unpin` says when it is not told which pin.
const UNPIN_USAGE: &str = "/unpin N removes pin N, /unpin all every pin (/pin lists them)";

/// The op of `/unpin ARGS`: `N` (from 1) or `all`; anything else is the one line saying how.
pub fn unpin_op(args: Option<&str>) -> Result<Op, String> {
    match args.map(str::trim) {
        Some(a) if a.eq_ignore_ascii_case("all") => Ok(Op::Unpin { number: None }),
        Some(a) => match a.parse::<usize>() {
            Ok(n) if n > 0 => Ok(Op::Unpin { number: Some(n) }),
            _ => Err(UNPIN_USAGE.to_string()),
        },
        None => Err(UNPIN_USAGE.to_string()),
    }
}

/// The op that runs an expanded command (custom, or `/init`) as submission `id`.
pub fn command_op(id: String, e: Expanded) -> Op {
    Op::RunCommand {
        id,
        label: e.label,
        text: e.text,
        model: e.model,
        agent: e.agent,
    }
}

/// The known command nearest to `name`: one it is a prefix of, else one within a small edit
/// distance (a third of its length, at least 1, at most 3).
fn closest(name: &str, custom: &Commands) -> Option<String> {
    let typed = name.to_lowercase();
    let mut known: Vec<String> = Command::all()
        .flat_map(|c| std::iter::once(c.name()).chain(c.aliases()))
        .filter(|n| n.chars().all(char::is_alphanumeric))
        .map(str::to_string)
        .collect();
    known.extend(custom.list.iter().map(|c| c.name.clone()));
    known.extend(custom.skills.list.iter().map(|s| s.name.clone()));
    let mut prefixed = known.iter().filter(|k| k.starts_with(&typed));
    if let (Some(only), None) = (prefixed.next(), prefixed.next()) {
        return Some(only.clone());
    }
    let limit = (typed.chars().count() / 3).clamp(1, 3);
    known
        .into_iter()
        .map(|k| {
            (
                crate::config::skills::edit_distance(&typed, &k.to_lowercase()),
                k,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
