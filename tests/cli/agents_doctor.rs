//! `wfx doctor` against CLIs that answer `--version`, `--help` and the dry
//! run of their command lines with the text recorded from the real CLIs
//! (`fixtures/outputs/agents/help/`, `dry-run/`):
//! the verified versions, and Gemini CLI 0.20.0, which predates
//! `--skip-trust`. The contract suite runs it against the real CLIs too.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Env, fake_agent};
use serde_json::{Value, json};

/// A PATH of wrappers named like the CLIs, each answering with one recorded
/// version's help; then only what python3 and sh need, so no CLI installed
/// on the machine interferes.
fn path_of(env: &Env, clis: &[(&str, &str)]) -> (PathBuf, String) {
    let bin = env.tmp.path().join("clis");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, prefix) in clis {
        let path = bin.join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\nexec '{}' {prefix} \"$@\"\n",
                fake_agent("cli-help").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let python = which_python();
    let path = std::env::join_paths([
        bin.as_path(),
        python.as_path(),
        Path::new("/usr/bin"),
        Path::new("/bin"),
    ])
    .unwrap()
    .to_string_lossy()
    .into_owned();
    (bin, path)
}

fn which_python() -> PathBuf {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v python3"])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        .parent()
        .unwrap()
        .to_path_buf()
}

fn doctor(env: &Env, path: &str, json: bool) -> (Option<i32>, String) {
    let mut cmd = env.wfx();
    cmd.env("PATH", path).arg("doctor");
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const CURRENT: [(&str, &str); 5] = [
    ("claude", "claude-2.1.330"),
    ("gemini", "gemini-0.61.0"),
    ("qwen", "qwen-0.24.4"),
    ("codex", "codex-0.169.0"),
    ("opencode", "opencode-1.18.33"),
];

#[test]
fn the_verified_versions_accept_every_flag() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &json!({"agents": {"analysis": ["claude", "gemini", "qwen", "codex", "opencode"], "fix": "claude"}})
            .to_string(),
    );
    let (_bin, path) = path_of(&env, &CURRENT);
    let (code, out) = doctor(&env, &path, true);
    assert_eq!(code, Some(0), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    for (name, prefix) in CURRENT {
        let a = v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap();
        let version = prefix.rsplit('-').next().unwrap();
        assert_eq!(a["version"], version);
        assert_eq!(a["verified_version"], version);
        assert!(
            a["flags"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["accepted"] == true),
            "{a}"
        );
    }
    // claude has both roles: both roles' flags were checked.
    let claude = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "claude")
        .unwrap();
    let flags: Vec<&str> = claude["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["flag"].as_str().unwrap())
        .collect();
    assert!(flags.contains(&"--disallowedTools"), "{flags:?}");
    let modes: Vec<&str> = claude["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["flag"] == "--permission-mode")
        .map(|f| f["value"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["plan", "acceptEdits"]);
}

#[test]
fn an_old_cli_a_missing_one_and_a_bad_config_arg_are_problems_with_fixes() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &json!({"agents": {
            "analysis": ["gemini", "qwen"],
            "fix": "claude",
            "definitions": {"claude": {"preset": "claude", "args": ["--no-such-flag", "x"]}}
        }})
        .to_string(),
    );
    let (bin, path) = path_of(
        &env,
        &[
            ("claude", "claude-2.1.330"),
            ("gemini", "gemini-0.20.0"),
            ("codex", "codex-0.169.0"),
        ],
    );
    let (code, out) = doctor(&env, &path, false);
    assert_eq!(code, Some(1), "{out}");
    let shown = out.replace(&bin.display().to_string(), "<bin>");
    insta::assert_snapshot!(shown);

    let (code, out) = doctor(&env, &path, true);
    assert_eq!(code, Some(1));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], false);
    let by_name = |n: &str| {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == n)
            .unwrap()
            .clone()
    };
    let gemini = by_name("gemini");
    assert_eq!(gemini["version"], "0.20.0");
    let rejected: Vec<&str> = gemini["flags"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["accepted"] == false)
        .map(|f| f["flag"].as_str().unwrap())
        .collect();
    assert_eq!(rejected, ["--skip-trust"]);
    assert_eq!(
        gemini["problems"][0]["fix"],
        "upgrade: npm install -g @google/gemini-cli@0.61.0 (the version wfx was verified with)"
    );
    let qwen = by_name("qwen");
    assert_eq!(qwen["path"], Value::Null);
    assert_eq!(qwen["problems"][0]["message"], "`qwen` is not on PATH");
    let claude = by_name("claude");
    assert_eq!(
        claude["problems"],
        json!([{
            "message": "claude 2.1.330 does not accept `--no-such-flag` (not in `claude --help`)",
            "fix": "remove --no-such-flag from agents.definitions.claude.args"
        }, {
            "message": "claude refuses the command line of the fix role: error: unknown option '--no-such-flag'",
            "fix": "fix agents.definitions.claude.args (or .model): the CLI refuses them; see `claude --help`"
        }])
    );
    // Found on PATH but not configured: reported, never a failure.
    let codex = by_name("codex");
    assert_eq!(
        (codex["configured"].clone(), codex["problems"].clone()),
        (json!(false), json!([]))
    );
}

#[test]
fn nothing_configured_and_nothing_on_path_is_fine() {
    let env = Env::new();
    let (_bin, path) = path_of(&env, &[]);
    let (code, out) = doctor(&env, &path, false);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("No agent is configured in .workflow/wfx.json and none of claude, gemini, qwen, codex, opencode is on PATH"), "{out}");
}

#[test]
fn an_invalid_config_is_exit_2() {
    let env = Env::new();
    env.write(".workflow/wfx.json", r#"{"agents": {"fix": "nobody"}}"#);
    let (_bin, path) = path_of(&env, &[]);
    let out = env.wfx().env("PATH", path).arg("doctor").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/agents/fix"));
}

/// Each configured agent's whole command line is run the harmless way its
/// CLI allows (fixtures replay what the real CLIs printed for it): bad
/// values given in `args` are refused in the CLI's own words; the same
/// CLIs without them take their command lines.
#[test]
fn a_dry_run_of_each_command_line_reports_what_the_cli_refuses() {
    let env = Env::new();
    let defs = json!({
        "cl": {"preset": "claude", "args": ["--permission-mode", "bogus"]},
        "gem": {"preset": "gemini", "args": ["--approval-mode", "bogus"]},
        "qw": {"preset": "qwen", "args": ["--no-such-flag"]},
        "cx": {"preset": "codex", "args": ["--sandbox", "nonsense"]},
        "oc": {"preset": "opencode", "args": ["--format", "bogus"]},
    });
    env.write(
        ".workflow/wfx.json",
        &json!({"agents": {"analysis": ["gem", "qw", "cx", "oc"], "fix": "cl", "definitions": defs}})
            .to_string(),
    );
    let (_bin, path) = path_of(&env, &CURRENT);
    let (code, out) = doctor(&env, &path, true);
    assert_eq!(code, Some(1), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let agent = |n: &str| {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == n)
            .unwrap_or_else(|| panic!("{n}: {out}"))
            .clone()
    };
    for (name, program, role, reason) in [
        (
            "cl",
            "claude",
            "fix",
            "error: option '--permission-mode <mode>' argument 'bogus' is invalid.",
        ),
        (
            "gem",
            "gemini",
            "analysis",
            "Invalid values: Argument: approval-mode, Given: \"bogus\"",
        ),
        (
            "qw",
            "qwen",
            "analysis",
            "Unknown arguments: such-flag, suchFlag",
        ),
        (
            "cx",
            "codex",
            "analysis",
            "error: the argument '--sandbox <SANDBOX_MODE>' cannot be used multiple times",
        ),
        (
            "oc",
            "opencode",
            "analysis",
            "it printed its usage without a reason",
        ),
    ] {
        let a = agent(name);
        let runs = a["dry_runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{a}");
        assert_eq!(runs[0]["role"], role);
        let argv: Vec<&str> = runs[0]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(
            argv[0], program,
            "the program as configured, not a path: {argv:?}"
        );
        // Only clap's parser checks everything before acting on --help.
        assert_eq!(
            argv.last() == Some(&"--help"),
            program == "codex",
            "{argv:?}"
        );
        assert!(runs[0]["refused"].as_str().unwrap().contains(reason), "{a}");
        let problem = a["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| {
                p["message"]
                    .as_str()
                    .unwrap()
                    .contains("refuses the command line")
            })
            .unwrap_or_else(|| panic!("{a}"))
            .clone();
        assert_eq!(
            problem["message"].as_str().unwrap(),
            format!(
                "{program} refuses the command line of the {role} role: {}",
                runs[0]["refused"].as_str().unwrap()
            )
        );
        assert!(
            problem["fix"]
                .as_str()
                .unwrap()
                .starts_with(&format!("fix agents.definitions.{name}.args")),
            "{problem}"
        );
    }

    // The same CLIs as the presets call them: every command line taken.
    env.write(
        ".workflow/wfx.json",
        &json!({"agents": {"analysis": ["gemini", "qwen", "codex", "opencode"], "fix": "claude"}})
            .to_string(),
    );
    let (code, out) = doctor(&env, &path, true);
    assert_eq!(code, Some(0), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for a in v["agents"].as_array().unwrap() {
        let runs = a["dry_runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{a}");
        assert!(runs[0].get("refused").is_none(), "{a}");
    }
}

/// What a dry run gives the CLI, seen by a wrapper named like it: none of
/// the person's environment (an API key set for wfx does not reach it), a
/// HOME of its own that is also its working directory (not the project),
/// nothing on stdin, and the API base URLs on a closed port.
#[test]
fn a_dry_run_finds_no_credentials_no_project_and_no_prompt() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &json!({"agents": {"analysis": ["gemini"]}}).to_string(),
    );
    let (bin, path) = path_of(&env, &[("gemini", "gemini-0.61.0")]);
    let seen = env.tmp.path().join("seen");
    let wrapper = bin.join("gemini");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$*\" in --version|--help) ;; *) {{ env; echo \"cwd=$(pwd)\"; echo \"stdin=$(cat)\"; }} > '{}' ;; esac\nexec '{}' gemini-0.61.0 \"$@\"\n",
            seen.display(),
            fake_agent("cli-help").display()
        ),
    )
    .unwrap();
    let out = env
        .wfx()
        .env("PATH", &path)
        .env("GEMINI_API_KEY", "secret-key")
        .env("ANTHROPIC_API_KEY", "secret-key")
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let seen = std::fs::read_to_string(&seen).expect("the dry run ran the wrapper");
    assert!(!seen.contains("secret-key"), "{seen}");
    let var = |k: &str| {
        seen.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(str::to_string)
    };
    let home = var("HOME").unwrap();
    assert_eq!(var("cwd").as_deref(), Some(home.as_str()), "{seen}");
    assert_ne!(std::path::Path::new(&home), env.home, "{seen}");
    assert_ne!(std::path::Path::new(&home), env.root, "{seen}");
    assert_eq!(var("stdin").as_deref(), Some(""), "{seen}");
    assert_eq!(var("GEMINI_CLI_TRUST_WORKSPACE").as_deref(), Some("true"));
    for k in [
        "GOOGLE_GEMINI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
    ] {
        assert_eq!(var(k).as_deref(), Some("http://127.0.0.1:9"), "{k}: {seen}");
    }
    // The scratch directory is gone afterwards.
    assert!(!std::path::Path::new(&home).exists(), "{home}");
}
