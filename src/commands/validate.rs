use std::path::{Path, PathBuf};

use super::Ctx;
use crate::artifacts;
use crate::cli::ValidateArgs;
use crate::error::{Error, Exit, Problem, Result};
use crate::session::{SessionPaths, check};

pub fn run(ctx: &Ctx, args: ValidateArgs) -> Result<Exit> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut foreign_skipped = 0;
    match args.target.as_deref() {
        Some(t) if t.starts_with("WFS-") && !Path::new(t).exists() => {
            // wfx's schemas describe wfx's sessions; another tool's
            // session is refused with what wfx can do with it.
            let sref = ctx.ws.find_own(t)?;
            files.extend(check::artifact_files(&sref.paths.dir));
            problems.extend(duplicate_ids(ctx, &sref.paths));
            notes.extend(orphan_notes(ctx, &sref.paths));
        }
        Some(t) => {
            let path = PathBuf::from(t);
            if path.is_dir() {
                files.extend(check::artifact_files(&path));
            } else if path.is_file() {
                if artifacts::schema_for_path(&path).is_none() {
                    return Err(Error::usage(format!(
                        "{t}: not a file wfx knows a schema for (workflow-session.json, .task/*.json, iteration-state.json, test-results.json, fix-history.json, context packages, manifest.json, wfx.json, run-state.json)"
                    )));
                }
                files.push(path);
            } else {
                return Err(Error::usage(format!("{t}: no such session or file")));
            }
        }
        None => {
            if ctx.ws.config_path().is_file() {
                files.push(ctx.ws.config_path());
            }
            let (own, foreign) = ctx.ws.list_own(true)?;
            foreign_skipped = foreign;
            for s in own {
                files.extend(check::artifact_files(&s.paths.dir));
                problems.extend(duplicate_ids(ctx, &s.paths));
                notes.extend(orphan_notes(ctx, &s.paths));
            }
            if ctx.ws.manifest_path().is_file() {
                files.push(ctx.ws.manifest_path());
            }
        }
    }
    files.sort();
    files.dedup();
    for file in &files {
        problems.extend(ctx.ws.validate_file(file));
    }
    let skipped_note = match foreign_skipped {
        0 => None,
        1 => Some("skipped 1 foreign session (made by another .workflow tool; not checked against wfx's schemas)".to_string()),
        n => Some(format!("skipped {n} foreign sessions (made by other .workflow tools; not checked against wfx's schemas)")),
    };
    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "files": files.len(),
            "problems": problems,
            "foreign_sessions_skipped": foreign_skipped,
            "notes": notes,
        }));
    } else {
        for p in &problems {
            ctx.ui.out(p.to_string());
        }
        for n in &notes {
            ctx.ui.status(format!("note: {n}"));
        }
        if let Some(n) = &skipped_note {
            ctx.ui.status(n.clone());
        }
        if problems.is_empty() {
            ctx.ui.status(format!("{} file(s) valid.", files.len()));
        } else {
            ctx.ui.status(format!(
                "{} problem(s) in {} file(s) checked.",
                problems.len(),
                files.len()
            ));
        }
    }
    Ok(if problems.is_empty() {
        Exit::Success
    } else {
        Exit::Usage
    })
}

/// Status overlays another tool left for a task the session does not have.
fn orphan_notes(ctx: &Ctx, paths: &SessionPaths) -> Vec<String> {
    ctx.ws
        .orphan_overlays(paths)
        .into_iter()
        .map(|o| {
            format!(
                "{}: holds only a status for task {}, which this session does not have; wfx ignores it",
                o.file, o.task_id
            )
        })
        .collect()
}

/// Two task files with one id (DESIGN.md §2); schema problems of task
/// files are reported per file.
fn duplicate_ids(ctx: &Ctx, paths: &SessionPaths) -> Vec<Problem> {
    match ctx.ws.load_tasks(paths) {
        Err(Error::Invalid(p)) => p
            .into_iter()
            .filter(|p| p.message.starts_with("duplicate task id"))
            .collect(),
        _ => Vec::new(),
    }
}
