//! The initial tasks of phase 5 (DESIGN.md §5.7): IMPL-001 test
//! generation, IMPL-001.3 code validation (L0 + AI issues, a gate) and
//! IMPL-001.5 test quality review (coverage + anti-patterns, reported).

use std::time::Duration;

use serde_json::json;

use super::engine::{Engine, FIX_AGENT_MISSING, pause_if_stopped};
use super::gates::{self, Finding, GateVerdict, Severity};
use super::progress::duration_text;
use crate::agents::{self, CallFiles, Invocation, Role};
use crate::artifacts::task::{Task, TaskResult, TaskStatus};
use crate::error::{Error, Result};
use crate::process::{self, Spec};

/// Files IMPL-001 created or changed (its `result.files_modified`).
fn generated_files(e: &Engine) -> Vec<String> {
    e.tasks
        .iter()
        .find(|(_, t)| t.meta.kind == crate::artifacts::task::TaskType::TestGen)
        .and_then(|(_, t)| t.result.as_ref())
        .map(|r| r.files_modified.clone())
        .unwrap_or_default()
}

fn set_result(e: &mut Engine, id: &str, f: impl FnOnce(&mut TaskResult, &mut Task)) -> Result<()> {
    let Some(mut task) = e.task(id).cloned() else {
        return Ok(());
    };
    let mut result = task.result.clone().unwrap_or_default();
    f(&mut result, &mut task);
    task.result = Some(result);
    e.put_task(task)
}

fn finish(e: &mut Engine, id: &str, status: TaskStatus, reason: &str, line: String) -> Result<()> {
    e.set_task_status(id, status, reason)?;
    e.write_task_summary(id)?;
    e.out.event(
        "task",
        line,
        json!({ "task": id, "status": status, "reason": reason }),
    );
    Ok(())
}

/// IMPL-001: the `test_gen` agent writes tests; without one the task is
/// skipped and the existing tests are used.
pub(super) fn test_gen(e: &mut Engine, id: &str) -> Result<()> {
    let agent = agents::config::role_agent(&e.config.agents, Role::TestGen, None)?;
    let Some(agent) = agent else {
        let reason = "no test_gen agent configured (agents.test_gen); the existing tests are used";
        set_result(e, id, |r, _| r.summary = format!("Skipped: {reason}."))?;
        return finish(
            e,
            id,
            TaskStatus::Skipped,
            reason,
            format!("{id} skipped: {reason}"),
        );
    };
    e.set_task_status(
        id,
        TaskStatus::InProgress,
        &format!("test generation by {}", agent.name),
    )?;
    if e.state.tasks_snapshot.is_none() && e.cp.is_repo() {
        e.state.tasks_snapshot = e.cp.snapshot()?;
        e.save()?;
    }
    agents::ensure_budget(&e.load_history()?, e.config.agents.max_cost_usd)?;
    let task = e
        .task(id)
        .cloned()
        .ok_or_else(|| Error::Internal(format!("{id} is missing")))?;
    let spec = e.task_path(id);
    let analysis_path = e.paths.analysis_results();
    let analysis_text = std::fs::read_to_string(&analysis_path).unwrap_or_default();
    let detected = e.detect().ok();
    let prompt = agents::prompts::test_gen(
        &e.renderer,
        &agents::prompts::TestGenPrompt {
            session_id: &e.paths.id,
            task: &task,
            task_path: &e.agent_rel(&spec),
            analysis_text: &analysis_text,
            analysis_path: &e.agent_rel(&analysis_path),
            test_framework: detected.as_ref().map(|d| d.framework.as_str()),
            test_command: detected.as_ref().map(|d| d.command.as_str()),
        },
    )?;
    let vars = e.vars(1, &spec, None, None);
    let files = CallFiles::task(&e.paths, id);
    let spinner = e
        .out
        .spinner(format!("{id} · test generation by {}", agent.name));
    let root = e.root.clone();
    let call = e.with_child(|on_spawn| {
        agents::invoke(
            &Invocation {
                agent: &agent,
                role: Role::TestGen,
                prompt: &prompt,
                vars: &vars,
                files: &files,
                cwd: &root,
                env: &[],
            },
            on_spawn,
        )
    })?;
    drop(spinner);
    let call = call?;
    pause_if_stopped(
        &call,
        "generating tests",
        "the test_gen agent {agent} is not available: {error}; install it or remove agents.test_gen",
    )?;
    let outcome = if call.failed() { "failed" } else { "completed" };
    let mut record = call.to_artifact(None, Some(id), outcome);
    e.fix_call_paths(&mut record);
    e.record_calls("test_gen", None, Some(id), vec![record])?;
    let changed = match &e.state.tasks_snapshot {
        Some(s) => crate::git::change_paths(&e.cp.changed_since(s)?),
        None => Vec::new(),
    };
    let took = duration_text(Duration::from_millis(call.duration_ms));
    let summary = if call.failed() {
        format!(
            "{} failed after {took} ({}); {} file(s) changed",
            agent.name,
            call.error_message.clone().unwrap_or_default(),
            changed.len()
        )
    } else {
        format!(
            "{} wrote tests in {took}; {} file(s) changed",
            agent.name,
            changed.len()
        )
    };
    let files_changed = changed.clone();
    set_result(e, id, |r, _| {
        r.summary = summary.clone();
        r.files_modified = files_changed;
    })?;
    let status = if call.failed() {
        TaskStatus::Failed
    } else {
        TaskStatus::Completed
    };
    finish(e, id, status, &summary, format!("{id} {status}: {summary}"))
}

/// Split scan findings into those on lines IMPL-001 added or changed
/// (gating) and those on code it did not touch (reported only). Without a
/// snapshot every finding gates.
fn split_untouched(e: &Engine, findings: Vec<Finding>) -> Result<(Vec<Finding>, Vec<Finding>)> {
    let Some(snapshot) = e.state.tasks_snapshot.clone() else {
        return Ok((findings, Vec::new()));
    };
    let mut touched: std::collections::BTreeMap<String, Option<std::collections::BTreeSet<u32>>> =
        Default::default();
    let (mut gating, mut reported) = (Vec::new(), Vec::new());
    for f in findings {
        if !touched.contains_key(&f.file) {
            let v = e.cp.file_versions(&snapshot, &f.file)?;
            let lines = v.before.as_ref().map(|before| {
                gates::changed_lines(
                    &String::from_utf8_lossy(before),
                    &String::from_utf8_lossy(v.after.as_deref().unwrap_or_default()),
                )
            });
            touched.insert(f.file.clone(), lines);
        }
        let gates_it = match (&touched[&f.file], f.line) {
            (None, _) | (Some(_), None) => true,
            (Some(lines), Some(l)) => lines.contains(&l),
        };
        if gates_it {
            gating.push(f);
        } else {
            reported.push(f);
        }
    }
    Ok((gating, reported))
}

/// Run the L0 commands of IMPL-001.3 (compile / type / lint); each failing
/// command is an error finding.
fn l0_findings(e: &mut Engine, task: &Task) -> Result<Vec<Finding>> {
    let log = e.paths.process_dir().join(format!("{}-l0.log", task.id));
    let _ = std::fs::remove_file(&log);
    let timeout = Duration::from_secs(e.config.test.timeout_s);
    let mut out = Vec::new();
    for step in &task.flow_control.implementation_approach {
        let Some(cmd) = &step.command else { continue };
        let spec = Spec::shell(cmd, &e.root).log(&log).timeout(timeout);
        let outcome = e.with_child(|on_spawn| process::run(spec, on_spawn))??;
        if outcome.interrupted {
            return Err(Error::Paused(format!("interrupted while running `{cmd}`")));
        }
        if !outcome.success() {
            let last = outcome
                .tail_text(2000)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            out.push(Finding::new(
                "l0",
                &step.step,
                Severity::Error,
                "",
                None,
                format!("`{cmd}` failed ({}): {last}", outcome.describe()),
            ));
        }
    }
    Ok(out)
}

/// IMPL-001.3: L0 steps and the AI-issue scan on the files IMPL-001
/// changed. Pass → completed; soft fail → the fix agent (or a person) gets
/// the findings, at most `max_retries` times; hard fail or retries spent →
/// blocked with a report.
pub(super) fn code_validation(e: &mut Engine, id: &str) -> Result<()> {
    let changed: Vec<String> = generated_files(e)
        .into_iter()
        .filter(|f| e.root.join(f).is_file())
        .collect();
    if changed.is_empty() {
        let reason = "IMPL-001 changed no files: nothing to validate";
        set_result(e, id, |r, _| r.summary = format!("Skipped: {reason}."))?;
        return finish(
            e,
            id,
            TaskStatus::Skipped,
            reason,
            format!("{id} skipped: {reason}"),
        );
    }
    let limits = e.config.gates.code_validation.clone();
    loop {
        e.set_task_status(id, TaskStatus::InProgress, "validating IMPL-001's files")?;
        let task = e
            .task(id)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("{id} is missing")))?;
        let attempts = task
            .meta
            .extra
            .get("fix_attempts")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u32;
        let mut findings = l0_findings(e, &task)?;
        let scanned = gates::ai_issue_scan(&e.root, &changed);
        let (gating, reported) = split_untouched(e, scanned)?;
        findings.extend(gating);
        let counts = gates::counts(&findings);
        let verdict = gates::code_validation_gate(&counts, &limits);
        let summary = format!(
            "{} file(s) checked: {} critical, {} error(s), {} warning(s) → {}{}",
            changed.len(),
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
        let s = summary.clone();
        let checked = changed.clone();
        set_result(e, id, |r, t| {
            r.summary = if lines.is_empty() {
                s
            } else {
                format!("{s}\n\n{}", lines.join("\n"))
            };
            r.files_modified = Vec::new();
            t.meta.extra.insert("gate_verdict".into(), json!(verdict));
            t.meta.extra.insert("findings".into(), json!(findings));
            t.meta
                .extra
                .insert("reported_findings".into(), json!(reported));
            t.meta.extra.insert("checked_files".into(), json!(checked));
        })?;
        match verdict {
            GateVerdict::Pass => {
                return finish(
                    e,
                    id,
                    TaskStatus::Completed,
                    &summary,
                    format!("{id} passed: {summary}"),
                );
            }
            GateVerdict::HardFail => {
                return Err(Error::Blocked(format!(
                    "{id} code validation failed: {summary}"
                )));
            }
            GateVerdict::SoftFail if attempts >= limits.max_retries => {
                return Err(Error::Blocked(format!(
                    "{id} code validation still fails after {attempts} fix attempt(s): {summary}"
                )));
            }
            GateVerdict::SoftFail => {}
        }
        set_result(e, id, |_, t| {
            t.meta
                .extra
                .insert("fix_attempts".into(), json!(attempts + 1));
        })?;
        let Some(agent) = e.fix_agent.clone() else {
            e.state.status = crate::artifacts::iteration_state::LoopStatus::AwaitingFix;
            e.session.status = crate::artifacts::session::SessionStatus::AwaitingFix;
            e.save_session()?;
            e.save()?;
            return Err(Error::Paused(format!(
                "{id} found problems in the generated tests (soft fail, attempt {} of {}):\n{}\nFix them, then continue with:\n  wfx test-cycle-execute --resume-session={}",
                attempts + 1,
                limits.max_retries,
                findings
                    .iter()
                    .map(|f| format!("  {f}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                e.paths.id
            )));
        };
        agents::ensure_budget(&e.load_history()?, e.config.agents.max_cost_usd)?;
        let mut fix_task = task.clone();
        fix_task.context.requirements = findings.iter().map(ToString::to_string).collect();
        fix_task.context.fix_strategy = None;
        let spec = e.task_path(id);
        let prompt = agents::prompts::fix(
            &e.renderer,
            &agents::prompts::FixPrompt {
                session_id: &e.paths.id,
                task: &fix_task,
                task_path: &e.agent_rel(&spec),
                strategy: crate::artifacts::iteration_state::Strategy::Conservative,
                test_command: e.detect().ok().map(|d| d.command).as_deref(),
                failures: &[],
            },
        )?;
        let vars = e.vars(attempts + 1, &spec, None, None);
        let files = CallFiles::task(&e.paths, &format!("{id}-fix-{}", attempts + 1));
        let root = e.root.clone();
        let call = e.with_child(|on_spawn| {
            agents::invoke(
                &Invocation {
                    agent: &agent,
                    role: Role::Fix,
                    prompt: &prompt,
                    vars: &vars,
                    files: &files,
                    cwd: &root,
                    env: &[],
                },
                on_spawn,
            )
        })?;
        let call = call?;
        pause_if_stopped(&call, &format!("fixing {id}"), FIX_AGENT_MISSING)?;
        let outcome = if call.failed() { "failed" } else { "completed" };
        let mut record = call.to_artifact(None, Some(id), outcome);
        e.fix_call_paths(&mut record);
        let mut h = e.load_history()?;
        h.agent_calls.push(record);
        e.save_history(&h)?;
        e.out.event(
            "task",
            format!(
                "{id} soft fail: {} is fixing the findings (attempt {})",
                agent.name,
                attempts + 1
            ),
            json!({ "task": id, "status": "soft_fail", "attempt": attempts + 1 }),
        );
    }
}

/// IMPL-001.5: coverage (the configured command, or a report on disk, else
/// unknown) against the targets, and the anti-pattern scan of the test
/// files IMPL-001 changed. Reported, not gating: the loop judges by tests.
pub(super) fn quality_review(e: &mut Engine, id: &str) -> Result<()> {
    e.set_task_status(
        id,
        TaskStatus::InProgress,
        "coverage and test anti-patterns",
    )?;
    let command = e.config.test.coverage_command.clone().or_else(|| {
        e.task(id)
            .and_then(|t| t.flow_control.test_commands.run_coverage.clone())
    });
    let coverage = match &command {
        Some(cmd) => {
            let log = e.paths.process_dir().join(format!("{id}-coverage.log"));
            let _ = std::fs::remove_file(&log);
            let spec = Spec::shell(cmd, &e.root)
                .log(&log)
                .timeout(Duration::from_secs(e.config.test.timeout_s));
            let spinner = e.out.spinner(format!("{id} · running `{cmd}`"));
            let outcome = e.with_child(|on_spawn| process::run(spec, on_spawn))?;
            drop(spinner);
            let outcome = outcome?;
            if outcome.interrupted {
                return Err(Error::Paused(format!("interrupted while running `{cmd}`")));
            }
            let mut c = gates::read_coverage(&e.root, "command");
            if !outcome.success() {
                let note = format!("`{cmd}` {} (log: {})", outcome.describe(), e.ws.rel(&log));
                c.note = Some(match c.note {
                    Some(n) => format!("{n}; {note}"),
                    None => note,
                });
            }
            c
        }
        None => gates::read_coverage(&e.root, "report"),
    };
    let tests: Vec<String> = generated_files(e)
        .into_iter()
        .filter(|f| agents::builtin::is_test_path(f) && e.root.join(f).is_file())
        .collect();
    let findings = gates::antipattern_scan(&e.root, &tests);
    let target = e.config.gates.coverage.clone();
    let shortfalls = coverage.shortfalls(&target);
    let counts = gates::counts(&findings);
    let gate = if coverage.source == "unknown" {
        "unknown"
    } else if shortfalls.is_empty() {
        "met"
    } else {
        "below_target"
    };
    let mut summary = format!(
        "Coverage: {} (target line {:.0}%, branch {:.0}%, function {:.0}%) → {}",
        coverage.text(),
        target.line,
        target.branch,
        target.function,
        match gate {
            "unknown" => "unknown, not gating".to_string(),
            "met" => "met".to_string(),
            _ => format!("below target: {}", shortfalls.join(", ")),
        }
    );
    if let Some(n) = &coverage.note {
        summary.push_str(&format!(" ({n})"));
    }
    summary.push_str(&format!(
        ". Test anti-patterns in {} changed test file(s): {} critical, {} error(s), {} warning(s).",
        tests.len(),
        counts.critical,
        counts.error,
        counts.warning,
    ));
    let lines: Vec<String> = findings.iter().map(ToString::to_string).collect();
    let findings_total = findings.len();
    let s = summary.clone();
    let cov = coverage.clone();
    set_result(e, id, |r, t| {
        r.summary = if lines.is_empty() {
            s
        } else {
            format!("{s}\n\n{}", lines.join("\n"))
        };
        t.meta.extra.insert("coverage".into(), json!(cov));
        t.meta.extra.insert("coverage_gate".into(), json!(gate));
        t.meta.extra.insert("findings".into(), json!(findings));
    })?;
    if gate == "below_target" || counts.critical > 0 {
        e.out.warn(format!("{id}: {summary}"));
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
                    "unknown" => "unknown (not gating)".to_string(),
                    "met" => format!("{} (met)", coverage.text()),
                    _ => format!("{} (below target)", coverage.text()),
                },
                findings_total
            ),
        )
    };
    finish(e, id, status, &summary, line)
}
