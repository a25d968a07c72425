//! Loading a subfolder's instruction files when a tool first touches a path under it
//! (ARCHITECTURE.md §4.3, `instructions/nested.rs` finds them). They join the system prompt's
//! instruction files from the next request on — so no compaction or prune ever drops them and
//! the summariser sees them — and each is announced (`ContextEvent::InstructionsLoaded`).

use std::path::PathBuf;

use serde_json::Value;

use crate::instructions::{Instruction, Sources, all_instruction_files, nested_for};
use crate::prompt::{self, Fit};
use crate::turn_context::Turn;
use pith_protocol::event::{ContextEvent, InstructionFile};
use pith_protocol::tool::{ToolInput, ToolName};

impl Turn<'_> {
    /// The nested instruction files loaded so far.
    pub(crate) fn nested_instructions(&self) -> Vec<Instruction> {
        self.shared
            .nested_instructions
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
    }

    /// Forgets the nested files (a new or resumed session).
    pub(crate) fn forget_nested_instructions(&self) {
        if let Ok(mut n) = self.shared.nested_instructions.lock() {
            n.clear();
        }
    }

    /// Where instruction files come from now.
    pub(crate) fn instruction_sources<'a>(&'a self, nested: &'a [Instruction]) -> Sources<'a> {
        Sources {
            extra: &self.opts.config.instructions,
            user: Some(&self.opts.user_dirs),
            nested,
        }
    }

    /// After a call of `tool` with `input` ran: the folder it touched (`read`, `edit`, `write`:
    /// the file's; `list`, `grep`, `glob`: the one searched), when inside the workspace, has its
    /// unloaded instruction files loaded.
    pub(crate) fn load_nested_instructions(&mut self, tool: &str, input: &Value) {
        let name = ToolName::parse(tool);
        let raw = match ToolInput::of(&name, input) {
            ToolInput::Search { path, .. } => path,
            other => other.path(),
        };
        let Some(raw) = raw.filter(|r| !r.trim().is_empty()) else {
            return;
        };
        let ws = self.opts.workspace.clone();
        let touched: PathBuf = pith_tools::path::resolve(&ws, raw).path;
        if !touched.starts_with(&ws) {
            return;
        }
        let fences = prompt::Fences::from_env(&ws, &self.opts.data_dir);
        let nested = self.nested_instructions();
        let known = all_instruction_files(&ws, &self.instruction_sources(&nested), &fences);
        let new = nested_for(&ws, &touched, &known, &fences);
        if new.is_empty() {
            return;
        }
        if let Ok(mut n) = self.shared.nested_instructions.lock() {
            n.extend(new.iter().cloned());
        }
        self.fit_prompt();
        self.reset_estimate();
        let nested = self.nested_instructions();
        let sections = prompt::instruction_sections(
            &ws,
            &self.instruction_sources(&nested),
            Fit::FULL,
            &fences,
        );
        for file in new {
            let tokens = sections
                .iter()
                .find(|(f, _)| f.real == file.real)
                .map_or(0, |(_, s)| self.meter.text(s));
            let file = InstructionFile {
                path: shown(&ws, &file),
                origin: file.origin,
                tokens,
            };
            self.emit(ContextEvent::InstructionsLoaded { file });
        }
        self.emit_context();
    }

    /// What the instruction files are now: their paths, sizes and modification times, hashed;
    /// and those not named `AGENTS.md`/`CLAUDE.md` (imports, configured files).
    fn instructions_now(&self) -> (u64, Vec<PathBuf>) {
        use std::hash::{Hash, Hasher};
        let ws = &self.opts.workspace;
        let fences = prompt::Fences::from_env(ws, &self.opts.data_dir);
        let nested = self.nested_instructions();
        let files = all_instruction_files(ws, &self.instruction_sources(&nested), &fences);
        let others = files
            .iter()
            .filter(|f| {
                let name = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                !matches!(name, "AGENTS.md" | "CLAUDE.md" | "CLAUDE.local.md")
            })
            .flat_map(|f| [f.path.clone(), f.real.clone()])
            .collect();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for f in files {
            f.real.hash(&mut h);
            if let Ok(m) = std::fs::metadata(&f.real) {
                m.len().hash(&mut h);
                m.modified().ok().hash(&mut h);
            }
        }
        (h.finish(), others)
    }

    /// The hash of [`instructions_now`](Self::instructions_now).
    pub(crate) fn instructions_stamp(&self) -> u64 {
        self.instructions_now().0
    }

    /// The instruction files under other names, protected like `AGENTS.md` (`policy`).
    pub(crate) fn imported_instructions(&self) -> Vec<PathBuf> {
        self.shared
            .imported_instructions
            .lock()
            .map(|i| i.clone())
            .unwrap_or_default()
    }

    /// Rebuilds the system prompt when an instruction file was added, removed or edited since
    /// it was built (the user edited a memory file in `/memory`, `/init` wrote `AGENTS.md`).
    pub(crate) fn refresh_instructions(&mut self) {
        let now = self.instructions_stamp();
        let before = self.shared.instructions_stamp.lock().map(|s| *s).ok();
        if before != Some(now) {
            self.fit_prompt();
            self.reset_estimate();
        }
    }

    /// Remembers what the instruction files are as the system prompt is built from them.
    pub(crate) fn stamp_instructions(&self) {
        let (now, others) = self.instructions_now();
        if let Ok(mut s) = self.shared.instructions_stamp.lock() {
            *s = now;
        }
        if let Ok(mut i) = self.shared.imported_instructions.lock() {
            *i = others;
        }
    }

    /// The instruction files of the system prompt, each with its cost (`/context`).
    pub(crate) fn instruction_costs(&mut self) -> Vec<InstructionFile> {
        let ws = self.opts.workspace.clone();
        let fences = prompt::Fences::from_env(&ws, &self.opts.data_dir);
        let nested = self.nested_instructions();
        let sections = prompt::instruction_sections(
            &ws,
            &self.instruction_sources(&nested),
            Fit::FULL,
            &fences,
        );
        sections
            .into_iter()
            .map(|(file, section)| InstructionFile {
                path: shown(&ws, &file),
                origin: file.origin,
                tokens: self.meter.text(&section),
            })
            .collect()
    }
}

/// A file's path as shown: relative to the workspace when inside it.
fn shown(workspace: &std::path::Path, file: &Instruction) -> String {
    file.path
        .strip_prefix(workspace)
        .unwrap_or(&file.path)
        .display()
        .to_string()
}
