//! Drawing: transcript above, composer, status bar at the bottom; overlays on top.

pub mod elicit_form;
pub mod permission;
pub mod plan_box;
pub mod popups;
pub mod status;

use ratatui::Frame;

use super::app::App;

/// Draws the whole screen. Takes `&mut App` to refresh layout caches and scroll bounds.
pub fn draw(frame: &mut Frame, app: &mut App) {
    app.render(frame);
    if crate::hyperlink::enabled() {
        app.transcript().link_urls(frame.buffer_mut());
    }
}
