//! Keys in a popup: pickers (model, sessions, rewind, themes…) and the permission question.

use crossterm::event::KeyEvent;
use ratatui_textarea::TextArea;

use crate::event::{Op, PermissionReply};

use super::app::{App, PickerKind, Popup};
use super::component::{Component, Handled};
use super::keymap::{Action, Context, key_of};
use super::transcript::NoticeLevel;

impl App {
    pub(super) fn popup_key(&mut self, k: KeyEvent) {
        let list = self.keymap.action(Context::List, key_of(&k));
        let Some(popup) = &mut self.popup else { return };
        match popup {
            Popup::Help(help) => {
                if help.on_key(k, list) == Handled::Closed {
                    self.popup = None;
                }
            }
            Popup::Context(_) | Popup::Mcp => self.popup = None,
            Popup::Key(_) => self.key_dialog_key(k.code, k.modifiers),
            Popup::Picker(p) => match p.on_key(k, list) {
                Handled::Consumed => self.picker_moved(),
                Handled::Closed => {
                    self.popup = None;
                    self.picker_closed();
                    self.picker_moved();
                }
                Handled::Done(chosen) => {
                    let kind = p.kind.clone();
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
    pub(super) fn picked(&mut self, kind: PickerKind, id: String) {
        match kind {
            PickerKind::Model => self.set_model(id),
            PickerKind::Resource => self.attach_resource(&id),
            PickerKind::Rewind => self.send(Op::Rewind { message_id: id }),
            PickerKind::Theme => self.choose_theme(&id),
            PickerKind::Sessions => {
                if self.busy() {
                    self.transcript.notice(
                        NoticeLevel::Info,
                        "the session opens when the agent finishes this turn (esc interrupts it)",
                    );
                }
                self.send(Op::ResumeSession { id })
            }
        }
    }

    pub(super) fn permission_key(&mut self, k: KeyEvent) {
        let action = self.keymap.action(Context::Permission, key_of(&k));
        match action {
            Some(Action::QuestionScrollUp) => return self.scroll_question(-1),
            Some(Action::QuestionScrollDown) => return self.scroll_question(1),
            _ => {}
        }
        if let Some(note) = &mut self.permissions.note {
            match action {
                Some(Action::OptionChoose) => {
                    let text = note.lines().join(" ").trim().to_string();
                    self.answer_permission(
                        PermissionReply::Deny,
                        (!text.is_empty()).then_some(text),
                    );
                }
                Some(Action::Deny) => self.permissions.note = None,
                _ => match self.keymap.action(Context::Chat, key_of(&k)) {
                    Some(a) if a.is_edit() => super::keymap::edit(note, a),
                    _ => {
                        if super::keymap::to_textarea(&k) {
                            note.input(k);
                        }
                    }
                },
            }
            return;
        }
        let unread = !self.permissions.seen_end;
        match action {
            Some(Action::OptionPrev) => {
                self.permissions.selected = (self.permissions.selected + 2) % 3
            }
            Some(Action::OptionNext) => {
                self.permissions.selected = (self.permissions.selected + 1) % 3
            }
            // allowing waits until the whole of what is allowed has been on screen
            Some(Action::AllowOnce) if unread => {}
            Some(Action::AllowAlways) if unread => {}
            Some(Action::AllowOnce) => self.answer_permission(PermissionReply::Once, None),
            Some(Action::AllowAlways) => self.answer_permission(PermissionReply::Always, None),
            Some(Action::DenyWithNote) => self.open_note(),
            Some(Action::Deny) => self.answer_permission(PermissionReply::Deny, None),
            Some(Action::OptionChoose) => match self.permissions.selected {
                0 | 1 if unread => {}
                0 => self.answer_permission(PermissionReply::Once, None),
                1 => self.answer_permission(PermissionReply::Always, None),
                _ => self.open_note(),
            },
            _ => {}
        }
    }

    pub(super) fn open_note(&mut self) {
        let mut ta = TextArea::default();
        ta.set_placeholder_text("why not? (optional, enter to send)");
        ta.set_cursor_line_style(ratatui::style::Style::default());
        self.permissions.selected = 2;
        self.permissions.note = Some(ta);
    }

    pub(super) fn answer_permission(&mut self, reply: PermissionReply, note: Option<String>) {
        let Some(req) = self.permissions.queue.pop_front() else {
            return;
        };
        self.send(Op::PermissionReply {
            id: req.id.clone(),
            reply,
            message: note.clone(),
        });
        self.transcript.permission(req, reply, note);
        // the next question (if any) was already waiting: it appears now
        self.permissions.front_changed();
    }

    /// Scrolls the question's text by `pages` of what the box shows (up when negative).
    pub(super) fn scroll_question(&mut self, pages: isize) {
        let page = self.permissions.page.saturating_sub(1).max(1) as isize;
        self.permissions.scroll_by(pages * page);
    }
}
