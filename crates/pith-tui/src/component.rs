//! A piece of the screen that owns its state: it takes the keys routed to it and draws itself.
//! The popups (help, picker, `/context`, `/mcp`, the `/login` key dialog), the permission
//! prompt, the composer and the transcript implement it; the status bar takes no keys and has a narrower API.
//! `App` routes (which component has the keys, what a component's result means for the
//! session); a component knows nothing of the engine, the transcript or the other components.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::keymap::Keymap;

/// What a component did with a key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Handled<T> {
    /// The key was used (or ignored); the component stays.
    Consumed,
    /// The key is not one the component takes (the transcript's keys are few): `App` routes it
    /// on.
    Ignored,
    /// The component is done without a result (esc, or a key that closes it).
    Closed,
    /// The component has a result for `App` to act on: a popup is done with it; a component
    /// that stays on screen (the composer) hands over what the key means for the session.
    Done(T),
}

pub(crate) trait Component {
    /// What the component hands back when it is done.
    type Outcome;
    /// What drawing needs besides the component's own state (the keymap, the theme…).
    type Context<'a>;

    /// A key routed to this component; `keymap` says what it means in the component's context.
    fn on_key(&mut self, key: KeyEvent, keymap: &Keymap) -> Handled<Self::Outcome>;

    /// Draws the component on `area`; it may note what the draw decided (a clamped scroll).
    fn render(&mut self, frame: &mut Frame, area: Rect, cx: Self::Context<'_>);
}
