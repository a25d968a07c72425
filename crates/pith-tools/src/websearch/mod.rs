//! `websearch`: finds pages for the model through the search service the user configured
//! (`[websearch]`, off until then; `backends` knows each service). The query goes to that
//! address only, with the key read from the variable the config names (scrubbed from
//! everything pith writes; never in an error); no redirect is followed. The reply is read
//! within a size and time bound and becomes numbered hits: a title, an address, a snippet
//! without markup, each cut, the whole capped. Reading a hit's page is `webfetch`'s job, with
//! its own per-host rules.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use pith_config::{SearchBackend, WebsearchConfig};
use pith_protocol::tool::{SearchHit, SearchMetadata};

mod backends;
mod text;

/// The most of a reply read: search results are small; more is a service gone wrong.
const MAX_REPLY: usize = 2 * 1024 * 1024;
/// The most text the model gets from one search (the hits past it are left out, counted).
const MAX_OUTPUT: usize = 8_000;
/// The longest query sent.
const MAX_QUERY: usize = 400;

/// Where a key variable's value is read from (the sealed environment; a test's table).
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

pub(crate) struct Websearch {
    config: WebsearchConfig,
    backend: SearchBackend,
    key: KeyLookup,
    /// Built at the first search (an https client reads the system's roots once).
    client: std::sync::OnceLock<reqwest::Client>,
}

impl Websearch {
    /// The tool for `config`'s backend (`None` when none is configured).
    pub(crate) fn new(config: WebsearchConfig, key: KeyLookup) -> Option<Websearch> {
        let backend = config.backend?;
        Some(Websearch {
            config,
            backend,
            key,
            client: std::sync::OnceLock::new(),
        })
    }

    /// `searxng at http://127.0.0.1:8888`: the service and where it is (scheme, host and
    /// port only: no path, query or user info).
    fn place(&self, base: &reqwest::Url) -> String {
        let host = base.host_str().unwrap_or("?");
        let port = base.port().map(|p| format!(":{p}")).unwrap_or_default();
        format!(
            "the search backend ({} at {}://{host}{port})",
            self.backend.as_str(),
            base.scheme()
        )
    }

    fn base(&self) -> Result<reqwest::Url, ToolError> {
        let raw = self.config.base_url().unwrap_or_default();
        reqwest::Url::parse(raw.trim())
            .map_err(|e| tool_err!("websearch: websearch.url is not a URL ({e})"))
    }

    fn key(&self) -> Result<Option<String>, ToolError> {
        let Some(var) = self.config.key_env.as_deref() else {
            return Ok(None);
        };
        match (self.key)(var).filter(|k| !k.trim().is_empty()) {
            Some(k) => {
                // scrubbed from whatever pith writes, whatever path it takes
                pith_secrets::register(&k);
                Ok(Some(k.trim().to_string()))
            }
            None => Err(tool_err!(
                "websearch: the variable {var} (websearch.key_env) is not set, so {} cannot be asked. Tell the user; do not retry.",
                self.backend.as_str()
            )),
        }
    }

    /// The hits for `query`, at most `count`.
    async fn search(&self, query: &str, count: usize) -> Result<Vec<backends::RawHit>, ToolError> {
        let base = self.base()?;
        let place = self.place(&base);
        let key = self.key()?;
        let client = self.client()?;
        let req = backends::request(client, self.backend, &base, query, count, key.as_deref());
        let resp = req.send().await.map_err(|e| self.failed(&place, &e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(tool_err!(
                "websearch: {place} answered HTTP {status}{}. Tell the user; do not retry.",
                self.status_hint(status)
            ));
        }
        let body = read_capped(resp).await.map_err(|e| match e {
            Capped::Over => tool_err!(
                "websearch: {place} sent a reply larger than {} MiB; not read",
                MAX_REPLY / (1024 * 1024)
            ),
            Capped::Broken(e) => self.failed(&place, &e),
        })?;
        backends::parse(self.backend, &body).map_err(|why| {
            let hint = match self.backend {
                SearchBackend::Searxng => " (is `json` in the instance's search.formats?)",
                _ => "",
            };
            tool_err!("websearch: {place} sent {why}{hint}")
        })
    }

    /// The client: no redirects (the key would go with them), no proxy, the configured time
    /// for the whole request.
    fn client(&self) -> Result<&reqwest::Client, ToolError> {
        if let Some(c) = self.client.get() {
            return Ok(c);
        }
        let timeout = Duration::from_secs(self.config.timeout_secs.max(1));
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .user_agent(concat!("pith/", env!("CARGO_PKG_VERSION"), " (websearch)"))
            .build()
            .map_err(|e| tool_err!("websearch: cannot build the HTTP client: {e}"))?;
        Ok(self.client.get_or_init(|| client))
    }

    /// What a status says to check.
    fn status_hint(&self, status: reqwest::StatusCode) -> String {
        let var = self
            .config
            .key_env
            .as_deref()
            .unwrap_or("websearch.key_env");
        match status.as_u16() {
            401 | 403 if self.backend.needs_key() || self.config.key_env.is_some() => {
                format!(": the key in {var} was refused")
            }
            402 | 429 => ": the service's rate limit or quota is reached".to_string(),
            _ => String::new(),
        }
    }

    /// A request that failed on the way: timed out, refused, cut off. Its causes, without its
    /// URL (the query is in it; the place says where).
    fn failed(&self, place: &str, e: &reqwest::Error) -> ToolError {
        if e.is_timeout() {
            return tool_err!(
                "websearch: {place} did not answer within {} s",
                self.config.timeout_secs
            );
        }
        let mut text = String::new();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            text.push_str(&format!(": {s}"));
            source = s.source();
        }
        if e.is_redirect() || e.status().is_some_and(|s| s.is_redirection()) {
            text = ": it redirected elsewhere (not followed)".into();
        }
        tool_err!(
            "websearch: cannot reach {place}{}",
            pith_protocol::text::one_line(&text)
        )
    }
}

#[derive(Deserialize)]
struct Input {
    query: String,
}

enum Capped {
    Over,
    Broken(reqwest::Error),
}

/// The body, refused past [`MAX_REPLY`].
async fn read_capped(resp: reqwest::Response) -> Result<Vec<u8>, Capped> {
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Capped::Broken)?;
        if body.len() + chunk.len() > MAX_REPLY {
            return Err(Capped::Over);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The hits as the model reads them (numbered: title, address, snippet), and as stored for the
/// front ends (titles and addresses). Hits without a web address are dropped; the text stops
/// before [`MAX_OUTPUT`], saying how many were left out.
fn render(
    query: &str,
    backend: &str,
    raw: Vec<backends::RawHit>,
    max: usize,
) -> (String, Vec<SearchHit>) {
    let mut hits = Vec::new();
    let mut body = String::new();
    let usable: Vec<_> = raw
        .into_iter()
        .filter_map(|h| Some((text::address(&h.url)?, h)))
        .take(max)
        .collect();
    let total = usable.len();
    for (url, h) in usable {
        let title = match text::plain(&h.title, text::MAX_TITLE) {
            t if t.is_empty() => "(untitled)".to_string(),
            t => t,
        };
        let snippet = text::plain(&h.content, text::MAX_SNIPPET);
        let mut entry = format!("{}. {title}\n   {url}\n", hits.len() + 1);
        if !snippet.is_empty() {
            entry.push_str(&format!("   {snippet}\n"));
        }
        if body.len() + entry.len() > MAX_OUTPUT {
            break;
        }
        body.push_str(&entry);
        body.push('\n');
        hits.push(SearchHit { title, url });
    }
    let shown_query = text::plain(query, 200);
    let mut out = if hits.is_empty() {
        format!("No results for \"{shown_query}\" ({backend}). Try other words.")
    } else {
        format!(
            "Results for \"{shown_query}\" ({backend}, {} of {}):\n\n{body}",
            hits.len(),
            total
        )
    };
    if !hits.is_empty() {
        if hits.len() < total {
            out.push_str(&format!(
                "[{} more left out to keep this short]\n",
                total - hits.len()
            ));
        }
        out.push_str("Read a page with webfetch (its URL as given here).");
    }
    (out, hits)
}

#[async_trait::async_trait]
impl Tool for Websearch {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::WebSearch.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../../prompts/tools/websearch.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search the web for, as you would type it into a search engine"}
            },
            "required": ["query"]
        })
    }

    fn precheck(&self, input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let query = input.get("query").and_then(Value::as_str).unwrap_or("");
        if query.trim().is_empty() {
            return Err(tool_err!("websearch: the query is empty"));
        }
        Ok(())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("websearch", input)?;
        let query = text::cut(input.query.trim(), MAX_QUERY);
        if query.is_empty() {
            return Err(tool_err!("websearch: the query is empty"));
        }
        let max = self.config.max_results.clamp(1, 20);
        let raw = tokio::select! {
            r = self.search(&query, max) => r?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        let backend = self.backend.as_str();
        let (output, hits) = render(&query, backend, raw, max);
        Ok(ToolOutput {
            title: format!("{} results", hits.len()),
            output,
            metadata: SearchMetadata {
                query,
                backend: backend.to_string(),
                hits,
            }
            .into(),
            // bounded here: never cut and saved by the registry
            meta: ToolMeta::paged(),
        })
    }
}

#[cfg(test)]
mod tests;
