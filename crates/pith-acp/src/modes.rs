//! pith's permission modes as the editor's session modes (`session/set_mode`, the mode an
//! update reports).

use agent_client_protocol_schema::v1::{SessionMode, SessionModeState};
use pith_protocol::event::PermissionMode;

/// pith's permission modes as the editor offers them: ask (the default), plan, accept edits,
/// and `--yes`. Deny rules and the sandbox hold in every one.
pub(crate) fn modes(current: &str) -> SessionModeState {
    SessionModeState::new(
        current.to_string(),
        vec![
            SessionMode::new("default", "Ask")
                .description("Ask before running what the permission rules ask about".to_string()),
            SessionMode::new("plan", "Plan").description(
                "Look, don't touch: only tools that read run; the agent ends with a plan to accept"
                    .to_string(),
            ),
            SessionMode::new("accept-edits", "Accept edits").description(
                "Edits and writes inside the workspace are not asked about".to_string(),
            ),
            SessionMode::new("yes", "Yes").description(
                "Allow what the rules ask about (as --yes); leaving the sandbox is still refused"
                    .to_string(),
            ),
        ],
    )
}

/// The editor's mode id of pith's permission mode (with `--yes`).
pub(crate) fn mode_id(mode: PermissionMode, auto_yes: bool) -> &'static str {
    match mode {
        PermissionMode::Default | PermissionMode::Bypass if auto_yes => "yes",
        PermissionMode::Bypass => "yes",
        PermissionMode::Default => "default",
        PermissionMode::Plan => "plan",
        PermissionMode::AcceptEdits => "accept-edits",
    }
}
