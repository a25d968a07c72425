//! The composer on screen: the keys that edit the prompt or walk its history (what a key
//! means for the session goes back to `App` as a `ComposerKey`), and its box — the border's
//! colour, the running turn's title, the keys hint, how far the transcript is scrolled up.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Padding};
use ratatui_textarea::CursorMove;

use super::Composer;
use crate::component::{Component, Handled};
use crate::keymap::{Action, Context, Keymap, key_of};
use crate::theme::theme;

/// What a key in the composer means for the session, for `App` to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ComposerKey {
    /// Send the prompt.
    Submit,
    /// Stop the running turn.
    Interrupt,
    /// Switch to the next permission mode.
    CycleMode,
    /// The text was edited: the completion popups follow it.
    Edited,
}

/// What the composer's box shows besides the text: the running turn's title, how far the
/// transcript is scrolled up, and what the keys hint needs.
pub(crate) struct ComposerChrome<'a> {
    /// The title while a turn runs (`None` when idle).
    pub busy_title: Option<String>,
    /// Lines of the transcript below the screen while it is scrolled up.
    pub below: Option<usize>,
    /// A first Ctrl+C waits for the second: the hint says so.
    pub quit_armed: bool,
    /// Which keys the hint names.
    pub keymap: &'a Keymap,
}

impl Composer {
    /// Up and Down: the history when the cursor is on the first (last) line or a recalled
    /// prompt is shown, else the cursor moves.
    fn history_key(&mut self, older: bool) {
        let at_edge = if older {
            self.cursor_on_first_line()
        } else {
            self.cursor_on_last_line()
        };
        let walked = (at_edge || self.browsing_history())
            && if older {
                self.history_prev()
            } else {
                self.history_next()
            };
        if !walked {
            let dir = if older {
                CursorMove::Up
            } else {
                CursorMove::Down
            };
            self.textarea.move_cursor(dir);
        }
    }

    /// The box: its border's colour says busy, a `!` command or neither.
    fn block(&self, chrome: ComposerChrome<'_>, width: u16) -> Block<'static> {
        let hint = hint(width, &chrome, self.keyboard_enhanced);
        let busy = chrome.busy_title.is_some();
        let shell = self.text().starts_with('!');
        let border = if busy {
            theme().warn
        } else if shell {
            theme().user
        } else {
            theme().dim
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(Style::default().fg(border))
            .padding(Padding::left(1));
        if let Some(title) = chrome.busy_title {
            block = block.title(Span::styled(title, Style::default().fg(theme().warn)));
        }
        if shell && !busy {
            block = block.title(Span::styled(
                " ! shell · enter runs the command, its output joins the conversation ",
                Style::default().fg(theme().user),
            ));
        }
        block = block.title_bottom(Line::from(hint).right_aligned());
        // scrolled up: how much is below, on the border (never over the transcript's last line)
        if let Some(below) = chrome.below {
            block = block.title(
                Line::from(Span::styled(
                    format!(" ↓ {below} more lines · end follows "),
                    Style::default().fg(theme().on_accent).bg(theme().muted),
                ))
                .right_aligned(),
            );
        }
        block
    }
}

impl Component for Composer {
    type Outcome = ComposerKey;
    type Context<'a> = ComposerChrome<'a>;

    /// A key for the prompt being written: editing and history here; sending, interrupting
    /// and the mode for `App`.
    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<ComposerKey> {
        match keymap.action(Context::Chat, key_of(&k)) {
            Some(Action::Newline) => self.textarea.insert_newline(),
            Some(Action::Submit) => return Handled::Done(ComposerKey::Submit),
            Some(Action::Interrupt) => return Handled::Done(ComposerKey::Interrupt),
            Some(Action::HistoryPrev) => self.history_key(true),
            Some(Action::HistoryNext) => self.history_key(false),
            Some(Action::Indent) => {
                self.textarea.insert_str("    ");
            }
            Some(Action::CycleMode) => return Handled::Done(ComposerKey::CycleMode),
            Some(a) if a.is_edit() => {
                crate::keymap::edit(&mut self.textarea, a);
                return Handled::Done(ComposerKey::Edited);
            }
            _ if is_backspace(&k) && self.delete_image_chip() => {
                return Handled::Done(ComposerKey::Edited);
            }
            _ => {
                if crate::keymap::to_textarea(&k) {
                    self.textarea.input(k);
                }
                return Handled::Done(ComposerKey::Edited);
            }
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, chrome: ComposerChrome<'_>) {
        let block = self.block(chrome, area.width);
        self.textarea.set_block(block);
        frame.render_widget(&self.textarea, area);
    }
}

/// A plain Backspace.
fn is_backspace(k: &KeyEvent) -> bool {
    k.code == crossterm::event::KeyCode::Backspace && k.modifiers.is_empty()
}

/// Below this many columns the hint is the short one.
const NARROW: u16 = 72;

/// The keys hint under the composer (`width` columns): the quit prompt when armed, a short
/// one when narrow.
fn hint(width: u16, chrome: &ComposerChrome<'_>, keyboard_enhanced: bool) -> Span<'static> {
    let km = chrome.keymap;
    let key_of = |a: Action, prefer: &[&str]| km.hint(a, prefer);
    if chrome.quit_armed {
        Span::styled(
            format!(
                " press {} again to quit ",
                key_of(Action::Cancel, &[]).unwrap_or_else(|| "ctrl+c".into())
            ),
            Style::default()
                .fg(theme().warn)
                .add_modifier(Modifier::BOLD),
        )
    } else if width < NARROW {
        let details = key_of(Action::ExpandAll, &["ctrl+o"])
            .map(|k| format!("· {k} details "))
            .unwrap_or_default();
        Span::styled(
            format!(" / commands {details}"),
            Style::default().fg(theme().dim),
        )
    } else {
        // Shift+Enter only reaches us with the kitty keyboard protocol; Ctrl+J always does.
        let newline: &[&str] = if keyboard_enhanced {
            &["shift+enter", "ctrl+j"]
        } else {
            &["ctrl+j", "alt+enter"]
        };
        let parts = [
            key_of(Action::Submit, &["enter"]).map(|k| format!("{k} send")),
            key_of(Action::Newline, newline).map(|k| format!("{k} newline")),
            Some("/ commands".to_string()),
            key_of(Action::ExpandAll, &["ctrl+o"]).map(|k| format!("{k} details")),
        ];
        Span::styled(
            format!(
                " {} ",
                parts.into_iter().flatten().collect::<Vec<_>>().join(" · ")
            ),
            Style::default().fg(theme().dim),
        )
    }
}
