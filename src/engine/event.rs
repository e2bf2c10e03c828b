//! The one event stream of both front ends and of `wfx test-fix-gen`'s
//! planning (DESIGN.md §10.1): [`Event`] is serialised with its name in
//! `event`. This module holds the data only; `super::sink` sends each
//! event to people, to machines (`--json`) and to the session's run log,
//! and its displayer renders the line people read, which the JSON form
//! also carries as `message`. `docs/events.md` lists them;
//! `schemas/event.schema.json` is generated from [`EventLine`].

use schemars::JsonSchema;
use serde::Serialize;

pub use super::phase_event::{
    CoverageTargets, GateThresholds, PhaseEvent, PhaseFinished, PhasesResumed, PlanArtifacts,
    Planned, PlannedTask, Thresholds,
};
use super::step::PauseReason;
use crate::artifacts::fix_history::TestEdit;
use crate::artifacts::iteration_state::{CommitPurpose, IterationResult, Strategy};
use crate::artifacts::session::SessionStatus;
use crate::artifacts::task::TaskStatus;
use crate::artifacts::test_results::Scope;

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
    /// `wfx test-fix-gen` continues a session planned before.
    PhasesResumed(PhasesResumed),
    /// A phase (1–4) of `wfx test-fix-gen` started.
    PhaseStarted(PhaseEvent),
    /// A phase of `wfx test-fix-gen` ended.
    PhaseFinished(PhaseFinished),
    /// Phases 1–4 are done: the plan phase 5 runs (the first JSON line of
    /// `wfx test-fix-gen --json` when phase 5 follows).
    Planned(Box<Planned>),
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
    /// A speculative candidate started in its own checkout (DESIGN.md
    /// §11.4).
    #[serde(rename = "candidate-started")]
    CandidateStarted(CandidateEvent),
    /// A candidate finished (or was not started: the cost cap), with what
    /// its runs measured.
    #[serde(rename = "candidate-finished")]
    CandidateFinished(Box<CandidateFinished>),
    /// The choice among a step's candidates: the one applied (none when
    /// no candidate was better than the run before), and every verdict.
    #[serde(rename = "candidate-chosen")]
    CandidateChosen(Box<CandidateChosen>),
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

/// Which candidate of which step.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandidateEvent {
    /// The fix attempt (`wfx run`: the debug attempt of `step`).
    pub iteration: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// 1-based, of `of`.
    pub candidate: u32,
    pub of: u32,
    /// The agent's name, or `shell`.
    pub agent: String,
    pub strategy: Option<Strategy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandidateFinished {
    #[serde(flatten)]
    pub who: CandidateEvent,
    pub duration_ms: u64,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cost_usd: Option<f64>,
    pub files_changed: Vec<String>,
    /// Lines added and removed.
    pub diff_lines: u32,
    /// Its test runs in its checkout.
    pub tiers: Vec<CandidateTierEvent>,
    /// Tests failing before the step that pass with it (when tested).
    pub fixed: Option<u32>,
    /// Why the call or the checkout failed.
    pub error: Option<String>,
    /// Not started: why (the cost cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_started: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandidateTierEvent {
    pub tier: crate::artifacts::iteration_state::Tier,
    pub total: u32,
    pub passed: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandidateChosen {
    pub iteration: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    pub of: u32,
    /// The candidate applied; none when no candidate was better than the
    /// run before (the step is a failed attempt).
    pub candidate: Option<u32>,
    pub agent: Option<String>,
    pub strategy: Option<Strategy>,
    /// Why, as people read it.
    pub reason: String,
    pub verdicts: Vec<CandidateVerdictEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandidateVerdictEvent {
    pub candidate: u32,
    pub agent: String,
    pub strategy: Option<Strategy>,
    pub verdict: crate::artifacts::fix_history::CandidateVerdict,
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

impl EventLine {
    /// The JSON line of `event` whose line for people is `line`; a
    /// warning's message is its own field already.
    pub fn new(event: &Event, line: Option<String>) -> EventLine {
        EventLine {
            event: event.clone(),
            message: line.filter(|_| !event.is_warning()),
        }
    }
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
            Event::PhasesResumed(_) => "phases_resumed",
            Event::PhaseStarted(_) => "phase_started",
            Event::PhaseFinished(_) => "phase_finished",
            Event::Planned(_) => "planned",
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
            Event::CandidateStarted(_) => "candidate-started",
            Event::CandidateFinished(_) => "candidate-finished",
            Event::CandidateChosen(_) => "candidate-chosen",
            Event::Blocked { .. } => "blocked",
            Event::Done(_) => "done",
        }
    }

    pub fn warning(message: impl Into<String>) -> Event {
        Event::Warning {
            message: message.into(),
        }
    }

    /// A warning (printed as `warning: …` for people).
    pub fn is_warning(&self) -> bool {
        matches!(self, Event::Warning { .. })
    }
}

/// The schema of one JSON Lines event of `--json` (docs/events.md):
/// `schemas/event.schema.json`.
pub fn schema() -> (&'static str, serde_json::Value) {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<EventLine>();
    (
        "event",
        serde_json::to_value(schema).expect("schemas serialise"),
    )
}

/// Every event name of the schema (tests).
#[cfg(test)]
pub(crate) fn schema_event_names() -> Vec<String> {
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
    names(&schema().1, &mut all);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/events.md has a section for every event of the schema.
    #[test]
    fn every_event_is_documented() {
        let all = schema_event_names();
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
