//! pith: a terminal coding agent that manages its context window.

pub mod cli;
pub mod commands;
pub mod config;
pub mod context;
pub mod engine;
pub mod event;
pub mod first_run;
pub mod headless;
pub mod interactive;
pub mod llm;
pub mod mcp;
pub mod message;
pub mod provider;
pub mod sandbox;
pub mod secrets;
pub mod setup;
pub mod signals;
pub mod snapshot;
pub mod store;
pub mod text;
pub mod tools;
pub mod tui;
