//! Which shell commands verify the work: tests, builds, type-checks and lints, recognised by
//! the program and its subcommand (`cargo test`, `npm run build`, `pytest`, `go vet`, `make`,
//! `tsc`, `eslint`, …) after `cd … &&`, environment assignments and wrappers such as `timeout`.
//! `cat test.txt` or `echo cargo test` are not checks.

/// A recognised check: its command as the frontier shows and keys it, and whether its output
/// went through a pipe (then the exit code is the last command's, not the check's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckCommand {
    /// The `cd` and check segments of the command, without environment assignments, wrappers
    /// like `timeout`, redirections and the filters its output was piped into.
    pub normalised: String,
    pub piped: bool,
    /// Another command runs after it (`cargo test; echo done`): the exit code may be that one's.
    pub followed: bool,
}

/// The check `command` runs, when it runs one.
pub fn recognise(command: &str) -> Option<CheckCommand> {
    let mut kept: Vec<String> = Vec::new();
    let mut cds: Vec<String> = Vec::new();
    let mut piped = false;
    let mut followed = false;
    let mut any = false;
    let mut after_check_pipe = false;
    for (sep, segment) in segments(command) {
        let words = words(segment);
        if sep == Sep::Pipe && after_check_pipe {
            // the filter a check's output went through (`| tail -20`): not part of it
            piped = true;
            continue;
        }
        after_check_pipe = false;
        let words = strip_prefixes(&words);
        let Some(first) = words.first() else {
            continue;
        };
        if first == "cd" || first == "pushd" {
            cds.push(words.join(" "));
            continue;
        }
        if is_check(&words) {
            any = true;
            followed = false;
            kept.append(&mut cds);
            kept.push(words.join(" "));
            after_check_pipe = true;
        } else {
            followed = any;
        }
    }
    any.then(|| CheckCommand {
        normalised: kept.join(" && "),
        piped,
        followed,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    Start,
    /// `&&`, `||`, `;`, a new line.
    Sequence,
    /// `|`.
    Pipe,
}

/// The command's segments, each with the separator before it. Quotes are respected roughly:
/// a separator inside quotes does not split.
fn segments(command: &str) -> Vec<(Sep, &str)> {
    let mut out = Vec::new();
    let bytes = command.as_bytes();
    let (mut start, mut i, mut sep) = (0, 0, Sep::Start);
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        let two = bytes.get(i..i + 2);
        let (next, width) = match b {
            b'\'' | b'"' => {
                quote = Some(b);
                i += 1;
                continue;
            }
            _ if two == Some(b"&&") || two == Some(b"||") => (Sep::Sequence, 2),
            // `2>&1`, `&>`: part of a redirection, not a separator
            b'&' if i > 0 && bytes[i - 1] == b'>' => {
                i += 1;
                continue;
            }
            b';' | b'\n' | b'&' => (Sep::Sequence, 1),
            b'|' => (Sep::Pipe, 1),
            _ => {
                i += 1;
                continue;
            }
        };
        out.push((sep, &command[start..i]));
        sep = next;
        i += width;
        start = i;
    }
    out.push((sep, &command[start..]));
    out.retain(|(_, s)| !s.trim().is_empty());
    out
}

/// A segment's words, quotes taken off, redirections (`2>&1`, `> out.txt`) left out.
fn words(segment: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in segment.split_whitespace() {
        if skip_next {
            skip_next = false;
            continue;
        }
        let bare = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
        if bare.starts_with('>') || bare.starts_with('<') {
            // `> file` names its target in the next word; `>file`, `2>&1` do not
            skip_next = matches!(bare, ">" | ">>" | "<");
            continue;
        }
        out.push(w.trim_matches(|c| c == '"' || c == '\'').to_string());
    }
    out
}

/// `words` without what only wraps the command: environment assignments, `env`, `time`,
/// `nice`, `nohup`, `sudo`, `timeout` with its options and duration.
fn strip_prefixes(words: &[String]) -> Vec<String> {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if is_assignment(w) {
            i += 1;
        } else if matches!(w, "env" | "time" | "nohup" | "sudo" | "command" | "exec") {
            i += 1;
            while words.get(i).is_some_and(|w| w.starts_with('-')) {
                i += 1;
            }
        } else if w == "nice" {
            i += 1;
            if words.get(i).is_some_and(|w| w == "-n") {
                i += 2;
            }
        } else if w == "timeout" || w == "gtimeout" {
            i += 1;
            while let Some(opt) = words.get(i).filter(|w| w.starts_with('-')) {
                i += if matches!(opt.as_str(), "-s" | "-k" | "--signal" | "--kill-after") {
                    2
                } else {
                    1
                };
            }
            i += 1; // the duration
        } else {
            break;
        }
    }
    words.get(i..).map(<[String]>::to_vec).unwrap_or_default()
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The program's name without its directory (`./gradlew` → `gradlew`).
fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Options whose value is the next word (so that word is no subcommand).
const VALUE_OPTIONS: [&str; 9] = [
    "-C",
    "-f",
    "-p",
    "--prefix",
    "--cwd",
    "--dir",
    "--filter",
    "-F",
    "--manifest-path",
];

/// The words after the program that are not options, in order.
fn args(words: &[String]) -> Vec<&str> {
    args_with(words, &[])
}

/// [`args`] where the options `extra` take the next word as their value too.
fn args_with<'a>(words: &'a [String], extra: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    for w in words.iter().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        if w.starts_with('-') || w.starts_with('+') {
            skip = VALUE_OPTIONS.contains(&w.as_str()) || extra.contains(&w.as_str());
            continue;
        }
        out.push(w.as_str());
    }
    out
}

/// A script or target name that verifies: `test`, `build`, `lint`, `test:unit`, `type-check`…
fn checks_by_name(name: &str) -> bool {
    name.split([':', '-', '_', '.'])
        .any(|piece| CHECK_WORDS.contains(&piece.to_ascii_lowercase().as_str()))
}

const CHECK_WORDS: [&str; 17] = [
    "test",
    "tests",
    "build",
    "lint",
    "check",
    "typecheck",
    "tsc",
    "types",
    "verify",
    "ci",
    "e2e",
    "spec",
    "compile",
    "vet",
    "clippy",
    "jest",
    "vitest",
];

/// Whether the program `words[0]` with its arguments runs a test, build, type-check or lint.
fn is_check(words: &[String]) -> bool {
    let Some(first) = words.first() else {
        return false;
    };
    let prog = program(first);
    let args = args(words);
    let sub = args.first().copied().unwrap_or("");
    let has = |flag: &str| words.iter().any(|w| w == flag);
    match prog {
        "cargo" => {
            matches!(
                sub,
                "test" | "t" | "build" | "b" | "check" | "c" | "clippy" | "nextest" | "bench"
            ) || (sub == "fmt" && has("--check"))
                || (sub == "insta" && args.get(1) == Some(&"test"))
        }
        "npm" | "pnpm" | "yarn" | "bun" => match sub {
            "run" | "run-script" => args.get(1).is_some_and(|s| checks_by_name(s)),
            "exec" | "dlx" | "x" => wrapped(&words[1..]),
            "install" | "i" | "add" | "remove" | "ci" | "init" | "create" => false,
            s => checks_by_name(s),
        },
        "npx" | "pnpx" | "bunx" | "uvx" => wrapped(&words[1..]),
        "uv" | "poetry" | "pipenv" | "hatch" | "pdm" | "rye" if sub == "run" => {
            wrapped(&words[words.iter().position(|w| w == "run").unwrap_or(0) + 1..])
        }
        "bundle" if sub == "exec" => wrapped(&words[2..]),
        "python" | "python3" | "py" => {
            let m = words.iter().position(|w| w == "-m");
            m.is_some_and(|i| {
                words.get(i + 1).is_some_and(|module| {
                    matches!(
                        module.as_str(),
                        "pytest" | "unittest" | "mypy" | "pyright" | "ruff" | "flake8" | "pylint"
                    ) || module == "compileall"
                })
            })
        }
        "go" => matches!(sub, "test" | "build" | "vet"),
        "golangci-lint" | "staticcheck" => true,
        "pytest" | "py.test" | "tox" | "nox" | "mypy" | "pyright" | "flake8" | "pylint" => true,
        "ruff" => sub != "format" || has("--check"),
        "black" | "isort" | "prettier" => has("--check") || has("-c"),
        "make" | "gmake" | "ninja" => {
            !has("-t") && !args.iter().any(|t| NOT_CHECK_TARGETS.contains(t))
        }
        "cmake" => has("--build"),
        "ctest" | "tsc" | "vue-tsc" | "jest" | "vitest" | "mocha" | "ava" | "eslint" => true,
        "stylelint" | "shellcheck" | "hadolint" | "clang-tidy" | "cppcheck" | "rspec" => true,
        "phpunit" | "pest" => true,
        "meson" => matches!(sub, "test" | "compile"),
        "bazel" | "bazelisk" | "dotnet" | "swift" | "zig" | "stack" | "cabal" | "dune" => {
            matches!(sub, "test" | "build")
        }
        "mix" => matches!(sub, "test" | "compile"),
        "deno" => matches!(sub, "test" | "lint" | "check" | "bench"),
        "biome" => matches!(sub, "check" | "lint" | "ci"),
        "playwright" => sub == "test",
        "cypress" => sub == "run",
        "flutter" | "dart" => matches!(sub, "test" | "analyze"),
        "node" => has("--test"),
        "rake" | "just" | "task" | "sbt" => checks_by_name(sub),
        "mvn" | "mvnw" | "gradle" | "gradlew" => args.iter().any(|a| checks_by_name(a)),
        // infrastructure: what a plan or a dry run says before anything is applied
        "terraform" | "tofu" | "terragrunt" => matches!(sub, "plan" | "validate" | "test"),
        "kubectl" | "oc" => {
            let args = args_with(words, &["-n", "--namespace", "--context", "--kubeconfig"]);
            let sub = args.first().copied().unwrap_or("");
            sub == "diff"
                || (sub == "rollout" && args.get(1) == Some(&"status"))
                || (sub == "apply" && words.iter().any(|w| w.starts_with("--dry-run")))
        }
        "helm" => matches!(sub, "lint" | "template" | "test"),
        "ansible-playbook" => has("--check") || has("--syntax-check"),
        "docker" | "podman" => {
            sub == "build" || (sub == "compose" && args.get(1) == Some(&"build"))
        }
        _ => false,
    }
}

/// `make` targets that do not verify anything.
const NOT_CHECK_TARGETS: [&str; 10] = [
    "clean",
    "distclean",
    "install",
    "uninstall",
    "run",
    "serve",
    "dev",
    "deploy",
    "help",
    "fmt",
];

/// The command a wrapper (`npx`, `uv run`, `bundle exec`) runs, without the wrapper's options.
fn wrapped(words: &[String]) -> bool {
    let start = words
        .iter()
        .position(|w| !w.starts_with('-'))
        .unwrap_or(words.len());
    is_check(&words[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalised(c: &str) -> Option<String> {
        recognise(c).map(|c| c.normalised)
    }

    #[test]
    fn tests_builds_type_checks_and_lints_are_checks() {
        for c in [
            "cargo test -p pith-context",
            "cargo +nightly clippy --all-targets -- -D warnings",
            "cargo build --release",
            "cargo fmt --check",
            "npm test",
            "npm run build",
            "pnpm --filter web test",
            "yarn lint",
            "yarn test:unit",
            "npx tsc --noEmit",
            "npx -y vitest run",
            "pytest -q tests/test_parser.py",
            "python -m pytest",
            "uv run pytest -x",
            "go test ./...",
            "go vet ./...",
            "make",
            "make -C build test",
            "ninja -C out",
            "tsc -p .",
            "./gradlew check",
            "mvn -q verify",
            "ruff check .",
            "mypy src",
            "eslint src --ext .ts",
            "bundle exec rspec",
            "cmake --build build",
            "cd infra/gke && terraform plan -out=tfplan",
            "terraform validate",
            "kubectl -n ml rollout status deploy/embedder --timeout=5m",
            "kubectl diff -f k8s/",
            "helm lint charts/api",
            "docker build -t api .",
        ] {
            assert!(recognise(c).is_some(), "{c} is a check");
        }
    }

    #[test]
    fn other_commands_are_not_checks() {
        for c in [
            "cat test.txt",
            "ls tests/",
            "grep -rn test src",
            "echo cargo test",
            "git commit -m 'run cargo test'",
            "cargo run -- --help",
            "cargo add serde",
            "npm install",
            "npm ci",
            "make clean",
            "python script.py",
            "rm -rf build",
            "mkdir -p build",
            "ruff format src",
            "prettier --write .",
            "terraform apply tfplan",
            "kubectl apply -f k8s/",
            "kubectl -n ml get pods",
            "helm install api charts/api",
            "docker run --rm api",
            "",
        ] {
            assert_eq!(recognise(c), None, "{c} is no check");
        }
    }

    #[test]
    fn wrappers_env_timeout_and_redirections_are_left_out() {
        assert_eq!(
            normalised("cd crates/x && RUST_BACKTRACE=1 timeout 600 cargo test 2>&1"),
            Some("cd crates/x && cargo test".into())
        );
        assert_eq!(
            normalised("timeout -s KILL 60s env CI=1 npm test > out.log"),
            Some("npm test".into())
        );
        assert_eq!(
            normalised("cargo build 2>&1 | tail -20; cargo test | grep FAILED"),
            Some("cargo build && cargo test".into())
        );
        let piped = recognise("cargo test 2>&1 | tail -n 30").unwrap();
        assert!(piped.piped);
        assert!(!recognise("cargo test").unwrap().piped);
        let followed = recognise("cargo test; echo done").unwrap();
        assert!(followed.followed && !followed.piped);
        assert!(
            !recognise("cd x && cargo build && cargo test")
                .unwrap()
                .followed
        );
        // an unrelated step before the check is no part of it
        assert_eq!(
            normalised("source .venv/bin/activate; pytest -x"),
            Some("pytest -x".into())
        );
        // a separator inside quotes does not split
        assert_eq!(
            normalised("echo 'a && cargo test'"),
            None,
            "quoted text is no command"
        );
    }
}
