//! `wfx test-cycle-execute [--resume-session=WFS-x]`: phase 5, the
//! test → analyse → fix → retest loop (DESIGN.md §5).

use super::Ctx;
use crate::cli::{PipelineArgs, TestCycleExecuteArgs};
use crate::cycle::{self, CycleOutcome, CycleRequest};
use crate::error::{Exit, Result};
use crate::phases::plan::CycleOptions;

pub fn run(ctx: &Ctx, args: TestCycleExecuteArgs) -> Result<Exit> {
    let req = CycleRequest {
        session: args.session_id().map(str::to_string),
        options: options(&args.pipeline),
    };
    let outcome = cycle::run(&ctx.ws, &req, ctx.ui)?;
    Ok(print(ctx, &outcome))
}

/// The phase-5 flags as recorded in a session.
pub fn options(p: &PipelineArgs) -> CycleOptions {
    CycleOptions {
        allow_dirty: p.allow_dirty,
        no_commit: p.no_commit,
        worktree: p.worktree,
        fix_agent: p.fix_agent.clone(),
        max_iterations: p.max_iterations,
        yes: p.yes,
    }
}

/// The result: lines on stdout, or the final `{"event": "done"}` line with
/// `--json`. Returns the exit code.
pub fn print(ctx: &Ctx, o: &CycleOutcome) -> Exit {
    if ctx.ui.is_json() {
        let mut fields = serde_json::json!({
            "session_id": o.session_id,
            "status": o.status,
            "exit_code": o.exit.code(),
        });
        if let (Some(map), serde_json::Value::Object(extra)) = (fields.as_object_mut(), &o.fields) {
            for (k, v) in extra {
                map.entry(k.clone()).or_insert(v.clone());
            }
        }
        ctx.ui.event("done", fields);
    } else {
        for line in &o.lines {
            ctx.ui.out(line);
        }
    }
    o.exit
}
