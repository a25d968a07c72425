//! `/copy`: the last answer, or one of its code blocks, to the system clipboard through the
//! terminal (OSC 52), which works over SSH. Inside tmux the sequence is sent both plainly (taken
//! by tmux with `set-clipboard on`) and wrapped for passthrough (`allow-passthrough on`).

use base64::Engine as _;
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use pith_protocol::message::{PartKind, Role};

use super::transcript::{CellBody, Transcript};

/// Terminals drop larger OSC 52 payloads (xterm's default limit is about this much).
pub const MAX_COPY_BYTES: usize = 100_000;

/// The OSC 52 sequence that puts `text` on the clipboard; `tmux`: also wrapped for passthrough.
pub fn osc52(text: &str, tmux: bool) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let plain = format!("\x1b]52;c;{b64}\x07");
    if tmux {
        format!("{plain}{}", tmux_passthrough(&plain)).into_bytes()
    } else {
        plain.into_bytes()
    }
}

/// `seq` wrapped so tmux hands it to the outer terminal: a DCS with every ESC doubled.
pub fn tmux_passthrough(seq: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

/// Running inside tmux?
pub fn in_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

/// The text of the newest assistant message that has any (its text parts joined).
pub fn last_answer(transcript: &Transcript) -> Option<String> {
    let mut message: Option<&str> = None;
    let mut parts: Vec<&str> = Vec::new();
    for cell in transcript.cells().iter().rev() {
        let CellBody::Part(part) = &cell.body else {
            continue;
        };
        let PartKind::Text { text, .. } = &part.kind else {
            continue;
        };
        let meta = transcript.meta_of(cell);
        if meta.role != Some(Role::Assistant) || meta.summary || text.trim().is_empty() {
            continue;
        }
        match message {
            None => message = Some(&part.message_id),
            Some(m) if m != part.message_id => break,
            Some(_) => {}
        }
        parts.push(text);
    }
    parts.reverse();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The fenced and indented code blocks of a Markdown text, in order.
pub fn code_blocks(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for ev in Parser::new(md) {
        match ev {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => out.extend(current.take()),
            Event::Text(t) => {
                if let Some(c) = &mut current {
                    c.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// What `/copy [N|url]` copies, or why nothing: the last answer, its Nth code block (from 1), or
/// the newest URL shown on a line of its own.
pub fn copy_target(transcript: &Transcript, arg: Option<&str>) -> Result<String, CopyError> {
    if arg.map(str::trim) == Some("url") {
        return last_url(transcript).ok_or(CopyError::NoUrl);
    }
    let answer = last_answer(transcript).ok_or(CopyError::NoAnswer)?;
    let Some(arg) = arg.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(answer);
    };
    let blocks = code_blocks(&answer);
    let n: usize = arg
        .parse()
        .map_err(|_| CopyError::NotANumber(arg.to_string()))?;
    match blocks.len() {
        0 => Err(CopyError::NoCodeBlocks),
        len if n == 0 || n > len => Err(CopyError::NoSuchBlock { len }),
        _ => Ok(blocks[n - 1].clone()),
    }
}

/// The newest web address pith showed on a line of its own in a notice (the URL `/mcp login`
/// asks to open), whole.
pub fn last_url(transcript: &Transcript) -> Option<String> {
    transcript.notice_urls(1).pop()
}

/// Why `/copy` copies nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CopyError {
    #[error("no answer to copy yet")]
    NoAnswer,
    #[error(
        "no web address to copy yet (`/copy url` copies the newest one pith showed, such as a sign-in URL)"
    )]
    NoUrl,
    #[error("/copy takes a code block number, not {0:?}")]
    NotANumber(String),
    #[error("the last answer has no code blocks")]
    NoCodeBlocks,
    #[error("the last answer has {len} code block{}: /copy 1…{len}", super::format::plural(*.len))]
    NoSuchBlock { len: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_bytes() {
        assert_eq!(osc52("hi", false), b"\x1b]52;c;aGk=\x07");
        assert_eq!(
            osc52("hi", true),
            b"\x1b]52;c;aGk=\x07\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\"
        );
    }

    #[test]
    fn code_blocks_in_order() {
        let md = "Intro\n\n```rust\nfn a() {}\n```\n\ntext\n\n    indented\n\n```\nb\nc\n```\n";
        assert_eq!(code_blocks(md), ["fn a() {}\n", "indented\n", "b\nc\n"]);
    }
}
