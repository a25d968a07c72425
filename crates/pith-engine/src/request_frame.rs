//! The system prompt and tools a request is sent with, as the request builder and the estimate
//! of its overhead both need them.

use std::borrow::Cow;

use pith_protocol::llm::ToolSpec;

/// The system prompt and tools of a request: with `remember` (the model proposes a memory line,
/// the engine asks the user) when `memory_tool` (`[memory] tool`) and the window is not so small
/// that the short prompt is sent; in plan mode, with what the model is told about it and the
/// tool that presents the plan; borrowed when there is nothing to add (the overhead is counted
/// at every step).
pub(crate) fn request_frame<'a>(
    system: &'a [String],
    tools: &'a [ToolSpec],
    mode: pith_protocol::event::PermissionMode,
    memory_tool: bool,
) -> (Cow<'a, [String]>, Cow<'a, [ToolSpec]>) {
    use pith_tools::mode;
    let short = system
        .first()
        .is_some_and(|s| s.as_str() == crate::prompt::COMPACT_AGENT_PROMPT.trim_end());
    let remember = memory_tool && !short;
    let plan = mode == pith_protocol::event::PermissionMode::Plan;
    let tools = if remember || plan {
        let mut tools = tools.to_vec();
        if remember {
            tools.push(pith_tools::remember::spec());
        }
        if plan {
            tools.push(mode::exit_plan_spec());
        }
        Cow::Owned(tools)
    } else {
        Cow::Borrowed(tools)
    };
    if !plan {
        return (Cow::Borrowed(system), tools);
    }
    let mut system = system.to_vec();
    system.push(mode::PLAN_PROMPT.trim().to_string());
    (Cow::Owned(system), tools)
}
