//! The lines of the fix loop: runs, analyses, fixes and what became of
//! them.

use super::Paint;
use super::text::{cost_text, delta_text};
use crate::artifacts::fix_history::TestEdit;
use crate::artifacts::iteration_state::IterationResult;
use crate::artifacts::session::SessionStatus;
use crate::duration;
use crate::engine::event::{AnalysisEvent, FixEvent, RunEvent};
use crate::ui::Style;

/// `Iteration 2 · 88.9% (+11.1) · 1 failing · 4 affected test(s) 800 ms ✓`.
pub(super) fn run(r: &RunEvent, paint: Paint) -> String {
    let mark = match r.result {
        Some(IterationResult::Success) => paint(Style::Green, " ✓"),
        Some(IterationResult::Regression) => paint(Style::Red, " regression"),
        Some(IterationResult::Error) => paint(Style::Red, " execution error"),
        _ => String::new(),
    };
    let notes = if r.notes.is_empty() {
        String::new()
    } else {
        format!(" · note: {}", r.notes.join("; "))
    };
    let sealed = r.sealed_commit.as_deref().map_or(String::new(), |c| {
        format!(", sealed on {}", crate::git::short_commit(c))
    });
    format!(
        "Iteration {} · {} · {}{sealed} {}{mark}{notes}",
        r.iteration,
        run_counts(r, paint),
        r.label,
        duration::millis(r.duration_ms),
    )
}

/// `77.7% (+12.0) · 2 failing · 1 skipped (left out of the rate)`.
fn run_counts(r: &RunEvent, paint: Paint) -> String {
    // No test was parsed (none found, or the runner failed before its
    // first test): a pass rate and "1 failing" would count the command
    // itself as a failing test.
    if r.total == 0 && r.passed == 0 {
        return crate::artifacts::test_results::NO_TEST_RAN.to_string();
    }
    format!(
        "{}{} · {} failing{}",
        paint(Style::Bold, &format!("{:.1}%", r.pass_rate)),
        delta_text(r.previous_pass_rate, r.pass_rate, r.change),
        r.failed,
        // Skipped tests are not in the rate: say so, so "77.7%" of a
        // suite of 10 reads as 7 of 9.
        match r.skipped {
            0 => String::new(),
            n => format!(" · {n} skipped (left out of the rate)"),
        }
    )
}

pub(super) fn flaky(iteration: u32, tests: &[String]) -> String {
    format!(
        "Iteration {iteration} · {} flaky (failed, then passed on a re-run): {}",
        tests.len(),
        tests.join(", ")
    )
}

pub(super) fn stuck(iteration: u32, tests: &[String], after: u32) -> String {
    format!(
        "Iteration {iteration} · stuck: {} failed in {after} runs in a row: {}",
        tests.len(),
        tests.join(", ")
    )
}

/// `Iteration 1 · conservative · analysis by built-in · 2 modification
/// point(s) · confidence 0.80`.
pub(super) fn analysis(a: &AnalysisEvent) -> String {
    let tried = if a.tried.is_empty() {
        String::new()
    } else {
        let t: Vec<String> = a
            .tried
            .iter()
            .map(|t| format!("{}: {}", t.tool, t.reason))
            .collect();
        format!(" (passed over: {})", t.join(", "))
    };
    format!(
        "Iteration {} · {} · analysis by {}{tried} · {} modification point(s) · confidence {:.2}",
        a.iteration, a.strategy, a.tool, a.modification_points, a.confidence
    )
}

/// `Iteration 2 · 50.0% (+10.0) · conservative · 3 failing · fix by claude
/// 1.5 s · 1 file(s) changed`.
pub(super) fn fix(f: &FixEvent) -> String {
    let how = if f.by_hand {
        "fix by hand".to_string()
    } else {
        format!(
            "fix by {} {}{}{}",
            f.agent,
            duration::millis(f.duration_ms),
            cost_text(f.cost_usd),
            if f.timed_out {
                " (timed out)".to_string()
            } else if let Some(e) = &f.error {
                format!(" (failed: {e})")
            } else {
                String::new()
            }
        )
    };
    format!(
        "Iteration {} · {}{}{} · {} failing · {how} · {} file(s) changed",
        f.iteration,
        f.pass_rate_before
            .map_or("-".to_string(), |p| format!("{p:.1}%")),
        f.pass_rate_before.map_or(String::new(), |p| delta_text(
            f.earlier_pass_rate,
            p,
            f.change
        )),
        // A person's fix follows no strategy of wfx's.
        match (f.by_hand, f.strategy) {
            (true, _) => String::new(),
            (false, s) => format!(" · {}", s.map_or("-".to_string(), |s| s.to_string())),
        },
        f.failing,
        f.files_changed.len(),
    )
}

/// The fix edited the tests: rejected (`why`), or flagged and kept.
pub(super) fn test_edits(iteration: u32, rejected: Option<&str>, edits: &[TestEdit]) -> String {
    match rejected {
        Some(why) => format!("Iteration {iteration} · the fix edited the tests: {why}; rejected"),
        None => format!(
            "Iteration {iteration} · the fix changed tests (flagged, kept): {}",
            edits
                .iter()
                .take(3)
                .map(|e| format!("{}: {}", e.file, e.detail))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

pub(super) fn undone(iteration: u32, files: &[String], reason: &str) -> String {
    format!(
        "Undone iteration {iteration} ({reason}): {} file(s) put back, nothing committed",
        files.len()
    )
}

pub(super) fn rollback(iteration: u32, commit: Option<&str>, message: &str) -> String {
    format!(
        "Rolled back iteration {iteration}{}: {message} · next strategy: surgical",
        commit.map_or(String::new(), |c| format!(
            " ({})",
            crate::git::short_commit(c)
        ))
    )
}

pub(super) fn complete(
    session_id: &str,
    status: SessionStatus,
    pass_rate: f64,
    paint: Paint,
) -> String {
    format!(
        "{} {session_id} · {pass_rate:.1}%",
        paint(
            Style::Green,
            if status == SessionStatus::PartialSuccess {
                "Partial success:"
            } else {
                "Completed:"
            }
        )
    )
}
