//! Test ids hold on real suites (DESIGN.md §10.4): a real project's suite
//! runs twice through `wfx test` — passing, then with an injected bug — and
//! every test keeps its id: the failing tests of the second run carry the
//! ids they had when they passed, and both runs name the same tests.
//!
//! Rust: the `strsim` crate as published on crates.io (a dependency of
//! wfx, so its source is in the cargo registry of any machine that built
//! wfx): 88 unit tests, 8 integration tests, 11 doctests. Node: the
//! `node-twins` recording project, with equally named tests in `test/`
//! and `dist/test/`.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{Env, copy_dir};
use serde_json::Value;

/// The published strsim crate's source in the local cargo registry.
fn strsim_source() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let src = cargo_home.join("registry/src");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
        .filter_map(|d| d.ok())
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten())
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("strsim-0.11"))
        })
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!(
            "strsim 0.11 (a dependency of wfx) is not in {}",
            src.display()
        )
    })
}

/// `wfx test --json` in the project: (exit code, test-results.json).
fn wfx_test(env: &Env, target: &Path) -> (i32, Value) {
    common::json_output(
        &env.wfx_live()
            .env("CARGO_TARGET_DIR", target)
            .args(["test", "--json"])
            .output()
            .unwrap(),
    )
}

fn ids(doc: &Value, status: Option<&str>) -> BTreeSet<String> {
    let cases = doc["cases"].as_array().unwrap();
    let all: Vec<String> = cases
        .iter()
        .filter(|c| status.is_none_or(|s| c["status"] == s))
        .map(|c| c["test"].as_str().unwrap().to_string())
        .collect();
    let set: BTreeSet<String> = all.iter().cloned().collect();
    if status.is_none() {
        assert_eq!(set.len(), all.len(), "ids are unique within a run");
    }
    set
}

/// Run the suite passing, inject the bug, run it failing; the ids must
/// not move. Returns the failing ids.
fn same_ids_when_failing(env: &Env, target: &Path, inject: impl FnOnce()) -> BTreeSet<String> {
    let (code, pass) = wfx_test(env, target);
    assert_eq!(code, 0, "{pass}");
    assert_eq!(pass["failed"], 0);
    inject();
    let (code, fail) = wfx_test(env, target);
    assert_eq!(code, 1, "{fail}");
    let failing = ids(&fail, Some("failed"));
    assert!(!failing.is_empty());
    let before = ids(&pass, None);
    let missing: Vec<&String> = failing.iter().filter(|f| !before.contains(*f)).collect();
    assert!(
        missing.is_empty(),
        "failing tests whose id changed: {missing:?}"
    );
    assert_eq!(ids(&fail, None), before, "both runs name the same tests");
    failing
}

fn strsim_project(command: Option<&str>) -> Env {
    let env = Env::new();
    copy_dir(&strsim_source(), &env.root);
    if let Some(c) = command {
        env.write(
            ".workflow/wfx.json",
            &serde_json::json!({"test": {"command": c}}).to_string(),
        );
    }
    env
}

fn break_hamming(env: &Env) {
    let lib = env.read("src/lib.rs");
    assert!(lib.contains("                    count += 1;"));
    env.write(
        "src/lib.rs",
        &lib.replacen(
            "                    count += 1;",
            "                    count += 2;",
            1,
        ),
    );
}

fn target_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/live-strsim")
        .join(name)
}

#[test]
fn strsim_under_cargo_test_keeps_its_ids() {
    let env = strsim_project(Some("cargo test --no-fail-fast"));
    let failing = same_ids_when_failing(&env, &target_dir("cargo"), || break_hamming(&env));
    // A unit test, an integration test and a doctest, each with its target.
    for id in [
        "strsim::tests::hamming_diff",
        "lib::hamming_works",
        "strsim::src/lib.rs - hamming (line 77)",
    ] {
        assert!(failing.contains(id), "{id} not in {failing:?}");
    }
}

#[test]
fn strsim_under_the_detected_runner_keeps_its_ids() {
    // nextest when it is installed (then with the doctests after it),
    // else cargo test: whichever a user without a config gets.
    let env = strsim_project(None);
    let failing = same_ids_when_failing(&env, &target_dir("detected"), || break_hamming(&env));
    let nextest = failing.iter().any(|f| f.starts_with("strsim tests::"));
    if nextest {
        for id in [
            "strsim tests::hamming_diff",
            "strsim::lib hamming_works",
            "strsim::src/lib.rs - hamming (line 77)",
        ] {
            assert!(failing.contains(id), "{id} not in {failing:?}");
        }
    } else {
        assert!(
            failing.contains("strsim::tests::hamming_diff"),
            "{failing:?}"
        );
    }
}

#[test]
fn node_tests_keep_their_file_when_they_start_failing() {
    let env = Env::new();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/outputs/sources/node-twins"),
        &env.root,
    );
    let failing = same_ids_when_failing(&env, &target_dir("unused"), || {
        let p = env.read("dist/parse.js");
        env.write(
            "dist/parse.js",
            &p.replace("  return Number(t);", "  return Number(t) + 1;"),
        );
    });
    assert_eq!(
        failing,
        BTreeSet::from([
            "dist/test/parse.test.js › parse › reads a number".to_string(),
            "dist/test/parse.test.js › round trip".to_string(),
        ])
    );
}
