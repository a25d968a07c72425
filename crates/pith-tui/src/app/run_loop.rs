//! What the run loop (and the benches, which copy it) ask of the router: whether to draw, the
//! effects queued for the terminal, whether to stop, and the transcript for scrolling and counts.

use crate::TuiExit;
use crate::effects::Effect;
use crate::transcript::Transcript;

use super::App;

impl App {
    /// Something changed since the last frame.
    pub fn needs_draw(&self) -> bool {
        self.dirty
    }

    /// A frame was drawn: nothing is left to draw.
    pub fn drawn(&mut self) {
        self.dirty = false;
    }

    /// Asks for a frame though nothing the router saw changed.
    pub fn redraw(&mut self) {
        self.dirty = true;
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    /// Terminal work is waiting for the run loop.
    pub(crate) fn has_effects(&self) -> bool {
        !self.effects.is_empty()
    }

    /// The terminal work queued since the last call, in order.
    pub(crate) fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    pub(crate) fn should_quit(&self) -> bool {
        self.quit.leaving()
    }

    /// The engine's event channel closed: the status bar says so.
    pub(crate) fn engine_closed(&mut self) {
        self.status.engine_stopped();
        self.dirty = true;
    }

    /// A stop signal came from outside: leave with its exit code.
    pub(crate) fn stop_signalled(&mut self, code: i32) {
        self.quit.set_code(code);
        self.quit();
    }

    /// The terminal reports key releases and modifiers (the kitty protocol).
    pub(crate) fn set_keyboard_enhanced(&mut self, on: bool) {
        self.composer.set_keyboard_enhanced(on);
    }

    /// The session on screen and the exit code, when the TUI ends.
    pub(crate) fn into_exit(self) -> TuiExit {
        TuiExit {
            code: self.quit.code(),
        }
    }
}
