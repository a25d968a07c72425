//! System prompt assembly (ARCHITECTURE.md §4.3): a stable header (the agent prompt) and the rest
//! (environment and instruction files), kept apart so provider prompt caches hit.

use std::path::{Path, PathBuf};

pub const AGENT_PROMPT: &str = include_str!("../../../prompts/system.md");
/// The agent prompt for small windows, where the full one would take a large share.
pub const COMPACT_AGENT_PROMPT: &str = include_str!("../../../prompts/system-compact.md");
pub const MAX_STEPS_PROMPT: &str = include_str!("../../../prompts/max-steps.md");

/// An instruction file larger than this is cut (it would crowd out the conversation).
const MAX_INSTRUCTION_BYTES: usize = 64 * 1024;

/// The nearest directory at or above `dir` that holds `.git`.
pub fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The `<env>` block.
pub fn env_block(workspace: &Path, today: &str) -> String {
    let root = git_root(workspace);
    format!(
        "<env>\nWorking directory: {}\nWorkspace root: {}\nIs directory a git repo: {}\nPlatform: {}\nToday's date: {}\n</env>",
        workspace.display(),
        root.as_deref().unwrap_or(workspace).display(),
        if root.is_some() { "yes" } else { "no" },
        std::env::consts::OS,
        today,
    )
}

pub use super::instructions::{
    Fences, Instruction, Sources, UserDirs, all_instruction_files, instruction_files,
};

/// How much room the system prompt may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// Use the short agent prompt (a small window).
    pub compact: bool,
    /// Instruction files are cut to this many bytes in all.
    pub instruction_bytes: usize,
}

impl Fit {
    /// The full prompt, for a window large enough for it.
    pub const FULL: Fit = Fit {
        compact: false,
        instruction_bytes: MAX_INSTRUCTION_BYTES,
    };
}

/// The system prompt as blocks: `[agent prompt, env + instructions]`; instruction files are
/// found and read within `fences` (`instructions`).
pub fn system_prompt(
    workspace: &Path,
    extra: &[PathBuf],
    today: &str,
    fit: Fit,
    fences: &Fences,
) -> Vec<String> {
    let sources = Sources {
        extra,
        ..Sources::default()
    };
    system_prompt_from(workspace, &sources, today, fit, fences)
}

/// The instruction files of the system prompt, each with the text it adds (its heading
/// included), within `fit`'s bytes in all: what `/context` counts file by file.
pub fn instruction_sections(
    workspace: &Path,
    sources: &Sources<'_>,
    fit: Fit,
    fences: &Fences,
) -> Vec<(Instruction, String)> {
    let mut left = fit.instruction_bytes.min(MAX_INSTRUCTION_BYTES);
    let mut out = Vec::new();
    for file in all_instruction_files(workspace, sources, fences) {
        let path = &file.path;
        match super::instructions::read(&file, MAX_INSTRUCTION_BYTES) {
            Ok(bytes) => {
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if text.len() > left {
                    let mut cut = left;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    text.push_str("\n[… instructions truncated]");
                }
                left = left.saturating_sub(text.len());
                let section = format!(
                    "\n\nInstructions from {}:\n{}",
                    path.display(),
                    text.trim_end()
                );
                out.push((file, section));
            }
            Err(e) => tracing::warn!("cannot read instruction file {}: {e}", path.display()),
        }
    }
    out
}

/// [`system_prompt`] with every source of instruction files: the user's, the workspace's, the
/// configured ones and the nested ones loaded so far.
pub fn system_prompt_from(
    workspace: &Path,
    sources: &Sources<'_>,
    today: &str,
    fit: Fit,
    fences: &Fences,
) -> Vec<String> {
    let mut rest = env_block(workspace, today);
    for (_, section) in instruction_sections(workspace, sources, fit, fences) {
        rest.push_str(&section);
    }
    let agent = if fit.compact {
        COMPACT_AGENT_PROMPT
    } else {
        AGENT_PROMPT
    };
    vec![agent.trim_end().to_string(), rest]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_nearest_last_and_extra_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ws = root.join("a/b");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(root.join("a/AGENTS.md"), "outer rule").unwrap();
        std::fs::write(ws.join("CLAUDE.md"), "inner rule").unwrap();
        std::fs::write(ws.join("extra.md"), "extra rule").unwrap();
        let blocks = system_prompt(
            &ws,
            &[PathBuf::from("extra.md")],
            "2026-01-02",
            Fit::FULL,
            &Fences::default(),
        );
        assert_eq!(blocks.len(), 2);
        assert!(blocks[0].starts_with("You are pith"));
        let rest = &blocks[1];
        assert!(rest.contains("Today's date: 2026-01-02"));
        let outer = rest.find("outer rule").unwrap();
        let inner = rest.find("inner rule").unwrap();
        let extra = rest.find("extra rule").unwrap();
        assert!(outer < inner && inner < extra, "{rest}");
    }

    #[test]
    fn env_block_reports_git_repo() {
        let dir = tempfile::tempdir().unwrap();
        assert!(env_block(dir.path(), "d").contains("git repo: no"));
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert!(env_block(dir.path(), "d").contains("git repo: yes"));
    }

    #[test]
    fn a_small_window_gets_the_short_prompt_and_cut_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("w");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("AGENTS.md"), "rule ".repeat(2_000)).unwrap();
        let full = system_prompt(&ws, &[], "2026-01-02", Fit::FULL, &Fences::default());
        let small = system_prompt(
            &ws,
            &[],
            "2026-01-02",
            Fit {
                compact: true,
                instruction_bytes: 1_000,
            },
            &Fences::default(),
        );
        assert!(small[0].len() * 3 < full[0].len(), "{}", small[0]);
        assert!(small[0].starts_with("You are pith"));
        assert!(small[1].contains("[… instructions truncated]"));
        assert!(small[1].len() < 1_400, "{}", small[1].len());
        assert!(!full[1].contains("truncated"));
    }
}
