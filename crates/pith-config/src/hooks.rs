//! `[[hooks.EVENT]]`: commands pith runs at points of a session (before and after a tool call,
//! when a prompt is sent, when the session starts, when the agent would stop, around a
//! compaction, when a question waits). The engine runs them (`pith-engine/hook_commands/`).
//!
//! Hooks of every file are kept, in load order (global, workspace, `--config`): a later file
//! adds hooks, it does not replace the earlier file's. Each remembers the file that defined it.
//! An untrusted workspace `pith.toml` sets none (`load/trust.rs`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Seconds a hook may run when its entry sets no `timeout`.
pub(crate) const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 60;
/// The most a hook's `timeout` may be set to, in seconds.
pub(crate) const MAX_HOOK_TIMEOUT_SECS: u64 = 3600;

/// The points of a session a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    SessionStart,
    Stop,
    PreCompact,
    PostCompact,
    Notification,
}

impl HookEvent {
    /// Every event, in the order `/hooks` lists them.
    pub fn all() -> impl Iterator<Item = HookEvent> {
        <HookEvent as strum::IntoEnumIterator>::iter()
    }

    /// The key in the config file (`[[hooks.pre_tool_use]]`).
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
            HookEvent::UserPromptSubmit => "user_prompt_submit",
            HookEvent::SessionStart => "session_start",
            HookEvent::Stop => "stop",
            HookEvent::PreCompact => "pre_compact",
            HookEvent::PostCompact => "post_compact",
            HookEvent::Notification => "notification",
        }
    }

    /// The name a hook reads in `hook_event_name` (Claude Code's).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// What `matcher` is matched against: the tool name, the session's `source`, the
    /// compaction's `trigger`; `None`: the matcher is not used (every hook runs).
    pub fn matches_on(self) -> Option<&'static str> {
        match self {
            HookEvent::PreToolUse | HookEvent::PostToolUse => Some("tool_name"),
            HookEvent::SessionStart => Some("source"),
            HookEvent::PreCompact | HookEvent::PostCompact => Some("trigger"),
            HookEvent::UserPromptSubmit | HookEvent::Stop | HookEvent::Notification => None,
        }
    }
}

/// One hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// A regular expression the whole tool name must match (`"edit|write"`, `"mcp__github__.*"`),
    /// case-insensitive; unset, empty or `"*"`: every tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// Run with `bash -c` in the workspace; gets the event as JSON on stdin.
    pub command: String,
    /// Seconds before it is killed (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// The file that defined it (set by loading; not a key of the file).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl HookConfig {
    /// Its timeout, or the default.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.timeout
                .unwrap_or(DEFAULT_HOOK_TIMEOUT_SECS)
                .clamp(1, MAX_HOOK_TIMEOUT_SECS),
        )
    }

    /// The matcher as a regular expression over the whole name, `None` when it matches
    /// everything.
    pub fn matcher_regex(&self) -> Option<Result<regex::Regex, regex::Error>> {
        let m = self.matcher.as_deref().map(str::trim).unwrap_or("");
        if m.is_empty() || m == "*" {
            return None;
        }
        Some(
            regex::RegexBuilder::new(&format!("^(?:{m})$"))
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build(),
        )
    }
}

/// `[hooks]`: the hooks of each event, in the order they run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_tool_use: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_tool_use: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_prompt_submit: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_start: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_compact: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_compact: Vec<HookConfig>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notification: Vec<HookConfig>,
}

impl HooksConfig {
    pub fn is_empty(&self) -> bool {
        HookEvent::all().all(|e| self.get(e).is_empty())
    }

    /// The hooks of `event`, in order.
    pub fn get(&self, event: HookEvent) -> &[HookConfig] {
        match event {
            HookEvent::PreToolUse => &self.pre_tool_use,
            HookEvent::PostToolUse => &self.post_tool_use,
            HookEvent::UserPromptSubmit => &self.user_prompt_submit,
            HookEvent::SessionStart => &self.session_start,
            HookEvent::Stop => &self.stop,
            HookEvent::PreCompact => &self.pre_compact,
            HookEvent::PostCompact => &self.post_compact,
            HookEvent::Notification => &self.notification,
        }
    }

    fn get_mut(&mut self, event: HookEvent) -> &mut Vec<HookConfig> {
        match event {
            HookEvent::PreToolUse => &mut self.pre_tool_use,
            HookEvent::PostToolUse => &mut self.post_tool_use,
            HookEvent::UserPromptSubmit => &mut self.user_prompt_submit,
            HookEvent::SessionStart => &mut self.session_start,
            HookEvent::Stop => &mut self.stop,
            HookEvent::PreCompact => &mut self.pre_compact,
            HookEvent::PostCompact => &mut self.post_compact,
            HookEvent::Notification => &mut self.notification,
        }
    }

    /// Every hook with its event, in listing order.
    pub fn iter(&self) -> impl Iterator<Item = (HookEvent, &HookConfig)> {
        HookEvent::all().flat_map(move |e| self.get(e).iter().map(move |h| (e, h)))
    }

    /// Adds `other`'s hooks after these (a later file's), marking those without a source as
    /// coming from `source`.
    pub fn append(&mut self, other: HooksConfig, source: &std::path::Path) {
        let mut other = other;
        for event in HookEvent::all() {
            let added = std::mem::take(other.get_mut(event));
            self.get_mut(event).extend(added.into_iter().map(|mut h| {
                h.source.get_or_insert_with(|| source.to_path_buf());
                h
            }));
        }
    }
}

/// Checks one hook: `Err((key, message))` names the key at fault.
pub(crate) fn check_hook(
    event: HookEvent,
    hook: &HookConfig,
) -> Result<(), (&'static str, String)> {
    let at = event.key();
    if hook.command.trim().is_empty() {
        return Err(("command", format!("hooks.{at}: `command` is empty")));
    }
    if let Some(t) = hook.timeout
        && !(1..=MAX_HOOK_TIMEOUT_SECS).contains(&t)
    {
        return Err((
            "timeout",
            format!(
                "hooks.{at}: timeout must be between 1 and {MAX_HOOK_TIMEOUT_SECS} seconds, got {t}"
            ),
        ));
    }
    if let Some(Err(e)) = hook.matcher_regex() {
        let why = e.to_string();
        let why = why.lines().last().unwrap_or("").trim().to_string();
        return Err((
            "matcher",
            format!(
                "hooks.{at}: matcher \"{}\" is not a valid regular expression: {why}",
                hook.matcher.as_deref().unwrap_or("")
            ),
        ));
    }
    if event.matches_on().is_none()
        && hook
            .matcher
            .as_deref()
            .is_some_and(|m| !m.trim().is_empty() && m.trim() != "*")
    {
        return Err((
            "matcher",
            format!("hooks.{at}: this event has no matcher (every {at} hook runs)"),
        ));
    }
    Ok(())
}

/// The lines `/hooks` shows: each hook with its event, matcher, command and file.
pub fn listing(config: &HooksConfig) -> Vec<String> {
    if config.is_empty() {
        return vec![
            "no hooks are configured ([[hooks.EVENT]] in the config; see config.example.toml)"
                .to_string(),
        ];
    }
    config
        .iter()
        .map(|(event, h)| {
            let matcher = match h.matcher.as_deref().map(str::trim) {
                Some(m) if !m.is_empty() && m != "*" => format!(" [{m}]"),
                _ => String::new(),
            };
            let timeout = h
                .timeout
                .map(|t| format!(" (timeout {t} s)"))
                .unwrap_or_default();
            let from = h
                .source
                .as_deref()
                .map(|p| format!(" — from {}", p.display()))
                .unwrap_or_default();
            format!(
                "{}{matcher}: {}{timeout}{from}",
                event.key(),
                pith_protocol::text::one_line(&h.command)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(matcher: Option<&str>) -> HookConfig {
        HookConfig {
            matcher: matcher.map(str::to_string),
            command: "true".into(),
            timeout: None,
            source: None,
        }
    }

    #[test]
    fn matchers_match_the_whole_name_case_insensitively() {
        let re = hook(Some("edit|write")).matcher_regex().unwrap().unwrap();
        assert!(re.is_match("edit"));
        assert!(re.is_match("Write"));
        assert!(!re.is_match("multiedit"));
        assert!(!re.is_match("read"));
        let mcp = hook(Some("mcp__github__.*"))
            .matcher_regex()
            .unwrap()
            .unwrap();
        assert!(mcp.is_match("mcp__github__create_issue"));
        assert!(!mcp.is_match("mcp__gitlab__x"));
        assert!(hook(None).matcher_regex().is_none());
        assert!(hook(Some("*")).matcher_regex().is_none());
        assert!(hook(Some("")).matcher_regex().is_none());
    }

    #[test]
    fn checks_name_what_is_wrong() {
        let e = check_hook(HookEvent::PreToolUse, &hook(Some("(edit"))).unwrap_err();
        assert_eq!(e.0, "matcher");
        assert!(e.1.contains("not a valid regular expression"), "{}", e.1);
        let mut h = hook(None);
        h.command = "  ".into();
        assert_eq!(check_hook(HookEvent::Stop, &h).unwrap_err().0, "command");
        let mut h = hook(None);
        h.timeout = Some(0);
        assert_eq!(check_hook(HookEvent::Stop, &h).unwrap_err().0, "timeout");
        assert_eq!(
            check_hook(HookEvent::Stop, &hook(Some("bash")))
                .unwrap_err()
                .0,
            "matcher"
        );
        assert!(check_hook(HookEvent::SessionStart, &hook(Some("startup"))).is_ok());
    }

    #[test]
    fn append_keeps_order_and_sources() {
        let mut a = HooksConfig::default();
        a.stop.push(hook(None));
        let mut b = HooksConfig::default();
        b.stop.push(hook(None));
        b.pre_tool_use.push(hook(Some("bash")));
        a.append(HooksConfig::default(), std::path::Path::new("/x"));
        assert_eq!(a.stop[0].source, None);
        a.append(b, std::path::Path::new("/w/pith.toml"));
        assert_eq!(a.stop.len(), 2);
        assert_eq!(
            a.stop[1].source.as_deref(),
            Some(std::path::Path::new("/w/pith.toml"))
        );
        let listed: Vec<_> = a.iter().map(|(e, _)| e).collect();
        assert_eq!(
            listed,
            [HookEvent::PreToolUse, HookEvent::Stop, HookEvent::Stop]
        );
    }
}
