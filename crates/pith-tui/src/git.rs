//! The git branch the status line shows.

use std::path::Path;

/// The current git branch (or short commit when detached), read from `.git/HEAD`.
pub fn git_branch(workspace: &Path) -> Option<String> {
    // the nearest directory holding `.git`, as the engine's `prompt::git_root` finds it
    let root = workspace.ancestors().find(|d| d.join(".git").exists())?;
    let git = root.join(".git");
    // A worktree or submodule has a `.git` file pointing at the real git dir.
    let git_dir = if git.is_file() {
        let text = std::fs::read_to_string(&git).ok()?;
        let path = text.strip_prefix("gitdir:")?.trim();
        root.join(path)
    } else {
        git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: refs/heads/") {
        Some(branch) => Some(branch.to_string()),
        None => Some(head.chars().take(8).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_from_head() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_branch(dir.path()), None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("feature/x"));
        std::fs::write(dir.path().join(".git/HEAD"), "0123456789abcdef\n").unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("01234567"));
    }
}
