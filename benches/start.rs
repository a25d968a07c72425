//! The start path of one headless turn, in process (issue 32): what `pith run` does before and
//! around its first request, piece by piece, so that the next feature that adds start-up work
//! shows up here as a number. `bench/vs_curl.sh` measures the same path end to end, as the real
//! binary against a bare `curl` of the same request.
//!
//! - `setup`: configuration (layers, trust), the remembered sandbox probe, logging, the store
//!   opened (`Setup::in_workspace` on an existing data dir, as every start after the first);
//! - `session`: a new session row;
//! - `provider`: the provider built from the config (`factory::build`: a plain-http client);
//! - `first_request`: a new provider, one streamed request to a local mock, the stream drained —
//!   the connection, the request body and the SSE parsing.
//!
//!     cargo bench --bench start
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a bench may panic on what it did not expect

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt;

use pith_engine::factory;
use pith_launch::Setup;
use pith_protocol::llm::{ChatMessage, ChatRequest, UserContent};
use pith_test_support::mock::MockServer;
use pith_test_support::openai;

const MODEL: &str = "mock/test-model";

/// A workspace, a data dir and a config naming the mock, as `bench/vs_curl.sh` writes them.
struct Fixture {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    config: PathBuf,
}

impl Fixture {
    fn new(base_url: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let config = dir.path().join("pith.toml");
        std::fs::write(
            &config,
            format!(
                "model = \"{MODEL}\"\n[provider.mock]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
                 [models.\"{MODEL}\"]\ncontext = 128000\noutput = 4096\n"
            ),
        )
        .unwrap();
        // SAFETY: set before any thread of the bench reads the environment.
        unsafe {
            std::env::set_var("PITH_DATA_DIR", dir.path().join("data"));
            std::env::set_var("HOME", dir.path().join("home"));
        }
        Fixture {
            _dir: dir,
            workspace,
            config,
        }
    }

    fn setup(&self) -> Setup {
        Setup::in_workspace(self.workspace.clone(), Some(self.config.clone()), false).unwrap()
    }
}

fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_string(),
        system: vec!["You are a coding agent.".to_string()],
        messages: vec![ChatMessage::User {
            content: vec![UserContent::Text {
                text: "hello".to_string(),
            }],
        }],
        tools: Vec::new(),
        max_tokens: Some(4096),
        temperature: None,
        thinking_budget: None,
        reasoning_effort: None,
    }
}

fn first_request(rt: &tokio::runtime::Runtime, setup: &Setup) -> usize {
    rt.block_on(async {
        let (provider, model) = factory::build(&setup.loaded.config, MODEL).unwrap();
        let mut stream = provider.stream(&request(&model)).await.unwrap();
        let mut events = 0;
        while let Some(event) = stream.next().await {
            black_box(event.unwrap());
            events += 1;
        }
        events
    })
}

fn start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mock = rt.block_on(MockServer::start());
    mock.respond_with(|_| openai::text("The answer is forty-two.", Some((12, 6))));
    let fixture = Fixture::new(&mock.openai_base_url());
    let setup = fixture.setup(); // the first start creates the data dir and probes the sandbox
    let mut group = c.benchmark_group("start");
    group.bench_function("setup", |b| b.iter(|| black_box(fixture.setup())));
    group.bench_function("session", |b| {
        b.iter(|| black_box(setup.session(None, false, None).unwrap()))
    });
    group.bench_function("provider", |b| {
        b.iter(|| black_box(factory::build(&setup.loaded.config, MODEL).unwrap()))
    });
    group.bench_function("first_request", |b| {
        b.iter(|| black_box(first_request(&rt, &setup)))
    });
    group.finish();
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

criterion_group!(benches, start);
criterion_main!(benches);
