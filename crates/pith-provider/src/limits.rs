//! Reading the real context window out of an overflow error. Servers say what their limit is
//! in words, each in its own: pith reads the window and the prompt size the server counted, so a
//! wrong configured window is corrected by the first request that runs into the real one.

/// What an overflow error said about the limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverflowLimits {
    /// The context window the server enforces.
    pub window: Option<u64>,
    /// The prompt tokens the server counted for the rejected request.
    pub prompt: Option<u64>,
}

/// Smallest and largest figures taken as a window (anything else is a misread).
const PLAUSIBLE: std::ops::RangeInclusive<u64> = 256..=100_000_000;

/// Phrases followed by the window, in the wording of each server family (lower case).
const WINDOW_AFTER: &[&str] = &[
    // OpenAI, vLLM, OpenRouter, DeepSeek, Groq: "maximum context length is 8192 tokens"
    "maximum context length is",
    // llama.cpp: "exceeds the available context size (4096 tokens)"
    "context size (",
    "\"n_ctx\":",
    // LM Studio: "loaded with context length of only 4096 tokens"
    "context length of only",
    // Text Generation Inference: "`inputs` tokens + `max_new_tokens` must be <= 4096"
    "must be <=",
    // Gemini: "exceeds the maximum number of tokens allowed (1048576)"
    "maximum number of tokens allowed (",
    // Ollama / others: "context window of 8192 tokens", "context length: 8192"
    "context window of",
    "context limit of",
];

/// Phrases followed by the prompt tokens the server counted (lower case).
const PROMPT_AFTER: &[&str] = &[
    // llama.cpp: "request (5031 tokens) exceeds …"
    "request (",
    "\"n_prompt_tokens\":",
    // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    "prompt is too long:",
    // Anthropic: "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000"
    "exceed context limit:",
    // OpenAI: "your messages resulted in 9000 tokens"
    "resulted in",
    // vLLM: "your request has 5000 input tokens"
    "your request has",
    // Mistral: "prompt contains 40000 tokens"
    "prompt contains",
    // Gemini: "the input token count (1200000) exceeds"
    "input token count (",
    // TGI: "given: 4000 `inputs` tokens"
    "given:",
];

/// Reads the window and the prompt size from an overflow error message (or body).
pub fn parse(text: &str) -> OverflowLimits {
    let lower = text.to_lowercase();
    let mut window = WINDOW_AFTER
        .iter()
        .find_map(|p| number_after(&lower, p))
        .or_else(|| number_before(&lower, " maximum context length"))
        .or_else(|| anthropic_maximum(&lower));
    let mut prompt = PROMPT_AFTER
        .iter()
        .find_map(|p| number_after(&lower, p))
        .or_else(|| number_before(&lower, " in the messages"))
        // "you requested 9000 tokens" counts the completion too: an upper bound, still useful.
        .or_else(|| number_after(&lower, "you requested about"))
        .or_else(|| number_after(&lower, "you requested"));
    window = window.filter(|n| PLAUSIBLE.contains(n));
    prompt = prompt.filter(|n| PLAUSIBLE.contains(n));
    OverflowLimits { window, prompt }
}

/// "208310 tokens > 200000 maximum" and "190000 + 32000 > 200000": the figure after `>`.
fn anthropic_maximum(lower: &str) -> Option<u64> {
    if !(lower.contains("prompt is too long") || lower.contains("exceed context limit")) {
        return None;
    }
    number_after(lower, ">")
}

/// The first number within a few characters after `phrase` (digits with `,` or `_` separators).
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let start = text.find(phrase)? + phrase.len();
    let rest = &text[start..];
    let skip = rest
        .char_indices()
        .take_while(|(i, c)| *i < 12 && !c.is_ascii_digit())
        .count();
    let digits: String = rest
        .chars()
        .skip(skip)
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The number that ends right before `phrase` ("32768 maximum context length").
fn number_before(text: &str, phrase: &str) -> Option<u64> {
    let end = text.find(phrase)?;
    let head = text[..end].trim_end();
    let digits: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) -> (Option<u64>, Option<u64>) {
        let l = parse(text);
        (l.window, l.prompt)
    }

    /// Each server family's wording of an overflow, and the figures read from it.
    mod each_server_familys_wording {
        use super::both;

        fn check(cases: &[(&str, Option<u64>, Option<u64>)]) {
            for (text, window, prompt) in cases {
                assert_eq!(both(text), (*window, *prompt), "{text}");
            }
        }

        /// llama.cpp (a real llama-server's 400 body and the message pith makes of it)
        #[test]
        fn llama_cpp() {
            check(&[
                (
                    r#"{"error":{"code":400,"message":"request (5031 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5031,"n_ctx":4096}}"#,
                    Some(4_096),
                    Some(5_031),
                ),
                (
                    "HTTP 400 context overflow: request (5031 tokens) exceeds the available context size (4096 tokens), try increasing it",
                    Some(4_096),
                    Some(5_031),
                ),
            ]);
        }

        /// OpenAI
        #[test]
        fn openai() {
            check(&[(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
                Some(128_000),
                Some(130_512),
            )]);
        }

        /// vLLM, two generations
        #[test]
        fn vllm() {
            check(&[
                (
                    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
                    Some(4_096),
                    Some(4_500),
                ),
                (
                    "This model's maximum context length is 8192 tokens. However, your request has 9001 input tokens. Please reduce the length of the input messages.",
                    Some(8_192),
                    Some(9_001),
                ),
            ]);
        }

        /// OpenRouter
        #[test]
        fn openrouter() {
            check(&[(
                "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (132000 of text input, 8000 of tool input).",
                Some(131_072),
                Some(140_000),
            )]);
        }

        /// Anthropic
        #[test]
        fn anthropic() {
            check(&[
                (
                    "anthropic: HTTP 400 invalid_request_error: prompt is too long: 208310 tokens > 200000 maximum",
                    Some(200_000),
                    Some(208_310),
                ),
                (
                    "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length or `max_tokens` and try again",
                    Some(200_000),
                    Some(190_000),
                ),
            ]);
        }

        /// Mistral
        #[test]
        fn mistral() {
            check(&[(
                "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
                Some(32_768),
                Some(40_000),
            )]);
        }

        /// Text Generation Inference
        #[test]
        fn text_generation_inference() {
            check(&[(
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`",
                Some(4_096),
                Some(4_000),
            )]);
        }

        /// Gemini (OpenAI-compatible endpoint)
        #[test]
        fn gemini() {
            check(&[(
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                Some(1_048_576),
                Some(1_200_000),
            )]);
        }

        /// LM Studio
        #[test]
        fn lm_studio() {
            check(&[(
                "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
                Some(4_096),
                None,
            )]);
        }

        /// Nothing to go by
        #[test]
        fn nothing_to_go_by() {
            check(&[
                (
                    "the request exceeds the available context size, try increasing it",
                    None,
                    None,
                ),
                ("context_length_exceeded", None, None),
            ]);
        }
    }

    #[test]
    fn separators_and_implausible_figures() {
        assert_eq!(
            parse("maximum context length is 1,048,576 tokens").window,
            Some(1_048_576)
        );
        // A misread (an error code, a tiny number) is not a window.
        assert_eq!(parse("maximum context length is 12 tokens").window, None);
        assert_eq!(
            parse("maximum context length is tokens, sorry").window,
            None
        );
    }
}
