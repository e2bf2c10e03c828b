use serde::Serialize;

use super::Ctx;
use crate::artifacts::Timestamp;
use crate::artifacts::session::SessionStatus;
use crate::artifacts::task::TaskStatus;
use crate::cli::SessionCommand;
use crate::error::{Error, Exit, Result};
use crate::session::foreign::{self, Owner};
use crate::session::{Location, SessionRef, Several};
use crate::ui::table;

/// One row of `wfx session list`.
#[derive(Debug, Serialize)]
pub struct SessionSummary {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    pub description: String,
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
    pub progress: Progress,
    pub location: Location,
    pub path: String,
    /// Made by another `.workflow` tool (DESIGN.md §10.6): listed for
    /// reference, never picked implicitly, never written.
    pub foreign: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Progress {
    pub tasks_completed: u32,
    pub tasks_total: u32,
}

/// Task id and status without full validation: listing stays fast and
/// keeps going past a broken task file (`wfx validate` reports those).
#[derive(serde::Deserialize)]
struct TaskStatusOnly {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    title: Option<serde_json::Value>,
    #[serde(default)]
    meta: Option<serde_json::Value>,
    #[serde(default)]
    status: Option<TaskStatus>,
}

/// Tasks done of all tasks, one per id: a file without an id (another
/// tool's status overlay, see docs/interop.md) sets the status of the task
/// its file stem names.
fn count_tasks(sref: &SessionRef) -> Progress {
    let mut by_id: std::collections::BTreeMap<String, Option<TaskStatus>> = Default::default();
    let mut overlays = Vec::new();
    if let Ok(entries) = std::fs::read_dir(sref.paths.task_dir()) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let small = entry
                .metadata()
                .is_ok_and(|m| m.len() <= crate::session::store::MAX_ARTIFACT_BYTES);
            let read = small
                .then(|| std::fs::read(&path).ok())
                .flatten()
                .and_then(|b| serde_json::from_slice::<TaskStatusOnly>(&b).ok());
            match read {
                Some(TaskStatusOnly {
                    id: None,
                    title: None,
                    meta: None,
                    status,
                }) => overlays.push((stem, status)),
                Some(t) => {
                    by_id.insert(t.id.unwrap_or(stem), t.status);
                }
                None => {
                    by_id.entry(stem).or_insert(None);
                }
            }
        }
    }
    for (id, status) in overlays {
        if let Some(slot) = by_id.get_mut(&id) {
            *slot = status.or(*slot);
        }
    }
    Progress {
        tasks_completed: by_id
            .values()
            .filter(|s| s.is_some_and(|s| s.is_done()))
            .count() as u32,
        tasks_total: by_id.len() as u32,
    }
}

pub fn summarize(ctx: &Ctx, sref: &SessionRef) -> SessionSummary {
    let progress = count_tasks(sref);
    let path = ctx.ws.rel(&sref.paths.dir);
    if ctx.ws.owner(sref) == Owner::Foreign {
        let f = foreign::summarize(ctx.ws.session_doc(sref).as_ref());
        return SessionSummary {
            id: sref.id().to_string(),
            kind: f.kind,
            status: f.status,
            description: f.description,
            created_at: f.created_at,
            updated_at: f.updated_at,
            progress,
            location: sref.location,
            path,
            foreign: true,
            problem: None,
        };
    }
    let file = sref.paths.session_json();
    match crate::session::store::read_json_fast::<crate::artifacts::WorkflowSession>(
        &file,
        &ctx.ws.rel(&file),
    ) {
        Ok(s) => SessionSummary {
            id: sref.id().to_string(),
            kind: s.kind,
            status: s.status.to_string(),
            description: s.description,
            created_at: Some(s.created_at),
            updated_at: Some(s.updated_at),
            progress,
            location: sref.location,
            path,
            foreign: false,
            problem: None,
        },
        Err(e) => SessionSummary {
            id: sref.id().to_string(),
            kind: "?".into(),
            status: "invalid".into(),
            description: String::new(),
            created_at: None,
            updated_at: None,
            progress,
            location: sref.location,
            path,
            foreign: false,
            problem: Some(e.to_string()),
        },
    }
}

pub fn run(ctx: &Ctx, cmd: SessionCommand) -> Result<Exit> {
    match cmd {
        SessionCommand::List { all } => list(ctx, all),
        SessionCommand::Show { id } => show(ctx, id.as_deref()),
        SessionCommand::Complete { id } => complete(ctx, id.as_deref(), false),
        SessionCommand::Abandon { id } => complete(ctx, id.as_deref(), true),
        SessionCommand::Resume { id } => resume(ctx, id.as_deref()),
    }
}

fn short_time(t: Option<Timestamp>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".into())
}

fn list(ctx: &Ctx, all: bool) -> Result<Exit> {
    let rows: Vec<SessionSummary> = ctx
        .ws
        .list(all)?
        .iter()
        .map(|s| summarize(ctx, s))
        .collect();
    if ctx.ui.is_json() {
        ctx.ui.json(&rows);
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        ctx.ui.out(if all {
            "No sessions."
        } else {
            "No active sessions (use --all to include archived ones)."
        });
        return Ok(Exit::Success);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                if r.foreign {
                    format!("{} (foreign)", r.kind)
                } else {
                    r.kind.clone()
                },
                r.status.clone(),
                format!("{}/{}", r.progress.tasks_completed, r.progress.tasks_total),
                short_time(r.created_at),
                short_time(r.updated_at),
                match r.location {
                    Location::Active => "active".into(),
                    Location::Archived => "archived".into(),
                },
                truncate(&r.description, 48),
            ]
        })
        .collect();
    ctx.ui.out(table(
        &[
            "ID",
            "TYPE",
            "STATUS",
            "TASKS",
            "CREATED",
            "UPDATED",
            "WHERE",
            "DESCRIPTION",
        ],
        &cells,
    ));
    for r in rows.iter().filter(|r| r.problem.is_some()) {
        ctx.ui.warn(r.problem.as_deref().unwrap_or_default());
    }
    let foreign = rows.iter().filter(|r| r.foreign).count();
    if foreign > 0 {
        ctx.ui.status(format!(
            "{foreign} foreign session{} (made by another .workflow tool) listed for reference; wfx never picks or changes {}.",
            if foreign == 1 { "" } else { "s" },
            if foreign == 1 { "it" } else { "them" }
        ));
    }
    Ok(Exit::Success)
}

pub fn truncate(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= max {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(max - 1).collect::<String>())
    }
}

fn show(ctx: &Ctx, id: Option<&str>) -> Result<Exit> {
    let sref = match id {
        Some(id) => ctx.ws.find(id)?,
        None => ctx.ws.pick_for_view(None)?,
    };
    if ctx.ws.owner(&sref) == Owner::Foreign {
        return show_foreign(ctx, &sref);
    }
    let session = ctx.ws.load_session(&sref)?;
    let tasks = ctx.ws.load_tasks(&sref.paths)?;
    if ctx.ui.is_json() {
        let tasks: Vec<_> = tasks
            .iter()
            .map(|(p, t)| serde_json::json!({"id": t.id, "title": t.title, "status": t.status, "file": ctx.ws.rel(p)}))
            .collect();
        ctx.ui.json(&serde_json::json!({
            "session": session,
            "location": sref.location,
            "path": ctx.ws.rel(&sref.paths.dir),
            "tasks": tasks,
        }));
        return Ok(Exit::Success);
    }
    ctx.ui.out(format!("Session:     {}", session.session_id));
    ctx.ui.out(format!("Description: {}", session.description));
    ctx.ui
        .out(format!("Type:        {} ({:?} mode)", session.kind, session.mode).to_lowercase());
    ctx.ui.out(format!("Status:      {}", session.status));
    ctx.ui
        .out(format!("Path:        {}", ctx.ws.rel(&sref.paths.dir)));
    ctx.ui
        .out(format!("Created:     {}", session.created_at.to_rfc3339()));
    ctx.ui
        .out(format!("Updated:     {}", session.updated_at.to_rfc3339()));
    if let Some(src) = &session.source_session_id {
        ctx.ui.out(format!("Source:      {src}"));
    }
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|(p, t)| {
            vec![
                t.id.clone(),
                t.status.to_string(),
                t.title.clone(),
                ctx.ws.rel(p),
            ]
        })
        .collect();
    if !rows.is_empty() {
        ctx.ui.out("");
        ctx.ui
            .out(table(&["TASK", "STATUS", "TITLE", "FILE"], &rows));
    }
    Ok(Exit::Success)
}

/// A session another tool made: what its own files say, read leniently.
fn show_foreign(ctx: &Ctx, sref: &SessionRef) -> Result<Exit> {
    let r = summarize(ctx, sref);
    if ctx.ui.is_json() {
        ctx.ui.json(&r);
        return Ok(Exit::Success);
    }
    ctx.ui.out(format!("Session:     {}", r.id));
    ctx.ui.out(format!("Description: {}", r.description));
    ctx.ui.out(format!(
        "Type:        {} (foreign: not made by wfx)",
        r.kind
    ));
    ctx.ui.out(format!("Status:      {}", r.status));
    ctx.ui.out(format!("Path:        {}", r.path));
    ctx.ui.out(format!(
        "Tasks:       {}/{} done",
        r.progress.tasks_completed, r.progress.tasks_total
    ));
    ctx.ui
        .out(format!("Plan tests for it with: wfx test-fix-gen {}", r.id));
    Ok(Exit::Success)
}

/// Archive a session (`complete`), or give it up and archive it
/// (`abandon`: status `abandoned`). Either way its commits and files stay.
fn complete(ctx: &Ctx, id: Option<&str>, abandon: bool) -> Result<Exit> {
    let id = match id {
        Some(id) => id.to_string(),
        None => ctx
            .ws
            .resolve_active(None, None, Several::Ask)?
            .id()
            .to_string(),
    };
    crate::session::id::validate_existing_id(&id)?;
    // Never move a session another wfx process is running, and never put a
    // lock file into a session another tool made.
    let active = ctx.ws.active(&id);
    if active.dir.is_dir() {
        ctx.ws.find_own(&id)?;
    }
    let _lock = if active.dir.is_dir() {
        Some(crate::session::store::SessionLock::acquire(
            &active.lock(),
            &id,
        )?)
    } else {
        None
    };
    if abandon && !active.dir.is_dir() {
        return Err(Error::usage(format!(
            "session {id} is archived already; only an active session can be abandoned"
        )));
    }
    let entry = if abandon {
        ctx.ws.abandon(&id)?
    } else {
        ctx.ws.archive(&id)?
    };
    if ctx.ui.is_json() {
        ctx.ui.json(&entry);
    } else {
        let status = entry.status.as_deref().unwrap_or_default();
        let unfinished = !matches!(
            status,
            "completed" | "partial_success" | "blocked" | "archived" | "abandoned"
        );
        let how = if unfinished {
            let count = |k: &str| entry.metrics.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
            format!(
                " unfinished ({status}; {} of {} tasks finished)",
                count("tasks_completed"),
                count("tasks_total")
            )
        } else {
            String::new()
        };
        ctx.ui.out(format!(
            "{} {}{how} → {}",
            if abandon { "Abandoned" } else { "Archived" },
            entry.session_id,
            entry.archive_path.as_deref().unwrap_or_default()
        ));
        if abandon {
            ctx.ui.out(
                "Its commits and files are kept; the code is as the session left it (see git log).",
            );
        }
    }
    Ok(Exit::Success)
}

fn resume(ctx: &Ctx, id: Option<&str>) -> Result<Exit> {
    let sref = ctx.ws.resolve_active(id, None, Several::Ask)?;
    if sref.location == Location::Archived {
        return Err(Error::usage(format!(
            "session {} is archived; archived sessions cannot be resumed",
            sref.id()
        )));
    }
    let _lock = crate::session::store::SessionLock::acquire(&sref.paths.lock(), sref.id())?;
    ctx.ws.ensure_session_valid(&sref.paths)?;
    let mut session = ctx.ws.load_session(&sref)?;
    if !matches!(
        session.status.meaning(),
        SessionStatus::Paused | SessionStatus::AwaitingFix | SessionStatus::Blocked
    ) {
        return Err(Error::usage(format!(
            "session {} is {}; only paused, awaiting_fix or blocked sessions can be resumed",
            sref.id(),
            session.status
        )));
    }
    let from = session.status;
    let now = chrono::Utc::now();
    session.status = SessionStatus::Active;
    session.resumed_at = Some(now);
    session.updated_at = now;
    ctx.ws.save_session(&sref, &session)?;
    if ctx.ui.is_json() {
        ctx.ui
            .json(&serde_json::json!({"id": sref.id(), "from": from, "status": session.status}));
    } else {
        ctx.ui.out(format!(
            "Session {} is active again (was {from}).",
            sref.id()
        ));
        ctx.ui.out(format!(
            "Continue with: wfx test-cycle-execute --resume-session={}",
            sref.id()
        ));
    }
    Ok(Exit::Success)
}
