//! From parsed cases to `test-results.json` (DESIGN.md §3, §5.2): the
//! zero-tests rules, layers, criticality, pass rate; merging a subset
//! re-run over the last full run; marking flaky failures. All pure.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

use super::detect::Framework;
use super::id;
use super::parse::{ParsedCase, ParsedRun, Status, excerpt};
use crate::artifacts::Timestamp;
use crate::artifacts::test_results::{
    CaseResult, CaseStatus, Criticality, Failure, Layer, LayerDistribution, Scope, TestResults,
    pass_rate,
};
use crate::project::{compile, re};

/// What the runner knows about a run besides its parsed output.
#[derive(Debug, Clone)]
pub struct RunFacts<'a> {
    /// The command as a user would re-run it (no absolute paths).
    pub command: String,
    pub framework: Framework,
    pub scope: Scope,
    /// `None` when the child was killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// The timeout in seconds when the run hit it.
    pub timed_out_after: Option<u64>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    /// When the first test result appeared (what came before: a build, a
    /// `pretest` script, the runner's start), if it was seen.
    pub setup_ms: Option<u64>,
    /// The end of the output, kept for execution errors.
    pub output_tail: &'a str,
    pub output_log: Option<String>,
    pub truncated: bool,
    pub started_at: Option<Timestamp>,
    /// The previous result, for "passed last time, fails now" → high.
    pub previous: Option<&'a TestResults>,
    pub notes: Vec<String>,
}

/// Build the results document, applying DESIGN.md §5.2:
/// - non-zero exit with zero parsed tests → one static execution error
///   carrying the output tail, `parser: "exit-code"`;
/// - exit 0 with no test run → error "no tests found";
/// - non-zero exit although every parsed test passed → an execution error,
///   so a failing command can never read as a pass;
/// - a timeout → an execution error next to whatever was parsed.
pub fn build(parsed: ParsedRun, mut facts: RunFacts<'_>) -> TestResults {
    let ParsedRun {
        parser,
        mut cases,
        mut static_errors,
        unnamed_skipped,
    } = parsed;
    // One id per case (DESIGN.md §10.4): cases the runner reported under
    // one name are kept as `name`, `name#2`, ….
    let renamed = id::disambiguate(cases.iter_mut().map(|c| &mut c.id));
    if renamed > 0 {
        facts.notes.push(format!(
            "{renamed} test(s) share a name with another test of this run (kept as name#2, …); a retest of them runs the full suite"
        ));
    }
    id::disambiguate(static_errors.iter_mut().map(|c| &mut c.id));
    let mut parser = if parser.is_empty() {
        "exit-code"
    } else {
        parser
    };
    if let Some((error, from_exit_code)) =
        run_error(&facts, &cases, !static_errors.is_empty(), unnamed_skipped)
    {
        if from_exit_code {
            parser = "exit-code";
        }
        static_errors.push(execution_error(&facts, error));
    }

    let previous: HashMap<&str, CaseStatus> = facts
        .previous
        .map(|p| {
            p.cases
                .iter()
                .map(|c| (c.test.as_str(), c.status))
                .collect()
        })
        .unwrap_or_default();

    let mut failures = Vec::new();
    let mut tally = Tally {
        skipped: unnamed_skipped,
        ..Tally::default()
    };
    for e in &static_errors {
        tally.count(CaseStatus::Error, Layer::Static);
        failures.push(failure_of(e, Layer::Static, &previous));
    }
    let mut case_results = Vec::with_capacity(cases.len());
    for c in &cases {
        let layer = case_layer(c);
        if tally.count(c.status.into(), layer) {
            failures.push(failure_of(c, layer, &previous));
        }
        case_results.push(CaseResult {
            test: c.id.clone(),
            status: c.status.into(),
            file: c.file.clone(),
            layer: Some(layer),
        });
    }

    TestResults {
        command: facts.command,
        exit_code: facts.exit_code,
        duration_ms: facts.duration_ms,
        setup_ms: facts.setup_ms,
        scope: facts.scope,
        framework: facts.framework.as_str().to_string(),
        parser: parser.to_string(),
        total: cases.len() as u32 + unnamed_skipped,
        passed: tally.passed,
        failed: tally.failed,
        skipped: tally.skipped,
        errors: tally.errors,
        pass_rate: pass_rate(tally.passed, tally.failed, tally.errors),
        layer_distribution: tally.dist,
        failures,
        output_log: facts.output_log,
        truncated: facts.truncated,
        started_at: facts.started_at,
        cases: case_results,
        notes: facts.notes,
        extra: Default::default(),
    }
}

/// The counts of a results document, case by case.
#[derive(Default)]
struct Tally {
    passed: u32,
    failed: u32,
    skipped: u32,
    errors: u32,
    dist: LayerDistribution,
}

impl Tally {
    /// Count one case of `layer`; true when it is a failure or an error.
    fn count(&mut self, status: CaseStatus, layer: Layer) -> bool {
        let counts = self.dist.get_mut(layer);
        counts.total += 1;
        match status {
            CaseStatus::Passed => {
                self.passed += 1;
                counts.passed += 1;
            }
            CaseStatus::Skipped => self.skipped += 1,
            CaseStatus::Failed => self.failed += 1,
            CaseStatus::Error => self.errors += 1,
        }
        let failing = matches!(status, CaseStatus::Failed | CaseStatus::Error);
        if failing {
            counts.failed += 1;
        }
        failing
    }
}

fn describe_exit(facts: &RunFacts<'_>) -> String {
    match (facts.exit_code, facts.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended without an exit code".into(),
    }
}

fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(|l| super::parse::strip_ansi(l).trim().to_string())
        .find(|l| !l.is_empty())
}

/// The static failure that stands for a run that did not produce results.
/// The error of a run that found no test to run (DESIGN.md §10.7).
pub const NO_TESTS_FOUND: &str = "no tests found";

/// What to do about a project without tests, the same wherever it is said.
pub const NO_TESTS_HINT: &str = "Write tests first, or set `agents.test_gen` in .workflow/wfx.json so `wfx test-fix-gen` generates them (task IMPL-001).";

/// Whether a run that exited non-zero with nothing parsed says it found no
/// tests: pytest's exit code 5, or the runners' own words (jest, vitest,
/// go, mocha-style and cargo filters).
fn runner_found_no_tests(framework: Framework, exit_code: Option<i32>, tail: &str) -> bool {
    let said = re!(
        r"(?mi)^[=\s]*(no tests ran in\b|no tests found|no test files found|no test suite found|\?\s+\S+\s+\[no test files\]\s*$)"
    );
    (framework == Framework::Pytest && exit_code == Some(5)) || said.is_match(tail)
}

/// Whether the results are a run that found no tests at all: nothing to
/// fix, so the loop never sends it to a fix agent (DESIGN.md §10.7).
pub fn found_no_tests(results: &TestResults) -> bool {
    results.cases.is_empty()
        && results.failures.len() == 1
        && results.failures[0].error == NO_TESTS_FOUND
}

/// The execution error of a run, if it has one (DESIGN.md §5.2), and
/// whether it is all there is (the exit code is then the parser).
fn run_error(
    facts: &RunFacts<'_>,
    cases: &[ParsedCase],
    has_static_errors: bool,
    unnamed_skipped: u32,
) -> Option<(String, bool)> {
    let ran = cases
        .iter()
        .any(|c| matches!(c.status, Status::Passed | Status::Failed | Status::Error));
    let failing = cases
        .iter()
        .any(|c| matches!(c.status, Status::Failed | Status::Error))
        || has_static_errors;
    if let Some(secs) = facts.timed_out_after {
        Some((format!("timed out after {secs} s"), false))
    } else if cases.is_empty() && !has_static_errors && facts.exit_code != Some(0) {
        let error = if runner_found_no_tests(facts.framework, facts.exit_code, facts.output_tail) {
            NO_TESTS_FOUND.to_string()
        } else {
            last_line(facts.output_tail).unwrap_or_else(|| describe_exit(facts))
        };
        Some((error, true))
    } else if !ran && !has_static_errors {
        let error = if cases.is_empty() && unnamed_skipped == 0 {
            NO_TESTS_FOUND.to_string()
        } else {
            "no tests ran (all were skipped)".to_string()
        };
        Some((error, false))
    } else if !failing && facts.exit_code != Some(0) {
        Some((
            format!("{} although no test failed", describe_exit(facts)),
            false,
        ))
    } else {
        None
    }
}

fn execution_error(facts: &RunFacts<'_>, error: String) -> ParsedCase {
    ParsedCase {
        id: facts.command.clone(),
        status: Status::Error,
        error,
        message: excerpt(&tail_lines(facts.output_tail, 40)),
        layer: Some(Layer::Static),
        ..ParsedCase::default()
    }
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn failure_of(c: &ParsedCase, layer: Layer, previous: &HashMap<&str, CaseStatus>) -> Failure {
    let previously_passed = previous.get(c.id.as_str()) == Some(&CaseStatus::Passed);
    Failure {
        test: c.id.clone(),
        file: c.file.clone(),
        line: c.line,
        error: c.error.clone(),
        message: c.message.clone(),
        criticality: criticality(&Judged {
            test: &c.id,
            file: c.file.as_deref(),
            error: &c.error,
            message: &c.message,
            layer,
            flaky: c.flaky,
            previously_passed,
        }),
        test_type: layer,
        flaky: c.flaky,
        extra: Default::default(),
    }
}

/// Layer of a parsed case: what the format said, else judged by path.
pub fn case_layer(c: &ParsedCase) -> Layer {
    if let Some(l) = c.layer {
        return l;
    }
    layer_for(&c.id, c.file.as_deref())
}

/// Layer from the test id when it names a path (pytest, jest, go, Surefire),
/// else from the file.
pub fn layer_for(id: &str, file: Option<&str>) -> Layer {
    if id.contains('/') || id.contains('#') || id.contains(".py") {
        layer_of_path(id)
    } else {
        file.map(layer_of_path).unwrap_or(Layer::Unit)
    }
}

// The classification regexes (REFERENCE.md); for ASCII text, `fast`
// matches what they match.
static E2E: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)(^|[/\\])(e2e|cypress|playwright)[/\\]|\.e2e\.|[_-]e2e[_.]"));
static INTEGRATION: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i:(^|[/\\])(integration|integration[_-]tests?|it)[/\\]|\.integration\.|[_.-]integration[_.-]|_it\.)|[a-z0-9]IT(\.java|\.kt|#|$)",
    )
});
static RUST_TESTS: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(^|/)tests/[^/]+\.rs$|(^|/)tests/[^/]+/main\.rs$"));
static ENVIRONMENT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?im)connection refused|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|getaddrinfo|network is unreachable|no route to host|temporary failure in name resolution|could not resolve host|name or service not known|command not found|: not found$|executable file not found|no such file or directory.*(chromium|chrome|firefox|docker)|docker daemon",
    )
});
static SENSITIVE: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i)(auth|login|logout|passw|credential|permission|privilege|oauth|jwt|token|csrf|xss|injection|security|secret|encrypt|decrypt|crypt|signature|payment|billing|invoice|checkout|refund|charge|wallet|data[_ -]?loss|corrupt|migration)",
    )
});
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"(?i)assert|expect|to (be|equal|have|match)|want |!==|!=|mismatch|but was|differ")
});
static CRASH: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"(?i)segmentation fault|SIGSEGV|SIGABRT|SIGBUS|SIGILL|core dumped|stack overflow|overflowed its stack|fatal runtime error|fatal python error|out of memory|heap out of memory|maximum call stack|called `(Option|Result)::unwrap\(\)`|index out of (bounds|range)|attempt to (add|subtract|multiply|divide|negate|shift).*overflow|attempt to divide by zero|nil pointer dereference|NullPointerException|ArithmeticException|ZeroDivisionError|RecursionError|MemoryError|Cannot read propert(y|ies) of (undefined|null)|is not a function|test binary crashed|test process ended by|^panic: ",
    )
});
static WARNING: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?i)^\w*Warning\b|\bxfail\b|known issue"));

/// REFERENCE.md "Layer of a test by path": e2e markers, then integration
/// markers (Rust `tests/*.rs` included), else unit.
pub fn layer_of_path(path: &str) -> Layer {
    let p = path.split(" › ").next().unwrap_or(path);
    if p.is_ascii() {
        return fast::layer(p);
    }
    if E2E.is_match(p) {
        Layer::E2e
    } else if INTEGRATION.is_match(p) || RUST_TESTS.is_match(p) {
        Layer::Integration
    } else {
        Layer::Unit
    }
}

/// The facts criticality is judged from.
#[derive(Debug, Clone)]
pub struct Judged<'a> {
    pub test: &'a str,
    pub file: Option<&'a str>,
    pub error: &'a str,
    pub message: &'a str,
    pub layer: Layer,
    pub flaky: bool,
    pub previously_passed: bool,
}

/// REFERENCE.md "Criticality of a failure", in this order: flaky and
/// environment problems are low; build errors, regressions (passed last
/// run), security/auth/payment/data tests and crashes are high; warnings and
/// known issues are low; anything else (ordinary assertion failures) medium.
pub fn criticality(j: &Judged<'_>) -> Criticality {
    // ASCII text takes the regexes' hand-written equivalents (`fast`);
    // only other text compiles them.
    let is = |slow: &LazyLock<Regex>, quick: fn(&str) -> bool, text: &str| {
        if text.is_ascii() {
            quick(text)
        } else {
            slow.is_match(text)
        }
    };
    if j.flaky {
        return Criticality::Low;
    }
    let text = format!("{}\n{}", j.error, j.message);
    if is(&ENVIRONMENT, fast::environment, &text) {
        return Criticality::Low;
    }
    if j.layer == Layer::Static || j.previously_passed {
        return Criticality::High;
    }
    let name = format!("{} {}", j.test, j.file.unwrap_or(""));
    if is(&SENSITIVE, fast::sensitive, &name) {
        return Criticality::High;
    }
    if is(&CRASH, fast::crash, j.error)
        || (!is(&ASSERTION, fast::assertion, j.error) && is(&CRASH, fast::crash, j.message))
    {
        return Criticality::High;
    }
    if is(&WARNING, fast::warning, j.error) {
        return Criticality::Low;
    }
    Criticality::Medium
}

/// What the classification regexes of [`layer_of_path`] and
/// [`criticality`] match, for ASCII text only, without compiling them
/// (compiling them was a fifth of `wfx test`'s own time, issue #30). In
/// ASCII text, `(?i)` is ASCII case folding and `\w`, `\b` are ASCII
/// word characters and boundaries; text with other characters takes the
/// regexes. `fast_paths_agree_with_the_regexes` pins each function to its
/// regex.
mod fast {
    use crate::artifacts::test_results::Layer;

    /// Every start of `needle` (not empty) in `hay`, overlapping ones
    /// included. Paths and messages are short: a plain scan, no searcher
    /// to build per call.
    fn starts<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
        memchr::memchr_iter(needle[0], hay).filter(move |&i| hay[i..].starts_with(needle))
    }

    /// Whether `needle` occurs with a byte before it (`None` at the start)
    /// and after it (`None` at the end) that `before` and `after` accept.
    fn occurs(
        hay: &[u8],
        needle: &str,
        before: impl Fn(Option<u8>) -> bool,
        after: impl Fn(Option<u8>) -> bool,
    ) -> bool {
        let n = needle.len();
        starts(hay, needle.as_bytes())
            .any(|i| before(i.checked_sub(1).map(|b| hay[b])) && after(hay.get(i + n).copied()))
    }

    fn any_of(set: &'static [u8]) -> impl Fn(Option<u8>) -> bool {
        move |b| b.is_some_and(|b| set.contains(&b))
    }

    fn slash(b: Option<u8>) -> bool {
        matches!(b, Some(b'/' | b'\\'))
    }

    fn contains_any(hay: &str, needles: &[&str]) -> bool {
        needles.iter().any(|n| hay.contains(n))
    }

    fn is_word(b: Option<u8>) -> bool {
        b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
    }

    /// `layer_of_path`'s E2E, INTEGRATION and RUST_TESTS.
    pub fn layer(p: &str) -> Layer {
        let lower = p.to_ascii_lowercase();
        let l = lower.as_bytes();
        let start_or_slash = |b: Option<u8>| b.is_none() || slash(b);
        let e2e = ["e2e", "cypress", "playwright"]
            .iter()
            .any(|d| occurs(l, d, start_or_slash, slash))
            || lower.contains(".e2e.")
            || occurs(l, "e2e", any_of(b"_-"), any_of(b"_."));
        if e2e {
            return Layer::E2e;
        }
        let integration = [
            "integration",
            "integration_test",
            "integration-test",
            "integration_tests",
            "integration-tests",
            "it",
        ]
        .iter()
        .any(|d| occurs(l, d, start_or_slash, slash))
            || lower.contains(".integration.")
            || occurs(l, "integration", any_of(b"_.-"), any_of(b"_.-"))
            || lower.contains("_it.")
            || starts(p.as_bytes(), b"IT").any(|i| {
                let rest = &p[i + 2..];
                i > 0
                    && matches!(p.as_bytes()[i - 1], b'a'..=b'z' | b'0'..=b'9')
                    && (rest.starts_with(".java")
                        || rest.starts_with(".kt")
                        || rest.starts_with('#')
                        || rest.is_empty())
            })
            || rust_tests(p);
        if integration {
            Layer::Integration
        } else {
            Layer::Unit
        }
    }

    /// `(^|/)tests/[^/]+\.rs$|(^|/)tests/[^/]+/main\.rs$`
    fn rust_tests(p: &str) -> bool {
        starts(p.as_bytes(), b"tests/").any(|i| {
            if i > 0 && p.as_bytes()[i - 1] != b'/' {
                return false;
            }
            let rest = &p[i + 6..];
            let one_part = |s: &str| !s.is_empty() && !s.contains('/');
            rest.strip_suffix(".rs").is_some_and(one_part)
                || rest.strip_suffix("/main.rs").is_some_and(one_part)
        })
    }

    /// criticality's ENVIRONMENT (`(?im)`).
    pub fn environment(text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        contains_any(
            &lower,
            &[
                "connection refused",
                "econnrefused",
                "econnreset",
                "enotfound",
                "eai_again",
                "getaddrinfo",
                "network is unreachable",
                "no route to host",
                "temporary failure in name resolution",
                "could not resolve host",
                "name or service not known",
                "command not found",
                "executable file not found",
                "docker daemon",
            ],
        ) || occurs(
            lower.as_bytes(),
            ": not found",
            |_| true,
            |b| matches!(b, None | Some(b'\n')),
        ) || lower.split('\n').any(|line| {
            line.find("no such file or directory").is_some_and(|i| {
                contains_any(
                    &line[i + 25..],
                    &["chromium", "chrome", "firefox", "docker"],
                )
            })
        })
    }

    /// criticality's SENSITIVE (`(?i)`).
    pub fn sensitive(name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        contains_any(
            &lower,
            &[
                "auth",
                "login",
                "logout",
                "passw",
                "credential",
                "permission",
                "privilege",
                "oauth",
                "jwt",
                "token",
                "csrf",
                "xss",
                "injection",
                "security",
                "secret",
                "encrypt",
                "decrypt",
                "crypt",
                "signature",
                "payment",
                "billing",
                "invoice",
                "checkout",
                "refund",
                "charge",
                "wallet",
                "dataloss",
                "data_loss",
                "data loss",
                "data-loss",
                "corrupt",
                "migration",
            ],
        )
    }

    /// criticality's ASSERTION (`(?i)`).
    pub fn assertion(error: &str) -> bool {
        let lower = error.to_ascii_lowercase();
        contains_any(
            &lower,
            &[
                "assert", "expect", "to be", "to equal", "to have", "to match", "want ", "!=",
                "mismatch", "but was", "differ",
            ],
        )
    }

    /// criticality's CRASH (`(?i)`, `^` the start of the text).
    pub fn crash(text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        contains_any(
            &lower,
            &[
                "segmentation fault",
                "sigsegv",
                "sigabrt",
                "sigbus",
                "sigill",
                "core dumped",
                "stack overflow",
                "overflowed its stack",
                "fatal runtime error",
                "fatal python error",
                "out of memory",
                "maximum call stack",
                "called `option::unwrap()`",
                "called `result::unwrap()`",
                "index out of bounds",
                "index out of range",
                "attempt to divide by zero",
                "nil pointer dereference",
                "nullpointerexception",
                "arithmeticexception",
                "zerodivisionerror",
                "recursionerror",
                "memoryerror",
                "cannot read property of undefined",
                "cannot read property of null",
                "cannot read properties of undefined",
                "cannot read properties of null",
                "is not a function",
                "test binary crashed",
                "test process ended by",
            ],
        ) || lower.starts_with("panic: ")
            || lower.split('\n').any(|line| {
                ["add", "subtract", "multiply", "divide", "negate", "shift"]
                    .iter()
                    .any(|op| {
                        let what = format!("attempt to {op}");
                        line.find(&what)
                            .is_some_and(|i| line[i + what.len()..].contains("overflow"))
                    })
            })
    }

    /// criticality's WARNING (`(?i)^\w*Warning\b|\bxfail\b|known issue`).
    pub fn warning(error: &str) -> bool {
        let lower = error.to_ascii_lowercase();
        let run = lower.bytes().take_while(|&b| is_word(Some(b))).count();
        lower[..run].ends_with("warning")
            || occurs(lower.as_bytes(), "xfail", |b| !is_word(b), |b| !is_word(b))
            || lower.contains("known issue")
    }
}

/// The last full run's cases with the subset's statuses over them, and
/// the ids the subset re-ran.
fn merged_cases<'a>(
    last_full: &TestResults,
    subset: &'a TestResults,
) -> (Vec<CaseResult>, HashSet<&'a str>) {
    let mut cases = last_full.cases.clone();
    let index: HashMap<String, usize> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| (c.test.clone(), i))
        .collect();
    let mut rerun: HashSet<&str> = HashSet::new();
    for c in &subset.cases {
        match index.get(&c.test) {
            Some(&i) => {
                if c.status != CaseStatus::Skipped || cases[i].status == CaseStatus::Skipped {
                    cases[i].status = c.status;
                    if c.layer.is_some() {
                        cases[i].layer = c.layer;
                    }
                    rerun.insert(&c.test);
                }
            }
            None => {
                cases.push(c.clone());
                rerun.insert(&c.test);
            }
        }
    }
    (cases, rerun)
}

/// A failing case whose failure neither run recorded.
fn unrecorded_failure(c: &CaseResult, layer: Layer) -> Failure {
    Failure {
        test: c.test.clone(),
        file: c.file.clone(),
        line: None,
        error: String::new(),
        message: String::new(),
        criticality: Criticality::Medium,
        test_type: layer,
        flaky: false,
        extra: Default::default(),
    }
}

/// Merge a subset re-run over the last full run (DESIGN.md §5.4): tests not
/// re-run keep their last status; a re-run test takes its new status, except
/// that `skipped` never replaces a known result (runners report tests left
/// out by a filter as skipped). Static failures come from the subset only.
/// The result has `scope: "affected"` and the subset's command, exit code,
/// timing and log.
pub fn merge(last_full: &TestResults, subset: &TestResults) -> TestResults {
    let (cases, rerun) = merged_cases(last_full, subset);
    let new_failures: HashMap<&str, &Failure> = subset
        .failures
        .iter()
        .map(|f| (f.test.as_str(), f))
        .collect();
    let old_failures: HashMap<&str, &Failure> = last_full
        .failures
        .iter()
        .map(|f| (f.test.as_str(), f))
        .collect();

    let mut failures: Vec<Failure> = subset
        .failures
        .iter()
        .filter(|f| f.test_type == Layer::Static)
        .cloned()
        .collect();
    let mut tally = Tally::default();
    for _ in &failures {
        tally.count(CaseStatus::Error, Layer::Static);
    }
    for c in &cases {
        let layer = c
            .layer
            .unwrap_or_else(|| layer_for(&c.test, c.file.as_deref()));
        if tally.count(c.status, layer) {
            let source = if rerun.contains(c.test.as_str()) {
                new_failures.get(c.test.as_str())
            } else {
                old_failures.get(c.test.as_str())
            };
            failures.push(match source {
                Some(f) => (*f).clone(),
                None => unrecorded_failure(c, layer),
            });
        }
    }
    // Skipped tests the last full run counted but never named.
    let named_skipped_before = last_full
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Skipped)
        .count() as u32;
    let unnamed = last_full.skipped.saturating_sub(named_skipped_before);
    tally.skipped += unnamed;

    TestResults {
        command: subset.command.clone(),
        exit_code: subset.exit_code,
        duration_ms: subset.duration_ms,
        setup_ms: subset.setup_ms,
        scope: Scope::Affected,
        framework: subset.framework.clone(),
        parser: subset.parser.clone(),
        total: cases.len() as u32 + unnamed,
        passed: tally.passed,
        failed: tally.failed,
        skipped: tally.skipped,
        errors: tally.errors,
        pass_rate: pass_rate(tally.passed, tally.failed, tally.errors),
        layer_distribution: tally.dist,
        failures,
        output_log: subset.output_log.clone(),
        truncated: subset.truncated,
        started_at: subset.started_at,
        cases,
        notes: subset.notes.clone(),
        extra: subset.extra.clone(),
    }
}

/// Ids of the test failures (not static errors) of a result, in order: what
/// a subset re-run or a flakiness check re-runs.
pub fn failing_ids(results: &TestResults) -> Vec<String> {
    results
        .failures
        .iter()
        .filter(|f| f.test_type != Layer::Static)
        .map(|f| f.test.clone())
        .collect()
}

/// Mark the failures of `results` that passed in `rerun` as flaky with low
/// criticality (REFERENCE.md). They stay failures of that run; the loop
/// decides whether they count. Returns the ids marked.
pub fn mark_flaky(results: &mut TestResults, rerun: &TestResults) -> Vec<String> {
    let passed: HashSet<&str> = rerun
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Passed)
        .map(|c| c.test.as_str())
        .collect();
    let mut marked = Vec::new();
    for f in &mut results.failures {
        if f.test_type != Layer::Static && passed.contains(f.test.as_str()) {
            f.flaky = true;
            f.criticality = Criticality::Low;
            marked.push(f.test.clone());
        }
    }
    marked
}

/// Pass rate counting flaky failures as passes (DESIGN.md §5.3: flaky
/// tests "do not count" when judging a regression).
pub fn pass_rate_without_flaky(results: &TestResults) -> f64 {
    let flaky = results.failures.iter().filter(|f| f.flaky).count() as u32;
    let failed_flaky = results
        .failures
        .iter()
        .filter(|f| f.flaky)
        .filter(|f| {
            results
                .cases
                .iter()
                .any(|c| c.test == f.test && c.status == CaseStatus::Failed)
        })
        .count() as u32;
    let errors_flaky = flaky - failed_flaky;
    pass_rate(
        results.passed + flaky,
        results.failed.saturating_sub(failed_flaky),
        results.errors.saturating_sub(errors_flaky),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer_by_regex(p: &str) -> Layer {
        if E2E.is_match(p) {
            Layer::E2e
        } else if INTEGRATION.is_match(p) || RUST_TESTS.is_match(p) {
            Layer::Integration
        } else {
            Layer::Unit
        }
    }

    /// Inputs shaped like what the regexes see: every literal of them in
    /// three cases, between the characters their boundaries test, and
    /// every line, word and whole file of the recorded fixtures.
    fn classified_inputs() -> Vec<String> {
        let words = [
            "e2e",
            "cypress",
            "playwright",
            "integration",
            "integration_test",
            "integration-tests",
            "integration_tests",
            "it",
            "IT",
            "tests/a.rs",
            "tests/a/main.rs",
            "tests/main.rs",
            "tests//x.rs",
            "connection refused",
            "ECONNRESET",
            "command not found",
            ": not found",
            "no such file or directory",
            "no such file or directory: chrome",
            "no such file or directory (docker)",
            "docker daemon",
            "auth",
            "passw",
            "data loss",
            "data_loss",
            "dataloss",
            "data-loss",
            "data  loss",
            "assert",
            "!==",
            "want ",
            "to equal",
            "but was",
            "segmentation fault",
            "SIGSEGV",
            "called `Option::unwrap()`",
            "called `Result::unwrap()`",
            "index out of range",
            "attempt to add with overflow",
            "attempt to shift left with overflow",
            "attempt to add\noverflow",
            "attempt to divide by zero",
            "Cannot read properties of null",
            "is not a function",
            "panic: ",
            "DeprecationWarning",
            "UserWarning: x",
            "warning",
            "Warnings",
            "_warning",
            "xfail",
            "XFAIL",
            "known issue",
            "FooIT",
            "fooIT.java",
            "fooIT.kt",
            "fooIT#m",
            "9IT",
            "ITx",
        ];
        let edges = [
            "", "/", "\\", "_", "-", ".", "a", "A", "1", " ", "\n", "#", "(", ":",
        ];
        let mut inputs = Vec::new();
        for w in words {
            for case in [w.to_string(), w.to_uppercase(), w.to_lowercase()] {
                for before in edges {
                    for after in edges {
                        inputs.push(format!("{before}{case}{after}"));
                        inputs.push(format!("x{before}{case}{after}.java"));
                        inputs.push(format!("{before}{case}{after}tests/x{before}{case}.rs"));
                    }
                }
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            for line in text.lines() {
                inputs.extend(line.split_whitespace().map(str::to_string));
                inputs.push(line.to_string());
            }
            inputs.push(text);
        }
        inputs
    }

    /// The hand-written `fast` functions match exactly what the regexes
    /// they stand for match, on every ASCII input; text with other
    /// characters goes to the regexes themselves.
    #[test]
    fn fast_paths_agree_with_the_regexes() {
        let inputs = classified_inputs();
        assert!(inputs.len() > 50_000, "{}", inputs.len());
        let mut checked = 0;
        for x in inputs.iter().filter(|x| x.is_ascii()) {
            checked += 1;
            assert_eq!(fast::layer(x), layer_by_regex(x), "layer of {x:?}");
            type Pair<'a> = (&'a LazyLock<Regex>, fn(&str) -> bool, &'a str);
            let pairs: [Pair; 5] = [
                (&ENVIRONMENT, fast::environment, "environment"),
                (&SENSITIVE, fast::sensitive, "sensitive"),
                (&ASSERTION, fast::assertion, "assertion"),
                (&CRASH, fast::crash, "crash"),
                (&WARNING, fast::warning, "warning"),
            ];
            for (re, quick, name) in pairs {
                assert_eq!(quick(x), re.is_match(x), "{name} of {x:?}");
            }
        }
        assert!(checked > 50_000, "{checked}");
    }

    /// The classifications of real-shaped names and failures, as the
    /// regexes gave them before the fast paths (issue #30), and for text
    /// that is not ASCII (the regexes' Unicode case folding: `K` is
    /// U+212A KELVIN SIGN, `ſ` U+017F).
    #[test]
    fn classifications_of_real_shaped_inputs() {
        let layers = [
            ("tests/test_m1.py::test_t100", Layer::Unit),
            ("tests/e2e/test_login.py::test_ok", Layer::E2e),
            ("src/app.e2e.spec.ts › logs in", Layer::E2e),
            ("cypress/integration/app.cy.js", Layer::E2e),
            ("tests/integration/test_db.py::test_q", Layer::Integration),
            ("src/test/java/com/x/UserServiceIT.java", Layer::Integration),
            ("com.x.UserServiceIT#savesUser", Layer::Integration),
            ("tests/cli.rs", Layer::Integration),
            ("tests/cli/main.rs", Layer::Integration),
            ("src/lib.rs", Layer::Unit),
            ("pkg/server_it.go", Layer::Integration),
            ("tests/ünit/x.py::t", Layer::Unit),
            ("tests/ÉE2E/x.py::t", Layer::Unit),
            ("tests/E2E/ü.py::t", Layer::E2e),
        ];
        for (path, layer) in layers {
            assert_eq!(layer_of_path(path), layer, "{path}");
        }
        let rows = [
            (
                "tests/test_m1.py::test_t0",
                "assert 0 == 1",
                "E   assert 0 == 1",
                Criticality::Medium,
            ),
            (
                "tests/test_auth.py::test_x",
                "assert 0 == 1",
                "",
                Criticality::High,
            ),
            ("t::tokens", "x", "", Criticality::High),
            (
                "t::x",
                "ConnectionRefusedError: [Errno 111] Connection refused",
                "",
                Criticality::Low,
            ),
            ("t::x", "sh: 1: chromium: not found", "", Criticality::Low),
            (
                "t::x",
                "Fatal Python error: Segmentation fault",
                "",
                Criticality::High,
            ),
            (
                "t::x",
                "assert x",
                "thread 'main' has overflowed its stack",
                Criticality::Medium,
            ),
            (
                "t::x",
                "boom",
                "attempt to add with overflow",
                Criticality::High,
            ),
            ("t::x", "DeprecationWarning: old", "", Criticality::Low),
            ("t::x", "XFAIL reason", "", Criticality::Low),
            ("t::x", "xfailed", "", Criticality::Medium),
            ("t::x", "strict xfail passed", "", Criticality::Low),
            ("t::checKout_ü", "boom", "", Criticality::High),
            ("t::paſsword_x", "boom", "", Criticality::High),
            ("t::x", "ſegmentation fault ü", "", Criticality::High),
            (
                "t::x",
                "ConnectionRefused: Connection refuſed",
                "",
                Criticality::Low,
            ),
        ];
        for (test, error, message, want) in rows {
            assert_eq!(
                judge(test, error, message),
                want,
                "{test} / {error} / {message}"
            );
        }
    }

    fn facts<'a>(exit: Option<i32>, tail: &'a str) -> RunFacts<'a> {
        RunFacts {
            command: "pytest".into(),
            framework: Framework::Pytest,
            scope: Scope::Full,
            exit_code: exit,
            timed_out_after: None,
            signal: None,
            duration_ms: 5,
            setup_ms: None,
            output_tail: tail,
            output_log: Some(".workflow/.cache/test-output.log".into()),
            truncated: false,
            started_at: None,
            previous: None,
            notes: Vec::new(),
        }
    }

    fn case(id: &str, status: Status) -> ParsedCase {
        ParsedCase {
            id: id.into(),
            status,
            error: if matches!(status, Status::Failed) {
                "AssertionError: assert 1 == 2".into()
            } else {
                String::new()
            },
            ..ParsedCase::default()
        }
    }

    fn run_of(cases: Vec<ParsedCase>) -> ParsedRun {
        ParsedRun {
            parser: "junit",
            cases,
            ..ParsedRun::default()
        }
    }

    /// Tails recorded from real runs (pytest 9.2.0 on a project without
    /// tests, exit 5; with a test file that cannot be imported, exit 2;
    /// jest 29 and vitest 3 without test files, exit 1; `go test ./...`
    /// 1.22 on a package without tests).
    #[test]
    fn a_run_that_found_no_tests_says_so_and_nothing_else_does() {
        let pytest_empty = "collected 0 items\n\n============================ no tests ran in 0.01s =============================\n";
        let pytest_broken = "ERROR tests/test_a.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=============================== 1 error in 0.98s ===============================\n";
        for (framework, exit, tail, want) in [
            (Framework::Pytest, Some(5), pytest_empty, true),
            (Framework::Pytest, Some(5), "", true),
            (Framework::Pytest, Some(2), pytest_broken, false),
            (
                Framework::Jest,
                Some(1),
                "No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n",
                true,
            ),
            (
                Framework::Vitest,
                Some(1),
                "No test files found, exiting with code 1\n",
                true,
            ),
            (
                Framework::Go,
                Some(1),
                "?   \texample.com/shop\t[no test files]\n",
                true,
            ),
            (
                Framework::Go,
                Some(1),
                "--- FAIL: TestX (0.00s)\nFAIL\texample.com/shop\t0.002s\n",
                false,
            ),
            (
                Framework::Custom,
                Some(1),
                "make: *** [check] Error 1\n",
                false,
            ),
        ] {
            let mut f = facts(exit, tail);
            f.framework = framework;
            let r = build(ParsedRun::default(), f);
            assert_eq!(found_no_tests(&r), want, "{framework:?} {exit:?} {tail}");
        }
        // Exit 0 and nothing parsed is "no tests found" as before.
        assert!(found_no_tests(&build(
            ParsedRun::default(),
            facts(Some(0), "")
        )));
    }

    #[test]
    fn zero_tests_with_failing_exit_is_an_execution_error() {
        let r = build(
            ParsedRun::default(),
            facts(Some(1), "collecting...\nsh: 1: pytest: not found\n"),
        );
        assert_eq!(r.parser, "exit-code");
        assert_eq!((r.total, r.passed, r.failed, r.errors), (0, 0, 0, 1));
        assert_eq!(r.pass_rate, 0.0);
        let f = &r.failures[0];
        assert_eq!(f.test, "pytest");
        assert_eq!(f.test_type, Layer::Static);
        assert_eq!(f.error, "sh: 1: pytest: not found");
        assert_eq!(f.message, "collecting...\nsh: 1: pytest: not found");
        assert_eq!(
            f.criticality,
            Criticality::Low,
            "a missing tool is environmental"
        );
        assert_eq!(r.layer_distribution.static_.failed, 1);

        let r = build(
            ParsedRun::new("junit"),
            facts(Some(2), "Traceback\nImportError: x\n"),
        );
        assert_eq!(r.parser, "exit-code");
        assert_eq!(r.failures[0].error, "ImportError: x");
        assert_eq!(r.failures[0].criticality, Criticality::High);

        let r = build(ParsedRun::default(), facts(None, ""));
        assert_eq!(r.failures[0].error, "ended without an exit code");
    }

    #[test]
    fn zero_tests_with_exit_zero_is_no_tests_found() {
        let r = build(
            ParsedRun::new("libtest"),
            facts(Some(0), "running 0 tests\n"),
        );
        assert_eq!(r.parser, "libtest");
        assert_eq!((r.total, r.errors), (0, 1));
        assert_eq!(r.failures[0].error, "no tests found");
        assert_ne!(r.pass_rate, 100.0);
        let r = build(run_of(vec![case("a", Status::Skipped)]), facts(Some(0), ""));
        assert_eq!(r.failures[0].error, "no tests ran (all were skipped)");
        assert_eq!((r.total, r.skipped, r.errors), (1, 1, 1));
    }

    #[test]
    fn failing_exit_with_all_tests_passed_is_not_a_pass() {
        let r = build(
            run_of(vec![case("a", Status::Passed)]),
            facts(Some(3), "coverage too low\n"),
        );
        assert_eq!((r.total, r.passed, r.errors), (1, 1, 1));
        assert_eq!(
            r.failures[0].error,
            "exited with code 3 although no test failed"
        );
        assert_eq!(r.pass_rate, 50.0);
    }

    #[test]
    fn timeout_keeps_parsed_cases_and_adds_an_error() {
        let mut f = facts(None, "test a ... ok\n");
        f.timed_out_after = Some(30);
        let r = build(run_of(vec![case("a", Status::Passed)]), f);
        assert_eq!((r.total, r.passed, r.errors), (1, 1, 1));
        assert_eq!(r.failures[0].error, "timed out after 30 s");
    }

    #[test]
    fn counts_and_pass_rate() {
        let mut parsed = run_of(vec![
            case("t/test_a.py::a", Status::Passed),
            case("t/test_a.py::b", Status::Passed),
            case("t/test_a.py::c", Status::Failed),
            case("t/test_a.py::d", Status::Error),
            case("t/test_a.py::e", Status::Skipped),
        ]);
        parsed.unnamed_skipped = 2;
        let r = build(parsed, facts(Some(1), ""));
        assert_eq!(
            (r.total, r.passed, r.failed, r.skipped, r.errors),
            (7, 2, 1, 3, 1)
        );
        assert_eq!(r.pass_rate, 50.0);
        assert_eq!(r.parser, "junit");
        assert_eq!(r.failures.len(), 2);
        assert_eq!(r.cases.len(), 5);
        assert_eq!(r.layer_distribution.unit.total, 5);
        assert_eq!(r.layer_distribution.unit.passed, 2);
        assert_eq!(r.layer_distribution.unit.failed, 2);
    }

    #[test]
    fn static_errors_count_as_errors_not_tests() {
        let mut parsed = ParsedRun::new("libtest");
        parsed.static_errors.push(ParsedCase {
            id: "src/lib.rs".into(),
            status: Status::Error,
            file: Some("src/lib.rs".into()),
            line: Some(28),
            error: "error[E0308]: mismatched types".into(),
            layer: Some(Layer::Static),
            ..ParsedCase::default()
        });
        let r = build(parsed, facts(Some(101), ""));
        assert_eq!(r.parser, "libtest");
        assert_eq!((r.total, r.errors, r.failures.len()), (0, 1, 1));
        assert_eq!(r.failures[0].criticality, Criticality::High);
        assert_eq!(r.failures[0].test_type, Layer::Static);
    }

    #[test]
    fn layers_by_path() {
        for (path, want) in [
            ("tests/test_ops.py::test_add", Layer::Unit),
            ("test/math.test.js › math › max", Layer::Unit),
            ("src/__tests__/a.js", Layer::Unit),
            ("tests/unit/test_x.py::t", Layer::Unit),
            ("tests/integration/test_api.py::t", Layer::Integration),
            ("src/api.integration.test.ts › x", Layer::Integration),
            ("tests/integration.rs", Layer::Integration),
            ("tests/cli/main.rs", Layer::Integration),
            ("src/lib.rs", Layer::Unit),
            ("e2e/login.spec.ts › logs in", Layer::E2e),
            ("app/checkout.e2e.test.js", Layer::E2e),
            ("cypress/integration/a.cy.js", Layer::E2e),
            ("playwright/home.spec.ts", Layer::E2e),
            ("calc.CalcIT#adds", Layer::Integration),
            ("calc.CalcTest#adds", Layer::Unit),
            ("tests/test_auth.py::test_password_needs_digit", Layer::Unit),
            ("src/it/ApiIT.java", Layer::Integration),
            ("example.com/m/integration/TestX", Layer::Integration),
        ] {
            assert_eq!(layer_of_path(path), want, "{path}");
        }
        assert_eq!(
            layer_for("divide_positive", Some("tests/integration.rs")),
            Layer::Integration
        );
        assert_eq!(
            layer_for("stats::tests::x", Some("src/lib.rs")),
            Layer::Unit
        );
        assert_eq!(layer_for("x", None), Layer::Unit);
    }

    fn judge(test: &str, error: &str, message: &str) -> Criticality {
        criticality(&Judged {
            test,
            file: None,
            error,
            message,
            layer: Layer::Unit,
            flaky: false,
            previously_passed: false,
        })
    }

    #[test]
    fn criticality_rules() {
        use Criticality::*;
        let assert_msg = "assertion `left == right` failed";
        for (test, error, message, want) in [
            (
                "stats::tests::mean_of_three",
                assert_msg,
                "thread 'x' panicked at src/stats.rs:28:9:",
                Medium,
            ),
            (
                "tests/test_auth.py::test_validate_token",
                "AssertionError: assert False is True",
                "",
                High,
            ),
            (
                "tests/test_pay.py::test_refund_total",
                "AssertionError",
                "",
                High,
            ),
            (
                "tests/test_ops.py::test_divide_by_zero_returns_none",
                "ZeroDivisionError: division by zero",
                "",
                High,
            ),
            (
                "a::b",
                "called `Option::unwrap()` on a `None` value",
                "",
                High,
            ),
            ("k a::crash", "test process ended by SIGSEGV", "", High),
            (
                "test/api.test.js › fetch",
                "Error: connect ECONNREFUSED 127.0.0.1:5432",
                "",
                Low,
            ),
            (
                "tests/test_x.py::test_w",
                "DeprecationWarning: old api",
                "",
                Low,
            ),
            (
                "test/m.test.js › m › max",
                "Error: expect(received).toBe(expected)",
                "",
                Medium,
            ),
            (
                "calc.CalcTest#findsTheMax",
                "org.opentest4j.AssertionFailedError: expected: <9> but was: <3>",
                "",
                Medium,
            ),
        ] {
            assert_eq!(judge(test, error, message), want, "{test}: {error}");
        }
        let base = Judged {
            test: "a",
            file: None,
            error: "assert 1 == 2",
            message: "",
            layer: Layer::Unit,
            flaky: false,
            previously_passed: true,
        };
        assert_eq!(criticality(&base), High, "passed last run, fails now");
        assert_eq!(
            criticality(&Judged {
                flaky: true,
                ..base.clone()
            }),
            Low
        );
        assert_eq!(
            criticality(&Judged {
                previously_passed: false,
                layer: Layer::Static,
                ..base
            }),
            High
        );
    }

    #[test]
    fn previous_pass_makes_a_failure_high() {
        let prev = build(
            run_of(vec![case("a", Status::Passed), case("b", Status::Failed)]),
            facts(Some(1), ""),
        );
        let mut f = facts(Some(1), "");
        f.previous = Some(&prev);
        let r = build(
            run_of(vec![case("a", Status::Failed), case("b", Status::Failed)]),
            f,
        );
        let crit: Vec<_> = r
            .failures
            .iter()
            .map(|f| (f.test.as_str(), f.criticality))
            .collect();
        assert_eq!(
            crit,
            vec![("a", Criticality::High), ("b", Criticality::Medium)]
        );
    }

    #[test]
    fn merge_keeps_untouched_tests_and_updates_rerun_ones() {
        let full = build(
            run_of(vec![
                case("a", Status::Passed),
                case("b", Status::Failed),
                case("c", Status::Failed),
                case("d", Status::Skipped),
            ]),
            facts(Some(1), ""),
        );
        let mut sf = facts(Some(1), "");
        sf.command = "pytest b c".into();
        sf.scope = Scope::Affected;
        let subset = build(
            run_of(vec![
                case("b", Status::Passed),
                case("c", Status::Failed),
                case("a", Status::Skipped),
                case("new", Status::Passed),
            ]),
            sf,
        );
        let m = merge(&full, &subset);
        assert_eq!(m.scope, Scope::Affected);
        assert_eq!(m.command, "pytest b c");
        assert_eq!(
            (m.total, m.passed, m.failed, m.skipped, m.errors),
            (5, 3, 1, 1, 0)
        );
        assert_eq!(m.pass_rate, 75.0);
        let st: Vec<_> = m
            .cases
            .iter()
            .map(|c| (c.test.as_str(), c.status))
            .collect();
        assert_eq!(
            st,
            vec![
                ("a", CaseStatus::Passed),
                ("b", CaseStatus::Passed),
                ("c", CaseStatus::Failed),
                ("d", CaseStatus::Skipped),
                ("new", CaseStatus::Passed),
            ]
        );
        assert_eq!(failing_ids(&m), vec!["c"]);
        assert_eq!(m.layer_distribution.unit.total, 5);
    }

    #[test]
    fn merge_takes_static_errors_from_the_subset_only() {
        let full = build(run_of(vec![case("a", Status::Failed)]), facts(Some(1), ""));
        let subset = build(
            ParsedRun::default(),
            facts(Some(101), "error: could not compile\n"),
        );
        let m = merge(&full, &subset);
        assert_eq!((m.total, m.failed, m.errors), (1, 1, 1));
        assert_eq!(m.failures[0].test_type, Layer::Static);
        assert_eq!(m.failures[1].test, "a");
    }

    #[test]
    fn flaky_failures_are_marked_low() {
        let mut full = build(
            run_of(vec![
                case("a", Status::Failed),
                case("b", Status::Failed),
                case("c", Status::Passed),
            ]),
            facts(Some(1), ""),
        );
        let rerun = build(
            run_of(vec![case("a", Status::Passed), case("b", Status::Failed)]),
            facts(Some(1), ""),
        );
        assert_eq!(mark_flaky(&mut full, &rerun), vec!["a"]);
        assert!(full.failures[0].flaky);
        assert_eq!(full.failures[0].criticality, Criticality::Low);
        assert!(!full.failures[1].flaky);
        assert_eq!(full.pass_rate, 33.3);
        assert_eq!(pass_rate_without_flaky(&full), 66.6);
    }
}
