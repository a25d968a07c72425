//! Images the front ends save for a prompt (pasted from the clipboard in the TUI, sent as a
//! content block by an editor): what kind an image is by its first bytes (never by what its
//! source claims), and saving one under the data directory, private, under a random name, to be
//! attached as its `@path` mention. Shared by `pith-tui` and `pith-acp`; the engine attaches
//! files under [`dir`] without the question it asks for paths outside the workspace.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Images larger than this are not sent to a model (the engine leaves them out with a note), so
/// a front end does not take them either.
pub const MAX_BYTES: u64 = 5 * 1024 * 1024;

/// The image formats the providers take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    /// The kind `bytes` start as (their magic numbers), if any of the four.
    pub fn sniff(bytes: &[u8]) -> Option<ImageKind> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(ImageKind::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(ImageKind::Jpeg)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(ImageKind::Gif)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(ImageKind::Webp)
        } else {
            None
        }
    }

    /// The kind a MIME type names (`image/png`, `image/jpg`…).
    pub fn from_mime(mime: &str) -> Option<ImageKind> {
        match mime.trim().to_ascii_lowercase().as_str() {
            "image/png" => Some(ImageKind::Png),
            "image/jpeg" | "image/jpg" => Some(ImageKind::Jpeg),
            "image/gif" => Some(ImageKind::Gif),
            "image/webp" => Some(ImageKind::Webp),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::Png => "png",
            ImageKind::Jpeg => "jpg",
            ImageKind::Gif => "gif",
            ImageKind::Webp => "webp",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }
}

/// Where the TUI saves pasted images: `<data>/images`.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("images")
}

/// Why an image was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("the data is not a PNG, JPEG, GIF or WebP image")]
    NotAnImage,
    #[error("the image is larger than {} MB", .limit / (1024 * 1024))]
    TooLarge { limit: u64 },
    #[error("cannot save the image: {0}")]
    Io(#[from] std::io::Error),
}

/// Saves `bytes` in `dir` (made private when created) as `<random id>.<ext>`, readable by the
/// user alone, after checking they are an image of one of the four kinds and at most `limit`
/// bytes. The file is created new: nothing already there is followed or overwritten.
pub fn save(dir: &Path, bytes: &[u8], limit: u64) -> Result<(PathBuf, ImageKind), SaveError> {
    let kind = ImageKind::sniff(bytes).ok_or(SaveError::NotAnImage)?;
    if bytes.len() as u64 > limit {
        return Err(SaveError::TooLarge { limit });
    }
    make_dir(dir)?;
    let name = format!(
        "{}.{}",
        pith_protocol::message::new_id().to_ascii_lowercase(),
        kind.extension()
    );
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    let written = file.write_all(bytes).and_then(|_| file.sync_all());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&path);
        return Err(e.into());
    }
    Ok((path, kind))
}

/// Creates `dir` (0700 on Unix) when missing.
fn make_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest PNG there is: a 1×1 pixel.
    const PNG: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

    #[test]
    fn kinds_come_from_the_bytes_not_the_name() {
        assert_eq!(ImageKind::sniff(PNG), Some(ImageKind::Png));
        assert_eq!(
            ImageKind::sniff(b"\xff\xd8\xff\xe0JFIF"),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(ImageKind::sniff(b"GIF89a\x01\x00"), Some(ImageKind::Gif));
        assert_eq!(
            ImageKind::sniff(b"RIFF\x10\0\0\0WEBPVP8 "),
            Some(ImageKind::Webp)
        );
        assert_eq!(ImageKind::sniff(b"RIFF\x10\0\0\0WAVEfmt "), None);
        assert_eq!(ImageKind::sniff(b"<svg xmlns=...>"), None);
        assert_eq!(ImageKind::sniff(b"\x89PN"), None, "cut short");
        assert_eq!(ImageKind::sniff(b""), None);
        assert_eq!(ImageKind::from_mime("Image/JPG"), Some(ImageKind::Jpeg));
        assert_eq!(ImageKind::from_mime("image/tiff"), None);
    }

    #[test]
    fn saved_images_are_private_new_files_with_the_right_extension() {
        let data = tempfile::tempdir().unwrap();
        let dir = dir(data.path());
        let (a, kind) = save(&dir, PNG, MAX_BYTES).unwrap();
        let (b, _) = save(&dir, PNG, MAX_BYTES).unwrap();
        assert_eq!(kind, ImageKind::Png);
        assert_ne!(a, b, "each paste its own file");
        assert_eq!(a.parent(), Some(dir.as_path()));
        assert_eq!(a.extension().unwrap(), "png");
        assert_eq!(std::fs::read(&a).unwrap(), PNG);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&a), 0o600);
            assert_eq!(mode(&dir), 0o700);
        }
    }

    #[test]
    fn what_is_not_an_image_or_too_large_is_not_saved() {
        let data = tempfile::tempdir().unwrap();
        let dir = dir(data.path());
        assert!(matches!(
            save(&dir, b"#!/bin/sh\nrm -rf ~\n", MAX_BYTES),
            Err(SaveError::NotAnImage)
        ));
        let err = save(&dir, PNG, 10).unwrap_err();
        assert!(matches!(err, SaveError::TooLarge { limit: 10 }));
        let big = SaveError::TooLarge { limit: MAX_BYTES };
        assert_eq!(big.to_string(), "the image is larger than 5 MB");
        assert!(!dir.exists(), "nothing was written");
    }
}
