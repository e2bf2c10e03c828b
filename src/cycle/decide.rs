//! The decisions of the fix loop (DESIGN.md §5.2–§5.3) as pure functions:
//! no I/O, no clock, table-tested. The dispatcher feeds them what happened
//! and performs what they decide.

use std::collections::BTreeSet;

use crate::artifacts::iteration_state::{IterationRecord, IterationResult, Strategy};
use crate::artifacts::test_results::{Criticality, Scope, TestResults};

/// The limits of one session (config, flags and task meta resolved).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_iterations: u32,
    pub pass_threshold: f64,
    pub regression_threshold_pp: f64,
    pub stuck_after: u32,
    pub no_progress_limit: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_iterations: 10,
            pass_threshold: 95.0,
            regression_threshold_pp: 10.0,
            stuck_after: 3,
            no_progress_limit: 4,
        }
    }
}

/// `max_iterations` precedence: CLI flag > IMPL-002 meta > config > 10.
pub fn resolve_max_iterations(
    flag: Option<u32>,
    task_meta: Option<u32>,
    config: Option<u32>,
) -> u32 {
    flag.or(task_meta).or(config).unwrap_or(10)
}

/// What a test run means for the session (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunVerdict {
    /// 100 % and exit 0 on the full suite.
    FullSuccess,
    /// ≥ threshold and every failure low, on the full suite.
    PartialSuccess,
    /// Every re-run test passes but only a subset ran: confirm on the full suite.
    NeedsFullRun,
    /// Failing tests remain.
    Failing,
    /// Non-zero exit with no parsed tests, or no tests at all.
    ExecutionError,
}

/// A run with a non-zero exit and zero parsed tests, or zero tests with
/// exit 0, is an execution error, never a pass.
pub fn is_execution_error(r: &TestResults) -> bool {
    // The runner reports such a run as static errors only (build failure,
    // crash, collection error) or as nothing at all.
    r.passed + r.failed == 0
}

pub fn verdict(r: &TestResults, limits: &Limits) -> RunVerdict {
    if is_execution_error(r) {
        return RunVerdict::ExecutionError;
    }
    let all_pass = r.failed == 0 && r.errors == 0;
    match (r.scope, all_pass) {
        (Scope::Affected, true) => RunVerdict::NeedsFullRun,
        (Scope::Full, true) if r.exit_code == Some(0) => RunVerdict::FullSuccess,
        // All parsed tests pass but the command failed (e.g. a coverage
        // threshold or a crash after the tests): not a success.
        (Scope::Full, true) => RunVerdict::Failing,
        (Scope::Full, false)
            if r.pass_rate >= limits.pass_threshold
                && !r.failures.is_empty()
                && r.failures.iter().all(|f| f.criticality == Criticality::Low) =>
        {
            RunVerdict::PartialSuccess
        }
        _ => RunVerdict::Failing,
    }
}

/// Why a run counts as a regression against the previous comparable run.
#[derive(Debug, Clone, PartialEq)]
pub enum Regression {
    PassRateDrop { from: f64, to: f64 },
    TestsRemoved { from: u32, to: u32 },
}

impl std::fmt::Display for Regression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Regression::PassRateDrop { from, to } => {
                write!(f, "pass rate dropped from {from:.1}% to {to:.1}%")
            }
            Regression::TestsRemoved { from, to } => {
                write!(f, "test count dropped from {from} to {to}")
            }
        }
    }
}

/// §5.3: a drop of more than `regression_threshold_pp` percentage points,
/// or fewer tests than before. `prev` is the previous run (merged results
/// keep subset runs comparable).
pub fn regression(
    prev: &IterationRecord,
    cur_pass_rate: f64,
    cur_total: u32,
    limits: &Limits,
) -> Option<Regression> {
    if cur_total < prev.total {
        return Some(Regression::TestsRemoved {
            from: prev.total,
            to: cur_total,
        });
    }
    if prev.pass_rate - cur_pass_rate > limits.regression_threshold_pp {
        return Some(Regression::PassRateDrop {
            from: prev.pass_rate,
            to: cur_pass_rate,
        });
    }
    None
}

/// Tests failing in each of the last `stuck_after` runs (runs that were
/// rolled back count: the failure was seen).
pub fn stuck_tests(history: &[IterationRecord], stuck_after: u32) -> Vec<String> {
    let n = stuck_after as usize;
    if n == 0 || history.len() < n {
        return Vec::new();
    }
    let window = &history[history.len() - n..];
    let mut common: BTreeSet<&str> = window[0].failed_tests.iter().map(String::as_str).collect();
    for rec in &window[1..] {
        let these: BTreeSet<&str> = rec.failed_tests.iter().map(String::as_str).collect();
        common = common.intersection(&these).copied().collect();
    }
    common.into_iter().map(str::to_string).collect()
}

/// §5.3 no progress: the same non-empty failure set in the last `limit` runs.
pub fn no_progress(history: &[IterationRecord], limit: u32) -> bool {
    let n = limit as usize;
    if n < 2 || history.len() < n {
        return false;
    }
    let window = &history[history.len() - n..];
    let set = |r: &IterationRecord| r.failed_tests.iter().cloned().collect::<BTreeSet<_>>();
    let first = set(&window[0]);
    !first.is_empty() && window.iter().all(|r| set(r) == first)
}

/// §5.3 similarity, shared with the built-in analyzer's grouping.
pub use crate::agents::builtin::similarity;

/// Inputs of the strategy choice for fix attempt `iteration` (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyInput {
    pub iteration: u32,
    pub pass_rate: f64,
    pub similarity: f64,
    /// The last retest was a regression (and was rolled back).
    pub regression_in_last_retest: bool,
    pub previous: Option<Strategy>,
    pub stuck: bool,
}

/// §5.3, in order: regression → surgical; iteration ≤ 2 → conservative;
/// pass rate > 80 and similarity > 0.7 → aggressive; else conservative.
/// Stuck tests force a change (conservative ↔ aggressive) when the choice
/// would repeat the previous strategy.
pub fn select_strategy(i: &StrategyInput) -> Strategy {
    if i.regression_in_last_retest {
        return Strategy::Surgical;
    }
    let base = if i.iteration <= 2 {
        Strategy::Conservative
    } else if i.pass_rate > 80.0 && i.similarity > 0.7 {
        Strategy::Aggressive
    } else {
        Strategy::Conservative
    };
    if i.stuck && i.previous == Some(base) {
        return match base {
            Strategy::Conservative => Strategy::Aggressive,
            Strategy::Aggressive | Strategy::Surgical => Strategy::Conservative,
        };
    }
    base
}

/// The result label of a run compared with the run before it.
pub fn run_result(
    prev_pass_rate: Option<f64>,
    cur: f64,
    verdict: RunVerdict,
    regressed: bool,
) -> IterationResult {
    match verdict {
        RunVerdict::FullSuccess => IterationResult::Success,
        RunVerdict::PartialSuccess => IterationResult::PartialSuccess,
        RunVerdict::ExecutionError => IterationResult::Error,
        _ if regressed => IterationResult::Regression,
        _ => match prev_pass_rate {
            Some(p) if cur > p => IterationResult::Improved,
            Some(_) => IterationResult::NoChange,
            None => IterationResult::NoChange,
        },
    }
}

/// New failures: failing now, not failing in the previous run.
pub fn new_failures(prev_failed: &[String], cur_failed: &[String]) -> Vec<String> {
    let prev: BTreeSet<&String> = prev_failed.iter().collect();
    cur_failed
        .iter()
        .filter(|t| !prev.contains(t))
        .cloned()
        .collect()
}

/// What to do after a full or merged test run of the fix loop.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterRun {
    Complete { partial: bool },
    FinalValidation,
    Rollback { reason: String },
    Analyze,
    Blocked { reason: String },
}

/// Everything `after_run` looks at.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub verdict: RunVerdict,
    pub regression: Option<Regression>,
    /// The fix under test edited tests in a way the policy rejects.
    pub rejected_test_edits: Option<String>,
    /// A fix commit (or fix) exists that a rollback could undo.
    pub has_fix_to_undo: bool,
    pub fix_attempts_done: u32,
    pub no_progress: bool,
    pub cost_cap_reached: Option<String>,
}

/// §5.2–§5.3: the next step after a test run.
pub fn after_run(f: &RunFacts, limits: &Limits) -> AfterRun {
    match f.verdict {
        RunVerdict::FullSuccess => return AfterRun::Complete { partial: false },
        RunVerdict::PartialSuccess => return AfterRun::Complete { partial: true },
        RunVerdict::NeedsFullRun if f.rejected_test_edits.is_none() && f.regression.is_none() => {
            return AfterRun::FinalValidation;
        }
        _ => {}
    }
    if f.has_fix_to_undo {
        if let Some(why) = &f.rejected_test_edits {
            return AfterRun::Rollback {
                reason: format!("fix edited the tests: {why}"),
            };
        }
        if let Some(r) = &f.regression {
            return AfterRun::Rollback {
                reason: format!("regression: {r}"),
            };
        }
    }
    if f.fix_attempts_done >= limits.max_iterations {
        return AfterRun::Blocked {
            reason: format!(
                "reached the limit of {} fix attempts",
                limits.max_iterations
            ),
        };
    }
    if f.no_progress {
        return AfterRun::Blocked {
            reason: format!(
                "no progress: the same tests failed in {} runs in a row",
                limits.no_progress_limit
            ),
        };
    }
    if let Some(why) = &f.cost_cap_reached {
        return AfterRun::Blocked {
            reason: why.clone(),
        };
    }
    AfterRun::Analyze
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::test_results::{Failure, Layer, LayerDistribution};
    use chrono::TimeZone;

    fn rec(pass_rate: f64, total: u32, failed: &[&str]) -> IterationRecord {
        IterationRecord {
            iteration: 1,
            started_at: chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            completed_at: None,
            scope: Scope::Full,
            pass_rate,
            total,
            passed: 0,
            failed: failed.len() as u32,
            failed_tests: failed.iter().map(|s| s.to_string()).collect(),
            new_failures: vec![],
            strategy: None,
            analysis_file: None,
            analysis_tool: None,
            fix_task: None,
            fix_commit: None,
            rollback_commit: None,
            result: None,
            extra: Default::default(),
        }
    }

    fn failure(test: &str, error: &str, crit: Criticality) -> Failure {
        Failure {
            test: test.into(),
            file: None,
            line: None,
            error: error.into(),
            message: String::new(),
            criticality: crit,
            test_type: Layer::Unit,
            flaky: false,
            extra: Default::default(),
        }
    }

    fn results(scope: Scope, exit: i32, passed: u32, failures: Vec<Failure>) -> TestResults {
        let failed = failures.len() as u32;
        TestResults {
            command: "t".into(),
            exit_code: Some(exit),
            duration_ms: 0,
            scope,
            framework: "pytest".into(),
            parser: "junit".into(),
            total: passed + failed,
            passed,
            failed,
            skipped: 0,
            errors: 0,
            pass_rate: crate::artifacts::test_results::pass_rate(passed, failed, 0),
            layer_distribution: LayerDistribution::default(),
            failures,
            output_log: None,
            truncated: false,
            started_at: None,
            cases: vec![],
            notes: vec![],
            extra: Default::default(),
        }
    }

    #[test]
    fn max_iterations_precedence() {
        assert_eq!(resolve_max_iterations(Some(3), Some(5), Some(7)), 3);
        assert_eq!(resolve_max_iterations(None, Some(5), Some(7)), 5);
        assert_eq!(resolve_max_iterations(None, None, Some(7)), 7);
        assert_eq!(resolve_max_iterations(None, None, None), 10);
    }

    #[test]
    fn verdict_table() {
        let l = Limits::default();
        let low = |t: &str| failure(t, "boom", Criticality::Low);
        let med = |t: &str| failure(t, "boom", Criticality::Medium);
        let cases = [
            (results(Scope::Full, 0, 10, vec![]), RunVerdict::FullSuccess),
            (results(Scope::Full, 1, 10, vec![]), RunVerdict::Failing),
            (
                results(Scope::Affected, 0, 3, vec![]),
                RunVerdict::NeedsFullRun,
            ),
            (
                results(Scope::Full, 1, 99, vec![low("a")]),
                RunVerdict::PartialSuccess,
            ),
            (
                results(Scope::Full, 1, 99, vec![med("a")]),
                RunVerdict::Failing,
            ),
            (
                results(Scope::Full, 1, 9, vec![low("a")]),
                RunVerdict::Failing,
            ), // 90 % < 95
            (
                results(Scope::Affected, 1, 99, vec![low("a")]),
                RunVerdict::Failing,
            ),
            (
                results(Scope::Full, 0, 0, vec![]),
                RunVerdict::ExecutionError,
            ),
            (
                results(Scope::Full, 2, 0, vec![]),
                RunVerdict::ExecutionError,
            ),
        ];
        for (i, (r, want)) in cases.iter().enumerate() {
            assert_eq!(verdict(r, &l), *want, "case {i}");
        }
    }

    #[test]
    fn regression_table() {
        let l = Limits::default();
        let prev = rec(80.0, 100, &[]);
        assert_eq!(
            regression(&prev, 70.0, 100, &l),
            None,
            "exactly 10 pp is not more than 10"
        );
        assert_eq!(
            regression(&prev, 69.9, 100, &l),
            Some(Regression::PassRateDrop {
                from: 80.0,
                to: 69.9
            })
        );
        assert_eq!(
            regression(&prev, 95.0, 99, &l),
            Some(Regression::TestsRemoved { from: 100, to: 99 })
        );
        assert_eq!(regression(&prev, 90.0, 120, &l), None);
    }

    #[test]
    fn stuck_and_no_progress() {
        let h = vec![
            rec(50.0, 4, &["a", "b"]),
            rec(60.0, 4, &["a", "c"]),
            rec(70.0, 4, &["a"]),
        ];
        assert_eq!(stuck_tests(&h, 3), vec!["a".to_string()]);
        assert_eq!(stuck_tests(&h[..2], 3), Vec::<String>::new());
        assert_eq!(stuck_tests(&h, 2), vec!["a".to_string()]);
        assert!(!no_progress(&h, 3));
        let same = vec![rec(50.0, 4, &["a", "b"]); 4];
        assert!(no_progress(&same, 4));
        assert!(!no_progress(&same[..3], 4));
        let passing = vec![rec(100.0, 4, &[]); 4];
        assert!(
            !no_progress(&passing, 4),
            "an empty failure set is not 'no progress'"
        );
    }

    #[test]
    fn strategy_table() {
        use Strategy::*;
        let input = |iteration, pass_rate, similarity, regression, previous, stuck| StrategyInput {
            iteration,
            pass_rate,
            similarity,
            regression_in_last_retest: regression,
            previous,
            stuck,
        };
        let cases = [
            (input(1, 50.0, 0.9, false, None, false), Conservative),
            (
                input(2, 90.0, 0.9, false, Some(Conservative), false),
                Conservative,
            ),
            (
                input(3, 90.0, 0.9, false, Some(Conservative), false),
                Aggressive,
            ),
            (input(3, 80.0, 0.9, false, None, false), Conservative), // not > 80
            (input(3, 90.0, 0.7, false, None, false), Conservative), // not > 0.7
            (input(1, 90.0, 0.9, true, None, false), Surgical),
            (input(5, 95.0, 1.0, true, Some(Surgical), true), Surgical),
            (
                input(4, 50.0, 0.1, false, Some(Conservative), true),
                Aggressive,
            ),
            (
                input(4, 90.0, 0.9, false, Some(Aggressive), true),
                Conservative,
            ),
            (
                input(4, 90.0, 0.9, false, Some(Conservative), true),
                Aggressive,
            ),
        ];
        for (i, (inp, want)) in cases.iter().enumerate() {
            assert_eq!(select_strategy(inp), *want, "case {i}: {inp:?}");
        }
    }

    #[test]
    fn after_run_table() {
        let l = Limits {
            max_iterations: 3,
            ..Limits::default()
        };
        let base = RunFacts {
            verdict: RunVerdict::Failing,
            regression: None,
            rejected_test_edits: None,
            has_fix_to_undo: true,
            fix_attempts_done: 1,
            no_progress: false,
            cost_cap_reached: None,
        };
        let with = |change: &dyn Fn(&mut RunFacts)| {
            let mut f = base.clone();
            change(&mut f);
            after_run(&f, &l)
        };
        assert_eq!(with(&|_| {}), AfterRun::Analyze);
        assert_eq!(
            with(&|f| f.verdict = RunVerdict::FullSuccess),
            AfterRun::Complete { partial: false }
        );
        assert_eq!(
            with(&|f| f.verdict = RunVerdict::PartialSuccess),
            AfterRun::Complete { partial: true }
        );
        assert_eq!(
            with(&|f| f.verdict = RunVerdict::NeedsFullRun),
            AfterRun::FinalValidation
        );
        assert!(matches!(
            with(&|f| f.regression = Some(Regression::TestsRemoved { from: 3, to: 2 })),
            AfterRun::Rollback { .. }
        ));
        assert!(matches!(
            with(&|f| {
                f.verdict = RunVerdict::NeedsFullRun;
                f.rejected_test_edits = Some("removed test_x".into());
            }),
            AfterRun::Rollback { .. }
        ));
        assert!(matches!(
            with(&|f| f.fix_attempts_done = 3),
            AfterRun::Blocked { .. }
        ));
        assert!(matches!(
            with(&|f| f.no_progress = true),
            AfterRun::Blocked { .. }
        ));
        assert!(matches!(
            with(&|f| f.cost_cap_reached = Some("cost".into())),
            AfterRun::Blocked { .. }
        ));
        // Nothing to undo (first run): a regression cannot be rolled back.
        assert_eq!(
            with(&|f| {
                f.has_fix_to_undo = false;
                f.regression = Some(Regression::TestsRemoved { from: 3, to: 2 });
            }),
            AfterRun::Analyze
        );
    }

    #[test]
    fn new_failures_and_results() {
        let prev = vec!["a".to_string(), "b".to_string()];
        let cur = vec!["b".to_string(), "c".to_string()];
        assert_eq!(new_failures(&prev, &cur), vec!["c".to_string()]);
        assert_eq!(
            run_result(Some(50.0), 60.0, RunVerdict::Failing, false),
            IterationResult::Improved
        );
        assert_eq!(
            run_result(Some(60.0), 60.0, RunVerdict::Failing, false),
            IterationResult::NoChange
        );
        assert_eq!(
            run_result(Some(60.0), 40.0, RunVerdict::Failing, true),
            IterationResult::Regression
        );
        assert_eq!(
            run_result(Some(60.0), 100.0, RunVerdict::FullSuccess, false),
            IterationResult::Success
        );
    }
}
