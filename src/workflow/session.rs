//! The set-up of a `wfx run` session around the machine: find the run
//! sessions of a workflow, create a new one or fit a saved one to the
//! (possibly edited) workflow, lock it, then hand over to the engine.

use std::collections::BTreeMap;

use chrono::Utc;

use super::machine::{RunDoc, RunMachine, RunSession, RunStop};
use super::model::{Action, Exec, Step, Workflow};
use super::paths::RunPaths;
use crate::agents::ResolvedAgent;
use crate::artifacts::config::Config;
use crate::artifacts::run_state::{RunState, RunStatus, StepKind, StepRecord, TestPhase};
use crate::artifacts::session::{GitInfo, InputMode, SessionStatus, WorkflowSession};
use crate::engine::open::Opened;
use crate::engine::{DriverConfig, Ending, Event, Machine, Ports, Sinks};
use crate::error::{Error, Result};
use crate::git::Checkpoints;
use crate::git::short_commit;
use crate::session::store;
use crate::session::{SessionRef, Workspace, id};
use crate::ui::Printer;

/// `type` and `workflow_type` of a run session's `workflow-session.json`.
pub const SESSION_KIND: &str = crate::session::RUN_KIND;
pub const WORKFLOW_TYPE: &str = "yaml_workflow";

/// How a run ended, with what the summary shows.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub ending: Ending,
    pub state: RunState,
}

/// `WFS-run-<slug of the name>`.
pub fn base_session_id(name: &str) -> String {
    format!("WFS-{}", id::slugify(&format!("run-{name}")))
}

/// Whether `id` names a run session of the workflow whose base id is
/// `base`: `base` itself or `base-N`.
fn is_run_of(id: &str, base: &str) -> bool {
    id == base
        || id
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The run sessions of a workflow in `active/`: `base` and `base-N`, with
/// their run state (`None` when the run died before writing one).
pub fn run_sessions(ws: &Workspace, base: &str) -> Result<Vec<(SessionRef, Option<RunState>)>> {
    let mut out = Vec::new();
    for s in ws.list(false)? {
        if !is_run_of(s.id(), base) {
            continue;
        }
        let paths = RunPaths::new(s.paths.clone());
        match ws.load_session(&s) {
            Ok(session) if session.kind == SESSION_KIND => {}
            Ok(_) => continue,
            // A run killed before its first steps were put in place:
            // they are in its journal, which the resume replays under the
            // session's lock (its copy of the workflow says whose it is).
            Err(_) if journaled_run(&paths) => {
                out.push((s, None));
                continue;
            }
            Err(_) => continue,
        }
        let state_path = paths.run_state();
        let state = store::read_json_opt::<RunState>(&state_path, &ws.rel(&state_path))?;
        out.push((s, state));
    }
    Ok(out)
}

/// A run session whose session file is not in place yet but whose
/// journal holds its first steps.
fn journaled_run(paths: &RunPaths) -> bool {
    let journal = crate::engine::journal::journal_path(&paths.session.dir);
    paths.workflow_copy().is_file()
        && std::fs::symlink_metadata(journal).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Runs of the workflow whose archive a kill cut short: moved to
/// `archives/` but not yet in its manifest (their files may still point
/// into `active/`). Each is opened as a run would be — locked (skipped
/// while a live run holds it), its journal replayed, what the killed run
/// left swept — and its archive finished as `wfx session complete` does.
/// Their ids.
pub fn finish_cut_archives(ws: &Workspace, ui: &Printer, base: &str) -> Result<Vec<String>> {
    let mut finished = Vec::new();
    for s in ws.cut_archives(|s| is_run_of(s.id(), base))? {
        if ws
            .load_session(&s)
            .is_ok_and(|session| session.kind != SESSION_KIND)
        {
            continue;
        }
        let mut sinks = Sinks::new(ui);
        let finish = crate::engine::open::open(ws, &s.paths, &mut sinks)
            .and_then(|_opened| ws.archive(s.id()));
        match finish {
            Ok(_) => finished.push(s.id().to_string()),
            Err(e) => ui.warn(format!(
                "{}: its archive was cut short and is not finished: {e}",
                s.id()
            )),
        }
    }
    Ok(finished)
}

/// The machine of a run of `setup`'s workflow in `paths`; `repo`: commits
/// can be checked.
fn run_machine(setup: &Setup, paths: RunPaths, repo: bool) -> RunMachine {
    RunMachine {
        ws: Workspace::new(setup.ws.root.clone()),
        wf: setup.wf.clone(),
        paths,
        file_arg: setup.file_arg.to_string(),
        file: setup.file.to_string(),
        config: setup.config.clone(),
        claude: setup.claude.cloned(),
        repo,
    }
}

/// How a run whose archive [`finish_cut_archives`] finished had ended, as
/// the run itself would have reported it.
pub fn finished_outcome(setup: &Setup, id: &str) -> Result<RunOutcome> {
    let ws = setup.ws;
    let sref = ws.find(id)?;
    let paths = RunPaths::new(sref.paths.clone());
    let state_path = paths.run_state();
    let state = store::read_json_opt::<RunState>(&state_path, &ws.rel(&state_path))?
        .ok_or_else(|| Error::usage(format!("{id}: no run state in {}", ws.rel(&state_path))))?;
    let session = ws.load_session(&sref)?;
    let machine = run_machine(setup, paths, false);
    let run = RunSession {
        state,
        session,
        stop: Some(RunStop::Finished),
        now: Utc::now(),
        outbox: Vec::new(),
        output_heads: BTreeMap::new(),
        archived: true,
    };
    let ending = machine.ending(&run, &RunStop::Finished);
    Ok(RunOutcome {
        ending,
        state: run.state,
    })
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
    /// The repository as the checks before the run opened it, for the run
    /// to take instead of opening it again (each open reads git's config
    /// files and resolves the path: some 60 system calls).
    pub git: std::cell::Cell<Option<Checkpoints>>,
}

impl Setup<'_> {
    /// The project's repository: the one the checks opened, else opened now.
    fn checkpoints(&self) -> Result<Checkpoints> {
        match self.git.take() {
            Some(git) => Ok(git),
            None => Checkpoints::open(&self.ws.root),
        }
    }
}

/// Start a new run session and run it.
pub fn start(setup: &Setup, base_id: &str) -> Result<RunOutcome> {
    let ws = setup.ws;
    let session_id = id::unique_id(base_id, |id| ws.id_taken(id));
    let paths = RunPaths::new(ws.active(&session_id));
    let git = setup.checkpoints()?;
    // The `Wfx-Run` of the commits wfx makes (the squashed one), as the
    // cycle's: made once, recorded in the session.
    let run = git.is_repo().then(crate::git::new_run_id);
    let git = match &run {
        Some(run) => git.with_run(run),
        None => git,
    };
    fs_err::create_dir_all(paths.session.process_dir())
        .map_err(|e| Error::io(paths.session.process_dir(), e))?;
    let mut sinks = Sinks::new(setup.ui);
    let opened = match claimed(ws, &paths, &mut sinks) {
        Ok(o) => o,
        Err(e) => {
            // Refused before anything was written: leave no half session.
            let _ = std::fs::remove_dir_all(&paths.session.dir);
            return Err(e);
        }
    };
    opened.apply_artifact_policy(&paths.session, setup.config.git.artifacts, None)?;
    // Not synced, made in place: a resume compares the copy with the
    // workflow file and writes it again when it differs (a power loss or
    // a kill that left it empty or short costs only the "changed since
    // the run started" warning).
    store::write_new(&paths.workflow_copy(), setup.text.as_bytes())?;
    let now = Utc::now();
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
            run_id: run,
            ..GitInfo::default()
        },
        phases: Vec::new(),
        wfx_version: crate::VERSION.to_string(),
        cycle_options: None,
        extra: Default::default(),
    };
    let state = new_state(setup, &session_id, now, setup.vars.clone(), &paths);
    drive(setup, paths, state, session, opened, git, &mut sinks, false)
}

/// Open a run session (see [`crate::engine::open`]) and claim the
/// project's work tree for it.
fn claimed(ws: &Workspace, paths: &RunPaths, sinks: &mut Sinks) -> Result<Opened> {
    let mut opened = crate::engine::open::open(ws, &paths.session, sinks)?;
    opened
        .lock
        .claim_work_tree(&ws.work_tree_lock(), &ws.root)?;
    opened.sweep_git_locks(&ws.root, sinks);
    Ok(opened)
}

/// The run state of a run that starts at step 1.
fn new_state(
    setup: &Setup,
    session_id: &str,
    now: crate::artifacts::Timestamp,
    vars: BTreeMap<String, String>,
    paths: &RunPaths,
) -> RunState {
    RunState {
        session_id: session_id.to_string(),
        workflow_name: setup.name.to_string(),
        workflow_file: setup.file.to_string(),
        status: RunStatus::Running,
        current_step: 1,
        started_at: now,
        updated_at: now,
        completed_at: None,
        stop_reason: None,
        vars,
        outputs: BTreeMap::new(),
        cost_usd: 0.0,
        steps: setup
            .wf
            .steps
            .iter()
            .map(|s| pending_record(s, paths, setup.ws))
            .collect(),
        extra: Default::default(),
    }
}

/// Continue an unfinished run at the step, attempt and phase where it stopped.
pub fn resume(setup: &Setup, sref: SessionRef, state: Option<RunState>) -> Result<RunOutcome> {
    let mut sinks = Sinks::new(setup.ui);
    let r = prepare_resume(setup, sref, state, &mut sinks)?;
    drive(
        setup, r.paths, r.state, r.session, r.opened, r.git, &mut sinks, true,
    )
}

/// A run ready to go on: its session opened and fitted to the workflow.
pub(crate) struct Resumable {
    pub paths: RunPaths,
    pub state: RunState,
    pub session: WorkflowSession,
    pub opened: Opened,
    pub git: Checkpoints,
}

/// Open an unfinished run (see [`crate::engine::open`]) and fit its saved
/// state to the (possibly edited) workflow.
pub(crate) fn prepare_resume(
    setup: &Setup,
    sref: SessionRef,
    state: Option<RunState>,
    sinks: &mut Sinks,
) -> Result<Resumable> {
    let ws = setup.ws;
    let paths = RunPaths::new(sref.paths.clone());
    let opened = claimed(ws, &paths, sinks)?;
    // The state read before the lock may be older than the journal's.
    let state = if opened.replayed > 0 {
        let path = paths.run_state();
        store::read_json_opt::<RunState>(&path, &ws.rel(&path))?.or(state)
    } else {
        state
    };
    let git = setup.checkpoints()?;
    let now = Utc::now();
    let mut state = match state {
        Some(s) => s,
        None => RunState {
            steps: Vec::new(),
            ..new_state(setup, sref.id(), now, BTreeMap::new(), &paths)
        },
    };
    // `--var` given again overrides the values the run started with.
    for (k, v) in setup.vars {
        state.vars.insert(k.clone(), v.clone());
    }
    let saved = std::fs::read_to_string(paths.workflow_copy()).unwrap_or_default();
    if saved != setup.text {
        if !saved.is_empty() {
            sinks.emit(
                &Event::warning(format!(
                    "{} changed since the run started; continuing at {} with the new definition",
                    setup.file,
                    position(&state, Some(setup.wf))
                )),
                now,
            );
        }
        store::write_atomic(&paths.workflow_copy(), setup.text.as_bytes())?;
    }
    reconcile_steps(&mut state, setup.wf, &paths, ws);
    opened.apply_artifact_policy(&paths.session, setup.config.git.artifacts, None)?;
    let mut session = ws.load_session(&sref)?;
    // A session from before runs had an id gets one now; it is written
    // with the session's next state.
    let git = match (git.is_repo(), &session.git.run_id) {
        (false, _) => git,
        (true, Some(run)) => git.with_run(run),
        (true, None) => {
            let run = crate::git::new_run_id();
            session.git.run_id = Some(run.clone());
            git.with_run(&run)
        }
    };
    if let Some(then) = session.git.paused_head.take() {
        let now = git.head()?;
        if session.git.foreign_commits.is_none() && now.as_deref() != Some(then.as_str()) {
            session.git.foreign_commits = Some(format!(
                "HEAD moved from {} to {} while the run was paused",
                short_commit(&then),
                now.as_deref().map_or("nothing", short_commit)
            ));
        }
    }
    Ok(Resumable {
        paths,
        state,
        session,
        opened,
        git,
    })
}

#[allow(clippy::too_many_arguments)]
fn drive(
    setup: &Setup,
    paths: RunPaths,
    state: RunState,
    session: WorkflowSession,
    opened: Opened,
    git: Checkpoints,
    sinks: &mut Sinks,
    resumed: bool,
) -> Result<RunOutcome> {
    let ws = setup.ws;
    let machine = run_machine(setup, paths.clone(), git.is_repo());
    let mut run = RunSession {
        state,
        session,
        stop: None,
        now: Utc::now(),
        outbox: Vec::new(),
        output_heads: BTreeMap::new(),
        archived: false,
    };
    let mut ports = opened.into_ports(ws, ws.root.clone(), git, paths.session.dir.clone());
    let config = DriverConfig {
        max_cost_usd: setup.config.agents.max_cost_usd,
        resumed,
        fold_agent_commits: false,
        watch: false,
    };
    let ran = crate::engine::run(&machine, &mut run, &mut ports, sinks, &config);
    // What the run's end adds goes through the session transaction too.
    match &ran {
        Ok(_) if run.state.status == RunStatus::Paused && ports.cp.is_repo() => {
            // Its resume compares (`git.squash` must not fold a commit
            // made meanwhile).
            run.session.git.paused_head = ports.cp.head()?;
            run.touch(RunDoc::Session);
            ports.commit_step(machine.documents(&mut run)?)?;
        }
        Ok(_) => {}
        Err(e) => {
            // Whatever stopped the run, it stays resumable (when its
            // directory is still there to say so).
            if paths.session.dir.is_dir() && run.state.status.is_unfinished() {
                run.state.status = RunStatus::Paused;
                run.state.stop_reason = Some(e.to_string());
                run.touch(RunDoc::State);
                let _ = machine
                    .documents(&mut run)
                    .and_then(|docs| ports.commit_step(docs));
            }
        }
    }
    ran.map(|ending| RunOutcome {
        ending,
        state: run.state,
    })
}

pub(crate) fn pending_record(step: &Step, paths: &RunPaths, ws: &Workspace) -> StepRecord {
    StepRecord {
        id: step.id.clone(),
        max_attempts: match &step.action {
            Action::Test(t) => t.on_failure.as_ref().map_or(0, |f| f.max_attempts),
            Action::Run(_) => 0,
        },
        ..StepRecord::new(
            step.index,
            step_kind(step),
            ws.rel(&paths.step_dir(step.index)),
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_from_names() {
        assert_eq!(base_session_id("ci"), "WFS-run-ci");
        assert_eq!(
            base_session_id("Test & Debug loop"),
            "WFS-run-test-debug-loop"
        );
    }
}
