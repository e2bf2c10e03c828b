//! Issue #27 case 8, regressions and gaps of the harness around test
//! runs and agent calls: a crashed first run, shell builtins in a test
//! command, memory with huge outputs, a session directory on another
//! filesystem, and libgit2's temp objects after a kill. End to end on a
//! fresh copy of `fixtures/projects/py-calc` (docs/hardening.md,
//! docs/runner.md).

mod common;

use common::{Env, fake_agent, fixer_config};
use serde_json::json;

const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

fn out_text(a: &assert_cmd::assert::Assert) -> String {
    let o = a.get_output();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A config whose test command is `command` and whose fix agent is the
/// fixture `fixer`.
fn config_with_test(command: &str, fixer: &str) -> serde_json::Value {
    let mut config = fixer_config(fixer);
    config["test"] = json!({ "command": command });
    config
}

/// A first run that crashes (exit 139, nothing parsed) is recorded as one
/// static failure named after the command. It is no test: the correct fix
/// after it is not "test edits rejected" because that name is missing from
/// the next run, and the session completes.
#[test]
fn a_crashed_first_run_is_no_test_that_a_fix_can_remove() {
    let env = Env::new();
    let command = format!(
        "{} python3 -m pytest",
        fake_agent("crash-once").display()
    );
    env.cycle_project("py-calc", &config_with_test(&command, "fix-all"));
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("Completed"), "{text}");
    assert!(!text.contains("rejected"), "{text}");
    assert!(env.state_dir().join("crashed-once").exists(), "no crash");
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_ne!(entry["outcome"], "rejected", "{entry:#}");
    assert!(
        entry["test_edits"]
            .as_array()
            .is_none_or(|edits| edits.is_empty()),
        "{entry:#}"
    );
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let first = &state["iterations"][0];
    assert_eq!(first["pass_rate"], 0.0, "{state:#}");
    let committed = env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(committed.contains("None if b == 0"), "{committed}");
}
