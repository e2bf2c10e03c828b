//! Shared checks for the fuzz targets: what must hold for anything a parser
//! returns, whatever the input (see docs/fuzzing.md).

use wfx::artifacts::test_results::{CaseStatus, Layer, Scope, TestResults};
use wfx::artifacts::{Artifact, parse_artifact};
use wfx::testing::detect::Framework;
use wfx::testing::parse::ParsedRun;
use wfx::testing::results::{self, RunFacts};

/// Input bytes as text the way wfx reads logs: lossy UTF-8.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// A value wfx writes must read back: serialise it and parse it again
/// through the schema-validating loader.
pub fn assert_reloads<T: Artifact>(value: &T) {
    let json = serde_json::to_string(value).expect("artifacts serialise");
    if let Err(problems) = parse_artifact::<T>("fuzz.json", &json) {
        panic!(
            "{} written by wfx does not load again: {problems:?}\n{json}",
            T::SCHEMA
        );
    }
}

/// Invariants of a parsed run and of the results document built from it:
/// counts add up, the pass rate is a percentage, no absolute file survives
/// `relativize`, the document validates against its own schema, and merging
/// or flaky-marking it keeps the counts consistent.
pub fn check_parsed(run: ParsedRun, output_tail: &str) {
    for c in run.cases.iter().chain(run.static_errors.iter()) {
        assert!(
            c.message.len() <= wfx::testing::parse::MESSAGE_MAX + 16,
            "message of {} bytes is not bounded",
            c.message.len()
        );
    }
    let mut rel = run.clone();
    rel.relativize("/work/project");
    for c in rel.cases.iter().chain(rel.static_errors.iter()) {
        if let Some(f) = &c.file {
            assert!(!f.starts_with('/'), "absolute file {f:?} kept");
        }
    }

    let mut built = Vec::new();
    for (exit_code, timed_out_after) in [(Some(0), None), (Some(1), None), (None, Some(5))] {
        let facts = RunFacts {
            command: "make test".into(),
            framework: Framework::Custom,
            scope: Scope::Full,
            exit_code,
            timed_out_after,
            signal: None,
            duration_ms: 1,
            output_tail,
            output_log: None,
            truncated: false,
            started_at: None,
            previous: built.first(),
            notes: Vec::new(),
        };
        let r = results::build(run.clone(), facts);
        assert_eq!(
            r.total as usize,
            run.cases.len() + run.unnamed_skipped as usize
        );
        assert_eq!(r.cases.len(), run.cases.len());
        check_counts(&r);
        built.push(r);
    }
    // Schema validation is the slowest check: once per input is enough.
    assert_reloads(&built[1]);
    let full = &built[1];
    let merged = results::merge(full, &built[0]);
    check_counts(&merged);
    let mut flaky = full.clone();
    results::mark_flaky(&mut flaky, &built[0]);
    let rate = results::pass_rate_without_flaky(&flaky);
    assert!((0.0..=100.0).contains(&rate), "pass rate {rate}");
}

/// Counts of a results document agree with its cases and failures.
pub fn check_counts(r: &TestResults) {
    assert!(
        (0.0..=100.0).contains(&r.pass_rate),
        "pass rate {}",
        r.pass_rate
    );
    let count = |s: CaseStatus| r.cases.iter().filter(|c| c.status == s).count() as u32;
    assert_eq!(r.passed, count(CaseStatus::Passed));
    assert_eq!(r.failed, count(CaseStatus::Failed));
    let statics = r.errors - count(CaseStatus::Error);
    assert_eq!(
        r.failures.len() as u32,
        r.failed + r.errors,
        "one failure per failed case and per error"
    );
    assert_eq!(
        r.passed + r.failed + r.skipped + r.errors,
        r.total + statics,
        "counts add up"
    );
    assert!(
        r.failures
            .iter()
            .filter(|f| f.test_type == Layer::Static)
            .count() as u32
            >= statics
    );
}

/// Feed `text` line by line the way the runner streams a log file: split on
/// `\n` only, so a `\r` stays at the end of its line.
pub fn stream(mut parser: Box<dyn wfx::testing::parse::LineParser>, text: &str) -> ParsedRun {
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if lines.peek().is_none() && line.is_empty() {
            break;
        }
        parser.line(line);
    }
    parser.finish()
}
