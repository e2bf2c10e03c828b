//! `wfx run` end to end with shell debug commands and a tiny test script:
//! the seed's acceptance criteria (YAML syntax, what the debug command
//! receives, re-run after each attempt, stop on pass, stop at max attempts,
//! continue vs fail, logging), invalid workflows, resume and Ctrl-C.

use crate::common;

use common::{Env, wfx_out as wfx};
use serde_json::Value;

/// A "test suite" that fails (exit 3, one line of output) until a file
/// named `fixed` exists.
const CHECK: &str = "#!/bin/sh\nif [ -f fixed ]; then echo 'all good'; exit 0; fi\necho 'FAIL: the bug is still there'\nexit 3\n";

/// One test step whose debug command fixes the bug (`touch fixed`).
const TOUCH_FIXED: &str = "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: touch fixed\n        max_attempts: 2\n";

fn project() -> Env {
    let env = Env::new();
    env.write("check.sh", CHECK);
    env
}

fn run_state(env: &Env, id: &str) -> Value {
    env.run_state(id)
}

fn exists(env: &Env, rel: &str) -> bool {
    env.root.join(rel).exists()
}

#[test]
fn yaml_syntax_error_exits_2_with_line_and_column() {
    let env = project();
    env.write("wf.yml", "commands:\n  - shell: [oops\n");
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: wf.yml: /: line 2, column 12: invalid YAML: unclosed bracket '['\n"
    );
    assert!(!exists(&env, ".workflow/active"));
}

#[test]
fn unknown_keys_exit_2_naming_key_and_step() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo hi\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: touch fixed\n        max_attempt: 2\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: wf.yml: /commands/1/test/on_failure/max_attempt: line 7, column 9: unknown key \"max_attempt\" in step 2 (test): on_failure; known keys: claude, shell, max_attempts, stop_on_success, fail_workflow, commit_required, timeout, candidates\n"
    );
    let out = wfx(&env, &["--json", "run", "wf.yml"]);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["error"]["exit_code"], 2);
    assert_eq!(
        v["error"]["problems"][0]["pointer"],
        "/commands/1/test/on_failure/max_attempt"
    );
}

#[test]
fn unknown_variable_exits_2_before_anything_runs() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: touch ran\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: fix ${spec} ${test.outptu}\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with("error: wf.yml: /commands/1/test/on_failure/shell: line 6, column 16: step 2 (test): unknown variable ${spec} in on_failure.shell (define it with `env: {spec: …}` in the workflow or `--var spec=…`); known here: "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("wf.yml: /commands/1/test/on_failure/shell: line 6, column 16: step 2 (test): unknown variable ${test.outptu} in on_failure.shell; known here: "),
        "{}",
        lines[1]
    );
    assert!(!exists(&env, "ran"), "nothing may run");
    assert!(!exists(&env, ".workflow/active"));
    // With the variable given, only the typo remains.
    let out = wfx(&env, &["run", "wf.yml", "--var", "spec=specs/a.md"]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn claude_step_without_claude_configured_exits_2_before_anything_runs() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: touch ran\n  - claude: /implement\n  - test:\n      command: sh check.sh\n      on_failure:\n        claude: /debug ${test.output}\n",
    );
    // claude on PATH is not enough: the config must name it.
    let bin = env.fake_agents(&[("claude", "fixer")]);
    let path = env.path_with(&bin);
    let out = env
        .wfx()
        .env("PATH", &path)
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: step 2 (claude), step 3 (test) need claude, but none is configured: name it in .workflow/wfx.json as `agents.definitions.claude` (e.g. {\"agents\": {\"definitions\": {\"claude\": {\"preset\": \"claude\"}}}}) or as the agent of a role (`agents.fix`, `agents.test_gen`, `agents.analysis`)\n"
    );
    assert!(!exists(&env, "ran"));

    let out = env
        .wfx()
        .env("PATH", &path)
        .args(["run", "wf.yml", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("claude:   NOT configured\n"), "{stdout}");

    // Configured, but the program is missing from PATH.
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"definitions": {"claude": {"preset": "claude"}}}}"#,
    );
    let out = env
        .wfx()
        .env("PATH", "/usr/bin:/bin")
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: step 2 (claude), step 3 (test) need claude: it is configured (agents.definitions.claude) but `claude` was not found on PATH\n"
    );
    assert!(!exists(&env, "ran"));

    let out = env
        .wfx()
        .env("PATH", &path)
        .args(["run", "wf.yml", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "claude:   configured by agents.definitions.claude (preset claude); `claude` found at {}\n",
            bin.join("claude").display()
        )),
        "{stdout}"
    );
}

/// The seed's core criteria with a shell debug command: it receives the
/// spec path, the test output, the attempt and the exit code; the tests are
/// re-run after each attempt; the loop stops when they pass.
#[test]
fn debug_loop_receives_context_reruns_and_stops_on_pass() {
    let env = project();
    env.write(
        "wf.yml",
        r#"name: debug me
env:
  spec: specs/49.md
commands:
  - test:
      command: sh check.sh
      on_failure:
        shell: echo ${spec} ${test.attempt} ${test.exit_code} $WFX_TEST_ATTEMPT >> calls.txt; printf %s ${test.output} > out-${test.attempt}.txt; if [ ${test.attempt} = 2 ]; then touch fixed; fi
        max_attempts: 3
"#,
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.read("calls.txt"),
        "specs/49.md 1 3 1\nspecs/49.md 2 3 2\n",
        "two attempts, then the tests passed"
    );
    assert_eq!(env.read("out-1.txt"), "FAIL: the bug is still there\n");
    assert_eq!(env.read("out-2.txt"), "FAIL: the bug is still there\n");

    let dir = ".workflow/archives/WFS-run-debug-me/.process/step-01";
    for f in [
        "initial/test-output.log",
        "initial/test-results.json",
        "attempt-1/debug-command.txt",
        "attempt-1/debug-output.log",
        "attempt-1/test-output.log",
        "attempt-1/test-results.json",
        "attempt-1/attempt.json",
        "attempt-2/test-output.log",
    ] {
        assert!(exists(&env, &format!("{dir}/{f}")), "{f}");
    }
    assert!(
        !exists(&env, &format!("{dir}/attempt-3")),
        "stopped on pass"
    );
    assert_eq!(
        env.read(&format!("{dir}/attempt-1/debug-command.txt")),
        "echo specs/49.md 1 3 $WFX_TEST_ATTEMPT >> calls.txt; printf %s 'FAIL: the bug is still there\n' > out-1.txt; if [ 1 = 2 ]; then touch fixed; fi"
    );
    assert_eq!(
        env.read(&format!("{dir}/attempt-2/test-output.log")),
        "all good\n"
    );

    // Clear logging per attempt, on stderr and in run.log.
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("test step"))
        .collect();
    assert_eq!(lines.len(), 6, "{}", out.stderr);
    assert!(lines[0].starts_with("test step 1 · initial run · exit 3 · 1 failing · "));
    assert!(
        lines[1].starts_with("test step 1 · attempt 1/3 · exit 3 · 1 failing · debug by shell "),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        "test step 1 · re-run after attempt 1/3 · exit 3 · 1 failing · failed"
    );
    assert!(
        lines[3].starts_with("test step 1 · attempt 2/3 · exit 3 · 1 failing · debug by shell ")
    );
    assert_eq!(
        lines[4],
        "test step 1 · re-run after attempt 2/3 · exit 0 · 0 failing · passed"
    );
    assert_eq!(
        lines[5],
        "test step 1 · passed after 2 debug attempts (of at most 3)"
    );
    let log = env.read(".workflow/archives/WFS-run-debug-me/.process/run.log");
    assert!(log.contains(" test step 1 · attempt 2/3 · exit 3 · 1 failing · debug by shell "));

    assert_eq!(
        out.stdout,
        "workflow debug me: completed\n  step 1 (test): passed after 2 debug attempts (of at most 3)\nsession: .workflow/archives/WFS-run-debug-me\n"
    );
    let state = run_state(&env, "WFS-run-debug-me");
    assert_eq!(state["status"], "completed");
    let step = &state["steps"][0];
    assert_eq!(step["status"], "passed");
    assert_eq!(step["attempts"].as_array().unwrap().len(), 2);
    assert_eq!(step["attempts"][0]["outcome"], "failed");
    assert_eq!(step["attempts"][1]["outcome"], "passed");
    assert_eq!(step["attempts"][1]["test"]["exit_code"], 0);
    assert_eq!(step["initial"]["exit_code"], 3);
    let session: Value = serde_json::from_str(
        &env.read(".workflow/archives/WFS-run-debug-me/workflow-session.json"),
    )
    .unwrap();
    assert_eq!(session["type"], "run");
    assert_eq!(session["workflow_type"], "yaml_workflow");
    assert_eq!(session["status"], "completed");
    assert_eq!(session["input"], "wf.yml");
    // Every artifact validates.
    let out = wfx(&env, &["validate", "WFS-run-debug-me"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn max_attempts_then_continue_when_fail_workflow_is_false() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: echo ${test.attempt} >> calls.txt\n        max_attempts: 2\n  - shell: touch after\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.read("calls.txt"),
        "1\n2\n",
        "exactly max_attempts attempts"
    );
    assert!(exists(&env, "after"), "the workflow continued");
    assert!(out.stderr.contains(
        "test step 1 · FAILED: tests never passed after 2/2 debug attempts · workflow continued (fail_workflow: false)\n"
    ));
    let mut lines = out.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("workflow wf: partial_success — tests of step 1 did not pass")
    );
    assert_eq!(
        lines.next(),
        Some(
            "  step 1 (test): FAILED: tests never passed after 2/2 debug attempts · workflow continued (fail_workflow: false)"
        )
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("  step 2 (shell): passed (exit 0, ")
    );
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["status"], "partial_success");
    assert_eq!(state["steps"][0]["status"], "failed");
    assert_eq!(state["steps"][0]["continued"], true);
}

#[test]
fn fail_workflow_true_exits_1_and_skips_later_steps() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: echo ${test.attempt} >> calls.txt\n        max_attempts: 1\n        fail_workflow: true\n  - shell: touch after\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(env.read("calls.txt"), "1\n");
    assert!(!exists(&env, "after"));
    assert!(out.stdout.contains(
        "  step 1 (test): FAILED: tests never passed after 1/1 debug attempts · workflow failed (fail_workflow: true)\n  step 2 (shell): not run\nstopped: step 1 (test): the tests still fail after 1 debug attempts (fail_workflow: true)\n"
    ), "{}", out.stdout);
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["status"], "failed");
    // A failed run is finished: a new run starts a new session.
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 1);
    assert!(exists(
        &env,
        ".workflow/archives/WFS-run-wf-2/.process/run-state.json"
    ));
}

#[test]
fn stop_on_success_false_runs_every_attempt() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: touch fixed; echo ${test.attempt} ${test.exit_code} >> calls.txt\n        max_attempts: 3\n        stop_on_success: false\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.read("calls.txt"), "1 3\n2 0\n3 0\n");
    assert!(
        out.stdout
            .contains("  step 1 (test): passed after 3 debug attempts (of at most 3)\n")
    );
}

#[test]
fn shell_step_failure_exits_1() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo building; exit 7\n  - shell: touch after\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 1);
    assert!(!exists(&env, "after"));
    assert!(
        out.stdout
            .contains("  step 1 (shell): FAILED: `echo building; exit 7` exit 7\n"),
        "{}",
        out.stdout
    );
    assert_eq!(
        env.read(".workflow/archives/WFS-run-wf/.process/step-01/output.log"),
        "building\n"
    );
}

#[test]
fn step_outputs_feed_later_steps_and_large_test_output_goes_by_path() {
    let env = project();
    env.write(
        "big.sh",
        "#!/bin/sh\nif [ -f fixed ]; then exit 0; fi\nhead -c 20000 /dev/zero | tr '\\0' 'x'\nexit 1\n",
    );
    env.write(
        "wf.yml",
        r#"commands:
  - shell: echo hello world
    id: greet
  - shell: echo ${greet.output} ${greet.exit_code} > got.txt
  - test:
      command: sh big.sh
      on_failure:
        shell: echo ${test.output} > where.txt; touch fixed
"#,
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.read("got.txt"), "hello world 0\n");
    assert_eq!(
        env.read("where.txt"),
        ".workflow/active/WFS-run-wf/.process/step-03/initial/test-output.log\n",
        "outputs over 10 KiB are passed as the saved file's path"
    );
}

#[test]
fn commit_required_without_change_fails_the_attempt() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: if [ ${test.attempt} = 2 ]; then touch fixed; fi\n        commit_required: true\n        max_attempts: 3\n",
    );
    env.write(".gitignore", ".workflow/\n");
    env.git_init_commit();
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains(" · no commit and no change (commit_required): attempt failed\n"),
        "{}",
        out.stderr
    );
    let state = run_state(&env, "WFS-run-wf");
    let a = &state["steps"][0]["attempts"];
    assert_eq!(a[0]["outcome"], "no_change");
    assert_eq!(
        a[0]["reason"],
        "commit_required: the debug command made no commit and left no change; counted as failed without re-running the tests"
    );
    assert_eq!(a[0]["test"], Value::Null);
    assert_eq!(a[1]["outcome"], "passed");
    assert_eq!(a[1]["debug"]["files_changed"], serde_json::json!(["fixed"]));
    assert!(!exists(
        &env,
        ".workflow/active/WFS-run-wf/.process/step-01/attempt-1/test-output.log"
    ));

    // Outside git, commit_required cannot be judged: refused up front.
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: touch ran\n    commit_required: true\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("step 1 (shell) uses commit_required, which needs a git repository"),
        "{}",
        out.stderr
    );
    assert!(!exists(&env, "ran"));
}

/// Ctrl-C during a debug command: children ended, state saved, exit 3; a
/// new run is refused until `--resume`, which continues at that attempt.
#[test]
fn interrupt_then_resume_continues_at_the_attempt() {
    let env = project();
    // The first debug call interrupts wfx (its parent) and waits to be ended.
    env.write(
        "debug.sh",
        "#!/bin/sh\necho \"$1\" >> calls.txt\nif [ ! -f interrupted ]; then touch interrupted; kill -INT $PPID; sleep 30; echo survived >> calls.txt; exit 0; fi\ntouch fixed\n",
    );
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo ${session.id} >> starts.txt\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: exec sh debug.sh ${test.attempt}\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    // A pause is an outcome, not an error: told on stdout.
    assert!(
        out.stdout.starts_with("interrupted while running `exec sh debug.sh 1`: the run stopped at step 2 (test), attempt 1 (debug command); state saved in .workflow/active/WFS-run-wf/.process/run-state.json. Continue with `wfx run wf.yml --resume`"),
        "{}",
        out.stdout
    );
    assert_eq!(env.read("calls.txt"), "1\n", "the debug command was ended");
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["status"], "paused");
    assert_eq!(state["current_step"], 2);
    assert_eq!(state["steps"][1]["phase"], "debug");
    assert_eq!(state["steps"][1]["attempt"], 1);

    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: an unfinished run of this workflow exists (WFS-run-wf); continue it with `wfx run wf.yml --resume`, or archive it with `wfx session complete WFS-run-wf` and run again to start afresh\n"
    );

    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("resume WFS-run-wf at step 2 (test), attempt 1 (debug command)\n"),
        "{}",
        out.stderr
    );
    assert_eq!(
        env.read("calls.txt"),
        "1\n1\n",
        "attempt 1 ran again, then passed"
    );
    assert_eq!(
        env.read("starts.txt"),
        "WFS-run-wf\n",
        "finished steps do not re-run"
    );
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["status"], "completed");
    assert_eq!(state["steps"][1]["attempts"].as_array().unwrap().len(), 1);

    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: --resume: no unfinished run of wf.yml in .workflow/active; run it without --resume to start one\n"
    );
}

#[test]
fn dry_run_spells_out_the_plan() {
    let env = project();
    env.write(
        "wf.yml",
        "env: {spec: specs/a.md}\ncommands:\n  - shell: make\n    id: build\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: fix ${spec}\n",
    );
    let out = wfx(&env, &["run", "wf.yml", "--dry-run", "--var", "MODE=fast"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "workflow: wf (wf.yml)\n\
         session:  WFS-run-wf (new session)\n\
         claude:   not needed (no claude: commands); not configured\n\
         var:      ${MODE} = fast\n\
         var:      ${spec} = specs/a.md\n\
         step 1 \"build\" (shell): make · id build\n\
         step 2 (test): sh check.sh · timeout test.timeout_s · on failure: shell \"fix ${spec}\" · max_attempts 3 · stop_on_success true · fail_workflow false\n"
    );
    assert!(
        !exists(&env, ".workflow/active"),
        "a dry run writes nothing"
    );
}

#[test]
fn json_mode_streams_events_and_a_summary() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: touch fixed\n",
    );
    let out = wfx(&env, &["--json", "run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "");
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The one final event of both front ends.
    assert_eq!(events.last().unwrap()["event"], "done");
    assert_eq!(events.last().unwrap()["status"], "completed");
    assert_eq!(events.last().unwrap()["run_status"], "completed");
    assert!(events.iter().any(|e| {
        e["event"] == "attempt"
            && e["attempt"] == 1
            && e["message"]
                .as_str()
                .unwrap()
                .starts_with("test step 1 · attempt 1/3 · exit 3 · 1 failing · debug by shell")
    }));
}

/// An agent that is rate limited (or missing) pauses the run (exit 3); the
/// step runs again on `--resume`.
#[test]
fn unavailable_agent_pauses_the_run() {
    let env = project();
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"definitions": {"claude": {"preset": "claude"}}}}"#,
    );
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo once >> ran.txt\n  - claude: /implement\n",
    );
    let bin = env.fake_agents(&[("claude", "rate-limit")]);
    let out = env
        .wfx()
        .env("PATH", env.path_with(&bin))
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    // A pause is an outcome, not an error: told on stdout, as the cycle does.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("error:"), "{stderr}");
    assert!(
        stdout.starts_with("claude is unavailable (rate_limit: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("the run stopped at step 2 (claude)"),
        "{stdout}"
    );
    assert_eq!(run_state(&env, "WFS-run-wf")["status"], "paused");

    let bin = env.fake_agents(&[("claude", "fixer")]);
    let out = env
        .wfx()
        .env("PATH", env.path_with(&bin))
        .args(["run", "wf.yml", "--resume"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.read("ran.txt"), "once\n");
}

/// `agents.max_cost_usd` stops the run before the next claude call.
#[test]
fn cost_cap_stops_claude_calls() {
    let env = project();
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"definitions": {"claude": {"preset": "claude"}}, "max_cost_usd": 0.04}}"#,
    );
    env.write("wf.yml", "commands:\n  - claude: /one\n  - claude: /two\n");
    let bin = env.fake_agents(&[("claude", "fixer")]);
    let log = env.tmp.path().join("calls");
    std::fs::create_dir_all(&log).unwrap();
    let out = env
        .wfx()
        .env("PATH", env.path_with(&bin))
        .env("FAKE_AGENT_LOG", &log)
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(log.join("calls.jsonl"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  step 2 (claude): FAILED: agent cost cap reached: $0.05 spent of agents.max_cost_usd $0.04; "),
        "{stdout}"
    );
}

/// A run that stopped between a debug command and its test re-run (as
/// after `kill -9`) resumes with the re-run: the debug command is not
/// repeated.
#[test]
fn resume_at_the_retest_phase_does_not_repeat_the_debug_command() {
    let env = project();
    env.write(
        "debug.sh",
        "#!/bin/sh\necho \"$1\" >> calls.txt\nif [ ! -f interrupted ]; then touch interrupted; kill -INT $PPID; sleep 30; fi\n",
    );
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: exec sh debug.sh ${test.attempt}\n",
    );
    assert_eq!(wfx(&env, &["run", "wf.yml"]).code, 3);
    // Pretend the debug command finished and fixed the bug, and the run
    // died before the re-run.
    let path = env
        .root
        .join(".workflow/active/WFS-run-wf/.process/run-state.json");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    state["status"] = "running".into();
    state["steps"][0]["phase"] = "retest".into();
    state["steps"][0]["attempts"][0]["debug"]["finished"] = true.into();
    std::fs::write(&path, serde_json::to_string(&state).unwrap()).unwrap();
    env.write("fixed", "");
    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("resume WFS-run-wf at step 1 (test), attempt 1 (test re-run)\n")
    );
    assert_eq!(env.read("calls.txt"), "1\n", "no second debug call");
    assert!(
        out.stdout
            .contains("  step 1 (test): passed after 1 debug attempt (of at most 3)\n")
    );
}

/// A run killed while replacing a file leaves its temp file behind; the
/// resume that finds the dead run's lock sweeps it, so it is never archived
/// with the session (issue #15 case 11, as in the cycle).
#[test]
fn a_resume_after_a_killed_run_sweeps_its_temp_files() {
    let env = project();
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"definitions": {"claude": {"preset": "claude"}}}}"#,
    );
    env.write("wf.yml", "commands:\n  - claude: /implement\n");
    let bin = env.fake_agents(&[("claude", "rate-limit")]);
    let out = env
        .wfx()
        .env("PATH", env.path_with(&bin))
        .args(["run", "wf.yml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    // What `kill -9` in the middle of an atomic replace leaves: the lock of
    // a process that is gone and a half-written temp file.
    let dir = ".workflow/active/WFS-run-wf";
    env.write(
        &format!("{dir}/.lock"),
        r#"{"pid": 999999999, "since": "2026-01-01T00:00:00Z"}"#,
    );
    let temp = env.write(&format!("{dir}/.process/.run-state.json.tmp"), "{\"half");
    let bin = env.fake_agents(&[("claude", "fixer")]);
    let out = env
        .wfx()
        .env("PATH", env.path_with(&bin))
        .args(["run", "wf.yml", "--resume"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!temp.exists(), "the temp file was not swept");
}

/// A test step whose command finds no tests (pytest exit 5) is nothing to
/// debug: the run pauses with the cycle's "no tests found" message and
/// hint, the debug command never runs, and the resume runs the tests again
/// (DESIGN.md §10.7, issue #20 A).
#[test]
fn a_test_step_that_finds_no_tests_pauses_instead_of_debugging() {
    let env = Env::new();
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: python3 -m pytest -q -p no:cacheprovider\n      on_failure:\n        shell: echo debugged >> calls.txt\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(!exists(&env, "calls.txt"), "the debug command ran");
    assert!(
        out.stdout.starts_with(&format!(
            "no tests found. {}: the run stopped at step 1 (test)",
            "Write tests first, or set `agents.test_gen` in .workflow/wfx.json so `wfx test-fix-gen` generates them (task IMPL-001)."
        )),
        "{}",
        out.stdout
    );
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["status"], "paused");
    assert_eq!(state["steps"][0]["attempt"], 0);

    // Once a test exists, the resume runs the tests again and goes on.
    env.write("test_ok.py", "def test_ok():\n    assert True\n");
    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(!exists(&env, "calls.txt"), "the debug command ran");
}

/// Structure and variables are checked in one go: a file with an unknown
/// key and an unknown variable reports both, in file order, so fixing the
/// first does not reveal the second (issue #20 item 14).
#[test]
fn every_problem_of_a_workflow_file_is_reported_at_once() {
    let env = project();
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo ${nope}\n  - test:\n      command: sh check.sh\n      on_falure:\n        shell: touch fixed\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with("error: wf.yml: /commands/0/shell: line 2, column 12: step 1 (shell): unknown variable ${nope}"),
        "{}",
        out.stderr
    );
    assert!(
        lines[1].starts_with(
            "wf.yml: /commands/1/test/on_falure: line 5, column 7: unknown key \"on_falure\""
        ),
        "{}",
        out.stderr
    );
    assert!(!exists(&env, ".workflow/active"));
}

/// Finished runs are archived like cycle sessions (DESIGN.md §10.7): they
/// do not pile up in `.workflow/active/`; each gets a manifest entry.
#[test]
fn finished_runs_are_archived_and_do_not_pile_up() {
    let env = project();
    env.write("wf.yml", "commands:\n  - shell: echo hi\n");
    for _ in 0..2 {
        let out = wfx(&env, &["run", "wf.yml"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let active: Vec<_> = std::fs::read_dir(env.root.join(".workflow/active"))
        .unwrap()
        .collect();
    assert!(active.is_empty(), "{active:?}");
    let manifest = env.json(".workflow/archives/manifest.json");
    let ids: Vec<&str> = manifest
        .as_array()
        .expect("CCW's array shape")
        .iter()
        .map(|e| e["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["WFS-run-wf", "WFS-run-wf-2"]);
    assert_eq!(manifest[0]["type"], "run");
    assert_eq!(manifest[0]["status"], "completed");
    // Paths inside the archived run point into archives/.
    let state = env.read(".workflow/archives/WFS-run-wf-2/.process/run-state.json");
    assert!(!state.contains(".workflow/active/"), "{state}");
}

/// A retest starts before the debug attempt's record is durable (the sync
/// overlaps the run), yet while it runs the session shows that attempt:
/// the state is put in place once the child runs, not after it.
#[test]
fn the_state_shows_the_finished_attempt_while_its_retest_runs() {
    let env = Env::new();
    env.write(
        "check.sh",
        "#!/bin/sh\n\
         [ -f fixed ] || { echo 'FAIL: the bug is still there'; exit 3; }\n\
         for i in $(seq 100); do\n\
         \x20 grep -q '\"finished\": true' .workflow/active/WFS-run-wf/.process/run-state.json && { echo 'all good'; exit 0; }\n\
         \x20 sleep 0.05\n\
         done\n\
         echo 'the attempt is not in the state'; exit 4\n",
    );
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: touch fixed\n        max_attempts: 1\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let state = run_state(&env, "WFS-run-wf");
    assert_eq!(state["steps"][0]["status"], "passed");
    assert_eq!(state["steps"][0]["attempts"][0]["debug"]["finished"], true);
    // The manifest's entry, made before the archive's rewrites, agrees
    // with the session's file as they left it.
    let session: Value =
        serde_json::from_str(&env.read(".workflow/archives/WFS-run-wf/workflow-session.json"))
            .unwrap();
    let manifest: Value =
        serde_json::from_str(&env.read(".workflow/archives/manifest.json")).unwrap();
    let entry = &manifest[0];
    assert_eq!(entry["session_id"], "WFS-run-wf");
    assert_eq!(entry["status"], session["status"]);
    assert_eq!(entry["archive_path"], ".workflow/archives/WFS-run-wf");
    let archived_at = session["archived_at"].as_str().unwrap();
    assert_eq!(
        entry["archived_at"].as_str().unwrap()[..19],
        archived_at[..19]
    );
    assert!(
        !env.read(".workflow/archives/WFS-run-wf/workflow-session.json")
            .contains(".workflow/active/")
    );
}

/// A run killed after its first steps were journaled but before they were
/// put in place (no `workflow-session.json` yet): `--resume` replays them
/// and goes on, instead of finding no unfinished run.
#[test]
fn a_run_killed_before_its_first_steps_were_put_in_place_resumes() {
    let env = project();
    // The first test run kills wfx (its parent); later ones test.
    env.write(
        "wf.yml",
        "commands:\n  - test:\n      command: \"[ -f killed ] || { touch killed; kill -9 $PPID; sleep 5; }; sh check.sh\"\n      on_failure:\n        shell: touch fixed\n        max_attempts: 2\n",
    );
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    // What a kill a moment earlier leaves: the steps only in the journal.
    // (The kill can also come before wfx put them in place: they are put
    // in place while the test runs.)
    let dir = ".workflow/active/WFS-run-wf";
    assert!(env.root.join(dir).join(".process/wfx.journal").is_file());
    let _ = std::fs::remove_file(env.root.join(dir).join("workflow-session.json"));
    let _ = std::fs::remove_file(env.root.join(dir).join(".process/run-state.json"));
    assert!(!exists(&env, &format!("{dir}/workflow-session.json")));
    // Not a test session the cycle may take (nor open) meanwhile.
    let out = wfx(&env, &["test-cycle-execute"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no active session"), "{}", out.stderr);
    assert!(!exists(&env, &format!("{dir}/workflow-session.json")));
    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("step 1 (test): passed after 1 debug attempt"),
        "{}",
        out.stdout
    );
    assert!(exists(
        &env,
        ".workflow/archives/WFS-run-wf/workflow-session.json"
    ));
    assert!(!exists(&env, dir));
}

/// A run killed while it was being archived (moved, its paths not yet
/// rewritten, not in the manifest): `--resume` finishes the archive and
/// reports the run as it had ended; a new run would do the same first.
#[test]
fn a_run_killed_while_it_was_archived_is_finished_by_resume() {
    let env = project();
    env.write("wf.yml", TOUCH_FIXED);
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Put the archive back where a kill after the move leaves it.
    let dir = env.root.join(".workflow/archives/WFS-run-wf");
    std::fs::remove_file(env.root.join(".workflow/archives/manifest.json")).unwrap();
    for entry in walkdir::WalkDir::new(&dir) {
        let path = entry.unwrap().into_path();
        let json = path.extension().is_some_and(|x| x == "json");
        if json {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut v: Value = serde_json::from_str(&text.replace(
                ".workflow/archives/WFS-run-wf",
                ".workflow/active/WFS-run-wf",
            ))
            .unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("archived_at");
            }
            std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        }
    }
    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains(
            "WFS-run-wf: the archive a killed run cut short is finished (.workflow/archives/WFS-run-wf)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("step 1 (test): passed after 1 debug attempt"),
        "{}",
        out.stdout
    );
    let manifest: Value =
        serde_json::from_str(&env.read(".workflow/archives/manifest.json")).unwrap();
    assert_eq!(manifest.as_array().unwrap().len(), 1);
    assert_eq!(manifest[0]["session_id"], "WFS-run-wf");
    let state = env.read(".workflow/archives/WFS-run-wf/.process/run-state.json");
    assert!(!state.contains(".workflow/active/"), "{state}");
    let session: Value =
        serde_json::from_str(&env.read(".workflow/archives/WFS-run-wf/workflow-session.json"))
            .unwrap();
    assert!(session["archived_at"].is_string());
    // Finished once: a second resume has nothing left to do.
    let out = wfx(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
}

/// Every path below `dir` with its bytes (none for a directory).
fn tree_bytes(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.into_path(), bytes)
        })
        .collect()
}

/// A "run killed while archived" that is a link an agent planted in
/// `archives/` is not finished: nothing is written where it points.
#[test]
fn a_planted_link_in_archives_is_not_finished_through() {
    let env = project();
    env.write("wf.yml", TOUCH_FIXED);
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A copy of the archived run, outside the project, linked in under a
    // later run's id and left out of the manifest.
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("run");
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(env.root.join(".workflow/archives/WFS-run-wf"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let before = tree_bytes(&copy);
    std::os::unix::fs::symlink(&copy, env.root.join(".workflow/archives/WFS-run-wf-2")).unwrap();
    std::fs::remove_file(env.root.join("fixed")).unwrap();
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("WFS-run-wf-2"), "{}", out.stderr);
    let after = tree_bytes(&copy);
    assert_eq!(before, after, "nothing written through the link");
}
