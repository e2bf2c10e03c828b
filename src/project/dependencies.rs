//! What a project declares it depends on, read from its manifests with small
//! hand parsers (no TOML crate): `package.json` (+ tsconfig/jsconfig path
//! aliases, workspaces), `Cargo.toml`, `pyproject.toml` / `requirements*.txt`
//! / `setup.cfg` / `setup.py` / `Pipfile`, and `go.mod`. An ecosystem without
//! a manifest is `None`, which the import checks read as "cannot decide".

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::source::Source;
use super::{Lang, compile};

/// Declared packages per ecosystem, for one project directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    /// Directory the manifests were read from, relative to the project root
    /// (`""` for the root itself).
    pub dir: String,
    /// `None` without a `package.json`: JS/TS package imports are not judged.
    pub npm: Option<NpmManifest>,
    /// `None` without a `Cargo.toml`: Rust `use` paths are not judged.
    pub cargo: Option<CargoManifest>,
    /// Always present: local modules are known even without a manifest.
    pub python: PythonManifest,
    /// `None` without a `go.mod`: Go imports are not judged.
    pub go: Option<GoManifest>,
}

/// `package.json` (dependencies, devDependencies, peerDependencies,
/// optionalDependencies, bundledDependencies, the package's own name,
/// workspace members) plus tsconfig/jsconfig aliases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NpmManifest {
    /// Every importable package name (dependencies of all kinds, `@types/x`
    /// as `x`, the package itself, workspace members).
    pub packages: BTreeSet<String>,
    /// The package's own name and its workspace members' names.
    pub own_names: BTreeSet<String>,
    /// `compilerOptions.paths` keys as prefixes (`@app/` from `@app/*`).
    pub aliases: Vec<String>,
    /// First path elements that resolve under `compilerOptions.baseUrl`.
    pub base_url_entries: BTreeSet<String>,
}

/// `Cargo.toml`: the crate's own names and every dependency table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CargoManifest {
    /// Crate directory, relative to the project root.
    pub dir: String,
    /// Package and lib names, `-` → `_`.
    pub crate_names: BTreeSet<String>,
    /// Dependency keys (import names), `-` → `_`.
    pub deps: BTreeSet<String>,
    /// File stems and directories under `src/`, `tests/`, `benches/`,
    /// `examples/` (modules a `use` may name).
    pub local_modules: BTreeSet<String>,
}

/// Python: declared distributions (None without any Python manifest) and
/// the project's own top-level modules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PythonManifest {
    /// Normalised distribution names (lowercase, `-`/`.` → `_`), plus tools
    /// configured in `[tool.X]` tables or their own config files.
    pub declared: Option<BTreeSet<String>>,
    /// Top-level packages and modules of the project (root and `src/`).
    pub local_modules: BTreeSet<String>,
}

/// `go.mod`: the module path and every required or replaced module.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoManifest {
    /// Directory of `go.mod`, relative to the project root.
    pub dir: String,
    /// The `module` path: imports under it are the project's own packages.
    pub module: String,
    /// Module paths of `require` and `replace` directives.
    pub requires: Vec<String>,
}

/// Files whose presence marks a directory as a project (or sub-project).
#[rustfmt::skip]
pub(crate) const MANIFEST_FILES: &[&str] = &[
    "package.json", "Cargo.toml", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
    "Pipfile", "go.mod",
];

fn read(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Normalise a Python distribution or module name for comparison.
pub(crate) fn py_norm(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace(['-', '.'], "_")
}

/// Load the manifests found directly in `root/dir`.
pub(crate) fn load_dir(root: &Path, dir: &str) -> Manifest {
    let base = if dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(dir)
    };
    Manifest {
        dir: dir.to_string(),
        npm: load_npm(&base),
        cargo: load_cargo(&base, dir),
        python: load_python(&base),
        go: load_go(&base, dir),
    }
}

/// The manifests that apply to the files of one scan, each directory read
/// once: per file, the nearest directory above it that has a manifest,
/// merged with the root's.
#[derive(Default)]
pub(crate) struct Manifests {
    root: Option<Manifest>,
    /// Manifest directory (`""` for the root) of each file directory.
    dir_of: HashMap<String, String>,
    merged: HashMap<String, Manifest>,
}

impl Manifests {
    pub fn for_file(&mut self, root: &Path, rel: &str) -> &Manifest {
        let parent = Path::new(rel)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = self
            .dir_of
            .entry(parent)
            .or_insert_with(|| nearest_manifest_dir(root, rel))
            .clone();
        let outer = self.root.get_or_insert_with(|| load_dir(root, ""));
        if dir.is_empty() {
            return outer;
        }
        self.merged
            .entry(dir)
            .or_insert_with_key(|dir| merge(load_dir(root, dir), outer))
    }
}

fn nearest_manifest_dir(root: &Path, rel: &str) -> String {
    let mut dir = Path::new(rel)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    while !dir.as_os_str().is_empty() {
        if MANIFEST_FILES
            .iter()
            .any(|f| root.join(&dir).join(f).is_file())
        {
            return dir.to_string_lossy().replace('\\', "/");
        }
        dir.pop();
    }
    String::new()
}

/// `nested` with whatever it lacks taken from `outer` (the root): npm and
/// Python declarations are unions (hoisted dependencies are importable),
/// Cargo and Go use the nearest manifest.
pub(crate) fn merge(nested: Manifest, outer: &Manifest) -> Manifest {
    let npm = match (nested.npm, &outer.npm) {
        (Some(mut n), Some(o)) => {
            n.packages.extend(o.packages.iter().cloned());
            n.own_names.extend(o.own_names.iter().cloned());
            n.aliases.extend(o.aliases.iter().cloned());
            n.base_url_entries
                .extend(o.base_url_entries.iter().cloned());
            Some(n)
        }
        (n, o) => n.or_else(|| o.clone()),
    };
    let declared = match (nested.python.declared, &outer.python.declared) {
        (Some(mut n), Some(o)) => {
            n.extend(o.iter().cloned());
            Some(n)
        }
        (n, o) => n.or_else(|| o.clone()),
    };
    let mut local = nested.python.local_modules;
    local.extend(outer.python.local_modules.iter().cloned());
    Manifest {
        dir: nested.dir,
        npm,
        cargo: nested.cargo.or_else(|| outer.cargo.clone()),
        python: PythonManifest {
            declared,
            local_modules: local,
        },
        go: nested.go.or_else(|| outer.go.clone()),
    }
}

// ---------------------------------------------------------------- npm

fn load_npm(base: &Path) -> Option<NpmManifest> {
    let text = read(&base.join("package.json"))?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut m = NpmManifest::default();
    if let Some(name) = json.get("name").and_then(|n| n.as_str()) {
        m.packages.insert(name.to_string());
        m.own_names.insert(name.to_string());
    }
    #[rustfmt::skip]
    const DEPENDENCIES: [&str; 4] =
        ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];
    for key in DEPENDENCIES {
        if let Some(obj) = json.get(key).and_then(|d| d.as_object()) {
            for name in obj.keys() {
                add_npm_name(&mut m.packages, name);
            }
        }
    }
    for key in ["bundledDependencies", "bundleDependencies"] {
        if let Some(arr) = json.get(key).and_then(|d| d.as_array()) {
            for name in arr.iter().filter_map(|v| v.as_str()) {
                add_npm_name(&mut m.packages, name);
            }
        }
    }
    let workspaces = match json.get("workspaces") {
        Some(serde_json::Value::Array(a)) => a.clone(),
        Some(serde_json::Value::Object(o)) => o
            .get("packages")
            .and_then(|p| p.as_array())
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    for pattern in workspaces.iter().filter_map(|v| v.as_str()) {
        for dir in expand_workspace(base, pattern) {
            if let Some(name) = read(&dir.join("package.json"))
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|j| j.get("name").and_then(|n| n.as_str()).map(str::to_string))
            {
                m.packages.insert(name.clone());
                m.own_names.insert(name);
            }
        }
    }
    for cfg in ["tsconfig.json", "jsconfig.json"] {
        if let Some(text) = read(&base.join(cfg)) {
            read_tsconfig(base, &text, &mut m);
        }
    }
    Some(m)
}

/// `@types/foo` declares types for `foo`, `@types/scope__pkg` for `@scope/pkg`.
fn add_npm_name(set: &mut BTreeSet<String>, name: &str) {
    set.insert(name.to_string());
    if let Some(t) = name.strip_prefix("@types/") {
        match t.split_once("__") {
            Some((scope, pkg)) => set.insert(format!("@{scope}/{pkg}")),
            None => set.insert(t.to_string()),
        };
    }
}

fn expand_workspace(base: &Path, pattern: &str) -> Vec<std::path::PathBuf> {
    let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
    if pattern.contains("..") {
        return Vec::new();
    }
    match pattern
        .strip_suffix("/*")
        .or_else(|| pattern.strip_suffix("/**"))
    {
        Some(parent) if !parent.contains('*') => std::fs::read_dir(base.join(parent))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default(),
        _ if !pattern.contains('*') => vec![base.join(pattern)],
        _ => Vec::new(),
    }
}

fn read_tsconfig(base: &Path, text: &str, m: &mut NpmManifest) {
    let trailing = re!(r",(\s*[}\]])");
    let src = Source::new(Lang::Js, text);
    let cleaned = trailing.replace_all(&src.code, "$1");
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&cleaned) else {
        return;
    };
    let opts = json.get("compilerOptions");
    if let Some(paths) = opts
        .and_then(|o| o.get("paths"))
        .and_then(|p| p.as_object())
    {
        for key in paths.keys() {
            m.aliases.push(key.trim_end_matches('*').to_string());
        }
    }
    if let Some(base_url) = opts.and_then(|o| o.get("baseUrl")).and_then(|b| b.as_str()) {
        if base_url.contains("..") {
            return;
        }
        if let Ok(rd) = std::fs::read_dir(base.join(base_url)) {
            for e in rd.filter_map(|e| e.ok()) {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name.split('.').next().unwrap_or(&name).to_string();
                if !stem.is_empty() && stem != "node_modules" {
                    m.base_url_entries.insert(stem);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- TOML-ish

/// One `key = value` of a TOML file, with the table it sits in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TomlEntry {
    pub table: String,
    pub key: String,
    pub value: String,
}

/// Strip a `#` comment that is outside quotes.
fn strip_toml_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn bracket_balance(s: &str) -> i32 {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    let mut n = 0;
    for c in s.chars() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '[' || c == '{' => n += 1,
            None if c == ']' || c == '}' => n -= 1,
            None => {}
        }
        prev = c;
    }
    n
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['"', '\'']).to_string()
}

/// A forgiving reader of the TOML subset manifests use: tables, dotted and
/// quoted keys, values spanning lines while brackets are open.
pub(crate) fn toml_entries(text: &str) -> Vec<TomlEntry> {
    let mut out = Vec::new();
    let mut table = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = strip_toml_comment(line).trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            let inner = line.trim_start_matches('[').trim_end_matches(']').trim();
            table = inner
                .split('.')
                .map(|p| p.trim())
                .collect::<Vec<_>>()
                .join(".");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let mut value = value.trim().to_string();
        let mut balance = bracket_balance(&value);
        while balance > 0 {
            let Some(next) = lines.next() else { break };
            let next = strip_toml_comment(next).trim();
            value.push(' ');
            value.push_str(next);
            balance = bracket_balance(&value);
        }
        let key = key
            .trim()
            .split('.')
            .map(unquote)
            .collect::<Vec<_>>()
            .join(".");
        out.push(TomlEntry {
            table: table.clone(),
            key,
            value,
        });
    }
    out
}

/// Every quoted string inside a TOML value.
fn toml_strings(value: &str) -> Vec<String> {
    let quoted = re!(r#""((?:[^"\\]|\\.)*)"|'([^']*)'"#);
    quoted
        .captures_iter(value)
        .filter_map(|c| {
            c.get(1)
                .or_else(|| c.get(2))
                .map(|m| m.as_str().to_string())
        })
        .collect()
}

// ---------------------------------------------------------------- Cargo

fn load_cargo(base: &Path, dir: &str) -> Option<CargoManifest> {
    let dep_table = re!(r"^(?:target\..+\.|workspace\.)?(?:dev-|build-)?dependencies(?:\.(.+))?$");
    let text = read(&base.join("Cargo.toml"))?;
    let mut m = CargoManifest {
        dir: dir.to_string(),
        ..Default::default()
    };
    for e in toml_entries(&text) {
        if (e.table == "package" || e.table == "lib") && e.key == "name" {
            m.crate_names.insert(unquote(&e.value).replace('-', "_"));
            continue;
        }
        if let Some(c) = dep_table.captures(&e.table) {
            let name = match c.get(1) {
                Some(t) => unquote(t.as_str()),
                None => e.key.split('.').next().unwrap_or("").to_string(),
            };
            if !name.is_empty() {
                m.deps.insert(name.replace('-', "_"));
            }
        }
    }
    for sub in ["src", "tests", "benches", "examples", "src/bin"] {
        if let Ok(rd) = std::fs::read_dir(base.join(sub)) {
            for e in rd.filter_map(|e| e.ok()) {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name.strip_suffix(".rs").unwrap_or(&name);
                if name.ends_with(".rs") || e.path().is_dir() {
                    m.local_modules.insert(stem.replace('-', "_"));
                }
            }
        }
    }
    Some(m)
}

// ---------------------------------------------------------------- Python

/// The distribution name at the start of a requirement specifier.
fn requirement_name(spec: &str) -> Option<String> {
    static NAME: LazyLock<Regex> = LazyLock::new(|| compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)"));
    let egg = re!(r"#egg=([A-Za-z0-9._-]+)");
    let spec = spec.trim();
    if spec.is_empty() || spec.starts_with('#') {
        return None;
    }
    if let Some(c) = egg.captures(spec) {
        return Some(py_norm(&c[1]));
    }
    if spec.contains("://") {
        // `name @ https://…`
        return spec
            .split_once('@')
            .and_then(|(n, _)| NAME.captures(n))
            .map(|c| py_norm(&c[1]));
    }
    NAME.captures(spec).map(|c| py_norm(&c[1]))
}

fn read_requirements(path: &Path, out: &mut BTreeSet<String>, depth: u32) {
    let Some(text) = read(path) else { return };
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or(line).trim();
        if let Some(rest) = line
            .strip_prefix("-r ")
            .or_else(|| line.strip_prefix("--requirement "))
            .or_else(|| line.strip_prefix("-c "))
            .or_else(|| line.strip_prefix("--constraint "))
        {
            if depth < 3
                && !rest.contains("..")
                && !rest.starts_with('/')
                && let Some(parent) = path.parent()
            {
                read_requirements(&parent.join(rest.trim()), out, depth + 1);
            }
            continue;
        }
        let line = line
            .strip_prefix("-e ")
            .or_else(|| line.strip_prefix("--editable "))
            .unwrap_or(line);
        if line.starts_with('-') {
            continue;
        }
        if let Some(n) = requirement_name(line) {
            out.insert(n);
        }
    }
}

fn load_python(base: &Path) -> PythonManifest {
    let mut declared = BTreeSet::new();
    let mut found = false;
    if let Some(text) = read(&base.join("pyproject.toml")) {
        found = true;
        for e in toml_entries(&text) {
            let t = e.table.as_str();
            if let Some(tool) = t.strip_prefix("tool.") {
                let name = tool.split('.').next().unwrap_or("");
                declared.insert(py_norm(name));
            }
            let is_array = e.value.trim_start().starts_with('[');
            let dep_key = matches!(
                e.key.as_str(),
                "dependencies" | "dev-dependencies" | "requires" | "optional-dependencies"
            );
            let dep_table = t.ends_with("dependencies")
                || t == "dependency-groups"
                || t.ends_with("optional-dependencies");
            if is_array && (dep_key || dep_table) {
                for s in toml_strings(&e.value) {
                    if let Some(n) = requirement_name(&s) {
                        declared.insert(n);
                    }
                }
            } else if dep_table && e.key != "python" {
                declared.insert(py_norm(e.key.split('.').next().unwrap_or("")));
            }
        }
    }
    let mut req_files: Vec<std::path::PathBuf> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(base) {
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("requirements") && name.ends_with(".txt") {
                req_files.push(e.path());
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(base.join("requirements")) {
        for e in rd.filter_map(|e| e.ok()) {
            if e.file_name().to_string_lossy().ends_with(".txt") {
                req_files.push(e.path());
            }
        }
    }
    for p in req_files {
        found = true;
        read_requirements(&p, &mut declared, 0);
    }
    if let Some(text) = read(&base.join("setup.cfg")) {
        found = true;
        read_setup_cfg(&text, &mut declared);
    }
    if let Some(text) = read(&base.join("setup.py")) {
        found = true;
        // Requirement-like string literals anywhere in setup.py: lists are
        // often built in variables, so collect generously.
        let src = Source::new(Lang::Python, &text);
        let req = re!(r"^[A-Za-z][A-Za-z0-9._-]*(\[[^\]]*\])?\s*((?:[<>=!~]=?|===).*)?(;.*)?$");
        for s in &src.strings {
            let lit = &text[s.start..s.end];
            if req.is_match(lit.trim())
                && let Some(n) = requirement_name(lit)
            {
                declared.insert(n);
            }
        }
    }
    if let Some(text) = read(&base.join("Pipfile")) {
        found = true;
        for e in toml_entries(&text) {
            if e.table == "packages" || e.table == "dev-packages" {
                declared.insert(py_norm(&e.key));
            }
        }
    }
    // Test runners configured by their own files.
    for (file, tool) in [
        ("pytest.ini", "pytest"),
        ("conftest.py", "pytest"),
        ("tox.ini", "tox"),
        ("mypy.ini", "mypy"),
        (".coveragerc", "coverage"),
    ] {
        if base.join(file).is_file() {
            declared.insert(tool.to_string());
            if file == "tox.ini" {
                declared.insert("pytest".to_string());
            }
        }
    }
    let mut local = BTreeSet::new();
    for d in [base.to_path_buf(), base.join("src"), base.join("lib")] {
        collect_py_modules(&d, &mut local);
    }
    PythonManifest {
        declared: found.then_some(declared),
        local_modules: local,
    }
}

fn read_setup_cfg(text: &str, out: &mut BTreeSet<String>) {
    let mut section = String::new();
    let mut in_list = false;
    for raw in text.lines() {
        let line = raw.split('#').next().unwrap_or("");
        let t = line.trim();
        if t.starts_with('[') {
            section = t.trim_matches(['[', ']']).trim().to_string();
            in_list = false;
            if section == "tool:pytest" {
                out.insert("pytest".to_string());
            }
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && in_list {
            if let Some(n) = requirement_name(t) {
                out.insert(n);
            }
            continue;
        }
        in_list = false;
        let Some((key, value)) = t.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let is_req_key = section == "options"
            && matches!(key, "install_requires" | "tests_require" | "setup_requires");
        if is_req_key || section == "options.extras_require" {
            in_list = true;
            for item in value.split(',') {
                if let Some(n) = requirement_name(item) {
                    out.insert(n);
                }
            }
        }
    }
}

/// Top-level Python packages (directories) and modules (`*.py`) in `dir`.
pub(crate) fn collect_py_modules(dir: &Path, out: &mut BTreeSet<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "node_modules" || name == "__pycache__" {
            continue;
        }
        if let Some(stem) = name.strip_suffix(".py") {
            out.insert(py_norm(stem));
        } else if let Some(stem) = name
            .strip_suffix(".so")
            .or_else(|| name.strip_suffix(".pyi"))
        {
            out.insert(py_norm(stem.split('.').next().unwrap_or(stem)));
        } else if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.insert(py_norm(&name));
        }
    }
}

// ---------------------------------------------------------------- Go

fn load_go(base: &Path, dir: &str) -> Option<GoManifest> {
    let text = read(&base.join("go.mod"))?;
    let mut m = GoManifest {
        dir: dir.to_string(),
        ..Default::default()
    };
    let mut block: Option<&str> = None;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(b) = block {
            if line == ")" {
                block = None;
                continue;
            }
            go_directive(&mut m, b, line);
            continue;
        }
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if rest == "(" {
            block = Some(match word {
                "require" => "require",
                "replace" => "replace",
                _ => "other",
            });
            continue;
        }
        match word {
            "module" => m.module = rest.trim_matches('"').to_string(),
            "require" | "replace" => go_directive(&mut m, word, rest),
            _ => {}
        }
    }
    Some(m)
}

fn go_directive(m: &mut GoManifest, kind: &str, line: &str) {
    let first = line
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches('"');
    if first.is_empty() {
        return;
    }
    match kind {
        "require" | "replace" => m.requires.push(first.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_reader_handles_tables_arrays_and_comments() {
        let text = r#"
[package]
name = "my-crate" # comment
[dependencies]
serde = { version = "1", features = ["derive"] }
"tokio" = "1"
rand.workspace = true
[dependencies.regex]
version = "1"
[target.'cfg(unix)'.dependencies]
libc = "0.2"
[project]
dependencies = [
  "requests>=2", # http
  'PyYAML',
]
"#;
        let e = toml_entries(text);
        let keys: Vec<(&str, &str)> = e
            .iter()
            .map(|e| (e.table.as_str(), e.key.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("package", "name"),
                ("dependencies", "serde"),
                ("dependencies", "tokio"),
                ("dependencies", "rand.workspace"),
                ("dependencies.regex", "version"),
                ("target.'cfg(unix)'.dependencies", "libc"),
                ("project", "dependencies"),
            ]
        );
        assert_eq!(toml_strings(&e[6].value), vec!["requests>=2", "PyYAML"]);
    }

    #[test]
    fn requirement_names() {
        let cases = [
            ("requests>=2.0", Some("requests")),
            ("Django[argon2]==4.2 ; python_version>'3'", Some("django")),
            ("ruamel.yaml", Some("ruamel_yaml")),
            ("-e git+https://x/y.git#egg=my-pkg", Some("my_pkg")),
            ("pkg @ https://example.invalid/pkg.whl", Some("pkg")),
            ("# comment", None),
            ("", None),
        ];
        for (spec, want) in cases {
            assert_eq!(requirement_name(spec).as_deref(), want, "{spec}");
        }
    }
}
