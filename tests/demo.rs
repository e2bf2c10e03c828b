//! `wfx demo` end to end, as the README's first command runs it.

mod common;

use common::{Env, git_in};

#[test]
fn demo_fixes_the_sample_and_leaves_a_session_commits_and_a_report() {
    let env = Env::new();
    let dir = env.tmp.path().join("demo");
    let out = env
        .wfx_live()
        .arg("demo")
        .arg("--dir")
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let project = dir.join("calc");

    // The session went through the loop and was archived.
    let archived = project.join(".workflow/archives/WFS-test-the-calculator");
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
    let rates: Vec<f64> = state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pass_rate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates.last(), Some(&100.0), "{rates:?}");
    assert!(rates.len() >= 2 && rates[0] < 100.0, "{rates:?}");

    // One commit per fix attempt plus the final commit, on top of the sample.
    let subjects = git_in(&env, &project, &["log", "--format=%s"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.last(), Some(&"Sample calculator with two bugs"));
    assert!(
        subjects[0].starts_with("test-cycle: session WFS-test-the-calculator completed"),
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

    // The report exists and tells the story.
    let report = std::fs::read_to_string(project.join(".workflow/report.html")).unwrap();
    assert!(report.contains("<svg") && report.contains("WFS-test-the-calculator"));
    assert!(stderr.contains("Report:"), "{stderr}");

    // Everything wfx wrote validates.
    env.wfx()
        .arg("-C")
        .arg(&project)
        .arg("validate")
        .assert()
        .success();
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
