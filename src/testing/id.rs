//! Test identity (DESIGN.md §10.4): one id per test, unique within a run and
//! the same whether the test passes or fails, so that results of different
//! runs can be merged and compared by id.
//!
//! - libtest: `<target>::<name>`, the target being the test binary named on
//!   cargo's `Running` line (`a::check` for `check` in `tests/a.rs`), the
//!   crate for doctests (`rust_calc::src/lib.rs - divide (line 16)`).
//! - nextest: `<binary-id> <name>` as nextest prints it.
//! - JavaScript (node, jest, vitest): `file › suite › name`.
//! - pytest node ids, go `package/TestName`, Surefire `Class#method`.
//!
//! When a runner itself reports two cases under one name, both are kept:
//! the second becomes `name#2`, the third `name#3` ([`disambiguate`]).
//! Which of the two is `#2` depends on the order the runner printed them,
//! so no filter can pick one of them: a subset retest that names one falls
//! back to the full suite ([`is_duplicated`]).

use std::collections::{HashMap, HashSet};

/// Separator of a duplicate's number: `name#2`.
pub const DUPLICATE: char = '#';

/// A libtest id: `<target>::<name>`, or the bare name when the output named
/// no target.
pub fn libtest(target: Option<&str>, name: &str) -> String {
    match target {
        Some(t) if !t.is_empty() => format!("{t}::{name}"),
        _ => name.to_string(),
    }
}

/// Split a libtest id into its target and the name libtest knows
/// (`a::tests::x` → (`a`, `tests::x`)). A first segment that cannot be a
/// target name (a doctest's `src/lib.rs - …`) means the id has no target.
pub fn split_libtest(id: &str) -> (Option<&str>, &str) {
    match id.split_once("::") {
        Some((target, name))
            if !target.is_empty()
                && target
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-') =>
        {
            (Some(target), name)
        }
        _ => (None, id),
    }
}

/// The name a test has in its source file, from its id in any runner's
/// form: `test_b` of `tests/t.py::TestA::test_b[1-2]`, `adds two` of
/// `test/m.test.js › math › adds two`, `name` of `a::tests::name`,
/// `TestX` of `pkg/TestX/sub`, `m` of `Class#m`; a duplicate's `#2` and
/// libtest's ` - should panic` are not part of it.
pub fn source_name(id: &str) -> &str {
    let id = id.split(" - ").next().unwrap_or(id);
    let id = match id.rsplit_once(DUPLICATE) {
        Some((base, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => base,
        _ => id,
    };
    if let Some((_, last)) = id.rsplit_once(" › ") {
        return last;
    }
    if let Some((_, method)) = id.rsplit_once('#') {
        return method;
    }
    if id.contains("::") {
        let last = id.rsplit("::").next().unwrap_or(id);
        return last.split('[').next().unwrap_or(last);
    }
    // go: `package/TestName/subtest`.
    id.split('/')
        .find(|p| p.starts_with("Test") || p.starts_with("Example") || p.starts_with("Fuzz"))
        .unwrap_or(id)
}

/// Rename repeated ids in place, in order: the first keeps its id, the
/// second `id` becomes `id#2`, the third `id#3`. A generated name that is
/// itself taken gets the next free number. Returns how many were renamed.
pub fn disambiguate<'a>(ids: impl IntoIterator<Item = &'a mut String>) -> usize {
    let mut ids: Vec<&'a mut String> = ids.into_iter().collect();
    // Most runs have no duplicate: tell that without copying every id.
    let distinct: HashSet<&str> = ids.iter().map(|s| s.as_str()).collect();
    if distinct.len() == ids.len() {
        return 0;
    }
    drop(distinct);
    let mut taken: HashSet<String> = ids.iter().map(|s| s.to_string()).collect();
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut renamed = 0;
    for id in ids.iter_mut() {
        let count = seen.entry(id.to_string()).or_insert(0);
        *count += 1;
        if *count == 1 {
            continue;
        }
        let mut n = *count;
        let mut candidate = format!("{id}{DUPLICATE}{n}");
        while taken.contains(&candidate) {
            n += 1;
            candidate = format!("{id}{DUPLICATE}{n}");
        }
        *count = n;
        taken.insert(candidate.clone());
        **id = candidate;
        renamed += 1;
    }
    renamed
}

/// The id a duplicate was made from: `x#2` → `x`, when `x` is in `known`.
pub fn duplicate_of<'a>(id: &'a str, known: &HashSet<&str>) -> Option<&'a str> {
    let (base, n) = id.rsplit_once(DUPLICATE)?;
    (n.parse::<u32>().is_ok_and(|n| n >= 2) && known.contains(base)).then_some(base)
}

/// Whether `id` shares its name with another case of the same run (it is
/// `x` and `x#2` exists, or it is `x#2` and `x` exists): a filter by name
/// cannot tell them apart.
pub fn is_duplicated(id: &str, known: &HashSet<&str>) -> bool {
    known.contains(format!("{id}{DUPLICATE}2").as_str()) || duplicate_of(id, known).is_some()
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_as_in_the_source() {
        for (id, name) in [
            ("tests/t.py::TestA::test_b[1-2]", "test_b"),
            ("tests/t.py::test_c", "test_c"),
            ("test/m.test.js › math › adds two", "adds two"),
            ("calc::tests::divides", "divides"),
            ("calc::tests::panics - should panic", "panics"),
            ("github.com/x/y/TestParse/empty", "TestParse"),
            ("com.x.CalcTest#adds", "adds"),
            ("tests/t.py::test_c#2", "test_c"),
        ] {
            assert_eq!(super::source_name(id), name, "{id}");
        }
    }

    use super::*;

    #[test]
    fn libtest_ids_split_at_the_target() {
        assert_eq!(libtest(Some("a"), "check"), "a::check");
        assert_eq!(libtest(None, "tests::x"), "tests::x");
        for (id, want) in [
            ("a::check", (Some("a"), "check")),
            ("rust_calc::tests::x", (Some("rust_calc"), "tests::x")),
            ("my-test::x", (Some("my-test"), "x")),
            (
                "rust_calc::src/lib.rs - divide (line 16)",
                (Some("rust_calc"), "src/lib.rs - divide (line 16)"),
            ),
            (
                "src/lib.rs - a::b (line 3)",
                (None, "src/lib.rs - a::b (line 3)"),
            ),
            ("plain", (None, "plain")),
        ] {
            assert_eq!(split_libtest(id), want, "{id}");
        }
    }

    #[test]
    fn duplicates_get_numbers_in_order() {
        let mut ids: Vec<String> = ["x", "y", "x", "x", "x#2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // `x#2` is a real name here, so the second `x` becomes `x#3`.
        assert_eq!(disambiguate(ids.iter_mut()), 2);
        assert_eq!(ids, ["x", "y", "x#3", "x#4", "x#2"]);
        let set: HashSet<&str> = ids.iter().map(String::as_str).collect();
        assert_eq!(set.len(), ids.len(), "unique after disambiguation");

        let mut ids: Vec<String> = vec!["a".into(), "a".into(), "b".into()];
        disambiguate(ids.iter_mut());
        assert_eq!(ids, ["a", "a#2", "b"]);
        let known: HashSet<&str> = ids.iter().map(String::as_str).collect();
        assert!(is_duplicated("a", &known));
        assert!(is_duplicated("a#2", &known));
        assert!(!is_duplicated("b", &known));
        assert_eq!(duplicate_of("a#2", &known), Some("a"));
        // A name that merely ends in `#2` is not a duplicate.
        let known: HashSet<&str> = ["handles issue #2", "calc.T#m"].into();
        assert!(!is_duplicated("handles issue #2", &known));
        assert!(!is_duplicated("calc.T#m", &known));
    }
}
