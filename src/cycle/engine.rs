//! The dispatcher of phase 5: it performs the one action `next_action`
//! names, persists what it observed together with the next action, and
//! asks the pure functions of [`super::decide`] what comes next. See the
//! module docs of [`super`] for the rules that make it crash-safe.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;
use serde_json::json;

use super::decide::{
    self, AfterRun, Limits, RetestInput, RetestScope, RollbackCause, RunFacts, StrategyInput,
};
use super::progress::{Reporter, cost_text, duration_text};
use super::{CycleOutcome, LOOP_TASK, files, guard, report};
use crate::agents::{self, AnalysisCtx, CallFiles, Invocation, ResolvedAgent, Role, Vars};
use crate::artifacts::config::Config;
use crate::artifacts::fix_history::{
    AgentCall, Diffstat, FixAttempt, FixHistory, TestEdit, TestEditKind,
};
use crate::artifacts::iteration_state::{
    FixInFlight, IterationFailures, IterationRecord, IterationResult, IterationState, LoopStatus,
    NextAction, PendingCommit, Strategy,
};
use crate::artifacts::session::{PhaseStatus, SessionStatus, WorkflowSession};
use crate::artifacts::task::{
    FixStrategy, FlowControl, FlowStep, Task, TaskContext, TaskMeta, TaskResult, TaskStatus,
    TaskType,
};
use crate::artifacts::test_results::{Layer, TestResults};
use crate::artifacts::{Extra, Timestamp};
use crate::error::{Error, Exit, Result};
use crate::git::{Checkpoints, CommitKind, Trailers};
use crate::phases::tasks::{render_task_summary, render_todo_list};
use crate::process;
use crate::render::Renderer;
use crate::session::store::{self, SessionLock};
use crate::session::{Location, SessionPaths, Workspace};
use crate::testing::{self, Detected, RunRequest, TierResult};

/// Bytes of a test log handed to the analysis, at most (head + tail).
const LOG_HEAD: u64 = 256 * 1024;
const LOG_TAIL: u64 = 4 * 1024 * 1024;

/// Everything a phase-5 run works with. Fields are the run's context;
/// `state` is the state machine as persisted.
pub(super) struct Engine<'a> {
    pub ws: &'a Workspace,
    /// Where the code is: the project root, or the session's worktree.
    pub root: PathBuf,
    pub worktree: bool,
    pub location: Location,
    pub paths: SessionPaths,
    pub session: WorkflowSession,
    pub config: Config,
    pub limits: Limits,
    pub cp: Checkpoints,
    pub renderer: Renderer,
    pub lock: SessionLock,
    pub out: Reporter<'a>,
    pub fix_agent: Option<ResolvedAgent>,
    pub chain: Vec<ResolvedAgent>,
    pub state: IterationState,
    /// The session's tasks (path, task), kept in step with the files.
    pub tasks: Vec<(PathBuf, Task)>,
    pub detected: Option<Detected>,
}

fn now() -> Timestamp {
    Utc::now()
}

fn fix_task_id(k: u32) -> String {
    format!("IMPL-fix-{k}")
}

impl<'a> Engine<'a> {
    // ----- entry and loop ---------------------------------------------------

    /// Bring a loaded or new state into a runnable shape, then loop.
    pub fn start(&mut self, fresh: bool) -> Result<CycleOutcome> {
        let id = self.paths.id.clone();
        if self.location == Location::Archived {
            if !matches!(
                self.state.status,
                LoopStatus::Completed | LoopStatus::PartialSuccess
            ) {
                return Err(Error::usage(format!(
                    "session {id} is archived; archived sessions cannot be resumed"
                )));
            }
            return self.finish();
        }
        self.state.max_iterations = self.limits.max_iterations;
        match self.state.status {
            LoopStatus::Completed | LoopStatus::PartialSuccess => return self.finish(),
            LoopStatus::Blocked => {
                if self.session.status != SessionStatus::Active {
                    return Ok(self.blocked_outcome(false));
                }
                self.reopen()?;
            }
            LoopStatus::Paused => self.state.status = LoopStatus::Running,
            LoopStatus::Running | LoopStatus::AwaitingFix => {}
        }
        let now = now();
        if !matches!(self.state.status, LoopStatus::AwaitingFix) {
            self.session.status = SessionStatus::Active;
        }
        if let Some(p) = self.session.phase_mut(5)
            && p.status != PhaseStatus::InProgress
        {
            p.status = PhaseStatus::InProgress;
            p.started_at.get_or_insert(now);
            p.completed_at = None;
        }
        if !fresh {
            self.session.resumed_at = Some(now);
        }
        self.save_session()?;
        self.save()?;
        self.write_todo()?;
        let fix = self
            .fix_agent
            .as_ref()
            .map_or("manual".to_string(), |a| a.name.clone());
        let analysis = if self.chain.is_empty() {
            "built-in".to_string()
        } else {
            let names: Vec<&str> = self.chain.iter().map(|a| a.name.as_str()).collect();
            format!("{} → built-in", names.join(" → "))
        };
        let command = self
            .detect()
            .map(|d| format!("`{}` ({})", d.command, d.framework))
            .unwrap_or_else(|_| "no test command".into());
        self.out.event(
            "start",
            format!(
                "{} {id} · {command} · fix: {fix} · analysis: {analysis} · at most {} fix attempts{}",
                if fresh { "Phase 5" } else { "Resuming" },
                self.limits.max_iterations,
                if self.cp.is_repo() { "" } else { " · no commits" },
            ),
            json!({
                "session_id": id,
                "resumed": !fresh,
                "next_action": self.state.next_action.as_str(),
                "fix_agent": fix,
                "max_iterations": self.limits.max_iterations,
                "commits": self.cp.is_repo(),
            }),
        );
        self.run_loop()
    }

    fn run_loop(&mut self) -> Result<CycleOutcome> {
        let _batch = store::batch_syncs();
        loop {
            if process::interrupted() {
                return self.pause("interrupted (Ctrl-C)".into());
            }
            if self.state.pending_commit.is_some() {
                self.make_pending_commit()?;
                continue;
            }
            let step = match self.state.next_action {
                NextAction::ExecuteTask => self.execute_task(),
                NextAction::RunTests => self.run_tests(),
                NextAction::AnalyzeFailures => self.analyze(),
                NextAction::ExecuteFixTask => self.execute_fix(),
                NextAction::Retest => self.retest(),
                NextAction::FinalValidation => self.final_validation(),
                NextAction::Rollback => self.rollback(),
                NextAction::Complete => self.complete(),
                NextAction::None => return self.finish(),
            };
            match step {
                Ok(()) => {}
                Err(Error::Paused(msg)) => return self.pause(msg),
                Err(Error::Blocked(reason)) => self.block(&reason)?,
                Err(e) => return Err(e),
            }
        }
    }

    // ----- small helpers ----------------------------------------------------

    /// Persist the state machine: the commit point of the step, after
    /// which everything the step wrote is durable (`store::commit_json`).
    pub fn save(&mut self) -> Result<()> {
        self.state.updated_at = now();
        store::commit_json(&self.paths.iteration_state(), &self.state)
    }

    pub fn save_session(&mut self) -> Result<()> {
        self.session.updated_at = now();
        store::write_json(&self.paths.session_json(), &self.session)
    }

    pub fn detect(&self) -> Result<Detected> {
        if let Some(d) = &self.detected {
            return Ok(d.clone());
        }
        testing::detect(&self.root, &self.config.test).ok_or_else(|| {
            Error::usage(format!(
                "no test command detected in {}: set one in {}, e.g. {{\"test\": {{\"command\": \"make check\"}}}}",
                self.ws.rel(&self.root),
                self.ws.rel(&self.ws.config_path())
            ))
        })
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|(_, t)| t.id == id).map(|(_, t)| t)
    }

    pub fn task_path(&self, id: &str) -> PathBuf {
        self.tasks
            .iter()
            .find(|(_, t)| t.id == id)
            .map_or_else(|| self.paths.new_task_file(id), |(p, _)| p.clone())
    }

    /// Write a task (its existing file, or a new one named after its id).
    pub fn put_task(&mut self, task: Task) -> Result<()> {
        let path = self.task_path(&task.id);
        files::write_json(&path, &task)?;
        match self.tasks.iter_mut().find(|(_, t)| t.id == task.id) {
            Some(slot) => slot.1 = task,
            None => {
                self.tasks.push((path, task));
                self.tasks
                    .sort_by_key(|(_, t)| crate::session::task_order(&t.id));
            }
        }
        Ok(())
    }

    /// Change a task's status (appending to `status_history`) and write it.
    pub fn set_task_status(&mut self, id: &str, to: TaskStatus, reason: &str) -> Result<()> {
        let Some(mut task) = self.task(id).cloned() else {
            return Ok(());
        };
        if task.status == to {
            return Ok(());
        }
        let now = now();
        task.set_status(to, reason, now);
        let result = task.result.get_or_insert_with(TaskResult::default);
        if to == TaskStatus::InProgress {
            result.started_at.get_or_insert(now);
        }
        if matches!(
            to,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Skipped | TaskStatus::Blocked
        ) {
            result.completed_at = Some(now);
        }
        self.put_task(task)
    }

    /// `.summaries/<ID>-summary.md` for a finished task.
    pub fn write_task_summary(&self, id: &str) -> Result<()> {
        let Some(task) = self.task(id) else {
            return Ok(());
        };
        let text = render_task_summary(&self.renderer, task)?;
        files::write_view(&self.paths.task_summary(id), text.as_bytes())
    }

    pub fn write_todo(&self) -> Result<()> {
        let text = render_todo_list(
            &self.renderer,
            &self.paths,
            &self.session.description,
            &self.tasks,
            Some(&self.state),
        )?;
        files::write_view(&self.paths.todo_list(), text.as_bytes())
    }

    fn write_iteration_summary(&self, n: u32) -> Result<()> {
        let Some(rec) = self.record(n) else {
            return Ok(());
        };
        let prev = n
            .checked_sub(1)
            .and_then(|p| self.record(p))
            .map(|r| r.pass_rate);
        let history = self.load_history()?;
        let text = report::iteration_summary(
            &self.renderer,
            rec,
            prev,
            history.entries.iter().find(|e| e.iteration == n),
        )?;
        files::write_view(&self.paths.iteration_summary(n), text.as_bytes())
    }

    pub fn load_history(&self) -> Result<FixHistory> {
        let path = self.paths.fix_history();
        Ok(
            store::read_json_opt(&path, &self.ws.rel(&path))?.unwrap_or_else(|| FixHistory {
                session_id: self.paths.id.clone(),
                ..FixHistory::default()
            }),
        )
    }

    pub fn save_history(&self, h: &FixHistory) -> Result<()> {
        files::write_json(&self.paths.fix_history(), h)
    }

    /// Replace (or add) the agent calls of one role and iteration/task, so
    /// a step redone after a crash does not count its calls twice.
    pub fn record_calls(
        &self,
        role: &str,
        iteration: Option<u32>,
        task: Option<&str>,
        calls: Vec<AgentCall>,
    ) -> Result<()> {
        let mut h = self.load_history()?;
        h.agent_calls
            .retain(|c| !(c.role == role && c.iteration == iteration && c.task.as_deref() == task));
        h.agent_calls.extend(calls);
        self.save_history(&h)
    }

    fn results_path(&self, n: u32) -> PathBuf {
        self.paths.iteration_file(n, "results.json")
    }

    fn log_path(&self, n: u32) -> PathBuf {
        self.paths.iteration_file(n, "test-output.log")
    }

    pub fn load_results(&self, n: u32) -> Result<TestResults> {
        let path = self.results_path(n);
        store::read_json(&path, &self.ws.rel(&path))
    }

    /// `iteration-N-results.json` (kept per run, for merging and analysis)
    /// and `test-results.json` (the latest).
    fn store_results(&self, n: u32, r: &TestResults) -> Result<()> {
        files::write_json(&self.results_path(n), r)?;
        files::write_json_view(&self.paths.test_results(), r)
    }

    pub fn record(&self, n: u32) -> Option<&IterationRecord> {
        self.state.iterations.iter().find(|r| r.iteration == n)
    }

    fn record_mut(&mut self, n: u32) -> Option<&mut IterationRecord> {
        self.state.iterations.iter_mut().find(|r| r.iteration == n)
    }

    fn put_record(&mut self, rec: IterationRecord) {
        match self.record_mut(rec.iteration) {
            Some(slot) => *slot = rec,
            None => {
                self.state.iterations.push(rec);
                self.state.iterations.sort_by_key(|r| r.iteration);
            }
        }
    }

    /// A path for an agent: relative to the agent's working directory (the
    /// code root), which is the project root unless a worktree is used.
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
    fn session_dir_for_commit(&self) -> Option<String> {
        (!self.worktree).then(|| self.ws.rel(&self.paths.dir))
    }

    fn fix_agent_name(&self) -> String {
        self.fix_agent
            .as_ref()
            .map_or_else(|| agents::MANUAL.to_string(), |a| a.name.clone())
    }

    pub fn fix_attempts_done(&self) -> u32 {
        self.load_history()
            .map(|h| h.entries.len() as u32)
            .unwrap_or(0)
    }

    /// Variables for an agent call (DESIGN.md §6.3).
    pub fn vars(
        &self,
        attempt: u32,
        spec: &Path,
        log: Option<(&str, &Path)>,
        exit: Option<i32>,
    ) -> Vars {
        let mut v = Vars::new();
        v.set("test.attempt", attempt.to_string())
            .set("spec", self.agent_rel(spec))
            .set("session.id", self.paths.id.clone())
            .set("session.dir", self.agent_rel(&self.paths.dir))
            .set(
                "test.exit_code",
                exit.map(|c| c.to_string()).unwrap_or_default(),
            );
        match log {
            Some((text, path)) => {
                v.set_test_output(text, &self.agent_rel(path));
            }
            None => {
                v.set("test.output", "").set("test.output_file", "");
            }
        }
        v
    }

    /// Run a child through `f` with the lock recording its process group.
    pub(super) fn with_child<T>(&mut self, f: impl FnOnce(&mut dyn FnMut(i32)) -> T) -> Result<T> {
        let lock = &mut self.lock;
        let mut on_spawn = |pgid: i32| {
            let _ = lock.set_child(Some(pgid));
        };
        let out = f(&mut on_spawn);
        self.lock.set_child(None)?;
        Ok(out)
    }

    // ----- running tests ----------------------------------------------------

    /// Run the suite (or a subset) for run `n`: its log is
    /// `iteration-N-test-output.log`, also linked as `test-output.log`.
    fn run_suite(
        &mut self,
        n: u32,
        subset: Option<Vec<String>>,
        previous: Option<&TestResults>,
        log: PathBuf,
        label: &str,
    ) -> Result<TestResults> {
        let detected = self.detect()?;
        self.detected = Some(detected.clone());
        let spinner = self.out.spinner(format!("Iteration {n} · running {label}"));
        let bar = spinner.handle();
        let junit = self.paths.junit_dir();
        let timeout = Duration::from_secs(self.config.test.timeout_s);
        let root = self.root.clone();
        let base = format!("Iteration {n} · running {label}");
        let result = self.with_child(|on_spawn| {
            let mut req = RunRequest::new(&root, detected, junit, &log);
            req.subset = subset;
            req.timeout = Some(timeout);
            req.previous = previous;
            req.on_spawn = Some(on_spawn);
            if let Some(bar) = bar {
                req.progress = Some(Box::new(move |p: testing::Progress| {
                    bar.set_message(format!(
                        "{base} — {} passed, {} failed, {} skipped",
                        p.passed, p.failed, p.skipped
                    ));
                }));
            }
            testing::run_tests(req)
        })?;
        drop(spinner);
        let mut results = result?;
        self.sanitize(&mut results, &log);
        Ok(results)
    }

    /// No absolute path in artifacts: the log relative to the project root,
    /// the command without the project's directory.
    fn sanitize(&self, r: &mut TestResults, log: &Path) {
        r.output_log = Some(self.ws.rel(log));
        let root = format!("{}/", self.ws.root.display());
        if r.command.contains(&root) {
            r.command = r.command.replace(&root, "");
        }
    }

    /// Make `test-output.log` the log of the latest run.
    fn link_latest_log(&self, log: &Path) -> Result<()> {
        let latest = self.paths.test_output_log();
        match std::fs::remove_file(&latest) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&latest, e)),
        }
        if log.exists() && std::fs::hard_link(log, &latest).is_err() {
            std::fs::copy(log, &latest).map_err(|e| Error::io(&latest, e))?;
        }
        Ok(())
    }

    /// Re-run `new_failures` once (DESIGN.md §5.3); those that pass are
    /// marked flaky (low criticality) in `results`. Skipped when the
    /// framework cannot run a subset (it would mean a whole second run).
    fn flaky_check(
        &mut self,
        n: u32,
        results: &mut TestResults,
        new_failures: &[String],
    ) -> Result<Vec<String>> {
        let ids: Vec<String> = results
            .failures
            .iter()
            .filter(|f| f.test_type != Layer::Static && !f.flaky)
            .filter(|f| new_failures.contains(&f.test))
            .map(|f| f.test.clone())
            .collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let detected = self.detect()?;
        if testing::select::filter_args(detected.framework, &ids).is_none() {
            return Ok(Vec::new());
        }
        let log = self.paths.iteration_file(n, "rerun-output.log");
        let rerun = self.run_suite(
            n,
            Some(ids.clone()),
            None,
            log,
            "a re-run of the new failures",
        )?;
        let marked = testing::mark_flaky(results, &rerun);
        if !marked.is_empty() {
            self.out.event(
                "flaky",
                format!(
                    "Iteration {n} · {} flaky (failed, then passed on a re-run): {}",
                    marked.len(),
                    marked.join(", ")
                ),
                json!({ "iteration": n, "tests": marked }),
            );
        }
        Ok(marked)
    }

    fn new_record(
        &self,
        n: u32,
        started: Timestamp,
        r: &TestResults,
        new: Vec<String>,
    ) -> IterationRecord {
        IterationRecord {
            iteration: n,
            started_at: started,
            completed_at: None,
            scope: r.scope,
            pass_rate: r.pass_rate,
            total: r.total,
            passed: r.passed,
            failed: r.failed + r.errors,
            failed_tests: r.failures.iter().map(|f| f.test.clone()).collect(),
            new_failures: new,
            strategy: None,
            analysis_file: None,
            analysis_tool: None,
            fix_task: None,
            fix_commit: None,
            rollback_commit: None,
            result: None,
            extra: {
                // Read by `wfx status` and `wfx report` (docs/artifacts.md).
                let flaky: Vec<&str> = r
                    .failures
                    .iter()
                    .filter(|f| f.flaky)
                    .map(|f| f.test.as_str())
                    .collect();
                let mut extra = Extra::new();
                if !flaky.is_empty() {
                    extra.insert("flaky_tests".into(), json!(flaky));
                }
                extra
            },
        }
    }

    fn report_run(&self, rec: &IterationRecord, prev: Option<f64>, label: &str, r: &TestResults) {
        let failing = rec.failed;
        let mark = match rec.result {
            Some(IterationResult::Success) => self.out.green(" ✓"),
            Some(IterationResult::Regression) => self.out.red(" regression"),
            Some(IterationResult::Error) => self.out.red(" execution error"),
            _ => String::new(),
        };
        let notes = if r.notes.is_empty() {
            String::new()
        } else {
            format!(" · note: {}", r.notes.join("; "))
        };
        self.out.event(
            "run",
            format!(
                "Iteration {} · {}{} · {failing} failing · {label} {}{mark}{notes}",
                rec.iteration,
                self.out.bold(&format!("{:.1}%", rec.pass_rate)),
                decide::delta_text(prev, rec.pass_rate),
                duration_text(Duration::from_millis(r.duration_ms)),
            ),
            json!({
                "iteration": rec.iteration,
                "scope": rec.scope,
                "pass_rate": rec.pass_rate,
                "previous_pass_rate": prev,
                "total": rec.total,
                "passed": rec.passed,
                "failed": rec.failed,
                "skipped": r.skipped,
                "new_failures": rec.new_failures,
                "result": rec.result,
                "duration_ms": r.duration_ms,
                "command": r.command,
            }),
        );
    }

    // ----- actions ----------------------------------------------------------

    fn execute_task(&mut self) -> Result<()> {
        let id = self.state.current_task.clone().unwrap_or_default();
        let kind = self.task(&id).map(|t| t.meta.kind);
        match kind {
            Some(TaskType::TestGen) => super::initial::test_gen(self, &id)?,
            Some(TaskType::CodeValidation) => super::initial::code_validation(self, &id)?,
            Some(TaskType::TestQualityReview) => super::initial::quality_review(self, &id)?,
            _ => self.out.warn(format!(
                "task {id} is not an initial task of phase 5; skipping it"
            )),
        }
        if self.state.queue.is_empty() {
            self.state.current_task = Some(LOOP_TASK.to_string());
            self.state.next_action = NextAction::RunTests;
            if let Some(snapshot) = self.state.tasks_snapshot.clone() {
                let changes = self.cp.changed_since(&snapshot)?;
                let paths = self.cp.commit_paths(&changes)?;
                if !paths.is_empty() {
                    self.state.pending_commit = Some(PendingCommit {
                        kind: "tests".into(),
                        iteration: 0,
                        message: format!(
                            "test-cycle: generated tests (IMPL-001, {} file(s))",
                            paths.len()
                        ),
                        paths,
                    });
                }
            }
        } else {
            let next = self.state.queue.remove(0);
            self.state.current_task = Some(next);
        }
        self.save()?;
        self.write_todo()
    }

    fn start_loop_task(&mut self) -> Result<()> {
        if self
            .task(LOOP_TASK)
            .is_some_and(|t| t.status == TaskStatus::Pending)
        {
            self.set_task_status(
                LOOP_TASK,
                TaskStatus::InProgress,
                "phase 5 fix loop started",
            )?;
        }
        Ok(())
    }

    /// The first run of the loop: the whole suite.
    fn run_tests(&mut self) -> Result<()> {
        self.start_loop_task()?;
        let n = 1;
        let started = now();
        let log = self.log_path(n);
        let mut results = self.run_suite(n, None, None, log.clone(), "the full suite")?;
        let new: Vec<String> = results.failures.iter().map(|f| f.test.clone()).collect();
        self.flaky_check(n, &mut results, &new)?;
        self.link_latest_log(&log)?;
        self.store_results(n, &results)?;
        let verdict = decide::verdict(&results, &self.limits);
        let mut rec = self.new_record(n, started, &results, new);
        // A first run has nothing to compare with: only its verdict counts.
        rec.result = match decide::run_result(None, results.pass_rate, verdict, false) {
            IterationResult::NoChange => None,
            r => Some(r),
        };
        rec.completed_at = Some(now());
        self.report_run(&rec, None, "full suite", &results);
        self.put_record(rec);
        self.state.baseline_run = Some(n);
        self.state.current_iteration = n;
        self.state.best_pass_rate = Some(results.pass_rate);
        let decision = decide::after_run(
            &RunFacts {
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
        self.apply(decision, n)?;
        self.save()?;
        self.write_iteration_summary(n)?;
        self.write_todo()
    }

    /// Set the next action for a decision (a block is performed at once).
    fn apply(&mut self, d: AfterRun, run: u32) -> Result<()> {
        match d {
            AfterRun::Complete { .. } => self.state.next_action = NextAction::Complete,
            AfterRun::FinalValidation => self.state.next_action = NextAction::FinalValidation,
            AfterRun::Rollback { .. } => self.state.next_action = NextAction::Rollback,
            AfterRun::Analyze => {
                self.state.current_iteration = run;
                self.state.fix = None;
                self.state.next_action = NextAction::AnalyzeFailures;
            }
            AfterRun::Blocked { reason } => {
                self.state.fix = None;
                return self.block(&reason);
            }
        }
        Ok(())
    }

    /// Text of the log of run `n`, bounded (head and tail).
    fn log_text(&self, path: &Path) -> String {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return String::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut bytes = Vec::new();
        if len <= LOG_HEAD + LOG_TAIL {
            let _ = f.read_to_end(&mut bytes);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let mut head = vec![0u8; LOG_HEAD as usize];
        let _ = f.read_exact(&mut head);
        let _ = f.seek(SeekFrom::Start(len - LOG_TAIL));
        let _ = f.read_to_end(&mut bytes);
        format!(
            "{}\n[… {} bytes omitted; see {} …]\n{}",
            String::from_utf8_lossy(&head),
            len - LOG_HEAD - LOG_TAIL,
            self.ws.rel(path),
            String::from_utf8_lossy(&bytes)
        )
    }

    /// Analysis of iteration k: strategy, analysis (agents or built-in),
    /// `iteration-k-analysis.md`, `iteration-k-failures.json` and
    /// `IMPL-fix-k.json`.
    fn analyze(&mut self) -> Result<()> {
        let k = self.state.current_iteration;
        let base_n = self.state.baseline_run.unwrap_or(k);
        let baseline = self.load_results(base_n)?;
        let stuck = decide::stuck_tests(&self.state.iterations, self.limits.stuck_after);
        let last_result = self.state.iterations.last().and_then(|r| r.result);
        let real: Vec<_> = baseline
            .failures
            .iter()
            .filter(|f| !f.flaky)
            .cloned()
            .collect();
        let strategy = decide::select_strategy(&StrategyInput {
            iteration: k,
            pass_rate: baseline.pass_rate,
            similarity: decide::similarity(&real),
            regression_in_last_retest: matches!(
                last_result,
                Some(IterationResult::Regression | IterationResult::RolledBack)
            ),
            previous: self.state.selected_strategy,
            stuck: !stuck.is_empty(),
        });
        if !stuck.is_empty() && self.state.stuck_tests != stuck {
            self.out.event(
                "stuck",
                format!(
                    "Iteration {k} · stuck: {} failed in {} runs in a row: {}",
                    stuck.len(),
                    self.limits.stuck_after,
                    stuck.join(", ")
                ),
                json!({ "iteration": k, "tests": stuck }),
            );
        }
        let log_path = self.log_path(base_n);
        let log_text = self.log_text(&log_path);
        let log_rel = self.agent_rel(&log_path);
        let history = self.load_history()?;
        let previous_strategies: Vec<FixStrategy> = (1..k)
            .filter_map(|i| self.task(&fix_task_id(i)))
            .filter_map(|t| t.context.fix_strategy.clone())
            .collect();
        let spec = self.task_path(&fix_task_id(k));
        let vars = self.vars(k, &spec, Some((&log_text, &log_path)), baseline.exit_code);
        let spinner = self
            .out
            .spinner(format!("Iteration {k} · analysing failures"));
        let chain = self.chain.clone();
        let max_cost = self.config.agents.max_cost_usd;
        let outcome = {
            let ctx = AnalysisCtx {
                root: &self.root,
                paths: &self.paths,
                iteration: k,
                max_iterations: self.limits.max_iterations,
                strategy,
                results: &baseline,
                log_text: &log_text,
                log_path: &log_rel,
                stuck_tests: &stuck,
                history: &history,
                previous_strategies: &previous_strategies,
                vars: &vars,
                renderer: &self.renderer,
                max_cost_usd: max_cost,
                env: &[],
            };
            let lock = &mut self.lock;
            let mut on_spawn = |pgid: i32| {
                let _ = lock.set_child(Some(pgid));
            };
            agents::analyze(&chain, &ctx, &mut on_spawn)
        };
        self.lock.set_child(None)?;
        drop(spinner);
        let outcome = outcome?;

        let mut calls = outcome.calls.clone();
        for c in &mut calls {
            self.fix_call_paths(c);
        }
        self.record_calls("analysis", Some(k), None, calls)?;
        let analysis_file = self.paths.iteration_file(k, "analysis.md");
        files::write_view(&analysis_file, outcome.analysis_markdown.as_bytes())?;
        files::write_json(
            &self.paths.iteration_file(k, "failures.json"),
            &IterationFailures {
                iteration: k,
                pass_rate: baseline.pass_rate,
                failures: baseline.failures.clone(),
                extra: Extra::new(),
            },
        )?;
        let task = self.fix_task(k, strategy, &outcome, &baseline);
        self.put_task(task)?;
        let analysis_rel = self.ws.rel(&analysis_file);
        if let Some(rec) = self.record_mut(k) {
            rec.strategy = Some(strategy);
            rec.analysis_file = Some(analysis_rel.clone());
            rec.analysis_tool = Some(outcome.tool.clone());
            rec.fix_task = Some(fix_task_id(k));
        }
        self.state.selected_strategy = Some(strategy);
        self.state.stuck_tests = stuck;
        self.state.fix = None;
        let tried = if outcome.tried.is_empty() {
            String::new()
        } else {
            let t: Vec<String> = outcome
                .tried
                .iter()
                .map(|t| format!("{}: {}", t.tool, t.reason_code))
                .collect();
            format!(" (passed over: {})", t.join(", "))
        };
        self.out.event(
            "analysis",
            format!(
                "Iteration {k} · {strategy} · analysis by {}{tried} · {} modification point(s) · confidence {:.2}",
                outcome.tool,
                outcome.strategy.modification_points.len(),
                outcome.strategy.confidence_score
            ),
            json!({
                "iteration": k,
                "strategy": strategy,
                "tool": outcome.tool,
                "quality": outcome.quality,
                "tried": outcome.tried.iter().map(|t| json!({"tool": t.tool, "reason": t.reason_code})).collect::<Vec<_>>(),
                "confidence": outcome.strategy.confidence_score,
                "analysis_file": analysis_rel,
                "fix_task": fix_task_id(k),
            }),
        );
        if let Some(reason) = outcome.cost_capped {
            return self.block(&reason);
        }
        self.state.next_action = NextAction::ExecuteFixTask;
        self.save()?;
        self.write_iteration_summary(k)?;
        self.write_todo()
    }

    /// Agent-call files relative to the project root (an agent in a
    /// worktree is given paths relative to the worktree).
    pub(super) fn fix_call_paths(&self, c: &mut AgentCall) {
        for p in [&mut c.prompt_file, &mut c.output_file]
            .into_iter()
            .flatten()
        {
            if let Some(rest) = p.strip_prefix("../../../") {
                *p = rest.to_string();
            } else if Path::new(p.as_str()).is_absolute() {
                *p = self.ws.rel(Path::new(p.as_str()));
            }
        }
    }

    /// `IMPL-fix-k.json`: the fix task with the full fix strategy.
    fn fix_task(
        &self,
        k: u32,
        strategy: Strategy,
        outcome: &agents::AnalysisOutcome,
        baseline: &TestResults,
    ) -> Task {
        let fs = &outcome.strategy;
        let parent = self.task(LOOP_TASK);
        let text = agents::prompts::strategy_text(strategy);
        let mut focus: Vec<String> = fs
            .modification_points
            .iter()
            .map(|p| p.file.clone())
            .collect();
        focus.sort();
        focus.dedup();
        let failing: Vec<String> = baseline
            .failures
            .iter()
            .filter(|f| !f.flaky)
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
        requirements
            .push("Fix the code under test; never delete, skip or weaken a test".to_string());
        let analysis_rel = self.ws.rel(&self.paths.iteration_file(k, "analysis.md"));
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
        let mut meta_extra = Extra::new();
        meta_extra.insert("strategy".into(), json!(strategy));
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
                extra: meta_extra,
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

    /// Fix attempt k: snapshot, then the agent (or a person), then what
    /// changed and what it did to the tests.
    fn execute_fix(&mut self) -> Result<()> {
        let k = self.state.current_iteration;
        let task_id = fix_task_id(k);
        if self.state.fix.as_ref().is_none_or(|f| f.iteration != k) {
            let snapshot = self.cp.snapshot()?;
            self.state.fix = Some(FixInFlight {
                iteration: k,
                snapshot,
                started_at: now(),
                observed: false,
                commit_paths: Vec::new(),
                touched_tests: false,
                rejected: None,
            });
            self.set_task_status(&task_id, TaskStatus::InProgress, "fix started")?;
            self.save()?;
        }
        let Some(agent) = self.fix_agent.clone() else {
            if self.state.status == LoopStatus::AwaitingFix {
                // Resuming without having changed anything is not a fix
                // attempt: say so and keep waiting, no iteration spent.
                let snapshot = self.state.fix.as_ref().and_then(|f| f.snapshot.clone());
                if let Some(snap) = snapshot
                    && self.cp.changed_since(&snap)?.is_empty()
                {
                    return self.await_manual_fix(k, true);
                }
                return self.observe_fix(k, None);
            }
            return self.await_manual_fix(k, false);
        };
        agents::ensure_budget(&self.load_history()?, self.config.agents.max_cost_usd)?;
        let task = self
            .task(&task_id)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("{task_id} is missing")))?;
        let spec = self.task_path(&task_id);
        let base_n = self.state.baseline_run.unwrap_or(k);
        let baseline = self.load_results(base_n)?;
        let strategy = self
            .state
            .selected_strategy
            .unwrap_or(Strategy::Conservative);
        let command = self.detect().ok().map(|d| d.command);
        let prompt = agents::prompts::fix(
            &self.renderer,
            &agents::prompts::FixPrompt {
                session_id: &self.paths.id,
                task: &task,
                task_path: &self.agent_rel(&spec),
                strategy,
                test_command: command.as_deref(),
                failures: &baseline.failures,
            },
        )?;
        let log_path = self.log_path(base_n);
        let log_text = self.log_text(&log_path);
        let vars = self.vars(k, &spec, Some((&log_text, &log_path)), baseline.exit_code);
        let files = CallFiles::fix(&self.paths, k);
        let spinner = self
            .out
            .spinner(format!("Iteration {k} · fix by {}", agent.name));
        let root = self.root.clone();
        let call = self.with_child(|on_spawn| {
            agents::invoke(
                &Invocation {
                    agent: &agent,
                    role: Role::Fix,
                    prompt: &prompt,
                    vars: &vars,
                    files: &files,
                    cwd: &root,
                    env: &[],
                },
                on_spawn,
            )
        })?;
        drop(spinner);
        let call = call?;
        pause_if_stopped(&call, &format!("fixing iteration {k}"), FIX_AGENT_MISSING)?;
        self.observe_fix(k, Some(call))
    }

    /// Manual mode: the analysis and IMPL-fix-k are written; wait for a
    /// person (exit 3).
    fn await_manual_fix(&mut self, k: u32, unchanged: bool) -> Result<()> {
        self.state.status = LoopStatus::AwaitingFix;
        self.session.status = SessionStatus::AwaitingFix;
        self.save_session()?;
        self.save()?;
        let task_id = fix_task_id(k);
        let task_file = self.ws.rel(&self.task_path(&task_id));
        let analysis = self.ws.rel(&self.paths.iteration_file(k, "analysis.md"));
        let failures = self.ws.rel(&self.paths.iteration_file(k, "failures.json"));
        let points: Vec<String> = self
            .task(&task_id)
            .and_then(|t| t.context.fix_strategy.as_ref())
            .map(|s| {
                s.modification_points
                    .iter()
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let failing = self
            .record(self.state.baseline_run.unwrap_or(k))
            .map_or(0, |r| r.failed);
        let nothing_yet = if unchanged {
            "No file has changed since the fix task was written; nothing was retested.\n"
        } else {
            ""
        };
        Err(Error::Paused(format!(
            "{nothing_yet}Iteration {k}: waiting for your fix (manual mode).\n  {failing} failing test(s): {failures}\n  Analysis: {analysis}\n  Fix task: {task_file}{}\nChange the code (not the tests), then continue with:\n  wfx test-cycle-execute --resume-session={}",
            if points.is_empty() {
                String::new()
            } else {
                format!("\n  Where to look: {}", points.join(", "))
            },
            self.paths.id
        )))
    }

    /// What fix k changed since its snapshot, checked against the test-edit
    /// policy, recorded in fix-history.json; then the retest.
    fn observe_fix(&mut self, k: u32, call: Option<agents::CallRecord>) -> Result<()> {
        let task_id = fix_task_id(k);
        let mut fix = self
            .state
            .fix
            .clone()
            .ok_or_else(|| Error::Internal("no fix in flight".into()))?;
        let (changes, diffstat) = match &fix.snapshot {
            Some(s) => (self.cp.changed_since(s)?, self.cp.diffstat(s)?),
            None => (Vec::new(), Default::default()),
        };
        let files_changed = crate::git::change_paths(&changes);
        let commit_paths = self.cp.commit_paths(&changes)?;
        let mut edits: Vec<TestEdit> = Vec::new();
        if let Some(snapshot) = &fix.snapshot {
            for path in &files_changed {
                if !guard::is_inspected(path) {
                    continue;
                }
                let v = self.cp.file_versions(snapshot, path)?;
                let before = v.before.as_deref().map(String::from_utf8_lossy);
                let after = v.after.as_deref().map(String::from_utf8_lossy);
                edits.extend(guard::inspect(path, before.as_deref(), after.as_deref()));
            }
        }
        let policy = &self.config.cycle.test_edits;
        let edits = guard::recorded(edits, policy);
        let rejected = guard::rejection(&edits, policy);
        fix.observed = true;
        fix.touched_tests = files_changed
            .iter()
            .any(|p| agents::builtin::is_test_path(p));
        fix.commit_paths = commit_paths;
        fix.rejected = rejected.clone();

        let base_n = self.state.baseline_run.unwrap_or(k);
        let before = self.record(base_n).map(|r| r.pass_rate);
        let agent = self.fix_agent_name();
        let duration_ms = call.as_ref().map_or_else(
            || (now() - fix.started_at).num_milliseconds().max(0) as u64,
            |c| c.duration_ms,
        );
        let attempt = FixAttempt {
            iteration: k,
            fix_task: task_id.clone(),
            agent: agent.clone(),
            strategy: self.state.selected_strategy,
            started_at: fix.started_at,
            duration_ms,
            exit_code: call.as_ref().and_then(|c| c.exit_code),
            timed_out: call.as_ref().is_some_and(|c| c.timed_out),
            cost_usd: call.as_ref().and_then(|c| c.cost_usd),
            turns: call.as_ref().and_then(|c| c.turns),
            files_changed: files_changed.clone(),
            diffstat: Diffstat {
                files: diffstat.files as u32,
                insertions: diffstat.insertions as u32,
                deletions: diffstat.deletions as u32,
            },
            test_edits: edits.clone(),
            pass_rate_before: before,
            pass_rate_after: None,
            outcome: "pending".into(),
            commit: None,
            extra: Extra::new(),
        };
        let mut h = self.load_history()?;
        h.entries.retain(|e| e.iteration != k);
        h.entries.push(attempt);
        h.entries.sort_by_key(|e| e.iteration);
        if let Some(c) = &call {
            let outcome = if c.timed_out {
                "timeout"
            } else if c.failed() {
                "failed"
            } else {
                "completed"
            };
            let mut a = c.to_artifact(Some(k), Some(&task_id), outcome);
            self.fix_call_paths(&mut a);
            h.agent_calls
                .retain(|x| !(x.role == "fix" && x.iteration == Some(k)));
            h.agent_calls.push(a);
        }
        self.save_history(&h)?;
        if let Some(mut task) = self.task(&task_id).cloned() {
            let result = task.result.get_or_insert_with(TaskResult::default);
            result.files_modified = files_changed.clone();
            result.summary = match &call {
                Some(c) if c.failed() => format!(
                    "{agent} ended with {} after {}; {} file(s) changed",
                    c.error_kind.map_or("an error", |e| e.as_str()),
                    duration_text(Duration::from_millis(c.duration_ms)),
                    files_changed.len()
                ),
                _ => format!("{agent} changed {} file(s)", files_changed.len()),
            };
            self.put_task(task)?;
        }

        let strategy = self
            .state
            .selected_strategy
            .map_or("-".to_string(), |s| s.to_string());
        let failing = self.record(base_n).map_or(0, |r| r.failed);
        let how = match &call {
            Some(c) => format!(
                "fix by {agent} {}{}{}",
                duration_text(Duration::from_millis(c.duration_ms)),
                cost_text(c.cost_usd),
                if c.timed_out {
                    " (timed out)".to_string()
                } else if c.failed() {
                    format!(" (failed: {})", c.error_message.clone().unwrap_or_default())
                } else {
                    String::new()
                }
            ),
            None => "fix by hand".to_string(),
        };
        let earlier = base_n
            .checked_sub(1)
            .and_then(|p| self.record(p))
            .map(|r| r.pass_rate);
        self.out.event(
            "fix",
            format!(
                "Iteration {k} · {}{} · {strategy} · {failing} failing · {how} · {} file(s) changed",
                before.map_or("-".to_string(), |p| format!("{p:.1}%")),
                before.map_or(String::new(), |p| decide::delta_text(earlier, p)),
                files_changed.len(),
            ),
            json!({
                "iteration": k,
                "agent": agent,
                "strategy": self.state.selected_strategy,
                "duration_ms": duration_ms,
                "exit_code": call.as_ref().and_then(|c| c.exit_code),
                "timed_out": call.as_ref().is_some_and(|c| c.timed_out),
                "cost_usd": call.as_ref().and_then(|c| c.cost_usd),
                "files_changed": files_changed,
                "test_edits": edits,
            }),
        );
        if files_changed.is_empty() {
            self.out.warn(format!(
                "Iteration {k}: the fix changed no file; retesting as is"
            ));
        }
        if let Some(why) = &rejected {
            self.out.event(
                "test_edits",
                format!("Iteration {k} · the fix edited the tests: {why}"),
                json!({ "iteration": k, "rejected": why, "test_edits": edits }),
            );
        }
        self.state.fix = Some(fix);
        self.state.status = LoopStatus::Running;
        if self.session.status != SessionStatus::Active {
            self.session.status = SessionStatus::Active;
            self.save_session()?;
        }
        self.state.next_action = NextAction::Retest;
        self.save()?;
        self.write_todo()
    }

    /// Run k+1 after fix k: the failing and affected tests (merged over
    /// the baseline), or the whole suite.
    fn retest(&mut self) -> Result<()> {
        let k = self.state.current_iteration;
        let n = k + 1;
        let base_n = self.state.baseline_run.unwrap_or(k);
        let baseline = self.load_results(base_n)?;
        let fix = self.state.fix.clone().unwrap_or(FixInFlight {
            iteration: k,
            snapshot: None,
            started_at: now(),
            observed: true,
            commit_paths: Vec::new(),
            touched_tests: false,
            rejected: None,
        });
        let affected = self
            .task(&fix_task_id(k))
            .and_then(|t| t.context.fix_strategy.as_ref())
            .map(|s| s.test_execution.affected_tests.clone())
            .unwrap_or_default();
        let detected = self.detect()?;
        let can_filter =
            testing::select::filter_args(detected.framework, &["x".to_string()]).is_some();
        let scope = decide::retest_scope(&RetestInput {
            progressive: self.config.cycle.progressive,
            can_filter,
            touched_tests: fix.touched_tests,
            baseline: &baseline,
            affected: &affected,
        });
        let started = now();
        let log = self.log_path(n);
        let (subset, label) = match scope {
            // A name the runner reported twice (`x`, `x#2`) cannot be
            // filtered to one of them: the full suite (DESIGN.md §10.4).
            RetestScope::Subset(ids)
                if testing::retest::duplicated_in(&baseline, &ids).is_some() =>
            {
                (
                    None,
                    "the full suite (a selected test shares its name with another)".to_string(),
                )
            }
            RetestScope::Subset(ids) => {
                let label = format!("{} affected test(s)", ids.len());
                (Some(ids), label)
            }
            RetestScope::Full(why) => (None, format!("the full suite ({why})")),
        };
        let selected = subset.clone().unwrap_or_default();
        let results = self.run_suite(n, subset, Some(&baseline), log.clone(), &label)?;
        self.link_latest_log(&log)?;
        // A subset merges over the baseline by test id; one that could not
        // judge anything (could not run, parsed nothing, a selected test
        // missing) is never a regression: the full suite runs instead.
        let mut label = label;
        let merged = if results.scope == crate::artifacts::test_results::Scope::Affected {
            match testing::merge_tier(&baseline, &selected, &results) {
                TierResult::Merged { results, .. } => *results,
                TierResult::Escalate(why) => {
                    self.out.warn(format!(
                        "Iteration {n}: the subset run {why}; running the full suite"
                    ));
                    let kept = self.paths.iteration_file(n, "subset-test-output.log");
                    if log.exists() {
                        std::fs::rename(&log, &kept).map_err(|e| Error::io(&kept, e))?;
                    }
                    label = format!("the full suite (the subset run {why})");
                    let full = self.run_suite(n, None, Some(&baseline), log.clone(), &label)?;
                    self.link_latest_log(&log)?;
                    full
                }
            }
        } else {
            results
        };
        self.settle(n, base_n, &baseline, merged, started, &label)
    }

    /// The full suite after an all-passing affected retest: only a full
    /// run can complete the session.
    fn final_validation(&mut self) -> Result<()> {
        let n = self
            .state
            .iterations
            .last()
            .map(|r| r.iteration)
            .ok_or_else(|| Error::Internal("final validation without a run".into()))?;
        let started = self.record(n).map_or_else(now, |r| r.started_at);
        let base_n = self.state.baseline_run.unwrap_or(n - 1);
        let baseline = self.load_results(base_n)?;
        let log = self.log_path(n);
        let results = self.run_suite(n, None, Some(&baseline), log.clone(), "final validation")?;
        self.link_latest_log(&log)?;
        self.settle(
            n,
            base_n,
            &baseline,
            results,
            started,
            "final validation, full suite",
        )
    }

    /// Judge run n (the fix k = n-1 under test) against the baseline: flaky
    /// re-run, regression, test edits, verdict; record it, settle fix k and
    /// decide what comes next — all in one state write.
    fn settle(
        &mut self,
        n: u32,
        base_n: u32,
        baseline: &TestResults,
        mut merged: TestResults,
        started: Timestamp,
        label: &str,
    ) -> Result<()> {
        let k = n - 1;
        let fix_task = fix_task_id(k);
        if let Some(overrides) = self
            .task(&fix_task)
            .and_then(|t| t.context.fix_strategy.as_ref())
            .and_then(|s| s.criticality_overrides.clone())
        {
            decide::apply_overrides(&mut merged.failures, &overrides);
        }
        let base_failing: Vec<String> = baseline.failures.iter().map(|f| f.test.clone()).collect();
        let cur_failing: Vec<String> = merged.failures.iter().map(|f| f.test.clone()).collect();
        let new = decide::new_failures(&base_failing, &cur_failing);
        self.flaky_check(n, &mut merged, &new)?;
        self.store_results(n, &merged)?;
        let base_rec = self
            .record(base_n)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("run {base_n} is not recorded")))?;
        let regression = decide::regression(
            &base_rec,
            testing::results::pass_rate_without_flaky(&merged),
            merged.total,
            &self.limits,
        );
        let verdict = decide::verdict(&merged, &self.limits);
        let fix = self.state.fix.clone();
        let has_fix_to_undo =
            self.cp.is_repo() && fix.as_ref().is_some_and(|f| !f.commit_paths.is_empty());
        let mut rec = self.new_record(n, started, &merged, new);
        rec.result = Some(decide::run_result(
            Some(base_rec.pass_rate),
            merged.pass_rate,
            verdict,
            regression.is_some(),
        ));
        let mut runs = self.state.iterations.clone();
        runs.retain(|r| r.iteration != n);
        runs.push(rec.clone());
        let history = self.load_history()?;
        let decision = decide::after_run(
            &RunFacts {
                verdict,
                regression: regression.clone(),
                rejected_test_edits: fix.as_ref().and_then(|f| f.rejected.clone()),
                has_fix_to_undo,
                fix_attempts_done: history.entries.len() as u32,
                no_progress: decide::no_progress(&runs, self.limits.no_progress_limit),
                cost_cap_reached: agents::cost_cap_reached(
                    &history,
                    0.0,
                    self.config.agents.max_cost_usd,
                ),
            },
            &self.limits,
        );
        self.report_run(&rec, Some(base_rec.pass_rate), label, &merged);
        if decision == AfterRun::FinalValidation {
            self.put_record(rec);
            self.state.next_action = NextAction::FinalValidation;
            self.save()?;
            self.write_iteration_summary(n)?;
            return self.write_todo();
        }
        rec.completed_at = Some(now());
        let result = rec.result.unwrap_or(IterationResult::NoChange);
        self.put_record(rec);
        self.state.best_pass_rate = Some(
            self.state
                .best_pass_rate
                .map_or(merged.pass_rate, |b| b.max(merged.pass_rate)),
        );

        // Settle fix k.
        let rolling_back = matches!(decision, AfterRun::Rollback { .. });
        let rejected = fix.as_ref().and_then(|f| f.rejected.clone());
        let outcome = decide::fix_outcome(result, rejected.is_some() && rolling_back, rolling_back);
        let mut h = history;
        if let Some(e) = h.entries.iter_mut().find(|e| e.iteration == k) {
            e.pass_rate_after = Some(merged.pass_rate);
            e.outcome = outcome.to_string();
            if let Some(decide::Regression::TestsRemoved { from, to }) = &regression
                && !e
                    .test_edits
                    .iter()
                    .any(|t| t.kind == TestEditKind::CountDropped)
            {
                e.test_edits.push(TestEdit {
                    kind: TestEditKind::CountDropped,
                    file: String::new(),
                    detail: format!("{from} → {to} tests in the suite"),
                });
            }
        }
        self.save_history(&h)?;
        if self.task(&fix_task).is_some() {
            let status = if decide::fix_succeeded(outcome) {
                TaskStatus::Completed
            } else {
                TaskStatus::Failed
            };
            self.set_task_status(
                &fix_task,
                status,
                &format!("run {n}: {:.1}% ({outcome})", merged.pass_rate),
            )?;
            self.write_task_summary(&fix_task)?;
        }
        let strategy = self
            .record(k)
            .and_then(|r| r.strategy)
            .or(self.state.selected_strategy)
            .unwrap_or(Strategy::Conservative);
        if let Some(f) = &fix
            && self.cp.is_repo()
            && !f.commit_paths.is_empty()
        {
            self.state.pending_commit = Some(PendingCommit {
                kind: "fix".into(),
                iteration: k,
                message: decide::fix_commit_message(
                    k,
                    strategy,
                    base_rec.pass_rate,
                    merged.pass_rate,
                ),
                paths: f.commit_paths.clone(),
            });
        }
        if rolling_back {
            let cause = match (rejected, regression) {
                (Some(why), _) => RollbackCause::TestEdits(short(&why, 120)),
                (None, Some(r)) => RollbackCause::Regression(r),
                (None, None) => RollbackCause::TestEdits("rejected".into()),
            };
            self.state.pending_rollback = Some(PendingCommit {
                kind: "rollback".into(),
                iteration: k,
                message: decide::rollback_commit_message(
                    k,
                    &cause,
                    base_rec.pass_rate,
                    merged.pass_rate,
                ),
                paths: Vec::new(),
            });
        } else {
            self.state.baseline_run = Some(n);
        }
        self.apply(decision, n)?;
        self.save()?;
        self.write_iteration_summary(k)?;
        self.write_iteration_summary(n)?;
        self.write_todo()
    }

    /// Make the decided checkpoint commit (idempotent by its trailers).
    fn make_pending_commit(&mut self) -> Result<()> {
        let Some(pc) = self.state.pending_commit.clone() else {
            return Ok(());
        };
        let session_dir = self.session_dir_for_commit();
        let outcome = self.cp.commit_checkpoint(
            &pc.paths,
            session_dir.as_deref(),
            &pc.message,
            &Trailers::new(self.paths.id.clone(), pc.iteration, CommitKind::Fix),
        )?;
        let id = outcome.id().map(str::to_string);
        match pc.kind.as_str() {
            "fix" => {
                if let Some(rec) = self.record_mut(pc.iteration) {
                    rec.fix_commit = id.clone();
                }
                let mut h = self.load_history()?;
                if let Some(e) = h.entries.iter_mut().find(|e| e.iteration == pc.iteration) {
                    e.commit = id.clone();
                }
                self.save_history(&h)?;
            }
            _ => {
                if let Some(c) = &id {
                    self.state.extra.insert("tests_commit".into(), json!(c));
                }
            }
        }
        self.state.pending_commit = None;
        self.save()?;
        if pc.kind == "fix" {
            self.write_iteration_summary(pc.iteration)?;
        }
        if let Some(c) = &id {
            self.out.event(
                "commit",
                format!("Committed {} {}", &c[..c.len().min(10)], pc.message),
                json!({ "commit": c, "message": pc.message, "iteration": pc.iteration, "kind": pc.kind }),
            );
        }
        Ok(())
    }

    /// Revert fix k's commit (idempotent by trailers), then another attempt
    /// or a block.
    fn rollback(&mut self) -> Result<()> {
        let Some(rb) = self.state.pending_rollback.clone() else {
            return Err(Error::Internal(
                "rollback without a decided rollback".into(),
            ));
        };
        let k = rb.iteration;
        let n = k + 1;
        let fix_commit = self.record(k).and_then(|r| r.fix_commit.clone());
        let mut revert_id = None;
        if let Some(commit) = fix_commit
            && self.cp.is_repo()
        {
            let session_dir = self.session_dir_for_commit();
            let outcome = self
                .cp
                .revert(
                    &commit,
                    session_dir.as_deref(),
                    &rb.message,
                    &Trailers::new(self.paths.id.clone(), k, CommitKind::Rollback),
                )
                .map_err(|e| match e {
                    Error::Git(msg) => {
                        Error::Blocked(format!("cannot roll back iteration {k}: {msg}"))
                    }
                    other => other,
                })?;
            revert_id = outcome.id().map(str::to_string);
        }
        // The run that measured the undone fix is the one rolled back.
        if let Some(rec) = self.record_mut(n) {
            rec.result = Some(IterationResult::RolledBack);
            rec.rollback_commit = revert_id.clone();
        }
        let mut h = self.load_history()?;
        if let Some(e) = h.entries.iter_mut().find(|e| e.iteration == k)
            && let Some(c) = &revert_id
        {
            e.extra.insert("rollback_commit".into(), json!(c));
        }
        self.save_history(&h)?;
        self.out.event(
            "rollback",
            format!(
                "Rolled back iteration {k}{}: {} · next strategy: surgical",
                revert_id
                    .as_ref()
                    .map_or(String::new(), |c| format!(" ({})", &c[..c.len().min(10)])),
                rb.message
            ),
            json!({ "iteration": k, "commit": revert_id, "message": rb.message }),
        );
        self.state.pending_rollback = None;
        self.state.fix = None;
        let decision = decide::after_rollback(
            h.entries.len() as u32,
            decide::no_progress(&self.state.iterations, self.limits.no_progress_limit),
            agents::cost_cap_reached(&h, 0.0, self.config.agents.max_cost_usd),
            &self.limits,
        );
        self.apply(decision, n)?;
        self.save()?;
        self.write_iteration_summary(k)?;
        self.write_iteration_summary(n)?;
        self.write_todo()
    }

    /// Full or partial success: statuses, summaries, then the archive and
    /// the final commit.
    fn complete(&mut self) -> Result<()> {
        let last = self
            .state
            .iterations
            .last()
            .cloned()
            .ok_or_else(|| Error::Internal("completion without a run".into()))?;
        let partial = last.result == Some(IterationResult::PartialSuccess);
        let attempts = self.fix_attempts_done();
        let summary = if partial {
            format!(
                "Partial success: {:.1}% ({}/{} passed) on the full suite after {attempts} fix attempt(s); every remaining failure is of low criticality",
                last.pass_rate, last.passed, last.total
            )
        } else {
            format!(
                "Full success: all {} tests pass on the full suite after {attempts} fix attempt(s)",
                last.passed
            )
        };
        if let Some(mut t) = self.task(LOOP_TASK).cloned() {
            let r = t.result.get_or_insert_with(TaskResult::default);
            r.summary = summary.clone();
            let mut files: Vec<String> = self
                .load_history()?
                .entries
                .iter()
                .filter(|e| decide::fix_succeeded(&e.outcome))
                .flat_map(|e| e.files_changed.clone())
                .collect();
            files.sort();
            files.dedup();
            r.files_modified = files;
            self.put_task(t)?;
        }
        self.set_task_status(LOOP_TASK, TaskStatus::Completed, &summary)?;
        self.write_task_summary(LOOP_TASK)?;
        let now = now();
        self.state.status = if partial {
            LoopStatus::PartialSuccess
        } else {
            LoopStatus::Completed
        };
        self.state.next_action = NextAction::None;
        self.session.status = if partial {
            SessionStatus::PartialSuccess
        } else {
            SessionStatus::Completed
        };
        self.session.completed_at = Some(now);
        if let Some(p) = self.session.phase_mut(5) {
            p.status = PhaseStatus::Completed;
            p.completed_at = Some(now);
        }
        self.save_session()?;
        self.write_todo()?;
        self.save()
    }

    /// A stop that needs a person: report, statuses, next action `none`.
    pub fn block(&mut self, reason: &str) -> Result<()> {
        let now = now();
        self.state.status = LoopStatus::Blocked;
        self.state.blocked_reason = Some(reason.to_string());
        self.state.next_action = NextAction::None;
        let history = self.load_history()?;
        let text = report::failure_report(self, reason, &history)?;
        files::write_view(&self.paths.failure_report(), text.as_bytes())?;
        let current = self.state.current_task.clone().unwrap_or_default();
        for id in [current.as_str(), LOOP_TASK] {
            if self.task(id).is_some_and(|t| {
                !matches!(
                    t.status,
                    TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::Failed
                )
            }) {
                self.set_task_status(id, TaskStatus::Blocked, reason)?;
                self.write_task_summary(id)?;
            }
        }
        self.session.status = SessionStatus::Blocked;
        if let Some(p) = self.session.phase_mut(5) {
            p.status = PhaseStatus::Failed;
            p.completed_at = Some(now);
        }
        self.save_session()?;
        self.write_todo()?;
        self.save()?;
        self.out.event(
            "blocked",
            format!("{} {reason}", self.out.red("Blocked:")),
            json!({ "reason": reason }),
        );
        Ok(())
    }

    /// A blocked session resumed by a person (`wfx session resume`): one
    /// more round, if the limit allows.
    fn reopen(&mut self) -> Result<()> {
        let attempts = self.fix_attempts_done();
        if self.state.iterations.is_empty() {
            self.state.next_action = NextAction::ExecuteTask;
        } else {
            if attempts >= self.limits.max_iterations {
                return Err(Error::usage(format!(
                    "{}: {attempts} fix attempts were made and the limit is {}; raise it with --max-iterations",
                    self.paths.id, self.limits.max_iterations
                )));
            }
            self.state.current_iteration = self.state.iterations.last().map_or(1, |r| r.iteration);
            self.state.fix = None;
            self.state.next_action = NextAction::AnalyzeFailures;
        }
        self.state.status = LoopStatus::Running;
        self.state.blocked_reason = None;
        for id in [
            self.state.current_task.clone().unwrap_or_default(),
            LOOP_TASK.to_string(),
        ] {
            if self
                .task(&id)
                .is_some_and(|t| t.status == TaskStatus::Blocked)
            {
                self.set_task_status(&id, TaskStatus::InProgress, "resumed by a person")?;
            }
        }
        Ok(())
    }

    /// Ctrl-C, an unavailable agent or a manual fix: state saved, exit 3.
    fn pause(&mut self, msg: String) -> Result<CycleOutcome> {
        let awaiting = self.state.status == LoopStatus::AwaitingFix;
        if !awaiting {
            self.state.status = LoopStatus::Paused;
            self.session.status = SessionStatus::Paused;
            self.save_session()?;
            self.save()?;
        }
        self.write_todo()?;
        let id = self.paths.id.clone();
        let resume = format!("wfx test-cycle-execute --resume-session={id}");
        let mut lines: Vec<String> = msg.lines().map(str::to_string).collect();
        if !awaiting {
            lines.push(format!("Paused. Continue with: {resume}"));
        }
        let (event, status) = if awaiting {
            ("awaiting_fix", SessionStatus::AwaitingFix)
        } else {
            ("paused", SessionStatus::Paused)
        };
        self.out.event(event, "", json!({ "message": msg }));
        Ok(CycleOutcome {
            session_id: id.clone(),
            status,
            exit: Exit::Paused,
            lines,
            fields: json!({
                "next_action": self.state.next_action.as_str(),
                "resume_command": resume,
                "message": msg,
                "iteration": self.state.current_iteration,
            }),
        })
    }

    /// The loop has nothing left to do: finish a completed session (archive
    /// and final commit, both idempotent) or report the block.
    fn finish(&mut self) -> Result<CycleOutcome> {
        match self.state.status {
            LoopStatus::Completed | LoopStatus::PartialSuccess => self.finalize(),
            LoopStatus::Blocked => Ok(self.blocked_outcome(true)),
            _ => Err(Error::Internal(format!(
                "next_action is none but the loop is {:?}",
                self.state.status
            ))),
        }
    }

    fn blocked_outcome(&self, just_now: bool) -> CycleOutcome {
        let id = &self.paths.id;
        let reason = self.state.blocked_reason.clone().unwrap_or_default();
        let report = self.ws.rel(&self.paths.failure_report());
        let resume = format!(
            "wfx session resume {id} && wfx test-cycle-execute --resume-session={id} --max-iterations={}",
            self.limits.max_iterations.max(self.fix_attempts_done()) + 2
        );
        let mut lines = vec![format!(
            "Session {id} is blocked{}: {reason}",
            if just_now { "" } else { " (nothing was run)" }
        )];
        if let Some(last) = self.state.iterations.last() {
            lines.push(format!(
                "Last run: iteration {} · {:.1}% ({}/{} passed)",
                last.iteration, last.pass_rate, last.passed, last.total
            ));
        }
        lines.push(format!("Report: {report}"));
        lines.push(format!("To try again: {resume}"));
        CycleOutcome {
            session_id: id.clone(),
            status: SessionStatus::Blocked,
            exit: Exit::Failed,
            lines,
            fields: json!({
                "reason": reason,
                "report": report,
                "resume_command": resume,
                "pass_rate": self.state.iterations.last().map(|r| r.pass_rate),
                "iterations": self.state.iterations.len(),
                "fix_attempts": self.fix_attempts_done(),
            }),
        }
    }

    /// Archive the session (active → archives, manifest) and make the
    /// final commit with the summary and the move. Both are idempotent, so
    /// a run killed half-way finishes here on resume.
    fn finalize(&mut self) -> Result<CycleOutcome> {
        let id = self.paths.id.clone();
        let active = self.ws.active(&id);
        let archived = self.ws.archived(&id);
        // Idempotent: also records a move that a killed run left without
        // its manifest entry.
        self.ws.archive(&id)?;
        self.paths = archived.clone();
        self.location = Location::Archived;
        let last = self.state.iterations.last().cloned();
        let partial = self.state.status == LoopStatus::PartialSuccess;
        let attempts = self.fix_attempts_done();
        let pass = last.as_ref().map_or(0.0, |r| r.pass_rate);
        let mut commit = None;
        if self.cp.is_repo() && !self.worktree {
            let subject = format!(
                "test-cycle: session {id} {} (pass: {pass:.1}%, {attempts} fix attempt(s))",
                if partial {
                    "partial success"
                } else {
                    "completed"
                }
            );
            let mut body = vec![String::new()];
            for r in &self.state.iterations {
                body.push(format!(
                    "- iteration {}: {:.1}% ({}/{} passed){}",
                    r.iteration,
                    r.pass_rate,
                    r.passed,
                    r.total,
                    r.strategy.map_or(String::new(), |s| format!(", {s}"))
                ));
            }
            body.push(String::new());
            body.push(format!("Archived to {}", self.ws.rel(&archived.dir)));
            let message = format!("{subject}\n{}", body.join("\n"));
            let outcome = self.cp.commit_checkpoint(
                &[
                    self.ws.rel(&active.dir),
                    self.ws.rel(&self.ws.manifest_path()),
                ],
                Some(&self.ws.rel(&archived.dir)),
                &message,
                &Trailers::new(
                    id.clone(),
                    last.as_ref().map_or(0, |r| r.iteration),
                    CommitKind::Final,
                ),
            )?;
            commit = outcome.id().map(str::to_string);
        }
        let archive_rel = self.ws.rel(&archived.dir);
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
        self.out.event(
            "complete",
            format!(
                "{} {id} · {pass:.1}%",
                self.out.green(if partial {
                    "Partial success:"
                } else {
                    "Completed:"
                })
            ),
            json!({ "status": status, "pass_rate": pass }),
        );
        Ok(CycleOutcome {
            session_id: id,
            status,
            exit: Exit::Success,
            lines,
            fields: json!({
                "pass_rate": pass,
                "iterations": self.state.iterations.len(),
                "fix_attempts": attempts,
                "archive": archive_rel,
                "final_commit": commit,
            }),
        })
    }
}

/// At most `max` characters.
fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// What to do about a missing fix agent, for the pause message.
pub(super) const FIX_AGENT_MISSING: &str = "the fix agent {agent} is not available: {error}; install it, or continue by hand with --fix-agent manual";

/// An agent call cut off by Ctrl-C, or whose agent is not installed, pauses
/// the session (exit 3, resumable) instead of counting as an attempt.
/// `missing` names `{agent}` and `{error}`.
pub(super) fn pause_if_stopped(
    call: &agents::CallRecord,
    doing: &str,
    missing: &str,
) -> Result<()> {
    if call.interrupted {
        return Err(Error::Paused(format!(
            "interrupted while {} was {doing}",
            call.agent
        )));
    }
    if call.error_kind == Some(agents::ErrorKind::Unavailable) {
        return Err(Error::Paused(
            missing
                .replace("{agent}", &call.agent)
                .replace("{error}", call.error_message.as_deref().unwrap_or_default()),
        ));
    }
    Ok(())
}
