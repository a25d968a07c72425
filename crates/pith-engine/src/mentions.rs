//! `@path` in a prompt attaches that file (or lists that directory): the engine reads it through
//! the read tool — its permission rules (a deny holds; the mention itself is the user's consent
//! to what would be asked) and its truncation — and adds the result to the user's message as a
//! tool part, which the model reads as the user's own text. An image is attached as an image for
//! models that take them.

use base64::Engine as _;
use serde_json::json;

use super::runner::Runner;
use pith_protocol::llm::UserContent;
use pith_protocol::message::{Message, PartKind, ToolState, new_id, now_ms};
use pith_protocol::tool::{ReadExtent, ToolOutcome};
use pith_tools::ToolContext;
use pith_tools::permission::Decision;

/// At most this many files attached by one prompt.
const MAX_MENTIONS: usize = 20;
/// Images larger than this are not sent.
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The `@word`s of `text` that start a word, in order, without repeats; trailing punctuation
/// that is not part of an existing path is the sentence's, not the path's.
pub fn mentioned(text: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        let mut path = raw;
        while !path.is_empty() && !exists(path) {
            match path.strip_suffix(['.', ',', ';', ':', '!', '?', ')', '"', '\'', '`']) {
                Some(p) => path = p,
                None => break,
            }
        }
        if !path.is_empty() && exists(path) && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
        if out.len() >= MAX_MENTIONS {
            break;
        }
    }
    out
}

impl Runner {
    /// Adds a part for every file `text` mentions to the user message `m`.
    pub(super) async fn attach_mentions(&mut self, m: &mut Message, text: &str) {
        let ws = self.opts.workspace.clone();
        let paths = mentioned(text, |p| pith_tools::path::resolve(&ws, p).path.exists());
        for path in paths {
            let input = json!({ "file_path": path });
            let call_id = format!("mention_{}", new_id());
            let ctx = ToolContext {
                workspace: self.opts.workspace.clone(),
                data_dir: self.opts.data_dir.clone(),
                session_id: self.log.session().id.clone(),
                call_id: call_id.clone(),
                cancel: tokio_util::sync::CancellationToken::new(),
                state: self.tools.state().clone(),
                output: self.tool_output(),
                outputs: None,
                progress: None,
                editor: self.opts.editor.clone(),
                read_only_commands: false,
            };
            let start = now_ms();
            let state = match self.tools.check("read", &input, &ctx) {
                Decision::Deny { message } => ToolState::Error {
                    message,
                    start: Some(start),
                    end: Some(now_ms()),
                },
                Decision::Allow | Decision::Ask(_) => {
                    let result = self
                        .tools
                        .registry()
                        .execute("read", input.clone(), &ctx)
                        .await;
                    if let Ok(out) = &result
                        && let Some(ReadExtent::Image { mime: Some(mime) }) =
                            ToolOutcome::of(&out.metadata).read
                    {
                        let abs = pith_tools::path::resolve(&ws, &path).path;
                        if let Some(why) = self.image_refused(&abs) {
                            self.emit(pith_protocol::event::Event::info(format!(
                                "{path} is not sent as an image: {why}"
                            )));
                        }
                        m.push(PartKind::File {
                            path: abs.to_string_lossy().into_owned(),
                            mime,
                        });
                    }
                    super::tool_exec::finished(result, start, now_ms())
                }
            };
            m.push(PartKind::Tool {
                call_id,
                tool: "read".into(),
                input,
                state,
            });
        }
    }

    /// Why an attached image will not reach the model, said to the user at once (the model
    /// gets a note in its place).
    fn image_refused(&self, path: &std::path::Path) -> Option<String> {
        if !self.takes_images() {
            return Some(format!(
                "{} does not take images (set images = true under [models.\"{}\"] if it does)",
                self.model.model_id,
                self.log.session().model
            ));
        }
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_IMAGE_BYTES => Some("larger than 5 MB".into()),
            _ => None,
        }
    }

    /// Does the session's model take images? The config says (`images`), else what is known
    /// of the model.
    pub(super) fn takes_images(&self) -> bool {
        self.model.info.images.unwrap_or_else(|| {
            let id = self.model.model_id.to_ascii_lowercase();
            self.model.provider.images_by_default()
                || [
                    "gpt-4o", "gpt-4.1", "gpt-5", "o3", "o4", "vision", "claude", "gemini",
                ]
                .iter()
                .any(|k| id.contains(k))
        })
    }
}

/// The content of an attached image for a request: the image itself for a model that takes
/// images, else a note saying it was left out.
pub fn image_content(path: &str, mime: &str, images: bool) -> Option<UserContent> {
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
    match std::fs::read(path) {
        Ok(bytes) => Some(UserContent::Image {
            mime: mime.to_string(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }),
        Err(_) => Some(note("the file cannot be read")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_that_name_existing_paths() {
        let exists = |p: &str| matches!(p, "src/a.rs" | "docs" | "notes.txt");
        assert_eq!(
            mentioned(
                "look at @src/a.rs, then @docs. mail me@x.org or @missing; @notes.txt @src/a.rs",
                exists
            ),
            ["src/a.rs", "docs", "notes.txt"]
        );
        assert!(mentioned("@", exists).is_empty());
    }
}
