//! Phases 1–4 of `wfx test-fix-gen` (DESIGN.md §4): session start,
//! context gather, analysis and task generation.
//!
//! Each phase is recorded in `workflow-session.json` before and after it
//! runs; a run on a session whose phases are partly done continues from the
//! first phase that is not `completed`. Every phase's output is a pure
//! function of the files before it, so an interrupted and resumed run
//! writes the same artifacts as an uninterrupted one.

pub mod analysis;
pub mod context;
pub mod plan;
pub mod session_start;
pub mod tasks;

use std::path::Path;
use std::time::Instant;

use chrono::Utc;

use crate::artifacts::config::{Config, Preset};
use crate::artifacts::context::ContextPackage;
use crate::artifacts::session::{InputMode, PhaseStatus, WorkflowSession};
use crate::engine::event::{
    CoverageTargets, Event, GateThresholds, PhaseEvent, PhaseFinished, PhasesResumed, Planned,
    PlannedTask, Thresholds,
};
use crate::engine::sink::Sinks;
use crate::error::{Error, Result};
use crate::render::Renderer;
use crate::session::store::{self, SessionLock};
use crate::session::{SessionPaths, Workspace};
use crate::ui::Printer;
use plan::{CycleOptions, Plan};
use session_start::Start;

/// Names of phases 1–4 for messages.
pub const PHASE_TITLES: [&str; 4] = [
    "session start",
    "context gather",
    "analysis",
    "task generation",
];

/// A `test-fix-gen` run.
#[derive(Debug, Clone, Default)]
pub struct GenRequest {
    /// INPUT: a WFS- id, a .md file or a description.
    pub input: String,
    /// Flags for phase 5, recorded in the session.
    pub options: CycleOptions,
    /// Stop after this phase (1–4), leaving the rest for a later run.
    pub stop_after_phase: Option<u8>,
    /// Phase 5 follows: a new session is refused before phase 1 writes
    /// anything when the loop could not start ([`crate::cycle::preflight`]).
    pub preflight: bool,
}

/// What a run did.
#[derive(Debug)]
pub struct GenOutcome {
    pub session_id: String,
    pub paths: SessionPaths,
    /// The session already existed and was continued.
    pub resumed: bool,
    /// Phases this run executed.
    pub phases_run: Vec<u8>,
    /// Set when `stop_after_phase` ended the run early.
    pub stopped_after: Option<u8>,
    /// The plan, once phase 4 is done.
    pub plan: Option<Plan>,
    pub warnings: Vec<String>,
}

/// Claude-Code-Workflow's dashboard and agents look for a session's
/// context only in `.process/context-package.json`. In session mode wfx's
/// package is `test-context-package.json` (DESIGN.md §3), so the same
/// package is also written there, for them; wfx itself never reads that
/// copy in session mode (docs/interop.md).
fn write_ccw_context_copy(
    paths: &SessionPaths,
    mode: InputMode,
    package: &ContextPackage,
) -> Result<()> {
    match mode {
        InputMode::Session => store::write_json(&paths.context_package(), package),
        InputMode::Prompt => Ok(()),
    }
}

/// The context package file of a session of this mode.
pub fn context_package_path(paths: &SessionPaths, mode: InputMode) -> std::path::PathBuf {
    match mode {
        InputMode::Session => paths.test_context_package(),
        InputMode::Prompt => paths.context_package(),
    }
}

fn requirements_path(paths: &SessionPaths) -> std::path::PathBuf {
    paths.process_dir().join("requirements.md")
}

/// Reject a `--fix-agent` the config cannot run, before anything is created.
fn check_fix_agent(config: &Config, options: &CycleOptions) -> Result<()> {
    if let Some(a) = &options.fix_agent
        && a != "manual"
        && Preset::from_name(a).is_none()
        && !config.agents.definitions.contains_key(a)
    {
        let mut known: Vec<String> = Preset::ALL.iter().map(|p| p.as_str().to_string()).collect();
        known.extend(config.agents.definitions.keys().cloned());
        known.push("manual".into());
        return Err(Error::usage(format!(
            "--fix-agent {a}: no such agent (known: {})",
            known.join(", ")
        )));
    }
    Ok(())
}

fn cycle_options_of(session: &WorkflowSession) -> CycleOptions {
    session.cycle_options.clone().unwrap_or_default()
}

fn set_phase(
    paths: &SessionPaths,
    session: &mut WorkflowSession,
    phase: u8,
    status: PhaseStatus,
) -> Result<()> {
    let now = Utc::now();
    if let Some(p) = session.phase_mut(phase) {
        p.status = status;
        match status {
            PhaseStatus::InProgress => {
                p.started_at = Some(now);
                p.completed_at = None;
            }
            PhaseStatus::Completed | PhaseStatus::Failed => p.completed_at = Some(now),
            _ => {}
        }
    }
    session.updated_at = now;
    store::write_json(&paths.session_json(), session)
}

fn phase_done(session: &WorkflowSession, phase: u8) -> bool {
    session
        .phase(phase)
        .is_some_and(|p| p.status == PhaseStatus::Completed)
}

/// The test framework as the runner detects it.
fn detect_framework(root: &Path, config: &Config) -> Option<context::FrameworkFacts> {
    crate::testing::detect::detect(root, &config.test).map(|d| context::FrameworkFacts {
        framework: d.framework.as_str().to_string(),
        command: d.command,
        signals: d.signals,
        test_pattern: d.test_pattern,
        test_directory: d.test_directory,
    })
}

struct Running {
    paths: SessionPaths,
    session: WorkflowSession,
    lock: SessionLock,
}

/// Run phases 1–4 (or continue them), telling `sinks` each phase's start
/// and end.
pub fn run(ws: &Workspace, req: &GenRequest, sinks: &mut Sinks) -> Result<GenOutcome> {
    let config = ws.load_config()?;
    check_fix_agent(&config, &req.options)?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| ws.root.clone());
    let start = session_start::resolve(ws, &req.input, &cwd)?;
    if req.preflight && matches!(start, Start::New(_)) {
        crate::cycle::preflight(ws, &req.options)?;
    }
    let mut phases_run = Vec::new();
    let mut warnings = Vec::new();
    let (mut run, resumed, source) = match start {
        Start::New(new) => open_new(ws, new, req, sinks, &mut phases_run)?,
        Start::Resume(sref) => open_resumed(ws, &sref, req, sinks, &mut phases_run)?,
    };
    let stop = |n: u8| req.stop_after_phase.is_some_and(|s| s <= n);
    let outcome = |run: &Running,
                   phases_run: Vec<u8>,
                   stopped: Option<u8>,
                   plan: Option<Plan>,
                   warnings: Vec<String>| GenOutcome {
        session_id: run.paths.id.clone(),
        paths: run.paths.clone(),
        resumed,
        phases_run,
        stopped_after: stopped,
        plan,
        warnings,
    };
    if stop(1) {
        return Ok(outcome(&run, phases_run, Some(1), None, warnings));
    }
    let renderer = Renderer::new(Some(&ws.templates_dir()));
    let pkg_path = context_package_path(&run.paths, run.session.mode);

    // Phase 2: context gather.
    if !phase_done(&run.session, 2) {
        let started = begin_phase(&mut run, 2, sinks)?;
        let result = gather_phase(
            ws,
            &run,
            &config,
            &pkg_path,
            source.as_ref(),
            sinks.printer(),
            &mut warnings,
        );
        finish_phase(&mut run, 2, started, result, sinks)?;
        phases_run.push(2);
    }
    if stop(2) {
        return Ok(outcome(&run, phases_run, Some(2), None, warnings));
    }

    let pkg: ContextPackage = store::read_json(&pkg_path, &ws.rel(&pkg_path))?;
    let requirements = read_requirements(&run.paths, &run.session);
    let plan = plan::build(
        ws,
        &run.paths,
        &run.session,
        &pkg,
        &config,
        &cycle_options_of(&run.session),
        &requirements,
    );

    // Phase 3: analysis.
    if !phase_done(&run.session, 3) {
        let started = begin_phase(&mut run, 3, sinks)?;
        let result = analysis::write(ws, &renderer, &run.paths, &plan, &config, &mut run.lock);
        let result = result.map(|review| {
            if let (Some(r), Some(p)) = (review, run.session.phase_mut(3)) {
                p.extra.insert(
                    "agent_review".into(),
                    serde_json::to_value(&r).unwrap_or_default(),
                );
                if r.agent.is_none() {
                    warnings.push(format!(
                        "the analysis agents failed ({}); TEST_ANALYSIS_RESULTS.md is the deterministic analysis",
                        r.attempts.join("; ")
                    ));
                }
            }
        });
        finish_phase(&mut run, 3, started, result, sinks)?;
        phases_run.push(3);
    }
    if stop(3) {
        return Ok(outcome(&run, phases_run, Some(3), None, warnings));
    }

    // Phase 4: task generation.
    if !phase_done(&run.session, 4) {
        let started = begin_phase(&mut run, 4, sinks)?;
        // The status stays `planning` until phase 5 starts (DESIGN.md
        // §10.6: CCW shows `planning` until execution), also with
        // `--plan-only`.
        let result = tasks::write_all(&renderer, &run.paths, &plan).map(|_| ());
        finish_phase(&mut run, 4, started, result, sinks)?;
        phases_run.push(4);
    }
    let stopped = stop(4).then_some(4);
    Ok(outcome(&run, phases_run, stopped, Some(plan), warnings))
}

/// Phase 1 of a new session: create it and its lock.
fn open_new(
    ws: &Workspace,
    new: session_start::NewSession,
    req: &GenRequest,
    sinks: &mut Sinks,
    phases_run: &mut Vec<u8>,
) -> Result<(Running, bool, Option<context::SourceSession>)> {
    let started = Instant::now();
    let now = Utc::now();
    let (paths, lock, mut session) = session_start::create(ws, &new, req.options.clone(), now)?;
    sinks.emit(
        &Event::PhaseStarted(PhaseEvent {
            session_id: paths.id.clone(),
            phase: 1,
            title: PHASE_TITLES[0].into(),
            mode: Some(new.mode),
        }),
        now,
    );
    if new.requirements_text != new.description {
        store::write_atomic(&requirements_path(&paths), new.requirements_text.as_bytes())?;
    }
    set_phase(&paths, &mut session, 1, PhaseStatus::Completed)?;
    sinks.emit(
        &phase_finished(&paths, 1, started, PhaseStatus::Completed),
        Utc::now(),
    );
    phases_run.push(1);
    Ok((
        Running {
            paths,
            session,
            lock,
        },
        false,
        new.source,
    ))
}

/// A session to continue: locked, checked, its options merged with these.
fn open_resumed(
    ws: &Workspace,
    sref: &crate::session::SessionRef,
    req: &GenRequest,
    sinks: &mut Sinks,
    phases_run: &mut Vec<u8>,
) -> Result<(Running, bool, Option<context::SourceSession>)> {
    let started = Instant::now();
    let lock = SessionLock::acquire(&sref.paths.lock(), sref.id())?;
    // Nothing is written to a session with a damaged artifact.
    ws.ensure_session_valid(&sref.paths)?;
    let mut session = ws.load_session(sref)?;
    let mut opts = cycle_options_of(&session);
    opts.merge(&req.options);
    session.cycle_options = Some(opts);
    session.resumed_at = Some(Utc::now());
    store::write_json(&sref.paths.session_json(), &session)?;
    let first = (1..=4).find(|&n| !phase_done(&session, n));
    sinks.emit(
        &Event::PhasesResumed(PhasesResumed {
            session_id: sref.id().to_string(),
            phase: first,
            title: first.map(|n| PHASE_TITLES[n as usize - 1].to_string()),
        }),
        Utc::now(),
    );
    if !phase_done(&session, 1) {
        // Phase 1 only writes the session file; finishing it is all
        // that is left.
        set_phase(&sref.paths, &mut session, 1, PhaseStatus::Completed)?;
        let done = phase_finished(&sref.paths, 1, started, PhaseStatus::Completed);
        sinks.emit(&done, Utc::now());
        phases_run.push(1);
    }
    let source = match (&session.source_session_id, session.mode) {
        (Some(src), InputMode::Session) if !phase_done(&session, 2) => {
            let sref = ws.find(src)?;
            Some(session_start::read_source_session(ws, &sref)?)
        }
        _ => None,
    };
    Ok((
        Running {
            paths: sref.paths.clone(),
            session,
            lock,
        },
        true,
        source,
    ))
}

/// Phase 2: gather the context package, or reuse this session's.
fn gather_phase(
    ws: &Workspace,
    run: &Running,
    config: &Config,
    pkg_path: &Path,
    source: Option<&context::SourceSession>,
    ui: &Printer,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let existing: Option<ContextPackage> = match store::read_json_opt(pkg_path, &ws.rel(pkg_path)) {
        Ok(p) => p,
        Err(Error::Invalid(_)) => None,
        Err(e) => return Err(e),
    };
    if existing
        .as_ref()
        .is_some_and(|p| p.metadata.session_id == run.paths.id)
    {
        ui.detail(format!("reusing {}", ws.rel(pkg_path)));
        return Ok(());
    }
    let requirements = read_requirements(&run.paths, &run.session);
    let gathered = context::gather(&context::GatherInput {
        root: &ws.root,
        session_id: &run.paths.id,
        description: &requirements,
        framework: detect_framework(&ws.root, config),
        source,
    })?;
    warnings.extend(gathered.warnings);
    store::write_json(pkg_path, &gathered.package)?;
    write_ccw_context_copy(&run.paths, run.session.mode, &gathered.package)
}

/// Phase `n` (2–4) starts: told, then recorded.
fn begin_phase(run: &mut Running, n: u8, sinks: &mut Sinks) -> Result<Instant> {
    let event = PhaseEvent {
        session_id: run.paths.id.clone(),
        phase: n,
        title: PHASE_TITLES[n as usize - 1].into(),
        mode: None,
    };
    sinks.emit(&Event::PhaseStarted(event), Utc::now());
    set_phase(&run.paths, &mut run.session, n, PhaseStatus::InProgress)?;
    Ok(Instant::now())
}

fn phase_finished(paths: &SessionPaths, n: u8, started: Instant, status: PhaseStatus) -> Event {
    Event::PhaseFinished(PhaseFinished {
        session_id: paths.id.clone(),
        phase: n,
        title: PHASE_TITLES[n as usize - 1].into(),
        status,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Phase `n` ended with `result`: recorded, then told.
fn finish_phase(
    run: &mut Running,
    n: u8,
    started: Instant,
    result: Result<()>,
    sinks: &mut Sinks,
) -> Result<()> {
    let (paths, session) = (&run.paths, &mut run.session);
    let status = match &result {
        Ok(()) => {
            set_phase(paths, session, n, PhaseStatus::Completed)?;
            PhaseStatus::Completed
        }
        Err(_) => {
            // Record the failure; the original error is what the user sees.
            let _ = set_phase(paths, session, n, PhaseStatus::Failed);
            PhaseStatus::Failed
        }
    };
    sinks.emit(&phase_finished(paths, n, started, status), Utc::now());
    result
}

/// The whole request text: `.process/requirements.md` when the input was
/// a file (or a source session), else the description.
fn read_requirements(paths: &SessionPaths, session: &WorkflowSession) -> String {
    std::fs::read_to_string(requirements_path(paths))
        .unwrap_or_else(|_| session.description.clone())
}

/// The `planned` event (and `--plan-only --json` document) of a plan.
pub fn planned(out: &GenOutcome, plan: &Plan) -> Planned {
    let tasks = tasks::initial_tasks(plan)
        .into_iter()
        .map(|(_, t)| PlannedTask {
            id: t.id,
            title: t.title,
            agent: t.meta.agent,
        })
        .collect();
    Planned {
        session_id: out.session_id.clone(),
        resumed: out.resumed,
        phases_run: out.phases_run.clone(),
        mode: plan.session.mode.to_string(),
        input: plan.session.input.clone(),
        tasks,
        thresholds: Thresholds {
            code_validation: GateThresholds {
                critical: plan.limits.gate_critical,
                error: plan.limits.gate_errors,
                warning: plan.limits.gate_warnings,
            },
            coverage: CoverageTargets {
                line: plan.coverage.target_line,
                branch: plan.coverage.target_branch,
                function: plan.coverage.target_function,
            },
            pass_threshold: plan.limits.pass_threshold,
            max_iterations: plan.limits.max_iterations,
        },
        artifacts: plan.artifacts.clone(),
        next_command: plan.next.next_command.clone(),
    }
}

/// The summary printed after phase 4 (REFERENCE.md), from its template.
pub fn render_summary(ws: &Workspace, plan: &Plan) -> Result<String> {
    Renderer::new(Some(&ws.templates_dir())).render("test-fix-gen-summary.md.j2", plan)
}
