//! The decisions of the fix loop (DESIGN.md §5.2–§5.3) as pure functions:
//! no I/O, no clock, table-tested. The dispatcher feeds them what happened
//! and performs what they decide.

use std::collections::BTreeSet;

use crate::artifacts::fix_history::{FixOutcome, TestEdit, TestEditKind};
use crate::artifacts::iteration_state::{
    CommitPurpose, FixInFlight, IterationRecord, IterationResult, PendingCommit, RetestProgress,
    Strategy, TierOutcome,
};
use crate::artifacts::test_results::{Criticality, Scope, TestResults};
use crate::testing::retest::{self, Escalation, NextRun, Outcome, RetestPlan};

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

/// Why a run does not end the session, in one line naming the rule and
/// the tests that block it (the words of [`verdict`]); `None` when it
/// does (full or partial success).
pub fn unmet(r: &TestResults, pass_threshold: f64) -> Option<String> {
    let limits = Limits {
        pass_threshold,
        ..Limits::default()
    };
    let listed = |fs: &[&crate::artifacts::test_results::Failure], crit: bool| {
        let mut names: Vec<String> = fs
            .iter()
            .take(3)
            .map(|f| {
                if crit {
                    format!("{} ({})", f.test, criticality_name(f.criticality))
                } else {
                    f.test.clone()
                }
            })
            .collect();
        if fs.len() > 3 {
            names.push(format!("{} more", fs.len() - 3));
        }
        names.join(", ")
    };
    let all: Vec<&crate::artifacts::test_results::Failure> = r.failures.iter().collect();
    match verdict(r, &limits) {
        RunVerdict::FullSuccess | RunVerdict::PartialSuccess => None,
        RunVerdict::ExecutionError => Some(format!(
            "the last run ran no test{}",
            r.failures
                .first()
                .map_or(String::new(), |f| format!(": {}", f.error))
        )),
        RunVerdict::NeedsFullRun => Some(
            "every re-run test passes; only a run of the full suite can complete the session"
                .to_string(),
        ),
        RunVerdict::Failing if all.is_empty() => Some(format!(
            "every test passes, but the test command exited {}",
            r.exit_code
                .map_or("without a code".to_string(), |c| c.to_string())
        )),
        RunVerdict::Failing if r.scope == Scope::Affected => Some(format!(
            "{} re-run test(s) still fail: {}",
            all.len(),
            listed(&all, false)
        )),
        RunVerdict::Failing if r.pass_rate < pass_threshold => Some(format!(
            "{:.1}% is under the {pass_threshold:.1}% threshold; {} failing: {}",
            r.pass_rate,
            all.len(),
            listed(&all, false)
        )),
        RunVerdict::Failing => {
            let blocking: Vec<&crate::artifacts::test_results::Failure> = all
                .iter()
                .copied()
                .filter(|f| f.criticality != Criticality::Low)
                .collect();
            Some(format!(
                "{:.1}% reaches the {pass_threshold:.1}% threshold, but only low-criticality failures may remain; not low: {}",
                r.pass_rate,
                listed(&blocking, true)
            ))
        }
    }
}

fn criticality_name(c: Criticality) -> &'static str {
    match c {
        Criticality::Low => "low",
        Criticality::Medium => "medium",
        Criticality::High => "high",
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

/// §5.2–§5.3: the next step after a test run. A fix the test-edit policy
/// rejects, or one that caused a regression, is rolled back before any
/// success counts: a suite that passes because a test was deleted or
/// skipped is not a success.
pub fn after_run(f: &RunFacts, limits: &Limits) -> AfterRun {
    if let Some(why) = &f.rejected_test_edits {
        if f.has_fix_to_undo {
            return AfterRun::Rollback {
                reason: format!("fix edited the tests: {why}"),
            };
        }
        return AfterRun::Blocked {
            reason: format!(
                "the fix edited the tests ({why}) and cannot be rolled back without git commits"
            ),
        };
    }
    if f.has_fix_to_undo
        && let Some(r) = &f.regression
    {
        return AfterRun::Rollback {
            reason: format!("regression: {r}"),
        };
    }
    match f.verdict {
        RunVerdict::FullSuccess => return AfterRun::Complete { partial: false },
        RunVerdict::PartialSuccess => return AfterRun::Complete { partial: true },
        RunVerdict::NeedsFullRun if f.regression.is_none() => {
            return AfterRun::FinalValidation;
        }
        _ => {}
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

/// After a rollback: another attempt, or blocked when the limits say so
/// (the rolled-back attempt counts).
pub fn after_rollback(
    fix_attempts_done: u32,
    no_progress: bool,
    cost_cap_reached: Option<String>,
    limits: &Limits,
) -> AfterRun {
    after_run(
        &RunFacts {
            verdict: RunVerdict::Failing,
            regression: None,
            rejected_test_edits: None,
            has_fix_to_undo: false,
            fix_attempts_done,
            no_progress,
            cost_cap_reached,
        },
        limits,
    )
}

/// The tier a fix's retest runs next (DESIGN.md §10.4): the tier table of
/// [`retest::next`] fed with what the retest recorded so far.
pub fn next_tier(plan: &RetestPlan, p: &RetestProgress) -> NextRun {
    let last = match (p.tier, p.outcome) {
        (Some(tier), Some(TierOutcome::Passed)) => Some((tier, Outcome::Passed)),
        (Some(tier), Some(TierOutcome::Failing)) => Some((tier, Outcome::Failing)),
        (Some(tier), Some(TierOutcome::Escalated)) => Some((
            tier,
            Outcome::Escalated(Escalation::Recorded(
                p.escalated.clone().unwrap_or_default(),
            )),
        )),
        _ => None,
    };
    retest::next(plan, last)
}

/// What follows a judged subset tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterTier {
    /// Another tier runs first (the retest continues).
    NextTier,
    /// The full suite validates (only a full run completes).
    Validate,
    /// The fix is settled on this run (failing, rolled back, blocked).
    Settle,
}

/// After a subset tier that merged: the next tier when the plan has one;
/// else the full-suite validation when the settlement asks for it (every
/// test passes so far); else the fix is settled on this run.
///
/// A tier 1 that still fails is followed by tier 2 before the fix is
/// settled: a fix that leaves a test failing may have broken others. When
/// only the full suite can show that, a fix that `improved` the run (made
/// a failing test pass) is settled on tier 1 ([`retest::settles_partial_fix`];
/// the next full run sees any damage, and [`settle`] then blames no single
/// fix for it); one that did not gets the full run. A rollback already
/// decided stands.
pub fn after_tier(
    plan: &RetestPlan,
    done: &RetestProgress,
    decision: &AfterRun,
    improved: bool,
) -> AfterTier {
    if matches!(decision, AfterRun::Rollback { .. }) {
        return AfterTier::Settle;
    }
    let next = next_tier(plan, done);
    match (&next, decision) {
        (NextRun::Tier { .. }, _) => AfterTier::NextTier,
        (_, AfterRun::FinalValidation) => AfterTier::Validate,
        _ if retest::settles_partial_fix(&next, improved) => AfterTier::Settle,
        (NextRun::Full(retest::FullReason::Unverified), _) => AfterTier::Validate,
        _ => AfterTier::Settle,
    }
}

/// Why a fix is rolled back, for the commit message.
#[derive(Debug, Clone, PartialEq)]
pub enum RollbackCause {
    Regression(Regression),
    TestEdits(String),
    /// The fix call failed or timed out and its changes helped nothing.
    CallFailed,
}

/// The message of fix attempt N's commit (plain:
/// `test-cycle: iteration N - <strategy> strategy (pass: <old>% → <new>%)`;
/// a person's fix, with no strategy, is `… - fix by hand (…)`).
pub fn fix_commit_message(
    style: &crate::git::MessageStyle,
    session: &str,
    iteration: u32,
    strategy: Option<Strategy>,
    (old, new): (f64, f64),
    paths: &[String],
) -> String {
    let subject = crate::git::Subject::Fix {
        iteration,
        strategy: strategy.map(|s| s.to_string()),
        before: old,
        after: new,
        paths,
    };
    style.message(&subject, session, "")
}

/// The message of fix attempt N's rollback (plain: `test-cycle: rollback
/// iteration N - regression detected (pass: <new>% < <old>%)`); a drop in
/// the number of tests and rejected test edits say so instead.
pub fn rollback_commit_message(
    style: &crate::git::MessageStyle,
    session: &str,
    iteration: u32,
    cause: &RollbackCause,
    old: f64,
    new: f64,
) -> String {
    let reason = match cause {
        RollbackCause::Regression(Regression::TestsRemoved { from, to }) => {
            format!("regression detected (tests: {to} < {from})")
        }
        RollbackCause::Regression(Regression::PassRateDrop { .. }) => {
            format!("regression detected (pass: {new:.1}% < {old:.1}%)")
        }
        RollbackCause::TestEdits(why) => format!("test edits rejected ({why})"),
        RollbackCause::CallFailed => {
            format!("the fix call failed and changed no result (pass: {new:.1}%)")
        }
    };
    style.message(
        &crate::git::Subject::Rollback { iteration, reason },
        session,
        "",
    )
}

/// The `outcome` of a fix attempt in fix-history.json, from the run that
/// judged it.
pub fn fix_outcome(result: IterationResult, rejected: bool, rolled_back: bool) -> FixOutcome {
    if rejected {
        return FixOutcome::Rejected;
    }
    if rolled_back {
        return FixOutcome::RolledBack;
    }
    match result {
        IterationResult::Success => FixOutcome::Success,
        IterationResult::PartialSuccess => FixOutcome::PartialSuccess,
        IterationResult::Improved => FixOutcome::Improved,
        IterationResult::NoChange => FixOutcome::NoChange,
        IterationResult::Regression | IterationResult::RolledBack => FixOutcome::Regression,
        IterationResult::Error => FixOutcome::Error,
    }
}

/// Everything settling a fix attempt looks at: the run after it (merged
/// over the baseline when a subset ran) against the run before it.
#[derive(Debug, Clone)]
pub struct SettleInput<'a> {
    /// The fix attempt under test (`k`).
    pub fix_iteration: u32,
    /// The new run's record (its result is decided here).
    pub run: &'a IterationRecord,
    /// The run the fix started from.
    pub base: &'a IterationRecord,
    pub merged: &'a TestResults,
    pub fix: &'a FixInFlight,
    /// Commits are made (a fix commit can be reverted).
    pub repo: bool,
    pub attempts_done: u32,
    pub no_progress: bool,
    pub cost_cap: Option<String>,
    /// The strategy of the agent's fix (for its commit message); `None`
    /// for a person's fix, which follows no agent strategy.
    pub strategy: Option<Strategy>,
    pub limits: &'a Limits,
    /// How the commit and rollback messages are written, and the session
    /// they name.
    pub messages: &'a crate::git::MessageStyle,
    pub session: &'a str,
    /// Earlier fixes kept since the last full run whose retest ended on a
    /// subset ([`unchecked_fixes`]): what a run finds broken may be theirs.
    pub unchecked: &'a [u32],
}

/// What settling a fix attempt decides.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    pub regression: Option<Regression>,
    pub verdict: RunVerdict,
    /// The new run's `result`.
    pub result: IterationResult,
    pub decision: AfterRun,
    /// The fix's outcome; `None` while a final validation is still to come.
    pub outcome: Option<FixOutcome>,
    /// The fix's checkpoint commit (made whether it stays or is undone).
    pub commit: Option<PendingCommit>,
    /// The rollback that undoes it, when it is rolled back.
    pub rollback: Option<PendingCommit>,
    /// The tests the suite lost, recorded as a test edit of the fix.
    pub count_dropped: Option<TestEdit>,
    /// A regression that is not this fix's alone: earlier fixes were kept
    /// without a full run since ([`SettleInput::unchecked`]), and the tests
    /// that now fail may not have run since either. The fix is not rolled
    /// back for it; the failing tests are analysed next.
    pub unattributed: Option<Regression>,
}

/// §5.2–§5.3 for one fix attempt: regression, rejected test edits,
/// verdict; whether to validate on the full suite, complete, roll back,
/// analyse again or block; the commit and rollback that follow.
pub fn settle(i: &SettleInput) -> Settlement {
    let pass_without_flaky = crate::testing::results::pass_rate_without_flaky(i.merged);
    let found = regression(i.base, pass_without_flaky, i.merged.total, i.limits);
    // A correct fix is never rolled back for damage an earlier, unchecked
    // fix may have done (DESIGN.md §10.4): the drop is reported and the
    // failing tests become the next target.
    let (regression, unattributed) = match found {
        Some(r) if !i.unchecked.is_empty() => (None, Some(r)),
        found => (found, None),
    };
    let verdict = verdict(i.merged, i.limits);
    let result = run_result(
        Some(i.base.pass_rate),
        i.merged.pass_rate,
        verdict,
        regression.is_some(),
    );
    let has_fix_to_undo = i.repo && !i.fix.commit_paths.is_empty();
    let decision = after_run(
        &RunFacts {
            verdict,
            regression: regression.clone(),
            rejected_test_edits: i.fix.rejected.clone(),
            has_fix_to_undo,
            fix_attempts_done: i.attempts_done,
            no_progress: i.no_progress,
            cost_cap_reached: i.cost_cap.clone(),
        },
        i.limits,
    );
    if decision == AfterRun::FinalValidation {
        return Settlement {
            regression,
            verdict,
            result,
            decision,
            outcome: None,
            commit: None,
            rollback: None,
            count_dropped: None,
            unattributed,
        };
    }
    let k = i.fix_iteration;
    // A fix whose call failed or timed out is kept only when it helped: a
    // half edit that changed nothing (or did damage) is put back, never
    // committed (DESIGN.md §11.2: a rejected attempt never enters history).
    let undo_uncommitted = i.fix.call_failed
        && has_fix_to_undo
        && i.fix.snapshot.is_some()
        && !matches!(
            result,
            IterationResult::Improved | IterationResult::Success | IterationResult::PartialSuccess
        );
    let decision = match decision {
        AfterRun::Analyze if undo_uncommitted => AfterRun::Rollback {
            reason: "the fix call failed and its changes helped nothing".into(),
        },
        d => d,
    };
    let rolling_back = matches!(decision, AfterRun::Rollback { .. });
    let rejected = i.fix.rejected.clone();
    let outcome = if undo_uncommitted {
        fix_outcome(result, false, false)
    } else {
        fix_outcome(result, rejected.is_some() && rolling_back, rolling_back)
    };
    let count_dropped = match &regression {
        Some(Regression::TestsRemoved { from, to }) => Some(TestEdit {
            kind: TestEditKind::CountDropped,
            file: String::new(),
            detail: format!("{from} → {to} tests in the suite"),
        }),
        _ => None,
    };
    let commit = (has_fix_to_undo && !undo_uncommitted).then(|| PendingCommit {
        kind: CommitPurpose::Fix,
        iteration: k,
        message: fix_commit_message(
            i.messages,
            i.session,
            k,
            i.strategy,
            (i.base.pass_rate, i.merged.pass_rate),
            &i.fix.commit_paths,
        ),
        paths: i.fix.commit_paths.clone(),
        run: None,
        restore: None,
    });
    let rollback = rolling_back.then(|| {
        let cause = match (&rejected, &regression) {
            (Some(why), _) => RollbackCause::TestEdits(short(why, 120)),
            (None, Some(r)) => RollbackCause::Regression(r.clone()),
            (None, None) if undo_uncommitted => RollbackCause::CallFailed,
            (None, None) => RollbackCause::TestEdits("rejected".into()),
        };
        PendingCommit {
            kind: CommitPurpose::Rollback,
            iteration: k,
            message: rollback_commit_message(
                i.messages,
                i.session,
                k,
                &cause,
                i.base.pass_rate,
                i.merged.pass_rate,
            ),
            paths: Vec::new(),
            run: Some(i.run.run),
            restore: if undo_uncommitted {
                i.fix.snapshot.clone()
            } else {
                None
            },
        }
    });
    Settlement {
        regression,
        verdict,
        result,
        decision,
        outcome: Some(outcome),
        commit,
        rollback,
        count_dropped,
        unattributed,
    }
}

/// The fixes (by iteration) kept since the last full-suite run whose
/// retest ended on a subset: a tier 1 that still failed settled them, so
/// the rest of the suite has not run since (DESIGN.md §10.4). `before` is
/// the run being judged's iteration; its own runs do not count.
pub fn unchecked_fixes(runs: &[IterationRecord], before: u32) -> Vec<u32> {
    let since_full = runs
        .iter()
        .rposition(|r| r.scope == Scope::Full && r.escalated.is_none())
        .map_or(0, |i| i + 1);
    let mut fixes: Vec<u32> = Vec::new();
    for (i, r) in runs.iter().enumerate().skip(since_full) {
        let last_of_iteration = runs
            .get(i + 1)
            .is_none_or(|next| next.iteration != r.iteration);
        if r.iteration < before
            && r.iteration > 1
            && last_of_iteration
            && r.scope == Scope::Affected
            && r.escalated.is_none()
            && !matches!(
                r.result,
                Some(IterationResult::Regression | IterationResult::RolledBack)
            )
            && r.rollback_commit.is_none()
        {
            fixes.push(r.iteration - 1);
        }
    }
    fixes
}

/// DESIGN.md §10.2: a test that failed before the fix and is skipped in
/// `run`, or missing from a full run (which selected every test), counts
/// as removed, however it was done (a hook, an option, an environment
/// variable the guard cannot see). Runs without per-case results are not
/// judged for missing tests. A subset run (`selected`: the ids its tier
/// asked for) judges only those: jest and vitest list the other tests of
/// a file they ran as skipped. `failed_before` are the failing *tests*
/// ([`crate::testing::results::failing_ids`]): a static failure (the
/// placeholder of a run that crashed or could not start, named after the
/// command; a collection error) is no test, and a fix that makes it go
/// away removed nothing.
pub fn vanished_tests(
    failed_before: &[String],
    run: &TestResults,
    selected: Option<&[String]>,
) -> Vec<TestEdit> {
    use crate::artifacts::test_results::CaseStatus;
    if run.cases.is_empty() {
        return Vec::new();
    }
    let status: std::collections::HashMap<&str, CaseStatus> = run
        .cases
        .iter()
        .map(|c| (c.test.as_str(), c.status))
        .collect();
    let removed = |test: &str, detail: String| TestEdit {
        kind: TestEditKind::RemovedTest,
        file: test.split("::").next().unwrap_or_default().to_string(),
        detail,
    };
    // A test file that failed as a whole (node names it `file › file` when
    // it throws before its tests run) gives way to its tests once it loads.
    let file_level = |t: &str| -> bool {
        let mut parts = t.split(" › ");
        let (Some(file), Some(again), None) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        file == again
            && run
                .cases
                .iter()
                .any(|c| c.test.len() > file.len() && c.test.starts_with(&format!("{file} › ")))
    };
    failed_before
        .iter()
        .filter(|t| selected.is_none_or(|ids| ids.contains(t)))
        .filter(|t| !file_level(t))
        .filter_map(|t| match status.get(t.as_str()) {
            Some(CaseStatus::Skipped) => {
                Some(removed(t, format!("{t} went from failed to skipped")))
            }
            None if run.scope == Scope::Full => Some(removed(
                t,
                format!("{t} failed before and is missing from a run that selected it"),
            )),
            _ => None,
        })
        .collect()
}

/// At most `max` characters.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// Raise (never lower) the criticality of failures the analysis named in
/// `criticality_overrides`: an agent may not talk a failure down into a
/// partial success.
pub fn apply_overrides(
    failures: &mut [crate::artifacts::test_results::Failure],
    overrides: &std::collections::BTreeMap<String, Criticality>,
) {
    for f in failures {
        if let Some(level) = overrides.get(&f.test)
            && *level > f.criticality
        {
            f.criticality = *level;
        }
    }
}

/// Whether the loop pauses instead of asking for a fix: every failure of
/// the first run (iteration 1, before any fix) is an environment failure.
/// Later, the failures come after a fix; they go to the fix agent with the
/// environment named in the analysis, and a regression is rolled back.
pub fn pause_for_environment(environment: &[String]) -> bool {
    !environment.is_empty()
}

/// How the loop goes on after a person fixed the environment: the first
/// run is simply run again; a later one is followed by the whole suite,
/// which judges the code as it is now (the fixes so far stay committed).
pub fn after_environment_pause(iteration: u32) -> AfterEnvironment {
    if iteration <= 1 {
        AfterEnvironment::FirstRun
    } else {
        AfterEnvironment::FullSuite
    }
}

/// See [`after_environment_pause`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterEnvironment {
    FirstRun,
    FullSuite,
}

#[cfg(test)]
mod tests {
    #[test]
    fn environment_failures_of_any_run_pause() {
        let env = vec!["install the module `yaml`".to_string()];
        assert!(super::pause_for_environment(&env));
        assert!(!super::pause_for_environment(&[]));
        use super::AfterEnvironment::*;
        for (iteration, want) in [(1, FirstRun), (2, FullSuite), (7, FullSuite)] {
            assert_eq!(
                super::after_environment_pause(iteration),
                want,
                "{iteration}"
            );
        }
    }

    use super::*;
    use crate::artifacts::test_results::{Failure, Layer, LayerDistribution};
    use chrono::TimeZone;

    fn rec(pass_rate: f64, total: u32, failed: &[&str]) -> IterationRecord {
        IterationRecord {
            iteration: 1,
            run: 1,
            started_at: chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            completed_at: None,
            scope: Scope::Full,
            pass_rate,
            total,
            passed: 0,
            failed: failed.len() as u32,
            failed_tests: failed.iter().map(|s| s.to_string()).collect(),
            new_failures: vec![],
            flaky_tests: vec![],
            results_file: None,
            output_log: None,
            strategy: None,
            analysis_file: None,
            analysis_tool: None,
            fix_task: None,
            fix_commit: None,
            rollback_commit: None,
            result: None,
            tier: None,
            escalated: None,
            sealed: false,
            commit: None,
            outside_commit: Vec::new(),
            ran: None,
            duration_ms: None,
            setup_ms: None,
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
            setup_ms: None,
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

    /// Every run that does not end the session says why in one line, in
    /// the words of the rule and naming the tests; one that ends it, none.
    #[test]
    fn unmet_says_which_rule_and_which_tests() {
        let low = |t: &str| failure(t, "boom", Criticality::Low);
        let med = |t: &str| failure(t, "boom", Criticality::Medium);
        let high = |t: &str| failure(t, "boom", Criticality::High);
        for (r, want) in [
            (results(Scope::Full, 0, 10, vec![]), None),
            (results(Scope::Full, 1, 99, vec![low("a")]), None),
            (
                results(Scope::Full, 1, 99, vec![med("t::a"), low("t::b")]),
                Some(
                    "98.0% reaches the 95.0% threshold, but only low-criticality failures may remain; not low: t::a (medium)",
                ),
            ),
            (
                results(
                    Scope::Full,
                    1,
                    996,
                    vec![high("a"), med("b"), med("c"), high("d")],
                ),
                Some(
                    "99.6% reaches the 95.0% threshold, but only low-criticality failures may remain; not low: a (high), b (medium), c (medium), 1 more",
                ),
            ),
            (
                results(Scope::Full, 1, 9, vec![low("a")]),
                Some("90.0% is under the 95.0% threshold; 1 failing: a"),
            ),
            (
                results(Scope::Affected, 0, 3, vec![]),
                Some(
                    "every re-run test passes; only a run of the full suite can complete the session",
                ),
            ),
            (
                results(Scope::Affected, 1, 2, vec![low("a")]),
                Some("1 re-run test(s) still fail: a"),
            ),
            (
                results(Scope::Full, 1, 10, vec![]),
                Some("every test passes, but the test command exited 1"),
            ),
            (
                // A collection error: errors, no test ran.
                TestResults {
                    failed: 0,
                    errors: 1,
                    ..results(
                        Scope::Full,
                        2,
                        0,
                        vec![failure(
                            "x",
                            "ModuleNotFoundError: No module named 'm'",
                            Criticality::Low,
                        )],
                    )
                },
                Some("the last run ran no test: ModuleNotFoundError: No module named 'm'"),
            ),
        ] {
            assert_eq!(unmet(&r, 95.0).as_deref(), want, "{:?}", r.failures);
            let ends = matches!(
                verdict(&r, &Limits::default()),
                RunVerdict::FullSuccess | RunVerdict::PartialSuccess
            );
            assert_eq!(ends, want.is_none());
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

    #[test]
    fn rejected_edits_and_regressions_win_over_success() {
        let l = Limits::default();
        let base = RunFacts {
            verdict: RunVerdict::FullSuccess,
            regression: None,
            rejected_test_edits: Some("skip marker added".into()),
            has_fix_to_undo: true,
            fix_attempts_done: 1,
            no_progress: false,
            cost_cap_reached: None,
        };
        assert!(matches!(after_run(&base, &l), AfterRun::Rollback { .. }));
        let no_git = RunFacts {
            has_fix_to_undo: false,
            ..base.clone()
        };
        assert!(matches!(after_run(&no_git, &l), AfterRun::Blocked { .. }));
        let removed = RunFacts {
            rejected_test_edits: None,
            regression: Some(Regression::TestsRemoved { from: 10, to: 9 }),
            ..base.clone()
        };
        assert!(matches!(after_run(&removed, &l), AfterRun::Rollback { .. }));
        assert_eq!(after_rollback(1, false, None, &l), AfterRun::Analyze);
        assert!(matches!(
            after_rollback(10, false, None, &l),
            AfterRun::Blocked { .. }
        ));
    }

    #[test]
    fn tier_table() {
        use crate::artifacts::iteration_state::Tier;
        use crate::testing::retest::{FullReason, Selection};
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let plan = RetestPlan {
            full: None,
            failed: Selection::Run(ids(&["a"])),
            affected: Selection::Run(ids(&["b", "c"])),
            suite: 10,
            nothing_changed: false,
        };
        let only_failed = RetestPlan {
            affected: Selection::Empty,
            ..plan.clone()
        };
        let no_op_fix = RetestPlan {
            affected: Selection::Empty,
            nothing_changed: true,
            ..plan.clone()
        };
        let at = |tier, outcome| RetestProgress {
            tier: Some(tier),
            outcome: Some(outcome),
            escalated: (outcome == TierOutcome::Escalated).then(|| "ran no test".to_string()),
            ..RetestProgress::default()
        };
        let fresh = RetestProgress::default();
        // (plan, progress, next run)
        let cases: Vec<(&RetestPlan, RetestProgress, NextRun)> = vec![
            (
                &plan,
                fresh.clone(),
                NextRun::Tier {
                    tier: Tier::Failed,
                    ids: ids(&["a"]),
                },
            ),
            (
                &plan,
                at(Tier::Failed, TierOutcome::Passed),
                NextRun::Tier {
                    tier: Tier::Affected,
                    ids: ids(&["b", "c"]),
                },
            ),
            (
                &plan,
                at(Tier::Failed, TierOutcome::Failing),
                NextRun::Tier {
                    tier: Tier::Affected,
                    ids: ids(&["b", "c"]),
                },
            ),
            (
                &only_failed,
                at(Tier::Failed, TierOutcome::Failing),
                NextRun::Full(FullReason::Unverified),
            ),
            (
                &plan,
                at(Tier::Affected, TierOutcome::Passed),
                NextRun::Full(FullReason::Validation),
            ),
            (
                &plan,
                at(Tier::Failed, TierOutcome::Escalated),
                NextRun::Full(FullReason::Escalated(Escalation::Recorded(
                    "ran no test".into(),
                ))),
            ),
            (
                &only_failed,
                at(Tier::Failed, TierOutcome::Passed),
                NextRun::Full(FullReason::Validation),
            ),
            // A fix that changed no file: the failing tests again, no more.
            (
                &no_op_fix,
                fresh.clone(),
                NextRun::Tier {
                    tier: Tier::Failed,
                    ids: ids(&["a"]),
                },
            ),
            (
                &no_op_fix,
                at(Tier::Failed, TierOutcome::Failing),
                NextRun::Done,
            ),
            (
                &no_op_fix,
                at(Tier::Failed, TierOutcome::Passed),
                NextRun::Full(FullReason::Validation),
            ),
        ];
        for (plan, progress, want) in cases {
            assert_eq!(next_tier(plan, &progress), want, "{progress:?}");
        }
        // After a merged tier: another tier, the validation, or settle now.
        let validate = AfterRun::FinalValidation;
        let analyze = AfterRun::Analyze;
        let rollback = AfterRun::Rollback {
            reason: "regression".into(),
        };
        for (plan, progress, decision, want) in [
            (
                &plan,
                at(Tier::Failed, TierOutcome::Passed),
                &validate,
                AfterTier::NextTier,
            ),
            (
                &only_failed,
                at(Tier::Failed, TierOutcome::Passed),
                &validate,
                AfterTier::Validate,
            ),
            (
                &plan,
                at(Tier::Affected, TierOutcome::Passed),
                &validate,
                AfterTier::Validate,
            ),
            // Tier 1 still fails: tier 2 first, the full suite when nothing
            // else is affected, unless a rollback is decided.
            (
                &plan,
                at(Tier::Failed, TierOutcome::Failing),
                &analyze,
                AfterTier::NextTier,
            ),
            (
                &only_failed,
                at(Tier::Failed, TierOutcome::Failing),
                &analyze,
                AfterTier::Validate,
            ),
            (
                &plan,
                at(Tier::Failed, TierOutcome::Failing),
                &rollback,
                AfterTier::Settle,
            ),
            (
                &plan,
                at(Tier::Affected, TierOutcome::Failing),
                &analyze,
                AfterTier::Settle,
            ),
            (
                &no_op_fix,
                at(Tier::Failed, TierOutcome::Failing),
                &analyze,
                AfterTier::Settle,
            ),
        ] {
            assert_eq!(
                after_tier(plan, &progress, decision, false),
                want,
                "{progress:?}"
            );
        }
        // A partial fix (it made a failing test pass) is settled on tier 1
        // when only the full suite could look further; with a tier 2 to
        // run, that runs first.
        let failing = at(Tier::Failed, TierOutcome::Failing);
        assert_eq!(
            after_tier(&only_failed, &failing, &analyze, true),
            AfterTier::Settle
        );
        assert_eq!(
            after_tier(&plan, &failing, &analyze, true),
            AfterTier::NextTier
        );
        assert_eq!(
            after_tier(&only_failed, &failing, &rollback, true),
            AfterTier::Settle
        );
        let message = FullReason::Escalated(Escalation::Recorded("ran no test".into()));
        assert_eq!(message.to_string(), "the subset run ran no test");
    }

    #[test]
    fn commit_messages() {
        let plain = crate::git::MessageStyle::default();
        assert_eq!(
            fix_commit_message(
                &plain,
                "WFS-x",
                2,
                Some(Strategy::Conservative),
                (60.0, 85.0),
                &[]
            ),
            "test-cycle: iteration 2 - conservative strategy (pass: 60.0% → 85.0%)"
        );
        assert_eq!(
            rollback_commit_message(
                &plain,
                "WFS-x",
                3,
                &RollbackCause::Regression(Regression::PassRateDrop {
                    from: 85.0,
                    to: 70.0
                }),
                85.0,
                70.0
            ),
            "test-cycle: rollback iteration 3 - regression detected (pass: 70.0% < 85.0%)"
        );
        assert_eq!(
            rollback_commit_message(
                &plain,
                "WFS-x",
                1,
                &RollbackCause::Regression(Regression::TestsRemoved { from: 12, to: 11 }),
                80.0,
                100.0
            ),
            "test-cycle: rollback iteration 1 - regression detected (tests: 11 < 12)"
        );
        assert_eq!(
            rollback_commit_message(
                &plain,
                "WFS-x",
                1,
                &RollbackCause::TestEdits("skip added".into()),
                80.0,
                100.0
            ),
            "test-cycle: rollback iteration 1 - test edits rejected (skip added)"
        );
    }

    #[test]
    fn outcomes_and_overrides() {
        assert_eq!(
            fix_outcome(IterationResult::Success, true, true),
            FixOutcome::Rejected
        );
        assert_eq!(
            fix_outcome(IterationResult::Regression, false, true),
            FixOutcome::RolledBack
        );
        assert_eq!(
            fix_outcome(IterationResult::Improved, false, false),
            FixOutcome::Improved
        );
        assert_eq!(
            fix_outcome(IterationResult::NoChange, false, false),
            FixOutcome::NoChange
        );
        assert!(FixOutcome::Improved.succeeded() && !FixOutcome::NoChange.succeeded());
        let mut fs = vec![
            failure("a", "x", Criticality::Low),
            failure("b", "x", Criticality::High),
        ];
        let overrides = [
            ("a".to_string(), Criticality::Medium),
            ("b".to_string(), Criticality::Low),
        ]
        .into_iter()
        .collect();
        apply_overrides(&mut fs, &overrides);
        assert_eq!(fs[0].criticality, Criticality::Medium);
        assert_eq!(fs[1].criticality, Criticality::High, "never lowered");
    }

    fn fix(rejected: Option<&str>, paths: &[&str]) -> FixInFlight {
        FixInFlight {
            iteration: 1,
            snapshot: Some("tree".into()),
            head: None,
            started_at: chrono::Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
            observed: true,
            commit_paths: paths.iter().map(|p| p.to_string()).collect(),
            touched_tests: false,
            rejected: rejected.map(str::to_string),
            call_failed: false,
            retest: Default::default(),
        }
    }

    /// The settle decisions (commit, rollback, baseline, validation), as
    /// a table: what the run after a fix makes of it.
    #[test]
    fn settle_table() {
        let l = Limits {
            max_iterations: 3,
            ..Limits::default()
        };
        let base = rec(80.0, 10, &["a", "b"]);
        let mut run = rec(0.0, 10, &[]);
        run.run = 2;
        let med = |t: &str| failure(t, "boom", Criticality::Medium);
        struct Case {
            name: &'static str,
            merged: TestResults,
            fix: FixInFlight,
            repo: bool,
            attempts: u32,
            want: AfterRun,
            outcome: Option<FixOutcome>,
            commit: bool,
            rollback: bool,
        }
        let cases = [
            Case {
                name: "all pass on a subset: validate on the full suite, nothing settled yet",
                merged: results(Scope::Affected, 0, 10, vec![]),
                fix: fix(None, &["src/a.py"]),
                repo: true,
                attempts: 1,
                want: AfterRun::FinalValidation,
                outcome: None,
                commit: false,
                rollback: false,
            },
            Case {
                name: "full success: commit, complete",
                merged: results(Scope::Full, 0, 10, vec![]),
                fix: fix(None, &["src/a.py"]),
                repo: true,
                attempts: 1,
                want: AfterRun::Complete { partial: false },
                outcome: Some(FixOutcome::Success),
                commit: true,
                rollback: false,
            },
            Case {
                name: "improved: commit, analyse again",
                merged: results(Scope::Full, 1, 9, vec![med("a")]),
                fix: fix(None, &["src/a.py"]),
                repo: true,
                attempts: 1,
                want: AfterRun::Analyze,
                outcome: Some(FixOutcome::Improved),
                commit: true,
                rollback: false,
            },
            Case {
                name: "regression: commit, then roll it back",
                merged: results(
                    Scope::Full,
                    1,
                    3,
                    vec![
                        med("a"),
                        med("b"),
                        med("c"),
                        med("d"),
                        med("e"),
                        med("f"),
                        med("g"),
                    ],
                ),
                fix: fix(None, &["src/a.py"]),
                repo: true,
                attempts: 1,
                want: AfterRun::Rollback {
                    reason: "regression: pass rate dropped from 80.0% to 30.0%".into(),
                },
                outcome: Some(FixOutcome::RolledBack),
                commit: true,
                rollback: true,
            },
            Case {
                name: "regression without git: nothing to undo, analyse again",
                merged: results(
                    Scope::Full,
                    1,
                    3,
                    vec![
                        med("a"),
                        med("b"),
                        med("c"),
                        med("d"),
                        med("e"),
                        med("f"),
                        med("g"),
                    ],
                ),
                fix: fix(None, &["src/a.py"]),
                repo: false,
                attempts: 1,
                want: AfterRun::Analyze,
                outcome: Some(FixOutcome::Regression),
                commit: false,
                rollback: false,
            },
            Case {
                name: "rejected test edits win over success",
                merged: results(Scope::Full, 0, 10, vec![]),
                fix: fix(Some("removed test_a"), &["tests/test_a.py"]),
                repo: true,
                attempts: 1,
                want: AfterRun::Rollback {
                    reason: "fix edited the tests: removed test_a".into(),
                },
                outcome: Some(FixOutcome::Rejected),
                commit: true,
                rollback: true,
            },
            Case {
                name: "the fix changed nothing: no commit, the limit blocks",
                merged: results(Scope::Full, 1, 8, vec![med("a"), med("b")]),
                fix: fix(None, &[]),
                repo: true,
                attempts: 3,
                want: AfterRun::Blocked {
                    reason: "reached the limit of 3 fix attempts".into(),
                },
                outcome: Some(FixOutcome::NoChange),
                commit: false,
                rollback: false,
            },
        ];
        for c in cases {
            let s = settle(&SettleInput {
                messages: &crate::git::MessageStyle::default(),
                session: "WFS-test",
                fix_iteration: 1,
                run: &run,
                base: &base,
                merged: &c.merged,
                fix: &c.fix,
                repo: c.repo,
                attempts_done: c.attempts,
                no_progress: false,
                cost_cap: None,
                strategy: Some(Strategy::Conservative),
                limits: &l,
                unchecked: &[],
            });
            assert_eq!(s.decision, c.want, "{}", c.name);
            assert_eq!(s.outcome, c.outcome, "{}", c.name);
            assert_eq!(s.commit.is_some(), c.commit, "{}", c.name);
            assert_eq!(s.rollback.is_some(), c.rollback, "{}", c.name);
            if let Some(rb) = &s.rollback {
                assert_eq!(rb.kind, CommitPurpose::Rollback);
                assert_eq!(rb.run, Some(2), "the judging run is named");
            }
        }
        // Tests removed: a regression that records a count_dropped edit.
        let s = settle(&SettleInput {
            messages: &crate::git::MessageStyle::default(),
            session: "WFS-test",
            fix_iteration: 1,
            run: &run,
            base: &base,
            merged: &results(Scope::Full, 0, 9, vec![]),
            fix: &fix(None, &["tests/t.py"]),
            repo: true,
            attempts_done: 1,
            no_progress: false,
            cost_cap: None,
            strategy: Some(Strategy::Conservative),
            limits: &l,
            unchecked: &[],
        });
        assert_eq!(
            s.regression,
            Some(Regression::TestsRemoved { from: 10, to: 9 })
        );
        assert_eq!(s.count_dropped.unwrap().kind, TestEditKind::CountDropped);
        assert_eq!(
            s.rollback.unwrap().message,
            "test-cycle: rollback iteration 1 - regression detected (tests: 9 < 10)"
        );
    }

    /// A drop after earlier fixes were kept on a subset alone is not the
    /// fix under test's to answer for; with every earlier fix checked by a
    /// full run, it is.
    #[test]
    fn a_drop_after_unchecked_fixes_rolls_back_nothing() {
        let l = Limits::default();
        let base = rec(80.0, 10, &["a", "b"]);
        let mut run = rec(30.0, 10, &[]);
        run.run = 4;
        let broken: Vec<_> = ["a", "c", "d", "e", "f", "g", "h"]
            .iter()
            .map(|t| failure(t, "boom", Criticality::Medium))
            .collect();
        let full = results(Scope::Full, 1, 3, broken.clone());
        let subset = results(Scope::Affected, 1, 3, broken);
        let the_fix = fix(None, &["src/a.py"]);
        let judge = |merged: &TestResults, unchecked: &[u32]| {
            settle(&SettleInput {
                messages: &crate::git::MessageStyle::default(),
                session: "WFS-test",
                fix_iteration: 3,
                run: &run,
                base: &base,
                merged,
                fix: &the_fix,
                repo: true,
                attempts_done: 3,
                no_progress: false,
                cost_cap: None,
                strategy: Some(Strategy::Conservative),
                limits: &l,
                unchecked,
            })
        };
        let s = judge(&full, &[2]);
        assert_eq!(s.decision, AfterRun::Analyze);
        assert!(s.rollback.is_none());
        assert_eq!(
            s.unattributed,
            Some(Regression::PassRateDrop {
                from: 80.0,
                to: 30.0
            })
        );
        assert!(s.commit.is_some(), "the fix is kept and committed");
        assert_eq!(judge(&subset, &[2]).decision, AfterRun::Analyze);
        for merged in [&full, &subset] {
            let s = judge(merged, &[]);
            assert!(s.rollback.is_some(), "{:?}", merged.scope);
            assert_eq!(s.unattributed, None);
        }
    }

    #[test]
    fn fixes_settled_on_a_subset_since_the_last_full_run_are_unchecked() {
        let run = |iteration: u32, scope: Scope, result: Option<IterationResult>| IterationRecord {
            iteration,
            scope,
            result,
            ..rec(50.0, 10, &[])
        };
        use IterationResult::*;
        let (full, sub) = (Scope::Full, Scope::Affected);
        let runs = vec![
            run(1, full, None),
            // fix 1: tier 1 still fails, settled on it
            run(2, sub, Some(Improved)),
            // fix 2: tier 1 then tier 2 (both subsets), settled
            run(3, sub, Some(Improved)),
            run(3, sub, Some(NoChange)),
            // fix 3: a subset regression, rolled back
            run(4, sub, Some(Regression)),
            // fix 4: tier 1 passes, then the validation (iteration 5 judged now)
            run(5, sub, Some(Improved)),
        ];
        assert_eq!(unchecked_fixes(&runs, 5), vec![1, 2]);
        assert_eq!(unchecked_fixes(&runs[..1], 2), Vec::<u32>::new());
        // A full run settles everything before it.
        let mut later = runs.clone();
        later.push(run(5, full, Some(NoChange)));
        later.push(run(6, sub, Some(NoChange)));
        assert_eq!(unchecked_fixes(&later, 7), vec![5]);
        // An escalated subset is no settlement, and no full run either.
        let mut escalated = run(2, full, None);
        escalated.escalated = Some("ran no test".into());
        assert_eq!(
            unchecked_fixes(&[run(1, full, None), escalated], 3),
            Vec::<u32>::new()
        );
    }

    #[test]
    fn failed_tests_that_are_skipped_or_missing_count_as_removed() {
        use crate::artifacts::test_results::{CaseResult, CaseStatus};
        let case = |t: &str, status| CaseResult {
            test: t.into(),
            status,
            file: None,
            layer: None,
        };
        let mut run = results(Scope::Full, 1, 1, Vec::new());
        run.cases = vec![
            case("tests/test_ops.py::test_div", CaseStatus::Skipped),
            case("tests/test_ops.py::test_add", CaseStatus::Passed),
            case("tests/test_ops.py::test_sub", CaseStatus::Failed),
        ];
        let mut failures: Vec<Failure> = [
            "tests/test_ops.py::test_div",
            "tests/test_ops.py::test_add",
            "tests/test_ops.py::test_sub",
            "tests/test_auth.py::test_token",
        ]
        .map(|t| failure(t, "assert", Criticality::Medium))
        .to_vec();
        // Static failures are no tests: the placeholder of a run that
        // crashed (named after the command) and a collection error never
        // vanish, though a full run lists neither.
        for id in ["python -m pytest --junitxml=r.xml", "tests/test_cli.py"] {
            let mut f = failure(id, "killed by signal 11", Criticality::High);
            f.test_type = Layer::Static;
            failures.push(f);
        }
        let failed = crate::testing::results::failing_ids(&results(Scope::Full, 1, 0, failures));
        let details = |r: &TestResults| -> Vec<String> {
            vanished_tests(&failed, r, None)
                .into_iter()
                .map(|e| {
                    assert_eq!(e.kind, TestEditKind::RemovedTest);
                    format!("{}: {}", e.file, e.detail)
                })
                .collect()
        };
        assert_eq!(
            details(&run),
            [
                "tests/test_ops.py: tests/test_ops.py::test_div went from failed to skipped",
                "tests/test_auth.py: tests/test_auth.py::test_token failed before and is missing from a run that selected it",
            ]
        );
        // A subset run did not select the missing test; a skip still counts.
        run.scope = Scope::Affected;
        assert_eq!(details(&run).len(), 1);
        // A file that failed as a whole, whose tests now run, was not
        // removed (node --test: `file › file` when the file threw).
        let whole = "dist/test/v1.test.js › dist/test/v1.test.js".to_string();
        let mut loaded = results(Scope::Full, 1, 1, Vec::new());
        loaded.cases = vec![case(
            "dist/test/v1.test.js › v1 › sorts",
            CaseStatus::Passed,
        )];
        assert!(vanished_tests(std::slice::from_ref(&whole), &loaded, None).is_empty());
        loaded.cases = vec![case("dist/test/v4.test.js › v4", CaseStatus::Passed)];
        assert_eq!(
            vanished_tests(std::slice::from_ref(&whole), &loaded, None).len(),
            1
        );
        // …when the subset selected it: vitest and jest list the other
        // tests of a file they ran as skipped (tier 2 after tier 1).
        let tier2 = ["tests/test_ops.py::test_add".to_string()];
        assert!(vanished_tests(&failed, &run, Some(&tier2)).is_empty());
        let tier1 = ["tests/test_ops.py::test_div".to_string()];
        assert_eq!(vanished_tests(&failed, &run, Some(&tier1)).len(), 1);
        // No per-case results: nothing can be said.
        run.cases.clear();
        assert!(details(&run).is_empty());
    }
}
