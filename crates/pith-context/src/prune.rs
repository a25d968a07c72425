//! Pruning old tool outputs (ARCHITECTURE.md §6.2).
//!
//! Walk tool parts newest → oldest over the model's view, skipping the last 2 user turns and
//! stopping at the latest summary. Sum each completed output's tokens; once the sum passes
//! `prune_protect`, every older completed output is a candidate. Tools in `protected_tools` are
//! never pruned. If the candidates total more than `prune_minimum`, mark them
//! `compacted = now` (never delete: the `recall` tool brings an output back). Both figures scale
//! with the window unless configured (see [`Budget`]). The walk also stops at the first output that is already
//! pruned: everything older was pruned before, so a step costs what is new since the last prune.

use std::collections::{HashMap, HashSet};

use pith_config::CompactionConfig;
use pith_protocol::message::{Message, MessageId, PartId, PartKind, Role, ToolState};

use super::budget::Budget;
use super::tokens::Estimator;
use super::view::{compaction_point, in_body, is_turn_start, view_ranges};

/// User turns at the end of the history whose tool outputs are never pruned.
pub const PROTECTED_TURNS: usize = 2;

/// The figures a prune plan follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneRules {
    /// Tokens of the newest outputs never pruned.
    pub protect: u64,
    /// A prune clears more than this many tokens or nothing.
    pub minimum: u64,
    /// Tools whose outputs are never pruned.
    pub protected_tools: Vec<String>,
}

impl PruneRules {
    /// The rules for a model: `prune_protect` / `prune_minimum` as configured, else scaled to
    /// its window (see [`Budget`]).
    pub fn new(budget: &Budget, cfg: &CompactionConfig) -> PruneRules {
        PruneRules {
            protect: budget.prune_protect,
            minimum: budget.prune_minimum,
            protected_tools: cfg.protected_tools.clone(),
        }
    }
}

/// What a prune would clear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrunePlan {
    /// (message id, part id) of each output to clear, newest first.
    pub targets: Vec<(MessageId, PartId)>,
    /// Estimated tokens the clearing saves.
    pub tokens: u64,
}

impl PrunePlan {
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
}

/// Plans a prune of `messages` (the stored history or the view, in either order). Pure.
pub fn plan(messages: &[Message], est: &mut Estimator, rules: &PruneRules) -> PrunePlan {
    let point = compaction_point(messages);
    let (_, tail, rest) = view_ranges(messages.len(), point);
    let mut turns = 0usize;
    let mut total = 0u64;
    let mut pruned = 0u64;
    let mut targets = Vec::new();
    'walk: for i in rest.rev().chain(tail.rev()) {
        let m = &messages[i];
        if !in_body(m, i, point) {
            continue;
        }
        if m.role == Role::User {
            if is_turn_start(m) {
                turns += 1;
            }
            continue;
        }
        if turns < PROTECTED_TURNS {
            continue;
        }
        for part in m.parts.iter().rev() {
            let PartKind::Tool { tool, state, .. } = &part.kind else {
                continue;
            };
            let ToolState::Completed { time, .. } = state else {
                continue;
            };
            // the provider's own search is not in the request: clearing it frees nothing
            if pith_protocol::tool::is_hosted_search(tool, state) {
                continue;
            }
            // a loaded skill is the model's instructions for the task (§4.7): never cleared
            if tool == super::skills::SKILL_TOOL || rules.protected_tools.iter().any(|t| t == tool)
            {
                continue;
            }
            if time.compacted.is_some() {
                break 'walk;
            }
            let tokens = est.tool_output(part);
            total += tokens;
            if total > rules.protect {
                pruned += tokens;
                targets.push((m.id.clone(), part.id.clone()));
            }
        }
    }
    if pruned > rules.minimum {
        PrunePlan {
            targets,
            tokens: pruned,
        }
    } else {
        PrunePlan::default()
    }
}

/// Marks the planned outputs `compacted = now` (never deletes; already pruned outputs keep their
/// first mark). Returns how many parts changed. Idempotent.
pub fn apply(messages: &mut [Message], plan: &PrunePlan, now: i64) -> usize {
    if plan.targets.is_empty() {
        return 0;
    }
    let mut by_message: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (mid, pid) in &plan.targets {
        by_message
            .entry(mid.as_str())
            .or_default()
            .insert(pid.as_str());
    }
    let mut changed = 0;
    for m in messages.iter_mut() {
        let Some(parts) = by_message.get(m.id.as_str()) else {
            continue;
        };
        for p in m.parts.iter_mut() {
            if !parts.contains(p.id.as_str()) {
                continue;
            }
            if let PartKind::Tool {
                state: ToolState::Completed { time, .. },
                ..
            } = &mut p.kind
                && time.compacted.is_none()
            {
                time.compacted = Some(now);
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
