//! `wfx test-fix-gen` on each sample project: every artifact it writes is
//! snapshotted (timestamps, version and commit redacted), so any change to
//! the generated plan shows up in review.

use crate::common;

use common::{Env, empty_path, redact_json, redact_text};

const SESSION: &str = ".workflow/active/WFS-test-the-calculator";

fn plan_fixture(name: &str) -> Env {
    let env = Env::new();
    env.copy_fixture_project(name);
    env.git_init_commit();
    env.wfx()
        .env("PATH", empty_path(&env))
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    env.wfx()
        .args(["validate", "WFS-test-the-calculator"])
        .assert()
        .success();
    env
}

fn json(env: &Env, rel: &str) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&env.read(&format!("{SESSION}/{rel}"))).unwrap();
    redact_json(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

fn md(env: &Env, rel: &str) -> String {
    redact_text(&env.read(&format!("{SESSION}/{rel}")))
}

fn snapshot_all(name: &str) {
    let env = plan_fixture(name);
    let text = env.read(&format!("{SESSION}/.process/context-package.json"));
    assert!(
        !text.contains(&env.root.display().to_string()),
        "absolute path in the context package"
    );
    for rel in [
        "workflow-session.json",
        ".task/IMPL-001.json",
        ".task/IMPL-001.3.json",
        ".task/IMPL-001.5.json",
        ".task/IMPL-002.json",
        ".process/context-package.json",
    ] {
        insta::assert_snapshot!(
            format!("{name}__{}", rel.trim_start_matches('.').replace('/', "_")),
            json(&env, rel)
        );
    }
    for rel in [
        "IMPL_PLAN.md",
        "TODO_LIST.md",
        "test-planning-notes.md",
        ".process/TEST_ANALYSIS_RESULTS.md",
    ] {
        insta::assert_snapshot!(
            format!("{name}__{}", rel.trim_start_matches('.').replace('/', "_")),
            md(&env, rel)
        );
    }
}

#[test]
fn rust_calc_artifacts() {
    snapshot_all("rust-calc");
}

#[test]
fn py_calc_artifacts() {
    snapshot_all("py-calc");
}

#[test]
fn node_calc_artifacts() {
    snapshot_all("node-calc");
}

/// The summary `test-fix-gen` prints, with and without what makes the
/// code-validation gate run (a `test_gen` agent) and coverage gate
/// (`test.coverage_command`): a gate or target that will not apply is not
/// listed as if it did.
#[test]
fn the_summary_lists_only_the_gates_that_apply() {
    let summary = |config: Option<serde_json::Value>| {
        let env = Env::new();
        env.copy_fixture_project("py-calc");
        if let Some(c) = config {
            env.write(".workflow/wfx.json", &c.to_string());
        }
        env.git_init_commit();
        let out = env
            .wfx()
            .env("PATH", empty_path(&env))
            .args(["test-fix-gen", "Test the calculator", "--plan-only"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    insta::assert_snapshot!("summary_without_test_gen_or_coverage", summary(None));
    insta::assert_snapshot!(
        "summary_with_test_gen_and_coverage",
        summary(Some(serde_json::json!({
            "test": {"coverage_command": "python -m pytest --cov"},
            "agents": {"test_gen": "writer", "definitions": {"writer": {"command": ["true"]}}}
        })))
    );
}
