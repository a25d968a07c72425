use super::*;

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

fn log(n: usize) -> String {
    let mut out: Vec<String> = (0..30)
        .map(|i| {
            format!("   Compiling crate-{n}-{i} v0.{i}.{n} (/home/dev/work/task{n}/crates/c{i})")
        })
        .collect();
    out.insert(
        12,
        format!("error[E0308]: mismatched types in task{n}/src/main.rs"),
    );
    out.join("\n")
}

fn source(id: &str, text: String) -> CarrySource {
    CarrySource {
        id: Some(id.to_string()),
        text,
        pasted: Vec::new(),
    }
}

fn facts(n: usize) -> Vec<CarrySource> {
    (0..n)
        .map(|i| {
            let fact = format!("Remember this for later: the code word for task {i} is WORD-{i}.");
            let text = match i % 3 {
                0 => format!("{fact} Here is the log of task {i}:\n{}", log(i)),
                1 => format!("Here is the log of task {i}:\n{}\n{fact}", log(i)),
                _ => {
                    let l = log(i);
                    let lines: Vec<&str> = l.lines().collect();
                    format!(
                        "Here is the log:\n{}\n{fact}\n{}",
                        lines[..15].join("\n"),
                        lines[15..].join("\n")
                    )
                }
            };
            source(&format!("01JMESSAGE{i:016}"), text)
        })
        .collect()
}

#[test]
fn every_message_keeps_its_words_before_any_block_gets_room() {
    let sources = facts(10);
    let all_words: u64 = sources
        .iter()
        .map(|s| est().text(&paste::words_of(&s.text, &s.pasted)) + WRAPPER_TOKENS)
        .sum();
    // Room for the words and a little more: every fact, oldest included, is carried word for
    // word; the blocks get what is left, and none is carried whole.
    let r = retain(&sources, 0, all_words + 120, &est());
    assert_eq!(r.messages.len(), 10);
    assert_eq!(r.dropped, 0);
    assert!(r.uncarried.is_empty());
    for (i, m) in r.messages.iter().enumerate() {
        assert!(
            m.contains(&format!("code word for task {i} is WORD-{i}.")),
            "{m}"
        );
    }
    let total: u64 = r
        .messages
        .iter()
        .map(|m| est().text(m) + WRAPPER_TOKENS)
        .sum();
    assert!(total <= all_words + 120, "{total}");
    assert!(!r.messages.iter().any(|m| m.contains("crate-3-20")));
    // With more room, each block shows its edges, its error line and a recall note.
    let r = retain(&sources, 0, all_words + 1_500, &est());
    for (i, m) in r.messages.iter().enumerate() {
        assert!(m.contains(&format!("WORD-{i}")), "{m}");
        assert!(m.contains(&format!("crate-{i}-0 ")), "first line: {m}");
        assert!(
            m.contains(&format!("error[E0308]: mismatched types in task{i}")),
            "{m}"
        );
        let id = paste::recall_id(sources[i].id.as_deref().unwrap(), 1);
        assert!(m.contains(&id), "{m}");
    }
    // Carried again (no ids now), the notes keep the recall ids.
    let again: Vec<CarrySource> = r
        .messages
        .iter()
        .map(|m| CarrySource {
            id: None,
            text: m.clone(),
            pasted: Vec::new(),
        })
        .collect();
    let r2 = retain(&again, 0, all_words + 500, &est());
    for (i, m) in r2.messages.iter().enumerate() {
        assert!(m.contains(&format!("WORD-{i}")), "{m}");
        let id = paste::recall_id(sources[i].id.as_deref().unwrap(), 1);
        assert!(m.contains(&id), "{m}");
    }
}

#[test]
fn when_even_the_words_do_not_fit_every_message_keeps_its_facts_first() {
    // Each message's words: its fact, then a long pasted email that reads as words.
    let email = |i: usize| {
        (0..12)
            .map(|k| format!("Hello team, this is paragraph {k} of the weekly update about the project and its plans."))
            .chain([format!("Remember: the code word for task {i} is WORD-{i}.")])
            .chain((12..24).map(|k| format!("Regards again, this is paragraph {k} of the weekly update about the plans.")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let sources: Vec<CarrySource> = (0..10)
        .map(|i| source(&format!("01JMESSAGE{i:016}"), email(i)))
        .collect();
    let all: u64 = sources
        .iter()
        .map(|s| est().text(&s.text) + WRAPPER_TOKENS)
        .sum();
    let budget = 600;
    assert!(all > budget * 5, "the words do not fit: {all}");
    let r = retain(&sources, 2, budget, &est());
    let carried = r.messages.join("\n");
    for i in 0..10 {
        assert!(
            carried.contains(&format!(
                "Remember: the code word for task {i} is WORD-{i}."
            )),
            "WORD-{i} is not carried word for word:\n{carried}"
        );
    }
    assert!(carried.contains('…'), "left-out lines are marked");
    assert_eq!(
        r.uncarried.len(),
        10,
        "every message was cut: the summary request gets them"
    );
    assert_eq!(r.uncarried[0].id, sources[0].id);
    assert!(r.uncarried[0].text.contains("paragraph 23"));
    assert_eq!(r.dropped, 2, "no message left out entirely");
    let total: u64 = r
        .messages
        .iter()
        .map(|m| est().text(m) + WRAPPER_TOKENS)
        .sum();
    assert!(total <= budget + 20, "{total}");

    // A budget too small for one sentence each: the newest messages get the room.
    let r = retain(&sources, 0, 60, &est());
    assert!(r.messages.last().unwrap().contains("WORD-9"), "{r:#?}");
    assert!(r.dropped >= 5, "{r:#?}");
}

#[test]
fn sentences_missing_from_the_summary_are_found() {
    let words = [
        "Remember this for later: the code word for task 3 is CEDAR-MOTH. Keep the public API stable.",
        "Use tabs, never spaces.\nThe deadline is 2026-12-01.",
    ];
    assert_eq!(
        sentences(words[0]),
        vec![
            "Remember this for later: the code word for task 3 is CEDAR-MOTH.",
            "Keep the public API stable."
        ]
    );
    let summary =
        "## Critical Context\n- Task 3 code word: CEDAR-MOTH\n- indent with tabs, never spaces";
    let missing = missing_sentences(&words, "", summary);
    assert_eq!(
        missing,
        vec!["Keep the public API stable.", "The deadline is 2026-12-01."]
    );
    // Carried word for word counts as kept.
    let missing = missing_sentences(&words, "keep the public  API stable.", summary);
    assert_eq!(missing, vec!["The deadline is 2026-12-01."]);
    // A summary that forgot everything misses every sentence.
    assert_eq!(missing_sentences(&words, "", "## Goal\nNone").len(), 4);
}
