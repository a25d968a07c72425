//! Plan mode's first line: which commands only read. A known reader passes unless an option
//! that writes or runs something is given, and options are read as the command reads them
//! (`getopt.rs`: `sed -ni`, `sort -uo F`, `sort --out=F`, `git grep -O'cmd'` are all seen).
//! The sandbox is the defence behind it; this keeps plan mode from even trying.

use super::getopt::{self, Arg, Spec};
use crate::bash_parse;

/// Commands that only read and print, when given no argument that writes (see
/// [`command_reads_only`]).
const READING_COMMANDS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "egrep", "fgrep", "find", "git", "pwd",
    "echo", "printf", "tree", "stat", "file", "which", "whereis", "type", "du", "df", "sort",
    "uniq", "cut", "tr", "diff", "cmp", "basename", "dirname", "realpath", "readlink", "date",
    "true", "false", "test", "[", "nl", "column", "jq", "sed", "less", "more", "id", "uname",
    "whoami", "hostname", "env", "printenv",
];

/// `git` subcommands that only read.
const READING_GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "ls-files",
    "ls-tree",
    "rev-parse",
    "describe",
    "grep",
    "shortlog",
    "reflog",
    "cat-file",
    "branch",
    "tag",
    "remote",
];

/// GNU sed, every option: what an unknown one would take as its argument could be the script.
const SED: Spec = Spec {
    short: &[
        ('n', Arg::No),
        ('s', Arg::No),
        ('E', Arg::No),
        ('r', Arg::No),
        ('u', Arg::No),
        ('z', Arg::No),
        ('b', Arg::No),
        ('e', Arg::Required),
        ('f', Arg::Required),
        ('l', Arg::Required),
        ('i', Arg::Optional),
    ],
    long: &[
        ("quiet", Arg::No),
        ("silent", Arg::No),
        ("debug", Arg::No),
        ("expression", Arg::Required),
        ("file", Arg::Required),
        ("follow-symlinks", Arg::No),
        ("in-place", Arg::Optional),
        ("line-length", Arg::Required),
        ("null-data", Arg::No),
        ("zero-terminated", Arg::No),
        ("posix", Arg::No),
        ("regexp-extended", Arg::No),
        ("separate", Arg::No),
        ("sandbox", Arg::No),
        ("unbuffered", Arg::No),
        ("binary", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    strict: true,
};

/// GNU sort: `-o`/`--output` writes, `--compress-program` runs a program.
const SORT: Spec = Spec {
    short: &[
        ('k', Arg::Required),
        ('t', Arg::Required),
        ('o', Arg::Required),
        ('T', Arg::Required),
        ('S', Arg::Required),
    ],
    long: &[
        ("output", Arg::Required),
        ("compress-program", Arg::Required),
        ("key", Arg::Required),
        ("field-separator", Arg::Required),
        ("temporary-directory", Arg::Required),
        ("buffer-size", Arg::Required),
        ("files0-from", Arg::Required),
        ("random-source", Arg::Required),
        ("batch-size", Arg::Required),
        ("parallel", Arg::Required),
        ("sort", Arg::Required),
        ("check", Arg::Optional),
        ("debug", Arg::No),
        ("unique", Arg::No),
        ("reverse", Arg::No),
        ("numeric-sort", Arg::No),
        ("general-numeric-sort", Arg::No),
        ("human-numeric-sort", Arg::No),
        ("month-sort", Arg::No),
        ("random-sort", Arg::No),
        ("version-sort", Arg::No),
        ("ignore-case", Arg::No),
        ("ignore-leading-blanks", Arg::No),
        ("dictionary-order", Arg::No),
        ("ignore-nonprinting", Arg::No),
        ("merge", Arg::No),
        ("stable", Arg::No),
        ("zero-terminated", Arg::No),
    ],
    strict: false,
};

/// `git grep`: `-O`/`--open-files-in-pager` runs a program on the matching files.
const GIT_GREP: Spec = Spec {
    short: &[
        ('e', Arg::Required),
        ('f', Arg::Required),
        ('A', Arg::Required),
        ('B', Arg::Required),
        ('C', Arg::Required),
        ('m', Arg::Required),
        ('O', Arg::Optional),
    ],
    long: &[
        ("open-files-in-pager", Arg::Optional),
        ("max-depth", Arg::Required),
        ("threads", Arg::Required),
        ("context", Arg::Required),
        ("after-context", Arg::Required),
        ("before-context", Arg::Required),
        ("max-count", Arg::Required),
        ("or", Arg::No),
        ("and", Arg::No),
        ("not", Arg::No),
        ("only-matching", Arg::No),
        ("line-number", Arg::No),
        ("ignore-case", Arg::No),
    ],
    strict: false,
};

/// GNU date: `-s`/`--set` sets the clock.
const DATE: Spec = Spec {
    short: &[
        ('d', Arg::Required),
        ('f', Arg::Required),
        ('r', Arg::Required),
        ('s', Arg::Required),
        ('I', Arg::Optional),
    ],
    long: &[
        ("date", Arg::Required),
        ("file", Arg::Required),
        ("reference", Arg::Required),
        ("set", Arg::Required),
        ("iso-8601", Arg::Optional),
        ("rfc-3339", Arg::Required),
        ("rfc-email", Arg::No),
        ("universal", Arg::No),
        ("utc", Arg::No),
        ("debug", Arg::No),
        ("resolution", Arg::No),
    ],
    strict: false,
};

/// GNU uniq: a second operand is the file it writes.
const UNIQ: Spec = Spec {
    short: &[
        ('f', Arg::Required),
        ('s', Arg::Required),
        ('w', Arg::Required),
    ],
    long: &[
        ("skip-fields", Arg::Required),
        ("skip-chars", Arg::Required),
        ("check-chars", Arg::Required),
        ("all-repeated", Arg::Optional),
        ("group", Arg::Optional),
    ],
    strict: false,
};

/// file(1): `-C`/`--compile` writes a compiled magic file.
const FILE: Spec = Spec {
    short: &[
        ('e', Arg::Required),
        ('F', Arg::Required),
        ('f', Arg::Required),
        ('m', Arg::Required),
        ('P', Arg::Required),
    ],
    long: &[
        ("compile", Arg::No),
        ("exclude", Arg::Required),
        ("exclude-quiet", Arg::Required),
        ("separator", Arg::Required),
        ("files-from", Arg::Required),
        ("magic-file", Arg::Required),
        ("parameter", Arg::Required),
    ],
    strict: false,
};

/// less: `-o`/`-O`/`--log-file` copy the input to a file.
const LESS: Spec = Spec {
    short: &[('o', Arg::Required), ('O', Arg::Required)],
    long: &[("log-file", Arg::Required), ("LOG-FILE", Arg::Required)],
    strict: false,
};

/// Whether `spec` reads `args` with none of the options `writing`.
fn without(spec: &Spec, args: &[&str], writing: &[&str]) -> bool {
    getopt::parse(spec, args).is_ok_and(|p| !p.has(writing))
}

pub(super) fn command_reads_only(c: &bash_parse::SimpleCommand) -> bool {
    if c.hidden_code || c.open_args || !c.assignments.is_empty() {
        return false;
    }
    let Some(name) = c.name() else {
        return false;
    };
    if !READING_COMMANDS.contains(&name) {
        return false;
    }
    let args: Vec<&str> = c.words[1..].iter().map(|w| w.text.as_str()).collect();
    let flag = |f: &str| {
        args.iter()
            .any(|a| *a == f || a.starts_with(&format!("{f}=")))
    };
    match name {
        "git" => git_reads_only(&args),
        "find" => !args.iter().any(|a| {
            matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete")
                || a.starts_with("-fprint")
                || *a == "-fls"
        }),
        "sed" => sed_reads_only(&args),
        "sort" => without(&SORT, &args, &["o", "output", "compress-program"]),
        // `uniq IN OUT` writes OUT
        "uniq" => getopt::parse(&UNIQ, &args).is_ok_and(|p| p.operands.len() <= 1),
        // `-o FILE` writes the listing, `-R` (with `-H`) an HTML page in every folder; tree
        // combines its flags too
        "tree" => !args
            .iter()
            .any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains(['o', 'R'])),
        "date" => without(&DATE, &args, &["s", "set"]),
        // `--pre CMD` runs a command on every file
        "rg" => !flag("--pre"),
        "file" => without(&FILE, &args, &["C", "compile"]),
        "less" | "more" => {
            !args.iter().any(|a| a.starts_with('+'))
                && without(&LESS, &args, &["o", "O", "log-file", "LOG-FILE"])
        }
        "hostname" => args.is_empty(),
        _ => true,
    }
}

/// Long options of git's reading subcommands that write a file or run a program, in full:
/// any prefix of one is refused too (git takes abbreviations), but for `--text`.
const GIT_WRITING_LONG: &[&str] = &["output", "ext-diff", "textconv", "open-files-in-pager"];

/// `git branch` options that change a branch or the configuration rather than list.
const GIT_BRANCH_CHANGING: &[&str] = &[
    "set-upstream-to",
    "unset-upstream",
    "edit-description",
    "delete",
    "move",
    "copy",
    "force",
    "create-reflog",
    "track",
    "no-track",
];

/// A `git` line that only reads: no option that runs a program or sets configuration (`-c
/// core.fsmonitor=…` runs one), a reading subcommand, and for the subcommands that can also
/// change refs (`branch`, `tag`, `remote`, `reflog`) only their listing forms.
fn git_reads_only(args: &[&str]) -> bool {
    let Some(at) = args.iter().position(|a| !a.starts_with('-')) else {
        return false;
    };
    let (global, sub, rest) = (&args[..at], args[at], &args[at + 1..]);
    if !global.is_empty() || !READING_GIT.contains(&sub) {
        return false; // `-c`, `--exec-path`, `-C dir` … before the subcommand
    }
    let listing = || rest.iter().all(|a| a.starts_with('-'));
    let options = || rest.iter().take_while(|a| **a != "--");
    let long_prefix_of = |names: &[&str]| {
        options().any(|a| {
            let Some(long) = a.strip_prefix("--") else {
                return false;
            };
            let written = long.split('=').next().unwrap_or(long);
            !written.is_empty() && written != "text" && names.iter().any(|n| n.starts_with(written))
        })
    };
    let short_in = |letters: &[char]| {
        options().any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains(letters))
    };
    let blocked = rest.iter().any(|a| {
        matches!(
            *a,
            "-d" | "-D" | "-m" | "-M" | "-c" | "-C" | "--delete" | "--move" | "--copy"
        )
    }) || long_prefix_of(GIT_WRITING_LONG);
    !blocked
        && match sub {
            "branch" => {
                listing()
                    && !long_prefix_of(GIT_BRANCH_CHANGING)
                    && !short_in(&['d', 'D', 'm', 'M', 'c', 'C', 'u', 'f', 't'])
            }
            "tag" | "remote" => listing() && !short_in(&['d', 'D', 'f']),
            "grep" => without(&GIT_GREP, rest, &["O", "open-files-in-pager"]),
            "reflog" => !rest
                .iter()
                .find(|a| !a.starts_with('-'))
                .is_some_and(|a| matches!(*a, "expire" | "delete" | "drop")),
            _ => true,
        }
}

/// A `sed` line that only prints: no in-place flag and no script file, and every script (`-e
/// S`, `--expression=S`, or else the first operand) made of line addresses and `p` / `=` / `q`
/// only — `w FILE` writes, `e CMD` runs one. Options are read as sed reads them (`-ni` is `-n
/// -i`, `-in` is `-i` with the suffix `n`); an option sed does not have makes the line unread.
fn sed_reads_only(args: &[&str]) -> bool {
    let Ok(parsed) = getopt::parse(&SED, args) else {
        return false;
    };
    if parsed.has(&["i", "in-place", "f", "file"]) {
        return false;
    }
    let mut scripts: Vec<&str> = parsed
        .args_of(&["e", "expression"])
        .map(Option::unwrap_or_default)
        .collect();
    if scripts.is_empty() {
        scripts.extend(parsed.operands.first());
    }
    !scripts.is_empty()
        && scripts.iter().all(|s| {
            s.split(';').all(|cmd| {
                let cmd = cmd.trim();
                let body = cmd.trim_start_matches(|c: char| {
                    c.is_ascii_digit() || matches!(c, ',' | '$' | '~' | '+')
                });
                matches!(body, "p" | "=" | "q" | "")
            })
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn reads(cmd: &str) -> bool {
        super::super::reads_only("bash", &json!({ "command": cmd }))
    }

    /// Options are read as getopt reads them (issue 37): combined flags, attached arguments,
    /// abbreviated long options, `-e`/`--expression`. Each of these wrote or ran something.
    #[test]
    fn writing_options_are_seen_however_they_are_spelt() {
        for cmd in [
            "sed -ni q f",
            "sed -in p f",
            "sed -n -i.bak 1p f",
            "sed --in-pl 1p f",
            "sed --expression='w F' p",
            "sed --expression 'w F' f",
            "sed --expr='w F' f",
            "sed -e 'w F'",
            "sed -n -e 1p -e 'w F' f",
            "sed -ne 'w F' f",
            "sed -f script.sed f",
            "sed -nf script.sed f",
            "sed -l 5 'w F' f",
            "sed --no-such-option 1p f",
            "sort --out=F in",
            "sort --o F in",
            "sort --output F in",
            "sort -uo F in",
            "sort -uoF in",
            "sort -r in -o F",
            "sort --compress-program=sh in",
            "sort --compress=sh in",
            "git grep -O'touch x' foo",
            "git grep -Ocmd foo",
            "git grep -iO foo",
            "git grep --open-files-in-pager=cmd foo",
            "git grep --open foo",
            "git log --out=F",
            "git diff --outp F",
            "git diff --ext",
            "git branch --set-upstream-to=origin/main",
            "git branch --unset-upstream",
            "git branch -uorigin/main",
            "git branch --edit-description",
            "tree -ao listing.txt",
            "tree -R -H . -L 1",
            "date -us 2020-01-01",
            "date --se=2020-01-01",
            "uniq -c in out",
            "file -bC -m magic",
            "file --comp -m magic",
            "less -o log.txt f",
            "less --log-file=log.txt f",
            "env -S 'touch x' cat",
            "timeout 5 sed -ni q f",
            "env sort -uo F in",
            // red-team finding 6: env's options the getopt way
            "env -iS'touch x' cat",
            "env --split='touch x' cat",
            "env --s='touch x' true",
            "env -iu HOME touch x",
            "nice --adj 5 touch x",
        ] {
            assert!(!reads(cmd), "{cmd}");
        }
    }

    #[test]
    fn the_reading_forms_stay_allowed() {
        for cmd in [
            "sed -n 1,10p f",
            "sed -n '$p' f",
            "sed -ne 1p f",
            "sed -n -e 1p -e 5p f",
            "sed --quiet --expression=3p f",
            "sed -E -n 2p f",
            "sed -n 1p -- f",
            "sort -u f",
            "sort -t , -k 2 f",
            "sort -k2,2n -t: f",
            "sort -rn f",
            "sort --numeric-sort --reverse f",
            "git grep foo",
            "git grep -n -i foo -- src",
            "git grep -A 3 -e foo",
            "git grep --or -e a -e b",
            "git log --oneline -5",
            "git diff --text",
            "git diff --no-ext-diff",
            "git branch -a -v",
            "git tag -l",
            "tree -L 2 src",
            "date +%F",
            "date -d yesterday",
            "date -u",
            "uniq -c sorted.txt",
            "uniq -f 1 sorted.txt",
            "file -b README.md",
            "less -N f",
        ] {
            assert!(reads(cmd), "{cmd}");
        }
    }
}
