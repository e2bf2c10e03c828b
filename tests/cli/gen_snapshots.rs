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
