//! An MCP server's form (`elicit_form.rs`): asked by the engine, answered with
//! `Op::ElicitationReply`; the transcript says what was done with it (never the values).

use crossterm::event::KeyEvent;

use pith_protocol::elicitation::{Answers, ElicitationAction, ElicitationRequest};
use pith_protocol::event::Op;

use crate::app::App;
use crate::component::{Component, Handled};
use crate::effects::Effect;
use crate::transcript::NoticeLevel;

impl App {
    pub(crate) fn form_asked(&mut self, request: ElicitationRequest) {
        if let Some(bytes) = self
            .notifier
            .waiting(&format!("MCP server {} asks you something", request.server))
        {
            self.effects.push(Effect::Write(bytes));
        }
        self.forms.ask(request);
    }

    pub(crate) fn form_key(&mut self, k: KeyEvent) {
        if let Handled::Done((action, content)) = self.forms.on_key(k, &self.keymap) {
            self.answer_form(action, content);
        }
    }

    /// Answers the form on screen; the next one (if any) appears.
    pub(crate) fn answer_form(&mut self, action: ElicitationAction, content: Option<Answers>) {
        let Some(form) = self.forms.take_front() else {
            return;
        };
        let server = &form.request.server;
        let said = match action {
            ElicitationAction::Accept => format!(
                "answered MCP server {server}'s question ({} field{})",
                content.as_ref().map_or(0, |c| c.len()),
                if content.as_ref().is_some_and(|c| c.len() == 1) {
                    ""
                } else {
                    "s"
                }
            ),
            ElicitationAction::Decline => format!("declined MCP server {server}'s question"),
            ElicitationAction::Cancel => format!("cancelled MCP server {server}'s question"),
        };
        self.send(Op::ElicitationReply {
            id: form.request.id.clone(),
            action,
            content,
        });
        self.transcript.notice(NoticeLevel::Info, said);
    }
}
