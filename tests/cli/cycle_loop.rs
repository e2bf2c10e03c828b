//! Phase 5 end to end on the sample projects with fixture fixers: real git
//! repositories, real `node --test` / pytest runs, checked through commits,
//! artifacts, `wfx validate` and exit codes — as a user would run it.

use crate::common;
use crate::common::fixture_text;

use common::{Env, fake_agent, fixer_config, runs};
use predicates::prelude::*;
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn run(iteration: u64, scope: &str, pass_rate: f64) -> (u64, String, f64) {
    (iteration, scope.to_string(), pass_rate)
}

/// Each run has its own results file and log, named in its record.
fn runs_have_own_files(env: &Env, state: &Value, dir: &str) {
    let mut seen = std::collections::BTreeSet::new();
    for r in state["iterations"].as_array().unwrap() {
        let results = r["results_file"].as_str().unwrap();
        let log = r["output_log"].as_str().unwrap();
        assert!(
            seen.insert(results.to_string()) && seen.insert(log.to_string()),
            "{r}"
        );
        let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
        let file = env.root.join(dir).join(".process").join(name(results));
        let parsed: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(parsed["scope"], r["scope"], "{}", file.display());
        assert!(
            env.root
                .join(dir)
                .join(".process")
                .join(name(log))
                .is_file(),
            "{log}"
        );
    }
}

fn pass_rates(state: &Value) -> Vec<f64> {
    state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["pass_rate"].as_f64().unwrap())
        .collect()
}

fn field(state: &Value, name: &str) -> Vec<Value> {
    state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[name].clone())
        .collect()
}

fn validate(env: &Env) {
    env.wfx()
        .args(["validate", ID])
        .assert()
        .success()
        .stderr(predicate::str::contains("file(s) valid"));
}

#[test]
fn a_fixer_that_fixes_everything_completes_after_one_iteration() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    // test-fix-gen plans and hands over to phase 5 in one go.
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Test-fix workflow created successfully!"))
        .stdout(predicate::str::contains(
            "Session WFS-test-the-calculator completed: 100.0% on the full suite after 1 fix attempt(s)",
        ))
        .stdout(predicate::str::contains(format!("Archived: {ARCHIVED}")))
        // 7 of the 9 tests that ran; the skipped one is named, and the
        // change comes from the counts (7/9 → 9/9 is +22.2, not 100 − 77.7).
        .stderr(predicate::str::contains(
            "Iteration 1 · 77.7% · 2 failing · 1 skipped (left out of the rate) · full suite",
        ))
        .stderr(predicate::str::contains("Iteration 2 · 100.0% (+22.2) · 0 failing"))
        // One count of phases, 1 to 5.
        .stderr(predicate::str::contains("Phase 1/5 session start"))
        .stderr(predicate::str::contains("\nPhase 4/5 task generation\n"))
        .stderr(predicate::str::contains("\nPhase 5/5 WFS-test-the-calculator · "));
    assert_eq!(
        env.subjects(),
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 1 fix attempt(s))",
            "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 100.0%)",
            "initial",
        ]
    );
    // The fix commit holds the fix and the session's artifacts, no logs.
    let files = env.git(&["show", "--name-only", "--format=", "HEAD~1"]);
    assert!(
        files.contains("src/math.js\n") && files.contains("src/strings.js\n"),
        "{files}"
    );
    assert!(files.contains(&format!("{ACTIVE}/.process/iteration-state.json")));
    assert!(
        !files.contains(".log") && !files.contains("cli-output"),
        "{files}"
    );
    assert!(env.git(&["show", "-s", "--format=%B", "HEAD~1"]).contains(
        "Wfx-Session: WFS-test-the-calculator\nWfx-Iteration: 1\nWfx-Kind: fix\nWfx-Run: "
    ));
    // Completion: archived, final commit with the move, nothing left over.
    assert!(!env.root.join(ACTIVE).exists());
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let manifest = env.json(".workflow/archives/manifest.json");
    assert_eq!(manifest[0]["session_id"], ID);
    assert_eq!(manifest[0]["status"], "completed");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["status"], "completed");
    assert_eq!(state["next_action"], "none");
    assert_eq!(
        runs(&state),
        [
            run(1, "full", 77.7),
            run(2, "affected", 100.0),
            run(2, "full", 100.0)
        ]
    );
    assert_eq!(
        field(&state, "result"),
        [Value::Null, json!("improved"), json!("success")]
    );
    runs_have_own_files(&env, &state, ARCHIVED);
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(history["entries"][0]["outcome"], "success");
    assert_eq!(history["entries"][0]["agent"], "fixer");
    assert_eq!(
        history["entries"][0]["files_changed"],
        json!(["src/math.js", "src/strings.js"])
    );
    assert_eq!(
        history["entries"][0]["commit"].as_str().unwrap(),
        env.git(&["rev-parse", "HEAD~1"]).trim()
    );
    let session = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert_eq!(session["status"], "completed");
    assert_eq!(session["phases"][4]["status"], "completed");
    let fix_task = env.json(&format!("{ARCHIVED}/.task/IMPL-fix-1.json"));
    assert_eq!(fix_task["status"], "completed");
    assert_eq!(fix_task["meta"]["type"], "test-fix-iteration");
    assert_eq!(fix_task["meta"]["analysis_quality"], "degraded");
    assert!(
        fix_task["context"]["fix_strategy"]["modification_points"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    );
    let todo = env.read(&format!("{ARCHIVED}/TODO_LIST.md"));
    assert!(
        todo.contains("  - [x] Iteration 1: initial test (pass: 77.7%, conservative)\n"),
        "{todo}"
    );
    assert!(
        todo.contains("  - [x] Iteration 2: fix validation (pass: 100.0%)\n"),
        "{todo}"
    );
    for f in [
        ".summaries/IMPL-002-summary.md",
        ".summaries/IMPL-fix-1-summary.md",
        ".summaries/iteration-summaries/iteration-1.md",
        ".summaries/iteration-summaries/iteration-2.md",
        ".process/iteration-1-analysis.md",
        ".process/iteration-1-failures.json",
        ".process/iteration-1-fix-prompt.md",
        ".process/iteration-1-fix-cli-output.txt",
    ] {
        assert!(env.root.join(ARCHIVED).join(f).is_file(), "{f} missing");
    }
    validate(&env);
    // Resuming a finished session does nothing and says so.
    env.cycle(&["--resume-session", ID])
        .success()
        .stdout(predicate::str::contains("completed"));
    assert_eq!(env.subjects().len(), 3);
}

#[test]
fn a_fixer_that_fixes_one_failure_per_call_climbs_one_commit_per_iteration() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-one"));
    env.plan_calculator();
    env.cycle(&[]).success();
    assert_eq!(
        env.subjects(),
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - conservative strategy (pass: 88.8% → 100.0%)",
            "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 88.8%)",
            "initial",
        ]
    );
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(
        runs(&state),
        [
            run(1, "full", 77.7),
            // Tier 1 still fails, but the fix made a failing test pass and
            // there is no affected tier: the partial fix is settled on tier
            // 1, without a full run (DESIGN.md §10.4).
            run(2, "affected", 88.8),
            // Tier 1 passes, tier 2 (affected) too, then the validation.
            run(3, "affected", 100.0),
            run(3, "affected", 100.0),
            run(3, "full", 100.0)
        ]
    );
    assert_eq!(
        field(&state, "strategy"),
        [
            json!("conservative"),
            json!("conservative"),
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
    assert_eq!(
        field(&state, "result"),
        [
            Value::Null,
            json!("improved"),
            json!("improved"),
            json!("improved"),
            json!("success")
        ]
    );
    runs_have_own_files(&env, &state, ARCHIVED);
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let outcomes: Vec<&str> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["improved", "success"]);
    validate(&env);
}

#[test]
fn a_fixer_that_breaks_more_tests_is_reverted_and_the_next_strategy_is_surgical() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("break-more"));
    env.plan_calculator();
    env.cycle(&[])
        .success()
        .stderr(predicate::str::contains("Rolled back iteration 1"));
    assert_eq!(
        env.subjects(),
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - surgical strategy (pass: 77.7% → 100.0%)",
            "test-cycle: rollback iteration 1 - regression detected (pass: 33.3% < 77.7%)",
            "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 33.3%)",
            "initial",
        ]
    );
    // The revert undid exactly the fix commit.
    assert_eq!(
        env.git(&["diff", "HEAD~4", "HEAD~2", "--", "src", "test"]),
        ""
    );
    let revert = env.git(&["show", "-s", "--format=%B", "HEAD~2"]);
    assert!(revert.contains("Wfx-Kind: rollback"), "{revert}");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(
        runs(&state),
        [
            run(1, "full", 77.7),
            // Tier 1 still fails: the full suite shows what the fix broke.
            run(2, "affected", 77.7),
            run(2, "full", 33.3),
            run(3, "affected", 100.0),
            run(3, "full", 100.0)
        ]
    );
    assert_eq!(
        field(&state, "result"),
        [
            Value::Null,
            json!("no_change"),
            json!("rolled_back"),
            json!("improved"),
            json!("success")
        ]
    );
    assert_eq!(
        field(&state, "strategy"),
        [
            json!("conservative"),
            Value::Null,
            json!("surgical"),
            Value::Null,
            Value::Null
        ]
    );
    assert!(state["iterations"][0]["fix_commit"].is_string());
    // The full run of iteration 2 (record 2) judged and rolled back.
    assert_eq!(
        state["iterations"][2]["rollback_commit"].as_str().unwrap(),
        env.git(&["rev-parse", "HEAD~2"]).trim()
    );
    assert_eq!(
        state["iterations"][2]["new_failures"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(history["entries"][0]["outcome"], "rolled_back");
    assert_eq!(history["entries"][0]["pass_rate_after"], 33.3);
    assert_eq!(history["entries"][1]["strategy"], "surgical");
    validate(&env);
}

/// Deleting the failing tests is rejected from the fix's diff, before any
/// retest and any commit (DESIGN.md §11.2): the tests are put back and
/// nothing of the attempt enters history.
#[test]
fn a_fixer_that_deletes_the_failing_tests_is_rejected_and_undone() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("delete-test"));
    env.plan_calculator();
    env.cycle(&["--max-iterations", "1"])
        .code(1)
        .stdout(predicate::str::contains(
            "Session WFS-test-the-calculator is blocked",
        ))
        .stderr(predicate::str::contains("the fix edited the tests"));
    assert_eq!(env.subjects(), ["initial"]);
    // The tests are back, byte for byte.
    for f in ["test/math.test.js", "test/strings.test.js"] {
        assert_eq!(env.read(f), fixture_text("node-calc", f), "{f}");
    }
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["outcome"], "rejected");
    let kinds: Vec<&str> = entry["test_edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    // The guard's two removals, seen in the diff: no run judged the fix.
    assert_eq!(kinds, ["removed_test", "removed_test"]);
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        state["blocked_reason"],
        "reached the limit of 1 fix attempts"
    );
    assert_eq!(state["iterations"].as_array().unwrap().len(), 1, "retested");
    let fix_task = env.json(&format!("{ACTIVE}/.task/IMPL-fix-1.json"));
    assert_eq!(fix_task["status"], "failed");
    validate(&env);
}

/// Skip markers on the failing tests: rejected from the diff, put back,
/// never committed.
#[test]
fn a_fixer_that_skips_the_failing_tests_is_rejected_and_undone() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("skip-test"));
    env.plan_calculator();
    env.cycle(&["--max-iterations", "1"])
        .code(1)
        .stderr(predicate::str::contains(
            "tests/test_auth.py: @pytest.mark.skip added (0 → 1); tests/test_ops.py: @pytest.mark.skip added (1 → 2)",
        ));
    assert_eq!(env.subjects(), ["initial"]);
    for f in ["tests/test_ops.py", "tests/test_auth.py"] {
        assert_eq!(env.read(f), fixture_text("py-calc", f), "{f}");
    }
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    assert_eq!(history["entries"][0]["outcome"], "rejected");
    assert_eq!(history["entries"][0]["pass_rate_after"], Value::Null);
    assert_eq!(history["entries"][0]["test_edits"][0]["kind"], "skip_added");
    validate(&env);
}

#[test]
fn a_fixer_that_changes_nothing_gets_stuck_and_blocks_with_a_report() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("noop"));
    env.plan_calculator();
    env.cycle(&[])
        .code(1)
        .stdout(predicate::str::contains(
            "blocked: no progress: the same tests failed in 4 runs in a row",
        ))
        .stdout(predicate::str::contains(format!(
            "Report: {ACTIVE}/.process/failure-report.md"
        )))
        .stderr(predicate::str::contains("the fix changed no file"));
    assert_eq!(env.subjects(), ["initial"]);
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "blocked");
    // Each no-op fix: the failing tests again (tier 1), and no full run:
    // a fix that changed no file cannot have changed any other result.
    assert_eq!(pass_rates(&state), [77.7, 77.7, 77.7, 77.7]);
    assert_eq!(
        field(&state, "scope"),
        [
            json!("full"),
            json!("affected"),
            json!("affected"),
            json!("affected")
        ]
    );
    // The strategy chosen after each iteration sits on its last run.
    assert_eq!(
        field(&state, "strategy"),
        [
            json!("conservative"),
            json!("conservative"),
            json!("aggressive"),
            Value::Null
        ]
    );
    let stuck = json!([
        "test/math.test.js › math › finds the max",
        "test/strings.test.js › strings › slugifies a title"
    ]);
    assert_eq!(state["stuck_tests"], stuck);
    let session = env.json(&format!("{ACTIVE}/workflow-session.json"));
    assert_eq!(session["status"], "blocked");
    let report = env.read(&format!("{ACTIVE}/.process/failure-report.md"));
    for needle in [
        "# Failure report: WFS-test-the-calculator",
        "- Reason: no progress: the same tests failed in 4 runs in a row",
        "- Fix attempts: 3 of at most 10",
        "| 4 | affected | 77.7% | 7/9 (1 skipped) | - | no_change |",
        "- Iteration 3 (aggressive, fix by fixer): **no_change**; pass 77.7% → 77.7%; changed nothing",
        "## Stuck tests\n\n- `test/math.test.js › math › finds the max`",
        "wfx session resume WFS-test-the-calculator",
        "wfx test-cycle-execute --resume-session=WFS-test-the-calculator --max-iterations=12",
    ] {
        assert!(
            report.contains(needle),
            "report lacks {needle:?}:\n{report}"
        );
    }
    // `wfx status` offers the very command the report offers (issue #20
    // item 5: one retry command, the same numbers wherever it appears).
    env.wfx()
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "wfx test-cycle-execute --resume-session=WFS-test-the-calculator --max-iterations=12",
        ));
    let loop_task = env.json(&format!("{ACTIVE}/.task/IMPL-002.json"));
    assert_eq!(loop_task["status"], "blocked");
    validate(&env);
    // Blocked stays blocked until a person resumes it.
    env.cycle(&[])
        .code(1)
        .stdout(predicate::str::contains("is blocked (nothing was run)"));
}

#[test]
/// The flaky test fails once and passes on its re-run: marked flaky (low),
/// the first run is a partial success, and the sealed confirmation on the
/// commit — where it passes — completes the session.
fn a_flaky_test_is_rerun_marked_and_confirmed_on_the_commit() {
    let env = Env::new();
    env.cycle_project("py-flaky", &json!({}));
    env.plan_calculator();
    let marker = env.state_dir().join("flaky-marker");
    env.wfx_live()
        .env("FLAKY_MARKER", &marker)
        .args(["test-cycle-execute"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Iteration 1 · 1 flaky (failed, then passed on a re-run): tests/test_numbers.py::test_sometimes_fails",
        ))
        .stdout(predicate::str::contains(
            "completed: 100.0% on the full suite after 0 fix attempt(s)",
        ));
    assert_eq!(
        env.subjects(),
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 0 fix attempt(s))",
            "initial"
        ]
    );
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(
        state["iterations"][0]["flaky_tests"],
        json!(["tests/test_numbers.py::test_sometimes_fails"])
    );
    let results = env.json(&format!("{ARCHIVED}/.process/iteration-1-results.json"));
    assert_eq!(results["failures"][0]["flaky"], true);
    assert_eq!(results["failures"][0]["criticality"], "low");
    assert_eq!(state["iterations"][0]["pass_rate"], 95.0);
    assert_eq!(state["iterations"][1]["sealed"], true);
    let session = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert_eq!(session["status"], "completed");
    validate(&env);
}

#[test]
fn manual_mode_pauses_for_a_person_and_the_edit_is_the_fix() {
    let env = Env::new();
    env.cycle_project("node-calc", &json!({}));
    env.plan_calculator();
    env.cycle(&[])
        .code(3)
        .stdout(predicate::str::contains(
            "Iteration 1: waiting for your fix (manual mode).",
        ))
        .stdout(predicate::str::contains(format!(
            "Analysis: {ACTIVE}/.process/iteration-1-analysis.md"
        )))
        .stdout(predicate::str::contains(
            "wfx test-cycle-execute --resume-session=WFS-test-the-calculator",
        ));
    let session = env.json(&format!("{ACTIVE}/workflow-session.json"));
    assert_eq!(session["status"], "awaiting_fix");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "awaiting_fix");
    assert_eq!(state["next_action"], "execute_fix_task");
    assert!(
        env.root
            .join(ACTIVE)
            .join(".task/IMPL-fix-1.json")
            .is_file()
    );
    // Resuming before changing anything spends no fix attempt.
    env.cycle(&["--resume-session", ID])
        .code(3)
        .stdout(predicate::str::contains(
            "No file has changed since the fix task was written",
        ));
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["iterations"].as_array().unwrap().len(), 1);
    assert_eq!(state["current_iteration"], 1);
    // The person fixes the code by hand, as README's fixes say.
    env.fix_node_calc();
    env.wfx().args(["session", "resume", ID]).assert().success();
    env.cycle(&["--resume-session", ID]).success();
    assert_eq!(
        env.subjects()[1],
        "test-cycle: iteration 1 - fix by hand (pass: 77.7% → 100.0%)"
    );
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(history["entries"][0]["agent"], "manual");
    assert_eq!(history["entries"][0]["outcome"], "success");
    validate(&env);
}

#[test]
fn max_iterations_precedence_flag_then_task_then_config_then_ten() {
    // A project whose test command always fails (an execution error, not
    // "no tests found", which pauses without counting): every round pauses
    // for a manual fix at once, so only the limit is looked at.
    let env = Env::new();
    env.write("README.md", "nothing\n");
    let config = |max: Option<u32>| {
        let mut c = json!({"test": {"command": "false"}, "cycle": {"no_progress_limit": 100}});
        if let Some(m) = max {
            c["cycle"]["max_iterations"] = json!(m);
        }
        c
    };
    env.write(".workflow/wfx.json", &config(Some(7)).to_string());
    env.git_init_commit();
    env.plan_calculator();
    let state_max = |env: &Env| {
        env.json(&format!("{ACTIVE}/.process/iteration-state.json"))["max_iterations"].clone()
    };
    // A manual resume counts as a fix attempt only when something changed.
    let edits = std::cell::Cell::new(0);
    let attempt = |env: &Env| {
        edits.set(edits.get() + 1);
        env.write("notes.txt", &format!("attempt {}\n", edits.get()));
    };
    let task = format!("{ACTIVE}/.task/IMPL-002.json");
    assert_eq!(env.json(&task)["meta"]["max_iterations"], 7);
    env.cycle(&[]).code(3);
    assert_eq!(state_max(&env), 7, "task meta (written from the config)");
    env.write(".workflow/wfx.json", &config(Some(9)).to_string());
    attempt(&env);
    env.cycle(&[]).code(3);
    assert_eq!(state_max(&env), 7, "task meta wins over the config");
    let mut t = env.json(&task);
    t["meta"].as_object_mut().unwrap().remove("max_iterations");
    env.write(&task, &t.to_string());
    attempt(&env);
    env.cycle(&[]).code(3);
    assert_eq!(state_max(&env), 9, "config without task meta");
    env.write(".workflow/wfx.json", &config(None).to_string());
    attempt(&env);
    env.cycle(&[]).code(3);
    assert_eq!(state_max(&env), 10, "default");
    // Four attempts are made by now: with a limit of 3 the loop blocks.
    attempt(&env);
    env.cycle(&["--max-iterations", "3"]).code(1);
    assert_eq!(state_max(&env), 3, "the flag wins");
    let session = env.json(&format!("{ACTIVE}/workflow-session.json"));
    assert_eq!(
        session["cycle_options"]["max_iterations"], 3,
        "and is recorded"
    );
}

#[test]
fn json_mode_streams_events_ending_in_done() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    let out = env.cycle(&["--json"]).success().get_output().stdout.clone();
    let events: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"start"));
    for want in ["task", "run", "analysis", "fix", "commit", "complete"] {
        assert!(names.contains(&want), "no {want} event in {names:?}");
    }
    let done = events.last().unwrap();
    assert_eq!(done["event"], "done");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["exit_code"], 0);
    assert_eq!(done["pass_rate"], 100.0);
    let run = events.iter().find(|e| e["event"] == "run").unwrap();
    assert_eq!(run["iteration"], 1);
    assert_eq!(run["pass_rate"], 77.7);
}

#[test]
fn an_unknown_fix_agent_or_a_missing_session_is_a_usage_error() {
    let env = Env::new();
    env.cycle_project("node-calc", &json!({}));
    env.cycle(&[])
        .code(2)
        .stderr(predicate::str::contains("no active session"));
    env.plan_calculator();
    env.cycle(&["--fix-agent", "nobody"])
        .code(2)
        .stderr(predicate::str::contains("agent nobody"));
    assert!(
        !env.root
            .join(ACTIVE)
            .join(".process/iteration-state.json")
            .exists()
    );
    let _ = fake_agent("noop");
}

#[test]
fn an_analysis_agent_and_a_preset_fix_agent_are_recorded_with_their_cost() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({"agents": {"analysis": ["claude"], "fix": "claude"}}),
    );
    let bin = env.fake_agents(&[("claude", "claude")]);
    env.plan_calculator();
    env.wfx_live()
        .env("PATH", env.path_with(&bin))
        .env("FAKE_AGENT_PATCH", fake_agent("py-calc-fix.patch"))
        .arg("test-cycle-execute")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "Iteration 1 · conservative · analysis by claude",
        ))
        .stderr(predicate::str::contains(
            "Iteration 1 · 81.8% · conservative · 2 failing · fix by claude",
        ))
        .stderr(predicate::str::contains("$0.05"));
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    // Phase 3 (run by plan_calculator without the fakes on PATH) recorded
    // its call too, without an iteration; these are phase 5's.
    let calls: Vec<(&str, f64)> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("iteration").is_some())
        .map(|c| (c["role"].as_str().unwrap(), c["cost_usd"].as_f64().unwrap()))
        .collect();
    assert_eq!(calls, [("analysis", 0.05), ("fix", 0.05)]);
    assert_eq!(history["entries"][0]["cost_usd"], 0.05);
    assert_eq!(history["entries"][0]["turns"], 3);
    let task = env.json(&format!("{ARCHIVED}/.task/IMPL-fix-1.json"));
    assert_eq!(task["meta"]["analysis_quality"], "agent");
    assert_eq!(task["meta"]["analysis_tool"], "claude");
    assert_eq!(
        task["context"]["fix_strategy"]["modification_points"][0]["file"],
        "calc/ops.py"
    );
    for f in [
        "iteration-1-prompt.md",
        "iteration-1-cli-output.txt",
        "iteration-1-analysis.md",
    ] {
        assert!(
            env.root.join(ARCHIVED).join(".process").join(f).is_file(),
            "{f}"
        );
    }
    // The affected tests the agent named drove the retest.
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(
        runs(&state),
        [
            run(1, "full", 81.8),
            run(2, "affected", 100.0),
            run(2, "full", 100.0)
        ]
    );
    validate(&env);
}

#[test]
fn the_agent_cost_cap_blocks_the_loop_before_the_next_agent_call() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({"agents": {"analysis": ["claude"], "fix": "claude", "max_cost_usd": 0.04}}),
    );
    let bin = env.fake_agents(&[("claude", "claude")]);
    env.plan_calculator();
    env.wfx_live()
        .env("PATH", env.path_with(&bin))
        .arg("test-cycle-execute")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "blocked: agent cost cap reached: $0.05 spent of agents.max_cost_usd $0.04",
        ));
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let phase5 = |h: &serde_json::Value| {
        h["agent_calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c.get("iteration").is_some())
            .count()
    };
    assert_eq!(phase5(&history), 1);
    assert!(history["entries"].as_array().unwrap().is_empty());
    assert_eq!(env.subjects(), ["initial"]);
}
