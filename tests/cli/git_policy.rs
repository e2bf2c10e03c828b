//! The commit policy: `git.artifacts` = `summary` (the default) | `all` |
//! `none` decides which session files wfx's commits hold, `git.squash`
//! folds the session's commits into one at completion. Rollbacks work under
//! every policy, and a squash never rewrites a commit that is not wfx's.

use crate::common;

use common::{Env, fixer_config};
use predicates::prelude::*;

const ID: &str = "WFS-test-the-calculator";

/// `fixer` as the fix agent, with `git` merged into the config.
fn config(fixer: &str, git: serde_json::Value) -> serde_json::Value {
    let mut c = fixer_config(fixer);
    c["git"] = git;
    c
}

/// [`config`] where every fix is judged on the full suite, so a fix that
/// helps nothing is committed, found to regress and rolled back (with
/// progressive retests it is put back uncommitted after its first tier).
fn rollback_config(fixer: &str, git: serde_json::Value) -> serde_json::Value {
    let mut c = config(fixer, git);
    c["cycle"] = serde_json::json!({"progressive": false});
    c
}

/// Every path any commit of HEAD's history touched.
fn committed_paths(env: &Env) -> Vec<String> {
    let mut paths: Vec<String> = env
        .git(&["log", "--name-only", "--format="])
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn workflow_paths(env: &Env) -> Vec<String> {
    committed_paths(env)
        .into_iter()
        .filter(|p| p.starts_with(".workflow/"))
        .collect()
}

#[test]
fn artifacts_none_commits_no_session_file_and_rollback_still_works() {
    let env = Env::new();
    env.cycle_project(
        "node-calc",
        &rollback_config("break-more", serde_json::json!({"artifacts": "none"})),
    );
    env.plan_calculator();
    env.cycle(&[])
        .success()
        .stderr(predicate::str::contains("Rolled back iteration 1"));
    // The config file was committed by the test set-up; nothing else.
    assert_eq!(workflow_paths(&env), [".workflow/wfx.json"]);
    let subjects = env.subjects();
    assert!(
        subjects
            .iter()
            .any(|s| s.starts_with("test-cycle: rollback iteration 1")),
        "{subjects:?}"
    );
    // The rollback restored the code, then iteration 2 fixed it.
    assert!(env.read("src/math.js").contains("values[i] > best"));
    // Nothing of the session shows up as untracked either; only the
    // archive manifest (shared by every session) is left uncommitted.
    assert_eq!(
        env.git(&["status", "--porcelain", "-uall"]),
        "?? .workflow/archives/manifest.json\n"
    );
    assert!(
        env.root
            .join(".workflow/archives")
            .join(ID)
            .join(".process/fix-history.json")
            .is_file()
    );
}

/// The default footprint: state, plan, task files, summaries and fix
/// history; every run's results, prompts and analyses stay on disk.
#[test]
fn by_default_only_state_plan_tasks_summaries_history_are_committed() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("break-more"));
    env.plan_calculator();
    env.cycle(&[]).success();
    let archived = format!(".workflow/archives/{ID}/");
    let paths = workflow_paths(&env);
    let allowed = |p: &str| {
        let Some(rest) = p
            .strip_prefix(&archived)
            .or_else(|| p.strip_prefix(&format!(".workflow/active/{ID}/")))
        else {
            return p == ".workflow/wfx.json" || p == ".workflow/archives/manifest.json";
        };
        [
            ".gitignore",
            "workflow-session.json",
            "IMPL_PLAN.md",
            "TODO_LIST.md",
            ".process/iteration-state.json",
            ".process/fix-history.json",
            ".process/failure-report.md",
        ]
        .contains(&rest)
            || rest.starts_with(".summaries/")
            || rest.starts_with(".task/")
    };
    let extra: Vec<&String> = paths.iter().filter(|p| !allowed(p)).collect();
    assert!(extra.is_empty(), "committed beyond the summary: {extra:?}");
    for want in [
        "workflow-session.json",
        ".process/fix-history.json",
        ".process/iteration-state.json",
        "IMPL_PLAN.md",
        ".task/IMPL-002.json",
        ".task/IMPL-fix-1.json",
    ] {
        assert!(
            paths.contains(&format!("{archived}{want}")),
            "{want} not committed: {paths:?}"
        );
    }
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with(&format!("{archived}.summaries/"))),
        "{paths:?}"
    );
    // Every run's results, the prompts and the analyses stay on disk,
    // uncommitted and ignored.
    for kept in [
        ".process/iteration-1-results.json",
        ".process/iteration-1-analysis.md",
        ".process/test-results.json",
    ] {
        assert!(env.root.join(&archived).join(kept).is_file(), "{kept}");
    }
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

#[test]
fn artifacts_all_still_commits_the_session_directory() {
    let env = Env::new();
    env.cycle_project(
        "node-calc",
        &config("fix-all", serde_json::json!({"artifacts": "all"})),
    );
    env.plan_calculator();
    env.cycle(&[]).success();
    let paths = workflow_paths(&env);
    for want in [".task/IMPL-002.json", ".process/iteration-1-results.json"] {
        assert!(
            paths.contains(&format!(".workflow/archives/{ID}/{want}")),
            "{want}: {paths:?}"
        );
    }
}

/// A fix agent that empties the session's `.gitignore` (so the raw logs,
/// which keep unredacted output, would be committed) has edited a wfx
/// file: it is put back before any commit and the attempt says so.
#[test]
fn an_agent_cannot_unignore_the_session_logs() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("unignore-logs"));
    env.plan_calculator();
    env.cycle(&[]).success();
    let committed = committed_paths(&env);
    assert!(
        !committed.iter().any(|p| p.ends_with(".log")),
        "{committed:?}"
    );
    let history = env.json(&format!(
        ".workflow/archives/{ID}/.process/fix-history.json"
    ));
    assert_eq!(
        history["entries"][0]["tamper"], "session_edited",
        "{history}"
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

/// A suite that already passes: nothing to fix, so the session's history
/// is one small record (its manifest entry), and `git status` stays clean.
#[test]
fn a_session_that_fixed_nothing_commits_only_its_manifest_entry() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    // Fix the calculator's bugs before the session starts.
    env.fix_node_calc();
    env.git(&["commit", "-qam", "fixed"]);
    env.plan_calculator();
    env.cycle(&[]).success();
    let subjects = env.subjects();
    assert!(subjects[0].contains("0 fix attempt(s)"), "{subjects:?}");
    assert_eq!(
        env.git(&["show", "--name-only", "--format=", "HEAD"]),
        ".workflow/archives/manifest.json\n"
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    // Everything stays on disk.
    assert!(
        env.root
            .join(format!(".workflow/archives/{ID}/.task/IMPL-002.json"))
            .is_file()
    );
}

#[test]
fn squash_folds_the_sessions_commits_into_one_that_lists_the_iterations() {
    let env = Env::new();
    env.cycle_project(
        "node-calc",
        &rollback_config("break-more", serde_json::json!({"squash": true})),
    );
    env.plan_calculator();
    env.cycle(&[])
        .success()
        .stderr(predicate::str::contains("git.squash: 4 commits"));
    let subjects = env.subjects();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert_eq!(subjects[1], "initial");
    assert!(subjects[0].contains("squashed"), "{subjects:?}");
    let body = env.git(&["show", "-s", "--format=%B", "HEAD"]);
    assert!(body.contains("- iteration 1: conservative fix"), "{body}");
    assert!(body.contains("rolled_back"), "{body}");
    assert!(body.contains("- iteration 2: surgical fix"), "{body}");
    assert!(body.contains(&format!("Wfx-Session: {ID}")), "{body}");
    assert!(body.contains("Wfx-Kind: final"), "{body}");
    // The squashed commit holds the session's net change, the tree is clean.
    assert!(env.read("src/math.js").contains("values[i] > best"));
    let net = env.git(&["diff", "--stat", "HEAD~1", "HEAD", "--", "src"]);
    assert!(net.contains("src/math.js"), "{net}");
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    // No ref of the session is left.
    assert_eq!(env.git(&["for-each-ref", "refs/wfx/"]), "");
}

#[test]
fn squash_refuses_when_the_user_committed_during_the_session() {
    let env = Env::new();
    env.cycle_project("node-calc", &serde_json::json!({"git": {"squash": true}}));
    env.plan_calculator();
    let manual = ["--fix-agent", "manual"];
    // Manual fixes: wfx waits for the person (exit 3) between iterations.
    env.cycle(&manual).code(3);
    let math = env
        .read("src/math.js")
        .replace("values[i] < best", "values[i] > best");
    env.write("src/math.js", &math);
    env.cycle(&manual).code(3);
    // The user commits their own work while the session waits.
    env.write("NOTES.md", "my own work\n");
    env.git(&["add", "NOTES.md"]);
    env.git(&["commit", "-q", "-m", "user: notes"]);
    let strings = env
        .read("src/strings.js")
        .replace(".replace(' ', '-')", ".replace(/\\s+/g, '-')");
    env.write("src/strings.js", &strings);
    env.cycle(&manual)
        .success()
        .stderr(predicate::str::contains(
            "git.squash: the session's commits are left as they are: commit",
        ))
        .stderr(predicate::str::contains("(user: notes) is not wfx's"));
    let subjects = env.subjects();
    assert!(
        subjects.contains(&"user: notes".to_string()),
        "{subjects:?}"
    );
    assert_eq!(
        subjects
            .iter()
            .filter(|s| s.starts_with("test-cycle: iteration"))
            .count(),
        2,
        "{subjects:?}"
    );
}

#[test]
fn a_bad_policy_value_names_the_file_and_field() {
    let env = Env::new();
    env.cycle_project(
        "node-calc",
        &config("fix-all", serde_json::json!({"artifacts": "some"})),
    );
    let out = env
        .wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(".workflow/wfx.json"), "{stderr}");
    assert!(stderr.contains("/git/artifacts"), "{stderr}");
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string(&config("fix-all", serde_json::json!({"squash": "yes"}))).unwrap(),
    );
    let out = env
        .wfx_live()
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/git/squash"), "{stderr}");
}

/// A project for `wfx run` with `git.squash` = `squash`: a test script
/// that passes once `fixed` exists, the workflow `wf`, `.workflow/`
/// ignored; committed.
fn squash_run_project(env: &Env, wf: &str, squash: bool) {
    env.write(
        "check.sh",
        "#!/bin/sh\nif [ -f fixed ]; then echo ok; exit 0; fi\necho 'FAIL: still broken'\nexit 1\n",
    );
    env.write("wf.yml", wf);
    env.write(".gitignore", ".workflow/\n.interrupted\n");
    env.write(
        ".workflow/wfx.json",
        &serde_json::json!({"git": {"squash": squash}}).to_string(),
    );
    env.git_init_commit();
}

/// A `wfx run` workflow whose debug command commits its work and needs two
/// attempts; `squash` turns `git.squash` on or off.
fn committing_debug_loop(squash: bool) -> Env {
    let env = Env::new();
    squash_run_project(
        &env,
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: echo ${test.attempt} >> notes.txt && if [ ${test.attempt} = 2 ]; then touch fixed; fi && git add -A && git commit -qm \"debug attempt ${test.attempt}\"\n        commit_required: true\n        max_attempts: 3\n",
        squash,
    );
    env
}

#[test]
fn wfx_run_squashes_the_commits_of_its_steps_into_one() {
    let plain = committing_debug_loop(false);
    let out = common::wfx_out(&plain, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        plain.subjects(),
        ["debug attempt 2", "debug attempt 1", "initial"]
    );

    let env = committing_debug_loop(true);
    let base = env.git(&["rev-parse", "HEAD"]);
    let out = common::wfx_out(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("git.squash: 2 commits of this session folded into "),
        "{}",
        out.stderr
    );
    // One commit for the session, right on top of where it started.
    let subjects = env.subjects();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert_eq!(
        subjects[0],
        "workflow: wf completed (1 step(s), 2 debug attempt(s), squashed)"
    );
    assert_eq!(env.git(&["rev-parse", "HEAD~1"]), base);
    let body = env.git(&["show", "-s", "--format=%B", "HEAD"]);
    assert!(body.contains("- step 1 (test): "), "{body}");
    assert!(body.contains("Wfx-Session: WFS-run-wf"), "{body}");
    assert!(body.contains("Wfx-Kind: final"), "{body}");
    // Like every commit wfx makes, it carries the session's `Wfx-Run`.
    let session: serde_json::Value =
        serde_json::from_str(&env.read(".workflow/archives/WFS-run-wf/workflow-session.json"))
            .unwrap();
    let run = session["git"]["run_id"].as_str().expect("a run id");
    assert!(body.contains(&format!("Wfx-Run: {run}\n")), "{body}");
    // The squash changed no file: HEAD's tree and the work tree are those
    // of the same run without it.
    assert_eq!(
        env.git(&["rev-parse", "HEAD^{tree}"]),
        plain.git(&["rev-parse", "HEAD^{tree}"])
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    assert_eq!(env.read("notes.txt"), "1\n2\n");
    // The folded commits were exactly the steps' two.
    assert_eq!(
        env.git(&["log", "-1", "--format=%s", "main@{1}"]),
        "debug attempt 2\n"
    );
}

/// A `wfx run` step that commits everything (`git add -A`) under
/// `git.artifacts` = `artifacts`: the session files it committed.
fn run_session_files_a_step_commits(artifacts: &str) -> Vec<String> {
    let env = Env::new();
    env.write(
        "wf.yml",
        "commands:\n  - shell: echo made > made.txt\n  - shell: git add -A && git commit -qm 'step commits all'\n",
    );
    env.write(
        ".workflow/wfx.json",
        &serde_json::json!({"git": {"artifacts": artifacts}}).to_string(),
    );
    env.git_init_commit();
    let out = common::wfx_out(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let paths = env.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert!(paths.contains("made.txt"), "{paths}");
    paths
        .lines()
        .filter(|p| p.starts_with(".workflow/"))
        .map(|p| {
            p.trim_start_matches(".workflow/active/WFS-run-wf/")
                .to_string()
        })
        .collect()
}

#[test]
fn wfx_run_steps_commit_the_session_files_the_policy_allows() {
    assert_eq!(
        run_session_files_a_step_commits("none"),
        Vec::<String>::new()
    );
    let summary = run_session_files_a_step_commits("summary");
    assert_eq!(
        summary,
        [
            ".gitignore",
            ".process/run-state.json",
            "workflow-session.json",
            "workflow.yml"
        ],
        "{summary:?}"
    );
    let all = run_session_files_a_step_commits("all");
    assert!(
        all.iter().any(|p| p.starts_with(".process/step-01/")),
        "{all:?}"
    );
}

/// A commit of yours while a `wfx run` with `git.squash` is paused: the
/// resume sees `HEAD` moved and the squash leaves every commit alone.
#[test]
fn wfx_run_does_not_squash_over_a_commit_made_while_it_was_paused() {
    let env = Env::new();
    // Attempt 1 commits; attempt 2 interrupts wfx the first time, then fixes.
    env.write(
        "debug.sh",
        "#!/bin/sh\necho \"$1\" >> notes.txt\ngit add notes.txt && git commit -qm \"debug attempt $1\"\nif [ \"$1\" = 2 ] && [ ! -f .interrupted ]; then touch .interrupted; kill -INT $PPID; sleep 30; fi\nif [ \"$1\" = 2 ]; then touch fixed; git add fixed && git commit -qm fixed; fi\n",
    );
    squash_run_project(
        &env,
        "commands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: exec sh debug.sh ${test.attempt}\n        max_attempts: 3\n",
        true,
    );
    let out = common::wfx_out(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    env.write("NOTES.md", "my own work\n");
    env.git(&["add", "NOTES.md"]);
    env.git(&["commit", "-q", "-m", "user: notes"]);
    let out = common::wfx_out(&env, &["run", "wf.yml", "--resume"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("git.squash: the session's commits are left as they are: HEAD moved from "),
        "{}",
        out.stderr
    );
    let subjects = env.subjects();
    assert!(
        subjects.contains(&"user: notes".to_string()),
        "{subjects:?}"
    );
    assert!(
        !subjects.iter().any(|s| s.contains("squashed")),
        "{subjects:?}"
    );
}
