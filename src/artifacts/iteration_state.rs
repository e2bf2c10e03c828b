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
    #[serde(flatten)]
    pub extra: Extra,
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
