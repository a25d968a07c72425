//! `remember`: the model proposes a line for a memory file. The engine runs it: it always asks
//! the user (whatever the mode, `--yes` or a hook says) and writes only on a yes
//! (`pith-engine/memory.rs`).

use pith_protocol::llm::ToolSpec;
use pith_protocol::tool::Builtin;

pub const NAME: &str = Builtin::Remember.as_str();

/// The tool's spec.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.to_string(),
        description: include_str!("../../../prompts/tools/remember.md")
            .trim()
            .to_string(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The line to remember, one sentence"},
                "scope": {"type": "string", "enum": ["project", "user"], "description": "Which memory file (default project)"}
            },
            "required": ["text"]
        }),
    }
}
