//! Phase 3's analysis calls are recorded in fix-history.json `agent_calls`
//! and counted against `agents.max_cost_usd` before any later call, in
//! phase 3 and in phase 5 (issue #17: with a $0.005 cap, phase 3 spent
//! $0.0078 and phase 5 called again). Agents are the fake CLIs of
//! `fixtures/agents/`; every call they get is logged.

use crate::common;

use common::{Env, fake_agent};
use predicates::prelude::*;
use serde_json::{Value, json};

const DIR: &str = ".workflow/active/WFS-test-the-calculator";

fn project(config: Value) -> Env {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.write(".workflow/wfx.json", &config.to_string());
    env.git_init_commit();
    env
}

/// `wfx test-fix-gen "Test the calculator" ARGS` with the fake claude on
/// PATH, every call costing $0.0078 and logged.
fn gen_with_fake_claude(env: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    let bin = env.fake_agents(&[("claude", "claude")]);
    env.wfx_live()
        .env("PATH", env.path_with(&bin))
        .env("FAKE_AGENT_COST", "0.0078")
        .env("FAKE_AGENT_LOG", env.tmp.path())
        .args(["test-fix-gen", "Test the calculator"])
        .args(args)
        .assert()
}

fn calls_logged(env: &Env) -> Vec<Value> {
    std::fs::read_to_string(env.tmp.path().join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn agent_calls(env: &Env) -> Vec<Value> {
    env.json(&format!("{DIR}/.process/fix-history.json"))["agent_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn phase_3_cost_counts_against_the_cap_before_phase_5_calls_anything() {
    let env = project(json!({"agents": {
        "analysis": ["claude"], "fix": "claude", "max_cost_usd": 0.005
    }}));
    gen_with_fake_claude(&env, &["-y"])
        .code(1)
        .stdout(predicate::str::contains("agent cost cap reached"));
    // One call in all: phase 3's. Phase 5 made none.
    let logged = calls_logged(&env);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["env"]["WFX_ROLE"], "analysis");
    let calls = agent_calls(&env);
    assert_eq!(calls.len(), 1, "{calls:?}");
    let c = &calls[0];
    assert_eq!(
        (
            c["role"].as_str(),
            c["agent"].as_str(),
            c["outcome"].as_str()
        ),
        (Some("analysis"), Some("claude"), Some("accepted"))
    );
    assert_eq!(c["cost_usd"], 0.0078);
    assert_eq!(c["turns"], 3);
    assert_eq!(
        (c["input_tokens"].as_u64(), c["output_tokens"].as_u64()),
        (Some(100), Some(200))
    );
    assert!(
        c.get("iteration").is_none(),
        "phase 3 has no iteration: {c}"
    );
    assert_eq!(
        c["output_file"],
        format!("{DIR}/.process/analysis-agent-output.md")
    );
    env.wfx()
        .args(["validate", "WFS-test-the-calculator"])
        .assert()
        .success();
}

#[test]
fn the_cap_stops_phase_3_between_two_agents() {
    let env = project(json!({"agents": {
        "analysis": ["spender", "claude"],
        "max_cost_usd": 0.005,
        "definitions": {
            "spender": {"preset": "claude", "program": fake_agent("is-error").to_str().unwrap()}
        }
    }}));
    gen_with_fake_claude(&env, &["--plan-only"]).success();
    assert_eq!(calls_logged(&env).len(), 1, "claude was not called");
    let calls = agent_calls(&env);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["agent"], "spender");
    assert_eq!(calls[0]["outcome"], "agent_error");
    assert_eq!(calls[0]["cost_usd"], 0.0078);
    let s = env.json(&format!("{DIR}/workflow-session.json"));
    let attempts = s["phases"][2]["agent_review"]["attempts"].clone();
    // Phase 5's wording of the same failure (`Reason`).
    assert_eq!(
        attempts[0],
        "spender: the call failed: exit 0, error envelope: Credit balance is too low"
    );
    assert!(
        attempts[1]
            .as_str()
            .unwrap()
            .starts_with("claude: not run: agent cost cap reached"),
        "{attempts}"
    );
    let analysis = env.read(&format!("{DIR}/.process/TEST_ANALYSIS_RESULTS.md"));
    assert!(
        analysis.contains("not run: agent cost cap reached"),
        "{analysis}"
    );
}

#[test]
fn a_redone_phase_3_replaces_its_calls_instead_of_counting_them_twice() {
    let env = project(json!({"agents": {"analysis": ["claude"]}}));
    let bin = env.fake_agents(&[("claude", "claude")]);
    let gen_cmd = |args: &[&str]| {
        env.wfx_live()
            .env("PATH", env.path_with(&bin))
            .args(["test-fix-gen"])
            .args(args)
            .assert()
            .success();
    };
    gen_cmd(&["Test the calculator", "--plan-only"]);
    assert_eq!(agent_calls(&env).len(), 1);
    // A crash during phase 3: phase 3 in progress, phase 4 not done.
    let session_file = format!("{DIR}/workflow-session.json");
    let mut s = env.json(&session_file);
    s["phases"][2]["status"] = "in_progress".into();
    s["phases"][3]["status"] = "pending".into();
    s["status"] = "planning".into();
    env.write(&session_file, &serde_json::to_string_pretty(&s).unwrap());
    gen_cmd(&["WFS-test-the-calculator", "--plan-only"]);
    let calls = agent_calls(&env);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["cost_usd"], 0.05);
}
