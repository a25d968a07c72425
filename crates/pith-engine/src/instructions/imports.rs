//! `@path` imports in instruction files, as Claude Code (and Gemini CLI) read them: a word
//! `@docs/rules.md`, `@~/.claude/mine.md` or `@/abs/file.md` outside code blocks and code spans
//! names a file whose text is added after the file that names it, up to five imports deep. A
//! path is relative to the importing file's folder. An import is read only when it resolves
//! inside the importing file's fence (the repository for the workspace's files, the workspace for
//! a subfolder's, `$HOME` for the user's), is a regular file and leads into no hidden path: a
//! repository's `AGENTS.md` cannot pull `~/.aws/credentials` or `/etc/passwd` into the prompt.
//! A word that names no such file stays what it was (an `@user` in prose).

use std::path::{Path, PathBuf};

use pith_tools::path::lexical_normalize;

use super::{Fences, Instruction};

/// How many imports deep a chain is followed.
const MAX_DEPTH: usize = 5;

/// Bytes of a file read to find its imports.
const MAX_SCAN: usize = 64 * 1024;

/// `files` with the files each imports after it (depth first), each file once.
pub(super) fn expand(files: Vec<Instruction>, fences: &Fences) -> Vec<Instruction> {
    let mut out: Vec<Instruction> = Vec::new();
    for f in files {
        add(f, 0, fences, &mut out);
    }
    out
}

fn add(file: Instruction, depth: usize, fences: &Fences, out: &mut Vec<Instruction>) {
    if out.iter().any(|o| o.is(&file.real)) {
        return;
    }
    let text = match super::read(&file, MAX_SCAN) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    let dir = file
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let (fence, origin) = (file.fence.clone(), file.origin);
    out.push(file);
    if depth >= MAX_DEPTH {
        return;
    }
    for name in named(&text) {
        let path = resolve(&name, &dir, fences.home.as_deref());
        if let Some(real) = judge(&path, &fence, fences) {
            let import = Instruction {
                path,
                real,
                origin,
                fence: fence.clone(),
            };
            add(import, depth + 1, fences, out);
        }
    }
}

/// The paths `text` imports, in order: `@` words outside fenced code blocks and code spans.
pub(super) fn named(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // code spans: every other backtick-separated piece
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for word in piece.split_whitespace() {
                let Some(name) = word.strip_prefix('@') else {
                    continue;
                };
                let name = name.trim_end_matches([',', ';', ':', ')', '.', '!', '?']);
                if !name.is_empty() && !name.contains('@') && !found.iter().any(|f| f == name) {
                    found.push(name.to_string());
                }
            }
        }
    }
    found
}

/// Where `name` leads from a file in `dir`.
fn resolve(name: &str, dir: &Path, home: Option<&Path>) -> PathBuf {
    let p = match (name.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if Path::new(name).is_absolute() => PathBuf::from(name),
        _ => dir.join(name),
    };
    lexical_normalize(&p)
}

/// Where the import at `path` is read from: a regular file whose resolution is inside `fence`
/// and in no hidden path.
fn judge(path: &Path, fence: &Path, fences: &Fences) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    let fence = fence.canonicalize().unwrap_or_else(|_| fence.to_path_buf());
    if !real.is_file() || !real.starts_with(&fence) || fences.is_hidden(&real) {
        if real.is_file() {
            tracing::warn!(
                "skipped the import {} : it leads outside {} or into a hidden path",
                path.display(),
                fence.display()
            );
        }
        return None;
    }
    Some(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_at_words_outside_code() {
        let text = "See @docs/rules.md and @~/.claude/mine.md.\n\
                    Ask @alice, mail a@b.c.\n\
                    `@not/this.md` and\n\
                    ```\n@nor/this.md\n```\n\
                    @docs/rules.md again";
        assert_eq!(named(text), ["docs/rules.md", "~/.claude/mine.md", "alice"]);
    }
}
