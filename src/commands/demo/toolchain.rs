//! Which sample `wfx demo` can run here: each sample's toolchain is probed
//! on PATH (the effect), and the choice among them is a pure function.
//! Everything is decided before the demo writes a single file.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::DemoLang;
use crate::testing::program::on_path;

/// Samples in the order the default picks them: the quickest suites first
/// (a Python or Node suite runs in well under a second; the Rust crate
/// compiles first).
pub const ORDER: [DemoLang; 3] = [DemoLang::Python, DemoLang::Node, DemoLang::Rust];

/// Oldest Node whose `node --test` has the reporter options wfx uses.
pub const NODE_MIN_MAJOR: u32 = 18;
/// Oldest Python the samples run on.
pub const PYTHON_MIN: (u32, u32) = (3, 8);

/// What the machine offers for one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Ready(Toolchain),
    /// On PATH but not usable, and why (too old, does not start).
    Unusable(String),
    /// Not on PATH; the programs looked for.
    Missing(&'static str),
}

/// A usable toolchain and how the sample's tests run with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    pub lang: DemoLang,
    /// The program as found on PATH (`python3`, `node`, `cargo`); the demo
    /// fixer runs with it.
    pub program: String,
    /// `Python 3.11.7`, `Node v20.20.2`, `cargo 1.90.0`.
    pub version: String,
    /// How the tests run, for people: `pytest`, `node --test`, …
    pub runner: String,
    /// `test.command` the demo writes into its config; `None` leaves the
    /// command to wfx's own detection, as on any project.
    pub test_command: Option<String>,
    /// `test.junit` for a command that writes JUnit XML by itself.
    pub junit: Option<String>,
}

pub fn name(lang: DemoLang) -> &'static str {
    match lang {
        DemoLang::Python => "python",
        DemoLang::Node => "node",
        DemoLang::Rust => "rust",
    }
}

/// The sample to run: the one asked for if its toolchain is ready, else
/// the first ready one in [`ORDER`]. `Err` is the whole message for people.
pub fn choose(wanted: Option<DemoLang>, found: &[(DemoLang, Found)]) -> Result<Toolchain, String> {
    let ready = |lang: DemoLang| {
        found.iter().find_map(|(l, f)| match f {
            Found::Ready(t) if *l == lang => Some(t.clone()),
            _ => None,
        })
    };
    let why = |lang: DemoLang| -> String {
        match found.iter().find(|(l, _)| *l == lang).map(|(_, f)| f) {
            Some(Found::Unusable(why)) => why.clone(),
            Some(Found::Missing(programs)) => format!("{programs} not on PATH"),
            Some(Found::Ready(t)) => format!("{} ready", t.version),
            None => "not checked".to_string(),
        }
    };
    let others: Vec<String> = ORDER
        .iter()
        .filter(|l| Some(**l) != wanted)
        .filter_map(|l| ready(*l).map(|t| format!("--lang {} ({})", name(*l), t.version)))
        .collect();
    match wanted {
        Some(lang) => ready(lang).ok_or_else(|| {
            let mut msg = format!("wfx demo --lang {}: {}", name(lang), why(lang));
            if others.is_empty() {
                msg.push_str("; no other sample's toolchain is on PATH either");
            } else {
                msg.push_str(&format!("; this machine can run {}", others.join(" or ")));
            }
            msg
        }),
        None => ORDER.iter().find_map(|l| ready(*l)).ok_or_else(|| {
            let mut msg = String::from(
                "wfx demo needs Python 3.8+, Node.js 18+ or Rust (cargo) on PATH, and found none:",
            );
            for lang in ORDER {
                msg.push_str(&format!("\n  {}: {}", name(lang), why(lang)));
            }
            msg.push_str(
                "\nInstall one of them, or point wfx at a project of yours: `wfx init && wfx test`",
            );
            msg
        }),
    }
}

/// Probe every sample's toolchain (or only `wanted`'s and then the rest,
/// for the message).
pub fn probe_all() -> Vec<(DemoLang, Found)> {
    ORDER.iter().map(|l| (*l, probe(*l))).collect()
}

pub fn probe(lang: DemoLang) -> Found {
    match lang {
        DemoLang::Python => probe_python(),
        DemoLang::Node => probe_node(),
        DemoLang::Rust => probe_rust(),
    }
}

/// Prints `3 11 7 pytest` (or `-` without pytest); valid Python 2 too, so
/// an old `python` is reported as too old rather than as broken.
const PYTHON_PROBE: &str = "import sys\ntry:\n    import pytest\n    p = 'pytest'\nexcept Exception:\n    p = '-'\nv = sys.version_info\nsys.stdout.write('%d %d %d %s\\n' % (v[0], v[1], v[2], p))\n";

fn probe_python() -> Found {
    let mut problem = None;
    for program in ["python3", "python"] {
        if !on_path(program) {
            continue;
        }
        // wfx's detection runs pytest with `python` when that is on PATH.
        let detected = if on_path("python") {
            "python"
        } else {
            "python3"
        };
        match capture(program, &["-c", PYTHON_PROBE]) {
            Ok(out) => match python_toolchain(program, &out, detected) {
                Ok(t) => return Found::Ready(t),
                Err(why) => problem = problem.or(Some(why)),
            },
            Err(why) => problem = problem.or(Some(format!("{program} does not run: {why}"))),
        }
    }
    problem.map_or(Found::Missing("python3 and python"), Found::Unusable)
}

/// Pure part of the Python probe: `3 11 7 pytest` → the toolchain.
/// `detected` is the interpreter wfx's own detection would run pytest with.
pub fn python_toolchain(
    program: &str,
    probe_output: &str,
    detected: &str,
) -> Result<Toolchain, String> {
    let words: Vec<&str> = probe_output.split_whitespace().collect();
    let num = |i: usize| words.get(i).and_then(|w| w.parse::<u32>().ok());
    let (Some(major), Some(minor), Some(patch)) = (num(0), num(1), num(2)) else {
        return Err(format!(
            "{program} printed {:?}, not a version",
            probe_output.trim()
        ));
    };
    let version = format!("Python {major}.{minor}.{patch}");
    if (major, minor) < PYTHON_MIN {
        return Err(format!(
            "{program} is {version}; the sample needs {}.{} or later",
            PYTHON_MIN.0, PYTHON_MIN.1
        ));
    }
    let pytest = words.get(3) == Some(&"pytest");
    Ok(Toolchain {
        lang: DemoLang::Python,
        program: program.to_string(),
        version,
        runner: if pytest {
            "pytest".into()
        } else {
            "unittest (pytest is not installed)".into()
        },
        // With pytest, wfx detects `python -m pytest` as on any project
        // (named here only when detection would pick another interpreter,
        // e.g. a Python 2 `python` next to `python3`); without pytest, the
        // sample's own stdlib runner writes JUnit XML.
        test_command: if !pytest {
            Some(format!("{program} .workflow/demo/run_tests.py"))
        } else if program != detected {
            Some(format!("{program} -m pytest"))
        } else {
            None
        },
        junit: (!pytest).then(|| ".workflow/demo/junit/*.xml".to_string()),
    })
}

fn probe_node() -> Found {
    if !on_path("node") {
        return Found::Missing("node");
    }
    match capture("node", &["--version"]) {
        Ok(out) => match node_toolchain(&out, on_path("npm")) {
            Ok(t) => Found::Ready(t),
            Err(why) => Found::Unusable(why),
        },
        Err(why) => Found::Unusable(format!("node does not run: {why}")),
    }
}

/// Pure part of the Node probe: `v20.20.2` (and whether npm is on PATH).
pub fn node_toolchain(version_output: &str, npm: bool) -> Result<Toolchain, String> {
    let v = version_output.trim();
    let major = v
        .strip_prefix('v')
        .and_then(|rest| rest.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| format!("node --version printed {v:?}, not a version"))?;
    if major < NODE_MIN_MAJOR {
        return Err(format!(
            "node is {v}; `node --test` as wfx runs it needs {NODE_MIN_MAJOR} or later"
        ));
    }
    Ok(Toolchain {
        lang: DemoLang::Node,
        program: "node".into(),
        version: format!("Node {v}"),
        // `npm test` runs the package's `node --test` script, as wfx
        // detects it; without npm (Debian's nodejs alone) the script's
        // command is named directly.
        runner: if npm {
            "npm test (node --test)"
        } else {
            "node --test"
        }
        .into(),
        test_command: (!npm).then(|| "node --test".to_string()),
        junit: None,
    })
}

fn probe_rust() -> Found {
    if !on_path("cargo") {
        return Found::Missing("cargo");
    }
    match capture("cargo", &["--version"]) {
        Ok(out) => Found::Ready(Toolchain {
            lang: DemoLang::Rust,
            program: "cargo".into(),
            version: out.split_whitespace().take(2).collect::<Vec<_>>().join(" "),
            runner: if on_path("cargo-nextest") {
                "cargo nextest run"
            } else {
                "cargo test"
            }
            .into(),
            test_command: None,
            junit: None,
        }),
        Err(why) => Found::Unusable(format!("cargo does not run: {why}")),
    }
}

/// Longest a version probe may take (a first `cargo --version` through
/// rustup can be slow; a hung interpreter must not hang the demo).
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `program args`, return its stdout when it exits 0, else a short
/// reason (its first stderr line, or the exit status).
fn capture(program: &str, args: &[&str]) -> Result<String, String> {
    let _child = crate::fsx::ChildRuns::start();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if started.elapsed() > PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer in {} s", PROBE_TIMEOUT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    if status.success() {
        Ok(out)
    } else {
        Err(err
            .lines()
            .find(|l| !l.trim().is_empty())
            .map_or_else(|| status.to_string(), |l| l.trim().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(lang: DemoLang) -> Found {
        Found::Ready(Toolchain {
            lang,
            program: name(lang).into(),
            version: format!("{} 1.0", name(lang)),
            runner: String::new(),
            test_command: None,
            junit: None,
        })
    }

    #[test]
    fn the_default_is_the_first_ready_sample_in_order() {
        use DemoLang::*;
        let cases: Vec<([Found; 3], Option<DemoLang>)> = vec![
            ([ready(Python), ready(Node), ready(Rust)], Some(Python)),
            (
                [
                    Found::Missing("python3 and python"),
                    ready(Node),
                    ready(Rust),
                ],
                Some(Node),
            ),
            (
                [
                    Found::Unusable("python is Python 2.7.18".into()),
                    Found::Missing("node"),
                    ready(Rust),
                ],
                Some(Rust),
            ),
            (
                [
                    ready(Python),
                    Found::Missing("node"),
                    Found::Missing("cargo"),
                ],
                Some(Python),
            ),
            (
                [
                    Found::Missing("python3 and python"),
                    Found::Missing("node"),
                    Found::Missing("cargo"),
                ],
                None,
            ),
        ];
        for (found, want) in cases {
            let found: Vec<(DemoLang, Found)> = ORDER.into_iter().zip(found).collect();
            assert_eq!(choose(None, &found).ok().map(|t| t.lang), want, "{found:?}");
        }
    }

    #[test]
    fn no_toolchain_names_what_was_looked_for() {
        let found = vec![
            (DemoLang::Python, Found::Missing("python3 and python")),
            (
                DemoLang::Node,
                Found::Unusable("node is v16.20.0; …".into()),
            ),
            (DemoLang::Rust, Found::Missing("cargo")),
        ];
        let msg = choose(None, &found).unwrap_err();
        assert!(
            msg.starts_with("wfx demo needs Python 3.8+, Node.js 18+ or Rust (cargo)"),
            "{msg}"
        );
        assert!(
            msg.contains("\n  python: python3 and python not on PATH"),
            "{msg}"
        );
        assert!(msg.contains("\n  node: node is v16.20.0"), "{msg}");
        assert!(msg.contains("\n  rust: cargo not on PATH"), "{msg}");
    }

    #[test]
    fn an_asked_for_sample_is_never_swapped_for_another() {
        let found = vec![
            (DemoLang::Python, ready(DemoLang::Python)),
            (DemoLang::Node, Found::Missing("node")),
            (DemoLang::Rust, Found::Missing("cargo")),
        ];
        let msg = choose(Some(DemoLang::Node), &found).unwrap_err();
        assert_eq!(
            msg,
            "wfx demo --lang node: node not on PATH; this machine can run --lang python (python 1.0)"
        );
        assert_eq!(
            choose(Some(DemoLang::Python), &found).unwrap().lang,
            DemoLang::Python
        );
    }

    #[test]
    fn python_probe_output() {
        let t = python_toolchain("python3", "3 11 7 pytest\n", "python3").unwrap();
        assert_eq!(t.version, "Python 3.11.7");
        assert_eq!(t.test_command, None, "pytest: wfx detects the command");
        assert_eq!(t.junit, None);
        // A Python 2 `python` beside `python3`: detection would pick it.
        let t = python_toolchain("python3", "3 11 7 pytest\n", "python").unwrap();
        assert_eq!(t.test_command.as_deref(), Some("python3 -m pytest"));
        assert_eq!(t.junit, None);
        let t = python_toolchain("python", "3 12 1 -\n", "python").unwrap();
        assert_eq!(
            t.test_command.as_deref(),
            Some("python .workflow/demo/run_tests.py")
        );
        assert_eq!(t.junit.as_deref(), Some(".workflow/demo/junit/*.xml"));
        assert!(
            python_toolchain("python", "2 7 18 -", "python")
                .unwrap_err()
                .contains("Python 2.7.18; the sample needs 3.8 or later")
        );
        assert!(python_toolchain("python3", "", "python3").is_err());
    }

    #[test]
    fn node_probe_output() {
        let t = node_toolchain("v20.20.2\n", true).unwrap();
        assert_eq!(t.version, "Node v20.20.2");
        assert_eq!(t.test_command, None, "npm test, as detected");
        let t = node_toolchain("v22.1.0", false).unwrap();
        assert_eq!(t.test_command.as_deref(), Some("node --test"));
        assert!(
            node_toolchain("v16.20.0", true)
                .unwrap_err()
                .contains("18 or later")
        );
        assert!(node_toolchain("garbage", true).is_err());
    }

    #[test]
    fn probes_report_programs_that_do_not_run() {
        assert!(capture("sh", &["-c", "echo hi"]).unwrap() == "hi\n");
        assert_eq!(
            capture("sh", &["-c", "echo broken >&2; exit 3"]).unwrap_err(),
            "broken"
        );
        assert!(capture("/nonexistent/program", &[]).is_err());
    }
}
