//! The three retest repros of issue #16 as a user meets them: a fixture
//! project with one bug, `wfx test-fix-gen … -y` with a fix agent that
//! restores the line (`fixtures/agents/restore`), real cargo / node runs.
//! Each must complete after one fix attempt, with no rollback: a correct
//! fix is never rolled back, a perfect fix never blocked.

use crate::common;

use common::{Env, fixer_config};
use predicates::prelude::*;
use serde_json::{Value, json};

const ARCHIVED: &str = ".workflow/archives/WFS-test-fix-the-bug";

/// Run the whole pipeline on `project` with `test` as the test config and
/// the restore fixer; returns the environment after a successful run.
fn fix_with_one_attempt(project: &str, test: Value) -> (Env, String) {
    let env = Env::new();
    let mut config = fixer_config("restore");
    config["test"] = test;
    env.cycle_project(project, &config);
    let calls = env.state_dir();
    let out = env
        .wfx_live()
        .env("RESTORE_CALLS", &calls)
        .args(["test-fix-gen", "Fix the bug", "-y"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "completed: 100.0% on the full suite after 1 fix attempt(s)",
        ));
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    // The retest ran the failing test alone and it could judge the fix.
    assert!(
        stderr.contains("Iteration 2 · 100.0% ") && stderr.contains("tier 1: the 1 failed test(s)"),
        "{stderr}"
    );
    assert!(!stderr.contains("running the full suite"), "{stderr}");
    let fixer_calls = std::fs::read_to_string(calls.join("calls")).unwrap();
    assert_eq!(fixer_calls.lines().count(), 1, "one fix attempt");
    let subjects = env.subjects();
    assert!(
        !subjects.iter().any(|s| s.contains("rollback")),
        "{subjects:?}"
    );
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    assert!(
        subjects[1].starts_with("test-cycle: iteration 1 - ") && subjects[1].ends_with("→ 100.0%)"),
        "{subjects:?}"
    );
    (env, stderr)
}

/// Test ids and statuses of run `n` of the archived session.
fn run_cases(env: &Env, n: u32) -> Vec<(String, String)> {
    let r = env.json(&format!("{ARCHIVED}/.process/iteration-{n}-results.json"));
    let mut v: Vec<(String, String)> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["test"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn should_panic_under_cargo_test_completes_after_one_fix() {
    let (env, _) = fix_with_one_attempt(
        "rust-should-panic",
        json!({"command": "cargo test --no-fail-fast"}),
    );
    // One case per test: no `- should panic` twin, no phantom case.
    assert_eq!(
        run_cases(&env, 1),
        pairs(&[
            ("should_panic::src/lib.rs - check (line 11)", "passed"),
            ("should_panic::src/lib.rs - check (line 5)", "passed"),
            ("should_panic::tests::accepts_zero", "passed"),
            ("should_panic::tests::rejects_negative", "failed"),
            ("should_panic::tests::rejects_very_negative", "passed"),
        ])
    );
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let rates: Vec<f64> = state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["pass_rate"].as_f64().unwrap())
        .collect();
    // The first run, then the fix's retest tier and the full validation.
    assert_eq!(rates, [80.0, 100.0, 100.0]);
}

#[test]
fn one_test_name_in_two_targets_completes_after_one_fix() {
    let (env, _) = fix_with_one_attempt(
        "rust-same-name",
        json!({"command": "cargo test --no-fail-fast"}),
    );
    assert_eq!(
        run_cases(&env, 1),
        pairs(&[
            ("a::check", "failed"),
            ("b::check", "passed"),
            ("same_name::tests::check", "passed"),
        ])
    );
    // The real failure was not taken for flaky although `b::check` passed
    // in the re-run of `check`.
    let r1 = env.json(&format!("{ARCHIVED}/.process/iteration-1-results.json"));
    assert_eq!(r1["failures"][0]["test"], "a::check");
    assert_eq!(r1["failures"][0]["flaky"], false);
    assert_eq!(
        run_cases(&env, 2),
        pairs(&[
            ("a::check", "passed"),
            ("b::check", "passed"),
            ("same_name::tests::check", "passed"),
        ])
    );
}

#[test]
fn node_test_through_an_npm_script_completes_after_one_fix() {
    // `"test": "node --test test/*.test.js"`: a filter after `npm test --`
    // would be a file name to node.
    let (env, _) = fix_with_one_attempt("node-script", json!({}));
    assert_eq!(
        run_cases(&env, 1),
        pairs(&[
            ("test/add.test.js › adding zero keeps the value", "passed"),
            ("test/add.test.js › adds two numbers", "failed"),
            (
                "test/negate.test.js › adding zero keeps the value",
                "passed"
            ),
            ("test/negate.test.js › negates a number", "passed"),
        ])
    );
    // The flaky re-run of the failure went through the script's own
    // command with node's filter where node reads it, and ran only it.
    let rerun = env.read(&format!("{ARCHIVED}/.process/iteration-1-rerun-output.log"));
    assert!(rerun.contains("✖ adds two numbers"), "{rerun}");
    assert_eq!(
        rerun.matches("# test name does not match pattern").count(),
        3,
        "{rerun}"
    );
}

/// DESIGN.md §10.4 on a suite where tier 2 is always the whole suite (one
/// test file imports the whole package, as in more-itertools): a fix that
/// makes a failing test pass but leaves another failing is settled on tier
/// 1, without a full run; the damage it also did shows on the next full
/// run, which does not roll back the correct fix after it — the damage is
/// analysed and repaired next.
#[test]
fn a_partial_fix_costs_no_full_run_and_its_damage_is_not_blamed_on_the_next_fix() {
    let env = Env::new();
    env.cycle_project("py-pkg", &fixer_config("partial-then-damage"));
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["test-fix-gen", "Fix the package", "-y"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "completed: 100.0% on the full suite after 3 fix attempt(s)",
        ));
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(
            "Iteration 3: pass rate dropped from 90.0% to 60.0% (final validation, full suite), but the fixes of iteration(s) 1 were kept after a retest of only part of the suite: iteration 2's fix is not rolled back for it"
        ),
        "{stderr}"
    );
    let subjects = env.subjects();
    assert!(
        !subjects.iter().any(|s| s.contains("rollback")),
        "{subjects:?}"
    );
    let archived = std::fs::read_dir(env.root.join(".workflow/archives"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().into_string().unwrap())
        .find(|n| n.starts_with("WFS-"))
        .expect("the completed session is archived");
    let state = env.json(&format!(
        ".workflow/archives/{archived}/.process/iteration-state.json"
    ));
    let want = [
        (1, "full", 80.0),
        // Fix 1 (partial): tier 1 alone; 90 % is what it shows merged.
        (2, "affected", 90.0),
        // Fix 2 (correct): tier 1 passes; tier 2 would be the whole suite,
        // so the validation shows fix 1's damage.
        (3, "affected", 100.0),
        (3, "full", 60.0),
        // Fix 3 repairs it: tier 1 (the 4 broken tests), tier 2 (the 6
        // others: a subset now), the validation.
        (4, "affected", 100.0),
        (4, "affected", 100.0),
        (4, "full", 100.0),
    ]
    .map(|(i, s, p)| (i, s.to_string(), p));
    assert_eq!(common::runs(&state), want);
}

/// By default (`cycle.skip_slow_tiers`) a retest tier that the session's
/// own timings show would cost about a full run is skipped: here a
/// `pretest` script (standing in for a build, 2 s) runs before every
/// `npm test`, subset or not, in front of tests that take milliseconds. The
/// first run notes when its first test result came (`setup_ms`), and the
/// retest goes straight to the full suite.
#[test]
fn a_tier_whose_fixed_cost_is_most_of_a_run_is_skipped_for_the_full_suite() {
    let env = Env::new();
    let mut config = fixer_config("restore");
    config["cycle"] = json!({"skip_slow_tiers": true});
    env.cycle_project("node-script", &config);
    env.write(
        "package.json",
        r#"{"name": "node-script", "version": "0.1.0", "private": true, "type": "commonjs",
  "scripts": {"pretest": "node -e \"setTimeout(() => {}, 2000)\"", "test": "node --test test/*.test.js"}}
"#,
    );
    env.git(&["commit", "-qam", "a pretest that takes 2 s"]);
    let calls = env.state_dir();
    let out = env
        .wfx_live()
        .env("RESTORE_CALLS", &calls)
        .args(["test-fix-gen", "Fix the bug", "-y"])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("the full suite (the failed tier would take about"),
        "{stderr}"
    );
    assert!(!stderr.contains("tier 1:"), "{stderr}");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let runs = state["iterations"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "the first run and the full retest: {runs:?}");
    for r in runs {
        assert_eq!(r["scope"], "full");
        let (ms, setup) = (
            r["duration_ms"].as_u64().unwrap(),
            r["setup_ms"].as_u64().unwrap(),
        );
        assert!(setup >= 2000 && setup <= ms, "{r}");
    }
}
