//! The human line of every event, snapshot-tested: a new event fails
//! [`every_event_has_a_sample`] until it has a sample here, and then shows
//! its line in the snapshot.

use std::collections::BTreeSet;

use super::{line, plain};
use crate::artifacts::fix_history::{CandidateVerdict, TestEdit, TestEditKind};
use crate::artifacts::iteration_state::{CommitPurpose, IterationResult, Strategy, Tier};
use crate::artifacts::session::{InputMode, PhaseStatus, SessionStatus};
use crate::artifacts::task::{AnalysisQuality, TaskStatus};
use crate::artifacts::test_results::Scope;
use crate::engine::event::*;
use crate::engine::step::PauseReason;
use crate::ui::Style;

const ID: &str = "WFS-test-the-calculator";

fn start(front_end: FrontEnd, resumed: bool) -> Event {
    let cycle = front_end == FrontEnd::Cycle;
    Event::Start(Box::new(Start {
        session_id: ID.into(),
        front_end,
        resumed,
        at: if cycle {
            "execute_fix"
        } else {
            "step 2 (test), attempt 1"
        }
        .into(),
        next_action: cycle.then(|| "execute_fix".into()),
        test_command: cycle.then(|| "npm test".into()),
        fix_agent: cycle.then(|| "claude".into()),
        analysis: None,
        max_iterations: cycle.then_some(10),
        commits: !resumed,
        workflow: (!cycle).then(|| "ci.yml".into()),
        steps: (!cycle).then_some(3),
    }))
}

fn run_event(result: Option<IterationResult>, skipped: u32, notes: &[&str]) -> RunEvent {
    RunEvent {
        iteration: 2,
        run: 3,
        scope: Scope::Affected,
        pass_rate: 88.9,
        previous_pass_rate: Some(77.7),
        change: Some(100.0 / 9.0),
        total: 9 + skipped,
        passed: 8,
        failed: 1,
        skipped,
        new_failures: Vec::new(),
        result,
        duration_ms: 800,
        command: "npm test".into(),
        label: "4 affected test(s)".into(),
        notes: notes.iter().map(|n| n.to_string()).collect(),
        sealed_commit: result.map(|_| "0123456789abcdef".into()),
    }
}

fn fix_event(by_hand: bool, error: Option<&str>) -> FixEvent {
    FixEvent {
        iteration: 2,
        agent: if by_hand { "manual" } else { "claude" }.into(),
        strategy: Some(Strategy::Conservative),
        duration_ms: 1500,
        exit_code: Some(if error.is_some() { 1 } else { 0 }),
        timed_out: false,
        cost_usd: (!by_hand).then_some(0.123),
        files_changed: vec!["src/math.js".into()],
        test_edits: Vec::new(),
        pass_rate_before: Some(50.0),
        earlier_pass_rate: Some(40.0),
        change: None,
        failing: 3,
        error: error.map(str::to_string),
        by_hand,
    }
}

fn edit() -> TestEdit {
    TestEdit {
        kind: TestEditKind::SkipAdded,
        file: "test/math.test.js".into(),
        detail: "test.skip added".into(),
    }
}

/// The events of the fix loop.
fn fix_loop() -> Vec<Event> {
    vec![
        Event::Task {
            task: "IMPL-001".into(),
            status: TaskStatus::Skipped,
            reason: "tests exist".into(),
            line: "IMPL-001 · skipped: tests exist".into(),
        },
        Event::Run(run_event(None, 0, &[])),
        Event::Run(run_event(Some(IterationResult::Success), 1, &["a note"])),
        Event::Run(run_event(Some(IterationResult::Regression), 0, &[])),
        Event::Run(RunEvent {
            total: 0,
            passed: 0,
            ..run_event(Some(IterationResult::Error), 0, &[])
        }),
        Event::Flaky {
            iteration: 1,
            tests: vec!["a".into(), "b".into()],
        },
        Event::Stuck {
            iteration: 4,
            tests: vec!["test_max".into()],
            after: 3,
        },
        Event::Analysis(AnalysisEvent {
            iteration: 1,
            strategy: Strategy::Surgical,
            tool: "built-in".into(),
            quality: AnalysisQuality::Degraded,
            tried: vec![TriedEvent {
                tool: "gemini".into(),
                reason: "not installed".into(),
            }],
            modification_points: 2,
            confidence: 0.8,
            analysis_file: ".process/iteration-1-analysis.md".into(),
            fix_task: ".task/IMPL-fix-1.json".into(),
        }),
        Event::Fix(fix_event(false, None)),
        Event::Fix(fix_event(false, Some("exit 1"))),
        Event::Fix(fix_event(true, None)),
        Event::TestEdits {
            iteration: 2,
            rejected: Some("a skip marker was added".into()),
            test_edits: vec![edit()],
        },
        Event::TestEdits {
            iteration: 2,
            rejected: None,
            test_edits: vec![edit()],
        },
        Event::Commit {
            commit: "0123456789abcdef".into(),
            message: "test-cycle: iteration 1 - conservative strategy".into(),
            iteration: 1,
            kind: CommitPurpose::Fix,
        },
        Event::Undone {
            iteration: 3,
            files: vec!["src/math.js".into()],
            reason: "the call failed".into(),
        },
        Event::Rollback {
            iteration: 2,
            commit: Some("fedcba9876543210".into()),
            message: "regression: 2 new failure(s)".into(),
        },
        Event::Rollback {
            iteration: 2,
            commit: None,
            message: "no progress".into(),
        },
        Event::Complete {
            session_id: ID.into(),
            status: SessionStatus::Completed,
            pass_rate: 100.0,
        },
        Event::Complete {
            session_id: ID.into(),
            status: SessionStatus::PartialSuccess,
            pass_rate: 96.0,
        },
    ]
}

/// The events of `wfx run`'s steps.
fn workflow() -> Vec<Event> {
    let test_run = |attempt, passed| {
        Event::TestRun(TestRunEvent {
            step: 2,
            attempt,
            max_attempts: 3,
            exit_code: Some(if passed { 0 } else { 1 }),
            timed_out: false,
            failing: if passed { 0 } else { 2 },
            passed,
            duration_ms: 1200,
        })
    };
    let step = |reason: Option<&str>| {
        Event::Step(StepEvent {
            step: 1,
            label: "step 1 (shell: npm ci)".into(),
            passed: reason.is_none(),
            exit_code: Some(if reason.is_none() { 0 } else { 1 }),
            duration_ms: 2500,
            reason: reason.map(str::to_string),
        })
    };
    vec![
        step(None),
        step(Some("exit 1")),
        test_run(0, false),
        test_run(1, true),
        Event::Attempt(AttemptEvent {
            step: 2,
            attempt: 1,
            max_attempts: 3,
            before_exit_code: None,
            before_timed_out: true,
            before_failing: 2,
            debugger: "claude".into(),
            duration_ms: 4000,
            note: Some("the debug command failed".into()),
        }),
        Event::TestStep {
            step: 2,
            passed: true,
            outcome: "passed after 1 attempt(s)".into(),
        },
    ]
}

fn who(candidate: u32, step: Option<usize>) -> CandidateEvent {
    CandidateEvent {
        iteration: 1,
        step,
        candidate,
        of: 3,
        agent: "codex".into(),
        strategy: Some(Strategy::Aggressive),
    }
}

fn finished(candidate: u32, not_started: Option<&str>, error: Option<&str>) -> Event {
    Event::CandidateFinished(Box::new(CandidateFinished {
        who: who(candidate, None),
        duration_ms: 2100,
        exit_code: Some(0),
        timed_out: false,
        cost_usd: Some(0.03),
        files_changed: vec!["src/math.js".into()],
        diff_lines: 4,
        tiers: vec![
            CandidateTierEvent {
                tier: Tier::Failed,
                total: 2,
                passed: 2,
            },
            CandidateTierEvent {
                tier: Tier::Affected,
                total: 6,
                passed: 5,
            },
        ],
        fixed: Some(2),
        error: error.map(str::to_string),
        not_started: not_started.map(str::to_string),
    }))
}

/// The events of speculative candidates.
fn candidates() -> Vec<Event> {
    let verdicts = vec![
        CandidateVerdictEvent {
            candidate: 1,
            agent: "codex".into(),
            strategy: Some(Strategy::Aggressive),
            verdict: CandidateVerdict::Chosen,
        },
        CandidateVerdictEvent {
            candidate: 2,
            agent: "claude".into(),
            strategy: None,
            verdict: CandidateVerdict::Regression,
        },
    ];
    let chosen = |candidate: Option<u32>, step| {
        Event::CandidateChosen(Box::new(CandidateChosen {
            iteration: 1,
            step,
            of: 2,
            candidate,
            agent: candidate.map(|_| "codex".into()),
            strategy: candidate.map(|_| Strategy::Aggressive),
            reason: "fixes 2, the most".into(),
            verdicts: verdicts.clone(),
        }))
    };
    vec![
        Event::CandidateStarted(who(1, None)),
        Event::CandidateStarted(who(2, Some(3))),
        finished(1, None, None),
        finished(2, None, Some("exit 2")),
        finished(3, Some("the cost cap is reached"), None),
        chosen(Some(1), None),
        chosen(None, Some(3)),
    ]
}

/// The events about a run as a whole, and planning.
fn session() -> Vec<Event> {
    let phase = |phase: u8, title: &str, mode| {
        Event::PhaseStarted(PhaseEvent {
            session_id: ID.into(),
            phase,
            title: title.into(),
            mode,
        })
    };
    let resumed = |phase: Option<u8>| {
        Event::PhasesResumed(PhasesResumed {
            session_id: ID.into(),
            phase,
            title: phase.map(|_| "analysis".into()),
        })
    };
    vec![
        start(FrontEnd::Cycle, false),
        start(FrontEnd::Cycle, true),
        start(FrontEnd::Run, false),
        start(FrontEnd::Run, true),
        Event::StaleProcesses { pgid: 4242 },
        Event::StaleGitLock {
            file: ".git/index.lock".into(),
        },
        Event::NoGit,
        Event::Worktree {
            worktree: "../calc-wfx".into(),
            branch: "wfx/WFS-test".into(),
        },
        Event::warning("the coverage report is 3 days old"),
        resumed(Some(3)),
        resumed(None),
        phase(1, "session start", Some(InputMode::Prompt)),
        phase(2, "context gather", None),
        Event::PhaseFinished(PhaseFinished {
            session_id: ID.into(),
            phase: 2,
            title: "context gather".into(),
            status: PhaseStatus::Completed,
            duration_ms: 120,
        }),
        Event::Planned(Box::new(planned())),
        Event::Watching { enter: true },
        Event::Watching { enter: false },
        Event::Woken {
            by: WakeCause::Enter,
            files: Vec::new(),
        },
        Event::Woken {
            by: WakeCause::Files,
            files: vec!["src/math.js".into()],
        },
        Event::Paused {
            reason: PauseReason::NoTests,
            message: "no tests found".into(),
            resume_command: format!("wfx test-cycle-execute --resume-session={ID}"),
        },
        Event::Blocked {
            reason: "3 fix attempts without progress".into(),
        },
        Event::Done(Box::default()),
    ]
}

fn planned() -> Planned {
    let rel = |f: &str| format!(".workflow/active/{ID}/{f}");
    Planned {
        session_id: ID.into(),
        resumed: false,
        phases_run: vec![1, 2, 3, 4],
        mode: "prompt".into(),
        input: "Test the calculator".into(),
        tasks: vec![PlannedTask {
            id: "IMPL-002".into(),
            title: "Fix the failing tests".into(),
            agent: Some("claude".into()),
        }],
        thresholds: Thresholds {
            code_validation: GateThresholds {
                critical: 0,
                error: 0,
                warning: 20,
            },
            coverage: CoverageTargets {
                line: 80.0,
                branch: 70.0,
                function: 80.0,
            },
            pass_threshold: 95.0,
            max_iterations: 10,
        },
        artifacts: PlanArtifacts {
            session_dir: rel(""),
            workflow_session: rel("workflow-session.json"),
            impl_plan: rel("IMPL_PLAN.md"),
            todo_list: rel("TODO_LIST.md"),
            planning_notes: rel("planning-notes.md"),
            analysis: rel(".process/TEST_ANALYSIS_RESULTS.md"),
            context_package: rel(".process/context-package.json"),
            task_dir: rel(".task"),
            summaries_dir: rel(".summaries"),
        },
        next_command: format!("wfx test-cycle-execute --resume-session={ID}"),
    }
}

/// One or more of every event, in the order of the enum's areas.
pub(crate) fn samples() -> Vec<Event> {
    [session(), fix_loop(), workflow(), candidates()].concat()
}

/// A paint that shows where colour goes: `<bold>77.7%</bold>`.
fn tagged(style: Style, text: &str) -> String {
    let tag = format!("{style:?}").to_lowercase();
    format!("<{tag}>{text}</{tag}>")
}

#[test]
fn every_event_has_a_sample() {
    let have: BTreeSet<String> = samples().iter().map(|e| e.name().to_string()).collect();
    let all: BTreeSet<String> = crate::engine::event::schema_event_names()
        .into_iter()
        .collect();
    let missing: Vec<&String> = all.difference(&have).collect();
    assert!(missing.is_empty(), "events without a sample: {missing:?}");
    assert_eq!(have, all);
    for e in samples() {
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["event"], e.name(), "{v}");
    }
}

/// The line people read of every sample: plain, then with its colours
/// where it has any. `-` marks an event without a line.
#[test]
fn the_human_line_of_every_event() {
    let mut out = String::new();
    for e in samples() {
        let text = line(&e, &plain);
        out.push_str(&format!(
            "{:<18} {}\n",
            e.name(),
            text.as_deref().unwrap_or("-")
        ));
        let styled = line(&e, &tagged);
        if styled != text {
            out.push_str(&format!("{:<18} {}\n", "", styled.unwrap_or_default()));
        }
    }
    insta::assert_snapshot!(out);
}

/// A run's line: the change from the counts, and the skipped tests
/// named, since the rate leaves them out (7 of 9 of a suite of 10).
#[test]
fn a_run_line_names_what_the_rate_leaves_out() {
    let run_line = |skipped: u32| {
        line(
            &Event::Run(RunEvent {
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
            }),
            &plain,
        )
        .unwrap()
    };
    assert_eq!(
        run_line(0),
        "Iteration 3 · 100.0% (+22.2) · 0 failing · full suite 1.2 s"
    );
    assert_eq!(
        run_line(1),
        "Iteration 3 · 100.0% (+22.2) · 0 failing · 1 skipped (left out of the rate) · full suite 1.2 s"
    );
}

/// The fix line names the strategy of an agent's fix, never of a
/// person's (#20 item 9).
#[test]
fn a_fix_by_hand_names_no_strategy() {
    let fix = |by_hand: bool| {
        line(
            &Event::Fix(FixEvent {
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
            }),
            &plain,
        )
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
