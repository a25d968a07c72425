//! Keys out of pith's own process: after start-up the variables pith reads secrets from are
//! taken out of its environment — and out of the block the kernel shows as
//! `/proc/<pith>/environ`, which unsetting a variable does not change — into memory only, and
//! the process is made non-dumpable so `/proc/<pith>/mem` and friends stay closed to other
//! processes of the user (a command that escaped the sandbox, an `npm` post-install script).
//! Scrubbing what pith writes stays as a second line, not the defence.

use std::collections::HashMap;
use std::sync::RwLock;

use super::EnvPolicy;

/// The variables taken out of the environment: name → value.
static SEALED: RwLock<Option<HashMap<String, String>>> = RwLock::new(None);

/// The value of the environment variable `name`, also when [`seal`] took it out of the
/// environment. Every lookup of a key variable goes through here.
pub fn env_var(name: &str) -> Option<String> {
    if let Ok(sealed) = SEALED.read()
        && let Some(v) = sealed.as_ref().and_then(|m| m.get(name))
    {
        return Some(v.clone());
    }
    std::env::var(name).ok()
}

/// Takes every variable `policy` withholds from commands out of the process environment, keeps
/// its value for [`env_var`], wipes it from the start-up environment block, and makes the
/// process non-dumpable. Returns the names taken.
///
/// # Safety
/// No other thread may exist: the environment is changed.
pub unsafe fn seal(policy: &EnvPolicy) -> Vec<String> {
    let names = policy.withheld(std::env::vars_os().map(|(k, _)| k));
    let mut taken = Vec::new();
    let Ok(mut sealed) = SEALED.write() else {
        return taken;
    };
    let sealed = sealed.get_or_insert_with(HashMap::new);
    for name in names {
        let Some(value) = std::env::var_os(&name) else {
            continue;
        };
        if let Ok(v) = value.into_string() {
            sealed.insert(name.clone(), v);
        }
        // SAFETY: the caller guarantees a single thread.
        unsafe { std::env::remove_var(&name) };
        taken.push(name);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the variables were removed from `environ` first: nothing points into the bytes.
    unsafe {
        wipe_startup_block(&taken);
    }
    make_non_dumpable();
    taken
}

/// Makes the process non-dumpable: other processes of the user cannot read its memory or
/// environment through `/proc` or attach a debugger (a command pith runs is dumpable again once
/// it executes its program).
fn make_non_dumpable() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain system call.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Overwrites the `NAME=value` strings of `names` in the environment block the process was
/// started with (what `/proc/<pid>/environ` reads), found through `/proc/self/stat`.
///
/// # Safety
/// No pointer into the block may still be used for those strings (they were unset first).
#[cfg(target_os = "linux")]
unsafe fn wipe_startup_block(names: &[String]) {
    if names.is_empty() {
        return;
    }
    let Some((start, end)) = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .as_deref()
        .and_then(env_block_bounds)
    else {
        tracing::warn!("cannot find the start-up environment block to wipe the key variables");
        return;
    };
    if end <= start {
        return;
    }
    // SAFETY: the kernel reports [start, end) as this process's environment strings, on its
    // writable stack.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    for entry in block.split_mut(|b| *b == 0) {
        let name_len = entry.iter().position(|b| *b == b'=').unwrap_or(entry.len());
        let name = &entry[..name_len];
        if names.iter().any(|n| n.as_bytes() == name) {
            entry.fill(0);
        }
    }
}

/// `env_start` and `env_end` (fields 50 and 51) of a `/proc/<pid>/stat` line.
fn env_block_bounds(stat: &str) -> Option<(usize, usize)> {
    // The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3.
    let start = fields.get(50 - 3)?.parse().ok()?;
    let end = fields.get(51 - 3)?.parse().ok()?;
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_block_bounds_are_read_after_the_command_name() {
        let mut stat = String::from("4242 (a b) c) S");
        for n in 4..=52 {
            stat.push_str(&format!(" {n}"));
        }
        assert_eq!(env_block_bounds(&stat), Some((50, 51)));
        assert_eq!(env_block_bounds("1 (x) S 1 2"), None);
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let (start, end) = env_block_bounds(&own).unwrap();
        assert!(start > 0 && end >= start);
    }

    #[test]
    fn the_process_is_made_non_dumpable() {
        make_non_dumpable();
        // SAFETY: plain system calls.
        let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
        // Put back, for the other tests in this process.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
        assert_eq!(dumpable, 0);
    }
}
