//! `wfx test-fix-gen INPUT`: phases 1–4, the summary, then phase 5
//! (unless `--plan-only`).

use chrono::Utc;

use super::{Ctx, test_cycle_execute};
use crate::cli::TestFixGenArgs;
use crate::cycle::{self, CycleRequest};
use crate::engine::{Event, Sinks};
use crate::error::{Exit, Result};
use crate::phases::{self, GenRequest};

pub fn run(ctx: &Ctx, args: TestFixGenArgs) -> Result<Exit> {
    let p = &args.pipeline;
    // Phase 5 follows: `--json` streams events from the first phase on;
    // otherwise it prints one document at the end.
    let streams = !args.plan_only && args.stop_after_phase.is_none();
    let req = GenRequest {
        input: args.input.clone(),
        options: test_cycle_execute::options(p),
        stop_after_phase: args.stop_after_phase,
        preflight: streams,
    };
    let mut sinks = if streams || !ctx.ui.is_json() {
        Sinks::new(ctx.ui)
    } else {
        Sinks::to(ctx.ui, Vec::new())
    };
    let out = phases::run(&ctx.ws, &req, &mut sinks)?;
    for w in &out.warnings {
        if streams || !ctx.ui.is_json() {
            // People see `warning: …` as before; `--json` streams a
            // `warning` event beside the phases' events.
            sinks.emit(&Event::warning(w.as_str()), Utc::now());
        } else {
            // One document at the end: a captured event would be lost.
            ctx.ui.warn(w);
        }
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
    let planned = phases::planned(&out, plan);
    if ctx.ui.is_json() && !continue_cycle {
        ctx.ui.json(&planned);
    } else {
        // Phase 5's JSON Lines follow the plan's event.
        sinks.emit(&Event::Planned(Box::new(planned)), Utc::now());
    }
    if !ctx.ui.is_json() {
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
