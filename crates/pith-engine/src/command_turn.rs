//! A custom slash command's turn: its expanded text is the user's message, run with the model
//! and as the agent its front matter names — for this turn only, then back.

use super::shared::Prompt;
use crate::error::{EngineError, with_causes};
use crate::model::ModelSetup;
use crate::turn_context::Turn;
use pith_protocol::event::{TurnEnd, TurnEvent};

impl Turn<'_> {
    pub(crate) async fn command_turn(
        &mut self,
        prompt: Prompt,
        model: Option<String>,
        agent: Option<String>,
    ) {
        let label = prompt.label.clone().unwrap_or_default();
        let agent = match agent {
            Some(name) => match self.opts.config.agent.get(&name) {
                Some(a) if !a.disable => Some((name, a.clone())),
                _ => {
                    let known = self.known_agents();
                    self.refuse(format!("{label}: no agent named {name} (known: {known})"));
                    return;
                }
            },
            None => None,
        };
        let model = model.or_else(|| agent.as_ref().and_then(|(_, a)| a.model.clone()));
        let saved_model = match model.filter(|m| *m != self.model.name) {
            Some(m) => match ModelSetup::build(&self.opts.config, &m) {
                Ok((setup, _)) => {
                    let estimator = self.meter.use_model(&setup.model_id);
                    let model = std::mem::replace(self.model, setup);
                    Some((model, estimator))
                }
                Err(e) => {
                    self.refuse(format!(
                        "{label}: cannot use model {m}: {}",
                        with_causes(&e)
                    ));
                    return;
                }
            },
            None => None,
        };
        let saved_role = agent.map(|(name, a)| {
            let saved = (self.role.clone(), self.tools.registry().clone());
            self.role.name = name;
            self.role.prompt = a.prompt.clone();
            if let Some(tools) = &a.tools {
                self.tools.retain(|t| tools.iter().any(|n| n == t.name()));
            }
            saved
        });
        let changed = saved_model.is_some() || saved_role.is_some();
        if changed {
            self.fit_prompt();
        }
        self.user_turn(vec![prompt]).await;
        if let Some((model, estimator)) = saved_model {
            *self.model = model;
            self.meter.restore_estimator(estimator);
        }
        if let Some((role, registry)) = saved_role {
            *self.role = role;
            self.tools.set_registry(registry);
        }
        if changed {
            self.fit_prompt();
            self.reset_estimate();
            self.emit_context();
        }
    }

    /// The agents a command may name, for the error that names one that is not.
    fn known_agents(&self) -> String {
        let known: Vec<&str> = self
            .opts
            .config
            .agent
            .iter()
            .filter(|(_, a)| !a.disable)
            .map(|(n, _)| n.as_str())
            .collect();
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    }

    /// The command cannot run as written: say why (answering its submission), and end the
    /// "turn" that never started.
    fn refuse(&mut self, message: String) {
        self.report(EngineError::Command(message));
        self.emit(TurnEvent::TurnFinished {
            reason: TurnEnd::Error,
        });
    }
}
