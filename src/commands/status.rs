use super::Ctx;
use crate::artifacts::iteration_state::NextAction;
use crate::cli::StatusArgs;
use crate::error::{Exit, Result};
use crate::session::Location;
use crate::ui::table;

pub fn run(ctx: &Ctx, args: StatusArgs) -> Result<Exit> {
    let sref = ctx.ws.resolve(args.session.as_deref(), None, false)?;
    let session = ctx.ws.load_session(&sref)?;
    let tasks = ctx.ws.load_tasks(&sref.paths)?;
    let state = ctx.ws.load_iteration_state(&sref)?;
    let next_command = next_command(
        sref.id(),
        sref.location,
        &session.status.to_string(),
        state.as_ref().map(|s| s.next_action),
    );

    if ctx.ui.is_json() {
        let tasks: Vec<_> = tasks
            .iter()
            .map(|(p, t)| serde_json::json!({"id": t.id, "title": t.title, "status": t.status, "type": t.meta.kind, "file": ctx.ws.rel(p)}))
            .collect();
        ctx.ui.json(&serde_json::json!({
            "session_id": session.session_id,
            "status": session.status,
            "location": sref.location,
            "description": session.description,
            "phases": session.phases,
            "tasks": tasks,
            "iteration_state": state,
            "next_command": next_command,
        }));
        return Ok(Exit::Success);
    }

    ctx.ui.out(format!(
        "{}  [{}]  {}",
        session.session_id, session.status, session.description
    ));
    ctx.ui.out("");
    let phases: Vec<Vec<String>> = session
        .phases
        .iter()
        .map(|p| {
            vec![
                p.phase.to_string(),
                p.name.clone(),
                format!("{:?}", p.status).to_lowercase(),
            ]
        })
        .collect();
    ctx.ui.out(table(&["PHASE", "NAME", "STATUS"], &phases));
    if !tasks.is_empty() {
        ctx.ui.out("");
        let rows: Vec<Vec<String>> = tasks
            .iter()
            .map(|(_, t)| vec![t.id.clone(), t.status.to_string(), t.title.clone()])
            .collect();
        ctx.ui.out(table(&["TASK", "STATUS", "TITLE"], &rows));
    }
    if let Some(state) = &state {
        ctx.ui.out("");
        ctx.ui.out(format!(
            "Iterations: {} of at most {} fix attempts · next action: {}",
            state.current_iteration,
            state.max_iterations,
            state.next_action.as_str()
        ));
        let rows: Vec<Vec<String>> = state
            .iterations
            .iter()
            .map(|i| {
                vec![
                    i.iteration.to_string(),
                    format!("{:.1}%", i.pass_rate),
                    format!("{}/{}", i.passed, i.total),
                    i.strategy
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "-".into()),
                    i.result
                        .map(|r| format!("{r:?}").to_lowercase())
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        if !rows.is_empty() {
            ctx.ui.out(table(
                &["ITER", "PASS", "PASSED", "STRATEGY", "RESULT"],
                &rows,
            ));
        }
        if !state.stuck_tests.is_empty() {
            ctx.ui
                .out(format!("Stuck tests: {}", state.stuck_tests.join(", ")));
        }
        if let Some(reason) = &state.blocked_reason {
            ctx.ui.out(format!("Blocked: {reason}"));
        }
    }
    if let Some(cmd) = next_command {
        ctx.ui.out("");
        ctx.ui.out(format!("Next: {cmd}"));
    }
    Ok(Exit::Success)
}

/// The exact command that moves this session forward, if any.
pub fn next_command(
    id: &str,
    location: Location,
    status: &str,
    next: Option<NextAction>,
) -> Option<String> {
    if location == Location::Archived {
        return None;
    }
    match (status, next) {
        ("completed" | "partial_success", _) => Some(format!("wfx session complete {id}")),
        (_, Some(NextAction::None | NextAction::Complete)) if status != "blocked" => {
            Some(format!("wfx session complete {id}"))
        }
        ("blocked", _) => Some(format!(
            "wfx session resume {id} && wfx test-cycle-execute --resume-session={id} --max-iterations=<N>"
        )),
        ("planning", None) => Some(format!("wfx test-fix-gen {id}")),
        _ => Some(format!("wfx test-cycle-execute --resume-session={id}")),
    }
}
