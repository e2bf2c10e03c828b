//! Issue #15, what an agent may not do to wfx's files, the tree and the
//! tests (DESIGN.md §10.2), end to end on a fresh copy of
//! `fixtures/projects/py-calc` with fixture agents that do the hostile
//! thing (docs/hardening.md, "The agent cannot fool the loop").

use crate::common::{Env, fake_agent, fixer_config, fixture_text, out_text};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn with(mut config: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        match (config.get_mut(k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => {
                a.extend(b.clone());
            }
            _ => {
                config[k] = v.clone();
            }
        }
    }
    config
}

/// Case 3: a fix agent forges 20 successful fix-history entries and writes
/// `status: completed` into the state and session files on every call.
/// Each is restored after the call; the limit of 2 attempts still ends the
/// run (not 20 forged attempts, not a forged completion), and a resume
/// does not archive or commit a completion.
#[test]
fn a_fix_agent_forging_wfx_records_is_undone_and_the_limit_still_holds() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &with(
            fixer_config("forge-session"),
            json!({"cycle": {"max_iterations": 2}}),
        ),
    );
    env.plan_calculator();
    let first = env.cycle(&[]).code(1);
    let text = out_text(&first);
    assert!(
        text.contains("reached the limit of 2 fix attempts"),
        "{text}"
    );
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "only wfx's own attempts: {history:#}");
    for e in entries {
        assert_eq!(e["tamper"], "session_edited", "{e:#}");
        assert_ne!(e["agent"], "forged");
    }
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "blocked");
    let session = env.json(&format!("{ACTIVE}/workflow-session.json"));
    assert_ne!(session["status"], "completed");
    // What was committed is wfx's record too.
    let committed = env.git(&["log", "-p", "--all"]);
    assert!(!committed.contains("\"agent\": \"forged\""), "{committed}");
    // Resume: still blocked, nothing archived, no completion committed.
    env.cycle(&["--resume-session", ID]).code(1);
    assert!(!env.root.join(ARCHIVED).exists());
    assert!(
        !env.subjects().iter().any(|s| s.contains("completed")),
        "{:?}",
        env.subjects()
    );
    env.wfx().args(["validate", ID]).assert().success();
}

/// Case 4: a read-only analysis runs `sed -i` on the code during its call
/// (and answers with a valid analysis). The change is undone, the call is
/// recorded as `tree_edited` and counts as failed (the built-in analyzer
/// answers), and a fix agent that changes nothing does not get the
/// analysis's edit credited: no "completed", the file as it was.
#[test]
fn an_analysis_that_edits_the_tree_is_undone_and_counts_as_failed() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({
            "cycle": {"max_iterations": 1},
            "agents": {
                "analysis": ["sed"],
                "fix": "fixer",
                "definitions": {
                    "sed": {"command": [fake_agent("sed-analysis").display().to_string()]},
                    "fixer": {"command": [fake_agent("noop").display().to_string()]}
                }
            }
        }),
    );
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert_eq!(
        env.read("calc/ops.py"),
        fixture_text("py-calc", "calc/ops.py")
    );
    assert_eq!(env.git(&["status", "--porcelain", "--", "calc"]), "");
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let analysis: Vec<&Value> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["role"] == "analysis")
        .collect();
    assert!(!analysis.is_empty(), "{history:#}");
    for c in analysis {
        assert_eq!(c["tamper"], "tree_edited", "{c:#}");
        assert_ne!(c["outcome"], "accepted", "{c:#}");
    }
    env.wfx().args(["validate", ID]).assert().success();
}

/// Case 5: the fix agent skips the failing tests through a new
/// `tests/conftest.py` collection hook, without touching a test file. The
/// hook is a test edit (`skip_added`, `infrastructure`): the fix is
/// rejected from its diff and undone before any retest, and the hook is
/// gone from the tree.
#[test]
fn a_conftest_hook_that_skips_the_failing_tests_is_rejected() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &with(
            fixer_config("conftest-skip"),
            json!({"cycle": {"max_iterations": 1}}),
        ),
    );
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["outcome"], "rejected", "{entry:#}");
    let edits = entry["test_edits"].as_array().unwrap();
    assert!(
        edits.iter().any(|e| e["kind"] == "skip_added"
            && e["file"] == "tests/conftest.py"
            && e["detail"]
                .as_str()
                .unwrap()
                .contains("skip mark in a collection hook")),
        "{entry:#}"
    );
    // A conftest.py is test infrastructure (DESIGN.md §11.2).
    assert!(
        edits
            .iter()
            .any(|e| e["kind"] == "infrastructure" && e["file"] == "tests/conftest.py"),
        "{entry:#}"
    );
    // Rejected from the diff: no retest, and neither the fix nor a revert
    // of it is in history (issue #27 case 7).
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(
        state["iterations"].as_array().unwrap().len(),
        1,
        "{state:#}"
    );
    assert!(
        env.subjects()
            .iter()
            .all(|s| !s.contains("rollback") && !s.contains("iteration 1")),
        "{:?}",
        env.subjects()
    );
    assert!(!env.root.join("tests/conftest.py").exists());
    env.wfx().args(["validate", ID]).assert().success();
}
