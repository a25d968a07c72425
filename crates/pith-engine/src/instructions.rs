//! Which instruction files reach the system prompt, and reading them without following a link
//! out (ARCHITECTURE.md §4.3, §11).
//!
//! `AGENTS.md`, `CLAUDE.md` and `CLAUDE.local.md` are looked for in the workspace and the
//! directories above it,
//! and the configured `instructions` files are added. Each is sent to the provider, so:
//!
//! - a file reached through a symlink is read only when the link leads inside its fence (the
//!   repository, or for a configured file the workspace; above the repository, the file's own
//!   directory) and not into a hidden path (pith's data and config dirs, `~/.ssh`, …);
//!   otherwise it is skipped with a warning;
//! - the walk up never reads from the system's temp dir (`/tmp`, `$TMPDIR`, `/var/tmp`) or a
//!   directory below it other than the workspace itself, nor from a directory above `$HOME`:
//!   anyone (a sandboxed command included) can plant a file there;
//! - what was judged is what is read: the file's resolved path is opened with no symlink
//!   anywhere on the way (`pith_tools::open::read_exact`), so a link swapped in afterwards
//!   makes the read fail instead of reaching elsewhere.
//!
//! Before them come the user's own files (`user.rs`: `~/.claude/CLAUDE.md`,
//! `~/.codex/AGENTS.md`, `~/.config/pith/AGENTS.md`), and after them the nested files of the
//! subfolders a tool touched (`nested.rs`). A file is sent once, whichever way it was reached.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use pith_protocol::event::InstructionOrigin;
use pith_tools::path::lexical_normalize;

mod imports;
mod nested;
mod user;

pub(crate) use nested::nested_for;
pub use user::UserDirs;

/// Instruction files looked for in the workspace and every directory above it, in reverse of
/// the order they reach the prompt within a directory (the list is reversed whole, nearest
/// directory last): `CLAUDE.md`, `AGENTS.md`, then `CLAUDE.local.md` (Claude Code's personal,
/// usually git-ignored, project file), which so has the final word.
const INSTRUCTION_FILES: &[&str] = &["CLAUDE.local.md", "AGENTS.md", "CLAUDE.md"];

/// One instruction file: the path it was found at (shown in the prompt) and the path it is
/// read from (resolved, no symlink in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub path: PathBuf,
    pub real: PathBuf,
    pub origin: InstructionOrigin,
    /// What the file may lead to: a link it is reached through, and the files it imports
    /// (`@path`), must resolve inside this folder.
    pub fence: PathBuf,
}

impl Instruction {
    /// Whether `real` is this file: the same resolved path, or the same file under another name
    /// (a hard link).
    pub(crate) fn is(&self, real: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        if self.real == real {
            return true;
        }
        match (std::fs::metadata(&self.real), std::fs::metadata(real)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
}

/// Where instruction files come from besides the workspace and the folders above it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// The configured `instructions`.
    pub extra: &'a [PathBuf],
    /// The user's own folders (global files).
    pub user: Option<&'a UserDirs>,
    /// The subfolders' files loaded so far, in the order they were.
    pub nested: &'a [Instruction],
}

/// Every instruction file of the system prompt, most general first: the user's, then the
/// workspace's (root down, then the configured ones), then the nested ones as they were loaded.
/// Each file once (by where it resolves to).
pub fn all_instruction_files(
    workspace: &Path,
    sources: &Sources<'_>,
    fences: &Fences,
) -> Vec<Instruction> {
    let mut all = sources.user.map(|u| u.files(fences)).unwrap_or_default();
    let rest = instruction_files(workspace, sources.extra, fences)
        .into_iter()
        .chain(sources.nested.iter().cloned());
    for f in rest {
        if !all.iter().any(|a| a.is(&f.real)) {
            all.push(f);
        }
    }
    imports::expand(all, fences)
}

/// Where instruction files may not come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fences {
    /// Temp dirs: shared with every process, writable by sandboxed commands.
    pub temp: Vec<PathBuf>,
    /// `$HOME`: nothing is read from a directory above it.
    pub home: Option<PathBuf>,
    /// Hidden paths: an instruction file never leads into one.
    pub hidden: Vec<PathBuf>,
}

impl Fences {
    /// This machine's: the temp dirs, `$HOME`, and the paths the sandbox hides for `workspace`
    /// with pith's data dir `data_dir` (all of it, the tool-output folder included: commands
    /// write there).
    pub fn from_env(workspace: &Path, data_dir: &Path) -> Fences {
        let mut temp: Vec<PathBuf> = Vec::new();
        for t in [std::env::temp_dir(), "/tmp".into(), "/var/tmp".into()] {
            let t = t.canonicalize().unwrap_or(t);
            if !temp.contains(&t) {
                temp.push(t);
            }
        }
        let state = pith_tools::sandbox::paths::StatePaths::from_env(Vec::new());
        let home = state
            .home
            .as_ref()
            .map(|h| h.canonicalize().unwrap_or(h.clone()));
        let outputs = pith_tools::truncate::output_dir(data_dir);
        let mut hidden: Vec<PathBuf> =
            pith_tools::sandbox::paths::hidden(&state, data_dir, &outputs, workspace)
                .into_iter()
                .map(|h| h.path)
                .collect();
        hidden.push(data_dir.canonicalize().unwrap_or(data_dir.to_path_buf()));
        Fences { temp, home, hidden }
    }

    /// Whether the walk up from `workspace` looks for instruction files in `dir`.
    fn may_look_in(&self, dir: &Path, workspace: &Path) -> bool {
        let in_temp = self
            .temp
            .iter()
            .any(|t| dir == t || (dir != workspace && dir.starts_with(t)));
        let above_home = self
            .home
            .as_ref()
            .is_some_and(|h| h != dir && h.starts_with(dir));
        !in_temp && !above_home
    }

    fn is_hidden(&self, real: &Path) -> bool {
        self.hidden.iter().any(|h| real.starts_with(h))
    }
}

/// Instruction files from the workspace up to the filesystem root (nearest last, so it has the
/// final word), then the configured extra files. Missing files are skipped, and so is a file
/// that links where it may not lead (see the module's comment).
pub fn instruction_files(workspace: &Path, extra: &[PathBuf], fences: &Fences) -> Vec<Instruction> {
    let mut found = Vec::new();
    let ws = workspace.canonicalize().unwrap_or(workspace.to_path_buf());
    let repo = super::prompt::git_root(&ws)
        .filter(|r| fences.may_look_in(r, &ws))
        .unwrap_or_else(|| ws.clone());
    for dir in ws.ancestors() {
        if !fences.may_look_in(dir, &ws) {
            continue;
        }
        let fence = if dir.starts_with(&repo) { &repo } else { dir };
        for name in INSTRUCTION_FILES {
            if let Some(real) = judge(&dir.join(name), fence, fences) {
                found.push(Instruction {
                    path: dir.join(name),
                    real,
                    origin: InstructionOrigin::Workspace,
                    fence: fence.to_path_buf(),
                });
            }
        }
    }
    found.reverse();
    for p in extra {
        let p = if p.is_absolute() {
            p.clone()
        } else {
            ws.join(p)
        };
        if let Some(real) = judge(&p, &ws, fences)
            && !found.iter().any(|f| f.is(&real))
        {
            found.push(Instruction {
                path: p,
                real,
                origin: InstructionOrigin::Workspace,
                fence: ws.clone(),
            });
        }
    }
    found
}

/// Where the instruction file at `path` is read from, or `None` when it is missing, not a
/// regular file, or reached through a symlink that leads out of `fence` or into a hidden path.
pub(crate) fn judge(path: &Path, fence: &Path, fences: &Fences) -> Option<PathBuf> {
    std::fs::symlink_metadata(path).ok()?;
    let real = match path.canonicalize() {
        Ok(real) => real,
        Err(e) => {
            tracing::warn!("skipped instruction file {}: {e}", path.display());
            return None;
        }
    };
    if !real.is_file() {
        return None;
    }
    if real == lexical_normalize(path) {
        return Some(real);
    }
    let fence = fence.canonicalize().unwrap_or(fence.to_path_buf());
    if !real.starts_with(&fence) {
        tracing::warn!(
            "skipped instruction file {}: it links outside {}",
            path.display(),
            fence.display()
        );
        return None;
    }
    if fences.is_hidden(&real) {
        tracing::warn!(
            "skipped instruction file {}: it links into a hidden path",
            path.display()
        );
        return None;
    }
    Some(real)
}

/// Reads at most `max` bytes of the instruction file, from the path it was judged by.
pub(crate) fn read(file: &Instruction, max: usize) -> std::io::Result<Vec<u8>> {
    let f = pith_tools::open::read_exact(&file.real)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    f.take(max as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests;
