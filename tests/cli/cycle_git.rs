//! Phase 5 and git (DESIGN.md §5.5): the dirty-tree refusal, `--allow-dirty`,
//! `--no-commit`, a project outside git and `--worktree`.

use crate::common;

use common::{Env, fixer_config};
use predicates::prelude::*;

const ID: &str = "WFS-test-the-calculator";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

/// No artifact (JSON or Markdown) of the session holds the project's
/// absolute path; raw outputs and logs are exempt (they are what the tools
/// printed, and never committed).
fn assert_no_absolute_paths(env: &Env, dir: &str) {
    let root = env.root.display().to_string();
    for entry in walkdir::WalkDir::new(env.root.join(dir)) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".json") || name.ends_with(".md")) || name.contains("cli-output") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        assert!(
            !text.contains(&root),
            "absolute path in {}",
            entry.path().display()
        );
    }
}

#[test]
fn a_dirty_tree_is_refused_unless_allowed_and_never_committed() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    let pkg = env.read("package.json").replace("0.1.0", "0.1.1-dev");
    env.write("package.json", &pkg);
    env.cycle(&[])
        .code(2)
        .stderr(predicate::str::contains(
            "1 tracked file(s) are modified or staged outside .workflow/: package.json",
        ))
        .stderr(predicate::str::contains("--allow-dirty"));
    assert!(
        !env.root
            .join(".workflow/active")
            .join(ID)
            .join(".process/iteration-state.json")
            .exists(),
        "nothing started"
    );
    env.cycle(&["--allow-dirty"]).success();
    // The user's change is still there, uncommitted, and in no commit.
    assert_eq!(env.git(&["status", "--porcelain"]), " M package.json\n");
    assert!(env.read("package.json").contains("0.1.1-dev"));
    let in_commits = env.git(&["log", "--name-only", "--format=", "-2"]);
    assert!(
        !in_commits.lines().any(|l| l == "package.json"),
        "{in_commits}"
    );
    assert_eq!(env.subjects().len(), 3);
    assert_no_absolute_paths(&env, ARCHIVED);
}

#[test]
fn no_commit_changes_the_code_but_makes_no_commit() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    env.cycle(&["--no-commit"])
        .success()
        .stdout(predicate::str::contains("Final commit").not());
    assert_eq!(env.subjects(), ["initial"]);
    assert!(env.read("src/math.js").contains("values[i] > best"));
    assert!(env.root.join(ARCHIVED).is_dir());
    let s = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert_eq!(s["cycle_options"]["no_commit"], true);
}

#[test]
fn outside_git_the_loop_runs_without_commits_and_says_so() {
    let env = Env::new();
    env.copy_fixture_project("node-calc");
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string(&fixer_config("fix-all")).unwrap(),
    );
    env.plan_calculator();
    env.cycle(&[]).success().stderr(predicate::str::contains(
        "Not a git repository: running without commits",
    ));
    assert!(env.read("src/math.js").contains("values[i] > best"));
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    assert_eq!(state["status"], "completed");
    assert_eq!(
        state["iterations"][0]["fix_commit"],
        serde_json::Value::Null
    );
    assert_no_absolute_paths(&env, ARCHIVED);
}

#[test]
fn worktree_runs_the_session_on_its_own_branch_and_leaves_the_tree_alone() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.plan_calculator();
    env.cycle(&["--worktree"])
        .success()
        .stderr(predicate::str::contains(
            "Working in the git worktree .workflow/worktrees/WFS-test-the-calculator on branch wfx/WFS-test-the-calculator",
        ));
    // The user's checkout is untouched; the fix is on the session's branch.
    assert!(env.read("src/math.js").contains("values[i] < best"));
    assert_eq!(env.subjects(), ["initial"]);
    let branch = env.git(&["log", "--format=%s", "wfx/WFS-test-the-calculator"]);
    assert_eq!(
        branch,
        "test-cycle: iteration 1 - conservative strategy (pass: 77.7% → 100.0%)\ninitial\n"
    );
    let files = env.git(&[
        "show",
        "--name-only",
        "--format=",
        "wfx/WFS-test-the-calculator",
    ]);
    assert_eq!(files, "src/math.js\nsrc/strings.js\n");
    let s = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert_eq!(
        s["git"]["worktree"],
        ".workflow/worktrees/WFS-test-the-calculator"
    );
    assert_no_absolute_paths(&env, ARCHIVED);
}
