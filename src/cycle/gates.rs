//! The quality gates of the initial tasks (DESIGN.md §5.7): the static
//! scans (AI issues for IMPL-001.3, test anti-patterns for IMPL-001.5),
//! the code-validation verdict and coverage. The scanners themselves live
//! in `crate::scan`; every call into them is in [`ai_issue_scan`] and
//! [`antipattern_scan`].

use std::path::Path;

use serde::Serialize;

use crate::artifacts::config::{CodeValidationGate, CoverageGate};
use crate::scan::coverage;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Critical,
    Error,
    Warning,
}

/// One problem a scan (or an L0 command) found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub category: String,
    pub check: String,
    pub severity: Severity,
    pub file: String,
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        let sev = match self.severity {
            Severity::Critical => "critical",
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{sev} [{}/{}] {}",
            self.category, self.check, self.message
        )
    }
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub critical: u32,
    pub error: u32,
    pub warning: u32,
}

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

/// The verdict of the code-validation gate (REFERENCE.md "Gates").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    Pass,
    SoftFail,
    HardFail,
}

/// PASS within every limit; HARD_FAIL over the critical limit; SOFT_FAIL
/// otherwise. Spent retries turn a soft fail into a block (the caller's
/// business).
pub fn code_validation_gate(c: &Counts, limits: &CodeValidationGate) -> GateVerdict {
    if c.critical > limits.critical {
        GateVerdict::HardFail
    } else if c.error > limits.error || c.warning > limits.warning {
        GateVerdict::SoftFail
    } else {
        GateVerdict::Pass
    }
}

/// A scan's answer: its findings, or why it did not run.
pub enum Scan {
    Ran(Vec<Finding>),
    Unavailable(&'static str),
}

/// The AI-issue scan (REFERENCE.md, L0.5) of `files` (project-relative).
pub fn ai_issue_scan(_root: &Path, files: &[String]) -> Scan {
    if files.is_empty() {
        return Scan::Ran(Vec::new());
    }
    Scan::Unavailable("the AI-issue scan is not part of this build")
}

/// The test anti-pattern scan (REFERENCE.md) of test files.
pub fn antipattern_scan(_root: &Path, files: &[String]) -> Scan {
    if files.is_empty() {
        return Scan::Ran(Vec::new());
    }
    Scan::Unavailable("the test anti-pattern scan is not part of this build")
}

/// Coverage as measured or read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    /// `command`, `report` or `unknown`.
    pub source: String,
    /// The report read, relative to the project root.
    pub report: Option<String>,
    pub line: Option<f64>,
    pub branch: Option<f64>,
    pub function: Option<f64>,
    /// Why coverage is unknown or partial.
    pub note: Option<String>,
}

impl Coverage {
    pub fn unknown(note: impl Into<String>) -> Coverage {
        Coverage {
            source: "unknown".into(),
            report: None,
            line: None,
            branch: None,
            function: None,
            note: Some(note.into()),
        }
    }

    /// Metrics below their target, as `line 62.0% < 80.0%`; empty when
    /// nothing is known or everything meets its target.
    pub fn shortfalls(&self, target: &CoverageGate) -> Vec<String> {
        let mut out = Vec::new();
        for (name, value, want) in [
            ("line", self.line, target.line),
            ("branch", self.branch, target.branch),
            ("function", self.function, target.function),
        ] {
            if let Some(v) = value
                && v < want
            {
                out.push(format!("{name} {v:.1}% < {want:.1}%"));
            }
        }
        out
    }

    /// `line 84.0%, branch 71.5%, function unknown`.
    pub fn text(&self) -> String {
        if self.source == "unknown" {
            return "unknown".into();
        }
        let show = |v: Option<f64>| v.map_or("unknown".to_string(), |v| format!("{v:.1}%"));
        format!(
            "line {}, branch {}, function {}",
            show(self.line),
            show(self.branch),
            show(self.function)
        )
    }
}

/// Read the first coverage report under `root` (DESIGN.md §5.7); `source`
/// says how it came to be (`command` after running the coverage command,
/// `report` for one found on disk).
pub fn read_coverage(root: &Path, source: &str) -> Coverage {
    let Some((path, format)) = coverage::find_report(root, None) else {
        return Coverage::unknown(if source == "command" {
            "the coverage command wrote no report wfx can read (lcov, Cobertura or json-summary)"
        } else {
            "no coverage report found and no test.coverage_command configured"
        });
    };
    let rel = crate::session::Workspace::new(root).rel(&path);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Coverage::unknown(format!("cannot read {rel}: {e}")),
    };
    let exists = |p: &str| root.join(p).is_file();
    let resolve = coverage::project_resolver(root, &exists);
    match coverage::parse(format, &text, &resolve) {
        Ok(report) => Coverage {
            source: source.into(),
            report: Some(rel),
            line: report.totals.line_percent(),
            branch: report.totals.branch_percent(),
            function: report.totals.function_percent(),
            note: None,
        },
        Err(e) => Coverage::unknown(format!("{rel}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(sev: Severity) -> Finding {
        Finding {
            category: "placeholder_code".into(),
            check: "todo_implement".into(),
            severity: sev,
            file: "src/a.rs".into(),
            line: Some(3),
            message: "TODO: implement".into(),
        }
    }

    #[test]
    fn gate_table() {
        let limits = CodeValidationGate::default();
        let cases = [
            (vec![], GateVerdict::Pass),
            (vec![Severity::Error; 3], GateVerdict::Pass),
            (vec![Severity::Error; 4], GateVerdict::SoftFail),
            (vec![Severity::Warning; 11], GateVerdict::SoftFail),
            (vec![Severity::Critical], GateVerdict::HardFail),
        ];
        for (sevs, want) in cases {
            let fs: Vec<Finding> = sevs.into_iter().map(finding).collect();
            assert_eq!(code_validation_gate(&counts(&fs), &limits), want, "{fs:?}");
        }
        assert_eq!(
            finding(Severity::Error).to_string(),
            "src/a.rs:3: error [placeholder_code/todo_implement] TODO: implement"
        );
    }

    #[test]
    fn coverage_shortfalls() {
        let c = Coverage {
            source: "report".into(),
            report: Some("coverage/lcov.info".into()),
            line: Some(62.0),
            branch: None,
            function: Some(90.0),
            note: None,
        };
        assert_eq!(
            c.shortfalls(&CoverageGate::default()),
            vec!["line 62.0% < 80.0%".to_string()]
        );
        assert_eq!(c.text(), "line 62.0%, branch unknown, function 90.0%");
        assert_eq!(Coverage::unknown("x").text(), "unknown");
    }

    #[test]
    fn coverage_from_an_lcov_report() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("coverage")).unwrap();
        std::fs::write(dir.path().join("a.py"), "x\n").unwrap();
        std::fs::write(
            dir.path().join("coverage/lcov.info"),
            "SF:a.py\nDA:1,1\nDA:2,0\nDA:3,1\nDA:4,1\nend_of_record\n",
        )
        .unwrap();
        let c = read_coverage(dir.path(), "report");
        assert_eq!(c.report.as_deref(), Some("coverage/lcov.info"));
        assert_eq!(c.line, Some(75.0));
        assert_eq!(
            read_coverage(tempfile::tempdir().unwrap().path(), "report").source,
            "unknown"
        );
    }
}
