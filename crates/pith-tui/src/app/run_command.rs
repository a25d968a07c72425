//! Slash commands run from the composer: what each built-in does, the /rewind picker, a model
//! switch; custom commands (their entries in the slash popup, and sending one's expansion as the
//! user's message, labelled with the command).

use pith_commands::custom_commands::Expanded;
use pith_protocol::event::Op;
use pith_protocol::llm::ReasoningEffort;
use pith_protocol::message::PartKind;
use pith_protocol::tool::{ToolInput, ToolName};

use crate::app::{App, Help, PickItem, Picker, PickerKind, Popup};
use crate::mcp::SlashItem;
use crate::transcript::{NoticeLevel, PendingPrompt};
use pith_commands::commands::Command;

impl App {
    pub fn run_command(&mut self, cmd: Command, arg: Option<String>) {
        self.say_if_waiting(&cmd);
        match cmd {
            Command::Compact => {
                self.send(Op::Compact { focus: arg });
                self.transcript.follow();
            }
            Command::Pin => self.send(Op::Pin { text: arg }),
            Command::Unpin => match pith_commands::route::unpin_op(arg.as_deref()) {
                Ok(op) => self.send(op),
                Err(usage) => self.transcript.notice(NoticeLevel::Error, usage),
            },
            Command::Context => {
                self.popup = Some(Popup::Context(crate::info_popup::ContextPopup::waiting()));
                self.send(Op::ContextBreakdown);
            }
            Command::Login => self.login(arg),
            Command::Model => match arg {
                Some(m) => self.set_model(m),
                None => self.model_picker(),
            },
            Command::Effort => self.set_effort(arg),
            Command::Plan => self.send(Op::SetPermissionMode {
                mode: pith_protocol::event::PermissionMode::Plan,
            }),
            Command::Sessions => {
                self.listing_agents = false;
                self.sessions_loading();
                self.send(Op::ListSessions);
            }
            Command::Agents => {
                self.listing_agents = true;
                self.sessions_loading();
                self.send(Op::ListSubagents {
                    session_id: self.session.id().to_string(),
                });
            }
            Command::New => self.send(Op::NewSession),
            Command::Export => self.send(Op::Export { path: arg }),
            Command::Mcp => self.mcp_command(arg),
            Command::Resource => self.resource_command(arg),
            Command::Init => {
                let init = pith_commands::custom_commands::init(
                    self.session.workspace(),
                    arg.as_deref().unwrap_or(""),
                );
                self.run_expanded(init);
            }
            Command::Undo => self.send(Op::Undo),
            Command::Redo => self.send(Op::Redo),
            Command::Rewind => self.rewind_picker(),
            Command::Copy => self.copy_command(arg.as_deref()),
            Command::Editor => self.effects.push(crate::effects::Effect::Editor),
            Command::Help => self.popup = Some(Popup::Help(Help::new())),
            Command::Keys => {
                // the help, from its list of keys
                let scroll = Command::all().count() + 2;
                self.popup = Some(Popup::Help(Help::at(scroll)));
            }
            Command::Hooks => {
                for line in pith_config::hooks::listing(&self.hooks) {
                    self.transcript.notice(NoticeLevel::Info, line);
                }
            }
            Command::Theme => self.theme_command(arg),
            Command::Quit => self.quit(),
            Command::Goal => self.goal_command(arg),
            Command::Memory => self.memory_command(),
            Command::Remember => self.remember_command(arg.as_deref().unwrap_or("")),
            Command::Skills => self.skills_command(),
            Command::Ps => self.ps_command(),
            Command::PasteImage => self.paste_image(true),
        }
    }

    /// Commands that change the session wait for the turn: says so rather than act later
    /// without a word. The read-only ones run at once.
    fn say_if_waiting(&mut self, cmd: &Command) {
        if self.busy() && cmd.waits_for_turn() {
            self.transcript.notice(
                NoticeLevel::Info,
                format!(
                    "/{} runs when the agent finishes this turn (esc interrupts it)",
                    cmd.name()
                ),
            );
        }
    }

    /// `/model` without a name: the models to switch to, the current one first if it is not
    /// in the list, those needing a key saying so.
    fn model_picker(&mut self) {
        let mut models = self.models.clone();
        let current = self.status.model();
        if !models.iter().any(|m| m == current) && !current.is_empty() {
            models.insert(0, current.to_string());
        }
        let selected = models.iter().position(|m| m == current).unwrap_or(0);
        let items = models
            .into_iter()
            .map(|m| PickItem {
                detail: if m == current {
                    "current".into()
                } else if let Some(need) = self.keys.missing_for(&m) {
                    format!("needs a key ({}) · enter adds it", need.var)
                } else {
                    String::new()
                },
                label: m.clone(),
                id: m,
            })
            .collect();
        self.popup = Some(Popup::Picker(Picker::new(
            PickerKind::Model,
            items,
            selected,
        )));
    }

    /// The sessions picker opens empty, loading, until the engine's list arrives.
    fn sessions_loading(&mut self) {
        self.popup = Some(Popup::Picker(Picker::loading(PickerKind::Sessions)));
    }

    /// `/rewind`: the prompts on screen, newest first, to go back to — only those after the
    /// latest compaction, since the engine cannot undo past one.
    pub(crate) fn rewind_picker(&mut self) {
        let mut items = Vec::new();
        let mut compacted = false;
        for c in self.transcript.cells().iter().rev() {
            let Some(mid) = &c.message_id else { continue };
            let meta = self.transcript.meta_of(c);
            if meta.summary || matches!(c.part().map(|p| &p.kind), Some(PartKind::Compaction(_))) {
                compacted = true;
                break;
            }
            if meta.role != Some(pith_protocol::message::Role::User) || meta.mid_turn {
                continue;
            }
            let label = match c.part().map(|p| &p.kind) {
                Some(PartKind::Text {
                    text,
                    synthetic: false,
                }) => text.lines().next().unwrap_or("").to_string(),
                Some(PartKind::Tool { tool, input, .. }) => {
                    let name = ToolName::parse(tool);
                    let ToolInput::Exec { command } = ToolInput::of(&name, input) else {
                        continue;
                    };
                    format!("!{}", command.unwrap_or(""))
                }
                _ => continue,
            };
            if items.iter().any(|i: &PickItem| &i.id == mid) {
                continue;
            }
            items.push(PickItem {
                id: mid.clone(),
                label,
                detail: String::new(),
            });
        }
        if items.is_empty() {
            let why = if compacted {
                "no prompt since the last compaction to go back to (pith cannot undo past one)"
            } else {
                "no earlier prompt to go back to"
            };
            self.transcript.notice(NoticeLevel::Info, why);
            return;
        }
        self.popup = Some(Popup::Picker(Picker::new(PickerKind::Rewind, items, 0)));
    }

    /// `/effort [level]`: without a level, says the current one; `default` goes back to the
    /// model's own. The status bar shows the level once the engine confirms it.
    pub(crate) fn set_effort(&mut self, arg: Option<String>) {
        let levels = "minimal, low, medium, high or default";
        let Some(arg) = arg else {
            let now = self
                .status
                .effort()
                .map_or("the model's default", |e| e.as_str());
            self.transcript.notice(
                NoticeLevel::Info,
                format!("reasoning effort: {now} (/effort {levels})"),
            );
            return;
        };
        let effort = match ReasoningEffort::parse(&arg) {
            Some(e) => Some(e),
            None if arg.trim().eq_ignore_ascii_case("default") => None,
            None => {
                let shown = pith_protocol::text::one_line_max(&arg, 40);
                self.transcript.notice(
                    NoticeLevel::Error,
                    format!("/effort: unknown level {shown:?}; use {levels}"),
                );
                return;
            }
        };
        self.send(Op::SetEffort { effort });
    }

    /// Asks the engine to switch; the status bar shows the new model once the engine confirms
    /// it (a model without a key or provider is refused).
    pub(crate) fn set_model(&mut self, model: String) {
        if self.ask_key_for(&model) {
            return;
        }
        self.send(Op::SetModel {
            model: model.clone(),
        });
        self.status.model_asked(model);
    }

    /// The custom commands matching what is typed after `/`, then the skills (§4.7).
    pub(crate) fn custom_items(&self, typed: &str) -> Vec<SlashItem> {
        let mut items = self.command_items(typed);
        items.extend(self.skill_items(typed));
        items
    }

    fn command_items(&self, typed: &str) -> Vec<SlashItem> {
        self.custom_commands
            .filter(typed)
            .into_iter()
            .map(|c| SlashItem::Custom {
                name: c.name.clone(),
                hint: c.argument_hint.clone(),
                about: c.about(),
                wants_args: !c.argument_hint.is_empty()
                    || c.body.contains("$ARGUMENTS")
                    || (1..=9).any(|n| c.body.contains(&format!("${n}"))),
            })
            .collect()
    }

    pub(crate) fn run_custom_named(&mut self, name: &str, args: &str) {
        if let Some(cmd) = self.custom_commands.get(name) {
            let expanded = cmd.expand(args);
            self.run_expanded(expanded);
        } else if let Some(s) = self
            .custom_commands
            .skills
            .get(name)
            .filter(|s| s.user_invocable)
        {
            let expanded = pith_commands::route::skill_command(s, args);
            self.run_expanded(expanded);
        }
    }

    /// Sends an expanded command; the transcript shows its label until the engine stores it.
    pub(crate) fn run_expanded(&mut self, e: Expanded) {
        let id = pith_protocol::message::new_id();
        self.transcript.add_pending(PendingPrompt {
            id: id.clone(),
            text: e.label.clone(),
            queued: self.busy(),
        });
        self.send(pith_commands::route::command_op(id, e));
        self.transcript.follow();
    }
}
