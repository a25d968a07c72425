//! The release host, laid out as GitHub serves a release (and as dist/build.sh leaves
//! `dist/out/`):
//!
//! ```text
//! BASE/latest/download/VERSION                          the newest version ("0.2.0")
//! BASE/download/v0.2.0/pith-0.2.0-TARGET.tar.gz         the archive: pith-0.2.0-TARGET/pith
//! BASE/download/v0.2.0/pith-0.2.0-TARGET.tar.gz.sha256  "HEX  pith-0.2.0-TARGET.tar.gz"
//! ```

use std::time::Duration;

use anyhow::{Context as _, bail};

/// Where releases are downloaded from unless `PITH_DOWNLOAD_BASE` says otherwise: the host the
/// binary was published on (`PITH_RELEASE_BASE` when it was built: the release workflow sets
/// its repository's releases, and dist/build.sh writes the same into install.sh), else the
/// project's.
pub const DEFAULT_BASE: &str = match option_env!("PITH_RELEASE_BASE") {
    Some(base) => base,
    None => "https://github.com/pith-dev/pith/releases",
};

/// The platform this binary was built for (the archive `pith update` fetches).
pub const TARGET: &str = env!("PITH_TARGET");

/// The base URL of the release host, without a trailing slash.
pub fn base() -> String {
    let base = std::env::var("PITH_DOWNLOAD_BASE")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_BASE.to_string());
    base.trim().trim_end_matches('/').to_string()
}

/// The archive's name for a version: `pith-VERSION-TARGET.tar.gz`.
pub fn archive_name(version: &str) -> String {
    format!("pith-{version}-{TARGET}.tar.gz")
}

/// A version as numbers, for comparing ("0.10.1" > "0.9.3"); `None` for anything else.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let text = text.trim().trim_start_matches('v');
    let core = text.split(['-', '+']).next()?;
    core.split('.').map(|n| n.parse().ok()).collect()
}

/// Downloads over the client pith talks to providers with.
pub struct Host {
    base: String,
    client: reqwest::Client,
}

impl Host {
    pub fn new(base: String) -> anyhow::Result<Host> {
        let client = pith_provider::client::for_base(&base, Duration::from_secs(15))
            .context("cannot build an HTTP client")?;
        Ok(Host { base, client })
    }

    async fn get(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        let url = format!("{}/{path}", self.base);
        let response = self
            .client
            .get(&url)
            .timeout(Duration::from_secs(600))
            .send()
            .await
            .with_context(|| format!("cannot download {url}"))?;
        let status = response.status();
        if !status.is_success() {
            bail!("cannot download {url}: HTTP {}", status.as_u16());
        }
        let body = response
            .bytes()
            .await
            .with_context(|| format!("the download of {url} broke off"))?;
        Ok(body.to_vec())
    }

    /// The newest version the host offers.
    pub async fn latest(&self) -> anyhow::Result<String> {
        let body = self.get("latest/download/VERSION").await?;
        let text = String::from_utf8_lossy(&body).trim().to_string();
        if parse_version(&text).is_none() {
            bail!(
                "the release host's latest/download/VERSION is not a version: {:?}",
                text.chars().take(40).collect::<String>()
            );
        }
        Ok(text)
    }

    /// The archive of `version`, checked against its `.sha256`.
    pub async fn archive(&self, version: &str) -> anyhow::Result<Vec<u8>> {
        let name = archive_name(version);
        let sums = self
            .get(&format!("download/v{version}/{name}.sha256"))
            .await?;
        let want = String::from_utf8_lossy(&sums)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let bytes = self.get(&format!("download/v{version}/{name}")).await?;
        let got = sha256_hex(&bytes);
        if got != want {
            bail!("checksum mismatch for {name}: expected {want}, got {got}; nothing was changed");
        }
        Ok(bytes)
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number() {
        assert!(parse_version("0.10.1") > parse_version("0.9.3"));
        assert!(parse_version("v1.2.3\n") == Some(vec![1, 2, 3]));
        assert_eq!(parse_version("1.2.0-rc.1"), Some(vec![1, 2, 0]));
        assert_eq!(parse_version("<html>"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
