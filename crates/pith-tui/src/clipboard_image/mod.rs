//! An image from the system clipboard (ctrl+v / alt+v, `/paste-image`): read with the tool of
//! the session (`wl-paste` under Wayland, `xclip` under X11, `osascript` on macOS — `pbpaste`
//! reads text only), checked to be an image by its bytes (the clipboard is anyone's), saved
//! private under `<data>/images` (`pith_config::images`) and attached as its `@path`, the way a
//! dropped image path is. Each tool runs bounded (`run.rs`); the TUI runs all of it off its
//! thread. Every way it can fail is one line for the transcript.

mod run;
#[cfg(test)]
pub(crate) mod tests;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pith_config::images::{ImageKind, SaveError};

pub use tools::ClipEnv;
use tools::{Backend, Pick};

/// What the TUI needs to paste images, handed in by the binary.
#[derive(Clone)]
pub struct ImageInput {
    /// Where pasted images are saved (`<data>/images`); `None`: images are not taken.
    pub dir: Option<PathBuf>,
    /// Does this "provider/model" take images (`pith_config::catalog::model_takes_images`)?
    pub takes_images: Arc<dyn Fn(&str) -> bool + Send + Sync>,
    /// The environment the clipboard is read in, asked at each paste.
    pub env: Arc<dyn Fn() -> ClipEnv + Send + Sync>,
}

impl ImageInput {
    /// Images saved under `data_dir`, read in this process's environment.
    pub fn new(data_dir: &Path, takes_images: Arc<dyn Fn(&str) -> bool + Send + Sync>) -> Self {
        ImageInput {
            dir: Some(pith_config::images::dir(data_dir)),
            takes_images,
            env: Arc::new(ClipEnv::from_process),
        }
    }
}

impl Default for ImageInput {
    /// No images (no data directory); ctrl+v still pastes text.
    fn default() -> Self {
        ImageInput {
            dir: None,
            takes_images: Arc::new(|_| false),
            env: Arc::new(ClipEnv::from_process),
        }
    }
}

impl std::fmt::Debug for ImageInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageInput")
            .field("dir", &self.dir)
            .finish()
    }
}

/// Text taken from the clipboard by ctrl+v at most (a larger one is refused, not cut).
const MAX_TEXT: usize = 1024 * 1024;
/// A type list read at most.
const MAX_LIST: usize = 64 * 1024;

/// What the clipboard held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clip {
    /// An image's bytes (not yet checked).
    Image(Vec<u8>),
    /// Text, when it was asked for and there is no image.
    Text(String),
    /// No image: `text` says whether it held text instead.
    NoImage { text: bool },
}

/// What a paste did, for the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pasted {
    /// Saved here: attach it.
    Image {
        path: PathBuf,
        kind: ImageKind,
        bytes: u64,
    },
    /// The clipboard held text (ctrl+v): paste it.
    Text(String),
    /// Nothing was attached; the line says why.
    Refused(String),
}

/// Reads the clipboard: its image, else (`want_text`) its text.
pub fn read(env: &ClipEnv, want_text: bool, limit: u64) -> Result<Clip, String> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    match tools::choose(env)? {
        Backend::Wayland(tool) => {
            let listed = run_tool(&tool, &["--list-types"], env, MAX_LIST)?;
            if !listed.success {
                return empty_or_failed("wl-paste", &listed);
            }
            let read =
                |ty: &str, limit| run_tool(&tool, &["--no-newline", "--type", ty], env, limit);
            by_type(
                "wl-paste",
                &tools::types(&listed.stdout),
                want_text,
                limit,
                read,
            )
        }
        Backend::X11(tool) => {
            let base = ["-selection", "clipboard", "-o", "-t"];
            let listed = run_tool(&tool, &[&base[..], &["TARGETS"]].concat(), env, MAX_LIST)?;
            if !listed.success {
                return empty_or_failed("xclip", &listed);
            }
            let read = |ty: &str, limit| run_tool(&tool, &[&base[..], &[ty]].concat(), env, limit);
            by_type(
                "xclip",
                &tools::types(&listed.stdout),
                want_text,
                limit,
                read,
            )
        }
        Backend::Mac { osascript, pbpaste } => {
            mac(&osascript, pbpaste.as_deref(), env, want_text, limit)
        }
    }
}

/// Reads the clipboard and saves its image in `dir`; what to attach or say. `refuse_images`:
/// the line that refuses an image found (the model takes none), before anything is saved.
pub fn paste(env: &ClipEnv, dir: &Path, want_text: bool, refuse_images: Option<&str>) -> Pasted {
    let limit = pith_config::images::MAX_BYTES;
    match read(env, want_text, limit) {
        Ok(Clip::Image(_)) if let Some(why) = refuse_images => Pasted::Refused(why.to_string()),
        Err(line) => Pasted::Refused(line),
        Ok(Clip::Text(text)) => Pasted::Text(text),
        Ok(Clip::NoImage { text: true }) => {
            Pasted::Refused("the clipboard holds no image (it holds text)".into())
        }
        Ok(Clip::NoImage { text: false }) => Pasted::Refused("the clipboard holds no image".into()),
        Ok(Clip::Image(bytes)) => match pith_config::images::save(dir, &bytes, limit) {
            Ok((path, kind)) => Pasted::Image {
                path,
                kind,
                bytes: bytes.len() as u64,
            },
            Err(SaveError::NotAnImage) => Pasted::Refused(
                "the clipboard's data is not a PNG, JPEG, GIF or WebP image: not attached".into(),
            ),
            Err(e) => Pasted::Refused(e.to_string()),
        },
    }
}

/// Runs a tool; the failures to start or finish as their line.
fn run_tool(
    tool: &Path,
    args: &[&str],
    env: &ClipEnv,
    limit: usize,
) -> Result<run::Output, String> {
    let name = tool.file_name().map_or_else(
        || tool.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    run::run(tool, args, env, limit).map_err(|e| match e {
        run::RunError::Spawn(e) => format!("{name} could not be started: {e}"),
        run::RunError::TimedOut => format!(
            "{name} did not answer within {} s: the clipboard was not read",
            env.timeout.as_secs_f32()
        ),
    })
}

/// A type list the tool would not give: an empty clipboard says so in its own words, anything
/// else is the tool's failure.
fn empty_or_failed(name: &str, out: &run::Output) -> Result<Clip, String> {
    let err = out.stderr.to_ascii_lowercase();
    let empty = [
        "no selection",
        "nothing is copied",
        "not available",
        "no suitable type",
    ]
    .iter()
    .any(|s| err.contains(s));
    if empty {
        Ok(Clip::NoImage { text: false })
    } else {
        Err(format!("{name} failed: {}", out.first_line()))
    }
}

/// Reads what the type list offers: an image, else text when wanted.
fn by_type(
    name: &str,
    types: &[String],
    want_text: bool,
    limit: usize,
    read: impl Fn(&str, usize) -> Result<run::Output, String>,
) -> Result<Clip, String> {
    match tools::pick(types) {
        Pick::Image(ty) => {
            let out = read(&ty, limit)?;
            if out.over {
                return Err(too_large(limit));
            }
            if !out.success {
                return Err(format!("{name} failed: {}", out.first_line()));
            }
            Ok(Clip::Image(out.stdout))
        }
        Pick::OtherImage(ty) => Err(format!(
            "the clipboard's image is {}: pith takes PNG, JPEG, GIF or WebP",
            pith_protocol::text::escape_one_line(&ty, 60)
        )),
        Pick::Text(ty) if want_text => {
            let out = read(&ty, MAX_TEXT)?;
            if out.over {
                return Err(format!(
                    "the clipboard's text is larger than {}: not pasted",
                    size_label(MAX_TEXT as u64)
                ));
            }
            if !out.success {
                return Err(format!("{name} failed: {}", out.first_line()));
            }
            Ok(Clip::Text(
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ))
        }
        Pick::Text(_) => Ok(Clip::NoImage { text: true }),
        Pick::Nothing => Ok(Clip::NoImage { text: false }),
    }
}

fn too_large(limit: usize) -> String {
    format!(
        "the clipboard's image is larger than {}: not attached",
        size_label(limit as u64)
    )
}

/// `312 B`, `48 KB`, `1.4 MB`.
pub fn size_label(bytes: u64) -> String {
    const KB: u64 = 1024;
    if bytes < KB {
        format!("{bytes} B")
    } else if bytes < KB * KB {
        format!("{} KB", (bytes + KB / 2) / KB)
    } else {
        let mb = format!("{:.1}", bytes as f64 / (KB * KB) as f64);
        format!("{} MB", mb.trim_end_matches(".0"))
    }
}

/// macOS: the clipboard as PNG through `osascript` (it prints the bytes in hex), else its text
/// through `pbpaste`.
fn mac(
    osascript: &Path,
    pbpaste: Option<&Path>,
    env: &ClipEnv,
    want_text: bool,
    limit: usize,
) -> Result<Clip, String> {
    let script = ["-e", "the clipboard as «class PNGf»"];
    // two hex digits a byte, and the `«data PNGf…»` around them
    let out = run_tool(
        osascript,
        &script,
        env,
        limit.saturating_mul(2).saturating_add(64),
    )?;
    if out.over {
        return Err(too_large(limit));
    }
    if out.success {
        return tools::osascript_png(&out.stdout)
            .map(Clip::Image)
            .ok_or_else(|| "osascript gave something that is not a PNG: not attached".into());
    }
    // -1700: the clipboard cannot be made into a PNG (it holds none)
    if !out.stderr.contains("-1700") {
        return Err(format!("osascript failed: {}", out.first_line()));
    }
    let Some(pbpaste) = pbpaste else {
        return Ok(Clip::NoImage { text: false });
    };
    let text = run_tool(pbpaste, &[], env, MAX_TEXT)?;
    let has_text = text.success && !text.stdout.is_empty();
    if want_text && has_text {
        if text.over {
            return Err(format!(
                "the clipboard's text is larger than {}: not pasted",
                size_label(MAX_TEXT as u64)
            ));
        }
        return Ok(Clip::Text(
            String::from_utf8_lossy(&text.stdout).into_owned(),
        ));
    }
    Ok(Clip::NoImage { text: has_text })
}
