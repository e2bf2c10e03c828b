//! What a new user meets before the loop starts (DESIGN.md §10.7, issue
//! #20 items 1 and 2): every check that can refuse a run refuses before
//! phase 1 writes anything, and a project without tests is told so instead
//! of being sent to a fix agent.

use crate::common;

use common::{Env, fixer_config};
use predicates::prelude::*;

/// A Python project with one passing function and no tests yet.
fn untested(env: &Env, config: Option<serde_json::Value>) {
    env.write("lib.py", "def double(x):\n    return 2 * x\n");
    env.write(
        "pyproject.toml",
        "[project]\nname = \"lib\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    if let Some(config) = config {
        env.write(
            ".workflow/wfx.json",
            &serde_json::to_string_pretty(&config).unwrap(),
        );
    }
    env.git_init_commit();
}

/// Nothing of a session exists: no `active/`, no `archives/`.
fn no_session_written(env: &Env) {
    assert!(!env.root.join(".workflow/active").exists());
    assert!(!env.root.join(".workflow/archives").exists());
}

#[test]
fn a_dirty_tree_is_refused_before_anything_is_planned() {
    let env = Env::new();
    untested(&env, None);
    env.write(
        "tests/test_lib.py",
        "from lib import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    );
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "tests"]);
    env.write(
        "lib.py",
        "def double(x):\n    return 2 * x\n# work in progress\n",
    );
    env.wfx_live()
        .args(["test-fix-gen", "Test the lib"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("created successfully").not())
        .stderr(predicate::str::contains(
            "1 tracked file(s) are modified or staged outside .workflow/: lib.py",
        ));
    no_session_written(&env);
    // The same request with --plan-only plans: nothing will be committed.
    env.wfx_live()
        .args(["test-fix-gen", "Test the lib", "--plan-only"])
        .assert()
        .success();
    assert!(env.root.join(".workflow/active/WFS-test-the-lib").is_dir());
    assert!(env.read("lib.py").ends_with("# work in progress\n"));
}

#[test]
fn no_test_command_or_a_missing_runner_is_refused_before_anything_is_planned() {
    let env = Env::new();
    env.write("notes.txt", "no code here\n");
    env.git_init_commit();
    env.wfx_live()
        .args(["test-fix-gen", "Test it"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no test command detected in .: looked for Cargo.toml, pyproject.toml",
        ))
        .stderr(predicate::str::contains(
            "Set one in .workflow/wfx.json, e.g.",
        ));
    no_session_written(&env);

    let env = Env::new();
    untested(
        &env,
        Some(serde_json::json!({"test": {"command": "wfx-no-such-runner --all"}})),
    );
    env.wfx_live()
        .args(["test-fix-gen", "Test it"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the test command `wfx-no-such-runner --all` needs `wfx-no-such-runner`, which is not on PATH",
        ));
    no_session_written(&env);
}

#[test]
fn a_project_without_tests_is_told_so_and_never_reaches_the_fix_agent() {
    let env = Env::new();
    untested(&env, Some(fixer_config("fix-all")));
    env.wfx_live()
        .arg("test")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("no tests found"))
        .stdout(predicate::str::contains(
            "Write tests first, or set `agents.test_gen`",
        ))
        .stdout(predicate::str::contains("pass rate").not());

    env.wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["test-fix-gen", "Test the lib"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "no tests found. Write tests first",
        ))
        .stdout(predicate::str::contains(
            "Continue with: wfx test-cycle-execute --resume-session=WFS-test-the-lib",
        ))
        // The run is not told as a failing test (the command line).
        .stderr(predicate::str::contains(
            "Iteration 1 · no test ran · full suite",
        ))
        .stderr(predicate::str::contains("1 failing").not());
    let active = ".workflow/active/WFS-test-the-lib/.process";
    let state = env.json(&format!("{active}/iteration-state.json"));
    assert_eq!(state["next_action"], "run_tests");
    // No fix attempt: fix history has no entry (or does not exist yet).
    if env.root.join(active).join("fix-history.json").exists() {
        let history = env.json(&format!("{active}/fix-history.json"));
        assert_eq!(history["entries"], serde_json::json!([]), "{history}");
    }
    assert!(
        !env.root
            .join(".workflow/active/WFS-test-the-lib/.task/IMPL-fix-1.json")
            .exists()
    );
    // The run's summary does not list the command as a failing test.
    let summary =
        env.read(".workflow/active/WFS-test-the-lib/.summaries/iteration-summaries/iteration-1.md");
    assert!(
        summary.contains("- Run: full · no test ran: `"),
        "{summary}"
    );
    assert!(!summary.contains("Failing tests"), "{summary}");
    // `wfx status` says why the session waits, not a guess, and the run's
    // row counts no test, not the command as one failing test.
    env.wfx()
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains("0/1").not())
        .stdout(predicate::str::contains("no test ran"))
        .stdout(predicate::str::contains(
            "Paused: no tests found. Write tests first",
        ))
        .stdout(predicate::str::contains("interrupted, or an agent").not())
        // No fix attempt was made: the iteration line says so, and why.
        .stdout(predicate::str::contains(
            "Iterations: no fix attempt made (no test ran) · at most 10 fix attempts",
        ))
        .stdout(predicate::str::contains("1 of at most").not())
        .stdout(predicate::str::contains("latest 0.0%").not());

    // The person writes a test, commits it, and resumes.
    env.write(
        "tests/test_lib.py",
        "from lib import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    );
    env.git(&["add", "tests"]);
    env.git(&["commit", "-qm", "a test"]);
    env.wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["test-cycle-execute", "--resume-session", "WFS-test-the-lib"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Session WFS-test-the-lib completed: 100.0% on the full suite after 0 fix attempt(s)",
        ));
    env.wfx()
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Iterations: no fix attempt made · at most 10 fix attempts",
        ));
}
