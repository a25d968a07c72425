//! `pith run /context` (with `-c` or `--session`, the context of that session): the breakdown
//! the editor front end answers with, as a Markdown table with the pins after it (`--format
//! json`: the event), with no request to the model; and `pith run /pin …`, `/unpin …`: the
//! pins as the session now holds them.

use std::io::Write;

use crate::cli::Format;
use pith_engine::EngineHandle;
use pith_protocol::event::{ContextEvent, Event, SessionEvent, TurnEvent};

/// Waits for the engine's answer to `Op::ContextBreakdown` and prints it; the exit code.
pub(super) async fn answer(handle: &mut EngineHandle, format: Format) -> i32 {
    while let Some(event) = handle.events.recv().await {
        match &event.event {
            Event::Context(ContextEvent::ContextBreakdown {
                breakdown,
                pins,
                instructions,
            }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => crate::out!(
                        "{}",
                        pith_acp::commands::context_text(breakdown, pins, instructions)
                    ),
                }
                return 0;
            }
            Event::Turn(TurnEvent::Error { message, .. }) => {
                crate::output::error(message);
                return 1;
            }
            // what comes before the answer (the session, its figure) is not printed
            Event::Context(_)
            | Event::Turn(_)
            | Event::Output(_)
            | Event::Session(_)
            | Event::Settings(_)
            | Event::Subagent(_) => {}
        }
    }
    crate::output::error("the engine stopped before it measured the context");
    1
}

/// Waits for the engine's answer to `/pin`, `/unpin`, `/memory` or `/remember` (submission
/// `id`) and prints it: the pins, the memory files, the file written (`--format json`: the
/// event); a refusal is an error line and exit code 1.
pub(super) async fn pins(handle: &mut EngineHandle, id: &str, format: Format) -> i32 {
    while let Some(event) = handle.events.recv().await {
        if event.submission().map(String::as_str) != Some(id) {
            continue;
        }
        match &event.event {
            Event::Session(SessionEvent::PinsChanged { pins, .. }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => crate::out!("{}", pith_acp::commands::pins_text(pins)),
                }
                return 0;
            }
            Event::Session(SessionEvent::MemoryFiles { files }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => crate::out!("{}", pith_acp::commands::memory_text(files)),
                }
                return 0;
            }
            Event::Turn(TurnEvent::Info { message }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => crate::out!("{message}"),
                }
                return 0;
            }
            Event::Turn(TurnEvent::Error { message, .. }) => {
                crate::output::error(message);
                return 1;
            }
            // another answer to the same op is not printed
            Event::Session(_)
            | Event::Turn(_)
            | Event::Output(_)
            | Event::Context(_)
            | Event::Settings(_)
            | Event::Subagent(_) => {}
        }
    }
    crate::output::error("the engine stopped before it answered");
    1
}
