//! `wfx test-cycle-execute --watch` (docs/cycle.md, "Watching for a fix")
//! as a person meets it, in a real pseudo-terminal on a fresh node project
//! with two bugs, fixed by hand (manual mode): wfx waits, saving the fix
//! retests and the session completes; Enter with nothing changed retests
//! nothing and keeps waiting; Ctrl-C pauses like any Ctrl-C and a resume
//! completes; without a terminal on stdin only saves count; with a fix
//! agent the flag is ignored, with a warning.

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::pty::Pty;
use common::{Env, fixer_config};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const WAITING: &str = "Watching the project's files: saving one retests";
const LIMIT: Duration = Duration::from_secs(120);

fn wfx() -> PathBuf {
    assert_cmd::cargo::cargo_bin("wfx")
}

/// node-calc, planned, no fix agent: every fix is a person's.
fn manual_session() -> Env {
    let env = Env::new();
    env.cycle_project("node-calc", &json!({}));
    env.plan_calculator();
    env
}

/// Both bugs fixed as an editor saves: a temp file renamed over the file.
fn save_the_fix(env: &Env) {
    for (file, old, new) in [
        (
            "src/math.js",
            "if (values[i] < best)",
            "if (values[i] > best)",
        ),
        (
            "src/strings.js",
            ".replace(' ', '-')",
            ".replace(/\\s+/g, '-')",
        ),
    ] {
        let text = env.read(file).replace(old, new);
        let temp = format!("{file}.swp");
        env.write(&temp, &text);
        std::fs::rename(env.root.join(&temp), env.root.join(file)).unwrap();
    }
}

#[test]
fn a_save_retests_and_the_session_completes_and_enter_alone_keeps_waiting() {
    let env = manual_session();
    let mut pty = Pty::spawn(&env, &wfx(), &["test-cycle-execute", "--watch"], &[]);
    let shown = pty.wait_for(WAITING, 1, LIMIT);
    assert!(
        shown.contains("Iteration 1: waiting for your fix (manual mode)."),
        "{shown}"
    );
    assert!(
        shown.contains("Change the code (not the tests) and save: wfx retests then."),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("{WAITING}, so does Enter; Ctrl-C pauses")),
        "{shown}"
    );
    assert!(
        !shown.contains("continue with:"),
        "no command to type: {shown}"
    );

    // Enter with nothing changed: looked at, nothing retested, still waiting.
    pty.type_keys("\r");
    let shown = pty.wait_for(WAITING, 2, LIMIT);
    assert!(shown.contains("Enter pressed: retesting"), "{shown}");
    assert!(
        shown.contains("No file has changed since the fix task was written; nothing was retested."),
        "{shown}"
    );
    let state = env.json(&format!(
        ".workflow/active/{ID}/.process/iteration-state.json"
    ));
    assert_eq!(state["status"], "awaiting_fix");
    assert_eq!(
        state["iterations"].as_array().unwrap().len(),
        1,
        "no test ran"
    );

    // The person saves the fix: one retest, then the loop goes on to the end.
    save_the_fix(&env);
    let (code, shown) = pty.finish(LIMIT);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("Saved src/"), "{shown}");
    assert_eq!(
        shown.matches(": retesting").count(),
        2,
        "Enter once, the save (two files, renamed) once: {shown}"
    );
    assert!(
        shown.contains("Session WFS-test-the-calculator completed"),
        "{shown}"
    );
    assert_eq!(
        env.subjects()[1],
        "test-cycle: iteration 1 - fix by hand (pass: 77.7% → 100.0%)"
    );
    let history = env.json(&format!(
        ".workflow/archives/{ID}/.process/fix-history.json"
    ));
    assert_eq!(history["entries"].as_array().unwrap().len(), 1);
    assert_eq!(history["entries"][0]["outcome"], "success");
}

/// JSON Lines the terminal showed (after the `^C` it echoes, if any).
fn json_lines(shown: &str) -> Vec<Value> {
    shown
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').split_once('{'))
        .map(|(_, l)| format!("{{{l}"))
        .map(|l| serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn ctrl_c_while_watching_pauses_as_ctrl_c_does_and_a_resume_completes() {
    let env = manual_session();
    let mut pty = Pty::spawn(
        &env,
        &wfx(),
        &["--json", "test-cycle-execute", "--watch"],
        &[],
    );
    pty.wait_for("\"event\":\"watching\"", 1, LIMIT);
    pty.type_keys("\x03");
    let (code, shown) = pty.finish(LIMIT);
    assert_eq!(code, 3, "paused: {shown}");
    let events = json_lines(&shown);
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    let tail = &names[names.len() - 4..];
    assert_eq!(tail, ["paused", "watching", "paused", "done"], "{names:?}");
    let n = events.len();
    assert_eq!(events[n - 4]["reason"]["kind"], "manual_fix");
    assert_eq!(events[n - 3]["enter"], true);
    let paused = &events[n - 2];
    assert_eq!(paused["reason"]["kind"], "interrupted");
    assert_eq!(
        paused["message"].as_str().unwrap_or_default(),
        "interrupted while waiting for your fix"
    );
    assert_eq!(
        paused["resume_command"],
        format!("wfx test-cycle-execute --resume-session={ID}")
    );
    let done = &events[n - 1];
    assert_eq!(done["exit_code"], 3);
    assert_eq!(done["status"], "awaiting_fix");
    assert_eq!(names.iter().filter(|n| **n == "done").count(), 1);

    // What the person changes after the pause is the fix on resume.
    save_the_fix(&env);
    env.cycle(&["--resume-session", ID]).success();
    assert_eq!(
        env.subjects()[1],
        "test-cycle: iteration 1 - fix by hand (pass: 77.7% → 100.0%)"
    );
}

#[test]
fn without_a_terminal_on_stdin_a_save_still_retests() {
    let env = manual_session();
    let mut cmd = std::process::Command::new(wfx());
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    let log = env.tmp.path().join("stderr.txt");
    let mut child = cmd
        .args(["test-cycle-execute", "--watch"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains(WAITING)
    {
        assert!(started.elapsed() < LIMIT, "never waited");
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains(&format!("{WAITING}; Ctrl-C pauses")),
        "Enter is not offered: {stderr}"
    );
    save_the_fix(&env);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
}

#[test]
fn with_a_fix_agent_watch_is_ignored_with_a_warning() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    env.cycle(&["--watch"])
        .success()
        .stderr(predicates::str::contains(
            "warning: --watch is ignored: the fix agent fixer makes the fixes; it applies when a person does (--fix-agent manual)",
        ));
}
