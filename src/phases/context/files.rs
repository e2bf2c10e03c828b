//! Classifying each project file for context gathering by path alone
//! (language, source / test / config / documentation), so the expensive
//! part — reading contents — happens only where a path cannot answer the
//! question. The answers come from [`crate::project`]; this module groups
//! its roles the way the context package reports them.

use crate::project::{self, Lang, PathRole};

pub use crate::project::{Listing, file_name, list_files, parent_dir, stem, words};

/// What a file is to the context package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Code under test.
    Source,
    /// A test file (or test support such as `conftest.py`).
    Test,
    /// Manifests, tool, test-runner and CI configuration.
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
    /// The file's language.
    pub lang: Option<Lang>,
    /// The language family wfx maps tests for ([`Lang::is_mapped`]).
    pub family: Option<Lang>,
    pub role: PathRole,
    pub kind: Kind,
}

impl FileClass {
    /// Display name of the language (`Rust`, `TypeScript`, …), for code.
    pub fn language(&self) -> Option<&'static str> {
        self.lang.map(Lang::name)
    }
}

/// One path as the context package groups it ([`project::classify`] decides).
pub fn file_class(path: &str) -> FileClass {
    let role = project::classify(path);
    let lang = Lang::of(path);
    let kind = match role {
        PathRole::Doc => Kind::Documentation,
        PathRole::Config | PathRole::TestConfig => Kind::Config,
        _ if lang.is_none() => Kind::Other,
        PathRole::Source => Kind::Source,
        PathRole::Test | PathRole::TestSupport => Kind::Test,
        PathRole::Stub | PathRole::Other => Kind::Other,
        PathRole::TestData
        | PathRole::Example
        | PathRole::Benchmark
        | PathRole::Tooling
        | PathRole::Generated
        | PathRole::Vendored => Kind::AuxCode,
    };
    let family = lang
        .filter(|l| l.is_mapped() && kind != Kind::Other)
        .map(Lang::family);
    FileClass {
        lang,
        family,
        role,
        kind,
    }
}

fn dirs(path: &str) -> impl Iterator<Item = &str> {
    project::dirs(path)
}

/// Test layer of a test file by its path (REFERENCE.md "Test layers"):
/// `unit`, `integration` or `e2e`. Rust files under `tests/` are
/// integration tests; inline `#[cfg(test)]` modules are unit tests.
pub fn layer_of_test(path: &str, family: Option<Lang>) -> &'static str {
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
        || (family == Some(Lang::Java) && path.ends_with("IT.java"))
    {
        return "integration";
    }
    if family == Some(Lang::Rust) && ds.contains(&"tests") && !ds.contains(&"unit") {
        return "integration";
    }
    "unit"
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
            ("src/types.d.ts", Some("TypeScript"), Kind::Other),
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
            let c = file_class(path);
            assert_eq!((c.language(), c.kind), (lang, kind), "{path}");
        }
    }

    #[test]
    fn layers_by_path() {
        assert_eq!(
            layer_of_test("tests/integration.rs", Some(Lang::Rust)),
            "integration"
        );
        assert_eq!(
            layer_of_test("tests/test_ops.py", Some(Lang::Python)),
            "unit"
        );
        assert_eq!(
            layer_of_test("tests/integration/test_api.py", Some(Lang::Python)),
            "integration"
        );
        assert_eq!(layer_of_test("e2e/login.spec.ts", Some(Lang::Js)), "e2e");
        assert_eq!(layer_of_test("src/x.e2e.ts", Some(Lang::Js)), "e2e");
        assert_eq!(
            layer_of_test("src/test/java/a/ApiIT.java", Some(Lang::Java)),
            "integration"
        );
        assert_eq!(
            layer_of_test("src/test/java/a/ApiTest.java", Some(Lang::Java)),
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
