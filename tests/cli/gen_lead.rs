//! TEST_ANALYSIS_RESULTS.md and IMPL_PLAN.md lead with what is specific
//! to the project (its failing tests when a `wfx test` ran, its untested
//! files, its numbers), keep every section DESIGN.md §4 names, and say each
//! configured value once rather than repeating the config.

use crate::common;

use common::Env;

const DIR: &str = ".workflow/active/WFS-test-the-calculator";

/// The eight sections of phase 3, in DESIGN.md §4's order.
const SECTIONS: [&str; 8] = [
    "## 1. Project Type Detection",
    "## 2. Coverage Assessment",
    "## 3. Test Framework & Conventions",
    "## 4. Multi-Layered Test Plan (L0–L3)",
    "## 5. AI Issue Scan Results",
    "## 6. Test Requirements by File",
    "## 7. Quality Assurance Criteria",
    "## 8. Success Criteria",
];

/// py-calc with one more module that no test imports, after a real
/// `wfx test` run (pytest: 2 failures), planned with `--plan-only`.
fn planned_after_a_test_run() -> Env {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.write(
        "calc/report.py",
        "def summary(values):\n    return f\"{len(values)} values\"\n",
    );
    env.git_init_commit();
    // The failing run: exit 1, results cached in .workflow/.cache/.
    env.wfx_live().arg("test").assert().code(1);
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    env
}

fn before<'a>(text: &'a str, heading: &str) -> &'a str {
    let at = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading}:\n{text}"));
    &text[..at]
}

#[test]
fn the_analysis_starts_with_this_projects_failures_and_gaps() {
    let env = planned_after_a_test_run();
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));

    // Every section DESIGN.md §4 names, in order, after the project's facts.
    let mut at = 0;
    for s in SECTIONS {
        let found = analysis[at..]
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing or out of order:\n{analysis}"));
        at += found + s.len();
    }
    let lead = before(&analysis, SECTIONS[0]);
    assert!(lead.contains("\n## This project\n"), "{analysis}");
    // Its failing tests, where they fail and why, from the last `wfx test`.
    assert!(
        lead.contains("- Failing now, per the last `wfx test` ("),
        "{lead}"
    );
    assert!(lead.contains("2 of 12 tests."), "{lead}");
    assert!(
        lead.contains(
            "  - `tests/test_ops.py::test_divide_by_zero_returns_none` at `tests/test_ops.py:15`: ZeroDivisionError: division by zero"
        ),
        "{lead}"
    );
    assert!(
        lead.contains(
            "  - `tests/test_auth.py::test_validate_token` at `tests/test_auth.py:17`: AssertionError"
        ),
        "{lead}"
    );
    // Its numbers and its untested file.
    assert!(
        lead.contains("4 source files and 2 test files: 3 of 4 source files have tests (75.0%)"),
        "{lead}"
    );
    assert!(
        lead.contains("- Without tests: 1 source file: `calc/report.py` (low)."),
        "{lead}"
    );
    assert!(lead.contains("tested with **pytest**"), "{lead}");

    // The generic checklist is said once, not once per file.
    assert_eq!(
        analysis
            .matches("negative path (invalid input, errors)")
            .count(),
        1,
        "{analysis}"
    );
}

#[test]
fn the_plan_starts_with_the_failing_tests_and_says_each_setting_once() {
    let env = planned_after_a_test_run();
    let plan = env.read(&format!("{DIR}/IMPL_PLAN.md"));
    let body = plan.splitn(3, "---\n").nth(2).expect("front matter");
    let lead = before(body, "## 1. Test Generation (IMPL-001)");
    assert!(
        lead.contains("Failing now, per the last `wfx test` ("),
        "{lead}"
    );
    assert!(lead.contains("2 of 12 tests — `tests/test_"), "{lead}");
    assert!(
        lead.contains(
            "`tests/test_ops.py::test_divide_by_zero_returns_none` (`tests/test_ops.py:15`)"
        ),
        "{lead}"
    );
    assert!(lead.contains("Without tests: `calc/report.py` ("), "{lead}");
    for section in [
        "## 1. Test Generation (IMPL-001)",
        "## 2. Quality Gates",
        "## 3. Fix Cycle (IMPL-002)",
        "## 4. Source Session Context",
    ] {
        assert!(body.contains(section), "{section}");
    }
    // Settings from .workflow/wfx.json (defaults here): at most once in
    // the body, which no longer restates gates, coverage targets or the
    // rollback rules.
    for value in ["95.0%", "10 fix attempts", "80.0%", "≤ 3 errors", "10.0 pp"] {
        assert!(
            body.matches(value).count() <= 1,
            "{value} repeated:\n{body}"
        );
    }
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));
    for value in ["95.0%", "10 fix attempts", "3 errors", "10 warnings"] {
        assert!(
            analysis.matches(value).count() <= 1,
            "{value} repeated:\n{analysis}"
        );
    }
}

/// Without a `wfx test` run there is nothing to claim: no failure line.
#[test]
fn without_a_test_run_no_failures_are_claimed() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));
    let plan = env.read(&format!("{DIR}/IMPL_PLAN.md"));
    assert!(!analysis.contains("Failing now"), "{analysis}");
    assert!(!plan.contains("Failing now"), "{plan}");
    assert!(
        before(&analysis, SECTIONS[0])
            .contains("- Without tests: none, every source file has a test file."),
        "{analysis}"
    );
}
