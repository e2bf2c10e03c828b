//! Hallucinated imports: packages the manifest does not declare, near-misses
//! of declared names (typos), and local sub-paths that do not exist.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::manifest::py_norm;
use super::stdlib::{NODE_BUILTINS, PYTHON_IMPORT_NAMES, PYTHON_STDLIB};
use super::{Ctx, HALLUCINATED, Manifest};
use crate::scan::findings::Severity;
use crate::scan::source::{Lang, edit_distance};

/// One import as written, at the offset of its statement (or specifier).
#[derive(Debug, Clone)]
pub(crate) struct Import {
    pub spec: String,
    pub off: usize,
    /// Python: names after `from X import` (for namespace packages and
    /// relative imports).
    pub names: Vec<String>,
    /// Guarded by `try`/`except ImportError` (optional dependency).
    pub optional: bool,
}

pub(crate) fn check(cx: &mut Ctx) {
    match cx.src.lang {
        Lang::Python => python(cx),
        Lang::Js | Lang::Ts => js(cx),
        Lang::Rust => rust(cx),
        Lang::Go => go(cx),
        _ => {}
    }
}

fn near_miss<'a>(name: &str, candidates: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    let max = if name.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .filter(|c| c.as_str() != name)
        .map(|c| (edit_distance(name, c, max), c))
        .filter(|(d, _)| *d <= max)
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

fn report_undeclared(
    cx: &mut Ctx,
    off: usize,
    shown: &str,
    declared: &BTreeSet<String>,
    manifest_name: &str,
    key: &str,
) {
    match near_miss(key, declared.iter()) {
        Some(close) => cx.push(
            HALLUCINATED,
            "near_miss_package",
            Severity::Critical,
            off,
            format!("`{shown}` is not declared in {manifest_name}; did you mean `{close}`?"),
        ),
        None => cx.push(
            HALLUCINATED,
            "undeclared_package",
            Severity::Critical,
            off,
            format!("`{shown}` is not declared in {manifest_name}"),
        ),
    }
}

/// The directory of the scanned file on disk, when it exists (relative
/// resolution is undecidable for a file that is not on disk).
fn file_dir(cx: &Ctx) -> Option<PathBuf> {
    let parent = Path::new(cx.rel).parent().unwrap_or(Path::new(""));
    let dir = cx.root.join(parent);
    dir.is_dir().then_some(dir)
}

/// Join `rel` to `base` lexically; `None` when it climbs above `root`.
fn join_within(root: &Path, base: &Path, rel: &str) -> Option<PathBuf> {
    let mut out = base.to_path_buf();
    for c in Path::new(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            _ => return None,
        }
    }
    out.starts_with(root).then_some(out)
}

// ---------------------------------------------------------------- Python

fn python_imports(cx: &Ctx) -> Vec<Import> {
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*import\s+(.+)$").unwrap());
    static FROM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$").unwrap());
    let src = &cx.src;
    let logical = src.logical_starts();
    let mut out = Vec::new();
    for idx in 0..src.line_count() {
        if !logical[idx] {
            continue;
        }
        // the whole logical line, for parenthesised name lists
        let mut end = idx + 1;
        while end < src.line_count() && !logical[end] {
            end += 1;
        }
        let start = src.line_start(idx);
        let text: String = src.code[start..src.line_end(end - 1)].replace(['\n', '\\'], " ");
        let masked_first = src.masked_line(idx);
        if !masked_first.trim_start().starts_with("import")
            && !masked_first.trim_start().starts_with("from")
        {
            continue;
        }
        let optional = in_try_block(cx, idx, logical);
        let first_stmt = text.split(';').next().unwrap_or("");
        if let Some(c) = IMPORT.captures(first_stmt) {
            for part in c[1].split(',') {
                let module = part.split_whitespace().next().unwrap_or("");
                if !module.is_empty() {
                    out.push(Import {
                        spec: module.to_string(),
                        off: start,
                        names: Vec::new(),
                        optional,
                    });
                }
            }
        } else if let Some(c) = FROM.captures(first_stmt) {
            let names = c[3]
                .replace(['(', ')'], " ")
                .split(',')
                .filter_map(|n| n.split_whitespace().next().map(str::to_string))
                .collect();
            out.push(Import {
                spec: format!("{}{}", &c[1], &c[2]),
                off: start,
                names,
                optional,
            });
        }
    }
    out
}

/// The import sits in a `try:` block (an optional dependency with a
/// fallback) or under `if TYPE_CHECKING`-free conditional code guarded by
/// `except ImportError` — the nearest less-indented header is `try:`.
fn in_try_block(cx: &Ctx, idx: usize, logical: &[bool]) -> bool {
    let ind = cx.src.indent(idx);
    if ind == 0 {
        return false;
    }
    let mut k = idx;
    while k > 0 {
        k -= 1;
        if !logical[k] || cx.src.is_blank(k) {
            continue;
        }
        if cx.src.indent(k) < ind {
            let t = cx.src.masked_line(k).trim();
            return t.starts_with("try") && t.ends_with(':');
        }
    }
    false
}

/// Does `base/a/b/…` resolve to a module or package for every component?
/// Returns the first missing dotted prefix.
fn missing_py_component(base: &Path, comps: &[&str]) -> Option<usize> {
    let mut dir = base.to_path_buf();
    for (i, c) in comps.iter().enumerate() {
        let pkg = dir.join(c);
        if pkg.is_dir() {
            dir = pkg;
            continue;
        }
        let is_module = ["py", "pyi", "pyx"]
            .iter()
            .any(|e| dir.join(format!("{c}.{e}")).is_file())
            || std::fs::read_dir(&dir).is_ok_and(|rd| {
                rd.filter_map(|e| e.ok()).any(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(&format!("{c}.")) && (n.ends_with(".so") || n.ends_with(".pyd"))
                })
            });
        if is_module {
            // a module: deeper components would be attributes
            return None;
        }
        return Some(i);
    }
    None
}

/// Import names the Python manifest declares (distribution names plus the
/// import names known to differ from them); `None` without a manifest.
pub(crate) fn python_importable(manifest: &Manifest) -> Option<BTreeSet<String>> {
    manifest.python.declared.as_ref().map(|d| {
        let mut s = d.clone();
        for name in d {
            if let Some((_, names)) = PYTHON_IMPORT_NAMES.iter().find(|(dist, _)| dist == name) {
                s.extend(names.iter().map(|n| n.to_string()));
            }
            if let Some(rest) = name.strip_prefix("python_") {
                s.insert(rest.to_string());
            }
            if let Some(rest) = name.strip_suffix("_python") {
                s.insert(rest.to_string());
            }
            if let Some(rest) = name.strip_prefix("django_") {
                s.insert(rest.to_string());
            }
        }
        s
    })
}

fn python(cx: &mut Ctx) {
    let imports = python_imports(cx);
    if imports.is_empty() {
        return;
    }
    let fdir = file_dir(cx);
    let sibling = |top: &str| {
        fdir.as_ref()
            .is_some_and(|d| d.join(top).is_dir() || d.join(format!("{top}.py")).is_file())
    };
    let setup_py = cx.rel.rsplit('/').next() == Some("setup.py");
    let manifest = cx.manifest;
    let mdir = cx.root.join(&manifest.dir);
    let bases: Vec<PathBuf> = [
        mdir.clone(),
        mdir.join("src"),
        mdir.join("lib"),
        cx.root.to_path_buf(),
    ]
    .into_iter()
    .chain(fdir.clone())
    .collect();
    let importable = python_importable(manifest);
    for imp in imports {
        let dots = imp.spec.chars().take_while(|&c| c == '.').count();
        if dots > 0 {
            python_relative(cx, &imp, dots, fdir.as_deref());
            continue;
        }
        let comps: Vec<&str> = imp.spec.split('.').collect();
        let top = comps[0];
        if top.is_empty() || PYTHON_STDLIB.contains(&top) || top == "__main__" {
            continue;
        }
        let norm = py_norm(top);
        if setup_py && matches!(top, "setuptools" | "pkg_resources" | "distutils") {
            continue;
        }
        let local = manifest.python.local_modules.contains(&norm) || sibling(top);
        if local {
            if fdir.is_some() {
                let found = bases
                    .iter()
                    .find(|b| b.join(top).is_dir() || b.join(format!("{top}.py")).is_file());
                if let Some(base) = found
                    && let Some(i) = missing_py_component(base, &comps)
                {
                    let shown = comps[..=i].join(".");
                    cx.push(
                        HALLUCINATED,
                        "missing_subpath",
                        Severity::Critical,
                        imp.off,
                        format!("module `{shown}` does not exist in the project"),
                    );
                }
            }
            continue;
        }
        let Some(importable) = &importable else {
            continue;
        };
        if imp.optional {
            continue;
        }
        // namespace packages: google.cloud.storage ← google-cloud-storage
        let mut candidates: Vec<String> = Vec::new();
        for i in 1..=comps.len() {
            candidates.push(py_norm(&comps[..i].join("_")));
        }
        for n in &imp.names {
            candidates.push(py_norm(&format!("{}_{}", comps.join("_"), n)));
        }
        if candidates.iter().any(|c| importable.contains(c)) {
            continue;
        }
        report_undeclared(cx, imp.off, top, importable, "the Python manifest", &norm);
    }
}

fn python_relative(cx: &mut Ctx, imp: &Import, dots: usize, fdir: Option<&Path>) {
    let Some(fdir) = fdir else { return };
    let mut base = fdir.to_path_buf();
    for _ in 1..dots {
        if !base.pop() || !base.starts_with(cx.root) {
            cx.push(
                HALLUCINATED,
                "missing_subpath",
                Severity::Critical,
                imp.off,
                format!("relative import `{}` climbs above the project", imp.spec),
            );
            return;
        }
    }
    let rest = &imp.spec[dots..];
    if rest.is_empty() {
        // `from . import x`: each x is a module of the package or a name in
        // its __init__.py
        let init = std::fs::read_to_string(base.join("__init__.py")).unwrap_or_default();
        for n in &imp.names {
            if n == "*" {
                continue;
            }
            let exists = base.join(n).is_dir()
                || base.join(format!("{n}.py")).is_file()
                || base.join(format!("{n}.pyi")).is_file()
                || init
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == n);
            if !exists {
                cx.push(
                    HALLUCINATED,
                    "missing_subpath",
                    Severity::Critical,
                    imp.off,
                    format!(
                        "`from {} import {n}`: no module or name `{n}` in that package",
                        imp.spec
                    ),
                );
            }
        }
        return;
    }
    let comps: Vec<&str> = rest.split('.').collect();
    if let Some(i) = missing_py_component(&base, &comps) {
        cx.push(
            HALLUCINATED,
            "missing_subpath",
            Severity::Critical,
            imp.off,
            format!(
                "relative import `{}` does not resolve: no module `{}`",
                imp.spec,
                comps[..=i].join(".")
            ),
        );
    }
}

// ---------------------------------------------------------------- JS/TS

pub(crate) fn js_imports(cx: &Ctx) -> Vec<Import> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r#"(?:^|[^\w$.])(?:from|import)\s*["'`]"#,
            r#"|(?:^|[^\w$.])(?:require|import)\s*\(\s*["'`]"#,
            r#"|(?:^|[^\w$.])(?:jest|vi)\s*\.\s*(?:requireActual|importActual)\s*\(\s*["'`]"#
        ))
        .unwrap()
    });
    let src = &cx.src;
    let mut out = Vec::new();
    for m in RE.find_iter(&src.masked) {
        let open = m.end() - 1;
        let Some(spec) = src.string_at(open) else {
            continue;
        };
        let dynamic = m.as_str().contains('(');
        if src.masked.as_bytes()[open] == b'`' && spec.contains("${") {
            continue;
        }
        out.push(Import {
            spec: spec.to_string(),
            off: open,
            names: Vec::new(),
            optional: dynamic && in_js_try(cx, open),
        });
    }
    out
}

/// The innermost enclosing block is a `try { … }`.
fn in_js_try(cx: &Ctx, off: usize) -> bool {
    let b = cx.src.masked.as_bytes();
    let mut depth = 0i32;
    let mut j = off;
    while j > 0 {
        j -= 1;
        match b[j] {
            b'}' => depth += 1,
            b'{' => {
                if depth == 0 {
                    return cx.src.masked[..j].trim_end().ends_with("try");
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    false
}

const JS_EXTS: &[&str] = &[
    "js", "ts", "tsx", "jsx", "mjs", "cjs", "mts", "cts", "json", "d.ts", "vue", "svelte", "node",
];

pub(crate) fn resolve_js(base: &Path, spec: &str, root: &Path) -> Option<PathBuf> {
    let spec = spec.split(['?', '#']).next().unwrap_or(spec);
    let target = join_within(root, base, spec)?;
    if target.is_file() {
        return Some(target);
    }
    let name = target.file_name()?.to_string_lossy().into_owned();
    for ext in JS_EXTS {
        let p = target.with_file_name(format!("{name}.{ext}"));
        if p.is_file() {
            return Some(p);
        }
    }
    // TypeScript ESM: `./x.js` written for `./x.ts`
    for (from, tos) in [
        (".js", &[".ts", ".tsx"][..]),
        (".jsx", &[".tsx"][..]),
        (".mjs", &[".mts"][..]),
        (".cjs", &[".cts"][..]),
    ] {
        if let Some(stem) = name.strip_suffix(from) {
            for to in tos {
                let p = target.with_file_name(format!("{stem}{to}"));
                if p.is_file() {
                    return Some(p);
                }
            }
        }
    }
    if target.is_dir() {
        for ext in JS_EXTS {
            let p = target.join(format!("index.{ext}"));
            if p.is_file() {
                return Some(p);
            }
        }
        if target.join("package.json").is_file() {
            return Some(target.join("package.json"));
        }
    }
    None
}

/// The npm package a bare specifier names (`@scope/pkg` or `pkg`).
pub(crate) fn npm_package(spec: &str) -> String {
    let mut parts = spec.split('/');
    let first = parts.next().unwrap_or("");
    if first.starts_with('@') {
        match parts.next() {
            Some(second) => format!("{first}/{second}"),
            None => first.to_string(),
        }
    } else {
        first.to_string()
    }
}

fn js(cx: &mut Ctx) {
    let imports = js_imports(cx);
    if imports.is_empty() {
        return;
    }
    let fdir = file_dir(cx);
    let npm = cx.manifest.npm.clone();
    for imp in imports {
        let spec = imp.spec.as_str();
        if spec.starts_with("node:") || spec.is_empty() {
            continue;
        }
        if spec.starts_with('.') {
            let Some(base) = &fdir else { continue };
            if resolve_js(base, spec, cx.root).is_none() {
                cx.push(
                    HALLUCINATED,
                    "missing_subpath",
                    Severity::Critical,
                    imp.off,
                    format!("`{spec}` resolves to no file (tried the extensions and index files)"),
                );
            }
            continue;
        }
        if spec.starts_with(['/', '#', '~', '$'])
            || spec.starts_with("@/")
            || spec.contains([':', '!'])
        {
            continue;
        }
        let Some(npm) = &npm else { continue };
        if npm.aliases.iter().any(|a| {
            !a.is_empty() && (spec == a.trim_end_matches('/') || spec.starts_with(a.as_str()))
        }) {
            continue;
        }
        let pkg = npm_package(spec);
        let first = spec.split('/').next().unwrap_or(spec);
        if NODE_BUILTINS.contains(&first) || NODE_BUILTINS.contains(&spec) {
            continue;
        }
        if npm.packages.contains(&pkg) || npm.base_url_entries.contains(first) || imp.optional {
            continue;
        }
        report_undeclared(cx, imp.off, &pkg, &npm.packages, "package.json", &pkg);
    }
}

// ---------------------------------------------------------------- Rust

fn rust(cx: &mut Ctx) {
    static USE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+(::\s*)?([A-Za-z_][A-Za-z0-9_]*)")
            .unwrap()
    });
    static EXTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]*(?:pub\s+)?extern\s+crate\s+([A-Za-z_]\w*)(?:\s+as\s+(\w+))?")
            .unwrap()
    });
    static ITEM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:mod|enum|struct|trait|type|fn|const|static|union|macro_rules!)\s+([A-Za-z_]\w*)",
        )
        .unwrap()
    });
    static USE_STMT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\buse\s+([^;]+);").unwrap());
    static IDENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z_]\w*").unwrap());
    let Some(cargo) = cx.manifest.cargo.clone() else {
        return;
    };
    let m = &cx.src.masked;
    let mut in_scope: BTreeSet<String> = BTreeSet::new();
    for c in ITEM.captures_iter(m) {
        in_scope.insert(c[1].to_string());
    }
    for c in USE_STMT.captures_iter(m) {
        // every name a use tree brings in (over-approximated: all but the
        // first segment)
        for (i, id) in IDENT.find_iter(&c[1]).enumerate() {
            if i > 0 {
                in_scope.insert(id.as_str().to_string());
            }
        }
    }
    let mut externs = Vec::new();
    for c in EXTERN.captures_iter(m) {
        externs.push((c.get(0).unwrap().start(), c[1].to_string()));
        if let Some(alias) = c.get(2) {
            in_scope.insert(alias.as_str().to_string());
        }
    }
    let mut uses: Vec<(usize, String)> = USE
        .captures_iter(m)
        .map(|c| (c.get(0).unwrap().start(), c[2].to_string()))
        .collect();
    uses.extend(externs);
    const STD: &[&str] = &[
        "std",
        "core",
        "alloc",
        "proc_macro",
        "test",
        "crate",
        "self",
        "super",
        "Self",
    ];
    for (off, name) in uses {
        if STD.contains(&name.as_str())
            || name.starts_with(|c: char| c.is_ascii_uppercase())
            || cargo.crate_names.contains(&name)
            || cargo.deps.contains(&name)
            || cargo.local_modules.contains(&name)
            || in_scope.contains(&name)
        {
            continue;
        }
        let off = off + cx.src.masked[off..].len() - cx.src.masked[off..].trim_start().len();
        report_undeclared(cx, off, &name, &cargo.deps, "Cargo.toml", &name);
    }
}

// ---------------------------------------------------------------- Go

pub(crate) fn go_imports(cx: &Ctx) -> Vec<Import> {
    static BLOCK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^[ \t]*import\s*\(").unwrap());
    static SINGLE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(?m)^[ \t]*import\s+(?:[\w.]+\s+)?["`]"#).unwrap());
    let src = &cx.src;
    let mut out = Vec::new();
    for m in BLOCK.find_iter(&src.masked) {
        let open = m.end() - 1;
        let Some(close) = src.match_close(open) else {
            continue;
        };
        for s in src
            .strings
            .iter()
            .filter(|s| s.open > open && s.open < close)
        {
            out.push(Import {
                spec: src.text[s.start..s.end].to_string(),
                off: s.open,
                names: Vec::new(),
                optional: false,
            });
        }
    }
    for m in SINGLE.find_iter(&src.masked) {
        let open = m.end() - 1;
        if let Some(spec) = src.string_at(open) {
            out.push(Import {
                spec: spec.to_string(),
                off: open,
                names: Vec::new(),
                optional: false,
            });
        }
    }
    out
}

fn go(cx: &mut Ctx) {
    let Some(gomod) = cx.manifest.go.clone() else {
        return;
    };
    for imp in go_imports(cx) {
        let path = imp.spec.as_str();
        let first = path.split('/').next().unwrap_or("");
        if !first.contains('.') {
            continue; // standard library (and "C")
        }
        if !gomod.module.is_empty()
            && (path == gomod.module || path.starts_with(&format!("{}/", gomod.module)))
        {
            let rest = path[gomod.module.len()..].trim_start_matches('/');
            let dir = cx.root.join(&gomod.dir).join(rest);
            if !dir.is_dir() && cx.root.join(&gomod.dir).join("go.mod").is_file() {
                cx.push(
                    HALLUCINATED,
                    "missing_subpath",
                    Severity::Critical,
                    imp.off,
                    format!(
                        "package `{path}` has no directory `{rest}` in module `{}`",
                        gomod.module
                    ),
                );
            }
            continue;
        }
        if gomod
            .requires
            .iter()
            .any(|r| path == r || path.starts_with(&format!("{r}/")))
        {
            continue;
        }
        let mut candidates: BTreeSet<String> = gomod.requires.iter().cloned().collect();
        if !gomod.module.is_empty() {
            candidates.insert(gomod.module.clone());
        }
        // compare against the same number of path elements
        let close = candidates.iter().find(|r| {
            let n = r.split('/').count();
            let head: Vec<&str> = path.split('/').take(n).collect();
            let head = head.join("/");
            head != **r && edit_distance(&head, r, 2) <= 2
        });
        match close {
            Some(r) => cx.push(
                HALLUCINATED,
                "near_miss_package",
                Severity::Critical,
                imp.off,
                format!("`{path}` is not required in go.mod; did you mean `{r}`?"),
            ),
            None => cx.push(
                HALLUCINATED,
                "undeclared_package",
                Severity::Critical,
                imp.off,
                format!("`{path}` is not required in go.mod"),
            ),
        }
    }
}
