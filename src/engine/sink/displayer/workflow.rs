//! The lines of `wfx run`'s steps.

use super::text::exit_text;
use crate::duration;
use crate::engine::event::{AttemptEvent, StepEvent, TestRunEvent};

/// `lint · 1.2 s · ok` or `… · FAILED: exit 1`.
pub(super) fn step(s: &StepEvent) -> String {
    let mut line = format!("{} · {}", s.label, duration::millis(s.duration_ms));
    match &s.reason {
        None => line.push_str(" · ok"),
        Some(r) => line.push_str(&format!(" · FAILED: {r}")),
    }
    line
}

/// `test step 2 · initial run · exit 1 · 3 failing · 1.2 s`, or the re-run
/// after a debug attempt.
pub(super) fn test_run(t: &TestRunEvent) -> String {
    if t.attempt == 0 {
        return format!(
            "test step {} · initial run · {} · {} failing · {}",
            t.step,
            exit_text(t.exit_code, t.timed_out),
            t.failing,
            duration::millis(t.duration_ms)
        );
    }
    format!(
        "test step {} · re-run after attempt {}/{} · {} · {} failing · {}",
        t.step,
        t.attempt,
        t.max_attempts,
        exit_text(t.exit_code, t.timed_out),
        t.failing,
        if t.passed { "passed" } else { "failed" }
    )
}

/// `test step 2 · attempt 1/3 · exit 1 · 3 failing · debug by claude 4.0 s`.
pub(super) fn attempt(a: &AttemptEvent) -> String {
    let mut line = format!(
        "test step {} · attempt {}/{} · {} · {} failing · debug by {} {}",
        a.step,
        a.attempt,
        a.max_attempts,
        exit_text(a.before_exit_code, a.before_timed_out),
        a.before_failing,
        a.debugger,
        duration::millis(a.duration_ms)
    );
    if let Some(n) = &a.note {
        line.push_str(" · ");
        line.push_str(n);
    }
    line
}
