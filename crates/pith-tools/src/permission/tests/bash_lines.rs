//! The bash part of the permission check: opaque lines, `--yes`, deny rules by shape,
//! redirections, running outside the sandbox.

use serde_json::json;

use super::*;

fn bash(p: &mut Permissions, command: &str, ctx: &ToolContext) -> Decision {
    p.check("bash", &json!({ "command": command }), ctx)
}

#[test]
fn opaque_lines_ask_even_when_every_command_is_allowed() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules("[permission]\nbash = \"allow\""));
    assert!(is_allow(&bash(&mut p, "cargo test 2>&1 | tail -5", ctx)));
    for line in [
        "echo $(date)",
        "git status ${x@P}",
        "eval \"$cmd\"",
        "bash -c 'ls'",
        "x=ls; $x",
        "python3 -c 'print(1)'",
        "f() { ls; }; f",
    ] {
        let r = ask(bash(&mut p, line, ctx));
        assert!(
            r.title.contains("asks because it uses"),
            "{line}: {}",
            r.title
        );
        // No deny rule exists: --yes may approve it.
        assert_eq!(p.yes_refusal(&r, false), None, "{line}");
        assert!(p.headless_reason(&r).is_some(), "{line}");
    }
}

#[test]
fn yes_does_not_approve_what_a_deny_rule_could_match() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.bash]\n\"*\" = \"allow\"\n\"rm -rf*\" = \"deny\"\n",
    ));
    for line in [
        "eval \"$cmd\"",
        "x=rm; $x -rf victim",
        "git status ${x@P}",
        "rm $flags victim",
        "git ls-files | xargs rm",
        "python3 -c 'import shutil'",
        "echo ${z[y]}",
        "rm${IFS}-rf${IFS}victim",
    ] {
        let r = ask(bash(&mut p, line, ctx));
        let refusal = p
            .yes_refusal(&r, false)
            .unwrap_or_else(|| panic!("{line}: --yes approved it"));
        assert!(refusal.contains("rm -rf*"), "{refusal}");
    }
    // What the rules can read in full is approved by --yes as before.
    let r = ask(bash(&mut p, "echo $(date)", ctx));
    assert_eq!(p.yes_refusal(&r, false), None);
}

#[test]
fn deny_rules_match_by_shape() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.bash]\n\"*\" = \"allow\"\n\"rm -rf*\" = \"deny\"\n\"git push --force*\" = \"deny\"\n",
    ));
    for line in [
        "rm -rf x",
        "rm -fr x",
        "rm -r -f x",
        "rm -Rf x",
        "rm --recursive --force x",
        "rm -v -rf x",
        "/bin/rm -rf x",
        "\\rm -rf x",
        "'rm' -rf x",
        "r\"m\" -rf x",
        "$'\\x72m' -rf x",
        "command rm -rf x",
        "env -i FOO=1 rm -rf x",
        "FOO=1 rm -rf x",
        "sudo -u root rm -rf x",
        "timeout 5 nice -n 3 rm -rf x",
        "exec rm -rf x",
        "nohup rm -rf x &",
        "time rm -rf x",
        "builtin command rm -rf x",
        "git ls-files | xargs -I{} rm -rf {}",
        "find . -exec rm -rf {} +",
        "ls; rm -rf x",
        "if true; then rm -rf x; fi",
        "bash -c 'rm -rf x'",
        "sh -lc \"cd /; rm -rf x\"",
        "git push --force",
        "git push -f origin main",
        "git -C repo push --force",
        // red-team finding 6: env's options read the way getopt reads them
        "env --split='rm -rf src' cat",
        "env -iS'git push --force' cat",
        "env --s='rm -rf x' true",
        "env -iu HOME rm -rf x",
        "timeout --kill 1 5 rm -rf x",
        "sudo -nu root rm -rf x",
    ] {
        let msg = deny(bash(&mut p, line, ctx));
        assert!(msg.contains("Permission denied"), "{line}: {msg}");
    }
    for line in [
        "rmdir x",
        "echo rm -rf x",
        "rm x",
        "rm -r x",
        "git push",
        "grep -rf pats",
    ] {
        assert!(
            !matches!(bash(&mut p, line, ctx), Decision::Deny { .. }),
            "{line} was denied"
        );
    }
}

#[test]
fn redirections_are_checked_like_write_and_read() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.bash]\n\"git status*\" = \"allow\"\n\"echo*\" = \"allow\"\n\"cat*\" = \"allow\"\n",
    ));
    assert!(is_allow(&bash(&mut p, "git status 2>&1 >/dev/null", ctx)));
    let r = ask(bash(&mut p, "git status > f.txt", ctx));
    assert_eq!(r.patterns, ["f.txt"]);
    assert!(!ws.path("f.txt").exists());
    ask(bash(&mut p, "cat < .env", ctx));
    let outside = ws.root().join("outside.txt");
    let r = ask(bash(
        &mut p,
        &format!("echo hi >> {}", outside.display()),
        ctx,
    ));
    assert!(
        r.patterns.iter().any(|g| g.ends_with("/*")),
        "{:?}",
        r.patterns
    );

    let mut p = Permissions::new(&rules(
        "[permission]\nbash = \"allow\"\nwrite = \"allow\"\nexternal_directory = \"deny\"\n",
    ));
    assert!(is_allow(&bash(&mut p, "echo hi > notes.txt", ctx)));
    ask(bash(&mut p, "echo KEY=1 > .env", ctx));
    let msg = deny(bash(
        &mut p,
        &format!("echo hi > {}", outside.display()),
        ctx,
    ));
    assert!(msg.contains(EXTERNAL_DIRECTORY), "{msg}");
}

#[test]
fn running_outside_the_sandbox_asks_once_more() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules("[permission]\nbash = \"allow\""));
    let input = json!({"command": "cargo fetch", "unsandboxed": true});
    let r = ask(p.check("bash", &input, ctx));
    assert!(r.title.contains("outside the sandbox"), "{}", r.title);
    assert_eq!(r.patterns, ["cargo fetch*"]);
    // `--yes` never approves leaving the sandbox; `--allow-unsandboxed` does.
    let refusal = p
        .yes_refusal(&r, false)
        .expect("--yes approved leaving the sandbox");
    assert!(refusal.contains("--allow-unsandboxed"), "{refusal}");
    assert_eq!(p.yes_refusal(&r, true), None);
    let sandboxed = ask(p.check("bash", &json!({"command": "ls $(pwd)"}), ctx));
    assert_eq!(p.yes_refusal(&sandboxed, false), None);
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check("bash", &input, ctx)));
    let mut p = Permissions::new(&rules(
        "[permission]\nbash = \"allow\"\nunsandboxed = \"allow\"",
    ));
    assert!(is_allow(&p.check("bash", &input, ctx)));
}

/// Ways of writing a line that runs (or could run) `rm -rf` under the rules of
/// [`no_spelling_of_a_denied_command_gets_through_even_with_yes`]: separators, flag spellings,
/// paths and quotes on the name, wrappers, expansions, interpreters, compound commands.
const RM_RF_SPELLINGS: &[&str] = &[
    "git status; rm -rf v",
    "git status && rm -rf v",
    "git status || rm -rf v",
    "git status | rm -rf v",
    "git status & rm -rf v",
    "git status\nrm -rf v",
    "git status # x\nrm -rf v",
    "rm -rf v",
    "rm -fr v",
    "rm -r -f v",
    "rm -R -f v",
    "rm --force --recursive v",
    "rm -rfv v",
    "rm -vrf v",
    "/bin/rm -rf v",
    "/usr/bin/rm -rf v",
    "./rm -rf v",
    "\\rm -rf v",
    "'rm' -rf v",
    "\"rm\" -rf v",
    "r''m -rf v",
    "command rm -rf v",
    "builtin rm -rf v",
    "exec rm -rf v",
    "env rm -rf v",
    "env -i rm -rf v",
    "/usr/bin/env rm -rf v",
    "sudo rm -rf v",
    "nice rm -rf v",
    "nohup rm -rf v",
    "timeout 1 rm -rf v",
    "time rm -rf v",
    "stdbuf -o0 rm -rf v",
    "xargs rm -rf <<< v",
    "echo v | xargs rm -rf",
    "find . -exec rm -rf {} \\;",
    "find . -execdir rm -rf {} +",
    "x=rm; $x -rf v",
    "${x:-rm} -rf v",
    "$(echo rm) -rf v",
    "`echo rm` -rf v",
    "r${x}m -rf v",
    "eval rm -rf v",
    "eval 'rm -rf v'",
    "bash -c 'rm -rf v'",
    "sh -c \"rm -rf v\"",
    "bash -lc 'rm -rf v'",
    "echo 'rm -rf v' | bash",
    "bash <<< 'rm -rf v'",
    "bash <<EOF\nrm -rf v\nEOF",
    "python3 -c 'import shutil'",
    "perl -e 'system(\"rm -rf v\")'",
    "awk 'BEGIN{system(\"rm -rf v\")}'",
    "f(){ rm -rf v; }; f",
    "alias x='rm -rf v'",
    "trap 'rm -rf v' EXIT",
    "source x.sh",
    ". x.sh",
    "watch rm -rf v",
    "flock /tmp/l rm -rf v",
    "flock /tmp/l -c 'rm -rf v'",
    "busybox rm -rf v",
    "git status ${x=\\$(rm -rf v)} ${x@P}",
    "git status $(rm -rf v)",
    "git status `rm -rf v`",
    "git status <(rm -rf v)",
    "git status > >(rm -rf v)",
    "git status ${y:=a[\\$(rm -rf v)]} ${z[y]}",
    "rm -rf ${HOME}",
    "rm -r$x v",
    "rm $(echo -rf) v",
    "rm \\-rf v",
    "rm $'-rf' v",
    "command -p rm -rf v",
    "sudo -u x -- rm -rf v",
    "doas rm -rf v",
    "env -S 'rm -rf v'",
    "coproc rm -rf v",
    "{ rm -rf v; }",
    "(rm -rf v)",
    "if rm -rf v; then :; fi",
    "while rm -rf v; do :; done",
    "case x in x) rm -rf v;; esac",
    "for i in 1; do rm -rf v; done",
    "! rm -rf v",
    "rm -rf v 2>/dev/null",
    "git status;rm -rf v",
    "declare -x PATH=/tmp; git status",
    "PATH=/tmp git status",
    "IFS=/ git status",
];

#[test]
fn no_spelling_of_a_denied_command_gets_through_even_with_yes() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.bash]\n\"git status*\" = \"allow\"\n\"rm -rf*\" = \"deny\"\n",
    ));
    for &line in RM_RF_SPELLINGS {
        let d = p.check("bash", &json!({"command": line}), ctx);
        let stopped = match &d {
            Decision::Deny { .. } => true,
            Decision::Ask(r) => p.yes_refusal(r, false).is_some(),
            Decision::Allow => false,
        };
        assert!(stopped, "{line:?} could run rm -rf under --yes: {d:?}");
    }
    // Other commands are the rules' business: they ask, and --yes may approve them.
    for line in ["rm -- -rf v", "unlink v", "rmdir v", "git clean -fdx"] {
        let r = ask(p.check("bash", &json!({"command": line}), ctx));
        assert_eq!(p.yes_refusal(&r, false), None, "{line}");
    }
}

/// A command asked about with `background: true` says it keeps running after the call; the
/// same command in the foreground does not.
#[test]
fn the_question_says_a_command_runs_in_the_background() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    let input = json!({ "command": "npm run dev", "background": true });
    let r = ask(p.check("bash", &input, ctx));
    assert!(r.title.starts_with("npm run dev\n"), "{}", r.title);
    assert!(r.title.contains("in the background"), "{}", r.title);
    let r = ask(bash(&mut p, "npm run dev", ctx));
    assert!(!r.title.contains("background"), "{}", r.title);
}
