//! Speculative attempts (DESIGN.md §11.4): one step of a fix loop runs
//! several candidate fixes at once, each in a checkout of its own made from
//! the same snapshot, outside the project. Each candidate is called (an
//! agent or a shell command), checked (links it planted are undone), its
//! diff against the snapshot taken, and tested in its checkout: the tiers of
//! the retest (the tests that failed, then the affected ones), or the test
//! command once. The machine then chooses by the measured results alone.
//!
//! The procedure of one candidate ([`run_one`]) is the same whatever runs
//! it: the real ports run candidates on threads, each with its own git
//! handle and processes ([`CandidateWorld`]); the test double runs them one
//! by one. Which test run comes next is the pure [`next_run`].

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::step::{Inspection, ProcessEnd, Snapshot};
use crate::agents::{CallFiles, CallRecord, ResolvedAgent, Role, Vars};
use crate::artifacts::Timestamp;
use crate::artifacts::fix_history::{CandidateAttempt, CandidateVerdict, Diffstat, Tamper};
use crate::artifacts::iteration_state::{RanCounts, SealedEnvironment, Strategy, Tier};
use crate::artifacts::test_results::{Layer, TestResults};
use crate::error::Result;
use crate::testing::Detected;
use crate::testing::retest::{self, NextRun, Outcome, RetestInput, SessionCosts, TierResult};

/// A batch of candidates, with every `${…}` resolved: what the ports run.
#[derive(Debug, Clone)]
pub struct CandidateBatch {
    /// The fix attempt (cycle: the iteration; `wfx run`: the attempt).
    pub iteration: u32,
    /// `wfx run`: the test step the candidates debug.
    pub step: Option<usize>,
    /// The work tree (and `HEAD`) every candidate starts from.
    pub snapshot: Snapshot,
    pub candidates: Vec<Candidate>,
    /// At most this many run at the same time.
    pub max_parallel: usize,
    pub tests: CandidateTests,
    /// The files outside the commit a checkout may use (dependency
    /// directories linked, small files copied), as for a sealed run.
    pub environment: SealedEnvironment,
    /// `agents.max_cost_usd`, and what the session spent before the step:
    /// checked before each candidate starts.
    pub cap: Option<f64>,
    pub spent: f64,
    /// wfx's files the candidates read (the fix task, the analysis),
    /// project-relative: copied into each checkout at the same place
    /// (`.workflow/` is never part of a diff).
    pub share: Vec<String>,
}

/// One candidate, ready to run.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// 1-based.
    pub index: u32,
    /// The agent's name, or `shell`.
    pub agent: String,
    pub strategy: Option<Strategy>,
    pub work: CandidateWork,
    /// Its own files (prompt, output, test logs, reports) live here.
    pub dir: PathBuf,
}

/// What a candidate runs.
#[derive(Debug, Clone)]
pub enum CandidateWork {
    Agent {
        agent: ResolvedAgent,
        role: Role,
        prompt: String,
        vars: Vars,
        files: CallFiles,
        env: Vec<(String, String)>,
    },
    Shell {
        command: String,
        log: PathBuf,
        env: Vec<(String, String)>,
        timeout: Option<Duration>,
    },
}

/// How each candidate is tested in its checkout.
#[derive(Debug, Clone)]
pub struct CandidateTests {
    pub detected: Detected,
    pub timeout: Duration,
    pub env: Vec<(String, String)>,
    /// The results before the fix: what the tiers merge over.
    pub baseline: Option<Arc<TestResults>>,
    /// The tiers of the retest (the cycle); `None`: the test command once
    /// (`wfx run`).
    pub tiers: Option<TierPlan>,
}

/// What plans the retest tiers of a candidate, besides what it changed
/// (see [`retest::RetestInput`]).
#[derive(Debug, Clone)]
pub struct TierPlan {
    pub progressive: bool,
    pub can_filter: bool,
    pub import_map: Vec<(String, Vec<String>)>,
    /// `affected_tests` of the fix strategy.
    pub strategy: Vec<String>,
    pub costs: SessionCosts,
}

/// What became of one candidate.
#[derive(Debug, Clone)]
pub struct CandidateDone {
    pub index: u32,
    pub end: CandidateEnd,
}

#[derive(Debug, Clone)]
pub enum CandidateEnd {
    /// Not started: the cost cap was reached before its turn (the reason).
    NotStarted(String),
    /// Its checkout could not be made or its test command not run: the
    /// environment's error, as people read it.
    Broken(String),
    Ran(Box<CandidateRan>),
}

/// A candidate that ran.
#[derive(Debug, Clone)]
pub struct CandidateRan {
    /// The agent call (absent for a shell command).
    pub call: Option<CallRecord>,
    /// The shell command's end (absent for an agent).
    pub shell: Option<ProcessEnd>,
    /// What it changed against the snapshot, in its checkout.
    pub inspection: Inspection,
    /// Its work tree as a tree of the project's repository (what is applied
    /// when it wins); `None` outside git.
    pub tree: Option<String>,
    /// Files it replaced by links, or links it made that point outside the
    /// project: put back before anything was measured.
    pub links_undone: Vec<String>,
    pub runs: Vec<CandidateRun>,
    /// The tests' results after its runs, merged over the baseline (the
    /// full run itself when it ran one); `None` when nothing ran.
    pub merged: Option<TestResults>,
    /// New failures that passed on their re-run.
    pub flaky: Vec<String>,
    /// From its checkout made to its checkout removed (the real ports), or
    /// the procedure alone (the test double).
    pub duration_ms: u64,
    /// Of which the agent's call (or the shell command), as wfx waited for it.
    pub agent_ms: u64,
    /// Of which its test runs (the re-run of new failures included).
    pub tests_ms: u64,
}

impl CandidateRan {
    /// The call or command ended by Ctrl-C.
    pub fn interrupted(&self) -> bool {
        self.call.as_ref().is_some_and(|c| c.interrupted)
    }
}

/// The record of a candidate that never ran, and what the choice reads of it.
pub type NeverRan = (CandidateAttempt, Measured);

/// The part of a candidate's record both front ends fill alike: who it
/// was and, for one that ran, its time, diff, call or command, links put
/// back and whether it changed and tested anything. `Err` is the whole
/// record of one that never ran (not started, or could not run).
pub fn common_record(
    index: u32,
    agent: String,
    strategy: Option<Strategy>,
    end: &CandidateEnd,
) -> std::result::Result<(CandidateAttempt, Measured, &CandidateRan), Box<NeverRan>> {
    let mut row = CandidateAttempt {
        candidate: index,
        agent,
        strategy,
        verdict: CandidateVerdict::Untested,
        reason: String::new(),
        duration_ms: 0,
        agent_ms: 0,
        tests_ms: 0,
        exit_code: None,
        timed_out: false,
        cost_usd: None,
        turns: None,
        files_changed: Vec::new(),
        diffstat: Diffstat::default(),
        diff: Default::default(),
        test_edits: Vec::new(),
        tiers: Vec::new(),
        pass_rate_after: None,
        fixed: 0,
        broken: Vec::new(),
        tamper: None,
    };
    let mut me = Measured::default();
    let r = match end {
        CandidateEnd::NotStarted(why) => {
            me.not_started = true;
            row.reason = format!("not started: {why}");
            return Err(Box::new((row, me)));
        }
        CandidateEnd::Broken(why) => {
            me.changed = true;
            row.reason = format!("could not run: {why}");
            return Err(Box::new((row, me)));
        }
        CandidateEnd::Ran(r) => r,
    };
    row.duration_ms = r.duration_ms;
    row.agent_ms = r.agent_ms;
    row.tests_ms = r.tests_ms;
    row.files_changed = r.inspection.files_changed();
    row.diffstat = Diffstat {
        files: r.inspection.diffstat.files as u32,
        insertions: r.inspection.diffstat.insertions as u32,
        deletions: r.inspection.diffstat.deletions as u32,
    };
    row.diff = r.inspection.diff.clone();
    if let Some(c) = &r.call {
        row.exit_code = c.exit_code;
        row.timed_out = c.timed_out;
        row.cost_usd = c.cost_usd;
        row.turns = c.turns;
        row.tamper = c.tamper;
        me.timed_out = c.timed_out;
        me.error = c.failed();
    }
    if let Some(e) = &r.shell {
        row.exit_code = e.exit_code;
        row.timed_out = e.timed_out;
        me.timed_out = e.timed_out;
        me.error = !e.success();
    }
    if !r.links_undone.is_empty() {
        row.tamper = Some(Tamper::LinkPlanted);
    }
    me.changed = !r.inspection.changes.is_empty();
    me.tested = r.merged.is_some();
    me.diff_lines = (r.inspection.diffstat.insertions + r.inspection.diffstat.deletions) as usize;
    Ok((row, me, r))
}

/// One test run of a candidate.
#[derive(Debug, Clone)]
pub struct CandidateRun {
    pub tier: Tier,
    /// What the tier ran (passed and failed), before merging.
    pub ran: RanCounts,
    /// Why the tier could not judge anything (then the full suite ran).
    pub escalated: Option<String>,
    /// Its log, project-relative.
    pub log: String,
    pub duration_ms: u64,
}

/// What the ports tell while a batch runs (for the live events).
#[derive(Debug)]
pub enum CandidateNote<'a> {
    Started(&'a Candidate),
    Finished(&'a Candidate, &'a CandidateDone),
}

/// What one candidate's procedure needs of the world: its checkout.
pub trait CandidateWorld {
    /// The clock its times are measured by (the ports' clock: fixed in
    /// tests).
    fn now(&self) -> Timestamp;
    fn invoke_agent(&mut self, inv: &crate::agents::Invocation) -> Result<CallRecord>;
    fn shell(&mut self, run: &super::ports::ShellRun<'_>) -> Result<ProcessEnd>;
    /// Where the candidate runs (the project root in its checkout).
    fn root(&self) -> PathBuf;
    /// What the candidate's runs need in their environment besides the
    /// request's (cargo's target, Python's path: see `sealed_env`).
    fn env(&self) -> Vec<(String, String)>;
    /// Put back files replaced by links and remove links pointing outside
    /// the project (DESIGN.md §11.3); the paths.
    fn undo_planted_links(&mut self) -> Result<Vec<String>>;
    /// What changed against the snapshot.
    fn inspect(&mut self, versions_of: Option<fn(&str) -> bool>) -> Result<Inspection>;
    fn run_tests(&mut self, run: &super::ports::TestRun<'_>) -> Result<TestResults>;
    /// The checkout's files as a tree of the project's repository.
    fn tree(&mut self) -> Result<Option<String>>;
}

/// A tier a candidate has run, as the next one is planned from.
#[derive(Debug, Clone)]
pub struct TierDone {
    pub tier: Tier,
    pub outcome: Outcome,
    /// Tests failing before the fix that pass now.
    pub fixed: usize,
    /// Tests passing before the fix that fail now.
    pub broken: usize,
}

/// The next test run of a candidate that changed `changed`
/// (`touched_tests`: test files among them), after `done`: a tier (its
/// ids), the full suite (`None`), or nothing more. The tiers are those of
/// the retest (DESIGN.md §10.4), the full suite included: a candidate that
/// passes the tiers it is given may still break a test outside them, and
/// the choice must not prefer it for that. Nothing more runs for a
/// candidate that cannot be better than the run before: its tier 1 made
/// no failing test pass, or a tier showed a regression.
pub fn next_run(
    tests: &CandidateTests,
    changed: &[String],
    touched_tests: bool,
    done: &[TierDone],
) -> Option<(Tier, Option<Vec<String>>)> {
    let (Some(t), Some(baseline)) = (&tests.tiers, &tests.baseline) else {
        return done.is_empty().then_some((Tier::Full, None));
    };
    let last = done.last();
    if let Some(d) = last
        && (d.tier == Tier::Full
            || d.broken > 0
            || (d.tier == Tier::Failed && d.outcome == Outcome::Failing && d.fixed == 0))
    {
        return None;
    }
    let plan = retest::plan(&RetestInput {
        baseline,
        progressive: t.progressive,
        can_filter: t.can_filter,
        touched_tests,
        changed_files: changed,
        import_map: &t.import_map,
        strategy: &t.strategy,
        related: &[],
        costs: t.costs,
    });
    match retest::next(&plan, last.map(|d| (d.tier, d.outcome.clone()))) {
        NextRun::Tier { tier, ids } => Some((tier, Some(ids))),
        NextRun::Full(_) => Some((Tier::Full, None)),
        NextRun::Done => None,
    }
}

/// Failing before the fix (ids), for counting what a candidate fixed.
fn failing_ids(r: &TestResults) -> BTreeSet<&str> {
    r.failures
        .iter()
        .filter(|f| f.test_type != Layer::Static)
        .map(|f| f.test.as_str())
        .collect()
}

/// How many of `before`'s failing tests pass in `after`.
pub fn fixed_count(before: &TestResults, after: &TestResults) -> usize {
    let now: BTreeSet<&str> = after.failures.iter().map(|f| f.test.as_str()).collect();
    failing_ids(before)
        .into_iter()
        .filter(|t| !now.contains(t) && after.cases.iter().any(|c| c.test == *t))
        .count()
}

/// Tests passing before the fix that fail in `after` (flaky ones aside):
/// the candidate's regressions.
pub fn broken_tests(before: &TestResults, after: &TestResults) -> Vec<String> {
    let known = failing_ids(before);
    let passed: BTreeSet<&str> = before
        .cases
        .iter()
        .map(|c| c.test.as_str())
        .filter(|t| !known.contains(t))
        .collect();
    after
        .failures
        .iter()
        .filter(|f| !f.flaky && f.test_type != Layer::Static && passed.contains(f.test.as_str()))
        .map(|f| f.test.clone())
        .collect()
}

/// What the choice among candidates reads of one (see [`choose`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// Not started (the cost cap).
    pub not_started: bool,
    /// The agent could not be reached.
    pub unavailable: bool,
    /// The call (or command) failed.
    pub error: bool,
    pub timed_out: bool,
    /// Its test edits are rejected by the policy.
    pub rejected: bool,
    /// It changed something and its tests ran.
    pub tested: bool,
    /// It changed something.
    pub changed: bool,
    pub fixed: usize,
    pub broken: usize,
    /// Lines added and removed.
    pub diff_lines: usize,
}

/// The verdict of every candidate (in order) and the one chosen (its
/// position): no regression, most previously failing tests fixed, then
/// the smallest diff, then the earliest (DESIGN.md §11.4). None is chosen
/// when no candidate fixed a failing test without breaking one: the step
/// is then a failed attempt.
pub fn choose(measured: &[Measured]) -> (Vec<CandidateVerdict>, Option<usize>) {
    use CandidateVerdict as V;
    let mut verdicts: Vec<V> = measured
        .iter()
        .map(|m| {
            if m.not_started {
                V::NotStarted
            } else if m.unavailable {
                V::Unavailable
            } else if m.timed_out {
                V::Timeout
            } else if m.error {
                V::Error
            } else if m.rejected {
                V::Rejected
            } else if !m.changed {
                V::NoChange
            } else if !m.tested {
                V::Untested
            } else if m.broken > 0 {
                V::Regression
            } else if m.fixed == 0 {
                V::NoChange
            } else {
                V::Outranked
            }
        })
        .collect();
    let best = measured
        .iter()
        .enumerate()
        .filter(|(i, _)| verdicts[*i] == V::Outranked)
        .min_by_key(|(i, m)| (std::cmp::Reverse(m.fixed), m.diff_lines, *i))
        .map(|(i, _)| i);
    if let Some(i) = best {
        verdicts[i] = V::Chosen;
    }
    (verdicts, best)
}

/// The procedure of one candidate (see the module docs): the call, the
/// link check, the diff, then its test runs, each with its own log under
/// the candidate's directory. A call that failed, timed out or changed
/// nothing is not tested. Ctrl-C ends it where it is.
pub fn run_one(
    world: &mut dyn CandidateWorld,
    c: &Candidate,
    tests: &CandidateTests,
    versions_of: Option<fn(&str) -> bool>,
    shown: &dyn Fn(&std::path::Path) -> String,
) -> Result<CandidateRan> {
    let started = world.now();
    let root = world.root();
    let agent_started = world.now();
    let (call, shell) = match &c.work {
        CandidateWork::Agent {
            agent,
            role,
            prompt,
            vars,
            files,
            env,
        } => {
            let call = world.invoke_agent(&crate::agents::Invocation {
                agent,
                role: *role,
                prompt,
                vars,
                files,
                cwd: &root,
                env,
            })?;
            (Some(call), None)
        }
        CandidateWork::Shell {
            command,
            log,
            env,
            timeout,
        } => {
            let end = world.shell(&super::ports::ShellRun {
                command,
                cwd: &root,
                log,
                fresh_log: true,
                env,
                timeout: *timeout,
            })?;
            (None, Some(end))
        }
    };
    let agent_ms = millis(world, agent_started);
    let links_undone = world.undo_planted_links()?;
    let inspection = world.inspect(versions_of)?;
    let mut ran = CandidateRan {
        call,
        shell,
        inspection,
        tree: None,
        links_undone,
        runs: Vec::new(),
        merged: None,
        flaky: Vec::new(),
        duration_ms: 0,
        agent_ms,
        tests_ms: 0,
    };
    // What it changed, before its test runs add their own files.
    ran.tree = world.tree()?;
    let failed_call = ran
        .call
        .as_ref()
        .is_some_and(|c| c.failed() || c.interrupted)
        || ran.shell.as_ref().is_some_and(|e| e.timed_out);
    let nothing = ran.inspection.changes.is_empty() && tests.tiers.is_some();
    if !failed_call && !nothing && !crate::process::interrupted() {
        test_candidate(world, c, tests, &mut ran, shown)?;
    }
    ran.duration_ms = millis(world, started);
    Ok(ran)
}

/// Milliseconds since `t` by the world's clock.
fn millis(world: &dyn CandidateWorld, t: Timestamp) -> u64 {
    crate::duration::ms_between(t, world.now())
}

/// The test runs of a candidate ([`next_run`]), merged over the baseline,
/// then the re-run of its new failures (flaky ones do not count).
fn test_candidate(
    world: &mut dyn CandidateWorld,
    c: &Candidate,
    tests: &CandidateTests,
    ran: &mut CandidateRan,
    shown: &dyn Fn(&std::path::Path) -> String,
) -> Result<()> {
    let root = world.root();
    let env: Vec<(String, String)> = tests.env.iter().cloned().chain(world.env()).collect();
    let changed = ran.inspection.commit_paths.clone();
    let touched = changed.iter().any(|p| crate::project::is_test_path(p));
    let report_dir = c.dir.join("junit");
    let mut done: Vec<TierDone> = Vec::new();
    let mut merged: Option<TestResults> = None;
    while let Some((tier, ids)) = next_run(tests, &changed, touched, &done) {
        if crate::process::interrupted() {
            break;
        }
        let log = c.dir.join(format!("tier-{}-output.log", tier.as_str()));
        let previous = merged.as_ref().or(tests.baseline.as_deref());
        let run_started = world.now();
        let results = world.run_tests(&super::ports::TestRun {
            root: &root,
            detected: &tests.detected,
            subset: ids.as_deref(),
            log: &log,
            report_dir: &report_dir,
            timeout: tests.timeout,
            env: &env,
            previous,
        })?;
        ran.tests_ms += millis(world, run_started);
        let mut run = CandidateRun {
            tier,
            ran: RanCounts::of(&results),
            escalated: None,
            log: shown(&log),
            duration_ms: results.duration_ms,
        };
        let outcome = match (&ids, tests.baseline.as_deref()) {
            (Some(ids), Some(baseline)) => {
                let base = merged.as_ref().unwrap_or(baseline);
                match retest::merge_tier(base, ids, &results) {
                    TierResult::Merged { results, passed } => {
                        merged = Some(*results);
                        if passed {
                            Outcome::Passed
                        } else {
                            Outcome::Failing
                        }
                    }
                    TierResult::Escalate(e) => {
                        run.escalated = Some(e.to_string());
                        Outcome::Escalated(e)
                    }
                }
            }
            _ => {
                let passed = results.failed + results.errors == 0;
                merged = Some(results);
                if passed {
                    Outcome::Passed
                } else {
                    Outcome::Failing
                }
            }
        };
        let (fixed, broken) = match (&merged, tests.baseline.as_deref()) {
            (Some(m), Some(b)) => (fixed_count(b, m), broken_tests(b, m).len()),
            _ => (0, 0),
        };
        ran.runs.push(run);
        done.push(TierDone {
            tier,
            outcome,
            fixed,
            broken,
        });
    }
    // New failures are re-run once: a flaky test is nobody's regression.
    if let (Some(m), Some(baseline)) = (&mut merged, tests.baseline.as_deref()) {
        let known = failing_ids(baseline);
        let new: Vec<String> = m
            .failures
            .iter()
            .filter(|f| {
                f.test_type != Layer::Static && !f.flaky && !known.contains(f.test.as_str())
            })
            .map(|f| f.test.clone())
            .collect();
        if !new.is_empty()
            && crate::testing::select::filter_args(tests.detected.framework, &new).is_some()
            && !crate::process::interrupted()
        {
            let log = c.dir.join("rerun-output.log");
            let run_started = world.now();
            let rerun = world.run_tests(&super::ports::TestRun {
                root: &root,
                detected: &tests.detected,
                subset: Some(&new),
                log: &log,
                report_dir: &report_dir,
                timeout: tests.timeout,
                env: &env,
                previous: None,
            })?;
            ran.tests_ms += millis(world, run_started);
            ran.flaky = crate::testing::mark_flaky(m, &rerun);
        }
    }
    ran.merged = merged;
    Ok(())
}

/// The reason a candidate may not start: the cost cap, counting what the
/// candidates that finished cost (DESIGN.md §11.4).
pub fn may_start(batch: &CandidateBatch, finished_cost: f64) -> Option<String> {
    super::policy::cost_cap(batch.spent + finished_cost, batch.cap)
}

/// What a finished candidate cost.
pub fn cost_of(done: &CandidateDone) -> f64 {
    match &done.end {
        CandidateEnd::Ran(r) => r.call.as_ref().and_then(|c| c.cost_usd).unwrap_or(0.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::test_results::Scope;
    use crate::testing::parse::{ParsedCase, ParsedRun, Status};

    fn results(cases: &[(&str, bool)]) -> TestResults {
        let mut parsed = ParsedRun::new("junit");
        for (id, pass) in cases {
            parsed.cases.push(ParsedCase {
                id: id.to_string(),
                status: if *pass {
                    Status::Passed
                } else {
                    Status::Failed
                },
                file: Some(id.split("::").next().unwrap_or_default().to_string()),
                error: if *pass {
                    String::new()
                } else {
                    "AssertionError".into()
                },
                ..ParsedCase::default()
            });
        }
        let failing = cases.iter().any(|(_, p)| !p);
        crate::testing::results::build(
            parsed,
            crate::testing::results::RunFacts {
                command: "pytest".into(),
                framework: crate::testing::Framework::Pytest,
                scope: Scope::Full,
                exit_code: Some(i32::from(failing)),
                timed_out_after: None,
                signal: None,
                duration_ms: 1000,
                setup_ms: None,
                output_tail: "",
                output_log: None,
                truncated: false,
                started_at: None,
                previous: None,
                notes: Vec::new(),
            },
        )
    }

    fn tests(tiers: bool) -> CandidateTests {
        CandidateTests {
            detected: Detected::new(crate::testing::Framework::Pytest, "pytest"),
            timeout: Duration::from_secs(60),
            env: Vec::new(),
            baseline: Some(Arc::new(results(&[
                ("tests/test_a.py::test_one", false),
                ("tests/test_a.py::test_two", true),
                ("tests/test_b.py::test_three", true),
            ]))),
            tiers: tiers.then(|| TierPlan {
                progressive: true,
                can_filter: true,
                import_map: vec![("tests/test_b.py".into(), vec!["src/calc.py".into()])],
                strategy: Vec::new(),
                costs: SessionCosts::default(),
            }),
        }
    }

    fn done(tier: Tier, outcome: Outcome, fixed: usize) -> TierDone {
        TierDone {
            tier,
            outcome,
            fixed,
            broken: 0,
        }
    }

    #[test]
    fn the_tiers_of_a_candidate() {
        let t = tests(true);
        let changed = vec!["src/calc.py".to_string()];
        // Tier 1: the failing test.
        assert_eq!(
            next_run(&t, &changed, false, &[]),
            Some((
                Tier::Failed,
                Some(vec!["tests/test_a.py::test_one".to_string()])
            ))
        );
        // It passes: the affected tests next.
        let after_one = [done(Tier::Failed, Outcome::Passed, 1)];
        let Some((Tier::Affected, Some(ids))) = next_run(&t, &changed, false, &after_one) else {
            panic!("tier 2 expected");
        };
        assert!(
            ids.contains(&"tests/test_b.py::test_three".to_string()),
            "{ids:?}"
        );
        // After tier 2 the full suite: a test outside the tiers may break.
        let after_two = [
            done(Tier::Failed, Outcome::Passed, 1),
            done(Tier::Affected, Outcome::Passed, 1),
        ];
        assert_eq!(
            next_run(&t, &changed, false, &after_two),
            Some((Tier::Full, None))
        );
        let after_full = [
            after_two[0].clone(),
            after_two[1].clone(),
            done(Tier::Full, Outcome::Passed, 1),
        ];
        assert_eq!(next_run(&t, &changed, false, &after_full), None);
        // A tier showed a regression: it cannot win; nothing more.
        let broke = [TierDone {
            broken: 1,
            ..done(Tier::Failed, Outcome::Passed, 1)
        }];
        assert_eq!(next_run(&t, &changed, false, &broke), None);
        // Tier 1 fixed nothing: the candidate cannot win; no tier 2.
        let nothing = [done(Tier::Failed, Outcome::Failing, 0)];
        assert_eq!(next_run(&t, &changed, false, &nothing), None);
        // A tier that could not judge escalates to the full suite, once.
        let escalated = [done(
            Tier::Failed,
            Outcome::Escalated(retest::Escalation::NothingRan),
            0,
        )];
        assert_eq!(
            next_run(&t, &changed, false, &escalated),
            Some((Tier::Full, None))
        );
        let full_done = [
            escalated[0].clone(),
            done(
                Tier::Full,
                Outcome::Escalated(retest::Escalation::NothingRan),
                0,
            ),
        ];
        assert_eq!(next_run(&t, &changed, false, &full_done), None);
        // Test files changed: only the full suite can judge.
        assert_eq!(
            next_run(&t, &["tests/test_a.py".to_string()], true, &[]),
            Some((Tier::Full, None))
        );
        // `wfx run`: the test command once.
        let once = tests(false);
        assert_eq!(
            next_run(&once, &changed, false, &[]),
            Some((Tier::Full, None))
        );
        assert_eq!(
            next_run(
                &once,
                &changed,
                false,
                &[done(Tier::Full, Outcome::Failing, 0)]
            ),
            None
        );
    }

    fn m(fixed: usize, broken: usize, diff_lines: usize) -> Measured {
        Measured {
            changed: true,
            tested: true,
            fixed,
            broken,
            diff_lines,
            ..Measured::default()
        }
    }

    /// The choice, as a table: (candidates, verdicts, chosen).
    #[test]
    fn the_choice_among_candidates() {
        use CandidateVerdict::*;
        let error = Measured {
            changed: true,
            error: true,
            ..Measured::default()
        };
        let timeout = Measured {
            changed: true,
            timed_out: true,
            ..Measured::default()
        };
        let unchanged = Measured::default();
        let not_started = Measured {
            not_started: true,
            ..Measured::default()
        };
        let rejected = Measured {
            rejected: true,
            ..m(2, 0, 1)
        };
        let untested = Measured {
            tested: false,
            ..m(0, 0, 3)
        };
        type Case = (
            &'static str,
            Vec<Measured>,
            Vec<CandidateVerdict>,
            Option<usize>,
        );
        let cases: Vec<Case> = vec![
            (
                "most fixed wins over a smaller diff",
                vec![m(1, 0, 2), m(2, 0, 40), m(0, 0, 1)],
                vec![Outranked, Chosen, NoChange],
                Some(1),
            ),
            (
                "a regression never wins, however much it fixes",
                vec![m(3, 1, 2), m(1, 0, 9)],
                vec![Regression, Chosen],
                Some(1),
            ),
            (
                "a tie on fixed: the smaller diff",
                vec![m(2, 0, 9), m(2, 0, 3)],
                vec![Outranked, Chosen],
                Some(1),
            ),
            (
                "all equal: the earliest",
                vec![m(1, 0, 4), m(1, 0, 4), m(1, 0, 4)],
                vec![Chosen, Outranked, Outranked],
                Some(0),
            ),
            (
                "all regress: none, a failed attempt",
                vec![m(2, 1, 4), m(1, 2, 4)],
                vec![Regression, Regression],
                None,
            ),
            (
                "nothing fixed: none",
                vec![m(0, 0, 4), unchanged.clone()],
                vec![NoChange, NoChange],
                None,
            ),
            (
                "one errors, one times out, one fixes",
                vec![error, timeout, m(1, 0, 2)],
                vec![Error, Timeout, Chosen],
                Some(2),
            ),
            (
                "rejected test edits, untested, not started",
                vec![rejected, untested, not_started, m(1, 0, 8)],
                vec![Rejected, Untested, NotStarted, Chosen],
                Some(3),
            ),
        ];
        for (name, measured, verdicts, chosen) in cases {
            assert_eq!(choose(&measured), (verdicts, chosen), "{name}");
        }
    }

    #[test]
    fn what_a_candidate_broke() {
        let before = results(&[("a::one", false), ("a::two", true), ("a::three", true)]);
        let after = results(&[("a::one", true), ("a::two", false), ("a::three", true)]);
        assert_eq!(broken_tests(&before, &after), vec!["a::two".to_string()]);
        // Still failing is not broken.
        let same = results(&[("a::one", false), ("a::two", true), ("a::three", true)]);
        assert!(broken_tests(&before, &same).is_empty());
    }

    #[test]
    fn what_a_candidate_fixed() {
        let before = results(&[("a::one", false), ("a::two", false), ("a::three", true)]);
        let after = results(&[("a::one", true), ("a::two", false), ("a::three", false)]);
        assert_eq!(fixed_count(&before, &after), 1);
        // A test that vanished is not fixed.
        let vanished = results(&[("a::two", true), ("a::three", true)]);
        assert_eq!(fixed_count(&before, &vanished), 1);
    }
}
