//! `wfx demo` end to end, as the README's first command runs it: one sample
//! per language, the default choice on machines that have only one
//! toolchain, and the refusals that must leave nothing behind.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Env, git_in, html_section};

/// Colour of a chart point with no fix before it (the chart's "first run").
const FIRST_RUN: &str = "#6b7280";
/// Colour of a point after a conservative fix.
const CONSERVATIVE: &str = "#2563eb";

/// Run `wfx demo ARGS --dir <tmp>/demo` with `path` as the whole PATH (None:
/// the machine's PATH and toolchains); returns the demo dir, the exit code
/// and stderr.
fn demo(env: &Env, args: &[&str], path: Option<&Path>) -> (PathBuf, i32, String) {
    let dir = env.tmp.path().join("demo");
    let mut cmd = env.wfx_live();
    cmd.arg("demo").args(args).arg("--dir").arg(&dir);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let out = cmd.output().expect("wfx runs");
    (
        dir,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The Python sample's project directory and session id.
const PYTHON: (&str, &str) = ("cart", "WFS-test-the-cart-pricing");
/// The Node and Rust samples' project directory and session id.
const CALC: (&str, &str) = ("calc", "WFS-test-the-calculator");

/// The demo in `dir` went through the loop and left what the README
/// promises: an archived completed session, one commit per fix, a report
/// whose chart starts with the first-run colour, artifacts that validate.
fn assert_demo_completed(env: &Env, dir: &Path, (sample, id): (&str, &str), stderr: &str) {
    let project = &dir.join(sample);
    let archived = project.join(".workflow/archives").join(id);
    assert!(archived.join("workflow-session.json").is_file(), "{stderr}");
    let session: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(archived.join("workflow-session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(session["status"], "completed");
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(archived.join(".process/iteration-state.json")).unwrap(),
    )
    .unwrap();
    let runs = state["iterations"].as_array().unwrap();
    let rates: Vec<f64> = runs
        .iter()
        .map(|r| r["pass_rate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates.last(), Some(&100.0), "{rates:?}");
    assert!(rates.len() >= 3 && rates[0] < 100.0, "{rates:?}");

    // One commit per fix attempt plus the final commit, on top of the sample.
    let subjects = git_in(env, project, &["log", "--format=%s"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.last(), Some(&"Sample project with two bugs"));
    assert!(
        subjects[0].starts_with(&format!("test-cycle: session {id} completed")),
        "{subjects:?}"
    );
    let fixes = subjects
        .iter()
        .filter(|s| s.starts_with("test-cycle: iteration "))
        .count();
    // One fix per iteration after the first (an iteration's affected
    // retest and its full validation are two runs of one iteration).
    let mut iterations: Vec<u64> = state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["iteration"].as_u64().unwrap())
        .collect();
    iterations.dedup();
    assert_eq!(fixes, iterations.len() - 1, "{subjects:?}");
    // Everything the demo left is committed or its own (report, config,
    // fixer): a clean `git status`, and no run's raw results in history.
    assert_eq!(git_in(env, project, &["status", "--porcelain"]), "");
    let committed = git_in(env, project, &["log", "--name-only", "--format="]);
    assert!(!committed.contains("-results.json"), "{committed}");
    assert!(committed.contains(".task/IMPL-fix-1.json"), "{committed}");

    // The report: the first run has no fix before it, so it has the
    // first-run colour; the next run comes after the first (conservative) fix.
    let report = std::fs::read_to_string(project.join(".workflow/report.html")).unwrap();
    assert!(report.contains(id));
    let chart = html_section(&report, "chart");
    let points: Vec<&str> = chart.split(r#"<g class="run""#).skip(1).collect();
    assert_eq!(points.len(), rates.len(), "{chart}");
    assert!(
        points[0].contains(&format!(r#"stroke="{FIRST_RUN}""#)),
        "first run: {}",
        points[0]
    );
    assert!(
        points[1].contains(&format!(r#"stroke="{CONSERVATIVE}""#)),
        "run after the first fix: {}",
        points[1]
    );
    // Every artifact row says what the file is for.
    let artifacts = html_section(&report, "artifacts");
    let rows = artifacts.matches("<tr><td>").count();
    assert!(rows > 20, "{artifacts}");
    assert_eq!(
        artifacts.matches("</td><td></td></tr>").count(),
        0,
        "{artifacts}"
    );
    assert!(stderr.contains("Report:"), "{stderr}");

    // Everything wfx wrote validates.
    env.wfx()
        .arg("-C")
        .arg(project)
        .arg("validate")
        .assert()
        .success();
}

#[test]
fn the_python_demo_completes() {
    let env = Env::new();
    let (dir, code, stderr) = demo(&env, &["--lang", "python"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("a Python package with 2 bugs"), "{stderr}");
    assert_demo_completed(&env, &dir, PYTHON, &stderr);
}

#[test]
fn the_node_demo_completes() {
    let env = Env::new();
    let (dir, code, stderr) = demo(&env, &["--lang", "node"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("a Node package with 2 bugs"), "{stderr}");
    assert_demo_completed(&env, &dir, CALC, &stderr);
}

#[test]
fn the_rust_demo_completes() {
    let env = Env::new();
    let (dir, code, stderr) = demo(&env, &["--lang", "rust"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("a Rust crate with 2 bugs"), "{stderr}");
    assert_demo_completed(&env, &dir, CALC, &stderr);
}

/// The machine's own program `name`, resolved through the full PATH
/// (pyenv shims resolved to the interpreter they run).
fn real_program(env: &Env, name: &str) -> PathBuf {
    let mut cmd = std::process::Command::new("sh");
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    let script = if name == "python3" {
        "python3 -c 'import sys; print(sys.executable)'".to_string()
    } else {
        format!("command -v {name}")
    };
    let out = cmd.args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{name} is needed by this test");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A directory to use as the whole PATH: the given programs, nothing else;
/// not even `sh`, git or coreutils: the demo needs only its toolchain (wfx
/// runs test commands with `/bin/sh` and commits with libgit2).
fn bin_dir(env: &Env, programs: &[(&str, BinEntry)]) -> PathBuf {
    let bin = env.tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, entry) in programs {
        match entry {
            BinEntry::Link(target) => std::os::unix::fs::symlink(target, bin.join(name)).unwrap(),
            BinEntry::Script(text) => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::write(bin.join(name), text).unwrap();
                std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
            }
        }
    }
    bin
}

enum BinEntry {
    Link(PathBuf),
    Script(String),
}

#[test]
fn with_only_python_on_path_the_default_is_the_python_demo() {
    let env = Env::new();
    let python = real_program(&env, "python3");
    let bin = bin_dir(&env, &[("python3", BinEntry::Link(python))]);
    let (dir, code, stderr) = demo(&env, &[], Some(&bin));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("a Python package with 2 bugs") && stderr.contains("with pytest"),
        "{stderr}"
    );
    assert_demo_completed(&env, &dir, PYTHON, &stderr);
}

/// An old machine: `python` is Python 2 (or broken) beside `python3`.
/// wfx's detection would run `python -m pytest`; the demo names python3.
#[test]
fn a_python_2_python_beside_python3_does_not_break_the_demo() {
    let env = Env::new();
    let python3 = real_program(&env, "python3");
    let python2 = "#!/bin/sh\necho 'Python 2.7.18' >&2\nexit 1\n".to_string();
    let bin = bin_dir(
        &env,
        &[
            ("python3", BinEntry::Link(python3)),
            ("python", BinEntry::Script(python2)),
        ],
    );
    let (dir, code, stderr) = demo(&env, &[], Some(&bin));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("`python3 -m pytest`"), "{stderr}");
    assert_demo_completed(&env, &dir, PYTHON, &stderr);
}

/// Python as many machines have it: no pytest. The sample's own stdlib
/// runner writes JUnit XML, which wfx reads through `test.junit`.
#[test]
fn with_python_but_no_pytest_the_demo_uses_the_standard_library() {
    let env = Env::new();
    let python = real_program(&env, "python3");
    // -S: no site-packages, so no pytest, whatever this machine installed.
    let wrapper = format!("#!/bin/sh\nexec {} -S \"$@\"\n", python.display());
    let bin = bin_dir(&env, &[("python3", BinEntry::Script(wrapper))]);
    let (dir, code, stderr) = demo(&env, &[], Some(&bin));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("unittest (pytest is not installed)"),
        "{stderr}"
    );
    let project = dir.join("cart");
    assert_demo_completed(&env, &dir, PYTHON, &stderr);
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(
            ".workflow/archives/WFS-test-the-cart-pricing/.process/iteration-1-results.json",
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(results["total"], 9, "{results}");
    assert_eq!(results["failed"], 3, "{results}");
    let failure = &results["failures"][0];
    assert!(
        failure["error"]
            .as_str()
            .unwrap()
            .starts_with("AssertionError"),
        "{failure}"
    );
}

#[test]
fn with_only_node_on_path_the_default_is_the_node_demo() {
    let env = Env::new();
    let node = real_program(&env, "node");
    // Debian's nodejs without npm: the demo names `node --test` itself.
    let bin = bin_dir(&env, &[("node", BinEntry::Link(node))]);
    let (dir, code, stderr) = demo(&env, &[], Some(&bin));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("a Node package with 2 bugs") && stderr.contains("with node --test"),
        "{stderr}"
    );
    assert_demo_completed(&env, &dir, CALC, &stderr);
}

/// Nothing exists before wfx runs, and nothing after: not the demo dir,
/// not a temp dir.
fn assert_nothing_written(env: &Env, dir: &Path, tmp: &Path) {
    assert!(!dir.exists(), "{} was created", dir.display());
    assert_eq!(
        std::fs::read_dir(tmp).unwrap().count(),
        0,
        "temp dir not empty"
    );
    assert_eq!(std::fs::read_dir(&env.root).unwrap().count(), 0);
}

#[test]
fn with_no_toolchain_the_demo_refuses_before_writing_anything() {
    let env = Env::new();
    let bin = bin_dir(&env, &[]);
    let tmp = env.tmp.path().join("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    // Without --dir too: the demo's temp dir is never made.
    for with_dir in [true, false] {
        let dir = env.tmp.path().join("demo");
        let mut cmd = env.wfx();
        cmd.env("PATH", &bin).env("TMPDIR", &tmp).arg("demo");
        if with_dir {
            cmd.arg("--dir").arg(&dir);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("wfx demo needs Python 3.8+, Node.js 18+ or Rust (cargo) on PATH"),
            "{stderr}"
        );
        for line in [
            "python: python3 and python not on PATH",
            "node: node not on PATH",
            "rust: cargo not on PATH",
        ] {
            assert!(stderr.contains(line), "{line}: {stderr}");
        }
        assert_nothing_written(&env, &dir, &tmp);
    }
}

#[test]
fn an_asked_for_sample_without_its_toolchain_names_what_would_work() {
    let env = Env::new();
    let python = real_program(&env, "python3");
    let bin = bin_dir(&env, &[("python3", BinEntry::Link(python))]);
    let tmp = env.tmp.path().join("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    let (dir, code, stderr) = demo(&env, &["--lang", "rust"], Some(&bin));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "wfx demo --lang rust: cargo not on PATH; this machine can run --lang python (Python 3."
        ),
        "{stderr}"
    );
    assert_nothing_written(&env, &dir, &tmp);
}

#[test]
fn demo_refuses_a_non_empty_dir() {
    let env = Env::new();
    env.write("somefile", "x");
    env.wfx()
        .arg("demo")
        .arg("--dir")
        .arg(&env.root)
        .assert()
        .code(2);
    assert_eq!(env.read("somefile"), "x");
}

/// The demo makes its own project: -C, before or after the subcommand, is
/// refused with the reason, and `wfx demo --help` does not offer it.
#[test]
fn demo_and_completions_refuse_a_project_root() {
    let env = Env::new();
    let dir = env.tmp.path().join("demo");
    for args in [
        vec!["-C", ".", "demo", "--dir"],
        vec!["demo", "-C", ".", "--dir"],
    ] {
        let out = env.wfx().args(&args).arg(&dir).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "`wfx demo` takes no project root (the demo makes its own project; use --dir DIR)"
            ),
            "{stderr}"
        );
        assert!(!dir.exists());
    }
    let out = env
        .wfx()
        .args(["completions", "bash", "-C", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    for cmd in ["demo", "completions"] {
        let help = env.wfx().args([cmd, "--help"]).output().unwrap();
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(help.status.success());
        assert!(!text.contains("--project-root"), "{cmd}: {text}");
        assert!(!text.contains("-C,"), "{cmd}: {text}");
    }
    env.wfx().args(["completions", "bash"]).assert().success();
}
