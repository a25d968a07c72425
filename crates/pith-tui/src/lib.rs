//! The ratatui front end (Elm style): `app` holds state and `update`, `view` draws it, and `run`
//! drives both from terminal events, engine events and a tick. It talks to the engine only through
//! `Op`s and `Event`s.

mod activity;
pub mod app;
pub mod appearance;
mod cell_text;
pub mod cells;
pub mod clipboard;
pub mod clipboard_image;
mod completion;
mod component;
pub mod composer;
mod custom;
mod divider_line;
pub mod editor;
pub mod effects;
pub mod elicit_form;
pub mod format;
pub mod git;
pub mod help;
pub mod highlight;
mod hook_note;
mod hyperlink;
mod info_popup;
pub mod key_prompt;
pub mod keymap;
mod left_view;
pub mod local_server;
pub mod login;
pub mod markdown;
mod mcp;
pub mod mentions;
mod modal;
pub mod notify;
pub mod permission_prompt;
pub mod picker;
pub mod prompt_log;
mod status_bar;
pub mod subagents;
pub mod theme;
pub mod tool_cell;
mod tool_shapes;
pub mod transcript;
pub mod trust;
pub mod view;
mod viewport;
pub mod wrap;

#[cfg(test)]
mod compaction_view_tests;
#[cfg(test)]
mod context_view_tests;
#[cfg(test)]
mod convenience_tests;
#[cfg(test)]
mod elicit_form_tests;
#[cfg(test)]
mod empty_popup_tests;
#[cfg(test)]
mod engine_event_tests;
#[cfg(test)]
mod goal_view_tests;
#[cfg(test)]
mod jobs_view_tests;
#[cfg(test)]
mod keys_tests;
#[cfg(test)]
mod left_view_tests;
#[cfg(test)]
mod login_tests;
#[cfg(test)]
mod memory_view_tests;
#[cfg(test)]
mod paging_tests;
#[cfg(test)]
mod paste_image_tests;
#[cfg(test)]
mod permission_tests;
#[cfg(test)]
mod permission_view_tests;
#[cfg(test)]
mod picker_tests;
#[cfg(test)]
mod pins_view_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod settings_tests;
#[cfg(test)]
mod skills_tests;
#[cfg(test)]
mod subagent_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod update_tests;
#[cfg(test)]
mod websearch_tests;
#[cfg(test)]
mod workflow_tests;

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, EventStream, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use futures_util::StreamExt;
use ratatui::DefaultTerminal;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use pith_protocol::event::{ContextUsage, EventMsg};
use pith_protocol::message::{Message, Session};

pub use app::{App, Msg};

/// What the TUI starts with.
pub struct TuiInit {
    pub session: Session,
    /// The newest page of the stored history for the transcript (resume).
    pub messages: Vec<Message>,
    /// Older messages remain in the store (loaded as the user scrolls up).
    pub more_history: bool,
    /// "provider/model".
    pub model: String,
    /// For the /model picker.
    pub models: Vec<String>,
    /// Which providers have a key, and how to store one (`/login`, `/model`).
    pub keys: login::KeyAccess,
    pub workspace: PathBuf,
    pub git_branch: Option<String>,
    /// The initial context figure.
    pub context: ContextUsage,
    /// Set when no provider is configured: shown as the first transcript entry.
    pub first_run_hint: Option<String>,
    /// Key bindings (defaults with the config's `[keys]` over them).
    pub keymap: keymap::Keymap,
    /// The theme in use (already applied).
    pub appearance: appearance::Appearance,
    /// The custom slash commands (`.pith/commands`, the config dir's `commands/`).
    pub custom_commands: pith_commands::custom_commands::Commands,
    /// The project's prompt history on disk (`None`: not kept).
    pub prompt_log: Option<prompt_log::PromptLog>,
    /// `[notify]`.
    pub notify: pith_config::NotifyConfig,
    /// The hooks in force (`/hooks` lists them).
    pub hooks: pith_config::HooksConfig,
    /// Where images pasted from the clipboard go, and which models take them.
    pub images: clipboard_image::ImageInput,
}

/// At most ~60 frames a second.
const FRAME: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(120);

static KEYBOARD_ENHANCED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Raw mode and the alternate screen (ratatui's defaults, with a panic hook that undoes them),
/// then bracketed paste, mouse capture and, where the terminal has it, the kitty keyboard
/// protocol.
fn setup_terminal() -> io::Result<DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    enter_modes()?;
    hyperlink::enable_for(std::env::var("TERM").ok().as_deref());
    Ok(terminal)
}

/// Takes the terminal back after the external editor had it (see [`restore_terminal`]).
pub fn resume_terminal() -> io::Result<()> {
    crossterm::terminal::enable_raw_mode()?;
    crossterm::execute!(io::stdout(), crossterm::terminal::EnterAlternateScreen)?;
    enter_modes()
}

/// Bracketed paste, mouse capture, focus reports and the keyboard protocol.
fn enter_modes() -> io::Result<()> {
    let mut out = io::stdout();
    crossterm::execute!(
        out,
        EnableBracketedPaste,
        EnableMouseCapture,
        EnableFocusChange
    )?;
    // Shift+Enter is only distinguishable with the kitty keyboard protocol.
    if matches!(
        crossterm::terminal::supports_keyboard_enhancement(),
        Ok(true)
    ) {
        crossterm::execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        KEYBOARD_ENHANCED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    Ok(())
}

/// Puts the terminal back; safe to call more than once and from a panic hook. What was added on
/// the alternate screen is undone before leaving it (the keyboard flags are per screen).
pub fn restore_terminal() {
    let mut out = io::stdout();
    if KEYBOARD_ENHANCED.swap(false, std::sync::atomic::Ordering::SeqCst) {
        let _ = crossterm::execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = crossterm::execute!(
        out,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    let _ = crossterm::execute!(out, crossterm::cursor::Show);
    let _ = out.flush();
}

/// Restores the terminal when dropped (error returns and unwinding).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// How the TUI ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuiExit {
    /// 130 when the user left with Ctrl-C, else 0.
    pub code: i32,
}

/// The stop signals (SIGTERM, SIGHUP, a Ctrl-C from outside) as the exit codes they call for.
pub type StopStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = i32> + Send>>;

/// What the process around the TUI hands its loop: the binary's, not the TUI's.
pub struct Process {
    /// When pith started: the first frame's log line says how long ago that was.
    pub started: Option<Instant>,
    /// Starts listening for the stop signals; called once the terminal is set up.
    pub stop_signals: Box<dyn FnOnce() -> io::Result<StopStream> + Send>,
}

/// Runs the TUI until the user quits. The terminal is restored on every exit path.
pub async fn run(
    init: TuiInit,
    ops: UnboundedSender<pith_protocol::event::Submission>,
    mut events: UnboundedReceiver<EventMsg>,
    process: Process,
) -> io::Result<TuiExit> {
    // restores whatever part of the set-up was done, however this returns
    let _guard = TerminalGuard;
    let mut terminal = setup_terminal()?;
    // after ratatui's hook is set, so this one runs first
    install_panic_hook();
    let typeahead = read_typeahead();
    terminal.clear()?;

    let mut app = start_app(init, ops, typeahead);
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_draw = Instant::now() - FRAME;
    let mut engine_open = true;
    let mut first_frame_logged = false;
    // SIGTERM / SIGHUP: leave like a quit (the turn stops and is saved, the terminal restored).
    let mut stop = (process.stop_signals)()?;

    loop {
        if app.needs_draw() && last_draw.elapsed() >= FRAME {
            // Frames are FRAME apart start to start: stamping after the draw would add the
            // draw's own time to every interval (49 instead of 60 frames a second while
            // streaming, deltas waiting more than a frame).
            let started = Instant::now();
            draw_frame(
                &mut terminal,
                &mut app,
                &mut first_frame_logged,
                process.started,
            )?;
            last_draw = started;
        }
        if app.has_effects() {
            apply_effects(&mut terminal, &mut app, &mut input)?;
        }
        if app.should_quit() {
            break;
        }
        let next_frame = tokio::time::Instant::from_std(last_draw + FRAME);
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => app.update(Msg::Term(ev)),
                Some(Err(e)) => {
                    tracing::warn!("terminal input error: {e}");
                }
                None => break,
            },
            ev = events.recv(), if engine_open => match ev {
                Some(ev) => engine_burst(&mut app, ev, &mut events),
                None => {
                    engine_open = false;
                    app.engine_closed();
                    tracing::warn!("engine event channel closed");
                }
            },
            Some(code) = stop.next() => {
                // In raw mode Ctrl-C is a key; a signal here came from outside.
                app.stop_signalled(code);
            }
            _ = tick.tick() => app.update(Msg::Tick),
            _ = tokio::time::sleep_until(next_frame), if app.needs_draw() => {}
        }
    }
    drop(terminal);
    Ok(app.into_exit())
}

/// The app on a terminal just set up, with what was typed ahead already read.
fn start_app(
    init: TuiInit,
    ops: UnboundedSender<pith_protocol::event::Submission>,
    typeahead: Vec<crossterm::event::Event>,
) -> App {
    let mut app = App::new(init, ops);
    app.set_keyboard_enhanced(KEYBOARD_ENHANCED.load(std::sync::atomic::Ordering::SeqCst));
    for ev in typeahead {
        app.update(Msg::Term(ev));
    }
    app
}

/// Carries out the queued effects. The editor gets the terminal: the input stream is dropped
/// (its reader thread would take the editor's keys), the TUI suspended, then restored.
fn apply_effects(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    input: &mut EventStream,
) -> io::Result<()> {
    for effect in app.take_effects() {
        match effect {
            effects::Effect::Write(bytes) => {
                let out = terminal.backend_mut();
                out.write_all(&bytes)?;
                out.flush()?;
            }
            effects::Effect::Editor => {
                let command = editor::editor_command(|k| std::env::var(k).ok());
                let text = app.editor_text();
                drop(std::mem::replace(input, EventStream::new()));
                restore_terminal();
                let result =
                    command.and_then(|cmd| editor::edit_in(&std::env::temp_dir(), &cmd, &text));
                resume_terminal()?;
                terminal.clear()?;
                app.editor_done(result);
            }
            effects::Effect::EditFile(path) => {
                let command = editor::editor_command(|k| std::env::var(k).ok());
                // a missing memory file's folder (`~/.config/pith`) is made for the editor
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                drop(std::mem::replace(input, EventStream::new()));
                restore_terminal();
                let result = command.and_then(|cmd| editor::edit_file(&cmd, &path));
                resume_terminal()?;
                terminal.clear()?;
                app.file_edited(&path, result);
            }
        }
    }
    Ok(())
}

/// Draws a frame; the first one is logged.
fn draw_frame(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    first_frame_logged: &mut bool,
    started: Option<Instant>,
) -> io::Result<()> {
    terminal.draw(|f| view::draw(f, app))?;
    app.drawn();
    if !*first_frame_logged {
        *first_frame_logged = true;
        // bench/run.sh reads this line: start-up to the first frame, in the binary
        tracing::info!(
            ms_since_start = started.map_or(-1.0, |t| t.elapsed().as_secs_f64() * 1000.0),
            cells = app.transcript().len(),
            "first frame drawn"
        );
    }
    Ok(())
}

/// An engine event, and those already waiting behind it: a burst (streamed deltas) is
/// coalesced into one frame.
fn engine_burst(app: &mut App, ev: EventMsg, events: &mut UnboundedReceiver<EventMsg>) {
    app.update(Msg::Engine(ev));
    let mut n = 0;
    while n < 1024 {
        match events.try_recv() {
            Ok(ev) => app.update(Msg::Engine(ev)),
            Err(_) => break,
        }
        n += 1;
    }
}

/// Keys typed while pith was starting, before raw mode: the terminal turned their Enter into a
/// line feed, which now reads as Ctrl+J (a new line). Typed ahead, it meant Enter.
fn read_typeahead() -> Vec<crossterm::event::Event> {
    let mut out = Vec::new();
    while out.len() < 4096 && matches!(crossterm::event::poll(Duration::ZERO), Ok(true)) {
        match crossterm::event::read() {
            Ok(ev) => out.push(typeahead_key(ev)),
            Err(_) => break,
        }
    }
    out
}

/// Ctrl+J typed ahead is the Enter the terminal translated (ICRNL) before raw mode.
pub fn typeahead_key(ev: crossterm::event::Event) -> crossterm::event::Event {
    use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
    match ev {
        TermEvent::Key(k)
            if k.code == KeyCode::Char('j') && k.modifiers == KeyModifiers::CONTROL =>
        {
            TermEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
        }
        ev => ev,
    }
}
