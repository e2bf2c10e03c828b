//! Command-line types (clap derive) and nothing else.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "wfx",
    version,
    about = "Run the test-fix workflow as a resumable state machine on disk",
    long_about = None,
    after_help = "Exit codes: 0 completed, 1 blocked/failed, 2 usage or invalid input, 3 paused (resumable), 4 internal error."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Project root (default: git top-level of the current directory, else the current directory)
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    pub project_root: Option<PathBuf>,
    /// Machine-readable JSON on stdout, nothing else there
    #[arg(long, global = true)]
    pub json: bool,
    /// Print only warnings and errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// No spinners or progress bars
    #[arg(long, global = true)]
    pub no_progress: bool,
    /// Colour output (NO_COLOR is respected with auto)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Flags shared by both pipeline commands (`test-fix-gen` passes them on).
#[derive(Debug, Clone, Default, Args)]
pub struct PipelineArgs {
    /// Run even if tracked files are modified outside .workflow/
    #[arg(long)]
    pub allow_dirty: bool,
    /// Make no git commits
    #[arg(long)]
    pub no_commit: bool,
    /// Run the session in a new git worktree on branch wfx/<session-id>
    #[arg(long)]
    pub worktree: bool,
    /// Fix agent to use (a name from the config, or `manual`)
    #[arg(long, value_name = "NAME|manual")]
    pub fix_agent: Option<String>,
    /// Maximum number of fix attempts
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// Answer yes to questions; with several active sessions pick the latest
    #[arg(short = 'y', long)]
    pub yes: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan a test session (phases 1–4), then run the fix cycle
    TestFixGen(TestFixGenArgs),
    /// Run the test → analyse → fix → retest cycle (phase 5)
    TestCycleExecute(TestCycleExecuteArgs),
    /// Detect and run the project's tests once and print the parsed result
    Test(TestArgs),
    /// Show a session's phases, tasks, iterations and next step
    Status(StatusArgs),
    /// List, show, archive or resume sessions
    #[command(subcommand)]
    Session(SessionCommand),
    /// Validate artifacts against their schemas
    Validate(ValidateArgs),
    /// Write .workflow/wfx.json with the detected test command and agent CLIs
    Init(InitArgs),
    /// Check that each agent CLI is on PATH and accepts the flags wfx passes
    Doctor,
    /// Run a YAML workflow with test/on_failure debug loops
    Run(RunArgs),
    /// Write a self-contained HTML report of a session
    Report(ReportArgs),
    /// Print shell completions
    Completions(CompletionsArgs),
    /// Run the whole pipeline on a bundled sample project in a temp dir
    Demo(DemoArgs),
}

#[derive(Debug, Args)]
pub struct TestFixGenArgs {
    /// WFS-… id (session mode), a .md file, or a description
    pub input: String,
    /// Stop after planning (phases 1–4)
    #[arg(long)]
    pub plan_only: bool,
    /// Stop after phase N (1–4); `wfx test-fix-gen WFS-<id>` continues
    #[arg(long, hide = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub stop_after_phase: Option<u8>,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

#[derive(Debug, Args)]
pub struct TestCycleExecuteArgs {
    /// Session to run or resume (default: the single active test session)
    #[arg(long, value_name = "WFS-ID")]
    pub resume_session: Option<String>,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Re-run only the failures of the previous `wfx test`
    #[arg(long)]
    pub only_failed: bool,
    /// Extra arguments passed to the test command
    #[arg(last = true, value_name = "ARGS")]
    pub extra: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Session id (default: the single active session)
    pub session: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List active sessions (and archived ones with --all)
    List {
        #[arg(long)]
        all: bool,
    },
    /// Show one session
    Show { id: String },
    /// Archive a session (active/ → archives/)
    Complete { id: Option<String> },
    /// Mark a paused, awaiting-fix or blocked session active again
    Resume { id: Option<String> },
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A session id or a file path (default: every session and the config)
    pub target: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing config (a backup is kept)
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workflow YAML file
    pub workflow: PathBuf,
    /// Continue at the step and attempt where the last run stopped
    #[arg(long)]
    pub resume: bool,
    /// Check the workflow and print what would run, without running it
    #[arg(long)]
    pub dry_run: bool,
    /// Set a workflow variable, like an `env:` entry (e.g. --var spec=specs/49.md)
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Session id (default: the single active session)
    pub session: Option<String>,
    /// Output HTML file
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory to create the demo project in (default: a new temp dir)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
