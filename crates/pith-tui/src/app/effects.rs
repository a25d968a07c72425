//! The terminal work the router queues for the run loop between frames: `/copy` (an OSC 52
//! sequence), the bell and desktop notifications, and the external editor's text in and out.

use std::time::Instant;

use crate::clipboard::{MAX_COPY_BYTES, copy_target, in_tmux, osc52};
use crate::effects::Effect;
use crate::transcript::NoticeLevel;

use super::App;

impl App {
    /// The composer's text with pasted chips expanded, for the editor.
    pub(crate) fn editor_text(&self) -> String {
        self.composer.for_editor()
    }

    /// What the editor gave back: the new composer text, or why there is none.
    pub(crate) fn editor_done(&mut self, result: Result<String, impl std::fmt::Display>) {
        match result {
            Ok(text) => self.composer.from_editor(&text),
            Err(e) => self.transcript.notice(NoticeLevel::Error, e.to_string()),
        }
        self.dirty = true;
    }

    /// A turn ended: notify if it ran long (measured from `turn_started`, before it is reset).
    pub(crate) fn notify_turn_end(&mut self, now: Instant) {
        let Some(ran) = self.status.turn_time(now) else {
            return;
        };
        if let Some(bytes) = self.notifier.turn_ended(ran) {
            self.effects.push(Effect::Write(bytes));
        }
    }

    /// A permission question appeared.
    pub(crate) fn notify_waiting(&mut self, tool: &str) {
        if let Some(bytes) = self
            .notifier
            .waiting(&format!("{tool} waits for your permission"))
        {
            self.effects.push(Effect::Write(bytes));
        }
    }

    /// `/copy [N|url]`: queues the OSC 52 sequence and says what was copied.
    pub(crate) fn copy_command(&mut self, arg: Option<&str>) {
        let text = match copy_target(&self.transcript, arg) {
            Ok(t) => t,
            Err(e) => return self.transcript.notice(NoticeLevel::Error, e.to_string()),
        };
        if text.len() > MAX_COPY_BYTES {
            return self.transcript.notice(
                NoticeLevel::Error,
                format!(
                    "too long to copy through the terminal ({} KB; at most {} KB)",
                    text.len() / 1000,
                    MAX_COPY_BYTES / 1000
                ),
            );
        }
        let what = match arg.map(str::trim).filter(|a| !a.is_empty()) {
            // Which site it leads to, so a URL some other notice slipped in is seen.
            Some("url") => format!("the URL to {}", crate::format::sanitize(url_host(&text))),
            Some(n) => format!("code block {n}"),
            None => "the last answer".to_string(),
        };
        let chars = text.chars().count();
        self.effects.push(Effect::Write(osc52(&text, in_tmux())));
        self.transcript.notice(
            NoticeLevel::Info,
            format!("copied {what} ({chars} chars) to the clipboard"),
        );
    }
}

/// The host (and port) of a URL: what follows `://` up to the path, query or fragment.
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

#[cfg(test)]
mod tests {
    /// The host named is where the URL leads, not a user part that looks like a host.
    #[test]
    fn url_host_is_the_authority_without_user_info() {
        assert_eq!(
            super::url_host("https://a.example:8443/x?y#z"),
            "a.example:8443"
        );
        assert_eq!(
            super::url_host("https://mcp.linear.app@evil.example/authorize"),
            "evil.example"
        );
        assert_eq!(super::url_host("http://127.0.0.1:5?q=/"), "127.0.0.1:5");
    }
}
