//! Phase 3, analysis (DESIGN.md §4): TEST_ANALYSIS_RESULTS.md with the
//! eight sections, rendered from the plan — complete on its own, without
//! any agent.

use super::plan::Plan;
use crate::error::Result;
use crate::render::Renderer;
use crate::session::{SessionPaths, store};

/// Template of TEST_ANALYSIS_RESULTS.md.
pub const TEMPLATE: &str = "TEST_ANALYSIS_RESULTS.md.j2";

/// The deterministic analysis text.
pub fn render(renderer: &Renderer, plan: &Plan) -> Result<String> {
    renderer.render(TEMPLATE, plan)
}

/// Write `.process/TEST_ANALYSIS_RESULTS.md`.
pub fn write(renderer: &Renderer, paths: &SessionPaths, plan: &Plan) -> Result<()> {
    store::write_atomic(
        &paths.analysis_results(),
        render(renderer, plan)?.as_bytes(),
    )
}
