//! Ctrl+V / Alt+V and `/paste-image`: the clipboard is read off the UI thread
//! (`clipboard_image`), and what it held lands in the composer when the tick finds it done: an
//! image as its chip, text (ctrl+v only) as a paste, or the line that says why nothing came.

use std::sync::mpsc::{Receiver, TryRecvError};

use crate::clipboard_image::{ImageInput, Pasted, size_label};
use crate::transcript::NoticeLevel;

use super::App;

/// The handed-in means, and the read under way.
#[derive(Debug, Default)]
pub(crate) struct ImagePaste {
    input: ImageInput,
    pending: Option<Receiver<Pasted>>,
}

impl ImagePaste {
    pub(crate) fn new(input: ImageInput) -> Self {
        ImagePaste {
            input,
            pending: None,
        }
    }
}

impl App {
    /// Reads the clipboard for the prompt. `explicit` (`/paste-image`): an image or nothing;
    /// else (the key) its text pastes when it holds no image.
    pub(super) fn paste_image(&mut self, explicit: bool) {
        if self.images.pending.is_some() {
            self.transcript
                .notice(NoticeLevel::Info, "still reading the clipboard");
            return;
        }
        let model = self.status.model().to_string();
        let refusal = (!(self.images.input.takes_images)(&model)).then(|| {
            if model.is_empty() || model.starts_with('(') {
                return "no model is set up: an image cannot be attached".to_string();
            }
            format!(
                "{model} does not take images: not attached (set images = true under \
                 [models.\"{model}\"] if it does)"
            )
        });
        let dir = self.images.input.dir.clone();
        let refusal = refusal.or_else(|| dir.is_none().then(no_dir));
        if explicit && let Some(line) = refusal {
            self.transcript.notice(NoticeLevel::Warn, line);
            return;
        }
        let dir = dir.unwrap_or_default();
        let env = (self.images.input.env)();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pasted = crate::clipboard_image::paste(&env, &dir, !explicit, refusal.as_deref());
            let _ = tx.send(pasted);
        });
        self.images.pending = Some(rx);
    }

    /// The tick: a read that finished lands in the prompt.
    pub(super) fn poll_clipboard(&mut self) {
        let Some(rx) = &self.images.pending else {
            return;
        };
        match rx.try_recv() {
            Ok(pasted) => {
                self.images.pending = None;
                self.clipboard_read(pasted);
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.images.pending = None,
        }
    }

    fn clipboard_read(&mut self, pasted: Pasted) {
        self.dirty = true;
        match pasted {
            Pasted::Image { path, kind, bytes } => {
                self.composer.attach_image(
                    &path.to_string_lossy(),
                    kind.extension(),
                    &size_label(bytes),
                );
                self.completion.pasted();
            }
            Pasted::Text(text) => {
                self.composer.paste_in(&text, self.session.workspace());
                self.completion.pasted();
            }
            Pasted::Refused(line) => self.transcript.notice(NoticeLevel::Warn, line),
        }
    }

    /// Waits for the read under way (tests: the tick would find it later).
    #[cfg(test)]
    pub(crate) fn finish_clipboard_read(&mut self) {
        if let Some(rx) = self.images.pending.take() {
            let pasted = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the clipboard read ends");
            self.clipboard_read(pasted);
        }
    }
}

fn no_dir() -> String {
    "images cannot be pasted here: pith has no data directory for them".to_string()
}
