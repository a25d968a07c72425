use crossterm::event::KeyCode;

use pith_protocol::event::{
    Breakdown, ContextEvent, Event, McpPrompt, McpPromptArg, McpResource, McpServerStatus,
    McpState, Op, SettingsEvent,
};

use super::super::app::Popup;
use super::super::tests::{ev, fresh, key, ops, render, type_str};

fn server(name: &str, state: McpState) -> McpServerStatus {
    McpServerStatus {
        name: name.into(),
        transport: pith_protocol::event::McpTransport::Stdio,
        state,
        tools: 3,
        tokens: 1_234,
        deferred: false,
        prompts: vec![McpPrompt {
            name: "review".into(),
            description: Some("Review a pull request".into()),
            arguments: vec![
                McpPromptArg {
                    name: "pr".into(),
                    required: true,
                    description: None,
                },
                McpPromptArg {
                    name: "focus".into(),
                    required: false,
                    description: None,
                },
            ],
        }],
        resources: true,
        sign_in: None,
    }
}

fn status(servers: Vec<McpServerStatus>) -> Event {
    Event::Settings(SettingsEvent::McpStatus { servers })
}

#[test]
fn state_changes_are_noticed_and_the_status_bar_counts_ready_servers() {
    let (mut app, _rx) = fresh();
    ev(
        &mut app,
        status(vec![
            server("gh", McpState::Starting),
            server("db", McpState::Starting),
        ]),
    );
    let screen = render(&mut app, 120, 20);
    assert!(
        !screen.contains("mcp gh:"),
        "starting is not a notice: {screen}"
    );
    assert!(screen.contains("mcp 0/2"), "{screen}");
    ev(
        &mut app,
        status(vec![
            server("gh", McpState::Ready),
            server(
                "db",
                McpState::Failed {
                    reason: "cannot start `dbx`: No such file".into(),
                },
            ),
        ]),
    );
    let screen = render(&mut app, 120, 20);
    assert!(
        screen.contains("mcp gh: ready · 3 tools · 1.2k tokens"),
        "{screen}"
    );
    assert!(
        screen.contains("mcp db: failed: cannot start `dbx`: No such file"),
        "{screen}"
    );
    assert!(screen.contains("mcp 1/2"), "{screen}");
    // The same status again adds nothing.
    let before = app.transcript().len();
    ev(
        &mut app,
        status(vec![
            server("gh", McpState::Ready),
            server(
                "db",
                McpState::Failed {
                    reason: "cannot start `dbx`: No such file".into(),
                },
            ),
        ]),
    );
    assert_eq!(app.transcript().len(), before);
}

#[test]
fn prompts_are_slash_commands() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, status(vec![server("gh", McpState::Ready)]));
    type_str(&mut app, "/gh");
    let screen = render(&mut app, 100, 20);
    assert!(
        screen.contains("/gh:review <pr> [focus]") && screen.contains("Review a pull request"),
        "{screen}"
    );
    // Enter on a prompt with a required argument completes it.
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.composer().text(), "/gh:review ");
    assert!(ops(&mut rx).is_empty());
    type_str(&mut app, "12 tests");
    key(&mut app, KeyCode::Enter);
    let sent = ops(&mut rx);
    assert!(
        matches!(&sent[..], [Op::McpPrompt { server, prompt, args, .. }]
            if server == "gh" && prompt == "review" && args == "12 tests"),
        "{sent:?}"
    );
    type_str(&mut app, "/gh:nope");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
    assert!(render(&mut app, 100, 20).contains("gh has no prompt named nope"));
}

#[test]
fn the_mcp_popup_shows_every_server() {
    let (mut app, mut rx) = fresh();
    let mut deferred = server("gh", McpState::Ready);
    deferred.deferred = true;
    ev(
        &mut app,
        status(vec![
            deferred,
            server(
                "db",
                McpState::Exited {
                    reason: "the connection closed (exit status 1)".into(),
                },
            ),
        ]),
    );
    type_str(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.popup(), Some(&Popup::Mcp(crate::info_popup::McpPopup)));
    let screen = render(&mut app, 110, 24);
    assert!(
        screen.contains("gh  stdio  ready · 3 tools · 1.2k tokens (deferred"),
        "{screen}"
    );
    assert!(
        screen.contains("exited: the connection closed (exit status 1)"),
        "{screen}"
    );
    assert!(screen.contains("prompts: /gh:review"), "{screen}");
    insta::assert_snapshot!(screen);
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(app.popup(), None);
    type_str(&mut app, "/mcp restart db");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::RestartMcpServer { name: "db".into() }]
    );
}

#[test]
fn resources_are_chosen_and_attached() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, status(vec![server("gh", McpState::Ready)]));
    type_str(&mut app, "/resource");
    key(&mut app, KeyCode::Enter);
    assert_eq!(ops(&mut rx), vec![Op::ListMcpResources]);
    ev(
        &mut app,
        Event::Settings(SettingsEvent::McpResources {
            resources: vec![McpResource {
                server: "gh".into(),
                uri: "repo://pith/README.md".into(),
                name: "README".into(),
                description: None,
                mime: Some("text/markdown".into()),
            }],
        }),
    );
    let screen = render(&mut app, 100, 20);
    assert!(
        screen.contains("README") && screen.contains("gh · repo://pith"),
        "{screen}"
    );
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::AttachMcpResource {
            server: "gh".into(),
            uri: "repo://pith/README.md".into()
        }]
    );
    type_str(&mut app, "/resource gh:mem://notes");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::AttachMcpResource {
            server: "gh".into(),
            uri: "mem://notes".into()
        }]
    );
}

#[test]
fn the_context_popup_shows_each_servers_definitions() {
    let (mut app, _rx) = fresh();
    ev(&mut app, status(vec![server("gh", McpState::Ready)]));
    ev(
        &mut app,
        Event::Context(ContextEvent::ContextBreakdown {
            breakdown: Breakdown {
                system: 3_000,
                tools: 6_000,
                window: 100_000,
                free: 80_000,
                ..Breakdown::default()
            },
            pins: Vec::new(),
            instructions: Vec::new(),
        }),
    );
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("mcp gh"), "{screen}");
    assert!(screen.contains("1.2k"), "{screen}");
}

/// `/mcp` says who is signed in and until when, and what to run when a sign-in is needed.
#[test]
fn the_mcp_popup_shows_oauth_sign_ins() {
    let (mut app, _rx) = fresh();
    let mut linear = server("linear", McpState::Ready);
    linear.transport = pith_protocol::event::McpTransport::Http;
    linear.sign_in = Some("signed in at auth.linear.app, token expires in 50 min".into());
    let mut notion = server(
        "notion",
        McpState::Failed {
            reason: "needs sign-in: `pith mcp login notion`".into(),
        },
    );
    notion.transport = pith_protocol::event::McpTransport::Http;
    ev(&mut app, status(vec![linear, notion]));
    type_str(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    let screen = render(&mut app, 140, 24);
    assert!(
        screen.contains("oauth: signed in at auth.linear.app, token expires in 50 min"),
        "{screen}"
    );
    assert!(
        screen.contains("failed: needs sign-in: `pith mcp login notion`"),
        "{screen}"
    );
}

/// `/mcp login NAME` asks the engine to sign in; the URL to open comes back as a notice in the
/// transcript, on rows of its own: unindented, unmarked, cut only at the screen's edge, so a
/// selection of its rows is the URL (and `/copy url` copies it whole). No `--device` hint of its
/// own: the engine's line has one only when the server offers a device flow.
#[test]
fn mcp_login_asks_the_engine_and_shows_the_url_in_the_transcript() {
    let (mut app, mut rx) = fresh();
    ev(&mut app, status(vec![server("linear", McpState::Ready)]));
    type_str(&mut app, "/mcp login linear");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        ops(&mut rx),
        vec![Op::McpLogin {
            name: "linear".into()
        }]
    );
    let url = "https://mcp.linear.app/authorize?response_type=code&client_id=abc&state=xyz&code_challenge=0123456789abcdef&redirect_uri=http%3A%2F%2F127.0.0.1%3A40000%2Fcallback";
    ev(
        &mut app,
        Event::info(format!(
            "To sign in to linear, open this URL in a browser (waiting up to 5 min):\n{url}"
        )),
    );
    let screen = render(&mut app, 100, 30);
    assert!(!screen.contains("--device"), "{screen}");
    // The URL's rows: each starts at the transcript's left edge, and together they are the URL.
    let rows: Vec<&str> = screen
        .lines()
        .map(|l| l.trim_matches('"'))
        .skip_while(|l| !l.starts_with("https://"))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(rows.len() >= 2, "{screen}");
    assert_eq!(rows.concat().trim_end(), url, "{screen}");
    insta::assert_snapshot!("mcp_login_url", screen);

    app.take_effects();
    type_str(&mut app, "/copy url");
    key(&mut app, KeyCode::Enter);
    let tmux = crate::clipboard::in_tmux();
    assert_eq!(
        app.effects(),
        [crate::effects::Effect::Write(crate::clipboard::osc52(
            url, tmux
        ))]
    );
    let screen = render(&mut app, 100, 30);
    assert!(
        screen.contains("copied the URL to mcp.linear.app (162 chars) to the clipboard"),
        "{screen}"
    );
    type_str(&mut app, "/mcp login nope");
    key(&mut app, KeyCode::Enter);
    assert!(ops(&mut rx).is_empty());
}

/// On a real terminal the URL's rows become one OSC 8 hyperlink to the whole URL; with a popup
/// over them they stay plain (the popup is drawn, not skipped).
#[test]
fn the_url_on_screen_becomes_a_hyperlink_unless_covered() {
    let (mut app, _rx) = fresh();
    ev(&mut app, status(vec![server("linear", McpState::Ready)]));
    let url = "https://mcp.linear.app/authorize?response_type=code&client_id=abc&state=xyz&code_challenge=0123456789abcdef";
    ev(
        &mut app,
        Event::info(format!("To sign in to linear, open this URL:\n{url}")),
    );
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 30)).unwrap();
    let frame = term.draw(|f| crate::view::draw(f, &mut app)).unwrap();
    let mut buf = frame.buffer.clone();
    app.transcript().link_urls(&mut buf);
    let linked: Vec<String> = (0..buf.area.height)
        .map(|y| buf[(0, y)].symbol().to_string())
        .filter(|s| s.starts_with("\x1b]8;;"))
        .collect();
    assert_eq!(linked.len(), 2, "{linked:?}");
    let open = format!("\x1b]8;;{url}\x1b\\");
    assert!(linked.iter().all(|s| s.starts_with(&open)), "{linked:?}");
    let text: String = linked
        .iter()
        .map(|s| {
            s.trim_start_matches(&open)
                .trim_end_matches("\x1b]8;;\x1b\\")
        })
        .collect();
    assert_eq!(text, url);

    type_str(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    let frame = term.draw(|f| crate::view::draw(f, &mut app)).unwrap();
    let mut buf = frame.buffer.clone();
    app.transcript().link_urls(&mut buf);
    let any = (0..buf.area.height).any(|y| buf[(0, y)].symbol().starts_with('\x1b'));
    assert!(!any, "a covered URL is not linked");
}

/// `/copy url` with no URL shown says what it copies.
#[test]
fn copy_url_without_a_url_says_so() {
    let (mut app, _rx) = fresh();
    type_str(&mut app, "/copy url");
    key(&mut app, KeyCode::Enter);
    assert!(app.effects().is_empty());
    let screen = render(&mut app, 120, 20);
    assert!(screen.contains("no web address to copy yet"), "{screen}");
}
