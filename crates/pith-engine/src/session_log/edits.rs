//! The edits the turn makes to messages already in the view: a step's parts as they stream, a
//! step that fails, is cut short or finishes, pruned tool outputs, context a hook adds. Each
//! method is named after what it does and saves and announces what it changed as the turn
//! always did.

use pith_context::prune::{self, PrunePlan};
use pith_context::tokens::Estimator;
use pith_protocol::event::{Event, OutputEvent};
use pith_protocol::llm::FinishReason;
use pith_protocol::message::{Message, MessageError, Part, PartKind, ToolState, Usage, now_ms};

use super::SessionLog;

impl SessionLog {
    /// Drops every part of the message at `idx` after its StepStart (a failed attempt's partial
    /// output): deleted from the store, announced as removed, then the message as it is now.
    pub(crate) fn restart_step(&mut self, idx: usize) {
        let m = &mut self.view[idx];
        let dropped: Vec<String> = m
            .parts
            .iter()
            .filter(|p| !matches!(p.kind, PartKind::StepStart))
            .map(|p| p.id.clone())
            .collect();
        m.parts.retain(|p| matches!(p.kind, PartKind::StepStart));
        let m = m.clone();
        for id in &dropped {
            self.delete_part(id);
        }
        if !dropped.is_empty() {
            self.emit(OutputEvent::PartsRemoved {
                message_id: m.id.clone(),
                part_ids: dropped,
            });
        }
        self.emit(OutputEvent::Message { message: m });
    }

    /// Adds a part to the message at `idx`, neither saved nor announced (a streamed part,
    /// saved with the next flush); its index.
    pub(crate) fn add_part(&mut self, idx: usize, kind: PartKind) -> usize {
        let m = &mut self.view[idx];
        m.push(kind);
        m.parts.len() - 1
    }

    /// Opens a streamed part of the message at `idx` and announces it (saved with the next
    /// flush); its index.
    pub(crate) fn open_part(&mut self, idx: usize, kind: PartKind) -> usize {
        let pi = self.add_part(idx, kind);
        let part = self.view[idx].parts[pi].clone();
        self.emit(OutputEvent::PartUpdated { part });
        pi
    }

    /// Appends streamed text to the text part `pi` of the message at `idx` and announces the
    /// delta.
    pub(crate) fn stream_text(&mut self, idx: usize, pi: usize, delta: String) {
        let m = &mut self.view[idx];
        if let PartKind::Text { text, .. } = &mut m.parts[pi].kind {
            text.push_str(&delta);
        }
        let event = Event::Output(OutputEvent::TextDelta {
            message_id: m.id.clone(),
            part_id: m.parts[pi].id.clone(),
            delta,
        });
        self.emit(event);
    }

    /// Appends streamed reasoning to the reasoning part `pi` of the message at `idx` and
    /// announces the delta.
    pub(crate) fn stream_reasoning(&mut self, idx: usize, pi: usize, delta: String) {
        let m = &mut self.view[idx];
        if let PartKind::Reasoning { text, .. } = &mut m.parts[pi].kind {
            text.push_str(&delta);
        }
        let event = Event::Output(OutputEvent::ReasoningDelta {
            message_id: m.id.clone(),
            part_id: m.parts[pi].id.clone(),
            delta,
        });
        self.emit(event);
    }

    /// Signs the reasoning part `pi` of the message at `idx` (saved with the next flush).
    pub(crate) fn sign_reasoning(&mut self, idx: usize, pi: usize, sig: String) {
        if let PartKind::Reasoning { signature, .. } = &mut self.view[idx].parts[pi].kind {
            *signature = Some(sig);
        }
    }

    /// A tool call begins: its part is added to the message at `idx` (pending, no input yet)
    /// and announced, once.
    pub(crate) fn start_tool_call(&mut self, idx: usize, id: String, name: String) {
        let m = &mut self.view[idx];
        if find_tool(&m.parts, &id).is_none() {
            m.push(pending_tool(id, name));
            let part = m.parts.last().cloned();
            if let Some(part) = part {
                self.emit(OutputEvent::PartUpdated { part });
            }
        }
    }

    /// A tool call is complete: its part (added now if it did not begin) gets the input, is
    /// saved and announced.
    pub(crate) fn finish_tool_call(
        &mut self,
        idx: usize,
        id: String,
        name: String,
        input: serde_json::Value,
    ) {
        let m = &mut self.view[idx];
        let pi = match find_tool(&m.parts, &id) {
            Some(pi) => pi,
            None => {
                m.push(pending_tool(id, name));
                m.parts.len() - 1
            }
        };
        if let PartKind::Tool { input: i, .. } = &mut m.parts[pi].kind {
            *i = input;
        }
        let part = m.parts[pi].clone();
        self.write_part(&part);
    }

    /// The message at `idx` failed with `error`: recorded, saved (its header); the message as
    /// it is now.
    pub(crate) fn fail_message(&mut self, idx: usize, error: MessageError) -> Message {
        let m = &mut self.view[idx];
        m.error = Some(error);
        m.time_completed = Some(now_ms());
        let m = m.clone();
        self.write_header(&m);
        m
    }

    /// Changes the parts of the message at `idx` that `change` says it changed, then saves and
    /// announces each of them; how many changed.
    pub(crate) fn change_parts(
        &mut self,
        idx: usize,
        mut change: impl FnMut(&mut Part) -> bool,
    ) -> usize {
        let mut changed = Vec::new();
        for p in &mut self.view[idx].parts {
            if change(p) {
                changed.push(p.clone());
            }
        }
        for p in &changed {
            self.write_part(p);
        }
        changed.len()
    }

    /// Records the end of the step streamed into the message at `idx`: its usage, cost and
    /// finish, completed now, with a StepFinish part (nothing saved); the message as it is now.
    pub(crate) fn record_step_finish(
        &mut self,
        idx: usize,
        usage: Usage,
        finish: &FinishReason,
        cost: f64,
    ) -> Message {
        let m = &mut self.view[idx];
        m.usage = usage;
        m.cost = cost;
        m.finish = Some(finish.clone());
        m.time_completed = Some(now_ms());
        m.push(PartKind::StepFinish {
            usage,
            finish: finish.clone(),
            cost,
        });
        m.clone()
    }

    /// An interrupted step: what streamed is kept, its unfinished tools become errors saying
    /// `why`, and the message is marked interrupted, saved and announced.
    pub(crate) fn mark_interrupted(&mut self, idx: usize, why: &str) {
        let m = &mut self.view[idx];
        for p in &mut m.parts {
            if let PartKind::Tool { state, .. } = &mut p.kind
                && !state.is_done()
            {
                *state = ToolState::Error {
                    message: why.to_string(),
                    start: None,
                    end: Some(now_ms()),
                };
            }
        }
        m.error = Some(MessageError::Interrupted);
        m.finish = Some(FinishReason::Interrupted);
        m.time_completed = Some(now_ms());
        let m = m.clone();
        self.write_message(&m);
    }

    /// Clears the old tool outputs `rules` give up (ARCHITECTURE.md §6.2), counted with
    /// `estimator`, each part saved and announced; how many parts and tokens, or `None` when
    /// nothing is to be cleared.
    pub(crate) fn prune(
        &mut self,
        estimator: &mut Estimator,
        rules: &prune::PruneRules,
    ) -> Option<(usize, u64)> {
        let plan = prune::plan(&self.view, estimator, rules);
        if plan.targets.is_empty() {
            return None;
        }
        let changed = self.mark_pruned(&plan);
        tracing::info!("pruned {} tool outputs ({} tokens)", changed, plan.tokens);
        Some((changed, plan.tokens))
    }

    /// Marks the tool outputs of `plan` cleared, saves and announces each part that changed;
    /// the parts the plan names.
    fn mark_pruned(&mut self, plan: &PrunePlan) -> usize {
        prune::apply(&mut self.view, plan, now_ms());
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
            self.write_part(p);
        }
        changed.len()
    }

    /// Adds a part to the message at `idx` and saves it (not announced).
    pub(crate) fn add_saved_part(&mut self, idx: usize, kind: PartKind) {
        let part = self.view[idx].push(kind).clone();
        self.save_part(&part);
    }
}

/// A tool call's part before its input is known.
fn pending_tool(call_id: String, tool: String) -> PartKind {
    PartKind::Tool {
        call_id,
        tool,
        input: serde_json::Value::Null,
        state: ToolState::Pending,
    }
}

fn find_tool(parts: &[Part], call_id: &str) -> Option<usize> {
    parts
        .iter()
        .position(|p| matches!(&p.kind, PartKind::Tool { call_id: c, .. } if c == call_id))
}
