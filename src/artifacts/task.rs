//! Task JSON under `.task/` (nested shape) and the fix strategy it carries.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::test_results::Criticality;
use super::{Extra, Timestamp};

named_enum! {
    /// wfx's six statuses, plus the two other `.workflow` tools write
    /// (`ccw session task … cancelled`, CCW's task schema's `active`): those
    /// are accepted on read, kept as written until wfx changes the task, and
    /// mean what [`Self::meaning`] says (DESIGN.md §10.6): `active` is being
    /// worked on, `cancelled` was dropped by a person. (No doc comment on a
    /// variant: the schema keeps a plain `enum`.)
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum TaskStatus {
        Pending = "pending",
        InProgress = "in_progress",
        Completed = "completed",
        Failed = "failed",
        Skipped = "skipped",
        Blocked = "blocked",
        Active = "active",
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// The wfx status this value means: `active` → in_progress,
    /// `cancelled` → skipped (not run, and not a failure).
    pub fn meaning(self) -> Self {
        match self {
            Self::Active => Self::InProgress,
            Self::Cancelled => Self::Skipped,
            own => own,
        }
    }

    /// Done, one way or another: counts towards progress.
    pub fn is_done(self) -> bool {
        matches!(self.meaning(), Self::Completed | Self::Skipped)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TaskType {
    TestGen,
    CodeValidation,
    TestQualityReview,
    TestFix,
    TestFixIteration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisQuality {
    /// An analysis agent produced a valid strategy.
    Agent,
    /// The built-in analyzer produced it.
    Degraded,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusChange {
    pub from: TaskStatus,
    pub to: TaskStatus,
    pub changed_at: Timestamp,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageTarget {
    pub line: f64,
    pub branch: f64,
    pub function: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskMeta {
    #[serde(rename = "type")]
    pub kind: TaskType,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_framework: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_target: Option<CoverageTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis_quality: Option<AnalysisQuality>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis_tool: Option<String>,
    /// What running the task recorded (gates, coverage, strategy).
    #[serde(flatten)]
    pub record: super::task_record::TaskRecord,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskContext {
    #[serde(default)]
    pub requirements: Vec<String>,
    #[serde(default)]
    pub focus_paths: Vec<String>,
    #[serde(default)]
    pub acceptance: Vec<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_strategy: Option<FixStrategy>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One step of `pre_analysis` or `implementation_approach`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowStep {
    pub step: String,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestCommands {
    #[serde(default)]
    pub run_tests: Option<String>,
    #[serde(default)]
    pub run_coverage: Option<String>,
    #[serde(default)]
    pub run_specific: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowControl {
    #[serde(default)]
    pub pre_analysis: Vec<FlowStep>,
    #[serde(default)]
    pub implementation_approach: Vec<FlowStep>,
    #[serde(default)]
    pub target_files: Vec<String>,
    #[serde(default)]
    pub test_commands: TestCommands,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub files_modified: Vec<String>,
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub status: TaskStatus,
    #[serde(default)]
    pub status_history: Vec<StatusChange>,
    pub meta: TaskMeta,
    #[serde(default)]
    pub context: TaskContext,
    #[serde(default)]
    pub flow_control: FlowControl,
    #[serde(default)]
    pub result: Option<TaskResult>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Task {
    /// Change status and append the change to `status_history`; a no-op
    /// when the status is already `to`.
    pub fn set_status(&mut self, to: TaskStatus, reason: impl Into<String>, now: Timestamp) {
        if self.status == to {
            return;
        }
        self.status_history.push(StatusChange {
            from: self.status,
            to,
            changed_at: now,
            reason: reason.into(),
        });
        self.status = to;
    }
}

named_enum! {
    /// What kind of failure a root cause is, which decides who can fix it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
    pub enum FailureKind {
        /// A bug in the code under test: for the fix agent.
        Code = "code",
        /// The test itself is wrong (only with evidence: it does not parse,
        /// imports what the project does not have, asks for a missing fixture).
        Test = "test",
        /// The machine, not the project: a dependency that is not installed,
        /// the network, a port in use, permissions, time zone or locale data,
        /// memory, no tests found. Nothing a code change fixes.
        Environment = "environment",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RootCause {
    pub test: String,
    #[serde(default)]
    pub error: String,
    pub cause: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    /// The kind of this failure group, when the analysis says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModificationPoint {
    pub file: String,
    #[serde(default)]
    pub function: Option<String>,
    /// A line or range, e.g. `42` or `40-55`.
    #[serde(default)]
    pub lines: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl std::fmt::Display for ModificationPoint {
    /// `file:function:lines`, the form prompts and reports print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.file,
            self.function.as_deref().unwrap_or("?"),
            self.lines.as_deref().unwrap_or("?")
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestExecutionMode {
    AffectedOnly,
    FullSuite,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestExecution {
    pub mode: TestExecutionMode,
    #[serde(default)]
    pub affected_tests: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What an analysis (agent or built-in) proposes for one iteration. Valid
/// only if it matches `schemas/fix-strategy.schema.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixStrategy {
    pub approach: String,
    pub root_causes: Vec<RootCause>,
    pub modification_points: Vec<ModificationPoint>,
    pub test_execution: TestExecution,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_score: f64,
    #[serde(default)]
    pub expected_outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criticality_overrides: Option<BTreeMap<String, Criticality>>,
    /// The kind of the failures as a whole: `environment` when any group
    /// is (the machine must be fixed before results mean anything), `test`
    /// when every group is, else `code`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    #[serde(flatten)]
    pub extra: Extra,
}
