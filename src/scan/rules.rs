//! The scan rules as data: every check the two scans report, with its
//! category, severity, scope and languages, and for the checks a regex
//! expresses, the patterns and messages. The structural checks (those a
//! regex cannot express) report by rule id through `Ctx::report`, which
//! takes category, severity and scope from here; `docs/scans.md` is
//! generated from this table (`report::scan_doc`).

use std::sync::LazyLock;

use regex::Regex;

use super::findings::Severity::{self, Critical, Error, Warning};
use crate::project::Lang;

/// Which scan reports a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// The AI-issue scan of the changed files (code validation).
    AiIssues,
    /// The test anti-pattern scan of the changed test files (test quality).
    AntiPatterns,
}

named_enum! {
    plain
    /// Where a rule reports.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Scope {
        /// Every file it reads, test code included.
        All = "all",
        /// Code outside tests: test paths and Rust `#[cfg(test)]` items are
        /// skipped.
        Source = "non-test",
        /// The test files handed to the anti-pattern scan.
        Tests = "tests",
    }
}

/// A regex rule, matched on the masked code of a file in `langs` (strings
/// and comments cannot match it) and reported at the match (after a
/// leading newline) with `message`, `$1`, `$2`… expanded from its groups.
#[derive(Debug)]
pub struct Pattern {
    pub langs: &'static [Lang],
    pub regex: &'static str,
    pub message: &'static str,
}

/// One check: a stable id (`Finding::check`) and what a finding of it is.
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub scan: Scan,
    /// The REFERENCE.md category, snake_case.
    pub category: &'static str,
    pub severity: Severity,
    pub scope: Scope,
    /// The languages the check reads.
    pub langs: &'static [Lang],
    /// Its regex forms; empty for a purely structural check.
    pub patterns: &'static [Pattern],
}

use Lang::{Go, Java, Js, Python, Rust, Ts};
const ALL: &[Lang] = &[Python, Js, Ts, Rust, Go, Java];
const PY: &[Lang] = &[Python];
const JS: &[Lang] = &[Js, Ts];
const TS: &[Lang] = &[Ts];
const GO: &[Lang] = &[Go];
const RS: &[Lang] = &[Rust];
const JAVA: &[Lang] = &[Java];
const NO_JAVA: &[Lang] = &[Python, Js, Ts, Rust, Go];
const NO_RUST: &[Lang] = &[Python, Js, Ts, Go];

const fn rule(
    scan: Scan,
    category: &'static str,
    id: &'static str,
    severity: Severity,
    scope: Scope,
    langs: &'static [Lang],
    patterns: &'static [Pattern],
) -> Rule {
    Rule {
        id,
        scan,
        category,
        severity,
        scope,
        langs,
        patterns,
    }
}

const fn pat(langs: &'static [Lang], regex: &'static str, message: &'static str) -> Pattern {
    Pattern {
        langs,
        regex,
        message,
    }
}

use Scan::{AiIssues as AI, AntiPatterns as AP};
use Scope::{All, Source, Tests};

/// Every check of both scans, in the order of REFERENCE.md.
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    rule(AI, "hallucinated_imports", "undeclared_package", Critical, All, NO_JAVA, &[]),
    rule(AI, "hallucinated_imports", "missing_subpath", Critical, All, NO_RUST, &[]),
    rule(AI, "hallucinated_imports", "near_miss_package", Critical, All, NO_JAVA, &[]),
    rule(AI, "placeholder_code", "placeholder_comment", Error, Source, ALL, &[]),
    rule(AI, "placeholder_code", "not_implemented_body", Error, Source, ALL, &[
        pat(RS, r"\b(todo|unimplemented)!\s*\(", "`$1!()` left in code"),
    ]),
    rule(AI, "placeholder_code", "ellipsis_statement", Error, Source, PY, &[]),
    rule(AI, "mock_leakage", "mock_in_source", Critical, Source, JS, &[
        pat(JS, r"(?:^|[^\w$.])(jest)\s*\.\s*(fn|mock|spyOn|doMock|createMockFromModule)\b", "test double `$1.$2` in production code"),
        pat(JS, r"(?:^|[^\w$.])(vi)\s*\.\s*(fn|mock|spyOn|doMock|stubGlobal|hoisted)\b", "test double `$1.$2` in production code"),
        pat(JS, r"(?:^|[^\w$.])(sinon)\s*\.\s*(\w+)\b", "test double `$1.$2` in production code"),
    ]),
    rule(AI, "mock_leakage", "mock_library_in_source", Critical, Source, ALL, &[
        pat(PY, r"(?m)^[ \t]*(?:from\s+unittest\.mock\s+import|from\s+unittest\s+import\s+(?:[\w, ]*\b)?mock\b|import\s+unittest\.mock|from\s+mock\s+import|import\s+mock\b|import\s+pytest_mock|from\s+pytest_mock\s+import)", "mocking library imported by production code"),
        pat(RS, r"\buse\s+mockall\b|\bmockall\s*::|#\[\s*automock\s*\]|\bmock!\s*\{", "mockall used outside `#[cfg(test)]`"),
        pat(JAVA, r"(?m)^[ \t]*import\s+(?:static\s+)?org\.mockito\b", "Mockito imported by production code"),
    ]),
    rule(AI, "mock_leakage", "test_utility_in_source", Error, Source, ALL, &[
        pat(RS, r"\buse\s+(assert_cmd|insta|proptest|pretty_assertions|assert_fs|predicates|rstest|serial_test|mockito|wiremock)\b", "test utility crate `$1` used outside tests"),
        pat(JAVA, r"(?m)^[ \t]*import\s+(?:static\s+)?(org\.junit|org\.assertj|org\.hamcrest)\b", "test library `$1` imported by production code"),
    ]),
    rule(AI, "type_abuse", "explicit_any", Warning, All, TS, &[]),
    rule(AI, "type_abuse", "double_cast", Error, All, TS, &[]),
    rule(AI, "type_abuse", "chained_assertion", Error, All, TS, &[]),
    rule(AI, "naming", "mixed_naming", Warning, All, ALL, &[]),
    rule(AI, "naming", "misspelled_identifier", Warning, All, ALL, &[]),
    rule(AI, "naming", "non_boolean_predicate", Error, All, ALL, &[]),
    rule(AI, "control_flow", "swallowed_error", Error, All, ALL, &[
        pat(&[Js, Ts, Java], r"\.catch\s*\(\s*(?:\(\s*[\w$]*\s*\)|[\w$]+)\s*=>\s*(?:\{\s*\}|undefined|null)\s*\)", "`.catch()` handler swallows the error"),
        pat(GO, r"\bif\s+err\s*!=\s*nil\s*\{\s*\}", "`if err != nil {}` ignores the error"),
        pat(GO, r"(?m)^[ \t]*[\w.]+\s*,\s*_\s*:?=\s*(?:os|ioutil|io|json|strconv|sql|http|filepath|bufio|yaml|xml|url)\.\w+\(", "error of an I/O call discarded with `_`"),
    ]),
    rule(AI, "control_flow", "unreachable_code", Warning, All, ALL, &[]),
    rule(AI, "control_flow", "infinite_loop", Warning, All, ALL, &[]),
    rule(AI, "resource_leaks", "listener_not_removed", Warning, All, &[Js, Ts, Go], &[]),
    rule(AI, "resource_leaks", "unclosed_resource", Error, All, &[Python, Js, Ts, Go, Java], &[]),
    rule(AI, "resource_leaks", "observable_no_unsubscribe", Warning, All, JS, &[]),
    rule(AI, "security", "hardcoded_secret", Critical, Source, ALL, &[]),
    rule(AI, "security", "sensitive_logging", Warning, Source, ALL, &[]),
    rule(AI, "security", "dynamic_code_execution", Critical, All, &[Python, Js, Ts], &[]),
    rule(AP, "empty_tests", "no_assertion", Critical, Tests, ALL, &[]),
    rule(AP, "empty_tests", "setup_only", Error, Tests, ALL, &[]),
    rule(AP, "empty_tests", "skipped_without_reason", Warning, Tests, ALL, &[]),
    rule(AP, "empty_tests", "commented_out_test", Warning, Tests, ALL, &[]),
    rule(AP, "empty_tests", "only_left_in", Critical, Tests, JS, &[
        pat(JS, r"\b((?:describe|it|test|context|suite|specify)\s*\.\s*only)\s*\(|(?:^|[^\w$.])(fit|fdescribe|ftest)\s*\(|\b(only\s*:\s*true)\b", "`$1$2$3` left in: every other test is silently skipped"),
    ]),
    rule(AP, "weak_assertions", "weak_assertion", Warning, Tests, ALL, &[]),
    rule(AP, "weak_assertions", "snapshot_only", Warning, Tests, &[Js, Ts, Rust, Python], &[]),
    rule(AP, "isolation", "shared_mutable_state", Error, Tests, ALL, &[]),
    rule(AP, "isolation", "missing_cleanup", Warning, Tests, ALL, &[]),
    rule(AP, "incomplete_coverage", "no_negative_path_test", Error, Tests, NO_JAVA, &[]),
    rule(AP, "incomplete_coverage", "no_edge_case_test", Error, Tests, NO_JAVA, &[]),
    rule(AP, "incomplete_coverage", "async_without_async_test", Warning, Tests, &[Python, Js, Ts, Rust], &[]),
    rule(AP, "ai_generated", "tautology", Critical, Tests, ALL, &[]),
    rule(AP, "ai_generated", "asserts_only_on_mocks", Error, Tests, ALL, &[]),
    rule(AP, "ai_generated", "copy_pasted_bodies", Warning, Tests, ALL, &[]),
    rule(AP, "ai_generated", "subject_not_used", Critical, Tests, NO_JAVA, &[]),
];

/// The rule with this id; an unknown id is a bug of the caller.
pub fn rule_of(id: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("scan rule `{id}` is not in RULES"))
}

/// The compiled regex of every pattern, with its rule.
pub(crate) static PATTERNS: LazyLock<Vec<(&'static Rule, &'static Pattern, Regex)>> =
    LazyLock::new(|| {
        RULES
            .iter()
            .flat_map(|r| r.patterns.iter().map(move |p| (r, p)))
            .map(|(r, p)| (r, p, crate::project::compile(p.regex)))
            .collect()
    });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_patterns_compile() {
        let mut ids = std::collections::BTreeSet::new();
        for r in RULES {
            assert!(ids.insert(r.id), "{} twice", r.id);
            for p in r.patterns {
                assert!(p.langs.iter().all(|l| r.langs.contains(l)), "{}", r.id);
            }
        }
        assert_eq!(
            PATTERNS.len(),
            RULES.iter().map(|r| r.patterns.len()).sum::<usize>()
        );
    }

    /// Every id a structural check reports (`report("id"`) is a rule, and
    /// every rule without a pattern is named by the code that reports it.
    #[test]
    fn reported_ids_are_rules() {
        let code = [
            include_str!("ai_issues.rs"),
            include_str!("antipatterns.rs"),
            include_str!("imports.rs"),
        ]
        .concat();
        let ids = Regex::new(r#"(?:report|emit)\(\s*"(\w+)""#).unwrap();
        let reported: Vec<&str> = ids
            .captures_iter(&code)
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        assert!(!reported.is_empty());
        for id in reported {
            rule_of(id);
        }
        for r in RULES.iter().filter(|r| r.patterns.is_empty()) {
            assert!(
                code.contains(&format!("\"{}\"", r.id)),
                "no code reports {}",
                r.id
            );
        }
    }
}
