//! Reading the project's source for the built-in analyzer: which files
//! exist, which are tests, where a function starts and ends, where a name
//! is defined and which tests import a file. Heuristics by design: every
//! answer is a hint for a person or a fix agent, never a verdict.

use std::collections::BTreeMap;
use std::path::{Component, Path};
use std::sync::OnceLock;

use regex::Regex;

/// Files bigger than this are not read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many files are indexed.
const MAX_FILES: usize = 20_000;
/// Source text kept in memory across lookups, at most; beyond it files are
/// read again when needed.
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Directories never indexed (build output, dependencies, tooling state).
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".workflow",
    "target",
    "node_modules",
    ".venv",
    "venv",
    "env",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "dist",
    "build",
    ".next",
    ".nuxt",
    "coverage",
    ".gradle",
    ".idea",
    ".vscode",
    "vendor",
];

/// Source language, from the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Rust,
    Js,
    Go,
    Java,
    Other,
}

impl Lang {
    pub fn of(path: &str) -> Lang {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Lang::Js,
            "go" => Lang::Go,
            "java" => Lang::Java,
            _ => Lang::Other,
        }
    }
}

/// Whether a project-relative path is test code by its name or place
/// (REFERENCE.md test globs).
pub fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    let name = parts.last().copied().unwrap_or("");
    let dirs = &parts[..parts.len().saturating_sub(1)];
    if dirs.iter().any(|d| {
        matches!(
            *d,
            "test" | "tests" | "__tests__" | "spec" | "specs" | "e2e" | "cypress" | "playwright"
        )
    }) {
        return true;
    }
    let file_stem = path
        .rsplit('/')
        .next()
        .unwrap_or("")
        .split('.')
        .next()
        .unwrap_or("");
    name.starts_with("test_") && name.ends_with(".py")
        || name.ends_with("_test.py")
        || name == "conftest.py"
        || name.ends_with("_test.go")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains(".e2e.")
        || (name.ends_with(".java") || name.ends_with(".kt"))
            && (file_stem.ends_with("Test")
                || file_stem.ends_with("Tests")
                || file_stem.ends_with("IT"))
}

/// Markers of paths outside the project: standard libraries, installed
/// packages and runtimes.
pub fn is_foreign_path(path: &str) -> bool {
    const MARKERS: &[&str] = &[
        "site-packages",
        "dist-packages",
        "node_modules",
        "/lib/python",
        "lib/python3",
        "lib/python2",
        "/rustc/",
        ".cargo/registry",
        ".cargo/git",
        ".rustup/",
        "/usr/lib/",
        "/usr/local/lib/",
        "/usr/local/go/",
        "/usr/share/",
        "go/pkg/mod/",
        ".m2/repository",
        "<frozen",
        "<string>",
        "<anonymous>",
    ];
    path.starts_with("node:")
        || path.starts_with("internal/")
        || MARKERS.iter().any(|m| path.contains(m))
}

/// The project's files, relative to the root, found once per analysis.
pub struct Project {
    pub root: std::path::PathBuf,
    files: Vec<String>,
    cache: std::cell::RefCell<BTreeMap<String, Option<std::rc::Rc<Vec<String>>>>>,
    cached_bytes: std::cell::Cell<usize>,
}

impl Project {
    pub fn scan(root: &Path) -> Project {
        let mut files = Vec::new();
        let walker = walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                e.depth() == 0
                    || !(e.file_type().is_dir()
                        && e.file_name()
                            .to_str()
                            .is_some_and(|n| SKIP_DIRS.contains(&n)))
            });
        for entry in walker.filter_map(|e| e.ok()) {
            if files.len() >= MAX_FILES {
                break;
            }
            if entry.file_type().is_file()
                && let Ok(rel) = entry.path().strip_prefix(root)
                && let Some(s) = rel.to_str()
            {
                files.push(s.replace('\\', "/"));
            }
        }
        files.sort();
        Project {
            root: root.to_path_buf(),
            files,
            cache: Default::default(),
            cached_bytes: Default::default(),
        }
    }

    pub fn files(&self) -> &[String] {
        &self.files
    }

    pub fn contains(&self, rel: &str) -> bool {
        self.files.binary_search_by(|f| f.as_str().cmp(rel)).is_ok()
    }

    /// The file's lines (cached); `None` when unreadable or too big.
    pub fn lines(&self, rel: &str) -> Option<std::rc::Rc<Vec<String>>> {
        if let Some(hit) = self.cache.borrow().get(rel) {
            return hit.clone();
        }
        let path = self.root.join(rel);
        let read = path
            .metadata()
            .ok()
            .filter(|m| m.len() <= MAX_FILE_BYTES)
            .and_then(|_| std::fs::read(&path).ok())
            .map(|b| {
                std::rc::Rc::new(
                    String::from_utf8_lossy(&b)
                        .lines()
                        .map(str::to_string)
                        .collect::<Vec<_>>(),
                )
            });
        let size = read
            .as_ref()
            .map_or(0, |l| l.iter().map(|s| s.len() + 1).sum::<usize>());
        if self.cached_bytes.get() + size <= CACHE_BYTES {
            self.cached_bytes.set(self.cached_bytes.get() + size);
            self.cache
                .borrow_mut()
                .insert(rel.to_string(), read.clone());
        }
        read
    }

    /// Map a path as printed by a tool to a project file. `hint` is a
    /// directory-ish suffix that disambiguates bare names (a Go package
    /// path, a Java package directory).
    pub fn resolve(&self, printed: &str, hint: Option<&str>) -> Option<String> {
        let mut p = printed.trim().trim_start_matches("file://").to_string();
        if is_foreign_path(&p) {
            return None;
        }
        let root_str = self.root.to_string_lossy();
        if let Some(rest) = p.strip_prefix(root_str.as_ref()) {
            p = rest.trim_start_matches('/').to_string();
        }
        while let Some(rest) = p.strip_prefix("./") {
            p = rest.to_string();
        }
        if p.is_empty() {
            return None;
        }
        let candidate = Path::new(&p);
        if candidate
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return None;
        }
        if !candidate.is_absolute() && self.contains(&p) {
            return Some(p);
        }
        if candidate.is_absolute() {
            // Printed on another machine or from another checkout: the
            // longest suffix that names a project file.
            let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
            for i in 0..parts.len() {
                let suffix = parts[i..].join("/");
                if parts.len() - i >= 2 && self.contains(&suffix) {
                    return Some(suffix);
                }
            }
            return None;
        }
        // A bare or partial name (Go prints `calc_test.go`, Java `Calc.java`).
        let tail = format!("/{p}");
        let mut hits: Vec<&String> = self.files.iter().filter(|f| f.ends_with(&tail)).collect();
        if hits.len() > 1
            && let Some(h) = hint
        {
            let preferred: Vec<&String> = hits
                .iter()
                .copied()
                .filter(|f| {
                    let dir = f.rsplit_once('/').map_or("", |(d, _)| d);
                    !dir.is_empty()
                        && (h.ends_with(dir)
                            || dir.ends_with(h)
                            || h.ends_with(&format!("/{}", dir.rsplit('/').next().unwrap_or(dir))))
                })
                .collect();
            if !preferred.is_empty() {
                hits = preferred;
            }
        }
        hits.first().map(|s| s.to_string())
    }
}

/// A function's name and line span (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FnSpan {
    pub name: String,
    pub start: u32,
    pub end: u32,
    /// A test function (by attribute, annotation or name).
    pub is_test: bool,
}

impl FnSpan {
    /// `start-end`, or just `start` for a one-line function.
    pub fn lines(&self) -> String {
        if self.end > self.start {
            format!("{}-{}", self.start, self.end)
        } else {
            self.start.to_string()
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

const KEYWORDS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "function",
    "new",
    "else",
    "match",
    "loop",
    "fn",
    "def",
    "class",
    "await",
    "async",
    "typeof",
    "sizeof",
    "super",
    "this",
    "self",
    "elif",
    "with",
    "assert",
    "print",
    "len",
    "range",
    "isinstance",
    "synchronized",
    "do",
    "try",
];

/// The name defined on this line, if it starts a function.
fn definition_on(line: &str, lang: Lang) -> Option<String> {
    static PY: OnceLock<Regex> = OnceLock::new();
    static RS: OnceLock<Regex> = OnceLock::new();
    static JS_FN: OnceLock<Regex> = OnceLock::new();
    static JS_VAR: OnceLock<Regex> = OnceLock::new();
    static JS_EXPORTS: OnceLock<Regex> = OnceLock::new();
    static JS_METHOD: OnceLock<Regex> = OnceLock::new();
    static GO: OnceLock<Regex> = OnceLock::new();
    static JAVA: OnceLock<Regex> = OnceLock::new();
    let caps = match lang {
        Lang::Python => re(&PY, r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(").captures(line),
        Lang::Rust => re(
            &RS,
            r#"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)"#,
        )
        .captures(line),
        Lang::Js => re(
            &JS_FN,
            r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(",
        )
        .captures(line)
        .or_else(|| {
            re(
                &JS_VAR,
                r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
            )
            .captures(line)
        })
        .or_else(|| {
            re(
                &JS_EXPORTS,
                r"^\s*(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)",
            )
            .captures(line)
        })
        .or_else(|| {
            re(
                &JS_METHOD,
                r"^\s*(?:(?:public|private|protected|static|async|get|set|readonly)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$",
            )
            .captures(line)
        }),
        Lang::Go => re(&GO, r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*[\[(]").captures(line),
        Lang::Java => re(
            &JAVA,
            r"^\s*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*(?:<[^>]+>\s+)?[\w<>\[\]?,.]+\s+([A-Za-z_]\w*)\s*\([^;]*$",
        )
        .captures(line),
        Lang::Other => None,
    }?;
    let name = caps.get(1)?.as_str().to_string();
    (!KEYWORDS.contains(&name.as_str())).then_some(name)
}

/// Whether the function starting at `start` (0-based) is a test.
fn is_test_fn(lines: &[String], start: usize, name: &str, lang: Lang) -> bool {
    let attrs = lines[..start]
        .iter()
        .rev()
        .take_while(|l| {
            let t = l.trim();
            t.starts_with("#[") || t.starts_with('@') || t.starts_with("///") || t.starts_with("//")
        })
        .map(|l| l.trim().to_string())
        .collect::<Vec<_>>();
    match lang {
        Lang::Rust => attrs.iter().any(|a| {
            a.starts_with("#[test")
                || a.starts_with("#[tokio::test")
                || a.starts_with("#[rstest")
                || a.contains("::test]")
        }),
        Lang::Python => name.starts_with("test"),
        Lang::Go => {
            name.starts_with("Test") || name.starts_with("Benchmark") || name.starts_with("Fuzz")
        }
        Lang::Java => attrs.iter().any(|a| {
            a.starts_with("@Test")
                || a.starts_with("@ParameterizedTest")
                || a.starts_with("@RepeatedTest")
        }),
        Lang::Js | Lang::Other => false,
    }
}

/// Remove string literals and line comments so braces inside them do not count.
fn code_only(line: &str) -> String {
    static STR: OnceLock<Regex> = OnceLock::new();
    let s = re(
        &STR,
        r#""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])'|`(?:\\.|[^`\\])*`"#,
    )
    .replace_all(line, "\"\"");
    match s.find("//") {
        Some(i) => s[..i].to_string(),
        None => s.into_owned(),
    }
}

/// Last line (0-based) of the function that starts at `start`.
fn span_end(lines: &[String], start: usize, lang: Lang) -> usize {
    if lang == Lang::Python {
        let indent = |l: &str| l.len() - l.trim_start().len();
        let base = indent(&lines[start]);
        let mut end = start;
        // The signature may span lines until the one ending with ':'.
        let mut i = start + 1;
        while i < lines.len() {
            let l = &lines[i];
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                i += 1;
                continue;
            }
            if indent(l) <= base && !l.trim_start().starts_with(')') {
                break;
            }
            end = i;
            i += 1;
        }
        return end;
    }
    let mut depth: i64 = 0;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(start).take(2000) {
        let code = code_only(line);
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return i;
        }
        if !opened && (code.trim_end().ends_with(';') || i > start + 3) {
            return start;
        }
    }
    start
}

/// The innermost function whose span holds `line` (1-based).
pub fn enclosing_function(lines: &[String], line: u32, lang: Lang) -> Option<FnSpan> {
    let target = (line as usize).checked_sub(1)?;
    if target >= lines.len() {
        return None;
    }
    for start in (0..=target).rev() {
        if let Some(name) = definition_on(&lines[start], lang) {
            let end = span_end(lines, start, lang);
            if end >= target {
                return Some(FnSpan {
                    is_test: is_test_fn(lines, start, &name, lang),
                    name,
                    start: start as u32 + 1,
                    end: end as u32 + 1,
                });
            }
        }
    }
    None
}

/// Where `name` is defined as a (non-test) function in these lines.
pub fn find_definition(lines: &[String], name: &str, lang: Lang) -> Option<FnSpan> {
    for (i, l) in lines.iter().enumerate() {
        if l.contains(name) && definition_on(l, lang).as_deref() == Some(name) {
            let end = span_end(lines, i, lang);
            let is_test = is_test_fn(lines, i, name, lang);
            if !is_test {
                return Some(FnSpan {
                    name: name.to_string(),
                    start: i as u32 + 1,
                    end: end as u32 + 1,
                    is_test,
                });
            }
        }
    }
    None
}

/// Names called on a line (`name(`), keywords left out.
pub fn called_names(line: &str) -> Vec<String> {
    static CALL: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    for c in re(&CALL, r"([A-Za-z_$][\w$]*)\s*\(").captures_iter(&code_only(line)) {
        let n = c[1].to_string();
        if !KEYWORDS.contains(&n.as_str()) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Import specifiers written in a file (module paths, require() strings).
pub fn imports(lines: &[String], lang: Lang) -> Vec<String> {
    static PY_FROM: OnceLock<Regex> = OnceLock::new();
    static PY_IMPORT: OnceLock<Regex> = OnceLock::new();
    static JS: OnceLock<Regex> = OnceLock::new();
    static RUST: OnceLock<Regex> = OnceLock::new();
    static JAVA: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    for l in lines {
        match lang {
            Lang::Python => {
                if let Some(c) = re(&PY_FROM, r"^\s*from\s+([\w.]+)\s+import\s+(.+)").captures(l) {
                    out.push(c[1].to_string());
                    for name in c[2].split(',') {
                        let n = name.trim().trim_matches(|ch| ch == '(' || ch == ')');
                        let n = n.split_whitespace().next().unwrap_or("");
                        if !n.is_empty() {
                            out.push(format!("{}.{n}", &c[1]));
                        }
                    }
                } else if let Some(c) = re(&PY_IMPORT, r"^\s*import\s+([\w.]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Js => {
                for c in re(
                    &JS,
                    r#"(?:require\s*\(\s*|import\s*\(\s*|from\s+|import\s+)['"]([^'"]+)['"]"#,
                )
                .captures_iter(l)
                {
                    out.push(c[1].to_string());
                }
            }
            Lang::Rust => {
                if let Some(c) = re(&RUST, r"^\s*(?:pub\s+)?use\s+([\w:]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Java => {
                if let Some(c) = re(&JAVA, r"^\s*import\s+(?:static\s+)?([\w.]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Go | Lang::Other => {}
        }
    }
    out
}

/// Whether the test file `test` (with its lines) uses the source file `src`.
pub fn test_uses(test: &str, test_lines: &[String], src: &str) -> bool {
    let lang = Lang::of(test);
    if lang != Lang::of(src) {
        return false;
    }
    let stem_path = src.rsplit_once('.').map_or(src, |(s, _)| s);
    let file_stem = stem_path.rsplit('/').next().unwrap_or(stem_path);
    match lang {
        Lang::Python => {
            let module = stem_path.trim_end_matches("/__init__").replace('/', ".");
            let module = module.strip_prefix("src.").unwrap_or(&module).to_string();
            imports(test_lines, lang)
                .iter()
                .any(|m| *m == module || m.starts_with(&format!("{module}.")))
        }
        Lang::Js => {
            let dir = test.rsplit_once('/').map_or("", |(d, _)| d);
            imports(test_lines, lang).iter().any(|spec| {
                if !spec.starts_with('.') {
                    return false;
                }
                let joined = normalize(&format!("{dir}/{spec}"));
                let joined_stem = joined
                    .rsplit_once('.')
                    .filter(|(_, e)| !e.contains('/'))
                    .map_or(joined.as_str(), |(s, _)| s);
                joined == src || joined_stem == stem_path || format!("{joined}/index") == stem_path
            })
        }
        Lang::Rust => {
            // Integration tests use the crate; in-file tests use `super`.
            test.starts_with("tests/") && src.starts_with("src/")
        }
        Lang::Go => test.rsplit_once('/').map(|(d, _)| d) == src.rsplit_once('/').map(|(d, _)| d),
        Lang::Java => test_lines.iter().any(|l| {
            l.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == file_stem)
        }),
        Lang::Other => false,
    }
}

/// Resolve `.` and `..` in a relative path.
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn test_paths() {
        for (p, want) in [
            ("tests/test_ops.py", true),
            ("calc/ops.py", false),
            ("test/math.test.js", true),
            ("src/math.js", false),
            ("src/app.spec.ts", true),
            ("calc/calc_test.go", true),
            ("calc/calc.go", false),
            ("src/test/java/calc/CalcTest.java", true),
            ("src/main/java/calc/Calc.java", false),
            ("src/main/java/calc/Contest.java", false),
            ("tests/integration.rs", true),
            ("src/stats.rs", false),
        ] {
            assert_eq!(is_test_path(p), want, "{p}");
        }
    }

    #[test]
    fn python_spans_and_definitions() {
        let src = lines(
            "import x\n\ndef divide(a, b):\n    \"\"\"Doc.\"\"\"\n    return a / b\n\n\ndef test_it():\n    assert divide(1, 0) is None\n",
        );
        assert_eq!(
            enclosing_function(&src, 5, Lang::Python),
            Some(FnSpan {
                name: "divide".into(),
                start: 3,
                end: 5,
                is_test: false
            })
        );
        assert!(enclosing_function(&src, 9, Lang::Python).unwrap().is_test);
        assert_eq!(
            find_definition(&src, "divide", Lang::Python)
                .unwrap()
                .lines(),
            "3-5"
        );
        assert_eq!(enclosing_function(&src, 1, Lang::Python), None);
    }

    #[test]
    fn brace_languages() {
        let rs = lines(
            "pub fn mean(v: &[f64]) -> Option<f64> {\n    let s = \"}\";\n    None\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn mean_of_three() {\n        assert_eq!(mean(&[1.0]), None);\n    }\n}\n",
        );
        assert_eq!(
            find_definition(&rs, "mean", Lang::Rust).unwrap().lines(),
            "1-4"
        );
        let t = enclosing_function(&rs, 10, Lang::Rust).unwrap();
        assert_eq!(
            (t.name.as_str(), t.is_test, t.lines()),
            ("mean_of_three", true, "9-11".into())
        );
        let js = lines(
            "'use strict';\nfunction max(values) {\n  let best = values[0];\n  return best;\n}\nconst slugify = (s) => {\n  return s;\n};\nmodule.exports = { max };\n",
        );
        assert_eq!(
            find_definition(&js, "max", Lang::Js).unwrap().lines(),
            "2-5"
        );
        assert_eq!(
            find_definition(&js, "slugify", Lang::Js).unwrap().lines(),
            "6-8"
        );
        let go = lines("package calc\n\nfunc Max(v []int) int {\n\treturn v[0]\n}\n");
        assert_eq!(
            find_definition(&go, "Max", Lang::Go).unwrap().lines(),
            "3-5"
        );
        let java = lines(
            "public class Calc {\n    public static int max(int[] values) {\n        return values[0];\n    }\n}\n",
        );
        assert_eq!(
            find_definition(&java, "max", Lang::Java).unwrap().lines(),
            "2-4"
        );
    }

    #[test]
    fn calls_and_imports() {
        assert_eq!(
            called_names("    assert validate_token(\"tok_(x\") is True"),
            ["validate_token"]
        );
        assert_eq!(
            called_names("if got := Max(tc.values); got != tc.want {"),
            ["Max"]
        );
        let py = lines("from calc.ops import add, divide\nimport calc.auth\n");
        assert!(test_uses("tests/test_ops.py", &py, "calc/ops.py"));
        assert!(test_uses("tests/test_ops.py", &py, "calc/auth.py"));
        assert!(!test_uses("tests/test_ops.py", &py, "calc/other.py"));
        let js = lines(
            "const { max } = require('../src/math.js');\nimport { x } from '../src/strings';\n",
        );
        assert!(test_uses("test/math.test.js", &js, "src/math.js"));
        assert!(test_uses("test/math.test.js", &js, "src/strings.js"));
        assert!(!test_uses("test/math.test.js", &js, "src/other.js"));
    }

    #[test]
    fn foreign_paths() {
        for p in [
            "lib/python3.11/importlib/__init__.py",
            "/usr/lib/python3/dist-packages/x.py",
            "node:internal/test_runner/test",
            "/home/u/.cargo/registry/src/x.rs",
            "/rustc/abc/library/core/src/panicking.rs",
            "node_modules/jest/index.js",
        ] {
            assert!(is_foreign_path(p), "{p}");
        }
        assert!(!is_foreign_path("src/lib.rs"));
    }
}
