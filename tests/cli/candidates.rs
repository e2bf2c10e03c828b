//! Speculative fix attempts (`--candidates N`, `fix.candidates`) end to
//! end on the py-calc sample project with fixture fixers that differ: one
//! fixes one bug, one fixes both but breaks passing tests, one fixes both. Checked through
//! commits, fix history, `--json` events, `wfx status`, processes and
//! `git worktree list`, as a user would run it.

use crate::common;

use common::{Env, fake_agent};
use serde_json::{Value, json};

/// Three fix agents, each `sleepy` with its action: the order of the chain
/// is the order of the candidates.
pub(crate) fn config(actions: &[&str], candidates: u32) -> Value {
    let mut defs = serde_json::Map::new();
    let mut names = Vec::new();
    for a in actions {
        names.push(json!(a));
        defs.insert(
            a.to_string(),
            json!({"command": [fake_agent("sleepy").display().to_string(), a]}),
        );
    }
    json!({
        "agents": {"fix": names, "definitions": defs},
        "fix": {"candidates": candidates, "max_parallel": 3}
    })
}

pub(crate) fn plan(env: &Env, title: &str) {
    env.wfx_live()
        .args(["test-fix-gen", title, "--plan-only"])
        .assert()
        .success();
}

/// `wfx --json test-cycle-execute ARGS` with the fixture agents' state in
/// the test's directory and no sleep.
fn execute(env: &Env, args: &[&str]) -> std::process::Output {
    env.wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .env("SLEEPY_S", "0")
        .args(["--json", "test-cycle-execute"])
        .args(args)
        .output()
        .unwrap()
}

/// The run ended with `code` (its stderr shown when not).
fn exited(out: &std::process::Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn events(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

/// Lines of `git log` subjects, newest first, with their Wfx-Candidate.
pub(crate) fn commits(env: &Env) -> Vec<String> {
    env.git(&[
        "log",
        "--format=%s|%(trailers:key=Wfx-Candidate,valueonly,separator=)",
    ])
    .lines()
    .map(str::to_string)
    .collect()
}

/// Nothing of the candidates is left: no worktree registered, no
/// candidate ref, no checkout in the temp directory for the session.
pub(crate) fn nothing_left(env: &Env, session: &str) {
    assert_eq!(env.git(&["worktree", "list"]).lines().count(), 1);
    assert_eq!(env.git(&["for-each-ref", "refs/wfx"]), "");
    // This project's checkouts only: tests running at the same time may
    // use the same session name in other projects.
    for root in [env.root.clone(), env.root.canonicalize().unwrap()] {
        let dir = wfx::git::candidates_dir(&root, session);
        assert!(
            std::fs::symlink_metadata(&dir).is_err(),
            "{} is left",
            dir.display()
        );
    }
}

#[test]
fn three_candidates_fix_in_one_step_and_the_best_is_committed() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &config(&["fix-one", "fix-and-break", "fix-all"], 3),
    );
    plan(&env, "Test the candidates");
    let out = execute(&env, &[]);
    exited(&out, 0);
    // One step: the chosen candidate's commit, with its trailer.
    assert_eq!(
        commits(&env),
        [
            "test-cycle: session WFS-test-the-candidates completed (pass: 100.0%, 1 fix attempt(s))|",
            "test-cycle: iteration 1 - surgical strategy (pass: 81.8% → 100.0%)|3",
            "initial|",
        ]
    );
    // The committed diff is fix-all's: both bugs, nothing broken.
    let diff = env.git(&["diff", "HEAD~2", "HEAD~1", "--stat", "--", "calc", "tests"]);
    assert!(
        diff.contains("calc/ops.py") && diff.contains("calc/auth.py"),
        "{diff}"
    );
    assert!(
        env.read("calc/ops.py").contains("return a + b"),
        "the breaker's bug is not applied"
    );
    let history = env.json(".workflow/archives/WFS-test-the-candidates/.process/fix-history.json");
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "max_iterations counts steps: {entries:?}");
    let e = &entries[0];
    assert_eq!(e["candidate"], 3);
    assert_eq!(e["agent"], "fix-all");
    let verdicts: Vec<(&str, &str, &str, u64)> = e["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["agent"].as_str().unwrap(),
                c["strategy"].as_str().unwrap(),
                c["verdict"].as_str().unwrap(),
                c["fixed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("fix-one", "conservative", "outranked", 1),
            // Fixes as much as the winner but breaks a test: never chosen.
            ("fix-and-break", "aggressive", "regression", 2),
            ("fix-all", "surgical", "chosen", 2),
        ]
    );
    let broken = e["candidates"][1]["broken"].as_array().unwrap();
    assert!(
        broken.iter().any(|t| t == "tests/test_ops.py::test_add"),
        "{broken:?}"
    );
    assert!(
        e["candidates"][2]["tiers"][0]["pass_rate"]
            .as_f64()
            .unwrap()
            > 99.0
    );
    // Every candidate's call is recorded (the cost cap counts them all),
    // each with its own prompt file.
    let calls: Vec<(Value, Value)> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["candidate"].clone(), c["prompt_file"].clone()))
        .collect();
    assert_eq!(calls.len(), 3, "{calls:?}");
    for (i, (n, prompt)) in calls.iter().enumerate() {
        assert_eq!(n, &json!(i + 1));
        assert!(
            prompt
                .as_str()
                .unwrap()
                .ends_with(&format!("iteration-1-candidate-{}/fix-prompt.md", i + 1)),
            "{prompt}"
        );
    }
    // The events.
    let ev = events(&out);
    assert_eq!(of_kind(&ev, "candidate-started").len(), 3);
    let finished = of_kind(&ev, "candidate-finished");
    assert_eq!(finished.len(), 3);
    assert!(
        finished
            .iter()
            .all(|f| f["of"] == 3 && f["tiers"].is_array())
    );
    let chosen = of_kind(&ev, "candidate-chosen");
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0]["candidate"], 3);
    assert_eq!(chosen[0]["verdicts"].as_array().unwrap().len(), 3);
    nothing_left(&env, "WFS-test-the-candidates");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    // `wfx status` and the report show them side by side.
    let status = env
        .wfx()
        .args(["status", "WFS-test-the-candidates"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .trim_start_matches("* ")
                .starts_with("candidate ")
        })
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].contains("candidate 1 · fix-one, conservative · outranked · fixed 1"),
        "{text}"
    );
    assert!(
        lines[1].contains("candidate 2 · fix-and-break, aggressive · regression"),
        "{text}"
    );
    assert!(
        lines[2]
            .trim_start()
            .starts_with("* candidate 3 · fix-all, surgical · chosen · fixed 2"),
        "{text}"
    );
    assert!(
        text.contains("breaks tests/"),
        "the regression is named: {text}"
    );
    env.wfx()
        .args(["report", "WFS-test-the-candidates", "--html", "report.html"])
        .assert()
        .success();
    let html = env.read("report.html");
    let table = html
        .split("id=\"candidates-1\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("a candidates table");
    assert_eq!(table.matches("<tr class=").count(), 3, "{table}");
    assert_eq!(table.matches("<tr class=\"chosen\">").count(), 1, "{table}");
    assert!(table.contains("badge regression"), "{table}");
}

#[test]
fn one_candidate_is_one_attempt_at_a_time_and_takes_more_steps() {
    let env = Env::new();
    env.cycle_project("py-calc", &config(&["fix-one", "break", "fix-all"], 3));
    plan(&env, "Test the candidates");
    let out = execute(&env, &["--candidates", "1"]);
    assert_eq!(out.status.code(), Some(0));
    // The first agent of the chain alone, in the work tree: one fix a step.
    let ev = events(&out);
    assert!(of_kind(&ev, "candidate-started").is_empty());
    let history = env.json(".workflow/archives/WFS-test-the-candidates/.process/fix-history.json");
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(
        entries
            .iter()
            .all(|e| e.get("candidates").is_none() && e["agent"] == "fix-one")
    );
    assert!(
        commits(&env).iter().all(|c| c.ends_with('|')),
        "no Wfx-Candidate"
    );
}

#[test]
fn no_candidate_better_than_the_run_before_is_a_failed_attempt() {
    let env = Env::new();
    env.cycle_project("py-calc", &config(&["noop", "break"], 2));
    plan(&env, "Test the candidates");
    let out = execute(&env, &["--max-iterations", "1"]);
    exited(&out, 1);
    let ev = events(&out);
    let chosen = of_kind(&ev, "candidate-chosen");
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0]["candidate"], Value::Null);
    // Nothing was committed or changed in the project.
    assert_eq!(commits(&env), ["initial|"]);
    assert_eq!(
        env.git(&["status", "--porcelain", "--", "calc", "tests"]),
        ""
    );
    let history = env.json(".workflow/active/WFS-test-the-candidates/.process/fix-history.json");
    let e = &history["entries"][0];
    assert_eq!(e["outcome"], "no_change");
    let verdicts: Vec<&str> = e["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    // `break` fixed none of the failing tests in its first tier: it
    // cannot be better than the run before, so nothing more ran for it.
    assert_eq!(verdicts, ["no_change", "no_change"]);
}

/// The process exists and is not a zombie waiting for its reaper.
pub(crate) fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn kill_9_while_candidates_run_then_resume_leaves_nothing_behind() {
    let env = Env::new();
    env.cycle_project("py-calc", &config(&["fix-one", "break", "fix-all"], 3));
    plan(&env, "Test the killed candidates");
    let session = "WFS-test-the-killed-candidates";
    let state = env.state_dir();
    let pids_file = state.join("sleepy.pids");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    let mut child = cmd
        .env("FIXER_STATE", &state)
        .env("SLEEPY_S", "60")
        .args(["--json", "test-cycle-execute"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill wfx once the three candidates' agents run.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(&pids_file).map_or(0, |t| t.lines().count());
        if n >= 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the candidates never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let agents: Vec<i32> = std::fs::read_to_string(&pids_file)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let out = env
        .wfx_live()
        .env("FIXER_STATE", &state)
        .env("SLEEPY_S", "0")
        .args(["test-cycle-execute", "--resume-session", session])
        .output()
        .unwrap();
    exited(&out, 0);
    for pid in agents {
        assert!(!running(pid), "candidate agent {pid} survived the resume");
    }
    // One fix commit, the chosen candidate's, never two.
    let fixes: Vec<String> = commits(&env)
        .into_iter()
        .filter(|c| c.contains("iteration 1 - "))
        .collect();
    assert_eq!(
        fixes,
        ["test-cycle: iteration 1 - surgical strategy (pass: 81.8% → 100.0%)|3"]
    );
    nothing_left(&env, session);
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

/// A hostile candidate writes into the project itself (an absolute path
/// outside its checkout) while the candidates run: the project is put back
/// after the batch, the warning names the file, and only the chosen
/// candidate's change reaches the work tree and the commit.
#[test]
fn a_candidate_that_writes_into_the_project_is_undone() {
    let env = Env::new();
    env.cycle_project("py-calc", &config(&["fix-one", "fix-all"], 2));
    plan(&env, "Test the candidates");
    let target = env.root.join("calc/other.py");
    std::fs::write(&target, "X = 1\n").unwrap();
    env.git(&["add", "calc/other.py"]);
    env.git(&["commit", "-qm", "other"]);
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .env("SLEEPY_S", "0")
        .env("ESCAPE_TO", &target)
        .args(["test-cycle-execute"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("calc/other.py"), "{stderr}");
    assert_eq!(env.read("calc/other.py"), "X = 1\n");
    assert!(!env.git(&["show", "HEAD~1", "--stat"]).contains("other.py"));
    let history = env.json(".workflow/archives/WFS-test-the-candidates/.process/fix-history.json");
    assert_eq!(history["entries"][0]["tamper"], "tree_edited", "{history}");
}

/// A candidate that replaces a test file by a link to a copy outside the
/// project (one without the failing test) has the file put back in its
/// checkout before its tests run: its record says `link_planted`, it
/// fixes only what it really fixed, the honest candidate wins and no link
/// reaches the project.
#[test]
fn a_candidate_that_plants_a_link_has_it_put_back_before_its_tests() {
    let env = Env::new();
    let mut cfg = config(&["fix-all"], 2);
    cfg["agents"]["fix"] = json!(["link-tests", "fix-all"]);
    cfg["agents"]["definitions"]["link-tests"] =
        json!({"command": [fake_agent("link-tests").display().to_string()]});
    env.cycle_project("py-calc", &cfg);
    plan(&env, "Test the candidates");
    let out = execute(&env, &[]);
    exited(&out, 0);
    let history = env.json(".workflow/archives/WFS-test-the-candidates/.process/fix-history.json");
    let e = &history["entries"][0];
    assert_eq!(e["candidate"], 2, "{e:#}");
    let linker = &e["candidates"][0];
    assert_eq!(linker["agent"], "link-tests");
    assert_eq!(linker["tamper"], "link_planted", "{linker:#}");
    assert_eq!(linker["verdict"], "outranked", "{linker:#}");
    assert_eq!(linker["fixed"], 1, "{linker:#}");
    assert!(
        !std::fs::symlink_metadata(env.root.join("tests/test_auth.py"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        env.git(&["ls-files", "-s", "tests"])
            .matches("120000")
            .count(),
        0
    );
    nothing_left(&env, "WFS-test-the-candidates");
}
