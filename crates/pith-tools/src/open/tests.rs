use std::io::{Read as _, Write as _};
use std::os::unix::fs::symlink;

use super::*;
use crate::testutil::Ws;

fn read_all(ws: &Ws, c: &Checked) -> io::Result<String> {
    let mut s = String::new();
    read(&ws.ctx.workspace, c)?.read_to_string(&mut s)?;
    Ok(s)
}

/// Both ways of opening: `openat2` and the walk a kernel without it takes.
fn both(test: impl Fn()) {
    test();
    #[cfg(target_os = "linux")]
    {
        sys::FORCE_WALK.with(|f| f.set(true));
        test();
        sys::FORCE_WALK.with(|f| f.set(false));
    }
}

#[test]
fn a_file_flipped_to_a_symlink_after_the_check_is_not_read() {
    both(|| {
        let ws = Ws::new();
        let key = ws.root().join("id_rsa");
        std::fs::write(&key, "PRIVATE KEY").unwrap();
        ws.write("f", "harmless");
        let c = Checked::now(&ws.ctx.workspace, "f");
        assert_eq!(read_all(&ws, &c).unwrap(), "harmless");
        // flipped between the check and the read
        std::fs::remove_file(ws.path("f")).unwrap();
        symlink(&key, ws.path("f")).unwrap();
        let err = read_all(&ws, &c).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
    });
}

#[test]
fn a_parent_flipped_to_a_symlink_is_not_walked_through() {
    both(|| {
        let ws = Ws::new();
        let outside = ws.root().join("data");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("trust.json"), "{}").unwrap();
        ws.write("d/trust.json", "{}");
        let c = Checked::now(&ws.ctx.workspace, "d/trust.json");
        std::fs::remove_dir_all(ws.path("d")).unwrap();
        symlink(&outside, ws.path("d")).unwrap();
        assert!(read_all(&ws, &c).is_err());
        assert!(write(&ws.ctx.workspace, &c, true).is_err());
        assert_eq!(
            std::fs::read_to_string(outside.join("trust.json")).unwrap(),
            "{}"
        );
        // a new file below the flipped directory is not created either
        std::fs::remove_file(ws.path("d")).unwrap();
        std::fs::create_dir(ws.path("d")).unwrap();
        let c2 = Checked::now(&ws.ctx.workspace, "d/new.json");
        std::fs::remove_dir(ws.path("d")).unwrap();
        symlink(&outside, ws.path("d")).unwrap();
        assert!(write(&ws.ctx.workspace, &c2, true).is_err());
        assert!(!outside.join("new.json").exists());
    });
}

#[test]
fn a_file_replaced_after_the_check_is_refused_by_identity() {
    let ws = Ws::new();
    ws.write("f", "checked");
    let c = Checked::now(&ws.ctx.workspace, "f");
    // replaced by another file (a rename over it): same name, another inode
    ws.write("g", "other");
    std::fs::rename(ws.path("g"), ws.path("f")).unwrap();
    let err = read_all(&ws, &c).unwrap_err().to_string();
    assert!(err.contains("changed after the permission check"), "{err}");
    let err = write(&ws.ctx.workspace, &c, false).unwrap_err().to_string();
    assert!(err.contains("changed"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.path("f")).unwrap(), "other");
}

#[test]
fn writes_create_parents_and_truncate_only_what_was_checked() {
    both(|| {
        let ws = Ws::new();
        let c = Checked::now(&ws.ctx.workspace, "a/b/new.txt");
        write(&ws.ctx.workspace, &c, true)
            .unwrap()
            .write_all(b"made")
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path("a/b/new.txt")).unwrap(),
            "made"
        );
        let c = Checked::now(&ws.ctx.workspace, "a/b/new.txt");
        write(&ws.ctx.workspace, &c, false)
            .unwrap()
            .write_all(b"new")
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path("a/b/new.txt")).unwrap(),
            "new"
        );
        // checked as missing, then planted: not overwritten
        let c = Checked::now(&ws.ctx.workspace, "late.txt");
        ws.write("late.txt", "planted");
        assert!(write(&ws.ctx.workspace, &c, false).is_err());
        assert_eq!(
            std::fs::read_to_string(ws.path("late.txt")).unwrap(),
            "planted"
        );
    });
}

#[test]
fn a_path_outside_is_walked_exactly_as_resolved() {
    both(|| {
        let ws = Ws::new();
        let outside = ws.root().join("out");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("notes"), "approved").unwrap();
        symlink(outside.join("notes"), ws.path("link")).unwrap();
        let c = Checked::now(&ws.ctx.workspace, "link");
        assert!(!c.resolved.inside);
        assert_eq!(c.resolved.path, outside.join("notes"));
        assert_eq!(read_all(&ws, &c).unwrap(), "approved");
        // the approved target's directory flipped to a link elsewhere: refused
        let other = ws.root().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("notes"), "SECRET").unwrap();
        std::fs::rename(&outside, ws.root().join("out.old")).unwrap();
        symlink(&other, &outside).unwrap();
        assert!(read_all(&ws, &c).is_err());
    });
}

#[test]
fn the_check_s_resolution_is_what_the_call_gets() {
    let ws = Ws::new();
    ws.write("f", "x");
    let r = resolve(&ws.ctx.workspace, "f");
    remember(&ws.ctx, "f", &r);
    assert_eq!(peek(&ws.ctx, "f").resolved, r);
    // another path than the one checked is resolved afresh
    assert_eq!(checked(&ws.ctx, "g").raw, "g");
    remember(&ws.ctx, "f", &r);
    let c = checked(&ws.ctx, "f");
    assert_eq!(c.seen, Identity::at(&ws.path("f")));
    // taken once
    assert!(ws.ctx.state.checked.lock().unwrap().is_empty());
}

#[test]
fn a_flood_of_checks_pushes_out_the_oldest_only() {
    let mut ws = Ws::new();
    ws.write("f", "x");
    let r = resolve(&ws.ctx.workspace, "f");
    ws.ctx.call_id = "first".into();
    remember(&ws.ctx, "f", &r);
    ws.ctx.call_id = "mine".into();
    remember(&ws.ctx, "f", &r);
    for i in 0..KEPT - 1 {
        ws.ctx.call_id = format!("flood{i}");
        remember(&ws.ctx, "f", &r);
    }
    let kept = ws.ctx.state.checked.lock().unwrap();
    assert!(!kept.by_call.contains_key("first"));
    assert!(kept.by_call.contains_key("mine"));
    assert_eq!(kept.by_call.len(), KEPT);
}
