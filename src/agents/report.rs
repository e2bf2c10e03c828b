//! `iteration-N-analysis.md`, rendered from `templates/iteration-analysis.md.j2`
//! for agent and built-in analyses alike.

use serde::Serialize;

use crate::artifacts::task::{AnalysisQuality, FixStrategy};
use crate::error::Result;
use crate::render::Renderer;

use super::builtin::BuiltinAnalysis;

/// Template name (relative to `templates/`).
pub const TEMPLATE: &str = "iteration-analysis.md.j2";

/// A tool of the analysis chain that was passed over, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriedTool {
    pub tool: String,
    /// Stable reason code (`timeout`, `rate_limit`, `low_confidence`, …).
    pub reason_code: String,
    /// The reason in words.
    pub reason: String,
    /// The tool's raw output, relative to the project root (none when it
    /// was not run).
    pub output_file: Option<String>,
    pub duration_ms: u64,
    pub cost_usd: Option<f64>,
}

/// What the report shows.
pub struct ReportInput<'a> {
    pub iteration: u32,
    pub quality: AnalysisQuality,
    pub tool: String,
    pub tried: Vec<TriedTool>,
    pub strategy: &'a FixStrategy,
    /// The accepted agent's answer, verbatim.
    pub agent_text: Option<&'a str>,
    pub builtin: Option<&'a BuiltinAnalysis>,
    pub cost_capped: Option<String>,
}

#[derive(Serialize)]
struct Ctx<'a> {
    fence: String,
    iteration: u32,
    quality: AnalysisQuality,
    tool: &'a str,
    tried: &'a [TriedTool],
    strategy: &'a FixStrategy,
    points: Vec<String>,
    agent_text: Option<&'a str>,
    builtin: Option<&'a BuiltinAnalysis>,
    cost_capped: Option<&'a str>,
}

pub fn render(renderer: &Renderer, input: &ReportInput) -> Result<String> {
    let excerpts: Vec<&str> = input
        .builtin
        .map(|b| {
            b.findings
                .iter()
                .filter_map(|f| f.location.as_ref().map(|l| l.excerpt.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let ctx = Ctx {
        fence: crate::markdown::fence_for(excerpts),
        iteration: input.iteration,
        quality: input.quality,
        tool: &input.tool,
        tried: &input.tried,
        strategy: input.strategy,
        points: input
            .strategy
            .modification_points
            .iter()
            .map(ToString::to_string)
            .collect(),
        agent_text: input.agent_text,
        builtin: input.builtin,
        cost_capped: input.cost_capped.as_deref(),
    };
    renderer.render(TEMPLATE, &ctx)
}
