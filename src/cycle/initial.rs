//! The initial tasks of phase 5 (DESIGN.md §5.7) as part of the machine:
//! IMPL-001 test generation, IMPL-001.3 code validation (L0 + AI issues, a
//! gate) and IMPL-001.5 test quality review (coverage + anti-patterns,
//! reported). `next` names the effect a task needs, `observe` records what
//! it found; after the last one the generated tests are committed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::LOOP_TASK;
use super::gates::{self, GateVerdict, Severity};
use super::machine::CycleMachine;
use super::state::{CycleState, Doc};
use crate::agents::{self, CallFiles, Role};
use crate::artifacts::fix_history::CallOutcome;
use crate::artifacts::iteration_state::{
    Action, CommitPurpose, LoopStatus, PendingCommit, Strategy,
};
use crate::artifacts::task::{TaskResult, TaskStatus, TaskType};
use crate::artifacts::task_record::{CoverageGate, CoverageSource, Finding};
use crate::duration;
use crate::engine::Event;
use crate::engine::step::{
    AgentCallDone, AgentRequest, Before, Effect, Observed, PauseReason, ReviewRequest, Reviewed,
    Snapshot, Step, Text, ValidateRequest, Validated,
};

/// Files IMPL-001 created or changed (its `result.files_modified`).
fn generated_files(s: &CycleState) -> Vec<String> {
    s.tasks
        .iter()
        .find(|(_, t)| t.meta.kind == TaskType::TestGen)
        .and_then(|(_, t)| t.result.as_ref())
        .map(|r| r.files_modified.clone())
        .unwrap_or_default()
}

fn current(s: &CycleState) -> String {
    s.iter.current_task.clone().unwrap_or_default()
}

fn is_done(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::Failed
    )
}

/// The effect the current initial task needs.
pub fn next(m: &CycleMachine, s: &CycleState) -> Step {
    let id = current(s);
    let Some(task) = s.task(&id) else {
        return Step::Do(Effect::Update);
    };
    if is_done(task.status) {
        // Every initial task is done: commit what IMPL-001 generated.
        return match (&s.iter.tasks_snapshot, m.repo) {
            (Some(tree), true) if s.iter.queue.is_empty() => Step::Do(Effect::Inspect(
                Snapshot {
                    tree: Some(tree.clone()),
                    head: None,
                },
                None,
            )),
            _ => Step::Do(Effect::Update),
        };
    }
    match task.meta.kind {
        TaskType::TestGen => next_test_gen(m, s, &id),
        TaskType::CodeValidation if s.validation_fix_due => next_validation_fix(m, s, &id),
        TaskType::CodeValidation => Step::Do(Effect::Validate(ValidateRequest {
            root: m.root.clone(),
            commands: task
                .flow_control
                .implementation_approach
                .iter()
                .filter_map(|step| step.command.clone().map(|c| (step.step.clone(), c)))
                .collect(),
            log: m.paths(s).process_dir().join(format!("{id}-l0.log")),
            timeout: Duration::from_secs(m.config.test.timeout_s),
            files: generated_files(s),
            since: s.iter.tasks_snapshot.clone(),
        })),
        TaskType::TestQualityReview => {
            let command = m
                .config
                .test
                .coverage_command
                .clone()
                .or_else(|| task.flow_control.test_commands.run_coverage.clone());
            Step::Do(Effect::Review(ReviewRequest {
                root: m.root.clone(),
                spinner: format!(
                    "{id} · running `{}`",
                    command.as_deref().unwrap_or_default()
                ),
                coverage_command: command,
                log: m.paths(s).process_dir().join(format!("{id}-coverage.log")),
                timeout: Duration::from_secs(m.config.test.timeout_s),
                test_files: generated_files(s)
                    .into_iter()
                    .filter(|f| crate::project::is_test_path(f))
                    .collect(),
            }))
        }
        _ => Step::Do(Effect::Update),
    }
}

fn next_test_gen(m: &CycleMachine, s: &CycleState, id: &str) -> Step {
    let Some(agent) = &m.test_gen_agent else {
        return Step::Do(Effect::Update);
    };
    if s.iter.tasks_snapshot.is_none() && m.repo {
        return Step::Do(Effect::Snapshot);
    }
    let paths = m.paths(s);
    let Some(task) = s.task(id) else {
        return Step::Do(Effect::Update);
    };
    let spec = paths.new_task_file(id);
    let spec = s
        .tasks
        .iter()
        .find(|(_, t)| t.id == id)
        .map_or(spec, |(p, _)| p.clone());
    let analysis_path = paths.analysis_results();
    let prompt = agents::prompts::test_gen(
        &m.renderer,
        &agents::prompts::TestGenPrompt {
            session_id: &m.id,
            task,
            task_path: &m.agent_rel(&spec),
            analysis_text: &m.analysis_text,
            analysis_path: &m.agent_rel(&analysis_path),
            test_framework: m.detected.as_ref().map(|d| d.framework.as_str()),
            test_command: m.detected.as_ref().map(|d| d.command.as_str()),
        },
    );
    let prompt = match prompt {
        Ok(p) => p,
        Err(e) => return Step::Do(Effect::Block(format!("cannot write the {id} prompt: {e}"))),
    };
    Step::Do(Effect::Agent(AgentRequest {
        agent: agent.clone(),
        role: Role::TestGen,
        prompt: Text::plain(prompt, m.vars(s, 1, &spec, None)),
        files: CallFiles::task(&paths, id),
        cwd: m.root.clone(),
        env: Vec::new(),
        spinner: format!("{id} · test generation by {}", agent.name),
        doing: "generating tests".into(),
        inspect: s.iter.tasks_snapshot.clone().map(|tree| {
            Before::Recorded(Snapshot {
                tree: Some(tree),
                head: None,
            })
        }),
        versions_of: None,
        outputs: Vec::new(),
    }))
}

fn next_validation_fix(m: &CycleMachine, s: &CycleState, id: &str) -> Step {
    let Some(agent) = &m.fix_agent else {
        return Step::Do(Effect::Pause(PauseReason::ManualFix { unchanged: false }));
    };
    let Some(task) = s.task(id) else {
        return Step::Do(Effect::Update);
    };
    let attempts = task.meta.record.fix_attempts.unwrap_or(0);
    let findings = task.meta.record.findings.clone().unwrap_or_default();
    let mut fix_task = task.clone();
    fix_task.context.requirements = findings.iter().map(ToString::to_string).collect();
    fix_task.context.fix_strategy = None;
    let paths = m.paths(s);
    let spec = s
        .tasks
        .iter()
        .find(|(_, t)| t.id == id)
        .map_or_else(|| paths.new_task_file(id), |(p, _)| p.clone());
    let command = m.detected.as_ref().map(|d| d.command.clone());
    let prompt = match agents::prompts::fix(
        &m.renderer,
        &agents::prompts::FixPrompt {
            session_id: &m.id,
            task: &fix_task,
            task_path: &m.agent_rel(&spec),
            strategy: Strategy::Conservative,
            test_command: command.as_deref(),
            failures: &[],
            test_edits: &m.config.cycle.test_edits,
        },
    ) {
        Ok(p) => p,
        Err(e) => {
            return Step::Do(Effect::Block(format!(
                "cannot write the {id} fix prompt: {e}"
            )));
        }
    };
    Step::Do(Effect::Agent(AgentRequest {
        agent: agent.clone(),
        role: Role::Fix,
        prompt: Text::plain(prompt, m.vars(s, attempts, &spec, None)),
        files: CallFiles::task(&paths, &format!("{id}-fix-{attempts}")),
        cwd: m.root.clone(),
        env: Vec::new(),
        spinner: format!("{id} · fix by {}", agent.name),
        doing: format!("fixing {id}"),
        inspect: None,
        versions_of: None,
        outputs: Vec::new(),
    }))
}

/// Record what the current initial task's effect found.
pub fn observe(m: &CycleMachine, s: &mut CycleState, what: Observed, out: &mut Vec<Event>) {
    let id = current(s);
    let Some(task) = s.task(&id).cloned() else {
        advance(m, s);
        return;
    };
    if is_done(task.status) {
        after_done(m, s, what);
        return;
    }
    match (task.meta.kind, what) {
        (TaskType::TestGen, Observed::Updated) => {
            let reason =
                "no test_gen agent configured (agents.test_gen); the existing tests are used";
            set_summary(s, &id, format!("Skipped: {reason}."));
            finish(
                s,
                &id,
                TaskStatus::Skipped,
                reason,
                format!("{id} skipped: {reason}"),
                out,
            );
            advance(m, s);
        }
        (TaskType::TestGen, Observed::Snapshot(snap)) => {
            s.iter.tasks_snapshot = snap.tree;
            let agent = m.test_gen_agent.as_ref().map_or("?", |a| a.name.as_str());
            s.set_task_status(
                &id,
                TaskStatus::InProgress,
                &format!("test generation by {agent}"),
            );
            s.touch(Doc::State);
        }
        (TaskType::TestGen, Observed::Agent(done)) => test_gen_done(m, s, &id, *done, out),
        (TaskType::CodeValidation, Observed::Validated(v)) => validated(m, s, &id, *v, out),
        (TaskType::CodeValidation, Observed::Agent(done)) => {
            let attempt = s
                .task(&id)
                .and_then(|t| t.meta.record.fix_attempts)
                .unwrap_or(0);
            let call = done.call;
            let outcome = if call.failed() {
                CallOutcome::Failed
            } else {
                CallOutcome::Completed
            };
            let mut record = call.to_artifact(None, Some(&id), outcome);
            m.fix_call_paths(&mut record);
            s.history.agent_calls.push(record);
            s.touch(Doc::History);
            s.validation_fix_due = false;
            out.push(Event::Task {
                task: id.clone(),
                status: TaskStatus::InProgress,
                reason: "soft_fail".into(),
                line: format!(
                    "{id} soft fail: {} is fixing the findings (attempt {attempt})",
                    call.agent
                ),
            });
        }
        (TaskType::TestQualityReview, Observed::Reviewed(r)) => reviewed(m, s, &id, *r, out),
        (_, Observed::Updated) => {
            out.push(Event::warning(format!(
                "task {id} is not an initial task of phase 5; skipping it"
            )));
            advance(m, s);
        }
        _ => {}
    }
}

/// An observation for an initial task already done: the commit of what
/// IMPL-001 generated once it is inspected, then the loop.
fn after_done(m: &CycleMachine, s: &mut CycleState, what: Observed) {
    let inspected = matches!(what, Observed::Inspected(_));
    if let Observed::Inspected(insp) = what
        && !insp.commit_paths.is_empty()
    {
        s.iter.pending_commit = Some(PendingCommit {
            kind: CommitPurpose::Tests,
            iteration: 0,
            message: m.messages.message(
                &crate::git::Subject::Tests {
                    files: insp.commit_paths.len(),
                },
                &m.id,
                "",
            ),
            paths: insp.commit_paths,
            run: None,
            restore: None,
        });
    }
    if inspected {
        to_loop(s);
    } else {
        advance(m, s);
    }
}

/// The test generation agent returned: its call in the history, the files
/// it changed in the task's result.
fn test_gen_done(
    m: &CycleMachine,
    s: &mut CycleState,
    id: &str,
    done: AgentCallDone,
    out: &mut Vec<Event>,
) {
    let call = done.call;
    let outcome = if call.failed() {
        CallOutcome::Failed
    } else {
        CallOutcome::Completed
    };
    let mut record = call.to_artifact(None, Some(id), outcome);
    m.fix_call_paths(&mut record);
    s.history.agent_calls.retain(|c| {
        !(c.role == Role::TestGen && c.iteration.is_none() && c.task.as_deref() == Some(id))
    });
    s.history.agent_calls.push(record);
    s.touch(Doc::History);
    let changed = done
        .inspection
        .map(|i| i.files_changed())
        .unwrap_or_default();
    let took = duration::millis(call.duration_ms);
    let summary = if call.failed() {
        format!(
            "{} failed after {took} ({}); {} file(s) changed",
            call.agent,
            call.error_message.clone().unwrap_or_default(),
            changed.len()
        )
    } else {
        format!(
            "{} wrote tests in {took}; {} file(s) changed",
            call.agent,
            changed.len()
        )
    };
    let s2 = summary.clone();
    s.update_task(id, |t| {
        let r = t.result.get_or_insert_with(TaskResult::default);
        r.summary = s2;
        r.files_modified = changed;
    });
    let status = if call.failed() {
        TaskStatus::Failed
    } else {
        TaskStatus::Completed
    };
    finish(
        s,
        id,
        status,
        &summary,
        format!("{id} {status}: {summary}"),
        out,
    );
    advance(m, s);
}

/// The next initial task, or (once what IMPL-001 generated is inspected
/// for its commit) the loop.
fn advance(m: &CycleMachine, s: &mut CycleState) {
    s.touch(Doc::State);
    s.touch(Doc::Todo);
    if !s.iter.queue.is_empty() {
        let next = s.iter.queue.remove(0);
        s.iter.current_task = Some(next);
        return;
    }
    if s.iter.tasks_snapshot.is_some() && m.repo {
        // `next` inspects what IMPL-001 generated first.
        return;
    }
    to_loop(s);
}

fn to_loop(s: &mut CycleState) {
    s.touch(Doc::State);
    s.iter.current_task = Some(LOOP_TASK.to_string());
    s.iter.action = Action::RunTests;
    if s.iter.status == LoopStatus::AwaitingFix {
        s.iter.status = LoopStatus::Running;
    }
}

fn set_summary(s: &mut CycleState, id: &str, summary: String) {
    s.update_task(id, |t| {
        t.result.get_or_insert_with(TaskResult::default).summary = summary;
    });
}

fn finish(
    s: &mut CycleState,
    id: &str,
    status: TaskStatus,
    reason: &str,
    line: String,
    out: &mut Vec<Event>,
) {
    s.set_task_status(id, status, reason);
    s.touch(Doc::TaskSummary(id.to_string()));
    out.push(Event::Task {
        task: id.to_string(),
        status,
        reason: reason.to_string(),
        line,
    });
}

/// IMPL-001.3's verdict: pass → completed; soft fail → the fix agent (or
/// a person) gets the findings, at most `max_retries` times; hard fail or
/// retries spent → blocked with a report.
fn validated(m: &CycleMachine, s: &mut CycleState, id: &str, v: Validated, out: &mut Vec<Event>) {
    if v.checked.is_empty() {
        let reason = "IMPL-001 changed no files: nothing to validate";
        set_summary(s, id, format!("Skipped: {reason}."));
        finish(
            s,
            id,
            TaskStatus::Skipped,
            reason,
            format!("{id} skipped: {reason}"),
            out,
        );
        advance(m, s);
        return;
    }
    s.set_task_status(id, TaskStatus::InProgress, "validating IMPL-001's files");
    let limits = m.config.gates.code_validation.clone();
    let attempts = s
        .task(id)
        .and_then(|t| t.meta.record.fix_attempts)
        .unwrap_or(0);
    let mut findings: Vec<Finding> = v
        .commands
        .iter()
        .filter(|(_, _, end)| !end.success())
        .map(|(step, cmd, end)| {
            Finding::new(
                "l0",
                step,
                Severity::Error,
                "",
                None,
                format!("`{cmd}` failed ({}): {}", end.describe, end.last_line),
            )
        })
        .collect();
    let (gating, reported) =
        split_untouched(v.scanned, s.iter.tasks_snapshot.is_some(), &v.changed_lines);
    findings.extend(gating);
    let counts = gates::counts(&findings);
    let verdict = gates::code_validation_gate(&counts, &limits);
    let (summary, text) =
        validation_summary(v.checked.len(), &counts, verdict, &findings, &reported);
    let checked = v.checked.clone();
    let gating = findings.clone();
    s.update_task(id, |t| {
        let r = t.result.get_or_insert_with(TaskResult::default);
        r.summary = text;
        r.files_modified = Vec::new();
        t.meta.record.gate_verdict = Some(verdict);
        t.meta.record.findings = Some(gating);
        t.meta.record.reported_findings = Some(reported);
        t.meta.record.checked_files = Some(checked);
    });
    match verdict {
        GateVerdict::Pass => {
            finish(
                s,
                id,
                TaskStatus::Completed,
                &summary,
                format!("{id} passed: {summary}"),
                out,
            );
            advance(m, s);
        }
        GateVerdict::HardFail => {
            m.block(s, &format!("{id} code validation failed: {summary}"), out);
        }
        GateVerdict::SoftFail if attempts >= limits.max_retries => {
            m.block(
                s,
                &format!(
                    "{id} code validation still fails after {attempts} fix attempt(s): {summary}"
                ),
                out,
            );
        }
        GateVerdict::SoftFail => {
            s.update_task(id, |t| t.meta.record.fix_attempts = Some(attempts + 1));
            s.validation_fix_due = true;
            s.touch(Doc::State);
        }
    }
}

/// The one-line verdict of IMPL-001.3 and the task's result text (the line
/// and every finding, the untouched-code ones marked as not gating).
fn validation_summary(
    checked: usize,
    counts: &gates::Counts,
    verdict: GateVerdict,
    findings: &[Finding],
    reported: &[Finding],
) -> (String, String) {
    let summary = format!(
        "{checked} file(s) checked: {} critical, {} error(s), {} warning(s) → {}{}",
        counts.critical,
        counts.error,
        counts.warning,
        match verdict {
            GateVerdict::Pass => "pass",
            GateVerdict::SoftFail => "soft fail",
            GateVerdict::HardFail => "hard fail",
        },
        if reported.is_empty() {
            String::new()
        } else {
            format!(
                " ({} more on lines IMPL-001 did not change, reported only)",
                reported.len()
            )
        }
    );
    let mut lines: Vec<String> = findings.iter().map(ToString::to_string).collect();
    lines.extend(
        reported
            .iter()
            .map(|f| format!("{f} (untouched code, not gating)")),
    );
    let text = if lines.is_empty() {
        summary.clone()
    } else {
        format!("{summary}\n\n{}", lines.join("\n"))
    };
    (summary, text)
}

/// Split scan findings into those on lines IMPL-001 added or changed
/// (gating) and those on code it did not touch (reported only). Without a
/// snapshot every finding gates.
fn split_untouched(
    findings: Vec<Finding>,
    have_snapshot: bool,
    changed: &BTreeMap<String, Option<BTreeSet<u32>>>,
) -> (Vec<Finding>, Vec<Finding>) {
    if !have_snapshot {
        return (findings, Vec::new());
    }
    let (mut gating, mut reported) = (Vec::new(), Vec::new());
    for f in findings {
        let gates_it = match (changed.get(&f.file), f.line) {
            (None | Some(None), _) | (Some(Some(_)), None) => true,
            (Some(Some(lines)), Some(l)) => lines.contains(&l),
        };
        if gates_it {
            gating.push(f);
        } else {
            reported.push(f);
        }
    }
    (gating, reported)
}

/// The pause message of a manual soft fail of IMPL-001.3.
pub fn soft_fail_message(m: &CycleMachine, s: &CycleState) -> String {
    let id = current(s);
    let task = s.task(&id);
    let attempts = task.and_then(|t| t.meta.record.fix_attempts).unwrap_or(0);
    let findings = task
        .and_then(|t| t.meta.record.findings.clone())
        .unwrap_or_default();
    format!(
        "{id} found problems in the generated tests (soft fail, attempt {attempts} of {}):\n{}\n{}",
        m.config.gates.code_validation.max_retries,
        findings
            .iter()
            .map(|f| format!("  {f}"))
            .collect::<Vec<_>>()
            .join("\n"),
        m.then_continue("Fix them")
    )
}

/// What the coverage data misses when the coverage command failed: the
/// command, how it ended and its log.
fn failed_coverage_note(
    m: &CycleMachine,
    s: &CycleState,
    id: &str,
    end: &crate::engine::step::ProcessEnd,
) -> String {
    let log = m.rel(&m.paths(s).process_dir().join(format!("{id}-coverage.log")));
    let command = m
        .config
        .test
        .coverage_command
        .clone()
        .or_else(|| {
            s.task(id)
                .and_then(|t| t.flow_control.test_commands.run_coverage.clone())
        })
        .unwrap_or_default();
    format!("`{command}` {} (log: {log})", end.describe)
}

/// IMPL-001.5: coverage (the configured command, or a report on disk, else
/// unknown) against the targets, and the anti-pattern scan of the test
/// files IMPL-001 changed. Reported, not gating: the loop judges by tests.
fn reviewed(m: &CycleMachine, s: &mut CycleState, id: &str, r: Reviewed, out: &mut Vec<Event>) {
    s.set_task_status(
        id,
        TaskStatus::InProgress,
        "coverage and test anti-patterns",
    );
    let mut coverage = r.coverage;
    if let Some(end) = r.command.as_ref().filter(|e| !e.success()) {
        let note = failed_coverage_note(m, s, id, end);
        coverage.note = Some(match coverage.note {
            Some(n) => format!("{n}; {note}"),
            None => note,
        });
    }
    let findings = r.findings;
    let target = m.config.gates.coverage.clone();
    let shortfalls = gates::shortfalls(&coverage, &target);
    let counts = gates::counts(&findings);
    let gate = if coverage.source == CoverageSource::Unknown {
        CoverageGate::Unknown
    } else if shortfalls.is_empty() {
        CoverageGate::Met
    } else {
        CoverageGate::BelowTarget
    };
    let mut summary = format!(
        "Coverage: {} (target line {:.0}%, branch {:.0}%, function {:.0}%) → {}",
        gates::coverage_text(&coverage),
        target.line,
        target.branch,
        target.function,
        match gate {
            CoverageGate::Unknown => "unknown, not gating".to_string(),
            CoverageGate::Met => "met".to_string(),
            CoverageGate::BelowTarget => format!("below target: {}", shortfalls.join(", ")),
        }
    );
    if let Some(n) = &coverage.note {
        summary.push_str(&format!(" ({n})"));
    }
    summary.push_str(&format!(
        ". Test anti-patterns in {} changed test file(s): {} critical, {} error(s), {} warning(s).",
        r.scanned.len(),
        counts.critical,
        counts.error,
        counts.warning,
    ));
    let lines: Vec<String> = findings.iter().map(ToString::to_string).collect();
    let findings_total = findings.len();
    let text = if lines.is_empty() {
        summary.clone()
    } else {
        format!("{summary}\n\n{}", lines.join("\n"))
    };
    let cov = coverage.clone();
    s.update_task(id, |t| {
        t.result.get_or_insert_with(TaskResult::default).summary = text;
        t.meta.record.coverage = Some(cov);
        t.meta.record.coverage_gate = Some(gate);
        t.meta.record.findings = Some(findings);
    });
    if gate == CoverageGate::BelowTarget || counts.critical > 0 {
        out.push(Event::warning(format!("{id}: {summary}")));
    }
    // Critical anti-patterns in generated tests fail the review; the loop
    // still runs (it judges by the tests), and the TODO list shows it.
    let (status, line) = if counts.critical > 0 {
        (
            TaskStatus::Failed,
            format!(
                "{id} failed: {} critical test anti-pattern(s)",
                counts.critical
            ),
        )
    } else {
        (
            TaskStatus::Completed,
            format!(
                "{id} done: coverage {} · {} test anti-pattern(s)",
                match gate {
                    CoverageGate::Unknown => "unknown (not gating)".to_string(),
                    CoverageGate::Met => format!("{} (met)", gates::coverage_text(&coverage)),
                    CoverageGate::BelowTarget => {
                        format!("{} (below target)", gates::coverage_text(&coverage))
                    }
                },
                findings_total
            ),
        )
    };
    finish(s, id, status, &summary, line, out);
    advance(m, s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_on_untouched_lines_only_report() {
        let f = |file: &str, line: Option<u32>| {
            Finding::new("c", "k", Severity::Error, file, line, "m")
        };
        let mut changed = BTreeMap::new();
        changed.insert("a.py".to_string(), Some(BTreeSet::from([3])));
        changed.insert("new.py".to_string(), None);
        let (gating, reported) = split_untouched(
            vec![
                f("a.py", Some(3)),
                f("a.py", Some(9)),
                f("a.py", None),
                f("new.py", Some(1)),
            ],
            true,
            &changed,
        );
        assert_eq!(gating.len(), 3);
        assert_eq!(reported, vec![f("a.py", Some(9))]);
        let (gating, reported) = split_untouched(vec![f("a.py", Some(9))], false, &changed);
        assert_eq!(
            (gating.len(), reported.len()),
            (1, 0),
            "no snapshot: all gate"
        );
    }
}
