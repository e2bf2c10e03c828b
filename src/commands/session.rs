use serde::Serialize;

use super::Ctx;
use crate::artifacts::Timestamp;
use crate::artifacts::session::SessionStatus;
use crate::cli::SessionCommand;
use crate::error::{Error, Exit, Result};
use crate::session::{Location, SessionRef};
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Progress {
    pub tasks_completed: u32,
    pub tasks_total: u32,
}

/// Task status without full validation: listing stays fast and keeps going
/// past a broken task file (`wfx validate` reports those).
#[derive(serde::Deserialize)]
struct TaskStatusOnly {
    status: String,
}

fn count_tasks(sref: &SessionRef) -> Progress {
    let mut p = Progress {
        tasks_completed: 0,
        tasks_total: 0,
    };
    let Ok(entries) = std::fs::read_dir(sref.paths.task_dir()) else {
        return p;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        p.tasks_total += 1;
        let small = entry
            .metadata()
            .is_ok_and(|m| m.len() <= crate::session::store::MAX_ARTIFACT_BYTES);
        if small
            && let Ok(bytes) = std::fs::read(&path)
            && let Ok(t) = serde_json::from_slice::<TaskStatusOnly>(&bytes)
            && matches!(t.status.as_str(), "completed" | "skipped")
        {
            p.tasks_completed += 1;
        }
    }
    p
}

pub fn summarize(ctx: &Ctx, sref: &SessionRef) -> SessionSummary {
    let progress = count_tasks(sref);
    let path = ctx.ws.rel(&sref.paths.dir);
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
            problem: Some(e.to_string()),
        },
    }
}

pub fn run(ctx: &Ctx, cmd: SessionCommand) -> Result<Exit> {
    match cmd {
        SessionCommand::List { all } => list(ctx, all),
        SessionCommand::Show { id } => show(ctx, &id),
        SessionCommand::Complete { id } => complete(ctx, id.as_deref()),
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
                r.kind.clone(),
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

fn show(ctx: &Ctx, id: &str) -> Result<Exit> {
    let sref = ctx.ws.find(id)?;
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

fn complete(ctx: &Ctx, id: Option<&str>) -> Result<Exit> {
    let id = match id {
        Some(id) => id.to_string(),
        None => ctx.ws.resolve(None, None, false)?.id().to_string(),
    };
    crate::session::id::validate_user_id(&id)?;
    // Never move a session another wfx process is running.
    let active = ctx.ws.active(&id);
    let _lock = if active.dir.is_dir() {
        Some(crate::session::store::SessionLock::acquire(
            &active.lock(),
            &id,
        )?)
    } else {
        None
    };
    let entry = ctx.ws.archive(&id)?;
    if ctx.ui.is_json() {
        ctx.ui.json(&entry);
    } else {
        ctx.ui
            .out(format!("Archived {} → {}", entry.id, entry.archive_path));
    }
    Ok(Exit::Success)
}

fn resume(ctx: &Ctx, id: Option<&str>) -> Result<Exit> {
    let sref = ctx.ws.resolve(id, None, false)?;
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
        session.status,
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
