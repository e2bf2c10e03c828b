//! The `wfx run` machine (DESIGN.md §8, §10.1): a YAML workflow's steps
//! and `test:` debug loops over the typed run state. `next` names the
//! effect the current step needs (a shell command, a claude call, a test
//! run, the snapshot before a debug attempt); `observe` records what
//! happened with the pure decisions of [`super::decide`]. The engine's
//! driver performs the effects and commits each step, exactly as for the
//! test-fix cycle.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::decide::{self, Next, Verdict};
use super::model::{Action, Exec, OnFailure, Step, TestSpec, Workflow};
use super::paths::RunPaths;
use crate::agents::vars::{INLINE_OUTPUT_MAX, Mode};
use crate::agents::{CallFiles, ResolvedAgent, Role, Vars};
use crate::artifacts::Timestamp;
use crate::artifacts::config::{Config, TestConfig};
use crate::artifacts::run_state::{
    AttemptOutcome, AttemptRecord, DebugRecord, RunState, RunStatus, StepKind, StepRecord,
    StepStatus, TestPhase, TestRunRecord,
};
use crate::artifacts::session::{SessionStatus, WorkflowSession};
use crate::engine::event::{AttemptEvent, Done, Event, FrontEnd, Start, StepEvent, TestRunEvent};
use crate::engine::step::{
    AgentCallDone, AgentRequest, ArchiveRequest, Before, Effect, Ending, Observation, Observed,
    PauseReason, ShellDone, ShellRequest, Snapshot, SquashRequest, Step as EngineStep, TestRequest,
    TestsRun, Text,
};
use crate::engine::txn::{Document, Durability};
use crate::engine::{Machine, real};
use crate::error::{Exit, Result};
use crate::git::{CommitKind, Trailers};
use crate::session::Workspace;

mod speculative;

/// What a run works with that does not change while it runs.
pub struct RunMachine {
    pub ws: Workspace,
    pub wf: Workflow,
    pub paths: RunPaths,
    /// The workflow file as the user named it (for the resume hint).
    pub file_arg: String,
    /// The workflow file relative to the project root.
    pub file: String,
    pub config: Config,
    pub claude: Option<ResolvedAgent>,
    /// Commits can be checked (a git repository).
    pub repo: bool,
}

/// The state of one `wfx run` session.
#[derive(Debug, Clone)]
pub struct RunSession {
    /// `.process/run-state.json`: the step's commit point.
    pub state: RunState,
    /// `workflow-session.json`.
    pub session: WorkflowSession,
    /// Why this run stopped, once it did.
    pub stop: Option<RunStop>,
    pub now: Timestamp,
    pub outbox: Vec<RunDoc>,
    /// The start of test logs seen in this run, by their relative path
    /// (for `${<id>.output}`).
    pub output_heads: BTreeMap<String, String>,
    /// The finished run was moved to `archives/` (DESIGN.md §10.7).
    pub archived: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunStop {
    Paused(PauseReason),
    /// Every step ran, or one stopped the run (the run state says which).
    Finished,
}

/// A document a step changed.
#[derive(Debug, Clone, PartialEq)]
pub enum RunDoc {
    State,
    Session,
    /// `attempt.json` of (step, attempt).
    Attempt(usize, u32),
    Raw(PathBuf, Vec<u8>, Durability),
}

impl RunSession {
    pub(crate) fn touch(&mut self, doc: RunDoc) {
        if !self.outbox.contains(&doc) {
            self.outbox.push(doc);
        }
    }

    fn rec(&mut self, index: usize) -> &mut StepRecord {
        &mut self.state.steps[index - 1]
    }
}

impl Machine for RunMachine {
    type State = RunSession;

    fn next(&self, s: &RunSession) -> EngineStep {
        if let Some(stop) = &s.stop {
            // A finished run is archived like a cycle session; a paused one
            // stays in active/ for `--resume`.
            if *stop == RunStop::Finished && !s.archived {
                return EngineStep::Do(Effect::Archive(ArchiveRequest {
                    session_id: s.state.session_id.clone(),
                    commit: None,
                    squash: self.squash_request(s),
                }));
            }
            return EngineStep::End(self.ending(s, stop));
        }
        if s.state.current_step > self.wf.steps.len() || !s.state.status.is_unfinished() {
            return EngineStep::Do(Effect::Update);
        }
        let step = &self.wf.steps[s.state.current_step - 1];
        match &step.action {
            Action::Run(exec) => self.next_exec(s, step, exec),
            Action::Test(t) => self.next_test(s, step, t),
        }
    }

    fn observe(&self, s: &mut RunSession, obs: Observation) -> Vec<Event> {
        s.now = obs.at;
        let mut out = Vec::new();
        match obs.what {
            Observed::Start { resumed } => self.start(s, resumed, &mut out),
            Observed::Paused(reason) => self.pause(s, reason, &mut out),
            Observed::Blocked(reason) => {
                let index = s.state.current_step;
                self.fail_step(s, index, reason, &mut out);
            }
            Observed::Updated if s.state.current_step > self.wf.steps.len() => {
                self.finish(s, &mut out)
            }
            Observed::Archived { .. } => {
                s.archived = true;
                if let Some(why) = &s.session.git.foreign_commits
                    && self.squash_due(s)
                {
                    out.push(Event::warning(format!(
                        "git.squash: the session's commits are left as they are: {why}; squashing would rewrite commits that are not the run's"
                    )));
                }
            }
            what => {
                let index = s.state.current_step;
                let Some(step) = self.wf.steps.get(index - 1) else {
                    return out;
                };
                match &step.action {
                    Action::Run(exec) => self.exec_observed(s, step, exec, what, &mut out),
                    Action::Test(t) => self.test_observed(s, step, t, what, &mut out),
                }
            }
        }
        out
    }

    fn documents(&self, s: &mut RunSession) -> Result<Vec<Document>> {
        let outbox = std::mem::take(&mut s.outbox);
        let mut docs = Vec::new();
        let mut state = false;
        for doc in outbox {
            match doc {
                RunDoc::State => state = true,
                RunDoc::Session => {
                    s.session.updated_at = s.now;
                    docs.push(Document::json(
                        self.paths.session.session_json(),
                        &s.session,
                        Durability::Durable,
                    )?);
                }
                RunDoc::Attempt(index, k) => {
                    if let Some(a) = s
                        .state
                        .steps
                        .get(index - 1)
                        .and_then(|r| r.attempts.get(k as usize - 1))
                    {
                        docs.push(Document::json(
                            self.paths.attempt_dir(index, k).join("attempt.json"),
                            a,
                            Durability::Durable,
                        )?);
                    }
                }
                RunDoc::Raw(path, bytes, durability) => {
                    docs.push(Document::new(path, bytes, durability))
                }
            }
        }
        if state {
            s.state.updated_at = s.now;
            docs.push(Document::json(
                self.paths.run_state(),
                &s.state,
                Durability::State,
            )?);
        }
        Ok(docs)
    }

    fn spent_usd(&self, s: &RunSession) -> f64 {
        s.state.cost_usd
    }

    fn session_dir(&self, s: &RunSession) -> PathBuf {
        self.dir_now(s)
    }
}

impl RunMachine {
    fn rel(&self, p: &std::path::Path) -> String {
        self.ws.rel(p)
    }

    /// Variables every string of `step` may use (see docs/workflows.md).
    fn vars_for(&self, s: &RunSession, step: &Step) -> Vars {
        let mut v = Vars::new();
        for (k, val) in self
            .wf
            .env
            .iter()
            .chain(s.state.vars.iter())
            .chain(step.env.iter())
            .chain(s.state.outputs.iter())
        {
            v.set(k.clone(), val.clone());
        }
        v.set("session.id", s.state.session_id.clone());
        v.set("session.dir", self.rel(&self.paths.session.dir));
        v
    }

    /// Environment of a step's processes: the workflow's `env:`, `--var`
    /// values, the step's `env:`, then every variable as `WFX_*`.
    fn env_for(&self, s: &RunSession, step: &Step, vars: Option<&Vars>) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .wf
            .env
            .iter()
            .chain(s.state.vars.iter())
            .chain(step.env.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(v) = vars {
            env.extend(v.env());
        }
        env
    }

    fn claude(&self, timeout: Option<u64>) -> Option<ResolvedAgent> {
        let mut agent = self.claude.clone()?;
        if let Some(t) = timeout {
            agent.timeout = Duration::from_secs(t);
        }
        Some(agent)
    }

    fn resume_hint(&self) -> String {
        format!("wfx run {} --resume", self.file_arg)
    }

    // ----- start, pause, end ------------------------------------------------

    fn start(&self, s: &mut RunSession, resumed: bool, out: &mut Vec<Event>) {
        s.state.status = RunStatus::Running;
        s.state.stop_reason = None;
        s.session.status = SessionStatus::Active;
        if resumed {
            s.session.resumed_at = Some(s.now);
        }
        s.touch(RunDoc::Session);
        s.touch(RunDoc::State);
        out.push(Event::Start(Box::new(Start {
            session_id: s.state.session_id.clone(),
            front_end: FrontEnd::Run,
            resumed,
            at: super::position(&s.state, Some(&self.wf)),
            next_action: None,
            test_command: None,
            fix_agent: None,
            analysis: None,
            max_iterations: None,
            commits: self.repo,
            workflow: Some(self.file.clone()),
            steps: Some(self.wf.steps.len()),
        })));
    }

    fn pause(&self, s: &mut RunSession, reason: PauseReason, out: &mut Vec<Event>) {
        let index = s.state.current_step;
        if let Some(rec) = s.state.steps.get_mut(index.saturating_sub(1))
            && rec.status == StepStatus::Pending
        {
            rec.status = StepStatus::Running;
            rec.started_at.get_or_insert(s.now);
        }
        let text = reason.text();
        s.state.status = RunStatus::Paused;
        s.state.stop_reason = Some(text.clone());
        s.session.status = SessionStatus::Paused;
        s.touch(RunDoc::State);
        s.touch(RunDoc::Session);
        out.push(Event::Paused {
            message: self.pause_message(s, &text),
            reason: reason.clone(),
            resume_command: self.resume_hint(),
        });
        s.stop = Some(RunStop::Paused(reason));
    }

    fn pause_message(&self, s: &RunSession, reason: &str) -> String {
        format!(
            "{reason}: the run stopped at {}; state saved in {}. Continue with `{}`",
            super::position(&s.state, Some(&self.wf)),
            self.rel(&self.paths.run_state()),
            self.resume_hint()
        )
    }

    /// Every step finished (or one stopped the run): the run's status.
    fn finish(&self, s: &mut RunSession, out: &mut Vec<Event>) {
        if s.state.status.is_unfinished() {
            s.state.status = decide::final_status(&s.state.steps);
        }
        s.state.completed_at = Some(s.now);
        s.session.status = match s.state.status {
            RunStatus::Completed => SessionStatus::Completed,
            RunStatus::PartialSuccess => SessionStatus::PartialSuccess,
            _ => SessionStatus::Blocked,
        };
        s.session.completed_at = Some(s.now);
        if s.state.status == RunStatus::Failed
            && let Some(reason) = &s.state.stop_reason
        {
            out.push(Event::Blocked {
                reason: reason.clone(),
            });
        }
        s.touch(RunDoc::State);
        s.touch(RunDoc::Session);
        s.stop = Some(RunStop::Finished);
    }

    /// Where the session is now: in `archives/` once the run finished.
    fn dir_now(&self, s: &RunSession) -> PathBuf {
        if s.archived {
            self.ws.archived(&s.state.session_id).dir
        } else {
            self.paths.session.dir.clone()
        }
    }

    fn shown_dir(&self, s: &RunSession) -> String {
        self.rel(&self.dir_now(s))
    }

    pub(crate) fn ending(&self, s: &RunSession, stop: &RunStop) -> Ending {
        let session_dir = self.shown_dir(s);
        let never_passed = never_passed(&s.state);
        let (exit, status, lines, message, resume) = match stop {
            RunStop::Paused(reason) => {
                let msg = self.pause_message(s, &reason.text());
                (
                    Exit::Paused,
                    SessionStatus::Paused,
                    vec![msg.clone()],
                    Some(msg),
                    Some(self.resume_hint()),
                )
            }
            RunStop::Finished => {
                let (status, exit) = match s.state.status {
                    RunStatus::Completed => (SessionStatus::Completed, Exit::Success),
                    RunStatus::PartialSuccess => (SessionStatus::PartialSuccess, Exit::Success),
                    _ => (SessionStatus::Blocked, Exit::Failed),
                };
                (exit, status, self.summary(s), None, None)
            }
        };
        Ending {
            exit,
            lines,
            waits_for_fix: false,
            done: Done {
                session_id: s.state.session_id.clone(),
                front_end: Some(FrontEnd::Run),
                status: Some(status),
                exit_code: exit.code(),
                message,
                resume_command: resume,
                session_dir: Some(session_dir),
                run_status: Some(s.state.status.as_str().to_string()),
                stop_reason: s.state.stop_reason.clone(),
                never_passed: Some(never_passed),
                steps: serde_json::to_value(&s.state.steps).ok(),
                ..Done::default()
            },
        }
    }

    /// The summary people read on stdout: the outcome, one line per step,
    /// why it stopped, where the session is.
    /// `git.squash` (DESIGN.md §10.7): a run that succeeded folds the
    /// commits its steps made since it started into one. wfx makes none
    /// itself here, so the session's commits are those on top of the
    /// commit `HEAD` was at when the run started.
    fn squash_request(&self, s: &RunSession) -> Option<SquashRequest> {
        let base = s.session.git.base_commit.clone()?;
        (self.squash_due(s) && s.session.git.foreign_commits.is_none()).then(|| SquashRequest {
            message: self.squash_message(s),
            trailers: Trailers::new(
                s.state.session_id.clone(),
                attempts_of(&s.state),
                CommitKind::Final,
            ),
            since: Some(base),
        })
    }

    /// `git.squash` applies: a repository, the setting, a run that succeeded.
    fn squash_due(&self, s: &RunSession) -> bool {
        self.repo
            && self.config.git.squash
            && matches!(
                s.state.status,
                RunStatus::Completed | RunStatus::PartialSuccess
            )
    }

    /// The one commit's message: what the run did, step by step (the
    /// shape of the cycle's squashed commit).
    fn squash_message(&self, s: &RunSession) -> String {
        let mut lines = vec![
            format!(
                "workflow: {} {} ({} step(s), {} debug attempt(s), squashed)",
                s.state.workflow_name,
                s.state.status,
                s.state.steps.len(),
                attempts_of(&s.state)
            ),
            String::new(),
        ];
        lines.extend(self.step_lines(s).map(|l| format!("- {l}")));
        lines.join("\n")
    }

    /// One line per step: what it did and how it ended.
    fn step_lines<'a>(&'a self, s: &'a RunSession) -> impl Iterator<Item = String> + 'a {
        s.state.steps.iter().map(|r| {
            let step = self.wf.steps.get(r.index.saturating_sub(1));
            let label = step
                .map(|s| s.label())
                .unwrap_or_else(|| format!("step {}", r.index));
            decide::summary_line(r, &label, step.and_then(on_failure_of))
        })
    }

    fn summary(&self, s: &RunSession) -> Vec<String> {
        let never = never_passed(&s.state);
        let mut head = format!("workflow {}: {}", s.state.workflow_name, s.state.status);
        if !never.is_empty() {
            let steps: Vec<String> = never.iter().map(|i| i.to_string()).collect();
            head.push_str(&format!(
                " — tests of step{} {} did not pass",
                if steps.len() == 1 { "" } else { "s" },
                steps.join(", ")
            ));
        }
        let mut lines = vec![head];
        lines.extend(self.step_lines(s).map(|l| format!("  {l}")));
        if let Some(reason) = &s.state.stop_reason {
            lines.push(format!("stopped: {reason}"));
        }
        lines.push(format!("session: {}", self.shown_dir(s)));
        lines
    }

    /// The step fails and the run stops (exit 1).
    fn fail_step(&self, s: &mut RunSession, index: usize, reason: String, out: &mut Vec<Event>) {
        let Some(step) = self.wf.steps.get(index.saturating_sub(1)) else {
            return;
        };
        let label = step.label();
        let now = s.now;
        {
            let rec = s.rec(index);
            rec.status = StepStatus::Failed;
            rec.started_at.get_or_insert(now);
            rec.completed_at = Some(now);
            rec.reason = Some(reason.clone());
        }
        out.push(Event::Step(StepEvent {
            step: index,
            label: label.clone(),
            passed: false,
            exit_code: None,
            duration_ms: 0,
            reason: Some(reason.clone()),
        }));
        self.stop_run(s, format!("{label} failed: {reason}"), out);
    }

    fn stop_run(&self, s: &mut RunSession, reason: String, out: &mut Vec<Event>) {
        s.state.status = RunStatus::Failed;
        s.state.stop_reason = Some(reason);
        self.finish(s, out);
    }

    fn next_step(&self, s: &mut RunSession) {
        s.state.current_step += 1;
        s.touch(RunDoc::State);
    }

    // ----- shell and claude steps -------------------------------------------

    fn next_exec(&self, s: &RunSession, step: &Step, exec: &Exec) -> EngineStep {
        let dir = self.paths.step_dir(step.index);
        let vars = self.vars_for(s, step);
        let label = step.label();
        let inspect = step.commit_required.then_some(Before::Now);
        let outputs: Vec<(String, String)> = if step.id.is_some() {
            step.outputs
                .iter()
                .map(|o| (o.name.clone(), o.file_pattern.clone()))
                .collect()
        } else {
            Vec::new()
        };
        match exec {
            Exec::Shell(t) => EngineStep::Do(Effect::Shell(ShellRequest {
                command: Text {
                    text: t.text.clone(),
                    vars: vars.clone(),
                    mode: Some(Mode::Shell),
                    test_output: None,
                    label,
                },
                cwd: self.ws.root.clone(),
                log: dir.join("output.log"),
                command_file: Some(dir.join("command.txt")),
                env: self.env_for(s, step, Some(&vars)),
                timeout: step.timeout.map(Duration::from_secs),
                spinner: format!("{} · `{}`", step.label(), real::short(&t.text)),
                inspect,
                outputs,
            })),
            Exec::Claude(t) => {
                let Some(agent) = self.claude(step.timeout) else {
                    return EngineStep::Do(Effect::Block(
                        "a claude command ran although no claude is configured".into(),
                    ));
                };
                EngineStep::Do(Effect::Agent(AgentRequest {
                    agent: agent.clone(),
                    role: Role::Fix,
                    prompt: Text {
                        text: t.text.clone(),
                        vars: vars.clone(),
                        mode: Some(Mode::Argv),
                        test_output: None,
                        label: label.clone(),
                    },
                    files: CallFiles {
                        prompt: dir.join("claude-prompt.md"),
                        output: dir.join("claude-cli-output.txt"),
                    },
                    cwd: self.ws.root.clone(),
                    env: self.env_for(s, step, None),
                    spinner: format!("{label} · {}", agent.name),
                    doing: format!("running {label}"),
                    inspect,
                    versions_of: None,
                    outputs,
                }))
            }
        }
    }

    fn exec_observed(
        &self,
        s: &mut RunSession,
        step: &Step,
        exec: &Exec,
        what: Observed,
        out: &mut Vec<Event>,
    ) {
        let index = step.index;
        let label = step.label();
        let dir = self.paths.step_dir(index);
        let (mut ok, mut reason, exit_code, duration_ms, output_value, inspection, found);
        match (exec, what) {
            (Exec::Shell(_), Observed::Shell(done)) => {
                let ShellDone {
                    command,
                    end,
                    output_head,
                    inspection: insp,
                    outputs,
                } = *done;
                ok = end.success();
                reason = (!ok).then(|| format!("`{}` {}", real::short(&command), end.describe));
                exit_code = end.exit_code;
                duration_ms = end.duration_ms;
                let log = dir.join("output.log");
                output_value = inline_or_path(&output_head, &self.rel(&log));
                let rec = s.rec(index);
                rec.command_file = Some(self.rel(&dir.join("command.txt")));
                rec.output_file = Some(self.rel(&log));
                inspection = insp;
                found = outputs;
            }
            (Exec::Claude(_), Observed::Agent(done)) => {
                let AgentCallDone {
                    call,
                    inspection: insp,
                    outputs,
                } = *done;
                ok = !call.failed();
                reason = (!ok).then(|| {
                    format!(
                        "{} failed: {}",
                        call.agent,
                        call.error_message.clone().unwrap_or_else(|| "error".into())
                    )
                });
                exit_code = call.exit_code;
                duration_ms = call.duration_ms;
                let result_file = dir.join("claude-result.md");
                output_value = inline_or_path(&call.result_text, &self.rel(&result_file));
                s.touch(RunDoc::Raw(
                    result_file,
                    call.result_text.clone().into_bytes(),
                    Durability::View,
                ));
                if let Some(c) = call.cost_usd {
                    s.state.cost_usd += c;
                }
                let rec = s.rec(index);
                rec.command_file = Some(call.prompt_file.clone());
                rec.output_file = Some(call.output_file.clone());
                rec.cost_usd = call.cost_usd;
                rec.tamper = call.tamper;
                inspection = insp;
                found = outputs;
            }
            _ => return,
        }
        if ok && step.commit_required {
            let moved = inspection.as_ref().is_some_and(|i| i.head_moved());
            let changed = inspection.as_ref().is_some_and(|i| !i.changes.is_empty());
            if !moved && !changed {
                ok = false;
                reason =
                    Some("commit_required: the command made no commit and left no change".into());
            }
        }
        let mut outputs = BTreeMap::new();
        if ok && let Some(id) = &step.id {
            outputs.insert(format!("{id}.output"), output_value);
            outputs.insert(
                format!("{id}.exit_code"),
                exit_code.map_or("-1".into(), |c| c.to_string()),
            );
            for o in &step.outputs {
                match found
                    .iter()
                    .find(|(n, _)| *n == o.name)
                    .and_then(|(_, p)| p.clone())
                {
                    Some(path) => {
                        outputs.insert(format!("{id}.{}", o.name), path);
                    }
                    None => {
                        ok = false;
                        reason = Some(format!(
                            "outputs.{}: the step wrote no file matching \"{}\"",
                            o.name, o.file_pattern
                        ));
                    }
                }
            }
        }
        let now = s.now;
        {
            let rec = s.rec(index);
            rec.status = if ok {
                StepStatus::Passed
            } else {
                StepStatus::Failed
            };
            rec.started_at.get_or_insert(
                now - chrono::Duration::milliseconds(duration_ms.min(i64::MAX as u64) as i64),
            );
            rec.completed_at = Some(now);
            rec.exit_code = exit_code;
            rec.duration_ms = duration_ms;
            rec.reason = reason.clone();
        }
        if ok {
            s.state.outputs.extend(outputs);
        }
        s.touch(RunDoc::State);
        out.push(Event::Step(StepEvent {
            step: index,
            label: label.clone(),
            passed: ok,
            exit_code,
            duration_ms,
            reason: reason.clone(),
        }));
        match reason {
            None => self.next_step(s),
            Some(r) => self.stop_run(s, format!("{label} failed: {r}"), out),
        }
    }

    // ----- test steps ---------------------------------------------------------

    /// The phase to perform, made consistent with the records (a hand-edited
    /// state may name an attempt without its record, or attempt 0 in a
    /// debug phase): attempt 0 restarts the step's test runs.
    fn phase(&self, rec: &StepRecord) -> TestPhase {
        let phase = rec.phase.unwrap_or(TestPhase::InitialTest);
        match phase {
            TestPhase::Debug | TestPhase::Retest if rec.attempt == 0 => TestPhase::InitialTest,
            TestPhase::Debug if decide::last_run(rec).is_none() => TestPhase::InitialTest,
            other => other,
        }
    }

    fn next_test(&self, s: &RunSession, step: &Step, t: &TestSpec) -> EngineStep {
        let index = step.index;
        let rec = &s.state.steps[index - 1];
        let f = t.on_failure.as_ref();
        match self.phase(rec) {
            TestPhase::InitialTest => self.test_run(s, step, t, self.paths.initial_dir(index)),
            TestPhase::Retest => {
                self.test_run(s, step, t, self.paths.attempt_dir(index, rec.attempt))
            }
            TestPhase::Debug => match f {
                Some(f) => self.next_debug(s, step, f, rec),
                None => EngineStep::Do(Effect::Update),
            },
            TestPhase::Done => EngineStep::Do(Effect::Update),
        }
    }

    fn test_run(&self, s: &RunSession, step: &Step, t: &TestSpec, dir: PathBuf) -> EngineStep {
        let vars = self.vars_for(s, step);
        let (detected, command) = match self.detect(s, step, t) {
            Ok(d) => d,
            Err(why) => return EngineStep::Do(Effect::Block(why)),
        };
        let log = dir.join("test-output.log");
        EngineStep::Do(Effect::RunTests(TestRequest {
            root: self.ws.root.clone(),
            detected,
            subset: None,
            log_shown: self.rel(&log),
            log,
            report_dir: dir.join("junit"),
            timeout: Duration::from_secs(t.timeout.unwrap_or(self.config.test.timeout_s)),
            env: self.env_for(s, step, Some(&vars)),
            previous: None,
            spinner: format!("test step {} · `{command}`", step.index),
            flaky: None,
            seal: None,
        }))
    }

    /// The step's test command resolved, and how its output is read.
    fn detect(
        &self,
        s: &RunSession,
        step: &Step,
        t: &TestSpec,
    ) -> std::result::Result<(crate::testing::Detected, String), String> {
        let vars = self.vars_for(s, step);
        let command = crate::agents::interpolate(&t.command.text, &vars, Mode::Shell)
            .map_err(|e| format!("{}: {e}", step.label()))?;
        let test_cfg = TestConfig {
            command: Some(command.clone()),
            ..TestConfig::default()
        };
        crate::testing::detect::detect_with(
            &self.ws.root,
            &test_cfg,
            &crate::testing::program::on_path,
        )
        .map(|d| (d, command))
        .ok_or_else(|| format!("{}: the test command is empty", step.label()))
    }

    fn next_debug(
        &self,
        s: &RunSession,
        step: &Step,
        f: &OnFailure,
        rec: &StepRecord,
    ) -> EngineStep {
        let index = step.index;
        let k = rec.attempt;
        let debug = rec
            .attempts
            .get(k as usize - 1)
            .and_then(|a| a.debug.clone());
        // A resumed attempt keeps the starting point it recorded: the
        // snapshot is taken (and persisted) first.
        let Some(debug) = debug else {
            return EngineStep::Do(Effect::Snapshot);
        };
        let Some(before) = decide::last_run(rec) else {
            return EngineStep::Do(Effect::Update);
        };
        let dir = self.paths.attempt_dir(index, k);
        let mut vars = self.vars_for(s, step);
        vars.set(
            "test.exit_code",
            before.exit_code.map_or("-1".into(), |c| c.to_string()),
        );
        vars.set("test.attempt", k.to_string());
        let test_output = Some((
            self.ws.root.join(&before.output_file),
            before.output_file.clone(),
        ));
        let snapshot = Snapshot {
            tree: debug.snapshot_before.clone(),
            head: debug.head_before.clone(),
        };
        if f.candidates > 1 {
            let input = speculative::DebugInput {
                vars,
                test_output,
                log: before.output_file.clone(),
            };
            return self.next_candidates(s, step, f, k, snapshot, input);
        }
        let inspect = Some(Before::Recorded(snapshot));
        let label = step.label();
        match &f.debug {
            Exec::Shell(t) => EngineStep::Do(Effect::Shell(ShellRequest {
                command: Text {
                    text: t.text.clone(),
                    vars: vars.clone(),
                    mode: Some(Mode::Shell),
                    test_output,
                    label: label.clone(),
                },
                cwd: self.ws.root.clone(),
                log: dir.join("debug-output.log"),
                command_file: Some(dir.join("debug-command.txt")),
                // `${test.output}` is resolved by the driver; the env gets
                // the same values, set there too.
                env: self.env_for(s, step, Some(&vars)),
                timeout: f.timeout.map(Duration::from_secs),
                spinner: format!("test step {index} · attempt {k} · debug"),
                inspect,
                outputs: Vec::new(),
            })),
            Exec::Claude(t) => {
                let Some(agent) = self.claude(f.timeout) else {
                    return EngineStep::Do(Effect::Block(
                        "a claude command ran although no claude is configured".into(),
                    ));
                };
                EngineStep::Do(Effect::Agent(AgentRequest {
                    agent: agent.clone(),
                    role: Role::Fix,
                    prompt: Text {
                        text: t.text.clone(),
                        vars,
                        mode: Some(Mode::Argv),
                        test_output,
                        label,
                    },
                    files: CallFiles {
                        prompt: dir.join("debug-prompt.md"),
                        output: dir.join("debug-cli-output.txt"),
                    },
                    cwd: self.ws.root.clone(),
                    env: self.env_for(s, step, None),
                    spinner: format!("test step {index} · attempt {k} · debug by {}", agent.name),
                    doing: format!("debugging step {index}, attempt {k}"),
                    inspect,
                    versions_of: None,
                    outputs: Vec::new(),
                }))
            }
        }
    }

    fn test_observed(
        &self,
        s: &mut RunSession,
        step: &Step,
        t: &TestSpec,
        what: Observed,
        out: &mut Vec<Event>,
    ) {
        let index = step.index;
        let f = t.on_failure.as_ref();
        let max = f.map_or(0, |f| f.max_attempts);
        let now = s.now;
        {
            let rec = s.rec(index);
            if rec.status == StepStatus::Pending {
                rec.status = StepStatus::Running;
                rec.started_at = Some(now);
                rec.phase = Some(TestPhase::InitialTest);
            }
            rec.max_attempts = max;
        }
        let phase = self.phase(&s.state.steps[index - 1]);
        match (phase, what) {
            (TestPhase::InitialTest | TestPhase::Retest, Observed::Tests(run))
                if found_no_tests(&run) =>
            {
                // Zero tests is nothing to debug (DESIGN.md §10.7): no
                // debug command runs; the resume runs this test run again.
                let dir = match phase {
                    TestPhase::Retest => self
                        .paths
                        .attempt_dir(index, s.state.steps[index - 1].attempt),
                    _ => self.paths.initial_dir(index),
                };
                let run = self.run_record(s, *run, &dir);
                out.push(test_run_event(
                    index,
                    s.state.steps[index - 1].attempt,
                    max,
                    &run,
                ));
                self.pause(s, PauseReason::NoTests, out);
            }
            (TestPhase::InitialTest, Observed::Tests(run)) => {
                let run = self.run_record(s, *run, &self.paths.initial_dir(index));
                out.push(test_run_event(index, 0, max, &run));
                let passed = run.passed;
                let rec = s.rec(index);
                rec.initial = Some(run);
                rec.attempt = 0;
                self.apply(s, index, decide::after_test_run(f, 0, passed));
            }
            (TestPhase::Debug, Observed::Snapshot(snap)) => {
                let k = s.state.steps[index - 1].attempt;
                self.debug_started(s, step, f, k, snap);
            }
            (TestPhase::Debug, Observed::Shell(done)) => {
                let ShellDone {
                    end, inspection, ..
                } = *done;
                let error = (!end.success()).then(|| format!("debug command {}", end.describe));
                self.debug_done(
                    s,
                    step,
                    f,
                    (end.exit_code, end.timed_out, end.duration_ms, None, error),
                    inspection,
                    out,
                );
            }
            (TestPhase::Debug, Observed::Agent(done)) => {
                let AgentCallDone {
                    call, inspection, ..
                } = *done;
                if let Some(c) = call.cost_usd {
                    s.state.cost_usd += c;
                }
                let k = s.state.steps[index - 1].attempt as usize;
                if let Some(d) = s
                    .rec(index)
                    .attempts
                    .get_mut(k - 1)
                    .and_then(|a| a.debug.as_mut())
                {
                    d.tamper = call.tamper;
                }
                let error = call.failed().then(|| {
                    format!(
                        "{} failed: {}",
                        call.agent,
                        call.error_message.clone().unwrap_or_else(|| "error".into())
                    )
                });
                self.debug_done(
                    s,
                    step,
                    f,
                    (
                        call.exit_code,
                        call.timed_out,
                        call.duration_ms,
                        call.cost_usd,
                        error,
                    ),
                    inspection,
                    out,
                );
            }
            (TestPhase::Debug, Observed::Candidates(done)) => {
                if let Some(f) = f {
                    self.candidates_observed(s, step, f, *done, out);
                }
            }
            (TestPhase::Debug, Observed::Applied(inspection)) => {
                let k = s.state.steps[index - 1].attempt;
                let debug = s.state.steps[index - 1].attempts[k as usize - 1]
                    .debug
                    .clone();
                if let Some(d) = debug {
                    self.debug_done(
                        s,
                        step,
                        f,
                        (d.exit_code, false, d.duration_ms, d.cost_usd, None),
                        Some(inspection),
                        out,
                    );
                }
            }
            (TestPhase::Retest, Observed::Tests(run)) => {
                let k = s.state.steps[index - 1].attempt;
                let run = self.run_record(s, *run, &self.paths.attempt_dir(index, k));
                out.push(test_run_event(index, k, max, &run));
                let passed = run.passed;
                {
                    let a = &mut s.rec(index).attempts[k as usize - 1];
                    a.outcome = Some(if passed {
                        AttemptOutcome::Passed
                    } else {
                        AttemptOutcome::Failed
                    });
                    a.test = Some(run);
                }
                s.touch(RunDoc::Attempt(index, k));
                self.apply(s, index, decide::after_test_run(f, k, passed));
            }
            (TestPhase::Debug | TestPhase::Done, Observed::Updated) => {
                s.rec(index).phase = Some(TestPhase::Done);
            }
            _ => {}
        }
        s.touch(RunDoc::State);
        if s.state.steps[index - 1].phase == Some(TestPhase::Done) {
            self.test_finished(s, step, f, out);
        }
    }

    /// A test run as recorded, with its parsed results written beside its log.
    fn run_record(
        &self,
        s: &mut RunSession,
        run: TestsRun,
        dir: &std::path::Path,
    ) -> TestRunRecord {
        let TestsRun {
            results,
            output_head,
            ..
        } = run;
        let results_file = dir.join("test-results.json");
        let log = dir.join("test-output.log");
        let timed_out = results.exit_code.is_none()
            && results
                .failures
                .iter()
                .any(|f| f.error.starts_with("timed out after"));
        let rec = TestRunRecord {
            started_at: results.started_at.unwrap_or(s.now),
            command: results.command.clone(),
            exit_code: results.exit_code,
            passed: results.exit_code == Some(0),
            timed_out,
            duration_ms: results.duration_ms,
            total: results.total,
            // A run without parsed tests that exits 0 passed (exit code
            // decides); its "no tests found" note is not a failing test.
            failing: if results.exit_code == Some(0) && results.total == 0 {
                0
            } else {
                results.failed + results.errors
            },
            parser: results.parser.clone(),
            output_file: self.rel(&log),
            results_file: self.rel(&results_file),
            extra: Default::default(),
        };
        if let Ok(bytes) = crate::session::store::json_bytes(&results) {
            s.touch(RunDoc::Raw(results_file, bytes, Durability::Durable));
        }
        s.output_heads.insert(rec.output_file.clone(), output_head);
        rec
    }

    /// Apply a loop decision to the step's record.
    fn apply(&self, s: &mut RunSession, index: usize, next: Next) {
        match next {
            Next::Debug(k) => {
                let dir = self.rel(&self.paths.attempt_dir(index, k));
                let rec = s.rec(index);
                rec.attempt = k;
                rec.phase = Some(TestPhase::Debug);
                while rec.attempts.len() < k as usize {
                    let n = rec.attempts.len() as u32 + 1;
                    rec.attempts.push(AttemptRecord::new(n, dir.clone()));
                }
            }
            Next::Done { .. } => s.rec(index).phase = Some(TestPhase::Done),
        }
    }

    /// The debug record of attempt k with its starting point, persisted
    /// before the command runs.
    fn debug_started(
        &self,
        s: &mut RunSession,
        step: &Step,
        f: Option<&OnFailure>,
        k: u32,
        snap: Snapshot,
    ) {
        let Some(f) = f else { return };
        let index = step.index;
        let dir = self.paths.attempt_dir(index, k);
        let (kind, command_file, output_file) = match &f.debug {
            Exec::Shell(_) => (
                StepKind::Shell,
                dir.join("debug-command.txt"),
                dir.join("debug-output.log"),
            ),
            Exec::Claude(_) => (
                StepKind::Claude,
                dir.join("debug-prompt.md"),
                dir.join("debug-cli-output.txt"),
            ),
        };
        let record = DebugRecord {
            started_at: s.now,
            kind,
            agent: match &f.debug {
                Exec::Claude(_) => self.claude.as_ref().map(|a| a.name.clone()),
                Exec::Shell(_) => None,
            },
            command_file: self.rel(&command_file),
            output_file: self.rel(&output_file),
            head_before: snap.head,
            snapshot_before: snap.tree,
            finished: false,
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            cost_usd: None,
            error: None,
            committed: false,
            files_changed: Vec::new(),
            tamper: None,
            extra: Default::default(),
        };
        let rec = s.rec(index);
        while rec.attempts.len() < k as usize {
            let n = rec.attempts.len() as u32 + 1;
            rec.attempts.push(AttemptRecord::new(n, String::new()));
        }
        rec.attempts[k as usize - 1].debug = Some(record);
        s.touch(RunDoc::State);
    }

    /// The debug command of attempt k finished.
    #[allow(clippy::type_complexity)]
    fn debug_done(
        &self,
        s: &mut RunSession,
        step: &Step,
        f: Option<&OnFailure>,
        (exit_code, timed_out, duration_ms, cost_usd, error): (
            Option<i32>,
            bool,
            u64,
            Option<f64>,
            Option<String>,
        ),
        inspection: Option<crate::engine::step::Inspection>,
        out: &mut Vec<Event>,
    ) {
        let Some(f) = f else { return };
        let index = step.index;
        let k = s.state.steps[index - 1].attempt;
        let committed = inspection.as_ref().is_some_and(|i| i.head_moved());
        let files_changed = inspection
            .as_ref()
            .map(|i| i.files_changed())
            .unwrap_or_default();
        let no_change = f.commit_required && self.repo && !committed && files_changed.is_empty();
        let note = if no_change {
            Some("no commit and no change (commit_required): attempt failed".to_string())
        } else {
            error.clone()
        };
        let before = decide::last_run(&s.state.steps[index - 1]).cloned();
        {
            let a = &mut s.rec(index).attempts[k as usize - 1];
            if let Some(d) = &mut a.debug {
                d.exit_code = exit_code;
                d.timed_out = timed_out;
                d.duration_ms = duration_ms;
                d.cost_usd = cost_usd;
                d.error = error;
                d.committed = committed;
                d.files_changed = files_changed;
                d.finished = true;
            }
        }
        if let Some(before) = &before {
            out.push(self.attempt_event(index, k, f, before, duration_ms, note));
        }
        if no_change {
            {
                let a = &mut s.rec(index).attempts[k as usize - 1];
                a.outcome = Some(AttemptOutcome::NoChange);
                a.reason = Some(
                    "commit_required: the debug command made no commit and left no change; counted as failed without re-running the tests"
                        .into(),
                );
            }
            s.touch(RunDoc::Attempt(index, k));
            let passed = before.as_ref().is_some_and(|b| b.passed);
            self.apply(s, index, decide::after_test_run(Some(f), k, passed));
        } else {
            s.rec(index).phase = Some(TestPhase::Retest);
        }
    }

    /// Who runs the debug command: the agent's name, or `shell`.
    fn debugger(&self, f: &OnFailure) -> &str {
        match &f.debug {
            Exec::Claude(_) => self.claude.as_ref().map_or("claude", |a| a.name.as_str()),
            Exec::Shell(_) => "shell",
        }
    }

    /// Attempt k's debug command ended (after the run `before`).
    fn attempt_event(
        &self,
        index: usize,
        k: u32,
        f: &OnFailure,
        before: &TestRunRecord,
        duration_ms: u64,
        note: Option<String>,
    ) -> Event {
        Event::Attempt(AttemptEvent {
            step: index,
            attempt: k,
            max_attempts: f.max_attempts,
            before_exit_code: before.exit_code,
            before_timed_out: before.timed_out,
            before_failing: before.failing,
            debugger: self.debugger(f).to_string(),
            duration_ms,
            note,
        })
    }

    /// A test step's last run decides it; `fail_workflow` may stop the run.
    fn test_finished(
        &self,
        s: &mut RunSession,
        step: &Step,
        f: Option<&OnFailure>,
        out: &mut Vec<Event>,
    ) {
        let index = step.index;
        let max = f.map_or(0, |f| f.max_attempts);
        let now = s.now;
        let last = decide::last_run(&s.state.steps[index - 1]).cloned();
        let passed = last.as_ref().is_some_and(|r| r.passed);
        let verdict = decide::verdict(f, passed);
        {
            let rec = s.rec(index);
            rec.status = if passed {
                StepStatus::Passed
            } else {
                StepStatus::Failed
            };
            rec.continued = verdict == Verdict::FailedContinue;
            rec.completed_at = Some(now);
            if let Some(r) = &last {
                rec.exit_code = r.exit_code;
                rec.output_file = Some(r.output_file.clone());
                rec.reason = (!passed).then(|| {
                    format!(
                        "{} · {} failing",
                        crate::engine::sink::displayer::exit_text(r.exit_code, r.timed_out),
                        r.failing
                    )
                });
            }
        }
        if let (Some(id), Some(r)) = (&step.id, &last) {
            let head = s.output_heads.get(&r.output_file).cloned();
            let value = match head {
                Some(h) => inline_or_path(&h, &r.output_file),
                None => r.output_file.clone(),
            };
            s.state.outputs.insert(format!("{id}.output"), value);
            s.state.outputs.insert(
                format!("{id}.exit_code"),
                r.exit_code.map_or("-1".into(), |c| c.to_string()),
            );
        }
        let outcome = decide::test_outcome(&s.state.steps[index - 1], f);
        out.push(Event::TestStep {
            step: index,
            passed,
            outcome,
        });
        s.touch(RunDoc::State);
        match verdict {
            Verdict::Passed | Verdict::FailedContinue => self.next_step(s),
            Verdict::FailedWorkflow => self.stop_run(
                s,
                format!(
                    "{}: the tests still fail after {max} debug attempts (fail_workflow: true)",
                    step.label()
                ),
                out,
            ),
        }
    }
}

fn test_run_event(step: usize, attempt: u32, max: u32, run: &TestRunRecord) -> Event {
    Event::TestRun(TestRunEvent {
        step,
        attempt,
        max_attempts: max,
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        failing: run.failing,
        passed: run.passed,
        duration_ms: run.duration_ms,
    })
}

/// A test run that did not pass because its command found no test at all.
/// A run that exits 0 passes whatever was parsed: the exit code decides.
fn found_no_tests(run: &TestsRun) -> bool {
    run.results.exit_code != Some(0) && crate::testing::results::found_no_tests(&run.results)
}

fn on_failure_of(step: &Step) -> Option<&OnFailure> {
    match &step.action {
        Action::Test(t) => t.on_failure.as_ref(),
        Action::Run(_) => None,
    }
}

/// Indexes of test steps whose last test run failed.
pub fn never_passed(state: &RunState) -> Vec<usize> {
    state
        .steps
        .iter()
        .filter(|r| r.kind == StepKind::Test && r.status == StepStatus::Failed)
        .map(|r| r.index)
        .collect()
}

/// `${<id>.output}`: the text (trailing newlines removed) when it is at
/// most 10 KiB, else the file's relative path.
pub fn inline_or_path(text: &str, rel: &str) -> String {
    if text.len() > INLINE_OUTPUT_MAX {
        rel.to_string()
    } else {
        text.trim_end_matches(['\n', '\r']).to_string()
    }
}

/// Debug attempts made over the whole run.
fn attempts_of(state: &RunState) -> u32 {
    state.steps.iter().map(|r| r.attempts.len() as u32).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_values_trim_and_switch_to_paths() {
        assert_eq!(inline_or_path("built\n\n", "a.log"), "built");
        assert_eq!(
            inline_or_path(&"x".repeat(INLINE_OUTPUT_MAX + 1), "b.log"),
            "b.log"
        );
    }
}
