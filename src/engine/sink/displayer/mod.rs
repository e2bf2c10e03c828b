//! The line people read for each event: progress on stderr, the run log,
//! and `message` of a JSON line. Rendering lives here, apart from the data
//! types of [`crate::engine::event`] (as nextest's displayer lives apart
//! from its events); one small file per area.

mod candidates;
mod fix_loop;
mod phases;
mod session;
mod text;
mod workflow;

#[cfg(test)]
mod tests;

pub use text::{cost_text, delta_text, exit_text};

use crate::engine::event::Event;
use crate::ui::Style;

/// How a human line is coloured (identity without colour).
pub type Paint<'a> = &'a dyn Fn(Style, &str) -> String;

/// No colour: the run log, JSON `message`, captures.
pub fn plain(_: Style, text: &str) -> String {
    text.to_string()
}

/// The line people read, if any. Pauses, the end and the plan are told on
/// stdout by the command instead; a finished phase needs no line of its
/// own.
pub fn line(event: &Event, paint: Paint) -> Option<String> {
    Some(match event {
        Event::Start(s) => session::start(s),
        Event::StaleProcesses { pgid } => session::stale_processes(*pgid),
        Event::StaleGitLock { file } => session::stale_git_lock(file),
        Event::NoGit => session::no_git(),
        Event::Worktree { worktree, branch } => session::worktree(worktree, branch),
        Event::Warning { message } => message.clone(),
        Event::PhasesResumed(r) => phases::resumed(r),
        Event::PhaseStarted(p) => phases::started(p),
        Event::Task { line, .. } => line.clone(),
        Event::Run(r) => fix_loop::run(r, paint),
        Event::Flaky { iteration, tests } => fix_loop::flaky(*iteration, tests),
        Event::Stuck {
            iteration,
            tests,
            after,
        } => fix_loop::stuck(*iteration, tests, *after),
        Event::Analysis(a) => fix_loop::analysis(a),
        Event::Fix(f) => fix_loop::fix(f),
        Event::TestEdits {
            iteration,
            rejected,
            test_edits,
        } => fix_loop::test_edits(*iteration, rejected.as_deref(), test_edits),
        Event::Undone {
            iteration,
            files,
            reason,
        } => fix_loop::undone(*iteration, files, reason),
        Event::Commit {
            commit, message, ..
        } => format!("Committed {} {message}", crate::git::short_commit(commit)),
        Event::Rollback {
            iteration,
            commit,
            message,
        } => fix_loop::rollback(*iteration, commit.as_deref(), message),
        Event::Complete {
            session_id,
            status,
            pass_rate,
        } => fix_loop::complete(session_id, *status, *pass_rate, paint),
        Event::Step(s) => workflow::step(s),
        Event::TestRun(t) => workflow::test_run(t),
        Event::Attempt(a) => workflow::attempt(a),
        Event::TestStep { step, outcome, .. } => format!("test step {step} · {outcome}"),
        Event::Watching { enter } => session::watching(*enter),
        Event::Woken { by, files } => session::woken(*by, files),
        Event::CandidateStarted(c) => candidates::started(c),
        Event::CandidateFinished(c) => candidates::finished(c),
        Event::CandidateChosen(c) => candidates::chosen(c, paint),
        Event::Blocked { reason } => session::blocked(reason, paint),
        Event::PhaseFinished(_) | Event::Planned(_) | Event::Paused { .. } | Event::Done(_) => {
            return None;
        }
    })
}
