//! A page's HTML as Markdown, within bounds. Before `htmd` (whose walk recurses once per level
//! and whose parser checks scope over the whole stack of open elements) sees it, one linear
//! pass over the text (`clean`) drops what is not the page's content — scripts, styles and
//! their JSON data blobs (`__NEXT_DATA__`), `<noscript>`, `<template>`, `<svg>`, comments,
//! navigation and page banners — and flattens nesting past [`MAX_DEPTH`] (the text stays, the
//! tags go). The conversion runs on a thread of its own, off the async runtime, and the tool
//! stops waiting for it on an interrupt or at its deadline (the pass itself stops then too).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::ToolError;

/// Elements open at once that are kept; deeper start and end tags are dropped (text kept).
pub(super) const MAX_DEPTH: usize = 256;
/// How long a conversion may take.
pub(super) const DEADLINE: Duration = Duration::from_secs(10);
/// The conversion thread's stack: `htmd` recurses a few frames per level of nesting.
const STACK: usize = 64 * 1024 * 1024;

/// Dropped with everything inside them.
const DROPPED: [&str; 10] = [
    "script", "style", "noscript", "template", "svg", "nav", "aside", "iframe", "object", "canvas",
];
/// Dropped with their content unless inside an `<article>` or `<main>` (there they hold the
/// article's own title or notes, not the site's banner).
const BANNERS: [&str; 2] = ["header", "footer"];
/// Elements whose content is text up to their end tag, not markup.
const RAW_TEXT: [&str; 5] = ["textarea", "title", "xmp", "noembed", "noframes"];
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];
/// Elements a second one of closes when it is the innermost open one (`<li>a<li>b`).
const SELF_CLOSING_SIBLINGS: [&str; 8] = ["p", "li", "dt", "dd", "tr", "td", "th", "option"];

/// Why a conversion did not finish.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Stopped;

/// `html` as Markdown, off the async runtime, and whether what was left of it was cut at `max`
/// bytes: `Err(Interrupted)` as soon as `cancel` fires, an error past `deadline`.
pub(super) async fn to_markdown(
    html: String,
    max: usize,
    cancel: &CancellationToken,
    deadline: Duration,
) -> Result<(String, bool), ToolError> {
    let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let flag = stop.0.clone();
    let until = Instant::now() + deadline;
    std::thread::Builder::new()
        .name("pith-webfetch-html".into())
        .stack_size(STACK)
        .spawn(move || {
            let stopped = || flag.load(Ordering::Relaxed) || Instant::now() > until;
            let _ = tx.send(convert(&html, max, &stopped));
        })
        .map_err(|e| tool_err!("cannot start converting the page: {e}"))?;
    let too_long = || {
        tool_err!(
            "the page took more than {} s to convert to text; not read",
            deadline.as_secs()
        )
    };
    let result = tokio::select! {
        r = rx => match r {
            Ok(converted) => converted.map_err(|Stopped| too_long()),
            Err(_) => Err(tool_err!("the page's conversion failed")),
        },
        () = cancel.cancelled() => Err(ToolError::Interrupted),
        () = tokio::time::sleep(deadline) => Err(too_long()),
    };
    drop(stop);
    result
}

/// Tells the conversion thread to stop when the wait for it ends, however it ends (the tool's
/// future dropped on an interrupt included).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `html` cleaned, at most `max` bytes of what is left (about twice the text wanted: more
/// would only be converted to be cut), and converted, with whether it was cut; `Err` when
/// `stopped` says so during the clean-up.
pub(super) fn convert(
    html: &str,
    max: usize,
    stopped: &dyn Fn() -> bool,
) -> Result<(String, bool), Stopped> {
    let mut cleaned = clean(html, stopped)?;
    let cut = cleaned.len() > max;
    if cut {
        let mut end = max;
        while !cleaned.is_char_boundary(end) {
            end -= 1;
        }
        cleaned.truncate(end);
    }
    if stopped() {
        return Err(Stopped);
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(DROPPED.to_vec())
        .build();
    Ok((converter.convert(&cleaned).unwrap_or(cleaned), cut))
}

/// One tag as the pass reads it.
struct Tag<'a> {
    name: String,
    end: bool,
    self_closing: bool,
    /// The tag's whole text, `<` to `>`.
    text: &'a str,
}

/// `html` without what is not content, and no deeper than [`MAX_DEPTH`]: one pass, linear in
/// the input (times the depth bound for end tags), checking `stopped` as it goes.
pub(super) fn clean(html: &str, stopped: &dyn Fn() -> bool) -> Result<String, Stopped> {
    let mut pass = Pass {
        html,
        out: String::with_capacity(html.len() / 2),
        open: Vec::new(),
        dropping: None,
    };
    let mut i = 0;
    let mut steps = 0u32;
    while i < html.len() {
        steps = steps.wrapping_add(1);
        if steps.is_multiple_of(4096) && stopped() {
            return Err(Stopped);
        }
        let Some(lt) = html[i..].find('<').map(|n| i + n) else {
            pass.text(i, html.len());
            break;
        };
        pass.text(i, lt);
        i = pass.markup(lt);
    }
    Ok(pass.out)
}

/// The state of [`clean`]'s pass.
struct Pass<'a> {
    html: &'a str,
    out: String,
    /// The elements open, innermost last.
    open: Vec<String>,
    /// The element being dropped with its content, and the elements open inside it.
    dropping: Option<(String, Vec<String>)>,
}

impl Pass<'_> {
    /// Text from `from` to `to`, kept unless its element is dropped.
    fn text(&mut self, from: usize, to: usize) {
        if self.dropping.is_none() {
            self.out.push_str(&self.html[from..to]);
        }
    }

    /// The markup at `lt`, read; returns where the pass goes on.
    fn markup(&mut self, lt: usize) -> usize {
        let html = self.html;
        let rest = &html[lt..];
        if rest.starts_with("<!--") {
            return rest.find("-->").map_or(html.len(), |n| lt + n + 3);
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            return skip_to_gt(html, lt);
        }
        let Some(tag) = read_tag(html, lt) else {
            if self.dropping.is_none() {
                self.out.push_str("&lt;");
            }
            return lt + 1;
        };
        let after = lt + tag.text.len();
        let raw_text = !tag.end && !tag.self_closing && is_raw(&tag.name);
        if self.dropping.is_some() && self.dropped(&tag) {
            return if raw_text {
                end_of_raw(html, after, &tag.name).0
            } else {
                after
            };
        }
        if tag.end {
            if let Some(at) = self.open.iter().rposition(|n| *n == tag.name) {
                self.open.truncate(at);
                self.out.push_str(tag.text);
            }
            return after;
        }
        self.start_tag(tag, after, raw_text)
    }

    /// A tag inside a dropped element, followed; `false` when it ends the dropped element by
    /// closing one that was open around it (an end tag the dropped one's own end was left out
    /// before): then it is read as any other.
    fn dropped(&mut self, tag: &Tag<'_>) -> bool {
        let Some((name, inner)) = &mut self.dropping else {
            return false;
        };
        if !tag.end {
            let opens = !tag.self_closing && !VOID.contains(&tag.name.as_str());
            if opens && inner.len() < MAX_DEPTH {
                inner.push(tag.name.clone());
            }
            return true;
        }
        if let Some(at) = inner.iter().rposition(|n| *n == tag.name) {
            inner.truncate(at);
            return true;
        }
        if tag.name == *name {
            self.dropping = None;
            return true;
        }
        if self.open.contains(&tag.name) {
            self.dropping = None;
            return false;
        }
        true
    }

    /// A start tag whose text ends at `after` (outside a dropped element).
    fn start_tag(&mut self, tag: Tag<'_>, after: usize, raw_text: bool) -> usize {
        let html = self.html;
        if drops(&tag.name, &self.open) {
            if matches!(tag.name.as_str(), "script" | "style") {
                return end_of_raw(html, after, &tag.name).1;
            }
            if !tag.self_closing {
                self.dropping = Some((tag.name, Vec::new()));
            }
            return after;
        }
        if tag.name == "plaintext" {
            // the rest is text: the tag stays, so the parser reads it so too
            self.out.push_str(tag.text);
            self.out.push_str(&html[after..]);
            return html.len();
        }
        if raw_text {
            let (start_of_end, _) = end_of_raw(html, after, &tag.name);
            self.out.push_str(tag.text);
            self.out.push_str(&html[after..start_of_end]);
            self.open.push(tag.name);
            return start_of_end;
        }
        if VOID.contains(&tag.name.as_str()) || tag.self_closing {
            self.out.push_str(tag.text);
            return after;
        }
        if SELF_CLOSING_SIBLINGS.contains(&tag.name.as_str())
            && self.open.last().is_some_and(|n| *n == tag.name)
        {
            self.open.pop();
        }
        if self.open.len() >= MAX_DEPTH {
            // flattened: the words on either side stay apart
            self.out.push('\n');
        } else {
            self.out.push_str(tag.text);
            self.open.push(tag.name);
        }
        after
    }
}

fn is_raw(name: &str) -> bool {
    RAW_TEXT.contains(&name) || matches!(name, "script" | "style")
}

/// Whether a start tag `name` is dropped with its content, inside `open`.
fn drops(name: &str, open: &[String]) -> bool {
    DROPPED.contains(&name)
        || (BANNERS.contains(&name) && !open.iter().any(|n| n == "article" || n == "main"))
}

/// The index just past the `>` that ends the markup starting at `from` (the end of the text
/// when there is none).
fn skip_to_gt(html: &str, from: usize) -> usize {
    html[from..].find('>').map_or(html.len(), |n| from + n + 1)
}

/// Where the end tag of the raw-text element `name` whose content starts at `from` starts,
/// and the index just past it (both the end of the text when there is none).
fn end_of_raw(html: &str, from: usize, name: &str) -> (usize, usize) {
    let bytes = html.as_bytes();
    let mut at = from;
    while let Some(n) = html[at..].find("</") {
        let start = at + n;
        let after = start + 2;
        let matches = bytes
            .get(after..after + name.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(name.as_bytes()));
        let ends = bytes
            .get(after + name.len())
            .is_none_or(|&b| b == b'>' || b == b'/' || b.is_ascii_whitespace());
        if matches && ends {
            return (start, skip_to_gt(html, start));
        }
        at = after;
    }
    (html.len(), html.len())
}

/// The tag starting at `lt` (`<name …>` or `</name>`), reading quoted attribute values whole;
/// `None` when what follows `<` is not a tag (then `<` is text).
fn read_tag(html: &str, lt: usize) -> Option<Tag<'_>> {
    let bytes = html.as_bytes();
    let end = bytes.get(lt + 1) == Some(&b'/');
    let name_start = lt + 1 + usize::from(end);
    if !bytes.get(name_start)?.is_ascii_alphabetic() {
        return None;
    }
    let mut j = name_start;
    while j < bytes.len() && !matches!(bytes[j], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
    {
        j += 1;
    }
    let name = html[name_start..j].to_ascii_lowercase();
    let mut quote: Option<u8> = None;
    let mut k = j;
    while k < bytes.len() {
        let b = bytes[k];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => break,
            None => {}
        }
        k += 1;
    }
    let close = (k + 1).min(html.len());
    let text = &html[lt..close];
    Some(Tag {
        name,
        end,
        self_closing: !end && text.ends_with("/>"),
        text,
    })
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
