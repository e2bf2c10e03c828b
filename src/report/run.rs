//! The run section of the view: what a `wfx run` session (DESIGN.md §8)
//! did, step by step and attempt by attempt, computed from [`RunData`] by
//! pure functions. `wfx status` prints it, `wfx status --json` maps it to
//! its stable document, and the HTML report renders it with one pass-rate
//! chart (the cycle's, [`super::chart`]) per test step that ran its tests
//! more than once.

use serde::Serialize;

use super::RunData;
use super::view::{Link, NextStep, Outcome, RunView, duration, money, pct, sparkline, timestamp};
use crate::artifacts::Timestamp;
use crate::artifacts::run_state::{
    AttemptOutcome, AttemptRecord, DebugRecord, StepKind, StepRecord, StepStatus, TestPhase,
    TestRunRecord,
};
use crate::artifacts::test_results::TestResults;
use crate::session::Location;
use crate::workflow::decide;
use crate::workflow::model::{Action, OnFailure, Step, Workflow};

/// Commands and prompts are shown up to this many characters.
pub const MAX_COMMAND_CHARS: usize = 300;

/// At most this many failing tests are listed per test run.
pub const MAX_FAILING_LISTED: usize = 20;

/// The pass-rate line a `wfx run` test step is drawn against: a test step
/// passes only when its command exits 0, i.e. when every test passes.
pub const RUN_CHART_THRESHOLD: f64 = 100.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSection {
    /// The workflow's `name:` (or file stem) and file as recorded when the
    /// run started (relative to the project root, or the file name when
    /// it lies outside).
    pub workflow_name: String,
    pub workflow_file: String,
    /// `running`, `paused`, `completed`, `partial_success`, `failed`, or
    /// `unknown` when `run-state.json` is missing or unreadable.
    pub status: String,
    /// Running or paused: `wfx run FILE --resume` continues it.
    pub unfinished: bool,
    /// Where an unfinished run stands: the step (1-based), the attempt
    /// (0: the initial test run; only for test steps) and the test step's
    /// phase (`initial_test`, `debug`, `retest`).
    pub current_step: Option<usize>,
    pub current_attempt: Option<u32>,
    pub current_phase: Option<String>,
    /// The same in words: `step 2 (test), attempt 1 (debug command)`.
    pub position: Option<String>,
    pub stop_reason: Option<String>,
    /// `wfx run FILE --resume` for an unfinished run in `active/`.
    pub resume_command: Option<String>,
    pub started_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    pub started: String,
    pub duration_ms: Option<u64>,
    pub duration: String,
    pub cost_usd: f64,
    pub cost: String,
    pub steps: Vec<StepView>,
    /// Steps that passed, and test runs of all test steps.
    pub steps_passed: usize,
    pub test_runs: usize,
    pub state_file: Link,
    pub log: Link,
    pub workflow_copy: Link,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    pub index: usize,
    pub id: Option<String>,
    /// `step 2 (test)`, `step 1 "build" (shell)`.
    pub label: String,
    /// `shell`, `claude` (an agent) or `test`.
    pub kind: String,
    /// The command or prompt as run (from the step's command file, or the
    /// test run's command), else as written in the workflow; at most
    /// [`MAX_COMMAND_CHARS`] characters.
    pub command: String,
    pub command_truncated: bool,
    /// `pending`, `running`, `passed`, `failed`.
    pub status: String,
    /// The directory of the step's files (relative to the project root;
    /// empty when the run recorded none).
    pub dir: String,
    /// The step the run stands at (unfinished runs only).
    pub current: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: Option<u64>,
    pub duration: String,
    /// Test steps: debug attempts made, and the most allowed.
    pub debug_attempts: u32,
    pub max_attempts: u32,
    /// A test step that never passed and let the workflow go on.
    pub continued: bool,
    pub reason: Option<String>,
    /// A finished test step in one phrase (`passed after 2 debug attempts
    /// (of at most 3)`).
    pub summary: Option<String>,
    pub cost_usd: Option<f64>,
    pub command_file: Option<Link>,
    pub output_file: Option<Link>,
    /// The test step's `on_failure:` as written in the workflow.
    pub on_failure: Option<OnFailureView>,
    /// Test steps: the initial run (attempt 0), then one entry per debug
    /// attempt.
    pub attempts: Vec<AttemptView>,
    /// Pass rates of the test runs whose output was parsed, in order.
    pub pass_rates: Vec<f64>,
    pub sparkline: String,
    /// More than one test run: the report draws a chart.
    pub chart: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnFailureView {
    /// `shell` or `claude`.
    pub kind: String,
    /// The debug command or prompt as written (variables not filled in).
    pub command: String,
    pub max_attempts: u32,
    pub stop_on_success: bool,
    pub fail_workflow: bool,
    pub commit_required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptView {
    /// 0: the initial test run; N: debug attempt N and the re-run after it.
    pub attempt: u32,
    /// `initial run`, `attempt 2`.
    pub label: String,
    /// The `on_failure` command of this attempt (none for attempt 0).
    pub debug: Option<DebugView>,
    /// The test run (none while it has not run, or when the attempt
    /// counted as failed without one).
    pub test: Option<TestView>,
    /// `passed`, `failed` or `no_change` once the attempt is over.
    pub outcome: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DebugView {
    /// `shell` or `claude`.
    pub kind: String,
    pub agent: Option<String>,
    pub command: String,
    pub command_truncated: bool,
    /// False while the command runs (or when a run died in it).
    pub finished: bool,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// `exit 0`, `exit 2: …`, `timed out`, `not finished` (running, or
    /// stopped in it).
    pub result: String,
    pub duration_ms: u64,
    pub duration: String,
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
    pub committed: bool,
    pub files_changed: Vec<String>,
    pub command_file: Link,
    pub output_file: Link,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestView {
    pub exit_code: Option<i32>,
    /// Exit code 0: what decides a test step (seed 000).
    pub passed: bool,
    pub timed_out: bool,
    /// The parser that read the output (`exit-code` when none could).
    pub parser: String,
    /// Counted test cases, when the output was parsed.
    pub counts: Option<TestCounts>,
    pub pass_rate: Option<f64>,
    /// `exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)`, or
    /// `exit 3 (output not parsed)`.
    pub result: String,
    pub duration_ms: u64,
    pub duration: String,
    /// Failing test ids (at most [`MAX_FAILING_LISTED`]) and how many more.
    pub failing_tests: Vec<String>,
    pub failing_omitted: usize,
    pub output_file: Link,
    pub results_file: Link,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TestCounts {
    pub total: u32,
    pub passed: u32,
    /// Failed tests plus errors.
    pub failed: u32,
    pub skipped: u32,
}

/// Build the run section. `href` turns a path relative to the project
/// root into a [`Link`]; `dir` is the session directory (relative).
pub fn build(
    run: &RunData,
    location: Location,
    dir: &str,
    href: &dyn Fn(&str) -> Link,
) -> RunSection {
    let wf = run.workflow.as_ref();
    let st = run.state.as_ref();
    let unfinished = st.is_some_and(|s| s.status.is_unfinished());
    let steps: Vec<StepView> = match st {
        Some(s) => s
            .steps
            .iter()
            .map(|rec| {
                let current = unfinished && rec.index == s.current_step;
                step_view(run, rec, workflow_step(wf, rec.index), current, href)
            })
            .collect(),
        None => wf
            .map(|w| w.steps.iter().map(pending_view).collect())
            .unwrap_or_default(),
    };
    let current_rec = st
        .filter(|_| unfinished)
        .and_then(|s| s.steps.get(s.current_step.wrapping_sub(1)));
    let (current_attempt, current_phase) = match current_rec {
        Some(rec) if rec.kind == StepKind::Test => match rec.phase {
            Some(TestPhase::Debug) => (Some(rec.attempt), Some("debug")),
            Some(TestPhase::Retest) => (Some(rec.attempt), Some("retest")),
            Some(TestPhase::Done) => (Some(rec.attempt), None),
            Some(TestPhase::InitialTest) | None => (Some(0), Some("initial_test")),
        },
        _ => (None, None),
    };
    let resume_command = st
        .filter(|s| s.status.is_unfinished() && location == Location::Active)
        .map(|s| format!("wfx run {} --resume", s.workflow_file));
    let duration_ms =
        st.and_then(|s| elapsed(Some(s.started_at), s.completed_at.or(Some(s.updated_at))));
    RunSection {
        workflow_name: st
            .map(|s| s.workflow_name.clone())
            .or_else(|| wf.and_then(|w| w.name.clone()))
            .unwrap_or_default(),
        workflow_file: st.map(|s| s.workflow_file.clone()).unwrap_or_default(),
        status: st.map_or("unknown".into(), |s| s.status.to_string()),
        unfinished,
        current_step: current_rec.map(|r| r.index),
        current_attempt,
        current_phase: current_phase.map(str::to_string),
        position: st
            .filter(|_| unfinished)
            .map(|s| crate::workflow::position(s, wf)),
        stop_reason: st.and_then(|s| s.stop_reason.clone()),
        resume_command,
        started_at: st.map(|s| s.started_at),
        updated_at: st.map(|s| s.updated_at),
        completed_at: st.and_then(|s| s.completed_at),
        started: st.map(|s| timestamp(&s.started_at)).unwrap_or_default(),
        duration_ms,
        duration: duration_ms.map(duration).unwrap_or_default(),
        cost_usd: st.map_or(0.0, |s| s.cost_usd),
        cost: money(st.map(|s| s.cost_usd).filter(|c| *c > 0.0)),
        steps_passed: steps.iter().filter(|s| s.status == "passed").count(),
        test_runs: steps
            .iter()
            .flat_map(|s| &s.attempts)
            .filter(|a| a.test.is_some())
            .count(),
        steps,
        state_file: href(&format!("{dir}/.process/run-state.json")),
        log: href(&format!("{dir}/.process/run.log")),
        workflow_copy: href(&format!("{dir}/workflow.yml")),
    }
}

fn workflow_step(wf: Option<&Workflow>, index: usize) -> Option<&Step> {
    wf.and_then(|w| w.steps.iter().find(|s| s.index == index))
}

fn on_failure_of(step: Option<&Step>) -> Option<&OnFailure> {
    match &step?.action {
        Action::Test(t) => t.on_failure.as_ref(),
        Action::Run(_) => None,
    }
}

/// The step's text as written in the workflow.
fn written_command(step: Option<&Step>) -> Option<&str> {
    Some(match &step?.action {
        Action::Run(e) => e.text().text.as_str(),
        Action::Test(t) => t.command.text.as_str(),
    })
}

/// `text` cut to [`MAX_COMMAND_CHARS`] characters, trailing whitespace
/// removed; true when something was cut.
pub fn bounded(text: &str) -> (String, bool) {
    let text = text.trim_end();
    let mut chars = text.char_indices();
    match chars.nth(MAX_COMMAND_CHARS) {
        Some((i, _)) => (format!("{}…", &text[..i]), true),
        None => (text.to_string(), false),
    }
}

fn label_of(rec_index: usize, id: Option<&str>, kind: &str) -> String {
    match id {
        Some(id) => format!("step {rec_index} \"{id}\" ({kind})"),
        None => format!("step {rec_index} ({kind})"),
    }
}

fn elapsed(start: Option<Timestamp>, end: Option<Timestamp>) -> Option<u64> {
    u64::try_from((end? - start?).num_milliseconds()).ok()
}

fn on_failure_view(f: &OnFailure) -> OnFailureView {
    OnFailureView {
        kind: f.debug.kind().to_string(),
        command: bounded(&f.debug.text().text).0,
        max_attempts: f.max_attempts,
        stop_on_success: f.stop_on_success,
        fail_workflow: f.fail_workflow,
        commit_required: f.commit_required,
    }
}

/// A step of a run that has no readable state: as written, not run.
fn pending_view(step: &Step) -> StepView {
    let (command, command_truncated) = bounded(written_command(Some(step)).unwrap_or(""));
    let on_failure = on_failure_of(Some(step));
    StepView {
        index: step.index,
        id: step.id.clone(),
        label: step.label(),
        kind: step.kind().to_string(),
        command,
        command_truncated,
        status: StepStatus::Pending.as_str().into(),
        dir: String::new(),
        current: false,
        exit_code: None,
        duration_ms: None,
        duration: String::new(),
        debug_attempts: 0,
        max_attempts: on_failure.map_or(0, |f| f.max_attempts),
        continued: false,
        reason: None,
        summary: None,
        cost_usd: None,
        command_file: None,
        output_file: None,
        on_failure: on_failure.map(on_failure_view),
        attempts: Vec::new(),
        pass_rates: Vec::new(),
        sparkline: String::new(),
        chart: false,
    }
}

fn step_view(
    run: &RunData,
    rec: &StepRecord,
    step: Option<&Step>,
    current: bool,
    href: &dyn Fn(&str) -> Link,
) -> StepView {
    let kind = rec.kind.as_str();
    let on_failure = on_failure_of(step);
    let as_run = match rec.kind {
        StepKind::Test => rec
            .initial
            .as_ref()
            .map(|r| r.command.clone())
            .or_else(|| written_command(step).map(str::to_string)),
        StepKind::Shell | StepKind::Claude => rec
            .command_file
            .as_ref()
            .and_then(|f| run.commands.get(f).cloned())
            .or_else(|| written_command(step).map(str::to_string)),
    };
    let (command, command_truncated) = bounded(as_run.as_deref().unwrap_or(""));

    let mut attempts = Vec::new();
    if let Some(initial) = &rec.initial {
        attempts.push(AttemptView {
            attempt: 0,
            label: "initial run".into(),
            debug: None,
            test: Some(test_view(
                initial,
                run.results.get(&initial.results_file),
                href,
            )),
            outcome: Some(if initial.passed { "passed" } else { "failed" }.into()),
            reason: None,
        });
    }
    attempts.extend(rec.attempts.iter().map(|a| attempt_view(run, a, href)));
    let tests: Vec<&TestView> = attempts.iter().filter_map(|a| a.test.as_ref()).collect();
    let pass_rates: Vec<f64> = tests.iter().filter_map(|t| t.pass_rate).collect();

    let duration_ms = match rec.kind {
        StepKind::Test => elapsed(rec.started_at, rec.completed_at),
        _ if rec.completed_at.is_some() => Some(rec.duration_ms),
        _ => None,
    };
    let finished = matches!(rec.status, StepStatus::Passed | StepStatus::Failed);
    let summary =
        (rec.kind == StepKind::Test && finished && (on_failure.is_some() || rec.max_attempts == 0))
            .then(|| decide::test_outcome(rec, on_failure));
    StepView {
        index: rec.index,
        id: rec.id.clone(),
        label: step
            .map(|s| s.label())
            .unwrap_or_else(|| label_of(rec.index, rec.id.as_deref(), kind)),
        kind: kind.to_string(),
        command,
        command_truncated,
        status: rec.status.as_str().to_string(),
        dir: rec.dir.clone(),
        current,
        exit_code: rec.exit_code,
        duration_ms,
        duration: match duration_ms {
            Some(ms) => duration(ms),
            None if rec.status == StepStatus::Running => "running".into(),
            None => String::new(),
        },
        debug_attempts: rec.attempts.len() as u32,
        max_attempts: rec.max_attempts,
        continued: rec.continued,
        reason: rec.reason.clone(),
        summary,
        cost_usd: rec.cost_usd,
        command_file: rec.command_file.as_deref().map(href),
        output_file: rec.output_file.as_deref().map(href),
        on_failure: on_failure.map(on_failure_view),
        chart: tests.len() > 1,
        sparkline: sparkline(&pass_rates),
        pass_rates,
        attempts,
    }
}

fn attempt_view(run: &RunData, a: &AttemptRecord, href: &dyn Fn(&str) -> Link) -> AttemptView {
    AttemptView {
        attempt: a.attempt,
        label: format!("attempt {}", a.attempt),
        debug: a.debug.as_ref().map(|d| debug_view(run, d, href)),
        test: a
            .test
            .as_ref()
            .map(|t| test_view(t, run.results.get(&t.results_file), href)),
        outcome: a.outcome.map(|o| {
            match o {
                AttemptOutcome::Passed => "passed",
                AttemptOutcome::Failed => "failed",
                AttemptOutcome::NoChange => "no_change",
            }
            .to_string()
        }),
        reason: a.reason.clone(),
    }
}

fn debug_view(run: &RunData, d: &DebugRecord, href: &dyn Fn(&str) -> Link) -> DebugView {
    let (command, command_truncated) =
        bounded(run.commands.get(&d.command_file).map_or("", String::as_str));
    let result = if !d.finished {
        "not finished".to_string()
    } else if d.timed_out {
        "timed out".to_string()
    } else {
        let exit = match d.exit_code {
            Some(c) => format!("exit {c}"),
            None => "killed".into(),
        };
        match &d.error {
            Some(e) if !e.is_empty() => format!("{exit}: {e}"),
            _ => exit,
        }
    };
    DebugView {
        kind: d.kind.as_str().to_string(),
        agent: d.agent.clone(),
        command,
        command_truncated,
        finished: d.finished,
        exit_code: d.exit_code,
        timed_out: d.timed_out,
        result,
        duration_ms: d.duration_ms,
        duration: if d.finished {
            duration(d.duration_ms)
        } else {
            String::new()
        },
        cost_usd: d.cost_usd,
        error: d.error.clone(),
        committed: d.committed,
        files_changed: d.files_changed.clone(),
        command_file: href(&d.command_file),
        output_file: href(&d.output_file),
    }
}

/// One test run: the record decides pass/fail (exit code), the parsed
/// results add counts when the runner's output could be read.
pub fn test_view(
    r: &TestRunRecord,
    results: Option<&TestResults>,
    href: &dyn Fn(&str) -> Link,
) -> TestView {
    let parsed = results.filter(|x| x.parser != "exit-code" && x.total > 0);
    let counts = parsed.map(|x| TestCounts {
        total: x.total,
        passed: x.passed,
        failed: x.failed + x.errors,
        skipped: x.skipped,
    });
    let exit = crate::engine::sink::displayer::exit_text(r.exit_code, r.timed_out);
    let result = match counts {
        Some(c) => {
            let skipped = if c.skipped > 0 {
                format!(", {} skipped", c.skipped)
            } else {
                String::new()
            };
            format!(
                "{exit} · {} passed, {} failed{skipped} of {} ({})",
                c.passed,
                c.failed,
                c.total,
                pct(parsed.map_or(0.0, |x| x.pass_rate))
            )
        }
        None => format!("{exit} (output not parsed)"),
    };
    let failing: Vec<&str> = parsed
        .map(|x| x.failures.iter().map(|f| f.test.as_str()).collect())
        .unwrap_or_default();
    TestView {
        exit_code: r.exit_code,
        passed: r.passed,
        timed_out: r.timed_out,
        parser: r.parser.clone(),
        counts,
        pass_rate: parsed.map(|x| x.pass_rate),
        result,
        duration_ms: r.duration_ms,
        duration: duration(r.duration_ms),
        failing_omitted: failing.len().saturating_sub(MAX_FAILING_LISTED),
        failing_tests: failing
            .into_iter()
            .take(MAX_FAILING_LISTED)
            .map(str::to_string)
            .collect(),
        output_file: href(&r.output_file),
        results_file: href(&r.results_file),
    }
}

/// The points of a test step's chart: one per test run, at its pass rate
/// (a run whose output was not parsed at 100 % when it passed, else 0 %).
pub fn chart_runs(step: &StepView) -> Vec<RunView> {
    step.attempts
        .iter()
        .filter_map(|a| a.test.as_ref().map(|t| (a, t)))
        .map(|(a, t)| {
            let rate = t.pass_rate.unwrap_or(if t.passed { 100.0 } else { 0.0 });
            let c = t.counts.unwrap_or(TestCounts {
                total: 0,
                passed: 0,
                failed: 0,
                skipped: 0,
            });
            RunView {
                run: a.attempt,
                iteration: a.attempt,
                scope: "full".into(),
                scope_shown: "full".into(),
                ran_passed: c.passed,
                ran_failed: c.failed,
                ran_total: c.total,
                merged: false,
                pass_rate: rate,
                pass_rate_text: match t.pass_rate {
                    Some(p) => pct(p),
                    None => t.result.clone(),
                },
                total: c.total,
                passed: c.passed,
                failed: c.failed,
                failed_tests: t.failing_tests.clone(),
                new_failures: Vec::new(),
                strategy: None,
                strategy_before: None,
                result: Some(if t.passed { "passed" } else { "failed" }.into()),
                analysis_tool: None,
                analysis: None,
                fix_task: None,
                fix_commit: None,
                rollback_commit: None,
                rolled_back: false,
                flaky_tests: Vec::new(),
                started_at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                duration: t.duration.clone(),
            }
        })
        .collect()
}

/// Where a run stands and why, in the words of the test cycle's outcome
/// (`kind` is one of its values, so a reader keyed on it needs nothing new:
/// a failed run is `blocked`, a running one `in_progress`).
pub fn outcome(run: &RunSection) -> Outcome {
    let never_passed: Vec<&str> = run
        .steps
        .iter()
        .filter(|s| s.kind == "test" && s.status == "failed")
        .map(|s| s.label.as_str())
        .collect();
    let position = run.position.clone().unwrap_or_default();
    let (kind, title, reason) = match run.status.as_str() {
        "completed" => {
            let n = run.steps.len();
            let mut reason = format!(
                "all {n} step{} finished and every test step passed",
                if n == 1 { "" } else { "s" }
            );
            for s in run.steps.iter().filter(|s| s.debug_attempts > 0) {
                reason.push_str(&format!(
                    "; {} passed after {} debug attempt{}",
                    s.label,
                    s.debug_attempts,
                    if s.debug_attempts == 1 { "" } else { "s" }
                ));
            }
            ("completed", "Completed", reason)
        }
        "partial_success" => (
            "partial_success",
            "Partial success",
            format!(
                "every step finished, but {} never passed (fail_workflow: false)",
                join_labels(&never_passed)
            ),
        ),
        "failed" => (
            "blocked",
            "Failed",
            run.stop_reason
                .clone()
                .unwrap_or_else(|| "the run failed (no reason recorded)".into()),
        ),
        "paused" => (
            "paused",
            "Paused",
            format!(
                "{}: stopped at {position}; resumable",
                run.stop_reason.as_deref().unwrap_or("stopped")
            ),
        ),
        "running" => (
            "in_progress",
            "Running",
            format!(
                "at {position} (if no wfx process is running it, the run was killed; `--resume` continues it)"
            ),
        ),
        _ => (
            "in_progress",
            "No run state",
            format!(
                "{} is missing or unreadable; `wfx run FILE --resume` starts the workflow from step 1 in this session",
                run.state_file.path
            ),
        ),
    };
    Outcome {
        kind: kind.into(),
        title: title.into(),
        reason,
    }
}

fn join_labels(labels: &[&str]) -> String {
    match labels {
        [] => "a test step".into(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The command that moves a run on: `--resume` for an unfinished run, a
/// new run after a failed one, archiving after a finished one.
pub fn next_step(session_id: &str, location: Location, run: &RunSection) -> NextStep {
    let step = |command: Option<String>, hint: &str| NextStep {
        action: None,
        command,
        hint: Some(hint.to_string()),
    };
    if location == Location::Archived {
        // A failed run is archived when it stops: running the workflow
        // again is still what moves forward.
        if run.status == "failed" {
            return step(
                Some(format!("wfx run {}", run.workflow_file)),
                "fix what stopped the run, then run the workflow again (a new session; this one is archived)",
            );
        }
        return step(None, "archived: the session is finished and kept read-only");
    }
    if let Some(cmd) = &run.resume_command {
        return NextStep {
            action: None,
            command: Some(cmd.clone()),
            hint: Some(format!(
                "continue at {}",
                run.position
                    .as_deref()
                    .unwrap_or("the step where it stopped")
            )),
        };
    }
    match run.status.as_str() {
        "failed" => step(
            Some(format!("wfx run {}", run.workflow_file)),
            "fix what stopped the run, then run the workflow again (a new session; this one is kept)",
        ),
        "completed" | "partial_success" => step(
            Some(format!("wfx session complete {session_id}")),
            "nothing left to run; archive the finished run",
        ),
        _ => step(
            None,
            "no readable run state: run the workflow with `wfx run FILE --resume`",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::run_state::{RunState, RunStatus};
    use std::collections::BTreeMap;

    const DIR: &str = ".workflow/active/WFS-run-x";

    fn t(s: &str) -> Timestamp {
        chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn link(p: &str) -> Link {
        Link {
            path: p.to_string(),
            href: None,
        }
    }

    fn test_run(exit: i32, failing: u32, parser: &str, file: &str) -> TestRunRecord {
        TestRunRecord {
            started_at: t("2026-01-01T00:00:00Z"),
            command: "npm test".into(),
            exit_code: Some(exit),
            passed: exit == 0,
            timed_out: false,
            duration_ms: 1500,
            total: 10,
            failing,
            parser: parser.into(),
            output_file: format!("{DIR}/.process/step-02/{file}/test-output.log"),
            results_file: format!("{DIR}/.process/step-02/{file}/test-results.json"),
            extra: Default::default(),
        }
    }

    fn results(passed: u32, failed: u32, skipped: u32, parser: &str) -> TestResults {
        let failures = (0..failed)
            .map(|i| crate::artifacts::test_results::Failure {
                test: format!("t{i}"),
                file: None,
                line: None,
                error: String::new(),
                message: String::new(),
                criticality: crate::artifacts::test_results::Criticality::High,
                test_type: crate::artifacts::test_results::Layer::Unit,
                flaky: false,
                extra: Default::default(),
            })
            .collect();
        TestResults {
            command: "npm test".into(),
            exit_code: Some(if failed == 0 { 0 } else { 1 }),
            duration_ms: 1500,
            setup_ms: None,
            scope: crate::artifacts::test_results::Scope::Full,
            framework: "node-test".into(),
            parser: parser.into(),
            total: passed + failed + skipped,
            passed,
            failed,
            skipped,
            errors: 0,
            pass_rate: crate::artifacts::test_results::pass_rate(passed, failed, 0),
            layer_distribution: Default::default(),
            failures,
            output_log: None,
            truncated: false,
            started_at: None,
            cases: Vec::new(),
            notes: Vec::new(),
            extra: Default::default(),
        }
    }

    fn debug(exit: i32, finished: bool, error: Option<&str>) -> DebugRecord {
        DebugRecord {
            started_at: t("2026-01-01T00:00:02Z"),
            kind: StepKind::Shell,
            agent: None,
            command_file: format!("{DIR}/.process/step-02/attempt-1/debug-command.txt"),
            output_file: format!("{DIR}/.process/step-02/attempt-1/debug-output.log"),
            head_before: None,
            snapshot_before: None,
            finished,
            exit_code: finished.then_some(exit),
            timed_out: false,
            duration_ms: 250,
            cost_usd: None,
            error: error.map(str::to_string),
            committed: false,
            files_changed: vec!["src/math.js".into()],
            tamper: None,
            extra: Default::default(),
        }
    }

    fn shell_step(status: StepStatus) -> StepRecord {
        StepRecord {
            id: Some("build".into()),
            status,
            started_at: Some(t("2026-01-01T00:00:00Z")),
            completed_at: (status != StepStatus::Running).then(|| t("2026-01-01T00:00:01Z")),
            exit_code: (status == StepStatus::Passed).then_some(0),
            duration_ms: 420,
            command_file: Some(format!("{DIR}/.process/step-01/command.txt")),
            output_file: Some(format!("{DIR}/.process/step-01/output.log")),
            ..StepRecord::new(1, StepKind::Shell, format!("{DIR}/.process/step-01"))
        }
    }

    fn test_step(phase: TestPhase, attempt: u32, attempts: Vec<AttemptRecord>) -> StepRecord {
        let done = phase == TestPhase::Done;
        StepRecord {
            status: if done {
                StepStatus::Passed
            } else {
                StepStatus::Running
            },
            started_at: Some(t("2026-01-01T00:00:01Z")),
            completed_at: done.then(|| t("2026-01-01T00:00:11Z")),
            exit_code: done.then_some(0),
            phase: Some(phase),
            attempt,
            max_attempts: 3,
            initial: Some(test_run(1, 2, "tap", "initial")),
            attempts,
            ..StepRecord::new(2, StepKind::Test, format!("{DIR}/.process/step-02"))
        }
    }

    fn attempt(
        k: u32,
        debug_rec: Option<DebugRecord>,
        test: Option<TestRunRecord>,
    ) -> AttemptRecord {
        AttemptRecord {
            outcome: test.as_ref().map(|r| {
                if r.passed {
                    AttemptOutcome::Passed
                } else {
                    AttemptOutcome::Failed
                }
            }),
            debug: debug_rec,
            test,
            ..AttemptRecord::new(k, format!("{DIR}/.process/step-02/attempt-{k}"))
        }
    }

    fn workflow() -> Workflow {
        crate::workflow::model::parse(
            "name: x\ncommands:\n  - shell: make\n    id: build\n  - test:\n      command: npm test\n      on_failure:\n        shell: fix-one ${test.attempt}\n        max_attempts: 3\n",
        )
        .unwrap()
    }

    fn data(status: RunStatus, current: usize, steps: Vec<StepRecord>) -> RunData {
        let mut results = BTreeMap::new();
        results.insert(
            format!("{DIR}/.process/step-02/initial/test-results.json"),
            results_of(7, 2, 1),
        );
        results.insert(
            format!("{DIR}/.process/step-02/attempt-1/test-results.json"),
            results_of(8, 1, 1),
        );
        let mut commands = BTreeMap::new();
        commands.insert(
            format!("{DIR}/.process/step-01/command.txt"),
            "make all\n".to_string(),
        );
        commands.insert(
            format!("{DIR}/.process/step-02/attempt-1/debug-command.txt"),
            "fix-one 1".to_string(),
        );
        RunData {
            state: Some(RunState {
                session_id: "WFS-run-x".into(),
                workflow_name: "x".into(),
                workflow_file: "wf.yml".into(),
                status,
                current_step: current,
                started_at: t("2026-01-01T00:00:00Z"),
                updated_at: t("2026-01-01T00:00:11Z"),
                completed_at: (!status.is_unfinished()).then(|| t("2026-01-01T00:00:12Z")),
                stop_reason: match status {
                    RunStatus::Paused => Some("interrupted".into()),
                    RunStatus::Failed => {
                        Some("step 1 \"build\" (shell) failed: `make` exit 2".into())
                    }
                    _ => None,
                },
                vars: BTreeMap::new(),
                outputs: BTreeMap::new(),
                cost_usd: 0.0,
                steps,
                extra: Default::default(),
            }),
            workflow: Some(workflow()),
            results,
            commands,
        }
    }

    fn results_of(p: u32, f: u32, s: u32) -> TestResults {
        results(p, f, s, "tap")
    }

    fn section(d: &RunData, loc: Location) -> RunSection {
        build(d, loc, DIR, &link)
    }

    #[test]
    fn bounded_commands() {
        assert_eq!(bounded("make\n"), ("make".to_string(), false));
        let long = "é".repeat(MAX_COMMAND_CHARS + 5);
        let (cut, truncated) = bounded(&long);
        assert!(truncated);
        assert_eq!(cut.chars().count(), MAX_COMMAND_CHARS + 1);
        assert!(cut.ends_with('…'));
        let exact = "x".repeat(MAX_COMMAND_CHARS);
        assert_eq!(bounded(&exact), (exact.clone(), false));
    }

    #[test]
    fn test_results_parsed_or_by_exit_code() {
        let r = test_run(1, 2, "tap", "initial");
        // (results, want result text, want counts, want pass rate, failing listed)
        type Case = (
            Option<TestResults>,
            &'static str,
            Option<(u32, u32, u32, u32)>,
            Option<f64>,
            usize,
        );
        let cases: Vec<Case> = vec![
            (
                Some(results(7, 2, 1, "tap")),
                "exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)",
                Some((10, 7, 2, 1)),
                Some(77.7),
                2,
            ),
            (
                Some(results(3, 1, 0, "junit")),
                "exit 1 · 3 passed, 1 failed of 4 (75.0%)",
                Some((4, 3, 1, 0)),
                Some(75.0),
                1,
            ),
            (
                Some(results(0, 1, 0, "exit-code")),
                "exit 1 (output not parsed)",
                None,
                None,
                0,
            ),
            (None, "exit 1 (output not parsed)", None, None, 0),
        ];
        for (res, want, counts, rate, listed) in cases {
            let v = test_view(&r, res.as_ref(), &link);
            assert_eq!(v.result, want);
            assert_eq!(
                v.counts.map(|c| (c.total, c.passed, c.failed, c.skipped)),
                counts,
                "{want}"
            );
            assert_eq!(v.pass_rate, rate, "{want}");
            assert_eq!(v.failing_tests.len(), listed, "{want}");
        }
        let mut timed_out = test_run(1, 2, "exit-code", "initial");
        timed_out.timed_out = true;
        timed_out.exit_code = None;
        assert_eq!(
            test_view(&timed_out, None, &link).result,
            "timed out (output not parsed)"
        );
        let many = results(0, 25, 0, "junit");
        let v = test_view(&r, Some(&many), &link);
        assert_eq!(
            (v.failing_tests.len(), v.failing_omitted),
            (MAX_FAILING_LISTED, 5)
        );
    }

    #[test]
    fn completed_run_rows_attempts_and_chart() {
        let d = data(
            RunStatus::Completed,
            3,
            vec![
                shell_step(StepStatus::Passed),
                test_step(
                    TestPhase::Done,
                    1,
                    vec![attempt(
                        1,
                        Some(debug(0, true, None)),
                        Some(test_run(0, 0, "tap", "attempt-1")),
                    )],
                ),
            ],
        );
        let mut d = d;
        d.results.insert(
            format!("{DIR}/.process/step-02/attempt-1/test-results.json"),
            results_of(9, 0, 1),
        );
        let s = section(&d, Location::Active);
        assert_eq!(s.status, "completed");
        assert!(!s.unfinished);
        assert_eq!(
            (s.current_step, s.current_attempt, s.position.as_deref()),
            (None, None, None)
        );
        assert_eq!(s.resume_command, None);
        assert_eq!(s.duration, "12 s");

        let shell = &s.steps[0];
        assert_eq!(shell.label, "step 1 \"build\" (shell)");
        assert_eq!(
            (
                shell.kind.as_str(),
                shell.command.as_str(),
                shell.status.as_str()
            ),
            ("shell", "make all", "passed")
        );
        assert_eq!(
            (shell.exit_code, shell.duration.as_str()),
            (Some(0), "420 ms")
        );
        assert!(!shell.chart);

        let test = &s.steps[1];
        assert_eq!(
            (test.kind.as_str(), test.command.as_str()),
            ("test", "npm test")
        );
        assert_eq!(test.duration, "10 s");
        assert_eq!((test.debug_attempts, test.max_attempts), (1, 3));
        assert_eq!(
            test.summary.as_deref(),
            Some("passed after 1 debug attempt (of at most 3)")
        );
        assert_eq!(
            test.on_failure
                .as_ref()
                .map(|f| (f.kind.as_str(), f.command.as_str())),
            Some(("shell", "fix-one ${test.attempt}"))
        );
        assert_eq!(test.attempts.len(), 2);
        let a0 = &test.attempts[0];
        assert_eq!((a0.attempt, a0.label.as_str()), (0, "initial run"));
        assert!(a0.debug.is_none());
        assert_eq!(
            a0.test.as_ref().unwrap().result,
            "exit 1 · 7 passed, 2 failed, 1 skipped of 10 (77.7%)"
        );
        let a1 = &test.attempts[1];
        let dbg = a1.debug.as_ref().unwrap();
        assert_eq!(
            (dbg.kind.as_str(), dbg.command.as_str(), dbg.result.as_str()),
            ("shell", "fix-one 1", "exit 0")
        );
        assert_eq!(
            dbg.output_file.path,
            format!("{DIR}/.process/step-02/attempt-1/debug-output.log")
        );
        assert_eq!(a1.outcome.as_deref(), Some("passed"));
        assert_eq!(
            a1.test.as_ref().unwrap().result,
            "exit 0 · 9 passed, 0 failed, 1 skipped of 10 (100.0%)"
        );
        assert_eq!(test.pass_rates, [77.7, 100.0]);
        assert_eq!(test.sparkline, "▄█");
        assert!(test.chart);
        let points = chart_runs(test);
        assert_eq!(
            points
                .iter()
                .map(|p| (p.iteration, p.pass_rate, p.result.clone().unwrap()))
                .collect::<Vec<_>>(),
            [
                (0, 77.7, "failed".to_string()),
                (1, 100.0, "passed".to_string())
            ]
        );

        let o = outcome(&s);
        assert_eq!(
            (o.kind.as_str(), o.title.as_str()),
            ("completed", "Completed")
        );
        assert_eq!(
            o.reason,
            "all 2 steps finished and every test step passed; step 2 (test) passed after 1 debug attempt"
        );
        let n = next_step("WFS-run-x", Location::Active, &s);
        assert_eq!(n.command.as_deref(), Some("wfx session complete WFS-run-x"));
    }

    #[test]
    fn where_an_unfinished_run_stands() {
        // (phase of step 2, attempt, its attempts, want attempt, phase, position)
        let debug_running = vec![attempt(1, Some(debug(0, false, None)), None)];
        let cases = vec![
            (
                TestPhase::InitialTest,
                0,
                vec![],
                Some(0),
                Some("initial_test"),
                "step 2 (test) (initial test run)",
            ),
            (
                TestPhase::Debug,
                1,
                debug_running.clone(),
                Some(1),
                Some("debug"),
                "step 2 (test), attempt 1 (debug command)",
            ),
            (
                TestPhase::Retest,
                1,
                vec![attempt(1, Some(debug(0, true, None)), None)],
                Some(1),
                Some("retest"),
                "step 2 (test), attempt 1 (test re-run)",
            ),
        ];
        for (phase, k, attempts, want_attempt, want_phase, want_pos) in cases {
            for status in [RunStatus::Running, RunStatus::Paused] {
                let d = data(
                    status,
                    2,
                    vec![
                        shell_step(StepStatus::Passed),
                        test_step(phase, k, attempts.clone()),
                    ],
                );
                let s = section(&d, Location::Active);
                assert!(s.unfinished);
                assert_eq!(s.current_step, Some(2), "{phase:?}");
                assert_eq!(s.current_attempt, want_attempt, "{phase:?}");
                assert_eq!(s.current_phase.as_deref(), want_phase, "{phase:?}");
                assert_eq!(s.position.as_deref(), Some(want_pos));
                assert!(s.steps[1].current && !s.steps[0].current);
                assert_eq!(s.steps[1].duration, "running");
                assert_eq!(s.resume_command.as_deref(), Some("wfx run wf.yml --resume"));
                let n = next_step("WFS-run-x", Location::Active, &s);
                assert_eq!(n.command.as_deref(), Some("wfx run wf.yml --resume"));
                assert_eq!(n.hint, Some(format!("continue at {want_pos}")));
                let o = outcome(&s);
                if status == RunStatus::Paused {
                    assert_eq!(o.kind, "paused");
                    assert_eq!(
                        o.reason,
                        format!("interrupted: stopped at {want_pos}; resumable")
                    );
                } else {
                    assert_eq!(o.kind, "in_progress");
                    assert!(
                        o.reason.starts_with(&format!("at {want_pos} (")),
                        "{}",
                        o.reason
                    );
                }
                // Archived: read-only, no command.
                let s = section(&d, Location::Archived);
                assert_eq!(s.resume_command, None);
                assert_eq!(next_step("WFS-run-x", Location::Archived, &s).command, None);
            }
        }
        let d = data(
            RunStatus::Running,
            2,
            vec![
                shell_step(StepStatus::Passed),
                test_step(TestPhase::Debug, 1, debug_running),
            ],
        );
        let s = section(&d, Location::Active);
        let dbg = s.steps[1].attempts[1].debug.as_ref().unwrap();
        assert_eq!(
            (dbg.result.as_str(), dbg.duration.as_str()),
            ("not finished", "")
        );
        assert!(s.steps[1].attempts[1].test.is_none());
    }

    #[test]
    fn failed_and_partial_runs() {
        let mut failed_shell = shell_step(StepStatus::Failed);
        failed_shell.exit_code = Some(2);
        failed_shell.reason = Some("`make all` exit 2".into());
        let mut pending = test_step(TestPhase::InitialTest, 0, vec![]);
        pending.status = StepStatus::Pending;
        pending.initial = None;
        pending.started_at = None;
        pending.phase = None;
        let d = data(RunStatus::Failed, 1, vec![failed_shell, pending]);
        let s = section(&d, Location::Active);
        assert_eq!(s.steps[0].reason.as_deref(), Some("`make all` exit 2"));
        assert_eq!(
            (
                s.steps[1].status.as_str(),
                s.steps[1].command.as_str(),
                s.steps[1].duration.as_str()
            ),
            ("pending", "npm test", "")
        );
        let o = outcome(&s);
        assert_eq!((o.kind.as_str(), o.title.as_str()), ("blocked", "Failed"));
        assert_eq!(o.reason, "step 1 \"build\" (shell) failed: `make` exit 2");
        let n = next_step("WFS-run-x", Location::Active, &s);
        assert_eq!(n.command.as_deref(), Some("wfx run wf.yml"));

        let mut never = test_step(TestPhase::Done, 3, vec![]);
        never.status = StepStatus::Failed;
        never.continued = true;
        let d = data(
            RunStatus::PartialSuccess,
            3,
            vec![shell_step(StepStatus::Passed), never],
        );
        let o = outcome(&section(&d, Location::Active));
        assert_eq!(o.kind, "partial_success");
        assert_eq!(
            o.reason,
            "every step finished, but step 2 (test) never passed (fail_workflow: false)"
        );
    }

    #[test]
    fn no_state_shows_the_workflow_as_written() {
        let d = RunData {
            state: None,
            workflow: Some(workflow()),
            ..RunData::default()
        };
        let s = section(&d, Location::Active);
        assert_eq!(s.status, "unknown");
        assert_eq!(s.workflow_name, "x");
        assert_eq!(
            s.steps
                .iter()
                .map(|st| (st.label.as_str(), st.command.as_str(), st.status.as_str()))
                .collect::<Vec<_>>(),
            [
                ("step 1 \"build\" (shell)", "make", "pending"),
                ("step 2 (test)", "npm test", "pending")
            ]
        );
        assert_eq!(outcome(&s).title, "No run state");
        assert_eq!(next_step("WFS-run-x", Location::Active, &s).command, None);
        let empty = section(&RunData::default(), Location::Active);
        assert!(empty.steps.is_empty());
    }

    #[test]
    fn labels_are_joined() {
        assert_eq!(join_labels(&[]), "a test step");
        assert_eq!(join_labels(&["a"]), "a");
        assert_eq!(join_labels(&["a", "b", "c"]), "a, b and c");
    }
}
