//! The instruction files of the workspace's subfolders (ARCHITECTURE.md §4.3): an `AGENTS.md`
//! or `CLAUDE.md` below the workspace root is loaded when a tool first touches a path under its
//! folder, as Codex and Claude Code do. Every folder from the root's child down to the touched
//! one is looked in, outermost first. The fence is the workspace: a file that links out of it
//! (or into a hidden path) is skipped, as the workspace's own are.

use std::path::{Component, Path};

use pith_protocol::event::InstructionOrigin;
use pith_tools::path::lexical_normalize;

use super::{Fences, INSTRUCTION_FILES, Instruction, judge};

/// The instruction files between the workspace root (excluded) and `touched` (a file, or a
/// folder) that are not among `known`, outermost first. Nothing when `touched` is not inside
/// the workspace.
pub(crate) fn nested_for(
    workspace: &Path,
    touched: &Path,
    known: &[Instruction],
    fences: &Fences,
) -> Vec<Instruction> {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let touched = lexical_normalize(&ws.join(touched));
    let dir = if touched.is_dir() {
        touched.as_path()
    } else {
        match touched.parent() {
            Some(p) => p,
            None => return Vec::new(),
        }
    };
    let Ok(rel) = dir.strip_prefix(&ws) else {
        return Vec::new();
    };
    let mut found: Vec<Instruction> = Vec::new();
    let mut at = ws.clone();
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return found;
        };
        at.push(name);
        for file in INSTRUCTION_FILES {
            let path = at.join(file);
            let Some(real) = judge(&path, &ws, fences) else {
                continue;
            };
            let seen = |i: &Instruction| i.is(&real);
            if !known.iter().any(seen) && !found.iter().any(seen) {
                found.push(Instruction {
                    path,
                    real,
                    origin: InstructionOrigin::Nested,
                    fence: ws.clone(),
                });
            }
        }
    }
    found
}
