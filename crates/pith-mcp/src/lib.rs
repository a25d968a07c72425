//! MCP client: tools, prompts and resources from any Model Context Protocol server, through the
//! official SDK (`rmcp`).
//!
//! - `connect`: one connection (stdio child in its own process group, or streamable HTTP).
//! - `handler`: pith's side of the protocol (roots, logs, list changes, questions).
//! - `manager`: every configured server — started in the background, restarted on the next use
//!   after it fails or exits, its offer kept current (`list_changed`).
//! - `tool`: an MCP tool as a pith `Tool`, and its result as text.
//! - `search`: deferred definitions behind `tool_search` when they would crowd the window.
//! - `prompt`: prompts as slash commands, resources as attachments.
//! - `questions`: a server's questions to the user (elicitation) and to the model (sampling).

pub mod connect;
mod error_line;
mod handler;
pub mod manager;
pub mod names;
pub mod oauth;
pub mod prompt;
pub mod questions;
pub mod report;
mod requests;
pub mod search;
pub mod tool;

pub use manager::{McpManager, Server};
pub use requests::CallError;
pub use tool::McpTool;
