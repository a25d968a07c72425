//! Drawing: transcript above, composer, status bar at the bottom; overlays on top.

pub mod popups;
pub mod status;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Padding, Paragraph};

use super::app::{App, Popup};
use super::cells::{ACCENT, DIM, USER, WARN};
use super::format::truncate;
use super::wrap::wrap;

const MAX_COMPOSER_ROWS: u16 = 10;

/// Draws the whole screen. Takes `&mut App` to refresh layout caches and scroll bounds.
pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    if area.width < 12 || area.height < 4 {
        let msg = truncate("pith: window too small", area.width as usize);
        frame.render_widget(Paragraph::new(msg), area);
        return;
    }
    let inner_w = area.width.saturating_sub(3);
    let max_rows = MAX_COMPOSER_ROWS
        .min((area.height.saturating_sub(4)) / 2)
        .max(1);
    let composer_h = app.composer.rows(inner_w).min(max_rows) + 2;
    let status_h = 1;
    let [transcript_area, composer_area, status_area] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(composer_h),
        Constraint::Length(status_h),
    ])
    .areas(area);

    draw_transcript(frame, app, transcript_area);
    draw_composer(frame, app, composer_area);
    frame.render_widget(
        Paragraph::new(status::status_line(app, area.width as usize)),
        status_area,
    );

    // overlays never cover the status bar
    let above_status = transcript_area.union(composer_area);
    if let Some(items) = app.slash_popup() {
        let sel = app.slash_selected.min(items.len() - 1);
        popups::slash(frame, &items, sel, composer_area, area.y);
    }
    match &mut app.popup {
        Some(Popup::Help { scroll }) => *scroll = popups::help(frame, transcript_area, *scroll),
        Some(Popup::Context(b)) => {
            popups::context(frame, above_status, b.as_ref(), &app.context, &app.mcp)
        }
        Some(Popup::Mcp) => popups::mcp(frame, above_status, &app.mcp),
        Some(Popup::Picker(p)) => popups::picker(frame, above_status, p),
        None => {}
    }
    if !app.permissions.queue.is_empty() {
        popups::permission(frame, above_status, app);
    }
}

/// Lines for prompts sent but not yet echoed by the engine.
fn pending_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for p in &app.pending {
        let (mark, style) = if p.queued {
            ("◷ ", Style::default().fg(DIM))
        } else {
            ("› ", Style::default().fg(USER).add_modifier(Modifier::BOLD))
        };
        let first = [Span::styled(mark, style)];
        let rest = [Span::raw("  ")];
        let text_style = if p.queued {
            Style::default().fg(DIM)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        let mut lines: Vec<Line<'static>> = Vec::new();
        for (i, l) in p.text.split('\n').enumerate() {
            let pre: &[Span<'static>] = if i == 0 { &first } else { &rest };
            lines.extend(wrap(
                &[Span::styled(l.to_string(), text_style)],
                width,
                pre,
                &rest,
            ));
        }
        if lines.len() > 6 {
            let more = lines.len() - 5;
            lines.truncate(5);
            lines.push(Line::from(Span::styled(
                format!("  … +{more} lines"),
                Style::default().fg(DIM),
            )));
        }
        if p.queued {
            lines.push(Line::from(Span::styled(
                "  queued · delivered to the agent at its next step",
                Style::default().fg(DIM).add_modifier(Modifier::ITALIC),
            )));
        }
        out.push(Line::default());
        out.extend(lines);
    }
    out
}

fn welcome(app: &App, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(DIM);
    let mut lines = vec![
        Line::default(),
        Line::from(vec![
            Span::styled(
                " ✻ pith",
                Style::default().fg(ACCENT).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" {}", env!("CARGO_PKG_VERSION")), dim),
        ]),
        Line::from(Span::styled(
            " a coding agent that never runs out of context",
            dim,
        )),
        Line::default(),
        Line::from(vec![
            Span::styled(" model      ", dim),
            Span::raw(app.model.clone()),
        ]),
        Line::from(vec![
            Span::styled(" workspace  ", dim),
            Span::raw(app.workspace.display().to_string()),
        ]),
        Line::default(),
        Line::from(Span::styled(
            " /help for commands and keys · ctrl+c twice to quit",
            dim,
        )),
    ];
    for l in &mut lines {
        let s = l.to_string();
        if super::format::width(&s) > width {
            *l = Line::from(Span::styled(truncate(&s, width), dim));
        }
    }
    lines
}

fn draw_transcript(frame: &mut Frame, app: &mut App, area: Rect) {
    if area.height == 0 {
        app.set_layout(area, 0);
        return;
    }
    let width = area.width as usize;
    let h = area.height as usize;
    let pending = pending_lines(app, width);
    let mut t_total = app.transcript.layout(area.width, app.expand_all);
    app.set_layout(area, t_total + pending.len());
    // highlight the code on screen; the heights stay, so this is one pass
    if app.transcript.reveal(app.top_line(), h) {
        t_total = app.transcript.layout(area.width, app.expand_all);
        app.set_layout(area, t_total + pending.len());
    }
    let total = t_total + pending.len();
    if total == 0 {
        frame.render_widget(Paragraph::new(welcome(app, width)), area);
        return;
    }
    let top = app.top_line();
    let mut lines = Vec::with_capacity(h);
    if top < t_total {
        lines = app.transcript.visible(top, h.min(t_total - top));
    }
    let mut line = top + lines.len();
    while lines.len() < h && line < total {
        if let Some(p) = line.checked_sub(t_total).and_then(|i| pending.get(i)) {
            lines.push(p.clone());
        }
        line += 1;
    }
    frame.render_widget(Paragraph::new(lines), area);

    if app.scroll_top.is_some() {
        let below = total.saturating_sub(top + h);
        let label = format!(" ↓ {below} more lines · end to follow ");
        corner_label(frame, area, &label, area.y + area.height - 1);
    }
    if app.history.loading && top == 0 {
        corner_label(frame, area, " ↑ loading older messages… ", area.y);
    }
}

/// A one-line label at the right end of row `y` of `area` (dropped when it does not fit).
fn corner_label(frame: &mut Frame, area: Rect, label: &str, y: u16) {
    let w = super::format::width(label) as u16;
    if w < area.width {
        let r = Rect {
            x: area.x + area.width - w,
            y,
            width: w,
            height: 1,
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                label.to_string(),
                Style::default().fg(Color::Black).bg(Color::Gray),
            )),
            r,
        );
    }
}

const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

fn draw_composer(frame: &mut Frame, app: &mut App, area: Rect) {
    let busy = app.busy();
    let border = if busy { WARN } else { DIM };
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(border))
        .padding(Padding::left(1));
    if busy {
        let secs = app.now.saturating_duration_since(app.state_since).as_secs();
        let spin = SPINNER[app.spinner % SPINNER.len()];
        let title = if app.interrupting {
            format!(" {spin} interrupting ")
        } else if !app.permissions.queue.is_empty() {
            " ? the agent waits for your answer above ".to_string()
        } else {
            format!(" {spin} working {secs}s · esc to interrupt · enter queues ")
        };
        block = block.title(Span::styled(title, Style::default().fg(WARN)));
    }
    let hint = if app.quit_armed.is_some() {
        Span::styled(
            " press ctrl+c again to quit ",
            Style::default().fg(WARN).add_modifier(Modifier::BOLD),
        )
    } else if app.area_is_narrow(area.width) {
        Span::styled(" / commands · ctrl+o details ", Style::default().fg(DIM))
    } else {
        // Shift+Enter only reaches us with the kitty keyboard protocol; Ctrl+J always does.
        let newline = if app.keyboard_enhanced {
            "shift+enter"
        } else {
            "ctrl+j"
        };
        Span::styled(
            format!(" enter send · {newline} newline · / commands · ctrl+o details "),
            Style::default().fg(DIM),
        )
    };
    block = block.title_bottom(Line::from(hint).right_aligned());
    app.composer.textarea.set_block(block);
    frame.render_widget(&app.composer.textarea, area);
}

impl App {
    fn area_is_narrow(&self, width: u16) -> bool {
        width < 72
    }
}
