//! Running a workflow: the effectful shell around [`super::decide`]. Every
//! step, test run and debug command goes through the same code as the
//! test-fix cycle — [`crate::process::run`] for shell commands,
//! [`crate::testing::run_tests`] for tests (parsed results, failing counts),
//! [`crate::agents::invoke`] for claude, [`crate::git::Checkpoints`] for
//! `commit_required` — and the state is saved atomically after each of them,
//! so `--resume` continues at the step, attempt and phase where a run
//! stopped.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::agents::config::{ResolvedAgent, Role};
use crate::agents::invoke::{CallFiles, ErrorKind, Invocation, invoke};
use crate::agents::vars::{self, INLINE_OUTPUT_MAX, Mode, Vars};
use crate::artifacts::Timestamp;
use crate::artifacts::config::{Config, TestConfig};
use crate::artifacts::run_state::{
    AttemptOutcome, AttemptRecord, DebugRecord, RunState, RunStatus, StepKind, StepRecord,
    StepStatus, TestPhase, TestRunRecord,
};
use crate::artifacts::session::{GitInfo, InputMode, SessionStatus, WorkflowSession};
use crate::error::{Error, Exit, Result};
use crate::git::{Checkpoints, change_paths};
use crate::process::{self, Spec};
use crate::session::layout::SESSION_GITIGNORE;
use crate::session::store::{self, SessionLock};
use crate::session::{SessionRef, Workspace, id};
use crate::testing::{self, RunRequest};
use crate::ui::Printer;

use super::decide::{self, Next, Verdict};
use super::model::{Action, Exec, OnFailure, Step, TestSpec, Workflow};
use super::paths::RunPaths;

/// `type` and `workflow_type` of a run session's `workflow-session.json`.
pub const SESSION_KIND: &str = "run";
pub const WORKFLOW_TYPE: &str = "yaml_workflow";

/// What a finished (completed, partially successful or failed) run reports.
#[derive(Debug, Clone)]
pub struct Report {
    pub state: RunState,
    /// Relative to the project root.
    pub session_dir: String,
    pub exit: Exit,
    /// One line per step (see [`decide::summary_line`]).
    pub lines: Vec<String>,
    /// Indexes of test steps whose last test run failed.
    pub never_passed: Vec<usize>,
}

/// `WFS-run-<slug of the name>`.
pub fn base_session_id(name: &str) -> String {
    format!("WFS-{}", id::slugify(&format!("run-{name}")))
}

/// The run sessions of a workflow in `active/`: `base` and `base-N`, with
/// their run state (`None` when the run died before writing one).
pub fn run_sessions(ws: &Workspace, base: &str) -> Result<Vec<(SessionRef, Option<RunState>)>> {
    let mut out = Vec::new();
    for s in ws.list(false)? {
        let id = s.id();
        let ours = id == base
            || id
                .strip_prefix(base)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !ours {
            continue;
        }
        let Ok(session) = ws.load_session(&s) else {
            continue;
        };
        if session.kind != SESSION_KIND {
            continue;
        }
        let paths = RunPaths::new(s.paths.clone());
        let state_path = paths.run_state();
        let state = store::read_json_opt::<RunState>(&state_path, &ws.rel(&state_path))?;
        out.push((s, state));
    }
    Ok(out)
}

/// The unfinished run of a workflow, if any (the most recently updated).
pub fn unfinished_run(
    runs: Vec<(SessionRef, Option<RunState>)>,
) -> Option<(SessionRef, Option<RunState>)> {
    runs.into_iter()
        .filter(|(_, st)| st.as_ref().is_none_or(|s| s.status.is_unfinished()))
        .max_by_key(|(_, st)| st.as_ref().map(|s| s.updated_at))
}

/// Where a run stands, for messages: `step 2 (test), attempt 1 (debug)`.
pub fn position(state: &RunState, wf: Option<&Workflow>) -> String {
    let Some(rec) = state.steps.get(state.current_step.saturating_sub(1)) else {
        return "the end of the workflow".into();
    };
    let label = wf
        .and_then(|w| w.steps.get(rec.index.saturating_sub(1)))
        .map(|s| s.label())
        .unwrap_or_else(|| format!("step {} ({})", rec.index, rec.kind));
    match rec.phase {
        Some(TestPhase::Debug) => format!("{label}, attempt {} (debug command)", rec.attempt),
        Some(TestPhase::Retest) => format!("{label}, attempt {} (test re-run)", rec.attempt),
        Some(TestPhase::InitialTest) => format!("{label} (initial test run)"),
        _ => label,
    }
}

/// Everything a run needs that was decided before it started.
pub struct Setup<'a> {
    pub ws: &'a Workspace,
    pub ui: &'a Printer,
    pub wf: &'a Workflow,
    /// The workflow text (saved as `workflow.yml`).
    pub text: &'a str,
    pub name: &'a str,
    /// The workflow file relative to the project root (or as given).
    pub file: &'a str,
    /// How to name the file in the resume hint.
    pub file_arg: &'a str,
    pub config: &'a Config,
    pub claude: Option<&'a ResolvedAgent>,
    /// `--var` values.
    pub vars: &'a BTreeMap<String, String>,
}

/// Start a new run session and run it.
pub fn start(setup: &Setup, base_id: &str) -> Result<Report> {
    let ws = setup.ws;
    let session_id = id::unique_id(base_id, |id| ws.id_taken(id));
    let paths = RunPaths::new(ws.active(&session_id));
    let git = Checkpoints::open(&ws.root)?;
    fs_err::create_dir_all(paths.session.process_dir())
        .map_err(|e| Error::io(paths.session.process_dir(), e))?;
    let lock = SessionLock::acquire(&paths.session.lock(), &session_id)?;
    store::write_atomic(&paths.session.gitignore(), SESSION_GITIGNORE.as_bytes())?;
    store::write_atomic(&paths.workflow_copy(), setup.text.as_bytes())?;
    let now = chrono::Utc::now();
    let session = WorkflowSession {
        session_id: session_id.clone(),
        kind: SESSION_KIND.into(),
        workflow_type: WORKFLOW_TYPE.into(),
        status: SessionStatus::Active,
        description: setup.name.to_string(),
        project: setup.name.to_string(),
        mode: InputMode::Prompt,
        input: setup.file.to_string(),
        source_session_id: None,
        created_at: now,
        updated_at: now,
        completed_at: None,
        resumed_at: None,
        archived_at: None,
        git: GitInfo {
            base_commit: git.head()?,
            branch: git.branch()?,
            ..GitInfo::default()
        },
        phases: Vec::new(),
        wfx_version: crate::VERSION.to_string(),
        extra: Default::default(),
    };
    store::write_json(&paths.session.session_json(), &session)?;
    let state = RunState {
        session_id: session_id.clone(),
        workflow_name: setup.name.to_string(),
        workflow_file: setup.file.to_string(),
        status: RunStatus::Running,
        current_step: 1,
        started_at: now,
        updated_at: now,
        completed_at: None,
        stop_reason: None,
        vars: setup.vars.clone(),
        outputs: BTreeMap::new(),
        cost_usd: 0.0,
        steps: setup
            .wf
            .steps
            .iter()
            .map(|s| pending_record(s, &paths, ws))
            .collect(),
        extra: Default::default(),
    };
    let mut engine = Engine::new(setup, paths, state, lock, git);
    engine.save()?;
    let n = setup.wf.steps.len();
    engine.log(&format!(
        "run {session_id} · workflow {} · {n} step{}",
        setup.file,
        if n == 1 { "" } else { "s" }
    ))?;
    engine.run()
}

/// Continue an unfinished run at the step, attempt and phase where it stopped.
pub fn resume(setup: &Setup, sref: SessionRef, state: Option<RunState>) -> Result<Report> {
    let ws = setup.ws;
    let paths = RunPaths::new(sref.paths.clone());
    let lock = SessionLock::acquire(&paths.session.lock(), sref.id())?;
    if let Some(pgid) = lock.stale.as_ref().and_then(|s| s.child_pgid)
        && process::end_stale_group(pgid, Duration::from_secs(2))
    {
        setup.ui.warn(format!(
            "ended processes (group {pgid}) left behind by the run that stopped"
        ));
    }
    let git = Checkpoints::open(&ws.root)?;
    let now = chrono::Utc::now();
    let mut state = match state {
        Some(s) => s,
        None => RunState {
            session_id: sref.id().to_string(),
            workflow_name: setup.name.to_string(),
            workflow_file: setup.file.to_string(),
            status: RunStatus::Running,
            current_step: 1,
            started_at: now,
            updated_at: now,
            completed_at: None,
            stop_reason: None,
            vars: BTreeMap::new(),
            outputs: BTreeMap::new(),
            cost_usd: 0.0,
            steps: Vec::new(),
            extra: Default::default(),
        },
    };
    // `--var` given again overrides the values the run started with.
    for (k, v) in setup.vars {
        state.vars.insert(k.clone(), v.clone());
    }
    let saved = std::fs::read_to_string(paths.workflow_copy()).unwrap_or_default();
    if saved != setup.text {
        if !saved.is_empty() {
            setup.ui.warn(format!(
                "{} changed since the run started; continuing at {} with the new definition",
                setup.file,
                position(&state, Some(setup.wf))
            ));
        }
        store::write_atomic(&paths.workflow_copy(), setup.text.as_bytes())?;
    }
    reconcile_steps(&mut state, setup.wf, &paths, ws);
    let where_ = position(&state, Some(setup.wf));
    state.status = RunStatus::Running;
    state.stop_reason = None;
    let session_path = paths.session.session_json();
    store::update_json::<WorkflowSession>(&session_path, &ws.rel(&session_path), |s| {
        s.status = SessionStatus::Active;
        s.resumed_at = Some(now);
        s.updated_at = now;
    })?;
    let mut engine = Engine::new(setup, paths, state, lock, git);
    engine.save()?;
    engine.log(&format!("resume {} at {where_}", sref.id()))?;
    engine.run()
}

fn pending_record(step: &Step, paths: &RunPaths, ws: &Workspace) -> StepRecord {
    StepRecord {
        index: step.index,
        id: step.id.clone(),
        kind: step_kind(step),
        status: StepStatus::Pending,
        started_at: None,
        completed_at: None,
        dir: ws.rel(&paths.step_dir(step.index)),
        exit_code: None,
        duration_ms: 0,
        command_file: None,
        output_file: None,
        cost_usd: None,
        reason: None,
        phase: None,
        attempt: 0,
        max_attempts: match &step.action {
            Action::Test(t) => t.on_failure.as_ref().map_or(0, |f| f.max_attempts),
            Action::Run(_) => 0,
        },
        initial: None,
        attempts: Vec::new(),
        continued: false,
        extra: Default::default(),
    }
}

fn step_kind(step: &Step) -> StepKind {
    match &step.action {
        Action::Run(Exec::Shell(_)) => StepKind::Shell,
        Action::Run(Exec::Claude(_)) => StepKind::Claude,
        Action::Test(_) => StepKind::Test,
    }
}

/// Fit the saved records to the (possibly edited) workflow: finished steps
/// before the current one stay as they are; a record from the current step
/// on whose kind no longer matches starts afresh.
fn reconcile_steps(state: &mut RunState, wf: &Workflow, paths: &RunPaths, ws: &Workspace) {
    let current = state.current_step.max(1);
    let mut steps = Vec::with_capacity(wf.steps.len());
    for step in &wf.steps {
        let old = state.steps.iter().find(|r| r.index == step.index);
        let rec = match old {
            Some(r) if step.index < current || r.kind == step_kind(step) => {
                let mut r = r.clone();
                r.id = step.id.clone();
                if let Action::Test(t) = &step.action {
                    r.max_attempts = t.on_failure.as_ref().map_or(0, |f| f.max_attempts);
                }
                r
            }
            _ => pending_record(step, paths, ws),
        };
        steps.push(rec);
    }
    state.steps = steps;
    state.current_step = current.min(wf.steps.len() + 1);
}

/// How a step ended.
enum StepEnd {
    Next,
    /// The run fails (exit 1) for this reason.
    Stop(String),
    /// The run stops at a resumable point (exit 3) for this reason.
    Pause(String),
}

/// How a debug command ended.
enum DebugEnd {
    Ran {
        note: Option<String>,
        no_change: bool,
    },
    Pause(String),
    Stop(String),
}

struct Engine<'a> {
    setup: &'a Setup<'a>,
    paths: RunPaths,
    state: RunState,
    lock: SessionLock,
    git: Checkpoints,
}

fn now() -> Timestamp {
    chrono::Utc::now()
}

impl<'a> Engine<'a> {
    fn new(
        setup: &'a Setup<'a>,
        paths: RunPaths,
        state: RunState,
        lock: SessionLock,
        git: Checkpoints,
    ) -> Engine<'a> {
        Engine {
            setup,
            paths,
            state,
            lock,
            git,
        }
    }

    fn root(&self) -> &Path {
        &self.setup.ws.root
    }

    fn rel(&self, p: &Path) -> String {
        self.setup.ws.rel(p)
    }

    /// Persist the run state: the commit point of a step, after which
    /// everything the step wrote is durable (`store::commit_json`).
    fn save(&mut self) -> Result<()> {
        self.state.updated_at = now();
        store::commit_json(&self.paths.run_state(), &self.state)
    }

    /// A progress line: stderr for people, a JSON Lines event with `--json`,
    /// and `run.log` in the session.
    fn log(&self, line: &str) -> Result<()> {
        self.setup.ui.status(line);
        self.setup
            .ui
            .event("progress", serde_json::json!({ "message": line }));
        use std::io::Write;
        let path = self.paths.run_log();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        writeln!(
            f,
            "{} {line}",
            now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
        .map_err(|e| Error::io(&path, e))
    }

    fn update_session(&self, status: SessionStatus, finished: bool) -> Result<()> {
        let path = self.paths.session.session_json();
        let t = now();
        store::update_json::<WorkflowSession>(&path, &self.rel(&path), |s| {
            s.status = status;
            s.updated_at = t;
            if finished {
                s.completed_at = Some(t);
            }
        })?;
        Ok(())
    }

    fn rec(&mut self, index: usize) -> &mut StepRecord {
        &mut self.state.steps[index - 1]
    }

    fn run(mut self) -> Result<Report> {
        let _batch = store::batch_syncs();
        match self.run_steps() {
            Ok(report) => Ok(report),
            Err(e) => {
                // Whatever stopped the run, it stays resumable.
                let reason = e.to_string();
                if !matches!(e, Error::Paused(_)) {
                    self.state.status = RunStatus::Paused;
                    self.state.stop_reason = Some(reason);
                    let _ = self.save();
                    let _ = self.update_session(SessionStatus::Paused, false);
                }
                Err(e)
            }
        }
    }

    fn run_steps(&mut self) -> Result<Report> {
        let wf = self.setup.wf;
        self.update_session(SessionStatus::Active, false)?;
        while self.state.current_step <= wf.steps.len() {
            if process::interrupted() {
                return Err(self.pause("interrupted".into())?);
            }
            let step = &wf.steps[self.state.current_step - 1];
            let end = match &step.action {
                Action::Run(exec) => self.exec_step(step, exec)?,
                Action::Test(t) => self.test_step(step, t)?,
            };
            match end {
                StepEnd::Next => {
                    self.state.current_step += 1;
                    self.save()?;
                }
                StepEnd::Stop(reason) => {
                    self.state.status = RunStatus::Failed;
                    self.state.stop_reason = Some(reason);
                    self.state.completed_at = Some(now());
                    self.save()?;
                    self.update_session(SessionStatus::Blocked, true)?;
                    return Ok(self.report(Exit::Failed));
                }
                StepEnd::Pause(reason) => return Err(self.pause(reason)?),
            }
        }
        self.state.status = decide::final_status(&self.state.steps);
        self.state.completed_at = Some(now());
        self.save()?;
        let (session_status, exit) = match self.state.status {
            RunStatus::Completed => (SessionStatus::Completed, Exit::Success),
            RunStatus::PartialSuccess => (SessionStatus::PartialSuccess, Exit::Success),
            _ => (SessionStatus::Blocked, Exit::Failed),
        };
        self.update_session(session_status, true)?;
        Ok(self.report(exit))
    }

    /// Save the state as paused and build the error that exits 3.
    fn pause(&mut self, reason: String) -> Result<Error> {
        self.lock.set_child(None)?;
        self.state.status = RunStatus::Paused;
        self.state.stop_reason = Some(reason.clone());
        self.save()?;
        self.update_session(SessionStatus::Paused, false)?;
        let where_ = position(&self.state, Some(self.setup.wf));
        self.log(&format!("paused at {where_}: {reason}"))?;
        Ok(Error::Paused(format!(
            "{reason}: the run stopped at {where_}; state saved in {}. Continue with `wfx run {} --resume`",
            self.rel(&self.paths.run_state()),
            self.setup.file_arg
        )))
    }

    fn report(&self, exit: Exit) -> Report {
        let wf = self.setup.wf;
        let lines = self
            .state
            .steps
            .iter()
            .map(|r| {
                let step = wf.steps.get(r.index.saturating_sub(1));
                let label = step
                    .map(|s| s.label())
                    .unwrap_or_else(|| format!("step {}", r.index));
                decide::summary_line(r, &label, step.and_then(on_failure_of))
            })
            .collect();
        let never_passed = self
            .state
            .steps
            .iter()
            .filter(|r| r.kind == StepKind::Test && r.status == StepStatus::Failed)
            .map(|r| r.index)
            .collect();
        Report {
            state: self.state.clone(),
            session_dir: self.rel(&self.paths.session.dir),
            exit,
            lines,
            never_passed,
        }
    }

    /// Variables every string of `step` may use (see docs/workflows.md).
    fn vars_for(&self, step: &Step) -> Vars {
        let mut v = Vars::new();
        for (k, val) in self
            .setup
            .wf
            .env
            .iter()
            .chain(self.state.vars.iter())
            .chain(step.env.iter())
            .chain(self.state.outputs.iter())
        {
            v.set(k.clone(), val.clone());
        }
        v.set("session.id", self.state.session_id.clone());
        v.set("session.dir", self.rel(&self.paths.session.dir));
        v
    }

    /// Environment of a step's processes: the workflow's `env:`, `--var`
    /// values, the step's `env:`, then every variable as `WFX_*`.
    fn env_for(&self, step: &Step, vars: Option<&Vars>) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .setup
            .wf
            .env
            .iter()
            .chain(self.state.vars.iter())
            .chain(step.env.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(v) = vars {
            env.extend(v.env());
        }
        env
    }

    /// Git facts before a command that may change the tree.
    fn git_before(&self) -> Result<(Option<String>, Option<String>)> {
        if !self.git.is_repo() {
            return Ok((None, None));
        }
        Ok((self.git.head()?, self.git.snapshot()?))
    }

    /// (made a commit, changed paths) since `before`.
    fn git_after(
        &self,
        head_before: &Option<String>,
        snapshot: &Option<String>,
    ) -> Result<(bool, Vec<String>)> {
        if !self.git.is_repo() {
            return Ok((false, Vec::new()));
        }
        let committed = self.git.head()? != *head_before;
        let changed = match snapshot {
            Some(s) => change_paths(&self.git.changed_since(s)?),
            None => Vec::new(),
        };
        Ok((committed, changed))
    }

    fn cost_cap_reason(&self) -> Option<String> {
        let cap = self.setup.config.agents.max_cost_usd?;
        (self.state.cost_usd >= cap).then(|| {
            format!(
                "the agent cost cap was reached (${:.2} spent, agents.max_cost_usd = {cap})",
                self.state.cost_usd
            )
        })
    }

    fn claude(&self, timeout: Option<u64>) -> Result<ResolvedAgent> {
        let mut agent = self.setup.claude.cloned().ok_or_else(|| {
            Error::Internal("a claude command ran although no claude is configured".into())
        })?;
        if let Some(t) = timeout {
            agent.timeout = Duration::from_secs(t);
        }
        Ok(agent)
    }

    /// Run claude with `prompt`; `Err(reason)` is a pause (interrupted or
    /// the agent unavailable).
    fn call_claude(
        &mut self,
        agent: &ResolvedAgent,
        prompt: &str,
        vars: &Vars,
        files: &CallFiles,
        env: &[(String, String)],
    ) -> Result<std::result::Result<crate::agents::CallRecord, String>> {
        let root = self.setup.ws.root.clone();
        let lock = &mut self.lock;
        let mut on_spawn = |pgid: i32| {
            let _ = lock.set_child(Some(pgid));
        };
        let call = invoke(
            &Invocation {
                agent,
                role: Role::Fix,
                prompt,
                vars,
                files,
                cwd: &root,
                env,
            },
            &mut on_spawn,
        )?;
        self.lock.set_child(None)?;
        if call.interrupted {
            return Ok(Err("interrupted".into()));
        }
        if let Some(
            kind @ (ErrorKind::Unavailable
            | ErrorKind::RateLimit
            | ErrorKind::Server
            | ErrorKind::Connection),
        ) = call.error_kind
        {
            return Ok(Err(format!(
                "{} is unavailable ({}: {})",
                agent.name,
                kind.as_str(),
                call.error_message.clone().unwrap_or_default()
            )));
        }
        if let Some(c) = call.cost_usd {
            self.state.cost_usd += c;
        }
        Ok(Ok(call))
    }

    /// Run a shell command of a step; `None` when interrupted.
    fn call_shell(
        &mut self,
        command: &str,
        log: &Path,
        env: &[(String, String)],
        timeout: Option<u64>,
    ) -> Result<Option<process::Outcome>> {
        remove_file(log)?;
        let mut spec = Spec::shell(command, self.root()).log(log);
        for (k, v) in env {
            spec = spec.env(k.clone(), v.clone());
        }
        if let Some(t) = timeout {
            spec = spec.timeout(Duration::from_secs(t));
        }
        let lock = &mut self.lock;
        let mut on_spawn = |pgid: i32| {
            let _ = lock.set_child(Some(pgid));
        };
        let outcome = process::run(spec, &mut on_spawn)?;
        self.lock.set_child(None)?;
        Ok((!outcome.interrupted).then_some(outcome))
    }

    /// A `shell:` or `claude:` step.
    fn exec_step(&mut self, step: &Step, exec: &Exec) -> Result<StepEnd> {
        let dir = self.paths.step_dir(step.index);
        store::create_dirs(&dir)?;
        {
            let rec = self.rec(step.index);
            rec.status = StepStatus::Running;
            rec.started_at = Some(now());
            rec.reason = None;
        }
        self.save()?;
        let vars = self.vars_for(step);
        let started = SystemTime::now();
        let (head_before, snapshot) = if step.commit_required {
            self.git_before()?
        } else {
            (None, None)
        };
        let label = step.label();
        let (mut ok, mut reason, exit_code, duration_ms, output_value, output_path);
        match exec {
            Exec::Shell(t) => {
                let command = interpolate(&t.text, &vars, Mode::Shell, &label)?;
                let command_file = dir.join("command.txt");
                store::write_atomic(&command_file, command.as_bytes())?;
                let command_rel = self.rel(&command_file);
                let log = dir.join("output.log");
                let env = self.env_for(step, Some(&vars));
                let Some(outcome) = self.call_shell(&command, &log, &env, step.timeout)? else {
                    return Ok(StepEnd::Pause("interrupted".into()));
                };
                ok = outcome.success();
                reason = (!ok).then(|| format!("`{}` {}", short(&command), outcome.describe()));
                exit_code = outcome.exit_code;
                duration_ms = outcome.duration.as_millis() as u64;
                output_path = self.rel(&log);
                output_value = inline_or_path(&log, &output_path)?;
                let rec = self.rec(step.index);
                rec.command_file = Some(command_rel);
                rec.output_file = Some(output_path.clone());
            }
            Exec::Claude(t) => {
                if let Some(r) = self.cost_cap_reason() {
                    return self.fail_step(step, r);
                }
                let prompt = interpolate(&t.text, &vars, Mode::Argv, &label)?;
                let agent = self.claude(step.timeout)?;
                let files = CallFiles {
                    prompt: dir.join("claude-prompt.md"),
                    output: dir.join("claude-cli-output.txt"),
                };
                let env = self.env_for(step, None);
                let call = match self.call_claude(&agent, &prompt, &vars, &files, &env)? {
                    Ok(c) => c,
                    Err(pause) => return Ok(StepEnd::Pause(pause)),
                };
                ok = !call.failed();
                reason = (!ok).then(|| {
                    format!(
                        "{} failed: {}",
                        agent.name,
                        call.error_message.clone().unwrap_or_else(|| "error".into())
                    )
                });
                exit_code = call.exit_code;
                duration_ms = call.duration_ms;
                let result_file = dir.join("claude-result.md");
                store::write_atomic(&result_file, call.result_text.as_bytes())?;
                output_path = self.rel(&result_file);
                output_value = inline_or_path(&result_file, &output_path)?;
                let rec = self.rec(step.index);
                rec.command_file = Some(call.prompt_file.clone());
                rec.output_file = Some(call.output_file.clone());
                rec.cost_usd = call.cost_usd;
            }
        }
        if ok && step.commit_required {
            let (committed, changed) = self.git_after(&head_before, &snapshot)?;
            if !committed && changed.is_empty() {
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
            for out in &step.outputs {
                match find_output_file(self.root(), &out.file_pattern, started) {
                    Some(found) => {
                        outputs.insert(format!("{id}.{}", out.name), found);
                    }
                    None => {
                        ok = false;
                        reason = Some(format!(
                            "outputs.{}: the step wrote no file matching \"{}\"",
                            out.name, out.file_pattern
                        ));
                    }
                }
            }
        }
        {
            let rec = self.rec(step.index);
            rec.exit_code = exit_code;
            rec.duration_ms = duration_ms;
            rec.completed_at = Some(now());
            rec.status = if ok {
                StepStatus::Passed
            } else {
                StepStatus::Failed
            };
            rec.reason = reason.clone();
        }
        if ok {
            self.state.outputs.extend(outputs);
        }
        self.save()?;
        let mut line = format!("{label} · {}", decide::seconds(duration_ms));
        match &reason {
            None => line.push_str(" · ok"),
            Some(r) => line.push_str(&format!(" · FAILED: {r}")),
        }
        self.log(&line)?;
        Ok(match reason {
            None => StepEnd::Next,
            Some(r) => StepEnd::Stop(format!("{label} failed: {r}")),
        })
    }

    fn fail_step(&mut self, step: &Step, reason: String) -> Result<StepEnd> {
        let label = step.label();
        {
            let rec = self.rec(step.index);
            rec.status = StepStatus::Failed;
            rec.completed_at = Some(now());
            rec.reason = Some(reason.clone());
        }
        self.save()?;
        self.log(&format!("{label} · FAILED: {reason}"))?;
        Ok(StepEnd::Stop(format!("{label} failed: {reason}")))
    }

    /// Apply a loop decision to the step's record.
    fn apply(&mut self, index: usize, next: Next) {
        let k = match next {
            Next::Debug(k) => k,
            Next::Done { .. } => 0,
        };
        let dir = self.rel(&self.paths.attempt_dir(index, k));
        let rec = self.rec(index);
        match next {
            Next::Debug(k) => {
                rec.attempt = k;
                rec.phase = Some(TestPhase::Debug);
                if rec.attempts.len() < k as usize {
                    rec.attempts.push(AttemptRecord {
                        attempt: k,
                        dir,
                        debug: None,
                        test: None,
                        outcome: None,
                        reason: None,
                        extra: Default::default(),
                    });
                }
            }
            Next::Done { .. } => rec.phase = Some(TestPhase::Done),
        }
    }

    /// A `test:` step: initial run, then debug attempts with re-runs.
    fn test_step(&mut self, step: &Step, t: &TestSpec) -> Result<StepEnd> {
        let index = step.index;
        let f = t.on_failure.as_ref();
        let max = f.map_or(0, |f| f.max_attempts);
        {
            let rec = self.rec(index);
            if rec.status == StepStatus::Pending {
                rec.status = StepStatus::Running;
                rec.started_at = Some(now());
                rec.phase = Some(TestPhase::InitialTest);
            }
            rec.max_attempts = max;
        }
        self.save()?;
        loop {
            let phase = self.normalize_phase(index);
            match phase {
                TestPhase::InitialTest => {
                    let dir = self.paths.initial_dir(index);
                    let run = match self.test_run(step, t, &dir)? {
                        Ok(run) => run,
                        Err(pause) => return Ok(StepEnd::Pause(pause)),
                    };
                    self.log(&decide::initial_line(index, &run))?;
                    let passed = run.passed;
                    self.rec(index).initial = Some(run);
                    self.apply(index, decide::after_test_run(f, 0, passed));
                }
                TestPhase::Debug => {
                    let Some(f) = f else {
                        self.rec(index).phase = Some(TestPhase::Done);
                        continue;
                    };
                    let k = self.rec(index).attempt;
                    let before = decide::last_run(self.rec(index)).cloned().ok_or_else(|| {
                        Error::Internal(format!(
                            "step {index}: debug attempt {k} without a test run"
                        ))
                    })?;
                    let end = self.debug(step, f, k, &before)?;
                    let (note, no_change) = match end {
                        DebugEnd::Ran { note, no_change } => (note, no_change),
                        DebugEnd::Pause(reason) => return Ok(StepEnd::Pause(reason)),
                        DebugEnd::Stop(reason) => return self.fail_step(step, reason),
                    };
                    let debugger = match &f.debug {
                        Exec::Claude(_) => self.setup.claude.map_or("claude", |a| a.name.as_str()),
                        Exec::Shell(_) => "shell",
                    }
                    .to_string();
                    let debug_ms = self.rec(index).attempts[k as usize - 1]
                        .debug
                        .as_ref()
                        .map_or(0, |d| d.duration_ms);
                    self.log(&decide::attempt_line(
                        index,
                        k,
                        max,
                        &before,
                        &debugger,
                        debug_ms,
                        note.as_deref(),
                    ))?;
                    if no_change {
                        {
                            let a = &mut self.rec(index).attempts[k as usize - 1];
                            a.outcome = Some(AttemptOutcome::NoChange);
                            a.reason = Some(
                                "commit_required: the debug command made no commit and left no change; counted as failed without re-running the tests"
                                    .into(),
                            );
                        }
                        self.write_attempt(index, k)?;
                        self.apply(index, decide::after_test_run(Some(f), k, before.passed));
                    } else {
                        self.rec(index).phase = Some(TestPhase::Retest);
                    }
                }
                TestPhase::Retest => {
                    let k = self.rec(index).attempt;
                    let dir = self.paths.attempt_dir(index, k);
                    let run = match self.test_run(step, t, &dir)? {
                        Ok(run) => run,
                        Err(pause) => return Ok(StepEnd::Pause(pause)),
                    };
                    self.log(&decide::rerun_line(index, k, max, &run))?;
                    let passed = run.passed;
                    {
                        let a = &mut self.rec(index).attempts[k as usize - 1];
                        a.outcome = Some(if passed {
                            AttemptOutcome::Passed
                        } else {
                            AttemptOutcome::Failed
                        });
                        a.test = Some(run);
                    }
                    self.write_attempt(index, k)?;
                    self.apply(index, decide::after_test_run(f, k, passed));
                }
                TestPhase::Done => break,
            }
            self.save()?;
        }

        let rec = self.rec(index);
        let last = decide::last_run(rec).cloned();
        let passed = last.as_ref().is_some_and(|r| r.passed);
        let verdict = decide::verdict(f, passed);
        rec.status = if passed {
            StepStatus::Passed
        } else {
            StepStatus::Failed
        };
        rec.continued = verdict == Verdict::FailedContinue;
        rec.completed_at = Some(now());
        if let Some(r) = &last {
            rec.exit_code = r.exit_code;
            rec.output_file = Some(r.output_file.clone());
            rec.reason =
                (!passed).then(|| format!("{} · {} failing", decide::exit_text(r), r.failing));
        }
        if let (Some(id), Some(r)) = (&step.id, &last) {
            let value = inline_or_path(&self.root().join(&r.output_file), &r.output_file)?;
            self.state.outputs.insert(format!("{id}.output"), value);
            self.state.outputs.insert(
                format!("{id}.exit_code"),
                r.exit_code.map_or("-1".into(), |c| c.to_string()),
            );
        }
        self.save()?;
        let outcome = decide::test_outcome(self.rec(index), f);
        self.log(&format!("test step {index} · {outcome}"))?;
        Ok(match verdict {
            Verdict::Passed | Verdict::FailedContinue => StepEnd::Next,
            Verdict::FailedWorkflow => StepEnd::Stop(format!(
                "{}: the tests still fail after {max} debug attempts (fail_workflow: true)",
                step.label()
            )),
        })
    }

    /// The phase to perform, made consistent with the records (a hand-edited
    /// state may name an attempt without its record, or attempt 0 in a
    /// debug phase): missing attempt records are added, attempt 0 restarts
    /// the step's test runs.
    fn normalize_phase(&mut self, index: usize) -> TestPhase {
        let phase = self.rec(index).phase.unwrap_or(TestPhase::InitialTest);
        let k = self.rec(index).attempt;
        match phase {
            TestPhase::Debug | TestPhase::Retest if k == 0 => {
                self.rec(index).phase = Some(TestPhase::InitialTest);
                TestPhase::InitialTest
            }
            TestPhase::Debug | TestPhase::Retest => {
                while self.rec(index).attempts.len() < k as usize {
                    let n = self.rec(index).attempts.len() as u32 + 1;
                    let dir = self.rel(&self.paths.attempt_dir(index, n));
                    self.rec(index).attempts.push(AttemptRecord {
                        attempt: n,
                        dir,
                        debug: None,
                        test: None,
                        outcome: None,
                        reason: None,
                        extra: Default::default(),
                    });
                }
                if phase == TestPhase::Debug && decide::last_run(self.rec(index)).is_none() {
                    self.rec(index).phase = Some(TestPhase::InitialTest);
                    return TestPhase::InitialTest;
                }
                phase
            }
            other => other,
        }
    }

    /// `attempt.json`: the attempt's record next to its files.
    fn write_attempt(&mut self, index: usize, k: u32) -> Result<()> {
        let path = self.paths.attempt_dir(index, k).join("attempt.json");
        let a = self.rec(index).attempts[k as usize - 1].clone();
        store::write_json(&path, &a)
    }

    /// Run the step's tests into `dir` through the shared runner.
    /// `Ok(Err(reason))` is a pause (Ctrl-C).
    fn test_run(
        &mut self,
        step: &Step,
        t: &TestSpec,
        dir: &Path,
    ) -> Result<std::result::Result<TestRunRecord, String>> {
        let vars = self.vars_for(step);
        let command = interpolate(&t.command.text, &vars, Mode::Shell, &step.label())?;
        let test_cfg = TestConfig {
            command: Some(command.clone()),
            ..TestConfig::default()
        };
        let detected =
            testing::detect::detect_with(self.root(), &test_cfg, &testing::detect::on_path)
                .ok_or_else(|| {
                    Error::usage(format!("{}: the test command is empty", step.label()))
                })?;
        let root = self.setup.ws.root.clone();
        let log = dir.join("test-output.log");
        let mut req = RunRequest::new(&root, detected, dir.join("junit"), &log);
        req.timeout = Some(Duration::from_secs(
            t.timeout.unwrap_or(self.setup.config.test.timeout_s),
        ));
        req.env = self.env_for(step, Some(&vars));
        let spinner = self
            .setup
            .ui
            .spinner(format!("test step {} · `{command}`", step.index));
        let started_at = now();
        let lock = &mut self.lock;
        let mut on_spawn = |pgid: i32| {
            let _ = lock.set_child(Some(pgid));
        };
        req.on_spawn = Some(&mut on_spawn);
        let outcome = testing::run_tests(req);
        drop(spinner);
        self.lock.set_child(None)?;
        let results = match outcome {
            Ok(r) => r,
            Err(Error::Paused(_)) => return Ok(Err("interrupted".into())),
            Err(e) => return Err(e),
        };
        let results_file = dir.join("test-results.json");
        store::write_json(&results_file, &results)?;
        let timed_out = results.exit_code.is_none()
            && results
                .failures
                .iter()
                .any(|f| f.error.starts_with("timed out after"));
        Ok(Ok(TestRunRecord {
            started_at,
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
        }))
    }

    /// The debug command of attempt `k`, given the test run before it.
    fn debug(
        &mut self,
        step: &Step,
        f: &OnFailure,
        k: u32,
        before: &TestRunRecord,
    ) -> Result<DebugEnd> {
        let index = step.index;
        let dir = self.paths.attempt_dir(index, k);
        store::create_dirs(&dir)?;
        let mut vars = self.vars_for(step);
        let log_abs = self.root().join(&before.output_file);
        vars.set_test_output(&read_head(&log_abs)?, &before.output_file);
        vars.set(
            "test.exit_code",
            before.exit_code.map_or("-1".into(), |c| c.to_string()),
        );
        vars.set("test.attempt", k.to_string());
        let label = step.label();

        // A resumed attempt keeps the starting point it recorded.
        let existing = self.rec(index).attempts[k as usize - 1].debug.clone();
        let (head_before, snapshot_before) = match &existing {
            Some(d) => (d.head_before.clone(), d.snapshot_before.clone()),
            None => self.git_before()?,
        };
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
        let mut record = DebugRecord {
            started_at: now(),
            kind,
            agent: match &f.debug {
                Exec::Claude(_) => self.setup.claude.map(|a| a.name.clone()),
                Exec::Shell(_) => None,
            },
            command_file: self.rel(&command_file),
            output_file: self.rel(&output_file),
            head_before: head_before.clone(),
            snapshot_before: snapshot_before.clone(),
            finished: false,
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            cost_usd: None,
            error: None,
            committed: false,
            files_changed: Vec::new(),
            extra: Default::default(),
        };
        self.rec(index).attempts[k as usize - 1].debug = Some(record.clone());
        self.save()?;

        match &f.debug {
            Exec::Shell(t) => {
                let command = interpolate(&t.text, &vars, Mode::Shell, &label)?;
                store::write_atomic(&command_file, command.as_bytes())?;
                let env = self.env_for(step, Some(&vars));
                let Some(outcome) = self.call_shell(&command, &output_file, &env, f.timeout)?
                else {
                    return Ok(DebugEnd::Pause("interrupted".into()));
                };
                record.exit_code = outcome.exit_code;
                record.timed_out = outcome.timed_out;
                record.duration_ms = outcome.duration.as_millis() as u64;
                if !outcome.success() {
                    record.error = Some(format!("debug command {}", outcome.describe()));
                }
            }
            Exec::Claude(t) => {
                if let Some(r) = self.cost_cap_reason() {
                    return Ok(DebugEnd::Stop(r));
                }
                let prompt = interpolate(&t.text, &vars, Mode::Argv, &label)?;
                let agent = self.claude(f.timeout)?;
                let files = CallFiles {
                    prompt: command_file.clone(),
                    output: output_file.clone(),
                };
                let env = self.env_for(step, None);
                let call = match self.call_claude(&agent, &prompt, &vars, &files, &env)? {
                    Ok(c) => c,
                    Err(pause) => return Ok(DebugEnd::Pause(pause)),
                };
                record.exit_code = call.exit_code;
                record.timed_out = call.timed_out;
                record.duration_ms = call.duration_ms;
                record.cost_usd = call.cost_usd;
                if call.failed() {
                    record.error = Some(format!(
                        "{} failed: {}",
                        agent.name,
                        call.error_message.clone().unwrap_or_else(|| "error".into())
                    ));
                }
            }
        }
        let (committed, changed) = self.git_after(&head_before, &snapshot_before)?;
        record.committed = committed;
        record.files_changed = changed;
        record.finished = true;
        let no_change = f.commit_required
            && self.git.is_repo()
            && !record.committed
            && record.files_changed.is_empty();
        let note = if no_change {
            Some("no commit and no change (commit_required): attempt failed".to_string())
        } else {
            record.error.clone()
        };
        self.rec(index).attempts[k as usize - 1].debug = Some(record);
        self.save()?;
        Ok(DebugEnd::Ran { note, no_change })
    }
}

fn on_failure_of(step: &Step) -> Option<&OnFailure> {
    match &step.action {
        Action::Test(t) => t.on_failure.as_ref(),
        Action::Run(_) => None,
    }
}

/// Interpolate a step's string. Variables were checked before the run, so
/// an unknown one here is a bug (or a hand-edited run state).
fn interpolate(template: &str, vars: &Vars, mode: Mode, label: &str) -> Result<String> {
    vars::interpolate(template, vars, mode).map_err(|e| Error::usage(format!("{label}: {e}")))
}

/// The first line of a command, cut to 80 characters, for messages.
fn short(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(80).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// At most `INLINE_OUTPUT_MAX + 1` bytes of a file as text: enough for
/// [`Vars::set_test_output`] to decide between inline and path.
fn read_head(path: &Path) -> Result<String> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut buf = Vec::new();
    f.take(INLINE_OUTPUT_MAX as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `${<id>.output}`: the text (trailing newlines removed) when it is at
/// most 10 KiB, else the file's relative path.
fn inline_or_path(path: &Path, rel: &str) -> Result<String> {
    let text = read_head(path)?;
    if text.len() > INLINE_OUTPUT_MAX {
        Ok(rel.to_string())
    } else {
        Ok(text.trim_end_matches(['\n', '\r']).to_string())
    }
}

/// The newest file matching `pattern` that was written since `since`
/// (relative path). A pattern without `/` matches file names anywhere in
/// the project; with `/` it matches the relative path (`**`, `*`, `?`).
/// `.git`, `.workflow`, `node_modules` and `target` are not searched.
pub fn find_output_file(root: &Path, pattern: &str, since: SystemTime) -> Option<String> {
    let since = since.checked_sub(Duration::from_secs(2)).unwrap_or(since);
    let by_name = !pattern.contains('/');
    let mut best: Option<(SystemTime, String)> = None;
    let walker = walkdir::WalkDir::new(root)
        .max_depth(32)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !matches!(
                    e.file_name().to_str(),
                    Some(".git" | ".workflow" | "node_modules" | "target")
                )
        });
    for entry in walker.filter_map(|e| e.ok()) {
        if !entry.file_type().is_file() {
            continue;
        }
        let rel: PathBuf = entry.path().strip_prefix(root).ok()?.to_path_buf();
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let subject = if by_name {
            entry.file_name().to_string_lossy().into_owned()
        } else {
            rel.clone()
        };
        if !testing::run::glob_match(pattern, &subject) {
            continue;
        }
        let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        if modified < since {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(t, p)| modified > *t || (modified == *t && rel > *p))
        {
            best = Some((modified, rel));
        }
    }
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_by_name_or_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::create_dir_all(root.join("specs/temp")).unwrap();
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        std::fs::write(root.join("specs/temp/01-coverage-improvements.md"), "x").unwrap();
        std::fs::write(root.join("node_modules/9-coverage-improvements.md"), "x").unwrap();
        let since = SystemTime::now() - Duration::from_secs(60);
        assert_eq!(
            find_output_file(root, "*-coverage-improvements.md", since).as_deref(),
            Some("specs/temp/01-coverage-improvements.md")
        );
        assert_eq!(
            find_output_file(root, "specs/**/*.md", since).as_deref(),
            Some("specs/temp/01-coverage-improvements.md")
        );
        assert_eq!(
            find_output_file(root, "*.md", SystemTime::now() + Duration::from_secs(60)),
            None
        );
        assert_eq!(find_output_file(root, "*.txt", old), None);
    }

    #[test]
    fn inline_values_trim_and_switch_to_paths() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("a.log");
        std::fs::write(&small, "built\n\n").unwrap();
        assert_eq!(inline_or_path(&small, "a.log").unwrap(), "built");
        let big = dir.path().join("b.log");
        std::fs::write(&big, "x".repeat(INLINE_OUTPUT_MAX + 1)).unwrap();
        assert_eq!(inline_or_path(&big, "b.log").unwrap(), "b.log");
        assert_eq!(read_head(&big).unwrap().len(), INLINE_OUTPUT_MAX + 1);
        assert_eq!(read_head(&dir.path().join("none")).unwrap(), "");
    }

    #[test]
    fn session_ids_from_names() {
        assert_eq!(base_session_id("ci"), "WFS-run-ci");
        assert_eq!(
            base_session_id("Test & Debug loop"),
            "WFS-run-test-debug-loop"
        );
    }
}
