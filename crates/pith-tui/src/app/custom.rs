//! Running custom slash commands: their entries in the slash popup, and sending one's expansion
//! as the user's message, labelled with the command.

use crate::custom_commands::Expanded;
use crate::mcp::SlashItem;
use crate::transcript::PendingPrompt;

use super::App;

impl App {
    /// The custom commands matching what is typed after `/`.
    pub(crate) fn custom_items(&self, typed: &str) -> Vec<SlashItem> {
        self.custom_commands
            .filter(typed)
            .into_iter()
            .map(|c| SlashItem::Custom {
                name: c.name.clone(),
                hint: c.argument_hint.clone(),
                about: c.about(),
                wants_args: !c.argument_hint.is_empty()
                    || c.body.contains("$ARGUMENTS")
                    || (1..=9).any(|n| c.body.contains(&format!("${n}"))),
            })
            .collect()
    }

    pub(crate) fn run_custom_named(&mut self, name: &str, args: &str) {
        if let Some(cmd) = self.custom_commands.get(name) {
            let expanded = cmd.expand(args);
            self.run_expanded(expanded);
        }
    }

    /// Sends an expanded command; the transcript shows its label until the engine stores it.
    pub(crate) fn run_expanded(&mut self, e: Expanded) {
        let id = crate::message::new_id();
        self.transcript.add_pending(PendingPrompt {
            id: id.clone(),
            text: e.label.clone(),
            queued: self.busy(),
        });
        self.send(crate::route::command_op(id, e));
        self.transcript.follow();
    }
}
