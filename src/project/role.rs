//! What a file is to the project, judged by its path alone: the one path
//! classifier of wfx. The context gatherer maps tests with it, the scans
//! tell test code from source with it, the built-in analyzer proposes only
//! [`PathRole::Source`] as a place to fix, and the fix guard treats
//! everything [`is_test_path`] says as the tests a fix must not weaken.

use super::lang::Lang;
use super::paths::{dirs, file_name, stem};

named_enum! {
    /// The role of one path in the project.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
    pub enum PathRole {
        /// Code under test: the only place a fix of the code belongs.
        Source = "source",
        /// A test file (`tests/`, `*.test.ts`, `test_*.py`, `*_test.go`,
        /// `CalcTest.java`, a Rust `tests.rs` module).
        Test = "test",
        /// Code only test runners load: `conftest.py`, `__mocks__/`, jest and
        /// vitest setup files, test-utility packages, mocks and fakes.
        TestSupport = "test_support",
        /// Inputs and expected outputs of tests: `testdata/`, `fixtures/`,
        /// `__snapshots__/`.
        TestData = "test_data",
        /// Configuration of a test runner (`jest.config.js`, `pytest.ini`).
        TestConfig = "test_config",
        /// Manifests, tool and CI configuration.
        Config = "config",
        Doc = "doc",
        /// Example programs (`examples/`).
        Example = "example",
        /// Benchmarks and their data (`benches/`, `benchmark/`).
        Benchmark = "benchmark",
        /// Build scripts and project tooling (`build.rs`, `scripts/`).
        Tooling = "tooling",
        /// Build output, bundles, minified and generated code.
        Generated = "generated",
        /// Copies of other projects' code (`vendor/`, `third_party/`).
        Vendored = "vendored",
        /// Type declarations only, no code runs there (`.pyi`, `.d.ts`).
        Stub = "stub",
        /// Anything else (images, data, files in no language wfx knows).
        Other = "other",
    }
}

impl PathRole {
    /// Part of the tests: the tests themselves, what only they load, their
    /// data and their runner's configuration. A fix of the code changes
    /// none of these.
    pub fn is_test(self) -> bool {
        matches!(
            self,
            PathRole::Test | PathRole::TestSupport | PathRole::TestData | PathRole::TestConfig
        )
    }
}

/// Directories whose contents are copies of other projects.
const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "node_modules",
    "bower_components",
    "site-packages",
    "dist-packages",
];

/// Build output (not under `src/`, where a module may have the name).
const GENERATED_DIRS: &[&str] = &[
    "dist",
    "build",
    "out",
    "coverage",
    "target",
    "__generated__",
    "generated",
];

const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "_tests",
    "__tests__",
    "spec",
    "specs",
    "e2e",
    "cypress",
    "playwright",
    "integration_tests",
];

const TEST_SUPPORT_DIRS: &[&str] = &[
    "__mocks__",
    "mocks",
    "mock",
    "fakes",
    "testutil",
    "testutils",
    "testhelpers",
    "test_helpers",
    "test-utils",
    "testsupport",
];

const TEST_DATA_DIRS: &[&str] = &["testdata", "fixtures", "__fixtures__", "__snapshots__"];

const BENCHMARK_DIRS: &[&str] = &["benches", "bench", "benchmark", "benchmarks"];

const EXAMPLE_DIRS: &[&str] = &["examples", "example"];

const TOOLING_DIRS: &[&str] = &["scripts", "migrations"];

const CONFIG_NAMES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "package.json",
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
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
];

/// Test-runner configuration by file name (pytest, tox, nox, nextest,
/// coverage, jest, vitest, karma, playwright, cypress, mocha).
fn is_test_config_name(name: &str) -> bool {
    matches!(
        name,
        "pytest.ini"
            | "tox.ini"
            | "nextest.toml"
            | ".coveragerc"
            | "noxfile.py"
            | ".mocharc.json"
            | ".mocharc.yml"
            | ".mocharc.js"
    ) || [
        "jest.config.",
        "vitest.config.",
        "vitest.workspace.",
        "karma.conf.",
        "playwright.config.",
        "cypress.config.",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

fn is_config(path: &str, name: &str) -> bool {
    if CONFIG_NAMES.contains(&name) {
        return true;
    }
    if (name.starts_with("requirements") && name.ends_with(".txt"))
        || [
            "tsconfig.",
            ".eslintrc",
            "eslint.config.",
            "babel.config.",
            "webpack.config.",
            "vite.config.",
            "rollup.config.",
            "tsdown.config.",
            ".prettierrc",
        ]
        .iter()
        .any(|p| name.starts_with(p))
    {
        return true;
    }
    let d = super::paths::parent_dir(path);
    d.starts_with(".github/workflows")
        || d == ".circleci"
        || d == ".config"
        || name == ".gitlab-ci.yml"
}

fn is_doc(path: &str, name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("md" | "rst" | "adoc" | "markdown"))
        || upper.starts_with("README")
        || upper.starts_with("CHANGELOG")
        || upper.starts_with("CONTRIBUTING")
        || dirs(path).next().is_some_and(|d| d == "docs" || d == "doc")
}

fn is_generated(path: &str, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".min.js")
        || lower.ends_with(".min.mjs")
        || lower.ends_with(".min.css")
        || lower.ends_with(".bundle.js")
        || lower.ends_with(".pb.go")
        || lower.ends_with("_pb2.py")
        || lower.ends_with("_pb2_grpc.py")
        || lower.contains(".generated.")
    {
        return true;
    }
    for d in dirs(path) {
        if d == "src" {
            return false;
        }
        if GENERATED_DIRS.contains(&d) || d.starts_with("dist-") {
            return true;
        }
    }
    false
}

fn is_stub(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".pyi")
        || lower.ends_with(".d.ts")
        || lower.ends_with(".d.mts")
        || lower.ends_with(".d.cts")
}

fn is_test_support(path: &str, name: &str, in_test_dir: bool) -> bool {
    let lower = name.to_ascii_lowercase();
    let st = stem(&lower);
    if lower == "conftest.py" || (in_test_dir && matches!(lower.as_str(), "__init__.py")) {
        return true;
    }
    if in_test_dir && matches!(st, "setup" | "helpers" | "helper" | "utils" | "util") {
        return true;
    }
    if dirs(path).any(|d| TEST_SUPPORT_DIRS.contains(&d.to_ascii_lowercase().as_str())) {
        return true;
    }
    let first = lower.split('.').next().unwrap_or("");
    let second = lower.split('.').nth(1).unwrap_or("");
    (matches!(first, "jest" | "vitest") && second == "setup")
        || matches!(
            first,
            "setuptests" | "test-setup" | "jest-setup" | "vitest-setup"
        ) && lower.contains('.')
        || lower.starts_with("mock_")
        || lower.starts_with("mocks.")
        || lower.contains("_mock.")
        || lower.contains(".mock.")
        || lower.contains("_mocks.")
        || lower.contains(".stories.")
        || lower.starts_with("testutil")
        || lower.starts_with("test_helpers")
        || lower.starts_with("test-utils")
}

/// A test file by its name, in the conventions of its language.
fn is_test_name(name: &str, lang: Option<Lang>) -> bool {
    let lower = name.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('.').collect();
    // `a.test.ts`, `a.spec.js`, `a.e2e.ts`, `a.integration.ts`, `x.test.py`
    if parts.len() >= 3
        && parts[1..parts.len() - 1]
            .iter()
            .any(|p| matches!(*p, "test" | "spec" | "e2e" | "integration"))
    {
        return true;
    }
    let st = stem(name);
    let lower_st = stem(&lower);
    match lang.map(Lang::family) {
        Some(Lang::Python) => {
            lower.starts_with("test_") || lower_st.ends_with("_test") || lower == "tests.py"
        }
        Some(Lang::Go) => lower_st.ends_with("_test"),
        Some(Lang::Rust) => {
            matches!(lower_st, "tests" | "test")
                || lower_st.ends_with("_tests")
                || lower_st.ends_with("_test")
        }
        Some(Lang::Js) => false,
        Some(Lang::Java | Lang::Kotlin | Lang::Scala) => {
            st.ends_with("Test") || st.ends_with("Tests") || st.ends_with("IT")
        }
        _ => {
            lower_st.ends_with("_test")
                || lower_st.ends_with("_spec")
                || st.ends_with("Test")
                || st.ends_with("Tests")
        }
    }
}

/// The role of `path` (relative to the project root, `/` or `\`
/// separated) in the project. Precedence, first match wins: vendored,
/// generated, documentation, test configuration, configuration, stubs,
/// test data, test support, tests, benchmarks, examples, tooling, then
/// source for a file in a known language and other for the rest.
pub fn classify(path: &str) -> PathRole {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./");
    let name = file_name(path);
    let lang = Lang::of(path);
    let in_dir = |list: &[&str]| dirs(path).any(|d| list.contains(&d));
    if in_dir(VENDORED_DIRS) {
        return PathRole::Vendored;
    }
    if is_generated(path, name) {
        return PathRole::Generated;
    }
    if is_doc(path, name) {
        return PathRole::Doc;
    }
    if is_test_config_name(name) {
        return PathRole::TestConfig;
    }
    if is_config(path, name) {
        return PathRole::Config;
    }
    if is_stub(name) {
        return PathRole::Stub;
    }
    if in_dir(TEST_DATA_DIRS) || name.ends_with(".snap") {
        return PathRole::TestData;
    }
    let in_test_dir = in_dir(TEST_DIRS);
    if is_test_support(path, name, in_test_dir) {
        return PathRole::TestSupport;
    }
    if in_test_dir || (lang.is_some() && is_test_name(name, lang)) {
        return PathRole::Test;
    }
    if in_dir(BENCHMARK_DIRS) {
        return PathRole::Benchmark;
    }
    if in_dir(EXAMPLE_DIRS) {
        return PathRole::Example;
    }
    if name == "build.rs" || in_dir(TOOLING_DIRS) {
        return PathRole::Tooling;
    }
    if lang.is_some() {
        PathRole::Source
    } else {
        PathRole::Other
    }
}

/// Test code, test data or test configuration by path ([`PathRole::is_test`]):
/// the one test-path rule of wfx. Rust `#[cfg(test)]` modules inside source
/// files are found per line by whoever reads the file, not here.
pub fn is_test_path(path: &str) -> bool {
    classify(path).is_test()
}

#[cfg(test)]
mod tests {
    use super::PathRole::*;
    use super::*;

    /// Every path whose role the old classifiers disagreed on is pinned
    /// here with the answer a user expects (the comment names the old
    /// answers where they differed).
    #[test]
    fn roles_by_path() {
        for (path, want) in [
            // Source.
            ("src/lib.rs", Source),
            ("calc/ops.py", Source),
            ("src/math.js", Source),
            ("src/MagicString.ts", Source),
            ("calc/calc.go", Source),
            ("src/main/java/calc/Calc.java", Source),
            ("app/src/main/kotlin/a/Latest.kt", Source),
            ("src/testing.rs", Source),
            ("src/contest.py", Source),
            ("src/latest.js", Source),
            ("src/attest/a.py", Source),
            ("src/protest.ts", Source),
            ("src/inspector/a.js", Source),
            ("src/testament.rs", Source),
            // A `testing/` package is code (wfx's own src/testing/, click's
            // testing.py); the context gatherer called it tests.
            ("src/testing/run.rs", Source),
            ("src/click/testing.py", Source),
            ("src/build/mod.rs", Source),
            // Tests.
            ("tests/integration.rs", Test),
            ("tests/test_ops.py", Test),
            ("calc/ops_test.py", Test),
            ("pkg/test_x.py", Test),
            ("test/math.test.js", Test),
            ("src/a/b.spec.ts", Test),
            ("src/__tests__/x.tsx", Test),
            ("e2e/login.ts", Test),
            ("src/a.e2e.ts", Test),
            // Was source to the context gatherer, a test to the scans.
            ("src/a.integration.ts", Test),
            ("calc/calc_test.go", Test),
            ("src/test/java/calc/CalcTest.java", Test),
            ("src/main/java/a/CalcTest.java", Test),
            ("app/src/main/kotlin/a/CalcTest.kt", Test),
            ("spec/models/user_spec.rb", Test),
            ("src/parser_tests.rs", Test),
            // A Rust test module in its own file: source to the context
            // gatherer, a test to the scans.
            ("src/datetime/tests.rs", Test),
            ("src/tests.rs", Test),
            ("myapp/tests.py", Test),
            // trio's private test packages; were source to everything.
            ("trio/_core/_tests/tutil.py", Test),
            ("src/pkg/_tests/test_io.py", Test),
            // Test support.
            ("conftest.py", TestSupport),
            ("tests/conftest.py", TestSupport),
            ("tests/__init__.py", TestSupport),
            // Was source to the context gatherer, a test to the scans.
            ("src/__mocks__/fs.js", TestSupport),
            ("jest.setup.js", TestSupport),
            ("src/setupTests.ts", TestSupport),
            ("internal/testutil/fake.go", TestSupport),
            ("src/api_mock.go", TestSupport),
            ("src/Button.stories.tsx", TestSupport),
            // Named like test helpers: support to the mock-leakage scan, not a
            // test to the other scans.
            ("src/test_helpers_extra.rs", TestSupport),
            // Test data: was auxiliary code to the context gatherer, a test
            // to the scans.
            ("pkg/testdata/input.go", TestData),
            ("tests/fixtures/sample.py", TestData),
            ("fixtures/projects/x/src/lib.rs", TestData),
            ("src/__snapshots__/a.test.ts.snap", TestData),
            // Test-runner configuration: config to the context gatherer, a
            // test to the scans.
            ("vitest.config.ts", TestConfig),
            ("jest.config.js", TestConfig),
            ("pytest.ini", TestConfig),
            ("noxfile.py", TestConfig),
            // Configuration, documentation.
            ("Cargo.toml", Config),
            ("setup.py", Config),
            ("tsconfig.build.json", Config),
            (".github/workflows/ci.yml", Config),
            ("README.md", Doc),
            ("docs/guide.html", Doc),
            ("docs/conf.py", Doc),
            // Never a place to fix: build output, bundles, copies.
            ("dist/index.js", Generated),
            ("dist-node/parse.js", Generated),
            ("build/node/luxon.js", Generated),
            ("lib/jquery.min.js", Generated),
            ("api/v1/api.pb.go", Generated),
            ("vendor/github.com/x/y.go", Vendored),
            ("third_party/zlib/inflate.c", Vendored),
            ("node_modules/jest/index.js", Vendored),
            ("benchmark/data.js", Benchmark),
            ("benches/speed.rs", Benchmark),
            ("examples/demo.rs", Example),
            ("build.rs", Tooling),
            ("scripts/release.py", Tooling),
            // Type declarations: Python / TypeScript, but no code runs.
            ("typings/ops.pyi", Stub),
            ("src/types.d.ts", Stub),
            ("assets/logo.png", Other),
            ("LICENSE", Other),
            // Separators and a leading `./` do not matter.
            ("src\\lib.rs", Source),
            ("./tests/test_x.py", Test),
        ] {
            assert_eq!(classify(path), want, "{path}");
        }
    }

    #[test]
    fn test_paths_are_tests_support_data_and_runner_config() {
        for p in [
            "tests/test_x.py",
            "conftest.py",
            "pkg/testdata/a.txt",
            "jest.config.js",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/lib.rs", "Cargo.toml", "benchmark/data.js", "README.md"] {
            assert!(!is_test_path(p), "{p}");
        }
    }
}
