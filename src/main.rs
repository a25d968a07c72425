//! The `pith` binary. Everything it prints goes through `pith::output` (no terminal control
//! sequences reach stdout or stderr).

#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;

use pith::cli::{
    AuthCommand, Cli, Command, EvalCommand, ExportFormat, McpCommand, SessionsCommand,
};
use pith_launch::setup::{self, Setup};

fn main() {
    pith_launch::setup::mark_start();
    ignore_file_size_signal();
    let cli = Cli::parse_args();
    let code = match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            pith::output::error(format_args!("{e:#}"));
            if e.is::<pith::cli::UsageError>() {
                pith::cli::EXIT_USAGE
            } else {
                1
            }
        }
    };
    std::process::exit(code);
}

/// A file-size limit (`ulimit -f`) makes a write that passes it fail instead of killing pith
/// with SIGXFSZ: the store reports the failed write and the streamed answer is still shown.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
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

/// A printing command (`config`, `sessions`, `mcp`, `auth`) ends quietly on a closed pipe and
/// takes none of the session's flags.
fn printing_command(cli: &Cli) -> anyhow::Result<()> {
    if matches!(
        cli.command,
        Some(
            Command::Config
                | Command::Sessions { .. }
                | Command::Mcp { .. }
                | Command::Auth { .. }
                | Command::Update { .. }
        )
    ) {
        default_sigpipe();
        if cli.continue_last
            || cli.session.is_some()
            || cli.model.is_some()
            || cli.effort.is_some()
            || cli.permission_mode.is_some()
        {
            anyhow::bail!(
                "-c/--continue, --session, --model, --effort and --permission-mode apply to the TUI and `pith run`, not to this command"
            );
        }
    }
    Ok(())
}

fn real_main(cli: Cli) -> anyhow::Result<i32> {
    printing_command(&cli)?;
    match cli.command {
        Some(Command::Config) => show_config(cli.config, cli.trust),
        Some(Command::Mcp { command }) => mcp(cli.config, cli.trust, cli.model, command),
        Some(Command::Auth { command }) => {
            let setup = Setup::with_trust(cli.config, cli.trust)?;
            auth(&setup, command)
        }
        Some(Command::Sessions { command }) => {
            let setup = Setup::with_trust(cli.config, cli.trust)?;
            sessions(&setup, command)
        }
        Some(Command::Acp) => {
            if cli.continue_last || cli.session.is_some() || cli.model.is_some() {
                anyhow::bail!(
                    "-c/--continue, --session and --model apply to the TUI and `pith run`; the editor picks the session"
                );
            }
            acp(cli.config, cli.trust)
        }
        Some(Command::Update { check }) => pith::update::run(check),
        Some(Command::Eval {
            command: EvalCommand::Compaction(args),
        }) => {
            if cli.continue_last {
                anyhow::bail!("-c/--continue does not apply to `pith eval`; --session ID does");
            }
            let setup = front_end_setup(cli.config, cli.trust, cli.effort, None)?;
            block_on(pith::eval::run(
                setup,
                pith::eval::Options {
                    scenarios: args.scenarios,
                    format: args.format,
                    presence_only: args.presence_only,
                    window: args.window,
                    save_contexts: args.save_contexts,
                    session: cli.session,
                    model: cli.model,
                },
            ))
        }
        Some(Command::Run(mut args)) => {
            // Global flags, given before or after `run`.
            args.continue_last = cli.continue_last;
            args.session = cli.session;
            args.model = cli.model;
            {
                use std::io::IsTerminal;
                let stdin = std::io::stdin();
                let terminal = stdin.is_terminal();
                args.read_prompt_from(stdin.lock(), terminal)?;
            }
            let setup = front_end_setup(cli.config, cli.trust, cli.effort, cli.permission_mode)?;
            block_on(pith::headless::run(setup, args))
        }
        None => {
            let setup = front_end_setup(cli.config, cli.trust, cli.effort, cli.permission_mode)?;
            block_on(pith::interactive::run(
                setup,
                cli.session,
                cli.continue_last,
                cli.model,
            ))
        }
    }
}

/// `pith config`: the effective configuration and the default permission rules.
fn show_config(config: Option<PathBuf>, trust: bool) -> anyhow::Result<i32> {
    let loaded = if trust {
        Setup::with_trust(config, true)?.loaded
    } else {
        setup::load_config(config)?.1
    };
    pith::out!(
        "{}\n{}",
        pith_config::load::render_effective(&loaded, &pith_launch::setup::env_is_set),
        pith_tools::permission::defaults_text()
    );
    Ok(0)
}

/// `pith acp`: seals the key variables, then serves the editor.
fn acp(config: Option<PathBuf>, trust: bool) -> anyhow::Result<i32> {
    // the key variables are sealed by the configuration of the directory pith starts in
    let setup = Setup::with_trust(config.clone(), trust)?;
    // SAFETY: no other thread exists before the runtime starts.
    unsafe { setup.seal_secrets() };
    drop(setup);
    block_on(pith_acp::run(config, trust))
}

/// `pith mcp list`: the configured servers, connected to, with their tools if asked.
fn mcp_list(
    config: Option<PathBuf>,
    trust: bool,
    model: Option<String>,
    tools: bool,
) -> anyhow::Result<i32> {
    let setup = Setup::with_trust(config, trust)?;
    // SAFETY: no other thread exists before the runtime starts.
    unsafe { setup.seal_secrets() };
    let model = model.or(setup.loaded.config.model.clone());
    block_on(async move {
        let mut estimator =
            pith_context::tokens::Estimator::for_model(model.as_deref().unwrap_or("gpt-4.1"));
        let report = pith_mcp::report::list(
            &setup.loaded.config,
            &setup.workspace,
            model.as_deref(),
            tools,
            Some(&setup.data_dir),
            &mut |specs| estimator.tool_definitions(specs),
        )
        .await;
        pith::out!("{report}");
        Ok(0)
    })
}

/// `pith mcp list`, `pith mcp login NAME`, `pith mcp logout [NAME]`.
fn mcp(
    config: Option<PathBuf>,
    trust: bool,
    model: Option<String>,
    command: McpCommand,
) -> anyhow::Result<i32> {
    let login = match command {
        McpCommand::List { tools } => return mcp_list(config, trust, model, tools),
        McpCommand::Login { name, device } => Some((name, device)),
        McpCommand::Logout { name } => {
            let setup = Setup::with_trust(config, trust)?;
            return block_on(async move { pith::mcp_login::logout(&setup, name.as_deref()).await });
        }
    };
    let Some((name, device)) = login else {
        return Ok(0);
    };
    let setup = Setup::with_trust(config, trust)?;
    // SAFETY: no other thread exists before the runtime starts.
    unsafe { setup.seal_secrets() };
    block_on(async move { pith::mcp_login::login(&setup, &name, device).await })
}

/// The set-up of the TUI and `pith run`: the configuration with the command line's effort and
/// permission mode, the key variables sealed.
fn front_end_setup(
    config: Option<PathBuf>,
    trust: bool,
    effort: Option<pith_protocol::llm::ReasoningEffort>,
    permission_mode: Option<pith_protocol::event::PermissionMode>,
) -> anyhow::Result<Setup> {
    let mut setup = Setup::with_trust(config, trust)?;
    setup.loaded.config.effort = effort;
    setup.loaded.config.permission_mode = permission_mode.unwrap_or_default();
    // SAFETY: no other thread exists before the runtime starts.
    unsafe { setup.seal_secrets() };
    Ok(setup)
}

/// Runs a front end to completion. A tool still stuck in a blocking call (a read the time
/// limit or Ctrl-C gave up on) is not waited for: pith exits anyway.
fn block_on(
    front_end: impl std::future::Future<Output = anyhow::Result<i32>>,
) -> anyhow::Result<i32> {
    pith_provider::init_tls();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(front_end);
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}

fn auth(setup: &Setup, command: AuthCommand) -> anyhow::Result<i32> {
    use pith::auth::cli;
    let out = match command {
        AuthCommand::Login { provider } => {
            let provider = match provider {
                Some(p) => p,
                None => cli::ask_provider(&setup.loaded)?,
            };
            if !setup.loaded.config.provider.contains_key(&provider) {
                // say so before asking for the key
                cli::store_key(
                    &setup.loaded,
                    &setup.workspace,
                    &setup.data_dir,
                    &provider,
                    "",
                )?;
            }
            let key = cli::read_secret(&format!("API key for {provider} (not shown): "))?;
            cli::store_key(
                &setup.loaded,
                &setup.workspace,
                &setup.data_dir,
                &provider,
                &key,
            )?
        }
        AuthCommand::List => cli::list(&setup.loaded, &setup.data_dir, &|v| std::env::var(v).ok())?,
        AuthCommand::Logout { provider } => cli::logout(&setup.data_dir, provider.as_deref())?,
    };
    pith::outln!("{}", out.trim_end());
    Ok(0)
}

fn sessions(setup: &Setup, command: SessionsCommand) -> anyhow::Result<i32> {
    match command {
        SessionsCommand::List => {
            let sessions = setup.store.list_sessions()?;
            pith::outln!(
                "{:<26}  {:<40}  {:<16}  {:>9}  DIRECTORY",
                "ID",
                "TITLE",
                "UPDATED",
                "TOKENS"
            );
            for s in sessions {
                let updated = chrono::DateTime::from_timestamp_millis(s.time_updated)
                    .map(|t| {
                        t.with_timezone(&chrono::Local)
                            .format("%Y-%m-%d %H:%M")
                            .to_string()
                    })
                    .unwrap_or_default();
                // cleaned here too, so the columns stay aligned
                let title: String = pith::output::strip_controls(&s.title)
                    .chars()
                    .take(40)
                    .collect();
                pith::outln!(
                    "{:<26}  {:<40}  {:<16}  {:>9}  {}",
                    s.id,
                    title,
                    updated,
                    pith_protocol::text::count(s.tokens),
                    s.directory
                );
            }
            Ok(0)
        }
        SessionsCommand::Export { id, format } => {
            let Some(session) = setup.store.find_session(&id)? else {
                anyhow::bail!("no session with id {id} (see `pith sessions list`)");
            };
            // When no pith is working on it, first repair what a crash left (tool calls still
            // "running", a step cut short) so the export shows what really happened.
            if let Ok(_lock) = pith_store::lock::SessionLock::acquire(&setup.data_dir, &id)
                && let Err(e) = setup
                    .store
                    .open_view(&id, session.compaction_point.as_deref())
            {
                tracing::warn!("cannot repair session {id} before exporting it: {e:#}");
            }
            let messages = setup.store.load_all(&id)?;
            match format {
                ExportFormat::Json => {
                    let json = serde_json::to_string_pretty(&pith_store::export::export_json(
                        &session, &messages,
                    ))?;
                    pith::outln!("{}", pith::output::escape_json_controls(&json));
                }
                ExportFormat::Md => {
                    pith::out!(
                        "{}",
                        pith_store::export::export_markdown(&session, &messages)
                    )
                }
            }
            Ok(0)
        }
    }
}
