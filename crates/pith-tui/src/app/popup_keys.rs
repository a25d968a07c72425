//! Keys in a popup: pickers (model, sessions, rewind, themes…) and the permission question.

use crossterm::event::KeyEvent;

use pith_protocol::event::{Op, PermissionReply};

use crate::app::{App, PickerKind, Popup};
use crate::component::{Component, Handled};
use crate::permission_prompt::Answer;
use crate::transcript::NoticeLevel;

impl App {
    pub(crate) fn popup_key(&mut self, k: KeyEvent) {
        let Some(popup) = &mut self.popup else { return };
        match popup {
            Popup::Help(help) => {
                if help.on_key(k, &self.keymap) == Handled::Closed {
                    self.popup = None;
                }
            }
            Popup::Context(c) => {
                if c.on_key(k, &self.keymap) == Handled::Closed {
                    self.popup = None;
                }
            }
            Popup::Mcp(m) => {
                if m.on_key(k, &self.keymap) == Handled::Closed {
                    self.popup = None;
                }
            }
            Popup::Key(dialog) => match dialog.on_key(k, &self.keymap) {
                Handled::Closed => self.popup = None,
                Handled::Done(key) => self.store_key(&key),
                Handled::Consumed | Handled::Ignored => {}
            },
            Popup::Recall(v) => {
                if v.on_key(k, &self.keymap) == Handled::Closed {
                    self.popup = v.take_back().map(Popup::Picker);
                }
            }
            // delete stops the selected job, as enter does
            Popup::Picker(p)
                if *p.kind() == PickerKind::Jobs && k.code == crossterm::event::KeyCode::Delete =>
            {
                if let Some(id) = p.selected_item().map(|i| i.id.clone()) {
                    self.picked(PickerKind::Jobs, id);
                }
            }
            Popup::Picker(p) => match p.on_key(k, &self.keymap) {
                Handled::Consumed | Handled::Ignored => self.picker_moved(),
                Handled::Closed => {
                    self.popup = None;
                    self.picker_closed();
                    self.picker_moved();
                }
                Handled::Done(Some(id)) if *p.kind() == PickerKind::Left => {
                    let back = p.clone();
                    self.recall_item(id, back);
                }
                Handled::Done(chosen) => {
                    let kind = p.kind().clone();
                    self.popup = None;
                    match chosen {
                        Some(id) => self.picked(kind, id),
                        None => self.picker_closed(),
                    }
                }
            },
        }
    }

    /// The entry `id` of a `kind` picker was chosen.
    pub(crate) fn picked(&mut self, kind: PickerKind, id: String) {
        match kind {
            PickerKind::Model => self.set_model(id),
            PickerKind::Resource => self.attach_resource(&id),
            PickerKind::Rewind => self.send(Op::Rewind { message_id: id }),
            PickerKind::Theme => self.choose_theme(&id),
            PickerKind::Skills => self.skill_picked(&id),
            PickerKind::Left => {
                let back = left_view_list(self);
                self.recall_item(id, back);
            }
            PickerKind::Sessions => {
                if self.busy() {
                    self.transcript.notice(
                        NoticeLevel::Info,
                        "the session opens when the agent finishes this turn (esc interrupts it)",
                    );
                }
                self.send(Op::ResumeSession { id })
            }
            PickerKind::Memory => self.edit_memory(id),
            PickerKind::Remember(text) => self.remember_in(&text, &id),
            PickerKind::Jobs => self.stop_job(&id),
        }
    }

    pub(crate) fn permission_key(&mut self, k: KeyEvent) {
        match self.permissions.on_key(k, &self.keymap) {
            Handled::Done(Answer::Reply(reply, note)) => self.answer_permission(reply, note),
            Handled::Done(Answer::Stop) => self.stop_at_question(),
            _ => {}
        }
    }

    /// Esc or Ctrl+C at a question: every question waiting is denied and the turn ends (the
    /// engine stops it before any further request; the transcript says "interrupted"). `n`
    /// is the way to deny and let the model go on.
    pub(crate) fn stop_at_question(&mut self) {
        while let Some(req) = self.permissions.take_front() {
            self.transcript.permission(req, PermissionReply::Deny, None);
        }
        self.permissions.close_all();
        self.send(Op::Interrupt);
    }

    pub(crate) fn answer_permission(&mut self, reply: PermissionReply, note: Option<String>) {
        // the next question (if any) was already waiting: it appears now
        let Some(req) = self.permissions.take_front() else {
            return;
        };
        let reply = if crate::view::plan_box::is_plan(&req) {
            crate::view::plan_box::engine_reply(reply)
        } else {
            reply
        };
        self.send(Op::PermissionReply {
            id: req.id.clone(),
            reply,
            message: note.clone(),
        });
        self.transcript.permission(req, reply, note);
    }
}

/// The list of what left the view, to go back to from an item opened without it.
fn left_view_list(app: &App) -> crate::picker::Picker {
    crate::left_view::list(&app.transcript)
        .unwrap_or_else(|_| crate::picker::Picker::new(PickerKind::Left, Vec::new(), 0))
}
