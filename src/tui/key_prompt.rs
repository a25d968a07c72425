//! The screen shown before the TUI starts when the chosen provider needs an API key and has
//! none: paste it (masked), it is stored as `pith auth login` stores it, and pith goes on.

use std::io;

use crossterm::event::{Event as TermEvent, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

/// The provider whose key is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyNeed {
    pub provider: String,
    /// Its `api_key_env`.
    pub var: String,
    pub base_url: String,
}

/// What the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyAnswer {
    /// A key to store.
    Submit(String),
    /// Go on without one (the first request will say what is missing).
    Skip,
    Quit,
}

pub struct KeyScreen {
    pub need: KeyNeed,
    input: String,
    /// Why the last key was not stored.
    pub error: Option<String>,
}

impl KeyScreen {
    pub fn new(need: KeyNeed) -> KeyScreen {
        KeyScreen {
            need,
            input: String::new(),
            error: None,
        }
    }

    pub fn paste(&mut self, text: &str) {
        self.input.extend(text.chars().filter(|c| !c.is_control()));
    }

    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<KeyAnswer> {
        let ctrl = modifiers.contains(KeyModifiers::CONTROL);
        match code {
            KeyCode::Char('c' | 'd') if ctrl => Some(KeyAnswer::Quit),
            KeyCode::Char('u') if ctrl => {
                self.input.clear();
                None
            }
            KeyCode::Esc => Some(KeyAnswer::Skip),
            KeyCode::Enter if !self.input.trim().is_empty() => {
                Some(KeyAnswer::Submit(self.input.trim().to_string()))
            }
            KeyCode::Backspace => {
                self.input.pop();
                None
            }
            KeyCode::Char(c) if !ctrl => {
                self.input.push(c);
                None
            }
            _ => None,
        }
    }

    pub fn draw(&self, frame: &mut Frame) {
        let area = frame.area();
        let w = area.width.saturating_sub(4).min(80);
        let inner = w.saturating_sub(4) as usize;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let gray = Style::default().fg(Color::Gray);
        let accent = super::theme::theme().accent;
        let n = self.input.chars().count();
        let dots = "•".repeat(n.min(inner.saturating_sub(16)));
        let field = if n == 0 {
            Span::styled("paste the key here", gray)
        } else {
            Span::raw(format!("{dots}  ({n} characters)"))
        };
        let mut lines = vec![
            Line::from(Span::styled(
                format!("{} needs an API key", self.need.provider),
                bold,
            )),
            Line::default(),
            Line::from(format!(
                "{} is not set. Paste a key to store it in pith's private credentials file; it is sent only to {}.",
                self.need.var, self.need.base_url
            )),
            Line::default(),
            Line::from(vec![Span::styled("› ", Style::default().fg(accent)), field]),
        ];
        if let Some(e) = &self.error {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                e.clone(),
                Style::default().fg(Color::Red),
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "enter store · esc go on without one · ctrl-u clear · ctrl-c quit",
            gray,
        )));
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
            .padding(ratatui::widgets::Padding::horizontal(1))
            .title(" pith ")
            .border_style(Style::default().fg(accent));
        frame.render_widget(
            Paragraph::new(lines)
                .block(block)
                .wrap(Wrap { trim: false }),
            rect,
        );
    }
}

/// Shows the screen until a key is stored (`store` says why one was not), skipped or quit.
pub async fn ask(
    need: KeyNeed,
    store: impl Fn(&str) -> Result<(), String>,
) -> anyhow::Result<KeyAnswer> {
    super::install_panic_hook();
    super::setup_terminal()?;
    let _guard = super::TerminalGuard;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    let mut screen = KeyScreen::new(need);
    let mut input = EventStream::new();
    loop {
        terminal.draw(|f| screen.draw(f))?;
        let answer = match input.next().await {
            Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => {
                screen.key(k.code, k.modifiers)
            }
            Some(Ok(TermEvent::Paste(text))) => {
                screen.paste(&text);
                None
            }
            Some(Ok(_)) => None,
            Some(Err(e)) => return Err(e.into()),
            None => Some(KeyAnswer::Quit),
        };
        match answer {
            Some(KeyAnswer::Submit(key)) => match store(&key) {
                Ok(()) => return Ok(KeyAnswer::Submit(String::new())),
                Err(e) => {
                    screen.error = Some(e);
                    screen.input.clear();
                }
            },
            Some(other) => return Ok(other),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need() -> KeyNeed {
        KeyNeed {
            provider: "anthropic".into(),
            var: "ANTHROPIC_API_KEY".into(),
            base_url: "https://api.anthropic.com".into(),
        }
    }

    #[test]
    fn typed_or_pasted_keys_are_submitted_never_shown() {
        let mut s = KeyScreen::new(need());
        assert_eq!(s.key(KeyCode::Enter, KeyModifiers::NONE), None, "empty");
        s.paste("sk-ant-secret-0123\n");
        s.key(KeyCode::Char('9'), KeyModifiers::NONE);
        let backend = ratatui::backend::TestBackend::new(84, 16);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        let screen = terminal.backend().to_string();
        assert!(
            !screen.contains("secret") && screen.contains("(19 characters)"),
            "{screen}"
        );
        insta::assert_snapshot!(screen);
        assert_eq!(
            s.key(KeyCode::Enter, KeyModifiers::NONE),
            Some(KeyAnswer::Submit("sk-ant-secret-01239".into()))
        );
        assert_eq!(
            s.key(KeyCode::Esc, KeyModifiers::NONE),
            Some(KeyAnswer::Skip)
        );
        assert_eq!(
            s.key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(KeyAnswer::Quit)
        );
    }

    #[test]
    fn snapshot_empty_with_an_error() {
        let mut s = KeyScreen::new(need());
        s.error = Some("the key holds spaces or control characters; paste just the key".into());
        let backend = ratatui::backend::TestBackend::new(84, 18);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        insta::assert_snapshot!(terminal.backend());
    }
}
