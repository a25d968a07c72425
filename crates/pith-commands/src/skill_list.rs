//! `/skills` for every front end (ARCHITECTURE.md §4.7): each skill with where it comes from
//! and what it costs — its line in the system prompt's listing, and its instructions once
//! loaded — estimated at four characters a token (the engine's estimator is not at hand here;
//! `/context` has the counted figures).

use crate::config::skills::{Scope, Skills};

/// One skill as `/skills` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    /// `project .claude/skills`, `user ~/.codex/skills`.
    pub source: String,
    /// Its line in the system prompt's listing, in tokens (about).
    pub listing_tokens: u64,
    /// Its instructions, loaded, in tokens (about).
    pub body_tokens: u64,
    pub description: String,
    /// `allowed-tools` as written, joined; empty: not given.
    pub allowed: String,
    /// Who may run it, when not both: `only you (/NAME)`, `only the model`.
    pub who: String,
}

fn about_tokens(s: &str) -> u64 {
    (s.len() as u64).div_ceil(4)
}

/// The rows, by name.
pub fn rows(skills: &Skills) -> Vec<Row> {
    skills
        .list
        .iter()
        .map(|s| Row {
            name: s.name.clone(),
            source: format!(
                "{} {}",
                match s.scope {
                    Scope::Project => "project",
                    Scope::User => "user",
                },
                s.root
            ),
            listing_tokens: about_tokens(&format!("- {}: {}\n", s.name, s.description)),
            body_tokens: about_tokens(&s.render("")),
            description: s.description.clone(),
            allowed: s.allowed_tools.as_deref().unwrap_or_default().join(", "),
            who: match (s.user_invocable, s.model_invocable) {
                (true, false) => "only you (/NAME)".into(),
                (false, true) => "only the model".into(),
                (false, false) => "no one (both turned off)".into(),
                (true, true) => String::new(),
            },
        })
        .collect()
}

/// The listing as lines of text (`pith run -c /skills`, the editor): a line per skill, and a
/// last line on what was skipped; without skills, where they are looked for.
pub fn lines(skills: &Skills) -> Vec<String> {
    if skills.list.is_empty() {
        let mut out = vec![
            "no skills found: put a folder with a SKILL.md in .pith/skills, .agents/skills or .claude/skills (a trusted workspace), or in ~/.config/pith/skills, ~/.claude/skills, ~/.agents/skills, ~/.codex/skills".to_string(),
        ];
        out.extend(skills.warnings.iter().map(|w| format!("warning: {w}")));
        return out;
    }
    let mut out = vec![format!(
        "{} skill{} (the model sees each name and description; /NAME or the skill tool loads one)",
        skills.list.len(),
        if skills.list.len() == 1 { "" } else { "s" }
    )];
    for r in rows(skills) {
        let mut line = format!(
            "/{} · {} · ~{} tokens listed, ~{} loaded · {}",
            r.name,
            r.source,
            r.listing_tokens,
            r.body_tokens,
            pith_protocol::text::one_line_max(&r.description, 100)
        );
        if !r.allowed.is_empty() {
            line.push_str(&format!(" · tools: {}", r.allowed));
        }
        if !r.who.is_empty() {
            line.push_str(&format!(" · {}", r.who));
        }
        out.push(line);
    }
    out.extend(skills.warnings.iter().map(|w| format!("warning: {w}")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_per_skill_with_source_and_cost() {
        let mut skills = Skills::default();
        assert!(lines(&skills)[0].starts_with("no skills found"));
        let (mut s, _) = crate::config::skills::parse(
            std::path::Path::new("/w/.claude/skills/pdf-tools/SKILL.md"),
            "pdf-tools",
            "---\nname: pdf-tools\ndescription: Extract text from PDFs\nallowed-tools: Read, Bash(pdftotext:*)\n---\nRun pdftotext on the file.",
        )
        .unwrap();
        s.scope = Scope::Project;
        s.root = ".claude/skills".into();
        skills.list.push(s);
        let l = lines(&skills);
        assert_eq!(l.len(), 2);
        assert!(
            l[1].starts_with("/pdf-tools · project .claude/skills · ~9 tokens listed, ~69 loaded")
                && l[1].ends_with("Extract text from PDFs · tools: Read, Bash(pdftotext:*)"),
            "{}",
            l[1]
        );
    }
}
