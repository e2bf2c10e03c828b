//! The built-in analyzer (DESIGN.md §6.3): always available, no agent. It
//! groups failures by normalised signature, finds where each failed in the
//! output (tracebacks, panics, stacks, compiler errors), maps locations to
//! project files, reads the source to name the function to change, and
//! turns that into a fix strategy marked `analysis_quality: "degraded"`.
//!
//! Pure apart from reading files under the project root.

mod frames;
mod source;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::artifacts::fix_history::FixHistory;
use crate::artifacts::task::{
    FixStrategy, ModificationPoint, RootCause, TestExecution, TestExecutionMode,
};
use crate::artifacts::test_results::{Failure, TestResults};
use crate::error::Result;
use crate::render::Renderer;

pub use frames::{FrameKind, RawFrame, frames_in, search_keys};
pub use source::{FnSpan, Lang, is_foreign_path, is_test_path};

use source::Project;

/// At most this many failures are analysed one by one.
const MAX_FAILURES: usize = 50;
/// At most this many modification points are proposed.
const MAX_POINTS: usize = 10;
/// At most this many affected tests are listed.
const MAX_AFFECTED: usize = 100;
/// The built-in analyzer never claims more than this.
const MAX_CONFIDENCE: f64 = 0.85;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// A message with everything that varies between occurrences of the same
/// error stripped: quoted values, paths, hex, numbers (DESIGN.md §5.3).
pub fn normalize_message(msg: &str) -> String {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    static HEX: OnceLock<Regex> = OnceLock::new();
    static PATH: OnceLock<Regex> = OnceLock::new();
    static NUM: OnceLock<Regex> = OnceLock::new();
    static WS: OnceLock<Regex> = OnceLock::new();
    let s = re(&ANSI, r"\x1b\[[0-9;?]*[ -/]*[@-~]").replace_all(msg, "");
    let s = re(&QUOTED, r#"'[^'\n]*'|"[^"\n]*"|`[^`\n]*`"#).replace_all(&s, "<q>");
    let s = re(&HEX, r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8,}\b").replace_all(&s, "<hex>");
    let s = re(
        &PATH,
        r"(?:[A-Za-z]:)?[\w.~-]*[/\\][\w~-][\w./\\~-]*(?::\d+)*",
    )
    .replace_all(&s, "<path>");
    let s = re(&NUM, r"\b\d+(?:\.\d+)?").replace_all(&s, "<n>");
    re(&WS, r"\s+").replace_all(s.trim(), " ").into_owned()
}

/// The signature failures are grouped by: the first line of the error (its
/// type and message), normalised.
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
pub fn group_failures(failures: &[Failure]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for f in failures {
        let sig = signature(f);
        match groups.iter_mut().find(|g| g.signature == sig) {
            Some(g) => g.tests.push(f.test.clone()),
            None => groups.push(Group {
                signature: sig,
                error: f.error.lines().next().unwrap_or("").to_string(),
                tests: vec![f.test.clone()],
            }),
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

/// A location in a project file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: u32,
    /// The enclosing function, when it can be read from the source.
    pub function: Option<FnSpan>,
    /// In test code (by path or because the function is a test).
    pub in_test: bool,
    /// A few source lines around the location, numbered.
    pub excerpt: String,
}

/// What the analyzer found for one failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub test: String,
    pub error: String,
    pub signature: String,
    /// Where it failed (crash site, or the failing assertion).
    pub location: Option<Location>,
    /// Functions of the code under test that the failing line calls.
    pub called: Vec<ModificationPoint>,
    pub cause: String,
}

/// Everything the built-in analyzer produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuiltinAnalysis {
    pub strategy: FixStrategy,
    pub groups: Vec<Group>,
    pub findings: Vec<Finding>,
    /// Notes from fix history and limits (omitted failures, …).
    pub notes: Vec<String>,
}

impl BuiltinAnalysis {
    /// Modification points as `file:function:lines`.
    pub fn points_text(&self) -> Vec<String> {
        self.strategy
            .modification_points
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

fn excerpt(lines: &[String], line: u32) -> String {
    let i = line as usize;
    let from = i.saturating_sub(3).max(1);
    let to = (i + 2).min(lines.len());
    (from..=to)
        .map(|n| {
            let mark = if n == i { ">" } else { " " };
            format!("{mark}{n:>5} | {}", lines[n - 1])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn locate(project: &Project, file: &str, line: u32) -> Location {
    let lang = Lang::of(file);
    let lines = project.lines(file);
    let function = lines
        .as_deref()
        .and_then(|l| source::enclosing_function(l, line, lang));
    let in_test = is_test_path(file) || function.as_ref().is_some_and(|f| f.is_test);
    Location {
        file: file.to_string(),
        line,
        excerpt: lines
            .as_deref()
            .filter(|l| (line as usize) <= l.len() && line > 0)
            .map(|l| excerpt(l, line))
            .unwrap_or_default(),
        function,
        in_test,
    }
}

/// Project frames in `lines`, mapped to project files, in order.
fn project_frames(
    project: &Project,
    lines: &[&str],
    go_pkg: Option<&str>,
) -> Vec<(RawFrame, String)> {
    let mut out = Vec::new();
    for l in lines {
        for f in frames_in(l) {
            let hint = f.hint.clone().or_else(|| go_pkg.map(str::to_string));
            if let Some(file) = project.resolve(&f.path, hint.as_deref()) {
                out.push((f, file));
            }
        }
    }
    out
}

/// The failure's own location among frames: the innermost Python frame,
/// else the first panic / compiler / stack frame, else a declared one.
fn pick(frames: &[(RawFrame, String)]) -> Option<(String, u32)> {
    if let Some((f, file)) = frames
        .iter()
        .rev()
        .find(|(f, _)| f.kind == FrameKind::Python)
    {
        return Some((file.clone(), f.line));
    }
    frames
        .iter()
        .find(|(f, _)| f.kind != FrameKind::Declared)
        .or_else(|| frames.first())
        .map(|(f, file)| (file.clone(), f.line))
}

/// A cargo doctest id: `rust_calc::src/lib.rs - divide (line 16)` (the
/// target prefix is optional).
fn doctest(id: &str) -> Option<(String, u32)> {
    static DOC: OnceLock<Regex> = OnceLock::new();
    let name = crate::testing::id::split_libtest(id).1;
    let c = re(&DOC, r"^(\S+\.rs) - .*\(line (\d+)\)$").captures(name)?;
    Some((c[1].to_string(), c[2].parse().ok()?))
}

/// Functions of non-test code called from the failing test line (or the
/// lines of the test just above it), found by reading the source.
fn called_functions(project: &Project, loc: &Location) -> Vec<ModificationPoint> {
    let Some(lines) = project.lines(&loc.file) else {
        return Vec::new();
    };
    let lang = Lang::of(&loc.file);
    let test_name = loc.function.as_ref().map(|f| f.name.clone());
    let lowest = loc
        .function
        .as_ref()
        .map_or(loc.line.saturating_sub(5), |f| f.start);
    let imported = source::imports(&lines, lang);
    let candidates: Vec<&String> = project
        .files()
        .iter()
        .filter(|f| Lang::of(f) == lang && lang != Lang::Other)
        .collect();
    let mut line = loc.line;
    while line >= lowest.max(1) && line as usize <= lines.len() {
        let mut found = Vec::new();
        for name in source::called_names(&lines[line as usize - 1]) {
            if Some(&name) == test_name.as_ref() {
                continue;
            }
            // Prefer the file under test, files the test imports, then any.
            let mut best: Option<(u8, String, FnSpan)> = None;
            for file in &candidates {
                let same = **file == loc.file;
                if is_test_path(file) && !same {
                    continue;
                }
                let Some(src) = project.lines(file) else {
                    continue;
                };
                let Some(span) = source::find_definition(&src, &name, lang) else {
                    continue;
                };
                let stem = file.rsplit_once('.').map_or(file.as_str(), |(s, _)| s);
                let module = stem.replace('/', ".");
                let rank = if same {
                    0
                } else if imported.iter().any(|m| {
                    module.ends_with(m.as_str())
                        || m.ends_with(stem.rsplit('/').next().unwrap_or(stem))
                }) {
                    1
                } else {
                    2
                };
                if best.as_ref().is_none_or(|(r, _, _)| rank < *r) {
                    best = Some((rank, (*file).clone(), span));
                }
            }
            if let Some((_, file, span)) = best {
                found.push(ModificationPoint {
                    file,
                    function: Some(span.name.clone()),
                    lines: Some(span.lines()),
                    extra: Default::default(),
                });
            }
        }
        if !found.is_empty() {
            return found;
        }
        line -= 1;
    }
    Vec::new()
}

fn fn_text(loc: &Location) -> String {
    match &loc.function {
        Some(f) => format!("{} ({}:{})", f.name, loc.file, loc.line),
        None => format!("{}:{}", loc.file, loc.line),
    }
}

/// Analyse one failure.
fn find(
    project: &Project,
    f: &Failure,
    log: &frames::LogIndex,
    go_outputs: Option<&BTreeMap<(String, String), String>>,
    others: &[String],
) -> Finding {
    let sig = signature(f);
    let error = f.error.lines().next().unwrap_or("").trim().to_string();
    let mut candidates: Vec<(String, u32)> = Vec::new();
    if let Some((file, line)) = doctest(&f.test)
        && let Some(file) = project.resolve(&file, None)
    {
        candidates.push((file, line));
    }
    let go_pkg = frames::split_go_id(&f.test).map(|(pkg, _)| pkg);
    let message_lines: Vec<&str> = f.message.lines().collect();
    if let Some(c) = pick(&project_frames(project, &message_lines, go_pkg.as_deref())) {
        candidates.push(c);
    }
    let section: Vec<String> = match (go_outputs, frames::split_go_id(&f.test)) {
        (Some(map), Some((pkg, name))) => map
            .get(&(pkg.clone(), name.clone()))
            .or_else(|| map.iter().find(|((_, t), _)| *t == name).map(|(_, v)| v))
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default(),
        _ => log
            .section(&f.test, others)
            .into_iter()
            .map(str::to_string)
            .collect(),
    };
    let section_refs: Vec<&str> = section.iter().map(String::as_str).collect();
    if let Some(c) = pick(&project_frames(project, &section_refs, go_pkg.as_deref())) {
        candidates.push(c);
    }
    if let (Some(file), Some(line)) = (&f.file, f.line)
        && let Some(file) = project.resolve(file, go_pkg.as_deref())
    {
        candidates.push((file, line));
    }
    let doc = doctest(&f.test).is_some();
    let chosen = if doc {
        candidates.first().cloned()
    } else {
        let located: Vec<Location> = candidates
            .iter()
            .map(|(file, line)| locate(project, file, *line))
            .collect();
        located
            .iter()
            .position(|l| !l.in_test)
            .or(if located.is_empty() { None } else { Some(0) })
            .map(|i| candidates[i].clone())
    };
    let mut location = chosen.map(|(file, line)| locate(project, &file, line));
    let mut called = Vec::new();
    if let Some(loc) = location.as_mut() {
        if doc {
            // The doc comment documents the next item.
            if let Some(lines) = project.lines(&loc.file) {
                let lang = Lang::of(&loc.file);
                loc.function = (loc.line as usize..lines.len())
                    .find_map(|i| source::enclosing_function(&lines, i as u32 + 1, lang));
                if let Some(span) = &loc.function {
                    called.push(ModificationPoint {
                        file: loc.file.clone(),
                        function: Some(span.name.clone()),
                        lines: Some(span.lines()),
                        extra: Default::default(),
                    });
                }
            }
        } else if loc.in_test {
            called = called_functions(project, loc);
        }
    }
    let cause = match &location {
        None => format!(
            "no location of this failure was found in the output; the error is: {}",
            if error.is_empty() {
                "(none printed)"
            } else {
                &error
            }
        ),
        Some(loc) if doc => format!(
            "the documentation example at {}:{} fails: {}",
            loc.file,
            loc.line,
            loc.function
                .as_ref()
                .map_or("its item".to_string(), |f| format!("check {}", f.name))
        ),
        Some(loc) if !loc.in_test => format!("{error} raised in {}", fn_text(loc)),
        Some(loc) if !called.is_empty() => format!(
            "{error} at {}; the value under test comes from {}",
            fn_text(loc),
            called
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(loc) => format!("{error} at {}", fn_text(loc)),
    };
    Finding {
        test: f.test.clone(),
        error,
        signature: sig,
        location,
        called,
        cause,
    }
}

/// Test files that use any of `files` (by import, package or crate).
fn importing_tests(project: &Project, files: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for test in project.files().iter().filter(|f| is_test_path(f)) {
        if Lang::of(test) == Lang::Other {
            continue;
        }
        let Some(lines) = project.lines(test) else {
            continue;
        };
        if files
            .iter()
            .any(|src| !is_test_path(src) && source::test_uses(test, &lines, src))
        {
            out.push(test.clone());
        }
    }
    out
}

/// Run the built-in analyzer. `log_text` is the test output (the whole log
/// or its head and tail); `root` the project root.
pub fn analyze(
    results: &TestResults,
    log_text: &str,
    root: &Path,
    history: &FixHistory,
) -> BuiltinAnalysis {
    let project = Project::scan(root);
    let failures: Vec<&Failure> = results.failures.iter().filter(|f| !f.flaky).collect();
    let mut notes = Vec::new();
    if failures.len() > MAX_FAILURES {
        notes.push(format!(
            "{} failures; the first {MAX_FAILURES} were analysed one by one",
            failures.len()
        ));
    }
    let groups = group_failures(&results.failures);
    let ids: Vec<&str> = failures
        .iter()
        .take(MAX_FAILURES)
        .map(|f| f.test.as_str())
        .collect();
    let log_index = frames::LogIndex::new(log_text, &ids);
    let go_outputs = frames::go_json_outputs(log_text);
    let others: Vec<String> = ids.iter().map(|id| frames::stop_key(id)).collect();
    let findings: Vec<Finding> = failures
        .iter()
        .take(MAX_FAILURES)
        .map(|f| {
            let mine = frames::stop_key(&f.test);
            let rest: Vec<String> = others.iter().filter(|o| **o != mine).cloned().collect();
            find(&project, f, &log_index, go_outputs.as_ref(), &rest)
        })
        .collect();

    let mut points: Vec<ModificationPoint> = Vec::new();
    fn add_point(points: &mut Vec<ModificationPoint>, p: ModificationPoint) {
        if points.len() < MAX_POINTS
            && !points
                .iter()
                .any(|q| q.file == p.file && q.function == p.function)
        {
            points.push(p);
        }
    }
    for finding in &findings {
        match &finding.location {
            Some(loc) if !loc.in_test => add_point(
                &mut points,
                ModificationPoint {
                    file: loc.file.clone(),
                    function: loc.function.as_ref().map(|f| f.name.clone()),
                    lines: Some(
                        loc.function
                            .as_ref()
                            .map_or(loc.line.to_string(), FnSpan::lines),
                    ),
                    extra: Default::default(),
                },
            ),
            _ => {}
        }
        for p in &finding.called {
            add_point(&mut points, p.clone());
        }
    }
    // Nothing in code under test: point at the failing test's own lines so
    // a person knows where to look (the prompt forbids weakening tests).
    if points.is_empty() {
        for finding in &findings {
            if let Some(loc) = &finding.location {
                add_point(
                    &mut points,
                    ModificationPoint {
                        file: loc.file.clone(),
                        function: loc.function.as_ref().map(|f| f.name.clone()),
                        lines: Some(loc.line.to_string()),
                        extra: Default::default(),
                    },
                );
            }
        }
    }

    // Fix history: a place changed before without success is a weaker lead.
    let mut penalty = 0.0;
    for p in &points {
        let tried: Vec<u32> = history
            .entries
            .iter()
            .filter(|e| e.files_changed.contains(&p.file))
            .filter(|e| {
                !matches!(
                    e.outcome.as_str(),
                    "improved" | "success" | "partial_success"
                )
            })
            .map(|e| e.iteration)
            .collect();
        if !tried.is_empty() {
            penalty += 0.1;
            notes.push(format!(
                "{} was already changed in iteration(s) {} without fixing the failures; look beyond it",
                p.file,
                tried.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
    }

    let modified: Vec<String> = points.iter().map(|p| p.file.clone()).collect();
    let mut affected: Vec<String> = failures.iter().map(|f| f.test.clone()).collect();
    for t in importing_tests(&project, &modified) {
        if !affected.contains(&t) {
            affected.push(t);
        }
    }
    affected.truncate(MAX_AFFECTED);

    let n = findings.len().max(1) as f64;
    let per: f64 = findings
        .iter()
        .map(|f| {
            let mut c: f64 = 0.2;
            if let Some(loc) = &f.location {
                c += 0.25;
                if !loc.in_test || !f.called.is_empty() {
                    c += 0.25;
                }
                if loc.function.is_some() {
                    c += 0.1;
                }
            }
            c
        })
        .sum::<f64>()
        / n;
    let confidence = ((per - penalty).clamp(0.05, MAX_CONFIDENCE) * 100.0).round() / 100.0;

    let root_causes: Vec<RootCause> = findings
        .iter()
        .map(|f| RootCause {
            test: f.test.clone(),
            error: f.error.clone(),
            cause: f.cause.clone(),
            file: f.location.as_ref().map(|l| l.file.clone()),
            line: f.location.as_ref().map(|l| l.line),
            extra: Default::default(),
        })
        .collect();
    let approach = if points.is_empty() {
        format!(
            "Built-in analysis (no agent): {} failure(s) in {} group(s), but no location in project code was found in the output. Read the failing tests and the code they exercise; fix the code, not the tests.",
            failures.len(),
            groups.len()
        )
    } else {
        format!(
            "Built-in analysis (no agent): {} failure(s) in {} group(s). Change {} so the failing tests pass; fix the code under test, never weaken or skip the tests.",
            failures.len(),
            groups.len(),
            points
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let strategy = FixStrategy {
        approach,
        root_causes,
        modification_points: points,
        test_execution: TestExecution {
            mode: TestExecutionMode::AffectedOnly,
            affected_tests: affected,
            extra: Default::default(),
        },
        confidence_score: confidence,
        expected_outcome: format!(
            "The {} failing test(s) pass and no other test starts failing.",
            failures.len()
        ),
        criticality_overrides: None,
        extra: Default::default(),
    };
    BuiltinAnalysis {
        strategy,
        groups,
        findings,
        notes,
    }
}

/// Render `iteration-N-analysis.md` for a built-in analysis alone (no
/// agent was tried).
pub fn markdown(renderer: &Renderer, iteration: u32, analysis: &BuiltinAnalysis) -> Result<String> {
    super::report::render(
        renderer,
        &super::report::ReportInput {
            iteration,
            quality: crate::artifacts::task::AnalysisQuality::Degraded,
            tool: super::BUILTIN.into(),
            tried: Vec::new(),
            strategy: &analysis.strategy,
            agent_text: None,
            builtin: Some(analysis),
            cost_capped: None,
        },
    )
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
        ] {
            assert_eq!(normalize_message(msg), want, "{msg}");
        }
    }
}
