//! `wfx session abandon [ID]` (issue #20): a session a person gives up is
//! marked `abandoned` and archived like a completed one, with its manifest
//! entry; its commits and files stay; a session another wfx process runs
//! is refused.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Env, fixer_config};
use predicates::prelude::*;

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

#[test]
fn abandon_without_an_id_archives_the_active_session_and_keeps_everything() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-one"));
    env.plan_calculator();
    // One fix is committed, then the limit blocks the session.
    env.cycle(&["--max-iterations", "1"]).code(1);
    // The person's own half-done edit, not committed.
    let strings = env.read("src/strings.js") + "// my idea\n";
    env.write("src/strings.js", &strings);
    let log_before = env.git(&["log", "--format=%H"]);
    let status_before = env.git(&["status", "--porcelain", "--", "src"]);

    env.wfx()
        .args(["session", "abandon"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "Abandoned {ID} → {ARCHIVED}"
        )))
        .stdout(predicate::str::contains("commits and files are kept"));

    assert!(!env.root.join(ACTIVE).exists());
    let session = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert_eq!(session["status"], "abandoned");
    assert!(session["archived_at"].is_string());
    let manifest = env.json(".workflow/archives/manifest.json");
    let entries = manifest.as_array().expect("the manifest is a JSON array");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["session_id"], ID);
    assert_eq!(entries[0]["status"], "abandoned");
    assert_eq!(entries[0]["archive_path"], ARCHIVED);
    // Nothing of the user's was committed, reverted or removed.
    assert_eq!(env.git(&["log", "--format=%H"]), log_before);
    assert_eq!(
        env.git(&["status", "--porcelain", "--", "src"]),
        status_before
    );
    assert!(env.read("src/strings.js").ends_with("// my idea\n"));
    // The archived session is a valid one, and shown as abandoned.
    env.wfx().args(["validate", ID]).assert().success();
    env.wfx()
        .args(["session", "list", "--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains("abandoned"));
    // Once archived, it cannot be abandoned again.
    env.wfx()
        .args(["session", "abandon", ID])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("archived already"));
    // Nor is it taken for a cycle a kill cut short: its move is not
    // committed, but it did not complete; nothing is committed.
    env.wfx()
        .arg("test-cycle-execute")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no active session"))
        .stderr(predicate::str::contains("cut short").not());
    assert_eq!(env.git(&["log", "--format=%H"]), log_before);
}

#[test]
fn abandon_is_refused_while_another_wfx_process_runs_the_session() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("sleeper"));
    env.plan_calculator();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.arg("test-cycle-execute")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut running = cmd.spawn().unwrap();
    let state = env.root.join(ACTIVE).join(".process/iteration-state.json");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !state.exists() {
        assert!(Instant::now() < deadline, "the cycle never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    env.wfx()
        .args(["session", "abandon", ID])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "session {ID} is in use by wfx process"
        )));
    assert!(env.root.join(ACTIVE).is_dir(), "nothing was moved");
    unsafe { libc::kill(running.id() as i32, libc::SIGINT) };
    assert_eq!(running.wait().unwrap().code(), Some(3));
    // Once the run has stopped, abandoning works.
    env.wfx()
        .args(["session", "abandon", ID])
        .assert()
        .success();
    assert_eq!(
        env.json(&format!("{ARCHIVED}/workflow-session.json"))["status"],
        "abandoned"
    );
}

#[test]
fn abandon_help_has_an_example() {
    let env = Env::new();
    env.wfx()
        .args(["session", "abandon", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("wfx session abandon WFS-"));
}
