//! `/memory`, `/remember` and `#TEXT` (README "Instructions and memory"): the memory files
//! listed in a picker, the chosen one opened in `$VISUAL` / `$EDITOR`; a line to remember put
//! to the user's choice of file in a small picker, then written by the engine.

use std::path::Path;

use pith_protocol::event::{MemoryFile, MemoryScope, Op};

use crate::app::{App, PickItem, Picker, PickerKind, Popup};
use crate::transcript::NoticeLevel;

/// What each scope's file is, for the choice.
fn scope_detail(scope: MemoryScope) -> &'static str {
    match scope {
        MemoryScope::Project => "the workspace's AGENTS.md (CLAUDE.md if only that exists)",
        MemoryScope::User => "your own ~/.config/pith/AGENTS.md, for every project",
    }
}

impl App {
    /// `/memory`: the files, once the engine lists them.
    pub(crate) fn memory_command(&mut self) {
        self.popup = Some(Popup::Picker(Picker::loading(PickerKind::Memory)));
        self.send(Op::ListMemory);
    }

    /// The engine's list of memory files: it fills the `/memory` picker.
    pub(crate) fn memory_listed(&mut self, files: Vec<MemoryFile>) {
        let items: Vec<PickItem> = files
            .into_iter()
            .map(|f| PickItem {
                detail: if f.exists {
                    format!(
                        "{} · {} tokens in every request",
                        f.scope.as_str(),
                        pith_protocol::text::count(f.tokens)
                    )
                } else {
                    format!("{} · missing · enter creates it", f.scope.as_str())
                },
                label: f.path.clone(),
                id: f.path,
            })
            .collect();
        match &mut self.popup {
            Some(Popup::Picker(p)) if *p.kind() == PickerKind::Memory => p.fill(items),
            _ => {
                for it in items {
                    self.transcript
                        .notice(NoticeLevel::Info, format!("{} ({})", it.label, it.detail));
                }
            }
        }
    }

    /// A memory file was chosen: the editor opens it.
    pub(crate) fn edit_memory(&mut self, path: String) {
        self.effects
            .push(crate::effects::Effect::EditFile(path.into()));
    }

    /// The editor closed on a memory file.
    pub(crate) fn file_edited(&mut self, path: &Path, result: Result<(), impl std::fmt::Display>) {
        match result {
            Ok(()) => self.transcript.notice(
                NoticeLevel::Info,
                format!("edited {} · the next request carries it", path.display()),
            ),
            Err(e) => self.transcript.notice(NoticeLevel::Error, e.to_string()),
        }
        self.dirty = true;
    }

    /// `/remember [--user | --project] TEXT`: straight to the file named, else the choice.
    pub(crate) fn remember_command(&mut self, args: &str) {
        let (scope, text) = pith_commands::memory::remember_args(args);
        if text.is_empty() {
            return self.transcript.notice(
                NoticeLevel::Error,
                "/remember TEXT adds a line to a memory file (or type #TEXT)",
            );
        }
        match scope {
            Some(scope) => self.send(Op::Remember {
                text: text.to_string(),
                scope,
            }),
            None => self.ask_memory_file(text.to_string()),
        }
    }

    /// Asks which memory file `text` goes to.
    pub(crate) fn ask_memory_file(&mut self, text: String) {
        let items = [MemoryScope::Project, MemoryScope::User]
            .into_iter()
            .map(|s| PickItem {
                id: s.as_str().to_string(),
                label: format!("{} memory", s.as_str()),
                detail: scope_detail(s).to_string(),
            })
            .collect();
        self.popup = Some(Popup::Picker(Picker::new(
            PickerKind::Remember(text),
            items,
            0,
        )));
    }

    /// The file was chosen: the engine adds the line.
    pub(crate) fn remember_in(&mut self, text: &str, scope: &str) {
        if let Some(scope) = MemoryScope::named(scope) {
            self.send(Op::Remember {
                text: text.to_string(),
                scope,
            });
        }
    }
}
