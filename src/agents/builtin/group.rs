//! Failure signatures and groups (DESIGN.md §5.3): the error line with
//! everything that varies between occurrences of one bug stripped.

use serde::Serialize;

use crate::artifacts::test_results::Failure;
use crate::project::re;

/// A message with everything that varies between occurrences of the same
/// error stripped: quoted values, paths, hex, numbers (DESIGN.md §5.3).
pub fn normalize_message(msg: &str) -> String {
    let s = re!(r"\x1b\[[0-9;?]*[ -/]*[@-~]").replace_all(msg, "");
    let s = re!(r#"'[^'\n]*'|"[^"\n]*"|`[^`\n]*`"#).replace_all(&s, "<q>");
    let s = re!(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8,}\b").replace_all(&s, "<hex>");
    let s = re!(r"(?:[A-Za-z]:)?[\w.~-]*[/\\][\w~-][\w./\\~-]*(?::\d+)*").replace_all(&s, "<path>");
    let s = re!(r"\b\d+(?:\.\d+)?").replace_all(&s, "<n>");
    re!(r"\s+").replace_all(s.trim(), " ").into_owned()
}

/// The signature failures are grouped by: the error line (its type and
/// message, with the expected/actual values the parsers keep), normalised.
pub fn signature(f: &Failure) -> String {
    let first = f
        .error
        .lines()
        .find(|l| !l.trim().is_empty())
        .or_else(|| f.message.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("");
    normalize_message(first)
}

/// Failures sharing one signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub signature: String,
    /// The first failure's error line, as printed.
    pub error: String,
    pub tests: Vec<String>,
}

/// Group failures by [`signature`], largest group first (ties: first seen).
pub fn group_failures<'f>(failures: impl IntoIterator<Item = &'f Failure>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for f in failures {
        let sig = signature(f);
        match index.get(&sig) {
            Some(&g) => groups[g].tests.push(f.test.clone()),
            None => {
                index.insert(sig.clone(), groups.len());
                groups.push(Group {
                    signature: sig,
                    error: f.error.lines().next().unwrap_or("").to_string(),
                    tests: vec![f.test.clone()],
                });
            }
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.tests.len()));
    groups
}

/// Size of the largest group ÷ number of failures (DESIGN.md §5.3); 0 when
/// nothing failed.
pub fn similarity(failures: &[Failure]) -> f64 {
    if failures.is_empty() {
        return 0.0;
    }
    let largest = group_failures(failures)
        .first()
        .map_or(0, |g| g.tests.len());
    largest as f64 / failures.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_table() {
        for (msg, want) in [
            (
                "AssertionError: assert False is True",
                "AssertionError: assert False is True",
            ),
            (
                "expected 3 to be 9 // Object.is equality",
                "expected <n> to be <n> // Object.is equality",
            ),
            ("KeyError: 'user_42'", "KeyError: <q>"),
            (
                "Error at /tmp/x/y.py:12 addr 0xdeadBEEF",
                "Error at <path> addr <hex>",
            ),
            ("assertion `left == right` failed", "assertion <q> failed"),
            ("\x1b[31mTimeout of 2000ms\x1b[0m", "Timeout of <n>ms"),
            (
                "ZeroDivisionError: / by zero",
                "ZeroDivisionError: / by zero",
            ),
            (
                "Expected values to be strictly equal: 'Hllo' !== 'Hello'",
                "Expected values to be strictly equal: <q> !== <q>",
            ),
        ] {
            assert_eq!(normalize_message(msg), want, "{msg}");
        }
    }
}
