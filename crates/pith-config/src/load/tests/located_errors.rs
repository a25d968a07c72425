//! What is wrong in a file is one line naming the file, line and column.

use super::*;

#[test]
fn syntax_error_names_file_line_and_column() {
    let f = Fixture::new().workspace("model = \"openai/gpt-4.1\"\n\n[compaction\nauto = true\n");
    let e = err_of(&f);
    let prefix = format!("{}:3:12: ", f.workspace_path().display());
    assert!(e.starts_with(&prefix), "{e}");

    let f = Fixture::new().workspace("max_steps = = 3\n");
    let e = err_of(&f);
    assert!(
        e.starts_with(&format!("{}:1:", f.workspace_path().display())),
        "{e}"
    );
}

#[test]
fn unknown_key_names_file_line_and_column() {
    let f =
        Fixture::new().workspace("model = \"openai/gpt-4.1\"\n\n[compaction]\n  autoo = true\n");
    let e = err_of(&f);
    let prefix = format!(
        "{}:4:3: unknown field `autoo`, expected one of",
        f.workspace_path().display()
    );
    assert!(e.starts_with(&prefix), "{e}");

    let f = Fixture::new().global("modle = \"openai/gpt-4.1\"\n");
    let e = err_of(&f);
    assert!(
        e.starts_with(&format!(
            "{}:1:1: unknown field `modle`",
            f.global_path().display()
        )),
        "{e}"
    );

    let f = Fixture::new().workspace(
        "[provider.box]\nkind = \"openai\"\nbase_url = \"http://x/v1\"\napi_key = \"k\"\n",
    );
    let e = err_of(&f);
    assert!(
        e.starts_with(&format!(
            "{}:4:1: unknown field `api_key`",
            f.workspace_path().display()
        )),
        "{e}"
    );
}

#[test]
fn limits_timeouts_and_permissions_are_checked_with_their_place() {
    let cases = [
        (
            "[models.\"p/m\"]\ncontext = 8000\noutput = 8000\n",
            "3:10: models.\"p/m\".output (8000) must be less than its context (8000)",
        ),
        (
            "[models.\"p/m\"]\ncontext = 8000\ninput = 9000\n",
            "3:9: models.\"p/m\".input (9000) must not be more than its context (8000)",
        ),
        (
            "[provider.openai]\ntimeout_secs = 0\n",
            "2:16: provider.openai.timeout_secs must be between 1 and 3600, got 0",
        ),
        (
            "[provider.openai]\nfirst_byte_timeout_secs = 0\n",
            "2:27: provider.openai.first_byte_timeout_secs must be between 1 and 3600, got 0",
        ),
        (
            "[provider.openai]\nidle_timeout_secs = 99999\n",
            "2:21: provider.openai.idle_timeout_secs must be between 1 and 3600, got 99999",
        ),
        (
            "[provider.openai]\nconnect_timeout_secs = 0\n",
            "2:24: provider.openai.connect_timeout_secs must be between 1 and 3600, got 0",
        ),
        (
            "[provider.openai]\nmax_retry_wait_secs = 0\n",
            "2:23: provider.openai.max_retry_wait_secs must be between 1 and 3600, got 0",
        ),
        (
            "[provider.openai]\nmax_retries = 500\n",
            "2:15: provider.openai.max_retries must be between 0 and 20, got 500",
        ),
        (
            "[permission]\nbash = \"yes\"\n",
            "2:8: permission action must be \"allow\", \"ask\" or \"deny\", got \"yes\"",
        ),
        (
            "[permission.bash]\n\"git *\" = \"alow\"\n",
            "2:11: permission action must be \"allow\", \"ask\" or \"deny\", got \"alow\"",
        ),
        (
            "[permission.read]\n\"src/[abc\" = \"deny\"\n",
            "2:14: permission.read: \"src/[abc\" is not a valid pattern: a `[` is never closed",
        ),
    ];
    for (text, want) in cases {
        let f = Fixture::new().workspace(text);
        let e = err_of(&f);
        let want = format!("{}:{want}", f.workspace_path().display());
        assert!(e.starts_with(&want), "{text}\n got: {e}\nwant: {want}");
    }
    // Zero retries is a valid choice; `timeout_secs` still sets the first-byte timeout.
    let f = Fixture::new().workspace("[provider.openai]\nmax_retries = 0\ntimeout_secs = 60\n");
    let l = f.load().unwrap();
    assert_eq!(l.config.provider["openai"].max_retries, Some(0));
    assert_eq!(
        l.config.provider["openai"].first_byte_timeout_secs,
        Some(60)
    );

    // Limits from two files meet after merging: still an error, naming both files.
    let f = Fixture::new()
        .global("[models.\"p/m\"]\ncontext = 8000\n")
        .workspace("[models.\"p/m\"]\noutput = 9000\n");
    let e = err_of(&f);
    assert!(
        e.contains("models.\"p/m\".output (9000, from ")
            && e.contains(&f.workspace_path().display().to_string())
            && e.contains(&f.global_path().display().to_string()),
        "{e}"
    );
}

#[test]
fn semantic_errors_are_located() {
    let cases = [
        (
            "model = \"gpt-4\"\n",
            "1:9: model must be \"provider/model\", got \"gpt-4\"",
        ),
        (
            "[compaction]\nthreshold = 1.5\n",
            "2:13: compaction.threshold must be in (0, 1], got 1.5",
        ),
        (
            "[compaction]\nthreshold = 0.0\n",
            "2:13: compaction.threshold must be in (0, 1], got 0",
        ),
        (
            "[compaction]\nnotice = 1.2\n",
            "2:10: compaction.notice must be in [0, 1) (0: never), got 1.2",
        ),
        (
            "[compaction]\nmodel = \"mini\"\n",
            "2:9: compaction.model must be \"provider/model\", got \"mini\"",
        ),
        (
            "[provider.box]\nkind = \"openai\"\nbase_url = \"ftp://box\"\n",
            "3:12: provider.box.base_url must start with http:// or https://, got \"ftp://box\"",
        ),
        ("max_steps = 0\n", "1:13: max_steps must be at least 1"),
        (
            "sandbox_max_processes = 0\n",
            "1:25: sandbox_max_processes must be at least 8",
        ),
        (
            "sandbox_memory_max = 1000\n",
            "1:22: sandbox_memory_max must be at least 16 MiB (16777216)",
        ),
    ];
    for (text, want) in cases {
        let f = Fixture::new().workspace(text);
        assert_eq!(
            err_of(&f),
            format!("{}:{want}", f.workspace_path().display()),
            "{text}"
        );
    }

    let f = Fixture::new().workspace("[provider.box]\nkind = \"azure\"\nbase_url = \"http://x\"\n");
    let e = err_of(&f);
    assert!(
        e.starts_with(&format!(
            "{}:2:8: unknown variant `azure`",
            f.workspace_path().display()
        )),
        "{e}"
    );

    let f = Fixture::new().workspace("[provider.openai]\napi_key_env = \"sk-proj-abc123\"\n");
    let e = err_of(&f);
    assert!(
        e.contains(":2:15: provider.openai.api_key_env must name an environment variable"),
        "{e}"
    );
    assert!(!e.contains("sk-proj"), "the key must not be echoed: {e}");
}

#[test]
fn line_col_counts_characters() {
    assert_eq!(line_col("abc", 0), (1, 1));
    assert_eq!(line_col("a\nbc", 3), (2, 2));
    assert_eq!(line_col("é\nü=", 5), (2, 2));
    assert_eq!(line_col("é\nü=", 4), (2, 1));
    assert_eq!(line_col("ab", 99), (1, 3));
    assert_eq!(line_col("é", 1), (1, 1));
}

#[test]
fn keys_and_theme_are_checked_with_their_place() {
    let cases = [
        (
            "[keys]\nundo = \"ctrl+hyper\"\n",
            "2:8: keys.undo: unknown key \"hyper\" in \"ctrl+hyper\"",
        ),
        (
            "[keys]\nnewline = [\"enter\", \"ctrl+\", \"f2\"]\n",
            "2:21: keys.newline: \"ctrl+\" names no key after its modifiers",
        ),
        (
            "[keys]\nsubmit = \"enter\"\nteleport = \"f9\"\n",
            "3:1: keys.teleport: no such action (see /keys for the list)",
        ),
        (
            "[keys]\nundo = \"f5\"\nredo = [\"f6\", \"f5\"]\n",
            "3:15: keys: \"f5\" is bound to both undo and redo (prompt and transcript); unbind one (e.g. redo = [])",
        ),
        (
            "[keys]\nundo = 5\n",
            "2:8: invalid type: integer `5`, expected a key such as \"ctrl+u\", or a list of keys",
        ),
        (
            "theme = \"../../etc/x\"\n",
            "1:9: theme must be \"dark\", \"light\" or the name of a file in themes/",
        ),
    ];
    for (text, want) in cases {
        let f = Fixture::new().workspace(text);
        let e = err_of(&f);
        assert!(
            e.starts_with(&format!("{}:{want}", f.workspace_path().display())),
            "{text}: {e}"
        );
    }
    // keys from two files meet after merging
    let f = Fixture::new()
        .global("[keys]\nundo = \"f5\"\n")
        .workspace("[keys]\nredo = \"f5\"\n");
    assert_eq!(
        err_of(&f),
        "config: keys: \"f5\" is bound to both undo and redo (prompt and transcript); unbind one (e.g. redo = [])"
    );
    let f = Fixture::new().global(
        "theme = \"light\"\n[keys]\nundo = \"ctrl+z\"\nexpand_all = [\"ctrl+o\", \"f2\"]\n",
    );
    let l = f.load().unwrap();
    assert_eq!(l.config.theme.as_deref(), Some("light"));
    assert_eq!(l.config.keys["expand_all"].0, ["ctrl+o", "f2"]);
    assert_eq!(l.origin("theme"), f.global_path().display().to_string());
}
