//! Issue #27, what an agent may not do to the repository or through links
//! (DESIGN.md §11.2, §11.3), end to end on a fresh copy of
//! `fixtures/projects/py-calc` with fixture agents that do the hostile
//! thing (docs/hardening.md).

use crate::common::{Env, fake_agent, fixer_config, fixture_text, out_text};
use serde_json::{Value, json};

const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

/// Every path of HEAD's tree that git records as a symlink.
fn committed_links(env: &Env) -> Vec<String> {
    env.git(&["ls-tree", "-r", "HEAD"])
        .lines()
        .filter(|l| l.starts_with("120000"))
        .map(str::to_string)
        .collect()
}

/// Case 5a: a read-only analysis replaces the tracked `calc/ops.py` with a
/// symlink to a file outside the project. wfx undoes the edit by putting
/// the file back in the link's place; the outside file keeps its bytes.
#[test]
fn an_analysis_that_links_a_tracked_file_outside_is_undone_without_writing_through_it() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({
            "cycle": {"max_iterations": 1},
            "agents": {
                "analysis": ["linker"],
                "fix": "fixer",
                "definitions": {
                    "linker": {"command": [fake_agent("link-analysis").display().to_string()]},
                    "fixer": {"command": [fake_agent("noop").display().to_string()]}
                }
            }
        }),
    );
    let outside = env.state_dir().join("outside.py");
    std::fs::write(&outside, "the user's own file\n").unwrap();
    env.plan_calculator();
    env.cycle(&[]).code(1);
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "the user's own file\n",
        "wfx wrote through the agent's link"
    );
    let ops = env.root.join("calc/ops.py");
    assert!(
        !std::fs::symlink_metadata(&ops)
            .unwrap()
            .file_type()
            .is_symlink(),
        "calc/ops.py is still a link"
    );
    assert_eq!(
        env.read("calc/ops.py"),
        fixture_text("py-calc", "calc/ops.py")
    );
    assert_eq!(env.git(&["status", "--porcelain", "--", "calc"]), "");
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let analysis: Vec<&Value> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["role"] == "analysis")
        .collect();
    assert!(!analysis.is_empty(), "{history:#}");
    for c in analysis {
        assert_eq!(c["tamper"], "tree_edited", "{c:#}");
    }
}

/// Case 5b: a fix agent replaces wfx's spares (and the names of the next
/// ones) with symlinks to a file outside the project, then fixes the code.
/// The outside file keeps its bytes, no symlink is committed, and the call
/// is recorded as having edited the session.
#[test]
fn spares_replaced_by_links_are_never_written_through_nor_committed() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("link-spares"));
    let victim = env.state_dir().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("Completed"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(committed_links(&env), Vec::<String>::new());
    for entry in walkdir::WalkDir::new(env.root.join(".workflow")) {
        let entry = entry.unwrap();
        assert!(
            !entry.path_is_symlink(),
            "{} is a link",
            entry.path().display()
        );
    }
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(
        history["entries"][0]["tamper"], "session_edited",
        "{history:#}"
    );
}

/// What the `repo-tamper` agent changed is gone: its settings, its hook,
/// the test file it untracked.
fn assert_repository_put_back(env: &Env) {
    for key in ["core.hooksPath", "core.worktree"] {
        let (set, value, _) = env.git_try(&["config", "--get", key]);
        assert!(!set, "{key} is still set to {value}");
    }
    assert!(!env.root.join(".git/hooks/post-commit").exists());
    assert!(
        env.git(&["ls-files", "tests/test_auth.py"])
            .contains("tests/test_auth.py"),
        "the test file was untracked"
    );
}

/// Case 6: a fix agent sets `core.hooksPath` (to a hook that leaves a
/// marker on every commit), `core.worktree`, drops a hook into
/// `.git/hooks` and untracks a test file with `git rm --cached`, then
/// fixes the code. Every change to the repository is undone before wfx
/// commits: no hook of the agent runs, the settings are gone after the
/// session, the test file stays tracked, and the call is recorded.
#[test]
fn repository_settings_hooks_and_index_changed_by_an_agent_are_put_back() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("repo-tamper"));
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("Completed"), "{text}");
    let state = env.state_dir();
    assert!(
        !state.join("hook-ran").exists(),
        "the agent's hook ran on a wfx commit"
    );
    assert_repository_put_back(&env);
    assert!(
        env.git(&["ls-tree", "-r", "--name-only", "HEAD"])
            .contains("tests/test_auth.py")
    );
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(
        history["entries"][0]["tamper"], "repo_config_edited",
        "{history:#}"
    );
}

/// Case 2: a fix agent rewrites `.workflow/wfx.json` (test edits allowed,
/// the failing tests deselected) and deletes the failing tests. The config
/// is put back right after the call, the deletion is judged by the config
/// the run loaded (rejected), and a resume does not complete either.
#[test]
fn an_agent_editing_wfx_config_is_undone_and_judged_by_the_loaded_rules() {
    let env = Env::new();
    let mut config = fixer_config("config-edit");
    config["cycle"] = json!({"max_iterations": 1});
    env.cycle_project("py-calc", &config);
    let before = env.read(".workflow/wfx.json");
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    assert_eq!(env.read(".workflow/wfx.json"), before);
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_eq!(entry["tamper"], "config_edited", "{entry:#}");
    assert_eq!(entry["outcome"], "rejected", "{entry:#}");
    // The suggested way on does not complete with the tests gone.
    let again = env
        .cycle(&[
            "--resume-session=WFS-test-the-calculator",
            "--max-iterations=2",
        ])
        .get_output()
        .clone();
    let again = String::from_utf8_lossy(&again.stdout).into_owned()
        + &String::from_utf8_lossy(&again.stderr);
    assert!(!again.contains("Completed"), "{again}");
    assert_eq!(env.read(".workflow/wfx.json"), before);
    assert!(
        env.read("tests/test_ops.py")
            .contains("def test_divide_by_zero_returns_none")
    );
}

/// A fix agent replaces a test file with a symlink to a copy outside the
/// project that lacks the failing test: the file is put back as the
/// regular file it was before the tests run, the outside copy is left
/// alone, and the call is recorded (`link_planted`).
#[test]
fn a_test_file_replaced_by_a_link_outside_is_put_back_before_the_tests_run() {
    let env = Env::new();
    let mut config = fixer_config("link-tests");
    config["cycle"] = json!({"max_iterations": 1});
    env.cycle_project("py-calc", &config);
    env.plan_calculator();
    let run = env.cycle(&[]).code(1);
    let text = out_text(&run);
    assert!(!text.contains("Completed"), "{text}");
    let test_file = env.root.join("tests/test_auth.py");
    assert!(
        !std::fs::symlink_metadata(&test_file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        env.read("tests/test_auth.py"),
        fixture_text("py-calc", "tests/test_auth.py")
    );
    let outside = std::fs::read_to_string(env.state_dir().join("test_auth.py")).unwrap();
    assert!(!outside.contains("tok_deadbeef\") is True"), "{outside}");
    assert_eq!(committed_links(&env), Vec::<String>::new());
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    assert_eq!(
        history["entries"][0]["tamper"], "link_planted",
        "{history:#}"
    );
}

/// `wfx run FILE` with the fixture agents' state dir: exit 0.
fn run_workflow(env: &Env, file: &str) {
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["run", file])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// Case 6 through `wfx run`: the same agent as a test step's debug
/// command. Its changes to the repository are put back after the call and
/// the attempt records it, as the cycle's fix history does.
#[test]
fn repository_settings_changed_by_a_debug_command_of_wfx_run_are_put_back_and_recorded() {
    let env = Env::new();
    env.cycle_project(
        "py-calc",
        &json!({"agents": {"definitions": {"claude": {
            "command": [fake_agent("repo-tamper").display().to_string()]
        }}}}),
    );
    env.write(
        "wf.yml",
        "name: tamper\ncommands:\n  - test:\n      command: python3 -m pytest -q\n      on_failure:\n        claude: \"Fix the failing tests\"\n        max_attempts: 1\n",
    );
    env.git(&["add", "wf.yml"]);
    env.git(&["commit", "-q", "-m", "workflow"]);
    run_workflow(&env, "wf.yml");
    assert_repository_put_back(&env);
    let state = env.run_state("WFS-run-tamper");
    let debug = &state["steps"][0]["attempts"][0]["debug"];
    assert_eq!(debug["tamper"], "repo_config_edited", "{state:#}");
    assert!(state["steps"][0].get("tamper").is_none(), "{state:#}");

    // A `claude:` step of its own: recorded on the step.
    env.write(
        "step.yml",
        "name: tamper-step\ncommands:\n  - claude: \"Fix the failing tests\"\n",
    );
    env.git(&["add", "step.yml"]);
    env.git(&["commit", "-q", "-m", "step workflow"]);
    run_workflow(&env, "step.yml");
    let (set, value, _) = env.git_try(&["config", "--get", "core.hooksPath"]);
    assert!(!set, "core.hooksPath is still set to {value}");
    let state = env.run_state("WFS-run-tamper-step");
    assert_eq!(
        state["steps"][0]["tamper"], "repo_config_edited",
        "{state:#}"
    );
}
