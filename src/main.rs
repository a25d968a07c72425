use clap::Parser;

use pith::cli::{Cli, Command, ExportFormat, McpCommand, SessionsCommand};
use pith::setup::{self, Setup};

fn main() {
    pith::setup::mark_start();
    let cli = Cli::parse();
    let code = match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pith: {e:#}");
            1
        }
    };
    std::process::exit(code);
}

/// Printing commands (`config`, `sessions`) end quietly when their reader goes away
/// (`pith sessions export ID | head`) instead of panicking on a broken pipe, as other command-line
/// tools do. `pith run` keeps ignoring SIGPIPE: a closed stdout must not kill a running turn.
fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn real_main(cli: Cli) -> anyhow::Result<i32> {
    if matches!(
        cli.command,
        Some(Command::Config | Command::Sessions { .. } | Command::Mcp { .. })
    ) {
        default_sigpipe();
    }
    match cli.command {
        Some(Command::Config) => {
            let loaded = if cli.trust {
                Setup::with_trust(cli.config, true)?.loaded
            } else {
                setup::load_config(cli.config)?.1
            };
            print!("{}", pith::config::load::render_effective(&loaded));
            Ok(0)
        }
        Some(Command::Mcp {
            command: McpCommand::List { tools },
        }) => {
            let setup = Setup::new(cli.config)?;
            let model = cli.model.or(setup.loaded.config.model.clone());
            let report = runtime()?.block_on(pith::mcp::report::list(
                &setup.loaded.config,
                &setup.workspace,
                model.as_deref(),
                tools,
            ));
            print!("{report}");
            Ok(0)
        }
        Some(Command::Sessions { command }) => {
            let setup = Setup::with_trust(cli.config, cli.trust)?;
            sessions(&setup, command)
        }
        Some(Command::Run(args)) => {
            let setup = Setup::with_trust(cli.config, cli.trust)?;
            runtime()?.block_on(pith::headless::run(setup, args))
        }
        None => {
            let setup = Setup::with_trust(cli.config, cli.trust)?;
            runtime()?.block_on(pith::interactive::run(
                setup,
                cli.session,
                cli.continue_last,
                cli.model,
            ))
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    pith::provider::init_tls();
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn sessions(setup: &Setup, command: SessionsCommand) -> anyhow::Result<i32> {
    match command {
        SessionsCommand::List => {
            let sessions = setup.store.list_sessions()?;
            println!(
                "{:<26}  {:<40}  {:<16}  {:>8}  DIRECTORY",
                "ID", "TITLE", "UPDATED", "TOKENS"
            );
            for s in sessions {
                let updated = chrono::DateTime::from_timestamp_millis(s.time_updated)
                    .map(|t| {
                        t.with_timezone(&chrono::Local)
                            .format("%Y-%m-%d %H:%M")
                            .to_string()
                    })
                    .unwrap_or_default();
                let title: String = s.title.chars().take(40).collect();
                println!(
                    "{:<26}  {:<40}  {:<16}  {:>8}  {}",
                    s.id, title, updated, s.tokens, s.directory
                );
            }
            Ok(0)
        }
        SessionsCommand::Export { id, format } => {
            let Some(session) = setup.store.find_session(&id)? else {
                anyhow::bail!("no session with id {id} (see `pith sessions list`)");
            };
            let messages = setup.store.load_all(&id)?;
            match format {
                ExportFormat::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&pith::store::export::export_json(
                        &session, &messages
                    ))?
                ),
                ExportFormat::Md => {
                    print!(
                        "{}",
                        pith::store::export::export_markdown(&session, &messages)
                    )
                }
            }
            Ok(0)
        }
    }
}
