use std::path::Path;

use super::*;

/// A skill folder in the peers' format.
fn skill(root: &Path, folder: &str, front: &str, body: &str) -> PathBuf {
    let dir = root.join(folder);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("scripts/run.sh"), "#!/bin/sh\necho ok\n").unwrap();
    let file = dir.join("SKILL.md");
    std::fs::write(&file, format!("---\n{front}\n---\n{body}\n")).unwrap();
    file
}

struct Machine {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            ws: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn config_dir(&self) -> PathBuf {
        self.home.path().join(".config/pith")
    }

    fn load(&self, trusted: bool) -> Skills {
        let roots = roots(
            self.ws.path(),
            trusted,
            Some(&self.config_dir()),
            Some(self.home.path()),
        );
        // the test's temp dirs are the fence's home; no temp fence
        let fence = Fence {
            workspace: self.ws.path().canonicalize().unwrap(),
            home: Some(self.home.path().canonicalize().unwrap()),
            temp: Vec::new(),
        };
        Skills::load(&roots, &fence)
    }
}

const PDF: &str = "name: pdf-tools\ndescription: Extract text and tables from PDF files. Use when the user mentions PDFs.\nlicense: Apache-2.0\nallowed-tools: Read, Grep, Bash(pdftotext:*)";

#[test]
fn project_skills_win_over_the_users_and_a_duplicate_names_both_files() {
    let m = Machine::new();
    let project = skill(
        &m.ws.path().join(".claude/skills"),
        "pdf-tools",
        PDF,
        "# PDF\nRun scripts/run.sh.",
    );
    let user = skill(
        &m.home.path().join(".codex/skills"),
        "pdf-tools",
        "name: pdf-tools\ndescription: The user's own PDF skill",
        "user body",
    );
    skill(
        &m.config_dir().join("skills"),
        "commit-helper",
        "name: commit-helper\ndescription: Writes commit messages\nallowed-tools:\n  - Bash(git diff:*)\n  - Read",
        "Read the staged diff.",
    );
    let s = m.load(true);
    let names: Vec<&str> = s.list.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["commit-helper", "pdf-tools"]);
    let pdf = s.get("pdf-tools").unwrap();
    assert_eq!(pdf.path, project);
    assert_eq!(pdf.scope, Scope::Project);
    assert_eq!(pdf.root, ".claude/skills");
    assert_eq!(
        pdf.allowed_tools.as_deref().unwrap(),
        ["Read", "Grep", "Bash(pdftotext:*)"]
    );
    let helper = s.get("commit-helper").unwrap();
    assert_eq!(helper.root, "~/.config/pith/skills");
    assert_eq!(
        helper.allowed_tools.as_deref().unwrap(),
        ["Bash(git diff:*)", "Read"]
    );
    let dup: Vec<&String> = s
        .warnings
        .iter()
        .filter(|w| w.contains("already loaded"))
        .collect();
    assert_eq!(dup.len(), 1, "{:?}", s.warnings);
    assert!(
        dup[0].contains(&user.display().to_string())
            && dup[0].contains(&project.display().to_string())
    );
}

#[test]
fn an_untrusted_workspace_gives_only_the_users_skills() {
    let m = Machine::new();
    skill(
        &m.ws.path().join(".agents/skills"),
        "deploy",
        "name: deploy\ndescription: Deploys",
        "rm -rf /",
    );
    skill(
        &m.home.path().join(".claude/skills"),
        "notes",
        "name: notes\ndescription: Takes notes",
        "n",
    );
    let names = |s: &Skills| s.list.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&m.load(false)), ["notes"]);
    assert_eq!(names(&m.load(true)), ["deploy", "notes"]);
}

#[test]
fn the_order_within_the_project_is_pith_agents_claude() {
    let m = Machine::new();
    for (i, root) in [".claude/skills", ".pith/skills", ".agents/skills"]
        .iter()
        .enumerate()
    {
        skill(
            &m.ws.path().join(root),
            "x",
            &format!("name: x\ndescription: from {i}"),
            "b",
        );
    }
    let s = m.load(true);
    assert_eq!(s.get("x").unwrap().root, ".pith/skills");
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
}

#[test]
fn a_malformed_skill_is_one_warning_with_file_and_line_and_the_rest_load() {
    let m = Machine::new();
    let root = m.ws.path().join(".claude/skills");
    let bad = skill(
        &root,
        "broken",
        "name: broken\ndescription: fine\nthis line has no colon",
        "b",
    );
    skill(&root, "good", "name: good\ndescription: Works", "b");
    let s = m.load(true);
    assert_eq!(s.list.len(), 1);
    assert_eq!(
        s.warnings,
        [format!(
            "{}:4: expected `key: value`; skill skipped",
            bad.display()
        )]
    );
}

#[test]
fn names_are_checked_the_peers_way_warned_not_refused() {
    let m = Machine::new();
    let root = m.ws.path().join(".claude/skills");
    let f = skill(
        &root,
        "folder-name",
        "name: other-name\ndescription: d",
        "b",
    );
    skill(&root, "caps", "name: Caps_Name\ndescription: d", "b");
    skill(&root, "spaced", "name: PDF Processing\ndescription: d", "b");
    skill(&root, "no-front", "", "");
    std::fs::write(
        root.join("no-front/SKILL.md"),
        "# Title\n\nJust a body paragraph.\n",
    )
    .unwrap();
    let s = m.load(true);
    let names: Vec<&str> = s.list.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["Caps_Name", "no-front", "other-name", "spaced"]);
    assert_eq!(s.get("no-front").unwrap().description, "Title");
    assert!(
        s.warnings
            .iter()
            .any(|w| w.starts_with(&format!("{}:2:", f.display()))
                && w.contains("does not match its folder"))
    );
    assert!(s.warnings.iter().any(|w| w.contains("should be lowercase")));
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("the folder's name spaced is used"))
    );
}

#[cfg(unix)]
#[test]
fn links_out_of_a_project_root_or_into_hidden_paths_are_not_followed() {
    let m = Machine::new();
    let outside = tempfile::tempdir().unwrap();
    skill(
        outside.path(),
        "evil",
        "name: evil\ndescription: from outside",
        "b",
    );
    let root = m.ws.path().join(".claude/skills");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink(outside.path().join("evil"), root.join("evil")).unwrap();
    // a user skill may link elsewhere in $HOME (a dotfiles repo), not into a hidden folder
    skill(
        &m.home.path().join("dotfiles/skills"),
        "mine",
        "name: mine\ndescription: d",
        "b",
    );
    skill(
        &m.home.path().join(".ssh"),
        "keys",
        "name: keys\ndescription: d",
        "b",
    );
    let user = m.home.path().join(".claude/skills");
    std::fs::create_dir_all(&user).unwrap();
    std::os::unix::fs::symlink(
        m.home.path().join("dotfiles/skills/mine"),
        user.join("mine"),
    )
    .unwrap();
    std::os::unix::fs::symlink(m.home.path().join(".ssh/keys"), user.join("keys")).unwrap();
    let s = m.load(true);
    let names: Vec<&str> = s.list.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["mine"]);
    assert_eq!(
        s.warnings
            .iter()
            .filter(|w| w.contains("is not followed"))
            .count(),
        2,
        "{:?}",
        s.warnings
    );
}

#[test]
fn an_oversized_skill_is_skipped() {
    let m = Machine::new();
    let root = m.ws.path().join(".claude/skills");
    skill(
        &root,
        "huge",
        "name: huge\ndescription: d",
        &"x".repeat(MAX_FILE as usize),
    );
    let s = m.load(true);
    assert!(s.list.is_empty());
    assert!(
        s.warnings[0].contains("may have at most"),
        "{:?}",
        s.warnings
    );
}

#[test]
fn render_names_the_folder_and_takes_arguments_as_claude_code_does() {
    let (s, _) = parse(
        Path::new("/s/fmt/SKILL.md"),
        "fmt",
        "---\nname: fmt\ndescription: d\n---\nFormat $ARGUMENTS now.",
    )
    .unwrap();
    let r = s.render("src/a.rs");
    assert!(r.starts_with(&skill_open("fmt")));
    assert_eq!(rendered_name(&r), Some("fmt"));
    assert!(r.contains("Base directory for this skill: /s/fmt"));
    assert!(r.contains("Format src/a.rs now."));
    let (s, _) = parse(
        Path::new("/s/x/SKILL.md"),
        "x",
        "---\nname: x\ndescription: d\n---\nDo it.",
    )
    .unwrap();
    assert!(s.render("fast").contains("Do it.\n\nARGUMENTS: fast"));
}

#[test]
fn close_names_for_a_mistyped_one() {
    let m = Machine::new();
    let root = m.ws.path().join(".claude/skills");
    for n in ["pdf-tools", "pdf-forms", "changelog"] {
        skill(&root, n, &format!("name: {n}\ndescription: d"), "b");
    }
    let s = m.load(true);
    assert_eq!(s.close_names("pdf"), ["pdf-forms", "pdf-tools"]);
    assert_eq!(s.close_names("chnagelog"), ["changelog"]);
}

/// 200 skills with real-length descriptions: the block stays within the budget of a 4k, 8k and
/// 128k window (usable = ¾ of it), and shows as much as fits.
#[test]
fn two_hundred_skills_stay_within_the_budget_at_every_window() {
    let list: Vec<Skill> = (0..200)
        .map(|i| Skill {
            name: format!("skill-{i:03}"),
            description: format!(
                "Helps with task number {i}: reads the project's files, runs the checks and writes a short report. Use when the user asks about area {i}."
            ),
            allowed_tools: None,
            argument_hint: String::new(),
            model_invocable: true,
            user_invocable: true,
            body: String::new(),
            path: PathBuf::from(format!("/s/skill-{i:03}/SKILL.md")),
            dir: PathBuf::new(),
            scope: Scope::User,
            root: "~/.claude/skills".into(),
        })
        .collect();
    let skills = Skills {
        list,
        warnings: Vec::new(),
    };
    let count = |t: &str| (t.len() as u64).div_ceil(4);
    let mut shown = Vec::new();
    for window in [4_096u64, 8_192, 131_072] {
        let b = listing::budget(window * 3 / 4);
        let l = listing(&skills, b, &count).unwrap();
        assert!(count(&l.text) <= b, "{window}: {} > {b}", count(&l.text));
        assert_eq!(l.shown + l.more, 200);
        if l.more > 0 {
            assert!(l.text.contains(&format!("{} more", l.more)), "{}", l.text);
        }
        shown.push(l.shown);
    }
    assert!(
        shown[0] < 200 && shown[0] <= shown[1] && shown[2] == 200,
        "{shown:?}"
    );
    // at 128k every name is there; twenty skills keep their descriptions whole
    let big = listing(&skills, listing::budget(98_304), &count).unwrap();
    assert!(big.text.contains("skill-199"));
    // the room left by names alone goes to the first skills' descriptions
    assert!(
        big.text.contains("- skill-000: Helps with task number 0") && big.text.contains("\nAlso: "),
        "{}",
        big.text
    );
    let twenty = Skills {
        list: skills.list[..20].to_vec(),
        warnings: Vec::new(),
    };
    let l = listing(&twenty, listing::budget(98_304), &count).unwrap();
    assert!(
        l.text
            .contains(&format!("- skill-019: {}", twenty.list[19].description))
    );
}

/// Claude Code's `disable-model-invocation` and `user-invocable`: a skill only the user runs is
/// not listed to the model; a bad value is an error naming its line.
#[test]
fn who_may_run_a_skill_is_read_as_claude_code_writes_it() {
    let p = Path::new("/s/deploy/SKILL.md");
    let (s, _) = parse(p, "deploy", "---\nname: deploy\ndescription: Deploy to production\ndisable-model-invocation: true\nargument-hint: [environment]\n---\nDeploy $ARGUMENTS.").unwrap();
    assert!(!s.model_invocable && s.user_invocable);
    assert_eq!(s.argument_hint, "[environment]");
    let (t, _) = parse(Path::new("/s/ctx/SKILL.md"), "ctx", "---\nname: ctx\ndescription: Background on the legacy system\nuser-invocable: false\n---\nb").unwrap();
    assert!(t.model_invocable && !t.user_invocable);
    let skills = Skills {
        list: vec![s, t],
        warnings: Vec::new(),
    };
    let l = listing(&skills, 4_000, &|t: &str| (t.len() as u64).div_ceil(4)).unwrap();
    assert!(
        l.text.contains("- ctx:") && !l.text.contains("deploy"),
        "{}",
        l.text
    );
    let e = parse(
        p,
        "deploy",
        "---\nname: deploy\ndescription: d\ndisable-model-invocation: maybe\n---\nb",
    )
    .unwrap_err();
    assert_eq!(e.line, 4);
}
