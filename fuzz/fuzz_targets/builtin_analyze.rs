#![no_main]
//! The built-in analyzer over any log text, against a fixed project (the
//! three fixture projects, written once to a temp dir): once with an empty
//! results set, once with the failures parsed from the same text, and the
//! analysis rendered to markdown.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use wfx::agents::builtin;
use wfx::artifacts::test_results::Scope;
use wfx::artifacts::{FixHistory, TestResults};
use wfx::render::Renderer;
use wfx::testing::detect::Framework;
use wfx::testing::parse;
use wfx::testing::results::{self, RunFacts};

const FILES: &[(&str, &str)] = &[
    (
        "calc/__init__.py",
        include_str!("../../fixtures/projects/py-calc/calc/__init__.py"),
    ),
    (
        "calc/auth.py",
        include_str!("../../fixtures/projects/py-calc/calc/auth.py"),
    ),
    (
        "calc/ops.py",
        include_str!("../../fixtures/projects/py-calc/calc/ops.py"),
    ),
    (
        "tests/test_auth.py",
        include_str!("../../fixtures/projects/py-calc/tests/test_auth.py"),
    ),
    (
        "tests/test_ops.py",
        include_str!("../../fixtures/projects/py-calc/tests/test_ops.py"),
    ),
    (
        "Cargo.toml",
        include_str!("../../fixtures/projects/rust-calc/Cargo.toml"),
    ),
    (
        "src/lib.rs",
        include_str!("../../fixtures/projects/rust-calc/src/lib.rs"),
    ),
    (
        "src/stats.rs",
        include_str!("../../fixtures/projects/rust-calc/src/stats.rs"),
    ),
    (
        "tests/integration.rs",
        include_str!("../../fixtures/projects/rust-calc/tests/integration.rs"),
    ),
    (
        "package.json",
        include_str!("../../fixtures/projects/node-calc/package.json"),
    ),
    (
        "src/math.js",
        include_str!("../../fixtures/projects/node-calc/src/math.js"),
    ),
    (
        "src/strings.js",
        include_str!("../../fixtures/projects/node-calc/src/strings.js"),
    ),
    (
        "test/math.test.js",
        include_str!("../../fixtures/projects/node-calc/test/math.test.js"),
    ),
    (
        "test/strings.test.js",
        include_str!("../../fixtures/projects/node-calc/test/strings.test.js"),
    ),
];

fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("wfx-fuzz-analyze-{}", std::process::id()));
        for (rel, body) in FILES {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("temp dir");
            std::fs::write(&path, body).expect("temp file");
        }
        dir
    })
}

fn empty_results() -> TestResults {
    serde_json::from_value(serde_json::json!({
        "command": "make test", "scope": "full", "parser": "exit-code",
        "total": 0, "passed": 0, "failed": 0, "skipped": 0, "errors": 0, "pass_rate": 0.0
    }))
    .expect("a minimal results document")
}

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    let history = FixHistory::default();
    let renderer = Renderer::new(None);
    let analysis = builtin::analyze(&empty_results(), &text, root(), &history);
    let _ = builtin::markdown(&renderer, 1, &analysis);
    let parsed = match parse::sniff(&text) {
        Some(format) => wfx_fuzz::stream(format.parser(None), &text),
        None => return,
    };
    let facts = RunFacts {
        command: "make test".into(),
        framework: Framework::Custom,
        scope: Scope::Full,
        exit_code: Some(1),
        timed_out_after: None,
        signal: None,
        duration_ms: 1,
        output_tail: &text,
        output_log: None,
        truncated: false,
        started_at: None,
        previous: None,
        notes: Vec::new(),
    };
    let results = results::build(parsed, facts);
    let analysis = builtin::analyze(&results, &text, root(), &history);
    let _ = builtin::markdown(&renderer, 1, &analysis);
    let _ = analysis.points_text();
});
