//! `test-results.json`: one parsed test run, in the same shape for every
//! runner (DESIGN.md §3).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extra, Timestamp};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Criticality {
    Low,
    Medium,
    High,
}

/// Test layer (REFERENCE.md): `static` covers compile and collection errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    Static,
    Unit,
    Integration,
    E2e,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The whole suite ran.
    Full,
    /// A subset ran; results are merged over the last full run.
    Affected,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LayerCounts {
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayerDistribution {
    #[serde(rename = "static", default)]
    pub static_: LayerCounts,
    #[serde(default)]
    pub unit: LayerCounts,
    #[serde(default)]
    pub integration: LayerCounts,
    #[serde(default)]
    pub e2e: LayerCounts,
}

impl LayerDistribution {
    pub fn get_mut(&mut self, layer: Layer) -> &mut LayerCounts {
        match layer {
            Layer::Static => &mut self.static_,
            Layer::Unit => &mut self.unit,
            Layer::Integration => &mut self.integration,
            Layer::E2e => &mut self.e2e,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// The id the runner accepts to re-run just this test.
    pub test: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    /// First line of the error.
    #[serde(default)]
    pub error: String,
    /// Bounded excerpt of the failure output.
    #[serde(default)]
    pub message: String,
    pub criticality: Criticality,
    pub test_type: Layer,
    #[serde(default)]
    pub flaky: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Failure {
    /// Where it failed, for people: `file:line`, `file`, or empty.
    pub fn location(&self) -> String {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// Status of one test case; kept for every case so that a subset re-run can
/// be merged over the last full run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseResult {
    pub test: String,
    pub status: CaseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Layer judged when the case was parsed, so a merged result can
    /// recount `layer_distribution` without the original output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<Layer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestResults {
    pub command: String,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub duration_ms: u64,
    /// Milliseconds until the first test result appeared: the run's fixed
    /// cost (a build, a `pretest` script, the runner's start), which every
    /// subset run pays too. Absent when no result was seen as it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_ms: Option<u64>,
    pub scope: Scope,
    #[serde(default)]
    pub framework: String,
    /// Which parser produced this (`junit`, `libtest`, `tap`, …, `exit-code`).
    pub parser: String,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub errors: u32,
    pub pass_rate: f64,
    #[serde(default)]
    pub layer_distribution: LayerDistribution,
    #[serde(default)]
    pub failures: Vec<Failure>,
    #[serde(default)]
    pub output_log: Option<String>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// Every test case and its status (not in DESIGN.md's list; needed to
    /// merge progressive runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseResult>,
    /// What a reader should know about how this result came about (a
    /// subset the runner could not filter, a report that could not be read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `passed / (passed + failed + errors) × 100`, one decimal, rounded down
/// (DESIGN.md §10.4): never 100.0 while a test fails (5059/5060 → 99.9).
/// Skipped tests are excluded. No counted tests → 0.
pub fn pass_rate(passed: u32, failed: u32, errors: u32) -> f64 {
    let denom = passed as u64 + failed as u64 + errors as u64;
    if denom == 0 {
        return 0.0;
    }
    // Integer division: exact, no float rounding at the boundary.
    (passed as u64 * 1000 / denom) as f64 / 10.0
}

/// What a run in which no test was parsed shows in place of its counts.
pub const NO_TEST_RAN: &str = "no test ran";

/// The counts behind a pass rate, as people read them: passed of the tests
/// that ran (the denominator of [`pass_rate`]: skipped tests excluded), and
/// the skipped ones beside it, so "100.0%" never sits next to "11/12".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub passed: u32,
    /// Passed + failed + errors.
    pub ran: u32,
    pub skipped: u32,
}

impl Counts {
    /// From a record's `passed`, `failed` (errors included) and `total`.
    /// No test parsed (`total` and `passed` 0) is no test ran, whatever
    /// `failed` says: the one "failure" of such a run is the command.
    pub fn of(passed: u32, failed: u32, total: u32) -> Counts {
        if total == 0 && passed == 0 {
            return Counts {
                passed: 0,
                ran: 0,
                skipped: 0,
            };
        }
        let ran = passed.saturating_add(failed);
        Counts {
            passed,
            ran,
            skipped: total.saturating_sub(ran),
        }
    }

    /// The pass rate unrounded (`pass_rate` rounds down to one decimal),
    /// so a change between two runs is computed from the counts: 7/9 →
    /// 9/9 is +22.2, not 100.0 − 77.7; `None` when no test ran.
    pub fn exact_rate(&self) -> Option<f64> {
        (self.ran > 0).then(|| f64::from(self.passed) * 100.0 / f64::from(self.ran))
    }

    /// A table cell: `11/11`, or `11/11 (1 skipped)`; `no test ran`.
    pub fn cell(&self) -> String {
        if self.ran == 0 && self.skipped == 0 {
            return NO_TEST_RAN.to_string();
        }
        match self.skipped {
            0 => format!("{}/{}", self.passed, self.ran),
            n => format!("{}/{} ({n} skipped)", self.passed, self.ran),
        }
    }
}

/// In a sentence: `11/11 passed`, or `11/11 passed, 1 skipped`.
impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.ran == 0 && self.skipped == 0 {
            return f.write_str(NO_TEST_RAN);
        }
        write!(f, "{}/{} passed", self.passed, self.ran)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Counts, pass_rate};

    #[test]
    fn counts_agree_with_the_pass_rate() {
        for (passed, failed, total, cell, sentence) in [
            (11, 0, 12, "11/11 (1 skipped)", "11/11 passed, 1 skipped"),
            (9, 2, 12, "9/11 (1 skipped)", "9/11 passed, 1 skipped"),
            (10, 0, 10, "10/10", "10/10 passed"),
            (0, 0, 0, "no test ran", "no test ran"),
            // Nothing parsed, the command counted as one error.
            (0, 1, 0, "no test ran", "no test ran"),
            // A hand-edited record with total below the counts: no skip.
            (5, 5, 3, "5/10", "5/10 passed"),
        ] {
            let c = Counts::of(passed, failed, total);
            assert_eq!(c.cell(), cell);
            assert_eq!(c.to_string(), sentence);
            // The rate is computed from the same two numbers.
            let rate = pass_rate(c.passed, c.ran - c.passed, 0);
            assert_eq!(rate, pass_rate(passed, failed, 0));
        }
    }

    #[test]
    fn pass_rate_table() {
        for (p, f, e, want) in [
            (0, 0, 0, 0.0),
            (10, 0, 0, 100.0),
            (7, 3, 0, 70.0),
            (2, 1, 0, 66.6),
            (1, 1, 1, 33.3),
            (7, 2, 0, 77.7),
            (199, 1, 0, 99.5),
            (1999, 1, 0, 99.9),
            (5059, 1, 0, 99.9),
            (5059, 0, 1, 99.9),
            (u32::MAX - 1, 1, 0, 99.9),
            (1, 9999, 0, 0.0),
            (0, 0, 5, 0.0),
        ] {
            assert_eq!(pass_rate(p, f, e), want, "{p}/{f}/{e}");
        }
    }
}
