//! The rule tables: the built-in defaults, the user's rules merged over them, and the action
//! a table gives a subject (the longest matching pattern wins; ties: the stricter action).

use std::collections::{BTreeMap, HashMap};

use globset::GlobMatcher;

use super::bash::UNSANDBOXED;
use super::{DOOM_LOOP, EXTERNAL_DIRECTORY, HARD_LINK, Permissions};
use pith_config::{PermissionAction, PermissionSetting};

#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) pattern: String,
    matcher: Option<GlobMatcher>,
    pub(super) action: PermissionAction,
}

impl Rule {
    pub(super) fn new(pattern: &str, action: PermissionAction) -> Rule {
        let matcher = pith_config::permission_glob(pattern)
            .map_err(|e| tracing::warn!(pattern, error = %e, "permission pattern is not a valid glob; matched literally"))
            .ok();
        Rule {
            pattern: pattern.to_string(),
            matcher,
            action,
        }
    }

    fn matches(&self, subject: &str) -> bool {
        match &self.matcher {
            Some(m) => m.is_match(subject),
            None => self.pattern == subject,
        }
    }
}

fn severity(a: PermissionAction) -> u8 {
    match a {
        PermissionAction::Allow => 0,
        PermissionAction::Ask => 1,
        PermissionAction::Deny => 2,
    }
}

/// The built-in rules, underneath the user's.
fn defaults() -> BTreeMap<String, Vec<(&'static str, PermissionAction)>> {
    use PermissionAction::*;
    let env = [("*.env", Ask), ("*.env.*", Ask)];
    let mut d: BTreeMap<String, Vec<(&'static str, PermissionAction)>> = BTreeMap::new();
    d.insert(
        "read".into(),
        vec![("*", Allow), env[0], env[1], ("*.env.example", Allow)],
    );
    d.insert("write".into(), vec![("*", Ask), env[0], env[1]]);
    d.insert("edit".into(), vec![("*", Ask), env[0], env[1]]);
    d.insert("bash".into(), vec![("*", Ask)]);
    // a sub-agent's own calls are checked like any other; starting one is not a risk by itself
    for t in [
        "glob",
        "grep",
        "list",
        "todowrite",
        "recall",
        "tool_search",
        "task",
        "skill",
        // the session's own background jobs (starting one is a bash call, asked as any)
        "job_output",
        "job_kill",
        // offered only when the user's config names a backend: that is the consent
        "websearch",
    ] {
        d.insert(t.into(), vec![("*", Allow)]);
    }
    d.insert(EXTERNAL_DIRECTORY.into(), vec![("*", Ask)]);
    d.insert(UNSANDBOXED.into(), vec![("*", Ask)]);
    d.insert(HARD_LINK.into(), vec![("*", Ask)]);
    d.insert("webfetch".into(), vec![("*", Ask)]);
    d.insert(DOOM_LOOP.into(), vec![("*", Ask)]);
    d
}

/// The built-in rules as `pith config` shows them: comment lines, one per tool, in the order
/// they are written (a rule of the user's for the same tool and pattern wins).
pub fn defaults_text() -> String {
    let mut out = String::from(
        "# Built-in permission rules (under your [permission]; a rule of yours for the same \
         tool and pattern wins):\n",
    );
    for (tool, rules) in defaults() {
        let rules: Vec<String> = rules
            .iter()
            .map(|(p, a)| {
                let a = match a {
                    PermissionAction::Allow => "allow",
                    PermissionAction::Ask => "ask",
                    PermissionAction::Deny => "deny",
                };
                format!("{p} = {a}")
            })
            .collect();
        out.push_str(&format!("#   {tool}: {}\n", rules.join(", ")));
    }
    out
}

/// Whether `path` is named like the `.env` files the default `read` rules ask about (`*.env`,
/// `*.env.*`, but not `*.env.example`): searches skip them.
pub(crate) fn is_env_file(path: &std::path::Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    (name.ends_with(".env") || name.contains(".env.")) && !name.ends_with(".env.example")
}

impl Permissions {
    pub fn new(user: &BTreeMap<String, PermissionSetting>) -> Self {
        let mut merged: BTreeMap<String, BTreeMap<String, (PermissionAction, bool)>> =
            BTreeMap::new();
        for (tool, rules) in defaults() {
            let t = merged.entry(tool).or_default();
            for (p, a) in rules {
                t.insert(p.to_string(), (a, true));
            }
        }
        for (tool, setting) in user {
            let t = merged.entry(tool.clone()).or_default();
            let user_rules: Vec<(String, PermissionAction)> = match setting {
                PermissionSetting::Action(a) => vec![("*".to_string(), *a)],
                PermissionSetting::Patterns(map) => {
                    map.iter().map(|(p, a)| (p.clone(), *a)).collect()
                }
            };
            for (p, a) in &user_rules {
                t.insert(p.clone(), (*a, false));
            }
            if let Some((_, star)) = user_rules.iter().find(|(p, _)| p == "*") {
                t.retain(|p, (a, is_default)| {
                    !(*is_default && p != "*" && severity(*a) < severity(*star))
                });
            }
        }
        let rules = merged
            .into_iter()
            .map(|(tool, t)| {
                (
                    tool,
                    t.into_iter().map(|(p, (a, _))| Rule::new(&p, a)).collect(),
                )
            })
            .collect();
        Permissions {
            rules,
            granted: BTreeMap::new(),
            pending: HashMap::new(),
            mcp: HashMap::new(),
            notes: HashMap::new(),
        }
    }

    /// The action for `forms` in `table` and the pattern that decided it.
    pub(super) fn decide(&self, table: &str, forms: &[&str]) -> (PermissionAction, Option<String>) {
        let Some(rules) = self.rules.get(table) else {
            // A tool nobody configured: ask.
            return (PermissionAction::Ask, None);
        };
        let best = rules
            .iter()
            .filter(|r| forms.iter().any(|f| r.matches(f)))
            .max_by(|a, b| {
                a.pattern
                    .chars()
                    .count()
                    .cmp(&b.pattern.chars().count())
                    .then(severity(a.action).cmp(&severity(b.action)))
            });
        match best {
            Some(r) => (r.action, Some(r.pattern.clone())),
            None => (PermissionAction::Ask, None),
        }
    }

    pub(super) fn is_granted(&self, table: &str, forms: &[&str]) -> bool {
        self.granted
            .get(table)
            .is_some_and(|rules| rules.iter().any(|r| forms.iter().any(|f| r.matches(f))))
    }
}
