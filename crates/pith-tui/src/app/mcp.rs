//! MCP in the router: the servers' state as the engine reports it (a transcript line when one
//! changes), their prompts in the slash popup, `/mcp`, `/resource` and attaching a resource.

use crate::event::{McpResource, McpServerStatus, McpState, Op};
use crate::mcp::{SlashItem, describe};
use crate::transcript::NoticeLevel;

use super::{App, PickItem, Picker, PickerKind, Popup};

impl App {
    pub(crate) fn mcp_status(&mut self, servers: Vec<McpServerStatus>) {
        for s in &servers {
            let before = self.mcp.iter().find(|o| o.name == s.name);
            let was = before.map(|b| &b.state);
            let changed_state = was != Some(&s.state);
            let line = format!("mcp {}: {}", s.name, describe(s));
            match &s.state {
                McpState::Ready if changed_state => self.transcript.notice(NoticeLevel::Info, line),
                McpState::Ready if before.is_some_and(|b| b.tools != s.tools) => {
                    self.transcript.notice(NoticeLevel::Info, line)
                }
                McpState::Failed { .. } if changed_state => {
                    self.transcript.notice(NoticeLevel::Error, line)
                }
                McpState::Exited { .. } if changed_state => {
                    self.transcript.notice(NoticeLevel::Warn, line)
                }
                _ => {}
            }
        }
        self.mcp = servers;
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

    /// The MCP prompts whose `server:prompt` matches what is typed after `/`.
    pub(crate) fn mcp_prompt_items(&self, typed: &str) -> Vec<SlashItem> {
        let typed = typed.to_lowercase();
        let mut out = Vec::new();
        for s in self.mcp.iter().filter(|s| s.state == McpState::Ready) {
            for p in &s.prompts {
                let name = format!("{}:{}", s.name, p.name).to_lowercase();
                if typed.is_empty() || name.starts_with(&typed) || name.contains(&typed) {
                    out.push(SlashItem::Prompt {
                        server: s.name.clone(),
                        prompt: p.name.clone(),
                        usage: pith_protocol::mcp_prompt::usage(&p.arguments),
                        about: p
                            .description
                            .clone()
                            .map(|d| crate::text::one_line(&d))
                            .unwrap_or_else(|| format!("MCP prompt of {}", s.name)),
                        required: p.arguments.iter().any(|a| a.required),
                    });
                }
            }
        }
        out
    }

    /// For `crate::route`: whether the server `server` offers `prompt` (`None`: no such server).
    pub(crate) fn mcp_has_prompt(&self, server: &str, prompt: &str) -> Option<bool> {
        let s = self.mcp.iter().find(|s| s.name == server)?;
        Some(s.prompts.iter().any(|p| p.name == prompt))
    }

    pub(crate) fn run_mcp_prompt(&mut self, server: String, prompt: String, args: String) {
        self.send(Op::McpPrompt {
            id: crate::message::new_id(),
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
            (None, _) => self.popup = Some(Popup::Mcp(crate::info_popup::McpPopup)),
            (Some("restart"), Some(name)) => {
                if self.mcp.iter().any(|s| s.name == name) {
                    self.send(Op::RestartMcpServer { name: name.into() });
                } else {
                    self.transcript
                        .notice(NoticeLevel::Error, format!("no MCP server named {name}"));
                }
            }
            _ => self.transcript.notice(
                NoticeLevel::Error,
                "usage: /mcp, or /mcp restart NAME".to_string(),
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
