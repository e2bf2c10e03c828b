//! `wfx run` in-process: the real machine and driver over the fake ports,
//! scenario by scenario (debug attempts, `stop_on_success: false`,
//! `fail_workflow`, an unreachable agent, pause and resume at every step),
//! with the whole human output snapshot-tested — and the same pause events
//! and exit codes as the test-fix cycle.

use std::collections::BTreeMap;

use super::machine::{RunMachine, RunSession};
use super::paths::RunPaths;
use crate::agents::ErrorKind;
use crate::artifacts::Config;
use crate::artifacts::run_state::{RunState, RunStatus, StepStatus};
use crate::artifacts::session::{InputMode, SessionStatus, WorkflowSession};
use crate::engine::fake::{AgentAct, FakePorts, FakeTest};
use crate::engine::sink::{Capture, Captured};
use crate::engine::{DriverConfig, Ending, Ports, Sinks, driver::run};
use crate::error::Exit;
use crate::session::Workspace;
use crate::ui::Printer;

const ID: &str = "WFS-run-wf";
const BUGGY: &str = "def add(a, b):\n    return a - b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n";

fn ports() -> FakePorts {
    FakePorts::new(
        &[("calc/ops.py", BUGGY), ("calc/other.py", "ok = True\n")],
        vec![
            FakeTest::new("tests/test_ops.py::test_add", "calc/ops.py", "a + b"),
            FakeTest::new("tests/test_other.py::test_ok", "calc/other.py", "ok = True"),
        ],
    )
}

struct Harness {
    _tmp: tempfile::TempDir,
    machine: RunMachine,
}

fn harness(yaml: &str) -> Harness {
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace::new(tmp.path().to_path_buf());
    let config: Config = serde_json::from_value(serde_json::json!({
        "agents": {"definitions": {"claude": {"command": ["claude"]}}}
    }))
    .unwrap();
    let claude = crate::agents::config::resolve(&config.agents, "claude").unwrap();
    let machine = RunMachine {
        wf: super::model::parse(yaml).unwrap(),
        paths: RunPaths::new(ws.active(ID)),
        ws,
        file_arg: "wf.yml".into(),
        file: "wf.yml".into(),
        config,
        claude: Some(claude),
        repo: true,
    };
    Harness { _tmp: tmp, machine }
}

fn fresh(m: &RunMachine, now: crate::artifacts::Timestamp) -> RunSession {
    let mut session = WorkflowSession::new_test(
        ID.into(),
        "wf".into(),
        InputMode::Prompt,
        "wf.yml".into(),
        now,
    );
    session.kind = super::session::SESSION_KIND.into();
    session.workflow_type = super::session::WORKFLOW_TYPE.into();
    session.phases.clear();
    RunSession {
        state: RunState {
            session_id: ID.into(),
            workflow_name: "wf".into(),
            workflow_file: "wf.yml".into(),
            status: RunStatus::Running,
            current_step: 1,
            started_at: now,
            updated_at: now,
            completed_at: None,
            stop_reason: None,
            vars: BTreeMap::new(),
            outputs: BTreeMap::new(),
            cost_usd: 0.0,
            steps: m
                .wf
                .steps
                .iter()
                .map(|s| super::session::pending_record(s, &m.paths, &m.ws))
                .collect(),
            extra: Default::default(),
        },
        session,
        stop: None,
        now,
        outbox: Vec::new(),
        output_heads: BTreeMap::new(),
        archived: false,
    }
}

/// What a new process reads back.
fn reload(m: &RunMachine, p: &FakePorts) -> RunSession {
    let mut s = fresh(m, p.now());
    s.state = serde_json::from_slice(&p.files[&m.paths.run_state()]).unwrap();
    s.session = serde_json::from_slice(&p.files[&m.paths.session.session_json()]).unwrap();
    s
}

fn drive(
    m: &RunMachine,
    s: &mut RunSession,
    p: &mut FakePorts,
    resumed: bool,
) -> (Ending, Captured) {
    let ui = Printer::plain();
    let capture = Capture::default();
    let mut sinks = Sinks::capture(&ui, &capture);
    let ending = run(
        m,
        s,
        p,
        &mut sinks,
        &DriverConfig {
            max_cost_usd: m.config.agents.max_cost_usd,
            resumed,
            fold_agent_commits: false,
            watch: false,
        },
    )
    .unwrap();
    (ending, capture.take())
}

fn transcript(c: &Captured, e: &Ending) -> String {
    format!(
        "--- stderr\n{}\n--- stdout\n{}\n--- exit {}\n",
        c.human.join("\n"),
        e.lines.join("\n"),
        e.exit.code()
    )
}

/// A debug shell that fixes the code on call `fix_on`.
fn debug_shell(p: &mut FakePorts, fix_on: u32) {
    let mut calls = 0;
    p.shell = Box::new(move |command, _| {
        if command.starts_with("fix") {
            calls += 1;
            if calls == fix_on {
                return (
                    0,
                    "fixed".into(),
                    vec![("calc/ops.py".into(), FIXED.into())],
                );
            }
            return (
                0,
                "tried".into(),
                vec![("notes.txt".into(), format!("try {calls}"))],
            );
        }
        (0, "built".into(), Vec::new())
    });
}

const LOOP: &str = "name: wf\ncommands:\n  - shell: make build\n  - test:\n      command: python -m pytest\n      on_failure:\n        shell: fix ${test.attempt}\n        max_attempts: 3\n";

#[test]
fn debug_attempts_run_until_the_tests_pass() {
    let h = harness(LOOP);
    let mut p = ports();
    debug_shell(&mut p, 2);
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(s.state.status, RunStatus::Completed);
    let step = &s.state.steps[1];
    assert_eq!(step.attempts.len(), 2);
    assert_eq!(
        p.journal
            .iter()
            .filter(|l| l.starts_with("shell `fix"))
            .count(),
        2
    );
    insta::assert_snapshot!("run_debug_loop", transcript(&out, &ending));
}

#[test]
fn stop_on_success_false_runs_every_attempt_and_the_last_run_decides() {
    let h = harness(&LOOP.replace(
        "max_attempts: 3\n",
        "max_attempts: 3\n        stop_on_success: false\n",
    ));
    let mut p = ports();
    debug_shell(&mut p, 1);
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    let step = &s.state.steps[1];
    assert_eq!(step.attempts.len(), 3, "every attempt ran");
    assert_eq!(step.status, StepStatus::Passed);
}

#[test]
fn fail_workflow_stops_the_run_with_exit_1() {
    let h = harness(
        "name: wf\ncommands:\n  - test:\n      command: python -m pytest\n      on_failure:\n        shell: fix it\n        max_attempts: 1\n        fail_workflow: true\n  - shell: make after\n",
    );
    let mut p = ports();
    debug_shell(&mut p, 99);
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Failed);
    assert_eq!(s.state.status, RunStatus::Failed);
    assert_eq!(s.session.status, SessionStatus::Blocked);
    assert_eq!(
        s.state.steps[1].status,
        StepStatus::Pending,
        "the later step did not run"
    );
    assert!(!p.journal.iter().any(|l| l.contains("make after")));
    let done = out.json.last().unwrap();
    assert_eq!(
        (done["event"].as_str(), done["exit_code"].as_i64()),
        (Some("done"), Some(1))
    );
    insta::assert_snapshot!("run_fail_workflow", transcript(&out, &ending));
}

#[test]
fn without_fail_workflow_the_run_goes_on_and_ends_in_partial_success() {
    let h = harness(
        "name: wf\ncommands:\n  - test:\n      command: python -m pytest\n      on_failure:\n        shell: fix it\n        max_attempts: 2\n  - shell: make after\n",
    );
    let mut p = ports();
    debug_shell(&mut p, 99);
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(s.state.status, RunStatus::PartialSuccess);
    assert!(s.state.steps[0].continued);
    assert!(p.journal.iter().any(|l| l.contains("make after")));
}

#[test]
fn an_unreachable_agent_pauses_and_the_attempt_runs_again_on_resume() {
    let h = harness(&LOOP.replace("shell: fix ${test.attempt}", "claude: fix the tests"));
    let mut p = ports();
    p.agent = Box::new(|_, n, _| {
        if n == 1 {
            AgentAct {
                error: Some(ErrorKind::RateLimit),
                exit_code: 1,
                ..AgentAct::default()
            }
        } else {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        }
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Paused);
    assert_eq!(s.state.status, RunStatus::Paused);
    assert_eq!(s.session.status, SessionStatus::Paused);
    insta::assert_snapshot!("run_agent_paused", transcript(&out, &ending));
    let mut s = reload(&h.machine, &p);
    let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(
        s.state.steps[1].attempts.len(),
        1,
        "the paused attempt ran, once"
    );
}

#[test]
fn pause_and_resume_at_every_step_end_as_an_uninterrupted_run() {
    let h = harness(LOOP);
    let mut reference = ports();
    debug_shell(&mut reference, 2);
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want: Vec<_> = s
        .state
        .steps
        .iter()
        .map(|r| (r.status, r.attempts.len()))
        .collect();
    let steps = reference.steps.get();
    assert!(steps >= 6, "{:?}", reference.journal);
    for k in 0..steps - 1 {
        let h = harness(LOOP);
        let mut p = ports();
        debug_shell(&mut p, 2);
        p.interrupt_after = Some(k);
        let mut s = fresh(&h.machine, p.now());
        let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "interrupted after {k} steps");
        assert_eq!(s.state.status, RunStatus::Paused);
        let paused = out.json.iter().find(|e| e["event"] == "paused").unwrap();
        assert_eq!(paused["reason"]["kind"], "interrupted");
        p.interrupt_after = None;
        let mut s = reload(&h.machine, &p);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success, "after {k}: {:?}", p.journal);
        let got: Vec<_> = s
            .state
            .steps
            .iter()
            .map(|r| (r.status, r.attempts.len()))
            .collect();
        assert_eq!(got, want, "interrupted after {k} steps");
    }
}

/// Ctrl-C and an unreachable agent end both front ends the same way: exit
/// 3, a `paused` event with the same reason kinds, one final `done` event
/// with the same fields.
#[test]
fn both_front_ends_pause_alike() {
    use crate::cycle::decide::Limits;
    let shape = |v: &serde_json::Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.retain(|k| {
            !matches!(
                k.as_str(),
                "next_action"
                    | "iteration"
                    | "session_dir"
                    | "run_status"
                    | "stop_reason"
                    | "never_passed"
                    | "steps"
            )
        });
        keys.sort();
        keys
    };
    for rate_limited in [false, true] {
        // wfx run
        let h = harness(&LOOP.replace("shell: fix ${test.attempt}", "claude: fix the tests"));
        let mut p = ports();
        if rate_limited {
            p.agent = Box::new(|_, _, _| AgentAct {
                error: Some(ErrorKind::RateLimit),
                exit_code: 1,
                ..AgentAct::default()
            });
        } else {
            p.interrupt_after = Some(3);
        }
        let mut s = fresh(&h.machine, p.now());
        let (run_end, run_out) = drive(&h.machine, &mut s, &mut p, false);
        // the test-fix cycle
        let (cycle_end, cycle_out) =
            crate::cycle::scenarios::pause_cycle(rate_limited, Limits::default());
        for (end, out) in [(&run_end, &run_out), (&cycle_end, &cycle_out)] {
            assert_eq!(end.exit, Exit::Paused);
            let done = out.json.last().unwrap();
            assert_eq!(done["event"], "done");
            assert_eq!(done["status"], "paused");
            assert_eq!(done["exit_code"], 3);
            let paused = out.json.iter().find(|e| e["event"] == "paused").unwrap();
            assert_eq!(
                paused["reason"]["kind"],
                if rate_limited {
                    "agent_unavailable"
                } else {
                    "interrupted"
                }
            );
            assert_eq!(out.json.iter().filter(|e| e["event"] == "done").count(), 1);
        }
        let (a, b) = (run_out.json.last().unwrap(), cycle_out.json.last().unwrap());
        assert_eq!(shape(a), shape(b), "the same done fields");
    }
}

/// DESIGN.md §10.2 in `wfx run`, which makes no checkpoint of its own: a
/// `claude:` debug command's commit stays on the branch; a later one
/// that resets it away is undone (branch, tree) and that attempt fails,
/// even though its edit would have made the tests pass.
#[test]
fn a_workflow_keeps_an_agent_commit_and_undoes_a_reset() {
    use crate::engine::fake::{GitAct, MAIN};
    let h = harness(&LOOP.replace("shell: fix ${test.attempt}", "claude: fix the tests"));
    let mut p = ports();
    p.agent = Box::new(|_, n, _| match n {
        1 => AgentAct {
            git: vec![GitAct::Commit("agent: notes".into())],
            ..AgentAct::writes(&[("notes.txt", "tried")])
        },
        2 => AgentAct {
            git: vec![GitAct::ResetHard(1)],
            writes_after_git: vec![("calc/ops.py".into(), FIXED.into())],
            ..AgentAct::writes(&[])
        },
        _ => AgentAct::writes(&[("calc/ops.py", FIXED)]),
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    let attempts = &s.state.steps[1].attempts;
    assert_eq!(attempts.len(), 3, "{attempts:?}");
    let debug = |i: usize| attempts[i].debug.clone().unwrap();
    assert!(debug(0).committed, "{attempts:?}");
    let moved = debug(1).error.unwrap_or_default();
    assert!(moved.contains("moved HEAD"), "{attempts:?}");
    // Its edit was undone with the reset: the tests still failed.
    assert_eq!(attempts[1].test.as_ref().map(|t| t.failing), Some(1));
    assert_eq!(p.subjects(), ["agent: notes"], "{:?}", p.journal);
    assert_eq!(p.branch.as_deref(), Some(MAIN));
    assert!(p.journal.iter().any(|l| l.starts_with("restore HEAD")));
}

/// What a run killed with `kill -9` leaves, planted in a fresh repository
/// for one session: its lock record (the run died an hour ago, the process
/// group of its last step still running), a temp file of the session
/// transaction, a temp of the archive manifest, the lock file of a
/// `refs/wfx/…` update, git's `index.lock`, and the sealed and candidate
/// checkouts outside the project.
struct Killed {
    _tmp: tempfile::TempDir,
    ws: Workspace,
    garbage: Vec<std::path::PathBuf>,
    sleeper: i32,
}

fn killed_run(id: &str, kind: &str, damaged: bool) -> Killed {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(root.join("README"), "hi\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-qm", "initial"]);
    let ws = Workspace::new(root.clone());
    std::fs::create_dir_all(ws.workflow_dir()).unwrap();
    std::fs::write(ws.config_path(), r#"{"test": {"command": "true"}}"#).unwrap();
    let paths = ws.active(id);
    std::fs::create_dir_all(paths.process_dir()).unwrap();
    let now = chrono::Utc::now();
    let mut session = WorkflowSession::new_test(
        id.into(),
        "wf".into(),
        InputMode::Prompt,
        "wf.yml".into(),
        now,
    );
    for n in 1..=4 {
        if let Some(p) = session.phase_mut(n) {
            p.status = crate::artifacts::session::PhaseStatus::Completed;
        }
    }
    if kind == super::session::SESSION_KIND {
        session.kind = kind.into();
        session.workflow_type = super::session::WORKFLOW_TYPE.into();
        session.phases.clear();
    }
    let json = serde_json::to_vec_pretty(&session).unwrap();
    std::fs::write(paths.session_json(), json).unwrap();
    if damaged {
        std::fs::write(paths.fix_history(), r#"{"entries": 7}"#).unwrap();
    }
    // The dead run's last step, still running in its own group.
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap();
    let sleeper = child.id() as i32;
    std::thread::spawn(move || child.wait());
    let lock = serde_json::json!({
        "pid": 999_999,
        "since": (now - chrono::Duration::hours(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "child_pgid": sleeper,
        "child_start": crate::process::start_time(sleeper),
    });
    std::fs::write(paths.lock(), lock.to_string()).unwrap();
    let archives = ws.archives_dir();
    let refs = root.join(".git/refs/wfx").join(id);
    for dir in [&archives, &refs] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let files = [
        paths.dir.join(".workflow-session.json.k1.tmp"),
        archives.join(".manifest.json.k2.tmp"),
        refs.join("snapshot.lock"),
        root.join(".git/index.lock"),
    ];
    for f in &files {
        std::fs::write(f, "left by the killed run").unwrap();
    }
    let dirs = [
        crate::git::checkout_dir(&root, id),
        crate::git::candidate_dir(&root, id, 1),
        crate::git::candidates_dir(&root, id),
    ];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    Killed {
        _tmp: tmp,
        ws,
        garbage: files.into_iter().chain(dirs).collect(),
        sleeper,
    }
}

/// How a front end recovered: the events it sent, what of the killed run
/// is left, whether the dead run's step still runs — or its error.
fn recovered(k: &Killed, opened: crate::error::Result<()>, c: &Captured) -> String {
    if let Err(e) = opened {
        return format!("refused: {}", e.exit().code());
    }
    let events: Vec<String> = c
        .json
        .iter()
        .map(|e| {
            let file = e["file"]
                .as_str()
                .map(|f| format!(" {f}"))
                .unwrap_or_default();
            format!("{}{file}", e["event"].as_str().unwrap_or("?"))
        })
        .collect();
    let left: Vec<String> = k
        .garbage
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // SAFETY: signal 0 only asks whether the group exists.
    let ended = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let alive = unsafe { libc::kill(-k.sleeper, 0) };
        alive != 0
    });
    format!("events {events:?} · left {left:?} · step ended {ended}")
}

/// The cycle's setup (`test-cycle-execute --resume-session`) on a killed run.
fn cycle_recovers(damaged: bool) -> String {
    let id = "WFS-test-killed";
    let k = killed_run(id, "test", damaged);
    let ui = Printer::plain();
    let capture = Capture::default();
    let mut sinks = Sinks::capture(&ui, &capture);
    let req = crate::cycle::CycleRequest {
        session: Some(id.into()),
        ..Default::default()
    };
    let opened = crate::cycle::prepare(&k.ws, &req, &mut sinks).map(drop);
    recovered(&k, opened, &capture.take())
}

/// `wfx run --resume`'s setup on a killed run.
fn workflow_recovers(damaged: bool) -> String {
    let id = "WFS-run-wf";
    let k = killed_run(id, super::session::SESSION_KIND, damaged);
    let text = "name: wf\ncommands:\n  - shell: \"true\"\n";
    let wf = super::model::parse(text).unwrap();
    let ui = Printer::plain();
    let capture = Capture::default();
    let mut sinks = Sinks::capture(&ui, &capture);
    let config = Config::default();
    let vars = BTreeMap::new();
    let setup = super::session::Setup {
        ws: &k.ws,
        ui: &ui,
        wf: &wf,
        text,
        name: "wf",
        file: "wf.yml",
        file_arg: "wf.yml",
        config: &config,
        claude: None,
        vars: &vars,
        git: Default::default(),
    };
    let sref = k.ws.resolve(Some(id), None, true).unwrap();
    let opened = super::session::prepare_resume(&setup, sref, None, &mut sinks).map(drop);
    recovered(&k, opened, &capture.take())
}

/// Issue #29: one session opener. The same killed run, planted for a test
/// session and for a run session, is recovered the same way by both front
/// ends: the dead run's step ended, its temps, ref lock, git lock and
/// checkouts removed, the same events; and a session with a damaged
/// artifact is refused by both before anything is written.
#[test]
fn both_front_ends_recover_alike() {
    let cycle = cycle_recovers(false);
    assert_eq!(
        cycle,
        "events [\"stale_processes\", \"stale_git_lock .git/index.lock\"] · left [] · step ended true"
    );
    assert_eq!(workflow_recovers(false), cycle);
    let cycle = cycle_recovers(true);
    assert_eq!(cycle, "refused: 2");
    assert_eq!(workflow_recovers(true), cycle);
}
