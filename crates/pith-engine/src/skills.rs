//! The engine's side of skills (ARCHITECTURE.md §4.7): the `skill` tool offered when there are
//! skills, their names and descriptions in the system prompt within a budget that scales with
//! the window, and the narrowing of a skill's `allowed-tools` while it is active — from the
//! user's message that loaded it (`/NAME`) or the `skill` call that did, until the user's next
//! message.

use std::sync::Arc;

use crate::turn_context::Turn;
use pith_config::skills::{listing, rendered_name};
use pith_protocol::message::{Message, PartKind, Role, ToolState};
use pith_tools::skill::{Scope, SkillTool};

impl Turn<'_> {
    /// Offers the `skill` tool when there are skills (before the tool definitions are sized).
    pub(crate) fn offer_skills(&mut self) {
        if !self.opts.skills.is_empty() {
            self.tools
                .register(Arc::new(SkillTool::new(self.opts.skills.clone())));
        }
    }

    /// Adds the skills block to the system prompt (after the environment and instruction
    /// files), within [`listing::budget`] of the usable window.
    pub(crate) fn apply_skills(&mut self) {
        if self.opts.skills.is_empty() || self.tools.registry().get("skill").is_none() {
            return;
        }
        let budget = listing::budget(self.budget().usable);
        let meter = &*self.meter;
        let Some(l) = pith_config::skills::listing(&self.opts.skills, budget, &|t| meter.text(t))
        else {
            return;
        };
        if let Some(rest) = self.system.get_mut(1) {
            rest.push_str("\n\n");
            rest.push_str(&l.text);
        }
    }

    /// What the active skills leave the model: those loaded since the user's last message.
    pub(crate) fn skill_scope(&self) -> Scope {
        let mut scope = Scope::default();
        if self.opts.skills.is_empty() {
            return scope;
        }
        for name in active_skills(self.log.view()) {
            if let Some(s) = self.opts.skills.get(&name) {
                scope.add(&s.name, s.allowed_tools.as_deref());
            }
        }
        scope
    }
}

/// The skills loaded since the last message the user typed (that message itself, when it is a
/// `/NAME` command, included), in the order they were loaded. With no such message in the view
/// (a compaction in the middle of the turn summarised it), the whole view: the turn goes on.
pub(crate) fn active_skills(view: &[Message]) -> Vec<String> {
    let start = view.iter().rposition(typed_by_user).unwrap_or(0);
    let mut out: Vec<String> = Vec::new();
    for m in &view[start..] {
        for p in &m.parts {
            let name = match &p.kind {
                PartKind::Text {
                    text,
                    synthetic: false,
                } if m.role == Role::User => rendered_name(text).map(str::to_string),
                PartKind::Tool {
                    tool,
                    input,
                    state: ToolState::Completed { .. },
                    ..
                } if tool == pith_context::skills::SKILL_TOOL => input
                    .get("name")
                    .and_then(|n| n.as_str())
                    .map(str::to_string),
                _ => None,
            };
            if let Some(n) = name.filter(|n| !out.contains(n)) {
                out.push(n);
            }
        }
    }
    out
}

/// A user message with text the user typed (not pith's continue note, not a compaction).
fn typed_by_user(m: &Message) -> bool {
    m.role == Role::User
        && m.parts.iter().any(|p| {
            matches!(&p.kind, PartKind::Text { text, synthetic: false } if !text.trim().is_empty())
        })
        && !pith_context::view::is_compaction_message(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{ToolTime, new_id};
    use serde_json::json;

    fn user(text: &str, synthetic: bool) -> Message {
        let mut m = Message::new("s", Role::User);
        m.push(PartKind::Text {
            text: text.into(),
            synthetic,
        });
        m
    }

    fn skill_call(name: &str) -> Message {
        let mut m = Message::new("s", Role::Assistant);
        m.push(PartKind::Tool {
            call_id: new_id(),
            tool: "skill".into(),
            input: json!({ "name": name }),
            state: ToolState::Completed {
                output: String::new(),
                title: String::new(),
                metadata: serde_json::Value::Null,
                time: ToolTime {
                    start: 0,
                    end: 0,
                    compacted: None,
                },
            },
        });
        m
    }

    #[test]
    fn skills_are_active_from_their_loading_until_the_users_next_message() {
        let mut view = vec![user("do it", false), skill_call("pdf-tools")];
        assert_eq!(active_skills(&view), ["pdf-tools"]);
        // pith's own continue note does not end it
        view.push(user("Continue if you have next steps", true));
        view.push(skill_call("changelog"));
        assert_eq!(active_skills(&view), ["pdf-tools", "changelog"]);
        view.push(user("next", false));
        assert!(active_skills(&view).is_empty());
        // `/NAME` is the user's message holding the rendered skill
        view.push(user(
            "<skill name=\"fmt\" path=\"/s/fmt/SKILL.md\">\nbody\n</skill>",
            false,
        ));
        assert_eq!(active_skills(&view), ["fmt"]);
    }
}
