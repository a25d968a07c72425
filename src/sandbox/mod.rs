//! The OS sandbox around the commands the `bash` tool runs, and the environment they get.
//!
//! On Linux, `workspace-write` confines writes to the workspace, the temp dir, pith's
//! tool-output folder and any `sandbox_writable` directories (Landlock); `read-only` allows no
//! writes at all; and unless `sandbox_network = true`, a seccomp filter stops the command from
//! creating network sockets (only Unix sockets are allowed). Both are applied in the child
//! between fork and exec and are inherited by everything it starts. Where the kernel lacks
//! support, pith says so once and runs commands under the permission rules alone.
//!
//! Commands never get the variables pith reads secrets from, nor ones named like secrets (see
//! [`crate::secrets::EnvPolicy`]).

#[cfg(target_os = "linux")]
mod linux;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::config::{Config, SandboxMode};
use crate::secrets::EnvPolicy;

const SANDBOX_PROMPT: &str = include_str!("../../prompts/tools/bash-sandbox.md");

/// How commands are run: the sandbox settings and the environment policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandPolicy {
    pub mode: SandboxMode,
    pub network: bool,
    /// Extra writable directories (`sandbox_writable`), absolute.
    pub writable: Vec<PathBuf>,
    pub env: EnvPolicy,
}

/// What the kernel offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock: Option<i32>,
    pub seccomp: bool,
    /// Why part of the sandbox is missing, in words for the user.
    pub missing: Option<String>,
}

/// What the kernel offers, probed once.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

#[cfg(target_os = "linux")]
fn probe() -> Support {
    linux::probe()
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Support {
    Support {
        landlock: None,
        seccomp: false,
        missing: Some(format!(
            "the command sandbox is only implemented on Linux, not on {}",
            std::env::consts::OS
        )),
    }
}

impl CommandPolicy {
    pub fn from_config(config: &Config) -> CommandPolicy {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let writable = config
            .sandbox_writable
            .iter()
            .map(|p| match (p.strip_prefix("~"), &home) {
                (Ok(rest), Some(h)) => h.join(rest),
                _ => p.clone(),
            })
            .filter(|p| p.is_absolute())
            .collect();
        CommandPolicy {
            mode: config.sandbox,
            network: config.sandbox_network,
            writable,
            env: EnvPolicy::from_config(config),
        }
    }

    /// Whether the write sandbox is in force for commands (configured, and supported here).
    pub fn confines_writes(&self) -> bool {
        self.mode != SandboxMode::Off && support().landlock.is_some()
    }

    /// Whether the network is blocked for commands (configured, and supported here).
    pub fn blocks_network(&self) -> bool {
        self.mode != SandboxMode::Off && !self.network && support().seccomp
    }

    /// Whether commands run in any sandbox at all.
    pub fn active(&self) -> bool {
        self.confines_writes() || self.blocks_network()
    }

    /// The directories commands may write to for this workspace (workspace-write mode);
    /// `outputs` is pith's saved tool-output folder.
    pub fn writable_roots(&self, workspace: &Path, outputs: &Path) -> Vec<PathBuf> {
        if self.mode == SandboxMode::ReadOnly {
            return Vec::new();
        }
        let mut roots = vec![workspace.to_path_buf(), PathBuf::from("/tmp")];
        let tmp = std::env::temp_dir();
        if !roots.contains(&tmp) {
            roots.push(tmp);
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
            "they cannot write any file (read-only sandbox)".to_string()
        } else {
            let mut places = vec![
                "the workspace".to_string(),
                "the temp dir (/tmp)".to_string(),
                "pith's saved tool outputs".to_string(),
            ];
            places.extend(self.writable.iter().map(|p| p.display().to_string()));
            format!("they can write only inside {}", places.join(", "))
        };
        let (network, errors) = if self.blocks_network() {
            (
                "They cannot reach the network: creating an internet socket fails, so downloads, package installs and DNS lookups fail.",
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

    /// A one-line warning when the configured sandbox cannot be applied here.
    pub fn unavailable_warning(&self) -> Option<String> {
        self.warning_for(support())
    }

    fn warning_for(&self, s: &Support) -> Option<String> {
        if self.mode == SandboxMode::Off {
            return None;
        }
        let writes_missing = s.landlock.is_none();
        let network_missing = !self.network && !s.seccomp;
        if !writes_missing && !network_missing {
            return None;
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
}

/// How one command was started.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    pub confined_writes: bool,
    pub blocked_network: bool,
    pub read_only: bool,
    pub writable: Vec<PathBuf>,
}

impl Applied {
    pub fn sandboxed(&self) -> bool {
        self.confined_writes || self.blocked_network
    }

    /// Whether a failed command's output looks like the sandbox stopped it.
    pub fn likely_denied(&self, output: &str) -> bool {
        if !self.sandboxed() {
            return false;
        }
        let lower = output.to_lowercase();
        let write = self.confined_writes
            && [
                "permission denied",
                "operation not permitted",
                "read-only file system",
                "eacces",
                "eperm",
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
        write || network
    }

    /// What the model is told after a failure that looks like the sandbox's doing.
    pub fn denial_note(&self) -> String {
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
        if self.blocked_network {
            limits.push("no network".to_string());
        }
        format!(
            "[sandbox] This command ran in pith's sandbox ({}), and the failure above looks like the sandbox stopped it. \
             If it must run outside the sandbox, call bash again with the same command and \"unsandboxed\": true; the user will be asked to approve it.",
            limits.join("; ")
        )
    }
}

/// Prepares `cmd` to run under `policy`: removes withheld variables from its environment and,
/// unless `unsandboxed`, installs the sandbox (applied in the child before exec). `outputs` is
/// pith's saved tool-output folder, writable like the workspace.
pub fn apply(
    cmd: &mut tokio::process::Command,
    policy: &CommandPolicy,
    workspace: &Path,
    outputs: &Path,
    unsandboxed: bool,
) -> std::io::Result<Applied> {
    for name in policy.env.withheld(std::env::vars_os().map(|(k, _)| k)) {
        cmd.env_remove(name);
    }
    if unsandboxed || !policy.active() {
        return Ok(Applied::default());
    }
    let applied = Applied {
        confined_writes: policy.confines_writes(),
        blocked_network: policy.blocks_network(),
        read_only: policy.mode == SandboxMode::ReadOnly,
        writable: policy.writable_roots(workspace, outputs),
    };
    install(cmd, &applied)?;
    Ok(applied)
}

#[cfg(target_os = "linux")]
fn install(cmd: &mut tokio::process::Command, applied: &Applied) -> std::io::Result<()> {
    let prepared = linux::Prepared::new(applied)?;
    // SAFETY: `Prepared::enter` makes only async-signal-safe system calls (prctl,
    // landlock_restrict_self, seccomp) on data built before the fork.
    unsafe {
        cmd.pre_exec(move || prepared.enter());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn install(_cmd: &mut tokio::process::Command, _applied: &Applied) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests;
