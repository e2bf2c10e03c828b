//! `.process/fix-history.json`: every fix attempt, whatever became of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::iteration_state::Strategy;
use super::{Extra, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestEditKind {
    /// A test function disappeared.
    RemovedTest,
    /// A skip/ignore/only marker was added.
    SkipAdded,
    /// The total number of tests dropped.
    CountDropped,
    /// A test file was changed in another way.
    Modified,
}

/// A change to the tests that a fix made (DESIGN.md §5.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestEdit {
    pub kind: TestEditKind,
    pub file: String,
    #[serde(default)]
    pub detail: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diffstat {
    pub files: u32,
    pub insertions: u32,
    pub deletions: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixAttempt {
    pub iteration: u32,
    pub fix_task: String,
    /// Agent name, or `manual`.
    pub agent: String,
    #[serde(default)]
    pub strategy: Option<Strategy>,
    pub started_at: Timestamp,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    #[serde(default)]
    pub files_changed: Vec<String>,
    #[serde(default)]
    pub diffstat: Diffstat,
    #[serde(default)]
    pub test_edits: Vec<TestEdit>,
    #[serde(default)]
    pub pass_rate_before: Option<f64>,
    #[serde(default)]
    pub pass_rate_after: Option<f64>,
    /// `improved`, `no_change`, `regression`, `rolled_back`, `rejected`, …
    #[serde(default)]
    pub outcome: String,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One agent call of any role (analysis, fix, test generation), kept so
/// the session's cost is known and every fallback can be traced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `analysis`, `fix` or `test_gen`.
    pub role: String,
    pub agent: String,
    pub started_at: Timestamp,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    /// The agent's envelope reported an error.
    #[serde(default)]
    pub is_error: bool,
    /// `unavailable`, `timeout`, `rate_limit`, `server_error`,
    /// `connection_error` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// Tokens the agent's envelope reported (where the CLI reports them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `accepted`, or why the result was passed over (a fallback reason).
    #[serde(default)]
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixHistory {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub entries: Vec<FixAttempt>,
    /// Every agent call of the session, fix calls included: the session's
    /// cost (`agents.max_cost_usd`) is the sum of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_calls: Vec<AgentCall>,
    #[serde(flatten)]
    pub extra: Extra,
}
