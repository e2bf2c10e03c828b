//! What phase 5 records in a task's `meta` when it runs the task: the gate
//! thresholds phase 4 planned, the code-validation verdict and findings
//! (IMPL-001.3), coverage and its gate (IMPL-001.5), the fix strategy of a
//! fix task. Typed fields of the task file (flattened into `meta`, so the
//! JSON keeps its names); `meta.extra` holds only other tools' fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::findings::{Finding, GateVerdict};
use super::iteration_state::Strategy;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskRecord {
    /// IMPL-001.3's limits as planned (DESIGN.md §5.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateThresholds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_verdict: Option<GateVerdict>,
    /// Findings that count against the gate (or, for IMPL-001.5, the test
    /// anti-patterns found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<Finding>>,
    /// Findings on lines IMPL-001 did not change: reported, not gating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_findings: Option<Vec<Finding>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_files: Option<Vec<String>>,
    /// Soft-fail fix attempts made for IMPL-001.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_gate: Option<CoverageGate>,
    /// A fix task's strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
}

/// The code-validation gate's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GateThresholds {
    pub critical: u32,
    pub error: u32,
    pub warning: u32,
    pub max_retries: u32,
}

/// Where a coverage figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageSource {
    /// The coverage command ran and wrote a report.
    Command,
    /// A report found on disk.
    Report,
    Unknown,
}

/// Coverage as measured or read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Coverage {
    pub source: CoverageSource,
    /// The report read, relative to the project root.
    pub report: Option<String>,
    pub line: Option<f64>,
    pub branch: Option<f64>,
    pub function: Option<f64>,
    /// Why coverage is unknown or partial.
    pub note: Option<String>,
}

impl Coverage {
    /// Coverage nothing is known of, and why.
    pub fn unknown(note: impl Into<String>) -> Coverage {
        Coverage {
            source: CoverageSource::Unknown,
            report: None,
            line: None,
            branch: None,
            function: None,
            note: Some(note.into()),
        }
    }
}

/// IMPL-001.5's coverage verdict (reported, never gating).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CoverageGate {
    Unknown,
    Met,
    BelowTarget,
}
