//! The question asked before the first prompt goes to a local model server pith found by
//! probing (nothing configured, no key): whatever listens on that port gets the prompt and the
//! workspace's instructions, so the user names it first. Asked once per server; the binary
//! remembers the answer.

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use pith_protocol::launch::LocalServer;
use pith_protocol::text::escape_one_line;

/// What the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Use,
    DontUse,
    Quit,
}

const OPTIONS: [&str; 2] = ["Use this server", "Don't use it"];

/// The question on screen.
pub struct LocalServerScreen {
    pub server: LocalServer,
    /// Which choice is selected, and the guard against early keys.
    choices: super::modal::TwoChoices,
}

impl LocalServerScreen {
    pub fn new(server: LocalServer) -> LocalServerScreen {
        LocalServerScreen {
            server,
            choices: super::modal::TwoChoices::new(),
        }
    }

    /// As if the question had been on screen for a while (tests).
    pub fn settled(mut self) -> LocalServerScreen {
        self.choices.settle();
        self
    }

    /// Handles a key; `Some` once answered. Keys typed before the question could be read
    /// answer nothing.
    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Answer> {
        Some(match self.choices.key(code, modifiers)? {
            super::modal::Choice::Yes => Answer::Use,
            super::modal::Choice::No => Answer::DontUse,
            super::modal::Choice::Quit => Answer::Quit,
        })
    }

    pub fn draw(&self, frame: &mut Frame) {
        let (_, inner) = super::modal::widths(frame.area());
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let gray = Style::default().fg(super::theme::theme().muted);
        let accent = Style::default().fg(super::theme::theme().user);
        let shown = |s: &str| super::format::truncate(&escape_one_line(s, 200), inner);
        let mut lines = vec![
            Line::from(Span::styled("Use the local model server pith found?", bold)),
            Line::default(),
            Line::from(Span::styled(shown(&self.server.url), accent)),
            Line::from(Span::styled(shown(&self.server.model), gray)),
            Line::default(),
            Line::from(
                "No model is configured, and a server answered on this port. Whatever listens there gets your prompts, this folder's instructions and what tools read. Use it only if you started it.",
            ),
            Line::default(),
        ];
        super::modal::push_choices(
            &mut lines,
            &OPTIONS,
            self.choices.selected,
            "↑↓ select · enter confirm · y use · n don't · ctrl-c quit",
        );
        super::modal::draw_box(frame, lines);
    }
}

impl super::modal::Question for LocalServerScreen {
    type Answer = Answer;
    fn draw(&self, frame: &mut Frame) {
        LocalServerScreen::draw(self, frame)
    }
    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Answer> {
        LocalServerScreen::key(self, code, modifiers)
    }
    fn quit() -> Answer {
        Answer::Quit
    }
}

/// Shows the question full screen until the user answers.
pub async fn ask(server: LocalServer) -> std::io::Result<Answer> {
    super::modal::ask(LocalServerScreen::new(server)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> LocalServer {
        LocalServer {
            url: "http://127.0.0.1:8080".into(),
            model: "llamacpp/evil\n\u{1b}[2Jmodel".into(),
        }
    }

    #[test]
    fn the_default_is_not_to_use_it_and_early_keys_answer_nothing() {
        let mut fresh = LocalServerScreen::new(server());
        assert_eq!(fresh.key(KeyCode::Char('y'), KeyModifiers::NONE), None);
        let mut s = LocalServerScreen::new(server()).settled();
        assert_eq!(
            s.key(KeyCode::Enter, KeyModifiers::NONE),
            Some(Answer::DontUse)
        );
        s.key(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(s.key(KeyCode::Enter, KeyModifiers::NONE), Some(Answer::Use));
    }

    #[test]
    fn the_server_is_named_and_its_text_escaped() {
        let backend = ratatui::backend::TestBackend::new(84, 24);
        let mut terminal = ratatui::Terminal::new(backend).unwrap();
        let screen = LocalServerScreen::new(server()).settled();
        terminal.draw(|f| screen.draw(f)).unwrap();
        let buffer = terminal.backend().buffer();
        let text: String = buffer.content().iter().map(|c| c.symbol()).collect();
        assert!(text.contains("http://127.0.0.1:8080"), "{text}");
        assert!(text.contains("llamacpp/evil\\n"), "{text}");
        assert!(!text.contains('\u{1b}'));
    }
}
