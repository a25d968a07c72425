//! The transcript's tool cells: finding a call's cell, its start, live output (a bounded tail),
//! running time and end.

use pith_protocol::message::{PartKind, ToolState};

use super::Transcript;

/// Live output kept per running tool cell (its tail).
const LIVE_OUTPUT_BYTES: usize = 64 * 1024;

impl Transcript {
    pub(super) fn tool_cell(&self, call_id: &str) -> Option<usize> {
        self.last_where(|c| {
            matches!(c.part().map(|p| &p.kind), Some(PartKind::Tool { call_id: id, .. }) if id == call_id)
        })
    }

    /// The tool name and input of the call `call_id` (for the permission modal).
    pub fn tool_call(&self, call_id: &str) -> Option<(&str, &serde_json::Value)> {
        self.cells
            .iter()
            .rev()
            .find_map(|c| match c.part().map(|p| &p.kind) {
                Some(PartKind::Tool {
                    call_id: id,
                    tool,
                    input,
                    ..
                }) if id == call_id => Some((tool.as_str(), input)),
                _ => None,
            })
    }

    pub fn tool_started(&mut self, call_id: &str) {
        if let Some(i) = self.tool_cell(call_id) {
            self.touch_at(i);
        }
    }

    pub fn tool_finished(&mut self, call_id: &str, duration_ms: u64) {
        if let Some(i) = self.tool_cell(call_id) {
            self.cells[i].duration_ms = Some(duration_ms);
            self.cells[i].live_output = None;
            self.touch_at(i);
        }
    }

    /// What a running tool shows now, replacing what it showed (a sub-agent's progress).
    pub fn tool_live(&mut self, call_id: &str, text: String) {
        if let Some(i) = self.tool_cell(call_id) {
            self.cells[i].live_output = Some(text);
            self.touch_at(i);
        }
    }

    /// Output a running tool produced: appended to its cell, of which only the tail is kept.
    pub fn tool_output(&mut self, call_id: &str, chunk: &str) {
        let Some(i) = self.tool_cell(call_id) else {
            return;
        };
        let out = self.cells[i].live_output.get_or_insert_with(String::new);
        out.push_str(chunk);
        if out.len() > LIVE_OUTPUT_BYTES {
            let mut cut = out.len() - LIVE_OUTPUT_BYTES / 2;
            while !out.is_char_boundary(cut) {
                cut += 1;
            }
            // start at a line so the first line shown is whole
            if let Some(nl) = out[cut..].find('\n') {
                cut += nl + 1;
            }
            out.replace_range(..cut, "");
        }
        self.touch_at(i);
    }

    /// Running tools show how long they have run: re-render those whose second changed.
    pub fn tick_running(&mut self, now_ms: i64) {
        for i in 0..self.cells.len() {
            let start = match self.cells[i].part().map(|p| &p.kind) {
                Some(PartKind::Tool {
                    state: ToolState::Running { start, .. },
                    ..
                }) => *start,
                _ => continue,
            };
            let secs = (now_ms - start).max(0) as u64 / 1000;
            if secs != self.cells[i].elapsed_secs {
                self.cells[i].elapsed_secs = secs;
                self.touch_at(i);
            }
        }
    }

    /// Is any tool still running? (cells show a live state then)
    pub fn running_tools(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| {
                matches!(
                    c.part().map(|p| &p.kind),
                    Some(PartKind::Tool {
                        state: ToolState::Running { .. } | ToolState::Pending,
                        ..
                    })
                )
            })
            .count()
    }
}
