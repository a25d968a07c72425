//! pith: a terminal coding agent that manages its context window.

pub mod config;
pub mod context;
pub mod engine;
pub mod first_run;
pub mod event;
pub mod message;
pub mod provider;
pub mod store;
pub mod tools;
pub mod tui;
pub mod cli;
pub mod headless;
pub mod interactive;
pub mod setup;
