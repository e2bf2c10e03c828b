//! `.process/run-state.json` of a `wfx run` session (DESIGN.md §8): where a
//! YAML workflow stands (step, attempt, phase), what every step and debug
//! attempt did, and the variables later steps need. Written atomically after
//! every step, test run and debug command, so `wfx run --resume` continues
//! exactly where a run stopped.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fix_history::Tamper;
use super::{Extra, Timestamp};

named_enum! {
    /// Where the whole run stands.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum RunStatus {
        /// Steps are running (or a run died without saying; `--resume` continues).
        Running = "running",
        /// Stopped at a resumable point: Ctrl-C, or the agent was unavailable.
        Paused = "paused",
        /// Every step finished and every test step passed.
        Completed = "completed",
        /// Every step finished, but some test step never passed and its
        /// `fail_workflow` was false.
        PartialSuccess = "partial_success",
        /// A shell/claude step failed, or a `fail_workflow: true` test step ran
        /// out of attempts.
        Failed = "failed",
    }
}

impl RunStatus {
    /// Running or paused: `--resume` can continue it.
    pub fn is_unfinished(self) -> bool {
        matches!(self, RunStatus::Running | RunStatus::Paused)
    }
}

named_enum! {
    /// The three kinds of workflow step.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum StepKind {
        Shell = "shell",
        Claude = "claude",
        Test = "test",
    }
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum StepStatus {
        Pending = "pending",
        Running = "running",
        /// A shell/claude step that succeeded, or a test step whose last test
        /// run exited 0.
        Passed = "passed",
        /// A shell/claude step that failed, or a test step whose tests never
        /// passed (see `continued`).
        Failed = "failed",
    }
}

/// What a test step does next: the state machine of one `test:` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestPhase {
    /// Run the tests for the first time.
    InitialTest,
    /// Run the debug command of attempt `attempt`.
    Debug,
    /// Re-run the tests after the debug command of attempt `attempt`.
    Retest,
    /// The step is finished.
    Done,
}

/// One test run of a test step (the initial run, or the re-run of an attempt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestRunRecord {
    pub started_at: Timestamp,
    /// The command as run (report flags wfx added included).
    pub command: String,
    /// `None` when the tests were killed (timeout or signal).
    pub exit_code: Option<i32>,
    /// Exit code 0: the only thing that decides pass/fail (seed 000).
    pub passed: bool,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// Parsed counts (from `test-results.json` of this run).
    pub total: u32,
    /// Failed tests plus errors.
    pub failing: u32,
    /// Which parser read the results (`exit-code` when none could).
    pub parser: String,
    /// Relative paths of the full output and the parsed results.
    pub output_file: String,
    pub results_file: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The debug command of one attempt, as run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DebugRecord {
    pub started_at: Timestamp,
    /// `claude` or `shell`.
    pub kind: StepKind,
    /// The agent that ran a `claude:` debug command.
    #[serde(default)]
    pub agent: Option<String>,
    /// Exactly what ran: the prompt (claude) or the shell command.
    pub command_file: String,
    /// Exactly what it printed.
    pub output_file: String,
    /// `HEAD` and the work-tree snapshot (a git tree id) taken before the
    /// command ran, kept so a resumed attempt judges `commit_required`
    /// against the same starting point.
    #[serde(default)]
    pub head_before: Option<String>,
    #[serde(default)]
    pub snapshot_before: Option<String>,
    /// Filled in when the command finished.
    #[serde(default)]
    pub finished: bool,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Why the command counts as failed (non-zero exit, agent error).
    #[serde(default)]
    pub error: Option<String>,
    /// The command made a new commit.
    #[serde(default)]
    pub committed: bool,
    /// Paths changed since the snapshot (relative to the project root).
    #[serde(default)]
    pub files_changed: Vec<String>,
    /// What wfx put back after the agent's call (its repository settings,
    /// index, wfx's own files, a moved `HEAD`, a planted link); absent
    /// when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<Tamper>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The re-run after this attempt passed.
    Passed,
    /// The re-run after this attempt still failed.
    Failed,
    /// `commit_required` and the debug command made no commit and left no
    /// change: counted as failed without re-running the tests.
    NoChange,
}

/// One debug attempt: the debug command, then the test re-run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttemptRecord {
    /// 1-based, as `${test.attempt}`.
    pub attempt: u32,
    /// Relative directory holding the attempt's files.
    pub dir: String,
    #[serde(default)]
    pub debug: Option<DebugRecord>,
    #[serde(default)]
    pub test: Option<TestRunRecord>,
    #[serde(default)]
    pub outcome: Option<AttemptOutcome>,
    #[serde(default)]
    pub reason: Option<String>,
    /// `on_failure.candidates` > 1: every copy of the debug command that
    /// ran in its own checkout, with its verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<crate::artifacts::fix_history::CandidateAttempt>,
    /// The candidate chosen: its changes are put into the work tree next
    /// (kept after, as the record of what was applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<crate::artifacts::iteration_state::ChosenCandidate>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AttemptRecord {
    /// Attempt `attempt` in `dir`, before anything of it ran.
    pub fn new(attempt: u32, dir: String) -> AttemptRecord {
        AttemptRecord {
            attempt,
            dir,
            debug: None,
            test: None,
            outcome: None,
            reason: None,
            candidates: Vec::new(),
            chosen: None,
            extra: Default::default(),
        }
    }
}

/// One step of the workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepRecord {
    /// 1-based position in `commands:`.
    pub index: usize,
    #[serde(default)]
    pub id: Option<String>,
    pub kind: StepKind,
    pub status: StepStatus,
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    /// Relative directory holding the step's files.
    pub dir: String,
    /// Shell/claude steps: exit code, duration and output of the command.
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub command_file: Option<String>,
    #[serde(default)]
    pub output_file: Option<String>,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Why the step failed.
    #[serde(default)]
    pub reason: Option<String>,
    /// Claude steps: what wfx put back after the call (as a debug
    /// command's `tamper`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<Tamper>,
    /// Test steps: the phase to perform next and the current attempt
    /// (0 = the initial run).
    #[serde(default)]
    pub phase: Option<TestPhase>,
    #[serde(default)]
    pub attempt: u32,
    #[serde(default)]
    pub max_attempts: u32,
    #[serde(default)]
    pub initial: Option<TestRunRecord>,
    #[serde(default)]
    pub attempts: Vec<AttemptRecord>,
    /// A test step that never passed and whose `fail_workflow` was false:
    /// the workflow went on.
    #[serde(default)]
    pub continued: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

impl StepRecord {
    /// Step `index` of `kind` with its files in `dir`, not run yet.
    pub fn new(index: usize, kind: StepKind, dir: String) -> StepRecord {
        StepRecord {
            index,
            id: None,
            kind,
            status: StepStatus::Pending,
            started_at: None,
            completed_at: None,
            dir,
            exit_code: None,
            duration_ms: 0,
            command_file: None,
            output_file: None,
            cost_usd: None,
            reason: None,
            tamper: None,
            phase: None,
            attempt: 0,
            max_attempts: 0,
            initial: None,
            attempts: Vec::new(),
            continued: false,
            extra: Default::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunState {
    pub session_id: String,
    /// The workflow's `name:` or the file stem.
    pub workflow_name: String,
    /// The workflow file, relative to the project root.
    pub workflow_file: String,
    pub status: RunStatus,
    /// 1-based index of the step being run or to run next; one past the
    /// last step when the run is finished.
    pub current_step: usize,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    /// Why the run stopped (failed or paused), for people.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Variables given with `--var` when the run started (they act as extra
    /// `env:` entries of the workflow); a resume keeps them.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
    /// `${<id>.output}`, `${<id>.exit_code}` and `${<id>.<output>}` of
    /// finished steps, so a resumed run interpolates exactly as before.
    #[serde(default)]
    pub outputs: BTreeMap<String, String>,
    /// Agent cost recorded so far (US dollars), for `agents.max_cost_usd`.
    #[serde(default)]
    pub cost_usd: f64,
    pub steps: Vec<StepRecord>,
    #[serde(flatten)]
    pub extra: Extra,
}
