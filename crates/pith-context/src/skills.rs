//! Skills loaded in a compacted history (ARCHITECTURE.md §4.7): what the `skill` tool returned
//! is the model's instructions for the task, as binding as the user's words, so it is carried
//! word for word after the summary — newest first, within its room — and a skill that does not
//! fit is carried by name, to be loaded again. Never summarised.

use pith_protocol::message::{CarriedSkill, Message, PartKind, ToolState};

use super::tokens::Estimator;

/// The `skill` tool's name.
pub const SKILL_TOOL: &str = "skill";

/// The skills loaded in `summarised` (oldest first) and in `previous` (the last compaction's),
/// newest first, one per name: whole while they fit in `room` tokens, by name after.
pub fn carried(
    summarised: &[Message],
    previous: &[CarriedSkill],
    room: u64,
    est: &Estimator,
) -> Vec<CarriedSkill> {
    let mut found: Vec<CarriedSkill> = Vec::new();
    for m in summarised.iter().rev() {
        for p in m.parts.iter().rev() {
            let PartKind::Tool {
                tool,
                input,
                state: ToolState::Completed { output, .. },
                ..
            } = &p.kind
            else {
                continue;
            };
            if tool != SKILL_TOOL {
                continue;
            }
            let Some(name) = input.get("name").and_then(|n| n.as_str()) else {
                continue; // the list, not a skill
            };
            if !found.iter().any(|s| s.name == name) {
                found.push(CarriedSkill {
                    name: name.to_string(),
                    text: output.clone(),
                });
            }
        }
    }
    for s in previous {
        if !found.iter().any(|f| f.name == s.name) {
            found.push(s.clone());
        }
    }
    let mut left = room;
    for s in &mut found {
        let cost = est.text(&s.text);
        if !s.text.is_empty() && cost <= left {
            left -= cost;
        } else {
            s.text.clear();
        }
    }
    found
}

/// The section after the summary; empty without skills.
pub fn render(skills: &[CarriedSkill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Skills you loaded (their instructions, word for word; still in force for this task)",
    );
    let mut by_name = Vec::new();
    for s in skills {
        if s.text.is_empty() {
            by_name.push(s.name.as_str());
        } else {
            out.push('\n');
            out.push_str(s.text.trim_end());
        }
    }
    if !by_name.is_empty() {
        out.push_str(&format!(
            "\nAlso loaded before (not kept here for room; call skill again if you still need them): {}",
            by_name.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    fn skill_call(id: &str, input: serde_json::Value, output: &str) -> Message {
        let mut m = assistant(id, "u1");
        add(
            &mut m,
            PartKind::Tool {
                call_id: format!("call_{id}"),
                tool: SKILL_TOOL.into(),
                input,
                state: completed(output),
            },
        );
        m
    }

    #[test]
    fn newest_first_whole_while_they_fit_then_by_name() {
        let est = Estimator::lazy("gpt-4o");
        let old = CarriedSkill {
            name: "old".into(),
            text: "<skill name=\"old\">old rules</skill>".into(),
        };
        let msgs = vec![
            user("u1", "use the skills"),
            skill_call(
                "a1",
                serde_json::json!({"name": "pdf"}),
                &format!("<skill name=\"pdf\">{}</skill>", "pdf rule ".repeat(10)),
            ),
            skill_call(
                "a2",
                serde_json::json!({"name": "fmt"}),
                "<skill name=\"fmt\">format rules</skill>",
            ),
            skill_call("a3", serde_json::json!({}), "2 skills: …"),
        ];
        let all = carried(&msgs, std::slice::from_ref(&old), 10_000, &est);
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["fmt", "pdf", "old"]);
        assert!(all.iter().all(|s| !s.text.is_empty()));
        let fmt_cost = est.text(&all[0].text);
        let tight = carried(&msgs, &[old], fmt_cost, &est);
        assert!(!tight[0].text.is_empty() && tight[1].text.is_empty() && tight[2].text.is_empty());
        let r = render(&tight);
        assert!(
            r.contains("format rules")
                && r.contains("call skill again if you still need them): pdf, old"),
            "{r}"
        );
    }
}
