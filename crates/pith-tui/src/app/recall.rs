//! What left the view, from the keyboard: `left_list` opens the list of the newest
//! compaction's items, enter asks the engine for one (`Op::Recall`) and shows it in full
//! (`crate::left_view`); esc goes back to the list.

use pith_protocol::event::Op;

use crate::app::{App, Popup};
use crate::left_view::{self, RecallView};
use crate::picker::Picker;
use crate::transcript::NoticeLevel;

impl App {
    /// `left_list`: the list of what the newest compaction took out of the view, or why there
    /// is none.
    pub(crate) fn open_left_list(&mut self) {
        match left_view::list(&self.transcript) {
            Ok(picker) => self.popup = Some(Popup::Picker(picker)),
            Err(why) => self.transcript.notice(NoticeLevel::Info, why),
        }
    }

    /// The entry `id` of the list `back` was chosen: it is asked for, and shown when it comes.
    pub(crate) fn recall_item(&mut self, id: String, back: Picker) {
        let label = back
            .items()
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.label.clone())
            .unwrap_or_default();
        let session_id = self.session.id().to_string();
        self.send(Op::Recall {
            session_id,
            id: id.clone(),
        });
        self.popup = Some(Popup::Recall(RecallView::waiting(id, label, Some(back))));
    }

    /// The engine brought an item back: the view waiting for it shows it.
    pub(crate) fn recalled(&mut self, id: &str, found: bool, kind: String, text: &str) {
        if let Some(Popup::Recall(v)) = &mut self.popup
            && v.id() == id
        {
            v.answered(found, kind, text);
        }
    }
}
