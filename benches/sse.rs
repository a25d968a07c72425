//! SSE parsing throughput (MB/s of wire bytes) for the OpenAI chat-completions stream and the
//! Anthropic Messages stream: the full path (`openai::parse_sse` / `anthropic::events`: SSE
//! framing + JSON + state machine, fed 1,400-byte network-sized chunks) and the pure state
//! machines alone (`ChunkParser::on_event` / `EventParser::handle`, one pre-split event at a time).
//!
//! Each stream is a realistic answer: 2,000 text deltas of one token each, then a tool call whose
//! arguments stream in 200 pieces, the finish and the usage.
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a test may panic on what it did not expect

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use serde_json::{Value, json};

use pith_provider::ProviderError;
use pith_provider::anthropic::{self, EventParser};
use pith_provider::openai::{self, ChunkParser};

const TOKENS: [&str; 12] = [
    " the",
    " parser",
    " returns",
    " an",
    " error",
    " when",
    " `src/lib.rs`",
    " is",
    "\n\n",
    " missing",
    " so",
    " we",
];
const DELTAS: usize = 2_000;
const ARG_PIECES: usize = 200;

fn args_json() -> String {
    json!({"path": "src/module.rs", "content": "fn main() {\n    println!(\"hello\");\n}\n".repeat(12)})
        .to_string()
}

fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(chars.len().div_ceil(n))
        .map(|c| c.iter().collect())
        .collect()
}

/// (event name, data) pairs of an OpenAI stream.
fn openai_events() -> Vec<(String, String)> {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
               "model": "gpt-4.1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for i in 0..DELTAS {
        out.push(chunk(json!({"content": TOKENS[i % TOKENS.len()]}), None));
    }
    out.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "write", "arguments": ""}}]}),
        None,
    ));
    for p in pieces(&args_json(), ARG_PIECES) {
        out.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
            None,
        ));
    }
    out.push(chunk(json!({}), Some("tool_calls")));
    out.push(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
               "model": "gpt-4.1", "choices": [],
               "usage": {"prompt_tokens": 12000, "completion_tokens": 2300, "total_tokens": 14300,
                         "prompt_tokens_details": {"cached_tokens": 8000}}})
        .to_string(),
    );
    out.push("[DONE]".into());
    out.into_iter()
        .map(|d| ("message".to_string(), d))
        .collect()
}

/// (event name, data) pairs of an Anthropic stream.
fn anthropic_events() -> Vec<(String, String)> {
    let mut out = vec![
        (
            "message_start".to_string(),
            json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12000, "output_tokens": 1,
                      "cache_read_input_tokens": 8000, "cache_creation_input_tokens": 0}}}),
        ),
        (
            "content_block_start".to_string(),
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for i in 0..DELTAS {
        out.push((
            "content_block_delta".into(),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": TOKENS[i % TOKENS.len()]}}),
        ));
    }
    out.push((
        "content_block_stop".into(),
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push((
        "content_block_start".into(),
        json!({"type": "content_block_start", "index": 1,
               "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}}),
    ));
    for p in pieces(&args_json(), ARG_PIECES) {
        out.push((
            "content_block_delta".into(),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": p}}),
        ));
    }
    out.push((
        "content_block_stop".into(),
        json!({"type": "content_block_stop", "index": 1}),
    ));
    out.push((
        "message_delta".into(),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 2300}}),
    ));
    out.push(("message_stop".into(), json!({"type": "message_stop"})));
    out.into_iter().map(|(e, d)| (e, d.to_string())).collect()
}

/// The wire bytes: OpenAI sends bare `data:` lines, Anthropic names each event.
fn wire(events: &[(String, String)], named: bool) -> Vec<u8> {
    let mut s = String::new();
    for (e, d) in events {
        if named {
            s.push_str(&format!("event: {e}\ndata: {d}\n\n"));
        } else {
            s.push_str(&format!("data: {d}\n\n"));
        }
    }
    s.into_bytes()
}

fn net_chunks(body: &[u8]) -> Vec<Vec<u8>> {
    body.chunks(1400).map(<[u8]>::to_vec).collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// One provider's stream in the three forms the benchmarks feed: the events, the wire body, and
/// the body cut into network-sized chunks.
struct SseStream {
    events: Vec<(String, String)>,
    body: Vec<u8>,
    chunks: Vec<Vec<u8>>,
}

impl SseStream {
    fn new(events: Vec<(String, String)>, named: bool) -> Self {
        let body = wire(&events, named);
        let chunks = net_chunks(&body);
        SseStream {
            events,
            body,
            chunks,
        }
    }
}

/// Sanity: both streams parse to the end without an error (and print their sizes).
fn check_streams(rt: &tokio::runtime::Runtime, oa: &SseStream, an: &SseStream) {
    let count = |items: Vec<Result<_, ProviderError>>| {
        assert!(items.iter().all(Result::is_ok), "parse error");
        items.len()
    };
    let n = rt.block_on(async {
        let s = futures_util::stream::iter(oa.chunks.clone().into_iter().map(Ok));
        openai::parse_sse(s).collect::<Vec<_>>().await
    });
    let oa_n = count(n);
    let n = rt.block_on(async {
        let s = futures_util::stream::iter(
            an.chunks
                .clone()
                .into_iter()
                .map(Ok::<_, std::convert::Infallible>),
        );
        anthropic::events(s).collect::<Vec<_>>().await
    });
    let an_n = count(n);
    println!(
        "sse: openai body {} KiB → {oa_n} events; anthropic body {} KiB → {an_n} events",
        oa.body.len() / 1024,
        an.body.len() / 1024
    );
}

fn sse(c: &mut Criterion) {
    let rt = runtime();
    let oa = SseStream::new(openai_events(), false);
    let an = SseStream::new(anthropic_events(), true);
    check_streams(&rt, &oa, &an);

    let mut group = c.benchmark_group("sse");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    bench_openai(&mut group, &rt, &oa);
    bench_anthropic(&mut group, &rt, &an);
    group.finish();
}

/// The OpenAI stream: the full path from network chunks, and the chunk parser alone.
fn bench_openai(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    oa: &SseStream,
) {
    group.throughput(Throughput::Bytes(oa.body.len() as u64));
    group.bench_function("openai_parse_sse", |b| {
        b.iter(|| {
            rt.block_on(async {
                let s = futures_util::stream::iter(oa.chunks.clone().into_iter().map(Ok));
                openai::parse_sse(s)
                    .fold(0usize, |n, _| async move { n + 1 })
                    .await
            })
        })
    });
    group.bench_function("openai_chunk_parser", |b| {
        b.iter(|| {
            let mut p = ChunkParser::new();
            let mut out = VecDeque::new();
            for (e, d) in &oa.events {
                black_box(p.on_event(e, d, &mut out));
                out.clear();
            }
            p.on_end(None, &mut out);
            out.len()
        })
    });
}

/// The Anthropic stream: the full path from network chunks, and the event parser alone.
fn bench_anthropic(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rt: &tokio::runtime::Runtime,
    an: &SseStream,
) {
    group.throughput(Throughput::Bytes(an.body.len() as u64));
    group.bench_function("anthropic_events", |b| {
        b.iter(|| {
            rt.block_on(async {
                let s = futures_util::stream::iter(
                    an.chunks
                        .clone()
                        .into_iter()
                        .map(Ok::<_, std::convert::Infallible>),
                );
                anthropic::events(s)
                    .fold(0usize, |n, _| async move { n + 1 })
                    .await
            })
        })
    });
    group.bench_function("anthropic_event_parser", |b| {
        b.iter(|| {
            let mut p = EventParser::new();
            let mut n = 0;
            for (e, d) in &an.events {
                n += p.handle(e, d).map(|v| v.len()).unwrap_or(0);
            }
            black_box(n)
        })
    });
}

criterion_group!(benches, sse);
criterion_main!(benches);
