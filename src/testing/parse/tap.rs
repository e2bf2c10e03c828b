//! TAP as `node --test` writes it (and any TAP 13/14 producer): nested
//! subtests indented by four spaces, each test point followed by an
//! optional YAML diagnostic block. Only leaves are tests; a point that had
//! children is a suite, and its `not ok` (`subtestsFailed`) is not a failed
//! test. Ids are `file › suite › name`, the file taken from the test's own
//! `location` or the nearest suite's. Node's TAP gives a location only for
//! failing tests; wfx's reporter (`src/testing/node-reporter.mjs`) adds a
//! `# wfx-location: file:line:col` line before every result, so a test's
//! id carries its file whether it passes or fails (DESIGN.md §10.4).

use std::sync::LazyLock;

use regex::Regex;

use super::{LineParser, ParsedCase, ParsedRun, Status, best_location, error_line, strip_ansi};
use crate::project::compile;

pub fn parse(text: &str) -> ParsedRun {
    super::feed(Box::new(Parser::default()), text)
}

/// Separator between the parts of a JavaScript test id.
pub const SEP: &str = " › ";

static POINT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^(\s*)(not ok|ok)\b(?:\s+\d+)?(?:\s*-\s*(.*?))?(?:\s+#\s*(SKIP|TODO|skip|todo)\b\s*(.*?))?\s*$",
    )
});

#[derive(Debug, Default, Clone)]
struct Node {
    name: String,
    ok: bool,
    /// From the `# wfx-location:` line before the point.
    location: Option<String>,
    directive: Option<(String, String)>,
    yaml: Yaml,
    children: Vec<Node>,
}

/// The keys of a diagnostic block wfx uses.
#[derive(Debug, Default, Clone)]
struct Yaml {
    location: Option<String>,
    error: Option<String>,
    stack: Option<String>,
    kind: Option<String>,
    failure_type: Option<String>,
}

/// Line parser for TAP.
#[derive(Default)]
pub struct Parser {
    /// Finished points waiting for their parent, by indentation.
    pending: Vec<(usize, Node)>,
    /// Lines of the YAML block being read, and its indentation.
    yaml: Option<(usize, Vec<String>)>,
    /// A `# wfx-location:` line waiting for the point that follows it, and
    /// its indentation.
    location: Option<(usize, String)>,
}

/// The diagnostic wfx's node reporter writes before each test result.
pub const LOCATION_MARK: &str = "# wfx-location: ";

impl Parser {
    fn close_yaml(&mut self) {
        let Some((indent, lines)) = self.yaml.take() else {
            return;
        };
        let yaml = parse_yaml(&lines);
        // The block belongs to the last point at indentation `indent - 2`.
        if let Some((_, node)) = self
            .pending
            .iter_mut()
            .rev()
            .find(|(i, _)| *i + 2 == indent)
        {
            node.yaml = yaml;
        }
    }
}

impl LineParser for Parser {
    fn line(&mut self, raw: &str) {
        let stripped = strip_ansi(raw);
        let line = stripped.trim_end_matches('\r');
        if let Some((indent, lines)) = self.yaml.as_mut() {
            let trimmed = line.trim_start();
            if trimmed == "..." && line.len() - trimmed.len() == *indent {
                self.close_yaml();
            } else {
                // The block's indent is a byte count from the `---` line;
                // this line's leading whitespace may hold wider characters.
                let mut cut = (*indent).min(line.len() - trimmed.len());
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                lines.push(line[cut..].to_string());
            }
            return;
        }
        if line.trim() == "---" {
            let indent = line.len() - line.trim_start().len();
            self.yaml = Some((indent, Vec::new()));
            return;
        }
        let trimmed = line.trim_start();
        if let Some(loc) = trimmed.strip_prefix(LOCATION_MARK) {
            self.location = Some((line.len() - trimmed.len(), unescape(loc.trim_end())));
            return;
        }
        let Some(c) = POINT.captures(line) else {
            return;
        };
        let indent = c[1].len();
        let location = self
            .location
            .take()
            .filter(|(i, _)| *i == indent)
            .map(|(_, loc)| loc);
        let mut node = Node {
            name: unescape(c.get(3).map_or("", |m| m.as_str())),
            ok: &c[2] == "ok",
            location,
            directive: c.get(4).map(|d| {
                (
                    d.as_str().to_ascii_uppercase(),
                    c.get(5).map_or("", |m| m.as_str()).to_string(),
                )
            }),
            ..Node::default()
        };
        // Everything pending deeper than this point is its children.
        let split = self
            .pending
            .iter()
            .position(|(i, _)| *i > indent)
            .unwrap_or(self.pending.len());
        node.children = self.pending.drain(split..).map(|(_, n)| n).collect();
        self.pending.push((indent, node));
    }

    fn finish(mut self: Box<Self>) -> ParsedRun {
        self.close_yaml();
        let mut run = ParsedRun::new("tap");
        let roots: Vec<Node> = self.pending.drain(..).map(|(_, n)| n).collect();
        for node in &roots {
            walk(node, &mut Vec::new(), None, &mut run);
        }
        run
    }
}

/// File part of a `file:line:col` location.
fn location_file(loc: &str) -> Option<String> {
    let mut parts = loc.rsplitn(3, ':');
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
        return None;
    };
    let file = match parts.next() {
        Some(f)
            if a.chars().all(|c| c.is_ascii_digit()) && b.chars().all(|c| c.is_ascii_digit()) =>
        {
            f
        }
        _ if a.chars().all(|c| c.is_ascii_digit()) => b,
        _ => return None,
    };
    Some(file.trim_start_matches("file://").to_string())
}

fn walk(node: &Node, path: &mut Vec<String>, file: Option<String>, run: &mut ParsedRun) {
    let own_file = node
        .yaml
        .location
        .as_deref()
        .or(node.location.as_deref())
        .and_then(location_file);
    let file = own_file.or(file);
    let is_suite = !node.children.is_empty() || node.yaml.kind.as_deref() == Some("suite");
    if is_suite {
        path.push(node.name.clone());
        for child in &node.children {
            walk(child, path, file.clone(), run);
        }
        path.pop();
        return;
    }
    // Tests left out by a name pattern or `only` did not run at all.
    if let Some((_, reason)) = &node.directive
        && (reason.contains("does not match pattern") || reason.contains("'only' option"))
    {
        return;
    }
    let mut parts: Vec<&str> = Vec::new();
    if let Some(f) = &file {
        parts.push(f);
    }
    parts.extend(path.iter().map(String::as_str));
    parts.push(&node.name);
    let id = parts.join(SEP);
    let status = match (&node.directive, node.ok) {
        (Some((d, _)), _) if d == "SKIP" || d == "TODO" => Status::Skipped,
        (_, true) => Status::Passed,
        (_, false) => Status::Failed,
    };
    let mut case = ParsedCase {
        id,
        status,
        file: file.clone(),
        ..ParsedCase::default()
    };
    if status == Status::Failed {
        let error = node.yaml.error.clone().unwrap_or_default();
        let stack = node.yaml.stack.clone().unwrap_or_default();
        case.error = error_line(&error);
        if case.error.is_empty() {
            case.error = node
                .yaml
                .failure_type
                .clone()
                .unwrap_or_else(|| "test failed".into());
        }
        let loc = best_location(&stack, file.as_deref()).or_else(|| {
            node.yaml
                .location
                .as_deref()
                .and_then(|l| best_location(&format!(" {l}"), None))
        });
        if let Some(loc) = loc {
            case.file = Some(loc.file);
            case.line = Some(loc.line);
        }
        let mut message = error;
        if !stack.is_empty() {
            message.push_str("\n\n");
            message.push_str(&stack);
        }
        case.message = super::excerpt(&message);
    }
    run.cases.push(case);
}

/// TAP escapes `#` and `\` in descriptions.
fn unescape(s: &str) -> String {
    s.replace("\\#", "#").replace("\\\\", "\\")
}

/// The few keys wfx needs from a YAML block: scalars (quoted or plain) and
/// block scalars (`|-`, `|`, `>-`).
fn parse_yaml(lines: &[String]) -> Yaml {
    let mut yaml = Yaml::default();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        i += 1;
        if line.starts_with(' ') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let text = if matches!(value, "|" | "|-" | "|+" | ">" | ">-") {
            let mut block = Vec::new();
            while i < lines.len() && (lines[i].starts_with(' ') || lines[i].trim().is_empty()) {
                block.push(
                    lines[i]
                        .strip_prefix("  ")
                        .unwrap_or(lines[i].trim_start())
                        .to_string(),
                );
                i += 1;
            }
            block.join("\n").trim_end().to_string()
        } else {
            unquote(value)
        };
        match key.trim() {
            "location" => yaml.location = Some(text),
            "error" => yaml.error = Some(text),
            "stack" => yaml.stack = Some(text),
            "type" => yaml.kind = Some(text),
            "failureType" => yaml.failure_type = Some(text),
            _ => {}
        }
    }
    yaml
}

fn unquote(v: &str) -> String {
    if v.len() >= 2
        && ((v.starts_with('\'') && v.ends_with('\'')) || (v.starts_with('"') && v.ends_with('"')))
    {
        let inner = &v[1..v.len() - 1];
        if v.starts_with('\'') {
            inner.replace("''", "'")
        } else {
            inner.replace("\\\"", "\"").replace("\\n", "\n")
        }
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::{failed, fixture};

    #[test]
    fn node_test_tap() {
        let run = parse(&fixture("node-tap.txt"));
        assert_eq!(run.parser, "tap");
        assert_eq!(run.cases.len(), 10);
        assert_eq!(run.count(Status::Passed), 7);
        assert_eq!(run.count(Status::Failed), 2);
        assert_eq!(run.count(Status::Skipped), 1);
        let failed = failed(&run);
        assert_eq!(
            failed,
            vec![
                (
                    "test/math.test.js › math › finds the max",
                    Some("test/math.test.js"),
                    Some(17),
                    "Expected values to be strictly equal: 3 !== 9"
                ),
                (
                    "test/strings.test.js › strings › slugifies a title",
                    Some("test/strings.test.js"),
                    Some(19),
                    "Expected values to be strictly equal: 'tiny-test fixture' !== 'tiny-test-fixture'"
                ),
            ]
        );
        let skipped = crate::testing::parse::ids(&run, Status::Skipped);
        assert_eq!(
            skipped,
            vec!["test/math.test.js › math › handles bigint division"]
        );
        let ids: Vec<_> = run.cases.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(
            &"test/strings.test.js › strings › capitalize › uppercases the first letter"
        ));
        // Top-level tests that passed carry no location in Node 20's TAP.
        assert!(ids.contains(&"clamp keeps values in range"));
        assert!(run.cases[2].message.contains("3 !== 9"));
    }

    #[test]
    fn name_pattern_exclusions_are_not_cases() {
        let text = "TAP version 13\n\
            # Subtest: a\n\
            ok 1 - a # SKIP test name does not match pattern\n\
            # Subtest: b\n\
            not ok 2 - b\n  ---\n  location: 'test/x.test.js:3:1'\n  error: 'boom'\n  ...\n\
            ok 3 - c # SKIP not ready\n\
            1..3\n";
        let run = parse(text);
        let got: Vec<_> = run
            .cases
            .iter()
            .map(|c| (c.id.as_str(), c.status))
            .collect();
        assert_eq!(
            got,
            vec![
                ("test/x.test.js › b", Status::Failed),
                ("c", Status::Skipped)
            ]
        );
        assert_eq!(run.cases[0].error, "boom");
        assert_eq!(run.cases[0].line, Some(3));
    }

    #[test]
    fn yaml_block_indent_cut_respects_wide_whitespace() {
        // Found while fuzzing parse_tap: a YAML block opened by `---` with
        // two spaces, then a line indented by U+3000 (three bytes), was cut
        // at byte 2, inside that character.
        let run = parse(&String::from_utf8_lossy(b"  ---\n\xe3\x80\x80x\n"));
        assert!(run.is_empty());
        let run = parse("ok 1 - a\n  ---\n\u{3000}message: 'x'\n  ...\nnot ok 2 - b\n");
        let ids: Vec<_> = run
            .cases
            .iter()
            .map(|c| (c.id.as_str(), c.status))
            .collect();
        assert_eq!(ids, vec![("a", Status::Passed), ("b", Status::Failed)]);
    }

    fn ids(run: &ParsedRun) -> Vec<(String, Status)> {
        let mut v: Vec<_> = run.cases.iter().map(|c| (c.id.clone(), c.status)).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    #[test]
    fn every_test_carries_its_file_through_wfx_reporter() {
        use Status::*;
        // Real `node --test` runs with wfx's reporter over a project whose
        // `test/` and `dist/test/` hold equally named tests; in the second
        // run only `dist/parse.js` is broken.
        let pass = parse(&fixture("node-twins-pass.tap"));
        let fail = parse(&fixture("node-twins-fail.tap"));
        let d = "dist/test/parse.test.js";
        let t = "test/parse.test.js";
        let want = |dist: Status| {
            vec![
                (format!("{d} › parse › reads a number"), dist),
                (format!("{d} › parse › rejects garbage"), Passed),
                (format!("{d} › round trip"), dist),
                (format!("{t} › parse › reads a number"), Passed),
                (format!("{t} › parse › rejects garbage"), Passed),
                (format!("{t} › round trip"), Passed),
            ]
        };
        assert_eq!(ids(&pass), want(Passed));
        assert_eq!(ids(&fail), want(Failed));
        for c in &fail.cases {
            assert!(
                c.file.as_deref().is_some_and(|f| c.id.starts_with(f)),
                "{c:?}"
            );
        }
        let failed = fail.cases.iter().find(|c| c.status == Failed).unwrap();
        assert_eq!((failed.file.as_deref(), failed.line), (Some(d), Some(7)));
    }

    #[test]
    fn node_own_tap_names_files_of_failures_only() {
        // Why wfx brings its reporter: node's TAP of the same failing run
        // gives passing tests no file, so `test/` and `dist/test/` tests
        // of one name collide and a test's id changes when it fails.
        let run = parse(&fixture("node-twins-fail-node-tap.txt"));
        let ids: Vec<&str> = run.cases.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"dist/test/parse.test.js › parse › reads a number"));
        assert!(ids.contains(&"parse › reads a number"));
        assert!(ids.contains(&"round trip"));
        assert!(!ids.iter().any(|i| i.starts_with("test/")), "{ids:?}");
    }
}
