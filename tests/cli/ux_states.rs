//! What a person reads about a session's state is what happened (issue #20
//! item 12): a task waiting for a person is not "running", a skipped task
//! is not ticked, the agent that fixed is named, counts agree with the pass
//! rate, and archiving an unfinished session does not call it completed.

use crate::common;

use common::{Env, fake_agent, make_session};
use serde_json::json;

const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// py-calc has one skipped test and two bugs. Planned in manual mode, the
/// loop pauses for a person; a custom agent given on the resume fixes it.
#[test]
fn manual_pause_then_custom_agent_shows_what_happened() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({"agents": {"definitions": {
            "fixer": {"command": [fake_agent("fix-all").display().to_string()]}
        }}}),
    );
    env.plan_calculator();
    env.cycle(&[]).code(3);

    let out = env.wfx().arg("status").output().unwrap();
    let status = stdout(&out);
    // Nothing runs while wfx waits for the person's fix.
    assert!(!status.contains("running"), "{status}");
    assert!(
        status.contains("IMPL-fix-1  in_progress  test-fix-iteration   manual  awaiting fix"),
        "{status}"
    );
    // 9 of the 11 tests that ran pass (81.8%); the skipped one stands apart.
    assert!(status.contains("9/11 (1 skipped)  81.8%"), "{status}");

    let todo = env.read(&format!("{ACTIVE}/TODO_LIST.md"));
    assert!(
        todo.contains("- [-] **IMPL-001**: Test Understanding & Generation → [⏭️]"),
        "a skipped task is not ticked as done:\n{todo}"
    );
    assert!(todo.contains("- [x] **IMPL-001.5**"), "{todo}");

    env.cycle(&["--fix-agent", "fixer"]).success();
    let task: serde_json::Value = env.json(&format!("{ARCHIVED}/.task/IMPL-fix-1.json"));
    assert_eq!(task["meta"]["agent"], "fixer", "the agent that fixed");
    let task: serde_json::Value = env.json(&format!("{ARCHIVED}/.task/IMPL-002.json"));
    assert_eq!(task["meta"]["agent"], "fixer");

    let body = env.git(&["log", "-1", "--format=%B"]);
    assert!(
        body.contains("- iteration 1: 81.8% (9/11 passed, 1 skipped), conservative\n"),
        "{body}"
    );
    assert!(body.contains("100.0% (11/11 passed, 1 skipped)"), "{body}");
    let status = stdout(&env.wfx().arg("status").output().unwrap());
    assert!(status.contains("11/11 (1 skipped)  100.0%"), "{status}");
    // The retest of the 2 failed tests counts those 2, not the suite; its
    // rate is the suite's, merged, and says so. Each run has its number.
    assert!(
        status.contains("\n2    2          failed tests  2/2                100.0% merged"),
        "{status}"
    );
    assert!(status.contains("\n3    2          full "), "{status}");
    assert!(!status.contains("11/12"), "{status}");
}

/// `wfx session complete` on a session that never finished archives it as
/// it is: its status stays, it gets no completion time, and the message
/// and `wfx status` say it is unfinished.
#[test]
fn completing_an_unfinished_session_records_what_happened() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "awaiting_fix",
        &[
            ("IMPL-001", "skipped"),
            ("IMPL-001.3", "completed"),
            ("IMPL-002", "in_progress"),
            ("IMPL-fix-1", "in_progress"),
        ],
    );
    let out = env
        .wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "Archived WFS-test-alpha unfinished (awaiting_fix; 2 of 4 tasks finished) → .workflow/archives/WFS-test-alpha\n"
    );
    let session: serde_json::Value =
        env.json(".workflow/archives/WFS-test-alpha/workflow-session.json");
    assert_eq!(session["status"], "awaiting_fix");
    assert!(session.get("completed_at").is_none_or(|v| v.is_null()));
    assert!(session["archived_at"].is_string());
    let manifest: serde_json::Value = env.json(".workflow/archives/manifest.json");
    assert_eq!(manifest[0]["status"], "awaiting_fix");

    let status = stdout(
        &env.wfx()
            .args(["status", "WFS-test-alpha"])
            .output()
            .unwrap(),
    );
    assert!(
        status.contains("Archived unfinished: archived while awaiting_fix"),
        "{status}"
    );
    assert!(!status.contains("Completed"), "{status}");
}

/// A person's fix commits what lies in the fix task's focus; an unrelated
/// edit is named and left uncommitted, and the subject names no agent
/// strategy (issue #20 item 9).
#[test]
fn a_manual_fix_commits_only_its_focus_and_says_manual_fix() {
    let env = Env::new();
    env.cycle_project("py-calc", &json!({}));
    env.plan_calculator();
    env.cycle(&[]).code(3);
    let patch = common::fake_agent("py-calc-fix.patch");
    env.git(&["apply", patch.to_str().unwrap()]);
    let init = env.read("calc/__init__.py");
    env.write("calc/__init__.py", &format!("{init}# a note of mine\n"));

    let out = env.cycle(&[]).success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("warning: left uncommitted (outside IMPL-fix-1's focus: ")
            && stderr
                .contains("): calc/__init__.py; commit them yourself if they belong to the fix"),
        "{stderr}"
    );
    let subjects = env.subjects();
    let fix = subjects
        .iter()
        .position(|s| s.starts_with("test-cycle: iteration 1 - "))
        .expect("a fix commit");
    assert_eq!(
        subjects[fix],
        "test-cycle: iteration 1 - fix by hand (pass: 81.8% → 100.0%)"
    );
    let files = env.git(&["show", "--name-only", "--format=", &format!("HEAD~{fix}")]);
    let code: Vec<&str> = files
        .lines()
        .filter(|f| !f.starts_with(".workflow/"))
        .collect();
    assert_eq!(code, ["calc/auth.py", "calc/ops.py"], "{files}");
    assert_eq!(
        env.git(&["status", "--porcelain", "calc"]),
        " M calc/__init__.py\n"
    );
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(
        history["entries"][0]["left_uncommitted"],
        json!(["calc/__init__.py"])
    );
}
