//! The user's hooks and what they gave the model that waits for the next prompt.

use std::sync::Arc;

use crate::hook_commands::HookEvent;
use pith_protocol::message::PartKind;

/// The user's hooks (`[[hooks.EVENT]]`) and what they gave the model.
pub(crate) struct HookState {
    commands: Arc<crate::hook_commands::Hooks>,
    /// What `session_start` and `post_compact` hooks gave the model, carried by the next
    /// prompt.
    context: Vec<PartKind>,
}

impl HookState {
    pub(crate) fn new(commands: Arc<crate::hook_commands::Hooks>) -> HookState {
        HookState {
            commands,
            context: Vec::new(),
        }
    }

    /// The user has hooks on `event` (for `subject`, a tool's name).
    pub(crate) fn has(&self, event: HookEvent, subject: Option<&str>) -> bool {
        self.commands.has(event, subject)
    }

    /// The user's hooks, to run them.
    pub(crate) fn commands(&self) -> &Arc<crate::hook_commands::Hooks> {
        &self.commands
    }

    /// Hooks gave the model `parts`: they wait for the next prompt.
    pub(crate) fn add_context(&mut self, parts: impl IntoIterator<Item = PartKind>) {
        self.context.extend(parts);
    }

    /// What hooks gave the model that waits for the next prompt.
    pub(crate) fn context(&self) -> &[PartKind] {
        &self.context
    }

    /// The next prompt carried it, or the session it was for is left.
    pub(crate) fn clear_context(&mut self) {
        self.context.clear();
    }
}
