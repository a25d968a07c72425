//! Resume: opening a stored session of 100,000 parts to its first frame — a real SQLite store
//! in a temp dir, what `pith -c` does before the first draw (src/interactive.rs + the engine's
//! start): open the store, read the session, `load_page` (the newest page) for the transcript,
//! `load_view` from the compaction point for the engine, build the TUI `App` and draw the first
//! frame into ratatui's `TestBackend` (120×40). Also each phase on its own, the whole history
//! (`load_all`, what the transcript read before paging) for comparison, one scroll past the
//! top (the older page read, put above the transcript and drawn), and the next screen up, into
//! that page (its cells highlighted as they show).
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a test may panic on what it did not expect

mod common;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use pith_protocol::event::ContextUsage;
use pith_protocol::event::{Event, Op, SessionEvent, Submission};
use pith_protocol::message::{Message, Session};
use pith_store::{PAGE_MESSAGES, Store};
use pith_tui::app::Msg;
use pith_tui::{App, TuiInit, highlight, view as tui_view};

const PARTS: usize = 100_000;
const W: u16 = 120;
const H: u16 = 40;

fn init(session: Session, messages: Vec<Message>, more_history: bool) -> TuiInit {
    TuiInit {
        model: session.model.clone(),
        models: vec!["anthropic/claude-sonnet-4-5".into()],
        keys: Default::default(),
        workspace: PathBuf::from("/srv/demo"),
        git_branch: Some("main".into()),
        context: ContextUsage {
            used: 60_000,
            usable: 180_000,
            window: 200_000,
            percent: 30.0,
            estimated: true,
            cached: 0,
        },
        first_run_hint: None,
        keymap: Default::default(),
        appearance: Default::default(),
        custom_commands: Default::default(),
        prompt_log: None,
        notify: Default::default(),
        hooks: Default::default(),
        images: Default::default(),
        session,
        messages,
        more_history,
    }
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut term = Terminal::new(TestBackend::new(W, H)).expect("terminal");
    term.draw(|f| tui_view::draw(f, app)).expect("draw");
    term
}

/// Everything from opening the store to the first frame.
fn open_to_first_frame(dir: &Path, id: &str) -> (usize, Terminal<TestBackend>) {
    let store = Store::open(dir).expect("store");
    let session = store.get_session(id).expect("session");
    let page = store.load_page(id, None, PAGE_MESSAGES).expect("load_page");
    let view = store
        .load_view(id, session.compaction_point.as_deref())
        .expect("load_view");
    let (tx, _rx) = unbounded_channel();
    let mut app = App::new(init(session, page.messages, page.more), tx);
    let term = draw(&mut app);
    (view.len(), term)
}

/// A resumed app scrolled to the top of its first page, with its op channel and the request
/// for the page before.
fn scrolled_to_top(store: &Store, session: &Session) -> Paged {
    let page = store
        .load_page(&session.id, None, PAGE_MESSAGES)
        .expect("load_page");
    let (tx, mut ops) = unbounded_channel();
    let mut app = App::new(init(session.clone(), page.messages, page.more), tx);
    draw(&mut app);
    app.transcript_mut().scroll_to_top();
    draw(&mut app);
    let op = ops.try_recv().expect("the page before is asked for").op;
    // the page to come was never shown: its code blocks are highlighted from scratch
    highlight::clear_cache();
    (app, ops, op)
}

type Paged = (App, UnboundedReceiver<Submission>, Op);

/// What one scroll past the top costs: the store reads the page, the app puts it above the
/// transcript, and the next frame is drawn.
fn older_page(store: &Store, (mut app, ops, op): Paged) -> (App, UnboundedReceiver<Submission>) {
    let Op::LoadHistory { session_id, before } = op else {
        panic!("not a history request: {op:?}");
    };
    let page = store
        .load_page(&session_id, Some(&before), PAGE_MESSAGES)
        .expect("load_page");
    app.update(Msg::Engine(
        Event::Session(SessionEvent::History {
            session_id,
            messages: page.messages,
            more: page.more,
        })
        .into(),
    ));
    draw(&mut app);
    (app, ops)
}

/// The stored session the benchmarks resume: a store of `PARTS` parts in a temp dir.
struct Fixture {
    store: Store,
    session: Session,
    id: String,
    /// Last, so that the store closes before the directory goes.
    tmp: tempfile::TempDir,
}

/// Writes the store (and prints what it holds and how long it took).
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    let id = common::build_store(tmp.path(), "/srv/demo", PARTS);
    let store = Store::open(tmp.path()).expect("store");
    let all = store.load_all(&id).expect("load_all");
    let session = store.get_session(&id).expect("session");
    println!(
        "resume: store of {} messages / {} parts written in {:.1} s ({} MiB)",
        all.len(),
        common::part_count(&all),
        t.elapsed().as_secs_f64(),
        std::fs::metadata(tmp.path().join("pith.db")).map_or(0, |m| m.len() >> 20)
    );
    Fixture {
        store,
        session,
        id,
        tmp,
    }
}

/// One-shot breakdown of a cold resume (printed; criterion measures each phase on its own).
fn print_cold_resume(dir: &Path, id: &str) {
    let t0 = Instant::now();
    let s = Store::open(dir).expect("store");
    let sess = s.get_session(id).expect("session");
    let t1 = Instant::now();
    let loaded = s.load_page(id, None, PAGE_MESSAGES).expect("load_page");
    let t2 = Instant::now();
    let v = s
        .load_view(id, sess.compaction_point.as_deref())
        .expect("load_view");
    let t3 = Instant::now();
    let (tx, _rx) = unbounded_channel();
    let mut app = App::new(init(sess, loaded.messages, loaded.more), tx);
    let t4 = Instant::now();
    let term = draw(&mut app);
    let t5 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    println!(
        "resume one-shot: open {:.1} ms, load_page {:.1} ms, load_view ({} msgs) {:.1} ms, App::new ({} cells) {:.1} ms, first draw {:.1} ms, total {:.1} ms",
        ms(t0, t1),
        ms(t1, t2),
        v.len(),
        ms(t2, t3),
        app.transcript().len(),
        ms(t3, t4),
        ms(t4, t5),
        ms(t0, t5)
    );
    black_box(term);
}

fn resume(c: &mut Criterion) {
    let fx = fixture();
    print_cold_resume(fx.tmp.path(), &fx.id);

    let mut group = c.benchmark_group("resume_100k_parts");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    bench_loads(&mut group, &fx);
    bench_app(&mut group, &fx);
    bench_scrolling(&mut group, &fx);
    group.finish();
}

/// The whole resume, and each read from the store on its own.
fn bench_loads(group: &mut BenchmarkGroup<'_, WallTime>, fx: &Fixture) {
    let Fixture {
        store, session, id, ..
    } = fx;
    group.bench_function("open_to_first_frame", |b| {
        b.iter(|| black_box(open_to_first_frame(fx.tmp.path(), id)))
    });
    group.bench_function("load_page", |b| {
        b.iter(|| {
            black_box(
                store
                    .load_page(id, None, PAGE_MESSAGES)
                    .expect("load_page")
                    .messages
                    .len(),
            )
        })
    });
    group.bench_function("load_all", |b| {
        b.iter(|| black_box(store.load_all(id).expect("load_all").len()))
    });
    group.bench_function("load_view", |b| {
        b.iter(|| {
            black_box(
                store
                    .load_view(id, session.compaction_point.as_deref())
                    .expect("load_view")
                    .len(),
            )
        })
    });
}

/// Building the TUI `App` from the newest page, and drawing its first frame.
fn bench_app(group: &mut BenchmarkGroup<'_, WallTime>, fx: &Fixture) {
    let session = &fx.session;
    let page = fx
        .store
        .load_page(&fx.id, None, PAGE_MESSAGES)
        .expect("load_page");
    group.bench_function("app_new", |b| {
        b.iter_batched(
            || (page.messages.clone(), unbounded_channel()),
            |(msgs, (tx, _rx))| black_box(App::new(init(session.clone(), msgs, true), tx)),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("first_draw", |b| {
        b.iter_batched(
            || {
                let (tx, _rx) = unbounded_channel();
                App::new(init(session.clone(), page.messages.clone(), true), tx)
            },
            |mut app| black_box(draw(&mut app)),
            BatchSize::LargeInput,
        )
    });
}

/// Scrolling back through the history: one scroll past the top, the next screen up into the
/// page that arrived, and a scroll past the top deep in the history.
fn bench_scrolling(group: &mut BenchmarkGroup<'_, WallTime>, fx: &Fixture) {
    let Fixture { store, session, .. } = fx;
    group.bench_function("scroll_past_the_top", |b| {
        b.iter_batched(
            || scrolled_to_top(store, session),
            |paged| black_box(older_page(store, paged)),
            BatchSize::LargeInput,
        )
    });
    // After a page arrived the view has not moved; scrolling up into it shows cells never
    // highlighted: one screen up, one frame.
    group.bench_function("scroll_one_screen_into_the_page", |b| {
        b.iter_batched(
            || {
                let (app, ops) = older_page(store, scrolled_to_top(store, session));
                highlight::clear_cache();
                (app, ops)
            },
            |(mut app, ops)| {
                app.transcript_mut().scroll_up(H as usize);
                black_box((draw(&mut app), ops, app))
            },
            BatchSize::LargeInput,
        )
    });
    // Deep in the history: 50 pages (10,000 messages, about a third of the session) already
    // loaded above the first, the next one arrives.
    group.bench_function("scroll_past_the_top_50_pages_deep", |b| {
        b.iter_batched(
            || pages_deep(store, session, 50),
            |paged| black_box(older_page(store, paged)),
            BatchSize::LargeInput,
        )
    });
}

/// A resumed app with `pages` older pages loaded above the first, scrolled to the top again,
/// with the request for the page before.
fn pages_deep(store: &Store, session: &Session, pages: usize) -> Paged {
    let mut paged = scrolled_to_top(store, session);
    for _ in 0..pages {
        let (mut app, mut ops) = older_page(store, paged);
        app.transcript_mut().scroll_to_top();
        draw(&mut app);
        let op = ops.try_recv().expect("the next page is asked for").op;
        paged = (app, ops, op);
    }
    highlight::clear_cache();
    paged
}

criterion_group!(benches, resume);
criterion_main!(benches);
