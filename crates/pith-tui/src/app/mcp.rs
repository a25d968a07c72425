//! MCP in the router: the servers' reports (a transcript line when one
//! changes), their prompts in the slash popup, `/mcp`, `/resource` and attaching a resource.

use crate::transcript::NoticeLevel;
use pith_protocol::event::{McpResource, McpServerStatus, Op};

use super::{App, PickItem, Picker, PickerKind, Popup};

impl App {
    /// The servers as the engine reports them now; a line in the transcript for each change.
    pub(crate) fn mcp_status(&mut self, servers: Vec<McpServerStatus>) {
        for (level, line) in self.mcp.update(servers) {
            self.transcript.notice(level, line);
        }
    }

    pub(crate) fn mcp_resources(&mut self, resources: Vec<McpResource>) {
        let items: Vec<PickItem> = resources
            .into_iter()
            .map(|r| PickItem {
                id: format!("{}:{}", r.server, r.uri),
                label: r.name.clone(),
                detail: format!(
                    "{} · {}{}",
                    r.server,
                    r.uri,
                    r.mime.map(|m| format!(" · {m}")).unwrap_or_default()
                ),
            })
            .collect();
        if let Some(Popup::Picker(p)) = &mut self.popup
            && *p.kind() == PickerKind::Resource
        {
            p.fill(items);
        }
    }

    pub(crate) fn run_mcp_prompt(&mut self, server: String, prompt: String, args: String) {
        self.send(Op::McpPrompt {
            id: pith_protocol::message::new_id(),
            server,
            prompt,
            args,
        });
        self.transcript.follow();
    }

    /// `/mcp` shows the servers; `/mcp restart NAME` restarts one.
    pub(crate) fn mcp_command(&mut self, arg: Option<String>) {
        let arg = arg.unwrap_or_default();
        let mut words = arg.split_whitespace();
        match (words.next(), words.next()) {
            // nothing to show: say so, and leave the next key to the composer
            (None, _) if self.mcp.list().is_empty() => self.transcript.notice(
                NoticeLevel::Info,
                "no MCP servers configured: add an [mcp.NAME] table to pith.toml (README, MCP)",
            ),
            (None, _) => self.popup = Some(Popup::Mcp(crate::info_popup::McpPopup)),
            (Some("restart"), Some(name)) => {
                if self.mcp.has(name) {
                    self.send(Op::RestartMcpServer { name: name.into() });
                } else {
                    self.transcript
                        .notice(NoticeLevel::Error, format!("no MCP server named {name}"));
                }
            }
            // The URL to open arrives as notices in the transcript (never drawn over the TUI).
            (Some("login"), Some(name)) => {
                if self.mcp.has(name) {
                    self.send(Op::McpLogin { name: name.into() });
                    // Whether a device code is offered the server says (the engine's lines).
                    self.transcript.notice(
                        NoticeLevel::Info,
                        format!("signing in to {name}… (`/copy url` copies the URL to open)"),
                    );
                } else {
                    self.transcript
                        .notice(NoticeLevel::Error, format!("no MCP server named {name}"));
                }
            }
            _ => self.transcript.notice(
                NoticeLevel::Error,
                "usage: /mcp, /mcp restart NAME, or /mcp login NAME".to_string(),
            ),
        }
    }

    /// `/resource server:uri` attaches it; `/resource` lists what the servers offer.
    pub(crate) fn resource_command(&mut self, arg: Option<String>) {
        match arg {
            Some(id) => self.attach_resource(&id),
            None => {
                self.popup = Some(Popup::Picker(Picker::loading(PickerKind::Resource)));
                self.send(Op::ListMcpResources);
            }
        }
    }

    pub(crate) fn attach_resource(&mut self, id: &str) {
        match id.trim().split_once(':') {
            Some((server, uri)) if !server.is_empty() && !uri.is_empty() => {
                self.send(Op::AttachMcpResource {
                    server: server.into(),
                    uri: uri.into(),
                })
            }
            _ => self.transcript.notice(
                NoticeLevel::Error,
                "usage: /resource SERVER:URI (or /resource to choose)".to_string(),
            ),
        }
    }
}
