//! Crash consistency of phase 5 (DESIGN.md §5.1): `kill -9` at any
//! persisted transition of a three-iteration run, then `--resume-session`
//! until done, must end exactly as an uninterrupted run — same pass-rate
//! history, same commits (none twice), valid artifacts, and no process of
//! the killed run left alive.
//!
//! Kills come from outside (a watcher thread that SIGKILLs wfx right after
//! the K-th change of `iteration-state.json`, or some time into the test
//! run that follows it) and from inside (a fixer that kills its parent).

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Env, fake_agent};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

/// How a scenario interrupts the run.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// No interruption: the reference run.
    Never,
    /// SIGKILL right after the K-th change of the state file (1-based),
    /// after `delay`.
    AfterChange { k: usize, delay: Duration },
    /// The fixer kills wfx on its N-th call, before changing anything.
    FixerCall(u32),
}

struct Outcome {
    /// Changes of the state file seen during the first (killed) run:
    /// `next_action` of each.
    changes: Vec<String>,
    /// Whether the first run was killed.
    killed: bool,
    /// Process groups the killed run's children ran in (from the lock).
    pgids: Vec<i32>,
    /// `(iteration, scope, pass rate)` of every run.
    pass_rates: Vec<(u64, String, f64)>,
    subjects: Vec<String>,
    resumes: usize,
}

fn project() -> Env {
    let env = Env::new();
    env.cycle_project(
        "node-calc",
        &json!({
            "agents": {
                "fix": "fixer",
                "definitions": {"fixer": {"command": [fake_agent("kill-parent-on-call-N").display().to_string()]}}
            }
        }),
    );
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    env
}

fn wfx(env: &Env, kill_on_call: u32, args: &[&str]) -> Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.env("FIXER_STATE", env.state_dir())
        .env("FIXER_BY_ATTEMPT", "1")
        .env("KILL_ON_CALL", kill_on_call.to_string())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd.spawn().expect("wfx starts")
}

/// The state the run has committed: the last one its journal holds (a
/// step's record is written before its files are put in place, and wfx
/// defers putting them there until its next child or commit), else the
/// state file's.
fn state_file(root: &Path) -> Option<String> {
    for dir in [ACTIVE, ARCHIVED] {
        let dir = root.join(dir);
        let journaled = std::fs::read(dir.join(wfx::engine::journal::JOURNAL))
            .ok()
            .and_then(|bytes| {
                let decoded = wfx::engine::journal::decode(&bytes);
                decoded
                    .records
                    .into_iter()
                    .rev()
                    .find_map(|(_, r)| match r {
                        wfx::engine::journal::Record::Write(files) => files
                            .into_iter()
                            .rev()
                            .find(|(p, _)| p == ".process/iteration-state.json")
                            .map(|(_, b)| String::from_utf8_lossy(&b).into_owned()),
                        wfx::engine::journal::Record::Applied(_) => None,
                    })
            });
        if journaled.is_some() {
            return journaled;
        }
        if let Ok(text) = std::fs::read_to_string(dir.join(".process/iteration-state.json")) {
            return Some(text);
        }
    }
    None
}

fn lock_pgid(root: &Path) -> Option<i32> {
    lock_groups(root, ID).first().copied()
}

/// Process groups the session lock of `id` names: the child's, then the
/// other children's (speculative candidates).
fn lock_groups(root: &Path, id: &str) -> Vec<i32> {
    for dir in [".workflow/active", ".workflow/archives"] {
        if let Ok(text) = std::fs::read_to_string(root.join(dir).join(id).join(".lock"))
            && let Ok(v) = serde_json::from_str::<Value>(text.trim())
        {
            let more = v["more_children"].as_array().into_iter().flatten();
            return v["child_pgid"]
                .as_i64()
                .into_iter()
                .chain(more.filter_map(|c| c[0].as_i64()))
                .map(|p| p as i32)
                .collect();
        }
    }
    Vec::new()
}

/// Run one scenario to the end (resuming after the kill) and collect what
/// the comparison needs.
fn scenario(kill: Kill) -> Outcome {
    let env = project();
    let kill_on_call = match kill {
        Kill::FixerCall(n) => n,
        _ => 0,
    };
    let mut child = wfx(&env, kill_on_call, &["test-cycle-execute"]);
    let pid = child.id() as i32;
    let changes = Arc::new(Mutex::new(Vec::<String>::new()));
    let pgids = Arc::new(Mutex::new(Vec::<i32>::new()));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let changes = changes.clone();
        let pgids = pgids.clone();
        let done = done.clone();
        let root = env.root.clone();
        std::thread::spawn(move || {
            let mut last: Option<String> = None;
            let mut killed = false;
            while !done.load(Ordering::SeqCst) {
                if let Some(p) = lock_pgid(&root)
                    && !pgids.lock().unwrap().contains(&p)
                {
                    pgids.lock().unwrap().push(p);
                }
                let now = state_file(&root);
                if now.is_some() && now != last {
                    let action = now
                        .as_deref()
                        .and_then(|t| serde_json::from_str::<Value>(t).ok())
                        .map(|v| v["next_action"].as_str().unwrap_or("?").to_string())
                        .unwrap_or_default();
                    let n = {
                        let mut c = changes.lock().unwrap();
                        c.push(action);
                        c.len()
                    };
                    last = now;
                    if let Kill::AfterChange { k, delay } = kill
                        && n == k
                        && !killed
                    {
                        std::thread::sleep(delay);
                        if let Some(p) = lock_pgid(&root)
                            && !pgids.lock().unwrap().contains(&p)
                        {
                            pgids.lock().unwrap().push(p);
                        }
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                        killed = true;
                    }
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            killed
        })
    };
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    let watcher_killed = watcher.join().unwrap();
    let killed = watcher_killed || matches!(kill, Kill::FixerCall(_)) && status.code().is_none();
    let first_stderr = {
        use std::io::Read;
        let mut s = String::new();
        child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
        s
    };
    if !killed {
        assert_eq!(status.code(), Some(0), "{kill:?}: {first_stderr}");
    }
    let mut resumes = 0;
    if killed {
        loop {
            resumes += 1;
            let out = wfx(
                &env,
                kill_on_call,
                &["test-cycle-execute", "--resume-session", ID],
            )
            .wait_with_output()
            .unwrap();
            let code = out.status.code();
            assert!(
                code == Some(0) || (code == Some(3) && resumes < 3),
                "{kill:?}: resume {resumes} exited {code:?}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if code == Some(0) {
                break;
            }
        }
    }
    // Every artifact valid, the tree clean, the session archived.
    let v = Command::new(assert_cmd::cargo::cargo_bin("wfx"))
        .args(["validate", ID])
        .current_dir(&env.root)
        .output()
        .unwrap();
    assert!(
        v.status.success(),
        "{kill:?}: validate: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "", "{kill:?}");
    assert!(!env.root.join(ACTIVE).exists(), "{kill:?}");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["status"], "completed", "{kill:?}");
    let manifest = env.json(".workflow/archives/manifest.json");
    assert_eq!(manifest.as_array().unwrap().len(), 1, "{kill:?}");
    let pass_rates = common::runs(&state);
    // No process of the killed run is left.
    let pgids = pgids.lock().unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    for &g in &pgids {
        while wfx::process::group_alive(g) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !wfx::process::group_alive(g),
            "{kill:?}: process group {g} survived"
        );
    }
    let changes = changes.lock().unwrap().clone();
    Outcome {
        changes,
        killed,
        pgids,
        pass_rates,
        subjects: env.subjects(),
        resumes,
    }
}

const WANT_SUBJECTS: [&str; 4] = [
    "test-cycle: session WFS-test-the-calculator completed (pass: 100.0%, 2 fix attempt(s))",
    "test-cycle: iteration 2 - conservative strategy (pass: 88.8% → 100.0%)",
    "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 88.8%)",
    "initial",
];

fn check(kill: Kill, o: &Outcome) {
    let want = [
        (1, "full", 77.7),
        // Tier 1 still fails, but the fix made a failing test pass and no
        // test imports the fixed file: the partial fix is settled on tier
        // 1 (no full run; DESIGN.md §10.4).
        (2, "affected", 88.8),
        // Tier 1 (the failed test), tier 2 (the tests importing the fixed
        // file), the full suite.
        (3, "affected", 100.0),
        (3, "affected", 100.0),
        (3, "full", 100.0),
    ]
    .map(|(i, s, p)| (i, s.to_string(), p));
    assert_eq!(o.pass_rates, want, "{kill:?}");
    assert_eq!(o.subjects, WANT_SUBJECTS, "{kill:?}");
}

/// Run scenarios on a few threads (each is mostly waiting for node).
fn run_all(kills: Vec<Kill>) -> Vec<(Kill, Outcome)> {
    let queue = Arc::new(Mutex::new(kills));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let queue = queue.clone();
            let results = results.clone();
            std::thread::spawn(move || {
                loop {
                    let Some(kill) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let o = scenario(kill);
                    check(kill, &o);
                    results.lock().unwrap().push((kill, o));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a scenario failed (see above)");
    }
    Arc::try_unwrap(results).ok().unwrap().into_inner().unwrap()
}

#[test]
fn kill_9_at_every_transition_then_resume_ends_as_an_uninterrupted_run() {
    let reference = scenario(Kill::Never);
    check(Kill::Never, &reference);
    assert!(!reference.killed && reference.resumes == 0);
    let n = reference.changes.len();
    eprintln!("reference: {} changes: {:?}", n, reference.changes);
    assert!(
        n >= 12,
        "only {n} state changes seen: {:?}",
        reference.changes
    );

    let mut kills: Vec<Kill> = (1..=n)
        .map(|k| Kill::AfterChange {
            k,
            delay: Duration::ZERO,
        })
        .collect();
    // Some time into each test run.
    for (i, action) in reference.changes.iter().enumerate() {
        if matches!(action.as_str(), "run_tests" | "retest" | "final_validation") {
            kills.push(Kill::AfterChange {
                k: i + 1,
                delay: Duration::from_millis(350),
            });
        }
    }
    // From inside: the fixer kills wfx on its first and its second call.
    kills.push(Kill::FixerCall(1));
    kills.push(Kill::FixerCall(2));
    let total = kills.len();
    let results = run_all(kills);
    for (k, o) in &results {
        eprintln!(
            "{k:?}: killed {} after {} change(s) ({}), {} resume(s), child groups {:?}",
            o.killed,
            o.changes.len(),
            o.changes.last().map_or("-", String::as_str),
            o.resumes,
            o.pgids
        );
    }
    assert_eq!(results.len(), total);
    let killed = results.iter().filter(|(_, o)| o.killed).count();
    assert!(
        killed * 10 >= total * 9,
        "only {killed} of {total} scenarios were interrupted"
    );
    let with_children = results.iter().filter(|(_, o)| !o.pgids.is_empty()).count();
    assert!(with_children > 0);
}

/// A `kill -9` in the middle of a ref update leaves git's lock file beside
/// wfx's ref (`refs/wfx/<session>/latest.lock`), and every later update of
/// that ref fails on it: the resume of a run that died removes the locks
/// of its session's refs (and only those).
#[test]
fn a_resume_after_a_kill_during_a_ref_update_sweeps_the_ref_locks() {
    let env = project();
    let status = wfx(&env, 2, &["test-cycle-execute"]).wait().unwrap();
    assert_eq!(status.code(), None, "killed by the fixer on its 2nd call");
    let refs = env.root.join(".git/refs/wfx").join(ID);
    let mut planted = 0;
    for entry in walkdir::WalkDir::new(&refs)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_type().is_file() {
            let lock = format!("{}.lock", entry.path().display());
            std::fs::write(&lock, "").unwrap();
            planted += 1;
        }
    }
    assert!(
        planted > 0,
        "the killed run made refs under {}",
        refs.display()
    );
    std::fs::write(env.root.join(".git/refs/heads/mine.lock"), "").unwrap();
    let out = wfx(&env, 0, &["test-cycle-execute", "--resume-session", ID])
        .wait_with_output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.subjects(), WANT_SUBJECTS);
    assert!(
        env.root.join(".git/refs/heads/mine.lock").exists(),
        "a lock that is not wfx's stays"
    );
}

// Speculative candidates (`--candidates 3`): `kill -9` at a random instant
// of the candidate phase, then `--resume-session`, ends as if one attempt
// had been in flight.

const CANDIDATES_ID: &str = "WFS-test-the-killed-candidates";

/// `n` delays in `[0, span)` from a fixed seed (splitmix64): the same
/// instants on every run, spread over the whole span.
fn seeded_delays(seed: u64, n: usize, span: Duration) -> Vec<Duration> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            span.mul_f64((z >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// py-calc with the chain [fix-one, break, fix-all] as three candidates
/// (the `sleepy` fixture agent), planned.
fn candidates_project() -> Env {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &crate::candidates::config(&["fix-one", "break", "fix-all"], 3),
    );
    crate::candidates::plan(&env, "Test the killed candidates");
    env
}

/// `wfx --json` with the agents sleeping `sleep_s`; the `--json` events
/// arrive on the receiver as `(when, event)`.
fn candidates_wfx(
    env: &Env,
    sleep_s: &str,
    args: &[&str],
) -> (Child, std::sync::mpsc::Receiver<(Instant, String)>) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    let mut child = cmd
        .env("FIXER_STATE", env.state_dir())
        .env("SLEEPY_S", sleep_s)
        .arg("--json")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("wfx starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && let Some(e) = v["event"].as_str()
            {
                let _ = tx.send((Instant::now(), e.to_string()));
            }
        }
    });
    (child, rx)
}

/// When the first candidate started, or None if the run ended first.
fn first_candidate(rx: &std::sync::mpsc::Receiver<(Instant, String)>) -> Option<Instant> {
    rx.iter()
        .find(|(_, e)| e == "candidate-started")
        .map(|(t, _)| t)
}

/// One trial: SIGKILL wfx `delay` after its first candidate started (the
/// agents sleeping `sleep_s`), resume until done, check what is left.
/// Returns whether the kill landed before wfx ended by itself.
fn candidates_trial(sleep_s: &str, delay: Duration) -> bool {
    let env = candidates_project();
    let (mut child, rx) = candidates_wfx(&env, sleep_s, &["test-cycle-execute"]);
    let pid = child.id() as i32;
    let started = first_candidate(&rx).expect("the candidates start");
    // The candidates' process groups, as the lock names them.
    let groups = Arc::new(Mutex::new(Vec::<i32>::new()));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (groups, done, root) = (groups.clone(), done.clone(), env.root.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let mut g = groups.lock().unwrap();
                for p in lock_groups(&root, CANDIDATES_ID) {
                    if !g.contains(&p) {
                        g.push(p);
                    }
                }
                drop(g);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    std::thread::sleep(delay.saturating_sub(started.elapsed()));
    // Not reaped yet: the pid is still this child's even if it has ended.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    let killed = status.code().is_none();
    let what = format!("sleep {sleep_s} s, kill {delay:?} into the candidates");
    if !killed {
        assert_eq!(status.code(), Some(0), "{what}");
    }
    // Resume until done (a resume may pause once more: exit 3).
    for resumes in 1..=3 {
        if !killed {
            break;
        }
        let (child, _) = candidates_wfx(
            &env,
            "0",
            &["test-cycle-execute", "--resume-session", CANDIDATES_ID],
        );
        let code = child.wait_with_output().unwrap().status.code();
        assert!(
            code == Some(0) || (code == Some(3) && resumes < 3),
            "{what}: resume {resumes} exited {code:?}"
        );
        if code == Some(0) {
            break;
        }
    }
    // No candidate agent and no group of the killed run is left.
    let agents: Vec<i32> = std::fs::read_to_string(env.state_dir().join("sleepy.pids"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    for pid in agents {
        assert!(
            !crate::candidates::running(pid),
            "{what}: candidate agent {pid} survived the resume"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for &g in groups.lock().unwrap().iter() {
        while wfx::process::group_alive(g) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!wfx::process::group_alive(g), "{what}: group {g} survived");
    }
    // Exactly one fix commit, the chosen candidate's.
    let fixes: Vec<String> = crate::candidates::commits(&env)
        .into_iter()
        .filter(|c| c.contains(" - ") && c.starts_with("test-cycle: iteration"))
        .collect();
    assert_eq!(
        fixes,
        ["test-cycle: iteration 1 - surgical strategy (pass: 81.8% → 100.0%)|3"],
        "{what}"
    );
    // Only the main tree, no candidate ref or checkout, nothing dirty.
    crate::candidates::nothing_left(&env, CANDIDATES_ID);
    assert_eq!(env.git(&["status", "--porcelain"]), "", "{what}");
    let state = env.json(&format!(
        ".workflow/archives/{CANDIDATES_ID}/.process/iteration-state.json"
    ));
    assert_eq!(state["status"], "completed", "{what}");
    killed
}

/// 30 seeded kills: 15 while the agents sleep (30 s each: only the resume
/// can end them) and 15 spread over a phase of instant agents (the tiers in
/// the candidates' checkouts, the choice, the apply and the commit),
/// whose length a reference run measures.
#[test]
fn kill_9_at_random_instants_of_the_candidates_then_resume_leaves_one_commit() {
    // The reference: how long the candidate phase of instant agents lasts,
    // from the first `candidate-started` to the end of the run.
    let env = candidates_project();
    let (child, rx) = candidates_wfx(&env, "0", &["test-cycle-execute"]);
    let started = first_candidate(&rx).expect("the candidates start");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let phase = started.elapsed();
    eprintln!("reference candidate phase to the end: {phase:?}");
    let mut trials: Vec<(&str, Duration)> = seeded_delays(28, 15, Duration::from_millis(1500))
        .into_iter()
        .map(|d| ("30", d))
        .collect();
    trials.extend(seeded_delays(2811, 15, phase).into_iter().map(|d| ("0", d)));
    let total = trials.len();
    let queue = Arc::new(Mutex::new(trials));
    let killed = Arc::new(Mutex::new(0usize));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let (queue, killed) = (queue.clone(), killed.clone());
            std::thread::spawn(move || {
                loop {
                    let Some((sleep_s, delay)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let k = candidates_trial(sleep_s, delay);
                    eprintln!("sleep {sleep_s} s, kill at {delay:?}: killed {k}");
                    *killed.lock().unwrap() += usize::from(k);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a trial failed (see above)");
    }
    let killed = *killed.lock().unwrap();
    assert!(
        killed * 10 >= total * 8,
        "only {killed} of {total} trials were interrupted"
    );
}
