//! The documents name what is in the tree. Every repository path written in backticks in
//! ARCHITECTURE.md, README.md and SECURITY.md exists (a file moved or renamed fails here until
//! the document follows it); every `NAME.md §N` cited in a code comment or a document is a
//! numbered heading of that document; and ARCHITECTURE.md §1's crate map names, for every
//! crate, exactly the workspace crates its manifest depends on.
//!
//! A backticked word is a repository path when it starts at a root of the repository
//! (`crates/`, `src/`, `tests/`, `prompts/`, …), in ARCHITECTURE.md's short form
//! (`pith-engine/turn.rs` is `crates/pith-engine/src/turn.rs`), starts with a module name of the
//! one-crate layout (`engine/`, `tools/`: stale by construction), or ends in `.rs`; a bare file
//! name is checked at the root unless it is one a user writes (`pith.toml`, `AGENTS.md`).
//! `*` in one segment matches any name; `path::item` also needs the file to define `item`.

use std::path::{Path, PathBuf};

/// The documents whose paths are held to the tree.
const DOCUMENTS: [&str; 3] = ["ARCHITECTURE.md", "README.md", "SECURITY.md"];

/// Where a repository path may start (besides a crate's short form).
const ROOTS: [&str; 9] = [
    "crates/",
    "src/",
    "tests/",
    "prompts/",
    "bench/",
    "benches/",
    "examples/",
    "assets/",
    ".ci/",
];

/// The module names of the one-crate layout: a folder written under one (`tools/open/`) names
/// nothing in the tree and is reported (a file, `engine/turn.rs`, is caught as any `.rs` is).
const OLD_MODULES: [&str; 13] = [
    "engine", "context", "config", "tools", "tui", "store", "provider", "mcp", "sandbox", "acp",
    "headless", "hooks", "auth",
];

/// Bare file names that are the user's files, not the repository's.
const USER_FILES: [&str; 5] = [
    "pith.toml",
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "config.toml",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The inline code spans of a Markdown text, fenced blocks left out.
fn code_spans(doc: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.replace('\n', " "))
        .collect()
}

/// What a backticked word names in the repository, if it names anything there.
fn repository_path(word: &str) -> Option<String> {
    let word = word.trim_end_matches([',', '.', ';', ':', ')']);
    let word = word.split("::").next().unwrap_or(word);
    let elsewhere = word.starts_with(['/', '~', '<', '.', '@']) && !word.starts_with(".ci/");
    if word.is_empty() || elsewhere || word.contains("://") {
        return None;
    }
    let first = word.split('/').next().unwrap_or(word);
    let old_folder = word.ends_with('/') && word.matches('/').count() > 1;
    if ROOTS.iter().any(|r| word.starts_with(r)) || old_folder && OLD_MODULES.contains(&first) {
        return Some(word.to_string());
    }
    if let Some((krate, rest)) = word.split_once('/')
        && krate.starts_with("pith-")
        && root().join("crates").join(krate).is_dir()
    {
        let in_src = format!("crates/{krate}/src/{rest}");
        let beside = format!("crates/{krate}/{rest}");
        return Some(if rest.is_empty() || !exists(&root(), &beside) {
            in_src
        } else {
            beside
        });
    }
    if word.ends_with(".rs") {
        return Some(word.to_string());
    }
    let bare_file = !word.contains(['/', ' ', '*', '<', '{'])
        && [".md", ".toml", ".sh", ".py"]
            .iter()
            .any(|e| word.ends_with(e));
    (bare_file && !USER_FILES.contains(&word)).then(|| word.to_string())
}

/// Whether `path` (segments may hold one `*`) names something under `dir`.
fn exists(dir: &Path, path: &str) -> bool {
    let want_dir = path.ends_with('/');
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    matches(dir, &segments, want_dir)
}

fn matches(dir: &Path, segments: &[&str], want_dir: bool) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return !want_dir || dir.is_dir();
    };
    let Some((head, tail)) = first.split_once('*') else {
        return matches(&dir.join(first), rest, want_dir) && dir.join(first).exists();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.len() >= head.len() + tail.len()
            && name.starts_with(head)
            && name.ends_with(tail)
            && matches(&e.path(), rest, want_dir)
    })
}

/// Whether a Rust source defines `item` (a function, type, trait or module of that name).
fn defines(source: &str, item: &str) -> bool {
    ["fn ", "struct ", "enum ", "trait ", "mod ", "type "]
        .iter()
        .any(|k| source.contains(&format!("{k}{item}")))
}

/// The words of `doc`'s code spans that name a repository path that is not there.
fn missing_paths(doc: &str) -> Vec<String> {
    let root = root();
    let mut missing = Vec::new();
    for span in code_spans(doc) {
        for word in span.split_whitespace() {
            let Some(path) = repository_path(word) else {
                continue;
            };
            let item = word.split_once("::").map(|(_, i)| i.trim_end_matches(')'));
            let ok = exists(&root, &path)
                && item.is_none_or(|i| {
                    std::fs::read_to_string(root.join(&path)).is_ok_and(|t| defines(&t, i))
                });
            if !ok && !missing.contains(&word.to_string()) {
                missing.push(word.to_string());
            }
        }
    }
    missing
}

#[test]
fn every_path_the_documents_name_is_in_the_tree() {
    let mut report = Vec::new();
    for name in DOCUMENTS {
        let doc = std::fs::read_to_string(root().join(name)).unwrap();
        for word in missing_paths(&doc) {
            report.push(format!("{name}: `{word}`"));
        }
    }
    assert!(
        report.is_empty(),
        "paths named in the documents that are not in the tree:\n{}",
        report.join("\n")
    );
}

/// The section numbers of a document's headings (`## 6.`, `### 6.4 …` → "6", "6.4").
fn sections(doc: &str) -> Vec<String> {
    doc.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').split_whitespace().next())
        .map(|n| n.trim_end_matches('.').to_string())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .collect()
}

/// Every `NAME.md §N.M` in `text` (a range `§4.1–4.2` names both ends).
fn citations(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(".md §") {
        let name_start = text[..at]
            .rfind(|c: char| !c.is_ascii_uppercase())
            .map_or(0, |i| i + 1);
        let doc = format!("{}.md", &text[name_start..at]);
        let rest = &text[at + ".md §".len()..];
        for number in rest
            .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '–'))
            .next()
            .unwrap_or("")
            .split('–')
        {
            let number = number.trim_end_matches('.');
            if !number.is_empty() && doc.len() > 3 {
                out.push((doc.clone(), number.to_string()));
            }
        }
    }
    out
}

/// The files cited sections are looked for in: the Rust sources and the documents.
fn citing_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && !name.to_string_lossy().starts_with('.') {
                citing_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn every_cited_section_is_a_heading() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["crates", "src", "tests", "benches"] {
        citing_files(&root.join(dir), &mut files);
    }
    for doc in [
        "ARCHITECTURE.md",
        "README.md",
        "SECURITY.md",
        "BENCHMARKS.md",
    ] {
        files.push(root.join(doc));
    }
    let mut report = Vec::new();
    let mut cited = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (doc, number) in citations(&text) {
            let Ok(target) = std::fs::read_to_string(root.join(&doc)) else {
                continue;
            };
            cited += 1;
            if !sections(&target).contains(&number) {
                let file = file.strip_prefix(&root).unwrap().display();
                report.push(format!("{file}: {doc} §{number}"));
            }
        }
    }
    assert!(
        cited > 20,
        "found only {cited} citations: the scan is broken"
    );
    report.dedup();
    assert!(
        report.is_empty(),
        "sections cited that are not headings:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_checks_catch_what_they_are_for() {
    let doc = "`crates/pith-engine/src/lib.rs`, `pith-engine/lib.rs`, `pith-engine/nowhere.rs`,\n\
               `src/headless/`, `tests/suite/documents.rs::the_checks_catch`, `prompts/*.md`,\n\
               `tests/suite/documents.rs::no_such_item_here`, `context/carry.rs`, `pith.toml`,\n\
               `tools/open/`, `pith-tools/open/`,\n\
               `session/update`, `<data dir>/tool-output/`, `bash bench/vs_curl.sh`, `NOPE.md`";
    assert_eq!(
        missing_paths(doc),
        [
            "`pith-engine/nowhere.rs`",
            "`tests/suite/documents.rs::no_such_item_here`",
            "`context/carry.rs`",
            "`tools/open/`",
            "`NOPE.md`",
        ]
        .map(|w| w.trim_matches('`').to_string())
    );
    assert_eq!(
        sections("## 6. Context\n### 6.4 Compaction\n## 7.1 ACP\n"),
        ["6", "6.4", "7.1"]
    );
    assert_eq!(
        citations("(ARCHITECTURE.md §4.1–4.2). See BENCHMARKS.md §12.")
            .into_iter()
            .map(|(d, n)| format!("{d} {n}"))
            .collect::<Vec<_>>(),
        [
            "ARCHITECTURE.md 4.1",
            "ARCHITECTURE.md 4.2",
            "BENCHMARKS.md 12"
        ]
    );
}

/// The workspace crates a manifest's `[dependencies]` names, without the `pith-` prefix.
fn manifest_edges(manifest: &str) -> Vec<String> {
    let mut edges = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && let Some(rest) = line.strip_prefix("pith-") {
            let name = rest.split([' ', '=', '.']).next().unwrap_or(rest);
            edges.push(name.to_string());
        }
    }
    edges.sort();
    edges
}

/// The crate map of ARCHITECTURE.md §1: each row's crate and the workspace crates it names in
/// its "depends on" column.
fn crate_map(doc: &str) -> Vec<(String, Vec<String>)> {
    let start = doc.find("\n## 1.").expect("ARCHITECTURE.md has §1");
    let end = start
        + doc[start..]
            .find("\n### 1.1")
            .expect("ARCHITECTURE.md has §1.1");
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `pith"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let name = cells[0]
                .trim_start_matches("| `")
                .split('`')
                .next()
                .unwrap();
            let mut edges: Vec<String> = cells[2]
                .split(", ")
                .map(str::trim)
                .filter(|e| *e != "—")
                .map(str::to_string)
                .collect();
            edges.sort();
            (name.to_string(), edges)
        })
        .collect()
}

#[test]
fn the_crate_map_is_the_crate_graph() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut documented = crate_map(&doc);
    documented.sort();
    let mut actual = vec![(
        "pith".to_string(),
        manifest_edges(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()),
    )];
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        actual.push((name, manifest_edges(&manifest)));
    }
    actual.sort();
    assert!(actual.len() > 10, "the workspace has its crates");
    assert_eq!(
        documented, actual,
        "ARCHITECTURE.md §1's crate map (left) is not the manifests' graph (right)"
    );
}

#[test]
fn the_graph_checks_read_what_they_should() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\npith-protocol = { path = \"..\" }\n\
                    pith-config.workspace = true\nserde = \"1\"\n\n[dev-dependencies]\n\
                    pith-store = { path = \"..\" }\n";
    assert_eq!(manifest_edges(manifest), ["config", "protocol"]);
    let doc = "# pith\n## 1. Layers\n\n| crate | what | depends on (pith-) | other |\n|---|---|---|---|\n\
               | `pith-a` | a | — | serde |\n| `pith` (`src/`) | bin | a, b | clap |\n\n### 1.1 More\n";
    assert_eq!(
        crate_map(doc),
        [
            ("pith-a".to_string(), vec![]),
            ("pith".to_string(), vec!["a".to_string(), "b".to_string()])
        ]
    );
}
