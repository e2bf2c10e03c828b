//! The quality gates of the initial tasks (DESIGN.md §5.7): the
//! code-validation verdict, changed lines and coverage. The scanners live
//! in `crate::scan`; the engine's ports call them.

use std::path::Path;

use crate::artifacts::config::CoverageGate;
use crate::scan::coverage;

pub use crate::scan::findings::{Finding, GateVerdict, Severity, code_validation_gate, counts};

/// 1-based numbers of the lines of `after` that are not in `before` (a
/// line moved elsewhere counts as unchanged): where a change can have
/// introduced a finding.
pub fn changed_lines(before: &str, after: &str) -> std::collections::BTreeSet<u32> {
    let mut old: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in before.lines() {
        *old.entry(l).or_insert(0) += 1;
    }
    let mut out = std::collections::BTreeSet::new();
    for (i, l) in after.lines().enumerate() {
        match old.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                out.insert(i as u32 + 1);
            }
        }
    }
    out
}

pub use crate::artifacts::task_record::{Coverage, CoverageSource};

/// Coverage nothing is known of, and why.
pub fn unknown_coverage(note: impl Into<String>) -> Coverage {
    Coverage {
        source: CoverageSource::Unknown,
        report: None,
        line: None,
        branch: None,
        function: None,
        note: Some(note.into()),
    }
}

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

/// Read the first coverage report under `root` (DESIGN.md §5.7); `source`
/// says how it came to be (`Command` after running the coverage command,
/// `Report` for one found on disk).
pub fn read_coverage(root: &Path, source: CoverageSource) -> Coverage {
    let Some((path, format)) = coverage::find_report(root, None) else {
        return unknown_coverage(if source == CoverageSource::Command {
            "the coverage command wrote no report wfx can read (lcov, Cobertura or json-summary)"
        } else {
            "no coverage report found and no test.coverage_command configured"
        });
    };
    let rel = crate::session::Workspace::new(root).rel(&path);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return unknown_coverage(format!("cannot read {rel}: {e}")),
    };
    let exists = |p: &str| root.join(p).is_file();
    let resolve = coverage::project_resolver(root, &exists);
    match coverage::parse(format, &text, &resolve) {
        Ok(report) => Coverage {
            source,
            report: Some(rel),
            line: report.totals.line_percent(),
            branch: report.totals.branch_percent(),
            function: report.totals.function_percent(),
            note: None,
        },
        Err(e) => unknown_coverage(format!("{rel}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_the_new_ones() {
        let before = "a\nb\nc\n";
        let after = "a\nB\nc\nd\nb\n";
        assert_eq!(
            changed_lines(before, after).into_iter().collect::<Vec<_>>(),
            vec![2, 4]
        );
        assert!(changed_lines(before, before).is_empty());
    }

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
        assert_eq!(coverage_text(&unknown_coverage("x")), "unknown");
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
        let c = read_coverage(dir.path(), CoverageSource::Report);
        assert_eq!(c.report.as_deref(), Some("coverage/lcov.info"));
        assert_eq!(c.line, Some(75.0));
        assert_eq!(
            read_coverage(tempfile::tempdir().unwrap().path(), CoverageSource::Report).source,
            CoverageSource::Unknown
        );
    }
}
