//! Parsers for what test runners write: one pure parser per format, each
//! turning text (or a structured report) into a [`ParsedRun`]. Totals are
//! always counted from the test cases found, never copied from a summary.
//!
//! Text formats (libtest, nextest, TAP, `go test -json`) are line parsers
//! ([`LineParser`]) so the runner can stream a log of any size through them
//! with bounded memory; `parse(&str)` is the convenience form.

pub mod gotest;
pub mod jest;
pub mod junit;
pub mod libtest;
pub mod nextest;
pub mod tap;

use std::sync::LazyLock;

use regex::Regex;

use crate::artifacts::test_results::{CaseStatus, Layer};
use crate::project::{LazyRegex, compile, re};

/// Longest message excerpt kept per failure, in bytes.
pub const MESSAGE_MAX: usize = 4000;
/// Most lines kept per failure message.
pub const MESSAGE_MAX_LINES: usize = 60;

/// One test case (or one static error) as a parser found it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedCase {
    /// The id the runner accepts to re-run just this test (DESIGN.md §3).
    pub id: String,
    pub status: Status,
    /// Where the failure happened when the output says so; otherwise the
    /// test's own source file when known. Relative to the project root once
    /// [`ParsedRun::relativize`] ran.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// First line of the error.
    pub error: String,
    /// Bounded excerpt of the failure output.
    pub message: String,
    /// Layer when the format tells it (libtest target, nextest binary kind);
    /// otherwise judged from the path.
    pub layer: Option<Layer>,
    /// The runner itself saw it fail and then pass on a retry.
    pub flaky: bool,
}

/// Status of a parsed case; mirrors [`CaseStatus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Status {
    #[default]
    Passed,
    Failed,
    Error,
    Skipped,
}

impl From<Status> for CaseStatus {
    fn from(s: Status) -> CaseStatus {
        match s {
            Status::Passed => CaseStatus::Passed,
            Status::Failed => CaseStatus::Failed,
            Status::Error => CaseStatus::Error,
            Status::Skipped => CaseStatus::Skipped,
        }
    }
}

impl From<CaseStatus> for Status {
    fn from(s: CaseStatus) -> Status {
        match s {
            CaseStatus::Passed => Status::Passed,
            CaseStatus::Failed => Status::Failed,
            CaseStatus::Error => Status::Error,
            CaseStatus::Skipped => Status::Skipped,
        }
    }
}

/// Everything one parser found in one run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedRun {
    /// Which parser produced this (`junit`, `libtest`, `nextest`, `tap`,
    /// `gotest`, `jest-json`).
    pub parser: &'static str,
    pub cases: Vec<ParsedCase>,
    /// Build, compile and collection errors: not test cases (they do not
    /// count in `total`) but each is an error with `test_type: static`.
    pub static_errors: Vec<ParsedCase>,
    /// Skipped tests the output counts but never names (nextest's
    /// `(1 test skipped)`).
    pub unnamed_skipped: u32,
}

impl ParsedRun {
    pub fn new(parser: &'static str) -> ParsedRun {
        ParsedRun {
            parser,
            ..ParsedRun::default()
        }
    }

    /// Nothing at all was recognised.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty() && self.static_errors.is_empty() && self.unnamed_skipped == 0
    }

    pub fn count(&self, status: Status) -> usize {
        self.cases.iter().filter(|c| c.status == status).count()
    }

    /// Make paths relative to `root`: the root prefix is removed from ids,
    /// files and messages, and a file that stays absolute (outside the
    /// project) is dropped so that no absolute path reaches an artifact.
    pub fn relativize(&mut self, root: &str) {
        let root = root.trim_end_matches('/');
        if root.is_empty() {
            return;
        }
        let prefix = format!("{root}/");
        let finder = memchr::memmem::Finder::new(prefix.as_bytes());
        let fix = |s: &mut String| {
            if finder.find(s.as_bytes()).is_some() {
                *s = s.replace(&prefix, "");
            }
        };
        for case in self.cases.iter_mut().chain(self.static_errors.iter_mut()) {
            fix(&mut case.id);
            fix(&mut case.error);
            fix(&mut case.message);
            if let Some(file) = case.file.as_mut() {
                fix(file);
                if let Some(rest) = file.strip_prefix("./") {
                    *file = rest.to_string();
                }
                if file.starts_with('/') {
                    case.file = None;
                    case.line = None;
                }
            }
        }
    }
}

/// A text parser fed one line at a time (without the line ending).
pub trait LineParser {
    fn line(&mut self, line: &str);
    fn finish(self: Box<Self>) -> ParsedRun;
}

/// Feed every line of `text` to a parser.
pub fn feed(mut parser: Box<dyn LineParser>, text: &str) -> ParsedRun {
    for line in text.lines() {
        parser.line(line);
    }
    parser.finish()
}

/// Which text format an output looks like, judged from its first lines (the
/// head the process layer keeps). `None` → exit-code fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Libtest,
    Nextest,
    Tap,
    GoJson,
}

impl TextFormat {
    pub fn parser(self, go_module: Option<&str>) -> Box<dyn LineParser> {
        match self {
            TextFormat::Libtest => Box::new(libtest::Parser::default()),
            TextFormat::Nextest => Box::new(nextest::Parser::default()),
            TextFormat::Tap => Box::new(tap::Parser::default()),
            TextFormat::GoJson => Box::new(gotest::Parser::new(go_module)),
        }
    }
}

/// Guess the format of an output from its text (head and tail are enough).
pub fn sniff(text: &str) -> Option<TextFormat> {
    let nextest = re!(r"(?m)^\s*(Starting \d+ tests? across \d+ binar|Summary \[)");
    let libtest =
        re!(r"(?m)^(test .+ \.\.\. (ok|FAILED|ignored)|running \d+ tests?$|test result: )");
    let tap = re!(r"(?m)^(TAP version \d+|\s*(not )?ok \d+( |$)|1\.\.\d+$)");
    let gojson = re!(r#"(?m)^\{"Time":"[^"]*","Action":""#);
    let text = strip_ansi(text);
    if gojson.is_match(&text) {
        Some(TextFormat::GoJson)
    } else if nextest.is_match(&text) {
        Some(TextFormat::Nextest)
    } else if libtest.is_match(&text) {
        Some(TextFormat::Libtest)
    } else if tap.is_match(&text) {
        Some(TextFormat::Tap)
    } else {
        None
    }
}

/// Remove ANSI escape sequences (colours, cursor moves).
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\x1b') {
        // Built only here: most output has no escape at all.
        re!(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])").replace_all(s, "")
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Longest value kept from an expected/actual pair in an error line.
const VALUE_MAX: usize = 120;

/// The one line that explains a failure: the first non-empty line of
/// `text`, and when that line only introduces what follows (node's
/// `Expected values to be strictly equal:`, jest's `expect(received)…`,
/// Rust's ``assertion `left == right` failed``, any line ending in `:`),
/// the actual and expected values printed after it, so that `wfx test`,
/// the results file and the analysis show what differed (DESIGN.md §10.7).
pub fn error_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return String::new();
    };
    let rest: Vec<&str> = lines.take(40).collect();
    match values_after(first, &rest) {
        Some(values) if first.ends_with(':') => format!("{first} {values}"),
        Some(values) => format!("{first}: {values}"),
        None => first.to_string(),
    }
}

/// The actual/expected values printed after a lead-in line, in one short
/// phrase; `None` when the lead-in already says it all.
fn values_after(first: &str, rest: &[&str]) -> Option<String> {
    let node_inline = re!(r"^\S.* (!==|!=|===|==) \S.*$");
    let short = |s: &str| {
        let s = s.trim();
        if s.len() <= VALUE_MAX {
            return s.to_string();
        }
        let mut end = VALUE_MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    };
    let value = |prefix: &str| rest.iter().find_map(|l| l.strip_prefix(prefix)).map(&short);
    let is_frame = |l: &str| l.starts_with("at ") || l.contains("node:internal");
    let lead_in = first.ends_with(':')
        || first.contains("expect(")
        || first.contains("assertion `left")
        || first.contains("assertion failed: `(left");
    if !lead_in {
        return None;
    }
    // jest / expect: `Expected: 9` and `Received: 3`.
    if let (Some(e), Some(r)) = (value("Expected: "), value("Received: ")) {
        return Some(format!("expected {e}, received {r}"));
    }
    // Rust assert_eq!: `left: 3.0` and `right: 2.0`.
    if let (Some(l), Some(r)) = (value("left: "), value("right: ")) {
        return Some(format!("left {l}, right {r}"));
    }
    // node assert: `+ actual - expected` then `+ <actual>` and `- <expected>`
    // lines (the first pair that is not just a bracket of a larger diff).
    if rest.contains(&"+ actual - expected") {
        let pick = |sign: &str| {
            rest.iter()
                .filter(|l| **l != "+ actual - expected")
                .filter_map(|l| l.strip_prefix(sign))
                .map(str::trim)
                .find(|v| !v.is_empty() && !matches!(*v, "{" | "}" | "[" | "]" | "},"))
                .map(short)
        };
        if let (Some(a), Some(e)) = (pick("+ "), pick("- ")) {
            return Some(format!("{a} !== {e}"));
        }
    }
    // node assert on primitives: `3 !== 9` on its own line.
    if let Some(l) = rest
        .iter()
        .take(5)
        .find(|l| node_inline.is_match(l) && !is_frame(l))
    {
        return Some(short(l));
    }
    // Any other lead-in ending in `:`: the line that follows it.
    if first.ends_with(':') {
        return rest
            .first()
            .filter(|l| !is_frame(l) && frame_free(l))
            .map(|l| short(l));
    }
    None
}

/// No `file:line` location in the line (it is a value, not a stack frame).
fn frame_free(line: &str) -> bool {
    locations(line).is_empty()
}

/// A bounded excerpt: at most [`MESSAGE_MAX`] bytes and
/// [`MESSAGE_MAX_LINES`] lines, cut on a character boundary, with a marker
/// when something was dropped.
pub fn excerpt(s: &str) -> String {
    let s = s.trim_matches(|c| c == '\n' || c == '\r');
    let mut out = String::new();
    let mut cut = false;
    for (i, line) in s.lines().enumerate() {
        if i >= MESSAGE_MAX_LINES || out.len() + line.len() + 1 > MESSAGE_MAX {
            if i < MESSAGE_MAX_LINES && out.len() < MESSAGE_MAX {
                let room = MESSAGE_MAX - out.len();
                let mut end = room.min(line.len());
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&line[..end]);
            }
            cut = true;
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    if cut {
        out.push_str("\n[…]");
    }
    out
}

/// Collects a failure message line by line and stops growing at the bound.
#[derive(Debug, Default, Clone)]
pub struct Bounded {
    text: String,
    lines: usize,
    full: bool,
}

impl Bounded {
    pub fn push_line(&mut self, line: &str) {
        if self.full {
            return;
        }
        if self.lines >= MESSAGE_MAX_LINES || self.text.len() + line.len() + 1 > MESSAGE_MAX {
            self.full = true;
            return;
        }
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_excerpt(self) -> String {
        let mut s = self.text.trim_matches('\n').to_string();
        if self.full {
            s.push_str("\n[…]");
        }
        s
    }
}

/// A `file:line` location found in failure text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u32,
}

/// Paths that are never the project's own code.
fn foreign(path: &str) -> bool {
    const NOT_OURS: &[&str] = &[
        "node_modules/",
        "site-packages/",
        "dist-packages/",
        "lib/python3",
        "/rustc/",
        ".cargo/registry",
        "/usr/lib/",
        "/usr/local/lib/",
        "<frozen",
    ];
    NOT_OURS.iter().any(|p| path.contains(p)) || path.starts_with("node:")
}

/// Every `path:line[:col]` (or Python's `File "path", line N`) in `text`,
/// in order, skipping paths that belong to dependencies or the runtime.
/// ES-module stack frames print `file://` URLs; the path inside counts.
pub fn locations(text: &str) -> Vec<Location> {
    let loc = re!(
        r#"(?:^|[\s(\[`'"❯>])(?:file://)?((?:[A-Za-z]:)?[\w.@~+/-]*[\w@~+-]\.[A-Za-z][A-Za-z0-9]{0,5}):(\d+)(?::\d+)?"#
    );
    let mut found: Vec<(usize, Location)> = Vec::new();
    // The Python form cannot match without its literal start: it is
    // compiled only for text that has one.
    let regexes: &[&LazyRegex] = if text.contains("File \"") {
        &[loc, re!(r#"File "([^"]+)", line (\d+)"#)]
    } else {
        &[loc]
    };
    for re in regexes {
        for cap in re.captures_iter(text) {
            let (Some(path), Some(line)) = (cap.get(1), cap.get(2)) else {
                continue;
            };
            let Ok(line_no) = line.as_str().parse::<u32>() else {
                continue;
            };
            let file = path.as_str().trim_start_matches("./");
            if foreign(file) || file.contains("://") {
                continue;
            }
            found.push((
                path.start(),
                Location {
                    file: file.to_string(),
                    line: line_no,
                },
            ));
        }
    }
    found.sort_by_key(|(pos, _)| *pos);
    found.into_iter().map(|(_, l)| l).collect()
}

/// The location to report for a failure: the first one in `prefer` (the
/// test's own file) when given and present, else the first relative one,
/// else the first at all.
pub fn best_location(text: &str, prefer: Option<&str>) -> Option<Location> {
    let all = locations(text);
    if let Some(p) = prefer.filter(|p| !p.is_empty()) {
        let p = p.trim_start_matches("./");
        if let Some(l) = all.iter().find(|l| {
            l.file == p
                || l.file.ends_with(&format!("/{p}"))
                || p.ends_with(&format!("/{}", l.file))
        }) {
            return Some(l.clone());
        }
    }
    all.iter()
        .find(|l| !l.file.starts_with('/'))
        .or(all.first())
        .cloned()
}

/// A Rust panic header: `thread 'name' (123) panicked at src/x.rs:1:2:`
/// (Rust ≥ 1.73) or `thread 'name' panicked at 'msg', src/x.rs:1:2`.
pub struct Panic {
    pub location: Option<Location>,
    /// The panic message's first line, when on the header line (old form).
    pub inline_message: Option<String>,
}

pub fn parse_panic(line: &str) -> Option<Panic> {
    static NEW: LazyLock<Regex> = LazyLock::new(|| {
        compile(r"^\s*thread '.*?'(?: \(\d+\))? panicked at (\S+?):(\d+):(\d+):\s*$")
    });
    static OLD: LazyLock<Regex> = LazyLock::new(|| {
        compile(r"^\s*thread '.*?'(?: \(\d+\))? panicked at '(.*)', (\S+?):(\d+):(\d+)\s*$")
    });
    // Neither form matches without this literal; most lines lack it, and
    // the regexes are then never compiled.
    if !line.contains(" panicked at ") {
        return None;
    }
    if let Some(c) = NEW.captures(line) {
        return Some(Panic {
            location: Some(Location {
                file: c[1].to_string(),
                line: c[2].parse().ok()?,
            }),
            inline_message: None,
        });
    }
    if let Some(c) = OLD.captures(line) {
        return Some(Panic {
            location: Some(Location {
                file: c[2].to_string(),
                line: c[3].parse().ok()?,
            }),
            inline_message: Some(c[1].to_string()),
        });
    }
    None
}

/// From Rust test output: the panic location and the panic message's
/// [`error_line`] (from the lines after the header), if there is a panic.
pub fn rust_panic(text: &str) -> Option<(Option<Location>, String)> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(p) = parse_panic(line) {
            let message = match p.inline_message {
                Some(m) => m,
                None => error_line(&lines.by_ref().take(40).collect::<Vec<_>>().join("\n")),
            };
            return Some((p.location, message));
        }
    }
    None
}

/// A `#[should_panic]` test that returned normally, as libtest notes it
/// (`note: test did not panic as expected at src/lib.rs:32:8`, the test's
/// own line): its location and the note.
pub fn did_not_panic(text: &str) -> Option<(Option<Location>, String)> {
    let note = re!(r"(test did not panic as expected)(?: at (\S+?):(\d+):\d+)?");
    if !text.contains("test did not panic as expected") {
        return None;
    }
    let c = text.lines().find_map(|l| note.captures(l))?;
    let location = match (c.get(2), c.get(3).and_then(|n| n.as_str().parse().ok())) {
        (Some(file), Some(line)) => Some(Location {
            file: file.as_str().trim_start_matches("./").to_string(),
            line,
        }),
        _ => None,
    };
    Some((location, c[1].to_string()))
}

/// Rustc/cargo build errors seen in cargo and nextest output. Only kept
/// when cargo says it could not compile something, so `error:` lines a
/// test prints do not become build errors.
#[derive(Debug, Default)]
pub struct CompileErrors {
    diagnostics: Vec<(String, Option<Location>, Bounded)>,
    current: Option<usize>,
    failed_crates: Vec<String>,
}

impl CompileErrors {
    /// Feed one line; returns true when the line belonged to a diagnostic.
    pub fn line(&mut self, line: &str) -> bool {
        static ERROR: LazyLock<Regex> = LazyLock::new(|| compile(r"^error(\[E\d+\])?: (.*)$"));
        let arrow = re!(r"^\s*--> (\S+?):(\d+):(\d+)\s*$");
        let krate = re!(r"^error: could not compile `([^`]+)`(?: \(([^)]+)\))?");
        if let Some(c) = krate.captures(line) {
            let name = match c.get(2) {
                Some(kind) => format!("{} ({})", &c[1], kind.as_str()),
                None => c[1].to_string(),
            };
            self.failed_crates.push(name);
            self.current = None;
            return true;
        }
        if let Some(c) = ERROR.captures(line) {
            let msg = &c[2];
            let cargo_summary = msg.starts_with("test failed")
                || msg.starts_with("doctest failed")
                || msg.contains("targets failed")
                || msg.starts_with("build failed")
                || msg.starts_with("test run failed")
                || msg.starts_with("aborting due to")
                || msg.starts_with("Recipe `");
            if cargo_summary {
                self.current = None;
                return false;
            }
            let mut body = Bounded::default();
            body.push_line(line);
            self.diagnostics.push((line.to_string(), None, body));
            self.current = Some(self.diagnostics.len() - 1);
            return true;
        }
        if line.starts_with("warning") || line.starts_with("For more information") {
            self.current = None;
            return false;
        }
        let Some(i) = self.current else {
            return false;
        };
        if line.trim().is_empty() {
            self.current = None;
            return true;
        }
        let diag = &mut self.diagnostics[i];
        if diag.1.is_none()
            && let Some(c) = arrow.captures(line)
        {
            diag.1 = Some(Location {
                file: c[1].to_string(),
                line: c[2].parse().unwrap_or(0),
            });
        }
        diag.2.push_line(line);
        true
    }

    /// One static error per source file with compile errors (or per crate
    /// when no location was printed). Empty unless cargo reported a build
    /// failure.
    pub fn finish(self) -> Vec<ParsedCase> {
        if self.failed_crates.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<ParsedCase> = Vec::new();
        for (header, loc, body) in self.diagnostics {
            let id = loc.as_ref().map(|l| l.file.clone());
            if let Some(existing) = id
                .as_ref()
                .and_then(|id| out.iter_mut().find(|c| &c.id == id))
            {
                if existing.message.len() < MESSAGE_MAX {
                    existing.message = excerpt(&format!("{}\n\n{}", existing.message, body.text()));
                }
                continue;
            }
            let Some(loc) = loc else { continue };
            out.push(ParsedCase {
                id: loc.file.clone(),
                status: Status::Error,
                file: Some(loc.file),
                line: Some(loc.line),
                error: header,
                message: body.into_excerpt(),
                layer: Some(Layer::Static),
                flaky: false,
            });
        }
        if out.is_empty() {
            let mut seen = Vec::new();
            for krate in self.failed_crates {
                let base = krate.split(" (").next().unwrap_or(&krate).to_string();
                if seen.contains(&base) {
                    continue;
                }
                seen.push(base.clone());
                out.push(ParsedCase {
                    id: base,
                    status: Status::Error,
                    error: format!("error: could not compile `{krate}`"),
                    layer: Some(Layer::Static),
                    ..ParsedCase::default()
                });
            }
        }
        out
    }
}

/// (id, status) of every case, sorted by id (runners print in the order
/// tests finish) (tests only).
#[cfg(test)]
pub(crate) fn statuses(run: &ParsedRun) -> Vec<(&str, Status)> {
    let mut v: Vec<_> = run
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.status))
        .collect();
    v.sort_by_key(|(id, _)| *id);
    v
}

/// (id, file, line, error) of the failed cases, in order (tests only).
#[cfg(test)]
pub(crate) fn failed(run: &ParsedRun) -> Vec<(&str, Option<&str>, Option<u32>, &str)> {
    run.cases
        .iter()
        .filter(|c| c.status == Status::Failed)
        .map(|c| (c.id.as_str(), c.file.as_deref(), c.line, c.error.as_str()))
        .collect()
}

/// The ids of the cases with `status`, in order (tests only).
#[cfg(test)]
pub(crate) fn ids(run: &ParsedRun, status: Status) -> Vec<&str> {
    run.cases
        .iter()
        .filter(|c| c.status == status)
        .map(|c| c.id.as_str())
        .collect()
}

/// The path of a fixture under `fixtures/outputs/` (tests only).
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/outputs")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_skip_runtime_and_dependency_frames() {
        let text = "at Object.toBe (test/math.test.js:13:28)\n\
                    at Promise (node_modules/jest-circus/build/x.js:1:2)\n\
                    Test.run (node:internal/test_runner/test:796:25)\n\
                    File \"/usr/lib/python3.11/x.py\", line 3\n\
                    calc/ops.py:10: ZeroDivisionError";
        let locs = locations(text);
        assert_eq!(
            locs,
            vec![
                Location {
                    file: "test/math.test.js".into(),
                    line: 13
                },
                Location {
                    file: "calc/ops.py".into(),
                    line: 10
                },
            ]
        );
    }

    #[test]
    fn best_location_prefers_the_tests_own_file() {
        let text = "tests/test_ops.py:15: \n_ _ _\ncalc/ops.py:10: ZeroDivisionError";
        let l = best_location(text, Some("tests/test_ops.py")).unwrap();
        assert_eq!((l.file.as_str(), l.line), ("tests/test_ops.py", 15));
        let l = best_location(text, Some("calc/ops.py")).unwrap();
        assert_eq!((l.file.as_str(), l.line), ("calc/ops.py", 10));
        let l = best_location("at x (/abs/a.js:1:1) at y (rel/b.js:2:2)", None).unwrap();
        assert_eq!((l.file.as_str(), l.line), ("rel/b.js", 2));
    }

    #[test]
    fn a_should_panic_test_that_returned_is_noted_with_its_line() {
        let text = "running 1 test\ntest tests::x - should panic ... FAILED\n\nfailures:\n\n---- tests::x stdout ----\nnote: test did not panic as expected at src/lib.rs:32:8\n";
        let (loc, msg) = did_not_panic(text).unwrap();
        assert_eq!(msg, "test did not panic as expected");
        let loc = loc.unwrap();
        assert_eq!((loc.file.as_str(), loc.line), ("src/lib.rs", 32));
        assert!(did_not_panic("test result: ok").is_none());
    }

    #[test]
    fn error_lines_keep_expected_and_actual() {
        for (text, want) in [
            // node assert, strings (recorded: analyzer/node-luxon.tap.txt)
            (
                "Expected values to be strictly equal:\n+ actual - expected\n\n+ 'Hllo'\n- 'Hello'\n",
                "Expected values to be strictly equal: 'Hllo' !== 'Hello'",
            ),
            // node assert, numbers (node-tap.txt)
            (
                "Expected values to be strictly equal:\n\n3 !== 9\n",
                "Expected values to be strictly equal: 3 !== 9",
            ),
            // node deep-equal diffs skip the brackets
            (
                "Expected values to be strictly deep-equal:\n+ actual - expected\n\n  [\n+   1\n-   2\n  ]\n",
                "Expected values to be strictly deep-equal: 1 !== 2",
            ),
            // jest (jest.json)
            (
                "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 9\nReceived: 3\n\n    at Object.toBe (test/math.test.js:13:28)",
                "Error: expect(received).toBe(expected) // Object.is equality: expected 9, received 3",
            ),
            // Rust assert_eq! (cargo-test.txt)
            (
                "assertion `left == right` failed\n  left: 3.0\n right: 2.0\n",
                "assertion `left == right` failed: left 3.0, right 2.0",
            ),
            // a lead-in followed by a stack frame keeps the lead-in alone
            (
                "Error: failed:\n    at f (src/a.js:1:2)\n",
                "Error: failed:",
            ),
            (
                "AssertionError: assert 3 == 9\nmore",
                "AssertionError: assert 3 == 9",
            ),
            (
                "\n\n  ZeroDivisionError: division by zero  \n",
                "ZeroDivisionError: division by zero",
            ),
            ("", ""),
        ] {
            assert_eq!(error_line(text), want, "{text:?}");
        }
        let long = format!(
            "Expected values to be strictly equal:\n\n{} !== 1\n",
            "9".repeat(500)
        );
        assert!(error_line(&long).len() < 200);
    }

    #[test]
    fn esm_file_urls_are_locations() {
        let l = best_location(
            "TestContext.<anonymous> (file:///p/root/test/a.test.js:6:10)\nTest.run (node:internal/test_runner/test:796:25)",
            Some("/p/root/test/a.test.js"),
        )
        .unwrap();
        assert_eq!((l.file.as_str(), l.line), ("/p/root/test/a.test.js", 6));
    }

    #[test]
    fn excerpt_is_bounded_on_char_boundaries() {
        let long = "é".repeat(MESSAGE_MAX);
        let e = excerpt(&long);
        assert!(e.len() <= MESSAGE_MAX + 8, "{}", e.len());
        assert!(e.ends_with("[…]"));
        let many: String = (0..200).map(|i| format!("line {i}\n")).collect();
        assert_eq!(excerpt(&many).lines().count(), MESSAGE_MAX_LINES + 1);
        assert_eq!(excerpt("a\nb\n"), "a\nb");
    }

    #[test]
    fn panics_new_and_old_forms() {
        let (loc, msg) = rust_panic(
            "\nthread 'a::b' (12324) panicked at src/stats.rs:28:9:\nassertion `left == right` failed\n",
        )
        .unwrap();
        assert_eq!(
            loc.unwrap(),
            Location {
                file: "src/stats.rs".into(),
                line: 28
            }
        );
        assert_eq!(msg, "assertion `left == right` failed");
        let (loc, msg) = rust_panic("thread 'x' panicked at 'boom', src/lib.rs:3:5").unwrap();
        assert_eq!(loc.unwrap().line, 3);
        assert_eq!(msg, "boom");
    }

    #[test]
    fn sniff_recognises_every_text_fixture() {
        for (file, want) in [
            ("cargo-test.txt", Some(TextFormat::Libtest)),
            ("cargo-test-fail-fast.txt", Some(TextFormat::Libtest)),
            ("nextest.txt", Some(TextFormat::Nextest)),
            ("node-tap.txt", Some(TextFormat::Tap)),
            ("go-test.json", Some(TextFormat::GoJson)),
            ("pytest-console.txt", None),
            ("pytest-collect-error-console.txt", None),
            ("jest-console.txt", None),
            ("vitest-console.txt", None),
            ("node-spec.txt", None),
            ("maven-surefire-console.txt", None),
        ] {
            assert_eq!(sniff(&fixture(file)), want, "{file}");
        }
    }

    #[test]
    fn relativize_strips_root_and_drops_outside_paths() {
        let mut run = ParsedRun::new("x");
        run.cases.push(ParsedCase {
            id: "/p/root/test/a.test.js › t".into(),
            file: Some("/p/root/test/a.test.js".into()),
            line: Some(3),
            message: "at (/p/root/test/a.test.js:3:1)".into(),
            ..ParsedCase::default()
        });
        run.cases.push(ParsedCase {
            id: "t2".into(),
            file: Some("/usr/lib/x.js".into()),
            line: Some(1),
            ..ParsedCase::default()
        });
        run.relativize("/p/root/");
        assert_eq!(run.cases[0].id, "test/a.test.js › t");
        assert_eq!(run.cases[0].file.as_deref(), Some("test/a.test.js"));
        assert_eq!(run.cases[0].message, "at (test/a.test.js:3:1)");
        assert_eq!((run.cases[1].file.clone(), run.cases[1].line), (None, None));
    }
}
