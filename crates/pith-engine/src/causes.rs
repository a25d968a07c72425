//! An error's text with its causes, as the engine's messages show a library's error. A leaf:
//! the engine's error types use it in their texts.

/// An error and its causes, each after a colon: the text `{:#}` gives for an `anyhow` error.
pub(crate) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}
