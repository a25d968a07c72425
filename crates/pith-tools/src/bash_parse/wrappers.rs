//! Wrappers: commands that run another command (`env`, `sudo`, `timeout`, `xargs`,
//! `find -exec`, `watch` …) and the command each one runs. Their options are read the way
//! getopt reads them (`mode::getopt`: combined short options, attached arguments, abbreviated
//! long options, reading stops at the first operand), so `env -iS'rm -rf x' cat` runs `rm`,
//! not `cat`. Options that cannot be read (an ambiguous abbreviation, a missing argument, an
//! option computed at run time) make the command hidden code.

use super::Word;
use super::commands::join;
use crate::mode::getopt::{self, Arg, Parsed, Spec as Opts};

/// What a wrapper command runs.
#[derive(Default)]
pub(super) struct Wrapped {
    pub(crate) assignments: Vec<String>,
    pub words: Vec<Word>,
    /// The wrapper only changes how the command runs (`timeout`, `nice`, `env`): rules judge the
    /// wrapped command alone.
    pub transparent: bool,
    pub(crate) open_args: bool,
    /// A command line given as one string (`watch CMD`, `flock -c CMD`, `env -S CMD`).
    pub script: Option<Word>,
    /// Further commands (a second `find -exec`).
    pub more: Vec<Vec<Word>>,
    /// The wrapper's options cannot be read: what it runs is not known.
    pub unreadable: bool,
}

/// A wrapper's options, how many operands precede the command, and whether it is transparent.
struct Spec {
    opts: Opts,
    operands: usize,
    transparent: bool,
}

const R: Arg = Arg::Required;
const N: Arg = Arg::No;
const O: Arg = Arg::Optional;

/// `sudo`'s options that take an argument (the rest are flags).
const SUDO: Opts = Opts {
    short: &[
        ('u', R),
        ('g', R),
        ('C', R),
        ('D', R),
        ('h', R),
        ('p', R),
        ('r', R),
        ('t', R),
        ('T', R),
        ('U', R),
    ],
    long: &[
        ("user", R),
        ("group", R),
        ("close-from", R),
        ("chdir", R),
        ("host", R),
        ("prompt", R),
        ("role", R),
        ("type", R),
        ("command-timeout", R),
        ("other-user", R),
        ("preserve-env", O),
    ],
    strict: false,
};

const IONICE: Opts = Opts {
    short: &[('c', R), ('n', R), ('p', R), ('P', R), ('u', R)],
    long: &[
        ("class", R),
        ("classdata", R),
        ("pid", R),
        ("pgid", R),
        ("uid", R),
        ("ignore", N),
    ],
    strict: false,
};

const TIMEOUT: Opts = Opts {
    short: &[('s', R), ('k', R)],
    long: &[
        ("signal", R),
        ("kill-after", R),
        ("preserve-status", N),
        ("foreground", N),
        ("verbose", N),
    ],
    strict: false,
};

fn spec(name: &str) -> Option<Spec> {
    let s = |short, long, operands, transparent| {
        Some(Spec {
            opts: Opts {
                short,
                long,
                strict: false,
            },
            operands,
            transparent,
        })
    };
    match name {
        "command" | "builtin" | "nohup" => s(&[], &[], 0, true),
        "setsid" => s(&[], &[("ctty", N), ("fork", N), ("wait", N)], 0, true),
        "exec" => s(&[('a', R)], &[], 0, true),
        "nice" => s(&[('n', R)], &[("adjustment", R)], 0, true),
        "time" => s(
            &[('f', R), ('o', R)],
            &[("format", R), ("output", R), ("append", N), ("verbose", N)],
            0,
            true,
        ),
        "timeout" => s(TIMEOUT.short, TIMEOUT.long, 1, true),
        "stdbuf" => s(
            &[('i', R), ('o', R), ('e', R)],
            &[("input", R), ("output", R), ("error", R)],
            0,
            true,
        ),
        "ionice" => s(IONICE.short, IONICE.long, 0, true),
        "chrt" => s(
            &[('T', R), ('P', R), ('D', R)],
            &[
                ("sched-runtime", R),
                ("sched-period", R),
                ("sched-deadline", R),
            ],
            1,
            true,
        ),
        "taskset" => s(&[], &[("all-tasks", N), ("cpu-list", N)], 1, true),
        "sudo" => s(SUDO.short, SUDO.long, 0, false),
        "doas" => s(&[('u', R), ('C', R)], &[], 0, false),
        "busybox" | "coproc" => s(&[], &[], 0, false),
        "flock" => s(
            &[('w', R), ('E', R)],
            &[("timeout", R), ("conflict-exit-code", R), ("command", R)],
            1,
            false,
        ),
        _ => None,
    }
}

/// A wrapper that runs `words` as a command, nothing more.
fn plain(words: Vec<Word>, transparent: bool) -> Wrapped {
    Wrapped {
        words,
        transparent,
        ..Wrapped::default()
    }
}

/// A wrapper whose options cannot be read.
fn unreadable() -> Wrapped {
    Wrapped {
        unreadable: true,
        ..Wrapped::default()
    }
}

/// `args`' options read by `opts` up to the first operand: the options and the index of the
/// first operand; `None` when they cannot be read (an option word computed at run time too).
fn leading<'a>(args: &'a [Word], opts: &Opts) -> Option<(Parsed<'a>, usize)> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let (parsed, k) = getopt::parse_leading(opts, &texts).ok()?;
    let computed = args[..k]
        .iter()
        .any(|w| !w.literal && w.text.starts_with('-'));
    (!computed).then_some((parsed, k))
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
    let Some((parsed, k)) = leading(args, &spec.opts) else {
        return Some(unreadable());
    };
    if let Some(Some(script)) = parsed.args_of(&["command"]).next() {
        let mut w = plain(Vec::new(), false);
        w.script = Some(Word::literal(script));
        return Some(w);
    }
    let k = (k + spec.operands).min(args.len());
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
    const OPTS: Opts = Opts {
        short: &[
            ('a', R),
            ('d', R),
            ('E', R),
            ('e', O),
            ('I', R),
            ('i', O),
            ('L', R),
            ('l', O),
            ('n', R),
            ('P', R),
            ('s', R),
        ],
        long: &[
            ("arg-file", R),
            ("delimiter", R),
            ("eof", O),
            ("replace", O),
            ("max-lines", O),
            ("max-args", R),
            ("max-procs", R),
            ("max-chars", R),
            ("process-slot-var", R),
            ("null", N),
            ("interactive", N),
            ("no-run-if-empty", N),
            ("verbose", N),
            ("exit", N),
            ("show-limits", N),
            ("open-tty", N),
        ],
        strict: false,
    };
    let Some((_, k)) = leading(args, &OPTS) else {
        return unreadable();
    };
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
    const OPTS: Opts = Opts {
        short: &[('n', R), ('d', O), ('q', R)],
        long: &[
            ("interval", R),
            ("differences", O),
            ("equexit", R),
            ("exec", N),
            ("beep", N),
            ("color", N),
            ("no-color", N),
            ("chgexit", N),
            ("errexit", N),
            ("no-title", N),
            ("no-wrap", N),
            ("precise", N),
        ],
        strict: false,
    };
    let Some((parsed, k)) = leading(args, &OPTS) else {
        return Some(unreadable());
    };
    let rest = &args[k..];
    if rest.is_empty() {
        return None;
    }
    Some(if parsed.has(&["x", "exec"]) {
        plain(rest.to_vec(), false)
    } else {
        let mut w = plain(Vec::new(), false);
        w.script = Some(join(rest));
        w
    })
}

/// `env [-i0] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND [ARG]…]`.
fn env(args: &[Word]) -> Wrapped {
    const OPTS: Opts = Opts {
        short: &[('u', R), ('C', R), ('S', R), ('P', R)],
        long: &[
            ("ignore-environment", N),
            ("null", N),
            ("unset", R),
            ("chdir", R),
            ("split-string", R),
            ("debug", N),
            ("default-signal", O),
            ("ignore-signal", O),
            ("block-signal", O),
            ("list-signal-handling", N),
        ],
        strict: false,
    };
    let Some((parsed, mut k)) = leading(args, &OPTS) else {
        return unreadable();
    };
    let mut wrapped = plain(Vec::new(), true);
    // `-S STRING`: the string is split into words, and the operands follow them
    let script = parsed.args_of(&["S", "split-string"]).next().flatten();
    if let Some(script) = script {
        let split_word = args[..k].iter().find(|w| w.text.contains(script));
        let mut rest = vec![Word {
            text: script.to_string(),
            literal: split_word.is_none_or(|w| w.literal),
        }];
        rest.extend(args[k..].iter().cloned());
        wrapped.script = Some(join(&rest));
        return wrapped;
    }
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if !(w.literal && t.contains('=') && !t.starts_with('=')) {
            break;
        }
        wrapped.assignments.push(t.to_string());
        k += 1;
    }
    wrapped.words = args[k..].to_vec();
    wrapped
}
