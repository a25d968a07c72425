//! The runner's session operations: switching to another stored session (in its directory),
//! and `/export`.

use crate::error::{EngineError, with_causes};
use crate::model::ModelSetup;
use crate::turn_context::Turn;
use pith_protocol::event::{Event, SessionEvent};
use pith_protocol::message::Session;
use pith_store::PAGE_MESSAGES;
use pith_store::lock::SessionLock;

impl Turn<'_> {
    /// Loads the view from the store: only the messages from the session's compaction point on,
    /// reordered so that the compaction message and its summary come before the verbatim tail.
    /// What a crash left in them is repaired first (this engine holds the session's lock).
    pub(crate) fn load_view(&mut self) -> Result<(), EngineError> {
        self.compactor.drop_background();
        let (loaded, repairs) = self
            .log
            .store()
            .open_view(
                self.log.session_id(),
                self.log.session().compaction_point.as_deref(),
            )
            .map_err(EngineError::Store)?;
        if repairs.steps + repairs.tools > 0 {
            self.emit(Event::info("the last session ended before a step finished (pith was stopped); what was cut off is marked interrupted"));
        }
        self.log.set_view(pith_context::view::model_order(loaded));
        self.restore_todos();
        self.load_figure();
        Ok(())
    }

    /// The todo list as the session left it: the last list `todowrite` set in the view, else
    /// the one the latest compaction carried — so a resumed session's next compaction (and its
    /// frontier) carries it too, not only the turn that wrote it.
    fn restore_todos(&mut self) {
        let todos = stored_todos(self.log.view());
        if let Ok(mut t) = self.tools.state().todos.lock() {
            *t = todos;
        }
    }

    pub(crate) fn switch_session(&mut self, session: Session) {
        let lock = match SessionLock::acquire(&self.opts.data_dir, &session.id) {
            Ok(lock) => lock,
            Err(e) => return self.report(e.into()),
        };
        self.touch_session();
        self.log.switch(session, lock);
        // a subfolder's instructions were the session left behind's
        if !self.nested_instructions().is_empty() {
            self.forget_nested_instructions();
            self.fit_prompt();
        }
        self.apply_pins();
        self.announce_goal();
        self.enter_session_directory();
        self.tools.start_session(&self.opts.config);
        // what hooks said for the session left behind is not the new one's
        self.hooks.clear_context();
        self.compactor.forget_last_cost();
        // The correction ratio is per session: the new one learns its own from its reports.
        self.meter.use_model(&self.model.model_id);
        if self.log.session().model != self.model.name {
            match ModelSetup::build(&self.opts.config, &self.log.session().model) {
                Ok((setup, _)) => {
                    self.meter.use_model(&setup.model_id);
                    *self.model = setup;
                }
                Err(e) => {
                    self.emit(Event::info(format!(
                        "model {} of that session is not available ({}); using {}",
                        self.log.session().model,
                        with_causes(&e),
                        self.model.name
                    )));
                    self.log.set_model(self.model.name.clone());
                }
            }
        }
        self.meter.forget_figure();
        self.reset_mcp();
        if let Err(e) = self.load_view() {
            self.report(EngineError::LoadSession(Box::new(e)));
        }
        self.announce_session();
    }

    /// Tells the front end the session it is on: the session, the newest page of its stored
    /// history, and its context figure.
    pub(crate) fn announce_session(&mut self) {
        let page = self
            .log
            .store()
            .load_page(self.log.session_id(), None, PAGE_MESSAGES)
            .unwrap_or_default();
        self.emit(SessionEvent::SessionLoaded {
            session: self.log.session().clone(),
            messages: page.messages,
            more_history: page.more,
        });
        if self.role.depth == 0 {
            // the front end forgets the notice with the session it showed
            self.compactor.set_notice(None);
            self.update_compaction_notice();
        }
        self.emit_context();
    }

    /// A session resumed from another directory runs there: its tools, its instructions. A
    /// directory that is gone leaves the session here, and says so.
    fn enter_session_directory(&mut self) {
        let dir = std::path::PathBuf::from(&self.log.session().directory);
        let canonical = dir.canonicalize().ok().filter(|d| d.is_dir());
        match canonical {
            Some(d) if d == self.opts.workspace => {}
            Some(d) => {
                tracing::info!(dir = %d.display(), "resumed session: working in its directory");
                self.opts.workspace = d;
                self.fit_prompt();
            }
            None if self.log.session().directory.is_empty() => {}
            None => {
                self.emit(Event::info(format!(
                    "the session's directory {} is gone; it continues in {}",
                    self.log.session().directory,
                    self.opts.workspace.display()
                )));
                let dir = self.opts.workspace.to_string_lossy().into_owned();
                self.log.set_directory(dir);
            }
        }
    }

    pub(crate) fn export(&self, path: Option<String>) {
        let messages = match self.log.store().load_all(self.log.session_id()) {
            Ok(m) => m,
            Err(e) => return self.report(EngineError::ReadExport(e)),
        };
        let path = export_path(
            path.as_deref(),
            &self.opts.workspace,
            &self.opts.data_dir,
            self.log.session_id(),
        );
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return self.report(EngineError::CreateExportDir {
                dir: dir.display().to_string(),
                source: e,
            });
        }
        let text = if path.extension().is_some_and(|e| e == "json") {
            serde_json::to_string_pretty(&pith_store::export::export_json(
                self.log.session(),
                &messages,
            ))
            .unwrap_or_default()
        } else {
            pith_store::export::export_markdown(self.log.session(), &messages)
        };
        match std::fs::write(&path, text) {
            Ok(()) => self.emit(Event::info(format!("exported to {}", path.display()))),
            Err(e) => self.report(EngineError::WriteExport {
                path: path.display().to_string(),
                source: e,
            }),
        }
    }
}

/// Where `/export [path]` writes: `~/…` is the home directory, a relative path is relative to the
/// workspace, and with no path the export goes to `<data_dir>/exports/` (never into the
/// repository unasked).
pub(crate) fn export_path(
    path: Option<&str>,
    workspace: &std::path::Path,
    data_dir: &std::path::Path,
    session_id: &str,
) -> std::path::PathBuf {
    match path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => pith_tools::path::resolve(workspace, p).path,
        None => data_dir
            .join("exports")
            .join(format!("pith-session-{session_id}.md")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_paths() {
        let ws = std::path::Path::new("/nonexistent-ws");
        let data = std::path::Path::new("/nonexistent-data");
        assert_eq!(
            export_path(None, ws, data, "S1"),
            data.join("exports/pith-session-S1.md")
        );
        assert_eq!(
            export_path(Some("out/x.md"), ws, data, "S1"),
            ws.join("out/x.md")
        );
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let home = std::path::PathBuf::from(home);
            let got = export_path(Some("~/x.md"), ws, data, "S1");
            assert!(got.ends_with("x.md") && !got.starts_with(ws), "{got:?}");
            assert!(
                got.starts_with(home.canonicalize().unwrap_or(home.clone()))
                    || got.starts_with(&home),
                "{got:?}"
            );
        }
    }
}

/// The last todo list of `view` (model order): the newest completed `todowrite` call's, else
/// what the compaction at its head carried; empty when there is none.
fn stored_todos(view: &[pith_protocol::message::Message]) -> Vec<pith_protocol::tool::Todo> {
    use pith_protocol::message::{PartKind, ToolState};
    use pith_protocol::tool::{Builtin, Todo, ToolInput, ToolName};
    for m in view.iter().rev() {
        for p in m.parts.iter().rev() {
            let PartKind::Tool {
                tool, input, state, ..
            } = &p.kind
            else {
                continue;
            };
            let name = ToolName::parse(tool);
            if name != ToolName::Builtin(Builtin::TodoWrite)
                || !matches!(state, ToolState::Completed { .. })
            {
                continue;
            }
            if let ToolInput::Todos { todos: Some(items) } = ToolInput::of(&name, input) {
                return items.iter().map(Todo::read).collect();
            }
        }
    }
    view.first()
        .and_then(|m| m.compaction())
        .and_then(|c| c.carried.todos.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod todo_tests {
    use super::stored_todos;
    use pith_protocol::message::{Message, PartKind, Role, ToolState, ToolTime};
    use pith_protocol::tool::TodoStatus;
    use serde_json::json;

    fn todowrite(status: &str) -> Message {
        let mut m = Message::new("ses", Role::Assistant);
        m.push(PartKind::Tool {
            call_id: "c".into(),
            tool: "todowrite".into(),
            input: json!({"todos": [{"content": "ship it", "status": status}]}),
            state: ToolState::Completed {
                title: "1 todo".into(),
                output: "1 todo".into(),
                metadata: json!({}),
                time: ToolTime {
                    start: 1,
                    end: 2,
                    compacted: None,
                },
            },
        });
        m
    }

    /// A resumed session has the todo list its last `todowrite` set.
    #[test]
    fn the_last_todo_list_of_the_view_is_restored() {
        let view = [todowrite("pending"), todowrite("completed")];
        let todos = stored_todos(&view);
        assert_eq!(todos.len(), 1);
        assert_eq!(todos[0].content, "ship it");
        assert_eq!(todos[0].status, TodoStatus::Completed);
        assert!(stored_todos(&[]).is_empty());
    }
}
