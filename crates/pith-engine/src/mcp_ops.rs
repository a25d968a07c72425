//! The MCP ops the op pump answers itself, even while a turn runs (listing resources, reading
//! one for the next message, restarting a server), and the resource read for the next message.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::error::EngineError;
use crate::mcp_error::McpOpError;
use pith_mcp::McpManager;
use pith_protocol::event::{Event, EventMsg, SettingsEvent};

/// A resource read for the next user message.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// `server:uri`.
    pub label: String,
    pub mime: String,
    pub text: String,
}

/// The resources being read for the next user message (the runner waits for them before it
/// stores that message).
pub(crate) type Attachments = Mutex<Vec<tokio::task::JoinHandle<Option<Attachment>>>>;

/// The MCP ops the pump answers at once, even while a turn runs: listing resources, reading one
/// for the next message (the runner waits for the read before it stores that message), and
/// restarting a server.
pub(crate) fn answer_op(
    id: pith_protocol::event::SubmissionId,
    op: pith_protocol::event::Op,
    attachments: &Attachments,
    events: &mpsc::UnboundedSender<EventMsg>,
    mcp: Option<&Arc<McpManager>>,
) {
    use pith_protocol::event::Op;
    let events = events.clone();
    let Some(manager) = mcp.cloned() else {
        let _ = match op {
            Op::ListMcpResources => {
                let none = SettingsEvent::McpResources {
                    resources: Vec::new(),
                };
                events.send(EventMsg::from(none).answering(&id))
            }
            _ => events.send(EngineError::from(McpOpError::NotConfigured).event_for(Some(id))),
        };
        return;
    };
    match op {
        Op::ListMcpResources => {
            tokio::spawn(async move {
                let resources = manager.list_resources().await;
                let listed = SettingsEvent::McpResources { resources };
                let _ = events.send(EventMsg::from(listed).answering(&id));
            });
        }
        Op::AttachMcpResource { server, uri } => {
            let read = tokio::spawn(async move {
                let label = format!("{server}:{uri}");
                match manager.read_resource(&server, &uri).await {
                    Ok(r) => {
                        let (text, mime) = pith_mcp::prompt::resource_text(&uri, &r);
                        let info = Event::info(format!(
                            "attached {label} ({}) to your next message",
                            pith_tools::truncate::human_bytes(text.len())
                        ));
                        let _ = events.send(EventMsg::from(info).answering(&id));
                        Some(Attachment { label, mime, text })
                    }
                    Err(e) => {
                        let e = McpOpError::Read { label, cause: e };
                        let _ = events.send(EngineError::from(e).event_for(Some(id)));
                        None
                    }
                }
            });
            if let Ok(mut a) = attachments.lock() {
                a.push(read);
            }
        }
        Op::McpLogin { name } => {
            tokio::spawn(super::mcp_login::run(id, name, manager, events));
        }
        Op::RestartMcpServer { name } => {
            tokio::spawn(async move {
                if manager.server(&name).is_none() {
                    let error = EngineError::from(McpOpError::NoServer(name));
                    let _ = events.send(error.event_for(Some(id)));
                    return;
                }
                // A failure shows as the server's state.
                let _ = manager.restart(&name).await;
            });
        }
        _ => {}
    }
}
