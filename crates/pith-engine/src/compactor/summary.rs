//! What the summary requests are given and what a written summary becomes: the cache-friendly
//! request's instruction, the dedicated requests' history and budgets, and the compaction and
//! summary messages that are installed (ARCHITECTURE.md §6.4).

use pith_context::budget::Budget;
use pith_context::carry;
use pith_context::compaction as plan;
use pith_context::compaction::Cut;
use pith_context::view::is_turn_start;
use pith_protocol::carried::Anchor;
use pith_protocol::llm::{ChatMessage, FinishReason, flatten_tools};
use pith_protocol::message::{Agent, Carried, CompactionPart, Message, PartKind, Role, now_ms};

use super::Ask;
use super::Installed;
use super::Planner;
use crate::model::ModelSetup;

/// The instruction of a cache-friendly summary request (placeholders `{{tail}}`, `{{request}}`).
const INLINE_TEMPLATE: &str = include_str!("../../../../prompts/compaction-inline.md");

/// How the summariser is told that the request it sees is kept word for word anyway.
const KEPT_REQUEST: &str =
    "[The user's current request; it is kept word for word after your summary, shortened here:]";

impl Planner<'_> {
    /// The summary as it is installed: a summary longer than its cap (a server that ignores the
    /// cap) or than what it replaces is never taken as it is.
    pub(crate) fn fit_summary(&self, summary: String, replaced: u64, budget: &Budget) -> String {
        let most = replaced.min(budget.summary_cap);
        if self.meter.text(&summary) > most {
            tracing::warn!("summary over {most} tokens (its cap, or what it replaces); cutting it");
            return plan::fit_text(&summary, most, self.meter.estimator());
        }
        summary
    }

    /// The compaction message (user, with the Compaction part) and the summary message after it
    /// (the summary, then what pith carries).
    pub(crate) fn summary_messages(
        &self,
        i: &Installed<'_>,
        summary: String,
        carried: &Carried,
        tail_start: Option<String>,
    ) -> (Message, Message) {
        let mut c = Message::new(self.log.session_id(), Role::User);
        c.push(PartKind::Compaction(CompactionPart {
            auto: i.auto,
            overflow: i.overflow,
            focus: i.focus.clone(),
            tail_start,
            carried: Box::new(carried.clone()),
        }));
        let mut s = Message::new(self.log.session_id(), Role::Assistant);
        s.parent_id = Some(c.id.clone());
        s.summary = true;
        s.agent = Some(Agent::Compaction);
        let setup = i.setup.unwrap_or(self.model);
        s.model = Some(setup.name.clone());
        s.usage = i.written.usage;
        s.cost = pith_provider::cost::cost(&i.written.usage, &setup.info);
        s.finish = Some(FinishReason::Stop);
        s.time_completed = Some(now_ms());
        s.push(PartKind::Text {
            text: summary,
            synthetic: false,
        });
        let appendix = carry::render(carried);
        if !appendix.is_empty() {
            s.push(PartKind::Text {
                text: appendix,
                synthetic: true,
            });
        }
        (c, s)
    }

    /// What the user asks of this summary: the standing `compaction.instructions` and `focus`;
    /// and the `anchors` pith keeps after it.
    fn summary_ask<'a>(
        &'a self,
        focus: Option<&'a str>,
        anchors: &'a [Anchor],
    ) -> plan::SummaryAsk<'a> {
        plan::SummaryAsk {
            instructions: self.config.compaction.instructions.as_deref(),
            focus,
            anchors,
        }
    }

    /// The instruction appended to the session's request for a cache-friendly summary, naming
    /// the `anchors` pith keeps word for word after it.
    pub(crate) fn inline_instruction(
        &self,
        cut: &Cut,
        focus: Option<&str>,
        anchors: &[Anchor],
    ) -> String {
        let tail = match self
            .log
            .view()
            .get(cut.tail.start)
            .filter(|_| !cut.tail.is_empty())
        {
            Some(first) => {
                let words: String = pith_context::paste::user_text(first)
                    .unwrap_or_default()
                    .chars()
                    .take(80)
                    .collect();
                format!(
                    "The messages from the user's message that begins \"{}\" on stay word for word after your summary: summarise everything before them in full, and them in a line or two.",
                    words.trim()
                )
            }
            None => "Only your summary and the user's latest request will remain.".to_string(),
        };
        INLINE_TEMPLATE
            .trim_end()
            .replace("{{tail}}", &tail)
            .replace(
                "{{request}}",
                &plan::request_text(None, self.summary_ask(focus, anchors)),
            )
    }

    /// The history a dedicated summary request is given: the summarised messages prepared (tool
    /// results cut, media dropped, tool blocks as text), the request being worked on in short
    /// when it travels whole anyway, and the previous summary — passed alongside, or as the
    /// first chunk when it is too large to travel in every request.
    pub(crate) fn dedicated_input(
        &self,
        cut: &Cut,
        carried: &Carried,
        budget: &Budget,
    ) -> (Vec<ChatMessage>, Option<String>) {
        let range = cut.summarise.clone();
        let current = carried.current_request.as_ref().and_then(|_| {
            range
                .clone()
                .rev()
                .find(|&i| is_turn_start(&self.log.view()[i]))
        });
        let to_summarise: Vec<Message> = range
            .map(|i| {
                let m = self.log.view()[i].clone();
                if Some(i) == current {
                    self.shortened_request(m, budget.summary_cap)
                } else {
                    m
                }
            })
            .collect();
        let mut chat = flatten_tools(plan::prepare(
            crate::model::to_wire(&to_summarise),
            budget.tool_result_chars,
        ));
        let mut previous = cut.previous_summary.clone();
        if let Some(p) =
            previous.take_if(|p| !plan::previous_summary_fits(p, budget, self.meter.estimator()))
        {
            chat.insert(0, plan::previous_summary_as_history(&p));
        }
        (chat, previous)
    }

    /// The request being worked on as the summariser sees it when it travels whole after the
    /// summary: cut to at most `max_tokens`, and marked as kept.
    fn shortened_request(&self, mut m: Message, max_tokens: u64) -> Message {
        for p in &mut m.parts {
            if let PartKind::Text {
                text,
                synthetic: false,
            } = &mut p.kind
            {
                *text = format!(
                    "{KEPT_REQUEST}\n{}",
                    plan::fit_text(text, max_tokens, self.meter.estimator())
                );
            }
        }
        m
    }

    /// The budget of the dedicated summary requests: chunks follow the compaction model's
    /// window; the summary must fit the session's (`main`).
    pub(crate) fn summary_budget(&self, setup: &ModelSetup, main: &Budget) -> Budget {
        let own = Budget::new(&setup.limits, &self.config.compaction);
        Budget {
            summary_cap: main.summary_cap.min(own.max_output),
            ..own
        }
    }

    /// The tokens of history one summary request takes. It keeps a tenth of the window for
    /// estimate error: half of that takes the words note; a longer note makes the chunks
    /// smaller.
    pub(crate) fn chunk_budget(
        &self,
        budget: &Budget,
        user: plan::SummaryAsk<'_>,
        ask: Ask<'_>,
    ) -> u64 {
        let words = ask.words.map_or(0, |w| self.meter.text(w));
        plan::chunk_budget(budget, user, self.meter.estimator())
            .saturating_sub(words.saturating_sub(budget.usable / 20))
            .max(budget.min_chunk)
    }
}
