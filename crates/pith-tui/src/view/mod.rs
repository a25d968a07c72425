//! Drawing: transcript above, composer, status bar at the bottom; overlays on top.

pub mod permission;
pub mod popups;
pub mod status;

use crate::theme::theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Popup};
use super::component::Component;
use super::composer::ComposerChrome;
use super::format::truncate;
use super::keymap::Action;
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
    app.status.render(frame, status_area, app.status_context());

    // overlays never cover the status bar
    let above_status = transcript_area.union(composer_area);
    if let Some((query, items)) = app.mention_popup() {
        let sel = app.completion.mention_selected(items.len());
        popups::files(frame, &query, &items, sel, composer_area, area.y);
    } else if let Some(items) = app.slash_popup() {
        let sel = app.completion.slash_selected(items.len());
        popups::slash(frame, &items, sel, composer_area, area.y);
    }
    match &mut app.popup {
        Some(Popup::Help(help)) => {
            help.render(frame, transcript_area, (&app.keymap, &app.custom_commands))
        }
        Some(Popup::Context(c)) => c.render(frame, above_status, (app.status.context(), &app.mcp)),
        Some(Popup::Mcp(m)) => m.render(frame, above_status, &app.mcp),
        Some(Popup::Picker(p)) => p.render(frame, above_status, ()),
        Some(Popup::Key(dialog)) => dialog.screen.draw(frame),
        None => {}
    }
    if !app.permissions.queue.is_empty() {
        app.permissions
            .render(frame, above_status, (&app.transcript, &app.keymap));
    }
}

/// Lines for prompts sent but not yet echoed by the engine.
fn pending_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for p in &app.pending {
        let (mark, style) = if p.queued {
            ("◷ ", Style::default().fg(theme().dim))
        } else {
            (
                "› ",
                Style::default()
                    .fg(theme().user)
                    .add_modifier(Modifier::BOLD),
            )
        };
        let first = [Span::styled(mark, style)];
        let rest = [Span::raw("  ")];
        let text_style = if p.queued {
            Style::default().fg(theme().dim)
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
                Style::default().fg(theme().dim),
            )));
        }
        if p.queued {
            lines.push(Line::from(Span::styled(
                "  queued · delivered to the agent at its next step",
                Style::default()
                    .fg(theme().dim)
                    .add_modifier(Modifier::ITALIC),
            )));
        }
        out.push(Line::default());
        out.extend(lines);
    }
    out
}

/// The banner's height: it heads a session's transcript once its start is loaded.
pub const BANNER_LINES: usize = 9;

fn welcome(app: &App, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme().dim);
    let mut lines = vec![
        Line::default(),
        Line::from(vec![
            Span::styled(
                " ✻ pith",
                Style::default()
                    .fg(theme().accent)
                    .add_modifier(Modifier::BOLD),
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
            Span::raw(app.status.model().to_string()),
        ]),
        Line::from(vec![
            Span::styled(" workspace  ", dim),
            Span::raw(app.workspace.display().to_string()),
        ]),
        Line::default(),
        Line::from(Span::styled(
            " /help for commands and keys · @ attaches a file · ! runs a command",
            dim,
        )),
    ];
    // a blank line between the banner and the conversation under it
    lines.push(Line::default());
    debug_assert_eq!(lines.len(), BANNER_LINES);
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
    // The banner heads the conversation: it scrolls away with it, it does not vanish.
    let banner = if app.history.more {
        Vec::new()
    } else {
        welcome(app, width)
    };
    let b = banner.len();
    app.viewport.set_banner_lines(b);
    let mut t_total = app.transcript.layout(area.width, app.viewport.expand_all());
    app.set_layout(area, b + t_total + pending.len());
    // highlight the code on screen; the heights stay, so this is one pass
    if app.transcript.reveal(app.top_line().saturating_sub(b), h) {
        t_total = app.transcript.layout(area.width, app.viewport.expand_all());
        app.set_layout(area, b + t_total + pending.len());
    }
    let total = b + t_total + pending.len();
    let top = app.top_line();
    let mut lines: Vec<Line<'static>> = banner.into_iter().skip(top).take(h).collect();
    let t_top = top.saturating_sub(b);
    if lines.len() < h && t_top < t_total {
        lines.extend(
            app.transcript
                .visible(t_top, (h - lines.len()).min(t_total - t_top)),
        );
    }
    let mut line = top + lines.len();
    while lines.len() < h && line < total {
        if let Some(p) = line.checked_sub(b + t_total).and_then(|i| pending.get(i)) {
            lines.push(p.clone());
        }
        line += 1;
    }
    frame.render_widget(Paragraph::new(lines), area);

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
                Style::default().fg(theme().on_accent).bg(theme().muted),
            )),
            r,
        );
    }
}

const SPINNER: [&str; 4] = ["◐", "◓", "◑", "◒"];

fn draw_composer(frame: &mut Frame, app: &mut App, area: Rect) {
    let chrome = ComposerChrome {
        busy_title: app.busy().then(|| busy_title(app)),
        hint: composer_hint(app, area.width),
        below: app
            .viewport
            .scroll_top()
            .map(|_| app.viewport.lines_below()),
    };
    app.composer.render(frame, area, chrome);
}

/// The composer's title while a turn runs: the spinner and time, or what it waits for.
fn busy_title(app: &App) -> String {
    let secs = app.status.turn_time(app.now).map_or(0, |t| t.as_secs());
    let spin = SPINNER[app.spinner % SPINNER.len()];
    if app.interrupting {
        format!(" {spin} interrupting ")
    } else if !app.permissions.queue.is_empty() {
        " ? the agent waits for your answer above ".to_string()
    } else {
        format!(" {spin} working {secs}s · esc to interrupt · enter queues ")
    }
}

/// The keys hint under the composer (`width` columns): the quit prompt when armed, a short
/// one when narrow.
fn composer_hint(app: &App, width: u16) -> Span<'static> {
    let km = &app.keymap;
    let key_of = |a: Action, prefer: &[&str]| km.hint(a, prefer);
    if app.quit_armed.is_some() {
        Span::styled(
            format!(
                " press {} again to quit ",
                key_of(Action::Cancel, &[]).unwrap_or_else(|| "ctrl+c".into())
            ),
            Style::default()
                .fg(theme().warn)
                .add_modifier(Modifier::BOLD),
        )
    } else if app.area_is_narrow(width) {
        let details = key_of(Action::ExpandAll, &["ctrl+o"])
            .map(|k| format!("· {k} details "))
            .unwrap_or_default();
        Span::styled(
            format!(" / commands {details}"),
            Style::default().fg(theme().dim),
        )
    } else {
        // Shift+Enter only reaches us with the kitty keyboard protocol; Ctrl+J always does.
        let newline: &[&str] = if app.keyboard_enhanced {
            &["shift+enter", "ctrl+j"]
        } else {
            &["ctrl+j", "alt+enter"]
        };
        let parts = [
            key_of(Action::Submit, &["enter"]).map(|k| format!("{k} send")),
            key_of(Action::Newline, newline).map(|k| format!("{k} newline")),
            Some("/ commands".to_string()),
            key_of(Action::ExpandAll, &["ctrl+o"]).map(|k| format!("{k} details")),
        ];
        Span::styled(
            format!(
                " {} ",
                parts.into_iter().flatten().collect::<Vec<_>>().join(" · ")
            ),
            Style::default().fg(theme().dim),
        )
    }
}

impl App {
    fn area_is_narrow(&self, width: u16) -> bool {
        width < 72
    }
}

impl App {
    /// What the status bar draws besides its own state.
    pub(crate) fn status_context(&self) -> crate::status_bar::StatusContext<'_> {
        crate::status_bar::StatusContext {
            agents_tokens: self.subagents.tokens,
            agents_cost: self.subagents.cost,
            mcp: &self.mcp,
            workspace: &self.workspace,
            engine_gone: self.engine_gone,
            interrupting: self.interrupting,
            asking: self.permissions.queue.front().map(|r| r.tool.as_str()),
            spinner: self.spinner,
            now: self.now,
        }
    }

    /// What the status bar shows now.
    #[cfg(test)]
    pub(crate) fn status_view(&self) -> status::StatusView<'_> {
        self.status.view(self.status_context())
    }
}
