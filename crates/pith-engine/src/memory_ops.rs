//! The memory ops and tool (ARCHITECTURE.md §4.3, `memory.rs`): `/remember` and `#TEXT`
//! (`Op::Remember`, the user's own act: the front end asked which file), `/memory`
//! (`Op::ListMemory`), and the `remember` tool, with which the model only proposes: the user is
//! asked every time — under `--yes`, bypass and a hook's approval too — and a run with no one to
//! ask declines it.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::EngineError;
use crate::memory;
use crate::tool_exec::finished;
use crate::turn_context::Turn;
use pith_protocol::event::{
    EngineState, Event, MemoryFile, MemoryScope, PermissionReply, PermissionRequest, SessionEvent,
    TurnEvent,
};
use pith_protocol::message::{ToolState, new_id, now_ms};
use pith_tools::{ToolError, ToolOutput};

impl Turn<'_> {
    /// The memory file of `scope`, or why there is none.
    fn memory_path(&self, scope: MemoryScope) -> Result<std::path::PathBuf, String> {
        memory::path(scope, &self.opts.workspace, &self.opts.user_dirs)
            .ok_or_else(|| "pith's config folder is unknown here (no $HOME)".to_string())
    }

    /// Adds `text` to the memory file of `scope`; `Ok`: the file written.
    fn write_memory(&mut self, text: &str, scope: MemoryScope) -> Result<String, String> {
        let line = memory::line(text)?;
        let path = self.memory_path(scope)?;
        memory::append(&path, &line)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        // the next request carries it
        self.fit_prompt();
        self.reset_estimate();
        Ok(path.display().to_string())
    }

    /// `/remember TEXT`, `#TEXT`.
    pub(crate) fn remember(&mut self, text: &str, scope: MemoryScope) {
        match self.write_memory(text, scope) {
            Ok(path) => {
                self.emit(Event::info(format!("remembered in {path}")));
                self.emit_context();
            }
            Err(why) => self.report(EngineError::Command(format!("not remembered: {why}"))),
        }
    }

    /// `/memory`: the memory files, existing or not, with their size and cost.
    pub(crate) fn list_memory(&mut self) {
        let mut files = Vec::new();
        for scope in MemoryScope::ALL {
            let Ok(path) = self.memory_path(scope) else {
                continue;
            };
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file());
            let tokens = meta
                .as_ref()
                .and_then(|_| std::fs::read_to_string(&path).ok())
                .map_or(0, |t| self.meter.text(&t));
            files.push(MemoryFile {
                scope,
                path: path.display().to_string(),
                exists: meta.is_some(),
                bytes: meta.map_or(0, |m| m.len()),
                tokens,
            });
        }
        self.emit(SessionEvent::MemoryFiles { files });
    }

    /// The `remember` tool: asks the user whether to add the model's line, and adds it on a yes.
    pub(crate) async fn remember_tool(
        &mut self,
        call_id: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> ToolState {
        let start = now_ms();
        let done = |text: String| {
            let output = ToolOutput {
                title: "remember".to_string(),
                output: text,
                metadata: Value::Null,
                meta: Default::default(),
            };
            finished(Ok(output), start, now_ms())
        };
        let fail = |e: String| finished(Err(ToolError::Failed(e)), start, now_ms());
        let text = input.get("text").and_then(Value::as_str).unwrap_or("");
        let scope = match input.get("scope").and_then(Value::as_str) {
            None => MemoryScope::Project,
            Some(s) => match MemoryScope::named(s) {
                Some(s) => s,
                None => return fail(format!("unknown scope {s:?}: use project or user")),
            },
        };
        let line = match memory::line(text) {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        let path = match self.memory_path(scope) {
            Ok(p) => p,
            Err(e) => return fail(e),
        };
        if self.opts.headless {
            return done(format!(
                "Not saved: no one can approve a memory in this run. If it matters, tell the user to add it with /remember {line}"
            ));
        }
        let request = PermissionRequest {
            id: new_id(),
            tool: pith_tools::remember::NAME.to_string(),
            call_id: call_id.to_string(),
            title: format!("Remember in {}: - {line}", path.display()),
            patterns: Vec::new(),
            agent: None,
        };
        let mut wait = self.shared.wait_permission(&request.id);
        self.notify_hooks("pith asks whether to remember something".to_string());
        self.emit(TurnEvent::PermissionAsked(request));
        self.state(EngineState::Running, Some("waiting for permission".into()));
        let answer = cancel.run_until_cancelled(wait.answer()).await.flatten();
        drop(wait);
        match answer {
            None => finished(Err(ToolError::Interrupted), start, now_ms()),
            Some((PermissionReply::Deny, note)) => done(match note {
                Some(n) if !n.trim().is_empty() => {
                    format!("The user declined to remember it: {}", n.trim())
                }
                _ => "The user declined to remember it. Do not propose it again.".into(),
            }),
            Some(_) => match self.write_memory(&line, scope) {
                Ok(path) => done(format!(
                    "Saved to {path}; it is in your instructions from the next request on."
                )),
                Err(e) => fail(e),
            },
        }
    }
}
