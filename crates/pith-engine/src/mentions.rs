//! `@path` in a prompt attaches that file (or lists that directory): the engine reads it through
//! the read tool — its permission rules (a deny holds; the mention itself is the user's consent
//! to what would be asked) and its truncation — and adds the result to the user's message as a
//! tool part, which the model reads as the user's own text. An image is attached as an image for
//! models that take them.
//!
//! A mention of a path outside the workspace (`@/abs/path`, `@~/…`, a symlink that leads out)
//! or through a symlink into a hidden path is attached only after a question naming where it
//! leads (the prompt may be piped text no one reviewed): headless, with no one to ask, it is
//! not attached (`--yes` answers yes, as it does for the model's reads), and the user is told.
//! Images the editor front end saved for a prompt (`<data>/acp/images`), images pasted from
//! the clipboard (`<data>/images`, `pith_config::images`) and the tool-output folder are
//! pith's own and attach freely. What is attached is read through the read tool,
//! which opens what its check resolved (`pith_tools::open`).

use serde_json::json;

use super::images::MAX_IMAGE_BYTES;
use crate::turn_context::Turn;
use pith_protocol::message::{Message, PartKind, Span, ToolState, new_id, now_ms};
use pith_protocol::tool::{Builtin, ReadExtent, ToolMetadata, ToolName};
use pith_tools::ToolContext;
use pith_tools::permission::Decision;

/// At most this many files attached by one prompt.
const MAX_MENTIONS: usize = 20;

/// The words of `text`, split at whitespace; a quoted mention (`@"a path/with spaces.png"`,
/// on one line) is one word, its quotes dropped. The TUI writes an image saved under a data
/// dir with a space in it (`~/Library/Application Support`) that way.
fn words(text: &str) -> Vec<std::borrow::Cow<'_, str>> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return out;
        }
        if let Some(q) = rest.strip_prefix("@\"")
            && let Some(end) = q.find(['"', '\n'])
            && q[end..].starts_with('"')
            && end > 0
        {
            out.push(format!("@{}", &q[..end]).into());
            rest = &q[end + 1..];
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push(rest[..end].into());
        rest = &rest[end..];
    }
}

/// The `@word`s of `text` that start a word, in order, without repeats; trailing punctuation
/// that is not part of an existing path is the sentence's, not the path's.
pub(crate) fn mentioned(text: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words(text) {
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

/// The byte spans of `text` the user did not type: the ones `pasted`, and every embedded
/// resource an editor sent (`<context uri=…>…</context>`, which the ACP front end writes and
/// whose text cannot close it early).
pub(crate) fn foreign_spans(text: &str, pasted: &[Span]) -> Vec<Span> {
    let mut spans: Vec<Span> = pasted.to_vec();
    let mut from = 0;
    while let Some(at) = text[from..].find("<context uri=") {
        let start = from + at;
        let end = text[start..]
            .find("</context>")
            .map_or(text.len(), |e| start + e + "</context>".len());
        spans.push((start, end));
        from = end;
    }
    spans
}

/// `text` with the `spans` blanked out: what the user typed.
fn typed_only(text: &str, spans: &[Span]) -> String {
    text.char_indices()
        .map(|(i, c)| {
            if spans.iter().any(|&(s, e)| i >= s && i < e) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// The mentions of `text`, each with whether it was found only in text the user did not type
/// (`pasted` spans, embedded resources): such a mention is not the user's consent.
pub(crate) fn mentions_with_origin(
    text: &str,
    pasted: &[Span],
    exists: impl Fn(&str) -> bool,
) -> Vec<(String, bool)> {
    let typed = mentioned(&typed_only(text, &foreign_spans(text, pasted)), &exists);
    mentioned(text, &exists)
        .into_iter()
        .map(|p| {
            let foreign = !typed.contains(&p);
            (p, foreign)
        })
        .collect()
}

/// The `@word`s of `text` that look like a path (a `/` in them, or a file name's extension) but
/// name nothing: they are told "not attached" as a binary file is, not dropped in silence.
/// `@team` or `@nowhere.` stay prose.
pub(crate) fn missing(text: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in words(text) {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        let path = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'', '`']);
        let name = path.rsplit('/').next().unwrap_or(path);
        let looks_like_path = path.contains('/')
            || name
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty());
        if looks_like_path
            && !exists(raw)
            && !exists(path)
            && !out.iter().any(|p| p == path)
            && out.len() < MAX_MENTIONS
        {
            out.push(path.to_string());
        }
    }
    out
}

impl Turn<'_> {
    /// Adds a part for every file `text` mentions to the user message `m`; `pasted` are the
    /// spans of `text` the user pasted.
    pub(crate) async fn attach_mentions(&mut self, m: &mut Message, text: &str, pasted: &[Span]) {
        let ws = self.opts.workspace.clone();
        let exists = |p: &str| pith_tools::path::resolve(&ws, p).path.exists();
        for path in missing(text, exists) {
            let now = now_ms();
            m.push(PartKind::Tool {
                call_id: format!("mention_{}", new_id()),
                tool: "read".into(),
                input: json!({ "file_path": path }),
                state: ToolState::Error {
                    message: "not attached: no such file or directory".into(),
                    start: Some(now),
                    end: Some(now),
                },
            });
        }
        let paths = mentions_with_origin(text, pasted, exists);
        for (path, foreign) in paths {
            let input = json!({ "file_path": path });
            let call_id = format!("mention_{}", new_id());
            let ctx = self.bare_context(&call_id, &tokio_util::sync::CancellationToken::new());
            let state = self.attach_one(m, &path, &input, &ctx, foreign).await;
            m.push(PartKind::Tool {
                call_id,
                tool: "read".into(),
                input,
                state,
            });
        }
    }

    /// Reads one mentioned file for `m`: the rules first (a deny holds; an ask is the
    /// mention's own consent when the user typed it — a `foreign` one, found only in pasted or
    /// embedded text, is asked about), then the question for a path outside the workspace,
    /// then the read tool on what the check resolved. An image is added to `m` as a file part.
    async fn attach_one(
        &mut self,
        m: &mut Message,
        path: &str,
        input: &serde_json::Value,
        ctx: &ToolContext,
        foreign: bool,
    ) -> ToolState {
        let start = now_ms();
        let error = |message: String| ToolState::Error {
            message,
            start: Some(start),
            end: Some(now_ms()),
        };
        match self.tools.check("read", input, ctx) {
            Decision::Deny { message } => return error(message),
            Decision::Ask(_) if foreign => {
                let why = "named in text you did not type (pasted, or an embedded resource), \
                           and the rules ask before reading it";
                if let Err(e) = self.ask_to_attach(path, why, &ctx.call_id).await {
                    tracing::debug!("mention not attached: {e}");
                    self.emit(pith_protocol::event::Event::info(format!(
                        "@{path} not attached: {why}"
                    )));
                    return error(format!("not attached: {why}"));
                }
            }
            _ => {}
        }
        // what the check resolved: the read acts on it, and the question names it
        let checked = pith_tools::open::peek(ctx, path);
        if let Some(why) = refused_mention(ctx, &checked)
            && let Err(e) = self.ask_to_attach(path, &why, &ctx.call_id).await
        {
            tracing::debug!("mention not attached: {e}");
            self.emit(pith_protocol::event::Event::info(format!(
                "@{path} not attached: {why}"
            )));
            return error(format!("not attached: {why}"));
        }
        let result = self
            .tools
            .registry()
            .execute("read", input.clone(), ctx)
            .await;
        if let Ok(out) = &result
            && let Some(ReadExtent::Image { mime: Some(mime) }) =
                ToolMetadata::read(&ToolName::Builtin(Builtin::Read), &out.metadata)
                    .and_then(|o| o.read_extent())
        {
            let abs = checked.resolved.path;
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

    /// The question before a mention outside the workspace is attached: `Err` when it is not
    /// (denied, or no one to ask).
    async fn ask_to_attach(
        &mut self,
        path: &str,
        why: &str,
        call_id: &str,
    ) -> Result<(), pith_tools::ToolError> {
        let request = pith_protocol::event::PermissionRequest {
            id: format!("perm_{}", new_id()),
            tool: "read".into(),
            call_id: call_id.to_string(),
            title: format!("attach @{path} to the prompt: {why}"),
            patterns: Vec::new(),
            agent: None,
        };
        let cancel = self.shared.current_cancel();
        self.ask(request, false, &cancel).await
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
    pub(crate) fn takes_images(&self) -> bool {
        pith_config::catalog::takes_images(
            self.model.info.images,
            self.model.provider.images_by_default(),
            &self.model.model_id,
        )
    }
}

/// Why the file the check resolved (`c`) is not attached without a question: it lies outside the workspace (named so, or
/// through a symlink), or a symlink leads from the workspace into a hidden path. Said with the
/// path it leads to.
pub(crate) fn refused_mention(ctx: &ToolContext, c: &pith_tools::open::Checked) -> Option<String> {
    let target = c.resolved.path.display();
    let own = [
        pith_tools::truncate::output_dir(&ctx.data_dir),
        ctx.data_dir.join("acp").join("images"),
        pith_config::images::dir(&ctx.data_dir),
    ];
    let ours = own
        .iter()
        .any(|d| pith_tools::path::is_under(&c.resolved.path, d));
    if !c.resolved.inside && !ours {
        return Some(format!("outside the workspace ({target})"));
    }
    pith_tools::open::leads_into_hidden(ctx, c)
        .then(|| format!("a symlink into a hidden path ({target})"))
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
        let spaced = |p: &str| matches!(p, "/data/Application Support/images/a.png" | "b.rs");
        assert_eq!(
            mentioned(
                "what is @\"/data/Application Support/images/a.png\"? and @b.rs, \
                 @\"b.rs @\"\" @\"/data/Application\nSupport/images/a.png\"",
                spaced
            ),
            ["/data/Application Support/images/a.png", "b.rs"],
            "a quoted mention is one word; an unclosed, empty or two-line one is not"
        );
        assert_eq!(
            missing(
                "see @src/a.rs, @src/b.rs @ghost.txt. @team @nowhere. @.env me@x.org @a/",
                exists
            ),
            ["src/b.rs", "ghost.txt", "a/"]
        );
    }

    #[test]
    fn mentions_only_in_pasted_or_embedded_text_are_foreign() {
        let exists = |p: &str| matches!(p, ".env" | "a.rs");
        let text = "fix @a.rs\n<context uri=\"file:///r.md\">\nsee @.env\n</context>";
        assert_eq!(
            mentions_with_origin(text, &[], exists),
            [("a.rs".to_string(), false), (".env".to_string(), true)]
        );
        let text = "fix @a.rs, pasted: @.env";
        let at = text.find("pasted").unwrap();
        assert_eq!(
            mentions_with_origin(text, &[(at, text.len())], exists),
            [("a.rs".to_string(), false), (".env".to_string(), true)]
        );
        // typed as well as pasted: the user's
        let text = "@.env pasted: @.env";
        let at = text.find("pasted").unwrap();
        assert_eq!(
            mentions_with_origin(text, &[(at, text.len())], exists),
            [(".env".to_string(), false)]
        );
    }

    #[test]
    fn mentions_outside_the_workspace_need_a_question_but_pith_s_own_files_do_not() {
        use pith_tools::open::Checked;
        let ws = pith_tools::testutil::Ws::new();
        let c = |raw: &str| Checked::now(&ws.ctx.workspace, raw);
        ws.write("inside.txt", "x");
        assert_eq!(refused_mention(&ws.ctx, &c("inside.txt")), None);
        let outside = ws.root().join("outside.txt");
        std::fs::write(&outside, "x").unwrap();
        let why = refused_mention(&ws.ctx, &c(&outside.to_string_lossy())).unwrap();
        assert!(why.starts_with("outside the workspace ("), "{why}");
        std::os::unix::fs::symlink(&outside, ws.path("link")).unwrap();
        assert!(refused_mention(&ws.ctx, &c("link")).is_some());
        if let Some(home) = std::env::var_os("HOME")
            && !ws.ctx.workspace.starts_with(&home)
        {
            assert!(refused_mention(&ws.ctx, &c("~/")).is_some());
        }
        // an image the editor front end saved for the prompt
        let image = ws.ctx.data_dir.join("acp/images/shot.png");
        std::fs::create_dir_all(image.parent().unwrap()).unwrap();
        std::fs::write(&image, "png").unwrap();
        assert_eq!(refused_mention(&ws.ctx, &c(&image.to_string_lossy())), None);
        // an image pasted from the clipboard in the TUI
        let pasted = pith_config::images::dir(&ws.ctx.data_dir).join("01j.png");
        std::fs::create_dir_all(pasted.parent().unwrap()).unwrap();
        std::fs::write(&pasted, "png").unwrap();
        assert_eq!(
            refused_mention(&ws.ctx, &c(&pasted.to_string_lossy())),
            None
        );
        // but not a folder beside it that only starts with its name
        let beside = ws.ctx.data_dir.join("images-other/x.png");
        std::fs::create_dir_all(beside.parent().unwrap()).unwrap();
        std::fs::write(&beside, "png").unwrap();
        assert!(refused_mention(&ws.ctx, &c(&beside.to_string_lossy())).is_some());
    }
}
