//! Hardening (issue #10): every artifact kind damaged five ways
//! (truncated, a field of the wrong type, a required field missing,
//! non-UTF-8, absurdly large), run through every command that reads it.
//! Each case asserts the exit code (DESIGN.md §1), that the message names
//! the file and the JSON pointer, and that no file of the project changed
//! except those the command may write (listed per command). One test per
//! artifact kind; each iterates over damage × command. The decisions are
//! in docs/hardening.md.

use crate::common;

use std::path::Path;

use common::{Env, changed_files, digest_tree};
use serde_json::{Value, json};

const S: &str = "WFS-test-harden-the-calculator";
const A: &str = ".workflow/active/WFS-test-harden-the-calculator";
const R: &str = ".workflow/active/WFS-run-harden";

/// A project holding one of everything: a test session paused for a
/// manual fix after a fix attempt by an agent (task files, IMPL-fix-1 and
/// 2, iteration state, results, fix history with an agent call, context
/// package), an archived session (so a
/// manifest exists), a config, and a `wfx run` session killed mid-run (a
/// resumable run-state.json).
fn base() -> Env {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({
            "test": {"command": "printf 'TAP version 13\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n'; exit 1"},
            "agents": {"fix": "noop", "definitions": {"noop": {"command": ["sh", "-c", "cat > /dev/null"]}}},
            "cycle": {"max_iterations": 1}
        }))
        .unwrap(),
    );
    env.write("README.md", "calculator\n");
    env.wfx()
        .args(["-q", "test-fix-gen", "Old work", "--plan-only"])
        .assert()
        .code(0);
    env.wfx()
        .args(["-q", "session", "complete", "WFS-test-old-work"])
        .assert()
        .code(0);
    // One attempt by the no-op fixer (blocked at the limit), then resumed
    // by a person in manual mode: awaiting the second fix.
    env.wfx()
        .args(["-q", "test-fix-gen", "Harden the calculator"])
        .assert()
        .code(1);
    env.wfx()
        .args(["-q", "session", "resume", S])
        .assert()
        .code(0);
    env.wfx()
        .args([
            "-q",
            "test-cycle-execute",
            "--resume-session",
            S,
            "--fix-agent",
            "manual",
            "--max-iterations",
            "3",
        ])
        .assert()
        .code(3);
    env.write(
        "wf.yml",
        "name: harden\ncommands:\n  - shell: \"echo one\"\n  - shell: \"test -f .marker || { touch .marker; kill -9 $PPID; }\"\n  - shell: \"echo three\"\n",
    );
    let out = env.wfx().args(["run", "wf.yml"]).output().unwrap();
    assert_eq!(out.status.code(), None, "the run was killed mid-step");
    for f in [
        "/workflow-session.json",
        "/.task/IMPL-002.json",
        "/.task/IMPL-fix-1.json",
        "/.process/iteration-state.json",
        "/.process/test-results.json",
        "/.process/fix-history.json",
        "/.process/context-package.json",
    ] {
        assert!(env.root.join(format!("{A}{f}")).is_file(), "{f}");
    }
    assert!(env.root.join(".workflow/archives/manifest.json").is_file());
    assert!(env.root.join(R).join(".process/run-state.json").is_file());
    env
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Damage {
    Truncated,
    WrongType,
    MissingField,
    NonUtf8,
    Huge,
}

const ALL_DAMAGE: [Damage; 5] = [
    Damage::Truncated,
    Damage::WrongType,
    Damage::MissingField,
    Damage::NonUtf8,
    Damage::Huge,
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmd {
    Status,
    Validate,
    ValidateAll,
    List,
    Show,
    Complete,
    Resume,
    Cycle,
    Gen,
    Report,
    RunResume,
    StatusRun,
    ReportRun,
    Test,
}

impl Cmd {
    fn args(self, out_html: &Path) -> Vec<String> {
        let v: Vec<&str> = match self {
            Cmd::Status => vec!["status", S],
            Cmd::Validate => vec!["validate", S],
            Cmd::ValidateAll => vec!["validate"],
            Cmd::List => vec!["session", "list", "--all"],
            Cmd::Show => vec!["session", "show", S],
            Cmd::Complete => vec!["session", "complete", S],
            Cmd::Resume => vec!["session", "resume", S],
            Cmd::Cycle => vec!["test-cycle-execute", "--resume-session", S],
            Cmd::Gen => vec!["test-fix-gen", S],
            Cmd::Report => vec!["report", S, "--html", out_html.to_str().unwrap()],
            Cmd::RunResume => vec!["run", "wf.yml", "--resume"],
            Cmd::StatusRun => vec!["status", "WFS-run-harden"],
            Cmd::ReportRun => vec![
                "report",
                "WFS-run-harden",
                "--html",
                out_html.to_str().unwrap(),
            ],
            Cmd::Test => vec!["test"],
        };
        v.into_iter().map(String::from).collect()
    }

    /// Files the command may write even when it refuses: the session lock
    /// (not an artifact: its holder's pid, emptied on release).
    fn may_write(self) -> Vec<String> {
        match self {
            Cmd::Complete | Cmd::Resume | Cmd::Cycle | Cmd::Gen => vec![format!("{A}/.lock")],
            Cmd::RunResume => vec![format!("{R}/.lock")],
            _ => vec![],
        }
    }
}

/// One artifact kind: where it is, how to damage it, and what each command
/// that reads it must do (exit code; the pointer the message names comes
/// from the damage).
struct Kind {
    file: String,
    /// JSON pointer set to a value of the wrong type.
    wrong: (&'static str, Value),
    /// JSON pointer of a required field to delete, and the pointer the
    /// schema reports the missing field at (its parent).
    missing: (&'static str, &'static str),
    /// Expected message prefix for the missing field (default: the schema's
    /// "is a required property").
    missing_message: Option<&'static str>,
    commands: Vec<(Cmd, i32)>,
}

/// Commands that change a session: all refuse a session with any damaged
/// artifact (exit 2) before writing.
const WRITERS: [(Cmd, i32); 4] = [
    (Cmd::Complete, 2),
    (Cmd::Resume, 2),
    (Cmd::Cycle, 2),
    (Cmd::Gen, 2),
];

fn session_kind(file: &str, readers: &[(Cmd, i32)]) -> Vec<(Cmd, i32)> {
    let mut v = vec![(Cmd::Validate, 2)];
    v.extend_from_slice(readers);
    v.extend_from_slice(&WRITERS);
    let _ = file;
    v
}

fn kind(name: &str) -> Kind {
    match name {
        "workflow-session.json" => Kind {
            file: format!("{A}/workflow-session.json"),
            wrong: ("/status", json!(12345)),
            missing: ("/session_id", ""),
            missing_message: None,
            commands: session_kind(
                name,
                &[
                    (Cmd::Status, 2),
                    (Cmd::Show, 2),
                    (Cmd::Report, 2),
                    // Listing goes on past a broken session: the row says
                    // "invalid" and a warning names the file.
                    (Cmd::List, 0),
                ],
            ),
        },
        "task" => Kind {
            file: format!("{A}/.task/IMPL-002.json"),
            wrong: ("/status", json!(12345)),
            missing: ("/id", ""),
            missing_message: None,
            commands: session_kind(name, &[(Cmd::Status, 2), (Cmd::Show, 2), (Cmd::Report, 2)]),
        },
        "IMPL-fix-N" => Kind {
            file: format!("{A}/.task/IMPL-fix-1.json"),
            wrong: ("/context/fix_strategy/confidence_score", json!("high")),
            missing: (
                "/context/fix_strategy/modification_points",
                "/context/fix_strategy",
            ),
            missing_message: None,
            commands: session_kind(name, &[(Cmd::Status, 2), (Cmd::Show, 2), (Cmd::Report, 2)]),
        },
        // status and report show what they can of a session whose
        // secondary artifacts are damaged: exit 0, a warning names the file.
        "iteration-state.json" => Kind {
            file: format!("{A}/.process/iteration-state.json"),
            wrong: ("/iterations", json!("many")),
            missing: ("/next_action", ""),
            missing_message: None,
            commands: session_kind(name, &[(Cmd::Status, 0), (Cmd::Report, 0)]),
        },
        "test-results.json" => Kind {
            file: format!("{A}/.process/test-results.json"),
            wrong: ("/failures", json!(12345)),
            missing: ("/total", ""),
            missing_message: None,
            commands: session_kind(name, &[(Cmd::Status, 0), (Cmd::Report, 0)]),
        },
        "fix-history.json" => Kind {
            file: format!("{A}/.process/fix-history.json"),
            wrong: ("/entries", json!({})),
            missing: ("/agent_calls/0/agent", "/agent_calls/0"),
            missing_message: None,
            commands: session_kind(name, &[(Cmd::Status, 0), (Cmd::Report, 0)]),
        },
        "context-package.json" => Kind {
            file: format!("{A}/.process/context-package.json"),
            wrong: ("/metadata", json!("x")),
            missing: ("/metadata", ""),
            missing_message: None,
            commands: session_kind(name, &[]),
        },
        "manifest.json" => Kind {
            file: ".workflow/archives/manifest.json".into(),
            // CCW's array shape (DESIGN.md §10.6).
            wrong: ("/0/session_id", json!(1)),
            missing: ("/0/session_id", "/0"),
            missing_message: None,
            commands: vec![(Cmd::ValidateAll, 2), (Cmd::Complete, 2)],
        },
        "wfx.json" => Kind {
            file: ".workflow/wfx.json".into(),
            wrong: ("/cycle/max_iterations", json!("ten")),
            missing: (
                "/agents/definitions/noop/command",
                "/agents/definitions/noop",
            ),
            missing_message: Some(
                "needs `preset` (claude, gemini, qwen, codex, opencode) or `command`",
            ),
            commands: vec![
                (Cmd::ValidateAll, 2),
                (Cmd::Test, 2),
                (Cmd::Cycle, 2),
                (Cmd::Gen, 2),
                (Cmd::RunResume, 2),
                // The view falls back to the default thresholds and says so.
                (Cmd::Status, 0),
                (Cmd::Report, 0),
            ],
        },
        "run-state.json" => Kind {
            file: format!("{R}/.process/run-state.json"),
            wrong: ("/steps", json!(5)),
            missing: ("/steps", ""),
            missing_message: None,
            commands: vec![
                (Cmd::ValidateAll, 2),
                (Cmd::RunResume, 2),
                // The views of a run say what they cannot read.
                (Cmd::StatusRun, 0),
                (Cmd::ReportRun, 0),
            ],
        },
        other => panic!("no kind {other}"),
    }
}

/// Damage `file` in place; returns the pointer and message fragment the
/// error must show.
fn damage(path: &Path, k: &Kind, d: Damage) -> (String, String) {
    let bytes = std::fs::read(path).unwrap();
    match d {
        Damage::Truncated => {
            std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
            ("/".into(), "invalid JSON at line".into())
        }
        Damage::WrongType => {
            let mut v: Value = serde_json::from_slice(&bytes).unwrap();
            *v.pointer_mut(k.wrong.0)
                .unwrap_or_else(|| panic!("{}: no {}", k.file, k.wrong.0)) = k.wrong.1.clone();
            std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
            (k.wrong.0.into(), "is not of type".into())
        }
        Damage::MissingField => {
            let mut v: Value = serde_json::from_slice(&bytes).unwrap();
            let (parent, key) = k.missing.0.rsplit_once('/').unwrap();
            let removed = match v.pointer_mut(parent).unwrap() {
                Value::Object(m) => m.remove(key),
                _ => None,
            };
            assert!(removed.is_some(), "{}: no {}", k.file, k.missing.0);
            std::fs::write(path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
            let at = if k.missing.1.is_empty() {
                "/"
            } else {
                k.missing.1
            };
            (
                at.into(),
                k.missing_message.unwrap_or("is a required property").into(),
            )
        }
        Damage::NonUtf8 => {
            // Inside the first string value: still "JSON", not UTF-8.
            let i = bytes.iter().position(|&b| b == b'"').unwrap() + 1;
            let mut out = bytes[..i].to_vec();
            out.extend_from_slice(b"\xff\xfe");
            out.extend_from_slice(&bytes[i..]);
            std::fs::write(path, out).unwrap();
            ("/".into(), "not valid UTF-8".into())
        }
        Damage::Huge => {
            // Sparse: 300 MiB to the reader, nothing on disk.
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .unwrap()
                .set_len(300 << 20)
                .unwrap();
            (
                "/".into(),
                "file is 300.0 MiB; wfx reads JSON artifacts of at most 256 MiB".into(),
            )
        }
    }
}

/// Copy the base project to a fresh directory for one case.
fn fresh(base: &Env) -> Env {
    let env = Env::new();
    std::fs::remove_dir_all(&env.root).unwrap();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(&base.root)
        .arg(&env.root)
        .status()
        .unwrap();
    assert!(status.success());
    env
}

/// Run every damage × command case of the named kinds on copies of one
/// base project; report all failing cases at once.
fn check_kinds(names: &[&str]) {
    let base = base();
    let mut failures = Vec::new();
    let mut cases = 0;
    for name in names {
        let k = kind(name);
        for d in ALL_DAMAGE {
            for &(cmd, want) in &k.commands {
                cases += 1;
                failures.extend(check_case(&base, name, &k, d, cmd, want));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn check_case(base: &Env, name: &str, k: &Kind, d: Damage, cmd: Cmd, want: i32) -> Vec<String> {
    let mut failures = Vec::new();
    let env = fresh(base);
    let (pointer, fragment) = damage(&env.root.join(&k.file), k, d);
    let before = digest_tree(&env.root);
    let html = env.tmp.path().join("report.html");
    let out = env.wfx().args(cmd.args(&html)).output().unwrap();
    let after = digest_tree(&env.root);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = format!("{}: {pointer}: ", k.file);
    let allowed = cmd.may_write();
    let changed: Vec<String> = changed_files(&before, &after)
        .into_iter()
        .filter(|f| !allowed.contains(f))
        .collect();
    let case = format!("{name} × {d:?} × {cmd:?}");
    if out.status.code() != Some(want) {
        failures.push(format!(
            "{case}: exit {:?}, want {want}\n{text}",
            out.status.code()
        ));
    }
    let named = text
        .lines()
        .any(|l| l.contains(&expected) && l.contains(&fragment));
    if !named {
        failures.push(format!(
            "{case}: no line with `{expected}` and `{fragment}`:\n{text}"
        ));
    }
    if !changed.is_empty() {
        failures.push(format!("{case}: changed {changed:?}"));
    }
    if text.contains("panicked") {
        failures.push(format!("{case}: panic\n{text}"));
    }
    failures
}

/// The session's own file and its tasks: every reader refuses (exit 2).
#[test]
fn damaged_session_and_task_files() {
    check_kinds(&["workflow-session.json", "task", "IMPL-fix-N"]);
}

/// The loop's state and records: writers refuse, viewers warn and go on.
#[test]
fn damaged_state_results_history_and_context() {
    check_kinds(&[
        "iteration-state.json",
        "test-results.json",
        "fix-history.json",
        "context-package.json",
    ]);
}

/// Project-level files: the archive manifest, the config, a run's state.
#[test]
fn damaged_manifest_config_and_run_state() {
    check_kinds(&["manifest.json", "wfx.json", "run-state.json"]);
}

/// The control: on the undamaged base every command above does its job,
/// so the refusals are caused by the damage alone.
#[test]
fn the_undamaged_base_works_for_every_command() {
    let base = base();
    for (cmd, want) in [
        (Cmd::Status, 0),
        (Cmd::Validate, 0),
        (Cmd::ValidateAll, 0),
        (Cmd::List, 0),
        (Cmd::Show, 0),
        (Cmd::Report, 0),
        (Cmd::Resume, 0),
        (Cmd::Complete, 0),
        // Awaiting a manual fix: the resume retests (nothing changed),
        // analyses again and waits for the next manual fix.
        (Cmd::Cycle, 3),
        (Cmd::Gen, 3),
        (Cmd::RunResume, 0),
        (Cmd::StatusRun, 0),
        (Cmd::ReportRun, 0),
        (Cmd::Test, 1),
    ] {
        let env = fresh(&base);
        let html = env.tmp.path().join("report.html");
        let out = env.wfx().args(cmd.args(&html)).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(want),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if cmd == Cmd::StatusRun {
            // A run session's next step is `wfx run … --resume`, not the
            // test cycle (which refuses run sessions).
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("Next: continue at step 2 (shell)\n  wfx run wf.yml --resume"),
                "{text}"
            );
            assert!(!text.contains("test-cycle-execute"), "{text}");
        }
        if cmd == Cmd::ReportRun {
            // The report of a run killed in step 2 shows its steps and
            // the same command.
            let page = std::fs::read_to_string(&html).unwrap();
            assert!(page.contains("<table class=\"steps\">"));
            assert!(page.contains("<code>wfx run wf.yml --resume</code>"));
            assert!(!page.contains("test-cycle-execute"));
        }
    }
}

/// `--json` errors carry every problem as `{file, pointer, message}`.
#[test]
fn json_error_lists_the_problems() {
    let base = base();
    let env = fresh(&base);
    let k = kind("iteration-state.json");
    damage(&env.root.join(&k.file), &k, Damage::WrongType);
    let out = env
        .wfx()
        .args(["--json", "test-cycle-execute", "--resume-session", S])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "usage");
    assert_eq!(doc["error"]["exit_code"], 2);
    assert_eq!(
        doc["error"]["problems"][0]["file"],
        format!("{A}/.process/iteration-state.json")
    );
    assert_eq!(doc["error"]["problems"][0]["pointer"], "/iterations");
}

/// Big but valid: a 50 MB test-results.json is read (status, report,
/// validate) and a 200 MB log is never read whole.
#[test]
fn big_valid_artifacts_and_logs_are_handled() {
    let base = base();
    let env = fresh(&base);
    let results = env.root.join(A).join(".process/test-results.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    let mut one = v["failures"][0].clone();
    one["message"] = json!("assertion failed: left == right\n".repeat(12));
    // The failures are spliced in as text: building 100,000 JSON values in
    // a debug test binary takes longer than wfx takes to read them.
    let template = serde_json::to_string(&one).unwrap();
    let test = one["test"].as_str().unwrap().to_string();
    let marker = "\"__FAILURES__\"";
    let mut failures = String::with_capacity(52_000_000);
    let mut n = 0u64;
    while failures.len() < 50_000_000 {
        if n > 0 {
            failures.push(',');
        }
        failures.push_str(&template.replacen(
            &format!("\"test\":\"{test}\""),
            &format!("\"test\":\"tests::mod_{n}::case_{n}\""),
            1,
        ));
        n += 1;
    }
    v["failures"] = json!("__FAILURES__");
    v["failed"] = json!(n);
    v["total"] = json!(n + 1);
    v["passed"] = json!(1);
    let text = serde_json::to_string(&v)
        .unwrap()
        .replacen(marker, &format!("[{failures}]"), 1);
    std::fs::write(&results, text).unwrap();
    assert!(std::fs::metadata(&results).unwrap().len() > 50_000_000);
    let log = env.root.join(A).join(".process/test-output.log");
    let _ = std::fs::remove_file(&log);
    std::fs::File::create(&log)
        .unwrap()
        .set_len(200_000_000)
        .unwrap();
    let before = digest_tree(&env.root);
    env.wfx().args(["status", S]).assert().code(0);
    env.wfx().args(["validate", S]).assert().code(0);
    let html = env.tmp.path().join("r.html");
    env.wfx()
        .args(["report", S, "--html", html.to_str().unwrap()])
        .assert()
        .code(0);
    assert_eq!(
        changed_files(&before, &digest_tree(&env.root)),
        Vec::<String>::new()
    );
    // The report caps the failure rows (docs/status.md): far smaller than
    // the 50 MB of failures.
    assert!(std::fs::metadata(&html).unwrap().len() < 5_000_000);
}
