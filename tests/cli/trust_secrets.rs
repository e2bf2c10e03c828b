//! Issue #15 case 12: a failing test whose message carries the value of a
//! secret environment variable. wfx writes `[redacted:NAME]` in every
//! artifact and commit; only git-ignored raw logs keep the raw text
//! (DESIGN.md §10.2).

use crate::common;

use common::Env;

const SECRET: &str = "wJalrXUtnFEMIK7MDENGbPxRfiCYzz42";

#[test]
fn a_secret_in_a_test_failure_reaches_no_artifact_and_no_commit() {
    let env = Env::new();
    env.write(
        "vault.py",
        "import os\n\n\ndef key():\n    return os.environ.get(\"AWS_SECRET_ACCESS_KEY\", \"\")\n",
    );
    env.write(
        "tests/test_vault.py",
        "from vault import key\n\n\ndef test_key_is_rotated():\n    assert key() == \"rotated\"\n",
    );
    env.write(
        "pyproject.toml",
        "[project]\nname = \"vault\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    env.git_init_commit();
    let out = env
        .wfx_live()
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .args(["test-fix-gen", "Test the vault", "--fix-agent", "manual"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(3), "{text}");

    let mut redacted = 0;
    let mut raw_logs = 0;
    for entry in walkdir::WalkDir::new(env.root.join(".workflow")) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        let rel = entry.path().strip_prefix(&env.root).unwrap();
        let rel = rel.to_str().unwrap();
        let ignored = env.git_try(&["check-ignore", "-q", rel]).0;
        if content.contains(SECRET) {
            assert!(ignored, "{rel} is not git-ignored and holds the secret");
            raw_logs += 1;
        }
        if content.contains("[redacted:AWS_SECRET_ACCESS_KEY]") {
            redacted += 1;
        }
    }
    assert!(redacted > 0, "no artifact shows the placeholder");
    assert!(raw_logs > 0, "the raw test log keeps the raw text");
    // Nothing committed carries it either.
    let history = env.git(&["log", "-p", "--all"]);
    assert!(!history.contains(SECRET));
}
