//! Sessions written by wfx 0.1 (`fixtures/sessions-v0.1/`, made by the
//! release binary with `make.sh`) load, `wfx status` and resume to the end
//! with today's wfx: the typed state reads the old files, including the
//! fields 0.1 kept in `extra` maps.

use crate::common;

use std::path::Path;

use common::{Env, fake_agent, fixer_config};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sessions-v0.1")
        .join(name)
}

/// The project as the old run left it: its git history (wfx's commits
/// included) and its `.workflow/`, with the snapshots the old state names
/// present in the object database.
fn restore(name: &str) -> Env {
    let env = Env::new();
    let bundle = fixture(name).join("repo.bundle");
    let mut cmd = std::process::Command::new("git");
    env.apply(&mut cmd);
    let out = cmd
        .current_dir(env.tmp.path())
        .args(["clone", "-q", "-b", "main"])
        .arg(&bundle)
        .arg(&env.root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::copy_dir(&fixture(name).join("workflow"), &env.root.join(".workflow"));
    env
}

/// Make sure the tree object `id` exists: it is either HEAD's tree or
/// HEAD's tree without `.workflow/` (what a snapshot of a clean work tree
/// is), rebuilt here exactly as git would store it.
fn ensure_snapshot(env: &Env, id: &str) {
    if env.git_try(&["cat-file", "-e", id]).0 {
        return;
    }
    let index = env.tmp.path().join("snapshot-index");
    let git = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        env.apply(&mut cmd);
        let out = cmd
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["read-tree", "HEAD"]);
    git(&[
        "rm",
        "-r",
        "-q",
        "--cached",
        "--ignore-unmatch",
        ".workflow",
    ]);
    assert_eq!(
        git(&["write-tree"]),
        id,
        "the fixture's snapshot is HEAD without .workflow/"
    );
}

fn status_json(env: &Env, id: &str) -> Value {
    let out = env.wfx().args(["--json", "status", id]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn validate(env: &Env) {
    let out = env.wfx().arg("validate").output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_old_session_validates_and_has_a_status() {
    for (name, id, status, action) in [
        ("awaiting-fix", ID, "awaiting_fix", Some("execute_fix_task")),
        ("interrupted", ID, "paused", Some("execute_fix_task")),
        ("blocked", ID, "blocked", Some("none")),
        ("completed", ID, "completed", Some("none")),
        ("run-paused", "WFS-run-debug-calc", "paused", None),
    ] {
        let env = restore(name);
        validate(&env);
        let v = status_json(&env, id);
        assert_eq!(v["status"], status, "{name}: {v}");
        if let Some(a) = action {
            assert_eq!(v["next_action"], a, "{name}: {v}");
        }
    }
}

/// Iteration 2 waits for a person: they fix the second bug and resume.
#[test]
fn a_manual_fix_awaited_by_0_1_is_taken_and_the_session_completes() {
    let env = restore("awaiting-fix");
    let before = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    ensure_snapshot(&env, before["fix"]["snapshot"].as_str().unwrap());
    env.write(
        "src/strings.js",
        &env.read("src/strings.js")
            .replace(".replace(' ', '-')", ".replace(/\\s+/g, '-')"),
    );
    env.cycle(&[]).code(0);
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["status"], "completed");
    let rates = common::runs(&state);
    assert_eq!(rates.first().unwrap(), &(1, "full".to_string(), 77.8));
    assert_eq!(rates.last().unwrap().2, 100.0);
    assert_eq!(rates.last().unwrap().1, "full", "only a full run completes");
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{history}");
    assert_eq!(entries[0]["agent"], "manual");
    assert_eq!(entries[1]["agent"], "manual");
    assert!(entries.iter().all(|e| e["commit"].is_string()));
    let subjects = env.subjects();
    assert!(subjects[0].starts_with("test-cycle: session WFS-test-the-calculator completed"));
    assert!(
        subjects[1].starts_with("test-cycle: iteration 2 - "),
        "{subjects:?}"
    );
    assert!(
        subjects[2].starts_with("test-cycle: iteration 1 - "),
        "made by 0.1"
    );
    validate(&env);
}

/// Ctrl-C stopped the fix agent; a working agent finishes the attempt.
#[test]
fn a_fix_interrupted_under_0_1_is_redone_and_the_session_completes() {
    let env = restore("interrupted");
    let before = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    ensure_snapshot(&env, before["fix"]["snapshot"].as_str().unwrap());
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&fixer_config("fix-all")).unwrap(),
    );
    env.cycle(&[]).code(0);
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["status"], "completed");
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(history["entries"].as_array().unwrap().len(), 1);
    assert_eq!(history["entries"][0]["agent"], "fixer");
    assert_eq!(
        env.read("src/math.js").matches("values[i] > best").count(),
        1
    );
    validate(&env);
}

/// A blocked session stays blocked until a person reopens it; with more
/// attempts it then completes, and the rollback 0.1 recorded survives.
#[test]
fn a_session_blocked_under_0_1_reopens_with_more_attempts() {
    let env = restore("blocked");
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&fixer_config("fix-all")).unwrap(),
    );
    let out = env.cycle(&[]).code(1).get_output().stdout.clone();
    assert!(
        String::from_utf8_lossy(&out).contains("is blocked (nothing was run)"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    env.wfx().args(["session", "resume", ID]).assert().success();
    env.cycle(&["--max-iterations=3"]).code(0);
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["outcome"], "rolled_back");
    assert!(entries[0]["rollback_commit"].is_string(), "{history}");
    assert_eq!(entries[1]["outcome"], "success");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["iterations"][1]["result"], "rolled_back");
    assert!(state["iterations"][1]["rollback_commit"].is_string());
    validate(&env);
}

/// An archived session: resuming it only confirms the end (idempotent).
#[test]
fn a_session_completed_under_0_1_stays_completed() {
    let env = restore("completed");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let tests_commit = state["tests_commit"].as_str().unwrap().to_string();
    let out = env
        .cycle(&["--resume-session", ID])
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains("Session WFS-test-the-calculator completed: 100.0%"),
        "{text}"
    );
    let after = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(
        after["tests_commit"],
        json!(tests_commit),
        "a typed field now"
    );
    let gate = env.json(&format!("{ARCHIVED}/.task/IMPL-001.3-validation.json"));
    assert_eq!(gate["meta"]["gate_verdict"], "pass");
    validate(&env);
}

/// `wfx run --resume` continues the debug attempt 0.1 paused in, with a
/// claude that works now.
#[test]
fn a_run_paused_under_0_1_resumes_at_its_attempt() {
    let env = restore("run-paused");
    let state = env.json(".workflow/active/WFS-run-debug-calc/.process/run-state.json");
    let debug = &state["steps"][1]["attempts"][0]["debug"];
    ensure_snapshot(&env, debug["snapshot_before"].as_str().unwrap());
    let bin = env.fake_agents(&[("claude", "claude")]);
    let out = env
        .wfx_live()
        .env("PATH", env.path_with(&bin))
        .env("FAKE_AGENT_PATCH", fake_agent("py-calc-fix.patch"))
        .args(["run", "wf.yml", "--resume"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The finished run is archived (DESIGN.md §10.7).
    let state = env.run_state("WFS-run-debug-calc");
    assert_eq!(state["status"], "completed");
    let step = &state["steps"][1];
    assert_eq!(step["status"], "passed");
    assert_eq!(step["attempts"].as_array().unwrap().len(), 1, "{step}");
    assert_eq!(step["attempts"][0]["outcome"], "passed");
    assert_eq!(
        step["attempts"][0]["debug"]["snapshot_before"], debug["snapshot_before"],
        "the attempt kept the starting point 0.1 recorded"
    );
}
