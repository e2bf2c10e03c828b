//! `wfx demo`: the whole pipeline on a bundled sample project in a temp
//! dir, with a bundled scripted fixer named `demo-fixer` standing in for an
//! AI agent. Nothing outside the demo directory is touched.

use std::path::{Path, PathBuf};

use clap::Parser;

use super::Ctx;
use crate::cli::{Cli, DemoArgs};
use crate::error::{Error, Exit, Result};
use crate::session::store;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/demo_project.rs"));
}

const DESCRIPTION: &str = "Test the calculator";

pub fn run(ctx: &Ctx, args: DemoArgs) -> Result<Exit> {
    let dir = match args.dir {
        Some(d) => {
            if d.exists() && d.read_dir().map(|mut r| r.next().is_some()).unwrap_or(true) {
                return Err(Error::usage(format!(
                    "--dir {}: exists and is not empty",
                    d.display()
                )));
            }
            d
        }
        None => tempfile::Builder::new()
            .prefix("wfx-demo-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?
            .keep(),
    };
    let project = dir.join("calc");
    write_project(&project)?;
    init_repo(&project)?;
    ctx.ui.status(format!(
        "wfx demo: sample Rust project with 2 source bugs in {}",
        project.display()
    ));

    let wfx_args = |rest: &[&str]| -> Vec<String> {
        let mut v = vec![
            "wfx".to_string(),
            "-C".into(),
            project.display().to_string(),
        ];
        if ctx.ui.is_json() {
            v.push("--json".into());
        }
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let cli = Cli::try_parse_from(wfx_args(&["test-fix-gen", DESCRIPTION, "-y"]))
        .map_err(|e| Error::Internal(e.to_string()))?;
    let exit = super::dispatch(cli, ctx.ui)?;

    // Inside the project, so the report links to the session artifacts.
    let report = project.join(".workflow/report.html");
    let session = last_archived_or_active(&project);
    if let Some(id) = &session {
        let report_arg = report.display().to_string();
        if let Ok(cli) = Cli::try_parse_from(wfx_args(&["report", id, "--html", &report_arg]))
            && let Err(e) = super::dispatch(cli, ctx.ui)
        {
            ctx.ui.warn(format!("report: {e}"));
        }
    }
    ctx.ui.status("");
    ctx.ui
        .status(format!("Demo project: {}", project.display()));
    if let Some(id) = &session {
        ctx.ui.status(format!(
            "Session:      {id} (see `wfx -C {} status {id}`)",
            project.display()
        ));
    }
    if report.exists() {
        ctx.ui.status(format!("Report:       {}", report.display()));
    }
    ctx.ui.status(format!(
        "Commits:      git -C {} log --stat",
        project.display()
    ));
    Ok(exit)
}

fn write_project(project: &Path) -> Result<()> {
    for (rel, text) in embedded::DEMO_PROJECT {
        store::write_atomic(&project.join(rel), text.as_bytes())?;
    }
    let config = serde_json::json!({
        "agents": {
            "fix": "demo-fixer",
            "definitions": {
                "demo-fixer": { "command": ["sh", ".workflow/demo/fixer.sh"], "timeout_s": 60 }
            }
        }
    });
    store::write_json(&project.join(".workflow/wfx.json"), &config)?;
    let fixer = crate::render::builtin("demo/fixer.sh")
        .ok_or_else(|| Error::Internal("demo fixer missing".into()))?;
    store::write_atomic(&project.join(".workflow/demo/fixer.sh"), fixer.as_bytes())?;
    Ok(())
}

/// `git init` and one commit of the sample, so the loop can checkpoint.
fn init_repo(project: &Path) -> Result<()> {
    let repo = git2::Repository::init(project)?;
    let mut index = repo.index()?;
    index.add_all(
        ["src", "tests", "Cargo.toml", ".gitignore"],
        git2::IndexAddOption::DEFAULT,
        None,
    )?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("wfx demo", "demo@wfx.invalid"))?;
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        "Sample calculator with two bugs",
        &tree,
        &[],
    )?;
    // The demo's own files stay out of the user's view of changes.
    store::write_atomic(
        &project.join(".git/info/exclude"),
        b".workflow/demo/\n.workflow/wfx.json\n",
    )?;
    Ok(())
}

fn last_archived_or_active(project: &Path) -> Option<String> {
    let ws = crate::session::Workspace::new(PathBuf::from(project));
    ws.list(true)
        .ok()?
        .into_iter()
        .map(|s| s.id().to_string())
        .next_back()
}
