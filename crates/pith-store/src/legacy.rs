//! What earlier builds stored differently, read as this build stores it.

use pith_protocol::message::{Message, PartKind, Role};

/// Before messages carried the `mid_turn` flag, a message typed while the agent worked was stored
/// wrapped in this reminder (prompts/mid-turn.md as it was then). Such a message loads as what
/// the user typed, flagged `mid_turn`; the request wraps it again.
const MID_TURN_HEAD: &str = "<system-reminder>\nThe user sent the following message:\n";
const MID_TURN_TAIL: &str =
    "\n\nPlease address this message and continue with your tasks.\n</system-reminder>";

/// Brings a loaded message up to the current form.
pub(super) fn upgrade(m: &mut Message) {
    if m.role != Role::User || m.mid_turn {
        return;
    }
    for p in &mut m.parts {
        if let PartKind::Text {
            text,
            synthetic: false,
        } = &mut p.kind
            && let Some(typed) = text
                .strip_prefix(MID_TURN_HEAD)
                .and_then(|t| t.strip_suffix(MID_TURN_TAIL))
        {
            *text = typed.to_string();
            m.mid_turn = true;
        }
    }
}
