//! `list`: a directory tree, gitignore-aware, shallowest entries first under a cap.

use std::collections::BTreeMap;
use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::glob::{search_root, walker};
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::CountMetadata;

/// Entries shown at most.
pub const LIMIT: usize = 200;
/// Entries collected before giving up on counting.
const SCAN_LIMIT: usize = 50_000;
/// Folders never descended into.
pub(crate) const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    ".next",
    ".gradle",
    ".idea",
    ".DS_Store",
];

pub struct List;

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    ignore: Vec<String>,
}

#[async_trait::async_trait]
impl Tool for List {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::List.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/list.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the workspace root)"},
                "ignore": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns to leave out"}
            },
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("list", input)?;
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || list_sync(input, &ctx))
            .await
            .map_err(|e| tool_err!("list: internal error: {e}"))?
    }
}

#[derive(Default)]
struct Node {
    dirs: BTreeMap<String, Node>,
    files: Vec<String>,
}

fn list_sync(input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let opened = search_root(ctx, input.path.as_deref(), false)?;
    let (root, shown_root) = (opened.walk.clone(), opened.shown.clone());
    let mut b = GlobSetBuilder::new();
    for pat in &input.ignore {
        let pat = pat.trim().trim_end_matches('/');
        if pat.is_empty() {
            continue;
        }
        b.add(Glob::new(pat).map_err(|e| tool_err!("list: invalid ignore pattern `{pat}`: {e}"))?);
    }
    let ignore: GlobSet = b
        .build()
        .map_err(|e| tool_err!("list: invalid ignore patterns: {e}"))?;

    // (depth, relative path components, is_dir)
    let mut entries: Vec<(usize, Vec<String>, bool)> = Vec::new();
    let mut scan_capped = false;
    let root2 = root.clone();
    let mut wb = walker(&opened, ctx);
    let skip = opened.skip(ctx);
    wb.filter_entry(move |e| {
        let name = e.file_name().to_string_lossy();
        if e.depth() > 0 && SKIP_DIRS.contains(&name.as_ref()) || skip.skips(e.path()) {
            return false;
        }
        let rel = e.path().strip_prefix(&root2).unwrap_or(e.path());
        !(ignore.is_match(e.file_name()) || ignore.is_match(rel))
    });
    for entry in wb.build().flatten() {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Stopped {
                tool: "list".into(),
            });
        }
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() >= SCAN_LIMIT {
            scan_capped = true;
            break;
        }
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let comps: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        entries.push((entry.depth(), comps, is_dir));
    }
    let total = entries.len();
    entries.sort();
    entries.truncate(LIMIT);

    let mut tree = Node::default();
    for (_, comps, is_dir) in &entries {
        insert(&mut tree, comps, *is_dir);
    }
    let mut out = format!("{}/\n", root_label(&opened.real, &shown_root));
    render(&tree, 1, &mut out);
    if total > LIMIT {
        let more = if scan_capped {
            format!("more than {}", total - LIMIT)
        } else {
            (total - LIMIT).to_string()
        };
        out.push_str(&format!(
            "\n({more} more entries are not shown. List a subdirectory, or use glob, to see them.)\n"
        ));
    } else if total == 0 {
        out.push_str("  (empty)\n");
    }
    Ok(ToolOutput {
        title: shown_root,
        output: out,
        metadata: CountMetadata::of(total, LIMIT).into(),
        meta: ToolMeta::default(),
    })
}

fn root_label(root: &Path, shown: &str) -> String {
    if shown == "." {
        root.display().to_string()
    } else {
        shown.to_string()
    }
}

fn insert(node: &mut Node, comps: &[String], is_dir: bool) {
    match comps {
        [] => {}
        [last] => {
            if is_dir {
                node.dirs.entry(last.clone()).or_default();
            } else {
                node.files.push(last.clone());
            }
        }
        [first, rest @ ..] => insert(node.dirs.entry(first.clone()).or_default(), rest, is_dir),
    }
}

fn render(node: &Node, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    for (name, child) in &node.dirs {
        out.push_str(&format!("{indent}{name}/\n"));
        render(child, depth + 1, out);
    }
    let mut files = node.files.clone();
    files.sort();
    for f in files {
        out.push_str(&format!("{indent}{f}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Ws;

    async fn list(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
        List.run(input, &ws.ctx).await
    }

    #[tokio::test]
    async fn tree_skips_ignored_and_bulky_dirs() {
        let ws = Ws::new();
        ws.write("src/main.rs", "");
        ws.write("src/tools/bash.rs", "");
        ws.write("README.md", "");
        ws.write(".gitignore", "*.log\n");
        ws.write("debug.log", "");
        ws.write("target/debug/x", "");
        ws.write("node_modules/a/index.js", "");
        ws.write(".git/HEAD", "");
        ws.write("docs/a.lock", "");
        let out = list(&ws, json!({"path": ".", "ignore": ["*.lock"]}))
            .await
            .unwrap();
        let expected = format!(
            "{}/\n  docs/\n  src/\n    tools/\n      bash.rs\n    main.rs\n  .gitignore\n  README.md\n",
            ws.ctx.workspace.display()
        );
        assert_eq!(out.output, expected);
        let out = list(&ws, json!({"path": "src"})).await.unwrap();
        assert_eq!(out.output, "src/\n  tools/\n    bash.rs\n  main.rs\n");
    }

    #[tokio::test]
    async fn capped_shallowest_first() {
        let ws = Ws::new();
        for i in 0..150 {
            ws.write(&format!("deep/nested/{i:03}.txt"), "");
        }
        for i in 0..100 {
            ws.write(&format!("top{i:03}.txt"), "");
        }
        let out = list(&ws, json!({})).await.unwrap();
        // Every top-level entry is shown before deeper ones.
        assert!(
            out.output.contains("  top099.txt\n") && out.output.contains("  deep/\n    nested/\n")
        );
        assert!(
            out.output.contains("52 more entries are not shown"),
            "{}",
            out.output
        );
        assert_eq!(out.metadata["count"], 252);
    }

    #[tokio::test]
    async fn errors() {
        let ws = Ws::new();
        assert!(
            list(&ws, json!({"path": "nope"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("Directory not found")
        );
        assert!(
            list(&ws, json!({"ignore": ["a[b"]}))
                .await
                .unwrap_err()
                .to_string()
                .contains("invalid ignore")
        );
        let out = list(&ws, Value::Null).await.unwrap();
        assert!(out.output.ends_with("(empty)\n"));
    }
}
