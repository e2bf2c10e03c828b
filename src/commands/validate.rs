use std::path::{Path, PathBuf};

use super::Ctx;
use crate::artifacts::{self, Artifact};
use crate::cli::ValidateArgs;
use crate::error::{Error, Exit, Problem, Result};
use crate::session::store;

pub fn run(ctx: &Ctx, args: ValidateArgs) -> Result<Exit> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    match args.target.as_deref() {
        Some(t) if t.starts_with("WFS-") && !Path::new(t).exists() => {
            let sref = ctx.ws.find(t)?;
            collect(&sref.paths.dir, &mut files);
            if let Err(Error::Invalid(p)) = ctx.ws.load_tasks(&sref.paths) {
                problems.extend(
                    p.into_iter()
                        .filter(|p| p.message.starts_with("duplicate task id")),
                );
            }
        }
        Some(t) => {
            let path = PathBuf::from(t);
            if path.is_dir() {
                collect(&path, &mut files);
            } else if path.is_file() {
                if artifacts::schema_for_path(&path).is_none() {
                    return Err(Error::usage(format!(
                        "{t}: not a file wfx knows a schema for (workflow-session.json, .task/*.json, iteration-state.json, test-results.json, fix-history.json, context packages, manifest.json, wfx.json)"
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
                collect(&s.paths.dir, &mut files);
                if let Err(Error::Invalid(p)) = ctx.ws.load_tasks(&s.paths) {
                    problems.extend(
                        p.into_iter()
                            .filter(|p| p.message.starts_with("duplicate task id")),
                    );
                }
            }
            if ctx.ws.manifest_path().is_file() {
                files.push(ctx.ws.manifest_path());
            }
        }
    }
    files.sort();
    files.dedup();
    for file in &files {
        problems.extend(validate_file(ctx, file));
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

/// Every file under `dir` that has a schema.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_type().is_file() && artifacts::schema_for_path(entry.path()).is_some() {
            files.push(entry.into_path());
        }
    }
}

fn validate_file(ctx: &Ctx, file: &Path) -> Vec<Problem> {
    let shown = ctx.ws.rel(file);
    let Some(schema) = artifacts::schema_for_path(file) else {
        return vec![];
    };
    let text = match store::read_text(file, &shown) {
        Ok(t) => t,
        Err(Error::Invalid(p)) => return p,
        Err(e) => {
            return vec![Problem {
                file: shown,
                pointer: String::new(),
                message: e.to_string(),
            }];
        }
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Err(e) => vec![Problem {
            file: shown,
            pointer: String::new(),
            message: format!(
                "invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        }],
        Ok(v) => {
            let mut problems = artifacts::validate_value(schema, &shown, &v);
            if problems.is_empty()
                && schema == artifacts::Config::SCHEMA
                && let Ok(cfg) = serde_json::from_value::<artifacts::Config>(v)
            {
                problems.extend(crate::agents::config::check(&cfg, &shown));
            }
            problems
        }
    }
}
