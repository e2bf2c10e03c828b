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
use super::manifest::{Manifest, Manifests};
use super::rules::Scan;
use super::source::{Lang, Source, scanned_lang, split_args};
use super::{Ctx, compile as re, in_any, read_text, words};
use crate::project::is_test_path;

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

#[derive(Debug, Clone)]
struct Assertion {
    off: usize,
    kind: Kind,
    tautology: Option<String>,
}

fn assertion(off: usize, kind: Kind) -> Assertion {
    Assertion {
        off,
        kind,
        tautology: None,
    }
}

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
    let Some(mut cx) = Ctx::new(root, rel, text, &NO_MANIFEST) else {
        return Vec::new();
    };
    let tests = find_tests(&cx.src);
    cx.patterns(Scan::AntiPatterns);
    commented_out(&mut cx);
    if !tests.is_empty() {
        let helpers = assertion_helpers(&cx.src, &tests);
        let assertions: Vec<Vec<Assertion>> = tests
            .iter()
            .map(|t| assertions_of(&cx.src, t, &helpers))
            .collect();
        empty_and_weak(&mut cx, &tests, &assertions);
        copy_pasted(&mut cx, &tests);
        isolation(&mut cx, &tests);
        missing_cleanup(&mut cx);
        let manifest = cache.manifests.for_file(root, rel).clone();
        subject_checks(&mut cx, &tests, &assertions, &manifest, cache);
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
    static SKIP_CALL: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:pytest\.skip|self\.skipTest|unittest\.skip)\s*\("));
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
                if let Some(m) = SKIP_CALL.find(t) {
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
        out.push(TestCase {
            skipped,
            is_async,
            params: params.collect(),
            attrs,
            ..TestCase::new(f.name, off, body)
        });
    }
    out
}

/// Split `a, b(c, d), e` at top-level commas (plain text).
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices().chain([(s.len(), ',')]) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 || i == s.len() => {
                if !s[start..i].trim().is_empty() {
                    out.push(s[start..i].trim());
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// A comment on the line of `off` or on the line before it (a reason for a
/// skip marker written next to it).
fn comment_near(src: &Source, off: usize) -> bool {
    let line = src.line_index(off);
    src.comments
        .iter()
        .any(|c| (c.line == line || c.line + 1 == line) && c.text.len() > 2)
}

fn js_tests(src: &Source) -> Vec<TestCase> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?:^|[^\w$.])(it|test|specify|xit|xtest|xspecify|fit|ftest|describe|context|suite|xdescribe|fdescribe)\b",
        )
    });
    let m = &src.masked;
    let b = m.as_bytes();
    let skip_ws = |mut p: usize| {
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        p
    };
    let mut out = Vec::new();
    // ranges of skipped describe blocks: their tests inherit the skip
    let mut skipped_groups: Vec<(usize, usize)> = Vec::new();
    for c in CALL.captures_iter(m) {
        let name_m = c.get(1).unwrap();
        let word = name_m.as_str();
        // the modifier chain: `.only`, `.skip`, `.each(…)`, `.skipIf(…)`
        let mut p = skip_ws(name_m.end());
        let mut mods: Vec<&str> = Vec::new();
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
        if b.get(p) != Some(&b'(') {
            continue;
        }
        let Some(close) = src.match_close(p) else {
            continue;
        };
        let open = p;
        let args = split_args(m, open + 1, close);
        let has = |x: &str| mods.contains(&x);
        // node:test options object `{ skip: … }`
        let mut opt_skip: Option<bool> = None;
        for t in args
            .iter()
            .skip(1)
            .map(|&(a, z)| &src.code[a..z])
            .filter(|t| t.starts_with('{'))
        {
            if let Some(i) = t.find("skip") {
                opt_skip = Some(
                    t[i + 4..]
                        .trim_start()
                        .trim_start_matches(':')
                        .trim_start()
                        .starts_with(['\'', '"', '`']),
                );
            }
            if t.contains("todo") {
                opt_skip = Some(true);
            }
        }
        let skipped = if has("todo") || has("skipIf") || has("runIf") {
            Some(true)
        } else if has("skip") || word.starts_with('x') {
            Some(comment_near(src, name_m.start()))
        } else {
            opt_skip
        };
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
            if skipped.is_some() || has("todo") {
                let case = TestCase::new(title, name_m.start(), (close, close));
                out.push(TestCase {
                    skipped: Some(skipped.unwrap_or(true)),
                    ..case
                });
            }
            continue;
        };
        let cb = &m[ca..cz];
        let braced = |o: usize| src.match_close(o).map_or((o + 1, cz), |e| (o + 1, e));
        let body = match cb.find("=>") {
            Some(arrow) => {
                let start = cz - m[ca + arrow + 2..cz].trim_start().len();
                if m[start..cz].starts_with('{') {
                    braced(start)
                } else {
                    (start, cz)
                }
            }
            None => cb.find('{').map_or((cz, cz), |o| braced(ca + o)),
        };
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
        let is_async = cb.trim_start().starts_with("async");
        out.push(TestCase {
            skipped,
            is_async,
            attrs: mods.join("."),
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
    args.first()
        .map(|&(a, z)| {
            src.code[a..z]
                .trim()
                .trim_matches(['\'', '"', '`'])
                .to_string()
        })
        .unwrap_or_default()
}

fn rust_tests(src: &Source) -> Vec<TestCase> {
    static ATTR: LazyLock<Regex> = LazyLock::new(|| re(r"#\[\s*([\w:]+)"));
    static FN: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)")
    });
    let m = &src.masked;
    let mut out = Vec::new();
    let mut seen_fn = BTreeSet::new();
    for a in ATTR.captures_iter(m) {
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
        let Some(fc) = FN.captures(&m[p..]) else {
            continue;
        };
        let name_m = fc.get(2).unwrap();
        let name_off = p + name_m.start();
        if !seen_fn.insert(name_off) {
            continue;
        }
        let Some(open) = src.body_open(p + name_m.end()) else {
            continue;
        };
        let Some(close) = src.match_close(open) else {
            continue;
        };
        let ignore = attrs.lines().find(|l| l.contains("ignore"));
        let skipped =
            ignore.map(|l| l.contains('=') || l.contains('"') || comment_near(src, start));
        let is_async =
            fc.get(1).is_some() || attrs.contains("tokio") || attrs.contains("async_std");
        out.push(TestCase {
            skipped,
            is_async,
            attrs,
            ..TestCase::new(name_m.as_str(), name_off, (open + 1, close))
        });
    }
    out
}

fn go_tests(src: &Source) -> Vec<TestCase> {
    static FN: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^func\s+(Test\w*)\s*\(\s*(\w+)\s+\*testing\.T\s*\)"));
    let m = &src.masked;
    let mut out = Vec::new();
    for c in FN.captures_iter(m) {
        let Some(open) = src.body_open(c.get(0).unwrap().end()) else {
            continue;
        };
        let Some(close) = src.match_close(open) else {
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
    static TEST: LazyLock<Regex> =
        LazyLock::new(|| re(r"@(?:Test|ParameterizedTest|RepeatedTest)\b"));
    static METHOD: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\w+)\s*\("));
    let m = &src.masked;
    let mut out = Vec::new();
    for t in TEST.find_iter(m) {
        // annotations before the method (for @Disabled) and after
        let ls = src.line_start(src.line_index(t.start()).saturating_sub(3));
        let Some(open) = src.body_open(t.end()) else {
            continue;
        };
        let methods = METHOD.captures_iter(&m[t.end()..open]);
        let Some(mc) = methods
            .filter(|c| !matches!(&c[1], "Test" | "DisplayName" | "Timeout" | "Tag"))
            .last()
        else {
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
    static LIT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"^(?:-?\d[\d_.]*[a-z0-9]*|true|false|True|False|None|null|undefined|nil|"[^"]*"|'[^']*'|`[^`$]*`)$"#,
        )
    });
    LIT.is_match(s.trim())
}

fn is_simple(s: &str) -> bool {
    static SIMPLE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^&?[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$"));
    SIMPLE.is_match(s.trim())
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
    (args.len() >= 2 && same_sides(args[0], args[1])).then(|| {
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
    static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"([A-Za-z_$][\w$]*)\s*\("));
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
                out.push(assertion(a + g.start(), Kind::Strong));
            }
        }
    }
    out
}

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

fn js_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static EXPECT: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[^\w$.])expect\s*\("));
    static ASSERT: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:^|[^\w$.])assert\s*(?:\.\s*(\w+)\s*)?\("));
    static OTHER: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"\.expect\s*\(|\.should\b|(?:^|[^\w$.])(?:expect|assert|verify|check|should)[A-Z_]\w*\s*\(|\bt\s*\.\s*",
            r"(?:is|not|deepEqual|notDeepEqual|like|throws|throwsAsync|notThrows|regex|true|false|assert|fail|equal|",
            r"same|strictSame|match|ok|notOk|error)\s*\(|\b(?:chai\.)?assert\s*\.\s*\w+\s*\("
        ))
    });
    static SINON: LazyLock<Regex> = LazyLock::new(|| re(r"\bsinon\s*\.\s*assert\s*\.\s*\w+\s*\("));
    #[rustfmt::skip]
    const MOCK_MATCHERS: &[&str] = &[
        "toHaveBeenCalled", "toBeCalled", "toHaveBeenLastCalled", "toHaveBeenNthCalled",
        "toHaveReturned", "toReturn", "lastCalledWith",
    ];
    let m = &src.masked;
    let body = &m[a..z];
    for e in EXPECT.find_iter(body) {
        let open = a + e.end() - 1;
        let (args, close) = call_args(src, open);
        // the matcher chain after `expect(…)`
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
            weak_if(
                existence
                    || (not
                        && matches!(matcher, "toBeNull" | "toBeUndefined" | "null" | "undefined")),
            )
        };
        let tautology = if is_literal(subject) && !subject.is_empty() {
            Some(format!("expect({subject}) checks a constant"))
        } else {
            let equality = matches!(
                matcher,
                "toBe" | "toEqual" | "toStrictEqual" | "equal" | "eql" | "equals"
            );
            (!not && equality && matcher_args.first().is_some_and(|x| same_sides(x, subject))).then(
                || format!("expect({subject}).{matcher}({subject}) compares a value with itself"),
            )
        };
        out.push(Assertion {
            off: a + e.start(),
            kind,
            tautology,
        });
    }
    for c in ASSERT.captures_iter(body) {
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
        out.push(Assertion {
            off,
            kind,
            tautology,
        });
    }
    out.extend(
        SINON
            .find_iter(body)
            .map(|s| assertion(a + s.start(), Kind::Mock)),
    );
    for o in OTHER.find_iter(body) {
        let t = o.as_str();
        if t.contains("assert") && t.contains('.') && !t.starts_with('t') {
            continue; // assert.x( already counted
        }
        let kind = if t.contains("snapshot") {
            Kind::Snapshot
        } else {
            weak_if(t.contains("truthy"))
        };
        out.push(assertion(a + o.start(), kind));
    }
}

fn has_comparison(s: &str) -> bool {
    static CMP: LazyLock<Regex> = LazyLock::new(|| {
        re(r"==|!=|<=|>=|[^=!<>-]>|<[^<]|\bin\b|\bis\b|\binstanceof\b|\bnot\s+in\b")
    });
    CMP.is_match(s)
}

fn py_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static ASSERT_STMT: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*assert\b"));
    static SELF_ASSERT: LazyLock<Regex> =
        LazyLock::new(|| re(r"\bself\s*\.\s*(assert\w*|fail\w*)\s*\("));
    static MOCK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\.assert_(?:called|not_called|any_call|has_calls|awaited|not_awaited)\w*\s*\(")
    });
    static STRONG: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"\bpytest\s*\.\s*(?:raises|warns|fail|deprecated_call)\s*\(|\braise\s+AssertionError\b|\.assert_\w+\s*\(|",
            r"(?:^|[^\w])(?:[Aa]ssert|[Cc]heck|[Vv]erify|[Ee]xpect)\w*\s*\(|\bsnapshot\s*\.\s*assert_match\s*\("
        ))
    });
    static MOCK_ATTR: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^\s*(?:not\s+)?[\w.]+\.(?:called|call_count|call_args|call_args_list|await_count|called_once)\b",
        )
    });
    static WEAK_CALL: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\s*(?:not\s+)?(?:isinstance|hasattr|callable)\s*\("));
    let m = &src.masked;
    let body = &m[a..z];
    let logical = src.logical_starts();
    for s in ASSERT_STMT.find_iter(body) {
        let start = a + s.end();
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
        let off = a + s.start() + (s.as_str().len() - s.as_str().trim_start().len());
        let (kind, tautology) =
            if expr.contains("snapshot") && (expr.contains("==") || expr.contains("match")) {
                (Kind::Snapshot, None)
            } else if MOCK_ATTR.is_match(expr_m) {
                (Kind::Mock, None)
            } else {
                let tautology = if truthy_literal(expr) {
                    Some(format!("`assert {expr}` is always true"))
                } else {
                    let same = expr.split_once("==").is_some_and(|(l, r)| same_sides(l, r));
                    same.then(|| format!("`assert {expr}` compares a value with itself"))
                };
                let weak = is_simple(expr.trim_start_matches("not ").trim())
                    || WEAK_CALL.is_match(expr)
                    || expr.ends_with("is not None")
                    || expr.ends_with("!= None");
                (weak_if(weak), tautology)
            };
        out.push(Assertion {
            off,
            kind,
            tautology,
        });
    }
    for c in SELF_ASSERT.captures_iter(body) {
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
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology,
        });
    }
    out.extend(
        MOCK.find_iter(body)
            .map(|x| assertion(a + x.start(), Kind::Mock)),
    );
    for s in STRONG.find_iter(body) {
        let skip = MOCK.is_match(s.as_str())
            || s.as_str().contains("self.")
            || body[..s.start()].trim_end().ends_with("self.");
        if !skip {
            let kind = if s.as_str().contains("snapshot") {
                Kind::Snapshot
            } else {
                Kind::Strong
            };
            out.push(assertion(a + s.start(), kind));
        }
    }
}

fn rust_assertions(src: &Source, t: &TestCase, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static MACRO: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\b(\w*assert\w*|panic|unreachable|bail|ensure|check|expect)!\s*[(\[{]")
    });
    static WEAK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\.unwrap\s*\(\s*\)|\.expect\s*\(|\?\s*;|\.unwrap_err\s*\(|\.expect_err\s*\(")
    });
    static MOCK: LazyLock<Regex> = LazyLock::new(|| re(r"\.expect_\w+\s*\(\s*\)"));
    static HELPER: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"(?:^|[^\w.:])(?:assert_\w+|check_\w+|verify_\w+)\s*(?:::\s*<[^>]*>)?\s*\(|\.assert\w*\s*\(|",
            r"\.compile_fail\s*\("
        ))
    });
    static SOME_OK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^!?\s*[^=<>|&]+\.(?:is_some|is_ok)\s*\(\s*\)$|^!\s*[^=<>|&]+\.is_empty\s*\(\s*\)$")
    });
    let m = &src.masked;
    let body = &m[a..z];
    if t.attrs.contains("should_panic") {
        out.push(assertion(t.off, Kind::Strong));
    }
    for c in MACRO.captures_iter(body) {
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
                weak_if(SOME_OK.is_match(first)),
                (first == "true").then(|| format!("{name}!(true) is always true")),
            )
        } else if name == "assert_eq" || name.ends_with("_assert_eq") {
            (Kind::Strong, self_compare(&format!("{name}!("), &args))
        } else {
            (Kind::Strong, None)
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology,
        });
    }
    out.extend(
        WEAK.find_iter(body)
            .map(|w| assertion(a + w.start(), weak_if(!w.as_str().contains("err")))),
    );
    out.extend(
        MOCK.find_iter(body)
            .map(|x| assertion(a + x.start(), Kind::Mock)),
    );
    for h in HELPER.find_iter(body) {
        let snapshot = h.as_str().contains(".assert") && body.contains("expect![");
        out.push(assertion(
            a + h.start(),
            if snapshot {
                Kind::Snapshot
            } else {
                Kind::Strong
            },
        ));
    }
}

fn go_assertions(src: &Source, t: &TestCase, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static LIB: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(assert|require|is|qt|c)\s*\.\s*(\w+)\s*\("));
    static T_CALL: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\b([A-Za-z_]\w*)\s*\.\s*(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(")
    });
    static T_ARG: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:^|[^\w.])[\w.]+\s*\(\s*([A-Za-z_]\w*)\s*[,)]"));
    let tv = t.params.first().map_or("t", String::as_str);
    let body = &src.masked[a..z];
    for c in T_CALL.captures_iter(body).filter(|c| &c[1] == tv) {
        out.push(assertion(a + c.get(0).unwrap().start(), Kind::Strong));
    }
    let mut lib_offs = BTreeSet::new();
    for c in LIB.captures_iter(body) {
        let (whole, lib, method) = (c.get(0).unwrap(), &c[1], &c[2]);
        let (args, _) = call_args(src, a + whole.end() - 1);
        lib_offs.insert(whole.start());
        let rest = args.get(1..).unwrap_or(&[]);
        let kind = if method.starts_with("Assert") && method != "Assert" {
            Kind::Mock
        } else {
            weak_if(
                matches!(method, "NotNil" | "NotEmpty" | "NoError")
                    || (method == "True" && rest.first().is_some_and(|x| is_simple(x))),
            )
        };
        let tautology = if matches!(method, "Equal" | "Equalf" | "EqualValues" | "Exactly") {
            self_compare(&format!("{lib}.{method}(t, "), rest)
        } else {
            (method == "True" && rest.first() == Some(&"true"))
                .then(|| format!("{lib}.True(t, true) is always true"))
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology,
        });
    }
    for x in T_ARG
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
            out.push(assertion(a + x.start(), Kind::Strong));
        }
    }
}

fn java_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static ASSERT: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:^|[^\w.])(?:Assertions\.|Assert\.)?(assert\w*|fail|verify)\s*\("));
    for c in ASSERT.captures_iter(&src.masked[a..z]) {
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
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology,
        });
    }
}

// ---------------------------------------------------------------- empty tests / weak assertions

/// The body only arranges: every statement binds a literal, a constructed
/// object or a mock, and nothing is called or checked.
fn setup_only(src: &Source, t: &TestCase) -> bool {
    static BINDING: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"^(?:(?:const|let|var)\s+|let\s+(?:mut\s+)?|var\s+)?[A-Za-z_$][\w$]*(?:\s*:\s*[^=]+)?\s*(?::=|=)\s*(.+?);?$"#,
        )
    });
    static SETUP_VALUE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r#"^(?:new\s+[A-Z][\w$.]*\s*\(.*\)|&?[A-Z][\w$]*(?:::new|::default|::from)?\s*[({].*[)}]|(?:jest|vi)\.fn\(.*\)|"#,
            r#"(?:Magic|Async)?Mock\(.*\)|mocker\.\w+\(.*\)|sinon\.\w+\(.*\)|Default::default\(\)|vec!\[.*\]|"#,
            r#"String::(?:new|from)\(.*\)|\[.*\]|\{.*\}|["'`_].*|-?\d[\d_.]*|true|false|True|False|None|null|undefined|nil)$"#
        ))
    });
    let stmts: Vec<&str> = src.code[t.body.0..t.body.1]
        .split([';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "pass")
        .collect();
    !stmts.is_empty()
        && stmts.iter().all(|s| {
            BINDING
                .captures(s)
                .is_some_and(|c| SETUP_VALUE.is_match(c[1].trim()))
        })
}

fn empty_and_weak(cx: &mut Ctx, tests: &[TestCase], assertions: &[Vec<Assertion>]) {
    static EQ_TEST: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?i)eq|equal|reflexiv|compar|identity|same|ord"));
    for (t, asserts) in tests.iter().zip(assertions) {
        let name = &t.name;
        if let Some(reason) = t.skipped {
            if !reason {
                let what = if t.attrs == "group" {
                    "test group"
                } else {
                    "test"
                };
                cx.report(
                    "skipped_without_reason",
                    t.off,
                    format!("{what} `{name}` is skipped without a reason"),
                );
            }
            continue;
        }
        for (x, why) in asserts
            .iter()
            .filter_map(|x| Some((x, x.tautology.as_ref()?)))
        {
            // testing an equality implementation may compare a value with itself
            if !EQ_TEST.is_match(name) || !why.contains("with itself") {
                cx.report(
                    "tautology",
                    x.off,
                    format!("tautological assertion in `{name}`: {why}"),
                );
            }
        }
        let all = |k: Kind| asserts.iter().all(|x| x.kind == k);
        if asserts.is_empty() {
            let body = cx.src.masked[t.body.0..t.body.1].trim();
            let empty = body.is_empty() || body == "pass";
            if !empty && setup_only(&cx.src, t) {
                let msg =
                    format!("test `{name}` only sets up objects: nothing is exercised or checked");
                cx.report("setup_only", t.off, msg);
            } else {
                let what = if empty {
                    "is empty"
                } else {
                    "has no assertion"
                };
                cx.report("no_assertion", t.off, format!("test `{name}` {what}"));
            }
        } else if all(Kind::Snapshot) {
            cx.report(
                "snapshot_only",
                t.off,
                format!("test `{name}` only compares snapshots"),
            );
        } else if all(Kind::Mock) {
            let msg = format!("test `{name}` only checks how mocks were called, never a result");
            cx.report("asserts_only_on_mocks", t.off, msg);
        } else if all(Kind::Weak) {
            cx.report(
                "weak_assertion",
                t.off,
                format!("test `{name}` only checks that a value exists or is truthy"),
            );
        }
    }
}

fn commented_out(cx: &mut Ctx) {
    static TEST_DEF: LazyLock<[Regex; 5]> = LazyLock::new(|| {
        [
            re(r"^(?:async\s+)?def\s+test\w*\s*\(|^@pytest\.mark\."),
            re(r#"^(?:it|test|describe|specify)(?:\.\w+)?\s*\(\s*['"`]"#),
            re(r"^#\[(?:\w+::)?test\]|^(?:async\s+)?fn\s+test_\w*\s*\("),
            re(r"^func\s+Test\w*\s*\("),
            re(r"^@Test\b"),
        ]
    });
    let src = &cx.src;
    let def = &TEST_DEF[match src.lang {
        Lang::Python => 0,
        Lang::Js | Lang::Ts => 1,
        Lang::Rust => 2,
        Lang::Go => 3,
        _ => 4,
    }];
    let mut last_line: Option<usize> = None;
    let mut hits = Vec::new();
    for c in &src.comments {
        let raw = src.text[src.line_start(c.line)..src.line_end(c.line)].trim_start();
        let doc = ["///", "//!", "/**", "*"]
            .iter()
            .any(|d| raw.starts_with(d));
        if !doc && def.is_match(c.text.trim()) {
            // one finding per block of commented-out lines
            if last_line.is_none_or(|l| c.line > l + 3) {
                hits.push(src.line_start(c.line) + src.indent_bytes(c.line));
            }
            last_line = Some(c.line);
        }
    }
    for off in hits {
        cx.report(
            "commented_out_test",
            off,
            "commented-out test: delete it or skip it with a reason",
        );
    }
}

fn copy_pasted(cx: &mut Ctx, tests: &[TestCase]) {
    let mut seen: BTreeMap<String, (&str, u32)> = BTreeMap::new();
    let mut hits = Vec::new();
    for t in tests
        .iter()
        .filter(|t| t.body.0 < t.body.1 && t.skipped.is_none())
    {
        let body = norm(&cx.src.code[t.body.0..t.body.1]);
        if body.len() < 40 {
            continue;
        }
        match seen.get(&body) {
            Some((first, line)) => hits.push((
                t.off,
                format!(
                    "test `{}` has the same body as `{first}` (line {line})",
                    t.name
                ),
            )),
            None => {
                seen.insert(body, (&t.name, cx.src.line_no(t.off)));
            }
        }
    }
    for (off, msg) in hits {
        cx.report("copy_pasted_bodies", off, msg);
    }
}

// ---------------------------------------------------------------- isolation

/// Bodies of setup/teardown hooks (`beforeEach`, `setUp`, fixtures…).
fn hook_ranges(src: &Source) -> Vec<(usize, usize)> {
    static JS_HOOK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\b(?:beforeEach|afterEach|beforeAll|afterAll|before|after|setup|teardown)\s*\(")
    });
    if src.lang.is_js() {
        return JS_HOOK
            .find_iter(&src.masked)
            .filter_map(|m| src.match_close(m.end() - 1).map(|c| (m.end(), c)))
            .collect();
    }
    let hook = |f: &super::source::Func| {
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
/// offset)`; and Python `global x` rebinding in a test.
fn shared_variables(
    cx: &Ctx,
    bodies: &[(usize, usize)],
    hooks: &[(usize, usize)],
    hits: &mut Vec<(usize, String)>,
) -> Vec<(String, usize)> {
    static DECL: LazyLock<[Regex; 5]> = LazyLock::new(|| {
        [
            re(
                r"(?m)^([A-Za-z_]\w*)\s*(?::[^=\n]+)?=\s*(?:\[|\{|set\(|dict\(|list\(|collections\.\w+\(|defaultdict\(|deque\(|Counter\(|OrderedDict\()",
            ),
            re(
                r"\b(?:(let|var)\s+([A-Za-z_$][\w$]*)|const\s+([A-Za-z_$][\w$]*)\s*=\s*(?:\[|\{|new\s+(?:Map|Set|Array|WeakMap)\b))",
            ),
            re(
                r"\bstatic\s+(?:mut\s+([A-Z_][A-Z0-9_]*)|([A-Z_][A-Z0-9_]*)\s*:\s*(?:std::sync::atomic::)?Atomic\w+)",
            ),
            re(r"(?m)^var\s+([A-Za-z_]\w*)"),
            re(
                r"\bstatic\s+((?:(?:private|public|protected|volatile|final)\s+)*)[\w<>\[\], ]+?\s+([a-zA-Z_]\w*)\s*[=;]",
            ),
        ]
    });
    static GLOBAL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]+global\s+(\w+)"));
    static VAR_BLOCK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^var\s*\("));
    let m = &cx.src.masked;
    let lang = cx.src.lang;
    let i = match lang {
        Lang::Python => 0,
        Lang::Js | Lang::Ts => 1,
        Lang::Rust => 2,
        Lang::Go => 3,
        _ => 4,
    };
    let mut shared = Vec::new();
    for c in DECL[i].captures_iter(m) {
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
        for c in GLOBAL.captures_iter(m) {
            let g = c.get(0).unwrap();
            let off = g.start() + (g.as_str().len() - g.as_str().trim_start().len());
            if in_any(bodies, off) {
                hits.push((off, format!("test rebinds the module global `{}`", &c[1])));
            }
        }
    }
    if lang == Lang::Go {
        for b in VAR_BLOCK.find_iter(m) {
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

fn isolation(cx: &mut Ctx, tests: &[TestCase]) {
    // every mutation in the tests, by the name mutated
    static MUTATE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*(?:\+\+|--|[+\-*/|&]?=[^=>])",
            r"|(?:\+\+|--)([A-Za-z_$][\w$]*)",
            r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\.\s*(?:push|pop|shift|unshift|splice|set|add|delete|clear|append|",
            r"extend|update|insert|remove|setdefault|sort|reverse|store|fetch_\w+|swap)\s*\(",
            r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\[[^\]\n]*\]\s*=[^=]",
        ))
    });
    let bodies: Vec<(usize, usize)> = tests
        .iter()
        .filter(|t| t.skipped.is_none())
        .map(|t| t.body)
        .collect();
    let hooks = hook_ranges(&cx.src);
    let mut hits: Vec<(usize, String)> = Vec::new();
    let shared = shared_variables(cx, &bodies, &hooks, &mut hits);
    let m = &cx.src.masked;
    let shared_names: BTreeMap<&str, usize> =
        shared.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let mutated = |text: &str, name: &str| {
        MUTATE
            .captures_iter(text)
            .any(|c| c.iter().skip(1).flatten().any(|g| g.as_str() == name))
    };
    let mut reported = BTreeSet::new();
    for &(a, z) in &bodies {
        let body = &m[a..z];
        for g in MUTATE
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
            hits.push((
                a + g.start(),
                format!("test mutates `{name}`, shared by every test of the file and never reset"),
            ));
        }
    }
    for (off, msg) in hits {
        cx.report("shared_mutable_state", off, msg);
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

fn missing_cleanup(cx: &mut Ctx) {
    const JS: &[Lang] = &[Lang::Js, Lang::Ts];
    /// (languages, what creates the resource, what cleans it up, what it is)
    #[rustfmt::skip]
    const RESOURCES: &[(&[Lang], &str, &str, &str)] = &[
        (&[Lang::Python], r"\btempfile\s*\.\s*(?:mkdtemp|mkstemp)\s*\(|\bNamedTemporaryFile\s*\([^)]*delete\s*=\s*False",
            r"\bshutil\s*\.\s*rmtree\b|\bos\s*\.\s*(?:remove|unlink|rmdir)\b|\.unlink\s*\(|\baddCleanup\b|\.cleanup\s*\(|\brmtree\b",
            "temporary file or directory"),
        (&[Lang::Python], r"\b(?:HTTPServer|ThreadingHTTPServer|TCPServer|UDPServer|socketserver\.\w+Server)\s*\(|\bsubprocess\s*\.\s*Popen\s*\(",
            r"\.(?:shutdown|server_close|terminate|kill|close|wait|communicate)\s*\(|\baddCleanup\b|\bwith\s+subprocess\b",
            "server or process"),
        (JS, r"\b(?:mkdtempSync|mkdtemp)\s*\(|\btmp\s*\.\s*dirSync\s*\(",
            r"\b(?:rmSync|rmdirSync|unlinkSync|rimraf|removeCallback)\b|\.rm\s*\(|\brm\s*\(", "temporary directory"),
        (JS, r"\.listen\s*\(|\bcreateServer\s*\(|\bsetupServer\s*\(|\bpuppeteer\s*\.\s*launch\s*\(|\bchromium\s*\.\s*launch\s*\(",
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
    static COMPILED: LazyLock<Vec<(Regex, Regex)>> =
        LazyLock::new(|| RESOURCES.iter().map(|r| (re(r.1), re(r.2))).collect());
    let src = &cx.src;
    let m = &src.masked;
    let mut hits = Vec::new();
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
                hits.push((
                    c.start() + skip,
                    format!("{what} is created but never cleaned up"),
                ));
            }
        }
    }
    for (off, msg) in hits {
        cx.report("missing_cleanup", off, msg);
    }
}

// ---------------------------------------------------------------- subject: coverage and use

/// Local files the test file imports (its subject), resolved on disk, and
/// whether it imports or uses the project's code at all.
fn subject_files(cx: &Ctx, manifest: &Manifest, cache: &mut Cache) -> (Vec<PathBuf>, bool) {
    let (root, rel, src) = (cx.root, cx.rel, &cx.src);
    let fdir = root.join(Path::new(rel).parent().unwrap_or(Path::new("")));
    let mut files = Vec::new();
    let mut local = false;
    match src.lang {
        Lang::Python => {
            static FROM: LazyLock<Regex> = LazyLock::new(|| {
                re(r"(?m)^[ \t]*from\s+(\.*)([\w.]*)\s+import\s+\(?\s*([\w\s,*]+)")
            });
            static IMPORT: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*import\s+([\w.]+)"));
            let mdir = root.join(&manifest.dir);
            let bases = [
                mdir.clone(),
                mdir.join("src"),
                root.to_path_buf(),
                fdir.clone(),
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
            let mut modules: Vec<PathBuf> = Vec::new();
            for c in FROM.captures_iter(&src.masked) {
                let dots = c[1].len();
                let comps: Vec<&str> = c[2].split('.').filter(|s| !s.is_empty()).collect();
                let names: Vec<&str> = c[3]
                    .split(',')
                    .filter_map(|n| n.split_whitespace().next())
                    .collect();
                if dots > 0 {
                    let mut base = fdir.clone();
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
                    continue;
                }
                let Some(top) = comps.first().filter(|top| is_local(top, true)) else {
                    continue;
                };
                local = true;
                let _ = top;
                if let Some(p) = find(&comps) {
                    // `from pkg import mod` may name a module
                    for n in &names {
                        modules.extend(find(&[&comps[..], &[n]].concat()));
                    }
                    modules.push(p);
                }
            }
            for c in IMPORT.captures_iter(&src.masked) {
                let comps: Vec<&str> = c[1].split('.').collect();
                if is_local(comps[0], false) {
                    local = true;
                    modules.extend(find(&comps));
                }
            }
            // follow re-exports of package __init__ files one level
            for p in modules {
                if p.file_name().is_some_and(|n| n == "__init__.py")
                    && let Some(text) = read_text(&p)
                {
                    let init = Source::new(Lang::Python, &text);
                    let dir = p.parent().unwrap_or(Path::new(""));
                    for c in FROM.captures_iter(&init.masked).filter(|c| c[1].len() == 1) {
                        let comps: Vec<&str> = c[2].split('.').filter(|s| !s.is_empty()).collect();
                        files.extend(resolve(dir, &comps));
                    }
                }
                files.push(p);
            }
        }
        Lang::Js | Lang::Ts => {
            // `jest.requireActual(…)` names a module, not the subject
            for (_, spec, _) in js_specs(src)
                .into_iter()
                .filter(|(.., m)| !m.contains("Actual"))
            {
                if spec.starts_with('.') {
                    local = true;
                    files.extend(resolve_js(&fdir, spec, root));
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
        }
        Lang::Rust if !is_test_path(rel) => {
            local = true;
            files.push(root.join(rel));
        }
        Lang::Rust => {
            static MOD: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*mod\s+\w+\s*;"));
            let Some(cargo) = &manifest.cargo else {
                return (files, true); // undecidable without Cargo.toml
            };
            let t = &src.masked;
            #[rustfmt::skip]
            const USES: &[&str] = &[
                "super::", "crate::", "trybuild", "CARGO_BIN_EXE_", "cargo_bin", "CARGO_MANIFEST_DIR",
            ];
            local = cargo
                .crate_names
                .iter()
                .any(|n| t.contains(&format!("{n}::")) || t.contains(&format!("use {n}")))
                || USES.iter().any(|u| t.contains(u))
                || MOD.is_match(t);
            let crate_dir = root.join(&cargo.dir);
            let list = cache
                .rust_sources
                .entry(crate_dir.clone())
                .or_insert_with(|| {
                    walkdir::WalkDir::new(crate_dir.join("src"))
                        .max_depth(6)
                        .into_iter()
                        .filter_map(|e| e.ok())
                        .filter(|e| {
                            e.file_type().is_file()
                                && e.path().extension().is_some_and(|x| x == "rs")
                        })
                        .map(|e| e.into_path())
                        .take(400)
                        .collect()
                });
            files.extend(list.iter().cloned());
        }
        Lang::Go => {
            static PKG: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^package\s+(\w+)"));
            static DEF: LazyLock<Regex> = LazyLock::new(|| {
                re(r"(?m)^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)([A-Za-z_]\w*)")
            });
            static IDENT: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z_]\w*"));
            let pkg = PKG
                .captures(&src.masked)
                .map(|c| c[1].to_string())
                .unwrap_or_default();
            let (pkg_files, names) = cache.go_packages.entry(fdir.clone()).or_insert_with(|| {
                let mut files = Vec::new();
                let mut names = BTreeSet::new();
                for e in std::fs::read_dir(&fdir)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok())
                {
                    let n = e.file_name().to_string_lossy().into_owned();
                    if n.ends_with(".go") && !n.ends_with("_test.go") {
                        if let Some(text) = read_text(&e.path()) {
                            names.extend(DEF.captures_iter(&text).map(|c| c[1].to_string()));
                        }
                        files.push(e.path());
                    }
                }
                (files, names)
            });
            files.extend(pkg_files.iter().cloned());
            let module = manifest.go.as_ref().map_or("", |g| g.module.as_str());
            local = (!module.is_empty() && src.strings.iter().any(|s| src.text[s.start..s.end].starts_with(module)))
                // a `package x_test` importing the package under test
                || pkg.strip_suffix("_test").is_some_and(|base| {
                    go_imports(src).iter().any(|p| p.spec.rsplit('/').next() == Some(base))
                })
                // same package: uses the subject if it names one of its identifiers
                || (!pkg.ends_with("_test") && !names.is_empty() && IDENT.find_iter(&src.masked).any(|i| names.contains(i.as_str())));
        }
        _ => local = true,
    }
    files.sort();
    files.dedup();
    (files, local)
}

/// The functions of a subject file: whether each has an error path, is
/// async, takes parameters (`exclude_tests`: leave out `#[cfg(test)]`
/// items).
fn subject_functions(path: &Path, cache: &mut Cache, exclude_tests: bool) -> Vec<SubjectFn> {
    static NEGATIVE: LazyLock<[Regex; 4]> = LazyLock::new(|| {
        [
            re(r"\braise\b|\breturn\s+(?:None|False)\b|(?m)^[ \t]*return\s*$"),
            re(
                r"\bthrow\b|\breturn\s+(?:null|undefined|false)\b|\bPromise\s*\.\s*reject\b|\breject\s*\(",
            ),
            re(r"\bpanic!|\bassert!|\bunreachable!|\bbail!|\bErr\s*\(|\bNone\b"),
            re(r"\bpanic\s*\(|errors\.New|fmt\.Errorf|\breturn\s+(?:nil|false)\b"),
        ]
    });
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
                Lang::Python => NEGATIVE[0].is_match(body),
                Lang::Js | Lang::Ts => NEGATIVE[1].is_match(body),
                Lang::Rust => {
                    ret.contains("Result") || ret.contains("Option") || NEGATIVE[2].is_match(body)
                }
                Lang::Go => ret.contains("error") || NEGATIVE[3].is_match(body),
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

static NEG_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)error|invalid|fail|throw|raise|reject|negative|bad|wrong|missing|none|null|nil|empty|zero|exceed|overflow|illegal|unauthori|forbidden|denied|not_?found|garbage|malformed|panic|incorrect|expired|short|too|boundary|edge|refuse|deny|absent|unknown",
    )
});
static NEG_BODY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"toThrow|\.rejects|\bthrows\b|\bassert\s*\.\s*(?:throws|rejects)|pytest\s*\.\s*raises|assertRaises|is_err|is_none|unwrap_err|expect_err|\bErr\s*\(|\bNone\b|\bnull\b|\bundefined\b|\bFalse\b|\bfalse\b|\bnil\b|\bError\b|errors\.Is|assertThrows|toBeNull|toBeUndefined|toBeFalsy|\.err\b|\berr\s*==|\berr\s*!=",
    )
});
static EDGE_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)edge|empty|zero|boundar|limit|null|none|nil|negative|overflow|underflow|large|huge|long|unicode|whitespace|blank|single|min|max|corner|extreme",
    )
});
static EDGE_ARG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:&?\[\s*\]|\{\s*\}|\(\s*\)|""|''|``|-?0(?:\.0+)?|-\s*\d[\d_.]*|None|null|undefined|nil|NaN|-?Infinity|vec!\[\s*\]|Vec::new\(\)|String::new\(\)|HashMap::new\(\)|float\(['"]-?(?:inf|nan)['"]\)|math\.(?:inf|nan)|f(?:32|64)::(?:NAN|INFINITY|NEG_INFINITY)|["']\s+["'])$|::MAX\b|::MIN\b|MAX_VALUE|MIN_VALUE|MAX_SAFE_INTEGER|MIN_SAFE_INTEGER|maxsize|\bEPSILON\b|\*\s*\d{3,}|\.repeat\s*\(\s*\d{3,}"#,
    )
});
static EDGE_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?:^|[\s(,=:{])(?:""|''|\[\s*\]|\{\s*\}|-\s*\d|0(?:\.0+)?\b|None\b|null\b|undefined\b|nil\b|NaN\b|-?Infinity\b|math\.inf\b)|vec!\[\s*\]|Vec::new\(\)|String::new\(\)|::MAX\b|::MIN\b|MAX_VALUE|MIN_VALUE|MAX_SAFE_INTEGER|sys\.maxsize|\bEPSILON\b|\.repeat\(\s*\d{3,}|\*\s*\d{3,}"#,
    )
});

/// `subject_not_used`, and the coverage of each subject function the tests
/// call: an error path, an edge value, an awaited async call.
fn subject_checks(
    cx: &mut Ctx,
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
                .map(|x| (x.off, assertion_end(&cx.src, x.off)))
                .collect()
        })
        .collect();
    let Some(first_active) = active.first() else {
        return;
    };
    let e2e = ["e2e", "cypress", "playwright"]
        .iter()
        .any(|p| cx.rel.contains(p))
        || E2E_MARKS.iter().any(|p| cx.src.code.contains(p));
    let fixture_params = cx.src.lang == Lang::Python && {
        let parametrized: BTreeSet<String> = tests
            .iter()
            .flat_map(|t| {
                t.attrs
                    .lines()
                    .filter(|l| l.contains("parametrize"))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .flat_map(|l| {
                let inner = l.split_once('(').map_or("", |(_, r)| r);
                let first = inner.split(['"', '\'']).nth(1).unwrap_or("");
                first
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        tests.iter().any(|t| {
            t.params
                .iter()
                .any(|p| !BUILTIN_FIXTURES.contains(&p.as_str()) && !parametrized.contains(p))
        })
    };
    if !imports_local && !e2e && !fixture_params && cx.src.lang != Lang::Java {
        cx.report(
            "subject_not_used",
            first_active.off,
            "the test file never imports or uses the code under test",
        );
    }
    let exclude_tests = cx.src.lang == Lang::Rust;
    let mut funcs: BTreeMap<String, SubjectFn> = BTreeMap::new();
    for f in &files {
        for sf in subject_functions(f, cache, exclude_tests) {
            if !(sf.name.starts_with("test")
                || sf.name.starts_with("Test")
                || sf.name.starts_with('_'))
            {
                funcs.entry(sf.name.clone()).or_insert(sf);
            }
        }
    }
    if funcs.is_empty() {
        return;
    }
    let src = &cx.src;
    let m = &src.masked;
    // every call site in the tests: name → (test index, offset of `(`)
    // (no look-behind: a match must not swallow the `(` of an enclosing call)
    static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"([A-Za-z_$][\w$]*)\s*\("));
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
    let mut reports: Vec<(usize, &str, String)> = Vec::new();
    for (name, sf) in &funcs {
        let Some(sites) = calls.get(name.as_str()) else {
            continue;
        };
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
                edge |= EDGE_NAME.is_match(&t.name)
                    || EDGE_TOKEN.is_match(&src.code[a..z])
                    || EDGE_TOKEN.is_match(&t.attrs);
            }
            if !edge {
                let (args, _) = call_args(src, open);
                edge = args.iter().any(|x| {
                    let x = x.trim();
                    EDGE_ARG.is_match(x)
                        || split_top(x.trim_matches(['[', ']', '(', ')', '&']))
                            .iter()
                            .any(|y| EDGE_ARG.is_match(y))
                });
            }
        }
        let Some(first) = callers.first() else {
            continue;
        };
        if sf.negative
            && !callers.iter().any(|t| {
                let (a, z) = t.body;
                NEG_NAME.is_match(&t.name)
                    || NEG_BODY.is_match(&src.code[a..z])
                    || t.attrs.contains("should_panic")
            })
        {
            reports.push((
                first.off,
                "no_negative_path_test",
                format!("`{name}` has an error path but no test exercises it"),
            ));
        }
        if sf.params > 0 && !edge {
            let msg = format!(
                "no test calls `{name}` with an edge value (empty, zero, negative, null, boundary)"
            );
            reports.push((first.off, "no_edge_case_test", msg));
        }
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
        let sync_caller = callers.iter().find(|t| {
            let body = &m[t.body.0..t.body.1];
            !t.is_async
                && !AWAITED.iter().any(|w| body.contains(w))
                && !body.trim_start().starts_with("return")
        });
        if let (true, Some(t)) = (sf.is_async, sync_caller) {
            let msg = format!(
                "`{name}` is async but test `{}` neither awaits it nor is async",
                t.name
            );
            reports.push((t.off, "async_without_async_test", msg));
        }
    }
    for (off, id, msg) in reports {
        cx.report(id, off, msg);
    }
}
