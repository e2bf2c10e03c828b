//! The lines of speculative candidates (DESIGN.md §11.4).

use super::Paint;
use super::text::{cost_text, strategy_suffix};
use crate::duration;
use crate::engine::event::{CandidateChosen, CandidateEvent, CandidateFinished};
use crate::ui::Style;

/// `Iteration 2 · candidate 1/3 (claude, conservative)`.
fn lead(c: &CandidateEvent) -> String {
    format!(
        "{} · candidate {}/{} ({}{})",
        at(c.step, c.iteration),
        c.candidate,
        c.of,
        c.agent,
        strategy_suffix(c.strategy)
    )
}

/// `Iteration 2`, or `test step 3 · attempt 2` in a workflow.
fn at(step: Option<usize>, iteration: u32) -> String {
    match step {
        Some(step) => format!("test step {step} · attempt {iteration}"),
        None => format!("Iteration {iteration}"),
    }
}

/// `Iteration 2 · candidate 1/3 (claude, conservative) · started`.
pub(super) fn started(c: &CandidateEvent) -> String {
    format!("{} · started", lead(c))
}

/// `Iteration 1 · candidate 2/3 (codex, aggressive) · 2.1 s $0.03 · 1
/// file(s) changed · failed 2/2 · affected 5/6 · fixes 2`.
pub(super) fn finished(c: &CandidateFinished) -> String {
    if let Some(why) = &c.not_started {
        return format!("{} · not started: {why}", lead(&c.who));
    }
    let mut line = format!(
        "{} · {}{}",
        lead(&c.who),
        duration::millis(c.duration_ms),
        cost_text(c.cost_usd)
    );
    if c.timed_out {
        line.push_str(" · timed out");
    } else if let Some(e) = &c.error {
        line.push_str(&format!(" · failed: {e}"));
    }
    line.push_str(&format!(" · {} file(s) changed", c.files_changed.len()));
    for t in &c.tiers {
        line.push_str(&format!(" · {} {}/{}", t.tier.as_str(), t.passed, t.total));
    }
    if let Some(n) = c.fixed {
        line.push_str(&format!(" · fixes {n}"));
    }
    line
}

/// `Iteration 1 · chose candidate 3/3 (claude, surgical): …` or `… no
/// candidate is better than the run before: …`.
pub(super) fn chosen(c: &CandidateChosen, paint: Paint) -> String {
    let at = at(c.step, c.iteration);
    let verdicts: Vec<String> = c
        .verdicts
        .iter()
        .map(|v| format!("{} {}", v.candidate, v.verdict))
        .collect();
    match c.candidate {
        Some(n) => format!(
            "{at} · {} {n}/{} ({}{}): {} · {}",
            paint(Style::Bold, "chose candidate"),
            c.of,
            c.agent.as_deref().unwrap_or_default(),
            strategy_suffix(c.strategy),
            c.reason,
            verdicts.join(", ")
        ),
        None => format!(
            "{at} · no candidate is better than the run before ({}): {}",
            verdicts.join(", "),
            c.reason
        ),
    }
}
