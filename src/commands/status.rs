//! `wfx status [SESSION] [--json]`: where a session stands, how it got
//! there, and the exact command to continue. The `--json` document is a
//! stable interface (docs/artifacts.md): fields are added, never renamed.

use super::Ctx;
use crate::artifacts::{RunState, WorkflowSession};
use crate::cli::StatusArgs;
use crate::error::{Error, Exit, Result};
use crate::report::{self, SessionView};
use crate::session::{Location, SessionRef, store};
use crate::ui::{Style, table};

pub fn run(ctx: &Ctx, args: StatusArgs) -> Result<Exit> {
    let sref = ctx.ws.resolve(args.session.as_deref(), None, false)?;
    let session = ctx.ws.load_session(&sref)?;
    if session.kind == "run" {
        return run_status(ctx, &sref, &session);
    }
    let data = report::load(&ctx.ws, &sref)?;
    let view = report::build(&data, &|_| None);
    for p in &view.problems {
        ctx.ui.warn(format!("could not read {p}"));
    }

    if ctx.ui.is_json() {
        ctx.ui.json(&json_document(&data, &view));
        return Ok(Exit::Success);
    }
    print_human(ctx, &view);
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
    serde_json::json!({
        "session_id": data.session.session_id,
        "status": data.session.status,
        "location": data.sref.location,
        "description": data.session.description,
        "phases": data.session.phases,
        "tasks": tasks,
        "iteration_state": data.state,
        "next_command": v.next.command,
        "next_action": v.next.action,
        "next_step": v.next.hint,
        "outcome": v.outcome,
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

    if let (Some(current), Some(max)) = (v.current_iteration, v.max_iterations) {
        ui.out("");
        let mut line = format!("Iterations: {current} of at most {max} fix attempts");
        if let Some(latest) = v.latest_pass_rate {
            line.push_str(&format!(" · latest {latest:.1}%"));
        }
        if let Some(best) = v.best_pass_rate {
            line.push_str(&format!(" · best {best:.1}%"));
        }
        line.push_str(&format!(" · threshold {:.1}%", v.pass_threshold));
        if !v.sparkline.is_empty() {
            line.push_str(&format!("  {}", v.sparkline));
        }
        ui.out(line);
        if !v.runs.is_empty() {
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
                    vec![
                        r.iteration.to_string(),
                        r.scope.clone(),
                        r.pass_rate_text.clone(),
                        format!("{}/{}", r.passed, r.total),
                        r.strategy.clone().unwrap_or_else(|| "-".into()),
                        result,
                        r.fix_task.clone().unwrap_or_else(|| "-".into()),
                        commit,
                    ]
                })
                .collect();
            ui.out(table(
                &[
                    "RUN", "SCOPE", "PASS", "PASSED", "STRATEGY", "RESULT", "FIX", "COMMIT",
                ],
                &rows,
            ));
        }
        if !v.stuck_tests.is_empty() {
            ui.out(format!("Stuck tests: {}", v.stuck_tests.join(", ")));
        }
    }
    if v.cost.calls > 0 || v.cost.cap_usd.is_some() {
        ui.out(format!("Cost so far: {}", v.cost.text));
    }

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

fn dash(s: &str) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s.to_string()
    }
}

/// A `wfx run` session: its steps from `run-state.json` and how to go on
/// (`wfx run FILE --resume`), not the test cycle's view, whose next
/// command would be refused. An unreadable state is a warning, as for the
/// cycle's files.
fn run_status(ctx: &Ctx, sref: &SessionRef, session: &WorkflowSession) -> Result<Exit> {
    let path = crate::workflow::paths::RunPaths::new(sref.paths.clone()).run_state();
    let shown = ctx.ws.rel(&path);
    let mut problems = Vec::new();
    let state = match store::read_json_opt::<RunState>(&path, &shown) {
        Ok(s) => s,
        Err(Error::Invalid(p)) => {
            problems = p;
            None
        }
        Err(e) => return Err(e),
    };
    for p in &problems {
        ctx.ui.warn(format!("could not read {p}"));
    }
    let next = match &state {
        Some(s) if s.status.is_unfinished() && sref.location == Location::Active => {
            Some(format!("wfx run {} --resume", s.workflow_file))
        }
        _ => None,
    };
    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "session_id": session.session_id,
            "type": "run",
            "status": state.as_ref().map_or(session.status.to_string(), |s| s.status.to_string()),
            "location": sref.location,
            "description": session.description,
            "run_state": state,
            "next_command": next,
            "problems": problems,
        }));
        return Ok(Exit::Success);
    }
    let ui = ctx.ui;
    let Some(state) = state else {
        ui.out(format!(
            "{}  [{}]  {}",
            session.session_id, session.status, session.description
        ));
        ui.out(format!("No readable run state ({shown})."));
        return Ok(Exit::Success);
    };
    ui.out(format!(
        "{}  [{}]  workflow {} ({})",
        ui.paint(Style::Bold, &session.session_id),
        state.status,
        state.workflow_name,
        state.workflow_file
    ));
    if let Some(reason) = &state.stop_reason {
        ui.out(format!("Stopped: {reason}"));
    }
    ui.out("");
    let rows: Vec<Vec<String>> = state
        .steps
        .iter()
        .map(|st| {
            vec![
                st.index.to_string(),
                st.kind.to_string(),
                st.status.as_str().to_string(),
                st.exit_code.map_or("-".into(), |c| c.to_string()),
                st.reason.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    ui.out(table(&["STEP", "KIND", "STATUS", "EXIT", "REASON"], &rows));
    ui.out("");
    match next {
        Some(cmd) => ui.out(format!(
            "Next: continue at step {}\n  {cmd}",
            state.current_step
        )),
        None => ui.out("Next: nothing; the run is finished"),
    }
    Ok(Exit::Success)
}
