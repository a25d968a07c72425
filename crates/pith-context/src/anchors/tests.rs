use serde_json::json;

use pith_protocol::carried::{Anchor, AnchorKind as K};
use pith_protocol::message::{Message, PartKind, Role, ToolState, ToolTime};

use super::extract::{Scope, TEXT_MAX, scan};
use super::{HEADER, PER_KIND_MAX, index, list, render};
use crate::testutil::{add, assistant, completed, msg, text, user};
use crate::tokens::Estimator;

fn est() -> Estimator {
    Estimator::for_model("gpt-4o")
}

/// The `(kind, text)` of what `scope` takes from `t`.
fn found(t: &str, scope: Scope) -> Vec<(K, String)> {
    scan(t, scope)
        .into_iter()
        .map(|f| (f.kind, f.text))
        .collect()
}

fn of_kind(t: &str, scope: Scope, kind: K) -> Vec<String> {
    found(t, scope)
        .into_iter()
        .filter(|(k, _)| *k == kind)
        .map(|(_, t)| t)
        .collect()
}

fn bash(call: &str, command: &str, output: &str, exit: i32) -> PartKind {
    PartKind::Tool {
        call_id: call.to_string(),
        tool: "bash".to_string(),
        input: json!({ "command": command }),
        state: ToolState::Completed {
            output: output.to_string(),
            title: command.to_string(),
            metadata: json!({ "command": command, "exit_code": exit }),
            time: ToolTime {
                start: 1,
                end: 2,
                compacted: None,
            },
        },
    }
}

fn call(call: &str, tool: &str, input: serde_json::Value, state: ToolState) -> PartKind {
    PartKind::Tool {
        call_id: call.to_string(),
        tool: tool.to_string(),
        input,
        state,
    }
}

fn anchor(kind: K, text: &str, recall: &str) -> Anchor {
    Anchor {
        kind,
        text: text.to_string(),
        recall: Some(recall.to_string()),
    }
}

#[test]
fn paths_with_their_line() {
    let t = "error[E0308]: mismatched types\n  --> src/x.rs:12:5\n   |\nsee crates/a/lib.rs:42 and main.rs:7";
    assert_eq!(
        of_kind(t, Scope::Output, K::Path),
        ["src/x.rs:12:5", "crates/a/lib.rs:42", "main.rs:7"]
    );
    let py = "Traceback (most recent call last):\n  File \"app/main.py\", line 12, in <module>\nValueError: bad";
    assert_eq!(of_kind(py, Scope::Output, K::Path), ["app/main.py:12"]);
    // A path without a line: from what someone wrote, not from a log (an `ls` lists hundreds).
    assert_eq!(
        of_kind("change config/prod.yaml please", Scope::Words, K::Path),
        ["config/prod.yaml"]
    );
    assert!(of_kind("src/a.rs\nsrc/b.rs\n", Scope::Output, K::Path).is_empty());
    // `e.g.` and a version are not files.
    assert!(of_kind("e.g. use 1.2.3 or v2.0", Scope::Prose, K::Path).is_empty());
}

#[test]
fn error_codes_and_first_lines() {
    let log = "   Compiling pith v0.1.0\nerror[E0308]: mismatched types\nwarning: unused\nthread 'main' panicked at src/main.rs:5:10:\nTraceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'user_id'\nFAILED tests/test_a.py::test_x - assert 1 == 2\ntest it_works ... FAILED\nError: connection refused\nfatal: not a git repository";
    assert_eq!(
        of_kind(log, Scope::Output, K::Error),
        [
            "error[E0308]: mismatched types",
            "thread 'main' panicked at src/main.rs:5:10:",
            "KeyError: 'user_id'",
            "FAILED tests/test_a.py::test_x - assert 1 == 2",
            "test it_works ... FAILED",
            "Error: connection refused",
            "fatal: not a git repository",
        ]
    );
    // Codes outside an error line are taken on their own; a code inside one is not repeated.
    let prose = "the open gave ENOENT, then ORA-12154 and HTTP 503; psql said SQLSTATE 23505; a NullPointerException";
    assert_eq!(
        of_kind(prose, Scope::Prose, K::Error),
        [
            "ENOENT",
            "ORA-12154",
            "HTTP 503",
            "SQLSTATE 23505",
            "NullPointerException"
        ]
    );
    assert_eq!(
        of_kind("status code: 404 on GET", Scope::Words, K::Error),
        ["HTTP 404"]
    );
    // Words that read like codes are not: ERROR as a word, EXAMPLE, an "Error handling" line.
    assert!(of_kind("Error handling is EXAMPLE text", Scope::Prose, K::Error).is_empty());
}

#[test]
fn urls_hashes_tickets() {
    let t = "see https://example.com:8443/a/b.html, commit 3f2a9c1d and PROJ-4521 (#812); uuid 550e8400-e29b-41d4-a716-446655440000";
    assert_eq!(
        of_kind(t, Scope::Words, K::Url),
        ["https://example.com:8443/a/b.html"]
    );
    assert_eq!(
        of_kind(t, Scope::Words, K::Hash),
        ["3f2a9c1d", "550e8400-e29b-41d4-a716-446655440000"]
    );
    assert_eq!(of_kind(t, Scope::Words, K::Ticket), ["PROJ-4521", "#812"]);
    // Not hashes: hex words without a digit, short ones, numbers, a build's suffix.
    let not = "cafe deadbeef a1b2c 12345678 target/debug/deps/pith-1a2b3c4d5e6f7a8b";
    assert!(of_kind(not, Scope::Words, K::Hash).is_empty());
    // Not tickets: standards.
    assert!(of_kind("UTF-8, SHA-256, ISO-8601, GPT-4", Scope::Words, K::Ticket).is_empty());
}

#[test]
fn ports_and_versions() {
    let t = "postgres on localhost:5433, the api on port 8080, db.internal:6432 and :9000; rustc 1.84.0, v2.3 and Python 3.12";
    assert_eq!(
        of_kind(t, Scope::Words, K::Port),
        ["localhost:5433", "port 8080", "db.internal:6432", ":9000"]
    );
    assert_eq!(
        of_kind(t, Scope::Words, K::Version),
        ["rustc 1.84.0", "v2.3", "Python 3.12"]
    );
    // An IP address is no version; a time is no port; a port is at most 65535.
    assert!(of_kind("at 10.0.0.5 by 12:30", Scope::Words, K::Version).is_empty());
    assert!(of_kind("at 10.0.0.5 by 12:30 port 99999", Scope::Words, K::Port).is_empty());
}

#[test]
fn numbers_only_from_what_the_user_typed() {
    let t = "keep the batch at 250, timeout 30s, 1.5x faster, $1,200 budget, 15% off; step 2 of 3";
    assert_eq!(
        of_kind(t, Scope::Words, K::Number),
        ["250", "30s", "1.5x", "$1,200", "15%"]
    );
    // Not from an assistant's prose, not from a log's lines.
    assert!(of_kind(t, Scope::Prose, K::Number).is_empty());
    let log = "test a ... ok (12 ms)\n1024 bytes in 37 files\n";
    assert!(found(log, Scope::Output).is_empty());
    // A number that is part of an identifier is that identifier, not a number.
    let ids = "see src/a2024.rs:12 and PROJ-123";
    assert!(of_kind(ids, Scope::Words, K::Number).is_empty());
    // A year inside a path is part of the path; a year typed on its own is a number.
    let t = "the logs are in logs/2024/app.log since 2023";
    assert_eq!(of_kind(t, Scope::Words, K::Path), ["logs/2024/app.log"]);
    assert_eq!(of_kind(t, Scope::Words, K::Number), ["2023"]);
}

#[test]
fn a_commands_own_line_holds_addresses_not_numbers() {
    let c = "curl -s http://localhost:5433/health && git show 3f2a9c1d --stat -n 20";
    assert_eq!(
        found(c, Scope::Command),
        [
            (K::Url, "http://localhost:5433/health".to_string()),
            (K::Hash, "3f2a9c1d".to_string()),
        ]
    );
}

#[test]
fn texts_are_cut() {
    let long = format!("Error: {}", "x".repeat(400));
    let e = of_kind(&long, Scope::Output, K::Error);
    assert_eq!(e[0].chars().count(), TEXT_MAX);
    assert!(e[0].ends_with('…'));
}

/// A session: the user asks, a command fails, a file is read, the assistant concludes.
fn session() -> Vec<Message> {
    let u = user(
        "u1",
        "the db is on localhost:5433, keep retries at 5 retries",
    );
    let mut a = assistant("a1", "u1");
    add(
        &mut a,
        bash(
            "call_1",
            "cargo test",
            "error[E0308]: mismatched types\n --> src/lib.rs:42:9",
            101,
        ),
    );
    add(
        &mut a,
        call(
            "call_2",
            "read",
            json!({ "file_path": "src/lib.rs", "offset": 30 }),
            completed("30 fn a() {}"),
        ),
    );
    add(
        &mut a,
        call(
            "call_3",
            "edit",
            json!({ "file_path": "src/db.rs" }),
            ToolState::Error {
                message: "File src/db.rs has not been read yet\nread it first".to_string(),
                start: None,
                end: None,
            },
        ),
    );
    add(&mut a, text("Fixed in 3f2a9c1d; next: bump to v1.4.0."));
    vec![u, a]
}

#[test]
fn index_takes_each_kind_newest_first_with_its_recall_id() {
    let got = index(&session(), &[], 10_000, &est());
    assert_eq!(
        got,
        [
            anchor(K::Version, "v1.4.0", "a1"),
            anchor(K::Hash, "3f2a9c1d", "a1"),
            anchor(K::Error, "File src/db.rs has not been read yet", "call_3"),
            anchor(K::Path, "src/db.rs", "call_3"),
            anchor(K::Path, "src/lib.rs:30", "call_2"),
            anchor(K::Path, "src/lib.rs:42:9", "call_1"),
            anchor(K::Error, "error[E0308]: mismatched types", "call_1"),
            anchor(
                K::Command,
                "cargo test → exit 101: error[E0308]: mismatched types",
                "call_1"
            ),
            anchor(K::Number, "5 retries", "u1"),
            anchor(K::Port, "localhost:5433", "u1"),
        ]
    );
}

#[test]
fn a_pasted_block_is_read_as_output_and_named_by_its_recall_id() {
    let mut u = msg("01JABCDEFGHJKMNPQRSTVWXYZ0", Role::User);
    let typed = "why 42?\n";
    let pasted = "error: linking failed 3 times\nsee /tmp/x.log:7\n";
    add(&mut u, text(&format!("{typed}{pasted}")));
    add(
        &mut u,
        PartKind::Pasted {
            spans: vec![(typed.len(), typed.len() + pasted.len())],
        },
    );
    let got = index(&[u], &[], 10_000, &est());
    let paste = crate::paste::recall_id("01JABCDEFGHJKMNPQRSTVWXYZ0", 1);
    assert_eq!(
        got,
        [
            anchor(K::Path, "/tmp/x.log:7", &paste),
            anchor(K::Error, "error: linking failed 3 times", &paste),
            anchor(K::Number, "42", "01JABCDEFGHJKMNPQRSTVWXYZ0"),
        ]
    );
}

#[test]
fn repeats_keep_the_newest_and_a_command_its_latest_status() {
    let mut a = assistant("a1", "u1");
    add(&mut a, bash("c1", "cargo test", "", 101));
    add(&mut a, bash("c2", "cargo build", "", 0));
    add(&mut a, bash("c3", "cargo test", "", 0));
    let got = index(&[a], &[], 10_000, &est());
    assert_eq!(
        got,
        [
            anchor(K::Command, "cargo test → exit 0", "c3"),
            anchor(K::Command, "cargo build → exit 0", "c2"),
        ]
    );
}

#[test]
fn merged_with_the_previous_compactions_anchors_after_the_new_ones() {
    let previous = [
        anchor(K::Port, "localhost:5433", "old_u"),
        anchor(K::Ticket, "PROJ-7", "old_u"),
    ];
    let got = index(&session()[..1], &previous, 10_000, &est());
    assert_eq!(
        got,
        [
            anchor(K::Number, "5 retries", "u1"),
            anchor(K::Port, "localhost:5433", "u1"),
            anchor(K::Ticket, "PROJ-7", "old_u"),
        ]
    );
}

#[test]
fn bounded_to_the_budget_without_losing_the_rare_kinds() {
    let listing: String = (0..40).map(|i| format!("src/m{i}.rs:1\n")).collect();
    let mut a = assistant("a1", "u1");
    add(
        &mut a,
        bash("c1", "cargo check", "error[E0599]: no method", 101),
    );
    add(&mut a, bash("c2", "grep -rn fn src", &listing, 0));
    let e = est();
    let all = index(std::slice::from_ref(&a), &[], 100_000, &e);
    let paths = all.iter().filter(|x| x.kind == K::Path).count();
    assert_eq!(paths, PER_KIND_MAX, "a cap per kind before the bound");
    for budget in [80, 150, 400] {
        let got = index(std::slice::from_ref(&a), &[], budget, &e);
        assert!(
            e.text(&render(&got)) <= budget,
            "{budget}: {}",
            render(&got)
        );
        assert!(
            got.iter().any(|x| x.text == "error[E0599]: no method"),
            "{budget}"
        );
        assert!(got.iter().any(|x| x.kind == K::Command), "{budget}");
        // The newest paths stay.
        let first = got.iter().find(|x| x.kind == K::Path);
        assert_eq!(first.map(|x| x.text.as_str()), Some("src/m39.rs:1"));
    }
    assert!(index(&[a], &[], 0, &e).is_empty());
}

#[test]
fn renders_one_line_per_source_newest_first() {
    let got = index(&session(), &[], 10_000, &est());
    let r = render(&got);
    assert_eq!(
        r,
        format!(
            "{HEADER}\n\
             - [a1] version: v1.4.0 · hash: 3f2a9c1d\n\
             - [call_3] error: File src/db.rs has not been read yet · path: src/db.rs\n\
             - [call_2] path: src/lib.rs:30\n\
             - [call_1] path: src/lib.rs:42:9 · error: error[E0308]: mismatched types · command: cargo test → exit 101: error[E0308]: mismatched types\n\
             - [u1] number: 5 retries · port: localhost:5433"
        )
    );
    assert_eq!(render(&[]), "");
    assert_eq!(list(&got[..2]), "- version: v1.4.0\n- hash: 3f2a9c1d");
}

#[test]
fn at_a_4k_window_the_index_stays_within_its_budget() {
    let limits = crate::overflow::Limits {
        context: 4_096,
        input: None,
        output: 4_096,
        max_tokens: None,
    };
    let b = crate::budget::Budget::new(&limits, &pith_config::CompactionConfig::default());
    let mut history = session();
    for i in 0..30 {
        let mut a = assistant(&format!("a{i}x"), "u1");
        add(
            &mut a,
            bash(
                &format!("c{i}"),
                &format!("cargo test -p crate{i}"),
                &format!(
                    "error[E{:04}]: failed\n --> src/f{i}.rs:{i}0:1\nhttps://ci.example.com/run/{i}",
                    100 + i
                ),
                101,
            ),
        );
        history.push(a);
    }
    let e = est();
    let got = index(&history, &[], b.anchors, &e);
    let cost = e.text(&render(&got));
    println!(
        "4k window: anchors budget {} tokens, index {} anchors in {cost} tokens",
        b.anchors,
        got.len()
    );
    assert!(
        cost <= b.anchors && got.len() >= 4,
        "{cost} > {}",
        b.anchors
    );
    let kinds: std::collections::HashSet<K> = got.iter().map(|a| a.kind).collect();
    assert!(kinds.len() >= 4, "a mix of kinds: {kinds:?}");
}

#[test]
fn what_the_carried_words_hold_is_not_shown_twice() {
    let c = pith_protocol::message::Carried {
        user_messages: vec!["the db is on localhost:5433".to_string()],
        current_request: Some("fix PROJ-9".to_string()),
        anchors: vec![
            anchor(K::Port, "localhost:5433", "u1"),
            anchor(K::Ticket, "PROJ-9", "u2"),
            anchor(K::Hash, "3f2a9c1d", "a1"),
        ],
        ..Default::default()
    };
    assert_eq!(super::beyond_words(&c), [anchor(K::Hash, "3f2a9c1d", "a1")]);
    let r = crate::carry::render(&c);
    assert!(r.contains("- [a1] hash: 3f2a9c1d"), "{r}");
    assert!(!r.contains("port: localhost:5433"), "{r}");
}

#[test]
fn a_code_an_error_line_already_names_is_not_repeated() {
    let out = "error[E0308]: mismatched types\n\nFor more information about this error, try `rustc --explain E0308`.";
    assert_eq!(
        found(out, Scope::Output),
        [(K::Error, "error[E0308]: mismatched types".to_string())]
    );
}

/// A long command the ledger names (cut short, with its own ending) is not listed again as an
/// anchor: the opening words are enough to know it is the same command.
#[test]
fn a_command_the_ledger_names_cut_short_is_not_listed_again() {
    let long = "git add infra/gke/node_pools.tf k8s/embedder/deployment.yaml && git commit -m \"INFRA-873: add gpu-l4-pool and schedule embedder on it\"";
    let mut a = assistant("a1", "u1");
    add(&mut a, bash("call_6", long, "[main 4e7a9c1] INFRA-873", 0));
    let view = [a];
    let all = index(&view, &[], 1_000, &est());
    assert!(all.iter().any(|x| x.kind == K::Command), "{all:?}");
    let cut: String = long.chars().take(90).collect();
    let known = format!("- Commands run: `{cut} … → exit 0: [main 4e7a9c1]`");
    let beyond = crate::anchors::index_beyond(&view, &[], 1_000, &est(), &known);
    assert!(!beyond.iter().any(|x| x.kind == K::Command), "{beyond:?}");
    // a check the frontier lists is known by the command as the frontier keys it
    let mut b = assistant("a2", "u1");
    let ctest = "cmake --build build -j8 >/dev/null && ctest --test-dir build | tail -n 3";
    add(&mut b, bash("call_7", ctest, "100% tests passed", 0));
    let checks = [b];
    let frontier =
        "- Verified: `cmake --build build -j8 && ctest --test-dir build` → exit 0 through a pipe";
    let beyond = crate::anchors::index_beyond(&checks, &[], 1_000, &est(), frontier);
    assert!(!beyond.iter().any(|x| x.kind == K::Command), "{beyond:?}");
    // another command with the same first word is still listed
    let other = "- Commands run: `git status → exit 0`";
    let still = crate::anchors::index_beyond(&view, &[], 1_000, &est(), other);
    assert!(still.iter().any(|x| x.kind == K::Command), "{still:?}");
}

/// A command's output gives its last few labelled measurements, never every number in it.
#[test]
fn an_output_gives_its_last_labelled_measurements() {
    let explain = " Limit  (cost=0.56..1234.5 rows=50 width=72) (actual time=1843.1..1843.7 rows=50 loops=1)\n   Buffers: shared hit=12 read=88123\n Planning Time: 0.213 ms\n Execution Time: 1843.771 ms\n(9 rows)\n";
    assert_eq!(
        of_kind(explain, Scope::Output, K::Figure),
        ["Planning Time: 0.213 ms", "Execution Time: 1843.771 ms"]
    );
    let many: String = (1..=6).map(|i| format!("step {i}: {i}.5 s\n")).collect();
    assert_eq!(
        of_kind(&many, Scope::Output, K::Figure),
        ["step 4: 4.5 s", "step 5: 5.5 s", "step 6: 6.5 s"]
    );
    // not a measurement: no unit, a sentence, a time of day
    assert!(
        of_kind(
            "rows: 48213\nIt took: about 3 s to run\nat 12:30\n",
            Scope::Output,
            K::Figure
        )
        .is_empty()
    );
    // what the user typed is read as words, not as an output's figures
    assert!(of_kind("Execution Time: 5 ms", Scope::Words, K::Figure).is_empty());
}
