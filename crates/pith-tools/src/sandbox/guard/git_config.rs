//! Whether a git config file a command wrote holds only what `git init` and `git clone`
//! write: nothing git would run (no fsmonitor, hooksPath, filters, pager, editor, sshCommand,
//! aliases, includes, helpers…). Anything unknown counts as not plain (fail closed).

/// Keys (`section.key`, any subsection as `*`) that name nothing git runs.
const PLAIN_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "core.sharedrepository",
    "core.worktree",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.tagopt",
    "remote.*.prune",
    "remote.*.mirror",
    "remote.*.promisor",
    "remote.*.partialclonefilter",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.worktreeconfig",
    "extensions.partialclone",
    "pull.rebase",
    "pull.ff",
    "fetch.prune",
    "gc.auto",
    "init.defaultbranch",
    "user.name",
    "user.email",
    "lfs.repositoryformatversion",
    "submodule.*.url",
    "submodule.*.active",
];

/// Configs above this size are not read: not plain.
pub(super) const MAX_CONFIG: u64 = 64 * 1024;

/// Whether `text` (a git config file) holds only [`PLAIN_KEYS`], in the simple forms git
/// itself writes (no continuation lines, no `[section.sub]`, no key after a header).
pub(super) fn plain(text: &str) -> bool {
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.ends_with('\\') {
            return false;
        }
        if let Some(rest) = line.strip_prefix('[') {
            match header(rest) {
                Some(s) => section = s,
                None => return false,
            }
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line, ""),
        };
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return false;
        }
        let full = format!("{section}.{}", key.to_ascii_lowercase());
        if !PLAIN_KEYS.contains(&full.as_str()) {
            return false;
        }
        // `<transport>::<address>` runs the helper `git-remote-<transport>`.
        if full.ends_with("url") && value.contains("::") {
            return false;
        }
    }
    true
}

/// `core]` → `core`; `remote "origin"]` → `remote.*`; anything else → None.
fn header(rest: &str) -> Option<String> {
    let (head, after) = rest.split_once(']')?;
    if !after.trim().is_empty() {
        return None;
    }
    let name_ok =
        |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    match head.split_once(' ') {
        Some((name, sub)) => {
            let sub = sub.trim();
            (name_ok(name) && sub.len() >= 2 && sub.starts_with('"') && sub.ends_with('"'))
                .then(|| format!("{}.*", name.to_ascii_lowercase()))
        }
        None => name_ok(head).then(|| head.to_ascii_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn what_init_and_clone_write_is_plain() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        assert!(plain(init));
        let clone = format!(
            "{init}[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
        );
        assert!(plain(&clone));
        // A submodule's, and a partial clone's.
        assert!(plain(
            "[core]\n\tworktree = ../../../sub\n[remote \"origin\"]\n\tpromisor = true\n\tpartialclonefilter = blob:none\n"
        ));
        assert!(plain(""));
    }

    #[test]
    fn anything_git_runs_or_that_is_unknown_is_not_plain() {
        for bad in [
            "[core]\n\tfsmonitor = touch PWNED\n",
            "[core]\n\thooksPath = /tmp/h\n",
            "[core]\n\tpager = sh -c x\n",
            "[core]\n\teditor = x\n",
            "[core]\n\tsshCommand = x\n",
            "[alias]\n\tst = !touch PWNED\n",
            "[filter \"x\"]\n\tclean = touch PWNED\n",
            "[diff \"x\"]\n\ttextconv = x\n",
            "[include]\n\tpath = /tmp/evil\n",
            "[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n",
            "[credential]\n\thelper = !x\n",
            "[remote \"o\"]\n\turl = ext::sh -c touch% PWNED\n",
            "[remote \"o\"]\n\tuploadpack = touch PWNED\n",
            "[core.x]\n\tbare = false\n",
            "[core] fsmonitor = x\n",
            "[core]\n\tbare = false \\\n",
            "[core]\n\tfs\\\nmonitor = x\n",
            "[core\n",
        ] {
            assert!(!plain(bad), "{bad:?} passed as plain");
        }
    }
}
