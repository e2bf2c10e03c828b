//! The live progress line (DESIGN.md §10.7) as a person sees it: `wfx
//! test` run in a real pseudo-terminal on small real projects (pytest,
//! cargo test, node --test, go test) shows counts while the tests run and
//! the elapsed time, and an estimate on the next run; with stdout or
//! stderr not a terminal, nothing of it escapes. A pause for a person
//! rings the bell on a terminal only.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Env;
use common::pty::run as in_pty;
use regex::Regex;

fn wfx() -> PathBuf {
    assert_cmd::cargo::cargo_bin("wfx")
}

/// The progress lines the terminal showed, escape sequences removed.
fn progress_lines(out: &str) -> Vec<String> {
    let ansi = Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").unwrap();
    ansi.replace_all(out, "")
        .split(['\r', '\n'])
        .filter(|l| l.contains(" — "))
        .map(str::to_string)
        .collect()
}

/// `(passed, failed, skipped)` of every line with counts and elapsed time.
fn live_counts(lines: &[String]) -> Vec<(u32, u32, u32)> {
    let re = Regex::new(
        r" — (\d+) passed, (\d+) failed, (\d+) skipped · (\d+ ms|\d+(\.\d)? s|\d+ min( \d+ s)?)",
    )
    .unwrap();
    lines
        .iter()
        .filter_map(|l| re.captures(l))
        .map(|c| {
            (
                c[1].parse().unwrap(),
                c[2].parse().unwrap(),
                c[3].parse().unwrap(),
            )
        })
        .collect()
}

/// Runs `wfx test` twice on a terminal: the first shows counts that grow
/// while the tests run (some seen before all `total` are done) with the
/// elapsed time; the second also shows the estimate from the first.
fn shows_live_counts(env: &Env, vars: &[(&str, &str)], total: u32) {
    let (code, out) = in_pty(env, &wfx(), &["test"], vars);
    assert_eq!(code, 1, "one test fails:\n{out}");
    let lines = progress_lines(&out);
    let counts = live_counts(&lines);
    assert!(
        counts
            .iter()
            .any(|&(p, f, s)| p + f + s > 0 && p + f + s < total),
        "no count shown while the tests ran: {lines:#?}"
    );
    assert!(
        counts.windows(2).all(|w| w[0].0 <= w[1].0),
        "counts only grow: {counts:?}"
    );
    assert!(out.contains("failed: "), "the result follows:\n{out}");
    let (_, out) = in_pty(env, &wfx(), &["test"], vars);
    let lines = progress_lines(&out);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(", eta ~") || l.contains("(last run ")),
        "no estimate from the first run: {lines:#?}"
    );
}

#[test]
fn pytest_counts_each_test_as_its_mark_is_printed() {
    let env = Env::new();
    env.write("pyproject.toml", "[tool.pytest.ini_options]\n");
    // One file: pytest ends its line only after the last test.
    env.write(
        "tests/test_slow.py",
        "import time, pytest\n\
         def test_1(): time.sleep(0.4)\n\
         def test_2(): time.sleep(0.4)\n\
         def test_3(): time.sleep(0.4); assert 1 == 2\n\
         @pytest.mark.skip\n\
         def test_4(): pass\n\
         def test_5(): time.sleep(0.4)\n\
         def test_6(): time.sleep(0.4)\n",
    );
    shows_live_counts(&env, &[], 6);
}

#[test]
fn cargo_test_counts_live() {
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    let mut lib = String::from("#[cfg(test)]\nmod tests {\n");
    for i in 0..6 {
        lib.push_str(&format!(
            "    #[test]\n    fn t{i}() {{ std::thread::sleep(std::time::Duration::from_millis({})); assert!({i} != 3); }}\n",
            300 * (i + 1)
        ));
    }
    lib.push_str("}\n");
    env.write("src/lib.rs", &lib);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/pty-cargo");
    shows_live_counts(&env, &[("CARGO_TARGET_DIR", target.to_str().unwrap())], 6);
}

#[test]
fn node_test_counts_live() {
    let env = Env::new();
    env.write(
        "package.json",
        r#"{"name": "slow", "private": true, "scripts": {"test": "node --test"}}"#,
    );
    env.write(
        "test/slow.test.js",
        "const test = require('node:test');\n\
         const assert = require('node:assert');\n\
         const wait = (ms) => new Promise((r) => setTimeout(r, ms));\n\
         for (let i = 0; i < 6; i++) {\n\
           test(`t${i}`, async () => { await wait(400); assert.notStrictEqual(i, 3); });\n\
         }\n",
    );
    shows_live_counts(&env, &[], 6);
}

#[test]
fn go_test_counts_live() {
    if Command::new("go").arg("version").output().is_err() {
        // scripts/test.sh installs Go, so CI runs this test.
        eprintln!("SKIPPED go_test_counts_live: `go` is not on PATH (apt-get install golang-go)");
        return;
    }
    let env = Env::new();
    env.write("go.mod", "module example.com/slow\n\ngo 1.19\n");
    let mut src = String::from("package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n");
    for i in 0..6 {
        src.push_str(&format!(
            "func TestT{i}(t *testing.T) {{\n\ttime.Sleep(400 * time.Millisecond)\n\tif {i} == 3 {{\n\t\tt.Fatal(\"three\")\n\t}}\n}}\n\n"
        ));
    }
    env.write("slow_test.go", &src);
    let cache = env.tmp.path().join("go-cache");
    shows_live_counts(
        &env,
        &[
            ("GOCACHE", cache.to_str().unwrap()),
            ("GOTOOLCHAIN", "local"),
            ("GOFLAGS", "-mod=mod"),
        ],
        6,
    );
}

fn quick_pytest(env: &Env) {
    env.write("pyproject.toml", "[tool.pytest.ini_options]\n");
    env.write(
        "tests/test_q.py",
        "import time\ndef test_a(): time.sleep(0.5)\ndef test_b(): time.sleep(0.5)\n",
    );
}

fn assert_clean(what: &str, text: &str) {
    for (name, c) in [
        ("carriage return", '\r'),
        ("escape", '\x1b'),
        ("bell", '\x07'),
    ] {
        assert!(!text.contains(c), "{name} in {what}: {text:?}");
    }
    assert!(!text.contains(" — "), "a progress line in {what}: {text:?}");
}

#[test]
fn no_progress_escapes_into_pipes() {
    let env = Env::new();
    quick_pytest(&env);
    // Both piped.
    let out = env.wfx_live().arg("test").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_clean("stdout", &String::from_utf8_lossy(&out.stdout));
    assert_clean("stderr", &String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("passed: 2 tests"));

    // stdout into a file, stderr on the terminal: the line stays on the
    // terminal.
    let file = env.tmp.path().join("stdout.txt");
    let script = format!("\"$0\" test > '{}'", file.display());
    let (code, term) = in_pty(
        &env,
        Path::new("sh"),
        &["-c", &script, wfx().to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 0, "{term}");
    let stdout = std::fs::read_to_string(&file).unwrap();
    assert_clean("stdout redirected to a file", &stdout);
    assert!(stdout.contains("passed: 2 tests"), "{stdout}");
    assert!(
        !progress_lines(&term).is_empty(),
        "the terminal shows the line: {term:?}"
    );
}

#[test]
fn a_manual_fix_rings_the_bell_on_a_terminal_only() {
    let env = Env::new();
    env.cycle_project("node-calc", &serde_json::json!({}));
    env.plan_calculator();
    let (code, out) = in_pty(&env, &wfx(), &["test-cycle-execute"], &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("waiting for your fix"), "{out}");
    assert_eq!(out.matches('\x07').count(), 1, "one bell: {out:?}");

    // Resumed without a change: a pause for the person again, but the
    // person turned the bell off.
    let args = [
        "test-cycle-execute",
        "--resume-session=WFS-test-the-calculator",
    ];
    let (code, out) = in_pty(&env, &wfx(), &args, &[("WFX_BELL", "0")]);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains('\x07'), "WFX_BELL=0: {out:?}");
    let (code, out) = in_pty(&env, &wfx(), &args, &[("TERM", "dumb")]);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains('\x07'), "TERM=dumb: {out:?}");

    let out = env.wfx_live().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\x07'));
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\x07'));
}
