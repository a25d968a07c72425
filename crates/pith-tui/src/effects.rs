//! What the app asks of the terminal besides drawing: escape sequences (clipboard, bell,
//! desktop notification) and handing the terminal to the external editor. `App` only queues
//! them; the run loop carries them out between frames, so nothing is written over a frame.

use std::io::{self, Write};

use crossterm::event::EventStream;
use ratatui::DefaultTerminal;

use super::app::App;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Bytes for the terminal itself (OSC 52, BEL, OSC 9 / 777).
    Write(Vec<u8>),
    /// Open the composer's text in `$VISUAL` / `$EDITOR`.
    Editor,
}

/// Carries out the queued effects. The editor gets the terminal: the input stream is dropped
/// (its reader thread would take the editor's keys), the TUI suspended, then restored.
pub fn apply(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    input: &mut EventStream,
) -> io::Result<()> {
    for effect in app.take_effects() {
        match effect {
            Effect::Write(bytes) => {
                let out = terminal.backend_mut();
                out.write_all(&bytes)?;
                out.flush()?;
            }
            Effect::Editor => {
                let command = super::editor::editor_command(|k| std::env::var(k).ok());
                let text = app.editor_text();
                drop(std::mem::replace(input, EventStream::new()));
                super::restore_terminal();
                let result = command
                    .and_then(|cmd| super::editor::edit_in(&std::env::temp_dir(), &cmd, &text));
                super::resume_terminal()?;
                terminal.clear()?;
                app.editor_done(result);
            }
        }
    }
    Ok(())
}
