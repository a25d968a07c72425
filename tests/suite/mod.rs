//! The integration tests, one module per area; each reaches the shared helpers as
//! `crate::support`. Test names are `suite::<area>::<test>`, and insta names the request-body
//! snapshots after them (`snapshots/all__suite__<area>__<name>.snap`).

mod acp;
mod anthropic_provider;
mod auth_login;
mod cli_output;
mod context_background;
mod context_compaction;
mod context_figure;
mod context_retention;
mod context_window;
mod custom_commands;
mod engine_anthropic;
mod engine_images;
mod engine_interrupt;
mod engine_loop;
mod engine_ops;
mod engine_permissions;
mod engine_start;
mod engine_user_tools;
mod fault_run;
mod headless_commands;
mod headless_faults;
mod headless_output;
mod headless_stdin;
mod hooks;
mod mcp_servers;
mod mock_wire;
mod openai_provider;
mod permission_modes;
mod prompt_refused;
mod provider_tls;
mod reliability_cli;
mod reliability_crash;
mod reliability_provider;
mod responses_provider;
mod security_bash;
mod security_files;
mod security_sandbox;
mod security_secrets;
mod security_trust;
mod stop_at_question;
mod subagents;
mod tools_api;
mod tui_e2e;
mod tui_local_server;
