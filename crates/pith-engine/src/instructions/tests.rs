use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;
use crate::prompt::{Fit, system_prompt};
use pith_protocol::event::InstructionOrigin;

fn paths(files: &[Instruction]) -> Vec<PathBuf> {
    files.iter().map(|f| f.path.clone()).collect()
}

fn prompt(ws: &Path, extra: &[PathBuf], fences: &Fences) -> String {
    system_prompt(ws, extra, "d", Fit::FULL, fences).remove(1)
}

fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

#[test]
fn instruction_files_linking_out_of_the_repository_are_skipped() {
    let (_dir, root) = tempdir();
    let ws = root.join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(root.join("credentials"), "aws_secret=xyz").unwrap();
    symlink(root.join("credentials"), ws.join("AGENTS.md")).unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/rules.md"), "inside rule").unwrap();
    symlink(ws.join("docs/rules.md"), ws.join("CLAUDE.md")).unwrap();
    let files = instruction_files(&ws, &[], &Fences::default());
    assert_eq!(paths(&files), [ws.join("CLAUDE.md")]);
    assert_eq!(files[0].real, ws.join("docs/rules.md"));
    let rest = prompt(&ws, &[], &Fences::default());
    assert!(!rest.contains("aws_secret") && rest.contains("inside rule"));
}

/// The configured `instructions` (config.example.toml's example) replaced by a symlink to a
/// key: the key is not sent, whoever configured the file.
#[test]
fn a_configured_instruction_file_linking_out_is_skipped() {
    let (_dir, root) = tempdir();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(root.join("id_rsa"), "PRIVATE KEY").unwrap();
    symlink(root.join("id_rsa"), ws.join("docs/rules.md")).unwrap();
    // and a directory on the way that links out
    symlink(&root, ws.join("up")).unwrap();
    let extra = [PathBuf::from("docs/rules.md"), PathBuf::from("up/id_rsa")];
    assert!(instruction_files(&ws, &extra, &Fences::default()).is_empty());
    assert!(!prompt(&ws, &extra, &Fences::default()).contains("PRIVATE KEY"));
    // a link that stays inside is followed; a file named outside directly (the user's own
    // configuration) is read as it is
    std::fs::write(ws.join("docs/real.md"), "inside rule").unwrap();
    symlink("real.md", ws.join("docs/alias.md")).unwrap();
    std::fs::write(root.join("mine.md"), "my own rule").unwrap();
    let extra = [PathBuf::from("docs/alias.md"), root.join("mine.md")];
    let rest = prompt(&ws, &extra, &Fences::default());
    assert!(
        rest.contains("inside rule") && rest.contains("my own rule"),
        "{rest}"
    );
}

#[test]
fn an_instruction_file_linking_into_a_hidden_path_is_skipped() {
    let (_dir, root) = tempdir();
    let ws = root.join("home");
    std::fs::create_dir_all(ws.join(".ssh")).unwrap();
    std::fs::write(ws.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    symlink(".ssh/id_rsa", ws.join("AGENTS.md")).unwrap();
    let fences = Fences {
        hidden: vec![ws.join(".ssh")],
        ..Fences::default()
    };
    assert!(instruction_files(&ws, &[PathBuf::from("AGENTS.md")], &fences).is_empty());
}

/// `/tmp/AGENTS.md`, planted by anyone, is not read by sessions in folders under `/tmp`; nor is
/// a file above `$HOME`.
#[test]
fn the_walk_up_skips_the_temp_dir_and_what_is_above_home() {
    let (_dir, root) = tempdir();
    let tmp = root.join("tmp");
    let ws = tmp.join("proj/sub");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(tmp.join("AGENTS.md"), "planted in tmp").unwrap();
    std::fs::write(tmp.join("proj/AGENTS.md"), "planted below tmp").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "the workspace's own").unwrap();
    let fences = Fences {
        temp: vec![tmp.clone()],
        ..Fences::default()
    };
    assert_eq!(
        paths(&instruction_files(&ws, &[], &fences)),
        [ws.join("AGENTS.md")]
    );
    // even when a command made the temp dir a repository
    std::fs::create_dir_all(tmp.join(".git")).unwrap();
    assert_eq!(
        paths(&instruction_files(&ws, &[], &fences)),
        [ws.join("AGENTS.md")]
    );
    // the temp dir itself as the workspace
    assert!(instruction_files(&tmp, &[], &fences).is_empty());

    let home = root.join("users/me");
    let ws = home.join("code");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(root.join("AGENTS.md"), "above home").unwrap();
    std::fs::write(root.join("users/AGENTS.md"), "above home too").unwrap();
    std::fs::write(home.join("AGENTS.md"), "home's own").unwrap();
    let fences = Fences {
        home: Some(home.clone()),
        ..Fences::default()
    };
    assert_eq!(
        paths(&instruction_files(&ws, &[], &fences)),
        [home.join("AGENTS.md")]
    );
}

#[test]
fn this_machine_s_fences_hold_tmp_and_the_data_dir() {
    let (_dir, root) = tempdir();
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let f = Fences::from_env(&root, &data);
    let tmp = Path::new("/tmp").canonicalize().unwrap();
    assert!(f.temp.contains(&tmp), "{f:?}");
    assert!(f.hidden.contains(&data), "{f:?}");
    assert!(!f.may_look_in(&tmp, &root));
}

fn prompt_from(ws: &Path, sources: &Sources<'_>) -> String {
    crate::prompt::system_prompt_from(ws, sources, "d", Fit::FULL, &Fences::default()).remove(1)
}

/// The user's files come first — Claude Code's, Codex's, then pith's own (the user's memory) —
/// then the workspace's; a file reached twice (pith's linked to Claude's) is sent once.
#[test]
fn global_files_come_first_each_once() {
    let (_dir, root) = tempdir();
    let home = root.join("home");
    let user = UserDirs::in_home(&home);
    for d in [".claude", ".codex", ".config/pith"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join(".claude/CLAUDE.md"), "claude global rule").unwrap();
    std::fs::write(home.join(".codex/AGENTS.md"), "codex global rule").unwrap();
    std::fs::write(home.join(".config/pith/AGENTS.md"), "pith memory rule").unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "workspace rule").unwrap();
    let sources = Sources {
        user: Some(&user),
        ..Sources::default()
    };
    let rest = prompt_from(&ws, &sources);
    let at = |s: &str| {
        rest.find(s)
            .unwrap_or_else(|| panic!("{s} missing: {rest}"))
    };
    assert!(at("claude global rule") < at("codex global rule"));
    assert!(at("codex global rule") < at("pith memory rule"));
    assert!(at("pith memory rule") < at("workspace rule"));
    let files = all_instruction_files(&ws, &sources, &Fences::default());
    assert_eq!(
        files.iter().map(|f| f.origin).collect::<Vec<_>>(),
        [
            InstructionOrigin::User,
            InstructionOrigin::User,
            InstructionOrigin::User,
            InstructionOrigin::Workspace
        ]
    );
    // Claude's file a link to pith's: one file, sent once
    std::fs::remove_file(home.join(".claude/CLAUDE.md")).unwrap();
    symlink(
        home.join(".config/pith/AGENTS.md"),
        home.join(".claude/CLAUDE.md"),
    )
    .unwrap();
    let rest = prompt_from(&ws, &sources);
    assert_eq!(rest.matches("pith memory rule").count(), 1, "{rest}");
    // or a hard link to it: the same file by identity
    std::fs::remove_file(home.join(".claude/CLAUDE.md")).unwrap();
    std::fs::hard_link(
        home.join(".config/pith/AGENTS.md"),
        home.join(".claude/CLAUDE.md"),
    )
    .unwrap();
    let rest = prompt_from(&ws, &sources);
    assert_eq!(rest.matches("pith memory rule").count(), 1, "{rest}");
    // without user folders (tests, the eval) none is read
    assert!(!prompt(&ws, &[], &Fences::default()).contains("memory rule"));
}

/// A global file that links out of `$HOME` or into a hidden path is not read.
#[test]
fn a_global_file_linking_out_of_home_is_skipped() {
    let (_dir, root) = tempdir();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(root.join("outside"), "outside secret").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    symlink(root.join("outside"), home.join(".claude/CLAUDE.md")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    symlink(home.join(".ssh/id_rsa"), home.join(".codex/AGENTS.md")).unwrap();
    let fences = Fences {
        home: Some(home.clone()),
        hidden: vec![home.join(".ssh")],
        ..Fences::default()
    };
    let user = UserDirs::in_home(&home);
    assert!(user.files(&fences).is_empty());
}

/// A subfolder's files: those between the root and the touched path, outermost first, none
/// already known, none from a folder outside the workspace, none that links out.
#[test]
fn nested_files_between_the_root_and_the_touched_path() {
    let (_dir, root) = tempdir();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("a/b/c")).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "root").unwrap();
    std::fs::write(ws.join("a/AGENTS.md"), "a rule").unwrap();
    std::fs::write(ws.join("a/b/CLAUDE.md"), "b rule").unwrap();
    std::fs::write(ws.join("a/b/c/x.rs"), "").unwrap();
    let known = instruction_files(&ws, &[], &Fences::default());
    let found = nested_for(&ws, &ws.join("a/b/c/x.rs"), &known, &Fences::default());
    assert_eq!(
        paths(&found),
        [ws.join("a/AGENTS.md"), ws.join("a/b/CLAUDE.md")]
    );
    assert!(found.iter().all(|f| f.origin == InstructionOrigin::Nested));
    // a folder touched (a listing), relative; what is known is not found again
    let mut known = known;
    known.push(found[0].clone());
    let found = nested_for(&ws, Path::new("a/b"), &known, &Fences::default());
    assert_eq!(paths(&found), [ws.join("a/b/CLAUDE.md")]);
    // the root's own and a path outside the workspace find nothing
    assert!(nested_for(&ws, &ws.join("x.rs"), &[], &Fences::default()).is_empty());
    assert!(nested_for(&ws, &root.join("elsewhere/y.rs"), &[], &Fences::default()).is_empty());
    assert!(nested_for(&ws, Path::new("../elsewhere/y.rs"), &[], &Fences::default()).is_empty());
}

/// A nested `AGENTS.md` planted as a link to a secret outside the workspace is not read.
#[test]
fn a_nested_file_linking_out_is_skipped() {
    let (_dir, root) = tempdir();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(root.join("secret"), "aws_secret=xyz").unwrap();
    symlink(root.join("secret"), ws.join("sub/AGENTS.md")).unwrap();
    std::fs::write(ws.join("sub/inside.md"), "inside").unwrap();
    symlink(ws.join("sub/inside.md"), ws.join("sub/CLAUDE.md")).unwrap();
    let found = nested_for(&ws, &ws.join("sub/x.rs"), &[], &Fences::default());
    assert_eq!(paths(&found), [ws.join("sub/CLAUDE.md")]);
    // a folder on the way that links out of the workspace
    std::fs::create_dir_all(root.join("other")).unwrap();
    std::fs::write(root.join("other/AGENTS.md"), "outside rule").unwrap();
    symlink(root.join("other"), ws.join("out")).unwrap();
    assert!(nested_for(&ws, &ws.join("out/y.rs"), &[], &Fences::default()).is_empty());
}

/// `@path` imports (Claude Code's): read after the importing file when inside its fence; never
/// a file outside the repository, in a hidden path, or the same file twice.
#[test]
fn imports_are_read_inside_the_fence_only() {
    let (_dir, root) = tempdir();
    let home = root.join("home");
    let ws = home.join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(home.join("outside.md"), "OUTSIDE").unwrap();
    std::fs::write(ws.join("docs/rules.md"), "imported rule @deeper.md").unwrap();
    std::fs::write(ws.join("docs/deeper.md"), "deeper rule").unwrap();
    std::fs::write(
        ws.join("AGENTS.md"),
        "Rules: @docs/rules.md @../outside.md @~/.ssh/id_rsa @/etc/hostname `@docs/deeper.md`",
    )
    .unwrap();
    // the common CLAUDE.md that only imports AGENTS.md: one copy of it
    std::fs::write(ws.join("CLAUDE.md"), "@AGENTS.md").unwrap();
    let fences = Fences {
        home: Some(home.clone()),
        hidden: vec![home.join(".ssh")],
        ..Fences::default()
    };
    let files = all_instruction_files(&ws, &Sources::default(), &fences);
    assert_eq!(
        paths(&files),
        [
            ws.join("CLAUDE.md"),
            ws.join("AGENTS.md"),
            ws.join("docs/rules.md"),
            ws.join("docs/deeper.md"),
        ]
    );
    let rest = crate::prompt::system_prompt_from(&ws, &Sources::default(), "d", Fit::FULL, &fences)
        .remove(1);
    assert_eq!(rest.matches("imported rule").count(), 1, "{rest}");
    assert!(
        !rest.contains("PRIVATE KEY") && !rest.contains("OUTSIDE"),
        "{rest}"
    );
    // the user's file may import from $HOME (its fence), not from a hidden path
    let user = UserDirs::in_home(&home);
    std::fs::create_dir_all(home.join(".config/pith")).unwrap();
    std::fs::write(
        home.join(".config/pith/AGENTS.md"),
        "@~/outside.md @~/.ssh/id_rsa",
    )
    .unwrap();
    let sources = Sources {
        user: Some(&user),
        ..Sources::default()
    };
    let files = all_instruction_files(&ws, &sources, &fences);
    assert!(files.iter().any(|f| f.path == home.join("outside.md")));
    assert!(!files.iter().any(|f| f.path.starts_with(home.join(".ssh"))));
}

/// Claude Code's personal project file, `CLAUDE.local.md`, is read beside `CLAUDE.md` and
/// `AGENTS.md`, last of a directory's (it has the final word), under the same fences.
#[test]
fn claude_local_md_is_read_last_of_its_directory() {
    let (_dir, root) = tempdir();
    let ws = root.join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(root.join("CLAUDE.local.md"), "above the repo").unwrap();
    std::fs::write(ws.join("CLAUDE.local.md"), "my own rule").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "team rule").unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "claude rule").unwrap();
    let files = instruction_files(&ws, &[], &Fences::default());
    assert_eq!(
        paths(&files),
        [
            root.join("CLAUDE.local.md"),
            ws.join("CLAUDE.md"),
            ws.join("AGENTS.md"),
            ws.join("CLAUDE.local.md"),
        ]
    );
    // one linking out of the repository is skipped, as any instruction file
    std::fs::write(root.join("secret"), "aws_secret=xyz").unwrap();
    std::fs::remove_file(ws.join("CLAUDE.local.md")).unwrap();
    symlink(root.join("secret"), ws.join("CLAUDE.local.md")).unwrap();
    let rest = prompt(&ws, &[], &Fences::default());
    assert!(!rest.contains("aws_secret") && rest.contains("team rule"));
}
