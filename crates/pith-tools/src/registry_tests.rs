use serde_json::json;

use super::*;
use crate::ToolMeta;
use crate::testutil::Ws;

#[test]
fn specs_are_stable_and_complete() {
    let reg = Registry::builtin();
    let specs = reg.specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bash",
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "list",
            "todowrite",
            "recall",
            "webfetch",
            "job_output",
            "job_kill"
        ]
    );
    for s in &specs {
        assert!(
            s.description.len() > 50,
            "{} has a thin description",
            s.name
        );
        assert_eq!(s.parameters["type"], "object", "{}", s.name);
        assert!(s.parameters["properties"].is_object(), "{}", s.name);
        // Every required field is a declared property.
        for r in s.parameters["required"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            assert!(
                s.parameters["properties"]
                    .get(r.as_str().unwrap())
                    .is_some(),
                "{}: {r}",
                s.name
            );
        }
    }
    assert!(reg.get("bash").is_some());
    assert!(reg.get("nope").is_none());
}

/// Every tool pith offers by itself is one of the built-ins front ends match by name: a new one
/// must be added to `Builtin` (and so to every front end's match) before it can be offered.
#[test]
fn every_offered_tool_is_a_builtin() {
    use pith_protocol::tool::{Builtin, ToolName};
    // off by default: only a config naming a search backend offers `websearch`
    assert!(!Registry::builtin().names().contains(&"websearch"));
    let mut config = pith_config::Config::default();
    config.websearch.backend = Some(pith_config::SearchBackend::Searxng);
    config.websearch.url = Some("http://127.0.0.1:8888".into());
    let mut offered: Vec<String> = Registry::configured(&config)
        .names()
        .into_iter()
        .map(String::from)
        .collect();
    assert!(offered.iter().any(|n| n == "websearch"), "{offered:?}");
    offered.push(crate::task::NAME.into());
    offered.push(crate::mode::EXIT_PLAN_TOOL.into());
    offered.push(crate::remember::NAME.into());
    for name in &offered {
        let parsed = ToolName::parse(name);
        assert!(matches!(parsed, ToolName::Builtin(_)), "{name}");
        assert_eq!(parsed.to_string(), *name);
    }
    offered.push(
        crate::skill::SkillTool::new(Default::default())
            .name()
            .into(),
    );
    // and every built-in but the MCP loader (pith-mcp's) is offered from here (`skill` by the
    // engine, when there are skills)
    let missing: Vec<_> = Builtin::ALL
        .iter()
        .filter(|b| !offered.iter().any(|n| n == b.as_str()))
        .collect();
    assert_eq!(missing, [&Builtin::ToolSearch]);
}

#[tokio::test]
async fn unknown_tool_is_a_clear_error() {
    let ws = Ws::new();
    let err = Registry::builtin()
        .execute("nope", json!({}), &ws.ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::UnknownTool { name, .. } if name == "nope"),
        "{err:?}"
    );
    let err = err.to_string();
    assert!(
        err.starts_with("Unknown tool `nope`. Available tools: bash, read, write, edit, glob, grep, list, todowrite, recall, webfetch, job_output, job_kill."),
        "{err}"
    );
}

#[tokio::test]
async fn huge_output_is_truncated_and_saved() {
    let ws = Ws::new();
    let reg = Registry::builtin();
    let out = reg
        .execute("bash", json!({"command": "seq 1 100000"}), &ws.ctx)
        .await
        .unwrap();
    assert!(
        out.output.len() <= ws.ctx.output.max_bytes + 1000,
        "{}",
        out.output.len()
    );
    let path = out.meta.full_output.clone().unwrap();
    let stored = out.stored_metadata();
    assert_eq!(stored["truncated"], true);
    assert_eq!(stored["output_path"], path.to_string_lossy().as_ref());
    let path = path.to_string_lossy().into_owned();
    assert!(path.starts_with(&ws.ctx.data_dir.join("tool-output").display().to_string()));
    assert!(
        out.output.contains(&path)
            && out.output.contains("grep")
            && out.output.contains("offset/limit")
    );
    let full = std::fs::read_to_string(&path).unwrap();
    assert!(
        full.starts_with("1\n2\n")
            && full.contains("\n100000\n")
            && full.trim_end().ends_with("Exit code: 0")
    );
    // The preview keeps the tail, so the exit code is still visible.
    assert!(out.output.contains("Exit code: 0"));

    // The saved file can be read back with offset/limit.
    let page = reg
        .execute(
            "read",
            json!({"file_path": path, "offset": 99999, "limit": 2}),
            &ws.ctx,
        )
        .await
        .unwrap();
    assert!(
        page.output.starts_with(" 99999\t99999\n100000\t100000\n"),
        "{}",
        page.output
    );
}

#[tokio::test]
async fn small_output_untouched() {
    let ws = Ws::new();
    let out = Registry::builtin()
        .execute("bash", json!({"command": "echo hi"}), &ws.ctx)
        .await
        .unwrap();
    assert_eq!(out.output, "hi\n\nExit code: 0");
    assert!(out.meta.full_output.is_none());
    assert!(!ws.ctx.data_dir.join("tool-output").exists());
}

#[tokio::test]
async fn reads_stay_within_the_limits() {
    let mut ws = Ws::new();
    ws.ctx.output.max_lines = 100;
    let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    ws.write("long.txt", &text);
    let out = Registry::builtin()
        .execute("read", json!({"file_path": "long.txt"}), &ws.ctx)
        .await
        .unwrap();
    assert!(out.meta.full_output.is_none(), "{}", out.output);
    assert!(
        out.output.contains("   100\t100\n") && !out.output.contains("   101\t101"),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("Showing lines 1-100 of 2500 (output size limit reached). Use offset=101")
    );
    assert!(!ws.ctx.data_dir.join("tool-output").exists());
    // Default limits: 2000 lines of a longer file are not cut by the registry either.
    ws.ctx.output = Default::default();
    let out = Registry::builtin()
        .execute("read", json!({"file_path": "long.txt"}), &ws.ctx)
        .await
        .unwrap();
    assert!(out.meta.full_output.is_none());
    assert_eq!(out.metadata["partial"], true);
}

/// A tool that runs until its context is cancelled (a read of something that never ends).
struct Endless(std::sync::Arc<std::sync::atomic::AtomicBool>);

#[async_trait::async_trait]
impl Tool for Endless {
    fn name(&self) -> &'static str {
        "endless"
    }
    fn description(&self) -> &'static str {
        "never finishes on its own"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_millis(50))
    }
    async fn run(&self, _input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        let stopped = self.0.clone();
        tokio::task::spawn_blocking(move || {
            while !ctx.cancel.is_cancelled() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            stopped.store(true, std::sync::atomic::Ordering::SeqCst);
        })
        .await
        .ok();
        Ok(ToolOutput {
            title: String::new(),
            output: "done".into(),
            metadata: json!({}),
            meta: ToolMeta::default(),
        })
    }
}

#[tokio::test]
async fn a_file_tool_over_its_time_limit_is_stopped() {
    let ws = Ws::new();
    let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reg = Registry::with_tools(vec![std::sync::Arc::new(Endless(stopped.clone()))]);
    let err = reg
        .execute("endless", json!({}), &ws.ctx)
        .await
        .unwrap_err();
    assert!(matches!(&err, ToolError::TimedOut { tool, .. } if tool == "endless"));
    let err = err.to_string();
    assert!(
        err.starts_with("endless did not finish within 0 s"),
        "{err}"
    );
    // Its work was told to stop, not left running; the session's token is untouched.
    for _ in 0..2000 {
        if stopped.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(stopped.load(std::sync::atomic::Ordering::SeqCst));
    assert!(!ws.ctx.cancel.is_cancelled());
}

#[test]
fn compact_specs_keep_names_types_and_required_fields_in_a_third_of_the_text() {
    let reg = Registry::builtin();
    let full = reg.specs();
    let short = reg.compact_specs();
    assert_eq!(full.len(), short.len());
    let size = |v: &[ToolSpec]| -> usize {
        v.iter()
            .map(|s| s.description.len() + s.parameters.to_string().len())
            .sum()
    };
    assert!(
        size(&short) * 3 < size(&full),
        "{} vs {}",
        size(&short),
        size(&full)
    );
    for (f, s) in full.iter().zip(&short) {
        assert_eq!(f.name, s.name);
        assert!(f.description.starts_with(&s.description), "{}", s.name);
        assert!(!s.description.is_empty() && !s.description.contains("\n\n"));
        assert_eq!(
            f.parameters["required"], s.parameters["required"],
            "{}",
            s.name
        );
        let keys = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(keys(&f.parameters), keys(&s.parameters), "{}", s.name);
        // Property descriptions go; a property *named* description (bash has one) stays.
        for (name, p) in s.parameters["properties"].as_object().into_iter().flatten() {
            assert!(p.get("description").is_none(), "{}.{name}", s.name);
        }
    }
}
