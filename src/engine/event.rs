//! The one event stream of both front ends (DESIGN.md §10.1): [`Event`]
//! is serialised with its name in `event`; [`Sinks`] sends each event to
//! people (a line on stderr), to machines (JSON Lines on stdout with
//! `--json`) and to the session's `.process/run.log` (timestamped lines).
//! The JSON form also carries `message`, the line people read.
//! `docs/events.md` lists them; `schemas/event.schema.json` is generated
//! from [`EventLine`].

use std::io::Write;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

use super::duration;
use super::step::PauseReason;
use crate::artifacts::Timestamp;
use crate::artifacts::fix_history::TestEdit;
use crate::artifacts::iteration_state::{CommitPurpose, IterationResult, Strategy};
use crate::artifacts::session::SessionStatus;
use crate::artifacts::task::TaskStatus;
use crate::artifacts::test_results::Scope;
use crate::ui::{Printer, Style};

/// Which front end a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FrontEnd {
    /// `wfx test-cycle-execute` (and phase 5 of `test-fix-gen`).
    Cycle,
    /// `wfx run`.
    Run,
}

/// What ended a `--watch` wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WakeCause {
    /// A project file was saved.
    Files,
    /// Enter was pressed.
    Enter,
}

/// One thing that happened, for people and machines.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run begins or resumes.
    Start(Box<Start>),
    /// Processes an interrupted run left behind were ended.
    StaleProcesses { pgid: i32 },
    /// A git lock file (or libgit2 temp object) an interrupted run left
    /// behind was removed.
    StaleGitLock { file: String },
    /// Not a git repository: no commits, no rollback.
    NoGit,
    /// `--worktree`: the session runs in its own git worktree.
    Worktree { worktree: String, branch: String },
    /// Something a person should know; the run goes on.
    Warning { message: String },
    /// An initial task of phase 5 finished (or was skipped).
    Task {
        task: String,
        status: TaskStatus,
        reason: String,
        /// The line people read.
        line: String,
    },
    /// A test run of the fix loop.
    Run(RunEvent),
    /// Failures that passed on their re-run.
    Flaky { iteration: u32, tests: Vec<String> },
    /// Tests failing in `after` runs in a row.
    Stuck {
        iteration: u32,
        tests: Vec<String>,
        after: u32,
    },
    /// The analysis of an iteration's failures.
    Analysis(AnalysisEvent),
    /// A fix attempt (agent or person) as inspected.
    Fix(FixEvent),
    /// The fix edited the tests: in a way the policy rejects (`rejected`
    /// says why), or flags (`rejected` is null).
    TestEdits {
        iteration: u32,
        rejected: Option<String>,
        test_edits: Vec<TestEdit>,
    },
    /// A checkpoint commit was made (or found, after a crash).
    Commit {
        commit: String,
        message: String,
        iteration: u32,
        kind: CommitPurpose,
    },
    /// A fix was undone without ever being committed (rejected from its
    /// diff, or a failed call that helped nothing): the work tree is as it
    /// was before it, and nothing of it entered history.
    Undone {
        iteration: u32,
        /// The paths put back.
        files: Vec<String>,
        reason: String,
    },
    /// A fix was reverted.
    Rollback {
        iteration: u32,
        commit: Option<String>,
        message: String,
    },
    /// The test-fix session succeeded (archive and final commit follow).
    Complete {
        session_id: String,
        status: SessionStatus,
        pass_rate: f64,
    },
    /// A `shell:` or `claude:` step of a workflow finished.
    Step(StepEvent),
    /// A test run of a workflow's `test:` step (`attempt` 0: the first run).
    TestRun(TestRunEvent),
    /// A debug command of a `test:` step finished.
    Attempt(AttemptEvent),
    /// A `test:` step finished.
    TestStep {
        step: usize,
        passed: bool,
        outcome: String,
    },
    /// The run stopped at a resumable point (exit 3).
    Paused {
        reason: PauseReason,
        message: String,
        resume_command: String,
    },
    /// `--watch`: the run waits in-process for a person's fix, after the
    /// `paused` event that says what to fix.
    Watching {
        /// Enter retests too (stdin is a terminal).
        enter: bool,
    },
    /// `--watch`: the wait ended; the run goes on as a resume would.
    Woken {
        /// `files` (a save) or `enter`.
        by: WakeCause,
        /// The files saved (at most 8, relative to the project root).
        files: Vec<String>,
    },
    /// The run stopped for good: a limit, a gate, a failed step (exit 1).
    Blocked { reason: String },
    /// The last event of every run of both front ends.
    Done(Box<Done>),
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Start {
    pub session_id: String,
    pub front_end: FrontEnd,
    pub resumed: bool,
    /// Cycle: the next action; run: where the run stands.
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    pub commits: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RunEvent {
    pub iteration: u32,
    pub run: u32,
    pub scope: Scope,
    pub pass_rate: f64,
    pub previous_pass_rate: Option<f64>,
    /// The change since the previous run from the counts of both (the
    /// rates are rounded down, so their difference can be off by 0.1).
    #[serde(skip)]
    pub change: Option<f64>,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub new_failures: Vec<String>,
    pub result: Option<IterationResult>,
    pub duration_ms: u64,
    pub command: String,
    /// What ran: `the full suite`, `3 affected test(s)`, `final validation`.
    pub label: String,
    pub notes: Vec<String>,
    /// The commit a sealed run tested (DESIGN.md §11.1); absent for a run
    /// in the work tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_commit: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TriedEvent {
    pub tool: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnalysisEvent {
    pub iteration: u32,
    pub strategy: Strategy,
    pub tool: String,
    pub quality: crate::artifacts::task::AnalysisQuality,
    pub tried: Vec<TriedEvent>,
    pub modification_points: usize,
    pub confidence: f64,
    pub analysis_file: String,
    pub fix_task: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FixEvent {
    pub iteration: u32,
    pub agent: String,
    pub strategy: Option<Strategy>,
    pub duration_ms: u64,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cost_usd: Option<f64>,
    pub files_changed: Vec<String>,
    pub test_edits: Vec<TestEdit>,
    /// The pass rate the fix started from, and its change before that.
    pub pass_rate_before: Option<f64>,
    pub earlier_pass_rate: Option<f64>,
    /// The change from the earlier run to the one the fix started from,
    /// from their counts.
    #[serde(skip)]
    pub change: Option<f64>,
    pub failing: u32,
    /// Why the agent call failed, if it did.
    pub error: Option<String>,
    /// `true` for a person's fix (manual mode).
    pub by_hand: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StepEvent {
    pub step: usize,
    pub label: String,
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TestRunEvent {
    pub step: usize,
    /// 0: the first run; k: the re-run after debug attempt k.
    pub attempt: u32,
    pub max_attempts: u32,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub failing: u32,
    pub passed: bool,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AttemptEvent {
    pub step: usize,
    pub attempt: u32,
    pub max_attempts: u32,
    /// The test run that led to the attempt.
    pub before_exit_code: Option<i32>,
    pub before_timed_out: bool,
    pub before_failing: u32,
    /// `shell` or the agent's name.
    pub debugger: String,
    pub duration_ms: u64,
    /// Why the debug command failed, or why the attempt counts as failed.
    pub note: Option<String>,
}

/// The final event: how the run ended, with the command to continue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Done {
    pub session_id: String,
    pub front_end: Option<FrontEnd>,
    /// The session's status (`completed`, `partial_success`, `blocked`,
    /// `paused`, `awaiting_fix`).
    pub status: Option<SessionStatus>,
    pub exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_attempts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_commit: Option<String>,
    /// `wfx run`: the session directory, the run's own status, why it
    /// stopped, the test steps that never passed, every step's record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never_passed: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<serde_json::Value>,
}

/// An event as written on a JSON line: the event and `message`, the line
/// people read (absent for events without one).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EventLine {
    #[serde(flatten)]
    pub event: Event,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// How a human line is coloured (identity without colour).
pub type Paint<'a> = &'a dyn Fn(Style, &str) -> String;

/// `(+12.0)`, `(-3.5)`, `(±0.0)`: the change against the previous run:
/// `change` (computed from the counts) when known, else the difference of
/// the two rates.
pub fn delta_text(prev: Option<f64>, cur: f64, change: Option<f64>) -> String {
    match prev {
        None => String::new(),
        Some(p) => {
            let d = (change.unwrap_or(cur - p) * 10.0).round() / 10.0;
            if d > 0.0 {
                format!(" (+{d:.1})")
            } else if d < 0.0 {
                format!(" ({d:.1})")
            } else {
                " (±0.0)".to_string()
            }
        }
    }
}

/// ` $0.12` for a reported cost.
pub fn cost_text(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!(" {}", crate::money::usd(c)),
        None => String::new(),
    }
}

/// `exit 1`, `timed out`, `killed`.
pub fn exit_text(exit_code: Option<i32>, timed_out: bool) -> String {
    if timed_out {
        "timed out".into()
    } else {
        match exit_code {
            Some(c) => format!("exit {c}"),
            None => "killed".into(),
        }
    }
}

fn short_commit(c: &str) -> &str {
    &c[..c.len().min(10)]
}

impl Event {
    /// The name in `event`.
    pub fn name(&self) -> &'static str {
        match self {
            Event::Start(_) => "start",
            Event::StaleProcesses { .. } => "stale_processes",
            Event::StaleGitLock { .. } => "stale_git_lock",
            Event::NoGit => "no_git",
            Event::Worktree { .. } => "worktree",
            Event::Warning { .. } => "warning",
            Event::Task { .. } => "task",
            Event::Run(_) => "run",
            Event::Flaky { .. } => "flaky",
            Event::Stuck { .. } => "stuck",
            Event::Analysis(_) => "analysis",
            Event::Fix(_) => "fix",
            Event::TestEdits { .. } => "test_edits",
            Event::Commit { .. } => "commit",
            Event::Undone { .. } => "undone",
            Event::Rollback { .. } => "rollback",
            Event::Complete { .. } => "complete",
            Event::Step(_) => "step",
            Event::TestRun(_) => "test_run",
            Event::Attempt(_) => "attempt",
            Event::TestStep { .. } => "test_step",
            Event::Paused { .. } => "paused",
            Event::Watching { .. } => "watching",
            Event::Woken { .. } => "woken",
            Event::Blocked { .. } => "blocked",
            Event::Done(_) => "done",
        }
    }

    pub fn warning(message: impl Into<String>) -> Event {
        Event::Warning {
            message: message.into(),
        }
    }

    /// The line people read (progress on stderr, the run log), if any.
    /// Pauses and the end are told on stdout by the command instead.
    pub fn human(&self, paint: Paint) -> Option<String> {
        Some(match self {
            Event::Start(s) => match s.front_end {
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
            },
            Event::StaleProcesses { pgid } => {
                format!("Ended the processes an interrupted run left behind (process group {pgid})")
            }
            Event::StaleGitLock { file } => {
                format!("Removed {file}, left by the interrupted run")
            }
            Event::NoGit => {
                "Not a git repository: running without commits (no checkpoints, no rollback)".into()
            }
            Event::Worktree { worktree, branch } => format!(
                "Working in the git worktree {worktree} on branch {branch} (created from HEAD; your own changes are not in it)"
            ),
            Event::Warning { message } => message.clone(),
            Event::Task { line, .. } => line.clone(),
            Event::Run(r) => {
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
                // No test was parsed (none found, or the runner failed
                // before its first test): a pass rate and "1 failing" would
                // count the command itself as a failing test.
                let counts = if r.total == 0 && r.passed == 0 {
                    crate::artifacts::test_results::NO_TEST_RAN.to_string()
                } else {
                    format!(
                        "{}{} · {} failing{}",
                        paint(Style::Bold, &format!("{:.1}%", r.pass_rate)),
                        delta_text(r.previous_pass_rate, r.pass_rate, r.change),
                        r.failed,
                        // Skipped tests are not in the rate: say so, so
                        // "77.7%" of a suite of 10 reads as 7 of 9.
                        match r.skipped {
                            0 => String::new(),
                            n => format!(" · {n} skipped (left out of the rate)"),
                        }
                    )
                };
                let sealed = r.sealed_commit.as_deref().map_or(String::new(), |c| {
                    format!(", sealed on {}", short_commit(c))
                });
                format!(
                    "Iteration {} · {counts} · {}{sealed} {}{mark}{notes}",
                    r.iteration,
                    r.label,
                    duration::millis(r.duration_ms),
                )
            }
            Event::Flaky { iteration, tests } => format!(
                "Iteration {iteration} · {} flaky (failed, then passed on a re-run): {}",
                tests.len(),
                tests.join(", ")
            ),
            Event::Stuck {
                iteration,
                tests,
                after,
            } => format!(
                "Iteration {iteration} · stuck: {} failed in {after} runs in a row: {}",
                tests.len(),
                tests.join(", ")
            ),
            Event::Analysis(a) => {
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
            Event::Fix(f) => {
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
                        (false, s) =>
                            format!(" · {}", s.map_or("-".to_string(), |s| s.to_string())),
                    },
                    f.failing,
                    f.files_changed.len(),
                )
            }
            Event::TestEdits {
                iteration,
                rejected: Some(why),
                ..
            } => format!("Iteration {iteration} · the fix edited the tests: {why}; rejected"),
            Event::TestEdits {
                iteration,
                rejected: None,
                test_edits,
            } => format!(
                "Iteration {iteration} · the fix changed tests (flagged, kept): {}",
                test_edits
                    .iter()
                    .take(3)
                    .map(|e| format!("{}: {}", e.file, e.detail))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Event::Undone {
                iteration,
                files,
                reason,
            } => format!(
                "Undone iteration {iteration} ({reason}): {} file(s) put back, nothing committed",
                files.len()
            ),
            Event::Commit {
                commit, message, ..
            } => format!("Committed {} {message}", short_commit(commit)),
            Event::Rollback {
                iteration,
                commit,
                message,
            } => format!(
                "Rolled back iteration {iteration}{}: {message} · next strategy: surgical",
                commit
                    .as_deref()
                    .map_or(String::new(), |c| format!(" ({})", short_commit(c)))
            ),
            Event::Complete {
                session_id,
                status,
                pass_rate,
            } => format!(
                "{} {session_id} · {pass_rate:.1}%",
                paint(
                    Style::Green,
                    if *status == SessionStatus::PartialSuccess {
                        "Partial success:"
                    } else {
                        "Completed:"
                    }
                )
            ),
            Event::Step(s) => {
                let mut line = format!("{} · {}", s.label, duration::millis(s.duration_ms));
                match &s.reason {
                    None => line.push_str(" · ok"),
                    Some(r) => line.push_str(&format!(" · FAILED: {r}")),
                }
                line
            }
            Event::TestRun(t) if t.attempt == 0 => format!(
                "test step {} · initial run · {} · {} failing · {}",
                t.step,
                exit_text(t.exit_code, t.timed_out),
                t.failing,
                duration::millis(t.duration_ms)
            ),
            Event::TestRun(t) => format!(
                "test step {} · re-run after attempt {}/{} · {} · {} failing · {}",
                t.step,
                t.attempt,
                t.max_attempts,
                exit_text(t.exit_code, t.timed_out),
                t.failing,
                if t.passed { "passed" } else { "failed" }
            ),
            Event::Attempt(a) => {
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
            Event::TestStep { step, outcome, .. } => format!("test step {step} · {outcome}"),
            Event::Watching { enter } => format!(
                "Watching the project's files: saving one retests{}; Ctrl-C pauses",
                if *enter { ", so does Enter" } else { "" }
            ),
            Event::Woken {
                by: WakeCause::Enter,
                ..
            } => "Enter pressed: retesting".to_string(),
            Event::Woken { files, .. } => format!("Saved {}: retesting", files.join(", ")),
            Event::Blocked { reason } => format!("{} {reason}", paint(Style::Red, "Blocked:")),
            Event::Paused { .. } | Event::Done(_) => return None,
        })
    }

    /// A warning (printed as `warning: …` for people).
    fn is_warning(&self) -> bool {
        matches!(self, Event::Warning { .. })
    }
}

/// Where events go: the printer (stderr lines or JSON Lines on stdout)
/// and the session's run log. In tests, a memory of both instead.
pub struct Sinks<'a> {
    ui: &'a Printer,
    run_log: Option<PathBuf>,
    /// Tests: the lines people would read and the JSON Lines, kept here
    /// instead of printed (and no run log).
    pub memory: Option<Captured>,
    /// Notes of runs already shown to people: a note that holds for every
    /// subset run (doctests cannot be filtered exactly) is said once.
    notes_shown: std::collections::HashSet<String>,
}

/// What a test's sinks captured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    /// Progress lines as printed on stderr (warnings with `warning: `).
    pub human: Vec<String>,
    /// The JSON Lines, one value each.
    pub json: Vec<serde_json::Value>,
}

impl<'a> Sinks<'a> {
    pub fn new(ui: &'a Printer) -> Sinks<'a> {
        Sinks {
            ui,
            run_log: None,
            memory: None,
            notes_shown: Default::default(),
        }
    }

    /// Sinks that keep everything in [`Sinks::memory`] (for tests).
    pub fn capture(ui: &'a Printer) -> Sinks<'a> {
        Sinks {
            ui,
            run_log: None,
            memory: Some(Captured::default()),
            notes_shown: Default::default(),
        }
    }

    pub fn printer(&self) -> &Printer {
        self.ui
    }

    /// Append every event to this file too (`None`: no run log).
    pub fn set_run_log(&mut self, path: Option<PathBuf>) {
        self.run_log = path;
    }

    /// Lines of a command's result for people (stdout; nothing with
    /// `--json`, whose events said it), told before the run ends.
    pub fn say(&mut self, lines: &[String]) {
        if let Some(memory) = &mut self.memory {
            memory.human.extend(lines.iter().cloned());
            return;
        }
        for line in lines {
            self.ui.out(line);
        }
    }

    /// A line for the run log only (bookkeeping people may look up).
    pub fn note(&mut self, text: &str, at: Timestamp) {
        self.append(text, at);
    }

    fn append(&self, text: &str, at: Timestamp) {
        // The run log is a convenience for people: never worth failing a
        // step for (a full disk shows up at the next state commit).
        let Some(path) = &self.run_log else { return };
        if self.memory.is_some() {
            return;
        }
        // Not once the session moved away (archived): its directory is not
        // made again for a log line.
        if !path.parent().is_some_and(Path::is_dir) {
            return;
        }
        if let Ok(mut f) = crate::fsx::append(path) {
            let _ = writeln!(
                f,
                "{} {text}",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
        }
    }

    /// Send one event to every sink.
    pub fn emit(&mut self, event: &Event, at: Timestamp) {
        // People read a run's note once; the JSON event keeps all of them.
        let once;
        let shown = match event {
            Event::Run(r) if !r.notes.is_empty() => {
                let mut r = r.clone();
                r.notes.retain(|n| self.notes_shown.insert(n.clone()));
                once = Event::Run(r);
                &once
            }
            _ => event,
        };
        let plain = shown.human(&|_, t| t.to_string());
        if let Some(memory) = &mut self.memory {
            if let Some(text) = &plain {
                memory.human.push(if event.is_warning() {
                    format!("warning: {text}")
                } else {
                    text.clone()
                });
            }
            let line = EventLine {
                event: event.clone(),
                message: plain.clone().filter(|_| !event.is_warning()),
            };
            if let Ok(v) = serde_json::to_value(&line) {
                memory.json.push(v);
            }
            return;
        }
        if self.ui.is_json() {
            let line = EventLine {
                event: event.clone(),
                // A warning's message is its own field already.
                message: plain.clone().filter(|_| !event.is_warning()),
            };
            if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&line) {
                self.ui.event_fields(fields);
            }
        } else if event.is_warning() {
            if let Some(text) = &plain {
                self.ui.warn(text);
            }
        } else if let Some(text) = shown.human(&|s, t| self.ui.paint(s, t)) {
            self.ui.status(text);
        }
        if let Event::Paused { reason, .. } = event
            && reason.needs_person()
        {
            self.ui.bell();
        }
        if self.run_log.is_some() {
            let text = match (&plain, event) {
                (Some(t), Event::Warning { .. }) => format!("warning: {t}"),
                (Some(t), _) => t.clone(),
                (None, Event::Paused { message, .. }) => {
                    format!("paused: {}", message.lines().next().unwrap_or_default())
                }
                (None, Event::Done(d)) => format!(
                    "done: {} (exit {})",
                    d.status.map_or("-", |s| s.as_str()),
                    d.exit_code
                ),
                (None, _) => return,
            };
            self.append(&text, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_and_costs() {
        assert_eq!(delta_text(None, 50.0, None), "");
        assert_eq!(delta_text(Some(70.0), 82.0, None), " (+12.0)");
        assert_eq!(delta_text(Some(82.0), 78.5, None), " (-3.5)");
        assert_eq!(delta_text(Some(80.0), 80.0, None), " (±0.0)");
        // 7/9 (77.7%, rounded down) → 9/9: the counts say +22.2.
        let change = 100.0 - 7.0 * 100.0 / 9.0;
        assert_eq!(delta_text(Some(77.7), 100.0, Some(change)), " (+22.2)");
        assert_eq!(cost_text(Some(0.123)), " $0.12");
        assert_eq!(cost_text(Some(0.0078)), " $0.0078");
        assert_eq!(cost_text(None), "");
    }

    /// A run's line: the change from the counts, and the skipped tests
    /// named, since the rate leaves them out (7 of 9 of a suite of 10).
    #[test]
    fn a_run_line_names_what_the_rate_leaves_out() {
        let plain = |_: Style, text: &str| text.to_string();
        let line = |skipped: u32| {
            Event::Run(RunEvent {
                iteration: 3,
                run: 4,
                scope: Scope::Full,
                pass_rate: 100.0,
                previous_pass_rate: Some(77.7),
                change: Some(100.0 - 700.0 / 9.0),
                total: 9 + skipped,
                passed: 9,
                failed: 0,
                skipped,
                new_failures: Vec::new(),
                result: None,
                duration_ms: 1200,
                command: "npm test".into(),
                label: "full suite".into(),
                notes: Vec::new(),
                sealed_commit: None,
            })
            .human(&plain)
            .unwrap()
        };
        assert_eq!(
            line(0),
            "Iteration 3 · 100.0% (+22.2) · 0 failing · full suite 1.2 s"
        );
        assert_eq!(
            line(1),
            "Iteration 3 · 100.0% (+22.2) · 0 failing · 1 skipped (left out of the rate) · full suite 1.2 s"
        );
    }

    /// A note that holds for every subset run is said to people once; the
    /// JSON events keep it on every run.
    #[test]
    fn a_run_note_is_said_once() {
        let ui = crate::ui::Printer::plain();
        let mut sinks = Sinks::capture(&ui);
        let note = "doctest names cannot be filtered exactly through cargo".to_string();
        for run in [2, 3, 4] {
            let event = Event::Run(RunEvent {
                iteration: 2,
                run,
                scope: Scope::Affected,
                pass_rate: 84.6,
                previous_pass_rate: None,
                change: None,
                total: 13,
                passed: 11,
                failed: 2,
                skipped: 0,
                new_failures: Vec::new(),
                result: None,
                duration_ms: 500,
                command: "cargo test".into(),
                label: "tier 1".into(),
                notes: if run == 4 {
                    vec!["another note".into(), note.clone()]
                } else {
                    vec![note.clone()]
                },
                sealed_commit: None,
            });
            sinks.emit(&event, chrono::Utc::now());
        }
        let said = sinks.memory.unwrap();
        assert_eq!(
            said.human,
            [
                format!("Iteration 2 · 84.6% · 2 failing · tier 1 500 ms · note: {note}"),
                "Iteration 2 · 84.6% · 2 failing · tier 1 500 ms".to_string(),
                "Iteration 2 · 84.6% · 2 failing · tier 1 500 ms · note: another note".to_string(),
            ]
        );
        for json in &said.json {
            assert!(
                json["notes"]
                    .as_array()
                    .unwrap()
                    .contains(&note.clone().into()),
                "{json}"
            );
        }
    }

    /// The fix line names the strategy of an agent's fix, never of a
    /// person's (#20 item 9).
    #[test]
    fn a_fix_by_hand_names_no_strategy() {
        let plain = |_: Style, text: &str| text.to_string();
        let fix = |by_hand: bool| {
            Event::Fix(FixEvent {
                iteration: 2,
                agent: if by_hand { "manual" } else { "claude" }.into(),
                strategy: Some(Strategy::Conservative),
                duration_ms: 1500,
                exit_code: Some(0),
                timed_out: false,
                cost_usd: None,
                files_changed: vec!["src/a.py".into()],
                test_edits: Vec::new(),
                pass_rate_before: Some(50.0),
                earlier_pass_rate: Some(40.0),
                change: None,
                failing: 3,
                error: None,
                by_hand,
            })
            .human(&plain)
            .unwrap()
        };
        assert_eq!(
            fix(true),
            "Iteration 2 · 50.0% (+10.0) · 3 failing · fix by hand · 1 file(s) changed"
        );
        assert_eq!(
            fix(false),
            "Iteration 2 · 50.0% (+10.0) · conservative · 3 failing · fix by claude 1.5 s · 1 file(s) changed"
        );
    }

    /// docs/events.md has a section for every event of the schema.
    #[test]
    fn every_event_is_documented() {
        let schema = crate::artifacts::all_schemas()
            .into_iter()
            .find(|(n, _)| *n == "event")
            .unwrap()
            .1;
        fn names(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(c) = m
                        .get("properties")
                        .and_then(|p| p.get("event"))
                        .and_then(|e| e.get("const"))
                        .and_then(|c| c.as_str())
                    {
                        out.push(c.to_string());
                    }
                    m.values().for_each(|x| names(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| names(x, out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        names(&schema, &mut all);
        assert!(all.len() >= 20, "{all:?}");
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.md"),
        )
        .unwrap();
        for name in all {
            assert!(
                doc.contains(&format!("### `{name}`")),
                "docs/events.md has no section for `{name}`"
            );
        }
    }

    #[test]
    fn every_event_is_tagged_with_its_name() {
        let events = [
            Event::NoGit,
            Event::warning("w"),
            Event::Blocked { reason: "r".into() },
            Event::Done(Box::default()),
            Event::StaleProcesses { pgid: 7 },
        ];
        for e in events {
            let v = serde_json::to_value(&e).unwrap();
            assert_eq!(v["event"], e.name(), "{v}");
        }
    }
}
