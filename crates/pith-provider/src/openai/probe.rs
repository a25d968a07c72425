//! Asking a local OpenAI-compatible server for its context window, when no window is
//! configured: llama.cpp answers `GET /props`, Ollama `GET /api/ps` (the loaded model's real
//! context) and `POST /api/show` (`num_ctx` of the model's parameters). Only servers on this
//! machine or the local network are asked, each with a short timeout.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::{Value, json};

/// How long a probe may take in all.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Ollama's context when neither the running model nor its parameters say (its documented
/// default `num_ctx`; it truncates longer prompts silently, so assuming more would be unsafe).
pub(super) const OLLAMA_DEFAULT_CTX: u64 = 4_096;

/// The window and where it was read, for the server that `chat_url` (`…/v1/chat/completions`)
/// belongs to; `None` for a remote host or a server that does not say.
pub(super) async fn window(
    client: &reqwest::Client,
    chat_url: &str,
    model: &str,
) -> Option<(u64, String)> {
    let root = server_root(chat_url)?;
    tokio::time::timeout(PROBE_TIMEOUT, ask(client, &root, model))
        .await
        .ok()
        .flatten()
}

/// `http://host:port` of a local server (loopback or a private address), else `None`.
pub(super) fn server_root(chat_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(chat_url).ok()?;
    let host = url.host_str()?;
    let local = match host.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.ends_with(".local"),
    };
    if !local {
        return None;
    }
    let mut root = format!("{}://{host}", url.scheme());
    if let Some(port) = url.port() {
        root.push_str(&format!(":{port}"));
    }
    Some(root)
}

async fn ask(client: &reqwest::Client, root: &str, model: &str) -> Option<(u64, String)> {
    if let Some(v) = get_json(client.get(format!("{root}/props"))).await
        && let Some(n) = llama_cpp_ctx(&v)
    {
        return Some((n, format!("llama.cpp {root}/props")));
    }
    if let Some(v) = get_json(client.get(format!("{root}/api/ps"))).await
        && let Some(n) = ollama_running_ctx(&v, model)
    {
        return Some((n, format!("Ollama {root}/api/ps")));
    }
    let show = get_json(
        client
            .post(format!("{root}/api/show"))
            .json(&json!({"model": model})),
    )
    .await?;
    let (n, from) = ollama_show_ctx(&show)?;
    Some((n, format!("Ollama {root}/api/show ({from})")))
}

async fn get_json(rb: reqwest::RequestBuilder) -> Option<Value> {
    let resp = rb.timeout(PROBE_TIMEOUT).send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    resp.json().await.ok()
}

/// llama.cpp `/props`: the per-slot context (`default_generation_settings.n_ctx`).
pub(super) fn llama_cpp_ctx(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
}

/// Ollama `/api/ps`: the context the loaded model runs with.
pub(super) fn ollama_running_ctx(ps: &Value, model: &str) -> Option<u64> {
    ps.get("models")?
        .as_array()?
        .iter()
        .find(|m| {
            let name = m
                .get("name")
                .or_else(|| m.get("model"))
                .and_then(Value::as_str);
            name.is_some_and(|n| n == model || n.strip_suffix(":latest") == Some(model))
        })?
        .get("context_length")
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
}

/// Ollama `/api/show`: `num_ctx` from the model's parameters, else Ollama's default (never more
/// than the model's trained context). `None` for a reply without Ollama's fields (`parameters`,
/// `model_info`): any server can answer 200 to an unknown path, and only Ollama's own answer
/// says what Ollama would use.
pub(super) fn ollama_show_ctx(show: &Value) -> Option<(u64, &'static str)> {
    let has_params = show.get("parameters").is_some_and(Value::is_string);
    let has_info = show.get("model_info").is_some_and(Value::is_object);
    if !has_params && !has_info {
        return None;
    }
    let num_ctx = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|p| {
            p.lines().find_map(|l| {
                let mut words = l.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next().and_then(|n| n.parse::<u64>().ok()))
                    .flatten()
            })
        });
    if let Some(n) = num_ctx.filter(|&n| n > 0) {
        return Some((n, "num_ctx"));
    }
    let trained = show
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_u64())
        });
    Some((
        trained.map_or(OLLAMA_DEFAULT_CTX, |t| t.min(OLLAMA_DEFAULT_CTX)),
        "default num_ctx",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_servers_are_asked() {
        for (url, want) in [
            (
                "http://127.0.0.1:8080/v1/chat/completions",
                Some("http://127.0.0.1:8080"),
            ),
            (
                "http://localhost:11434/v1/chat/completions",
                Some("http://localhost:11434"),
            ),
            (
                "http://192.168.1.20:8000/v1/chat/completions",
                Some("http://192.168.1.20:8000"),
            ),
            (
                "http://[::1]:8080/v1/chat/completions",
                Some("http://[::1]:8080"),
            ),
            ("https://api.openai.com/v1/chat/completions", None),
            ("https://openrouter.ai/api/v1/chat/completions", None),
            ("http://8.8.8.8/v1/chat/completions", None),
        ] {
            assert_eq!(server_root(url).as_deref(), want, "{url}");
        }
    }

    #[test]
    fn server_answers_are_read() {
        // A real llama-server's /props (trimmed).
        let props =
            json!({"default_generation_settings": {"n_ctx": 4096, "params": {}}, "total_slots": 1});
        assert_eq!(llama_cpp_ctx(&props), Some(4_096));
        assert_eq!(llama_cpp_ctx(&json!({"n_ctx": 8192})), Some(8_192));
        assert_eq!(llama_cpp_ctx(&json!({"models": []})), None);

        let ps = json!({"models": [{"name": "qwen2.5-coder:14b", "context_length": 16384}]});
        assert_eq!(ollama_running_ctx(&ps, "qwen2.5-coder:14b"), Some(16_384));
        assert_eq!(ollama_running_ctx(&ps, "llama3"), None);
        let ps = json!({"models": [{"name": "llama3:latest", "context_length": 8192}]});
        assert_eq!(ollama_running_ctx(&ps, "llama3"), Some(8_192));

        let show = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 32768", "model_info": {"qwen2.context_length": 131072}});
        assert_eq!(ollama_show_ctx(&show), Some((32_768, "num_ctx")));
        let show = json!({"model_info": {"llama.context_length": 131072}});
        assert_eq!(
            ollama_show_ctx(&show),
            Some((OLLAMA_DEFAULT_CTX, "default num_ctx"))
        );
        let show = json!({"model_info": {"llama.context_length": 2048}});
        assert_eq!(ollama_show_ctx(&show).map(|s| s.0), Some(2_048));
        // Any server may answer 200 with JSON to an unknown path: not taken for Ollama.
        for other in [
            json!({}),
            json!({"ok": true}),
            json!({"error": "not found"}),
            json!([]),
        ] {
            assert_eq!(ollama_show_ctx(&other), None, "{other}");
        }
    }
}
