//! Command-line interface (clap).

use std::path::PathBuf;

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
    /// Resume the last session in this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_last: bool,
    /// Resume the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_last")]
    pub session: Option<String>,
    /// Model to use, as provider/model.
    #[arg(long, short = 'm', value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
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
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Each configured server: transport, state, tools, tokens of their definitions, prompts.
    List {
        /// Also list every tool with its tokens.
        #[arg(long)]
        tools: bool,
    },
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Continue the last session in this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_last: bool,
    /// Continue the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_last")]
    pub session: Option<String>,
    /// Model to use, as provider/model.
    #[arg(long, short = 'm', value_name = "PROVIDER/MODEL")]
    pub model: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Allow every tool call that would ask for permission, except a command pith cannot fully
    /// read when a deny rule could match what it runs.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The prompt (`/compact [focus]` compacts the session instead).
    #[arg(required = true, trailing_var_arg = true, value_name = "PROMPT")]
    pub prompt: Vec<String>,
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
