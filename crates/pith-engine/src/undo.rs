//! `/undo`, `/redo`, `/rewind`: every turn records a snapshot of the workspace before and after
//! it (`crate::snapshot`); undoing a turn puts back the files it changed and takes its messages
//! out of the session and the context, keeping them for `/redo` until the next turn starts.
//! The record lives beside the snapshots: `<data_dir>/snapshots/sessions/<id>.json`.

use serde::{Deserialize, Serialize};

use crate::error::EngineError;
use crate::snapshot::Snapshots;
use crate::turn_context::Turn;
use pith_protocol::event::SessionEvent;
use pith_protocol::message::{Message, PartKind, Role};
use pith_protocol::tool::{ToolInput, ToolName};

/// One turn: the user message that started it and the workspace before and after.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RecordedTurn {
    message_id: String,
    before: Option<String>,
    after: Option<String>,
}

/// A turn taken back, with its messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Undone {
    turn: RecordedTurn,
    messages: Vec<Message>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    turns: Vec<RecordedTurn>,
    /// Last undone last: `/redo` takes from the end.
    redo: Vec<Undone>,
}

impl Turn<'_> {
    fn snapshots(&self) -> Snapshots {
        Snapshots::new(&self.opts.data_dir, &self.opts.workspace)
    }

    fn record_path(&self) -> std::path::PathBuf {
        self.opts
            .data_dir
            .join("snapshots/sessions")
            .join(format!("{}.json", self.log.session().id))
    }

    fn load_record(&self) -> Record {
        std::fs::read(self.record_path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save_record(&self, r: &Record) {
        let path = self.record_path();
        let result = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, serde_json::to_vec(r).unwrap_or_default()));
        if let Err(e) = result {
            tracing::error!("cannot save the undo record: {e}");
        }
    }

    /// A snapshot of the workspace, off the async workers; `None` (logged) when it cannot be
    /// taken: the turn can then be undone in the conversation only.
    async fn take_snapshot(&self) -> Option<String> {
        let snaps = self.snapshots();
        match tokio::task::spawn_blocking(move || snaps.take()).await {
            Ok(Ok(id)) => Some(id),
            Ok(Err(e)) => {
                tracing::warn!("no workspace snapshot: {e}");
                None
            }
            Err(e) => {
                tracing::warn!("no workspace snapshot: {e}");
                None
            }
        }
    }

    /// The workspace before a turn. A new turn ends what `/redo` could put back.
    pub(crate) async fn snapshot_before_turn(&mut self) -> Option<String> {
        let mut r = self.load_record();
        if !r.redo.is_empty() {
            r.redo.clear();
            self.save_record(&r);
        }
        self.take_snapshot().await
    }

    /// Records a finished turn started by user message `message_id`. A turn that ran no tool
    /// changed nothing: its snapshot after is the one before (no second walk of the workspace).
    pub(crate) async fn record_turn(&mut self, message_id: &str, before: Option<String>) {
        let ran_tools = self
            .log
            .view()
            .iter()
            .skip_while(|m| m.id != message_id)
            .flat_map(|m| &m.parts)
            .any(|p| matches!(p.kind, pith_protocol::message::PartKind::Tool { .. }));
        let after = match before {
            Some(_) if !ran_tools => before.clone(),
            Some(_) => self.take_snapshot().await,
            None => None,
        };
        let mut r = self.load_record();
        r.turns.push(RecordedTurn {
            message_id: message_id.to_string(),
            before,
            after,
        });
        self.save_record(&r);
    }

    fn undo_error(&self, message: String) {
        self.report(EngineError::Undo(message));
    }

    pub(crate) async fn undo(&mut self) {
        let Some(target) = self.last_turn_start() else {
            return self.undo_error("nothing to undo".into());
        };
        self.rewind(&target).await
    }

    /// The user message that started the last turn in the view.
    fn last_turn_start(&self) -> Option<String> {
        self.log
            .view()
            .iter()
            .rev()
            .find(|m| m.role == Role::User && is_turn_start(m))
            .map(|m| m.id.clone())
    }

    /// Undoes every turn from the one started by `message_id` on, newest first.
    pub(crate) async fn rewind(&mut self, message_id: &str) {
        let Some(first) = self.log.view().iter().position(|m| m.id == message_id) else {
            return self.undo_error(
                "that message is no longer in the context (a compaction summarised it)".into(),
            );
        };
        if self.log.view()[first..]
            .iter()
            .any(|m| m.summary || m.compaction().is_some())
        {
            return self.undo_error(
                "the conversation was compacted after that message; pith cannot undo past a compaction"
                    .into(),
            );
        }
        let mut record = self.load_record();
        let turns = take_turns_from(&mut record, message_id);
        let files = match restore_before(&self.snapshots(), &turns) {
            Ok(files) => files,
            Err(e) => return self.undo_error(format!("cannot restore the files: {e}")),
        };
        // the messages go, kept for /redo
        let removed = self.log.cut_from(first);
        let prompt = removed.first().map(prompt_of).unwrap_or_default();
        keep_for_redo(&mut record, &turns, removed, message_id);
        self.save_record(&record);
        self.reset_estimate();
        self.emit(SessionEvent::Undone {
            message_id: message_id.to_string(),
            prompt,
            files,
            redo: record.redo.len(),
        });
        self.emit_context();
    }

    pub(crate) async fn redo(&mut self) {
        let mut record = self.load_record();
        let Some(u) = record.redo.pop() else {
            return self.undo_error("nothing to redo".into());
        };
        let mut files = Vec::new();
        if let (Some(before), Some(after)) = (&u.turn.before, &u.turn.after) {
            let snaps = self.snapshots();
            match snaps.changed(before, after).and_then(|c| {
                snaps.restore(after, &c)?;
                Ok(c)
            }) {
                Ok(c) => files = c,
                Err(e) => return self.undo_error(format!("cannot restore the files: {e}")),
            }
        }
        self.log.put_back(&u.messages);
        if u.turn.before.is_some() || !u.messages.is_empty() {
            record.turns.push(u.turn.clone());
        }
        self.save_record(&record);
        self.reset_estimate();
        self.emit(SessionEvent::Redone {
            messages: u.messages,
            files,
            redo: record.redo.len(),
        });
        self.emit_context();
    }
}

/// A message the user typed or ran (not a compaction request, not pith's own continue note).
fn is_turn_start(m: &Message) -> bool {
    m.compaction().is_none()
        && m.parts.iter().any(|p| match &p.kind {
            PartKind::Text { synthetic, .. } => !synthetic,
            PartKind::Tool { .. } => true,
            _ => false,
        })
        && !m.mid_turn
}

/// What the user typed (a `!` command as `!command`).
fn prompt_of(m: &Message) -> String {
    for p in &m.parts {
        match &p.kind {
            PartKind::Text {
                text,
                synthetic: false,
            } => return text.clone(),
            PartKind::Tool { tool, input, .. } => {
                let name = ToolName::parse(tool);
                if let ToolInput::Exec { command } = ToolInput::of(&name, input) {
                    return format!("!{}", command.unwrap_or(""));
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// Takes the recorded turns from the one started by `message_id` on off `record`, newest
/// first.
fn take_turns_from(record: &mut Record, message_id: &str) -> Vec<RecordedTurn> {
    let mut turns: Vec<RecordedTurn> = Vec::new();
    while let Some(t) = record.turns.last() {
        if t.message_id.as_str() < message_id {
            break;
        }
        turns.push(record.turns.pop().expect("last exists"));
    }
    turns
}

/// Puts each turn's files back to how they were before it, newest first; the files restored,
/// sorted.
fn restore_before(snaps: &Snapshots, turns: &[RecordedTurn]) -> std::io::Result<Vec<String>> {
    let mut files: Vec<String> = Vec::new();
    for t in turns {
        if let (Some(before), Some(after)) = (&t.before, &t.after) {
            let changed = snaps.changed(before, after)?;
            snaps.restore(before, &changed)?;
            files.extend(changed);
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Keeps the removed messages for `/redo`: one entry per turn, the oldest undone last (redone
/// first); messages of turns pith has no record of (an older session) as one more.
fn keep_for_redo(
    record: &mut Record,
    turns: &[RecordedTurn],
    removed: Vec<Message>,
    message_id: &str,
) {
    let mut rest = removed;
    for t in turns {
        let at = rest
            .iter()
            .position(|m| m.id >= t.message_id)
            .unwrap_or(rest.len());
        let messages = rest.split_off(at);
        record.redo.push(Undone {
            turn: t.clone(),
            messages,
        });
    }
    if !rest.is_empty() {
        record.redo.push(Undone {
            turn: RecordedTurn {
                message_id: message_id.to_string(),
                before: None,
                after: None,
            },
            messages: rest,
        });
    }
}
