//! A web search the provider ran itself (OpenAI Responses `web_search`, Anthropic's web search
//! server tool) as a `websearch` tool part, completed, with the query and the pages it found
//! (`SearchMetadata`, backend `hosted`): front ends show it like pith's own search; the request
//! leaves it out (`pith_protocol::tool::is_hosted_search`), the answer that follows it being
//! what the model made of it. A leaf: it imports no engine file.

use serde_json::json;

use pith_protocol::llm::WebResult;
use pith_protocol::message::{PartKind, ToolState, ToolTime, now_ms};
use pith_protocol::tool::{Builtin, HOSTED_SEARCH, SearchHit, SearchMetadata, ToolMetadata};

/// Most pages kept for one search (a provider may report dozens of sources).
const MAX_HITS: usize = 20;

/// The part for a search `id` of `query` that found `results` (or failed with `error`).
pub(crate) fn part(
    id: String,
    query: String,
    results: &[WebResult],
    error: Option<String>,
) -> PartKind {
    let now = now_ms();
    let mut meta = SearchMetadata {
        query: query.clone(),
        backend: HOSTED_SEARCH.to_string(),
        hits: Vec::new(),
    };
    add_hits(&mut meta, results);
    PartKind::Tool {
        call_id: id,
        tool: Builtin::WebSearch.as_str().to_string(),
        input: json!({ "query": query }),
        state: completed(&meta, error.as_deref(), now, now),
    }
}

/// Adds `results` (those not there yet) to the search recorded in `kind`.
pub(crate) fn add_results(kind: &mut PartKind, results: &[WebResult]) {
    let PartKind::Tool { tool, state, .. } = kind else {
        return;
    };
    let name = pith_protocol::tool::ToolName::parse(tool);
    let Some(ToolMetadata::Search(mut meta)) = state.outcome(&name) else {
        return;
    };
    let ToolState::Completed { time, .. } = state else {
        return;
    };
    let (start, _) = (time.start, time.end);
    add_hits(&mut meta, results);
    *state = completed(&meta, None, start, now_ms());
}

fn add_hits(meta: &mut SearchMetadata, results: &[WebResult]) {
    for r in results {
        let url = pith_protocol::text::one_line(r.url.trim());
        if url.is_empty() || meta.hits.len() >= MAX_HITS || meta.hits.iter().any(|h| h.url == url) {
            continue;
        }
        meta.hits.push(SearchHit {
            title: pith_protocol::text::one_line(r.title.trim()),
            url,
        });
    }
}

fn completed(meta: &SearchMetadata, error: Option<&str>, start: i64, end: i64) -> ToolState {
    let mut output = match error {
        Some(code) => format!(
            "The provider's web search for \"{}\" failed ({code}).",
            meta.query
        ),
        None => format!(
            "The provider searched the web for \"{}\": {} pages.",
            meta.query,
            meta.hits.len()
        ),
    };
    for (i, h) in meta.hits.iter().enumerate() {
        output.push_str(&format!("\n{}. {}\n   {}", i + 1, h.title, h.url));
    }
    ToolState::Completed {
        output,
        title: format!("{} pages", meta.hits.len()),
        metadata: meta.clone().into(),
        time: ToolTime {
            start,
            end,
            compacted: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(title: &str, url: &str) -> WebResult {
        WebResult {
            title: title.into(),
            url: url.into(),
        }
    }

    #[test]
    fn a_search_records_its_pages_once_and_is_known_as_hosted() {
        let mut kind = part(
            "ws_1".into(),
            "rust 2024 edition".into(),
            &[r("Rust Blog", "https://blog.rust-lang.org/"), r("", " ")],
            None,
        );
        add_results(
            &mut kind,
            &[
                r("Rust Blog", "https://blog.rust-lang.org/"),
                r("Edition guide", "https://doc.rust-lang.org/edition-guide/"),
            ],
        );
        let PartKind::Tool { tool, state, .. } = &kind else {
            panic!("a tool part");
        };
        assert!(pith_protocol::tool::is_hosted_search(tool, state));
        let meta = state
            .outcome(&Builtin::WebSearch.into())
            .and_then(|m| m.search().cloned())
            .unwrap();
        let urls: Vec<_> = meta.hits.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://blog.rust-lang.org/",
                "https://doc.rust-lang.org/edition-guide/"
            ]
        );
        let ToolState::Completed { output, .. } = state else {
            panic!("completed");
        };
        assert!(
            output.starts_with("The provider searched the web for \"rust 2024 edition\": 2 pages.")
        );
        let failed = part(
            "ws_2".into(),
            "q".into(),
            &[],
            Some("max_uses_exceeded".into()),
        );
        let PartKind::Tool { state, .. } = failed else {
            panic!("a tool part");
        };
        let ToolState::Completed { output, .. } = state else {
            panic!("completed");
        };
        assert!(output.contains("failed (max_uses_exceeded)"), "{output}");
    }
}
