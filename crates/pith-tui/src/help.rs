//! The help popup (`/help`, `/keys`): the commands, the keys, the mouse, scrolled with the
//! list keys; any other key closes it.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Component, Handled};
use super::keymap::{Action, Context, Keymap, key_of};

#[derive(Debug, Clone, PartialEq)]
pub struct Help {
    /// How many lines the help is scrolled by (clamped at each draw).
    scroll: usize,
}

impl Help {
    /// The help from its top.
    pub(crate) fn new() -> Self {
        Help { scroll: 0 }
    }

    /// The help scrolled to its `line`th line (`/keys`: the list of keys).
    pub(crate) fn at(line: usize) -> Self {
        Help { scroll: line }
    }
}

impl Component for Help {
    type Outcome = ();
    /// The keymap and the custom commands the help lists.
    type Context<'a> = (&'a Keymap, &'a pith_commands::custom_commands::Commands);

    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<()> {
        match keymap.action(Context::List, key_of(&k)) {
            Some(Action::ListUp) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::ListDown) => self.scroll += 1,
            Some(Action::ListPageUp) => self.scroll = self.scroll.saturating_sub(10),
            Some(Action::ListPageDown) => self.scroll += 10,
            _ => return Handled::Closed,
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, (keymap, custom): Self::Context<'_>) {
        self.scroll = super::view::popups::help(frame, area, self.scroll, keymap, custom);
    }
}
