//! `pith acp` driven as an editor drives it: the real binary on stdio, JSON-RPC lines in and
//! out, against the mock provider. A small line client (below) answers the agent's
//! `session/request_permission` requests as a user would, and its `fs/*` requests as an editor
//! holding open buffers would.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use support::pith::PithEnv;
use support::{MockServer, openai};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const SUMMARY: &str = "## Goal\nSay hello.\n## Constraints & Preferences\nNone\n## Progress\nGreeted; wrote out.txt.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nout.txt";

pub(super) struct Client {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    /// Every `session/update` received, in order.
    updates: Vec<Value>,
    /// The agent's requests (permission questions), in order.
    pub(super) asked: Vec<Value>,
    /// The editor's open buffers (absolute path → text): `fs/read_text_file` is answered from
    /// them (an error for a path without one), `fs/write_text_file` replaces them.
    pub(super) buffers: HashMap<String, String>,
    /// The agent's `fs/*` and `terminal/*` requests (method, params), in order.
    pub(super) client_calls: Vec<(String, Value)>,
}

impl Client {
    pub(super) fn start(env: &PithEnv) -> Client {
        let mut child = env
            .command(&["acp"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("pith acp starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            _child: child,
            stdin,
            lines,
            next_id: 0,
            updates: Vec::new(),
            asked: Vec::new(),
            buffers: HashMap::new(),
            client_calls: Vec::new(),
        }
    }

    async fn write(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    pub(super) async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write(&line.to_string()).await;
        id
    }

    pub(super) async fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.write(&line.to_string()).await;
    }

    /// The next message; every line must be JSON-RPC (nothing else may reach stdout).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("pith acp answered within 30 s")
            .unwrap()
            .expect("pith acp is still running");
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// Reads until the response to `id`: updates are kept, permission questions answered with
    /// `choose(request)` (an option id).
    pub(super) async fn wait(&mut self, id: u64, choose: &dyn Fn(&Value) -> &'static str) -> Value {
        loop {
            let v = self.next().await;
            match v["method"].as_str() {
                Some("session/update") => self.updates.push(v["params"].clone()),
                Some("session/request_permission") => {
                    let option = choose(&v["params"]);
                    self.asked.push(v["params"].clone());
                    // "cancelled": the editor dismissed the question (Esc)
                    let outcome = match option {
                        "cancelled" => json!({"outcome": "cancelled"}),
                        _ => json!({"outcome": "selected", "optionId": option}),
                    };
                    let answer =
                        json!({"jsonrpc": "2.0", "id": v["id"], "result": {"outcome": outcome}});
                    self.write(&answer.to_string()).await;
                }
                Some(method @ ("fs/read_text_file" | "fs/write_text_file")) => {
                    let params = v["params"].clone();
                    self.client_calls.push((method.to_string(), params.clone()));
                    let path = params["path"].as_str().unwrap_or_default().to_string();
                    let answer = if method == "fs/write_text_file" {
                        let text = params["content"].as_str().unwrap_or_default();
                        self.buffers.insert(path, text.to_string());
                        json!({"jsonrpc": "2.0", "id": v["id"], "result": {}})
                    } else if let Some(text) = self.buffers.get(&path) {
                        json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": text}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": v["id"], "error": {
                            "code": -32002, "message": format!("no buffer for {path}")}})
                    };
                    self.write(&answer.to_string()).await;
                }
                Some(method) if method.starts_with("terminal/") => {
                    self.client_calls
                        .push((method.to_string(), v["params"].clone()));
                    let answer = json!({"jsonrpc": "2.0", "id": v["id"], "error": {
                        "code": -32601, "message": "this test client runs no terminals"}});
                    self.write(&answer.to_string()).await;
                }
                Some(other) => panic!("unexpected request {other}: {v}"),
                None if v["id"] == id => return v,
                None => panic!("a response to another request: {v}"),
            }
        }
    }

    pub(super) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        let v = self.wait(id, &|_| "reject").await;
        assert!(v.get("error").is_none(), "{method} failed: {v}");
        v["result"].clone()
    }

    pub(super) async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({})).await
    }

    pub(super) async fn initialize_with(&mut self, capabilities: Value) -> Value {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        )
        .await
    }

    pub(super) async fn new_session(&mut self, env: &PithEnv) -> String {
        let cwd = env.workspace.path().to_str().unwrap();
        let r = self
            .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        assert_eq!(r["modes"]["currentModeId"], "default", "{r}");
        r["sessionId"].as_str().unwrap().to_string()
    }

    /// Every update received so far (its `update`), and forgets them.
    pub(super) fn take_all(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.updates)
            .into_iter()
            .map(|u| u["update"].clone())
            .collect()
    }

    /// The updates of one kind received so far, and forgets them all.
    fn take(&mut self, kind: &str) -> Vec<Value> {
        let all = std::mem::take(&mut self.updates);
        all.into_iter()
            .map(|u| u["update"].clone())
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }
}

pub(super) fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

fn chunks_text(updates: &[Value]) -> String {
    updates
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

pub(super) fn env(server: &MockServer) -> PithEnv {
    PithEnv::new(&server.url(), 128_000, 8_000, "")
}

#[tokio::test]
async fn an_editor_runs_a_session_with_a_tool_a_compaction_and_loads_it_again() {
    let server = MockServer::start().await;
    // a small window, so that the first answer is worth summarising
    let env = PithEnv::new(&server.url(), 24_000, 4_000, "");
    let mut c = Client::start(&env);
    let init = c.initialize().await;
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "pith");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    let sid = c.new_session(&env).await;
    // the slash commands follow the session's creation
    let update = c.next().await;
    let commands = &update["params"]["update"];
    assert_eq!(
        commands["sessionUpdate"], "available_commands_update",
        "{update}"
    );
    let names: Vec<&str> = commands["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"compact") && names.contains(&"context"),
        "{names:?}"
    );
    assert!(!names.contains(&"quit"), "{names:?}");

    // a prompt that streams
    let long = format!(
        "Hello there, friend. {}",
        "the quick brown fox jumps over the lazy dog ".repeat(300)
    );
    server.push(openai::text(&long, Some((1000, 2700))));
    let r = c.call("session/prompt", prompt(&sid, "hello")).await;
    assert_eq!(r["stopReason"], "end_turn");
    let usage = c
        .updates
        .iter()
        .map(|u| &u["update"])
        .rfind(|u| u["sessionUpdate"] == "usage_update")
        .cloned()
        .expect("a usage_update");
    assert_eq!(usage["size"], 24_000);
    assert!(usage["used"].as_u64().unwrap() >= 1000, "{usage}");
    assert_eq!(usage["cost"]["currency"], "USD");
    assert_eq!(chunks_text(&c.take("agent_message_chunk")), long);

    approve_a_tool_call(&mut c, &env, &server, &sid).await;
    compact(&mut c, &server, &sid).await;
    drop(c);
    load_again(&env, &sid, &long).await;
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// A tool call that needs permission, approved once.
async fn approve_a_tool_call(c: &mut Client, env: &PithEnv, server: &MockServer, sid: &str) {
    let args = json!({"command": "echo hi > out.txt"}).to_string();
    server.push(openai::tool_calls(
        &[("call_1", "bash", &args)],
        Some((1100, 10)),
    ));
    server.push(openai::text("Wrote it.", Some((1200, 5))));
    let id = c.send("session/prompt", prompt(sid, "write out.txt")).await;
    let r = c.wait(id, &|_| "allow_once").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(c.asked.len(), 1);
    let asked = &c.asked[0];
    assert_eq!(asked["sessionId"], sid);
    assert_eq!(asked["toolCall"]["toolCallId"], "call_1");
    let kinds: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "allow_always", "reject_once"]
    );
    assert_eq!(asked["options"][2]["optionId"], "allow_always_exact");
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("out.txt")).unwrap(),
        "hi\n"
    );
    let updates: Vec<Value> = c.updates.iter().map(|u| u["update"].clone()).collect();
    let call = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .expect("a tool_call");
    assert_eq!(
        (call["toolCallId"].as_str(), call["kind"].as_str()),
        (Some("call_1"), Some("execute"))
    );
    let titled = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["title"].is_string())
        .unwrap();
    assert_eq!(titled["title"], "echo hi > out.txt");
    let done = updates
        .iter()
        .rfind(|u| u["toolCallId"] == "call_1")
        .unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert!(
        done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("```"),
        "{done}"
    );
    assert_eq!(chunks_text(&c.take("agent_message_chunk")), "Wrote it.");
}

/// `/compact` reports the compaction while it runs and when it ends.
async fn compact(c: &mut Client, server: &MockServer, sid: &str) {
    for _ in 0..3 {
        server.push(openai::text(SUMMARY, Some((1300, 100))));
    }
    let r = c
        .call("session/prompt", prompt(sid, "/compact the files"))
        .await;
    assert_eq!(r["stopReason"], "end_turn");
    if std::env::var_os("PITH_TEST_DUMP").is_some() {
        eprintln!("{:#?}", c.updates);
    }
    let started = c
        .updates
        .iter()
        .map(|u| &u["update"])
        .find(|u| u["sessionUpdate"] == "tool_call")
        .cloned()
        .expect("compaction reported");
    assert_eq!(
        (
            started["title"].as_str(),
            started["kind"].as_str(),
            started["status"].as_str()
        ),
        (
            Some("Compacting context"),
            Some("think"),
            Some("in_progress")
        )
    );
    let cid = started["toolCallId"].clone();
    let ended = c
        .updates
        .iter()
        .map(|u| &u["update"])
        .rfind(|u| u["toolCallId"] == cid)
        .cloned()
        .unwrap();
    assert_eq!(ended["status"], "completed", "{ended}");
    let text = ended["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Context compacted ") && text.contains(" → "),
        "{text}"
    );
    // the editor's title is the one line, and the figures are typed
    assert!(
        ended["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Context compacted ")),
        "{ended}"
    );
    assert!(ended["rawOutput"]["left"].is_object(), "{ended}");
}

/// Another editor window opens the stored session: replayed, then answered.
async fn load_again(env: &PithEnv, sid: &str, long: &str) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut c = Client::start(env);
    c.initialize().await;
    let cwd = env.workspace.path().to_str().unwrap();
    let r = c
        .call(
            "session/load",
            json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
        )
        .await;
    assert_eq!(r["modes"]["currentModeId"], "default");
    let replay: Vec<Value> = c.updates.iter().map(|u| u["update"].clone()).collect();
    let users: Vec<&str> = replay
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users[..2], ["hello", "write out.txt"], "{replay:?}");
    let said = chunks_text(
        &replay
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert!(said.starts_with(&format!("{long}Wrote it.")), "{said}");
    let tool = replay.iter().find(|u| u["toolCallId"] == "call_1").unwrap();
    assert_eq!(
        (tool["sessionUpdate"].as_str(), tool["status"].as_str()),
        (Some("tool_call"), Some("completed"))
    );
    assert!(
        replay.iter().any(|u| u["title"] == "Compacting context"),
        "{replay:?}"
    );
}

#[tokio::test]
async fn a_cancelled_prompt_answers_cancelled() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push(openai::text("never ends", None).first_delay_ms(60_000));
    let id = c
        .send("session/prompt", prompt(&sid, "take your time"))
        .await;
    // wait until the request reached the provider
    for _ in 0..200 {
        if !server.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(server.requests().len(), 1);
    c.notify("session/cancel", json!({"sessionId": sid})).await;
    let r = c.wait(id, &|_| "reject").await;
    assert_eq!(r["result"]["stopReason"], "cancelled", "{r}");
    // the session still works
    server.push(openai::text("back", None));
    let r = c.call("session/prompt", prompt(&sid, "again")).await;
    assert_eq!(r["stopReason"], "end_turn");
}

#[tokio::test]
async fn bad_input_gets_json_rpc_errors_and_the_agent_keeps_serving() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.write("{this is not json").await;
    assert_eq!(c.next().await["error"]["code"], -32700);
    let id = c.send("no/such/method", json!({})).await;
    let r = c.wait(id, &|_| "reject").await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    for (method, params) in [
        ("session/prompt", prompt("NOPE", "hi")),
        (
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        ),
        ("session/new", json!({"cwd": 42})),
        (
            "session/load",
            json!({"sessionId": "NOPE", "cwd": env.workspace.path(), "mcpServers": []}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": "NOPE", "modeId": "yes"}),
        ),
    ] {
        let id = c.send(method, params).await;
        let r = c.wait(id, &|_| "reject").await;
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
    }
    let init = c.initialize().await;
    assert_eq!(init["agentInfo"]["name"], "pith");
}

/// The workspace's `pith.toml` allows bash, which only trust lets it do: the question goes to
/// the user through the client before the first prompt, and the answer is kept.
#[tokio::test]
async fn the_trust_question_is_asked_through_the_client() {
    let server = MockServer::start().await;
    let env = env(&server);
    std::fs::write(
        env.workspace.path().join("pith.toml"),
        "[permission]\nbash = \"allow\"\n",
    )
    .unwrap();
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    let args = json!({"command": "mkdir trusted_dir"}).to_string();
    server.push(openai::tool_calls(&[("call_t", "bash", &args)], None));
    server.push(openai::text("ok", None));
    let id = c.send("session/prompt", prompt(&sid, "go")).await;
    let r = c
        .wait(id, &|q| {
            if q["toolCall"]["toolCallId"] == "pith-trust" {
                "trust"
            } else {
                "reject"
            }
        })
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(
        c.asked.len(),
        1,
        "only the trust question: bash is allowed once trusted"
    );
    assert!(
        c.asked[0]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("permission.bash"),
        "{}",
        c.asked[0]
    );
    assert!(env.workspace.path().join("trusted_dir").is_dir());
    drop(c);
    // answered once: not asked again
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    server.push(openai::text("ok again", None));
    c.call("session/prompt", prompt(&sid, "hi")).await;
    assert!(c.asked.is_empty(), "{:?}", c.asked);
}

/// The editor's "yes" mode is `--yes`: what the rules would ask about runs without a question.
#[tokio::test]
async fn yes_mode_runs_without_asking() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    c.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "yes"}),
    )
    .await;
    let args = json!({"command": "mkdir made_in_yes_mode"}).to_string();
    server.push(openai::tool_calls(&[("call_y", "bash", &args)], None));
    server.push(openai::text("ok", None));
    let r = c.call("session/prompt", prompt(&sid, "go")).await;
    assert_eq!(r["stopReason"], "end_turn");
    assert!(c.asked.is_empty(), "{:?}", c.asked);
    assert!(env.workspace.path().join("made_in_yes_mode").is_dir());
    let id = c
        .send(
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "bogus"}),
        )
        .await;
    assert_eq!(c.wait(id, &|_| "reject").await["error"]["code"], -32602);
}

/// The editor's modes are pith's permission modes: in plan mode a command that writes is
/// refused (no question), and the modes offered include plan and accept-edits.
#[tokio::test]
async fn plan_mode_from_the_editor_refuses_what_writes() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let r = c
        .call(
            "session/new",
            json!({"cwd": env.workspace.path(), "mcpServers": []}),
        )
        .await;
    let sid = r["sessionId"].as_str().unwrap().to_string();
    let ids: Vec<&str> = r["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["default", "plan", "accept-edits", "yes"]);
    c.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "plan"}),
    )
    .await;
    let args = json!({"command": "mkdir made_in_plan_mode"}).to_string();
    server.push(openai::tool_calls(&[("call_p", "bash", &args)], None));
    server.push(openai::text("planned", None));
    let r = c.call("session/prompt", prompt(&sid, "go")).await;
    assert_eq!(r["stopReason"], "end_turn", "{r}");
    assert!(c.asked.is_empty(), "{:?}", c.asked);
    assert!(!env.workspace.path().join("made_in_plan_mode").exists());
    assert!(tool_result(&server, "call_p").contains("plan mode"));
}

/// The workspace path of `name` as pith names it to the client (absolute, resolved).
pub(super) fn abs(env: &PithEnv, name: &str) -> String {
    let ws = env.workspace.path().canonicalize().unwrap();
    ws.join(name).to_str().unwrap().to_string()
}

/// The tool result of call `call_id` in the provider's latest request.
fn tool_result(server: &MockServer, call_id: &str) -> String {
    let body = server.requests().last().unwrap().body.clone();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no result for {call_id}: {body}"))
}

/// An editor that offers its file system: the model reads what its buffer holds (unsaved
/// text, not the disk's), and an edit and a write reach the editor with the right path and
/// content while the disk stays as it was. The permission rules still ask first.
#[tokio::test]
async fn an_editor_with_fs_reads_and_writes_its_buffers_not_the_disk() {
    let server = MockServer::start().await;
    let env = env(&server);
    let disk = "fn on_disk() {}\n";
    std::fs::write(env.workspace.path().join("lib.rs"), disk).unwrap();
    let mut c = Client::start(&env);
    c.initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}))
        .await;
    let buffer = "fn in_the_buffer() {}\nfn unsaved() {}\n";
    c.buffers.insert(abs(&env, "lib.rs"), buffer.to_string());
    let sid = c.new_session(&env).await;

    let read = json!({"file_path": "lib.rs"}).to_string();
    let edit = json!({"file_path": "lib.rs", "old_string": "fn unsaved() {}", "new_string": "fn edited() {}"})
        .to_string();
    let write = json!({"file_path": "notes/new.md", "content": "# new\n"}).to_string();
    server.push(openai::tool_calls(&[("call_r", "read", &read)], None));
    server.push(openai::tool_calls(&[("call_e", "edit", &edit)], None));
    server.push(openai::tool_calls(&[("call_w", "write", &write)], None));
    server.push(openai::text("done", None));
    let id = c
        .send("session/prompt", prompt(&sid, "change lib.rs"))
        .await;
    let r = c.wait(id, &|_| "allow_once").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");

    // the read the model saw is the buffer's
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let seen = requests[1].body.to_string();
    assert!(
        seen.contains("fn in_the_buffer() {}") && seen.contains("fn unsaved() {}"),
        "{seen}"
    );
    assert!(!seen.contains("fn on_disk"), "the disk was read: {seen}");
    let edited = tool_result(&server, "call_e");
    assert!(
        edited.starts_with("Edited lib.rs: replaced 1 occurrence."),
        "{edited}"
    );
    assert!(tool_result(&server, "call_w").starts_with("Created notes/new.md"));

    // the editor got the edit and the write, the disk did not
    let methods: Vec<&str> = c.client_calls.iter().map(|(m, _)| m.as_str()).collect();
    assert!(methods.iter().all(|m| m.starts_with("fs/")), "{methods:?}");
    let writes: Vec<&Value> = c
        .client_calls
        .iter()
        .filter(|(m, _)| m == "fs/write_text_file")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert_eq!(writes[0]["sessionId"], sid.as_str());
    assert_eq!(writes[0]["path"], abs(&env, "lib.rs"));
    assert_eq!(
        writes[0]["content"],
        "fn in_the_buffer() {}\nfn edited() {}\n"
    );
    assert_eq!(writes[1]["path"], abs(&env, "notes/new.md"));
    assert_eq!(writes[1]["content"], "# new\n");
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("lib.rs")).unwrap(),
        disk
    );
    assert!(!env.workspace.path().join("notes/new.md").exists());
    // the edit and the write were asked about first, as without an editor
    let asked: Vec<&str> = c
        .asked
        .iter()
        .map(|q| q["toolCall"]["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["call_e", "call_w"]);
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// A file the editor cannot read (here: no buffer, an error) is read from the disk; an
/// editor that reads but does not write gets no writes, the disk does.
#[tokio::test]
async fn a_failed_editor_read_falls_back_to_the_disk_and_writes_stay_on_disk_without_write_fs() {
    let server = MockServer::start().await;
    let env = env(&server);
    std::fs::write(env.workspace.path().join("a.txt"), "alpha on disk\n").unwrap();
    let mut c = Client::start(&env);
    c.initialize_with(json!({"fs": {"readTextFile": true}}))
        .await;
    let sid = c.new_session(&env).await;
    let read = json!({"file_path": "a.txt"}).to_string();
    let edit =
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}).to_string();
    server.push(openai::tool_calls(&[("call_r", "read", &read)], None));
    server.push(openai::tool_calls(&[("call_e", "edit", &edit)], None));
    server.push(openai::text("done", None));
    let id = c.send("session/prompt", prompt(&sid, "go")).await;
    let r = c.wait(id, &|_| "allow_once").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(tool_result(&server, "call_r").contains("alpha on disk"));
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("a.txt")).unwrap(),
        "beta on disk\n"
    );
    let methods: Vec<&str> = c.client_calls.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, ["fs/read_text_file", "fs/read_text_file"]);
}

/// A client that offers no file system: the disk, as before, and no `fs/*` request.
#[tokio::test]
async fn a_client_without_fs_gets_the_disk() {
    let server = MockServer::start().await;
    let env = env(&server);
    std::fs::write(env.workspace.path().join("a.txt"), "alpha on disk\n").unwrap();
    let mut c = Client::start(&env);
    c.initialize().await;
    c.buffers
        .insert(abs(&env, "a.txt"), "never asked for\n".to_string());
    let sid = c.new_session(&env).await;
    let read = json!({"file_path": "a.txt"}).to_string();
    let write = json!({"file_path": "a.txt", "content": "written\n"}).to_string();
    server.push(openai::tool_calls(&[("call_r", "read", &read)], None));
    server.push(openai::tool_calls(&[("call_w", "write", &write)], None));
    server.push(openai::text("done", None));
    let id = c.send("session/prompt", prompt(&sid, "go")).await;
    let r = c.wait(id, &|_| "allow_once").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(tool_result(&server, "call_r").contains("alpha on disk"));
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("a.txt")).unwrap(),
        "written\n"
    );
    assert!(c.client_calls.is_empty(), "{:?}", c.client_calls);
}

/// A client that offers terminals still never runs pith's commands: a client terminal would
/// run them outside pith's sandbox, which wraps the command in pith's own process. bash runs
/// in pith, in the sandbox (a write outside the workspace is stopped where the sandbox is
/// supported), and its output reaches the client in the tool call as before.
#[tokio::test]
async fn bash_never_runs_in_the_client_terminal_and_stays_in_the_sandbox() {
    let server = MockServer::start().await;
    let env = PithEnv::new(
        &server.url(),
        128_000,
        8_000,
        "sandbox = \"workspace-write\"",
    );
    let mut c = Client::start(&env);
    c.initialize_with(
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true}),
    )
    .await;
    let sid = c.new_session(&env).await;
    let sandboxed = super::security_sandbox::sandbox_supported();
    let outside = sandboxed
        .then(super::security_sandbox::outside_dir)
        .flatten();
    let escape = outside
        .as_ref()
        .map(|d| format!(" && touch {}", d.path().join("escaped").display()))
        .unwrap_or_default();
    let args = json!({"command": format!("echo in-pith > t.txt && cat t.txt{escape}")}).to_string();
    server.push(openai::tool_calls(&[("call_b", "bash", &args)], None));
    server.push(openai::text("ran", None));
    let id = c.send("session/prompt", prompt(&sid, "run it")).await;
    let r = c.wait(id, &|_| "allow_once").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert!(c.client_calls.is_empty(), "{:?}", c.client_calls);
    // pith ran it: the file is on disk, the output in the tool call's content
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("t.txt")).unwrap(),
        "in-pith\n"
    );
    let done = c
        .take("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == "call_b")
        .unwrap();
    assert!(done["content"].to_string().contains("in-pith"), "{done}");
    if let Some(outside) = outside {
        assert!(!outside.path().join("escaped").exists());
        let result = tool_result(&server, "call_b");
        assert!(result.contains("[sandbox]"), "{result}");
    }
}

/// `/context` and `/model` in an editor end on the engine's event that names their submission:
/// the breakdown, the switch, or the switch refused; nothing goes to the model.
#[tokio::test]
async fn slash_answers_end_on_the_event_naming_their_submission() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    let mut ask = async |text: &str| {
        let r = c.call("session/prompt", prompt(&sid, text)).await;
        assert_eq!(r["stopReason"], "end_turn", "{text}: {r}");
        chunks_text(&c.take("agent_message_chunk"))
    };
    let context = ask("/context").await;
    assert!(context.contains("of 128,000 tokens in use"), "{context}");
    let switched = ask("/model mock/other-model").await;
    assert!(
        switched.contains("Now using mock/other-model."),
        "{switched}"
    );
    let refused = ask("/model nowhere/model").await;
    assert!(
        refused.contains("Error:") && refused.contains("nowhere/model"),
        "{refused}"
    );
    // the switched-to model's window may be asked of the server; no prompt went to a model
    let chats = server.requests();
    let chats: Vec<_> = chats
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    assert!(chats.is_empty(), "{chats:?}");
}

/// Issue 38: a plan is put to the editor with the plan's choices (no "always allow"); "Yes,
/// and auto-accept edits" leaves plan mode for accept-edits.
#[tokio::test]
async fn a_plan_is_accepted_through_the_plan_choices() {
    let server = MockServer::start().await;
    let env = env(&server);
    let mut c = Client::start(&env);
    c.initialize().await;
    let sid = c.new_session(&env).await;
    c.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "plan"}),
    )
    .await;
    let args = json!({"plan": "1. Write a.txt"}).to_string();
    server.push(openai::tool_calls(
        &[("call_plan", "exit_plan_mode", &args)],
        None,
    ));
    server.push(openai::text("Carrying it out.", None));
    let id = c.send("session/prompt", prompt(&sid, "plan it")).await;
    let r = c.wait(id, &|_| "allow_always").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(c.asked.len(), 1);
    let names: Vec<&str> = c.asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Yes, and auto-accept edits",
            "Yes, and ask for edits",
            "No, keep planning"
        ]
    );
    let modes: Vec<Value> = c
        .updates
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "current_mode_update")
        .map(|u| u["update"]["currentModeId"].clone())
        .collect();
    assert_eq!(
        modes.last().and_then(Value::as_str),
        Some("accept-edits"),
        "{modes:?}"
    );
    assert!(tool_result(&server, "call_plan").contains("accepted the plan"));
}
