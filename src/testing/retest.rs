//! Progressive retest (DESIGN.md §5.4, §10.4): after a fix, run as little
//! as can tell whether it worked, and only let a full-suite run complete a
//! session. Pure functions; the caller runs the tests.
//!
//! # Tiers
//!
//! 1. [`Tier::Failed`]: the tests that failed before the fix.
//! 2. [`Tier::Affected`]: the tests the fix may affect — test files that
//!    import a changed file (the context package's import map), the fix
//!    strategy's `affected_tests`, and what the runner's own related-tests
//!    query names ([`related_query`]: `jest --listTests --findRelatedTests`,
//!    nextest `rdeps()`, `pytest --testmon`, or `test.related_command`) —
//!    minus the tests tier 1 already ran.
//! 3. [`Tier::Full`]: the whole suite.
//!
//! A tier that would run ≥ 80 % of the suite ([`TOO_LARGE_PERCENT`]), or
//! that names a test sharing its name with another (`name#2`, which no
//! filter can single out), is skipped for the full suite. So is a tier
//! that would take ≥ 80 % of the full suite's time by the session's own
//! timings ([`SessionCosts`]): a build or a `pretest` script that every
//! run pays makes a subset about as slow as the whole suite. And after a
//! subset run of the session parsed no test at all (the runner's filter
//! does not work for this project), every later retest of the session
//! runs the full suite.
//!
//! # How the loop uses it
//!
//! ```text
//! let plan = retest::plan(&RetestInput { baseline, … });   // once per fix
//! let mut base = baseline.clone();  let mut last = None;
//! loop {
//!     match retest::next(&plan, last) {
//!         NextRun::Tier { tier, ids } => {
//!             let subset = run_tests(ids)?;                      // scope: affected
//!             match retest::merge_tier(&base, &ids, &subset) {
//!                 TierResult::Merged { results, passed } => {
//!                     base = *results;                            // record it
//!                     last = Some((tier, Outcome::of(passed)));
//!                 }
//!                 TierResult::Escalate(why) => last = Some((tier, Outcome::Escalated(why))),
//!             }
//!         }
//!         NextRun::Full(why) => { base = run_tests(None)?; last = Some((Tier::Full, …)); }
//!         NextRun::Done => break,                                 // judge `base`
//!     }
//! }
//! ```
//!
//! What comes next given what the last tier showed ([`next`]):
//!
//! | last tier | showed | next |
//! | --- | --- | --- |
//! | none | | tier 1, else tier 2 when no test failed before, else full |
//! | 1 | a test still fails, the fix changed no file | done (nothing else can have changed) |
//! | 1 | a test still fails | tier 2 (the fix may have broken others too); else, when it made a failing test pass, settled on tier 1 ([`settles_partial_fix`]); else an agent's fix is put back (`cycle::decide::settle`), a person's gets the full run |
//! | 1 | every test passes | tier 2 (tests not run yet), else full |
//! | 2 | a test fails | done |
//! | 2 | every test passes | full (final validation) |
//! | 1 or 2 | execution error ([`Escalation`]) | full; never a regression |
//! | full | anything | done |
//!
//! A subset run that could not judge anything — the tests could not run,
//! nothing parsed, parser `exit-code`, build or collection errors, a
//! selected test missing from the output — is never merged and never a
//! regression: [`merge_tier`] answers [`TierResult::Escalate`] and the
//! full suite decides.

use std::collections::{BTreeSet, HashSet};

use super::detect::{Detected, Framework};
use super::id;
use super::parse::tap::SEP;
use super::results;
use super::select::{self, Args};
use crate::artifacts::test_results::{CaseStatus, Layer, TestResults};
use crate::process::shell_escape;

/// A tier at or above this share of the suite (non-skipped tests) runs as
/// the full suite instead.
pub const TOO_LARGE_PERCENT: usize = 80;

use crate::artifacts::iteration_state::IterationRecord;
pub use crate::artifacts::iteration_state::Tier;
use crate::artifacts::test_results::Scope;
use crate::duration;

/// Everything the tiers depend on, gathered once per fix.
#[derive(Debug, Clone, Copy)]
pub struct RetestInput<'a> {
    /// The results before the fix, which the tiers are merged over (the
    /// last full run, or the merged result of the last retest).
    pub baseline: &'a TestResults,
    /// `cycle.progressive` in the config.
    pub progressive: bool,
    /// The framework has a subset filter ([`can_filter`]).
    pub can_filter: bool,
    /// The fix changed test files (ids may have changed with them).
    pub touched_tests: bool,
    /// Files the fix changed, relative to the root.
    pub changed_files: &'a [String],
    /// Test file → the source files it exercises (the context package's
    /// `test_coverage.existing_tests[]`: imports and naming).
    pub import_map: &'a [(String, Vec<String>)],
    /// `affected_tests` of the fix strategy: test ids or test file paths.
    pub strategy: &'a [String],
    /// What the runner's related-tests query named: test ids or files.
    pub related: &'a [String],
    /// What the session's own runs showed ([`SessionCosts::of`]).
    pub costs: SessionCosts,
}

/// What this session's runs showed about its test command, read from its
/// run records: what a full run costs, how much of a run passes before its
/// first test result (a build, a `pretest` script, the runner's start:
/// every run pays it, a subset too), and whether a subset ran nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionCosts {
    /// The last full run, in milliseconds.
    pub full_ms: Option<u64>,
    /// The fixed cost: the most time before a first test result, in the
    /// last full run and the subset runs after it.
    pub setup_ms: Option<u64>,
    /// A subset run parsed no test: the filter does not work here.
    pub subset_ran_nothing: bool,
}

impl SessionCosts {
    /// From the session's run records; with `timed` false (the config's
    /// `cycle.skip_slow_tiers` off) no tier is judged by its time.
    pub fn of(records: &[IterationRecord], timed: bool) -> SessionCosts {
        let mut costs = SessionCosts::default();
        for r in records {
            let subset = matches!(r.tier, Some(Tier::Failed | Tier::Affected));
            if r.scope == Scope::Full {
                costs.full_ms = r.duration_ms.or(costs.full_ms);
                costs.setup_ms = r.setup_ms;
            } else if subset && r.escalated.is_some() {
                // Nothing parsed: no test passed and at most the command's
                // own failure was recorded.
                costs.subset_ran_nothing |= r.passed == 0 && r.total <= 1;
            } else if subset {
                costs.setup_ms = costs.setup_ms.max(r.setup_ms);
            }
        }
        if !timed {
            costs.setup_ms = None;
        }
        costs
    }

    /// What a tier of `count` of the suite's `suite` tests would take by
    /// these timings, with the full run's time: the fixed cost plus the
    /// tests' share of the rest. `None` when the session has not measured
    /// both.
    pub fn predict(&self, count: usize, suite: usize) -> Option<(u64, u64)> {
        let full = self.full_ms.filter(|&f| f > 0)?;
        let setup = self.setup_ms?.min(full);
        let share = (full - setup) as u128 * count as u128 / suite.max(1) as u128;
        Some((setup + share as u64, full))
    }
}

/// Why a retest runs the whole suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FullReason {
    ProgressiveOff,
    CannotFilter,
    TestsChanged,
    NoCases,
    StaticErrors,
    NothingSelected,
    /// A tier would have run ≥ [`TOO_LARGE_PERCENT`] of the suite.
    TooLarge {
        tier: Tier,
        count: usize,
        suite: usize,
    },
    /// A tier would take ≥ [`TOO_LARGE_PERCENT`] of the full suite's time
    /// by the session's timings.
    TooSlow {
        tier: Tier,
        predicted_ms: u64,
        full_ms: u64,
    },
    /// A subset run of this session parsed no test.
    SubsetRanNothing,
    /// A tier names a test that shares its name with another.
    Duplicated {
        tier: Tier,
        test: String,
    },
    /// A subset run could not judge anything.
    Escalated(Escalation),
    /// Every earlier tier passed: only the full suite can complete.
    Validation,
    /// Tier 1 still fails and no other test is known to be affected: what
    /// else the fix broke is only seen on the full suite, and a fix kept
    /// unseen would have its damage blamed on the next one.
    Unverified,
}

impl std::fmt::Display for FullReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FullReason::ProgressiveOff => {
                f.write_str("progressive testing is off (cycle.progressive)")
            }
            FullReason::CannotFilter => f.write_str("the framework cannot run a subset"),
            FullReason::TestsChanged => f.write_str("the fix changed test files"),
            FullReason::NoCases => f.write_str("the last run named no test cases"),
            FullReason::StaticErrors => f.write_str("the last run had build or collection errors"),
            FullReason::NothingSelected => {
                f.write_str("no failing or affected test is known by id")
            }
            FullReason::TooLarge { tier, count, suite } => write!(
                f,
                "the {} tier would run {count} of {suite} tests (≥ {TOO_LARGE_PERCENT} %)",
                tier.as_str()
            ),
            FullReason::TooSlow {
                tier,
                predicted_ms,
                full_ms,
            } => write!(
                f,
                "the {} tier would take about {} of the full suite's {} (≥ {TOO_LARGE_PERCENT} %: what every run pays before its first test — a build, a pretest script, the runner's start)",
                tier.as_str(),
                duration::millis(*predicted_ms),
                duration::millis(*full_ms),
            ),
            FullReason::SubsetRanNothing => f.write_str(
                "an earlier subset run of this session ran no test: the runner's filter does not work here",
            ),
            FullReason::Duplicated { test, .. } => write!(
                f,
                "`{test}` shares its name with another test; no filter can run just one"
            ),
            FullReason::Escalated(e) => write!(f, "the subset run {e}"),
            FullReason::Validation => f.write_str("final validation"),
            FullReason::Unverified => f.write_str(
                "a test still fails and no other test is known to be affected: the full suite judges the fix",
            ),
        }
    }
}

/// What one tier would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Run(Vec<String>),
    /// Nothing to run in this tier.
    Empty,
    /// Run the full suite instead of this tier.
    Full(FullReason),
}

/// The tiers of one retest, planned once per fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetestPlan {
    /// Set when no tier can run at all.
    pub full: Option<FullReason>,
    pub failed: Selection,
    /// Excludes the tests of `failed`.
    pub affected: Selection,
    /// Tests of the suite that run (non-skipped cases of the baseline).
    pub suite: usize,
    /// The fix changed no file: no test other than the failing ones can
    /// have changed its result, so a tier 1 that still fails ends the
    /// retest (no full run for a fix that did nothing).
    pub nothing_changed: bool,
}

/// What the last tier showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every test the tier ran passed.
    Passed,
    /// A test the tier ran failed.
    Failing,
    /// The tier could not judge anything.
    Escalated(Escalation),
}

impl Outcome {
    pub fn of(passed: bool) -> Outcome {
        if passed {
            Outcome::Passed
        } else {
            Outcome::Failing
        }
    }
}

/// What to run next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextRun {
    /// These ids, with the framework's filter (scope `affected`).
    Tier { tier: Tier, ids: Vec<String> },
    /// The whole suite (scope `full`), and why.
    Full(FullReason),
    /// The retest is over: judge the last (merged) result.
    Done,
}

/// Whether a framework can run a subset of tests at all.
pub fn can_filter(framework: Framework) -> bool {
    select::filter_args(framework, &["x".to_string()]).is_some()
}

/// Plan the tiers of the retest of one fix.
pub fn plan(input: &RetestInput<'_>) -> RetestPlan {
    let b = input.baseline;
    let suite = b
        .cases
        .iter()
        .filter(|c| c.status != CaseStatus::Skipped)
        .count();
    let off = if !input.progressive {
        Some(FullReason::ProgressiveOff)
    } else if !input.can_filter {
        Some(FullReason::CannotFilter)
    } else if input.touched_tests {
        Some(FullReason::TestsChanged)
    } else if b.cases.is_empty() || suite == 0 {
        Some(FullReason::NoCases)
    } else if b.failures.iter().any(|f| f.test_type == Layer::Static) {
        Some(FullReason::StaticErrors)
    } else if input.costs.subset_ran_nothing {
        Some(FullReason::SubsetRanNothing)
    } else {
        None
    };
    if let Some(reason) = off {
        return RetestPlan {
            full: Some(reason),
            failed: Selection::Empty,
            affected: Selection::Empty,
            suite,
            nothing_changed: input.changed_files.is_empty(),
        };
    }
    let known: HashSet<&str> = b.cases.iter().map(|c| c.test.as_str()).collect();
    let failed_ids: Vec<String> = results::failing_ids(b)
        .into_iter()
        .filter(|i| known.contains(i.as_str()))
        .collect();
    let failed = select_tier(
        Tier::Failed,
        failed_ids.clone(),
        suite,
        &known,
        &input.costs,
    );

    let mut entries: Vec<String> = affected_test_files(input.changed_files, input.import_map);
    entries.extend(input.strategy.iter().cloned());
    entries.extend(input.related.iter().cloned());
    let ran: HashSet<&str> = failed_ids.iter().map(String::as_str).collect();
    let affected_ids: Vec<String> = resolve(b, &entries)
        .into_iter()
        .filter(|i| !ran.contains(i.as_str()))
        .collect();
    let affected = select_tier(Tier::Affected, affected_ids, suite, &known, &input.costs);
    RetestPlan {
        full: None,
        failed,
        affected,
        suite,
        nothing_changed: input.changed_files.is_empty(),
    }
}

fn select_tier(
    tier: Tier,
    ids: Vec<String>,
    suite: usize,
    known: &HashSet<&str>,
    costs: &SessionCosts,
) -> Selection {
    if ids.is_empty() {
        return Selection::Empty;
    }
    if let Some(dup) = ids.iter().find(|i| id::is_duplicated(i, known)) {
        return Selection::Full(FullReason::Duplicated {
            tier,
            test: dup.clone(),
        });
    }
    if ids.len() * 100 >= suite * TOO_LARGE_PERCENT {
        return Selection::Full(FullReason::TooLarge {
            tier,
            count: ids.len(),
            suite,
        });
    }
    if let Some((predicted_ms, full_ms)) = costs.predict(ids.len(), suite)
        && predicted_ms as u128 * 100 >= full_ms as u128 * TOO_LARGE_PERCENT as u128
    {
        return Selection::Full(FullReason::TooSlow {
            tier,
            predicted_ms,
            full_ms,
        });
    }
    Selection::Run(ids)
}

/// What to run next, given what the last tier showed (see the table in the
/// module docs).
pub fn next(plan: &RetestPlan, last: Option<(Tier, Outcome)>) -> NextRun {
    let Some((tier, outcome)) = last else {
        if let Some(reason) = &plan.full {
            return NextRun::Full(reason.clone());
        }
        return match (&plan.failed, &plan.affected) {
            (Selection::Run(ids), _) => NextRun::Tier {
                tier: Tier::Failed,
                ids: ids.clone(),
            },
            (Selection::Full(reason), _) => NextRun::Full(reason.clone()),
            (Selection::Empty, Selection::Run(ids)) => NextRun::Tier {
                tier: Tier::Affected,
                ids: ids.clone(),
            },
            (Selection::Empty, Selection::Full(reason)) => NextRun::Full(reason.clone()),
            (Selection::Empty, Selection::Empty) => NextRun::Full(FullReason::NothingSelected),
        };
    };
    match (tier, outcome) {
        (Tier::Full, _) => NextRun::Done,
        (_, Outcome::Escalated(e)) => NextRun::Full(FullReason::Escalated(e)),
        (Tier::Affected, Outcome::Failing) => NextRun::Done,
        (Tier::Failed, Outcome::Failing) if plan.nothing_changed => NextRun::Done,
        (Tier::Failed, Outcome::Failing) => match &plan.affected {
            Selection::Run(ids) => NextRun::Tier {
                tier: Tier::Affected,
                ids: ids.clone(),
            },
            _ => NextRun::Full(FullReason::Unverified),
        },
        (Tier::Failed, Outcome::Passed) => match &plan.affected {
            Selection::Run(ids) => NextRun::Tier {
                tier: Tier::Affected,
                ids: ids.clone(),
            },
            _ => NextRun::Full(FullReason::Validation),
        },
        (Tier::Affected, Outcome::Passed) => NextRun::Full(FullReason::Validation),
    }
}

/// Whether a fix is settled on a tier 1 that still fails instead of
/// running `next` (DESIGN.md §10.4): when the only way to look for damage
/// is the full suite, a fix that made a failing test pass (`improved`) is
/// a partial fix, kept on tier 1's word — the next full run sees whatever
/// else it did, and does not blame the fix after it
/// (`cycle::decide::settle`). An agent's fix that made no failing test
/// pass is put back uncommitted instead (`SettleInput::only_full_left`);
/// only a person's fix gets the full run, and is reverted if it did damage.
pub fn settles_partial_fix(next: &NextRun, improved: bool) -> bool {
    improved && matches!(next, NextRun::Full(FullReason::Unverified))
}

/// Why a subset run could not judge anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Escalation {
    /// The tests could not run (parser `exit-code`, a build, collection or
    /// runner error): the first line of the error.
    ExecutionError(String),
    /// The run parsed no test that ran.
    NothingRan,
    /// Tests the filter selected are not in the output.
    Missing(Vec<String>),
    /// The results merged over name one test twice (an old results file).
    DuplicateIds(Vec<String>),
    /// A selected test shares its name with another (`x` and `x#2`): which
    /// result is which cannot be told.
    Duplicated(String),
    /// An escalation recorded earlier (a resumed retest), as it was shown.
    Recorded(String),
}

impl std::fmt::Display for Escalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Escalation::ExecutionError(e) => write!(f, "could not run the tests: {e}"),
            Escalation::NothingRan => f.write_str("ran no test"),
            Escalation::Missing(ids) => write!(
                f,
                "did not report {} selected test(s): {}",
                ids.len(),
                short_list(ids)
            ),
            Escalation::DuplicateIds(ids) => write!(
                f,
                "cannot be merged: the earlier results name {} test(s) twice: {}",
                ids.len(),
                short_list(ids)
            ),
            Escalation::Duplicated(id) => write!(
                f,
                "cannot be merged: `{id}` shares its name with another test"
            ),
            Escalation::Recorded(why) => f.write_str(why),
        }
    }
}

fn short_list(ids: &[String]) -> String {
    let mut s = ids.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > 3 {
        s.push_str(&format!(", … ({} more)", ids.len() - 3));
    }
    s
}

/// A subset run, judged.
#[derive(Debug, Clone, PartialEq)]
pub enum TierResult {
    /// The subset merged over `base` by test id (scope `affected`);
    /// `passed` when every test the subset ran passed.
    Merged {
        results: Box<TestResults>,
        passed: bool,
    },
    /// Run the full suite instead; this run is never a regression.
    Escalate(Escalation),
}

/// Merge a subset run (`selected` = the ids it was asked to run) over
/// `base`, keyed on test ids, or say why it must escalate to the full suite.
pub fn merge_tier(base: &TestResults, selected: &[String], subset: &TestResults) -> TierResult {
    let mut seen: HashSet<&str> = HashSet::new();
    let twice: BTreeSet<String> = base
        .cases
        .iter()
        .filter(|c| !seen.insert(c.test.as_str()))
        .map(|c| c.test.clone())
        .collect();
    if !twice.is_empty() {
        return TierResult::Escalate(Escalation::DuplicateIds(twice.into_iter().collect()));
    }
    if let Some(dup) = duplicated_in(base, selected) {
        return TierResult::Escalate(Escalation::Duplicated(dup.clone()));
    }
    if let Some(e) = subset
        .failures
        .iter()
        .find(|f| f.test_type == Layer::Static)
    {
        let error = if e.error.is_empty() {
            format!("`{}` failed", e.test)
        } else {
            e.error.clone()
        };
        return TierResult::Escalate(Escalation::ExecutionError(error));
    }
    if subset.parser == "exit-code" {
        return TierResult::Escalate(Escalation::ExecutionError(format!(
            "`{}` exited with {:?} and printed no result wfx could read",
            subset.command, subset.exit_code
        )));
    }
    if subset.passed + subset.failed == 0 && subset.errors == 0 {
        return TierResult::Escalate(Escalation::NothingRan);
    }
    let reported: HashSet<&str> = subset.cases.iter().map(|c| c.test.as_str()).collect();
    let missing: Vec<String> = selected
        .iter()
        .filter(|i| !reported.contains(i.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return TierResult::Escalate(Escalation::Missing(missing));
    }
    let passed = subset.failed == 0
        && subset.errors == 0
        && subset
            .cases
            .iter()
            .all(|c| !matches!(c.status, CaseStatus::Failed | CaseStatus::Error));
    TierResult::Merged {
        results: Box::new(results::merge(base, subset)),
        passed,
    }
}

/// The first of `ids` that shares its name with another test of `base`
/// (`x` and `x#2`): no filter can run just one of them, so a subset that
/// names it must be the full suite (DESIGN.md §10.4).
pub fn duplicated_in<'a>(base: &TestResults, ids: &'a [String]) -> Option<&'a String> {
    let known: HashSet<&str> = base.cases.iter().map(|c| c.test.as_str()).collect();
    ids.iter().find(|i| id::is_duplicated(i, &known))
}

/// Test files that exercise a changed file, by the import map. A test that
/// imports a package's entry file (`__init__.py`, `index.js`, `lib.rs`,
/// `mod.rs`, …) may use any module below it (packages re-export them), so
/// a change anywhere in that directory affects it.
pub fn affected_test_files(
    changed: &[String],
    import_map: &[(String, Vec<String>)],
) -> Vec<String> {
    let changed: Vec<&str> = changed.iter().map(|c| c.trim_start_matches("./")).collect();
    let covers = |source: &str| {
        let under = package_dir(source).map(|d| format!("{d}/"));
        changed
            .iter()
            .any(|c| *c == source || under.as_deref().is_some_and(|d| c.starts_with(d)))
    };
    import_map
        .iter()
        .filter(|(test, sources)| {
            changed.contains(&test.as_str()) || sources.iter().any(|s| covers(s))
        })
        .map(|(test, _)| test.clone())
        .collect()
}

/// The directory a package entry file stands for.
fn package_dir(source: &str) -> Option<&str> {
    const ENTRIES: &[&str] = &[
        "__init__.py",
        "index.js",
        "index.ts",
        "index.mjs",
        "index.cjs",
        "index.jsx",
        "index.tsx",
        "lib.rs",
        "mod.rs",
        "main.rs",
    ];
    let (dir, name) = source.rsplit_once('/')?;
    ENTRIES.contains(&name).then_some(dir)
}

/// Test ids of `baseline` that entries name: an id itself, a test file or
/// directory (every test in it), or a Rust source file (the unit tests of
/// its modules). Unknown entries are dropped: an id the runner does not
/// know would make some runners fail before running anything.
pub fn resolve(baseline: &TestResults, entries: &[String]) -> Vec<String> {
    let known: HashSet<&str> = baseline.cases.iter().map(|c| c.test.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut push = |id: &str, out: &mut Vec<String>| {
        if taken.insert(id.to_string()) {
            out.push(id.to_string());
        }
    };
    for entry in entries {
        let entry = entry.trim().trim_start_matches("./");
        if entry.is_empty() {
            continue;
        }
        if known.contains(entry) {
            push(entry, &mut out);
            continue;
        }
        let dir = format!("{}/", entry.trim_end_matches('/'));
        for c in &baseline.cases {
            let in_file = |f: &str| f == entry || f.starts_with(&dir);
            let hit = c.file.as_deref().is_some_and(in_file)
                || id_file(&c.test).is_some_and(in_file)
                || rust_module_files(&c.test).iter().any(|f| f == entry);
            if hit {
                push(&c.test, &mut out);
            }
        }
    }
    out
}

/// The file an id starts with: pytest `tests/test_x.py::…`, JavaScript
/// `file › …`.
fn id_file(id: &str) -> Option<&str> {
    let first = id.split("::").next()?.split(SEP).next()?;
    (first.contains('/') || first.contains('.')).then_some(first)
}

/// Source files a Rust unit test's module path points to:
/// `rust_calc::stats::tests::mean` → `src/stats.rs`, `src/stats/mod.rs`,
/// `src/stats/tests.rs`, …; the crate root's tests → `src/lib.rs`,
/// `src/main.rs`.
fn rust_module_files(id: &str) -> Vec<String> {
    let (Some(_), path) = id::split_libtest(id) else {
        return Vec::new();
    };
    if path.contains(' ') {
        return Vec::new();
    }
    let segs: Vec<&str> = path.split("::").collect();
    let mut out = vec!["src/lib.rs".to_string(), "src/main.rs".to_string()];
    for n in 1..segs.len() {
        let dir = segs[..n].join("/");
        out.push(format!("src/{dir}.rs"));
        out.push(format!("src/{dir}/mod.rs"));
    }
    out
}

/// A query that asks the runner which tests a change affects, without
/// running them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedQuery {
    /// Run with `sh -c` in the root.
    pub command: String,
    pub format: RelatedFormat,
}

/// How to read a related-tests query's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelatedFormat {
    /// One test file per line (`jest --listTests`), possibly absolute.
    Paths,
    /// `binary-id test-name` per line (`cargo nextest list --message-format oneline`).
    NextestList,
    /// pytest node ids (`--collect-only -q`).
    PytestIds,
    /// `test.related_command`: test ids or files, one per line.
    Lines,
}

/// What [`related_query`] needs besides the detected command.
#[derive(Debug, Clone, Default)]
pub struct RelatedSetup {
    /// `test.related_command`, with `{files}` for the changed files.
    pub configured: Option<String>,
    /// Cargo packages (directory relative to the root, crate name with
    /// `_` for `-`); nextest's `rdeps()` is asked only in a workspace of
    /// several packages.
    pub packages: Vec<(String, String)>,
    /// The project uses pytest-testmon (a `.testmondata` file exists).
    pub testmon: bool,
}

/// The runner's own related-tests query for `changed` files, if it has
/// one: the configured `test.related_command`, `jest --listTests
/// --findRelatedTests`, `cargo nextest list -E 'rdeps(…)'`, `pytest
/// --testmon --collect-only -q`. vitest has no query (`vitest related`
/// runs the tests and `vitest list` has no `--related`): the import map
/// stands for it.
pub fn related_query(
    detected: &Detected,
    changed: &[String],
    setup: &RelatedSetup,
) -> Option<RelatedQuery> {
    if changed.is_empty() {
        return None;
    }
    let files = changed
        .iter()
        .map(|f| shell_escape(f))
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(cmd) = setup.configured.as_deref().filter(|c| !c.trim().is_empty()) {
        return Some(RelatedQuery {
            command: cmd.replace("{files}", &files),
            format: RelatedFormat::Lines,
        });
    }
    match detected.framework {
        Framework::Jest => {
            let mut runner = vec!["--listTests".to_string(), "--findRelatedTests".to_string()];
            runner.extend(changed.iter().cloned());
            let args = Args {
                runner,
                ..Args::default()
            };
            Some(RelatedQuery {
                command: select::compose_for(detected, &args),
                format: RelatedFormat::Paths,
            })
        }
        Framework::Nextest if setup.packages.len() > 1 => {
            let mut names: Vec<&str> = Vec::new();
            for f in changed {
                let owner = setup
                    .packages
                    .iter()
                    .filter(|(dir, _)| dir.is_empty() || f.starts_with(&format!("{dir}/")))
                    .max_by_key(|(dir, _)| dir.len());
                if let Some((_, name)) = owner
                    && !names.contains(&name.as_str())
                {
                    names.push(name);
                }
            }
            if names.is_empty() {
                return None;
            }
            // Crate names spell `-` as `_`; the package may use either.
            let expr = names
                .iter()
                .map(|n| format!("rdeps(/^{}$/)", regex::escape(n).replace('_', "[-_]")))
                .collect::<Vec<_>>()
                .join(" | ");
            Some(RelatedQuery {
                command: format!(
                    "cargo nextest list --message-format oneline -E {}",
                    shell_escape(&expr)
                ),
                format: RelatedFormat::NextestList,
            })
        }
        Framework::Pytest if setup.testmon => {
            let args = Args {
                runner: vec![
                    "--testmon".to_string(),
                    "--collect-only".to_string(),
                    "-q".to_string(),
                ],
                ..Args::default()
            };
            Some(RelatedQuery {
                command: select::compose_for(detected, &args),
                format: RelatedFormat::PytestIds,
            })
        }
        _ => None,
    }
}

/// Test files or ids from a related-tests query's output; absolute paths
/// under `root` are made relative, lines that name nothing are dropped.
pub fn parse_related(format: RelatedFormat, output: &str, root: &str) -> Vec<String> {
    let prefix = format!("{}/", root.trim_end_matches('/'));
    let mut out: Vec<String> = Vec::new();
    for line in output.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let item = match format {
            RelatedFormat::Paths => {
                let rel = line.strip_prefix(&prefix).unwrap_or(line);
                let is_path = !rel.starts_with('/')
                    && !rel.contains(' ')
                    && rel.contains('.')
                    && !rel.starts_with('>');
                is_path.then(|| rel.to_string())
            }
            RelatedFormat::NextestList => {
                let mut parts = line.split(' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(b), Some(t), None) if !b.is_empty() && !t.is_empty() => {
                        Some(line.to_string())
                    }
                    _ => None,
                }
            }
            RelatedFormat::PytestIds => line.contains("::").then(|| line.to_string()),
            RelatedFormat::Lines => Some(line.strip_prefix(&prefix).unwrap_or(line).to_string()),
        };
        if let Some(item) = item
            && !out.contains(&item)
        {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests;
