//! The quality gates of the initial tasks (DESIGN.md §5.7): the
//! code-validation verdict and coverage against its target. The scanners
//! and the coverage readers live in `crate::scan`; the engine's ports call
//! them.

use crate::artifacts::config::{CodeValidationGate, CoverageGate};
pub use crate::artifacts::findings::{Counts, Finding, GateVerdict, Severity, counts};
pub use crate::artifacts::task_record::{Coverage, CoverageSource};

/// Metrics below their target, as `line 62.0% < 80.0%`; empty when
/// nothing is known or everything meets its target.
pub fn shortfalls(c: &Coverage, target: &CoverageGate) -> Vec<String> {
    let mut out = Vec::new();
    for (name, value, want) in [
        ("line", c.line, target.line),
        ("branch", c.branch, target.branch),
        ("function", c.function, target.function),
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
pub fn coverage_text(c: &Coverage) -> String {
    if c.source == CoverageSource::Unknown {
        return "unknown".into();
    }
    let show = |v: Option<f64>| v.map_or("unknown".to_string(), |v| format!("{v:.1}%"));
    format!(
        "line {}, branch {}, function {}",
        show(c.line),
        show(c.branch),
        show(c.function)
    )
}

/// The gate of REFERENCE.md "Gates": PASS = critical ≤ limit (0 by default),
/// errors ≤ limit, warnings ≤ limit; SOFT_FAIL = within the critical limit but
/// over another one; HARD_FAIL = over the critical limit. Spending the
/// retries is the caller's business (it turns a soft fail into a block).
pub fn code_validation_gate(c: &Counts, limits: &CodeValidationGate) -> GateVerdict {
    if c.critical > limits.critical {
        GateVerdict::HardFail
    } else if c.error > limits.error || c.warning > limits.warning {
        GateVerdict::SoftFail
    } else {
        GateVerdict::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_shortfalls() {
        let c = Coverage {
            source: CoverageSource::Report,
            report: Some("coverage/lcov.info".into()),
            line: Some(62.0),
            branch: None,
            function: Some(90.0),
            note: None,
        };
        assert_eq!(
            shortfalls(&c, &CoverageGate::default()),
            vec!["line 62.0% < 80.0%".to_string()]
        );
        assert_eq!(
            coverage_text(&c),
            "line 62.0%, branch unknown, function 90.0%"
        );
        assert_eq!(coverage_text(&Coverage::unknown("x")), "unknown");
    }

    #[test]
    fn gate_table() {
        let limits = CodeValidationGate::default();
        let cases: &[((u32, u32, u32), GateVerdict)] = &[
            ((0, 0, 0), GateVerdict::Pass),
            ((0, 3, 10), GateVerdict::Pass),
            ((0, 4, 0), GateVerdict::SoftFail),
            ((0, 0, 11), GateVerdict::SoftFail),
            ((0, 4, 11), GateVerdict::SoftFail),
            ((1, 0, 0), GateVerdict::HardFail),
            ((2, 9, 99), GateVerdict::HardFail),
        ];
        for &((critical, error, warning), want) in cases {
            let c = Counts {
                critical,
                error,
                warning,
            };
            assert_eq!(code_validation_gate(&c, &limits), want, "{c:?}");
        }
        let loose = CodeValidationGate {
            critical: 1,
            error: 0,
            warning: 0,
            max_retries: 2,
        };
        let one_critical = Counts {
            critical: 1,
            error: 0,
            warning: 0,
        };
        assert_eq!(
            code_validation_gate(&one_critical, &loose),
            GateVerdict::Pass
        );
    }
}
