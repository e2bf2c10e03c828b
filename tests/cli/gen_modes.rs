//! `wfx test-fix-gen` input modes, session mode, collisions, resuming an
//! interrupted run, coverage reports and gaps — run as a user would.

use crate::common;

use common::{Env, empty_path, redact_json, redact_text, tree};
use predicates::prelude::*;
use serde_json::Value;

fn read_json(env: &Env, rel: &str) -> Value {
    serde_json::from_str(&env.read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn run_gen(env: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = env.wfx();
    cmd.env("PATH", empty_path(env))
        .arg("test-fix-gen")
        .args(args);
    cmd.assert()
}

fn fixture(name: &str) -> Env {
    let env = Env::new();
    env.copy_fixture_project(name);
    env.git_init_commit();
    env
}

/// A finished implementation session as another tool might leave it.
fn make_impl_session(env: &Env, id: &str, task_status: &str, with_summary: bool) {
    let dir = format!(".workflow/active/{id}");
    env.write(
        &format!("{dir}/workflow-session.json"),
        &serde_json::json!({
            "session_id": id,
            "type": "workflow",
            "status": "completed",
            "description": "Harden password and token checks",
        })
        .to_string(),
    );
    env.write(
        &format!("{dir}/.task/IMPL-001.json"),
        &serde_json::json!({
            "id": "IMPL-001",
            "title": "Harden auth checks",
            "status": task_status,
            "result": {"files_modified": ["calc/auth.py", "/etc/passwd", "../outside.py"]},
        })
        .to_string(),
    );
    if with_summary {
        env.write(
            &format!("{dir}/.summaries/IMPL-001-summary.md"),
            "# IMPL-001 summary\n\nChanged `calc/auth.py` (token length) and added a case to tests/test_auth.py.\n",
        );
    }
}

#[test]
fn markdown_input_reads_the_file_and_focuses_on_what_it_names() {
    let env = fixture("py-calc");
    env.write(
        "docs/auth-tests.md",
        "# Auth hardening\n\nCover password rules and token validation in the auth module.\n",
    );
    run_gen(&env, &["docs/auth-tests.md", "--plan-only"]).success();
    let dir = ".workflow/active/WFS-test-auth-hardening";
    let s = read_json(&env, &format!("{dir}/workflow-session.json"));
    assert_eq!(s["description"], "Auth hardening");
    assert_eq!(s["input"], "docs/auth-tests.md");
    assert_eq!(s["mode"], "prompt");
    assert_eq!(
        env.read(&format!("{dir}/.process/requirements.md")),
        "# Auth hardening\n\nCover password rules and token validation in the auth module."
    );
    let pkg = read_json(&env, &format!("{dir}/.process/context-package.json"));
    assert_eq!(
        pkg["metadata"]["keywords"],
        serde_json::json!([
            "auth",
            "hardening",
            "password",
            "rules",
            "token",
            "validation"
        ])
    );
    // auth.py by its path; tests/test_auth.py by its path too.
    assert_eq!(
        pkg["focus_paths"],
        serde_json::json!(["calc/auth.py", "tests/test_auth.py"])
    );
    // The untracked requirements file is not part of the git-index listing.
    assert_eq!(pkg["project"]["file_listing"], "git-index");
    let task = read_json(&env, &format!("{dir}/.task/IMPL-001.json"));
    assert_eq!(
        task["flow_control"]["target_files"],
        serde_json::json!(["tests/test_auth.py"])
    );
    env.wfx()
        .args(["validate", "WFS-test-auth-hardening"])
        .assert()
        .success();
}

#[test]
fn missing_requirements_file_is_exit_2() {
    let env = fixture("py-calc");
    run_gen(&env, &["nope.md", "--plan-only"])
        .code(2)
        .stderr(predicate::str::contains(
            "requirements file nope.md not found",
        ));
    assert!(!env.root.join(".workflow").exists());
}

#[test]
fn session_mode_plans_tests_for_a_finished_implementation_session() {
    let env = fixture("py-calc");
    make_impl_session(&env, "WFS-user-auth", "completed", true);
    run_gen(&env, &["WFS-user-auth", "--plan-only"])
        .success()
        .stdout(
            predicate::str::contains("Mode: Session")
                .and(predicate::str::contains("Test Session: WFS-test-user-auth")),
        );
    let dir = ".workflow/active/WFS-test-user-auth";
    let s = read_json(&env, &format!("{dir}/workflow-session.json"));
    assert_eq!(s["mode"], "session");
    assert_eq!(s["source_session_id"], "WFS-user-auth");
    assert_eq!(
        s["description"],
        "Tests for WFS-user-auth: Harden password and token checks"
    );
    let pkg = read_json(&env, &format!("{dir}/.process/test-context-package.json"));
    // The same package where Claude-Code-Workflow looks for a session's
    // context (docs/interop.md); wfx reads only its own name.
    assert_eq!(
        read_json(&env, &format!("{dir}/.process/context-package.json")),
        pkg
    );
    let sc = &pkg["source_context"];
    assert_eq!(sc["source_session_id"], "WFS-user-auth");
    assert_eq!(sc["completed_tasks"], serde_json::json!(["IMPL-001"]));
    // Paths outside the project from the foreign task file are dropped.
    assert_eq!(
        sc["changed_files"],
        serde_json::json!(["calc/auth.py", "tests/test_auth.py"])
    );
    assert_eq!(
        sc["implementation_summaries"],
        serde_json::json!([{
            "task_id": "IMPL-001",
            "summary_path": ".workflow/active/WFS-user-auth/.summaries/IMPL-001-summary.md",
            "changed_files": ["calc/auth.py", "tests/test_auth.py"]
        }])
    );
    assert_eq!(pkg["focus_paths"][0], "calc/auth.py");
    env.wfx()
        .args(["validate", "WFS-test-user-auth"])
        .assert()
        .success();
    insta::assert_snapshot!(
        "session_mode_IMPL_PLAN.md",
        redact_text(&env.read(&format!("{dir}/IMPL_PLAN.md")))
    );
    let mut v = pkg.clone();
    redact_json(&mut v);
    insta::assert_snapshot!(
        "session_mode_test-context-package.json",
        serde_json::to_string_pretty(&v).unwrap()
    );
}

#[test]
fn session_mode_source_missing_or_unfinished_is_exit_2() {
    let env = fixture("py-calc");
    run_gen(&env, &["WFS-user-auth", "--plan-only"])
        .code(2)
        .stderr(predicate::str::contains("session WFS-user-auth not found"));
    make_impl_session(&env, "WFS-user-auth", "in_progress", false);
    run_gen(&env, &["WFS-user-auth", "--plan-only"])
        .code(2)
        .stderr(
            predicate::str::contains("source session WFS-user-auth has no completed tasks").and(
                predicate::str::contains(
                    "no summaries (no .workflow/active/WFS-user-auth/.summaries/*-summary.md)",
                ),
            ),
        );
    assert!(
        !env.root
            .join(".workflow/active/WFS-test-user-auth")
            .exists()
    );
    // A summary alone is enough.
    make_impl_session(&env, "WFS-user-auth", "in_progress", true);
    run_gen(&env, &["WFS-user-auth", "--plan-only"]).success();
}

#[test]
fn hostile_ids_and_unknown_fix_agents_are_rejected_before_anything_is_written() {
    let env = fixture("py-calc");
    run_gen(&env, &["WFS-../../etc", "--plan-only"])
        .code(2)
        .stderr(predicate::str::contains("invalid session id"));
    run_gen(&env, &["Test it", "--fix-agent", "nobody"])
        .code(2)
        .stderr(predicate::str::contains(
            "--fix-agent nobody: no such agent",
        ));
    assert!(!env.root.join(".workflow").exists());
}

#[test]
fn colliding_ids_get_suffixes_across_active_and_archives() {
    let env = fixture("node-calc");
    run_gen(&env, &["Test the calculator", "--plan-only"]).success();
    run_gen(&env, &["Test the calculator", "--plan-only"])
        .success()
        .stdout(predicate::str::contains(
            "Test Session: WFS-test-the-calculator-2",
        ));
    env.wfx()
        .args(["session", "complete", "WFS-test-the-calculator"])
        .assert()
        .success();
    run_gen(&env, &["Test the calculator", "--plan-only"])
        .success()
        .stdout(predicate::str::contains(
            "Test Session: WFS-test-the-calculator-3",
        ));
    assert!(
        env.root
            .join(".workflow/archives/WFS-test-the-calculator")
            .is_dir()
    );
    assert!(
        env.root
            .join(".workflow/active/WFS-test-the-calculator-3/.task/IMPL-002.json")
            .is_file()
    );
}

/// The session's files with what legitimately differs between runs made
/// equal: timestamps, `resumed_at`, the lock file.
fn comparable_tree(env: &Env, id: &str) -> std::collections::BTreeMap<String, String> {
    let dir = env.root.join(".workflow/active").join(id);
    tree(&dir)
        .into_iter()
        .filter(|(k, _)| k != ".lock")
        .map(|(k, v)| {
            let text = String::from_utf8(v).unwrap();
            let text = if k.ends_with(".json") {
                let mut j: Value = serde_json::from_str(&text).unwrap();
                if let Some(m) = j.as_object_mut() {
                    m.shift_remove("resumed_at");
                }
                redact_json(&mut j);
                serde_json::to_string_pretty(&j).unwrap()
            } else {
                redact_text(&text)
            };
            (k, text)
        })
        .collect()
}

/// Equal trees, or a failure naming the files that differ.
fn assert_same_tree(
    got: &std::collections::BTreeMap<String, String>,
    want: &std::collections::BTreeMap<String, String>,
    what: &str,
) {
    let names =
        |t: &std::collections::BTreeMap<String, String>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{what}: file lists differ");
    for (k, v) in want {
        assert_eq!(&got[k], v, "{what}: {k} differs");
    }
}

#[test]
fn interrupted_runs_resume_to_the_same_artifacts() {
    let reference = fixture("rust-calc");
    run_gen(&reference, &["Test the calculator", "--plan-only"]).success();
    let want = comparable_tree(&reference, "WFS-test-the-calculator");
    assert_eq!(want.len(), 11, "{:?}", want.keys().collect::<Vec<_>>());

    for stop in ["1", "2", "3"] {
        let env = fixture("rust-calc");
        run_gen(
            &env,
            &[
                "Test the calculator",
                "--plan-only",
                "--stop-after-phase",
                stop,
            ],
        )
        .success()
        .stdout(predicate::str::contains(format!(
            "Stopped after phase {stop}: WFS-test-the-calculator"
        )));
        let s = read_json(
            &env,
            ".workflow/active/WFS-test-the-calculator/workflow-session.json",
        );
        assert_eq!(s["status"], "planning");
        let n: usize = stop.parse().unwrap();
        for (i, p) in s["phases"].as_array().unwrap().iter().enumerate() {
            let want = if i < n { "completed" } else { "pending" };
            assert_eq!(
                p["status"],
                want,
                "phase {} after stopping at {stop}",
                i + 1
            );
        }
        assert!(
            !env.root
                .join(".workflow/active/WFS-test-the-calculator/.task")
                .exists()
        );
        run_gen(&env, &["WFS-test-the-calculator", "--plan-only"])
            .success()
            .stderr(predicate::str::contains(format!(
                "Continuing WFS-test-the-calculator at phase {}",
                n + 1
            )));
        assert_same_tree(
            &comparable_tree(&env, "WFS-test-the-calculator"),
            &want,
            &format!("resumed after phase {stop}"),
        );
        let s = read_json(
            &env,
            ".workflow/active/WFS-test-the-calculator/workflow-session.json",
        );
        assert!(s["resumed_at"].is_string());
    }
}

#[test]
fn resume_reruns_unfinished_phases_and_reuses_a_matching_context_package() {
    let env = fixture("py-calc");
    run_gen(&env, &["Test the calculator", "--plan-only"]).success();
    let dir = ".workflow/active/WFS-test-the-calculator";
    let want = comparable_tree(&env, "WFS-test-the-calculator");

    // A crash during phase 3: phase 3 in progress, later outputs gone.
    let session_file = format!("{dir}/workflow-session.json");
    let mut s = read_json(&env, &session_file);
    s["phases"][2]["status"] = "in_progress".into();
    s["phases"][3]["status"] = "pending".into();
    s["status"] = "planning".into();
    env.write(&session_file, &serde_json::to_string_pretty(&s).unwrap());
    for f in [
        ".process/TEST_ANALYSIS_RESULTS.md",
        "IMPL_PLAN.md",
        "TODO_LIST.md",
        "test-planning-notes.md",
    ] {
        std::fs::remove_file(env.root.join(dir).join(f)).unwrap();
    }
    std::fs::remove_dir_all(env.root.join(dir).join(".task")).unwrap();
    run_gen(&env, &["WFS-test-the-calculator", "--plan-only"]).success();
    assert_same_tree(
        &comparable_tree(&env, "WFS-test-the-calculator"),
        &want,
        "rerun from phase 3",
    );

    // Phase 2 again: the package whose session id matches is kept as is.
    let mut s = read_json(&env, &session_file);
    for i in 1..4 {
        s["phases"][i]["status"] = "pending".into();
    }
    env.write(&session_file, &serde_json::to_string_pretty(&s).unwrap());
    let pkg_file = format!("{dir}/.process/context-package.json");
    let mut pkg = read_json(&env, &pkg_file);
    pkg["reviewer_note"] = "kept".into();
    env.write(&pkg_file, &serde_json::to_string_pretty(&pkg).unwrap());
    run_gen(&env, &["WFS-test-the-calculator", "--plan-only", "--json"]).success();
    assert_eq!(read_json(&env, &pkg_file)["reviewer_note"], "kept");

    // Everything done: nothing runs, the summary is printed again.
    let out = run_gen(&env, &["WFS-test-the-calculator", "--plan-only", "--json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["phases_run"], serde_json::json!([]));
    assert_eq!(v["resumed"], true);
    assert_eq!(
        v["next_command"],
        "wfx test-cycle-execute --resume-session=WFS-test-the-calculator"
    );
}

#[test]
fn phase_5_flags_are_recorded_for_the_cycle() {
    let env = fixture("node-calc");
    let out = run_gen(
        &env,
        &[
            "Test the calculator",
            "--plan-only",
            "--no-commit",
            "--max-iterations",
            "3",
            "--fix-agent",
            "manual",
            "-y",
            "--json",
        ],
    )
    .success()
    .get_output()
    .stdout
    .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["next_command"],
        "wfx test-cycle-execute --resume-session=WFS-test-the-calculator --no-commit --fix-agent manual --max-iterations 3 -y"
    );
    let dir = ".workflow/active/WFS-test-the-calculator";
    let s = read_json(&env, &format!("{dir}/workflow-session.json"));
    assert_eq!(
        s["cycle_options"],
        serde_json::json!({"allow_dirty": false, "no_commit": true, "worktree": false, "fix_agent": "manual", "max_iterations": 3, "yes": true})
    );
    let t = read_json(&env, &format!("{dir}/.task/IMPL-002.json"));
    assert_eq!(t["meta"]["max_iterations"], 3);
    assert_eq!(t["meta"]["agent"], "manual");
    assert!(
        env.read(&format!("{dir}/IMPL_PLAN.md"))
            .contains("- Git: no commits")
    );
}

#[test]
fn without_git_the_tree_is_walked_skipping_dependencies() {
    let env = Env::new();
    env.copy_fixture_project("node-calc");
    env.write("node_modules/left-pad/index.js", "module.exports = 1;\n");
    env.write(".venv/pyvenv.cfg", "home = /usr\n");
    env.write(".venv/lib/x.py", "x = 1\n");
    env.write("venv2/pyvenv.cfg", "home = /usr\n");
    env.write("venv2/lib/y.py", "y = 1\n");
    run_gen(&env, &["Test the calculator", "--plan-only"]).success();
    let pkg = read_json(
        &env,
        ".workflow/active/WFS-test-the-calculator/.process/context-package.json",
    );
    assert_eq!(pkg["project"]["file_listing"], "walk");
    assert_eq!(pkg["project"]["files_scanned"], 5);
    let s = read_json(
        &env,
        ".workflow/active/WFS-test-the-calculator/workflow-session.json",
    );
    assert_eq!(
        s["git"],
        serde_json::json!({"base_commit": null, "branch": null})
    );
}

#[test]
fn gaps_get_priorities_and_suggested_files_and_coverage_reports_are_read() {
    let env = Env::new();
    env.copy_fixture_project("node-calc");
    env.write(
        "src/auth.js",
        "function login(user) { return !!user; }\nmodule.exports = { login };\n",
    );
    env.write("src/utils/format.js", "exports.pad = (s) => ' ' + s;\n");
    env.write(
        "src/report.js",
        "function report() {}\nmodule.exports = { report };\n",
    );
    env.git_init_commit();
    // Coverage output is usually ignored by git; it is read from disk.
    env.write(
        "coverage/lcov.info",
        &format!(
            "SF:{root}/src/math.js\nDA:1,1\nDA:2,1\nDA:3,0\nDA:4,1\nend_of_record\nSF:src/strings.js\nDA:1,1\nDA:2,0\nend_of_record\nSF:/elsewhere/dep.js\nDA:1,1\nend_of_record\n",
            root = env.root.display()
        ),
    );
    run_gen(&env, &["Test the calculator", "--plan-only"]).success();
    let dir = ".workflow/active/WFS-test-the-calculator";
    let pkg = read_json(&env, &format!("{dir}/.process/context-package.json"));
    let missing = &pkg["test_coverage"]["missing_tests"];
    let rows: Vec<(String, String, String)> = missing
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["implementation_file"].as_str().unwrap().to_string(),
                m["priority"].as_str().unwrap().to_string(),
                m["suggested_test_file"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "src/auth.js".into(),
                "high".into(),
                "test/auth.test.js".into()
            ),
            (
                "src/utils/format.js".into(),
                "medium".into(),
                "test/utils/format.test.js".into()
            ),
            (
                "src/report.js".into(),
                "low".into(),
                "test/report.test.js".into()
            ),
        ]
    );
    let lc = &pkg["test_coverage"]["line_coverage"];
    assert_eq!(lc["report"], "coverage/lcov.info");
    assert_eq!(lc["format"], "lcov");
    assert_eq!(lc["percent"], 66.7);
    assert_eq!(
        lc["files"],
        serde_json::json!([
            {"path": "src/math.js", "lines_total": 4, "lines_covered": 3, "percent": 75.0},
            {"path": "src/strings.js", "lines_total": 2, "lines_covered": 1, "percent": 50.0}
        ])
    );
    let stats = &pkg["test_coverage"]["coverage_stats"];
    assert_eq!(stats["source_files"], 5);
    assert_eq!(stats["source_files_with_tests"], 2);
    assert_eq!(stats["file_coverage_percent"], 40.0);
    let analysis = env.read(&format!("{dir}/.process/TEST_ANALYSIS_RESULTS.md"));
    assert!(
        analysis.contains("| line coverage | 66.7% | 80.0% |"),
        "{analysis}"
    );
    assert!(analysis.contains("- `src/strings.js`: 50.0%"), "{analysis}");
    assert!(
        analysis.contains("| `src/auth.js` | high | `test/auth.test.js` |"),
        "{analysis}"
    );
    let t = read_json(&env, &format!("{dir}/.task/IMPL-001.json"));
    assert_eq!(
        t["flow_control"]["target_files"],
        serde_json::json!([
            "test/auth.test.js",
            "test/math.test.js",
            "test/report.test.js",
            "test/strings.test.js",
            "test/utils/format.test.js"
        ])
    );
    assert_eq!(
        t["context"]["requirements"][0],
        "L1 unit — `src/auth.js` (`login`): happy path, negative path (invalid input, errors), edge cases (empty, zero, boundaries); in `test/auth.test.js` (new file)"
    );
}
