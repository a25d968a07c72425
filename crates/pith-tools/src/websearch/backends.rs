//! The search services: how each is asked (SearXNG `GET /search?q=…&format=json`, Brave `GET
//! /res/v1/web/search` with `X-Subscription-Token`, Tavily `POST /search` with a bearer key)
//! and what of its reply is a hit. The key goes in a header of the one request to the
//! configured address; redirects are not followed (a header would go with them).

use serde::Deserialize;
use serde_json::json;

use pith_config::SearchBackend;

/// A hit as the service sent it, before it is cleaned and bounded.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(super) struct RawHit {
    pub(super) title: String,
    pub(super) url: String,
    /// SearXNG's and Tavily's `content`, Brave's `description`.
    #[serde(alias = "description")]
    pub(super) content: String,
}

/// SearXNG and Tavily: `{"results": [...]}`.
#[derive(Deserialize)]
struct Results {
    results: Vec<RawHit>,
}

/// Brave: `{"web": {"results": [...]}}` (no `web` when nothing was found).
#[derive(Deserialize)]
struct Brave {
    #[serde(default)]
    web: Option<Results>,
}

/// The request for `query` to `backend` at `base` (its base URL), asking for `count` hits.
pub(super) fn request(
    client: &reqwest::Client,
    backend: SearchBackend,
    base: &reqwest::Url,
    query: &str,
    count: usize,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    let at = |path: &str| {
        let mut url = base.clone();
        let joined = format!("{}/{path}", url.path().trim_end_matches('/'));
        url.set_path(&joined);
        url
    };
    let req = match backend {
        SearchBackend::Searxng => {
            let mut url = at("search");
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            let req = client.get(url);
            match key {
                Some(k) => req.bearer_auth(k),
                None => req,
            }
        }
        SearchBackend::Brave => {
            let mut url = at("res/v1/web/search");
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &count.to_string());
            client
                .get(url)
                .header("X-Subscription-Token", key.unwrap_or_default())
        }
        SearchBackend::Tavily => client
            .post(at("search"))
            .bearer_auth(key.unwrap_or_default())
            .json(&json!({ "query": query, "max_results": count })),
    };
    req.header(reqwest::header::ACCEPT, "application/json")
}

/// The hits of a reply body, or what is wrong with it (for the one line the model is told).
pub(super) fn parse(backend: SearchBackend, body: &[u8]) -> Result<Vec<RawHit>, String> {
    let why = |e: serde_json::Error| {
        if body.trim_ascii_start().starts_with(b"<") {
            "an HTML page, not JSON".to_string()
        } else {
            format!("not the JSON expected ({e})")
        }
    };
    match backend {
        SearchBackend::Searxng | SearchBackend::Tavily => serde_json::from_slice::<Results>(body)
            .map(|r| r.results)
            .map_err(why),
        SearchBackend::Brave => serde_json::from_slice::<Brave>(body)
            .map(|b| b.web.map(|w| w.results).unwrap_or_default())
            .map_err(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_service_is_asked_at_its_path_with_its_key() {
        pith_http::init_tls();
        let client = reqwest::Client::new();
        let base = reqwest::Url::parse("http://127.0.0.1:8888/searx/").unwrap();
        let r = request(&client, SearchBackend::Searxng, &base, "a b&c", 5, None)
            .build()
            .unwrap();
        assert_eq!(
            r.url().as_str(),
            "http://127.0.0.1:8888/searx/search?q=a+b%26c&format=json"
        );
        assert!(r.headers().get("authorization").is_none());
        let base = reqwest::Url::parse("https://api.search.brave.com").unwrap();
        let r = request(&client, SearchBackend::Brave, &base, "q", 5, Some("k-123"))
            .build()
            .unwrap();
        assert_eq!(
            r.url().as_str(),
            "https://api.search.brave.com/res/v1/web/search?q=q&count=5"
        );
        assert_eq!(r.headers()["x-subscription-token"], "k-123");
        let base = reqwest::Url::parse("https://api.tavily.com").unwrap();
        let r = request(&client, SearchBackend::Tavily, &base, "q", 3, Some("tv-1"))
            .build()
            .unwrap();
        assert_eq!(r.method(), reqwest::Method::POST);
        assert_eq!(r.url().as_str(), "https://api.tavily.com/search");
        assert_eq!(r.headers()["authorization"], "Bearer tv-1");
        let body: serde_json::Value =
            serde_json::from_slice(r.body().unwrap().as_bytes().unwrap()).unwrap();
        assert_eq!(body, json!({"query": "q", "max_results": 3}));
    }

    #[test]
    fn replies_of_each_shape() {
        let searx = br#"{"query":"x","results":[{"title":"T","url":"https://a/","content":"c","engine":"ddg"}]}"#;
        let hits = parse(SearchBackend::Searxng, searx).unwrap();
        assert_eq!(
            hits,
            vec![RawHit {
                title: "T".into(),
                url: "https://a/".into(),
                content: "c".into()
            }]
        );
        let brave = br#"{"type":"search","web":{"results":[{"title":"B","url":"https://b/","description":"<strong>d</strong>"}]}}"#;
        assert_eq!(
            parse(SearchBackend::Brave, brave).unwrap()[0].content,
            "<strong>d</strong>"
        );
        assert_eq!(
            parse(SearchBackend::Brave, br#"{"type":"search"}"#).unwrap(),
            vec![]
        );
        let e = parse(SearchBackend::Searxng, b"<!doctype html><p>no</p>").unwrap_err();
        assert!(e.contains("HTML page"), "{e}");
        let e = parse(SearchBackend::Tavily, br#"{"detail":"bad"}"#).unwrap_err();
        assert!(e.contains("not the JSON expected"), "{e}");
    }
}
