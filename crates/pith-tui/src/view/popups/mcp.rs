//! `/mcp`: every server, its state, tools, cost and prompts.

use super::{block, centered};
use crate::format::{self, truncate};
use crate::theme::theme;
use pith_protocol::event::{McpServerStatus, McpState};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// `/mcp`: every server, its state, tools, cost and prompts.
pub fn mcp(frame: &mut Frame, area: Rect, servers: &[McpServerStatus]) {
    let mut lines: Vec<Line> = Vec::new();
    if servers.is_empty() {
        lines.push(Line::from(Span::styled(
            " No MCP servers. Add one as [mcp.NAME] in the config (see config.example.toml).",
            Style::default().fg(theme().dim),
        )));
    }
    let name_w = servers
        .iter()
        .map(|s| format::width(&s.name))
        .max()
        .unwrap_or(0);
    let inner_w = area.width.saturating_sub(6).min(94) as usize;
    for s in servers {
        let (mark, color) = match &s.state {
            McpState::Ready => ("●", theme().ok),
            McpState::Starting => ("◌", theme().warn),
            McpState::Disabled => ("○", theme().dim),
            McpState::Failed { .. } | McpState::Exited { .. } => ("✗", theme().err),
        };
        let head = format!(" {:<name_w$}  {:<5}  ", s.name, s.transport);
        let rest = truncate(
            &crate::mcp::describe(s),
            inner_w.saturating_sub(format::width(&head) + 3),
        );
        lines.push(Line::from(vec![
            Span::styled(format!(" {mark}"), Style::default().fg(color)),
            Span::styled(head, Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(rest),
        ]));
        if !s.prompts.is_empty() {
            let prompts: Vec<String> = s
                .prompts
                .iter()
                .map(|p| format!("/{}:{}", s.name, p.name))
                .collect();
            let text = format!("     prompts: {}", prompts.join(" "));
            lines.push(Line::from(Span::styled(
                truncate(&text, inner_w),
                Style::default().fg(theme().dim),
            )));
        }
        if s.resources && s.state == McpState::Ready {
            lines.push(Line::from(Span::styled(
                "     resources: /resource to attach one",
                Style::default().fg(theme().dim),
            )));
        }
        if let Some(sign_in) = &s.sign_in {
            lines.push(Line::from(Span::styled(
                truncate(&format!("     oauth: {sign_in}"), inner_w),
                Style::default().fg(theme().dim),
            )));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        " /mcp restart NAME restarts a server · its log is in pith's log file · any key closes",
        Style::default().fg(theme().dim),
    )));
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = centered(area, (inner_w as u16 + 4).max(40), h);
    frame.render_widget(Clear, r);
    frame.render_widget(Paragraph::new(lines).block(block("mcp servers")), r);
}
