//! Agent CLIs as pluggable external commands (DESIGN.md §6.3): presets and
//! custom commands, prompt rendering, invocation, fix-strategy extraction,
//! the analysis fallback chain and the built-in analyzer.
//!
//! wfx never trusts an agent's word: an analysis counts only when a valid
//! fix strategy can be extracted from it and none of the fallback triggers
//! fire; otherwise the next tool is tried, and after the chain the built-in
//! analyzer answers (`analysis_quality: "degraded"`).

pub mod builtin;
pub mod config;
pub mod invoke;
pub mod presets;
pub mod prompts;
pub mod report;
pub mod strategy;
pub mod vars;

use std::path::Path;

use crate::artifacts::fix_history::{self, AgentCall, FixHistory};
use crate::artifacts::iteration_state::Strategy;
use crate::artifacts::task::{AnalysisQuality, FixStrategy};
use crate::artifacts::test_results::TestResults;
use crate::error::{Error, Result};
use crate::render::Renderer;
use crate::session::SessionPaths;

pub use config::{AgentKind, MANUAL, ResolvedAgent, Role};
pub use invoke::{CallFiles, CallRecord, ErrorKind, Invocation, invoke};
pub use report::TriedTool;
pub use strategy::{Reason, extract, fallback_reason, total_cost};
pub use vars::{Mode, UnknownVariable, Vars, interpolate};

/// The tool name recorded when the built-in analyzer answered.
pub const BUILTIN: &str = "builtin";

/// Everything one analysis step needs.
pub struct AnalysisCtx<'a> {
    /// The project root (the agents' working directory).
    pub root: &'a Path,
    pub paths: &'a SessionPaths,
    pub iteration: u32,
    pub max_iterations: u32,
    pub strategy: Strategy,
    pub results: &'a TestResults,
    /// The test output (whole, or head and tail).
    pub log_text: &'a str,
    /// The full log, relative to the project root.
    pub log_path: &'a str,
    pub stuck_tests: &'a [String],
    pub history: &'a FixHistory,
    /// Fix strategies of earlier iterations, oldest first.
    pub previous_strategies: &'a [FixStrategy],
    pub vars: &'a Vars,
    pub renderer: &'a Renderer,
    /// Extra environment for agent processes (see [`Invocation::env`]).
    pub env: &'a [(String, String)],
}

/// What the engine's agent path did with one call of the chain.
pub enum Invoked {
    /// The call ran (and passed the engine's checks).
    Ran(Box<CallRecord>),
    /// Not run: the session's cost cap is reached (the reason).
    CostCapped(String),
}

/// The result of an analysis step.
#[derive(Debug, Clone)]
pub struct AnalysisOutcome {
    pub strategy: FixStrategy,
    /// The agent whose analysis was accepted, or [`BUILTIN`].
    pub tool: String,
    pub quality: AnalysisQuality,
    /// Tools passed over, in the order tried, with the reason.
    pub tried: Vec<TriedTool>,
    /// Every agent call made, for fix-history.json `agent_calls`.
    pub calls: Vec<AgentCall>,
    /// `iteration-N-analysis.md`.
    pub analysis_markdown: String,
    /// Set when the session's cost cap stopped the chain: the loop must
    /// stop (blocked) with this reason after saving the analysis.
    pub cost_capped: Option<String>,
    /// What to fix in the environment, when every failure is an
    /// environment failure (a missing module, a port in use, timezone
    /// data): no agent can fix that in the code, so none is asked.
    pub environment: Vec<String>,
    /// The failing tests the built-in classification puts in
    /// `environment` groups: not the fix agent's to fix (DESIGN.md §10,
    /// issue #19), whichever tool's analysis was accepted.
    pub environment_tests: Vec<String>,
}

/// The analysis agents' prompt, with the built-in analyzer's findings as hints.
fn analysis_prompt(ctx: &AnalysisCtx, builtin: &builtin::BuiltinAnalysis) -> Result<String> {
    prompts::analysis(
        ctx.renderer,
        &prompts::AnalysisPrompt {
            session_id: &ctx.paths.id,
            iteration: ctx.iteration,
            max_iterations: ctx.max_iterations,
            strategy: ctx.strategy,
            results: ctx.results,
            log_text: ctx.log_text,
            log_path: ctx.log_path,
            stuck_tests: ctx.stuck_tests,
            history: ctx.history,
            hints: Some(builtin),
        },
    )
}

/// An agent of the chain not run because the cost cap was reached.
fn not_run_cost_cap(agent: &ResolvedAgent) -> TriedTool {
    TriedTool {
        tool: agent.name.clone(),
        reason_code: "cost_cap".into(),
        reason: "not run: the session's cost cap was reached".into(),
        output_file: None,
        duration_ms: 0,
        cost_usd: None,
    }
}

/// The outcome when an agent's analysis is accepted.
fn accepted(
    ctx: &AnalysisCtx,
    agent: &ResolvedAgent,
    call: &CallRecord,
    strategy: FixStrategy,
    tried: Vec<TriedTool>,
    calls: Vec<AgentCall>,
    environment_tests: Vec<String>,
) -> Result<AnalysisOutcome> {
    let markdown = report::render(
        ctx.renderer,
        &report::ReportInput {
            iteration: ctx.iteration,
            quality: AnalysisQuality::Agent,
            tool: agent.name.clone(),
            tried: tried.clone(),
            strategy: &strategy,
            agent_text: Some(&call.result_text),
            builtin: None,
            cost_capped: None,
        },
    )?;
    Ok(AnalysisOutcome {
        strategy,
        tool: agent.name.clone(),
        quality: AnalysisQuality::Agent,
        tried,
        calls,
        analysis_markdown: markdown,
        cost_capped: None,
        environment: Vec::new(),
        environment_tests,
    })
}

/// Run the analysis chain, then (if no tool's analysis is accepted) the
/// built-in analyzer. Every call goes through `invoke`, the engine's one
/// agent path (cost cap, process group, the checks after a call); Ctrl-C
/// during a call is `Error::Interrupted`.
pub fn analyze(
    chain: &[ResolvedAgent],
    ctx: &AnalysisCtx,
    invoke: &mut dyn FnMut(&Invocation) -> Result<Invoked>,
) -> Result<AnalysisOutcome> {
    let builtin = builtin::analyze(ctx.results, ctx.log_text, ctx.root, ctx.history);
    let mut tried: Vec<TriedTool> = Vec::new();
    let mut calls: Vec<AgentCall> = Vec::new();
    let mut cost_capped = None;
    let environment = builtin.environment_only();
    let environment_tests = builtin.environment_tests();

    if !chain.is_empty() && environment.is_empty() {
        let prompt = analysis_prompt(ctx, &builtin)?;
        for (position, agent) in chain.iter().enumerate() {
            let files = CallFiles::analysis(ctx.paths, ctx.iteration, position, &agent.name);
            let invocation = Invocation {
                agent,
                role: Role::Analysis,
                prompt: &prompt,
                vars: ctx.vars,
                files: &files,
                cwd: ctx.root,
                env: ctx.env,
            };
            let call = match invoke(&invocation)? {
                Invoked::Ran(call) => call,
                Invoked::CostCapped(reason) => {
                    tried.extend(chain[position..].iter().map(not_run_cost_cap));
                    cost_capped = Some(reason);
                    break;
                }
            };
            if call.interrupted {
                return Err(Error::Interrupted(format!(
                    "{} was analysing iteration {}",
                    agent.name, ctx.iteration
                )));
            }
            let extracted = extract(&call.result_text);
            match fallback_reason(&call, &extracted, ctx.previous_strategies) {
                None => {
                    calls.push(call.to_artifact(
                        Some(ctx.iteration),
                        None,
                        fix_history::CallOutcome::Accepted,
                    ));
                    let strategy = extracted.expect("no fallback reason means a valid strategy");
                    return accepted(ctx, agent, &call, strategy, tried, calls, environment_tests);
                }
                Some(reason) => {
                    calls.push(call.to_artifact(Some(ctx.iteration), None, reason.outcome()));
                    tried.push(TriedTool {
                        tool: agent.name.clone(),
                        reason_code: reason.code().into(),
                        reason: reason.to_string(),
                        output_file: Some(call.output_file.clone()),
                        duration_ms: call.duration_ms,
                        cost_usd: call.cost_usd,
                    });
                }
            }
        }
    }

    let markdown = report::render(
        ctx.renderer,
        &report::ReportInput {
            iteration: ctx.iteration,
            quality: AnalysisQuality::Degraded,
            tool: BUILTIN.into(),
            tried: tried.clone(),
            strategy: &builtin.strategy,
            agent_text: None,
            builtin: Some(&builtin),
            cost_capped: cost_capped.clone(),
        },
    )?;
    Ok(AnalysisOutcome {
        strategy: builtin.strategy,
        tool: BUILTIN.into(),
        quality: AnalysisQuality::Degraded,
        tried,
        calls,
        analysis_markdown: markdown,
        cost_capped,
        environment,
        environment_tests,
    })
}
