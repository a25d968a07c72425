use super::*;

/// A workspace, a home and a data dir in a temp folder.
struct Places {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    data: PathBuf,
}

impl Places {
    fn new() -> Places {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (ws, home, data) = (root.join("ws"), root.join("home"), root.join("data"));
        for d in [&ws, &home, &data.join("tool-output")] {
            std::fs::create_dir_all(d).unwrap();
        }
        Places {
            _dir: dir,
            root,
            ws,
            home,
            data,
        }
    }

    fn policy(&self) -> Policy {
        self.policy_in(&self.ws)
    }

    fn policy_in(&self, ws: &Path) -> Policy {
        let own = [self.data.clone(), self.home.join(".config/pith")];
        Policy::with_paths(
            ws,
            Some(self.home.clone()),
            &own,
            &self.data.join("tool-output"),
        )
    }
}

#[test]
fn git_pith_and_instruction_files_are_protected_at_any_depth() {
    let p = Places::new();
    let pol = p.policy();
    for (rel, why) in [
        (".git", Protected::Git),
        (".git/config", Protected::Git),
        (".git/hooks/post-commit", Protected::Git),
        ("a/b/.git/config", Protected::Git),
        ("vendor/lib/.GIT/hooks/pre-commit", Protected::Git),
        ("pith.toml", Protected::PithToml),
        ("sub/pith.toml", Protected::PithToml),
        (".pith/commands/x.md", Protected::PithDir),
        ("a/.pith/agents/y.md", Protected::PithDir),
        ("AGENTS.md", Protected::Instructions),
        ("docs/deep/CLAUDE.md", Protected::Instructions),
        ("CLAUDE.local.md", Protected::Instructions),
        ("sub/CLAUDE.local.md", Protected::Instructions),
        (".claude/skills/deploy/SKILL.md", Protected::Skills),
        (".agents/skills/x/scripts/run.sh", Protected::Skills),
        (".pith/skills/y/SKILL.md", Protected::PithDir),
    ] {
        assert_eq!(pol.protected(&p.ws.join(rel)), Some(why), "{rel}");
    }
    for rel in [
        "src/main.rs",
        "gitconfig",
        "pith.toml.bak",
        "docs/AGENTS.md.txt",
        ".gitignore",
        ".claude/settings.json",
        "docs/skills/intro.md",
    ] {
        assert_eq!(pol.protected(&p.ws.join(rel)), None, "{rel}");
    }
}

#[test]
fn a_link_to_a_protected_file_and_a_protected_name_linking_out_are_both_protected() {
    let p = Places::new();
    std::fs::create_dir_all(p.ws.join(".git")).unwrap();
    std::fs::write(p.ws.join(".git/config"), "").unwrap();
    std::os::unix::fs::symlink(p.ws.join(".git/config"), p.ws.join("innocent")).unwrap();
    std::os::unix::fs::symlink(p.root.join("elsewhere.md"), p.ws.join("AGENTS.md")).unwrap();
    let pol = p.policy();
    assert_eq!(pol.protected(&p.ws.join("innocent")), Some(Protected::Git));
    assert_eq!(
        pol.protected(&p.ws.join("AGENTS.md")),
        Some(Protected::Instructions)
    );
}

#[test]
fn the_config_file_and_configured_instructions_are_protected() {
    let p = Places::new();
    let config = p.ws.join("my-pith.toml.d/conf.toml");
    let pol = p
        .policy()
        .configured(Some(&config), &[PathBuf::from("docs/STYLE.md")]);
    assert_eq!(pol.protected(&config), Some(Protected::ConfigFile));
    assert_eq!(
        pol.protected(&p.ws.join("docs/STYLE.md")),
        Some(Protected::Instructions)
    );
    assert_eq!(pol.protected(&p.ws.join("docs/OTHER.md")), None);
}

#[test]
fn shell_start_up_files_are_protected_and_kept_read_only_when_the_workspace_is_home() {
    let p = Places::new();
    std::fs::write(p.home.join(".bashrc"), "").unwrap();
    std::fs::create_dir_all(p.home.join(".config/fish")).unwrap();
    let pol = p.policy();
    assert_eq!(
        pol.protected(&p.home.join(".bashrc")),
        Some(Protected::Startup)
    );
    assert_eq!(
        pol.protected(&p.home.join(".config/fish/config.fish")),
        Some(Protected::Startup)
    );
    assert_eq!(
        pol.protected(&p.home.join(".gitconfig")),
        Some(Protected::Startup)
    );
    assert_eq!(pol.protected(&p.home.join("notes.txt")), None);
    // Outside the workspace nothing to bind, no warning.
    assert!(pol.startup_files().is_empty());
    assert_eq!(pol.workspace_warning(), None);
    // The workspace is $HOME: the ones that exist are bound read-only, and pith warns.
    let at_home = p.policy_in(&p.home);
    assert_eq!(
        at_home.startup_files(),
        vec![p.home.join(".bashrc"), p.home.join(".config/fish")]
    );
    assert!(at_home.workspace_warning().unwrap().contains("home folder"));
    assert!(p.policy_in(Path::new("/")).workspace_warning().is_some());
}

#[test]
fn own_state_is_the_data_and_config_dirs_but_tool_output() {
    let p = Places::new();
    let pol = p.policy();
    for path in [
        p.data.join("trusted-directories.json"),
        p.data.join("sandbox-support.json"),
        p.data.join("credentials.json"),
        p.data.clone(),
        p.home.join(".config/pith/config.toml"),
        p.data.join("tool-output/../logs/pith.log"),
    ] {
        assert_eq!(pol.own_state(&path), OwnState::Yes, "{path:?}");
    }
    assert_eq!(
        pol.own_state(&p.data.join("tool-output/call_1.txt")),
        OwnState::ToolOutput
    );
    assert_eq!(pol.own_state(&p.ws.join("src")), OwnState::No);
    // A link from the tool-output folder into the data dir is the data dir.
    std::os::unix::fs::symlink(
        p.data.join("credentials.json"),
        p.data.join("tool-output/sneaky"),
    )
    .unwrap();
    std::fs::write(p.data.join("credentials.json"), "{}").unwrap();
    assert_eq!(
        pol.own_state(&p.data.join("tool-output/sneaky")),
        OwnState::Yes
    );
    // A link in the workspace into the data dir.
    std::os::unix::fs::symlink(&p.data, p.ws.join("d")).unwrap();
    assert_eq!(
        pol.own_state(&p.ws.join("d/credentials.json")),
        OwnState::Yes
    );
}

#[test]
fn a_workspace_inside_the_data_dir_is_not_own_state() {
    let p = Places::new();
    let ws = p.data.join("project");
    std::fs::create_dir_all(&ws).unwrap();
    let pol = p.policy_in(&ws);
    assert_eq!(pol.own_state(&ws.join("src/lib.rs")), OwnState::No);
}

/// The workspace is `$HOME` (it holds the data dir): a search or listing of it never walks
/// into pith's own state.
#[tokio::test]
async fn searches_from_a_workspace_holding_the_data_dir_skip_it() {
    use crate::Tool;
    use serde_json::json;
    let ws = crate::testutil::Ws::new();
    let mut ctx = ws.ctx.clone();
    let home = ws.root();
    ctx.workspace = home.clone();
    ctx.policy = std::sync::Arc::new(Policy::new(&ctx.workspace, &ctx.data_dir));
    std::fs::write(ctx.data_dir.join("credentials.json"), "sk-stored-secret").unwrap();
    std::fs::write(ws.path("notes.txt"), "sk-ordinary").unwrap();
    let grep = crate::grep::Grep
        .run(json!({"pattern": "sk-", "output_mode": "content"}), &ctx)
        .await
        .unwrap();
    assert!(grep.output.contains("notes.txt"), "{}", grep.output);
    assert!(!grep.output.contains("credentials"), "{}", grep.output);
    let glob = crate::glob::Glob
        .run(json!({"pattern": "*.json"}), &ctx)
        .await
        .map(|o| o.output)
        .unwrap_or_else(|e| e.to_string());
    assert!(!glob.contains("credentials"), "{glob}");
    let list = crate::list::List.run(json!({}), &ctx).await.unwrap();
    assert!(list.output.contains("ws"), "{}", list.output);
    assert!(!list.output.contains("data"), "{}", list.output);
}

/// Red-team finding 4: files in `$HOME` that run code later, beyond the shell's start-up list.
#[test]
fn every_home_dotfile_is_protected_when_outside_the_workspace_or_the_workspace_is_home() {
    let p = Places::new();
    let planted = [
        ".bash_aliases",
        ".ssh/config",
        ".ssh/authorized_keys",
        ".local/bin/git",
        ".local/lib/python3.12/site-packages/usercustomize.py",
        ".vimrc",
        ".config/nvim/init.lua",
        ".cargo/config.toml",
    ];
    for pol in [p.policy(), p.policy_in(&p.home)] {
        for rel in planted {
            assert_eq!(
                pol.protected(&p.home.join(rel)),
                Some(Protected::Startup),
                "{rel}"
            );
        }
    }
    let at_home = p.policy_in(&p.home);
    assert_eq!(at_home.protected(&p.home.join("notes.txt")), None);
    assert_eq!(at_home.protected(&p.home.join("proj/.gitignore")), None);
    // A workspace that is itself a dot folder in $HOME: its own files are not dotfiles.
    let dots = p.home.join(".dotfiles");
    std::fs::create_dir_all(&dots).unwrap();
    assert_eq!(p.policy_in(&dots).protected(&dots.join("vimrc")), None);
}

/// Red-team findings 4c and 5: a git directory without a `.git` name (a `--separate-git-dir`
/// gitdir, a bare repository planted file by file) is git's too.
#[test]
fn a_git_dir_without_a_git_name_is_protected_and_so_is_completing_one() {
    let p = Places::new();
    let pol = p.policy();
    // the gitdir a `.git` file names, outside and inside the workspace
    for gitdir in [p.root.join("gitdirs/proj"), p.ws.join("meta")] {
        for d in ["objects", "refs/heads", "hooks"] {
            std::fs::create_dir_all(gitdir.join(d)).unwrap();
        }
        std::fs::write(gitdir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(gitdir.join("config"), "[core]\n").unwrap();
        for rel in ["config", "hooks/post-commit", "HEAD", "commondir", "info/x"] {
            assert_eq!(
                pol.protected(&gitdir.join(rel)),
                Some(Protected::Git),
                "{gitdir:?} {rel}"
            );
        }
        assert_eq!(pol.protected(&gitdir.join("README")), None);
    }
    // a bare repository planted file by file: whichever write completes it asks
    let sub = p.ws.join("sub");
    std::fs::create_dir_all(sub.join("refs/heads")).unwrap();
    std::fs::create_dir_all(sub.join("objects/info")).unwrap();
    std::fs::write(sub.join("config"), "").unwrap();
    assert_eq!(pol.protected(&sub.join("HEAD")), Some(Protected::Git));
    let sub2 = p.ws.join("sub2");
    std::fs::create_dir_all(&sub2).unwrap();
    std::fs::write(sub2.join("HEAD"), "ref: refs/heads/m\n").unwrap();
    for rel in ["refs/heads/m", "objects/info/x", "config"] {
        assert_eq!(
            pol.protected(&sub2.join(rel)),
            Some(Protected::Git),
            "{rel}"
        );
    }
    // ordinary project folders named like git's are not
    let app = p.ws.join("app");
    std::fs::create_dir_all(app.join("config")).unwrap();
    assert_eq!(pol.protected(&app.join("config/settings.toml")), None);
    assert_eq!(pol.protected(&app.join("objects/model.py")), None);
}
