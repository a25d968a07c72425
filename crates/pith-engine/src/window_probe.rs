//! A local server asked for the model's window at start (see `window.rs`), and what to say if it
//! cannot tell.

/// A local server asked for its window at start, and the warning to give if it cannot tell.
#[derive(Default)]
pub(crate) struct WindowProbe {
    /// The server's answer: the window and where it was read.
    probe: Option<tokio::task::JoinHandle<Option<(u64, String)>>>,
    /// Said when the local server asked for the window cannot tell it either.
    warning: Option<String>,
}

impl WindowProbe {
    /// Asks in `probe`; `warning` is said if the server cannot tell.
    pub(crate) fn start(
        &mut self,
        probe: tokio::task::JoinHandle<Option<(u64, String)>>,
        warning: Option<String>,
    ) {
        self.probe = Some(probe);
        self.warning = warning;
    }

    pub(crate) fn forget_warning(&mut self) {
        self.warning = None;
    }

    /// The question under way, to await its answer.
    pub(crate) fn take_probe(&mut self) -> Option<tokio::task::JoinHandle<Option<(u64, String)>>> {
        self.probe.take()
    }

    pub(crate) fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }
}
