//! What a machine asks for ([`Step`], [`Effect`]) and what the driver tells
//! it back ([`Observation`]). Plain data: a machine builds effects from its
//! state and folds observations into it; only the driver performs effects.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::agents::{AnalysisOutcome, CallFiles, CallRecord, ResolvedAgent, Role, Vars};
use crate::artifacts::Timestamp;
use crate::artifacts::fix_history::{FixHistory, NotCommitted, NotCommittedReason};
use crate::artifacts::iteration_state::Strategy;
use crate::artifacts::task::FixStrategy;
use crate::artifacts::task_record::{Coverage, Finding};
use crate::artifacts::test_results::TestResults;
use crate::error::Exit;
use crate::git::{Change, DiffStat, FileVersions, TooBig, Trailers};
use crate::render::Renderer;
use crate::session::SessionPaths;
use crate::testing::Detected;

/// What a machine wants next.
#[derive(Debug)]
pub enum Step {
    /// Perform this effect and report what happened.
    Do(Effect),
    /// Nothing more to do in this run: how it ends.
    End(Ending),
}

/// One effect the driver performs for a machine.
#[derive(Debug)]
pub enum Effect {
    /// Run the tests (whole or a subset), re-running new failures once.
    RunTests(TestRequest),
    /// One agent call (fix, test generation, a `claude:` step or debug).
    Agent(AgentRequest),
    /// The analysis chain, then the built-in analyzer.
    Analyze(AnalysisRequest),
    /// Record the work tree and `HEAD` (before a change someone may make).
    Snapshot,
    /// What changed since a snapshot, with the content before and after of
    /// the changed paths `versions_of` selects.
    Inspect(Snapshot, Option<fn(&str) -> bool>),
    /// A checkpoint commit (idempotent by its trailers).
    Commit(CommitRequest),
    /// Put the work tree back to a snapshot (a fix undone without ever
    /// being committed); idempotent.
    Restore(Snapshot),
    /// Record the project's test infrastructure (DESIGN.md §11.2).
    Survey,
    /// Revert a commit (idempotent by its trailers).
    Revert(RevertRequest),
    /// A shell command (a `shell:` step, a debug command).
    Shell(ShellRequest),
    /// IMPL-001.3's checks: L0 commands and the AI-issue scan.
    Validate(ValidateRequest),
    /// IMPL-001.5's checks: coverage and the test anti-pattern scan.
    Review(ReviewRequest),
    /// Move the session to `archives/` and make the final commit.
    Archive(ArchiveRequest),
    /// Stop for a person (no I/O; the machine records it on observing).
    Pause(PauseReason),
    /// Stop for good (no I/O).
    Block(String),
    /// No I/O: a step of the machine's own bookkeeping (a task skipped, a
    /// decision recorded), committed like any other.
    Update,
    /// Several fix attempts at once, each in a checkout of its own from
    /// one snapshot (DESIGN.md §11.4).
    Candidates(CandidatesRequest),
    /// Put a chosen candidate's changes into the work tree, then inspect
    /// the work tree against the snapshot (idempotent).
    Apply(ApplyRequest),
}

impl Effect {
    /// A short name for logs and the transition table.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::RunTests(_) => "run_tests",
            Effect::Agent(_) => "agent",
            Effect::Analyze(_) => "analyze",
            Effect::Snapshot => "snapshot",
            Effect::Inspect(..) => "inspect",
            Effect::Commit(_) => "commit",
            Effect::Restore(_) => "restore",
            Effect::Survey => "survey",
            Effect::Revert(_) => "revert",
            Effect::Shell(_) => "shell",
            Effect::Validate(_) => "validate",
            Effect::Review(_) => "review",
            Effect::Archive(_) => "archive",
            Effect::Pause(_) => "pause",
            Effect::Block(_) => "block",
            Effect::Update => "update",
            Effect::Candidates(_) => "candidates",
            Effect::Apply(_) => "apply",
        }
    }
}

/// A test run.
#[derive(Debug, Clone)]
pub struct TestRequest {
    /// Where the tests run (the project or its worktree).
    pub root: PathBuf,
    pub detected: Detected,
    /// Only these ids (the runner's filter); `None` = the whole suite.
    pub subset: Option<Vec<String>>,
    /// The run's full output (replaced).
    pub log: PathBuf,
    /// How the log is named in the results (project-relative).
    pub log_shown: String,
    /// Where the runner's structured report goes (emptied first).
    pub report_dir: PathBuf,
    pub timeout: Duration,
    pub env: Vec<(String, String)>,
    /// The last results, for criticality ("passed before, fails now").
    pub previous: Option<Arc<TestResults>>,
    /// Shown on a terminal while the tests run.
    pub spinner: String,
    /// Re-run the failures that are new against these once; those that
    /// pass are flaky (DESIGN.md §5.3).
    pub flaky: Option<FlakyCheck>,
    /// Run on the committed tree in a clean checkout (DESIGN.md §11.1).
    pub seal: Option<SealRequest>,
}

/// A sealed run: the fix's paths on top of `HEAD` become a commit, which a
/// clean checkout outside the project runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SealRequest {
    /// The paths the fix's checkpoint commits (none: `HEAD` as it is).
    pub paths: Vec<String>,
    /// When the fix began and ended: files outside the commit changed
    /// between the two are named when the sealed run fails (what the test
    /// runs after the fix wrote is not the fix's).
    pub since: Timestamp,
    pub until: Timestamp,
    /// The sealed commit's message.
    pub message: String,
    pub environment: crate::artifacts::iteration_state::SealedEnvironment,
}

/// What a session records before its first fix (DESIGN.md §11.1, §11.2).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Survey {
    /// The test infrastructure: project-relative paths, sorted.
    pub infrastructure: Vec<String>,
    pub environment: crate::artifacts::iteration_state::SealedEnvironment,
}

/// A sealed checkout as the ports made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed {
    /// The commit it holds.
    pub commit: String,
    /// Its top directory (removed after the run).
    pub dir: PathBuf,
    /// The project root in it, where the tests run.
    pub root: PathBuf,
    /// What the run's environment gets besides the request's (the
    /// project's `target/` for cargo, the checkout first on PYTHONPATH).
    pub env: Vec<(String, String)>,
}

/// A sealed run as observed.
#[derive(Debug, Clone, PartialEq)]
pub struct SealedRun {
    pub commit: String,
    /// Files outside the commit that changed during the fix.
    pub outside_commit: Vec<String>,
}

/// The flaky re-run of a test run: the one policy for both machines.
#[derive(Debug, Clone)]
pub struct FlakyCheck {
    /// Failing before the run: not new.
    pub known_failing: BTreeSet<String>,
    /// The re-run's log.
    pub log: PathBuf,
}

/// A test run as observed.
#[derive(Debug, Clone)]
pub struct TestsRun {
    pub results: TestResults,
    /// Tests marked flaky by the re-run.
    pub flaky: Vec<String>,
    /// The first [`crate::agents::vars::INLINE_OUTPUT_MAX`] + 1 bytes of the log
    /// (for `${test.output}` and `${<id>.output}`).
    pub output_head: String,
    /// The run was sealed (DESIGN.md §11.1).
    pub sealed: Option<SealedRun>,
}

/// Text for an agent or a shell, with `${…}` variables resolved by the
/// driver: `${test.output}` needs the log of the run before, which only the
/// driver reads.
#[derive(Debug, Clone)]
pub struct Text {
    /// The text, or a template when `mode` is set.
    pub text: String,
    pub vars: Vars,
    /// Interpolate `text` in this mode (none: use it as it is).
    pub mode: Option<crate::agents::Mode>,
    /// `${test.output}` / `${test.output_file}`: the log and its
    /// project-relative name.
    pub test_output: Option<(PathBuf, String)>,
    /// Named in an unknown-variable error.
    pub label: String,
}

impl Text {
    /// Plain text, no variables to resolve.
    pub fn plain(text: impl Into<String>, vars: Vars) -> Text {
        Text {
            text: text.into(),
            vars,
            mode: None,
            test_output: None,
            label: String::new(),
        }
    }
}

/// One agent call.
#[derive(Debug, Clone)]
pub struct AgentRequest {
    pub agent: ResolvedAgent,
    pub role: Role,
    /// The prompt (and the variables of a custom command).
    pub prompt: Text,
    pub files: CallFiles,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub spinner: String,
    /// What the agent is doing, for a pause message (`fixing iteration 2`).
    pub doing: String,
    /// Inspect the work tree after the call against this (what the call
    /// changed); `Before::Now` takes the snapshot just before the call.
    pub inspect: Option<Before>,
    /// Also report these paths' content before and after (the test guard).
    pub versions_of: Option<fn(&str) -> bool>,
    /// Files the call is expected to write: `(name, pattern)` (see
    /// [`ShellRequest::outputs`]).
    pub outputs: Vec<(String, String)>,
}

/// The starting point of an inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// Taken by the driver right before the call (not persisted).
    Now,
    /// Taken in an earlier, persisted step.
    Recorded(Snapshot),
}

/// The work tree and `HEAD` at one moment; both `None` outside git.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub tree: Option<String>,
    pub head: Option<String>,
}

/// What changed since a snapshot.
#[derive(Debug, Clone, Default)]
pub struct Inspection {
    pub before: Snapshot,
    pub head_after: Option<String>,
    pub changes: Vec<Change>,
    /// The changed paths a checkpoint commits (minus the user's untracked files).
    pub commit_paths: Vec<String>,
    pub diffstat: DiffStat,
    /// The start of the diff, bounded and redacted (`fix-history.json`).
    pub diff: crate::artifacts::fix_history::DiffExcerpt,
    /// Before/after content of the changed paths the request asked for.
    pub versions: Vec<(String, FileVersions)>,
    /// New files over `git.max_new_file_mib`, in no snapshot and no commit.
    pub too_big: Vec<TooBig>,
}

impl Inspection {
    /// Every changed path (both sides of renames), sorted.
    pub fn files_changed(&self) -> Vec<String> {
        crate::git::change_paths(&self.changes)
    }

    /// `HEAD` moved during the call (a commit, a reset).
    pub fn head_moved(&self) -> bool {
        self.before.head != self.head_after
    }

    /// The files over the size limit (`limit_mib`) that changed since
    /// `since`, when the fix started: the fix wrote them, so fix history
    /// names them; older ones are the person's and are left unnamed.
    pub fn not_committed(&self, since: Timestamp, limit_mib: u64) -> Vec<NotCommitted> {
        self.too_big
            .iter()
            .filter(|f| Timestamp::from(f.changed) >= since)
            .map(|f| NotCommitted {
                path: f.path.clone(),
                reason: NotCommittedReason::TooBig,
                bytes: f.bytes,
                limit_mib,
            })
            .collect()
    }
}

/// An agent call as observed.
#[derive(Debug, Clone)]
pub struct AgentCallDone {
    pub call: CallRecord,
    pub inspection: Option<Inspection>,
    /// `(name, found path)` for each requested output.
    pub outputs: Vec<(String, Option<String>)>,
}

/// The analysis chain for one iteration.
#[derive(Debug, Clone)]
pub struct AnalysisRequest {
    pub chain: Vec<ResolvedAgent>,
    pub root: PathBuf,
    pub paths: SessionPaths,
    pub iteration: u32,
    pub max_iterations: u32,
    pub strategy: Strategy,
    pub results: Arc<TestResults>,
    /// The log the analysis reads (head and tail).
    pub log: PathBuf,
    /// The log as the agents are told (relative to their directory).
    pub log_shown: String,
    pub stuck_tests: Vec<String>,
    pub history: FixHistory,
    pub previous_strategies: Vec<FixStrategy>,
    pub vars: Vars,
    pub renderer: Arc<Renderer>,
    pub spinner: String,
}

#[derive(Debug, Clone)]
pub struct CommitRequest {
    pub paths: Vec<String>,
    /// The session directory committed with it (project-relative).
    pub session_dir: Option<String>,
    pub message: String,
    pub trailers: Trailers,
}

#[derive(Debug, Clone)]
pub struct RevertRequest {
    pub commit: String,
    pub session_dir: Option<String>,
    pub message: String,
    pub trailers: Trailers,
}

/// A shell command in a process group of its own.
#[derive(Debug, Clone)]
pub struct ShellRequest {
    pub command: Text,
    pub cwd: PathBuf,
    /// Its output (replaced).
    pub log: PathBuf,
    /// Where the command as run is written first (a view).
    pub command_file: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub spinner: String,
    pub inspect: Option<Before>,
    /// Files the command is expected to write: `(name, pattern)`, the
    /// newest match written since the command started.
    pub outputs: Vec<(String, String)>,
}

/// A child process as observed (what the machines need of it).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessEnd {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// `exit 1`, `timed out`, `killed by signal 9`.
    pub describe: String,
    /// The last non-empty line of output.
    pub last_line: String,
}

impl ProcessEnd {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// A shell command as observed.
#[derive(Debug, Clone)]
pub struct ShellDone {
    /// The command as run (variables resolved).
    pub command: String,
    pub end: ProcessEnd,
    /// The first bytes of its output (see [`TestsRun::output_head`]).
    pub output_head: String,
    pub inspection: Option<Inspection>,
    /// `(name, found path)` for each requested output.
    pub outputs: Vec<(String, Option<String>)>,
}

#[derive(Debug, Clone)]
pub struct ValidateRequest {
    pub root: PathBuf,
    /// `(step name, command)` of the L0 checks.
    pub commands: Vec<(String, String)>,
    pub log: PathBuf,
    pub timeout: Duration,
    /// Files to check (those that no longer exist are left out; when none
    /// is left, nothing runs).
    pub files: Vec<String>,
    /// The snapshot before IMPL-001: lines changed since then gate.
    pub since: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Validated {
    /// The files that exist and were checked (none: nothing was run).
    pub checked: Vec<String>,
    /// `(step, command, how it ended)` of each L0 command.
    pub commands: Vec<(String, String, ProcessEnd)>,
    pub scanned: Vec<Finding>,
    /// Per scanned file: the lines added or changed since `since` (`None`:
    /// the file is new, every line counts).
    pub changed_lines: BTreeMap<String, Option<BTreeSet<u32>>>,
}

#[derive(Debug, Clone)]
pub struct ReviewRequest {
    pub root: PathBuf,
    pub coverage_command: Option<String>,
    pub log: PathBuf,
    pub timeout: Duration,
    pub spinner: String,
    /// Test files for the anti-pattern scan (those that exist).
    pub test_files: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The test files that exist and were scanned.
    pub scanned: Vec<String>,
    pub command: Option<ProcessEnd>,
    pub coverage: Coverage,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone)]
pub struct ArchiveRequest {
    pub session_id: String,
    /// The final commit: the old directory, the manifest, the new one.
    pub commit: Option<CommitRequest>,
    /// `git.squash`: after the final commit, fold the session's commits
    /// into one with this message and these trailers.
    pub squash: Option<SquashRequest>,
}

#[derive(Debug, Clone)]
pub struct SquashRequest {
    pub message: String,
    pub trailers: Trailers,
    /// Which commits are the session's: `None`, those whose trailers name
    /// this session and run (the cycle commits itself); `Some(base)`, every
    /// commit on top of `base` (`wfx run`: its steps commit, with no
    /// trailers).
    pub since: Option<String>,
}

/// Why a run stops for a person. One policy for both machines
/// ([`super::policy`]); the same exit code (3) and `paused` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PauseReason {
    /// Ctrl-C or SIGTERM; `during` says what was running.
    Interrupted { during: String },
    /// The agent cannot be reached: not installed, rate limited, a server
    /// or connection error.
    AgentUnavailable {
        agent: String,
        /// `unavailable`, `rate_limit`, `server_error`, `connection_error`.
        error: String,
        message: String,
    },
    /// Every failure of the first run is an environment failure: a person
    /// fixes the environment, then the resume runs the suite again.
    Environment {
        /// What to fix, one line per distinct fix.
        fixes: Vec<String>,
    },
    /// The first run found no test: nothing to fix; a person writes tests
    /// (or configures test generation), then the resume runs the suite.
    NoTests,
    /// A git hook (`pre-commit`, `commit-msg`) refused wfx's commit.
    HookFailed {
        hook: String,
        /// The hook's file (relative to the work tree when inside it).
        #[serde(default)]
        path: String,
        output: String,
    },
    /// An agent changed the installed test runner or its plugins (a
    /// package in `.venv`, a file of `node_modules/jest-*`): wfx cannot
    /// put that back, and the tests would load it.
    RunnerEdited {
        agent: String,
        /// The changed paths, relative to the project.
        changed: Vec<String>,
    },
    /// Manual mode: a person makes the fix (or fixes a gate's findings).
    ManualFix {
        /// Nothing changed since the last pause.
        unchanged: bool,
    },
}

impl PauseReason {
    /// wfx now waits for a person to act (fix the code, the environment,
    /// a hook, write tests, bring the agent back); not after Ctrl-C, which
    /// the person just did. Rings the terminal bell (DESIGN.md §10.7).
    pub fn needs_person(&self) -> bool {
        !matches!(self, PauseReason::Interrupted { .. })
    }

    /// The reason as people read it.
    pub fn text(&self) -> String {
        match self {
            PauseReason::Interrupted { during } if during.is_empty() => "interrupted".into(),
            PauseReason::Interrupted { during } => format!("interrupted while {during}"),
            PauseReason::AgentUnavailable {
                agent,
                error,
                message,
            } => format!("{agent} is unavailable ({error}: {message})"),
            PauseReason::Environment { fixes } => format!(
                "the tests fail because of the environment, not the code: {}",
                fixes.join("; ")
            ),
            PauseReason::NoTests => {
                format!("no tests found. {}", crate::testing::results::NO_TESTS_HINT)
            }
            PauseReason::HookFailed { hook, path, output } => format!(
                "the git {hook} hook ({path}) refused wfx's commit:\n{output}\n{}",
                if hook == "commit-msg" {
                    "wfx's commit messages follow git.message in .workflow/wfx.json: set \"convention\" (conventional, plain) or a template such as \"fix\": \"fix(${scope}): ${summary}\" (docs/git.md), or \"git\": {\"hooks\": false}, and resume"
                } else {
                    "Fix what it reports (or set \"git\": {\"hooks\": false} in .workflow/wfx.json) and resume"
                }
            ),
            PauseReason::RunnerEdited { agent, changed } => format!(
                "{agent} changed the installed test runner or its plugins ({}); wfx cannot put that back, and every later test run would load it. Check the dependency directory (reinstall it if unsure), then resume",
                super::tamper::shown(changed)
            ),
            PauseReason::ManualFix { .. } => "waiting for a fix by hand".into(),
        }
    }
}

/// Speculative attempts as a machine asks for them: the texts still to be
/// resolved by the driver (see [`super::candidates::CandidateBatch`]).
#[derive(Debug, Clone)]
pub struct CandidatesRequest {
    pub iteration: u32,
    pub step: Option<usize>,
    pub snapshot: Snapshot,
    pub candidates: Vec<CandidateRequest>,
    pub max_parallel: usize,
    pub tests: super::candidates::CandidateTests,
    pub environment: crate::artifacts::iteration_state::SealedEnvironment,
    /// Also report these paths' content before and after (the test guard).
    pub versions_of: Option<fn(&str) -> bool>,
    /// See [`super::candidates::CandidateBatch::share`].
    pub share: Vec<String>,
}

/// One candidate as a machine asks for it.
#[derive(Debug, Clone)]
pub struct CandidateRequest {
    pub index: u32,
    pub agent: String,
    pub strategy: Option<Strategy>,
    /// An agent call or a shell command (`cwd` and `inspect` are the
    /// checkout's: ignored here).
    pub work: CandidateWorkRequest,
    pub dir: PathBuf,
}

#[derive(Debug, Clone)]
pub enum CandidateWorkRequest {
    Agent(Box<AgentRequest>),
    Shell(Box<ShellRequest>),
}

/// A chosen candidate's tree put into the work tree.
#[derive(Debug, Clone)]
pub struct ApplyRequest {
    /// The snapshot the candidate started from.
    pub before: Snapshot,
    /// The candidate's tree.
    pub tree: String,
    pub versions_of: Option<fn(&str) -> bool>,
}

/// A batch of candidates as observed.
#[derive(Debug, Clone)]
pub struct CandidatesDone {
    pub candidates: Vec<super::candidates::CandidateDone>,
    /// What a candidate did to the project itself, outside its checkout
    /// (its work tree, `HEAD`, wfx's files, the repository's settings),
    /// undone; and how, as people read it.
    pub tamper: Option<crate::artifacts::fix_history::Tamper>,
    pub tamper_note: Option<String>,
}

/// What the driver tells a machine.
#[derive(Debug)]
pub struct Observation {
    pub at: Timestamp,
    pub what: Observed,
}

#[derive(Debug)]
pub enum Observed {
    /// The run begins (`resumed`: the state was loaded from disk).
    Start {
        resumed: bool,
    },
    Tests(Box<TestsRun>),
    Agent(Box<AgentCallDone>),
    Analyzed(Box<AnalysisOutcome>),
    Snapshot(Snapshot),
    Inspected(Inspection),
    /// The commit made or found (`None`: nothing to commit, or no git).
    Committed(Option<String>),
    /// The revert made or found, or why git refused it.
    Reverted(Result<Option<String>, String>),
    /// The paths put back to the snapshot.
    Restored(Vec<String>),
    /// The test infrastructure and the sealed runs' environment.
    Surveyed(Survey),
    Shell(Box<ShellDone>),
    Validated(Box<Validated>),
    Reviewed(Box<Reviewed>),
    Archived {
        commit: Option<String>,
    },
    Paused(PauseReason),
    Blocked(String),
    /// After [`Effect::Update`].
    Updated,
    Candidates(Box<CandidatesDone>),
    /// The chosen candidate applied: the work tree against its snapshot.
    Applied(Inspection),
}

/// How a run ended: the exit code, lines for people (stdout) and the
/// fields of the final `done` event.
#[derive(Debug, Clone)]
pub struct Ending {
    pub exit: Exit,
    pub lines: Vec<String>,
    pub done: super::event::Done,
    /// The run stopped to wait for a person's fix (manual mode): with
    /// `--watch` the driver waits for it in-process instead of ending.
    pub waits_for_fix: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn only_files_written_since_the_fix_started_are_named() {
        let at = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
        let file = |path: &str, changed| TooBig {
            path: path.into(),
            bytes: 12 << 20,
            changed,
        };
        let inspection = Inspection {
            too_big: vec![
                // The person's dataset, there before the fix.
                file("data/old.bin", at(1_000)),
                // Written during the fix (and one in the very second).
                file("data/new.bin", at(2_001)),
                file("data/edge.bin", at(2_000)),
            ],
            ..Inspection::default()
        };
        let since = Timestamp::from(at(2_000));
        let named: Vec<String> = inspection
            .not_committed(since, 10)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            named,
            [
                "data/new.bin (12.0 MiB > git.max_new_file_mib 10)",
                "data/edge.bin (12.0 MiB > git.max_new_file_mib 10)"
            ]
        );
        assert!(Inspection::default().not_committed(since, 10).is_empty());
    }
}
