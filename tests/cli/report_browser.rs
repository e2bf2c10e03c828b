//! A real browser loads the report (of test-fix sessions and of a `wfx
//! run` session): `scripts/browser-check.sh` runs Debian's headless
//! Chromium with --dump-dom (the DOM, and the layout measured at a narrow
//! and a wide window) and --screenshot, whose pixels at the chart points
//! are compared with the colours each point must have. Skipped,
//! with a notice, only when Chromium is absent and WFX_BROWSER_CHECK is
//! unset; with WFX_BROWSER_CHECK set (CI) the script installs Chromium.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::Env;
use common::stories;

fn chromium_present() -> bool {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|c| {
            Command::new("sh")
                .args(["-c", &format!("command -v {c}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Chromium is here, or the check may install it; else say why it is skipped.
fn browser_available(name: &str) -> bool {
    if !chromium_present() && std::env::var_os("WFX_BROWSER_CHECK").is_none() {
        eprintln!(
            "NOTICE: skipping the browser check of the {name} report: chromium is not installed \
             (set WFX_BROWSER_CHECK=1 to install it and run the check)"
        );
        return false;
    }
    true
}

/// Write a session with `write`, render its report and check it in
/// Chromium; returns what the check printed.
fn check(name: &str, write: impl FnOnce(&Env) -> &'static str) -> String {
    let env = Env::new();
    let id = write(&env);
    env.wfx()
        .args(["report", id, "--html", "report.html"])
        .assert()
        .success();
    browser_check(name, &env, &env.root.join("report.html"))
}

fn browser_check(name: &str, env: &Env, report: &Path) -> String {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-check");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{name}.png"));
    std::fs::copy(report, shots.join(format!("{name}.html"))).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/browser-check.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(report)
        .arg(&shot)
        .env("HOME", &env.home)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser check failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("browser-check: ok"), "{stdout}");
    assert!(stdout.contains("dom: the chart x1"), "{stdout}");
    // The layout was measured at both windows and nothing overflowed (the
    // script fails otherwise).
    assert!(stdout.contains("layout 500: page "), "{stdout}");
    assert!(stdout.contains("layout 1280: page "), "{stdout}");
    eprintln!("{stdout}screenshot kept at {}", shot.display());
    stdout.into_owned()
}

/// `point ITERATION ring=#rrggbb centre=#rrggbb` lines: (ring, centre).
fn points(stdout: &str) -> Vec<([u8; 3], [u8; 3])> {
    let rgb = |s: &str| -> [u8; 3] {
        let hex = s.trim_start_matches('#');
        let v = u32::from_str_radix(hex, 16).unwrap_or_else(|_| panic!("colour {s}"));
        [(v >> 16) as u8, (v >> 8) as u8, v as u8]
    };
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("point "))
        .map(|l| {
            let ring = l.split("ring=").nth(1).unwrap().split(' ').next().unwrap();
            let centre = l.split("centre=").nth(1).unwrap();
            (rgb(ring), rgb(centre))
        })
        .collect()
}

/// A pixel is a colour when every channel is within a small antialiasing
/// tolerance.
fn near(pixel: [u8; 3], hex: &str) -> bool {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    let want = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
    pixel
        .iter()
        .zip(want)
        .all(|(a, b)| (*a as i32 - b as i32).abs() <= 24)
}

const FIRST_RUN: &str = "#6b7280";
const CONSERVATIVE: &str = "#2563eb";
const SURGICAL: &str = "#9333ea";
const WHITE: &str = "#ffffff";
const ROLLBACK: &str = "#dc2626";

/// The rendered points have the colours the chart promises: `want` is
/// (ring, centre) per point.
fn assert_point_colours(stdout: &str, want: &[(&str, &str)]) {
    let got = points(stdout);
    assert_eq!(got.len(), want.len(), "{stdout}");
    for (i, ((ring, centre), (want_ring, want_centre))) in got.iter().zip(want).enumerate() {
        assert!(
            near(*ring, want_ring) && near(*centre, want_centre),
            "point {i}: ring {ring:?} centre {centre:?}, want {want_ring} {want_centre}\n{stdout}"
        );
    }
}

/// One test, so that two checks never race to install Chromium.
#[test]
fn reports_render_in_chromium() {
    if !browser_available("test-fix and run") {
        return;
    }
    let shown = check("completed", |env| {
        let mut story = stories::completed("WFS-test-calc");
        // A fix that touched long paths, as agents do: its table must wrap
        // inside its columns, not run off the page.
        story.fixes[0]["files_changed"] = serde_json::json!([
            "src/very/deeply/nested/package/with/a/long/name/handlers/authentication_and_authorization.py",
            "tests/integration/test_authentication_and_authorization_end_to_end_with_many_cases.py",
        ]);
        story.fixes[0]["agent"] = serde_json::json!("a-custom-agent-with-a-rather-long-name");
        // Its diff: markup in the code stays text (the check fails on any
        // <script> element), a long line wraps inside the page.
        story.fixes[0]["diff"] = serde_json::json!({
            "text": format!(
                "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,2 +1,2 @@\n-    return '<script>alert(1)</script>'\n+    return {}\n",
                "x".repeat(390)
            ),
            "omitted_lines": 3,
        });
        story.write(env);
        "WFS-test-calc"
    });
    // First run grey; then the strategy recorded by the run before each
    // point: none, conservative, conservative (the affected-subset run 3,
    // hollow), surgical. The rolled-back run 2 keeps its ring colour under
    // the red cross drawn through its centre.
    assert_point_colours(
        &shown,
        &[
            (FIRST_RUN, FIRST_RUN),
            (FIRST_RUN, FIRST_RUN),
            (CONSERVATIVE, ROLLBACK),
            (CONSERVATIVE, WHITE),
            (SURGICAL, SURGICAL),
        ],
    );
    // A real session, as the engine records it: the Python demo. Run 1 has
    // no fix before it; the retest tiers of iterations 2 and 3 (affected
    // subsets, hollow) follow conservative fixes; the last run, the full
    // validation of iteration 3, follows the same fix as its tiers.
    let env = Env::new();
    let demo = env.tmp.path().join("demo");
    env.wfx_live()
        .args(["demo", "--lang", "python", "--dir"])
        .arg(&demo)
        .assert()
        .success();
    let shown = browser_check("demo", &env, &demo.join("cart/.workflow/report.html"));
    assert_point_colours(
        &shown,
        &[
            (FIRST_RUN, FIRST_RUN),
            (CONSERVATIVE, WHITE),
            (CONSERVATIVE, WHITE),
            (CONSERVATIVE, WHITE),
            (CONSERVATIVE, WHITE),
            (CONSERVATIVE, CONSERVATIVE),
        ],
    );
    check("blocked", |env| {
        stories::blocked("WFS-test-stuck").write(env);
        "WFS-test-stuck"
    });
    check("run", |env| {
        // A `wfx run` session: a test step fixed by its second debug
        // attempt, so the step table and a three-point chart are drawn.
        env.write(
            "check.sh",
            "#!/bin/sh\n[ -f fixed ] && exit 0\necho FAIL\nexit 3\n",
        );
        env.write(
            "wf.yml",
            "name: wf\ncommands:\n  - shell: echo build\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: test ${test.attempt} -ge 2 && touch fixed\n        max_attempts: 3\n",
        );
        env.wfx().args(["run", "wf.yml"]).assert().success();
        "WFS-run-wf"
    });
}
