//! No import circle over five files in any crate of the workspace (issue 39): the files of a
//! crate that all reach each other through `use crate::…`/`super::…`/`self::…` can only be read
//! and changed together, so a circle is kept small enough to hold in the head. The checker reads
//! the `use` lines itself (`lexer`: comments, strings and inline test modules out; `graph`: the
//! file each path lands in, and Tarjan's components) and names each circle as
//! `pith-tui: circle of 3: cells.rs, hook_note.rs, tool_cell.rs`.
//!
//! What it does not count: paths relative to the file (`check::run()` in `load.rs`, reaching its
//! child `load/check.rs`) and `mod x;` declarations, so a parent that only calls into its
//! children is not in a circle with them.

mod graph;
mod lexer;

use std::path::{Path, PathBuf};

/// The most files one import circle may hold.
const MAX_CIRCLE: usize = 5;

/// Crates allowed a larger circle for now, with the most files it may hold. The list only
/// shrinks: the check fails when an entry is larger than the crate's largest circle. It is
/// empty: pith-engine's `Runner` hub (a circle of 19 files) was taken apart by issue 39 (a turn
/// is a value; only lib.rs imports runner.rs), and no crate has a circle over five files.
const KNOWN_CIRCLES: &[(&str, usize)] = &[];

/// Every crate of the workspace under `root`: each `crates/*/src`, and the binary crate's `src`.
fn crates(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                p.join("src"),
            )
        })
        .collect();
    out.sort();
    if root.join("src").is_dir() {
        out.push(("pith".to_string(), root.join("src")));
    }
    out
}

/// One circle: its crate and its files, relative to the crate's `src`, sorted.
struct Circle {
    krate: String,
    files: Vec<String>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files.join(", ");
        write!(f, "{}: circle of {}: {files}", self.krate, self.files.len())
    }
}

/// Every circle of at least `min` files in the workspace under `root`, and how many files were read.
fn circles(root: &Path, min: usize) -> (Vec<Circle>, usize) {
    let mut out = Vec::new();
    let mut read = 0;
    for (krate, src) in crates(root) {
        let modules = graph::files_of(&src);
        read += modules.len();
        for comp in graph::components(&graph::graph(&modules)) {
            if comp.len() < min {
                continue;
            }
            let mut files: Vec<String> = comp
                .iter()
                .map(|m| {
                    modules[m]
                        .strip_prefix(&src)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            files.sort();
            out.push(Circle {
                krate: krate.clone(),
                files,
            });
        }
    }
    (out, read)
}

/// What breaks the rule under `root`: every circle over its crate's limit, and every entry of
/// `known` larger than it needs to be.
fn violations(root: &Path, max: usize, known: &[(&str, usize)]) -> Vec<String> {
    let (all, _) = circles(root, 2);
    let limit = |krate: &str| {
        known
            .iter()
            .find(|(k, _)| *k == krate)
            .map_or(max, |&(_, n)| n.max(max))
    };
    let mut out: Vec<String> = all
        .iter()
        .filter(|c| c.files.len() > limit(&c.krate))
        .map(|c| format!("{c}"))
        .collect();
    for &(krate, allowed) in known {
        let largest = all
            .iter()
            .filter(|c| c.krate == krate)
            .map(|c| c.files.len())
            .max();
        let largest = largest.unwrap_or(0);
        if largest < allowed {
            out.push(format!(
                "{krate}: the largest circle has {largest} files now; lower or remove its entry \
                 ({allowed}) in KNOWN_CIRCLES"
            ));
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_circle_over_five_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_, read) = circles(root, 2);
    assert!(
        read > 300,
        "the checker read only {read} files: is it looking in the right place?"
    );
    let bad = violations(root, MAX_CIRCLE, KNOWN_CIRCLES);
    assert!(
        bad.is_empty(),
        "import circles over {MAX_CIRCLE} files (files that all import each other through \
         crate::/super::/self:: paths; move what they share into a leaf module, or pass it in):\n{}",
        bad.join("\n")
    );
}

mod fake_crate;
