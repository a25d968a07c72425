//! Which clipboard tool to run, decided from the environment alone, and what their answers
//! mean: the type lists of `wl-paste --list-types` and `xclip -t TARGETS`, the `«data PNGf…»`
//! that `osascript` prints. No process is run here.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The variables a clipboard tool gets (with `PATH`): what finds the display and the user's
/// files, nothing else (no key reaches it).
const PASSED: [&str; 12] = [
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_TYPE",
    "DISPLAY",
    "XAUTHORITY",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
];

/// Where the clipboard is read from: handed in whole (tests build their own; nothing reads the
/// process environment behind their back).
#[derive(Debug, Clone)]
pub struct ClipEnv {
    /// Searched for the tools (relative entries are skipped: they would name the workspace).
    pub path: OsString,
    /// The variables the tools get besides `PATH` (see [`ClipEnv::from_process`]).
    pub vars: Vec<(String, OsString)>,
    /// Running on macOS (`osascript`).
    pub macos: bool,
    /// How long one tool may take.
    pub timeout: Duration,
}

impl ClipEnv {
    /// This process's environment, the display and home variables only.
    pub fn from_process() -> ClipEnv {
        ClipEnv {
            path: std::env::var_os("PATH").unwrap_or_default(),
            vars: PASSED
                .iter()
                .filter_map(|k| std::env::var_os(k).map(|v| (k.to_string(), v)))
                .collect(),
            macos: cfg!(target_os = "macos"),
            timeout: Duration::from_secs(3),
        }
    }

    pub(crate) fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_os_str())
    }

    /// The executable `name` in an absolute `PATH` directory.
    pub(crate) fn find(&self, name: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .filter(|d| d.is_absolute())
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// The tool that reads this clipboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    /// `wl-paste` (wl-clipboard), under a Wayland session.
    Wayland(PathBuf),
    /// `xclip`, under X11 (or XWayland when `wl-paste` is missing).
    X11(PathBuf),
    /// `osascript` for the image; `pbpaste` reads text only.
    Mac {
        osascript: PathBuf,
        pbpaste: Option<PathBuf>,
    },
}

/// The tool for `env`, or the line that says what to install.
pub(crate) fn choose(env: &ClipEnv) -> Result<Backend, String> {
    let wayland = env.var("WAYLAND_DISPLAY").is_some();
    let x11 = env.var("DISPLAY").is_some();
    if wayland && let Some(p) = env.find("wl-paste") {
        return Ok(Backend::Wayland(p));
    }
    if x11 && let Some(p) = env.find("xclip") {
        return Ok(Backend::X11(p));
    }
    if env.macos
        && let Some(osascript) = env.find("osascript")
    {
        return Ok(Backend::Mac {
            osascript,
            pbpaste: env.find("pbpaste"),
        });
    }
    Err(if wayland {
        "no clipboard tool: install wl-clipboard (wl-paste is not on PATH)".to_string()
    } else if x11 {
        "no clipboard tool: install xclip (it is not on PATH)".to_string()
    } else if env.macos {
        "no clipboard tool: osascript is not on PATH".to_string()
    } else {
        "no clipboard to read: neither WAYLAND_DISPLAY nor DISPLAY is set (over SSH, save the \
         image and paste its path)"
            .to_string()
    })
}

/// The types a clipboard offers, one a line (`wl-paste --list-types`, `xclip -t TARGETS`).
pub(crate) fn types(listing: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(listing)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// What the type list says to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pick {
    /// An image of a kind pith takes: this type.
    Image(String),
    /// Images only of kinds pith does not take (`image/bmp`, `image/tiff`): the first.
    OtherImage(String),
    /// No image; text in this type.
    Text(String),
    Nothing,
}

/// PNG first (what screenshot tools put there), then the other kinds pith takes, then text.
pub(crate) fn pick(types: &[String]) -> Pick {
    let lower: Vec<String> = types.iter().map(|t| t.to_ascii_lowercase()).collect();
    for want in [
        "image/png",
        "image/jpeg",
        "image/jpg",
        "image/webp",
        "image/gif",
    ] {
        if let Some(i) = lower.iter().position(|t| t == want) {
            return Pick::Image(types[i].clone());
        }
    }
    if let Some(t) = types
        .iter()
        .find(|t| t.to_ascii_lowercase().starts_with("image/"))
    {
        return Pick::OtherImage(t.clone());
    }
    for want in [
        "text/plain;charset=utf-8",
        "utf8_string",
        "text/plain",
        "string",
        "text",
    ] {
        if let Some(i) = lower.iter().position(|t| t == want) {
            return Pick::Text(types[i].clone());
        }
    }
    Pick::Nothing
}

/// The image in what `osascript -e 'the clipboard as «class PNGf»'` prints:
/// `«data PNGf89504E47…»`. `None` when it is not that.
pub(crate) fn osascript_png(out: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(out).ok()?.trim();
    let hex = text.strip_prefix("«data PNGf")?.strip_suffix('»')?;
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}
