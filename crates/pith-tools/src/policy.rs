//! The one definition of what no tool may change without the user, and of what no tool may
//! touch at all (SECURITY.md, "One policy").
//!
//! - **Protected** paths are the ones git, pith or your shell take commands or instructions
//!   from: `.git` at any depth (its config, hooks, everything in it; a `.git` file too), `.pith/`
//!   and `pith.toml` at any depth, the instruction files (`AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md` at any depth,
//!   the configured `instructions`), the skills folders `.claude/skills` and `.agents/skills`,
//!   the `--config` file, git's and the shell's start-up files
//!   in `$HOME`. Writing one always asks the user: no mode, rule, `--yes`, session grant or hook
//!   approves it (`permission`). Commands get them read-only (`sandbox::paths`).
//! - pith's **own state** — the data dir (trust store, stored keys, sandbox-support cache,
//!   sessions, logs), the config dir and the global config file — is never read or written by a
//!   tool; the tool-output folder is the one exception, and only for reading.
//!
//! A path is judged as given (made absolute, not resolved) and as resolved (links followed), so
//! neither a link to a protected file nor a protected name that links elsewhere gets through.

use std::path::{Component, Path, PathBuf};

use pith_config::path::lexical_normalize;

/// Names that git or pith take commands or instructions from, at any depth of the workspace
/// (the sandbox binds the ones in the workspace root read-only).
pub(crate) const PROTECTED_NAMES: &[&str] = &[
    ".git",
    "pith.toml",
    ".pith",
    "AGENTS.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    // the other skills folders pith reads (`.pith/skills` is under `.pith`)
    ".claude/skills",
    ".agents/skills",
];

/// Files and folders in `$HOME` that a shell (or git, anywhere) runs or reads commands from.
pub(crate) const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".pam_environment",
    ".config/fish",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd/user",
    ".gitconfig",
    ".config/git",
    // not the shell's, but run later all the same (red-team round: finding 4)
    ".bash_aliases",
    ".ssh",
    ".local/bin",
    ".vimrc",
    ".config/nvim",
    ".cargo/config.toml",
    ".cargo/config",
];

/// Why a path is protected (the `Display` text ends "… so writing it always asks").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protected {
    /// Inside (or is) a `.git`: git runs its hooks and configuration.
    Git,
    /// `pith.toml`: pith's configuration (its hooks run outside the sandbox).
    PithToml,
    /// Inside `.pith/`: the project's agents and commands.
    PithDir,
    /// An instruction file: it goes into the system prompt.
    Instructions,
    /// The `--config` file.
    ConfigFile,
    /// A shell or git start-up file in `$HOME`.
    Startup,
    /// Inside a project's `.claude/skills` or `.agents/skills`: its skills' instructions go to
    /// the model (ARCHITECTURE.md §4.7).
    Skills,
}

impl std::fmt::Display for Protected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Protected::Git => "it is git's (git runs the hooks and configuration in `.git`)",
            Protected::PithToml => "it is a pith.toml (pith runs the hooks it names)",
            Protected::PithDir => "it is in `.pith/` (pith's project agents and commands)",
            Protected::Instructions => "it is an instruction file pith puts in the system prompt",
            Protected::ConfigFile => "it is the --config file (pith runs the hooks it names)",
            Protected::Startup => "it is a start-up file your shell or git runs commands from",
            Protected::Skills => "it is in a skills folder (pith gives its skills to the model)",
        })
    }
}

/// How a path stands to pith's own state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnState {
    /// Not pith's.
    No,
    /// The tool-output folder (and the saved prompt images): readable, not writable.
    ToolOutput,
    /// pith's own state: neither readable nor writable.
    Yes,
}

/// The policy of one workspace: where pith's state is and what is protected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    workspace: PathBuf,
    home: Option<PathBuf>,
    /// The data dir, the config dir and the global config file (as given and resolved).
    own: Vec<PathBuf>,
    tool_output: Vec<PathBuf>,
    /// The `--config` file (as given and resolved).
    config_file: Vec<PathBuf>,
    /// The configured instruction files (as given and resolved).
    instructions: Vec<PathBuf>,
    /// What the sandbox hides from commands besides pith's state: the home secrets
    /// (`sandbox::paths::HOME_SECRETS`) and `sandbox_deny_read` (as given and resolved).
    hidden: Vec<PathBuf>,
}

impl Policy {
    /// The policy for `workspace` with pith's data dir there; `$HOME`, the config dir and the
    /// global config file are this machine's.
    pub fn new(workspace: &Path, data_dir: &Path) -> Policy {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let config_dir =
            directories::ProjectDirs::from("", "", "pith").map(|d| d.config_dir().to_path_buf());
        let mut own = vec![data_dir.to_path_buf()];
        own.extend(config_dir);
        own.extend(pith_config::load::default_global_file());
        let mut policy = Policy::with_paths(
            workspace,
            home,
            &own,
            &crate::truncate::output_dir(data_dir),
        );
        // the images a front end saved for a prompt (pasted from the clipboard, an editor's
        // image block): read as their `@path` mentions, like saved tool output, never written
        for dir in [
            pith_config::images::dir(data_dir),
            data_dir.join("acp").join("images"),
        ] {
            policy.tool_output.extend(forms(&dir));
        }
        policy
    }

    /// The policy with every place named (tests; [`new`](Self::new) finds them). A place that
    /// holds the workspace is not pith's state for it (a command must see its own workspace).
    pub(crate) fn with_paths(
        workspace: &Path,
        home: Option<PathBuf>,
        own: &[PathBuf],
        tool_output: &Path,
    ) -> Policy {
        let workspace = forms(workspace).pop().unwrap_or_default();
        let own = own
            .iter()
            .flat_map(|p| forms(p))
            .filter(|p| !workspace.starts_with(p))
            .collect();
        Policy {
            home,
            own,
            tool_output: forms(tool_output),
            config_file: Vec::new(),
            instructions: Vec::new(),
            hidden: Vec::new(),
            workspace,
        }
        .hiding(&[])
    }

    /// With `sandbox_deny_read` (absolute, or `~/…`) hidden too, besides the home secrets.
    pub fn hiding(mut self, deny_read: &[PathBuf]) -> Policy {
        let homes = self.home.as_deref().map(forms).unwrap_or_default();
        let secrets = homes.iter().flat_map(|h| {
            crate::sandbox::paths::HOME_SECRETS
                .iter()
                .map(|s| h.join(s))
        });
        let home = self.home.clone();
        let extra = deny_read
            .iter()
            .filter_map(move |p| match (p.strip_prefix("~"), &home) {
                (Ok(rest), Some(h)) => Some(h.join(rest)),
                _ => p.is_absolute().then(|| p.clone()),
            })
            .flat_map(|p| forms(&p));
        // (one that holds the workspace is not hidden from it: the sandbox does the same)
        let ws = self.workspace.clone();
        self.hidden = secrets
            .chain(extra)
            .filter(|h| !ws.starts_with(h))
            .collect();
        self
    }

    /// Whether `path` (absolute), as given or resolved, is in a path the sandbox hides from
    /// commands (a home secret, `sandbox_deny_read`; pith's own state is [`own_state`]).
    ///
    /// [`own_state`]: Self::own_state
    pub fn is_hidden(&self, path: &Path) -> bool {
        forms(path).iter().any(|p| self.is_hidden_resolved(p))
    }

    /// Whether any hidden path lies below `root` (resolved): a walk of it must look.
    pub(crate) fn hides_below(&self, root: &Path) -> bool {
        self.hidden.iter().any(|h| h.starts_with(root))
    }

    /// [`is_hidden`](Self::is_hidden) for a path already resolved (one a walk that follows no
    /// links reached below a resolved root). Cheap: no system call.
    pub(crate) fn is_hidden_resolved(&self, path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        // (bytes, not components: a walk asks this of every entry; both sides are normal)
        let p = path.as_os_str().as_bytes();
        self.hidden.iter().any(|h| {
            let h = h.as_os_str().as_bytes();
            p.starts_with(h) && (p.len() == h.len() || p[h.len()] == b'/')
        })
    }

    /// With the `--config` file and the configured instruction files (relative ones in the
    /// workspace).
    pub fn configured(mut self, config_file: Option<&Path>, instructions: &[PathBuf]) -> Policy {
        self.config_file = config_file.map(forms).unwrap_or_default();
        self.instructions = instructions
            .iter()
            .flat_map(|p| forms(&self.workspace.join(p)))
            .collect();
        self
    }

    /// Where `path` (absolute; resolved or not) stands to pith's own state. The tool-output
    /// folder counts only when the path as given AND as resolved are in it: a link planted
    /// there (the sandbox may write the folder) to a key is judged by where it leads.
    pub(crate) fn own_state(&self, path: &Path) -> OwnState {
        let mut all_output = true;
        for p in forms(path) {
            if self.tool_output.iter().any(|t| p.starts_with(t)) {
                continue;
            }
            all_output = false;
            if self.own.iter().any(|o| p.starts_with(o)) {
                return OwnState::Yes;
            }
        }
        if all_output {
            OwnState::ToolOutput
        } else {
            OwnState::No
        }
    }

    /// Whether a walk (which follows no links) that reaches `path` must not enter it: one of
    /// pith's own state folders or files, as given or resolved. Cheap: no system call.
    pub(crate) fn is_own_root(&self, path: &Path) -> bool {
        self.own.iter().any(|o| o == path)
    }

    /// Why writing `path` (absolute; resolved or not) always asks, or `None`.
    pub(crate) fn protected(&self, path: &Path) -> Option<Protected> {
        forms(path).iter().find_map(|p| self.protected_form(p))
    }

    fn protected_form(&self, path: &Path) -> Option<Protected> {
        if self.config_file.iter().any(|c| path == c) {
            return Some(Protected::ConfigFile);
        }
        if self.instructions.iter().any(|c| path == c) {
            return Some(Protected::Instructions);
        }
        if let Some(home) = &self.home
            && let Ok(rel) = path.strip_prefix(home)
            && SHELL_STARTUP.iter().any(|s| rel.starts_with(s))
        {
            return Some(Protected::Startup);
        }
        if self.home_dotfile(path) {
            return Some(Protected::Startup);
        }
        if git_dir::inside_git_dir(path) {
            return Some(Protected::Git);
        }
        // Inside the workspace only its own part counts (a workspace under a folder named
        // `.pith` is not all protected); outside, the whole path.
        let rel = path.strip_prefix(&self.workspace).unwrap_or(path);
        let names: Vec<&str> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect();
        let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        if names.iter().any(|n| is(n, ".git")) {
            return Some(Protected::Git);
        }
        if names.iter().any(|n| is(n, ".pith")) {
            return Some(Protected::PithDir);
        }
        if names
            .windows(2)
            .any(|w| (is(w[0], ".claude") || is(w[0], ".agents")) && is(w[1], "skills"))
        {
            return Some(Protected::Skills);
        }
        match names.last() {
            Some(n) if is(n, "pith.toml") => Some(Protected::PithToml),
            Some(n) if is(n, "AGENTS.md") || is(n, "CLAUDE.md") || is(n, "CLAUDE.local.md") => {
                Some(Protected::Instructions)
            }
            _ => None,
        }
    }

    /// Whether `path` is a dotfile or dot folder of `$HOME` (or in one) that a file tool must
    /// not change unasked: every one outside the workspace, and every one when the workspace
    /// holds `$HOME`. A workspace that is itself a dot folder of `$HOME` keeps its own files.
    fn home_dotfile(&self, path: &Path) -> bool {
        let Some(home) = &self.home else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(home) else {
            return false;
        };
        let dotted = matches!(rel.components().next(),
            Some(Component::Normal(n)) if n.to_string_lossy().starts_with('.'));
        dotted && (!path.starts_with(&self.workspace) || home.starts_with(&self.workspace))
    }

    /// The warning to give at start: see [`workspace_warning`].
    pub fn workspace_warning(&self) -> Option<String> {
        workspace_warning(&self.workspace, self.home.as_deref())
    }

    /// The shell start-up files to keep read-only for commands: see [`startup_files`].
    #[cfg(test)]
    pub(crate) fn startup_files(&self) -> Vec<PathBuf> {
        startup_files(&self.workspace, self.home.as_deref())
    }
}

/// The warning to give at start when `workspace` (canonical) is `home` or `/`: commands there
/// can change every file of the user's (the shell's start-up files stay protected).
pub fn workspace_warning(workspace: &Path, home: Option<&Path>) -> Option<String> {
    let at_home = home.is_some_and(|h| forms(h).iter().any(|h| h == workspace));
    let root = workspace == Path::new("/");
    (at_home || root).then(|| {
        format!(
            "the workspace is {}: pith may change any file below it. Your shell's start-up \
             files (~/.bashrc, ~/.profile, …) and git's configuration stay protected, but \
             consider starting pith in a project folder",
            if root { "/" } else { "your home folder" }
        )
    })
}

/// The shell start-up files in `home` that exist, when `workspace` (canonical) holds `home`
/// (`$HOME` or `/` as the workspace); none otherwise: commands cannot write there anyway. A
/// link is given as its target (what a bind protects).
pub(crate) fn startup_files(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(home) = home else {
        return Vec::new();
    };
    let home = forms(home).pop().unwrap_or_else(|| home.to_path_buf());
    if !home.starts_with(workspace) {
        return Vec::new();
    }
    SHELL_STARTUP
        .iter()
        .map(|s| home.join(s))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .collect()
}

/// `path` as given (made lexically normal) and resolved, when they differ.
fn forms(path: &Path) -> Vec<PathBuf> {
    let given = lexical_normalize(path);
    let real = pith_config::path::canonicalize_lenient(path);
    if real == given {
        vec![given]
    } else {
        vec![given, real]
    }
}

mod git_dir;
#[cfg(test)]
mod tests;
