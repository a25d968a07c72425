//! Running the tool calls of a step: permission, doom-loop check, execution, results.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::turn_context::Turn;
use pith_protocol::event::{
    EngineState, Event, OutputEvent, PermissionReply, PermissionRequest, TurnEvent,
};
use pith_protocol::message::{PartKind, ToolState, ToolTime, new_id, now_ms};
use pith_tools::permission::{Decision, LoopStop};
use pith_tools::{ToolContext, ToolError, ToolOutput};

/// How long a tool may take to stop after an interrupt before it is abandoned.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// A call that ended in `error` without running.
fn failed(error: ToolError) -> ToolState {
    ToolState::Error {
        message: error.to_string(),
        start: None,
        end: Some(now_ms()),
    }
}

/// The stored state of a call that ran from `start` to `end`.
pub(crate) fn finished(result: Result<ToolOutput, ToolError>, start: i64, end: i64) -> ToolState {
    match result {
        Ok(out) => ToolState::Completed {
            metadata: out.stored_metadata(),
            output: out.output,
            title: out.title,
            time: ToolTime {
                start,
                end,
                compacted: None,
            },
        },
        Err(e) => ToolState::Error {
            message: e.to_string(),
            start: Some(start),
            end: Some(end),
        },
    }
}

impl Turn<'_> {
    /// Runs every pending tool call of `self.log.view()[idx]`, in order. `Err` when the turn must stop
    /// (the model keeps sending calls that cannot run): every call still gets a result.
    pub(crate) async fn run_tools(
        &mut self,
        idx: usize,
        cancel: &CancellationToken,
    ) -> Result<(), LoopStop> {
        let mut stop: Option<LoopStop> = None;
        let calls: Vec<(usize, String, String, Value)> = self.log.view()[idx]
            .parts
            .iter()
            .enumerate()
            .filter_map(|(pi, p)| match &p.kind {
                PartKind::Tool {
                    call_id,
                    tool,
                    input,
                    state: ToolState::Pending,
                } => Some((pi, call_id.clone(), tool.clone(), input.clone())),
                _ => None,
            })
            .collect();
        let mut i = 0;
        while i < calls.len() {
            // consecutive `task` calls run together
            let batch = calls[i..]
                .iter()
                .take_while(|(_, _, tool, input)| {
                    tool == pith_tools::task::NAME
                        && input.is_object()
                        && self.tools.registry().get(tool).is_some()
                })
                .count();
            if batch > 0 && stop.is_none() && !cancel.is_cancelled() {
                let group = calls[i..i + batch].to_vec();
                i += batch;
                let states = self.run_task_calls(idx, &group, cancel).await;
                for ((pi, call_id, tool, input), (_, state)) in group.into_iter().zip(states) {
                    let state = self
                        .post_tool_hooks(&call_id, &tool, &input, state, cancel)
                        .await;
                    self.record_result(idx, pi, call_id, tool, state);
                }
                continue;
            }
            let (pi, call_id, tool, input) = calls[i].clone();
            i += 1;
            let state = if cancel.is_cancelled() {
                failed(ToolError::Interrupted)
            } else if stop.is_some() {
                failed(ToolError::Refused("Not run: the turn was stopped because the model kept sending calls that cannot run.".into()))
            } else {
                let (state, looping) = self
                    .execute_call(idx, pi, &call_id, &tool, input.clone(), cancel)
                    .await;
                stop = looping;
                self.post_tool_hooks(&call_id, &tool, &input, state, cancel)
                    .await
            };
            let ran = matches!(state, ToolState::Completed { .. });
            self.record_result(idx, pi, call_id, tool.clone(), state);
            if ran {
                self.load_nested_instructions(&tool, &input);
            }
        }
        stop.map_or(Ok(()), Err)
    }

    /// Stores a call's final state, tells the front end, and counts it in the context figure.
    fn record_result(
        &mut self,
        idx: usize,
        pi: usize,
        call_id: String,
        tool: String,
        state: ToolState,
    ) {
        let (title, error, duration_ms) = match &state {
            ToolState::Completed { title, time, .. } => {
                (title.clone(), None, (time.end - time.start).max(0) as u64)
            }
            ToolState::Error {
                message,
                start,
                end,
            } => (
                tool.clone(),
                Some(message.clone()),
                match (start, end) {
                    (Some(s), Some(e)) => (e - s).max(0) as u64,
                    _ => 0,
                },
            ),
            _ => (tool.clone(), None, 0),
        };
        self.set_tool_state(idx, pi, state);
        self.emit(OutputEvent::ToolFinished {
            call_id,
            tool,
            title,
            error,
            duration_ms,
        });
        let part = self.log.view()[idx].parts[pi].clone();
        self.meter.add_part(&part);
        self.emit_context();
    }

    /// Runs `task` calls: each is checked and put to the user in turn, then the authorised ones
    /// run at the same time (`subagent.rs`). One state per call, in order.
    async fn run_task_calls(
        &mut self,
        idx: usize,
        group: &[(usize, String, String, Value)],
        cancel: &CancellationToken,
    ) -> Vec<(usize, ToolState)> {
        let mut states = Vec::new();
        let mut ready = Vec::new();
        for (pi, call_id, tool, input) in group {
            if cancel.is_cancelled() {
                states.push((*pi, failed(ToolError::Interrupted)));
                continue;
            }
            match self.authorize(call_id, tool, &input.clone(), cancel).await {
                Err(state) => states.push((*pi, state)),
                Ok(ctx) => {
                    let start = self.mark_running(idx, *pi, call_id, tool, input);
                    ready.push(super::subagent::TaskCall {
                        pi: *pi,
                        call_id: call_id.clone(),
                        input: input.clone(),
                        ctx,
                        start,
                    });
                }
            }
        }
        states.extend(self.run_tasks(ready, cancel).await);
        states.sort_by_key(|(pi, _)| *pi);
        states
    }

    fn set_tool_state(&mut self, idx: usize, pi: usize, new: ToolState) {
        self.log.update_part(idx, pi, |part| {
            if let PartKind::Tool { state, .. } = &mut part.kind {
                *state = new;
            }
        });
    }

    /// Runs one call; the second value is set when the doom-loop check stops the turn.
    async fn execute_call(
        &mut self,
        idx: usize,
        pi: usize,
        call_id: &str,
        tool: &str,
        input: Value,
        cancel: &CancellationToken,
    ) -> (ToolState, Option<LoopStop>) {
        let error = failed;
        if tool == pith_tools::mode::EXIT_PLAN_TOOL {
            return (self.exit_plan(call_id, &input, cancel).await, None);
        }
        if tool == pith_tools::remember::NAME && input.is_object() && self.opts.config.memory.tool {
            return (self.remember_tool(call_id, &input, cancel).await, None);
        }
        // Calls that cannot run count for the doom loop too: a model repeating one would
        // otherwise go on until max_steps.
        if let Value::String(raw) = &input {
            let mut shown: String = raw.chars().take(200).collect();
            if raw.chars().count() > 200 {
                shown.push('…');
            }
            let looping = self.tools.record_broken_call(tool, &input);
            return (
                error(ToolError::Failed(format!(
                    "The arguments for {tool} are not valid JSON: {shown}. Call the tool again with a JSON object."
                ))),
                looping,
            );
        }
        if self.tools.registry().get(tool).is_none() {
            let names: Vec<String> = self.tools.specs().iter().map(|s| s.name.clone()).collect();
            let looping = self.tools.record_broken_call(tool, &input);
            return (
                error(ToolError::UnknownTool {
                    name: tool.to_string(),
                    available: names,
                }),
                looping,
            );
        }
        let state = self
            .execute_valid(idx, pi, call_id, tool, input, cancel)
            .await;
        // Headless, a repeated call is refused with no one to ask; a model that keeps at it
        // would refuse itself to max_steps.
        let looping = (self.opts.headless
            && self.tools.repeats() >= pith_tools::permission::DOOM_LOOP_THRESHOLD + 2)
            .then(|| LoopStop::Unattended {
                tool: tool.to_string(),
                count: self.tools.repeats(),
            });
        (state, looping)
    }

    /// The checks before a call runs: the tool's precheck, the doom loop, the permission rules
    /// and the user's answer. `Ok`: the context to run it in; `Err`: the state it ends in.
    async fn authorize(
        &mut self,
        call_id: &str,
        tool: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<ToolContext, ToolState> {
        let mut ctx = self.tool_context(call_id, cancel);
        // a call that would fail whatever the user answers is not put to the user
        if let Some(t) = self.tools.registry().get(tool)
            && let Err(e) = t.precheck(input, &ctx)
        {
            return Err(failed(e));
        }
        // `pre_tool_use` hooks: a block refuses the call with the hook's reason; an approval
        // skips the question, never a deny rule, the mode's refusal or the sandbox.
        // (Recorded first: a call blocked again and again counts for the doom loop.)
        let repeated = self.tools.record_call(tool, input);
        // an active skill's `allowed-tools` narrow what may run; they never allow anything
        if let Err(why) = self.skill_scope().check(tool, input) {
            return Err(failed(ToolError::Refused(why)));
        }
        let approved = match self.pre_tool_hooks(call_id, tool, input, cancel).await {
            Ok(approved) => approved,
            Err(block) => return Err(failed(ToolError::Refused(block.to_string()))),
        };
        // A mode chosen while the turn runs (Shift+Tab, an editor) counts from this call on.
        self.apply_settings();
        let checked = self.tools.check(tool, input, &ctx);
        let firm = self.tools.permissions().is_firm(&checked);
        // Plan mode: what the classifier lets through runs with the workspace read-only.
        ctx.read_only_commands =
            self.opts.config.permission_mode == pith_protocol::event::PermissionMode::Plan;
        let mut decision = pith_tools::mode::apply(
            self.opts.config.permission_mode,
            tool,
            input,
            &self.opts.workspace,
            checked,
            firm,
        );
        if repeated && !matches!(decision, Decision::Deny { .. }) {
            decision = Decision::Ask(PermissionRequest {
                id: new_id(),
                tool: tool.to_string(),
                call_id: call_id.to_string(),
                title: format!("{tool} was called three times in a row with the same input"),
                patterns: Vec::new(),
                agent: None,
            });
        }
        self.settle(decision, approved, repeated, call_id, tool, cancel)
            .await?;
        Ok(ctx)
    }

    /// The context a call runs in (a child of the turn's cancellation).
    fn tool_context(&self, call_id: &str, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            outputs: Some(Arc::new(crate::recall::Recallable(
                self.log.store().clone(),
            ))),
            progress: Some(self.progress_for(call_id)),
            ..self.bare_context(call_id, cancel)
        }
    }

    /// The context of a call pith makes itself (a mention's read, a goal's check command): the
    /// session's workspace, state and policy, no recall and no progress events.
    pub(crate) fn bare_context(&self, call_id: &str, cancel: &CancellationToken) -> ToolContext {
        ToolContext {
            workspace: self.opts.workspace.clone(),
            data_dir: self.opts.data_dir.clone(),
            session_id: self.log.session().id.clone(),
            call_id: call_id.to_string(),
            cancel: cancel.child_token(),
            state: self.tools.state().clone(),
            output: self.tool_output(),
            outputs: None,
            progress: None,
            editor: self.opts.editor.clone(),
            policy: self.policy(),
            read_only_commands: false,
        }
    }

    /// Acts on the permission decision of a call: allowed, refused, approved by a
    /// `pre_tool_use` hook, or put to the user. `Err`: the state the call ends in.
    async fn settle(
        &mut self,
        decision: Decision,
        approved: bool,
        repeated: bool,
        call_id: &str,
        tool: &str,
        cancel: &CancellationToken,
    ) -> Result<(), ToolState> {
        match decision {
            Decision::Allow => {}
            Decision::Deny { message } => return Err(failed(ToolError::Refused(message))),
            // as `--yes` would: what leaves the sandbox (or cannot be read past a deny rule)
            // is still refused
            Decision::Ask(request)
                if approved
                    && !repeated
                    && self
                        .tools
                        .permissions()
                        .yes_refusal(&request, self.opts.allow_unsandboxed)
                        .is_none() =>
            {
                tracing::debug!(tool, "a pre_tool_use hook approved the call");
            }
            Decision::Ask(mut request) => {
                request.call_id = call_id.to_string();
                if let Err(e) = self.ask(request, repeated, cancel).await {
                    return Err(failed(e));
                }
            }
        }
        Ok(())
    }

    /// What no tool may change without the user, or touch at all, in this workspace.
    pub(crate) fn policy(&self) -> Arc<pith_tools::policy::Policy> {
        let config = &self.opts.config;
        // the files the prompt imports (`@path`) are protected like the configured ones
        let mut instructions = config.instructions.clone();
        instructions.extend(self.imported_instructions());
        Arc::new(
            pith_tools::policy::Policy::new(&self.opts.workspace, &self.opts.data_dir)
                .configured(config.config_file.as_deref(), &instructions)
                .hiding(&config.sandbox_deny_read),
        )
    }

    /// Marks a call as running; returns when it started.
    fn mark_running(
        &mut self,
        idx: usize,
        pi: usize,
        call_id: &str,
        tool: &str,
        input: &Value,
    ) -> i64 {
        let start = now_ms();
        self.set_tool_state(idx, pi, ToolState::Running { start, title: None });
        self.emit(OutputEvent::ToolStarted {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            input: input.clone(),
        });
        self.state(EngineState::Running, Some(tool.to_string()));
        start
    }

    /// Runs a call to a known tool with JSON arguments: permission, doom loop, execution.
    async fn execute_valid(
        &mut self,
        idx: usize,
        pi: usize,
        call_id: &str,
        tool: &str,
        input: Value,
        cancel: &CancellationToken,
    ) -> ToolState {
        let ctx = match self.authorize(call_id, tool, &input, cancel).await {
            Ok(ctx) => ctx,
            Err(state) => return state,
        };
        let start = self.mark_running(idx, pi, call_id, tool, &input);
        let run = self.tools.registry().execute(tool, input, &ctx);
        tokio::pin!(run);
        let result = tokio::select! {
            r = &mut run => r,
            _ = cancel.cancelled() => match tokio::time::timeout(STOP_GRACE, &mut run).await {
                Ok(r) => r,
                Err(_) => Err(ToolError::Interrupted),
            },
        };
        if cancel.is_cancelled() {
            return finished(Err(ToolError::Interrupted), start, now_ms());
        }
        finished(result, start, now_ms())
    }

    /// Where a running tool's output goes: to the front end, as `ToolOutput` events.
    pub(crate) fn progress_for(&self, call_id: &str) -> pith_tools::Progress {
        let events = self.log.events().clone();
        let call_id = call_id.to_string();
        std::sync::Arc::new(move |output: &str| {
            let _ = events.send(Event::Output(OutputEvent::ToolOutput {
                call_id: call_id.clone(),
                output: output.to_string(),
            }));
        })
    }

    /// Asks the user (or, headless, decides without one). `Err` carries what the model is told.
    pub(crate) async fn ask(
        &mut self,
        request: PermissionRequest,
        repeated: bool,
        cancel: &CancellationToken,
    ) -> Result<(), ToolError> {
        // `--yes` allows what the rules would ask about, not a loop: with no one watching, a
        // repeated identical call is refused rather than run again and again.
        // Nor a command pith cannot fully read when a deny rule could match what it runs.
        let bypass =
            self.opts.config.permission_mode == pith_protocol::event::PermissionMode::Bypass;
        if (self.opts.auto_yes || bypass) && !repeated {
            return match self
                .tools
                .permissions()
                .yes_refusal(&request, self.opts.allow_unsandboxed)
            {
                None => Ok(()),
                Some(refusal) => Err(ToolError::Refused(refusal)),
            };
        }
        if self.opts.headless {
            return Err(ToolError::Refused(if repeated {
                format!(
                    "Not run: {}. Repeating the same call will not help; try a different approach.",
                    request.title
                )
            } else if let Some(reason) = self.tools.permissions().headless_reason(&request) {
                reason
            } else {
                format!(
                    "Permission needed for `{}`, and this non-interactive run has no one to ask, so the call was not run. Continue without it, or tell the user to rerun with --yes or allow it in the [permission] config.",
                    request.title
                )
            }));
        }
        // pending while this call waits: once it is interrupted a late reply finds nothing
        let mut wait = self.shared.wait_permission(&request.id);
        self.notify_hooks(format!(
            "pith needs your permission to use {}",
            request.tool
        ));
        self.emit(TurnEvent::PermissionAsked(request.clone()));
        self.state(EngineState::Running, Some("waiting for permission".into()));
        let answer = cancel.run_until_cancelled(wait.answer()).await.flatten();
        drop(wait);
        if let Some((reply, _)) = &answer {
            self.tools.reply(&request, *reply);
        }
        match answer {
            None => Err(ToolError::Interrupted),
            Some((PermissionReply::Deny, note)) => Err(ToolError::Refused(match note {
                Some(n) if !n.trim().is_empty() => {
                    format!("The user denied this call: {}", n.trim())
                }
                _ => "The user denied this call.".into(),
            })),
            Some(_) => Ok(()),
        }
    }
}

impl Turn<'_> {
    /// `exit_plan_mode`: the model presents its plan. Out of plan mode there is nothing to do;
    /// headless no one can accept it, so the run stays in plan mode; in the TUI the user is
    /// asked (also under `--yes`: accepting a plan is the user's own call). "Always" accepts it
    /// and switches to accept-edits, "once" accepts it and switches to the default mode (edits
    /// asked about), a denial keeps plan mode and tells the model to keep planning.
    async fn exit_plan(
        &mut self,
        call_id: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> ToolState {
        use pith_protocol::event::PermissionMode;
        let start = now_ms();
        let done = |text: &str| {
            let output = ToolOutput {
                title: "plan".to_string(),
                output: text.to_string(),
                metadata: Value::Null,
                meta: Default::default(),
            };
            finished(Ok(output), start, now_ms())
        };
        if self.opts.config.permission_mode != PermissionMode::Plan {
            return done("Not in plan mode: carry on with the work.");
        }
        let plan = input
            .get("plan")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        if plan.is_empty() {
            return failed(ToolError::Failed("Give the plan itself in `plan`.".into()));
        }
        if self.opts.headless {
            return done(
                "No one can accept the plan in this run, so it stays in plan mode: end your answer with the plan.",
            );
        }
        let request = PermissionRequest {
            id: new_id(),
            tool: pith_tools::mode::EXIT_PLAN_TOOL.to_string(),
            call_id: call_id.to_string(),
            title: "Accept this plan and leave plan mode?".to_string(),
            patterns: Vec::new(),
            agent: None,
        };
        let mut wait = self.shared.wait_permission(&request.id);
        self.notify_hooks("pith waits for you to accept or revise the plan".to_string());
        self.emit(TurnEvent::PermissionAsked(request));
        self.state(
            EngineState::Running,
            Some("waiting for the plan's approval".into()),
        );
        let answer = cancel.run_until_cancelled(wait.answer()).await.flatten();
        drop(wait);
        match answer {
            None => failed(ToolError::Interrupted),
            Some((PermissionReply::Deny, note)) => done(&match note {
                Some(n) if !n.trim().is_empty() => format!(
                    "The user chose to keep planning: {}. Stay in plan mode and revise the plan.",
                    n.trim()
                ),
                _ => "The user chose to keep planning. Stay in plan mode: keep planning, and ask what to change."
                    .into(),
            }),
            Some((reply, _)) => {
                // "Yes, and auto-accept edits" (always) or "Yes, and ask for edits" (once)
                let (mode, how) = if reply == PermissionReply::Always {
                    (PermissionMode::AcceptEdits, "edits are accepted without asking")
                } else {
                    (PermissionMode::Default, "the user is asked before each edit")
                };
                // the same for running sub-agents
                self.set_permission_mode(mode);
                done(&format!(
                    "The user accepted the plan. Plan mode is off ({how}): carry the plan out now."
                ))
            }
        }
    }
}
