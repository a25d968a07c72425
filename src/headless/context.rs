//! `pith run /context` (with `-c` or `--session`, the context of that session): the breakdown
//! the editor front end answers with, as a Markdown table (`--format json`: the event), with no
//! request to the model.

use std::io::Write;

use crate::cli::Format;
use pith_engine::EngineHandle;
use pith_protocol::event::{ContextEvent, Event, TurnEvent};

/// Waits for the engine's answer to `Op::ContextBreakdown` and prints it; the exit code.
pub(super) async fn answer(handle: &mut EngineHandle, format: Format) -> i32 {
    while let Some(event) = handle.events.recv().await {
        match &event.event {
            Event::Context(ContextEvent::ContextBreakdown { breakdown, .. }) => {
                match format {
                    Format::Json => {
                        let mut out = crate::output::stdout();
                        super::print::print_json(&mut out, &event);
                        let _ = out.flush();
                    }
                    Format::Text => {
                        crate::out!("{}", pith_acp::commands::breakdown_text(breakdown))
                    }
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
