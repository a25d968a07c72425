//! The file-level import graph of one crate and its circles (strongly connected components).
//! A file is a module: `a.rs` and `a/mod.rs` are `a`, `lib.rs` is the root. An edge runs from a
//! file to the deepest file-module a `crate::`/`super::`/`self::` path of it names; `mod x;`
//! declarations and paths relative to the file (`x::Y`) are not edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::lexer;

/// A module's path from the crate root: `["view", "status"]`.
pub type Module = Vec<String>;

/// Every `.rs` file under `src` by the module it is. `main.rs` is a crate of its own (it reaches
/// the library by name), so it is left out when there is a `lib.rs`.
pub fn files_of(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut files = Vec::new();
    walk(src, &mut files);
    let has_lib = src.join("lib.rs").is_file();
    let mut out = BTreeMap::new();
    for file in files {
        let rel = file
            .strip_prefix(src)
            .expect("under src")
            .with_extension("");
        let mut module: Module = rel
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|m| m == "mod") {
            module.pop();
        }
        if module == ["main"] && has_lib {
            continue;
        }
        if module == ["lib"] || module == ["main"] {
            module.clear();
        }
        out.entry(module).or_insert(file);
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The file-module a path names, seen from `from`: the deepest prefix of it that is a file.
/// `None` for a path that does not start at `crate`, `super` or `self`.
fn module_of_path(
    path: &str,
    from: &[String],
    modules: &BTreeMap<Module, PathBuf>,
) -> Option<Module> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Module = match segs.next()? {
        "crate" => Vec::new(),
        "super" => from[..from.len().saturating_sub(1)].to_vec(),
        "self" => from.to_vec(),
        _ => return None,
    };
    while segs.peek() == Some(&"super") {
        segs.next();
        base.pop();
    }
    let mut best = modules.contains_key(&base).then(|| base.clone());
    for seg in segs {
        if seg == "*" || seg == "self" {
            break;
        }
        base.push(seg.to_string());
        if !modules.contains_key(&base) {
            break;
        }
        best = Some(base.clone());
    }
    best
}

/// For every file of the crate under `src`: the files it imports.
pub fn graph(modules: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut g = BTreeMap::new();
    for (module, file) in modules {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = lexer::without_test_modules(&lexer::strip(&text));
        let mut paths = lexer::use_paths(&code);
        paths.extend(lexer::inline_paths(&code));
        let targets = paths
            .iter()
            .filter_map(|p| module_of_path(p, module, modules))
            .filter(|t| t != module)
            .collect();
        g.insert(module.clone(), targets);
    }
    g
}

/// The strongly connected components of `g` (Tarjan), each with its modules sorted.
pub fn components(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let mut t = Tarjan {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

struct Tarjan<'a> {
    g: &'a BTreeMap<Module, BTreeSet<Module>>,
    index: BTreeMap<&'a Module, usize>,
    low: BTreeMap<&'a Module, usize>,
    stack: Vec<&'a Module>,
    on: BTreeSet<&'a Module>,
    out: Vec<Vec<Module>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a Module) {
        let n = self.index.len();
        self.index.insert(v, n);
        self.low.insert(v, n);
        self.stack.push(v);
        self.on.insert(v);
        let g = self.g;
        for w in &g[v] {
            if !self.index.contains_key(w) {
                self.visit(w);
                let low = self.low[v].min(self.low[w]);
                self.low.insert(v, low);
            } else if self.on.contains(w) {
                let low = self.low[v].min(self.index[w]);
                self.low.insert(v, low);
            }
        }
        if self.low[v] == self.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = self.stack.pop().expect("v is on the stack");
                self.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            comp.sort();
            self.out.push(comp);
        }
    }
}
