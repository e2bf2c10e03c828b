//! The initial tasks of phase 5 (DESIGN.md §5.7) with a test_gen agent:
//! IMPL-001 writes tests, IMPL-001.3 gates them (L0 + AI-issue scan: pass,
//! soft fail fixed by the fix agent, hard fail → blocked), IMPL-001.5
//! reviews coverage and anti-patterns, and the generated tests are
//! committed before the loop.

use crate::common;

use common::{Env, fake_agent};
use predicates::prelude::*;
use serde_json::json;

const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn project() -> Env {
    let env = Env::new();
    let agent = fake_agent("test-writer").display().to_string();
    env.cycle_project(
        "node-calc",
        &json!({
            "agents": {
                "fix": "writer",
                "test_gen": "writer",
                "definitions": {"writer": {"command": [agent]}}
            }
        }),
    );
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    env
}

fn cycle(env: &Env, mode: &str) -> assert_cmd::assert::Assert {
    env.wfx_live()
        .env("WRITE_TESTS", mode)
        .arg("test-cycle-execute")
        .assert()
}

fn status_of(env: &Env, dir: &str, file: &str) -> String {
    env.json(&format!("{dir}/.task/{file}"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn generated_tests_pass_the_gates_and_are_committed_before_the_loop() {
    let env = project();
    cycle(&env, "clean")
        .success()
        .stderr(predicate::str::contains(
            "IMPL-001 completed: writer wrote tests",
        ))
        .stderr(predicate::str::contains(
            "IMPL-001.3 passed: 1 file(s) checked",
        ));
    assert_eq!(
        env.subjects(),
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 1 fix attempt(s))",
            "test-cycle: iteration 1 - conservative strategy (pass: 81.8% → 100.0%)",
            "test-cycle: generated tests (IMPL-001, 1 file(s))",
            "initial",
        ]
    );
    assert_eq!(
        env.git(&["show", "--name-only", "--format=", "HEAD~2", "--", "test"]),
        "test/extra.test.js\n"
    );
    let t = env.json(&format!("{ARCHIVED}/.task/IMPL-001.json"));
    assert_eq!(t["status"], "completed");
    assert_eq!(t["result"]["files_modified"], json!(["test/extra.test.js"]));
    let v = env.json(&format!("{ARCHIVED}/.task/IMPL-001.3.json"));
    assert_eq!(v["status"], "completed");
    assert_eq!(v["meta"]["gate_verdict"], "pass");
    assert_eq!(v["meta"]["checked_files"], json!(["test/extra.test.js"]));
    let r = env.json(&format!("{ARCHIVED}/.task/IMPL-001.5.json"));
    assert_eq!(r["meta"]["coverage_gate"], "unknown");
    assert_eq!(status_of(&env, ARCHIVED, "IMPL-001.5.json"), "completed");
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let roles: Vec<&str> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["test_gen", "fix"]);
    assert!(
        env.root
            .join(ARCHIVED)
            .join(".process/IMPL-001-prompt.md")
            .is_file()
    );
}

#[test]
fn a_soft_fail_goes_to_the_fix_agent_and_then_passes() {
    let env = project();
    cycle(&env, "soft")
        .success()
        .stderr(predicate::str::contains(
            "IMPL-001.3 soft fail: writer is fixing the findings (attempt 1)",
        ));
    let v = env.json(&format!("{ARCHIVED}/.task/IMPL-001.3.json"));
    assert_eq!(v["status"], "completed");
    assert_eq!(v["meta"]["fix_attempts"], 1);
    assert_eq!(v["meta"]["gate_verdict"], "pass");
    assert!(!env.read("test/extra.test.js").contains("catch (e) {}"));
}

#[test]
fn a_hard_fail_blocks_the_session_with_a_report() {
    let env = project();
    cycle(&env, "critical")
        .code(1)
        .stdout(predicate::str::contains(
            "blocked: IMPL-001.3 code validation failed: 1 file(s) checked: 1 critical",
        ));
    assert_eq!(status_of(&env, ACTIVE, "IMPL-001.3.json"), "blocked");
    let v = env.json(&format!("{ACTIVE}/.task/IMPL-001.3.json"));
    assert_eq!(v["meta"]["gate_verdict"], "hard_fail");
    assert_eq!(v["meta"]["findings"][0]["check"], "undeclared_package");
    let report = env.read(&format!("{ACTIVE}/.process/failure-report.md"));
    assert!(
        report.contains("IMPL-001.3 code validation failed"),
        "{report}"
    );
    assert!(report.contains("No test run was recorded."), "{report}");
    assert_eq!(env.subjects(), ["initial"]);
}
