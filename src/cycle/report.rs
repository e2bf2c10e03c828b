//! Markdown written by phase 5: `.process/failure-report.md` when the loop
//! blocks, and `.summaries/iteration-summaries/iteration-N.md` per run.
//! Templates: `templates/failure-report.md.j2`, `iteration-summary.md.j2`.

use serde_json::json;

use super::machine::CycleMachine;
use super::state::CycleState;
use crate::artifacts::fix_history::FixAttempt;
use crate::artifacts::iteration_state::IterationRecord;
use crate::artifacts::test_results::TestResults;
use crate::error::Result;
use crate::render::Renderer;

/// Failing tests listed in a report, at most.
const MAX_LISTED: usize = 30;

fn json_str<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |p| format!("{p:.1}%"))
}

/// `.process/failure-report.md`: what was tried, the pass-rate history,
/// stuck tests, what still fails, the last analysis and how to resume.
pub(super) fn failure_report(m: &CycleMachine, s: &CycleState, reason: &str) -> Result<String> {
    let id = &m.id;
    let history = &s.history;
    let paths = m.paths(s);
    let state = &s.iter;
    let last = state.iterations.last();
    let base = s.baseline();
    let results = base.and_then(|r| s.results.get(&r.run)).cloned();
    let failures = failure_rows(results.as_deref());
    let more_failures = results
        .as_ref()
        .map_or(0, |r| r.failures.len().saturating_sub(MAX_LISTED));
    let results_file = base
        .map(|r| m.rel(&super::docs::run_files(&paths, r).0))
        .unwrap_or_default();
    let hist = iteration_rows(&state.iterations);
    let attempts = attempt_rows(&history.entries);
    // The last analysis made.
    let last_analysis = state
        .iterations
        .iter()
        .rev()
        .find(|r| r.analysis_file.is_some());
    let last_task = last_analysis
        .and_then(|r| r.fix_task.as_deref())
        .and_then(|t| s.task(t));
    let fs = last_task.and_then(|t| t.context.fix_strategy.as_ref());
    let resume = vec![
        format!(
            "Read this report and the last analysis; fix what you can by hand (the code, not the tests)."
        ),
        format!("Mark the session active again: `wfx session resume {id}`"),
        format!(
            "Continue the loop, with more attempts if the limit was reached: `wfx test-cycle-execute --resume-session={id} --max-iterations={}`",
            crate::artifacts::iteration_state::retry_max_iterations(
                s.iter.max_iterations,
                history.entries.len() as u32
            )
        ),
        format!("Or give up and archive it: `wfx session complete {id}`"),
    ];
    let ctx = json!({
        "session_id": id,
        "reason": reason,
        "blocked_at": s.now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "attempts_done": history.entries.len(),
        "max_iterations": m.limits.max_iterations,
        "last": last,
        "best_pass_rate": state.best_pass_rate,
        "history": hist,
        "attempts": attempts,
        // From the runs themselves: the state's list is only refreshed
        // when an analysis runs, and a blocked loop ends after a retest.
        "stuck_tests": super::decide::stuck_tests(
            &crate::artifacts::iteration_state::settled_runs(&state.iterations),
            m.limits.stuck_after
        ),
        "stuck_after": m.limits.stuck_after,
        "failures": failures,
        "more_failures": more_failures,
        "results_file": results_file,
        "analysis_file": last_analysis.and_then(|r| r.analysis_file.clone()),
        "analysis_tool": last_analysis.and_then(|r| r.analysis_tool.clone()),
        "approach": fs.map(|s| s.approach.clone()),
        "points": fs.map(|s| s.modification_points.iter().map(ToString::to_string).collect::<Vec<_>>()).unwrap_or_default(),
        "resume": resume,
    });
    m.renderer.render("failure-report.md.j2", &ctx)
}

/// The listed failures of the baseline run (the first `MAX_LISTED`).
fn failure_rows(results: Option<&TestResults>) -> Vec<serde_json::Value> {
    results
        .map(|r| {
            r.failures
                .iter()
                .take(MAX_LISTED)
                .map(|f| {
                    json!({
                        "test": f.test,
                        "criticality": json_str(&f.criticality),
                        "flaky": f.flaky,
                        "place": match (&f.file, f.line) {
                            (Some(file), Some(line)) => Some(format!("{file}:{line}")),
                            (Some(file), None) => Some(file.clone()),
                            _ => None,
                        },
                        "error": f.error.lines().next().unwrap_or(""),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One row per run: its scope, counts, strategy, result and commits.
fn iteration_rows(iterations: &[IterationRecord]) -> Vec<serde_json::Value> {
    iterations
        .iter()
        .map(|r| {
            let commits: Vec<String> = [&r.fix_commit, &r.rollback_commit]
                .into_iter()
                .flatten()
                .map(|c| c[..c.len().min(10)].to_string())
                .collect();
            json!({
                "iteration": r.iteration,
                "scope": json_str(&r.scope),
                "pass_rate": r.pass_rate,
                "passed": r.passed,
                "failed": r.failed,
                "total": r.total,
                "strategy": r.strategy.map(|s| s.to_string()),
                "result": r.result.map(|x| json_str(&x)),
                "commits": commits.join(", "),
            })
        })
        .collect()
}

/// One row per fix attempt, with its files, flagged test edits and diff.
fn attempt_rows(entries: &[FixAttempt]) -> Vec<serde_json::Value> {
    entries
        .iter()
        .map(|a| {
            json!({
                "iteration": a.iteration,
                "strategy": a.strategy.map(|s| s.to_string()),
                "agent": a.agent,
                "fix_by": crate::agents::config::fix_by(&a.agent),
                "outcome": a.outcome.as_str(),
                "before": pct(a.pass_rate_before),
                "after": pct(a.pass_rate_after),
                "files": a.files_changed.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
                "edits": a.test_edits.iter().map(|t| t.detail.clone()).collect::<Vec<_>>().join("; "),
                "diff": a.diff.fenced(),
            })
        })
        .collect()
}

/// `.summaries/iteration-summaries/iteration-N.md` for run N and the fix
/// that followed it.
pub(super) fn iteration_summary(
    renderer: &Renderer,
    rec: &IterationRecord,
    prev: Option<&IterationRecord>,
    attempt: Option<&FixAttempt>,
    hooks_skipped: bool,
) -> Result<String> {
    let ts = |t: Option<crate::artifacts::Timestamp>| {
        t.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    };
    let ctx = json!({
        "n": rec.iteration,
        "scope": json_str(&rec.scope),
        "pass_rate": rec.pass_rate,
        "delta": crate::engine::event::delta_text(
            prev.map(|p| p.pass_rate),
            rec.pass_rate,
            prev.and_then(|p| rec.change_since(p)),
        ),
        "passed": rec.passed,
        "total": rec.total,
        "failed": rec.failed,
        // Nothing parsed: the one "failure" is the command itself.
        "no_test_ran": rec.total == 0 && rec.passed == 0,
        "started_at": ts(Some(rec.started_at)),
        "completed_at": ts(rec.completed_at),
        "result": rec.result.map(|r| json_str(&r)),
        "new_failures": rec.new_failures,
        "failed_tests": rec.failed_tests.iter().take(MAX_LISTED).collect::<Vec<_>>(),
        "more_failed": rec.failed_tests.len().saturating_sub(MAX_LISTED),
        "strategy": rec.strategy.map(|s| s.to_string()),
        "analysis_file": rec.analysis_file,
        "analysis_tool": rec.analysis_tool,
        "fix_task": rec.fix_task,
        "fix_by": attempt.map(|a| crate::agents::config::fix_by(&a.agent)),
        "fix_outcome": attempt.map(|a| a.outcome.as_str()),
        "files_changed": attempt.map(|a| a.files_changed.clone()).unwrap_or_default(),
        "not_committed": attempt.map(|a| a.not_committed.iter().map(ToString::to_string).collect::<Vec<_>>()).unwrap_or_default(),
        "test_edits": attempt.map(|a| a.test_edits.iter().map(|t| format!("{} ({})", t.detail, json_str(&t.kind))).collect::<Vec<_>>()).unwrap_or_default(),
        "fix_commit": rec.fix_commit,
        "rollback_commit": rec.rollback_commit,
        "hooks_skipped": hooks_skipped,
    });
    renderer.render("iteration-summary.md.j2", &ctx)
}
