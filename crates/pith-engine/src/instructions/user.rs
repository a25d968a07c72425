//! The user's own instruction files, for every workspace (ARCHITECTURE.md §4.3): Claude Code's
//! `~/.claude/CLAUDE.md`, Codex's `~/.codex/AGENTS.md` when present, and pith's own
//! `~/.config/pith/AGENTS.md` (the user's memory, `/memory`), in that order, so pith's has the
//! final word among them. A file reached through a link is read only when the link stays in
//! `$HOME` and leads into no hidden path.

use std::path::{Path, PathBuf};

use pith_protocol::event::InstructionOrigin;

use super::{Fences, Instruction, judge};

/// The user's folders the global instruction files live in (`None`: not looked for).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserDirs {
    /// pith's config folder (`~/.config/pith`): its `AGENTS.md` is the user's memory file.
    pub config_dir: Option<PathBuf>,
    /// Claude Code's (`$CLAUDE_CONFIG_DIR`, else `~/.claude`): its `CLAUDE.md`.
    pub claude_dir: Option<PathBuf>,
    /// Codex's (`$CODEX_HOME`, else `~/.codex`): its `AGENTS.md`.
    pub codex_dir: Option<PathBuf>,
}

impl UserDirs {
    /// This machine's.
    pub fn from_env() -> UserDirs {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        UserDirs {
            config_dir: pith_tools::sandbox::paths::StatePaths::from_env(Vec::new()).config_dir,
            claude_dir: var("CLAUDE_CONFIG_DIR")
                .or_else(|| home.as_ref().map(|h| h.join(".claude"))),
            codex_dir: var("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
        }
    }

    /// The folders as they are under `home` (`.config/pith`, `.claude`, `.codex`): tests.
    pub fn in_home(home: &Path) -> UserDirs {
        UserDirs {
            config_dir: Some(home.join(".config/pith")),
            claude_dir: Some(home.join(".claude")),
            codex_dir: Some(home.join(".codex")),
        }
    }

    /// The user's memory file: `AGENTS.md` in pith's config folder.
    pub fn memory_file(&self) -> Option<PathBuf> {
        self.config_dir.as_ref().map(|d| d.join("AGENTS.md"))
    }

    /// The global instruction files that exist, most general first, each once.
    pub(crate) fn files(&self, fences: &Fences) -> Vec<Instruction> {
        let candidates = [
            self.claude_dir.as_ref().map(|d| d.join("CLAUDE.md")),
            self.codex_dir.as_ref().map(|d| d.join("AGENTS.md")),
            self.memory_file(),
        ];
        let mut found: Vec<Instruction> = Vec::new();
        for path in candidates.into_iter().flatten() {
            let Some(dir) = path.parent() else { continue };
            let fence = fences.home.as_deref().unwrap_or(dir).to_path_buf();
            if let Some(real) = judge(&path, &fence, fences)
                && !found.iter().any(|f| f.is(&real))
            {
                found.push(Instruction {
                    path,
                    real,
                    origin: InstructionOrigin::User,
                    fence,
                });
            }
        }
        found
    }
}
