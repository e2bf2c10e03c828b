//! The contract suite: wfx with the five REAL agent CLIs (installed from npm
//! at the versions of `versions.txt`) against a mock model server on
//! 127.0.0.1 (`mock_model.py`), on a one-bug pytest project (`project/`).
//!
//! Each CLI runs one `wfx test-fix-gen … -y` session in which it is the fix
//! agent and, through five analysis agents that differ only in the API key
//! the mock server reads, every failure mode: an answer without a strategy,
//! HTTP 429, HTTP 500, a server that never answers, and an analysis that
//! tries to edit a file and run a shell command before answering a valid
//! strategy. The session must complete with the fix committed, every call
//! recorded with the right reason and the envelope's cost, turns and tokens,
//! and no analysis call may change the tree.
//!
//! `scripts/test.sh` installs the CLIs (tests/real_agents/install.sh) and
//! fails when it cannot; `WFX_SKIP_REAL_AGENTS=1` skips the suite.
//! `WFX_RECORD_AGENT_OUTPUTS=fixtures/outputs/agents` re-records the raw
//! outputs the envelope parser tests read; `WFX_MOCK_DUMP=<file>` keeps
//! every request body the mock server received.

// The shared helpers of tests/cli/; this suite uses only a few of them.
#[path = "../cli/common/mod.rs"]
#[allow(dead_code)]
mod common;
mod harness;

use std::process::Command;
use std::time::{Duration, Instant};

use harness::{Mode, Setup, bin_dir, pinned_versions};
use serde_json::{Value, json};
use wfx::artifacts::config::Preset;

/// Timeouts of the failure-mode agents, in seconds, plus twice the time
/// the CLI took for a trivial call on this machine (see
/// [`Setup::warm_up`]): long enough for the CLI to start and print its
/// first retry notice, short enough to keep the suite at a few minutes.
const RETRY_TIMEOUT_S: u64 = 30;
const HANG_TIMEOUT_S: u64 = 10;

/// What each CLI's calls are recorded as, per the real CLI's behaviour.
struct Expect {
    /// The notice (a regex) the CLI prints while it retries an HTTP 429
    /// itself; `None` when it retries silently. A 429 call must be recorded
    /// as `rate_limit` when the CLI gave up and said so, or timed out after
    /// printing this; as `timeout` when it timed out without a word.
    notice_429: Option<&'static str>,
    /// The same for an HTTP 500 (`server_error`).
    notice_500: Option<&'static str>,
    /// Turns of the analysis that tried to edit (3 model requests) and of
    /// the fix (read, edit, summary), as the envelope reports them.
    turns: Option<u64>,
    /// The envelope reports a cost.
    cost: bool,
}

const MODES: [Mode; 5] = [
    Mode::NoStrategy,
    Mode::RateLimit,
    Mode::ServerError,
    Mode::Hang,
    Mode::Edit,
];

fn agent_name(preset: Preset, mode: Mode) -> String {
    format!("{}-{}", preset.as_str(), mode.suffix())
}

fn config(s: &Setup, preset: Preset, slack_s: u64) -> Value {
    let mut definitions = serde_json::Map::new();
    for mode in MODES {
        let mut def = json!({
            "preset": preset.as_str(),
            "program": s.wrapper(preset, mode).to_str().unwrap(),
        });
        match mode {
            Mode::RateLimit | Mode::ServerError => {
                def["timeout_s"] = (RETRY_TIMEOUT_S + slack_s).into()
            }
            Mode::Hang => def["timeout_s"] = (HANG_TIMEOUT_S + slack_s).into(),
            _ => {}
        }
        definitions.insert(agent_name(preset, mode), def);
    }
    json!({"agents": {
        "analysis": MODES.iter().map(|m| agent_name(preset, *m)).collect::<Vec<_>>(),
        "fix": preset.as_str(),
        "default_timeout_s": 300,
        "definitions": definitions,
    }})
}

fn first_chars(s: &str, n: usize) -> String {
    s.trim().chars().take(n).collect()
}

/// The whole contract for one CLI (see the module docs).
fn contract(preset: Preset, expect: Expect) {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    let name = preset.as_str();
    let warm = s.warm_up(preset);
    let slack_s = 2 * warm.as_secs_f64().ceil() as u64;
    eprintln!("{name}: a trivial call took {warm:.1?}; failure-mode timeouts get {slack_s} s more");
    s.write_config(&config(&s, preset, slack_s));
    let started = Instant::now();
    let out = s.fix_session(&[], Duration::from_secs(900));
    let took = started.elapsed();
    eprintln!("{name}: the session took {took:.1?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: the session did not complete\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for (file, recorded) in [
        ("analysis-agent-output.md", format!("{name}-review.txt")),
        (
            &format!("iteration-1-{name}-edit-cli-output.txt"),
            format!("{name}-analysis.txt"),
        ),
        (
            &format!("iteration-1-{name}-429-cli-output.txt"),
            format!("{name}-429.txt"),
        ),
        (
            &format!("iteration-1-{name}-500-cli-output.txt"),
            format!("{name}-500.txt"),
        ),
        ("iteration-1-fix-cli-output.txt", format!("{name}-fix.txt")),
    ] {
        s.record(file, &recorded);
    }

    // The session completed and was archived.
    let dir = s.session_dir();
    assert!(
        dir.parent().unwrap().ends_with(".workflow/archives"),
        "{name}: {}",
        dir.display()
    );

    // The fix, made through the CLI's own edit tool, is on disk and
    // committed; the hostile analysis changed nothing.
    let head_ops = s.env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(
        head_ops.contains("    if b == 0:\n        return None\n"),
        "{name}: {head_ops}"
    );
    assert!(
        head_ops.contains("    return a + b"),
        "{name}: add() was changed: {head_ops}"
    );
    assert_eq!(
        std::fs::read_to_string(s.env.root.join("calc/ops.py")).unwrap(),
        head_ops
    );
    let fix_commit = s.env.git(&["log", "--format=%H %s", "--", "calc/ops.py"]);
    assert!(
        fix_commit
            .lines()
            .next()
            .unwrap_or("")
            .contains("test-cycle: iteration 1"),
        "{name}: {fix_commit}"
    );
    assert_eq!(
        s.env.git(&["status", "--porcelain", "--", "calc", "tests"]),
        ""
    );
    let shell_marks: Vec<_> = walkdir::WalkDir::new(&s.env.root)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name() == "MOCK-SHELL-RAN")
        .map(|e| e.path().display().to_string())
        .collect();
    assert!(
        shell_marks.is_empty(),
        "{name}: an analysis ran a shell command: {shell_marks:?}"
    );

    // Every call is recorded, with the right reason.
    let history: Value = serde_json::from_str(&s.process_file("fix-history.json")).unwrap();
    let calls = history["agent_calls"].as_array().unwrap();
    let got: Vec<(Option<u64>, String, String)> = calls
        .iter()
        .map(|c| {
            (
                c["iteration"].as_u64(),
                c["agent"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // What a 429 or 500 call must be recorded as, from what the CLI did.
    let transport = |mode: Mode, index: usize| -> &'static str {
        let (kind, notice) = match mode {
            Mode::RateLimit => ("rate_limit", expect.notice_429),
            _ => ("server_error", expect.notice_500),
        };
        let out = s.process_file(&format!(
            "iteration-1-{}-cli-output.txt",
            agent_name(preset, mode)
        ));
        let noticed = notice.is_some_and(|re| regex::Regex::new(re).unwrap().is_match(&out));
        let path = if calls[index]["timed_out"] != true {
            "the CLI gave up and said why"
        } else if noticed {
            "timed out after the CLI printed its retry notice"
        } else {
            "timed out while the CLI retried silently"
        };
        let want = if calls[index]["timed_out"] != true || noticed {
            kind
        } else {
            "timeout"
        };
        eprintln!("{name}: HTTP {}: {path} → {want}", &mode.suffix());
        want
    };
    let want: Vec<(Option<u64>, String, String)> = [
        (None, agent_name(preset, Mode::NoStrategy), "accepted"),
        (
            Some(1),
            agent_name(preset, Mode::NoStrategy),
            "no_valid_strategy",
        ),
        (
            Some(1),
            agent_name(preset, Mode::RateLimit),
            transport(Mode::RateLimit, 2),
        ),
        (
            Some(1),
            agent_name(preset, Mode::ServerError),
            transport(Mode::ServerError, 3),
        ),
        (Some(1), agent_name(preset, Mode::Hang), "timeout"),
        (Some(1), agent_name(preset, Mode::Edit), "accepted"),
        (Some(1), name.to_string(), "completed"),
    ]
    .into_iter()
    .map(|(i, a, o)| (i, a, o.to_string()))
    .collect();
    if got != want {
        // Say what the CLI did: how often it reached the mock server with
        // each key, and how its output ended (a slow machine shows here as
        // a CLI that never got to print its retry notice).
        let requests = s.mock.requests();
        let mut why = String::new();
        for mode in MODES {
            let n = requests
                .iter()
                .filter(|r| r["mode"] == mode.suffix())
                .count();
            let file = if mode == Mode::NoStrategy {
                "iteration-1-cli-output.txt".to_string()
            } else {
                format!("iteration-1-{}-cli-output.txt", agent_name(preset, mode))
            };
            let out = s.process_file(&file);
            let tail: Vec<&str> = out.lines().rev().take(3).collect();
            why.push_str(&format!(
                "\n  {}: {n} request(s) reached the mock server; output ends: {:?}",
                agent_name(preset, mode),
                tail
            ));
        }
        panic!("{name}: agent_calls\n  got:  {got:?}\n  want: {want:?}{why}");
    }
    let hang = &calls[4];
    assert_eq!(hang["timed_out"], true);
    assert!(
        hang["duration_ms"].as_u64().unwrap() < (HANG_TIMEOUT_S + slack_s + 20) * 1000,
        "{name}: the hung call was not ended in time: {hang}"
    );

    // The envelope's fields of the two calls that answered after tools.
    for c in [&calls[5], &calls[6]] {
        assert_eq!(c["turns"].as_u64(), expect.turns, "{name}: turns of {c}");
        assert_eq!(
            c["cost_usd"].as_f64().is_some_and(|x| x > 0.0),
            expect.cost,
            "{name}: cost of {c}"
        );
        assert!(
            c["input_tokens"].as_u64().is_some_and(|n| n > 0)
                && c["output_tokens"].as_u64().is_some_and(|n| n > 0),
            "{name}: tokens of {c}"
        );
    }

    // Reasons as people read them: no escape sequences, the retry named.
    let analysis_md = s.process_file("iteration-1-analysis.md");
    assert!(!analysis_md.contains('\u{1b}'), "{name}: {analysis_md}");
    assert!(
        analysis_md.contains(&format!(
            "- Analysis by: {} (quality: agent)",
            agent_name(preset, Mode::Edit)
        )),
        "{name}: {analysis_md}"
    );
    for (mode, outcome) in [
        (Mode::RateLimit, calls[2]["outcome"].as_str().unwrap()),
        (Mode::ServerError, calls[3]["outcome"].as_str().unwrap()),
    ] {
        if outcome != "timeout" {
            let line = analysis_md
                .lines()
                .find(|l| l.contains(&format!("{}: ", agent_name(preset, mode))))
                .unwrap_or_default();
            let shown = if outcome == "rate_limit" {
                "rate limited: "
            } else {
                "server error: "
            };
            assert!(line.contains(shown), "{name}: {line}");
        }
    }

    // Phase 3 took the first answer long enough to be a review.
    let session: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("workflow-session.json")).unwrap())
            .unwrap();
    assert_eq!(
        session["phases"][2]["agent_review"]["agent"],
        agent_name(preset, Mode::NoStrategy)
    );

    // What the mock server saw: wfx's prompts verbatim, every failure mode
    // reached, the hostile tool calls answered by the CLI (denied), the
    // fix's tool calls made.
    let requests = s.mock.requests();
    let prompt = s.process_file("iteration-1-prompt.md");
    let fix_prompt = s.process_file("iteration-1-fix-prompt.md");
    let seen = |mode: &str, kind: &str| -> Vec<&Value> {
        requests
            .iter()
            .filter(|r| r["mode"] == mode && r["kind"] == kind)
            .collect()
    };
    for r in seen("edit", "analysis") {
        assert_eq!(
            r["prompt_head"].as_str().unwrap(),
            first_chars(&prompt, 120),
            "{name}: the analysis prompt arrived changed"
        );
    }
    let hostile_steps: Vec<u64> = seen("edit", "analysis")
        .iter()
        .filter_map(|r| r["step"].as_u64())
        .collect();
    assert!(
        [0, 1, 2].iter().all(|s| hostile_steps.contains(s)),
        "{name}: the hostile analysis did not go edit → shell → answer: {hostile_steps:?}"
    );
    let fix_requests = seen("ok", "fix");
    assert!(!fix_requests.is_empty(), "{name}: no fix request");
    for r in &fix_requests {
        assert_eq!(
            r["prompt_head"].as_str().unwrap(),
            first_chars(&fix_prompt, 120)
        );
    }
    for mode in ["429", "500", "hang", "nostrategy"] {
        assert!(
            requests.iter().any(|r| r["mode"] == mode),
            "{name}: no request with the {mode} key reached the mock server"
        );
    }
}

#[test]
fn claude_code() {
    contract(
        Preset::Claude,
        Expect {
            notice_429: Some(r#""subtype":"api_retry"[^\n]*"error_status":429"#),
            notice_500: Some(r#""subtype":"api_retry"[^\n]*"error_status":5\d\d"#),
            turns: Some(3),
            cost: true,
        },
    );
}

#[test]
fn gemini_cli() {
    contract(
        Preset::Gemini,
        Expect {
            notice_429: Some(r"failed with status 429"),
            notice_500: Some(r"failed with status 5\d\d"),
            turns: None,
            cost: false,
        },
    );
}

#[test]
fn qwen_code() {
    contract(
        Preset::Qwen,
        Expect {
            notice_429: Some(r"Retrying in \d+s \(attempt \d+/\d+\): \[API Error: 429"),
            notice_500: Some(r"Retrying in \d+s \(attempt \d+/\d+\): \[API Error: 5\d\d"),
            turns: Some(3),
            cost: false,
        },
    );
}

#[test]
fn codex() {
    contract(
        Preset::Codex,
        Expect {
            notice_429: Some(
                r"Reconnecting\.\.\. \d+/\d+ \(exceeded retry limit, last status: 429",
            ),
            notice_500: Some(
                r"Reconnecting\.\.\. \d+/\d+ \(We.re currently experiencing high demand",
            ),
            turns: Some(1),
            cost: false,
        },
    );
}

#[test]
fn opencode() {
    contract(
        Preset::Opencode,
        Expect {
            notice_429: None,
            notice_500: None,
            turns: Some(3),
            cost: true,
        },
    );
}

/// An analysis agent that does edit: Claude Code in `acceptEdits` as a
/// custom command (the presets never let an analysis edit). The engine
/// undoes what a read-only call changed, records `tamper: tree_edited` and
/// counts the call as failed, so the built-in analyzer answers instead
/// (DESIGN.md §10.2, issue #15 case 4).
#[test]
fn an_analysis_that_edits_anyway_is_undone_and_recorded() {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    let wrapper = s.wrapper(Preset::Claude, Mode::Edit);
    s.write_config(&json!({"agents": {
        "analysis": ["claude-editing"],
        "fix": "claude",
        "definitions": {"claude-editing": {"command": [
            wrapper.to_str().unwrap(), "-p", "--output-format", "text", "--permission-mode", "acceptEdits"
        ]}}
    }}));
    let out = s.fix_session(&["--max-iterations", "1"], Duration::from_secs(600));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let history: Value = serde_json::from_str(&s.process_file("fix-history.json")).unwrap();
    let analysis = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["role"] == "analysis" && c["iteration"] == 1)
        .cloned()
        .unwrap_or_else(|| panic!("no phase-5 analysis call: {history}\n{stderr}"));
    assert_ne!(analysis["outcome"], "accepted", "{analysis}");
    assert_eq!(analysis["tamper"], "tree_edited", "{analysis}");
    // The analysis's edit (add() made to subtract) is undone, and so is the
    // file its `touch` created.
    let ops = std::fs::read_to_string(s.env.root.join("calc/ops.py")).unwrap();
    assert!(!ops.contains("    return a - b"), "{ops}");
    assert!(!s.env.root.join("MOCK-SHELL-RAN").exists());
    // The loop goes on with the built-in analysis: completed or blocked at
    // its one attempt, never an error.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
}

/// Two real CLIs as the fix candidates of one step (DESIGN.md §11.4,
/// issue #28): `agents.fix: ["claude", "codex"]`, `--candidates 2`. Claude
/// Code, candidate 1, is scripted to fix the failing test and break
/// `add()` on the way (mock key `break`); Codex, candidate 2, to make the
/// fix alone. Each works in its own checkout outside the project, the
/// tests run there choose Codex's (no regression beats the earlier
/// candidate), and the session completes in one step with that diff
/// committed under a `Wfx-Candidate: 2` trailer. Nothing of the
/// candidates is left: no worktree, no ref, no checkout, no process.
#[test]
fn two_real_clis_as_candidates_the_tests_choose_the_one_that_breaks_nothing() {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    s.write_config(&json!({"agents": {
        "fix": ["claude", "codex"],
        "default_timeout_s": 300,
        "definitions": {"claude": {
            "preset": "claude",
            "program": s.wrapper(Preset::Claude, Mode::Break).to_str().unwrap(),
        }},
    }}));
    let out = s.fix_session(&["--candidates", "2"], Duration::from_secs(900));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the session did not complete\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let dir = s.session_dir();
    assert!(dir.parent().unwrap().ends_with(".workflow/archives"));
    let session = dir.file_name().unwrap().to_string_lossy().into_owned();

    // One step, two candidates with their verdicts, Codex's applied.
    let history: Value = serde_json::from_str(&s.process_file("fix-history.json")).unwrap();
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "one step: {history}");
    let e = &entries[0];
    let got: Vec<(&str, &str, u64, Vec<&str>)> = e["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["agent"].as_str().unwrap(),
                c["verdict"].as_str().unwrap(),
                c["fixed"].as_u64().unwrap(),
                c["broken"]
                    .as_array()
                    .map(|b| b.iter().map(|t| t.as_str().unwrap()).collect())
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "claude",
                "regression",
                1,
                vec!["tests/test_ops.py::test_add"]
            ),
            ("codex", "chosen", 1, vec![]),
        ],
        "{e}"
    );
    assert_eq!(e["candidate"], 2, "{e}");
    assert_eq!(e["agent"], "codex", "{e}");
    for c in e["candidates"].as_array().unwrap() {
        let ms = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k}: {c}"));
        assert!(
            ms("agent_ms") > 0 && ms("tests_ms") > 0,
            "each candidate's call and test runs are timed: {c}"
        );
        assert!(ms("duration_ms") >= ms("agent_ms") + ms("tests_ms"), "{c}");
    }

    // The committed diff is Codex's: the guard, add() untouched.
    let fix = s
        .env
        .git(&["log", "-1", "--format=%H", "--", "calc/ops.py"]);
    let fix = fix.trim();
    let message = s.env.git(&["log", "-1", "--format=%B", fix]);
    assert!(message.starts_with("test-cycle: iteration 1"), "{message}");
    assert!(message.contains("\nWfx-Candidate: 2\n"), "{message}");
    let head_ops = s.env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(
        head_ops.contains("    if b == 0:\n        return None\n")
            && head_ops.contains("    return a + b"),
        "{head_ops}"
    );
    assert_eq!(
        std::fs::read_to_string(s.env.root.join("calc/ops.py")).unwrap(),
        head_ops
    );
    assert_eq!(
        s.env
            .git(&["log", "--format=%s", "--", "calc/ops.py"])
            .lines()
            .count(),
        2,
        "one fix commit over the initial one"
    );
    assert_eq!(
        s.env.git(&["status", "--porcelain", "--", "calc", "tests"]),
        ""
    );

    // Each CLI made its edits in a checkout of its own, not in the project.
    let requests = s.mock.requests();
    let cwds = |mode: &str| -> std::collections::BTreeSet<String> {
        requests
            .iter()
            .filter(|r| r["mode"] == mode && r["kind"] == "fix")
            .map(|r| r["cwd"].as_str().unwrap().to_string())
            .collect()
    };
    let (claude_cwd, codex_cwd) = (cwds("break"), cwds("ok"));
    assert_eq!(claude_cwd.len(), 1, "claude's fix requests: {claude_cwd:?}");
    assert_eq!(codex_cwd.len(), 1, "codex's fix requests: {codex_cwd:?}");
    let project = s.env.root.display().to_string();
    for cwd in claude_cwd.iter().chain(&codex_cwd) {
        assert!(!cwd.starts_with(&project), "{cwd} is in the project");
        assert!(
            !std::path::Path::new(cwd).exists(),
            "{cwd}: a candidate checkout is left"
        );
    }
    assert_ne!(claude_cwd, codex_cwd);

    // Nothing of the candidates is left.
    assert_eq!(
        s.env.git(&["worktree", "list"]).lines().count(),
        1,
        "{}",
        s.env.git(&["worktree", "list"])
    );
    let refs = s
        .env
        .git(&["for-each-ref", "--format=%(refname)", "refs/wfx"]);
    assert!(!refs.contains("/candidates"), "{refs}");
    for index in 1..=2 {
        let checkout = wfx::git::candidate_dir(&s.env.root, &session, index);
        assert!(!checkout.exists(), "{} is left", checkout.display());
    }
    let left = processes_with_home(&s.env.home);
    assert!(left.is_empty(), "processes left: {left:?}");

    // `wfx status` shows both, the chosen one marked.
    let status = s.wfx().args(["status", &session]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("candidate 1 · claude, conservative · regression")
            && status.contains("* candidate 2 · codex, aggressive · chosen"),
        "{status}"
    );
}

/// Processes whose environment has `HOME=<home>`: what the suite's CLIs
/// (and wfx) run as. Other tests' processes have their own HOME.
fn processes_with_home(home: &std::path::Path) -> Vec<String> {
    let want = format!("HOME={}", home.display());
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            left.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    left
}

/// `wfx doctor` with the real CLIs: every preset configured, each found at
/// its pinned version, every flag wfx passes accepted by its `--help`.
#[test]
fn doctor_accepts_every_flag_of_the_pinned_versions() {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    s.write_config(&json!({"agents": {
        "analysis": ["gemini", "qwen", "codex", "opencode"],
        "fix": "claude",
    }}));
    let out = s.wfx().args(["doctor", "--json"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["ok"], true);
    let agents = v["agents"].as_array().unwrap();
    let pins = pinned_versions();
    assert_eq!(agents.len(), 5, "{stdout}");
    for (preset, version) in pins {
        let a = agents
            .iter()
            .find(|a| a["name"] == preset.as_str())
            .unwrap_or_else(|| panic!("{} missing: {stdout}", preset.as_str()));
        assert_eq!(a["version"], version.as_str(), "{a}");
        assert_eq!(a["verified_version"], version.as_str(), "{a}");
        assert_eq!(a["configured"], true);
        let flags = a["flags"].as_array().unwrap();
        assert!(!flags.is_empty());
        assert!(flags.iter().all(|f| f["accepted"] == true), "{a}");
        // The whole command line, run dry: taken.
        let runs = a["dry_runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{a}");
        assert!(runs[0].get("refused").is_none(), "{a}");
        assert_eq!(a["problems"], json!([]));
    }
}

/// `wfx doctor`'s dry run with the real CLIs and bad values in `args`:
/// each CLI refuses its command line and doctor says so in the CLI's own
/// words (codex's `--sandbox nonsense`, gemini's `--approval-mode bogus`
/// of issue 31, and the like for the others).
#[test]
fn doctor_dry_runs_find_what_each_real_cli_refuses() {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    s.write_config(&json!({"agents": {
        "analysis": ["gem", "qw", "oc", "cl"],
        "fix": "cx",
        "definitions": {
            "cx": {"preset": "codex", "args": ["--sandbox", "nonsense"]},
            "gem": {"preset": "gemini", "args": ["--approval-mode", "bogus"]},
            "qw": {"preset": "qwen", "args": ["--output-format", "yaml"]},
            "oc": {"preset": "opencode", "args": ["--no-such-flag"]},
            "cl": {"preset": "claude", "args": ["--permission-mode", "bogus"]}
        }
    }}));
    let out = s.wfx().args(["doctor", "--json"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    for (name, reason) in [
        (
            "cx",
            "error: the argument '--sandbox <SANDBOX_MODE>' cannot be used multiple times",
        ),
        ("gem", "Argument: approval-mode, Given: \"bogus\""),
        ("qw", "Argument: output-format, Given: \"yaml\""),
        ("oc", "it printed its usage without a reason"),
        (
            "cl",
            "error: option '--permission-mode <mode>' argument 'bogus' is invalid",
        ),
    ] {
        let a = v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {stdout}"));
        let refused = a["dry_runs"][0]["refused"]
            .as_str()
            .unwrap_or_else(|| panic!("{a}"));
        assert!(refused.contains(reason), "{name}: {refused}");
        assert!(
            a["problems"]
                .to_string()
                .contains("refuses the command line"),
            "{a}"
        );
    }
}

/// `wfx doctor` with the real CLIs and the configs of issue 31: codex with
/// `--sandbox nonsense` (the preset passes `--sandbox` already; codex exits
/// 2), gemini with `--approval-mode bogus` (exits 1) are problems; the Node
/// version claude-code and qwen declare (`engines.node`) is checked
/// against the node on PATH.
#[test]
fn doctor_finds_clashing_flags_and_the_declared_node() {
    let Some(bin) = bin_dir() else { return };
    let s = Setup::new(&bin);
    s.write_config(&json!({"agents": {
        "analysis": ["gem", "qwen"],
        "fix": "cx",
        "definitions": {
            "cx": {"preset": "codex", "args": ["--sandbox", "nonsense"]},
            "gem": {"preset": "gemini", "args": ["--approval-mode", "bogus"]},
            "claude": {"preset": "claude"}
        }
    }}));
    let out = s.wfx().args(["doctor", "--json"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let agent = |name: &str| {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {stdout}"))
            .clone()
    };
    let problems = |name: &str| agent(name)["problems"].to_string();
    assert!(
        problems("cx").contains(
            "passes `--sandbox`, which the preset already passes (`--sandbox workspace-write`)"
        ),
        "{stdout}"
    );
    assert!(
        problems("gem").contains("passes `--approval-mode`, which the preset already passes"),
        "{stdout}"
    );
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    for name in ["claude", "qwen"] {
        let a = agent(name);
        let range = a["node_required"].as_str().unwrap_or_else(|| panic!("{a}"));
        assert!(range.starts_with(">=22"), "{a}");
        let major: u32 = node
            .trim_start_matches('v')
            .split('.')
            .next()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0);
        let warned = a["warnings"].to_string().contains("declares Node.js >=22");
        assert_eq!(warned, major < 22, "node {node}: {a}");
    }
}

/// The versions wfx names as verified are the ones the suite installs.
#[test]
fn presets_name_the_pinned_versions() {
    let pins = pinned_versions();
    assert_eq!(pins.len(), Preset::ALL.len());
    for (preset, version) in pins {
        assert_eq!(
            wfx::agents::presets::info(preset).verified,
            version,
            "{}: src/agents/presets.rs and tests/real_agents/versions.txt disagree",
            preset.as_str()
        );
    }
}
