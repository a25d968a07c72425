//! What every front end (the TUI, `pith run`, an editor over ACP) does before its engine
//! starts, in one place (ARCHITECTURE.md §1): the workspace, its configuration (trusted as
//! recorded), the store and the log ([`setup`]); the questions asked first — trust, the first
//! model, a missing key — decided once ([`questions`]; their types are
//! `pith_protocol::launch`'s); and the one `EngineOptions` ([`options`]). No terminal: each
//! front end renders the questions in its medium.

pub mod first_run;
pub mod options;
pub mod questions;
pub mod setup;

pub use options::FrontEnd;
pub use questions::FirstModel;
pub use setup::Setup;
