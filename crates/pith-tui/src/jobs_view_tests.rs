//! Background jobs as the user sees them: `/ps` lists them (number, command, state, age, last
//! line) newest first, enter or delete stops the selected one and the list stays open with it
//! stopped; the status bar counts the jobs running.

use crossterm::event::KeyCode;
use pith_protocol::event::{Event, Job, JobState, Op, SessionEvent};

use super::tests::*;

fn job(id: u32, command: &str, state: JobState, last_line: &str) -> Job {
    Job {
        id,
        command: command.into(),
        // two minutes ago
        started: pith_protocol::message::now_ms() - 125_000,
        state,
        last_line: last_line.into(),
    }
}

fn jobs_event(jobs: Vec<Job>) -> Event {
    Event::Session(SessionEvent::Jobs { jobs })
}

#[test]
fn ps_lists_the_jobs_and_stops_the_selected_one() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/ps");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), [Op::ListJobs]);
    let running = vec![
        job(
            1,
            "python3 -m http.server 8765",
            JobState::Running,
            "Serving HTTP on 0.0.0.0 port 8765 (http://0.0.0.0:8765/) ...",
        ),
        job(
            2,
            "cargo test --workspace",
            JobState::Exited {
                code: Some(0),
                signal: None,
            },
            "test result: ok. 212 passed",
        ),
        job(3, "npm run dev", JobState::Running, "ready in 412 ms"),
    ];
    ev(&mut app, jobs_event(running.clone()));
    let screen = render(&mut app, 120, 14);
    assert!(screen.contains("background jobs"), "{screen}");
    assert!(
        screen.contains("running · 2 min · Serving HTTP on 0.0.0.0 port 8765"),
        "{screen}"
    );
    assert!(screen.contains("exited 0"), "{screen}");
    insta::assert_snapshot!("ps_picker_120x14", screen);
    // newest first: down to job 1, delete stops it; the list stays open
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Delete);
    assert_eq!(ops(&mut rx), [Op::KillJob { id: 1 }]);
    let mut after = running;
    after[0].state = JobState::Killed;
    ev(&mut app, jobs_event(after));
    let screen = render(&mut app, 120, 14);
    assert!(screen.contains("killed · 2 min"), "{screen}");
    // enter stops the selected one too (the selection stayed on job 1, now killed: up to 2)
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), [Op::KillJob { id: 2 }]);
    key(&mut app, KeyCode::Esc);
}

#[test]
fn ps_without_jobs_says_how_one_starts() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/ps");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), [Op::ListJobs]);
    ev(&mut app, jobs_event(Vec::new()));
    let screen = render(&mut app, 110, 12);
    assert!(screen.contains("no background jobs"), "{screen}");
    assert!(!screen.contains("enter or delete stops"), "{screen}");
}

#[test]
fn the_status_bar_counts_the_jobs_running() {
    let (mut app, _rx) = fresh();
    assert!(!render(&mut app, 140, 8).contains("/ps"));
    ev(
        &mut app,
        jobs_event(vec![
            job(1, "npm run dev", JobState::Running, ""),
            job(2, "make watch", JobState::Running, ""),
            job(3, "true", JobState::Killed, ""),
        ]),
    );
    let screen = render(&mut app, 140, 8);
    assert!(screen.contains("⚙ 2 jobs /ps"), "{screen}");
    insta::assert_snapshot!("status_bar_with_jobs_140x8", screen);
    ev(
        &mut app,
        jobs_event(vec![job(1, "npm run dev", JobState::Killed, "")]),
    );
    assert!(!render(&mut app, 140, 8).contains("/ps"));
}
