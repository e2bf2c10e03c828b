//! The test infrastructure (DESIGN.md §11.2): the files, and the parts of
//! files, that decide which tests run and how their results are reported —
//! everything a fix could change to make the tests pass without fixing the
//! code. Pure: given paths and texts, it says what they are; the survey at
//! session start reads the files, the test guard compares two versions.
//!
//! What counts:
//! - pytest: every `conftest.py`; `pytest.ini`; the pytest sections of
//!   `pyproject.toml` (`[tool.pytest.ini_options]`, `[tool.pytest]`),
//!   `setup.cfg` (`[tool:pytest]`), `tox.ini` (`[pytest]`); the plugin
//!   entry points (`pytest11` in `pyproject.toml`, `setup.cfg`,
//!   `setup.py`); and the modules those name — `addopts = -p mod`,
//!   `pytest_plugins = [...]`, entry points — found in the project;
//! - jest, vitest, mocha: their config files (`jest.config.*`,
//!   `vitest.config.*`, `vite.config.*` when it has a `test` section,
//!   `.mocharc.*`), the files they load (`setupFiles`,
//!   `setupFilesAfterEnv`, `globalSetup`, `globalTeardown`, `reporters`,
//!   `testEnvironment`, `snapshotResolver`, mocha's `require`), and in
//!   `package.json` the test scripts (`test`, `pretest`, `posttest`,
//!   `test:*`) and the `jest` / `mocha` / `ava` keys;
//! - cargo: the `[[test]]` tables and the `test` / `harness` keys of
//!   `[lib]` and `[[bin]]` in `Cargo.toml`, `.cargo/config.toml` (aliases,
//!   rustflags) and `.config/nextest.toml`;
//! - go: `TestMain` in a `_test.go` file;
//! - maven: `skipTests`, `<excludes>` / `<exclude>` of `pom.xml`;
//! - a test file's `pytest_plugins`;
//! - in code under test (Python, JavaScript, TypeScript), an import of the
//!   test runner's own modules (`pytest`, `_pytest`, `pluggy`, `unittest`;
//!   `node:test`, `jest`, `vitest`, `mocha`, …) or an assignment to a
//!   member of `assert`: the code the tests import then runs inside the
//!   test process and can turn failures into passes ([`runner_hooks`]).
//!
//! Test bodies are not infrastructure: their edits are judged by the
//! test guard on their own (removed, skipped, weakened, modified).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::project::compile;

/// Which part of the test machinery a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InfraKind {
    /// `conftest.py`: hooks and fixtures of every test below it.
    Conftest,
    /// A file of which only some sections configure the tests
    /// (`pyproject.toml`, `setup.cfg`, `tox.ini`, `setup.py`,
    /// `package.json`, `Cargo.toml`, `vite.config.*`, `pom.xml`).
    Sections,
    /// A file that is test configuration as a whole (`pytest.ini`,
    /// `jest.config.*`, `vitest.config.*`, `.mocharc.*`,
    /// `.cargo/config.toml`, `.config/nextest.toml`).
    Config,
}

impl InfraKind {
    /// What such a file is, for people.
    pub fn label(self) -> &'static str {
        match self {
            InfraKind::Conftest => "conftest.py (pytest hooks)",
            InfraKind::Sections => "test configuration",
            InfraKind::Config => "test configuration",
        }
    }
}

/// The kind of `path` (project-relative) by its name alone.
pub fn kind_of(path: &str) -> Option<InfraKind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    match name {
        "conftest.py" => return Some(InfraKind::Conftest),
        "pytest.ini" => return Some(InfraKind::Config),
        "pyproject.toml" | "setup.cfg" | "tox.ini" | "setup.py" | "package.json" | "Cargo.toml"
        | "pom.xml" => return Some(InfraKind::Sections),
        _ => {}
    }
    if path == ".cargo/config.toml"
        || path == ".cargo/config"
        || path.ends_with("/.cargo/config.toml")
        || path == ".config/nextest.toml"
    {
        return Some(InfraKind::Config);
    }
    if matches!(stem, "jest" | "vitest") && name[stem.len()..].starts_with(".config.") {
        return Some(InfraKind::Config);
    }
    if stem == "vite" && name[stem.len()..].starts_with(".config.") {
        return Some(InfraKind::Sections);
    }
    if name.starts_with(".mocharc") {
        return Some(InfraKind::Config);
    }
    None
}

static INI_SECTION: LazyLock<Regex> = LazyLock::new(|| compile(r"^\s*\[([^\]]+)\]\s*(?:#.*)?$"));

/// The lines of the INI/TOML sections whose names `keep` accepts.
fn ini_sections(text: &str, keep: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    let mut on = false;
    for line in text.lines() {
        if let Some(c) = INI_SECTION.captures(line) {
            let name = c[1].trim().trim_matches('[').trim_matches(']').trim();
            on = keep(name);
        }
        if on {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The keys of a JSON object `value` that `keep` accepts, as text.
fn json_keys(
    value: &serde_json::Value,
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, serde_json::Value)> {
    value
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn is_test_script(name: &str) -> bool {
    matches!(name, "test" | "pretest" | "posttest")
        || name.starts_with("test:")
        || name.starts_with("pretest:")
}

/// The part of `text` (the content of `path`) that configures the tests:
/// two versions of a file differ as infrastructure when these differ. A
/// whole-file kind is its whole text; a file that is not infrastructure is
/// `""`.
pub fn relevant(path: &str, text: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match kind_of(path) {
        None => String::new(),
        Some(InfraKind::Conftest | InfraKind::Config) => text.to_string(),
        Some(InfraKind::Sections) => match name {
            "pyproject.toml" => ini_sections(text, |s| {
                s == "tool.pytest.ini_options"
                    || s == "tool.pytest"
                    || s.starts_with("tool.pytest.")
                    || s == "project.entry-points.pytest11"
                    || s == "project.entry-points.\"pytest11\""
                    || s == "tool.poetry.plugins.\"pytest11\""
                    || s == "tool.poetry.plugins.pytest11"
            }),
            "setup.cfg" => {
                let mut out = ini_sections(text, |s| s == "tool:pytest");
                // Entry points: only the pytest11 group.
                out.push_str(&entry_point_group(&ini_sections(text, |s| {
                    s == "options.entry_points"
                })));
                out
            }
            "tox.ini" => ini_sections(text, |s| s == "pytest" || s == "tool:pytest"),
            "setup.py" => text
                .lines()
                .filter(|l| l.contains("pytest11"))
                .collect::<Vec<_>>()
                .join("\n"),
            "package.json" => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(v) => {
                    let mut parts = json_keys(&v, |k| matches!(k, "jest" | "mocha" | "ava"));
                    if let Some(scripts) = v.get("scripts") {
                        parts.extend(
                            json_keys(scripts, is_test_script)
                                .into_iter()
                                .map(|(k, v)| (format!("scripts.{k}"), v)),
                        );
                    }
                    parts.iter().map(|(k, v)| format!("{k} = {v}\n")).collect()
                }
                // Not JSON: every line counts (it cannot be told apart).
                Err(_) => text.to_string(),
            },
            "Cargo.toml" => cargo_test_keys(text),
            "pom.xml" => text
                .lines()
                .filter(|l| {
                    l.contains("skipTests")
                        || l.contains("<exclude")
                        || l.contains("maven.test.skip")
                        || l.contains("<testFailureIgnore")
                })
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("\n"),
            _ if name.starts_with("vite.config.") => {
                if VITE_TEST.is_match(text) {
                    text.to_string()
                } else {
                    String::new()
                }
            }
            _ => String::new(),
        },
    }
}

static VITE_TEST: LazyLock<Regex> = LazyLock::new(|| compile(r"(?m)^\s*test\s*:"));

/// The `pytest11 = …` group of an INI `[options.entry_points]` section.
fn entry_point_group(section: &str) -> String {
    let mut out = String::new();
    let mut on = false;
    for line in section.lines() {
        let t = line.trim();
        if !line.starts_with([' ', '\t']) && t.contains('=') {
            on = t.starts_with("pytest11");
        }
        if on {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// `[[test]]` tables and the `test`/`harness` keys of `[lib]`/`[[bin]]`.
fn cargo_test_keys(text: &str) -> String {
    let mut out = String::new();
    let mut section = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_string();
            if section == "[[test]]" {
                out.push_str(t);
                out.push('\n');
            }
            continue;
        }
        let key = t.split('=').next().unwrap_or("").trim();
        let keep = section == "[[test]]"
            || (matches!(section.as_str(), "[lib]" | "[[bin]]" | "[[bench]]")
                && matches!(key, "test" | "harness"))
            || section.starts_with("[profile.test");
        if keep && !t.is_empty() {
            out.push_str(&format!("{section} {t}\n"));
        }
    }
    out
}

static PYTEST_PLUGINS: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#"(?s)\bpytest_plugins\s*=\s*(\[[^\]]*\]|\([^)]*\)|"[^"]*"|'[^']*')"#)
});
static QUOTED: LazyLock<Regex> = LazyLock::new(|| compile(r#"["']([A-Za-z_][\w.]*)["']"#));
static ENTRY_POINT: LazyLock<Regex> = LazyLock::new(|| {
    compile(r#"(?m)^\s*["']?[\w.-]+["']?\s*=\s*["']?([A-Za-z_][\w.]*)(?::\w+)?["']?"#)
});
static JS_LOADED: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"["']?(?:setupFiles|setupFilesAfterEnv|setupFilesAfterEach|globalSetup|globalTeardown|reporters|testEnvironment|snapshotResolver|require|testSequencer|resolver|runner)["']?\s*:\s*(\[[^\]]*\]|["'][^"']*["'])"#,
    )
});
static JS_PATH: LazyLock<Regex> =
    LazyLock::new(|| compile(r#"["'](\.{0,2}/?[\w./<>-]+\.(?:[cm]?[jt]sx?))["']"#));

static PY_RUNNER_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?m)^[ \t]*(?:from[ \t]+((?:_?pytest|pluggy|unittest)(?:\.[\w.]+)?)[ \t]+import\b|import[ \t]+([\w., \t]+))"#,
    )
});
static PY_RUNNER_MODULE: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^(?:_?pytest|pluggy|unittest)(?:\.[\w.]+)?$"));
static PY_RUNNER_BY_NAME: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?:__import__|import_module|sys\.modules\.get|sys\.modules\[)\s*\(?\s*["']((?:_?pytest|pluggy|unittest)(?:\.[\w.]+)?)["']"#,
    )
});
static JS_RUNNER_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|\bimport\s+)["']((?:(?:node:)?test|jest|@jest/[\w.-]+|jest-[\w-]+|vitest|@vitest/[\w.-]+|mocha|jasmine(?:-core)?|ava|tap|uvu)(?:/[\w./-]+)?)["']"#,
    )
});
/// A name `assert` is bound to: `const a = require('node:assert')`,
/// `import a from 'assert/strict'`, `import * as a from …`.
static JS_ASSERT_BINDING: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?:\b(?:const|let|var)\s+(\w+)\s*=\s*require\s*\(\s*|\bimport\s+(?:\*\s+as\s+)?(\w+)\s+from\s*)["'](?:node:)?assert(?:/strict)?["']"#,
    )
});

/// What of the test runner the source file `path` reaches into: the
/// runner's modules it imports (Python: `pytest`, `_pytest`, `pluggy`,
/// `unittest`; JavaScript and TypeScript: `node:test`, `jest`, `@jest/…`,
/// `vitest`, `mocha`, `jasmine`, `ava`, `tap`, `uvu`) and the members of
/// `assert` it assigns to (`assert.equal =`). Code under test has no use
/// for them, and the tests import it: from there it runs inside the test
/// process and can report a failure as a pass. Comment lines are left out;
/// other languages give nothing.
pub fn runner_hooks(path: &str, text: &str) -> BTreeSet<String> {
    use crate::project::Lang;
    let mut out = BTreeSet::new();
    match Lang::of(path) {
        Some(Lang::Python) => {
            let code = without_comment_lines(text, "#");
            for c in PY_RUNNER_IMPORT.captures_iter(&code) {
                if let Some(m) = c.get(1) {
                    out.insert(m.as_str().to_string());
                }
                let names = c.get(2).map_or("", |m| m.as_str());
                for name in names.split(',') {
                    let module = name.split_whitespace().next().unwrap_or("");
                    if PY_RUNNER_MODULE.is_match(module) {
                        out.insert(module.to_string());
                    }
                }
            }
            for c in PY_RUNNER_BY_NAME.captures_iter(&code) {
                out.insert(c[1].to_string());
            }
        }
        Some(lang) if lang.is_js() => {
            let code = without_comment_lines(text, "//");
            for c in JS_RUNNER_IMPORT.captures_iter(&code) {
                out.insert(c[1].to_string());
            }
            // Members of the assertion module written over: through the
            // names it is bound to, `assert` itself, or `require(…)` inline.
            let mut names: BTreeSet<String> = JS_ASSERT_BINDING
                .captures_iter(&code)
                .filter_map(|c| c.get(1).or(c.get(2)).map(|m| regex::escape(m.as_str())))
                .collect();
            names.insert("assert".into());
            names.insert(r#"require\s*\(\s*["'](?:node:)?assert(?:/strict)?["']\s*\)"#.into());
            let names = names.into_iter().collect::<Vec<_>>().join("|");
            let written = compile(&format!(
                r"(?:\b|^|[^\w$.])(?:{names})(?:\.strict)?(?:\.(\w+)|\[[^\]]*\])\s*=[^=>]|\bObject\.(?:assign|defineProperty|defineProperties|setPrototypeOf)\(\s*(?:{names})\b"
            ));
            for c in written.captures_iter(&code) {
                let member = c.get(1).map_or("[…]", |m| m.as_str());
                out.insert(format!("assert.{member} ="));
            }
        }
        _ => {}
    }
    out
}

/// `text` without the lines that start (after indentation) with `marker`.
fn without_comment_lines(text: &str, marker: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with(marker))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Python modules the pytest configuration `text` loads as plugins
/// (`-p mod` in addopts, `pytest_plugins`, `pytest11` entry points).
pub fn pytest_plugin_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // `-p mod` / `-pmod` among the tokens of addopts (INI continuation
    // lines and TOML arrays included).
    let mut in_addopts = false;
    let mut tokens: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("addopts") {
            in_addopts = true;
        } else if in_addopts
            && !(line.starts_with([' ', '\t']) || line.trim_start().starts_with(['"', '\'', ']']))
        {
            in_addopts = false;
        }
        if in_addopts {
            let value = line
                .split_once(['=', ':'])
                .map_or(line, |(k, v)| if k.trim() == "addopts" { v } else { line });
            tokens.extend(
                value
                    .replace(['[', ']', ',', '"', '\''], " ")
                    .split_whitespace()
                    .map(String::from),
            );
        }
    }
    let mut it = tokens.iter().peekable();
    while let Some(t) = it.next() {
        let module = if t == "-p" {
            it.next().cloned()
        } else {
            t.strip_prefix("-p")
                .filter(|m| !m.is_empty() && !m.starts_with('-'))
                .map(String::from)
        };
        if let Some(m) = module {
            out.insert(m);
        }
    }
    for c in PYTEST_PLUGINS.captures_iter(text) {
        let value = &c[1];
        out.extend(QUOTED.captures_iter(value).map(|q| q[1].to_string()));
    }
    let mut in_group = false;
    for line in text.lines() {
        let t = line.trim();
        if t.contains("pytest11") {
            in_group = true;
            if let Some((_, rest)) = t.split_once("pytest11")
                && let Some(c) = ENTRY_POINT.captures(rest.trim_start_matches(['"', ']', '\'']))
            {
                out.insert(c[1].to_string());
            }
            continue;
        }
        if in_group {
            if t.starts_with('[') || t.is_empty() {
                in_group = false;
                continue;
            }
            if let Some(c) = ENTRY_POINT.captures(t) {
                out.insert(c[1].to_string());
            }
        }
    }
    // Built-in plugin switches are not modules of the project.
    out.retain(|m| !m.starts_with("no:") && m != "no");
    out
}

/// Files (as written, relative to the config's directory) that a jest,
/// vitest or mocha configuration `text` loads.
pub fn js_loaded_files(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in JS_LOADED.captures_iter(text) {
        for p in JS_PATH.captures_iter(&c[1]) {
            let path = p[1]
                .trim_start_matches("<rootDir>/")
                .trim_start_matches("./")
                .to_string();
            if !path.starts_with("../") && !path.contains("node_modules") {
                out.insert(path);
            }
        }
    }
    out
}

/// The project file a Python module name is, among `files`.
pub fn module_file<'a>(module: &str, files: &'a BTreeSet<String>) -> Option<&'a String> {
    let rel = module.replace('.', "/");
    [
        format!("{rel}.py"),
        format!("{rel}/__init__.py"),
        format!("src/{rel}.py"),
        format!("src/{rel}/__init__.py"),
    ]
    .into_iter()
    .find_map(|candidate| files.get(&candidate))
}

/// The test infrastructure of a project: `files` are its file paths
/// (project-relative), `read` gives the text of one. The infrastructure
/// files by name, and the modules and files their configuration loads.
pub fn survey(files: &BTreeSet<String>, read: impl Fn(&str) -> Option<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for path in files {
        let Some(kind) = kind_of(path) else {
            // A test file's `pytest_plugins` loads plugins too.
            if path.ends_with(".py")
                && crate::project::is_test_path(path)
                && let Some(text) = read(path)
                && text.contains("pytest_plugins")
            {
                for m in pytest_plugin_modules(&text) {
                    out.extend(module_file(&m, files).cloned());
                }
            }
            continue;
        };
        let Some(text) = read(path) else { continue };
        if kind == InfraKind::Sections && relevant(path, &text).trim().is_empty() {
            continue;
        }
        out.insert(path.clone());
        for m in pytest_plugin_modules(&text) {
            out.extend(module_file(&m, files).cloned());
        }
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for f in js_loaded_files(&text) {
            let joined = if dir.is_empty() {
                f
            } else {
                format!("{dir}/{f}")
            };
            if files.contains(&joined) {
                out.insert(joined);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        for (path, kind) in [
            ("conftest.py", Some(InfraKind::Conftest)),
            ("tests/unit/conftest.py", Some(InfraKind::Conftest)),
            ("pytest.ini", Some(InfraKind::Config)),
            ("pyproject.toml", Some(InfraKind::Sections)),
            ("pkg/setup.cfg", Some(InfraKind::Sections)),
            ("jest.config.ts", Some(InfraKind::Config)),
            ("vitest.config.mjs", Some(InfraKind::Config)),
            ("vite.config.js", Some(InfraKind::Sections)),
            (".mocharc.yml", Some(InfraKind::Config)),
            (".cargo/config.toml", Some(InfraKind::Config)),
            (".config/nextest.toml", Some(InfraKind::Config)),
            ("Cargo.toml", Some(InfraKind::Sections)),
            ("src/lib.rs", None),
            ("calc/ops.py", None),
            ("tests/test_ops.py", None),
            ("jest.setup.js", None),
        ] {
            assert_eq!(kind_of(path), kind, "{path}");
        }
    }

    #[test]
    fn only_the_test_sections_of_shared_files_count() {
        let before = "[project]\nname = \"calc\"\ndependencies = []\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";
        let dep = before.replace("dependencies = []", "dependencies = [\"attrs\"]");
        let plugin = before.replace(
            "testpaths = [\"tests\"]",
            "testpaths = [\"tests\"]\naddopts = \"-p calc._report\"",
        );
        assert_eq!(
            relevant("pyproject.toml", before),
            relevant("pyproject.toml", &dep)
        );
        assert_ne!(
            relevant("pyproject.toml", before),
            relevant("pyproject.toml", &plugin)
        );
        let pkg =
            r#"{"name":"x","dependencies":{"a":"1"},"scripts":{"test":"jest","build":"tsc"}}"#;
        let pkg_dep = pkg.replace(r#""a":"1""#, r#""a":"2""#);
        let pkg_build = pkg.replace("tsc", "tsc -b");
        let pkg_test = pkg.replace(
            r#""test":"jest""#,
            r#""test":"jest --testPathIgnorePatterns math""#,
        );
        assert_eq!(
            relevant("package.json", pkg),
            relevant("package.json", &pkg_dep)
        );
        assert_eq!(
            relevant("package.json", pkg),
            relevant("package.json", &pkg_build)
        );
        assert_ne!(
            relevant("package.json", pkg),
            relevant("package.json", &pkg_test)
        );
        let cargo = "[package]\nname = \"c\"\n\n[lib]\npath = \"src/lib.rs\"\n";
        let cargo_dep = format!("{cargo}\n[dependencies]\nserde = \"1\"\n");
        let cargo_harness = cargo.replace(
            "path = \"src/lib.rs\"",
            "path = \"src/lib.rs\"\ntest = false",
        );
        assert_eq!(
            relevant("Cargo.toml", cargo),
            relevant("Cargo.toml", &cargo_dep)
        );
        assert_ne!(
            relevant("Cargo.toml", cargo),
            relevant("Cargo.toml", &cargo_harness)
        );
        let cfg = "[metadata]\nname = x\n\n[options.entry_points]\nconsole_scripts =\n    calc = calc.cli:main\n";
        let cfg_plugin = format!("{cfg}pytest11 =\n    fake = calc._report\n");
        assert_ne!(
            relevant("setup.cfg", cfg),
            relevant("setup.cfg", &cfg_plugin)
        );
        assert_eq!(
            relevant("setup.cfg", cfg),
            relevant("setup.cfg", &cfg.replace("calc.cli:main", "calc.cli:run"))
        );
    }

    #[test]
    fn plugins_and_loaded_files_are_found() {
        let ini = "[pytest]\naddopts = -ra -p calc._report -p no:cacheprovider\n";
        assert_eq!(
            pytest_plugin_modules(ini),
            BTreeSet::from(["calc._report".to_string()])
        );
        let toml = "[tool.pytest.ini_options]\naddopts = [\"-p\", \"calc.plug\"]\n";
        assert!(pytest_plugin_modules(toml).contains("calc.plug"));
        let conftest = "pytest_plugins = [\"tests.helpers.fixtures\", 'calc.other']\n";
        assert_eq!(
            pytest_plugin_modules(conftest),
            BTreeSet::from([
                "calc.other".to_string(),
                "tests.helpers.fixtures".to_string()
            ])
        );
        let entry = "[project.entry-points.pytest11]\nmyplugin = \"calc.pytest_plugin\"\n";
        assert!(pytest_plugin_modules(entry).contains("calc.pytest_plugin"));
        let jest = "module.exports = {\n  setupFilesAfterEnv: ['<rootDir>/test/setup.js'],\n  reporters: ['default', './tools/reporter.js'],\n};\n";
        assert_eq!(
            js_loaded_files(jest),
            BTreeSet::from(["test/setup.js".to_string(), "tools/reporter.js".to_string()])
        );
        let files: BTreeSet<String> = [
            "pytest.ini",
            "calc/_report.py",
            "calc/ops.py",
            "tests/test_ops.py",
            "jest.config.js",
            "test/setup.js",
            "tools/reporter.js",
            "pyproject.toml",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let texts = |p: &str| match p {
            "pytest.ini" => Some(ini.to_string()),
            "jest.config.js" => Some(jest.to_string()),
            "pyproject.toml" => Some("[project]\nname = \"x\"\n".to_string()),
            _ => Some(String::new()),
        };
        assert_eq!(
            survey(&files, texts),
            [
                "calc/_report.py",
                "jest.config.js",
                "pytest.ini",
                "test/setup.js",
                "tools/reporter.js"
            ]
            .into_iter()
            .map(String::from)
            .collect()
        );
    }

    /// What code under test reaches of the runner, by language and form;
    /// the ordinary uses beside them give nothing.
    #[test]
    fn runner_hooks_table() {
        let cases: &[(&str, &str, &[&str])] = &[
            // Python: imports of the runner in every form.
            (
                "calc/__init__.py",
                "import _pytest.reports as _r\n",
                &["_pytest.reports"],
            ),
            ("calc/a.py", "from _pytest import runner\n", &["_pytest"]),
            ("calc/a.py", "import os, pytest\n", &["pytest"]),
            (
                "calc/a.py",
                "    from unittest.mock import patch\n",
                &["unittest.mock"],
            ),
            ("calc/a.py", "import pluggy\n", &["pluggy"]),
            (
                "calc/a.py",
                "m = importlib.import_module('_pytest.reports')\n",
                &["_pytest.reports"],
            ),
            (
                "calc/a.py",
                "r = sys.modules['_pytest.runner']\n",
                &["_pytest.runner"],
            ),
            ("calc/a.py", "__import__(\"pytest\")\n", &["pytest"]),
            // Not the runner, or not code.
            (
                "calc/a.py",
                "import os\nfrom typing import Any\nimport pytesting\n",
                &[],
            ),
            ("calc/a.py", "# import pytest\nx = 'import pytest'\n", &[]),
            ("calc/a.py", "from myunittest import x\n", &[]),
            // JavaScript and TypeScript: the runner's modules.
            (
                "src/a.js",
                "const { test } = require('node:test');\n",
                &["node:test"],
            ),
            ("src/a.ts", "import { vi } from 'vitest';\n", &["vitest"]),
            (
                "src/a.mjs",
                "import 'jest-circus/runner';\n",
                &["jest-circus/runner"],
            ),
            (
                "src/a.js",
                "const r = await import(\"@jest/reporters\");\n",
                &["@jest/reporters"],
            ),
            ("src/a.js", "require('mocha')\n", &["mocha"]),
            // The assertion module written over, by any name.
            (
                "src/a.js",
                "const assert = require('node:assert');\nassert.strictEqual = () => {};\n",
                &["assert.strictEqual ="],
            ),
            (
                "src/a.js",
                "const a = require('assert');\na.deepStrictEqual = function () {};\n",
                &["assert.deepStrictEqual ="],
            ),
            (
                "src/a.js",
                "const a = require('node:assert');\nfor (const k of ks) a[k] = () => {};\n",
                &["assert.[…] ="],
            ),
            (
                "src/a.ts",
                "import * as a from 'node:assert/strict';\nObject.assign(a, {});\n",
                &["assert.[…] ="],
            ),
            (
                "src/a.js",
                "require('node:assert').equal = () => {};\n",
                &["assert.equal ="],
            ),
            ("src/a.js", "assert.strict.ok = x => x;\n", &["assert.ok ="]),
            // Using assert, comparing with it, a test file's own words.
            (
                "src/a.js",
                "const assert = require('node:assert');\nassert.ok(x);\nif (assert.ok === y) {}\nconst f = assert.equal;\n",
                &[],
            ),
            (
                "src/a.js",
                "// const { test } = require('node:test');\nconst t = 'test';\n",
                &[],
            ),
            ("src/a.js", "import test from './test';\n", &[]),
            ("src/a.go", "import \"testing\"\n", &[]),
        ];
        for (path, text, want) in cases {
            let got: Vec<String> = runner_hooks(path, text).into_iter().collect();
            assert_eq!(got, *want, "{path}: {text:?}");
        }
    }
}
