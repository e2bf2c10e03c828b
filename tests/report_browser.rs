//! A real browser loads the report (of test-fix sessions and of a `wfx
//! run` session): `scripts/browser-check.sh` runs Debian's headless
//! Chromium with --dump-dom and --screenshot. Skipped,
//! with a notice, only when Chromium is absent and WFX_BROWSER_CHECK is
//! unset; with WFX_BROWSER_CHECK set (CI) the script installs Chromium.

mod common;

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

fn check(name: &str, write: impl FnOnce(&Env) -> &'static str) {
    if !chromium_present() && std::env::var_os("WFX_BROWSER_CHECK").is_none() {
        eprintln!(
            "NOTICE: skipping the browser check of the {name} report: chromium is not installed \
             (set WFX_BROWSER_CHECK=1 to install it and run the check)"
        );
        return;
    }
    let env = Env::new();
    let id = write(&env);
    env.wfx()
        .args(["report", id, "--html", "report.html"])
        .assert()
        .success();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-check");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{name}.png"));
    std::fs::copy(
        env.root.join("report.html"),
        shots.join(format!("{name}.html")),
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/browser-check.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(env.root.join("report.html"))
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
    eprintln!("{stdout}screenshot kept at {}", shot.display());
}

/// One test, so that two checks never race to install Chromium.
#[test]
fn reports_render_in_chromium() {
    check("completed", |env| {
        stories::completed("WFS-test-calc").write(env);
        "WFS-test-calc"
    });
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
