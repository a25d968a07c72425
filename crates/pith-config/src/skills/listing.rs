//! The skills block of the system prompt: names and descriptions only, within a budget that
//! scales with the window (ARCHITECTURE.md §4.7). Descriptions are cut first, then names left
//! out and counted ("N more"), as deferred MCP tools are: the `skill` tool lists them all.

use super::{Skill, Skills};

const HEADER: &str = include_str!("../../../../prompts/skills.md");
/// The header when only names fit.
const SHORT_HEADER: &str = include_str!("../../../../prompts/skills-short.md");

/// The block and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub text: String,
    /// Skills named in it.
    pub shown: usize,
    /// Skills left out (the `skill` tool lists them).
    pub more: usize,
}

/// The most the block may take of a `usable` window: a fortieth (2.5%), at least 80 tokens, at
/// most 4,000.
pub fn budget(usable: u64) -> u64 {
    (usable / 40).clamp(80, 4_000)
}

/// The block for `skills` within `budget` tokens as `count` counts them; `None` without skills.
/// Skills with `disable-model-invocation: true` are left out: only the user runs them.
pub fn listing(skills: &Skills, budget: u64, count: &dyn Fn(&str) -> u64) -> Option<Listing> {
    let list: Vec<&Skill> = skills.list.iter().filter(|s| s.model_invocable).collect();
    if list.is_empty() {
        return None;
    }
    let skills = &list;
    let n = skills.len();
    let fits = |described: usize, cap: usize, shown: usize| {
        let text = render(skills, described, cap, shown);
        (count(&text) <= budget).then_some(text)
    };
    let done = |text: String, shown: usize| {
        Some(Listing {
            text,
            shown,
            more: n - shown,
        })
    };
    // descriptions whole, then cut shorter
    for cap in [usize::MAX, 200, 100, 50] {
        if let Some(text) = fits(n, cap, n) {
            return done(text, n);
        }
    }
    // every name, with short descriptions for as many as fit (the first ones)
    if fits(0, 0, n).is_some() {
        for cap in [100, 50] {
            let k = most(n, |k| fits(k, cap, n).is_some());
            if k > 0 {
                return done(fits(k, cap, n).unwrap_or_default(), n);
            }
        }
        return done(fits(0, 0, n).unwrap_or_default(), n);
    }
    // names alone, fewer of them: the most that fit with the "more" line
    let shown = most(n, |k| fits(0, 0, k).is_some());
    match fits(0, 0, shown) {
        Some(text) if shown > 0 => done(text, shown),
        // not even the header fits: one line says where they are
        _ => done(
            format!(
                "{n} skills: call the skill tool without a name to list them, with a name to load one."
            ),
            0,
        ),
    }
}

/// The largest `k` in `0..=n` for which `ok(k)` holds (`ok` holds up to some `k`, then not).
fn most(n: usize, ok: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The header and the first `shown` skills: the first `described` of them with their
/// description cut at `cap` characters, the others by name; then how many are left out.
fn render(skills: &[&Skill], described: usize, cap: usize, shown: usize) -> String {
    let described = described.min(shown);
    let header = if described == 0 {
        SHORT_HEADER.trim()
    } else {
        HEADER.trim()
    };
    let mut out = format!("{header}\n\n");
    for s in &skills[..described] {
        let d = pith_protocol::text::one_line_max(&s.description, cap);
        out.push_str(&format!("- {}: {d}\n", s.name));
    }
    if shown > described {
        let names: Vec<&str> = skills[described..shown]
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        if described > 0 {
            out.push_str("Also: ");
        }
        out.push_str(&names.join(", "));
        out.push('\n');
    }
    let more = skills.len() - shown;
    if more > 0 {
        out.push_str(&format!(
            "{more} more: call the skill tool without a name to list them.\n"
        ));
    }
    out.trim_end().to_string()
}
