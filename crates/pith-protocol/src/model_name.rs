//! Model names as pith writes them: "provider/model". The model id may itself hold slashes
//! ("openrouter/anthropic/claude-sonnet-4-5"): only the first one ends the provider.

/// The provider and the model id `name` names, when it names both.
pub fn split(name: &str) -> Option<(&str, &str)> {
    name.split_once('/')
        .filter(|(provider, id)| !provider.is_empty() && !id.is_empty())
}

/// The provider of `name` ("openai" of "openai/gpt-4.1"); the whole name when it has none.
pub fn provider(name: &str) -> &str {
    split(name).map_or(name, |(provider, _)| provider)
}

/// The id `name`'s provider knows ("gpt-4.1" of "openai/gpt-4.1"); the whole name when it
/// names no provider.
pub fn id(name: &str) -> &str {
    split(name).map_or(name, |(_, id)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_slash_ends_the_provider() {
        assert_eq!(
            split("openrouter/anthropic/claude"),
            Some(("openrouter", "anthropic/claude"))
        );
        assert_eq!(provider("openrouter/anthropic/claude"), "openrouter");
        assert_eq!(id("openrouter/anthropic/claude"), "anthropic/claude");
    }

    #[test]
    fn a_name_without_both_halves_is_not_split() {
        for name in ["gpt-4", "/x", "x/", "/"] {
            assert_eq!(split(name), None, "{name}");
            assert_eq!(provider(name), name);
            assert_eq!(id(name), name);
        }
    }
}
