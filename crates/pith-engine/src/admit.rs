//! What the user sends becomes a stored user message — unless it could never fit: a prompt
//! that on its own, with the system prompt and tools, reaches the usable window is refused
//! before anything of it is stored or sent (`SessionEvent::PromptRefused`), so no later request and no
//! compaction ever pays for it. A prompt that fits alone but not with the history goes in, and
//! the history is compacted as usual (ARCHITECTURE.md §6.3).

use super::shared::Prompt;
use crate::turn_context::Turn;
use pith_context::exactness::Exactness;
use pith_protocol::event::SessionEvent;
use pith_protocol::message::{Message, PartKind, Role};

impl Turn<'_> {
    /// The user messages for `prompts`, the refused ones left out (and announced).
    /// `mid_turn`: typed while the agent was working.
    pub(crate) async fn admit_prompts(
        &mut self,
        prompts: &[Prompt],
        mid_turn: bool,
    ) -> Vec<Message> {
        let mut admitted = Vec::with_capacity(prompts.len());
        for p in prompts {
            // `user_prompt_submit` hooks may refuse it, or add context to it.
            let added = match self.prompt_hooks(p).await {
                Ok(added) => added,
                Err(block) => {
                    self.refuse_by_hook(p, &block.to_string());
                    continue;
                }
            };
            let mut m = self.prompt_message(p, mid_turn).await;
            // what `session_start` / `post_compact` hooks said waits for this prompt
            for part in self.hooks.context().iter().cloned().chain(added) {
                m.push(part);
            }
            if let Some((tokens, usable)) = self.too_large(&m) {
                self.refuse_prompt(p, tokens, usable);
            } else {
                self.hooks.clear_context();
                admitted.push(m);
            }
        }
        admitted
    }

    /// Delivers the prompts typed while the agent worked (§4.4): the admitted ones are stored
    /// and the last becomes `parent`. True when one was.
    pub(crate) async fn deliver_queued(&mut self, parent: &mut String) -> bool {
        self.apply_settings();
        let queued = self.shared.take_queue();
        if queued.is_empty() {
            return false;
        }
        self.collect_attachments().await;
        let admitted = self.admit_prompts(&queued, true).await;
        let any = !admitted.is_empty();
        for m in admitted {
            let i = self.push_prompt(m);
            *parent = self.log.view()[i].id.clone();
        }
        self.emit_context();
        any
    }

    /// Stores an admitted prompt and adds it to the view; its index.
    pub(crate) fn push_prompt(&mut self, m: Message) -> usize {
        if self.log.session().title.is_empty()
            && let Some(text) = m.parts.iter().find_map(|p| match &p.kind {
                PartKind::Text {
                    text,
                    synthetic: false,
                } => Some(text.clone()),
                _ => None,
            })
        {
            self.log
                .title_if_untitled(|| super::session_log::title_from(&text));
        }
        self.push_message(m)
    }

    /// What the user typed, with the files it mentions and the pending attachments.
    async fn prompt_message(&mut self, prompt: &Prompt, mid_turn: bool) -> Message {
        let mut m = Message::new(self.log.session_id(), Role::User);
        m.submission_id = Some(prompt.id.clone());
        m.mid_turn = mid_turn;
        m.command = prompt.label.clone();
        m.push(PartKind::Text {
            text: prompt.text.clone(),
            synthetic: false,
        });
        if !prompt.pasted.is_empty() {
            m.push(PartKind::Pasted {
                spans: prompt.pasted.clone(),
            });
        }
        for part in self.attachment_parts() {
            m.push(part);
        }
        self.attach_mentions(&mut m, &prompt.text, &prompt.pasted)
            .await;
        m
    }

    /// `Some((tokens, usable))` when `m` with the system prompt and tools reaches the usable
    /// window. Decided on exact counts: a heuristic count within its error bound of the window
    /// is checked with the BPE.
    fn too_large(&mut self, m: &Message) -> Option<(u64, u64)> {
        let usable = self.usable();
        if usable == 0 {
            return None; // the window is unknown
        }
        let mut tokens = self.overhead() + self.meter.message(m);
        if !self.meter.is_exact() && Exactness::could_reach(tokens, usable) {
            self.meter.want_exact();
            self.reset_estimate();
            tokens = self.overhead() + self.meter.message(m);
        }
        (tokens >= usable).then_some((tokens, usable))
    }

    /// A prompt a `user_prompt_submit` hook refused: nothing of it is stored or sent; the user
    /// reads the hook's reason (`tokens` and `usable` are 0: no size was at fault).
    fn refuse_by_hook(&mut self, p: &Prompt, reason: &str) {
        tracing::info!("prompt refused by a user_prompt_submit hook");
        self.emit(SessionEvent::PromptRefused {
            id: p.id.clone(),
            text: p.text.clone(),
            tokens: 0,
            usable: 0,
            message: format!("not sent: a user_prompt_submit hook refused this prompt: {reason}"),
        });
    }

    fn refuse_prompt(&mut self, p: &Prompt, tokens: u64, usable: u64) {
        let (tokens_n, usable_n) = (
            pith_protocol::text::count(tokens),
            pith_protocol::text::count(usable),
        );
        let message = format!(
            "not sent: this prompt (~{tokens_n} tokens with the system prompt and tools) does not \
             fit the {usable_n} tokens this model can use, so nothing of it was kept — shorten it, \
             put the text in a file and point the agent at it, or use a model with a larger \
             context window"
        );
        tracing::info!(
            tokens,
            usable,
            "prompt refused: larger than the usable window"
        );
        self.emit(SessionEvent::PromptRefused {
            id: p.id.clone(),
            text: p.text.clone(),
            tokens,
            usable,
            message,
        });
    }
}
