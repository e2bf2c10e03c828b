//! `wfx status [SESSION] [--json]`: where a session stands, how it got
//! there, and the exact command to continue. The `--json` document is a
//! stable interface (docs/status.md): fields are added, never renamed.
//! A `wfx run` session shows its steps and attempts instead of the test
//! cycle; both come from the same view ([`report::build`]).

use super::Ctx;
use crate::artifacts::fix_history::{DiffLineKind, more_lines};
use crate::cli::StatusArgs;
use crate::error::{Exit, Result};
use crate::report::run::{AttemptView, RunSection, StepView, TestView};
use crate::report::{self, SessionView};
use crate::ui::{Style, table};

/// The `wfx status --json` document of a session (`None`: the session
/// `wfx status` takes without an id). Also what the MCP server returns.
pub fn document(ws: &crate::session::Workspace, given: Option<&str>) -> Result<serde_json::Value> {
    let sref = ws.pick_for_view(given)?;
    let data = report::load(ws, &sref)?;
    let view = report::build(&data, &|_| None);
    Ok(json_document(&data, &view))
}

pub fn run(ctx: &Ctx, args: StatusArgs) -> Result<Exit> {
    let sref = ctx.ws.pick_for_view(args.session.as_deref())?;
    let data = report::load(&ctx.ws, &sref)?;
    let view = report::build(&data, &|_| None);
    for p in &view.problems {
        ctx.ui.warn(format!("could not read {p}"));
    }

    if ctx.ui.is_json() {
        ctx.ui.json(&json_document(&data, &view));
        return Ok(Exit::Success);
    }
    match &view.run {
        Some(run) => print_run(ctx, &view, run),
        None => print_human(ctx, &view),
    }
    Ok(Exit::Success)
}

/// The `--json` document. The first eight fields are the original ones.
fn json_document(data: &report::SessionData, v: &SessionView) -> serde_json::Value {
    let tasks: Vec<_> = v
        .tasks
        .iter()
        .map(|t| {
            serde_json::json!({
                "id": t.id,
                "title": t.title,
                "status": t.status,
                "type": t.kind,
                "file": t.file.path,
                "agent": t.agent,
                "started_at": t.started_at,
                "completed_at": t.completed_at,
                "duration_ms": t.duration_ms,
            })
        })
        .collect();
    // A run session's status is the run's own (`running`, `paused`,
    // `completed`, `partial_success`, `failed`), as it always was.
    let status = match data.run.as_ref().and_then(|r| r.state.as_ref()) {
        Some(st) => serde_json::json!(st.status),
        None => serde_json::json!(data.session.status),
    };
    serde_json::json!({
        "session_id": data.session.session_id,
        "status": status,
        "location": data.sref.location,
        "description": data.session.description,
        "phases": data.session.phases,
        "tasks": tasks,
        "iteration_state": data.state,
        "next_command": v.next.command,
        "next_action": v.next.action,
        "next_step": v.next.hint,
        "outcome": v.outcome,
        "not_done": v.not_done,
        "pass_rates": v.pass_rates,
        "sparkline": v.sparkline,
        "latest_pass_rate": v.latest_pass_rate,
        "best_pass_rate": v.best_pass_rate,
        "pass_threshold": v.pass_threshold,
        "current_iteration": v.current_iteration,
        "max_iterations": v.max_iterations,
        "fix_attempts": v.fixes.len(),
        "stuck_tests": v.stuck_tests,
        "cost": {
            "total_usd": v.cost.total_usd,
            "cap_usd": v.cost.cap_usd,
            "agent_calls": v.cost.calls,
        },
        "failure_report": v.failure_report.as_ref().map(|l| &l.path),
        "problems": v.problems,
        "type": data.session.kind,
        "run_state": data.run.as_ref().and_then(|r| r.state.as_ref()),
        "run": v.run.as_ref().map(run_json),
        "fixes": data.history.as_ref().map_or(&[][..], |h| h.entries.as_slice()),
    })
}

/// `run` of the `--json` document: the run section with plain paths
/// (docs/status.md lists every field).
fn run_json(r: &RunSection) -> serde_json::Value {
    serde_json::json!({
        "workflow_name": r.workflow_name,
        "workflow_file": r.workflow_file,
        "status": r.status,
        "unfinished": r.unfinished,
        "current_step": r.current_step,
        "current_attempt": r.current_attempt,
        "current_phase": r.current_phase,
        "position": r.position,
        "stop_reason": r.stop_reason,
        "resume_command": r.resume_command,
        "started_at": r.started_at,
        "updated_at": r.updated_at,
        "completed_at": r.completed_at,
        "duration_ms": r.duration_ms,
        "cost_usd": r.cost_usd,
        "state_file": r.state_file.path,
        "log_file": r.log.path,
        "workflow_copy": r.workflow_copy.path,
        "steps": r.steps.iter().map(step_json).collect::<Vec<_>>(),
    })
}

fn step_json(s: &StepView) -> serde_json::Value {
    serde_json::json!({
        "index": s.index,
        "id": s.id,
        "label": s.label,
        "kind": s.kind,
        "command": s.command,
        "command_truncated": s.command_truncated,
        "status": s.status,
        "current": s.current,
        "exit_code": s.exit_code,
        "duration_ms": s.duration_ms,
        "debug_attempts": s.debug_attempts,
        "max_attempts": s.max_attempts,
        "continued": s.continued,
        "reason": s.reason,
        "summary": s.summary,
        "cost_usd": s.cost_usd,
        "dir": s.dir,
        "command_file": s.command_file.as_ref().map(|l| &l.path),
        "output_file": s.output_file.as_ref().map(|l| &l.path),
        "on_failure": s.on_failure.as_ref().map(|f| serde_json::json!({
            "kind": f.kind,
            "command": f.command,
            "max_attempts": f.max_attempts,
            "stop_on_success": f.stop_on_success,
            "fail_workflow": f.fail_workflow,
            "commit_required": f.commit_required,
        })),
        "pass_rates": s.pass_rates,
        "attempts": s.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
    })
}

fn attempt_json(a: &AttemptView) -> serde_json::Value {
    serde_json::json!({
        "attempt": a.attempt,
        "debug": a.debug.as_ref().map(|d| serde_json::json!({
            "kind": d.kind,
            "agent": d.agent,
            "command": d.command,
            "command_truncated": d.command_truncated,
            "finished": d.finished,
            "exit_code": d.exit_code,
            "timed_out": d.timed_out,
            "duration_ms": d.duration_ms,
            "cost_usd": d.cost_usd,
            "error": d.error,
            "committed": d.committed,
            "files_changed": d.files_changed,
            "command_file": d.command_file.path,
            "output_file": d.output_file.path,
        })),
        "test": a.test.as_ref().map(test_json),
        "outcome": a.outcome,
        "reason": a.reason,
    })
}

fn test_json(t: &TestView) -> serde_json::Value {
    serde_json::json!({
        "exit_code": t.exit_code,
        "passed": t.passed,
        "timed_out": t.timed_out,
        "parser": t.parser,
        "counts": t.counts,
        "pass_rate": t.pass_rate,
        "result": t.result,
        "duration_ms": t.duration_ms,
        "failing_tests": t.failing_tests,
        "failing_omitted": t.failing_omitted,
        "output_file": t.output_file.path,
        "results_file": t.results_file.path,
    })
}

fn print_human(ctx: &Ctx, v: &SessionView) {
    let ui = ctx.ui;
    let style = match v.outcome.kind.as_str() {
        "completed" | "partial_success" => Style::Green,
        "blocked" => Style::Red,
        "awaiting_fix" | "paused" => Style::Yellow,
        _ => Style::Bold,
    };
    ui.out(format!(
        "{}  [{}]  {}",
        ui.paint(Style::Bold, &v.session_id),
        v.status,
        v.description
    ));
    ui.out(format!(
        "{}: {}",
        ui.paint(style, &v.outcome.title),
        v.outcome.reason
    ));
    if let Some(why) = &v.not_done {
        ui.out(format!("Not done: {why}"));
    }
    if let Some(report) = &v.failure_report {
        ui.out(format!("Failure report: {}", report.path));
    }

    ui.out("");
    let phases: Vec<Vec<String>> = v
        .phases
        .iter()
        .map(|p| {
            vec![
                p.phase.to_string(),
                p.name.clone(),
                p.status.clone(),
                p.duration.clone(),
            ]
        })
        .collect();
    ui.out(table(&["PHASE", "NAME", "STATUS", "DURATION"], &phases));

    if !v.tasks.is_empty() {
        ui.out("");
        let rows: Vec<Vec<String>> = v
            .tasks
            .iter()
            .map(|t| {
                vec![
                    t.id.clone(),
                    t.status.clone(),
                    t.kind.clone(),
                    t.agent.clone().unwrap_or_else(|| "-".into()),
                    dash(&t.duration),
                    t.title.clone(),
                ]
            })
            .collect();
        ui.out(table(
            &["TASK", "STATUS", "TYPE", "AGENT", "DURATION", "TITLE"],
            &rows,
        ));
    }

    print_iterations(ctx, v);
    if v.cost.calls > 0 || v.cost.cap_usd.is_some() {
        ui.out(format!("Cost so far: {}", v.cost.text));
    }
    print_fixes(ctx, v);

    ui.out("");
    if let Some(action) = &v.next.action {
        ui.out(format!("Next action: {action}"));
    }
    match (&v.next.hint, &v.next.command) {
        (Some(hint), Some(cmd)) => ui.out(format!("Next: {hint}\n  {cmd}")),
        (None, Some(cmd)) => ui.out(format!("Next: {cmd}")),
        (Some(hint), None) => ui.out(format!("Next: {hint}")),
        (None, None) => {}
    }
}

/// Lines of each fix's diff `wfx status` shows; the report shows the
/// whole recorded excerpt.
const STATUS_DIFF_LINES: usize = 30;

/// One line per fix attempt, its diff indented under it.
/// The fix attempts so far, the pass rates and each run.
fn print_iterations(ctx: &Ctx, v: &SessionView) {
    let ui = ctx.ui;
    if let (Some(current), Some(max)) = (v.current_iteration, v.max_iterations) {
        ui.out("");
        // The iteration number counts attempts only once one was made: a
        // session whose run found no tests (or passed) made none.
        let no_test_ran = v.runs.last().is_some_and(|r| {
            crate::artifacts::test_results::Counts::of(r.passed, r.failed, r.total).ran == 0
        });
        let mut line = match (v.fixes.is_empty(), v.outcome.kind.as_str()) {
            (true, _) if no_test_ran => format!(
                "Iterations: no fix attempt made ({}) · at most {max} fix attempts",
                crate::artifacts::test_results::NO_TEST_RAN
            ),
            (true, "completed" | "partial_success") => {
                format!("Iterations: no fix attempt made · at most {max} fix attempts")
            }
            // Waiting for the first fix: no attempt to count yet.
            (true, _) => format!("Iterations: no fix attempt yet · at most {max} fix attempts"),
            _ => format!("Iterations: {current} of at most {max} fix attempts"),
        };
        if !no_test_ran {
            if let Some(latest) = v.latest_pass_rate {
                line.push_str(&format!(" · latest {latest:.1}%"));
            }
            if let Some(best) = v.best_pass_rate {
                line.push_str(&format!(" · best {best:.1}%"));
            }
        }
        line.push_str(&format!(" · threshold {:.1}%", v.pass_threshold));
        if !v.sparkline.is_empty() {
            line.push_str(&format!("  {}", v.sparkline));
        }
        ui.out(line);
        if !v.runs.is_empty() {
            ui.out(runs_table(v));
            if v.runs.iter().any(|r| r.merged) {
                ui.out(
                    "PASSED counts the tests each run ran; a retest's PASS is the suite's, its results merged over the last full run.",
                );
            }
        }
        if !v.stuck_tests.is_empty() {
            ui.out(format!("Stuck tests: {}", v.stuck_tests.join(", ")));
        }
    }
}

/// One row per test run: what ran, the pass rate, the fix and its commit.
fn runs_table(v: &SessionView) -> String {
    let rows: Vec<Vec<String>> = v
        .runs
        .iter()
        .map(|r| {
            let mut result = r.result.clone().unwrap_or_else(|| "-".into());
            if !r.flaky_tests.is_empty() {
                result.push_str(&format!(" ({} flaky)", r.flaky_tests.len()));
            }
            let commit = match (&r.fix_commit, &r.rollback_commit) {
                (Some(c), Some(rb)) => format!("{c} (reverted by {rb})"),
                (Some(c), None) => c.clone(),
                (None, Some(rb)) => format!("reverted by {rb}"),
                (None, None) => "-".into(),
            };
            let ran =
                crate::artifacts::test_results::Counts::of(r.ran_passed, r.ran_failed, r.ran_total);
            vec![
                r.run.to_string(),
                r.iteration.to_string(),
                r.scope_shown.clone(),
                ran.cell(),
                // No test ran: no rate to show beside it.
                if ran.ran == 0 && ran.skipped == 0 {
                    "-".into()
                } else if r.merged {
                    format!("{} merged", r.pass_rate_text)
                } else {
                    r.pass_rate_text.clone()
                },
                r.strategy.clone().unwrap_or_else(|| "-".into()),
                result,
                r.fix_task.clone().unwrap_or_else(|| "-".into()),
                commit,
            ]
        })
        .collect();
    table(
        &[
            "RUN",
            "ITERATION",
            "SCOPE",
            "PASSED",
            "PASS",
            "STRATEGY",
            "RESULT",
            "FIX",
            "COMMIT",
        ],
        &rows,
    )
}

fn print_fixes(ctx: &Ctx, v: &SessionView) {
    let ui = ctx.ui;
    if v.fixes.is_empty() {
        return;
    }
    ui.out("");
    ui.out("Fix attempts:");
    for f in &v.fixes {
        let mut line = format!("{}  iteration {}", f.fix_task, f.iteration);
        if let Some(strategy) = &f.strategy {
            line.push_str(&format!(" · {strategy}"));
        }
        line.push_str(&format!(
            " · {} · {} · +{} −{} in {} file{}",
            crate::agents::config::fix_by(&f.agent),
            f.outcome,
            f.insertions,
            f.deletions,
            f.diff_files,
            if f.diff_files == 1 { "" } else { "s" }
        ));
        if let Some(commit) = &f.commit {
            line.push_str(&format!(" · {commit}"));
        }
        ui.out(line);
        // Speculative steps: every candidate, the chosen one marked.
        for c in &f.candidates {
            let mark = if c.chosen { "*" } else { " " };
            let mut line = format!(
                "  {mark} candidate {} · {}{} · {} · fixed {}",
                c.candidate,
                c.agent,
                c.strategy
                    .as_deref()
                    .map_or(String::new(), |s| format!(", {s}")),
                c.verdict,
                c.fixed
            );
            if !c.tiers.is_empty() {
                line.push_str(&format!(" · {}", c.tiers));
            }
            line.push_str(&format!(
                " · +{} −{} · {} {}",
                c.insertions, c.deletions, c.duration, c.cost
            ));
            ui.out(if c.chosen {
                ui.paint(Style::Bold, &line)
            } else {
                line
            });
            if !c.chosen && !c.reason.is_empty() {
                ui.out(format!("      {}", ui.paint(Style::Dim, &c.reason)));
            }
        }
        // Test edits, rejected or flagged: what a reviewer must look at.
        for e in &f.test_edits {
            let style = if e.serious { Style::Red } else { Style::Yellow };
            ui.out(format!(
                "    {} {}: {}",
                ui.paint(style, &format!("test edit ({})", e.kind)),
                e.file,
                e.detail
            ));
        }
        for l in f.diff.iter().take(STATUS_DIFF_LINES) {
            let text = match l.kind {
                DiffLineKind::File => ui.paint(Style::Bold, &l.text),
                DiffLineKind::Hunk => ui.paint(Style::Yellow, &l.text),
                DiffLineKind::Added => ui.paint(Style::Green, &l.text),
                DiffLineKind::Removed => ui.paint(Style::Red, &l.text),
                DiffLineKind::Context => l.text.clone(),
            };
            ui.out(format!("    {text}"));
        }
        let left = f.diff.len().saturating_sub(STATUS_DIFF_LINES) + f.diff_omitted;
        if let Some(more) = more_lines(left) {
            ui.out(format!("    {}", ui.paint(Style::Dim, &more)));
        }
    }
}

fn dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.to_string()
    }
}

/// The first line of a command, cut to 60 characters, for a table cell.
fn cell(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(60).collect();
    if out.len() < command.len() {
        out.push('…');
    }
    out
}

/// A `wfx run` session: the steps, each test step's runs and debug
/// attempts, and `wfx run FILE --resume` (not the test cycle's command,
/// which refuses run sessions).
fn print_run(ctx: &Ctx, v: &SessionView, r: &RunSection) {
    let ui = ctx.ui;
    let style = match r.status.as_str() {
        "completed" | "partial_success" => Style::Green,
        "failed" => Style::Red,
        "paused" => Style::Yellow,
        _ => Style::Bold,
    };
    ui.out(format!(
        "{}  [{}]  workflow {} ({})",
        ui.paint(Style::Bold, &v.session_id),
        r.status,
        r.workflow_name,
        r.workflow_file
    ));
    ui.out(format!(
        "{}: {}",
        ui.paint(style, &v.outcome.title),
        v.outcome.reason
    ));
    if !r.steps.is_empty() {
        ui.out("");
        let rows: Vec<Vec<String>> = r
            .steps
            .iter()
            .map(|st| {
                vec![
                    format!("{}{}", st.index, if st.current { "*" } else { "" }),
                    st.kind.clone(),
                    st.status.clone(),
                    st.exit_code.map_or("-".into(), |c| c.to_string()),
                    dash(&st.duration),
                    if st.kind == "test" {
                        format!("{}/{}", st.debug_attempts, st.max_attempts)
                    } else {
                        "-".into()
                    },
                    cell(&st.command),
                ]
            })
            .collect();
        ui.out(table(
            &[
                "STEP", "KIND", "STATUS", "EXIT", "DURATION", "ATTEMPTS", "COMMAND",
            ],
            &rows,
        ));
    }
    for st in r.steps.iter().filter(|st| !st.attempts.is_empty()) {
        ui.out("");
        let mut head = st.label.clone();
        if let Some(summary) = &st.summary {
            head.push_str(&format!(": {summary}"));
        }
        if !st.sparkline.is_empty() {
            head.push_str(&format!("  {}", st.sparkline));
        }
        ui.out(head);
        if let Some(f) = &st.on_failure {
            ui.out(format!("on_failure: {} `{}`", f.kind, cell(&f.command)));
        }
        let rows: Vec<Vec<String>> = st
            .attempts
            .iter()
            .map(|a| {
                let action = a.debug.as_ref().map_or("-".into(), |d| {
                    format!("{} {}", d.agent.as_deref().unwrap_or(&d.kind), d.result)
                });
                let tests = match (&a.test, a.outcome.as_deref()) {
                    (Some(t), _) => t.result.clone(),
                    (None, Some("no_change")) => "not re-run".into(),
                    (None, _) => "not run yet".into(),
                };
                vec![
                    a.label.clone(),
                    action,
                    tests,
                    a.outcome.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        ui.out(table(&["RUN", "ACTION", "TESTS", "OUTCOME"], &rows));
        if !st.dir.is_empty() {
            ui.out(format!("Logs: {}/", st.dir));
        }
    }
    ui.out("");
    match (&v.next.hint, &v.next.command) {
        (Some(hint), Some(cmd)) => ui.out(format!("Next: {hint}\n  {cmd}")),
        (None, Some(cmd)) => ui.out(format!("Next: {cmd}")),
        (Some(hint), None) => ui.out(format!("Next: {hint}")),
        (None, None) => {}
    }
}
