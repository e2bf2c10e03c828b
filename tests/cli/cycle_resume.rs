//! Stopping and going on: Ctrl-C during a fix, a blocked session resumed
//! by a person with a higher limit, and the session lock.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Env, fixer_config};
use predicates::prelude::*;

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";

fn use_fixer(env: &Env, fixer: &str) {
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string(&fixer_config(fixer)).unwrap(),
    );
    env.git(&["commit", "-qam", "use another fixer"]);
}

fn lock_pgid(env: &Env) -> Option<i32> {
    let text = std::fs::read_to_string(env.root.join(ACTIVE).join(".lock")).ok()?;
    let v: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    v["child_pgid"].as_i64().map(|p| p as i32)
}

/// A project whose fixer sleeps 600 s, planned, and `wfx test-cycle-execute`
/// started on it in the background with its output going to `output()`.
fn start_cycle_with_sleeper(output: fn() -> Stdio) -> (Env, std::process::Child) {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("sleeper"));
    env.plan_calculator();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.arg("test-cycle-execute")
        .stdout(output())
        .stderr(output());
    let child = cmd.spawn().unwrap();
    (env, child)
}

#[test]
fn ctrl_c_during_a_fix_ends_the_agent_saves_state_and_resumes() {
    let (env, child) = start_cycle_with_sleeper(Stdio::piped);
    // Wait until the fixer (sleeping 600 s) is running.
    let prompt = env
        .root
        .join(ACTIVE)
        .join(".process/iteration-1-fix-prompt.md");
    let deadline = Instant::now() + Duration::from_secs(60);
    let pgid = loop {
        if prompt.exists()
            && let Some(p) = lock_pgid(&env)
        {
            break p;
        }
        assert!(Instant::now() < deadline, "the fix never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("interrupted while fixer was fixing iteration 1"),
        "{stdout}"
    );
    assert!(stdout.contains(
        "Paused. Continue with: wfx test-cycle-execute --resume-session=WFS-test-the-calculator"
    ));
    assert!(!wfx::process::group_alive(pgid), "the fixer survived");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "paused");
    assert_eq!(state["next_action"], "execute_fix_task");
    let session = env.json(&format!("{ACTIVE}/workflow-session.json"));
    assert_eq!(session["status"], "paused");
    // Resume with a fixer that works: the same attempt, then done.
    use_fixer(&env, "fix-all");
    env.cycle(&["--resume-session", ID]).success();
    assert_eq!(
        env.subjects()[1],
        "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 100.0%)"
    );
}

#[test]
fn a_blocked_session_resumed_by_a_person_gets_more_attempts() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("noop"));
    env.plan_calculator();
    env.cycle(&["--max-iterations", "1"])
        .code(1)
        .stdout(predicate::str::contains(
            "blocked: reached the limit of 1 fix attempts",
        ));
    use_fixer(&env, "fix-all");
    // Without `wfx session resume` nothing runs.
    env.cycle(&["--resume-session", ID]).code(1);
    env.wfx().args(["session", "resume", ID]).assert().success();
    // The same limit would block again at once: the user is told to raise it.
    env.cycle(&["--resume-session", ID])
        .code(2)
        .stderr(predicate::str::contains("raise it with --max-iterations"));
    env.cycle(&["--resume-session", ID, "--max-iterations", "3"])
        .success();
    assert_eq!(
        &env.subjects()[..2],
        [
            "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - conservative strategy (pass: 77.7% → 100.0%)",
        ]
    );
    let state =
        env.json(".workflow/archives/WFS-test-the-calculator/.process/iteration-state.json");
    assert_eq!(state["blocked_reason"], serde_json::Value::Null);
    let loop_task = env.json(".workflow/archives/WFS-test-the-calculator/.task/IMPL-002.json");
    let history: Vec<&str> = loop_task["status_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        history,
        ["in_progress", "blocked", "in_progress", "completed"]
    );
    // Completed: the failure report of the earlier block is history (the
    // artifact list keeps it), not the outcome.
    let status = env.wfx().args(["status", ID]).assert().success();
    let status = String::from_utf8_lossy(&status.get_output().stdout).to_string();
    assert!(status.contains("Completed: "), "{status}");
    assert!(!status.contains("Failure report:"), "{status}");
    env.wfx()
        .args(["report", ID, "--html", "r.html"])
        .assert()
        .success();
    let html = env.read("r.html");
    let outcome = common::html_section(&html, "outcome");
    assert!(outcome.contains("Completed"), "{outcome}");
    assert!(!outcome.contains("Failure report"), "{outcome}");
    assert!(
        html.contains("failure-report.md"),
        "listed among the artifacts"
    );
}

/// The last command line of `text` that retries a blocked session.
fn retry_line(text: &str) -> String {
    text.lines()
        .filter_map(|l| {
            l.find("wfx session resume")
                .map(|i| l[i..].trim_end_matches('`').to_string())
        })
        .next_back()
        .unwrap_or_else(|| panic!("no retry command in:\n{text}"))
}

#[test]
fn a_fix_kept_when_the_limit_is_reached_is_committed_and_every_retry_names_one_number() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-one"));
    env.plan_calculator();
    // One attempt: the fixer fixes one of the two failures, the limit is
    // reached. The kept fix is committed before the session stops blocked
    // (issue #20 walk-through: it was left uncommitted in the tree).
    let first = env.cycle(&["--max-iterations", "1"]).code(1);
    // The lines follow what happened: the commit, then the block.
    let progress = String::from_utf8_lossy(&first.get_output().stderr).to_string();
    let committed = progress.find("Committed ").expect("a Committed line");
    let blocked = progress.find("Blocked: ").expect("a Blocked line");
    assert!(committed < blocked, "{progress}");
    let first = String::from_utf8_lossy(&first.get_output().stdout).to_string();
    assert_eq!(
        env.subjects()[0],
        "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 88.8%)"
    );
    assert_eq!(env.git(&["status", "--porcelain", "--", "src"]), "");
    let report = env.read(&format!("{ACTIVE}/.process/failure-report.md"));
    let commit = env.git(&["rev-parse", "--short=10", "HEAD"]);
    assert!(
        report.contains(&format!("| {} |", commit.trim())),
        "the failure report names the fix's commit {commit}:\n{report}"
    );
    // A resume refused because the session is still blocked names the
    // same retry command as the run that blocked it, the failure report
    // and `wfx status`, whatever --max-iterations it was given.
    let refused = env.cycle(&[ID, "--max-iterations", "2"]).code(1);
    let refused = String::from_utf8_lossy(&refused.get_output().stdout).to_string();
    let status = env.wfx().arg("status").assert().success();
    let status = String::from_utf8_lossy(&status.get_output().stdout).to_string();
    let want = format!(
        "wfx session resume {ID} && wfx test-cycle-execute --resume-session={ID} --max-iterations=3"
    );
    for (what, text) in [
        ("first run", &first),
        ("refused resume", &refused),
        ("status", &status),
    ] {
        assert_eq!(retry_line(text), want, "{what}:\n{text}");
    }
    assert!(
        report.contains(&format!("--resume-session={ID} --max-iterations=3`")),
        "{report}"
    );
}

#[test]
fn a_second_run_on_the_same_session_is_refused() {
    let (env, mut first) = start_cycle_with_sleeper(Stdio::null);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !env
        .root
        .join(ACTIVE)
        .join(".process/iteration-state.json")
        .exists()
    {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    env.cycle(&["--resume-session", ID])
        .code(2)
        .stderr(predicate::str::contains(
            "session WFS-test-the-calculator is in use by wfx process",
        ));
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    assert_eq!(first.wait().unwrap().code(), Some(3));
}

#[test]
fn a_git_lock_left_by_a_killed_run_is_removed_and_no_other() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    // Another git process's lock (older than any wfx run) is left alone:
    // the commit fails and says why.
    let index_lock = env.root.join(".git/index.lock");
    std::fs::write(&index_lock, "").unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&index_lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    env.cycle(&[])
        .code(4)
        .stderr(predicate::str::contains("the index is locked"));
    assert!(index_lock.exists());
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert!(state["pending_commit"].is_object(), "{state}");
    // A run that died mid-commit: its session lock names it, and the git
    // lock is newer than its start.
    std::fs::remove_file(&index_lock).unwrap();
    let since = chrono::Utc::now() - chrono::Duration::seconds(5);
    env.write(
        &format!("{ACTIVE}/.lock"),
        &serde_json::json!({
            "pid": 999_999,
            "since": since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "child_pgid": null
        })
        .to_string(),
    );
    std::fs::write(&index_lock, "").unwrap();
    env.cycle(&["--resume-session", ID])
        .success()
        .stderr(predicate::str::contains(
            "Removed .git/index.lock, left by the interrupted run",
        ));
    assert_eq!(
        env.subjects()[1],
        "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 100.0%)"
    );
}

#[test]
fn a_fix_agent_that_is_not_installed_pauses_and_the_resume_uses_it_once_there() {
    let env = Env::new();
    let missing = env.tmp.path().join("bin/fixer");
    env.cycle_project(
        "node-calc",
        &serde_json::json!({"agents": {"fix": "fixer", "definitions": {"fixer": {"command": [missing.display().to_string()]}}}}),
    );
    env.plan_calculator();
    env.cycle(&[])
        .code(3)
        .stdout(predicate::str::contains(
            "the fix agent fixer is not available",
        ))
        .stdout(predicate::str::contains("Paused. Continue with"));
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "paused");
    assert_eq!(state["next_action"], "execute_fix_task");
    std::fs::create_dir_all(missing.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(common::fake_agent("fix-all"), &missing).unwrap();
    env.cycle(&["--resume-session", ID]).success();
    assert_eq!(env.subjects().len(), 3);
}

/// A session planned and fixed to completion by `test-fix-gen`, and its
/// commit subjects.
fn completed_session() -> (Env, Vec<String>) {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator"])
        .assert()
        .success();
    let subjects = env.subjects();
    (env, subjects)
}

/// A cycle killed after its session was moved to `archives/` but before
/// the manifest entry and the final commit: `wfx test-cycle-execute`
/// without an id finds it there and finishes its archive and commit, as
/// `--resume-session` does.
#[test]
fn a_cycle_killed_while_it_was_archived_is_finished_without_an_id() {
    let (env, subjects) = completed_session();
    // Where a kill after the move leaves it: no final commit, no manifest,
    // the archived files still pointing into active/.
    env.git(&["reset", "--quiet", "HEAD~1"]);
    std::fs::remove_file(env.root.join(".workflow/archives/manifest.json")).unwrap();
    let archived = env.root.join(".workflow/archives").join(ID);
    for entry in walkdir::WalkDir::new(&archived) {
        let path = entry.unwrap().into_path();
        if path.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let back = text.replace(&format!(".workflow/archives/{ID}"), ACTIVE);
            let mut v: serde_json::Value = serde_json::from_str(&back).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("archived_at");
            }
            std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        }
    }
    env.wfx()
        .arg("test-cycle-execute")
        .assert()
        .code(0)
        .stderr(predicate::str::contains(format!(
            "{ID}: its archive was cut short by a kill; finishing it (.workflow/archives/{ID})"
        )))
        .stdout(predicate::str::contains(format!(
            "Session {ID} completed: 100.0% on the full suite after 1 fix attempt(s)"
        )));
    assert_eq!(env.subjects(), subjects);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let manifest = env.json(".workflow/archives/manifest.json");
    assert_eq!(manifest.as_array().unwrap().len(), 1, "{manifest}");
    assert_eq!(manifest[0]["session_id"], ID);
    let state = env.read(&format!(
        ".workflow/archives/{ID}/.process/iteration-state.json"
    ));
    assert!(!state.contains(".workflow/active/"), "{state}");
    // Finished once: nothing is left for a command without an id.
    env.wfx()
        .arg("test-cycle-execute")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no active session"));
}

/// Killed after the manifest entry, before the final commit: `HEAD` still
/// holds the session in `active/`, gone from disk. The next run without an
/// id makes the final commit; a history a person rewrote to before the
/// session is never committed on by surprise.
#[test]
fn a_cycle_killed_before_its_final_commit_is_finished_without_an_id() {
    let (env, subjects) = completed_session();
    env.git(&["reset", "--quiet", "HEAD~1"]);
    env.wfx()
        .arg("test-cycle-execute")
        .assert()
        .code(0)
        .stderr(predicate::str::contains(format!(
            "{ID}: its archive was cut short by a kill; finishing it"
        )));
    assert_eq!(env.subjects(), subjects);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    // History rewritten to before the session: nothing to finish.
    env.git(&["reset", "--quiet", "HEAD~2"]);
    env.wfx()
        .arg("test-cycle-execute")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no active session"));
    assert_eq!(env.subjects(), ["initial"]);
}
