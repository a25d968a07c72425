//! The anchor index (ARCHITECTURE.md §6.4): exact identifiers a later step is likely to need,
//! taken without a model from what leaves the view — file paths with line numbers, commands and
//! their exit status, error codes and first lines, URLs, hashes, ticket ids, ports, versions,
//! numbers the user typed — deduplicated, newest first, each with its recall id, within a
//! budget that scales with the window.

mod extract;

use std::collections::{HashMap, HashSet};

use pith_protocol::carried::{Anchor, AnchorKind};
use pith_protocol::message::{Carried, Message, PartKind, Role, ToolState};
use pith_protocol::tool::{ToolInput, ToolName};

use super::paste::{self, Piece, pasted_spans, user_text};
use super::tokens::Estimator;
use extract::{Scope, scan};

/// The most anchors of one kind considered before the index is bounded: forty paths of one
/// `ls` never crowd out the one error code.
pub const PER_KIND_MAX: usize = 16;

/// The heading of the rendered index.
pub const HEADER: &str = "\n## Exact identifiers that left the view (newest first; `recall` [id] brings back the source)";

/// The anchors of `summarised` (the messages leaving the view, oldest first) merged with the
/// `previous` compaction's (newer first wins), bounded to `budget` tokens as [`render`]ed.
pub fn index(
    summarised: &[Message],
    previous: &[Anchor],
    budget: u64,
    est: &Estimator,
) -> Vec<Anchor> {
    index_beyond(summarised, previous, budget, est, "")
}

/// [`index`] without the anchors `known` already holds word for word (what else pith carries
/// for good: the ledger, the frontier), so the budget goes to identifiers found nowhere else.
pub fn index_beyond(
    summarised: &[Message],
    previous: &[Anchor],
    budget: u64,
    est: &Estimator,
    known: &str,
) -> Vec<Anchor> {
    index_cached(
        summarised,
        previous,
        budget,
        est,
        known,
        &mut Cache::default(),
    )
}

/// The anchors each message yields, by message id: one plan measures its records over the
/// same messages many times (each tail it tries), and reads each message once.
pub type Cache = HashMap<String, Vec<Anchor>>;

/// [`index_beyond`] with what each message yields kept in `cache`.
pub fn index_cached(
    summarised: &[Message],
    previous: &[Anchor],
    budget: u64,
    est: &Estimator,
    known: &str,
    cache: &mut Cache,
) -> Vec<Anchor> {
    let mut found = Vec::new();
    for m in summarised {
        match cache.get(&m.id) {
            Some(of) => found.extend(of.iter().cloned()),
            None => {
                let mut of = Vec::new();
                anchors_of(m, &mut of);
                found.extend(of.iter().cloned());
                cache.insert(m.id.clone(), of);
            }
        }
    }
    found.reverse();
    let new = dedupe(found.into_iter().chain(previous.iter().cloned()))
        .into_iter()
        .filter(|a| known.is_empty() || !already_said(a, known))
        .collect();
    bound(new, budget, est)
}

/// Whether `known` holds `a` already: word for word, or for a command, its opening words (the
/// ledger cuts a long command, and says how it ended in its own words).
fn already_said(a: &Anchor, known: &str) -> bool {
    const OPENING_CHARS: usize = 60;
    if known.contains(a.text.as_str()) {
        return true;
    }
    if a.kind != AnchorKind::Command {
        return false;
    }
    let command = a.text.split(" → ").next().unwrap_or(&a.text);
    // a check the frontier lists, by the command as it keys it (no redirections, no filters)
    if let Some(check) = super::frontier::checks::recognise(command)
        && known.contains(&format!("`{}` →", check.normalised))
    {
        return true;
    }
    let opening: String = command.chars().take(OPENING_CHARS).collect();
    opening.chars().count() >= 12 && known.contains(&format!("`{opening}"))
}

/// The anchors of one message, in the order they appear (oldest first).
fn anchors_of(m: &Message, out: &mut Vec<Anchor>) {
    if m.summary || m.is_compaction_message() {
        return;
    }
    let push = |out: &mut Vec<Anchor>, found: Vec<extract::Found>, recall: &str| {
        out.extend(found.into_iter().map(|f| Anchor {
            kind: f.kind,
            text: f.text,
            recall: Some(recall.to_string()),
        }));
    };
    if m.role == Role::User {
        let Some(text) = user_text(m) else {
            return;
        };
        let mut n = 0;
        for piece in paste::pieces(&text, &pasted_spans(m)) {
            match piece {
                Piece::Words(w) => push(out, scan(&w, Scope::Words), &m.id),
                Piece::Block(b) => {
                    n += 1;
                    push(
                        out,
                        scan(&b.lines.join("\n"), Scope::Output),
                        &paste::recall_id(&m.id, n),
                    );
                }
            }
        }
        return;
    }
    for p in &m.parts {
        match &p.kind {
            PartKind::Text {
                text,
                synthetic: false,
            } => push(out, scan(text, Scope::Prose), &m.id),
            PartKind::Tool {
                call_id,
                tool,
                input,
                state,
            } => tool_anchors(call_id, tool, input, state, out),
            _ => {}
        }
    }
}

/// The anchors of one tool call: what it worked on (a file with the line it read from, a
/// command with how it ended, an address) and the error lines, paths with a line, URLs and
/// hashes of its output.
fn tool_anchors(
    call_id: &str,
    tool: &str,
    input: &serde_json::Value,
    state: &ToolState,
    out: &mut Vec<Anchor>,
) {
    let anchor = |kind, text: &str| Anchor {
        kind,
        text: extract::cut(text),
        recall: Some(call_id.to_string()),
    };
    let name = ToolName::parse(tool);
    let mut found = Vec::new();
    match ToolInput::of(&name, input) {
        ToolInput::Read {
            path: Some(p),
            offset,
        } => {
            let line = offset.filter(|&o| o > 1).map(|o| format!(":{o}"));
            found.push(anchor(
                AnchorKind::Path,
                &format!("{p}{}", line.unwrap_or_default()),
            ));
        }
        ToolInput::Edit { path: Some(p), .. }
        | ToolInput::Write { path: Some(p), .. }
        | ToolInput::Mcp { path: Some(p), .. } => found.push(anchor(AnchorKind::Path, p)),
        ToolInput::Fetch { url: Some(u) } => found.push(anchor(AnchorKind::Url, u)),
        ToolInput::Exec {
            command: Some(c), ..
        } if !c.trim().is_empty() => {
            let status = super::said::status(&name, state).map(|s| format!(" → {s}"));
            let said = super::said::last_said(state).map(|l| format!(": {l}"));
            let text = format!(
                "{}{}{}",
                one_line(c),
                status.unwrap_or_default(),
                said.unwrap_or_default()
            );
            found.push(anchor(AnchorKind::Command, &text));
            found.extend(
                scan(c, Scope::Command)
                    .into_iter()
                    .map(|f| anchor(f.kind, &f.text)),
            );
        }
        _ => {}
    }
    match state {
        ToolState::Completed { output, .. } => {
            found.extend(
                scan(output, Scope::Output)
                    .into_iter()
                    .map(|f| anchor(f.kind, &f.text)),
            );
        }
        ToolState::Error { message, .. } => {
            let lines = scan(message, Scope::Output);
            if !lines.iter().any(|f| f.kind == AnchorKind::Error) {
                let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                found.push(anchor(AnchorKind::Error, first));
            }
            found.extend(lines.into_iter().map(|f| anchor(f.kind, &f.text)));
        }
        _ => {}
    }
    out.extend(found.into_iter().filter(|a| !a.text.is_empty()));
}

/// A command's first line, marked `…` when it had more.
fn one_line(command: &str) -> String {
    let c = command.trim();
    let first = c.lines().next().unwrap_or("").trim();
    if c.lines().count() > 1 {
        format!("{first} …")
    } else {
        first.to_string()
    }
}

/// What makes two anchors the same: their kind and text — a command's without how it ended
/// (its newest run says how it stands).
fn key(a: &Anchor) -> (AnchorKind, &str) {
    let text = match a.kind {
        AnchorKind::Command => a.text.split(" → ").next().unwrap_or(&a.text),
        _ => &a.text,
    };
    (a.kind, text)
}

/// `anchors` (newest first) with each one's older repeats left out.
fn dedupe(anchors: impl IntoIterator<Item = Anchor>) -> Vec<Anchor> {
    let all: Vec<Anchor> = anchors.into_iter().collect();
    let mut seen = HashSet::new();
    let keep: Vec<bool> = all.iter().map(|a| seen.insert(key(a))).collect();
    all.into_iter()
        .zip(keep)
        .filter_map(|(a, k)| k.then_some(a))
        .collect()
}

/// At most [`PER_KIND_MAX`] of each kind; then the oldest of the most numerous kind is left
/// out until the rendered index fits `budget` tokens.
fn bound(mut anchors: Vec<Anchor>, budget: u64, est: &Estimator) -> Vec<Anchor> {
    let mut per_kind: HashMap<AnchorKind, usize> = HashMap::new();
    anchors.retain(|a| {
        let n = per_kind.entry(a.kind).or_default();
        *n += 1;
        *n <= PER_KIND_MAX
    });
    let fits = |kept: &[usize]| {
        let shown: Vec<Anchor> = kept.iter().map(|&i| anchors[i].clone()).collect();
        est.text(&render(&shown)) <= budget
    };
    // Each line as if alone: a bound on what it adds (lines of one source share their id).
    let costs: Vec<u64> = anchors.iter().map(|a| est.text(&line(&[a])) + 1).collect();
    let mut total = est.text(HEADER) + costs.iter().sum::<u64>();
    let mut kept: Vec<usize> = (0..anchors.len()).collect();
    let mut dropped = Vec::new();
    while total > budget
        && let Some(k) = oldest_of_most_numerous(kept.iter().map(|&i| &anchors[i]))
    {
        total -= costs[kept[k]];
        dropped.push(kept.remove(k));
    }
    while !fits(&kept)
        && let Some(k) = oldest_of_most_numerous(kept.iter().map(|&i| &anchors[i]))
    {
        dropped.push(kept.remove(k));
    }
    // What the bound dropped for ids its lines share may come back: the rarest kinds first,
    // newest first, while the section still fits.
    let count = |kind| kept.iter().filter(|&&i| anchors[i].kind == kind).count();
    let mut again: Vec<(usize, usize)> = dropped
        .iter()
        .map(|&i| (count(anchors[i].kind), i))
        .collect();
    again.sort_unstable();
    for (_, i) in again.into_iter().take(ADD_BACK_MAX) {
        let at = kept.partition_point(|&k| k < i);
        kept.insert(at, i);
        if !fits(&kept) {
            kept.remove(at);
        }
    }
    let mut kept = kept.into_iter().peekable();
    anchors
        .into_iter()
        .enumerate()
        .filter(|(i, _)| kept.next_if_eq(i).is_some())
        .map(|(_, a)| a)
        .collect()
}

/// How many dropped anchors [`bound`] tries to bring back.
const ADD_BACK_MAX: usize = 16;

/// The position (among `anchors`) of the oldest anchor of the kind with the most anchors (of
/// two as numerous, the one whose oldest is older).
fn oldest_of_most_numerous<'a>(anchors: impl Iterator<Item = &'a Anchor>) -> Option<usize> {
    let mut count: HashMap<AnchorKind, usize> = HashMap::new();
    let mut last: HashMap<AnchorKind, usize> = HashMap::new();
    for (i, a) in anchors.enumerate() {
        *count.entry(a.kind).or_default() += 1;
        last.insert(a.kind, i);
    }
    count
        .iter()
        .max_by_key(|(k, n)| (**n, last[*k]))
        .map(|(k, _)| last[k])
}

fn label(kind: AnchorKind) -> &'static str {
    match kind {
        AnchorKind::Path => "path",
        AnchorKind::Command => "command",
        AnchorKind::Error => "error",
        AnchorKind::Url => "url",
        AnchorKind::Hash => "hash",
        AnchorKind::Ticket => "ticket",
        AnchorKind::Port => "port",
        AnchorKind::Version => "version",
        AnchorKind::Number => "number",
        AnchorKind::Figure => "figure",
    }
}

/// One line of the index: anchors of one source, with its recall id.
fn line(group: &[&Anchor]) -> String {
    let items: Vec<String> = group
        .iter()
        .map(|a| format!("{}: {}", label(a.kind), a.text))
        .collect();
    match group.first().and_then(|a| a.recall.as_deref()) {
        Some(id) => format!("- [{id}] {}", items.join(" · ")),
        None => format!("- {}", items.join(" · ")),
    }
}

/// The anchors of `c` that its user's messages, carried word for word, do not already hold:
/// the ones rendered and listed to the summariser. (All stay in the record: a later
/// compaction that cuts those messages shows them again.)
pub fn beyond_words(c: &Carried) -> Vec<Anchor> {
    let words: Vec<&str> = c
        .user_messages
        .iter()
        .chain(&c.current_request)
        .map(String::as_str)
        .collect();
    c.anchors
        .iter()
        .filter(|a| !words.iter().any(|w| w.contains(a.text.as_str())))
        .cloned()
        .collect()
}

/// The anchors as the section pith appends after a summary; empty when there are none.
/// Neighbours from one source share a line.
pub fn render(anchors: &[Anchor]) -> String {
    if anchors.is_empty() {
        return String::new();
    }
    let mut out = String::from(HEADER);
    let mut group: Vec<&Anchor> = Vec::new();
    for a in anchors {
        if group.first().is_some_and(|g| g.recall != a.recall) {
            out.push('\n');
            out.push_str(&line(&group));
            group.clear();
        }
        group.push(a);
    }
    out.push('\n');
    out.push_str(&line(&group));
    out
}

/// The anchors as the summary request lists them: one per line, without recall ids.
pub fn list(anchors: &[Anchor]) -> String {
    anchors
        .iter()
        .map(|a| format!("- {}: {}", label(a.kind), a.text))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
