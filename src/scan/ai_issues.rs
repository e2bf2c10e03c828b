//! The AI-issue scan (L0.5, REFERENCE.md "AI-issue scan — 8 categories, 24
//! checks") run by the code-validation gate IMPL-001.3 on the files the
//! test-generation step changed. Line- and token-based heuristics over a
//! lexical model of each file (strings and comments cannot trigger code
//! checks); tuned to stay quiet on ordinary code. `docs/scans.md` lists
//! every check id with its detection rule and blind spots.

mod imports;
mod manifest;
mod stdlib;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

pub use manifest::{CargoManifest, GoManifest, Manifest, NpmManifest, PythonManifest};
// For the built-in analyzer's failure classification (is a missing module
// the project's, the standard library's, or a declared dependency?).
pub(crate) use imports::{npm_package, python_importable};
pub(crate) use manifest::py_norm;
pub(crate) use stdlib::{NODE_BUILTINS, PYTHON_STDLIB};

use super::findings::{Finding, Severity};
use super::source::{Func, Lang, Source, scanned_lang};
use crate::project::is_test_path;

pub(crate) const HALLUCINATED: &str = "hallucinated_imports";
const PLACEHOLDER: &str = "placeholder_code";
const MOCK_LEAKAGE: &str = "mock_leakage";
const TYPE_ABUSE: &str = "type_abuse";
const NAMING: &str = "naming";
const CONTROL_FLOW: &str = "control_flow";
const RESOURCE_LEAKS: &str = "resource_leaks";
const SECURITY: &str = "security";

/// Files larger than this are skipped (generated or vendored code).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;

/// The manifests found in the project root. `scan_files` also looks for a
/// nearer manifest per file (monorepos, workspaces) and merges it with this.
pub fn load_manifest(root: &Path) -> Manifest {
    manifest::load_dir(root, "")
}

/// State of one file's scan.
pub(crate) struct Ctx<'a> {
    pub root: &'a Path,
    pub rel: &'a str,
    pub src: Source<'a>,
    pub manifest: &'a Manifest,
    test_file: bool,
    test_ranges: Vec<(usize, usize)>,
    out: Vec<Finding>,
}

impl Ctx<'_> {
    /// Is the code at `off` test code (by path, or inside `#[cfg(test)]`)?
    fn is_test(&self, off: usize) -> bool {
        self.test_file || self.test_ranges.iter().any(|&(a, b)| off >= a && off < b)
    }

    pub(crate) fn push(
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

/// Scan one file's text. `rel_path` is relative to `root`, `/`-separated;
/// the language comes from its extension (others yield nothing). `root` is
/// read only to resolve relative imports and list local modules.
pub fn scan_file(root: &Path, rel_path: &str, text: &str, manifest: &Manifest) -> Vec<Finding> {
    let Some(lang) = scanned_lang(rel_path) else {
        return Vec::new();
    };
    let src = Source::new(lang, text);
    let test_ranges = src.cfg_test_ranges();
    let mut cx = Ctx {
        root,
        rel: rel_path,
        src,
        manifest,
        test_file: is_test_path(rel_path),
        test_ranges,
        out: Vec::new(),
    };
    let funcs = cx.src.functions();
    imports::check(&mut cx);
    placeholders(&mut cx, &funcs);
    mock_leakage(&mut cx);
    type_abuse(&mut cx);
    naming(&mut cx, &funcs);
    control_flow(&mut cx);
    resource_leaks(&mut cx);
    security(&mut cx);
    let mut out = cx.out;
    out.sort_by(|a, b| (a.line, &a.check, &a.message).cmp(&(b.line, &b.check, &b.message)));
    out.dedup_by(|a, b| a.line == b.line && a.check == b.check);
    out
}

/// Read and scan files (relative to `root`). Unreadable, binary and huge
/// (> 1 MiB) files are skipped; non-UTF-8 text is read lossily. Each file is
/// checked against the nearest manifest directory above it, merged with the
/// root's.
pub fn scan_files(root: &Path, rel_paths: &[String]) -> Vec<Finding> {
    let root_manifest = load_manifest(root);
    let mut by_dir: HashMap<String, Manifest> = HashMap::new();
    let mut dir_cache: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for rel in rel_paths {
        let rel = rel.replace('\\', "/");
        if scanned_lang(&rel).is_none() {
            continue;
        }
        let Some(text) = read_text(&root.join(&rel)) else {
            continue;
        };
        let parent = Path::new(&rel)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = dir_cache
            .entry(parent)
            .or_insert_with(|| nearest_manifest_dir(root, &rel))
            .clone();
        let manifest = if dir.is_empty() {
            &root_manifest
        } else {
            by_dir
                .entry(dir.clone())
                .or_insert_with(|| manifest::merge(manifest::load_dir(root, &dir), &root_manifest))
        };
        out.extend(scan_file(root, &rel, &text, manifest));
    }
    out
}

/// The manifests that apply to `rel`: the nearest directory above it that
/// has one, merged with the root's.
pub(crate) fn manifest_for(root: &Path, rel: &str) -> Manifest {
    let root_manifest = load_manifest(root);
    let dir = nearest_manifest_dir(root, rel);
    if dir.is_empty() {
        root_manifest
    } else {
        manifest::merge(manifest::load_dir(root, &dir), &root_manifest)
    }
}

/// The lowercase words of an identifier (snake, kebab and camel case).
pub(crate) fn identifier_words(ident: &str) -> Vec<String> {
    words(ident)
}

/// The npm package a bare import specifier names.
pub(crate) fn npm_package_name(spec: &str) -> String {
    imports::npm_package(spec)
}

/// The file a relative JS/TS import resolves to (Node/TypeScript rules).
pub(crate) fn resolve_js_import(
    base: &Path,
    spec: &str,
    root: &Path,
) -> Option<std::path::PathBuf> {
    imports::resolve_js(base, spec, root)
}

/// The text of a file if it is a regular text file of at most 1 MiB.
pub(crate) fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn nearest_manifest_dir(root: &Path, rel: &str) -> String {
    let mut dir = Path::new(rel)
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    loop {
        if dir.as_os_str().is_empty() {
            return String::new();
        }
        if manifest::MANIFEST_FILES
            .iter()
            .any(|f| root.join(&dir).join(f).is_file())
        {
            return dir.to_string_lossy().replace('\\', "/");
        }
        if !dir.pop() {
            return String::new();
        }
    }
}

// ---------------------------------------------------------------- helpers

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|e| panic!("scan regex {s}: {e}"))
}

/// The innermost function whose body contains `off`.
fn enclosing_func(funcs: &[Func], off: usize) -> Option<usize> {
    funcs
        .iter()
        .enumerate()
        .filter(|(_, f)| f.body.is_some_and(|(a, b)| off >= a && off <= b))
        .max_by_key(|(_, f)| f.start)
        .map(|(i, _)| i)
}

/// Python: the header lines (trimmed code) of the blocks enclosing line
/// `idx`, innermost first.
fn enclosing_headers<'s>(src: &'s Source, idx: usize) -> Vec<&'s str> {
    let mut out = Vec::new();
    let logical = src.logical_starts();
    let mut ind = src.indent(idx);
    let mut k = idx;
    while k > 0 && ind > 0 {
        k -= 1;
        if src.is_blank(k) || !logical[k] {
            continue;
        }
        let i = src.indent(k);
        if i < ind {
            out.push(src.code_line(k).trim());
            ind = i;
        }
    }
    out
}

/// Python: the header line of the nearest enclosing `class`.
fn enclosing_class<'s>(src: &'s Source, idx: usize) -> Option<&'s str> {
    enclosing_headers(src, idx)
        .into_iter()
        .find(|h| h.starts_with("class "))
}

static ABSTRACT_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"class\s+(?:Base\w*|Abstract\w*|\w*(?:Base|Mixin|Interface|Protocol|ABC))\b|\b(?:ABC|ABCMeta|Protocol)\b",
    )
});

/// Python definitions that are meant to have no body: abstract methods,
/// overloads, protocol/ABC members, stub files, `TYPE_CHECKING` stubs.
fn py_abstract(src: &Source, f: &Func, rel: &str) -> bool {
    if rel.ends_with(".pyi") {
        return true;
    }
    if f.decorators
        .iter()
        .any(|d| d.contains("abstract") || d.contains("overload") || d.contains("override"))
    {
        return true;
    }
    let headers = enclosing_headers(src, f.line);
    if headers
        .iter()
        .any(|h| h.starts_with("if") && h.contains("TYPE_CHECKING"))
    {
        return true;
    }
    headers
        .iter()
        .find(|h| h.starts_with("class "))
        .is_some_and(|class| ABSTRACT_CLASS.is_match(class))
}

/// The class name and whether it has explicit bases, from `class X(Y):`.
fn class_parts(header: &str) -> (&str, bool) {
    let rest = header.trim_start_matches("class ").trim();
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..name_end];
    let bases = rest[name_end..]
        .trim_start()
        .strip_prefix('(')
        .map(|b| b.split(')').next().unwrap_or("").trim())
        .unwrap_or("");
    (name, !bases.is_empty() && bases != "object")
}

/// Python: a method with no real body that is nevertheless deliberate — a
/// protocol/dunder no-op, one implementation of a method several classes of
/// the file define (null objects), a hook of a class subclassed in the file,
/// or (for `no_op`) an override of a base-class hook.
fn py_deliberate(src: &Source, funcs: &[Func], f: &Func, rel: &str, no_op: bool) -> bool {
    if py_abstract(src, f, rel) || (f.name.starts_with("__") && f.name.ends_with("__")) {
        return true;
    }
    let Some(class) = enclosing_class(src, f.line) else {
        return false;
    };
    let (name, has_bases) = class_parts(class);
    if no_op && has_bases {
        return true;
    }
    let polymorphic = funcs
        .iter()
        .any(|g| g.name == f.name && g.line != f.line && g.indent == f.indent);
    let subclassed = !name.is_empty() && {
        let pat = format!(
            r"(?m)^[ \t]*class\s+\w+\s*\([^)]*\b{}\b",
            regex::escape(name)
        );
        Regex::new(&pat).is_ok_and(|r| r.is_match(&src.masked))
    };
    polymorphic || subclassed
}

/// The direct statements (logical lines, trimmed masked text, with offsets)
/// of a Python function body, without a leading docstring; nested blocks'
/// lines are left out.
fn py_statements<'s>(src: &'s Source, f: &Func, logical: &[bool]) -> Vec<(usize, &'s str)> {
    let Some((a, b)) = f.body else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let first = src.line_index(a);
    let last = src.line_index(b.max(a));
    let mut direct: Option<usize> = None;
    for (idx, &starts) in logical.iter().enumerate().take(last + 1).skip(first) {
        if !starts && idx != first {
            continue;
        }
        let ls = src.line_start(idx).max(a);
        let le = src.line_end(idx).min(b.max(a));
        if ls >= le {
            continue;
        }
        let t = src.masked[ls..le].trim();
        if t.is_empty() {
            continue;
        }
        let ind = if idx == first && ls > src.line_start(idx) {
            usize::MAX
        } else {
            src.indent(idx)
        };
        match direct {
            None => direct = Some(ind),
            Some(d) if d != ind => continue,
            _ => {}
        }
        out.push((ls, t));
    }
    if let Some((_, t)) = out.first()
        && (t.starts_with(['"', '\'']) || t.starts_with("r\"") || t.starts_with("r'"))
    {
        out.remove(0);
    }
    out
}

// ---------------------------------------------------------------- placeholder code

fn placeholders(cx: &mut Ctx, funcs: &[Func]) {
    static PHRASE: LazyLock<Regex> = LazyLock::new(|| {
        re(concat!(
            r"(?i)\b(?:todo|fixme|xxx)\b\s*[:\-]?\s*(?:implement\b|add\s+(?:the\s+)?(?:implementation|logic|code)\b)",
            r"|\b(?:add|put|insert|write|place)\s+(?:your|the)\s+(?:own\s+)?(?:code|logic|implementation)\s+here\b",
            r"|\byour\s+(?:code|implementation|logic)\s+(?:goes\s+)?here\b",
            r"|\bimplementation\s+(?:is\s+)?pending\b",
            r"|^\s*implement\s+(?:me|this)\b",
            r"|\bplaceholder\s+(?:implementation|logic|code)\b",
            r"|(?:\.\.\.|…)\s*(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|implementation|function|file|logic)",
            r"|(?:\.\.\.|…)\s*(?:existing|remaining|other)\s+(?:code|logic|implementation)"
        ))
    });
    static NOT_IMPL_MSG: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^\s*(?:not\s+(?:yet\s+)?implemented|unimplemented|todo\b|implement\s+me|method\s+not\s+implemented)",
        )
    });
    static RUST_TODO: LazyLock<Regex> = LazyLock::new(|| re(r"\b(todo|unimplemented)!\s*\("));
    static PY_RAISE: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^[ \t]*raise\s+NotImplementedError\b"));
    static THROW: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\bthrow\s+new\s+(\w*(?:Error|Exception))\s*\(\s*([`'\x22])|\bthrow\s+new\s+(NotImplemented\w*)\s*\(",
        )
    });
    static GO_PANIC: LazyLock<Regex> = LazyLock::new(|| re(r#"\bpanic\s*\(\s*""#));

    // comments and docstring-like string statements
    let comments: Vec<(usize, String)> = cx
        .src
        .comments
        .iter()
        .map(|c| (cx.src.line_start(c.line), c.text.clone()))
        .collect();
    for (off, text) in comments {
        // section rulers (`// ---- placeholder code ----`) are headings
        let ruler = text.starts_with("---") || text.starts_with("===") || text.starts_with("***");
        if !cx.is_test(off) && !ruler && PHRASE.is_match(&text) {
            cx.push(
                PLACEHOLDER,
                "placeholder_comment",
                Severity::Error,
                off,
                format!("placeholder left in code: \"{}\"", truncate(&text, 80)),
            );
        }
    }
    if cx.src.lang == Lang::Python {
        let docs: Vec<(usize, String)> = cx
            .src
            .strings
            .iter()
            .filter(|s| {
                let ls = cx.src.line_start(cx.src.line_index(s.open));
                cx.src.text[ls..s.open]
                    .trim()
                    .trim_start_matches(['r', 'u', 'R', 'U'])
                    .is_empty()
            })
            .flat_map(|s| {
                let text = &cx.src.text[s.start..s.end];
                let mut off = s.start;
                text.split('\n')
                    .map(|l| {
                        let o = off;
                        off += l.len() + 1;
                        (o, l.to_string())
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for (off, text) in docs {
            if !cx.is_test(off) && PHRASE.is_match(&text) {
                cx.push(
                    PLACEHOLDER,
                    "placeholder_comment",
                    Severity::Error,
                    off,
                    format!(
                        "placeholder left in a docstring: \"{}\"",
                        truncate(text.trim(), 80)
                    ),
                );
            }
        }
    }

    // not-implemented bodies
    let mut hits: Vec<(usize, String)> = Vec::new();
    match cx.src.lang {
        Lang::Rust => {
            for c in RUST_TODO.captures_iter(&cx.src.masked) {
                hits.push((
                    c.get(0).unwrap().start(),
                    format!("`{}!()` left in code", &c[1]),
                ));
            }
        }
        Lang::Python => {
            let logical = cx.src.logical_starts().to_vec();
            for m in PY_RAISE.find_iter(&cx.src.masked) {
                let off = m.start();
                let stmt = &cx.src.code[off..cx.src.line_end(cx.src.line_index(off))];
                let low = stmt.to_ascii_lowercase();
                if low.contains("subclass")
                    || low.contains("override")
                    || low.contains("must implement")
                {
                    continue;
                }
                let deliberate = enclosing_func(funcs, off)
                    .is_some_and(|i| py_deliberate(&cx.src, funcs, &funcs[i], cx.rel, false));
                let abstract_class = enclosing_class(&cx.src, cx.src.line_index(off))
                    .is_some_and(|c| ABSTRACT_CLASS.is_match(c));
                if !deliberate && !abstract_class {
                    hits.push((off, "`raise NotImplementedError` left in code".to_string()));
                }
            }
            for f in funcs {
                if cx.is_test(f.start) {
                    continue;
                }
                let stmts = py_statements(&cx.src, f, &logical);
                let noop_name = {
                    let w = words(&f.name);
                    w.iter().any(|x| x == "noop" || x == "nop")
                        || w.windows(2).any(|p| {
                            (p[0] == "no" && p[1] == "op") || (p[0] == "do" && p[1] == "nothing")
                        })
                };
                let pass_only = stmts.len() == 1 && stmts[0].1 == "pass" && !noop_name && {
                    let line = cx.src.line_index(stmts[0].0);
                    !cx.src.comments.iter().any(|c| c.line == line)
                };
                let ellipses: Vec<usize> = stmts
                    .iter()
                    .filter(|(_, t)| *t == "...")
                    .map(|(o, _)| *o)
                    .collect();
                if (!pass_only && ellipses.is_empty())
                    || py_deliberate(&cx.src, funcs, f, cx.rel, true)
                {
                    continue;
                }
                if pass_only {
                    hits.push((stmts[0].0, format!("`{}` has a bare `pass` body", f.name)));
                }
                for off in ellipses {
                    cx.push(
                        PLACEHOLDER,
                        "ellipsis_statement",
                        Severity::Error,
                        off,
                        format!("`...` used as a statement in `{}`", f.name),
                    );
                }
            }
        }
        Lang::Js | Lang::Ts | Lang::Java => {
            for c in THROW.captures_iter(&cx.src.masked) {
                let whole = c.get(0).unwrap();
                if c.get(3).is_some() {
                    hits.push((whole.start(), format!("`throw new {}` left in code", &c[3])));
                    continue;
                }
                let open = whole.end() - 1;
                if let Some(msg) = cx.src.string_at(open)
                    && NOT_IMPL_MSG.is_match(msg)
                {
                    hits.push((
                        whole.start(),
                        format!(
                            "`throw new {}(\"{}\")` left in code",
                            &c[1],
                            truncate(msg, 40)
                        ),
                    ));
                }
            }
        }
        Lang::Go => {
            for m in GO_PANIC.find_iter(&cx.src.masked) {
                if let Some(msg) = cx.src.string_at(m.end() - 1)
                    && NOT_IMPL_MSG.is_match(msg)
                {
                    hits.push((
                        m.start(),
                        format!("`panic(\"{}\")` left in code", truncate(msg, 40)),
                    ));
                }
            }
        }
        // Languages the scans do not read.
        _ => {}
    }
    for (off, msg) in hits {
        if !cx.is_test(off) {
            cx.push(
                PLACEHOLDER,
                "not_implemented_body",
                Severity::Error,
                off,
                msg,
            );
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

// ---------------------------------------------------------------- mock leakage

fn mock_leakage(cx: &mut Ctx) {
    static JS_MOCK: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?:^|[^\w$.])(jest\s*\.\s*(?:fn|mock|spyOn|doMock|createMockFromModule)|vi\s*\.\s*(?:fn|mock|spyOn|doMock|stubGlobal|hoisted)|sinon\s*\.\s*\w+)\b",
        )
    });
    static PY_MOCK: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?m)^[ \t]*(?:from\s+unittest\.mock\s+import|from\s+unittest\s+import\s+(?:[\w, ]*\b)?mock\b|import\s+unittest\.mock|from\s+mock\s+import|import\s+mock\b|import\s+pytest_mock|from\s+pytest_mock\s+import)",
        )
    });
    static RUST_MOCK: LazyLock<Regex> =
        LazyLock::new(|| re(r"\buse\s+mockall\b|\bmockall\s*::|#\[\s*automock\s*\]|\bmock!\s*\{"));
    static JAVA_MOCK: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^[ \t]*import\s+(?:static\s+)?org\.mockito\b"));
    // Test support (mocks, fakes, test utilities) is test code by path.
    if cx.test_file {
        return;
    }
    let lang = cx.src.lang;
    let mut hits: Vec<(usize, &str, Severity, String)> = Vec::new();
    match lang {
        Lang::Js | Lang::Ts => {
            for c in JS_MOCK.captures_iter(&cx.src.masked) {
                let m = c.get(1).unwrap();
                hits.push((
                    m.start(),
                    "mock_in_source",
                    Severity::Critical,
                    format!(
                        "test double `{}` in production code",
                        m.as_str().replace(' ', "")
                    ),
                ));
            }
            for imp in imports::js_imports(cx) {
                let pkg = imports::npm_package(&imp.spec);
                let mock_lib = matches!(
                    pkg.as_str(),
                    "sinon"
                        | "jest-mock"
                        | "ts-mockito"
                        | "jest-mock-extended"
                        | "vitest-mock-extended"
                        | "testdouble"
                        | "nock"
                        | "msw"
                        | "@sinonjs/fake-timers"
                );
                let test_util = pkg.starts_with("@testing-library/")
                    || matches!(
                        pkg.as_str(),
                        "vitest"
                            | "@jest/globals"
                            | "jest"
                            | "chai"
                            | "mocha"
                            | "supertest"
                            | "@playwright/test"
                            | "cypress"
                            | "enzyme"
                            | "react-test-renderer"
                            | "ava"
                            | "tap"
                            | "uvu"
                    )
                    || imp.spec == "node:test";
                if mock_lib {
                    hits.push((
                        imp.off,
                        "mock_library_in_source",
                        Severity::Critical,
                        format!("mocking library `{pkg}` imported by production code"),
                    ));
                } else if test_util {
                    hits.push((
                        imp.off,
                        "test_utility_in_source",
                        Severity::Error,
                        format!("test utility `{}` imported by production code", imp.spec),
                    ));
                }
            }
        }
        Lang::Python => {
            for m in PY_MOCK.find_iter(&cx.src.masked) {
                let off = m.start() + m.as_str().len() - m.as_str().trim_start().len();
                hits.push((
                    off,
                    "mock_library_in_source",
                    Severity::Critical,
                    "mocking library imported by production code".to_string(),
                ));
            }
            static PY_TEST: LazyLock<Regex> = LazyLock::new(|| {
                re(r"(?m)^[ \t]*(?:import|from)\s+(pytest|_pytest|hypothesis|pytest_\w+)\b")
            });
            for c in PY_TEST.captures_iter(&cx.src.masked) {
                if cx
                    .manifest
                    .python
                    .local_modules
                    .contains(&c[1].to_ascii_lowercase())
                {
                    continue; // the project is that tool
                }
                let m = c.get(0).unwrap();
                let off = m.start() + m.as_str().len() - m.as_str().trim_start().len();
                hits.push((
                    off,
                    "test_utility_in_source",
                    Severity::Error,
                    format!("test utility `{}` imported by production code", &c[1]),
                ));
            }
        }
        Lang::Rust => {
            for m in RUST_MOCK.find_iter(&cx.src.masked) {
                hits.push((
                    m.start(),
                    "mock_library_in_source",
                    Severity::Critical,
                    "mockall used outside `#[cfg(test)]`".to_string(),
                ));
            }
            static RUST_TEST: LazyLock<Regex> = LazyLock::new(|| {
                re(
                    r"\buse\s+(assert_cmd|insta|proptest|pretty_assertions|assert_fs|predicates|rstest|serial_test|mockito|wiremock)\b",
                )
            });
            for c in RUST_TEST.captures_iter(&cx.src.masked) {
                hits.push((
                    c.get(0).unwrap().start(),
                    "test_utility_in_source",
                    Severity::Error,
                    format!("test utility crate `{}` used outside tests", &c[1]),
                ));
            }
        }
        Lang::Go => {
            for imp in imports::go_imports(cx) {
                let p = imp.spec.as_str();
                if p.ends_with("/gomock")
                    || p == "github.com/stretchr/testify/mock"
                    || p.ends_with("/mockery")
                {
                    hits.push((
                        imp.off,
                        "mock_library_in_source",
                        Severity::Critical,
                        format!("mocking package `{p}` imported by production code"),
                    ));
                } else if p == "testing"
                    || p.starts_with("github.com/stretchr/testify/")
                    || p == "net/http/httptest"
                {
                    hits.push((
                        imp.off,
                        "test_utility_in_source",
                        Severity::Error,
                        format!("test package `{p}` imported by production code"),
                    ));
                }
            }
        }
        _ => {
            for m in JAVA_MOCK.find_iter(&cx.src.masked) {
                hits.push((
                    m.start(),
                    "mock_library_in_source",
                    Severity::Critical,
                    "Mockito imported by production code".to_string(),
                ));
            }
            static JAVA_TEST: LazyLock<Regex> = LazyLock::new(|| {
                re(r"(?m)^[ \t]*import\s+(?:static\s+)?(org\.junit|org\.assertj|org\.hamcrest)\b")
            });
            for c in JAVA_TEST.captures_iter(&cx.src.masked) {
                hits.push((
                    c.get(0).unwrap().start(),
                    "test_utility_in_source",
                    Severity::Error,
                    format!("test library `{}` imported by production code", &c[1]),
                ));
            }
        }
    }
    for (off, check, sev, msg) in hits {
        if !cx.is_test(off) {
            cx.push(MOCK_LEAKAGE, check, sev, off, msg);
        }
    }
}

// ---------------------------------------------------------------- type abuse

fn type_abuse(cx: &mut Ctx) {
    static ANY: LazyLock<Regex> = LazyLock::new(|| {
        re(r"(?:[:|&<(]\s*|\bas\s+|,\s*)any\b(\s*[^\s\w$.(=:]|\s*$|\s+[|&]|\s*[=)])")
    });
    static DOUBLE: LazyLock<Regex> =
        LazyLock::new(|| re(r"\bas\s+(unknown|any)\s+as\s+([A-Za-z_$][\w$.]*(?:<[^>;]*>)?)"));
    static CHAIN: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\bas\s+([A-Za-z_$][\w$.]*(?:<[^>;()]*>)?(?:\[\])*)\s+as\s+([A-Za-z_$][\w$.]*)")
    });
    static AS_AFTER_PAREN: LazyLock<Regex> = LazyLock::new(|| re(r"\)\s*as\s+([A-Za-z_$][\w$.]*)"));
    static INNER_AS: LazyLock<Regex> = LazyLock::new(|| re(r"\bas\s+[A-Za-z_$]"));
    if cx.src.lang != Lang::Ts {
        return;
    }
    let mut hits: Vec<(usize, &str, Severity, String)> = Vec::new();
    let lines = cx.src.line_count();
    for idx in 0..lines {
        let line = cx.src.masked_line(idx);
        if !line.contains("any") {
            continue;
        }
        let disabled =
            cx.src.comments.iter().any(|c| {
                (c.line + 1 == idx || c.line == idx) && c.text.contains("no-explicit-any")
            });
        if disabled {
            continue;
        }
        if let Some(m) = ANY.find(line)
            && !DOUBLE.is_match(line)
        {
            hits.push((
                cx.src.line_start(idx) + m.start(),
                "explicit_any",
                Severity::Warning,
                "explicit `any` type".to_string(),
            ));
        }
    }
    let m = cx.src.masked.clone();
    for c in DOUBLE.captures_iter(&m) {
        let target = &c[2];
        if target.contains("Mock") || target.contains("Spy") {
            continue;
        }
        hits.push((
            c.get(0).unwrap().start(),
            "double_cast",
            Severity::Error,
            format!(
                "double cast `as {} as {target}` bypasses type checking",
                &c[1]
            ),
        ));
    }
    for c in CHAIN.captures_iter(&m) {
        let first = &c[1];
        if matches!(first, "unknown" | "any" | "const") || c[2].starts_with("const") {
            continue;
        }
        hits.push((
            c.get(0).unwrap().start(),
            "chained_assertion",
            Severity::Error,
            format!("chained type assertions `as {first} as {}`", &c[2]),
        ));
    }
    for c in AS_AFTER_PAREN.captures_iter(&m) {
        let close = c.get(0).unwrap().start();
        let Some(open) = match_open(&m, close) else {
            continue;
        };
        // a grouping parenthesis, not a call's
        let prev = m[..open].trim_end();
        if prev.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | ')' | ']' | '>'))
        {
            continue;
        }
        let inner = &m[open + 1..close];
        // only an `as` at the top level of the parentheses
        let mut depth = 0i32;
        let mut top = String::with_capacity(inner.len());
        for ch in inner.chars() {
            match ch {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
            top.push(if depth == 0 { ch } else { ' ' });
        }
        if INNER_AS.is_match(&top) && !top.contains("as const") && !c[1].starts_with("const") {
            let kind = if top.contains("as unknown") || top.contains("as any") {
                ("double_cast", "double cast through `unknown`/`any`")
            } else {
                (
                    "chained_assertion",
                    "chained type assertions `(x as A) as B`",
                )
            };
            if c[1].contains("Mock") {
                continue;
            }
            hits.push((open, kind.0, Severity::Error, kind.1.to_string()));
        }
    }
    for (off, check, sev, msg) in hits {
        cx.push(TYPE_ABUSE, check, sev, off, msg);
    }
}

/// The `(` matching the `)` at `close`, in masked text (looking back a
/// bounded distance).
fn match_open(m: &str, close: usize) -> Option<usize> {
    let b = m.as_bytes();
    let mut depth = 0i32;
    let mut j = close + 1;
    while j > 0 && close + 1 - j < 4000 {
        j -= 1;
        match b[j] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

// ---------------------------------------------------------------- naming

/// Common misspellings found in identifiers, with the correct word.
const MISSPELLINGS: &[(&str, &str)] = &[
    ("recieve", "receive"),
    ("recieved", "received"),
    ("reciever", "receiver"),
    ("recieving", "receiving"),
    ("seperate", "separate"),
    ("seperator", "separator"),
    ("seperated", "separated"),
    ("occured", "occurred"),
    ("occurence", "occurrence"),
    ("occurrance", "occurrence"),
    ("lenght", "length"),
    ("widht", "width"),
    ("heigth", "height"),
    ("hieght", "height"),
    ("retreive", "retrieve"),
    ("retrive", "retrieve"),
    ("enviroment", "environment"),
    ("envirnoment", "environment"),
    ("paramter", "parameter"),
    ("paramater", "parameter"),
    ("parametre", "parameter"),
    ("arguement", "argument"),
    ("sucess", "success"),
    ("succes", "success"),
    ("successfull", "successful"),
    ("succesful", "successful"),
    ("accomodate", "accommodate"),
    ("begining", "beginning"),
    ("calender", "calendar"),
    ("definately", "definitely"),
    ("dependancy", "dependency"),
    ("dependancies", "dependencies"),
    ("existance", "existence"),
    ("independant", "independent"),
    ("refered", "referred"),
    ("responce", "response"),
    ("reponse", "response"),
    ("respone", "response"),
    ("thier", "their"),
    ("untill", "until"),
    ("accross", "across"),
    ("acheive", "achieve"),
    ("aquire", "acquire"),
    ("apparant", "apparent"),
    ("beleive", "believe"),
    ("calulate", "calculate"),
    ("caculate", "calculate"),
    ("comming", "coming"),
    ("commited", "committed"),
    ("concatinate", "concatenate"),
    ("conditon", "condition"),
    ("configuartion", "configuration"),
    ("connnection", "connection"),
    ("conection", "connection"),
    ("defualt", "default"),
    ("delimeter", "delimiter"),
    ("dictonary", "dictionary"),
    ("dissapear", "disappear"),
    ("exeption", "exception"),
    ("excecute", "execute"),
    ("exectue", "execute"),
    ("fucntion", "function"),
    ("funtion", "function"),
    ("fuction", "function"),
    ("garantee", "guarantee"),
    ("heirarchy", "hierarchy"),
    ("immediatly", "immediately"),
    ("inital", "initial"),
    ("intial", "initial"),
    ("initalize", "initialize"),
    ("intialize", "initialize"),
    ("langauge", "language"),
    ("libary", "library"),
    ("maintainance", "maintenance"),
    ("managment", "management"),
    ("mesage", "message"),
    ("messsage", "message"),
    ("neccessary", "necessary"),
    ("necesary", "necessary"),
    ("orignal", "original"),
    ("parrallel", "parallel"),
    ("persistant", "persistent"),
    ("posible", "possible"),
    ("prefered", "preferred"),
    ("proccess", "process"),
    ("procces", "process"),
    ("propogate", "propagate"),
    ("publically", "publicly"),
    ("recursivly", "recursively"),
    ("refrence", "reference"),
    ("referece", "reference"),
    ("relevent", "relevant"),
    ("resouce", "resource"),
    ("resoruce", "resource"),
    ("similiar", "similar"),
    ("suprise", "surprise"),
    ("tempory", "temporary"),
    ("threshhold", "threshold"),
    ("truely", "truly"),
    ("unkown", "unknown"),
    ("usefull", "useful"),
    ("valiadte", "validate"),
    ("validte", "validate"),
    ("verfiy", "verify"),
    ("wierd", "weird"),
    ("writting", "writing"),
    ("lenth", "length"),
    ("adress", "address"),
    ("adresses", "addresses"),
    ("atribute", "attribute"),
    ("attribtue", "attribute"),
    ("availible", "available"),
    ("avaiable", "available"),
    ("boundry", "boundary"),
    ("cancelation", "cancellation"),
    ("charachter", "character"),
    ("charater", "character"),
    ("compatability", "compatibility"),
    ("compatable", "compatible"),
    ("completly", "completely"),
    ("consistant", "consistent"),
    ("contructor", "constructor"),
    ("cordinate", "coordinate"),
    ("destory", "destroy"),
    ("diffrent", "different"),
    ("elemnt", "element"),
    ("equivelant", "equivalent"),
    ("explicitely", "explicitly"),
    ("familar", "familiar"),
    ("guage", "gauge"),
    ("happend", "happened"),
    ("identifer", "identifier"),
    ("implmentation", "implementation"),
    ("implementaion", "implementation"),
    ("indentifier", "identifier"),
    ("informations", "information"),
    ("instace", "instance"),
    ("interupt", "interrupt"),
    ("itterate", "iterate"),
    ("lastest", "latest"),
    ("minumum", "minimum"),
    ("maxium", "maximum"),
    ("mutiple", "multiple"),
    ("nubmer", "number"),
    ("numbr", "number"),
    ("ouput", "output"),
    ("outptu", "output"),
    ("overriden", "overridden"),
    ("pasword", "password"),
    ("passowrd", "password"),
    ("permision", "permission"),
    ("posistion", "position"),
    ("prefrence", "preference"),
    ("priviledge", "privilege"),
    ("quantitiy", "quantity"),
    ("recipt", "receipt"),
    ("reciept", "receipt"),
    ("remvoe", "remove"),
    ("repositry", "repository"),
    ("requried", "required"),
    ("reqest", "request"),
    ("requets", "request"),
    ("resposne", "response"),
    ("retun", "return"),
    ("scehma", "schema"),
    ("sepcial", "special"),
    ("sequnce", "sequence"),
    ("stirng", "string"),
    ("strng", "string"),
    ("sturct", "struct"),
    ("succeded", "succeeded"),
    ("sucessful", "successful"),
    ("supress", "suppress"),
    ("tokne", "token"),
    ("transfered", "transferred"),
    ("udpate", "update"),
    ("updte", "update"),
    ("uniqe", "unique"),
    ("vaule", "value"),
    ("valeu", "value"),
    ("varaible", "variable"),
    ("variabel", "variable"),
    ("visable", "visible"),
    ("wether", "whether"),
];

/// Declared identifiers of a file with their offsets: functions, variables,
/// classes/types.
fn declared_identifiers(src: &Source, funcs: &[Func]) -> Vec<(usize, String)> {
    static PY_ASSIGN: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=[^=]"));
    static JS_VAR: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[:=]"));
    static RUST_LET: LazyLock<Regex> =
        LazyLock::new(|| re(r"\blet\s+(?:mut\s+)?([A-Za-z_]\w*)\s*[:=]"));
    static GO_VAR: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?m)(?:^|[\s(,])([A-Za-z_]\w*)\s*:=|\bvar\s+([A-Za-z_]\w*)\b"));
    static TYPES: LazyLock<Regex> =
        LazyLock::new(|| re(r"\b(?:class|struct|enum|trait|interface|type)\s+([A-Za-z_]\w*)"));
    let mut out: Vec<(usize, String)> = funcs
        .iter()
        .map(|f| (src.line_start(f.line), f.name.clone()))
        .collect();
    let m = &src.masked;
    let var_re: &Regex = match src.lang {
        Lang::Python => &PY_ASSIGN,
        Lang::Js | Lang::Ts => &JS_VAR,
        Lang::Rust => &RUST_LET,
        Lang::Go => &GO_VAR,
        _ => &JS_VAR,
    };
    let logical = (src.lang == Lang::Python).then(|| src.logical_starts());
    for c in var_re.captures_iter(m) {
        if let Some(g) = c.get(1).or_else(|| c.get(2)) {
            if logical
                .as_ref()
                .is_some_and(|l| !l[src.line_index(g.start())])
            {
                continue; // keyword arguments of a call spanning lines
            }
            out.push((g.start(), g.as_str().to_string()));
        }
    }
    for c in TYPES.captures_iter(m) {
        let g = c.get(1).unwrap();
        out.push((g.start(), g.as_str().to_string()));
    }
    out.sort();
    out
}

/// Split an identifier into lowercase words (snake, kebab and camel case).
fn words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in ident.split(['_', '$']) {
        let mut cur = String::new();
        let chars: Vec<char> = part.chars().collect();
        for (i, &ch) in chars.iter().enumerate() {
            let boundary = ch.is_ascii_uppercase()
                && i > 0
                && (chars[i - 1].is_ascii_lowercase()
                    || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                        && chars[i - 1].is_ascii_uppercase());
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur).to_ascii_lowercase());
            }
            cur.push(ch);
        }
        if !cur.is_empty() {
            out.push(cur.to_ascii_lowercase());
        }
    }
    out
}

fn is_camel(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.contains('_')
        && s.chars().any(|c| c.is_ascii_uppercase())
}

fn is_snake(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.contains('_')
        && !s.chars().any(|c| c.is_ascii_uppercase())
        && !s.ends_with('_')
}

fn naming(cx: &mut Ctx, funcs: &[Func]) {
    let idents = declared_identifiers(&cx.src, funcs);
    // mixed case styles
    const PY_CAMEL_OK: &[&str] = &[
        "setUp",
        "tearDown",
        "setUpClass",
        "tearDownClass",
        "setUpModule",
        "tearDownModule",
        "maxDiff",
        "asyncSetUp",
        "asyncTearDown",
    ];
    let mut camel: Vec<(usize, &str)> = Vec::new();
    let mut snake: Vec<(usize, &str)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (off, name) in &idents {
        if !seen.insert(name.as_str()) {
            continue;
        }
        if is_camel(name)
            && !(cx.src.lang == Lang::Python
                && (PY_CAMEL_OK.contains(&name.as_str()) || name.starts_with("assert")))
        {
            camel.push((*off, name));
        } else if is_snake(name) {
            snake.push((*off, name));
        }
    }
    if camel.len() >= 2 && snake.len() >= 2 {
        let (odd, usual, style) = match cx.src.lang {
            Lang::Python | Lang::Rust => (&camel, &snake, "camelCase"),
            _ => (&snake, &camel, "snake_case"),
        };
        let (off, name) = odd[0];
        let msg = format!(
            "mixed naming: {} camelCase and {} snake_case names; `{name}` is {style} while e.g. `{}` is not",
            camel.len(),
            snake.len(),
            usual[0].1
        );
        cx.push(NAMING, "mixed_naming", Severity::Warning, off, msg);
    }
    // misspellings
    let map: BTreeMap<&str, &str> = MISSPELLINGS.iter().copied().collect();
    let mut reported = BTreeSet::new();
    for (off, name) in &idents {
        for w in words(name) {
            if let Some(right) = map.get(w.as_str())
                && reported.insert(w.clone())
            {
                cx.push(
                    NAMING,
                    "misspelled_identifier",
                    Severity::Warning,
                    *off,
                    format!("`{name}` contains the misspelling \"{w}\" (\"{right}\")"),
                );
            }
        }
    }
    // is*/has* predicates that do not return booleans
    static PREDICATE: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:is|has|Is|Has)(?:[A-Z0-9]|_[a-z0-9])"));
    static PY_BAD_RETURN: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"(?m)^[ \t]*return[ \t]+(?:[rbfuRBFU]{0,2}["']|\[|\{|-?(?:[2-9]|\d{2,}|\d*\.\d+)\b)"#)
    });
    static JS_BAD_RETURN: LazyLock<Regex> =
        LazyLock::new(|| re(r#"\breturn\s+(?:["'`]|\[|\{|-?(?:[2-9]|\d{2,}|\d*\.\d+)\b)"#));
    for f in funcs {
        // tests are named after what they check (`fn is_valid_name()`)
        if !PREDICATE.is_match(&f.name) || (f.ret.is_none() && cx.is_test(f.start)) {
            continue;
        }
        let declared = |ok: bool, r: &String| (!ok).then(|| format!("`{r}`"));
        let verdict: Option<String> = match (&f.ret, cx.src.lang) {
            (Some(r), Lang::Ts | Lang::Js) => declared(
                r.contains("boolean")
                    || r.contains(" is ")
                    || r.starts_with("asserts")
                    || r == "any"
                    || r == "unknown",
                r,
            ),
            (Some(r), Lang::Python) => declared(
                r.contains("bool")
                    || r.contains("TypeGuard")
                    || r.contains("TypeIs")
                    || r.contains("Literal[True")
                    || r.contains("Literal[False"),
                r,
            ),
            (Some(r), Lang::Rust | Lang::Go) => declared(r.contains("bool"), r),
            (Some(r), Lang::Java) => declared(r == "boolean" || r == "Boolean", r),
            (None, Lang::Rust | Lang::Go) => f.body.map(|_| "nothing".to_string()),
            (None, Lang::Python | Lang::Js | Lang::Ts) => f.body.and_then(|(a, b)| {
                let body = &cx.src.masked[a..b.max(a)];
                let re: &Regex = if cx.src.lang == Lang::Python {
                    &PY_BAD_RETURN
                } else {
                    &JS_BAD_RETURN
                };
                re.find(body).map(|_| "a non-boolean value".to_string())
            }),
            _ => None,
        };
        if let Some(ret) = verdict {
            let off = cx.src.line_start(f.line) + cx.src.indent_bytes(f.line);
            cx.push(
                NAMING,
                "non_boolean_predicate",
                Severity::Error,
                off,
                format!("`{}` is named like a predicate but returns {ret}", f.name),
            );
        }
    }
}

// ---------------------------------------------------------------- control flow

fn control_flow(cx: &mut Ctx) {
    swallowed_errors(cx);
    unreachable_code(cx);
    infinite_loops(cx);
}

fn swallowed_errors(cx: &mut Ctx) {
    static CATCH: LazyLock<Regex> = LazyLock::new(|| re(r"\bcatch\s*(?:\([^)]*\))?\s*\{"));
    static PROMISE_CATCH: LazyLock<Regex> = LazyLock::new(|| {
        re(r"\.catch\s*\(\s*(?:\(\s*[\w$]*\s*\)|[\w$]+)\s*=>\s*(?:\{\s*\}|undefined|null)\s*\)")
    });
    static PY_EXCEPT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"^[ \t]*except\s*(?:\(?\s*(?:Exception|BaseException)\s*\)?\s*(?:as\s+\w+\s*)?)?:\s*(.*)$",
        )
    });
    static GO_ERR: LazyLock<Regex> = LazyLock::new(|| re(r"\bif\s+err\s*!=\s*nil\s*\{\s*\}"));
    static GO_IGNORED: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?m)^[ \t]*[\w.]+\s*,\s*_\s*:?=\s*(?:os|ioutil|io|json|strconv|sql|http|filepath|bufio|yaml|xml|url)\.\w+\(",
        )
    });
    static RUST_LET_UNDERSCORE: LazyLock<Regex> = LazyLock::new(|| re(r"\blet\s+_\s*=\s*([^;]+);"));
    static RUST_IO: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\bfs::\w+|\bFile::(?:create|open)|\.(?:write_all|flush|sync_all|sync_data|set_len|read_to_string|read_to_end|read_exact|set_permissions)\s*\(|\b(?:remove_file|remove_dir_all|create_dir_all)\s*\(",
        )
    });
    let lang = cx.src.lang;
    let mut hits: Vec<(usize, String)> = Vec::new();
    if lang.braces() && lang != Lang::Rust && lang != Lang::Go {
        for m in CATCH.find_iter(&cx.src.masked) {
            let open = m.end() - 1;
            let Some(close) = cx.src.match_close(open) else {
                continue;
            };
            let body_code = &cx.src.code[open + 1..close];
            let has_comment = cx.src.text[open + 1..close].trim() != body_code.trim();
            if body_code.trim().is_empty() && !has_comment {
                hits.push((
                    m.start(),
                    "empty `catch` block swallows the error".to_string(),
                ));
            }
        }
        for m in PROMISE_CATCH.find_iter(&cx.src.masked) {
            hits.push((
                m.start(),
                "`.catch()` handler swallows the error".to_string(),
            ));
        }
    }
    if lang == Lang::Python {
        let logical = cx.src.logical_starts().to_vec();
        for idx in 0..cx.src.line_count() {
            if !logical[idx] {
                continue;
            }
            let line = cx.src.masked_line(idx);
            let Some(c) = PY_EXCEPT.captures(line) else {
                continue;
            };
            let inline = c[1].trim();
            let (a, b) = if inline.is_empty() {
                cx.src.py_block(idx, &logical)
            } else {
                (idx, idx + 1)
            };
            let body: Vec<&str> = if inline.is_empty() {
                (a..b)
                    .filter(|&k| logical[k] && !cx.src.is_blank(k))
                    .map(|k| cx.src.masked_line(k).trim())
                    .collect()
            } else {
                vec![inline]
            };
            // a comment in the handler says the silence is deliberate
            let commented = cx
                .src
                .comments
                .iter()
                .any(|c| c.line >= idx && c.line < b.max(idx + 1));
            if body.len() == 1 && (body[0] == "pass" || body[0] == "...") && !commented {
                let what = if line.contains("BaseException") {
                    "except BaseException"
                } else if line.contains("Exception") {
                    "except Exception"
                } else {
                    "except"
                };
                hits.push((
                    cx.src.line_start(idx) + cx.src.indent_bytes(idx),
                    format!("`{what}: pass` swallows every error"),
                ));
            }
        }
    }
    if lang == Lang::Go {
        for m in GO_ERR.find_iter(&cx.src.masked) {
            hits.push((
                m.start(),
                "`if err != nil {}` ignores the error".to_string(),
            ));
        }
        for m in GO_IGNORED.find_iter(&cx.src.masked) {
            let off = m.start() + m.as_str().len() - m.as_str().trim_start().len();
            hits.push((off, "error of an I/O call discarded with `_`".to_string()));
        }
    }
    if lang == Lang::Rust {
        for c in RUST_LET_UNDERSCORE.captures_iter(&cx.src.masked) {
            let expr = &c[1];
            let m = c.get(0).unwrap();
            let line = cx.src.line_index(m.start());
            let commented = cx
                .src
                .comments
                .iter()
                .any(|c| c.line == line || c.line + 1 == line);
            if RUST_IO.is_match(expr)
                && !expr.contains("stderr")
                && !expr.contains("stdout")
                && !commented
            {
                hits.push((
                    m.start(),
                    "`let _ =` discards the `Result` of fallible I/O".to_string(),
                ));
            }
        }
    }
    for (off, msg) in hits {
        cx.push(CONTROL_FLOW, "swallowed_error", Severity::Error, off, msg);
    }
}

fn unreachable_code(cx: &mut Ctx) {
    static EXIT: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:return|throw|raise|break|continue)\b"));
    static LABEL: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z_]\w*:$"));
    let src = &cx.src;
    let lang = src.lang;
    let logical = if lang == Lang::Python {
        src.logical_starts().to_vec()
    } else {
        vec![true; src.line_count()]
    };
    let mut hits = Vec::new();
    let n = src.line_count();
    for idx in 0..n {
        let t = src.masked_line(idx).trim();
        if !EXIT.is_match(t) || !logical[idx] {
            continue;
        }
        // a complete statement on this line
        let mut bal = 0i32;
        for ch in t.chars() {
            match ch {
                '(' | '[' | '{' => bal += 1,
                ')' | ']' | '}' => bal -= 1,
                _ => {}
            }
        }
        let open_end = t.ends_with([
            ',', '(', '[', '{', '+', '-', '*', '/', '&', '|', '=', '.', '?', ':', '\\', '<', '>',
        ]) && !(lang == Lang::Python && t.ends_with(':'));
        if bal != 0 || open_end || (lang.braces() && t.contains('}')) {
            continue;
        }
        if idx > 0 && src.masked_line(idx - 1).trim().starts_with("#[cfg") {
            continue;
        }
        let ind = src.indent(idx);
        let mut k = idx + 1;
        while k < n && (src.is_blank(k) || !logical[k]) {
            k += 1;
        }
        if k >= n || src.indent(k) != ind {
            continue;
        }
        let next = src.masked_line(k).trim();
        let ok_follow = next.starts_with(['}', ')', ']', '#', '@'])
            || [
                "case ",
                "case(",
                "default",
                "else",
                "elif",
                "except",
                "finally",
                "catch",
                "function ",
                "async function",
                "def ",
                "async def",
                "class ",
            ]
            .iter()
            .any(|p| next.starts_with(p))
            || LABEL.is_match(next)
            || (lang == Lang::Rust
                && [
                    "fn ",
                    "extern ",
                    "struct ",
                    "enum ",
                    "impl",
                    "use ",
                    "mod ",
                    "type ",
                    "const ",
                    "static ",
                    "unsafe fn",
                    "pub ",
                    "macro_rules!",
                ]
                .iter()
                .any(|p| next.starts_with(p)));
        if ok_follow {
            continue;
        }
        hits.push(src.line_start(k) + src.indent_bytes(k));
    }
    let macros = macro_ranges(src);
    hits.retain(|&h| !macros.iter().any(|&(x, y)| h >= x && h < y));
    for off in hits {
        cx.push(
            CONTROL_FLOW,
            "unreachable_code",
            Severity::Warning,
            off,
            "code after an unconditional return/throw/break is never run".to_string(),
        );
    }
}

/// Rust `macro_rules!` bodies: token patterns, not code.
fn macro_ranges(src: &Source) -> Vec<(usize, usize)> {
    static MACRO: LazyLock<Regex> = LazyLock::new(|| re(r"\bmacro_rules!\s*\w+\s*\{"));
    if src.lang != Lang::Rust {
        return Vec::new();
    }
    MACRO
        .find_iter(&src.masked)
        .filter_map(|m| src.match_close(m.end() - 1).map(|c| (m.start(), c)))
        .collect()
}

fn infinite_loops(cx: &mut Ctx) {
    static BRACE_LOOP: LazyLock<Regex> =
        LazyLock::new(|| re(r"\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{|\bfor\s*\(\s*;\s*;\s*\)\s*\{"));
    static RUST_LOOP: LazyLock<Regex> = LazyLock::new(|| re(r"\bloop\s*\{"));
    static GO_LOOP: LazyLock<Regex> = LazyLock::new(|| re(r"\bfor\s*\{"));
    static PY_LOOP: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*while\s+(?:True|1)\s*:"));
    static EXIT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:break|return|throw|raise|yield|goto)\b|process\.exit|\bexit\s*\(|sys\.exit|os\.Exit|process::exit|\bpanic!?\s*\(|unreachable!|log\.Fatal|\?\s*[;.)]|\?$",
        )
    });
    let src = &cx.src;
    let mut bodies: Vec<(usize, usize, usize)> = Vec::new();
    let re_loop: Option<&Regex> = match src.lang {
        Lang::Js | Lang::Ts | Lang::Java => Some(&BRACE_LOOP),
        Lang::Rust => Some(&RUST_LOOP),
        Lang::Go => Some(&GO_LOOP),
        _ => None,
    };
    if let Some(r) = re_loop {
        for m in r.find_iter(&src.masked) {
            let open = m.end() - 1;
            if let Some(close) = src.match_close(open) {
                bodies.push((m.start(), open + 1, close));
            }
        }
    } else {
        let logical = src.logical_starts();
        for idx in 0..src.line_count() {
            if logical[idx] && PY_LOOP.is_match(src.masked_line(idx)) {
                let (a, b) = src.py_block(idx, logical);
                let start = src.line_start(a);
                let end = if b > a { src.line_end(b - 1) } else { start };
                bodies.push((src.line_start(idx) + src.indent_bytes(idx), start, end));
            }
        }
    }
    let macros = macro_ranges(src);
    let mut hits = Vec::new();
    for (at, a, b) in bodies {
        if macros.iter().any(|&(x, y)| at >= x && at < y) {
            continue;
        }
        let body = &src.masked[a..b];
        let exits = body.lines().any(|l| EXIT.is_match(l.trim_end()));
        if !exits {
            hits.push(at);
        }
    }
    for off in hits {
        cx.push(
            CONTROL_FLOW,
            "infinite_loop",
            Severity::Warning,
            off,
            "infinite loop without a `break` (or any other exit)".to_string(),
        );
    }
}

// ---------------------------------------------------------------- resource leaks

fn resource_leaks(cx: &mut Ctx) {
    static LISTENER: LazyLock<Regex> =
        LazyLock::new(|| re(r"\.addEventListener\s*\(\s*(['\x22`])"));
    static INTERVAL: LazyLock<Regex> =
        LazyLock::new(|| re(r"(?:^|[^\w$.])(?:window\.|global\.|globalThis\.)?setInterval\s*\("));
    static TICKER: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\w+)\s*:?=\s*time\.NewTicker\s*\("));
    static SUBSCRIBE: LazyLock<Regex> = LazyLock::new(|| re(r"\.subscribe\s*\("));
    let lang = cx.src.lang;
    let m = cx.src.masked.clone();
    let mut hits: Vec<(usize, &str, Severity, String)> = Vec::new();
    if lang.is_js() {
        for c in LISTENER.captures_iter(&m) {
            let whole = c.get(0).unwrap();
            let open = whole.end() - 1;
            let event = cx.src.string_at(open).unwrap_or("");
            let paren = whole.start() + m[whole.start()..].find('(').unwrap_or(0);
            let args_end = cx.src.match_close(paren).unwrap_or(whole.end());
            let args = &cx.src.code[paren..args_end];
            if args.contains("once") || args.contains("signal") {
                continue;
            }
            let removed = m.contains("removeEventListener") && {
                let code = &cx.src.code;
                code.match_indices("removeEventListener").any(|(i, _)| {
                    let rest = &code[i..(i + 120).min(code.len())];
                    rest.contains(&format!("'{event}'"))
                        || rest.contains(&format!("\"{event}\""))
                        || rest.contains(&format!("`{event}`"))
                        || !rest.contains(['\'', '"', '`'])
                })
            } || m.contains("AbortController");
            if !removed {
                hits.push((
                    whole.start() + 1,
                    "listener_not_removed",
                    Severity::Warning,
                    format!("listener for \"{event}\" is added but never removed"),
                ));
            }
        }
        if !m.contains("clearInterval") {
            for mm in INTERVAL.find_iter(&m) {
                hits.push((
                    mm.end() - 1,
                    "listener_not_removed",
                    Severity::Warning,
                    "`setInterval` is never cleared".to_string(),
                ));
            }
        }
        for mm in SUBSCRIBE.find_iter(&m) {
            let at = mm.start();
            let stmt_start = statement_start(&m, at);
            let stmt = &m[stmt_start..at];
            let after_end = cx.src.match_close(mm.end() - 1).unwrap_or(mm.end());
            let handled = stmt.trim_start().starts_with("return")
                || has_assignment(stmt)
                || m[..stmt_start].trim_end().ends_with(['(', ','])
                || [
                    "takeUntil",
                    "take(",
                    "first(",
                    "takeWhile",
                    "untilDestroyed",
                    "takeUntilDestroyed",
                    "firstValueFrom",
                    "lastValueFrom",
                ]
                .iter()
                .any(|p| stmt.contains(p))
                || stmt.contains("http.")
                || stmt.contains("Http")
                || m[after_end..].trim_start().starts_with(".unsubscribe")
                || m[after_end..].trim_start().starts_with(".add");
            if !handled {
                hits.push((
                    at + 1,
                    "observable_no_unsubscribe",
                    Severity::Warning,
                    "subscription is neither kept nor ended (no unsubscribe/takeUntil)".to_string(),
                ));
            }
        }
    }
    if lang == Lang::Go {
        for c in TICKER.captures_iter(&m) {
            let v = &c[1];
            if !m.contains(&format!("{v}.Stop(")) {
                hits.push((
                    c.get(0).unwrap().start(),
                    "listener_not_removed",
                    Severity::Warning,
                    format!("ticker `{v}` is never stopped"),
                ));
            }
        }
    }
    unclosed(cx, &m, &mut hits);
    for (off, check, sev, msg) in hits {
        cx.push(RESOURCE_LEAKS, check, sev, off, msg);
    }
}

/// Is the resource held in variable `v` closed, handed over (returned,
/// yielded, stored) or managed (`with`, `closing`, `pipe`) anywhere in the
/// file?
fn released(m: &str, v: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    for (i, _) in m.match_indices(v) {
        if m[..i].ends_with(is_ident) || m[i + v.len()..].starts_with(is_ident) {
            continue;
        }
        let after = m[i + v.len()..].trim_start();
        let after = after.strip_prefix('.').map(str::trim_start).unwrap_or("");
        if [
            "close",
            "end",
            "destroy",
            "shutdown",
            "Close",
            "release",
            "pipe",
            "Body.Close",
            "dispose",
        ]
        .iter()
        .any(|p| after.starts_with(p) && after[p.len()..].trim_start().starts_with('('))
        {
            return true;
        }
        let line_start = m[..i].rfind('\n').map_or(0, |p| p + 1);
        let before = m[line_start..i].trim_start();
        let rest = m[i + v.len()..].trim_start();
        // `return f` hands the resource over; `return f.read()` does not
        let handed_over = (before.starts_with("return") || before.starts_with("yield"))
            && !rest.starts_with(['.', '[', '(']);
        if handed_over
            || ["with ", "async with "]
                .iter()
                .any(|p| before.starts_with(p))
            || [
                "closing(",
                "enter_context(",
                "closeSync(",
                "pipeline(",
                "finished(",
                "defer ",
            ]
            .iter()
            .any(|p| before.contains(p))
        {
            return true;
        }
        // stored in a field: `self.f = f`, `this.conn = conn`
        if before.ends_with('=')
            && (before.contains("self.") || before.contains("this."))
            && rest.starts_with([';', '\n', ')'])
        {
            return true;
        }
    }
    false
}

/// Start of the statement containing `at` (after the previous `;`, `{` or
/// `}` at depth 0).
fn statement_start(m: &str, at: usize) -> usize {
    let b = m.as_bytes();
    let mut depth = 0i32;
    let mut j = at;
    while j > 0 {
        j -= 1;
        match b[j] {
            b')' | b']' => depth += 1,
            b'(' | b'[' => {
                if depth == 0 {
                    return j + 1;
                }
                depth -= 1;
            }
            b';' | b'{' | b'}' if depth == 0 => return j + 1,
            _ => {}
        }
    }
    0
}

fn has_assignment(stmt: &str) -> bool {
    let b = stmt.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'='
            && b.get(i + 1) != Some(&b'=')
            && b.get(i + 1) != Some(&b'>')
            && (i == 0 || !matches!(b[i - 1], b'=' | b'!' | b'<' | b'>'))
    })
}

fn unclosed(cx: &Ctx, m: &str, hits: &mut Vec<(usize, &'static str, Severity, String)>) {
    static PY_OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?m)^[ \t]*([A-Za-z_]\w*)\s*=\s*(?:open|io\.open|codecs\.open|gzip\.open|bz2\.open|lzma\.open|socket\.socket|socket\.create_connection|sqlite3\.connect|urllib\.request\.urlopen|urlopen|psycopg2?\.connect|pymysql\.connect|zipfile\.ZipFile|tarfile\.open|tempfile\.(?:NamedTemporaryFile|TemporaryFile))\s*\(",
        )
    });
    static PY_INLINE: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[^\w.])open\s*\("));
    static JS_OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:await\s+)?(?:fs\.openSync|fs\.promises\.open|fsp\.open|(?:fs\.)?createReadStream|(?:fs\.)?createWriteStream|net\.createConnection|net\.connect|new\s+WebSocket|mysql\.createConnection)\s*\(",
        )
    });
    static GO_OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b([A-Za-z_]\w*)\s*,\s*(?:err|_)\s*:?=\s*(os\.Open|os\.Create|os\.OpenFile|os\.CreateTemp|ioutil\.TempFile|net\.Dial\w*|sql\.Open|http\.Get|http\.Post|http\.Head|http\.PostForm|zip\.OpenReader)\s*\(",
        )
    });
    static JAVA_OPEN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"\b([A-Za-z_]\w*)\s*=\s*new\s+(?:FileInputStream|FileOutputStream|FileReader|FileWriter|BufferedReader|BufferedWriter|Scanner|Socket|ServerSocket|RandomAccessFile|PrintWriter|ZipFile)\s*\(",
        )
    });
    let closed = |v: &str, _extra: &[&str]| -> bool { released(m, v) };
    match cx.src.lang {
        Lang::Python => {
            for c in PY_OPEN.captures_iter(m) {
                let v = &c[1];
                if !closed(v, &[]) {
                    hits.push((
                        c.get(1).unwrap().start(),
                        "unclosed_resource",
                        Severity::Error,
                        format!("`{v}` is opened but never closed (use `with`)"),
                    ));
                }
            }
            for mm in PY_INLINE.find_iter(m) {
                let paren = mm.end() - 1;
                let line = cx.src.line_index(paren);
                let before = cx.src.masked_line(line);
                if before.trim_start().starts_with("with ")
                    || before.trim_start().starts_with("def ")
                    || before.contains("closing(")
                {
                    continue;
                }
                let Some(close) = cx.src.match_close(paren) else {
                    continue;
                };
                let after = m[close + 1..].trim_start();
                if after.starts_with(".read") || after.starts_with(".write") {
                    hits.push((
                        paren,
                        "unclosed_resource",
                        Severity::Error,
                        "file opened inline is never closed (use `with open(...)`)".to_string(),
                    ));
                }
            }
        }
        Lang::Js | Lang::Ts => {
            for c in JS_OPEN.captures_iter(m) {
                let v = &c[1];
                if !closed(v, &[]) {
                    hits.push((
                        c.get(1).unwrap().start(),
                        "unclosed_resource",
                        Severity::Error,
                        format!("`{v}` is opened but never closed"),
                    ));
                }
            }
        }
        Lang::Go => {
            for c in GO_OPEN.captures_iter(m) {
                let v = &c[1];
                let http = c[2].starts_with("http.");
                let ok = if http {
                    m.contains(&format!("{v}.Body.Close(")) || closed(v, &[])
                } else {
                    closed(v, &[])
                };
                if !ok && v != "_" {
                    hits.push((
                        c.get(1).unwrap().start(),
                        "unclosed_resource",
                        Severity::Error,
                        format!(
                            "`{v}` is opened but never closed (missing `defer {v}{}.Close()`)",
                            if http { ".Body" } else { "" }
                        ),
                    ));
                }
            }
        }
        Lang::Java => {
            for c in JAVA_OPEN.captures_iter(m) {
                let v = &c[1];
                let line = cx
                    .src
                    .masked_line(cx.src.line_index(c.get(0).unwrap().start()));
                if line.contains("try") || closed(v, &[]) {
                    continue;
                }
                hits.push((
                    c.get(1).unwrap().start(),
                    "unclosed_resource",
                    Severity::Error,
                    format!("`{v}` is opened but never closed (use try-with-resources)"),
                ));
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- security

const SENSITIVE_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "apikey",
    "token",
    "credential",
    "credentials",
    "ssn",
    "cvv",
    "passphrase",
];
const SENSITIVE_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("private", "key"),
    ("access", "key"),
    ("secret", "key"),
    ("credit", "card"),
    ("card", "number"),
    ("auth", "token"),
    ("client", "secret"),
];
const HARMLESS_LAST: &[&str] = &[
    "count",
    "len",
    "length",
    "type",
    "policy",
    "min",
    "max",
    "valid",
    "validity",
    "expiry",
    "expires",
    "expiration",
    "url",
    "uri",
    "path",
    "file",
    "name",
    "field",
    "label",
    "hint",
    "prompt",
    "id",
    "ttl",
    "timeout",
    "strength",
    "required",
    "changed",
    "updated",
    "reset",
    "error",
    "errors",
    "input",
    "selector",
    "param",
    "placeholder",
    "pattern",
    "regex",
    "re",
    "env",
    "var",
    "header",
    "endpoint",
    "format",
    "message",
    "msg",
    "text",
    "title",
    "key_name",
    "schema",
    "column",
    "size",
    "prefix",
    "suffix",
    "kind",
    "mode",
    "enabled",
    "visible",
    "help",
    "form",
    "dialog",
    "page",
    "route",
    "view",
    "component",
    "style",
    "class",
    "rule",
    "rules",
    "validator",
    "location",
    "dir",
    "filename",
    "attempts",
    "retries",
    "age",
    "lifetime",
    "generator",
    "manager",
    "service",
    "provider",
    "store",
    "cache",
    "model",
    "hasher",
    "tokenizer",
    "tokens",
    "store",
    "ref",
    "callback",
    "handler",
    "fn",
    "func",
];

/// Is this identifier the name of a secret value?
fn sensitive_name(ident: &str) -> bool {
    const VERBS: &[&str] = &[
        "is", "has", "should", "min", "max", "num", "show", "validate", "check", "get", "set",
        "on", "handle", "use", "forgot", "reset", "hash", "verify", "generate", "create",
        "encrypt", "decrypt", "parse", "load", "read", "fetch", "update", "change", "new",
        "request", "send", "compare", "mask", "redact", "strip", "sanitize",
    ];
    let w = words(ident);
    let Some(last) = w.last() else { return false };
    if HARMLESS_LAST.contains(&last.as_str()) || (w.len() > 1 && VERBS.contains(&w[0].as_str())) {
        return false;
    }
    if w.iter().any(|x| SENSITIVE_WORDS.contains(&x.as_str())) {
        return true;
    }
    w.windows(2).any(|p| {
        SENSITIVE_PAIRS
            .iter()
            .any(|(a, b)| p[0] == *a && p[1] == *b)
    })
}

/// A string value that looks like a real secret, not a placeholder, prose,
/// a template or the name of the thing.
fn secret_value(value: &str, key: &str) -> bool {
    let v = value.trim();
    if v.chars().count() < 4 || v.chars().any(char::is_whitespace) {
        return false;
    }
    let low = v.to_ascii_lowercase();
    let first = v.chars().next().unwrap_or(' ');
    if v.chars().all(|c| c == first) {
        return false;
    }
    if v.contains(['{', '}', '$', '<', '>', '%']) || v.starts_with("/") || low.starts_with("http") {
        return false;
    }
    const PLACEHOLDERS: &[&str] = &[
        "password",
        "secret",
        "token",
        "changeme",
        "change_me",
        "change-me",
        "example",
        "placeholder",
        "dummy",
        "sample",
        "none",
        "null",
        "undefined",
        "redacted",
        "hidden",
        "bearer",
        "basic",
        "your",
        "replace",
        "insert",
        "enter",
        "xxx",
        "todo",
        "fixme",
        "test",
        "fake",
        "mock",
        "masked",
        "secret_key",
        "api_key",
        "apikey",
        "default",
        "string",
        "required",
    ];
    let compact: String = low.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let key_compact: String = key
        .to_ascii_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    if compact == key_compact
        || PLACEHOLDERS.iter().any(|p| low.starts_with(p) || low == *p)
        || low.contains("example")
    {
        return false;
    }
    // an environment variable or config key name, not a value
    if v.chars()
        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        && v.contains('_')
    {
        return false;
    }
    // a dotted or kebab identifier (i18n key, setting name)
    if v.chars()
        .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_' || c == '-')
        && v.contains(['.', '-', '_'])
    {
        return false;
    }
    true
}

fn security(cx: &mut Ctx) {
    static ASSIGN_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r#"["']?([A-Za-z_$][\w$.-]*)["']?\s*(?::\s*[\w&'<>\[\] ]+?\s*)?(?::=|=>|=|:)\s*[rbfuRBFU]{0,2}$"#,
        )
    });
    static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"AKIA[0-9A-Z]{16}|\bgh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bsk_live_[A-Za-z0-9]{16,}|\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}|\bAIza[0-9A-Za-z_-]{35}",
        )
    });
    static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
        re(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----")
    });
    static URL_CRED: LazyLock<Regex> =
        LazyLock::new(|| re(r"^[a-z][a-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@"));
    static LOG_CALL: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?:^|[^\w$.])(console\.(?:log|info|debug|warn|error|trace)|print|println!|eprintln!|print!|eprint!|fmt\.(?:Print|Fprint|Sprint)\w*|log\.(?:Print|Fatal|Panic)\w*|(?:log|logger|logging|LOG|LOGGER|slog|zap|tracing)\.\w+|log::\w+!|(?:info|debug|warn|error|trace)!|System\.(?:out|err)\.print\w*)\s*\(",
        )
    });
    static EVAL_JS: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?:^|[^\w$.])(eval)\s*\(|\bnew\s+(Function)\s*\(|(?:^|[^\w$.])(setTimeout|setInterval)\s*\(\s*['\x22`]",
        )
    });
    static EVAL_PY: LazyLock<Regex> = LazyLock::new(|| re(r"(?:^|[^\w.])(eval|exec)\s*\("));
    static IDENT: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z_$][\w$]*"));
    static INTERP_NAME: LazyLock<Regex> =
        LazyLock::new(|| re(r"\{\s*([A-Za-z_]\w*)\s*(?:[:}?!.])"));

    let mut hits: Vec<(usize, &str, Severity, String)> = Vec::new();
    let src = &cx.src;
    // hard-coded secrets: string literals assigned to secret-named keys
    for s in &src.strings {
        let off = s.open;
        let value = &src.text[s.start..s.end];
        if let Some(t) = TOKEN.find(value)
            && !value.to_ascii_uppercase().contains("EXAMPLE")
        {
            hits.push((
                off,
                "hardcoded_secret",
                Severity::Critical,
                format!(
                    "string looks like a real credential (`{}…`)",
                    &t.as_str()[..t.as_str().len().min(6)]
                ),
            ));
            continue;
        }
        if cx.is_test(off) {
            continue;
        }
        if let Some(c) = URL_CRED.captures(value)
            && secret_value(&c[1], "")
        {
            hits.push((
                off,
                "hardcoded_secret",
                Severity::Critical,
                "credentials embedded in a connection URL".to_string(),
            ));
            continue;
        }
        let ls = src.line_start(src.line_index(off));
        let before = &src.code[ls..off];
        let Some(c) = ASSIGN_BEFORE.captures(before) else {
            continue;
        };
        let key = c[1].rsplit('.').next().unwrap_or(&c[1]);
        if sensitive_name(key) && secret_value(value, key) {
            hits.push((
                off,
                "hardcoded_secret",
                Severity::Critical,
                format!("hard-coded secret assigned to `{key}`"),
            ));
        }
    }
    if let Some(m) = PRIVATE_KEY.find(src.text)
        && !cx.is_test(m.start())
    {
        hits.push((
            m.start(),
            "hardcoded_secret",
            Severity::Critical,
            "private key block in source".to_string(),
        ));
    }
    // sensitive values printed or logged
    if !cx.test_file {
        for c in LOG_CALL.captures_iter(&src.masked) {
            let name = c.get(1).unwrap();
            if cx.is_test(name.start())
                || (src.lang == Lang::Python
                    && name.as_str() != "print"
                    && !name.as_str().contains('.'))
            {
                continue;
            }
            let paren = c.get(0).unwrap().end() - 1;
            let Some(close) = src.match_close(paren) else {
                continue;
            };
            let args = &src.masked[paren + 1..close];
            let mut found: Option<String> = None;
            for id in IDENT.find_iter(args) {
                let after = &args[id.end()..];
                let before = &args[..id.start()];
                if before.trim_end().ends_with('.') {
                    continue; // a property of something else: user.password is caught by its own name below
                }
                let mut ident = id.as_str().to_string();
                // user.password → look at the last member
                let mut rest = after;
                while let Some(r) = rest.strip_prefix('.') {
                    let Some(next) = IDENT.find(r).filter(|n| n.start() == 0) else {
                        break;
                    };
                    ident = next.as_str().to_string();
                    rest = &r[next.end()..];
                }
                let harmless_after = [".length", ".len()", ".size", ".count", ".is_"]
                    .iter()
                    .any(|p| rest.starts_with(p));
                if sensitive_name(&ident) && !harmless_after && !before.trim_end().ends_with("len(")
                {
                    found = Some(ident);
                    break;
                }
            }
            if found.is_none() {
                // Rust inline format args / Python format fields
                for s in src
                    .strings
                    .iter()
                    .filter(|s| s.open > paren && s.open < close)
                {
                    let content = &src.text[s.start..s.end];
                    if let Some(n) = INTERP_NAME
                        .captures_iter(content)
                        .map(|c| c[1].to_string())
                        .find(|n| sensitive_name(n))
                    {
                        found = Some(n);
                        break;
                    }
                }
            }
            if let Some(n) = found {
                hits.push((
                    name.start(),
                    "sensitive_logging",
                    Severity::Warning,
                    format!("`{}` outputs the sensitive value `{n}`", name.as_str()),
                ));
            }
        }
    }
    // dynamic code execution
    match src.lang {
        Lang::Js | Lang::Ts => {
            for c in EVAL_JS.captures_iter(&src.masked) {
                let g = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).unwrap();
                let before = src.masked[..g.start()].trim_end();
                if before.ends_with("function") {
                    continue;
                }
                let what = match g.as_str() {
                    "eval" => "`eval()` runs a string as code".to_string(),
                    "Function" => "`new Function()` compiles a string into code".to_string(),
                    other => format!("`{other}` with a string argument evaluates it as code"),
                };
                hits.push((
                    g.start(),
                    "dynamic_code_execution",
                    Severity::Critical,
                    what,
                ));
            }
        }
        Lang::Python => {
            for c in EVAL_PY.captures_iter(&src.masked) {
                let g = c.get(1).unwrap();
                let before = src.masked[..g.start()].trim_end();
                if before.ends_with("def") {
                    continue;
                }
                hits.push((
                    g.start(),
                    "dynamic_code_execution",
                    Severity::Critical,
                    format!("`{}()` runs a string as code", g.as_str()),
                ));
            }
        }
        _ => {}
    }
    for (off, check, sev, msg) in hits {
        cx.push(SECURITY, check, sev, off, msg);
    }
}
