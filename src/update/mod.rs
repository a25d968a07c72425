//! `pith update` and the install line of `pith --version`.
//!
//! A release-archive install (install.sh) updates itself from the release host
//! (`PITH_DOWNLOAD_BASE`, default [`release::DEFAULT_BASE`]; `PITH_VERSION` picks a version);
//! an npm, pip, cargo or source install is told how to update the way it was made.

pub mod kind;
pub mod release;
mod replace;

use kind::InstallKind;

/// The version pith was built as.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `pith --version` prints: the version, then how this pith was installed and how it is
/// updated.
pub fn version_text() -> String {
    let exe = kind::current_exe().ok();
    let kind = exe
        .as_deref()
        .map_or(InstallKind::Source, InstallKind::detect);
    let place = exe.map(|e| e.display().to_string()).unwrap_or_default();
    let update = kind.update_hint().unwrap_or("pith update");
    format!(
        "pith {VERSION}\ninstalled: {} for {}, at {place}\nupdate: {update}\n",
        kind.describe(),
        release::TARGET
    )
}

/// `pith update` (`check`: only say what would be installed). Exit code 0 when pith is (now) up
/// to date or was told how to update; errors leave the installed binary as it was.
pub fn run(check: bool) -> anyhow::Result<i32> {
    let exe = kind::current_exe()?;
    let kind = InstallKind::detect(&exe);
    if let Some(hint) = kind.update_hint() {
        crate::outln!(
            "pith {VERSION} was installed as a {}; `pith update` only updates a release-archive install. Update with: {hint}",
            kind.describe()
        );
        return Ok(0);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    pith_provider::client::init_tls();
    runtime.block_on(update(&exe, check))
}

async fn update(exe: &std::path::Path, check: bool) -> anyhow::Result<i32> {
    let base = release::base();
    let host = release::Host::new(base.clone())?;
    let pinned = std::env::var("PITH_VERSION")
        .ok()
        .map(|v| v.trim().trim_start_matches('v').to_string())
        .filter(|v| !v.is_empty());
    let wanted = match pinned.clone() {
        Some(v) => v,
        None => host.latest().await?,
    };
    if release::parse_version(&wanted).is_none() {
        anyhow::bail!("PITH_VERSION is not a version: {wanted:?}");
    }
    let current = release::parse_version(VERSION);
    let newer = release::parse_version(&wanted) > current;
    if wanted == VERSION || (pinned.is_none() && !newer) {
        crate::outln!("pith {VERSION} is up to date (the latest release at {base} is {wanted})");
        return Ok(0);
    }
    let name = release::archive_name(&wanted);
    crate::outln!(
        "pith {VERSION} -> {wanted}: {base}/download/v{wanted}/{name} into {}",
        exe.display()
    );
    if check {
        return Ok(0);
    }
    let archive = host.archive(&wanted).await?;
    replace::replace(exe, &archive, &wanted)?;
    crate::outln!("pith {wanted} installed at {}", exe.display());
    Ok(0)
}
