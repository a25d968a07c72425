//! What each simple command does beyond its words: builtins that run strings as code, shells and
//! interpreters given code inline, wrappers that run another command, variables that change
//! what later commands run.

use super::wrappers::unwrap;
use super::{Analysis, SimpleCommand, Word};

/// Shells: `-c STRING` runs STRING; with neither `-c` nor a script file they read commands from
/// their input.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "yash", "posh", "rbash", "csh",
    "tcsh",
];

/// Assignments that change which program later commands run or what the shell executes.
const DANGEROUS_VARS: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "PS4",
    "PROMPT_COMMAND",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "LESSOPEN",
    "SSH_ASKPASS",
];

fn dangerous_var(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name)
        || ["LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// How many command lines given as strings (`bash -c`, `eval`) are read, at most.
const MAX_NESTED: usize = 16;

/// Classifies every command of `a`, including the ones this adds (wrapped and nested commands).
pub(super) fn classify(a: &mut Analysis, nested: &mut usize) {
    let mut i = 0;
    while i < a.commands.len() {
        let cmd = a.commands[i].clone();
        for assignment in &cmd.assignments {
            let name = assignment
                .split(['=', '+', '['])
                .next()
                .unwrap_or(assignment);
            if dangerous_var(name) {
                a.mark(format!(
                    "setting {name}, which changes what later commands run"
                ));
                a.commands[i].hidden_code = true;
            }
        }
        if !cmd.words.is_empty() {
            match cmd.name().map(str::to_string) {
                None => {
                    a.mark(format!(
                        "a command name that is itself an expansion (`{}`)",
                        cmd.words[0].text
                    ));
                    a.commands[i].hidden_code = true;
                }
                Some(name) => command(a, i, &name, &cmd.words[1..], nested),
            }
        }
        i += 1;
    }
}

/// Marks command `i` as running code pith cannot see.
fn hidden(a: &mut Analysis, i: usize, why: String) {
    a.mark(why);
    a.commands[i].hidden_code = true;
}

/// Reads `script` (a word given to `bash -c`, `eval` …) as a command line of its own, when its
/// value is known; otherwise command `i` runs hidden code.
fn nested_script(a: &mut Analysis, i: usize, script: &Word, what: &str, nested: &mut usize) {
    a.mark(format!(
        "{what}, which runs a command line given as a string"
    ));
    if !script.literal {
        a.commands[i].hidden_code = true;
        return;
    }
    if *nested >= MAX_NESTED {
        hidden(a, i, "command lines nested too deep to read".into());
        return;
    }
    *nested += 1;
    super::parse_into(&script.text, a);
}

fn command(a: &mut Analysis, i: usize, name: &str, args: &[Word], nested: &mut usize) {
    match name {
        "eval" => {
            let joined = join(args);
            nested_script(a, i, &joined, "`eval`", nested);
        }
        "source" | "." => hidden(a, i, format!("`{name}`, which runs a script in this shell")),
        "trap" => {
            if let Some(code) = args.iter().find(|w| !w.text.starts_with('-')) {
                let code = code.clone();
                nested_script(a, i, &code, "`trap`", nested);
            }
        }
        "alias" | "enable" | "fc" | "bind" | "let" => {
            hidden(a, i, format!("`{name}`, which can run commands indirectly"))
        }
        "hash" if has_flag(args, 'p') => hidden(a, i, "`hash -p`".into()),
        "complete" | "compgen" if has_flag(args, 'C') || has_flag(args, 'F') => {
            hidden(a, i, format!("`{name}` with a callback"))
        }
        "mapfile" | "readarray" if has_flag(args, 'C') => {
            hidden(a, i, format!("`{name}` with a callback"))
        }
        "declare" | "typeset" | "local" | "export" | "readonly" | "unset" | "read" | "mapfile"
        | "readarray" | "wait" | "getopts" => variable_names(a, i, name, args),
        "printf" => {
            if let Some(k) = args.iter().position(|w| w.literal && w.text == "-v")
                && let Some(target) = args.get(k + 1)
                && (!target.literal || target.text.contains('['))
            {
                hidden(a, i, "an array subscript in `printf -v`".into());
            }
        }
        _ if SHELLS.contains(&name) => shell(a, i, name, args, nested),
        _ if inline_code(name, args) => hidden(
            a,
            i,
            format!("`{name}` running code given on the command line or its input"),
        ),
        "awk" | "gawk" | "mawk" | "nawk" => awk(a, i, args),
        _ => {
            if let Some(wrapped) = unwrap(name, args) {
                if wrapped.unreadable {
                    hidden(a, i, format!("`{name}` with options pith cannot read"));
                    return;
                }
                a.commands[i].wrapper = wrapped.transparent;
                if let Some(script) = wrapped.script {
                    nested_script(a, i, &script, &format!("`{name}`"), nested);
                }
                if !wrapped.words.is_empty() {
                    a.commands.push(SimpleCommand {
                        assignments: wrapped.assignments,
                        words: wrapped.words,
                        hidden_code: false,
                        open_args: wrapped.open_args,
                        wrapper: false,
                    });
                }
                for extra in wrapped.more {
                    a.commands.push(SimpleCommand {
                        words: extra,
                        open_args: true,
                        ..SimpleCommand::default()
                    });
                }
            }
        }
    }
}

/// The words of `args` joined by spaces, literal when every one is.
pub(super) fn join(args: &[Word]) -> Word {
    Word {
        text: args
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        literal: args.iter().all(|w| w.literal),
    }
}

/// Whether a short option `-…X…` or a cluster holding it is among `args`.
fn has_flag(args: &[Word], flag: char) -> bool {
    args.iter().any(|w| {
        !w.literal
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(flag))
    })
}

/// Builtins that take variable names: a name with a subscript (`a[$(cmd)]`) or one computed at
/// run time is evaluated as arithmetic, which can run commands.
fn variable_names(a: &mut Analysis, i: usize, name: &str, args: &[Word]) {
    let assigns = matches!(
        name,
        "declare" | "typeset" | "local" | "export" | "readonly"
    );
    // Options whose value is not a variable name.
    let valued: &[&str] = match name {
        "read" => &["-p", "-d", "-n", "-N", "-t", "-u", "-i"],
        "mapfile" | "readarray" => &["-d", "-n", "-O", "-s", "-u", "-c"],
        _ => &[],
    };
    let mut k = 0;
    // `getopts OPTSTRING NAME`: the first operand is not a name.
    let mut skip_operand = name == "getopts";
    while k < args.len() {
        let w = &args[k];
        k += 1;
        if w.literal && w.text.starts_with('-') && w.text.len() > 1 {
            if valued.contains(&w.text.as_str()) {
                k += 1;
            }
            continue;
        }
        if std::mem::take(&mut skip_operand) {
            continue;
        }
        let var = w.text.split('=').next().unwrap_or(&w.text);
        let computed =
            !(w.literal || assigns && var != w.text) || var.contains(['$', '`', '"', '\'']);
        if computed {
            hidden(
                a,
                i,
                format!("`{name}` with a variable name computed at run time"),
            );
        } else if var.contains('[') {
            hidden(
                a,
                i,
                "an array subscript, which is evaluated as arithmetic".into(),
            );
        } else if assigns && var != w.text && dangerous_var(var) {
            hidden(
                a,
                i,
                format!("setting {var}, which changes what later commands run"),
            );
        }
    }
}

fn shell(a: &mut Analysis, i: usize, name: &str, args: &[Word], nested: &mut usize) {
    let mut has_c = false;
    let mut k = 0;
    while k < args.len() {
        let w = &args[k];
        if !w.literal {
            break;
        }
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            k += 1;
            break;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            k += 2;
            continue;
        }
        if t.starts_with("--") {
            k += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            has_c |= t[1..].contains('c');
            k += 1;
            continue;
        }
        break;
    }
    let what = format!("`{name} -c`");
    match (has_c, args.get(k)) {
        (true, Some(script)) => {
            let script = script.clone();
            nested_script(a, i, &script, &what, nested);
        }
        (true, None) => {}
        (false, Some(_)) => {} // a script file: known shape
        (false, None) => hidden(a, i, format!("`{name}` reading commands from its input")),
    }
}

/// Interpreters given their program inline (`python -c`, `perl -e`, `node -e` …) or reading it
/// from their input (`curl … | python3`).
fn inline_code(name: &str, args: &[Word]) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let flags: &[&str] = match base {
        "python" | "pypy" => &["c"],
        "perl" | "ruby" => &["e", "E"],
        "node" | "nodejs" => &["e", "p", "-eval", "-print"],
        "php" => &["r"],
        "lua" | "luajit" | "Rscript" | "osascript" => &["e"],
        "bun" => &["e", "-eval"],
        "deno" => return args.first().is_some_and(|w| w.text == "eval"),
        _ => return false,
    };
    for w in args {
        if !w.literal {
            return true;
        }
        let t = w.text.as_str();
        if let Some(long) = t.strip_prefix("--") {
            if flags.iter().any(|f| Some(long) == f.strip_prefix('-')) {
                return true;
            }
            continue;
        }
        if let Some(short) = t.strip_prefix('-') {
            if short.is_empty() {
                return true; // `-`: the program comes from the input
            }
            if base == "python" || base == "pypy" {
                // `-c` ends the options; `-m` runs a module.
                if short.starts_with('c') || short.contains('c') && !short.starts_with('W') {
                    return true;
                }
                if short.starts_with('m') {
                    return false;
                }
                continue;
            }
            if flags
                .iter()
                .filter(|f| f.len() == 1)
                .any(|f| short.contains(f))
            {
                return true;
            }
            continue;
        }
        // The first operand is the script file.
        return false;
    }
    // No script file: the program is read from the input.
    true
}

fn awk(a: &mut Analysis, i: usize, args: &[Word]) {
    let mut k = 0;
    while k < args.len() {
        let t = args[k].text.as_str();
        match t {
            "-f" | "--file" => return, // the program is in a file
            "-F" | "-v" | "--assign" | "--field-separator" | "-i" | "--include" => k += 2,
            _ if args[k].literal && t.starts_with('-') && t.len() > 1 => k += 1,
            _ => break,
        }
    }
    let Some(program) = args.get(k) else { return };
    if !program.literal {
        hidden(a, i, "an awk program computed at run time".into());
        return;
    }
    let p = program.text.as_str();
    let writes = p.match_indices('>').any(|(at, _)| {
        p[at + 1..]
            .trim_start_matches('>')
            .trim_start()
            .starts_with('"')
    });
    if p.contains("system") || p.contains('|') || p.contains("getline") || writes {
        hidden(
            a,
            i,
            "an awk program that runs commands or writes files".into(),
        );
    }
}
