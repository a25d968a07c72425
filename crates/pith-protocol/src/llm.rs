//! The neutral model types: what a request to a model and its streamed answer are made of,
//! independent of any wire format. A leaf module: it depends on nothing else in pith, so the
//! context logic and the tools can use these types without importing the HTTP layer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token usage as a provider reports it for one step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub reasoning: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

impl Usage {
    /// The context a step occupied: `input + output + cache_read + cache_write`
    /// (ARCHITECTURE.md §6.3).
    pub fn context_tokens(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
    pub fn is_zero(&self) -> bool {
        self.context_tokens() == 0 && self.reasoning == 0
    }
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.reasoning += other.reasoning;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
    }
}

/// A chat request independent of the wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id as the provider knows it (without the "provider/" prefix).
    pub model: String,
    /// System prompt blocks, most stable first (the first is the cacheable header).
    pub system: Vec<String>,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// Anthropic extended thinking budget.
    pub thinking_budget: Option<u32>,
    /// How hard a reasoning model thinks: `reasoning.effort` (Responses API), `reasoning_effort`
    /// (chat completions, where the server takes it), a thinking budget (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// A reasoning effort level, written as in the config and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Minimal,
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub const ALL: [ReasoningEffort; 4] = [
        ReasoningEffort::Minimal,
        ReasoningEffort::Low,
        ReasoningEffort::Medium,
        ReasoningEffort::High,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }

    /// The level named `name` (any case, surrounding space ignored).
    pub fn parse(name: &str) -> Option<ReasoningEffort> {
        let name = name.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

impl std::fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the input object.
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    User {
        content: Vec<UserContent>,
    },
    Assistant {
        content: Vec<AssistantContent>,
    },
    /// The result of one tool call. OpenAI sends it as a `tool` message; Anthropic as a
    /// `tool_result` block in a user message (consecutive results are merged).
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserContent {
    Text { text: String },
    Image { mime: String, data_base64: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantContent {
    Text {
        text: String,
    },
    Reasoning {
        text: String,
        signature: Option<String>,
        redacted: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        input: Value,
    },
}

/// Why a step's answer ended. Serialized as one snake_case string (`"stop"`, `"tool_calls"`, …):
/// stored messages and `--format json` events carry it that way, and a reason pith does not know
/// is kept as the provider wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    /// The user interrupted the stream (set by the engine, never by a provider).
    Interrupted,
    /// A reason pith has no name for, as the provider reported it.
    #[serde(untagged)]
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Interrupted => "interrupted",
            FinishReason::Other(s) => s,
        }
    }
}

impl From<&str> for FinishReason {
    /// The reason named by its stored form (`"stop"`, …); an unknown name is kept as `Other`.
    fn from(name: &str) -> Self {
        from_name(name).unwrap_or_else(|| FinishReason::Other(name.to_string()))
    }
}

/// A value of a snake_case string enum from its name, by its serde derive (the one definition of
/// the names).
pub fn from_name<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    use serde::de::IntoDeserializer;
    let de: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
        name.into_deserializer();
    T::deserialize(de).ok()
}

impl std::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a streamed response.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// Anthropic: the signature of the current thinking block.
    ReasoningSignature(String),
    /// Anthropic: a redacted thinking block (opaque data to send back).
    RedactedReasoning(String),
    /// A tool call began streaming (for showing it as pending).
    ToolCallStart {
        id: String,
        name: String,
    },
    /// A tool call is complete. `arguments` is the raw JSON text the model produced.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// Usage so far (providers may report it more than once; the last one wins).
    Usage(Usage),
    Finish(FinishReason),
    /// A web search the provider ran itself (OpenAI Responses `web_search_call`, Anthropic's
    /// `web_search_tool_result`): nothing for pith to run or send back. The same `id` again
    /// adds its `results` to the search's (the pages the answer cites).
    WebSearch {
        id: String,
        query: String,
        results: Vec<WebResult>,
        /// The provider's error code when the search failed.
        error: Option<String>,
    },
}

/// A page a provider's hosted web search found or the answer cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResult {
    pub title: String,
    pub url: String,
}

/// Whether any message holds a tool call or a tool result.
pub fn has_tool_blocks(messages: &[ChatMessage]) -> bool {
    messages.iter().any(|m| match m {
        ChatMessage::ToolResult { .. } => true,
        ChatMessage::Assistant { content } => content
            .iter()
            .any(|c| matches!(c, AssistantContent::ToolCall { .. })),
        _ => false,
    })
}

/// Tool calls and results as plain text, reasoning left out: for a request that defines no
/// tools (the compaction agent's; a provider that rejects tool blocks without tool definitions).
pub fn flatten_tools(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { content } => {
                let content: Vec<AssistantContent> = content
                    .into_iter()
                    .filter_map(|c| match c {
                        AssistantContent::ToolCall { name, input, .. } => {
                            Some(AssistantContent::Text {
                                text: format!("[called tool {name} with {input}]"),
                            })
                        }
                        AssistantContent::Reasoning { .. } => None,
                        other => Some(other),
                    })
                    .collect();
                (!content.is_empty()).then_some(ChatMessage::Assistant { content })
            }
            ChatMessage::ToolResult {
                content, is_error, ..
            } => Some(ChatMessage::User {
                content: vec![UserContent::Text {
                    text: format!(
                        "[tool {}]\n{content}",
                        if is_error { "error" } else { "result" }
                    ),
                }],
            }),
            user => Some(user),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_levels_parse_and_print_as_written() {
        for e in ReasoningEffort::ALL {
            assert_eq!(ReasoningEffort::parse(e.as_str()), Some(e));
            assert_eq!(
                serde_json::to_value(e).unwrap(),
                serde_json::json!(e.as_str())
            );
        }
        assert_eq!(
            ReasoningEffort::parse(" HIGH "),
            Some(ReasoningEffort::High)
        );
        assert_eq!(ReasoningEffort::parse("extreme"), None);
    }

    #[test]
    fn finish_reasons_are_plain_strings() {
        for (reason, text) in [
            (FinishReason::Stop, "stop"),
            (FinishReason::ToolCalls, "tool_calls"),
            (FinishReason::Length, "length"),
            (FinishReason::ContentFilter, "content_filter"),
            (FinishReason::Interrupted, "interrupted"),
            (FinishReason::Other("pause_turn".into()), "pause_turn"),
        ] {
            let json = serde_json::to_value(&reason).unwrap();
            assert_eq!(json, serde_json::json!(text));
            assert_eq!(reason.as_str(), text);
            let back: FinishReason = serde_json::from_value(json).unwrap();
            assert_eq!(back, reason);
            assert_eq!(FinishReason::from(text), reason);
        }
    }
}
