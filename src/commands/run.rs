//! `wfx run <workflow.yml> [--resume] [--dry-run] [--var NAME=VALUE]`: run a
//! YAML workflow (DESIGN.md §8). Progress lines go to stderr as the run
//! goes; the summary (or `--json` document) goes to stdout.

use super::Ctx;
use crate::artifacts::run_state::RunStatus;
use crate::cli::RunArgs;
use crate::error::{Error, Exit, Result};
use crate::ui::Style;
use crate::workflow::{self, DryRun, Outcome, RunOptions, RunOutcome};

pub fn run(ctx: &Ctx, args: RunArgs) -> Result<Exit> {
    let mut vars = Vec::new();
    for v in &args.vars {
        let (name, value) = v
            .split_once('=')
            .ok_or_else(|| Error::usage(format!("--var {v}: expected NAME=VALUE")))?;
        vars.push((name.to_string(), value.to_string()));
    }
    let opts = RunOptions {
        file: args.workflow,
        resume: args.resume,
        dry_run: args.dry_run,
        vars,
    };
    match workflow::run(&ctx.ws, ctx.ui, &opts)? {
        Outcome::DryRun(plan) => print_plan(ctx, &plan),
        Outcome::Ran(report) => {
            print_report(ctx, &report);
            Ok(report.ending.exit)
        }
    }
}

fn print_plan(ctx: &Ctx, plan: &DryRun) -> Result<Exit> {
    if ctx.ui.is_json() {
        ctx.ui.json(plan);
    } else {
        ctx.ui
            .out(format!("workflow: {} ({})", plan.workflow, plan.file));
        ctx.ui.out(format!(
            "session:  {} ({})",
            plan.session_id, plan.session_note
        ));
        ctx.ui.out(format!("claude:   {}", plan.claude));
        for (k, v) in &plan.variables {
            ctx.ui.out(format!("var:      ${{{k}}} = {v}"));
        }
        for s in &plan.steps {
            ctx.ui.out(s);
        }
    }
    // A real run would stop here with exit 2; the plan (with `problem` in
    // JSON) is still shown, and the JSON output stays one document.
    match &plan.problem {
        Some(p) => {
            ctx.ui.error(p);
            Ok(Exit::Usage)
        }
        None => Ok(Exit::Success),
    }
}

/// The result for people on stdout: the summary of a finished run, or
/// where a paused one stopped (with `--json` the engine's final `done`
/// event said it all).
fn print_report(ctx: &Ctx, r: &RunOutcome) {
    if ctx.ui.is_json() {
        return;
    }
    for (i, line) in r.ending.lines.iter().enumerate() {
        // The headline's status word in colour.
        let status = r.state.status.as_str();
        let paused = r.state.status == RunStatus::Paused;
        let prefix = format!("workflow {}: {status}", r.state.workflow_name);
        if i == 0 && !paused && line.starts_with(&prefix) {
            let style = match r.state.status {
                RunStatus::Completed => Style::Green,
                RunStatus::PartialSuccess => Style::Yellow,
                _ => Style::Red,
            };
            ctx.ui.out(format!(
                "workflow {}: {}{}",
                r.state.workflow_name,
                ctx.ui.paint(style, status),
                &line[prefix.len()..]
            ));
        } else {
            ctx.ui.out(line);
        }
    }
}
