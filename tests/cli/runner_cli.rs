//! `wfx test` behaviour that needs no real test toolchain: commands given in
//! `.workflow/wfx.json` that print known output, fail, hang or leave a
//! grandchild behind.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::Env;
use serde_json::Value;

fn config(env: &Env, command: &str, timeout_s: u64) {
    let cfg = serde_json::json!({"test": {"command": command, "timeout_s": timeout_s}});
    env.write(".workflow/wfx.json", &cfg.to_string());
}

fn run_json(env: &Env, args: &[&str]) -> (i32, Value) {
    common::json_output(
        &env.wfx()
            .arg("test")
            .arg("--json")
            .args(args)
            .output()
            .unwrap(),
    )
}

fn wait_for(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn no_test_command_exits_2_and_says_where_it_looked() {
    let env = Env::new();
    env.write("README.md", "nothing to test\n");
    let out = env.wfx().arg("test").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test command detected"), "{err}");
    assert!(err.contains("Cargo.toml, pyproject.toml"), "{err}");
    assert!(err.contains(".workflow/wfx.json"), "{err}");
    assert!(err.contains("\"test\": {\"command\""), "{err}");
}

#[test]
fn a_command_that_is_not_found_exits_2() {
    let env = Env::new();
    // Refused before it runs, in the words the cycle uses.
    config(&env, "wfx-no-such-test-runner --all", 60);
    let out = env.wfx().arg("test").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the test command `wfx-no-such-test-runner --all` needs `wfx-no-such-test-runner`, which is not on PATH"),
        "{err}"
    );
    // A path only the shell finds missing: exit 127.
    config(&env, "./no-such-test-runner --all", 60);
    let out = env.wfx().arg("test").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot run `./no-such-test-runner --all` (exit 127)"),
        "{err}"
    );
}

#[test]
fn tap_output_of_a_custom_command_is_parsed() {
    let env = Env::new();
    env.write(
        "t.sh",
        "echo 'TAP version 13'\necho 'ok 1 - adds'\necho 'not ok 2 - divides'\necho '  ---'\necho \"  error: 'boom'\"\necho '  ...'\necho 'ok 3 - later # SKIP not yet'\necho '1..3'\nexit 1\n",
    );
    config(&env, "sh t.sh", 60);
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["parser"], "tap");
    assert_eq!(doc["framework"], "custom");
    assert_eq!(
        (
            doc["total"].as_u64(),
            doc["passed"].as_u64(),
            doc["failed"].as_u64(),
            doc["skipped"].as_u64()
        ),
        (Some(3), Some(1), Some(1), Some(1))
    );
    assert_eq!(doc["failures"][0]["test"], "divides");
    assert_eq!(doc["failures"][0]["error"], "boom");
    assert_eq!(doc["output_log"], ".workflow/.cache/test-output.log");
    assert_eq!(doc["command"], "sh t.sh");
    let text = serde_json::to_string(&doc).unwrap();
    assert!(
        !text.contains(env.root.to_str().unwrap()),
        "absolute path in {text}"
    );
    // The human form lists each failure as `file:line  id  error`.
    let out = env.wfx().arg("test").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("failed: 3 tests, 1 passed, 1 failed, 1 skipped, 0 errors; pass rate 50.0%"),
        "{stdout}"
    );
    assert!(stdout.contains("-  divides  boom"), "{stdout}");
    // The cache is never committed.
    assert_eq!(
        env.read(".workflow/.cache/.gitignore").lines().last(),
        Some("*")
    );
}

#[test]
fn unparseable_failure_falls_back_to_the_exit_code() {
    let env = Env::new();
    config(
        &env,
        "echo 'compiling...'; echo 'fatal: config broken' >&2; exit 4",
        60,
    );
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["parser"], "exit-code");
    assert_eq!(
        (doc["total"].as_u64(), doc["errors"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(doc["pass_rate"], 0.0);
    let f = &doc["failures"][0];
    assert_eq!(f["test_type"], "static");
    assert_eq!(f["error"], "fatal: config broken");
    assert_eq!(f["message"], "compiling...\nfatal: config broken");
}

#[test]
fn exit_zero_without_tests_is_not_a_pass() {
    let env = Env::new();
    config(&env, "echo all good", 60);
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["failures"][0]["error"], "no tests found");
    assert_eq!(doc["exit_code"], 0);
}

#[test]
fn passing_suite_exits_0() {
    let env = Env::new();
    config(
        &env,
        "printf 'running 2 tests\\ntest a ... ok\\ntest b ... ok\\n\\ntest result: ok. 2 passed; 0 failed\\n'",
        60,
    );
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 0);
    assert_eq!(doc["parser"], "libtest");
    assert_eq!(doc["pass_rate"], 100.0);
    assert_eq!(doc["failures"], serde_json::json!([]));
}

#[test]
fn extra_arguments_reach_the_command() {
    let env = Env::new();
    config(&env, "sh t.sh", 60);
    env.write("t.sh", "echo 'ok 1 - got' \"$1\" \"$2\"\n");
    let (code, doc) = run_json(&env, &["--", "one", "two words"]);
    assert_eq!(code, 0);
    assert_eq!(doc["command"], "sh t.sh one 'two words'");
    assert_eq!(doc["cases"][0]["test"], "got one two words");
}

#[test]
fn only_failed_without_a_previous_run_exits_2() {
    let env = Env::new();
    config(&env, "true", 60);
    let out = env.wfx().args(["test", "--only-failed"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `wfx test` first"));
}

#[test]
fn only_failed_on_a_runner_without_filters_runs_everything_and_says_so() {
    let env = Env::new();
    env.write("t.sh", "echo 'ok 1 - a'\necho 'not ok 2 - b'\n");
    config(&env, "sh t.sh", 60);
    let (code, _) = run_json(&env, &[]);
    assert_eq!(code, 1);
    let (code, doc) = run_json(&env, &["--only-failed"]);
    assert_eq!(code, 1);
    assert_eq!(doc["scope"], "full");
    assert_eq!(
        doc["notes"][0],
        "custom cannot run a subset of tests; the whole suite ran"
    );
    assert_eq!(
        (doc["total"].as_u64(), doc["failed"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn timeout_ends_the_whole_process_group() {
    let env = Env::new();
    config(
        &env,
        "echo $$ > group.pid; sleep 1000 & echo $! > child.pid; wait",
        1,
    );
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["failures"][0]["error"], "timed out after 1 s");
    assert_eq!(doc["exit_code"], Value::Null);
    let pgid: i32 = env.read("group.pid").trim().parse().unwrap();
    assert!(
        !wfx::process::group_alive(pgid),
        "a process of group {pgid} survived the timeout"
    );
}

#[test]
fn ctrl_c_ends_the_group_and_exits_3() {
    let env = Env::new();
    config(
        &env,
        "echo $$ > group.pid; sleep 1000 & echo $! > child.pid; wait",
        600,
    );
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    let mut child = cmd
        .arg("test")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&env.root.join("child.pid"));
    let pgid: i32 = wait_for(&env.root.join("group.pid")).parse().unwrap();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        !wfx::process::group_alive(pgid),
        "a process of group {pgid} survived Ctrl-C"
    );
}

#[test]
fn rerun_marks_failures_that_pass_again_as_flaky() {
    use wfx::artifacts::test_results::Criticality;
    use wfx::testing::{self, RunRequest};
    let env = Env::new();
    // `flappy` fails on the first run only; `broken` always fails.
    env.write(
        "t.sh",
        "if [ -e seen ]; then echo 'ok 1 - flappy'; else touch seen; echo 'not ok 1 - flappy'; fi\necho 'not ok 2 - broken'\necho 'ok 3 - fine'\nexit 1\n",
    );
    config(&env, "sh t.sh", 60);
    let cfg = wfx::session::Workspace::new(&env.root)
        .load_config()
        .unwrap();
    let detected = testing::detect(&env.root, &cfg.test).unwrap();
    let dir = env.root.join(".workflow/.cache");
    let mut pgids = Vec::new();
    let mut record = |pgid: i32| pgids.push(pgid);
    let mut req = RunRequest::new(
        &env.root,
        detected.clone(),
        dir.join("junit"),
        dir.join("run.log"),
    );
    req.on_spawn = Some(&mut record);
    let mut results = testing::run_tests(req).unwrap();
    assert_eq!(pgids.len(), 1);
    assert!(pgids[0] > 0);
    assert_eq!((results.failed, results.passed), (2, 1));

    // The flaky re-run as the engine's driver makes it: the failures once
    // more through the runner's filter, then marked.
    let mut req = RunRequest::new(
        &env.root,
        detected,
        dir.join("junit"),
        dir.join("rerun.log"),
    );
    req.subset = Some(testing::results::failing_ids(&results));
    let rerun = testing::run_tests(req).unwrap();
    let flaky = testing::mark_flaky(&mut results, &rerun);
    assert_eq!(flaky, vec!["flappy"]);
    let f: Vec<_> = results
        .failures
        .iter()
        .map(|f| (f.test.as_str(), f.flaky, f.criticality))
        .collect();
    assert_eq!(
        f,
        vec![
            ("flappy", true, Criticality::Low),
            ("broken", false, Criticality::Medium)
        ]
    );
    assert_eq!(testing::results::pass_rate_without_flaky(&results), 66.6);
}

/// A fix that keeps a Python file's size and modification second (`== 6`
/// → `== 8`, made within the second after a run) is run as the new code:
/// wfx's runs leave no `.pyc` that Python would trust over the source.
#[test]
fn a_same_size_edit_in_the_same_second_is_tested_as_edited() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let (code, doc) = run_json(&env, &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert!(
        common::failing_tests(&doc)
            .iter()
            .any(|t| t.contains("token")),
        "{doc:#}"
    );
    let auth = env.root.join("calc/auth.py");
    let stamp = env.root.join("stamp");
    let touch = |args: &[&std::path::Path]| {
        assert!(
            std::process::Command::new("touch")
                .arg("-r")
                .args(args)
                .status()
                .unwrap()
                .success()
        );
    };
    touch(&[&auth, &stamp]);
    let text = std::fs::read_to_string(&auth).unwrap();
    std::fs::write(&auth, text.replace("len(body) == 6", "len(body) == 8")).unwrap();
    touch(&[&stamp, &auth]);
    let (_, doc) = run_json(&env, &[]);
    assert!(
        !common::failing_tests(&doc)
            .iter()
            .any(|t| t.contains("token")),
        "the old code of calc/auth.py ran: {doc:#}"
    );
}

/// When the first test result came is the run's fixed cost, which decides
/// whether a retest tier is worth running. It is noted as the output
/// arrives: a run that ends a moment after its first result (most small
/// suites behind a build or a `pretest` script) still has it. A watcher
/// that looked at the log every 100 ms missed it (CI: a 2 s `pretest`
/// was then retested by a tier costing as much as the full suite).
#[test]
fn the_fixed_cost_is_noted_when_the_run_ends_right_after_its_first_result() {
    let env = Env::new();
    config(
        &env,
        "sleep 0.6; echo 'test a ... ok'; echo 'test result: ok. 1 passed; 0 failed; 0 ignored'",
        60,
    );
    for _ in 0..3 {
        let (code, v) = run_json(&env, &[]);
        assert_eq!(code, 0, "{v}");
        let setup = v["setup_ms"].as_u64().unwrap_or_else(|| panic!("{v}"));
        let whole = v["duration_ms"].as_u64().unwrap();
        assert!((600..=whole).contains(&setup), "{setup} of {whole}: {v}");
    }
}
