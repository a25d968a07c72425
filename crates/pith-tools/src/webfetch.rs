//! `webfetch`: reads a web page for the model (docs, changelogs, issues). HTML becomes Markdown
//! (`htmd`); the size is capped here and then by the usual truncation, which keeps the full text
//! recallable. Redirects are followed on the same host only, a few at most: one to another host
//! is reported for the model to fetch, so `[permission.webfetch]` rules by host always see the
//! host actually read. No key, cookie or header of pith's is ever sent.

use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_config::WebfetchConfig;
use pith_protocol::tool::FetchMetadata;

pub struct Webfetch {
    config: WebfetchConfig,
}

impl Webfetch {
    pub fn new(config: WebfetchConfig) -> Webfetch {
        Webfetch { config }
    }
}

#[derive(Deserialize)]
struct Input {
    url: String,
}

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

impl From<UrlError> for ToolError {
    fn from(e: UrlError) -> ToolError {
        ToolError::Failed(e.to_string())
    }
}

/// The host a URL names (what `[permission.webfetch]` rules match), or why it is not one pith
/// fetches.
pub fn host_of(url: &str) -> Result<String, UrlError> {
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
    parsed
        .host_str()
        .map(|h| h.to_ascii_lowercase())
        .ok_or_else(|| UrlError::NoHost {
            url: url.to_string(),
        })
}

/// What a response body is, from its content type: text pith can show, or not.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary(String),
}

fn kind_of(content_type: Option<&str>) -> Kind {
    let ct = content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match ct.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" => Kind::Text,
        t if t.starts_with("text/")
            || t.ends_with("+json")
            || t.ends_with("+xml")
            || matches!(
                t,
                "application/json" | "application/xml" | "application/javascript"
            ) =>
        {
            Kind::Text
        }
        other => Kind::Binary(other.to_string()),
    }
}

#[async_trait::async_trait]
impl Tool for Webfetch {
    fn name(&self) -> &'static str {
        "webfetch"
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/webfetch.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http(s) URL to read"}
            },
            "required": ["url"]
        })
    }

    fn precheck(&self, input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let url = input.get("url").and_then(Value::as_str).unwrap_or_default();
        host_of(url).map(|_| ()).map_err(ToolError::from)
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("webfetch", input)?;
        let fetch = fetch(&self.config, input.url.trim());
        let page = tokio::select! {
            page = fetch => page?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        Ok(ToolOutput {
            title: page.url.clone(),
            output: page.text,
            metadata: FetchMetadata {
                url: page.url,
                status: page.status,
            }
            .into(),
            meta: ToolMeta::default(),
        })
    }
}

struct Page {
    url: String,
    status: u16,
    text: String,
}

/// GETs `url`, following same-host redirects (at most `max_redirects`).
async fn fetch(config: &WebfetchConfig, url: &str) -> Result<Page, ToolError> {
    let host = host_of(url)?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(config.timeout_secs.max(1)))
        .user_agent(concat!("pith/", env!("CARGO_PKG_VERSION"), " (webfetch)"))
        .build()
        .map_err(|e| tool_err!("cannot build the HTTP client: {e}"))?;
    let mut current = url.to_string();
    let mut hops = 0;
    loop {
        let resp = client
            .get(&current)
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/*;q=0.9, */*;q=0.1",
            )
            .send()
            .await
            .map_err(|e| {
                tool_err!(
                    "cannot fetch {current}: {}",
                    pith_protocol::text::one_line(&e.to_string())
                )
            })?;
        let status = resp.status();
        if status.is_redirection() {
            let next = redirect_target(&resp, &current)?;
            let next_host = host_of(&next)?;
            if next_host != host {
                let text = format!(
                    "{current} redirects to another host: {next}\nTo read it, call webfetch with that URL."
                );
                return Ok(Page {
                    url: current,
                    status: status.as_u16(),
                    text,
                });
            }
            hops += 1;
            if hops > config.max_redirects {
                return Err(tool_err!(
                    "{url}: more than {} redirects (last to {next}); not followed further",
                    config.max_redirects
                ));
            }
            current = next;
            continue;
        }
        return page(resp, current, config.max_bytes).await;
    }
}

/// The page a (not redirecting) response carries, as text: HTML converted to Markdown, at most
/// `max_bytes` of it read; an error for a body that is not text.
async fn page(
    resp: reqwest::Response,
    current: String,
    max_bytes: usize,
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
    let (body, cut) = read_capped(resp, max_bytes).await?;
    if body.contains(&0) {
        return Err(tool_err!("{current} is binary content, not text"));
    }
    let raw = String::from_utf8_lossy(&body);
    let mut text = match kind {
        Kind::Html => htmd::convert(&raw).unwrap_or_else(|_| raw.to_string()),
        _ => raw.to_string(),
    };
    if !status.is_success() {
        text = format!("HTTP {status} from {current}\n\n{text}");
    }
    if cut {
        text.push_str(&format!(
            "\n\n[the page is larger than {max_bytes} bytes: only its start was read]"
        ));
    }
    Ok(Page {
        url: current,
        status: status.as_u16(),
        text,
    })
}

fn redirect_target(resp: &reqwest::Response, current: &str) -> Result<String, ToolError> {
    let location = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| tool_err!("{current} redirects without saying where"))?;
    let base = reqwest::Url::parse(current).map_err(|e| tool_err!("{e}"))?;
    base.join(location)
        .map(|u| u.to_string())
        .map_err(|e| tool_err!("{current} redirects to a bad location ({e})"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_refused_urls() {
        assert_eq!(
            host_of("https://Docs.rs/tokio/latest").as_deref(),
            Ok("docs.rs")
        );
        assert_eq!(
            host_of("http://127.0.0.1:8080/x").as_deref(),
            Ok("127.0.0.1")
        );
        for bad in [
            "file:///etc/passwd",
            "ftp://example.com/x",
            "not a url",
            "https://user:pw@example.com/",
        ] {
            assert!(host_of(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn content_types() {
        assert_eq!(kind_of(Some("text/html; charset=utf-8")), Kind::Html);
        assert_eq!(kind_of(Some("application/json")), Kind::Text);
        assert_eq!(kind_of(Some("application/vnd.api+json")), Kind::Text);
        assert_eq!(kind_of(Some("text/plain")), Kind::Text);
        assert_eq!(kind_of(None), Kind::Text);
        assert_eq!(kind_of(Some("image/png")), Kind::Binary("image/png".into()));
        assert!(matches!(
            kind_of(Some("application/octet-stream")),
            Kind::Binary(_)
        ));
    }
}
