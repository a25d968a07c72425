//! `pith run`: one user turn without a terminal UI. Everything it prints goes through
//! `crate::output` (no terminal control sequences reach stdout or stderr).

#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::Path;

use crate::cli::{Format, RunArgs};
use pith_commands::commands::Command;
use pith_commands::route::Route;
use pith_engine as engine;
use pith_launch::{FirstModel, FrontEnd, Setup};
use pith_protocol::event::{Event, Op, SessionEvent, TurnEnd, TurnEvent};

/// Runs the turn and returns the process exit code.
pub async fn run(setup: Setup, mut args: RunArgs) -> anyhow::Result<i32> {
    let custom = setup.custom_commands();
    let warnings: Vec<&str> = (setup.loaded.warnings.iter().chain(&custom.warnings))
        .map(String::as_str)
        .collect();
    for w in warnings::not_yet_shown(&setup.data_dir, &setup.workspace, &warnings) {
        crate::output::warning(w);
    }
    let prompt = args.prompt.join(" ");
    // the servers are not started yet: a configured one is asked for any prompt
    let mcp = |server: &str, _: &str| setup.loaded.config.mcp.contains_key(server).then_some(true);
    let route = pith_commands::route::route(&prompt, &custom, &mcp);
    if answered_from_setup(&route, &setup, &custom) {
        return Ok(0);
    }
    // `/context` is answered by the session's engine, with no request (as the editor's is)
    let context_only = matches!(
        route,
        Route::Builtin {
            command: Command::Context,
            ..
        }
    );
    // a command that cannot run is refused before anything is sent
    let op = match first_op(route, &prompt, &setup.workspace)
        .and_then(|op| with_piped(op, args.piped.take()))
    {
        _ if context_only => Op::ContextBreakdown,
        Ok(op) => op,
        Err(line) => {
            crate::output::error(line);
            return Ok(crate::cli::EXIT_USAGE);
        }
    };
    let resuming = args.session.is_some() || args.continue_last;
    // `/pin` and `/unpin` are answered with the pins, not a turn; they belong to a session
    let pins_only = matches!(op, Op::Pin { .. } | Op::Unpin { .. });
    // `/memory` and `/remember` are answered too (the list, the file written)
    let memory_only = matches!(op, Op::Remember { .. } | Op::ListMemory);
    // `/goal` alone, `pause`, `clear` are answered with the goal; `resume` runs its turns; all
    // four are about a session's goal
    let goal = goal::Run::of(&op);
    if let Some(line) = session_needed(pins_only, goal.needs_session(&op), resuming) {
        crate::output::error(line);
        return Ok(crate::cli::EXIT_USAGE);
    }
    let mut handle = spawn_engine(&setup, &mut args, resuming).await?;
    let submission = pith_protocol::event::Submission::new(op);
    let id = submission.id.clone();
    let _ = handle.ops.send(submission);
    let code = if context_only {
        context::answer(&mut handle, args.format).await
    } else if pins_only || memory_only {
        context::pins(&mut handle, &id, args.format).await
    } else if goal == goal::Run::Answer {
        goal::answer(&mut handle, &id, args.format).await
    } else {
        stream(&mut handle, args.format, goal).await?
    };
    let _ = handle.ops.send(Op::Shutdown.into());
    // nothing started in the background outlives the run: the engine ended it, and says so
    if let Ok(Some(ended)) = handle.done.await
        && let Some(line) = pith_tools::jobs::ended_line(&ended.jobs_ended)
    {
        crate::errln!("{line}");
    }
    Ok(code)
}

/// Answers `/hooks` (from the config) and `/skills` (from the files found) with no session and
/// no model; whether the route was one of them.
fn answered_from_setup(
    route: &Route,
    setup: &Setup,
    custom: &pith_commands::custom_commands::Commands,
) -> bool {
    // `/hooks` is answered from the config: no session, no model
    if let Route::Builtin {
        command: Command::Hooks,
        ..
    } = route
    {
        for line in pith_engine::hook_commands::listing(&setup.loaded.config.hooks) {
            crate::outln!("{line}");
        }
        return true;
    }
    // `/skills` is answered from the files found: no session, no model
    if let Route::Builtin {
        command: Command::Skills,
        ..
    } = route
    {
        for line in pith_commands::skill_list::lines(&custom.skills) {
            crate::outln!("{line}");
        }
        return true;
    }
    false
}

/// The refusal of a command about a session's pins or goal when no session is resumed.
fn session_needed(
    pins_only: bool,
    goal_needs_session: bool,
    resuming: bool,
) -> Option<&'static str> {
    if pins_only && !resuming {
        return Some(
            "/pin and /unpin change a session's pins: pith run -c \"/pin …\" (the last session) or --session ID",
        );
    }
    if goal_needs_session && !resuming {
        return Some(
            "/goal without a goal to set is about a session's goal: pith run -c \"/goal …\" (the last session) or --session ID",
        );
    }
    None
}

/// Picks the model (an implied one with its notice), opens the session and starts its engine.
async fn spawn_engine(
    setup: &Setup,
    args: &mut RunArgs,
    resuming: bool,
) -> anyhow::Result<engine::EngineHandle> {
    // No probing for a local server: whatever listens there would get the prompt unasked.
    if let FirstModel::Implied { model, notice, .. } = setup
        .first_model(args.model.as_deref(), resuming, false)
        .await
    {
        crate::output::warning(&notice);
        args.model = Some(model);
    }
    let session = setup.session(
        args.session.as_deref(),
        args.continue_last,
        args.model.as_deref(),
    )?;
    let opts = setup.engine_options(FrontEnd::Headless {
        auto_yes: args.yes,
        allow_unsandboxed: args.allow_unsandboxed,
    });
    Ok(engine::spawn(opts, setup.store.clone(), session)?)
}

/// Prints the events until the turn ends; the exit code.
async fn stream(
    handle: &mut engine::EngineHandle,
    format: Format,
    goal: goal::Run,
) -> anyhow::Result<i32> {
    use std::io::IsTerminal;
    let mut code = 0;
    // a prompt too large for the window is refused like a bad command line (exit code 2)
    let mut too_large = false;
    // The exit code of the stop signal received (Ctrl-C 130, SIGTERM 143, SIGHUP 129).
    let mut interrupted: Option<i32> = None;
    let mut stop = crate::signals::StopSignals::new()?;
    let mut json_out = crate::output::stdout();
    let stderr = std::io::stderr();
    let err_tty = stderr.is_terminal();
    let mut printer = print::Printer::new(std::io::stdout().lock(), stderr.lock(), err_tty);
    let mut goal_state = goal::Outcome::default();
    loop {
        let event = tokio::select! {
            e = handle.events.recv() => e,
            signal_code = stop.recv() => {
                if let Some(first) = interrupted {
                    // A second signal: stop waiting for a clean finish.
                    printer.finish();
                    crate::errln!("interrupted");
                    return Ok(first);
                }
                interrupted = Some(signal_code);
                let _ = handle.ops.send(Op::Interrupt.into());
                continue;
            }
        };
        let Some(event) = event else { break };
        match format {
            Format::Json => print::print_json(&mut json_out, &event),
            Format::Text => printer.event(&event.event),
        }
        goal_state.see(&event.event);
        match &event.event {
            Event::Session(SessionEvent::PromptRefused { usable, .. }) if *usable > 0 => {
                too_large = true
            }
            Event::Turn(TurnEvent::Error { .. })
            | Event::Session(SessionEvent::PromptRefused { .. }) => code = 1,
            Event::Turn(TurnEvent::TurnFinished { reason }) => {
                code = match reason {
                    _ if too_large => crate::cli::EXIT_USAGE,
                    TurnEnd::Error => 1,
                    TurnEnd::Interrupted => interrupted.unwrap_or(crate::signals::EXIT_INTERRUPTED),
                    // a goal's run ends 1 when the goal is not met (its budget spent)
                    _ if goal == goal::Run::Turns && !goal_state.met() => 1,
                    _ => code,
                };
                break;
            }
            // the rest is only printed
            Event::Turn(_)
            | Event::Output(_)
            | Event::Context(_)
            | Event::Session(_)
            | Event::Settings(_)
            | Event::Subagent(_) => {}
        }
    }
    printer.finish();
    let _ = json_out.flush();
    Ok(code)
}

/// What the routed prompt asks for (`pith_commands::route`, as the TUI routes it): a run takes the
/// prompt, `/compact [focus]`, `/pin [text]`, `/unpin N|all`, `/goal …`, `/init [focus]`, a custom command and `/SERVER:PROMPT args` of a
/// configured server (`/hooks` is answered before); any other command is refused with one line.
fn first_op(route: Route, prompt: &str, workspace: &Path) -> Result<Op, Refused> {
    pith_commands::route::shared_op(route, prompt, workspace).map_err(|route| match route {
        Route::Builtin {
            command: Command::Login,
            ..
        } => Refused::Login,
        Route::Builtin { command, .. } => Refused::TuiOnly(command),
        other => Refused::NotRoutable(other),
    })
}

/// `op` with what was piped on stdin appended to its prompt as a pasted block (the TUI's
/// pasted chip: compaction condenses it, `recall` gives it back). Only a prompt takes it: a
/// command with piped input is refused rather than the input dropped.
fn with_piped(op: Op, piped: Option<String>) -> Result<Op, Refused> {
    let Some(piped) = piped else { return Ok(op) };
    match op {
        Op::UserTurn {
            id,
            text,
            mut pasted,
        } => {
            let start = text.len() + 2;
            let text = format!("{text}\n\n{piped}");
            pasted.push((start, text.len()));
            Ok(Op::UserTurn { id, text, pasted })
        }
        _ => Err(Refused::Piped),
    }
}

/// Why `pith run` refuses its prompt before anything is sent.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("/login works in the TUI; from the shell, run `pith auth login [provider]`")]
    Login,
    #[error(
        "/{} works in the TUI only; pith run takes /compact, /pin, /unpin, /goal, /init, /context, /hooks, custom commands and MCP prompts",
        .0.name()
    )]
    TuiOnly(Command),
    #[error(
        "a command does not take piped input; give a prompt to go with it (git diff | pith run \"review this\")"
    )]
    Piped,
    /// An unknown command, or an MCP prompt its server does not offer.
    #[error("{}", .0.error().unwrap_or_default())]
    NotRoutable(Route),
}

mod context;
mod goal;
mod print;

use pith_engine::shown_warnings as warnings;
