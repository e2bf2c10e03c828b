//! `wfx test-fix-gen INPUT`: phases 1–4, the summary, then phase 5
//! (unless `--plan-only`).

use super::{Ctx, test_cycle_execute};
use crate::cli::TestFixGenArgs;
use crate::cycle::{self, CycleRequest};
use crate::error::{Exit, Result};
use crate::phases::{self, GenRequest};

pub fn run(ctx: &Ctx, args: TestFixGenArgs) -> Result<Exit> {
    let p = &args.pipeline;
    let req = GenRequest {
        input: args.input.clone(),
        options: test_cycle_execute::options(p),
        stop_after_phase: args.stop_after_phase,
        preflight: !args.plan_only && args.stop_after_phase.is_none(),
    };
    let out = phases::run(&ctx.ws, &req, ctx.ui)?;
    for w in &out.warnings {
        ctx.ui.warn(w);
    }
    let continue_gen = format!("wfx test-fix-gen {}", out.session_id);
    let Some(plan) = &out.plan else {
        let n = out.stopped_after.unwrap_or(0);
        if ctx.ui.is_json() {
            ctx.ui.json(&serde_json::json!({
                "session_id": out.session_id,
                "resumed": out.resumed,
                "phases_run": out.phases_run,
                "stopped_after_phase": n,
                "next_command": continue_gen,
            }));
        } else {
            ctx.ui
                .out(format!("Stopped after phase {n}: {}", out.session_id));
            ctx.ui.out(format!("Next: {continue_gen}"));
        }
        return Ok(Exit::Success);
    };
    let continue_cycle = !args.plan_only && out.stopped_after.is_none();
    if ctx.ui.is_json() {
        let tasks = phases::tasks::initial_tasks(plan);
        let doc = serde_json::json!({
            "session_id": out.session_id,
            "resumed": out.resumed,
            "phases_run": out.phases_run,
            "mode": plan.session.mode,
            "input": plan.session.input,
            "tasks": tasks.iter().map(|(_, t)| serde_json::json!({"id": t.id, "title": t.title, "agent": t.meta.agent})).collect::<Vec<_>>(),
            "thresholds": {
                "code_validation": {"critical": plan.limits.gate_critical, "error": plan.limits.gate_errors, "warning": plan.limits.gate_warnings},
                "coverage": {"line": plan.coverage.target_line, "branch": plan.coverage.target_branch, "function": plan.coverage.target_function},
                "pass_threshold": plan.limits.pass_threshold,
                "max_iterations": plan.limits.max_iterations,
            },
            "artifacts": plan.artifacts,
            "next_command": plan.next.next_command,
        });
        if continue_cycle {
            // Phase 5 streams JSON Lines: the plan is the first event.
            ctx.ui.event("planned", doc);
        } else {
            ctx.ui.json(&doc);
        }
    } else {
        // When the loop starts right away, a "Next:" command would only
        // repeat what is already happening.
        let mut shown = plan.clone();
        if continue_cycle {
            shown.next.next_command.clear();
        }
        ctx.ui
            .out(phases::render_summary(&ctx.ws, &shown)?.trim_end());
    }
    if !continue_cycle {
        if let Some(path) = &p.junit {
            ctx.ui.warn(format!(
                "--junit: planning runs no test, so {} was not written",
                path.display()
            ));
        }
        return Ok(Exit::Success);
    }
    if !ctx.ui.is_json() {
        ctx.ui.out("");
    }
    let outcome = cycle::run(
        &ctx.ws,
        &CycleRequest {
            session: Some(out.session_id.clone()),
            options: test_cycle_execute::options(p),
            watch: false,
        },
        ctx.ui,
    )?;
    Ok(test_cycle_execute::finish(
        ctx,
        &outcome,
        p.junit.as_deref(),
    ))
}
