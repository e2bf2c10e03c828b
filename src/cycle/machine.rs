//! The test-fix machine (DESIGN.md §5, §10.1): [`CycleMachine::next`]
//! reads the state and names the one effect to perform; `observe` folds
//! what happened into the state, deciding with the pure functions of
//! [`super::decide`] and [`super::guard`]. No I/O here: the engine's
//! driver performs the effects and commits each step.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::decide::{self, AfterRun, AfterTier, Limits, SettleInput, StrategyInput};
use super::docs;
use super::guard;
use super::state::{CycleState, Doc, Stop};
use super::{LOOP_TASK, fix_task_id};
use crate::agents::{self, AnalysisOutcome, CallFiles, CallRecord, ResolvedAgent, Role, Vars};
use crate::artifacts::config::{ArtifactPolicy, Config};
use crate::artifacts::fix_history::{CallOutcome, Diffstat, FixAttempt, FixOutcome};
use crate::artifacts::iteration_state::{
    Action, CommitPurpose, FixInFlight, IterationFailures, IterationRecord, IterationResult,
    LoopStatus, NextAction, RanCounts, RetestProgress, Strategy, Tier, TierOutcome, settled_runs,
};
use crate::artifacts::session::{PhaseStatus, SessionStatus};
use crate::artifacts::task::{
    FixStrategy, FlowControl, FlowStep, Task, TaskContext, TaskMeta, TaskResult, TaskStatus,
};
use crate::artifacts::task_record::TaskRecord;
use crate::artifacts::test_results::{Scope, TestResults};
use crate::artifacts::{Extra, task::TaskType};
use crate::engine::event::{
    AnalysisEvent, Done, Event, FixEvent, FrontEnd, RunEvent, Start, TriedEvent,
};
use crate::engine::step::{
    AgentCallDone, AgentRequest, AnalysisRequest, ArchiveRequest, Before, CommitRequest, Effect,
    Ending, FlakyCheck, Inspection, Observation, Observed, PauseReason, RevertRequest, ShellDone,
    ShellRequest, Snapshot, SquashRequest, Step, TestRequest, TestsRun, Text,
};
use crate::engine::{Machine, duration, policy};
use crate::error::{Exit, Result};
use crate::git::{CommitKind, Subject, Trailers};
use crate::render::Renderer;
use crate::session::{Location, SessionPaths, Workspace};
use crate::testing::Detected;
use crate::testing::retest::{self, NextRun, RelatedQuery, RelatedSetup, RetestPlan, TierResult};

/// Everything a phase-5 run works with that does not change while it
/// runs: the project, the config and limits, the agents, the templates.
pub struct CycleMachine {
    pub ws: Workspace,
    pub id: String,
    /// Where the code is: the project root, or the session's worktree.
    pub root: PathBuf,
    pub worktree: bool,
    pub config: Config,
    pub limits: Limits,
    pub fix_agent: Option<ResolvedAgent>,
    pub test_gen_agent: Option<ResolvedAgent>,
    pub chain: Vec<ResolvedAgent>,
    /// The test command (none: the session cannot run tests).
    pub detected: Option<Detected>,
    pub renderer: Arc<Renderer>,
    /// `TEST_ANALYSIS_RESULTS.md`, for the test generation prompt.
    pub analysis_text: String,
    /// Commits are made (a git repository, commits not turned off).
    pub repo: bool,
    /// How the commit messages are written (`git.message`, the
    /// repository's convention).
    pub messages: crate::git::MessageStyle,
    /// Test file → the source files it exercises (the context package's
    /// `test_coverage.existing_tests[]`), for the affected-tests tier.
    pub import_map: Vec<(String, Vec<String>)>,
    /// What the runner's related-tests query needs (DESIGN.md §10.4).
    pub related: RelatedSetup,
    /// `--watch`: a person's fix is awaited in-process (the driver watches
    /// the files), so the message asks for a save, not a command.
    pub watch: bool,
}

impl Machine for CycleMachine {
    type State = CycleState;

    fn next(&self, s: &CycleState) -> Step {
        // A fix kept by the run that reached a limit is committed before
        // the session stops blocked: its checkpoint is not left for a
        // resume that may never come.
        let blocked_now = matches!(s.stop, Some(Stop::Blocked { just_now: true }));
        if let Some(stop) = &s.stop
            && !(blocked_now && s.iter.pending_commit.is_some())
        {
            return Step::End(self.ending(s, stop));
        }
        if let Some(pc) = &s.iter.pending_commit {
            return Step::Do(Effect::Commit(CommitRequest {
                paths: pc.paths.clone(),
                session_dir: self.session_dir_for_commit(s),
                message: pc.message.clone(),
                trailers: Trailers::new(self.id.clone(), pc.iteration, CommitKind::Fix),
            }));
        }
        match s.iter.status {
            LoopStatus::Completed | LoopStatus::PartialSuccess => {
                return Step::Do(Effect::Archive(self.archive_request(s)));
            }
            LoopStatus::Blocked => {
                return Step::End(self.ending(s, &Stop::Blocked { just_now: false }));
            }
            _ => {}
        }
        if (s.iter.test_infrastructure.is_none() || s.survey_due) && self.tests_generated(s) {
            return Step::Do(Effect::Survey);
        }
        match &s.iter.action {
            Action::ExecuteTask => super::initial::next(self, s),
            Action::RunTests => Step::Do(Effect::RunTests(self.test_request(
                s,
                1,
                None,
                None,
                "the full suite",
                Some(Default::default()),
            ))),
            Action::FinalValidation { fix } => {
                let n = s.iter.iterations.last().map_or(1, |r| r.iteration);
                let known = self.baseline_failing(s);
                let mut req = self.test_request(
                    s,
                    n,
                    None,
                    self.baseline_results(s),
                    validation_label(s),
                    Some(known),
                );
                req.seal = self.seal_for(s, fix);
                Step::Do(Effect::RunTests(req))
            }
            Action::AnalyzeFailures => Step::Do(Effect::Analyze(self.analysis_request(s))),
            Action::ExecuteFixTask { fix: None } => Step::Do(Effect::Snapshot),
            Action::ExecuteFixTask { fix: Some(fix) } => self.next_fix(s, fix),
            Action::Retest { fix } => self.next_retest(s, fix),
            Action::Rollback { rollback } if rollback.restore.is_some() => {
                Step::Do(Effect::Restore(Snapshot {
                    tree: rollback.restore.clone(),
                    head: None,
                }))
            }
            Action::Rollback { rollback } => {
                let commit = s
                    .record_of_fix(rollback.iteration)
                    .and_then(|r| r.fix_commit.clone());
                match commit {
                    Some(commit) if self.repo => Step::Do(Effect::Revert(RevertRequest {
                        commit,
                        session_dir: self.session_dir_for_commit(s),
                        message: rollback.message.clone(),
                        trailers: Trailers::new(
                            self.id.clone(),
                            rollback.iteration,
                            CommitKind::Rollback,
                        ),
                    })),
                    _ => Step::Do(Effect::Update),
                }
            }
            Action::Complete => Step::Do(Effect::Update),
            Action::None => Step::End(self.ending(s, &Stop::Blocked { just_now: false })),
        }
    }

    fn observe(&self, s: &mut CycleState, obs: Observation) -> Vec<Event> {
        s.now = obs.at;
        let mut out = Vec::new();
        match obs.what {
            Observed::Start { resumed } => self.start(s, resumed, &mut out),
            Observed::Paused(reason) => self.pause(s, reason, &mut out),
            Observed::Blocked(reason) => self.block(s, &reason, &mut out),
            Observed::Committed(id) if s.iter.pending_commit.is_some() => {
                self.committed(s, id, &mut out)
            }
            Observed::Surveyed(found) => {
                s.survey_due = false;
                match (&s.iter.test_infrastructure, &mut s.iter.sealed_environment) {
                    // A resume: only the person's changes since the last
                    // agent call join the recorded environment.
                    (Some(_), Some(env)) => {
                        let done = s
                            .history
                            .agent_calls
                            .iter()
                            .map(|c| {
                                c.started_at + chrono::Duration::milliseconds(c.duration_ms as i64)
                            })
                            .max();
                        env.merge_resumed(found.environment, done);
                    }
                    _ => {
                        s.iter.test_infrastructure = Some(found.infrastructure);
                        s.iter.sealed_environment = Some(found.environment);
                    }
                }
                s.touch(Doc::State);
            }
            Observed::Archived { commit } => {
                s.stop = Some(Stop::Finished { commit });
                s.location = Location::Archived;
                out.push(self.complete_event(s));
            }
            what => match s.iter.next_action() {
                NextAction::ExecuteTask => super::initial::observe(self, s, what, &mut out),
                NextAction::RunTests => {
                    if let Observed::Tests(run) = what {
                        self.first_run(s, *run, &mut out);
                    }
                }
                NextAction::AnalyzeFailures => {
                    if let Observed::Analyzed(a) = what {
                        self.analyzed(s, *a, &mut out);
                    }
                }
                NextAction::ExecuteFixTask => match what {
                    Observed::Snapshot(snap) => self.fix_started(s, snap),
                    Observed::Agent(done) => {
                        let AgentCallDone {
                            call, inspection, ..
                        } = *done;
                        self.fix_observed(s, Some(call), inspection, &mut out);
                    }
                    Observed::Inspected(inspection) => {
                        if inspection.before.tree.is_some() && inspection.changes.is_empty() {
                            self.pause(s, PauseReason::ManualFix { unchanged: true }, &mut out);
                        } else {
                            self.fix_observed(s, None, Some(inspection), &mut out);
                        }
                    }
                    Observed::Updated => self.fix_observed(s, None, None, &mut out),
                    _ => {}
                },
                NextAction::Retest | NextAction::FinalValidation => match what {
                    Observed::Tests(run) => self.judged(s, *run, &mut out),
                    Observed::Shell(done) => self.related_answered(s, &done),
                    _ => {}
                },
                NextAction::Rollback => match what {
                    Observed::Restored(files) => self.undone(s, files, &mut out),
                    Observed::Reverted(Ok(id)) => self.rolled_back(s, id, &mut out),
                    Observed::Reverted(Err(msg)) => {
                        let k = match &s.iter.action {
                            Action::Rollback { rollback } => rollback.iteration,
                            _ => 0,
                        };
                        self.block(
                            s,
                            &format!("cannot roll back iteration {k}: {msg}"),
                            &mut out,
                        );
                    }
                    Observed::Updated => self.rolled_back(s, None, &mut out),
                    _ => {}
                },
                NextAction::Complete => self.complete(s),
                NextAction::None => {}
            },
        }
        out
    }

    fn documents(&self, s: &mut CycleState) -> Result<Vec<crate::engine::Document>> {
        docs::documents(self, s)
    }

    fn spent_usd(&self, s: &CycleState) -> f64 {
        s.spent_usd()
    }

    fn session_dir(&self, s: &CycleState) -> PathBuf {
        self.paths(s).dir
    }
}

impl CycleMachine {
    /// The session's paths where it is now.
    pub fn paths(&self, s: &CycleState) -> SessionPaths {
        match s.location {
            Location::Active => self.ws.active(&self.id),
            Location::Archived => self.ws.archived(&self.id),
        }
    }

    pub fn rel(&self, path: &Path) -> String {
        self.ws.rel(path)
    }

    /// A path for an agent: relative to its working directory (the code
    /// root), which is the project root unless a worktree is used.
    pub fn agent_rel(&self, path: &Path) -> String {
        let rel = self.ws.rel(path);
        if self.worktree {
            format!("../../../{rel}")
        } else {
            rel
        }
    }

    /// The session directory as committed with each checkpoint (none with
    /// `--worktree`: the session stays in the main tree, uncommitted).
    fn session_dir_for_commit(&self, s: &CycleState) -> Option<String> {
        (!self.worktree).then(|| self.rel(&self.paths(s).dir))
    }

    pub fn fix_agent_name(&self) -> String {
        self.fix_agent
            .as_ref()
            .map_or_else(|| agents::MANUAL.to_string(), |a| a.name.clone())
    }

    pub fn new_task_file(&self, s: &CycleState) -> impl FnOnce(&str) -> PathBuf + use<> {
        let paths = self.paths(s);
        move |id: &str| paths.new_task_file(id)
    }

    /// The resume command people are told.
    pub fn resume_command(&self) -> String {
        format!("wfx test-cycle-execute --resume-session={}", self.id)
    }

    /// The end of a message that asks a person to `act`: how the run goes
    /// on afterwards (with `--watch`, a save; else the resume command).
    pub fn then_continue(&self, act: &str) -> String {
        if self.watch {
            format!("{act} and save: wfx retests then.")
        } else {
            format!("{act}, then continue with:\n  {}", self.resume_command())
        }
    }

    /// IMPL-001 (test generation) is behind: what the test infrastructure
    /// is now is the user's (and the session's own tests'), recorded once
    /// before any fix (DESIGN.md §11.2).
    fn tests_generated(&self, s: &CycleState) -> bool {
        !matches!(s.iter.action, Action::None | Action::Complete)
            && s.task(super::INITIAL_TASKS[0])
                .is_none_or(|t| !matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress))
    }

    /// What the test guard knows of the session: the tests failing before
    /// the fix (by file and name) and the recorded infrastructure.
    fn failing_by_name(&self, s: &CycleState) -> Vec<(Option<String>, String)> {
        self.baseline_results(s)
            .map(|b| {
                b.failures
                    .iter()
                    .filter(|f| f.test_type != crate::artifacts::test_results::Layer::Static)
                    .map(|f| {
                        (
                            f.file.clone(),
                            crate::testing::id::source_name(&f.test).to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn baseline_results(&self, s: &CycleState) -> Option<Arc<TestResults>> {
        let run = s.baseline()?.run;
        s.results.get(&run).cloned()
    }

    fn baseline_failing(&self, s: &CycleState) -> std::collections::BTreeSet<String> {
        self.baseline_results(s)
            .map(|b| b.failures.iter().map(|f| f.test.clone()).collect())
            .unwrap_or_default()
    }

    /// Variables for an agent call (DESIGN.md §6.3); `${test.output}` is
    /// set by the driver from the log.
    pub fn vars(&self, s: &CycleState, attempt: u32, spec: &Path, exit: Option<i32>) -> Vars {
        let paths = self.paths(s);
        let mut v = Vars::new();
        v.set("test.attempt", attempt.to_string())
            .set("spec", self.agent_rel(spec))
            .set("session.id", self.id.clone())
            .set("session.dir", self.agent_rel(&paths.dir))
            .set(
                "test.exit_code",
                exit.map(|c| c.to_string()).unwrap_or_default(),
            )
            .set("test.output", "")
            .set("test.output_file", "");
        v
    }

    fn task_path(&self, s: &CycleState, id: &str) -> PathBuf {
        s.tasks
            .iter()
            .find(|(_, t)| t.id == id)
            .map_or_else(|| self.paths(s).new_task_file(id), |(p, _)| p.clone())
    }

    /// A test run of iteration `n`: its own results file and log.
    fn test_request(
        &self,
        s: &CycleState,
        n: u32,
        subset: Option<Vec<String>>,
        previous: Option<Arc<TestResults>>,
        label: &str,
        flaky_known: Option<std::collections::BTreeSet<String>>,
    ) -> TestRequest {
        let paths = self.paths(s);
        let (_, log) = docs::new_run_files(&paths, s, n);
        let detected = self
            .detected
            .clone()
            .expect("sessions without a test command are refused before the loop");
        TestRequest {
            root: self.root.clone(),
            detected,
            subset,
            log_shown: self.rel(&log),
            flaky: flaky_known.map(|known_failing| FlakyCheck {
                known_failing,
                log: paths.iteration_file(n, "rerun-output.log"),
            }),
            log,
            report_dir: paths.junit_dir(),
            timeout: Duration::from_secs(self.config.test.timeout_s),
            env: Vec::new(),
            previous,
            spinner: format!("Iteration {n} · running {label}"),
            seal: None,
        }
    }

    // ----- start, stops, endings --------------------------------------------

    fn start(&self, s: &mut CycleState, resumed: bool, out: &mut Vec<Event>) {
        // A start after a pause in the same process (`--watch`) goes on.
        s.stop = None;
        if s.location == Location::Archived {
            return;
        }
        match s.iter.status {
            LoopStatus::Completed | LoopStatus::PartialSuccess => return,
            LoopStatus::Blocked => {
                if s.session.status != SessionStatus::Active {
                    s.stop = Some(Stop::Blocked { just_now: false });
                    return;
                }
                self.reopen(s);
            }
            LoopStatus::Paused => s.iter.status = LoopStatus::Running,
            LoopStatus::Running | LoopStatus::AwaitingFix => {}
        }
        s.iter.paused_reason = None;
        // Only a session that runs takes this invocation's limit: a refused
        // one keeps the limit it was blocked under, so its retry command
        // names the same number as `wfx status` and the failure report.
        s.iter.max_iterations = self.limits.max_iterations;
        if s.iter.status != LoopStatus::AwaitingFix {
            s.session.status = SessionStatus::Active;
        }
        let now = s.now;
        if let Some(p) = s.session.phase_mut(5)
            && p.status != PhaseStatus::InProgress
        {
            p.status = PhaseStatus::InProgress;
            p.started_at.get_or_insert(now);
            p.completed_at = None;
        }
        if resumed {
            s.session.resumed_at = Some(now);
            s.survey_due = true;
        }
        s.touch(Doc::Session);
        s.touch(Doc::State);
        s.touch(Doc::Todo);
        let analysis = if self.chain.is_empty() {
            "built-in".to_string()
        } else {
            let names: Vec<&str> = self.chain.iter().map(|a| a.name.as_str()).collect();
            format!("{} → built-in", names.join(" → "))
        };
        out.push(Event::Start(Box::new(Start {
            session_id: self.id.clone(),
            front_end: FrontEnd::Cycle,
            resumed,
            at: s.iter.next_action().as_str().to_string(),
            next_action: Some(s.iter.next_action().as_str().to_string()),
            test_command: self
                .detected
                .as_ref()
                .map(|d| format!("`{}` ({})", d.command, d.framework)),
            fix_agent: Some(self.fix_agent_name()),
            analysis: Some(analysis),
            max_iterations: Some(self.limits.max_iterations),
            commits: self.repo,
            workflow: None,
            steps: None,
        })));
    }

    /// A blocked session resumed by a person (`wfx session resume`): one
    /// more round (the limit was checked before the run started).
    fn reopen(&self, s: &mut CycleState) {
        if s.iter.iterations.is_empty() {
            s.iter.action = Action::ExecuteTask;
        } else {
            s.iter.current_iteration = s.iter.iterations.last().map_or(1, |r| r.iteration);
            s.iter.action = Action::AnalyzeFailures;
        }
        s.iter.status = LoopStatus::Running;
        s.iter.blocked_reason = None;
        for id in [
            s.iter.current_task.clone().unwrap_or_default(),
            LOOP_TASK.to_string(),
        ] {
            if s.task(&id).is_some_and(|t| t.status == TaskStatus::Blocked) {
                s.set_task_status(&id, TaskStatus::InProgress, "resumed by a person");
            }
        }
    }

    /// Ctrl-C, an unreachable agent or a manual fix: state saved, exit 3.
    pub fn pause(&self, s: &mut CycleState, reason: PauseReason, out: &mut Vec<Event>) {
        let manual = matches!(reason, PauseReason::ManualFix { .. });
        let completed = matches!(
            s.iter.status,
            LoopStatus::Completed | LoopStatus::PartialSuccess
        );
        if completed {
            // Only the archive is left: the session stays completed and a
            // resume archives it.
        } else if manual {
            s.iter.status = LoopStatus::AwaitingFix;
            s.session.status = SessionStatus::AwaitingFix;
        } else if s.iter.status != LoopStatus::AwaitingFix {
            s.iter.status = LoopStatus::Paused;
            s.session.status = SessionStatus::Paused;
        }
        s.touch(Doc::Session);
        s.touch(Doc::State);
        s.touch(Doc::Todo);
        let message = self.pause_message(s, &reason);
        // `wfx status` names why the session waits; a manual fix has its
        // own status and task file.
        s.iter.paused_reason = (!manual && !completed).then(|| message.clone());
        out.push(Event::Paused {
            reason: reason.clone(),
            message,
            resume_command: self.resume_command(),
        });
        s.stop = Some(Stop::Paused(reason));
    }

    fn pause_message(&self, s: &CycleState, reason: &PauseReason) -> String {
        let PauseReason::ManualFix { unchanged } = reason else {
            return match reason {
                PauseReason::AgentUnavailable { agent, message, .. }
                    if self.fix_agent.as_ref().is_some_and(|a| &a.name == agent) =>
                {
                    format!(
                        "the fix agent {agent} is not available: {message}; install it, or continue by hand with --fix-agent manual"
                    )
                }
                other => other.text(),
            };
        };
        if s.iter.next_action() == NextAction::ExecuteTask {
            return super::initial::soft_fail_message(self, s);
        }
        let k = s.iter.current_iteration;
        let paths = self.paths(s);
        let task_id = fix_task_id(k);
        let task_file = self.rel(&self.task_path(s, &task_id));
        let analysis = self.rel(&paths.iteration_file(k, "analysis.md"));
        let failures = self.rel(&paths.iteration_file(k, "failures.json"));
        let points: Vec<String> = s
            .task(&task_id)
            .and_then(|t| t.context.fix_strategy.as_ref())
            .map(|fs| {
                fs.modification_points
                    .iter()
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let failing = s.baseline().map_or(0, |r| r.failed);
        let nothing_yet = if *unchanged {
            "No file has changed since the fix task was written; nothing was retested.\n"
        } else {
            ""
        };
        let then = self.then_continue("Change the code (not the tests)");
        format!(
            "{nothing_yet}Iteration {k}: waiting for your fix (manual mode).\n  {failing} failing test(s): {failures}\n  Analysis: {analysis}\n  Fix task: {task_file}{}\n{then}",
            if points.is_empty() {
                String::new()
            } else {
                format!("\n  Where to look: {}", points.join(", "))
            },
        )
    }

    /// A stop that needs a person: report, statuses, next action `none`.
    pub fn block(&self, s: &mut CycleState, reason: &str, out: &mut Vec<Event>) {
        let now = s.now;
        s.iter.status = LoopStatus::Blocked;
        s.iter.blocked_reason = Some(reason.to_string());
        s.iter.action = Action::None;
        let current = s.iter.current_task.clone().unwrap_or_default();
        for id in [current.as_str(), LOOP_TASK] {
            if s.task(id).is_some_and(|t| {
                !matches!(
                    t.status,
                    TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::Failed
                )
            }) {
                s.set_task_status(id, TaskStatus::Blocked, reason);
                s.touch(Doc::TaskSummary(id.to_string()));
            }
        }
        s.session.status = SessionStatus::Blocked;
        if let Some(p) = s.session.phase_mut(5) {
            p.status = PhaseStatus::Failed;
            p.completed_at = Some(now);
        }
        s.touch(Doc::FailureReport(reason.to_string()));
        s.touch(Doc::Session);
        s.touch(Doc::Todo);
        s.touch(Doc::State);
        s.stop = Some(Stop::Blocked { just_now: true });
        // A kept fix is committed before the stop (see `next`): the block
        // is told after its commit line, in the order things happen.
        if s.iter.pending_commit.is_none() {
            out.push(Event::Blocked {
                reason: reason.to_string(),
            });
        }
    }

    fn ending(&self, s: &CycleState, stop: &Stop) -> Ending {
        match stop {
            Stop::Paused(reason) => self.paused_ending(s, reason),
            Stop::Blocked { just_now } => self.blocked_ending(s, *just_now),
            Stop::Finished { commit } => self.finished_ending(s, commit.clone()),
        }
    }

    fn paused_ending(&self, s: &CycleState, reason: &PauseReason) -> Ending {
        let awaiting = s.iter.status == LoopStatus::AwaitingFix;
        let manual = matches!(reason, PauseReason::ManualFix { .. });
        let msg = self.pause_message(s, reason);
        let resume = self.resume_command();
        let mut lines: Vec<String> = msg.lines().map(str::to_string).collect();
        // A manual fix's message ends with the command already; Ctrl-C
        // while a fix is awaited (`--watch`) does not.
        if !awaiting || !manual {
            lines.push(format!("Paused. Continue with: {resume}"));
        }
        Ending {
            exit: Exit::Paused,
            lines,
            waits_for_fix: awaiting && manual,
            done: Done {
                session_id: self.id.clone(),
                front_end: Some(FrontEnd::Cycle),
                status: Some(if awaiting {
                    SessionStatus::AwaitingFix
                } else {
                    SessionStatus::Paused
                }),
                exit_code: Exit::Paused.code(),
                message: Some(msg),
                resume_command: Some(resume),
                next_action: Some(s.iter.next_action().as_str().to_string()),
                iteration: Some(s.iter.current_iteration),
                ..Done::default()
            },
        }
    }

    /// What the final summary says about the session's commits: files a
    /// fix wrote that no commit has, and git hooks skipped.
    fn git_notes(&self, s: &CycleState) -> Vec<String> {
        // The latest word on each file (a later fix may have rewritten it).
        let files: std::collections::BTreeMap<&str, String> = s
            .history
            .entries
            .iter()
            .flat_map(|e| &e.not_committed)
            .map(|f| (f.path.as_str(), f.to_string()))
            .collect();
        let mut lines: Vec<String> = files
            .into_values()
            .map(|f| format!("Not committed (left on disk): {f}"))
            .collect();
        if self.repo && s.session.git.hooks_skipped {
            lines.push(
                "Git hooks were skipped for wfx's commits (git.hooks: false in .workflow/wfx.json)"
                    .to_string(),
            );
        }
        lines
    }

    /// The command to try a blocked session again, with room for two more
    /// attempts (the same wherever it is shown).
    pub fn retry_command(&self, s: &CycleState) -> String {
        format!(
            "wfx session resume {id} && wfx test-cycle-execute --resume-session={id} --max-iterations={}",
            crate::artifacts::iteration_state::retry_max_iterations(
                s.iter.max_iterations,
                s.attempts()
            ),
            id = self.id
        )
    }

    fn blocked_ending(&self, s: &CycleState, just_now: bool) -> Ending {
        let id = &self.id;
        let reason = s.iter.blocked_reason.clone().unwrap_or_default();
        let report = self.rel(&self.paths(s).failure_report());
        let resume = self.retry_command(s);
        let mut lines = vec![format!(
            "Session {id} is blocked{}: {reason}",
            if just_now { "" } else { " (nothing was run)" }
        )];
        if let Some(last) = s.iter.iterations.last() {
            lines.push(format!(
                "Last run: iteration {} · {:.1}% ({})",
                last.iteration,
                last.pass_rate,
                last.counts()
            ));
        }
        lines.extend(self.git_notes(s));
        lines.push(format!("Report: {report}"));
        lines.push(format!("To try again: {resume}"));
        Ending {
            exit: Exit::Failed,
            lines,
            waits_for_fix: false,
            done: Done {
                session_id: id.clone(),
                front_end: Some(FrontEnd::Cycle),
                status: Some(SessionStatus::Blocked),
                exit_code: Exit::Failed.code(),
                reason: Some(reason),
                report: Some(report),
                resume_command: Some(resume),
                pass_rate: s.iter.iterations.last().map(|r| r.pass_rate),
                iterations: Some(s.iter.iterations.len()),
                fix_attempts: Some(s.attempts()),
                ..Done::default()
            },
        }
    }

    fn finished_ending(&self, s: &CycleState, commit: Option<String>) -> Ending {
        let id = &self.id;
        let partial = s.iter.status == LoopStatus::PartialSuccess;
        let pass = s.iter.iterations.last().map_or(0.0, |r| r.pass_rate);
        let attempts = s.attempts();
        let archive_rel = self.rel(&self.ws.archived(id).dir);
        let status = if partial {
            SessionStatus::PartialSuccess
        } else {
            SessionStatus::Completed
        };
        let mut lines = vec![format!(
            "Session {id} {}: {pass:.1}% on the full suite after {attempts} fix attempt(s)",
            if partial {
                "ended in partial success"
            } else {
                "completed"
            }
        )];
        lines.push(format!("Archived: {archive_rel}"));
        if let Some(c) = &commit {
            lines.push(format!("Final commit: {}", &c[..c.len().min(10)]));
        }
        lines.extend(self.git_notes(s));
        Ending {
            exit: Exit::Success,
            lines,
            waits_for_fix: false,
            done: Done {
                session_id: id.clone(),
                front_end: Some(FrontEnd::Cycle),
                status: Some(status),
                exit_code: Exit::Success.code(),
                pass_rate: Some(pass),
                iterations: Some(s.iter.iterations.len()),
                fix_attempts: Some(attempts),
                archive: Some(archive_rel),
                final_commit: commit,
                ..Done::default()
            },
        }
    }

    /// The archive move and the final commit (both idempotent, so a run
    /// killed half-way finishes them on resume).
    fn archive_request(&self, s: &CycleState) -> ArchiveRequest {
        let id = &self.id;
        let active = self.ws.active(id);
        let archived = self.ws.archived(id);
        let partial = s.iter.status == LoopStatus::PartialSuccess;
        let last = s.iter.iterations.last();
        let pass = last.map_or(0.0, |r| r.pass_rate);
        let commit = (self.repo && !self.worktree).then(|| {
            let mut body = Vec::new();
            for r in &s.iter.iterations {
                body.push(format!(
                    "- iteration {}: {:.1}% ({}){}",
                    r.iteration,
                    r.pass_rate,
                    r.counts(),
                    r.strategy.map_or(String::new(), |s| format!(", {s}"))
                ));
            }
            body.push(String::new());
            body.push(format!("Archived to {}", self.rel(&archived.dir)));
            let mut paths = vec![self.rel(&active.dir)];
            if self.config.git.artifacts != ArtifactPolicy::None {
                paths.push(self.rel(&self.ws.manifest_path()));
            }
            CommitRequest {
                paths,
                session_dir: Some(self.rel(&archived.dir)),
                message: self.messages.message(
                    &Subject::Final {
                        session: id,
                        partial,
                        pass,
                        attempts: s.attempts(),
                        squashed: false,
                    },
                    id,
                    &body.join("\n"),
                ),
                trailers: Trailers::new(
                    id.clone(),
                    last.map_or(0, |r| r.iteration),
                    CommitKind::Final,
                ),
            }
        });
        let squash = (self.repo && self.config.git.squash).then(|| SquashRequest {
            message: squash_message(&self.messages, id, partial, pass, s),
            trailers: Trailers::new(
                id.clone(),
                last.map_or(0, |r| r.iteration),
                CommitKind::Final,
            ),
            since: None,
        });
        ArchiveRequest {
            session_id: id.clone(),
            commit,
            squash,
        }
    }

    // ----- commits ------------------------------------------------------------

    fn committed(&self, s: &mut CycleState, id: Option<String>, out: &mut Vec<Event>) {
        let Some(pc) = s.iter.pending_commit.take() else {
            return;
        };
        match pc.kind {
            CommitPurpose::Fix => {
                if let Some(rec) = s.record_of_fix_mut(pc.iteration) {
                    rec.fix_commit = id.clone();
                }
                if let Some(e) = s
                    .history
                    .entries
                    .iter_mut()
                    .find(|e| e.iteration == pc.iteration)
                {
                    e.commit = id.clone();
                }
                s.touch(Doc::History);
                s.touch(Doc::IterationSummary(pc.iteration));
            }
            CommitPurpose::Tests | CommitPurpose::Rollback => {
                if id.is_some() {
                    s.iter.tests_commit = id.clone();
                }
            }
        }
        s.touch(Doc::State);
        if let Some(reason) = s.iter.blocked_reason.clone() {
            // The failure report was written before this commit: name it.
            s.touch(Doc::FailureReport(reason));
        }
        if let Some(c) = id {
            out.push(Event::Commit {
                commit: c,
                message: pc.message,
                iteration: pc.iteration,
                kind: pc.kind,
            });
        }
        // The block this commit came before (`block` held its event back).
        if s.iter.status == LoopStatus::Blocked
            && let Some(reason) = s.iter.blocked_reason.clone()
        {
            out.push(Event::Blocked { reason });
        }
    }

    // ----- the loop -------------------------------------------------------------

    fn start_loop_task(&self, s: &mut CycleState) {
        if s.task(LOOP_TASK)
            .is_some_and(|t| t.status == TaskStatus::Pending)
        {
            s.set_task_status(
                LOOP_TASK,
                TaskStatus::InProgress,
                "phase 5 fix loop started",
            );
        }
    }

    /// A new record for a run of iteration `n` with these results.
    fn new_record(
        &self,
        s: &CycleState,
        n: u32,
        started: crate::artifacts::Timestamp,
        r: &TestResults,
        new_failures: Vec<String>,
    ) -> IterationRecord {
        let paths = self.paths(s);
        let (results_file, log) = docs::new_run_files(&paths, s, n);
        IterationRecord {
            iteration: n,
            run: s.iter.next_run(),
            started_at: started,
            completed_at: None,
            scope: r.scope,
            pass_rate: r.pass_rate,
            total: r.total,
            passed: r.passed,
            failed: r.failed + r.errors,
            failed_tests: r.failures.iter().map(|f| f.test.clone()).collect(),
            new_failures,
            flaky_tests: r
                .failures
                .iter()
                .filter(|f| f.flaky)
                .map(|f| f.test.clone())
                .collect(),
            results_file: Some(self.rel(&results_file)),
            output_log: Some(self.rel(&log)),
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
            duration_ms: Some(r.duration_ms),
            setup_ms: r.setup_ms,
            extra: Extra::new(),
        }
    }

    /// Record a run: its record, its results and the events.
    fn record_run(
        &self,
        s: &mut CycleState,
        mut rec: IterationRecord,
        results: TestResults,
        prev: Option<&IterationRecord>,
        label: &str,
        out: &mut Vec<Event>,
    ) -> u32 {
        rec.completed_at = Some(s.now);
        let run = rec.run;
        out.push(Event::Run(RunEvent {
            iteration: rec.iteration,
            run,
            scope: rec.scope,
            pass_rate: rec.pass_rate,
            previous_pass_rate: prev.map(|p| p.pass_rate),
            change: prev.and_then(|p| rec.change_since(p)),
            total: rec.total,
            passed: rec.passed,
            failed: rec.failed,
            skipped: results.skipped,
            new_failures: rec.new_failures.clone(),
            result: rec.result,
            duration_ms: results.duration_ms,
            command: results.command.clone(),
            label: label.to_string(),
            notes: results.notes.clone(),
            sealed_commit: rec.commit.clone(),
        }));
        let n = rec.iteration;
        s.iter.iterations.push(rec);
        s.results.insert(run, Arc::new(results));
        s.touch(Doc::Results(run));
        s.touch(Doc::IterationSummary(n));
        s.touch(Doc::State);
        s.touch(Doc::Todo);
        run
    }

    fn flaky_event(&self, n: u32, flaky: &[String], out: &mut Vec<Event>) {
        if !flaky.is_empty() {
            out.push(Event::Flaky {
                iteration: n,
                tests: flaky.to_vec(),
            });
        }
    }

    /// No absolute path in artifacts: the command without the project's
    /// directory.
    fn sanitize(&self, r: &mut TestResults) {
        let root = format!("{}/", self.ws.root.display());
        if r.command.contains(&root) {
            r.command = r.command.replace(&root, "");
        }
    }

    /// The first run of the loop: the whole suite.
    fn first_run(&self, s: &mut CycleState, run: TestsRun, out: &mut Vec<Event>) {
        self.start_loop_task(s);
        let n = 1;
        let TestsRun {
            mut results, flaky, ..
        } = run;
        self.sanitize(&mut results);
        self.flaky_event(n, &flaky, out);
        let new: Vec<String> = results.failures.iter().map(|f| f.test.clone()).collect();
        let verdict = decide::verdict(&results, &self.limits);
        let started = results.started_at.unwrap_or(s.now);
        let mut rec = self.new_record(s, n, started, &results, new);
        // A first run has nothing to compare with: only its verdict counts.
        rec.result = match decide::run_result(None, results.pass_rate, verdict, false) {
            IterationResult::NoChange => None,
            r => Some(r),
        };
        let pass_rate = results.pass_rate;
        let no_tests = crate::testing::results::found_no_tests(&results);
        let run = self.record_run(s, rec, results, None, "full suite", out);
        s.iter.baseline_run = Some(run);
        s.iter.current_iteration = n;
        s.iter.best_pass_rate = Some(pass_rate);
        if no_tests {
            // Zero tests is nothing to fix (DESIGN.md §10.7): no agent is
            // asked; the resume runs the suite again once tests exist.
            s.iter.action = Action::RunTests;
            self.pause(s, PauseReason::NoTests, out);
            return;
        }
        let decision = decide::after_run(
            &decide::RunFacts {
                verdict,
                regression: None,
                rejected_test_edits: None,
                has_fix_to_undo: false,
                fix_attempts_done: 0,
                no_progress: false,
                cost_cap_reached: None,
            },
            &self.limits,
        );
        // Only a sealed run completes a session: a suite that passes in
        // the work tree is confirmed on the commit (DESIGN.md §11.1).
        if matches!(decision, AfterRun::Complete { .. }) && self.repo && self.config.cycle.sealed {
            s.iter.action = Action::FinalValidation {
                fix: self.no_fix(s),
            };
            s.touch(Doc::State);
            return;
        }
        self.apply(s, decision, n, out);
    }

    /// Set the next action for a decision (a block is performed at once).
    fn apply(&self, s: &mut CycleState, d: AfterRun, iteration: u32, out: &mut Vec<Event>) {
        s.touch(Doc::State);
        match d {
            AfterRun::Complete { .. } => s.iter.action = Action::Complete,
            AfterRun::FinalValidation => {
                let fix = s
                    .iter
                    .action
                    .fix()
                    .cloned()
                    .unwrap_or_else(|| self.no_fix(s));
                s.iter.action = Action::FinalValidation { fix };
            }
            AfterRun::Rollback { .. } => {}
            AfterRun::Analyze => {
                s.iter.current_iteration = iteration;
                s.iter.action = Action::AnalyzeFailures;
            }
            AfterRun::Blocked { reason } => self.block(s, &reason, out),
        }
    }

    fn no_fix(&self, s: &CycleState) -> FixInFlight {
        FixInFlight {
            iteration: s.iter.current_iteration,
            snapshot: None,
            head: None,
            started_at: s.now,
            observed: true,
            commit_paths: Vec::new(),
            touched_tests: false,
            rejected: None,
            call_failed: false,
            retest: RetestProgress::default(),
        }
    }

    /// The analysis of iteration k: everything the chain needs.
    fn analysis_request(&self, s: &CycleState) -> AnalysisRequest {
        let k = s.iter.current_iteration;
        let paths = self.paths(s);
        let baseline = self.baseline_results(s).unwrap_or_else(no_results);
        let base = s.baseline();
        let (_, log) = match base {
            Some(rec) => docs::run_files(&paths, rec),
            None => (PathBuf::new(), paths.iteration_file(k, "test-output.log")),
        };
        let stuck = decide::stuck_tests(&settled_runs(&s.iter.iterations), self.limits.stuck_after);
        let previous_strategies: Vec<FixStrategy> = (1..k)
            .filter_map(|i| s.task(&fix_task_id(i)))
            .filter_map(|t| t.context.fix_strategy.clone())
            .collect();
        let spec = self.task_path(s, &fix_task_id(k));
        let mut vars = self.vars(s, k, &spec, baseline.exit_code);
        vars.set("test.output_file", self.agent_rel(&log));
        AnalysisRequest {
            chain: self.chain.clone(),
            root: self.root.clone(),
            paths,
            iteration: k,
            max_iterations: self.limits.max_iterations,
            strategy: self.strategy_for(s, &baseline, &stuck),
            results: baseline,
            log_shown: self.agent_rel(&log),
            log,
            stuck_tests: stuck,
            history: s.history.clone(),
            previous_strategies,
            vars,
            renderer: self.renderer.clone(),
            spinner: format!("Iteration {k} · analysing failures"),
        }
    }

    fn strategy_for(&self, s: &CycleState, baseline: &TestResults, stuck: &[String]) -> Strategy {
        let real: Vec<_> = baseline
            .failures
            .iter()
            .filter(|f| !f.flaky)
            .cloned()
            .collect();
        decide::select_strategy(&StrategyInput {
            iteration: s.iter.current_iteration,
            pass_rate: baseline.pass_rate,
            similarity: decide::similarity(&real),
            regression_in_last_retest: matches!(
                s.iter.iterations.last().and_then(|r| r.result),
                Some(IterationResult::Regression | IterationResult::RolledBack)
            ),
            previous: s.iter.selected_strategy,
            stuck: !stuck.is_empty(),
        })
    }

    /// Analysis of iteration k: `iteration-k-analysis.md`,
    /// `iteration-k-failures.json` and `IMPL-fix-k.json`.
    fn analyzed(&self, s: &mut CycleState, outcome: AnalysisOutcome, out: &mut Vec<Event>) {
        let k = s.iter.current_iteration;
        let paths = self.paths(s);
        let baseline = self.baseline_results(s).unwrap_or_else(no_results);
        let stuck = decide::stuck_tests(&settled_runs(&s.iter.iterations), self.limits.stuck_after);
        let strategy = self.strategy_for(s, &baseline, &stuck);
        if !stuck.is_empty() && s.iter.stuck_tests != stuck {
            out.push(Event::Stuck {
                iteration: k,
                tests: stuck.clone(),
                after: self.limits.stuck_after,
            });
        }
        let mut calls = outcome.calls.clone();
        for c in &mut calls {
            self.fix_call_paths(c);
        }
        s.history
            .agent_calls
            .retain(|c| !(c.role == Role::Analysis && c.iteration == Some(k) && c.task.is_none()));
        s.history.agent_calls.extend(calls);
        s.touch(Doc::History);
        let analysis_file = paths.iteration_file(k, "analysis.md");
        s.touch(Doc::Raw(
            analysis_file.clone(),
            outcome.analysis_markdown.clone().into_bytes(),
            crate::engine::Durability::View,
        ));
        if let Ok(bytes) = crate::session::store::json_bytes(&IterationFailures {
            iteration: k,
            pass_rate: baseline.pass_rate,
            failures: baseline.failures.clone(),
            extra: Extra::new(),
        }) {
            s.touch(Doc::Raw(
                paths.iteration_file(k, "failures.json"),
                bytes,
                crate::engine::Durability::Durable,
            ));
        }
        let analysis_rel = self.rel(&analysis_file);
        if decide::pause_for_environment(&outcome.environment) {
            // No fix agent can mend a missing module or a port in use: no
            // fix task is written; a person fixes the environment and the
            // resume runs the suite again (a first run again, or the whole
            // suite after fixes).
            if let Some(rec) = s.last_of_iteration_mut(k) {
                rec.analysis_file = Some(analysis_rel);
                rec.analysis_tool = Some(outcome.tool.clone());
            }
            s.touch(Doc::IterationSummary(k));
            s.iter.action = match decide::after_environment_pause(k) {
                decide::AfterEnvironment::FirstRun => Action::RunTests,
                decide::AfterEnvironment::FullSuite => Action::FinalValidation {
                    fix: self.no_fix(s),
                },
            };
            let fixes = outcome.environment.clone();
            self.pause(s, PauseReason::Environment { fixes }, out);
            return;
        }
        let task = self.fix_task(s, k, strategy, &outcome, &baseline);
        let new_file = self.new_task_file(s);
        s.put_task(task, new_file);
        if let Some(rec) = s.last_of_iteration_mut(k) {
            rec.strategy = Some(strategy);
            rec.analysis_file = Some(analysis_rel.clone());
            rec.analysis_tool = Some(outcome.tool.clone());
            rec.fix_task = Some(fix_task_id(k));
        }
        s.iter.selected_strategy = Some(strategy);
        s.iter.stuck_tests = stuck;
        s.touch(Doc::IterationSummary(k));
        out.push(Event::Analysis(AnalysisEvent {
            iteration: k,
            strategy,
            tool: outcome.tool.clone(),
            quality: outcome.quality,
            tried: outcome
                .tried
                .iter()
                .map(|t| TriedEvent {
                    tool: t.tool.clone(),
                    reason: t.reason_code.clone(),
                })
                .collect(),
            modification_points: outcome.strategy.modification_points.len(),
            confidence: outcome.strategy.confidence_score,
            analysis_file: analysis_rel,
            fix_task: fix_task_id(k),
        }));
        if let Some(reason) = outcome.cost_capped {
            s.iter.action = Action::ExecuteFixTask { fix: None };
            self.block(s, &reason, out);
            return;
        }
        s.iter.action = Action::ExecuteFixTask { fix: None };
        s.touch(Doc::State);
    }

    /// Agent-call files relative to the project root (an agent in a
    /// worktree is given paths relative to the worktree).
    pub fn fix_call_paths(&self, c: &mut crate::artifacts::fix_history::AgentCall) {
        for p in [&mut c.prompt_file, &mut c.output_file]
            .into_iter()
            .flatten()
        {
            if let Some(rest) = p.strip_prefix("../../../") {
                *p = rest.to_string();
            } else if Path::new(p.as_str()).is_absolute() {
                *p = self.rel(Path::new(p.as_str()));
            }
        }
    }

    /// `IMPL-fix-k.json`: the fix task with the full fix strategy.
    fn fix_task(
        &self,
        s: &CycleState,
        k: u32,
        strategy: Strategy,
        outcome: &AnalysisOutcome,
        baseline: &TestResults,
    ) -> Task {
        let fs = &outcome.strategy;
        let parent = s.task(LOOP_TASK);
        let text = agents::prompts::strategy_text(strategy);
        let mut focus: Vec<String> = fs
            .modification_points
            .iter()
            .map(|p| p.file.clone())
            .collect();
        focus.sort();
        focus.dedup();
        // Environment failures are not the fix agent's (a missing module,
        // a port in use): it is told to leave them.
        let environment = &outcome.environment_tests;
        let failing: Vec<String> = baseline
            .failures
            .iter()
            .filter(|f| !f.flaky && !environment.contains(&f.test))
            .map(|f| format!("`{}`", f.test))
            .take(20)
            .collect();
        let mut requirements = vec![format!("Strategy {strategy}: {}", text.asks)];
        if !failing.is_empty() {
            requirements.push(format!(
                "Make the failing tests pass: {}",
                failing.join(", ")
            ));
        }
        if !environment.is_empty() {
            requirements.push(format!(
                "Leave alone the {} test(s) that fail because of the environment, not the code (the analysis says what to fix there): {}",
                environment.len(),
                environment
                    .iter()
                    .take(20)
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        requirements
            .push("Fix the code under test; never delete, skip or weaken a test".to_string());
        let analysis_rel = self.rel(&self.paths(s).iteration_file(k, "analysis.md"));
        let test_commands = parent
            .map(|t| t.flow_control.test_commands.clone())
            .unwrap_or_default();
        let mut approach: Vec<FlowStep> = fs
            .modification_points
            .iter()
            .enumerate()
            .map(|(i, p)| FlowStep {
                step: format!("modify_{}", i + 1),
                action: format!("Change {p}"),
                command: None,
                extra: Extra::new(),
            })
            .collect();
        approach.push(FlowStep {
            step: "retest".into(),
            action: "wfx re-runs the failing and affected tests, then the full suite".into(),
            command: test_commands.run_tests.clone(),
            extra: Extra::new(),
        });
        Task {
            id: fix_task_id(k),
            title: format!("Fix iteration {k} failures ({strategy} strategy)"),
            status: TaskStatus::Pending,
            status_history: Vec::new(),
            meta: TaskMeta {
                kind: TaskType::TestFixIteration,
                agent: Some(self.fix_agent_name()),
                iteration: Some(k),
                parent_task: Some(LOOP_TASK.to_string()),
                max_iterations: None,
                test_framework: parent.and_then(|t| t.meta.test_framework.clone()),
                project_type: parent.and_then(|t| t.meta.project_type.clone()),
                coverage_target: None,
                analysis_quality: Some(outcome.quality),
                analysis_tool: Some(outcome.tool.clone()),
                record: TaskRecord {
                    strategy: Some(strategy),
                    ..TaskRecord::default()
                },
                extra: Extra::new(),
            },
            context: TaskContext {
                requirements,
                focus_paths: focus.clone(),
                acceptance: vec![
                    "The tests in fix_strategy.test_execution.affected_tests pass".into(),
                    format!(
                        "No other test starts failing (a drop of more than {} percentage points is rolled back)",
                        self.limits.regression_threshold_pp
                    ),
                    "No test is removed, skipped or weakened".into(),
                ],
                depends_on: vec![LOOP_TASK.to_string()],
                fix_strategy: Some(fs.clone()),
                extra: Extra::new(),
            },
            flow_control: FlowControl {
                pre_analysis: vec![FlowStep {
                    step: "read_analysis".into(),
                    action: format!("Read {analysis_rel}"),
                    command: None,
                    extra: Extra::new(),
                }],
                implementation_approach: approach,
                target_files: focus,
                test_commands,
                extra: Extra::new(),
            },
            result: None,
            extra: Extra::new(),
        }
    }

    /// The fix's snapshot is taken: the attempt is under way.
    fn fix_started(&self, s: &mut CycleState, snap: Snapshot) {
        let k = s.iter.current_iteration;
        s.iter.action = Action::ExecuteFixTask {
            fix: Some(FixInFlight {
                iteration: k,
                snapshot: snap.tree,
                head: snap.head,
                started_at: s.now,
                observed: false,
                commit_paths: Vec::new(),
                touched_tests: false,
                rejected: None,
                call_failed: false,
                retest: RetestProgress::default(),
            }),
        };
        s.set_task_status(&fix_task_id(k), TaskStatus::InProgress, "fix started");
        s.touch(Doc::State);
    }

    /// Fix attempt k: the agent (or a person), inspected against its snapshot.
    fn next_fix(&self, s: &CycleState, fix: &FixInFlight) -> Step {
        let k = s.iter.current_iteration;
        let before = Snapshot {
            tree: fix.snapshot.clone(),
            head: fix.head.clone(),
        };
        let Some(agent) = &self.fix_agent else {
            if s.iter.status == LoopStatus::AwaitingFix {
                // A person resumed: what did they change?
                return if before.tree.is_some() {
                    Step::Do(Effect::Inspect(before, Some(guard::is_inspected)))
                } else {
                    Step::Do(Effect::Update)
                };
            }
            return Step::Do(Effect::Pause(PauseReason::ManualFix { unchanged: false }));
        };
        let task_id = fix_task_id(k);
        let paths = self.paths(s);
        let spec = self.task_path(s, &task_id);
        let baseline = self.baseline_results(s).unwrap_or_else(no_results);
        let strategy = s.iter.selected_strategy.unwrap_or(Strategy::Conservative);
        let command = self.detected.as_ref().map(|d| d.command.clone());
        let task = s.task(&task_id).cloned();
        let prompt = match &task {
            Some(task) => agents::prompts::fix(
                &self.renderer,
                &agents::prompts::FixPrompt {
                    session_id: &self.id,
                    task,
                    task_path: &self.agent_rel(&spec),
                    strategy,
                    test_command: command.as_deref(),
                    failures: &baseline.failures,
                    test_edits: &self.config.cycle.test_edits,
                },
            ),
            None => Err(crate::error::Error::Internal(format!(
                "{task_id} is missing"
            ))),
        };
        let prompt = match prompt {
            Ok(p) => p,
            Err(e) => return Step::Do(Effect::Block(format!("cannot write the fix prompt: {e}"))),
        };
        let log = s
            .baseline()
            .map(|r| docs::run_files(&paths, r).1)
            .unwrap_or_else(|| paths.iteration_file(k, "test-output.log"));
        let mut text = Text::plain(prompt, self.vars(s, k, &spec, baseline.exit_code));
        text.test_output = Some((log.clone(), self.agent_rel(&log)));
        Step::Do(Effect::Agent(AgentRequest {
            agent: agent.clone(),
            role: Role::Fix,
            prompt: text,
            files: CallFiles::fix(&paths, k),
            cwd: self.root.clone(),
            env: Vec::new(),
            spinner: format!("Iteration {k} · fix by {}", agent.name),
            doing: format!("fixing iteration {k}"),
            inspect: Some(Before::Recorded(before)),
            versions_of: Some(guard::is_inspected),
            outputs: Vec::new(),
        }))
    }

    /// What fix k changed since its snapshot, checked against the test-edit
    /// policy, recorded in fix-history.json; then the retest.
    fn fix_observed(
        &self,
        s: &mut CycleState,
        call: Option<CallRecord>,
        inspection: Option<Inspection>,
        out: &mut Vec<Event>,
    ) {
        let k = s.iter.current_iteration;
        let task_id = fix_task_id(k);
        let mut fix = s
            .iter
            .action
            .fix()
            .cloned()
            .unwrap_or_else(|| self.no_fix(s));
        let inspection = inspection.unwrap_or_default();
        let files_changed = inspection.files_changed();
        let failing = self.failing_by_name(s);
        let infrastructure: std::collections::BTreeSet<String> = s
            .iter
            .test_infrastructure
            .iter()
            .flatten()
            .cloned()
            .collect();
        let ctx = guard::Context {
            failing: &failing,
            infrastructure: &infrastructure,
        };
        let mut edits = Vec::new();
        for (path, v) in &inspection.versions {
            let before = v.before.as_deref().map(String::from_utf8_lossy);
            let after = v.after.as_deref().map(String::from_utf8_lossy);
            edits.extend(guard::inspect_fix(
                path,
                before.as_deref(),
                after.as_deref(),
                &ctx,
            ));
        }
        let policy = &self.config.cycle.test_edits;
        let edits = guard::recorded(edits, policy);
        let rejected = guard::rejection(&edits, policy);
        fix.observed = true;
        fix.call_failed = call.as_ref().is_some_and(|c| c.failed() || c.timed_out);
        fix.touched_tests = files_changed
            .iter()
            .any(|p| crate::project::is_test_path(p));
        fix.commit_paths = inspection.commit_paths.clone();
        fix.rejected = rejected.clone();
        // A person's fix commits only what lies in the fix task's focus;
        // other edits are theirs: named, left uncommitted.
        let mut left_uncommitted = Vec::new();
        if self.fix_agent.is_none()
            && let Some(task) = s.task(&task_id)
        {
            let focus = super::manual::focus(task);
            let (keep, outside) = super::manual::split(&fix.commit_paths, &focus);
            if !outside.is_empty() {
                out.push(Event::Warning {
                    message: format!(
                        "left uncommitted (outside {task_id}'s focus: {}): {}; commit them yourself if they belong to the fix",
                        if focus.is_empty() { "none".to_string() } else { focus.join(", ") },
                        outside.join(", ")
                    ),
                });
                fix.commit_paths = keep;
                left_uncommitted = outside;
            }
        }

        let before = s.baseline().map(|r| r.pass_rate);
        let failing = s.baseline().map_or(0, |r| r.failed);
        let earlier_rec = s.baseline().and_then(|b| {
            s.iter
                .iterations
                .iter()
                .rev()
                .find(|r| r.iteration < b.iteration)
        });
        let earlier = earlier_rec.map(|r| r.pass_rate);
        let change = s
            .baseline()
            .zip(earlier_rec)
            .and_then(|(b, e)| b.change_since(e));
        let agent = self.fix_agent_name();
        // The fix task (and the loop task) name who actually fixed: a task
        // written while paused for a person may be done by an agent given
        // on the resume (`--fix-agent`), and the other way round.
        for id in [task_id.as_str(), LOOP_TASK] {
            if s.task(id)
                .is_some_and(|t| t.meta.agent.as_deref() != Some(&agent))
            {
                s.update_task(id, |t| t.meta.agent = Some(agent.clone()));
            }
        }
        let duration_ms = call.as_ref().map_or_else(
            || (s.now - fix.started_at).num_milliseconds().max(0) as u64,
            |c| c.duration_ms,
        );
        let not_committed =
            inspection.not_committed(fix.started_at, self.config.git.max_new_file_mib);
        let attempt = FixAttempt {
            iteration: k,
            fix_task: task_id.clone(),
            agent: agent.clone(),
            strategy: s.iter.selected_strategy,
            started_at: fix.started_at,
            duration_ms,
            exit_code: call.as_ref().and_then(|c| c.exit_code),
            timed_out: call.as_ref().is_some_and(|c| c.timed_out),
            cost_usd: call.as_ref().and_then(|c| c.cost_usd),
            turns: call.as_ref().and_then(|c| c.turns),
            files_changed: files_changed.clone(),
            diffstat: Diffstat {
                files: inspection.diffstat.files as u32,
                insertions: inspection.diffstat.insertions as u32,
                deletions: inspection.diffstat.deletions as u32,
            },
            diff: inspection.diff.clone(),
            test_edits: edits.clone(),
            pass_rate_before: before,
            pass_rate_after: None,
            outcome: FixOutcome::Pending,
            commit: None,
            rollback_commit: None,
            agent_commits: call
                .as_ref()
                .map(|c| c.agent_commits.clone())
                .unwrap_or_default(),
            tamper: call.as_ref().and_then(|c| c.tamper),
            not_committed: not_committed.clone(),
            left_uncommitted,
            outside_commit: Vec::new(),
            extra: Extra::new(),
        };
        s.history.entries.retain(|e| e.iteration != k);
        s.history.entries.push(attempt);
        s.history.entries.sort_by_key(|e| e.iteration);
        if let Some(c) = &call {
            let outcome = if c.timed_out {
                CallOutcome::Timeout
            } else if c.failed() {
                CallOutcome::Failed
            } else {
                CallOutcome::Completed
            };
            let mut a = c.to_artifact(Some(k), Some(&task_id), outcome);
            self.fix_call_paths(&mut a);
            s.history
                .agent_calls
                .retain(|x| !(x.role == Role::Fix && x.iteration == Some(k)));
            s.history.agent_calls.push(a);
        }
        s.touch(Doc::History);
        let summary = match &call {
            Some(c) if c.failed() => format!(
                "{agent} ended with {} after {}; {} file(s) changed",
                c.error_kind.map_or("an error", |e| e.as_str()),
                duration::millis(c.duration_ms),
                files_changed.len()
            ),
            _ => format!("{agent} changed {} file(s)", files_changed.len()),
        };
        let files = files_changed.clone();
        s.update_task(&task_id, |t| {
            let r = t.result.get_or_insert_with(TaskResult::default);
            r.files_modified = files;
            r.summary = summary;
        });
        out.push(Event::Fix(FixEvent {
            iteration: k,
            agent,
            strategy: s.iter.selected_strategy,
            duration_ms,
            exit_code: call.as_ref().and_then(|c| c.exit_code),
            timed_out: call.as_ref().is_some_and(|c| c.timed_out),
            cost_usd: call.as_ref().and_then(|c| c.cost_usd),
            files_changed: files_changed.clone(),
            test_edits: edits.clone(),
            pass_rate_before: before,
            earlier_pass_rate: earlier,
            change,
            failing,
            error: call
                .as_ref()
                .filter(|c| c.failed() && !c.timed_out)
                .map(|c| c.error_message.clone().unwrap_or_default()),
            by_hand: call.is_none(),
        }));
        for file in &not_committed {
            out.push(Event::warning(format!(
                "Iteration {k} · not committed: {file}"
            )));
        }
        if files_changed.is_empty() {
            out.push(Event::warning(format!(
                "Iteration {k}: the fix changed no file; rerunning only the failing tests"
            )));
        }
        let flagged: Vec<_> = edits
            .iter()
            .filter(|e| {
                guard::policy_of(e.kind, policy) == crate::artifacts::config::EditPolicy::Flag
            })
            .cloned()
            .collect();
        match &rejected {
            Some(why) => out.push(Event::TestEdits {
                iteration: k,
                rejected: Some(why.clone()),
                test_edits: edits,
            }),
            None if !flagged.is_empty() => out.push(Event::TestEdits {
                iteration: k,
                rejected: None,
                test_edits: flagged,
            }),
            None => {}
        }
        s.iter.status = LoopStatus::Running;
        if s.session.status != SessionStatus::Active {
            s.session.status = SessionStatus::Active;
            s.touch(Doc::Session);
        }
        // Rejected from its diff (DESIGN.md §11.2): put back before any
        // commit and any test run; the attempt never enters history. A
        // timed-out call's half edit likewise. A person's fix is retested,
        // committed and reverted instead, so their work stays in history.
        let undo_now = match (&rejected, call.as_ref()) {
            (Some(_), Some(_)) => Some("its test edits are rejected".to_string()),
            (None, Some(c)) if c.timed_out && !files_changed.is_empty() => {
                Some("the fix call timed out: its half-made changes are not tested".to_string())
            }
            _ => None,
        };
        if let (Some(reason), Some(snapshot)) = (undo_now, fix.snapshot.clone())
            && self.repo
        {
            if let Some(e) = s.history.entries.iter_mut().find(|e| e.iteration == k) {
                e.outcome = if rejected.is_some() {
                    FixOutcome::Rejected
                } else {
                    FixOutcome::NoChange
                };
            }
            let fix_task = fix_task_id(k);
            if s.task(&fix_task).is_some() {
                s.set_task_status(&fix_task, TaskStatus::Failed, &reason);
                s.touch(Doc::TaskSummary(fix_task));
            }
            s.iter.action = Action::Rollback {
                rollback: crate::artifacts::iteration_state::PendingCommit {
                    kind: CommitPurpose::Rollback,
                    iteration: k,
                    message: reason,
                    paths: Vec::new(),
                    run: None,
                    restore: Some(snapshot),
                },
            };
            s.touch(Doc::State);
            return;
        }
        s.iter.action = Action::Retest { fix };
        s.touch(Doc::State);
    }

    /// Run k+1 after fix k: the next retest tier (DESIGN.md §10.4) — the
    /// tests that failed, then the affected ones (merged over the run
    /// before), then the whole suite. The runner's related-tests query, when
    /// it has one, runs first, once per fix.
    fn next_retest(&self, s: &CycleState, fix: &FixInFlight) -> Step {
        let n = s.iter.current_iteration + 1;
        if let Some(query) = self.related_query(s, fix) {
            return Step::Do(Effect::Shell(ShellRequest {
                command: Text::plain(query.command, Vars::new()),
                cwd: self.root.clone(),
                log: self.paths(s).iteration_file(n, "related-tests.log"),
                command_file: None,
                env: Vec::new(),
                timeout: Some(Duration::from_secs(self.config.test.timeout_s)),
                spinner: format!("Iteration {n} · asking the runner which tests the fix affects"),
                inspect: None,
                outputs: Vec::new(),
            }));
        }
        let known = self.baseline_failing(s);
        let (subset, previous) = match decide::next_tier(&self.retest_plan(s, fix), &fix.retest) {
            NextRun::Tier { ids, .. } => (Some(ids), self.merge_base(s, fix)),
            NextRun::Full(_) | NextRun::Done => (None, self.baseline_results(s)),
        };
        let label = self.tier_label(s, fix);
        let full = subset.is_none();
        let mut req = self.test_request(s, n, subset, previous, &label, Some(known));
        if full {
            req.seal = self.seal_for(s, fix);
        }
        Step::Do(Effect::RunTests(req))
    }

    /// The sealed run of a fix's full suite (DESIGN.md §11.1): its paths
    /// on top of `HEAD`, in a clean checkout. None without commits or with
    /// `cycle.sealed: false`.
    fn seal_for(
        &self,
        s: &CycleState,
        fix: &FixInFlight,
    ) -> Option<crate::engine::step::SealRequest> {
        // The fix's end: its start and its call's duration (a person's fix
        // ends when wfx saw it), with a second's slack for coarse clocks.
        let until = s
            .history
            .entries
            .iter()
            .find(|e| e.iteration == fix.iteration)
            .map_or(s.now, |e| {
                e.started_at + chrono::Duration::milliseconds(e.duration_ms as i64 + 1000)
            });
        (self.repo && self.config.cycle.sealed).then(|| crate::engine::step::SealRequest {
            paths: fix.commit_paths.clone(),
            since: fix.started_at,
            until,
            message: format!("wfx: sealed run of {} iteration {}", self.id, fix.iteration),
            environment: s.iter.sealed_environment.clone().unwrap_or_default(),
        })
    }

    /// The runner's related-tests query for fix k, while it is still to be
    /// asked: a retest that runs tiers, before its first tier.
    fn related_query(&self, s: &CycleState, fix: &FixInFlight) -> Option<RelatedQuery> {
        if fix.retest.related.is_some() || fix.retest.tier.is_some() {
            return None;
        }
        if self.retest_plan(s, fix).full.is_some() {
            return None;
        }
        retest::related_query(self.detected.as_ref()?, &fix.commit_paths, &self.related)
    }

    /// The related-tests query answered: what it named joins the affected
    /// tier (a query that failed names nothing; the import map stands).
    fn related_answered(&self, s: &mut CycleState, done: &ShellDone) {
        let Action::Retest { fix } = &s.iter.action else {
            return;
        };
        let mut fix = fix.clone();
        let named = match self.related_query(s, &fix) {
            Some(query) if done.end.success() => {
                // The head of a long answer may end inside a line.
                let text = if done.output_head.len() > crate::agents::vars::INLINE_OUTPUT_MAX {
                    done.output_head
                        .rsplit_once('\n')
                        .map_or("", |(whole, _)| whole)
                } else {
                    done.output_head.as_str()
                };
                retest::parse_related(query.format, text, &self.root.display().to_string())
            }
            _ => Vec::new(),
        };
        fix.retest.related = Some(named);
        s.iter.action = Action::Retest { fix };
        s.touch(Doc::State);
    }

    /// The tiers of the retest after fix k (DESIGN.md §10.4), planned from
    /// the run before the fix, what the fix changed, the import map, the
    /// strategy's `affected_tests` and the related-tests query's answer.
    pub fn retest_plan(&self, s: &CycleState, fix: &FixInFlight) -> RetestPlan {
        let k = s.iter.current_iteration;
        let baseline = self.baseline_results(s).unwrap_or_else(no_results);
        let strategy = s
            .task(&fix_task_id(k))
            .and_then(|t| t.context.fix_strategy.as_ref())
            .map(|fs| fs.test_execution.affected_tests.clone())
            .unwrap_or_default();
        let related = fix.retest.related.clone().unwrap_or_default();
        retest::plan(&retest::RetestInput {
            baseline: &baseline,
            progressive: self.config.cycle.progressive,
            can_filter: self
                .detected
                .as_ref()
                .is_some_and(|d| retest::can_filter(d.framework)),
            touched_tests: fix.touched_tests,
            changed_files: &fix.commit_paths,
            import_map: &self.import_map,
            strategy: &strategy,
            related: &related,
            costs: retest::SessionCosts::of(&s.iter.iterations, self.config.cycle.skip_slow_tiers),
        })
    }

    /// The results the next tier merges over: the last tier's merged
    /// results, else the run before the fix.
    fn merge_base(&self, s: &CycleState, fix: &FixInFlight) -> Option<Arc<TestResults>> {
        fix.retest
            .merged_run
            .and_then(|run| s.results.get(&run).cloned())
            .or_else(|| self.baseline_results(s))
    }

    /// How the next retest run is named.
    fn tier_label(&self, s: &CycleState, fix: &FixInFlight) -> String {
        match decide::next_tier(&self.retest_plan(s, fix), &fix.retest) {
            NextRun::Tier {
                tier: Tier::Failed,
                ids,
            } => format!("tier 1: the {} failed test(s)", ids.len()),
            NextRun::Tier { ids, .. } => format!("tier 2: {} affected test(s)", ids.len()),
            NextRun::Full(why) => format!("the full suite ({why})"),
            NextRun::Done => "the full suite".to_string(),
        }
    }

    /// Judge run n (the fix k = n-1 under test) against the baseline:
    /// regression, test edits, verdict; record it, settle fix k and decide
    /// what comes next (the pure [`decide::settle`]).
    fn judged(&self, s: &mut CycleState, run: TestsRun, out: &mut Vec<Event>) {
        let validation = s.iter.next_action() == NextAction::FinalValidation;
        let k = s.iter.current_iteration;
        let n = if validation {
            s.iter.iterations.last().map_or(k + 1, |r| r.iteration)
        } else {
            k + 1
        };
        let baseline = self.baseline_results(s).unwrap_or_else(no_results);
        let Some(base_rec) = s.baseline().cloned() else {
            self.block(s, "the run before the fix is not recorded", out);
            return;
        };
        let TestsRun {
            results,
            flaky,
            sealed,
            ..
        } = run;
        let mut results = results;
        self.sanitize(&mut results);
        self.flaky_event(n, &flaky, out);
        let mut fix = s
            .iter
            .action
            .fix()
            .cloned()
            .unwrap_or_else(|| self.no_fix(s));
        let plan = self.retest_plan(s, &fix);
        // Failing tests the fix made vanish (skipped, or missing from a
        // full run) count as removed; the guard's own reason stands when it
        // already rejected the fix. A subset judges only what it selected:
        // jest and vitest report the other tests of a file as skipped.
        let selected = match decide::next_tier(&plan, &fix.retest) {
            NextRun::Tier { ids, .. } if !validation && results.scope == Scope::Affected => {
                Some(ids)
            }
            _ => None,
        };
        let vanished = self.vanished(&baseline, &results, selected.as_deref());
        if fix.rejected.is_none() {
            fix.rejected = guard::rejection(&vanished, &self.config.cycle.test_edits);
        }
        let label = if validation {
            validation_label(s).to_string()
        } else {
            self.tier_label(s, &fix)
        };
        // The tier this run was: a subset merges over the run before it by
        // test id, or — when it could not judge anything — escalates to the
        // full suite and is never a regression (DESIGN.md §10.4).
        let tier_run = match decide::next_tier(&plan, &fix.retest) {
            NextRun::Tier { tier, ids } if !validation && results.scope == Scope::Affected => {
                Some((tier, ids))
            }
            _ => None,
        };
        let mut progress = fix.retest.clone();
        let ran = tier_run.as_ref().map(|_| RanCounts::of(&results));
        let mut merged = match &tier_run {
            Some((tier, ids)) => {
                let base = self.merge_base(s, &fix).unwrap_or_else(no_results);
                match retest::merge_tier(&base, ids, &results) {
                    TierResult::Merged { results, passed } => {
                        progress.tier = Some(*tier);
                        progress.outcome = Some(if passed {
                            TierOutcome::Passed
                        } else {
                            TierOutcome::Failing
                        });
                        *results
                    }
                    TierResult::Escalate(why) => {
                        self.escalated(s, n, *tier, results, why.to_string(), &label, out);
                        return;
                    }
                }
            }
            None => results,
        };
        if let Some(overrides) = s
            .task(&fix_task_id(k))
            .and_then(|t| t.context.fix_strategy.as_ref())
            .and_then(|fs| fs.criticality_overrides.clone())
        {
            decide::apply_overrides(&mut merged.failures, &overrides);
        }
        let base_failing: Vec<String> = baseline.failures.iter().map(|f| f.test.clone()).collect();
        let cur_failing: Vec<String> = merged.failures.iter().map(|f| f.test.clone()).collect();
        let new = decide::new_failures(&base_failing, &cur_failing);
        let mut rec = self.new_record(s, n, results_started(&merged, s.now), &merged, new);
        rec.tier = Some(tier_run.as_ref().map_or(Tier::Full, |(tier, _)| *tier));
        if let Some(sr) = &sealed {
            rec.sealed = true;
            rec.commit = Some(sr.commit.clone());
            rec.outside_commit = sr.outside_commit.clone();
            // The work tree passed what the commit fails: name the files
            // outside it that the fix changed.
            if merged.failed + merged.errors > 0 && !sr.outside_commit.is_empty() {
                out.push(Event::warning(format!(
                    "Iteration {n}: the sealed run of the commit fails tests; the fix changed files outside the commit, which the work tree had and a clone will not: {}",
                    sr.outside_commit.join(", ")
                )));
                if let Some(e) = s.history.entries.iter_mut().find(|e| e.iteration == k) {
                    e.outside_commit = sr.outside_commit.clone();
                }
            }
        }
        rec.ran = ran;
        let mut runs = settled_runs(&s.iter.iterations);
        runs.push(rec.clone());
        let settled = decide::settle(&SettleInput {
            fix_iteration: k,
            run: &rec,
            base: &base_rec,
            merged: &merged,
            fix: &fix,
            repo: self.repo,
            attempts_done: s.attempts(),
            no_progress: decide::no_progress(&settled_runs(&runs), self.limits.no_progress_limit),
            cost_cap: policy::cost_cap(s.spent_usd(), self.config.agents.max_cost_usd),
            // The attempt as recorded says who fixed: a person's fix
            // follows no agent strategy.
            strategy: (!s
                .history
                .entries
                .iter()
                .any(|e| e.iteration == k && e.agent == agents::MANUAL))
            .then(|| {
                s.record_of_fix(k)
                    .and_then(|r| r.strategy)
                    .or(s.iter.selected_strategy)
                    .unwrap_or(Strategy::Conservative)
            }),
            limits: &self.limits,
            messages: &self.messages,
            session: &self.id,
            unchecked: &decide::unchecked_fixes(&s.iter.iterations, n),
        });
        if let Some(drop) = &settled.unattributed {
            let earlier = decide::unchecked_fixes(&s.iter.iterations, n)
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            out.push(Event::warning(format!(
                "Iteration {n}: {drop} ({label}), but the fixes of iteration(s) {earlier} were kept after a retest of only part of the suite: iteration {k}'s fix is not rolled back for it; the failing tests are analysed next"
            )));
        }
        rec.result = Some(settled.result);
        let pass_rate = merged.pass_rate;
        let judged_run = self.record_run(s, rec, merged, Some(&base_rec), &label, out);
        let after = match tier_run {
            Some(_) => decide::after_tier(
                &plan,
                &progress,
                &settled.decision,
                settled.result == IterationResult::Improved,
            ),
            None if settled.decision == AfterRun::FinalValidation => AfterTier::Validate,
            None => AfterTier::Settle,
        };
        match after {
            AfterTier::NextTier => {
                let mut fix = fix;
                progress.merged_run = Some(judged_run);
                fix.retest = progress;
                s.iter.action = Action::Retest { fix };
                return;
            }
            AfterTier::Validate => {
                s.iter.action = Action::FinalValidation { fix };
                return;
            }
            AfterTier::Settle => {}
        }
        s.iter.best_pass_rate = Some(
            s.iter
                .best_pass_rate
                .map_or(pass_rate, |b| b.max(pass_rate)),
        );
        // Settle fix k.
        if let Some(outcome) = settled.outcome {
            if let Some(e) = s.history.entries.iter_mut().find(|e| e.iteration == k) {
                e.pass_rate_after = Some(pass_rate);
                e.outcome = outcome;
                if let Some(edit) = &settled.count_dropped {
                    e.test_edits.push(edit.clone());
                }
                e.test_edits.extend(vanished.iter().cloned());
            }
            s.touch(Doc::History);
            let fix_task = fix_task_id(k);
            if s.task(&fix_task).is_some() {
                let status = if outcome.succeeded() {
                    TaskStatus::Completed
                } else {
                    TaskStatus::Failed
                };
                s.set_task_status(
                    &fix_task,
                    status,
                    &format!("run {n}: {pass_rate:.1}% ({outcome})"),
                );
                s.touch(Doc::TaskSummary(fix_task));
            }
        }
        s.iter.pending_commit = settled.commit;
        s.touch(Doc::IterationSummary(k));
        if let Some(mut rollback) = settled.rollback {
            rollback.run = Some(judged_run);
            s.iter.action = Action::Rollback { rollback };
        } else {
            s.iter.baseline_run = Some(judged_run);
        }
        self.apply(s, settled.decision, n, out);
    }

    /// A subset tier that could not judge the fix (it could not run, ran
    /// nothing, missed a selected test): recorded as its own run, never a
    /// regression; the full suite runs next (DESIGN.md §10.4).
    #[allow(clippy::too_many_arguments)]
    fn escalated(
        &self,
        s: &mut CycleState,
        n: u32,
        tier: Tier,
        results: TestResults,
        why: String,
        label: &str,
        out: &mut Vec<Event>,
    ) {
        out.push(Event::warning(format!(
            "Iteration {n}: the subset run {why}; running the full suite instead (not a regression)"
        )));
        let mut rec = self.new_record(s, n, results_started(&results, s.now), &results, Vec::new());
        rec.tier = Some(tier);
        rec.escalated = Some(why.clone());
        self.record_run(s, rec, results, None, label, out);
        if let Action::Retest { fix } = &mut s.iter.action {
            fix.retest.tier = Some(tier);
            fix.retest.outcome = Some(TierOutcome::Escalated);
            fix.retest.escalated = Some(why);
        }
        s.touch(Doc::State);
    }

    /// Tests failing in `baseline` that the fix made vanish from `results`
    /// (skipped or missing), as the test-edit policy records them.
    fn vanished(
        &self,
        baseline: &TestResults,
        results: &TestResults,
        selected: Option<&[String]>,
    ) -> Vec<crate::artifacts::fix_history::TestEdit> {
        guard::recorded(
            decide::vanished_tests(
                &crate::testing::results::failing_ids(baseline),
                results,
                selected,
            ),
            &self.config.cycle.test_edits,
        )
    }

    /// Fix k undone without a commit (its snapshot put back): another
    /// attempt or a block.
    fn undone(&self, s: &mut CycleState, files: Vec<String>, out: &mut Vec<Event>) {
        let Action::Rollback { rollback } = s.iter.action.clone() else {
            return;
        };
        let k = rollback.iteration;
        if let Some(run) = rollback.run
            && let Some(rec) = s.iter.run_mut(run)
        {
            rec.result = Some(IterationResult::RolledBack);
        }
        out.push(Event::Undone {
            iteration: k,
            files,
            reason: rollback.message.clone(),
        });
        s.touch(Doc::History);
        s.touch(Doc::IterationSummary(k));
        let n = rollback
            .run
            .and_then(|r| s.record(r).map(|r| r.iteration))
            .unwrap_or(k + 1);
        self.after_undo(s, n, out);
    }

    /// After fix k was undone (reverted, or put back uncommitted): the
    /// next analysis (of iteration `n`), or a block at a limit.
    fn after_undo(&self, s: &mut CycleState, n: u32, out: &mut Vec<Event>) {
        s.iter.action = Action::AnalyzeFailures;
        let decision = decide::after_rollback(
            s.attempts(),
            decide::no_progress(
                &settled_runs(&s.iter.iterations),
                self.limits.no_progress_limit,
            ),
            policy::cost_cap(s.spent_usd(), self.config.agents.max_cost_usd),
            &self.limits,
        );
        self.apply(s, decision, n, out);
    }

    /// Fix k's commit reverted (or nothing to revert): another attempt or
    /// a block.
    fn rolled_back(&self, s: &mut CycleState, revert_id: Option<String>, out: &mut Vec<Event>) {
        let Action::Rollback { rollback } = s.iter.action.clone() else {
            return;
        };
        let k = rollback.iteration;
        let judged = rollback.run.unwrap_or(k + 1);
        let n = s.record(judged).map_or(k + 1, |r| r.iteration);
        // The run that measured the undone fix is the one rolled back.
        if let Some(rec) = s.iter.run_mut(judged) {
            rec.result = Some(IterationResult::RolledBack);
            rec.rollback_commit = revert_id.clone();
        }
        if let Some(e) = s.history.entries.iter_mut().find(|e| e.iteration == k)
            && let Some(c) = &revert_id
        {
            e.rollback_commit = Some(c.clone());
        }
        s.touch(Doc::History);
        out.push(Event::Rollback {
            iteration: k,
            commit: revert_id,
            message: rollback.message.clone(),
        });
        s.touch(Doc::IterationSummary(k));
        s.touch(Doc::IterationSummary(n));
        self.after_undo(s, n, out);
    }

    /// Full or partial success: statuses and summaries; the archive and
    /// the final commit follow.
    fn complete(&self, s: &mut CycleState) {
        let Some(last) = s.iter.iterations.last().cloned() else {
            return;
        };
        let partial = last.result == Some(IterationResult::PartialSuccess);
        let attempts = s.attempts();
        let summary = if partial {
            format!(
                "Partial success: {:.1}% ({}) on the full suite after {attempts} fix attempt(s); every remaining failure is of low criticality",
                last.pass_rate,
                last.counts()
            )
        } else {
            format!(
                "Full success: all {} tests pass on the full suite after {attempts} fix attempt(s)",
                last.passed
            )
        };
        let mut files: Vec<String> = s
            .history
            .entries
            .iter()
            .filter(|e| e.outcome.succeeded())
            .flat_map(|e| e.files_changed.clone())
            .collect();
        files.sort();
        files.dedup();
        let text = summary.clone();
        s.update_task(LOOP_TASK, |t| {
            let r = t.result.get_or_insert_with(TaskResult::default);
            r.summary = text;
            r.files_modified = files;
        });
        s.set_task_status(LOOP_TASK, TaskStatus::Completed, &summary);
        s.touch(Doc::TaskSummary(LOOP_TASK.to_string()));
        let now = s.now;
        s.iter.status = if partial {
            LoopStatus::PartialSuccess
        } else {
            LoopStatus::Completed
        };
        s.iter.action = Action::None;
        s.session.status = if partial {
            SessionStatus::PartialSuccess
        } else {
            SessionStatus::Completed
        };
        s.session.completed_at = Some(now);
        if let Some(p) = s.session.phase_mut(5) {
            p.status = PhaseStatus::Completed;
            p.completed_at = Some(now);
        }
        s.touch(Doc::Session);
        s.touch(Doc::Todo);
        s.touch(Doc::State);
    }

    /// The `complete` event (before the archive).
    pub fn complete_event(&self, s: &CycleState) -> Event {
        Event::Complete {
            session_id: self.id.clone(),
            status: s.session.status,
            pass_rate: s.iter.iterations.last().map_or(0.0, |r| r.pass_rate),
        }
    }
}

/// The message of the one commit `git.squash` leaves: what the session
/// did, iteration by iteration, fixes and rollbacks included.
fn squash_message(
    style: &crate::git::MessageStyle,
    id: &str,
    partial: bool,
    pass: f64,
    s: &CycleState,
) -> String {
    let mut lines = Vec::new();
    for e in &s.history.entries {
        let rate = |r: Option<f64>| r.map_or("?".to_string(), |r| format!("{r:.1}%"));
        lines.push(format!(
            "- iteration {}: {}{}, {} → {}: {}{}",
            e.iteration,
            e.strategy.map_or(String::new(), |s| format!("{s} ")),
            crate::agents::config::fix_by(&e.agent),
            rate(e.pass_rate_before),
            rate(e.pass_rate_after),
            e.outcome,
            if e.files_changed.is_empty() {
                String::new()
            } else {
                format!(" ({})", e.files_changed.join(", "))
            }
        ));
    }
    style.message(
        &Subject::Final {
            session: id,
            partial,
            pass,
            attempts: s.attempts(),
            squashed: true,
        },
        id,
        &lines.join("\n"),
    )
}

/// Results of no run (a baseline that is missing).
fn no_results() -> Arc<TestResults> {
    Arc::new(TestResults {
        command: String::new(),
        exit_code: None,
        duration_ms: 0,
        setup_ms: None,
        scope: Scope::Full,
        framework: String::new(),
        parser: String::new(),
        total: 0,
        passed: 0,
        failed: 0,
        skipped: 0,
        errors: 0,
        pass_rate: 0.0,
        layer_distribution: Default::default(),
        failures: Vec::new(),
        output_log: None,
        truncated: false,
        started_at: None,
        cases: Vec::new(),
        notes: Vec::new(),
        extra: Default::default(),
    })
}

/// When the results' run started (the runner's clock), else now.
fn results_started(
    r: &TestResults,
    now: crate::artifacts::Timestamp,
) -> crate::artifacts::Timestamp {
    r.started_at.unwrap_or(now)
}
/// What the full run after a subset tier is for: the final validation when
/// every test passed so far; else (a fix that made no failing test pass,
/// DESIGN.md §10.4) a look at what else the fix changed.
fn validation_label(s: &CycleState) -> &'static str {
    match s.iter.iterations.last() {
        Some(r) if r.failed > 0 => "full suite: the fix made no failing test pass",
        _ => "final validation, full suite",
    }
}
