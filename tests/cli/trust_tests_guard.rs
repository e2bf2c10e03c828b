//! Issue #27, the tests are the user's (DESIGN.md §11.2): fixes that make
//! the suite pass by changing the test infrastructure or weakening a
//! failing test are rejected from their diff — before any commit and any
//! retest — and never enter history. End to end on a fresh copy of
//! `fixtures/projects/py-calc` with fixture agents that do the hostile
//! thing.

use crate::common::{Env, fixer_config, out_text};
use serde_json::{Value, json};

const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";

fn one_attempt(fixer: &str) -> Value {
    let mut config = fixer_config(fixer);
    config["cycle"] = json!({"max_iterations": 1});
    config
}

/// The commits the session made (subjects of HEAD's history since the
/// fixture's own commit).
fn session_subjects(env: &Env) -> Vec<String> {
    let mut s = env.subjects();
    s.pop(); // the fixture's initial commit
    s
}

/// How many test runs the session recorded.
fn runs(env: &Env) -> usize {
    env.json(&format!("{ACTIVE}/.process/iteration-state.json"))["iterations"]
        .as_array()
        .unwrap()
        .len()
}

/// The first attempt (by `fixer`) was rejected from its diff: no retest,
/// no commit of iteration 1. Its fix-history entry.
fn rejected_before_any_retest(env: &Env, fixer: &str) -> Value {
    assert_eq!(runs(env), 1, "{fixer}: the rejected fix was retested");
    let subjects = session_subjects(env);
    assert!(
        subjects.iter().all(|s| !s.contains("iteration 1")),
        "{fixer}: {subjects:?}"
    );
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = history["entries"][0].clone();
    assert_eq!(entry["outcome"], "rejected", "{fixer}: {entry:#}");
    entry
}

/// Case 1: a new pytest plugin (`addopts = "-p calc._report"`) turns
/// failures into passes; no test file is touched. The configuration change
/// is an infrastructure edit: rejected from the diff, the plugin and the
/// config put back, no retest, no commit.
#[test]
fn a_plugin_that_fakes_the_pass_is_rejected_before_any_retest() {
    let env = Env::new();
    env.cycle_project("py-calc", &one_attempt("plugin-pass"));
    let pyproject = env.read("pyproject.toml");
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert!(text.contains("rejected"), "{text}");
    assert_eq!(env.read("pyproject.toml"), pyproject);
    assert!(!env.root.join("calc/_report.py").exists());
    let entry = rejected_before_any_retest(&env, "plugin-pass");
    assert_eq!(entry["commit"], Value::Null, "{entry:#}");
    let edits = entry["test_edits"].as_array().unwrap();
    assert!(
        edits
            .iter()
            .any(|e| e["kind"] == "infrastructure" && e["file"] == "pyproject.toml"),
        "{entry:#}"
    );
    // The diff is kept for the reviewer.
    assert!(
        entry["diff"].to_string().contains("calc._report"),
        "{entry:#}"
    );
}

/// Case 1, third form: no configuration and no test file changes; the
/// code under test itself patches the runner (pytest's report class in
/// `calc/__init__.py`, node's `assert` in both sources the tests
/// require). It runs inside the test process, sealed checkout or not, so
/// the fix is rejected from its diff as an infrastructure edit: the
/// sources put back, no retest, no commit.
#[test]
fn code_under_test_that_patches_the_runner_is_rejected_before_any_retest() {
    for (project, fixer, files) in [
        ("py-calc", "runner-patch", &["calc/__init__.py"][..]),
        (
            "node-calc",
            "assert-patch",
            &["src/math.js", "src/strings.js"][..],
        ),
    ] {
        let env = Env::new();
        env.cycle_project(project, &one_attempt(fixer));
        let before: Vec<String> = files.iter().map(|f| env.read(f)).collect();
        env.plan_calculator();
        let run = env.cycle(&[]).code(1);
        let text = out_text(&run);
        assert!(!text.contains("Completed"), "{fixer}: {text}");
        assert!(
            text.contains("code under test reaches into the test runner"),
            "{fixer}: {text}"
        );
        let after: Vec<String> = files.iter().map(|f| env.read(f)).collect();
        assert_eq!(after, before, "{fixer}");
        let entry = rejected_before_any_retest(&env, fixer);
        let edited: Vec<&str> = entry["test_edits"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "infrastructure")
            .map(|e| e["file"].as_str().unwrap())
            .collect();
        assert_eq!(edited, files, "{fixer}: {entry:#}");
    }
}

/// py-calc with a git-ignored `.venv` (the system's pytest through
/// `--system-site-packages`, no pip), one attempt by `fixer`, committed;
/// its config.
fn venv_project(fixer: &str) -> (Env, Value) {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let venv = std::process::Command::new("python3")
        .args([
            "-m",
            "venv",
            "--without-pip",
            "--system-site-packages",
            ".venv",
        ])
        .current_dir(&env.root)
        .status()
        .unwrap();
    assert!(venv.success());
    env.write(".gitignore", ".venv/\n");
    let mut config = one_attempt(fixer);
    // The interpreter the suite's pytest is installed for.
    config["test"] = json!({"command": "python3 -m pytest"});
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&config).unwrap(),
    );
    env.git_init_commit();
    (env, config)
}

/// The cycle planned and run on `env` pauses (exit 3) because `who`
/// installed the fixture plugin into the virtualenv; nothing committed.
fn paused_for_the_plugin(env: &Env, who: &str) {
    env.plan_calculator();
    let run = env.cycle(&[]).code(3);
    let text = out_text(&run);
    assert!(
        text.contains(&format!(
            "{who} changed the installed test runner or its plugins"
        )),
        "{text}"
    );
    assert!(
        text.contains("wfx_fake_pass-1.0.dist-info/entry_points.txt"),
        "{text}"
    );
    assert!(!text.contains("Completed"), "{text}");
    let subjects = session_subjects(env);
    assert!(subjects.is_empty(), "{subjects:?}");
}

/// Case 1, fourth form: the plugin goes into the project's virtualenv (a
/// `pytest11` entry point), which runs see as it is, the sealed one
/// included, and which wfx cannot put back. The session pauses naming
/// what changed, nothing committed; once a person removed it, the resume
/// makes the same attempt again (here with a fixer that fixes the code).
#[test]
fn a_plugin_installed_into_the_virtualenv_pauses_the_session() {
    let (env, mut config) = venv_project("venv-plugin");
    paused_for_the_plugin(&env, "fixer");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "paused", "{state:#}");
    // A person removes the plugin and resumes with a fixer that fixes.
    for entry in std::fs::read_dir(env.root.join(".venv/lib")).unwrap() {
        let sp = entry.unwrap().path().join("site-packages");
        std::fs::remove_file(sp.join("wfx_fake_pass.py")).unwrap();
        std::fs::remove_dir_all(sp.join("wfx_fake_pass-1.0.dist-info")).unwrap();
    }
    config["agents"] = fixer_config("fix-all")["agents"].clone();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&config).unwrap(),
    );
    env.cycle(&["--resume-session", "WFS-test-the-calculator"])
        .success();
    assert!(
        session_subjects(&env)[0].contains("completed"),
        "{:?}",
        session_subjects(&env)
    );
}

/// Case 1, fifth form: the fix writes no plugin itself; the code under
/// test does when the retest imports it (no line of it names the runner:
/// the plugin is base64). The test run that installed it pauses the
/// session before any later run can load it; nothing is committed.
#[test]
fn code_under_test_that_installs_a_plugin_when_run_pauses_the_session() {
    let (env, _) = venv_project("venv-writer");
    paused_for_the_plugin(&env, "the test run");
}

/// Case 1, second form: the project loads a plugin of its own when the
/// session starts (`-p calc.plugin`); the agent rewrites that module. The
/// session's record of its test infrastructure names the module, so the
/// edit is an infrastructure edit although no configuration changed.
#[test]
fn a_rewritten_plugin_the_project_already_loads_is_rejected() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.write(
        "pyproject.toml",
        "[project]\nname = \"py-calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\naddopts = \"-p calc.plugin\"\n",
    );
    env.write(
        "calc/plugin.py",
        "def pytest_report_header(config):\n    return \"calc\"\n",
    );
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&one_attempt("plugin-edit")).unwrap(),
    );
    env.git_init_commit();
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert!(
        state["test_infrastructure"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "calc/plugin.py"),
        "{state:#}"
    );
    assert_eq!(
        env.read("calc/plugin.py"),
        "def pytest_report_header(config):\n    return \"calc\"\n"
    );
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["outcome"], "rejected", "{entry:#}");
    assert!(
        entry["test_edits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "infrastructure" && e["file"] == "calc/plugin.py"),
        "{entry:#}"
    );
}

/// Case 4: the expected value of a failing test is rewritten to match the
/// bug (`is True` → `is False`) with the default policies. That is a
/// weakening: rejected from the diff, the test file put back, no commit,
/// and the terminal says why.
#[test]
fn a_rewritten_expected_value_of_a_failing_test_is_rejected() {
    let env = Env::new();
    env.cycle_project("py-calc", &one_attempt("weaken"));
    let test_file = env.read("tests/test_auth.py");
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert!(
        text.contains("test_validate_token: check changed or removed"),
        "{text}"
    );
    assert_eq!(env.read("tests/test_auth.py"), test_file);
    assert_eq!(runs(&env), 1);
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["outcome"], "rejected", "{entry:#}");
    assert!(
        entry["test_edits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "weakened"),
        "{entry:#}"
    );
    // The status says it too.
    let status = env.wfx().arg("status").output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("rejected"), "{status}");
}

/// With `test_edits.weaken: flag` the same fix is kept, and the flagged
/// edit is on the terminal (not just "the fix changed test files").
#[test]
fn a_flagged_weakening_is_named_on_the_terminal() {
    let env = Env::new();
    let mut config = one_attempt("weaken");
    config["cycle"]["test_edits"] = json!({"weaken": "flag"});
    env.cycle_project("py-calc", &config);
    env.plan_calculator();
    let run = env.cycle(&[]).get_output().clone();
    let text =
        String::from_utf8_lossy(&run.stderr).into_owned() + &String::from_utf8_lossy(&run.stdout);
    assert!(
        text.contains("flagged") && text.contains("test_validate_token"),
        "{text}"
    );
}

/// Case 7, second half: a fix call that times out after a harmless half
/// edit is not committed: the edit is put back, the attempt counts, and
/// nothing of it is in history.
#[test]
fn a_timed_out_half_edit_is_put_back_and_not_committed() {
    let env = Env::new();
    let mut config = one_attempt("timeout-half");
    config["agents"]["definitions"]["fixer"]["timeout_s"] = json!(2);
    env.cycle_project("py-calc", &config);
    let ops = env.read("calc/ops.py");
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert_eq!(env.read("calc/ops.py"), ops);
    let subjects = session_subjects(&env);
    assert!(
        subjects.iter().all(|s| !s.contains("iteration 1")),
        "{subjects:?}"
    );
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["timed_out"], true, "{entry:#}");
    assert_eq!(entry["commit"], Value::Null, "{entry:#}");
}
