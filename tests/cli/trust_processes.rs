//! Issue #15, processes, locks and the environment (DESIGN.md §10.2 last
//! bullet, §10.3), from the command line on a fresh copy of
//! `fixtures/projects/py-calc`:
//! - case 8: a `.lock` that is a symbolic link is refused (exit 2, the file
//!   named) by every command that takes it, and its target keeps its bytes;
//! - case 10: a test command that leaves a `setsid` daemon holding the
//!   output pipe neither hangs wfx nor outlives the step; after `kill -9`
//!   the resume ends what escaped; a recorded group whose leader is not the
//!   recorded process (pid reused) is left alone;
//! - case 11: a second session in the same work tree is refused.

use crate::common;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Env, fixer_config};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";

/// py-calc with a planned session and the test command `test_command`.
fn project(test_command: Option<&str>) -> Env {
    project_with(test_command, 10)
}

fn project_with(test_command: Option<&str>, timeout_s: u64) -> Env {
    let env = Env::new();
    let mut config = fixer_config("fix-all");
    if let Some(cmd) = test_command {
        config["test"] = json!({"command": cmd, "timeout_s": timeout_s});
    }
    env.cycle_project("py-calc", &config);
    env.plan_calculator();
    env
}

/// Pids of live processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Wait (generously) until no process with `marker` is left.
fn gone(marker: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A `sleep` duration unique to this test run, so that the processes a
/// test looks for are its own.
fn marker_secs() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}{:07}",
        3000 + std::process::id() % 1000,
        nanos % 10_000_000
    )
}

#[test]
fn a_lock_that_is_a_symlink_is_refused_and_its_target_keeps_its_bytes() {
    let env = project(None);
    let target = env.home.join("important");
    std::fs::write(&target, b"my important notes\n").unwrap();
    let lock = env.root.join(ACTIVE).join(".lock");
    let _ = std::fs::remove_file(&lock);
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    for args in [
        vec!["test-cycle-execute", "--resume-session", ID],
        vec!["session", "resume", ID],
        vec!["session", "complete", ID],
    ] {
        let out = env.wfx_live().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{ACTIVE}/.lock")) && stderr.contains("symbolic link"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"my important notes\n",
            "{args:?}"
        );
        assert!(std::fs::symlink_metadata(&lock).unwrap().is_symlink());
    }
    assert!(
        env.root.join(ACTIVE).is_dir(),
        "the session was not archived"
    );
}

#[test]
fn a_daemon_holding_the_output_open_neither_hangs_the_step_nor_survives_it() {
    let secs = marker_secs();
    let env = project(Some(&format!("setsid sleep {secs} & python -m pytest")));
    let started = Instant::now();
    let mut child = env.wfx_live();
    let out = child
        .env("FIXER_STATE", env.state_dir())
        .args(["test-cycle-execute", "--max-iterations", "2"])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The cycle ran to its end (the fix makes every test pass).
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(300));
    assert!(
        gone(&format!("sleep {secs}")),
        "a `sleep {secs}` of a step survived wfx"
    );
}

#[test]
fn the_first_ctrl_c_pauses_even_while_a_daemon_holds_the_output() {
    let secs = marker_secs();
    // The tests hang after the daemon starts; Ctrl-C must record the pause.
    let env = project(Some(&format!(
        "setsid sleep {secs} & sleep {secs}1; python -m pytest"
    )));
    let mut wfx = spawn_cycle(&env, &["test-cycle-execute"]);
    let deadline = wait_for(&format!("sleep {secs}1"));
    assert!(Instant::now() < deadline, "the test command never started");
    unsafe { libc::kill(wfx.id() as i32, libc::SIGINT) };
    let status = wait_at_most(&mut wfx, Duration::from_secs(60));
    assert_eq!(status, Some(3), "one Ctrl-C ends with the pause (exit 3)");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "paused", "{state}");
    assert!(
        gone(&format!("sleep {secs}")),
        "a process of the step survived"
    );
}

/// `wfx ARGS` in the background (output discarded).
fn spawn_cycle(env: &Env, args: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.env("FIXER_STATE", env.state_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Wait (up to 60 s) until a process with `marker` runs; returns the deadline.
fn wait_for(marker: &str) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with(marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    deadline
}

fn wait_at_most(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The lock record as the last holder left it.
fn lock_record(root: &Path) -> Value {
    let text = std::fs::read_to_string(root.join(ACTIVE).join(".lock")).unwrap();
    serde_json::from_str(text.trim()).unwrap_or(Value::Null)
}

#[test]
fn a_resume_after_kill_9_ends_what_escaped_the_dead_run() {
    let secs = marker_secs();
    // The escaped daemon ignores the group and wfx's death; the tests hang.
    let env = project(Some(&format!(
        "setsid sleep {secs} >/dev/null 2>&1 & sleep {secs}1; python -m pytest"
    )));
    let mut wfx = spawn_cycle(&env, &["test-cycle-execute"]);
    wait_for(&format!("sleep {secs}1"));
    std::thread::sleep(Duration::from_millis(300));
    wfx.kill().unwrap(); // SIGKILL
    wfx.wait().unwrap();
    let record = lock_record(&env.root);
    assert!(record["child_pgid"].as_i64().is_some(), "{record}");
    assert!(record["child_start"].as_u64().is_some(), "{record}");
    // The escaped daemon outlived wfx (the group's leader died with it).
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !processes_with(&format!("sleep {secs}")).is_empty(),
        "nothing escaped: the test proves nothing"
    );
    // The resume ends it before anything else; the run itself then goes on
    // with the same (hanging) test command, so stop it by a short timeout.
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["session", "resume", ID])
        .output()
        .unwrap();
    let _ = out;
    assert!(
        gone(&format!("sleep {secs}")),
        "the escaped daemon survived the resume"
    );
}

#[test]
fn a_recorded_group_whose_leader_is_another_process_is_not_killed() {
    let env = project(None);
    // A process standing for one that got the dead child's pid.
    let mut victim = Command::new("sleep")
        .arg("301")
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = victim.id();
    let record = json!({
        "pid": 999_999,
        "since": "2026-01-01T00:00:00Z",
        "start": 1,
        "child_pgid": pgid,
        "child_start": 1,
    });
    std::fs::write(env.root.join(ACTIVE).join(".lock"), record.to_string()).unwrap();
    env.wfx().args(["session", "resume", ID]).output().unwrap();
    assert!(
        victim.try_wait().unwrap().is_none(),
        "an unrelated process group was killed"
    );
    // The same record with the victim's true start time: it is ended.
    let stat = std::fs::read_to_string(format!("/proc/{pgid}/stat")).unwrap();
    let start: u64 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let record = json!({
        "pid": 999_999,
        "since": "2026-01-01T00:00:00Z",
        "start": 1,
        "child_pgid": pgid,
        "child_start": start,
    });
    std::fs::write(env.root.join(ACTIVE).join(".lock"), record.to_string()).unwrap();
    env.wfx().args(["session", "resume", ID]).output().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = victim.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = victim.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let status = status.expect("the recorded group, its leader the recorded process, was ended");
    assert!(status.signal().is_some(), "{status:?}");
}

#[test]
fn a_second_session_in_the_same_work_tree_is_refused() {
    let secs = marker_secs();
    let env = project_with(Some(&format!("sleep {secs}; python -m pytest")), 600);
    // A second planned session in the same tree.
    env.wfx_live()
        .args(["test-fix-gen", "Test the parser", "--plan-only"])
        .assert()
        .success();
    let mut first = spawn_cycle(&env, &["test-cycle-execute", "--resume-session", ID]);
    wait_for(&format!("sleep {secs}"));
    let out = env
        .wfx_live()
        .args([
            "test-cycle-execute",
            "--resume-session",
            "WFS-test-the-parser",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("in use by session {ID}")) && stderr.contains("--worktree"),
        "{stderr}"
    );
    let second = env.json(".workflow/active/WFS-test-the-parser/workflow-session.json");
    assert_ne!(second["status"], "completed");
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    assert_eq!(wait_at_most(&mut first, Duration::from_secs(60)), Some(3));
}

/// The process wfx starts dies with wfx, even on `kill -9` and before any
/// resume: the parent-death signal, set between the child's start and its
/// `exec`. (What the child starts in turn is ended by the resume: above.)
#[test]
fn the_child_dies_with_wfx_on_kill_9_before_any_resume() {
    let secs = marker_secs();
    let env = project(Some(&format!("exec sleep {secs}")));
    let mut wfx = spawn_cycle(&env, &["test-cycle-execute"]);
    wait_for(&format!("sleep {secs}"));
    assert!(
        !processes_with(&format!("sleep {secs}")).is_empty(),
        "the test command never ran"
    );
    wfx.kill().unwrap(); // SIGKILL
    wfx.wait().unwrap();
    assert!(
        gone(&format!("sleep {secs}")),
        "the test command outlived wfx's kill -9"
    );
}
