//! Phase 5: the test → analyse → fix → retest state machine (DESIGN.md §5).
//!
//! [`machine::CycleMachine`] is a pure machine over [`state::CycleState`]
//! (the typed `iteration-state.json` and the artifacts it refers to): the
//! engine's driver asks it for the next effect, performs it, folds the
//! observation back in and commits the step durably. Every action is
//! idempotent or detects that it already happened (commits and reverts by
//! their trailers, a fix by its persisted snapshot, a test run by simply
//! running again), so `kill -9` at any instant followed by
//! `--resume-session` ends as an uninterrupted run.
//!
//! This module is the set-up around it: find and lock the session, check
//! it can run, resolve agents and limits, then hand over to the engine.
//! Entry point: [`run`]. `docs/cycle.md` describes the flow for users.

pub mod decide;
pub mod docs;
pub mod gates;
pub mod guard;
mod initial;
pub mod machine;
pub mod manual;
mod report;
#[cfg(test)]
pub(crate) mod scenarios;
mod speculative;
pub mod state;
pub mod transitions;
pub mod weaken;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;

use crate::agents::{self, Role};
use crate::artifacts::iteration_state::{Action, IterationState, LoopStatus};
use crate::artifacts::session::{PhaseStatus, SessionStatus, WorkflowSession};
use crate::artifacts::task::{TaskStatus, TaskType};
use crate::engine::open::Opened;
use crate::engine::real::RealPorts;
use crate::engine::{DriverConfig, Ending, Event, Sinks};
use crate::error::{Error, Result};
use crate::git::Checkpoints;
use crate::phases::plan::CycleOptions;
use crate::render::Renderer;
use crate::session::store;
use crate::session::{Location, SessionRef, Several, Workspace};
use crate::ui::Printer;

use decide::Limits;
use machine::CycleMachine;
use state::CycleState;

/// The initial tasks of phase 5, in order (DESIGN.md §5.7).
pub const INITIAL_TASKS: [&str; 3] = ["IMPL-001", "IMPL-001.3", "IMPL-001.5"];
/// The fix-loop task.
pub const LOOP_TASK: &str = "IMPL-002";

/// A `wfx test-cycle-execute` run (or the phase-5 part of `test-fix-gen`).
#[derive(Debug, Clone, Default)]
pub struct CycleRequest {
    /// `--resume-session`; `None` = the single active test session.
    pub session: Option<String>,
    /// Flags given now; merged over the ones recorded in the session.
    pub options: CycleOptions,
    /// `--watch`: wait in-process for a person's fix, retesting when files
    /// are saved (or Enter is pressed). Not recorded in the session.
    pub watch: bool,
}

/// Run (or resume) phase 5 of a test session until it completes, blocks
/// or pauses. Errors are usage problems (exit 2) and internal failures;
/// every other ending is an [`Ending`] with its exit code (the engine has
/// sent the final `done` event).
pub fn run(ws: &Workspace, req: &CycleRequest, ui: &Printer) -> Result<Ending> {
    crate::process::install_interrupt_handler();
    let mut sinks = Sinks::new(ui);
    let mut ready = prepare(ws, req, &mut sinks)?;
    crate::engine::run(
        &ready.machine,
        &mut ready.state,
        &mut ready.ports,
        &mut sinks,
        &ready.driver,
    )
}

/// A cycle ready for the engine: the session opened, every refusal made.
pub(crate) struct Ready<'a> {
    pub machine: CycleMachine,
    pub state: CycleState,
    pub ports: RealPorts<'a>,
    pub driver: DriverConfig,
}

/// Open the session (see [`crate::engine::open`]), check it can run and
/// resolve agents, limits and where the code is.
pub(crate) fn prepare<'a>(
    ws: &'a Workspace,
    req: &CycleRequest,
    sinks: &mut Sinks,
) -> Result<Ready<'a>> {
    let mut config = ws.load_config()?;
    let (sref, mut opened, mut session) = open_session(ws, req, sinks)?;
    let options = record_options(&sref, &mut session, &req.options)?;
    let fix_agent =
        agents::config::role_agent(&config.agents, Role::Fix, options.fix_agent.as_deref())?;
    if req.watch
        && let Some(agent) = &fix_agent
    {
        // Accepted, so a command line kept for manual sessions works for
        // every session; said, so nobody waits for a watcher.
        sinks.emit(
            &Event::warning(format!(
                "--watch is ignored: the fix agent {} makes the fixes; it applies when a person does (--fix-agent manual)",
                agent.name
            )),
            Utc::now(),
        );
    }
    let chain = agents::config::analysis_chain(&config.agents)?;
    let tasks = ws.load_tasks(&sref.paths)?;
    let loaded = ws.load_iteration_state(&sref)?;
    let limits = limits_of(&config, &options, &tasks);
    let history = load_history(ws, &sref)?;
    if let Some(st) = &loaded {
        check_resumable(sref.id(), sref.location, st, &session, &history, &limits)?;
    }
    let resumed = loaded.is_some();
    let worktree = place_code(ws, &sref, &options, &mut session, &mut opened, sinks)?;
    let root = worktree.clone().unwrap_or_else(|| ws.root.clone());
    opened.sweep_git_locks(&root, sinks);
    let cp = checkpoints(&config, &options, &root, &sref, &mut session, sinks)?;
    let iter = match loaded {
        Some(s) => s,
        None => {
            if worktree.is_none() && !options.allow_dirty {
                refuse_dirty(&cp)?;
            }
            if cp.is_repo() && worktree.is_none() && options.allow_dirty {
                // The user's work in progress, never to be committed.
                cp.record_wip(&cp.dirty_paths()?)?;
            }
            initial_state(&sref.paths.id, &tasks, limits.max_iterations, Utc::now())
        }
    };
    if sref.location == Location::Active {
        // A finished session waiting for its archive keeps the footprint
        // it finished with.
        let finished = docs::finished_gitignore(config.git.artifacts, &iter, &history);
        opened.apply_artifact_policy(&sref.paths, config.git.artifacts, finished)?;
    }
    let detected = detection(ws, &config, &root, &iter)?;
    let test_gen_agent = test_gen_agent(&config, &tasks)?;
    let analysis_text = std::fs::read_to_string(sref.paths.analysis_results()).unwrap_or_default();
    let results = load_results(ws, &sref.paths, &iter)?;
    let watch = watch_mode(req, fix_agent.is_some(), sinks);
    let fix_agents = speculation(&mut config, &options)?;
    let machine = CycleMachine {
        ws: Workspace::new(ws.root.clone()),
        id: sref.id().to_string(),
        root: root.clone(),
        worktree: worktree.is_some(),
        limits,
        fix_agent,
        fix_agents,
        test_gen_agent,
        chain,
        detected,
        renderer: Arc::new(Renderer::new(Some(&ws.templates_dir()))),
        analysis_text,
        repo: cp.is_repo(),
        messages: crate::git::convention::style(&root, &config.git.message),
        import_map: import_map(&sref.paths),
        related: crate::testing::run::related_setup(&root, &config.test),
        watch,
        config,
    };
    let state = CycleState {
        iter,
        history,
        tasks,
        session,
        location: sref.location,
        results,
        stop: None,
        validation_fix_due: false,
        survey_due: false,
        now: Utc::now(),
        outbox: Vec::new(),
        views: Default::default(),
    };
    let ports = opened.into_ports(ws, root, cp, sref.paths.dir.clone());
    let driver = DriverConfig {
        max_cost_usd: machine.config.agents.max_cost_usd,
        resumed,
        fold_agent_commits: ports.cp.is_repo(),
        watch: machine.watch,
    };
    Ok(Ready {
        machine,
        state,
        ports,
        driver,
    })
}

/// The test session meant without `--resume-session`: the active one;
/// with none, the latest whose archive a kill cut short (see
/// [`Workspace::cut_archives`] and [`uncommitted_archive`]), whose archive
/// step and final commit are what is left
/// of its job, as with `--resume-session`. A cut archive passed over is
/// named with the command that finishes it.
fn session_meant(ws: &Workspace, yes: bool, sinks: &mut Sinks) -> Result<SessionRef> {
    let cut = ws.cut_archives(|s| finished_test(ws, s))?;
    let (active, foreign) = ws.active_of_kind(Some("test"))?;
    if active.is_empty() {
        let unfinished = match cut.last() {
            Some(s) => Some(s.clone()),
            None => uncommitted_archive(ws)?,
        };
        if let Some(sref) = unfinished {
            let note = format!(
                "{}: its archive was cut short by a kill; finishing it ({})",
                sref.id(),
                ws.rel(&sref.paths.dir)
            );
            sinks.emit(&Event::warning(note), Utc::now());
            return Ok(sref);
        }
    }
    for s in &cut {
        let note = format!(
            "{}: its archive was cut short by a kill; `wfx test-cycle-execute --resume-session {}` finishes it",
            s.id(),
            s.id()
        );
        sinks.emit(&Event::warning(note), Utc::now());
    }
    ws.pick_active(active, foreign, Several::latest_if(yes))
}

/// A test session whose loop completed (fully or partly): what the
/// cycle's archive step finishes. One a person completed while blocked or
/// abandoned is not the cycle's to finish.
fn finished_test(ws: &Workspace, s: &SessionRef) -> bool {
    ws.load_session(s).is_ok_and(|w| {
        w.kind == "test"
            && matches!(
                w.status.meaning(),
                SessionStatus::Completed | SessionStatus::PartialSuccess
            )
    })
}

/// The latest archived test session whose move the final commit has not
/// recorded yet: `HEAD` still holds its files in `active/`, which is gone
/// from disk (a kill after the manifest entry, before the final commit).
/// Only then: a session whose history a person rewrote is never committed
/// again by surprise.
fn uncommitted_archive(ws: &Workspace) -> Result<Option<SessionRef>> {
    let (own, _) = ws.list_own(true)?;
    let Some(latest) = own
        .into_iter()
        .filter(|s| s.location == Location::Archived && finished_test(ws, s))
        .max_by_key(|s| ws.updated_at(s))
    else {
        return Ok(None);
    };
    let active = ws.active(latest.id());
    let moved = std::fs::symlink_metadata(&latest.paths.dir).is_ok_and(|m| m.is_dir())
        && std::fs::symlink_metadata(&active.dir).is_err();
    let uncommitted = moved && Checkpoints::open(&ws.root)?.head_holds(&ws.rel(&active.dir))?;
    Ok(uncommitted.then_some(latest))
}

/// Find the test session, open it, and refuse one that is not a test
/// session or whose planning did not finish.
fn open_session(
    ws: &Workspace,
    req: &CycleRequest,
    sinks: &mut Sinks,
) -> Result<(SessionRef, Opened, WorkflowSession)> {
    let sref = match req.session.as_deref() {
        Some(id) => ws.find_own(id)?,
        None => session_meant(ws, req.options.yes, sinks)?,
    };
    let opened = crate::engine::open::open(ws, &sref.paths, sinks)?;
    let session = ws.load_session(&sref)?;
    if session.kind != "test" {
        return Err(Error::usage(format!(
            "{} is a `{}` session; test-cycle-execute runs test sessions",
            sref.id(),
            session.kind
        )));
    }
    if let Some(n) = (1..=4).find(|&n| {
        session
            .phase(n)
            .is_none_or(|p| p.status != PhaseStatus::Completed)
    }) {
        return Err(Error::usage(format!(
            "{}: planning stopped before phase {n} finished; continue it with `wfx test-fix-gen {}`",
            sref.id(),
            sref.id()
        )));
    }
    Ok((sref, opened, session))
}

/// Flags given now win over the recorded ones and are recorded.
fn record_options(
    sref: &SessionRef,
    session: &mut WorkflowSession,
    given: &CycleOptions,
) -> Result<CycleOptions> {
    let mut options = cycle_options_of(session);
    options.merge(given);
    if sref.location == Location::Active && session.cycle_options.as_ref() != Some(&options) {
        session.cycle_options = Some(options.clone());
        store::write_json(&sref.paths.session_json(), session)?;
    }
    Ok(options)
}

/// The loop's limits: flags, then the loop task's meta, then the config.
fn limits_of(
    config: &crate::artifacts::Config,
    options: &CycleOptions,
    tasks: &[(PathBuf, crate::artifacts::Task)],
) -> Limits {
    let meta_max = tasks
        .iter()
        .find(|(_, t)| t.id == LOOP_TASK)
        .and_then(|(_, t)| t.meta.max_iterations);
    Limits {
        max_iterations: decide::resolve_max_iterations(
            options.max_iterations,
            meta_max,
            Some(config.cycle.max_iterations),
        ),
        pass_threshold: config.cycle.pass_threshold,
        regression_threshold_pp: config.cycle.regression_threshold_pp,
        stuck_after: config.cycle.stuck_after,
        no_progress_limit: config.cycle.no_progress_limit,
    }
}

fn load_history(ws: &Workspace, sref: &SessionRef) -> Result<crate::artifacts::FixHistory> {
    let path = sref.paths.fix_history();
    Ok(
        store::read_json_opt(&path, &ws.rel(&path))?.unwrap_or_else(|| {
            crate::artifacts::FixHistory {
                session_id: sref.id().to_string(),
                ..Default::default()
            }
        }),
    )
}

/// Where the code is: the project (its work tree claimed), or the
/// session's own worktree (made now for `--worktree`, or put back).
fn place_code(
    ws: &Workspace,
    sref: &SessionRef,
    options: &CycleOptions,
    session: &mut WorkflowSession,
    opened: &mut Opened,
    sinks: &mut Sinks,
) -> Result<Option<PathBuf>> {
    let mut worktree: Option<PathBuf> = session.git.worktree.as_ref().map(|w| ws.root.join(w));
    if options.worktree && worktree.is_none() && sref.location == Location::Active {
        worktree = Some(create_worktree(ws, &sref.paths.id, session, sinks)?);
        store::write_json(&sref.paths.session_json(), session)?;
    } else if let Some(dir) = &worktree
        && !dir.is_dir()
        && sref.location == Location::Active
    {
        let main = Checkpoints::open(&ws.root)?;
        main.worktree_add(sref.id(), dir)?;
    }
    if worktree.is_none() {
        opened
            .lock
            .claim_work_tree(&ws.work_tree_lock(), &ws.root)?;
    }
    Ok(worktree)
}

/// git for the run: none with `--no-commit` (or `cycle.commit: false`);
/// otherwise the session's `Wfx-Run`, hooks and size limit.
fn checkpoints(
    config: &crate::artifacts::Config,
    options: &CycleOptions,
    root: &Path,
    sref: &SessionRef,
    session: &mut WorkflowSession,
    sinks: &mut Sinks,
) -> Result<Checkpoints> {
    let commits_wanted = !options.no_commit && config.cycle.commit;
    let cp = if commits_wanted {
        Checkpoints::open(root)?
    } else {
        Checkpoints::disabled()
    };
    if commits_wanted && !cp.is_repo() {
        sinks.emit(&Event::NoGit, Utc::now());
    }
    if !cp.is_repo() {
        return Ok(cp);
    }
    let run = crate::engine::open::run_id(session, &sref.paths.session_json())?;
    if !config.git.hooks && !session.git.hooks_skipped {
        session.git.hooks_skipped = true;
        store::write_json(&sref.paths.session_json(), session)?;
    }
    Ok(cp
        .with_run(&run)
        .with_session(sref.id())
        .with_max_new_file_mib(config.git.max_new_file_mib)
        .with_hooks(config.git.hooks))
}

/// The project's test command: refused (exit 2) when missing, unless the
/// loop has finished and only its archive is left to do.
fn detection(
    ws: &Workspace,
    config: &crate::artifacts::Config,
    root: &Path,
    iter: &IterationState,
) -> Result<Option<crate::testing::detect::Detected>> {
    let finished = matches!(
        iter.status,
        LoopStatus::Completed | LoopStatus::PartialSuccess | LoopStatus::Blocked
    );
    if finished {
        Ok(crate::testing::detect(root, &config.test))
    } else {
        detect_or_refuse(ws, config, root).map(Some)
    }
}

/// The test-generation agent, when a test-generation task is still to do.
fn test_gen_agent(
    config: &crate::artifacts::Config,
    tasks: &[(PathBuf, crate::artifacts::Task)],
) -> Result<Option<agents::ResolvedAgent>> {
    let pending = tasks.iter().any(|(_, t)| {
        t.meta.kind == TaskType::TestGen
            && !matches!(
                t.status,
                TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::Failed
            )
    });
    if pending {
        agents::config::role_agent(&config.agents, Role::TestGen, None)
    } else {
        Ok(None)
    }
}

/// `--watch` applies when a person makes the fixes, and not on CI.
fn watch_mode(req: &CycleRequest, fix_agent: bool, sinks: &mut Sinks) -> bool {
    let on_ci = crate::ci::on_ci();
    if req.watch && !fix_agent && on_ci {
        // Nobody saves a file on CI: the pause (exit 3) says what to fix.
        sinks.emit(
            &Event::warning(
                "--watch is ignored on CI (CI=true): nobody is there to make the fix; the session pauses (exit 3) instead",
            ),
            Utc::now(),
        );
    }
    req.watch && !fix_agent && !on_ci
}

/// Speculative attempts: `--candidates` over `fix.candidates`; at most as
/// many at once as there are cores unless the config says. The agents
/// the candidates use.
fn speculation(
    config: &mut crate::artifacts::Config,
    options: &CycleOptions,
) -> Result<Vec<agents::ResolvedAgent>> {
    if let Some(n) = options.candidates {
        config.fix.candidates = n;
    }
    if config.fix.max_parallel.is_none() {
        config.fix.max_parallel =
            Some(std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    }
    if config.fix.candidates > 1 {
        agents::config::fix_agents(&config.agents, options.fix_agent.as_deref())
    } else {
        Ok(Vec::new())
    }
}

/// Refusals of a loaded state before anything is written: an archived
/// session that did not complete, a blocked one reopened with its limit
/// spent.
fn check_resumable(
    id: &str,
    location: Location,
    st: &IterationState,
    session: &WorkflowSession,
    history: &crate::artifacts::FixHistory,
    limits: &Limits,
) -> Result<()> {
    let done = matches!(
        st.status,
        LoopStatus::Completed | LoopStatus::PartialSuccess
    );
    if location == Location::Archived && !done {
        return Err(Error::usage(format!(
            "session {id} is archived; archived sessions cannot be resumed"
        )));
    }
    let attempts = history.entries.len() as u32;
    if st.status == LoopStatus::Blocked
        && location == Location::Active
        && session.status == crate::artifacts::session::SessionStatus::Active
        && !st.iterations.is_empty()
        && attempts >= limits.max_iterations
    {
        return Err(Error::usage(format!(
            "{id}: {attempts} fix attempts were made and the limit is {}; raise it with --max-iterations",
            limits.max_iterations
        )));
    }
    Ok(())
}

/// The parsed results the next decisions need: the baseline run's (the
/// last run's when there is no baseline yet).
fn load_results(
    ws: &Workspace,
    paths: &crate::session::SessionPaths,
    st: &IterationState,
) -> Result<BTreeMap<u32, Arc<crate::artifacts::TestResults>>> {
    let mut out = BTreeMap::new();
    let needs = matches!(
        st.action,
        Action::AnalyzeFailures
            | Action::ExecuteFixTask { .. }
            | Action::Retest { .. }
            | Action::FinalValidation { .. }
    ) || st.status == LoopStatus::Blocked;
    let base = match st.baseline_run {
        Some(run) => st.run(run),
        None => st.iterations.last(),
    };
    // The next retest tier merges over the last tier's merged results.
    let merged = match &st.action {
        Action::Retest { fix } => fix.retest.merged_run.and_then(|r| st.run(r)),
        _ => None,
    };
    for rec in base.into_iter().chain(merged) {
        let (file, _) = docs::run_files(paths, rec);
        match store::read_json::<crate::artifacts::TestResults>(&file, &ws.rel(&file)) {
            Ok(r) => {
                out.insert(rec.run, Arc::new(r));
            }
            Err(e) if needs && st.status != LoopStatus::Blocked => return Err(e),
            Err(_) => {}
        }
    }
    Ok(out)
}

/// Test file → the source files it exercises, from the session's context
/// package (`test_coverage.existing_tests[]`), for the affected-tests
/// retest tier. A package that is missing or unreadable gives none: the
/// strategy's `affected_tests` and the related-tests query still count.
fn import_map(paths: &crate::session::SessionPaths) -> Vec<(String, Vec<String>)> {
    [paths.context_package(), paths.test_context_package()]
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .find_map(|v| {
            let tests = v.pointer("/test_coverage/existing_tests")?.as_array()?;
            Some(
                tests
                    .iter()
                    .filter_map(|t| {
                        let file = t.get("test_file")?.as_str()?.to_string();
                        let sources = t
                            .get("implementation_files")
                            .and_then(|f| f.as_array())
                            .map(|f| {
                                f.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        Some((file, sources))
                    })
                    .collect(),
            )
        })
        .unwrap_or_default()
}

fn cycle_options_of(session: &WorkflowSession) -> CycleOptions {
    session.cycle_options.clone().unwrap_or_default()
}

/// `IMPL-fix-<k>`.
pub fn fix_task_id(k: u32) -> String {
    format!("IMPL-fix-{k}")
}

/// `a, b, c and 4 more`.
/// The checks that can refuse a new run, made by `test-fix-gen` before
/// phase 1 writes anything (DESIGN.md §10.7), so a refused run leaves no
/// session behind: tracked changes outside `.workflow/` (unless
/// `--allow-dirty`, `--worktree` or `--no-commit`), a test command, and the
/// program it starts on PATH. `test-cycle-execute` makes the same checks.
pub fn preflight(ws: &Workspace, options: &CycleOptions) -> Result<()> {
    let config = ws.load_config()?;
    if !options.allow_dirty && !options.worktree && !options.no_commit && config.cycle.commit {
        refuse_dirty(&Checkpoints::open(&ws.root)?)?;
    }
    detect_or_refuse(ws, &config, &ws.root).map(|_| ())
}

/// Exit 2 naming the tracked files changed outside `.workflow/`.
fn refuse_dirty(cp: &Checkpoints) -> Result<()> {
    if !cp.is_repo() {
        return Ok(());
    }
    let dirty = cp.dirty_paths()?;
    if dirty.is_empty() {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{} tracked file(s) are modified or staged outside .workflow/: {}\nCommit or stash them first, or pass --allow-dirty (wfx never commits them).",
        dirty.len(),
        show_list(&dirty)
    )))
}

/// The project's test command, or exit 2 saying how to set one; also exit
/// 2 when the program the command starts is not on PATH.
fn detect_or_refuse(
    ws: &Workspace,
    config: &crate::artifacts::config::Config,
    root: &Path,
) -> Result<crate::testing::detect::Detected> {
    let Some(detected) = crate::testing::detect(root, &config.test) else {
        return Err(Error::usage(crate::testing::detect::not_detected(
            &ws.rel(root),
            &ws.rel(&ws.config_path()),
        )));
    };
    crate::testing::program::check_on_path(&detected.command).map_err(|e| not_on_path(ws, &e))?;
    Ok(detected)
}

/// Exit 2 for a test command whose program is not on PATH, with what to
/// do about it: the same words from the cycle, planning and `wfx test`.
pub fn not_on_path(ws: &Workspace, e: &crate::testing::program::NotOnPath) -> Error {
    Error::usage(format!(
        "{e}: install it, or set another command in {}",
        ws.rel(&ws.config_path())
    ))
}

fn show_list(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(8).map(String::as_str).collect();
    let more = items.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// `--worktree`: a worktree on branch `wfx/<id>` under
/// `.workflow/worktrees/<id>`, recorded in `workflow-session.json`.
fn create_worktree(
    ws: &Workspace,
    id: &str,
    session: &mut WorkflowSession,
    sinks: &mut Sinks,
) -> Result<PathBuf> {
    let main = Checkpoints::open(&ws.root)?;
    if !main.is_repo() {
        return Err(Error::usage(
            "--worktree needs a git repository; run without it or `git init` first",
        ));
    }
    let dir = ws.workflow_dir().join("worktrees").join(id);
    let branch = main.worktree_add(id, &dir)?.unwrap_or_default();
    let rel = ws.rel(&dir);
    session.git.worktree = Some(rel.clone());
    sinks.emit(
        &Event::Worktree {
            worktree: rel,
            branch,
        },
        Utc::now(),
    );
    Ok(dir)
}

/// The state of a session entering phase 5: the initial tasks not yet
/// done, then the loop.
pub(crate) fn initial_state(
    id: &str,
    tasks: &[(PathBuf, crate::artifacts::Task)],
    max_iterations: u32,
    now: crate::artifacts::Timestamp,
) -> IterationState {
    let pending: Vec<String> = INITIAL_TASKS
        .iter()
        .filter(|id| {
            tasks
                .iter()
                .any(|(_, t)| t.id == **id && !TaskStatus::is_done(t.status))
        })
        .map(|s| s.to_string())
        .collect();
    let (current, queue, action) = match pending.split_first() {
        Some((first, rest)) => (first.clone(), rest.to_vec(), Action::ExecuteTask),
        None => (LOOP_TASK.to_string(), Vec::new(), Action::RunTests),
    };
    IterationState {
        session_id: id.to_string(),
        current_task: Some(current),
        queue,
        current_iteration: 0,
        max_iterations,
        selected_strategy: None,
        action,
        status: LoopStatus::Running,
        started_at: now,
        updated_at: now,
        best_pass_rate: None,
        stuck_tests: Vec::new(),
        blocked_reason: None,
        paused_reason: None,
        iterations: Vec::new(),
        baseline_run: None,
        pending_commit: None,
        tasks_snapshot: None,
        tests_commit: None,
        test_infrastructure: None,
        sealed_environment: None,
        extra: Default::default(),
    }
}
