//! `cargo test` output (libtest's text format): `test x ... ok|FAILED|ignored`
//! lines per target, the `failures:` section with each failing test's
//! output (panic message and `file:line:col`), doctests, and compile errors,
//! which become static failures.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{
    Bounded, CompileErrors, LineParser, ParsedCase, ParsedRun, Status, rust_panic, strip_ansi,
};
use crate::artifacts::test_results::Layer;

/// Parse a whole `cargo test` output.
pub fn parse(text: &str) -> ParsedRun {
    super::feed(Box::new(Parser::default()), text)
}

#[derive(Debug, Clone)]
struct Target {
    /// `src/lib.rs`, `tests/integration.rs`; `None` for doctests and old
    /// cargo versions that print only the binary path.
    file: Option<String>,
    doc: bool,
}

impl Target {
    fn layer(&self) -> Layer {
        match &self.file {
            Some(f) if f.starts_with("tests/") || f.contains("/tests/") => Layer::Integration,
            _ => Layer::Unit,
        }
    }
}

/// Line parser for libtest text.
#[derive(Default)]
pub struct Parser {
    run: ParsedRun,
    target: Option<Target>,
    /// Case index by name, for attaching the failure output (latest target wins).
    by_name: HashMap<String, usize>,
    /// The failing test whose output is being read, and that output.
    section: Option<(String, Bounded)>,
    compile: CompileErrors,
    /// `process didn't exit successfully` lines: a test binary crashed.
    crashes: Vec<ParsedCase>,
    expect_cause: bool,
}

static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+Running (?:unittests )?(\S+)(?: \(.*\))?\s*$").unwrap());
static DOCTESTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+Doc-tests (\S+)\s*$").unwrap());
static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?|bench:.*)\s*$").unwrap()
});
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^---- (.+?) (stdout|stderr) ----\s*$").unwrap());
static DOCTEST_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+) - .*\(line (\d+)\)").unwrap());
static CRASH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"process didn't exit successfully: .*\((signal: .*|exit status: .*)\)").unwrap()
});

impl Parser {
    fn end_section(&mut self) {
        let Some((name, body)) = self.section.take() else {
            return;
        };
        let text = body.text().to_string();
        let idx = match self.by_name.get(&name) {
            Some(&i) => i,
            None => {
                self.add_case(&name, Status::Failed);
                self.run.cases.len() - 1
            }
        };
        let case = &mut self.run.cases[idx];
        if case.status == Status::Passed {
            case.status = Status::Failed;
        }
        let doctest = DOCTEST_NAME.is_match(&name) && self.target.as_ref().is_some_and(|t| t.doc);
        match rust_panic(&text) {
            Some((loc, msg)) if !doctest => {
                if let Some(loc) = loc {
                    case.file = Some(loc.file);
                    case.line = Some(loc.line);
                }
                case.error = msg;
            }
            _ => case.error = super::error_line(&text),
        }
        case.message = body.into_excerpt();
    }

    fn add_case(&mut self, name: &str, status: Status) {
        let target = self.target.clone().unwrap_or(Target {
            file: None,
            doc: false,
        });
        let (file, line) = match DOCTEST_NAME.captures(name) {
            Some(c) if target.doc => (Some(c[1].to_string()), c[2].parse().ok()),
            _ => (target.file.clone(), None),
        };
        self.run.cases.push(ParsedCase {
            id: name.to_string(),
            status,
            file,
            line,
            layer: Some(target.layer()),
            ..ParsedCase::default()
        });
        self.by_name
            .insert(name.to_string(), self.run.cases.len() - 1);
    }
}

impl LineParser for Parser {
    fn line(&mut self, raw: &str) {
        let stripped = strip_ansi(raw);
        let line = stripped.trim_end_matches('\r');

        if self.section.is_some() {
            let ends = line == "failures:"
                || line.starts_with("test result: ")
                || SECTION.is_match(line)
                || RUNNING.is_match(line)
                || DOCTESTS.is_match(line);
            if !ends {
                if let Some((_, body)) = self.section.as_mut() {
                    body.push_line(line);
                }
                return;
            }
            self.end_section();
        }

        if self.expect_cause {
            if let Some(c) = CRASH.captures(line) {
                let target = self.target.clone();
                let id = target
                    .as_ref()
                    .and_then(|t| t.file.clone())
                    .unwrap_or_else(|| "test binary".into());
                self.crashes.push(ParsedCase {
                    id,
                    status: Status::Error,
                    file: target.and_then(|t| t.file),
                    error: format!("test binary crashed ({})", &c[1]),
                    message: line.trim().to_string(),
                    layer: Some(Layer::Static),
                    ..ParsedCase::default()
                });
                self.expect_cause = false;
                return;
            }
            if !line.trim().is_empty() && !line.trim_start().starts_with("Caused by") {
                self.expect_cause = false;
            }
        }

        if let Some(c) = SECTION.captures(line) {
            self.section = Some((c[1].to_string(), Bounded::default()));
            return;
        }
        if let Some(c) = TEST_LINE.captures(line) {
            let status = match &c[2] {
                "FAILED" => Status::Failed,
                s if s.starts_with("ignored") => Status::Skipped,
                _ => Status::Passed,
            };
            self.add_case(&c[1], status);
            return;
        }
        if let Some(c) = RUNNING.captures(line) {
            let path = c[1].to_string();
            let file = (path.ends_with(".rs")).then_some(path);
            self.target = Some(Target { file, doc: false });
            return;
        }
        if DOCTESTS.is_match(line) {
            self.target = Some(Target {
                file: None,
                doc: true,
            });
            return;
        }
        if line.starts_with("error: test failed") || line.trim_start().starts_with("Caused by:") {
            self.expect_cause = true;
        }
        self.compile.line(line);
    }

    fn finish(mut self: Box<Self>) -> ParsedRun {
        self.end_section();
        let mut run = std::mem::take(&mut self.run);
        run.parser = "libtest";
        run.static_errors = self.compile.finish();
        run.static_errors.append(&mut self.crashes);
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::fixture;

    fn ids(run: &ParsedRun, status: Status) -> Vec<&str> {
        run.cases
            .iter()
            .filter(|c| c.status == status)
            .map(|c| c.id.as_str())
            .collect()
    }

    #[test]
    fn cargo_test_no_fail_fast() {
        let run = parse(&fixture("cargo-test.txt"));
        assert_eq!(run.parser, "libtest");
        assert_eq!(run.cases.len(), 14);
        assert_eq!(run.count(Status::Passed), 10);
        assert_eq!(run.count(Status::Failed), 3);
        assert_eq!(run.count(Status::Skipped), 1);
        assert!(run.static_errors.is_empty());
        assert_eq!(
            ids(&run, Status::Skipped),
            vec!["tests::add_many_numbers_slowly"]
        );
        assert_eq!(
            ids(&run, Status::Failed),
            vec![
                "stats::tests::mean_of_three",
                "tests::divide_negative",
                "src/lib.rs - divide (line 16)"
            ]
        );
        let f = |id: &str| run.cases.iter().find(|c| c.id == id).unwrap();
        let mean = f("stats::tests::mean_of_three");
        assert_eq!(
            (mean.file.as_deref(), mean.line),
            (Some("src/stats.rs"), Some(28))
        );
        assert_eq!(
            mean.error,
            "assertion `left == right` failed: left Some(3.0), right Some(2.0)"
        );
        assert!(mean.message.contains("left: Some(3.0)"), "{}", mean.message);
        assert_eq!(mean.layer, Some(Layer::Unit));
        let div = f("tests::divide_negative");
        assert_eq!(
            (div.file.as_deref(), div.line),
            (Some("src/lib.rs"), Some(47))
        );
        assert_eq!(
            div.error,
            "assertion `left == right` failed: left Some(3), right Some(-3)"
        );
        let doc = f("src/lib.rs - divide (line 16)");
        assert_eq!(
            (doc.file.as_deref(), doc.line),
            (Some("src/lib.rs"), Some(16))
        );
        assert_eq!(doc.error, "Test executable failed (exit status: 101).");
        assert!(doc.message.contains("assertion `left == right` failed"));
        let integ = f("divide_positive");
        assert_eq!(integ.file.as_deref(), Some("tests/integration.rs"));
        assert_eq!(integ.layer, Some(Layer::Integration));
    }

    #[test]
    fn cargo_test_fail_fast_stops_after_lib() {
        let run = parse(&fixture("cargo-test-fail-fast.txt"));
        assert_eq!(run.cases.len(), 9);
        assert_eq!(run.count(Status::Passed), 6);
        assert_eq!(run.count(Status::Failed), 2);
        assert_eq!(run.count(Status::Skipped), 1);
        let failed: Vec<_> = run
            .cases
            .iter()
            .filter(|c| c.status == Status::Failed)
            .map(|c| (c.id.as_str(), c.file.as_deref(), c.line))
            .collect();
        assert_eq!(
            failed,
            vec![
                (
                    "stats::tests::mean_of_three",
                    Some("src/stats.rs"),
                    Some(28)
                ),
                ("tests::divide_negative", Some("src/lib.rs"), Some(47)),
            ]
        );
        assert!(run.static_errors.is_empty());
    }

    #[test]
    fn compile_error_is_one_static_failure() {
        let run = parse(&fixture("cargo-test-compile-error.txt"));
        assert!(run.cases.is_empty());
        assert_eq!(run.static_errors.len(), 1);
        let e = &run.static_errors[0];
        assert_eq!(e.id, "src/lib.rs");
        assert_eq!((e.file.as_deref(), e.line), (Some("src/lib.rs"), Some(28)));
        assert_eq!(e.error, "error[E0308]: mismatched types");
        assert_eq!(e.status, Status::Error);
        assert_eq!(e.layer, Some(Layer::Static));
        assert!(
            e.message.contains("expected `i64`, found `&str`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn error_lines_without_a_failed_build_are_not_static_failures() {
        let run = parse(
            "running 1 test\ntest a ... ok\nerror: something a test printed\n\ntest result: ok. 1 passed; 0 failed\n",
        );
        assert!(run.static_errors.is_empty());
        assert_eq!(run.cases.len(), 1);
    }

    #[test]
    fn crashed_test_binary_is_a_static_failure() {
        let text = "     Running unittests src/lib.rs (target/debug/deps/x-1)\n\nrunning 2 tests\ntest a ... ok\nerror: test failed, to rerun pass `--lib`\n\nCaused by:\n  process didn't exit successfully: `/x/target/debug/deps/x-1` (signal: 11, SIGSEGV: invalid memory reference)\n";
        let run = parse(text);
        assert_eq!(run.cases.len(), 1);
        assert_eq!(run.static_errors.len(), 1);
        assert_eq!(run.static_errors[0].id, "src/lib.rs");
        assert_eq!(
            run.static_errors[0].error,
            "test binary crashed (signal: 11, SIGSEGV: invalid memory reference)"
        );
    }
}
