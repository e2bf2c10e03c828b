//! Each fix attempt's diff (DESIGN.md §10.7, issue #20): recorded in
//! fix-history.json when the fix is inspected, shown by `wfx status` (text
//! and `--json`, archived sessions too), the HTML report and
//! failure-report.md. A real cycle: node-calc with the `fix-one` fixture
//! fixer, which changes one line of the source per call.

use crate::common;

use common::{Env, fixer_config, html_section, wfx_out};
use serde_json::Value;

const ID: &str = "WFS-test-the-calculator";
const MATH_FIX: &str =
    "-    if (values[i] < best) best = values[i];\n+    if (values[i] > best) best = values[i];\n";

/// `wfx status ARGS`, which succeeds; its stdout.
fn status(env: &Env, args: &[&str]) -> String {
    let out = wfx_out(env, &[&["status"], args].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
}

/// Commit ids (10 hex digits in the status view) vary with the session's
/// timestamps, which commits of its files carry.
fn stable(text: &str) -> String {
    regex::Regex::new(r"\b[0-9a-f]{10}\b")
        .unwrap()
        .replace_all(text, "<commit>")
        .into_owned()
}

#[test]
fn every_fix_shows_its_diff_in_status_after_the_session_is_archived() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-one"));
    env.plan_calculator();
    env.cycle(&[]).success();

    // `wfx status` without an id takes the archived session.
    let v: Value = serde_json::from_str(&status(&env, &["--json"])).unwrap();
    assert_eq!(v["location"], "archived");
    let fixes = v["fixes"].as_array().unwrap();
    assert_eq!(fixes.len(), 2, "{v}");
    let first = &fixes[0]["diff"];
    let text = first["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "diff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n@@ "
        ),
        "{text}"
    );
    assert!(text.contains(MATH_FIX), "{text}");
    assert!(
        !text.contains("strings.js") && !text.contains(".workflow"),
        "{text}"
    );
    assert_eq!(first["omitted_lines"], 0);
    assert_eq!(
        fixes[0]["diffstat"],
        serde_json::json!({"files": 1, "insertions": 1, "deletions": 1})
    );
    let second = fixes[1]["diff"]["text"].as_str().unwrap();
    assert!(second.contains("+++ b/src/strings.js\n"), "{second}");
    assert!(!second.contains("math.js"), "{second}");
    // What fix-history.json holds is what `--json` shows.
    let history = env.json(&format!(
        ".workflow/archives/{ID}/.process/fix-history.json"
    ));
    assert_eq!(history["entries"][0]["diff"], *first);

    // The text view: one line per attempt, its diff indented under it; no
    // colour without a terminal.
    let out = status(&env, &[]);
    let at = out.find("Fix attempts:").expect("a fix attempts section");
    insta::assert_snapshot!(stable(&out[at..]));
    assert!(!out.contains('\x1b'), "{out}");
    // Asked for (`--color always` wins over NO_COLOR, which decides only
    // the automatic choice), added and removed lines are coloured.
    let coloured = status(&env, &["--color", "always", ID]);
    assert!(
        coloured.contains("    \x1b[32m+    if (values[i] > best) best = values[i];\x1b[0m\n"),
        "{coloured}"
    );
    assert!(
        coloured.contains("    \x1b[31m-    if (values[i] < best) best = values[i];\x1b[0m\n"),
        "{coloured}"
    );
}

#[test]
fn a_blocked_session_shows_the_diffs_in_its_failure_report_and_html_report() {
    let env = Env::new();
    env.cycle_project("node-calc", &fixer_config("fix-one"));
    env.plan_calculator();
    env.cycle(&["--max-iterations", "1"]).code(1);
    let dir = format!(".workflow/active/{ID}");

    let report =
        std::fs::read_to_string(env.root.join(&dir).join(".process/failure-report.md")).unwrap();
    // Under its attempt's line, in a fenced block of its own.
    assert!(
        report.contains(
            "`src/math.js`\n\n```diff\ndiff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n"
        ),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "{MATH_FIX}   }}\n   return best;\n }}\n```\n\n## Stuck tests\n"
        )),
        "{report}"
    );

    env.wfx()
        .args(["report", ID, "--html", "report.html"])
        .assert()
        .success();
    let html = std::fs::read_to_string(env.root.join("report.html")).unwrap();
    let fixes = html_section(&html, "fixes");
    assert!(fixes.contains(r##"<a href="#diff-1">diff</a>"##), "{fixes}");
    assert!(
        fixes.contains(
            r#"<details class="diff" id="diff-1"><summary>IMPL-fix-1 (iteration 1, conservative, "#
        ),
        "{fixes}"
    );
    assert!(
        fixes.contains(
            r#"<span class="removed">-    if (values[i] &lt; best) best = values[i];</span>
<span class="added">+    if (values[i] &gt; best) best = values[i];</span>"#
        ),
        "{fixes}"
    );
}
