//! `wfx run` on the sample projects with real test runners and a fake
//! `claude` first on `PATH` (fixtures/agents/fixer, which applies one
//! planned fix per call): the whole debug loop on node-calc, and the three
//! example workflows of seed 000 on rust-calc with `cargo test`.

use crate::common;

use std::path::{Path, PathBuf};

use common::Env;
use serde_json::{Value, json};

const CLAUDE_CONFIG: &str = r#"{"agents": {"definitions": {"claude": {"preset": "claude"}}}}"#;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// The project `name` in git, claude configured, `fixtures/workflows/<wf>`
/// copied in as `wf.yml`, and the fixer's plan written.
fn setup(name: &str, wf: &str, plan: Value) -> Env {
    let env = Env::new();
    env.copy_fixture_project(name);
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/workflows")
            .join(wf),
    )
    .unwrap();
    env.write("wf.yml", &text);
    env.write(".workflow/wfx.json", CLAUDE_CONFIG);
    env.write("../plan.json", &plan.to_string());
    std::fs::create_dir_all(env.tmp.path().join("calls")).unwrap();
    env.git_init_commit();
    env
}

fn run(env: &Env, args: &[&str]) -> Run {
    let bin = env.fake_agents(&[("claude", "fixer")]);
    let out = env
        .wfx_live()
        .env("PATH", env.path_with(&bin))
        .env("FAKE_FIX_PLAN", env.tmp.path().join("plan.json"))
        .env("FAKE_AGENT_LOG", env.tmp.path().join("calls"))
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every call the fake claude received.
fn calls(env: &Env) -> Vec<Value> {
    let path: PathBuf = env.tmp.path().join("calls/calls.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn state(env: &Env, id: &str) -> Value {
    env.run_state(id)
}

fn results(env: &Env, rel: &str) -> Value {
    serde_json::from_str(&env.read(rel)).unwrap()
}

fn edit(file: &str, old: &str, new: &str) -> Value {
    json!({"file": file, "old": old, "new": new})
}

fn progress(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("test step"))
        .map(|l| {
            // Drop durations, which vary: "… debug by claude 0.3 s" → "… debug by claude".
            match l.find(" · debug by ") {
                Some(i) => {
                    let rest = &l[i + " · debug by ".len()..];
                    let who = rest.split(' ').next().unwrap();
                    let note = rest.find(" · ").map(|j| &rest[j..]).unwrap_or("");
                    format!("{} · debug by {who}{note}", &l[..i])
                }
                None if l.contains(" · initial run · ") => {
                    l.rsplit_once(" · ").unwrap().0.to_string()
                }
                None => l.to_string(),
            }
        })
        .collect()
}

const NODE_MAX_FIX: (&str, &str, &str) = (
    "src/math.js",
    "if (values[i] < best)",
    "if (values[i] > best)",
);
const NODE_SLUG_FIX: (&str, &str, &str) = (
    "src/strings.js",
    ".replace(' ', '-')",
    ".replace(/\\s+/g, '-')",
);

/// The integration test of the whole debug loop: node-calc's tests fail,
/// the fake claude fixes one bug per call, the tests are re-run after each
/// attempt and the loop stops when they pass — on its second call.
#[test]
fn debug_loop_on_node_calc_fixes_the_bugs_by_the_second_claude_call() {
    let env = setup(
        "node-calc",
        "node-debug-loop.yml",
        json!([
            {"edits": [edit(NODE_MAX_FIX.0, NODE_MAX_FIX.1, NODE_MAX_FIX.2)]},
            {"edits": [edit(NODE_SLUG_FIX.0, NODE_SLUG_FIX.1, NODE_SLUG_FIX.2)]},
            {"result": "a third call must not happen"}
        ]),
    );
    let out = run(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let id = "WFS-run-node-debug-loop";
    let dir = format!(".workflow/archives/{id}/.process/step-02");

    // The debug command received spec path, test output, attempt and exit code.
    let calls = calls(&env);
    assert_eq!(calls.len(), 2, "stopped when the tests passed");
    for (i, call) in calls.iter().enumerate() {
        let attempt = i + 1;
        let before = if attempt == 1 {
            format!("{dir}/initial/test-output.log")
        } else {
            format!("{dir}/attempt-{}/test-output.log", attempt - 1)
        };
        let output = env.read(&before);
        assert!(output.len() < 10 * 1024, "passed inline");
        assert_eq!(
            call["prompt"],
            format!(
                "/debug-test-failure --spec specs/calc.md --output {output} --attempt {attempt} --exit-code 1"
            )
        );
        assert_eq!(
            call["argv"],
            json!([
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits"
            ])
        );
        assert_eq!(call["env"]["WFX_TEST_ATTEMPT"], attempt.to_string());
        assert_eq!(call["env"]["WFX_TEST_EXIT_CODE"], "1");
        assert_eq!(call["env"]["WFX_SPEC"], "specs/calc.md");
        // While the run ran, its files were in active/.
        assert_eq!(
            call["env"]["WFX_TEST_OUTPUT_FILE"],
            before.replacen(".workflow/archives/", ".workflow/active/", 1)
        );
        assert_eq!(call["env"]["WFX_ROLE"], "fix");
        assert_eq!(
            env.read(&format!("{dir}/attempt-{attempt}/debug-prompt.md")),
            call["prompt"].as_str().unwrap()
        );
    }

    // Parsed results of every run: 2 failing, then 1, then 0.
    let initial = results(&env, &format!("{dir}/initial/test-results.json"));
    assert_eq!(
        (initial["exit_code"].clone(), initial["failed"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(initial["framework"], "node-test");
    let a1 = results(&env, &format!("{dir}/attempt-1/test-results.json"));
    assert_eq!(
        (a1["exit_code"].clone(), a1["failed"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        a1["failures"][0]["test"],
        "test/strings.test.js › strings › slugifies a title"
    );
    let a2 = results(&env, &format!("{dir}/attempt-2/test-results.json"));
    assert_eq!(
        (a2["exit_code"].clone(), a2["failed"].clone()),
        (json!(0), json!(0))
    );
    assert!(!env.root.join(format!("{dir}/attempt-3")).exists());

    assert_eq!(
        progress(&out.stderr),
        vec![
            "test step 2 · initial run · exit 1 · 2 failing",
            "test step 2 · attempt 1/3 · exit 1 · 2 failing · debug by claude",
            "test step 2 · re-run after attempt 1/3 · exit 1 · 1 failing · failed",
            "test step 2 · attempt 2/3 · exit 1 · 1 failing · debug by claude",
            "test step 2 · re-run after attempt 2/3 · exit 0 · 0 failing · passed",
            "test step 2 · passed after 2 debug attempts (of at most 3)",
        ]
    );
    assert_eq!(
        out.stdout.lines().next(),
        Some("workflow node debug loop: completed")
    );
    assert!(env.read("src/math.js").contains(NODE_MAX_FIX.2));
    assert!(env.read("src/strings.js").contains(NODE_SLUG_FIX.2));

    let st = state(&env, id);
    assert_eq!(st["status"], "completed");
    assert_eq!(st["cost_usd"], 0.1);
    let attempts = &st["steps"][1]["attempts"];
    assert_eq!(attempts[0]["debug"]["agent"], "claude");
    assert_eq!(
        attempts[0]["debug"]["files_changed"],
        json!(["src/math.js"])
    );
    assert_eq!(
        attempts[1]["debug"]["files_changed"],
        json!(["src/strings.js"])
    );
    assert_eq!(attempts[0]["debug"]["committed"], false);
    assert_eq!(st["outputs"]["node.exit_code"], "0");
    assert!(
        st["outputs"]["node.output"]
            .as_str()
            .unwrap()
            .starts_with('v')
    );
}

// rust-calc's bugs (fixtures/projects/README.md).
fn stats_fix() -> Value {
    edit(
        "src/stats.rs",
        "    Some(sum / (values.len() - 1) as f64)",
        "    Some(sum / values.len() as f64)",
    )
}
fn divide_fix() -> Value {
    edit("src/lib.rs", "    Some(a.abs() / b)", "    Some(a / b)")
}

/// Seed 000, "Basic Test with Debug".
#[test]
fn seed_example_basic_runs() {
    let env = setup(
        "rust-calc",
        "seed-basic.yml",
        json!([
            {"result": "implemented"},
            {"edits": [stats_fix()]},
            {"edits": [divide_fix()]}
        ]),
    );
    let out = run(&env, &["run", "wf.yml", "--var", "spec=specs/49.md"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let calls = calls(&env);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0]["prompt"], "/mmm-implement-spec specs/49.md");
    for c in &calls[1..] {
        assert!(
            c["prompt"]
                .as_str()
                .unwrap()
                .starts_with("/mmm-debug-test-failure --spec specs/49.md --output "),
            "{}",
            c["prompt"]
        );
    }
    assert_eq!(
        progress(&out.stderr),
        vec![
            "test step 2 · initial run · exit 101 · 2 failing",
            "test step 2 · attempt 1/3 · exit 101 · 2 failing · debug by claude",
            "test step 2 · re-run after attempt 1/3 · exit 101 · 1 failing · failed",
            "test step 2 · attempt 2/3 · exit 101 · 1 failing · debug by claude",
            "test step 2 · re-run after attempt 2/3 · exit 0 · 0 failing · passed",
            "test step 2 · passed after 2 debug attempts (of at most 3)",
        ]
    );
    assert_eq!(
        state(&env, "WFS-run-wf")["vars"],
        json!({"spec": "specs/49.md"})
    );
}

/// Seed 000, "Complex Test Scenarios": the first test step (fail_workflow:
/// true, 5 attempts) is fixed on the third attempt; the doc tests then pass
/// on their first run.
#[test]
fn seed_example_complex_runs() {
    let env = setup(
        "rust-calc",
        "seed-complex.yml",
        json!([
            {"edits": [edit("Cargo.toml", "[dependencies]", "[features]\nintegration = []\n\n[dependencies]")]},
            {"edits": [stats_fix()]},
            {"edits": [divide_fix()]},
            {"result": "a fourth call must not happen"}
        ]),
    );
    let out = run(&env, &["run", "wf.yml", "--var", "spec=specs/49.md"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let calls = calls(&env);
    assert_eq!(calls.len(), 3);
    for c in &calls {
        let p = c["prompt"].as_str().unwrap();
        assert!(
            p.starts_with("/mmm-debug-test-failure --spec specs/49.md --output ")
                && p.ends_with(" --mode integration"),
            "{p}"
        );
    }
    assert!(
        calls[0]["prompt"]
            .as_str()
            .unwrap()
            .contains("does not contain this feature: integration")
    );
    let lines = progress(&out.stderr);
    assert_eq!(lines[0], "test step 1 · initial run · exit 101 · 1 failing");
    assert_eq!(
        lines[lines.len() - 3],
        "test step 1 · passed after 3 debug attempts (of at most 5)"
    );
    assert_eq!(
        lines[lines.len() - 2],
        "test step 2 · initial run · exit 0 · 0 failing"
    );
    assert_eq!(
        lines[lines.len() - 1],
        "test step 2 · passed on the first run"
    );
    assert_eq!(
        out.stdout,
        "workflow wf: completed\n  step 1 (test): passed after 3 debug attempts (of at most 5)\n  step 2 (test): passed on the first run\nsession: .workflow/archives/WFS-run-wf\n"
    );
}

/// Seed 000, "Coverage Workflow Update": `${coverage.spec}` is the file the
/// first claude step wrote (`outputs: spec: file_pattern`).
#[test]
fn seed_example_coverage_runs() {
    let env = setup(
        "rust-calc",
        "seed-coverage.yml",
        json!([
            {"write": {"specs/temp/01-coverage-improvements.md": "# Coverage improvements\n"}},
            {"edits": [stats_fix()]},
            {"edits": [divide_fix()]},
            {"result": "lint clean"}
        ]),
    );
    let out = run(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains(
        "warning: step 1 (claude): `analysis:` (line 10) is accepted for compatibility and has no effect in wfx\n"
    ), "{}", out.stderr);
    let prompts: Vec<String> = calls(&env)
        .iter()
        .map(|c| c["prompt"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(prompts.len(), 4);
    assert_eq!(prompts[0], "/mmm-coverage");
    assert_eq!(
        prompts[1],
        "/mmm-implement-spec specs/temp/01-coverage-improvements.md"
    );
    assert!(prompts[2].starts_with(
        "/mmm-debug-test-failure --spec specs/temp/01-coverage-improvements.md --output "
    ));
    assert_eq!(prompts[3], "/mmm-lint");
    let st = state(&env, "WFS-run-wf");
    assert_eq!(
        st["outputs"]["coverage.spec"],
        "specs/temp/01-coverage-improvements.md"
    );
    assert_eq!(
        st["outputs"]["coverage.output"],
        "call 1: wrote specs/temp/01-coverage-improvements.md"
    );
    assert_eq!(st["steps"][2]["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(st["status"], "completed");
}

/// Every example under fixtures/workflows parses and passes `--dry-run`.
#[test]
fn example_workflows_parse() {
    let env = Env::new();
    env.write(".workflow/wfx.json", CLAUDE_CONFIG);
    let bin = env.fake_agents(&[("claude", "fixer")]);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/workflows");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6);
    for path in names {
        let out = env
            .wfx()
            .env("PATH", env.path_with(&bin))
            .args(["run", "--dry-run", "--var", "spec=specs/49.md"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
