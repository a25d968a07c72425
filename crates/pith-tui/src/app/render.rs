//! The router's drawing: the transcript above, the composer, the status bar at the bottom; the
//! completion popup, the open popup and the permission prompt on top.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;

use crate::component::Component;
use crate::composer::ComposerChrome;
use crate::format::truncate;
use crate::transcript::Banner;
use crate::view::popups;
use pith_protocol::event::Op;

use super::{App, Popup};

const MAX_COMPOSER_ROWS: u16 = 10;

/// Draws the whole screen.
fn draw(frame: &mut Frame, app: &mut App) {
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
        Some(Popup::Context(c)) => {
            c.render(frame, above_status, (app.status.context(), app.mcp.list()))
        }
        Some(Popup::Mcp(m)) => m.render(frame, above_status, app.mcp.list()),
        Some(Popup::Picker(p)) => p.render(frame, above_status, ()),
        Some(Popup::Key(dialog)) => dialog.render(frame, area, ()),
        Some(Popup::Recall(v)) => v.render(frame, above_status, ()),
        None => {}
    }
    if !app.forms.is_empty() && app.permissions.is_empty() {
        app.forms.render(frame, above_status, ());
    }
    if !app.permissions.is_empty() {
        app.permissions
            .render(frame, above_status, (&app.transcript, &app.keymap));
    }
}

fn draw_transcript(frame: &mut Frame, app: &mut App, area: Rect) {
    let banner = Banner {
        model: app.status.model(),
        workspace: app.session.workspace(),
    };
    app.transcript.render(frame, area, banner);
    if let Some(before) = app.transcript.take_history_request() {
        let session_id = app.session.id().to_string();
        app.send(Op::LoadHistory { session_id, before });
    }
}

fn draw_composer(frame: &mut Frame, app: &mut App, area: Rect) {
    let chrome = ComposerChrome {
        busy_title: app.busy().then(|| busy_title(app)),
        below: app.transcript.lines_below(),
        quit_armed: app.quit.armed(),
        keymap: &app.keymap,
    };
    app.composer.render(frame, area, chrome);
}

/// The composer's title while a turn runs: the spinner and time, or what it waits for.
fn busy_title(app: &App) -> String {
    let secs = app
        .status
        .turn_time(app.status.now())
        .map_or(0, |t| t.as_secs());
    let spin = app.status.spinner_frame();
    if app.status.interrupting() {
        format!(" {spin} interrupting ")
    } else if !app.permissions.is_empty() || !app.forms.is_empty() {
        " ? the agent waits for your answer above ".to_string()
    } else {
        format!(" {spin} working {secs}s · esc to interrupt · enter queues ")
    }
}

impl App {
    /// Draws the whole screen. Takes `&mut self` to refresh layout caches and scroll bounds.
    pub(crate) fn render(&mut self, frame: &mut Frame) {
        draw(frame, self);
    }

    /// What the status bar draws besides its own state.
    pub(crate) fn status_context(&self) -> crate::status_bar::StatusContext<'_> {
        crate::status_bar::StatusContext {
            agents_tokens: self.subagents.tokens,
            agents_cost: self.subagents.cost,
            mcp: self.mcp.list(),
            workspace: self.session.workspace(),
            asking: self.permissions.front().map(|r| r.tool.as_str()),
        }
    }

    /// What the status bar shows now.
    #[cfg(test)]
    pub(crate) fn status_view(&self) -> crate::view::status::StatusView<'_> {
        self.status.view(self.status_context())
    }
}
