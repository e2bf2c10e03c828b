//! `wfx status`: the full view (phases, tasks, runs with a sparkline,
//! stuck tests, cost, next action and command) and the stable `--json`
//! document.

use crate::common;

use common::stories;
use common::{Env, make_session};

fn status(env: &Env, args: &[&str]) -> String {
    let out = env
        .wfx()
        .arg("status")
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn status_json(env: &Env, id: &str) -> serde_json::Value {
    serde_json::from_str(&status(env, &["--json", id])).unwrap()
}

#[test]
fn blocked_session_full_view() {
    let env = Env::new();
    env.write(".workflow/wfx.json", r#"{"agents": {"max_cost_usd": 10}}"#);
    let mut story = stories::blocked("WFS-test-stuck");
    // The second fix recorded its diff (cut: 40 more lines); the others
    // come from before wfx recorded diffs.
    story.fixes[1]["diff"] = serde_json::json!({
        "text": "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -18,3 +18,3 @@ def power(a, b):\n-    return a * b\n+    return a ** b\n",
        "omitted_lines": 40,
    });
    story.write(&env);
    let out = status(&env, &["WFS-test-stuck"]);
    let want = "\
WFS-test-stuck  [blocked]  Tests for the calculator's divide & power
Blocked: reached the limit of 3 fix attempts
Not done: 60.0% is under the 95.0% threshold; 2 failing: tests/test_ops.py::test_power, tests/test_ops.py::test_divide
Failure report: .workflow/active/WFS-test-stuck/.process/failure-report.md

PHASE  NAME             STATUS     DURATION
1      session_start    completed  60 s
2      context_gather   completed  60 s
3      analysis         completed  60 s
4      task_generation  completed  60 s
5      test_cycle       completed  60 s

TASK        STATUS     TYPE                 AGENT   DURATION  TITLE
IMPL-001    skipped    test-gen             -       2 min     Task IMPL-001
IMPL-001.3  completed  code-validation      -       2 min     Task IMPL-001.3
IMPL-001.5  completed  test-quality-review  -       2 min     Task IMPL-001.5
IMPL-002    blocked    test-fix             -       2 min     Task IMPL-002
IMPL-fix-1  completed  test-fix-iteration   claude  2 min     Task IMPL-fix-1
IMPL-fix-2  completed  test-fix-iteration   claude  2 min     Task IMPL-fix-2
IMPL-fix-3  completed  test-fix-iteration   claude  2 min     Task IMPL-fix-3

Iterations: 3 of at most 3 fix attempts · latest 60.0% · best 60.0% · threshold 95.0%  ▂▂▃▃
RUN  ITERATION  SCOPE  PASSED  PASS   STRATEGY      RESULT     FIX         COMMIT
1    0          full   5/10    50.0%  -             -          -           -
2    1          full   5/10    50.0%  conservative  no_change  IMPL-fix-1  5abcdef012
3    2          full   6/10    60.0%  conservative  improved   IMPL-fix-2  5abcdef012
4    3          full   6/10    60.0%  aggressive    no_change  IMPL-fix-3  5abcdef012
Stuck tests: tests/test_ops.py::test_power
Cost so far: $2.75 (3 agent calls) of a $10.00 cap

Fix attempts:
IMPL-fix-1  iteration 1 · conservative · fix by claude · no_change · +12 −3 in 1 file · 1abcdef012
IMPL-fix-2  iteration 2 · conservative · fix by claude · improved · +12 −3 in 1 file · 2abcdef012
    diff --git a/calc/ops.py b/calc/ops.py
    --- a/calc/ops.py
    +++ b/calc/ops.py
    @@ -18,3 +18,3 @@ def power(a, b):
    -    return a * b
    +    return a ** b
    … 40 more lines
IMPL-fix-3  iteration 3 · aggressive · fix by claude · no_change · +12 −3 in 1 file · 3abcdef012

Next action: none
Next: read .process/failure-report.md; to allow more fix attempts run
  wfx session resume WFS-test-stuck && wfx test-cycle-execute --resume-session=WFS-test-stuck --max-iterations=5
";
    assert_eq!(out, want);
}

#[test]
fn completed_run_marks_rollbacks_and_flaky_runs() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    let out = status(&env, &[]);
    assert!(
        out.contains("Completed: all 10 tests pass on the full suite (run 4)"),
        "{out}"
    );
    assert!(out.contains("▃▆▂▇█"), "{out}");
    assert!(out.contains(
        "\
RUN  ITERATION  SCOPE     PASSED  PASS          STRATEGY      RESULT              FIX         COMMIT
1    0          full      6/10    60.0%         -             -                   -           -
2    1          full      8/10    80.0%         conservative  improved            IMPL-fix-1  1abcdef012
3    2          full      5/10    50.0%         conservative  rolled_back         IMPL-fix-2  2abcdef012 (reverted by 9876543210)
4    3          affected  9/10    90.0% merged  surgical      improved (1 flaky)  IMPL-fix-3  3abcdef012
5    4          full      10/10   100.0%        aggressive    success             IMPL-fix-4  4abcdef012
PASSED counts the tests each run ran; a retest's PASS is the suite's, its results merged over the last full run.
"
    ), "{out}");
    assert!(out.contains("Cost so far: $1.68 (5 agent calls)"), "{out}");
    assert!(
        out.ends_with("Next: archive the finished session\n  wfx session complete WFS-test-calc\n"),
        "{out}"
    );
}

#[test]
fn awaiting_fix_says_what_to_edit_and_how_to_go_on() {
    let env = Env::new();
    stories::awaiting_fix("WFS-test-manual").write(&env);
    let out = status(&env, &[]);
    assert!(out.contains(
        "Awaiting a fix by hand: no fix agent is configured: apply the fix described in .workflow/active/WFS-test-manual/.task/IMPL-fix-1.json (IMPL-fix-1) by hand"
    ), "{out}");
    // Why it is not done, in one line: the rule and the tests.
    assert!(
        out.contains("\nNot done: 70.0% is under the 95.0% threshold; 1 failing: tests/test_ops.py::test_divide\n"),
        "{out}"
    );
    assert_eq!(
        status_json(&env, "WFS-test-manual")["not_done"],
        "70.0% is under the 95.0% threshold; 1 failing: tests/test_ops.py::test_divide"
    );
    // Waiting for the first fix: no attempt is counted yet.
    assert!(
        out.contains("Iterations: no fix attempt yet · at most "),
        "{out}"
    );
    assert!(out.ends_with(
        "Next action: execute_fix_task\nNext: edit the files as .workflow/active/WFS-test-manual/.task/IMPL-fix-1.json describes, then\n  wfx test-cycle-execute --resume-session=WFS-test-manual\n"
    ), "{out}");
    assert!(
        !out.contains("Cost so far"),
        "no agent calls, no cap: no cost line"
    );
    let v = status_json(&env, "WFS-test-manual");
    assert_eq!(
        v["next_command"],
        "wfx test-cycle-execute --resume-session=WFS-test-manual"
    );
    assert_eq!(v["next_action"], "execute_fix_task");
    assert_eq!(
        v["next_step"],
        "edit the files as .workflow/active/WFS-test-manual/.task/IMPL-fix-1.json describes, then"
    );
}

/// The `--json` document: the original fields keep their names and
/// shapes; the new ones are listed here so a rename fails this test.
#[test]
fn json_document_is_stable() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    let v = status_json(&env, "WFS-test-calc");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "session_id",
            "status",
            "location",
            "description",
            "phases",
            "tasks",
            "iteration_state",
            "next_command",
            "next_action",
            "next_step",
            "outcome",
            "not_done",
            "pass_rates",
            "sparkline",
            "latest_pass_rate",
            "best_pass_rate",
            "pass_threshold",
            "current_iteration",
            "max_iterations",
            "fix_attempts",
            "stuck_tests",
            "cost",
            "failure_report",
            "problems",
            "type",
            "run_state",
            "run",
            "fixes",
        ]
    );
    assert_eq!(v["session_id"], "WFS-test-calc");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["location"], "active");
    assert_eq!(v["phases"][0]["name"], "session_start");
    assert_eq!(
        v["iteration_state"]["iterations"].as_array().unwrap().len(),
        5
    );
    assert_eq!(v["next_command"], "wfx session complete WFS-test-calc");
    assert_eq!(v["next_action"], "none");
    assert_eq!(v["outcome"]["kind"], "completed");
    assert_eq!(
        v["pass_rates"],
        serde_json::json!([60.0, 80.0, 50.0, 90.0, 100.0])
    );
    assert_eq!(v["sparkline"], "▃▆▂▇█");
    assert_eq!(v["latest_pass_rate"], 100.0);
    assert_eq!(v["best_pass_rate"], 100.0);
    assert_eq!(v["pass_threshold"], 95.0);
    assert_eq!(v["current_iteration"], 4);
    assert_eq!(v["max_iterations"], 10);
    assert_eq!(v["fix_attempts"], 4);
    assert_eq!(v["stuck_tests"], serde_json::json!([]));
    assert_eq!(
        v["cost"],
        serde_json::json!({"total_usd": 1.68, "cap_usd": null, "agent_calls": 5})
    );
    assert_eq!(v["failure_report"], serde_json::Value::Null);
    assert_eq!(v["problems"], serde_json::json!([]));
    assert_eq!(v["type"], "test");
    assert_eq!(v["run_state"], serde_json::Value::Null);
    assert_eq!(v["run"], serde_json::Value::Null);
    // fix-history.json's entries as stored.
    assert_eq!(v["fixes"].as_array().unwrap().len(), 4);
    assert_eq!(v["fixes"][1]["outcome"], "rolled_back");

    let task = &v["tasks"][4];
    let keys: Vec<&str> = task
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "title",
            "status",
            "type",
            "file",
            "agent",
            "started_at",
            "completed_at",
            "duration_ms"
        ]
    );
    assert_eq!(task["id"], "IMPL-fix-1");
    assert_eq!(task["type"], "test-fix-iteration");
    assert_eq!(
        task["file"],
        ".workflow/active/WFS-test-calc/.task/IMPL-fix-1.json"
    );
    assert_eq!(task["agent"], "claude");
    assert_eq!(task["started_at"], "2026-01-01T10:17:00Z");
    assert_eq!(task["completed_at"], "2026-01-01T10:19:00Z");
    assert_eq!(task["duration_ms"], 120_000);
}

#[test]
fn archived_and_planning_sessions() {
    let env = Env::new();
    stories::partial("WFS-test-net").write(&env);
    stories::archive(&env, "WFS-test-net");
    let v = status_json(&env, "WFS-test-net");
    assert_eq!(v["location"], "archived");
    assert_eq!(v["next_command"], serde_json::Value::Null);
    assert_eq!(
        v["next_step"],
        "archived: the session is finished and kept read-only"
    );
    assert_eq!(v["outcome"]["kind"], "partial_success");
    let out = status(&env, &["WFS-test-net"]);
    assert!(
        out.ends_with("Next: archived: the session is finished and kept read-only\n"),
        "{out}"
    );

    make_session(&env, "WFS-test-new", "planning", &[("IMPL-001", "pending")]);
    let v = status_json(&env, "WFS-test-new");
    assert_eq!(v["iteration_state"], serde_json::Value::Null);
    assert_eq!(v["next_command"], "wfx test-fix-gen WFS-test-new");
    assert_eq!(v["pass_rates"], serde_json::json!([]));
    assert_eq!(v["sparkline"], "");
    assert_eq!(v["current_iteration"], serde_json::Value::Null);
    let out = status(&env, &["WFS-test-new"]);
    assert!(!out.contains("Iterations:"), "{out}");
    assert!(
        out.contains("Planning: phase 2 (context_gather) is not finished"),
        "{out}"
    );
}

#[test]
fn unreadable_artifacts_are_warnings() {
    let env = Env::new();
    let dir = stories::blocked("WFS-test-stuck").write(&env);
    std::fs::write(dir.join(".process/fix-history.json"), "[]").unwrap();
    let assert = env.wfx().args(["status", "--json"]).assert().success();
    let out = assert.get_output();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .starts_with(".workflow/active/WFS-test-stuck/.process/fix-history.json: /: ")
    );
    assert_eq!(v["fix_attempts"], 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning: could not read .workflow/active/WFS-test-stuck/.process/fix-history.json"
        ),
        "{stderr}"
    );
}
