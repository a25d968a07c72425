//! Which paths the sandbox hides from commands and which it keeps read-only.
//!
//! Hidden (neither readable nor writable): pith's own state (the data dir — trust store,
//! credentials, database, logs — and the config dir), the user's other secrets (`~/.ssh`,
//! `~/.aws`, …) and `sandbox_deny_read`. Only the tool-output folder inside the data dir stays
//! visible and writable.
//!
//! Read-only (ARCHITECTURE.md §11): the files git or pith take commands from, inside the
//! workspace — `.git` (and the gitdir a `.git` file points to, and its common dir),
//! `pith.toml`, `.pith/` and the instruction files. Changing those goes through the `write` and
//! `edit` tools and their questions, never through a command.

use std::path::{Path, PathBuf};

/// Secrets under the home directory that commands never need to read.
pub(crate) const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/git/credentials",
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".config/github-copilot",
    ".gemini/oauth_creds.json",
    ".gem/credentials",
    ".config/rclone/rclone.conf",
    ".s3cfg",
];

/// Names in the workspace root that git or pith take commands or instructions from: the
/// policy's (one definition for every door).
pub(crate) use crate::policy::PROTECTED_NAMES;

/// A path commands may not see, with the paths below it that stay visible (and writable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    pub path: PathBuf,
    pub dir: bool,
    pub reveal: Vec<PathBuf>,
}

/// Where the user's home and pith's config live, and what the user adds to the deny-read list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatePaths {
    pub home: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
    /// `sandbox_deny_read` from the config (absolute, `~` expanded).
    pub extra: Vec<PathBuf>,
}

impl StatePaths {
    /// The paths of this machine: `$HOME`, the platform config dir (or `PITH_CONFIG`'s folder).
    pub fn from_env(extra: Vec<PathBuf>) -> StatePaths {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let config_dir =
            directories::ProjectDirs::from("", "", "pith").map(|d| d.config_dir().to_path_buf());
        StatePaths {
            home,
            config_dir,
            extra,
        }
    }
}

/// The paths to hide for a command in `workspace`, given pith's data dir and tool-output
/// folder. Paths that do not exist are left out (there is nothing to read), as is any path
/// that holds the workspace (a command must see its own workspace; the caller says so).
pub fn hidden(
    state: &StatePaths,
    data_dir: &Path,
    outputs: &Path,
    workspace: &Path,
) -> Vec<Hidden> {
    let mut wanted: Vec<PathBuf> = vec![data_dir.to_path_buf()];
    wanted.extend(state.config_dir.iter().cloned());
    if let Some(home) = &state.home {
        wanted.extend(HOME_SECRETS.iter().map(|s| home.join(s)));
    }
    wanted.extend(state.extra.iter().cloned());
    let mut out: Vec<Hidden> = Vec::new();
    for path in wanted {
        let path = real(&path);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if workspace.starts_with(&path) {
            continue;
        }
        // A path inside one already hidden needs nothing of its own.
        if out.iter().any(|h| path.starts_with(&h.path)) {
            continue;
        }
        out.retain(|h| !h.path.starts_with(&path));
        let outputs = real(outputs);
        let reveal = if meta.is_dir() && outputs.starts_with(&path) && outputs.is_dir() {
            vec![outputs]
        } else {
            Vec::new()
        };
        out.push(Hidden {
            path,
            dir: meta.is_dir(),
            reveal,
        });
    }
    out
}

/// The read-only paths for `workspace`: each protected name that exists, and for a `.git` file
/// (a linked worktree or a submodule) the gitdir it names and that gitdir's common dir; then
/// `extra` (existing, absolute: [`resolve_extra`]) and the other names of any protected file
/// with hard links, found in `roots` ([`hard_links`]). `notes` gets a line for a layout that
/// cannot be protected fully.
pub(crate) fn read_only(
    workspace: &Path,
    extra: &[PathBuf],
    roots: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in PROTECTED_NAMES {
        let path = workspace.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            // A link is protected at its target (the link itself cannot be replaced: the
            // workspace root is not read-only, but a rename over it is noticed by the guard).
            match std::fs::canonicalize(&path) {
                Ok(target) => out.push(target),
                Err(_) => continue,
            }
            continue;
        }
        out.push(path.clone());
        if *name == ".git" && meta.is_file() {
            match gitfile_targets(&path) {
                Ok(targets) => out.extend(targets),
                Err(why) => notes.push(format!(
                    "{}: {why}; only the file itself is read-only",
                    path.display()
                )),
            }
        }
    }
    // The workspace is $HOME (or `/`): the shell's start-up files stay read-only too.
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    out.extend(crate::policy::startup_files(workspace, home.as_deref()));
    out.extend(extra.iter().cloned());
    let links = hard_links(&out, roots, notes);
    out.extend(links);
    out.sort();
    out.dedup();
    out
}

/// The configured extra protected files (`instructions`, the `--config` file) that exist, as
/// absolute paths with links resolved: relative ones are in `workspace`.
pub(crate) fn resolve_extra(paths: &[PathBuf], workspace: &Path) -> Vec<PathBuf> {
    paths
        .iter()
        .filter_map(|p| {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                workspace.join(p)
            };
            std::fs::canonicalize(p).ok()
        })
        .collect()
}

/// Entries a search for a protected file's other names looks at before it gives up.
pub(crate) const MAX_LINK_WALK: usize = 100_000;

/// The other names of the regular files in `protected` that have hard links, inside `roots`
/// (where a command could write through them; a name elsewhere is read-only anyway). Only
/// files with more than one name cost a search, bounded by [`MAX_LINK_WALK`] entries; a name
/// not found within it is said in `notes`.
///
/// A search is remembered for the process, keyed by the files' (device, inode, link count) and
/// the roots, and used again while every name it found still is that file: a new link changes
/// the count, a moved one fails the check. (A name the user moves into the workspace from
/// outside, keeping the count, is found at the next change.)
pub(crate) fn hard_links(
    protected: &[PathBuf],
    roots: &[PathBuf],
    notes: &mut Vec<String>,
) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    type Key = (Vec<(u64, u64, u64)>, Vec<PathBuf>);
    /// A search: what it was for, the names it found, what it said.
    type Search = (Key, Vec<PathBuf>, Vec<String>);
    static SEARCHED: std::sync::Mutex<Vec<Search>> = std::sync::Mutex::new(Vec::new());
    let ids: Vec<(u64, u64, u64)> = protected
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok())
        .filter(|m| m.is_file() && m.nlink() > 1)
        .map(|m| (m.dev(), m.ino(), m.nlink()))
        .collect();
    if ids.is_empty() {
        return Vec::new();
    }
    let key: Key = (ids, roots.to_vec());
    let still = |found: &[PathBuf]| {
        found.iter().all(|p| {
            std::fs::symlink_metadata(p)
                .is_ok_and(|m| key.0.iter().any(|&(d, i, _)| (d, i) == (m.dev(), m.ino())))
        })
    };
    let mut searched = SEARCHED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, found, said)) = searched
        .iter()
        .find(|(k, found, _)| *k == key && still(found))
    {
        notes.extend(said.iter().cloned());
        return found.clone();
    }
    let mut said = Vec::new();
    let found = search_links(protected, roots, &mut said);
    searched.retain(|(k, _, _)| k.1 != key.1);
    searched.push((key, found.clone(), said.clone()));
    notes.extend(said);
    found
}

/// [`hard_links`] without the memory: the bounded walk.
fn search_links(protected: &[PathBuf], roots: &[PathBuf], notes: &mut Vec<String>) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // (device, inode) → (the protected path, names still to find)
    let mut wanted: Vec<((u64, u64), &Path, u64)> = protected
        .iter()
        .filter_map(|p| {
            let m = std::fs::symlink_metadata(p).ok()?;
            (m.is_file() && m.nlink() > 1).then(|| ((m.dev(), m.ino()), p.as_path(), m.nlink() - 1))
        })
        .collect();
    let mut found = Vec::new();
    if wanted.is_empty() {
        return found;
    }
    let mut budget = MAX_LINK_WALK;
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        if budget == 0 || wanted.iter().all(|w| w.2 == 0) {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let Ok(m) = entry.metadata() else { continue };
            if m.is_dir() {
                if wanted.iter().any(|w| w.0.0 == m.dev()) {
                    stack.push(entry.path());
                }
                continue;
            }
            let path = entry.path();
            for w in wanted.iter_mut() {
                if m.is_file() && w.0 == (m.dev(), m.ino()) && path != w.1 && !found.contains(&path)
                {
                    found.push(path.clone());
                    w.2 = w.2.saturating_sub(1);
                }
            }
        }
    }
    for (_, path, left) in wanted.iter().filter(|w| w.2 > 0) {
        // Names outside the writable folders cannot be written through anyway.
        if budget == 0 {
            notes.push(format!(
                "{} has {left} other name(s) (hard links) not found within {MAX_LINK_WALK} entries of the writable folders: a command could change it through them",
                path.display()
            ));
        }
    }
    found
}

/// Why the gitdir a `.git` file names could not be found (said in the sandbox's note).
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitfileError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// Its first line is not `gitdir: PATH`.
    #[error("not a `gitdir:` file")]
    NotGitdir,
    /// The gitdir it names is not a directory.
    #[error("its gitdir {} is not a directory", .0.display())]
    NoGitdir(PathBuf),
}

/// The gitdir a `.git` file names (`gitdir: PATH`, relative to the file's folder) and the
/// common dir that gitdir names in its `commondir` file, when there is one.
pub(crate) fn gitfile_targets(gitfile: &Path) -> Result<Vec<PathBuf>, GitfileError> {
    let text = read_small(gitfile)?;
    let line = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .ok_or(GitfileError::NotGitdir)?;
    let base = gitfile.parent().unwrap_or(Path::new("/"));
    let gitdir = real(&base.join(line));
    if !gitdir.is_dir() {
        return Err(GitfileError::NoGitdir(gitdir));
    }
    let mut out = vec![gitdir.clone()];
    if let Ok(common) = read_small(&gitdir.join("commondir")) {
        let common = real(&gitdir.join(common.trim()));
        if common.is_dir() {
            out.push(common);
        }
    }
    Ok(out)
}

fn read_small(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text)?;
    Ok(text)
}

/// `path` with links resolved when it exists; as given otherwise.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(home: &Path, config: &Path) -> StatePaths {
        StatePaths {
            home: Some(home.to_path_buf()),
            config_dir: Some(config.to_path_buf()),
            extra: Vec::new(),
        }
    }

    #[test]
    fn secrets_and_state_are_hidden_but_tool_output_stays() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let home = root.join("home");
        let data = home.join(".local/share/pith");
        let outputs = data.join("tool-output");
        let config = home.join(".config/pith");
        for d in [&outputs, &config, &home.join(".ssh"), &home.join("ws")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".netrc"), "machine x password y").unwrap();
        let hidden = hidden(&state(&home, &config), &data, &outputs, &home.join("ws"));
        let paths: Vec<&Path> = hidden.iter().map(|h| h.path.as_path()).collect();
        assert!(paths.contains(&data.as_path()), "{paths:?}");
        assert!(paths.contains(&config.as_path()), "{paths:?}");
        assert!(paths.contains(&home.join(".ssh").as_path()), "{paths:?}");
        let netrc = hidden.iter().find(|h| h.path.ends_with(".netrc")).unwrap();
        assert!(!netrc.dir);
        // Missing secrets are not listed.
        assert!(!paths.contains(&home.join(".aws").as_path()), "{paths:?}");
        let d = hidden.iter().find(|h| h.path == data).unwrap();
        assert_eq!(d.reveal, vec![outputs]);
    }

    /// Credential files of databases, git and other coding agents (issue 37) are hidden too.
    #[test]
    fn credential_files_of_git_databases_and_agents_are_hidden() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let files = [
            ".config/git/credentials",
            ".pgpass",
            ".my.cnf",
            ".claude/.credentials.json",
            ".codex/auth.json",
            ".config/github-copilot/hosts.json",
            ".config/github-copilot/apps.json",
        ];
        for f in files {
            let path = home.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "secret").unwrap();
        }
        std::fs::create_dir_all(home.join("ws")).unwrap();
        let data = home.join(".local/share/pith");
        let st = state(&home, &home.join(".config/pith"));
        let hidden = hidden(&st, &data, &data.join("tool-output"), &home.join("ws"));
        for f in files {
            assert!(
                hidden.iter().any(|h| home.join(f).starts_with(&h.path)),
                "{f} is readable: {hidden:?}"
            );
        }
    }

    #[test]
    fn a_path_holding_the_workspace_is_not_hidden_and_nested_ones_merge() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let data = root.join("data");
        let ws = data.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(root.join("secrets/inner")).unwrap();
        let st = StatePaths {
            extra: vec![root.join("secrets/inner"), root.join("secrets")],
            ..StatePaths::default()
        };
        let hidden = hidden(&st, &data, &data.join("tool-output"), &ws);
        let paths: Vec<&Path> = hidden.iter().map(|h| h.path.as_path()).collect();
        assert_eq!(paths, vec![root.join("secrets").as_path()]);
    }

    #[test]
    fn protected_names_and_a_gitfile_target_are_read_only() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let ws = root.join("wt");
        let main_git = root.join("main/.git");
        let gitdir = main_git.join("worktrees/wt");
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::create_dir_all(ws.join(".pith")).unwrap();
        std::fs::write(ws.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        std::fs::write(ws.join("AGENTS.md"), "be nice").unwrap();
        let mut notes = Vec::new();
        let ro = read_only(&ws, &[], std::slice::from_ref(&ws), &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        for p in [
            ws.join(".git"),
            gitdir,
            main_git,
            ws.join(".pith"),
            ws.join("AGENTS.md"),
        ] {
            assert!(ro.contains(&p), "{p:?} not in {ro:?}");
        }
        assert!(!ro.contains(&ws.join("pith.toml")));
    }

    #[test]
    fn an_odd_gitfile_degrades_with_a_note() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap();
        std::fs::write(ws.join(".git"), "gitdir: /nowhere/at/all\n").unwrap();
        let mut notes = Vec::new();
        let ro = read_only(&ws, &[], std::slice::from_ref(&ws), &mut notes);
        assert_eq!(ro, vec![ws.join(".git")]);
        assert!(notes[0].contains("not a directory"), "{notes:?}");
    }

    #[test]
    fn other_names_of_a_protected_file_and_configured_files_are_read_only() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("docs/deep")).unwrap();
        std::fs::write(ws.join("AGENTS.md"), "be nice").unwrap();
        std::fs::hard_link(ws.join("AGENTS.md"), ws.join("docs/deep/notes.md")).unwrap();
        std::fs::write(ws.join("docs/STYLE.md"), "style").unwrap();
        std::fs::write(ws.join("my.toml"), "").unwrap();
        let extra = resolve_extra(
            &[
                PathBuf::from("docs/STYLE.md"),
                ws.join("my.toml"),
                PathBuf::from("missing.md"),
            ],
            &ws,
        );
        assert_eq!(extra, vec![ws.join("docs/STYLE.md"), ws.join("my.toml")]);
        let mut notes = Vec::new();
        let ro = read_only(&ws, &extra, std::slice::from_ref(&ws), &mut notes);
        for p in [
            "AGENTS.md",
            "docs/deep/notes.md",
            "docs/STYLE.md",
            "my.toml",
        ] {
            assert!(ro.contains(&ws.join(p)), "{p} not in {ro:?}");
        }
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_remembered_search_is_redone_when_a_name_it_found_moved() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("a")).unwrap();
        std::fs::write(ws.join("AGENTS.md"), "x").unwrap();
        std::fs::hard_link(ws.join("AGENTS.md"), ws.join("a/one.md")).unwrap();
        let protected = [ws.join("AGENTS.md")];
        let roots = [ws.clone()];
        let mut notes = Vec::new();
        assert_eq!(
            hard_links(&protected, &roots, &mut notes),
            vec![ws.join("a/one.md")]
        );
        // The same count of names, one of them elsewhere now.
        std::fs::rename(ws.join("a/one.md"), ws.join("two.md")).unwrap();
        assert_eq!(
            hard_links(&protected, &roots, &mut notes),
            vec![ws.join("two.md")]
        );
        assert!(notes.is_empty(), "{notes:?}");
    }
}
