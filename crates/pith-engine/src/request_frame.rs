//! The system prompt and tools a request is sent with, as the request builder and the estimate
//! of its overhead both need them.

use std::borrow::Cow;

use pith_protocol::llm::ToolSpec;

/// The system prompt and tools of a request: the tools with `remember` (the model proposes a
/// memory line, the engine asks the user); in plan mode, with what the model is told about it
/// and the tool that presents the plan; the system prompt borrowed when there is nothing to add
/// (the overhead is counted at every step).
pub(crate) fn request_frame<'a>(
    system: &'a [String],
    tools: &'a [ToolSpec],
    mode: pith_protocol::event::PermissionMode,
) -> (Cow<'a, [String]>, Cow<'a, [ToolSpec]>) {
    use pith_tools::mode;
    let mut tools = tools.to_vec();
    tools.push(pith_tools::remember::spec());
    if mode != pith_protocol::event::PermissionMode::Plan {
        return (Cow::Borrowed(system), Cow::Owned(tools));
    }
    let mut system = system.to_vec();
    system.push(mode::PLAN_PROMPT.trim().to_string());
    tools.push(mode::exit_plan_spec());
    (Cow::Owned(system), Cow::Owned(tools))
}
