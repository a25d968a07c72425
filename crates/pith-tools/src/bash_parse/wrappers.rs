//! Wrappers: commands that run another command (`env`, `sudo`, `timeout`, `xargs`,
//! `find -exec`, `watch` …) and the command each one runs.

use super::Word;
use super::commands::join;

/// What a wrapper command runs.
pub(super) struct Wrapped {
    pub assignments: Vec<String>,
    pub words: Vec<Word>,
    /// The wrapper only changes how the command runs (`timeout`, `nice`, `env`): rules judge the
    /// wrapped command alone.
    pub transparent: bool,
    pub open_args: bool,
    /// A command line given as one string (`watch CMD`, `flock -c CMD`, `env -S CMD`).
    pub script: Option<Word>,
    /// Further commands (a second `find -exec`).
    pub more: Vec<Vec<Word>>,
}

/// Options of a wrapper: those that take a value, and how many operands precede the command.
struct Spec {
    valued: &'static [&'static str],
    operands: usize,
    transparent: bool,
}

fn spec(name: &str) -> Option<Spec> {
    let s = |valued, operands, transparent| {
        Some(Spec {
            valued,
            operands,
            transparent,
        })
    };
    match name {
        "command" | "builtin" | "nohup" | "setsid" => s(&[], 0, true),
        "exec" => s(&["-a"], 0, true),
        "nice" => s(&["-n", "--adjustment"], 0, true),
        "time" => s(&["-f", "--format", "-o", "--output"], 0, true),
        "timeout" => s(&["-s", "--signal", "-k", "--kill-after"], 1, true),
        "stdbuf" => s(
            &["-i", "-o", "-e", "--input", "--output", "--error"],
            0,
            true,
        ),
        "ionice" => s(&["-c", "--class", "-n", "--classdata"], 0, true),
        "chrt" => s(&[], 1, true),
        "taskset" => s(&[], 1, true),
        "sudo" => s(
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-C",
                "--close-from",
                "-D",
                "--chdir",
                "-h",
                "--host",
                "-p",
                "--prompt",
                "-r",
                "--role",
                "-t",
                "--type",
                "-T",
                "--command-timeout",
                "-U",
                "--other-user",
            ],
            0,
            false,
        ),
        "doas" => s(&["-u", "-C"], 0, false),
        "busybox" | "coproc" => s(&[], 0, false),
        "flock" => s(&["-w", "--timeout", "-E", "--conflict-exit-code"], 1, false),
        _ => None,
    }
}

/// A wrapper that runs `words` as a command, nothing more.
fn plain(words: Vec<Word>, transparent: bool) -> Wrapped {
    Wrapped {
        assignments: Vec::new(),
        words,
        transparent,
        open_args: false,
        script: None,
        more: Vec::new(),
    }
}

pub(super) fn unwrap(name: &str, args: &[Word]) -> Option<Wrapped> {
    match name {
        "env" => return Some(env(args)),
        "xargs" => return Some(xargs(args)),
        "find" => return find(args),
        "watch" => return watch(args),
        "command" if args.iter().any(|w| w.text == "-v" || w.text == "-V") => return None,
        _ => {}
    }
    let spec = spec(name)?;
    let mut k = skip_options(args, spec.valued);
    k = (k + spec.operands).min(args.len());
    if name == "flock"
        && matches!(
            args.get(k).map(|w| w.text.as_str()),
            Some("-c" | "--command")
        )
    {
        let mut w = plain(Vec::new(), false);
        w.script = args.get(k + 1).cloned();
        return Some(w);
    }
    let rest = args[k..].to_vec();
    if rest.is_empty() {
        return None;
    }
    Some(plain(rest, spec.transparent))
}

/// `xargs [OPTIONS] COMMAND [ARG]…`: the command gets more arguments from the input.
fn xargs(args: &[Word]) -> Wrapped {
    let k = skip_options(
        args,
        &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "--process-slot-var",
        ],
    );
    let mut w = plain(args[k..].to_vec(), false);
    w.open_args = true;
    w
}

/// `find … -exec CMD {} ;` (and `-execdir`, `-ok`, `-okdir`): every command it runs.
fn find(args: &[Word]) -> Option<Wrapped> {
    let mut commands = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = k + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            commands.push(args[start..end].to_vec());
            k = end;
        }
        k += 1;
    }
    let mut commands = commands.into_iter();
    let first = commands.next()?;
    let mut w = plain(first, false);
    w.open_args = true;
    w.more = commands.collect();
    Some(w)
}

/// `watch [-x] CMD`: a command line (a script, or with `-x` the words of a command).
fn watch(args: &[Word]) -> Option<Wrapped> {
    let exec = args.iter().any(|w| w.text == "-x" || w.text == "--exec");
    let k = skip_options(args, &["-n", "--interval", "-d", "--differences"]);
    let rest = &args[k..];
    if rest.is_empty() {
        return None;
    }
    Some(if exec {
        plain(rest.to_vec(), false)
    } else {
        let mut w = plain(Vec::new(), false);
        w.script = Some(join(rest));
        w
    })
}

/// The index of the first operand after the options (`--` skipped).
fn skip_options(args: &[Word], valued: &[&str]) -> usize {
    let mut k = 0;
    while k < args.len() {
        let w = &args[k];
        let t = w.text.as_str();
        if !w.literal || !t.starts_with('-') || t == "-" {
            break;
        }
        if t == "--" {
            return k + 1;
        }
        if valued.contains(&t) {
            k += 2;
        } else {
            k += 1;
        }
    }
    k
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND [ARG]…]`.
fn env(args: &[Word]) -> Wrapped {
    let mut wrapped = Wrapped {
        assignments: Vec::new(),
        words: Vec::new(),
        transparent: true,
        open_args: false,
        script: None,
        more: Vec::new(),
    };
    let mut k = 0;
    while k < args.len() {
        let w = &args[k];
        let t = w.text.as_str();
        if !w.literal {
            break;
        }
        if matches!(t, "-S" | "--split-string") || t.starts_with("--split-string=") {
            let value = match t.split_once('=') {
                Some((_, v)) => Some(Word::literal(v)),
                None => args.get(k + 1).cloned(),
            };
            wrapped.script = value.map(|v| {
                let mut rest = vec![v];
                rest.extend(args[(k + 2).min(args.len())..].iter().cloned());
                join(&rest)
            });
            return wrapped;
        }
        if let Some(s) = t.strip_prefix("-S") {
            let mut rest = vec![Word::literal(s)];
            rest.extend(args[k + 1..].iter().cloned());
            wrapped.script = Some(join(&rest));
            return wrapped;
        }
        if matches!(t, "-u" | "--unset" | "-C" | "--chdir") {
            k += 2;
            continue;
        }
        if t == "--" {
            k += 1;
            break;
        }
        if t.starts_with('-') {
            k += 1;
            continue;
        }
        if t.contains('=') && !t.starts_with('=') {
            wrapped.assignments.push(t.to_string());
            k += 1;
            continue;
        }
        break;
    }
    wrapped.words = args[k.min(args.len())..].to_vec();
    wrapped
}
