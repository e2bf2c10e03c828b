//! `go test -json` events. Every test and subtest with a final `pass`,
//! `fail` or `skip` is a case (a parent fails when a subtest fails, as go
//! reports it). Build failures become static failures: Go ≥ 1.24 reports
//! them as `build-output` / `build-fail` events, older Go prints the
//! compiler lines and `FAIL <pkg> [build failed]` as plain text, which is
//! read too. Ids are `package/TestName[/subtest]`.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::{Bounded, LineParser, ParsedCase, ParsedRun, Status, error_line, excerpt, strip_ansi};
use crate::artifacts::test_results::Layer;
use crate::project::compile;

/// Parse `go test -json` output. `module` (from go.mod) maps package paths
/// to directories so `calc_test.go:23` becomes `calc/calc_test.go`.
pub fn parse(text: &str, module: Option<&str>) -> ParsedRun {
    super::feed(Box::new(Parser::new(module)), text)
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    import_path: Option<String>,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

#[derive(Default)]
struct TestState {
    output: Bounded,
    status: Option<Status>,
}

/// Line parser for `go test -json`.
pub struct Parser {
    module: Option<String>,
    order: Vec<(String, String)>,
    tests: HashMap<(String, String), TestState>,
    /// Package-level output (no `Test`), e.g. a panic outside a test.
    package_output: HashMap<String, Bounded>,
    package_failed: Vec<String>,
    /// Compiler output by package, from `build-output` events or `# pkg`
    /// headers in plain text.
    build_output: HashMap<String, Bounded>,
    build_failed: Vec<String>,
    text_package: Option<String>,
    loose_diagnostics: Bounded,
}

static BUILD_FAILED: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^FAIL\s+(\S+)\s+\[(build|setup) failed\]\s*$"));
static HEADER: LazyLock<Regex> = LazyLock::new(|| compile(r"^# (\S+)"));
static DIAG: LazyLock<Regex> = LazyLock::new(|| compile(r"^(\S+\.go):(\d+)(?::\d+)?: (.*)$"));
static TEST_OUT: LazyLock<Regex> = LazyLock::new(|| compile(r"^\s+(\S+\.go):(\d+): (.*)$"));

impl Parser {
    pub fn new(module: Option<&str>) -> Parser {
        Parser {
            module: module.map(str::to_string),
            order: Vec::new(),
            tests: HashMap::new(),
            package_output: HashMap::new(),
            package_failed: Vec::new(),
            build_output: HashMap::new(),
            build_failed: Vec::new(),
            text_package: None,
            loose_diagnostics: Bounded::default(),
        }
    }

    /// Directory of a package inside the module (`""` for the root).
    fn package_dir(&self, package: &str) -> Option<String> {
        let module = self.module.as_deref()?;
        if package == module {
            return Some(String::new());
        }
        package
            .strip_prefix(module)
            .and_then(|r| r.strip_prefix('/'))
            .map(str::to_string)
    }

    fn event(&mut self, ev: Event) {
        match ev.action.as_str() {
            "build-output" => {
                let key = clean_import_path(ev.import_path.as_deref().unwrap_or(""));
                if let Some(out) = ev.output {
                    let buf = self.build_output.entry(key).or_default();
                    for l in out.lines() {
                        buf.push_line(l);
                    }
                }
            }
            "build-fail" => {
                let key = clean_import_path(ev.import_path.as_deref().unwrap_or(""));
                if !self.build_failed.contains(&key) {
                    self.build_failed.push(key);
                }
            }
            _ => {
                let Some(package) = ev.package else { return };
                let Some(test) = ev.test else {
                    match ev.action.as_str() {
                        "output" => {
                            if let Some(out) = ev.output {
                                if let Some(c) = BUILD_FAILED.captures(out.trim_end()) {
                                    let key = c[1].to_string();
                                    if !self.build_failed.contains(&key) {
                                        self.build_failed.push(key);
                                    }
                                }
                                let buf = self.package_output.entry(package).or_default();
                                for l in out.lines() {
                                    buf.push_line(l);
                                }
                            }
                        }
                        "fail" => self.package_failed.push(package),
                        _ => {}
                    }
                    return;
                };
                let key = (package, test);
                if !self.tests.contains_key(&key) {
                    self.order.push(key.clone());
                }
                let state = self.tests.entry(key).or_default();
                match ev.action.as_str() {
                    "output" => {
                        if let Some(out) = ev.output {
                            for l in out.lines() {
                                let t = l.trim_start();
                                if t.starts_with("=== ") || t.starts_with("--- ") {
                                    continue;
                                }
                                state.output.push_line(l);
                            }
                        }
                    }
                    "pass" => state.status = Some(Status::Passed),
                    "fail" => state.status = Some(Status::Failed),
                    "skip" => state.status = Some(Status::Skipped),
                    _ => {}
                }
            }
        }
    }

    /// A plain-text line (old Go prints build failures without JSON).
    fn text(&mut self, line: &str) {
        if let Some(c) = BUILD_FAILED.captures(line) {
            let key = c[1].to_string();
            if !self.build_failed.contains(&key) {
                self.build_failed.push(key);
            }
            return;
        }
        if let Some(c) = HEADER.captures(line) {
            self.text_package = Some(clean_import_path(&c[1]));
            return;
        }
        if DIAG.is_match(line) {
            match self.text_package.clone() {
                Some(p) => self.build_output.entry(p).or_default().push_line(line),
                None => self.loose_diagnostics.push_line(line),
            }
        }
    }

    fn resolve(&self, package: &str, file: &str) -> String {
        if file.contains('/') {
            return file.to_string();
        }
        match self.package_dir(package) {
            Some(dir) if !dir.is_empty() => format!("{dir}/{file}"),
            _ => file.to_string(),
        }
    }
}

/// `example.com/x [example.com/x.test]` → `example.com/x`.
fn clean_import_path(p: &str) -> String {
    p.split_whitespace().next().unwrap_or("").to_string()
}

impl LineParser for Parser {
    fn line(&mut self, raw: &str) {
        let stripped = strip_ansi(raw);
        let line = stripped.trim_end_matches('\r');
        if line.starts_with('{') {
            if let Ok(ev) = serde_json::from_str::<Event>(line) {
                self.event(ev);
            }
            return;
        }
        self.text(line);
    }

    fn finish(self: Box<Self>) -> ParsedRun {
        let mut run = ParsedRun::new("gotest");
        for key in &self.order {
            let state = &self.tests[key];
            let (package, test) = key;
            let status = match state.status {
                Some(s) => s,
                // Started but never finished: the package crashed (panic,
                // timeout) while it ran.
                None if self.package_failed.contains(package) => Status::Failed,
                None => continue,
            };
            let mut case = ParsedCase {
                id: format!("{package}/{test}"),
                status,
                ..ParsedCase::default()
            };
            if status == Status::Failed {
                let mut text = state.output.text().to_string();
                if state.status.is_none()
                    && let Some(pkg) = self.package_output.get(package)
                {
                    text.push('\n');
                    text.push_str(pkg.text());
                }
                if let Some(c) = text.lines().find_map(|l| TEST_OUT.captures(l)) {
                    case.file = Some(self.resolve(package, &c[1]));
                    case.line = c[2].parse().ok();
                    case.error = c[3].trim().to_string();
                } else {
                    case.error = error_line(&text);
                    if case.error.is_empty() && state.status.is_some() {
                        case.error = "a subtest failed".into();
                    }
                }
                case.message = excerpt(&text);
            }
            run.cases.push(case);
        }
        for package in &self.build_failed {
            let output = self
                .build_output
                .get(package)
                .map(|b| b.text().to_string())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| self.loose_diagnostics.text().to_string());
            let mut case = ParsedCase {
                id: package.clone(),
                status: Status::Error,
                error: format!("build failed: {package}"),
                message: excerpt(&output),
                layer: Some(Layer::Static),
                ..ParsedCase::default()
            };
            if let Some(c) = output.lines().find_map(|l| DIAG.captures(l)) {
                case.file = Some(c[1].trim_start_matches("./").to_string());
                case.line = c[2].parse().ok();
                case.error = c[3].trim().to_string();
            }
            run.static_errors.push(case);
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::fixture;

    #[test]
    fn go_test_json() {
        let run = parse(&fixture("go-test.json"), Some("example.com/gocalc"));
        assert_eq!(run.parser, "gotest");
        assert_eq!(run.cases.len(), 6);
        assert_eq!(run.count(Status::Passed), 3);
        assert_eq!(run.count(Status::Failed), 2);
        assert_eq!(run.count(Status::Skipped), 1);
        assert!(run.static_errors.is_empty());
        let p = "example.com/gocalc/calc";
        let ids: Vec<_> = run
            .cases
            .iter()
            .map(|c| (c.id.as_str(), c.status))
            .collect();
        assert_eq!(
            ids,
            vec![
                (format!("{p}/TestAdd").as_str(), Status::Passed),
                (format!("{p}/TestMax").as_str(), Status::Failed),
                (format!("{p}/TestMax/single").as_str(), Status::Passed),
                (format!("{p}/TestMax/largest_last").as_str(), Status::Failed),
                (format!("{p}/TestAddNegative").as_str(), Status::Passed),
                (format!("{p}/TestBigNumbers").as_str(), Status::Skipped),
            ]
        );
        let sub = &run.cases[3];
        assert_eq!(
            (sub.file.as_deref(), sub.line),
            (Some("calc/calc_test.go"), Some(23))
        );
        assert_eq!(sub.error, "Max([1 2 9]) = 1, want 9");
        let parent = &run.cases[1];
        assert_eq!(parent.error, "a subtest failed");
        assert_eq!(parent.line, None);
    }

    #[test]
    fn without_module_files_stay_as_printed() {
        let run = parse(&fixture("go-test.json"), None);
        let sub = &run.cases[3];
        assert_eq!(
            (sub.file.as_deref(), sub.line),
            (Some("calc_test.go"), Some(23))
        );
    }

    #[test]
    fn old_go_build_failure_is_static() {
        for file in ["go-test-build-fail.json", "go-test-build-fail.stdout.txt"] {
            let mut text = fixture(file);
            if file.ends_with("stdout.txt") {
                text = format!("{}{text}", fixture("go-test-build-fail.stderr.txt"));
            }
            let run = parse(&text, Some("example.com/gocalc"));
            assert!(run.cases.is_empty(), "{file}");
            assert_eq!(run.static_errors.len(), 1, "{file}");
            let e = &run.static_errors[0];
            assert_eq!(e.id, "example.com/gocalc/calc");
            assert_eq!((e.file.as_deref(), e.line), (Some("calc/calc.go"), Some(6)));
            assert_eq!(
                e.error,
                "invalid operation: a + \"b\" (mismatched types int and untyped string)"
            );
            assert_eq!(e.layer, Some(Layer::Static));
        }
    }

    #[test]
    fn new_go_build_events_are_static() {
        let text = r##"{"ImportPath":"example.com/m/p [example.com/m/p.test]","Action":"build-output","Output":"# example.com/m/p [example.com/m/p.test]\n"}
{"ImportPath":"example.com/m/p [example.com/m/p.test]","Action":"build-output","Output":"p/p.go:6:9: undefined: x\n"}
{"ImportPath":"example.com/m/p [example.com/m/p.test]","Action":"build-fail"}
{"Time":"2026-01-01T00:00:00Z","Action":"start","Package":"example.com/m/p"}
{"Time":"2026-01-01T00:00:00Z","Action":"output","Package":"example.com/m/p","Output":"FAIL\texample.com/m/p [build failed]\n"}
{"Time":"2026-01-01T00:00:00Z","Action":"fail","Package":"example.com/m/p","Elapsed":0,"FailedBuild":"example.com/m/p [example.com/m/p.test]"}"##;
        let run = parse(text, Some("example.com/m"));
        assert!(run.cases.is_empty());
        assert_eq!(run.static_errors.len(), 1);
        let e = &run.static_errors[0];
        assert_eq!(e.id, "example.com/m/p");
        assert_eq!((e.file.as_deref(), e.line), (Some("p/p.go"), Some(6)));
        assert_eq!(e.error, "undefined: x");
    }

    #[test]
    fn a_panic_fails_the_running_test() {
        let text = r#"{"Action":"run","Package":"m/p","Test":"TestA"}
{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"m/p","Output":"panic: runtime error: index out of range [3] with length 1\n"}
{"Action":"fail","Package":"m/p","Elapsed":0.01}"#;
        let run = parse(text, None);
        assert_eq!(run.cases.len(), 1);
        assert_eq!(run.cases[0].status, Status::Failed);
        assert_eq!(
            run.cases[0].error,
            "panic: runtime error: index out of range [3] with length 1"
        );
    }
}
