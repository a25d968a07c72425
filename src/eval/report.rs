//! The scores: per strategy and probe kind, the share present in the compacted context and the
//! share answered right, as a table or one JSON document.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::grade::Tally;
use super::scenario::Kind;

/// How the history was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Strategy {
    /// pith's own compaction.
    Pith,
    /// The plain summary of the original OpenCode design.
    SummaryOnly,
    /// No compaction: the whole history (the ceiling).
    Full,
}

impl Strategy {
    pub(super) const ALL: [Strategy; 3] = [Strategy::Pith, Strategy::SummaryOnly, Strategy::Full];

    pub(super) fn name(self) -> &'static str {
        match self {
            Strategy::Pith => "pith",
            Strategy::SummaryOnly => "summary-only",
            Strategy::Full => "full",
        }
    }
}

/// One scenario's figures.
#[derive(Debug, Clone, Default)]
pub(super) struct ScenarioScore {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) window: u64,
    pub(super) probes: usize,
    pub(super) presence: BTreeMap<Strategy, Tally>,
    pub(super) answer: BTreeMap<Strategy, Tally>,
    /// The questions whose anchors pith's compacted context lacks.
    pub(super) pith_missing: Vec<String>,
    /// Tokens (estimated) of each strategy's context.
    pub(super) tokens: BTreeMap<Strategy, u64>,
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub(super) struct Report {
    pub(super) model: String,
    /// The answers were asked for (not `--presence-only`).
    pub(super) answered: bool,
    pub(super) scenarios: Vec<ScenarioScore>,
    /// Probe questions the model could not be asked (the request failed).
    pub(super) answer_errors: usize,
}

impl Report {
    /// The tallies of `strategy` over every scenario.
    pub(super) fn total(&self, strategy: Strategy, answer: bool) -> Tally {
        let mut t = Tally::default();
        for s in &self.scenarios {
            let of = if answer { &s.answer } else { &s.presence };
            if let Some(x) = of.get(&strategy) {
                for (k, (p, n)) in &x.by_kind {
                    let e = t.by_kind.entry(*k).or_default();
                    e.0 += p;
                    e.1 += n;
                }
            }
        }
        t
    }

    pub(super) fn json(&self) -> Value {
        let strategies: serde_json::Map<String, Value> = Strategy::ALL
            .iter()
            .map(|&st| {
                let answer = self.answered.then(|| tally_json(&self.total(st, true)));
                (
                    st.name().to_string(),
                    json!({ "presence": tally_json(&self.total(st, false)), "answer": answer }),
                )
            })
            .collect();
        let scenarios: Vec<Value> = self
            .scenarios
            .iter()
            .map(|s| scenario_json(s, self.answered))
            .collect();
        json!({
            "model": self.model,
            "probes": self.scenarios.iter().map(|s| s.probes).sum::<usize>(),
            "strategies": strategies,
            "scenarios": scenarios,
            "answer_errors": self.answer_errors,
        })
    }

    pub(super) fn table(&self) -> String {
        let probes: usize = self.scenarios.iter().map(|s| s.probes).sum();
        let mut out = format!(
            "pith eval compaction · {} · {} scenarios, {probes} probes\n",
            self.model,
            self.scenarios.len()
        );
        out.push_str("\npresence: the answer's anchors are in the compacted context\n");
        out.push_str(&self.grid(false));
        if self.answered {
            out.push_str(
                "\nanswer: the model, given only that context, answered with the anchors\n",
            );
            out.push_str(&self.grid(true));
            if self.answer_errors > 0 {
                let _ = writeln!(
                    out,
                    "({} probe requests failed and count as wrong)",
                    self.answer_errors
                );
            }
        }
        out.push_str(
            "\nper scenario (presence: pith / summary-only / full; tokens of pith's context)\n",
        );
        for s in &self.scenarios {
            let cell = |st| {
                s.presence.get(&st).map_or("-".into(), |t: &Tally| {
                    let (p, n) = t.overall();
                    format!("{p}/{n}")
                })
            };
            let _ = writeln!(
                out,
                "  {:<24} {:>6} {:>6} {:>6}   {} tokens at a {} window",
                s.name,
                cell(Strategy::Pith),
                cell(Strategy::SummaryOnly),
                cell(Strategy::Full),
                s.tokens.get(&Strategy::Pith).copied().unwrap_or(0),
                s.window
            );
            for q in &s.pith_missing {
                let _ = writeln!(out, "      pith lacks: {q}");
            }
        }
        out
    }

    fn grid(&self, answer: bool) -> String {
        let mut out = format!("  {:<14}", "strategy");
        for k in Kind::ALL {
            let _ = write!(out, " {:>12}", k.name());
        }
        let _ = writeln!(out, " {:>12}", "overall");
        for st in Strategy::ALL {
            let t = self.total(st, answer);
            let _ = write!(out, "  {:<14}", st.name());
            for k in Kind::ALL {
                let _ = write!(out, " {:>12}", percent(t.share(k)));
            }
            let _ = writeln!(out, " {:>12}", percent(t.overall_share()));
        }
        out
    }
}

fn percent(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.0}%", s * 100.0))
}

fn tally_json(t: &Tally) -> Value {
    let mut m = serde_json::Map::new();
    let entry = |(p, n): (usize, usize)| json!({ "passed": p, "total": n, "share": (n > 0).then(|| p as f64 / n as f64) });
    for k in Kind::ALL {
        if let Some(&x) = t.by_kind.get(&k) {
            m.insert(k.name().into(), entry(x));
        }
    }
    m.insert("overall".into(), entry(t.overall()));
    Value::Object(m)
}

fn scenario_json(s: &ScenarioScore, answered: bool) -> Value {
    let strategies: serde_json::Map<String, Value> = Strategy::ALL
        .iter()
        .map(|&st| {
            let presence = s.presence.get(&st).map(tally_json);
            let answer = s.answer.get(&st).filter(|_| answered).map(tally_json);
            let tokens = s.tokens.get(&st);
            (
                st.name().to_string(),
                json!({ "presence": presence, "answer": answer, "tokens": tokens }),
            )
        })
        .collect();
    json!({
        "name": s.name,
        "description": s.description,
        "window": s.window,
        "probes": s.probes,
        "strategies": strategies,
        "pith_missing": s.pith_missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let mut s = ScenarioScore {
            name: "one".into(),
            window: 4_096,
            probes: 2,
            ..Default::default()
        };
        for st in Strategy::ALL {
            let mut t = Tally::default();
            t.add(Kind::Recall, st != Strategy::SummaryOnly);
            t.add(Kind::Decision, true);
            s.presence.insert(st, t);
        }
        s.pith_missing.push("which port?".into());
        Report {
            model: "p/m".into(),
            answered: false,
            scenarios: vec![s],
            answer_errors: 0,
        }
    }

    #[test]
    fn the_table_has_a_row_per_strategy_and_a_column_per_kind() {
        let t = report().table();
        assert!(t.contains("recall") && t.contains("continuation"), "{t}");
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("summary-only"))
            .unwrap();
        assert!(row.contains("0%") && row.contains("50%"), "{row}");
        assert!(t.contains("pith lacks: which port?"), "{t}");
        assert!(!t.contains("\nanswer:"), "{t}");
    }

    #[test]
    fn the_json_has_shares_per_strategy_and_kind() {
        let j = report().json();
        assert_eq!(j["strategies"]["pith"]["presence"]["overall"]["share"], 1.0);
        assert_eq!(
            j["strategies"]["summary-only"]["presence"]["recall"]["passed"],
            0
        );
        assert!(j["strategies"]["full"]["answer"].is_null());
        assert_eq!(j["scenarios"][0]["pith_missing"][0], "which port?");
    }
}
