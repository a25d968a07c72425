//! The read-only popups: `/context`'s breakdown of the window and `/mcp`'s servers. They draw
//! what `App` hands them; any key closes them.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use pith_protocol::event::{Breakdown, ContextUsage, McpServerStatus};

use super::component::{Component, Handled};
use super::keymap::Keymap;

/// `/context`: the context window's use, with the breakdown once the engine sends it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextPopup {
    /// `None` until the engine's breakdown arrives (asked during a turn, it comes late).
    breakdown: Option<Breakdown>,
    /// What the user pinned, each with its cost (`/pin`).
    pins: Vec<pith_protocol::event::Pin>,
    /// The instruction files in the system prompt, each with its cost.
    instructions: Vec<pith_protocol::event::InstructionFile>,
}

impl ContextPopup {
    /// The popup waiting for the engine's breakdown.
    pub(crate) fn waiting() -> Self {
        ContextPopup {
            breakdown: None,
            pins: Vec::new(),
            instructions: Vec::new(),
        }
    }

    /// The breakdown the engine answered with.
    pub(crate) fn answered(&mut self, breakdown: Breakdown) {
        self.breakdown = Some(breakdown);
    }

    /// The pins the engine answered with, beside the breakdown.
    pub(crate) fn pinned(&mut self, pins: Vec<pith_protocol::event::Pin>) {
        self.pins = pins;
    }

    /// The instruction files the engine answered with.
    pub(crate) fn instructions(&mut self, files: Vec<pith_protocol::event::InstructionFile>) {
        self.instructions = files;
    }

    #[cfg(test)]
    pub(crate) fn breakdown(&self) -> Option<&Breakdown> {
        self.breakdown.as_ref()
    }
}

impl Component for ContextPopup {
    type Outcome = ();
    /// The window's use and the MCP servers (their tools' share).
    type Context<'a> = (&'a ContextUsage, &'a [McpServerStatus]);

    fn on_key(&mut self, _key: KeyEvent, _keymap: &Keymap) -> Handled<()> {
        Handled::Closed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, (usage, mcp): Self::Context<'_>) {
        super::view::popups::context(
            frame,
            area,
            self.breakdown.as_ref(),
            usage,
            mcp,
            &self.pins,
            &self.instructions,
        );
    }
}

/// `/mcp`: the servers, their state, tools and cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpPopup;

impl Component for McpPopup {
    type Outcome = ();
    /// The servers as the engine last reported them.
    type Context<'a> = &'a [McpServerStatus];

    fn on_key(&mut self, _key: KeyEvent, _keymap: &Keymap) -> Handled<()> {
        Handled::Closed
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, servers: Self::Context<'_>) {
        super::view::popups::mcp(frame, area, servers);
    }
}
