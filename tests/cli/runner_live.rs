//! Live runs of `wfx test` on the sample projects (pytest, node --test,
//! cargo test / nextest), each compared with what the runner itself
//! reports when run directly, plus `--only-failed` subsets that must run
//! only the named tests.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use common::Env;
use serde_json::Value;

fn project(name: &str) -> Env {
    let env = Env::new();
    env.copy_fixture_project(name);
    env
}

/// Builds of rust-calc share one target directory (the sources are the
/// same in every copy, so later runs reuse the first build).
fn rust_target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/live-rust-calc")
}

fn wfx_json(env: &Env, args: &[&str]) -> (i32, Value) {
    let out = env
        .wfx_live()
        .env("CARGO_TARGET_DIR", rust_target())
        .arg("test")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let (code, doc) = common::json_output(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains(env.root.to_str().unwrap()),
        "absolute path in {text}"
    );
    (code, doc)
}

/// Run the runner directly (hermetic, real toolchains) and return its output.
fn direct(env: &Env, program: &str, args: &[&str]) -> String {
    let mut cmd = Command::new(program);
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.env("CARGO_TARGET_DIR", rust_target()).args(args);
    let out = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn ids_with(doc: &Value, status: &str) -> BTreeSet<String> {
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["test"].as_str().unwrap().to_string())
        .collect()
}

fn number_before(text: &str, word: &str) -> u64 {
    let re = regex::Regex::new(&format!(r"(\d+) {word}")).unwrap();
    re.captures(text)
        .map(|c| c[1].parse().unwrap())
        .unwrap_or(0)
}

#[test]
fn pytest_project_matches_pytest_and_reruns_only_failures() {
    let env = project("py-calc");
    let (code, doc) = wfx_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["framework"], "pytest");
    assert_eq!(doc["parser"], "junit");

    // What pytest itself says, with every outcome listed (-rA).
    let python = doc["command"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let out = direct(
        &env,
        &python,
        &["-m", "pytest", "-rA", "-p", "no:cacheprovider"],
    );
    let summary = out.lines().last().unwrap();
    let listed = |tag: &str| -> BTreeSet<String> {
        out.lines()
            .filter_map(|l| l.strip_prefix(&format!("{tag} ")))
            .map(|rest| rest.split(" - ").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(u(&doc["passed"]), number_before(summary, "passed"));
    assert_eq!(u(&doc["failed"]), number_before(summary, "failed"));
    assert_eq!(u(&doc["skipped"]), number_before(summary, "skipped"));
    assert_eq!(u(&doc["total"]), 12);
    assert_eq!(ids_with(&doc, "passed"), listed("PASSED"));
    assert_eq!(ids_with(&doc, "failed"), listed("FAILED"));
    assert_eq!(
        common::failing_tests(&doc),
        BTreeSet::from([
            "tests/test_auth.py::test_validate_token".to_string(),
            "tests/test_ops.py::test_divide_by_zero_returns_none".to_string(),
        ])
    );
    let f = &doc["failures"][1];
    assert_eq!(
        (f["file"].as_str(), u(&f["line"])),
        (Some("tests/test_ops.py"), 15)
    );

    // --only-failed: pytest collects just the two failing node ids.
    let (code, again) = wfx_json(&env, &["--only-failed"]);
    assert_eq!(code, 1);
    assert_eq!(again["scope"], "affected");
    assert_eq!(
        (u(&again["total"]), u(&again["passed"]), u(&again["failed"])),
        (12, 9, 2)
    );
    let command = again["command"].as_str().unwrap();
    assert!(
        command.contains("tests/test_auth.py::test_validate_token"),
        "{command}"
    );
    let log = env.read(".workflow/.cache/test-output.log");
    assert!(log.contains("collected 2 items"), "{log}");
}

#[test]
fn node_test_project_matches_node_and_reruns_only_failures() {
    let env = project("node-calc");
    let (code, doc) = wfx_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["framework"], "node-test");
    assert_eq!(doc["parser"], "tap");

    let out = direct(&env, "node", &["--test", "--test-reporter=tap"]);
    let stat = |key: &str| -> u64 {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("# {key} ")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(u(&doc["total"]), stat("tests"));
    assert_eq!(u(&doc["passed"]), stat("pass"));
    assert_eq!(u(&doc["failed"]), stat("fail"));
    assert_eq!(u(&doc["skipped"]), stat("skipped"));
    assert_eq!(
        common::failing_tests(&doc),
        BTreeSet::from([
            "test/math.test.js › math › finds the max".to_string(),
            "test/strings.test.js › strings › slugifies a title".to_string(),
        ])
    );
    for f in doc["failures"].as_array().unwrap() {
        let leaf = f["test"].as_str().unwrap().rsplit(" › ").next().unwrap();
        assert!(
            out.contains(&format!("not ok 3 - {leaf}"))
                || out.contains(&format!("not ok 2 - {leaf}")),
            "{leaf}"
        );
    }
    // Every id names its file, including top-level tests TAP gives no location for.
    for id in ids_with(&doc, "passed") {
        assert!(id.starts_with("test/"), "{id}");
    }

    let (code, again) = wfx_json(&env, &["--only-failed"]);
    assert_eq!(code, 1);
    assert_eq!(again["scope"], "affected");
    assert_eq!((u(&again["total"]), u(&again["failed"])), (10, 2));
    let log = env.read(".workflow/.cache/test-output.log");
    assert!(log.contains("✖ finds the max"), "{log}");
    assert!(log.contains("✖ slugifies a title"), "{log}");
    for passing in [
        "✔ adds two numbers",
        "✔ reverse",
        "✔ clamp keeps values in range",
    ] {
        assert!(!log.contains(passing), "{passing} ran:\n{log}");
    }
}

#[test]
fn rust_project_matches_the_detected_runner() {
    let env = project("rust-calc");
    let (code, doc) = wfx_json(&env, &[]);
    assert_eq!(code, 1);
    let framework = doc["framework"].as_str().unwrap().to_string();
    // The command as wfx stored it, run by sh as wfx runs it.
    let command = doc["command"].as_str().unwrap().to_string();
    let out = direct(&env, "sh", &["-c", &command]);
    // libtest's own counts (cargo test, and the doctests after nextest).
    let libtest_counts = |text: &str| {
        let (mut passed, mut failed, mut ignored) = (0, 0, 0);
        for l in text.lines().filter(|l| l.starts_with("test result:")) {
            passed += number_before(l, "passed");
            failed += number_before(l, "failed");
            ignored += number_before(l, "ignored");
        }
        (passed, failed, ignored)
    };
    match framework.as_str() {
        "nextest" => {
            // nextest, then `cargo test --doc` (docs/runner.md).
            assert!(command.contains("cargo test --doc"), "{command}");
            // (nextest indents the libtest lines it captures, so the
            // `test result:` lines at a line start are the doctests'.)
            let summary = out
                .lines()
                .find(|l| l.trim_start().starts_with("Summary ["))
                .unwrap();
            let (dp, df, di) = libtest_counts(&out);
            assert_eq!((dp, df, di), (1, 1, 0), "rust-calc's two doctests");
            assert_eq!(u(&doc["passed"]), number_before(summary, "passed") + dp);
            assert_eq!(u(&doc["failed"]), number_before(summary, "failed") + df);
            assert_eq!(u(&doc["skipped"]), number_before(summary, "skipped") + di);
            assert_eq!(
                u(&doc["total"]),
                number_before(summary, "tests run:")
                    + number_before(summary, "skipped")
                    + dp
                    + df
                    + di
            );
            assert_eq!(
                common::failing_tests(&doc),
                BTreeSet::from([
                    "rust-calc stats::tests::mean_of_three".to_string(),
                    "rust-calc tests::divide_negative".to_string(),
                    "rust_calc::src/lib.rs - divide (line 16)".to_string(),
                ])
            );
            // --only-failed runs just those three.
            let (code, again) = wfx_json(&env, &["--only-failed"]);
            assert_eq!(code, 1);
            assert_eq!(again["scope"], "affected");
            let log = env.read(".workflow/.cache/test-output.log");
            assert!(log.contains("Starting 2 tests"), "{log}");
            assert!(
                log.contains("test src/lib.rs - divide (line 16) ... FAILED"),
                "{log}"
            );
            assert!(!log.contains("src/lib.rs - add (line"), "{log}");
        }
        "cargo" => {
            assert_eq!(
                (u(&doc["passed"]), u(&doc["failed"]), u(&doc["skipped"])),
                libtest_counts(&out)
            );
        }
        other => panic!("unexpected framework {other}"),
    }
    let f = doc["failures"].as_array().unwrap();
    let mean = f
        .iter()
        .find(|f| {
            f["test"]
                .as_str()
                .unwrap()
                .ends_with("stats::tests::mean_of_three")
        })
        .unwrap();
    assert_eq!(
        (mean["file"].as_str(), u(&mean["line"])),
        (Some("src/stats.rs"), 28)
    );
    assert_eq!(
        mean["error"],
        "assertion `left == right` failed: left Some(3.0), right Some(2.0)"
    );
}

#[test]
fn cargo_test_subset_runs_only_the_failures() {
    let env = project("rust-calc");
    env.write(
        ".workflow/wfx.json",
        r#"{"test": {"command": "cargo test --no-fail-fast"}}"#,
    );
    let (code, doc) = wfx_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["framework"], "cargo");
    assert_eq!(doc["parser"], "libtest");
    assert_eq!(
        (
            u(&doc["total"]),
            u(&doc["passed"]),
            u(&doc["failed"]),
            u(&doc["skipped"])
        ),
        (14, 10, 3, 1)
    );
    assert_eq!(
        common::failing_tests(&doc),
        BTreeSet::from([
            "rust_calc::stats::tests::mean_of_three".to_string(),
            "rust_calc::tests::divide_negative".to_string(),
            "rust_calc::src/lib.rs - divide (line 16)".to_string(),
        ])
    );

    let (code, again) = wfx_json(&env, &["--only-failed"]);
    assert_eq!(code, 1);
    assert_eq!(again["scope"], "affected");
    assert_eq!((u(&again["total"]), u(&again["failed"])), (14, 3));
    let log = env.read(".workflow/.cache/test-output.log");
    for ran in [
        "test stats::tests::mean_of_three ... FAILED",
        "test tests::divide_negative ... FAILED",
        "test src/lib.rs - divide (line 16) ... FAILED",
    ] {
        assert!(log.contains(ran), "{ran} missing:\n{log}");
    }
    for not_ran in [
        "add_small_numbers",
        "mean_of_empty_is_none",
        "parse_then_add",
        "src/lib.rs - add (line 7)",
    ] {
        assert!(!log.contains(not_ran), "{not_ran} ran:\n{log}");
    }
}

/// A fresh clone of a project whose generated module (`_version.py`,
/// git-ignored) does not exist yet: every test module fails to import.
/// `wfx test` names the exception, not pytest's "ImportError while
/// importing test module", and says it is the environment, not the code.
#[test]
fn an_import_error_names_the_module_and_the_environment() {
    let env = Env::new();
    common::copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/outputs/sources/py-humanize"),
        &env.root,
    );
    env.git_init_commit();
    let out = env
        .wfx_live()
        .env("PYTHONPATH", "src")
        .arg("test")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}
