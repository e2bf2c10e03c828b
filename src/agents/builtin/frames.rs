//! Finding code locations in test output: Python tracebacks, Rust panics
//! and backtraces, compiler errors, JS/TS stacks, Go test output and Java
//! stack traces; and cutting a log into the part that belongs to one test.

use std::collections::BTreeMap;

use crate::project::re;

/// What kind of line a location came from; it decides which location is
/// the failure's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A Python traceback entry: the last one is where it failed.
    Python,
    /// A stack frame or a `file:line: message` line: the first one is
    /// where it failed.
    Stack,
    /// A Rust panic location.
    Panic,
    /// A compiler error location.
    Compile,
    /// Where a test is declared (TAP `location:`): used only when nothing
    /// better is found.
    Declared,
}

/// A location as printed, before it is mapped to a project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFrame {
    pub path: String,
    pub line: u32,
    /// Function named by the frame, when the format names one.
    pub function: Option<String>,
    pub kind: FrameKind,
    /// Directory hint for bare file names (Java package directory).
    pub hint: Option<String>,
}

/// Every location printed on one line of output.
pub fn frames_in(line: &str) -> Vec<RawFrame> {
    let mut frames = Frames(Vec::new());
    python_and_rust_frames(line, &mut frames);
    jvm_and_js_frames(line, &mut frames);
    other_frames(line, &mut frames);
    frames.0
}

/// The frames of one line, each place once.
struct Frames(Vec<RawFrame>);

impl Frames {
    fn push(
        &mut self,
        path: &str,
        line: &str,
        function: Option<String>,
        kind: FrameKind,
        hint: Option<String>,
    ) {
        let Ok(line) = line.parse::<u32>() else {
            return;
        };
        if line == 0 || self.0.iter().any(|f| f.path == path && f.line == line) {
            return;
        }
        self.0.push(RawFrame {
            path: path.to_string(),
            line,
            function,
            kind,
            hint,
        });
    }
}

/// Python tracebacks and pytest lines; Rust panics, compile errors and backtraces.
fn python_and_rust_frames(line: &str, frames: &mut Frames) {
    for c in re!(r#"File "([^"]+)", line (\d+)(?:, in ([^\s]+))?"#).captures_iter(line) {
        frames.push(
            &c[1],
            &c[2],
            c.get(3).map(|m| m.as_str().to_string()),
            FrameKind::Python,
            None,
        );
    }
    if let Some(c) = re!(r#"^\s*([^\s:"'()]+\.py):(\d+):(?:\s+in\s+(\S+)|\s|$)"#).captures(line) {
        frames.push(
            &c[1],
            &c[2],
            c.get(3).map(|m| m.as_str().to_string()),
            FrameKind::Python,
            None,
        );
    }
    // A panic, and a `#[should_panic]` test that did not panic (libtest
    // names the test's own line).
    if let Some(c) =
        re!(r"(?:panicked|did not panic as expected) at ([^\s:]+\.rs):(\d+):\d+").captures(line)
    {
        frames.push(&c[1], &c[2], None, FrameKind::Panic, None);
    }
    if let Some(c) = re!(r"-->\s+([^\s:]+\.rs):(\d+):\d+").captures(line) {
        frames.push(&c[1], &c[2], None, FrameKind::Compile, None);
    }
    if let Some(c) = re!(r"^\s*at\s+([^\s:]+\.rs):(\d+):\d+").captures(line) {
        frames.push(&c[1], &c[2], None, FrameKind::Stack, None);
    }
}

/// JVM stack frames; JavaScript and TypeScript stacks and tsc errors.
fn jvm_and_js_frames(line: &str, frames: &mut Frames) {
    for c in re!(r"at\s+([\w$.]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)")
        .captures_iter(line)
    {
        let class = &c[1];
        let package_dir = class
            .rsplit_once('.')
            .map(|(pkg, _)| pkg.replace('.', "/"))
            .filter(|d| !d.is_empty());
        let path = match &package_dir {
            Some(dir) => format!("{dir}/{}", &c[3]),
            None => c[3].to_string(),
        };
        frames.push(
            &path,
            &c[4],
            Some(c[2].to_string()),
            FrameKind::Stack,
            package_dir,
        );
    }
    let declared = line.trim_start().starts_with("location:");
    let js_fn = re!(r"at\s+(?:async\s+)?([\w$.<>\[\] ]+?)\s+\(").captures(line);
    for c in
        re!(r#"(?:^|[\s('"❯])((?:file://)?[^\s()'"❯]+?\.(?:[cm]?[jt]sx?|vue|svelte)):(\d+):(\d+)"#)
            .captures_iter(line)
    {
        let function = js_fn
            .as_ref()
            .map(|f| f[1].to_string())
            .filter(|f| !f.contains('<'));
        let kind = if declared {
            FrameKind::Declared
        } else {
            FrameKind::Stack
        };
        frames.push(&c[1], &c[2], function, kind, None);
    }
    if let Some(c) = re!(r"([^\s(]+\.tsx?)\((\d+),\d+\): error").captures(line) {
        frames.push(&c[1], &c[2], None, FrameKind::Compile, None);
    }
}

/// Go and the other languages: `file.ext:line`.
fn other_frames(line: &str, frames: &mut Frames) {
    for c in re!(r"(?:^|[\s\x22])([\w./-]+\.go):(\d+)(?::\d+)?(?::|\s|$)").captures_iter(line) {
        frames.push(&c[1], &c[2], None, FrameKind::Stack, None);
    }
    for c in re!(
        r"(?:^|[\s(])([\w./-]+\.(?:rb|c|cc|cpp|cxx|h|hpp|cs|swift|php|ex|exs|dart|lua|zig)):(\d+)"
    )
    .captures_iter(line)
    {
        frames.push(&c[1], &c[2], None, FrameKind::Stack, None);
    }
}

/// Per-test output of `go test -json`, when the log is in that format:
/// `(package, test) → text`.
pub fn go_json_outputs(log: &str) -> Option<BTreeMap<(String, String), String>> {
    let mut json_lines = 0usize;
    let mut other = 0usize;
    let mut map: BTreeMap<(String, String), String> = BTreeMap::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        if !line.starts_with('{') {
            other += 1;
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            other += 1;
            continue;
        };
        if v.get("Action").is_none() {
            other += 1;
            continue;
        }
        json_lines += 1;
        let (Some(test), Some(output)) = (
            v.get("Test").and_then(|t| t.as_str()),
            v.get("Output").and_then(|o| o.as_str()),
        ) else {
            continue;
        };
        let pkg = v
            .get("Package")
            .and_then(|p| p.as_str())
            .unwrap_or("")
            .to_string();
        map.entry((pkg, test.to_string()))
            .or_default()
            .push_str(output);
    }
    (json_lines > 0 && json_lines >= other).then_some(map)
}

/// Split a Go test id `example.com/pkg/TestName/sub` into package and test.
pub fn split_go_id(id: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = id.split('/').collect();
    let i = parts.iter().position(|p| {
        ["Test", "Example", "Benchmark", "Fuzz"]
            .iter()
            .any(|pre| p.starts_with(pre))
    })?;
    Some((parts[..i].join("/"), parts[i..].join("/")))
}

/// Strings that name a test in output, most specific first.
pub fn search_keys(id: &str) -> Vec<String> {
    let mut keys = vec![id.to_string()];
    let mut add = |k: String| {
        let k = k.trim().to_string();
        if k.chars().count() >= 3 && !keys.contains(&k) {
            keys.push(k);
        }
    };
    if let Some((_, name)) = split_go_id(id) {
        add(name);
    }
    // nextest prefixes the binary id: `rust-calc stats::tests::x`.
    if let Some((first, rest)) = id.split_once(' ')
        && !first.contains("::")
        && rest.contains("::")
    {
        add(rest.to_string());
    }
    if let Some((class, method)) = id.split_once('#') {
        let simple = class.rsplit('.').next().unwrap_or(class);
        add(format!("{simple}.{method}"));
        add(method.to_string());
    }
    for sep in [" › ", " > ", "::"] {
        if id.contains(sep) {
            let segs: Vec<&str> = id.split(sep).collect();
            for i in 1..segs.len() {
                add(segs[i..].join(sep));
            }
        }
    }
    keys
}

/// Which lines of a log name which tests: built in one pass over the log
/// (an Aho-Corasick automaton of every key), so finding each failure's part of a large
/// log does not rescan it per failure.
pub struct LogIndex<'a> {
    lines: Vec<&'a str>,
    key_ids: BTreeMap<String, usize>,
    /// key id → lines (ascending) that contain it.
    by_key: Vec<Vec<usize>>,
    /// line → key ids it contains (only lines with a key).
    by_line: BTreeMap<usize, Vec<usize>>,
}

impl<'a> LogIndex<'a> {
    /// Index `log` for the search keys and stop keys of `ids`.
    pub fn new(log: &'a str, ids: &[&str]) -> LogIndex<'a> {
        let lines: Vec<&str> = log.lines().collect();
        let mut key_ids: BTreeMap<String, usize> = BTreeMap::new();
        let mut keys: Vec<String> = Vec::new();
        for id in ids {
            for k in search_keys(id) {
                if !key_ids.contains_key(&k) {
                    key_ids.insert(k.clone(), keys.len());
                    keys.push(k);
                }
            }
        }
        let mut by_key = vec![Vec::new(); keys.len()];
        let mut by_line: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        // Keys are literals: one Aho-Corasick automaton finds all of them
        // (overlapping: a key may be part of another) in one pass per line.
        let matcher = aho_corasick::AhoCorasick::new(&keys).ok();
        for (i, line) in lines.iter().enumerate() {
            let mut matched: Vec<usize> = match &matcher {
                Some(ac) => ac
                    .find_overlapping_iter(*line)
                    .map(|m| m.pattern().as_usize())
                    .collect(),
                None => (0..keys.len())
                    .filter(|&k| line.contains(&keys[k]))
                    .collect(),
            };
            matched.sort_unstable();
            matched.dedup();
            if !matched.is_empty() {
                for &k in &matched {
                    by_key[k].push(i);
                }
                by_line.insert(i, matched);
            }
        }
        LogIndex {
            lines,
            key_ids,
            by_key,
            by_line,
        }
    }

    /// The lines that belong to the test `id`: from the first place that
    /// names it and shows a location, up to the next place that names
    /// another failing test (a key in `stops`), at most 80 lines.
    pub fn section(&self, id: &str, stops: &[String]) -> Vec<&'a str> {
        let stop_ids: std::collections::HashSet<usize> = stops
            .iter()
            .filter(|o| !id.contains(o.as_str()) && !o.contains(id))
            .filter_map(|o| self.key_ids.get(o).copied())
            .collect();
        for key in search_keys(id) {
            let Some(&k) = self.key_ids.get(&key) else {
                continue;
            };
            for &i in &self.by_key[k] {
                let mut window = vec![self.lines[i]];
                for j in (i + 1)..(i + 80).min(self.lines.len()) {
                    if self
                        .by_line
                        .get(&j)
                        .is_some_and(|ks| ks.iter().any(|k| stop_ids.contains(k)))
                    {
                        break;
                    }
                    window.push(self.lines[j]);
                }
                if window.iter().any(|l| !frames_in(l).is_empty()) {
                    return window;
                }
            }
        }
        Vec::new()
    }
}

/// The key another failing test is best recognised by in output.
pub fn stop_key(id: &str) -> String {
    search_keys(id)
        .last()
        .cloned()
        .unwrap_or_else(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> (String, u32, FrameKind) {
        let f = frames_in(line);
        assert_eq!(f.len(), 1, "{line}: {f:?}");
        (f[0].path.clone(), f[0].line, f[0].kind)
    }

    #[test]
    fn formats() {
        use FrameKind::*;
        for (line, path, n, kind) in [
            (
                "  File \"/app/calc/ops.py\", line 10, in divide",
                "/app/calc/ops.py",
                10,
                Python,
            ),
            (
                "calc/ops.py:10: ZeroDivisionError",
                "calc/ops.py",
                10,
                Python,
            ),
            (
                "tests/test_units.py:1: in <module>",
                "tests/test_units.py",
                1,
                Python,
            ),
            ("tests/test_ops.py:15: ", "tests/test_ops.py", 15, Python),
            (
                "thread 'x' (12) panicked at src/stats.rs:28:9:",
                "src/stats.rs",
                28,
                Panic,
            ),
            (
                "note: test did not panic as expected at src/lib.rs:32:8",
                "src/lib.rs",
                32,
                Panic,
            ),
            ("  --> src/lib.rs:28:18", "src/lib.rs", 28, Compile),
            (
                "             at ./src/lib.rs:23:5",
                "./src/lib.rs",
                23,
                Stack,
            ),
            (
                "      at Object.toBe (test/math.test.js:13:28)",
                "test/math.test.js",
                13,
                Stack,
            ),
            (" ❯ test/math.test.js:14:28", "test/math.test.js", 14, Stack),
            (
                "        TestContext.<anonymous> (test/math.test.js:17:12)",
                "test/math.test.js",
                17,
                Stack,
            ),
            (
                "      location: 'test/math.test.js:16:3'",
                "test/math.test.js",
                16,
                Declared,
            ),
            (
                "    at file:///home/u/p/src/a.mjs:3:9",
                "file:///home/u/p/src/a.mjs",
                3,
                Stack,
            ),
            (
                "src/app.ts(12,5): error TS2322: bad",
                "src/app.ts",
                12,
                Compile,
            ),
            (
                "    calc_test.go:23: Max([1 2 9]) = 1, want 9",
                "calc_test.go",
                23,
                Stack,
            ),
            (
                "calc/calc.go:6:9: invalid operation",
                "calc/calc.go",
                6,
                Stack,
            ),
            (
                "\tat calc.CalcTest.findsTheMax(CalcTest.java:16)",
                "calc/CalcTest.java",
                16,
                Stack,
            ),
            (
                "app/models/user.rb:12:in `save'",
                "app/models/user.rb",
                12,
                Stack,
            ),
        ] {
            assert_eq!(one(line), (path.to_string(), n, kind), "{line}");
        }
        assert!(frames_in("test result: FAILED. 6 passed; 2 failed").is_empty());
        assert!(frames_in("Time: 0.881 s").is_empty());
    }

    #[test]
    fn keys() {
        assert_eq!(
            search_keys("test/math.test.js › math › finds the max"),
            [
                "test/math.test.js › math › finds the max",
                "math › finds the max",
                "finds the max"
            ]
        );
        assert_eq!(
            search_keys("example.com/gocalc/calc/TestMax/largest_last"),
            [
                "example.com/gocalc/calc/TestMax/largest_last",
                "TestMax/largest_last"
            ]
        );
        assert_eq!(
            search_keys("calc.CalcTest#findsTheMax"),
            [
                "calc.CalcTest#findsTheMax",
                "CalcTest.findsTheMax",
                "findsTheMax"
            ]
        );
        assert_eq!(
            search_keys("rust-calc stats::tests::mean_of_three"),
            [
                "rust-calc stats::tests::mean_of_three",
                "stats::tests::mean_of_three",
                "tests::mean_of_three",
                "mean_of_three"
            ]
        );
    }
}
