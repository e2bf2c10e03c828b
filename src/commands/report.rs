//! `wfx report [SESSION] --html FILE`.

use super::Ctx;
use crate::cli::ReportArgs;
use crate::error::{Exit, Result};
use crate::report;

pub fn run(ctx: &Ctx, args: ReportArgs) -> Result<Exit> {
    let sref = ctx.ws.pick_for_view(args.session.as_deref())?;
    let written = report::write_report(&ctx.ws, &sref, &args.html)?;
    for p in &written.problems {
        ctx.ui.warn(format!("left out of the report: {p}"));
    }
    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "session_id": written.session_id,
            "report": args.html,
            "bytes": written.bytes,
            "links": written.links,
            "outcome": written.outcome,
            "problems": written.problems,
        }));
    } else {
        ctx.ui.out(format!(
            "Wrote {} ({}: {}; {} bytes)",
            args.html.display(),
            written.session_id,
            written.outcome.title,
            written.bytes
        ));
        if !written.links {
            ctx.ui.status(
                "the report lies outside the project, so artifact paths are shown as text, not links",
            );
        }
    }
    Ok(Exit::Success)
}
