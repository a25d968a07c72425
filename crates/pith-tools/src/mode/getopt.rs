//! Command-line options read the way `getopt_long` (and git's parse-options) read them, for the
//! plan-mode classifier: short flags combined (`-abc`), short options with their argument
//! attached (`-oFILE`, `-O'cmd'`) or in the next word, optional arguments only attached
//! (`-i[SUFFIX]`), long options with `=` or the next word, any unambiguous prefix of a long
//! option (`--out` is `--output`), and `--` ending the options. Options after operands count
//! too (GNU permutes them).

/// Whether an option takes an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    No,
    /// Attached, or else the next word.
    Required,
    /// Attached only (`-iSUF`, `--in-place=SUF`).
    Optional,
}

/// The options of one command.
pub(crate) struct Spec {
    /// Short options that take an argument, with how.
    pub short: &'static [(char, Arg)],
    /// Long options (without `--`), with how they take an argument.
    pub long: &'static [(&'static str, Arg)],
    /// Every option the command has is listed: an unknown one makes the line unreadable (the
    /// command would refuse it, but what it would take as its argument is unknown). When
    /// false, an unknown short option is a flag and an unknown long option takes nothing.
    pub strict: bool,
}

/// One option as the command would see it: its name (the short letter, or the whole long
/// name however abbreviated) and its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opt<'a> {
    pub name: String,
    pub arg: Option<&'a str>,
}

/// The options and operands of a command line.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    pub opts: Vec<Opt<'a>>,
    pub(crate) operands: Vec<&'a str>,
}

impl Parsed<'_> {
    /// Whether one of `names` was given (short letters as one-letter names).
    pub(crate) fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.name.as_str()))
    }

    /// The arguments given to the options `names`.
    pub(crate) fn args_of<'s>(
        &'s self,
        names: &'s [&str],
    ) -> impl Iterator<Item = Option<&'s str>> {
        self.opts
            .iter()
            .filter(move |o| names.contains(&o.name.as_str()))
            .map(|o| o.arg)
    }
}

/// Why a line cannot be read: an ambiguous or (for a strict spec) unknown option, or a
/// missing argument.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unreadable;

/// Reads `args` (the words after the command name) by `spec`.
pub(crate) fn parse<'a>(spec: &Spec, args: &[&'a str]) -> Result<Parsed<'a>, Unreadable> {
    parse_with(spec, args, false).map(|(parsed, _)| parsed)
}

/// Reads the options before the first operand, the way commands that run another command
/// read theirs (getopt's `+`: `env`, `sudo`, `timeout`, `xargs`): the options, and the index
/// of the first operand (past a `--`).
pub(crate) fn parse_leading<'a>(
    spec: &Spec,
    args: &[&'a str],
) -> Result<(Parsed<'a>, usize), Unreadable> {
    parse_with(spec, args, true)
}

fn parse_with<'a>(
    spec: &Spec,
    args: &[&'a str],
    leading: bool,
) -> Result<(Parsed<'a>, usize), Unreadable> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if a == "--" {
            if leading {
                return Ok((out, i));
            }
            out.operands.extend(&args[i..]);
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (written, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let (name, kind) = match resolve_long(spec, written)? {
                Some(found) => found,
                None => (written.to_string(), Arg::No),
            };
            let arg = match (kind, attached) {
                (Arg::Required, None) => {
                    let next = args.get(i).copied().ok_or(Unreadable)?;
                    i += 1;
                    Some(next)
                }
                (Arg::No, Some(_)) if spec.strict => return Err(Unreadable),
                (_, attached) => attached,
            };
            out.opts.push(Opt { name, arg });
        } else if a.len() > 1 && a.starts_with('-') {
            i = short_cluster(spec, a, args, i, &mut out)?;
        } else if leading {
            return Ok((out, i - 1));
        } else {
            out.operands.push(a);
        }
    }
    let end = args.len();
    Ok((out, end))
}

/// Reads one `-abc` word (and the next word when its last option wants an argument); returns
/// where reading goes on.
fn short_cluster<'a>(
    spec: &Spec,
    word: &'a str,
    args: &[&'a str],
    mut next: usize,
    out: &mut Parsed<'a>,
) -> Result<usize, Unreadable> {
    for (at, c) in word.char_indices().skip(1) {
        let kind = match spec.short.iter().find(|(s, _)| *s == c) {
            Some((_, kind)) => *kind,
            None if spec.strict => return Err(Unreadable),
            None => Arg::No,
        };
        let rest = &word[at + c.len_utf8()..];
        let name = c.to_string();
        match kind {
            Arg::No => out.opts.push(Opt { name, arg: None }),
            Arg::Optional => {
                let arg = (!rest.is_empty()).then_some(rest);
                out.opts.push(Opt { name, arg });
                return Ok(next);
            }
            Arg::Required => {
                let arg = if rest.is_empty() {
                    let word = args.get(next).copied().ok_or(Unreadable)?;
                    next += 1;
                    word
                } else {
                    rest
                };
                out.opts.push(Opt {
                    name,
                    arg: Some(arg),
                });
                return Ok(next);
            }
        }
    }
    Ok(next)
}

/// The long option `written` names: itself, or the one option it is a prefix of. Several
/// candidates (and none known, for a strict spec) make the line unreadable; an unknown
/// option of a lax spec is `None`.
fn resolve_long(spec: &Spec, written: &str) -> Result<Option<(String, Arg)>, Unreadable> {
    if let Some((name, kind)) = spec.long.iter().find(|(n, _)| *n == written) {
        return Ok(Some((name.to_string(), *kind)));
    }
    let mut candidates = spec
        .long
        .iter()
        .filter(|(n, _)| !written.is_empty() && n.starts_with(written));
    match (candidates.next(), candidates.next()) {
        (Some((name, kind)), None) => Ok(Some((name.to_string(), *kind))),
        (Some(_), Some(_)) => Err(Unreadable),
        (None, _) if spec.strict => Err(Unreadable),
        (None, _) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        short: &[
            ('o', Arg::Required),
            ('i', Arg::Optional),
            ('k', Arg::Required),
        ],
        long: &[
            ("output", Arg::Required),
            ("in-place", Arg::Optional),
            ("ignore-case", Arg::No),
            ("unique", Arg::No),
        ],
        strict: false,
    };

    fn opts(args: &[&str]) -> Vec<(String, Option<String>)> {
        parse(&SPEC, args)
            .unwrap()
            .opts
            .into_iter()
            .map(|o| (o.name, o.arg.map(str::to_string)))
            .collect()
    }

    fn o(name: &str, arg: Option<&str>) -> (String, Option<String>) {
        (name.to_string(), arg.map(str::to_string))
    }

    #[test]
    fn short_options_combine_and_take_attached_or_next_arguments() {
        assert_eq!(opts(&["-uo", "F"]), [o("u", None), o("o", Some("F"))]);
        assert_eq!(opts(&["-uoF", "x"]), [o("u", None), o("o", Some("F"))]);
        assert_eq!(opts(&["-ni", "q"]), [o("n", None), o("i", None)]);
        assert_eq!(opts(&["-in", "p"]), [o("i", Some("n"))]);
        // the argument of -k is not an option
        assert_eq!(opts(&["-k", "-o"]), [o("k", Some("-o"))]);
        assert!(parse(&SPEC, &["-o"]).is_err(), "a missing argument");
    }

    #[test]
    fn long_options_take_equals_or_the_next_word_and_any_unambiguous_prefix() {
        assert_eq!(opts(&["--out=F"]), [o("output", Some("F"))]);
        assert_eq!(opts(&["--o", "F"]), [o("output", Some("F"))]);
        assert_eq!(opts(&["--in-place"]), [o("in-place", None)]);
        assert_eq!(opts(&["--in"]), [o("in-place", None)]);
        assert_eq!(opts(&["--uniq"]), [o("unique", None)]);
        assert!(
            parse(&SPEC, &["--i"]).is_err(),
            "ambiguous: in-place, ignore-case"
        );
        assert_eq!(opts(&["--whatever"]), [o("whatever", None)]);
        let strict = Spec {
            strict: true,
            ..SPEC
        };
        assert!(parse(&strict, &["--whatever"]).is_err());
        assert!(parse(&strict, &["-z"]).is_err());
    }

    #[test]
    fn operands_anywhere_and_a_double_dash_ends_the_options() {
        let p = parse(&SPEC, &["a", "-o", "F", "b", "--", "-o", "c"]).unwrap();
        assert_eq!(p.operands, ["a", "b", "-o", "c"]);
        assert_eq!(p.opts.len(), 1);
        assert_eq!(parse(&SPEC, &["-"]).unwrap().operands, ["-"]);
    }
}
