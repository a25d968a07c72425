//! `pith eval compaction --session ID`: the presence check on a user's own stored session.
//! Probes are built mechanically from what was in its history before its latest compaction —
//! the names and numbers in the user's own words (recall), the files edited and written
//! (artifact), the commands run (continuation), the anchors of that history by their kind —
//! and looked for in the context its next request would carry.

use anyhow::bail;
use pith_context::{carry, paste};
use pith_launch::Setup;
use pith_protocol::carried::AnchorKind;
use pith_protocol::message::Message;

use super::grade::{self, Tally};
use super::report::{Report, ScenarioScore, Strategy};
use super::scenario::{Kind, Probe};
use crate::cli::Format;

/// At most this many probes of each kind, the newest kept.
const MAX_PER_KIND: usize = 40;

pub(super) fn run(setup: &Setup, id: &str, format: Format) -> anyhow::Result<i32> {
    let Some(session) = setup.store.find_session(id)? else {
        bail!("no session with id {id} (see `pith sessions list`)");
    };
    let Some(point) = session.compaction_point.clone() else {
        crate::outln!("session {id} was never compacted: nothing has left its view");
        return Ok(0);
    };
    let all = setup.store.load_all(id)?;
    // the point is where the view starts (the kept tail, stored before the compaction message)
    let Some(compaction) = all.iter().rev().find(|m| m.is_compaction_message()) else {
        bail!("session {id} names a compaction it does not hold");
    };
    let before: Vec<Message> = all
        .iter()
        .filter(|m| m.id < compaction.id)
        .cloned()
        .collect();
    let view = setup.store.load_view(id, Some(&point))?;
    let context = super::transcript::of_view(&pith_context::view::model_order(view));
    let probes = probes(&before, &session.model);
    let present = grade::normalise(&context);
    let mut score = ScenarioScore {
        name: format!("session {id}"),
        window: 0,
        probes: probes.len(),
        ..ScenarioScore::default()
    };
    let mut tally = Tally::default();
    for p in &probes {
        let ok = grade::passes(p, &present);
        tally.add(p.kind, ok);
        if !ok {
            score.pith_missing.push(p.question.clone());
        }
    }
    score.presence.insert(Strategy::Pith, tally);
    let est = pith_context::tokens::Estimator::for_model(&session.model);
    score.tokens.insert(Strategy::Pith, est.text(&context));
    let report = Report {
        model: session.model,
        answered: false,
        scenarios: vec![score],
        answer_errors: 0,
    };
    match format {
        Format::Json => crate::outln!("{}", report.json()),
        Format::Text => crate::out!("{}", report.table()),
    }
    Ok(0)
}

/// The probes of a compacted history (storage order).
fn probes(history: &[Message], model: &str) -> Vec<Probe> {
    let mut out = Vec::new();
    let probe = |kind, question: String, anchor: &str| Probe {
        kind,
        question,
        all_of: vec![anchor.to_string()],
        any_of: Vec::new(),
    };
    let mut facts = Vec::new();
    for m in history {
        if let Some(text) = paste::user_text(m) {
            let words = paste::words_of(&text, &paste::pasted_spans(m));
            facts.extend(paste::names(&words));
        }
    }
    push_newest(&mut out, facts, |f| {
        probe(Kind::Recall, format!("the user said \"{f}\""), &f)
    });
    let ledger = carry::ledger_of(history);
    let files: Vec<String> = ledger
        .edited
        .iter()
        .chain(&ledger.written)
        .cloned()
        .collect();
    push_newest(&mut out, files, |f| {
        probe(Kind::Artifact, format!("changed {f}"), &f)
    });
    push_newest(&mut out, ledger.commands, |c| {
        let c = c.trim_end_matches(" …").to_string();
        probe(Kind::Continuation, format!("ran `{c}`"), &c)
    });
    let est = pith_context::tokens::Estimator::for_model(model);
    let anchors = pith_context::anchors::index(history, &[], u64::MAX / 4, &est);
    let kind_of = |k| match k {
        AnchorKind::Path => Kind::Artifact,
        AnchorKind::Command => Kind::Continuation,
        _ => Kind::Recall,
    };
    let anchors: Vec<(Kind, String)> = anchors
        .into_iter()
        .map(|a| (kind_of(a.kind), a.text))
        .collect();
    for (kind, text) in anchors.into_iter().rev() {
        if !out.iter().any(|p| p.all_of[0] == text) {
            out.push(probe(kind, format!("anchor {text}"), &text));
        }
    }
    out
}

/// `items` (oldest first) made probes, deduplicated, at most [`MAX_PER_KIND`] of the newest.
fn push_newest(out: &mut Vec<Probe>, mut items: Vec<String>, make: impl Fn(String) -> Probe) {
    items.dedup();
    let mut seen = std::collections::HashSet::new();
    let newest: Vec<String> = items
        .into_iter()
        .rev()
        .filter(|i| !i.trim().is_empty() && seen.insert(i.clone()))
        .take(MAX_PER_KIND)
        .collect();
    out.extend(newest.into_iter().rev().map(make));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::{PartKind, Role};

    #[test]
    fn probes_come_from_the_users_words_and_the_ledger() {
        let mut u = Message::new("s", Role::User);
        u.push(PartKind::Text {
            text: "serve it on port 8443 and keep the api_v2 route".into(),
            synthetic: false,
        });
        let mut a = Message::new("s", Role::Assistant);
        a.push(PartKind::Tool {
            call_id: "c".into(),
            tool: "edit".into(),
            input: serde_json::json!({"file_path": "src/server.rs", "old_string": "a", "new_string": "b"}),
            state: pith_protocol::message::ToolState::Pending,
        });
        a.push(PartKind::Tool {
            call_id: "d".into(),
            tool: "bash".into(),
            input: serde_json::json!({"command": "cargo test -p server"}),
            state: pith_protocol::message::ToolState::Pending,
        });
        let mut ms = vec![u, a];
        for f in [
            "the ticket is ACME-4471",
            "deploy with make release_v2",
            "the owner is team-orion",
        ] {
            let mut u = Message::new("s", Role::User);
            u.push(PartKind::Text {
                text: format!("Remember: {f}."),
                synthetic: false,
            });
            ms.push(u);
        }
        let ps = probes(&ms, "openai/gpt-4.1");
        let has = |k: Kind, s: &str| ps.iter().any(|p| p.kind == k && p.all_of[0] == s);
        for f in ["ACME-4471", "release_v2", "team-orion"] {
            assert!(has(Kind::Recall, f), "{f}: {ps:?}");
        }
        assert!(has(Kind::Recall, "8443"), "{ps:?}");
        assert!(has(Kind::Recall, "api_v2"), "{ps:?}");
        assert!(has(Kind::Artifact, "src/server.rs"), "{ps:?}");
        assert!(has(Kind::Continuation, "cargo test -p server"), "{ps:?}");
    }
}
