//! The skills block of the system prompt: names and descriptions only, within a budget that
//! scales with the window (ARCHITECTURE.md §4.6). Descriptions are cut first, then names left
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
    let header = HEADER.trim();
    // descriptions whole, then cut shorter, then names alone
    for cap in [usize::MAX, 200, 100, 50, 0] {
        let text = render(skills, header, cap, skills.len());
        if count(&text) <= budget {
            return Some(Listing {
                text,
                shown: skills.len(),
                more: 0,
            });
        }
    }
    // names alone, fewer of them: the most that fit with the "more" line
    let (mut lo, mut hi) = (0, skills.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if count(&render(skills, header, 0, mid)) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut text = render(skills, header, 0, lo);
    if lo == 0 && count(&text) > budget {
        // not even the header fits: one line says where they are
        text = format!(
            "{} skills: call the skill tool without a name to list them, with a name to load one.",
            skills.len()
        );
    }
    Some(Listing {
        text,
        shown: lo,
        more: skills.len() - lo,
    })
}

/// The header and the first `n` skills, each description cut at `cap` characters (0: names
/// only), and how many are left out.
fn render(skills: &[&Skill], header: &str, cap: usize, n: usize) -> String {
    let header = if cap == 0 {
        SHORT_HEADER.trim()
    } else {
        header
    };
    let mut out = format!("{header}\n\n");
    if cap == 0 {
        let names: Vec<&str> = skills[..n].iter().map(|s| s.name.as_str()).collect();
        out.push_str(&names.join(", "));
        out.push('\n');
    } else {
        for s in &skills[..n] {
            let d = pith_protocol::text::one_line_max(&s.description, cap);
            out.push_str(&format!("- {}: {d}\n", s.name));
        }
    }
    let more = skills.len() - n;
    if more > 0 {
        out.push_str(&format!(
            "{more} more: call the skill tool without a name to list them.\n"
        ));
    }
    out.trim_end().to_string()
}
