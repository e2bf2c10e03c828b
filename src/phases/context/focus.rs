//! Keywords of a description, and matching them against path words and
//! code symbols to find the files a request is about.

use std::collections::BTreeSet;

use super::files::words;
use crate::project::{Lang, re};

/// Words that say nothing about *where* to test.
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "from",
    "into",
    "this",
    "that",
    "these",
    "those",
    "its",
    "are",
    "was",
    "were",
    "all",
    "any",
    "each",
    "every",
    "test",
    "tests",
    "testing",
    "tested",
    "unit",
    "units",
    "integration",
    "e2e",
    "coverage",
    "cover",
    "covers",
    "add",
    "adds",
    "write",
    "writes",
    "create",
    "generate",
    "make",
    "ensure",
    "check",
    "checks",
    "verify",
    "should",
    "must",
    "can",
    "will",
    "new",
    "code",
    "file",
    "files",
    "function",
    "functions",
    "module",
    "modules",
    "project",
    "please",
    "using",
    "use",
    "via",
    "our",
    "you",
    "also",
    "more",
    "some",
    "case",
    "cases",
    "edge",
    "suite",
    "suites",
    "fix",
    "fixes",
    "bug",
    "bugs",
    "not",
    "but",
    "have",
    "has",
    "how",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "about",
    "after",
    "before",
    "then",
    "than",
    "there",
    "their",
    "them",
    "they",
    "been",
    "being",
    "does",
    "doing",
    "done",
    "get",
    "gets",
    "set",
    "sets",
    "let",
    "out",
    "over",
    "under",
    "only",
    "own",
    "same",
    "such",
    "very",
    "just",
    "like",
    "need",
    "needs",
    "want",
    "wants",
    "http",
    "https",
    "www",
    "com",
    "org",
    "md",
    "todo",
    "etc",
    "e.g",
    "i.e",
    "one",
    "two",
    "way",
    "well",
    "good",
    "work",
    "works",
    "run",
    "runs",
    "pass",
    "passes",
    "fail",
    "fails",
    "failing",
    "behaviour",
    "behavior",
    "implementation",
    "implement",
    "existing",
    "current",
    "tasks",
    "task",
    "see",
];

/// Keywords of a description: lowercase words of three or more letters
/// that are not stop words, in order of first appearance, at most 12.
pub fn keywords(description: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for w in words(description) {
        if w.len() < 3 || w.chars().all(|c| c.is_ascii_digit()) || STOPWORDS.contains(&w.as_str()) {
            continue;
        }
        if seen.insert(w.clone()) {
            out.push(w);
            if out.len() == 12 {
                break;
            }
        }
    }
    out
}

/// Whether a word of a path or symbol matches a keyword: equal, or one is
/// a prefix of the other and the shorter has at least four letters
/// (`calc` ~ `calculator`, `auth` ~ `authentication`).
pub fn word_matches(keyword: &str, word: &str) -> bool {
    if keyword == word {
        return true;
    }
    let (short, long) = if keyword.len() <= word.len() {
        (keyword, word)
    } else {
        (word, keyword)
    };
    short.len() >= 4 && long.starts_with(short)
}

/// The first keyword that matches any word of `text`.
pub fn first_match<'k>(keywords: &'k [String], text: &str) -> Option<&'k str> {
    let ws = words(text);
    keywords
        .iter()
        .find(|k| ws.iter().any(|w| word_matches(k, w)))
        .map(String::as_str)
}

/// Public definitions of a source file, in order, at most `max`: what a
/// test for it should call. Rust `pub` items, Python top-level names
/// without a leading `_`, JS/TS functions, classes and exports, Go
/// exported names, Java public members.
pub fn public_symbols(family: Lang, text: &str, max: usize) -> Vec<String> {
    let found: Vec<String> = match family {
        Lang::Rust => re!(r"(?m)^\s*pub(?:\([^)]*\))?\s+(?:const\s+|async\s+|unsafe\s+|extern\s+\S+\s+)*(?:fn|struct|enum|trait|type|static|const)\s+([A-Za-z_]\w*)")
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .collect(),
        Lang::Python => re!(r"(?m)^(?:async\s+)?(?:def|class)\s+([A-Za-z]\w*)")
            .captures_iter(text)
            .map(|c| c[1].to_string())
            .collect(),
        Lang::Js => {
            let mut v: Vec<String> = re!(r"(?m)^\s*(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function\*?|class)\s+([A-Za-z_$][\w$]*)|^\s*export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)|^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=")
            .captures_iter(text)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)).map(|m| m.as_str().to_string()))
            .collect();
            // `module.exports = { a, b }` lists what the file offers.
            if let Some(c) = re!(r"module\.exports\s*=\s*\{([^}]*)\}").captures(text) {
                let listed: Vec<String> = c[1]
                    .split(',')
                    .filter_map(|p| p.split(':').next())
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty() && p.chars().all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '$'))
                    .collect();
                if !listed.is_empty() {
                    v = listed;
                }
            }
            v
        }
        Lang::Go => re!(r"(?m)^func\s+(?:\([^)]*\)\s*)?([A-Z]\w*)|^type\s+([A-Z]\w*)")
            .captures_iter(text)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| m.as_str().to_string()))
            .collect(),
        Lang::Java => re!(r"(?m)^\s*public\s+(?:static\s+|final\s+|abstract\s+|synchronized\s+)*(?:(?:class|interface|enum|record)\s+([A-Za-z_]\w*)|[\w<>\[\], ?]+\s+([a-z_]\w*)\s*\()")
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| m.as_str().to_string()))
        .collect(),
        _ => Vec::new(),
    };
    let mut seen = BTreeSet::new();
    found
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_drop_noise_and_keep_order() {
        assert_eq!(keywords("Test the calculator"), ["calculator"]);
        assert_eq!(
            keywords("Add unit tests for the AuthService login flow and token refresh (see #12)"),
            ["auth", "service", "login", "flow", "token", "refresh"]
        );
        assert!(keywords("test it").is_empty());
    }

    #[test]
    fn matching_words() {
        assert!(word_matches("calculator", "calc"));
        assert!(word_matches("auth", "authentication"));
        assert!(word_matches("api", "api"));
        assert!(!word_matches("api", "apis"));
        assert!(!word_matches("token", "tok"));
        let kws = vec!["calculator".to_string(), "auth".to_string()];
        assert_eq!(first_match(&kws, "calc/ops.py"), Some("calculator"));
        assert_eq!(first_match(&kws, "src/AuthService.ts"), Some("auth"));
        assert_eq!(first_match(&kws, "src/math.js"), None);
    }

    #[test]
    fn symbols_per_language() {
        let rust = "pub mod stats;\npub fn add(a: i64) {}\nfn private() {}\npub(crate) struct S;\n    pub async fn go() {}";
        assert_eq!(public_symbols(Lang::Rust, rust, 10), ["add", "S", "go"]);
        let py =
            "def add(a, b):\n    def inner(): pass\ndef _hidden(): pass\nclass Calc:\n    pass\n";
        assert_eq!(public_symbols(Lang::Python, py, 10), ["add", "Calc"]);
        let js =
            "function add(a, b) {}\nfunction max(v) {}\nmodule.exports = { add, max, clamp: c };";
        assert_eq!(public_symbols(Lang::Js, js, 10), ["add", "max", "clamp"]);
        let ts = "export function login() {}\nexport const refresh = () => 1;\nexport default class Auth {}";
        assert_eq!(
            public_symbols(Lang::Js, ts, 10),
            ["login", "refresh", "Auth"]
        );
        let go =
            "func Add(a int) int {}\nfunc (c *Calc) Div() {}\nfunc helper() {}\ntype Calc struct{}";
        assert_eq!(public_symbols(Lang::Go, go, 10), ["Add", "Div", "Calc"]);
        let java = "public class Calc {\n  public static int add(int a) {}\n  private int x() {}\n  public List<String> names() {}\n}";
        assert_eq!(
            public_symbols(Lang::Java, java, 10),
            ["Calc", "add", "names"]
        );
        assert_eq!(public_symbols(Lang::Python, py, 1), ["add"]);
    }
}
