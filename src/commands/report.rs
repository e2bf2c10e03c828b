//! `wfx report [SESSION] [--html FILE]`: one HTML page, by default
//! `.workflow/report.html` inside the project (where its links to the
//! session's artifacts resolve).

use std::path::{Path, PathBuf};

use super::Ctx;
use crate::cli::ReportArgs;
use crate::error::{Exit, Result};
use crate::report;

pub fn run(ctx: &Ctx, args: ReportArgs) -> Result<Exit> {
    let sref = ctx.ws.pick_for_view(args.session.as_deref())?;
    let html = args
        .html
        .unwrap_or_else(|| ctx.ws.workflow_dir().join("report.html"));
    let written = report::write_report(&ctx.ws, &sref, &html)?;
    let shown = shown_path(&html, std::env::current_dir().ok().as_deref());
    for p in &written.problems {
        ctx.ui.warn(format!("left out of the report: {p}"));
    }
    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "session_id": written.session_id,
            "report": shown,
            "bytes": written.bytes,
            "links": written.links,
            "outcome": written.outcome,
            "problems": written.problems,
        }));
    } else {
        ctx.ui.out(format!(
            "Wrote {} ({}: {}; {} bytes)",
            shown.display(),
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

/// The report's path as the person can use it from where they are: as
/// given when relative, else relative to the current directory when it
/// lies below it, else whole.
fn shown_path(path: &Path, cwd: Option<&Path>) -> PathBuf {
    if path.is_relative() {
        return path.to_path_buf();
    }
    cwd.and_then(|cwd| path.strip_prefix(cwd).ok())
        .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_shown_from_where_the_person_is() {
        let report = Path::new("/p/proj/.workflow/report.html");
        for (path, cwd, want) in [
            (report, Some("/p/proj"), ".workflow/report.html"),
            (report, Some("/p"), "proj/.workflow/report.html"),
            (report, Some("/elsewhere"), "/p/proj/.workflow/report.html"),
            (report, None, "/p/proj/.workflow/report.html"),
            (Path::new("out/r.html"), Some("/p"), "out/r.html"),
        ] {
            assert_eq!(
                shown_path(path, cwd.map(Path::new)),
                PathBuf::from(want),
                "{path:?} from {cwd:?}"
            );
        }
    }
}
