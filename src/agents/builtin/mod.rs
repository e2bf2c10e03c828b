//! The built-in analyzer (DESIGN.md §6.3): always available, no agent.
//! `docs/analyzer.md` explains how it decides. In short:
//!
//! 1. every failure (however many) is grouped by normalised signature;
//!    each group's first failures are analysed one by one;
//! 2. each analysed failure is located (crash site in project source, or
//!    the failing test line) and, from a test line, the calls on it are
//!    resolved to definitions in project source ([`resolve`]);
//! 3. a signature group whose failures point at different places is split
//!    so that each group is one root cause; each is classified (`code`,
//!    `test`, `environment`, [`classify`]) and ranked by size and novelty;
//! 4. the result is a fix strategy marked `analysis_quality: "degraded"`
//!    whose confidence says how the places were found.
//!
//! Pure apart from reading files under the project root (and git's view of
//! which are ignored).

mod classify;
mod defs;
mod expr;
mod frames;
mod group;
mod resolve;
mod source;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::artifacts::fix_history::FixHistory;
use crate::artifacts::task::{
    FailureKind, FixStrategy, ModificationPoint, RootCause, TestExecution, TestExecutionMode,
};
use crate::artifacts::test_results::{Failure, TestResults};
use crate::error::Result;
use crate::project::{Lang, re};
use crate::render::Renderer;

/// The one test-path rule, for callers that reach it through the analyzer.
pub use crate::project::is_test_path;
pub use classify::{
    Classification, ClassifiedGroup, ProjectFacts, Verdict, classify, classify_failure,
    classify_project, overall,
};
pub use defs::{Def, DefKind};
pub use frames::{FrameKind, RawFrame, frames_in, search_keys};
pub use group::{Group, group_failures, normalize_message, signature, similarity};
pub use resolve::{How, Target};
pub use source::FnSpan;

use resolve::Resolver;
use source::Project;

/// Failures of one signature analysed one by one, at most.
const PER_SIGNATURE: usize = 25;
/// Failures analysed one by one in all, at most; every signature still
/// gets [`MIN_PER_SIGNATURE`].
const MAX_ANALYSED: usize = 600;
const MIN_PER_SIGNATURE: usize = 3;
/// At most this many modification points are proposed.
const MAX_POINTS: usize = 10;
/// Places of one group kept as points when the analyzer cannot tell which
/// of several definitions is meant.
const AMBIGUOUS_PER_GROUP: usize = 3;
/// The built-in analyzer never claims more than this.
const MAX_CONFIDENCE: f64 = 0.85;
/// Confidence of a group with no place found.
const UNLOCATED: f64 = 0.15;

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
    /// The places to change, as modification points (best first).
    pub called: Vec<ModificationPoint>,
    /// The same places with how each was found.
    pub targets: Vec<Target>,
    pub verdict: Verdict,
    pub cause: String,
}

/// One root cause: failures that share a signature and a place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseGroup {
    pub kind: FailureKind,
    pub signature: String,
    /// The first failure's error line.
    pub error: String,
    pub tests: Vec<String>,
    /// `file:function:lines`, best first (empty unless `code`).
    pub points: Vec<String>,
    /// How the top place was found, and the same in words.
    pub how: Option<How>,
    pub evidence: Option<String>,
    pub confidence: f64,
    /// The top place was already changed by an earlier fix attempt that
    /// did not fix things.
    pub seen_before: bool,
    /// The classification's evidence.
    pub reason: String,
    /// What to change in the environment (`environment` only).
    pub fix: Option<String>,
    pub cause: String,
    /// Test helpers read through, wrappers followed, build output mapped.
    pub context: Vec<String>,
    /// Other definitions the place could be (when unsure).
    pub alternatives: Vec<String>,
    /// Representative location (file, line).
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The representative failure's location with its source lines.
    pub location: Option<Location>,
}

/// Everything the built-in analyzer produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuiltinAnalysis {
    pub strategy: FixStrategy,
    /// Failures by signature, largest first.
    pub groups: Vec<Group>,
    /// Root causes, ranked (environment first, then by size and novelty).
    pub causes: Vec<CauseGroup>,
    pub findings: Vec<Finding>,
    pub classification: Classification,
    /// What to fix in the environment before the code (empty unless some
    /// group is `environment`).
    pub environment_fixes: Vec<String>,
    /// Notes from fix history and limits.
    pub notes: Vec<String>,
}

impl BuiltinAnalysis {
    /// The tests of every `environment` group, sorted.
    pub fn environment_tests(&self) -> Vec<String> {
        let mut tests: Vec<String> = self
            .classification
            .groups
            .iter()
            .filter(|g| g.kind == FailureKind::Environment)
            .flat_map(|g| g.tests.iter().cloned())
            .collect();
        tests.sort();
        tests.dedup();
        tests
    }

    /// What to fix in the environment when every failure group is an
    /// environment failure; empty when any group is for the code or tests.
    pub fn environment_only(&self) -> Vec<String> {
        let groups = &self.classification.groups;
        if !groups.is_empty() && groups.iter().all(|g| g.kind == FailureKind::Environment) {
            self.environment_fixes.clone()
        } else {
            Vec::new()
        }
    }

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
    let lines = project.lines(file);
    let defs = project.defs(file);
    let function = defs::enclosing(&defs, line).map(FnSpan::from);
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

/// Project frames in `lines`, mapped to files under the root, in order.
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
    let name = crate::testing::id::split_libtest(id).1;
    let c = re!(r"^(\S+\.rs) - .*\(line (\d+)\)$").captures(name)?;
    Some((c[1].to_string(), c[2].parse().ok()?))
}

fn fn_text(loc: &Location) -> String {
    match &loc.function {
        Some(f) => format!("{} ({}:{})", f.name, loc.file, loc.line),
        None => format!("{}:{}", loc.file, loc.line),
    }
}

fn point(t: &Target) -> ModificationPoint {
    ModificationPoint {
        file: t.file.clone(),
        function: Some(t.def.name.clone()),
        lines: Some(t.def.lines()),
        extra: Default::default(),
    }
}

/// Where the log and the runner say a failure happened, best first.
fn candidate_locations(
    project: &Project,
    f: &Failure,
    log: &frames::LogIndex,
    go_outputs: Option<&BTreeMap<(String, String), String>>,
    others: &[String],
) -> Vec<(String, u32)> {
    let mut candidates: Vec<(String, u32)> = Vec::new();
    let go_pkg = frames::split_go_id(&f.test).map(|(pkg, _)| pkg);
    let message_lines: Vec<&str> = f.message.lines().collect();
    if let Some(c) = pick(&project_frames(project, &message_lines, go_pkg.as_deref())) {
        candidates.push(c);
    }
    // The log is searched only when the failure's own message shows no
    // location (it costs a scan of the test's part of the log).
    if candidates.is_empty() {
        candidates.extend(log_location(
            project,
            f,
            log,
            go_outputs,
            others,
            go_pkg.as_deref(),
        ));
    }
    if let (Some(file), Some(line)) = (&f.file, f.line)
        && let Some(file) = project.resolve(file, go_pkg.as_deref())
    {
        candidates.push((file, line));
    }
    candidates
}

/// The failure's location in its part of the log.
fn log_location(
    project: &Project,
    f: &Failure,
    log: &frames::LogIndex,
    go_outputs: Option<&BTreeMap<(String, String), String>>,
    others: &[String],
    go_pkg: Option<&str>,
) -> Option<(String, u32)> {
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
    pick(&project_frames(project, &section_refs, go_pkg))
}

/// Analyse one failure.
fn find(
    project: &Project,
    resolver: &Resolver,
    f: &Failure,
    facts: &ProjectFacts,
    log: &frames::LogIndex,
    go_outputs: Option<&BTreeMap<(String, String), String>>,
    others: &[String],
) -> Finding {
    let sig = signature(f);
    let error = f.error.lines().next().unwrap_or("").trim().to_string();
    let verdict = classify_failure(f, facts);
    let test_words = resolve::words(
        f.test
            .rsplit(['/', ':', '›', '#', '>'])
            .next()
            .unwrap_or(""),
    );
    let mut location: Option<Location> = None;
    let mut targets: Vec<Target> = Vec::new();

    if let Some((file, line)) = doctest(&f.test)
        && let Some(file) = project.resolve(&file, None)
    {
        // The doc comment documents the next item.
        let mut loc = locate(project, &file, line);
        let defs = project.defs(&file);
        if let Some(d) = defs
            .iter()
            .find(|d| d.kind == DefKind::Function && d.start >= line)
        {
            loc.function = Some(FnSpan::from(d));
            targets.extend(resolver.place(&file, d.start, How::Crash));
        }
        location = Some(loc);
    } else {
        let candidates = candidate_locations(project, f, log, go_outputs, others);
        let in_test = |file: &str, line: u32| locate(project, file, line).in_test;
        // The crash site: the first location in project source outside
        // tests (or in build output, mapped back to its source).
        for (file, line) in &candidates {
            if in_test(file, *line) {
                continue;
            }
            let t = resolver.place(file, *line, How::Crash);
            if t.is_some() || project.is_source(file) {
                location = Some(locate(project, file, *line));
                targets.extend(t);
                break;
            }
        }
        if location.is_none() {
            // The failing test line: the runner's own when it is in a test
            // (one line number everywhere), else the first in a test.
            let own = f
                .file
                .as_deref()
                .and_then(|file| project.resolve(file, None))
                .zip(f.line)
                .filter(|(file, line)| in_test(file, *line));
            let in_test = own.or_else(|| {
                candidates
                    .iter()
                    .find(|(file, line)| in_test(file, *line))
                    .cloned()
            });
            if let Some((file, line)) = in_test {
                let first_message = format!("{}\n{}", f.error, f.message);
                targets = resolver.at_test_line(&file, line, &test_words, &first_message);
                // Output that differs from the expected text (help, usage,
                // a report): the function that writes the differing line,
                // traced from the literal that line is made of, is a
                // stronger lead than the call that produced the output.
                let written = resolver.text_producer(&file, &first_message);
                if !written.is_empty() {
                    targets = written;
                }
                location = Some(locate(project, &file, line));
            } else if let Some((file, line)) = candidates.first() {
                location = Some(locate(project, file, *line));
            }
        }
    }
    if verdict.kind != FailureKind::Code {
        // Nothing in the code to change for a wrong test or the machine.
        targets.clear();
    }
    let called: Vec<ModificationPoint> = targets.iter().map(point).collect();
    let cause = cause_text(&error, location.as_ref(), &targets, &verdict);
    Finding {
        test: f.test.clone(),
        error,
        signature: sig,
        location,
        called,
        targets,
        verdict,
        cause,
    }
}

fn cause_text(
    error: &str,
    location: Option<&Location>,
    targets: &[Target],
    verdict: &Verdict,
) -> String {
    let error = if error.is_empty() {
        "(no error printed)"
    } else {
        error
    };
    match verdict.kind {
        FailureKind::Environment => {
            return format!(
                "environment: {}; {}",
                verdict.reason,
                verdict.fix.as_deref().unwrap_or("fix the environment")
            );
        }
        FailureKind::Test => return format!("the test is wrong: {}", verdict.reason),
        FailureKind::Code => {}
    }
    let Some(loc) = location else {
        return format!(
            "no location of this failure was found in the output; the error is: {error}"
        );
    };
    let Some(top) = targets.first() else {
        return format!(
            "{error} at {}; no definition in project source could be tied to it",
            fn_text(loc)
        );
    };
    let place = point(top).to_string();
    let context = if top.via.is_empty() {
        String::new()
    } else {
        format!(" (via {})", top.via.join(", "))
    };
    match top.how {
        How::Crash => format!("{error} raised in {}{context}", fn_text(loc)),
        How::Ambiguous => format!(
            "{error} at {}; unsure which definition is meant: {} could each be it",
            fn_text(loc),
            top.alternatives.join(", ")
        ),
        how => format!(
            "{error} at {}; the value under test comes from {place} ({}){context}",
            fn_text(loc),
            how.describe()
        ),
    }
}

/// Test files that use any of `files` (by import, package or crate).
fn importing_tests(project: &Project, files: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for test in project.files().iter().filter(|f| is_test_path(f)) {
        if Lang::family_of(test).is_none() {
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

/// How many failures of each signature group to analyse one by one: up to
/// [`PER_SIGNATURE`] each, fewer when there are many groups, never under
/// [`MIN_PER_SIGNATURE`].
fn quota(groups: usize) -> usize {
    if groups == 0 {
        return 0;
    }
    (MAX_ANALYSED / groups).clamp(MIN_PER_SIGNATURE, PER_SIGNATURE)
}

/// The places a group proposes: its top target, or every candidate when
/// the top one is one of several definitions with the same name.
fn group_targets(targets: &[Target]) -> impl Iterator<Item = &Target> {
    let n = match targets.first() {
        Some(t) if t.how == How::Ambiguous => AMBIGUOUS_PER_GROUP,
        Some(_) => 1,
        None => 0,
    };
    targets
        .iter()
        .take_while(move |t| n == 1 || t.how == How::Ambiguous)
        .take(n)
}

/// Files changed by fix attempts that did not make things better.
fn tried_without_success(history: &FixHistory) -> BTreeMap<String, Vec<u32>> {
    let mut out: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for e in &history.entries {
        if matches!(
            e.outcome.as_str(),
            "improved" | "success" | "partial_success"
        ) {
            continue;
        }
        for f in &e.files_changed {
            out.entry(f.clone()).or_default().push(e.iteration);
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
    let resolver = Resolver::new(&project);
    let facts = ProjectFacts {
        files: project.files().to_vec(),
        manifest: crate::scan::ai_issues::load_manifest(root),
        ignored: classify::Ignored::git(root),
    };
    let failures: Vec<&Failure> = results.failures.iter().filter(|f| !f.flaky).collect();
    let mut notes = Vec::new();
    let flaky = results.failures.len() - failures.len();
    if flaky > 0 {
        notes.push(format!(
            "{flaky} flaky failure(s) (passed on a re-run) were left out"
        ));
    }

    // 1. Signature groups over every failure, in order of first appearance.
    let by_sig = signature_groups(&failures);
    let each = quota(by_sig.len());
    let analysed: Vec<usize> = by_sig
        .iter()
        .flat_map(|(_, members)| members.iter().take(each).copied())
        .collect();
    let skipped = failures.len() - analysed.len();
    if skipped > 0 {
        notes.push(format!(
            "{} failures in {} signature group(s); the first {each} of each group were analysed one by one and the other {skipped} joined their group",
            failures.len(),
            by_sig.len()
        ));
    }

    // 2. Each analysed failure on its own.
    let findings_by_index = find_each(&project, &resolver, &facts, &failures, &analysed, log_text);
    let verdicts: Vec<Verdict> = failures
        .iter()
        .enumerate()
        .map(|(i, f)| match findings_by_index.get(&i) {
            Some(found) => found.verdict.clone(),
            None => classify_failure(f, &facts),
        })
        .collect();

    // 3. Split each signature group by the place its failures point at.
    let tried = tried_without_success(history);
    // (first failure's index, group); the first failure was analysed.
    let mut causes: Vec<(usize, CauseGroup)> = Vec::new();
    for (sig, members) in &by_sig {
        for (_, part) in split_by_place(members, &findings_by_index) {
            let group = cause_group(
                sig,
                &part,
                &findings_by_index[&part[0]],
                &verdicts,
                &failures,
                &tried,
            );
            causes.push((part[0], group));
        }
    }
    // 4. Rank: the environment first (it must be fixed before anything
    // else means something), then by size, a group whose place was already
    // changed without success counting half; ties by first appearance.
    causes.sort_by(|(ia, a), (ib, b)| {
        let score = |g: &CauseGroup| g.tests.len() as f64 * if g.seen_before { 0.5 } else { 1.0 };
        (b.kind == FailureKind::Environment)
            .cmp(&(a.kind == FailureKind::Environment))
            .then(score(b).total_cmp(&score(a)))
            .then(ia.cmp(ib))
    });
    // Modification points: each code group's places, in rank order.
    let points = modification_points(&causes, &findings_by_index);

    let causes: Vec<CauseGroup> = causes.into_iter().map(|(_, g)| g).collect();

    // Fix history: a place changed before without success is a weaker lead.
    let penalty = history_notes(&points, &causes, &tried, &mut notes);

    let affected = affected_tests(&project, &failures, &points);

    let confidence = overall_confidence(&causes, penalty);

    let classification = classification_of(&causes);

    let root_causes = root_causes(&causes);
    let approach = approach_text(&failures, &causes, &points, &classification);
    let groups = group_failures(failures.iter().copied());
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
        failure_kind: classification.kind,
        extra: Default::default(),
    };
    BuiltinAnalysis {
        strategy,
        groups,
        causes,
        findings: findings_by_index.into_values().collect(),
        environment_fixes: classification.environment_fixes(),
        classification,
        notes,
    }
}

/// The parts of one signature group, keyed by the place the analysed
/// failures point at; failures not analysed join the largest part.
fn split_by_place(
    members: &[usize],
    findings_by_index: &BTreeMap<usize, Finding>,
) -> Vec<(Option<String>, Vec<usize>)> {
    let mut parts: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for &i in members {
        let Some(found) = findings_by_index.get(&i) else {
            continue;
        };
        let key = found.targets.first().map(Target::key);
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, m)) => m.push(i),
            None => parts.push((key, vec![i])),
        }
    }
    // Failures not analysed join the largest part of their group.
    if let Some(largest) = (0..parts.len()).max_by_key(|&p| parts[p].1.len()) {
        for &i in members {
            if !findings_by_index.contains_key(&i) {
                parts[largest].1.push(i);
            }
        }
    }
    parts
}

/// Each analysed failure on its own, by its index in `failures`.
fn find_each(
    project: &Project,
    resolver: &Resolver,
    facts: &ProjectFacts,
    failures: &[&Failure],
    analysed: &[usize],
    log_text: &str,
) -> BTreeMap<usize, Finding> {
    let ids: Vec<&str> = analysed
        .iter()
        .map(|&i| failures[i].test.as_str())
        .collect();
    let log_index = frames::LogIndex::new(log_text, &ids);
    let go_outputs = frames::go_json_outputs(log_text);
    let others: Vec<String> = ids.iter().map(|id| frames::stop_key(id)).collect();
    let mut findings_by_index: BTreeMap<usize, Finding> = BTreeMap::new();
    for &i in analysed {
        let f = failures[i];
        let mine = frames::stop_key(&f.test);
        let rest: Vec<String> = others.iter().filter(|o| **o != mine).cloned().collect();
        findings_by_index.insert(
            i,
            find(
                project,
                resolver,
                f,
                facts,
                &log_index,
                go_outputs.as_ref(),
                &rest,
            ),
        );
    }
    findings_by_index
}

fn classification_of(causes: &[CauseGroup]) -> Classification {
    Classification {
        kind: overall(causes.iter().map(|g| g.kind)),
        groups: causes
            .iter()
            .map(|g| ClassifiedGroup {
                signature: g.signature.clone(),
                kind: g.kind,
                reason: g.reason.clone(),
                fix: g.fix.clone(),
                tests: g.tests.clone(),
            })
            .collect(),
    }
}

/// The failing tests and the tests that import a place to change.
fn affected_tests(
    project: &Project,
    failures: &[&Failure],
    points: &[ModificationPoint],
) -> Vec<String> {
    let modified: Vec<String> = points.iter().map(|p| p.file.clone()).collect();
    let mut affected: Vec<String> = failures.iter().map(|f| f.test.clone()).collect();
    for t in importing_tests(project, &modified) {
        if !affected.contains(&t) {
            affected.push(t);
        }
    }
    affected
}

/// Failures grouped by signature, in order of first appearance.
fn signature_groups(failures: &[&Failure]) -> Vec<(String, Vec<usize>)> {
    let mut by_sig: Vec<(String, Vec<usize>)> = Vec::new();
    let mut sig_index: std::collections::HashMap<String, usize> = Default::default();
    for (i, f) in failures.iter().enumerate() {
        let sig = signature(f);
        match sig_index.get(&sig) {
            Some(&g) => by_sig[g].1.push(i),
            None => {
                sig_index.insert(sig.clone(), by_sig.len());
                by_sig.push((sig, vec![i]));
            }
        }
    }
    by_sig
}

/// One cause: the part of a signature group whose failures point at one place.
fn cause_group(
    sig: &str,
    part: &[usize],
    rep: &Finding,
    verdicts: &[Verdict],
    failures: &[&Failure],
    tried: &BTreeMap<String, Vec<u32>>,
) -> CauseGroup {
    let kinds = part.iter().map(|&i| &verdicts[i]);
    let verdict = classify::majority(kinds.clone()).clone();
    let mut points: Vec<String> = Vec::new();
    let mut context: Vec<String> = Vec::new();
    if verdict.kind == FailureKind::Code {
        for t in group_targets(&rep.targets) {
            let p = point(t).to_string();
            if !points.contains(&p) {
                points.push(p);
            }
        }
        if let Some(top) = rep.targets.first() {
            context = top.via.clone();
        }
    }
    let top = rep
        .targets
        .first()
        .filter(|_| verdict.kind == FailureKind::Code);
    let confidence = match verdict.kind {
        FailureKind::Environment => 0.8,
        FailureKind::Test => 0.6,
        FailureKind::Code => top.map_or(UNLOCATED, Target::confidence),
    };
    let seen_before = top.is_some_and(|t| tried.contains_key(&t.file));
    CauseGroup {
        kind: verdict.kind,
        signature: sig.to_string(),
        error: rep.error.clone(),
        tests: part.iter().map(|&i| failures[i].test.clone()).collect(),
        points,
        how: top.map(|t| t.how),
        evidence: top.map(|t| t.how.describe().to_string()),
        confidence,
        seen_before,
        reason: verdict.reason.clone(),
        fix: verdict.fix.clone(),
        cause: cause_text(&rep.error, rep.location.as_ref(), &rep.targets, &verdict),
        context,
        alternatives: top.map(|t| t.alternatives.clone()).unwrap_or_default(),
        file: rep.location.as_ref().map(|l| l.file.clone()),
        line: rep.location.as_ref().map(|l| l.line),
        location: rep.location.clone(),
    }
}

/// Each code group's places, in rank order, at most [`MAX_POINTS`].
fn modification_points(
    causes: &[(usize, CauseGroup)],
    findings_by_index: &BTreeMap<usize, Finding>,
) -> Vec<ModificationPoint> {
    let mut points: Vec<ModificationPoint> = Vec::new();
    for (first, _) in causes.iter().filter(|(_, g)| g.kind == FailureKind::Code) {
        for t in group_targets(&findings_by_index[first].targets) {
            let p = point(t);
            if points.len() < MAX_POINTS
                && !points
                    .iter()
                    .any(|q| q.file == p.file && q.function == p.function)
            {
                points.push(p);
            }
        }
    }
    points
}

/// Notes on places already changed without success and on ambiguous
/// places; returns how much the confidence drops for the former.
fn history_notes(
    points: &[ModificationPoint],
    causes: &[CauseGroup],
    tried: &BTreeMap<String, Vec<u32>>,
    notes: &mut Vec<String>,
) -> f64 {
    let mut penalty = 0.0;
    for p in points {
        if let Some(iterations) = tried.get(&p.file) {
            penalty += 0.1;
            notes.push(format!(
                "{} was already changed in iteration(s) {} without fixing the failures; look beyond it",
                p.file,
                iterations
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for g in causes {
        if g.how == Some(How::Ambiguous) {
            notes.push(format!(
                "unsure where `{}` is fixed: the failing line calls a name defined in several places ({}); confidence lowered",
                g.tests[0],
                g.alternatives.join(", ")
            ));
        }
    }
    penalty
}

/// The analysis's confidence: the groups' weighted by their size, less
/// the history penalty.
fn overall_confidence(causes: &[CauseGroup], penalty: f64) -> f64 {
    let total: usize = causes.iter().map(|g| g.tests.len()).sum::<usize>().max(1);
    let weighted: f64 = causes
        .iter()
        .map(|g| g.confidence * g.tests.len() as f64)
        .sum::<f64>()
        / total as f64;
    let base = if causes.is_empty() {
        UNLOCATED
    } else {
        weighted
    };
    ((base - penalty).clamp(0.05, MAX_CONFIDENCE) * 100.0).round() / 100.0
}

fn root_causes(causes: &[CauseGroup]) -> Vec<RootCause> {
    causes
        .iter()
        .map(|g| RootCause {
            test: g.tests[0].clone(),
            error: g.error.clone(),
            cause: if g.tests.len() > 1 {
                format!("{}; {} failing tests share it", g.cause, g.tests.len())
            } else {
                g.cause.clone()
            },
            file: g.file.clone(),
            line: g.line,
            failure_kind: Some(g.kind),
            extra: Default::default(),
        })
        .collect()
}

fn approach_text(
    failures: &[&Failure],
    causes: &[CauseGroup],
    points: &[ModificationPoint],
    classification: &Classification,
) -> String {
    let head = format!(
        "Built-in analysis (no agent): {} failure(s), {} root cause(s).",
        failures.len(),
        causes.len()
    );
    if classification.kind == Some(FailureKind::Environment) {
        return format!(
            "{head} The environment must be fixed before the code: {}. No code change is proposed for these failures.",
            classification.environment_fixes().join("; ")
        );
    }
    if classification.kind == Some(FailureKind::Test) {
        return format!(
            "{head} The failing tests themselves look wrong: {}. Check the tests; fix them only where they are clearly wrong, never weaken what they check.",
            causes
                .iter()
                .map(|g| g.reason.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if points.is_empty() {
        return format!(
            "{head} No place in project source could be tied to them. Read the failing tests and the code they exercise; fix the code, not the tests."
        );
    }
    format!(
        "{head} Change {} so the failing tests pass, starting with the first; fix the code under test, never weaken or skip the tests.",
        points
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
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
