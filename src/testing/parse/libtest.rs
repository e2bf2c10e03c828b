//! `cargo test` output (libtest's text format): `test x ... ok|FAILED|ignored`
//! lines per target, the `failures:` section with each failing test's
//! output (panic message and `file:line:col`), doctests, and compile errors,
//! which become static failures.
//!
//! Ids are `<target>::<name>` (DESIGN.md §10.4): the target is the test
//! binary's name from cargo's `Running … (target/debug/deps/<name>-<hash>)`
//! line (the crate name for `Doc-tests <crate>`), so `check` in `tests/a.rs`
//! and in `tests/b.rs` are `a::check` and `b::check`. libtest's mode
//! suffixes (`- should panic`, `- compile fail`) are not part of the name.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{
    Bounded, CompileErrors, LineParser, ParsedCase, ParsedRun, Status, rust_panic, strip_ansi,
};
use crate::artifacts::test_results::Layer;
use crate::project::{compile, re};
use crate::testing::id;

/// Parse a whole `cargo test` output.
pub fn parse(text: &str) -> ParsedRun {
    super::feed(Box::new(Parser::default()), text)
}

#[derive(Debug, Clone, Default)]
struct Target {
    /// The test binary's name (`rust_calc`, `integration`), or the crate of
    /// a `Doc-tests` section; `None` when the output named no target.
    name: Option<String>,
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
    target: Target,
    /// Case index by id, for attaching the failure output.
    by_id: HashMap<String, usize>,
    /// The failing test whose output is being read, and that output.
    section: Option<(String, Bounded)>,
    compile: CompileErrors,
    /// `process didn't exit successfully` lines: a test binary crashed.
    crashes: Vec<ParsedCase>,
    expect_cause: bool,
    /// Read nothing before the first `Doc-tests` line (the doctests that
    /// run after nextest in one output).
    wait_for_doctests: bool,
}

static RUNNING: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^\s+Running (?:unittests )?(\S+)(?: \((\S+)\))?\s*$"));
static DOCTESTS: LazyLock<Regex> = LazyLock::new(|| compile(r"^\s+Doc-tests (\S+)\s*$"));
static TEST_LINE: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?|bench:.*)\s*$"));
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^---- (.+?) (stdout|stderr) ----\s*$"));
static DOCTEST_NAME: LazyLock<Regex> = LazyLock::new(|| compile(r"^(\S+) - .*\(line (\d+)\)"));
static CRASH: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"process didn't exit successfully: .*\((signal: .*|exit status: .*)\)")
});

/// libtest's mode suffixes on a test line (`test x - should panic ... ok`):
/// how the test runs, not its name.
pub fn strip_mode_suffix(name: &str) -> &str {
    for suffix in [" - should panic", " - compile fail", " - compile"] {
        if let Some(base) = name.strip_suffix(suffix) {
            return base;
        }
    }
    name
}

/// The target name of a test binary path: `target/debug/deps/a-0123…` → `a`.
fn binary_name(path: &str) -> String {
    let hash = re!(r"-[0-9a-f]{16}$");
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let file = file.strip_suffix(".exe").unwrap_or(file);
    hash.replace(file, "").into_owned()
}

impl Parser {
    /// A parser for the `cargo test --doc` part of an output that begins
    /// with something else (nextest's run): lines before the first
    /// `Doc-tests` line are ignored.
    pub fn doctests_only() -> Parser {
        Parser {
            wait_for_doctests: true,
            ..Parser::default()
        }
    }

    fn id_of(&self, name: &str) -> String {
        id::libtest(self.target.name.as_deref(), strip_mode_suffix(name))
    }

    fn end_section(&mut self) {
        let Some((name, body)) = self.section.take() else {
            return;
        };
        // Only tests the output listed get the failure text: a section
        // whose name matches no test line adds no case of its own.
        let Some(&idx) = self.by_id.get(&self.id_of(&name)) else {
            return;
        };
        let text = body.text().to_string();
        let case = &mut self.run.cases[idx];
        if case.status == Status::Passed {
            case.status = Status::Failed;
        }
        let doctest = self.target.doc && DOCTEST_NAME.is_match(&name);
        match rust_panic(&text).or_else(|| super::did_not_panic(&text)) {
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
        let name = strip_mode_suffix(name);
        let (file, line) = match DOCTEST_NAME.captures(name) {
            Some(c) if self.target.doc => (Some(c[1].to_string()), c[2].parse().ok()),
            _ => (self.target.file.clone(), None),
        };
        let id = self.id_of(name);
        self.run.cases.push(ParsedCase {
            id: id.clone(),
            status,
            file,
            line,
            layer: Some(self.target.layer()),
            ..ParsedCase::default()
        });
        self.by_id.insert(id, self.run.cases.len() - 1);
    }
}

impl LineParser for Parser {
    fn line(&mut self, raw: &str) {
        let stripped = strip_ansi(raw);
        let line = stripped.trim_end_matches('\r');
        if self.wait_for_doctests {
            if !DOCTESTS.is_match(line) {
                return;
            }
            self.wait_for_doctests = false;
        }

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
                let file = self.target.file.clone();
                let id = file.clone().unwrap_or_else(|| "test binary".into());
                self.crashes.push(ParsedCase {
                    id,
                    status: Status::Error,
                    file,
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
            let first = c[1].to_string();
            // `Running src/lib.rs (target/debug/deps/x-…)`; old cargo prints
            // only the binary path.
            let (file, binary) = match c.get(2) {
                Some(b) => (Some(first), b.as_str().to_string()),
                None => (None, first),
            };
            self.target = Target {
                name: Some(binary_name(&binary)),
                file: file.filter(|f| f.ends_with(".rs")),
                doc: false,
            };
            return;
        }
        if let Some(c) = DOCTESTS.captures(line) {
            self.target = Target {
                name: Some(c[1].to_string()),
                file: None,
                doc: true,
            };
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
    use crate::testing::parse::{fixture, ids, statuses};

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
            vec!["rust_calc::tests::add_many_numbers_slowly"]
        );
        assert_eq!(
            ids(&run, Status::Failed),
            vec![
                "rust_calc::stats::tests::mean_of_three",
                "rust_calc::tests::divide_negative",
                "rust_calc::src/lib.rs - divide (line 16)"
            ]
        );
        let f = |id: &str| run.cases.iter().find(|c| c.id == id).unwrap();
        let mean = f("rust_calc::stats::tests::mean_of_three");
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
        let div = f("rust_calc::tests::divide_negative");
        assert_eq!(
            (div.file.as_deref(), div.line),
            (Some("src/lib.rs"), Some(47))
        );
        assert_eq!(
            div.error,
            "assertion `left == right` failed: left Some(3), right Some(-3)"
        );
        let doc = f("rust_calc::src/lib.rs - divide (line 16)");
        assert_eq!(
            (doc.file.as_deref(), doc.line),
            (Some("src/lib.rs"), Some(16))
        );
        assert_eq!(doc.error, "Test executable failed (exit status: 101).");
        assert!(doc.message.contains("assertion `left == right` failed"));
        let integ = f("integration::divide_positive");
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
                    "rust_calc::stats::tests::mean_of_three",
                    Some("src/stats.rs"),
                    Some(28)
                ),
                (
                    "rust_calc::tests::divide_negative",
                    Some("src/lib.rs"),
                    Some(47)
                ),
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

    #[test]
    fn should_panic_is_one_case_with_a_stable_id() {
        use Status::*;
        // Real `cargo test --no-fail-fast` (fixtures/outputs/README.md):
        // `test tests::rejects_negative - should panic ... FAILED` and a
        // `---- tests::rejects_negative stdout ----` section are one test.
        let failing = parse(&fixture("cargo-test-should-panic.txt"));
        assert_eq!(
            statuses(&failing),
            vec![
                ("should_panic::src/lib.rs - check (line 11)", Passed),
                ("should_panic::src/lib.rs - check (line 5)", Passed),
                ("should_panic::tests::accepts_zero", Passed),
                ("should_panic::tests::rejects_negative", Failed),
                ("should_panic::tests::rejects_very_negative", Passed),
            ]
        );
        let case = |r: &ParsedRun, id: &str| r.cases.iter().find(|c| c.id == id).cloned().unwrap();
        let f = case(&failing, "should_panic::tests::rejects_negative");
        assert!(f.error.contains("did not panic as expected"), "{}", f.error);
        let doc = case(&failing, "should_panic::src/lib.rs - check (line 11)");
        assert_eq!(doc.line, Some(11), "the compile_fail doctest");
        // After the fix every test passes under the same ids.
        let fixed = parse(&fixture("cargo-test-should-panic-fixed.txt"));
        let ids = |r: &ParsedRun| {
            statuses(r)
                .into_iter()
                .map(|(i, _)| i.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&fixed), ids(&failing));
        assert_eq!(fixed.count(Passed), 5);
    }

    #[test]
    fn one_name_in_several_targets_keeps_one_id_each() {
        use Status::*;
        let failing = parse(&fixture("cargo-test-same-name.txt"));
        assert_eq!(
            statuses(&failing),
            vec![
                ("a::check", Failed),
                ("b::check", Passed),
                ("same_name::tests::check", Passed),
            ]
        );
        let a = &failing.cases[1];
        assert_eq!(a.id, "a::check");
        assert_eq!((a.file.as_deref(), a.line), (Some("tests/a.rs"), Some(5)));
        assert_eq!(a.layer, Some(Layer::Integration));
        let fixed = parse(&fixture("cargo-test-same-name-fixed.txt"));
        assert_eq!(
            statuses(&fixed),
            vec![
                ("a::check", Passed),
                ("b::check", Passed),
                ("same_name::tests::check", Passed),
            ]
        );
    }

    #[test]
    fn a_failure_section_without_a_test_line_adds_no_case() {
        let run = parse(
            "     Running unittests src/lib.rs (target/debug/deps/k-0123456789abcdef)\n\nrunning 1 test\ntest a ... ok\n\nfailures:\n\n---- b stdout ----\nboom\n\ntest result: FAILED. 1 passed; 0 failed\n",
        );
        assert_eq!(statuses(&run), vec![("k::a", Status::Passed)]);
    }

    #[test]
    fn mode_suffixes_are_not_part_of_the_name() {
        for (name, want) in [
            ("tests::x - should panic", "tests::x"),
            (
                "src/lib.rs - f (line 3) - compile fail",
                "src/lib.rs - f (line 3)",
            ),
            (
                "src/lib.rs - f (line 3) - compile",
                "src/lib.rs - f (line 3)",
            ),
            ("src/lib.rs - f (line 3)", "src/lib.rs - f (line 3)"),
            ("tests::plain", "tests::plain"),
        ] {
            assert_eq!(strip_mode_suffix(name), want);
        }
        assert_eq!(binary_name("target/debug/deps/a-2a885b7e2cd69e05"), "a");
        assert_eq!(
            binary_name("target/debug/deps/my-test-2a885b7e2cd69e05"),
            "my-test"
        );
        assert_eq!(
            binary_name("target\\debug\\deps\\w-0123456789abcdef.exe"),
            "w"
        );
    }
}
