//! Issue #27, the verdict is reproducible from the commit (DESIGN.md
//! §11.1): the run that accepts a fix and the run that completes a session
//! execute on the committed tree in a clean checkout outside the project.
//! End to end on fresh copies of the sample projects (pytest, `node
//! --test`, cargo).

use crate::common;

use crate::common::{Env, fixer_config, out_text};
use serde_json::{Value, json};

const ID: &str = "WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn runs(state: &Value) -> Vec<Value> {
    state["iterations"].as_array().unwrap().clone()
}

/// The last run completed the session on a sealed checkout of a commit that
/// exists in the repository, and no checkout or worktree is left behind.
fn assert_completed_sealed(env: &Env) {
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let last = runs(&state).last().cloned().unwrap();
    assert_eq!(last["scope"], "full", "{state:#}");
    assert_eq!(last["sealed"], true, "{state:#}");
    let commit = last["commit"].as_str().unwrap();
    env.git(&["cat-file", "-e", &format!("{commit}^{{commit}}")]);
    assert_eq!(
        env.git(&["worktree", "list"]).lines().count(),
        1,
        "a worktree is registered"
    );
    assert!(
        !wfx::git::checkout_dir(&env.root, ID).exists(),
        "a sealed checkout of this project is left behind"
    );
}

/// pytest: a correct fix completes on a sealed run, which the terminal and
/// the record name.
#[test]
fn a_python_fix_is_accepted_on_a_sealed_run_of_its_commit() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("sealed on"), "{text}");
    assert_completed_sealed(&env);
}

/// Case 3: the fix lives in a module the agent added to `.gitignore`. The
/// work tree passes; the sealed run of the commit cannot import it. The
/// attempt fails, the session does not complete with it, and the record,
/// the terminal and the report name the file.
#[test]
fn a_fix_hidden_in_an_ignored_file_fails_its_sealed_run_and_the_file_is_named() {
    let env = Env::new();
    let mut config = fixer_config("ignored-fix");
    config["cycle"] = json!({"max_iterations": 1});
    env.cycle_project("py-calc", &config);
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert!(text.contains("calc/_divfix.py (git-ignored)"), "{text}");
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    let sealed: Vec<Value> = runs(&state)
        .into_iter()
        .filter(|r| r["sealed"] == true)
        .collect();
    assert!(!sealed.is_empty(), "{state:#}");
    assert!(
        sealed[0]["outside_commit"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "calc/_divfix.py (git-ignored)"),
        "{state:#}"
    );
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_ne!(entry["outcome"], "success", "{entry:#}");
    assert!(
        entry["outside_commit"]
            .to_string()
            .contains("calc/_divfix.py"),
        "{entry:#}"
    );
    // A clone of what wfx committed has no passing suite either: the code
    // at HEAD does not import a missing module.
    let ops = env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(!ops.contains("_divfix"), "{ops}");
    env.wfx()
        .args(["report", ID, "--html", "report.html"])
        .assert()
        .success();
    let html = std::fs::read_to_string(env.root.join("report.html")).unwrap();
    assert!(
        html.contains("outside the commit: calc&#x2f;_divfix.py (git-ignored)"),
        "the report does not name the file"
    );
}

/// A suite that already passes in the work tree is confirmed on a sealed
/// run before the session completes.
#[test]
fn a_passing_suite_completes_only_on_a_sealed_confirmation() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.write(
        "calc/ops.py",
        &std::fs::read_to_string(env.root.join("calc/ops.py"))
            .unwrap()
            .replace("    return a / b", "    return None if b == 0 else a / b"),
    );
    env.write(
        "calc/auth.py",
        &std::fs::read_to_string(env.root.join("calc/auth.py"))
            .unwrap()
            .replace("len(body) == 6", "len(body) == 8"),
    );
    env.write(".workflow/wfx.json", "{}");
    env.git_init_commit();
    env.plan_calculator();
    env.cycle(&[]).success();
    assert_completed_sealed(&env);
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(runs(&state).len(), 2, "{state:#}");
    assert_eq!(runs(&state)[0]["sealed"], Value::Null);
}

/// A small ignored file that was there when the session started (a
/// generated `_version.py`) takes part in the sealed run while it still
/// holds what it held then.
#[test]
fn an_ignored_file_there_at_the_start_takes_part_in_the_sealed_run() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.write("calc/_version.py", "VERSION = \"1.2.3\"\n");
    env.write(
        "calc/__init__.py",
        &format!(
            "{}from calc._version import VERSION\n",
            std::fs::read_to_string(env.root.join("calc/__init__.py")).unwrap()
        ),
    );
    env.write(
        ".gitignore",
        &format!(
            "{}calc/_version.py\n",
            std::fs::read_to_string(env.root.join(".gitignore")).unwrap()
        ),
    );
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string(&fixer_config("fix-all")).unwrap(),
    );
    env.git_init_commit();
    assert!(
        !env.git(&["ls-files"]).contains("_version.py"),
        "the fixture's _version.py must be ignored"
    );
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    assert!(out_text(&run).contains("Completed"), "{}", out_text(&run));
    assert_completed_sealed(&env);
}

/// `node --test`: the sealed run of a correct fix completes the session.
#[test]
fn a_node_fix_is_accepted_on_a_sealed_run() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    let run = env.cycle(&[]).success();
    assert!(out_text(&run).contains("sealed on"), "{}", out_text(&run));
    assert_completed_sealed(&env);
}

/// cargo: the session completes on a sealed run (which builds into the
/// project's `target/`: `engine::real`'s `sealed_env` test).
#[test]
fn a_rust_fix_is_accepted_on_a_sealed_run() {
    let env = Env::new();
    env.cycle_project("rust-calc", &fixer_config("fix-all"));
    env.wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("sealed on"), "{text}");
    assert_completed_sealed(&env);
}

/// A checkout a killed run left (its files stale) is removed by the next
/// run before anything else.
#[test]
fn a_checkout_left_by_a_killed_run_is_swept_on_resume() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    // A checkout as a killed run leaves it.
    let dir = wfx::git::checkout_dir(&env.root, ID);
    std::fs::create_dir_all(dir.join("calc")).unwrap();
    std::fs::write(dir.join("calc/ops.py"), "stale").unwrap();
    env.cycle(&[]).success();
    assert!(!dir.exists(), "the stale checkout was not removed");
    assert_completed_sealed(&env);
}

/// `wfx test --sealed` runs HEAD in a clean checkout: an uncommitted fix
/// passes `wfx test` and takes no part in the sealed run; outside git it
/// is a usage error naming why.
#[test]
fn wfx_test_sealed_runs_head_and_not_the_work_tree() {
    let env = Env::new();
    env.cycle_project("py-calc", &json!({}));
    let fixed = std::fs::read_to_string(env.root.join("calc/ops.py"))
        .unwrap()
        .replace("    return a / b", "    return None if b == 0 else a / b");
    env.write("calc/ops.py", &fixed);
    let in_place = common::wfx_out(&env, &["test", "--json"]);
    let sealed = common::wfx_out(&env, &["test", "--sealed", "--json"]);
    let failed = |out: &common::Out| -> u64 {
        serde_json::from_str::<Value>(&out.stdout).unwrap()["failed"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(failed(&in_place), 1, "{}", in_place.stderr);
    assert_eq!(failed(&sealed), 2, "{}", sealed.stderr);
    assert!(!wfx::git::checkout_dir(&env.root, "wfx-test").exists());

    let bare = Env::new();
    bare.copy_fixture_project("py-calc");
    let out = common::wfx_out(&bare, &["test", "--sealed"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--sealed: the project is not in a git repository"),
        "{}",
        out.stderr
    );
}
