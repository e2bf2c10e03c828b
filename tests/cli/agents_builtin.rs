//! The built-in analyzer on the recorded outputs of real runners
//! (`fixtures/outputs/`), with failures as the runner's parsers produce
//! them: it must find the right file and line for each failure and name the
//! function to change.

use crate::common;

use std::path::{Path, PathBuf};

use common::{copy_dir, failures_of, recorded, results_with};
use wfx::agents::builtin::{self, BuiltinAnalysis};
use wfx::artifacts::fix_history::FixHistory;
use wfx::artifacts::test_results::Failure;
use wfx::render::Renderer;
use wfx::testing::parse::{gotest, jest, junit, libtest, nextest, tap};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn project(rel: &str) -> PathBuf {
    fixtures().join(rel)
}

/// Expected per failure: test id → (file, line) of the root cause.
type Want<'a> = &'a [(&'a str, Option<(&'a str, u32)>)];

fn check(
    name: &str,
    root: &Path,
    failures: Vec<Failure>,
    log: &str,
    want: Want,
    points: &[&str],
) -> BuiltinAnalysis {
    let results = results_with(failures, "test");
    let a = builtin::analyze(&results, log, root, &FixHistory::default());
    let got: Vec<(String, Option<(String, u32)>)> = a
        .strategy
        .root_causes
        .iter()
        .map(|rc| (rc.test.clone(), rc.file.clone().zip(rc.line)))
        .collect();
    let want: Vec<(String, Option<(String, u32)>)> = want
        .iter()
        .map(|(t, loc)| (t.to_string(), loc.map(|(f, l)| (f.to_string(), l))))
        .collect();
    assert_eq!(got, want, "{name}: root causes");
    assert_eq!(a.points_text(), points, "{name}: modification points");
    let md = builtin::markdown(&Renderer::new(None), 1, &a).unwrap();
    if let Some(dir) = std::env::var_os("WFX_DUMP_REPORTS") {
        std::fs::write(
            Path::new(&dir).join(format!("{}.md", name.replace(' ', "_"))),
            &md,
        )
        .unwrap();
    }
    assert!(md.contains("(quality: degraded)"), "{name}");
    a
}

/// The same failures with everything the runner located removed: the
/// analyzer must find the locations in the log by itself.
fn bare(failures: &[Failure]) -> Vec<Failure> {
    failures
        .iter()
        .map(|f| Failure {
            file: None,
            line: None,
            message: String::new(),
            ..f.clone()
        })
        .collect()
}

fn both(name: &str, root: &Path, failures: Vec<Failure>, log: &str, want: Want, points: &[&str]) {
    check(name, root, failures.clone(), log, want, points);
    check(
        &format!("{name} (from the log only)"),
        root,
        bare(&failures),
        log,
        want,
        points,
    );
}

#[test]
fn pytest() {
    let run = junit::parse(&recorded("pytest-junit.xml")).unwrap();
    let a = check(
        "pytest",
        &project("projects/py-calc"),
        failures_of(&run),
        &recorded("pytest-console.txt"),
        &[
            (
                "tests/test_auth.py::test_validate_token",
                Some(("tests/test_auth.py", 17)),
            ),
            (
                "tests/test_ops.py::test_divide_by_zero_returns_none",
                Some(("calc/ops.py", 10)),
            ),
        ],
        &[
            "calc/auth.py:validate_token:14-19",
            "calc/ops.py:divide:8-10",
        ],
    );
    assert_eq!(
        a.strategy.test_execution.affected_tests,
        [
            "tests/test_auth.py::test_validate_token",
            "tests/test_ops.py::test_divide_by_zero_returns_none",
            "tests/test_auth.py",
            "tests/test_ops.py",
        ]
    );
    assert_eq!(
        a.strategy.root_causes[1].cause,
        "ZeroDivisionError: division by zero raised in divide (calc/ops.py:10)"
    );
    assert_eq!(
        a.strategy.root_causes[0].cause,
        "AssertionError: assert False is True at test_validate_token (tests/test_auth.py:17); the value under test comes from calc/auth.py:validate_token:14-19 (the test imports it from there)"
    );
    // Imported (0.7) and raised there (0.8), one failure each.
    assert_eq!(a.strategy.confidence_score, 0.75);
    check(
        "pytest (from the log only)",
        &project("projects/py-calc"),
        bare(&failures_of(&run)),
        &recorded("pytest-console.txt"),
        &[
            (
                "tests/test_auth.py::test_validate_token",
                Some(("tests/test_auth.py", 17)),
            ),
            (
                "tests/test_ops.py::test_divide_by_zero_returns_none",
                Some(("calc/ops.py", 10)),
            ),
        ],
        &[
            "calc/auth.py:validate_token:14-19",
            "calc/ops.py:divide:8-10",
        ],
    );
}

#[test]
fn pytest_collection_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&project("projects/py-calc"), dir.path());
    std::fs::copy(
        fixtures().join("outputs/sources/py-calc-collect-error-test_units.py"),
        dir.path().join("tests/test_units.py"),
    )
    .unwrap();
    let run = junit::parse(&recorded("pytest-collect-error-junit.xml")).unwrap();
    // The test imports `calc.units`, which the project does not have: the
    // test is wrong (evidence), and a test file is never a place to fix.
    both(
        "pytest collection error",
        dir.path(),
        failures_of(&run),
        &recorded("pytest-collect-error-console.txt"),
        &[("tests/test_units.py", Some(("tests/test_units.py", 1)))],
        &[],
    );
    let results = results_with(failures_of(&run), "junit");
    let a = builtin::analyze(
        &results,
        &recorded("pytest-collect-error-console.txt"),
        dir.path(),
        &FixHistory::default(),
    );
    assert_eq!(
        a.strategy.failure_kind,
        Some(wfx::artifacts::task::FailureKind::Test)
    );
    assert!(
        a.strategy.root_causes[0]
            .cause
            .contains("imports `calc.units`, which does not exist"),
        "{}",
        a.strategy.root_causes[0].cause
    );
}

#[test]
fn cargo_test() {
    let want: Want = &[
        (
            "rust_calc::stats::tests::mean_of_three",
            Some(("src/stats.rs", 28)),
        ),
        (
            "rust_calc::tests::divide_negative",
            Some(("src/lib.rs", 47)),
        ),
        (
            "rust_calc::src/lib.rs - divide (line 16)",
            Some(("src/lib.rs", 16)),
        ),
    ];
    let points = ["src/stats.rs:mean:4-10", "src/lib.rs:divide:19-24"];
    let log = recorded("cargo-test.txt");
    both(
        "cargo test",
        &project("projects/rust-calc"),
        failures_of(&libtest::parse(&log)),
        &log,
        want,
        &points,
    );
    let log = recorded("cargo-test-fail-fast.txt");
    both(
        "cargo test (fail fast)",
        &project("projects/rust-calc"),
        failures_of(&libtest::parse(&log)),
        &log,
        &want[..2],
        &points,
    );
}

#[test]
fn cargo_compile_error() {
    let log = recorded("cargo-test-compile-error.txt");
    let failures = failures_of(&libtest::parse(&log));
    assert_eq!(failures.len(), 1, "one static failure");
    // The source in fixtures/projects is the fixed version of line 28; the
    // analyzer still names the function the compiler pointed into.
    check(
        "cargo compile error",
        &project("projects/rust-calc"),
        failures.clone(),
        &log,
        &[(&failures[0].test, Some(("src/lib.rs", 28)))],
        &["src/lib.rs:parse_number:27-29"],
    );
}

#[test]
fn nextest() {
    let want: Want = &[
        (
            "rust-calc stats::tests::mean_of_three",
            Some(("src/stats.rs", 28)),
        ),
        ("rust-calc tests::divide_negative", Some(("src/lib.rs", 47))),
    ];
    let points = ["src/stats.rs:mean:4-10", "src/lib.rs:divide:19-24"];
    let log = recorded("nextest.txt");
    both(
        "nextest",
        &project("projects/rust-calc"),
        failures_of(&nextest::parse(&log)),
        &log,
        want,
        &points,
    );
    let run = junit::parse(&recorded("nextest-junit.xml")).unwrap();
    both(
        "nextest junit",
        &project("projects/rust-calc"),
        failures_of(&run),
        &log,
        want,
        &points,
    );
}

#[test]
fn node_test_runner() {
    let want: Want = &[
        (
            "test/math.test.js › math › finds the max",
            Some(("test/math.test.js", 17)),
        ),
        (
            "test/strings.test.js › strings › slugifies a title",
            Some(("test/strings.test.js", 19)),
        ),
    ];
    let points = ["src/math.js:max:15-21", "src/strings.js:slugify:9-11"];
    let tap_log = recorded("node-tap.txt");
    let failures = failures_of(&tap::parse(&tap_log));
    both(
        "node tap",
        &project("projects/node-calc"),
        failures.clone(),
        &tap_log,
        want,
        &points,
    );
    both(
        "node spec",
        &project("projects/node-calc"),
        bare(&failures),
        &recorded("node-spec.txt"),
        want,
        &points,
    );
}

#[test]
fn jest() {
    let run = jest::parse(&recorded("jest.json")).unwrap();
    both(
        "jest",
        &project("outputs/sources/jest-calc"),
        failures_of(&run),
        &recorded("jest-console.txt"),
        &[
            (
                "test/math.test.js › math › finds the max",
                Some(("test/math.test.js", 13)),
            ),
            (
                "test/strings.test.js › strings › slugifies a title",
                Some(("test/strings.test.js", 15)),
            ),
        ],
        &["src/math.js:max:15-21", "src/strings.js:slugify:9-11"],
    );
}

#[test]
fn vitest() {
    let run = junit::parse(&recorded("vitest-junit.xml")).unwrap();
    both(
        "vitest",
        &project("outputs/sources/vitest-calc"),
        failures_of(&run),
        &recorded("vitest-console.txt"),
        &[
            (
                "test/math.test.js › math › finds the max",
                Some(("test/math.test.js", 14)),
            ),
            (
                "test/strings.test.js › strings › slugifies a title",
                Some(("test/strings.test.js", 12)),
            ),
        ],
        &["src/math.js:max:13-19", "src/strings.js:slugify:7-9"],
    );
}

#[test]
fn go_test_json() {
    let log = recorded("go-test.json");
    let run = gotest::parse(&log, Some("example.com/gocalc"));
    both(
        "go test -json",
        &project("outputs/sources/go-calc"),
        failures_of(&run),
        &log,
        &[
            ("example.com/gocalc/calc/TestMax", None),
            (
                "example.com/gocalc/calc/TestMax/largest_last",
                Some(("calc/calc_test.go", 23)),
            ),
        ],
        &["calc/calc.go:Max:10-18"],
    );
}

#[test]
fn go_build_failure() {
    let log = recorded("go-test-build-fail.json");
    let failures = failures_of(&gotest::parse(&log, Some("example.com/gocalc")));
    assert_eq!(failures.len(), 1);
    both(
        "go build failure",
        &project("outputs/sources/go-calc"),
        failures.clone(),
        &log,
        &[(&failures[0].test, Some(("calc/calc.go", 6)))],
        &["calc/calc.go:Add:5-7"],
    );
}

#[test]
fn maven_surefire() {
    let run = junit::parse(&recorded("surefire-TEST-calc.CalcTest.xml")).unwrap();
    both(
        "surefire",
        &project("outputs/sources/maven-calc"),
        failures_of(&run),
        &recorded("maven-surefire-console.txt"),
        &[
            (
                "calc.CalcTest#dividesByZeroToZero",
                Some(("src/test/java/calc/CalcTest.java", 21)),
            ),
            (
                "calc.CalcTest#findsTheMax",
                Some(("src/test/java/calc/CalcTest.java", 16)),
            ),
        ],
        &[
            "src/main/java/calc/Calc.java:divide:22-24",
            "src/main/java/calc/Calc.java:max:11-19",
        ],
    );
}

#[test]
fn fix_history_lowers_confidence_and_is_noted() {
    let run = junit::parse(&recorded("pytest-junit.xml")).unwrap();
    let results = results_with(failures_of(&run), "junit");
    let history: FixHistory = serde_json::from_value(serde_json::json!({
        "session_id": "WFS-t",
        "entries": [{
            "iteration": 1, "fix_task": "IMPL-fix-1", "agent": "manual",
            "started_at": "2026-01-01T00:00:00Z", "files_changed": ["calc/ops.py"],
            "outcome": "no_change"
        }]
    }))
    .unwrap();
    let root = project("projects/py-calc");
    let fresh = builtin::analyze(
        &results,
        &recorded("pytest-console.txt"),
        &root,
        &FixHistory::default(),
    );
    let again = builtin::analyze(&results, &recorded("pytest-console.txt"), &root, &history);
    assert_eq!(fresh.strategy.confidence_score, 0.75);
    assert_eq!(again.strategy.confidence_score, 0.65);
    assert_eq!(
        again.notes,
        [
            "calc/ops.py was already changed in iteration(s) 1 without fixing the failures; look beyond it"
        ]
    );
}

#[test]
fn nothing_located_still_gives_a_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let f = Failure {
        test: "suite::mystery".into(),
        file: None,
        line: None,
        error: "Error: something odd".into(),
        message: String::new(),
        criticality: wfx::artifacts::test_results::Criticality::Medium,
        test_type: wfx::artifacts::test_results::Layer::Unit,
        flaky: false,
        extra: Default::default(),
    };
    let a = builtin::analyze(
        &results_with(vec![f], "x"),
        "no locations here\n",
        dir.path(),
        &FixHistory::default(),
    );
    assert!(a.strategy.modification_points.is_empty());
    assert_eq!(a.strategy.test_execution.affected_tests, ["suite::mystery"]);
    assert_eq!(a.strategy.confidence_score, 0.15);
    assert_eq!(
        a.strategy.root_causes[0].cause,
        "no location of this failure was found in the output; the error is: Error: something odd"
    );
    // Still valid against the schema.
    let text = serde_json::to_string(&a.strategy).unwrap();
    wfx::artifacts::parse_artifact::<wfx::artifacts::FixStrategy>("s", &text).unwrap();
}
