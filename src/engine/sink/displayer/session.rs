//! The lines about a run as a whole: its start, what a resume cleaned up,
//! waiting for a person, and a block.

use super::Paint;
use crate::engine::event::{FrontEnd, Start, WakeCause};
use crate::ui::Style;

/// `Phase 5/5 WFS-x · npm test · fix: claude · …`, `run WFS-run-ci ·
/// workflow ci.yml · 3 steps`, `resume WFS-run-ci at step 2 (test)`.
pub(super) fn start(s: &Start) -> String {
    match s.front_end {
        FrontEnd::Cycle => format!(
            "{} {} · {} · fix: {} · analysis: {} · at most {} fix attempts{}",
            if s.resumed { "Resuming" } else { "Phase 5/5" },
            s.session_id,
            s.test_command
                .clone()
                .unwrap_or_else(|| "no test command".into()),
            s.fix_agent.as_deref().unwrap_or("manual"),
            s.analysis.as_deref().unwrap_or("built-in"),
            s.max_iterations.unwrap_or_default(),
            if s.commits { "" } else { " · no commits" },
        ),
        FrontEnd::Run if s.resumed => format!("resume {} at {}", s.session_id, s.at),
        FrontEnd::Run => {
            let n = s.steps.unwrap_or_default();
            format!(
                "run {} · workflow {} · {n} step{}",
                s.session_id,
                s.workflow.as_deref().unwrap_or_default(),
                if n == 1 { "" } else { "s" }
            )
        }
    }
}

pub(super) fn stale_processes(pgid: i32) -> String {
    format!("Ended the processes an interrupted run left behind (process group {pgid})")
}

pub(super) fn stale_git_lock(file: &str) -> String {
    format!("Removed {file}, left by the interrupted run")
}

pub(super) fn no_git() -> String {
    "Not a git repository: running without commits (no checkpoints, no rollback)".into()
}

pub(super) fn worktree(worktree: &str, branch: &str) -> String {
    format!(
        "Working in the git worktree {worktree} on branch {branch} (created from HEAD; your own changes are not in it)"
    )
}

pub(super) fn watching(enter: bool) -> String {
    format!(
        "Watching the project's files: saving one retests{}; Ctrl-C pauses",
        if enter { ", so does Enter" } else { "" }
    )
}

pub(super) fn woken(by: WakeCause, files: &[String]) -> String {
    match by {
        WakeCause::Enter => "Enter pressed: retesting".to_string(),
        WakeCause::Files => format!("Saved {}: retesting", files.join(", ")),
    }
}

pub(super) fn blocked(reason: &str, paint: Paint) -> String {
    format!("{} {reason}", paint(Style::Red, "Blocked:"))
}
