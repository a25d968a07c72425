//! Instruction files and memory: which files reach the system prompt (for `/context` and the
//! announcement of a nested one), and the memory files `/memory` lists and `/remember` writes.

use serde::{Deserialize, Serialize};

/// Where an instruction file comes from (ARCHITECTURE.md §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionOrigin {
    /// The user's own, for every workspace: `~/.config/pith/AGENTS.md`, `~/.claude/CLAUDE.md`,
    /// `~/.codex/AGENTS.md`.
    User,
    /// The workspace and the folders above it, and the configured `instructions`.
    Workspace,
    /// A subfolder's, loaded when a tool first touched a path under it.
    Nested,
}

/// One instruction file in the system prompt, with what it costs in every request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionFile {
    /// The path as found (relative to the workspace when inside it).
    pub path: String,
    pub origin: InstructionOrigin,
    pub tokens: u64,
}

/// Which memory file a line goes to (`/remember`, `#TEXT`, the `remember` tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// The user's, for every workspace: `~/.config/pith/AGENTS.md`.
    User,
    /// The project's: the workspace's `AGENTS.md` (its `CLAUDE.md` when only that exists).
    Project,
}

impl MemoryScope {
    pub const ALL: [MemoryScope; 2] = [MemoryScope::User, MemoryScope::Project];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::User => "user",
            MemoryScope::Project => "project",
        }
    }

    /// The scope named `name` (`user`, `project`).
    pub fn named(name: &str) -> Option<MemoryScope> {
        MemoryScope::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name))
    }
}

/// A memory file as `/memory` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryFile {
    pub scope: MemoryScope,
    /// Absolute.
    pub path: String,
    pub exists: bool,
    pub bytes: u64,
    /// What it costs in every request (0 when it does not exist).
    pub tokens: u64,
}
