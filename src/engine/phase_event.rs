//! The events of phases 1–4 of `wfx test-fix-gen` (planning): each phase
//! starting and finishing, a continued session, and the plan that phase 5
//! runs. They are part of [`super::event::Event`] and of its schema.

use schemars::JsonSchema;
use serde::Serialize;

use crate::artifacts::session::{InputMode, PhaseStatus};

/// A phase (1–4) of `wfx test-fix-gen`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhaseEvent {
    pub session_id: String,
    /// 1 to 4.
    pub phase: u8,
    /// `session start`, `context gather`, `analysis`, `task generation`.
    pub title: String,
    /// Phase 1 of a new session: how the request came (`prompt`,
    /// `session`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<InputMode>,
}

/// A phase ended.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhaseFinished {
    pub session_id: String,
    pub phase: u8,
    pub title: String,
    /// `completed`, or `failed` (the error follows).
    pub status: PhaseStatus,
    pub duration_ms: u64,
}

/// `wfx test-fix-gen WFS-…` continues a session planned before.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PhasesResumed {
    pub session_id: String,
    /// The first phase not completed and its title; none when phases 1–4
    /// are all done.
    pub phase: Option<u8>,
    pub title: Option<String>,
}

/// Phases 1–4 are done: what phase 5 will run. `wfx test-fix-gen --json
/// --plan-only` prints the same fields as one document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Planned {
    pub session_id: String,
    /// The session existed and was continued.
    pub resumed: bool,
    /// The phases this run executed.
    pub phases_run: Vec<u8>,
    /// `prompt` or `session`.
    pub mode: String,
    /// INPUT as given.
    pub input: String,
    /// The initial tasks and who runs them.
    pub tasks: Vec<PlannedTask>,
    pub thresholds: Thresholds,
    /// The session's files, relative to the project root.
    pub artifacts: PlanArtifacts,
    /// The command that runs phase 5 later.
    pub next_command: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannedTask {
    pub id: String,
    pub title: String,
    /// The agent that runs it; none: wfx itself.
    pub agent: Option<String>,
}

/// What phase 5 checks.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Thresholds {
    /// IMPL-001.3's gate: the most findings of each severity it lets pass.
    pub code_validation: GateThresholds,
    /// IMPL-001.5's coverage targets, in percent.
    pub coverage: CoverageTargets,
    pub pass_threshold: f64,
    pub max_iterations: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GateThresholds {
    pub critical: u32,
    pub error: u32,
    pub warning: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CoverageTargets {
    pub line: f64,
    pub branch: f64,
    pub function: f64,
}

/// The files a plan writes, relative to the project root.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanArtifacts {
    pub session_dir: String,
    pub workflow_session: String,
    pub impl_plan: String,
    pub todo_list: String,
    pub planning_notes: String,
    pub analysis: String,
    pub context_package: String,
    pub task_dir: String,
    pub summaries_dir: String,
}
