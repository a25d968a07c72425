//! One user turn: steps until the model stops calling tools (ARCHITECTURE.md §5).

use tokio_util::sync::CancellationToken;

use super::compaction::{CompactRequest, CompactionError, Then, Trigger};
use super::compactor;
use super::shared::Prompt;
use super::step::Outcome;
use crate::error::EngineError;
use crate::goal::GoalNext;
use crate::turn_context::Turn;
use pith_context::{overflow, prune};
use pith_protocol::event::{ContextEvent, EngineState, Event, OutputEvent, TurnEnd, TurnEvent};
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{Message, MessageError, PartKind, Role, ToolState, Usage, now_ms};
use pith_provider::ProviderError;

/// A step the model answered.
struct StepDone {
    /// The assistant message in the view.
    idx: usize,
    usage: Option<Usage>,
    finish: FinishReason,
    /// The estimate of the request, to learn from the reported usage.
    estimated: Estimate,
}

/// What the engine estimated for a request before sending it.
#[derive(Debug, Clone, Copy)]
struct Estimate {
    /// The whole request.
    request: u64,
    /// Its messages alone.
    content: u64,
}

impl Turn<'_> {
    /// Runs a turn for the user messages in `prompts` (queued while idle).
    pub(crate) async fn user_turn(&mut self, prompts: Vec<Prompt>) -> TurnEnd {
        let cancel = self.shared.fresh_cancel();
        self.compactor.start_turn();
        self.tools.start_user_turn();
        self.settle_mcp(&cancel).await;
        self.collect_attachments().await;
        // The window decides what is admitted: a local server's answer comes first.
        self.settle_window().await;
        // a memory or instruction file edited since the last turn is in this one's prompt
        self.refresh_instructions();
        let admitted = self.admit_prompts(&prompts, false).await;
        if admitted.is_empty() {
            // every prompt was refused: nothing was stored, nothing is sent
            self.emit(TurnEvent::TurnFinished {
                reason: TurnEnd::Error,
            });
            self.state(EngineState::Idle, None);
            return TurnEnd::Error;
        }
        // A sub-agent's changes are undone with its parent's turn, which snapshots around it.
        let before = if self.role.depth == 0 {
            self.snapshot_before_turn().await
        } else {
            None
        };
        let mut parent = String::new();
        let mut first = None;
        for m in admitted {
            let i = self.push_prompt(m);
            parent = self.log.view()[i].id.clone();
            first.get_or_insert_with(|| parent.clone());
        }
        self.touch_session();
        self.emit_context();
        let mut reason = self.turn_loop(parent, &cancel).await;
        if reason == TurnEnd::Interrupted {
            // Interrupting stops everything under way, the background summary too.
            self.compactor.drop_background();
            self.update_compaction_notice();
            // and the goal's turns: it stays, paused
            self.pause_goal_on_interrupt();
        }
        if let Some(first) = first
            && self.role.depth == 0
        {
            self.record_turn(&first, before).await;
        }
        self.touch_session();
        self.emit_context();
        if let Some(e) = self.log.take_failure() {
            self.report(e);
            reason = TurnEnd::Error;
        }
        self.emit(TurnEvent::TurnFinished {
            reason: reason.clone(),
        });
        self.state(EngineState::Idle, None);
        reason
    }

    async fn turn_loop(&mut self, mut parent: String, cancel: &CancellationToken) -> TurnEnd {
        let max_steps = self.opts.config.max_steps.max(1);
        let mut step: u32 = 0;
        let mut stop_blocks: u32 = 0;
        loop {
            step += 1;
            let last_step = step >= max_steps;
            let StepDone {
                idx,
                usage,
                finish,
                estimated,
            } = match self.run_step(&mut parent, last_step, cancel).await {
                Ok(done) => done,
                Err(end) => return end,
            };
            self.finish_step(idx, usage, &finish, estimated);
            if self.log.failing() {
                // Running tools whose results cannot be kept would only lose more work.
                return TurnEnd::Error;
            }
            // Calls cut off at the output cap failed with a note: the model answers them.
            let cut = finish == FinishReason::Length && self.cut_at_cap(idx);
            let has_calls = match self.run_pending_tools(idx, cancel).await {
                Ok(has_calls) => has_calls,
                Err(end) => return end,
            };
            // What the user typed meanwhile keeps the turn going — unless all of it was refused.
            let continuing = ((has_calls || cut) && !last_step)
                || (self.shared.has_queued() && self.deliver_queued(&mut parent).await);
            if let Err(end) = self.compact_after_step(continuing, cancel).await {
                return end;
            }
            // A `stop` hook that exits 2 sends the model back to work with its reason.
            if !continuing
                && !last_step
                && finish == FinishReason::Stop
                && let Some(reason) = self.stop_hooks(stop_blocks, cancel).await
            {
                stop_blocks += 1;
                if cancel.is_cancelled() {
                    return TurnEnd::Interrupted;
                }
                parent = self.back_to_work(&reason);
                continue;
            }
            // An active goal not yet met sends the model back to work, as a stop hook does,
            // with a turn's allowance of steps and compactions (ARCHITECTURE.md §5.2).
            if !continuing && finish == FinishReason::Stop {
                match self.goal_continue(cancel).await {
                    GoalNext::Stop => {}
                    // an interrupt during the check (its command, its question)
                    GoalNext::Interrupted => return TurnEnd::Interrupted,
                    GoalNext::Continue(note) => {
                        parent = self.goal_back_to_work(&note);
                        step = 0;
                        stop_blocks = 0;
                        self.compactor.start_turn();
                        continue;
                    }
                }
            }
            if !continuing {
                return if last_step && has_calls {
                    TurnEnd::MaxSteps
                } else {
                    TurnEnd::from(finish)
                };
            }
        }
    }

    /// Runs the tool calls the step at `idx` left pending; whether it had any. `Err` ends the
    /// turn (a loop stopped, an interruption, a failing store).
    async fn run_pending_tools(
        &mut self,
        idx: usize,
        cancel: &CancellationToken,
    ) -> Result<bool, TurnEnd> {
        let has_calls = self.log.view()[idx].parts.iter().any(|p| {
            matches!(
                p.kind,
                PartKind::Tool {
                    state: ToolState::Pending,
                    ..
                }
            )
        });
        if has_calls {
            let stopped = self.run_tools(idx, cancel).await;
            self.fold_sampling();
            if let Err(stop) = stopped {
                return Err(self.fail(EngineError::Loop(stop.to_string())));
            }
            if cancel.is_cancelled() {
                return Err(TurnEnd::Interrupted);
            }
            if self.log.failing() {
                return Err(TurnEnd::Error);
            }
        }
        Ok(has_calls)
    }

    /// At a step's end: compacts when the context reached the threshold (the turn goes on
    /// after it when `continuing`), else starts a background summary when it is time.
    async fn compact_after_step(
        &mut self,
        continuing: bool,
        cancel: &CancellationToken,
    ) -> Result<(), TurnEnd> {
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
                return Err(self.fail_compaction(e));
            }
        } else {
            compactor::maybe_start_background(self);
        }
        self.update_compaction_notice();
        Ok(())
    }

    /// A stop hook's `reason` as a note that sends the model back to work; the note's id, the
    /// next step's parent.
    fn back_to_work(&mut self, reason: &str) -> String {
        let note = format!(
            "<hook-context event=\"Stop\">\nA stop hook asks you to keep going before you finish: {}\n</hook-context>",
            reason.trim()
        );
        let i = self.push_user_text(&note, true);
        let parent = self.log.view()[i].id.clone();
        self.emit_context();
        parent
    }

    /// The goal's continuation `note` as a synthetic user message; its id, the next step's
    /// parent.
    fn goal_back_to_work(&mut self, note: &str) -> String {
        let i = self.push_user_text(note, true);
        let parent = self.log.view()[i].id.clone();
        self.emit_context();
        parent
    }

    /// One step: delivers what the user typed meanwhile, then streams the model's answer into a
    /// new assistant message. When the provider reports that the request overflowed the context
    /// window, the window the error states is learned, the context is compacted and the same
    /// step is tried again — once, or once more when the error taught a smaller window. `Err`
    /// ends the turn.
    async fn run_step(
        &mut self,
        parent: &mut String,
        last_step: bool,
        cancel: &CancellationToken,
    ) -> Result<StepDone, TurnEnd> {
        let mut overflow_retried = false;
        loop {
            self.before_step(parent, cancel).await?;
            let request = self.build_request(last_step);
            let content = self.estimate_content();
            let estimated = Estimate {
                request: self.overhead() + content,
                content,
            };
            let idx = self.start_step(parent);
            match self.stream_step(idx, &request, cancel).await {
                Outcome::Done { usage, finish } => {
                    return Ok(StepDone {
                        idx,
                        usage,
                        finish,
                        estimated,
                    });
                }
                Outcome::Interrupted => {
                    self.finish_interrupted(idx);
                    return Err(TurnEnd::Interrupted);
                }
                Outcome::Overflow(err) => {
                    self.compact_after_overflow(idx, &err, &estimated, overflow_retried, cancel)
                        .await?;
                    overflow_retried = true;
                    // the same step again, on the compacted context
                }
                Outcome::Failed(err) => return Err(self.step_failed(idx, err.message)),
            }
        }
    }

    /// Before a step: what the user typed meanwhile is delivered, MCP servers starting are
    /// waited for, old tool output pruned, and the context compacted when it reached the
    /// threshold. `Err` ends the turn.
    async fn before_step(
        &mut self,
        parent: &mut String,
        cancel: &CancellationToken,
    ) -> Result<(), TurnEnd> {
        if cancel.is_cancelled() {
            return Err(TurnEnd::Interrupted);
        }
        self.deliver_queued(parent).await;
        self.settle_mcp(cancel).await;
        self.prune();
        if self.overflowing() {
            let req = CompactRequest {
                trigger: Trigger::Auto,
                then: Then::Continue,
            };
            if let Err(e) = self.compact(req, cancel).await {
                return Err(self.fail_compaction(e));
            }
            if cancel.is_cancelled() {
                return Err(TurnEnd::Interrupted);
            }
        }
        Ok(())
    }

    /// Adds the step's assistant message (after `parent`), announced; its index in the view.
    fn start_step(&mut self, parent: &str) -> usize {
        let mut a = Message::new(self.log.session_id(), Role::Assistant);
        a.parent_id = Some(parent.to_string());
        a.model = Some(self.model.name.clone());
        a.agent = Some(self.role.agent());
        a.push(PartKind::StepStart);
        let idx = self.push_message(a);
        self.state(EngineState::Thinking, None);
        idx
    }

    /// The provider said the request at `idx` overflowed: the message goes, the window the error
    /// states is learned, and the context is compacted for the step to be tried again. `Err`
    /// ends the turn: compaction is off, or this step overflowed before (`retried`) and the
    /// error taught nothing new.
    async fn compact_after_overflow(
        &mut self,
        idx: usize,
        err: &ProviderError,
        estimated: &Estimate,
        retried: bool,
        cancel: &CancellationToken,
    ) -> Result<(), TurnEnd> {
        self.drop_message(idx);
        // The error may state the real window: from now on it is the one used.
        let window = self.model.limits.context;
        let said = self.learn_window(err, Some(estimated.request));
        let learned = self.model.limits.context != window;
        if (retried && !learned) || !self.opts.config.compaction.auto {
            return Err(self.fail(EngineError::ContextOverflow(err.message.clone())));
        }
        tracing::info!("provider reported a context overflow; compacting and retrying the step");
        let req = CompactRequest {
            trigger: Trigger::Overflow {
                prompt_tokens: said.prompt,
            },
            then: Then::Continue,
        };
        if let Err(e) = self.compact(req, cancel).await {
            return Err(self.fail_compaction(e));
        }
        Ok(())
    }

    /// The step at `idx` failed with `message`: the message records it, and the turn ends.
    fn step_failed(&mut self, idx: usize, message: String) -> TurnEnd {
        let m = self
            .log
            .fail_message(idx, MessageError::Failed(message.clone()));
        let failed = EngineError::Provider(message).event_of_step(&m.id);
        self.emit(failed);
        TurnEnd::Error
    }

    /// The overflow test on the running figure (last report + estimate of what was added).
    pub(crate) fn overflowing(&self) -> bool {
        overflow::is_overflow(
            self.meter.used(),
            &self.model.limits,
            &self.opts.config.compaction,
        )
    }

    /// Reports what ended the turn.
    fn fail(&mut self, e: EngineError) -> TurnEnd {
        self.report(e);
        TurnEnd::Error
    }

    /// Ends the turn after a compaction that did not go through.
    fn fail_compaction(&mut self, e: CompactionError) -> TurnEnd {
        match e {
            CompactionError::Interrupted => TurnEnd::Interrupted,
            e => self.fail(EngineError::Compaction(e)),
        }
    }

    /// A step cut at the output cap: tool calls whose arguments were cut off fail with a note
    /// the model can act on (the other calls run); a cut answer is said to be cut. True when a
    /// call was cut.
    fn cut_at_cap(&mut self, idx: usize) -> bool {
        let cap = overflow::max_output(&self.model.limits);
        let note = format!(
            "Your reply was cut off at the output limit of {cap} tokens while writing this call, so its arguments are incomplete and it was not run. Do the work in smaller pieces (for example several edits instead of one large write)."
        );
        let changed = self.log.change_parts(idx, |p| {
            if let PartKind::Tool { input, state, .. } = &mut p.kind
                && matches!(state, ToolState::Pending)
                && !input.is_object()
            {
                *state = ToolState::Error {
                    message: note.clone(),
                    start: None,
                    end: Some(now_ms()),
                };
                return true;
            }
            false
        });
        let has_calls = self.log.view()[idx]
            .parts
            .iter()
            .any(|p| matches!(p.kind, PartKind::Tool { .. }));
        if !has_calls {
            self.emit(Event::info(format!(
                    "the reply was cut off at the output limit of {} tokens; say \"continue\" for the rest",
                    pith_protocol::text::count(cap)
                )));
        }
        changed > 0
    }

    /// Removes a message from the view and the store (a step that will be retried).
    pub(crate) fn drop_message(&mut self, idx: usize) {
        self.log.remove(idx);
        self.reset_estimate();
    }

    /// Records the step's usage and finish.
    fn finish_step(
        &mut self,
        idx: usize,
        usage: Option<Usage>,
        finish: &FinishReason,
        estimated: Estimate,
    ) {
        let cost = usage
            .as_ref()
            .map(|u| pith_provider::cost::cost(u, &self.model.info))
            .unwrap_or(0.0);
        let m = self
            .log
            .record_step_finish(idx, usage.unwrap_or_default(), finish, cost);
        self.record
            .set_last_answer(pith_context::compaction::written_text(&m));
        self.log.write_header(&m);
        if let Some(p) = m.parts.last() {
            self.emit(OutputEvent::PartUpdated { part: p.clone() });
        }
        self.log.add_cost(cost);
        self.goal_spend(usage.as_ref());
        match usage {
            Some(u) if u.context_tokens() > 0 => {
                self.record.spend(u.context_tokens());
                self.meter
                    .on_step_report(&u, estimated.content, estimated.request);
            }
            _ => {
                // No usage reported: the output joins the estimate.
                self.meter.add_message(&m);
            }
        }
        self.emit(OutputEvent::StepFinished {
            usage: usage.unwrap_or_default(),
            finish: finish.clone(),
            cost,
        });
        self.touch_session();
        self.emit_context();
    }

    /// An interrupted step: keep what streamed, turn unfinished tools into errors.
    fn finish_interrupted(&mut self, idx: usize) {
        let why = pith_tools::ToolError::Interrupted.to_string();
        self.log.mark_interrupted(idx, &why);
    }

    /// Clears old tool outputs (ARCHITECTURE.md §6.2) at a step boundary.
    pub(crate) fn prune(&mut self) {
        if !self.opts.config.compaction.prune {
            return;
        }
        let rules = prune::PruneRules::new(&self.budget(), &self.opts.config.compaction);
        let Some((parts, tokens)) = self.log.prune(self.meter.estimator_mut(), &rules) else {
            return;
        };
        self.reset_estimate();
        self.emit(ContextEvent::Pruned { parts, tokens });
        self.emit_context();
    }
}

#[cfg(test)]
mod tests;
