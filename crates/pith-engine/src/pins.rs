//! What the user pinned (`/pin TEXT`, ARCHITECTURE.md §6.4): facts and instructions carried word
//! for word into every request of the session until `/unpin`. They travel as the last block of
//! the system prompt, so no compaction, prune or carry budget ever touches them, and the
//! summary request (the session's own request with the instruction appended) sees them too.
//! Bounded: one line of at most [`MAX_PIN_CHARS`], at most [`MAX_PINS`], all of them within
//! [`budget`] of the usable window.

use crate::error::EngineError;
use crate::turn_context::Turn;
use pith_protocol::event::{Pin, SessionEvent};

/// The first line of the system block the pins travel in.
pub(crate) const PIN_HEADER: &str = "## Pinned by the user (word for word)";

/// What the model is told of them, after the header.
const PIN_NOTE: &str =
    "The user pinned these. They hold for the whole session, whatever was summarised:";

/// Characters one pin may hold.
pub(crate) const MAX_PIN_CHARS: usize = 500;

/// Pins a session may hold.
pub(crate) const MAX_PINS: usize = 20;

/// Tokens all the pins may take: a twentieth of the usable window, at most 4,000 (about 150 at
/// a 4k window, 4,000 from 80k on).
pub(crate) fn budget(usable: u64) -> u64 {
    (usable / 20).min(4_000)
}

/// The system block that carries `pins`, numbered as `/pin` lists them; `None` without pins.
pub(crate) fn block(pins: &[String]) -> Option<String> {
    if pins.is_empty() {
        return None;
    }
    let mut out = format!("{PIN_HEADER}\n{PIN_NOTE}");
    for (i, p) in pins.iter().enumerate() {
        out.push_str(&format!("\n{}. {p}", i + 1));
    }
    Some(out)
}

/// What a dedicated summary request (its own system prompt) is told of the pins, from the
/// session's system prompt `system`: the summariser sees what the user pinned, as the
/// session's own request shows it to a cache-friendly one.
pub(crate) fn summary_note(system: &[String]) -> Option<String> {
    let block = system.last().filter(|b| b.starts_with(PIN_HEADER))?;
    Some(format!(
        "{block}\n(pith carries these word for word after your summary: do not restate them, let them guide what you keep.)"
    ))
}

/// Why `text` cannot be pinned next to `pins`, in one line (the budget aside).
fn refusal(text: &str, pins: &[String]) -> Option<String> {
    let chars = text.chars().count();
    if text.contains('\n') {
        return Some("a pin is one line: pin each line on its own".into());
    }
    if chars > MAX_PIN_CHARS {
        return Some(format!(
            "{chars} characters; a pin holds at most {MAX_PIN_CHARS}"
        ));
    }
    if let Some(i) = pins.iter().position(|p| p == text) {
        return Some(format!("already pinned as {}", i + 1));
    }
    if pins.len() >= MAX_PINS {
        return Some(format!("{MAX_PINS} pins already (/unpin one first)"));
    }
    None
}

impl Turn<'_> {
    /// The session's pins, oldest first (none when the store cannot be read: said once).
    pub(crate) fn pins(&self) -> Vec<String> {
        match self.log.store().pins(self.log.session_id()) {
            Ok(p) => p,
            Err(e) => {
                self.report(EngineError::Store(e));
                Vec::new()
            }
        }
    }

    /// Puts the session's pins in the system prompt as its last block (replacing the block of
    /// the pins before). Called wherever the system prompt is built or the session changes.
    pub(crate) fn apply_pins(&mut self) {
        if self
            .system
            .last()
            .is_some_and(|b| b.starts_with(PIN_HEADER))
        {
            self.system.pop();
        }
        if let Some(b) = block(&self.pins()) {
            self.system.push(b);
        }
        // the goal's block goes before the pins' (ARCHITECTURE.md §5.2)
        self.apply_goal();
    }

    /// The pins' block as the system prompt carries it, if any (`/context`'s pinned row).
    pub(crate) fn pin_block(&self) -> Option<&str> {
        self.system
            .last()
            .filter(|b| b.starts_with(PIN_HEADER))
            .map(String::as_str)
    }

    /// Tokens all the pins may take at this window.
    fn pins_budget(&self) -> u64 {
        budget(self.budget().usable)
    }

    /// The pins, each with what it costs in every request (its line of the block).
    pub(crate) fn pin_costs(&self) -> Vec<Pin> {
        self.pins()
            .into_iter()
            .enumerate()
            .map(|(i, text)| Pin {
                tokens: self.meter.text(&format!("\n{}. {text}", i + 1)),
                text,
            })
            .collect()
    }

    /// Tells the front end the pins, each with its cost (the answer to `/pin`, `/unpin`).
    fn emit_pins(&mut self) {
        let pins = self.pin_costs();
        let budget = self.pins_budget();
        self.emit(SessionEvent::PinsChanged { pins, budget });
    }

    /// `/pin [TEXT]`: pins `text` (or says why not, in one line), or lists the pins.
    pub(crate) fn pin(&mut self, text: Option<String>) {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return self.emit_pins();
        };
        let mut pins = self.pins();
        if let Some(why) = refusal(&text, &pins) {
            return self.report(EngineError::Command(format!("pin refused: {why}")));
        }
        pins.push(text.clone());
        let tokens = block(&pins).map_or(0, |b| self.meter.text(&b));
        let budget = self.pins_budget();
        if tokens > budget {
            return self.report(EngineError::Command(format!(
                "pin refused: the pins would take {tokens} tokens of every request, more than the {budget} this window allows (/unpin one, or pin it shorter)"
            )));
        }
        if let Err(e) = self.log.store().add_pin(self.log.session_id(), &text) {
            return self.report(EngineError::Store(e));
        }
        self.pins_changed();
    }

    /// `/unpin N` / `/unpin all`.
    pub(crate) fn unpin(&mut self, number: Option<usize>) {
        let held = self.pins().len();
        match self.log.store().remove_pins(self.log.session_id(), number) {
            Ok(0) if number.is_some() => {
                let n = number.unwrap_or_default();
                self.report(EngineError::Command(format!(
                    "no pin {n}: the session holds {held} (/pin lists them)"
                )));
            }
            Ok(_) => self.pins_changed(),
            Err(e) => self.report(EngineError::Store(e)),
        }
    }

    /// The pins changed: the system prompt carries the new ones from the next request on, the
    /// figure follows, and a summary being written ahead without them is written again (it is
    /// restarted at the next step's end), so what was pinned can still shape it.
    fn pins_changed(&mut self) {
        let before = self.overhead();
        self.apply_pins();
        let after = self.overhead();
        self.meter.on_overhead_change(before, after);
        if self.compactor.has_background() {
            tracing::info!("the pins changed: the background summary is written again");
            self.compactor.drop_background();
        }
        self.emit_pins();
        self.update_compaction_notice();
        self.touch_session();
        self.emit_context();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_carries_each_pin_word_for_word_and_numbered() {
        assert_eq!(block(&[]), None);
        let pins = ["port is 8443".to_string(), "never edit vendor/".to_string()];
        let b = block(&pins).unwrap();
        assert!(b.starts_with(PIN_HEADER), "{b}");
        assert!(
            b.ends_with("\n1. port is 8443\n2. never edit vendor/"),
            "{b}"
        );
    }

    #[test]
    fn a_dedicated_summary_request_is_told_the_pins() {
        let pins = ["port is 8443".to_string()];
        let system = vec!["agent".to_string(), block(&pins).unwrap()];
        let note = summary_note(&system).unwrap();
        assert!(
            note.contains("1. port is 8443") && note.contains("do not restate"),
            "{note}"
        );
        assert_eq!(summary_note(&system[..1]), None);
    }

    #[test]
    fn refusals_say_why_in_one_line() {
        let pins = vec!["a".to_string()];
        assert_eq!(refusal("b", &pins), None);
        assert!(refusal("x\ny", &pins).unwrap().contains("one line"));
        let long = "x".repeat(MAX_PIN_CHARS + 1);
        assert!(refusal(&long, &pins).unwrap().contains("at most 500"));
        assert_eq!(refusal(&"x".repeat(MAX_PIN_CHARS), &pins), None);
        assert_eq!(refusal("a", &pins).unwrap(), "already pinned as 1");
        let full: Vec<String> = (0..MAX_PINS).map(|i| i.to_string()).collect();
        assert!(refusal("new", &full).unwrap().contains("/unpin"));
        for r in [refusal("x\ny", &pins), refusal(&long, &pins)] {
            assert!(!r.unwrap().contains('\n'));
        }
    }

    #[test]
    fn the_budget_scales_with_the_window() {
        assert_eq!(budget(3_000), 150);
        assert_eq!(budget(30_000), 1_500);
        assert_eq!(budget(168_000), 4_000);
    }
}
