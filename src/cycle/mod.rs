//! Phase 5: the test → analyse → fix → retest state machine (DESIGN.md §5).
//!
//! `.process/iteration-state.json` and its `next_action` drive everything.
//! The dispatcher ([`engine`]) loops: load state → decide (pure functions
//! in [`decide`] and [`guard`]) → persist the next action → perform that one
//! action → persist its observation together with the next action in one
//! atomic write. Every action is idempotent or detects that it already
//! happened (commits and reverts by their trailers, a fix by its persisted
//! snapshot, a test run by simply running again), so `kill -9` at any
//! instant followed by `--resume-session` ends as an uninterrupted run.
//!
//! Entry point: [`run`]. `docs/cycle.md` describes the flow for users.

pub mod decide;
mod engine;
mod files;
mod gates;
pub mod guard;
mod initial;
mod progress;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use serde_json::json;

use crate::agents::{self, Role};
use crate::artifacts::iteration_state::{IterationState, LoopStatus, NextAction};
use crate::artifacts::session::{PhaseStatus, SessionStatus, WorkflowSession};
use crate::artifacts::task::TaskStatus;
use crate::error::{Error, Exit, Result};
use crate::git::Checkpoints;
use crate::phases::plan::CycleOptions;
use crate::render::Renderer;
use crate::session::store::{self, SessionLock};
use crate::session::{Location, Workspace};
use crate::ui::Printer;

use decide::Limits;
use engine::Engine;
use progress::Reporter;

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
}

/// How a run ended: the exit code, lines for people, fields for the final
/// `{"event": "done"}` JSON Lines event.
#[derive(Debug, Clone)]
pub struct CycleOutcome {
    pub session_id: String,
    pub status: SessionStatus,
    pub exit: Exit,
    /// The result for people (stdout).
    pub lines: Vec<String>,
    /// Extra fields of the `done` event.
    pub fields: serde_json::Value,
}

/// Run (or resume) phase 5 of a test session until it completes, blocks
/// or pauses. Errors are usage problems (exit 2) and internal failures;
/// every other ending is an [`CycleOutcome`] with its exit code.
pub fn run(ws: &Workspace, req: &CycleRequest, ui: &Printer) -> Result<CycleOutcome> {
    crate::process::install_interrupt_handler();
    let config = ws.load_config()?;
    let sref = ws.resolve(req.session.as_deref(), Some("test"), req.options.yes)?;
    let mut lock = SessionLock::acquire(&sref.paths.lock(), sref.id())?;
    let out = Reporter { ui };
    if let Some(pgid) = lock.stale.as_ref().and_then(|s| s.child_pgid)
        && crate::process::end_stale_group(pgid, Duration::from_secs(2))
    {
        out.event(
            "stale_processes",
            format!("Ended the processes an interrupted run left behind (process group {pgid})"),
            json!({ "pgid": pgid }),
        );
    }
    let stale_since = lock.stale.as_ref().map(|s| s.since.clone());
    lock.set_child(None)?;
    // Nothing is written to a session with a damaged artifact (DESIGN.md §3).
    ws.ensure_session_valid(&sref.paths)?;
    let mut session = ws.load_session(&sref)?;
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

    // Flags given now win over the recorded ones and are recorded.
    let mut options = cycle_options_of(&session);
    options.merge(&req.options);
    if sref.location == Location::Active {
        session.extra.insert(
            "cycle_options".into(),
            serde_json::to_value(&options).map_err(|e| Error::Internal(e.to_string()))?,
        );
        store::write_json(&sref.paths.session_json(), &session)?;
    }
    let fix_agent =
        agents::config::role_agent(&config.agents, Role::Fix, options.fix_agent.as_deref())?;
    let chain = agents::config::analysis_chain(&config.agents)?;

    let tasks = ws.load_tasks(&sref.paths)?;
    let state = ws.load_iteration_state(&sref)?;
    let meta_max = tasks
        .iter()
        .find(|(_, t)| t.id == LOOP_TASK)
        .and_then(|(_, t)| t.meta.max_iterations);
    let limits = Limits {
        max_iterations: decide::resolve_max_iterations(
            options.max_iterations,
            meta_max,
            Some(config.cycle.max_iterations),
        ),
        pass_threshold: config.cycle.pass_threshold,
        regression_threshold_pp: config.cycle.regression_threshold_pp,
        stuck_after: config.cycle.stuck_after,
        no_progress_limit: config.cycle.no_progress_limit,
    };

    // Where the code is: the project, or the session's own worktree.
    let fresh = state.is_none();
    let mut worktree: Option<PathBuf> = session.git.worktree.as_ref().map(|w| ws.root.join(w));
    if options.worktree && worktree.is_none() && sref.location == Location::Active {
        worktree = Some(create_worktree(ws, &sref.paths.id, &mut session, &out)?);
        store::write_json(&sref.paths.session_json(), &session)?;
    } else if let Some(dir) = &worktree
        && !dir.is_dir()
        && sref.location == Location::Active
    {
        let main = Checkpoints::open(&ws.root)?;
        main.worktree_add(sref.id(), dir)?;
    }
    let root = worktree.clone().unwrap_or_else(|| ws.root.clone());
    if let Some(since) = &stale_since {
        for lock_file in clear_stale_git_locks(&root, since) {
            out.event(
                "stale_git_lock",
                format!("Removed {lock_file}, left by the interrupted run"),
                json!({ "file": lock_file }),
            );
        }
    }
    let commits_wanted = !options.no_commit && config.cycle.commit;
    let cp = if commits_wanted {
        Checkpoints::open(&root)?
    } else {
        Checkpoints::disabled()
    };
    if commits_wanted && !cp.is_repo() {
        out.event(
            "no_git",
            "Not a git repository: running without commits (no checkpoints, no rollback)",
            json!({}),
        );
    }

    let state = match state {
        Some(s) => s,
        None => {
            if cp.is_repo() && worktree.is_none() && !options.allow_dirty {
                let dirty = cp.dirty_paths()?;
                if !dirty.is_empty() {
                    return Err(Error::usage(format!(
                        "{} tracked file(s) are modified or staged outside .workflow/: {}\nCommit or stash them first, or pass --allow-dirty (wfx never commits them).",
                        dirty.len(),
                        show_list(&dirty)
                    )));
                }
            }
            initial_state(&sref.paths.id, &tasks, limits.max_iterations)
        }
    };

    let renderer = Renderer::new(Some(&ws.templates_dir()));
    let mut engine = Engine {
        ws,
        root,
        worktree: worktree.is_some(),
        location: sref.location,
        paths: sref.paths.clone(),
        session,
        config,
        limits,
        cp,
        renderer,
        lock,
        out,
        fix_agent,
        chain,
        state,
        tasks,
        detected: None,
    };
    engine.start(fresh)
}

fn cycle_options_of(session: &WorkflowSession) -> CycleOptions {
    session
        .extra
        .get("cycle_options")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// `a, b, c and 4 more`.
fn show_list(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(8).map(String::as_str).collect();
    let more = items.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Git lock files (`index.lock`, `HEAD.lock`, the branch's ref lock) that
/// a wfx run killed in the middle of a commit left behind: removed when the
/// session lock says its previous holder died and the file was created
/// after that holder started (so it is that run's, not another git
/// process's). Returns the removed files, relative to the work tree.
fn clear_stale_git_locks(root: &std::path::Path, since: &str) -> Vec<String> {
    let Ok(started) = chrono::DateTime::parse_from_rfc3339(since) else {
        return Vec::new();
    };
    let started: std::time::SystemTime = started.to_utc().into();
    let Ok(repo) = git2::Repository::discover(root) else {
        return Vec::new();
    };
    let gitdir = repo.path().to_path_buf();
    let mut candidates = vec![gitdir.join("index.lock"), gitdir.join("HEAD.lock")];
    if let Ok(head) = repo.find_reference("HEAD")
        && let Ok(Some(target)) = head.symbolic_target()
    {
        candidates.push(repo.commondir().join(format!("{target}.lock")));
    }
    let mut removed = Vec::new();
    for path in candidates {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let created = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        // `since` has whole seconds: allow the second it was written in.
        if created + Duration::from_secs(1) >= started && std::fs::remove_file(&path).is_ok() {
            removed.push(
                path.strip_prefix(repo.workdir().unwrap_or(&gitdir))
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
    }
    removed
}

/// `--worktree`: a worktree on branch `wfx/<id>` under
/// `.workflow/worktrees/<id>`, recorded in `workflow-session.json`.
fn create_worktree(
    ws: &Workspace,
    id: &str,
    session: &mut WorkflowSession,
    out: &Reporter,
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
    out.event(
        "worktree",
        format!(
            "Working in the git worktree {rel} on branch {branch} (created from HEAD; your own changes are not in it)"
        ),
        json!({ "worktree": rel, "branch": branch }),
    );
    Ok(dir)
}

/// The state of a session entering phase 5: the initial tasks not yet
/// done, then the loop.
fn initial_state(
    id: &str,
    tasks: &[(PathBuf, crate::artifacts::Task)],
    max_iterations: u32,
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
    let (current, queue, next) = match pending.split_first() {
        Some((first, rest)) => (first.clone(), rest.to_vec(), NextAction::ExecuteTask),
        None => (LOOP_TASK.to_string(), Vec::new(), NextAction::RunTests),
    };
    let now = Utc::now();
    IterationState {
        session_id: id.to_string(),
        current_task: Some(current),
        queue,
        current_iteration: 0,
        max_iterations,
        selected_strategy: None,
        next_action: next,
        status: LoopStatus::Running,
        started_at: now,
        updated_at: now,
        best_pass_rate: None,
        stuck_tests: Vec::new(),
        blocked_reason: None,
        iterations: Vec::new(),
        baseline_run: None,
        fix: None,
        pending_commit: None,
        pending_rollback: None,
        tasks_snapshot: None,
        extra: Default::default(),
    }
}
