//! The test anti-pattern scan (REFERENCE.md "Test anti-patterns
//! (IMPL-001.5)") run by the test-quality gate on the test files the
//! test-generation step changed: the anti-pattern rows of [`RULES`]. It
//! finds the tests of a file (pytest and unittest functions,
//! jest/vitest/mocha/node:test calls, Rust `#[test]` functions, Go
//! `TestXxx`, JUnit `@Test` methods), classifies their assertions, and
//! reads the subject's source (what the test file imports) for the coverage
//! checks. `order_dependence` is not checked: it cannot be decided
//! statically (see `docs/scans.md`).
//!
//! [`RULES`]: super::rules::RULES

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::findings::Finding;
use super::imports::{go_imports, js_specs, npm_package, resolve_js};
use super::rules::Scan;
use super::{Ctx, in_any, read_text, scanned_lang, words};
use crate::project::dependencies::{Manifest, Manifests};
use crate::project::is_test_path;
use crate::project::source::{Func, Source, split_args};
use crate::project::{Lang, compile, re};

/// Scan one test file's text. `root` is read to find the subject (the
/// source files the test imports) and the project's manifests.
pub fn scan_test_file(root: &Path, rel_path: &str, text: &str) -> Vec<Finding> {
    scan_one(root, rel_path, text, &mut Cache::default())
}

/// Read and scan test files (relative to `root`); unreadable, binary and
/// huge (> 1 MiB) files are skipped, non-UTF-8 text is read lossily.
pub fn scan_test_files(root: &Path, rel_paths: &[String]) -> Vec<Finding> {
    let mut cache = Cache::default();
    let mut out = Vec::new();
    for rel in rel_paths.iter().map(|r| r.replace('\\', "/")) {
        if scanned_lang(&rel).is_some()
            && let Some(text) = read_text(&root.join(&rel))
        {
            out.extend(scan_one(root, &rel, &text, &mut cache));
        }
    }
    out
}

/// Subject sources and manifests shared by the files of one scan.
#[derive(Default)]
struct Cache {
    subjects: HashMap<PathBuf, Vec<SubjectFn>>,
    manifests: Manifests,
    rust_sources: HashMap<PathBuf, Vec<PathBuf>>,
    /// Go: non-test files of a package directory and the names they define.
    go_packages: HashMap<PathBuf, (Vec<PathBuf>, BTreeSet<String>)>,
}

/// A function of the code under test.
#[derive(Debug, Clone)]
struct SubjectFn {
    name: String,
    negative: bool,
    is_async: bool,
    params: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Strong,
    Weak,
    Snapshot,
    Mock,
}

/// One assertion of a test: its offset, kind, and why it cannot fail when
/// it is a tautology.
#[derive(Debug, Clone)]
struct Assertion(usize, Kind, Option<String>);

/// One test found in the file.
#[derive(Debug, Clone, Default)]
struct TestCase {
    name: String,
    /// Offset reported for the test (its declaration).
    off: usize,
    /// Body range (masked/code offsets).
    body: (usize, usize),
    /// `Some(has_reason)` when the test is skipped.
    skipped: Option<bool>,
    is_async: bool,
    /// Python parameters (fixtures).
    params: Vec<String>,
    /// Attributes/decorators text (Rust `#[should_panic]`, Python marks;
    /// `group` for a skipped `describe`).
    attrs: String,
}

impl TestCase {
    fn new(name: impl Into<String>, off: usize, body: (usize, usize)) -> TestCase {
        TestCase {
            name: name.into(),
            off,
            body,
            ..TestCase::default()
        }
    }
}

fn scan_one(root: &Path, rel: &str, text: &str, cache: &mut Cache) -> Vec<Finding> {
    static NO_MANIFEST: LazyLock<Manifest> = LazyLock::new(Manifest::default);
    let Some(cx) = Ctx::new(root, rel, text, &NO_MANIFEST) else {
        return Vec::new();
    };
    let tests = find_tests(&cx.src);
    cx.patterns(Scan::AntiPatterns);
    commented_out(&cx);
    if !tests.is_empty() {
        let helpers = assertion_helpers(&cx.src, &tests);
        let assertions: Vec<Vec<Assertion>> = tests
            .iter()
            .map(|t| assertions_of(&cx.src, t, &helpers))
            .collect();
        empty_and_weak(&cx, &tests, &assertions);
        copy_pasted(&cx, &tests);
        isolation(&cx, &tests);
        missing_cleanup(&cx);
        let manifest = cache.manifests.for_file(root, rel).clone();
        subject_checks(&cx, &tests, &assertions, &manifest, cache);
    }
    cx.finish(true)
}

// ---------------------------------------------------------------- finding tests

fn find_tests(src: &Source) -> Vec<TestCase> {
    match src.lang {
        Lang::Python => python_tests(src),
        Lang::Js | Lang::Ts => js_tests(src),
        Lang::Rust => rust_tests(src),
        Lang::Go => go_tests(src),
        _ => java_tests(src),
    }
}

fn python_tests(src: &Source) -> Vec<TestCase> {
    let logical = src.logical_starts();
    let mut out = Vec::new();
    for f in src
        .functions()
        .into_iter()
        .filter(|f| f.name.starts_with("test"))
    {
        let Some(body) = f.body else { continue };
        let attrs = f.decorators.join("\n");
        let mut skipped = None;
        for d in &f.decorators {
            let head = d.split('(').next().unwrap_or(d).trim_start_matches('@');
            let last = head.rsplit('.').next().unwrap_or(head).to_ascii_lowercase();
            let args = d
                .split_once('(')
                .map_or("", |(_, a)| a.trim_end().trim_end_matches(')').trim());
            skipped = match last.as_str() {
                "skip" => Some(!args.is_empty()),
                "skipif" | "skipunless" => {
                    Some(args.contains("reason") || split_top(args).len() >= 2)
                }
                // `@skip_win32`, `@skipif_no_numpy`: the name is the reason
                l if l.starts_with("skip") => Some(true),
                _ => skipped,
            };
        }
        // `pytest.skip("…")` as the first statement of the body (after a docstring)
        let first = src.line_index(body.0);
        for idx in
            (first..logical.len().min(first + 40)).filter(|&i| logical[i] && !src.is_blank(i))
        {
            let ls = src.line_start(idx).max(body.0);
            if skipped.is_some() || ls >= body.1 {
                break;
            }
            let t = src.masked[ls..src.line_end(idx)].trim();
            if !t.starts_with(['"', '\'']) {
                if let Some(m) =
                    re!(r"^(?:pytest\.skip|self\.skipTest|unittest\.skip)\s*\(").find(t)
                {
                    skipped = Some(!t[m.end()..].trim_start().starts_with(')'));
                }
                break;
            }
        }
        let params = src.code[f.params.0..f.params.1].split(',').filter_map(|p| {
            let n = p.split([':', '=']).next()?.trim().trim_start_matches('*');
            (!n.is_empty()).then(|| n.to_string())
        });
        let is_async = f.is_async
            || ["asyncio", "anyio", "trio"]
                .iter()
                .any(|a| attrs.contains(a));
        let off = src.line_start(f.line) + src.indent_bytes(f.line);
        let params = params.collect();
        out.push(TestCase {
            skipped,
            is_async,
            params,
            attrs,
            ..TestCase::new(f.name, off, body)
        });
    }
    out
}

/// Split `a, b(c, d), e` at top-level commas (plain text).
fn split_top(s: &str) -> Vec<&str> {
    let parts = split_args(s, 0, s.len())
        .into_iter()
        .map(|(a, z)| s[a..z].trim());
    parts.filter(|p| !p.is_empty()).collect()
}

/// A comment on the line of `off` or on the line before it (a reason for a
/// skip marker written next to it).
fn comment_near(src: &Source, off: usize) -> bool {
    let line = src.line_index(off);
    src.comments
        .iter()
        .any(|c| (c.line == line || c.line + 1 == line) && c.text.len() > 2)
}

/// The modifier chain after a JS test call's name (`.only`, `.skip`,
/// `.each(…)`, `.skipIf(…)`) and the offset after it.
fn js_modifiers<'s>(src: &'s Source, mut p: usize) -> (Vec<&'s str>, usize) {
    let (m, b) = (&src.masked, src.masked.as_bytes());
    let skip_ws = |mut p: usize| {
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        p
    };
    let mut mods = Vec::new();
    p = skip_ws(p);
    while b.get(p) == Some(&b'.') {
        let s = p + 1;
        p = s + m[s..]
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .unwrap_or(m.len() - s);
        let md = &m[s..p];
        p = skip_ws(p);
        if matches!(md, "each" | "skipIf" | "runIf" | "for") {
            match b.get(p) {
                Some(b'(') => p = src.match_close(p).map_or(p, |e| e + 1),
                Some(b'`') => p = m[p + 1..].find('`').map_or(p, |e| p + e + 2),
                _ => {}
            }
        }
        mods.push(md);
        p = skip_ws(p);
    }
    (mods, p)
}

/// The body of a JS test callback `(a, z)`: a braced block or an arrow's
/// expression.
fn js_callback_body(src: &Source, (ca, cz): (usize, usize)) -> (usize, usize) {
    let m = &src.masked;
    let cb = &m[ca..cz];
    let braced = |o: usize| src.match_close(o).map_or((o + 1, cz), |e| (o + 1, e));
    match cb.find("=>") {
        Some(arrow) => {
            let start = cz - m[ca + arrow + 2..cz].trim_start().len();
            if m[start..cz].starts_with('{') {
                braced(start)
            } else {
                (start, cz)
            }
        }
        None => cb.find('{').map_or((cz, cz), |o| braced(ca + o)),
    }
}

/// Whether a JS test is skipped, from its modifiers and a node:test options
/// object (`{ skip: … }`, `{ todo }`): `Some(has_reason)`.
fn js_skipped(
    src: &Source,
    word: &str,
    at: usize,
    mods: &[&str],
    args: &[(usize, usize)],
) -> Option<bool> {
    let has = |x: &str| mods.contains(&x);
    let mut opt_skip: Option<bool> = None;
    for t in args
        .iter()
        .skip(1)
        .map(|&(a, z)| &src.code[a..z])
        .filter(|t| t.starts_with('{'))
    {
        if let Some(i) = t.find("skip") {
            let value = t[i + 4..].trim_start().trim_start_matches(':').trim_start();
            opt_skip = Some(value.starts_with(['\'', '"', '`']));
        }
        if t.contains("todo") {
            opt_skip = Some(true);
        }
    }
    if has("todo") || has("skipIf") || has("runIf") {
        Some(true)
    } else if has("skip") || word.starts_with('x') {
        Some(comment_near(src, at))
    } else {
        opt_skip
    }
}

fn js_tests(src: &Source) -> Vec<TestCase> {
    let call = re!(
        r"(?:^|[^\w$.])(it|test|specify|xit|xtest|xspecify|fit|ftest|describe|context|suite|xdescribe|fdescribe)\b"
    );
    let m = &src.masked;
    let mut out = Vec::new();
    // ranges of skipped describe blocks: their tests inherit the skip
    let mut skipped_groups: Vec<(usize, usize)> = Vec::new();
    for c in call.captures_iter(m) {
        let name_m = c.get(1).unwrap();
        let word = name_m.as_str();
        let (mods, open) = js_modifiers(src, name_m.end());
        let Some(close) = src
            .match_close(open)
            .filter(|_| m.as_bytes().get(open) == Some(&b'('))
        else {
            continue;
        };
        let args = split_args(m, open + 1, close);
        let skipped = js_skipped(src, word, name_m.start(), &mods, &args);
        let title = test_title(src, &args);
        if matches!(
            word,
            "describe" | "context" | "suite" | "xdescribe" | "fdescribe"
        ) {
            if let Some(reason) = skipped {
                skipped_groups.push((open, close));
                if !reason {
                    let group =
                        TestCase::new(format!("describe: {title}"), name_m.start(), (close, close));
                    out.push(TestCase {
                        skipped: Some(false),
                        attrs: "group".into(),
                        ..group
                    });
                }
            }
            continue;
        }
        // the callback: an argument containing `=>` or starting with `function`
        let callback = args.iter().skip(1).rev().find(|&&(a, z)| {
            let t = &m[a..z];
            t.contains("=>") || t.starts_with("function") || t.starts_with("async")
        });
        let Some(&(ca, cz)) = callback else {
            if skipped.is_some() || mods.contains(&"todo") {
                let case = TestCase::new(title, name_m.start(), (close, close));
                out.push(TestCase {
                    skipped: Some(skipped.unwrap_or(true)),
                    ..case
                });
            }
            continue;
        };
        let body = js_callback_body(src, (ca, cz));
        let mut skipped = skipped;
        // `t.skip(…)` / `this.skip()` inside the body
        if let Some(i) = m[body.0..body.1]
            .find(".skip(")
            .filter(|_| skipped.is_none())
        {
            let (before, rest) = (
                m[body.0..body.0 + i].trim_end(),
                m[body.0 + i + 6..body.1].trim_start(),
            );
            if ["t", "this", "ctx"].iter().any(|w| before.ends_with(w)) {
                skipped = Some(!rest.starts_with(')'));
            }
        }
        let is_async = m[ca..cz].trim_start().starts_with("async");
        let attrs = mods.join(".");
        out.push(TestCase {
            skipped,
            is_async,
            attrs,
            ..TestCase::new(title, name_m.start(), body)
        });
    }
    for t in out.iter_mut().filter(|t| t.skipped.is_none()) {
        if skipped_groups.iter().any(|&(a, z)| t.off > a && t.off < z) {
            t.skipped = Some(true);
        }
    }
    out
}

fn test_title(src: &Source, args: &[(usize, usize)]) -> String {
    let title = args
        .first()
        .map(|&(a, z)| src.code[a..z].trim().trim_matches(['\'', '"', '`']));
    title.unwrap_or_default().to_string()
}

fn rust_tests(src: &Source) -> Vec<TestCase> {
    let m = &src.masked;
    let mut out = Vec::new();
    let mut seen_fn = BTreeSet::new();
    for a in re!(r"#\[\s*([\w:]+)").captures_iter(m) {
        let path = &a[1];
        let last = path.rsplit("::").next().unwrap_or(path);
        if last != "test"
            && !matches!(
                path,
                "rstest" | "test_case" | "quickcheck" | "test_log::test"
            )
        {
            continue;
        }
        // attributes up to the fn
        let start = a.get(0).unwrap().start();
        let mut p = start;
        let mut attrs = String::new();
        loop {
            p += m[p..].len() - m[p..].trim_start().len();
            let Some(close) = m[p..]
                .starts_with("#[")
                .then(|| src.match_close(p + 1))
                .flatten()
            else {
                break;
            };
            attrs.push_str(&src.code[p..=close]);
            attrs.push('\n');
            p = close + 1;
        }
        let func =
            re!(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)");
        let Some(fc) = func.captures(&m[p..]) else {
            continue;
        };
        let name_m = fc.get(2).unwrap();
        let name_off = p + name_m.start();
        if !seen_fn.insert(name_off) {
            continue;
        }
        let open = src.body_open(p + name_m.end());
        let Some((open, close)) = open.and_then(|o| Some((o, src.match_close(o)?))) else {
            continue;
        };
        let ignore = attrs.lines().find(|l| l.contains("ignore"));
        let skipped =
            ignore.map(|l| l.contains('=') || l.contains('"') || comment_near(src, start));
        let is_async =
            fc.get(1).is_some() || attrs.contains("tokio") || attrs.contains("async_std");
        let case = TestCase::new(name_m.as_str(), name_off, (open + 1, close));
        out.push(TestCase {
            skipped,
            is_async,
            attrs,
            ..case
        });
    }
    out
}

fn go_tests(src: &Source) -> Vec<TestCase> {
    let m = &src.masked;
    let mut out = Vec::new();
    for c in re!(r"(?m)^func\s+(Test\w*)\s*\(\s*(\w+)\s+\*testing\.T\s*\)").captures_iter(m) {
        let open = src.body_open(c.get(0).unwrap().end());
        let Some((open, close)) = open.and_then(|o| Some((o, src.match_close(o)?))) else {
            continue;
        };
        let t = &c[2];
        // an unconditional skip: `t.Skip…` on the body's first statement line
        let first = m[open + 1..close]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let skipped = first
            .starts_with(&format!("{t}.Skip"))
            .then(|| !first.contains("SkipNow") && !first.contains("Skip()"));
        let case = TestCase::new(&c[1], c.get(1).unwrap().start(), (open + 1, close));
        out.push(TestCase {
            skipped,
            params: vec![t.to_string()],
            ..case
        });
    }
    out
}

fn java_tests(src: &Source) -> Vec<TestCase> {
    let m = &src.masked;
    let mut out = Vec::new();
    for t in re!(r"@(?:Test|ParameterizedTest|RepeatedTest)\b").find_iter(m) {
        // annotations before the method (for @Disabled) and after
        let ls = src.line_start(src.line_index(t.start()).saturating_sub(3));
        let Some(open) = src.body_open(t.end()) else {
            continue;
        };
        let methods = re!(r"\b(\w+)\s*\(").captures_iter(&m[t.end()..open]);
        let named =
            |c: &regex::Captures| !matches!(&c[1], "Test" | "DisplayName" | "Timeout" | "Tag");
        let Some(mc) = methods.filter(named).last() else {
            continue;
        };
        let Some(close) = src.match_close(open) else {
            continue;
        };
        let around = &src.code[ls..open];
        let skipped = ["@Disabled", "@Ignore"].iter().find_map(|a| {
            around
                .find(a)
                .map(|i| around[i + a.len()..].trim_start().starts_with("(\""))
        });
        let case = TestCase::new(
            &mc[1],
            t.end() + mc.get(1).unwrap().start(),
            (open + 1, close),
        );
        out.push(TestCase {
            skipped,
            attrs: around.to_string(),
            ..case
        });
    }
    out
}

// ---------------------------------------------------------------- assertions

/// Functions of the test file (not tests) that assert: calling one is an
/// assertion.
fn assertion_helpers(src: &Source, tests: &[TestCase]) -> BTreeSet<String> {
    let test_offs: BTreeSet<usize> = tests.iter().map(|t| t.body.0).collect();
    let mut out = BTreeSet::new();
    for f in src.functions() {
        let Some((a, b)) = f.body else { continue };
        if test_offs.contains(&a) || f.name.starts_with("test") || f.name.starts_with("Test") {
            continue;
        }
        if !assertions_of(src, &TestCase::new(&f.name, a, (a, b)), &BTreeSet::new()).is_empty() {
            out.insert(f.name);
        }
    }
    out
}

fn is_literal(s: &str) -> bool {
    re!(r#"^(?:-?\d[\d_.]*[a-z0-9]*|true|false|True|False|None|null|undefined|nil|"[^"]*"|'[^']*'|`[^`$]*`)$"#)
        .is_match(s.trim())
}

fn is_simple(s: &str) -> bool {
    re!(r"^&?[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$").is_match(s.trim())
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Both sides the same variable/literal: the assertion cannot fail.
fn same_sides(a: &str, b: &str) -> bool {
    let (a, b) = (norm(a), norm(b));
    a == b && (is_simple(&a) || is_literal(&a))
}

/// `{head}a, b) compares a value with itself` when the first two arguments
/// are the same.
fn self_compare(head: &str, args: &[&str]) -> Option<String> {
    let same = args.len() >= 2 && same_sides(args[0], args[1]);
    same.then(|| {
        format!(
            "{head}{}, {}) compares a value with itself",
            args[0], args[1]
        )
    })
}

/// An always-true literal (`true`, `1`, a non-empty string).
fn truthy_literal(s: &str) -> bool {
    let s = s.trim();
    is_literal(s)
        && (matches!(s, "true" | "True" | "1")
            || ((s.starts_with('"') || s.starts_with('\'')) && s.len() > 2)
            || s.parse::<f64>().is_ok_and(|v| v != 0.0))
}

fn weak_if(weak: bool) -> Kind {
    if weak { Kind::Weak } else { Kind::Strong }
}

fn assertions_of(src: &Source, t: &TestCase, helpers: &BTreeSet<String>) -> Vec<Assertion> {
    let mut out = Vec::new();
    let (a, z) = t.body;
    if a >= z {
        return out;
    }
    match src.lang {
        Lang::Js | Lang::Ts => js_assertions(src, a, z, &mut out),
        Lang::Python => py_assertions(src, a, z, &mut out),
        Lang::Rust => rust_assertions(src, t, a, z, &mut out),
        Lang::Go => go_assertions(src, t, a, z, &mut out),
        _ => java_assertions(src, a, z, &mut out),
    }
    // calls of assertion helpers defined in this file
    if !helpers.is_empty() {
        let body = &src.masked[a..z];
        for g in CALL.captures_iter(body).map(|c| c.get(1).unwrap()) {
            if helpers.contains(g.as_str()) && !body[..g.start()].ends_with('.') {
                out.push(Assertion(a + g.start(), Kind::Strong, None));
            }
        }
    }
    out
}

/// A call: the name before a `(` (no look-behind: a match must not
/// swallow the `(` of an enclosing call).
static CALL: LazyLock<Regex> = LazyLock::new(|| compile(r"([A-Za-z_$][\w$]*)\s*\("));

/// End of the assertion statement starting at `off`: the end of its line,
/// extended over open brackets; a Python `with pytest.raises(…):` covers
/// its block.
fn assertion_end(src: &Source, off: usize) -> usize {
    let b = src.masked.as_bytes();
    let mut depth = 0i32;
    let mut j = off;
    while j < b.len() {
        match b[j] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' if depth <= 0 => break,
            _ => {}
        }
        j += 1;
    }
    if src.lang == Lang::Python && src.masked[..j].trim_end().ends_with(':') {
        let (_, end) = src.py_block(src.line_index(off), src.logical_starts());
        if end > 0 {
            return src.line_end(end - 1).max(j);
        }
    }
    j
}

/// The arguments (code text) of the call whose `(` is at `open`.
fn call_args<'s>(src: &'s Source, open: usize) -> (Vec<&'s str>, usize) {
    let Some(close) = src.match_close(open) else {
        return (Vec::new(), open);
    };
    let args = split_args(&src.masked, open + 1, close)
        .into_iter()
        .map(|(a, z)| src.code[a..z].trim())
        .collect();
    (args, close)
}

/// The matcher chain after `expect(…)` closing at `close`: its names and
/// the offset after the last.
fn matcher_chain(m: &str, close: usize) -> (Vec<&str>, usize) {
    let mut p = close + 1;
    let mut chain: Vec<&str> = Vec::new();
    while let Some(t) = m[p..].trim_start().strip_prefix('.') {
        let t = t.trim_start();
        let len = t
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(t.len());
        if len == 0 {
            break;
        }
        let start = m.len() - t.len();
        chain.push(&m[start..start + len]);
        p = start + len;
    }
    (chain, p)
}

/// jest/vitest/chai `expect(x).matcher(y)`.
fn js_expect(src: &Source, at: usize, open: usize) -> Assertion {
    #[rustfmt::skip]
    const MOCK_MATCHERS: &[&str] = &[
        "toHaveBeenCalled", "toBeCalled", "toHaveBeenLastCalled", "toHaveBeenNthCalled",
        "toHaveReturned", "toReturn", "lastCalledWith",
    ];
    let m = &src.masked;
    let (args, close) = call_args(src, open);
    let (chain, p) = matcher_chain(m, close);
    let matcher = chain.last().copied().unwrap_or("");
    let not = chain.contains(&"not");
    let rest = m[p..].trim_start();
    let matcher_args = if rest.starts_with('(') {
        call_args(src, m.len() - rest.len()).0
    } else {
        Vec::new()
    };
    let subject = args.first().copied().unwrap_or("");
    let kind = if matcher.contains("Snapshot") {
        Kind::Snapshot
    } else if MOCK_MATCHERS.iter().any(|x| matcher.starts_with(x))
        || chain
            .iter()
            .any(|c| c.starts_with("called") || *c == "callCount")
    {
        Kind::Mock
    } else {
        let existence = matches!(
            matcher,
            "toBeDefined" | "toBeTruthy" | "toBeFalsy" | "exist" | "ok"
        );
        let absent = matches!(matcher, "toBeNull" | "toBeUndefined" | "null" | "undefined");
        weak_if(existence || (not && absent))
    };
    let tautology = if is_literal(subject) && !subject.is_empty() {
        Some(format!("expect({subject}) checks a constant"))
    } else {
        let equality = matches!(
            matcher,
            "toBe" | "toEqual" | "toStrictEqual" | "equal" | "eql" | "equals"
        );
        let same = !not && equality && matcher_args.first().is_some_and(|x| same_sides(x, subject));
        same.then(|| format!("expect({subject}).{matcher}({subject}) compares a value with itself"))
    };
    Assertion(at, kind, tautology)
}

fn js_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    let other = re!(concat!(
        r"\.expect\s*\(|\.should\b|(?:^|[^\w$.])(?:expect|assert|verify|check|should)[A-Z_]\w*\s*\(|\bt\s*\.\s*",
        r"(?:is|not|deepEqual|notDeepEqual|like|throws|throwsAsync|notThrows|regex|true|false|assert|fail|equal|",
        r"same|strictSame|match|ok|notOk|error)\s*\(|\b(?:chai\.)?assert\s*\.\s*\w+\s*\("
    ));
    let body = &src.masked[a..z];
    for e in re!(r"(?:^|[^\w$.])expect\s*\(").find_iter(body) {
        out.push(js_expect(src, a + e.start(), a + e.end() - 1));
    }
    for c in re!(r"(?:^|[^\w$.])assert\s*(?:\.\s*(\w+)\s*)?\(").captures_iter(body) {
        let whole = c.get(0).unwrap();
        let method = c.get(1).map_or("", |m| m.as_str());
        let (args, _) = call_args(src, a + whole.end() - 1);
        let first = args.first().copied().unwrap_or("");
        let (kind, tautology) = match method {
            "" | "ok" | "isOk" | "isTrue" | "exists" | "isDefined" | "isNotNull" => (
                weak_if(!has_comparison(first) && !first.contains('(')),
                truthy_literal(first).then(|| format!("assert({first}) is always true")),
            ),
            "equal" | "strictEqual" | "deepEqual" | "deepStrictEqual" | "equals" | "same"
            | "eql" => (
                Kind::Strong,
                self_compare(&format!("assert.{method}("), &args),
            ),
            _ => (Kind::Strong, None),
        };
        let off = a + whole.start() + whole.as_str().find("assert").unwrap_or(0);
        out.push(Assertion(off, kind, tautology));
    }
    let sinon = re!(r"\bsinon\s*\.\s*assert\s*\.\s*\w+\s*\(").find_iter(body);
    out.extend(sinon.map(|s| Assertion(a + s.start(), Kind::Mock, None)));
    for o in other.find_iter(body) {
        let t = o.as_str();
        if t.contains("assert") && t.contains('.') && !t.starts_with('t') {
            continue; // assert.x( already counted
        }
        let kind = if t.contains("snapshot") {
            Kind::Snapshot
        } else {
            weak_if(t.contains("truthy"))
        };
        out.push(Assertion(a + o.start(), kind, None));
    }
}

fn has_comparison(s: &str) -> bool {
    re!(r"==|!=|<=|>=|[^=!<>-]>|<[^<]|\bin\b|\bis\b|\binstanceof\b|\bnot\s+in\b").is_match(s)
}

/// A Python `assert` statement starting at `start` (after the keyword),
/// reported at `off`.
fn py_assert_stmt(src: &Source, start: usize, z: usize, off: usize) -> Assertion {
    let (m, logical) = (&src.masked, src.logical_starts());
    // the logical statement: up to the end of its last physical line
    let mut line = src.line_index(start);
    while line + 1 < src.line_count() && !logical[line + 1] {
        line += 1;
    }
    let stmt_m = &m[start..src.line_end(line).min(z.max(start))];
    // drop the message after a top-level comma
    let mut depth = 0i32;
    let top_comma = stmt_m.char_indices().find(|&(_, ch)| {
        depth +=
            i32::from(matches!(ch, '(' | '[' | '{')) - i32::from(matches!(ch, ')' | ']' | '}'));
        ch == ',' && depth == 0
    });
    let cut = top_comma.map_or(stmt_m.len(), |(i, _)| i);
    let (expr_m, expr) = (stmt_m[..cut].trim(), src.code[start..start + cut].trim());
    let mock_attr = re!(
        r"^\s*(?:not\s+)?[\w.]+\.(?:called|call_count|call_args|call_args_list|await_count|called_once)\b"
    );
    if expr.contains("snapshot") && (expr.contains("==") || expr.contains("match")) {
        return Assertion(off, Kind::Snapshot, None);
    } else if mock_attr.is_match(expr_m) {
        return Assertion(off, Kind::Mock, None);
    }
    let tautology = if truthy_literal(expr) {
        Some(format!("`assert {expr}` is always true"))
    } else {
        let same = expr.split_once("==").is_some_and(|(l, r)| same_sides(l, r));
        same.then(|| format!("`assert {expr}` compares a value with itself"))
    };
    let weak = is_simple(expr.trim_start_matches("not ").trim())
        || re!(r"^\s*(?:not\s+)?(?:isinstance|hasattr|callable)\s*\(").is_match(expr)
        || expr.ends_with("is not None")
        || expr.ends_with("!= None");
    Assertion(off, weak_if(weak), tautology)
}

fn py_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    let mock =
        re!(r"\.assert_(?:called|not_called|any_call|has_calls|awaited|not_awaited)\w*\s*\(");
    let strong = re!(concat!(
        r"\bpytest\s*\.\s*(?:raises|warns|fail|deprecated_call)\s*\(|\braise\s+AssertionError\b|\.assert_\w+\s*\(|",
        r"(?:^|[^\w])(?:[Aa]ssert|[Cc]heck|[Vv]erify|[Ee]xpect)\w*\s*\(|\bsnapshot\s*\.\s*assert_match\s*\("
    ));
    let body = &src.masked[a..z];
    for s in re!(r"(?m)^[ \t]*assert\b").find_iter(body) {
        let off = a + s.start() + (s.as_str().len() - s.as_str().trim_start().len());
        out.push(py_assert_stmt(src, a + s.end(), z, off));
    }
    for c in re!(r"\bself\s*\.\s*(assert\w*|fail\w*)\s*\(").captures_iter(body) {
        let whole = c.get(0).unwrap();
        let method = &c[1];
        let (args, _) = call_args(src, a + whole.end() - 1);
        let first = args.first().copied().unwrap_or("");
        let (kind, tautology) = match method {
            "assertTrue" | "assert_" | "failUnless" => (
                weak_if(is_simple(first)),
                truthy_literal(first).then(|| format!("self.{method}({first}) is always true")),
            ),
            "assertIsNotNone" => (Kind::Weak, None),
            "assertEqual" | "assertEquals" | "assertIs" | "assertDictEqual" | "assertListEqual"
            | "assertCountEqual" => (
                Kind::Strong,
                self_compare(&format!("self.{method}("), &args),
            ),
            _ => (Kind::Strong, None),
        };
        out.push(Assertion(a + whole.start(), kind, tautology));
    }
    out.extend(
        mock.find_iter(body)
            .map(|x| Assertion(a + x.start(), Kind::Mock, None)),
    );
    for s in strong.find_iter(body) {
        let skip = mock.is_match(s.as_str())
            || s.as_str().contains("self.")
            || body[..s.start()].trim_end().ends_with("self.");
        if !skip {
            let kind = if s.as_str().contains("snapshot") {
                Kind::Snapshot
            } else {
                Kind::Strong
            };
            out.push(Assertion(a + s.start(), kind, None));
        }
    }
}

fn rust_assertions(src: &Source, t: &TestCase, a: usize, z: usize, out: &mut Vec<Assertion>) {
    let helper = re!(concat!(
        r"(?:^|[^\w.:])(?:assert_\w+|check_\w+|verify_\w+)\s*(?:::\s*<[^>]*>)?\s*\(|\.assert\w*\s*\(|",
        r"\.compile_fail\s*\("
    ));
    let some_ok =
        re!(r"^!?\s*[^=<>|&]+\.(?:is_some|is_ok)\s*\(\s*\)$|^!\s*[^=<>|&]+\.is_empty\s*\(\s*\)$");
    let m = &src.masked;
    let body = &m[a..z];
    if t.attrs.contains("should_panic") {
        out.push(Assertion(t.off, Kind::Strong, None));
    }
    let macros = re!(r"\b(\w*assert\w*|panic|unreachable|bail|ensure|check|expect)!\s*[(\[{]");
    for c in macros.captures_iter(body) {
        let (name, whole) = (&c[1], c.get(0).unwrap());
        let open = a + whole.end() - 1;
        let args = if m.as_bytes()[open] == b'(' {
            call_args(src, open).0
        } else {
            Vec::new()
        };
        let first = args.first().copied().unwrap_or("");
        let (kind, tautology) = if name.contains("snapshot") {
            (Kind::Snapshot, None)
        } else if name == "assert" || name.ends_with("_assert") {
            (
                weak_if(some_ok.is_match(first)),
                (first == "true").then(|| format!("{name}!(true) is always true")),
            )
        } else if name == "assert_eq" || name.ends_with("_assert_eq") {
            (Kind::Strong, self_compare(&format!("{name}!("), &args))
        } else {
            (Kind::Strong, None)
        };
        out.push(Assertion(a + whole.start(), kind, tautology));
    }
    let weak = re!(r"\.unwrap\s*\(\s*\)|\.expect\s*\(|\?\s*;|\.unwrap_err\s*\(|\.expect_err\s*\(")
        .find_iter(body);
    out.extend(weak.map(|w| Assertion(a + w.start(), weak_if(!w.as_str().contains("err")), None)));
    let mocks = re!(r"\.expect_\w+\s*\(\s*\)").find_iter(body);
    out.extend(mocks.map(|x| Assertion(a + x.start(), Kind::Mock, None)));
    for h in helper.find_iter(body) {
        let snapshot = h.as_str().contains(".assert") && body.contains("expect![");
        out.push(Assertion(
            a + h.start(),
            if snapshot {
                Kind::Snapshot
            } else {
                Kind::Strong
            },
            None,
        ));
    }
}

fn go_assertions(src: &Source, t: &TestCase, a: usize, z: usize, out: &mut Vec<Assertion>) {
    let t_call = re!(r"\b([A-Za-z_]\w*)\s*\.\s*(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(");
    let tv = t.params.first().map_or("t", String::as_str);
    let body = &src.masked[a..z];
    for c in t_call.captures_iter(body).filter(|c| &c[1] == tv) {
        out.push(Assertion(a + c.get(0).unwrap().start(), Kind::Strong, None));
    }
    let mut lib_offs = BTreeSet::new();
    for c in re!(r"\b(assert|require|is|qt|c)\s*\.\s*(\w+)\s*\(").captures_iter(body) {
        let (whole, lib, method) = (c.get(0).unwrap(), &c[1], &c[2]);
        let (args, _) = call_args(src, a + whole.end() - 1);
        lib_offs.insert(whole.start());
        let rest = args.get(1..).unwrap_or(&[]);
        let kind = if method.starts_with("Assert") && method != "Assert" {
            Kind::Mock
        } else {
            let simple_true = method == "True" && rest.first().is_some_and(|x| is_simple(x));
            weak_if(matches!(method, "NotNil" | "NotEmpty" | "NoError") || simple_true)
        };
        let tautology = if matches!(method, "Equal" | "Equalf" | "EqualValues" | "Exactly") {
            self_compare(&format!("{lib}.{method}(t, "), rest)
        } else {
            let always = method == "True" && rest.first() == Some(&"true");
            always.then(|| format!("{lib}.True(t, true) is always true"))
        };
        out.push(Assertion(a + whole.start(), kind, tautology));
    }
    let t_arg = re!(r"(?:^|[^\w.])[\w.]+\s*\(\s*([A-Za-z_]\w*)\s*[,)]");
    for x in t_arg
        .captures_iter(body)
        .filter(|c| &c[1] == tv)
        .map(|c| c.get(0).unwrap())
    {
        let s = x.start() + x.as_str().len()
            - x.as_str()
                .trim_start_matches(|ch: char| !ch.is_alphanumeric())
                .len();
        let helper_call = !lib_offs.iter().any(|&o| o.abs_diff(s) < 3);
        if helper_call && !x.as_str().contains(".Run(") && !x.as_str().contains(".Parallel(") {
            out.push(Assertion(a + x.start(), Kind::Strong, None));
        }
    }
}

fn java_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    let assert = re!(r"(?:^|[^\w.])(?:Assertions\.|Assert\.)?(assert\w*|fail|verify)\s*\(");
    for c in assert.captures_iter(&src.masked[a..z]) {
        let (whole, name) = (c.get(0).unwrap(), &c[1]);
        let (args, _) = call_args(src, a + whole.end() - 1);
        let first = args.first().copied().unwrap_or("");
        let (kind, tautology) = match name {
            "verify" => (Kind::Mock, None),
            "assertNotNull" => (Kind::Weak, None),
            "assertTrue" => (
                weak_if(is_simple(first)),
                (first == "true").then(|| "assertTrue(true) is always true".into()),
            ),
            "assertEquals" | "assertSame" => {
                (Kind::Strong, self_compare(&format!("{name}("), &args))
            }
            _ => (Kind::Strong, None),
        };
        out.push(Assertion(a + whole.start(), kind, tautology));
    }
}

// ---------------------------------------------------------------- empty tests / weak assertions

/// The body only arranges: every statement binds a literal, a constructed
/// object or a mock, and nothing is called or checked.
fn setup_only(src: &Source, t: &TestCase) -> bool {
    let binding = re!(
        r#"^(?:(?:const|let|var)\s+|let\s+(?:mut\s+)?|var\s+)?[A-Za-z_$][\w$]*(?:\s*:\s*[^=]+)?\s*(?::=|=)\s*(.+?);?$"#
    );
    let setup_value = re!(concat!(
        r#"^(?:new\s+[A-Z][\w$.]*\s*\(.*\)|&?[A-Z][\w$]*(?:::new|::default|::from)?\s*[({].*[)}]|(?:jest|vi)\.fn\(.*\)|"#,
        r#"(?:Magic|Async)?Mock\(.*\)|mocker\.\w+\(.*\)|sinon\.\w+\(.*\)|Default::default\(\)|vec!\[.*\]|"#,
        r#"String::(?:new|from)\(.*\)|\[.*\]|\{.*\}|["'`_].*|-?\d[\d_.]*|true|false|True|False|None|null|undefined|nil)$"#
    ));
    let stmts = src.code[t.body.0..t.body.1]
        .split([';', '\n'])
        .map(str::trim);
    let mut stmts = stmts.filter(|s| !s.is_empty() && *s != "pass").peekable();
    stmts.peek().is_some()
        && stmts.all(|s| {
            binding
                .captures(s)
                .is_some_and(|c| setup_value.is_match(c[1].trim()))
        })
}

/// Per test: `skipped_without_reason`, `tautology`, and by what its
/// assertions check, `no_assertion`/`setup_only`, `snapshot_only`,
/// `asserts_only_on_mocks` or `weak_assertion`.
fn empty_and_weak(cx: &Ctx, tests: &[TestCase], assertions: &[Vec<Assertion>]) {
    for (t, asserts) in tests.iter().zip(assertions) {
        let name = &t.name;
        if let Some(reason) = t.skipped {
            let what = if t.attrs == "group" {
                "test group"
            } else {
                "test"
            };
            if !reason {
                cx.report(
                    "skipped_without_reason",
                    t.off,
                    format!("{what} `{name}` is skipped without a reason"),
                );
            }
            continue;
        }
        for Assertion(off, _, why) in asserts {
            // testing an equality implementation may compare a value with itself
            let eq_test = re!(r"(?i)eq|equal|reflexiv|compar|identity|same|ord").is_match(name);
            if let Some(why) = why
                .as_ref()
                .filter(|why| !eq_test || !why.contains("with itself"))
            {
                cx.report(
                    "tautology",
                    *off,
                    format!("tautological assertion in `{name}`: {why}"),
                );
            }
        }
        let all = |k: Kind| asserts.iter().all(|x| x.1 == k);
        let (id, msg) = if asserts.is_empty() {
            let body = cx.src.masked[t.body.0..t.body.1].trim();
            let empty = body.is_empty() || body == "pass";
            if !empty && setup_only(&cx.src, t) {
                (
                    "setup_only",
                    format!("test `{name}` only sets up objects: nothing is exercised or checked"),
                )
            } else {
                (
                    "no_assertion",
                    format!(
                        "test `{name}` {}",
                        if empty {
                            "is empty"
                        } else {
                            "has no assertion"
                        }
                    ),
                )
            }
        } else if all(Kind::Snapshot) {
            (
                "snapshot_only",
                format!("test `{name}` only compares snapshots"),
            )
        } else if all(Kind::Mock) {
            (
                "asserts_only_on_mocks",
                format!("test `{name}` only checks how mocks were called, never a result"),
            )
        } else if all(Kind::Weak) {
            (
                "weak_assertion",
                format!("test `{name}` only checks that a value exists or is truthy"),
            )
        } else {
            continue;
        };
        cx.report(id, t.off, msg);
    }
}

fn commented_out(cx: &Ctx) {
    let src = &cx.src;
    let def = match src.lang {
        Lang::Python => re!(r"^(?:async\s+)?def\s+test\w*\s*\(|^@pytest\.mark\."),
        Lang::Js | Lang::Ts => re!(r#"^(?:it|test|describe|specify)(?:\.\w+)?\s*\(\s*['"`]"#),
        Lang::Rust => re!(r"^#\[(?:\w+::)?test\]|^(?:async\s+)?fn\s+test_\w*\s*\("),
        Lang::Go => re!(r"^func\s+Test\w*\s*\("),
        _ => re!(r"^@Test\b"),
    };
    let mut last_line: Option<usize> = None;
    for c in &src.comments {
        let raw = src.text[src.line_start(c.line)..src.line_end(c.line)].trim_start();
        let doc = ["///", "//!", "/**", "*"]
            .iter()
            .any(|d| raw.starts_with(d));
        if !doc && def.is_match(c.text.trim()) {
            // one finding per block of commented-out lines
            if last_line.is_none_or(|l| c.line > l + 3) {
                let off = src.line_start(c.line) + src.indent_bytes(c.line);
                cx.report(
                    "commented_out_test",
                    off,
                    "commented-out test: delete it or skip it with a reason",
                );
            }
            last_line = Some(c.line);
        }
    }
}

fn copy_pasted(cx: &Ctx, tests: &[TestCase]) {
    let mut seen: BTreeMap<String, (&str, u32)> = BTreeMap::new();
    for t in tests
        .iter()
        .filter(|t| t.body.0 < t.body.1 && t.skipped.is_none())
    {
        let body = norm(&cx.src.code[t.body.0..t.body.1]);
        if body.len() < 40 {
            continue;
        }
        match seen.get(&body) {
            Some((first, line)) => {
                let msg = format!(
                    "test `{}` has the same body as `{first}` (line {line})",
                    t.name
                );
                cx.report("copy_pasted_bodies", t.off, msg);
            }
            None => {
                seen.insert(body, (&t.name, cx.src.line_no(t.off)));
            }
        }
    }
}

// ---------------------------------------------------------------- isolation

/// Bodies of setup/teardown hooks (`beforeEach`, `setUp`, fixtures…).
fn hook_ranges(src: &Source) -> Vec<(usize, usize)> {
    if src.lang.is_js() {
        return re!(
            r"\b(?:beforeEach|afterEach|beforeAll|afterAll|before|after|setup|teardown)\s*\("
        )
        .find_iter(&src.masked)
        .filter_map(|m| src.match_close(m.end() - 1).map(|c| (m.end(), c)))
        .collect();
    }
    let hook = |f: &Func| {
        let n = f.name.to_ascii_lowercase();
        ["setup", "teardown", "set_up", "tear_down"]
            .iter()
            .any(|p| n.starts_with(p))
            || n == "testmain"
            || f.decorators.iter().any(|d| d.contains("fixture"))
    };
    src.functions()
        .iter()
        .filter(|f| hook(f))
        .filter_map(|f| f.body)
        .collect()
}

/// Variables declared outside the tests that a test may share: `(name,
/// offset)`; and Python `global x` rebinding in a test is reported.
fn shared_variables(
    cx: &Ctx,
    bodies: &[(usize, usize)],
    hooks: &[(usize, usize)],
) -> Vec<(String, usize)> {
    let m = &cx.src.masked;
    let lang = cx.src.lang;
    let decl = match lang {
        Lang::Python => re!(
            r"(?m)^([A-Za-z_]\w*)\s*(?::[^=\n]+)?=\s*(?:\[|\{|set\(|dict\(|list\(|collections\.\w+\(|defaultdict\(|deque\(|Counter\(|OrderedDict\()"
        ),
        Lang::Js | Lang::Ts => re!(
            r"\b(?:(let|var)\s+([A-Za-z_$][\w$]*)|const\s+([A-Za-z_$][\w$]*)\s*=\s*(?:\[|\{|new\s+(?:Map|Set|Array|WeakMap)\b))"
        ),
        Lang::Rust => re!(
            r"\bstatic\s+(?:mut\s+([A-Z_][A-Z0-9_]*)|([A-Z_][A-Z0-9_]*)\s*:\s*(?:std::sync::atomic::)?Atomic\w+)"
        ),
        Lang::Go => re!(r"(?m)^var\s+([A-Za-z_]\w*)"),
        _ => re!(
            r"\bstatic\s+((?:(?:private|public|protected|volatile|final)\s+)*)[\w<>\[\], ]+?\s+([a-zA-Z_]\w*)\s*[=;]"
        ),
    };
    let mut shared = Vec::new();
    for c in decl.captures_iter(m) {
        let g = match lang {
            Lang::Java if c[1].contains("final") => continue,
            Lang::Java => c.get(2),
            Lang::Js | Lang::Ts => c.get(2).or_else(|| c.get(3)),
            _ => c.get(1).or_else(|| c.get(2)),
        };
        let Some(g) = g else { continue };
        if !lang.is_js() || (!in_any(bodies, g.start()) && !in_any(hooks, g.start())) {
            shared.push((g.as_str().to_string(), g.start()));
        }
    }
    if lang == Lang::Python {
        for c in re!(r"(?m)^[ \t]+global\s+(\w+)").captures_iter(m) {
            let g = c.get(0).unwrap();
            let off = g.start() + (g.as_str().len() - g.as_str().trim_start().len());
            if in_any(bodies, off) {
                cx.report(
                    "shared_mutable_state",
                    off,
                    format!("test rebinds the module global `{}`", &c[1]),
                );
            }
        }
    }
    if lang == Lang::Go {
        for b in re!(r"(?m)^var\s*\(").find_iter(m) {
            let Some(close) = cx.src.match_close(b.end() - 1) else {
                continue;
            };
            let block = &m[b.end()..close];
            for line in block.lines() {
                if let Some(name) = line.split_whitespace().next()
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                {
                    shared.push((name.to_string(), b.end() + block.find(line).unwrap_or(0)));
                }
            }
        }
    }
    shared
}

/// `shared_mutable_state`: a test mutates a variable shared by the tests
/// of the file, and nothing resets it.
fn isolation(cx: &Ctx, tests: &[TestCase]) {
    // every mutation in the tests, by the name mutated
    let mutate = re!(concat!(
        r"(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*(?:\+\+|--|[+\-*/|&]?=[^=>])",
        r"|(?:\+\+|--)([A-Za-z_$][\w$]*)",
        r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\.\s*(?:push|pop|shift|unshift|splice|set|add|delete|clear|append|",
        r"extend|update|insert|remove|setdefault|sort|reverse|store|fetch_\w+|swap)\s*\(",
        r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\[[^\]\n]*\]\s*=[^=]",
    ));
    let bodies: Vec<(usize, usize)> = tests
        .iter()
        .filter(|t| t.skipped.is_none())
        .map(|t| t.body)
        .collect();
    let hooks = hook_ranges(&cx.src);
    let shared = shared_variables(cx, &bodies, &hooks);
    let m = &cx.src.masked;
    let shared_names: BTreeMap<&str, usize> =
        shared.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let mutated = |text: &str, name: &str| {
        mutate
            .captures_iter(text)
            .any(|c| c.iter().skip(1).flatten().any(|g| g.as_str() == name))
    };
    let mut reported = BTreeSet::new();
    for &(a, z) in &bodies {
        let body = &m[a..z];
        for g in mutate
            .captures_iter(body)
            .filter_map(|c| c.iter().skip(1).flatten().next())
        {
            let name = g.as_str();
            let Some(&decl) = shared_names.get(name) else {
                continue;
            };
            // restored by a cleanup in the same test, reset by a hook, or a local
            if (decl >= a && decl < z)
                || reported.contains(name)
                || body.contains("Cleanup(")
                || (body.contains("defer") && cx.src.lang == Lang::Go)
                || hooks.iter().any(|&(ha, hz)| mutated(&m[ha..hz], name))
                || shadowed(cx.src.lang, name, body)
            {
                continue;
            }
            reported.insert(name);
            let msg =
                format!("test mutates `{name}`, shared by every test of the file and never reset");
            cx.report("shared_mutable_state", a + g.start(), msg);
        }
    }
}

/// The test declares its own local of that name.
fn shadowed(lang: Lang, name: &str, body: &str) -> bool {
    let n = regex::escape(name);
    let pat = match lang {
        Lang::Go => format!(r"\b{n}\s*(?:,\s*\w+\s*)*:=|\bvar\s+{n}\b|,\s*{n}\s*(?:,\s*\w+\s*)*:="),
        Lang::Js | Lang::Ts => format!(r"\b(?:let|const|var)\s+{n}\b"),
        Lang::Python => format!(r"(?m)^[ \t]*{n}\s*(?::[^=\n]+)?=[^=]"),
        Lang::Rust => format!(r"\blet\s+(?:mut\s+)?{n}\b"),
        _ => format!(r"\b[\w<>\[\]]+\s+{n}\s*="),
    };
    Regex::new(&pat).is_ok_and(|r| r.is_match(body))
}

/// (languages, what creates the resource, what cleans it up, what it is)
#[rustfmt::skip]
const RESOURCES: &[(&[Lang], &str, &str, &str)] = &[
    (&[Lang::Python], r"\btempfile\s*\.\s*(?:mkdtemp|mkstemp)\s*\(|\bNamedTemporaryFile\s*\([^)]*delete\s*=\s*False",
        r"\bshutil\s*\.\s*rmtree\b|\bos\s*\.\s*(?:remove|unlink|rmdir)\b|\.unlink\s*\(|\baddCleanup\b|\.cleanup\s*\(|\brmtree\b",
        "temporary file or directory"),
    (&[Lang::Python], r"\b(?:HTTPServer|ThreadingHTTPServer|TCPServer|UDPServer|socketserver\.\w+Server)\s*\(|\bsubprocess\s*\.\s*Popen\s*\(",
        r"\.(?:shutdown|server_close|terminate|kill|close|wait|communicate)\s*\(|\baddCleanup\b|\bwith\s+subprocess\b",
        "server or process"),
    (&[Lang::Js, Lang::Ts], r"\b(?:mkdtempSync|mkdtemp)\s*\(|\btmp\s*\.\s*dirSync\s*\(",
        r"\b(?:rmSync|rmdirSync|unlinkSync|rimraf|removeCallback)\b|\.rm\s*\(|\brm\s*\(", "temporary directory"),
    (&[Lang::Js, Lang::Ts], r"\.listen\s*\(|\bcreateServer\s*\(|\bsetupServer\s*\(|\bpuppeteer\s*\.\s*launch\s*\(|\bchromium\s*\.\s*launch\s*\(",
        r"\.close\s*\(|\.stop\s*\(|\.destroy\s*\(", "server or browser"),
    (&[Lang::Rust], r"\btemp_dir\s*\(\s*\)", r"\bremove_file\b|\bremove_dir_all\b|\bremove_dir\b",
        "file under the system temp directory"),
    (&[Lang::Rust], r"\.spawn\s*\(\s*\)", r"\.kill\s*\(|\.wait\s*\(|\.wait_with_output\s*\(|\.join\s*\(",
        "spawned process or thread"),
    (&[Lang::Go], r"\b(?:os\.MkdirTemp|ioutil\.TempDir|os\.CreateTemp|ioutil\.TempFile)\s*\(",
        r"\bos\.RemoveAll\b|\bos\.Remove\b", "temporary file or directory"),
    (&[Lang::Go], r"\bhttptest\.New(?:TLS|Unstarted)?Server\s*\(|\bnet\.Listen\s*\(", r"\.Close\s*\(",
        "test server or listener"),
    (&[Lang::Java], r"\b(?:File\.createTempFile|Files\.createTemp(?:File|Directory))\s*\(",
        r"\.delete\s*\(|deleteOnExit|Files\.delete|@TempDir|deleteRecursively", "temporary file"),
];

/// `missing_cleanup`: a [`RESOURCES`] row created in a file that never
/// cleans it up.
fn missing_cleanup(cx: &Ctx) {
    static COMPILED: LazyLock<Vec<(Regex, Regex)>> = LazyLock::new(|| {
        RESOURCES
            .iter()
            .map(|r| (compile(r.1), compile(r.2)))
            .collect()
    });
    let src = &cx.src;
    let m = &src.masked;
    for ((langs, .., what), (create, cleanup)) in RESOURCES.iter().zip(COMPILED.iter()) {
        if !langs.contains(&src.lang) || cleanup.is_match(m) {
            continue;
        }
        for c in create.find_iter(m) {
            let line = src.masked_line(src.line_index(c.start()));
            if !line.trim_start().starts_with("with ") && !line.contains("using ") {
                let skip = c.as_str().len()
                    - c.as_str()
                        .trim_start_matches(|ch: char| !ch.is_alphanumeric())
                        .len();
                cx.report(
                    "missing_cleanup",
                    c.start() + skip,
                    format!("{what} is created but never cleaned up"),
                );
            }
        }
    }
}

// ---------------------------------------------------------------- subject: coverage and use

/// Local files the test file imports (its subject), resolved on disk, and
/// whether it imports or uses the project's code at all.
fn subject_files(cx: &Ctx, manifest: &Manifest, cache: &mut Cache) -> (Vec<PathBuf>, bool) {
    let fdir = cx
        .root
        .join(Path::new(cx.rel).parent().unwrap_or(Path::new("")));
    let (mut files, local) = match cx.src.lang {
        Lang::Python => py_subject(cx, manifest, &fdir),
        Lang::Js | Lang::Ts => js_subject(cx, manifest, &fdir),
        Lang::Rust if !is_test_path(cx.rel) => (vec![cx.root.join(cx.rel)], true),
        Lang::Rust => rust_subject(cx, manifest, cache),
        Lang::Go => go_subject(cx, manifest, cache, fdir),
        _ => (Vec::new(), true),
    };
    files.sort();
    files.dedup();
    (files, local)
}

/// Python: `from x import y` and `import x` of the project's modules
/// (relative, or a top-level module of the project), following re-exports
/// of a package's `__init__.py` one level.
fn py_subject(cx: &Ctx, manifest: &Manifest, fdir: &Path) -> (Vec<PathBuf>, bool) {
    let from = re!(r"(?m)^[ \t]*from\s+(\.*)([\w.]*)\s+import\s+\(?\s*([\w\s,*]+)");
    let (root, src) = (cx.root, &cx.src);
    let mdir = root.join(&manifest.dir);
    let bases = [
        mdir.clone(),
        mdir.join("src"),
        root.to_path_buf(),
        fdir.to_path_buf(),
    ];
    let resolve = |base: &Path, comps: &[&str]| -> Option<PathBuf> {
        let p = comps.iter().fold(base.to_path_buf(), |p, c| p.join(c));
        [p.with_extension("py"), p.join("__init__.py")]
            .into_iter()
            .find(|f| f.is_file())
    };
    let find = |comps: &[&str]| bases.iter().find_map(|b| resolve(b, comps));
    let is_local = |top: &str, dir_too: bool| {
        manifest
            .python
            .local_modules
            .contains(&top.to_ascii_lowercase())
            || fdir.join(format!("{top}.py")).is_file()
            || (dir_too && fdir.join(top).is_dir())
    };
    let (mut modules, mut local) = (Vec::new(), false);
    for c in from.captures_iter(&src.masked) {
        let dots = c[1].len();
        let comps: Vec<&str> = c[2].split('.').filter(|s| !s.is_empty()).collect();
        let names: Vec<&str> = c[3]
            .split(',')
            .filter_map(|n| n.split_whitespace().next())
            .collect();
        if dots > 0 {
            let mut base = fdir.to_path_buf();
            for _ in 1..dots {
                base.pop();
            }
            local = true;
            if comps.is_empty() {
                modules.extend(names.iter().filter_map(|n| resolve(&base, &[n])));
                modules.extend(resolve(&base, &[]));
            } else {
                modules.extend(resolve(&base, &comps));
            }
        } else if comps.first().is_some_and(|top| is_local(top, true)) {
            local = true;
            if let Some(p) = find(&comps) {
                // `from pkg import mod` may name a module
                modules.extend(
                    names
                        .iter()
                        .filter_map(|n| find(&[&comps[..], &[n]].concat())),
                );
                modules.push(p);
            }
        }
    }
    for c in re!(r"(?m)^[ \t]*import\s+([\w.]+)").captures_iter(&src.masked) {
        let comps: Vec<&str> = c[1].split('.').collect();
        if is_local(comps[0], false) {
            local = true;
            modules.extend(find(&comps));
        }
    }
    let mut files = Vec::new();
    for p in modules {
        if p.file_name().is_some_and(|n| n == "__init__.py")
            && let Some(text) = read_text(&p)
        {
            let init = Source::new(Lang::Python, &text);
            let dir = p.parent().unwrap_or(Path::new(""));
            for c in from.captures_iter(&init.masked).filter(|c| c[1].len() == 1) {
                let comps: Vec<&str> = c[2].split('.').filter(|s| !s.is_empty()).collect();
                files.extend(resolve(dir, &comps));
            }
        }
        files.push(p);
    }
    (files, local)
}

/// JS/TS: relative imports resolved to files; aliases, the package itself
/// and workspace members count as the project's code.
fn js_subject(cx: &Ctx, manifest: &Manifest, fdir: &Path) -> (Vec<PathBuf>, bool) {
    let (mut files, mut local) = (Vec::new(), false);
    // `jest.requireActual(…)` names a module, not the subject
    for (_, spec, _) in js_specs(&cx.src)
        .into_iter()
        .filter(|(.., m)| !m.contains("Actual"))
    {
        if spec.starts_with('.') {
            local = true;
            files.extend(resolve_js(fdir, spec, cx.root));
        } else if spec.starts_with("@/") || spec.starts_with(['~', '#', '$']) {
            local = true;
        } else if let Some(npm) = &manifest.npm {
            let first = spec.split('/').next().unwrap_or("");
            // an alias, or the package itself or a workspace member
            local |= npm
                .aliases
                .iter()
                .any(|a| !a.is_empty() && spec.starts_with(a.as_str()))
                || npm.base_url_entries.contains(first)
                || npm.own_names.contains(&npm_package(spec));
        }
    }
    (files, local)
}

/// Rust integration tests: the crate's sources, and whether the test names
/// the crate (or is undecidable without a Cargo.toml).
fn rust_subject(cx: &Ctx, manifest: &Manifest, cache: &mut Cache) -> (Vec<PathBuf>, bool) {
    #[rustfmt::skip]
    const USES: &[&str] = &[
        "super::", "crate::", "trybuild", "CARGO_BIN_EXE_", "cargo_bin", "CARGO_MANIFEST_DIR",
    ];
    let Some(cargo) = &manifest.cargo else {
        return (Vec::new(), true); // undecidable without Cargo.toml
    };
    let t = &cx.src.masked;
    let names_crate = |n: &String| t.contains(&format!("{n}::")) || t.contains(&format!("use {n}"));
    let local = cargo.crate_names.iter().any(names_crate)
        || USES.iter().any(|u| t.contains(u))
        || re!(r"(?m)^[ \t]*mod\s+\w+\s*;").is_match(t);
    let crate_dir = cx.root.join(&cargo.dir);
    let list = cache
        .rust_sources
        .entry(crate_dir.clone())
        .or_insert_with(|| {
            let rs = |e: &walkdir::DirEntry| {
                e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs")
            };
            let walk = walkdir::WalkDir::new(crate_dir.join("src"))
                .max_depth(6)
                .into_iter();
            walk.filter_map(|e| e.ok())
                .filter(rs)
                .map(|e| e.into_path())
                .take(400)
                .collect()
        });
    (list.clone(), local)
}

/// Go: the package's non-test files; the test uses them when it imports
/// the module or the package (`package x_test`), or names one of their
/// identifiers (same package).
fn go_subject(
    cx: &Ctx,
    manifest: &Manifest,
    cache: &mut Cache,
    fdir: PathBuf,
) -> (Vec<PathBuf>, bool) {
    let src = &cx.src;
    let pkg = re!(r"(?m)^package\s+(\w+)")
        .captures(&src.masked)
        .map(|c| c[1].to_string())
        .unwrap_or_default();
    let (files, names) = cache.go_packages.entry(fdir.clone()).or_insert_with(|| {
        let def = re!(r"(?m)^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)([A-Za-z_]\w*)");
        let (mut files, mut names) = (Vec::new(), BTreeSet::new());
        for e in std::fs::read_dir(&fdir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
        {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".go") && !n.ends_with("_test.go") {
                if let Some(text) = read_text(&e.path()) {
                    names.extend(def.captures_iter(&text).map(|c| c[1].to_string()));
                }
                files.push(e.path());
            }
        }
        (files, names)
    });
    let module = manifest.go.as_ref().map_or("", |g| g.module.as_str());
    let imports_module = !module.is_empty()
        && src
            .strings
            .iter()
            .any(|s| src.text[s.start..s.end].starts_with(module));
    // a `package x_test` importing the package under test
    let external = pkg.strip_suffix("_test").is_some_and(|base| {
        go_imports(src)
            .iter()
            .any(|p| p.spec.rsplit('/').next() == Some(base))
    });
    // same package: uses the subject if it names one of its identifiers
    let same = !pkg.ends_with("_test")
        && !names.is_empty()
        && re!(r"[A-Za-z_]\w*")
            .find_iter(&src.masked)
            .any(|i| names.contains(i.as_str()));
    (files.clone(), imports_module || external || same)
}

/// The functions of a subject file: whether each has an error path, is
/// async, takes parameters (`exclude_tests`: leave out `#[cfg(test)]`
/// items).
fn subject_functions(path: &Path, cache: &mut Cache, exclude_tests: bool) -> Vec<SubjectFn> {
    if let Some(v) = cache.subjects.get(path) {
        return v.clone();
    }
    let mut out = Vec::new();
    if let (Some(lang), Some(text)) = (path.to_str().and_then(scanned_lang), read_text(path)) {
        let src = Source::new(lang, &text);
        let tests = src.cfg_test_ranges();
        for f in src
            .functions()
            .into_iter()
            .filter(|f| !exclude_tests || !in_any(&tests, f.start))
        {
            let Some((a, b)) = f.body else { continue };
            let body = &src.masked[a..b.max(a)];
            let ret = f.ret.unwrap_or_default();
            let negative = match lang {
                Lang::Python => re!(r"\braise\b|\breturn\s+(?:None|False)\b|(?m)^[ \t]*return\s*$").is_match(body),
                Lang::Js | Lang::Ts => {
                    re!(r"\bthrow\b|\breturn\s+(?:null|undefined|false)\b|\bPromise\s*\.\s*reject\b|\breject\s*\(")
                        .is_match(body)
                }
                Lang::Rust => {
                    let errs = re!(r"\bpanic!|\bassert!|\bunreachable!|\bbail!|\bErr\s*\(|\bNone\b");
                    ret.contains("Result") || ret.contains("Option") || errs.is_match(body)
                }
                Lang::Go => {
                    ret.contains("error")
                        || re!(r"\bpanic\s*\(|errors\.New|fmt\.Errorf|\breturn\s+(?:nil|false)\b").is_match(body)
                }
                _ => body.contains("throw "),
            };
            let counted = |&&(x, y): &&(usize, usize)| {
                let p = src.code[x..y].trim();
                !matches!(p, "self" | "cls" | "&self" | "&mut self" | "mut self")
                    && !p.starts_with('*')
                    || p.starts_with("*args")
            };
            let params = split_args(&src.masked, f.params.0, f.params.1)
                .iter()
                .filter(counted)
                .count();
            let is_async = f.is_async || ret.contains("Promise<") || ret.contains("Future");
            out.push(SubjectFn {
                name: f.name,
                negative,
                is_async,
                params,
            });
        }
    }
    cache.subjects.insert(path.to_path_buf(), out.clone());
    out
}

/// pytest's own fixtures: a test taking only these gets no subject from them.
#[rustfmt::skip]
const BUILTIN_FIXTURES: &[&str] = &[
    "self", "cls", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "monkeypatch",
    "capsys", "capsysbinary", "capfd", "capfdbinary", "caplog", "request", "recwarn",
    "pytestconfig", "record_property", "record_testsuite_property", "record_xml_attribute",
    "testdir", "pytester", "doctest_namespace", "cache", "mocker", "event_loop", "anyio_backend",
    "subtests",
];

/// What marks a test file as driving the program from outside (end to end):
/// it needs no import of the subject.
#[rustfmt::skip]
const E2E_MARKS: &[&str] = &[
    "page.goto", "cy.visit", "@playwright/test", "puppeteer", "supertest", "webdriverio",
    "selenium", "subprocess", "http://localhost", "http://127.0.0.1", "exec.Command", "os/exec",
    "Command::new",
];

/// `subject_not_used`: the test file neither imports the project's code,
/// nor drives it end to end, nor takes a pytest fixture that may provide it.
fn subject_not_used(cx: &Ctx, tests: &[TestCase], first_active: &TestCase, imports_local: bool) {
    let e2e = ["e2e", "cypress", "playwright"]
        .iter()
        .any(|p| cx.rel.contains(p))
        || E2E_MARKS.iter().any(|p| cx.src.code.contains(p));
    let fixture_params = cx.src.lang == Lang::Python && {
        let parametrize = tests
            .iter()
            .flat_map(|t| t.attrs.lines().filter(|l| l.contains("parametrize")));
        let parametrized: BTreeSet<String> = parametrize
            .flat_map(|l| {
                let inner = l.split_once('(').map_or("", |(_, r)| r);
                let first = inner.split(['"', '\'']).nth(1).unwrap_or("");
                first
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        let fixture =
            |p: &String| !BUILTIN_FIXTURES.contains(&p.as_str()) && !parametrized.contains(p);
        tests.iter().any(|t| t.params.iter().any(fixture))
    };
    if !imports_local && !e2e && !fixture_params && cx.src.lang != Lang::Java {
        cx.report(
            "subject_not_used",
            first_active.off,
            "the test file never imports or uses the code under test",
        );
    }
}

/// `subject_not_used`, and the coverage of each subject function the tests
/// call: an error path, an edge value, an awaited async call.
fn subject_checks(
    cx: &Ctx,
    tests: &[TestCase],
    assertions: &[Vec<Assertion>],
    manifest: &Manifest,
    cache: &mut Cache,
) {
    let (files, imports_local) = subject_files(cx, manifest, cache);
    let is_active = |t: &TestCase| t.skipped.is_none() && t.attrs != "group";
    let active: Vec<&TestCase> = tests.iter().filter(|t| is_active(t)).collect();
    // where each active test asserts: (start, end) of its assertion statements
    let spans: Vec<Vec<(usize, usize)>> = tests
        .iter()
        .zip(assertions)
        .filter(|(t, _)| is_active(t))
        .map(|(_, xs)| {
            xs.iter()
                .map(|x| (x.0, assertion_end(&cx.src, x.0)))
                .collect()
        })
        .collect();
    let Some(first_active) = active.first() else {
        return;
    };
    subject_not_used(cx, tests, first_active, imports_local);
    let mut funcs: BTreeMap<String, SubjectFn> = BTreeMap::new();
    for f in &files {
        for sf in subject_functions(f, cache, cx.src.lang == Lang::Rust) {
            if !(sf.name.starts_with("test")
                || sf.name.starts_with("Test")
                || sf.name.starts_with('_'))
            {
                funcs.entry(sf.name.clone()).or_insert(sf);
            }
        }
    }
    // every call site in the tests: name → (test index, offset of `(`)
    let m = &cx.src.masked;
    let mut calls: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (ti, t) in active.iter().enumerate() {
        let (a, z) = t.body;
        for c in CALL.captures_iter(&m[a..z]) {
            let g = c.get(1).expect("group 1");
            if funcs.contains_key(g.as_str()) {
                calls
                    .entry(g.as_str())
                    .or_default()
                    .push((ti, a + c.get(0).expect("group 0").end() - 1));
            }
        }
    }
    for (name, sf) in &funcs {
        if let Some(sites) = calls.get(name.as_str()) {
            function_coverage(cx, name, sf, sites, &active, &spans);
        }
    }
}

/// The coverage checks of one subject function called at `sites` (test
/// index, offset of the call's `(`): `no_negative_path_test`,
/// `no_edge_case_test`, `async_without_async_test`.
fn function_coverage(
    cx: &Ctx,
    name: &str,
    sf: &SubjectFn,
    sites: &[(usize, usize)],
    active: &[&TestCase],
    spans: &[Vec<(usize, usize)>],
) {
    const AWAITED: &[&str] = &[
        "await",
        ".then(",
        "resolves",
        "rejects",
        "block_on",
        "asyncio.run",
        "run_until_complete",
        "done(",
    ];
    let src = &cx.src;
    let edge_name = re!(
        r"(?i)edge|empty|zero|boundar|limit|null|none|nil|negative|overflow|underflow|large|huge|long|unicode|whitespace|blank|single|min|max|corner|extreme"
    );
    let edge_token = re!(
        r#"(?:^|[\s(,=:{])(?:""|''|\[\s*\]|\{\s*\}|-\s*\d|0(?:\.0+)?\b|None\b|null\b|undefined\b|nil\b|NaN\b|-?Infinity\b|math\.inf\b)|vec!\[\s*\]|Vec::new\(\)|String::new\(\)|::MAX\b|::MIN\b|MAX_VALUE|MIN_VALUE|MAX_SAFE_INTEGER|sys\.maxsize|\bEPSILON\b|\.repeat\(\s*\d{3,}|\*\s*\d{3,}"#
    );
    let edge_arg = re!(
        r#"^(?:&?\[\s*\]|\{\s*\}|\(\s*\)|""|''|``|-?0(?:\.0+)?|-\s*\d[\d_.]*|None|null|undefined|nil|NaN|-?Infinity|vec!\[\s*\]|Vec::new\(\)|String::new\(\)|HashMap::new\(\)|float\(['"]-?(?:inf|nan)['"]\)|math\.(?:inf|nan)|f(?:32|64)::(?:NAN|INFINITY|NEG_INFINITY)|["']\s+["'])$|::MAX\b|::MIN\b|MAX_VALUE|MIN_VALUE|MAX_SAFE_INTEGER|MIN_SAFE_INTEGER|maxsize|\bEPSILON\b|\*\s*\d{3,}|\.repeat\s*\(\s*\d{3,}"#
    );
    let neg_name = re!(
        r"(?i)error|invalid|fail|throw|raise|reject|negative|bad|wrong|missing|none|null|nil|empty|zero|exceed|overflow|illegal|unauthori|forbidden|denied|not_?found|garbage|malformed|panic|incorrect|expired|short|too|boundary|edge|refuse|deny|absent|unknown"
    );
    let neg_body = re!(
        r"toThrow|\.rejects|\bthrows\b|\bassert\s*\.\s*(?:throws|rejects)|pytest\s*\.\s*raises|assertRaises|is_err|is_none|unwrap_err|expect_err|\bErr\s*\(|\bNone\b|\bnull\b|\bundefined\b|\bFalse\b|\bfalse\b|\bnil\b|\bError\b|errors\.Is|assertThrows|toBeNull|toBeUndefined|toBeFalsy|\.err\b|\berr\s*==|\berr\s*!="
    );
    // the tests whose subject `name` is: named after it, or asserting on
    // a call of it (not tests that merely use it for setup)
    let name_words = words(name);
    let mut callers: Vec<&TestCase> = Vec::new();
    let mut seen_tests = BTreeSet::new();
    let mut edge = false;
    for &(ti, open) in sites {
        let t = active[ti];
        let tw = words(&t.name.replace(|c: char| !c.is_alphanumeric(), "_"));
        let named = name_words
            .iter()
            .all(|w| tw.iter().any(|x| x.starts_with(w.as_str())));
        let asserted = spans[ti].iter().any(|&(a, z)| open >= a && open <= z);
        if !(named || asserted) {
            continue;
        }
        if seen_tests.insert(ti) {
            callers.push(t);
            // edge values may sit in test data (tables, parametrize)
            // rather than in the call itself
            let (a, z) = t.body;
            edge |= edge_name.is_match(&t.name)
                || edge_token.is_match(&src.code[a..z])
                || edge_token.is_match(&t.attrs);
        }
        if !edge {
            let (args, _) = call_args(src, open);
            edge = args.iter().any(|x| {
                let x = x.trim();
                let parts = split_top(x.trim_matches(['[', ']', '(', ')', '&']));
                edge_arg.is_match(x) || parts.iter().any(|y| edge_arg.is_match(y))
            });
        }
    }
    let Some(first) = callers.first() else {
        return;
    };
    let negative_test = |t: &&TestCase| {
        let (a, z) = t.body;
        neg_name.is_match(&t.name)
            || neg_body.is_match(&src.code[a..z])
            || t.attrs.contains("should_panic")
    };
    if sf.negative && !callers.iter().any(negative_test) {
        let msg = format!("`{name}` has an error path but no test exercises it");
        cx.report("no_negative_path_test", first.off, msg);
    }
    if sf.params > 0 && !edge {
        let msg = format!(
            "no test calls `{name}` with an edge value (empty, zero, negative, null, boundary)"
        );
        cx.report("no_edge_case_test", first.off, msg);
    }
    let sync_caller = callers.iter().find(|t| {
        let body = &src.masked[t.body.0..t.body.1];
        !t.is_async
            && !AWAITED.iter().any(|w| body.contains(w))
            && !body.trim_start().starts_with("return")
    });
    if let (true, Some(t)) = (sf.is_async, sync_caller) {
        let msg = format!(
            "`{name}` is async but test `{}` neither awaits it nor is async",
            t.name
        );
        cx.report("async_without_async_test", t.off, msg);
    }
}
