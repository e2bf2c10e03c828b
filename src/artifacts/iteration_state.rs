//! `.process/iteration-state.json`: the state machine of phase 5 (DESIGN.md
//! §5, §10.1).
//!
//! In memory the state is typed: [`Action`] is the next action with the
//! data that action needs in its variant (the fix in flight, the decided
//! rollback), so an action without its data cannot be represented. On disk
//! it keeps the flat shape of DESIGN.md §3 — `next_action` is the tag, the
//! variant's data sits next to it (`fix`, `pending_rollback`) — through
//! [`IterationStateFile`], which also reads what wfx 0.1 wrote (the fields
//! it kept in `extra`, records without a `run` number).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::test_results::{Failure, Scope};
use super::{Extra, Timestamp};

named_enum! {
    /// The name of the next action (DESIGN.md §5.1), without its data.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    pub enum NextAction {
        ExecuteTask = "execute_task",
        RunTests = "run_tests",
        AnalyzeFailures = "analyze_failures",
        ExecuteFixTask = "execute_fix_task",
        Retest = "retest",
        Rollback = "rollback",
        FinalValidation = "final_validation",
        Complete = "complete",
        None = "none",
    }
}

/// The next action and the data it needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run `current_task` (IMPL-001, IMPL-001.3, IMPL-001.5).
    ExecuteTask,
    /// The first run of the loop: the whole suite.
    RunTests,
    /// Analyse the failures of `current_iteration`.
    AnalyzeFailures,
    /// Fix attempt `current_iteration`; `fix` once its snapshot is taken.
    ExecuteFixTask { fix: Option<FixInFlight> },
    /// The retest after the fix.
    Retest { fix: FixInFlight },
    /// The full suite after an all-passing retest: only a full run completes.
    FinalValidation { fix: FixInFlight },
    /// Revert the fix commit named by the decided rollback.
    Rollback { rollback: PendingCommit },
    /// Success: statuses, summaries, then the archive.
    Complete,
    /// Nothing left (completed or blocked).
    None,
}

impl Action {
    pub fn kind(&self) -> NextAction {
        match self {
            Action::ExecuteTask => NextAction::ExecuteTask,
            Action::RunTests => NextAction::RunTests,
            Action::AnalyzeFailures => NextAction::AnalyzeFailures,
            Action::ExecuteFixTask { .. } => NextAction::ExecuteFixTask,
            Action::Retest { .. } => NextAction::Retest,
            Action::FinalValidation { .. } => NextAction::FinalValidation,
            Action::Rollback { .. } => NextAction::Rollback,
            Action::Complete => NextAction::Complete,
            Action::None => NextAction::None,
        }
    }

    /// The fix in flight, in the actions that carry one.
    pub fn fix(&self) -> Option<&FixInFlight> {
        match self {
            Action::ExecuteFixTask { fix } => fix.as_ref(),
            Action::Retest { fix } | Action::FinalValidation { fix } => Some(fix),
            _ => None,
        }
    }
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum Strategy {
        Conservative = "conservative",
        Aggressive = "aggressive",
        Surgical = "surgical",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopStatus {
    Running,
    AwaitingFix,
    Paused,
    Completed,
    PartialSuccess,
    Blocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IterationResult {
    Success,
    PartialSuccess,
    Improved,
    NoChange,
    Regression,
    RolledBack,
    Error,
}

impl IterationRecord {
    /// The counts behind `pass_rate` (skipped tests apart).
    pub fn counts(&self) -> super::test_results::Counts {
        super::test_results::Counts::of(self.passed, self.failed, self.total)
    }

    /// The change of the pass rate from `earlier` to this run, computed
    /// from the counts (not from the rounded-down rates); `None` when
    /// either ran no test.
    pub fn change_since(&self, earlier: &IterationRecord) -> Option<f64> {
        Some(self.counts().exact_rate()? - earlier.counts().exact_rate()?)
    }
}

/// The counts of the tests a subset run ran, before merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RanCounts {
    pub total: u32,
    pub passed: u32,
    /// Failed and errors.
    pub failed: u32,
}

impl RanCounts {
    /// The tests a subset run ran: passed and failed. Its skipped count is
    /// left out: runners count the tests the filter left out as skipped
    /// (nextest's "7 skipped" for a retest of 3).
    pub fn of(r: &super::test_results::TestResults) -> RanCounts {
        let failed = r.failed + r.errors;
        RanCounts {
            total: r.passed + failed,
            passed: r.passed,
            failed,
        }
    }
}

/// One test run of the loop. An iteration may hold several runs (the
/// affected retest, then the full-suite validation): each is its own
/// record with its own results file and log (DESIGN.md §10.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationRecord {
    pub iteration: u32,
    /// 1-based number of the run in the session, unique (records of wfx
    /// 0.1, one per iteration, get their position on load).
    #[serde(default)]
    pub run: u32,
    pub started_at: Timestamp,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    pub scope: Scope,
    pub pass_rate: f64,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    #[serde(default)]
    pub failed_tests: Vec<String>,
    #[serde(default)]
    pub new_failures: Vec<String>,
    /// Failures of this run that passed on their re-run (DESIGN.md §5.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_tests: Vec<String>,
    /// This run's parsed results and full output, relative to the project
    /// root (none for records of wfx 0.1: `iteration-N-results.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_log: Option<String>,
    #[serde(default)]
    pub strategy: Option<Strategy>,
    #[serde(default)]
    pub analysis_file: Option<String>,
    #[serde(default)]
    pub analysis_tool: Option<String>,
    #[serde(default)]
    pub fix_task: Option<String>,
    #[serde(default)]
    pub fix_commit: Option<String>,
    #[serde(default)]
    pub rollback_commit: Option<String>,
    #[serde(default)]
    pub result: Option<IterationResult>,
    /// The retest tier this run was (DESIGN.md §10.4); none for the first
    /// run and for records of wfx 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// Why this subset run could not judge the fix (it could not run, ran
    /// nothing, or missed a selected test): it is not merged, never a
    /// regression, and the full suite runs next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated: Option<String>,
    /// The run executed on the committed tree in a clean checkout of wfx's
    /// own, not in the work tree (DESIGN.md §11.1); `commit` names it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sealed: bool,
    /// The commit a sealed run tested (the tree the fix's checkpoint holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Files outside that commit that changed during the fix (git-ignored
    /// or left uncommitted): the work tree had them, the sealed run did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_commit: Vec<String>,
    /// What a retest tier itself ran, before its results were merged over
    /// the last full run (whose totals `total`, `passed`, `failed` and
    /// `pass_rate` then are); none for a full run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<RanCounts>,
    /// How long the run took, and how long before its first test result
    /// appeared (a build, a `pretest` script, the runner's start), in
    /// milliseconds: the session's own timings, from which the retest
    /// judges whether a subset can be quicker than the whole suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_ms: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

named_enum! {
    /// The three retest tiers (DESIGN.md §10.4).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    pub enum Tier {
        /// The tests that failed before the fix.
        Failed = "failed",
        /// The tests the fix may affect.
        Affected = "affected",
        /// The whole suite.
        Full = "full",
    }
}

/// What a retest tier showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TierOutcome {
    /// Every test it ran passed.
    Passed,
    /// A test it ran failed.
    Failing,
    /// It could not judge anything: the full suite decides.
    Escalated,
}

/// How far the retest of one fix has come: kept with the fix so a resumed
/// session continues with the next tier.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetestProgress {
    /// What the runner's related-tests query named (test ids or files);
    /// none until it ran (or when there is no query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<Vec<String>>,
    /// The last tier run, and what it showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TierOutcome>,
    /// The run whose (merged) results the next tier merges over; none:
    /// the run before the fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_run: Option<u32>,
    /// Why the last tier escalated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated: Option<String>,
}

/// `.process/iteration-state.json`: the state machine of phase 5.
/// `next_action` names the next action; the data it needs sits next to it
/// (`fix` for `execute_fix_task`, `retest` and `final_validation`;
/// `pending_rollback` for `rollback`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "IterationStateFile", into = "IterationStateFile")]
pub struct IterationState {
    pub session_id: String,
    pub current_task: Option<String>,
    pub queue: Vec<String>,
    pub current_iteration: u32,
    pub max_iterations: u32,
    pub selected_strategy: Option<Strategy>,
    /// `next_action` and its data.
    pub action: Action,
    pub status: LoopStatus,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    pub best_pass_rate: Option<f64>,
    pub stuck_tests: Vec<String>,
    pub blocked_reason: Option<String>,
    /// Why a paused session waits, as people read it (no tests found, the
    /// environment, an agent unavailable, interrupted); `None` once it runs.
    pub paused_reason: Option<String>,
    pub iterations: Vec<IterationRecord>,
    /// The run (by `run` number) whose results describe the code as it is
    /// now: the last run, or after a rollback the run before the undone
    /// fix. Retests are merged over it and compared with it.
    pub baseline_run: Option<u32>,
    /// A checkpoint commit that was decided but is not yet known to exist;
    /// made (idempotently, by its trailers) before anything else.
    pub pending_commit: Option<PendingCommit>,
    /// Snapshot of the work tree before IMPL-001 generated tests, so the
    /// generated tests can be committed once the gates passed.
    pub tasks_snapshot: Option<String>,
    /// The commit of IMPL-001's generated tests (iteration 0).
    pub tests_commit: Option<String>,
    /// The test infrastructure as the session found it after IMPL-001
    /// (DESIGN.md §11.2): configuration files and the plugin modules and
    /// setup files they load. `None` until recorded.
    pub test_infrastructure: Option<Vec<String>>,
    /// What of the files outside the commit the sealed runs may use, as it
    /// was when the session started (DESIGN.md §11.1).
    pub sealed_environment: Option<SealedEnvironment>,
    /// Fields other tools or people added.
    pub extra: Extra,
}

/// The files outside the commit that a sealed run may use: what was there,
/// outside the commit, when the session started (DESIGN.md §11.1) — the
/// person's, since no agent had run. A file created later, or changed
/// since, takes no part.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SealedEnvironment {
    /// Dependency directories (`node_modules`, `.venv`, …) the sealed
    /// checkout reaches through links, project-relative.
    #[serde(default)]
    pub dependency_dirs: Vec<String>,
    /// Small files outside the commit — git-ignored (a generated
    /// `_version.py`, a local settings file) or untracked (a helper the
    /// test command runs) — with the git blob id of their content then:
    /// copied into the sealed checkout only while they still hold it.
    #[serde(default)]
    pub start_files: Vec<StartFile>,
}

/// A file outside the commit as it was when the session started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StartFile {
    pub path: String,
    /// The git blob id of its content.
    pub blob: String,
    /// When its content last changed (ctime, which no process sets back):
    /// a file that changed while an agent ran is not the person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_at: Option<Timestamp>,
}

impl SealedEnvironment {
    /// Fold in what a survey at a resume found (`now`): the person's
    /// changes between runs — files written after the last agent call
    /// ended (`agents_done`) — join or replace what the session recorded;
    /// anything else stays as recorded (a file an agent changed then takes
    /// no part, its content no longer matching).
    pub fn merge_resumed(&mut self, now: SealedEnvironment, agents_done: Option<Timestamp>) {
        for dir in now.dependency_dirs {
            if !self.dependency_dirs.contains(&dir) {
                self.dependency_dirs.push(dir);
            }
        }
        self.dependency_dirs.sort();
        let persons = |f: &StartFile| match (agents_done, f.changed_at) {
            (None, _) => true,
            (Some(done), Some(at)) => at > done,
            (Some(_), None) => false,
        };
        for f in now.start_files.into_iter().filter(persons) {
            match self.start_files.iter_mut().find(|o| o.path == f.path) {
                Some(old) => *old = f,
                None => self.start_files.push(f),
            }
        }
        self.start_files.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

impl IterationState {
    pub fn next_action(&self) -> NextAction {
        self.action.kind()
    }

    /// The record of run `run`.
    pub fn run(&self, run: u32) -> Option<&IterationRecord> {
        self.iterations.iter().find(|r| r.run == run)
    }

    pub fn run_mut(&mut self, run: u32) -> Option<&mut IterationRecord> {
        self.iterations.iter_mut().find(|r| r.run == run)
    }

    /// The number the next run gets.
    pub fn next_run(&self) -> u32 {
        self.iterations.iter().map(|r| r.run).max().unwrap_or(0) + 1
    }
}

/// `--max-iterations` for trying a blocked session again: room for two
/// more fix attempts than were allowed or made. The same number wherever
/// the retry command is shown (end of the run, failure report, `wfx
/// status`, the HTML report).
pub fn retry_max_iterations(max_iterations: u32, attempts: u32) -> u32 {
    max_iterations.max(attempts) + 2
}

/// The last run of each iteration, in order: the run that settled it.
/// Windows over "runs in a row" (stuck tests, no progress) count these,
/// so an affected retest and its full validation count once.
pub fn settled_runs(records: &[IterationRecord]) -> Vec<IterationRecord> {
    let mut out: Vec<IterationRecord> = Vec::new();
    for r in records {
        match out.last_mut() {
            Some(last) if last.iteration == r.iteration => *last = r.clone(),
            _ => out.push(r.clone()),
        }
    }
    out
}

/// A fix attempt between its snapshot and its retest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixInFlight {
    pub iteration: u32,
    /// Git tree id of the work tree before the fix (none outside git).
    #[serde(default)]
    pub snapshot: Option<String>,
    /// `HEAD` before the fix (what the checks after the fix compare with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    pub started_at: Timestamp,
    /// The fix ran (or a person's changes were seen) and was inspected.
    #[serde(default)]
    pub observed: bool,
    /// Paths the fix commit will contain (what the fix changed, minus the
    /// user's own untracked files).
    #[serde(default)]
    pub commit_paths: Vec<String>,
    /// The fix changed test files: the retest runs the whole suite.
    #[serde(default)]
    pub touched_tests: bool,
    /// Why the test-edit policy rejects this fix (DESIGN.md §5.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// The fix call failed or timed out: unless the retest shows it
    /// helped, its changes are undone, not committed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub call_failed: bool,
    /// The retest tiers run so far (DESIGN.md §10.4).
    #[serde(default, skip_serializing_if = "is_default")]
    pub retest: RetestProgress,
    /// Speculative attempts (`fix.candidates` > 1): the candidates ran
    /// (their verdicts are in fix-history.json) and this one was chosen;
    /// its changes are put into the work tree next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<ChosenCandidate>,
}

/// The candidate a speculative step chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChosenCandidate {
    /// 1-based.
    pub candidate: u32,
    /// Its work tree, a tree of the project's repository (kept by
    /// `refs/wfx/<session>/candidates/<n>`).
    pub tree: String,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// What a pending commit is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommitPurpose {
    /// A fix attempt.
    Fix,
    /// IMPL-001's generated tests (iteration 0).
    Tests,
    /// The revert of a fix attempt.
    Rollback,
}

/// A commit decided in one step and made in the next (see
/// [`IterationState::pending_commit`], [`Action::Rollback`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingCommit {
    pub kind: CommitPurpose,
    pub iteration: u32,
    pub message: String,
    /// Project-relative paths to commit, with the session's artifacts.
    #[serde(default)]
    pub paths: Vec<String>,
    /// For a rollback: the run that judged the undone fix (it becomes
    /// `rolled_back`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// For a fix that is undone without ever being committed (rejected
    /// from its diff, or a call that failed and helped nothing): the
    /// snapshot the work tree is put back to, instead of a revert commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
}

/// `iteration-state.json` as stored: the flat shape of DESIGN.md §3, and
/// what wfx 0.1 wrote.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "IterationState")]
pub struct IterationStateFile {
    pub session_id: String,
    #[serde(default)]
    pub current_task: Option<String>,
    #[serde(default)]
    pub queue: Vec<String>,
    #[serde(default)]
    pub current_iteration: u32,
    pub max_iterations: u32,
    #[serde(default)]
    pub selected_strategy: Option<Strategy>,
    pub next_action: NextAction,
    pub status: LoopStatus,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default)]
    pub best_pass_rate: Option<f64>,
    #[serde(default)]
    pub stuck_tests: Vec<String>,
    #[serde(default)]
    pub blocked_reason: Option<String>,
    /// Why a paused session waits, as people read it (no tests found, the
    /// environment, an agent unavailable, interrupted); absent once it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// Every test run, in order (an iteration may have several).
    #[serde(default)]
    pub iterations: Vec<IterationRecord>,
    /// The run (its `run` number) whose results describe the code as it is
    /// now: the last run, or after a rollback the run before the undone
    /// fix. Retests are merged over it and compared with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_run: Option<u32>,
    /// `execute_fix_task` (once its snapshot is taken), `retest`,
    /// `final_validation`: the fix attempt in flight. Its snapshot is
    /// persisted before the fix runs, so a run killed during the fix still
    /// knows what the fix changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixInFlight>,
    /// A checkpoint commit that was decided but is not yet known to exist;
    /// made (idempotently, by its trailers) before anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_commit: Option<PendingCommit>,
    /// `rollback`: which fix, and the commit message saying why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_rollback: Option<PendingCommit>,
    /// Snapshot of the work tree before IMPL-001 generated tests, so the
    /// generated tests can be committed once the gates passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_snapshot: Option<String>,
    /// The commit of IMPL-001's generated tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_commit: Option<String>,
    /// The test infrastructure as the session found it after IMPL-001:
    /// configuration files, and the plugin modules and setup files they
    /// load (project-relative). A fix's change to any of it is judged by
    /// `test_edits.infrastructure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_infrastructure: Option<Vec<String>>,
    /// What of the files outside the commit the sealed runs may use: the
    /// dependency directories and small git-ignored files there when the
    /// session started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_environment: Option<SealedEnvironment>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl TryFrom<IterationStateFile> for IterationState {
    type Error = String;

    fn try_from(f: IterationStateFile) -> Result<Self, String> {
        let mut iterations = f.iterations;
        // wfx 0.1: one record per iteration, no run numbers.
        if iterations.iter().any(|r| r.run == 0) {
            for (i, r) in iterations.iter_mut().enumerate() {
                r.run = i as u32 + 1;
            }
        }
        let mut runs: Vec<u32> = iterations.iter().map(|r| r.run).collect();
        runs.sort_unstable();
        runs.dedup();
        if runs.len() != iterations.len() {
            return Err("two records of `iterations` have the same `run`".into());
        }
        let mut extra = f.extra;
        // wfx 0.1 kept these in the extra maps.
        let tests_commit = f
            .tests_commit
            .or_else(|| take_string(&mut extra, "tests_commit"));
        for r in &mut iterations {
            if r.flaky_tests.is_empty()
                && let Some(v) = r.extra.remove("flaky_tests")
            {
                r.flaky_tests = serde_json::from_value(v)
                    .map_err(|e| format!("/iterations: flaky_tests: {e}"))?;
            }
        }
        // A fix in flight that wfx 0.1 did not persist (a retest it
        // started without one) is a fix that changed nothing it knew of.
        let unknown_fix = || FixInFlight {
            iteration: f.current_iteration,
            snapshot: None,
            head: None,
            started_at: f.updated_at,
            observed: true,
            commit_paths: Vec::new(),
            touched_tests: false,
            rejected: None,
            call_failed: false,
            retest: RetestProgress::default(),
            chosen: None,
        };
        let action = match f.next_action {
            NextAction::ExecuteTask => Action::ExecuteTask,
            NextAction::RunTests => Action::RunTests,
            NextAction::AnalyzeFailures => Action::AnalyzeFailures,
            NextAction::ExecuteFixTask => Action::ExecuteFixTask {
                fix: f.fix.filter(|x| x.iteration == f.current_iteration),
            },
            NextAction::Retest => Action::Retest {
                fix: f.fix.unwrap_or_else(unknown_fix),
            },
            NextAction::FinalValidation => Action::FinalValidation {
                fix: f.fix.unwrap_or_else(unknown_fix),
            },
            NextAction::Rollback => Action::Rollback {
                rollback: match f.pending_rollback {
                    Some(mut r) => {
                        r.kind = CommitPurpose::Rollback;
                        r.run.get_or_insert(r.iteration + 1);
                        r
                    }
                    None => {
                        return Err(
                            "`next_action` is `rollback` but no `pending_rollback` says which fix"
                                .into(),
                        );
                    }
                },
            },
            NextAction::Complete => Action::Complete,
            NextAction::None => Action::None,
        };
        let state = IterationState {
            session_id: f.session_id,
            current_task: f.current_task,
            queue: f.queue,
            current_iteration: f.current_iteration,
            max_iterations: f.max_iterations,
            selected_strategy: f.selected_strategy,
            action,
            status: f.status,
            started_at: f.started_at,
            updated_at: f.updated_at,
            best_pass_rate: f.best_pass_rate,
            stuck_tests: f.stuck_tests,
            blocked_reason: f.blocked_reason,
            paused_reason: f.paused_reason,
            iterations,
            baseline_run: f.baseline_run,
            pending_commit: f.pending_commit,
            tasks_snapshot: f.tasks_snapshot,
            tests_commit,
            test_infrastructure: f.test_infrastructure,
            sealed_environment: f.sealed_environment,
            extra,
        };
        match inconsistency(&state) {
            Some(why) => Err(why),
            None => Ok(state),
        }
    }
}

/// The most iterations a state may name: far beyond any real session
/// (each iteration is a test run and an agent call), far below the wrap of
/// a counter.
pub const MAX_ITERATIONS_ON_FILE: u32 = 100_000;

/// What makes a schema-valid state unusable (DESIGN.md §10.3): counters
/// out of range, a baseline run that is not recorded, paths to commit
/// outside the project. Refused (exit 2) before anything is written.
pub fn inconsistency(s: &IterationState) -> Option<String> {
    let last = s.iterations.iter().map(|r| r.iteration).max().unwrap_or(0);
    // Each attempt rejected before its retest moves on without a run.
    let reachable = last.saturating_add(s.max_iterations).saturating_add(2);
    if s.current_iteration > MAX_ITERATIONS_ON_FILE || s.current_iteration > reachable {
        return Some(format!(
            "`current_iteration` is {} but the last recorded run is of iteration {last}",
            s.current_iteration
        ));
    }
    if s.max_iterations > MAX_ITERATIONS_ON_FILE {
        return Some(format!(
            "`max_iterations` is {} (at most {MAX_ITERATIONS_ON_FILE})",
            s.max_iterations
        ));
    }
    if let Some(run) = s.baseline_run
        && s.run(run).is_none()
    {
        return Some(format!(
            "`baseline_run` is {run} but no run {run} is recorded"
        ));
    }
    let fix_paths = s
        .action
        .fix()
        .map(|f| f.commit_paths.as_slice())
        .unwrap_or(&[]);
    let pending = s.pending_commit.iter().flat_map(|c| c.paths.iter());
    if let Some(bad) = fix_paths.iter().chain(pending).find(|p| !inside_project(p)) {
        return Some(format!("a path to commit, `{bad}`, is outside the project"));
    }
    None
}

/// A relative path without `..` components (what wfx records).
fn inside_project(path: &str) -> bool {
    let p = std::path::Path::new(path);
    !p.is_absolute()
        && p.components().all(|c| {
            !matches!(
                c,
                std::path::Component::ParentDir | std::path::Component::Prefix(_)
            )
        })
}

fn take_string(extra: &mut Extra, key: &str) -> Option<String> {
    match extra.remove(key) {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(other) => {
            // Not ours after all: keep it where it was.
            extra.insert(key.to_string(), other);
            None
        }
        None => None,
    }
}

impl From<IterationState> for IterationStateFile {
    fn from(s: IterationState) -> Self {
        let next_action = s.action.kind();
        let (fix, pending_rollback) = match s.action {
            Action::ExecuteFixTask { fix } => (fix, None),
            Action::Retest { fix } | Action::FinalValidation { fix } => (Some(fix), None),
            Action::Rollback { rollback } => (None, Some(rollback)),
            _ => (None, None),
        };
        IterationStateFile {
            session_id: s.session_id,
            current_task: s.current_task,
            queue: s.queue,
            current_iteration: s.current_iteration,
            max_iterations: s.max_iterations,
            selected_strategy: s.selected_strategy,
            next_action,
            status: s.status,
            started_at: s.started_at,
            updated_at: s.updated_at,
            best_pass_rate: s.best_pass_rate,
            stuck_tests: s.stuck_tests,
            blocked_reason: s.blocked_reason,
            paused_reason: s.paused_reason,
            iterations: s.iterations,
            baseline_run: s.baseline_run,
            fix,
            pending_commit: s.pending_commit,
            pending_rollback,
            tasks_snapshot: s.tasks_snapshot,
            tests_commit: s.tests_commit,
            test_infrastructure: s.test_infrastructure,
            sealed_environment: s.sealed_environment,
            extra: s.extra,
        }
    }
}

/// `.process/iteration-<N>-failures.json`: the failures a fix was asked to address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationFailures {
    pub iteration: u32,
    pub pass_rate: f64,
    #[serde(default)]
    pub failures: Vec<Failure>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod environment_tests {
    use super::*;

    fn file(path: &str, blob: &str, at: i64) -> StartFile {
        StartFile {
            path: path.into(),
            blob: blob.into(),
            changed_at: Some(chrono::DateTime::from_timestamp(at, 0).unwrap()),
        }
    }

    /// What a person wrote between runs joins; what changed while an agent
    /// ran (before its call ended) does not, whatever it is.
    #[test]
    fn a_resume_takes_the_persons_files_and_not_an_agents() {
        let mut env = SealedEnvironment {
            dependency_dirs: vec![".venv".into()],
            start_files: vec![file("src/pkg/_version.py", "old", 100)],
        };
        let agents_done = chrono::DateTime::from_timestamp(200, 0);
        let found = SealedEnvironment {
            dependency_dirs: vec![".venv".into(), "node_modules".into()],
            start_files: vec![
                // Regenerated by the person after the agent's call.
                file("src/pkg/_version.py", "new", 300),
                // Hidden by the agent during its call.
                file("calc/_divfix.py", "fix", 150),
                // Made by the person after it.
                file(".env.test", "cfg", 250),
            ],
        };
        env.merge_resumed(found, agents_done);
        let files: Vec<(&str, &str)> = env
            .start_files
            .iter()
            .map(|f| (f.path.as_str(), f.blob.as_str()))
            .collect();
        assert_eq!(
            files,
            [(".env.test", "cfg"), ("src/pkg/_version.py", "new")]
        );
        assert_eq!(env.dependency_dirs, [".venv", "node_modules"]);
        // No agent ran yet: everything found is the person's.
        let mut fresh = SealedEnvironment::default();
        fresh.merge_resumed(
            SealedEnvironment {
                dependency_dirs: vec![],
                start_files: vec![file("a", "x", 1)],
            },
            None,
        );
        assert_eq!(fresh.start_files.len(), 1);
    }
}

#[cfg(test)]
mod tests {

    /// A retest's own counts: what it ran, without the tests its filter
    /// left out (which nextest reports as skipped).
    #[test]
    fn a_retest_counts_what_it_ran() {
        let r: crate::artifacts::test_results::TestResults = serde_json::from_value(serde_json::json!({
            "command": "cargo nextest run", "exit_code": 100, "duration_ms": 1, "scope": "affected",
            "framework": "nextest", "parser": "libtest", "total": 10, "passed": 1, "failed": 2,
            "skipped": 7, "errors": 0, "pass_rate": 33.3, "layer_distribution": {}, "failures": []
        }))
        .unwrap();
        let ran = RanCounts::of(&r);
        assert_eq!((ran.total, ran.passed, ran.failed), (3, 1, 2));
        assert_eq!(
            super::super::test_results::Counts::of(ran.passed, ran.failed, ran.total).cell(),
            "1/3"
        );
    }

    use super::*;

    fn v01(extra: serde_json::Value) -> serde_json::Value {
        let mut base = serde_json::json!({
            "session_id": "WFS-a",
            "current_task": "IMPL-002",
            "queue": [],
            "current_iteration": 2,
            "max_iterations": 10,
            "next_action": "retest",
            "status": "running",
            "started_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:05Z",
            "iterations": [
                {"iteration": 1, "started_at": "2026-01-01T00:00:01Z", "scope": "full",
                 "pass_rate": 50.0, "total": 4, "passed": 2, "failed": 2, "flaky_tests": ["t::a"]},
                {"iteration": 2, "started_at": "2026-01-01T00:00:02Z", "scope": "affected",
                 "pass_rate": 75.0, "total": 4, "passed": 3, "failed": 1}
            ],
            "tests_commit": "abc"
        });
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    }

    #[test]
    fn a_state_of_wfx_0_1_reads_into_the_typed_state_and_writes_back_flat() {
        let state: IterationState = serde_json::from_value(v01(serde_json::json!({}))).unwrap();
        assert_eq!(state.tests_commit.as_deref(), Some("abc"));
        assert!(state.extra.is_empty(), "{:?}", state.extra);
        assert_eq!(
            state.iterations.iter().map(|r| r.run).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(state.iterations[0].flaky_tests, ["t::a"]);
        let Action::Retest { fix } = &state.action else {
            panic!("{:?}", state.action)
        };
        assert!(fix.observed && fix.snapshot.is_none(), "{fix:?}");
        let back = serde_json::to_value(&state).unwrap();
        assert_eq!(back["next_action"], "retest");
        assert_eq!(back["tests_commit"], "abc");
        assert_eq!(back["fix"]["iteration"], 2);
        assert_eq!(back["iterations"][1]["run"], 2);
        assert_eq!(back["iterations"][0]["flaky_tests"][0], "t::a");
        let again: IterationState = serde_json::from_value(back).unwrap();
        assert_eq!(again, state);
    }

    #[test]
    fn an_action_without_its_data_is_refused_and_other_tools_fields_survive() {
        let err = serde_json::from_value::<IterationState>(v01(
            serde_json::json!({"next_action": "rollback"}),
        ))
        .unwrap_err();
        assert!(err.to_string().contains("pending_rollback"), "{err}");
        let rollback = serde_json::json!({
            "next_action": "rollback",
            "pending_rollback": {"kind": "rollback", "iteration": 1, "message": "m"},
            "reviewer": {"name": "ana"}
        });
        let state: IterationState = serde_json::from_value(v01(rollback)).unwrap();
        let Action::Rollback { rollback } = &state.action else {
            panic!()
        };
        assert_eq!(rollback.run, Some(2), "the run after the fix");
        assert_eq!(state.extra["reviewer"]["name"], "ana");
        let dup = v01(serde_json::json!({"iterations": [
            {"iteration": 1, "run": 1, "started_at": "2026-01-01T00:00:01Z", "scope": "full",
             "pass_rate": 50.0, "total": 4, "passed": 2, "failed": 2},
            {"iteration": 2, "run": 1, "started_at": "2026-01-01T00:00:02Z", "scope": "full",
             "pass_rate": 50.0, "total": 4, "passed": 2, "failed": 2}
        ]}));
        assert!(serde_json::from_value::<IterationState>(dup).is_err());
    }

    #[test]
    fn settled_runs_keep_the_last_run_of_each_iteration() {
        let state: IterationState = serde_json::from_value(v01(serde_json::json!({}))).unwrap();
        let mut recs = state.iterations.clone();
        let mut full = recs[1].clone();
        full.run = 3;
        full.scope = Scope::Full;
        recs.push(full);
        let settled = settled_runs(&recs);
        assert_eq!(
            settled
                .iter()
                .map(|r| (r.iteration, r.run))
                .collect::<Vec<_>>(),
            [(1, 1), (2, 3)]
        );
    }
}
