//! The screens asked before the TUI starts (the trust question, a missing API key): the
//! terminal they take while they ask, and the box they are drawn in.

use std::io;
use std::time::Instant;

use crossterm::event::{Event as TermEvent, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::style::Modifier;
use ratatui::text::Span;

use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph, Wrap};
use ratatui::{DefaultTerminal, Frame, Terminal};

/// The terminal a screen has while it asks; put back when this is dropped (error returns and
/// unwinding too).
pub(super) struct ModalTerminal {
    pub terminal: DefaultTerminal,
    // dropped after the terminal
    _guard: super::TerminalGuard,
}

/// Takes the terminal (raw mode, the alternate screen, a panic hook that puts it back) and
/// clears it.
pub(super) fn take_terminal() -> io::Result<ModalTerminal> {
    super::install_panic_hook();
    super::setup_terminal()?;
    let guard = super::TerminalGuard;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    Ok(ModalTerminal {
        terminal,
        _guard: guard,
    })
}

/// The box's width on `area` (at most 80 columns, 2 from each side) and its text's width.
pub(super) fn widths(area: Rect) -> (u16, usize) {
    let w = area.width.saturating_sub(4).min(80);
    (w, w.saturating_sub(4) as usize)
}

/// Draws `lines`, wrapped, in a box titled "pith" in the middle of the frame, as tall as they
/// need (at most the frame).
pub(super) fn draw_box(frame: &mut Frame, lines: Vec<Line<'_>>) {
    let area = frame.area();
    let (w, inner) = widths(area);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(inner.max(1)))
        .sum();
    let height = (rows as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width: w,
        height,
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .padding(Padding::horizontal(1))
        .title(" pith ")
        .border_style(Style::default().fg(super::theme::theme().accent));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}

/// A question asked full screen before the TUI starts (the trust question, a local server).
pub(super) trait Question {
    type Answer;
    fn draw(&self, frame: &mut Frame);
    /// The answer a key gives, if any.
    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Self::Answer>;
    /// The answer when input ends.
    fn quit() -> Self::Answer;
}

/// Shows `screen` full screen until the user answers.
pub(super) async fn ask<Q: Question>(mut screen: Q) -> io::Result<Q::Answer> {
    let mut modal = take_terminal()?;
    let mut input = EventStream::new();
    loop {
        modal.terminal.draw(|f| screen.draw(f))?;
        match input.next().await {
            Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => {
                if let Some(answer) = screen.key(k.code, k.modifiers) {
                    return Ok(answer);
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Ok(Q::quit()),
        }
    }
}

/// Appends the numbered `options` (the `selected` one marked), a blank line and the key
/// `hint` to a question's lines.
pub(super) fn push_choices(
    lines: &mut Vec<Line<'_>>,
    options: &[&str],
    selected: usize,
    hint: &str,
) {
    for (i, o) in options.iter().enumerate() {
        let text = format!("{}. {o}", i + 1);
        lines.push(if i == selected {
            Line::from(Span::styled(
                format!("› {text}"),
                Style::default()
                    .fg(super::theme::theme().accent)
                    .add_modifier(Modifier::BOLD),
            ))
        } else {
            Line::from(format!("  {text}"))
        });
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        hint.to_string(),
        Style::default().fg(super::theme::theme().muted),
    )));
}

/// How a two-choice question (the first choice "yes", the second "no") was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Choice {
    Yes,
    No,
    Quit,
}

/// The keys of a two-choice question: which choice is selected ("no" by default) and the
/// guard against keys typed before the question could be read.
pub(super) struct TwoChoices {
    pub selected: usize,
    shown_at: Option<Instant>,
}

impl TwoChoices {
    pub(crate) fn new() -> TwoChoices {
        TwoChoices {
            selected: 1,
            shown_at: Some(Instant::now()),
        }
    }

    /// As if the question had been on screen for a while (tests).
    pub(crate) fn settle(&mut self) {
        self.shown_at = None;
    }

    /// Handles a key; `Some` once answered. Keys in the first moment after the question
    /// appeared were typed before it could be read: they answer nothing.
    pub(crate) fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Choice> {
        if modifiers.contains(KeyModifiers::CONTROL) && matches!(code, KeyCode::Char('c' | 'd')) {
            return Some(Choice::Quit);
        }
        if self
            .shown_at
            .is_some_and(|t| t.elapsed() < super::permission_prompt::PERMISSION_GUARD)
        {
            return None;
        }
        match code {
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab => {
                self.selected = 1 - self.selected;
                None
            }
            KeyCode::Char('1' | 'y') => Some(Choice::Yes),
            KeyCode::Char('2' | 'n') | KeyCode::Esc => Some(Choice::No),
            KeyCode::Enter if self.selected == 0 => Some(Choice::Yes),
            KeyCode::Enter => Some(Choice::No),
            _ => None,
        }
    }
}
