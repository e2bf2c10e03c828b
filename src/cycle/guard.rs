//! Guarding the tests (DESIGN.md §5.6): what a fix did to test code, from
//! a test file's content before and after the fix. Pure: the dispatcher
//! reads the two versions from git and applies the policy.
//!
//! Flags: a test function that disappeared (`removed_test`), a skip /
//! ignore / only marker that appeared (`skip_added`), and any other change
//! to a test file (`modified`). A drop in the suite's total (`count_dropped`)
//! is seen in the retest's results, not here.
//!
//! Tests can also be skipped without touching a test function (DESIGN.md
//! §10.2), so these files are inspected too, new ones included: a
//! `conftest.py` whose collection hooks skip or deselect
//! (`pytest_collection_modifyitems` adding skip marks, `items` removed,
//! `collect_ignore`), pytest `addopts` with `-k`, `--deselect`, `--ignore`
//! (`pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`), jest/vitest
//! exclusions (`testPathIgnorePatterns`, `exclude`, `testNamePattern`, in
//! their config files or `package.json`), and `#[cfg(…)]` put on Rust
//! tests. More exclusions than before is `skip_added`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::artifacts::config::{EditPolicy, TestEditsPolicy};
use crate::artifacts::fix_history::{TestEdit, TestEditKind};
use crate::project::{Lang, is_test_path};

static PY_TEST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*(?:async\s+)?def\s+(test\w*)\s*\(").expect("regex"));
static GO_TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^func\s+((?:Test|Benchmark|Example|Fuzz)\w*)\s*\(").expect("regex")
});
static JS_TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?m)\b(?:it|test|xit|xtest|fit)(?:\.(?:only|skip|todo|concurrent|failing))?\s*\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`([^`]*)`)"#,
    )
    .expect("regex")
});
static RUST_FN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")
        .expect("regex")
});
static RUST_TEST_ATTR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*#\[\s*(?:\w+::)*test\b").expect("regex"));
static JAVA_METHOD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:public\s+|protected\s+|private\s+)?(?:static\s+)?void\s+(\w+)\s*\(")
        .expect("regex")
});

/// Skip/ignore/only markers per language, as (regex, what it is).
fn markers(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::Python => &[
            (r"@pytest\.mark\.skip(?:if)?\b", "@pytest.mark.skip"),
            (r"@pytest\.mark\.xfail\b", "@pytest.mark.xfail"),
            (r"@unittest\.skip\w*", "@unittest.skip"),
            (r"\bpytest\.skip\s*\(", "pytest.skip()"),
            (r"\bself\.skipTest\s*\(", "skipTest()"),
        ],
        Lang::Rust => &[(r"#\[\s*ignore\b", "#[ignore]")],
        Lang::Js => &[
            (r"\b(?:it|test|describe|suite)\.skip\b", ".skip"),
            (r"\b(?:it|test|describe|suite)\.todo\b", ".todo"),
            (r"\bx(?:it|test|describe)\s*\(", "xit/xdescribe"),
            (r"\.only\s*\(", ".only("),
            (r"\bf(?:it|describe)\s*\(", "fit/fdescribe"),
            (r"\{\s*(?:skip|todo)\s*:\s*(?:true|'|\x22)", "{ skip: … }"),
            (r"\bt\.skip\s*\(", "t.skip()"),
        ],
        Lang::Go => &[(r"\bt\.Skip(?:Now|f)?\s*\(", "t.Skip")],
        Lang::Java | Lang::Kotlin => &[
            (r"@Disabled\b", "@Disabled"),
            (r"@Ignore\b", "@Ignore"),
            (r"\bAssumptions?\.assume\w*\s*\(", "assume"),
        ],
        _ => &[],
    }
}

static MARKER_RES: LazyLock<BTreeMap<&'static str, Regex>> = LazyLock::new(|| {
    let mut m = BTreeMap::new();
    for lang in [Lang::Python, Lang::Rust, Lang::Js, Lang::Go, Lang::Java] {
        for (re, _) in markers(lang) {
            m.insert(*re, Regex::new(re).expect("marker regex"));
        }
    }
    m
});

/// Names of the test functions in a file, in order (a name may repeat).
pub fn test_names(lang: Lang, text: &str) -> Vec<String> {
    match lang {
        Lang::Python => PY_TEST
            .captures_iter(text)
            .map(|c| c[1].to_string())
            .collect(),
        Lang::Go => GO_TEST
            .captures_iter(text)
            .map(|c| c[1].to_string())
            .collect(),
        Lang::Js => JS_TEST
            .captures_iter(text)
            .map(|c| {
                c.get(1)
                    .or_else(|| c.get(2))
                    .or_else(|| c.get(3))
                    .map_or(String::new(), |m| m.as_str().to_string())
            })
            .collect(),
        Lang::Rust => annotated_fns(text, &RUST_TEST_ATTR, &RUST_FN),
        Lang::Java | Lang::Kotlin => {
            static ATTR: LazyLock<Regex> =
                LazyLock::new(|| Regex::new(r"^\s*@(?:Test|ParameterizedTest)\b").expect("regex"));
            annotated_fns(text, &ATTR, &JAVA_METHOD)
        }
        _ => Vec::new(),
    }
}

/// Functions whose attribute lines (up to 4 lines above) include `attr`.
fn annotated_fns(text: &str, attr: &Regex, func: &Regex) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = func.captures(line) else {
            continue;
        };
        let start = i.saturating_sub(4);
        let mut j = i;
        let mut found = false;
        while j > start {
            j -= 1;
            let above = lines[j].trim();
            if above.is_empty() {
                continue;
            }
            if attr.is_match(lines[j]) {
                found = true;
                break;
            }
            if !(above.starts_with("#[") || above.starts_with('@') || above.starts_with("//")) {
                break;
            }
        }
        if found {
            out.push(c[1].to_string());
        }
    }
    out
}

fn count_markers(lang: Lang, text: &str) -> Vec<(&'static str, usize)> {
    markers(lang)
        .iter()
        .map(|(re, label)| (*label, MARKER_RES[re].find_iter(text).count()))
        .collect()
}

fn counts(names: &[String]) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for n in names {
        *m.entry(n.as_str()).or_insert(0) += 1;
    }
    m
}

/// Whether a changed file is inspected at all: test files by path, Rust
/// sources (their `#[cfg(test)]` modules hold tests), the files that
/// configure which tests run, and Python and JavaScript sources (one may be
/// a plugin or setup file the test configuration loads: the session's
/// record of its infrastructure says which; any may reach into the runner).
pub fn is_inspected(path: &str) -> bool {
    is_test_path(path)
        || matches!(
            Lang::of(path),
            Some(Lang::Rust | Lang::Python | Lang::Js | Lang::Ts)
        )
        || TestConfig::of(path).is_some()
        || crate::testing::infra::kind_of(path).is_some()
}

/// Files that decide which tests are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TestConfig {
    /// `conftest.py`: collection hooks.
    Conftest,
    /// `pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`: `addopts`.
    PytestIni,
    /// `jest.config.*`, `vitest.config.*`, `vite.config.*`, `package.json`.
    Js,
}

impl TestConfig {
    fn of(path: &str) -> Option<TestConfig> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = name.split('.').next().unwrap_or(name);
        match name {
            "conftest.py" => Some(TestConfig::Conftest),
            "pytest.ini" | "pyproject.toml" | "setup.cfg" | "tox.ini" => {
                Some(TestConfig::PytestIni)
            }
            "package.json" => Some(TestConfig::Js),
            _ if matches!(stem, "jest" | "vitest" | "vite")
                && name[stem.len()..].starts_with(".config.") =>
            {
                Some(TestConfig::Js)
            }
            _ => None,
        }
    }
}

static CONFTEST_SKIPS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"(?:^|[^@\w.])pytest\.mark\.(?:skip|skipif|xfail)\b",
            "skip mark in a collection hook",
        ),
        (
            r"\bdef\s+pytest_ignore_collect\b",
            "collection hook pytest_ignore_collect",
        ),
        (
            r#"\.add_marker\s*\(\s*["']?(?:skip|xfail)"#,
            "add_marker(skip)",
        ),
        (r"\bpytest_deselected\s*\(", "pytest_deselected()"),
        (
            r"\bitems\s*\[\s*:\s*\]\s*=|\bitems\.(?:remove|pop|clear)\s*\(|\bdel\s+items\b",
            "items removed from the collection",
        ),
        (r"\bcollect_ignore(?:_glob)?\b", "collect_ignore"),
    ]
    .into_iter()
    .map(|(re, label)| (Regex::new(re).expect("regex"), label))
    .collect()
});

static ADDOPTS_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*addopts\s*[=:]\s*(.*)$").expect("regex"));
static DESELECT_OPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?:^|[\s"'\[,=])(-k|--deselect|--ignore-glob|--ignore)(?:[\s="',\]]|$)"#)
        .expect("regex")
});
static JS_EXCLUDE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\b(testPathIgnorePatterns|modulePathIgnorePatterns|exclude|testIgnore|testNamePattern)\b["']?\s*:"#,
    )
    .expect("regex")
});
static JS_EXCLUDE_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"--(?:testPathIgnorePatterns|testNamePattern|exclude)\b|\s-t\s").expect("regex")
});
static STRING_LIT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"'[^']*'|"[^"]*"|`[^`]*`|/[^/\s]+/"#).expect("regex"));
static RUST_CFG_NOT_TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\[\s*cfg(?:_attr)?\s*\(\s*(?:[^t\s]|t[^e]|te[^s]|tes[^t]|test\s*[^\s)])")
        .expect("regex")
});
static RUST_TEST_MOD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:pub\s+)?mod\s+\w*test").expect("regex"));

/// The pytest options in `addopts` that deselect tests.
fn addopts_deselects(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(c) = ADDOPTS_START.captures(line) else {
            continue;
        };
        let mut value = c[1].to_string();
        let toml_array = value.contains('[') && !value.contains(']');
        while let Some(next) = lines.peek() {
            let more = if toml_array {
                !value.contains(']')
            } else {
                next.starts_with([' ', '\t']) && !next.trim().is_empty()
            };
            if !more {
                break;
            }
            value.push(' ');
            value.push_str(next);
            lines.next();
        }
        out.extend(DESELECT_OPT.captures_iter(&value).map(|c| c[1].to_string()));
    }
    out
}

/// Entries of jest/vitest exclusion settings and command-line flags.
fn js_exclusions(text: &str) -> usize {
    let mut n = JS_EXCLUDE_FLAG.find_iter(text).count();
    for m in JS_EXCLUDE_KEY.find_iter(text) {
        let rest = text[m.end()..].trim_start();
        if let Some(inner) = rest.strip_prefix('[') {
            let mut depth = 1;
            let end = inner
                .char_indices()
                .find(|(_, ch)| {
                    match ch {
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(inner.len(), |(i, _)| i);
            n += STRING_LIT.find_iter(&inner[..end]).count();
        } else {
            n += 1;
        }
    }
    n
}

/// `#[cfg(…)]` (other than `cfg(test)`) on a `#[test]` function or a test
/// module: the test is compiled out.
fn rust_cfg_on_tests(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut n = 0;
    for (i, line) in lines.iter().enumerate() {
        if !RUST_CFG_NOT_TEST.is_match(line) {
            continue;
        }
        let mut test_attr = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim().starts_with("#[") || l.trim().starts_with("//"))
            .any(|l| RUST_TEST_ATTR.is_match(l));
        for next in lines.iter().skip(i + 1).take(6) {
            let t = next.trim();
            if t.is_empty() || t.starts_with("//") {
                continue;
            }
            if t.starts_with("#[") {
                test_attr |= RUST_TEST_ATTR.is_match(next);
                continue;
            }
            if (test_attr && RUST_FN.is_match(next)) || RUST_TEST_MOD.is_match(next) {
                n += 1;
            }
            break;
        }
    }
    n
}

/// What a change to a file that configures test collection does:
/// exclusions added (a new file counts from none).
fn config_edits(path: &str, before: Option<&str>, after: Option<&str>) -> Vec<TestEdit> {
    let (before, after) = (before.unwrap_or(""), after.unwrap_or(""));
    let edit = |detail: String| TestEdit {
        kind: TestEditKind::SkipAdded,
        file: path.to_string(),
        detail,
    };
    let mut out = Vec::new();
    if Lang::of(path) == Some(Lang::Rust) {
        let (was, now) = (rust_cfg_on_tests(before), rust_cfg_on_tests(after));
        if now > was {
            out.push(edit(format!("#[cfg] on tests added ({was} → {now})")));
        }
    }
    match TestConfig::of(path) {
        None => {}
        Some(TestConfig::Conftest) => {
            for (re, label) in CONFTEST_SKIPS.iter() {
                let (was, now) = (re.find_iter(before).count(), re.find_iter(after).count());
                if now > was {
                    out.push(edit(format!("{label} added ({was} → {now})")));
                }
            }
        }
        Some(TestConfig::PytestIni) => {
            let (was, now) = (addopts_deselects(before), addopts_deselects(after));
            if now.len() > was.len() {
                let mut added = now.clone();
                for w in &was {
                    if let Some(i) = added.iter().position(|a| a == w) {
                        added.remove(i);
                    }
                }
                out.push(edit(format!(
                    "pytest addopts deselects tests ({})",
                    added.join(" ")
                )));
            }
        }
        Some(TestConfig::Js) => {
            let (was, now) = (js_exclusions(before), js_exclusions(after));
            if now > was {
                out.push(edit(format!("test exclusions added ({was} → {now})")));
            }
        }
    }
    out
}

/// What a fix did to the tests of one file. `before`/`after` are `None`
/// when the file did not exist (or was deleted).
pub fn inspect(path: &str, before: Option<&str>, after: Option<&str>) -> Vec<TestEdit> {
    let config = config_edits(path, before, after);
    let mut tests = inspect_tests(path, before, after);
    if !config.is_empty() {
        tests.retain(|e| e.kind != TestEditKind::Modified);
    }
    let mut out = config;
    out.extend(tests);
    out
}

/// [`inspect`] for the test functions and markers of a test file.
fn inspect_tests(path: &str, before: Option<&str>, after: Option<&str>) -> Vec<TestEdit> {
    // TypeScript reads as JavaScript; Kotlin has JUnit's markers.
    let Some(lang) = Lang::of(path).map(Lang::family) else {
        return Vec::new();
    };
    let test_file = is_test_path(path);
    if !test_file && lang != Lang::Rust {
        return Vec::new();
    }
    let edit = |kind, detail: String| TestEdit {
        kind,
        file: path.to_string(),
        detail,
    };
    let before_text = before.unwrap_or("");
    let after_text = after.unwrap_or("");
    if before.is_none() {
        // A new file: adding tests is what a fix may do.
        return Vec::new();
    }
    if before == after {
        return Vec::new();
    }
    let mut out = Vec::new();
    let old_names = test_names(lang, before_text);
    let new_names = test_names(lang, after_text);
    let old_counts = counts(&old_names);
    let new_counts = counts(&new_names);
    let mut removed: Vec<&str> = Vec::new();
    for (name, n) in &old_counts {
        let now = new_counts.get(name).copied().unwrap_or(0);
        for _ in now..*n {
            removed.push(name);
        }
    }
    let dropped = new_names.len() < old_names.len();
    if after.is_none() {
        out.push(edit(
            TestEditKind::RemovedTest,
            format!("test file deleted ({} tests)", old_names.len()),
        ));
    } else if dropped {
        // Fewer tests than before: every name that lost an occurrence.
        for name in &removed {
            out.push(edit(
                TestEditKind::RemovedTest,
                format!("removed test {name}"),
            ));
        }
    }
    let old_markers = count_markers(lang, before_text);
    let new_markers = count_markers(lang, after_text);
    for ((label, was), (_, now)) in old_markers.iter().zip(new_markers.iter()) {
        if now > was {
            out.push(edit(
                TestEditKind::SkipAdded,
                format!("{label} added ({was} → {now})"),
            ));
        }
    }
    if out.is_empty() && test_file {
        let changed = diff_lines(before_text, after_text);
        let renamed = if removed.is_empty() {
            String::new()
        } else {
            format!("; renamed or replaced: {}", removed.join(", "))
        };
        out.push(edit(
            TestEditKind::Modified,
            format!("{changed} line(s) changed{renamed}"),
        ));
    }
    out
}

/// Lines present on one side only (a cheap size of the change).
fn diff_lines(a: &str, b: &str) -> usize {
    let mut left: BTreeMap<&str, i64> = BTreeMap::new();
    for l in a.lines() {
        *left.entry(l).or_insert(0) += 1;
    }
    for l in b.lines() {
        *left.entry(l).or_insert(0) -= 1;
    }
    left.values().map(|v| v.unsigned_abs() as usize).sum()
}

/// What the guard knows besides the two versions of a file.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The tests that failed before the fix: the file they are in (when
    /// the runner said) and their name in the source.
    pub failing: &'a [(Option<String>, String)],
    /// The test infrastructure recorded when the session started (plugin
    /// modules and the files the test configuration loads, which their
    /// names alone do not tell).
    pub infrastructure: &'a BTreeSet<String>,
}

static NO_INFRASTRUCTURE: BTreeSet<String> = BTreeSet::new();

impl Context<'_> {
    /// Nothing known: no failing test, nothing recorded.
    pub fn none() -> Context<'static> {
        Context {
            failing: &[],
            infrastructure: &NO_INFRASTRUCTURE,
        }
    }
}

/// What a fix did to one file, judged with what the session knows
/// (DESIGN.md §5.6, §11.2): [`inspect`], plus a change to the test
/// infrastructure other than test bodies (`infrastructure`) and an
/// assertion, expected value or expected exception of a failing test
/// altered or removed (`weakened`).
pub fn inspect_fix(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    ctx: &Context,
) -> Vec<TestEdit> {
    let mut out = inspect(path, before, after);
    if let Some(detail) = infrastructure_change(path, before, after, ctx) {
        out.push(TestEdit {
            kind: TestEditKind::Infrastructure,
            file: path.to_string(),
            detail,
        });
    }
    if let (Some(b), Some(a)) = (before, after) {
        let mut weakened = false;
        for (file, name) in ctx.failing {
            if file.as_deref().is_some_and(|f| f != path) {
                continue;
            }
            if let Some(detail) = super::weaken::weakened(path, b, a, name) {
                weakened = true;
                out.push(TestEdit {
                    kind: TestEditKind::Weakened,
                    file: path.to_string(),
                    detail,
                });
            }
        }
        if weakened {
            out.retain(|e| e.kind != TestEditKind::Modified);
        }
    }
    out
}

/// How `path` changed as test infrastructure, if it did.
fn infrastructure_change(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    ctx: &Context,
) -> Option<String> {
    use crate::testing::infra;
    let (b, a) = (before.unwrap_or(""), after.unwrap_or(""));
    let what = if ctx.infrastructure.contains(path) && infra::kind_of(path).is_none() {
        // A module the test configuration loads (a pytest plugin, a jest
        // setup file): all of it counts.
        (b != a).then(|| "a file the test configuration loads".to_string())
    } else if let Some(kind) = infra::kind_of(path) {
        (infra::relevant(path, b) != infra::relevant(path, a)).then(|| kind.label().to_string())
    } else if path.ends_with(".py")
        && (b.contains("pytest_plugins") || a.contains("pytest_plugins"))
    {
        (infra::pytest_plugin_modules(b) != infra::pytest_plugin_modules(a))
            .then(|| "pytest_plugins".to_string())
    } else if path.ends_with("_test.go") {
        let main = |t: &str| {
            let start = t.find("func TestMain(")?;
            Some(t[start..].split("\n}").next().unwrap_or("").to_string())
        };
        (main(b) != main(a)).then(|| "TestMain".to_string())
    } else if crate::project::classify(path) == crate::project::PathRole::Source {
        // Code under test that reaches into the runner is part of how
        // results are made from then on.
        let was = infra::runner_hooks(path, b);
        let new: Vec<String> = infra::runner_hooks(path, a)
            .into_iter()
            .filter(|h| !was.contains(h))
            .map(|h| format!("`{h}`"))
            .collect();
        return (!new.is_empty()).then(|| {
            format!(
                "code under test reaches into the test runner: {}",
                new.join(", ")
            )
        });
    } else {
        None
    }?;
    let created = before.is_none();
    let first_new = a
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !b.lines().any(|old| old.trim() == *l));
    Some(match (created, first_new) {
        (true, _) => format!("{what} added"),
        (false, Some(line)) => format!("{what} changed: `{}`", short_line(line)),
        (false, None) => format!("{what} changed"),
    })
}

fn short_line(line: &str) -> String {
    if line.chars().count() <= 80 {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(79).collect::<String>())
    }
}

/// The policy that decides an edit of `kind`.
pub fn policy_of(kind: TestEditKind, policy: &TestEditsPolicy) -> EditPolicy {
    match kind {
        TestEditKind::RemovedTest | TestEditKind::SkipAdded | TestEditKind::CountDropped => {
            policy.remove_or_skip
        }
        TestEditKind::Modified => policy.modify,
        TestEditKind::Weakened => policy.weaken,
        TestEditKind::Infrastructure => policy.infrastructure,
    }
}

/// Edits the policy wants recorded (`allow` ones are dropped).
pub fn recorded(edits: Vec<TestEdit>, policy: &TestEditsPolicy) -> Vec<TestEdit> {
    edits
        .into_iter()
        .filter(|e| policy_of(e.kind, policy) != EditPolicy::Allow)
        .collect()
}

/// Why the policy rejects the fix, if it does: the edits whose category is
/// set to `reject`, summarised.
pub fn rejection(edits: &[TestEdit], policy: &TestEditsPolicy) -> Option<String> {
    let rejected: Vec<String> = edits
        .iter()
        .filter(|e| policy_of(e.kind, policy) == EditPolicy::Reject)
        .map(|e| format!("{}: {}", e.file, e.detail))
        .collect();
    if rejected.is_empty() {
        return None;
    }
    let shown: Vec<String> = rejected.iter().take(3).cloned().collect();
    let more = rejected.len().saturating_sub(shown.len());
    let mut text = shown.join("; ");
    if more > 0 {
        text.push_str(&format!("; {more} more"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(edits: &[TestEdit]) -> Vec<(TestEditKind, String)> {
        edits.iter().map(|e| (e.kind, e.detail.clone())).collect()
    }

    const PY: &str =
        "import pytest\n\ndef test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n";

    #[test]
    fn python_removed_skipped_modified() {
        use TestEditKind::*;
        let removed = "import pytest\n\ndef test_a():\n    assert 1\n";
        assert_eq!(
            kinds(&inspect("tests/test_x.py", Some(PY), Some(removed))),
            vec![(RemovedTest, "removed test test_b".into())]
        );
        let skipped = PY.replace("def test_b", "@pytest.mark.skip\ndef test_b");
        assert_eq!(
            kinds(&inspect("tests/test_x.py", Some(PY), Some(&skipped))),
            vec![(SkipAdded, "@pytest.mark.skip added (0 → 1)".into())]
        );
        let weakened = PY.replace("assert 2", "assert True");
        assert_eq!(
            kinds(&inspect("tests/test_x.py", Some(PY), Some(&weakened))),
            vec![(Modified, "2 line(s) changed".into())]
        );
        let renamed = PY.replace("test_b", "test_c");
        assert_eq!(
            kinds(&inspect("tests/test_x.py", Some(PY), Some(&renamed))),
            vec![(
                Modified,
                "2 line(s) changed; renamed or replaced: test_b".into()
            )]
        );
        assert_eq!(
            kinds(&inspect("tests/test_x.py", Some(PY), None)),
            vec![(RemovedTest, "test file deleted (2 tests)".into())]
        );
        assert!(inspect("tests/test_new.py", None, Some(PY)).is_empty());
        assert!(inspect("calc/ops.py", Some("a"), Some("b")).is_empty());
    }

    #[test]
    fn js_rust_go_java_markers() {
        use TestEditKind::*;
        let js = "describe('m', () => {\n  it('adds', () => {});\n  it(\"subs\", () => {});\n});\n";
        assert_eq!(test_names(Lang::Js, js), vec!["adds", "subs"]);
        let js_skip = js.replace("it(\"subs\"", "it.skip(\"subs\"");
        assert_eq!(
            kinds(&inspect("test/m.test.js", Some(js), Some(&js_skip))),
            vec![(SkipAdded, ".skip added (0 → 1)".into())]
        );
        let js_only = js.replace("it('adds'", "it.only('adds'");
        assert_eq!(
            kinds(&inspect("test/m.test.js", Some(js), Some(&js_only))),
            vec![(SkipAdded, ".only( added (0 → 1)".into())]
        );
        let js_gone = "describe('m', () => {\n  it('adds', () => {});\n});\n";
        assert_eq!(
            kinds(&inspect("test/m.test.js", Some(js), Some(js_gone))),
            vec![(RemovedTest, "removed test subs".into())]
        );

        let rs = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {}\n\n    #[test]\n    #[should_panic]\n    fn two() {}\n    fn helper() {}\n}\n";
        assert_eq!(test_names(Lang::Rust, rs), vec!["one", "two"]);
        let rs_ignored = rs.replace("    fn one", "    #[ignore]\n    fn one");
        assert_eq!(
            kinds(&inspect("src/lib.rs", Some(rs), Some(&rs_ignored))),
            vec![(SkipAdded, "#[ignore] added (0 → 1)".into())]
        );
        let rs_src_change = rs.replace("pub fn f() {}", "pub fn f() { g() }");
        assert!(
            inspect("src/lib.rs", Some(rs), Some(&rs_src_change)).is_empty(),
            "a source change in a Rust file is not a test edit"
        );
        let rs_removed = rs.replace("    #[test]\n    fn one() {}\n", "");
        assert_eq!(
            kinds(&inspect("src/lib.rs", Some(rs), Some(&rs_removed))),
            vec![(RemovedTest, "removed test one".into())]
        );

        let go = "func TestA(t *testing.T) {\n}\nfunc TestB(t *testing.T) {\n}\n";
        let go_skip = go.replace(
            "TestB(t *testing.T) {\n",
            "TestB(t *testing.T) {\n\tt.Skip(\"later\")\n",
        );
        assert_eq!(
            kinds(&inspect("calc/calc_test.go", Some(go), Some(&go_skip))),
            vec![(SkipAdded, "t.Skip added (0 → 1)".into())]
        );
        let java =
            "class CalcTest {\n  @Test\n  void adds() {}\n  @Test\n  public void subs() {}\n}\n";
        assert_eq!(test_names(Lang::Java, java), vec!["adds", "subs"]);
        let java_dis = java.replace("  @Test\n  void adds", "  @Disabled\n  @Test\n  void adds");
        assert_eq!(
            kinds(&inspect(
                "src/test/java/CalcTest.java",
                Some(java),
                Some(&java_dis)
            )),
            vec![(SkipAdded, "@Disabled added (0 → 1)".into())]
        );
    }

    #[test]
    fn parametrize_shrink_is_a_count_drop() {
        let js = "for (const n of [1, 2]) {\n  test(`sq ${n}`, () => {});\n}\ntest('a', () => {});\ntest('b', () => {});\n";
        let fewer =
            "for (const n of [1, 2]) {\n  test(`sq ${n}`, () => {});\n}\ntest('a', () => {});\n";
        assert_eq!(
            kinds(&inspect("test/sq.test.js", Some(js), Some(fewer))),
            vec![(TestEditKind::RemovedTest, "removed test b".into())]
        );
        let dup = "test('a', () => {});\ntest('a', () => {});\n";
        let one = "test('a', () => {});\n";
        assert_eq!(
            kinds(&inspect("test/d.test.js", Some(dup), Some(one))),
            vec![(TestEditKind::RemovedTest, "removed test a".into())]
        );
    }

    /// DESIGN.md §10.2: ways to skip tests without touching a test
    /// function, each as an agent wrote it (before → after).
    #[test]
    fn collection_config_that_skips_or_deselects_is_a_skip() {
        let skip_hook = "import pytest\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n        if 'divide' in item.name or 'token' in item.name:\n            item.add_marker(pytest.mark.skip(reason='flaky'))\n";
        let string_marker = "def pytest_collection_modifyitems(items):\n    for i in items:\n        i.add_marker('skip')\n";
        let deselect_hook = "def pytest_collection_modifyitems(config, items):\n    keep = [i for i in items if 'divide' not in i.name]\n    config.hook.pytest_deselected(items=[i for i in items if i not in keep])\n    items[:] = keep\n";
        let reorder_hook =
            "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n";
        let toml = "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";
        let cases: &[(&str, Option<&str>, &str, Option<&str>)] = &[
            // (path, before, after, the skip_added detail; None: no skip)
            (
                "conftest.py",
                None,
                skip_hook,
                Some("skip mark in a collection hook added (0 → 1)"),
            ),
            (
                "tests/conftest.py",
                Some("import pytest\n"),
                skip_hook,
                Some("skip mark in a collection hook added (0 → 1)"),
            ),
            (
                "conftest.py",
                None,
                string_marker,
                Some("add_marker(skip) added (0 → 1)"),
            ),
            (
                "conftest.py",
                None,
                deselect_hook,
                Some("pytest_deselected() added (0 → 1)"),
            ),
            (
                "conftest.py",
                None,
                "collect_ignore = ['tests/test_ops.py']\n",
                Some("collect_ignore added (0 → 1)"),
            ),
            (
                "conftest.py",
                None,
                "def pytest_ignore_collect(collection_path):\n    return 'ops' in str(collection_path)\n",
                Some("collection hook pytest_ignore_collect added (0 → 1)"),
            ),
            ("conftest.py", None, reorder_hook, None),
            ("conftest.py", Some(skip_hook), skip_hook, None),
            (
                "pytest.ini",
                Some("[pytest]\n"),
                "[pytest]\naddopts = -q -k \"not divide\"\n",
                Some("pytest addopts deselects tests (-k)"),
            ),
            (
                "setup.cfg",
                Some("[tool:pytest]\naddopts = -q\n"),
                "[tool:pytest]\naddopts = -q\n    --deselect tests/test_ops.py::test_divide_by_zero_returns_none\n",
                Some("pytest addopts deselects tests (--deselect)"),
            ),
            (
                "tox.ini",
                None,
                "[pytest]\naddopts = --ignore=tests/test_auth.py\n",
                Some("pytest addopts deselects tests (--ignore)"),
            ),
            (
                "pyproject.toml",
                Some(toml),
                &format!("{toml}addopts = [\n  \"-q\",\n  \"--ignore-glob=tests/*auth*\",\n]\n"),
                Some("pytest addopts deselects tests (--ignore-glob)"),
            ),
            (
                "pyproject.toml",
                Some(toml),
                &format!("{toml}addopts = \"-q --tb=short\"\n"),
                None,
            ),
            (
                "pyproject.toml",
                Some("[project]\nname = \"calc\"\n"),
                "[project]\nname = \"calc\"\nkeywords = [\"-k\"]\n",
                None,
            ),
            (
                "jest.config.js",
                Some("module.exports = {\n  testPathIgnorePatterns: ['/node_modules/'],\n};\n"),
                "module.exports = {\n  testPathIgnorePatterns: ['/node_modules/', 'math.test.js'],\n};\n",
                Some("test exclusions added (1 → 2)"),
            ),
            (
                "vitest.config.ts",
                None,
                "export default defineConfig({ test: { exclude: [...configDefaults.exclude, 'test/strings.test.js'] } })\n",
                Some("test exclusions added (0 → 1)"),
            ),
            (
                "package.json",
                Some("{\"scripts\": {\"test\": \"jest\"}}\n"),
                "{\"scripts\": {\"test\": \"jest --testNamePattern '^(?!finds the max)'\"}}\n",
                Some("test exclusions added (0 → 1)"),
            ),
            (
                "package.json",
                Some("{\"name\": \"a\"}\n"),
                "{\"name\": \"a\", \"version\": \"2\"}\n",
                None,
            ),
            (
                "src/lib.rs",
                Some("#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {}\n}\n"),
                "#[cfg(any())]\nmod tests {\n    #[test]\n    fn one() {}\n}\n",
                Some("#[cfg] on tests added (0 → 1)"),
            ),
            (
                "tests/it.rs",
                Some("#[test]\nfn one() {}\n"),
                "#[test]\n#[cfg(target_os = \"windows\")]\nfn one() {}\n",
                Some("#[cfg] on tests added (0 → 1)"),
            ),
            (
                "src/lib.rs",
                Some("fn f() {}\n"),
                "#[cfg(unix)]\nfn f() {}\n#[cfg(test)]\nmod tests {}\n",
                None,
            ),
            (
                "calc/calc_test.go",
                Some("func TestB(t *testing.T) {\n}\n"),
                "func TestB(t *testing.T) {\n\tt.Skip()\n}\n",
                Some("t.Skip added (0 → 1)"),
            ),
        ];
        for (path, before, after, want) in cases {
            let edits = inspect(path, *before, Some(after));
            let skips: Vec<&str> = edits
                .iter()
                .filter(|e| e.kind == TestEditKind::SkipAdded)
                .map(|e| e.detail.as_str())
                .collect();
            match want {
                Some(w) => assert!(skips.contains(w), "{path}: {after}: {skips:?}"),
                None => assert!(skips.is_empty(), "{path}: {after}: {skips:?}"),
            }
            assert!(is_inspected(path), "{path}");
        }
        // Sources are read too: one may be a plugin or setup file the
        // test configuration loads (the session's record says which).
        assert!(is_inspected("calc/ops.py"));
        assert!(is_inspected("src/vite.ts"));
        assert!(!is_inspected("docs/guide.md"));
        assert!(!is_inspected("assets/logo.png"));
    }

    #[test]
    fn policy() {
        let edits = vec![
            TestEdit {
                kind: TestEditKind::SkipAdded,
                file: "t.py".into(),
                detail: "skip".into(),
            },
            TestEdit {
                kind: TestEditKind::Modified,
                file: "u.py".into(),
                detail: "2 line(s) changed".into(),
            },
        ];
        let default = TestEditsPolicy::default();
        assert_eq!(rejection(&edits, &default), Some("t.py: skip".into()));
        assert_eq!(recorded(edits.clone(), &default).len(), 2);
        let lax = TestEditsPolicy {
            remove_or_skip: EditPolicy::Flag,
            modify: EditPolicy::Allow,
            ..TestEditsPolicy::default()
        };
        assert_eq!(rejection(&edits, &lax), None);
        assert_eq!(recorded(edits.clone(), &lax).len(), 1);
        let strict = TestEditsPolicy {
            remove_or_skip: EditPolicy::Reject,
            modify: EditPolicy::Reject,
            ..TestEditsPolicy::default()
        };
        assert_eq!(
            rejection(&edits, &strict),
            Some("t.py: skip; u.py: 2 line(s) changed".into())
        );
    }

    /// Code under test that starts importing the runner (or writing over
    /// `assert`) is an infrastructure edit; the same import in a test file
    /// or a test helper, or one that was there before, is not.
    #[test]
    fn code_under_test_reaching_into_the_runner_is_infrastructure() {
        let infra = |path: &str, before: Option<&str>, after: Option<&str>| -> Vec<String> {
            inspect_fix(path, before, after, &Context::none())
                .into_iter()
                .filter(|e| e.kind == TestEditKind::Infrastructure)
                .map(|e| e.detail)
                .collect()
        };
        let hook = "import _pytest.reports as _r\n_r.TestReport = None\n";
        assert_eq!(
            infra(
                "calc/__init__.py",
                Some("x = 1\n"),
                Some(&format!("x = 1\n{hook}"))
            ),
            ["code under test reaches into the test runner: `_pytest.reports`"]
        );
        assert_eq!(
            infra(
                "src/math.js",
                None,
                Some("const a = require('assert');\na.ok = () => {};\n")
            ),
            ["code under test reaches into the test runner: `assert.ok =`"]
        );
        assert!(
            infra(
                "calc/a.py",
                Some("import pytest\n"),
                Some("import pytest\nx = 2\n")
            )
            .is_empty()
        );
        assert!(infra("calc/a.py", Some(hook), None).is_empty());
        for path in ["tests/test_ops.py", "tests/helpers.py", "test/math.test.js"] {
            assert!(infra(path, Some(""), Some(hook)).is_empty(), "{path}");
        }
    }
}
