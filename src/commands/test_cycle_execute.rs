//! `wfx test-cycle-execute [--resume-session=WFS-x]`: phase 5, the
//! test → analyse → fix → retest loop (DESIGN.md §5).

use super::Ctx;
use crate::cli::{PipelineArgs, TestCycleExecuteArgs};
use crate::cycle::{self, CycleRequest};
use crate::engine::Ending;
use crate::error::{Exit, Result};
use crate::phases::plan::CycleOptions;

pub fn run(ctx: &Ctx, args: TestCycleExecuteArgs) -> Result<Exit> {
    let req = CycleRequest {
        session: args.session_id().map(str::to_string),
        options: options(&args.pipeline),
        watch: args.watch,
    };
    let outcome = cycle::run(&ctx.ws, &req, ctx.ui)?;
    Ok(finish(ctx, &outcome, args.pipeline.junit.as_deref()))
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
        candidates: p.candidates,
    }
}

/// The result for people on stdout (with `--json` the engine's final
/// `done` event said it), then `--junit` and, on CI, what GitHub reads
/// (docs/ci.md). Returns the exit code.
pub fn finish(ctx: &Ctx, ending: &Ending, junit: Option<&std::path::Path>) -> Exit {
    for line in &ending.lines {
        ctx.ui.out(line);
    }
    crate::ci::publish::after_session(&ctx.ws, &ending.done, junit, ctx.ui);
    ending.exit
}
