//! Background jobs through the bash tool: started in the same sandbox, returned at once with
//! their first output, read only anew, capped, stopped with their whole tree, ended with the
//! session.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;
use crate::bash::Bash;
use crate::sandbox::CommandPolicy;
use crate::testutil::{Ws, running, wait_for};
use crate::{Tool, ToolError, ToolOutput};
use pith_config::SandboxMode;
use pith_protocol::event::JobState;

fn bash(mode: SandboxMode) -> Bash {
    Bash::new(CommandPolicy {
        mode,
        ..CommandPolicy::default()
    })
    .with_background(true)
}

fn ws_with(max: usize) -> Ws {
    let mut ws = Ws::new();
    let state = crate::SessionToolState::with_jobs(Arc::new(Jobs::new(max)));
    ws.ctx.state = Arc::new(state);
    ws
}

fn marker() -> String {
    format!("pith-job-{}", pith_protocol::message::new_id())
}

/// A job that prints `ready`, then a numbered line every 100 ms, under a process named `m`
/// (a grandchild in its own session, as a dev server's workers are).
fn ticker(m: &str) -> String {
    format!(
        "setsid bash -c 'exec -a {m} sleep 1000' & echo ready; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.1; done"
    )
}

async fn start(b: &Bash, ws: &Ws, command: &str) -> Result<ToolOutput, ToolError> {
    b.run(json!({"command": command, "background": true}), &ws.ctx)
        .await
}

async fn job_output(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
    tools::JobOutput.run(input, &ws.ctx).await
}

#[tokio::test]
async fn a_job_returns_at_once_keeps_running_and_reads_only_what_is_new() {
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::Off] {
        let ws = ws_with(8);
        let m = marker();
        let b = bash(mode);
        let t = Instant::now();
        let out = start(&b, &ws, &ticker(&m)).await.unwrap();
        assert!(t.elapsed() < start::SETTLE_MAX + Duration::from_secs(1));
        assert!(
            out.output.contains("Background job 1 started"),
            "{}",
            out.output
        );
        assert!(out.output.contains("ready"), "{}", out.output);
        assert_eq!(out.metadata["job"], 1);
        assert!(wait_for(|| !running(&m).is_empty()).await, "{mode:?}");
        // the first output was read with the call: the next read starts after it
        tokio::time::sleep(Duration::from_millis(400)).await;
        let first = job_output(&ws, json!({"id": 1})).await.unwrap();
        assert!(!first.output.contains("ready"), "{}", first.output);
        assert!(first.output.contains("tick"), "{}", first.output);
        assert!(
            first.output.contains("[job 1 running for"),
            "{}",
            first.output
        );
        let last_tick = |s: &str| {
            s.lines()
                .filter_map(|l| l.strip_prefix("tick ")?.parse::<u32>().ok())
                .max()
        };
        let before = last_tick(&first.output).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let second = job_output(&ws, json!({"id": 1})).await.unwrap();
        let lines: Vec<u32> = second
            .output
            .lines()
            .filter_map(|l| l.strip_prefix("tick ")?.parse().ok())
            .collect();
        assert!(
            !lines.is_empty() && lines[0] == before + 1,
            "{before} then {lines:?}"
        );
        let list = ws.ctx.state.jobs.list();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].state, JobState::Running);
        assert!(list[0].last_line.starts_with("tick"), "{:?}", list[0]);
        // stopped: the whole tree, the process in its own session included
        let killed = tools::JobKill.run(json!({"id": 1}), &ws.ctx).await.unwrap();
        assert!(
            killed.output.starts_with("Stopped job 1"),
            "{}",
            killed.output
        );
        assert!(
            wait_for(|| running(&m).is_empty()).await,
            "{mode:?}: {:?} survived",
            running(&m)
        );
        assert_eq!(ws.ctx.state.jobs.list()[0].state, JobState::Killed);
        let after = job_output(&ws, json!({"id": 1})).await.unwrap();
        assert!(after.output.contains("[job 1 ended"), "{}", after.output);
    }
}

#[tokio::test]
async fn over_the_cap_the_model_is_told_which_jobs_run() {
    let ws = ws_with(1);
    let (m1, m2) = (marker(), marker());
    let b = bash(SandboxMode::Off);
    start(&b, &ws, &format!("exec -a {m1} sleep 1000"))
        .await
        .unwrap();
    let refused = start(&b, &ws, &format!("exec -a {m2} sleep 1000"))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("[jobs] max = 1"), "{refused}");
    assert!(refused.contains(&format!("1 `exec -a {m1}")), "{refused}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        running(&m2).is_empty(),
        "nothing of the refused one started"
    );
    // once one ends, there is room again
    assert!(ws.ctx.state.jobs.kill(1).await.unwrap());
    start(&b, &ws, &format!("exec -a {m2} sleep 1000"))
        .await
        .unwrap();
    assert!(wait_for(|| !running(&m2).is_empty()).await);
    let stopped = ws.ctx.state.jobs.end_all().await;
    assert_eq!(stopped.len(), 1);
    assert!(running(&m1).is_empty() && running(&m2).is_empty());
}

#[tokio::test]
async fn the_session_ending_ends_every_job() {
    let ws = ws_with(8);
    let b = bash(SandboxMode::WorkspaceWrite);
    let ms = [marker(), marker()];
    for m in &ms {
        start(&b, &ws, &ticker(m)).await.unwrap();
    }
    assert!(wait_for(|| ms.iter().all(|m| !running(m).is_empty())).await);
    let ended = ws.ctx.state.jobs.end_all().await;
    assert_eq!(ended.len(), 2);
    assert!(
        ms.iter().all(|m| running(m).is_empty()),
        "ended with the session"
    );
    assert_eq!(
        ended_line(&ended[..1]).unwrap(),
        format!(
            "ended 1 background job: {}",
            pith_protocol::text::one_line_max(&ended[0], 60)
        )
    );
    // a table dropped (an engine gone without ending) stops its jobs too
    let ws = ws_with(8);
    let m = marker();
    start(&b, &ws, &ticker(&m)).await.unwrap();
    drop(ws);
    assert!(
        wait_for(|| running(&m).is_empty()).await,
        "{:?}",
        running(&m)
    );
}

#[tokio::test]
async fn a_command_that_ends_at_once_is_reported_like_a_foreground_one() {
    let ws = ws_with(8);
    let out = start(&bash(SandboxMode::Off), &ws, "echo hi; exit 3")
        .await
        .unwrap();
    assert!(out.output.starts_with("hi\n"), "{}", out.output);
    assert!(out.output.contains("Exit code: 3"), "{}", out.output);
    assert_eq!(out.metadata["exit_code"], 3);
    assert!(out.metadata.get("job").is_none());
    assert_eq!(ws.ctx.state.jobs.running(), 0);
}

#[tokio::test]
async fn waiting_for_a_job_returns_when_it_ends() {
    let ws = ws_with(8);
    start(&bash(SandboxMode::Off), &ws, "sleep 2; echo done")
        .await
        .unwrap();
    let t = Instant::now();
    let out = job_output(&ws, json!({"id": 1, "wait_secs": 30}))
        .await
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(out.output.starts_with("done"), "{}", out.output);
    assert!(out.output.contains("Exit code: 0"), "{}", out.output);
    let none = job_output(&ws, json!({"id": 7}))
        .await
        .unwrap_err()
        .to_string();
    assert!(none.contains("no background job 7"), "{none}");
}

#[tokio::test]
async fn a_flood_of_output_stays_bounded() {
    let ws = ws_with(8);
    let cmd = "sleep 2; head -c 20000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo; echo end; sleep 100";
    start(&bash(SandboxMode::Off), &ws, cmd).await.unwrap();
    let entry = ws.ctx.state.jobs.get(1).unwrap();
    assert!(
        wait_for(|| entry.info().last_line == "end").await,
        "{:?}",
        entry.info()
    );
    let log_size = std::fs::metadata(entry.log_path()).unwrap().len();
    assert!(log_size <= log::MAX_FILE, "{log_size}");
    let out = job_output(&ws, json!({"id": 1})).await.unwrap();
    assert!(
        out.output.len() as u64 <= log::MAX_READ + 1024,
        "{}",
        out.output.len()
    );
    assert!(out.output.contains("earlier bytes of new output skipped"));
    assert!(out.output.contains("end\n"), "the newest output is read");
    ws.ctx.state.jobs.end_all().await;
}

#[tokio::test]
async fn background_is_refused_when_jobs_are_off() {
    let ws = ws_with(8);
    let off = Bash::new(CommandPolicy::default());
    let e = start(&off, &ws, "true").await.unwrap_err().to_string();
    assert!(e.contains("background jobs are off"), "{e}");
    assert!(off.parameters()["properties"].get("background").is_none());
    assert!(bash(SandboxMode::Off).parameters()["properties"]["background"].is_object());
    assert!(bash(SandboxMode::Off).describe().contains("job_output"));
}

/// A job is watched by the sandbox guard for its whole run, not only at its end: a protected
/// name it plants while it runs is moved away at the next read of its output, and the model is
/// told; one planted after that is caught when the job ends.
#[tokio::test]
async fn what_a_running_job_plants_is_moved_away_while_it_runs() {
    let ws = ws_with(8);
    let b = bash(SandboxMode::WorkspaceWrite);
    let cmd = "sleep 0.3; echo '[mcp.x]' > pith.toml; echo planted; while [ ! -e go ]; do sleep 0.1; done; mkdir .pith; echo again; sleep 100";
    start(&b, &ws, cmd).await.unwrap();
    let entry = ws.ctx.state.jobs.get(1).unwrap();
    assert!(wait_for(|| entry.info().last_line == "planted").await);
    let out = job_output(&ws, json!({"id": 1})).await.unwrap();
    assert!(
        out.output
            .contains("[sandbox] The command created pith.toml"),
        "{}",
        out.output
    );
    assert!(
        !ws.path("pith.toml").exists(),
        "moved away while the job runs"
    );
    // the record was taken again: what comes next is caught too, at the job's end at the latest
    std::fs::write(ws.path("go"), "").unwrap();
    assert!(wait_for(|| entry.info().last_line == "again").await);
    assert!(ws.ctx.state.jobs.kill(1).await.unwrap());
    let out = job_output(&ws, json!({"id": 1})).await.unwrap();
    assert!(
        out.output.contains("[sandbox] The command created .pith"),
        "{}",
        out.output
    );
    assert!(!ws.path(".pith").exists());
}

/// An editor (ACP) acts by path; a running job could flip a folder to a link under it, so
/// while a job runs the file tools write to the disk (race-free opens) instead, and through
/// the editor again once the job is gone.
#[tokio::test]
async fn while_a_job_runs_editor_writes_go_to_the_disk() {
    use crate::editor::testing::Buffers;
    let mut ws = ws_with(8);
    let editor = Arc::new(Buffers::with(true, true));
    ws.ctx.editor = Some(editor.clone());
    start(&bash(SandboxMode::Off), &ws, "sleep 100")
        .await
        .unwrap();
    let write = |text: &str| json!({"file_path": "a.txt", "content": text});
    crate::write::Write
        .run(write("during\n"), &ws.ctx)
        .await
        .unwrap();
    assert!(
        editor.written().is_empty(),
        "not through the editor while a job runs"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path("a.txt")).unwrap(),
        "during\n"
    );
    assert!(ws.ctx.state.jobs.kill(1).await.unwrap());
    crate::write::Write
        .run(write("after\n"), &ws.ctx)
        .await
        .unwrap();
    assert_eq!(
        editor.written(),
        [(ws.path("a.txt"), "after\n".to_string())]
    );
}
