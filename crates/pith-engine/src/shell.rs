//! `!command`: a command the user runs in the shell. It goes through the bash tool — its
//! permission rules (a deny holds; typing the command is the user's consent to what would be
//! asked), its sandbox and its truncation — streams its output like the agent's commands, and
//! joins the context as a tool part of a user message, read by the model as the user's own.

use serde_json::json;

use crate::turn_context::Turn;
use pith_protocol::event::{EngineState, OutputEvent, TurnEnd, TurnEvent};
use pith_protocol::message::{Message, PartKind, Role, ToolState, new_id, now_ms};
use pith_tools::ToolContext;
use pith_tools::permission::Decision;

impl Turn<'_> {
    pub(crate) async fn shell(&mut self, id: String, command: String) {
        // a mode change sent before the command applies to it
        self.apply_settings();
        let cancel = self.shared.fresh_cancel();
        let before = self.snapshot_before_turn().await;
        let call_id = format!("shell_{}", new_id());
        let input = json!({ "command": command });
        let start = now_ms();
        let idx = self.start_shell(id, &command, &call_id, &input, start);
        let message_id = self.log.view()[idx].id.clone();
        let ctx = ToolContext {
            workspace: self.opts.workspace.clone(),
            data_dir: self.opts.data_dir.clone(),
            session_id: self.log.session().id.clone(),
            call_id: call_id.clone(),
            cancel: cancel.child_token(),
            state: self.tools.state().clone(),
            output: self.tool_output(),
            outputs: None,
            progress: Some(self.progress_for(&call_id)),
            editor: self.opts.editor.clone(),
            policy: self.policy(),
            // plan mode: the workspace is read-only for the user's command too (leaving plan
            // mode is how the user writes)
            read_only_commands: self.opts.config.permission_mode
                == pith_protocol::event::PermissionMode::Plan,
        };
        let state = match self.tools.check("bash", &input, &ctx) {
            Decision::Deny { message } => ToolState::Error {
                message,
                start: Some(start),
                end: Some(now_ms()),
            },
            Decision::Allow | Decision::Ask(_) => {
                let result = self.tools.registry().execute("bash", input, &ctx).await;
                super::tool_exec::finished(result, start, now_ms())
            }
        };
        self.finish_shell(idx, call_id, state, start);
        self.touch_session();
        self.record_turn(&message_id, before).await;
        self.emit_context();
        let reason = if cancel.is_cancelled() {
            TurnEnd::Interrupted
        } else {
            TurnEnd::Stop
        };
        self.emit(TurnEvent::TurnFinished { reason });
        self.state(EngineState::Idle, None);
    }

    /// Adds the user message with the command's running tool part and announces it; its index
    /// in the view.
    fn start_shell(
        &mut self,
        id: String,
        command: &str,
        call_id: &str,
        input: &serde_json::Value,
        start: i64,
    ) -> usize {
        let mut m = Message::new(self.log.session_id(), Role::User);
        m.submission_id = Some(id);
        m.push(PartKind::Tool {
            call_id: call_id.to_string(),
            tool: "bash".into(),
            input: input.clone(),
            state: ToolState::Running { start, title: None },
        });
        self.log
            .title_if_untitled(|| super::session_log::title_from(&format!("!{command}")));
        let idx = self.push_message(m);
        self.emit(OutputEvent::ToolStarted {
            call_id: call_id.to_string(),
            tool: "bash".into(),
            input: input.clone(),
        });
        self.state(EngineState::Running, Some("bash".into()));
        idx
    }

    /// The command ended in `state`: its part is saved and announced, and counted in the
    /// context.
    fn finish_shell(&mut self, idx: usize, call_id: String, state: ToolState, start: i64) {
        let (error, duration_ms) = match &state {
            ToolState::Error { message, .. } => (Some(message.clone()), (now_ms() - start) as u64),
            _ => (None, (now_ms() - start).max(0) as u64),
        };
        let part = self.log.update_part(idx, 0, |p| {
            if let PartKind::Tool { state: s, .. } = &mut p.kind {
                *s = state;
            }
        });
        self.emit(OutputEvent::ToolFinished {
            call_id,
            tool: "bash".into(),
            title: String::new(),
            error,
            duration_ms,
        });
        self.meter.add_part(&part);
    }
}
