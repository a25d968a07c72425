//! What the app asks of the terminal besides drawing: escape sequences (clipboard, bell,
//! desktop notification) and handing the terminal to the external editor. `App` only queues
//! them; the run loop carries them out between frames (`apply_effects` in lib.rs), so nothing is
//! written over a frame.

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Bytes for the terminal itself (OSC 52, BEL, OSC 9 / 777).
    Write(Vec<u8>),
    /// Open the composer's text in `$VISUAL` / `$EDITOR`.
    Editor,
    /// Open this file (a memory file, `/memory`) in `$VISUAL` / `$EDITOR`.
    EditFile(std::path::PathBuf),
}
