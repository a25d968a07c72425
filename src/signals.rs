//! The signals that ask pith to stop: Ctrl-C (SIGINT), SIGTERM and SIGHUP. A front end that
//! listens stops the running turn cleanly (what streamed is saved, marked interrupted) and exits
//! with the shell's code for the signal: 130, 143 or 129.

/// Listens for the stop signals from its creation on.
pub(crate) struct StopSignals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

/// Exit code after Ctrl-C.
pub(crate) const EXIT_INTERRUPTED: i32 = 130;

impl StopSignals {
    /// Needs a tokio runtime. Once created, these signals no longer end pith by themselves.
    pub(crate) fn new() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                int: signal(SignalKind::interrupt())?,
                term: signal(SignalKind::terminate())?,
                hup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// The next stop signal, as the exit code it calls for (128 + its number).
    pub(crate) async fn recv(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => 128 + libc::SIGINT,
                _ = self.term.recv() => 128 + libc::SIGTERM,
                _ = self.hup.recv() => 128 + libc::SIGHUP,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            EXIT_INTERRUPTED
        }
    }

    /// The signals as a stream of exit codes (for the TUI's loop).
    pub(crate) fn into_stream(self) -> impl futures_util::Stream<Item = i32> + Send {
        futures_util::stream::unfold(self, |mut signals| async move {
            let code = signals.recv().await;
            Some((code, signals))
        })
    }
}
