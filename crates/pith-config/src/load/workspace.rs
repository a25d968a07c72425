//! The workspace's own `pith.toml` (and a `--config` file kept inside the workspace): trusted,
//! it is used whole; untrusted, it is reduced to its harmless keys (`trust.rs`) *before* it is
//! checked, so a repository's file cannot stop pith from starting — what it got wrong is one
//! warning and the file is left out.
//!
//! A directory listed in `trusted_directories` trusts the files below it as they were when pith
//! first saw the entry (`trusted::Listings`): one planted or rewritten since is untrusted.

use std::path::{Path, PathBuf};

use super::{ConfigError, FileLayer, LoadOptions, Trust, WorkspaceTrust, located, parse_file};

/// The workspace file's layer and its trust (`None`: an untrusted file that is ignored, with a
/// warning saying why). `context`: the other files' servers its `[mcp.NAME]` tables complete.
pub(super) fn layer(
    opts: &LoadOptions,
    path: &Path,
    text: &str,
    merged: &toml::Table,
    context: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<(Option<FileLayer>, WorkspaceTrust), ConfigError> {
    let listing = listed_for(opts, merged, path);
    let trusted = opts.trust == Trust::Trusted || listing == Listed::Covered;
    if trusted {
        let mut layer = parse_file(path, text, context, warnings)?;
        let trust = restrict(opts, listing, &mut layer.table, merged);
        return Ok((Some(layer), trust));
    }
    let ignored = |e: ConfigError, warnings: &mut Vec<String>| {
        warnings.push(format!(
            "{e}; the file is ignored (this directory is not trusted, so its errors do not stop pith)"
        ));
    };
    let mut plain: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        Err(e) => {
            let at = located(path, text, e.span().unwrap_or(0..0).start, e.message());
            ignored(at, warnings);
            return Ok((None, WorkspaceTrust::default()));
        }
    };
    let mut trust = restrict(opts, listing, &mut plain, merged);
    super::usable::drop_unusable(&mut plain, merged, opts.has_key, &mut trust.ignored);
    let filtered = toml::to_string(&plain).unwrap_or_default();
    let mut quiet = Vec::new();
    match parse_file(path, &filtered, context, &mut quiet) {
        Ok(layer) => {
            warnings.extend(quiet);
            Ok((Some(layer), trust))
        }
        Err(e) => {
            // Named where the user can find it: the first error of the file as written.
            let shown = parse_file(path, text, context, &mut Vec::new())
                .err()
                .unwrap_or(e);
            ignored(shown, warnings);
            Ok((None, trust))
        }
    }
}

/// Applies the trust rules to the workspace file's layer.
fn restrict(
    opts: &LoadOptions,
    listing: Listed,
    layer: &mut toml::Table,
    trusted: &toml::Table,
) -> WorkspaceTrust {
    let mut ignored = Vec::new();
    // Only the user's own files say which directories are trusted.
    if layer.remove("trusted_directories").is_some() {
        ignored.push("trusted_directories".to_string());
    }
    let listed = listing == Listed::Covered;
    let decided = opts.trust == Trust::Trusted;
    if !(decided || listed) {
        ignored.extend(super::trust::restrict(layer, trusted, &opts.workspace));
    }
    WorkspaceTrust {
        trusted: decided || listed,
        listed,
        newer_than_listing: listing == Listed::Newer,
        ignored,
    }
}

/// How `trusted_directories` judges a config file of the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listed {
    /// The workspace lies in no listed directory.
    No,
    /// It does, and the file is as it was when pith first saw the listing (or there is no
    /// record to keep: no data dir).
    Covered,
    /// It does, but the file was created or changed since: it is not trusted by the listing.
    Newer,
}

/// Whether the workspace lies in one of the `trusted_directories` of the user's own files, and
/// whether that listing covers `file`.
pub(super) fn listed_for(opts: &LoadOptions, trusted: &toml::Table, file: &Path) -> Listed {
    let dirs = listed_dirs(&opts.workspace, trusted);
    if dirs.is_empty() {
        return Listed::No;
    }
    let Some(data_dir) = &opts.data_dir else {
        return Listed::Covered;
    };
    let listings = crate::trusted::Listings::new(data_dir);
    if dirs.iter().any(|d| listings.covers(d, file)) {
        Listed::Covered
    } else {
        Listed::Newer
    }
}

/// [`listed_for`] over the workspace's files that only trust opens: its `pith.toml`, and
/// `.pith` with everything in it (a folder's status changes when an entry is added, renamed or
/// removed). Covered only when every one is.
pub(super) fn listed_for_workspace(opts: &LoadOptions, trusted: &toml::Table) -> Listed {
    let mut files = vec![opts.workspace.join("pith.toml")];
    collect_entries(&opts.workspace.join(".pith"), 4, &mut files);
    let mut result = Listed::No;
    for file in &files {
        match listed_for(opts, trusted, file) {
            Listed::No => return Listed::No,
            Listed::Newer => return Listed::Newer,
            Listed::Covered => result = Listed::Covered,
        }
    }
    result
}

/// `dir` and what is below it, `depth` levels down, at most 2,000 entries.
fn collect_entries(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if out.len() > 2_000 || std::fs::symlink_metadata(dir).is_err() {
        return;
    }
    out.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && depth > 0 {
            collect_entries(&path, depth - 1, out);
        } else if out.len() <= 2_000 {
            out.push(path);
        }
    }
}

/// The directories of `trusted_directories` (the user's own files) that hold `workspace`.
fn listed_dirs(workspace: &Path, trusted: &toml::Table) -> Vec<PathBuf> {
    let Some(toml::Value::Array(dirs)) = trusted.get("trusted_directories") else {
        return Vec::new();
    };
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    dirs.iter()
        .filter_map(toml::Value::as_str)
        .filter_map(|d| {
            let dir = match (d.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => PathBuf::from(d),
            };
            let dir = dir.canonicalize().unwrap_or(dir);
            (dir.is_absolute() && ws.starts_with(&dir)).then_some(dir)
        })
        .collect()
}

/// The one-line warning naming what an untrusted workspace file could not set.
pub(super) fn untrusted_warning(path: &Path, t: &WorkspaceTrust) -> Option<String> {
    if t.ignored.is_empty() {
        return None;
    }
    let hint = if t.trusted {
        "they are read from the global config only"
    } else if t.newer_than_listing {
        "the file is new or changed since its folder was listed in trusted_directories; run `pith --trust` here to use them"
    } else {
        "this directory is not trusted; run `pith --trust` here to use them"
    };
    Some(format!(
        "{}: ignored {} ({hint})",
        path.display(),
        t.ignored.join(", ")
    ))
}
