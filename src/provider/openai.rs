//! OpenAI-compatible chat completions (streaming).
