//! `/ps` (ARCHITECTURE.md §5.3): the session's background jobs in a picker — number, command,
//! state, age, last line; enter or delete stops the selected one. The list comes from the
//! engine (`Op::ListJobs`) and is refreshed by every `Jobs` event while the picker is open.

use pith_protocol::event::{Job, Op};

use crate::app::{App, PickItem, Picker, PickerKind, Popup};
use crate::transcript::NoticeLevel;

/// A job as the picker lists it.
fn item(job: &Job, now_ms: i64) -> PickItem {
    let mut detail = format!(
        "{} · {}",
        job.state.describe(),
        pith_protocol::event::age(now_ms - job.started)
    );
    if !job.last_line.is_empty() {
        detail.push_str(" · ");
        // (bounded: the command is what tells the jobs apart)
        detail.push_str(&pith_protocol::text::one_line_max(&job.last_line, 40));
    }
    PickItem {
        id: job.id.to_string(),
        label: format!(
            "{:>2}  {}",
            job.id,
            pith_protocol::text::one_line_max(&job.command, 70)
        ),
        detail,
    }
}

impl App {
    /// `/ps`: the jobs, once the engine lists them.
    pub(crate) fn ps_command(&mut self) {
        self.popup = Some(Popup::Picker(Picker::loading(PickerKind::Jobs)));
        self.send(Op::ListJobs);
    }

    /// The engine's list of jobs (asked for, or one started, ended or stopped): it refills an
    /// open `/ps`, the selection kept on the same job.
    pub(crate) fn jobs_listed(&mut self, jobs: Vec<Job>) {
        let Some(Popup::Picker(p)) = &mut self.popup else {
            return;
        };
        if *p.kind() != PickerKind::Jobs {
            return;
        }
        let now = pith_protocol::message::now_ms();
        let selected = p.selected_item().map(|i| i.id.clone());
        let items: Vec<PickItem> = jobs.iter().rev().map(|j| item(j, now)).collect();
        let at = selected
            .and_then(|id| items.iter().position(|i| i.id == id))
            .unwrap_or(0);
        if items.is_empty() {
            self.popup = None;
            self.transcript.notice(
                NoticeLevel::Info,
                "no background jobs · the agent starts one with bash `background: true` (a dev server, a watcher)",
            );
            return;
        }
        *p = Picker::new(PickerKind::Jobs, items, at);
    }

    /// Enter or delete on a job: the engine stops it (its whole process tree); the picker
    /// stays open and shows it stopped.
    pub(crate) fn stop_job(&mut self, id: &str) {
        let Ok(id) = id.parse::<u32>() else { return };
        if !matches!(&self.popup, Some(Popup::Picker(p)) if *p.kind() == PickerKind::Jobs) {
            self.popup = Some(Popup::Picker(Picker::loading(PickerKind::Jobs)));
        }
        self.send(Op::KillJob { id });
    }
}
