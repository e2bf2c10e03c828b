//! cargo-nextest's human output, used when no JUnit report is configured:
//! one status line per test (`PASS [0.006s] (1/11) binary test::name`), each
//! failure's captured output after its status line, and the `Starting …
//! (N tests skipped)` / `Summary` lines for skipped tests nextest never names.
//! Compile errors before the run become static failures as with libtest.
//! When `cargo test --doc` ran after nextest (wfx's nextest command, see
//! docs/runner.md), its doctests are read from the rest of the output.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{
    Bounded, CompileErrors, LineParser, ParsedCase, ParsedRun, Status, rust_panic, strip_ansi,
};
use crate::artifacts::test_results::Layer;
use crate::project::compile;

pub fn parse(text: &str) -> ParsedRun {
    super::feed(Box::new(Parser::default()), text)
}

static STATUS: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^\s*(?:TRY \d+ )?(PASS|FAIL|FLAKY|LEAK|LEAK-FAIL|TIMEOUT|ABORT|SKIP|IGNORED|SIG[A-Z]+)\s+\[\s*[\d.]+s\]\s+(?:\(\s*\d+/\s*\d+\)\s+)?(\S+)\s+(\S.*?)\s*$",
    )
});
static STARTING: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"^\s*Starting \d+ tests? across \d+ binar(?:y|ies)(?: \((\d+) tests? skipped\))?")
});
static SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^\s*Summary \[[^\]]*\].*?(?:(\d+) skipped)?\s*$"));

/// The layer and source file a nextest binary id points to: `crate` (lib
/// unit tests), `crate::bin/name` (binary unit tests), `crate::name`
/// (integration test `tests/name.rs`).
pub fn binary_kind(binary_id: &str) -> (Layer, Option<String>) {
    match binary_id.split_once("::") {
        Some((_, rest)) if !rest.contains('/') => {
            (Layer::Integration, Some(format!("tests/{rest}.rs")))
        }
        _ => (Layer::Unit, None),
    }
}

/// Line parser for nextest's human output.
pub struct Parser {
    run: ParsedRun,
    by_id: HashMap<String, usize>,
    /// Output of the failure being read.
    current: Option<(usize, Bounded)>,
    compile: CompileErrors,
    after_summary: bool,
    skipped_starting: Option<u32>,
    skipped_summary: Option<u32>,
    /// The doctests after nextest's run.
    doc: super::libtest::Parser,
}

impl Default for Parser {
    fn default() -> Parser {
        Parser {
            run: ParsedRun::default(),
            by_id: HashMap::new(),
            current: None,
            compile: CompileErrors::default(),
            after_summary: false,
            skipped_starting: None,
            skipped_summary: None,
            doc: super::libtest::Parser::doctests_only(),
        }
    }
}

impl Parser {
    fn end_block(&mut self) {
        let Some((idx, body)) = self.current.take() else {
            return;
        };
        let text = body.text().to_string();
        let case = &mut self.run.cases[idx];
        match rust_panic(&text).or_else(|| super::did_not_panic(&text)) {
            Some((loc, msg)) => {
                if let Some(loc) = loc {
                    case.file = Some(loc.file);
                    case.line = Some(loc.line);
                }
                case.error = msg;
            }
            None if case.error.is_empty() => {
                case.error = super::error_line(
                    &text
                        .lines()
                        .filter(|l| {
                            let t = l.trim();
                            !(t.starts_with("stdout ")
                                || t.starts_with("stderr ")
                                || t.starts_with("---")
                                || t.starts_with("running ")
                                || t.starts_with("test "))
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
            None => {}
        }
        case.message = body.into_excerpt();
    }
}

impl LineParser for Parser {
    fn line(&mut self, raw: &str) {
        self.doc.line(raw);
        let stripped = strip_ansi(raw);
        let line = stripped.trim_end_matches('\r');

        if let Some(c) = SUMMARY.captures(line)
            && line.trim_start().starts_with("Summary")
        {
            self.end_block();
            self.after_summary = true;
            self.skipped_summary = c.get(1).and_then(|m| m.as_str().parse().ok());
            return;
        }
        if self.after_summary {
            // The summary repeats the failing status lines; details were
            // read already.
            self.compile.line(line);
            return;
        }
        if let Some(c) = STARTING.captures(line) {
            self.skipped_starting =
                Some(c.get(1).and_then(|m| m.as_str().parse().ok()).unwrap_or(0));
            return;
        }
        if let Some(c) = STATUS.captures(line) {
            self.end_block();
            let word = &c[1];
            let binary = &c[2];
            let name = &c[3];
            let id = format!("{binary} {name}");
            let status = match word {
                "PASS" | "LEAK" | "FLAKY" => Status::Passed,
                "SKIP" | "IGNORED" => Status::Skipped,
                _ => Status::Failed,
            };
            let (layer, file) = binary_kind(binary);
            let idx = match self.by_id.get(&id) {
                Some(&i) => {
                    let case = &mut self.run.cases[i];
                    if case.status == Status::Failed && status == Status::Passed {
                        case.flaky = true;
                    }
                    case.status = status;
                    i
                }
                None => {
                    self.run.cases.push(ParsedCase {
                        id: id.clone(),
                        status,
                        file,
                        layer: Some(layer),
                        flaky: word == "FLAKY",
                        ..ParsedCase::default()
                    });
                    self.by_id.insert(id, self.run.cases.len() - 1);
                    self.run.cases.len() - 1
                }
            };
            if status == Status::Failed {
                let case = &mut self.run.cases[idx];
                case.error = match word {
                    "TIMEOUT" => "test timed out".into(),
                    "FAIL" | "LEAK-FAIL" => String::new(),
                    other => format!("test process ended by {other}"),
                };
                self.current = Some((idx, Bounded::default()));
            }
            return;
        }
        if line.trim_start().starts_with("────") || line.trim_start().starts_with("Cancelling")
        {
            self.end_block();
            return;
        }
        if let Some((_, body)) = self.current.as_mut() {
            body.push_line(line.strip_prefix("    ").unwrap_or(line));
            return;
        }
        self.compile.line(line);
    }

    fn finish(mut self: Box<Self>) -> ParsedRun {
        self.end_block();
        let mut run = std::mem::take(&mut self.run);
        run.parser = "nextest";
        run.unnamed_skipped = self
            .skipped_summary
            .or(self.skipped_starting)
            .unwrap_or(0)
            .saturating_sub(run.count(Status::Skipped) as u32);
        run.static_errors = self.compile.finish();
        let doc = Box::new(self.doc).finish();
        run.cases.extend(doc.cases);
        for e in doc.static_errors {
            if !run.static_errors.iter().any(|s| s.id == e.id) {
                run.static_errors.push(e);
            }
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::{failed, fixture, statuses};

    #[test]
    fn nextest_human_output() {
        let run = parse(&fixture("nextest.txt"));
        assert_eq!(run.parser, "nextest");
        assert_eq!(run.cases.len(), 11);
        assert_eq!(run.count(Status::Passed), 9);
        assert_eq!(run.count(Status::Failed), 2);
        assert_eq!(run.unnamed_skipped, 1);
        assert!(run.static_errors.is_empty());
        let failed = failed(&run);
        assert_eq!(
            failed,
            vec![
                (
                    "rust-calc stats::tests::mean_of_three",
                    Some("src/stats.rs"),
                    Some(28),
                    "assertion `left == right` failed: left Some(3.0), right Some(2.0)"
                ),
                (
                    "rust-calc tests::divide_negative",
                    Some("src/lib.rs"),
                    Some(47),
                    "assertion `left == right` failed: left Some(3), right Some(-3)"
                ),
            ]
        );
        let integ = run
            .cases
            .iter()
            .find(|c| c.id == "rust-calc::integration divide_positive")
            .unwrap();
        assert_eq!(integ.layer, Some(Layer::Integration));
        assert_eq!(integ.file.as_deref(), Some("tests/integration.rs"));
        let msg = &run.cases[2].message;
        assert!(msg.contains("right: Some(2.0)"), "{msg}");
        assert!(!msg.contains("PASS ["), "{msg}");
    }

    #[test]
    fn retries_mark_flaky_and_signals_fail() {
        let text = "    Starting 2 tests across 1 binary\n\
            \x20  TRY 1 FAIL [   0.010s] (1/2) k a::flaky\n\
            \x20   stderr ───\n\
            \x20   thread 'a::flaky' (1) panicked at src/a.rs:3:5:\n\
            \x20   boom\n\
            \x20 TRY 2 PASS [   0.010s] (1/2) k a::flaky\n\
            \x20    SIGSEGV [   0.010s] (2/2) k a::crash\n\
            ────────────\n\
            \x20    Summary [   0.050s] 2 tests run: 1 passed, 1 failed, 0 skipped\n";
        let run = parse(text);
        assert_eq!(run.cases.len(), 2);
        assert_eq!(run.cases[0].status, Status::Passed);
        assert!(run.cases[0].flaky);
        assert_eq!(run.cases[1].status, Status::Failed);
        assert_eq!(run.cases[1].error, "test process ended by SIGSEGV");
        assert_eq!(run.unnamed_skipped, 0);
    }

    #[test]
    fn binary_ids() {
        assert_eq!(binary_kind("rust-calc"), (Layer::Unit, None));
        assert_eq!(binary_kind("rust-calc::bin/cli"), (Layer::Unit, None));
        assert_eq!(
            binary_kind("rust-calc::integration"),
            (Layer::Integration, Some("tests/integration.rs".into()))
        );
    }

    #[test]
    fn doctests_after_nextest_are_read_too() {
        use Status::*;
        // Real output of wfx's nextest command for a crate with a library:
        // `cargo nextest run …; s=$?; cargo test --doc … && exit $s`.
        for (file, rejects) in [
            ("nextest-should-panic.txt", Failed),
            ("nextest-should-panic-fixed.txt", Passed),
        ] {
            let run = parse(&fixture(file));
            assert_eq!(
                statuses(&run),
                vec![
                    ("should-panic tests::accepts_zero", Passed),
                    ("should-panic tests::rejects_negative", rejects),
                    ("should-panic tests::rejects_very_negative", Passed),
                    ("should_panic::src/lib.rs - check (line 11)", Passed),
                    ("should_panic::src/lib.rs - check (line 5)", Passed),
                ],
                "{file}"
            );
            assert!(run.static_errors.is_empty(), "{file}");
            assert_eq!(run.unnamed_skipped, 0, "{file}");
        }
    }

    #[test]
    fn one_name_in_several_binaries() {
        use Status::*;
        for (file, a) in [
            ("nextest-same-name.txt", Failed),
            ("nextest-same-name-fixed.txt", Passed),
        ] {
            let run = parse(&fixture(file));
            assert_eq!(
                statuses(&run),
                vec![
                    ("same-name tests::check", Passed),
                    ("same-name::a check", a),
                    ("same-name::b check", Passed),
                ],
                "{file}"
            );
        }
    }
}
