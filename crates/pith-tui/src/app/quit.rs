//! Leaving: Ctrl+C arms a quit that a second press within `QUIT_WINDOW` carries out, and the exit
//! code the TUI ends with.

use std::time::{Duration, Instant};

/// How long a first Ctrl+C waits for the second.
const QUIT_WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
pub(crate) struct Quit {
    /// When Ctrl+C was pressed on an empty prompt, waiting for the second.
    armed: Option<Instant>,
    leaving: bool,
    /// The exit code when the TUI ends: 130 when the user left with Ctrl-C, as a shell expects.
    code: i32,
}

impl Quit {
    pub(crate) fn armed(&self) -> bool {
        self.armed.is_some()
    }

    pub(crate) fn disarm(&mut self) {
        self.armed = None;
    }

    /// Ctrl+C on an empty prompt: `true` (and exit code 130) when it is the second press within
    /// `QUIT_WINDOW`, else it arms.
    pub(crate) fn press(&mut self, now: Instant) -> bool {
        if self
            .armed
            .is_some_and(|t| now.duration_since(t) <= QUIT_WINDOW)
        {
            self.code = 130;
            return true;
        }
        self.armed = Some(now);
        false
    }

    /// Disarms a press older than `QUIT_WINDOW`; `true` when it did.
    pub(crate) fn expire(&mut self, now: Instant) -> bool {
        if let Some(t) = self.armed
            && now.duration_since(t) > QUIT_WINDOW
        {
            self.armed = None;
            return true;
        }
        false
    }

    pub(crate) fn leave(&mut self) {
        self.leaving = true;
    }

    pub(crate) fn leaving(&self) -> bool {
        self.leaving
    }

    pub(crate) fn set_code(&mut self, code: i32) {
        self.code = code;
    }

    pub(crate) fn code(&self) -> i32 {
        self.code
    }
}
