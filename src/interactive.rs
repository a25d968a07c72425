//! `pith` without a subcommand: the TUI over the engine.

use crate::setup::Setup;

pub async fn run(
    _setup: Setup,
    _session: Option<String>,
    _continue_last: bool,
    _model: Option<String>,
) -> anyhow::Result<i32> {
    eprintln!("pith: the terminal UI is not wired yet; use `pith run \"PROMPT\"`");
    Ok(2)
}
