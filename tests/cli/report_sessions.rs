//! `wfx report --html`: reports of completed, blocked, partial, awaiting-fix,
//! planning and archived sessions, read back and checked for their content.

use crate::common;

use std::path::Path;

use common::stories::{self, EVIL_TEST};
use common::{Env, html_section as section, make_session};
use predicates::prelude::*;

/// Run `wfx report ID --html OUT` (OUT relative to the project root) and
/// return the HTML.
fn report(env: &Env, id: &str, out: &str) -> String {
    env.wfx()
        .args(["report", id, "--html", out])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("Wrote {out}")));
    std::fs::read_to_string(env.root.join(out)).unwrap()
}

/// Undo the template's attribute escaping of `/` so hrefs read naturally.
fn unescape(html: &str) -> String {
    html.replace("&#x2f;", "/").replace("&amp;", "&")
}

fn hrefs(html: &str) -> Vec<String> {
    let re = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    re.captures_iter(&unescape(html))
        .map(|c| c[1].to_string())
        .collect()
}

fn self_contained(html: &str) {
    for banned in [
        "<script", "<link", "<img", "<iframe", "@import", "url(", " src=", "https://",
    ] {
        assert!(!html.contains(banned), "report contains {banned}");
    }
    // The only URL is the SVG namespace, which is never fetched.
    assert_eq!(html.matches("http://").count(), 1);
    assert!(html.contains(r#"xmlns="http://www.w3.org/2000/svg""#));
}

/// (fill, stroke) of each run's point in the chart, in order.
fn point_colours(chart: &str) -> Vec<(&str, &str)> {
    let re = regex::Regex::new(
        r#"<g class="run" data-iteration="\d+" data-run="\d+"><title>[^<]*</title><circle [^>]*fill="([^"]+)" stroke="([^"]+)""#,
    )
    .unwrap();
    re.captures_iter(chart)
        .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()))
        .collect()
}

#[test]
fn completed_session_tells_its_whole_story() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    let html = report(&env, "WFS-test-calc", "report.html");
    self_contained(&html);

    // Outcome and header.
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("<h2>Completed</h2>"), "{outcome}");
    assert!(outcome.contains("all 10 tests pass on the full suite (run 4)"));
    assert!(outcome.contains("wfx session complete WFS-test-calc"));
    assert!(html.contains("Tests for the calculator&#x27;s divide &amp; power"));

    // Chart: a point per run, one rollback cross, one flaky mark, threshold.
    let chart = section(&html, "chart");
    assert_eq!(chart.matches("<svg").count(), 1);
    assert_eq!(chart.matches(r#"<g class="run""#).count(), 5);
    assert_eq!(chart.matches(r#"class="rollback""#).count(), 1);
    assert_eq!(chart.matches(r#"<g class="flaky">"#).count(), 1);
    assert!(chart.contains("threshold 95.0%"));
    // Each point has the colour of the fix before it: the strategy its
    // previous run recorded; the first run has none (grey, "first run").
    let fills = point_colours(chart);
    assert_eq!(
        fills,
        [
            ("#6b7280", "#6b7280"),
            ("#6b7280", "#6b7280"),
            ("#2563eb", "#2563eb"),
            ("#ffffff", "#2563eb"),
            ("#9333ea", "#9333ea"),
        ],
        "subset run 3 drawn hollow"
    );
    // Points are numbered by run (unique), as the runs table is.
    assert!(
        chart.contains("run 1 (iteration 0): 60.0% (6/10 passed, full suite), first run</title>")
    );
    assert!(chart.contains(
        "run 3 (iteration 2): 50.0% (5/10 passed, full suite), after a conservative fix, rolled back"
    ));
    assert!(chart.contains(
        "run 4 (iteration 3): affected 9/10 passed; the suite 90.0% (merged over the last full run)"
    ));
    let labels: Vec<&str> =
        regex::Regex::new(r##"text-anchor="middle" fill="#4b5563">(\d+)</text>"##)
            .unwrap()
            .captures_iter(chart)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
    assert_eq!(labels, ["1", "2", "3", "4", "5"]);

    // Runs table.
    let runs = section(&html, "iterations");
    assert_eq!(runs.matches("<tr").count(), 6, "header + 5 runs");
    assert_eq!(runs.matches(r#"<tr class="rolled_back">"#).count(), 1);
    assert!(runs.contains("reverted by 9876543210"));
    assert!(runs.contains(r#"<td class="num">90.0%<div class="muted" title="this run's results merged over the last full run">merged</div></td>"#), "{runs}");
    assert!(runs.contains(
        r#"<span class="badge flaky" title="tests&#x2f;test_ops.py::test_power">flaky 1</span>"#
    ));

    // Tasks with durations from their status history.
    let tasks = section(&html, "tasks");
    for id in [
        "IMPL-001",
        "IMPL-001.3",
        "IMPL-001.5",
        "IMPL-002",
        "IMPL-fix-1",
        "IMPL-fix-4",
    ] {
        assert!(
            tasks.contains(&format!(r#"<td class="mono">{id}</td>"#)),
            "{id}"
        );
    }
    assert!(tasks.contains("<td>2 min</td>"));
    assert!(tasks.contains(r#"<span class="badge skipped">skipped</span>"#));

    // Fix history: agent, duration, cost, files, diffstat, test edits, commit.
    let fixes = section(&html, "fixes");
    assert_eq!(fixes.matches(r#"<td class="mono">IMPL-fix-"#).count(), 4);
    assert!(fixes.contains("66 s"));
    assert!(fixes.contains("$0.42"));
    assert!(fixes.contains("<code>calc&#x2f;ops.py</code>"));
    assert!(fixes.contains("+12 −3"));
    assert!(fixes.contains(r#"<span class="flag serious" title="@pytest.mark.skip added">skip_added: tests&#x2f;test_ops.py</span>"#));
    assert!(fixes.contains(
        r#"<span class="flag" title="assertion changed">modified: tests&#x2f;test_ops.py</span>"#
    ));
    assert!(fixes.contains("1abcdef012"));
    assert!(fixes.contains("60.0% → 80.0%"));
    // The fix agent's own prompt and output, not the analysis agent's.
    let fix_links = unescape(fixes);
    assert!(
        fix_links.contains(".process/iteration-1-fix-prompt.md\">prompt</a>"),
        "{fix_links}"
    );
    assert!(fix_links.contains(".process/iteration-4-fix-cli-output.txt\">output</a>"));
    assert!(!fix_links.contains("iteration-1-prompt.md"));
    // Cost: four reported calls of $0.42, one without a cost.
    let summary = section(&html, "summary");
    assert!(
        summary.contains(r#"<div class="v">$1.68</div><div class="muted">5 agent calls</div>"#),
        "{summary}"
    );

    // Failures per iteration, with file:line, criticality and flaky flag.
    let failures = section(&html, "failures");
    assert!(failures.contains("Iteration 1: failures the fix was asked to address (60.0%)"));
    assert!(failures.contains("Iteration 3: failures the fix was asked to address (80.0%)"));
    assert!(failures.contains(r#"<td class="mono">calc&#x2f;ops.py:10</td>"#));
    assert!(failures.contains(r#"<td class="mono">tests&#x2f;test_ops.py:42</td>"#));
    assert!(failures.contains(r#"<span class="badge high">high</span>"#));
    assert!(failures.contains(r#"<span class="badge flaky">flaky</span>"#));

    // Untrusted names are text.
    assert!(!html.contains("<script>alert(1)</script>"));
    assert!(html.contains("test_&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    assert!(!html.contains(EVIL_TEST));
}

#[test]
fn links_are_relative_and_point_at_real_files() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    for out in ["report.html", "out/deep/report.html"] {
        let html = report(&env, "WFS-test-calc", out);
        let base = env.root.join(out).parent().unwrap().to_path_buf();
        let links = hrefs(&html);
        assert!(links.len() > 20, "{links:?}");
        for href in &links {
            assert!(!href.starts_with('/'), "absolute link {href}");
            assert!(base.join(href).is_file(), "{out}: {href} does not exist");
        }
        let prefix = if out == "report.html" { "" } else { "../../" };
        for want in [
            "workflow-session.json",
            ".task/IMPL-fix-2.json",
            ".process/iteration-1-prompt.md",
            ".process/iteration-2-cli-output.txt",
            ".process/iteration-3-failures.json",
            ".process/test-results.json",
            ".process/fix-history.json",
        ] {
            let link = format!("{prefix}.workflow/active/WFS-test-calc/{want}");
            assert!(links.contains(&link), "{out}: no link {link}");
        }
    }
}

#[test]
fn report_outside_the_project_shows_paths_as_text() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    let out = env.tmp.path().join("elsewhere/report.html");
    env.wfx()
        .args(["report", "WFS-test-calc", "--html", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains("artifact paths are shown as text"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(hrefs(&html).is_empty());
    assert!(html.contains("shown relative to the project root"));
    assert!(
        unescape(&html)
            .contains("<code>.workflow/active/WFS-test-calc/.process/fix-history.json</code>")
    );
    assert!(
        !html.contains(env.tmp.path().to_str().unwrap()),
        "no absolute path in the report"
    );
}

#[test]
fn blocked_session_names_the_reason_and_the_way_on() {
    let env = Env::new();
    stories::blocked("WFS-test-stuck").write(&env);
    let html = report(&env, "WFS-test-stuck", "r.html");
    let outcome = unescape(section(&html, "outcome"));
    assert!(outcome.contains("<h2>Blocked</h2>"));
    assert!(outcome.contains("reached the limit of 3 fix attempts"));
    assert!(
        outcome
            .contains(r#"<a href=".workflow/active/WFS-test-stuck/.process/failure-report.md">"#)
    );
    assert!(outcome.contains(
        "wfx session resume WFS-test-stuck && wfx test-cycle-execute --resume-session=WFS-test-stuck --max-iterations=5"
    ));
    let runs = section(&html, "iterations");
    assert!(runs.contains("Stuck tests"));
    assert!(runs.contains("<li><code>tests&#x2f;test_ops.py::test_power</code></li>"));
    assert_eq!(
        section(&html, "chart").matches(r#"<g class="run""#).count(),
        4
    );
    let fixes = section(&html, "fixes");
    assert!(fixes.contains(r#"<span class="badge timeout">timeout</span>"#));
    assert!(
        section(&html, "summary")
            .contains(r#"<div class="v">$2.75</div><div class="muted">3 agent calls</div>"#)
    );
    assert!(section(&html, "failures").contains("Latest test run (full suite, 60.0%): 4 failing"));
}

#[test]
fn partial_success_shows_the_threshold_and_the_low_failure() {
    let env = Env::new();
    env.write(".workflow/wfx.json", r#"{"cycle": {"pass_threshold": 90}}"#);
    stories::partial("WFS-test-net").write(&env);
    let html = report(&env, "WFS-test-net", "r.html");
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("<h2>Partial success</h2>"));
    assert!(outcome.contains(
        "96.0% of the tests pass (threshold 90.0%) and the 2 remaining failures are all low criticality"
    ));
    let chart = section(&html, "chart");
    assert!(chart.contains("threshold 90.0%"));
    // Flaky from the latest results marks the last run.
    assert_eq!(chart.matches(r#"<g class="flaky">"#).count(), 1);
    assert!(chart.contains("<title>flaky: tests/test_net.py::test_timeout</title>"));
    let failures = section(&html, "failures");
    assert!(failures.contains(r#"<span class="badge low">low</span>"#));
}

#[test]
fn in_progress_session_waiting_for_a_manual_fix() {
    let env = Env::new();
    stories::awaiting_fix("WFS-test-manual").write(&env);
    let html = report(&env, "WFS-test-manual", "r.html");
    let outcome = unescape(section(&html, "outcome"));
    assert!(outcome.contains("<h2>Awaiting a fix by hand</h2>"));
    assert!(outcome.contains(
        "apply the fix described in .workflow/active/WFS-test-manual/.task/IMPL-fix-1.json (IMPL-fix-1) by hand"
    ));
    assert!(outcome.contains("next action <code>execute_fix_task</code>"));
    assert!(
        outcome.contains("<code>wfx test-cycle-execute --resume-session=WFS-test-manual</code>")
    );
    assert!(section(&html, "fixes").contains("No fix attempt yet."));
    assert_eq!(
        section(&html, "chart").matches(r#"<g class="run""#).count(),
        1
    );
    assert!(
        section(&html, "tasks").contains(r#"<span class="badge in_progress">in_progress</span>"#)
    );
}

#[test]
fn planning_session_without_runs() {
    let env = Env::new();
    make_session(&env, "WFS-test-new", "planning", &[("IMPL-001", "pending")]);
    let html = report(&env, "WFS-test-new", "r.html");
    assert!(section(&html, "outcome").contains("<h2>Planning</h2>"));
    assert!(section(&html, "chart").contains("No test runs yet"));
    assert!(section(&html, "iterations").contains("No test run recorded yet."));
    assert!(section(&html, "failures").contains("No failures recorded."));
    assert!(html.contains("wfx test-fix-gen WFS-test-new"));
}

#[test]
fn archived_session_links_into_archives() {
    let env = Env::new();
    stories::completed("WFS-test-old").write(&env);
    stories::archive(&env, "WFS-test-old");
    let html = report(&env, "WFS-test-old", "r.html");
    let links = hrefs(&html);
    assert!(
        links.contains(&".workflow/archives/WFS-test-old/.process/fix-history.json".to_string())
    );
    for href in &links {
        assert!(env.root.join(href).is_file(), "{href}");
    }
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("archived: the session is finished and kept read-only"));
    assert!(!outcome.contains("<code>wfx "));
    assert!(html.contains("location <b>archived</b>"));
}

#[test]
fn default_session_json_output_and_usage_errors() {
    let env = Env::new();
    stories::blocked("WFS-test-stuck").write(&env);
    let out = env
        .wfx()
        .args(["--json", "report", "--html", "r.html"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["session_id"], "WFS-test-stuck");
    assert_eq!(v["report"], "r.html");
    assert_eq!(v["links"], true);
    assert_eq!(v["outcome"]["kind"], "blocked");
    assert_eq!(
        v["bytes"].as_u64().unwrap() as usize,
        env.read("r.html").len()
    );

    env.wfx()
        .args(["report", "WFS-nope", "--html", "x.html"])
        .assert()
        .code(2);
    env.wfx()
        .args(["report", "../etc", "--html", "x.html"])
        .assert()
        .code(2);
    std::fs::create_dir_all(env.root.join("adir")).unwrap();
    env.wfx()
        .args(["report", "WFS-test-stuck", "--html", "adir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
}

#[test]
fn without_html_the_report_goes_to_the_workflow_dir_and_says_where() {
    let env = Env::new();
    stories::blocked("WFS-test-stuck").write(&env);
    env.wfx()
        .args(["report"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "Wrote .workflow/report.html (WFS-test-stuck: Blocked; ",
        ));
    let html = env.read(".workflow/report.html");
    // Inside the project: the artifact paths are links.
    assert!(hrefs(&html).contains(&"active/WFS-test-stuck/workflow-session.json".to_string()));
    // From a directory above the project, the path shown is usable there.
    let above = env.root.parent().unwrap();
    let mut cmd = env.wfx();
    cmd.current_dir(above)
        .args(["-C", "project", "report"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "Wrote project/.workflow/report.html ",
        ));
}

#[test]
fn damaged_artifacts_are_reported_not_fatal() {
    let env = Env::new();
    let dir = stories::blocked("WFS-test-stuck").write(&env);
    std::fs::write(dir.join(".process/fix-history.json"), "{ not json").unwrap();
    env.wfx()
        .args(["report", "WFS-test-stuck", "--html", "r.html"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "left out of the report: .workflow/active/WFS-test-stuck/.process/fix-history.json: /: invalid JSON",
        ));
    let html = env.read("r.html");
    let problems = section(&html, "problems");
    assert!(problems.contains("fix-history.json"));
    assert!(section(&html, "fixes").contains("No fix attempt yet."));
    assert_eq!(
        section(&html, "chart").matches(r#"<g class="run""#).count(),
        4
    );
}

#[test]
fn a_project_template_overrides_the_report() {
    let env = Env::new();
    stories::partial("WFS-test-net").write(&env);
    env.write(
        ".workflow/templates/report.html.j2",
        "<p>{{ s.session_id }} {{ s.outcome.kind }} {{ s.runs|length }} {{ s.tasks[0].id }}</p>",
    );
    let html = report(&env, "WFS-test-net", "r.html");
    assert_eq!(html, "<p>WFS-test-net partial_success 2 IMPL-001</p>");

    env.write(
        ".workflow/templates/report.html.j2",
        "{{ s.no_such_field }}",
    );
    env.wfx()
        .args(["report", "WFS-test-net", "--html", "r.html"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("report.html.j2"));
}

#[test]
fn the_report_is_the_same_for_the_same_session_apart_from_its_date() {
    let env = Env::new();
    stories::completed("WFS-test-calc").write(&env);
    let strip = |html: String| {
        let i = html.find("<footer>").unwrap();
        html[..i].to_string()
    };
    let a = strip(report(&env, "WFS-test-calc", "a.html"));
    let b = strip(report(&env, "WFS-test-calc", "b.html"));
    assert_eq!(a, b);
    assert!(Path::new(&env.root.join("a.html")).is_file());
}

#[test]
fn long_sessions_list_at_most_2000_failures_newest_first() {
    let env = Env::new();
    let mut story = stories::blocked("WFS-test-long");
    story.latest_failures = Vec::new();
    story.iteration_failures = (1..=12)
        .map(|n| {
            let failures = (0..250)
                .map(|i| {
                    stories::failure(&format!("t::case_{n}_{i}"), "src/x.py", i, "medium", false)
                })
                .collect();
            (n, 50.0, failures)
        })
        .collect();
    story.write(&env);
    let html = report(&env, "WFS-test-long", "r.html");
    let failures = section(&html, "failures");
    assert_eq!(failures.matches("<code>t::case_").count(), 2000);
    assert_eq!(failures.matches("<code>t::case_12_").count(), 200);
    assert_eq!(failures.matches("<code>t::case_3_").count(), 200);
    assert_eq!(failures.matches("<code>t::case_2_").count(), 0);
    assert_eq!(failures.matches("… and 50 more in the file.").count(), 10);
    assert_eq!(
        failures
            .matches("250 failures, not listed to keep this page short: see the file.")
            .count(),
        2
    );
}

#[test]
fn active_and_paused_sessions_mid_loop() {
    let env = Env::new();
    let mut story = stories::awaiting_fix("WFS-test-live");
    story.status = "active";
    story.next_action = "retest";
    story.loop_status = "running";
    story.write(&env);
    let html = report(&env, "WFS-test-live", "r.html");
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("<h2>In progress</h2>"), "{outcome}");
    assert!(outcome.contains("1 test run so far, latest 70.0%; next action `retest`"));
    assert!(outcome.contains("<code>wfx test-cycle-execute --resume-session=WFS-test-live</code>"));

    let mut story = stories::awaiting_fix("WFS-test-stopped");
    story.status = "paused";
    story.next_action = "analyze_failures";
    story.write(&env);
    let html = report(&env, "WFS-test-stopped", "r.html");
    let outcome = section(&html, "outcome");
    assert!(outcome.contains("<h2>Paused</h2>"));
    assert!(outcome.contains(
        "stopped before `analyze_failures` (interrupted, or an agent was unavailable); resumable"
    ));
    assert!(outcome.contains("continue where it stopped"));
}
