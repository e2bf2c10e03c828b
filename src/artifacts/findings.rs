//! What the static scans (AI-issue scan, test anti-patterns) find, as
//! task records keep it and the code-validation gate (`cycle::gates`)
//! judges it (REFERENCE.md "Gates"). Kept free of scanning logic so
//! reports, prompts and artifacts can use it without the scanners.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

named_enum! {
    /// How bad a finding is; the gate counts each level against its own limit.
    #[derive(
        Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
    )]
    pub enum Severity {
        /// Blocks the gate outright (hard fail).
        Critical = "critical",
        /// Fixable; more than the configured number is a soft fail.
        Error = "error",
        /// Worth a look; more than the configured number is a soft fail.
        Warning = "warning",
    }
}

/// One problem found by a scan, at a place a person (or a fix agent) can
/// jump to. `check` is a stable id listed in `docs/scans.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// The REFERENCE.md category, snake_case (e.g. `hallucinated_imports`).
    pub category: String,
    /// Stable id of the check (e.g. `undeclared_package`).
    pub check: String,
    /// Decides how the finding counts against the gate's limits.
    pub severity: Severity,
    /// Path relative to the project root, `/`-separated.
    pub file: String,
    /// 1-based line, when the finding has one.
    pub line: Option<u32>,
    /// What is wrong and, where it helps, the fix ("did you mean `x`?").
    pub message: String,
}

impl Finding {
    /// A finding at `line` (1-based) of `file`.
    pub fn new(
        category: &str,
        check: &str,
        severity: Severity,
        file: &str,
        line: Option<u32>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            category: category.to_string(),
            check: check.to_string(),
            severity,
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: ", self.file, line)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(
            f,
            "{} [{}/{}] {}",
            self.severity.as_str(),
            self.category,
            self.check,
            self.message
        )
    }
}

/// Number of findings per severity: what the gate compares with its limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub critical: u32,
    pub error: u32,
    pub warning: u32,
}

/// Count findings per severity, the input of the code-validation gate
/// (`cycle::gates::code_validation_gate`).
pub fn counts(findings: &[Finding]) -> Counts {
    let mut c = Counts::default();
    for f in findings {
        match f.severity {
            Severity::Critical => c.critical += 1,
            Severity::Error => c.error += 1,
            Severity::Warning => c.warning += 1,
        }
    }
    c
}

/// Verdict of the code-validation gate (IMPL-001.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    /// Within every limit.
    Pass,
    /// No critical finding beyond the limit, but too many errors or warnings:
    /// fixable, the fix agent gets the findings (at most `max_retries` times).
    SoftFail,
    /// Critical findings beyond the limit: blocked with a report.
    HardFail,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(sev: Severity) -> Finding {
        Finding::new("c", "k", sev, "a.rs", Some(1), "m")
    }

    #[test]
    fn counts_per_severity() {
        let fs = vec![
            f(Severity::Critical),
            f(Severity::Error),
            f(Severity::Error),
            f(Severity::Warning),
        ];
        assert_eq!(
            counts(&fs),
            Counts {
                critical: 1,
                error: 2,
                warning: 1
            }
        );
    }
}
