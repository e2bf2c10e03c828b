//! Phase 3 with an analysis agent: its answer enriches
//! TEST_ANALYSIS_RESULTS.md; when every agent fails the deterministic file
//! stands and says so. Agents are the fake CLIs of `fixtures/agents/`.

use crate::common;

use common::Env;
use predicates::prelude::*;
use serde_json::Value;

const DIR: &str = ".workflow/active/WFS-test-the-calculator";

fn with_agents(links: &[(&str, &str)], chain: &[&str]) -> Env {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    env.write(
        ".workflow/wfx.json",
        &serde_json::json!({"agents": {"analysis": chain}}).to_string(),
    );
    let bin = env.fake_agents(links);
    let path = env.path_with(&bin);
    env.wfx()
        .env("PATH", path)
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success();
    env
}

fn phase3(env: &Env) -> Value {
    let s: Value =
        serde_json::from_str(&env.read(&format!("{DIR}/workflow-session.json"))).unwrap();
    s["phases"][2].clone()
}

#[test]
fn an_agent_answer_is_added_as_a_review_and_kept_raw() {
    let env = with_agents(
        &[("gemini", "rate-limit"), ("claude", "claude")],
        &["gemini", "claude"],
    );
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));
    assert!(
        analysis.contains("## 8. Success Criteria"),
        "deterministic sections stay"
    );
    assert!(
        analysis.contains("\n## Agent Review (claude)\n"),
        "{analysis}"
    );
    assert!(
        analysis.contains("divides unconditionally"),
        "the agent's words are included"
    );
    let raw = env.read(&format!("{DIR}/.process/analysis-agent-output.md"));
    assert!(raw.contains("\"result\""), "raw envelope kept: {raw}");
    let prompt = env.read(&format!("{DIR}/.process/analysis-agent-prompt.md"));
    assert!(prompt.contains("# Test Analysis Results: Test the calculator"));
    assert!(prompt.contains("Test the calculator"));
    let p = phase3(&env);
    assert_eq!(p["status"], "completed");
    assert_eq!(p["agent_review"]["agent"], "claude");
    let attempts = p["agent_review"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert!(attempts[0].as_str().unwrap().starts_with("gemini: "));
    assert_eq!(attempts[1], "claude: ok");
    env.wfx()
        .args(["validate", "WFS-test-the-calculator"])
        .assert()
        .success();
}

#[test]
fn when_every_agent_fails_the_deterministic_file_stands_and_says_so() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"analysis": ["gemini"]}}"#,
    );
    let bin = env.fake_agents(&[("gemini", "rate-limit")]);
    env.wfx()
        .env("PATH", env.path_with(&bin))
        .args(["test-fix-gen", "Test the calculator", "--plan-only"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "the analysis agents failed (gemini:",
        ));
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));
    assert!(analysis.contains("## 8. Success Criteria"));
    assert!(!analysis.contains("## Agent Review"));
    assert!(
        analysis.contains("> Note: no analysis agent could review this plan (gemini: "),
        "{analysis}"
    );
    assert!(analysis.contains("429"), "the reason is named: {analysis}");
    let p = phase3(&env);
    assert_eq!(p["status"], "completed");
    assert_eq!(p["agent_review"]["agent"], Value::Null);
    // Phase 4 still ran.
    assert!(env.root.join(DIR).join(".task/IMPL-002.json").is_file());
}
