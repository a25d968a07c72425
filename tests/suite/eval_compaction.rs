//! `pith eval compaction` end to end (issue 40, must 7 and 8): the real binary against the mock
//! provider with a forgetful summariser — every summary, pith's and the plain baseline's, is the
//! bare template headings — and a model that answers a probe by echoing the context it was
//! given, so an answer is right exactly when its anchors are present. The figures printed here
//! are the mock table of BENCHMARKS.md.

use crate::support;

use serde_json::Value;
use support::MockServer;
use support::openai;
use support::pith::{PithEnv, stderr, stdout};

/// A summary with every section and nothing in it: what a small model often writes.
const FORGETFUL: &str = "## Goal\nNone\n## Constraints & Preferences\nNone\n## Progress\nNone\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nNone";

fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(support::message_text)
        .collect()
}

fn is_probe(body: &Value) -> bool {
    texts(body)
        .first()
        .is_some_and(|s| s.starts_with("[pith eval probe]"))
}

/// The mock: summaries forget everything, probes are answered with the context they carry.
fn forgetful(server: &MockServer) {
    server.respond_with(|body| {
        let prompt = (body.to_string().len() / 4) as u64;
        if is_probe(body) {
            let question = texts(body).pop().unwrap_or_default();
            let context = question
                .split("</context>")
                .next()
                .unwrap_or("")
                .to_string();
            return openai::text(&context, Some((prompt, 200)));
        }
        // pith's summary request and the baseline's alike
        openai::text(FORGETFUL, Some((prompt, 60)))
    });
}

fn share(report: &Value, strategy: &str, score: &str, kind: &str) -> f64 {
    report["strategies"][strategy][score][kind]["share"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {strategy}/{score}/{kind} share in {report}"))
}

const KINDS: [&str; 4] = ["recall", "artifact", "continuation", "decision"];

#[tokio::test]
async fn scores_the_shipped_scenarios_against_a_forgetful_summariser() {
    let server = MockServer::start().await;
    forgetful(&server);
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let out = env.run(&["eval", "compaction", "--format", "json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("one JSON document");
    let err = stderr(&out);
    assert!(
        err.contains("eval 1/5 rate-limiter"),
        "no progress line: {err}"
    );
    assert_eq!(report["model"], "mock/test-model");
    assert_eq!(report["scenarios"].as_array().unwrap().len(), 5);
    for strategy in ["pith", "summary-only", "full"] {
        for kind in KINDS.iter().chain(&["overall"]) {
            for score in ["presence", "answer"] {
                share(&report, strategy, score, kind);
            }
        }
    }
    // the ceiling holds every answer, and the echoing model answers exactly what is present
    assert_eq!(share(&report, "full", "presence", "overall"), 1.0);
    for strategy in ["pith", "summary-only", "full"] {
        for kind in KINDS {
            assert_eq!(
                share(&report, strategy, "presence", kind),
                share(&report, strategy, "answer", kind),
                "{strategy} {kind}"
            );
        }
    }
    let pith = share(&report, "pith", "presence", "overall");
    let baseline = share(&report, "summary-only", "presence", "overall");
    assert!(
        pith >= baseline + 0.3,
        "pith {pith:.2} is not far above the summary-only baseline {baseline:.2}"
    );
    // a forgotten summary keeps only what the history's last words said
    assert!(baseline < 0.3, "baseline {baseline:.2}");
    let probes: usize = report["probes"].as_u64().unwrap() as usize;
    let asked = server
        .requests()
        .iter()
        .filter(|r| is_probe(&r.body))
        .count();
    assert_eq!(asked, probes * 3, "one request per probe and strategy");
    for kind in KINDS.iter().chain(&["overall"]) {
        println!(
            "{kind:<13} pith {:>5.1}%  summary-only {:>5.1}%  full {:>5.1}%",
            100.0 * share(&report, "pith", "presence", kind),
            100.0 * share(&report, "summary-only", "presence", kind),
            100.0 * share(&report, "full", "presence", kind),
        );
    }
    for s in report["scenarios"].as_array().unwrap() {
        let tokens = |st: &str| s["strategies"][st]["tokens"].clone();
        println!(
            "{}: tokens pith {} summary-only {} full {}; pith lacks {}",
            s["name"],
            tokens("pith"),
            tokens("summary-only"),
            tokens("full"),
            s["pith_missing"]
        );
    }
}

#[tokio::test]
async fn presence_only_prints_the_table_and_asks_no_probe() {
    let server = MockServer::start().await;
    forgetful(&server);
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let saved = env.path().join("contexts");
    let saved_arg = saved.to_string_lossy().to_string();
    let args = [
        "eval",
        "compaction",
        "--presence-only",
        "--window",
        "8192",
        "--save-contexts",
        &saved_arg,
    ];
    let out = env.run(&args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.contains("at a 8192 window"), "{table}");
    for row in ["pith ", "summary-only ", "full "] {
        assert!(
            table.lines().any(|l| l.trim_start().starts_with(row)),
            "no {row}row: {table}"
        );
    }
    assert!(
        table.contains("continuation") && !table.contains("\nanswer:"),
        "{table}"
    );
    assert!(!server.requests().iter().any(|r| is_probe(&r.body)));
    // what was graded is there to read: pith's context opens with the summary and holds the
    // user's words
    let pith = std::fs::read_to_string(saved.join("rate-limiter.pith.txt")).unwrap();
    assert!(
        pith.contains("## Key Decisions") && pith.contains("8443"),
        "{pith}"
    );
    let full = std::fs::read_to_string(saved.join("rate-limiter.full.txt")).unwrap();
    assert!(full.contains("[tool result]") && full.len() > pith.len());
    assert!(saved.join("cache-eviction.summary-only.txt").exists());
}

#[tokio::test]
async fn own_scenarios_replace_the_shipped_ones_and_a_bad_one_is_one_line() {
    let server = MockServer::start().await;
    forgetful(&server);
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let dir = env.path().join("scenarios");
    std::fs::create_dir_all(&dir).unwrap();
    let history: Vec<Value> = (0..8)
        .flat_map(|i| {
            [
                serde_json::json!({"role": "user", "text": format!("step {i}: the database port is 6{i}32, keep it. {}", "More words about the task. ".repeat(30))}),
                serde_json::json!({"role": "assistant", "text": format!("Noted port 6{i}32. {}", "I looked at the code and it is fine. ".repeat(30))}),
            ]
        })
        .collect();
    let scenario = serde_json::json!({
        "name": "ports",
        "window": 4096,
        "messages": history,
        "probes": [{"kind": "recall", "question": "Which port came first?", "all_of": ["6032"]}]
    });
    std::fs::write(dir.join("ports.json"), scenario.to_string()).unwrap();
    // too short to compact: the next request carries it whole
    let tiny = serde_json::json!({
        "name": "tiny",
        "notes": "fields pith does not know are ignored",
        "messages": [{"role": "user", "text": "The port is 7001."}],
        "probes": [{"kind": "recall", "question": "Which port?", "all_of": ["7001"]}]
    });
    std::fs::write(dir.join("tiny.json"), tiny.to_string()).unwrap();
    let dir_arg = dir.to_string_lossy().to_string();
    let args = [
        "eval",
        "compaction",
        "--presence-only",
        "--format",
        "json",
        "--scenarios",
        &dir_arg,
    ];
    let out = env.run(&args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["scenarios"][0]["name"], "ports");
    assert_eq!(report["probes"], 2);
    let tiny = &report["scenarios"][1];
    assert_eq!(tiny["name"], "tiny");
    assert_eq!(
        tiny["strategies"]["pith"]["presence"]["overall"]["share"], 1.0,
        "{tiny}"
    );
    assert!(report["strategies"]["pith"]["answer"].is_null());

    std::fs::write(dir.join("broken.json"), "{\"name\": 1}").unwrap();
    let out = env.run(&args).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("broken.json: not a scenario"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[tokio::test]
async fn a_server_that_is_down_is_one_line_as_pith_run_says_it() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let env = PithEnv::new(&format!("http://127.0.0.1:{port}"), 32_000, 4_000, "");
    let out = env.run(&["eval", "compaction", "--presence-only"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let last = err.trim().lines().last().unwrap_or("");
    assert!(last.contains("cannot reach"), "{err}");
    assert!(stdout(&out).is_empty());
}

/// `--session ID` on a session compacted with a forgetful summariser: the names and numbers the
/// user typed before the compaction are probes, and pith carries them all.
#[tokio::test]
async fn session_presence_on_a_stored_compacted_session() {
    let server = MockServer::start().await;
    server.respond_with(|body| {
        let prompt = (body.to_string().len() / 4) as u64;
        let t = texts(body).join("\n");
        if t.contains("[pith: context compaction]") || t.contains("## Critical Context") {
            return openai::text(FORGETFUL, Some((prompt, 60)));
        }
        let answer = format!(
            "Noted. {}",
            "I looked at the code and it is fine. ".repeat(120)
        );
        openai::text(&answer, Some((prompt, 600)))
    });
    let env = PithEnv::new(&server.url(), 16_000, 2_000, "");
    let facts = [
        "the staging port is 8443",
        "the ticket is ACME-4471",
        "deploy with make release_v2",
        "the owner is team-orion",
    ];
    for (i, f) in facts.iter().enumerate() {
        let prompt = format!("Remember: {f}.");
        let mut args = vec!["run"];
        if i > 0 {
            args.push("-c");
        }
        args.push(&prompt);
        let out = env.run(&args).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = env.run(&["run", "-c", "/compact"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = pith_store::Store::open(env.data.path())
        .unwrap()
        .latest_stored_session()
        .unwrap()
        .unwrap()
        .id;
    let out = env
        .run(&["eval", "compaction", "--session", &id, "--format", "json"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let recall = &report["strategies"]["pith"]["presence"]["recall"];
    assert!(recall["total"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(recall["share"], 1.0, "{report}");
    assert!(report["strategies"]["summary-only"]["presence"]["overall"]["total"] == 0);
    // a session never compacted says so
    let out = env.run(&["run", "a fresh session"]).await;
    assert!(out.status.success());
    let fresh = pith_store::Store::open(env.data.path())
        .unwrap()
        .latest_stored_session()
        .unwrap()
        .unwrap()
        .id;
    let out = env.run(&["eval", "compaction", "--session", &fresh]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("never compacted"), "{}", stdout(&out));
}

#[tokio::test]
async fn no_model_configured_is_one_line() {
    let server = MockServer::start().await;
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let config = std::fs::read_to_string(&env.config).unwrap();
    let without: String = config
        .lines()
        .filter(|l| !l.starts_with("model ="))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&env.config, without).unwrap();
    let out = env.run(&["eval", "compaction", "--presence-only"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no model configured"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(server.requests().is_empty());
}

/// Ctrl-C stops an eval with 130 and its temporary sessions gone; the directories of an eval
/// that was killed outright (its process no longer runs) are removed by the next one.
#[tokio::test]
async fn an_interrupted_eval_leaves_no_temporary_directory() {
    let server = MockServer::start().await;
    // every request hangs: the eval is stopped in the middle of its first compaction
    server.respond_with(|_| openai::text("never", None).hold_open());
    let env = PithEnv::new(&server.url(), 32_000, 4_000, "");
    let tmp = tempfile::tempdir().unwrap();
    let stale = tmp.path().join("pith-eval-99999999-0");
    std::fs::create_dir_all(stale.join("sessions")).unwrap();
    let child = env
        .command(&["eval", "compaction", "--presence-only"])
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("pith starts");
    let pid = child.id().expect("running");
    let own = format!("pith-eval-{pid}-");
    let entries = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    for _ in 0..500 {
        if entries(tmp.path()).iter().any(|n| n.starts_with(&own)) && !server.requests().is_empty()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        entries(tmp.path()).iter().any(|n| n.starts_with(&own)),
        "the eval made its directory: {:?}",
        entries(tmp.path())
    );
    assert!(!stale.exists(), "the killed eval's directory is swept");
    // SAFETY: a signal to our own child, by its id.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the eval stops")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    let left: Vec<String> = entries(tmp.path())
        .into_iter()
        .filter(|n| n.starts_with("pith-eval-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
