//! `glob`: files by name pattern, gitignore-aware, newest first.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use serde_json::{Value, json};

use super::path::{display_path, mtime_ms};
use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_protocol::tool::CountMetadata;

/// Results returned at most.
pub const LIMIT: usize = 100;

pub(crate) struct Glob;

#[derive(Deserialize)]
struct Input {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

#[async_trait::async_trait]
impl Tool for Glob {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Glob.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/glob.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. **/*.rs"},
                "path": {"type": "string", "description": "Directory to search (default: the workspace root)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("glob", input)?;
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || glob_sync(&input.pattern, input.path.as_deref(), &ctx))
            .await
            .map_err(|e| tool_err!("glob: internal error: {e}"))?
    }
}

/// A gitignore-aware walker over `root` that includes dotfiles but never enters `.git`, nor
/// pith's own state (`policy`: a workspace that is `$HOME` holds the data dir).
pub(crate) fn walker(root: &SearchRoot, ctx: &ToolContext) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(&root.walk);
    let skip = root.skip(ctx);
    b.hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| e.file_name() != ".git" && !skip.skips(e.path()));
    b
}

/// What a walk below a [`SearchRoot`] never enters: pith's own state, and the paths the
/// sandbox hides from commands (`~/.ssh`, `sandbox_deny_read`, … in a workspace that holds
/// them) unless the root itself is one (the user was asked about it).
pub(crate) struct Skip {
    walk: PathBuf,
    real: PathBuf,
    policy: std::sync::Arc<crate::policy::Policy>,
    /// Whether hidden paths must be looked for (some lie below the root, and the root is
    /// not one: a root the user was asked about is walked whole).
    look_for_hidden: bool,
}

impl Skip {
    /// Whether the walk must not enter `p` (a path it met).
    pub(crate) fn skips(&self, p: &Path) -> bool {
        let real = real_of(&self.walk, &self.real, p);
        self.policy.is_own_root(&real)
            || (self.look_for_hidden && self.policy.is_hidden_resolved(&real))
    }
}

/// The folder or file a search or listing acts on: opened once, by the resolution the
/// permission check judged (`open::checked`), with no symlink on the way and the identity the
/// check saw; the walk goes through the opened descriptor (`/proc/self/fd/N`), so a path
/// flipped to a link after the check is never followed.
pub(crate) struct SearchRoot {
    /// What the walk opens: the opened root's `/proc/self/fd` entry (the checked path where
    /// `/proc` is not mounted).
    pub(crate) walk: PathBuf,
    /// The checked path the walk stands for (what is shown and matched).
    pub(crate) real: PathBuf,
    pub(crate) shown: String,
    pub(crate) is_file: bool,
    /// Keeps the descriptor (and so `walk`) alive.
    _opened: std::fs::File,
}

impl SearchRoot {
    /// What a walk of this root skips.
    pub(crate) fn skip(&self, ctx: &ToolContext) -> Skip {
        Skip {
            walk: self.walk.clone(),
            real: self.real.clone(),
            policy: ctx.policy.clone(),
            look_for_hidden: !ctx.policy.is_hidden(&self.real)
                && ctx.policy.hides_below(&self.real),
        }
    }

    /// The checked path of `p`, a path the walk met.
    pub(crate) fn real_of(&self, p: &Path) -> PathBuf {
        real_of(&self.walk, &self.real, p)
    }
}

fn real_of(walk: &Path, real: &Path, p: &Path) -> PathBuf {
    match p.strip_prefix(walk) {
        Ok(rel) if rel.as_os_str().is_empty() => real.to_path_buf(),
        Ok(rel) => real.join(rel),
        Err(_) => p.to_path_buf(),
    }
}

/// Opens the optional `path` parameter (the workspace when not given) as the permission check
/// resolved it: an existing directory (or, with `allow_file`, file).
pub(crate) fn search_root(
    ctx: &ToolContext,
    raw: Option<&str>,
    allow_file: bool,
) -> Result<SearchRoot, ToolError> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty()).unwrap_or(".");
    let checked = crate::open::checked(ctx, raw);
    let shown = checked.shown(&ctx.workspace);
    let opened = match crate::open::read(&ctx.workspace, &checked) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(tool_err!("Directory not found: {shown}"));
        }
        Err(e) => return Err(tool_err!("Cannot search {shown}: {e}")),
    };
    let meta = opened
        .metadata()
        .map_err(|e| tool_err!("Cannot search {shown}: {e}"))?;
    if !meta.is_dir() && !allow_file {
        return Err(tool_err!("{shown} is a file, not a directory"));
    }
    let real = checked.path().to_path_buf();
    let walk = crate::open::fd_path(&opened).unwrap_or_else(|| real.clone());
    Ok(SearchRoot {
        walk,
        real,
        shown,
        is_file: !meta.is_dir(),
        _opened: opened,
    })
}

/// Why a glob pattern cannot be used. The tools tell the model its `Display` text after their
/// own prefix (`glob: `, ``grep: `include`: ``).
#[derive(Debug, thiserror::Error)]
pub(crate) enum GlobError {
    #[error("the glob pattern is empty")]
    Empty,
    #[error("invalid glob pattern `{pattern}`: {source}")]
    Invalid {
        pattern: String,
        source: globset::Error,
    },
}

/// A file-name glob: patterns without `/` match the file name at any depth, others the path
/// relative to the search root.
pub(crate) struct NameGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl NameGlob {
    pub(crate) fn new(pattern: &str) -> Result<NameGlob, GlobError> {
        let pattern = pattern.trim();
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err(GlobError::Empty);
        }
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|source| GlobError::Invalid {
                pattern: pattern.to_string(),
                source,
            })?
            .compile_matcher();
        Ok(NameGlob {
            matcher,
            by_name: !pattern.contains('/'),
        })
    }

    pub(crate) fn matches(&self, path: &Path, root: &Path) -> bool {
        if self.by_name {
            path.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else if self.matcher.glob().glob().starts_with('/') {
            self.matcher.is_match(path)
        } else {
            path.strip_prefix(root)
                .is_ok_and(|rel| self.matcher.is_match(rel))
        }
    }
}

fn glob_sync(
    pattern: &str,
    path: Option<&str>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let glob = NameGlob::new(pattern).map_err(|e| tool_err!("glob: {e}"))?;
    let root = search_root(ctx, path, false)?;
    let shown_root = root.shown.clone();
    let mut found: Vec<(i64, PathBuf)> = Vec::new();
    for entry in walker(&root, ctx).build().flatten() {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Stopped {
                tool: "glob".into(),
            });
        }
        if !entry
            .file_type()
            .is_some_and(|t| t.is_file() || t.is_symlink())
        {
            continue;
        }
        let real = root.real_of(entry.path());
        if glob.matches(&real, &root.real) {
            let mtime = entry.metadata().map(|m| mtime_ms(&m)).unwrap_or(0);
            found.push((mtime, real));
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let title = format!("{pattern} in {shown_root}");
    if total == 0 {
        return Ok(ToolOutput {
            title,
            output: format!("No files found matching `{pattern}` in {shown_root}."),
            metadata: CountMetadata::of(0, LIMIT).into(),
            meta: ToolMeta::default(),
        });
    }
    let mut out: String = found
        .iter()
        .take(LIMIT)
        .map(|(_, p)| display_path(p, &ctx.workspace) + "\n")
        .collect();
    if total > LIMIT {
        out.push_str(&format!(
            "\n({} more files matched and are not shown: {total} in total. Use a more specific pattern or path.)\n",
            total - LIMIT
        ));
    }
    Ok(ToolOutput {
        title,
        output: out,
        metadata: CountMetadata::of(total, LIMIT).into(),
        meta: ToolMeta::default(),
    })
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::testutil::{Ws, touch};

    async fn glob(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
        Glob.run(input, &ws.ctx).await
    }

    #[tokio::test]
    async fn newest_first_and_gitignore_aware() {
        let ws = Ws::new();
        touch(&ws.write("src/old.rs", ""), 300);
        touch(&ws.write("src/deep/new.rs", ""), 10);
        touch(&ws.write("mid.rs", ""), 100);
        ws.write("target/debug/gen.rs", "");
        ws.write("notes.txt", "");
        ws.write(".gitignore", "target/\n");
        ws.write(".git/hooks/x.rs", "");
        let out = glob(&ws, json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(out.output, "src/deep/new.rs\nmid.rs\nsrc/old.rs\n");
        let out = glob(&ws, json!({"pattern": "src/**/*.rs"})).await.unwrap();
        assert_eq!(out.output, "src/deep/new.rs\nsrc/old.rs\n");
        let out = glob(&ws, json!({"pattern": "*.rs", "path": "src/deep"}))
            .await
            .unwrap();
        assert_eq!(out.output, "src/deep/new.rs\n");
        let out = glob(&ws, json!({"pattern": "*.{txt,md}"})).await.unwrap();
        assert_eq!(out.output, "notes.txt\n");
        let out = glob(&ws, json!({"pattern": ".gitignore"})).await.unwrap();
        assert_eq!(out.output, ".gitignore\n");
    }

    #[tokio::test]
    async fn capped_with_a_note() {
        let ws = Ws::new();
        for i in 0..130 {
            ws.write(&format!("f/{i}.txt"), "");
        }
        let out = glob(&ws, json!({"pattern": "*.txt"})).await.unwrap();
        assert_eq!(
            out.output.lines().filter(|l| l.starts_with("f/")).count(),
            100
        );
        assert!(
            out.output.contains("30 more files matched"),
            "{}",
            out.output
        );
        assert_eq!(out.metadata["count"], 130);
    }

    #[tokio::test]
    async fn errors() {
        let ws = Ws::new();
        let out = glob(&ws, json!({"pattern": "*.zig"})).await.unwrap();
        assert!(out.output.starts_with("No files found"));
        assert!(
            glob(&ws, json!({"pattern": "a[b"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("invalid glob")
        );
        assert!(
            glob(&ws, json!({"pattern": "*", "path": "nope"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("Directory not found")
        );
        ws.write("file", "");
        assert!(
            glob(&ws, json!({"pattern": "*", "path": "file"}))
                .await
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        assert!(
            glob(&ws, json!({}))
                .await
                .unwrap_err()
                .to_string()
                .contains("missing field `pattern`")
        );
    }
}
