//! `wfx status` and `wfx report --html` of `wfx run` sessions (DESIGN.md
//! §8), from real runs: fixtures/workflows/node-shell-fix.yml on node-calc
//! (a failing test step whose shell `on_failure` fixes one bug per
//! attempt), an interrupted run that is then resumed, and a run that fails.
//! The `--json` document is checked value by value (times redacted), the
//! HTML for its step rows, attempt results, chart and links.

use crate::common;

use std::path::Path;

use common::{Env, html_section as section, wfx_out as wfx};
use serde_json::{Value, json};

const NODE_ID: &str = "WFS-run-node-shell-fix";

/// A "test suite" that fails (exit 3) until a file named `fixed` exists;
/// its output is not a format any parser reads.
const CHECK: &str = "#!/bin/sh\nif [ -f fixed ]; then echo 'all good'; exit 0; fi\necho 'FAIL: the bug is still there'\nexit 3\n";

/// node-calc in git, the fixture workflow as `wf.yml`, run to the end with
/// `fix-one` on PATH.
fn node_run() -> Env {
    let env = Env::new();
    env.copy_fixture_project("node-calc");
    let wf = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/workflows/node-shell-fix.yml"),
    )
    .unwrap();
    env.write("wf.yml", &wf);
    env.git_init_commit();
    let bin = env.fake_agents(&[("fix-one", "fix-one")]);
    let out = env
        .wfx_live()
        .env("PATH", env.path_with(&bin))
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env
}

fn status_json(env: &Env, id: &str) -> Value {
    let out = wfx(env, &["--json", "status", id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

fn status_text(env: &Env, id: &str) -> String {
    let out = wfx(env, &["status", id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
}

/// `wfx report ID --html reports/run.html` (inside the project, so links
/// are relative), with the template's escaping of `/` undone.
fn report(env: &Env, id: &str) -> String {
    report_at(env, id, &env.root.join("reports/run.html"))
}

fn report_at(env: &Env, id: &str, file: &Path) -> String {
    let out = wfx(env, &["report", id, "--html", file.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = std::fs::read_to_string(file).unwrap();
    for banned in ["<script", "<link", "<img", "https://"] {
        assert!(!html.contains(banned), "report contains {banned}");
    }
    html.replace("&#x2f;", "/").replace("&amp;", "&")
}

/// Times and durations vary from run to run: set them to null.
fn redact_times(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if matches!(
                    k.as_str(),
                    "started_at" | "updated_at" | "completed_at" | "duration_ms"
                ) {
                    *val = Value::Null;
                } else {
                    redact_times(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_times),
        _ => {}
    }
}

fn test_json(
    dir: &str,
    sub: &str,
    exit: i32,
    counts: Option<[u32; 4]>,
    rate: Option<f64>,
    result: &str,
    failing: &[&str],
) -> Value {
    json!({
        "exit_code": exit,
        "passed": exit == 0,
        "timed_out": false,
        "parser": if counts.is_some() { "tap" } else { "exit-code" },
        "counts": counts.map(|[t, p, f, s]| json!({"total": t, "passed": p, "failed": f, "skipped": s})),
        "pass_rate": rate,
        "result": result,
        "duration_ms": null,
        "failing_tests": failing,
        "failing_omitted": 0,
        "output_file": format!("{dir}/{sub}/test-output.log"),
        "results_file": format!("{dir}/{sub}/test-results.json"),
    })
}

fn debug_json(dir: &str, k: u32, command: &str, changed: &[&str]) -> Value {
    json!({
        "kind": "shell",
        "agent": null,
        "command": command,
        "command_truncated": false,
        "finished": true,
        "exit_code": 0,
        "timed_out": false,
        "duration_ms": null,
        "cost_usd": null,
        "error": null,
        "committed": false,
        "files_changed": changed,
        "command_file": format!("{dir}/attempt-{k}/debug-command.txt"),
        "output_file": format!("{dir}/attempt-{k}/debug-output.log"),
    })
}

#[test]
fn shell_fixed_run_status_json_is_exact() {
    let env = node_run();
    let mut v = status_json(&env, NODE_ID);
    assert_eq!(v["session_id"], NODE_ID);
    assert_eq!(v["type"], "run");
    assert_eq!(v["status"], "completed");
    // A finished run is archived (DESIGN.md §10.7).
    assert_eq!(v["location"], "archived");
    assert_eq!(v["description"], "node shell fix");
    assert_eq!(
        v["outcome"],
        json!({
            "kind": "completed",
            "title": "Completed",
            "reason": "all 2 steps finished and every test step passed; step 2 (test) passed after 2 debug attempts"
        })
    );
    assert_eq!(v["next_command"], Value::Null);
    assert_eq!(
        v["next_step"],
        "archived: the session is finished and kept read-only"
    );
    assert_eq!(v["next_action"], Value::Null);
    assert_eq!(v["run_state"]["status"], "completed");
    assert_eq!(v["problems"], json!([]));
    // The test cycle's fields are empty for a run.
    assert_eq!(v["iteration_state"], Value::Null);
    assert_eq!(v["tasks"], json!([]));
    assert_eq!(v["pass_rates"], json!([]));

    let d = format!(".workflow/archives/{NODE_ID}");
    let s2 = format!("{d}/.process/step-02");
    let mut run = v["run"].take();
    redact_times(&mut run);
    let shell_step = json!({
        "index": 1,
        "id": "build",
        "label": "step 1 \"build\" (shell)",
        "kind": "shell",
        "command": "echo building",
        "command_truncated": false,
        "status": "passed",
        "current": false,
        "exit_code": 0,
        "duration_ms": null,
        "debug_attempts": 0,
        "max_attempts": 0,
        "continued": false,
        "reason": null,
        "summary": null,
        "cost_usd": null,
        "dir": format!("{d}/.process/step-01"),
        "command_file": format!("{d}/.process/step-01/command.txt"),
        "output_file": format!("{d}/.process/step-01/output.log"),
        "on_failure": null,
        "pass_rates": [],
        "attempts": [],
    });
    let test_step = json!({
        "index": 2,
        "id": null,
        "label": "step 2 (test)",
        "kind": "test",
        "command": "npm test",
        "command_truncated": false,
        "status": "passed",
        "current": false,
        "exit_code": 0,
        "duration_ms": null,
        "debug_attempts": 2,
        "max_attempts": 3,
        "continued": false,
        "reason": null,
        "summary": "passed after 2 debug attempts (of at most 3)",
        "cost_usd": null,
        "dir": s2,
        "command_file": null,
        "output_file": format!("{s2}/attempt-2/test-output.log"),
        "on_failure": {
            "kind": "shell",
            "command": "FIXER_BY_ATTEMPT=1 fix-one",
            "max_attempts": 3,
            "stop_on_success": true,
            "fail_workflow": false,
            "commit_required": false,
        },
        "pass_rates": [77.7, 88.8, 100.0],
        "attempts": [
            {
                "attempt": 0,
                "debug": null,
                "test": test_json(&s2, "initial", 1, Some([10, 7, 2, 1]), Some(77.7),
                    "exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)",
                    &["test/math.test.js › math › finds the max",
                      "test/strings.test.js › strings › slugifies a title"]),
                "outcome": "failed",
                "reason": null,
            },
            {
                "attempt": 1,
                "debug": debug_json(&s2, 1, "FIXER_BY_ATTEMPT=1 fix-one", &["src/math.js"]),
                "test": test_json(&s2, "attempt-1", 1, Some([10, 8, 1, 1]), Some(88.8),
                    "exit 1 · 8 passed, 1 failed, 1 skipped of 10 (88.8%)",
                    &["test/strings.test.js › strings › slugifies a title"]),
                "outcome": "failed",
                "reason": null,
            },
            {
                "attempt": 2,
                "debug": debug_json(&s2, 2, "FIXER_BY_ATTEMPT=1 fix-one", &["src/strings.js"]),
                "test": test_json(&s2, "attempt-2", 0, Some([10, 9, 0, 1]), Some(100.0),
                    "exit 0 · 9 passed, 0 failed, 1 skipped of 10 (100.0%)", &[]),
                "outcome": "passed",
                "reason": null,
            },
        ],
    });
    let want = json!({
        "workflow_name": "node shell fix",
        "workflow_file": "wf.yml",
        "status": "completed",
        "unfinished": false,
        "current_step": null,
        "current_attempt": null,
        "current_phase": null,
        "position": null,
        "stop_reason": null,
        "resume_command": null,
        "started_at": null,
        "updated_at": null,
        "completed_at": null,
        "duration_ms": null,
        "cost_usd": 0.0,
        "state_file": format!("{d}/.process/run-state.json"),
        "log_file": format!("{d}/.process/run.log"),
        "workflow_copy": format!("{d}/workflow.yml"),
        "steps": [
            shell_step,
            test_step,
        ],
    });
    assert_eq!(run, want);
    // Every path the document names exists.
    for p in [
        format!("{s2}/attempt-1/debug-output.log"),
        format!("{s2}/attempt-2/test-results.json"),
        format!("{d}/.process/run.log"),
    ] {
        assert!(env.root.join(&p).is_file(), "{p}");
    }
}

#[test]
fn shell_fixed_run_report_and_text() {
    let env = node_run();
    let html = report(&env, NODE_ID);
    assert!(section(&html, "outcome").contains("<h2>Completed</h2>"));
    assert!(
        !html.contains(r#"<section id="tasks""#),
        "no test-cycle view"
    );

    let steps = section(&html, "steps");
    assert_eq!(steps.matches("<tr id=\"step-").count(), 2);
    assert!(steps.contains(
        "<tr id=\"step-1\" class=\"\">\n<td class=\"num\">1<div class=\"muted mono\">build</div></td>\n<td>shell</td>\n<td class=\"cmd\"><code>echo building</code></td>\n<td><span class=\"badge passed\">passed</span></td>\n<td class=\"num\">0</td>"
    ), "{steps}");
    assert!(steps.contains(
        "<td class=\"cmd\"><code>npm test</code><div class=\"muted\">passed after 2 debug attempts (of at most 3)</div></td>"
    ));
    assert!(steps.contains("<td class=\"num\">2 / 3</td>"));

    let attempts = section(&html, "attempts");
    assert!(attempts.contains("on_failure: shell <code>FIXER_BY_ATTEMPT=1 fix-one</code> · max_attempts 3 · stop_on_success true · fail_workflow false"));
    for (label, result, rate, outcome) in [
        (
            "initial run",
            "exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)",
            "77.7%",
            "failed",
        ),
        (
            "attempt 1",
            "exit 1 · 8 passed, 1 failed, 1 skipped of 10 (88.8%)",
            "88.8%",
            "failed",
        ),
        (
            "attempt 2",
            "exit 0 · 9 passed, 0 failed, 1 skipped of 10 (100.0%)",
            "100.0%",
            "passed",
        ),
    ] {
        let row = attempts
            .split("<tr>")
            .find(|r| r.starts_with(&format!("\n<td>{label}</td>")))
            .unwrap_or_else(|| panic!("no row {label}"));
        assert!(row.contains(&format!("<td>{result}")), "{row}");
        assert!(
            row.contains(&format!("<td class=\"num\">{rate}</td>")),
            "{row}"
        );
        assert!(
            row.contains(&format!("<span class=\"badge {outcome}\">{outcome}</span>")),
            "{row}"
        );
        if label != "initial run" {
            assert!(
                row.contains("shell <code>FIXER_BY_ATTEMPT=1 fix-one</code>"),
                "{row}"
            );
            assert!(
                row.contains("<span class=\"badge passed\">exit 0</span>"),
                "{row}"
            );
        }
    }
    assert!(attempts.contains("changed: src/math.js"));
    assert!(
        attempts
            .contains("<li><code>test/strings.test.js › strings › slugifies a title</code></li>")
    );

    // One chart: a point per test run, the 100 % line, the run's words.
    assert_eq!(attempts.matches("<svg").count(), 1);
    assert_eq!(attempts.matches("<g class=\"run\"").count(), 3);
    assert!(
        attempts
            .contains("<title id=\"chart-step-2\">Pass rate per test run of step 2 (test)</title>")
    );
    assert!(attempts.contains("<title>run 0: 77.7% (7/9 passed, 1 skipped), failed</title>"));
    assert!(attempts.contains("<title>run 1: 88.8% (8/9 passed, 1 skipped), failed</title>"));
    assert!(attempts.contains("<title>run 2: 100.0% (9/9 passed, 1 skipped), passed</title>"));
    assert!(attempts.contains("<title>pass threshold 100.0%</title>"));
    assert!(!attempts.contains("conservative"), "no strategy legend");

    // Per-attempt logs are linked relative to the report, and exist.
    let base = format!("../.workflow/archives/{NODE_ID}/.process/step-02");
    for (href, text) in [
        (format!("{base}/attempt-1/debug-command.txt"), "action"),
        (
            format!("{base}/attempt-1/debug-output.log"),
            "action output",
        ),
        (format!("{base}/attempt-2/test-output.log"), "test output"),
        (format!("{base}/initial/test-results.json"), "results"),
    ] {
        assert!(
            attempts.contains(&format!("<a href=\"{href}\">{text}</a>")),
            "{href}"
        );
        assert!(env.root.join("reports").join(&href).is_file(), "{href}");
    }
    let artifacts = section(&html, "artifacts");
    assert!(artifacts.contains("The on_failure shell command of this attempt, as run"));
    assert!(
        artifacts.contains("The run&#x27;s state: current step, attempt and phase, every record")
    );

    let text = status_text(&env, NODE_ID);
    assert!(text.starts_with(&format!(
        "{NODE_ID}  [completed]  workflow node shell fix (wf.yml)\nCompleted: all 2 steps finished and every test step passed; step 2 (test) passed after 2 debug attempts\n"
    )), "{text}");
    assert!(
        text.contains(
            "\
step 2 (test): passed after 2 debug attempts (of at most 3)  ▄▆█
on_failure: shell `FIXER_BY_ATTEMPT=1 fix-one`
RUN          ACTION        TESTS                                                  OUTCOME
initial run  -             exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)   failed
attempt 1    shell exit 0  exit 1 · 8 passed, 1 failed, 1 skipped of 10 (88.8%)   failed
attempt 2    shell exit 0  exit 0 · 9 passed, 0 failed, 1 skipped of 10 (100.0%)  passed
"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("Next: archived: the session is finished and kept read-only\n"),
        "{text}"
    );
}

/// The first debug command interrupts wfx (its parent): the run pauses in
/// attempt 1's debug phase, and `--resume` finishes it.
#[test]
fn interrupted_run_shows_where_it_stands_then_resumes() {
    let env = Env::new();
    env.write("check.sh", CHECK);
    env.write(
        "debug.sh",
        "#!/bin/sh\nif [ ! -f interrupted ]; then touch interrupted; kill -INT $PPID; sleep 30; fi\ntouch fixed\n",
    );
    env.write(
        "wf.yml",
        "name: wf\ncommands:\n  - shell: echo one\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: exec sh debug.sh ${test.attempt}\n        max_attempts: 2\n  - shell: echo three\n",
    );
    env.git_init_commit();
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 3, "{}", out.stderr);

    let id = "WFS-run-wf";
    let s2 = format!(".workflow/active/{id}/.process/step-02");
    let v = status_json(&env, id);
    assert_eq!(v["status"], "paused");
    assert_eq!(
        v["outcome"],
        json!({
            "kind": "paused",
            "title": "Paused",
            "reason": "interrupted while running `exec sh debug.sh 1`: stopped at step 2 (test), attempt 1 (debug command); resumable"
        })
    );
    assert_eq!(v["next_command"], "wfx run wf.yml --resume");
    assert_eq!(
        v["next_step"],
        "continue at step 2 (test), attempt 1 (debug command)"
    );
    let run = &v["run"];
    assert_eq!(run["status"], "paused");
    assert_eq!(run["unfinished"], true);
    assert_eq!(run["current_step"], 2);
    assert_eq!(run["current_attempt"], 1);
    assert_eq!(run["current_phase"], "debug");
    assert_eq!(run["position"], "step 2 (test), attempt 1 (debug command)");
    assert_eq!(
        run["stop_reason"],
        "interrupted while running `exec sh debug.sh 1`"
    );
    assert_eq!(run["resume_command"], "wfx run wf.yml --resume");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(
        steps
            .iter()
            .map(|s| (
                s["status"].as_str().unwrap(),
                s["current"].as_bool().unwrap(),
                s["command"].as_str().unwrap()
            ))
            .collect::<Vec<_>>(),
        [
            ("passed", false, "echo one"),
            ("running", true, "sh check.sh"),
            ("pending", false, "echo three")
        ]
    );
    let mut attempts = steps[1]["attempts"].clone();
    redact_times(&mut attempts);
    assert_eq!(
        attempts,
        json!([
            {
                "attempt": 0,
                "debug": null,
                "test": test_json(&s2, "initial", 3, None, None, "exit 3 (output not parsed)", &[]),
                "outcome": "failed",
                "reason": null,
            },
            {
                "attempt": 1,
                "debug": {
                    "kind": "shell",
                    "agent": null,
                    "command": "exec sh debug.sh 1",
                    "command_truncated": false,
                    "finished": false,
                    "exit_code": null,
                    "timed_out": false,
                    "duration_ms": null,
                    "cost_usd": null,
                    "error": null,
                    "committed": false,
                    "files_changed": [],
                    "command_file": format!("{s2}/attempt-1/debug-command.txt"),
                    "output_file": format!("{s2}/attempt-1/debug-output.log"),
                },
                "test": null,
                "outcome": null,
                "reason": null,
            }
        ])
    );

    // Written outside the project (paths as text, no links), so the file
    // is not among the changes the resumed debug command is judged by.
    let html = report_at(&env, id, &env.tmp.path().join("paused.html"));
    assert!(section(&html, "outcome").contains("<h2>Paused</h2>"));
    assert!(!html.contains("<a href="));
    assert!(section(&html, "outcome").contains("<code>wfx run wf.yml --resume</code>"));
    let steps_html = section(&html, "steps");
    assert!(steps_html.contains("<tr id=\"step-2\" class=\"current\">"));
    assert!(steps_html.contains("<span class=\"badge running\">current</span>"));
    let attempts_html = section(&html, "attempts");
    assert!(attempts_html.contains("<span class=\"badge running\">not finished</span>"));
    assert!(attempts_html.contains("<span class=\"muted\">not run yet</span>"));
    assert!(!html.contains("<svg"), "one test run: no chart");
    let text = status_text(&env, id);
    assert!(text.contains("2*    test   running"), "{text}");
    assert!(
        text.ends_with("Next: continue at step 2 (test), attempt 1 (debug command)\n  wfx run wf.yml --resume\n"),
        "{text}"
    );

    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = status_json(&env, id);
    assert_eq!(v["status"], "completed");
    assert_eq!(v["run"]["resume_command"], Value::Null);
    let a1 = &v["run"]["steps"][1]["attempts"][1];
    assert_eq!(a1["debug"]["finished"], true);
    assert_eq!(
        a1["debug"]["files_changed"],
        json!(["fixed", "interrupted"])
    );
    assert_eq!(a1["test"]["result"], "exit 0 (output not parsed)");
    assert_eq!(a1["outcome"], "passed");
    let html = report(&env, id);
    let attempts_html = section(&html, "attempts");
    assert_eq!(attempts_html.matches("<g class=\"run\"").count(), 2);
    assert!(attempts_html.contains("<title>run 1: exit 0 (output not parsed), passed</title>"));
}

#[test]
fn failed_run_names_the_step_and_starts_afresh() {
    let env = Env::new();
    env.write("check.sh", CHECK);
    env.write(
        "wf.yml",
        "name: wf\ncommands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: echo still broken\n        max_attempts: 2\n        fail_workflow: true\n  - shell: echo never\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);

    let id = "WFS-run-wf";
    let v = status_json(&env, id);
    assert_eq!(v["status"], "failed");
    let reason = "step 1 (test): the tests still fail after 2 debug attempts (fail_workflow: true)";
    assert_eq!(
        v["outcome"],
        json!({"kind": "blocked", "title": "Failed", "reason": reason})
    );
    assert_eq!(v["next_command"], "wfx run wf.yml");
    assert_eq!(
        v["next_step"],
        "fix what stopped the run, then run the workflow again (a new session; this one is archived)"
    );
    let run = &v["run"];
    assert_eq!(run["status"], "failed");
    assert_eq!(run["unfinished"], false);
    assert_eq!(run["stop_reason"], reason);
    assert_eq!(run["current_step"], Value::Null);
    let test = &run["steps"][0];
    assert_eq!(test["status"], "failed");
    assert_eq!(test["exit_code"], 3);
    assert_eq!(test["reason"], "exit 3 · 1 failing");
    assert_eq!(
        test["summary"],
        "FAILED: tests never passed after 2/2 debug attempts · workflow failed (fail_workflow: true)"
    );
    assert_eq!(test["pass_rates"], json!([]));
    let attempts = test["attempts"].as_array().unwrap();
    assert_eq!(
        attempts
            .iter()
            .map(|a| (
                a["attempt"].as_u64().unwrap(),
                a["debug"]["command"].as_str().unwrap_or("-"),
                a["debug"]["exit_code"].as_i64().unwrap_or(-1),
                a["test"]["exit_code"].as_i64().unwrap(),
                a["outcome"].as_str().unwrap()
            ))
            .collect::<Vec<_>>(),
        [
            (0, "-", -1, 3, "failed"),
            (1, "echo still broken", 0, 3, "failed"),
            (2, "echo still broken", 0, 3, "failed")
        ]
    );
    assert_eq!(run["steps"][1]["status"], "pending");
    assert_eq!(run["steps"][1]["command"], "echo never");

    let html = report(&env, id);
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("<h2>Failed</h2>"), "{outcome}");
    assert!(outcome.contains(reason));
    let attempts_html = section(&html, "attempts");
    assert_eq!(attempts_html.matches("<g class=\"run\"").count(), 3);
    assert_eq!(
        attempts_html
            .matches("<td>exit 3 (output not parsed)</td>")
            .count(),
        3
    );
    let text = status_text(&env, id);
    assert!(
        text.contains(
            "\
STEP  KIND   STATUS   EXIT  DURATION"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n2     shell  pending  -     -         -         echo never\n"),
        "{text}"
    );
    assert!(text.ends_with("  wfx run wf.yml\n"), "{text}");
}
