//! The question asked before the TUI starts in a directory whose `pith.toml` holds settings only
//! a trusted directory may use (asked once per directory; the answer is remembered).

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use pith_protocol::launch::TrustQuestion;

const OPTIONS: [&str; 2] = [
    "Trust this folder",
    "Don't trust it: use only its harmless settings",
];

/// What the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Trust,
    DontTrust,
    Quit,
}

/// The state of the question on screen.
pub struct TrustScreen {
    pub question: TrustQuestion,
    /// Which choice is selected, and the guard against early keys.
    choices: super::modal::TwoChoices,
}

impl TrustScreen {
    pub fn new(question: TrustQuestion) -> TrustScreen {
        TrustScreen {
            question,
            choices: super::modal::TwoChoices::new(),
        }
    }

    /// As if the question had been on screen for a while (tests).
    pub fn settled(mut self) -> TrustScreen {
        self.choices.settle();
        self
    }

    /// Handles a key; `Some` once the user has answered. Keys in the first moment after the
    /// question appeared were typed before it could be read: they answer nothing.
    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Answer> {
        Some(match self.choices.key(code, modifiers)? {
            super::modal::Choice::Yes => Answer::Trust,
            super::modal::Choice::No => Answer::DontTrust,
            super::modal::Choice::Quit => Answer::Quit,
        })
    }

    pub fn draw(&self, frame: &mut Frame) {
        let (_, inner) = super::modal::widths(frame.area());
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let gray = Style::default().fg(super::theme::theme().muted);
        let mut lines = vec![
            Line::from(Span::styled("Do you trust this folder?", bold)),
            Line::default(),
            Line::from(Span::styled(
                super::format::truncate(&self.question.folder(), inner),
                Style::default().fg(super::theme::theme().user),
            )),
            Line::default(),
            Line::from("Its pith.toml sets what only a trusted folder may set:"),
        ];
        let keys = self.question.settings();
        for k in keys.iter().take(6) {
            lines.push(Line::from(Span::styled(
                format!("  {}", super::format::truncate(k, inner.saturating_sub(2))),
                gray,
            )));
        }
        if keys.len() > 6 {
            lines.push(Line::from(Span::styled(
                format!("  … and {} more", keys.len() - 6),
                gray,
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(
            "A hostile repository can use such settings to send your API key to another server or to run commands without asking. Trust it only if you trust its authors.",
        ));
        lines.push(Line::default());
        super::modal::push_choices(
            &mut lines,
            &OPTIONS,
            self.choices.selected,
            "↑↓ select · enter confirm · y trust · n don't · ctrl-c quit",
        );
        super::modal::draw_box(frame, lines);
    }
}

impl super::modal::Question for TrustScreen {
    type Answer = Answer;
    fn draw(&self, frame: &mut Frame) {
        TrustScreen::draw(self, frame)
    }
    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<Answer> {
        TrustScreen::key(self, code, modifiers)
    }
    fn quit() -> Answer {
        Answer::Quit
    }
}

/// Shows the question full screen until the user answers.
pub async fn ask(question: TrustQuestion) -> std::io::Result<Answer> {
    super::modal::ask(TrustScreen::new(question)).await
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;

    use super::*;
    use pith_protocol::launch::{SHOWN_KEY, SHOWN_PATH};

    fn question() -> TrustQuestion {
        TrustQuestion {
            workspace: "/home/u/src/repo".into(),
            ignored: vec!["provider.openai.base_url".into(), "permission.bash".into()],
        }
    }

    #[test]
    fn keys_answer_only_after_the_first_moment() {
        let mut fresh = TrustScreen::new(question());
        assert_eq!(fresh.key(KeyCode::Char('y'), KeyModifiers::NONE), None);
        assert_eq!(fresh.key(KeyCode::Enter, KeyModifiers::NONE), None);
        assert_eq!(
            fresh.key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Answer::Quit)
        );
        let mut s = TrustScreen::new(question()).settled();
        assert_eq!(
            s.key(KeyCode::Enter, KeyModifiers::NONE),
            Some(Answer::DontTrust)
        );
        s.key(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(
            s.key(KeyCode::Enter, KeyModifiers::NONE),
            Some(Answer::Trust)
        );
        assert_eq!(
            s.key(KeyCode::Char('n'), KeyModifiers::NONE),
            Some(Answer::DontTrust)
        );
        assert_eq!(
            s.key(KeyCode::Char('y'), KeyModifiers::NONE),
            Some(Answer::Trust)
        );
    }

    /// Keys and paths come from the repository: a newline, an escape sequence or a long key
    /// cannot add a line of their own or reach the terminal (issue 37).
    #[test]
    fn hostile_keys_and_paths_are_shown_escaped_on_one_line() {
        let q = TrustQuestion {
            workspace: "/home/u/src/re\npo\u{1b}[2J".into(),
            ignored: vec![
                "provider.\"x\nFAKE: Trust is safe\u{1b}]52;c;AAAA\u{7}\".base_url".into(),
                format!("permission.bash.\"{}\"", "y".repeat(500)),
            ],
        };
        for shown in q.settings().iter().chain([&q.folder()]) {
            assert!(!shown.chars().any(char::is_control), "{shown:?}");
            assert!(shown.chars().count() <= SHOWN_PATH + 1, "{shown:?}");
        }
        assert!(q.settings()[0].contains("x\\nFAKE"), "{:?}", q.settings());
        assert!(q.settings()[1].chars().count() <= SHOWN_KEY + 1);
        let backend = ratatui::backend::TestBackend::new(84, 26);
        let mut terminal = Terminal::new(backend).unwrap();
        let screen = TrustScreen::new(q).settled();
        terminal.draw(|f| screen.draw(f)).unwrap();
        let buffer = terminal.backend().buffer();
        let rows: Vec<String> = (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect();
        let screen_text = rows.join("\n");
        assert!(!screen_text.contains('\u{1b}') && !screen_text.contains('\u{7}'));
        assert!(
            !rows
                .iter()
                .any(|r| r.trim_start_matches([' ', '│']).starts_with("FAKE")),
            "{screen_text}"
        );
        assert!(screen_text.contains("re\\npo"), "{screen_text}");
    }

    #[test]
    fn snapshot_trust_question() {
        let backend = ratatui::backend::TestBackend::new(84, 26);
        let mut terminal = Terminal::new(backend).unwrap();
        let screen = TrustScreen::new(question()).settled();
        terminal.draw(|f| screen.draw(f)).unwrap();
        insta::assert_snapshot!(terminal.backend());
    }
}
