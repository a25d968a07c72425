//! The slash commands every front end shares (the TUI, `pith run`, the editor): the built-in
//! table and its parser (`commands`), custom commands from Markdown files (`custom_commands`),
//! and what a typed line is (`route`). No terminal, no engine.

pub mod commands;
pub mod custom_commands;
pub mod goal_args;
pub mod memory;
pub mod route;
pub mod skill_list;

// The paths these modules were written with, when they lived in the binary.
use pith_config as config;
use pith_protocol::{event, message, text};
