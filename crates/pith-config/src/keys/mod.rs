//! Key bindings as the config knows them: the actions a key can trigger, their default keys,
//! and the `[keys]` table that rebinds them, checked when the config loads. The TUI asks
//! [`Keymap::action`] what a key means (its `pith-tui/keymap.rs` turns terminal events into [`Key`]s)
//! and acts on that.
//!
//! Adding an action is one [`Action`] variant: its `context` and default `keys` sit in its
//! attributes (the config name is the variant in snake_case), and the TUI's `app/input.rs` handles
//! it.

mod key;

use std::collections::{BTreeMap, HashMap};

use strum::{EnumMessage, EnumProperty, IntoEnumIterator};

pub use key::{Key, KeyCode, KeyModifiers, KeyParseError};

use super::ui::KeyList;

/// Where an action applies. Two actions of one context may not share a key; a `Global` action's
/// key may not be used anywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Context {
    /// Everywhere, before anything else.
    Global,
    /// The prompt and the transcript.
    Chat,
    /// An open list: the slash and `@` popups, pickers, help.
    List,
    /// A permission question.
    Permission,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Chat => "Prompt and transcript",
            Context::List => "Lists and popups",
            Context::Permission => "Permission questions",
        }
    }
}

/// Something a key does. The config name is the variant in snake_case (`kill_line_start`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::EnumIter,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::EnumMessage,
    strum::EnumProperty,
)]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    #[strum(
        message = "clear the prompt, close a popup or question · twice to quit",
        props(context = "global", keys = "ctrl+c")
    )]
    Cancel,
    #[strum(
        message = "send (queued while the agent works)",
        props(context = "chat", keys = "enter ctrl+enter")
    )]
    Submit,
    #[strum(
        message = "new line",
        props(context = "chat", keys = "shift+enter alt+enter ctrl+j")
    )]
    Newline,
    #[strum(
        message = "interrupt the running turn",
        props(context = "chat", keys = "esc")
    )]
    Interrupt,
    #[strum(
        message = "quit (empty prompt)",
        props(context = "chat", keys = "ctrl+d")
    )]
    Quit,
    #[strum(
        message = "earlier prompt (this project's, across sessions)",
        props(context = "chat", keys = "up")
    )]
    HistoryPrev,
    #[strum(message = "later prompt", props(context = "chat", keys = "down"))]
    HistoryNext,
    #[strum(
        message = "edit the prompt in $VISUAL / $EDITOR",
        props(context = "chat", keys = "ctrl+g")
    )]
    OpenEditor,
    #[strum(message = "indent (4 spaces)", props(context = "chat", keys = "tab"))]
    Indent,
    #[strum(
        message = "next permission mode: default, accept-edits, plan",
        props(context = "chat", keys = "shift+tab")
    )]
    CycleMode,
    #[strum(
        message = "delete to the start of the line",
        props(context = "chat", keys = "ctrl+u")
    )]
    KillLineStart,
    #[strum(
        message = "delete to the end of the line",
        props(context = "chat", keys = "ctrl+k")
    )]
    KillLineEnd,
    #[strum(
        message = "delete the word before the cursor",
        props(context = "chat", keys = "ctrl+w alt+backspace")
    )]
    DeleteWord,
    #[strum(
        message = "undo an edit of the prompt",
        props(context = "chat", keys = "ctrl+z")
    )]
    Undo,
    #[strum(
        message = "redo an edit of the prompt",
        props(context = "chat", keys = "ctrl+r")
    )]
    Redo,
    #[strum(
        message = "paste what the last delete removed",
        props(context = "chat", keys = "ctrl+y")
    )]
    Yank,
    #[strum(
        message = "scroll the transcript up",
        props(context = "chat", keys = "pageup")
    )]
    PageUp,
    #[strum(
        message = "scroll the transcript down",
        props(context = "chat", keys = "pagedown")
    )]
    PageDown,
    #[strum(
        message = "top of the transcript (plain key: empty prompt only)",
        props(context = "chat", keys = "ctrl+home home")
    )]
    ScrollTop,
    #[strum(
        message = "bottom of the transcript (plain key: empty prompt only)",
        props(context = "chat", keys = "ctrl+end end")
    )]
    ScrollBottom,
    #[strum(
        message = "expand all tool output, thinking, summaries",
        props(context = "chat", keys = "ctrl+o")
    )]
    ExpandAll,
    #[strum(
        message = "list what left the view at a compaction; enter shows one",
        props(context = "chat", keys = "ctrl+l")
    )]
    LeftList,
    #[strum(
        message = "paste an image from the clipboard (text pastes as text)",
        props(context = "chat", keys = "ctrl+v alt+v")
    )]
    PasteImage,
    #[strum(message = "previous entry", props(context = "list", keys = "up"))]
    ListUp,
    #[strum(message = "next entry", props(context = "list", keys = "down"))]
    ListDown,
    #[strum(message = "a page up", props(context = "list", keys = "pageup"))]
    ListPageUp,
    #[strum(message = "a page down", props(context = "list", keys = "pagedown"))]
    ListPageDown,
    #[strum(message = "choose the entry", props(context = "list", keys = "enter"))]
    ListAccept,
    #[strum(
        message = "complete a command or path",
        props(context = "list", keys = "tab shift+tab")
    )]
    ListComplete,
    #[strum(message = "close the list", props(context = "list", keys = "esc"))]
    ListClose,
    #[strum(message = "allow once", props(context = "permission", keys = "1 y"))]
    AllowOnce,
    #[strum(message = "always allow", props(context = "permission", keys = "2 a"))]
    AllowAlways,
    #[strum(
        message = "deny, with a note for the agent",
        props(context = "permission", keys = "3 n d")
    )]
    DenyWithNote,
    #[strum(message = "deny", props(context = "permission", keys = "esc"))]
    Deny,
    #[strum(
        message = "previous option",
        props(context = "permission", keys = "up left shift+tab")
    )]
    OptionPrev,
    #[strum(
        message = "next option",
        props(context = "permission", keys = "down right tab")
    )]
    OptionNext,
    #[strum(
        message = "answer with the option shown",
        props(context = "permission", keys = "enter")
    )]
    OptionChoose,
    #[strum(
        message = "scroll a long question back",
        props(context = "permission", keys = "pageup")
    )]
    QuestionScrollUp,
    #[strum(
        message = "scroll a long question on (allowing waits for its end)",
        props(context = "permission", keys = "pagedown")
    )]
    QuestionScrollDown,
}

impl Action {
    pub fn all() -> impl Iterator<Item = Action> {
        Action::iter()
    }

    /// The name in `[keys]`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn about(self) -> &'static str {
        self.get_message().unwrap_or("")
    }

    pub fn context(self) -> Context {
        self.get_str("context")
            .and_then(|c| c.parse().ok())
            .unwrap_or(Context::Chat)
    }

    /// The keys it has when the config says nothing.
    pub fn default_keys(self) -> Vec<Key> {
        self.get_str("keys")
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|s| Key::parse(s).ok())
            .collect()
    }

    /// Edits the prompt (also in the permission question's note).
    pub fn is_edit(self) -> bool {
        matches!(
            self,
            Action::KillLineStart
                | Action::KillLineEnd
                | Action::DeleteWord
                | Action::Undo
                | Action::Redo
                | Action::Yank
        )
    }
}

/// A bad `[keys]` entry. `index` is the position of the key spec in the entry's list (for the
/// config loader to point at it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeymapError {
    #[error("keys.{name}: no such action (see /keys for the list)")]
    UnknownAction { name: String },
    #[error("keys.{action}: {error}")]
    BadKey {
        action: String,
        index: usize,
        error: KeyParseError,
    },
    #[error(
        "keys: \"{key}\" is bound to both {} and {} ({}); unbind one (e.g. {} = [])",
        first.name(),
        second.name(),
        second.context().title().to_ascii_lowercase(),
        second.name()
    )]
    Conflict {
        key: String,
        first: Action,
        /// The entry to point at, and the spec's position in it.
        second: Action,
        index: usize,
    },
}

/// The effective bindings.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    keys: BTreeMap<Action, Vec<Key>>,
    lookup: HashMap<(Context, Key), Action>,
    /// Default keys given up to a configured action (`key`, `lost by`, `taken by`).
    pub overridden: Vec<(Key, Action, Action)>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::from_config(&BTreeMap::new()).unwrap_or_else(|_| Keymap {
            keys: BTreeMap::new(),
            lookup: HashMap::new(),
            overridden: Vec::new(),
        })
    }
}

/// Whether keys of contexts `a` and `b` can meet on one key press.
fn overlapping(a: Context, b: Context) -> bool {
    a == b || a == Context::Global || b == Context::Global
}

impl Keymap {
    /// The defaults with `[keys]` over them: a configured action's keys replace its defaults
    /// (an empty list unbinds it). A configured key another action has by default is taken
    /// from that action; two configured actions on one key are an error.
    pub fn from_config(config: &BTreeMap<String, KeyList>) -> Result<Keymap, KeymapError> {
        let mut configured: BTreeMap<Action, Vec<Key>> = BTreeMap::new();
        for (name, specs) in config {
            let action: Action = name
                .parse()
                .map_err(|_| KeymapError::UnknownAction { name: name.clone() })?;
            let mut keys = Vec::new();
            for (index, spec) in specs.0.iter().enumerate() {
                let key = Key::parse(spec).map_err(|error| KeymapError::BadKey {
                    action: name.clone(),
                    index,
                    error,
                })?;
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            configured.insert(action, keys);
        }
        // configured actions first: they keep their keys
        let mut keys: BTreeMap<Action, Vec<Key>> = BTreeMap::new();
        let mut owner: Vec<(Context, Key, Action)> = Vec::new();
        for (action, list) in &configured {
            for (index, key) in list.iter().enumerate() {
                if let Some((_, _, other)) = owner
                    .iter()
                    .find(|(c, k, _)| k == key && overlapping(*c, action.context()))
                {
                    return Err(KeymapError::Conflict {
                        key: key.to_string(),
                        first: *other,
                        second: *action,
                        index,
                    });
                }
                owner.push((action.context(), *key, *action));
            }
            keys.insert(*action, list.clone());
        }
        let mut overridden = Vec::new();
        for action in Action::all().filter(|a| !configured.contains_key(a)) {
            let mut list = Vec::new();
            for key in action.default_keys() {
                match owner
                    .iter()
                    .find(|(c, k, _)| *k == key && overlapping(*c, action.context()))
                {
                    Some((_, _, taker)) => overridden.push((key, action, *taker)),
                    None => {
                        owner.push((action.context(), key, action));
                        list.push(key);
                    }
                }
            }
            keys.insert(action, list);
        }
        let lookup = owner.into_iter().map(|(c, k, a)| ((c, k), a)).collect();
        Ok(Keymap {
            keys,
            lookup,
            overridden,
        })
    }

    /// What `key` does in `context` (a global action first).
    /// A control or alt letter with shift that has no binding of its own does what it does
    /// without shift (so ctrl+shift+c still cancels).
    pub fn action(&self, context: Context, key: Key) -> Option<Action> {
        let find = |key: Key| {
            self.lookup
                .get(&(Context::Global, key))
                .or_else(|| self.lookup.get(&(context, key)))
                .copied()
        };
        find(key).or_else(|| {
            let chord = key
                .mods
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
            (chord
                && key.mods.contains(KeyModifiers::SHIFT)
                && matches!(key.code, KeyCode::Char(_)))
            .then(|| {
                find(Key {
                    mods: key.mods - KeyModifiers::SHIFT,
                    ..key
                })
            })
            .flatten()
        })
    }

    /// Is `key` bound to `action`?
    pub fn is(&self, action: Action, key: Key) -> bool {
        self.keys
            .get(&action)
            .is_some_and(|keys| keys.contains(&key))
    }

    pub fn keys(&self, action: Action) -> &[Key] {
        self.keys.get(&action).map_or(&[], Vec::as_slice)
    }

    /// The key to show in a hint for `action`: the first of `prefer` it has, else its first
    /// (without the kitty keyboard protocol `shift+enter` never arrives, so it is shown only when
    /// preferred); `None` when unbound.
    pub fn hint(&self, action: Action, prefer: &[&str]) -> Option<String> {
        let keys = self.keys(action);
        prefer
            .iter()
            .filter_map(|p| Key::parse(p).ok())
            .find(|k| keys.contains(k))
            .or_else(|| {
                let shift_enter = Key::new(KeyCode::Enter, KeyModifiers::SHIFT);
                keys.iter().copied().find(|k| *k != shift_enter)
            })
            .map(|k| k.to_string())
    }

    /// `ctrl+w · alt+backspace`, or `(unbound)`.
    pub fn describe(&self, action: Action) -> String {
        let keys = self.keys(action);
        if keys.is_empty() {
            return "(unbound)".into();
        }
        keys.iter()
            .map(Key::to_string)
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// Warnings for the user: default keys a configured action took from another one.
    pub fn warnings(&self) -> Vec<String> {
        self.overridden
            .iter()
            .map(|(key, lost, taker)| {
                format!(
                    "keys: \"{key}\" now does {}; {} no longer has it",
                    taker.name(),
                    lost.name()
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
