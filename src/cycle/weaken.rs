//! Weakened tests (DESIGN.md §11.2): a fix that alters or removes an
//! assertion, an expected value or an expected exception of a test that
//! was failing has made the test agree with the code instead of the other
//! way round. Pure: the two versions of a test file and the names of its
//! failing tests in, the weakenings out.
//!
//! A test's *region* is its decorators or attributes (pytest's
//! `parametrize` data, Rust's `#[should_panic(expected = …)]`) and its
//! body. Its *checks* are the region's lines that assert, name an
//! expected value or exception, or are parametrize data. A check of the
//! version before that is missing from the version after (changed or
//! removed) is a weakening; so is a `return`, `try`/`except`/`catch` added
//! to the body, which can step around the checks. New checks are fine.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::project::Lang;

static PY_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bassert\b|\bself\.assert\w*|\bself\.fail\b|\bpytest\.(?:raises|approx|warns|fail|deprecated_call)\b|\b(?:expected?|want(?:ed)?|exp)\w*\s*=[^=]",
    )
    .expect("regex")
});
static JS_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bexpect\s*[.(]|\bassert\b|\.to[A-Z]\w*\s*\(|\.(?:rejects|resolves)\b|\bt\.(?:is|not|deepEqual|notDeepEqual|throws|throwsAsync|true|false|truthy|falsy|equal|ok|fail|snapshot)\b|\b(?:expected?|want(?:ed)?)\w*\s*=[^=]",
    )
    .expect("regex")
});
static RUST_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:debug_)?assert(?:_eq|_ne|_matches)?!|should_panic|\bexpected?\s*=|\blet\s+(?:mut\s+)?(?:expected?|want(?:ed)?)\w*\b",
    )
    .expect("regex")
});
static GO_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\b(?:assert|require)\.\w+\(|\b(?:want|expected?)\w*\b",
    )
    .expect("regex")
});
static JAVA_CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bassert\w*\s*\(|\bexpected\s*=|\bfail\s*\(|\bassertThat\b").expect("regex")
});
static ESCAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:return\b|try\b|except\b|catch\b|\}\s*catch\b|finally\b|defer\s+func)")
        .expect("regex")
});

fn is_check(lang: Lang, line: &str) -> bool {
    match lang {
        Lang::Python => PY_CHECK.is_match(line),
        Lang::Js => JS_CHECK.is_match(line),
        Lang::Rust => RUST_CHECK.is_match(line),
        Lang::Go => GO_CHECK.is_match(line),
        Lang::Java | Lang::Kotlin => JAVA_CHECK.is_match(line),
        _ => false,
    }
}

/// One test's region: the decorator lines and the body lines.
#[derive(Debug, Default, PartialEq)]
struct Region<'a> {
    decorators: Vec<&'a str>,
    body: Vec<&'a str>,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The region of the test `name` in `text`, if `text` defines it.
fn region<'a>(lang: Lang, text: &'a str, name: &str) -> Option<Region<'a>> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| defines(lang, l, name))?;
    let mut r = Region::default();
    // Decorators / attributes / annotations above, up to a blank line or
    // another definition.
    let base = indent(lines[start]);
    let mut i = start;
    // JavaScript and Go tests have no decorators.
    let decorated = matches!(lang, Lang::Python | Lang::Rust | Lang::Java | Lang::Kotlin);
    while decorated && i > 0 {
        let above = lines[i - 1];
        let t = above.trim();
        let decorator = t.starts_with('@') || t.starts_with("#[");
        // A decorator's arguments spread over lines (pytest's parametrize).
        let continuation = lang == Lang::Python
            && !t.is_empty()
            && (indent(above) > base || t.starts_with([')', ']', '}']))
            && r_has_decorator_above(&lines, i - 1, base);
        if t.is_empty() || !(decorator || continuation) {
            break;
        }
        r.decorators.push(above);
        i -= 1;
    }
    r.decorators.reverse();
    match lang {
        Lang::Python => {
            let mut j = start;
            // The signature may span lines; the body is what is indented
            // more than the `def`.
            while j < lines.len() && !lines[j].trim_end().ends_with(':') {
                j += 1;
            }
            j += 1;
            while j < lines.len() {
                let l = lines[j];
                if !l.trim().is_empty() && indent(l) <= base {
                    break;
                }
                r.body.push(l);
                j += 1;
            }
        }
        _ => {
            // Brackets balanced from the definition line on.
            let mut depth: i64 = 0;
            let mut opened = false;
            for l in &lines[start..] {
                r.body.push(l);
                for ch in strip_strings(l).chars() {
                    match ch {
                        '{' | '(' | '[' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' | ')' | ']' => depth -= 1,
                        _ => {}
                    }
                }
                if opened && depth <= 0 {
                    break;
                }
            }
        }
    }
    Some(r)
}

/// Whether a decorator line (`@…`) lies above line `i` within the same
/// decorator block (a parametrize argument spread over lines).
fn r_has_decorator_above(lines: &[&str], i: usize, base: usize) -> bool {
    lines[..=i]
        .iter()
        .rev()
        .take_while(|l| !l.trim().is_empty())
        .any(|l| l.trim().starts_with('@') && indent(l) == base)
}

/// A line with its string literals emptied, so brackets inside strings do
/// not count.
fn strip_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for ch in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if ch == '\\' {
                    escaped = true;
                } else if ch == q {
                    quote = None;
                    out.push(ch);
                }
            }
            None => {
                if matches!(ch, '"' | '\'' | '`') {
                    quote = Some(ch);
                }
                out.push(ch);
            }
        }
    }
    out
}

/// Whether `line` starts the definition of the test `name`.
fn defines(lang: Lang, line: &str, name: &str) -> bool {
    let t = line.trim_start();
    match lang {
        Lang::Python => {
            let t = t.strip_prefix("async ").unwrap_or(t);
            t.strip_prefix("def ")
                .and_then(|r| r.strip_prefix(name))
                .is_some_and(|r| r.trim_start().starts_with('('))
        }
        Lang::Js => {
            static CALL: LazyLock<Regex> = LazyLock::new(|| {
                Regex::new(r#"^(?:it|test)(?:\.\w+)*\s*\(\s*(['"`])"#).expect("regex")
            });
            CALL.captures(t).is_some_and(|c| {
                let q = &c[1];
                t[c.get(0).map_or(0, |m| m.end())..]
                    .strip_prefix(name)
                    .is_some_and(|r| r.starts_with(q))
            })
        }
        Lang::Rust | Lang::Go | Lang::Java | Lang::Kotlin => {
            let keyword = match lang {
                Lang::Rust => "fn ",
                Lang::Go => "func ",
                _ => "void ",
            };
            t.find(keyword).is_some_and(|at| {
                t[at + keyword.len()..]
                    .strip_prefix(name)
                    .is_some_and(|r| r.trim_start().starts_with(['(', '<']))
            })
        }
        _ => false,
    }
}

fn normal(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A region's checks (normalised, with how often each appears).
fn checks(lang: Lang, r: &Region) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let lines = r
        .decorators
        .iter()
        .copied()
        .filter(|l| lang == Lang::Python || is_check(lang, l))
        .chain(r.body.iter().copied().filter(|l| is_check(lang, l)));
    for l in lines {
        let n = normal(l);
        let comment = n.starts_with("//") || (lang == Lang::Python && n.starts_with('#'));
        if !n.is_empty() && !comment {
            *out.entry(n).or_insert(0) += 1;
        }
    }
    out
}

fn escapes(r: &Region) -> usize {
    r.body.iter().filter(|l| ESCAPE.is_match(l)).count()
}

/// How the test `name` was weakened between `before` and `after` (`None`:
/// it was not, or one of the versions does not define it — a removed test
/// is the guard's `removed_test`).
pub fn weakened(path: &str, before: &str, after: &str, name: &str) -> Option<String> {
    // TypeScript tests read like JavaScript ones.
    let lang = Lang::of(path)?.family();
    let old = region(lang, before, name)?;
    let new = region(lang, after, name)?;
    let (was, now) = (checks(lang, &old), checks(lang, &new));
    let mut lost: Vec<&str> = Vec::new();
    for (line, n) in &was {
        if now.get(line).copied().unwrap_or(0) < *n {
            lost.push(line);
        }
    }
    if let Some(first) = lost.first() {
        let more = if lost.len() > 1 {
            format!(" and {} more", lost.len() - 1)
        } else {
            String::new()
        };
        return Some(format!(
            "{name}: check changed or removed: `{}`{more}",
            cut(first, 100)
        ));
    }
    if escapes(&new) > escapes(&old) {
        return Some(format!(
            "{name}: a return, try or catch added around its checks"
        ));
    }
    None
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::weakened;

    const PY: &str = "import pytest\nfrom calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n@pytest.mark.parametrize(\n    \"text, expected\",\n    [(\"42\", 42), (\"  7 \", 7)],\n)\ndef test_parse(text, expected):\n    assert parse(text) == expected\n\n\ndef test_div():\n    with pytest.raises(ZeroDivisionError):\n        divide(1, 0)\n";

    #[test]
    fn python_weakenings_and_what_is_not_one() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            // The issue's case: the expected value rewritten.
            (
                "test_add",
                "== 5",
                Some("test_add: check changed or removed: `assert add(2, 3) == 5`"),
            ),
            // Parametrize data changed.
            (
                "test_parse",
                "(\"42\", 42)",
                Some("test_parse: check changed or removed: `[(\"42\", 42), (\" 7 \", 7)],`"),
            ),
            // The expected exception changed.
            (
                "test_div",
                "ZeroDivisionError",
                Some(
                    "test_div: check changed or removed: `with pytest.raises(ZeroDivisionError):`",
                ),
            ),
        ];
        let replaced = |from: &str| match from {
            "== 5" => PY.replace("== 5", "== -1"),
            "(\"42\", 42)" => PY.replace("(\"42\", 42)", "(\"42\", 41)"),
            _ => PY.replace("ZeroDivisionError", "Exception"),
        };
        for (name, from, want) in cases {
            assert_eq!(
                weakened("tests/test_x.py", PY, &replaced(from), name).as_deref(),
                *want
            );
        }
        // Removing the assertion line.
        let gone = PY.replace("    assert add(2, 3) == 5\n", "    add(2, 3)\n");
        assert!(weakened("tests/test_x.py", PY, &gone, "test_add").is_some());
        // An early return before the check.
        let early = PY.replace(
            "    assert add(2, 3) == 5\n",
            "    return\n    assert add(2, 3) == 5\n",
        );
        assert_eq!(
            weakened("tests/test_x.py", PY, &early, "test_add").as_deref(),
            Some("test_add: a return, try or catch added around its checks")
        );
        // Another test's change is not this test's weakening.
        assert_eq!(
            weakened("tests/test_x.py", PY, &replaced("== 5"), "test_parse"),
            None
        );
        // A new check, a comment, a setup line: not a weakening.
        let more = PY.replace(
            "    assert add(2, 3) == 5\n",
            "    # sums\n    x = 1\n    assert add(2, 3) == 5\n    assert add(0, 0) == 0\n",
        );
        assert_eq!(weakened("tests/test_x.py", PY, &more, "test_add"), None);
        // Whitespace only.
        let spaced = PY.replace("add(2, 3) == 5", "add(2, 3)  ==  5");
        assert_eq!(weakened("tests/test_x.py", PY, &spaced, "test_add"), None);
    }

    #[test]
    fn js_rust_go_weakenings() {
        let js = "describe('math', () => {\n  it('finds the max', () => {\n    expect(max([1, 3, 2])).toBe(3);\n  });\n  it('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n";
        let js_weak = js.replace(
            "toBe(3);\n  });\n  it('adds'",
            "toBe(2);\n  });\n  it('adds'",
        );
        assert!(weakened("test/math.test.js", js, &js_weak, "finds the max").is_some());
        assert_eq!(weakened("test/math.test.js", js, &js_weak, "adds"), None);
        let js_catch = js.replace(
            "    expect(max([1, 3, 2])).toBe(3);\n",
            "    try {\n    expect(max([1, 3, 2])).toBe(3);\n    } catch (e) {}\n",
        );
        assert!(weakened("test/math.test.js", js, &js_catch, "finds the max").is_some());

        let rs = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    #[should_panic(expected = \"divide by zero\")]\n    fn divides() {\n        divide(1, 0);\n    }\n\n    #[test]\n    fn mean_of_two() {\n        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));\n    }\n}\n";
        let rs_weak = rs.replace("divide by zero", "attempt");
        assert!(weakened("src/lib.rs", rs, &rs_weak, "divides").is_some());
        assert_eq!(weakened("src/lib.rs", rs, &rs_weak, "mean_of_two"), None);
        let rs_eq = rs.replace("Some(1.5)", "Some(1.0)");
        assert!(weakened("src/lib.rs", rs, &rs_eq, "mean_of_two").is_some());

        let go = "func TestParse(t *testing.T) {\n\twant := 42\n\tif got := Parse(\"42\"); got != want {\n\t\tt.Errorf(\"got %d\", got)\n\t}\n}\n";
        let go_weak = go.replace("want := 42", "want := 0");
        assert!(weakened("parse_test.go", go, &go_weak, "TestParse").is_some());
        let go_fixed_code = go.replace("Parse(\"42\")", "Parse(\"42\" )");
        // A changed call inside the `if` holds `want`: counted (conservative).
        assert!(weakened("parse_test.go", go, &go_fixed_code, "TestParse").is_some());
    }
}
