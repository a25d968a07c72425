//! Anthropic Messages API (streaming).
