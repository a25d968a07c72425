//! `/remember` and `#TEXT`, as every front end reads them: what is to be remembered, and in
//! which memory file when the line says (`--user`, `--project`). Without a scope the TUI asks;
//! `pith run` and an editor use the project's file (README "Instructions and memory").

use pith_protocol::event::MemoryScope;

/// The text of a `#TEXT` prompt (one line that starts with `#`), `None` for any other prompt.
/// `#` alone, `#` with only blanks after it, a shebang (`#!…`) and a prompt of several lines (a
/// pasted Markdown document that starts with a heading) are no memory line.
pub fn quick_add(text: &str) -> Option<&str> {
    let text = text.trim();
    if text.contains('\n') || text.starts_with("#!") {
        return None;
    }
    let rest = text.strip_prefix('#')?.trim();
    (!rest.is_empty()).then_some(rest)
}

/// `/remember` arguments: the scope named first (`--user`, `--project`, or `user:` /
/// `project:`), if any, and the text.
pub fn remember_args(args: &str) -> (Option<MemoryScope>, &str) {
    let args = args.trim();
    for scope in MemoryScope::ALL {
        let name = scope.as_str();
        for prefix in [format!("--{name}"), format!("{name}:")] {
            if let Some(rest) = args.strip_prefix(prefix.as_str())
                && (prefix.ends_with(':')
                    || rest.is_empty()
                    || rest.starts_with(char::is_whitespace))
            {
                return (Some(scope), rest.trim());
            }
        }
    }
    (None, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_add_lines() {
        assert_eq!(quick_add("# uses pnpm"), Some("uses pnpm"));
        assert_eq!(quick_add("#uses pnpm "), Some("uses pnpm"));
        assert_eq!(quick_add("#  "), None);
        assert_eq!(quick_add("uses # pnpm"), None);
        assert_eq!(quick_add("# Plan\n\nDo this, then that."), None);
        assert_eq!(quick_add("#!/bin/sh"), None);
    }

    #[test]
    fn remember_scopes() {
        assert_eq!(
            remember_args("--user tabs not spaces"),
            (Some(MemoryScope::User), "tabs not spaces")
        );
        assert_eq!(
            remember_args("project: make check"),
            (Some(MemoryScope::Project), "make check")
        );
        assert_eq!(remember_args("--users x"), (None, "--users x"));
        assert_eq!(remember_args(" plain "), (None, "plain"));
    }
}
