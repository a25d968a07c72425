//! What the sandbox costs one command: the `bash` tool running `true`, with the sandbox off
//! (only the reaper: a session of its own, a fork, the sweep) and in `workspace-write` (plus the
//! plan, user/mount/PID/network namespaces with their mounts, Landlock, seccomp and the guard of
//! the protected files). The workspace is a git repository, as it usually is.
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a bench may panic on what it did not expect

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

use pith_config::{SandboxMode, ToolOutputConfig};
use pith_tools::bash::Bash;
use pith_tools::sandbox::CommandPolicy;
use pith_tools::{SessionToolState, Tool, ToolContext};

fn ctx(root: &std::path::Path) -> ToolContext {
    let workspace = root.join("ws");
    std::fs::create_dir_all(workspace.join(".git/hooks")).unwrap();
    std::fs::write(workspace.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(workspace.join("AGENTS.md"), "rules\n").unwrap();
    let data_dir = root.join("data");
    std::fs::create_dir_all(data_dir.join("tool-output")).unwrap();
    ToolContext {
        policy: Arc::new(pith_tools::policy::Policy::new(&workspace, &data_dir)),
        workspace,
        data_dir,
        session_id: "ses_bench".into(),
        call_id: "call_bench".into(),
        cancel: tokio_util::sync::CancellationToken::new(),
        state: Arc::new(SessionToolState::default()),
        output: ToolOutputConfig::default(),
        outputs: None,
        progress: None,
        editor: None,
        read_only_commands: false,
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ctx = ctx(&root);
    println!("sandbox support: {:?}", pith_tools::sandbox::support());
    let mut group = c.benchmark_group("bash_true");
    group.measurement_time(Duration::from_secs(10));
    for (name, mode) in [
        ("sandbox_off", SandboxMode::Off),
        ("workspace_write", SandboxMode::WorkspaceWrite),
    ] {
        let bash = Bash::new(CommandPolicy {
            mode,
            ..CommandPolicy::default()
        });
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(bash.run(json!({"command": "true"}), &ctx))
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
