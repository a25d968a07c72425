//! `skill`: loads one of the skills the system prompt lists (ARCHITECTURE.md §4.7): its
//! instructions and the folder its resources are in. Without a name, lists them all. And
//! [`Scope`]: what a skill's `allowed-tools` leave the model while it is active — a narrowing
//! only; every call still goes through the permission rules.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, parse_input};
use pith_config::skills::{Skills, ToolRule};

pub struct SkillTool {
    skills: Arc<Skills>,
}

impl SkillTool {
    pub fn new(skills: Arc<Skills>) -> SkillTool {
        SkillTool { skills }
    }
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    name: Option<String>,
}

#[async_trait::async_trait]
impl Tool for SkillTool {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::Skill.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../prompts/tools/skill.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as listed. Leave out to list every skill."}
            }
        })
    }

    async fn run(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("skill", input)?;
        let name = input.name.as_deref().map(str::trim).unwrap_or("");
        if name.is_empty() {
            let listed: Vec<_> = self
                .skills
                .list
                .iter()
                .filter(|s| s.model_invocable)
                .collect();
            let mut out = format!("{} skills:\n", listed.len());
            for s in listed {
                out.push_str(&format!("- {}: {}\n", s.name, s.description));
            }
            return Ok(ToolOutput {
                title: "skills".into(),
                output: out.trim_end().to_string(),
                metadata: Value::Null,
                meta: Default::default(),
            });
        }
        if let Some(s) = self.skills.get(name).filter(|s| !s.model_invocable) {
            return Err(tool_err!(
                "The skill \"{}\" is run only by the user (/{}); do not load it.",
                s.name,
                s.name
            ));
        }
        let Some(skill) = self.skills.get(name) else {
            let close = self.skills.close_names(name);
            return Err(if close.is_empty() {
                tool_err!(
                    "No skill named \"{name}\". Call skill without a name to list the {} skills.",
                    self.skills.list.len()
                )
            } else {
                tool_err!(
                    "No skill named \"{name}\". Did you mean: {}? Call skill without a name to list them all.",
                    close.join(", ")
                )
            });
        };
        Ok(ToolOutput {
            title: skill.name.clone(),
            output: skill.render(""),
            metadata: Value::Null,
            meta: Default::default(),
        })
    }
}

/// The tools active skills leave the model: `None` is no narrowing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// The skills that narrow, with their rules.
    pub skills: Vec<(String, Vec<ToolRule>)>,
}

impl Scope {
    /// Narrows to the `allowed-tools` of skill `name` too (a skill without the key narrows
    /// nothing). While more than one narrows, a call any of them allows may run.
    pub fn add(&mut self, name: &str, allowed: Option<&[String]>) {
        let Some(allowed) = allowed else { return };
        if self.skills.iter().any(|(n, _)| n == name) {
            return;
        }
        let (rules, _) = pith_config::skills::parse_allowed(allowed);
        self.skills.push((name.to_string(), rules));
    }

    /// `Err(why)` when a call of `tool` with `input` is outside every active skill's list.
    /// `skill` itself is always allowed.
    pub fn check(&self, tool: &str, input: &Value) -> Result<(), String> {
        if self.skills.is_empty() || tool == "skill" {
            return Ok(());
        }
        let rules: Vec<&ToolRule> = self
            .skills
            .iter()
            .flat_map(|(_, rules)| rules)
            .filter(|r| r.tool == tool)
            .collect();
        let allowed = !rules.is_empty()
            && (rules.iter().any(|r| r.prefix.is_none()) || bash_allowed(&rules, input));
        if allowed {
            return Ok(());
        }
        let names: Vec<&str> = self.skills.iter().map(|(n, _)| n.as_str()).collect();
        let mut list: Vec<String> = self
            .skills
            .iter()
            .flat_map(|(_, rules)| rules)
            .map(|r| match &r.prefix {
                Some(p) if r.exact => format!("{}({p})", r.tool),
                Some(p) => format!("{}({p} …)", r.tool),
                None => r.tool.clone(),
            })
            .collect();
        list.dedup();
        Err(format!(
            "Refused: the active skill {} allows only these tools until the user's next message: {}. \
             This call ({tool}) is outside them; do the task with those tools, or tell the user what you would need.",
            names.join(", "),
            if list.is_empty() {
                "skill".to_string()
            } else {
                list.join(", ")
            }
        ))
    }
}

/// Whether every command of a bash call starts with one of the `rules`' prefixes (whole
/// words); a line whose commands cannot all be seen is not allowed.
fn bash_allowed(rules: &[&ToolRule], input: &Value) -> bool {
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return false;
    };
    let analysis = crate::bash_parse::analyse(command);
    if analysis.hidden || analysis.commands.is_empty() {
        return false;
    }
    analysis.commands.iter().filter(|c| !c.wrapper).all(|c| {
        let form = c
            .words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        c.words.iter().all(|w| w.literal)
            && rules.iter().any(|r| {
                r.prefix.as_deref().is_some_and(|p| {
                    form == p
                        || !r.exact
                            && form
                                .strip_prefix(p)
                                .is_some_and(|rest| rest.starts_with(' '))
                })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(entries: &[&str]) -> Scope {
        let mut s = Scope::default();
        let e: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        s.add("git-helper", Some(&e));
        s
    }

    fn bash(c: &str) -> Value {
        json!({ "command": c })
    }

    #[test]
    fn narrows_to_the_listed_tools_and_bash_prefixes() {
        let s = scope(&["Read", "Bash(git status:*)", "Bash(git diff:*)"]);
        assert!(s.check("read", &json!({"file_path": "a"})).is_ok());
        assert!(s.check("skill", &json!({})).is_ok());
        assert!(s.check("bash", &bash("git status --short")).is_ok());
        assert!(s.check("bash", &bash("git diff HEAD | head")).is_err());
        assert!(s.check("bash", &bash("git diff && git status")).is_ok());
        assert!(s.check("bash", &bash("git statusx")).is_err());
        assert!(s.check("bash", &bash("git status; rm -rf /")).is_err());
        assert!(s.check("bash", &bash("git status $(rm -rf /)")).is_err());
        assert!(s.check("bash", &bash("eval \"$x\"")).is_err());
        // without `*` the command is exactly that
        let t = scope(&["Bash(npm run test)"]);
        assert!(t.check("bash", &bash("npm run test")).is_ok());
        assert!(t.check("bash", &bash("npm run test -- --update")).is_err());
        let e = s.check("write", &json!({"file_path": "a"})).unwrap_err();
        assert!(
            e.contains("git-helper") && e.contains("read, bash(git status …)"),
            "{e}"
        );
    }

    #[test]
    fn a_skill_without_the_key_narrows_nothing() {
        let mut s = Scope::default();
        s.add("notes", None);
        assert!(s.check("bash", &bash("anything")).is_ok());
    }

    #[tokio::test]
    async fn an_unknown_name_lists_close_ones() {
        let mut skills = Skills::default();
        for n in ["pdf-tools", "pdf-forms"] {
            let (s, _) = pith_config::skills::parse(
                std::path::Path::new(&format!("/s/{n}/SKILL.md")),
                n,
                &format!("---\nname: {n}\ndescription: about {n}\n---\nBody of {n}."),
            )
            .unwrap();
            skills.list.push(s);
        }
        let tool = SkillTool::new(Arc::new(skills));
        let ws = crate::testutil::Ws::new();
        let ctx = &ws.ctx;
        let e = tool.run(json!({"name": "pdf"}), ctx).await.err().unwrap();
        assert!(
            e.to_string()
                .contains("Did you mean: pdf-tools, pdf-forms?"),
            "{e}"
        );
        let ok = tool.run(json!({"name": "pdf-forms"}), ctx).await.unwrap();
        assert!(
            ok.output.contains("Body of pdf-forms.")
                && ok
                    .output
                    .contains("Base directory for this skill: /s/pdf-forms")
        );
        let all = tool.run(json!({}), ctx).await.unwrap();
        assert!(all.output.contains("- pdf-tools: about pdf-tools"));
    }
}
