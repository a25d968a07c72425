//! pith's engine contract, shared by the engine and every front end (ARCHITECTURE.md §1, §2):
//! the stored conversation (`message`), the provider-neutral request and stream types (`llm`),
//! and what a front end sends and reads (`event`: `Op`, `Event`), and the text helpers every
//! crate shows text with (`text`: one line, control characters), and typed views of a tool call
//! (`tool`), and how a model name splits (`model_name`), and the questions asked before an
//! engine starts (`launch`). Plain data with serde: no I/O,
//! no async, no terminal.

pub mod carried;
pub mod compaction_note;
pub mod elicitation;
pub mod event;
pub mod launch;
pub mod llm;
pub mod mcp_prompt;
pub mod message;
pub mod model_name;
pub mod text;
pub mod tool;

#[cfg(test)]
mod error_kinds_tests;
