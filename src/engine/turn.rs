//! One user turn: steps until the model stops calling tools (DESIGN.md §3, §4).

use tokio_util::sync::CancellationToken;

use super::compaction::{CompactRequest, CompactionError, Then, Trigger};
use super::prompt;
use super::runner::Runner;
use super::step::Outcome;
use crate::context::{compaction, overflow, prune};
use crate::event::{EngineState, Event};
use crate::llm::FinishReason;
use crate::message::{Message, PartKind, Role, ToolState, now_ms};

impl Runner {
    /// Runs a turn for the user messages in `texts` (queued while idle).
    pub(super) async fn user_turn(&mut self, texts: Vec<String>) {
        let cancel = self.shared.fresh_cancel();
        self.compactions_this_turn = 0;
        let mut parent = String::new();
        for text in &texts {
            let i = self.push_user_text(text, false);
            parent = self.view[i].id.clone();
        }
        self.touch_session();
        self.settle_window().await;
        self.emit_context();
        let reason = self.turn_loop(parent, &cancel).await;
        self.touch_session();
        self.emit_context();
        self.emit(Event::TurnFinished { reason });
        self.state(EngineState::Idle, None);
    }

    /// Returns the reason the turn ended: "stop", "length", "max_steps", "interrupted", "error".
    async fn turn_loop(&mut self, mut parent: String, cancel: &CancellationToken) -> String {
        let max_steps = self.opts.config.max_steps.max(1);
        let mut step: u32 = 0;
        let mut overflow_retried = false;
        loop {
            if cancel.is_cancelled() {
                return "interrupted".into();
            }
            if step > 0 {
                let queued = self.shared.take_queue();
                for text in &queued {
                    let i = self.push_user_text(&prompt::wrap_mid_turn(text), false);
                    parent = self.view[i].id.clone();
                }
                if !queued.is_empty() {
                    self.emit_context();
                }
            }
            step += 1;
            self.prune();
            if self.overflowing() {
                let req = CompactRequest {
                    trigger: Trigger::Auto,
                    then: Then::Continue,
                };
                if let Err(e) = self.compact(req, cancel).await {
                    return self.fail_compaction(e);
                }
                if cancel.is_cancelled() {
                    return "interrupted".into();
                }
            }
            let last_step = step >= max_steps;
            let request = self.build_request(last_step);
            let content = self.estimate_content();
            let estimated = Estimate {
                request: self.overhead() + content,
                content,
            };
            let mut a = Message::new(&self.session.id, Role::Assistant);
            a.parent_id = Some(parent.clone());
            a.model = Some(self.model.name.clone());
            a.agent = Some("build".into());
            a.push(PartKind::StepStart);
            let idx = self.push_message(a);
            self.state(EngineState::Thinking, None);
            let outcome = self.stream_step(idx, &request, cancel).await;
            let (usage, finish) = match outcome {
                Outcome::Done { usage, finish } => (usage, finish),
                Outcome::Interrupted => {
                    self.finish_interrupted(idx);
                    return "interrupted".into();
                }
                Outcome::Overflow(err) => {
                    self.drop_message(idx);
                    // The error may state the real window: from now on it is the one used.
                    let window = self.model.limits.context;
                    let said = self.learn_window(&err, Some(estimated.request));
                    let learned = self.model.limits.context != window;
                    if !self.opts.config.compaction.auto || (overflow_retried && !learned) {
                        return self.fail(format!(
                            "the conversation no longer fits the model's context window ({}); run /compact or start a new session",
                            err.message
                        ));
                    }
                    overflow_retried = true;
                    tracing::info!(
                        "provider reported a context overflow; compacting and retrying the step"
                    );
                    let req = CompactRequest {
                        trigger: Trigger::Overflow {
                            prompt_tokens: said.prompt,
                        },
                        then: Then::Continue,
                    };
                    if let Err(e) = self.compact(req, cancel).await {
                        return self.fail_compaction(e);
                    }
                    step -= 1;
                    continue;
                }
                Outcome::Failed(err) => {
                    let m = &mut self.view[idx];
                    m.error = Some(err.message.clone());
                    m.time_completed = Some(now_ms());
                    let m = m.clone();
                    self.save_message(&m);
                    self.emit(Event::Message { message: m });
                    return self.fail(err.message);
                }
            };
            overflow_retried = false;
            self.finish_step(idx, usage, &finish, estimated);
            if finish == FinishReason::Length {
                self.cut_at_cap(idx);
            }
            let has_calls = self.view[idx].parts.iter().any(|p| {
                matches!(
                    p.kind,
                    PartKind::Tool {
                        state: ToolState::Pending,
                        ..
                    }
                )
            });
            if has_calls {
                self.run_tools(idx, cancel).await;
                if cancel.is_cancelled() {
                    return "interrupted".into();
                }
            }
            let queued = !self
                .shared
                .queue
                .lock()
                .map(|q| q.is_empty())
                .unwrap_or(true);
            let continuing = (has_calls && !last_step) || queued;
            if self.overflowing() {
                let req = CompactRequest {
                    trigger: Trigger::Auto,
                    then: if continuing {
                        Then::Continue
                    } else {
                        Then::Stop
                    },
                };
                if let Err(e) = self.compact(req, cancel).await {
                    return self.fail_compaction(e);
                }
            }
            if !continuing {
                return if last_step && has_calls {
                    "max_steps".into()
                } else {
                    finish.as_str().to_string()
                };
            }
        }
    }

    /// The overflow test on the running figure (last report + estimate of what was added).
    pub(super) fn overflowing(&self) -> bool {
        overflow::is_overflow(
            self.tracker.used(),
            &self.model.limits,
            &self.opts.config.compaction,
        )
    }

    fn fail(&mut self, message: String) -> String {
        self.emit(Event::Error { message });
        "error".into()
    }

    /// Ends the turn after a compaction that did not go through.
    fn fail_compaction(&mut self, e: CompactionError) -> String {
        match e {
            CompactionError::Interrupted => "interrupted".into(),
            e => self.fail(e.to_string()),
        }
    }

    /// A step cut at the output cap: tool calls whose arguments were cut off fail with a note
    /// the model can act on (the other calls run); a cut answer is said to be cut.
    fn cut_at_cap(&mut self, idx: usize) {
        let cap = overflow::max_output(&self.model.limits);
        let note = format!(
            "Your reply was cut off at the output limit of {cap} tokens while writing this call, so its arguments are incomplete and it was not run. Do the work in smaller pieces (for example several edits instead of one large write)."
        );
        let mut changed = Vec::new();
        for p in &mut self.view[idx].parts {
            if let PartKind::Tool { input, state, .. } = &mut p.kind
                && matches!(state, ToolState::Pending)
                && !input.is_object()
            {
                *state = ToolState::Error {
                    message: note.clone(),
                    start: None,
                    end: Some(now_ms()),
                };
                changed.push(p.clone());
            }
        }
        for p in &changed {
            self.save_part(p);
            self.emit(Event::PartUpdated { part: p.clone() });
        }
        let has_calls = self.view[idx]
            .parts
            .iter()
            .any(|p| matches!(p.kind, PartKind::Tool { .. }));
        if !has_calls {
            self.emit(Event::Info {
                message: format!(
                    "the reply was cut off at the output limit of {cap} tokens; say \"continue\" for the rest"
                ),
            });
        }
    }

    /// Removes a message from the view and the store (a step that will be retried).
    pub(super) fn drop_message(&mut self, idx: usize) {
        let m = self.view.remove(idx);
        if let Err(e) = self.store.delete_message(&m.id) {
            tracing::error!("store: cannot delete message {}: {e:#}", m.id);
        }
        self.reset_estimate();
    }

    /// Records the step's usage and finish.
    fn finish_step(
        &mut self,
        idx: usize,
        usage: Option<crate::message::Usage>,
        finish: &FinishReason,
        estimated: Estimate,
    ) {
        let cost = usage
            .as_ref()
            .map(|u| crate::provider::cost::cost(u, &self.model.info))
            .unwrap_or(0.0);
        {
            let m = &mut self.view[idx];
            m.usage = usage.unwrap_or_default();
            m.cost = cost;
            m.finish = Some(finish.as_str().to_string());
            m.time_completed = Some(now_ms());
            m.push(PartKind::StepFinish {
                usage: usage.unwrap_or_default(),
                finish: finish.as_str().to_string(),
                cost,
            });
        }
        let m = self.view[idx].clone();
        self.save_message(&m);
        self.emit(Event::Message { message: m.clone() });
        if let Some(p) = m.parts.last() {
            self.emit(Event::PartUpdated { part: p.clone() });
        }
        self.session.cost += cost;
        match usage {
            Some(u) if u.context_tokens() > 0 => {
                let prompt_side = u.input + u.cache_read + u.cache_write;
                self.estimator.learn(estimated.content, prompt_side);
                self.tracker.on_report(&u, estimated.request);
                self.session.tokens = u.context_tokens();
            }
            _ => {
                // No usage reported: the output joins the estimate.
                let tokens = self.estimator.message(&m);
                self.tracker.on_added(tokens);
            }
        }
        self.emit(Event::StepFinished {
            usage: usage.unwrap_or_default(),
            finish: finish.as_str().to_string(),
            cost,
        });
        self.touch_session();
        self.emit_context();
    }

    /// An interrupted step: keep what streamed, turn unfinished tools into errors.
    fn finish_interrupted(&mut self, idx: usize) {
        let m = &mut self.view[idx];
        for p in &mut m.parts {
            if let PartKind::Tool { state, .. } = &mut p.kind
                && !state.is_done()
            {
                *state = ToolState::Error {
                    message: "Tool execution was interrupted".into(),
                    start: None,
                    end: Some(now_ms()),
                };
            }
        }
        m.error = Some("interrupted".into());
        m.finish = Some("interrupted".into());
        m.time_completed = Some(now_ms());
        let m = m.clone();
        self.save_message(&m);
        self.emit(Event::Message { message: m.clone() });
        for p in &m.parts {
            self.emit(Event::PartUpdated { part: p.clone() });
        }
    }

    /// Clears old tool outputs (DESIGN.md §4b) at a step boundary.
    pub(super) fn prune(&mut self) {
        if !self.opts.config.compaction.prune {
            return;
        }
        let rules = prune::PruneRules::new(&self.budget(), &self.opts.config.compaction);
        let plan = prune::plan(&self.view, &mut self.estimator, &rules);
        if plan.targets.is_empty() {
            return;
        }
        prune::apply(&mut self.view, &plan, now_ms());
        let mut changed = Vec::new();
        for (mid, pid) in &plan.targets {
            if let Some(p) = self
                .view
                .iter()
                .find(|m| &m.id == mid)
                .and_then(|m| m.parts.iter().find(|p| &p.id == pid))
            {
                changed.push(p.clone());
            }
        }
        for p in &changed {
            self.save_part(p);
            self.emit(Event::PartUpdated { part: p.clone() });
        }
        tracing::info!(
            "pruned {} tool outputs ({} tokens)",
            changed.len(),
            plan.tokens
        );
        self.reset_estimate();
        self.emit(Event::Pruned {
            parts: changed.len(),
            tokens: plan.tokens,
        });
        self.emit_context();
    }
}

/// What the engine estimated for a request before sending it.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    /// The whole request.
    request: u64,
    /// Its messages alone.
    content: u64,
}

/// The continue message after an automatic compaction.
pub(super) const CONTINUE: &str = compaction::CONTINUE_MESSAGE;
