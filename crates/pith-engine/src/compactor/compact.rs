//! A compaction, from start to end (ARCHITECTURE.md §6.4): the breaker, the summary written ahead swapped in when there is one, else the cut planned and the
//! summary written; then the compaction and summary messages saved and announced, the view
//! restarted from them, what it cost reported, the continue message an automatic compaction
//! mid-turn needs — all through the [`CompactionHost`]. The `pre_compact` and `post_compact` hooks
//! around it are the turn's (`compaction_host.rs`).
//!
//! Nothing is saved until the summary is accepted, so an interrupted, failed or killed
//! compaction leaves the session as it was.

use tokio_util::sync::CancellationToken;

use super::{CompactionHost, Job, Planner, Written, ahead, check_worth_compacting, write_summary};
use crate::compaction::{CompactRequest, CompactionError, Then, Trigger};
use crate::model::ModelSetup;
use crate::session_log::SessionLog;
use pith_context::budget::Budget;
use pith_context::compaction::CONTINUE_MESSAGE;
use pith_protocol::event::{ContextEvent, EngineState, OutputEvent};
use pith_protocol::message::{Carried, Message, PartKind, Role};

/// A written summary to install, and what it covers.
pub(crate) struct Installed<'a> {
    pub written: Written,
    /// A separate compaction model that wrote it.
    pub setup: Option<&'a ModelSetup>,
    pub auto: bool,
    pub overflow: bool,
    pub focus: Option<String>,
    /// The verbatim tail: the view's messages from here on stay.
    pub tail: std::ops::Range<usize>,
    pub carried: Carried,
    /// Context tokens before, and of them what the summary replaces.
    pub before: u64,
    pub replaced: u64,
    pub then: Then,
    /// Written in the background, ahead of the threshold.
    pub background: bool,
}

/// Compacts the session (see the module documentation); the caller runs the hooks around it.
pub(crate) async fn compact<H: CompactionHost>(
    host: &mut H,
    req: CompactRequest,
    cancel: &CancellationToken,
) -> Result<(), CompactionError> {
    let auto = req.trigger.is_auto();
    host.compactor().check_breaker(auto)?;
    // A summary written in the background, when there is one, is swapped in at once.
    if req.trigger == Trigger::Auto && ahead::swap_in_background(host, req.then, cancel).await? {
        return Ok(());
    }
    // Tail, chunks and the breaker's figures are decided on exact counts.
    if !host.planner().meter.is_exact() {
        host.planner().meter.want_exact();
        host.planner().reset_estimate();
    }
    let budget = host.planner().budget();
    let overhead = host.planner().overhead();
    let before = host.planner().tokens_before(&req.trigger, &budget);

    // What is summarised: everything after the previous summary, before the verbatim tail,
    // which shrinks (to nothing) until the compacted context fits half the usable window.
    let (cut, carried) = host.planner().plan_cut(&budget, overhead, auto);
    let new_tokens = host.planner().tokens_of(cut.summarise.clone());
    check_worth_compacting(&cut, auto, before, new_tokens, &budget)?;
    host.planner()
        .check_request_fits(&carried, overhead, &budget)?;

    let focus = announce(host, &req.trigger);
    let previous = cut.previous_summary.as_deref();
    // What the summary replaces: by estimate, the history and the previous summary; by the
    // count of record, whatever of the context is neither overhead nor the kept tail.
    let kept_tokens = host.planner().tokens_of(cut.tail.clone());
    let replaced = (new_tokens + previous.map_or(0, |p| host.planner().meter.text(p)))
        .max(before.saturating_sub(overhead + kept_tokens));

    let setup = host.planner().compaction_setup()?;
    let overflow = matches!(req.trigger, Trigger::Overflow { .. });
    let job = Job {
        cut: &cut,
        carried: &carried,
        setup: setup.as_ref(),
        overflowed: overflow,
        focus: focus.as_deref(),
        budget: &budget,
    };
    let written = write_summary(host, job, cancel).await;
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            host.status(EngineState::Thinking, None);
            return Err(e);
        }
    };
    install(
        host,
        Installed {
            written,
            setup: setup.as_ref(),
            auto,
            overflow,
            focus,
            tail: cut.tail.clone(),
            carried,
            before,
            replaced,
            then: req.then,
            background: false,
        },
    )
}

/// Counts the compaction and tells the front end it started; returns its focus.
fn announce<H: CompactionHost>(host: &mut H, trigger: &Trigger) -> Option<String> {
    host.compactor().count();
    let focus = trigger.focus().map(str::to_string);
    host.log().emit(ContextEvent::CompactionStarted {
        auto: trigger.is_auto(),
        overflow: matches!(trigger, Trigger::Overflow { .. }),
        focus: focus.clone(),
    });
    host.status(EngineState::Compacting, None);
    focus
}

/// Saves a written summary: the compaction and summary messages replace everything before
/// `tail` in the view (nothing was saved before this point).
pub(crate) fn install<H: CompactionHost>(
    host: &mut H,
    i: Installed<'_>,
) -> Result<(), CompactionError> {
    let budget = host.planner().budget();
    let overhead = host.planner().overhead();
    let (c, s, tail_start) = match summary_messages(&mut host.planner(), &i, &budget, overhead) {
        Ok(messages) => messages,
        Err(e) => {
            host.status(EngineState::Idle, None);
            return Err(e);
        }
    };
    restart_view(host.log(), c, s.clone(), i.tail.clone(), tail_start);
    // the one context figure, stored with the session
    let used = host.planner().meter.used();
    host.log().touch(used);
    host.planner().reset_estimate();
    done(host, &i, &s, &budget)
}

/// The compaction and summary messages a written summary becomes (the summary fitted to its
/// cap, what pith carries after it), and the id of the first kept message; a manual
/// compaction that would not shrink the context is refused. Reads only the planner's parts.
pub(crate) fn summary_messages(
    planner: &mut Planner<'_>,
    i: &Installed<'_>,
    budget: &Budget,
    overhead: u64,
) -> Result<(Message, Message, Option<String>), CompactionError> {
    let kept_tokens = planner.tokens_of(i.tail.clone());
    let tail_start = planner.log.view().get(i.tail.start).map(|m| m.id.clone());
    let summary = planner.fit_summary(i.written.text.clone(), i.replaced, budget);
    let mut carried = i.carried.clone();
    let taken = overhead + planner.meter.text(&summary) + kept_tokens;
    planner.carry_after_summary(&mut carried, &summary, taken, budget);
    // what the written summary left of its cap goes to the records that grow with the history
    let placed = taken + planner.meter.text(&pith_context::carry::render(&carried));
    let (summarised, prev) = planner.summarised_before(i.tail.start);
    let spare = budget.target_after.saturating_sub(placed);
    planner.fill_spare(&mut carried, summarised, &prev, budget, spare);
    planner.note_cut_messages(&mut carried, budget);
    let (c, s) = planner.summary_messages(i, summary, &carried, tail_start.clone());

    // A manual compaction that would not shrink the context changes nothing.
    let before = i.before;
    let after = overhead + planner.meter.message(&c) + planner.meter.message(&s) + kept_tokens;
    if !i.auto && after >= before {
        return Err(CompactionError::NothingToCompact(format!(
            "compaction would not shrink the context ({} → ~{} tokens); it stays as it is",
            pith_protocol::text::count(before),
            pith_protocol::text::count(after)
        )));
    }
    Ok((c, s, tail_start))
}

/// Saves and announces the compaction and summary messages; the view restarts from them,
/// followed by the kept `tail`, and the session's compaction point is the first kept message.
pub(crate) fn restart_view(
    log: &mut SessionLog,
    c: Message,
    s: Message,
    tail: std::ops::Range<usize>,
    tail_start: Option<String>,
) {
    log.save_message(&c);
    log.save_message(&s);
    log.emit(OutputEvent::Message { message: c.clone() });
    log.emit_message(&s);
    log.add_cost(s.cost);
    log.restart_view(vec![c, s], tail);
    let point = tail_start.unwrap_or_else(|| log.view()[0].id.clone());
    log.set_compaction_point(point);
}

/// What the compaction just installed kept and what left the view, in counts, from the record
/// stored on its compaction message (the view's first) and the messages kept after its summary.
fn kept_and_left(
    log: &SessionLog,
) -> (
    pith_protocol::carried::Kept,
    pith_protocol::carried::LeftCounts,
) {
    let view = log.view();
    let Some(part) = view.first().and_then(Message::compaction) else {
        return Default::default();
    };
    let tail = view.len().saturating_sub(2);
    let left = part
        .carried
        .left_view
        .as_ref()
        .map(|l| l.counts)
        .unwrap_or_default();
    (part.carried.kept(tail, 0), left)
}

/// Adds the synthetic message that tells the model to go on after an automatic compaction.
fn push_continue<H: CompactionHost>(host: &mut H) {
    let mut m = Message::new(host.log().session_id(), Role::User);
    m.push(PartKind::Text {
        text: CONTINUE_MESSAGE.to_string(),
        synthetic: true,
    });
    host.planner().meter.add_message(&m);
    host.log().push(m);
}

/// After the view restarted: logs and reports what the compaction did and cost, adds the
/// continue message an automatic compaction mid-turn needs, and trips the breaker when
/// compacting did not make the conversation fit.
fn done<H: CompactionHost>(
    host: &mut H,
    i: &Installed<'_>,
    s: &Message,
    budget: &Budget,
) -> Result<(), CompactionError> {
    let (before, written) = (i.before, &i.written);
    let planner = host.planner();
    let after = planner.meter.used();
    tracing::info!(
        "compacted: {before} -> {after} tokens in {} model calls (summary {} tokens, tail {} messages)",
        written.calls,
        planner.meter.text(&s.text()),
        planner.log.view().len() - 2
    );
    let cost = host.compactor().finished(written, s.cost, i.background);
    let (kept, left) = kept_and_left(host.log());
    host.log().emit(ContextEvent::CompactionFinished {
        summary_message_id: s.id.clone(),
        before,
        after,
        model_calls: written.calls,
        cost,
        kept,
        left,
    });
    host.emit_context();
    if i.then == Then::Continue && i.auto && !host.planner().ends_with_user_request() {
        push_continue(host);
        host.emit_context();
    }
    if i.auto {
        host.compactor().check_fit(before, after, budget.usable)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::sync::mpsc;

    use super::*;
    use crate::emitter::Emitter;
    use crate::meter::Meter;
    use crate::test_parts::{Scripted, model};
    use pith_protocol::event::{Event, EventMsg};
    use pith_protocol::message::Usage;
    use pith_protocol::message::{PartKind, Role};
    use pith_store::Store;
    use pith_store::lock::SessionLock;

    /// The compactor's parts and nothing else: a session log over a store in memory (and its
    /// events), a meter counting exactly (as a compaction plans), the model, the configuration
    /// and the todo list.
    struct Narrow {
        log: SessionLog,
        events: mpsc::UnboundedReceiver<EventMsg>,
        meter: Meter,
        model: ModelSetup,
        config: pith_config::Config,
        todos: Mutex<Vec<pith_protocol::tool::Todo>>,
        _dir: tempfile::TempDir,
    }

    impl Narrow {
        /// Eight questions and answers of about 700 words each, saved and counted.
        fn long_session() -> Narrow {
            let dir = tempfile::tempdir().unwrap();
            let store = Arc::new(Store::open_in_memory().unwrap());
            let session = store.create_session("/ws", "mock/test-model").unwrap();
            let lock = SessionLock::acquire(dir.path(), &session.id).unwrap();
            let (tx, events) = mpsc::unbounded_channel();
            let mut n = Narrow {
                log: SessionLog::new(store, session, lock, Emitter::direct(tx)),
                events,
                meter: Meter::new("test-model"),
                model: model(Scripted::new(Vec::new())),
                config: pith_config::Config::default(),
                todos: Mutex::new(Vec::new()),
                _dir: dir,
            };
            n.meter.want_exact();
            for i in 0..8 {
                n.push(
                    Role::User,
                    format!("question {i}: {}", "words ".repeat(700)),
                );
                n.push(
                    Role::Assistant,
                    format!("answer {i}: {}", "more ".repeat(700)),
                );
            }
            n
        }

        fn push(&mut self, role: Role, text: String) {
            let mut m = Message::new(self.log.session_id(), role);
            m.push(PartKind::Text {
                text,
                synthetic: false,
            });
            if role == Role::Assistant {
                m.finish = Some(pith_protocol::llm::FinishReason::Stop);
            }
            self.meter.add_message(&m);
            self.log.save_message(&m);
            self.log.push(m);
        }

        fn planner(&mut self) -> Planner<'_> {
            Planner {
                log: &self.log,
                system: &[],
                specs: &[],
                meter: &mut self.meter,
                model: &self.model,
                config: &self.config,
                todos: &self.todos,
                jobs: Vec::new(),
                cache: Default::default(),
            }
        }
    }

    /// A manual compaction's summary of the history before `cut`'s tail, from `before` tokens.
    fn written(
        cut: &pith_context::compaction::Cut,
        carried: Carried,
        before: u64,
    ) -> Installed<'static> {
        Installed {
            written: Written {
                text: "## Goal\nall well\n".into(),
                usage: Usage::default(),
                calls: 1,
                inline: false,
            },
            setup: None,
            auto: false,
            overflow: false,
            focus: None,
            tail: cut.tail.clone(),
            carried,
            before,
            replaced: before / 2,
            then: Then::Stop,
            background: false,
        }
    }

    /// A written summary installed with only the compactor's parts — no turn and no runner:
    /// the view restarts from the compaction and summary messages followed by the kept tail,
    /// the store keeps the whole history, the front end hears both messages, and the
    /// session's compaction point is the first kept message.
    #[test]
    fn a_written_summary_is_installed_over_the_log_and_meter_alone() {
        let mut n = Narrow::long_session();
        let mut planner = n.planner();
        let budget = planner.budget();
        let (cut, carried) = planner.plan_cut(&budget, 1_000, false);
        assert!(!cut.summarise.is_empty() && !cut.tail.is_empty(), "{cut:?}");
        let before = planner.tokens_of(0..16) + 1_000;
        let installed = written(&cut, carried, before);
        let (c, s, tail_start) =
            summary_messages(&mut planner, &installed, &budget, 1_000).unwrap();
        assert!(tail_start.is_some());
        while n.events.try_recv().is_ok() {}
        restart_view(
            &mut n.log,
            c.clone(),
            s.clone(),
            cut.tail.clone(),
            tail_start.clone(),
        );

        let view = n.log.view();
        assert_eq!(view.len(), 2 + cut.tail.len());
        assert_eq!(view[0].id, c.id);
        assert!(view[1].summary && view[1].text().contains("all well"));
        assert_eq!(Some(&view[2].id), tail_start.as_ref());
        assert!(view.last().unwrap().text().starts_with("answer 7"));
        let stored = n.log.store().load_all(n.log.session_id()).unwrap();
        assert_eq!(stored.len(), 18);
        let heard: Vec<String> = std::iter::from_fn(|| n.events.try_recv().ok())
            .filter_map(|e| match e.event {
                Event::Output(OutputEvent::Message { message }) => Some(message.id),
                _ => None,
            })
            .collect();
        assert_eq!(heard, [c.id, s.id]);
    }

    /// A manual compaction whose messages would not take fewer tokens than the context had is
    /// refused before anything is saved.
    #[test]
    fn a_summary_that_would_not_shrink_the_context_is_refused() {
        let mut n = Narrow::long_session();
        let mut planner = n.planner();
        let budget = planner.budget();
        let (cut, carried) = planner.plan_cut(&budget, 1_000, false);
        let no_gain = written(&cut, carried, 10);
        assert!(matches!(
            summary_messages(&mut planner, &no_gain, &budget, 1_000),
            Err(CompactionError::NothingToCompact(m)) if m.contains("would not shrink")
        ));
        assert_eq!(n.log.view().len(), 16);
    }
}
