//! Telling the user pith is done or waiting (`[notify]`): the terminal bell and a desktop
//! notification through the terminal's own escape (OSC 9: iTerm2, WezTerm, kitty, Windows
//! Terminal, Ghostty; OSC 777: foot, urxvt, WezTerm), when a turn that ran at least
//! `after_secs` ends, or when a permission question waits while the terminal is unfocused.
//! A terminal known to be focused is not interrupted.

use std::time::Duration;

use pith_config::NotifyConfig;

/// What decides whether and how to notify.
#[derive(Debug, Clone)]
pub struct Notifier {
    pub config: NotifyConfig,
    /// From the terminal's focus events; `None` until it reports one.
    pub focused: Option<bool>,
    /// `$TERM`: foot and urxvt take OSC 777 rather than OSC 9.
    pub term: String,
    /// Inside tmux: the desktop escape is wrapped for passthrough.
    pub tmux: bool,
}

impl Notifier {
    pub fn new(config: NotifyConfig) -> Self {
        Notifier {
            config,
            focused: None,
            term: std::env::var("TERM").unwrap_or_default(),
            tmux: super::clipboard::in_tmux(),
        }
    }

    /// The bytes for a turn of `elapsed` that just ended, if it deserves a notification.
    pub fn turn_ended(&self, elapsed: Duration) -> Option<Vec<u8>> {
        if elapsed < Duration::from_secs(self.config.after_secs) || self.focused == Some(true) {
            return None;
        }
        self.escape(&format!("done after {}s", elapsed.as_secs()))
    }

    /// The bytes for a question that now waits for the user: only when the terminal says it is
    /// not focused (without focus reports nobody can tell whether the user is looking).
    pub fn waiting(&self, what: &str) -> Option<Vec<u8>> {
        if self.focused != Some(false) {
            return None;
        }
        self.escape(what)
    }

    fn escape(&self, body: &str) -> Option<Vec<u8>> {
        let mut out = String::new();
        if self.config.bell {
            out.push('\x07');
        }
        if self.config.desktop {
            // the text is the agent's: no control characters, no field separators
            let body: String = body
                .chars()
                .filter(|c| !c.is_control() && *c != ';')
                .take(200)
                .collect();
            let seq = if self.term.starts_with("foot") || self.term.starts_with("rxvt") {
                format!("\x1b]777;notify;pith;{body}\x1b\\")
            } else {
                format!("\x1b]9;pith: {body}\x1b\\")
            };
            if self.tmux {
                out.push_str(&super::clipboard::tmux_passthrough(&seq));
            } else {
                out.push_str(&seq);
            }
        }
        (!out.is_empty()).then(|| out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notifier(bell: bool, desktop: bool, term: &str, tmux: bool) -> Notifier {
        Notifier {
            config: NotifyConfig {
                bell,
                desktop,
                after_secs: 10,
            },
            focused: None,
            term: term.into(),
            tmux,
        }
    }

    #[test]
    fn long_turns_notify_short_ones_do_not() {
        let n = notifier(true, false, "xterm-256color", false);
        assert_eq!(n.turn_ended(Duration::from_secs(9)), None);
        assert_eq!(
            n.turn_ended(Duration::from_secs(10)),
            Some(b"\x07".to_vec())
        );
        let n = notifier(false, true, "xterm-256color", false);
        assert_eq!(
            n.turn_ended(Duration::from_secs(12)).unwrap(),
            b"\x1b]9;pith: done after 12s\x1b\\"
        );
        let n = notifier(false, true, "foot", false);
        assert_eq!(
            n.turn_ended(Duration::from_secs(12)).unwrap(),
            b"\x1b]777;notify;pith;done after 12s\x1b\\"
        );
        let n = notifier(false, true, "xterm", true);
        assert_eq!(
            n.turn_ended(Duration::from_secs(12)).unwrap(),
            b"\x1bPtmux;\x1b\x1b]9;pith: done after 12s\x1b\x1b\\\x1b\\"
        );
        assert_eq!(
            notifier(false, false, "xterm", false).turn_ended(Duration::MAX),
            None
        );
    }

    #[test]
    fn a_focused_terminal_is_left_alone_questions_need_unfocus() {
        let mut n = notifier(true, true, "xterm", false);
        assert_eq!(n.waiting("bash waits"), None, "focus unknown");
        n.focused = Some(false);
        let b = n.waiting("bash; waits\x1b]0;x\x07").unwrap();
        assert_eq!(b, b"\x07\x1b]9;pith: bash waits]0x\x1b\\");
        n.focused = Some(true);
        assert_eq!(n.waiting("bash waits"), None);
        assert_eq!(n.turn_ended(Duration::from_secs(60)), None);
    }
}
