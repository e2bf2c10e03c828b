//! The pure decisions of `wfx run`: what a test step does after a test run,
//! how a step and the whole run end, and how they read. No I/O.

use crate::artifacts::run_state::{
    AttemptOutcome, RunStatus, StepKind, StepRecord, StepStatus, TestRunRecord,
};

use super::model::OnFailure;
use crate::duration;

/// What a test step does after a test run (or after an attempt that
/// counted as failed without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run debug attempt N (1-based).
    Debug(u32),
    /// The step is over; `passed` is whether its last test run passed.
    Done { passed: bool },
}

/// After `attempts_done` debug attempts, the last test run `passed` or not.
/// The loop starts only on a failure, stops on a pass when
/// `stop_on_success`, and never goes past `max_attempts`.
pub fn after_test_run(on_failure: Option<&OnFailure>, attempts_done: u32, passed: bool) -> Next {
    let Some(f) = on_failure else {
        return Next::Done { passed };
    };
    if passed && (attempts_done == 0 || f.stop_on_success) {
        return Next::Done { passed };
    }
    if attempts_done >= f.max_attempts {
        return Next::Done { passed };
    }
    Next::Debug(attempts_done + 1)
}

/// How a finished test step affects the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The tests never passed; the workflow goes on (`fail_workflow: false`).
    FailedContinue,
    /// The tests never passed and `fail_workflow: true`: the run fails.
    FailedWorkflow,
}

pub fn verdict(on_failure: Option<&OnFailure>, passed: bool) -> Verdict {
    if passed {
        Verdict::Passed
    } else if on_failure.is_some_and(|f| f.fail_workflow) {
        Verdict::FailedWorkflow
    } else {
        Verdict::FailedContinue
    }
}

/// The status of a run whose steps all finished (none stopped it).
pub fn final_status(steps: &[StepRecord]) -> RunStatus {
    if steps
        .iter()
        .any(|s| s.status == StepStatus::Failed && !s.continued)
    {
        RunStatus::Failed
    } else if steps.iter().any(|s| s.status != StepStatus::Passed) {
        RunStatus::PartialSuccess
    } else {
        RunStatus::Completed
    }
}

/// The most recent test run of a step: the re-run of the latest attempt
/// that had one, else the initial run.
pub fn last_run(step: &StepRecord) -> Option<&TestRunRecord> {
    step.attempts
        .iter()
        .rev()
        .find_map(|a| a.test.as_ref())
        .or(step.initial.as_ref())
}

/// The outcome of a finished test step in one phrase; a step whose tests
/// never passed is never worded as a success.
pub fn test_outcome(step: &StepRecord, on_failure: Option<&OnFailure>) -> String {
    let attempts = step.attempts.len() as u32;
    let max = on_failure.map_or(0, |f| f.max_attempts);
    let ever_passed = step.initial.as_ref().is_some_and(|r| r.passed)
        || step
            .attempts
            .iter()
            .any(|a| a.outcome == Some(AttemptOutcome::Passed));
    match step.status {
        StepStatus::Passed if attempts == 0 => "passed on the first run".into(),
        StepStatus::Passed => format!(
            "passed after {attempts} debug attempt{} (of at most {max})",
            if attempts == 1 { "" } else { "s" }
        ),
        StepStatus::Failed => {
            let what = if ever_passed {
                "the last test run failed".to_string()
            } else {
                "tests never passed".to_string()
            };
            let tail = if step.continued {
                "workflow continued (fail_workflow: false)"
            } else {
                "workflow failed (fail_workflow: true)"
            };
            if on_failure.is_none() {
                format!("FAILED: {what} (no on_failure) · {tail}")
            } else {
                format!("FAILED: {what} after {attempts}/{max} debug attempts · {tail}")
            }
        }
        StepStatus::Pending | StepStatus::Running => "not finished".into(),
    }
}

/// One line per step for the final summary.
pub fn summary_line(step: &StepRecord, label: &str, on_failure: Option<&OnFailure>) -> String {
    let outcome = match step.kind {
        StepKind::Test => test_outcome(step, on_failure),
        StepKind::Shell | StepKind::Claude => match step.status {
            StepStatus::Passed => match step.exit_code {
                Some(c) => format!("passed (exit {c}, {})", duration::millis(step.duration_ms)),
                None => format!("passed ({})", duration::millis(step.duration_ms)),
            },
            StepStatus::Failed => format!(
                "FAILED: {}",
                step.reason.as_deref().unwrap_or("the command failed")
            ),
            StepStatus::Pending => "not run".into(),
            StepStatus::Running => "interrupted".into(),
        },
    };
    format!("{label}: {outcome}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::run_state::AttemptRecord;
    use crate::workflow::model::{Exec, Text};
    use crate::workflow::yaml::Pos;

    fn f(max: u32, stop: bool, fail: bool) -> OnFailure {
        OnFailure {
            debug: Exec::Shell(Text {
                text: "fix".into(),
                pos: Pos::default(),
            }),
            max_attempts: max,
            stop_on_success: stop,
            fail_workflow: fail,
            commit_required: false,
            timeout: None,
            candidates: 1,
        }
    }

    #[test]
    fn loop_decisions() {
        use Next::*;
        let three = f(3, true, false);
        let keep_going = f(2, false, false);
        for (on_failure, done, passed, want) in [
            (None, 0, false, Done { passed: false }),
            (None, 0, true, Done { passed: true }),
            // First run passes: no debugging at all, whatever stop_on_success says.
            (Some(&three), 0, true, Done { passed: true }),
            (Some(&keep_going), 0, true, Done { passed: true }),
            // A failure starts the loop; each failed re-run goes on.
            (Some(&three), 0, false, Debug(1)),
            (Some(&three), 1, false, Debug(2)),
            (Some(&three), 2, false, Debug(3)),
            // Attempts run out.
            (Some(&three), 3, false, Done { passed: false }),
            // Stop on pass.
            (Some(&three), 1, true, Done { passed: true }),
            // stop_on_success: false runs every attempt; the last run decides.
            (Some(&keep_going), 1, true, Debug(2)),
            (Some(&keep_going), 2, true, Done { passed: true }),
            (Some(&keep_going), 2, false, Done { passed: false }),
        ] {
            assert_eq!(
                after_test_run(on_failure, done, passed),
                want,
                "{on_failure:?} after {done} passed={passed}"
            );
        }
    }

    #[test]
    fn verdicts_and_final_status() {
        assert_eq!(verdict(None, true), Verdict::Passed);
        assert_eq!(verdict(None, false), Verdict::FailedContinue);
        assert_eq!(
            verdict(Some(&f(3, true, true)), false),
            Verdict::FailedWorkflow
        );
        assert_eq!(
            verdict(Some(&f(3, true, false)), false),
            Verdict::FailedContinue
        );

        let rec = |status, continued| StepRecord {
            status,
            max_attempts: 3,
            continued,
            ..StepRecord::new(1, StepKind::Test, String::new())
        };
        assert_eq!(
            final_status(&[rec(StepStatus::Passed, false)]),
            RunStatus::Completed
        );
        assert_eq!(
            final_status(&[
                rec(StepStatus::Passed, false),
                rec(StepStatus::Failed, true)
            ]),
            RunStatus::PartialSuccess
        );
        assert_eq!(
            final_status(&[
                rec(StepStatus::Failed, true),
                rec(StepStatus::Failed, false)
            ]),
            RunStatus::Failed
        );
    }

    fn run(exit: Option<i32>, failing: u32, ms: u64) -> TestRunRecord {
        TestRunRecord {
            started_at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            command: "npm test".into(),
            exit_code: exit,
            passed: exit == Some(0),
            timed_out: false,
            duration_ms: ms,
            total: 10,
            failing,
            parser: "tap".into(),
            output_file: "x.log".into(),
            results_file: "x.json".into(),
            extra: Default::default(),
        }
    }

    #[test]
    fn never_passed_is_never_a_success() {
        let on_failure = f(2, true, false);
        let attempt = |n, outcome| AttemptRecord {
            test: Some(run(Some(1), 1, 0)),
            outcome: Some(outcome),
            ..AttemptRecord::new(n, String::new())
        };
        let mut s = StepRecord {
            status: StepStatus::Failed,
            attempt: 2,
            max_attempts: 2,
            initial: Some(run(Some(1), 2, 0)),
            attempts: vec![
                attempt(1, AttemptOutcome::Failed),
                attempt(2, AttemptOutcome::NoChange),
            ],
            continued: true,
            ..StepRecord::new(2, StepKind::Test, String::new())
        };
        assert_eq!(
            summary_line(&s, "step 2 (test)", Some(&on_failure)),
            "step 2 (test): FAILED: tests never passed after 2/2 debug attempts · workflow continued (fail_workflow: false)"
        );
        s.continued = false;
        s.attempts.pop();
        s.status = StepStatus::Passed;
        s.continued = false;
        assert_eq!(
            test_outcome(&s, Some(&on_failure)),
            "passed after 1 debug attempt (of at most 2)"
        );
        s.attempts.clear();
        s.initial = Some(run(Some(0), 0, 0));
        assert_eq!(
            test_outcome(&s, Some(&on_failure)),
            "passed on the first run"
        );
    }
}
