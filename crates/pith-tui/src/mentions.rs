//! The `@` file picker: the workspace's files and directories (what `.gitignore` leaves), fuzzy
//! matched against what follows the `@` at the cursor. Choosing one writes `@path` into the
//! prompt; the engine attaches the file when the prompt is sent.

use std::path::Path;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// Entries indexed at most (a huge tree is cut rather than walked for seconds).
const MAX_ENTRIES: usize = 50_000;
/// Entries the picker shows.
pub const SHOWN: usize = 8;

/// The workspace's paths, relative, directories ending in `/`.
#[derive(Debug, Clone, Default)]
pub struct FileIndex {
    pub paths: Vec<String>,
    /// The walk stopped at `MAX_ENTRIES`.
    pub cut: bool,
}

impl FileIndex {
    /// Walks `root` (hidden files included, `.git` and what `.gitignore` ignores left out, the
    /// project need not be a git repository).
    pub fn scan(root: &Path) -> FileIndex {
        let mut paths = Vec::new();
        let mut cut = false;
        let walk = ignore::WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk.flatten() {
            if entry.depth() == 0 {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let mut p = rel.to_string_lossy().into_owned();
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                p.push('/');
            }
            paths.push(p);
            if paths.len() >= MAX_ENTRIES {
                cut = true;
                break;
            }
        }
        paths.sort();
        FileIndex { paths, cut }
    }

    /// The best matches for `query`, best first: a query ending in `/` lists that directory;
    /// an empty one lists the top level.
    pub fn matches(&self, query: &str) -> Vec<String> {
        if query.is_empty() || query.ends_with('/') {
            return self
                .paths
                .iter()
                .filter(|p| {
                    p.strip_prefix(query).is_some_and(|rest| {
                        !rest.is_empty() && !rest.trim_end_matches('/').contains('/')
                    })
                })
                .take(SHOWN * 8)
                .cloned()
                .collect();
        }
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let mut found = pattern.match_list(self.paths.iter(), &mut matcher);
        // equal scores: the shorter path (a file over the one in a deep directory)
        found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.len().cmp(&b.0.len())));
        found
            .into_iter()
            .take(SHOWN * 8)
            .map(|(p, _)| p.clone())
            .collect()
    }
}

/// The `@word` the cursor is at the end of, in `line` with the cursor at char column `col`:
/// its start column and the query after the `@`. A word is an `@` at the start of the line or
/// after a space, up to the cursor, without spaces.
pub fn token_at(line: &str, col: usize) -> Option<(usize, String)> {
    let before: Vec<char> = line.chars().take(col).collect();
    let start = before
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |i| i + 1);
    let word: String = before[start..].iter().collect();
    let query = word.strip_prefix('@')?;
    // the cursor must end the word (not sit inside one)
    if line.chars().nth(col).is_some_and(|c| !c.is_whitespace()) {
        return None;
    }
    Some((start, query.to_string()))
}

/// A pasted path to an existing image file (what a terminal pastes when one is dropped on it),
/// unquoted and unescaped.
pub fn pasted_image(text: &str, workspace: &Path) -> Option<String> {
    let t = text.trim();
    if t.contains('\n') {
        return None;
    }
    let unquoted = t
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .map(str::to_string)
        .unwrap_or_else(|| t.replace("\\ ", " "));
    let lower = unquoted.to_ascii_lowercase();
    let image = [".png", ".jpg", ".jpeg", ".gif", ".webp"]
        .iter()
        .any(|e| lower.ends_with(e));
    if !image || unquoted.contains(' ') {
        return None;
    }
    let path = pith_config::path::resolve(workspace, &unquoted).path;
    path.is_file().then_some(unquoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_at_the_cursor() {
        assert_eq!(token_at("look at @src/ma", 15), Some((8, "src/ma".into())));
        assert_eq!(token_at("@", 1), Some((0, String::new())));
        assert_eq!(token_at("mail me@x.org", 13), None, "not at a word start");
        assert_eq!(token_at("@src/main.rs more", 4), None, "inside a word");
        assert_eq!(token_at("@a b", 4), None, "past the word");
    }

    #[test]
    fn the_index_honours_gitignore_and_matches_fuzzily() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/tui")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        for f in [
            "src/main.rs",
            "src/tui/app.rs",
            "README.md",
            "target/debug/x",
            ".git/HEAD",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        let index = FileIndex::scan(root);
        assert!(index.paths.contains(&"src/tui/app.rs".to_string()));
        assert!(index.paths.contains(&"src/".to_string()));
        assert!(
            !index.paths.iter().any(|p| p.starts_with("target")),
            "{index:?}"
        );
        assert!(
            !index.paths.iter().any(|p| p.starts_with(".git/")),
            "{index:?}"
        );
        assert_eq!(index.matches("tuiapp")[0], "src/tui/app.rs");
        assert_eq!(index.matches("src/"), ["src/main.rs", "src/tui/"]);
        assert!(index.matches("").contains(&"README.md".to_string()));
        assert!(index.matches("zzz").is_empty());
    }

    #[test]
    fn a_pasted_image_path_becomes_a_mention() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), "png").unwrap();
        let abs = dir.path().join("shot.png").display().to_string();
        assert_eq!(pasted_image(&format!("'{abs}'"), dir.path()), Some(abs));
        assert_eq!(
            pasted_image("shot.png\n", dir.path()),
            Some("shot.png".into())
        );
        assert_eq!(pasted_image("missing.png", dir.path()), None);
        assert_eq!(pasted_image("notes.txt", dir.path()), None);
    }
}
