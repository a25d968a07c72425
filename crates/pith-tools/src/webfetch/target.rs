//! What a URL points at, parsed once: the host (names lowercased without a trailing dot,
//! addresses in one spelling: `[::ffff:127.0.0.1]` is `127.0.0.1`) and the port — the subject
//! `[permission.webfetch]` rules are matched on — and the URL as the question shows it.

use std::net::IpAddr;

use super::guard;

/// Longest URL a question shows whole; a longer one keeps its start and end around `…`.
pub const MAX_SHOWN: usize = 400;

/// Why a URL is not one pith fetches. The `Display` text is what the model is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// It does not parse as a URL (`reason` is the parser's).
    #[error("not a URL ({reason}): {url}")]
    NotAUrl { url: String, reason: String },
    /// A scheme other than http or https.
    #[error("only http and https URLs are fetched, not {scheme}:")]
    Scheme { scheme: String },
    /// A user name or password in the URL.
    #[error("a URL with credentials in it is not fetched")]
    Credentials,
    /// No host to fetch from.
    #[error("no host in {url}")]
    NoHost { url: String },
}

/// A host as rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// How rules spell it: a name, an IPv4 address, an IPv6 one in brackets.
    pub(crate) fn spelled(&self) -> String {
        match self {
            Host::Name(n) => n.clone(),
            Host::Ip(IpAddr::V4(a)) => a.to_string(),
            Host::Ip(IpAddr::V6(a)) => format!("[{a}]"),
        }
    }
}

/// A URL pith may fetch.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: reqwest::Url,
    pub host: Host,
    pub port: u16,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, UrlError> {
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| UrlError::NotAUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(UrlError::Scheme {
                scheme: parsed.scheme().to_string(),
            });
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(UrlError::Credentials);
        }
        let no_host = || UrlError::NoHost {
            url: url.to_string(),
        };
        let raw = parsed.host_str().ok_or_else(no_host)?;
        let host = if let Some(v6) = raw.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip: IpAddr = v6.parse().map_err(|_| no_host())?;
            Host::Ip(guard::canonical(ip))
        } else if let Ok(v4) = raw.parse::<std::net::Ipv4Addr>() {
            Host::Ip(IpAddr::V4(v4))
        } else {
            let name = raw.trim_end_matches('.').to_ascii_lowercase();
            if name.is_empty() {
                return Err(no_host());
            }
            Host::Name(name)
        };
        let port = parsed.port_or_known_default().ok_or_else(no_host)?;
        Ok(Target {
            url: parsed,
            host,
            port,
        })
    }

    /// Whether the port is the scheme's own (80 for http, 443 for https).
    pub(crate) fn default_port(&self) -> bool {
        self.url.port().is_none()
    }

    /// `host:port`, as a rule naming both is written.
    pub(crate) fn host_port(&self) -> String {
        format!("{}:{}", self.host.spelled(), self.port)
    }

    /// Whether a redirect from here to `next` stays where the user agreed to: the same scheme,
    /// host and port, or the same host moved from http to https, both on their default ports
    /// (what a rule naming the host alone covers).
    pub(crate) fn same_place(&self, next: &Target) -> bool {
        let same = self.url.scheme() == next.url.scheme() && self.port == next.port;
        let upgrade = self.url.scheme() == "http"
            && next.url.scheme() == "https"
            && self.default_port()
            && next.default_port();
        self.host == next.host && (same || upgrade)
    }

    /// The URL on one line, at most [`MAX_SHOWN`] characters (the middle cut out).
    pub fn shown(&self) -> String {
        shown_url(self.url.as_str())
    }
}

/// `url` on one line (controls escaped), at most [`MAX_SHOWN`] characters: a longer one keeps
/// its start and its end with `…` between.
pub fn shown_url(url: &str) -> String {
    let escaped: String = url
        .trim()
        .chars()
        .flat_map(|c| {
            let escape = c.is_control() || c.is_whitespace();
            let one = (!escape).then_some(c).into_iter();
            one.chain(escape.then(|| c.escape_default()).into_iter().flatten())
        })
        .collect();
    let chars: Vec<char> = escaped.chars().collect();
    if chars.len() <= MAX_SHOWN {
        return escaped;
    }
    let head = MAX_SHOWN * 2 / 3;
    let tail = MAX_SHOWN - head - 1;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}
