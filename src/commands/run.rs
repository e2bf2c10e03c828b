//! `wfx run <workflow.yml> [--resume] [--dry-run] [--var NAME=VALUE]`: run a
//! YAML workflow (DESIGN.md §8). Progress lines go to stderr as the run
//! goes; the summary (or `--json` document) goes to stdout.

use super::Ctx;
use crate::cli::RunArgs;
use crate::error::{Error, Exit, Result};
use crate::ui::Style;
use crate::workflow::{self, DryRun, Outcome, Report, RunOptions};

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
            Ok(report.exit)
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

fn print_report(ctx: &Ctx, r: &Report) {
    if ctx.ui.is_json() {
        ctx.ui.event(
            "finished",
            serde_json::json!({
                "session_id": r.state.session_id,
                "session_dir": r.session_dir,
                "status": r.state.status,
                "exit_code": r.exit.code(),
                "stop_reason": r.state.stop_reason,
                "never_passed": r.never_passed,
                "steps": r.state.steps,
            }),
        );
        return;
    }
    let status = r.state.status.as_str();
    let headline = match r.state.status {
        crate::artifacts::run_state::RunStatus::Completed => ctx.ui.paint(Style::Green, status),
        crate::artifacts::run_state::RunStatus::PartialSuccess => {
            ctx.ui.paint(Style::Yellow, status)
        }
        _ => ctx.ui.paint(Style::Red, status),
    };
    let mut head = format!("workflow {}: {headline}", r.state.workflow_name);
    if !r.never_passed.is_empty() {
        let steps: Vec<String> = r.never_passed.iter().map(|i| i.to_string()).collect();
        head.push_str(&format!(
            " — tests of step{} {} did not pass",
            if steps.len() == 1 { "" } else { "s" },
            steps.join(", ")
        ));
    }
    ctx.ui.out(head);
    for line in &r.lines {
        ctx.ui.out(format!("  {line}"));
    }
    if let Some(reason) = &r.state.stop_reason {
        ctx.ui.out(format!("stopped: {reason}"));
    }
    ctx.ui.out(format!("session: {}", r.session_dir));
}
