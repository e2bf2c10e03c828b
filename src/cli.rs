//! Command-line types (clap derive) and nothing else.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Heading of the flags every command takes, kept apart from each
/// command's own flags in `--help`.
pub const GLOBAL_HEADING: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "wfx",
    version,
    about = "Run the test-fix workflow as a resumable state machine on disk",
    long_about = None,
    after_help = "\
Examples:
  wfx demo                              the whole loop on a bundled sample project
  wfx test                              run your tests once and see what wfx parses
  wfx test-fix-gen \"Test the auth API\"  plan a test session, then run the fix loop
  wfx status                            where the session is and the command to go on
  wfx test-cycle-execute --resume-session=WFS-test-auth
                                        resume a session where it stopped
  wfx report                            one HTML page: chart, runs, fixes, failures

A session is named by its id (WFS-…): the positional ID of `status`,
`report`, `session …`; `--resume-session=ID` for test-cycle-execute (its
positional ID works too).

Exit codes: 0 completed, 1 blocked/failed, 2 usage or invalid input,
3 paused (resumable), 4 internal error."
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
    #[arg(short = 'C', long, global = true, help_heading = GLOBAL_HEADING, value_name = "DIR")]
    pub project_root: Option<PathBuf>,
    /// Machine-readable JSON on stdout, nothing else there
    #[arg(long, global = true, help_heading = GLOBAL_HEADING)]
    pub json: bool,
    /// Print only warnings and errors
    #[arg(short, long, global = true, help_heading = GLOBAL_HEADING, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail
    #[arg(short, long, global = true, help_heading = GLOBAL_HEADING)]
    pub verbose: bool,
    /// No spinners or progress bars
    #[arg(long, global = true, help_heading = GLOBAL_HEADING)]
    pub no_progress: bool,
    /// Colour output (NO_COLOR is respected with auto)
    #[arg(long, global = true, help_heading = GLOBAL_HEADING, value_enum, default_value_t = ColorChoice::Auto)]
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
    /// Fix attempts per step, run at once in checkouts of their own; the one
    /// the tests prefer is kept (default: fix.candidates, 1)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=crate::artifacts::config::MAX_CANDIDATES as i64))]
    pub candidates: Option<u32>,
    /// Write the last test run as JUnit XML to FILE (for GitLab, Jenkins, Buildkite, …)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan a test session (phases 1–4), then run the fix cycle
    #[command(after_help = "\
Examples:
  wfx test-fix-gen \"Test the auth API\"
      plan from a description, then run the fix loop
  wfx test-fix-gen requirements.md --plan-only
      plan from a Markdown file and stop before the loop
  wfx test-fix-gen WFS-user-auth --fix-agent claude
      tests for a finished implementation session, fixed by Claude Code
  wfx test-fix-gen \"Test the parser\" --fix-agent manual --max-iterations 3
      you apply each fix; at most 3 attempts")]
    TestFixGen(TestFixGenArgs),
    /// Run the test → analyse → fix → retest cycle (phase 5)
    #[command(after_help = "\
Examples:
  wfx test-cycle-execute
      run the single active test session
  wfx test-cycle-execute --resume-session=WFS-test-auth-api
      run or resume that session (a positional WFS-test-auth-api works too)
  wfx session resume WFS-test-auth &&
    wfx test-cycle-execute --resume-session=WFS-test-auth --max-iterations=15
      a blocked session: mark it active again, then go on with more fix attempts
  wfx test-cycle-execute --fix-agent manual --watch
      you fix; wfx retests each time you save a file (or press Enter),
      Ctrl-C pauses")]
    TestCycleExecute(TestCycleExecuteArgs),
    /// Detect and run the project's tests once and print the parsed result
    #[command(after_help = "\
Examples:
  wfx test                  run the detected test command once
  wfx test --only-failed    re-run only what failed in the last `wfx test`
  wfx test --json           the parsed result as JSON (the test-results.json shape)
  wfx test -- -k auth       pass arguments on to the test command")]
    Test(TestArgs),
    /// Show a session's phases, tasks, iterations and next step
    #[command(after_help = "\
Examples:
  wfx status
  wfx status WFS-test-auth-api --json")]
    Status(StatusArgs),
    /// List, show, archive or resume sessions
    #[command(subcommand)]
    Session(SessionCommand),
    /// Validate artifacts against their schemas
    #[command(after_help = "\
Examples:
  wfx validate                        every session and the config
  wfx validate WFS-test-auth-api      one session
  wfx validate .workflow/wfx.json     one file")]
    Validate(ValidateArgs),
    /// Write .workflow/wfx.json with the detected test command and agent CLIs
    #[command(after_help = "\
Examples:
  wfx init            write the config (no agent is enabled)
  wfx init --force    rewrite it, keeping a backup")]
    Init(InitArgs),
    /// Check that each agent CLI is on PATH and accepts the flags wfx passes
    #[command(after_help = "\
Examples:
  wfx doctor                 every configured agent, and the agent CLIs found on PATH
  wfx doctor --json          the same as JSON: {ok, agents: [...]}
  wfx -C ../api doctor       the agents of another project's config")]
    Doctor,
    /// Run a YAML workflow with test/on_failure debug loops
    #[command(after_help = "\
Examples:
  wfx run ci.yml
  wfx run ci.yml --dry-run                 check it and print what would run
  wfx run ci.yml --var spec=specs/49.md    set a workflow variable
  wfx run ci.yml --resume                  continue where the last run stopped")]
    Run(RunArgs),
    /// Write a self-contained HTML report of a session
    #[command(after_help = "\
Examples:
  wfx report                                writes .workflow/report.html
  wfx report WFS-test-auth-api --html out/report.html")]
    Report(ReportArgs),
    /// Print shell completions
    #[command(after_help = "\
Examples:
  wfx completions bash > ~/.local/share/bash-completion/completions/wfx
  wfx completions zsh > ~/.zfunc/_wfx
  wfx completions fish > ~/.config/fish/completions/wfx.fish")]
    Completions(CompletionsArgs),
    /// Run the whole pipeline on a bundled sample project in a temp dir
    #[command(after_help = "\
Examples:
  wfx demo                                  the first of python, node, rust found on PATH
  wfx demo --lang node --dir /tmp/wfx-demo  the Node sample, in a directory you choose

The toolchain is checked before anything is written; with none of the three
on PATH the demo stops with exit 2 and says what it looked for.")]
    Demo(DemoArgs),
    /// Install wfx's slash commands into an agent (`claude`: .claude/commands/wfx/)
    #[command(after_help = "\
Examples:
  wfx install claude           /wfx:test-fix-gen, /wfx:test-cycle-execute, /wfx:status
  wfx install claude --force   replace commands you edited (each kept as .md.bak)")]
    Install(InstallArgs),
    /// Serve wfx's tools to an agent over MCP (stdio)
    #[command(after_help = "\
Examples:
  claude mcp add wfx -- wfx mcp          register it with Claude Code
  wfx -C path/to/project mcp             serve another project's sessions

Tools: run_tests, session_status, next_action, latest_failures.")]
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub struct TestFixGenArgs {
    /// WFS-… id (session mode), a .md file, or a description
    #[arg(value_name = "INPUT")]
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
    /// The same as --resume-session=ID
    #[arg(value_name = "ID", conflicts_with = "resume_session")]
    pub session: Option<String>,
    /// Session to run or resume (default: the single active test session)
    #[arg(long, value_name = "ID")]
    pub resume_session: Option<String>,
    /// While waiting for your fix (manual mode), keep running: retest when
    /// a project file is saved or Enter is pressed; Ctrl-C pauses
    #[arg(long)]
    pub watch: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

impl TestCycleExecuteArgs {
    /// The session named by the positional ID or `--resume-session`.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref().or(self.resume_session.as_deref())
    }
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Re-run only the failures of the previous `wfx test`
    #[arg(long)]
    pub only_failed: bool,
    /// Also write the results as JUnit XML to FILE (for GitLab, Jenkins, Buildkite, …)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run on HEAD in a clean checkout outside the project, as a session's
    /// accepting run does: uncommitted and git-ignored files take no part
    /// (but installed dependencies and small untracked or ignored files)
    #[arg(long)]
    pub sealed: bool,
    /// Extra arguments passed to the test command
    #[arg(last = true, value_name = "ARGS")]
    pub extra: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Session id (default: the one active wfx session, else the most recently updated one)
    #[arg(value_name = "ID")]
    pub session: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List active sessions (and archived ones with --all)
    #[command(after_help = "\
Examples:
  wfx session list
  wfx session list --all --json")]
    List {
        /// Also list archived sessions (.workflow/archives/)
        #[arg(long)]
        all: bool,
    },
    /// Show one session (default: the one active wfx session, else the most recently updated one)
    #[command(after_help = "\
Examples:
  wfx session show
  wfx session show WFS-test-auth-api")]
    Show {
        /// Session id (WFS-…), active or archived
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// Archive a session (active/ → archives/)
    #[command(after_help = "\
Examples:
  wfx session complete
  wfx session complete WFS-test-auth-api")]
    Complete {
        /// Session to archive (default: the single active session)
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// Give up a session: mark it abandoned and archive it (active/ → archives/)
    #[command(after_help = "\
Its commits, files and refs are kept; nothing of yours is stopped or undone.
Refused while another wfx process runs the session.

Examples:
  wfx session abandon
  wfx session abandon WFS-test-auth-api")]
    Abandon {
        /// Session to abandon (default: the single active session)
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// Mark a paused, awaiting-fix or blocked session active again
    #[command(after_help = "\
Examples:
  wfx session resume WFS-test-auth-api && wfx test-cycle-execute --resume-session=WFS-test-auth-api")]
    Resume {
        /// Session to mark active (default: the single active session)
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A session id or a file path (default: every session and the config)
    #[arg(value_name = "ID|FILE")]
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
    #[arg(value_name = "WORKFLOW.yml")]
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
    /// Session id (default: the one active wfx session, else the most recently updated one)
    #[arg(value_name = "ID")]
    pub session: Option<String>,
    /// Output HTML file [default: .workflow/report.html in the project]
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// For commands without a project (`demo`, `completions`): an argument
/// with the global `-C`'s id shadows it, so their help does not offer it;
/// given anyway, it is refused with the reason (see `commands::dispatch`).
#[derive(Debug, Clone, Default, Args)]
pub struct NoProjectRoot {
    /// Not used: this command has no project
    #[arg(
        id = "project_root",
        short = 'C',
        long = "project-root",
        hide = true,
        value_name = "DIR"
    )]
    pub project_root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell to print completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
    #[command(flatten)]
    pub no_project: NoProjectRoot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InstallTarget {
    /// Claude Code: /wfx:test-fix-gen, /wfx:test-cycle-execute, /wfx:status
    Claude,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Where to install
    #[arg(value_enum)]
    pub target: InstallTarget,
    /// Replace files you edited (each is first copied to <name>.md.bak)
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct McpArgs {}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Sample to run: python (pytest, or unittest without it), node (node --test) or rust (cargo
    /// test); default: the first of these whose toolchain is on PATH
    #[arg(long, value_enum, value_name = "LANG")]
    pub lang: Option<DemoLang>,
    /// Directory to create the demo project in (default: a new temp dir)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub no_project: NoProjectRoot,
}

/// The bundled sample projects of `wfx demo`, in the order the default
/// picks them: the quickest to test first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DemoLang {
    // (Plain comments: doc comments here would turn `wfx demo --help` into
    // the long, one-line-per-value layout.)
    // A Python package tested with pytest, or unittest when pytest is absent.
    Python,
    // A CommonJS package tested with `node --test`.
    Node,
    // A Cargo library crate tested with `cargo test`.
    Rust,
}
