//! From stored history to a model request (ARCHITECTURE.md §4.1–4.2).
//!
//! The model sees history from the latest *completed* compaction on: the user message holding the
//! Compaction part (sent as "What did we do so far?"), its summary, the verbatim tail the
//! compaction kept (`CompactionPart::tail_start`; stored *before* the compaction message), then
//! everything newer. Every function here accepts the messages either in storage order (tail before
//! the compaction message) or already in model order (tail moved after the summary, as
//! [`model_order`] produces): the tail is taken from before the compaction message only when it is
//! found there.

use std::ops::Range;

use pith_protocol::llm::{AssistantContent, ChatMessage, UserContent};
use pith_protocol::message::{Message, PartKind, Role, ToolState};
use pith_protocol::tool::{ToolInput, ToolName};
use serde_json::Value;

use super::COMPACTION_QUESTION;

/// How a message typed while the agent worked is sent (`{text}` is what the user typed).
const MID_TURN_TEMPLATE: &str = include_str!("../../../prompts/mid-turn.md");

/// A message the user typed while the agent worked, as the model receives it: inside a reminder
/// to address it and carry on. Applied when the request is built; the store keeps what was typed.
pub fn wrap_mid_turn(text: &str) -> String {
    MID_TURN_TEMPLATE.trim_end().replace("{text}", text)
}

/// What a pruned tool output is sent as: the start of [`cleared_tool_result`].
pub const CLEARED_TOOL_RESULT: &str = "[Old tool result content cleared]";

/// What a pruned tool output is sent as: a placeholder naming the call, so the model can bring
/// the output back with the `recall` tool (pruning never deletes it).
pub fn cleared_tool_result(call_id: &str) -> String {
    format!("{CLEARED_TOOL_RESULT} (recall id \"{call_id}\" brings it back)")
}
/// What a tool that never finished (pending/running when the step ended) is sent as.
pub const INTERRUPTED_TOOL_RESULT: &str = "[Tool execution was interrupted]";

/// Where the latest completed compaction sits in a list of messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionPoint {
    /// The user message holding the Compaction part.
    pub compaction: usize,
    /// Its finished summary (assistant, `summary == true`).
    pub summary: usize,
    /// First message of the verbatim tail when it is stored before `compaction`.
    pub tail: Option<usize>,
}

impl CompactionPoint {
    /// The first stored index the view needs (messages before it can be dropped from memory).
    pub fn first_needed(&self) -> usize {
        self.tail.unwrap_or(self.compaction).min(self.compaction)
    }
}

/// A summary that counts: finished, not errored.
pub fn is_completed_summary(m: &Message) -> bool {
    m.is_completed_summary()
}

/// A user message that exists only to hold a Compaction part.
pub fn is_compaction_message(m: &Message) -> bool {
    m.is_compaction_message()
}

/// A user message that starts a turn: typed by the user (not synthetic, not a compaction
/// request). The continue message after a compaction and other synthetic messages do not.
pub fn is_turn_start(m: &Message) -> bool {
    m.role == Role::User
        && m.compaction().is_none()
        && m.parts.iter().any(|p| match &p.kind {
            PartKind::Text { synthetic, .. } => !synthetic,
            PartKind::File { .. } => true,
            _ => false,
        })
}

/// Finds the latest completed compaction in `messages[lo..]`, scanning from the end: a user
/// message with a Compaction part followed (anywhere later) by a finished summary answering it
/// (`parent_id`), or — when the summary carries no parent — the nearest compaction message
/// before it. Cost: the number of messages after the point.
pub fn compaction_point_from(messages: &[Message], lo: usize) -> Option<CompactionPoint> {
    // The newest completed summary seen so far while walking back: (index, parent id).
    let mut summary: Option<(usize, Option<&str>)> = None;
    for i in (lo..messages.len()).rev() {
        let m = &messages[i];
        if is_completed_summary(m) && summary.is_none() {
            summary = Some((i, m.parent_id.as_deref()));
            continue;
        }
        if let Some((s, parent)) = summary
            && is_compaction_message(m)
            && parent.is_none_or(|p| p == m.id)
        {
            let tail = m
                .compaction()
                .and_then(|c| c.tail_start.as_deref())
                .and_then(|id| (0..i).rev().find(|&j| messages[j].id == id));
            return Some(CompactionPoint {
                compaction: i,
                summary: s,
                tail,
            });
        }
    }
    None
}

/// The latest completed compaction point, if any.
pub fn compaction_point(messages: &[Message]) -> Option<CompactionPoint> {
    compaction_point_from(messages, 0)
}

/// Index of the user message holding the latest completed compaction, else 0.
/// (With a verbatim tail stored before it, [`CompactionPoint::first_needed`] is where the
/// messages the view needs begin.)
pub fn view_start(messages: &[Message]) -> usize {
    compaction_point(messages).map_or(0, |p| p.compaction)
}

/// The incremental form: keeps the compaction point between steps and only looks at messages
/// after it for a newer one, so finding the view never rescans the session.
#[derive(Debug, Clone, Default)]
pub struct ViewPointer {
    point: Option<CompactionPoint>,
    /// Id of the compaction message, to notice when indices no longer match.
    id: Option<String>,
}

impl ViewPointer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Brings the pointer up to date with `messages` (appended to or updated in place since the
    /// last call; if messages were removed before the point, it notices and rescans).
    pub fn refresh(&mut self, messages: &[Message]) -> Option<CompactionPoint> {
        let valid = match (&self.point, &self.id) {
            (Some(p), Some(id)) => messages.get(p.compaction).is_some_and(|m| &m.id == id),
            (None, None) => true,
            _ => false,
        };
        let lo = match (valid, self.point) {
            (true, Some(p)) => p.compaction + 1,
            _ => {
                self.point = None;
                self.id = None;
                0
            }
        };
        if let Some(p) = compaction_point_from(messages, lo) {
            self.id = Some(messages[p.compaction].id.clone());
            self.point = Some(p);
        }
        self.point
    }

    pub fn point(&self) -> Option<CompactionPoint> {
        self.point
    }

    /// Adjusts the pointer after the first `n` messages were dropped from the list.
    pub fn rebase(&mut self, n: usize) {
        if let Some(p) = &mut self.point {
            if p.compaction < n || p.summary < n {
                self.point = None;
                self.id = None;
                return;
            }
            p.compaction -= n;
            p.summary -= n;
            p.tail = p.tail.and_then(|t| t.checked_sub(n));
        }
    }

    /// The view in model order (see [`view`]).
    pub fn view<'a>(&self, messages: &'a [Message]) -> Vec<&'a Message> {
        view_with(messages, self.point)
    }
}

/// The ranges of `messages` that make up the view, in model order: `(head, tail, rest)` where
/// head is the compaction message and its summary, tail the verbatim tail stored before the
/// compaction message, rest everything after the compaction message (the summary and stray
/// compaction/summary messages are filtered out by [`in_body`]).
pub(crate) fn view_ranges(
    len: usize,
    point: Option<CompactionPoint>,
) -> (Option<(usize, usize)>, Range<usize>, Range<usize>) {
    match point {
        None => (None, 0..0, 0..len),
        Some(p) => (
            Some((p.compaction, p.summary)),
            p.tail.map_or(0..0, |t| t..p.compaction),
            p.compaction + 1..len,
        ),
    }
}

/// Whether a message in the tail/rest ranges belongs to the view body: earlier (or unfinished)
/// compaction messages and summaries never do — only the latest summary is ever in context.
pub(crate) fn in_body(m: &Message, i: usize, point: Option<CompactionPoint>) -> bool {
    if point.is_some_and(|p| p.summary == i) {
        return false;
    }
    !(is_compaction_message(m) || (m.role == Role::Assistant && m.summary))
}

/// The messages the model sees, in model order, given the compaction point.
pub fn view_with(messages: &[Message], point: Option<CompactionPoint>) -> Vec<&Message> {
    let (head, tail, rest) = view_ranges(messages.len(), point);
    let mut out = Vec::new();
    if let Some((c, s)) = head {
        out.push(&messages[c]);
        out.push(&messages[s]);
    }
    for i in tail.chain(rest) {
        if in_body(&messages[i], i, point) {
            out.push(&messages[i]);
        }
    }
    out
}

/// The messages the model sees, in model order.
pub fn view(messages: &[Message]) -> Vec<&Message> {
    view_with(messages, compaction_point(messages))
}

/// Puts messages into model order (owned): the compaction message and its summary, the verbatim
/// tail, then every later message (including a compaction still being processed; [`to_chat`]
/// leaves such messages out). Messages before the view are dropped. Without a completed
/// compaction the messages are returned as they are.
pub fn model_order(messages: Vec<Message>) -> Vec<Message> {
    let point = compaction_point(&messages);
    let (head, tail, rest) = view_ranges(messages.len(), point);
    let mut order: Vec<usize> = Vec::new();
    if let Some((c, s)) = head {
        order.push(c);
        order.push(s);
    }
    for i in tail {
        if in_body(&messages[i], i, point) {
            order.push(i);
        }
    }
    for i in rest {
        if point.is_none_or(|p| p.summary != i) {
            order.push(i);
        }
    }
    let mut slots: Vec<Option<Message>> = messages.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// History → wire messages: the view of `messages`, converted by the rules of ARCHITECTURE.md §4.2.
/// File parts are left out (see [`to_chat_with`] to attach images).
pub fn to_chat(messages: &[Message]) -> Vec<ChatMessage> {
    to_chat_with(messages, &mut |_, _| None)
}

/// [`to_chat`] with a resolver for File parts (`path`, `mime`) → content (e.g. an image read from
/// disk by the caller). Text files and directories are expected beside the File part as
/// (synthetic) text parts, as the engine adds them; the resolver is asked anyway.
pub fn to_chat_with(
    messages: &[Message],
    files: &mut dyn FnMut(&str, &str) -> Option<UserContent>,
) -> Vec<ChatMessage> {
    let v = view(messages);
    convert(&v, files)
}

/// Converts messages that are already the view (model order) to wire messages.
pub fn convert(
    view: &[&Message],
    files: &mut dyn FnMut(&str, &str) -> Option<UserContent>,
) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(view.len() * 2);
    for m in view {
        match m.role {
            Role::User => convert_user(m, files, &mut out),
            Role::Assistant => convert_assistant(m, &mut out),
        }
    }
    out
}

fn convert_user(
    m: &Message,
    files: &mut dyn FnMut(&str, &str) -> Option<UserContent>,
    out: &mut Vec<ChatMessage>,
) {
    let mut content = Vec::new();
    for p in &m.parts {
        match &p.kind {
            PartKind::Text { text, .. } if !text.is_empty() => {
                let text = if m.mid_turn {
                    wrap_mid_turn(text)
                } else {
                    text.clone()
                };
                content.push(UserContent::Text { text })
            }
            PartKind::Compaction(_) => content.push(UserContent::Text {
                text: COMPACTION_QUESTION.to_string(),
            }),
            PartKind::File { path, mime } => {
                if let Some(c) = files(path, mime) {
                    content.push(c);
                }
            }
            PartKind::Tool {
                call_id,
                tool,
                input,
                state,
            } => content.push(UserContent::Text {
                text: user_tool_text(call_id, tool, input, state),
            }),
            _ => {}
        }
    }
    if !content.is_empty() {
        out.push(ChatMessage::User { content });
    }
}

/// A tool the user ran themselves (a file attached with `@`, a command run with `!`), as the
/// text the model reads in the user's message.
fn user_tool_text(call_id: &str, tool: &str, input: &Value, state: &ToolState) -> String {
    let name = ToolName::parse(tool);
    let asked = ToolInput::of(&name, input);
    let path = asked.path().unwrap_or_default();
    let (result, is_error) = tool_result(call_id, state);
    match (asked, is_error) {
        (ToolInput::Read { .. }, false) => {
            format!("[The user attached {path} (read with the read tool)]\n{result}")
        }
        (ToolInput::Read { .. }, true) => format!("[The user tried to attach {path}: {result}]"),
        (ToolInput::Exec { command }, _) => format!(
            "[The user ran this command in the shell themselves]\n$ {}\n{result}",
            command.unwrap_or_default()
        ),
        _ => format!("[The user ran the {tool} tool: {input}]\n{result}"),
    }
}

fn convert_assistant(m: &Message, out: &mut Vec<ChatMessage>) {
    let mut content: Vec<AssistantContent> = Vec::new();
    let mut results: Vec<ChatMessage> = Vec::new();
    let flush = |content: &mut Vec<AssistantContent>,
                 results: &mut Vec<ChatMessage>,
                 out: &mut Vec<ChatMessage>| {
        if !content.is_empty() {
            out.push(ChatMessage::Assistant {
                content: std::mem::take(content),
            });
            out.append(results);
        }
    };
    for p in &m.parts {
        match &p.kind {
            // A new step in the same message: the previous step's calls get their results first.
            PartKind::StepStart => flush(&mut content, &mut results, out),
            PartKind::Text { text, .. } if !text.is_empty() => {
                content.push(AssistantContent::Text { text: text.clone() })
            }
            PartKind::Reasoning {
                text,
                signature,
                redacted,
            } if !m.summary && (!text.is_empty() || redacted.is_some()) => {
                content.push(AssistantContent::Reasoning {
                    text: text.clone(),
                    signature: signature.clone(),
                    redacted: redacted.clone(),
                })
            }
            // the provider's own search: it ran there, and the answer that follows says what
            // it found; there is no call to send back
            PartKind::Tool { tool, state, .. }
                if pith_protocol::tool::is_hosted_search(tool, state) => {}
            PartKind::Tool {
                call_id,
                tool,
                input,
                state,
            } => {
                content.push(AssistantContent::ToolCall {
                    id: call_id.clone(),
                    name: tool.clone(),
                    input: input.clone(),
                });
                let (text, is_error) = tool_result(call_id, state);
                results.push(ChatMessage::ToolResult {
                    call_id: call_id.clone(),
                    content: text,
                    is_error,
                });
            }
            _ => {}
        }
    }
    // An errored (or empty) assistant message with no content is skipped entirely.
    flush(&mut content, &mut results, out);
}

/// The result a tool part sends: its output, the pruned placeholder (naming `call_id`), its
/// error, or the interrupted placeholder (providers require a result for every call).
pub fn tool_result(call_id: &str, state: &ToolState) -> (String, bool) {
    match state {
        ToolState::Completed { output, time, .. } => {
            if time.compacted.is_some() {
                (cleared_tool_result(call_id), false)
            } else {
                (output.clone(), false)
            }
        }
        ToolState::Error { message, .. } => (message.clone(), true),
        ToolState::Pending | ToolState::Running { .. } => {
            (INTERRUPTED_TOOL_RESULT.to_string(), true)
        }
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
