//! `/skills` (ARCHITECTURE.md §4.7): the skills found, in a picker — name, where from, what
//! each costs listed and loaded; enter puts `/NAME ` in the composer. Without skills it says
//! where they are looked for and opens nothing.

use crate::app::{App, PickItem, Picker, PickerKind, Popup};
use crate::mcp::SlashItem;
use crate::transcript::NoticeLevel;

impl App {
    pub(crate) fn skills_command(&mut self) {
        let skills = self.custom_commands.skills.clone();
        if skills.list.is_empty() {
            for line in pith_commands::skill_list::lines(&skills) {
                self.transcript.notice(NoticeLevel::Info, line);
            }
            return;
        }
        let items = pith_commands::skill_list::rows(&skills)
            .into_iter()
            .map(|r| PickItem {
                detail: format!(
                    "{} · ~{} listed, ~{} loaded · {}",
                    r.source,
                    r.listing_tokens,
                    r.body_tokens,
                    pith_protocol::text::one_line(&r.description)
                ),
                label: format!("/{}", r.name),
                id: r.name,
            })
            .collect();
        self.popup = Some(Popup::Picker(Picker::new(PickerKind::Skills, items, 0)));
    }

    /// The skills matching what is typed after `/` (prefix, then substring) that no built-in
    /// or custom command shadows.
    pub(crate) fn skill_items(&self, typed: &str) -> Vec<SlashItem> {
        let t = typed.to_lowercase();
        let skills = &self.custom_commands.skills.list;
        let shadowed = |n: &str| {
            self.custom_commands.get(n).is_some()
                || pith_commands::commands::parse(&format!("/{n}")).is_some_and(|r| r.is_ok())
        };
        let prefixed = skills
            .iter()
            .filter(|s| s.name.to_lowercase().starts_with(&t));
        let inside = skills.iter().filter(|s| {
            let n = s.name.to_lowercase();
            !n.starts_with(&t) && n.contains(&t)
        });
        prefixed
            .chain(inside)
            .filter(|s| s.user_invocable && !shadowed(&s.name))
            .map(|s| SlashItem::Custom {
                name: s.name.clone(),
                hint: s.argument_hint.clone(),
                about: format!(
                    "{} (skill, {})",
                    pith_protocol::text::one_line(&s.description),
                    s.root
                ),
                wants_args: !s.argument_hint.is_empty() || s.body.contains("$ARGUMENTS"),
            })
            .collect()
    }

    /// A skill chosen in `/skills`: its command waits in the composer for the arguments.
    pub(crate) fn skill_picked(&mut self, name: &str) {
        self.composer.set_text(&format!("/{name} "));
    }
}
