//! `pith run`: one user turn without a terminal UI.

use std::io::Write;

use crate::cli::{Format, RunArgs};
use crate::commands::{self, Command};
use crate::engine::{self, EngineOptions};
use crate::event::{EngineState, Event, McpState, Op, TurnEnd};
use crate::setup::Setup;

/// Runs the turn and returns the process exit code.
pub async fn run(setup: Setup, args: RunArgs) -> anyhow::Result<i32> {
    let session = setup.session(
        args.session.as_deref(),
        args.continue_last,
        args.model.as_deref(),
    )?;
    let opts = EngineOptions {
        config: setup.loaded.config.clone(),
        workspace: setup.workspace.clone(),
        data_dir: setup.data_dir.clone(),
        headless: true,
        auto_yes: args.yes,
        allow_unsandboxed: args.allow_unsandboxed,
    };
    for w in &setup.loaded.warnings {
        eprintln!("warning: {w}");
    }
    if args.format == Format::Json {
        let stored = setup.store.message_count(&session.id).unwrap_or(0);
        println!(
            "{}",
            serde_json::json!({"type": "session_loaded", "session": &session, "messages": stored})
        );
    }
    let mut handle = engine::spawn(opts, setup.store.clone(), session)?;
    let prompt = args.prompt.join(" ");
    // `/compact [focus]`, `/init`, a custom command and `/SERVER:PROMPT args` (an MCP prompt of
    // a configured server) are the commands a run understands; any other text is the prompt.
    let mcp_prompt = crate::mcp::prompt::parse_command(&prompt)
        .filter(|(server, ..)| setup.loaded.config.mcp.contains_key(server));
    let custom = setup.custom_commands();
    for w in &custom.warnings {
        eprintln!("warning: {w}");
    }
    let expanded = match commands::parse(&prompt) {
        Some(Ok((Command::Init, args))) => Some(crate::custom_commands::init(
            &setup.workspace,
            args.as_deref().unwrap_or(""),
        )),
        _ => custom.parse(&prompt).map(|(c, args)| c.expand(args)),
    };
    let op = match (mcp_prompt, commands::parse(&prompt)) {
        (Some((server, prompt, args)), _) => Op::McpPrompt {
            id: crate::message::new_id(),
            server,
            prompt,
            args,
        },
        _ if let Some(e) = expanded => Op::RunCommand {
            id: crate::message::new_id(),
            label: e.label,
            text: e.text,
            model: e.model,
            agent: e.agent,
        },
        (None, Some(Ok((Command::Compact, focus)))) => Op::Compact { focus },
        _ => Op::user_turn(prompt),
    };
    let _ = handle.ops.send(op);

    let mut code = 0;
    // The exit code of the stop signal received (Ctrl-C 130, SIGTERM 143, SIGHUP 129).
    let mut interrupted: Option<i32> = None;
    let mut stop = crate::signals::StopSignals::new()?;
    let mut out = std::io::stdout().lock();
    let mut at_line_start = true;
    let mut mcp_seen: std::collections::HashMap<String, McpState> = Default::default();
    loop {
        let event = tokio::select! {
            e = handle.events.recv() => e,
            signal_code = stop.recv() => {
                if let Some(first) = interrupted {
                    // A second signal: stop waiting for a clean finish.
                    eprintln!("interrupted");
                    return Ok(first);
                }
                interrupted = Some(signal_code);
                let _ = handle.ops.send(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = event else { break };
        if args.format == Format::Json {
            print_json(&mut out, &event);
        } else {
            if let Event::McpStatus { servers } = &event {
                report_mcp(servers, &mut mcp_seen);
            }
            print_text(&mut out, &event, &mut at_line_start);
        }
        match &event {
            Event::Error { .. } | Event::PromptRefused { .. } => code = 1,
            Event::TurnFinished { reason } => {
                code = match reason {
                    TurnEnd::Error => 1,
                    TurnEnd::Interrupted => interrupted.unwrap_or(crate::signals::EXIT_INTERRUPTED),
                    _ => code,
                };
                break;
            }
            _ => {}
        }
    }
    if args.format == Format::Text && !at_line_start {
        let _ = writeln!(out);
    }
    let _ = out.flush();
    let _ = handle.ops.send(Op::Shutdown);
    let _ = handle.done.await;
    Ok(code)
}

fn print_json(out: &mut impl Write, event: &Event) {
    // The whole history is not repeated on every run: the session header is enough.
    let line = match event {
        Event::SessionLoaded {
            session, messages, ..
        } => serde_json::json!({
            "type": "session_loaded",
            "session": session,
            "messages": messages.len(),
        })
        .to_string(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn print_text(out: &mut impl Write, event: &Event, at_line_start: &mut bool) {
    match event {
        Event::TextDelta { delta, .. } => {
            let _ = write!(out, "{delta}");
            let _ = out.flush();
            *at_line_start = delta.ends_with('\n');
        }
        Event::StepFinished { .. } if !*at_line_start => {
            let _ = writeln!(out);
            *at_line_start = true;
        }
        Event::ToolStarted { tool, input, .. } => {
            eprintln!("· {tool} {}", short_input(input));
        }
        // a sub-agent's progress, indented under its `task` line
        Event::Subagent { agent, event, .. } => {
            if let Event::ToolStarted { tool, input, .. } = &**event {
                eprintln!("  · {agent}: {tool} {}", short_input(input));
            }
        }
        Event::ToolFinished {
            tool,
            error: Some(e),
            ..
        } => {
            eprintln!("· {tool} failed: {}", e.lines().next().unwrap_or(""));
        }
        Event::Retrying {
            attempt,
            max,
            delay_ms,
            message,
        } => {
            // Text already printed for the failed attempt is discarded: the retry starts the
            // answer over, on a line of its own.
            let discarded = if *at_line_start {
                ""
            } else {
                let _ = writeln!(out);
                let _ = out.flush();
                *at_line_start = true;
                " (the partial answer above is discarded)"
            };
            eprintln!("retrying ({attempt}/{max}) in {delay_ms} ms: {message}{discarded}");
        }
        Event::CompactionFinished { before, after, .. } => {
            eprintln!("compacted the context: {before} → {after} tokens")
        }
        Event::Info { message } => eprintln!("{message}"),
        // A long wait for the provider: say what pith waits for.
        Event::State {
            state: EngineState::Thinking | EngineState::Compacting,
            detail: Some(d),
        } => eprintln!("{d}"),
        Event::Error { message, .. } | Event::PromptRefused { message, .. } => {
            eprintln!("error: {message}")
        }
        _ => {}
    }
}

/// MCP servers that failed or exited, once each time it happens (on stderr: the answer stays
/// clean on stdout).
fn report_mcp(
    servers: &[crate::event::McpServerStatus],
    seen: &mut std::collections::HashMap<String, McpState>,
) {
    for s in servers {
        if seen.get(&s.name) == Some(&s.state) {
            continue;
        }
        seen.insert(s.name.clone(), s.state.clone());
        match &s.state {
            McpState::Failed { reason } => eprintln!("mcp {}: failed to start: {reason}", s.name),
            McpState::Exited { reason } => eprintln!("mcp {}: exited: {reason}", s.name),
            _ => {}
        }
    }
}

/// One line of a tool's input for the progress lines on stderr.
fn short_input(input: &serde_json::Value) -> String {
    let s = match input {
        serde_json::Value::Object(map) => map
            .get("command")
            .or_else(|| map.get("file_path"))
            .or_else(|| map.get("path"))
            .or_else(|| map.get("pattern"))
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .unwrap_or_else(|| input.to_string()),
        other => other.to_string(),
    };
    // a key the model wrote into a call is not echoed to the terminal (or a CI log)
    let s = crate::secrets::scrub(&s);
    let line = s.lines().next().unwrap_or("");
    line.chars().take(100).collect()
}
