//! `wfx test-fix-gen --json`: phases 1–4 stream typed events (their start
//! and end, the plan) before phase 5's, and every line is an event of
//! `schemas/event.schema.json` — run as a user would on a fresh repository.

use crate::common;

use common::{Env, fixer_config};
use serde_json::Value;

const ID: &str = "WFS-test-the-calculator";

/// The JSON Lines of a run, each checked against the event schema.
fn events(stdout: &[u8]) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/event.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let text = String::from_utf8_lossy(stdout);
    text.lines()
        .map(|line| {
            let event: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            let problems: Vec<String> = validator
                .iter_errors(&event)
                .map(|e| e.to_string())
                .collect();
            assert!(problems.is_empty(), "{line}\n{problems:?}");
            event
        })
        .collect()
}

/// `wfx --json test-fix-gen INPUT` to its end (exit 0): its events.
fn gen_json(env: &Env, input: &str) -> Vec<Value> {
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["--json", "test-fix-gen", input])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    events(&out.stdout)
}

/// `(event, phase, status)` of the planning events, in order.
fn planning(events: &[Value]) -> Vec<(String, u64, String)> {
    events
        .iter()
        .take_while(|e| e["event"] != "start")
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["phase"].as_u64().unwrap_or_default(),
                e["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn phase(event: &str, n: u64, status: &str) -> (String, u64, String) {
    (event.to_string(), n, status.to_string())
}

#[test]
fn a_fresh_run_streams_every_phase_and_the_plan_before_phase_5() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    let events = gen_json(&env, "Test the calculator");
    let mut want = Vec::new();
    for n in 1..=4 {
        want.push(phase("phase_started", n, ""));
        want.push(phase("phase_finished", n, "completed"));
    }
    want.push(phase("planned", 0, ""));
    assert_eq!(planning(&events), want);
    assert_eq!(events[0]["mode"], "prompt");
    assert_eq!(events[0]["session_id"], ID);
    assert_eq!(events[2]["title"], "context gather");
    assert_eq!(
        events[0]["message"],
        format!("Phase 1/5 session start: {ID} (prompt mode)")
    );
    let planned = &events[8];
    assert_eq!(planned["session_id"], ID);
    assert_eq!(planned["phases_run"], serde_json::json!([1, 2, 3, 4]));
    assert!(planned["tasks"].as_array().unwrap().len() >= 2, "{planned}");
    assert!(planned.get("message").is_none(), "{planned}");
    // Phase 5 follows on the same stream and ends it.
    assert_eq!(events[9]["event"], "start");
    let done = events.last().unwrap();
    assert_eq!(
        (&done["event"], &done["exit_code"]),
        (&"done".into(), &0.into())
    );
}

/// `--stop-after-phase` prints one document and no events; continuing the
/// session streams where it stands, then the rest.
#[test]
fn a_continued_session_says_where_it_resumes() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    let out = env
        .wfx_live()
        .args([
            "--json",
            "test-fix-gen",
            "Test the calculator",
            "--stop-after-phase",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["stopped_after_phase"], 2, "{doc}");

    let events = gen_json(&env, ID);
    assert_eq!(
        planning(&events),
        [
            phase("phases_resumed", 3, ""),
            phase("phase_started", 3, ""),
            phase("phase_finished", 3, "completed"),
            phase("phase_started", 4, ""),
            phase("phase_finished", 4, "completed"),
            phase("planned", 0, ""),
        ]
    );
    assert_eq!(
        events[0]["message"],
        format!("Continuing {ID} at phase 3/4 (analysis)")
    );
    assert_eq!(events[5]["resumed"], true);
    assert_eq!(events[5]["phases_run"], serde_json::json!([3, 4]));
}

/// `wfx test-fix-gen "Test the calculator" ARGS` (exit 0) on a fresh
/// node-calc whose `coverage.xml` is no coverage report: stdout, stderr.
fn gen_with_a_broken_coverage_report(args: &[&str]) -> (Vec<u8>, String) {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-all"));
    env.write("coverage.xml", "<report/>\n");
    env.git_init_commit();
    let out = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (out.stdout, stderr)
}

/// A warning of phases 1–4 (here: a coverage report that cannot be read)
/// is a `warning` event on the JSON stream, not text on stderr; people see
/// the same `warning:` line as before.
#[test]
fn a_planning_warning_is_an_event_on_the_stream() {
    let (stdout, stderr) =
        gen_with_a_broken_coverage_report(&["--json", "test-fix-gen", "Test the calculator"]);
    let events = events(&stdout);
    let warnings: Vec<&Value> = events.iter().filter(|e| e["event"] == "warning").collect();
    assert_eq!(warnings.len(), 1, "{events:#?}");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("coverage report coverage.xml was not read: no <coverage> element"),
        "{message}"
    );
    assert!(!stderr.contains("coverage report"), "{stderr}");
    // It comes with the plan, before phase 5 starts.
    let at = |name: &str| events.iter().position(|e| e["event"] == name).unwrap();
    assert!(at("warning") < at("start"), "{events:#?}");

    let (_, stderr) =
        gen_with_a_broken_coverage_report(&["test-fix-gen", "Test the calculator", "--plan-only"]);
    assert!(
        stderr
            .contains("warning: coverage report coverage.xml was not read: no <coverage> element"),
        "{stderr}"
    );
}
