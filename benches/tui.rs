//! The TUI: drawing a transcript of 1,000 cells into ratatui's `TestBackend`, and consuming a
//! stream of 5,000 tokens/s.
//!
//! The stream harness (`stream_5000_tokens_per_s`, printed, not a criterion timing) runs the
//! draw loop of `pith_tui::run` — redraw only when dirty and at most once per 16 ms frame,
//! coalescing every queued engine event before a frame — against a `TestBackend` instead of the
//! terminal, while a producer thread sends one `TextDelta` per token at 5,000 tokens/s. It
//! reports frames drawn per second, the loop thread's CPU time per second of stream, and how
//! long each delta waited between being sent and the start of the frame that shows it: a delta
//! that waited more than one frame interval (16 ms, plus 2 ms of timer slack) counts as late.
//! At the end the streamed part must hold exactly the concatenated deltas (none lost).
// test and bench code is no API: `pub` there only shares helpers between its modules
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used)] // a test may panic on what it did not expect

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use pith_protocol::event::{ContextUsage, EngineState, Event, OutputEvent, TurnEvent};
use pith_protocol::message::{Message, PartKind, Role, Session};
use pith_tui::{App, Msg, TuiInit, view as tui_view};

const W: u16 = 120;
const H: u16 = 40;
/// The TUI's frame interval (`FRAME` in crates/pith-tui/src/lib.rs).
const FRAME: Duration = Duration::from_millis(16);
const TICK: Duration = Duration::from_millis(120);

fn session() -> Session {
    Session {
        id: "S1".into(),
        title: "bench".into(),
        directory: "/srv/demo".into(),
        model: "anthropic/claude-sonnet-4-5".into(),
        time_created: 0,
        time_updated: 0,
        compaction_point: None,
        cost: 0.0,
        tokens: 0,
        parent_id: None,
        agent: None,
    }
}

fn app(messages: Vec<Message>) -> App {
    let (tx, rx) = unbounded_channel();
    std::mem::forget(rx); // ops are never read; keep the channel open
    App::new(
        TuiInit {
            session: session(),
            messages,
            more_history: false,
            model: "anthropic/claude-sonnet-4-5".into(),
            models: vec!["anthropic/claude-sonnet-4-5".into()],
            keys: Default::default(),
            workspace: PathBuf::from("/srv/demo"),
            git_branch: Some("main".into()),
            context: ContextUsage {
                used: 20_000,
                usable: 180_000,
                window: 200_000,
                percent: 10.0,
                estimated: false,
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
        },
        tx,
    )
}

/// A history whose transcript has about `cells` visible cells (7 a turn: the prompt, and a text
/// and a tool call for each of three steps; compactions add two).
fn history(cells: usize) -> Vec<Message> {
    common::session("S1", (cells / 7) * 13)
}

fn visible_cells(app: &App) -> usize {
    app.transcript()
        .cells()
        .iter()
        .filter(|c| {
            !matches!(
                c.part().map(|p| &p.kind),
                Some(PartKind::StepStart | PartKind::StepFinish { .. })
            )
        })
        .count()
}

fn render(c: &mut Criterion) {
    let msgs = history(1_000);
    let probe = app(msgs.clone());
    println!(
        "tui: transcript of {} cells ({} visible: prompts, texts, tool calls, summaries)",
        probe.transcript().len(),
        visible_cells(&probe)
    );
    let mut group = c.benchmark_group("tui_transcript_1000_cells");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    // Cold: every cell is wrapped and rendered (markdown; code is highlighted for the cells on
    // screen) for the first time.
    group.bench_function("first_draw", |b| {
        b.iter_batched(
            || {
                (
                    app(msgs.clone()),
                    Terminal::new(TestBackend::new(W, H)).unwrap(),
                )
            },
            |(mut a, mut term)| {
                term.draw(|f| tui_view::draw(f, &mut a)).unwrap();
                black_box(a.transcript().total_lines())
            },
            BatchSize::LargeInput,
        )
    });
    streaming_frames(&mut group, &msgs);
    group.finish();
}

/// Warm frames at the end of a long transcript: the last assistant text changes (as when a delta
/// arrives; its size stays the same from one iteration to the next), then a frame — the steady
/// state while an answer streams; and a frame with nothing changed but the spinner.
fn streaming_frames(group: &mut BenchmarkGroup<'_, WallTime>, msgs: &[Message]) {
    let mut a = app(msgs.to_vec());
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    term.draw(|f| tui_view::draw(f, &mut a)).unwrap();
    let last = msgs
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .find_map(|m| {
            m.parts
                .iter()
                .rev()
                .find(|p| matches!(p.kind, PartKind::Text { .. }))
        })
        .unwrap()
        .clone();
    let variants: Vec<_> = ["", " word"]
        .iter()
        .map(|extra| {
            let mut p = last.clone();
            if let PartKind::Text { text, .. } = &mut p.kind {
                text.push_str(extra);
            }
            p
        })
        .collect();
    let mut flip = 0usize;
    group.bench_function("delta_then_draw", |b| {
        b.iter(|| {
            flip += 1;
            a.update(Msg::Engine(
                Event::Output(OutputEvent::PartUpdated {
                    part: variants[flip % 2].clone(),
                })
                .into(),
            ));
            term.draw(|f| tui_view::draw(f, &mut a)).unwrap();
            black_box(a.transcript().total_lines())
        })
    });
    // Nothing changed but the spinner: a frame with every cell cached.
    group.bench_function("redraw_cached", |b| {
        b.iter(|| {
            a.redraw();
            term.draw(|f| tui_view::draw(f, &mut a)).unwrap();
            black_box(a.transcript().total_lines())
        })
    });
}

/// The same frames at the end of a transcript twenty times as long (about 37,000 cells, what a
/// user who scrolled far back in a resumed session has loaded): layout starts at the first
/// changed cell, so they should cost what they cost at 1,000.
fn render_long(c: &mut Criterion) {
    let msgs = history(20_000);
    let probe = app(msgs.clone());
    println!("tui: long transcript of {} cells", probe.transcript().len());
    let mut group = c.benchmark_group("tui_transcript_20000_cells");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    streaming_frames(&mut group, &msgs);
    group.finish();
}

/// The calling thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the struct we pass.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    assert_eq!(rc, 0, "getrusage");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

const STREAM_WORDS: [&str; 14] = [
    " the",
    " parser",
    " returns",
    " an",
    " error",
    " when",
    " `src/lib.rs`",
    " is",
    " missing",
    ",",
    " so",
    " **we**",
    " check",
    ".\n\n",
];

struct StreamReport {
    tokens: usize,
    wall: Duration,
    cpu: Duration,
    frames: usize,
    max_draw: Duration,
    mean_draw: Duration,
    max_wait: Duration,
    p99_wait: Duration,
    late: usize,
    lost: bool,
}

/// Streams `tokens` deltas at `rate` tokens/s into an app holding `history`.
fn stream(history: Vec<Message>, tokens: usize, rate: f64) -> StreamReport {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (mut app, mut term) = drawn_app(history);

    let (tx, mut rx) = unbounded_channel::<Event>();
    let mut answer = Message::new("S1", Role::Assistant);
    answer.parent_id = None;
    let mid = answer.id.clone();
    let pid = pith_protocol::message::new_id();
    let base = Instant::now();
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..tokens).map(|_| AtomicU64::new(0)).collect());
    let expected: String = (0..tokens)
        .map(|i| STREAM_WORDS[i % STREAM_WORDS.len()])
        .collect();

    tx.send(Event::Turn(TurnEvent::State {
        state: EngineState::Thinking,
        detail: None,
    }))
    .unwrap();
    tx.send(Event::Output(OutputEvent::Message { message: answer }))
        .unwrap();
    let producer = spawn_producer(tx, Arc::clone(&sent), base, mid, pid.clone(), rate);

    let cpu0 = thread_cpu();
    let frames = rt.block_on(draw_loop(&mut app, &mut term, &mut rx, &sent, base));
    let cpu = thread_cpu() - cpu0;
    let produced = producer.join().unwrap();
    let lost = frames.shown != tokens || streamed_text(&app, &pid) != expected;
    frames.report(tokens, produced, cpu, lost)
}

/// An app holding `history`, its first frame drawn and nothing left to draw.
fn drawn_app(history: Vec<Message>) -> (App, Terminal<TestBackend>) {
    let mut app = app(history);
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    term.draw(|f| tui_view::draw(f, &mut app)).unwrap();
    app.drawn();
    (app, term)
}

/// The producer thread: one `TextDelta` of part `pid` in message `mid` per token, at `rate`
/// tokens/s, each stamped in `sent` (nanoseconds since `base`) as it is sent. Returns how long
/// the stream took.
fn spawn_producer(
    tx: UnboundedSender<Event>,
    sent: Arc<Vec<AtomicU64>>,
    base: Instant,
    mid: String,
    pid: String,
    rate: f64,
) -> JoinHandle<Duration> {
    std::thread::spawn(move || {
        let start = Instant::now();
        let interval = Duration::from_secs_f64(1.0 / rate);
        for (i, slot) in sent.iter().enumerate() {
            let due = start + interval * i as u32;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            slot.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
            let delta = STREAM_WORDS[i % STREAM_WORDS.len()].to_string();
            if tx
                .send(Event::Output(OutputEvent::TextDelta {
                    message_id: mid.clone(),
                    part_id: pid.clone(),
                    delta,
                }))
                .is_err()
            {
                break;
            }
        }
        start.elapsed()
    })
}

/// What the draw loop saw: how long each frame took to draw, how long each delta waited for the
/// frame that showed it, and how many deltas were applied and shown.
#[derive(Default)]
struct Frames {
    waits: Vec<Duration>,
    draws: Vec<Duration>,
    /// TextDeltas applied to the app
    applied: usize,
    /// TextDeltas on screen
    shown: usize,
}

impl Frames {
    fn apply(&mut self, app: &mut App, ev: Event) {
        if matches!(ev, Event::Output(OutputEvent::TextDelta { .. })) {
            self.applied += 1;
        }
        app.update(Msg::Engine(ev.into()));
    }

    /// Applies `ev` and every event queued behind it (at most 1,024 more), as `pith_tui::run`
    /// coalesces them before a frame.
    fn apply_queued(&mut self, app: &mut App, ev: Event, rx: &mut UnboundedReceiver<Event>) {
        self.apply(app, ev);
        let mut n = 0;
        while n < 1024 {
            match rx.try_recv() {
                Ok(ev) => self.apply(app, ev),
                Err(_) => break,
            }
            n += 1;
        }
    }

    /// Draws a frame and records its draw time and the wait of each delta it shows for the
    /// first time. Returns when the frame started.
    fn draw(
        &mut self,
        app: &mut App,
        term: &mut Terminal<TestBackend>,
        sent: &[AtomicU64],
        base: Instant,
    ) -> Instant {
        let start = Instant::now();
        let at = base.elapsed().as_nanos() as u64;
        term.draw(|f| tui_view::draw(f, app)).unwrap();
        app.drawn();
        self.draws.push(start.elapsed());
        for slot in &sent[self.shown..self.applied] {
            self.waits.push(Duration::from_nanos(
                at.saturating_sub(slot.load(Ordering::Relaxed)),
            ));
        }
        self.shown = self.applied;
        start
    }

    fn report(mut self, tokens: usize, wall: Duration, cpu: Duration, lost: bool) -> StreamReport {
        self.waits.sort();
        let (waits, draws) = (&self.waits, &self.draws);
        let frames = draws.len();
        let sum: Duration = draws.iter().sum();
        StreamReport {
            tokens,
            wall,
            cpu,
            frames,
            max_draw: draws.iter().copied().max().unwrap_or_default(),
            mean_draw: sum / frames.max(1) as u32,
            max_wait: waits.last().copied().unwrap_or_default(),
            p99_wait: waits
                .get(waits.len() * 99 / 100)
                .copied()
                .unwrap_or_default(),
            late: waits
                .iter()
                .filter(|w| **w > FRAME + Duration::from_millis(2))
                .count(),
            lost,
        }
    }
}

/// The draw loop of `pith_tui::run`: redraw only when dirty and at most once per frame,
/// coalescing every queued event before a frame, ticking the spinner; until the channel closes
/// and the last frame is drawn.
async fn draw_loop(
    app: &mut App,
    term: &mut Terminal<TestBackend>,
    rx: &mut UnboundedReceiver<Event>,
    sent: &[AtomicU64],
    base: Instant,
) -> Frames {
    let mut frames = Frames {
        waits: Vec::with_capacity(sent.len()),
        ..Frames::default()
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_draw = Instant::now() - FRAME;
    let mut open = true;
    loop {
        if app.needs_draw() && last_draw.elapsed() >= FRAME {
            // as pith_tui::run: frames FRAME apart start to start
            last_draw = frames.draw(app, term, sent, base);
        }
        if !open && !app.needs_draw() {
            break;
        }
        let next_frame = tokio::time::Instant::from_std(last_draw + FRAME);
        tokio::select! {
            ev = rx.recv(), if open => match ev {
                Some(ev) => frames.apply_queued(app, ev, rx),
                None => {
                    open = false;
                    app.redraw();
                }
            },
            _ = tick.tick() => app.update(Msg::Tick),
            _ = tokio::time::sleep_until(next_frame), if app.needs_draw() => {}
        }
    }
    frames
}

/// The text of the streamed part `pid` as the transcript holds it.
fn streamed_text(app: &App, pid: &str) -> String {
    app.transcript()
        .cells()
        .iter()
        .find_map(|c| match c.part().map(|p| (&p.id, &p.kind)) {
            Some((id, PartKind::Text { text, .. })) if *id == pid => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn stream_harness(_c: &mut Criterion) {
    let rate = 5_000.0;
    let tokens = 10_000;
    for (name, hist) in [
        ("empty session", Vec::new()),
        ("after 1,000 cells", history(1_000)),
    ] {
        let r = stream(hist, tokens, rate);
        let secs = r.wall.as_secs_f64();
        println!(
            "tui/stream_5000_tokens_per_s ({name}): {} tokens in {:.2} s: {} frames = {:.1} frames/s; \
             CPU {:.0} ms per s of stream ({:.1}% of a core); draw mean {:.2} ms, max {:.2} ms; \
             delta wait to frame p99 {:.1} ms, max {:.1} ms; late (> 1 frame) {}; lost {}",
            r.tokens,
            secs,
            r.frames,
            r.frames as f64 / secs,
            r.cpu.as_secs_f64() * 1000.0 / secs,
            r.cpu.as_secs_f64() * 100.0 / secs,
            r.mean_draw.as_secs_f64() * 1000.0,
            r.max_draw.as_secs_f64() * 1000.0,
            r.p99_wait.as_secs_f64() * 1000.0,
            r.max_wait.as_secs_f64() * 1000.0,
            r.late,
            if r.lost { "YES" } else { "none" },
        );
    }
}

criterion_group!(benches, render, render_long, stream_harness);
criterion_main!(benches);
