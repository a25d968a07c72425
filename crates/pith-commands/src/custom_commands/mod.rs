//! Custom slash commands: Markdown files whose body becomes the user's message.
//!
//! `<workspace>/.pith/commands/NAME.md` (the project's) and `<config dir>/commands/NAME.md` (the
//! user's). A file in a subfolder gets a namespaced name: `frontend/review.md` is
//! `/frontend:review`. A project command wins over a user one of the same name; neither can
//! shadow a built-in command (it is skipped with a warning).
//!
//! ```markdown
//! ---
//! description: Review the staged change
//! argument-hint: [focus]
//! model: anthropic/claude-haiku-4-5
//! agent: reviewer
//! ---
//! Review the staged diff. Focus on $ARGUMENTS.
//! ```
//!
//! The front matter is optional; `$ARGUMENTS` is everything after the name, `$1`…`$9` its
//! words (`"quoted words"` count as one). Without a placeholder the arguments are appended.
//!
//! The project's files come from the repository pith runs in: they are read only in a trusted
//! workspace, never through a symlink that leads out of the workspace, never past
//! [`MAX_FILE`] bytes, and a malformed one is skipped with a one-line warning naming file and line.

mod watch;

use std::io::Read as _;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Largest command file read.
pub const MAX_FILE: u64 = 64 * 1024;
/// At most this many commands are read from one directory tree.
const MAX_COMMANDS: usize = 500;
/// Subfolders deeper than this are not read.
const MAX_DEPTH: usize = 3;

/// Where a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `.pith/commands` of the workspace.
    Project,
    /// `commands/` beside the global config file.
    User,
}

impl Source {
    pub fn label(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::User => "user",
        }
    }
}

/// One custom command.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomCommand {
    /// `review`, `frontend:review`.
    pub name: String,
    pub description: String,
    /// What it takes, e.g. `[focus]`.
    pub argument_hint: String,
    /// Runs its turn with this model ("provider/model").
    pub model: Option<String>,
    /// Runs its turn as this agent.
    pub agent: Option<String>,
    /// The text, with its placeholders.
    pub body: String,
    pub source: Source,
    pub path: PathBuf,
}

/// What a command expands to: the message to send and how to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// `/name args`, as the transcript labels the message.
    pub label: String,
    pub text: String,
    pub model: Option<String>,
    pub agent: Option<String>,
}

impl CustomCommand {
    /// The command run with `args` (the text after its name).
    pub fn expand(&self, args: &str) -> Expanded {
        let args = args.trim();
        Expanded {
            label: if args.is_empty() {
                format!("/{}", self.name)
            } else {
                format!("/{} {args}", self.name)
            },
            text: expand(&self.body, args),
            model: self.model.clone(),
            agent: self.agent.clone(),
        }
    }

    /// What the popup and `/help` say about it: its description and where it comes from.
    pub fn about(&self) -> String {
        let d = if self.description.is_empty() {
            self.body
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
        } else {
            &self.description
        };
        format!("{} ({})", crate::text::one_line(d), self.source.label())
    }
}

const INIT_PROMPT: &str = include_str!("../../../../prompts/init.md");

/// `/init [focus]`: the built-in prompt asking the agent to write `AGENTS.md`, or to improve the
/// one `workspace` has.
pub fn init(workspace: &Path, args: &str) -> Expanded {
    let mut text = INIT_PROMPT.trim_end().to_string();
    if workspace.join("AGENTS.md").is_file() {
        text.push_str(
            "\n\nAGENTS.md already exists: read it first and improve it — keep what is still true, \
             correct what is wrong or stale, add what is missing. Do not overwrite it blindly.",
        );
    }
    let args = args.trim();
    if !args.is_empty() {
        text.push_str("\n\nThe user adds: ");
        text.push_str(args);
    }
    Expanded {
        label: if args.is_empty() {
            "/init".into()
        } else {
            format!("/init {args}")
        },
        text,
        model: None,
        agent: None,
    }
}

/// The custom commands, found once per start (and after trust changes).
#[derive(Debug, Clone, Default)]
pub struct Commands {
    pub list: Vec<CustomCommand>,
    /// One line each: a file skipped and why.
    pub warnings: Vec<String>,
    /// Where they were loaded from, to see when that changes (`watch.rs`).
    pub origin: Option<watch::Origin>,
    /// The skills, each a `/NAME` command after the built-in and custom ones
    /// (ARCHITECTURE.md §4.7).
    pub skills: std::sync::Arc<crate::config::skills::Skills>,
}

impl Commands {
    /// Reads the user's commands from `global_dir/commands` and, when `trusted`, the project's
    /// from `workspace/.pith/commands`.
    pub fn load(global_dir: Option<&Path>, workspace: &Path, trusted: bool) -> Commands {
        Commands::load_with(global_dir, workspace, trusted, true)
    }

    /// [`Commands::load`], the skills too only when `skills` (`[skills] enabled`).
    pub fn load_with(
        global_dir: Option<&Path>,
        workspace: &Path,
        trusted: bool,
        skills: bool,
    ) -> Commands {
        let mut out = Commands {
            origin: Some(watch::Origin::new(global_dir, workspace, trusted, skills)),
            ..Commands::default()
        };
        let mut found: Vec<CustomCommand> = Vec::new();
        let project_dir = workspace.join(".pith").join("commands");
        if trusted {
            let root = workspace.canonicalize().unwrap_or(workspace.to_path_buf());
            read_tree(&project_dir, &root, Source::Project, &mut found, &mut out);
        } else if project_dir.is_dir() {
            out.warnings.push(format!(
                "{}: project commands not used: this directory is not trusted; run `pith --trust` here to use them",
                project_dir.display()
            ));
        }
        if let Some(dir) = global_dir {
            let dir = dir.join("commands");
            let root = dir.canonicalize().unwrap_or(dir.clone());
            read_tree(&dir, &root, Source::User, &mut found, &mut out);
        }
        for c in found {
            if let Some(builtin) = builtin_named(&c.name) {
                out.warnings.push(format!(
                    "{}: /{} is a built-in command (/{builtin}); this custom command is skipped — rename the file",
                    c.path.display(),
                    c.name
                ));
                continue;
            }
            // the project's were read first: a user command of the same name loses
            if out.list.iter().any(|o| o.name == c.name) {
                continue;
            }
            out.list.push(c);
        }
        out.list.sort_by(|a, b| a.name.cmp(&b.name));
        if !skills {
            return out;
        }
        let skills = crate::config::skills::Skills::discover(workspace, trusted, global_dir);
        out.warnings.extend(skills.warnings.iter().cloned());
        for s in &skills.list {
            let shadowed = builtin_named(&s.name)
                .map(|b| format!("the built-in command /{b}"))
                .or_else(|| {
                    out.get(&s.name)
                        .map(|c| format!("the custom command in {}", c.path.display()))
                });
            if let Some(by) = shadowed {
                out.warnings.push(format!(
                    "{}: /{} is {by}, which wins; the skill is still loaded by the skill tool",
                    s.path.display(),
                    s.name
                ));
            }
        }
        out.skills = std::sync::Arc::new(skills);
        out
    }

    /// The command called `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.list.iter().find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The commands matching what is typed after `/`: prefix matches first, then substring.
    pub fn filter(&self, typed: &str) -> Vec<&CustomCommand> {
        let t = typed.to_lowercase();
        let mut out: Vec<&CustomCommand> = self
            .list
            .iter()
            .filter(|c| c.name.to_lowercase().starts_with(&t))
            .collect();
        for c in &self.list {
            if !out.iter().any(|o| o.name == c.name) && c.name.to_lowercase().contains(&t) {
                out.push(c);
            }
        }
        out
    }
}

/// The built-in command `name` would shadow.
fn builtin_named(name: &str) -> Option<&'static str> {
    match crate::commands::parse(&format!("/{name}")) {
        Some(Ok((c, _))) => Some(c.name()),
        _ => None,
    }
}

/// Reads the `*.md` files under `dir` (namespaced by subfolder) into `found`; a file already
/// found under the same name (from an earlier, preferred tree) is kept.
fn read_tree(
    dir: &Path,
    root: &Path,
    source: Source,
    found: &mut Vec<CustomCommand>,
    out: &mut Commands,
) {
    // `.pith` or `.pith/commands` may itself be a symlink planted in the repository
    match dir.canonicalize() {
        Ok(real) if real.starts_with(root) => {}
        Ok(_) => {
            out.warnings.push(format!(
                "{}: leads out of {} through a symlink; its commands are not read",
                dir.display(),
                root.display()
            ));
            return;
        }
        Err(_) => return,
    }
    let mut walk = TreeWalk {
        root,
        source,
        found,
        out,
        read: 0,
    };
    let mut stack = vec![(dir.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, prefix)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for path in paths.into_iter().rev() {
            let Some(stem) = path.file_name().and_then(|s| s.to_str()) else {
                continue;
            };
            if stem.starts_with('.') {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if prefix.len() + 1 < MAX_DEPTH && valid_segment(stem) {
                    let mut p = prefix.clone();
                    p.push(stem.to_string());
                    stack.push((path, p));
                }
                continue;
            }
            let Some(stem) = stem.strip_suffix(".md") else {
                continue;
            };
            if walk.file(&path, &meta, stem, &prefix).is_break() {
                return;
            }
        }
    }
}

/// One walk over a commands tree: where it may read, and what it found so far.
struct TreeWalk<'a> {
    root: &'a Path,
    source: Source,
    found: &'a mut Vec<CustomCommand>,
    out: &'a mut Commands,
    /// Command files read so far.
    read: usize,
}

impl TreeWalk<'_> {
    /// One `*.md` file, `stem` its name without the extension, in the subfolders `prefix`.
    /// `Break`: too many commands, stop reading.
    fn file(
        &mut self,
        path: &Path,
        meta: &std::fs::Metadata,
        stem: &str,
        prefix: &[String],
    ) -> ControlFlow<()> {
        let warn = |out: &mut Commands, why: &str| {
            out.warnings
                .push(format!("{}: {why}; command skipped", path.display()))
        };
        if !valid_segment(stem) {
            warn(
                self.out,
                "a command's file name must be letters, digits, '-', '_' or '.'",
            );
            return ControlFlow::Continue(());
        }
        if self.read >= MAX_COMMANDS {
            warn(self.out, &format!("more than {MAX_COMMANDS} commands"));
            return ControlFlow::Break(());
        }
        let text = match read_file(path, meta, self.root) {
            Ok(t) => t,
            Err(why) => {
                warn(self.out, &why.to_string());
                return ControlFlow::Continue(());
            }
        };
        self.read += 1;
        let mut name = prefix.join(":");
        if !name.is_empty() {
            name.push(':');
        }
        name.push_str(stem);
        if self.found.iter().any(|f| f.name == name) {
            return ControlFlow::Continue(());
        }
        match parse(path, &text) {
            Ok(front) => self.found.push(CustomCommand {
                name,
                source: self.source,
                path: path.to_path_buf(),
                ..front
            }),
            Err(e) => self.out.warnings.push(format!("{e}; command skipped")),
        }
        ControlFlow::Continue(())
    }
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why a command file is not read.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error("a symlink to nowhere")]
    DanglingSymlink,
    #[error("a symlink leading out of {} is not followed", root.display())]
    SymlinkOut { root: PathBuf },
    #[error("cannot read it: {0}")]
    Unreadable(std::io::Error),
    #[error("not a regular file")]
    NotAFile,
    #[error("{len} bytes; a command file may have at most {MAX_FILE}")]
    TooLarge { len: u64 },
    /// It grew past the limit between the size check and the read.
    #[error("larger than {MAX_FILE} bytes, the most a command file may have")]
    GrewTooLarge,
    #[error("not UTF-8 text")]
    NotUtf8,
}

/// A command file's text: a regular file (a symlink only when it stays inside `root`), at most
/// [`MAX_FILE`] bytes, UTF-8.
fn read_file(path: &Path, meta: &std::fs::Metadata, root: &Path) -> Result<String, FileError> {
    let target = if meta.file_type().is_symlink() {
        let real = path
            .canonicalize()
            .map_err(|_| FileError::DanglingSymlink)?;
        if !real.starts_with(root) {
            return Err(FileError::SymlinkOut {
                root: root.to_path_buf(),
            });
        }
        real
    } else {
        path.to_path_buf()
    };
    let meta = std::fs::metadata(&target).map_err(FileError::Unreadable)?;
    if !meta.is_file() {
        return Err(FileError::NotAFile);
    }
    if meta.len() > MAX_FILE {
        return Err(FileError::TooLarge { len: meta.len() });
    }
    let file = std::fs::File::open(&target).map_err(FileError::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::Unreadable)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(FileError::GrewTooLarge);
    }
    String::from_utf8(bytes).map_err(|_| FileError::NotUtf8)
}

/// Front matter keys other tools write that pith reads past.
const FOREIGN_KEYS: &[&str] = &[
    "allowed-tools",
    "disable-model-invocation",
    "subtask",
    "name",
];

/// A malformed command file, named with its file and line (`path:3: …`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{line}: {problem}", path.display())]
pub struct ParseError {
    pub path: PathBuf,
    pub line: usize,
    pub problem: Malformed,
}

/// What is wrong at that line of a command file: its front matter, or no text at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Malformed {
    #[error("the front matter is not closed with a `---` line")]
    Unclosed,
    #[error("expected `key: value`")]
    NotKeyValue,
    #[error(transparent)]
    Model(crate::config::load::BadModelName),
    #[error("agent must name an agent (letters, digits, '-' or '_')")]
    BadAgent,
    #[error("unknown front matter key `{0}` (known: description, argument-hint, model, agent)")]
    UnknownKey(String),
    #[error("the command has no text")]
    NoText,
}

/// A command file: optional front matter between `---` lines, then the body. The error names
/// the file and line (`path:3: …`).
pub fn parse(path: &Path, text: &str) -> Result<CustomCommand, ParseError> {
    let at = |line: usize, problem: Malformed| ParseError {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut cmd = CustomCommand {
        name: String::new(),
        description: String::new(),
        argument_hint: String::new(),
        model: None,
        agent: None,
        body: String::new(),
        source: Source::User,
        path: path.to_path_buf(),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut body_start = 0;
    if lines.first().is_some_and(|l| l.trim_end() == "---") {
        let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
            return Err(at(1, Malformed::Unclosed));
        };
        for (i, line) in lines[1..=end].iter().enumerate() {
            let n = i + 2;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(at(n, Malformed::NotKeyValue));
            };
            let value = unquote(value.trim());
            match key.trim() {
                "description" => cmd.description = crate::text::one_line(value),
                "argument-hint" => cmd.argument_hint = crate::text::one_line(value),
                "model" => {
                    if !value.is_empty() {
                        crate::config::load::check_model_name(value)
                            .map_err(|e| at(n, Malformed::Model(e)))?;
                        cmd.model = Some(value.to_string());
                    }
                }
                "agent" => {
                    if !value.is_empty() {
                        if !crate::config::agents::valid_name(value) {
                            return Err(at(n, Malformed::BadAgent));
                        }
                        cmd.agent = Some(value.to_string());
                    }
                }
                k if FOREIGN_KEYS.contains(&k) => {}
                other => {
                    return Err(at(n, Malformed::UnknownKey(other.to_string())));
                }
            }
        }
        body_start = end + 2;
    }
    cmd.body = lines[body_start.min(lines.len())..]
        .join("\n")
        .trim()
        .to_string();
    if cmd.body.is_empty() {
        return Err(at(body_start + 1, Malformed::NoText));
    }
    Ok(cmd)
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// `body` with `$ARGUMENTS` and `$1`…`$9` replaced; without any placeholder, non-empty
/// arguments are appended.
pub fn expand(body: &str, args: &str) -> String {
    let words = split_words(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let n = d as usize - '1' as usize;
            out.push_str(words.get(n).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    out
}

/// Words separated by whitespace; `"…"` or `'…'` keep a phrase together.
fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests;
