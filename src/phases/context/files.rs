//! Listing a project's files and classifying each one by path alone
//! (language, source / test / config / documentation), so the expensive
//! part of context gathering — reading contents — happens only where a
//! path cannot answer the question.

use std::path::Path;

use crate::error::{Error, Result};

/// Where the file list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// The git index (tracked files).
    GitIndex,
    /// A directory walk (not a git repository).
    Walk,
}

impl Listing {
    pub fn as_str(self) -> &'static str {
        match self {
            Listing::GitIndex => "git-index",
            Listing::Walk => "walk",
        }
    }
}

/// Directories a walk never enters: VCS data, build output, dependencies,
/// caches and wfx's own state.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".workflow",
    "target",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".idea",
    ".vscode",
    ".next",
    ".nuxt",
];

/// Project files, relative with `/` separators, sorted: the git index when
/// `root` is inside a git work tree, else a walk that skips [`SKIP_DIRS`]
/// and virtualenvs (directories holding `pyvenv.cfg`). `.workflow/` is
/// left out either way.
pub fn list_files(root: &Path) -> Result<(Vec<String>, Listing)> {
    if let Some(files) = git_index_files(root) {
        return Ok((files, Listing::GitIndex));
    }
    Ok((walk_files(root)?, Listing::Walk))
}

fn git_index_files(root: &Path) -> Option<Vec<String>> {
    let repo = git2::Repository::open(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    // The index is relative to the repository's work tree; keep only files
    // under `root` (which may be a subdirectory of it).
    let prefix = root
        .strip_prefix(&workdir)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    };
    let index = repo.index().ok()?;
    let mut files: Vec<String> = index
        .iter()
        // Gitlinks (submodules) are directories, not files.
        .filter(|e| e.mode != 0o160000)
        .filter_map(|e| {
            let path = String::from_utf8_lossy(&e.path).into_owned();
            let rel = path.strip_prefix(&prefix)?.to_string();
            (!rel.starts_with(".workflow/")).then_some(rel)
        })
        .collect();
    files.sort();
    files.dedup();
    Some(files)
}

fn walk_files(root: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 || !e.file_type().is_dir() {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            !SKIP_DIRS.contains(&name.as_ref()) && !e.path().join("pyvenv.cfg").is_file()
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            // Unreadable directories are skipped, not fatal: planning works
            // with what it can see.
            Err(e) if e.io_error().is_some() && e.path().is_some_and(|p| p != root) => continue,
            Err(e) => {
                return Err(Error::io(root, std::io::Error::other(e.to_string())));
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        files.push(rel.join("/"));
    }
    files.sort();
    Ok(files)
}

/// Language families wfx maps tests for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    Rust,
    Python,
    /// JavaScript and TypeScript.
    Js,
    Go,
    Java,
}

/// What a file is, judged by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Code under test.
    Source,
    /// A test file (or test support such as `conftest.py`).
    Test,
    /// Manifests, tool and CI configuration.
    Config,
    Documentation,
    /// Code that is not a test target: examples, benches, fixtures,
    /// vendored or generated code, build scripts.
    AuxCode,
    Other,
}

/// Classification of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileClass {
    /// Display name of the language (`Rust`, `TypeScript`, …), for code.
    pub language: Option<&'static str>,
    pub family: Option<Family>,
    pub kind: Kind,
}

/// Language of a file by extension.
pub fn language_of(path: &str) -> Option<(&'static str, Option<Family>)> {
    let name = file_name(path);
    if name.ends_with(".d.ts") {
        return None;
    }
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => ("Rust", Some(Family::Rust)),
        "py" | "pyi" => ("Python", Some(Family::Python)),
        "js" | "mjs" | "cjs" | "jsx" => ("JavaScript", Some(Family::Js)),
        "ts" | "tsx" | "mts" | "cts" => ("TypeScript", Some(Family::Js)),
        "go" => ("Go", Some(Family::Go)),
        "java" => ("Java", Some(Family::Java)),
        "kt" | "kts" => ("Kotlin", None),
        "c" | "h" => ("C", None),
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => ("C++", None),
        "cs" => ("C#", None),
        "rb" => ("Ruby", None),
        "php" => ("PHP", None),
        "swift" => ("Swift", None),
        "scala" => ("Scala", None),
        "sh" | "bash" | "zsh" => ("Shell", None),
        "vue" => ("Vue", None),
        "svelte" => ("Svelte", None),
        "html" | "htm" => ("HTML", None),
        "css" => ("CSS", None),
        "scss" | "sass" => ("SCSS", None),
        "less" => ("Less", None),
        _ => return None,
    })
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Parent directory ("" for files at the root).
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// File name without its last extension (`math.test.js` → `math.test`).
pub fn stem(path: &str) -> &str {
    let name = file_name(path);
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s,
        _ => name,
    }
}

fn dirs(path: &str) -> impl Iterator<Item = &str> {
    let d = parent_dir(path);
    d.split('/').filter(|s| !s.is_empty())
}

const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "e2e",
    "cypress",
    "playwright",
    "testing",
];

const AUX_DIRS: &[&str] = &[
    "examples",
    "example",
    "benches",
    "bench",
    "benchmarks",
    "fixtures",
    "testdata",
    "vendor",
    "third_party",
    "third-party",
    "scripts",
    "dist",
    "build",
    "out",
    "coverage",
    "docs",
    "doc",
    "site-packages",
    "migrations",
];

const CONFIG_NAMES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "package.json",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "pytest.ini",
    "Pipfile",
    "go.mod",
    "go.sum",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "Makefile",
    "GNUmakefile",
    "Dockerfile",
    "docker-compose.yml",
    "docker-compose.yaml",
    "rust-toolchain",
    "rust-toolchain.toml",
    "rustfmt.toml",
    ".rustfmt.toml",
    "clippy.toml",
    "deno.json",
    "tsconfig.json",
    ".babelrc",
    ".prettierrc",
    ".editorconfig",
    "nextest.toml",
    ".coveragerc",
    "noxfile.py",
];

/// Whether a file name is test-framework configuration (pytest, jest,
/// vitest, nextest, …), which ranks higher among config assets.
pub fn is_test_config(path: &str) -> bool {
    let name = file_name(path);
    matches!(
        name,
        "pytest.ini" | "tox.ini" | "nextest.toml" | ".coveragerc" | "noxfile.py"
    ) || name.starts_with("jest.config.")
        || name.starts_with("vitest.config.")
        || name.starts_with("karma.conf.")
        || name.starts_with("playwright.config.")
        || name.starts_with("cypress.config.")
        || name == ".mocharc.json"
        || name == ".mocharc.yml"
}

fn is_config(path: &str) -> bool {
    let name = file_name(path);
    if CONFIG_NAMES.contains(&name) || is_test_config(path) {
        return true;
    }
    if (name.starts_with("requirements") && name.ends_with(".txt"))
        || name.starts_with("tsconfig.")
        || name.starts_with(".eslintrc")
        || name.starts_with("eslint.config.")
        || name.starts_with("babel.config.")
        || name.starts_with("webpack.config.")
        || name.starts_with("vite.config.")
        || name.starts_with("rollup.config.")
        || name.starts_with(".prettierrc")
    {
        return true;
    }
    let d = parent_dir(path);
    d.starts_with(".github/workflows")
        || d == ".circleci"
        || d == ".config"
        || name == ".gitlab-ci.yml"
}

fn is_documentation(path: &str) -> bool {
    let name = file_name(path);
    let upper = name.to_ascii_uppercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("md" | "rst" | "adoc" | "markdown"))
        || upper.starts_with("README")
        || upper.starts_with("CHANGELOG")
        || upper.starts_with("CONTRIBUTING")
        || dirs(path).next().is_some_and(|d| d == "docs" || d == "doc")
}

/// Whether a code file is a test by its path (conventions of pytest, jest,
/// vitest, node --test, go test, JUnit and cargo).
pub fn is_test_path(path: &str, family: Option<Family>) -> bool {
    if dirs(path).any(|d| TEST_DIRS.contains(&d)) {
        return true;
    }
    let name = file_name(path);
    let st = stem(path);
    match family {
        Some(Family::Python) => {
            name.starts_with("test_") || st.ends_with("_test") || name == "conftest.py"
        }
        Some(Family::Go) => st.ends_with("_test"),
        Some(Family::Js) => st.ends_with(".test") || st.ends_with(".spec") || st.ends_with(".e2e"),
        Some(Family::Java) => st.ends_with("Test") || st.ends_with("Tests") || st.ends_with("IT"),
        Some(Family::Rust) => false,
        None => {
            st.ends_with(".test")
                || st.ends_with(".spec")
                || st.ends_with("_test")
                || st.ends_with("Test")
        }
    }
}

fn is_aux_code(path: &str) -> bool {
    let name = file_name(path);
    name == "build.rs"
        || name == "setup.py"
        || name.ends_with(".min.js")
        || name.ends_with(".min.css")
        || name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || dirs(path).any(|d| AUX_DIRS.contains(&d))
}

/// Classify one path.
pub fn classify(path: &str) -> FileClass {
    let lang = language_of(path);
    let (language, family) = match lang {
        Some((l, f)) => (Some(l), f),
        None => (None, None),
    };
    let kind = if is_documentation(path) {
        Kind::Documentation
    } else if is_config(path) {
        Kind::Config
    } else if language.is_none() {
        Kind::Other
    } else if is_test_path(path, family) {
        Kind::Test
    } else if is_aux_code(path) {
        Kind::AuxCode
    } else {
        Kind::Source
    };
    FileClass {
        language,
        family,
        kind,
    }
}

/// Test layer of a test file by its path (REFERENCE.md "Test layers"):
/// `unit`, `integration` or `e2e`. Rust files under `tests/` are
/// integration tests; inline `#[cfg(test)]` modules are unit tests.
pub fn layer_of_test(path: &str, family: Option<Family>) -> &'static str {
    let lower = path.to_ascii_lowercase();
    let ds: Vec<&str> = dirs(&lower).collect();
    let st = stem(&lower);
    if ds
        .iter()
        .any(|d| matches!(*d, "e2e" | "cypress" | "playwright"))
        || st.ends_with(".e2e")
    {
        return "e2e";
    }
    if ds
        .iter()
        .any(|d| matches!(*d, "integration" | "integration_tests" | "it"))
        || st.ends_with(".integration")
        || (family == Some(Family::Java) && path.ends_with("IT.java"))
    {
        return "integration";
    }
    if family == Some(Family::Rust) && ds.contains(&"tests") && !ds.contains(&"unit") {
        return "integration";
    }
    "unit"
}

/// Words of a path or identifier for keyword matching: split on anything
/// that is not alphanumeric and at lowercase→uppercase boundaries, then
/// lowercased (`src/AuthService.ts` → `src`, `auth`, `service`, `ts`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            cur.push(c.to_ascii_lowercase());
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Priority of a source file by what its path says: security,
/// authentication and core paths are `high`, shared utilities `medium`,
/// everything else `low`. Returns the priority and the word that decided it.
pub fn path_priority(path: &str) -> (&'static str, Option<String>) {
    const HIGH: &[&str] = &[
        "auth",
        "authn",
        "authz",
        "authentication",
        "authorization",
        "security",
        "secure",
        "crypto",
        "cryptography",
        "password",
        "passwd",
        "token",
        "tokens",
        "jwt",
        "oauth",
        "session",
        "sessions",
        "login",
        "logout",
        "permission",
        "permissions",
        "acl",
        "rbac",
        "payment",
        "payments",
        "billing",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "core",
    ];
    const MEDIUM: &[&str] = &[
        "util",
        "utils",
        "utility",
        "utilities",
        "helper",
        "helpers",
        "common",
        "shared",
    ];
    let ws = words(path);
    if let Some(w) = ws.iter().find(|w| HIGH.contains(&w.as_str())) {
        return ("high", Some(w.clone()));
    }
    if let Some(w) = ws.iter().find(|w| MEDIUM.contains(&w.as_str())) {
        return ("medium", Some(w.clone()));
    }
    ("low", None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_table() {
        for (path, lang, kind) in [
            ("src/lib.rs", Some("Rust"), Kind::Source),
            ("tests/integration.rs", Some("Rust"), Kind::Test),
            ("build.rs", Some("Rust"), Kind::AuxCode),
            ("benches/speed.rs", Some("Rust"), Kind::AuxCode),
            ("calc/ops.py", Some("Python"), Kind::Source),
            ("tests/test_ops.py", Some("Python"), Kind::Test),
            ("calc/ops_test.py", Some("Python"), Kind::Test),
            ("conftest.py", Some("Python"), Kind::Test),
            ("setup.py", Some("Python"), Kind::Config),
            ("src/math.js", Some("JavaScript"), Kind::Source),
            ("test/math.test.js", Some("JavaScript"), Kind::Test),
            ("src/a/b.spec.ts", Some("TypeScript"), Kind::Test),
            ("src/__tests__/x.tsx", Some("TypeScript"), Kind::Test),
            ("src/types.d.ts", None, Kind::Other),
            ("jest.config.js", Some("JavaScript"), Kind::Config),
            ("calc/calc.go", Some("Go"), Kind::Source),
            ("calc/calc_test.go", Some("Go"), Kind::Test),
            ("src/main/java/calc/Calc.java", Some("Java"), Kind::Source),
            ("src/test/java/calc/CalcTest.java", Some("Java"), Kind::Test),
            ("Cargo.toml", None, Kind::Config),
            ("README.md", None, Kind::Documentation),
            ("docs/guide.html", Some("HTML"), Kind::Documentation),
            (".github/workflows/ci.yml", None, Kind::Config),
            (
                "fixtures/projects/x/src/lib.rs",
                Some("Rust"),
                Kind::AuxCode,
            ),
            ("assets/logo.png", None, Kind::Other),
        ] {
            let c = classify(path);
            assert_eq!((c.language, c.kind), (lang, kind), "{path}");
        }
    }

    #[test]
    fn layers_by_path() {
        assert_eq!(
            layer_of_test("tests/integration.rs", Some(Family::Rust)),
            "integration"
        );
        assert_eq!(
            layer_of_test("tests/test_ops.py", Some(Family::Python)),
            "unit"
        );
        assert_eq!(
            layer_of_test("tests/integration/test_api.py", Some(Family::Python)),
            "integration"
        );
        assert_eq!(layer_of_test("e2e/login.spec.ts", Some(Family::Js)), "e2e");
        assert_eq!(layer_of_test("src/x.e2e.ts", Some(Family::Js)), "e2e");
        assert_eq!(
            layer_of_test("src/test/java/a/ApiIT.java", Some(Family::Java)),
            "integration"
        );
        assert_eq!(
            layer_of_test("src/test/java/a/ApiTest.java", Some(Family::Java)),
            "unit"
        );
    }

    #[test]
    fn words_and_priorities() {
        assert_eq!(
            words("src/AuthService.ts"),
            ["src", "auth", "service", "ts"]
        );
        assert_eq!(words("parse_number2"), ["parse", "number2"]);
        assert_eq!(path_priority("calc/auth.py"), ("high", Some("auth".into())));
        assert_eq!(
            path_priority("src/core/engine.rs"),
            ("high", Some("core".into()))
        );
        assert_eq!(
            path_priority("src/utils/strings.ts"),
            ("medium", Some("utils".into()))
        );
        assert_eq!(path_priority("src/math.js"), ("low", None));
        // Substrings do not count: "author" is not "auth".
        assert_eq!(path_priority("src/author.rs"), ("low", None));
    }
}
