//! The screen shown before the TUI starts when the chosen provider needs an API key and has
//! none: paste it (masked), it is stored as `pith auth login` stores it, and pith goes on.

use crossterm::event::{Event as TermEvent, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures_util::StreamExt;
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use pith_protocol::launch::KeyNeed;

/// What the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyAnswer {
    /// A key to store (from [`KeyScreen::key`]); from [`ask`], the provider it was stored for.
    Submit(String),
    /// Go on without one (the first request will say what is missing).
    Skip,
    Quit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeyScreen {
    /// The providers to choose from (tab switches); the first is the default.
    pub choices: Vec<KeyNeed>,
    pub selected: usize,
    input: String,
    /// Why the last key was not stored.
    pub error: Option<String>,
    /// Opened from the running TUI (`/login`, `/model`): Esc and Ctrl+C close it.
    pub in_app: bool,
    /// A last tab for a local server (the first run): no key, how to start one and name its
    /// model with `-m`.
    pub local: bool,
}

impl KeyScreen {
    pub fn new(choices: Vec<KeyNeed>) -> KeyScreen {
        KeyScreen {
            choices,
            selected: 0,
            input: String::new(),
            error: None,
            in_app: false,
            local: false,
        }
    }

    /// The tabs: the providers, then the local server's when it is offered.
    fn tabs(&self) -> usize {
        self.choices.len() + usize::from(self.local)
    }

    /// The local server's tab is the one shown.
    fn on_local(&self) -> bool {
        self.local && self.selected == self.choices.len()
    }

    /// Forgets what was typed (after a key was refused).
    pub fn clear_input(&mut self) {
        self.input.clear();
    }

    /// The provider the key is for.
    pub fn need(&self) -> Option<&KeyNeed> {
        self.choices.get(self.selected)
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
            KeyCode::Tab | KeyCode::Down if self.tabs() > 1 => {
                self.selected = (self.selected + 1) % self.tabs();
                self.error = None;
                None
            }
            KeyCode::BackTab | KeyCode::Up if self.tabs() > 1 => {
                let n = self.tabs();
                self.selected = (self.selected + n - 1) % n;
                self.error = None;
                None
            }
            // no key for a local server
            _ if self.on_local() => None,
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
        if self.on_local() {
            let mut lines = self.heading(None);
            lines.extend(local_lines());
            return super::modal::draw_box(frame, lines);
        }
        let Some(need) = self.need() else { return };
        let (_, inner) = super::modal::widths(frame.area());
        super::modal::draw_box(frame, self.lines(need, inner));
    }

    /// The screen's lines, `inner` columns wide: the heading, where the key goes, the masked
    /// field, the last error, the keys.
    fn lines(&self, need: &KeyNeed, inner: usize) -> Vec<Line<'static>> {
        let gray = Style::default().fg(Color::Gray);
        let accent = super::theme::theme().accent;
        let n = self.input.chars().count();
        let dots = "•".repeat(n.min(inner.saturating_sub(16)));
        let field = if n == 0 {
            Span::styled("paste the key here", gray)
        } else {
            Span::raw(format!("{dots}  ({n} characters)"))
        };
        let mut lines = self.heading(Some(need));
        lines.extend([
            Line::from(format!(
                "{} {}. Paste a key to store it in pith's private credentials file; it is sent only to {}.",
                need.var,
                if self.in_app { "is the variable it is read from (a stored key is used when it is not set)" } else { "is not set" },
                need.base_url
            )),
            Line::default(),
            Line::from(vec![Span::styled("› ", Style::default().fg(accent)), field]),
        ]);
        if let Some(e) = &self.error {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                e.clone(),
                Style::default().fg(Color::Red),
            )));
        }
        lines.push(Line::default());
        let keys = match (self.tabs() > 1, self.in_app) {
            (true, false) => "tab provider · enter store · esc go on without one · ctrl-c quit",
            (false, false) => "enter store · esc go on without one · ctrl-u clear · ctrl-c quit",
            (true, true) => "tab provider · enter store · ctrl-u clear · esc cancel",
            (false, true) => "enter store · ctrl-u clear · esc cancel",
        };
        lines.push(Line::from(Span::styled(keys, gray)));
        lines
    }

    /// The heading: the provider needing a key, or the providers to choose among.
    fn heading(&self, need: Option<&KeyNeed>) -> Vec<Line<'static>> {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        if let Some(need) = need
            && self.tabs() <= 1
        {
            return vec![
                Line::from(Span::styled(
                    format!("{} needs an API key", need.provider),
                    bold,
                )),
                Line::default(),
            ];
        }
        let heading = if self.in_app {
            "Paste an API key"
        } else if self.local {
            "No model is configured: paste an API key, or use a local server"
        } else {
            "No model is configured: paste an API key"
        };
        let mut names = vec![Span::raw("Provider: ")];
        for (i, c) in self.choices.iter().enumerate() {
            let style = if i == self.selected {
                Style::default()
                    .fg(super::theme::theme().accent)
                    .add_modifier(Modifier::BOLD)
            } else {
                Style::default().fg(Color::Gray)
            };
            let mark = if i == self.selected { "●" } else { "○" };
            names.push(Span::styled(format!("{mark} {}  ", c.provider), style));
        }
        if self.local {
            let (mark, style) = if self.on_local() {
                (
                    "●",
                    Style::default()
                        .fg(super::theme::theme().accent)
                        .add_modifier(Modifier::BOLD),
                )
            } else {
                ("○", Style::default().fg(Color::Gray))
            };
            names.push(Span::styled(format!("{mark} local server"), style));
        }
        vec![
            Line::from(Span::styled(heading, bold)),
            Line::default(),
            Line::from(names),
            Line::default(),
        ]
    }
}

/// The local server's tab: no key; how to start llama.cpp or Ollama and name the model.
fn local_lines() -> Vec<Line<'static>> {
    let gray = Style::default().fg(Color::Gray);
    let code = Style::default().add_modifier(Modifier::BOLD);
    vec![
        Line::from(
            "A model on your machine needs no key. Start a server, then start pith naming its model:",
        ),
        Line::default(),
        Line::from(vec![
            Span::raw("llama.cpp (:8080)   "),
            Span::styled("llama-server -m model.gguf --port 8080", code),
        ]),
        Line::from(vec![
            Span::raw("                    "),
            Span::styled("pith -m llamacpp/MODEL", code),
        ]),
        Line::from(vec![
            Span::raw("Ollama (:11434)     "),
            Span::styled("ollama pull MODEL", code),
        ]),
        Line::from(vec![
            Span::raw("                    "),
            Span::styled("pith -m ollama/MODEL", code),
        ]),
        Line::default(),
        Line::from(Span::styled(
            "Without -m, pith looks for a server on these ports and asks before it uses one.",
            gray,
        )),
        Line::default(),
        Line::from(Span::styled(
            "tab provider · esc go on without one · ctrl-c quit",
            gray,
        )),
    ]
}

/// Shows the screen until a key is stored (`store(provider, key)` says why one was not),
/// skipped or quit.
pub async fn ask(
    choices: Vec<KeyNeed>,
    store: impl Fn(&str, &str) -> Result<(), super::login::KeyNotStored>,
) -> std::io::Result<KeyAnswer> {
    let mut modal = super::modal::take_terminal()?;
    let mut screen = KeyScreen::new(choices);
    screen.local = true;
    let mut input = EventStream::new();
    loop {
        modal.terminal.draw(|f| screen.draw(f))?;
        let answer = match input.next().await {
            Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => {
                screen.key(k.code, k.modifiers)
            }
            Some(Ok(TermEvent::Paste(text))) => {
                screen.paste(&text);
                None
            }
            Some(Ok(_)) => None,
            Some(Err(e)) => return Err(e),
            None => Some(KeyAnswer::Quit),
        };
        match answer {
            Some(KeyAnswer::Submit(key)) => {
                let provider = screen
                    .need()
                    .map(|n| n.provider.clone())
                    .unwrap_or_default();
                match store(&provider, &key) {
                    Ok(()) => return Ok(KeyAnswer::Submit(provider)),
                    Err(e) => {
                        screen.error = Some(e.to_string());
                        screen.input.clear();
                    }
                }
            }
            Some(other) => return Ok(other),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;

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
        let mut s = KeyScreen::new(vec![need()]);
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
    fn with_no_model_the_provider_is_chosen_with_tab() {
        let openai = KeyNeed {
            provider: "openai".into(),
            var: "OPENAI_API_KEY".into(),
            base_url: "https://api.openai.com/v1".into(),
        };
        let mut s = KeyScreen::new(vec![need(), openai]);
        s.key(KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(s.need().unwrap().provider, "openai");
        let backend = ratatui::backend::TestBackend::new(84, 16);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        let screen = terminal.backend().to_string();
        assert!(
            screen.contains("● openai") && screen.contains("○ anthropic"),
            "{screen}"
        );
        assert!(screen.contains("OPENAI_API_KEY is not set"), "{screen}");
        insta::assert_snapshot!(screen);
        s.key(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(s.need().unwrap().provider, "anthropic");
    }

    /// The first-run dialog's last tab is a local server (no key): how to start llama.cpp or
    /// Ollama, and the `-m` to name its model with.
    #[test]
    fn the_first_run_dialog_has_a_local_server_tab() {
        let mut s = KeyScreen::new(vec![need()]);
        s.local = true;
        s.key(KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(s.need(), None, "no key for a local server");
        s.key(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(s.key(KeyCode::Enter, KeyModifiers::NONE), None);
        let backend = ratatui::backend::TestBackend::new(100, 20);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        let screen = terminal.backend().to_string();
        for text in [
            "● local server",
            "○ anthropic",
            "llama-server",
            ":8080",
            "pith -m llamacpp/",
            ":11434",
            "pith -m ollama/",
        ] {
            assert!(screen.contains(text), "{text}: {screen}");
        }
        insta::assert_snapshot!(screen);
        s.key(KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(s.need().unwrap().provider, "anthropic");
        assert_eq!(
            s.key(KeyCode::Esc, KeyModifiers::NONE),
            Some(KeyAnswer::Skip)
        );
    }

    #[test]
    fn snapshot_empty_with_an_error() {
        let mut s = KeyScreen::new(vec![need()]);
        s.error = Some("the key holds spaces or control characters; paste just the key".into());
        let backend = ratatui::backend::TestBackend::new(84, 18);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal.draw(|f| s.draw(f)).unwrap();
        insta::assert_snapshot!(terminal.backend());
    }
}
