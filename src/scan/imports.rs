//! Hallucinated imports: packages the manifest does not declare, near-misses
//! of declared names (typos), and local sub-paths that do not exist. Also
//! the import readers the other checks share.

use super::Ctx;
use crate::project::dependencies::{Manifest, py_norm};
use crate::project::source::{Func, Source};
use crate::project::stdlib::{NODE_BUILTINS, PYTHON_IMPORT_NAMES, PYTHON_STDLIB};
use crate::project::{Lang, re};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

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

impl Import {
    fn at(off: usize, spec: &str) -> Import {
        Import {
            spec: spec.to_string(),
            off,
            names: Vec::new(),
            optional: false,
        }
    }
}

pub(crate) fn check(cx: &Ctx, _: &[Func]) {
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
    cx: &Ctx,
    off: usize,
    shown: &str,
    declared: &BTreeSet<String>,
    manifest: &str,
    key: &str,
) {
    match near_miss(key, declared.iter()) {
        Some(close) => cx.report(
            "near_miss_package",
            off,
            format!("`{shown}` is not declared in {manifest}; did you mean `{close}`?"),
        ),
        None => cx.report(
            "undeclared_package",
            off,
            format!("`{shown}` is not declared in {manifest}"),
        ),
    }
}

/// The directory of the scanned file on disk, when it exists (relative
/// resolution is undecidable for a file that is not on disk).
fn file_dir(cx: &Ctx) -> Option<PathBuf> {
    let dir = cx
        .root
        .join(Path::new(cx.rel).parent().unwrap_or(Path::new("")));
    dir.is_dir().then_some(dir)
}

/// Join `rel` to `base` lexically; `None` when it climbs above `root`.
fn join_within(root: &Path, base: &Path, rel: &str) -> Option<PathBuf> {
    let mut out = base.to_path_buf();
    for c in Path::new(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if !out.pop() => return None,
            Component::ParentDir => {}
            Component::Normal(p) => out.push(p),
            _ => return None,
        }
    }
    out.starts_with(root).then_some(out)
}

// ---------------------------------------------------------------- Python

fn python_imports(cx: &Ctx) -> Vec<Import> {
    let src = &cx.src;
    let logical = src.logical_starts();
    let mut out = Vec::new();
    for idx in (0..src.line_count()).filter(|&i| logical[i]) {
        let first = src.masked_line(idx).trim_start();
        if !first.starts_with("import") && !first.starts_with("from") {
            continue;
        }
        // the whole logical line, for parenthesised name lists
        let end = (idx + 1..src.line_count())
            .find(|&e| logical[e])
            .unwrap_or(src.line_count());
        let start = src.line_start(idx);
        let text: String = src.code[start..src.line_end(end - 1)].replace(['\n', '\\'], " ");
        let optional = in_try_block(&cx.src, idx);
        let stmt = text.split(';').next().unwrap_or("");
        if let Some(c) = re!(r"^\s*import\s+(.+)$").captures(stmt) {
            for module in c[1].split(',').filter_map(|p| p.split_whitespace().next()) {
                out.push(Import {
                    optional,
                    ..Import::at(start, module)
                });
            }
        } else if let Some(c) = re!(r"^\s*from\s+(\.*)\s*([\w.]*)\s+import\s+(.+)$").captures(stmt)
        {
            let names = c[3].replace(['(', ')'], " ");
            let names = names
                .split(',')
                .filter_map(|n| n.split_whitespace().next().map(str::to_string));
            let spec = format!("{}{}", &c[1], &c[2]);
            out.push(Import {
                names: names.collect(),
                optional,
                ..Import::at(start, &spec)
            });
        }
    }
    out
}

/// The import sits in a `try:` block (an optional dependency with a
/// fallback guarded by `except ImportError`).
fn in_try_block(src: &Source, idx: usize) -> bool {
    let header = src.py_headers(idx).into_iter().next();
    header.is_some_and(|t| t.starts_with("try") && t.ends_with(':'))
}

/// Does `base/a/b/…` resolve to a module or package for every component?
/// Returns the index of the first missing one.
fn missing_py_component(base: &Path, comps: &[&str]) -> Option<usize> {
    let mut dir = base.to_path_buf();
    for (i, c) in comps.iter().enumerate() {
        let pkg = dir.join(c);
        if pkg.is_dir() {
            dir = pkg;
            continue;
        }
        let native = |n: &str| {
            n.starts_with(&format!("{c}.")) && (n.ends_with(".so") || n.ends_with(".pyd"))
        };
        let is_module = ["py", "pyi", "pyx"]
            .iter()
            .any(|e| dir.join(format!("{c}.{e}")).is_file())
            || std::fs::read_dir(&dir).is_ok_and(|rd| {
                rd.filter_map(|e| e.ok())
                    .any(|e| native(&e.file_name().to_string_lossy()))
            });
        // a module: deeper components would be attributes
        return (!is_module).then_some(i);
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
            let affixed = [
                name.strip_prefix("python_"),
                name.strip_suffix("_python"),
                name.strip_prefix("django_"),
            ];
            s.extend(affixed.into_iter().flatten().map(str::to_string));
        }
        s
    })
}

fn python(cx: &Ctx) {
    let imports = python_imports(cx);
    if imports.is_empty() {
        return;
    }
    let fdir = file_dir(cx);
    let is_local =
        |b: &Path, top: &str| b.join(top).is_dir() || b.join(format!("{top}.py")).is_file();
    let setup_py = cx.rel.rsplit('/').next() == Some("setup.py");
    let manifest = cx.manifest;
    let mdir = cx.root.join(&manifest.dir);
    let bases = [
        mdir.clone(),
        mdir.join("src"),
        mdir.join("lib"),
        cx.root.to_path_buf(),
    ];
    let bases: Vec<PathBuf> = bases.into_iter().chain(fdir.clone()).collect();
    let importable = python_importable(manifest);
    for imp in imports {
        let dots = imp.spec.chars().take_while(|&c| c == '.').count();
        if dots > 0 {
            python_relative(cx, &imp, dots, fdir.as_deref());
            continue;
        }
        let comps: Vec<&str> = imp.spec.split('.').collect();
        let top = comps[0];
        let implicit = setup_py && matches!(top, "setuptools" | "pkg_resources" | "distutils");
        if top.is_empty() || PYTHON_STDLIB.contains(&top) || top == "__main__" || implicit {
            continue;
        }
        let norm = py_norm(top);
        if manifest.python.local_modules.contains(&norm)
            || fdir.as_ref().is_some_and(|d| is_local(d, top))
        {
            let base = fdir
                .as_ref()
                .and_then(|_| bases.iter().find(|b| is_local(b, top)));
            if let Some(i) = base.and_then(|b| missing_py_component(b, &comps)) {
                let shown = comps[..=i].join(".");
                cx.report(
                    "missing_subpath",
                    imp.off,
                    format!("module `{shown}` does not exist in the project"),
                );
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
        let prefixes = (1..=comps.len()).map(|i| py_norm(&comps[..i].join("_")));
        let named = imp
            .names
            .iter()
            .map(|n| py_norm(&format!("{}_{n}", comps.join("_"))));
        if prefixes.chain(named).any(|c| importable.contains(&c)) {
            continue;
        }
        report_undeclared(cx, imp.off, top, importable, "the Python manifest", &norm);
    }
}

fn python_relative(cx: &Ctx, imp: &Import, dots: usize, fdir: Option<&Path>) {
    let Some(fdir) = fdir else { return };
    let mut base = fdir.to_path_buf();
    for _ in 1..dots {
        if !base.pop() || !base.starts_with(cx.root) {
            let msg = format!("relative import `{}` climbs above the project", imp.spec);
            return cx.report("missing_subpath", imp.off, msg);
        }
    }
    let rest = &imp.spec[dots..];
    if rest.is_empty() {
        // `from . import x`: each x is a module of the package or a name in
        // its __init__.py
        let init = std::fs::read_to_string(base.join("__init__.py")).unwrap_or_default();
        for n in imp.names.iter().filter(|n| *n != "*") {
            let exists = base.join(n).is_dir()
                || base.join(format!("{n}.py")).is_file()
                || base.join(format!("{n}.pyi")).is_file()
                || init
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == n);
            if !exists {
                let msg = format!(
                    "`from {} import {n}`: no module or name `{n}` in that package",
                    imp.spec
                );
                cx.report("missing_subpath", imp.off, msg);
            }
        }
        return;
    }
    let comps: Vec<&str> = rest.split('.').collect();
    if let Some(i) = missing_py_component(&base, &comps) {
        let msg = format!(
            "relative import `{}` does not resolve: no module `{}`",
            imp.spec,
            comps[..=i].join(".")
        );
        cx.report("missing_subpath", imp.off, msg);
    }
}

// ---------------------------------------------------------------- JS/TS

/// JS/TS import specifiers: `(offset of the quote, specifier, match)` of
/// `import … from`, `import '…'`, `export … from`, `require()`,
/// `import()` and `jest|vi.requireActual|importActual()`.
pub(crate) fn js_specs<'s>(src: &'s Source) -> Vec<(usize, &'s str, &'s str)> {
    let spec = re!(concat!(
        r#"(?:^|[^\w$.])(?:from|import)\s*["'`]"#,
        r#"|(?:^|[^\w$.])(?:require|import)\s*\(\s*["'`]"#,
        r#"|(?:^|[^\w$.])(?:jest|vi)\s*\.\s*(?:requireActual|importActual)\s*\(\s*["'`]"#
    ));
    let m = &src.masked;
    spec.find_iter(m)
        .filter_map(|x| {
            Some((
                x.end() - 1,
                src.string_at(x.end() - 1)?,
                &m[x.start()..x.end()],
            ))
        })
        .collect()
}

/// The JS/TS imports with a literal specifier; a dynamic one inside `try`
/// is optional.
pub(crate) fn js_imports(src: &Source) -> Vec<Import> {
    let templated =
        |open: usize, spec: &str| src.masked.as_bytes()[open] == b'`' && spec.contains("${");
    js_specs(src)
        .into_iter()
        .filter(|&(open, spec, _)| !templated(open, spec))
        .map(|(open, spec, m)| Import {
            optional: m.contains('(') && in_js_try(src, open),
            ..Import::at(open, spec)
        })
        .collect()
}

/// The innermost enclosing block is a `try { … }`.
fn in_js_try(src: &Source, off: usize) -> bool {
    let b = src.masked.as_bytes();
    let mut depth = 0i32;
    for j in (0..off).rev() {
        match b[j] {
            b'}' => depth += 1,
            b'{' if depth == 0 => return src.masked[..j].trim_end().ends_with("try"),
            b'{' => depth -= 1,
            _ => {}
        }
    }
    false
}

const JS_EXTS: &[&str] = &[
    "js", "ts", "tsx", "jsx", "mjs", "cjs", "mts", "cts", "json", "d.ts", "vue", "svelte", "node",
];

/// The file a relative JS/TS import resolves to (Node/TypeScript rules).
pub(crate) fn resolve_js(base: &Path, spec: &str, root: &Path) -> Option<PathBuf> {
    let spec = spec.split(['?', '#']).next().unwrap_or(spec);
    let target = join_within(root, base, spec)?;
    if target.is_file() {
        return Some(target);
    }
    let name = target.file_name()?.to_string_lossy().into_owned();
    let with_ext = JS_EXTS
        .iter()
        .map(|ext| target.with_file_name(format!("{name}.{ext}")));
    // TypeScript ESM: `./x.js` written for `./x.ts`
    let esm: [(&str, &[&str]); 4] = [
        (".js", &[".ts", ".tsx"]),
        (".jsx", &[".tsx"]),
        (".mjs", &[".mts"]),
        (".cjs", &[".cts"]),
    ];
    let t = &target;
    let swapped = esm
        .iter()
        .filter_map(|(from, tos)| Some((name.strip_suffix(from)?, *tos)))
        .flat_map(move |(stem, tos)| {
            tos.iter()
                .map(move |to| t.with_file_name(format!("{stem}{to}")))
        });
    if let Some(p) = with_ext.chain(swapped).find(|p| p.is_file()) {
        return Some(p);
    }
    if target.is_dir() {
        let index = JS_EXTS
            .iter()
            .map(|ext| target.join(format!("index.{ext}")));
        return index
            .chain([target.join("package.json")])
            .find(|p| p.is_file());
    }
    None
}

/// The npm package a bare specifier names (`@scope/pkg` or `pkg`).
pub(crate) fn npm_package(spec: &str) -> String {
    let mut parts = spec.split('/');
    let first = parts.next().unwrap_or("");
    match parts.next() {
        Some(second) if first.starts_with('@') => format!("{first}/{second}"),
        _ => first.to_string(),
    }
}

fn js(cx: &Ctx) {
    let imports = js_imports(&cx.src);
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
            if fdir
                .as_ref()
                .is_some_and(|base| resolve_js(base, spec, cx.root).is_none())
            {
                let msg =
                    format!("`{spec}` resolves to no file (tried the extensions and index files)");
                cx.report("missing_subpath", imp.off, msg);
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
        let alias = |a: &String| {
            !a.is_empty() && (spec == a.trim_end_matches('/') || spec.starts_with(a.as_str()))
        };
        let pkg = npm_package(spec);
        let first = spec.split('/').next().unwrap_or(spec);
        if npm.aliases.iter().any(alias)
            || NODE_BUILTINS.contains(&first)
            || NODE_BUILTINS.contains(&spec)
            || npm.packages.contains(&pkg)
            || npm.base_url_entries.contains(first)
            || imp.optional
        {
            continue;
        }
        report_undeclared(cx, imp.off, &pkg, &npm.packages, "package.json", &pkg);
    }
}

// ---------------------------------------------------------------- Rust

fn rust(cx: &Ctx) {
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
    let item = re!(
        r"\b(?:mod|enum|struct|trait|type|fn|const|static|union|macro_rules!)\s+([A-Za-z_]\w*)"
    );
    let ident = re!(r"[A-Za-z_]\w*");
    let Some(cargo) = cx.manifest.cargo.clone() else {
        return;
    };
    let m = &cx.src.masked;
    let mut in_scope: BTreeSet<String> = item.captures_iter(m).map(|c| c[1].to_string()).collect();
    // every name a use tree brings in (over-approximated: all but the first
    // segment)
    for c in re!(r"\buse\s+([^;]+);").captures_iter(m) {
        in_scope.extend(
            ident
                .find_iter(&c[1])
                .skip(1)
                .map(|id| id.as_str().to_string()),
        );
    }
    let uses =
        re!(r"(?m)^[ \t]*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+(::\s*)?([A-Za-z_][A-Za-z0-9_]*)");
    let mut uses: Vec<(usize, String)> = uses
        .captures_iter(m)
        .map(|c| (c.get(0).unwrap().start(), c[2].to_string()))
        .collect();
    let extern_crate =
        re!(r"(?m)^[ \t]*(?:pub\s+)?extern\s+crate\s+([A-Za-z_]\w*)(?:\s+as\s+(\w+))?");
    for c in extern_crate.captures_iter(m) {
        uses.push((c.get(0).unwrap().start(), c[1].to_string()));
        in_scope.extend(c.get(2).map(|a| a.as_str().to_string()));
    }
    for (off, name) in uses {
        if STD.contains(&name.as_str())
            || name.starts_with(|c: char| c.is_ascii_uppercase())
            || [
                &cargo.crate_names,
                &cargo.deps,
                &cargo.local_modules,
                &in_scope,
            ]
            .iter()
            .any(|s| s.contains(&name))
        {
            continue;
        }
        let off = off + cx.src.masked[off..].len() - cx.src.masked[off..].trim_start().len();
        report_undeclared(cx, off, &name, &cargo.deps, "Cargo.toml", &name);
    }
}

// ---------------------------------------------------------------- Go

/// The import paths of a Go file, at the offset of their quote.
pub(crate) fn go_imports(src: &Source) -> Vec<Import> {
    let mut out = Vec::new();
    for m in re!(r"(?m)^[ \t]*import\s*\(").find_iter(&src.masked) {
        let open = m.end() - 1;
        if let Some(close) = src.match_close(open) {
            let inside = src
                .strings
                .iter()
                .filter(|s| s.open > open && s.open < close);
            out.extend(inside.map(|s| Import::at(s.open, &src.text[s.start..s.end])));
        }
    }
    for m in re!(r#"(?m)^[ \t]*import\s+(?:[\w.]+\s+)?["`]"#).find_iter(&src.masked) {
        out.extend(
            src.string_at(m.end() - 1)
                .map(|spec| Import::at(m.end() - 1, spec)),
        );
    }
    out
}

fn go(cx: &Ctx) {
    let Some(gomod) = cx.manifest.go.clone() else {
        return;
    };
    let module = gomod.module.as_str();
    for imp in go_imports(&cx.src) {
        let path = imp.spec.as_str();
        if !path.split('/').next().unwrap_or("").contains('.') {
            continue; // standard library (and "C")
        }
        let under = |m: &str| path == m || path.starts_with(&format!("{m}/"));
        if !module.is_empty() && under(module) {
            let rest = path[module.len()..].trim_start_matches('/');
            let dir = cx.root.join(&gomod.dir);
            if !dir.join(rest).is_dir() && dir.join("go.mod").is_file() {
                let msg =
                    format!("package `{path}` has no directory `{rest}` in module `{module}`");
                cx.report("missing_subpath", imp.off, msg);
            }
            continue;
        }
        if gomod.requires.iter().any(|r| under(r)) {
            continue;
        }
        let mut candidates: BTreeSet<&String> = gomod.requires.iter().collect();
        if !module.is_empty() {
            candidates.insert(&gomod.module);
        }
        // compare against the same number of path elements
        let close = candidates.into_iter().find(|r| {
            let head = path
                .split('/')
                .take(r.split('/').count())
                .collect::<Vec<_>>()
                .join("/");
            head != **r && edit_distance(&head, r, 2) <= 2
        });
        match close {
            Some(r) => cx.report(
                "near_miss_package",
                imp.off,
                format!("`{path}` is not required in go.mod; did you mean `{r}`?"),
            ),
            None => cx.report(
                "undeclared_package",
                imp.off,
                format!("`{path}` is not required in go.mod"),
            ),
        }
    }
}

/// Levenshtein distance, bounded: returns `max + 1` as soon as it is
/// certain to exceed `max`.
fn edit_distance(a: &str, b: &str, max: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return max + 1;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, v) in d.iter_mut().enumerate().take(w) {
        *v = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            // a swap of two neighbours is one typo
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return max + 1;
        }
    }
    d[a.len() * w + b.len()].min(max + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("requests", "reqeusts", 2), 1);
        assert_eq!(edit_distance("lodash", "lodahs", 2), 1);
        assert_eq!(edit_distance("express", "expresss", 2), 1);
        assert_eq!(edit_distance("react", "redux", 2), 3);
        assert_eq!(edit_distance("abc", "abc", 2), 0);
    }
}
