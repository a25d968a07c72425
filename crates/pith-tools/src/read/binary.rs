//! What `read` does not show as text: images (their kind and size) and binaries, told by the
//! extension or by a sample of the bytes.

use std::path::Path;

use pith_protocol::tool::{Marker, ReadMetadata};

use super::lossy;
use crate::truncate::human_bytes;
use crate::{ToolMeta, ToolOutput};

/// What the model is told of an image: its kind and size (its pixels are not text).
pub(super) fn image_output(path: &Path, shown: String, mime: &str, size: u64) -> ToolOutput {
    ToolOutput {
        title: shown.clone(),
        output: format!(
            "{shown} is an image ({mime}, {}). Its pixels cannot be shown as text.",
            human_bytes(size as usize)
        ),
        metadata: ReadMetadata::Image {
            path: lossy(path),
            mime: mime.to_string(),
            size,
            image: Marker,
        }
        .into(),
        meta: ToolMeta::default(),
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

pub(crate) fn image_mime(path: &Path) -> Option<&'static str> {
    Some(match extension(path).as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "ico" => "image/x-icon",
        "tif" | "tiff" => "image/tiff",
        "avif" => "image/avif",
        "heic" => "image/heic",
        _ => return None,
    })
}

pub(super) fn binary_extension(path: &Path) -> bool {
    matches!(
        extension(path).as_str(),
        "zip"
            | "gz"
            | "tgz"
            | "tar"
            | "bz2"
            | "xz"
            | "zst"
            | "7z"
            | "rar"
            | "exe"
            | "dll"
            | "so"
            | "dylib"
            | "o"
            | "a"
            | "lib"
            | "class"
            | "jar"
            | "war"
            | "wasm"
            | "pyc"
            | "pyo"
            | "bin"
            | "sqlite"
            | "db"
            | "woff"
            | "woff2"
            | "ttf"
            | "otf"
            | "eot"
            | "mp3"
            | "mp4"
            | "mov"
            | "avi"
            | "mkv"
            | "wav"
            | "flac"
            | "ogg"
            | "pdf"
            | "doc"
            | "docx"
            | "xls"
            | "xlsx"
            | "ppt"
            | "pptx"
            | "iso"
            | "dmg"
            | "deb"
            | "rpm"
            | "rlib"
            | "pdb"
    )
}

/// A NUL byte, or many control characters, in the first block means binary. Bytes ≥ 0x80 do
/// not count: text in a legacy encoding is still text.
pub(crate) fn looks_binary(sample: &[u8]) -> bool {
    if sample.is_empty() {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b | 0x08))
        .count();
    control * 10 > sample.len()
}
