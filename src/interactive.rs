//! `pith` without a subcommand: the TUI over the engine.

use tokio::sync::mpsc;

use pith_config::catalog;
use pith_engine as engine;
use pith_launch::{FirstModel, FrontEnd, Setup};
use pith_protocol::event::{ContextEvent, ContextUsage, Event, EventMsg, Op, SessionEvent};
use pith_protocol::launch::LocalServer;
use pith_protocol::message::{Message, Session};
use pith_tui::login::KeyNotStored;
use pith_tui::{self as tui, TuiInit};

pub async fn run(
    mut setup: Setup,
    session_id: Option<String>,
    continue_last: bool,
    model_flag: Option<String>,
) -> anyhow::Result<i32> {
    // Before anything uses the configuration: may this directory's pith.toml set what it sets?
    if let Some(question) = setup.trust_question() {
        match tui::trust::ask(question).await? {
            tui::trust::Answer::Trust => setup.decide_trust(true)?,
            tui::trust::Answer::DontTrust => setup.decide_trust(false)?,
            tui::trust::Answer::Quit => return Ok(0),
        }
    }
    pith_tui::highlight::warm_up();
    let resuming = session_id.is_some() || continue_last;
    let (model, mut notice) = match first_model(&setup, model_flag, resuming).await? {
        Start::Go { model, notice } => (model, notice),
        Start::Exit(code) => return Ok(code),
    };
    let session = setup.session(session_id.as_deref(), continue_last, model.as_deref())?;
    if let Some(need) = setup.missing_key(&session.model) {
        let provider = need.provider.clone();
        let store = |_: &str, key: &str| store_key(&setup, &provider, key);
        match tui::key_prompt::ask(vec![need], store).await? {
            tui::key_prompt::KeyAnswer::Submit(_) => {
                if let Some(e) = pith_auth::install_from(&setup.data_dir) {
                    notice = Some(e);
                }
            }
            tui::key_prompt::KeyAnswer::Skip => {}
            tui::key_prompt::KeyAnswer::Quit => return Ok(0),
        }
    }
    let opts = setup.engine_options(FrontEnd::Tui);
    // The engine takes the session's lock and repairs what a crash left, then says what the
    // TUI shows first: the session, the newest page of its history (older pages load as the
    // user scrolls up) and its context figure.
    let mut handle = engine::spawn(opts, setup.store.clone(), session)?;
    let opened = Opened::read(&mut handle.events).await?;
    let init = tui_init(&setup, opened, notice);
    let ops = handle.ops.clone();
    let result = tui::run(init, handle.ops, handle.events, tui_process()).await;
    let _ = ops.send(Op::Shutdown.into());
    let ended = handle.done.await.ok().flatten();
    let exit = result?;
    // the terminal is back: say how to come back to this conversation
    if let Some(ended) = ended.filter(|e| e.has_messages) {
        println!("Resume this session: pith --session {}", ended.session_id);
    }
    Ok(exit.code)
}

/// What an engine says first: the session it opened, with the newest page of its history, and
/// the session's context figure.
struct Opened {
    session: Session,
    messages: Vec<Message>,
    more_history: bool,
    context: ContextUsage,
}

impl Opened {
    async fn read(events: &mut mpsc::UnboundedReceiver<EventMsg>) -> anyhow::Result<Opened> {
        let first = events.recv().await.map(|m| m.event);
        match (first, events.recv().await.map(|m| m.event)) {
            (
                Some(Event::Session(SessionEvent::SessionLoaded {
                    session,
                    messages,
                    more_history,
                    ..
                })),
                Some(Event::Context(ContextEvent::ContextUsage(context))),
            ) => Ok(Opened {
                session,
                messages,
                more_history,
                context,
            }),
            (first, second) => anyhow::bail!(
                "the engine did not start with the session it opened (it sent {first:?} and {second:?})"
            ),
        }
    }
}

/// Whether `pith` goes on after the first questions, and with what.
enum Start {
    /// Go on with this model (else the config's or the session's), saying `notice` first.
    Go {
        model: Option<String>,
        notice: Option<String>,
    },
    /// Leave with this exit code.
    Exit(i32),
}

/// A local server found by probing gets the prompt only once the user has named it: asked
/// once per server, the answer kept in the data dir.
async fn confirm_local(
    setup: &Setup,
    ask: Option<LocalServer>,
) -> anyhow::Result<tui::local_server::Answer> {
    use tui::local_server::Answer;
    let Some(server) = ask else {
        return Ok(Answer::Use);
    };
    let url = server.url.clone();
    let answer = tui::local_server::ask(server).await?;
    if answer == Answer::Use {
        setup.remember_local(&url);
    }
    Ok(answer)
}

/// The model a new session starts with when neither the flag nor the config names one (the
/// launch's [`FirstModel`], asked here with the TUI's modals): the one the environment
/// implies, or a first run's pick after a key is pasted.
async fn first_model(
    setup: &Setup,
    model_flag: Option<String>,
    resuming: bool,
) -> anyhow::Result<Start> {
    match setup
        .first_model(model_flag.as_deref(), resuming, true)
        .await
    {
        FirstModel::Named => {
            return Ok(Start::Go {
                model: model_flag,
                notice: None,
            });
        }
        FirstModel::Implied { model, notice, ask } => match confirm_local(setup, ask).await? {
            tui::local_server::Answer::Use => {
                return Ok(Start::Go {
                    model: Some(model),
                    notice: Some(notice),
                });
            }
            tui::local_server::Answer::DontUse => {}
            tui::local_server::Answer::Quit => return Ok(Start::Exit(0)),
        },
        FirstModel::Unknown => {}
    }
    // a new user: paste a key for one of the hosted providers and go on
    let hosted = setup.hosted_providers();
    if hosted.is_empty() {
        return crate::no_model::run(setup).await.map(Start::Exit);
    }
    let store = |provider: &str, key: &str| store_key(setup, provider, key);
    let provider = match tui::key_prompt::ask(hosted, store).await? {
        tui::key_prompt::KeyAnswer::Submit(provider) => provider,
        tui::key_prompt::KeyAnswer::Skip => {
            return crate::no_model::run(setup).await.map(Start::Exit);
        }
        tui::key_prompt::KeyAnswer::Quit => return Ok(Start::Exit(0)),
    };
    pith_auth::install_from(&setup.data_dir);
    match Setup::model_for_key(&provider) {
        Some((model, notice)) => Ok(Start::Go {
            notice: Some(notice),
            model: Some(model),
        }),
        None => crate::no_model::run(setup).await.map(Start::Exit),
    }
}

/// What the TUI starts with: the session and its newest page, the settings it shows and the
/// first notice (or the configuration's warnings).
fn tui_init(setup: &Setup, opened: Opened, notice: Option<String>) -> TuiInit {
    let custom_commands = setup.custom_commands();
    let warnings: Vec<&String> = setup
        .loaded
        .warnings
        .iter()
        .chain(&custom_commands.warnings)
        .collect();
    let warnings = (!warnings.is_empty()).then(|| {
        warnings
            .iter()
            .map(|w| w.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    });
    TuiInit {
        model: opened.session.model.clone(),
        models: catalog::known_models(setup.config()),
        keys: key_access(setup),
        workspace: setup.workspace.clone(),
        git_branch: tui::git::git_branch(&setup.workspace),
        context: opened.context,
        first_run_hint: notice.or(warnings),
        keymap: keymap(setup),
        appearance: appearance(setup),
        prompt_log: Some(pith_tui::prompt_log::PromptLog::new(
            std::sync::Arc::new(StoreHistory(setup.store.clone())),
            setup.workspace.to_string_lossy().into_owned(),
        )),
        notify: setup.config().notify.clone(),
        hooks: setup.config().hooks.clone(),
        images: image_input(setup),
        session: opened.session,
        messages: opened.messages,
        more_history: opened.more_history,
        custom_commands,
    }
}

/// Pasted images go under the data dir; whether the model on screen takes them is the
/// config's answer, the one the engine gives (`catalog::takes_images`).
pub(crate) fn image_input(setup: &Setup) -> tui::clipboard_image::ImageInput {
    let config = setup.config().clone();
    tui::clipboard_image::ImageInput::new(
        &setup.data_dir,
        std::sync::Arc::new(move |model: &str| catalog::model_takes_images(&config, model)),
    )
}

fn store_key(setup: &Setup, provider: &str, key: &str) -> Result<(), KeyNotStored> {
    crate::auth::cli::store_key(
        &setup.loaded,
        &setup.workspace,
        &setup.data_dir,
        provider,
        key,
    )
    .map(|_| ())
    .map_err(refused)
}

/// A key the TUI could not store: the reason with its causes.
fn refused(e: anyhow::Error) -> KeyNotStored {
    KeyNotStored::Refused(format!("{e:#}"))
}

/// Which providers take a key and have none, and how the TUI stores one (`/login`).
pub(crate) fn key_access(setup: &Setup) -> tui::login::KeyAccess {
    let providers = setup.key_providers();
    let missing = providers
        .iter()
        .filter(|n| setup.missing_key(&format!("{}/-", n.provider)).is_some())
        .map(|n| n.provider.clone())
        .collect();
    let loaded = setup.loaded.clone();
    let workspace = setup.workspace.clone();
    let data_dir = setup.data_dir.clone();
    let store: tui::login::StoreKey = std::sync::Arc::new(move |provider: &str, key: &str| {
        crate::auth::cli::store_key(&loaded, &workspace, &data_dir, provider, key)
            .map_err(refused)?;
        match pith_auth::install_from(&data_dir) {
            None => Ok(()),
            Some(e) => Err(KeyNotStored::Unreadable(e)),
        }
    });
    tui::login::KeyAccess {
        providers,
        missing,
        store: Some(store),
    }
}

/// What the TUI's loop gets from the process: the start time and the stop signals.
pub(crate) fn tui_process() -> tui::Process {
    tui::Process {
        started: pith_launch::setup::started(),
        stop_signals: Box::new(|| {
            let stop = crate::signals::StopSignals::new()?;
            Ok(Box::pin(stop.into_stream()) as tui::StopStream)
        }),
    }
}

/// The default keys with the config's `[keys]` over them (checked when the config loaded).
pub(crate) fn keymap(setup: &Setup) -> tui::keymap::Keymap {
    let map = tui::keymap::Keymap::from_config(&setup.config().keys).unwrap_or_default();
    tui::keymap::publish(&map);
    map
}

/// The theme to start with, applied; user themes live in `themes/` beside the global config.
pub(crate) fn appearance(setup: &Setup) -> tui::appearance::Appearance {
    let configured = setup
        .config()
        .theme
        .clone()
        .map(|t| (t, setup.loaded.origin("theme").to_string()));
    let dir =
        pith_config::load::default_global_file().and_then(|f| f.parent().map(tui::theme::user_dir));
    tui::appearance::Appearance::start(configured, dir, &setup.data_dir)
}

/// The prompt history the TUI keeps, in pith's session store.
struct StoreHistory(std::sync::Arc<pith_store::Store>);

impl pith_tui::prompt_log::PromptHistory for StoreHistory {
    fn project_prompts(
        &self,
        directory: &str,
    ) -> Result<Vec<String>, pith_tui::prompt_log::HistoryError> {
        Ok(self.0.project_prompts(directory)?)
    }

    fn record_prompt(
        &self,
        directory: &str,
        text: &str,
    ) -> Result<(), pith_tui::prompt_log::HistoryError> {
        Ok(self.0.record_prompt(directory, text)?)
    }
}
