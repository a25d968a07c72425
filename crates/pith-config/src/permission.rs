//! Permission rules as written: one action for a tool, or patterns mapped to actions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    Allow,
    Ask,
    Deny,
}

/// A permission entry: one action for the whole tool, or patterns mapped to actions
/// (`[permission.bash] "git status*" = "allow"`). The most specific (longest) matching pattern wins.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PermissionSetting {
    Action(PermissionAction),
    Patterns(BTreeMap<String, PermissionAction>),
}

impl<'de> Deserialize<'de> for PermissionSetting {
    /// By hand, so a wrong value says what is expected (an untagged enum can only say that
    /// nothing matched).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = PermissionSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "\"allow\", \"ask\" or \"deny\", or a table of \"pattern\" = \"allow\" | \"ask\" | \"deny\"",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_action(v).map(PermissionSetting::Action)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((pattern, action)) = map.next_entry::<String, ActionField>()? {
                    out.insert(pattern, action.0);
                }
                Ok(PermissionSetting::Patterns(out))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// An action inside a pattern table, read on its own so an error points at its value.
struct ActionField(PermissionAction);

impl<'de> Deserialize<'de> for ActionField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ActionField;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"allow\", \"ask\" or \"deny\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                parse_action(v).map(ActionField)
            }
        }
        d.deserialize_str(Visitor)
    }
}

fn parse_action<E: serde::de::Error>(v: &str) -> Result<PermissionAction, E> {
    match v {
        "allow" => Ok(PermissionAction::Allow),
        "ask" => Ok(PermissionAction::Ask),
        "deny" => Ok(PermissionAction::Deny),
        other => Err(E::custom(format!(
            "permission action must be \"allow\", \"ask\" or \"deny\", got \"{other}\""
        ))),
    }
}

/// A permission pattern as a glob whose `*` also crosses `/` (what the permission rules match
/// with); loading rejects a pattern this refuses, naming the file and line.
pub fn permission_glob(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
}
