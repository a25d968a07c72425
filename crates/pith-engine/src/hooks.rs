//! Where the session's hooks run (`hook_commands/`, ARCHITECTURE.md §5.1): the engine builds each
//! event's fields, runs the hooks and acts on what they decided. Warnings reach the front end
//! as `TurnEvent::Info`; a hook's output is never printed.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::shared::Prompt;
use crate::hook_commands::{HookEvent, Outcome};
use crate::turn_context::Turn;
use pith_protocol::event::{EngineState, Event};
use pith_protocol::message::{PartKind, ToolState};

/// How many times per turn a stop hook may send the model back to work.
pub(super) const MAX_STOP_BLOCKS: u32 = 3;

/// Text a hook added to the model's context, as the synthetic part that carries it.
pub(crate) fn context_part(event: HookEvent, text: &str) -> PartKind {
    PartKind::Text {
        text: format!(
            "<hook-context event=\"{}\">\n{}\n</hook-context>",
            event.name(),
            text.trim_end()
        ),
        synthetic: true,
    }
}

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A hook that refused what it was asked about, and its reason.
#[derive(Debug, thiserror::Error)]
pub(super) enum HookBlock {
    /// A `user_prompt_submit` hook refused the prompt.
    #[error("{0}")]
    Prompt(String),
    /// A `pre_tool_use` hook refused the call.
    #[error("Blocked by a pre_tool_use hook: {0}")]
    ToolCall(String),
}

impl Turn<'_> {
    /// Runs the hooks of `event` for `subject`; their warnings go to the front end.
    pub(crate) async fn run_hooks(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        value: Value,
        cancel: &CancellationToken,
    ) -> Outcome {
        if !self.hooks.has(event, subject) {
            return Outcome::default();
        }
        self.state(EngineState::Running, Some(format!("{} hook", event.key())));
        let outcome = self
            .hooks
            .commands()
            .run(event, subject, self.log.session_id(), fields(value), cancel)
            .await;
        for w in &outcome.warnings {
            self.emit(Event::info(format!("warning: {w}")));
        }
        outcome
    }

    /// `session_start` (`source`: "startup", "resume" or "clear"): what the hooks print waits
    /// for the next prompt, which carries it to the model. The main agent only.
    pub(crate) async fn session_start_hooks(&mut self, source: &str) {
        if self.role.depth > 0 {
            return;
        }
        let cancel = self.shared.fresh_cancel();
        let outcome = self
            .run_hooks(
                HookEvent::SessionStart,
                Some(source),
                json!({ "source": source }),
                &cancel,
            )
            .await;
        self.not_blocking(HookEvent::SessionStart, &outcome);
        self.hooks.add_context(
            outcome
                .context
                .iter()
                .map(|c| context_part(HookEvent::SessionStart, c)),
        );
        self.state(EngineState::Idle, None);
    }

    /// `user_prompt_submit` for one prompt: `Err` refuses it; `Ok` the context the hooks add to
    /// it. The main agent only.
    pub(crate) async fn prompt_hooks(
        &mut self,
        prompt: &Prompt,
    ) -> Result<Vec<PartKind>, HookBlock> {
        if self.role.depth > 0 {
            return Ok(Vec::new());
        }
        let cancel = self.shared.current_cancel();
        let outcome = self
            .run_hooks(
                HookEvent::UserPromptSubmit,
                None,
                json!({ "prompt": prompt.text }),
                &cancel,
            )
            .await;
        if let Some(reason) = outcome.block {
            return Err(HookBlock::Prompt(reason));
        }
        Ok(outcome
            .context
            .iter()
            .map(|c| context_part(HookEvent::UserPromptSubmit, c))
            .collect())
    }

    /// `pre_tool_use`: `Err` when a hook blocks the call, `Ok(true)` when one approved it (no
    /// question; rules that deny and the sandbox still hold).
    pub(crate) async fn pre_tool_hooks(
        &self,
        call_id: &str,
        tool: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<bool, HookBlock> {
        let outcome = self
            .run_hooks(
                HookEvent::PreToolUse,
                Some(tool),
                json!({ "tool_name": tool, "tool_input": input, "tool_use_id": call_id }),
                cancel,
            )
            .await;
        match outcome.block {
            Some(reason) => Err(HookBlock::ToolCall(reason)),
            None => Ok(outcome.approve),
        }
    }

    /// `post_tool_use` after a call that completed: what a hook says (a block's reason, added
    /// context) is appended to the result the model reads.
    pub(crate) async fn post_tool_hooks(
        &self,
        call_id: &str,
        tool: &str,
        input: &Value,
        state: ToolState,
        cancel: &CancellationToken,
    ) -> ToolState {
        let ToolState::Completed {
            output,
            title,
            metadata,
            time,
        } = state
        else {
            return state;
        };
        if !self.hooks.has(HookEvent::PostToolUse, Some(tool)) || cancel.is_cancelled() {
            return ToolState::Completed {
                output,
                title,
                metadata,
                time,
            };
        }
        let outcome = self
            .run_hooks(
                HookEvent::PostToolUse,
                Some(tool),
                json!({
                    "tool_name": tool,
                    "tool_input": input,
                    "tool_use_id": call_id,
                    "tool_response": { "output": output, "title": title, "metadata": metadata },
                }),
                cancel,
            )
            .await;
        let mut output = output;
        if let Some(reason) = &outcome.block {
            output.push_str(&format!("\n\n[post_tool_use hook] {reason}"));
        }
        for c in &outcome.context {
            output.push_str(&format!("\n\n[post_tool_use hook] {c}"));
        }
        ToolState::Completed {
            output,
            title,
            metadata,
            time,
        }
    }

    /// `stop`, when the model ended its turn: `Some(reason)` sends it back to work (at most
    /// [`MAX_STOP_BLOCKS`] times a turn). The main agent only.
    pub(crate) async fn stop_hooks(
        &mut self,
        blocks: u32,
        cancel: &CancellationToken,
    ) -> Option<String> {
        if self.role.depth > 0 || !self.hooks.has(HookEvent::Stop, None) {
            return None;
        }
        let outcome = self
            .run_hooks(
                HookEvent::Stop,
                None,
                json!({ "stop_hook_active": blocks > 0 }),
                cancel,
            )
            .await;
        let reason = outcome.block?;
        if blocks >= MAX_STOP_BLOCKS {
            self.emit(Event::info(format!(
                "warning: a stop hook asked to keep going {} times in this turn; stopping anyway",
                blocks + 1
            )));
            return None;
        }
        Some(reason)
    }

    /// `pre_compact` (`trigger` "manual" or "auto", the focus as `custom_instructions`).
    pub(crate) async fn pre_compact_hooks(
        &mut self,
        manual: bool,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) {
        let trigger = if manual { "manual" } else { "auto" };
        let outcome = self
            .run_hooks(
                HookEvent::PreCompact,
                Some(trigger),
                json!({ "trigger": trigger, "custom_instructions": focus.unwrap_or("") }),
                cancel,
            )
            .await;
        self.not_blocking(HookEvent::PreCompact, &outcome);
    }

    /// `post_compact`: what the hooks print joins the summary just written (stored with it), so
    /// the model sees it in the next request — also from a later `pith run -c` after
    /// `pith run /compact`.
    pub(crate) async fn post_compact_hooks(&mut self, manual: bool, cancel: &CancellationToken) {
        let trigger = if manual { "manual" } else { "auto" };
        let outcome = self
            .run_hooks(
                HookEvent::PostCompact,
                Some(trigger),
                json!({ "trigger": trigger }),
                cancel,
            )
            .await;
        self.not_blocking(HookEvent::PostCompact, &outcome);
        let Some(i) = self.log.view().iter().rposition(|m| m.summary) else {
            return;
        };
        for c in &outcome.context {
            self.log
                .add_saved_part(i, context_part(HookEvent::PostCompact, c));
        }
        self.reset_estimate();
    }

    /// `notification`, in the background: a question waits for the user.
    pub(crate) fn notify_hooks(&self, message: String) {
        if let Some(notify) = self.notifier() {
            notify(message);
        }
    }

    /// What runs the `notification` hooks with a message, in the background (`None`: there are
    /// none); an MCP server's questions, asked beside the turn, use it too (`Shared`).
    pub(crate) fn notifier(&self) -> Option<crate::shared::NotifyUser> {
        if !self.hooks.has(HookEvent::Notification, None) {
            return None;
        }
        let hooks = self.hooks.commands().clone();
        let session_id = self.log.session().id.clone();
        let events = self.log.events().clone();
        Some(std::sync::Arc::new(move |message: String| {
            let (hooks, session_id, events) = (hooks.clone(), session_id.clone(), events.clone());
            tokio::spawn(async move {
                let outcome = hooks
                    .run(
                        HookEvent::Notification,
                        None,
                        &session_id,
                        fields(json!({ "message": message })),
                        &CancellationToken::new(),
                    )
                    .await;
                for w in outcome.warnings {
                    let _ = events.send(Event::info(format!("warning: {w}")));
                }
            });
        }))
    }

    /// An event a hook cannot block: a block's reason is shown to the user.
    fn not_blocking(&self, event: HookEvent, outcome: &Outcome) {
        if let Some(reason) = &outcome.block {
            self.emit(Event::info(format!(
                "{} hook: {}",
                event.key(),
                pith_protocol::text::one_line(reason)
            )));
        }
    }
}
