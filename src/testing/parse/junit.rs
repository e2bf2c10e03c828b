//! JUnit XML as real tools write it: pytest, jest-junit, vitest, nextest,
//! Maven Surefire (a bare `<testsuite>` root) and `node --test-reporter=junit`
//! (test cases directly under `<testsuites>`, nested suites). Every tool
//! names tests differently; the dialect is recognised from the report so
//! each id comes out in the form that tool accepts to re-run it.

use std::io::Cursor;

use super::tap::SEP;
use super::{ParsedCase, ParsedRun, Status, best_location, excerpt, rust_panic, strip_ansi};
use crate::artifacts::test_results::Layer;

/// The `name` of the root element of the reports wfx writes
/// (`ci::junit`), by which this parser knows its own reports.
pub const ROOT_NAME: &str = "wfx";

/// Which tool wrote a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Pytest,
    Nextest,
    JestJunit,
    Vitest,
    Node,
    /// wfx's own `--junit` reports (`<testsuites name="wfx">`): the case
    /// name is the test id, a failure's text starts with `at FILE:LINE`.
    Wfx,
    /// Surefire and anything else: `classname#name`.
    Generic,
}

/// Parse one JUnit XML document.
pub fn parse(xml: &str) -> Result<ParsedRun, String> {
    let wrapped = text_as_cdata(&wrap_root(xml));
    if suite_depth(&wrapped) > MAX_SUITE_DEPTH {
        return Err(format!(
            "invalid JUnit XML: test suites nested more than {MAX_SUITE_DEPTH} deep"
        ));
    }
    let doc = junit_parser::from_reader(Cursor::new(wrapped.as_bytes()))
        .map_err(|e| format!("invalid JUnit XML: {e}"))?;
    let dialect = dialect(&doc);
    let mut run = ParsedRun::new("junit");
    for suite in &doc.suites {
        // The wrapper added by `wrap_root` has no name: its children are
        // the real top level.
        let mut path = Vec::new();
        if suite.name != WRAPPER && !suite.name.is_empty() {
            path.push(suite.name.clone());
        }
        walk(suite, dialect, &mut path, &mut run);
    }
    Ok(run)
}

/// Parse several reports (one per file, as Surefire writes them) into one run.
pub fn parse_all<'a>(docs: impl IntoIterator<Item = &'a str>) -> Result<ParsedRun, String> {
    let mut all = ParsedRun::new("junit");
    for xml in docs {
        let run = parse(xml)?;
        all.cases.extend(run.cases);
        all.static_errors.extend(run.static_errors);
    }
    Ok(all)
}

/// Name of the suite `wrap_root` adds; never shown.
const WRAPPER: &str = "__wfx_root__";

/// Deepest nesting of `<testsuite>` elements read. Real reports nest a few
/// levels (one per describe block); junit-parser reads nested suites
/// recursively, so a report nested thousands deep would overflow the stack.
const MAX_SUITE_DEPTH: usize = 100;

/// How deep `<testsuite>` elements nest, counted the way junit-parser
/// recurses: a start tag named exactly `testsuite` goes one level down, an
/// end tag `</testsuite>` one up; CDATA and comments are skipped.
fn suite_depth(xml: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(off) = xml[i..].find('<') {
        let at = i + off;
        let rest = &xml[at..];
        let skip = |end: &str| rest.find(end).map_or(xml.len(), |e| at + e + end.len());
        if rest.starts_with("<![CDATA[") {
            i = skip("]]>");
            continue;
        }
        if rest.starts_with("<!--") {
            i = skip("-->");
            continue;
        }
        let Some(end) = tag_end(xml, at) else {
            break;
        };
        let tag = &xml[at + 1..end];
        fn name(t: &str) -> &str {
            t.split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or("")
        }
        if let Some(closing) = tag.strip_prefix('/') {
            if name(closing) == "testsuite" {
                depth = depth.saturating_sub(1);
            }
        } else if !tag.ends_with('/') && name(tag) == "testsuite" {
            depth += 1;
            max = max.max(depth);
        }
        i = end + 1;
    }
    max
}

/// junit-parser drops `<testcase>`s that sit directly under `<testsuites>`
/// (node's reporter puts top-level tests there); wrapping the root's content
/// in one extra `<testsuite>` keeps them.
fn wrap_root(xml: &str) -> String {
    let Some(start) = find_root_start(xml) else {
        return xml.to_string();
    };
    let Some(close) = tag_end(xml, start) else {
        return xml.to_string();
    };
    if xml[..close].ends_with('/') {
        return xml.to_string();
    }
    match xml.rfind("</testsuites>") {
        Some(end) if end > close => format!(
            "{}<testsuite name=\"{WRAPPER}\">{}</testsuite>{}",
            &xml[..=close],
            &xml[close + 1..end],
            &xml[end..]
        ),
        _ => xml.to_string(),
    }
}

/// junit-parser (with quick-xml 0.42) drops entity references in element
/// text and splits the text around them (`thread &apos;x&apos;` → `thread`),
/// which loses the panic line of nextest and the `>` markers of pytest.
/// Rewriting every text node that holds an entity as an unescaped CDATA
/// section gives it the text in one piece.
fn text_as_cdata(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len() + 64);
    let mut i = 0;
    while i < xml.len() {
        let rest = &xml[i..];
        let skip_to = |end: &str| rest.find(end).map(|e| e + end.len()).unwrap_or(rest.len());
        let n = if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with('<') {
            tag_end(xml, i).map(|e| e + 1 - i).unwrap_or(rest.len())
        } else {
            let n = rest.find('<').unwrap_or(rest.len());
            let text = &rest[..n];
            if text.contains('&') {
                out.push_str("<![CDATA[");
                out.push_str(&unescape(text).replace("]]>", "]]]]><![CDATA[>"));
                out.push_str("]]>");
                i += n;
                continue;
            }
            n
        };
        out.push_str(&rest[..n]);
        i += n;
    }
    out
}

/// XML's five named entities and numeric character references.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        // Look for the `;` in the first bytes only: an entity is short, and
        // a byte window may end inside a multi-byte character.
        let window = &rest.as_bytes()[..rest.len().min(12)];
        let Some(semi) = window.iter().position(|&b| b == b';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn find_root_start(xml: &str) -> Option<usize> {
    let mut pos = 0;
    while let Some(i) = xml[pos..].find('<') {
        let at = pos + i;
        let rest = &xml[at..];
        if rest.starts_with("<?") || rest.starts_with("<!") {
            let end = if rest.starts_with("<!--") {
                rest.find("-->").map(|e| e + 3)
            } else {
                rest.find('>').map(|e| e + 1)
            }?;
            pos = at + end;
            continue;
        }
        return rest.starts_with("<testsuites").then_some(at);
    }
    None
}

/// Index of the `>` that ends the tag starting at `start` (quotes respected).
fn tag_end(xml: &str, start: usize) -> Option<usize> {
    let b = xml.as_bytes();
    let mut i = start;
    loop {
        let at = i + memchr::memchr3(b'>', b'"', b'\'', &b[i..])?;
        if b[at] == b'>' {
            return Some(at);
        }
        // A quoted value: its closing quote, or no end at all.
        i = at + 1 + memchr::memchr(b[at], &b[at + 1..])? + 1;
    }
}

fn dialect(doc: &junit_parser::TestSuites) -> Dialect {
    fn all_cases<'a>(s: &'a junit_parser::TestSuite, out: &mut Vec<&'a junit_parser::TestCase>) {
        out.extend(s.cases.iter());
        for child in &s.suites {
            all_cases(child, out);
        }
    }
    let name = doc.name.as_str();
    let suite_names = |n: &str| {
        doc.suites
            .iter()
            .any(|s| s.name == n || s.suites.iter().any(|c| c.name == n))
    };
    if name == "nextest-run" {
        return Dialect::Nextest;
    }
    if name == ROOT_NAME {
        return Dialect::Wfx;
    }
    if name == "pytest tests" || suite_names("pytest") {
        return Dialect::Pytest;
    }
    if name == "jest tests" {
        return Dialect::JestJunit;
    }
    if name == "vitest tests" {
        return Dialect::Vitest;
    }
    let mut cases = Vec::new();
    for s in &doc.suites {
        all_cases(s, &mut cases);
    }
    if name.is_empty()
        && !cases.is_empty()
        && cases.iter().all(|c| c.classname.as_deref() == Some("test"))
    {
        return Dialect::Node;
    }
    Dialect::Generic
}

fn walk(
    suite: &junit_parser::TestSuite,
    dialect: Dialect,
    path: &mut Vec<String>,
    run: &mut ParsedRun,
) {
    for case in &suite.cases {
        if let Some(parsed) = convert(case, suite, dialect, path) {
            if parsed.layer == Some(Layer::Static) {
                run.static_errors.push(parsed);
            } else {
                run.cases.push(parsed);
            }
        }
    }
    for child in &suite.suites {
        path.push(child.name.clone());
        walk(child, dialect, path, run);
        path.pop();
    }
}

/// Python module path for a pytest `classname`: `tests.test_x.TestA` →
/// (`tests/test_x.py`, [`TestA`]). Class names start with a capital letter.
fn pytest_module(classname: &str, file: Option<&str>) -> (String, Vec<String>) {
    let parts: Vec<&str> = classname.split('.').filter(|p| !p.is_empty()).collect();
    if let Some(file) = file {
        let dotted = file.trim_end_matches(".py").replace('/', ".");
        let n = dotted.split('.').count();
        let classes = if classname.starts_with(&dotted) {
            parts.iter().skip(n).map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        };
        return (file.to_string(), classes);
    }
    let split = parts
        .iter()
        .position(|p| p.chars().next().is_some_and(char::is_uppercase))
        .unwrap_or(parts.len());
    let module = format!("{}.py", parts[..split].join("/"));
    (
        module,
        parts[split..].iter().map(|s| s.to_string()).collect(),
    )
}

fn convert(
    case: &junit_parser::TestCase,
    suite: &junit_parser::TestSuite,
    dialect: Dialect,
    path: &[String],
) -> Option<ParsedCase> {
    use junit_parser::TestStatus;
    let name = case.original_name.as_str();
    let classname = case.classname.as_deref().unwrap_or("");
    let file_attr = case.file.clone().or_else(|| suite.file.clone());
    let (status, message, body) = match &case.status {
        TestStatus::Success => (Status::Passed, String::new(), String::new()),
        TestStatus::Failure(f) => (Status::Failed, f.message.clone(), f.text.clone()),
        TestStatus::Error(e) => (Status::Error, e.message.clone(), e.text.clone()),
        TestStatus::Skipped(s) => (Status::Skipped, s.message.clone(), s.text.clone()),
    };
    let message = strip_ansi(&message).into_owned();
    let body = strip_ansi(&body).into_owned();

    let mut layer = None;
    let (id, file) = match dialect {
        Dialect::Pytest if classname.is_empty() && status == Status::Error => {
            // A collection error: the "name" is the module's dotted path.
            let file = file_attr.unwrap_or_else(|| format!("{}.py", name.replace('.', "/")));
            layer = Some(Layer::Static);
            (file.clone(), Some(file))
        }
        Dialect::Pytest => {
            let (module, classes) = pytest_module(classname, file_attr.as_deref());
            let mut id = module.clone();
            for c in classes {
                id.push_str("::");
                id.push_str(&c);
            }
            id.push_str("::");
            id.push_str(name);
            (id, Some(module))
        }
        Dialect::Nextest => {
            let (l, file) = super::nextest::binary_kind(classname);
            layer = Some(l);
            (format!("{classname} {name}"), file)
        }
        Dialect::Vitest => {
            let mut parts = vec![classname.to_string()];
            parts.extend(name.split(" > ").map(str::to_string));
            (parts.join(SEP), Some(classname.to_string()))
        }
        Dialect::JestJunit => match &file_attr {
            Some(f) => (format!("{f}{SEP}{}", name.trim()), Some(f.clone())),
            None => (name.trim().to_string(), None),
        },
        Dialect::Node => {
            let mut parts: Vec<&str> = path.iter().map(String::as_str).collect();
            parts.push(name);
            (parts.join(SEP), None)
        }
        Dialect::Wfx => (name.to_string(), file_attr.clone()),
        Dialect::Generic => {
            let id = if !classname.is_empty() && classname != name {
                format!("{classname}#{name}")
            } else {
                name.to_string()
            };
            (id, file_attr.clone())
        }
    };

    let mut parsed = ParsedCase {
        id,
        status,
        file,
        line: None,
        layer,
        ..ParsedCase::default()
    };
    if matches!(status, Status::Failed | Status::Error) && dialect == Dialect::Wfx {
        // Written by `ci::junit`: exactly what it recorded, nothing guessed.
        let (at, rest) = match body.split_once('\n') {
            Some((first, rest)) if first.starts_with("at ") => (Some(first), rest),
            None if body.starts_with("at ") => (Some(body.as_str()), ""),
            _ => (None, body.as_str()),
        };
        if let Some((file, line)) = at.and_then(|a| a[3..].rsplit_once(':'))
            && let Ok(line) = line.parse()
        {
            parsed.file = Some(file.to_string());
            parsed.line = Some(line);
        }
        parsed.error = message;
        parsed.message = rest.to_string();
        return Some(parsed);
    }
    if matches!(status, Status::Failed | Status::Error) {
        let text = if body.trim().is_empty() {
            message.clone()
        } else {
            body.clone()
        };
        parsed.error = error_line(dialect, &message, &body);
        let prefer = parsed.file.clone();
        if let Some(loc) = best_location(&format!("{body}\n{message}"), prefer.as_deref()) {
            parsed.file = Some(loc.file);
            parsed.line = Some(loc.line);
        }
        parsed.message = excerpt(&text);
    }
    Some(parsed)
}

/// The first line of the error as the report presents it.
fn error_line(dialect: Dialect, message: &str, body: &str) -> String {
    if let Some((_, msg)) = rust_panic(body)
        .or_else(|| rust_panic(message))
        .or_else(|| super::did_not_panic(body))
        && !msg.is_empty()
    {
        return msg;
    }
    let msg_first = super::error_line(message);
    let body_first = super::error_line(body);
    if dialect == Dialect::Pytest
        && let Some(raised) = pytest_collection_raised(&msg_first, body)
    {
        return raised;
    }
    match dialect {
        Dialect::Pytest if !msg_first.is_empty() && msg_first != "collection failure" => msg_first,
        Dialect::Node => {
            let line = if body_first.is_empty() {
                msg_first
            } else {
                body_first
            };
            line.trim_start_matches('[')
                .trim_start_matches("Error [ERR_TEST_FAILURE]: ")
                .to_string()
        }
        _ if !body_first.is_empty() => body_first,
        _ => msg_first,
    }
}

/// The exception behind a pytest collection error: pytest introduces it
/// ("collection failure", "ImportError while importing test module 'x'.")
/// and prints it last, on `E   ` lines (`E   ModuleNotFoundError: No
/// module named 'humanize._version'`), which is the line that says what
/// to do. `None` for any other failure.
fn pytest_collection_raised(message_first: &str, body: &str) -> Option<String> {
    let first = super::error_line(body);
    let introduced = message_first == "collection failure"
        || first.starts_with("ImportError while importing test module")
        || first.starts_with("ImportError while loading conftest");
    if !introduced {
        return None;
    }
    body.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("E "))
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::fixture;

    type Row<'a> = (&'a str, Option<&'a str>, Option<u32>, &'a str);

    fn failures(run: &ParsedRun) -> Vec<Row<'_>> {
        run.cases
            .iter()
            .chain(run.static_errors.iter())
            .filter(|c| matches!(c.status, Status::Failed | Status::Error))
            .map(|c| (c.id.as_str(), c.file.as_deref(), c.line, c.error.as_str()))
            .collect()
    }

    fn counts(run: &ParsedRun) -> (usize, usize, usize, usize, usize) {
        (
            run.cases.len(),
            run.count(Status::Passed),
            run.count(Status::Failed),
            run.count(Status::Skipped),
            run.count(Status::Error) + run.static_errors.len(),
        )
    }

    #[test]
    fn pytest_junit() {
        let run = parse(&fixture("pytest-junit.xml")).unwrap();
        assert_eq!(counts(&run), (12, 9, 2, 1, 0));
        assert_eq!(
            failures(&run),
            vec![
                (
                    "tests/test_auth.py::test_validate_token",
                    Some("tests/test_auth.py"),
                    Some(17),
                    "AssertionError: assert False is True"
                ),
                (
                    "tests/test_ops.py::test_divide_by_zero_returns_none",
                    Some("tests/test_ops.py"),
                    Some(15),
                    "ZeroDivisionError: division by zero"
                ),
            ]
        );
        let ids: Vec<_> = run.cases.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"tests/test_ops.py::test_parse_number[42-42]"));
        assert!(ids.contains(&"tests/test_ops.py::test_parse_number[  7 -7]"));
        let skipped = run
            .cases
            .iter()
            .find(|c| c.status == Status::Skipped)
            .unwrap();
        assert_eq!(skipped.id, "tests/test_ops.py::test_parse_huge_number");
        // The traceback into the source stays in the message.
        assert!(
            run.cases[7]
                .message
                .contains("calc/ops.py:10: ZeroDivisionError")
        );
    }

    #[test]
    fn pytest_collection_error_is_static() {
        let run = parse(&fixture("pytest-collect-error-junit.xml")).unwrap();
        assert_eq!(counts(&run), (0, 0, 0, 0, 1));
        assert_eq!(
            failures(&run),
            vec![(
                "tests/test_units.py",
                Some("tests/test_units.py"),
                Some(1),
                "ModuleNotFoundError: No module named 'calc.units'"
            )]
        );
        assert!(
            run.static_errors[0]
                .message
                .starts_with("ImportError while importing test module 'tests/test_units.py'.")
        );
        assert!(
            run.static_errors[0]
                .message
                .contains("No module named 'calc.units'")
        );
        assert_eq!(run.static_errors[0].layer, Some(Layer::Static));
    }

    /// humanize 4.17.0 from a fresh clone: its git-ignored `_version.py`
    /// is not generated yet, so every module fails to import; each error
    /// names the missing module, not pytest's introduction.
    #[test]
    fn a_real_collection_error_names_the_exception() {
        let run = parse(&fixture("analyzer/py-humanize.junit.xml")).unwrap();
        assert_eq!(counts(&run), (0, 0, 0, 0, 7));
        for (id, _, _, error) in failures(&run) {
            assert_eq!(
                error, "ModuleNotFoundError: No module named 'humanize._version'",
                "{id}"
            );
        }
    }

    #[test]
    fn pytest_xunit1_file_attribute_and_classes() {
        let xml = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="2">
            <testcase classname="tests.test_x.TestA" name="test_b" file="tests/test_x.py" line="3"/>
            <testcase classname="tests.unit.test_y.TestOuter.TestInner" name="test_c[1]"/>
            </testsuite></testsuites>"#;
        let run = parse(xml).unwrap();
        let ids: Vec<_> = run.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "tests/test_x.py::TestA::test_b",
                "tests/unit/test_y.py::TestOuter::TestInner::test_c[1]"
            ]
        );
    }

    #[test]
    fn nextest_junit() {
        let run = parse(&fixture("nextest-junit.xml")).unwrap();
        // The ignored test is absent from nextest's JUnit.
        assert_eq!(counts(&run), (11, 9, 2, 0, 0));
        let (e1, e2) = (
            "assertion `left == right` failed: left Some(3.0), right Some(2.0)",
            "assertion `left == right` failed: left Some(3), right Some(-3)",
        );
        assert_eq!(
            failures(&run),
            vec![
                (
                    "rust-calc stats::tests::mean_of_three",
                    Some("src/stats.rs"),
                    Some(28),
                    e1
                ),
                (
                    "rust-calc tests::divide_negative",
                    Some("src/lib.rs"),
                    Some(47),
                    e2
                ),
            ]
        );
        let integ = run
            .cases
            .iter()
            .find(|c| c.id == "rust-calc::integration parse_then_add")
            .unwrap();
        assert_eq!(integ.layer, Some(Layer::Integration));
    }

    #[test]
    fn vitest_junit() {
        let run = parse(&fixture("vitest-junit.xml")).unwrap();
        assert_eq!(counts(&run), (7, 4, 2, 1, 0));
        assert_eq!(
            failures(&run),
            vec![
                (
                    "test/math.test.js › math › finds the max",
                    Some("test/math.test.js"),
                    Some(14),
                    "AssertionError: expected 3 to be 9 // Object.is equality"
                ),
                (
                    "test/strings.test.js › strings › slugifies a title",
                    Some("test/strings.test.js"),
                    Some(12),
                    "AssertionError: expected 'tiny-test fixture' to be 'tiny-test-fixture' // Object.is equality"
                ),
            ]
        );
        let skipped = run
            .cases
            .iter()
            .find(|c| c.status == Status::Skipped)
            .unwrap();
        assert_eq!(
            skipped.id,
            "test/math.test.js › math › handles bigint division"
        );
    }

    #[test]
    fn jest_junit() {
        let run = parse(&fixture("jest-junit.xml")).unwrap();
        assert_eq!(counts(&run), (9, 6, 2, 1, 0));
        let (e1, e2) = (
            "Error: expect(received).toBe(expected) // Object.is equality: expected 9, received 3",
            "Error: expect(received).toBe(expected) // Object.is equality: expected \"tiny-test-fixture\", received \"tiny-test fixture\"",
        );
        assert_eq!(
            failures(&run),
            vec![
                (
                    "math finds the max",
                    Some("test/math.test.js"),
                    Some(13),
                    e1
                ),
                (
                    "strings slugifies a title",
                    Some("test/strings.test.js"),
                    Some(15),
                    e2
                ),
            ]
        );
        assert!(
            run.cases
                .iter()
                .any(|c| c.id == "clamp keeps values in range")
        );
    }

    #[test]
    fn node_junit_with_top_level_cases() {
        let run = parse(&fixture("node-junit.xml")).unwrap();
        assert_eq!(counts(&run), (10, 7, 2, 1, 0));
        let (e1, e2) = (
            "Expected values to be strictly equal: 3 !== 9",
            "Expected values to be strictly equal: 'tiny-test fixture' !== 'tiny-test-fixture'",
        );
        assert_eq!(
            failures(&run),
            vec![
                (
                    "math › finds the max",
                    Some("test/math.test.js"),
                    Some(17),
                    e1
                ),
                (
                    "strings › slugifies a title",
                    Some("test/strings.test.js"),
                    Some(19),
                    e2
                ),
            ]
        );
        let ids: Vec<_> = run.cases.iter().map(|c| c.id.as_str()).collect();
        for want in [
            "clamp keeps values in range",
            "reverse",
            "slugify a single word",
            "strings › capitalize › uppercases the first letter",
        ] {
            assert!(ids.contains(&want), "{want} in {ids:?}");
        }
    }

    #[test]
    fn surefire_bare_testsuite() {
        let run = parse(&fixture("surefire-TEST-calc.CalcTest.xml")).unwrap();
        assert_eq!(counts(&run), (4, 1, 1, 1, 1));
        assert_eq!(
            failures(&run),
            vec![
                (
                    "calc.CalcTest#dividesByZeroToZero",
                    Some("CalcTest.java"),
                    Some(21),
                    "java.lang.ArithmeticException: / by zero"
                ),
                (
                    "calc.CalcTest#findsTheMax",
                    Some("CalcTest.java"),
                    Some(16),
                    "org.opentest4j.AssertionFailedError: expected: <9> but was: <3>"
                ),
            ]
        );
        let error = run
            .cases
            .iter()
            .find(|c| c.status == Status::Error)
            .unwrap();
        assert_eq!(error.id, "calc.CalcTest#dividesByZeroToZero");
        let skipped = run
            .cases
            .iter()
            .find(|c| c.status == Status::Skipped)
            .unwrap();
        assert_eq!(skipped.id, "calc.CalcTest#addsBigNumbers");
    }

    #[test]
    fn totals_come_from_cases_not_attributes() {
        let xml = r#"<testsuite name="s" tests="99" failures="42"><testcase classname="A" name="b"/></testsuite>"#;
        let run = parse(xml).unwrap();
        assert_eq!(counts(&run), (1, 1, 0, 0, 0));
    }

    #[test]
    fn entities_in_text_survive() {
        let xml = "<testsuite><testcase classname=\"A\" name=\"b\"><failure>x &lt; y &amp;&amp; it&apos;s &#10;next ]]&gt; end</failure></testcase></testsuite>";
        let run = parse(xml).unwrap();
        // A `]]>` inside the text needs two CDATA sections, which
        // junit-parser joins with a newline.
        assert_eq!(run.cases[0].message, "x < y && it's \nnext ]]\n> end");
        assert_eq!(
            unescape("&lt;a&gt; &amp;amp; &#x41;&#66; &bogus; &"),
            "<a> &amp; AB &bogus; &"
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse("<testsuites><testsuite>").is_err());
        assert!(parse("not xml at all").is_err());
    }

    #[test]
    fn entity_scan_stops_on_a_char_boundary() {
        // Found by fuzzing (parse_junit): the 12-byte window searched for an
        // entity's `;` ended inside a multi-byte character.
        let text = String::from_utf8_lossy(b"&\xff\xff\xff\xff");
        assert_eq!(unescape(&text), text);
        assert!(parse(&text).is_err());
        let xml = "<testsuite name=\"s\"><testcase classname=\"c\" name=\"t\">\
                   <failure message=\"m\">&abcdefghi€ &lt;x&gt;</failure></testcase></testsuite>";
        let run = parse(xml).unwrap();
        assert_eq!(run.cases[0].message, "&abcdefghi€ <x>");
    }

    #[test]
    fn deeply_nested_suites_are_an_error_not_a_stack_overflow() {
        // Found by probing parse_junit: junit-parser recurses once per
        // nested <testsuite>, and 3000 levels overflowed the stack.
        let nested = |n: usize| {
            format!(
                "<testsuites>{}<testcase classname=\"c\" name=\"t\"/>{}</testsuites>",
                "<testsuite name=\"s\">".repeat(n),
                "</testsuite>".repeat(n)
            )
        };
        let err = parse(&nested(20_000)).unwrap_err();
        assert_eq!(
            err,
            "invalid JUnit XML: test suites nested more than 100 deep"
        );
        // The wrapper suite wfx adds under <testsuites> counts as one level.
        assert_eq!(parse(&nested(99)).unwrap().cases.len(), 1);
        assert!(parse(&nested(100)).is_err());
        assert_eq!(
            suite_depth("<testsuite><testsuite/><![CDATA[<testsuite>]]></testsuite>"),
            1
        );
    }
}
