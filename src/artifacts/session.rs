//! `workflow-session.json`: who the session is and how far its phases got.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extra, Timestamp};

named_enum! {
    /// The first seven are wfx's own; the rest are what other `.workflow`
    /// tools write: Claude-Code-Workflow's `session_manager init`
    /// (`initialized`), its dashboard's name for active (`in_progress`),
    /// `ccw session status` (`implementing`, `reviewing`) and its archive
    /// (`archived`). Those are accepted on read, kept as written until wfx
    /// itself changes the status, and mean what [`Self::meaning`] says
    /// (DESIGN.md §10.6). (No doc comment on a variant: the schema keeps a
    /// plain `enum`, whose errors name the field's type.)
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum SessionStatus {
        Planning = "planning",
        Active = "active",
        Paused = "paused",
        AwaitingFix = "awaiting_fix",
        Completed = "completed",
        PartialSuccess = "partial_success",
        Blocked = "blocked",
        // Given up by a person (`wfx session abandon`) and archived.
        Abandoned = "abandoned",
        Initialized = "initialized",
        InProgress = "in_progress",
        Implementing = "implementing",
        Reviewing = "reviewing",
        Archived = "archived",
    }
}

impl SessionStatus {
    /// The wfx status this value means: another tool's name for one of
    /// wfx's states maps to it (`initialized` → planning; `in_progress`,
    /// `implementing`, `reviewing` → active; `archived` → completed).
    pub fn meaning(self) -> Self {
        match self {
            Self::Initialized => Self::Planning,
            Self::InProgress | Self::Implementing | Self::Reviewing => Self::Active,
            Self::Archived => Self::Completed,
            own => own,
        }
    }

    /// Finished sessions: nothing more will run without a person's say.
    pub fn is_terminal(self) -> bool {
        matches!(
            self.meaning(),
            Self::Completed | Self::PartialSuccess | Self::Abandoned
        )
    }
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum InputMode {
        /// Tests planned from a description or a requirements file.
        Prompt = "prompt",
        /// Tests for a finished implementation session.
        Session = "session",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseRecord {
    /// 1–5 (DESIGN.md §4, §5).
    pub phase: u8,
    pub name: String,
    pub status: PhaseStatus,
    #[serde(default)]
    pub started_at: Option<Timestamp>,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GitInfo {
    /// HEAD when the session started (None: unborn branch or no repository).
    #[serde(default)]
    pub base_commit: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
    /// Relative path of the `--worktree` checkout, when one is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// The `Wfx-Run` trailer of this session's commits, made once when
    /// phase 5 first runs (DESIGN.md §10.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// wfx made (some of) this session's commits without the repository's
    /// git hooks (`git.hooks: false`); the report and summaries say so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hooks_skipped: bool,
    /// `wfx run`: `HEAD` when the run paused, so that its resume can tell
    /// whether someone committed in the meantime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_head: Option<String>,
    /// `wfx run`: why the commits since `base_commit` are not all the
    /// run's (someone committed while it was paused); `git.squash` then
    /// leaves them as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_commits: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkflowSession {
    pub session_id: String,
    /// `test` for test-fix sessions, `run` for `wfx run` workflows.
    #[serde(rename = "type")]
    pub kind: String,
    /// Same information as `type`, for tools that read this name.
    pub workflow_type: String,
    pub status: SessionStatus,
    #[serde(default)]
    pub description: String,
    /// The description again, under the name Claude-Code-Workflow's
    /// session scanner and dashboard read (DESIGN.md §10.6).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub project: String,
    pub mode: InputMode,
    #[serde(default)]
    pub input: String,
    #[serde(default)]
    pub source_session_id: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_at: Option<Timestamp>,
    /// When the session moved to `archives/` (read by CCW's scanner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Timestamp>,
    #[serde(default)]
    pub git: GitInfo,
    #[serde(default)]
    pub phases: Vec<PhaseRecord>,
    #[serde(default)]
    pub wfx_version: String,
    /// The phase-5 flags recorded when the session was planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_options: Option<super::options::CycleOptions>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The phase names of a test session, in order (DESIGN.md §4–5).
pub const PHASES: [&str; 5] = [
    "session_start",
    "context_gather",
    "analysis",
    "task_generation",
    "test_cycle",
];

impl WorkflowSession {
    /// A fresh test session in `planning` with all five phases pending.
    pub fn new_test(
        session_id: String,
        description: String,
        mode: InputMode,
        input: String,
        now: Timestamp,
    ) -> Self {
        let phases = PHASES
            .iter()
            .enumerate()
            .map(|(i, name)| PhaseRecord {
                phase: (i + 1) as u8,
                name: (*name).to_string(),
                status: PhaseStatus::Pending,
                started_at: None,
                completed_at: None,
                extra: Extra::new(),
            })
            .collect();
        WorkflowSession {
            session_id,
            kind: "test".into(),
            workflow_type: "test_session".into(),
            status: SessionStatus::Planning,
            project: description.clone(),
            description,
            mode,
            input,
            source_session_id: None,
            created_at: now,
            updated_at: now,
            completed_at: None,
            resumed_at: None,
            archived_at: None,
            git: GitInfo::default(),
            phases,
            wfx_version: crate::VERSION.to_string(),
            cycle_options: None,
            extra: Extra::new(),
        }
    }

    pub fn phase_mut(&mut self, phase: u8) -> Option<&mut PhaseRecord> {
        self.phases.iter_mut().find(|p| p.phase == phase)
    }

    pub fn phase(&self, phase: u8) -> Option<&PhaseRecord> {
        self.phases.iter().find(|p| p.phase == phase)
    }
}
