//! The OS sandbox around the commands the `bash` tool runs, and the environment they get
//! (ARCHITECTURE.md §11).
//!
//! On Linux, `workspace-write` confines writes to the workspace, the temp dir, pith's
//! tool-output folder and any `sandbox_writable` directories (Landlock); `read-only` allows no
//! writes at all. pith's own state (data dir, config dir) and the user's secrets (`~/.ssh`, …,
//! `sandbox_deny_read`) are hidden; the files git and pith take commands from (`.git`,
//! `pith.toml`, `.pith/`, the instruction files) are read-only; the command runs in user, mount
//! and PID namespaces of its own where the kernel allows them (`paths.rs`, `linux/`). Unless
//! `sandbox_network = true`, a seccomp filter stops the command from creating sockets (Unix
//! ones included) and it gets a network namespace of its own. Every process the command
//! starts ends with the call (`reaper.rs`). Where the kernel lacks support, pith says so once
//! and runs commands under what remains.
//!
//! Commands never get the variables pith reads secrets from, nor ones named like secrets (see
//! [`pith_secrets::EnvPolicy`]).

mod caps;
mod guard;
#[cfg(target_os = "linux")]
mod linux;
pub mod paths;
mod private_tmp;
mod reaper;
mod support_cache;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use caps::Limits;
pub use guard::Guard;
pub use paths::{Hidden, StatePaths};
use pith_config::{Config, SandboxMode};
use pith_secrets::EnvPolicy;
pub use private_tmp::Tmp;
pub use reaper::STOP_SIGNAL;

const SANDBOX_PROMPT: &str = include_str!("../../../../prompts/tools/bash-sandbox.md");

/// How commands are run: the sandbox settings and the environment policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandPolicy {
    pub mode: SandboxMode,
    pub network: bool,
    /// Extra writable directories (`sandbox_writable`), absolute.
    pub writable: Vec<PathBuf>,
    pub env: EnvPolicy,
    /// The home and config dirs and `sandbox_deny_read`: what is hidden from commands.
    pub state: StatePaths,
    /// The caps on a command's processes, memory and `/tmp` (`sandbox_max_processes`, …).
    pub limits: Limits,
    /// Files outside the usual protected names that commands may not change: the configured
    /// `instructions` (relative ones in the workspace) and the `--config` file.
    pub protect: Vec<PathBuf>,
}

/// What the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Support {
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock: Option<i32>,
    pub seccomp: bool,
    /// Why user namespaces cannot be used here (`None`: they can).
    pub namespaces: Option<String>,
    /// A fresh `/proc` can be mounted in a command's PID namespace.
    pub proc: bool,
    /// Why part of the sandbox is missing, in words for the user.
    pub missing: Option<String>,
}

impl Support {
    /// Commands run in user, mount and PID namespaces of their own.
    pub fn has_namespaces(&self) -> bool {
        self.namespaces.is_none()
    }

    /// Landlock can stop signals and abstract Unix sockets that leave the sandbox (ABI 6).
    pub(crate) fn scoped(&self) -> bool {
        self.landlock.is_some_and(|abi| abi >= 6)
    }
}

static SUPPORT: OnceLock<Support> = OnceLock::new();

/// What the kernel offers, probed once (or remembered: [`support_in`]).
pub fn support() -> &'static Support {
    SUPPORT.get_or_init(probe)
}

/// [`support`], remembered in `data_dir` until the next boot (`support_cache.rs`): a start
/// after the first one of a boot starts no test process.
pub fn support_in(data_dir: &Path) -> &'static Support {
    SUPPORT.get_or_init(|| {
        support_cache::load(data_dir).unwrap_or_else(|| {
            let s = probe();
            support_cache::save(data_dir, &s);
            s
        })
    })
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    linux::probe()
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support {
        namespaces: Some("they are a Linux feature".into()),
        missing: Some(format!(
            "the command sandbox is only implemented on Linux, not on {}",
            std::env::consts::OS
        )),
        ..Support::default()
    }
}

/// `~/rest` with the home folder filled in; absolute paths only.
fn expand_home(paths: &[PathBuf], home: Option<&Path>) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| match (p.strip_prefix("~"), home) {
            (Ok(rest), Some(h)) => h.join(rest),
            _ => p.clone(),
        })
        .filter(|p| p.is_absolute())
        .collect()
}

impl CommandPolicy {
    pub fn from_config(config: &Config) -> CommandPolicy {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let extra = expand_home(&config.sandbox_deny_read, home.as_deref());
        let mut protect = expand_home(&config.instructions, home.as_deref());
        protect.extend(
            config
                .instructions
                .iter()
                .filter(|p| p.is_relative() && !p.starts_with("~"))
                .cloned(),
        );
        protect.extend(config.config_file.iter().cloned());
        CommandPolicy {
            mode: config.sandbox,
            network: config.sandbox_network,
            writable: expand_home(&config.sandbox_writable, home.as_deref()),
            env: EnvPolicy::from_config(config),
            state: StatePaths::from_env(extra),
            limits: Limits {
                processes: Some(config.sandbox_max_processes),
                memory: config.sandbox_memory_max,
                tmp_size: config.sandbox_tmp_size,
            },
            protect,
        }
    }

    /// This policy with the workspace read-only too (plan mode: nothing is written, whatever
    /// the command's arguments say). `off` stays off.
    pub(crate) fn read_only(&self) -> CommandPolicy {
        let mut p = self.clone();
        if p.mode != SandboxMode::Off {
            p.mode = SandboxMode::ReadOnly;
        }
        p
    }

    /// Whether the write sandbox is in force for commands (configured, and supported here).
    pub(crate) fn confines_writes(&self) -> bool {
        self.mode != SandboxMode::Off && support().landlock.is_some()
    }

    /// Whether the network is blocked for commands (configured, and supported here).
    pub(crate) fn blocks_network(&self) -> bool {
        self.mode != SandboxMode::Off && !self.network && support().seccomp
    }

    /// Whether commands run in any sandbox at all.
    pub(crate) fn active(&self) -> bool {
        self.confines_writes() || self.blocks_network()
    }

    /// The directories commands may write to for this workspace (workspace-write mode);
    /// `outputs` is pith's saved tool-output folder, `tmp` the temp dir the command gets.
    pub(crate) fn writable_roots(
        &self,
        workspace: &Path,
        outputs: &Path,
        tmp: &Tmp,
    ) -> Vec<PathBuf> {
        if self.mode == SandboxMode::ReadOnly {
            // Nothing of the machine's; a private /tmp is the command's own and gone after it.
            return match tmp {
                Tmp::Mounted => vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")],
                _ => Vec::new(),
            };
        }
        let mut roots = vec![workspace.to_path_buf()];
        match tmp {
            Tmp::Mounted => roots.extend([PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]),
            Tmp::Dir(dir) => roots.push(dir.clone()),
            Tmp::Shared => {
                roots.push(PathBuf::from("/tmp"));
                let tmp = std::env::temp_dir();
                if !roots.contains(&tmp) {
                    roots.push(tmp);
                }
            }
        }
        roots.push(outputs.to_path_buf());
        roots.extend(self.writable.iter().cloned());
        roots
    }

    /// The paragraph of the bash tool's description that tells the model what the sandbox
    /// allows (empty when there is no sandbox).
    pub fn describe(&self) -> String {
        if !self.active() {
            return String::new();
        }
        let writes = if !self.confines_writes() {
            "writes are not confined".to_string()
        } else if self.mode == SandboxMode::ReadOnly {
            if support().has_namespaces() {
                "they cannot write any file (read-only sandbox) but in their own empty /tmp, which is gone after the command".to_string()
            } else {
                "they cannot write any file (read-only sandbox)".to_string()
            }
        } else {
            let mut places = vec![
                "the workspace".to_string(),
                "a private temp dir ($TMPDIR, not the machine's /tmp)".to_string(),
                "pith's saved tool outputs".to_string(),
            ];
            places.extend(self.writable.iter().map(|p| p.display().to_string()));
            format!("they can write only inside {}", places.join(", "))
        };
        let (network, errors) = if self.blocks_network() {
            (
                "They cannot reach the network or Unix sockets: downloads, package installs and DNS lookups fail.",
                ", or a host that cannot be resolved",
            )
        } else {
            ("They may use the network.", "")
        };
        SANDBOX_PROMPT
            .trim_end()
            .replace("{writes}", &writes)
            .replace("{network}", network)
            .replace("{network_errors}", errors)
    }

    /// A one-line warning when the configured sandbox cannot be applied here, or only in
    /// part (naming what is then missing).
    pub fn unavailable_warning(&self) -> Option<String> {
        match (
            self.warning_for(support()),
            caps::missing(self.mode, &self.limits, support()),
        ) {
            (Some(w), Some(c)) => Some(format!("{w}; {c}")),
            (w, c) => w.or(c),
        }
    }

    fn warning_for(&self, s: &Support) -> Option<String> {
        if self.mode == SandboxMode::Off {
            return None;
        }
        let writes_missing = s.landlock.is_none();
        let network_missing = !self.network && !s.seccomp;
        if !writes_missing && !network_missing {
            return self.weaker(s).map(|w| {
                format!(
                    "sandbox = \"{}\" is in force, but not all of it: {w}",
                    self.mode.as_str()
                )
            });
        }
        let what = match (writes_missing, network_missing) {
            (true, true) => "commands run without a sandbox",
            (true, false) => "commands' writes are not confined",
            _ => "commands' network access is not blocked",
        };
        Some(format!(
            "sandbox = \"{}\" is set, but {}: {what}, under the permission rules alone",
            self.mode.as_str(),
            s.missing.as_deref().unwrap_or("this system lacks support")
        ))
    }

    /// The protections missing on this kernel although Landlock and seccomp work.
    fn weaker(&self, s: &Support) -> Option<String> {
        let mut lost = Vec::new();
        if let Some(why) = &s.namespaces {
            lost.push(format!(
                "user namespaces are unavailable ({why}), so .git, pith.toml, .pith, the instruction files and the skills folders are checked and repaired after each command instead of being read-only, secrets are hidden by Landlock alone (listing the home folder fails), and a command's leftover processes are ended by a reaper instead of a PID namespace"
            ));
            if !s.scoped() {
                lost.push(format!(
                    "the kernel's Landlock (ABI {}) cannot stop commands from signalling processes outside the sandbox",
                    s.landlock.unwrap_or(0)
                ));
            }
        } else if !s.proc {
            lost.push(
                "a fresh /proc cannot be mounted for commands, so they see pith's other processes in /proc"
                    .to_string(),
            );
        }
        if self.network && !s.scoped() && s.namespaces.is_some() {
            lost.push("with sandbox_network on, commands can reach abstract Unix sockets".into());
        }
        (!lost.is_empty()).then(|| lost.join("; "))
    }

    /// The sandbox for one command in `workspace` (`data_dir` is pith's, `outputs` its
    /// tool-output folder inside it), as this kernel allows it.
    pub fn plan(&self, workspace: &Path, data_dir: &Path, outputs: &Path) -> Applied {
        self.plan_for(support(), workspace, data_dir, outputs)
    }

    /// [`CommandPolicy::plan`] on a kernel that offers `s`.
    fn plan_for(&self, s: &Support, workspace: &Path, data_dir: &Path, outputs: &Path) -> Applied {
        let confined_writes = self.mode != SandboxMode::Off && s.landlock.is_some();
        let blocked_network = self.mode != SandboxMode::Off && !self.network && s.seccomp;
        let namespaces = (confined_writes || blocked_network) && s.has_namespaces();
        let mut notes = Vec::new();
        let tmp = private_tmp::choose(namespaces, confined_writes, workspace, &mut notes);
        let writable = self.writable_roots(workspace, outputs, &tmp);
        let protected = if namespaces {
            let extra = paths::resolve_extra(&self.protect, workspace);
            // A private /tmp holds nothing yet: the machine's is no place to look for links.
            let walk: Vec<PathBuf> = writable
                .iter()
                .filter(|p| {
                    tmp != Tmp::Mounted
                        || !(p.as_path() == Path::new("/tmp")
                            || p.as_path() == Path::new("/dev/shm"))
                })
                .cloned()
                .collect();
            paths::read_only(workspace, &extra, &walk, &mut notes)
        } else {
            Vec::new()
        };
        let hidden = if namespaces || confined_writes {
            paths::hidden(&self.state, data_dir, outputs, workspace)
        } else {
            Vec::new()
        };
        Applied {
            confined_writes,
            blocked_network,
            read_only: self.mode == SandboxMode::ReadOnly,
            writable,
            hidden,
            protected,
            namespaces,
            proc: namespaces && s.proc,
            scoped: s.scoped(),
            workspace: workspace.to_path_buf(),
            tmp,
            limits: self.limits,
            notes,
        }
    }
}

/// How one command was started.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    pub(crate) confined_writes: bool,
    pub(crate) blocked_network: bool,
    pub(crate) read_only: bool,
    pub writable: Vec<PathBuf>,
    /// Paths the command cannot see (pith's state, the user's secrets).
    pub hidden: Vec<Hidden>,
    /// Paths mounted read-only (`.git`, `pith.toml`, …).
    pub protected: Vec<PathBuf>,
    /// In user, mount and PID namespaces of its own.
    pub namespaces: bool,
    /// With a fresh `/proc` (only its own processes in it).
    pub proc: bool,
    /// Landlock scopes signals and abstract Unix sockets to the sandbox.
    pub(crate) scoped: bool,
    /// The workspace (kept visible in a private `/tmp` that covers it).
    pub workspace: PathBuf,
    /// The command's temp dir.
    pub tmp: Tmp,
    /// Its caps.
    pub limits: Limits,
    /// What could not be protected as planned, for the model and the log.
    pub notes: Vec<String>,
}

impl Applied {
    pub(crate) fn sandboxed(&self) -> bool {
        self.confined_writes || self.blocked_network
    }

    /// Whether a failed command's output looks like the sandbox stopped it.
    pub(crate) fn likely_denied(&self, output: &str) -> bool {
        if !self.sandboxed() {
            return false;
        }
        let lower = output.to_lowercase();
        let write = (self.confined_writes || !self.protected.is_empty())
            && [
                "permission denied",
                "operation not permitted",
                "read-only file system",
                "device or resource busy",
                "eacces",
                "eperm",
                "erofs",
            ]
            .iter()
            .any(|m| lower.contains(m));
        let network = self.blocked_network
            && [
                "operation not permitted",
                "could not resolve",
                "couldn't resolve",
                "name resolution",
                "name or service not known",
                "eai_again",
                "getaddrinfo",
                "network is unreachable",
                "failed to connect",
                "eperm",
            ]
            .iter()
            .any(|m| lower.contains(m));
        // A hidden file reads as empty and a hidden folder as empty: name them when mentioned.
        let hidden = self
            .hidden
            .iter()
            .any(|h| h.path.to_str().is_some_and(|p| output.contains(p)));
        write || network || hidden
    }

    /// What the model is told after a failure that looks like the sandbox's doing.
    pub(crate) fn denial_note(&self) -> String {
        let mut limits = Vec::new();
        if self.confined_writes {
            if self.read_only {
                limits.push("no writes".to_string());
            } else {
                let places: Vec<String> = self
                    .writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                limits.push(format!("writes only in {}", places.join(", ")));
            }
        }
        if !self.protected.is_empty() {
            limits.push(
                ".git, pith.toml, .pith, the instruction files and the skills folders read-only (change those with the write or edit tool)"
                    .to_string(),
            );
        }
        if self.blocked_network {
            limits.push("no network, no Unix sockets".to_string());
        }
        if !self.hidden.is_empty() {
            let hidden: Vec<String> = self
                .hidden
                .iter()
                .map(|h| h.path.display().to_string())
                .collect();
            limits.push(format!(
                "pith's state and secrets hidden (they read as empty): {}",
                hidden.join(", ")
            ));
        }
        format!(
            "[sandbox] This command ran in pith's sandbox ({}), and the failure above looks like the sandbox stopped it. \
             If it must run outside the sandbox, call bash again with the same command and \"unsandboxed\": true; the user will be asked to approve it.",
            limits.join("; ")
        )
    }
}

/// The sandbox of one command, prepared in the parent (see `linux/`).
#[cfg(target_os = "linux")]
pub use linux::Prepared;

/// No sandbox to enter on this system.
#[cfg(not(target_os = "linux"))]
pub(crate) struct Prepared;

#[cfg(not(target_os = "linux"))]
impl Prepared {
    pub(crate) fn pid_namespace(&self) -> bool {
        false
    }
    pub(crate) fn enter_outer(&self) -> std::io::Result<()> {
        Ok(())
    }
    pub(crate) fn enter_inner(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Prepares `cmd` to run under `policy`: removes withheld variables from its environment,
/// starts it in a session of its own under a reaper that ends its whole process tree with it
/// (and with pith), and, unless `unsandboxed`, inside the sandbox. `data_dir` is pith's data
/// dir, `outputs` its tool-output folder (writable like the workspace).
pub fn apply(
    cmd: &mut tokio::process::Command,
    policy: &CommandPolicy,
    workspace: &Path,
    (data_dir, outputs): (&Path, &Path),
    unsandboxed: bool,
) -> std::io::Result<Applied> {
    for name in policy.env.withheld(std::env::vars_os().map(|(k, _)| k)) {
        cmd.env_remove(name);
    }
    let (applied, prepared) = if unsandboxed || !policy.active() {
        (Applied::default(), None)
    } else {
        let applied = policy.plan(workspace, data_dir, outputs);
        let prepared = prepare(&applied)?;
        match &applied.tmp {
            Tmp::Mounted => {
                cmd.env("TMPDIR", "/tmp");
            }
            Tmp::Dir(dir) => {
                cmd.env("TMPDIR", dir);
            }
            Tmp::Shared => {}
        }
        (applied, prepared)
    };
    // SAFETY: the setup makes only async-signal-safe system calls on data prepared here
    // (see `reaper`).
    unsafe {
        cmd.pre_exec(reaper::child_setup(prepared));
    }
    Ok(applied)
}

#[cfg(target_os = "linux")]
fn prepare(applied: &Applied) -> std::io::Result<Option<Prepared>> {
    Prepared::new(applied).map(Some)
}

#[cfg(not(target_os = "linux"))]
fn prepare(_applied: &Applied) -> std::io::Result<Option<Prepared>> {
    Ok(None)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod isolation_tests;
