//! The hops of one fetch: each checked (rules, address guard) before it is connected to, the
//! client pinned to the addresses checked; then the page, read within its bounds.

use std::net::IpAddr;
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::guard::{self, Pinned, Refusal};
use super::target::{Host, Target};
use super::{Kind, html, kind_of};
use crate::ToolError;
use crate::permission::Permissions;
use pith_config::{PermissionAction, WebfetchConfig};

/// An HTML body is read up to this many times `max_bytes`: what is dropped (scripts, styles,
/// navigation) does not count against the text's own cap.
const HTML_READ_FACTOR: usize = 4;

pub(super) struct Page {
    pub(super) url: String,
    pub(super) status: u16,
    pub(super) text: String,
}

/// GETs `target`, following redirects to the same host and port, and elsewhere only where the
/// configured rules allow (at most `max_redirects`).
pub(super) async fn fetch(
    config: &WebfetchConfig,
    rules: &Permissions,
    mut target: Target,
    cancel: &CancellationToken,
) -> Result<Page, ToolError> {
    let pins = guard::pinned();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // connect only where the guard checked: no proxy resolves the name again
        .no_proxy()
        .dns_resolver(pins.clone())
        .timeout(Duration::from_secs(config.timeout_secs.max(1)))
        .user_agent(concat!("pith/", env!("CARGO_PKG_VERSION"), " (webfetch)"))
        .build()
        .map_err(|e| tool_err!("cannot build the HTTP client: {e}"))?;
    let first = target.shown();
    let mut hops = 0;
    loop {
        check_hop(config, rules, &target, &pins).await?;
        let current = target.shown();
        let resp = client
            .get(target.url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/*;q=0.9, */*;q=0.1",
            )
            .send()
            .await
            .map_err(|e| {
                tool_err!(
                    "cannot fetch {current}: {}",
                    pith_protocol::text::one_line(&error_chain(&e))
                )
            })?;
        let status = resp.status();
        if !status.is_redirection() {
            return page(resp, current, config.max_bytes, cancel).await;
        }
        let next = redirect_target(&resp, &target)?;
        hops += 1;
        if hops > config.max_redirects {
            return Err(tool_err!(
                "{first}: more than {} redirects (last to {}); not followed further",
                config.max_redirects,
                next.shown()
            ));
        }
        if !next.same_place(&target) {
            match rules.fetch_action(&next) {
                PermissionAction::Allow => {}
                PermissionAction::Deny => {
                    return Err(tool_err!(
                        "{current} redirects to {}, which the user's rules deny; not followed",
                        next.shown()
                    ));
                }
                PermissionAction::Ask => {
                    let text = format!(
                        "{current} redirects to another host or port: {}\nIt was not followed. To read it, call webfetch with that URL.",
                        next.shown()
                    );
                    return Ok(Page {
                        url: current,
                        status: status.as_u16(),
                        text,
                    });
                }
            }
        }
        target = next;
    }
}

/// The guard for one hop: the addresses its host may be reached at (inward ones only when a
/// rule names the host and port), none of them denied by a rule; the name pinned to them.
async fn check_hop(
    config: &WebfetchConfig,
    rules: &Permissions,
    target: &Target,
    pins: &Pinned,
) -> Result<(), ToolError> {
    let named = rules.fetch_named(target);
    let timeout = Duration::from_secs(config.timeout_secs.max(1));
    let addrs = guard::addresses(target, named, |name, port| {
        guard::system_lookup(name, port, timeout)
    })
    .await
    .map_err(|r| match r {
        Refusal::Inward { addr, kind } => inward(target, addr, kind),
        Refusal::Unresolved(e) => tool_err!(
            "cannot fetch {}: {} does not resolve ({e})",
            target.shown(),
            target.host.spelled()
        ),
    })?;
    for a in &addrs {
        if rules.fetch_address_action(target, a.ip()) == PermissionAction::Deny {
            return Err(tool_err!(
                "Permission denied: {} is {}, which the user's rules deny for webfetch. Do not retry this call.",
                target.host.spelled(),
                a.ip()
            ));
        }
    }
    if let Host::Name(name) = &target.host {
        pins.pin(name, addrs);
    }
    Ok(())
}

/// The refusal of an inward address, saying how the user can allow it.
pub(super) fn inward(target: &Target, addr: IpAddr, kind: &str) -> ToolError {
    let host = target.host.spelled();
    let is = if matches!(target.host, Host::Ip(_)) {
        " is".to_string()
    } else {
        format!(" is {addr},")
    };
    tool_err!(
        "not fetched: {host}{is} a {kind} address (this machine or a network it is on). \
         webfetch reads such an address only when the user's [permission.webfetch] names its \
         host and port, as \"{}\" = \"allow\".",
        target.host_port()
    )
}

/// An error with its causes, which say what failed (refused, timed out, not resolved).
fn error_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// The page a (not redirecting) response carries, as text: HTML without what is not content,
/// converted to Markdown; at most `max_bytes` of text; an error for a body that is not text.
async fn page(
    resp: reqwest::Response,
    current: String,
    max_bytes: usize,
    cancel: &CancellationToken,
) -> Result<Page, ToolError> {
    let status = resp.status();
    let kind = kind_of(
        resp.headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
    );
    if let Kind::Binary(ct) = &kind {
        return Err(tool_err!(
            "{current} is {ct}, not text: webfetch reads pages and text only"
        ));
    }
    let read_max = match kind {
        Kind::Html => max_bytes.saturating_mul(HTML_READ_FACTOR),
        _ => max_bytes,
    };
    let (body, read_cut) = read_capped(resp, read_max).await?;
    if body.contains(&0) {
        return Err(tool_err!("{current} is binary content, not text"));
    }
    let raw = String::from_utf8_lossy(&body).into_owned();
    let (mut text, left_cut) = match kind {
        Kind::Html => {
            let left = max_bytes.saturating_mul(2);
            html::to_markdown(raw, left, cancel, html::DEADLINE).await?
        }
        _ => (raw, false),
    };
    let text_cut = text.len() > max_bytes;
    if text_cut {
        let mut end = max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    if !status.is_success() {
        text = format!("HTTP {status} from {current}\n\n{text}");
    }
    if read_cut || left_cut || text_cut {
        let what = if read_cut { read_max } else { max_bytes };
        text.push_str(&format!(
            "\n\n[the page is larger than {what} bytes: only its start was read]"
        ));
    }
    Ok(Page {
        url: current,
        status: status.as_u16(),
        text,
    })
}

fn redirect_target(resp: &reqwest::Response, current: &Target) -> Result<Target, ToolError> {
    let shown = current.shown();
    let location = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| tool_err!("{shown} redirects without saying where"))?;
    let next = current
        .url
        .join(location)
        .map_err(|e| tool_err!("{shown} redirects to a bad location ({e})"))?;
    Target::parse(next.as_str())
        .map_err(|e| tool_err!("{shown} redirects to a URL not fetched: {e}"))
}

/// The body, at most `max` bytes; `true` when it was longer.
async fn read_capped(resp: reqwest::Response, max: usize) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| tool_err!("the page stopped arriving: {e}"))?;
        let room = max.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}
