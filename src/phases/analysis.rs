//! Phase 3, analysis (DESIGN.md §4): TEST_ANALYSIS_RESULTS.md with the
//! eight sections, rendered from the plan — complete on its own, without
//! any agent. When `agents.analysis` names agents, the first one that
//! answers enriches the file with an "Agent Review" section; its raw output
//! is kept in `.process/analysis-agent-output.md`. When every agent fails,
//! the deterministic file stands and says so.
//!
//! Every call is recorded in `fix-history.json` `agent_calls` (role
//! `analysis`, no iteration: that marks phase 3) and counted against
//! `agents.max_cost_usd` before the next call, here and in phase 5, which
//! reads the same list.

use super::plan::Plan;
use crate::agents::{self, CallFiles, Invocation, Role, Vars};
use crate::artifacts::config::Config;
use crate::artifacts::fix_history::Tamper;
use crate::artifacts::fix_history::{AgentCall, CallOutcome, FixHistory};
use crate::engine::policy;
use crate::error::Result;
use crate::render::Renderer;
use crate::session::store::{self, SessionLock};
use crate::session::{SessionPaths, Workspace};

/// Template of TEST_ANALYSIS_RESULTS.md.
pub const TEMPLATE: &str = "TEST_ANALYSIS_RESULTS.md.j2";
/// Template of the prompt sent to the analysis agent.
pub const PROMPT_TEMPLATE: &str = "test-analysis-prompt.md.j2";

/// Phase 3's calls in `history` (role `analysis`, no iteration, no task).
fn is_phase3(c: &AgentCall) -> bool {
    c.role == Role::Analysis && c.iteration.is_none() && c.task.is_none()
}

/// The session's fix history without any phase-3 call of an earlier,
/// interrupted run of this phase (so a redone phase counts once).
fn history_without_phase3(paths: &SessionPaths, ws: &Workspace) -> Result<FixHistory> {
    let path = paths.fix_history();
    let mut h: FixHistory = store::read_json_opt(&path, &ws.rel(&path))?.unwrap_or_default();
    if h.session_id.is_empty() {
        h.session_id = paths.id.clone();
    }
    h.agent_calls.retain(|c| !is_phase3(c));
    Ok(h)
}

/// The deterministic analysis text.
pub fn render(renderer: &Renderer, plan: &Plan) -> Result<String> {
    renderer.render(TEMPLATE, plan)
}

/// How the optional agent review went, recorded on phase 3.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentReview {
    /// The agent whose answer was used, if any.
    pub agent: Option<String>,
    /// One line per agent tried: `name: ok` or `name: <why it failed>`.
    pub attempts: Vec<String>,
}

/// Write `.process/TEST_ANALYSIS_RESULTS.md`, asking the configured
/// analysis agents (in order) for a review. Returns what the agents did,
/// or `None` when none is configured.
pub fn write(
    ws: &Workspace,
    renderer: &Renderer,
    paths: &SessionPaths,
    plan: &Plan,
    config: &Config,
    lock: &mut SessionLock,
) -> Result<Option<AgentReview>> {
    let text = render(renderer, plan)?;
    if config.agents.analysis.is_empty() {
        store::write_atomic(&paths.analysis_results(), text.as_bytes())?;
        return Ok(None);
    }
    let output_rel = ws.rel(&paths.analysis_agent_output());
    let mut review = AgentReview {
        agent: None,
        attempts: Vec::new(),
    };
    let mut answer = None;
    match agents::config::analysis_chain(&config.agents) {
        Err(e) => review.attempts.push(format!("agents.analysis: {e}")),
        Ok(chain) => {
            let prompt = renderer.render(
                PROMPT_TEMPLATE,
                &serde_json::json!({ "plan": plan, "analysis": text }),
            )?;
            let files = CallFiles {
                prompt: paths.process_dir().join("analysis-agent-prompt.md"),
                output: paths.analysis_agent_output(),
            };
            let mut vars = Vars::new();
            vars.set("session.id", paths.id.clone())
                .set("session.dir", ws.rel(&paths.dir))
                .set("spec", ws.rel(&paths.analysis_results()));
            let mut history = history_without_phase3(paths, ws)?;
            // A read-only role: what a call changes in the tree is undone
            // and the call counts as failed (DESIGN.md §10.2).
            let cp = crate::git::Checkpoints::open(&ws.root)
                .unwrap_or_else(|_| crate::git::Checkpoints::disabled());
            // wfx's config and the repository's settings are checked as
            // after every agent call of phase 5 (DESIGN.md §11.2, §11.3).
            let config_copy = crate::engine::tamper::ConfigCopy::take(&ws.config_path());
            for agent in &chain {
                // The engine's one cost cap, on the same records phase 5
                // reads.
                if let Some(reason) =
                    policy::cost_cap(agents::total_cost(&history), config.agents.max_cost_usd)
                {
                    review
                        .attempts
                        .push(format!("{}: not run: {reason}", agent.name));
                    break;
                }
                let (record, undone) = read_only_call(
                    &cp,
                    &config_copy,
                    lock,
                    &Invocation {
                        agent,
                        role: Role::Analysis,
                        prompt: &prompt,
                        vars: &vars,
                        files: &files,
                        cwd: &ws.root,
                        env: &[],
                    },
                )?;
                if !undone.is_empty() {
                    history
                        .agent_calls
                        .push(record.to_artifact(None, None, CallOutcome::Failed));
                    store::write_json(&paths.fix_history(), &history)?;
                    review.attempts.push(format!(
                        "{}: tree_edited (changed {}; undone)",
                        agent.name,
                        undone.join(", ")
                    ));
                    continue;
                }
                // The same judgement as the analysis chain of phase 5
                // (DESIGN.md §6.3: at least 100 words, a working call).
                let reason = agents::strategy::review_reason(&record);
                let outcome = reason
                    .as_ref()
                    .map_or(CallOutcome::Accepted, |r| r.outcome());
                // Recorded before anything else happens, so the next call
                // (here or in phase 5) sees its cost.
                history
                    .agent_calls
                    .push(record.to_artifact(None, None, outcome));
                store::write_json(&paths.fix_history(), &history)?;
                let Some(why) = reason else {
                    review.attempts.push(format!("{}: ok", agent.name));
                    review.agent = Some(agent.name.clone());
                    answer = Some(record.result_text.trim().to_string());
                    break;
                };
                review.attempts.push(format!("{}: {why}", agent.name));
                if record.interrupted {
                    break;
                }
            }
        }
    }
    let out = with_review(text, &review, answer, &output_rel);
    store::write_atomic(&paths.analysis_results(), out.as_bytes())?;
    Ok(Some(review))
}

/// The analysis with the agent's review appended, or a note that none
/// could review it.
fn with_review(
    text: String,
    review: &AgentReview,
    answer: Option<String>,
    output_rel: &str,
) -> String {
    let mut out = text;
    match (&review.agent, answer) {
        (Some(name), Some(body)) => {
            out.push_str(&format!(
                "\n## Agent Review ({name})\n\nWritten by the `{name}` analysis agent from the sections above; wfx did not check it. Raw output: `{output_rel}`.\n\n{body}\n"
            ));
        }
        _ => {
            out.push_str(&format!(
                "\n> Note: no analysis agent could review this plan ({}). This file is the deterministic analysis only; raw output, if any: `{output_rel}`.\n",
                review.attempts.join("; ")
            ));
        }
    }
    out
}

/// One call of a read-only role: the repository's config and index, wfx's
/// config and the tree are put back after it; what had to be undone in the
/// tree is returned with the record (which names the first tampering).
fn read_only_call(
    cp: &crate::git::Checkpoints,
    config_copy: &crate::engine::tamper::ConfigCopy,
    lock: &mut SessionLock,
    invocation: &Invocation,
) -> Result<(agents::CallRecord, Vec<String>)> {
    let before = cp.snapshot()?;
    let repo = cp.repo_guard()?;
    let runner = crate::engine::runner_env::RunnerEnv::take(invocation.cwd);
    let mut record = lock.with_child(|on_spawn| agents::invoke(invocation, on_spawn))??;
    let restored = cp.restore_repo(&repo, true)?;
    if config_copy.restore()? {
        record.tamper.get_or_insert(Tamper::ConfigEdited);
    }
    if restored.config {
        record.tamper.get_or_insert(Tamper::RepoConfigEdited);
    }
    if restored.index {
        record.tamper.get_or_insert(Tamper::IndexEdited);
    }
    let undone = match &before {
        Some(tree) => crate::engine::tamper::undo_tree(cp, tree)?,
        None => Vec::new(),
    };
    if !undone.is_empty() {
        record.tamper.get_or_insert(Tamper::TreeEdited);
    }
    crate::engine::runner_env::RunnerEnv::take(invocation.cwd)
        .unchanged_since(&runner, &invocation.agent.name)?;
    Ok((record, undone))
}
