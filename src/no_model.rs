//! The TUI with no model yet (the first-run key dialog skipped, nothing configured): it shows
//! what to put in the config file, and `/model` starts the session at once — the engine is
//! started with the chosen model and the model is remembered as the default (`model = "…"`
//! written to the global config file, its comments kept). Until then every prompt is answered
//! with what is missing.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use crate::interactive::{appearance, image_input, key_access, keymap, tui_process};
use pith_config::catalog;
use pith_engine::{self as engine, EngineOptions};
use pith_launch::first_run;
use pith_launch::{FrontEnd, Setup};
use pith_protocol::event::{
    ContextEvent, ContextUsage, ErrorKind, Event, EventMsg, Op, OutputEvent, SettingsEvent,
    Submission, TurnEnd, TurnEvent,
};
use pith_protocol::message::{Message, PartKind, Role, Session, now_ms};
use pith_tui::{self as tui, TuiInit};

/// What starting an engine needs, owned (the waiting room runs beside the TUI).
struct Starter {
    opts: EngineOptions,
    store: std::sync::Arc<pith_store::Store>,
    /// Where the chosen model is remembered.
    config_file: Option<PathBuf>,
}

pub(crate) async fn run(setup: &Setup) -> anyhow::Result<i32> {
    let hint = Some(first_run::hint(pith_secrets::env_var));
    let (ops_tx, ops_rx) = mpsc::unbounded_channel::<Submission>();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let starter = Starter {
        opts: setup.engine_options(FrontEnd::Tui),
        store: setup.store.clone(),
        config_file: setup
            .config()
            .config_file
            .clone()
            .or_else(pith_config::load::default_global_file),
    };
    let room = tokio::spawn(wait_for_a_model(starter, ops_rx, ev_tx));
    let session = Session {
        id: String::new(),
        title: String::new(),
        directory: setup.workspace.to_string_lossy().to_string(),
        model: "(none)".into(),
        time_created: now_ms(),
        time_updated: now_ms(),
        compaction_point: None,
        cost: 0.0,
        tokens: 0,
        parent_id: None,
        agent: None,
    };
    let init = TuiInit {
        session,
        messages: Vec::new(),
        more_history: false,
        model: "(no model)".into(),
        models: catalog::known_models(setup.config()),
        keys: key_access(setup),
        workspace: setup.workspace.clone(),
        git_branch: tui::git::git_branch(&setup.workspace),
        context: ContextUsage::default(),
        first_run_hint: hint,
        keymap: keymap(setup),
        appearance: appearance(setup),
        custom_commands: setup.custom_commands(),
        prompt_log: None,
        notify: setup.config().notify.clone(),
        hooks: setup.config().hooks.clone(),
        // until `/model` starts one, an image is refused (ctrl+v still pastes text)
        images: image_input(setup),
    };
    let result = tui::run(init, ops_tx, ev_rx, tui_process()).await;
    // the TUI dropped its sender: the room shuts the engine it started down
    let ended = room.await.ok().flatten();
    let exit = result?;
    if let Some(ended) = ended.filter(|e| e.has_messages) {
        println!("Resume this session: pith --session {}", ended.session_id);
    }
    Ok(exit.code)
}

/// Answers what the user tries with what is missing until `/model` names a model that starts;
/// from then on the engine it started gets every op and the TUI every event. Returns how that
/// engine ended.
async fn wait_for_a_model(
    starter: Starter,
    mut ops: mpsc::UnboundedReceiver<Submission>,
    events: mpsc::UnboundedSender<EventMsg>,
) -> Option<engine::Ended> {
    let handle = loop {
        let submission = ops.recv().await?;
        match submission.op {
            Op::Shutdown => return None,
            Op::SetModel { model } => match start(&starter, &model) {
                Ok(started) => break started,
                Err(e) => {
                    let _ = events.send(EventMsg::from(Event::Turn(TurnEvent::Error {
                        kind: ErrorKind::Model,
                        message: format!("cannot use {model}: {e:#}"),
                        failed_message: None,
                    })));
                    continue;
                }
            },
            // the prompt stays in the transcript, followed by the reason it went nowhere
            Op::UserTurn { id, text, .. } => {
                let mut m = Message::new("", Role::User);
                m.submission_id = Some(id);
                m.push(PartKind::Text {
                    text,
                    synthetic: false,
                });
                let _ = events.send(EventMsg::from(Event::Output(OutputEvent::Message {
                    message: m,
                })));
            }
            _ => {}
        }
        let _ = events.send(EventMsg::from(Event::Turn(TurnEvent::Error {
            kind: ErrorKind::NoModel,
            message: "no model yet: /model picks one (it becomes the default), or see the first message for the config file".into(),
            failed_message: None,
        })));
        let _ = events.send(EventMsg::from(Event::Turn(TurnEvent::TurnFinished {
            reason: TurnEnd::Error,
        })));
    };
    let (handle, said) = handle;
    let engine::EngineHandle {
        ops: engine_ops,
        events: mut engine_events,
        done,
    } = handle;
    let forward = events.clone();
    tokio::spawn(async move {
        // the session the engine opened replaces the TUI's transcript: what was chosen is
        // said after it
        let mut said = Some(said);
        while let Some(ev) = engine_events.recv().await {
            let opened = matches!(ev.event, Event::Context(ContextEvent::ContextUsage(_)));
            if forward.send(ev).is_err() {
                break;
            }
            if opened && let Some(said) = said.take() {
                for ev in said {
                    let _ = forward.send(ev.into());
                }
            }
        }
    });
    while let Some(submission) = ops.recv().await {
        let last = matches!(submission.op, Op::Shutdown);
        if engine_ops.send(submission).is_err() || last {
            break;
        }
    }
    let _ = engine_ops.send(Op::Shutdown.into());
    done.await.ok().flatten()
}

/// Starts an engine on a new session with `model` and remembers the model as the default; the
/// engine, and the events that tell the TUI so.
fn start(starter: &Starter, model: &str) -> anyhow::Result<(engine::EngineHandle, Vec<Event>)> {
    pith_engine::factory::split_model(model)?;
    let mut config = starter.opts.config.clone();
    config.model = Some(model.to_string());
    // the model's provider must be one pith can build (a key it needs was asked for first)
    pith_engine::factory::build(&config, model)?;
    let dir = starter.opts.workspace.to_string_lossy().to_string();
    let session = starter.store.create_session(&dir, model)?;
    let opts = EngineOptions {
        config,
        ..starter.opts.clone()
    };
    let handle = engine::spawn(opts, starter.store.clone(), session)?;
    let changed = Event::Settings(SettingsEvent::ModelChanged {
        model: model.to_string(),
    });
    let said = match &starter.config_file {
        Some(path) => match remember_model(path, model) {
            Ok(()) => format!(
                "using {model} — remembered as the default: model = \"{model}\" in {}",
                path.display()
            ),
            Err(e) => format!(
                "using {model} for this session; not remembered as the default ({}: {e})",
                path.display()
            ),
        },
        None => format!("using {model} for this session (no config file to remember it in)"),
    };
    Ok((handle, vec![changed, Event::info(said)]))
}

/// Sets the top-level `model` of the TOML file at `path` (created when missing), keeping the
/// rest of the file as it is, comments included: a `model = …` line before the first table
/// is replaced, else the line is added at the top.
pub(crate) fn remember_model(path: &Path, model: &str) -> std::io::Result<()> {
    let old = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let new = with_model(&old, model);
    if let Err(e) = toml::from_str::<toml::Table>(&new) {
        return Err(std::io::Error::other(format!(
            "the file would not read as TOML: {}",
            e.message()
        )));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("toml.pith-tmp");
    std::fs::write(&tmp, new)?;
    std::fs::rename(&tmp, path)
}

/// `text` with its top-level `model` set to `model`.
fn with_model(text: &str, model: &str) -> String {
    let line = format!("model = {}", toml::Value::String(model.to_string()));
    let mut out = Vec::new();
    let mut replaced = false;
    let mut in_table = false;
    for l in text.lines() {
        let t = l.trim_start();
        in_table |= t.starts_with('[');
        let is_model = t
            .strip_prefix("model")
            .is_some_and(|rest| rest.trim_start().starts_with('='));
        if !in_table && !replaced && is_model {
            out.push(line.clone());
            replaced = true;
        } else {
            out.push(l.to_string());
        }
    }
    if !replaced {
        out.insert(0, line);
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_set_and_the_comments_kept() {
        let file = "# my settings\n\n[provider.local]\nkind = \"openai\" # llama\nmodel = \"not this one\"\n";
        let out = with_model(file, "openai/gpt-4.1-mini");
        assert_eq!(
            out,
            "model = \"openai/gpt-4.1-mini\"\n# my settings\n\n[provider.local]\nkind = \"openai\" # llama\nmodel = \"not this one\"\n"
        );
        let again = with_model(&out, "llamacpp/qwen");
        assert!(
            again.starts_with("model = \"llamacpp/qwen\"\n# my settings"),
            "{again}"
        );
        assert_eq!(again.matches("model = ").count(), 2, "{again}");
        assert_eq!(with_model("", "a/b"), "model = \"a/b\"\n");
    }

    #[test]
    fn a_file_is_written_only_as_valid_toml() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pith/config.toml");
        remember_model(&path, "openai/gpt-4.1-mini").unwrap();
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(t["model"].as_str(), Some("openai/gpt-4.1-mini"));
        // a name with a quote is escaped
        remember_model(&path, "a/b\"c").unwrap();
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(t["model"].as_str(), Some("a/b\"c"));
    }
}
