//! One agent call at a time, against the fake CLIs of `fixtures/agents/`
//! put on PATH under the real programs' names.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::Env;
use wfx::agents::presets;
use wfx::agents::{
    AgentKind, CallFiles, CallRecord, ErrorKind, Invocation, ResolvedAgent, Role, Vars, invoke,
};
use wfx::artifacts::config::{CommandSpec, Preset};
use wfx::session::SessionPaths;

const PROMPT: &str = "Analyse the failures.\nThey are in tests/test_ops.py.\n";

struct Setup {
    env: Env,
    vars: Vec<(String, String)>,
    log: std::path::PathBuf,
    paths: SessionPaths,
}

fn setup(links: &[(&str, &str)]) -> Setup {
    let env = Env::new();
    let bin = env.fake_agents(links);
    let log = env.tmp.path().join("agent-log");
    std::fs::create_dir_all(&log).unwrap();
    let vars = vec![
        ("PATH".to_string(), env.path_with(&bin)),
        (
            "FAKE_AGENT_LOG".to_string(),
            log.to_string_lossy().into_owned(),
        ),
    ];
    let paths = SessionPaths::new(env.root.join(".workflow/active/WFS-t"), "WFS-t");
    Setup {
        env,
        vars,
        log,
        paths,
    }
}

fn preset(name: &str, preset: Preset, timeout_s: u64) -> ResolvedAgent {
    ResolvedAgent {
        name: name.into(),
        kind: AgentKind::Preset(preset),
        timeout: Duration::from_secs(timeout_s),
        model: None,
        args: Vec::new(),
        program: None,
    }
}

fn command(spec: CommandSpec) -> ResolvedAgent {
    ResolvedAgent {
        name: "custom".into(),
        kind: AgentKind::Command(spec),
        timeout: Duration::from_secs(60),
        model: None,
        args: Vec::new(),
        program: None,
    }
}

fn session_vars() -> Vars {
    let mut v = Vars::new();
    v.set("session.id", "WFS-t")
        .set("session.dir", ".workflow/active/WFS-t")
        .set("test.exit_code", "1")
        .set("test.attempt", "1")
        .set("spec", ".workflow/active/WFS-t/.task/IMPL-fix-1.json")
        .set_test_output(
            "FAILED tests/test_ops.py",
            ".workflow/active/WFS-t/.process/test-output.log",
        );
    v
}

fn call(s: &Setup, agent: &ResolvedAgent, role: Role, vars: &Vars) -> CallRecord {
    let files = CallFiles::analysis(&s.paths, 1, 0, &agent.name);
    invoke(
        &Invocation {
            agent,
            role,
            prompt: PROMPT,
            vars,
            files: &files,
            cwd: &s.env.root,
            env: &s.vars,
        },
        &mut |_| {},
    )
    .unwrap()
}

fn logged(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_preset_is_called_with_its_argv_and_its_envelope_is_read() {
    let names = ["claude", "gemini", "qwen", "codex", "opencode"];
    let links: Vec<(&str, &str)> = names.iter().map(|n| (*n, *n)).collect();
    let s = setup(&links);
    let vars = session_vars();
    for (i, p) in Preset::ALL.into_iter().enumerate() {
        let agent = preset(p.as_str(), p, 60);
        let rec = call(&s, &agent, Role::Analysis, &vars);
        assert_eq!(rec.exit_code, Some(0), "{}", p.as_str());
        assert!(!rec.failed(), "{}: {rec:?}", p.as_str());
        assert!(
            rec.result_text.starts_with("## Root cause analysis"),
            "{}",
            p.as_str()
        );
        let strategy = wfx::agents::extract(&rec.result_text).unwrap();
        assert_eq!(
            strategy.modification_points[0].to_string(),
            "calc/ops.py:divide:8-10"
        );
        let (cost, turns, structured) = match p {
            Preset::Claude => (Some(0.05), Some(3), true),
            Preset::Qwen => (None, Some(2), true),
            Preset::Codex => (None, Some(1), true),
            Preset::Gemini => (None, None, true),
            Preset::Opencode => (Some(0.02), Some(1), true),
        };
        assert_eq!(
            (rec.cost_usd, rec.turns, rec.structured),
            (cost, turns, structured),
            "{}",
            p.as_str()
        );

        let entry = &logged(&s.log)[i];
        let want = presets::argv(p, Role::Analysis, None, &[]);
        let got: Vec<String> = entry["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        assert_eq!(got, want[1..], "{}", p.as_str());
        assert_eq!(entry["prompt"], PROMPT, "prompt goes in on stdin");
        assert_eq!(entry["env"]["WFX_ROLE"], "analysis");
        assert_eq!(entry["env"]["WFX_AGENT"], p.as_str());
        // The environment each real CLI needs (DESIGN §10.5).
        let (trust, permission) = match p {
            Preset::Gemini => (Some("true"), None),
            Preset::Opencode => (None, Some(presets::OPENCODE_READ_ONLY)),
            _ => (None, None),
        };
        assert_eq!(
            entry["env"]["GEMINI_CLI_TRUST_WORKSPACE"].as_str(),
            trust,
            "{}",
            p.as_str()
        );
        assert_eq!(
            entry["env"]["OPENCODE_PERMISSION"].as_str(),
            permission,
            "{}",
            p.as_str()
        );
        assert_eq!(entry["env"]["WFX_SESSION_ID"], "WFS-t");
        assert_eq!(entry["env"]["WFX_TEST_OUTPUT"], "FAILED tests/test_ops.py");
        assert_eq!(
            entry["env"]["WFX_PROMPT_FILE"],
            ".workflow/active/WFS-t/.process/iteration-1-prompt.md"
        );
        assert_eq!(
            Path::new(entry["cwd"].as_str().unwrap())
                .canonicalize()
                .unwrap(),
            s.env.root
        );
    }
    assert_eq!(
        s.env
            .read(".workflow/active/WFS-t/.process/iteration-1-prompt.md"),
        PROMPT
    );
    let raw = s
        .env
        .read(".workflow/active/WFS-t/.process/iteration-1-cli-output.txt");
    // The last call was opencode's: its JSON events, as printed.
    assert!(
        raw.starts_with("{\"type\": \"step_start\"") && raw.lines().count() == 3,
        "raw output is saved as printed: {raw}"
    );
}

#[test]
fn write_roles_get_edit_permissions() {
    let s = setup(&[
        ("claude", "claude"),
        ("codex", "codex"),
        ("opencode", "opencode"),
    ]);
    let vars = session_vars();
    call(&s, &preset("claude", Preset::Claude, 60), Role::Fix, &vars);
    call(
        &s,
        &preset("codex", Preset::Codex, 60),
        Role::TestGen,
        &vars,
    );
    call(
        &s,
        &preset("opencode", Preset::Opencode, 60),
        Role::Fix,
        &vars,
    );
    let log = logged(&s.log);
    let argv = |i: usize| {
        log[i]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        argv(0),
        "-p --output-format stream-json --verbose --permission-mode acceptEdits"
    );
    assert_eq!(
        argv(1),
        "exec --json --skip-git-repo-check --sandbox workspace-write -"
    );
    assert_eq!(argv(2), "run --format json --agent build");
    assert_eq!(log[0]["env"]["WFX_ROLE"], "fix");
    assert_eq!(log[1]["env"]["WFX_ROLE"], "test_gen");
    // A write role is not denied its edit tools.
    assert_eq!(log[2]["env"].get("OPENCODE_PERMISSION"), None);
}

#[test]
fn exit_zero_with_is_error_is_a_failed_call() {
    let s = setup(&[("claude", "is-error")]);
    let rec = call(
        &s,
        &preset("claude", Preset::Claude, 60),
        Role::Analysis,
        &session_vars(),
    );
    assert_eq!(rec.exit_code, Some(0));
    assert!(rec.is_error);
    assert!(rec.failed());
    assert_eq!(rec.error_kind, Some(ErrorKind::Failed));
    assert_eq!(
        rec.error_message.as_deref(),
        Some("Credit balance is too low")
    );
}

#[test]
fn rate_limit_is_recognised() {
    let s = setup(&[("gemini", "rate-limit")]);
    let rec = call(
        &s,
        &preset("gemini", Preset::Gemini, 60),
        Role::Analysis,
        &session_vars(),
    );
    assert_eq!(rec.exit_code, Some(1));
    assert_eq!(rec.error_kind, Some(ErrorKind::RateLimit));
    assert!(rec.is_error);
}

#[test]
fn an_agent_past_its_timeout_is_stopped() {
    let s = setup(&[("claude", "sleeper")]);
    let rec = call(
        &s,
        &preset("claude", Preset::Claude, 1),
        Role::Analysis,
        &session_vars(),
    );
    assert!(rec.timed_out);
    assert_eq!(rec.error_kind, Some(ErrorKind::Timeout));
    assert_eq!(rec.error_message.as_deref(), Some("no answer within 1 s"));
}

#[test]
fn stdin_is_closed_so_a_reader_does_not_hang() {
    let s = setup(&[("claude", "stdin-block")]);
    let rec = call(
        &s,
        &preset("claude", Preset::Claude, 30),
        Role::Analysis,
        &session_vars(),
    );
    assert!(!rec.timed_out);
    assert_eq!(rec.exit_code, Some(0));
    assert_eq!(
        rec.result_text,
        format!("read {} bytes of prompt", PROMPT.len())
    );
}

#[test]
fn a_missing_cli_is_unavailable_not_a_crash() {
    let s = setup(&[]);
    let rec = call(
        &s,
        &preset("qwen", Preset::Qwen, 30),
        Role::Analysis,
        &session_vars(),
    );
    assert_eq!(rec.error_kind, Some(ErrorKind::Unavailable));
    assert_eq!(
        rec.error_message.as_deref(),
        Some("`qwen` was not found on PATH")
    );
    assert_eq!(rec.exit_code, None);
}

#[test]
fn program_replaces_the_preset_executable() {
    let s = setup(&[]);
    let mut agent = preset("wrapped", Preset::Claude, 30);
    agent.program = Some(
        common::fake_agent("low-confidence")
            .to_string_lossy()
            .into_owned(),
    );
    let rec = call(&s, &agent, Role::Analysis, &session_vars());
    assert_eq!(rec.cost_usd, Some(0.05), "{rec:?}");
    assert_eq!(
        wfx::agents::extract(&rec.result_text)
            .unwrap()
            .confidence_score,
        0.2
    );
}

const HOSTILE: &str = "$(touch pwned1) `touch pwned2` ; touch pwned3 'single' \"double\" \\back\nsecond line $HOME ${session.id}";

fn hostile_vars() -> Vars {
    let mut v = session_vars();
    v.set_test_output(HOSTILE, ".workflow/active/WFS-t/.process/test-output.log");
    v
}

fn assert_nothing_ran(root: &Path) {
    for f in ["pwned1", "pwned2", "pwned3"] {
        assert!(
            !root.join(f).exists(),
            "{f} was created: a value was executed"
        );
    }
}

#[test]
fn hostile_values_in_a_string_command_stay_literal() {
    let s = setup(&[]);
    let agent = command(CommandSpec::Shell(
        "printf '%s' ${test.output} > received.txt; printf '%s' \"$WFX_TEST_OUTPUT\" > env.txt; cat > stdin.txt".into(),
    ));
    let rec = call(&s, &agent, Role::Fix, &hostile_vars());
    assert_eq!(rec.exit_code, Some(0), "{rec:?}");
    assert_nothing_ran(&s.env.root);
    assert_eq!(s.env.read("received.txt"), HOSTILE);
    assert_eq!(s.env.read("env.txt"), HOSTILE);
    assert_eq!(s.env.read("stdin.txt"), PROMPT);
}

#[test]
fn hostile_values_in_an_argv_command_stay_one_argument() {
    let s = setup(&[]);
    let agent = command(CommandSpec::Argv(vec![
        "sh".into(),
        "-c".into(),
        "printf '%s' \"$1\" > received.txt; printf '%s' \"$#\" > count.txt".into(),
        "sh".into(),
        "${test.output}".into(),
    ]));
    let rec = call(&s, &agent, Role::Fix, &hostile_vars());
    assert_eq!(rec.exit_code, Some(0));
    assert_nothing_ran(&s.env.root);
    assert_eq!(s.env.read("received.txt"), HOSTILE);
    assert_eq!(s.env.read("count.txt"), "1");
}

#[test]
fn an_unknown_variable_in_a_command_is_an_error_naming_it() {
    let s = setup(&[]);
    let agent = command(CommandSpec::Argv(vec![
        "echo".into(),
        "${test.ouput}".into(),
    ]));
    let files = CallFiles::fix(&s.paths, 1);
    let err = invoke(
        &Invocation {
            agent: &agent,
            role: Role::Fix,
            prompt: PROMPT,
            vars: &session_vars(),
            files: &files,
            cwd: &s.env.root,
            env: &s.vars,
        },
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent custom: unknown variable ${test.ouput} in its command"
    );
}
