//! The model's decisions and findings (ARCHITECTURE.md §6.4): the sentences of the assistant's
//! replies leaving the view that decide, conclude or give a reason ("Plan: a token bucket per
//! key…", "not adding eviction, since only authenticated keys reach it", "the timeout was caused
//! by…"), carried in the model's own words — newest first, each with the recall id of its reply,
//! within a budget that scales with the window. No model: a sentence qualifies by its words, so a
//! summariser that forgets the reasons loses none of them.

use std::sync::LazyLock;

use pith_protocol::carried::Decision;
use pith_protocol::message::{Message, PartKind, Role};
use regex::Regex;

use super::tokens::Estimator;

/// The most of one sentence kept.
const SENTENCE_CHARS: usize = 160;

/// Words that make a sentence a decision, a finding or a reason.
static MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(plan:|(went|dropped|down|up|grew|shrank) from\b|from [\d.,]+ ?[a-z%]* to [\d.,]+|, so |adding .* to |(the reason|fails? because|decid\w*|decision|chose|choos\w*|go(ing)? with|went with|instead of|rather than|because|since|so that|to avoid|caused by|the cause|root cause|turned out|the problem|the fix|keep it|not add\w*|won't|will not|no need|trade-?off|prefer\w*|approach\w*|built (on|from)|based on|backed by|we'll use|i'll use|which means|therefore|must not|should not|never|always|wouldn't help|doesn't need)\b|use an? |using an? |pinn?(ed|ing)? )",
    )
    .expect("decision markers")
});

/// A measured figure: a size, a duration, a rate, a share or a count of rows (`1,284.51 kB`,
/// `LCP 6.3 s`, `311 of 500 rows`, `37%`), what a finding reports and a summary rounds away.
static FIGURES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b\d[\d,]*(\.\d+)?\s?(?:(?:[kmgt]i?b|bytes|ms|µs|ns|s|secs?|seconds|minutes|min|rows|req/s|rps|qps|ops/s|[kmg]b/s)\b|%|×)|\b(down|up|dropped|fell|rose|grew|shrank|went) to \d|(^|\s)\d+/\d+(\s|$|,)",
    )
    .expect("figure pattern")
});

/// The decisions of `summarised` (oldest first) merged with the `previous` compaction's (the
/// newer first), bounded to `budget` tokens as [`render`]ed.
pub fn index(
    summarised: &[Message],
    previous: &[Decision],
    budget: u64,
    est: &Estimator,
) -> Vec<Decision> {
    index_cached(summarised, previous, budget, est, &mut Cache::default())
}

/// The decisions each reply yields, by message id (see `anchors::Cache`).
pub type Cache = std::collections::HashMap<String, Vec<Decision>>;

/// [`index`] with what each reply yields kept in `cache`.
pub fn index_cached(
    summarised: &[Message],
    previous: &[Decision],
    budget: u64,
    est: &Estimator,
    cache: &mut Cache,
) -> Vec<Decision> {
    let mut found = Vec::new();
    for m in summarised {
        if m.role != Role::Assistant || m.summary {
            continue;
        }
        let of = cache.entry(m.id.clone()).or_insert_with(|| decisions_of(m));
        found.extend(of.iter().cloned());
    }
    found.reverse();
    let mut out: Vec<Decision> = Vec::new();
    for d in found.into_iter().chain(previous.iter().cloned()) {
        if !out.iter().any(|o| o.text == d.text) {
            out.push(d);
        }
    }
    // over the budget, the oldest sentence goes: one that only reports a figure first, one
    // that states a decision outright last
    let weight = |d: &Decision| {
        if STRONG.is_match(&d.text) {
            2
        } else if MARKERS.is_match(&d.text) {
            1
        } else {
            0
        }
    };
    while !out.is_empty() && est.text(&render(&out)) > budget {
        let least = out.iter().map(weight).min().unwrap_or(0);
        let weakest = out.iter().rposition(|d| weight(d) == least);
        out.remove(weakest.unwrap_or(out.len() - 1));
    }
    out
}

/// The decisions of one reply, oldest first.
fn decisions_of(m: &Message) -> Vec<Decision> {
    let mut found = Vec::new();
    for p in &m.parts {
        if let PartKind::Text {
            text,
            synthetic: false,
        } = &p.kind
        {
            // the next step announced is the frontier's; a sentence that only introduces what
            // follows (`…before the fix:`) says nothing
            let decides = |s: &&str| {
                (MARKERS.is_match(s) || FIGURES.is_match(s))
                    && !s.starts_with("Next")
                    && !s.ends_with(':')
            };
            found.extend(sentences(text).filter(decides).map(|s| Decision {
                text: cut(s),
                recall: Some(m.id.clone()),
            }));
        }
    }
    found
}

/// A sentence that states a decision outright (`Decision: …`, `Plan: …`, `the root cause is…`,
/// `we went with…`): kept longest when the budget is short.
static STRONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(decision|plan|root cause|the fix|fix|conclusion)\b|\b(decided|decision|chose|went with|going with|root cause)\b",
    )
    .expect("strong decision markers")
});

/// The sentences of a reply's text, outside code blocks.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines()
        .filter(move |l| {
            if l.trim_start().starts_with("```") {
                in_code = !in_code;
                return false;
            }
            !in_code
        })
        .flat_map(|l| {
            l.split_inclusive(". ")
                .flat_map(|s| s.split_inclusive("? "))
        })
        .map(|s| s.trim().trim_start_matches(['-', '*', ' ']).trim())
        .filter(|s| s.split_whitespace().count() >= 3 && !s.ends_with('?'))
}

fn cut(s: &str) -> String {
    if s.chars().count() <= SENTENCE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(SENTENCE_CHARS).collect();
    out.push('…');
    out
}

/// The decisions as the section pith appends after a summary; empty when there are none.
pub fn render(decisions: &[Decision]) -> String {
    if decisions.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Decisions and findings, in your own words (newest first; `recall` [id] brings back the reply)",
    );
    for d in decisions {
        match &d.recall {
            Some(id) => s.push_str(&format!("\n- [{id}] {}", d.text)),
            None => s.push_str(&format!("\n- {}", d.text)),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pith_protocol::message::Message;

    fn reply(id: &str, text: &str) -> Message {
        let mut m = Message::new("ses", Role::Assistant);
        m.id = id.into();
        m.push(PartKind::Text {
            text: text.into(),
            synthetic: false,
        });
        m
    }

    #[test]
    fn decisions_and_reasons_are_kept_in_the_models_words_newest_first() {
        let est = Estimator::for_model("gpt-4o");
        let view = [
            reply(
                "m1",
                "I'll look at the stack first. Plan: a token bucket per API key in a new module. Reading lib.rs now.",
            ),
            reply(
                "m2",
                "The key space is bounded by the KeyStore, so I'd keep it simple and not add eviction now.\n```\nlet x = 1; // because\n```",
            ),
        ];
        let d = index(&view, &[], 1_000, &est);
        let texts: Vec<&str> = d.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "The key space is bounded by the KeyStore, so I'd keep it simple and not add eviction now.",
                "Plan: a token bucket per API key in a new module.",
            ]
        );
        assert_eq!(d[0].recall.as_deref(), Some("m2"));
        // a sentence without a decision's words, and code, are not carried
        assert!(!render(&d).contains("Reading lib.rs"));
        assert!(!render(&d).contains("let x"));
        // merged with an earlier compaction's, after the new ones, without repeats
        let again = index(&view[1..], &d, 1_000, &est);
        assert_eq!(again.len(), 2);
        assert_eq!(again[1].recall.as_deref(), Some("m1"));
        // bounded: a plan stated outright outlasts a newer reason
        let small = index(&view, &[], est.text(&render(&d[1..])), &est);
        assert_eq!(small.len(), 1);
        assert_eq!(small[0].recall.as_deref(), Some("m1"));
        assert!(index(&view, &[], 5, &est).is_empty());
    }

    #[test]
    fn over_the_budget_figures_go_first_then_reasons_then_decisions_oldest_first() {
        let est = Estimator::for_model("gpt-4o");
        let view = [
            reply("m1", "Decision: a classic LRU with a byte budget."),
            reply("m2", "One mutex for now, so reads wait on writes."),
            reply("m3", "The p95 went up by 37% under load."),
            reply("m4", "Get is 49.9 ns/op against 48.2 before."),
        ];
        let all = index(&view, &[], 1_000, &est);
        assert_eq!(all.len(), 4);
        let ids = |budget| -> Vec<String> {
            index(&view, &[], budget, &est)
                .into_iter()
                .filter_map(|d| d.recall)
                .collect()
        };
        let without = |skip: &[&str]| -> u64 {
            let kept: Vec<Decision> = all
                .iter()
                .filter(|d| !skip.contains(&d.recall.as_deref().unwrap_or("")))
                .cloned()
                .collect();
            est.text(&render(&kept))
        };
        // the oldest figure goes first, then the other figure, then the reason
        assert_eq!(ids(without(&["m3"])), ["m4", "m2", "m1"]);
        assert_eq!(ids(without(&["m3", "m4"])), ["m2", "m1"]);
        assert_eq!(ids(without(&["m2", "m3", "m4"])), ["m1"]);
    }

    #[test]
    fn findings_that_report_a_figure_are_kept() {
        let est = Estimator::for_model("gpt-4o");
        let view = [reply(
            "m1",
            "One entry chunk of 1,284.51 kB (402.17 kB gzip) — everything ships on first paint. Let me see how routes are wired. Only 311 of 500 rows survive. Line 11 looks odd. The p95 is 37% higher.",
        )];
        let d = index(&view, &[], 1_000, &est);
        let texts: Vec<&str> = d.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "The p95 is 37% higher.",
                "Only 311 of 500 rows survive.",
                "One entry chunk of 1,284.51 kB (402.17 kB gzip) — everything ships on first paint.",
            ]
        );
    }
}
