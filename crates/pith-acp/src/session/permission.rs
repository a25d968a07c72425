//! A permission question put to the editor as `session/request_permission`, and its answer
//! read back for the engine.

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallUpdate, ToolCallUpdateFields,
};
use pith_protocol::event::{Op, PermissionReply, PermissionRequest};

use super::Session;
use crate::rpc::RpcError;

/// A permission question as `session/request_permission`; the answer goes back to the engine,
/// which applies it as the TUI's would be. No answer (an error) denies; a `cancelled` outcome
/// denies and ends the turn, as Esc at the TUI's question does.
pub(super) async fn ask(session: Arc<Session>, req: PermissionRequest) {
    let options = options(&req);
    let mut title = req.title.clone();
    if let Some(agent) = &req.agent {
        title = format!("{agent}: {title}");
    }
    let fields = ToolCallUpdateFields::new()
        .title(title)
        .kind(crate::tools::kind(&req.tool));
    let params = RequestPermissionRequest::new(
        session.id.clone(),
        ToolCallUpdate::new(req.call_id.clone(), fields),
        options,
    );
    let answer = session
        .conn
        .request("session/request_permission", params)
        .await;
    let Some(reply) = reply_of(answer) else {
        session.cancel();
        return;
    };
    let _ = session.send(Op::PermissionReply {
        id: req.id,
        reply,
        message: None,
    });
}

/// The choices offered for `req`: a plan's, or once / always (where there is something to
/// grant) / this exact command (for a command granted by prefix) / reject.
fn options(req: &PermissionRequest) -> Vec<PermissionOption> {
    let always = if req.tool == "mcp_sampling" {
        format!(
            "Always allow MCP server {} to ask the model (this session)",
            req.patterns.join(", ")
        )
    } else {
        format!("Always allow {}", req.patterns.join(", "))
    };
    if req.tool == pith_tools::mode::EXIT_PLAN_TOOL {
        plan_options()
    } else {
        let mut options = vec![PermissionOption::new(
            "allow_once",
            "Allow once",
            PermissionOptionKind::AllowOnce,
        )];
        // "always" only where there is something to grant (not a protected path, a loop)
        if !req.patterns.is_empty() {
            options.push(PermissionOption::new(
                "allow_always",
                always,
                PermissionOptionKind::AllowAlways,
            ));
        }
        // a command granted by prefix can be granted only as written instead
        if pith_protocol::tool::ToolName::parse(&req.tool).is(pith_protocol::tool::Builtin::Bash)
            && req.grants_a_prefix()
        {
            options.push(PermissionOption::new(
                "allow_always_exact",
                "Always allow this exact command",
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(PermissionOption::new(
            "reject",
            "Reject",
            PermissionOptionKind::RejectOnce,
        ));
        options
    }
}

/// The engine's reply for the editor's answer; `None` when the editor cancelled the question.
/// An answer pith cannot read, or none, denies.
fn reply_of(answer: Result<serde_json::Value, RpcError>) -> Option<PermissionReply> {
    let reply = match answer.map(serde_json::from_value::<RequestPermissionResponse>) {
        Ok(Ok(r)) => match r.outcome {
            RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                "allow_once" => PermissionReply::Once,
                "allow_always" => PermissionReply::Always,
                "allow_always_exact" => PermissionReply::AlwaysExact,
                _ => PermissionReply::Deny,
            },
            RequestPermissionOutcome::Cancelled => return None,
            #[allow(unreachable_patterns)]
            _ => PermissionReply::Deny,
        },
        Ok(Err(e)) => {
            tracing::warn!("acp: a permission answer pith cannot read: {e}");
            PermissionReply::Deny
        }
        Err(e) => {
            tracing::warn!("acp: the permission request failed: {}", e.message);
            PermissionReply::Deny
        }
    };
    Some(reply)
}

/// The choices for a plan (`exit_plan_mode`), as the TUI offers them: "always" accepts it and
/// switches to accept-edits, "once" accepts it and asks before edits, "reject" keeps planning.
fn plan_options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(
            "allow_always",
            "Yes, and auto-accept edits",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            "allow_once",
            "Yes, and ask for edits",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            "reject",
            "No, keep planning",
            PermissionOptionKind::RejectOnce,
        ),
    ]
}
