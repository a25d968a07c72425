//! `theme` and `[keys]`: how the TUI looks and which keys do what. The key names and actions are
//! checked by the TUI's keymap (`tui::keymap`); here is only their shape in the file.

use serde::{Deserialize, Serialize};

/// The keys of one `[keys]` entry: one spec (`"ctrl+u"`) or a list (`["ctrl+w", "alt+backspace"]`,
/// `[]` to unbind).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct KeyList(pub Vec<String>);

impl<'de> Deserialize<'de> for KeyList {
    /// By hand, so a wrong value says what is expected.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = KeyList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key such as \"ctrl+u\", or a list of keys")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyList(vec![v.to_string()]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(KeyList(out))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A theme name: letters, digits, `-`, `_` (it names a file in `themes/`).
pub fn valid_theme_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
