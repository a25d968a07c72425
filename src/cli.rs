//! Command-line interface (clap).

use std::path::PathBuf;

use std::io::Read as _;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "pith",
    version,
    about = "A terminal coding agent that never runs into the context window"
)]
pub struct Cli {
    /// Config file (also PITH_CONFIG); merged over the global and workspace files.
    #[arg(long, global = true, env = "PITH_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Resume the last session in this directory (before or after `run`).
    #[arg(short = 'c', long = "continue", global = true)]
    pub continue_last: bool,
    /// Resume the session with this id (before or after `run`).
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "continue_last",
        global = true
    )]
    pub session: Option<String>,
    /// Model to use, as provider/model (before or after `run`).
    #[arg(long, short = 'm', value_name = "PROVIDER/MODEL", global = true)]
    pub model: Option<String>,
    /// Reasoning effort for this session: minimal, low, medium or high (over the model's
    /// `reasoning_effort`).
    #[arg(long, value_name = "LEVEL", value_parser = parse_effort, global = true)]
    pub effort: Option<pith_protocol::llm::ReasoningEffort>,
    /// How tool calls are let through: default (the rules decide and ask), plan (only tools
    /// that read run), accept-edits (edits and writes in the workspace are not asked about) or
    /// bypass (nothing is asked; deny rules and the sandbox still hold).
    #[arg(long, value_name = "MODE", value_parser = parse_mode, global = true)]
    pub permission_mode: Option<pith_protocol::event::PermissionMode>,
    /// Trust this directory from now on: its pith.toml may then set providers, permissions and
    /// the sandbox (otherwise only harmless settings of it are used).
    #[arg(long, global = true)]
    pub trust: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one user turn headless and print the answer.
    Run(RunArgs),
    /// List or export stored sessions.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Print the effective configuration and where each value came from.
    Config,
    /// MCP servers: start them and show their state, tools and what their definitions cost.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim,
    /// Emacs) that start pith as their agent.
    Acp,
    /// API keys stored by pith (environment variables still win).
    Auth {
        #[command(subcommand)]
        command: AuthCommand,
    },
    /// Update a release-archive install to the latest release (an npm, pip or cargo install is
    /// told how to update the way it was made).
    Update {
        /// Only say what would be installed.
        #[arg(long)]
        check: bool,
    },
    /// Measure pith itself (`pith eval compaction`).
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Score compaction: compact each scenario with pith, with a plain summary and not at all,
    /// then check by exact anchors whether each probe's answer is still in the context and
    /// whether the configured model, given only that context, answers it. `--session ID` checks
    /// a stored session's current context instead.
    Compaction(EvalArgs),
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// A directory of scenario files (*.json) to use instead of the shipped ones.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// Output format: a table, or one JSON document.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Only check what is present in each context: no probe questions are sent.
    #[arg(long)]
    pub presence_only: bool,
    /// Write each context graded to DIR/SCENARIO.STRATEGY.txt, to see what was kept.
    #[arg(long, value_name = "DIR")]
    pub save_contexts: Option<PathBuf>,
    /// Compact every scenario at this window (tokens) instead of its own.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1024..))]
    pub window: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Store a provider's API key (typed without echo, or piped on stdin) in pith's private
    /// credentials file.
    Login {
        /// The provider, as in [provider.NAME] (asked for when missing).
        provider: Option<String>,
    },
    /// Each provider that takes a key and where its key comes from (never the key).
    List,
    /// Remove a provider's stored key (every stored key when none is named).
    Logout { provider: Option<String> },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Each configured server: transport, state, tools, tokens of their definitions, prompts.
    List {
        /// Also list every tool with its tokens.
        #[arg(long)]
        tools: bool,
    },
    /// Sign in to an HTTP server with OAuth (a browser, or a code with --device).
    Login {
        name: String,
        /// Use the device flow: a code to enter on another machine's browser.
        #[arg(long)]
        device: bool,
    },
    /// Remove the stored sign-in of a server (every server's without NAME).
    Logout { name: Option<String> },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// `-c` / `--continue` (a global flag, given before or after `run`).
    #[arg(skip)]
    pub continue_last: bool,
    /// `--session ID` (global).
    #[arg(skip)]
    pub session: Option<String>,
    /// `--model` (global).
    #[arg(skip)]
    pub model: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Allow every tool call that would ask for permission, except a command pith cannot fully
    /// read when a deny rule could match what it runs.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// With --yes: also approve a command the model asks to run outside the sandbox. Without
    /// it such a request is refused, whatever --yes says.
    #[arg(long, requires = "yes")]
    pub allow_unsandboxed: bool,
    /// Work toward TEXT as `/goal TEXT` does: after each turn a check (`goal.check`, or the
    /// model) decides whether the model goes back to work, until the goal is met or its budget
    /// is spent. Takes the place of the prompt.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,
    /// The goal's budget: `N turns` or `N tokens` (`200k tokens`); unset: `goal.max_turns`.
    #[arg(long, value_name = "BUDGET", requires = "goal")]
    pub goal_budget: Option<String>,
    /// The prompt (`/compact [focus]` compacts the session instead). `-`, or none with a
    /// piped stdin, reads it from stdin; with a prompt, piped stdin is appended to it as a
    /// pasted block (`git diff | pith run "review this"`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROMPT"
    )]
    pub prompt: Vec<String>,
    /// What was piped on stdin next to a prompt given as arguments: appended to the prompt as
    /// a pasted block (`crate::headless`). `None` when stdin is a terminal or held nothing.
    #[arg(skip)]
    pub piped: Option<String>,
}

/// A flag's value pith does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagValueError {
    #[error("{0:?} is not a permission mode: use default, plan, accept-edits or bypass")]
    PermissionMode(String),
    #[error("{0:?} is not a level: use minimal, low, medium or high")]
    Effort(String),
}

/// `--permission-mode MODE`.
fn parse_mode(s: &str) -> Result<pith_protocol::event::PermissionMode, FlagValueError> {
    pith_protocol::event::PermissionMode::parse(s)
        .ok_or_else(|| FlagValueError::PermissionMode(s.into()))
}

/// `--effort LEVEL`.
fn parse_effort(s: &str) -> Result<pith_protocol::llm::ReasoningEffort, FlagValueError> {
    pith_protocol::llm::ReasoningEffort::parse(s).ok_or_else(|| FlagValueError::Effort(s.into()))
}

/// The exit code of a run refused before it started: no prompt, an unknown command.
pub const EXIT_USAGE: i32 = 2;

/// A command line pith refuses as given (exit code [`EXIT_USAGE`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    #[error("the prompt is empty")]
    EmptyPrompt,
    #[error(
        "no prompt: give it as arguments (pith run \"fix the failing test\"), pipe it in, or pass - to type it (end with Ctrl-D)"
    )]
    NoPrompt,
    #[error("the prompt read from stdin is empty")]
    EmptyStdin,
    #[error(
        "stdin is longer than {} MB; put the material in a file and refer to it in the prompt",
        MAX_STDIN_PROMPT / (1024 * 1024)
    )]
    StdinTooLarge,
    #[error("--goal takes the place of the prompt: give one or the other")]
    GoalAndPrompt,
}

/// The longest prompt read from stdin.
pub const MAX_STDIN_PROMPT: u64 = 16 * 1024 * 1024;

impl RunArgs {
    /// Takes the prompt from stdin when it is `-`, or missing and stdin is not a terminal. With
    /// a prompt given and stdin not a terminal, what stdin holds is kept in `piped` (nothing
    /// when it is blank).
    pub fn read_prompt_from(
        &mut self,
        stdin: impl std::io::Read,
        is_terminal: bool,
    ) -> anyhow::Result<()> {
        if let Some(goal) = &self.goal {
            // `--goal TEXT [--goal-budget B]` is `/goal TEXT --budget B`, routed as typed
            if !self.prompt.is_empty() {
                return Err(UsageError::GoalAndPrompt.into());
            }
            let budget = self
                .goal_budget
                .as_deref()
                .map(|b| format!(" --budget {b}"))
                .unwrap_or_default();
            self.prompt = vec![format!("/goal {}{budget}", goal.trim())];
            return Ok(());
        }
        let dash = self.prompt.len() == 1 && self.prompt[0] == "-";
        if !self.prompt.is_empty() && !dash {
            if self.prompt.iter().all(|w| w.trim().is_empty()) {
                return Err(UsageError::EmptyPrompt.into());
            }
            if !is_terminal {
                let text = read_stdin(stdin)?;
                self.piped = (!text.trim().is_empty()).then_some(text);
            }
            return Ok(());
        }
        if !dash && is_terminal {
            return Err(UsageError::NoPrompt.into());
        }
        if is_terminal {
            crate::errln!("reading the prompt from stdin; end it with Ctrl-D");
        }
        let text = read_stdin(stdin)?;
        if text.trim().is_empty() {
            return Err(UsageError::EmptyStdin.into());
        }
        self.prompt = vec![text];
        Ok(())
    }
}

/// All of stdin as text, its trailing line ends dropped; refused past [`MAX_STDIN_PROMPT`].
fn read_stdin(mut stdin: impl std::io::Read) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    std::io::Read::by_ref(&mut stdin)
        .take(MAX_STDIN_PROMPT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot read stdin: {e}"))?;
    if bytes.len() as u64 > MAX_STDIN_PROMPT {
        return Err(UsageError::StdinTooLarge.into());
    }
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("stdin is not UTF-8 text"))?;
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Md,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// id, title, directory, updated, tokens.
    List,
    /// The whole stored history, including compacted and pruned parts.
    Export {
        id: String,
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
    },
}

/// The global flags that only a session uses (the TUI, `pith run`, `pith acp`): the printing
/// commands (`sessions`, `config`, `mcp`, `auth`) take them but do not list them in `--help`.
const SESSION_FLAGS: [&str; 5] = [
    "continue_last",
    "session",
    "model",
    "effort",
    "permission_mode",
];

/// The command line as parsed: [`Cli`] with each subcommand's `--help` listing only the global
/// flags that apply to it. The printing commands get the session flags as hidden copies of
/// their own (clap then does not propagate the listed ones to them; the values still reach
/// [`Cli`]).
pub fn command() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let hidden: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| SESSION_FLAGS.contains(&a.get_id().as_str()))
        .map(|a| a.clone().hide(true))
        .collect();
    for name in ["sessions", "config", "mcp", "auth", "update"] {
        cmd = cmd.mut_subcommand(name, |sub| {
            hidden.iter().fold(sub, |sub, a| sub.arg(a.clone()))
        });
    }
    cmd
}

impl Cli {
    /// Parses the process's arguments through [`command`] (exits on a usage error or `--help`).
    pub fn parse_args() -> Cli {
        use clap::FromArgMatches as _;
        let matches = command().try_get_matches().unwrap_or_else(|e| {
            if e.kind() == clap::error::ErrorKind::DisplayVersion {
                // `pith --version` also says how pith was installed (src/update).
                crate::out!("{}", crate::update::version_text());
                std::process::exit(0);
            }
            e.exit()
        });
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pith config --help` and the other printing commands do not list the session flags
    /// (`--model`, `--effort`, …) they have no use for; `pith run --help` does.
    #[test]
    fn subcommand_help_lists_only_the_flags_that_apply() {
        let help = |path: &[&str]| {
            let args = std::iter::once("pith")
                .chain(path.iter().copied())
                .chain(["--help"]);
            command()
                .try_get_matches_from(args)
                .expect_err("help")
                .to_string()
        };
        for path in [
            &["config"][..],
            &["sessions", "list"],
            &["sessions"],
            &["auth", "login"],
            &["mcp", "list"],
        ] {
            let text = help(path);
            for flag in [
                "--model",
                "--effort",
                "--permission-mode",
                "--continue",
                "--session",
            ] {
                assert!(!text.contains(flag), "{path:?} lists {flag}:\n{text}");
            }
            assert!(text.contains("--config"), "{path:?}:\n{text}");
        }
        let run = help(&["run"]);
        assert!(
            run.contains("--model") && run.contains("--continue"),
            "{run}"
        );
        // still accepted where they are not listed
        use clap::FromArgMatches as _;
        for args in [
            &["pith", "config", "-m", "a/b"][..],
            &["pith", "-m", "a/b", "sessions", "list"],
            &[
                "pith", "sessions", "list", "--model", "a/b", "--effort", "high",
            ],
        ] {
            let m = command().try_get_matches_from(args).unwrap();
            assert_eq!(
                Cli::from_arg_matches(&m).unwrap().model.as_deref(),
                Some("a/b"),
                "{args:?}"
            );
        }
    }

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("pith").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn eval_compaction_takes_its_flags_and_the_global_session() {
        let cli = parse(&[
            "eval",
            "compaction",
            "--format",
            "json",
            "--presence-only",
            "--window",
            "8192",
            "--session",
            "S",
        ]);
        assert_eq!(cli.session.as_deref(), Some("S"));
        let Some(Command::Eval {
            command: EvalCommand::Compaction(args),
        }) = cli.command
        else {
            panic!("eval compaction expected")
        };
        assert_eq!(args.format, Format::Json);
        assert!(args.presence_only);
        assert_eq!(args.window, Some(8_192));
        // a window too small to hold a system prompt is refused
        assert!(Cli::try_parse_from(["pith", "eval", "compaction", "--window", "100"]).is_err());
    }

    #[test]
    fn global_flags_work_before_or_after_run() {
        for args in [
            &["-c", "-m", "a/b", "run", "fix", "it"][..],
            &["run", "-c", "-m", "a/b", "fix", "it"][..],
            &["-c", "run", "--model", "a/b", "fix", "it"][..],
        ] {
            let cli = parse(args);
            assert!(cli.continue_last, "{args:?}");
            assert_eq!(cli.model.as_deref(), Some("a/b"), "{args:?}");
            let Some(Command::Run(run)) = cli.command else {
                panic!("run expected")
            };
            assert_eq!(run.prompt, ["fix", "it"]);
        }
        let cli = parse(&["--session", "NOPE", "run", "x"]);
        assert_eq!(cli.session.as_deref(), Some("NOPE"));
        let cli = parse(&["run", "--session", "S", "x"]);
        assert_eq!(cli.session.as_deref(), Some("S"));
        // Flags after the first word of the prompt belong to the prompt.
        let Some(Command::Run(run)) = parse(&["run", "use", "-c", "here"]).command else {
            panic!()
        };
        assert_eq!(run.prompt, ["use", "-c", "here"]);
        // A prompt that starts with a dash (a list item, a diff line) is the prompt, not a flag,
        // while the flags before it still count.
        for (args, prompt) in [
            (
                &["run", "- remember: port 5433"][..],
                "- remember: port 5433",
            ),
            (
                &["run", "-c", "--format", "json", "-- old line"][..],
                "-- old line",
            ),
            (&["-c", "run", "-1 is the answer"][..], "-1 is the answer"),
        ] {
            let cli = parse(args);
            let Some(Command::Run(run)) = cli.command else {
                panic!("{args:?}")
            };
            assert_eq!(run.prompt, [prompt], "{args:?}");
            assert_eq!(cli.continue_last, args.contains(&"-c"), "{args:?}");
        }
        assert!(
            Cli::try_parse_from(["pith", "-c", "--session", "x", "run", "y"]).is_err(),
            "-c and --session conflict"
        );
    }

    fn run_args(prompt: &[&str]) -> RunArgs {
        let Some(Command::Run(run)) = parse(&[&["run"][..], prompt].concat()).command else {
            panic!()
        };
        run
    }

    #[test]
    fn goal_takes_the_place_of_the_prompt() {
        let mut a = run_args(&["--goal", "tests pass", "--goal-budget", "5 turns"]);
        a.read_prompt_from(&b"ignored"[..], false).unwrap();
        assert_eq!(a.prompt, ["/goal tests pass --budget 5 turns"]);
        assert_eq!(a.piped, None);
        let mut a = run_args(&["--goal", "lint clean"]);
        a.read_prompt_from(&b""[..], true).unwrap();
        assert_eq!(a.prompt, ["/goal lint clean"]);
        let mut a = run_args(&["--goal", "x", "and a prompt"]);
        let e = a.read_prompt_from(&b""[..], true).unwrap_err();
        assert!(e.to_string().contains("--goal takes the place"), "{e}");
    }

    #[test]
    fn the_prompt_comes_from_stdin_with_dash_or_a_pipe() {
        let mut a = run_args(&["-"]);
        a.read_prompt_from(&b"a long prompt\nover lines\n"[..], false)
            .unwrap();
        assert_eq!(a.prompt, ["a long prompt\nover lines"]);
        let mut a = run_args(&[]);
        a.read_prompt_from(&b"piped"[..], false).unwrap();
        assert_eq!(a.prompt, ["piped"]);
        // With arguments, piped stdin is kept to go with them; blank stdin adds nothing; a
        // terminal is not read.
        let mut a = run_args(&["explain", "this:"]);
        a.read_prompt_from(&b"DATA\nmore\n"[..], false).unwrap();
        assert_eq!(a.prompt, ["explain", "this:"]);
        assert_eq!(a.piped.as_deref(), Some("DATA\nmore"));
        let mut a = run_args(&["hello"]);
        a.read_prompt_from(&b" \n"[..], false).unwrap();
        assert_eq!((a.prompt, a.piped), (vec!["hello".to_string()], None));
        let mut a = run_args(&["hello"]);
        a.read_prompt_from(&b"typed"[..], true).unwrap();
        assert_eq!(a.piped, None);
        // A terminal with no prompt: say how to give one instead of waiting.
        let e = run_args(&[]).read_prompt_from(&b""[..], true).unwrap_err();
        assert!(e.to_string().starts_with("no prompt:"), "{e}");
        let e = run_args(&["-"])
            .read_prompt_from(&b" \n"[..], false)
            .unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        assert!(e.is::<UsageError>());
        for blank in [&[""][..], &["  ", "\t"][..]] {
            let e = run_args(blank)
                .read_prompt_from(&b"ignored"[..], false)
                .unwrap_err();
            assert_eq!(e.to_string(), "the prompt is empty", "{blank:?}");
            assert!(e.is::<UsageError>());
        }
        let big = vec![b'x'; MAX_STDIN_PROMPT as usize + 1];
        for args in [&["-"][..], &["review", "this"][..]] {
            let e = run_args(args)
                .read_prompt_from(&big[..], false)
                .unwrap_err();
            assert!(e.to_string().contains("longer than 16 MB"), "{e}");
            assert!(e.is::<UsageError>(), "refused with exit code 2");
        }
    }
}
