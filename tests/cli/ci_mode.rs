//! CI mode under a simulated GitHub Actions environment (docs/ci.md):
//! `CI=true GITHUB_ACTIONS=true` with temp files for `$GITHUB_STEP_SUMMARY`
//! and `$GITHUB_OUTPUT`. The outputs are read the way the runner reads
//! them, the annotations are decoded the way the runner decodes workflow
//! commands, and the JUnit XML is validated against Jenkins' JUnit schema
//! (`fixtures/junit/junit-10.xsd`, with Python's `xmlschema`) and read
//! back by wfx's own JUnit parser.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Env, fixer_config};

/// The files GitHub gives a step, and the environment naming them.
struct GitHub {
    summary: PathBuf,
    output: PathBuf,
}

impl GitHub {
    fn new(env: &Env) -> GitHub {
        let dir = env.tmp.path().join("runner");
        std::fs::create_dir_all(&dir).unwrap();
        let gh = GitHub {
            summary: dir.join("step_summary.md"),
            output: dir.join("output.txt"),
        };
        std::fs::write(&gh.summary, "").unwrap();
        std::fs::write(&gh.output, "").unwrap();
        gh
    }

    fn apply(&self, cmd: &mut assert_cmd::Command) {
        cmd.env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .env("GITHUB_OUTPUT", &self.output);
    }

    /// `$GITHUB_OUTPUT` as the runner reads it: `name=value` lines and
    /// `name<<DELIMITER` … `DELIMITER` blocks.
    fn outputs(&self) -> BTreeMap<String, String> {
        let text = std::fs::read_to_string(&self.output).unwrap();
        let mut out = BTreeMap::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if let Some((name, delimiter)) = line.split_once("<<") {
                let mut value = Vec::new();
                for l in lines.by_ref() {
                    if l == delimiter {
                        break;
                    }
                    value.push(l);
                }
                out.insert(name.to_string(), value.join("\n"));
            } else if let Some((name, value)) = line.split_once('=') {
                out.insert(name.to_string(), value.to_string());
            }
        }
        out
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(&self.summary).unwrap()
    }
}

/// A workflow command as the runner decodes it.
#[derive(Debug, Clone, PartialEq)]
struct Annotation {
    level: String,
    props: BTreeMap<String, String>,
    message: String,
}

fn unescape(s: &str, property: bool) -> String {
    let mut s = s.replace("%0D", "\r").replace("%0A", "\n");
    if property {
        s = s.replace("%3A", ":").replace("%2C", ",");
    }
    s.replace("%25", "%")
}

/// Every `::level props::message` line of `text`.
fn annotations(text: &str) -> Vec<Annotation> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("::")?;
            let (head, message) = rest.split_once("::")?;
            let (level, props) = head.split_once(' ').unwrap_or((head, ""));
            if !matches!(level, "error" | "warning" | "notice") {
                return None;
            }
            let props = props
                .split(',')
                .filter(|p| !p.is_empty())
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_string(), unescape(v, true)))
                .collect();
            Some(Annotation {
                level: level.to_string(),
                props,
                message: unescape(message, false),
            })
        })
        .collect()
}

/// Validate `xml` against Jenkins' JUnit schema; panics with the reason.
fn validate_junit(xml: &Path) {
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/junit/junit-10.xsd");
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
        ])
        .arg(&xsd)
        .arg(xml)
        .output()
        .expect("python3 runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("No module named 'xmlschema'"),
        "the JUnit check needs Python's xmlschema: scripts/test.sh installs it (pip install xmlschema)"
    );
    assert!(
        out.status.success(),
        "{} is not valid JUnit: {err}",
        xml.display()
    );
}

/// `(id, status, file, line, error)` of one test case.
type CaseRow = (String, String, Option<String>, Option<u64>, String);

/// `(id, status, file, line, error)` of every case and failure of a
/// results document (`wfx test --json`, `test-results.json`).
fn cases_of_results(r: &serde_json::Value) -> Vec<CaseRow> {
    let failures: BTreeMap<&str, &serde_json::Value> = r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["test"].as_str().unwrap(), f))
        .collect();
    let mut out: Vec<_> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["test"].as_str().unwrap();
            let f = failures.get(id);
            (
                id.to_string(),
                c["status"].as_str().unwrap().to_string(),
                f.and_then(|f| f["file"].as_str())
                    .or(c["file"].as_str())
                    .map(str::to_string),
                f.and_then(|f| f["line"].as_u64()),
                f.and_then(|f| f["error"].as_str())
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The same, from JUnit XML read by wfx's own parser.
fn cases_of_junit(xml: &str) -> Vec<CaseRow> {
    let run = wfx::testing::parse::junit::parse(xml).expect("wfx parses its own JUnit");
    let mut out: Vec<_> = run
        .cases
        .iter()
        .map(|c| {
            let status =
                serde_json::to_value(wfx::artifacts::test_results::CaseStatus::from(c.status))
                    .unwrap();
            (
                c.id.clone(),
                status.as_str().unwrap().to_string(),
                c.file.clone(),
                c.line.map(u64::from),
                c.error.clone(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A hex commit id (or its 10-digit short form) as `[commit]`.
fn redact_commits(text: &str) -> String {
    let re = regex::Regex::new(r"\b[0-9a-f]{10}([0-9a-f]{30})?\b").unwrap();
    re.replace_all(text, "[commit]").into_owned()
}

#[test]
fn a_session_on_github_leaves_a_summary_outputs_annotations_and_junit() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("fix-one"));
    let gh = GitHub::new(&env);
    let junit = env.tmp.path().join("reports/junit.xml");
    let mut cmd = env.wfx_live();
    gh.apply(&mut cmd);
    let out = cmd
        .env("FIXER_STATE", env.state_dir())
        .args(["test-fix-gen", "Fix the calculator", "--junit"])
        .arg(&junit)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains('\u{7}'), "no bell on CI");

    // Outputs, as a later step's `steps.<id>.outputs.*` sees them.
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_string();
    let outputs = gh.outputs();
    assert_eq!(outputs["session"], "WFS-test-fix-the-calculator");
    assert_eq!(outputs["status"], "completed");
    assert_eq!(outputs["pass_rate"], "100.0");
    assert_eq!(outputs["final_commit"], head);
    assert_eq!(outputs["exit_code"], "0");

    // Annotations: the outcome as a notice; no failure is left.
    let notes = annotations(&stderr);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].level, "notice");
    assert_eq!(
        notes[0].props["title"],
        "wfx: Completed (WFS-test-fix-the-calculator)"
    );

    // The summary a person reads on the run's page.
    insta::assert_snapshot!("github_summary_completed", redact_commits(&gh.summary()));

    // JUnit: valid, and the same run as the session's last results.
    validate_junit(&junit);
    let results =
        env.json(".workflow/archives/WFS-test-fix-the-calculator/.process/test-results.json");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(cases_of_junit(&xml), cases_of_results(&results));
}

#[test]
fn manual_mode_on_ci_pauses_with_the_reason_and_annotates_the_failures() {
    let env = Env::new();
    env.cycle_project("py-calc", &serde_json::json!({}));
    let gh = GitHub::new(&env);
    let mut cmd = env.wfx_live();
    gh.apply(&mut cmd);
    // --watch would wait for a saved file: on CI it is ignored.
    let out = cmd
        .args([
            "test-fix-gen",
            "Fix the calculator",
            "--fix-agent",
            "manual",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(!stderr.contains('\u{7}'), "no bell on CI");

    let mut cmd = env.wfx_live();
    gh.apply(&mut cmd);
    let again = cmd
        .args(["test-cycle-execute", "--watch"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let again_err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(3), "{again_err}");
    assert!(
        again_err.contains("--watch is ignored on CI"),
        "{again_err}"
    );

    let notes = annotations(&stderr);
    let outcome = &notes[0];
    assert_eq!(outcome.level, "warning");
    assert_eq!(
        outcome.props["title"],
        "wfx: Awaiting a fix by hand (WFS-test-fix-the-calculator)"
    );
    assert!(
        outcome
            .message
            .contains("Continue with: wfx test-cycle-execute"),
        "{outcome:?}"
    );
    let failures: Vec<&Annotation> = notes.iter().filter(|a| a.level == "error").collect();
    assert_eq!(failures.len(), 2, "{notes:?}");
    for f in &failures {
        let file = &f.props["file"];
        assert!(file.starts_with("tests/test_"), "{f:?}");
        let line: u32 = f.props["line"].parse().unwrap();
        let source = env.read(file);
        assert!(
            source.lines().nth(line as usize - 1).is_some(),
            "{file}:{line} is a line of the file"
        );
        assert!(f.props["title"].ends_with(" failed"), "{f:?}");
    }
    let outputs = gh.outputs();
    assert_eq!(outputs["status"], "awaiting_fix");
    assert_eq!(outputs["exit_code"], "3");
    assert_eq!(outputs["final_commit"], "");
    let summary = gh.summary();
    assert!(summary.contains("Awaiting a fix by hand"), "{summary}");
    assert!(
        summary.contains("### Failing in the last run (2)"),
        "{summary}"
    );
}

#[test]
fn a_rejected_test_edit_is_a_warning_on_the_test_file() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("skip-test"));
    let gh = GitHub::new(&env);
    let mut cmd = env.wfx_live();
    gh.apply(&mut cmd);
    let out = cmd
        .env("FIXER_STATE", env.state_dir())
        .args([
            "test-fix-gen",
            "Fix the calculator",
            "--max-iterations",
            "1",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let notes = annotations(&stderr);
    let edits: Vec<&Annotation> = notes
        .iter()
        .filter(|a| a.level == "warning" && a.props["title"].starts_with("wfx: test edit"))
        .collect();
    assert!(!edits.is_empty(), "{notes:?}");
    for e in edits {
        assert!(
            e.props["title"].starts_with("wfx: test edit rejected (iteration 1"),
            "{e:?}"
        );
        assert!(e.props["file"].starts_with("tests/"), "{e:?}");
        assert!(e.message.contains("skip"), "{e:?}");
    }
    assert_eq!(notes[0].level, "error", "blocked: {notes:?}");
    assert_eq!(gh.outputs()["status"], "blocked");
}

#[test]
fn wfx_test_writes_junit_that_validates_and_reads_back_the_same() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    let junit = env.root.join("junit.xml");
    let gh = GitHub::new(&env);
    let mut cmd = env.wfx_live();
    gh.apply(&mut cmd);
    let out = cmd
        .args(["--json", "test", "--junit", "junit.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let results: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is JSON only");
    validate_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let back = cases_of_junit(&xml);
    assert_eq!(back, cases_of_results(&results));
    assert!(
        back.iter().any(|c| c.1 == "failed" && c.3.is_some()),
        "a failure with its line: {back:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<Annotation> = annotations(&stderr)
        .into_iter()
        .filter(|a| a.level == "error")
        .collect();
    assert_eq!(errors.len() as u64, results["failed"].as_u64().unwrap());
    let outputs = gh.outputs();
    assert_eq!(outputs["status"], "failed");
    assert_eq!(
        outputs["pass_rate"],
        format!("{:.1}", results["pass_rate"].as_f64().unwrap())
    );
}

#[test]
fn hostile_names_and_messages_stay_inside_their_xml() {
    let env = Env::new();
    env.write(
        "pyproject.toml",
        "[project]\nname = \"h\"\nversion = \"0\"\n[tool.pytest.ini_options]\n",
    );
    env.write(
        "tests/test_h.py",
        "import pytest\n\n@pytest.mark.parametrize('v', ['a\"<b>&c', \"]]>\"])\ndef test_odd(v):\n    assert v == '\\x1b[31m%0A::error::x'\n",
    );
    env.git_init_commit();
    let junit = env.root.join("junit.xml");
    let out = env
        .wfx_live()
        .args(["--json", "test", "--junit", "junit.xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results["failed"], 2, "{results}");
    validate_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(cases_of_junit(&xml), cases_of_results(&results));
}
