//! Grading by exact anchors (no model judge): a text passes a probe when it holds every
//! `all_of` string and, when there are any, one of the `any_of` strings, case-insensitively,
//! with runs of whitespace counted as one space and Markdown's backticks left out.

use std::collections::BTreeMap;

use super::scenario::{Kind, Probe};

/// `text` lowered, whitespace runs made one space and backticks left out, for matching anchors.
pub(super) fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c == '`' {
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether `text` (already [`normalise`]d) passes `probe`.
pub(super) fn passes(probe: &Probe, text: &str) -> bool {
    let has = |a: &String| text.contains(&normalise(a));
    probe.all_of.iter().all(has) && (probe.any_of.is_empty() || probe.any_of.iter().any(has))
}

/// Passed and asked, per kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tally {
    pub(super) by_kind: BTreeMap<Kind, (usize, usize)>,
}

impl Tally {
    pub(super) fn add(&mut self, kind: Kind, passed: bool) {
        let e = self.by_kind.entry(kind).or_default();
        e.0 += usize::from(passed);
        e.1 += 1;
    }

    /// Passed and asked over every kind.
    pub(super) fn overall(&self) -> (usize, usize) {
        self.by_kind
            .values()
            .fold((0, 0), |(p, n), (a, b)| (p + a, n + b))
    }

    /// The share passed of `kind` (`None`: no probe of that kind).
    pub(super) fn share(&self, kind: Kind) -> Option<f64> {
        self.by_kind.get(&kind).and_then(|&(p, n)| ratio(p, n))
    }

    pub(super) fn overall_share(&self) -> Option<f64> {
        let (p, n) = self.overall();
        ratio(p, n)
    }
}

fn ratio(p: usize, n: usize) -> Option<f64> {
    (n > 0).then(|| p as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(all: &[&str], any: &[&str]) -> Probe {
        Probe {
            kind: Kind::Recall,
            question: "q".into(),
            all_of: all.iter().map(|s| s.to_string()).collect(),
            any_of: any.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn anchors_match_ignoring_case_and_spacing() {
        let t = normalise("The  server\nlistens on `PORT 8443`.");
        assert!(passes(&probe(&["port 8443"], &[]), &t));
        assert!(passes(&probe(&["8443"], &["nginx", "server"]), &t));
        assert!(!passes(&probe(&["8443", "9000"], &[]), &t));
        assert!(!passes(&probe(&["8443"], &["nginx", "caddy"]), &t));
    }

    #[test]
    fn shares_per_kind_and_overall() {
        let mut t = Tally::default();
        t.add(Kind::Recall, true);
        t.add(Kind::Recall, false);
        t.add(Kind::Decision, true);
        assert_eq!(t.share(Kind::Recall), Some(0.5));
        assert_eq!(t.share(Kind::Artifact), None);
        assert_eq!(t.overall(), (2, 3));
    }
}
