//! Memory files (ARCHITECTURE.md §4.3): the same files as the peers', plain Markdown the user
//! owns. The user's memory is `AGENTS.md` in pith's config folder (`~/.config/pith/AGENTS.md`),
//! the project's the workspace's `AGENTS.md` (or its `CLAUDE.md` when that is the only one the
//! repository has). Both are instruction files, so they are in every request's system prompt.
//!
//! `/remember TEXT` (and `#TEXT`, and the `remember` tool once the user said yes) adds `- TEXT`
//! as a line of a `## Memory` section: at the end of that section when the file has one, else
//! in a new one at the end; every other byte of the file stays as it was. The write never
//! follows a link: a memory file that is a symlink is refused, and the file is opened below its
//! folder's descriptor with no symlink on the way (`pith_tools::open`), so a link planted in
//! the meantime makes the write fail.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use pith_protocol::event::MemoryScope;
use pith_tools::open::{Checked, Identity};
use pith_tools::path::Resolved;

use crate::instructions::UserDirs;

/// The heading of the section memory lines are added under.
pub(crate) const HEADING: &str = "## Memory";

/// How long one memory line may be, in characters.
pub(crate) const MAX_CHARS: usize = 1_000;

/// The memory file of `scope` (`None`: the user's config folder is unknown).
pub(crate) fn path(scope: MemoryScope, workspace: &Path, user: &UserDirs) -> Option<PathBuf> {
    match scope {
        MemoryScope::User => user.memory_file(),
        MemoryScope::Project => Some(project_file(workspace)),
    }
}

/// The workspace's `AGENTS.md`, or its `CLAUDE.md` when only that one exists.
fn project_file(workspace: &Path) -> PathBuf {
    let agents = workspace.join("AGENTS.md");
    let claude = workspace.join("CLAUDE.md");
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    if !exists(&agents) && exists(&claude) {
        claude
    } else {
        agents
    }
}

/// `text` as one memory line, or why it cannot be one.
pub(crate) fn line(text: &str) -> Result<String, String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err("nothing to remember: give the text (/remember TEXT, or #TEXT)".into());
    }
    let chars = text.chars().count();
    if chars > MAX_CHARS {
        return Err(format!(
            "{chars} characters; a memory line holds at most {MAX_CHARS}"
        ));
    }
    Ok(text)
}

/// `content` with `- line` added to its `## Memory` section (made at the end when missing).
pub(crate) fn with_line(content: &str, line: &str) -> String {
    let item = format!("- {line}\n");
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let heading = lines.iter().position(|l| l.trim_end() == HEADING);
    let Some(h) = heading else {
        let mut out = content.to_string();
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.ends_with("\n\n") {
                out.push('\n');
            }
        }
        out.push_str(HEADING);
        out.push_str("\n\n");
        out.push_str(&item);
        return out;
    };
    // the section ends at the next heading of level one or two, or the end of the file
    let end = lines[h + 1..]
        .iter()
        .position(|l| l.starts_with("# ") || l.starts_with("## "))
        .map_or(lines.len(), |i| h + 1 + i);
    // after its last line that is not blank
    let mut at = end;
    while at > h + 1 && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    let mut out: String = lines[..at].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&item);
    out.push_str(&lines[at..].concat());
    out
}

/// Adds `line` to the memory file at `path` (made, with its folder, when missing). Refuses a
/// file that is a symbolic link; never follows one on the way.
pub(crate) fn append(path: &Path, line: &str) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("not a file path"));
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(
            "it is a symbolic link; pith does not write memory through one (edit the file it leads to yourself)",
        ));
    }
    std::fs::create_dir_all(dir)?;
    let dir = dir.canonicalize()?;
    let file = dir.join(name);
    let c = Checked {
        raw: file.to_string_lossy().into_owned(),
        resolved: Resolved {
            path: file.clone(),
            inside: true,
        },
        seen: Identity::at(&file),
    };
    let mut old = String::new();
    if c.seen.is_some() {
        let mut f = pith_tools::open::read(&dir, &c)?;
        if !f.metadata()?.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        f.read_to_string(&mut old)?;
    }
    let new = with_line(&old, line);
    let mut f = pith_tools::open::write(&dir, &c, false)?;
    f.write_all(new.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests;
