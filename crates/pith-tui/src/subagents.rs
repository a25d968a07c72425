//! Running sub-agents as the TUI shows them: a live view in the parent's `task` cell (agent,
//! the tools it ran and runs, tokens), and their tokens and cost apart from the main context.

use std::collections::HashMap;

use pith_protocol::event::{Event, OutputEvent, SubagentEvent};
use pith_protocol::tool::ToolInput;

use super::format;

/// Tool lines kept per sub-agent (the cell folds to its last few).
const LOG_LINES: usize = 40;

/// One sub-agent of the session on screen.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Live {
    pub agent: String,
    pub session_id: String,
    /// The tool it runs now.
    pub tool: Option<String>,
    pub tokens: u64,
    /// One line per tool call: `✓ read src/main.rs`, `… grep foo`.
    pub log: Vec<String>,
    /// The call id of each line of `log`, for its end to replace its line.
    calls: Vec<String>,
}

impl Live {
    /// The cell's live text: the calls, then a status line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for l in &self.log {
            out.push_str(l);
            out.push('\n');
        }
        let doing = match &self.tool {
            Some(t) => format!("running {t}"),
            None => "thinking".to_string(),
        };
        out.push_str(&format!(
            "{} · {doing} · {} tokens",
            self.agent,
            format::tokens(self.tokens)
        ));
        out
    }
}

/// Every sub-agent event the TUI has seen.
#[derive(Debug, Default)]
pub struct Subagents {
    /// By the parent's `task` call id.
    pub live: HashMap<String, Live>,
    /// Tokens and cost of all sub-agents of this session (any depth).
    pub tokens: u64,
    pub cost: f64,
}

impl Subagents {
    /// Takes one sub-agent event; returns the call id whose cell should show new live text, when
    /// the sub-agent was started by `session_id` (the session on screen).
    pub fn on_event(&mut self, session_id: &str, ev: &Event) -> Option<(String, String)> {
        let Event::Subagent(SubagentEvent {
            session_id: child,
            parent_session_id,
            agent,
            call_id,
            event,
        }) = ev
        else {
            return None;
        };
        let mut used = 0;
        if let Event::Output(OutputEvent::StepFinished { usage, cost, .. }) = &**event {
            used = usage.input + usage.output + usage.cache_read + usage.cache_write;
            self.tokens += used;
            if cost.is_finite() && *cost > 0.0 {
                self.cost += cost;
            }
        }
        if parent_session_id != session_id {
            return None;
        }
        let live = self.live.entry(call_id.clone()).or_insert_with(|| Live {
            agent: agent.clone(),
            session_id: child.clone(),
            ..Live::default()
        });
        live.tokens += used;
        match &**event {
            Event::Output(OutputEvent::ToolStarted {
                call_id: tool_call,
                tool,
                input,
            }) => {
                live.tool = Some(tool.clone());
                live.log.push(format!("… {tool} {}", brief(input)));
                live.calls.push(tool_call.clone());
            }
            Event::Output(OutputEvent::ToolFinished {
                call_id: tool_call,
                tool,
                title,
                error,
                ..
            }) => {
                live.tool = None;
                let line = match error {
                    Some(e) => format!("✗ {tool}: {}", format::truncate(&format::sanitize(e), 60)),
                    None => format!(
                        "✓ {tool} {}",
                        format::truncate(&format::sanitize(title), 60)
                    ),
                };
                match live.calls.iter().rposition(|c| c == tool_call) {
                    Some(i) => live.log[i] = line,
                    None => {
                        live.log.push(line);
                        live.calls.push(tool_call.clone());
                    }
                }
            }
            Event::Output(OutputEvent::StepFinished { .. }) => {}
            // the cell follows the child's tools only
            Event::Output(_)
            | Event::Context(_)
            | Event::Turn(_)
            | Event::Session(_)
            | Event::Settings(_)
            | Event::Subagent(_) => return None,
        }
        if live.log.len() > LOG_LINES {
            let over = live.log.len() - LOG_LINES;
            live.log.drain(..over);
            live.calls.drain(..over);
        }
        Some((call_id.clone(), live.text()))
    }

    /// The parent's `task` call finished: its sub-agent is no longer live.
    pub fn finished(&mut self, call_id: &str) {
        self.live.remove(call_id);
    }

    /// A different session is on screen.
    pub fn clear(&mut self) {
        *self = Subagents::default();
    }
}

/// The first string argument of a call, short.
fn brief(input: &serde_json::Value) -> String {
    let first = ToolInput::first_string(input).unwrap_or("");
    format::truncate(&format::sanitize(&pith_protocol::text::one_line(first)), 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::llm::FinishReason;
    use pith_protocol::message::Usage;
    use serde_json::json;

    fn wrap(parent: &str, event: Event) -> Event {
        Event::Subagent(SubagentEvent {
            session_id: "C1".into(),
            parent_session_id: parent.into(),
            agent: "explore".into(),
            call_id: "t1".into(),
            event: Box::new(event),
        })
    }

    #[test]
    fn a_live_cell_follows_the_childs_tools_and_tokens() {
        let mut s = Subagents::default();
        let started = wrap(
            "P",
            Event::Output(OutputEvent::ToolStarted {
                call_id: "c1".into(),
                tool: "grep".into(),
                input: json!({"pattern": "fn main"}),
            }),
        );
        let (call, text) = s.on_event("P", &started).unwrap();
        assert_eq!(call, "t1");
        assert_eq!(text, "… grep fn main\nexplore · running grep · 0 tokens");
        let step = wrap(
            "P",
            Event::Output(OutputEvent::StepFinished {
                usage: Usage {
                    input: 1000,
                    output: 200,
                    ..Usage::default()
                },
                finish: FinishReason::ToolCalls,
                cost: 0.5,
            }),
        );
        s.on_event("P", &step);
        let done = wrap(
            "P",
            Event::Output(OutputEvent::ToolFinished {
                call_id: "c1".into(),
                tool: "grep".into(),
                title: "fn main".into(),
                error: None,
                duration_ms: 3,
            }),
        );
        let (_, text) = s.on_event("P", &done).unwrap();
        assert!(text.starts_with("✓ grep fn main\n"), "{text}");
        assert!(text.ends_with("explore · thinking · 1.2k tokens"), "{text}");
        assert_eq!((s.tokens, s.cost), (1200, 0.5));
        // a grandchild's tokens count; its cell is not on screen
        assert!(s.on_event("OTHER", &step).is_none());
        assert_eq!(s.tokens, 2400);
        s.finished("t1");
        assert!(s.live.is_empty());
    }

    #[test]
    fn a_finished_call_replaces_its_own_line() {
        let mut s = Subagents::default();
        for (id, pattern) in [("c1", "one"), ("c2", "two")] {
            let started = Event::Output(OutputEvent::ToolStarted {
                call_id: id.into(),
                tool: "grep".into(),
                input: json!({ "pattern": pattern }),
            });
            s.on_event("P", &wrap("P", started));
        }
        let done = Event::Output(OutputEvent::ToolFinished {
            call_id: "c1".into(),
            tool: "grep".into(),
            title: "one".into(),
            error: None,
            duration_ms: 3,
        });
        let (_, text) = s.on_event("P", &wrap("P", done)).unwrap();
        assert!(
            text.starts_with(
                "✓ grep one
… grep two
"
            ),
            "{text}"
        );
    }
}
