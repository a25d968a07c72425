//! Whether the goal is met, after a turn toward it (ARCHITECTURE.md §5.2): the configured
//! `goal.check` command, run as the bash tool runs a call (its permission rules, the mode, the
//! sandbox; exit code 0: met), or else the model, asked in a small side request — the
//! session's next request (so the provider's prompt cache is read) with `prompts/goal-check.md`
//! appended, answered `MET: …` or `CONTINUE: …`.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::turn_context::Turn;
use pith_protocol::event::{EngineState, Event, Goal, GoalCheckBy};
use pith_protocol::llm::{ChatMessage, UserContent};
use pith_tools::permission::Decision;

const CHECK_PROMPT: &str = include_str!("../../../../prompts/goal-check.md");

/// How long the check command gets to stop after an interrupt.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The output cap of the side request: one line, with room for a model that reasons first.
const CHECK_CAP: u32 = 1_024;

/// What a check said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub met: bool,
    pub by: GoalCheckBy,
    /// What the check found: the command's exit and last lines, or the model's reason.
    pub detail: String,
}

/// The model's answer to the check, read leniently: the first line's first word (`MET`,
/// `CONTINUE`, in any case, after markdown), else a `MET` or `CONTINUE` in capitals anywhere
/// (`NOT MET` is not met). No verdict is not met. The reason is what follows the word.
pub(crate) fn parse_verdict(text: &str) -> (bool, String) {
    let clean = |s: &str| {
        s.trim()
            .trim_start_matches(['*', '#', '`', '>', '-', '_', ' '])
            .to_string()
    };
    let first = text
        .lines()
        .map(clean)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let upper = first.to_ascii_uppercase();
    let rest = |word: &str, line: &str| {
        line[word.len()..]
            .trim_start_matches(['*', '`', '_', ':', '.', '-', ' ', '—'])
            .trim()
            .to_string()
    };
    for (word, met) in [("MET", true), ("CONTINUE", false)] {
        if upper.starts_with(word)
            && !upper[word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            return (met, rest(word, &first));
        }
    }
    // Anywhere, in capitals, as a word: the first one decides.
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        match *w {
            "MET" => {
                let negated = i > 0 && matches!(words[i - 1], "NOT" | "not" | "Not");
                return (!negated, first);
            }
            "UNMET" | "CONTINUE" => return (false, first),
            _ => {}
        }
    }
    (
        false,
        format!(
            "the check gave no verdict: {}",
            pith_protocol::text::one_line(&first)
        ),
    )
}

impl Turn<'_> {
    /// Checks `goal` after a turn; `None` when the check could not run or was interrupted
    /// (said to the user).
    pub(super) async fn check_goal(
        &mut self,
        goal: &Goal,
        cancel: &CancellationToken,
    ) -> Option<Verdict> {
        let verdict = match self.opts.config.goal.check.clone() {
            Some(command) => self.check_by_command(&command, cancel).await,
            None => self.check_by_model(goal, cancel).await,
        };
        self.state(EngineState::Thinking, None);
        verdict
    }

    /// The configured command, through the bash tool's rules and sandbox.
    async fn check_by_command(
        &mut self,
        command: &str,
        cancel: &CancellationToken,
    ) -> Option<Verdict> {
        let refused = |why: String| Verdict {
            met: false,
            by: GoalCheckBy::Command,
            detail: format!("the check command `{command}` did not run: {why}"),
        };
        let timeout = self.opts.config.goal.check_timeout_secs.clamp(1, 600) * 1_000;
        let input = json!({ "command": command, "timeout": timeout, "description": "goal check" });
        let call_id = format!("goal-check-{}", pith_protocol::message::new_id());
        let mut ctx = self.bare_context(&call_id, cancel);
        let checked = self.tools.check("bash", &input, &ctx);
        let firm = self.tools.permissions().is_firm(&checked);
        ctx.read_only_commands =
            self.opts.config.permission_mode == pith_protocol::event::PermissionMode::Plan;
        let decision = pith_tools::mode::apply(
            self.opts.config.permission_mode,
            "bash",
            &input,
            &self.opts.workspace,
            checked,
            firm,
        );
        match decision {
            Decision::Allow => {}
            Decision::Deny { message } => return Some(refused(message)),
            Decision::Ask(mut request) => {
                request.call_id = call_id.clone();
                request.title = format!("goal check: {command}");
                if let Err(e) = self.ask(request, false, cancel).await {
                    return (!cancel.is_cancelled()).then(|| refused(e.to_string()));
                }
            }
        }
        self.state(EngineState::Running, Some("goal check".into()));
        let run = self.tools.registry().execute("bash", input, &ctx);
        tokio::pin!(run);
        let result = tokio::select! {
            r = &mut run => r,
            // the command's tree is ended with the call (its token is the turn's child); it
            // gets a moment to go, as an interrupted tool call does
            _ = cancel.cancelled() => {
                let _ = tokio::time::timeout(STOP_GRACE, &mut run).await;
                return None;
            }
        };
        match result {
            Ok(out) => {
                let code = out.metadata.get("exit_code").and_then(|c| c.as_i64());
                Some(Verdict {
                    met: code == Some(0),
                    by: GoalCheckBy::Command,
                    detail: format!("`{command}`:\n{}", out.output.trim()),
                })
            }
            Err(e) if cancel.is_cancelled() => {
                tracing::debug!("goal check interrupted: {e}");
                None
            }
            Err(e) => Some(refused(e.to_string())),
        }
    }

    /// The model, asked in a side request: the session's next request with the question
    /// appended; its tokens count against the goal's budget.
    async fn check_by_model(&mut self, goal: &Goal, cancel: &CancellationToken) -> Option<Verdict> {
        let mut request = self.build_request(false);
        request.messages.push(ChatMessage::User {
            content: vec![UserContent::Text {
                text: CHECK_PROMPT.trim_end().replace("{goal}", goal.text.trim()),
            }],
        });
        request.max_tokens = Some(CHECK_CAP);
        let provider = self.model.provider.clone();
        self.state(EngineState::Thinking, Some("goal check".into()));
        let answer = crate::reader::complete_text_as(
            self,
            provider.as_ref(),
            &request,
            "the goal check's answer did not end",
            crate::reader::Reading::GoalCheck,
            cancel,
        )
        .await;
        match answer {
            Ok((text, usage, _)) => {
                self.goal_spend(usage.as_ref());
                // what the check cost is the session's, as a summary's is
                if let Some(u) = &usage {
                    self.log
                        .add_cost(pith_provider::cost::cost(u, &self.model.info));
                }
                let (met, detail) = parse_verdict(&text);
                Some(Verdict {
                    met,
                    by: GoalCheckBy::Model,
                    detail,
                })
            }
            Err(_) if cancel.is_cancelled() => None,
            Err(e) => {
                self.emit(Event::info(format!(
                    "warning: the goal check failed ({}); the goal stays active: /goal resume goes on",
                    pith_protocol::text::one_line(&e.message)
                )));
                None
            }
        }
    }
}
