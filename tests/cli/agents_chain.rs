//! The analysis fallback chain: every trigger of DESIGN.md §6.3 passes a
//! tool over with a recorded reason, in order; after the chain the
//! built-in analyzer answers; the cost cap stops further calls.

use crate::common;

use common::{Env, failures_of, fake_agent, recorded, results_with};
use wfx::agents::config::{analysis_chain, check};
use wfx::agents::{AnalysisCtx, AnalysisOutcome, Invoked, ResolvedAgent, Vars, analyze};
use wfx::artifacts::fix_history::FixHistory;
use wfx::artifacts::iteration_state::Strategy;
use wfx::artifacts::task::{AnalysisQuality, FixStrategy};
use wfx::artifacts::{Config, TestResults};
use wfx::render::Renderer;
use wfx::session::SessionPaths;

struct Setup {
    env: Env,
    extra_env: Vec<(String, String)>,
    paths: SessionPaths,
    results: TestResults,
    log: String,
}

fn setup() -> Setup {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let bin = env.fake_agents(&[("qwen", "qwen"), ("claude", "claude")]);
    let extra_env = vec![("PATH".to_string(), env.path_with(&bin))];
    let paths = SessionPaths::new(env.root.join(".workflow/active/WFS-t"), "WFS-t");
    let run = wfx::testing::parse::junit::parse(&recorded("pytest-junit.xml")).unwrap();
    let results = results_with(failures_of(&run), "junit");
    Setup {
        env,
        extra_env,
        paths,
        results,
        log: recorded("pytest-console.txt"),
    }
}

/// The agents config of the chain tests: one definition per fake.
fn config(analysis: &[&str], max_cost: Option<f64>) -> Config {
    let def = |preset: &str, script: &str| serde_json::json!({"preset": preset, "program": fake_agent(script).to_string_lossy()});
    let mut v = serde_json::json!({
        "agents": {
            "analysis": analysis,
            "definitions": {
                "garbage": def("claude", "garbage"),
                "low": def("claude", "low-confidence"),
                "missing": def("claude", "missing-fields"),
                "limited": def("gemini", "rate-limit"),
                "slow": {"preset": "claude", "program": fake_agent("sleeper").to_string_lossy(), "timeout_s": 1},
                "erroring": def("claude", "is-error"),
                "absent": {"preset": "codex", "program": "no-such-codex-cli"},
                "good": {"preset": "qwen"},
                "good-claude": {"preset": "claude"},
            },
        }
    });
    if let Some(c) = max_cost {
        v["agents"]["max_cost_usd"] = serde_json::json!(c);
    }
    let cfg: Config = serde_json::from_value(v).unwrap();
    assert_eq!(check(&cfg, "wfx.json"), vec![]);
    cfg
}

fn run(
    s: &Setup,
    chain: &[ResolvedAgent],
    history: &FixHistory,
    previous: &[FixStrategy],
    cap: Option<f64>,
) -> AnalysisOutcome {
    let mut vars = Vars::new();
    vars.set("session.id", "WFS-t")
        .set("session.dir", ".workflow/active/WFS-t")
        .set_test_output(&s.log, ".workflow/active/WFS-t/.process/test-output.log");
    let renderer = Renderer::new(None);
    // The engine's agent path, as the driver runs it: the cost cap
    // before each call (from the recorded cost and this step's), the call.
    let mut spent = wfx::agents::total_cost(history);
    analyze(
        chain,
        &AnalysisCtx {
            root: &s.env.root,
            paths: &s.paths,
            iteration: 2,
            max_iterations: 10,
            strategy: Strategy::Conservative,
            results: &s.results,
            log_text: &s.log,
            log_path: ".workflow/active/WFS-t/.process/test-output.log",
            stuck_tests: &["tests/test_auth.py::test_validate_token".to_string()],
            history,
            previous_strategies: previous,
            vars: &vars,
            renderer: &renderer,
            env: &s.extra_env,
        },
        &mut |inv| {
            if let Some(reason) = wfx::engine::policy::cost_cap(spent, cap) {
                return Ok(Invoked::CostCapped(reason));
            }
            let call = wfx::agents::invoke(inv, &mut |_| {})?;
            spent += call.cost_usd.unwrap_or(0.0);
            Ok(Invoked::Ran(Box::new(call)))
        },
    )
    .unwrap()
}

fn reasons(o: &AnalysisOutcome) -> Vec<(String, String, String)> {
    o.tried
        .iter()
        .map(|t| (t.tool.clone(), t.reason_code.clone(), t.reason.clone()))
        .collect()
}

#[test]
fn each_trigger_passes_a_tool_over_in_order() {
    let s = setup();
    let cfg = config(
        &[
            "garbage", "low", "missing", "limited", "slow", "erroring", "absent", "good",
        ],
        None,
    );
    let chain = analysis_chain(&cfg.agents).unwrap();
    let o = run(&s, &chain, &FixHistory::default(), &[], None);
    let want = [
        (
            "garbage",
            "no_valid_strategy",
            "no valid fix strategy: no fenced ```json block and the answer is not JSON (no structured envelope either)",
        ),
        ("low", "low_confidence", "confidence 0.2 is below 0.4"),
        (
            "missing",
            "missing_fields",
            "the strategy has no modification_points",
        ),
        (
            "limited",
            "rate_limit",
            "rate limited: [API Error: got status: 429 Too Many Requests. Quota exceeded for quota metric 'Gemini 2.5 Pro Requests']",
        ),
        ("slow", "timeout", "timed out: no answer within 1 s"),
        (
            "erroring",
            "agent_error",
            "the call failed: exit 0, error envelope: Credit balance is too low",
        ),
        (
            "absent",
            "unavailable",
            "not available: `no-such-codex-cli` was not found on PATH",
        ),
    ];
    let got = reasons(&o);
    assert_eq!(
        got,
        want.iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(o.tool, "good");
    assert_eq!(o.quality, AnalysisQuality::Agent);
    assert_eq!(o.cost_capped, None);
    assert_eq!(
        o.strategy.modification_points[1].to_string(),
        "calc/auth.py:validate_token:14-19"
    );

    // Every call is recorded for fix-history, with its outcome.
    let outcomes: Vec<(&str, &str)> = o
        .calls
        .iter()
        .map(|c| (c.agent.as_str(), c.outcome.as_str()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("garbage", "no_valid_strategy"),
            ("low", "low_confidence"),
            ("missing", "missing_fields"),
            ("limited", "rate_limit"),
            ("slow", "timeout"),
            ("erroring", "agent_error"),
            ("absent", "unavailable"),
            ("good", "accepted"),
        ]
    );
    assert!(
        o.calls
            .iter()
            .all(|c| c.iteration == Some(2) && c.role == wfx::agents::Role::Analysis)
    );
    assert_eq!(o.calls[1].cost_usd, Some(0.05));
    assert!(o.calls[4].timed_out);

    // Files: one prompt, the first tool's output under the standard name,
    // each fallback's under its own.
    let process = s.paths.process_dir();
    assert!(process.join("iteration-2-prompt.md").is_file());
    assert!(process.join("iteration-2-cli-output.txt").is_file());
    assert!(process.join("iteration-2-low-cli-output.txt").is_file());
    assert!(process.join("iteration-2-good-cli-output.txt").is_file());
    assert_eq!(
        o.tried[1].output_file.as_deref(),
        Some(".workflow/active/WFS-t/.process/iteration-2-low-cli-output.txt")
    );

    // The report names the accepted tool and every tool passed over.
    let md = &o.analysis_markdown;
    assert!(
        md.starts_with("# Test Failure Analysis - Iteration 2\n"),
        "{md}"
    );
    assert!(md.contains("- Analysis by: good (quality: agent)"), "{md}");
    assert!(md.contains("  - slow: timed out: no answer within 1 s (output: `.workflow/active/WFS-t/.process/iteration-2-slow-cli-output.txt`)"), "{md}");
    assert!(md.contains("- `calc/ops.py:divide:8-10`"), "{md}");
    assert!(
        md.contains("## Agent Analysis\n\n## Root cause analysis"),
        "{md}"
    );
}

#[test]
fn the_prompt_carries_failures_strategy_stuck_tests_and_hints() {
    let s = setup();
    let cfg = config(&["good"], None);
    let chain = analysis_chain(&cfg.agents).unwrap();
    run(&s, &chain, &FixHistory::default(), &[], None);
    let prompt =
        std::fs::read_to_string(s.paths.process_dir().join("iteration-2-prompt.md")).unwrap();
    for needle in [
        "# Test failure analysis — iteration 2 of 10",
        "## Strategy: conservative",
        "Propose ONE targeted fix",
        "### 1. `tests/test_auth.py::test_validate_token`",
        "### 2. `tests/test_ops.py::test_divide_by_zero_returns_none`",
        "## Stuck tests",
        "- `tests/test_auth.py::test_validate_token`",
        "fails at `calc/ops.py:10 (in divide)`",
        "calls calc/auth.py:validate_token:14-19",
        "Full log: `.workflow/active/WFS-t/.process/test-output.log`",
        "Never weaken, delete or skip an assertion",
        "Never disable lint rules",
        "\"modification_points\": [",
        "E       ZeroDivisionError: division by zero",
    ] {
        assert!(
            prompt.contains(needle),
            "prompt lacks {needle:?}:\n{prompt}"
        );
    }
}

#[test]
fn after_the_chain_the_builtin_analyzer_answers() {
    let s = setup();
    let cfg = config(&["garbage", "low"], None);
    let chain = analysis_chain(&cfg.agents).unwrap();
    let o = run(&s, &chain, &FixHistory::default(), &[], None);
    assert_eq!(o.tool, "builtin");
    assert_eq!(o.quality, AnalysisQuality::Degraded);
    assert_eq!(
        reasons(&o).iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["no_valid_strategy", "low_confidence"]
    );
    let points: Vec<String> = o
        .strategy
        .modification_points
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        points,
        [
            "calc/auth.py:validate_token:14-19",
            "calc/ops.py:divide:8-10"
        ]
    );
    assert!(
        o.analysis_markdown
            .contains("- Analysis by: builtin (quality: degraded)")
    );
    assert!(o.analysis_markdown.contains("## Root Causes by Group"));
}

#[test]
fn no_chain_means_builtin_without_any_call() {
    let s = setup();
    let o = run(&s, &[], &FixHistory::default(), &[], None);
    assert_eq!(
        (o.tool.as_str(), o.calls.len(), o.tried.len()),
        ("builtin", 0, 0)
    );
    assert!(!s.paths.process_dir().join("iteration-2-prompt.md").exists());
}

#[test]
fn the_cost_cap_stops_further_calls() {
    let s = setup();
    let cfg = config(&["low", "good-claude"], Some(1.0));
    let chain = analysis_chain(&cfg.agents).unwrap();
    let mut history = FixHistory::default();
    let mut earlier = o_call("fix", 0.95);
    earlier.iteration = Some(1);
    history.agent_calls.push(earlier);
    let o = run(&s, &chain, &history, &[], cfg.agents.max_cost_usd);
    assert_eq!(
        reasons(&o),
        [
            (
                "low".to_string(),
                "low_confidence".to_string(),
                "confidence 0.2 is below 0.4".to_string()
            ),
            (
                "good-claude".to_string(),
                "cost_cap".to_string(),
                "not run: the session's cost cap was reached".to_string()
            ),
        ]
    );
    assert_eq!(o.calls.len(), 1, "no call after the cap");
    assert_eq!(o.tool, "builtin");
    let reason = o.cost_capped.unwrap();
    assert_eq!(
        reason,
        "agent cost cap reached: $1.00 spent of agents.max_cost_usd $1.00; no further agent calls are made (raise the cap in .workflow/wfx.json to continue)"
    );
    assert!(
        o.analysis_markdown
            .contains("- Stopped: agent cost cap reached")
    );

    // Fix and test-gen calls get the same stop from the engine's one cost
    // cap (the session blocks, exit 1).
    let spent = wfx::agents::total_cost(&history);
    let reason = wfx::engine::policy::cost_cap(spent, Some(0.95)).unwrap();
    assert!(
        reason.starts_with("agent cost cap reached: $0.95 spent"),
        "{reason}"
    );
    assert_eq!(wfx::engine::policy::cost_cap(spent, Some(1.0)), None);
    assert_eq!(wfx::engine::policy::cost_cap(spent, None), None);
}

fn o_call(role: &str, cost: f64) -> wfx::artifacts::fix_history::AgentCall {
    serde_json::from_value(serde_json::json!({
        "role": role, "agent": "claude", "started_at": "2026-01-01T00:00:00Z",
        "cost_usd": cost, "outcome": "accepted"
    }))
    .unwrap()
}

#[test]
fn the_same_root_cause_three_times_moves_to_the_next_tool() {
    let s = setup();
    let cfg = config(&["good-claude", "good"], None);
    let chain = analysis_chain(&cfg.agents).unwrap();
    // What the fakes always answer, as two earlier iterations' strategies.
    let same = wfx::agents::extract(&recorded_answer()).unwrap();
    let o = run(
        &s,
        &chain,
        &FixHistory::default(),
        &[same.clone(), same],
        None,
    );
    assert_eq!(o.tried[0].reason_code, "same_root_cause");
    assert_eq!(
        o.tried[0].reason,
        "same root cause as the last 2 iterations: divide does not handle a zero divisor"
    );
    // The second tool gives the same answer, so it is passed over too.
    assert_eq!(o.tried[1].reason_code, "same_root_cause");
    assert_eq!(o.tool, "builtin");
}

/// The analysis text every valid fake prints.
fn recorded_answer() -> String {
    let out = std::process::Command::new(fake_agent("opencode"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let raw = String::from_utf8(out.stdout).unwrap();
    wfx::agents::presets::parse(Some(wfx::artifacts::config::Preset::Opencode), &raw).result_text
}
