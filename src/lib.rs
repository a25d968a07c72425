//! pith: a terminal coding agent that manages its context window.

pub mod acp;
// The engine contract lives in its own crate; these paths stay as they were.
pub use pith_protocol::{event, llm, message, model_name, text, tool};
// Configuration (files, trust, the keymap spec) is its own crate, with no terminal.
pub use pith_config as config;
// Context management is its own crate: pure logic, no I/O (ARCHITECTURE.md §1).
pub use pith_context as context;
// Keys: sealed out of the environment, scrubbed from everything written.
pub(crate) use pith_secrets as secrets;
// The session store (SQLite).
pub use pith_store as store;
// Model providers, one per wire format; building one from the config (with a stored key) is
// the engine's (`pith_engine::factory`).
// Tools, permissions and the OS sandbox around commands.
pub use pith_tools as tools;
pub use pith_tools::sandbox;
// The MCP client: servers, their tools, prompts and resources.
pub use pith_mcp as mcp;
// Stored provider keys; `pith auth` (the command) is the binary's.
pub mod auth {
    pub use pith_auth::*;
    pub mod cli;
}
pub mod provider {
    pub use pith_engine::factory;
    pub use pith_provider::*;
}
pub mod cli;
// The slash commands, custom commands and routing every front end shares.
pub use pith_commands::{commands, custom_commands, route};
// The session loop: ops in, events out; no terminal.
pub use pith_engine as engine;
pub(crate) mod first_run;
pub mod headless;
pub use pith_engine::hook_commands as hooks;
pub mod interactive;
mod no_model;
pub mod output;
pub mod setup;
pub(crate) mod signals;
// `pith update` and how pith was installed (`pith --version`).
pub mod update;
// The terminal front end (ratatui, crossterm): its own crate, wired up by `interactive`.
pub use pith_tui as tui;
