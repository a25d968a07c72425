//! A list to choose from (sessions, models, MCP resources, prompts to rewind to, themes): a
//! filter typed over it, a selection moved with the list keys.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Component, Handled};
use super::keymap::{Action, Context, Keymap, key_of};

#[derive(Debug, Clone, PartialEq)]
pub enum PickerKind {
    Sessions,
    Model,
    /// MCP resources (`/resource`); the id is `server:uri`.
    Resource,
    /// An earlier prompt to go back to (`/rewind`).
    Rewind,
    /// The colour theme (`/theme`): moving the selection previews it.
    Theme,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickItem {
    pub id: String,
    pub label: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    pub kind: PickerKind,
    pub items: Vec<PickItem>,
    pub filter: String,
    pub selected: usize,
    pub loading: bool,
}

impl Picker {
    pub fn visible(&self) -> Vec<&PickItem> {
        let f = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| {
                f.is_empty()
                    || i.label.to_lowercase().contains(&f)
                    || i.detail.to_lowercase().contains(&f)
            })
            .collect()
    }
}

impl Component for Picker {
    /// Enter: the chosen entry's id (`None`: nothing matches the filter).
    type Outcome = Option<String>;
    type Context<'a> = ();

    fn on_key(&mut self, k: KeyEvent, keymap: &Keymap) -> Handled<Option<String>> {
        let list = keymap.action(Context::List, key_of(&k));
        let n = self.visible().len();
        match (list, k.code) {
            (Some(Action::ListClose), _) => return Handled::Closed,
            (Some(Action::ListUp), _) => self.selected = self.selected.saturating_sub(1),
            (Some(Action::ListDown), _) => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            (Some(Action::ListPageUp), _) => self.selected = self.selected.saturating_sub(10),
            (Some(Action::ListPageDown), _) => {
                self.selected = (self.selected + 10).min(n.saturating_sub(1))
            }
            (Some(Action::ListAccept), _) => {
                return Handled::Done(self.visible().get(self.selected).map(|i| i.id.clone()));
            }
            (_, KeyCode::Backspace) => {
                self.filter.pop();
                self.selected = 0;
            }
            (_, KeyCode::Char(c)) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, _: ()) {
        super::view::popups::picker(frame, area, self);
    }
}
