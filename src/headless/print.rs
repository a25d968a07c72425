//! What `pith run` prints for each event: the answer on stdout, progress and faults on stderr.

use std::collections::HashMap;
use std::io::Write;

use crate::output::Clean;
use pith_protocol::event::{
    ContextEvent, EngineState, Event, EventMsg, McpServerStatus, McpState, OutputEvent,
    SessionEvent, SettingsEvent, SubagentEvent, TurnEvent,
};
use pith_protocol::tool::{ToolInput, ToolName};

fn is_continue(kind: &pith_protocol::message::PartKind) -> bool {
    matches!(kind, pith_protocol::message::PartKind::Text { text, synthetic: true }
        if pith_protocol::compaction_note::is_continue(text))
}

pub(super) fn print_json(out: &mut impl Write, msg: &EventMsg) {
    // The whole history is not repeated on every run: the session header is enough (with how
    // many messages the engine's first page holds, and whether older ones remain).
    let line = match &msg.event {
        Event::Session(SessionEvent::SessionLoaded {
            session,
            messages,
            more_history,
            ..
        }) => serde_json::json!({
            "type": "session_loaded",
            "session": session,
            "messages": messages.len(),
            "more_history": more_history,
        })
        .to_string(),
        _ => serde_json::to_string(msg).unwrap_or_default(),
    };
    // serde_json escapes C0 only: DEL and C1 too, so no terminal acts on them
    let _ = writeln!(out, "{}", pith_protocol::text::escape_json_controls(&line));
    let _ = out.flush();
}

/// Prints the events of a text-format run: the answer on `out`, progress and faults on `err`
/// (both cleaned of control sequences, `crate::output`).
pub(super) struct Printer<O: Write, E: Write> {
    out: Clean<O>,
    /// Raw: text goes through a `Clean` per line; only pith's own line-clearing sequence is
    /// written as is.
    err: E,
    /// stderr is a terminal: a retry line is rewritten in place.
    err_tty: bool,
    at_line_start: bool,
    /// A retry line is on the terminal without its newline.
    retry_open: bool,
    mcp_seen: HashMap<String, McpState>,
    /// Web searches by call id → how many of their hits were printed (a part is updated more
    /// than once; a hosted search gains the pages the answer cites).
    searches_shown: HashMap<String, usize>,
}

/// Clears the current terminal line: back to its start, erase it.
const CLEAR_LINE: &str = "\r\u{1b}[2K";

impl<O: Write, E: Write> Printer<O, E> {
    pub(super) fn new(out: O, err: E, err_tty: bool) -> Self {
        Printer {
            out: Clean::new(out),
            err,
            err_tty,
            at_line_start: true,
            retry_open: false,
            mcp_seen: HashMap::new(),
            searches_shown: HashMap::new(),
        }
    }

    /// One line on stderr, after taking away a retry line left open.
    fn err_line(&mut self, args: std::fmt::Arguments<'_>) {
        self.close_retry();
        let _ = writeln!(Clean::new(&mut self.err), "{args}");
        let _ = self.err.flush();
    }

    fn close_retry(&mut self) {
        if self.retry_open {
            let _ = write!(self.err, "{CLEAR_LINE}");
            self.retry_open = false;
        }
    }

    /// `retrying 2/4 in 1.2 s`: rewritten in place on a terminal, a line of its own otherwise.
    /// The fault itself is said once, by the error that ends the turn if retrying does not help.
    fn retrying(&mut self, attempt: u32, max: u32, delay_ms: u64, note: &str) {
        let secs = delay_ms as f64 / 1000.0;
        let line = format!("retrying {attempt}/{max} in {secs:.1} s{note}");
        if self.err_tty && note.is_empty() {
            let _ = write!(self.err, "{CLEAR_LINE}");
            let _ = write!(Clean::new(&mut self.err), "{line}");
            let _ = self.err.flush();
            self.retry_open = true;
        } else {
            self.err_line(format_args!("{line}"));
        }
    }

    pub(super) fn event(&mut self, event: &Event) {
        match event {
            Event::Output(e) => self.output(e),
            // a sub-agent's progress, indented under its `task` line
            Event::Subagent(SubagentEvent { agent, event, .. }) => {
                if let Event::Output(OutputEvent::ToolStarted { tool, input, .. }) = &**event {
                    self.err_line(format_args!(
                        "  · {agent}: {tool} {}",
                        short_input(tool, input)
                    ));
                }
            }
            Event::Context(e) => self.context(e),
            Event::Turn(e) => self.turn(e),
            Event::Session(e) => self.session(e),
            Event::Settings(e) => self.settings(e),
        }
    }

    /// The answer on stdout, the tools on stderr.
    fn output(&mut self, event: &OutputEvent) {
        match event {
            OutputEvent::TextDelta { delta, .. } => {
                self.close_retry();
                let _ = write!(self.out, "{delta}");
                let _ = self.out.flush();
                self.at_line_start = delta.ends_with('\n');
            }
            OutputEvent::StepFinished { .. } => self.end_line(),
            // the continue line after an automatic compaction is pith's note, not a prompt
            OutputEvent::PartUpdated { part } if is_continue(&part.kind) => {
                self.end_line();
                self.err_line(format_args!(
                    "{}",
                    pith_protocol::compaction_note::CONTINUE_NOTE
                ));
            }
            OutputEvent::ToolStarted { tool, input, .. } => {
                self.err_line(format_args!("· {tool} {}", short_input(tool, input)));
            }
            OutputEvent::ToolFinished {
                tool,
                error: Some(e),
                ..
            } => {
                let first = e.lines().next().unwrap_or("");
                self.err_line(format_args!("· {tool} failed: {first}"));
            }
            // a web search's hits, once: what the model was shown to choose from
            OutputEvent::PartUpdated { part } => self.search_hits(&part.kind),
            // the answer is what streams; reasoning and the stored parts are not printed
            OutputEvent::ToolFinished { error: None, .. }
            | OutputEvent::ToolOutput { .. }
            | OutputEvent::ReasoningDelta { .. }
            | OutputEvent::Message { .. }
            | OutputEvent::MessageRemoved { .. }
            | OutputEvent::PartsRemoved { .. } => {}
        }
    }

    /// The hits of a finished web search, one line each (title, then address), each once; a
    /// search the provider ran itself (no tool line of its own) is named first.
    fn search_hits(&mut self, kind: &pith_protocol::message::PartKind) {
        let pith_protocol::message::PartKind::Tool {
            call_id,
            tool,
            state,
            ..
        } = kind
        else {
            return;
        };
        let name = ToolName::parse(tool);
        let Some(outcome) = state.outcome(&name) else {
            return;
        };
        let Some(search) = outcome.search() else {
            return;
        };
        let shown = self.searches_shown.get(call_id).copied();
        if shown.is_none() && search.backend == pith_protocol::tool::HOSTED_SEARCH {
            let query: String = search.query.chars().take(100).collect();
            self.err_line(format_args!("· websearch {query} (the provider's)"));
        }
        let shown = shown.unwrap_or(0);
        self.searches_shown
            .insert(call_id.clone(), search.hits.len().max(shown));
        for hit in search.hits.iter().skip(shown) {
            let title: String = hit.title.chars().take(100).collect();
            if title.trim().is_empty() {
                self.err_line(format_args!("  ↳ {}", hit.url));
            } else {
                self.err_line(format_args!("  ↳ {title}  {}", hit.url));
            }
        }
    }

    /// A compaction that happened; the rest of the context is `/context`'s.
    fn context(&mut self, event: &ContextEvent) {
        match event {
            // `compacted 41.2k → 9.8k · kept: … · left: …`, as the TUI's divider says it
            ContextEvent::CompactionFinished {
                before,
                after,
                kept,
                left,
                ..
            } => {
                let line = pith_protocol::compaction_note::one_line(*before, *after, kept, left);
                self.err_line(format_args!("{line}"));
            }
            ContextEvent::InstructionsLoaded { file } => self.err_line(format_args!(
                "↳ loaded {} ({} tokens)",
                file.path,
                pith_protocol::text::count(file.tokens)
            )),
            ContextEvent::ContextUsage(_)
            | ContextEvent::CompactionStarted { .. }
            | ContextEvent::CompactionAhead { .. }
            | ContextEvent::Pruned { .. }
            | ContextEvent::ContextWindow { .. }
            | ContextEvent::ContextBreakdown { .. } => {}
        }
    }

    /// Retries, notices, a long wait, errors.
    fn turn(&mut self, event: &TurnEvent) {
        match event {
            TurnEvent::Retrying {
                attempt,
                max,
                delay_ms,
                ..
            } => {
                // Text already printed for the failed attempt is discarded: the retry starts
                // the answer over, on a line of its own.
                let note = if self.at_line_start {
                    ""
                } else {
                    self.end_line();
                    " (the partial answer above is discarded)"
                };
                self.retrying(*attempt, *max, *delay_ms, note);
            }
            // one style for warnings, the engine's and the start-up ones: `pith: warning: …`
            TurnEvent::Info { message } => match message.strip_prefix("warning: ") {
                Some(w) => self.err_line(format_args!("pith: warning: {w}")),
                None => self.err_line(format_args!("{message}")),
            },
            // A long wait for the provider: say what pith waits for.
            TurnEvent::State {
                state: EngineState::Thinking | EngineState::Compacting,
                detail: Some(d),
            } => self.err_line(format_args!("{d}")),
            TurnEvent::Error { message, .. } => {
                self.err_line(format_args!("pith: error: {message}"))
            }
            // headless: no one is asked (the rules decide); the run loop ends on the turn's end
            TurnEvent::GoalChecked { met, by, detail } => {
                self.end_line();
                let by = match by {
                    pith_protocol::event::GoalCheckBy::Command => "check command",
                    pith_protocol::event::GoalCheckBy::Model => "model",
                };
                let verdict = if *met { "met" } else { "not met yet" };
                self.err_line(format_args!("goal check ({by}): {verdict} · {detail}"))
            }
            TurnEvent::State { .. }
            | TurnEvent::PermissionAsked(_)
            | TurnEvent::ElicitationAsked(_)
            | TurnEvent::TurnFinished { .. } => {}
        }
    }

    /// A prompt refused; the session's history is not printed.
    fn session(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::PromptRefused { message, .. } => {
                self.err_line(format_args!("pith: error: {message}"))
            }
            SessionEvent::SessionLoaded { .. }
            | SessionEvent::History { .. }
            | SessionEvent::Sessions { .. }
            | SessionEvent::PinsChanged { .. }
            | SessionEvent::Recalled { .. }
            | SessionEvent::Undone { .. }
            | SessionEvent::Redone { .. }
            | SessionEvent::GoalChanged { .. } => {}
            SessionEvent::MemoryFiles { .. } => {}
            // the jobs still running are named once, at exit (`headless::run`)
            SessionEvent::Jobs { .. } => {}
        }
    }

    /// MCP servers that failed; the other settings are not printed.
    fn settings(&mut self, event: &SettingsEvent) {
        match event {
            SettingsEvent::McpStatus { servers } => self.report_mcp(servers),
            SettingsEvent::McpResources { .. }
            | SettingsEvent::ModelChanged { .. }
            | SettingsEvent::EffortChanged { .. }
            | SettingsEvent::PermissionModeChanged { .. } => {}
        }
    }

    /// Ends the answer's line on stdout, if one is open.
    pub(super) fn end_line(&mut self) {
        if !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }

    /// Before the run ends: nothing left half-written.
    pub(super) fn finish(&mut self) {
        self.end_line();
        self.close_retry();
        let _ = self.err.flush();
    }

    /// MCP servers that failed or exited, once each time it happens (on stderr: the answer
    /// stays clean on stdout).
    fn report_mcp(&mut self, servers: &[McpServerStatus]) {
        for s in servers {
            if self.mcp_seen.get(&s.name) == Some(&s.state) {
                continue;
            }
            self.mcp_seen.insert(s.name.clone(), s.state.clone());
            match &s.state {
                McpState::Failed { reason } => self.err_line(format_args!(
                    "pith: warning: mcp {}: failed to start: {reason}",
                    s.name
                )),
                McpState::Exited { reason } => self.err_line(format_args!(
                    "pith: warning: mcp {}: exited: {reason}",
                    s.name
                )),
                _ => {}
            }
        }
    }
}

/// One line of a tool's input for the progress lines on stderr.
fn short_input(tool: &str, input: &serde_json::Value) -> String {
    let name = ToolName::parse(tool);
    let known = match ToolInput::of(&name, input) {
        ToolInput::Exec { command } => command,
        ToolInput::Read { path, .. }
        | ToolInput::Edit { path, .. }
        | ToolInput::Write { path, .. }
        | ToolInput::List { path } => path,
        ToolInput::Search { pattern, path, .. } => path.or(pattern),
        ToolInput::WebSearch { query } => query,
        ToolInput::Fetch { .. }
        | ToolInput::Task { .. }
        | ToolInput::Todos { .. }
        | ToolInput::Mcp { .. }
        | ToolInput::Other => None,
    };
    // a call the view says nothing of (an MCP server's tool, one that gave none of its tool's
    // keys): the argument under the first of the keys pith's tools use, else the JSON
    let s = known.map_or_else(
        || ToolInput::common_argument(input).unwrap_or_else(|| input.to_string()),
        str::to_string,
    );
    // a key the model wrote into a call is not echoed to the terminal (or a CI log)
    let s = pith_secrets::scrub(&s);
    let line = s.lines().next().unwrap_or("");
    line.chars().take(100).collect()
}

#[cfg(test)]
#[path = "print_tests.rs"]
mod tests;
