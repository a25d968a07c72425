//! What left the view (ARCHITECTURE.md §6.4, §8): the list of the items the last compaction
//! took out of the model's request (a picker, grouped by kind, newest first) and one of them in
//! full, as the engine's `Recalled` answers `Op::Recall` (a scrollable popup; esc goes back to
//! the list).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use pith_protocol::carried::{LeftItem, LeftKind};
use pith_protocol::message::{CompactionPart, LeftView, PartKind};

use crate::component::{Component, Handled};
use crate::keymap::{Action, Context, Keymap, key_of};
use crate::picker::{PickItem, Picker, PickerKind};
use crate::theme::theme;
use crate::transcript::Transcript;

/// The kinds in the order the list groups them.
const GROUPS: [LeftKind; 4] = [
    LeftKind::UserMessage,
    LeftKind::Reply,
    LeftKind::ToolOutput,
    LeftKind::Paste,
];

fn kind_name(k: LeftKind) -> &'static str {
    match k {
        LeftKind::UserMessage => "your message",
        LeftKind::Reply => "reply",
        LeftKind::ToolOutput => "tool output",
        LeftKind::Paste => "paste",
    }
}

/// What the newest compaction on screen says left the view, if any compaction is there.
pub(crate) fn newest(t: &Transcript) -> Option<&LeftView> {
    t.cells()
        .iter()
        .rev()
        .find_map(|c| match c.part().map(|p| &p.kind) {
            Some(PartKind::Compaction(c)) => Some(c.carried.left_view.as_ref()),
            _ => None,
        })?
}

/// The list's entries: grouped by kind (your messages, replies, tool outputs, pastes), each
/// group newest first as the record lists them.
pub(crate) fn entries(items: &[LeftItem]) -> Vec<PickItem> {
    GROUPS
        .iter()
        .flat_map(|g| items.iter().filter(move |i| i.kind == *g))
        .map(|i| PickItem {
            id: i.id.clone(),
            label: format!(
                "{} · {}",
                kind_name(i.kind),
                pith_protocol::text::one_line(&i.label)
            ),
            detail: if i.tokens > 0 {
                format!("{} · {} tokens", i.id, crate::format::tokens(i.tokens))
            } else {
                i.id.clone()
            },
        })
        .collect()
}

/// The list of what left the view, or why there is none.
pub(crate) fn list(t: &Transcript) -> Result<Picker, &'static str> {
    let Some(left) = newest(t) else {
        return Err("nothing has left the view: no compaction in this session yet");
    };
    let items = listed(left);
    if items.is_empty() {
        return Err("this compaction's record lists no items (the summary covers them)");
    }
    Ok(Picker::new(PickerKind::Left, entries(&items), 0))
}

/// The items a record lists; a record written before items were listed names its newest tool
/// calls only (oldest first there).
pub(crate) fn listed(left: &LeftView) -> Vec<LeftItem> {
    if !left.items.is_empty() {
        return left.items.clone();
    }
    left.recallable
        .iter()
        .rev()
        .map(|(id, tool, title)| LeftItem {
            id: id.clone(),
            kind: LeftKind::ToolOutput,
            label: format!("{tool} {title}"),
            tokens: 0,
        })
        .collect()
}

/// Items an unfolded divider lists before it says how many more there are.
const UNFOLDED_ITEMS: usize = 12;

/// The divider unfolded (click, `expand_all`): what left the view, grouped, newest first, each
/// with its recall id, and the key that opens one.
pub(crate) fn unfolded(c: &CompactionPart, width: usize) -> Vec<Line<'static>> {
    let Some(left) = c.carried.left_view.as_ref() else {
        return Vec::new();
    };
    let entries = entries(&listed(left));
    if entries.is_empty() {
        return Vec::new();
    }
    let dim = Style::default().fg(theme().dim);
    let key = crate::keymap::left_key();
    let head = if key.is_empty() {
        "  left the view:".to_string()
    } else {
        format!("  left the view ({key} opens one):")
    };
    let mut out = vec![Line::from(Span::styled(
        crate::format::truncate(&head, width),
        dim,
    ))];
    for e in entries.iter().take(UNFOLDED_ITEMS) {
        out.push(Line::from(Span::styled(
            crate::format::truncate(&format!("  · {} — {}", e.label, e.id), width),
            dim,
        )));
    }
    if entries.len() > UNFOLDED_ITEMS {
        out.push(Line::from(Span::styled(
            format!("  … {} more", entries.len() - UNFOLDED_ITEMS),
            dim,
        )));
    }
    out
}

/// Where an item shown in full stands.
#[derive(Debug, Clone, PartialEq)]
enum Shown {
    /// Asked for; the engine has not answered yet.
    Waiting,
    /// Its text, sanitised for the screen.
    Text { kind: String, text: String },
    /// The session holds nothing under the id.
    Missing,
}

/// One item that left the view, in full: scrolled with the list keys, esc back to the list.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallView {
    id: String,
    label: String,
    shown: Shown,
    scroll: usize,
    /// The last draw's height and the text's rows, to keep the scroll in bounds.
    page: usize,
    rows: usize,
    /// The list it was opened from, back on esc.
    back: Option<Picker>,
}

impl RecallView {
    /// Item `id` asked for from the list `back`.
    pub(crate) fn waiting(id: String, label: String, back: Option<Picker>) -> Self {
        RecallView {
            id,
            label,
            shown: Shown::Waiting,
            scroll: 0,
            page: 0,
            rows: 0,
            back,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The engine's answer.
    pub(crate) fn answered(&mut self, found: bool, kind: String, text: &str) {
        self.shown = if found {
            Shown::Text {
                kind,
                text: pith_protocol::text::sanitize(text).into_owned(),
            }
        } else {
            Shown::Missing
        };
        self.scroll = 0;
    }

    /// The list to go back to.
    pub(crate) fn take_back(&mut self) -> Option<Picker> {
        self.back.take()
    }

    fn body(&self) -> Vec<Line<'static>> {
        let dim = Style::default().fg(theme().dim);
        match &self.shown {
            Shown::Waiting => vec![Line::from(Span::styled(" bringing it back…", dim))],
            Shown::Missing => vec![Line::from(Span::styled(
                format!(" nothing under {} to recall in this session", self.id),
                Style::default().fg(theme().err),
            ))],
            Shown::Text { text, .. } if text.is_empty() => {
                vec![Line::from(Span::styled(" (empty)", dim))]
            }
            Shown::Text { text, .. } => text.lines().map(|l| Line::raw(l.to_string())).collect(),
        }
    }
}

impl Component for RecallView {
    type Outcome = ();
    type Context<'a> = ();

    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<()> {
        let max = self.rows.saturating_sub(self.page);
        let page = self.page.max(1);
        match (keymap.action(Context::List, key_of(&k)), k.code) {
            (Some(Action::ListClose | Action::ListAccept), _) | (_, KeyCode::Char('q')) => {
                return Handled::Closed;
            }
            (Some(Action::ListUp), _) => self.scroll = self.scroll.saturating_sub(1),
            (Some(Action::ListDown), _) => self.scroll = (self.scroll + 1).min(max),
            (Some(Action::ListPageUp), _) => self.scroll = self.scroll.saturating_sub(page),
            (Some(Action::ListPageDown), _) => self.scroll = (self.scroll + page).min(max),
            (_, KeyCode::Home) => self.scroll = 0,
            (_, KeyCode::End) => self.scroll = max,
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, _: ()) {
        let r = super::view::popups::centered(area, 110, area.height.saturating_sub(2).max(5));
        frame.render_widget(Clear, r);
        let text_w = r.width.saturating_sub(2).max(1) as usize;
        let body = self.body();
        self.rows = body.iter().map(|l| l.width().max(1).div_ceil(text_w)).sum();
        self.page = r.height.saturating_sub(3) as usize;
        self.scroll = self.scroll.min(self.rows.saturating_sub(self.page));
        let kind = match &self.shown {
            Shown::Text { kind, .. } if !kind.is_empty() => format!(" · {kind}"),
            _ => String::new(),
        };
        let title = crate::format::truncate(
            &format!("{}{kind} · {}", self.id, self.label),
            text_w.saturating_sub(4),
        );
        let [text_area, hint_area] = ratatui::layout::Layout::vertical([
            ratatui::layout::Constraint::Fill(1),
            ratatui::layout::Constraint::Length(1),
        ])
        .areas(r.inner(ratatui::layout::Margin::new(1, 1)));
        frame.render_widget(super::view::popups::block_titled(&title), r);
        frame.render_widget(
            Paragraph::new(body)
                .wrap(Wrap { trim: false })
                .scroll((self.scroll.min(u16::MAX as usize) as u16, 0)),
            text_area,
        );
        let end = (self.scroll + self.page).min(self.rows);
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                format!(
                    " {}–{end} of {} · ↑↓ pgup pgdn scroll · esc back to the list",
                    (self.scroll + 1).min(self.rows),
                    self.rows
                ),
                Style::default().fg(theme().dim),
            ))),
            hint_area,
        );
    }
}
