//! Key bindings: the actions a key can trigger, their default keys, and the `[keys]` table of the
//! config that rebinds them. `input.rs` asks [`Keymap::action`] what a key means and acts on that.
//!
//! Adding an action is one [`Action`] variant: its `context` and default `keys` sit in its
//! attributes (the config name is the variant in snake_case), and `input.rs` handles it.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use strum::{EnumMessage, EnumProperty, IntoEnumIterator};

use crate::config::ui::KeyList;

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
        message = "clear the prompt, close a popup · twice to quit",
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
    #[strum(message = "earlier prompt", props(context = "chat", keys = "up"))]
    HistoryPrev,
    #[strum(message = "later prompt", props(context = "chat", keys = "down"))]
    HistoryNext,
    #[strum(message = "indent (4 spaces)", props(context = "chat", keys = "tab"))]
    Indent,
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

/// The key of `expand_all` as fold hints show it: cells render without the app at hand, so the
/// keymap in use publishes it at start (`None`: the default, `Some("")`: unbound).
static EXPAND_KEY: std::sync::RwLock<Option<String>> = std::sync::RwLock::new(None);

/// Makes the fold hints name `map`'s keys (called once at start).
pub fn publish(map: &Keymap) {
    if let Ok(mut k) = EXPAND_KEY.write() {
        *k = Some(map.hint(Action::ExpandAll, &["ctrl+o"]).unwrap_or_default());
    }
}

/// `ctrl+o`, or `click` when `expand_all` has no key.
pub fn expand_key() -> String {
    match EXPAND_KEY.read().ok().and_then(|k| k.clone()) {
        None => "ctrl+o".into(),
        Some(k) if k.is_empty() => "click".into(),
        Some(k) => k,
    }
}

/// `click or ctrl+o to expand`.
pub fn expand_hint() -> String {
    match expand_key().as_str() {
        "click" => "click to expand".into(),
        k => format!("click or {k} to expand"),
    }
}

/// Applies an editing action to a text field (the prompt, a permission note).
pub fn edit(ta: &mut ratatui_textarea::TextArea<'_>, action: Action) {
    match action {
        Action::KillLineStart => {
            ta.delete_line_by_head();
        }
        Action::KillLineEnd => {
            ta.delete_line_by_end();
        }
        Action::DeleteWord => {
            ta.delete_word();
        }
        Action::Undo => {
            ta.undo();
        }
        Action::Redo => {
            ta.redo();
        }
        Action::Yank => {
            ta.paste();
        }
        _ => {}
    }
}

/// Whether a key no action claimed may go to the text field's own handling. Not the keys it
/// would treat as one of the editing actions above (its `ctrl+u` is undo): those do what the
/// keymap says or nothing.
pub fn to_textarea(ev: &KeyEvent) -> bool {
    let key = Key::of(ev);
    let ctrl = key.mods == KeyModifiers::CONTROL;
    let alt = key.mods == KeyModifiers::ALT;
    !matches!(
        (key.code, ctrl, alt),
        (
            KeyCode::Char('u' | 'r' | 'k' | 'w' | 'y' | 'j' | 'z'),
            true,
            _
        ) | (KeyCode::Backspace | KeyCode::Char('h'), _, true)
    )
}

/// One key with its modifiers, as a binding names it (`ctrl+u`, `shift+tab`, `f2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const MODS: KeyModifiers = KeyModifiers::CONTROL
    .union(KeyModifiers::ALT)
    .union(KeyModifiers::SHIFT)
    .union(KeyModifiers::SUPER);

impl Key {
    /// The key as terminals report it normalised: `shift+tab` is `BackTab`, a shifted letter is
    /// the capital without `shift`, a control letter lowercase.
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Key {
        let mut mods = mods & MODS;
        let code = match code {
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) => {
                if c.is_alphabetic() && mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) {
                    // `ctrl+shift+a` arrives as `A` or as `a` with shift: one key either way
                    if c.is_uppercase() {
                        mods.insert(KeyModifiers::SHIFT);
                    }
                    KeyCode::Char(c.to_lowercase().next().unwrap_or(c))
                } else if mods.contains(KeyModifiers::SHIFT) && c.is_alphabetic() {
                    mods.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
                } else if !c.is_alphabetic() && c != ' ' {
                    // `?` or `!` arrive with or without shift, depending on the terminal
                    mods.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(c)
                } else {
                    KeyCode::Char(c)
                }
            }
            other => other,
        };
        Key { code, mods }
    }

    pub fn of(ev: &KeyEvent) -> Key {
        Key::new(ev.code, ev.modifiers)
    }

    /// Parses `ctrl+u`, `alt+enter`, `shift+tab`, `esc`, `f2`, `?`, `ctrl++`.
    pub fn parse(spec: &str) -> Result<Key, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("an empty key".into());
        }
        let (mods_part, key) = match spec.strip_suffix('+') {
            // `ctrl++` or a lone `+`
            Some(rest) if rest.is_empty() || rest.ends_with('+') => (rest, "+"),
            _ => match spec.rsplit_once('+') {
                Some((m, k)) => (m, k),
                None => ("", spec),
            },
        };
        if key.is_empty() {
            return Err(format!("\"{spec}\" names no key after its modifiers"));
        }
        let mut mods = KeyModifiers::NONE;
        for m in mods_part.split('+').filter(|m| !m.is_empty()) {
            mods |= match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" | "c" => KeyModifiers::CONTROL,
                "alt" | "meta" | "option" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                "super" | "cmd" | "win" => KeyModifiers::SUPER,
                other => {
                    return Err(format!(
                        "unknown modifier \"{other}\" in \"{spec}\" (ctrl, alt, shift, super)"
                    ));
                }
            };
        }
        let mut chars = key.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(if mods.contains(KeyModifiers::CONTROL) {
                c.to_ascii_lowercase()
            } else {
                c
            }),
            _ => named(&key.to_ascii_lowercase())
                .ok_or_else(|| format!("unknown key \"{key}\" in \"{spec}\""))?,
        };
        Ok(Key::new(code, mods))
    }
}

fn named(name: &str) -> Option<KeyCode> {
    Some(match name {
        "enter" | "return" | "ret" | "cr" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "backspace" | "bs" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" | "pgdown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "space" => KeyCode::Char(' '),
        "plus" => KeyCode::Char('+'),
        "minus" => KeyCode::Char('-'),
        f if f.starts_with('f') => match f[1..].parse::<u8>() {
            Ok(n @ 1..=24) => KeyCode::F(n),
            _ => return None,
        },
        _ => return None,
    })
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (m, name) in [
            (KeyModifiers::CONTROL, "ctrl+"),
            (KeyModifiers::ALT, "alt+"),
            (KeyModifiers::SUPER, "super+"),
            (KeyModifiers::SHIFT, "shift+"),
        ] {
            if self.mods.contains(m) {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::BackTab => f.write_str("shift+tab"),
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            other => f.write_str(&format!("{other:?}").to_ascii_lowercase()),
        }
    }
}

/// A bad `[keys]` entry. `index` is the position of the key spec in the entry's list (for the
/// config loader to point at it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeymapError {
    #[error("keys.{name}: no such action (see /keys for the list)")]
    UnknownAction { name: String },
    #[error("keys.{action}: {message}")]
    BadKey {
        action: String,
        index: usize,
        message: String,
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
                let key = Key::parse(spec).map_err(|message| KeymapError::BadKey {
                    action: name.clone(),
                    index,
                    message,
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

    /// What `ev` does in `context` (a global action first).
    /// A control or alt letter with shift that has no binding of its own does what it does
    /// without shift (so ctrl+shift+c still cancels).
    pub fn action(&self, context: Context, ev: &KeyEvent) -> Option<Action> {
        let key = Key::of(ev);
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

    /// Is `ev` bound to `action`?
    pub fn is(&self, action: Action, ev: &KeyEvent) -> bool {
        self.keys
            .get(&action)
            .is_some_and(|keys| keys.contains(&Key::of(ev)))
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
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    fn cfg(entries: &[(&str, &[&str])]) -> BTreeMap<String, KeyList> {
        entries
            .iter()
            .map(|(a, k)| {
                let keys = k.iter().map(|s| s.to_string()).collect();
                (a.to_string(), KeyList(keys))
            })
            .collect()
    }

    #[test]
    fn specs_parse_to_what_terminals_send() {
        let k = |s: &str| Key::parse(s).unwrap();
        assert_eq!(
            k("ctrl+u"),
            Key::of(&ev(KeyCode::Char('u'), KeyModifiers::CONTROL))
        );
        assert_eq!(k("Ctrl+U"), k("ctrl+u"), "control letters ignore case");
        assert_eq!(
            k("alt+enter"),
            Key::of(&ev(KeyCode::Enter, KeyModifiers::ALT))
        );
        // shift+tab arrives as BackTab, with or without SHIFT
        assert_eq!(
            k("shift+tab"),
            Key::of(&ev(KeyCode::BackTab, KeyModifiers::SHIFT))
        );
        assert_eq!(
            k("shift+tab"),
            Key::of(&ev(KeyCode::BackTab, KeyModifiers::NONE))
        );
        assert_eq!(k("esc"), Key::of(&ev(KeyCode::Esc, KeyModifiers::NONE)));
        assert_eq!(k("f2"), Key::of(&ev(KeyCode::F(2), KeyModifiers::NONE)));
        assert_eq!(
            k("shift+a"),
            Key::of(&ev(KeyCode::Char('A'), KeyModifiers::SHIFT))
        );
        assert_eq!(
            k("?"),
            Key::of(&ev(KeyCode::Char('?'), KeyModifiers::SHIFT))
        );
        assert_eq!(
            k("ctrl++"),
            Key::of(&ev(KeyCode::Char('+'), KeyModifiers::CONTROL))
        );
        assert_ne!(k("ctrl+u"), k("u"));
        // ctrl/alt with a shifted letter, however the terminal reports it
        assert_eq!(
            k("ctrl+shift+a"),
            Key::of(&ev(KeyCode::Char('A'), KeyModifiers::CONTROL))
        );
        assert_eq!(
            k("alt+A"),
            Key::of(&ev(
                KeyCode::Char('a'),
                KeyModifiers::ALT | KeyModifiers::SHIFT
            ))
        );
        assert_ne!(k("ctrl+shift+a"), k("ctrl+a"));
        assert_ne!(k("enter"), k("shift+enter"));
        for bad in [
            "",
            "ctrl+",
            "hyper+x",
            "f0",
            "f25",
            "pagesideways",
            "ctrl+xy",
        ] {
            assert!(Key::parse(bad).is_err(), "{bad:?} parsed");
        }
        // round trip through the listing
        for s in [
            "ctrl+u",
            "alt+backspace",
            "shift+tab",
            "f2",
            "pageup",
            "ctrl+alt+x",
            "space",
        ] {
            assert_eq!(k(s).to_string(), s);
            assert_eq!(k(&k(s).to_string()), k(s));
        }
    }

    #[test]
    fn defaults_cover_every_action_without_conflicts() {
        let map = Keymap::default();
        assert!(map.overridden.is_empty());
        for a in Action::all() {
            assert!(!map.keys(a).is_empty(), "{} has no default key", a.name());
            assert_eq!(
                a.default_keys().len(),
                a.get_str("keys").unwrap().split_whitespace().count(),
                "{}: a default key does not parse",
                a.name()
            );
        }
        let ctrl_u = ev(KeyCode::Char('u'), KeyModifiers::CONTROL);
        assert_eq!(
            map.action(Context::Chat, &ctrl_u),
            Some(Action::KillLineStart)
        );
        // ctrl+c is global: it wins in every context
        let ctrl_c = ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
        for c in [Context::Chat, Context::List, Context::Permission] {
            assert_eq!(map.action(c, &ctrl_c), Some(Action::Cancel));
        }
        let ctrl_shift_c = ev(
            KeyCode::Char('C'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        );
        assert_eq!(
            map.action(Context::Chat, &ctrl_shift_c),
            Some(Action::Cancel)
        );
        let shift_enter = ev(KeyCode::Enter, KeyModifiers::SHIFT);
        assert_eq!(
            map.action(Context::Chat, &shift_enter),
            Some(Action::Newline)
        );
        let up = ev(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(map.action(Context::List, &up), Some(Action::ListUp));
        assert_eq!(map.action(Context::Chat, &up), Some(Action::HistoryPrev));
        assert_eq!(
            map.action(Context::Permission, &up),
            Some(Action::OptionPrev)
        );
    }

    #[test]
    fn config_replaces_and_takes_keys() {
        let map = Keymap::from_config(&cfg(&[
            ("undo", &["ctrl+u"]),
            ("kill_line_start", &["alt+u", "ctrl+x"]),
            ("indent", &[]),
        ]))
        .unwrap();
        let ctrl_u = ev(KeyCode::Char('u'), KeyModifiers::CONTROL);
        let ctrl_z = ev(KeyCode::Char('z'), KeyModifiers::CONTROL);
        let tab = ev(KeyCode::Tab, KeyModifiers::NONE);
        assert_eq!(map.action(Context::Chat, &ctrl_u), Some(Action::Undo));
        assert_eq!(
            map.action(Context::Chat, &ctrl_z),
            None,
            "replaced, not added"
        );
        assert_eq!(map.action(Context::Chat, &tab), None, "[] unbinds");
        assert!(map.is(
            Action::KillLineStart,
            &ev(KeyCode::Char('x'), KeyModifiers::CONTROL)
        ));
        assert_eq!(map.describe(Action::KillLineStart), "alt+u · ctrl+x");
        assert_eq!(map.describe(Action::Indent), "(unbound)");
        // a configured key taken from another action's defaults is reported
        let map = Keymap::from_config(&cfg(&[("expand_all", &["ctrl+k"])])).unwrap();
        assert_eq!(
            map.action(
                Context::Chat,
                &ev(KeyCode::Char('k'), KeyModifiers::CONTROL)
            ),
            Some(Action::ExpandAll)
        );
        assert!(map.keys(Action::KillLineEnd).is_empty());
        assert_eq!(
            map.warnings(),
            vec!["keys: \"ctrl+k\" now does expand_all; kill_line_end no longer has it"]
        );
        // the same key in different contexts is fine
        assert!(Keymap::from_config(&cfg(&[("list_close", &["q"]), ("submit", &["q"])])).is_ok());
    }

    #[test]
    fn bad_entries_are_errors() {
        let err = Keymap::from_config(&cfg(&[("teleport", &["f1"])])).unwrap_err();
        assert_eq!(
            err,
            KeymapError::UnknownAction {
                name: "teleport".into()
            }
        );
        let err = Keymap::from_config(&cfg(&[("undo", &["ctrl+z", "ctrl+hyper"])])).unwrap_err();
        assert!(
            matches!(err, KeymapError::BadKey { index: 1, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("unknown key \"hyper\""), "{err}");
        let err =
            Keymap::from_config(&cfg(&[("undo", &["f5"]), ("redo", &["f6", "f5"])])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "keys: \"f5\" is bound to both undo and redo (prompt and transcript); unbind one (e.g. redo = [])"
        );
        // a global key may not be reused anywhere
        let err = Keymap::from_config(&cfg(&[("cancel", &["q"]), ("list_close", &["q"])]));
        assert!(matches!(err, Err(KeymapError::Conflict { .. })), "{err:?}");
    }
}
