//! `wfx init` and config validation: detected CLIs are listed but get no
//! role, an existing config is never overwritten without `--force` (and
//! then kept as a backup), and an invalid config reports every problem.

use crate::common;

use common::Env;
use predicates::prelude::*;
use wfx::artifacts::Config;
use wfx::session::Workspace;

const PRESETS: [&str; 5] = ["claude", "gemini", "qwen", "codex", "opencode"];

/// PATH with the fake agents first and no directory that holds a real
/// agent CLI, so only the fakes can be detected.
fn path_with_fakes(env: &Env, links: &[(&str, &str)]) -> String {
    let bin = env.fake_agents(links);
    let mut dirs = vec![bin];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(
            std::env::split_paths(&p).filter(|d| !PRESETS.iter().any(|n| d.join(n).exists())),
        );
    }
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn read_config(env: &Env) -> Config {
    serde_json::from_str(&env.read(".workflow/wfx.json")).unwrap()
}

#[test]
fn init_detects_the_test_command_and_lists_agents_without_roles() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let path = path_with_fakes(&env, &[("codex", "codex"), ("claude", "claude")]);
    env.wfx()
        .env("PATH", &path)
        .arg("init")
        .assert()
        .success()
        .stdout(predicate::str::contains("Wrote .workflow/wfx.json"))
        .stdout(predicate::str::contains(
            "Test command: python -m pytest  (pytest, from pyproject.toml, conftest.py)",
        ))
        .stdout(predicate::str::contains(
            "Agent CLIs on PATH: claude, codex (listed under agents.detected; none is enabled)",
        ));
    let cfg = read_config(&env);
    assert_eq!(cfg.test.command.as_deref(), Some("python -m pytest"));
    assert_eq!(cfg.agents.detected, ["claude", "codex"]);
    assert!(cfg.agents.analysis.is_empty());
    assert_eq!(cfg.agents.fix, None);
    assert_eq!(cfg.agents.test_gen, None);
    assert!(cfg.agents.definitions.is_empty());
    // Every other field is the default, and the file passes validation.
    assert_eq!(cfg.cycle, Default::default());
    Workspace::new(&env.root).load_config().unwrap();
    env.wfx()
        .env("PATH", &path)
        .arg("validate")
        .assert()
        .success();
}

#[test]
fn init_without_markers_or_agents() {
    let env = Env::new();
    let path = path_with_fakes(&env, &[]);
    let out = env
        .wfx()
        .env("PATH", &path)
        .args(["--json", "init"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "config": ".workflow/wfx.json",
            "test_command": null,
            "framework": null,
            "signals": [],
            "detected_agents": [],
            "backup": null
        })
    );
    assert_eq!(read_config(&env), Config::default());
}

/// The config is the person's own file: wfx says it never commits it and
/// how to share it, as long as it is not committed yet.
#[test]
fn init_says_the_config_is_yours_to_commit() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    let hint = "It is your file: wfx never commits it. To share it with your team: git add .workflow/wfx.json";
    env.wfx()
        .arg("init")
        .assert()
        .success()
        .stdout(predicate::str::contains(hint));
    env.git(&["add", ".workflow/wfx.json"]);
    env.git(&["commit", "-qm", "config"]);
    env.wfx()
        .args(["init", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains(hint).not());
    // Outside a repository there is nothing to commit to.
    let plain = Env::new();
    plain.copy_fixture_project("py-calc");
    plain
        .wfx()
        .arg("init")
        .assert()
        .success()
        .stdout(predicate::str::contains("git add").not());
}

#[test]
fn init_never_overwrites_without_force_and_keeps_backups() {
    let env = Env::new();
    let path = path_with_fakes(&env, &[]);
    let mine = "{\"agents\": {\"fix\": \"claude\"}}\n";
    env.write(".workflow/wfx.json", mine);
    env.wfx()
        .env("PATH", &path)
        .arg("init")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            ".workflow/wfx.json already exists; edit it, or run `wfx init --force` to replace it",
        ));
    assert_eq!(env.read(".workflow/wfx.json"), mine);

    env.wfx()
        .env("PATH", &path)
        .args(["init", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Previous config kept as .workflow/wfx.json.bak",
        ));
    assert_eq!(env.read(".workflow/wfx.json.bak"), mine);
    assert_eq!(read_config(&env), Config::default());

    env.wfx()
        .env("PATH", &path)
        .args(["init", "--force"])
        .assert()
        .success();
    assert_eq!(
        env.read(".workflow/wfx.json.bak"),
        mine,
        "an older backup is never replaced"
    );
    assert_eq!(
        read_config_text(&env, ".workflow/wfx.json.bak.2"),
        Config::default()
    );
}

fn read_config_text(env: &Env, rel: &str) -> Config {
    serde_json::from_str(&env.read(rel)).unwrap()
}

#[test]
fn an_invalid_config_lists_every_problem_with_its_pointer() {
    let env = Env::new();
    // Schema problems are reported first and alone (the semantic checks
    // need a config that parses).
    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"analysis": "gemini", "max_cost_usd": -1, "tpyo": 1}, "cycle": {"max_iterations": 0}}"#,
    );
    let err = Workspace::new(&env.root).load_config().unwrap_err();
    let text = err.to_string();
    assert_eq!(err.exit(), wfx::Exit::Usage);
    for pointer in [
        "/agents/analysis",
        "/agents/max_cost_usd",
        "/cycle/max_iterations",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!(".workflow/wfx.json: {pointer}: "))),
            "no problem at {pointer}:\n{text}"
        );
    }
    assert!(text.contains("tpyo"), "{text}");

    env.write(
        ".workflow/wfx.json",
        r#"{"agents": {"analysis": ["gemini", "gemni"], "fix": "clade", "definitions": {"x": {"command": "run ${test.ouput}"}}}}"#,
    );
    let err = Workspace::new(&env.root).load_config().unwrap_err();
    let lines: Vec<String> = err.to_string().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines[0].starts_with(".workflow/wfx.json: /agents/analysis/1: unknown agent \"gemni\"")
    );
    assert!(lines[1].starts_with(".workflow/wfx.json: /agents/fix: unknown agent \"clade\""));
    assert!(lines[2].starts_with(
        ".workflow/wfx.json: /agents/definitions/x/command: unknown variable ${test.ouput}"
    ));

    // `wfx validate` reports the same problems and exits 2.
    env.wfx()
        .arg("validate")
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            ".workflow/wfx.json: /agents/fix: unknown agent \"clade\"",
        ))
        .stdout(predicate::str::contains("/agents/analysis/1"))
        .stdout(predicate::str::contains("/agents/definitions/x/command"));
}
