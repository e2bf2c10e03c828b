//! The test anti-pattern scan (REFERENCE.md "Test anti-patterns
//! (IMPL-001.5)") run by the test-quality gate on the test files the
//! test-generation step changed. It finds the tests of a file (pytest and
//! unittest functions, jest/vitest/mocha/node:test calls, Rust `#[test]`
//! functions, Go `TestXxx`, JUnit `@Test` methods), classifies their
//! assertions, and reads the subject's source (what the test file imports)
//! for the coverage checks. `order_dependence` is not checked: it cannot be
//! decided statically (see `docs/scans.md`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::ai_issues::{self, Manifest};
use super::findings::{Finding, Severity};
use super::source::{Lang, Source, scanned_lang, split_args};
use crate::project::is_test_path;

const EMPTY_TESTS: &str = "empty_tests";
const WEAK: &str = "weak_assertions";
const ISOLATION: &str = "isolation";
const COVERAGE: &str = "incomplete_coverage";
const AI: &str = "ai_generated";

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|e| panic!("scan regex {s}: {e}"))
}

/// Scan one test file's text. `root` is read to find the subject (the
/// source files the test imports) and the project's manifests.
pub fn scan_test_file(root: &Path, rel_path: &str, text: &str) -> Vec<Finding> {
    let mut cache = Cache::default();
    scan_one(root, rel_path, text, &mut cache)
}

/// Read and scan test files (relative to `root`); unreadable, binary and
/// huge (> 1 MiB) files are skipped, non-UTF-8 text is read lossily.
pub fn scan_test_files(root: &Path, rel_paths: &[String]) -> Vec<Finding> {
    let mut cache = Cache::default();
    let mut out = Vec::new();
    for rel in rel_paths {
        let rel = rel.replace('\\', "/");
        if scanned_lang(&rel).is_none() {
            continue;
        }
        if let Some(text) = ai_issues::read_text(&root.join(&rel)) {
            out.extend(scan_one(root, &rel, &text, &mut cache));
        }
    }
    out
}

/// Subject sources and manifests shared by the files of one scan.
#[derive(Default)]
struct Cache {
    subjects: HashMap<PathBuf, Vec<SubjectFn>>,
    manifests: HashMap<String, Manifest>,
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

/// One test found in the file.
#[derive(Debug, Clone)]
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
    /// Attributes/decorators text (Rust `#[should_panic]`, Python marks).
    attrs: String,
}

struct Scan<'a> {
    rel: &'a str,
    src: Source<'a>,
    out: Vec<Finding>,
}

impl Scan<'_> {
    fn push(
        &mut self,
        category: &str,
        check: &str,
        severity: Severity,
        off: usize,
        message: String,
    ) {
        let line = self.src.line_no(off);
        self.out.push(Finding::new(
            category,
            check,
            severity,
            self.rel,
            Some(line),
            message,
        ));
    }
}

fn scan_one(root: &Path, rel: &str, text: &str, cache: &mut Cache) -> Vec<Finding> {
    let Some(lang) = scanned_lang(rel) else {
        return Vec::new();
    };
    let src = Source::new(lang, text);
    let mut sc = Scan {
        rel,
        src,
        out: Vec::new(),
    };
    let tests = find_tests(&sc.src, rel);
    only_left_in(&mut sc);
    commented_out(&mut sc);
    if !tests.is_empty() {
        let helpers = assertion_helpers(&sc.src, &tests);
        let assertions: Vec<Vec<Assertion>> = tests
            .iter()
            .map(|t| assertions_of(&sc.src, t, &helpers))
            .collect();
        empty_and_weak(&mut sc, &tests, &assertions);
        copy_pasted(&mut sc, &tests);
        isolation(&mut sc, &tests);
        missing_cleanup(&mut sc);
        let manifest = cache
            .manifests
            .entry(nearest_dir(root, rel))
            .or_insert_with(|| ai_issues::manifest_for(root, rel))
            .clone();
        subject_checks(&mut sc, root, &tests, &assertions, &manifest, cache);
    }
    let mut out = sc.out;
    out.sort_by(|a, b| (a.line, &a.check, &a.message).cmp(&(b.line, &b.check, &b.message)));
    out.dedup_by(|a, b| a.line == b.line && a.check == b.check && a.message == b.message);
    out
}

fn nearest_dir(_root: &Path, rel: &str) -> String {
    Path::new(rel)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---------------------------------------------------------------- finding tests

fn find_tests(src: &Source, rel: &str) -> Vec<TestCase> {
    match src.lang {
        Lang::Python => python_tests(src),
        Lang::Js | Lang::Ts => js_tests(src),
        Lang::Rust => rust_tests(src),
        Lang::Go => go_tests(src),
        _ => java_tests(src, rel),
    }
}

fn python_tests(src: &Source) -> Vec<TestCase> {
    static SKIP_CALL: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:pytest\.skip|self\.skipTest|unittest\.skip)\s*\("));
    let logical = src.logical_starts();
    let mut out = Vec::new();
    for f in src.functions() {
        if !f.name.starts_with("test") {
            continue;
        }
        let Some(body) = f.body else { continue };
        let attrs = f.decorators.join("\n");
        let mut skipped = None;
        for d in &f.decorators {
            let head = d.split('(').next().unwrap_or(d).trim_start_matches('@');
            let last = head.rsplit('.').next().unwrap_or(head).to_ascii_lowercase();
            if !last.starts_with("skip") {
                continue;
            }
            let args = d
                .split_once('(')
                .map(|(_, a)| a.trim_end().trim_end_matches(')').trim())
                .unwrap_or("");
            let reason = match last.as_str() {
                "skip" => !args.is_empty(),
                "skipif" | "skipunless" => args.contains("reason") || split_top(args).len() >= 2,
                // `@skip_win32`, `@skipif_no_numpy`: the name is the reason
                _ => true,
            };
            skipped = Some(reason);
        }
        // `pytest.skip("…")` as the first statement of the body
        if skipped.is_none() {
            let first = src.line_index(body.0);
            for (idx, &starts) in logical.iter().enumerate().take(first + 40).skip(first) {
                if !starts || src.is_blank(idx) {
                    continue;
                }
                let ls = src.line_start(idx).max(body.0);
                if ls >= body.1 {
                    break;
                }
                let t = src.masked[ls..src.line_end(idx)].trim();
                if t.starts_with(['"', '\'']) {
                    continue; // docstring
                }
                if let Some(m) = SKIP_CALL.find(t) {
                    let rest = t[m.end()..].trim_start();
                    skipped = Some(!rest.starts_with(')'));
                }
                break;
            }
        }
        let params = src.code[f.params.0..f.params.1]
            .split(',')
            .filter_map(|p| {
                let n = p.split([':', '=']).next()?.trim().trim_start_matches('*');
                (!n.is_empty()).then(|| n.to_string())
            })
            .collect();
        let is_async = f.is_async
            || attrs.contains("asyncio")
            || attrs.contains("anyio")
            || attrs.contains("trio");
        out.push(TestCase {
            name: f.name.clone(),
            off: src.line_start(f.line) + src.indent_bytes(f.line),
            body,
            skipped,
            is_async,
            params,
            attrs,
        });
    }
    out
}

/// Split `a, b(c, d), e` at top-level commas (plain text).
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                if !s[start..i].trim().is_empty() {
                    out.push(s[start..i].trim());
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
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
    let mut out = Vec::new();
    // ranges of skipped describe blocks: their tests inherit the skip
    let mut skipped_groups: Vec<(usize, usize)> = Vec::new();
    for c in CALL.captures_iter(m) {
        let name_m = c.get(1).unwrap();
        let word = name_m.as_str();
        let mut p = name_m.end();
        let mut mods: Vec<String> = Vec::new();
        loop {
            while p < b.len() && b[p].is_ascii_whitespace() {
                p += 1;
            }
            if b.get(p) != Some(&b'.') {
                break;
            }
            p += 1;
            let s = p;
            while p < b.len() && (b[p].is_ascii_alphanumeric() || b[p] == b'_') {
                p += 1;
            }
            let md = m[s..p].to_string();
            while p < b.len() && b[p].is_ascii_whitespace() {
                p += 1;
            }
            if matches!(md.as_str(), "each" | "skipIf" | "runIf" | "for") {
                match b.get(p) {
                    Some(b'(') => p = src.match_close(p).map_or(p, |e| e + 1),
                    Some(b'`') => p = m[p + 1..].find('`').map_or(p, |e| p + e + 2),
                    _ => {}
                }
            }
            mods.push(md);
        }
        if b.get(p) != Some(&b'(') {
            continue;
        }
        let open = p;
        let Some(close) = src.match_close(open) else {
            continue;
        };
        let args = split_args(m, open + 1, close);
        let is_group = matches!(
            word,
            "describe" | "context" | "suite" | "xdescribe" | "fdescribe"
        );
        let skip_mod = mods.iter().any(|x| x == "skip") || word.starts_with('x');
        let todo = mods.iter().any(|x| x == "todo");
        let conditional = mods.iter().any(|x| x == "skipIf" || x == "runIf");
        // node:test options object `{ skip: … }`
        let mut opt_skip: Option<bool> = None;
        for &(a, z) in args.iter().skip(1) {
            let t = &src.code[a..z];
            if t.starts_with('{') {
                if let Some(i) = t.find("skip") {
                    let v = t[i + 4..].trim_start().trim_start_matches(':').trim_start();
                    opt_skip = Some(v.starts_with(['\'', '"', '`']));
                }
                if t.contains("todo") {
                    opt_skip = Some(true);
                }
            }
        }
        let skipped = if todo || conditional {
            Some(true)
        } else if skip_mod {
            Some(comment_near(src, name_m.start()))
        } else {
            opt_skip
        };
        if is_group {
            if let Some(reason) = skipped {
                skipped_groups.push((open, close));
                if !reason {
                    out.push(TestCase {
                        name: format!("describe: {}", test_title(src, &args)),
                        off: name_m.start(),
                        body: (close, close),
                        skipped: Some(false),
                        is_async: false,
                        params: Vec::new(),
                        attrs: "group".to_string(),
                    });
                }
            }
            continue;
        }
        // the callback: an argument containing `=>` or starting with `function`
        let Some(&(ca, cz)) = args.iter().skip(1).rev().find(|&&(a, z)| {
            let t = &m[a..z];
            t.contains("=>") || t.starts_with("function") || t.starts_with("async")
        }) else {
            if skipped.is_some() || todo {
                out.push(TestCase {
                    name: test_title(src, &args),
                    off: name_m.start(),
                    body: (close, close),
                    skipped: Some(skipped.unwrap_or(true)),
                    is_async: false,
                    params: Vec::new(),
                    attrs: String::new(),
                });
            }
            continue;
        };
        let cb = &m[ca..cz];
        let is_async = cb.trim_start().starts_with("async");
        let body = if let Some(arrow) = cb.find("=>") {
            let after = ca + arrow + 2;
            let rest = m[after..cz].trim_start();
            let start = after + (m[after..cz].len() - rest.len());
            if rest.starts_with('{') {
                src.match_close(start)
                    .map_or((start + 1, cz), |e| (start + 1, e))
            } else {
                (start, cz)
            }
        } else {
            match m[ca..cz].find('{') {
                Some(o) => src
                    .match_close(ca + o)
                    .map_or((ca + o + 1, cz), |e| (ca + o + 1, e)),
                None => (cz, cz),
            }
        };
        let mut skipped = skipped;
        // `t.skip(…)` / `this.skip()` inside the body
        if skipped.is_none() {
            let body_m = &m[body.0..body.1];
            if let Some(i) = body_m.find(".skip(") {
                let before = body_m[..i].trim_end();
                if before.ends_with('t') || before.ends_with("this") || before.ends_with("ctx") {
                    let rest = body_m[i + 6..].trim_start();
                    skipped = Some(!rest.starts_with(')'));
                }
            }
        }
        out.push(TestCase {
            name: test_title(src, &args),
            off: name_m.start(),
            body,
            skipped,
            is_async,
            params: Vec::new(),
            attrs: mods.join("."),
        });
    }
    for t in &mut out {
        if t.skipped.is_none() && skipped_groups.iter().any(|&(a, z)| t.off > a && t.off < z) {
            t.skipped = Some(true);
        }
    }
    out
}

fn test_title(src: &Source, args: &[(usize, usize)]) -> String {
    args.first()
        .map(|&(a, z)| {
            let t = src.code[a..z].trim();
            t.trim_matches(['\'', '"', '`']).to_string()
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
        if !(last == "test"
            || matches!(
                path,
                "rstest" | "test_case" | "quickcheck" | "test_log::test"
            ))
        {
            continue;
        }
        // attributes up to the fn
        let start = a.get(0).unwrap().start();
        let mut p = start;
        let mut attrs = String::new();
        loop {
            let rest = &m[p..];
            let trimmed = rest.trim_start();
            p += rest.len() - trimmed.len();
            if trimmed.starts_with("#[") {
                let Some(close) = src.match_close(p + 1) else {
                    break;
                };
                attrs.push_str(&src.code[p..=close]);
                attrs.push('\n');
                p = close + 1;
                continue;
            }
            break;
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
        let ignore_attr = attrs.lines().find(|l| l.contains("ignore"));
        let skipped =
            ignore_attr.map(|l| l.contains('=') || l.contains('"') || comment_near(src, start));
        out.push(TestCase {
            name: name_m.as_str().to_string(),
            off: name_off,
            body: (open + 1, close),
            skipped,
            is_async: fc.get(1).is_some() || attrs.contains("tokio") || attrs.contains("async_std"),
            params: Vec::new(),
            attrs,
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
        let whole = c.get(0).unwrap();
        let Some(open) = src.body_open(whole.end()) else {
            continue;
        };
        let Some(close) = src.match_close(open) else {
            continue;
        };
        let t = &c[2];
        let body = &m[open + 1..close];
        // an unconditional skip: `t.Skip…` on the body's first statement line
        let first_stmt = body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let skipped = if first_stmt.starts_with(&format!("{t}.Skip")) {
            Some(!first_stmt.contains("SkipNow") && !first_stmt.contains("Skip()"))
        } else {
            None
        };
        out.push(TestCase {
            name: c[1].to_string(),
            off: c.get(1).unwrap().start(),
            body: (open + 1, close),
            skipped,
            is_async: false,
            params: vec![t.to_string()],
            attrs: String::new(),
        });
    }
    out
}

fn java_tests(src: &Source, _rel: &str) -> Vec<TestCase> {
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
        let header = &m[t.end()..open];
        let Some(mc) = METHOD
            .captures_iter(header)
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
        out.push(TestCase {
            name: mc[1].to_string(),
            off: t.end() + mc.get(1).unwrap().start(),
            body: (open + 1, close),
            skipped,
            is_async: false,
            params: Vec::new(),
            attrs: around.to_string(),
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
        let probe = TestCase {
            name: f.name.clone(),
            off: a,
            body: (a, b),
            skipped: None,
            is_async: false,
            params: Vec::new(),
            attrs: String::new(),
        };
        if !assertions_of(src, &probe, &BTreeSet::new()).is_empty() {
            out.insert(f.name.clone());
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

/// An always-true literal (`true`, `1`, a non-empty string).
fn truthy_literal(s: &str) -> bool {
    let s = s.trim();
    if !is_literal(s) {
        return false;
    }
    matches!(s, "true" | "True" | "1")
        || ((s.starts_with('"') || s.starts_with('\'')) && s.len() > 2)
        || s.parse::<f64>().is_ok_and(|v| v != 0.0)
}

fn has_comparison(s: &str) -> bool {
    static CMP: LazyLock<Regex> = LazyLock::new(|| {
        re(r"==|!=|<=|>=|[^=!<>-]>|<[^<]|\bin\b|\bis\b|\binstanceof\b|\bnot\s+in\b")
    });
    CMP.is_match(s)
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
        static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"([A-Za-z_$][\w$]*)\s*\("));
        let body = &src.masked[a..z];
        for c in CALL.captures_iter(body) {
            let g = c.get(1).unwrap();
            if helpers.contains(g.as_str()) && !body[..g.start()].ends_with('.') {
                out.push(Assertion {
                    off: a + g.start(),
                    kind: Kind::Strong,
                    tautology: None,
                });
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
        let line = src.line_index(off);
        let (_, end) = src.py_block(line, src.logical_starts());
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
        re(
            r"\.expect\s*\(|\.should\b|(?:^|[^\w$.])(?:expect|assert|verify|check|should)[A-Z_]\w*\s*\(|\bt\s*\.\s*(?:is|not|deepEqual|notDeepEqual|like|throws|throwsAsync|notThrows|regex|true|false|assert|fail|equal|same|strictSame|match|ok|notOk|error)\s*\(|\b(?:chai\.)?assert\s*\.\s*\w+\s*\(",
        )
    });
    static SINON: LazyLock<Regex> = LazyLock::new(|| re(r"\bsinon\s*\.\s*assert\s*\.\s*\w+\s*\("));
    let m = &src.masked;
    let body = &m[a..z];
    let mut taken: BTreeSet<usize> = BTreeSet::new();
    for e in EXPECT.find_iter(body) {
        let open = a + e.end() - 1;
        let (args, close) = call_args(src, open);
        // the matcher chain after `expect(…)`
        let mut p = close + 1;
        let mut chain: Vec<&str> = Vec::new();
        let bytes = m.as_bytes();
        loop {
            let rest = &m[p..];
            let t = rest.trim_start();
            let Some(t2) = t.strip_prefix('.') else { break };
            let t2 = t2.trim_start();
            let id_len = t2
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(t2.len());
            if id_len == 0 {
                break;
            }
            let start = p + (rest.len() - t.len()) + 1 + (t.len() - 1 - t2.len());
            chain.push(&m[start..start + id_len]);
            p = start + id_len;
        }
        let matcher = chain.last().copied().unwrap_or("");
        let not = chain.contains(&"not");
        let matcher_args: Vec<&str> = {
            let rest = m[p..].trim_start();
            if rest.starts_with('(') && bytes.get(p + (m[p..].len() - rest.len())).is_some() {
                call_args(src, p + (m[p..].len() - rest.len())).0
            } else {
                Vec::new()
            }
        };
        taken.insert(open);
        let subject = args.first().copied().unwrap_or("");
        let kind = if matcher.contains("Snapshot") {
            Kind::Snapshot
        } else if matcher.starts_with("toHaveBeenCalled")
            || matcher.starts_with("toBeCalled")
            || matcher.starts_with("toHaveBeenLastCalled")
            || matcher.starts_with("toHaveBeenNthCalled")
            || matcher.starts_with("toHaveReturned")
            || matcher.starts_with("toReturn")
            || matcher.starts_with("lastCalledWith")
            || chain
                .iter()
                .any(|c| c.starts_with("called") || *c == "callCount")
        {
            Kind::Mock
        } else if matches!(
            matcher,
            "toBeDefined" | "toBeTruthy" | "toBeFalsy" | "exist" | "ok"
        ) || (not
            && matches!(matcher, "toBeNull" | "toBeUndefined" | "null" | "undefined"))
        {
            Kind::Weak
        } else {
            Kind::Strong
        };
        let tautology = if is_literal(subject) && !subject.is_empty() {
            Some(format!("expect({subject}) checks a constant"))
        } else if !not
            && matches!(
                matcher,
                "toBe" | "toEqual" | "toStrictEqual" | "equal" | "eql" | "equals"
            )
            && matcher_args.first().is_some_and(|x| same_sides(x, subject))
        {
            Some(format!(
                "expect({subject}).{matcher}({subject}) compares a value with itself"
            ))
        } else {
            None
        };
        out.push(Assertion {
            off: a + e.start(),
            kind,
            tautology,
        });
    }
    for c in ASSERT.captures_iter(body) {
        let whole = c.get(0).unwrap();
        let open = a + whole.end() - 1;
        let method = c.get(1).map_or("", |m| m.as_str());
        let (args, _) = call_args(src, open);
        let first = args.first().copied().unwrap_or("");
        let (kind, tautology) = match method {
            "" | "ok" | "isOk" | "isTrue" | "exists" | "isDefined" | "isNotNull" => {
                let weak = !has_comparison(first) && !first.contains('(');
                let taut = truthy_literal(first).then(|| format!("assert({first}) is always true"));
                (if weak { Kind::Weak } else { Kind::Strong }, taut)
            }
            "equal" | "strictEqual" | "deepEqual" | "deepStrictEqual" | "equals" | "same"
            | "eql" => {
                let taut = (args.len() >= 2 && same_sides(args[0], args[1])).then(|| {
                    format!(
                        "assert.{method}({}, {}) compares a value with itself",
                        args[0], args[1]
                    )
                });
                (Kind::Strong, taut)
            }
            _ => (Kind::Strong, None),
        };
        out.push(Assertion {
            off: a + whole.start() + whole.as_str().find("assert").unwrap_or(0),
            kind,
            tautology,
        });
    }
    for s in SINON.find_iter(body) {
        out.push(Assertion {
            off: a + s.start(),
            kind: Kind::Mock,
            tautology: None,
        });
    }
    for o in OTHER.find_iter(body) {
        if o.as_str().contains("assert") && o.as_str().contains('.') && !o.as_str().starts_with('t')
        {
            continue; // assert.x( already counted
        }
        let kind = if o.as_str().contains("snapshot") {
            Kind::Snapshot
        } else if o.as_str().contains("truthy") {
            Kind::Weak
        } else {
            Kind::Strong
        };
        out.push(Assertion {
            off: a + o.start(),
            kind,
            tautology: None,
        });
    }
}

fn py_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static ASSERT_STMT: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*assert\b"));
    static SELF_ASSERT: LazyLock<Regex> =
        LazyLock::new(|| re(r"\bself\s*\.\s*(assert\w*|fail\w*)\s*\("));
    static MOCK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\.assert_(?:called|not_called|any_call|has_calls|awaited|not_awaited)\w*\s*\(")
    });
    static STRONG: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\bpytest\s*\.\s*(?:raises|warns|fail|deprecated_call)\s*\(|\braise\s+AssertionError\b|\.assert_\w+\s*\(|(?:^|[^\w])(?:[Aa]ssert|[Cc]heck|[Vv]erify|[Ee]xpect)\w*\s*\(|\bsnapshot\s*\.\s*assert_match\s*\(",
        )
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
    for s in ASSERT_STMT.find_iter(body) {
        let start = a + s.end();
        // the logical statement: up to the end of its last physical line
        let logical = src.logical_starts();
        let mut line = src.line_index(start);
        while line + 1 < src.line_count() && !logical[line + 1] {
            line += 1;
        }
        let end = src.line_end(line).min(z.max(start));
        let stmt_m = &m[start..end];
        // drop the message after a top-level comma
        let mut depth = 0i32;
        let mut cut = stmt_m.len();
        for (i, ch) in stmt_m.char_indices() {
            match ch {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    cut = i;
                    break;
                }
                _ => {}
            }
        }
        let expr_m = stmt_m[..cut].trim();
        let expr = src.code[start..start + cut].trim();
        let off = a + s.start() + (s.as_str().len() - s.as_str().trim_start().len());
        let (kind, tautology) = if expr.contains("snapshot")
            && (expr.contains("==") || expr.contains("match"))
        {
            (Kind::Snapshot, None)
        } else if MOCK_ATTR.is_match(expr_m) {
            (Kind::Mock, None)
        } else {
            let taut = if truthy_literal(expr) {
                Some(format!("`assert {expr}` is always true"))
            } else if let Some((l, r)) = expr.split_once("==") {
                same_sides(l, r).then(|| format!("`assert {expr}` compares a value with itself"))
            } else {
                None
            };
            let weak = is_simple(expr.trim_start_matches("not ").trim())
                || WEAK_CALL.is_match(expr)
                || expr.ends_with("is not None")
                || expr.ends_with("!= None");
            (if weak { Kind::Weak } else { Kind::Strong }, taut)
        };
        out.push(Assertion {
            off,
            kind,
            tautology,
        });
    }
    for c in SELF_ASSERT.captures_iter(body) {
        let whole = c.get(0).unwrap();
        let open = a + whole.end() - 1;
        let method = &c[1];
        let (args, _) = call_args(src, open);
        let first = args.first().copied().unwrap_or("");
        let (kind, taut) = match method {
            "assertTrue" | "assert_" | "failUnless" => (
                if is_simple(first) {
                    Kind::Weak
                } else {
                    Kind::Strong
                },
                truthy_literal(first).then(|| format!("self.{method}({first}) is always true")),
            ),
            "assertIsNotNone" => (Kind::Weak, None),
            "assertEqual" | "assertEquals" | "assertIs" | "assertDictEqual" | "assertListEqual"
            | "assertCountEqual" => (
                Kind::Strong,
                (args.len() >= 2 && same_sides(args[0], args[1])).then(|| {
                    format!(
                        "self.{method}({}, {}) compares a value with itself",
                        args[0], args[1]
                    )
                }),
            ),
            _ => (Kind::Strong, None),
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology: taut,
        });
    }
    for mm in MOCK.find_iter(body) {
        out.push(Assertion {
            off: a + mm.start(),
            kind: Kind::Mock,
            tautology: None,
        });
    }
    for s in STRONG.find_iter(body) {
        if MOCK.is_match(s.as_str())
            || s.as_str().contains("self.")
            || body[..s.start()].trim_end().ends_with("self.")
        {
            continue;
        }
        let kind = if s.as_str().contains("snapshot") {
            Kind::Snapshot
        } else {
            Kind::Strong
        };
        out.push(Assertion {
            off: a + s.start(),
            kind,
            tautology: None,
        });
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
        re(
            r"(?:^|[^\w.:])(?:assert_\w+|check_\w+|verify_\w+)\s*(?:::\s*<[^>]*>)?\s*\(|\.assert\w*\s*\(|\.compile_fail\s*\(",
        )
    });
    static SOME_OK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^!?\s*[^=<>|&]+\.(?:is_some|is_ok)\s*\(\s*\)$|^!\s*[^=<>|&]+\.is_empty\s*\(\s*\)$")
    });
    let m = &src.masked;
    let body = &m[a..z];
    if t.attrs.contains("should_panic") {
        out.push(Assertion {
            off: t.off,
            kind: Kind::Strong,
            tautology: None,
        });
    }
    for c in MACRO.captures_iter(body) {
        let name = &c[1];
        let whole = c.get(0).unwrap();
        let open = a + whole.end() - 1;
        let args: Vec<&str> = if m.as_bytes()[open] == b'(' {
            call_args(src, open).0
        } else {
            Vec::new()
        };
        let first = args.first().copied().unwrap_or("");
        let (kind, taut) = if name.contains("snapshot") {
            (Kind::Snapshot, None)
        } else if name == "assert" || name.ends_with("_assert") {
            (
                if SOME_OK.is_match(first) {
                    Kind::Weak
                } else {
                    Kind::Strong
                },
                (first == "true").then(|| format!("{name}!(true) is always true")),
            )
        } else if name == "assert_eq" || name.ends_with("_assert_eq") {
            (
                Kind::Strong,
                (args.len() >= 2 && same_sides(args[0], args[1])).then(|| {
                    format!(
                        "{name}!({}, {}) compares a value with itself",
                        args[0], args[1]
                    )
                }),
            )
        } else {
            (Kind::Strong, None)
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology: taut,
        });
    }
    for w in WEAK.find_iter(body) {
        let kind = if w.as_str().contains("err") {
            Kind::Strong
        } else {
            Kind::Weak
        };
        out.push(Assertion {
            off: a + w.start(),
            kind,
            tautology: None,
        });
    }
    for mm in MOCK.find_iter(body) {
        out.push(Assertion {
            off: a + mm.start(),
            kind: Kind::Mock,
            tautology: None,
        });
    }
    for h in HELPER.find_iter(body) {
        let kind = if h.as_str().contains(".assert") && body.contains("expect![") {
            Kind::Snapshot
        } else {
            Kind::Strong
        };
        out.push(Assertion {
            off: a + h.start(),
            kind,
            tautology: None,
        });
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
    let m = &src.masked;
    let body = &m[a..z];
    for c in T_CALL
        .captures_iter(body)
        .filter(|c| &c[1] == tv)
        .map(|c| c.get(0).unwrap())
    {
        out.push(Assertion {
            off: a + c.start(),
            kind: Kind::Strong,
            tautology: None,
        });
    }
    let mut lib_offs = BTreeSet::new();
    for c in LIB.captures_iter(body) {
        let whole = c.get(0).unwrap();
        let method = &c[2];
        let open = a + whole.end() - 1;
        let (args, _) = call_args(src, open);
        lib_offs.insert(whole.start());
        let rest: Vec<&str> = args.iter().skip(1).copied().collect();
        let kind = if method.starts_with("Assert") && method != "Assert" {
            Kind::Mock
        } else if matches!(method, "NotNil" | "NotEmpty" | "NoError")
            || (matches!(method, "True") && rest.first().is_some_and(|x| is_simple(x)))
        {
            Kind::Weak
        } else {
            Kind::Strong
        };
        let taut = if matches!(method, "Equal" | "Equalf" | "EqualValues" | "Exactly")
            && rest.len() >= 2
            && same_sides(rest[0], rest[1])
        {
            Some(format!(
                "{}.{method}(t, {}, {}) compares a value with itself",
                &c[1], rest[0], rest[1]
            ))
        } else if method == "True" && rest.first().is_some_and(|x| *x == "true") {
            Some(format!("{}.True(t, true) is always true", &c[1]))
        } else {
            None
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology: taut,
        });
    }
    for c in T_ARG
        .captures_iter(body)
        .filter(|c| &c[1] == tv)
        .map(|c| c.get(0).unwrap())
    {
        let s = c.start()
            + (c.as_str().len()
                - c.as_str()
                    .trim_start_matches(|ch: char| !ch.is_alphanumeric())
                    .len());
        if lib_offs.iter().any(|&o| o.abs_diff(s) < 3)
            || c.as_str().contains(".Run(")
            || c.as_str().contains(".Parallel(")
        {
            continue;
        }
        out.push(Assertion {
            off: a + c.start(),
            kind: Kind::Strong,
            tautology: None,
        });
    }
}

fn java_assertions(src: &Source, a: usize, z: usize, out: &mut Vec<Assertion>) {
    static ASSERT: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:^|[^\w.])(?:Assertions\.|Assert\.)?(assert\w*|fail|verify)\s*\("));
    let m = &src.masked;
    let body = &m[a..z];
    for c in ASSERT.captures_iter(body) {
        let whole = c.get(0).unwrap();
        let name = &c[1];
        let open = a + whole.end() - 1;
        let (args, _) = call_args(src, open);
        let first = args.first().copied().unwrap_or("");
        let (kind, taut) = match name {
            "verify" => (Kind::Mock, None),
            "assertNotNull" => (Kind::Weak, None),
            "assertTrue" => (
                if is_simple(first) {
                    Kind::Weak
                } else {
                    Kind::Strong
                },
                (first == "true").then(|| "assertTrue(true) is always true".to_string()),
            ),
            "assertEquals" | "assertSame" => (
                Kind::Strong,
                (args.len() >= 2 && same_sides(args[0], args[1])).then(|| {
                    format!(
                        "{name}({}, {}) compares a value with itself",
                        args[0], args[1]
                    )
                }),
            ),
            _ => (Kind::Strong, None),
        };
        out.push(Assertion {
            off: a + whole.start(),
            kind,
            tautology: taut,
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
        re(
            r#"^(?:new\s+[A-Z][\w$.]*\s*\(.*\)|&?[A-Z][\w$]*(?:::new|::default|::from)?\s*[({].*[)}]|(?:jest|vi)\.fn\(.*\)|(?:Magic|Async)?Mock\(.*\)|mocker\.\w+\(.*\)|sinon\.\w+\(.*\)|Default::default\(\)|vec!\[.*\]|String::(?:new|from)\(.*\)|\[.*\]|\{.*\}|["'`_].*|-?\d[\d_.]*|true|false|True|False|None|null|undefined|nil)$"#,
        )
    });
    let (a, z) = t.body;
    let body = &src.code[a..z];
    let stmts: Vec<&str> = body
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

fn empty_and_weak(sc: &mut Scan, tests: &[TestCase], assertions: &[Vec<Assertion>]) {
    for (t, asserts) in tests.iter().zip(assertions) {
        if let Some(reason) = t.skipped {
            if !reason {
                let what = if t.attrs == "group" {
                    "test group"
                } else {
                    "test"
                };
                sc.push(
                    EMPTY_TESTS,
                    "skipped_without_reason",
                    Severity::Warning,
                    t.off,
                    format!("{what} `{}` is skipped without a reason", t.name),
                );
            }
            continue;
        }
        static EQ_TEST: LazyLock<Regex> =
            LazyLock::new(|| re(r"(?i)eq|equal|reflexiv|compar|identity|same|ord"));
        for x in asserts {
            if let Some(why) = &x.tautology {
                if EQ_TEST.is_match(&t.name) && why.contains("with itself") {
                    continue; // testing an equality implementation
                }
                sc.push(
                    AI,
                    "tautology",
                    Severity::Critical,
                    x.off,
                    format!("tautological assertion in `{}`: {why}", t.name),
                );
            }
        }
        if asserts.is_empty() {
            let (a, z) = t.body;
            let empty =
                sc.src.masked[a..z].trim().is_empty() || sc.src.masked[a..z].trim() == "pass";
            if !empty && setup_only(&sc.src, t) {
                sc.push(
                    EMPTY_TESTS,
                    "setup_only",
                    Severity::Error,
                    t.off,
                    format!(
                        "test `{}` only sets up objects: nothing is exercised or checked",
                        t.name
                    ),
                );
            } else {
                sc.push(
                    EMPTY_TESTS,
                    "no_assertion",
                    Severity::Critical,
                    t.off,
                    if empty {
                        format!("test `{}` is empty", t.name)
                    } else {
                        format!("test `{}` has no assertion", t.name)
                    },
                );
            }
            continue;
        }
        let all = |k: Kind| asserts.iter().all(|x| x.kind == k);
        if all(Kind::Snapshot) {
            sc.push(
                WEAK,
                "snapshot_only",
                Severity::Warning,
                t.off,
                format!("test `{}` only compares snapshots", t.name),
            );
        } else if all(Kind::Mock) {
            sc.push(
                AI,
                "asserts_only_on_mocks",
                Severity::Error,
                t.off,
                format!(
                    "test `{}` only checks how mocks were called, never a result",
                    t.name
                ),
            );
        } else if asserts.iter().all(|x| x.kind == Kind::Weak) {
            sc.push(
                WEAK,
                "weak_assertion",
                Severity::Warning,
                t.off,
                format!(
                    "test `{}` only checks that a value exists or is truthy",
                    t.name
                ),
            );
        }
    }
}

fn only_left_in(sc: &mut Scan) {
    static ONLY: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:describe|it|test|context|suite|specify)\s*\.\s*only\s*\(|(?:^|[^\w$.])(?:fit|fdescribe|ftest)\s*\(|\bonly\s*:\s*true\b",
        )
    });
    if !sc.src.lang.is_js() {
        return;
    }
    let hits: Vec<(usize, String)> = ONLY
        .find_iter(&sc.src.masked)
        .map(|m| {
            let t = m
                .as_str()
                .trim_start_matches(|c: char| !c.is_alphanumeric());
            (
                m.start() + (m.as_str().len() - t.len()),
                t.trim_end_matches('(').trim().to_string(),
            )
        })
        .collect();
    for (off, what) in hits {
        sc.push(
            EMPTY_TESTS,
            "only_left_in",
            Severity::Critical,
            off,
            format!("`{what}` left in: every other test is silently skipped"),
        );
    }
}

fn commented_out(sc: &mut Scan) {
    static PY: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:async\s+)?def\s+test\w*\s*\(|^@pytest\.mark\."));
    static JS: LazyLock<Regex> =
        LazyLock::new(|| re(r#"^(?:it|test|describe|specify)(?:\.\w+)?\s*\(\s*['"`]"#));
    static RUST: LazyLock<Regex> =
        LazyLock::new(|| re(r"^#\[(?:\w+::)?test\]|^(?:async\s+)?fn\s+test_\w*\s*\("));
    static GO: LazyLock<Regex> = LazyLock::new(|| re(r"^func\s+Test\w*\s*\("));
    static JAVA: LazyLock<Regex> = LazyLock::new(|| re(r"^@Test\b"));
    let r: &Regex = match sc.src.lang {
        Lang::Python => &PY,
        Lang::Js | Lang::Ts => &JS,
        Lang::Rust => &RUST,
        Lang::Go => &GO,
        _ => &JAVA,
    };
    let mut last_line: Option<usize> = None;
    let mut hits = Vec::new();
    for c in &sc.src.comments {
        let raw = sc.src.text[sc.src.line_start(c.line)..sc.src.line_end(c.line)].trim_start();
        let doc = raw.starts_with("///")
            || raw.starts_with("//!")
            || raw.starts_with("/**")
            || raw.starts_with('*');
        if !doc && r.is_match(c.text.trim()) {
            // one finding per block of commented-out lines
            if last_line.is_none_or(|l| c.line > l + 3) {
                hits.push(sc.src.line_start(c.line) + sc.src.indent_bytes(c.line));
            }
            last_line = Some(c.line);
        }
    }
    for off in hits {
        sc.push(
            EMPTY_TESTS,
            "commented_out_test",
            Severity::Warning,
            off,
            "commented-out test: delete it or skip it with a reason".to_string(),
        );
    }
}

// ---------------------------------------------------------------- AI-generated: copy-paste

fn copy_pasted(sc: &mut Scan, tests: &[TestCase]) {
    let mut seen: BTreeMap<String, (String, u32)> = BTreeMap::new();
    let mut hits = Vec::new();
    for t in tests {
        let (a, z) = t.body;
        if a >= z || t.skipped.is_some() {
            continue;
        }
        let body = norm(&sc.src.code[a..z]);
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
                seen.insert(body, (t.name.clone(), sc.src.line_no(t.off)));
            }
        }
    }
    for (off, msg) in hits {
        sc.push(AI, "copy_pasted_bodies", Severity::Warning, off, msg);
    }
}

// ---------------------------------------------------------------- isolation

fn in_any(ranges: &[(usize, usize)], off: usize) -> bool {
    ranges.iter().any(|&(a, z)| off >= a && off < z)
}

/// Bodies of setup/teardown hooks (`beforeEach`, `setUp`, fixtures…).
fn hook_ranges(src: &Source) -> Vec<(usize, usize)> {
    static JS_HOOK: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\b(?:beforeEach|afterEach|beforeAll|afterAll|before|after|setup|teardown)\s*\(")
    });
    let mut out = Vec::new();
    match src.lang {
        Lang::Js | Lang::Ts => {
            for m in JS_HOOK.find_iter(&src.masked) {
                if let Some(close) = src.match_close(m.end() - 1) {
                    out.push((m.end(), close));
                }
            }
        }
        _ => {
            for f in src.functions() {
                let n = f.name.to_ascii_lowercase();
                let hook = n.starts_with("setup")
                    || n.starts_with("teardown")
                    || n.starts_with("set_up")
                    || n.starts_with("tear_down")
                    || n == "testmain"
                    || f.decorators.iter().any(|d| d.contains("fixture"));
                if hook && let Some(b) = f.body {
                    out.push(b);
                }
            }
        }
    }
    out
}

fn isolation(sc: &mut Scan, tests: &[TestCase]) {
    let bodies: Vec<(usize, usize)> = tests
        .iter()
        .filter(|t| t.skipped.is_none())
        .map(|t| t.body)
        .collect();
    let hooks = hook_ranges(&sc.src);
    let m = sc.src.masked.clone();
    let mut hits: Vec<(usize, String)> = Vec::new();
    // shared variables by language
    let mut shared: Vec<(String, usize)> = Vec::new();
    match sc.src.lang {
        Lang::Js | Lang::Ts => {
            static DECL: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r"\b(?:(let|var)\s+([A-Za-z_$][\w$]*)|const\s+([A-Za-z_$][\w$]*)\s*=\s*(?:\[|\{|new\s+(?:Map|Set|Array|WeakMap)\b))",
                )
            });
            for c in DECL.captures_iter(&m) {
                let g = c.get(2).or_else(|| c.get(3)).unwrap();
                if !in_any(&bodies, g.start()) && !in_any(&hooks, g.start()) {
                    shared.push((g.as_str().to_string(), g.start()));
                }
            }
        }
        Lang::Python => {
            static DECL: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r"(?m)^([A-Za-z_]\w*)\s*(?::[^=\n]+)?=\s*(?:\[|\{|set\(|dict\(|list\(|collections\.\w+\(|defaultdict\(|deque\(|Counter\(|OrderedDict\()",
                )
            });
            static GLOBAL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]+global\s+(\w+)"));
            for c in DECL.captures_iter(&m) {
                shared.push((c[1].to_string(), c.get(1).unwrap().start()));
            }
            for c in GLOBAL.captures_iter(&m) {
                let g = c.get(0).unwrap();
                let off = g.start() + (g.as_str().len() - g.as_str().trim_start().len());
                if in_any(&bodies, off) {
                    hits.push((off, format!("test rebinds the module global `{}`", &c[1])));
                }
            }
        }
        Lang::Rust => {
            static DECL: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r"\bstatic\s+(?:mut\s+([A-Z_][A-Z0-9_]*)|([A-Z_][A-Z0-9_]*)\s*:\s*(?:std::sync::atomic::)?Atomic\w+)",
                )
            });
            for c in DECL.captures_iter(&m) {
                let g = c.get(1).or_else(|| c.get(2)).unwrap();
                shared.push((g.as_str().to_string(), g.start()));
            }
        }
        Lang::Go => {
            static DECL: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^var\s+([A-Za-z_]\w*)"));
            static VAR_BLOCK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^var\s*\("));
            for c in DECL.captures_iter(&m) {
                if let Some(g) = c.get(1) {
                    shared.push((g.as_str().to_string(), g.start()));
                }
            }
            for b in VAR_BLOCK.find_iter(&m) {
                if let Some(close) = sc.src.match_close(b.end() - 1) {
                    for line in m[b.end()..close].lines() {
                        if let Some(name) = line.split_whitespace().next()
                            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                            && !name.is_empty()
                        {
                            let off = b.end() + m[b.end()..close].find(line).unwrap_or(0);
                            shared.push((name.to_string(), off));
                        }
                    }
                }
            }
        }
        _ => {
            static DECL2: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r"\bstatic\s+((?:(?:private|public|protected|volatile|final)\s+)*)[\w<>\[\], ]+?\s+([a-zA-Z_]\w*)\s*[=;]",
                )
            });
            for c in DECL2.captures_iter(&m) {
                if !c[1].contains("final") {
                    let g = c.get(2).unwrap();
                    shared.push((g.as_str().to_string(), g.start()));
                }
            }
        }
    }
    // every mutation in the tests, by the name mutated
    static MUTATE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*(?:\+\+|--|[+\-*/|&]?=[^=>])",
            r"|(?:\+\+|--)([A-Za-z_$][\w$]*)",
            r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\.\s*(?:push|pop|shift|unshift|splice|set|add|delete|clear|append|extend|update|insert|remove|setdefault|sort|reverse|store|fetch_\w+|swap)\s*\(",
            r"|(?:^|[^\w$.])([A-Za-z_$][\w$]*)\s*\[[^\]\n]*\]\s*=[^=]",
        ))
    });
    let shared_names: BTreeMap<&str, usize> =
        shared.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let hook_text: Vec<&str> = hooks.iter().map(|&(a, z)| &m[a..z]).collect();
    let reset = |name: &str| {
        hook_text.iter().any(|h| {
            MUTATE
                .captures_iter(h)
                .any(|c| c.iter().skip(1).flatten().any(|g| g.as_str() == name))
        })
    };
    let mut reported = BTreeSet::new();
    for &(a, z) in &bodies {
        let body = &m[a..z];
        for c in MUTATE.captures_iter(body) {
            let Some(g) = c.iter().skip(1).flatten().next() else {
                continue;
            };
            let name = g.as_str();
            let Some(&decl) = shared_names.get(name) else {
                continue;
            };
            if (decl >= a && decl < z) || reported.contains(name) {
                continue;
            }
            // restored by a cleanup in the same test, reset by a hook, or a local
            if body.contains("Cleanup(")
                || (body.contains("defer") && sc.src.lang == Lang::Go)
                || reset(name)
                || shadowed(sc.src.lang, name, body)
            {
                continue;
            }
            reported.insert(name.to_string());
            hits.push((
                a + g.start(),
                format!("test mutates `{name}`, shared by every test of the file and never reset"),
            ));
        }
    }
    for (off, msg) in hits {
        sc.push(ISOLATION, "shared_mutable_state", Severity::Error, off, msg);
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

fn missing_cleanup(sc: &mut Scan) {
    // (language, creation pattern, cleanup pattern, what)
    struct Rule {
        lang: &'static [Lang],
        create: &'static str,
        cleanup: &'static str,
        what: &'static str,
    }
    const JS: &[Lang] = &[Lang::Js, Lang::Ts];
    const RULES: &[Rule] = &[
        Rule {
            lang: &[Lang::Python],
            create: r"\btempfile\s*\.\s*(?:mkdtemp|mkstemp)\s*\(|\bNamedTemporaryFile\s*\([^)]*delete\s*=\s*False",
            cleanup: r"\bshutil\s*\.\s*rmtree\b|\bos\s*\.\s*(?:remove|unlink|rmdir)\b|\.unlink\s*\(|\baddCleanup\b|\.cleanup\s*\(|\brmtree\b",
            what: "temporary file or directory",
        },
        Rule {
            lang: &[Lang::Python],
            create: r"\b(?:HTTPServer|ThreadingHTTPServer|TCPServer|UDPServer|socketserver\.\w+Server)\s*\(|\bsubprocess\s*\.\s*Popen\s*\(",
            cleanup: r"\.(?:shutdown|server_close|terminate|kill|close|wait|communicate)\s*\(|\baddCleanup\b|\bwith\s+subprocess\b",
            what: "server or process",
        },
        Rule {
            lang: JS,
            create: r"\b(?:mkdtempSync|mkdtemp)\s*\(|\btmp\s*\.\s*dirSync\s*\(",
            cleanup: r"\b(?:rmSync|rmdirSync|unlinkSync|rimraf|removeCallback)\b|\.rm\s*\(|\brm\s*\(",
            what: "temporary directory",
        },
        Rule {
            lang: JS,
            create: r"\.listen\s*\(|\bcreateServer\s*\(|\bsetupServer\s*\(|\bpuppeteer\s*\.\s*launch\s*\(|\bchromium\s*\.\s*launch\s*\(",
            cleanup: r"\.close\s*\(|\.stop\s*\(|\.destroy\s*\(",
            what: "server or browser",
        },
        Rule {
            lang: &[Lang::Rust],
            create: r"\btemp_dir\s*\(\s*\)",
            cleanup: r"\bremove_file\b|\bremove_dir_all\b|\bremove_dir\b",
            what: "file under the system temp directory",
        },
        Rule {
            lang: &[Lang::Rust],
            create: r"\.spawn\s*\(\s*\)",
            cleanup: r"\.kill\s*\(|\.wait\s*\(|\.wait_with_output\s*\(|\.join\s*\(",
            what: "spawned process or thread",
        },
        Rule {
            lang: &[Lang::Go],
            create: r"\b(?:os\.MkdirTemp|ioutil\.TempDir|os\.CreateTemp|ioutil\.TempFile)\s*\(",
            cleanup: r"\bos\.RemoveAll\b|\bos\.Remove\b",
            what: "temporary file or directory",
        },
        Rule {
            lang: &[Lang::Go],
            create: r"\bhttptest\.New(?:TLS|Unstarted)?Server\s*\(|\bnet\.Listen\s*\(",
            cleanup: r"\.Close\s*\(",
            what: "test server or listener",
        },
        Rule {
            lang: &[Lang::Java],
            create: r"\b(?:File\.createTempFile|Files\.createTemp(?:File|Directory))\s*\(",
            cleanup: r"\.delete\s*\(|deleteOnExit|Files\.delete|@TempDir|deleteRecursively",
            what: "temporary file",
        },
    ];
    static COMPILED: LazyLock<Vec<(Regex, Regex)>> = LazyLock::new(|| {
        RULES
            .iter()
            .map(|r| (re(r.create), re(r.cleanup)))
            .collect()
    });
    let m = sc.src.masked.clone();
    let mut hits = Vec::new();
    for (r, (create, cleanup)) in RULES.iter().zip(COMPILED.iter()) {
        if !r.lang.contains(&sc.src.lang) {
            continue;
        }
        if cleanup.is_match(&m) {
            continue;
        }
        for c in create.find_iter(&m) {
            let line = sc.src.masked_line(sc.src.line_index(c.start()));
            if line.trim_start().starts_with("with ") || line.contains("using ") {
                continue;
            }
            hits.push((
                c.start()
                    + (c.as_str().len()
                        - c.as_str()
                            .trim_start_matches(|ch: char| !ch.is_alphanumeric())
                            .len()),
                r.what,
            ));
        }
    }
    for (off, what) in hits {
        sc.push(
            ISOLATION,
            "missing_cleanup",
            Severity::Warning,
            off,
            format!("{what} is created but never cleaned up"),
        );
    }
}

// ---------------------------------------------------------------- subject: coverage and use

/// Local files the test file imports (its subject), resolved on disk.
fn subject_files(
    sc: &Scan,
    root: &Path,
    manifest: &Manifest,
    cache: &mut Cache,
) -> (Vec<PathBuf>, bool) {
    let rel = sc.rel;
    let fdir = root.join(Path::new(rel).parent().unwrap_or(Path::new("")));
    let src = &sc.src;
    let mut files = Vec::new();
    let mut imports_local = false;
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
            let mut modules: Vec<(PathBuf, Vec<String>)> = Vec::new();
            let resolve = |base: &Path, comps: &[&str]| -> Option<PathBuf> {
                let mut p = base.to_path_buf();
                for c in comps {
                    p.push(c);
                }
                let file = p.with_extension("py");
                if file.is_file() {
                    Some(file)
                } else if p.join("__init__.py").is_file() {
                    Some(p.join("__init__.py"))
                } else {
                    None
                }
            };
            for c in FROM.captures_iter(&src.masked) {
                let dots = c[1].len();
                let comps: Vec<&str> = c[2].split('.').filter(|s| !s.is_empty()).collect();
                let names: Vec<String> = c[3]
                    .split(',')
                    .filter_map(|n| n.split_whitespace().next().map(str::to_string))
                    .collect();
                if dots > 0 {
                    let mut base = fdir.clone();
                    for _ in 1..dots {
                        base.pop();
                    }
                    imports_local = true;
                    if comps.is_empty() {
                        for n in &names {
                            if let Some(p) = resolve(&base, &[n]) {
                                modules.push((p, Vec::new()));
                            }
                        }
                        if let Some(p) = resolve(&base, &[]) {
                            modules.push((p, names.clone()));
                        }
                    } else if let Some(p) = resolve(&base, &comps) {
                        modules.push((p, names));
                    }
                    continue;
                }
                let Some(top) = comps.first() else { continue };
                if !manifest
                    .python
                    .local_modules
                    .contains(&top.to_ascii_lowercase())
                    && !fdir.join(format!("{top}.py")).is_file()
                    && !fdir.join(top).is_dir()
                {
                    continue;
                }
                imports_local = true;
                if let Some(p) = bases.iter().find_map(|b| resolve(b, &comps)) {
                    // `from pkg import mod` may name a module
                    for n in &names {
                        let mut sub = comps.clone();
                        sub.push(n);
                        if let Some(q) = bases.iter().find_map(|b| resolve(b, &sub)) {
                            modules.push((q, Vec::new()));
                        }
                    }
                    modules.push((p, names));
                }
            }
            for c in IMPORT.captures_iter(&src.masked) {
                let comps: Vec<&str> = c[1].split('.').collect();
                let top = comps[0];
                if manifest
                    .python
                    .local_modules
                    .contains(&top.to_ascii_lowercase())
                    || fdir.join(format!("{top}.py")).is_file()
                {
                    imports_local = true;
                    if let Some(p) = bases.iter().find_map(|b| resolve(b, &comps)) {
                        modules.push((p, Vec::new()));
                    }
                }
            }
            // follow re-exports of package __init__ files one level
            for (p, _) in &modules {
                files.push(p.clone());
                if p.file_name().is_some_and(|n| n == "__init__.py")
                    && let Some(text) = ai_issues::read_text(p)
                {
                    let init = Source::new(Lang::Python, &text);
                    let dir = p.parent().unwrap_or(Path::new("")).to_path_buf();
                    for c in FROM.captures_iter(&init.masked) {
                        if c[1].len() == 1 {
                            let comps: Vec<&str> =
                                c[2].split('.').filter(|s| !s.is_empty()).collect();
                            if let Some(q) = resolve(&dir, &comps) {
                                files.push(q);
                            }
                        }
                    }
                }
            }
        }
        Lang::Js | Lang::Ts => {
            static RE: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r#"(?:^|[^\w$.])(?:from|import)\s*["'`]|(?:^|[^\w$.])(?:require|import)\s*\(\s*["'`]"#,
                )
            });
            for mm in RE.find_iter(&src.masked) {
                let Some(spec) = src.string_at(mm.end() - 1) else {
                    continue;
                };
                if spec.starts_with('.') {
                    imports_local = true;
                    if let Some(p) = resolve_js_pub(&fdir, spec, root) {
                        files.push(p);
                    }
                } else if spec.starts_with("@/")
                    || spec.starts_with('~')
                    || spec.starts_with('#')
                    || spec.starts_with('$')
                {
                    imports_local = true;
                } else if let Some(npm) = &manifest.npm {
                    let first = spec.split('/').next().unwrap_or("");
                    if npm
                        .aliases
                        .iter()
                        .any(|a| !a.is_empty() && spec.starts_with(a.as_str()))
                        || npm.base_url_entries.contains(first)
                    {
                        imports_local = true;
                    }
                    // the package itself or a workspace member
                    let pkg = ai_issues::npm_package_name(spec);
                    if npm.own_names.contains(&pkg) {
                        imports_local = true;
                    }
                }
            }
        }
        Lang::Rust => {
            let in_module = !is_test_path(rel);
            if in_module {
                imports_local = true;
                files.push(root.join(rel));
            } else if let Some(cargo) = &manifest.cargo {
                let text = &src.masked;
                imports_local = cargo.crate_names.iter().any(|n| {
                    text.contains(&format!("{n}::")) || text.contains(&format!("use {n}"))
                }) || text.contains("super::")
                    || text.contains("crate::")
                    || text.contains("trybuild")
                    || text.contains("CARGO_BIN_EXE_")
                    || text.contains("cargo_bin")
                    || text.contains("CARGO_MANIFEST_DIR")
                    || Regex::new(r"(?m)^[ \t]*mod\s+\w+\s*;").is_ok_and(|r| r.is_match(text));
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
            } else {
                imports_local = true; // undecidable without Cargo.toml
            }
        }
        Lang::Go => {
            static PKG: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^package\s+(\w+)"));
            let pkg = PKG
                .captures(&src.masked)
                .map(|c| c[1].to_string())
                .unwrap_or_default();
            let (pkg_files, names) = cache
                .go_packages
                .entry(fdir.clone())
                .or_insert_with(|| {
                    static DEF: LazyLock<Regex> =
                        LazyLock::new(|| re(r"(?m)^(?:func\s+(?:\([^)]*\)\s*)?|type\s+|var\s+|const\s+)([A-Za-z_]\w*)"));
                    let mut files = Vec::new();
                    let mut names = BTreeSet::new();
                    if let Ok(rd) = std::fs::read_dir(&fdir) {
                        for e in rd.filter_map(|e| e.ok()) {
                            let n = e.file_name().to_string_lossy().into_owned();
                            if n.ends_with(".go") && !n.ends_with("_test.go") {
                                if let Some(text) = ai_issues::read_text(&e.path()) {
                                    names.extend(DEF.captures_iter(&text).map(|c| c[1].to_string()));
                                }
                                files.push(e.path());
                            }
                        }
                    }
                    (files, names)
                })
                .clone();
            files.extend(pkg_files);
            if let Some(gomod) = &manifest.go {
                let module = &gomod.module;
                if !module.is_empty()
                    && src
                        .strings
                        .iter()
                        .any(|s| src.text[s.start..s.end].starts_with(module.as_str()))
                {
                    imports_local = true;
                }
            }
            if let Some(base) = pkg.strip_suffix("_test")
                && go_import_paths(src)
                    .iter()
                    .any(|p| p.rsplit('/').next() == Some(base))
            {
                imports_local = true;
            }
            if !pkg.ends_with("_test") && !names.is_empty() {
                // same package: uses the subject if it names one of its identifiers
                static IDENT: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z_]\w*"));
                if IDENT
                    .find_iter(&src.masked)
                    .any(|i| names.contains(i.as_str()))
                {
                    imports_local = true;
                }
            }
        }
        _ => imports_local = true,
    }
    files.sort();
    files.dedup();
    (files, imports_local)
}

/// Import paths of a Go file.
fn go_import_paths(src: &Source) -> Vec<String> {
    static BLOCK: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^[ \t]*import\s*\("));
    static SINGLE: LazyLock<Regex> =
        LazyLock::new(|| re(r#"(?m)^[ \t]*import\s+(?:[\w.]+\s+)?["`]"#));
    let mut out = Vec::new();
    for m in BLOCK.find_iter(&src.masked) {
        if let Some(close) = src.match_close(m.end() - 1) {
            for s in src
                .strings
                .iter()
                .filter(|s| s.open > m.end() && s.open < close)
            {
                out.push(src.text[s.start..s.end].to_string());
            }
        }
    }
    for m in SINGLE.find_iter(&src.masked) {
        if let Some(p) = src.string_at(m.end() - 1) {
            out.push(p.to_string());
        }
    }
    out
}

fn resolve_js_pub(base: &Path, spec: &str, root: &Path) -> Option<PathBuf> {
    ai_issues::resolve_js_import(base, spec, root)
}

fn subject_functions(path: &Path, cache: &mut Cache, exclude_tests: bool) -> Vec<SubjectFn> {
    if let Some(v) = cache.subjects.get(path) {
        return v.clone();
    }
    let mut out = Vec::new();
    let lang = path.to_str().and_then(scanned_lang);
    if let (Some(lang), Some(text)) = (lang, ai_issues::read_text(path)) {
        let src = Source::new(lang, &text);
        let tests = src.cfg_test_ranges();
        static PY_NEG: LazyLock<Regex> =
            LazyLock::new(|| re(r"\braise\b|\breturn\s+(?:None|False)\b|(?m)^[ \t]*return\s*$"));
        static JS_NEG: LazyLock<Regex> = LazyLock::new(|| {
            re(
                r"\bthrow\b|\breturn\s+(?:null|undefined|false)\b|\bPromise\s*\.\s*reject\b|\breject\s*\(",
            )
        });
        static RUST_NEG: LazyLock<Regex> =
            LazyLock::new(|| re(r"\bpanic!|\bassert!|\bunreachable!|\bbail!|\bErr\s*\(|\bNone\b"));
        static GO_NEG: LazyLock<Regex> = LazyLock::new(|| {
            re(r"\bpanic\s*\(|errors\.New|fmt\.Errorf|\breturn\s+(?:nil|false)\b")
        });
        for f in src.functions() {
            if exclude_tests && in_any(&tests, f.start) {
                continue;
            }
            let Some((a, b)) = f.body else { continue };
            let body = &src.masked[a..b.max(a)];
            let ret = f.ret.clone().unwrap_or_default();
            let negative = match lang {
                Lang::Python => PY_NEG.is_match(body),
                Lang::Js | Lang::Ts => JS_NEG.is_match(body),
                Lang::Rust => {
                    ret.contains("Result") || ret.contains("Option") || RUST_NEG.is_match(body)
                }
                Lang::Go => ret.contains("error") || GO_NEG.is_match(body),
                _ => body.contains("throw "),
            };
            let params = split_args(&src.masked, f.params.0, f.params.1)
                .iter()
                .filter(|&&(x, y)| {
                    let p = src.code[x..y].trim();
                    !matches!(p, "self" | "cls" | "&self" | "&mut self" | "mut self")
                        && !p.starts_with('*')
                        || p.starts_with("*args")
                })
                .count();
            out.push(SubjectFn {
                name: f.name.clone(),
                negative,
                is_async: f.is_async || ret.contains("Promise<") || ret.contains("Future"),
                params,
            });
        }
    }
    cache.subjects.insert(path.to_path_buf(), out.clone());
    out
}

const BUILTIN_FIXTURES: &[&str] = &[
    "self",
    "cls",
    "tmp_path",
    "tmp_path_factory",
    "tmpdir",
    "tmpdir_factory",
    "monkeypatch",
    "capsys",
    "capsysbinary",
    "capfd",
    "capfdbinary",
    "caplog",
    "request",
    "recwarn",
    "pytestconfig",
    "record_property",
    "record_testsuite_property",
    "record_xml_attribute",
    "testdir",
    "pytester",
    "doctest_namespace",
    "cache",
    "mocker",
    "event_loop",
    "anyio_backend",
    "subtests",
];

fn subject_checks(
    sc: &mut Scan,
    root: &Path,
    tests: &[TestCase],
    assertions: &[Vec<Assertion>],
    manifest: &Manifest,
    cache: &mut Cache,
) {
    let (files, imports_local) = subject_files(sc, root, manifest, cache);
    let active: Vec<&TestCase> = tests
        .iter()
        .filter(|t| t.skipped.is_none() && t.attrs != "group")
        .collect();
    // where each active test asserts: (start, end) of its assertion statements
    let spans: Vec<Vec<(usize, usize)>> = tests
        .iter()
        .zip(assertions)
        .filter(|(t, _)| t.skipped.is_none() && t.attrs != "group")
        .map(|(_, xs)| {
            xs.iter()
                .map(|x| (x.off, assertion_end(&sc.src, x.off)))
                .collect()
        })
        .collect();
    if active.is_empty() {
        return;
    }
    // subject never imported or used
    let e2e = {
        let text = &sc.src.code;
        let layer_e2e =
            sc.rel.contains("e2e") || sc.rel.contains("cypress") || sc.rel.contains("playwright");
        layer_e2e
            || [
                "page.goto",
                "cy.visit",
                "@playwright/test",
                "puppeteer",
                "supertest",
                "webdriverio",
                "selenium",
                "subprocess",
                "http://localhost",
                "http://127.0.0.1",
                "exec.Command",
                "os/exec",
                "Command::new",
            ]
            .iter()
            .any(|p| text.contains(p))
    };
    let fixture_params = sc.src.lang == Lang::Python && {
        let parametrized: BTreeSet<String> = tests
            .iter()
            .flat_map(|t| {
                t.attrs
                    .lines()
                    .filter(|l| l.contains("parametrize"))
                    .flat_map(|l| {
                        let inner = l.split_once('(').map_or("", |(_, r)| r);
                        let first = inner.split(['"', '\'']).nth(1).unwrap_or("");
                        first
                            .split(',')
                            .map(|s| s.trim().to_string())
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        tests.iter().any(|t| {
            t.params
                .iter()
                .any(|p| !BUILTIN_FIXTURES.contains(&p.as_str()) && !parametrized.contains(p))
        })
    };
    if !imports_local && !e2e && !fixture_params && sc.src.lang != Lang::Java {
        let off = active[0].off;
        sc.push(
            AI,
            "subject_not_used",
            Severity::Critical,
            off,
            "the test file never imports or uses the code under test".to_string(),
        );
    }
    // coverage of each subject function the tests call
    let exclude_tests = sc.src.lang == Lang::Rust;
    let mut funcs: BTreeMap<String, SubjectFn> = BTreeMap::new();
    for f in &files {
        for sf in subject_functions(f, cache, exclude_tests) {
            if sf.name.starts_with("test")
                || sf.name.starts_with("Test")
                || sf.name.starts_with('_')
            {
                continue;
            }
            funcs.entry(sf.name.clone()).or_insert(sf);
        }
    }
    if funcs.is_empty() {
        return;
    }
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
    let m = sc.src.masked.clone();
    // every call site in the tests: name → (test index, offset of `(`)
    // (no look-behind: a match must not swallow the `(` of an enclosing call)
    static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"([A-Za-z_$][\w$]*)\s*\("));
    let mut calls: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (ti, t) in active.iter().enumerate() {
        let (a, z) = t.body;
        for c in CALL.captures_iter(&m[a..z]) {
            let g = c.get(1).unwrap();
            if funcs.contains_key(g.as_str()) {
                calls
                    .entry(g.as_str())
                    .or_default()
                    .push((ti, a + c.get(0).unwrap().end() - 1));
            }
        }
    }
    let mut reports: Vec<(usize, &str, Severity, String)> = Vec::new();
    for (name, sf) in &funcs {
        let Some(sites) = calls.get(name.as_str()) else {
            continue;
        };
        // the tests whose subject `name` is: named after it, or asserting on
        // a call of it (not tests that merely use it for setup)
        let name_words = ai_issues::identifier_words(name);
        let mut callers: Vec<&TestCase> = Vec::new();
        let mut seen_tests = BTreeSet::new();
        let mut edge = false;
        for &(ti, open) in sites {
            let t = active[ti];
            let named = {
                let tw = ai_issues::identifier_words(
                    &t.name.replace(|c: char| !c.is_alphanumeric(), "_"),
                );
                name_words
                    .iter()
                    .all(|w| tw.iter().any(|x| x.starts_with(w.as_str())))
            };
            let asserted = spans[ti].iter().any(|&(a, z)| open >= a && open <= z);
            if !(named || asserted) {
                continue;
            }
            if seen_tests.insert(ti) {
                callers.push(t);
                // edge values may sit in test data (tables, parametrize)
                // rather than in the call itself
                let (a, z) = t.body;
                if EDGE_NAME.is_match(&t.name)
                    || EDGE_TOKEN.is_match(&sc.src.code[a..z])
                    || EDGE_TOKEN.is_match(&t.attrs)
                {
                    edge = true;
                }
            }
            if !edge {
                let (args, _) = call_args(&sc.src, open);
                if args.iter().any(|x| {
                    let x = x.trim();
                    EDGE_ARG.is_match(x)
                        || split_top(x.trim_matches(['[', ']', '(', ')', '&']))
                            .iter()
                            .any(|y| EDGE_ARG.is_match(y))
                }) {
                    edge = true;
                }
            }
        }
        let Some(first) = callers.first() else {
            continue;
        };
        if sf.negative {
            let negative = callers.iter().any(|t| {
                let (a, z) = t.body;
                NEG_NAME.is_match(&t.name)
                    || NEG_BODY.is_match(&sc.src.code[a..z])
                    || t.attrs.contains("should_panic")
            });
            if !negative {
                reports.push((
                    first.off,
                    "no_negative_path_test",
                    Severity::Error,
                    format!("`{name}` has an error path but no test exercises it"),
                ));
            }
        }
        if sf.params > 0 && !edge {
            reports.push((first.off, "no_edge_case_test", Severity::Error, format!("no test calls `{name}` with an edge value (empty, zero, negative, null, boundary)")));
        }
        if sf.is_async {
            let sync_caller = callers.iter().find(|t| {
                let (a, z) = t.body;
                let body = &m[a..z];
                !t.is_async
                    && !body.contains("await")
                    && !body.contains(".then(")
                    && !body.contains("resolves")
                    && !body.contains("rejects")
                    && !body.contains("block_on")
                    && !body.contains("asyncio.run")
                    && !body.contains("run_until_complete")
                    && !body.contains("done(")
                    && !body.trim_start().starts_with("return")
            });
            if let Some(t) = sync_caller {
                reports.push((
                    t.off,
                    "async_without_async_test",
                    Severity::Warning,
                    format!(
                        "`{name}` is async but test `{}` neither awaits it nor is async",
                        t.name
                    ),
                ));
            }
        }
    }
    for (off, check, sev, msg) in reports {
        sc.push(COVERAGE, check, sev, off, msg);
    }
}
