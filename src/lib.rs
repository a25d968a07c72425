//! pith: a terminal coding agent that manages its context window. The binary's own modules
//! (the command line, `pith run`, the TUI's wiring, `pith auth`); everything else is a crate of
//! the workspace, named by its own path (`pith_protocol::event`, `pith_engine::factory`, …).

// `pith auth` (the command); the stored keys are `pith_auth`'s.
pub mod auth {
    pub mod cli;
}
pub mod cli;
pub mod eval;
pub mod headless;
pub mod interactive;
// `pith mcp login|logout`: OAuth sign-ins of HTTP MCP servers.
pub mod mcp_login;
mod no_model;
pub mod output;
pub(crate) mod signals;
// `pith update` and how pith was installed (`pith --version`).
pub mod update;
