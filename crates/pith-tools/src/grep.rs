//! `grep`: regex search over file contents, gitignore-aware, newest files first.

use std::path::PathBuf;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Deserialize;
use serde_json::{Value, json};

use super::glob::{NameGlob, SearchRoot, search_root, walker};
use super::path::{display_path, mtime_ms};
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::text::one_line;
use pith_protocol::tool::GrepMetadata;

/// Matching lines returned at most.
pub const LIMIT: usize = 100;
/// Characters of a matching line shown.
const MAX_LINE_CHARS: usize = 500;

pub struct Grep;

#[derive(Deserialize)]
struct Input {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    include: Option<String>,
    #[serde(default, alias = "-i")]
    ignore_case: Option<bool>,
}

#[async_trait::async_trait]
impl Tool for Grep {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Grep.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/grep.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for"},
                "path": {"type": "string", "description": "File or directory to search (default: the workspace root)"},
                "include": {"type": "string", "description": "Only search files whose name matches this glob, e.g. *.rs"},
                "ignore_case": {"type": "boolean", "description": "Case-insensitive search (default false)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("grep", input)?;
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || grep_sync(input, &ctx))
            .await
            .map_err(|e| tool_err!("grep: internal error: {e}"))?
    }
}

fn grep_sync(input: Input, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if input.pattern.is_empty() {
        return Err(ToolError::Failed("grep: `pattern` is empty".into()));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(input.ignore_case.unwrap_or(false))
        .build(&input.pattern)
        .map_err(|e| {
            tool_err!(
                "grep: invalid regular expression `{}`: {}",
                input.pattern,
                one_line(&e.to_string())
            )
        })?;
    let include = match input
        .include
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(g) => Some(NameGlob::new(g).map_err(|e| tool_err!("grep: `include`: {e}"))?),
        None => None,
    };
    let root = search_root(ctx, input.path.as_deref(), true)?;
    let shown_root = root.shown.clone();
    let (files, protected) = files_to_search(&root, include.as_ref(), ctx)?;
    let Found {
        mut out,
        total,
        files_matched,
    } = search(&matcher, &files, &root, ctx)?;
    let title = format!("{} in {shown_root}", input.pattern);
    let skipped = match protected {
        0 => String::new(),
        n => format!(
            "\n({n} .env file{} not searched: they may hold secrets. Use the read tool, which asks the user, if one matters.)\n",
            if n == 1 { " was" } else { "s were" }
        ),
    };
    if total == 0 {
        return Ok(ToolOutput {
            title,
            output: format!(
                "No matches for `{}` in {shown_root}.{skipped}",
                input.pattern
            ),
            metadata: GrepMetadata {
                matches: 0,
                files: 0,
                capped: false,
                protected,
            }
            .into(),
            meta: ToolMeta::default(),
        });
    }
    out.push_str(&skipped);
    if total > LIMIT {
        out.push_str(&format!(
            "\n({} more matching lines are not shown: {total} in {files_matched} files in total. \
             Narrow the pattern, path or include to see them.)\n",
            total - LIMIT
        ));
    }
    Ok(ToolOutput {
        title,
        output: out,
        metadata: GrepMetadata {
            matches: total,
            files: files_matched,
            capped: total > LIMIT,
            protected,
        }
        .into(),
        meta: ToolMeta::default(),
    })
}

/// The files to search under `root` (or `root` itself), as the walk reaches them, newest first
/// so the cap keeps the most recently touched code; and how many `.env`-style files were left
/// out.
fn files_to_search(
    root: &SearchRoot,
    include: Option<&NameGlob>,
    ctx: &ToolContext,
) -> Result<(Vec<(i64, PathBuf)>, usize), ToolError> {
    let mut files: Vec<(i64, PathBuf)> = Vec::new();
    // `.env`-style files are read with `read`, which asks first; a search does not print them.
    let mut protected = 0usize;
    if root.is_file {
        files.push((0, root.walk.clone()));
    } else {
        for entry in walker(root, ctx).build().flatten() {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Stopped {
                    tool: "grep".into(),
                });
            }
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if super::permission::is_env_file(entry.path()) {
                protected += 1;
                continue;
            }
            if include.is_some_and(|g| !g.matches(&root.real_of(entry.path()), &root.real)) {
                continue;
            }
            let mtime = entry.metadata().map(|m| mtime_ms(&m)).unwrap_or(0);
            files.push((mtime, entry.into_path()));
        }
    }
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok((files, protected))
}

/// What a search found: the first [`LIMIT`] matching lines, and how many in all.
struct Found {
    out: String,
    total: usize,
    files_matched: usize,
}

/// Searches `files` in order; a file that cannot be searched is skipped.
fn search(
    matcher: &grep_regex::RegexMatcher,
    files: &[(i64, PathBuf)],
    root: &SearchRoot,
    ctx: &ToolContext,
) -> Result<Found, ToolError> {
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut out = String::new();
    let mut shown = 0usize;
    let mut total = 0usize;
    let mut files_matched = 0usize;
    for (_, path) in files {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Stopped {
                tool: "grep".into(),
            });
        }
        let display = display_path(&root.real_of(path), &ctx.workspace);
        let before = total;
        let result = searcher.search_path(
            matcher,
            path,
            Lossy(|lnum, line| {
                total += 1;
                if shown < LIMIT {
                    shown += 1;
                    let text = line.trim_end_matches(['\n', '\r']);
                    out.push_str(&format!("{display}:{lnum}: {}\n", cut(text)));
                }
                Ok(true)
            }),
        );
        if let Err(e) = result {
            tracing::debug!(path = %path.display(), error = %e, "grep: skipped a file");
        }
        if total > before {
            files_matched += 1;
        }
    }
    Ok(Found {
        out,
        total,
        files_matched,
    })
}

fn cut(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_string(),
        Some((i, _)) => format!("{}… [line cut]", &line[..i]),
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::testutil::{Ws, touch};

    async fn grep(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
        Grep.run(input, &ws.ctx).await
    }

    #[tokio::test]
    async fn env_files_are_not_searched() {
        let ws = Ws::new();
        ws.write(".env", "TOKEN=secret-a\n");
        ws.write("deploy/prod.env", "TOKEN=secret-b\n");
        ws.write(".env.local", "TOKEN=secret-c\n");
        ws.write(".env.example", "TOKEN=placeholder\n");
        ws.write("app.rs", "// TOKEN comes from the environment\n");
        let out = grep(&ws, json!({"pattern": "TOKEN"})).await.unwrap();
        assert!(!out.output.contains("secret-"), "{}", out.output);
        assert!(out.output.contains("placeholder"), "{}", out.output);
        assert!(out.output.contains("app.rs"), "{}", out.output);
        assert!(
            out.output.contains("3 .env files were not searched"),
            "{}",
            out.output
        );
    }

    #[tokio::test]
    async fn matches_newest_file_first() {
        let ws = Ws::new();
        touch(
            &ws.write("a.rs", "fn main() {}\nlet x = 1;\nfn helper() {}\n"),
            200,
        );
        touch(&ws.write("src/b.rs", "// fn not at start\nfn b() {}\n"), 10);
        ws.write("ignored/c.rs", "fn c() {}\n");
        ws.write(".gitignore", "ignored/\n");
        ws.write("bin.dat", b"fn x\0\x01\x02");
        let out = grep(&ws, json!({"pattern": "^fn \\w+"})).await.unwrap();
        assert_eq!(
            out.output,
            "src/b.rs:2: fn b() {}\na.rs:1: fn main() {}\na.rs:3: fn helper() {}\n"
        );
        assert_eq!(out.metadata["matches"], 3);
        assert_eq!(out.metadata["files"], 2);
    }

    #[tokio::test]
    async fn include_ignore_case_and_single_file() {
        let ws = Ws::new();
        ws.write("x.py", "TODO one\n");
        ws.write("y.rs", "todo two\n");
        let out = grep(&ws, json!({"pattern": "todo", "include": "*.rs"}))
            .await
            .unwrap();
        assert_eq!(out.output, "y.rs:1: todo two\n");
        let out = grep(
            &ws,
            json!({"pattern": "todo", "ignore_case": true, "path": "x.py"}),
        )
        .await
        .unwrap();
        assert_eq!(out.output, "x.py:1: TODO one\n");
        let out = grep(&ws, json!({"pattern": "nothing here"})).await.unwrap();
        assert!(out.output.starts_with("No matches"));
    }

    #[tokio::test]
    async fn not_utf8_lines_are_shown_lossily() {
        let ws = Ws::new();
        ws.write("l1.txt", b"caf\xe9 latte\n");
        let out = grep(&ws, json!({"pattern": "latte"})).await.unwrap();
        assert_eq!(out.output, "l1.txt:1: caf\u{FFFD} latte\n");
    }

    #[tokio::test]
    async fn capped_with_a_note() {
        let ws = Ws::new();
        let text: String = (0..250).map(|i| format!("hit {i}\n")).collect();
        ws.write("many.txt", &text);
        let out = grep(&ws, json!({"pattern": "hit"})).await.unwrap();
        assert_eq!(
            out.output
                .lines()
                .filter(|l| l.starts_with("many.txt:"))
                .count(),
            100
        );
        assert!(
            out.output.contains("150 more matching lines"),
            "{}",
            out.output
        );
        assert_eq!(out.metadata["capped"], true);
    }

    #[tokio::test]
    async fn long_lines_cut() {
        let ws = Ws::new();
        ws.write("min.js", format!("needle{}\n", "x".repeat(5000)));
        let out = grep(&ws, json!({"pattern": "needle"})).await.unwrap();
        assert!(out.output.len() < 700 && out.output.contains("[line cut]"));
    }

    #[tokio::test]
    async fn errors() {
        let ws = Ws::new();
        let err = grep(&ws, json!({"pattern": "fn("}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("grep: invalid regular expression") && !err.contains('\n'),
            "{err}"
        );
        assert!(
            grep(&ws, json!({"pattern": "x", "path": "nope"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("not found")
        );
        assert!(
            grep(&ws, json!({"pattern": ""}))
                .await
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }
}
