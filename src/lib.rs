//! pith: a terminal coding agent that manages its context window.

pub mod acp;
pub mod auth;
// The engine contract lives in its own crate; these paths stay as they were.
pub use pith_protocol::{event, llm, message, text};
// Configuration (files, trust, the keymap spec) is its own crate, with no terminal.
pub use pith_config as config;
// Context management is its own crate: pure logic, no I/O (ARCHITECTURE.md §1).
pub use pith_context as context;
pub mod cli;
pub(crate) mod commands;
pub mod custom_commands;
pub mod engine;
pub(crate) mod first_run;
pub mod headless;
pub mod hooks;
pub mod interactive;
pub mod mcp;
pub mod output;
pub mod provider;
pub(crate) mod route;
pub mod sandbox;
pub(crate) mod secrets;
pub mod setup;
pub(crate) mod signals;
pub(crate) mod snapshot;
pub mod store;
pub mod tools;
pub mod tui;
