//! The engine's events as ACP session updates. One translator per session: it remembers which
//! tool calls the editor has heard of, what a running command has printed, the session's cost
//! and the compaction under way.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Cost, CurrentModeUpdate, SessionUpdate, TextContent, ToolCall,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};

use super::tools;
use pith_protocol::carried::{Kept, LeftCounts};
use pith_protocol::compaction_note;
use pith_protocol::event::{
    ContextEvent, ContextUsage, Event, OutputEvent, SettingsEvent, TurnEvent,
};
use pith_protocol::message::{PartKind, ToolState};

/// The title of the tool call that reports a compaction.
pub(crate) const COMPACTION_TITLE: &str = "Compacting context";

pub(crate) struct Translator {
    workspace: PathBuf,
    /// Tool calls announced, with their tool and latest input.
    calls: HashMap<String, (String, serde_json::Value)>,
    /// What running commands have printed so far.
    outputs: HashMap<String, String>,
    /// The session's cost so far, USD.
    cost: f64,
    compactions: u32,
    /// The id of the compaction's tool call while one runs.
    compacting: Option<String>,
    last_usage: Option<(u64, u64, u64)>,
}

pub(crate) fn message_chunk(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

pub(crate) fn thought_chunk(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

impl Translator {
    pub(crate) fn new(workspace: PathBuf, cost: f64) -> Translator {
        Translator {
            workspace,
            calls: HashMap::new(),
            outputs: HashMap::new(),
            cost,
            compactions: 0,
            compacting: None,
            last_usage: None,
        }
    }

    /// The updates `event` makes (none for most events).
    pub(crate) fn updates(&mut self, event: &Event) -> Vec<SessionUpdate> {
        match event {
            Event::Output(e) => self.output(e),
            Event::Context(e) => self.context(e),
            Event::Turn(e) => self.turn(e),
            // The engine's mode (an accepted plan ends plan mode); `--yes` is the session's own.
            Event::Settings(SettingsEvent::PermissionModeChanged { mode }) => {
                vec![SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    super::modes::mode_id(*mode, false),
                ))]
            }
            // answers are shown by the session (`answer_text`), MCP servers by its commands;
            // a sub-agent's events stay inside its `task` call
            Event::Settings(
                SettingsEvent::McpStatus { .. }
                | SettingsEvent::McpResources { .. }
                | SettingsEvent::ModelChanged { .. }
                | SettingsEvent::EffortChanged { .. },
            )
            | Event::Session(_)
            | Event::Subagent(_) => Vec::new(),
        }
    }

    /// Streamed text and reasoning, tool calls, what a step cost.
    fn output(&mut self, event: &OutputEvent) -> Vec<SessionUpdate> {
        match event {
            OutputEvent::TextDelta { delta, .. } => vec![message_chunk(delta.clone())],
            OutputEvent::ReasoningDelta { delta, .. } => vec![thought_chunk(delta.clone())],
            OutputEvent::PartUpdated { part } => match &part.kind {
                PartKind::Tool {
                    call_id,
                    tool,
                    input,
                    state,
                } => self.tool(call_id, tool, input, state),
                // pith's own note, never the user's words
                PartKind::Text {
                    text,
                    synthetic: true,
                } if compaction_note::is_continue(text) => {
                    vec![thought_chunk(compaction_note::CONTINUE_NOTE)]
                }
                _ => Vec::new(),
            },
            OutputEvent::ToolOutput { call_id, output } => {
                let so_far = self.outputs.entry(call_id.clone()).or_default();
                so_far.push_str(output);
                let fields = ToolCallUpdateFields::new().content(vec![tools::output_block(so_far)]);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id.clone(),
                    fields,
                ))]
            }
            OutputEvent::StepFinished { cost, .. } => {
                self.cost += cost;
                Vec::new()
            }
            // a tool's start and end come as its part's updates
            OutputEvent::Message { .. }
            | OutputEvent::MessageRemoved { .. }
            | OutputEvent::PartsRemoved { .. }
            | OutputEvent::ToolStarted { .. }
            | OutputEvent::ToolFinished { .. } => Vec::new(),
        }
    }

    /// The context figure; a compaction as a tool call of its own.
    fn context(&mut self, event: &ContextEvent) -> Vec<SessionUpdate> {
        match event {
            ContextEvent::ContextUsage(usage) => self.usage(usage).into_iter().collect(),
            ContextEvent::CompactionStarted { auto, focus, .. } => {
                self.compaction_started(*auto, focus)
            }
            ContextEvent::CompactionFinished {
                before,
                after,
                cost,
                kept,
                left,
                ..
            } => {
                self.cost += cost.cost;
                self.compaction_done(*before, *after, kept, left)
            }
            // a subfolder's instructions joined the prompt: said as a thought, as the TUI says it
            ContextEvent::InstructionsLoaded { file } => vec![thought_chunk(format!(
                "↳ loaded {} ({} tokens)\n",
                file.path,
                pith_protocol::text::count(file.tokens)
            ))],
            ContextEvent::Pruned { .. }
            | ContextEvent::CompactionAhead { .. }
            | ContextEvent::ContextWindow { .. }
            | ContextEvent::ContextBreakdown { .. } => Vec::new(),
        }
    }

    /// A compaction that failed or was stopped ends its tool call.
    fn turn(&mut self, event: &TurnEvent) -> Vec<SessionUpdate> {
        match event {
            TurnEvent::Error { message, .. } if self.compacting.is_some() => {
                self.compaction_ended(ToolCallStatus::Failed, message.clone())
            }
            TurnEvent::TurnFinished { .. } if self.compacting.is_some() => {
                self.compaction_ended(ToolCallStatus::Failed, "Compaction stopped.".into())
            }
            // questions and notices are the session's; errors end the prompt
            TurnEvent::Error { .. }
            | TurnEvent::TurnFinished { .. }
            | TurnEvent::PermissionAsked(_)
            | TurnEvent::ElicitationAsked(_)
            | TurnEvent::Retrying { .. }
            | TurnEvent::State { .. }
            | TurnEvent::Info { .. }
            | TurnEvent::GoalChecked { .. } => Vec::new(),
        }
    }

    fn tool(
        &mut self,
        call_id: &str,
        tool: &str,
        input: &serde_json::Value,
        state: &ToolState,
    ) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        let known = self.calls.get(call_id).map(|(_, i)| i.clone());
        if known.is_none() {
            let call = ToolCall::new(call_id.to_string(), tools::title(tool, input))
                .kind(tools::kind(tool))
                .status(ToolCallStatus::Pending);
            out.push(SessionUpdate::ToolCall(call));
        }
        if known.as_ref() != Some(input) && !input.is_null() {
            let fields = tools::from_input(&self.workspace, tool, input);
            out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                fields,
            )));
            if let Some(plan) = tools::plan(tool, input) {
                out.push(SessionUpdate::Plan(plan));
            }
        }
        self.calls
            .insert(call_id.to_string(), (tool.to_string(), input.clone()));
        if !matches!(state, ToolState::Pending) {
            let fields = tools::from_state(&self.workspace, tool, input, state);
            out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                fields,
            )));
        }
        if state.is_done() {
            self.outputs.remove(call_id);
        }
        out
    }

    /// The context figure as `usage_update` (only when it changed).
    fn usage(&mut self, usage: &ContextUsage) -> Option<SessionUpdate> {
        let cents = (self.cost * 1e6).round() as u64;
        let key = (usage.used, usage.window, cents);
        if self.last_usage == Some(key) || usage.window == 0 {
            return None;
        }
        self.last_usage = Some(key);
        let update = UsageUpdate::new(usage.used, usage.window).cost(Cost::new(self.cost, "USD"));
        Some(SessionUpdate::UsageUpdate(update))
    }

    fn compaction_started(&mut self, auto: bool, focus: &Option<String>) -> Vec<SessionUpdate> {
        self.compactions += 1;
        let id = format!("pith-compaction-{}", self.compactions);
        self.compacting = Some(id.clone());
        let why = if auto {
            "The context is nearly full: summarising the conversation so far."
        } else {
            "Summarising the conversation so far."
        };
        let text = match focus {
            Some(f) => format!("{why} Focus: {f}"),
            None => why.to_string(),
        };
        let call = ToolCall::new(id, COMPACTION_TITLE)
            .kind(ToolKind::Think)
            .status(ToolCallStatus::InProgress)
            .content(vec![tools::text(text)]);
        vec![SessionUpdate::ToolCall(call)]
    }

    fn compaction_ended(&mut self, status: ToolCallStatus, text: String) -> Vec<SessionUpdate> {
        let fields = ToolCallUpdateFields::new()
            .status(status)
            .content(vec![tools::text(text)]);
        self.end_compaction(fields)
    }

    /// A compaction done: its tool call titled with the one line of what was kept and what
    /// left the view (`compacted 41.2k → 9.8k · kept: … · left: …`), the figures typed in its
    /// raw output for a client that shows them its own way.
    fn compaction_done(
        &mut self,
        before: u64,
        after: u64,
        kept: &Kept,
        left: &LeftCounts,
    ) -> Vec<SessionUpdate> {
        let line = compaction_note::one_line(before, after, kept, left);
        let mut text = format!("Context {line}.");
        if compaction_note::anything_left(left) {
            text.push_str(" What left the view stays in the session: ask to recall it by id.");
        }
        let fields = ToolCallUpdateFields::new()
            .status(ToolCallStatus::Completed)
            .title(format!("Context {line}"))
            .content(vec![tools::text(text)])
            .raw_output(serde_json::json!({
                "before": before,
                "after": after,
                "kept": kept,
                "left": left,
            }));
        self.end_compaction(fields)
    }

    fn end_compaction(&mut self, fields: ToolCallUpdateFields) -> Vec<SessionUpdate> {
        let Some(id) = self.compacting.take() else {
            return Vec::new();
        };
        vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id, fields,
        ))]
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
