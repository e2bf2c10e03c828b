//! What kind of failure each one is: a bug in the code (`code`, the
//! default), a wrong test (`test`, only with evidence), or the machine
//! (`environment`: nothing a code change fixes). Pure: decided from the
//! failure's text and a few facts about the project (its files and
//! manifests), which the caller reads once.
//!
//! The loop calls [`classify`] on any test results (whoever analysed them)
//! and pauses instead of calling the fix agent when the overall kind is
//! `environment`, with [`Classification::environment_fixes`] as what to do.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::artifacts::task::FailureKind;
use crate::artifacts::test_results::{Failure, TestResults};
use crate::scan::ai_issues::{
    Manifest, NODE_BUILTINS, PYTHON_STDLIB, load_manifest, npm_package, py_norm, python_importable,
};

use super::group::signature;
use crate::project::is_test_path;

/// What classification needs to know about the project.
#[derive(Debug, Clone, Default)]
pub struct ProjectFacts {
    /// Project files, relative, `/`-separated.
    pub files: Vec<String>,
    /// Declared dependencies and the project's own modules.
    pub manifest: Manifest,
}

impl ProjectFacts {
    /// Read the facts of the project at `root` (its file list and root
    /// manifests).
    pub fn read(root: &Path) -> ProjectFacts {
        let files = crate::project::list_files(root)
            .map(|(f, _)| f)
            .unwrap_or_default();
        ProjectFacts {
            files,
            manifest: load_manifest(root),
        }
    }

    /// A file or directory of the project at `rel` (`a/b` matches `a/b.py`,
    /// `a/b/__init__.py`, `src/a/b.py`…).
    fn has_module_path(&self, rel: &str) -> bool {
        let rel = rel.trim_matches('/');
        if rel.is_empty() {
            return false;
        }
        self.files.iter().any(|f| {
            let f = f.strip_prefix("src/").unwrap_or(f);
            f == rel
                || f.starts_with(&format!("{rel}/"))
                || f.rsplit_once('.').is_some_and(|(stem, _)| stem == rel)
        })
    }
}

/// The kind of one failure and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub kind: FailureKind,
    /// The evidence, in words.
    pub reason: String,
    /// What to change outside the code, for `environment`.
    pub fix: Option<String>,
}

impl Verdict {
    fn code() -> Verdict {
        Verdict {
            kind: FailureKind::Code,
            reason: "an ordinary failure of the code under test".into(),
            fix: None,
        }
    }

    fn env(reason: impl Into<String>, fix: impl Into<String>) -> Verdict {
        Verdict {
            kind: FailureKind::Environment,
            reason: reason.into(),
            fix: Some(fix.into()),
        }
    }

    fn test(reason: impl Into<String>) -> Verdict {
        Verdict {
            kind: FailureKind::Test,
            reason: reason.into(),
            fix: None,
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// Classify one failure.
pub fn classify_failure(f: &Failure, facts: &ProjectFacts) -> Verdict {
    static ASSERTION: OnceLock<Regex> = OnceLock::new();
    let text = format!("{}\n{}", f.error, f.message);
    if let Some(v) = no_tests(f) {
        return v;
    }
    // An assertion compared values: whatever the values say (a message
    // that reads "Permission denied"), the machine did not refuse.
    let assertion = re(
        &ASSERTION,
        r"(?i)^(?:\w+\.)*(?:AssertionError|AssertionFailedError|assert\b|assertion\b|expected\b|expect\(|Error: expect\()",
    )
    .is_match(f.error.trim());
    if !assertion {
        // The error line first: a `ZoneInfoNotFoundError` whose traceback
        // also mentions the optional `tzdata` module is about time zones.
        for text in [f.error.as_str(), text.as_str()] {
            if let Some(v) = missing_module(f, text, facts) {
                return v;
            }
            if let Some(v) = machine(text) {
                return v;
            }
        }
    }
    if let Some(v) = wrong_test(f, &text) {
        return v;
    }
    Verdict::code()
}

fn no_tests(f: &Failure) -> Option<Verdict> {
    let e = f.error.trim();
    (e == "no tests found" || e.starts_with("no tests ran")).then(|| {
        Verdict::env(
            format!("the run had no tests to fail or pass ({e})"),
            "write tests (or configure agents.test_gen to generate them), or check that the test command finds the test files",
        )
    })
}

/// A module or package that cannot be found: the environment when it is a
/// dependency (declared or not), the test when a test imports a project
/// module that does not exist, else the code.
fn missing_module(f: &Failure, text: &str, facts: &ProjectFacts) -> Option<Verdict> {
    static PY: OnceLock<Regex> = OnceLock::new();
    static JS: OnceLock<Regex> = OnceLock::new();
    static GO: OnceLock<Regex> = OnceLock::new();
    static RUST: OnceLock<Regex> = OnceLock::new();
    static TOOL: OnceLock<Regex> = OnceLock::new();
    // Where the import failed: the innermost location printed, else the
    // failure's own.
    let site = crate::testing::parse::locations(&f.message)
        .into_iter()
        .map(|l| l.file)
        .next_back()
        .or_else(|| f.file.clone())
        .or_else(|| {
            // The file part of the test id (`tests/test_x.py::test_a`).
            let file = f.test.split("::").next()?.split(" › ").next()?;
            file.contains('/').then(|| file.to_string())
        });
    let from_test = site.as_deref().is_some_and(is_test_path);
    if let Some(c) = re(&PY, r"No module named '?([\w.]+)'?").captures(text) {
        let module = &c[1];
        let top = module.split('.').next().unwrap_or(module);
        let path = module.replace('.', "/");
        if facts.has_module_path(top) || facts.manifest.python.local_modules.contains(&py_norm(top))
        {
            if facts.has_module_path(&path) {
                return None;
            }
            return Some(if from_test {
                Verdict::test(format!(
                    "the test imports `{module}`, which does not exist in the project"
                ))
            } else {
                Verdict {
                    kind: FailureKind::Code,
                    reason: format!(
                        "the project imports its own module `{module}`, which does not exist"
                    ),
                    fix: None,
                }
            });
        }
        if PYTHON_STDLIB.contains(&top) {
            return Some(Verdict::env(
                format!("the Python installation lacks its standard module `{top}`"),
                format!(
                    "use a Python build that includes `{top}` (often a missing system library when Python was compiled)"
                ),
            ));
        }
        let declared = python_importable(&facts.manifest)
            .is_some_and(|d| d.contains(&py_norm(top)) || d.contains(top));
        return Some(Verdict::env(
            format!("Python module `{top}` is not installed"),
            if declared {
                format!(
                    "install the project's declared dependencies (e.g. `pip install -e .`, or `pip install {top}`)"
                )
            } else {
                format!(
                    "install `{top}` and declare it in the project's manifest, or remove the import if it was not meant"
                )
            },
        ));
    }
    if let Some(c) = re(
        &JS,
        r#"Cannot find (?:module|package) '([^']+)'|ERR_MODULE_NOT_FOUND[^\n]*?'([^']+)'"#,
    )
    .captures(text)
    {
        let spec = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
        if spec.starts_with('.') || spec.starts_with('/') || spec.starts_with("file:") {
            return Some(if from_test {
                Verdict::test(format!("the test requires `{spec}`, which does not exist"))
            } else {
                Verdict {
                    kind: FailureKind::Code,
                    reason: format!("the code requires `{spec}`, which does not exist"),
                    fix: None,
                }
            });
        }
        let pkg = npm_package(spec);
        if NODE_BUILTINS.contains(&pkg.as_str()) {
            return None;
        }
        let declared = facts
            .manifest
            .npm
            .as_ref()
            .is_some_and(|n| n.packages.contains(&pkg));
        return Some(Verdict::env(
            format!("npm package `{pkg}` is not installed"),
            if declared {
                "install the declared dependencies (`npm install`)".to_string()
            } else {
                format!(
                    "`npm install {pkg}` and add it to package.json, or remove the import if it was not meant"
                )
            },
        ));
    }
    if let Some(c) = re(
        &GO,
        r#"no required module provides package ([\w./-]+)|cannot find package "([\w./-]+)"|cannot find module providing package ([\w./-]+)"#,
    )
    .captures(text)
    {
        let pkg = c.get(1).or(c.get(2)).or(c.get(3)).map_or("", |m| m.as_str());
        let own = facts
            .manifest
            .go
            .as_ref()
            .is_some_and(|g| !g.module.is_empty() && pkg.starts_with(&g.module));
        if own {
            return None;
        }
        return Some(Verdict::env(
            format!("Go package `{pkg}` is not available"),
            format!("`go get {pkg}` (or `go mod download` when go.mod already requires it)"),
        ));
    }
    if let Some(c) = re(&RUST, r"can't find crate for `(\w+)`").captures(text) {
        return Some(Verdict::env(
            format!("crate `{}` cannot be found", &c[1]),
            "install the toolchain component or target that provides it (rustup), or fetch dependencies (`cargo fetch`)",
        ));
    }
    if let Some(c) = re(
        &TOOL,
        r"(?m)(?:^|\s)([\w.+-]+): (?:command )?not found\s*$|exec: \x22([\w.+-]+)\x22: executable file not found",
    )
    .captures(text)
    {
        let tool = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
        return Some(Verdict::env(
            format!("`{tool}` is not installed or not on PATH"),
            format!("install `{tool}` or put it on PATH"),
        ));
    }
    None
}

/// The machine refuses: network, port, permissions, time zone / locale
/// data, memory, disk, services the tests need.
fn machine(text: &str) -> Option<Verdict> {
    static RULES: OnceLock<Vec<(Regex, &'static str, &'static str)>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (
                r"EADDRINUSE|[Aa]ddress already in use|Only one usage of each socket address|\[Errno (?:98|48)\]",
                "a port the tests listen on is already in use",
                "stop the process holding the port (or run the tests where it is free), then run again",
            ),
            (
                r"ZoneInfoNotFoundError|No time zone found with key|UnknownTimeZoneError|unknown time zone [\w/+-]+|Invalid time zone specified|[Tt]ime zone data|tzdata",
                "time zone data is missing on this machine",
                "install the IANA time zone database (the `tzdata` system package, or `pip install tzdata`)",
            ),
            (
                r"unsupported locale setting|Incorrect locale information|locale\.Error|setlocale: LC_\w+: cannot change locale|invalid locale",
                "a locale the tests need is not installed",
                "generate or install the locale (e.g. `locales`/`locale-gen`), or set LANG to one that exists",
            ),
            (
                r"ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|getaddrinfo|[Cc]onnection refused|Name or service not known|Temporary failure in name resolution|[Nn]etwork is unreachable|No route to host|Could not resolve host|nodename nor servname|ConnectionRefusedError|NewConnectionError|MaxRetryError|dial tcp [^\n]*: (?:connect|i/o timeout)",
                "the network or a service the tests connect to is unavailable",
                "start the service the tests need (or allow network access), then run again",
            ),
            (
                r"EACCES|EPERM\b|PermissionError|[Pp]ermission denied|Operation not permitted|AccessDeniedException",
                "the tests were refused access to a file, directory or port",
                "give the user running the tests the permission it lacks (file modes, ownership, privileged ports)",
            ),
            (
                r"MemoryError|JavaScript heap out of memory|[Oo]ut of memory|Cannot allocate memory|ENOMEM|OutOfMemoryError|memory allocation of \d+ bytes failed",
                "the machine ran out of memory",
                "give the tests more memory (or run fewer in parallel), then run again",
            ),
            (
                r"ENOSPC|No space left on device|[Dd]isk quota exceeded",
                "the disk is full",
                "free disk space, then run again",
            ),
            (
                r"Cannot connect to the Docker daemon|docker daemon|Executable doesn't exist at [^\n]*(?:chrom|firefox|webkit)|Failed to launch the browser",
                "a tool the tests drive (Docker, a browser) is not available",
                "install or start it (Docker daemon, `npx playwright install`), then run again",
            ),
        ]
        .into_iter()
        .map(|(p, reason, fix)| (Regex::new(p).expect("valid regex"), reason, fix))
        .collect()
    });
    rules
        .iter()
        .find(|(rx, _, _)| rx.is_match(text))
        .map(|(rx, reason, fix)| {
            let seen = rx
                .find(text)
                .map(|m| m.as_str().to_string())
                .unwrap_or_default();
            Verdict::env(format!("{reason} (`{seen}`)"), *fix)
        })
}

/// Evidence that the test itself is wrong.
fn wrong_test(f: &Failure, text: &str) -> Option<Verdict> {
    static FIXTURE: OnceLock<Regex> = OnceLock::new();
    static SYNTAX: OnceLock<Regex> = OnceLock::new();
    static UNDEFINED: OnceLock<Regex> = OnceLock::new();
    if let Some(c) = re(&FIXTURE, r"fixture '(\w+)' not found").captures(text) {
        return Some(Verdict::test(format!(
            "the test asks for fixture `{}`, which no conftest.py or plugin defines",
            &c[1]
        )));
    }
    let at_test = f.file.as_deref().filter(|p| is_test_path(p));
    if let Some(file) = at_test {
        if re(&SYNTAX, r"\b(?:SyntaxError|IndentationError|TabError)\b").is_match(&f.error) {
            return Some(Verdict::test(format!(
                "the test file {file} does not parse"
            )));
        }
        if let Some(c) = re(
            &UNDEFINED,
            r"NameError: name '(\w+)' is not defined|ReferenceError: (\w+) is not defined",
        )
        .captures(&f.error)
        {
            let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
            return Some(Verdict::test(format!(
                "the test uses `{name}`, which is defined nowhere it can see ({file})"
            )));
        }
    }
    None
}

/// Failures of one signature with their kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassifiedGroup {
    pub signature: String,
    pub kind: FailureKind,
    pub reason: String,
    pub fix: Option<String>,
    pub tests: Vec<String>,
}

/// Every failure group's kind, and the kind of the whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classification {
    /// `None` when nothing failed.
    pub kind: Option<FailureKind>,
    pub groups: Vec<ClassifiedGroup>,
}

impl Classification {
    /// What to fix in the environment, one line per distinct fix.
    pub fn environment_fixes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for g in self
            .groups
            .iter()
            .filter(|g| g.kind == FailureKind::Environment)
        {
            let line = format!(
                "{}: {} ({} test(s), e.g. {})",
                g.reason,
                g.fix.as_deref().unwrap_or("fix the environment"),
                g.tests.len(),
                g.tests.first().map_or("-", String::as_str)
            );
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }

    /// Whether a fix agent should be called at all: not when the
    /// environment must be fixed first, nor when nothing failed.
    pub fn for_fix_agent(&self) -> bool {
        matches!(self.kind, Some(FailureKind::Code | FailureKind::Test))
    }
}

/// The kind of several groups together: `environment` when any is (the
/// machine must be fixed before the results mean anything), `test` when
/// all are, else `code`; `None` for none.
pub fn overall(kinds: impl IntoIterator<Item = FailureKind>) -> Option<FailureKind> {
    let kinds: Vec<FailureKind> = kinds.into_iter().collect();
    if kinds.is_empty() {
        None
    } else if kinds.contains(&FailureKind::Environment) {
        Some(FailureKind::Environment)
    } else if kinds.iter().all(|k| *k == FailureKind::Test) {
        Some(FailureKind::Test)
    } else {
        Some(FailureKind::Code)
    }
}

/// Classify every failure of a run (flaky ones left out), grouped by
/// signature. A group takes the kind most of its failures have (ties: the
/// first failure's).
pub fn classify(results: &TestResults, facts: &ProjectFacts) -> Classification {
    let mut groups: Vec<(String, Vec<(&Failure, Verdict)>)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for f in results.failures.iter().filter(|f| !f.flaky) {
        let sig = signature(f);
        let v = classify_failure(f, facts);
        match index.get(&sig) {
            Some(&g) => groups[g].1.push((f, v)),
            None => {
                index.insert(sig.clone(), groups.len());
                groups.push((sig, vec![(f, v)]));
            }
        }
    }
    let groups: Vec<ClassifiedGroup> = groups
        .into_iter()
        .map(|(signature, members)| {
            let pick = majority(members.iter().map(|(_, v)| v));
            ClassifiedGroup {
                signature,
                kind: pick.kind,
                reason: pick.reason.clone(),
                fix: pick.fix.clone(),
                tests: members.iter().map(|(f, _)| f.test.clone()).collect(),
            }
        })
        .collect();
    Classification {
        kind: overall(groups.iter().map(|g| g.kind)),
        groups,
    }
}

/// The verdict most of `verdicts` share by kind (ties: the first one's).
pub fn majority<'v>(verdicts: impl Iterator<Item = &'v Verdict> + Clone) -> &'v Verdict {
    let all: Vec<&Verdict> = verdicts.collect();
    let count = |k: FailureKind| all.iter().filter(|v| v.kind == k).count();
    let best = all
        .iter()
        .map(|v| v.kind)
        .max_by_key(|k| {
            (
                count(*k),
                std::cmp::Reverse(all.iter().position(|v| v.kind == *k)),
            )
        })
        .unwrap_or(FailureKind::Code);
    all.iter()
        .find(|v| v.kind == best)
        .copied()
        .expect("a group has at least one failure")
}

/// [`classify`] for the project at `root` (reads its files and manifests).
pub fn classify_project(results: &TestResults, root: &Path) -> Classification {
    classify(results, &ProjectFacts::read(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::test_results::{Criticality, Layer};

    fn failure(error: &str, message: &str, file: Option<&str>) -> Failure {
        Failure {
            test: "tests/test_x.py::test_a".into(),
            file: file.map(str::to_string),
            line: Some(3),
            error: error.into(),
            message: message.into(),
            criticality: Criticality::Medium,
            test_type: Layer::Unit,
            flaky: false,
            extra: Default::default(),
        }
    }

    fn facts() -> ProjectFacts {
        let mut manifest = Manifest::default();
        manifest.python.declared = Some(["httpx".to_string()].into_iter().collect());
        manifest.python.local_modules = ["calc".to_string()].into_iter().collect();
        ProjectFacts {
            files: vec![
                "calc/__init__.py".into(),
                "calc/ops.py".into(),
                "tests/test_x.py".into(),
            ],
            manifest,
        }
    }

    fn kind(error: &str, message: &str, file: Option<&str>) -> FailureKind {
        classify_failure(&failure(error, message, file), &facts()).kind
    }

    #[test]
    fn table() {
        use FailureKind::*;
        for (error, message, file, want) in [
            (
                "AssertionError: assert 3 == 9",
                "",
                Some("tests/test_x.py"),
                Code,
            ),
            (
                "ModuleNotFoundError: No module named 'httpx'",
                "",
                Some("calc/ops.py"),
                Environment,
            ),
            (
                "ModuleNotFoundError: No module named 'yaml'",
                "",
                Some("calc/ops.py"),
                Environment,
            ),
            (
                "ModuleNotFoundError: No module named 'calc.units'",
                "",
                Some("tests/test_x.py"),
                Test,
            ),
            (
                "ModuleNotFoundError: No module named 'calc.units'",
                "",
                Some("calc/ops.py"),
                Code,
            ),
            (
                "ImportError: x",
                "E   ModuleNotFoundError: No module named 'calc.ops.x'",
                Some("calc/ops.py"),
                Code,
            ),
            (
                "Error: Cannot find module 'left-pad'",
                "",
                Some("test/a.test.js"),
                Environment,
            ),
            (
                "Error: Cannot find module '../src/nope'",
                "",
                Some("test/a.test.js"),
                Test,
            ),
            (
                "listen EADDRINUSE: address already in use 127.0.0.1:38123",
                "",
                None,
                Environment,
            ),
            (
                "OSError: [Errno 98] Address already in use",
                "",
                None,
                Environment,
            ),
            (
                "zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key Europe/Paris'",
                "",
                None,
                Environment,
            ),
            (
                "requests.exceptions.ConnectionError: HTTPSConnectionPool",
                "NewConnectionError",
                None,
                Environment,
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/etc/x'",
                "",
                None,
                Environment,
            ),
            (
                "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
                "",
                None,
                Environment,
            ),
            ("sh: 1: pytest: not found", "", None, Environment),
            ("no tests found", "", None, Environment),
            ("fixture 'db' not found", "", Some("tests/test_x.py"), Test),
            (
                "SyntaxError: invalid syntax",
                "",
                Some("tests/test_x.py"),
                Test,
            ),
            ("SyntaxError: invalid syntax", "", Some("calc/ops.py"), Code),
            (
                "NameError: name 'helper' is not defined",
                "",
                Some("tests/test_x.py"),
                Test,
            ),
            (
                "NameError: name 'helper' is not defined",
                "",
                Some("calc/ops.py"),
                Code,
            ),
            (
                "TypeError: f() takes 1 positional argument but 2 were given",
                "",
                Some("tests/test_x.py"),
                Code,
            ),
            (
                "AssertionError: assert 'ok' == 'Permission denied'",
                "",
                Some("tests/test_x.py"),
                Code,
            ),
            (
                "Expected values to be strictly equal: 'ECONNREFUSED' !== 'ok'",
                "",
                None,
                Code,
            ),
        ] {
            assert_eq!(kind(error, message, file), want, "{error}");
        }
    }

    #[test]
    fn declared_or_not_changes_the_advice() {
        let declared = classify_failure(
            &failure("ModuleNotFoundError: No module named 'httpx'", "", None),
            &facts(),
        );
        assert!(declared.fix.unwrap().contains("declared dependencies"));
        let undeclared = classify_failure(
            &failure("ModuleNotFoundError: No module named 'yaml'", "", None),
            &facts(),
        );
        assert!(undeclared.fix.unwrap().contains("declare it"));
    }

    #[test]
    fn overall_kind() {
        use FailureKind::*;
        assert_eq!(overall([]), None);
        assert_eq!(overall([Code, Environment]), Some(Environment));
        assert_eq!(overall([Test, Test]), Some(Test));
        assert_eq!(overall([Test, Code]), Some(Code));
    }
}
