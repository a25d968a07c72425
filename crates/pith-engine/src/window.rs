//! The model's real context window. A configured or catalogued window may be wrong for the
//! server at hand (a llama.cpp started with `-c 6000` behind a 32k entry); pith learns the real
//! one from the first overflow error that states it, asks a local server at start when nothing
//! is configured, remembers what it learned per model, and says so once. The system prompt and
//! tool definitions are sized to the window ([`Turn::fit_prompt`]).

use super::prompt::{self, Fit};
use crate::turn_context::Turn;
use pith_protocol::event::{ContextEvent, Event, WindowSource};
use pith_provider::ProviderError;
use pith_provider::limits::{self, OverflowLimits};

/// Windows below this are taken as misreads.
const MIN_WINDOW: u64 = 512;
/// The full system prompt and tool definitions may take at most this share of the usable window;
/// above it they are sent in short.
const PROMPT_SHARE: u64 = 4;

impl Turn<'_> {
    /// At start: a window learned earlier for this model replaces a guessed or larger one; with
    /// nothing known, a local server is asked in the background (see [`Turn::settle_window`]).
    pub(crate) fn start_window(&mut self, warning: Option<String>) {
        self.window.forget_warning();
        let learned = self
            .log
            .store()
            .learned_window(&self.model.name)
            .ok()
            .flatten();
        if let Some(l) = learned {
            let current = self.model.limits.context;
            if self.model.window_guessed || current == 0 || l.window < current {
                tracing::info!(
                    "{}: using the {}-token window learned from {}",
                    self.model.name,
                    l.window,
                    l.source
                );
                self.set_window(l.window);
                self.model.window_guessed = false;
            }
            return;
        }
        if self.model.window_guessed {
            let provider = self.model.provider.clone();
            let model = self.model.model_id.clone();
            let probe = tokio::spawn(async move { provider.probe_window(&model).await });
            // Said only if the server cannot tell either.
            self.window.start(probe, warning);
        } else if let Some(w) = warning {
            self.warn_once(&w);
        }
    }

    /// A warning about the model, said once per directory (the README's promise for start-up
    /// warnings; shown again when its text changes — another model).
    fn warn_once(&self, w: &str) {
        let key = self.opts.workspace.join(":model");
        if crate::shown_warnings::not_yet_shown(&self.opts.data_dir, &key, &[w]).is_empty() {
            return;
        }
        self.emit(Event::info(format!("warning: {w}")));
    }

    /// Before the first request: takes the answer of a local server asked at start.
    pub(crate) async fn settle_window(&mut self) {
        let Some(probe) = self.window.take_probe() else {
            return;
        };
        if let Ok(Some((window, source))) = probe.await {
            let previous = self.model.limits.context;
            if window >= MIN_WINDOW && window != previous {
                self.model.window_guessed = false;
                self.announce_window(window, previous, WindowSource::Server(source));
            }
        }
        if let Some(w) = self.window.take_warning()
            && self.model.window_guessed
        {
            self.warn_once(&w);
        }
    }

    /// Reads what an overflow error says about the limit. A stated window smaller than the one
    /// in use replaces it; without one, the rejected request's size (what the server counted,
    /// else pith's estimate of it, `estimated`) is an upper bound of the real window and is used
    /// when it is below the usable window. Returns what the error said.
    pub(crate) fn learn_window(
        &mut self,
        err: &ProviderError,
        estimated: Option<u64>,
    ) -> OverflowLimits {
        let said = limits::parse(&err.message);
        let previous = self.model.limits.context;
        let (window, source) = match (said.window, said.prompt.or(estimated)) {
            (Some(w), _) => (w, WindowSource::ServerError),
            (None, Some(p)) if p < self.usable() => (p, WindowSource::RejectedRequest),
            _ => return said,
        };
        if window >= MIN_WINDOW && (previous == 0 || window < previous) {
            self.announce_window(window, previous, source);
        }
        said
    }

    /// Sizes the system prompt and the tool definitions to the window: the full ones, or — when
    /// they would take more than a quarter of the usable window (a 4k local model: the full
    /// ones are ~2,500 tokens) — the short agent prompt, each tool's first paragraph with a bare
    /// schema, and instruction files cut to an eighth of the usable window.
    pub(crate) fn fit_prompt(&mut self) {
        let today = chrono::Local::now().format("%Y-%m-%d").to_string();
        self.stamp_instructions();
        self.offer_skills();
        let ws = &self.opts.workspace.clone();
        let fences = prompt::Fences::from_env(ws, &self.opts.data_dir);
        let nested = self.nested_instructions();
        let sources = self.instruction_sources(&nested);
        let mut system = prompt::system_prompt_from(ws, &sources, &today, Fit::FULL, &fences);
        self.role.shape_system(&mut system);
        let tools = self.tools.registry().specs();
        let usable = self.budget().usable;
        let full: u64 = system.iter().map(|s| self.meter.text(s)).sum::<u64>()
            + tools
                .iter()
                .map(|t| {
                    self.meter.text(&t.description) + self.meter.text(&t.parameters.to_string())
                })
                .sum::<u64>();
        if full * PROMPT_SHARE <= usable {
            *self.system = system;
            self.tools.set_specs(tools);
            self.apply_skills();
            self.apply_pins();
            return;
        }
        let fit = Fit {
            compact: true,
            // ~4 bytes a token: an eighth of the usable window.
            instruction_bytes: usize::try_from(usable / 2).unwrap_or(usize::MAX),
        };
        *self.system = prompt::system_prompt_from(ws, &sources, &today, fit, &fences);
        self.role.shape_system(self.system);
        let specs = self.tools.registry().compact_specs();
        self.tools.set_specs(specs);
        self.apply_skills();
        self.apply_pins();
        tracing::info!(
            "{}: the full system prompt and tools (~{full} tokens) are over a quarter of the \
             {usable} usable tokens; sending them in short",
            self.model.name
        );
    }

    /// Uses `window` from now on, remembers it for the model, and tells the user.
    fn announce_window(&mut self, window: u64, previous: u64, source: WindowSource) {
        self.set_window(window);
        self.fit_prompt();
        if let Err(e) = self
            .log
            .store()
            .set_learned_window(&self.model.name, window, &source)
        {
            tracing::error!(
                "store: cannot remember the window of {}: {e:#}",
                self.model.name
            );
        }
        tracing::info!(
            "{}: context window {previous} -> {window} ({source})",
            self.model.name
        );
        let from = source.to_string();
        self.emit(ContextEvent::ContextWindow {
            model: self.model.name.clone(),
            window,
            previous,
            source,
        });
        use pith_protocol::text::count;
        let was = if previous == 0 {
            "none was known".to_string()
        } else {
            format!("not {}", count(previous))
        };
        let window_n = count(window);
        self.emit(Event::info(format!(
            "{}: the context window is {window_n} tokens ({was}; from {from}); using {window_n} from now on",
            self.model.name
        )));
        self.emit_context();
    }

    /// Sets the window of the session's model (an input limit cannot exceed it).
    fn set_window(&mut self, window: u64) {
        let l = &mut self.model.limits;
        l.context = window;
        if l.input.is_some_and(|i| i >= window) {
            l.input = None;
        }
    }
}
