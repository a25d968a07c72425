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
    /// What the last compaction took out of the view (`left_list`); the id is the recall id.
    Left,
    /// The memory files (`/memory`); the id is the file's path, opened in the editor.
    Memory,
    /// Which memory file the line (`/remember TEXT`, `#TEXT`) goes to; the id is the scope.
    Remember(String),
    /// The skills found (`/skills`); the id is the skill's name.
    Skills,
    /// The background jobs (`/ps`); the id is the job's number, enter or delete stops it.
    Jobs,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickItem {
    pub id: String,
    pub label: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    kind: PickerKind,
    items: Vec<PickItem>,
    /// Typed over the list: the entries whose label or detail hold it are shown.
    filter: String,
    /// The selection, among the entries shown.
    selected: usize,
    /// Waiting for the engine's list (sessions, resources).
    loading: bool,
}

impl Picker {
    /// A `kind` picker over `items`, `selected` chosen.
    pub(crate) fn new(kind: PickerKind, items: Vec<PickItem>, selected: usize) -> Self {
        Picker {
            kind,
            items,
            filter: String::new(),
            selected,
            loading: false,
        }
    }

    /// A `kind` picker waiting for the engine's list.
    pub(crate) fn loading(kind: PickerKind) -> Self {
        Picker {
            loading: true,
            ..Picker::new(kind, Vec::new(), 0)
        }
    }

    /// The engine's list arrived: the picker shows it from its top.
    pub(crate) fn fill(&mut self, items: Vec<PickItem>) {
        self.items = items;
        self.loading = false;
        self.selected = 0;
    }

    pub fn kind(&self) -> &PickerKind {
        &self.kind
    }

    /// Every entry, the filter aside.
    pub fn items(&self) -> &[PickItem] {
        &self.items
    }

    pub(crate) fn filter(&self) -> &str {
        &self.filter
    }

    pub(crate) fn is_loading(&self) -> bool {
        self.loading
    }

    /// The selection's index among the entries shown.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// The entry selected, when one is shown.
    pub(crate) fn selected_item(&self) -> Option<&PickItem> {
        self.visible().get(self.selected).copied()
    }

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
