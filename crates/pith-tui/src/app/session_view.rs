//! The session on screen and the directory it works in: which session events and pages belong
//! to, where `@` mentions and `/init` look, and the sessions picker's view of the others.

use std::path::{Path, PathBuf};

use pith_protocol::message::Session;

use super::PickItem;
use crate::format::{home_short, when};

#[derive(Debug)]
pub(crate) struct SessionView {
    session: Session,
    /// Where the session runs: the TUI's directory, or a resumed session's own.
    workspace: PathBuf,
}

impl SessionView {
    pub(crate) fn new(session: Session, workspace: PathBuf) -> Self {
        SessionView { session, workspace }
    }

    pub(crate) fn id(&self) -> &str {
        &self.session.id
    }

    /// Is `id` the session on screen?
    pub(crate) fn is(&self, id: &str) -> bool {
        self.session.id == id
    }

    #[cfg(test)]
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The session on screen is now `session` (the same one with new figures, or another).
    pub(crate) fn set(&mut self, session: Session) {
        self.session = session;
    }

    /// The session works in `dir` from now on.
    pub(crate) fn set_workspace(&mut self, dir: PathBuf) {
        self.workspace = dir;
    }

    /// The sessions picker: this directory's sessions first (newest first), then the others,
    /// each saying where it belongs.
    pub(crate) fn picker_items(&self, sessions: &[Session]) -> Vec<PickItem> {
        let here = self.workspace.to_string_lossy();
        let (mut mine, others): (Vec<&Session>, Vec<&Session>) =
            sessions.iter().partition(|s| s.directory == here);
        mine.extend(others);
        mine.into_iter()
            .map(|s| self.picker_item(s, s.directory != here))
            .collect()
    }

    fn picker_item(&self, s: &Session, elsewhere: bool) -> PickItem {
        let mut detail = format!(
            "{}{} · {}",
            if s.id == self.session.id {
                "current · "
            } else {
                ""
            },
            when(s.time_updated),
            crate::format::tokens(s.tokens),
        );
        if elsewhere {
            detail.push_str(&format!(" · in {}", home_short(&s.directory)));
        }
        if let Some(agent) = &s.agent {
            detail = format!("{} · {detail}", crate::format::sanitize(agent));
        }
        PickItem {
            id: s.id.clone(),
            label: if s.title.trim().is_empty() {
                "(untitled)".to_string()
            } else {
                s.title.clone()
            },
            detail,
        }
    }
}
