//! `.process/iteration-state.json`: the state machine of phase 5 (DESIGN.md §5).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::test_results::{Failure, Scope};
use super::{Extra, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NextAction {
    ExecuteTask,
    RunTests,
    AnalyzeFailures,
    ExecuteFixTask,
    Retest,
    Rollback,
    FinalValidation,
    Complete,
    None,
}

impl NextAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExecuteTask => "execute_task",
            Self::RunTests => "run_tests",
            Self::AnalyzeFailures => "analyze_failures",
            Self::ExecuteFixTask => "execute_fix_task",
            Self::Retest => "retest",
            Self::Rollback => "rollback",
            Self::FinalValidation => "final_validation",
            Self::Complete => "complete",
            Self::None => "none",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    Conservative,
    Aggressive,
    Surgical,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conservative => "conservative",
            Self::Aggressive => "aggressive",
            Self::Surgical => "surgical",
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

/// One test run of the loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationRecord {
    pub iteration: u32,
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
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IterationState {
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
    #[serde(default)]
    pub iterations: Vec<IterationRecord>,
    /// The run whose results describe the code as it is now: the last run,
    /// or after a rollback the run before the undone fix. Retests are
    /// merged over it and compared with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_run: Option<u32>,
    /// The fix attempt of `current_iteration` while it is in flight: its
    /// snapshot is persisted before the fix runs, so a run killed during
    /// the fix still knows what the fix changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixInFlight>,
    /// A checkpoint commit that was decided but is not yet known to exist;
    /// made (idempotently, by its trailers) before anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_commit: Option<PendingCommit>,
    /// The rollback decided for `next_action: rollback`: which fix, and
    /// the commit message saying why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_rollback: Option<PendingCommit>,
    /// Snapshot of the work tree before IMPL-001 generated tests, so the
    /// generated tests can be committed once the gates passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_snapshot: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A fix attempt between its snapshot and its retest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixInFlight {
    pub iteration: u32,
    /// Git tree id of the work tree before the fix (none outside git).
    #[serde(default)]
    pub snapshot: Option<String>,
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
}

/// A commit decided in one step and made in the next (see
/// [`IterationState::pending_commit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingCommit {
    /// `fix` (a fix attempt), `tests` (IMPL-001's generated tests,
    /// iteration 0) or `rollback`.
    pub kind: String,
    pub iteration: u32,
    pub message: String,
    /// Project-relative paths to commit, with the session's artifacts.
    #[serde(default)]
    pub paths: Vec<String>,
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
