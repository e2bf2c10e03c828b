//! Issue #15 case 11: a state file that is schema-valid but inconsistent
//! (a counter out of range, a baseline run that is not recorded, a path to
//! commit outside the project) is exit 2 naming the file and the field,
//! before anything is written (DESIGN.md §10.3).

use crate::common;

use common::{Env, digest_tree};

const STATE: &str = ".workflow/active/WFS-test-the-lib/.process/iteration-state.json";

/// A session paused in manual mode after its first run.
fn paused() -> Env {
    let env = Env::new();
    env.write("lib.py", "def double(x):\n    return 3 * x\n");
    env.write(
        "tests/test_lib.py",
        "from lib import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    );
    env.write(
        "pyproject.toml",
        "[project]\nname = \"lib\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    env.git_init_commit();
    env.wfx_live()
        .args(["test-fix-gen", "Test the lib", "--fix-agent", "manual"])
        .assert()
        .code(3);
    env
}

/// A case: its name, the damage done to the state, the message expected.
type Case = (&'static str, fn(&mut serde_json::Value), &'static str);

#[test]
fn an_inconsistent_state_is_refused_before_anything_is_written() {
    let cases: [Case; 3] = [
        (
            "counter",
            |s| s["current_iteration"] = serde_json::json!(4294967295u64),
            "`current_iteration` is 4294967295 but the last recorded run is of iteration 1",
        ),
        (
            "baseline",
            |s| s["baseline_run"] = serde_json::json!(99),
            "`baseline_run` is 99 but no run 99 is recorded",
        ),
        (
            "path",
            |s| s["fix"]["commit_paths"] = serde_json::json!(["../../x"]),
            "a path to commit, `../../x`, is outside the project",
        ),
    ];
    for (case, damage, message) in cases {
        let env = paused();
        let mut state = env.json(STATE);
        damage(&mut state);
        env.write(STATE, &serde_json::to_string_pretty(&state).unwrap());
        let before = digest_tree(&env.root);
        let out = env
            .wfx_live()
            .args(["test-cycle-execute", "--resume-session", "WFS-test-the-lib"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(
            stderr.contains(&format!("error: {STATE}")) && stderr.contains(message),
            "{case}: {stderr}"
        );
        assert!(digest_tree(&env.root) == before, "{case}: files changed");
    }
}
