//! wfx's commit messages follow the repository's convention (docs/git.md),
//! checked against the real commitlint (`@commitlint/cli` with
//! `@commitlint/config-conventional` from npm, installed by
//! `tests/commitlint/install.sh`) as the repository's `commit-msg` hook,
//! with `git.hooks` on: a whole cycle whose every commit the hook accepts.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{Env, fake_agent, npm_tool};
use serde_json::json;

/// node-calc with commitlint as its `commit-msg` hook (its packages
/// reached through a git-ignored `node_modules` link, as `npm ci` would
/// leave them), the test writer for test generation and a fixer that
/// first breaks more tests (a rollback), then fixes.
fn project(message: serde_json::Value) -> Option<(Env, PathBuf)> {
    let env = Env::new();
    let bin = npm_tool("commitlint")?;
    env.copy_fixture_project("node-calc");
    env.write(
        "commitlint.config.js",
        "module.exports = { extends: ['@commitlint/config-conventional'] };\n",
    );
    env.write(".gitignore", "node_modules\n");
    std::os::unix::fs::symlink(bin.parent().unwrap(), env.root.join("node_modules")).unwrap();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({
            "agents": {
                "fix": "breaker",
                "test_gen": "writer",
                "definitions": {
                    "breaker": {"command": [fake_agent("break-more").display().to_string()]},
                    "writer": {"command": [fake_agent("test-writer").display().to_string()]}
                }
            },
            "git": {"hooks": true, "message": message},
            // A fix that helps nothing is then committed, measured on the
            // full suite and reverted: every kind of subject is made.
            "cycle": {"progressive": false}
        }))
        .unwrap(),
    );
    env.git(&["init", "-q", "-b", "main"]);
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "chore: initial"]);
    let hook = env.root.join(".git/hooks/commit-msg");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nexec \"{}/commitlint\" --edit \"$1\"\n",
            bin.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some((env, bin))
}

fn run(env: &Env) -> std::process::Output {
    env.wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .env("WRITE_TESTS", "clean")
        .args(["test-fix-gen", "Test the calculator"])
        .output()
        .unwrap()
}

#[test]
fn a_repository_with_commitlint_accepts_every_commit_wfx_makes() {
    let Some((env, bin)) = project(json!({})) else {
        return;
    };
    let out = run(&env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let subjects = env.subjects();
    assert_eq!(
        subjects,
        [
            "chore(wfx): session completed (pass: 100.0%, 2 fix attempt(s))",
            "fix(src): iteration 2 - surgical strategy (pass: 81.8% → 100.0%)",
            "revert: iteration 1 - regression detected (pass: 27.2% < 81.8%)",
            "fix(src): iteration 1 - conservative strategy (pass: 81.8% → 27.2%)",
            "test: add generated tests (IMPL-001, 1 file(s))",
            "chore: initial",
        ],
        "{stderr}"
    );
    // Every commit again, through commitlint itself, and the trailers kept.
    let lint = Command::new(bin.join("commitlint"))
        .current_dir(&env.root)
        .args(["--from", "HEAD~5", "--to", "HEAD"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        lint.status.success(),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    let last = env.git(&["show", "-s", "--format=%B", "HEAD"]);
    assert!(
        last.contains("\n\nSession WFS-test-the-calculator.\n"),
        "{last}"
    );
    assert!(last.contains("Wfx-Kind: final"), "{last}");
}

#[test]
fn templates_override_the_subjects() {
    let Some((env, _)) = project(json!({
        "fix": "fix(${scope}): make tests pass, try ${iteration} (${pass.before}% to ${pass.after}%)",
        "final": "chore(release): wfx ${outcome} at ${pass}%"
    })) else {
        return;
    };
    let out = run(&env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let subjects = env.subjects();
    assert_eq!(subjects[0], "chore(release): wfx completed at 100.0%");
    assert_eq!(
        subjects[1],
        "fix(src): make tests pass, try 2 (81.8% to 100.0%)"
    );
}

#[test]
fn a_hook_that_still_refuses_names_itself_and_the_template_option() {
    let Some((env, _)) = project(json!({"convention": "plain"})) else {
        return;
    };
    let out = run(&env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("the git commit-msg hook (.git/hooks/commit-msg) refused wfx's commit"),
        "{stdout}"
    );
    assert!(
        stdout.contains("type-empty"),
        "commitlint's own words: {stdout}"
    );
    assert!(stdout.contains("git.message"), "{stdout}");
    // Nothing was committed past the refusal.
    assert_eq!(env.subjects(), ["chore: initial"]);
}

#[test]
fn an_unknown_template_variable_is_refused_with_its_pointer() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        r#"{"git": {"message": {"fix": "fix: ${sumary}"}}}"#,
    );
    let out = env
        .wfx()
        .args(["validate", ".workflow/wfx.json"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("/git/message/fix"), "{text}");
    assert!(text.contains("unknown variable ${sumary}"), "{text}");
}
