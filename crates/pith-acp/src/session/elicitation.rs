//! An MCP server's form (MCP elicitation) put to the editor as a permission-style
//! `session/request_permission`: "MCP server X asks: MESSAGE" with every field and its default
//! in the content; Accept sends the defaults, Decline declines. A form with a required field
//! that has no default cannot be filled in here: the prompt says so and offers only Decline.

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use pith_protocol::elicitation::{ElicitationAction, ElicitationRequest, Form};
use pith_protocol::event::Op;

use super::Session;
use crate::rpc::RpcError;

/// The text the editor shows: the question, the fields with their defaults, and why only
/// Decline is offered when it is.
pub(crate) fn prompt_text(req: &ElicitationRequest) -> String {
    let mut out = format!("MCP server {} asks: {}\n", req.server, req.message);
    if !req.form.fields.is_empty() {
        out.push_str("\nFields:\n");
    }
    for f in &req.form.fields {
        let default = f
            .default_value()
            .map_or("no default".to_string(), |v| format!("default {v}"));
        let required = if f.required { ", required" } else { "" };
        out.push_str(&format!(
            "- {} ({}{required}): {default}\n",
            f.title,
            f.kind_label()
        ));
    }
    let missing = req.form.missing_defaults();
    if !missing.is_empty() {
        out.push_str(&format!(
            "\nThis editor cannot fill in a form: {} has no default, so pith can only decline.\n",
            missing.join(", ")
        ));
    } else if !req.form.fields.is_empty() {
        out.push_str("\nAccept sends the defaults above.\n");
    }
    out
}

fn options(form: &Form) -> Vec<PermissionOption> {
    let mut options = Vec::new();
    if form.defaults().is_some() {
        options.push(PermissionOption::new(
            "accept",
            "Accept (with the defaults)",
            PermissionOptionKind::AllowOnce,
        ));
    }
    options.push(PermissionOption::new(
        "decline",
        "Decline",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// Asks the editor; the answer goes back to the engine (a failed or unreadable answer
/// declines, a cancelled one cancels).
pub(super) async fn ask(session: Arc<Session>, req: ElicitationRequest) {
    let fields = ToolCallUpdateFields::new()
        .title(format!("MCP server {} asks a question", req.server))
        .kind(ToolKind::Other)
        .content(vec![crate::tools::text(prompt_text(&req))]);
    let params = RequestPermissionRequest::new(
        session.id.clone(),
        ToolCallUpdate::new(format!("elicitation-{}", req.id), fields),
        options(&req.form),
    );
    let answer = session
        .conn
        .request("session/request_permission", params)
        .await;
    let action = action_of(answer);
    let content = match action {
        ElicitationAction::Accept => req.form.defaults(),
        _ => None,
    };
    let _ = session.send(Op::ElicitationReply {
        id: req.id,
        action,
        content,
    });
}

fn action_of(answer: Result<serde_json::Value, RpcError>) -> ElicitationAction {
    match answer.map(serde_json::from_value::<RequestPermissionResponse>) {
        Ok(Ok(r)) => match r.outcome {
            RequestPermissionOutcome::Selected(s) if &*s.option_id.0 == "accept" => {
                ElicitationAction::Accept
            }
            RequestPermissionOutcome::Cancelled => ElicitationAction::Cancel,
            _ => ElicitationAction::Decline,
        },
        _ => ElicitationAction::Decline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(schema: serde_json::Value) -> ElicitationRequest {
        let (message, form) =
            pith_protocol::elicitation::parse_form("Which env?", &schema, &[]).unwrap();
        ElicitationRequest {
            id: "E".into(),
            server: "deploy".into(),
            message,
            form,
        }
    }

    #[test]
    fn defaults_for_every_required_field_offer_accept_with_them() {
        let r = req(
            json!({"type": "object", "properties": {"env": {"type": "string", "enum": ["dev", "prod"], "default": "dev"}}, "required": ["env"]}),
        );
        let text = prompt_text(&r);
        assert!(
            text.starts_with("MCP server deploy asks: Which env?"),
            "{text}"
        );
        assert!(
            text.contains("- env (one of, required): default \"dev\""),
            "{text}"
        );
        let ids: Vec<String> = options(&r.form)
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect();
        assert_eq!(ids, ["accept", "decline"]);
    }

    #[test]
    fn a_required_field_without_a_default_leaves_only_decline() {
        let r = req(
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        );
        let text = prompt_text(&r);
        assert!(
            text.contains("name has no default, so pith can only decline"),
            "{text}"
        );
        let ids: Vec<String> = options(&r.form)
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect();
        assert_eq!(ids, ["decline"]);
    }
}
