//! An image a prompt attached, as a request carries it.

use base64::Engine;
use pith_protocol::llm::UserContent;

/// Images larger than this are not sent.
pub(crate) const MAX_IMAGE_BYTES: u64 = pith_config::images::MAX_BYTES;

/// The content of an attached image for a request: the image itself for a model that takes
/// images, else a note saying it was left out.
pub(crate) fn image_content(path: &str, mime: &str, images: bool) -> Option<UserContent> {
    let note = |why: &str| UserContent::Text {
        text: format!("[image {path} not sent: {why}]"),
    };
    if !images {
        return Some(note("this model does not take images"));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.len() > MAX_IMAGE_BYTES => return Some(note("larger than 5 MB")),
        Ok(_) => {}
        Err(_) => return Some(note("the file is gone")),
    }
    // read again when the request is built: never through a symlink swapped in meanwhile
    let read = pith_tools::open::read_exact(std::path::Path::new(path)).and_then(|mut f| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
    });
    match read {
        Ok(bytes) => Some(UserContent::Image {
            mime: mime.to_string(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }),
        Err(_) => Some(note("the file cannot be read")),
    }
}
