use std::os::unix::fs::symlink;

use super::*;

#[test]
fn a_line_goes_into_a_new_memory_section_and_the_rest_stays_byte_for_byte() {
    assert_eq!(with_line("", "uses pnpm"), "## Memory\n\n- uses pnpm\n");
    let user = "# Rules\r\nTabs, not spaces.";
    assert_eq!(
        with_line(user, "uses pnpm"),
        "# Rules\r\nTabs, not spaces.\n\n## Memory\n\n- uses pnpm\n"
    );
}

#[test]
fn a_line_goes_at_the_end_of_the_existing_memory_section() {
    let before = "# P\n\n## Memory\n\n- one\n\n## Build\nmake\n";
    assert_eq!(
        with_line(before, "two"),
        "# P\n\n## Memory\n\n- one\n- two\n\n## Build\nmake\n"
    );
    // a `###` inside the section is part of it; the file's end closes it
    let before = "## Memory\n- one\n### detail\ntext";
    assert_eq!(
        with_line(before, "two"),
        "## Memory\n- one\n### detail\ntext\n- two\n"
    );
}

#[test]
fn lines_are_one_line_and_bounded() {
    assert_eq!(line("  use\n pnpm  ").unwrap(), "use pnpm");
    assert!(line("  \n").is_err());
    assert!(line(&"x".repeat(MAX_CHARS + 1)).is_err());
}

#[test]
fn the_project_file_is_agents_md_unless_only_claude_md_exists() {
    let ws = tempfile::tempdir().unwrap();
    let user = UserDirs::in_home(Path::new("/h"));
    let project = |ws: &Path| path(MemoryScope::Project, ws, &user).unwrap();
    assert_eq!(project(ws.path()), ws.path().join("AGENTS.md"));
    std::fs::write(ws.path().join("CLAUDE.md"), "c").unwrap();
    assert_eq!(project(ws.path()), ws.path().join("CLAUDE.md"));
    std::fs::write(ws.path().join("AGENTS.md"), "a").unwrap();
    assert_eq!(project(ws.path()), ws.path().join("AGENTS.md"));
    assert_eq!(
        path(MemoryScope::User, ws.path(), &user).unwrap(),
        Path::new("/h/.config/pith/AGENTS.md")
    );
}

#[test]
fn append_makes_the_file_and_its_folder_and_keeps_what_was_there() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".config/pith/AGENTS.md");
    append(&file, "first").unwrap();
    append(&file, "second").unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "## Memory\n\n- first\n- second\n"
    );
}

/// A memory file planted as a link to a secret elsewhere: nothing is written through it.
#[test]
fn append_refuses_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("authorized_keys");
    std::fs::write(&secret, "ssh-ed25519 AAAA").unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    symlink(&secret, ws.join("AGENTS.md")).unwrap();
    let e = append(&ws.join("AGENTS.md"), "x").unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "ssh-ed25519 AAAA"
    );
}
