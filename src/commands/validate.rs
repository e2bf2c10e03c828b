use std::path::{Path, PathBuf};

use super::Ctx;
use crate::artifacts;
use crate::cli::ValidateArgs;
use crate::error::{Error, Exit, Problem, Result};
use crate::session::{SessionPaths, check};

pub fn run(ctx: &Ctx, args: ValidateArgs) -> Result<Exit> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    match args.target.as_deref() {
        Some(t) if t.starts_with("WFS-") && !Path::new(t).exists() => {
            let sref = ctx.ws.find(t)?;
            files.extend(check::artifact_files(&sref.paths.dir));
            problems.extend(duplicate_ids(ctx, &sref.paths));
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
            for s in ctx.ws.list(true)? {
                files.extend(check::artifact_files(&s.paths.dir));
                problems.extend(duplicate_ids(ctx, &s.paths));
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
    if ctx.ui.is_json() {
        ctx.ui
            .json(&serde_json::json!({"files": files.len(), "problems": problems}));
    } else {
        for p in &problems {
            ctx.ui.out(p.to_string());
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
