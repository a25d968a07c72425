//! Commands with nothing to show (`/mcp` with no servers, `/agents` with no sub-agents, `/hooks`
//! with none) say so in the transcript and open nothing: the next key is the composer's, and a
//! second `/agents` runs the command again rather than going to the model as text.

use crossterm::event::KeyCode;

use pith_protocol::event::{Event, Op, SessionEvent};

use super::tests::*;

#[test]
fn mcp_with_no_servers_says_so_and_opens_nothing() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.popup(), None);
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("no MCP servers configured"), "{screen}");
    // the next command is a command
    type_str(&mut app, "/agents");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    assert!(
        matches!(sent.as_slice(), [Op::ListSubagents { .. }]),
        "{sent:?}"
    );
}

#[test]
fn agents_with_none_says_so_and_the_next_agents_is_a_command() {
    let (mut app, mut rx) = fresh();
    for _ in 0..2 {
        type_str(&mut app, "/agents");
        key(&mut app, KeyCode::Enter);
        let sent = ops(&mut rx);
        assert!(
            matches!(sent.as_slice(), [Op::ListSubagents { .. }]),
            "{sent:?}"
        );
        ev(
            &mut app,
            Event::Session(SessionEvent::Sessions {
                sessions: Vec::new(),
            }),
        );
        assert_eq!(app.popup(), None);
        let screen = render(&mut app, 100, 30);
        assert!(screen.contains("no sub-agents have run"), "{screen}");
        assert!(app.composer().text().is_empty());
    }
}

#[test]
fn hooks_with_none_says_so() {
    let (mut app, mut rx) = fresh();
    type_str(&mut app, "/hooks");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.popup(), None);
    assert!(ops(&mut rx).is_empty());
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("no hooks are configured"), "{screen}");
    type_str(&mut app, "x");
    assert_eq!(app.composer().text(), "x");
}
