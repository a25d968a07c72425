//! Agent Skills (ARCHITECTURE.md §4.7): folders holding a `SKILL.md` — YAML front matter with
//! `name` and `description` (and optionally `allowed-tools`), then Markdown instructions — with
//! scripts and resources beside it, in the format Claude Code, Codex and OpenCode read.
//!
//! ```markdown
//! ---
//! name: pdf-tools
//! description: Extract text and tables from PDF files. Use when the user mentions PDFs.
//! allowed-tools: Read, Bash(pdftotext:*)
//! ---
//! # PDF tools
//! Run `scripts/extract.sh FILE` …
//! ```
//!
//! Roots, in order of precedence (a name found earlier wins; a later one of the same name is a
//! warning naming both files): the workspace's `.pith/skills`, `.agents/skills`,
//! `.claude/skills` — only when the workspace is trusted, like its custom commands — then the
//! user's `<config dir>/skills` (`~/.config/pith/skills`), `~/.claude/skills`,
//! `~/.agents/skills`, `~/.codex/skills`. A skill is `ROOT/NAME/SKILL.md`, one level deep.
//!
//! What is read is sent to the model, so: a link out of a project root (or the root itself
//! linking out of the workspace) is not followed; a link in a user root may lead elsewhere in
//! `$HOME` but never into a hidden path (`~/.ssh`, any dot folder) other than the root's own, nor
//! to a temp dir; a `SKILL.md` over [`MAX_FILE`] bytes or not UTF-8 is skipped. A malformed
//! one is one warning naming its file and line, and skipped; nothing fails the start.

mod allowed;
mod front_matter;
pub mod listing;
mod parse;

use std::io::Read as _;
use std::path::{Path, PathBuf};

pub use allowed::{ToolRule, parse_allowed};
pub use listing::{Listing, listing};
pub use parse::{ParseError, parse, valid_name};

/// Largest `SKILL.md` read (the body is loaded into the context whole).
pub const MAX_FILE: u64 = 128 * 1024;
/// At most this many skills are read from one root.
const MAX_PER_ROOT: usize = 1000;
/// The most a description may hold (the Agent Skills specification's limit).
const MAX_DESCRIPTION: usize = 1024;

/// Whether a root is the project's or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

/// One skills folder pith looks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub dir: PathBuf,
    pub scope: Scope,
    /// As the user would write it: `.claude/skills`, `~/.codex/skills`.
    pub label: String,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// One line.
    pub description: String,
    /// `allowed-tools` as written, one entry each (`Read`, `Bash(git:*)`); `None`: not given.
    pub allowed_tools: Option<Vec<String>>,
    /// `argument-hint`: what `/NAME` takes (`[version]`).
    pub argument_hint: String,
    /// Not `disable-model-invocation: true`: listed to the model, loadable with the tool.
    pub model_invocable: bool,
    /// Not `user-invocable: false`: a `/NAME` command.
    pub user_invocable: bool,
    /// The Markdown after the front matter.
    pub body: String,
    /// The `SKILL.md` as found (not resolved).
    pub path: PathBuf,
    /// The folder holding it: where its resources are read from.
    pub dir: PathBuf,
    pub scope: Scope,
    /// The root's label (`.claude/skills`).
    pub root: String,
}

impl Skill {
    /// What the `skill` tool returns and `/NAME` sends: the folder the skill's resources are
    /// relative to, then its instructions (`$ARGUMENTS` replaced by `args`; without the
    /// placeholder, non-empty arguments follow as Claude Code sends them).
    pub fn render(&self, args: &str) -> String {
        let args = args.trim();
        let mut body = self.body.replace("$ARGUMENTS", args);
        if !self.body.contains("$ARGUMENTS") && !args.is_empty() {
            body.push_str("\n\nARGUMENTS: ");
            body.push_str(args);
        }
        format!(
            "{}{}\">\nBase directory for this skill: {}\nIts scripts and resources are relative to \
             it: read them with the read, glob and grep tools, run them with bash.\n\n{}\n</skill>",
            skill_open(&self.name),
            self.path.display(),
            self.dir.display(),
            body.trim()
        )
    }
}

/// How a rendered skill starts (`<skill name="NAME" path="`): the engine knows a loaded skill
/// in a user message or a tool output by it.
pub fn skill_open(name: &str) -> String {
    format!("<skill name=\"{name}\" path=\"")
}

/// The name of the skill `text` renders, when it is one ([`Skill::render`]).
pub fn rendered_name(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("<skill name=\"")?;
    let end = rest.find('"')?;
    Some(&rest[..end])
}

/// The skills found, and what was skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    /// By name.
    pub list: Vec<Skill>,
    /// One line each: a file skipped (`path:line: why`), a duplicate, a name that does not
    /// match its folder.
    pub warnings: Vec<String>,
}

/// This machine's roots for `workspace`: the project's when `trusted`, then the user's
/// (`config_dir`: pith's global config folder; `home`: `$HOME`).
pub fn roots(
    workspace: &Path,
    trusted: bool,
    config_dir: Option<&Path>,
    home: Option<&Path>,
) -> Vec<Root> {
    let mut out = Vec::new();
    if trusted {
        for rel in [".pith/skills", ".agents/skills", ".claude/skills"] {
            out.push(Root {
                dir: workspace.join(rel),
                scope: Scope::Project,
                label: rel.to_string(),
            });
        }
    }
    if let Some(c) = config_dir {
        out.push(Root {
            dir: c.join("skills"),
            scope: Scope::User,
            label: tilde(&c.join("skills"), home),
        });
    }
    if let Some(h) = home {
        for rel in [".claude/skills", ".agents/skills", ".codex/skills"] {
            out.push(Root {
                dir: h.join(rel),
                scope: Scope::User,
                label: format!("~/{rel}"),
            });
        }
    }
    out
}

fn tilde(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// Where links may lead.
#[derive(Debug, Clone, Default)]
pub struct Fence {
    /// The workspace: project roots stay inside it.
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    /// Temp dirs: nothing is read from them.
    pub temp: Vec<PathBuf>,
}

impl Fence {
    /// This machine's fence for `workspace`.
    pub fn from_env(workspace: &Path) -> Fence {
        let mut temp: Vec<PathBuf> = Vec::new();
        for t in [std::env::temp_dir(), "/tmp".into(), "/var/tmp".into()] {
            let t = t.canonicalize().unwrap_or(t);
            if !temp.contains(&t) {
                temp.push(t);
            }
        }
        Fence {
            workspace: canonical(workspace),
            home: home_dir().map(|h| canonical(&h)),
            temp,
        }
    }

    /// Whether `real` (resolved) may be read for a skill of `root` (resolved).
    fn allows(&self, real: &Path, root: &Path, scope: Scope) -> bool {
        if real.starts_with(root) {
            return scope == Scope::User || real.starts_with(&self.workspace);
        }
        if scope == Scope::Project {
            return false;
        }
        if self.temp.iter().any(|t| real.starts_with(t)) {
            return false;
        }
        let Some(home) = &self.home else {
            return false;
        };
        match real.strip_prefix(home) {
            Ok(rest) => !rest
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.')),
            Err(_) => false,
        }
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or(p.to_path_buf())
}

/// `$HOME`, as pith's other paths read it.
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf())
}

impl Skills {
    /// The skills of this machine for `workspace` (the project's only when `trusted`).
    pub fn discover(workspace: &Path, trusted: bool, config_dir: Option<&Path>) -> Skills {
        let home = home_dir();
        let roots = roots(workspace, trusted, config_dir, home.as_deref());
        let mut out = Skills::load(&roots, &Fence::from_env(workspace));
        if !trusted {
            for rel in [".pith/skills", ".agents/skills", ".claude/skills"] {
                let dir = workspace.join(rel);
                // pith started in `$HOME`: `~/.claude/skills` is the user's, read as such
                let users = roots.iter().any(|r| r.scope == Scope::User && r.dir == dir);
                if dir.is_dir() && !users {
                    out.warnings.push(format!(
                        "{}: project skills not used: this directory is not trusted; run `pith --trust` here to use them",
                        dir.display()
                    ));
                }
            }
        }
        out
    }

    /// The skills of `roots`, earlier roots first.
    pub fn load(roots: &[Root], fence: &Fence) -> Skills {
        let mut out = Skills::default();
        let mut seen_real: Vec<PathBuf> = Vec::new();
        for root in roots {
            read_root(root, fence, &mut out, &mut seen_real);
        }
        out.list.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The skill called `name` (exactly, then case-insensitively).
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.list
            .iter()
            .find(|s| s.name == name)
            .or_else(|| self.list.iter().find(|s| s.name.eq_ignore_ascii_case(name)))
    }

    /// Names close to `name`: containing it or contained in it, or within a small edit distance.
    pub fn close_names(&self, name: &str) -> Vec<&str> {
        let n = name.to_lowercase();
        let limit = (n.chars().count() / 3).clamp(1, 3);
        self.list
            .iter()
            .map(|s| s.name.as_str())
            .filter(|k| {
                let k = k.to_lowercase();
                k.contains(&n)
                    || (!k.is_empty() && n.contains(&k))
                    || edit_distance(&k, &n) <= limit
            })
            .take(5)
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Levenshtein distance, by characters (close names of a skill, a command).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The skills of one root into `out`.
fn read_root(root: &Root, fence: &Fence, out: &mut Skills, seen_real: &mut Vec<PathBuf>) {
    let Ok(real_root) = root.dir.canonicalize() else {
        return;
    };
    if root.scope == Scope::Project && !real_root.starts_with(&fence.workspace) {
        out.warnings.push(format!(
            "{}: leads out of the workspace through a symlink; its skills are not read",
            root.dir.display()
        ));
        return;
    }
    let Ok(entries) = std::fs::read_dir(&root.dir) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs.into_iter().take(MAX_PER_ROOT) {
        let Some(folder) = dir.file_name().and_then(|s| s.to_str()).map(str::to_string) else {
            continue;
        };
        if folder.starts_with('.') {
            continue;
        }
        let file = dir.join("SKILL.md");
        let Ok(real) = file.canonicalize() else {
            continue; // not a skill folder (or a link to nowhere)
        };
        if !fence.allows(&real, &real_root, root.scope) {
            out.warnings.push(format!(
                "{}: a link leading out of {} (or into a hidden path) is not followed; skill skipped",
                file.display(),
                root.label
            ));
            continue;
        }
        if seen_real.contains(&real) {
            continue; // the same file through another root (`~/.agents/skills` → `~/.claude/skills`)
        }
        seen_real.push(real.clone());
        let text = match read_text(&real) {
            Ok(t) => t,
            Err(why) => {
                out.warnings
                    .push(format!("{}: {why}; skill skipped", file.display()));
                continue;
            }
        };
        match parse(&file, &folder, &text) {
            Ok((mut skill, warnings)) => {
                out.warnings.extend(warnings);
                skill.scope = root.scope;
                skill.root = root.label.clone();
                if let Some(first) = out.list.iter().find(|s| s.name == skill.name) {
                    out.warnings.push(format!(
                        "{}: a skill named {} is already loaded from {}; this one is skipped",
                        file.display(),
                        skill.name,
                        first.path.display()
                    ));
                    continue;
                }
                out.list.push(skill);
            }
            Err(e) => out.warnings.push(format!("{e}; skill skipped")),
        }
    }
}

/// A regular file of at most [`MAX_FILE`] bytes, UTF-8.
fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "{} bytes; a SKILL.md may have at most {MAX_FILE}",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

#[cfg(test)]
#[path = "skills/tests.rs"]
mod tests;
