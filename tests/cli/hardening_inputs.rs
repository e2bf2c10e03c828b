//! Hardening (issue #10): bad input from people and from the programs wfx
//! runs. Hostile session ids, invalid configs, invalid YAML workflows, a
//! test command that does not exist or prints binary garbage, agents that
//! print garbage or nothing. Table-driven: each test walks its table and
//! reports every failing case at once; each case asserts the exit code
//! (DESIGN.md §1), the message, and that nothing was created or changed.

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use common::{Env, changed_files, digest_tree, fake_agent};
use serde_json::{Value, json};

const TAP: &str = "printf 'TAP version 13\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n'; exit 1";

fn text_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn report(failures: Vec<String>, cases: usize) {
    assert!(
        failures.is_empty(),
        "{} of {cases} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Ids that try to leave `.workflow/active`, carry shell or control
/// characters, or are too long: every command that takes an id exits 2
/// with `invalid session id` before building any path; nothing is created
/// (the project, its parent and HOME are compared byte for byte).
#[test]
fn hostile_session_ids() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &json!({"test": {"command": TAP}}).to_string(),
    );
    // A session one level up that a traversal would reach.
    common::make_session(&env, "WFS-real", "active", &[("IMPL-001", "pending")]);
    std::fs::create_dir_all(env.tmp.path().join("outside/WFS-x")).unwrap();
    let long = format!("WFS-{}", "a".repeat(101));
    let ids: Vec<OsString> = [
        "WFS-../WFS-real",
        "WFS-../../outside/WFS-x",
        "WFS-a/../../b",
        "WFS-..",
        "WFS-a..b",
        "WFS-",
        "WFS-.hidden",
        "WFS--dash",
        "WFS-a b",
        "WFS-x;rm -rf ~",
        "WFS-$(touch pwned)",
        "WFS-a\nb",
        "WFS-\u{1b}[2J",
        "WFS-ä",
        "WFS-a\\b",
        long.as_str(),
    ]
    .iter()
    .map(OsString::from)
    .chain([OsString::from_vec(b"WFS-\xff\xfe".to_vec())])
    .collect();
    let before = digest_tree(env.tmp.path());
    let html = env.tmp.path().join("r.html");
    let mut failures = Vec::new();
    let mut cases = 0;
    for id in &ids {
        let mut resume = OsString::from("--resume-session=");
        resume.push(id);
        let commands: Vec<Vec<OsString>> = vec![
            vec!["status".into(), id.clone()],
            vec!["session".into(), "show".into(), id.clone()],
            vec!["session".into(), "complete".into(), id.clone()],
            vec!["session".into(), "resume".into(), id.clone()],
            vec!["validate".into(), id.clone()],
            vec!["test-fix-gen".into(), id.clone(), "--plan-only".into()],
            vec!["test-cycle-execute".into(), resume],
            vec![
                "report".into(),
                id.clone(),
                "--html".into(),
                html.clone().into_os_string(),
            ],
        ];
        for args in commands {
            cases += 1;
            let out = env.wfx().args(&args).output().unwrap();
            let text = text_of(&out);
            let case = format!("{args:?}");
            if out.status.code() != Some(2) {
                failures.push(format!("{case}: exit {:?}\n{text}", out.status.code()));
            }
            // Valid UTF-8 ids are quoted back; clap refuses the others. A
            // name another tool could have given a session directory (one
            // path component, no `..`, no control character: DESIGN.md
            // §10.6) is looked up, and is not there.
            let named = match id.to_str() {
                Some(s) if wfx::session::id::validate_existing_id(s).is_ok() => text.contains(
                    &format!("error: session {s} not found (looked in .workflow/active and .workflow/archives)"),
                ),
                Some(_) => text.contains("error: invalid session id \""),
                None => text.contains("invalid UTF-8"),
            };
            if !named {
                failures.push(format!("{case}: message does not say why\n{text}"));
            }
            if text.contains("panicked") {
                failures.push(format!("{case}: panic\n{text}"));
            }
        }
    }
    let after = digest_tree(env.tmp.path());
    let changed = changed_files(&before, &after);
    if !changed.is_empty() {
        failures.push(format!("files changed: {changed:?}"));
    }
    assert!(!env.root.join("pwned").exists());
    report(failures, cases);
}

/// Configs that are invalid by schema or by meaning: every command that
/// reads the config exits 2 and names `.workflow/wfx.json`, the pointer
/// and the problem; nothing is created.
#[test]
fn invalid_configs() {
    let table: &[(&str, &str, &str)] = &[
        ("[]", "/", r#"[] is not of type "object""#),
        ("{\"test\": ", "/", "invalid JSON at line 1"),
        (
            r#"{"cycle": {"max_iterations": 0}}"#,
            "/cycle/max_iterations",
            "0 is less than the minimum of 1",
        ),
        (
            r#"{"cycle": {"pass_threshold": 150}}"#,
            "/cycle/pass_threshold",
            "150 is greater than the maximum of 100",
        ),
        (
            r#"{"cycle": {"max_iterations": "ten"}}"#,
            "/cycle/max_iterations",
            r#""ten" is not of type "integer""#,
        ),
        (
            r#"{"test": {"timeout_s": -5}}"#,
            "/test/timeout_s",
            "-5 is less than the minimum of 1",
        ),
        (
            r#"{"colour": "blue"}"#,
            "/",
            "Additional properties are not allowed ('colour' was unexpected)",
        ),
        (
            r#"{"agents": {"fix": "ghost"}}"#,
            "/agents/fix",
            "unknown agent \"ghost\"",
        ),
        (
            r#"{"agents": {"analysis": ["ghost"]}}"#,
            "/agents/analysis/0",
            "unknown agent \"ghost\"",
        ),
        (
            r#"{"agents": {"definitions": {"x": {"preset": "chatgpt"}}}}"#,
            "/agents/definitions/x/preset",
            "\"chatgpt\" is not one of \"claude\"",
        ),
        (
            r#"{"agents": {"definitions": {"x": {}}}}"#,
            "/agents/definitions/x",
            "needs `preset`",
        ),
        (
            r#"{"cycle": {"test_edits": {"remove_or_skip": "allow-all"}}}"#,
            "/cycle/test_edits/remove_or_skip",
            "\"allow-all\" is not one of \"reject\"",
        ),
    ];
    let mut failures = Vec::new();
    let mut cases = 0;
    for (config, pointer, fragment) in table {
        let env = Env::new();
        env.write("README.md", "project\n");
        env.write(".workflow/wfx.json", config);
        env.write("wf.yml", "commands:\n  - shell: \"echo hi\"\n");
        let before = digest_tree(&env.root);
        for args in [
            vec!["test"],
            vec!["test-fix-gen", "Plan something", "--plan-only"],
            vec!["test-cycle-execute"],
            vec!["validate"],
            vec!["run", "wf.yml"],
        ] {
            cases += 1;
            let out = env.wfx().args(&args).output().unwrap();
            let text = text_of(&out);
            let case = format!("{config} × {args:?}");
            if out.status.code() != Some(2) {
                failures.push(format!("{case}: exit {:?}\n{text}", out.status.code()));
            }
            let want = format!(".workflow/wfx.json: {pointer}: ");
            if !text
                .lines()
                .any(|l| l.contains(&want) && l.contains(fragment))
            {
                failures.push(format!(
                    "{case}: no line with `{want}` and `{fragment}`\n{text}"
                ));
            }
        }
        let changed = changed_files(&before, &digest_tree(&env.root));
        if !changed.is_empty() {
            failures.push(format!("{config}: files changed: {changed:?}"));
        }
    }
    report(failures, cases);
}

/// Invalid YAML workflows: `wfx run` (and `--dry-run`) exits 2 naming the
/// file, the pointer, line and column; no run session is created.
#[test]
fn invalid_yaml_workflows() {
    let deep = format!("x: {}\n", "[".repeat(300));
    let big = format!("commands:\n{}", "  - shell: echo\n".repeat(100_000));
    let table: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "unterminated",
            b"commands:\n  - shell: \"echo hi\n".to_vec(),
            "/",
            "invalid YAML",
        ),
        (
            "tabs",
            b"commands:\n\t- shell: x\n".to_vec(),
            "/",
            "line 2, column 2: invalid YAML: tabs disallowed",
        ),
        (
            "wrong type",
            b"commands: 5\n".to_vec(),
            "/commands",
            "`commands:` must be a list of steps, got a number",
        ),
        (
            "unknown step",
            b"commands:\n  - bogus: x\n".to_vec(),
            "/commands/0/bogus",
            "unknown key \"bogus\" in step 1",
        ),
        (
            "missing command",
            b"commands:\n  - test:\n      on_failure:\n        shell: x\n".to_vec(),
            "/commands/0/test",
            "`test:` needs `command:`",
        ),
        ("non-UTF-8", b"\xff\xfe".to_vec(), "/", "not valid UTF-8"),
        ("empty", Vec::new(), "/", "the workflow is empty"),
        (
            "recursive anchor",
            b"a: &a [*a]\n".to_vec(),
            "/",
            "invalid YAML",
        ),
        (
            "too deep",
            deep.into_bytes(),
            "/",
            "invalid YAML: recursion limit exceeded",
        ),
        (
            "too many nodes",
            big.into_bytes(),
            "/",
            "invalid YAML: budget breached",
        ),
        (
            "unknown variable",
            b"commands:\n  - shell: echo ${nope.output}\n".to_vec(),
            "/commands/0/shell",
            "unknown variable ${nope.output}",
        ),
    ];
    let mut failures = Vec::new();
    let mut cases = 0;
    for (name, bytes, pointer, fragment) in &table {
        let env = Env::new();
        env.write_bytes("wf.yml", bytes);
        for dry in [false, true] {
            cases += 1;
            let mut args = vec!["run", "wf.yml"];
            if dry {
                args.push("--dry-run");
            }
            let out = env.wfx().args(&args).output().unwrap();
            let text = text_of(&out);
            let case = format!("{name} × {args:?}");
            if out.status.code() != Some(2) {
                failures.push(format!("{case}: exit {:?}\n{text}", out.status.code()));
            }
            let want = format!("wf.yml: {pointer}: ");
            if !text
                .lines()
                .any(|l| l.contains(&want) && l.contains(fragment))
            {
                failures.push(format!(
                    "{case}: no line with `{want}` and `{fragment}`\n{text}"
                ));
            }
        }
        if env.root.join(".workflow").exists() {
            failures.push(format!("{name}: .workflow was created"));
        }
    }
    cases += 1;
    let env = Env::new();
    let out = env.wfx().args(["run", "missing.yml"]).output().unwrap();
    if out.status.code() != Some(2)
        || !text_of(&out).contains("workflow file missing.yml not found")
    {
        failures.push(format!(
            "missing file: {:?}\n{}",
            out.status.code(),
            text_of(&out)
        ));
    }
    report(failures, cases);
}

/// A project whose test command is `command`; its fixer is the person.
fn project(command: &str) -> Env {
    let env = Env::new();
    env.write("README.md", "project\n");
    env.write(
        ".workflow/wfx.json",
        &json!({"test": {"command": command}, "cycle": {"max_iterations": 2}}).to_string(),
    );
    env
}

fn session_dir(env: &Env) -> std::path::PathBuf {
    let mut dirs: Vec<_> = std::fs::read_dir(env.root.join(".workflow/active"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    dirs.remove(0)
}

/// Deterministic binary garbage: every byte value, NULs, invalid UTF-8,
/// ANSI escapes, a very long line, no final newline.
fn garbage() -> Vec<u8> {
    let mut out = Vec::new();
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push((x >> 24) as u8);
    }
    out.extend_from_slice(b"\x00\x1b[31mFAILED\x1b[0m \xff\xfe\xc3\x28 not ok 1 - \x00\n");
    out.extend(std::iter::repeat_n(b'x', 300_000));
    out
}

/// Test commands that cannot run or print garbage. `wfx test` and a cycle
/// each get the exit code of DESIGN.md §1/§5.2: a command that cannot run
/// (126/127) is exit 2 naming it; garbage is an execution error parsed as
/// the exit code (a static failure), never a crash; the artifacts written
/// are valid.
#[test]
fn test_commands_that_fail_to_run_or_print_garbage() {
    let table: &[(&str, &str, i32, &str, i32)] = &[
        // (case, command, wfx test exit, message, cycle exit)
        (
            "not found",
            "no-such-test-runner --all",
            2,
            // Refused by name before it runs, by `wfx test` and the cycle alike.
            "the test command `no-such-test-runner --all` needs `no-such-test-runner`, which is not on PATH",
            2,
        ),
        (
            "not executable",
            "./README.md",
            2,
            "cannot run `./README.md` (exit 126)",
            2,
        ),
        (
            "garbage, exit 1",
            "cat garbage.bin; exit 1",
            1,
            "no test results could be read from the output (parser: exit-code); exit code 1",
            3,
        ),
        ("garbage, exit 0", "cat garbage.bin", 1, "no tests found", 3),
        (
            "garbage on stderr",
            "cat garbage.bin >&2; exit 1",
            1,
            "parser: exit-code",
            3,
        ),
        (
            "killed by a signal",
            "kill -SEGV $$",
            1,
            "parser: exit-code",
            3,
        ),
    ];
    let mut failures = Vec::new();
    for (case, command, test_exit, message, cycle_exit) in table {
        let env = project(command);
        env.write_bytes("garbage.bin", &garbage());
        let out = env.wfx().arg("test").output().unwrap();
        let text = text_of(&out);
        if out.status.code() != Some(*test_exit) {
            failures.push(format!(
                "{case} × test: exit {:?}\n{text}",
                out.status.code()
            ));
        }
        if !text.contains(message) {
            failures.push(format!("{case} × test: no `{message}`\n{text}"));
        }
        let out = env
            .wfx()
            .args(["test-fix-gen", "Fix the tests", "--fix-agent", "manual"])
            .output()
            .unwrap();
        let text = text_of(&out);
        if out.status.code() != Some(*cycle_exit) {
            failures.push(format!(
                "{case} × cycle: exit {:?}\n{text}",
                out.status.code()
            ));
        }
        if *cycle_exit == 2
            && !text
                .lines()
                .any(|l| l.starts_with("error: ") && l.contains(message))
        {
            failures.push(format!("{case} × cycle: no error `{message}`\n{text}"));
        }
        if *cycle_exit == 3 {
            let results: Value = serde_json::from_slice(
                &std::fs::read(session_dir(&env).join(".process/test-results.json")).unwrap(),
            )
            .unwrap();
            let got = (
                results["parser"].as_str(),
                results["total"].as_u64(),
                results["errors"].as_u64(),
                results["failures"][0]["test_type"].as_str(),
            );
            if got != (Some("exit-code"), Some(0), Some(1), Some("static")) {
                failures.push(format!("{case} × cycle: results {got:?}"));
            }
        }
        let v = env.wfx().arg("validate").output().unwrap();
        if v.status.code() != Some(0) {
            failures.push(format!(
                "{case}: validate {:?}\n{}",
                v.status.code(),
                text_of(&v)
            ));
        }
        for t in [&text, &text_of(&v)] {
            if t.contains("panicked") {
                failures.push(format!("{case}: panic\n{t}"));
            }
        }
    }
    report(failures, table.len() * 2);
}

/// 200 MB of log output from one test run, its results at the end:
/// streamed to the log and parsed line by line, never held in memory (peak
/// RSS of wfx well under 64 MiB), the two results found.
#[test]
fn two_hundred_megabytes_of_test_output() {
    let env = project(
        "yes 'DEBUG [worker-3] cache miss for key user:1234, fetching from the database' | head -c 200000000; \
         printf '\\nTAP version 13\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n'; exit 1",
    );
    let out = env.wfx().args(["--json", "test"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&doc["parser"], &doc["total"], &doc["failed"]),
        (&json!("tap"), &json!(2), &json!(1))
    );
    assert_eq!(doc["failures"][0]["test"], "subtracts");
    let log = env.root.join(".workflow/.cache/test-output.log");
    assert!(std::fs::metadata(&log).unwrap().len() > 200_000_000);
    // Peak RSS of the largest child this test waited for (wfx; `yes` and
    // `head` are tiny).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let peak_kib = usage.ru_maxrss;
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}

/// Agents that print garbage, nothing, or binary noise and fail: the
/// analysis falls back along the chain to the built-in analyzer (recorded
/// per call and as `analysis_quality: degraded`), a failed fix is recorded
/// and judged by the retest, the loop goes on to its limit (exit 1), no
/// control character reaches the terminal, and every artifact is valid.
#[test]
fn agents_printing_garbage_or_nothing() {
    let env = project(TAP);
    env.write(
        ".workflow/wfx.json",
        &json!({
            "test": {"command": TAP},
            "agents": {
                "analysis": ["junk", "silent"],
                "fix": "noise",
                "definitions": {
                    "junk": {"command": [fake_agent("garbage").display().to_string()]},
                    "silent": {"command": ["sh", "-c", "cat > /dev/null"]},
                    "noise": {"command": ["sh", "-c", "cat > /dev/null; printf '\\033[2J\\033]0;x\\007\\000\\377 oops'; exit 3"]}
                }
            },
            "cycle": {"max_iterations": 2}
        })
        .to_string(),
    );
    let out = env
        .wfx()
        .args(["test-fix-gen", "Fix the tests"])
        .output()
        .unwrap();
    let text = text_of(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "analysis by builtin (passed over: junk: no_valid_strategy, silent: no_valid_strategy)"
        ),
        "{text}"
    );
    assert!(
        !out.stderr.iter().any(|&b| b == 0x1b || b == 0x07 || b == 0),
        "a control character reached the terminal:\n{text}"
    );
    assert!(text.contains("failed: exit 3 ("), "{text}");
    let dir = session_dir(&env);
    let history: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".process/fix-history.json")).unwrap())
            .unwrap();
    let calls: Vec<(String, String, String)> = history["agent_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["role"].as_str().unwrap().to_string(),
                c["agent"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let round = [
        ("analysis", "junk", "no_valid_strategy"),
        ("analysis", "silent", "no_valid_strategy"),
        ("fix", "noise", "failed"),
    ];
    // Phase 3's review calls come first (too short to count as a review).
    let phase3 = [
        ("analysis", "junk", "too_short"),
        ("analysis", "silent", "too_short"),
    ];
    let want: Vec<(String, String, String)> = phase3
        .iter()
        .chain(round.iter())
        .chain(round.iter())
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(calls, want);
    let entries = history["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["exit_code"], 3);
    let fix: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".task/IMPL-fix-1.json")).unwrap()).unwrap();
    assert_eq!(fix["meta"]["analysis_quality"], "degraded");
    assert_eq!(fix["meta"]["analysis_tool"], "builtin");
    env.wfx().arg("validate").assert().code(0);
}
