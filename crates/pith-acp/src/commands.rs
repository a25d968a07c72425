//! Slash commands in the editor: the list offered (`available_commands_update`) and what a
//! prompt starting with `/` does, routed as the TUI and `pith run` route it (`crate::route`).

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use super::session::{Awaiting, Session};
use pith_commands::commands::Command;
use pith_commands::route::Route;
use pith_protocol::event::{
    Breakdown, GoalAction, InstructionFile, McpServerStatus, McpState, MemoryFile, Op, Pin,
};

/// The built-in commands that make sense in an editor (the others belong to the TUI).
const BUILTINS: [Command; 15] = [
    Command::Compact,
    Command::Context,
    Command::Pin,
    Command::Unpin,
    Command::Init,
    Command::Undo,
    Command::Redo,
    Command::Export,
    Command::Model,
    Command::Goal,
    Command::Memory,
    Command::Remember,
    Command::Skills,
    Command::Ps,
    Command::Mcp,
];

fn command(name: &str, about: &str, hint: &str) -> AvailableCommand {
    let c = AvailableCommand::new(name, about);
    if hint.is_empty() {
        c
    } else {
        c.input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(hint),
        ))
    }
}

/// Every command a prompt may start with: built-in, custom, and the MCP servers' prompts.
pub fn available(
    custom: &pith_commands::custom_commands::Commands,
    mcp: &[McpServerStatus],
) -> Vec<AvailableCommand> {
    let mut out: Vec<AvailableCommand> = BUILTINS
        .iter()
        .map(|c| command(c.name(), c.about(), c.args().trim_matches(['[', ']'])))
        .collect();
    for c in &custom.list {
        out.push(command(&c.name, &c.description, &c.argument_hint));
    }
    // skills after them: a built-in or custom command of the same name wins (§4.7)
    for s in custom.skills.list.iter().filter(|s| s.user_invocable) {
        if !out.iter().any(|c| c.name == s.name) {
            let hint = s.argument_hint.trim_matches(['[', ']']);
            out.push(command(&s.name, &s.description, hint));
        }
    }
    for server in mcp {
        for p in &server.prompts {
            let about = p
                .description
                .clone()
                .unwrap_or_else(|| format!("{} prompt", server.name));
            let args: Vec<&str> = p.arguments.iter().map(|a| a.name.as_str()).collect();
            out.push(command(
                &format!("{}:{}", server.name, p.name),
                &about,
                &args.join(" "),
            ));
        }
    }
    out
}

/// `/mcp` for the editor: each server's state, tools and sign-in (signing in happens in a
/// terminal: `pith mcp login NAME`, or `/mcp login NAME` in the TUI).
fn mcp_lines(servers: &[McpServerStatus], args: Option<&str>) -> String {
    if let Some(name) = args.and_then(|a| a.trim().strip_prefix("login")) {
        let name = name.trim();
        let name = if name.is_empty() { "NAME" } else { name };
        return format!(
            "Sign in from a terminal: `pith mcp login {name}` (the editor's session then reconnects on its next call)."
        );
    }
    if servers.is_empty() {
        return "No MCP servers are configured.".to_string();
    }
    let mut out = vec!["MCP servers:".to_string()];
    for s in servers {
        let state = match &s.state {
            McpState::Disabled => "disabled".to_string(),
            McpState::Starting => "starting".to_string(),
            McpState::Ready => format!("ready, {} tools", s.tools),
            McpState::Failed { reason } | McpState::Exited { reason } => {
                format!(
                    "not running: {}",
                    pith_protocol::text::one_line_max(reason, 200)
                )
            }
        };
        let sign_in = s
            .sign_in
            .as_deref()
            .map(|v| format!(" · {v}"))
            .unwrap_or_default();
        out.push(format!(
            "- `{}` ({}): {state}{sign_in}",
            s.name, s.transport
        ));
    }
    out.join("\n")
}

/// Sends the session's commands to the client.
pub async fn announce(session: &Session) {
    let custom = session.setup.lock().await.custom_commands();
    let mcp = session.mcp.lock().map(|m| m.clone()).unwrap_or_default();
    let update = AvailableCommandsUpdate::new(available(&custom, &mcp));
    session.update(SessionUpdate::AvailableCommandsUpdate(update));
}

/// What a prompt's text asks for: the op and what ends it, or the one line that refuses it.
pub async fn route(session: &Session, text: &str) -> Result<(Op, Awaiting), Refused> {
    let (custom, workspace, configured) = {
        let setup = session.setup.lock().await;
        let configured: Vec<String> = setup.loaded.config.mcp.keys().cloned().collect();
        (setup.custom_commands(), setup.workspace.clone(), configured)
    };
    let mcp_status = session.mcp.lock().map(|m| m.clone()).unwrap_or_default();
    let client: Vec<&str> = session.client_mcp.iter().map(|(n, _)| n.as_str()).collect();
    let mcp = |server: &str, prompt: &str| match mcp_status.iter().find(|s| s.name == server) {
        Some(s) if !s.prompts.is_empty() => Some(s.prompts.iter().any(|p| p.name == prompt)),
        Some(_) => Some(true),
        None => {
            (configured.iter().any(|c| c == server) || client.contains(&server)).then_some(true)
        }
    };
    let route = pith_commands::route::route(text, &custom, &mcp);
    let route = match pith_commands::route::shared_op(route, text, &workspace) {
        // `/pin` and `/unpin` are answered (`PinsChanged`), not a turn; so are `/memory`
        // (`MemoryFiles`) and `/remember` (an `Info` naming the file)
        Ok(op @ (Op::Pin { .. } | Op::Unpin { .. } | Op::Remember { .. } | Op::ListMemory)) => {
            return Ok((op, Awaiting::Answer));
        }
        // `/goal TEXT` and `/goal resume` run the goal's turns; the rest is answered
        // (`GoalChanged`)
        Ok(
            op @ Op::Goal {
                action: GoalAction::Set { .. } | GoalAction::Resume,
                ..
            },
        ) => return Ok((op, Awaiting::Turn)),
        Ok(op @ Op::Goal { .. }) => return Ok((op, Awaiting::Answer)),
        Ok(op) => return Ok((op, Awaiting::Turn)),
        Err(route) => route,
    };
    let answer = |op| Ok((op, Awaiting::Answer));
    match route {
        Route::Builtin { command, args } => match command {
            Command::Context => answer(Op::ContextBreakdown),
            Command::Ps => answer(Op::ListJobs),
            Command::Skills => Err(Refused::Answered(
                pith_commands::skill_list::lines(&custom.skills).join("\n"),
            )),
            Command::Mcp => Err(Refused::Answered(mcp_lines(&mcp_status, args.as_deref()))),
            Command::Undo => answer(Op::Undo),
            Command::Redo => answer(Op::Redo),
            Command::Export => answer(Op::Export { path: args }),
            Command::Model => match args {
                Some(model) => answer(Op::SetModel { model }),
                None => Err(Refused::ModelWithoutName),
            },
            other => Err(Refused::TuiOnly(other)),
        },
        other => Err(Refused::NotRoutable(other)),
    }
}

/// Why a prompt's command is refused in an editor (the one line the client is shown).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("/model takes the model to switch to: /model provider/model")]
    ModelWithoutName,
    #[error("/{} works in pith's terminal UI, not in an editor", .0.name())]
    TuiOnly(Command),
    /// Answered here, without the engine (`/skills`): the text is the answer.
    #[error("{0}")]
    Answered(String),
    /// An unknown command, or an MCP prompt its server does not offer.
    #[error("{}", .0.error().unwrap_or_default())]
    NotRoutable(Route),
}

/// The goal as text (the editor's answer to `/goal`, and `pith run`'s): where it stands, its
/// budget used, its text.
pub fn goal_text(goal: Option<&pith_protocol::event::Goal>) -> String {
    use pith_protocol::event::{BudgetUnit, GoalStatus};
    let Some(g) = goal else {
        return "No goal. /goal TEXT [--budget N turns|N tokens] sets one.".into();
    };
    let status = match g.status {
        GoalStatus::Active => "active",
        GoalStatus::Paused => "paused",
        GoalStatus::Met => "met",
        GoalStatus::BudgetReached => "budget spent",
    };
    let used = match g.budget.unit {
        BudgetUnit::Turns => format!("{} of {} turns", g.turns, g.budget.limit),
        BudgetUnit::Tokens => format!("{} of {} tokens", g.tokens, g.budget.limit),
    };
    format!("Goal ({status}, {used}): {}", g.text)
}

/// `/memory` as text (the editor's answer, and `pith run /memory`'s).
pub fn memory_text(files: &[MemoryFile]) -> String {
    let mut s = String::from("Memory files (/remember [--user | --project] TEXT adds a line):\n");
    for f in files {
        let state = if f.exists {
            format!(
                "{} tokens in every request",
                pith_protocol::text::count(f.tokens)
            )
        } else {
            "missing (/remember creates it)".to_string()
        };
        s.push_str(&format!("- {}: {} — {state}\n", f.scope.as_str(), f.path));
    }
    s
}

/// The jobs list that came unasked (one started or ended): only `/ps`'s answer is shown.
pub fn unasked_jobs(msg: &pith_protocol::event::EventMsg) -> bool {
    matches!(
        msg.event,
        pith_protocol::event::Event::Session(pith_protocol::event::SessionEvent::Jobs { .. })
    ) && msg.submission.is_none()
}

/// `/ps`: the session's background jobs, newest first.
pub fn jobs_text(jobs: &[pith_protocol::event::Job]) -> String {
    if jobs.is_empty() {
        return "No background jobs (the agent starts one with bash `background: true`).".into();
    }
    let now = pith_protocol::message::now_ms();
    let mut s = String::from("Background jobs (they end with the session):\n");
    for j in jobs.iter().rev() {
        s.push_str(&format!(
            "- {}: `{}` — {}, {}",
            j.id,
            pith_protocol::text::one_line_max(&j.command, 80),
            j.state.describe(),
            pith_protocol::event::age(now - j.started)
        ));
        if !j.last_line.is_empty() {
            s.push_str(&format!(" — {}", j.last_line));
        }
        s.push('\n');
    }
    s
}

/// The instruction files of `/context`, each with its cost (counted in the system prompt).
pub fn instructions_text(files: &[InstructionFile]) -> String {
    let mut s = String::from("Instruction files (in the system prompt):\n");
    for f in files {
        let from = match f.origin {
            pith_protocol::event::InstructionOrigin::User => "yours",
            pith_protocol::event::InstructionOrigin::Workspace => "workspace",
            pith_protocol::event::InstructionOrigin::Nested => "loaded on first touch",
        };
        s.push_str(&format!(
            "- {} ({from}): {} tokens\n",
            f.path,
            pith_protocol::text::count(f.tokens)
        ));
    }
    s
}

/// `/context` as text (the editor's answer, and `pith run /context`'s).
pub fn breakdown_text(b: &Breakdown) -> String {
    use pith_protocol::text::count;
    let used = b.system + b.pinned + b.tools + b.summary + b.messages + b.tool_outputs;
    let mut s = format!(
        "Context: {} of {} tokens in use.\n\n| part | tokens |\n|---|---:|\n",
        count(used),
        count(b.window)
    );
    for (name, n) in [
        ("system prompt", b.system),
        ("pinned by you (/pin)", b.pinned),
        ("tool definitions", b.tools),
        ("summary", b.summary),
        ("messages", b.messages),
        ("tool outputs", b.tool_outputs),
        ("free", b.free),
        ("reserved for the answer", b.reserved),
    ] {
        if name.starts_with("pinned") && n == 0 {
            continue;
        }
        s.push_str(&format!("| {name} | {} |\n", count(n)));
    }
    if b.pruned > 0 {
        s.push_str(&format!(
            "\n{} tokens of old tool outputs were pruned.\n",
            count(b.pruned)
        ));
    }
    s.push_str(&left_text(&b.left));
    s
}

/// The "left the view" section: what the compactions took out of the request, by kind.
fn left_text(left: &pith_protocol::carried::LeftCounts) -> String {
    let rows = [
        ("your messages", left.user_messages),
        ("replies", left.replies),
        ("tool outputs", left.tool_outputs),
        ("pastes", left.pastes),
    ];
    if rows.iter().all(|(_, n)| *n == 0) {
        return String::new();
    }
    let mut s = String::from(
        "\nLeft the view (still in the session; `recall` brings any back by id):\n\n| kind | items |\n|---|---:|\n",
    );
    for (name, n) in rows.iter().filter(|(_, n)| *n > 0) {
        s.push_str(&format!("| {name} | {n} |\n"));
    }
    s
}

/// `/context` as text: the breakdown, then the pins and the instruction files when there are.
pub fn context_text(b: &Breakdown, pins: &[Pin], instructions: &[InstructionFile]) -> String {
    let mut s = breakdown_text(b);
    if !pins.is_empty() {
        s = format!("{s}\n{}", pins_text(pins));
    }
    if !instructions.is_empty() {
        s = format!("{s}\n{}", instructions_text(instructions));
    }
    s
}

/// The pins as `/pin` lists them and `/context` details its row: numbered (as `/unpin N`
/// takes them), word for word, each with its cost in every request.
pub fn pins_text(pins: &[Pin]) -> String {
    use pith_protocol::text::count;
    if pins.is_empty() {
        return "Nothing is pinned. /pin TEXT carries TEXT word for word into every request."
            .into();
    }
    let total: u64 = pins.iter().map(|p| p.tokens).sum();
    let mut s = format!(
        "Pinned ({} tokens in every request; /unpin N or /unpin all removes):\n",
        count(total)
    );
    for (i, p) in pins.iter().enumerate() {
        s.push_str(&format!(
            "{}. {} ({} tokens)\n",
            i + 1,
            p.text,
            count(p.tokens)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::event::McpPrompt;

    #[test]
    fn the_editor_gets_compact_and_mcp_prompts() {
        let custom = pith_commands::custom_commands::Commands::default();
        let server = McpServerStatus {
            name: "docs".into(),
            transport: pith_protocol::event::McpTransport::Stdio,
            state: McpState::Ready,
            tools: 0,
            tokens: 0,
            deferred: false,
            prompts: vec![McpPrompt {
                name: "review".into(),
                description: None,
                arguments: vec![],
            }],
            resources: false,
            sign_in: None,
        };
        let names: Vec<String> = available(&custom, &[server])
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names[0], "compact");
        assert!(names.contains(&"context".to_string()));
        assert!(
            !names.contains(&"theme".to_string()),
            "TUI-only commands are left out"
        );
        assert_eq!(names.last().map(String::as_str), Some("docs:review"));
        assert!(names.contains(&"pin".to_string()) && names.contains(&"unpin".to_string()));
        assert!(names.contains(&"goal".to_string()));
    }

    /// Skills are offered like custom commands, after them; a name a built-in or custom command
    /// holds is not offered twice (§4.7).
    #[test]
    fn the_editor_gets_the_skills_after_the_commands() {
        let mut skills = pith_config::skills::Skills::default();
        for n in ["changelog", "compact"] {
            let (s, _) = pith_config::skills::parse(
                std::path::Path::new(&format!("/h/.claude/skills/{n}/SKILL.md")),
                n,
                &format!("---\nname: {n}\ndescription: the {n} skill\n---\nDo {n}."),
            )
            .unwrap();
            skills.list.push(s);
        }
        let custom = pith_commands::custom_commands::Commands {
            skills: std::sync::Arc::new(skills),
            ..Default::default()
        };
        let offered = available(&custom, &[]);
        let skill: Vec<&AvailableCommand> = offered
            .iter()
            .filter(|c| c.description.ends_with(" skill"))
            .collect();
        assert_eq!(skill.len(), 1);
        assert_eq!(skill[0].name, "changelog");
        assert_eq!(offered.iter().filter(|c| c.name == "compact").count(), 1);
        assert!(offered.iter().any(|c| c.name == "skills"));
    }

    #[test]
    fn pins_are_listed_numbered_word_for_word_with_their_cost() {
        let pins = [
            Pin {
                text: "port is 8443".into(),
                tokens: 6,
            },
            Pin {
                text: "never edit vendor/".into(),
                tokens: 7,
            },
        ];
        let text = pins_text(&pins);
        assert!(text.starts_with("Pinned (13 tokens"), "{text}");
        assert!(text.contains("\n1. port is 8443 (6 tokens)\n2. never edit vendor/ (7 tokens)"));
        assert!(pins_text(&[]).starts_with("Nothing is pinned"));
        let b = Breakdown {
            system: 10,
            pinned: 13,
            window: 100,
            ..Breakdown::default()
        };
        let table = breakdown_text(&b);
        assert!(table.contains("| pinned by you (/pin) | 13 |"), "{table}");
        assert!(table.starts_with("Context: 23 of 100"), "{table}");
    }

    #[test]
    fn the_breakdown_has_a_left_the_view_section_when_something_left() {
        let mut b = Breakdown {
            window: 8_000,
            ..Breakdown::default()
        };
        assert!(!breakdown_text(&b).contains("Left the view"));
        b.left = pith_protocol::carried::LeftCounts {
            user_messages: 0,
            replies: 12,
            tool_outputs: 31,
            pastes: 6,
        };
        let text = breakdown_text(&b);
        assert!(text.contains("Left the view"), "{text}");
        assert!(text.contains("| tool outputs | 31 |"), "{text}");
        assert!(text.contains("| replies | 12 |"), "{text}");
        assert!(!text.contains("| your messages |"), "{text}");
    }
}

#[cfg(test)]
mod mcp_tests {
    use super::*;
    use pith_protocol::event::McpTransport;

    fn server(name: &str, state: McpState, sign_in: Option<&str>) -> McpServerStatus {
        McpServerStatus {
            name: name.into(),
            transport: McpTransport::Http,
            state,
            tools: 3,
            tokens: 0,
            deferred: false,
            prompts: vec![],
            resources: false,
            sign_in: sign_in.map(str::to_string),
        }
    }

    /// The editor's `/mcp` says each server's state and who is signed in; signing in is for a
    /// terminal.
    #[test]
    fn mcp_lists_the_servers_and_their_sign_ins() {
        let text = mcp_lines(
            &[
                server(
                    "linear",
                    McpState::Ready,
                    Some("signed in at mcp.linear.app, token expires in 50 min"),
                ),
                server(
                    "sentry",
                    McpState::Failed {
                        reason: "needs sign-in: `pith mcp login sentry`".into(),
                    },
                    None,
                ),
            ],
            None,
        );
        assert!(
            text.contains("- `linear` (http): ready, 3 tools · signed in at mcp.linear.app, token expires in 50 min"),
            "{text}"
        );
        assert!(
            text.contains("- `sentry` (http): not running: needs sign-in: `pith mcp login sentry`"),
            "{text}"
        );
        assert!(mcp_lines(&[], Some("login sentry")).contains("`pith mcp login sentry`"));
        assert_eq!(mcp_lines(&[], None), "No MCP servers are configured.");
    }
}
