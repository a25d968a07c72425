//! Sub-agents (ARCHITECTURE.md §13): a `task` call runs a child session — a second runner
//! (built by the turn's `spawn`, as a [`ChildAgent`]) driven in process, with its own system prompt, history, compaction and pruning — and the
//! parent gets only the child's final answer.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::agent::{AgentRole, ChildSetup, ChildSpec};
use super::emitter::Tag;
use super::shared::{Prompt, Shared};
use crate::turn_context::{ChildAgent, Turn};
use pith_protocol::event::{SubagentTotals, TurnEnd};
use pith_protocol::message::{ToolState, new_id, now_ms};
use pith_protocol::tool::TaskMetadata;
use pith_tools::task::{self, AgentDef};
use pith_tools::{ToolContext, ToolOutput};

/// Why a `task` call could not start its sub-agent (said to the model as the call's error).
#[derive(Debug, thiserror::Error)]
pub(super) enum TaskError {
    /// The call's input is not a task.
    #[error(transparent)]
    Input(#[from] pith_tools::ToolError),
    #[error("cannot read task {id}: {source:#}")]
    Read {
        id: String,
        #[source]
        source: pith_store::StoreError,
    },
    #[error("No task `{id}` was started in this session; omit task_id to start a new one.")]
    NotStarted { id: String },
    #[error("Task `{id}` ran agent `{name}`, which is no longer configured.")]
    AgentGone { id: String, name: String },
    #[error("Unknown agent `{0}`.")]
    UnknownAgent(String),
    #[error("cannot store the task's session: {0:#}")]
    Store(#[source] pith_store::StoreError),
    #[error("cannot start task {id}: {}", .source.text())]
    Start {
        id: String,
        #[source]
        source: Box<crate::error::EngineError>,
    },
}

/// The configured agent called `name`.
fn find_agent(agents: &[AgentDef], name: &str) -> Option<AgentDef> {
    agents.iter().find(|a| a.name == name).cloned()
}

/// One `task` call, authorised, ready to run.
pub(super) struct TaskCall {
    pub pi: usize,
    pub call_id: String,
    pub input: Value,
    pub ctx: ToolContext,
    pub start: i64,
}

/// How a child's run ended.
struct ChildRun {
    end: TurnEnd,
    session_id: String,
    agent: String,
    answer: String,
    error: Option<String>,
    totals: SubagentTotals,
}

impl Turn<'_> {
    /// Runs the `task` calls of one step at the same time (at most `task.max_parallel` at
    /// once); each gets its result state, in the order given.
    pub(crate) async fn run_tasks(
        &mut self,
        calls: Vec<TaskCall>,
        cancel: &CancellationToken,
    ) -> Vec<(usize, ToolState)> {
        let mut out = Vec::new();
        let mut runs = Vec::new();
        for call in calls {
            match self.prepare_child(&call, cancel) {
                Ok((child, prompt)) => runs.push((call, child, prompt)),
                Err(e) => out.push((
                    call.pi,
                    ToolState::Error {
                        message: e.to_string(),
                        start: Some(call.start),
                        end: Some(now_ms()),
                    },
                )),
            }
        }
        let parallel = self.opts.config.task.max_parallel.max(1);
        let mut children = Vec::with_capacity(runs.len());
        for (call, child, prompt) in runs {
            children.push(run_child(call, child, prompt));
        }
        let done: Vec<(TaskCall, ChildRun)> = futures_util::stream::iter(children)
            .buffered(parallel)
            .collect()
            .await;
        for (call, run) in done {
            self.record.add_subagent_run(&run.totals);
            let state = self.task_result(&call, run, cancel).await;
            out.push((call.pi, state));
        }
        out.sort_by_key(|(pi, _)| *pi);
        out
    }

    /// The child runner for a call: a new session, or the one `task_id` names (a sub-agent of
    /// this session), on the agent's model or this one's.
    fn prepare_child(
        &self,
        call: &TaskCall,
        cancel: &CancellationToken,
    ) -> Result<(Box<dyn ChildAgent>, String), TaskError> {
        let input = task::parse(call.input.clone())?;
        let agents = task::agents(&self.opts.config.agent);
        let (session, agent) = match input.task_id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => self.resumed_task(id, &agents)?,
            _ => self.new_task(&input, &agents)?,
        };
        let mut child = self.child_runner(call, session, &agent, cancel)?;
        // An agent with every tool has the MCP servers' too (the same running servers); one
        // with a list of tools has those only.
        if agent.tools.is_none()
            && let Some(manager) = self.tools.mcp().manager()
        {
            child.turn().attach_mcp(manager.clone());
        }
        Ok((child, input.prompt))
    }

    /// The session and agent of the task `id`, a sub-agent of this session.
    fn resumed_task(
        &self,
        id: &str,
        agents: &[AgentDef],
    ) -> Result<(pith_protocol::message::Session, AgentDef), TaskError> {
        let session = self
            .log
            .store()
            .find_session(id)
            .map_err(|source| TaskError::Read {
                id: id.to_string(),
                source,
            })?
            .filter(|s| s.parent_id.as_deref() == Some(self.log.session().id.as_str()))
            .ok_or_else(|| TaskError::NotStarted { id: id.to_string() })?;
        let name = session.agent.clone().unwrap_or_default();
        let agent = find_agent(agents, &name).ok_or_else(|| TaskError::AgentGone {
            id: id.to_string(),
            name,
        })?;
        Ok((session, agent))
    }

    /// A new child session for the task `input` asks for, on its agent's model or this one's.
    fn new_task(
        &self,
        input: &task::TaskInput,
        agents: &[AgentDef],
    ) -> Result<(pith_protocol::message::Session, AgentDef), TaskError> {
        let agent = find_agent(agents, &input.agent)
            .ok_or_else(|| TaskError::UnknownAgent(input.agent.clone()))?;
        let model = agent.model.clone().unwrap_or(self.model.name.clone());
        let mut session = self
            .log
            .store()
            .create_child_session(
                &self.opts.workspace.to_string_lossy(),
                &model,
                self.log.session_id(),
                &agent.name,
            )
            .map_err(TaskError::Store)?;
        session.title = pith_protocol::text::one_line(&input.description);
        Ok((session, agent))
    }

    /// The runner of `agent` on the child `session`: its events tagged with the call, the
    /// parent's permissions and questions, cancelled with the parent's turn.
    fn child_runner(
        &self,
        call: &TaskCall,
        session: pith_protocol::message::Session,
        agent: &AgentDef,
        cancel: &CancellationToken,
    ) -> Result<Box<dyn ChildAgent>, TaskError> {
        let role = AgentRole {
            name: agent.name.clone(),
            depth: self.role.depth + 1,
            prompt: agent.prompt.clone(),
        };
        let setup = ChildSetup {
            tools: agent.tools.clone(),
            parent_tools: self
                .tools
                .registry()
                .names()
                .iter()
                .map(|n| n.to_string())
                .collect(),
            permissions: self.tools.permissions().clone(),
        };
        let events = self.log.events().child(Tag {
            session_id: session.id.clone(),
            parent_session_id: self.log.session().id.clone(),
            agent: agent.name.clone(),
            call_id: call.call_id.clone(),
        });
        let shared = Arc::new(Shared {
            permissions: self.shared.permissions.clone(),
            parent_cancel: Some(cancel.clone()),
            // mode changes reach the child mid-run (red-team finding 8b)
            mode: self.shared.mode.clone(),
            // a sub-agent's jobs are the session's: listed with them, ended with it
            jobs: self.shared.jobs.clone(),
            ..Shared::default()
        });
        let id = session.id.clone();
        (self.spawn)(ChildSpec {
            opts: self.opts.clone(),
            store: self.log.store().clone(),
            session,
            events,
            shared,
            role,
            setup,
        })
        .map_err(|e| TaskError::Start {
            id,
            source: Box::new(e),
        })
    }

    /// One turn of a child with `prompt`; its final answer is the text of its last reply.
    async fn run_task(&mut self, prompt: String) -> ChildRun {
        let cost_before = self.log.session().cost;
        let tokens_before = self.record.spent_tokens();
        let before = self.record.subagents();
        self.emit_context();
        let end = self
            .user_turn(vec![Prompt {
                id: new_id(),
                text: prompt,
                label: None,
                pasted: Vec::new(),
            }])
            .await;
        let answer = self.record.take_last_answer();
        let error = self.record.take_last_error();
        let after = self.record.subagents();
        ChildRun {
            end,
            session_id: self.log.session().id.clone(),
            agent: self.role.name.clone(),
            answer: answer.trim().to_string(),
            error,
            totals: SubagentTotals {
                runs: after.runs - before.runs,
                tokens: self.record.spent_tokens() - tokens_before + after.tokens - before.tokens,
                cost: self.log.session().cost - cost_before + after.cost - before.cost,
            },
        }
    }

    /// The tool result of a finished child: its answer (cut like any tool output) after the
    /// task id, or an error the model can act on.
    async fn task_result(
        &self,
        call: &TaskCall,
        run: ChildRun,
        cancel: &CancellationToken,
    ) -> ToolState {
        let end = now_ms();
        let id_line = format!(
            "task_id: {} (pass it as task_id to continue this agent)",
            run.session_id
        );
        let failed = |message: String| ToolState::Error {
            message,
            start: Some(call.start),
            end: Some(end),
        };
        if cancel.is_cancelled() || run.end == TurnEnd::Interrupted {
            return failed(pith_tools::ToolError::Interrupted.to_string());
        }
        let result = match &run.end {
            TurnEnd::Error => Err(pith_tools::ToolError::Failed(format!(
                "The {} agent failed: {}\n{id_line}",
                run.agent,
                run.error.as_deref().unwrap_or("it stopped with an error")
            ))),
            end => {
                let mut answer = run.answer.clone();
                if answer.is_empty() {
                    answer = "(the agent ended without a report)".into();
                }
                if *end == TurnEnd::MaxSteps {
                    answer.push_str("\n\n(the agent used all its steps; it may not be done)");
                }
                Ok(ToolOutput {
                    title: format!("{}: {}", run.agent, task_title(&call.input)),
                    output: format!("{id_line}\n\n{answer}"),
                    metadata: TaskMetadata {
                        session_id: run.session_id.clone(),
                        agent: run.agent.clone(),
                        tokens: run.totals.tokens,
                        cost: run.totals.cost,
                    }
                    .into(),
                    meta: Default::default(),
                })
            }
        };
        let result = self.tools.registry().finish(task::NAME, result, &call.ctx);
        super::tool_exec::finished(result, call.start, end)
    }
}

/// One child's turn on `prompt`, with the call it answers.
async fn run_child(
    call: TaskCall,
    mut child: Box<dyn ChildAgent>,
    prompt: String,
) -> (TaskCall, ChildRun) {
    let run = child.turn().run_task(prompt).await;
    (call, run)
}

fn task_title(input: &Value) -> String {
    let d = input
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("task");
    pith_protocol::text::one_line(d)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::error::EngineError;
    use crate::test_parts::{Answer, Parts, Scripted};
    use pith_protocol::message::PartKind;

    /// What the test's spawner was asked to build: the agent, its depth, the child session's
    /// parent and agent, the agent's tools, and whether the parent's tools came with it.
    type Asked = (
        String,
        u32,
        Option<String>,
        Option<String>,
        Option<Vec<String>>,
        bool,
    );

    static ASKED: Mutex<Vec<Asked>> = Mutex::new(Vec::new());

    /// Notes the spec, then fails as a runner that cannot be built.
    fn refuse(spec: ChildSpec) -> Result<Box<dyn ChildAgent>, EngineError> {
        ASKED.lock().unwrap().push((
            spec.role.name.clone(),
            spec.role.depth,
            spec.session.parent_id.clone(),
            spec.session.agent.clone(),
            spec.setup.tools.clone(),
            spec.setup.parent_tools.iter().any(|t| t == "read"),
        ));
        Err(EngineError::NoSession(spec.session.id))
    }

    /// A `task` call builds its child through the turn's `spawn` (no runner in sight): a child
    /// session of this one, the agent one level deeper with its tools and the parent's; a
    /// child that cannot be built is the call's error, and the model goes on from it.
    #[tokio::test]
    async fn a_task_call_builds_its_child_through_the_turns_spawn() {
        let input = r#"{"description":"look around","prompt":"find x","agent":"explore"}"#;
        let provider = Scripted::new(vec![
            Answer::call("c1", task::NAME, input),
            Answer::text("could not look"),
        ]);
        let mut parts = Parts::new(provider.clone());
        parts.spawn = refuse;
        let parent = parts.log.session_id().to_string();
        let prompt = Prompt {
            id: "s1".into(),
            text: "explore".into(),
            label: None,
            pasted: Vec::new(),
        };

        let end = parts.turn().user_turn(vec![prompt]).await;

        assert_eq!(end, TurnEnd::Stop);
        let asked = ASKED.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        let (name, depth, parent_id, agent, tools, parents) = &asked[0];
        assert_eq!((name.as_str(), *depth), ("explore", 1));
        assert_eq!(parent_id.as_deref(), Some(parent.as_str()));
        assert_eq!(agent.as_deref(), Some("explore"));
        assert!(
            tools
                .as_ref()
                .is_some_and(|t| t.iter().any(|t| t == "read"))
        );
        assert!(parents, "the parent's tools bound the child's");
        let error = parts.log.view()[1]
            .parts
            .iter()
            .find_map(|p| match &p.kind {
                PartKind::Tool {
                    state: ToolState::Error { message, .. },
                    ..
                } => Some(message.clone()),
                _ => None,
            });
        assert!(
            error
                .as_deref()
                .is_some_and(|m| m.starts_with("cannot start task")),
            "{error:?}"
        );
        assert_eq!(provider.requests().len(), 2);
    }
}
