//! The BPEs (built once, on first use) and how a text is counted with them, or with a
//! script-aware heuristic while an estimator is lazy.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bpe::Bpe;

/// Text is counted in pieces of at most this many bytes: BPE merging is quadratic in the length of
/// one pre-tokenised piece, and minified code or base64 can make a piece megabytes long.
pub(super) const SEGMENT_BYTES: usize = 2_048;

/// Which BPE a model family uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    O200k,
    Cl100k,
}

impl Encoding {
    /// o200k for current OpenAI families, cl100k for gpt-4 / gpt-3.5, o200k for every other family
    /// (the closest modern approximation we have for Claude, Gemini, Llama, Qwen, …).
    pub fn for_model(model: &str) -> Encoding {
        // "provider/model" → "model"; lower-case for matching.
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let current = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "chatgpt-4o",
            "gpt-oss",
        ];
        if current.iter().any(|p| name.starts_with(p))
            || ["o1", "o3", "o4"]
                .iter()
                .any(|p| name == *p || name.starts_with(&format!("{p}-")))
        {
            return Encoding::O200k;
        }
        if name.starts_with("gpt-4") || name.starts_with("gpt-3.5") || name.starts_with("gpt-35") {
            return Encoding::Cl100k;
        }
        Encoding::O200k
    }

    fn cell(self) -> &'static OnceLock<Option<Bpe>> {
        match self {
            Encoding::O200k => &O200K,
            Encoding::Cl100k => &CL100K,
        }
    }

    fn bpe(self) -> Option<&'static Bpe> {
        self.cell()
            .get_or_init(|| match self {
                Encoding::O200k => crate::bpe::o200k_base(),
                Encoding::Cl100k => crate::bpe::cl100k_base(),
            })
            .as_ref()
    }

    /// Loads the BPE on a background thread (once per process), so that switching an estimator
    /// to exact counts later does not stall the session.
    pub fn prefetch(self) {
        static STARTED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
        let i = match self {
            Encoding::O200k => 0,
            Encoding::Cl100k => 1,
        };
        if !STARTED[i].swap(true, Ordering::SeqCst) && self.cell().get().is_none() {
            std::thread::spawn(move || {
                self.bpe();
            });
        }
    }
}

static O200K: OnceLock<Option<Bpe>> = OnceLock::new();
static CL100K: OnceLock<Option<Bpe>> = OnceLock::new();

/// How text is counted: with the BPE (exact), or with the script-aware heuristic while an
/// estimator is still lazy (see [`Estimator::lazy`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Counter {
    pub(super) encoding: Encoding,
    pub(super) exact: bool,
}

impl Counter {
    pub(super) fn count(self, s: &str) -> u64 {
        if s.is_empty() {
            0
        } else if self.exact {
            raw_count(self.encoding, s)
        } else {
            heuristic_count(s)
        }
    }
}

/// Raw BPE token count of `s` (no correction ratio). Falls back to a script-aware heuristic if the
/// BPE could not be loaded (it is embedded, so this should never happen).
pub fn raw_count(encoding: Encoding, s: &str) -> u64 {
    if s.is_empty() {
        return 0;
    }
    let Some(bpe) = encoding.bpe() else {
        return heuristic_count(s);
    };
    let mut total = 0u64;
    for seg in segments(s, SEGMENT_BYTES) {
        total += bpe.count(seg) as u64;
    }
    total
}

/// A crude fallback: ~4 bytes per token for ASCII, ~1 token per non-ASCII character.
pub(super) fn heuristic_count(s: &str) -> u64 {
    let mut ascii = 0u64;
    let mut other = 0u64;
    for c in s.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

/// Splits `s` into pieces of at most about `max` bytes, on char boundaries, preferring to cut
/// after a newline or a space so that words are rarely split.
pub(super) fn segments(s: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= max {
            let all = rest;
            rest = "";
            return Some(all);
        }
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let window = &rest[..cut];
        let at = window
            .rfind('\n')
            .or_else(|| window.rfind(' '))
            .map(|i| i + 1)
            .filter(|&i| i > max / 2)
            .unwrap_or(cut);
        let (head, tail) = rest.split_at(at);
        rest = tail;
        Some(head)
    })
}
