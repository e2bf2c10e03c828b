//! Phase 4, task generation (DESIGN.md §4, §5.7): the four initial tasks,
//! IMPL_PLAN.md, TODO_LIST.md and test-planning-notes.md, all from the
//! [`Plan`]. Task JSON is built here; Markdown comes from templates.

use std::path::PathBuf;

use serde::Serialize;

use super::plan::{Plan, TargetPlan};
use crate::artifacts::Extra;
use crate::artifacts::iteration_state::{IterationResult, IterationState};
use crate::artifacts::task::{
    CoverageTarget, FlowControl, FlowStep, Task, TaskContext, TaskMeta, TaskStatus, TaskType,
    TestCommands,
};
use crate::error::Result;
use crate::render::Renderer;
use crate::session::{SessionPaths, store};

/// File names of the initial tasks (DESIGN.md §2): `<id>.json`, the path
/// Claude-Code-Workflow derives from a task id (§10.6). Only used to
/// create them; existing tasks are found by scanning.
pub const FILE_TEST_GEN: &str = "IMPL-001";
pub const FILE_VALIDATION: &str = "IMPL-001.3";
pub const FILE_REVIEW: &str = "IMPL-001.5";
pub const FILE_FIX: &str = "IMPL-002";

/// The names wfx 0.1 gave the two gate tasks. Sessions it made still load
/// (tasks are found by the `id` inside); phase 4 removes one only after
/// writing the same task under its `<id>.json` name, so a planning run an
/// upgrade interrupted never leaves two files with one id.
pub const LEGACY_FILES: [(&str, &str); 2] = [
    ("IMPL-001.3", "IMPL-001.3-validation"),
    ("IMPL-001.5", "IMPL-001.5-review"),
];

fn step(step: &str, action: String, command: Option<String>) -> FlowStep {
    FlowStep {
        step: step.into(),
        action,
        command,
        extra: Extra::new(),
    }
}

fn commands(plan: &Plan) -> TestCommands {
    TestCommands {
        run_tests: plan.runner.command.clone(),
        run_coverage: plan.runner.run_coverage.clone(),
        run_specific: plan.runner.run_specific.clone(),
        extra: Extra::new(),
    }
}

fn focus_paths(plan: &Plan) -> Vec<String> {
    let mut v: Vec<String> = plan.layers.targets.iter().map(|t| t.file.clone()).collect();
    v.extend(plan.project.focus_paths.iter().cloned());
    v.sort();
    v.dedup();
    v
}

fn coverage_target(plan: &Plan) -> CoverageTarget {
    CoverageTarget {
        line: plan.coverage.target_line,
        branch: plan.coverage.target_branch,
        function: plan.coverage.target_function,
    }
}

fn meta(plan: &Plan, kind: TaskType, agent: Option<String>) -> TaskMeta {
    TaskMeta {
        kind,
        agent,
        iteration: None,
        parent_task: None,
        max_iterations: None,
        test_framework: Some(plan.runner.framework.clone()),
        project_type: Some(plan.project.project_type.clone()),
        coverage_target: None,
        analysis_quality: None,
        analysis_tool: None,
        record: Default::default(),
        extra: Extra::new(),
    }
}

fn task(id: &str, title: &str, meta: TaskMeta, context: TaskContext, flow: FlowControl) -> Task {
    Task {
        id: id.into(),
        title: title.into(),
        status: TaskStatus::Pending,
        status_history: Vec::new(),
        meta,
        context,
        flow_control: flow,
        result: None,
        extra: Extra::new(),
    }
}

fn check_of(t: &TargetPlan, plan: &Plan) -> String {
    t.check_command
        .clone()
        .or_else(|| plan.runner.command.clone())
        .unwrap_or_else(|| "the project's test command".into())
}

/// What IMPL-001 must do and how it is checked.
fn test_gen_goals(plan: &Plan) -> (Vec<String>, Vec<String>) {
    let mut requirements: Vec<String> = plan
        .layers
        .targets
        .iter()
        .flat_map(|t| t.requirements.iter().cloned())
        .collect();
    requirements.push(format!(
        "Follow the project's conventions: {}",
        if plan.runner.conventions.is_empty() {
            "none detected yet".to_string()
        } else {
            plan.runner.conventions.join("; ")
        }
    ));
    requirements.push("Tests assert on behaviour (return values, errors, state), never only on mocks; no test without an assertion".into());
    let mut acceptance: Vec<String> = plan
        .layers
        .targets
        .iter()
        .map(|t| {
            format!(
                "`{}` has {} for `{}` and `{}` runs them without errors",
                t.test_file,
                if t.status == "gap" {
                    "new tests"
                } else {
                    "additional negative-path and edge-case tests"
                },
                t.file,
                check_of(t, plan)
            )
        })
        .collect();
    if let Some(cmd) = &plan.runner.command {
        acceptance.push(format!(
            "`{cmd}` collects every new test (the total test count grows)"
        ));
    }
    acceptance.push(
        "No new test is skipped or ignored, and no existing test is removed or weakened".into(),
    );
    (requirements, acceptance)
}

/// IMPL-001's reading steps and its steps per target.
fn test_gen_steps(plan: &Plan) -> (Vec<FlowStep>, Vec<FlowStep>) {
    let pre = vec![
        step(
            "read_analysis",
            format!(
                "Read the test requirements in `{}`",
                plan.artifacts.analysis
            ),
            None,
        ),
        step(
            "read_context",
            format!(
                "Read the mapping of sources to tests in `{}`",
                plan.artifacts.context_package
            ),
            None,
        ),
        step(
            "read_sources",
            format!(
                "Read the target files: {}",
                plan.layers
                    .targets
                    .iter()
                    .map(|t| format!("`{}`", t.file))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None,
        ),
    ];
    let mut approach: Vec<FlowStep> = plan
        .layers
        .targets
        .iter()
        .map(|t| {
            step(
                &format!("test_{}", t.file.replace(['/', '.'], "_")),
                format!(
                    "{} `{}` for `{}` ({})",
                    if t.status == "gap" {
                        "Create"
                    } else {
                        "Extend"
                    },
                    t.test_file,
                    t.file,
                    t.layers.join(", ")
                ),
                t.check_command.clone(),
            )
        })
        .collect();
    approach.push(step(
        "run_all",
        "Run the whole suite once and record which new tests fail".into(),
        plan.runner.command.clone(),
    ));
    (pre, approach)
}

/// IMPL-001: write or extend the tests the plan names.
pub fn test_gen_task(plan: &Plan) -> Task {
    let (requirements, acceptance) = test_gen_goals(plan);
    let (pre, approach) = test_gen_steps(plan);
    let mut m = meta(plan, TaskType::TestGen, plan.agents.test_gen.clone());
    m.coverage_target = Some(coverage_target(plan));
    task(
        "IMPL-001",
        "Test Understanding & Generation",
        m,
        TaskContext {
            requirements,
            focus_paths: focus_paths(plan),
            acceptance,
            depends_on: Vec::new(),
            fix_strategy: None,
            extra: Extra::new(),
        },
        FlowControl {
            pre_analysis: pre,
            implementation_approach: approach,
            target_files: plan.layers.test_files_to_write.clone(),
            test_commands: commands(plan),
            extra: Extra::new(),
        },
    )
}

/// IMPL-001.3: the L0 gate on what IMPL-001 changed.
pub fn validation_task(plan: &Plan) -> Task {
    let mut requirements: Vec<String> = plan
        .layers
        .l0
        .iter()
        .map(|s| match &s.command {
            Some(c) => format!("{} {}: `{c}`", s.id, s.label),
            None => format!("{} {}", s.id, s.label),
        })
        .collect();
    requirements.push(format!(
        "Scope: the files IMPL-001 creates or changes (planned: {}); findings in untouched code are reported, not gating",
        plan.layers.test_files_to_write.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    ));
    let mut acceptance: Vec<String> = plan
        .layers
        .l0
        .iter()
        .filter_map(|s| s.command.as_ref().map(|c| format!("`{c}` exits 0")))
        .collect();
    acceptance.push(format!(
        "AI-issue scan on changed files: {} critical, ≤ {} errors, ≤ {} warnings",
        plan.limits.gate_critical, plan.limits.gate_errors, plan.limits.gate_warnings
    ));
    acceptance.push(format!(
        "A soft failure goes to the fix agent at most {} times; critical findings block the session with a report",
        plan.limits.gate_retries
    ));
    let approach: Vec<FlowStep> = plan
        .layers
        .l0
        .iter()
        .map(|s| {
            step(
                &s.id.to_lowercase().replace('.', "_"),
                s.label.clone(),
                s.command.clone(),
            )
        })
        .collect();
    let mut m = meta(
        plan,
        TaskType::CodeValidation,
        Some(plan.agents.fix.clone()),
    );
    m.record.gate = Some(crate::artifacts::task_record::GateThresholds {
        critical: plan.limits.gate_critical,
        error: plan.limits.gate_errors,
        warning: plan.limits.gate_warnings,
        max_retries: plan.limits.gate_retries,
    });
    task(
        "IMPL-001.3",
        "Code Validation Gate - AI Error Detection",
        m,
        TaskContext {
            requirements,
            focus_paths: focus_paths(plan),
            acceptance,
            depends_on: vec!["IMPL-001".into()],
            fix_strategy: None,
            extra: Extra::new(),
        },
        FlowControl {
            pre_analysis: vec![step(
                "changed_files",
                "List the files IMPL-001 created or changed (its result.files_modified)".into(),
                None,
            )],
            implementation_approach: approach,
            target_files: plan.layers.test_files_to_write.clone(),
            test_commands: commands(plan),
            extra: Extra::new(),
        },
    )
}

/// IMPL-001.5: coverage and test anti-patterns.
pub fn review_task(plan: &Plan) -> Task {
    let c = &plan.coverage;
    let current = |v: Option<f64>| v.map_or_else(|| "unknown".to_string(), |p| format!("{p:.1}%"));
    let requirements = vec![
        format!(
            "Coverage: line ≥ {:.1}%, branch ≥ {:.1}%, function ≥ {:.1}% (now: line {}, branch {}, function {}); {}",
            c.target_line,
            c.target_branch,
            c.target_function,
            current(c.line),
            current(c.branch),
            current(c.function),
            c.measure
        ),
        format!(
            "Test anti-pattern scan on {}: empty tests, weak assertions, shared state, missing negative-path or edge-case tests, tautologies, tests that never use their subject",
            plan.layers
                .test_files_to_write
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "Every targeted source file has at least one negative-path and one edge-case test".into(),
    ];
    let mut acceptance = vec![
        if c.line.is_some() || plan.runner.run_coverage.is_some() {
            format!(
                "line coverage ≥ {:.1}%, branch ≥ {:.1}%, function ≥ {:.1}%",
                c.target_line, c.target_branch, c.target_function
            )
        } else {
            "coverage is reported as unknown (no report, no coverage command) and does not gate"
                .into()
        },
        "no critical anti-pattern in the test files IMPL-001 changed".into(),
    ];
    if let Some(cmd) = &plan.runner.run_coverage {
        acceptance.push(format!(
            "`{cmd}` exits 0 and writes a report wfx can read (lcov, Cobertura or json-summary)"
        ));
    }
    let approach = vec![
        step(
            "coverage",
            c.measure.clone(),
            plan.runner.run_coverage.clone(),
        ),
        step(
            "anti_patterns",
            "Scan the changed test files for anti-patterns".into(),
            None,
        ),
    ];
    let mut m = meta(plan, TaskType::TestQualityReview, None);
    m.coverage_target = Some(coverage_target(plan));
    task(
        "IMPL-001.5",
        "Test Quality Gate - Static Analysis & Coverage",
        m,
        TaskContext {
            requirements,
            focus_paths: focus_paths(plan),
            acceptance,
            depends_on: vec!["IMPL-001.3".into()],
            fix_strategy: None,
            extra: Extra::new(),
        },
        FlowControl {
            pre_analysis: Vec::new(),
            implementation_approach: approach,
            target_files: plan.layers.test_files_to_write.clone(),
            test_commands: commands(plan),
            extra: Extra::new(),
        },
    )
}

/// IMPL-002: run, analyse, fix, retest.
pub fn fix_task(plan: &Plan) -> Task {
    let run = plan.runner.command.clone().map_or_else(
        || "the project's test command (none detected)".to_string(),
        |c| format!("`{c}`"),
    );
    let analysis = if plan.agents.analysis.is_empty() {
        "the built-in analyzer".to_string()
    } else {
        format!(
            "{}, then the built-in analyzer",
            plan.agents.analysis.join(" → ")
        )
    };
    let requirements = fix_requirements(plan, &run, &analysis);
    let acceptance = vec![
        match &plan.runner.command {
            Some(c) => format!("`{c}` passes 100% on a full-suite run"),
            None => "the project's test command passes 100% on a full-suite run".into(),
        },
        format!(
            "or: pass rate ≥ {:.1}% with every remaining failure of low criticality",
            plan.limits.pass_threshold
        ),
        format!(
            "within {} fix attempts; no regression of more than {} percentage points is kept",
            plan.limits.max_iterations, plan.limits.regression_threshold_pp
        ),
    ];
    let approach = vec![
        step(
            "run_tests",
            "Run the full suite and record test-results.json".into(),
            plan.runner.command.clone(),
        ),
        step(
            "analyze_failures",
            format!("Group failures by error signature and analyse with {analysis}"),
            None,
        ),
        step(
            "execute_fix_task",
            "Apply the fix of IMPL-fix-N (agent or person)".into(),
            None,
        ),
        step(
            "retest",
            "Re-run the failing and affected tests".into(),
            plan.runner.run_specific.clone(),
        ),
        step(
            "final_validation",
            "Run the full suite; only a full run completes the session".into(),
            plan.runner.command.clone(),
        ),
    ];
    let mut m = meta(plan, TaskType::TestFix, Some(plan.agents.fix.clone()));
    m.max_iterations = Some(plan.limits.max_iterations);
    let mut target_files: Vec<String> =
        plan.layers.targets.iter().map(|t| t.file.clone()).collect();
    target_files.sort();
    task(
        "IMPL-002",
        "Test Execution & Fix Cycle",
        m,
        TaskContext {
            requirements,
            focus_paths: focus_paths(plan),
            acceptance,
            depends_on: vec!["IMPL-001.5".into()],
            fix_strategy: None,
            extra: Extra::new(),
        },
        FlowControl {
            pre_analysis: vec![step(
                "read_results",
                "Read the previous test-results.json and fix-history.json, if any".into(),
                None,
            )],
            implementation_approach: approach,
            target_files,
            test_commands: commands(plan),
            extra: Extra::new(),
        },
    )
}

/// What IMPL-002 must do: run, analyse, fix the source, retest.
fn fix_requirements(plan: &Plan, run: &str, analysis: &str) -> Vec<String> {
    let sources: Vec<String> = plan
        .layers
        .targets
        .iter()
        .map(|t| format!("`{}`", t.file))
        .collect();
    vec![
        format!("Run {run} and parse every failure (test id, file, line, error)"),
        format!(
            "Analyse failures with {analysis}; each fix comes from a fix strategy with modification points (file:function:lines)"
        ),
        format!(
            "Fix the source, not the tests: failures in {} are fixed in the code under test",
            if sources.is_empty() {
                "the project".to_string()
            } else {
                sources.join(", ")
            }
        ),
        format!(
            "Fix mode: {}",
            if plan.agents.fix == "manual" {
                "manual — pause with the analysis and IMPL-fix-N.json for a person".to_string()
            } else {
                format!("agent `{}`", plan.agents.fix)
            }
        ),
        format!(
            "Retest {} after each fix; a full-suite run confirms completion",
            if plan.limits.progressive {
                "the failing and affected tests"
            } else {
                "the full suite"
            }
        ),
        format!(
            "Never delete, skip or weaken a test to make it pass (test_edits.remove_or_skip = {})",
            plan.limits.test_edits_remove_or_skip
        ),
    ]
}

/// The four initial tasks with the file names they are created under.
pub fn initial_tasks(plan: &Plan) -> Vec<(&'static str, Task)> {
    vec![
        (FILE_TEST_GEN, test_gen_task(plan)),
        (FILE_VALIDATION, validation_task(plan)),
        (FILE_REVIEW, review_task(plan)),
        (FILE_FIX, fix_task(plan)),
    ]
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct TodoTask {
    id: String,
    title: String,
    status: String,
    done: bool,
    /// The box: `x` completed, `-` skipped (not run: never ticked as
    /// if it were done), ` ` otherwise.
    mark: &'static str,
    icon: &'static str,
    link: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct TodoIteration {
    n: u32,
    label: String,
    pass_rate: f64,
    strategy: Option<String>,
    done: bool,
}

/// Everything TODO_LIST.md.j2 reads: equal views render equal bytes, so
/// the cycle renders the list again only when its view changed (see
/// `cycle::docs`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TodoView {
    description: String,
    tasks: Vec<TodoTask>,
    iterations: Vec<TodoIteration>,
}

fn iteration_label(n: u32, result: Option<IterationResult>) -> String {
    let base = if n == 1 {
        "initial test"
    } else {
        "fix validation"
    };
    match result {
        Some(IterationResult::Regression) => format!("{base}, regression"),
        Some(IterationResult::RolledBack) => format!("{base}, rolled back"),
        Some(IterationResult::Error) => format!("{base}, execution error"),
        _ => base.to_string(),
    }
}

/// The template of TODO_LIST.md.
pub const TODO_TEMPLATE: &str = "TODO_LIST.md.j2";

/// TODO_LIST.md for a session's tasks (and, in phase 5, its iterations):
/// phase 4 writes it first, the cycle re-renders it on every change.
/// Links are relative to the session directory.
pub fn render_todo_list(
    renderer: &Renderer,
    paths: &SessionPaths,
    description: &str,
    tasks: &[(PathBuf, Task)],
    state: Option<&IterationState>,
) -> Result<String> {
    renderer.render(TODO_TEMPLATE, &todo_view(paths, description, tasks, state))
}

/// What TODO_LIST.md shows: the description's first line, each task's
/// box, status and link (its summary once the task is done and the
/// summary is on disk), and the loop's runs.
pub fn todo_view(
    paths: &SessionPaths,
    description: &str,
    tasks: &[(PathBuf, Task)],
    state: Option<&IterationState>,
) -> TodoView {
    TodoView {
        description: description.lines().next().unwrap_or("").to_string(),
        tasks: tasks
            .iter()
            .map(|(file, t)| {
                let skipped = t.status.meaning() == TaskStatus::Skipped;
                let (icon, link) = if t.status.is_done() && paths.task_summary(&t.id).is_file() {
                    (
                        if skipped { "⏭️" } else { "✅" },
                        format!("./.summaries/{}-summary.md", t.id),
                    )
                } else {
                    let name = file.file_name().map_or_else(
                        || format!("{}.json", t.id),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    ("📋", format!("./.task/{name}"))
                };
                TodoTask {
                    id: t.id.clone(),
                    title: t.title.clone(),
                    status: t.status.as_str().to_string(),
                    done: t.status.is_done(),
                    mark: match (skipped, t.status.is_done()) {
                        (true, _) => "-",
                        (false, true) => "x",
                        (false, false) => " ",
                    },
                    icon,
                    link,
                }
            })
            .collect(),
        iterations: state
            .map(|s| {
                s.iterations
                    .iter()
                    .map(|i| TodoIteration {
                        n: i.iteration,
                        label: iteration_label(i.iteration, i.result),
                        pass_rate: i.pass_rate,
                        strategy: i.strategy.map(|s| s.as_str().to_string()),
                        done: i.completed_at.is_some(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// `.summaries/<ID>-summary.md` for a finished task (DESIGN.md §5.7), from
/// `templates/task-summary.md.j2`: phase 5 writes one per finished task.
pub fn render_task_summary(renderer: &Renderer, task: &Task) -> Result<String> {
    let result = task.result.clone().unwrap_or_default();
    let ts = |t: Option<crate::artifacts::Timestamp>| {
        t.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    };
    let view = serde_json::json!({
        "id": task.id,
        "title": task.title,
        "status": task.status.as_str(),
        "kind": task.meta.kind,
        "agent": task.meta.agent,
        "iteration": task.meta.iteration,
        "summary": result.summary.trim(),
        "files_modified": result.files_modified,
        "completed_at": ts(result.completed_at),
        "acceptance": task.context.acceptance,
        "history": task.status_history.iter().map(|h| serde_json::json!({
            "from": h.from.as_str(),
            "to": h.to.as_str(),
            "changed_at": h.changed_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "reason": h.reason,
        })).collect::<Vec<_>>(),
    });
    renderer.render("task-summary.md.j2", &view)
}

/// Write phase 4's files: the four tasks, IMPL_PLAN.md, TODO_LIST.md and
/// test-planning-notes.md. Task files are written whole each time, so a
/// re-run after an interruption leaves the same bytes.
pub fn write_all(
    renderer: &Renderer,
    paths: &SessionPaths,
    plan: &Plan,
) -> Result<Vec<(PathBuf, Task)>> {
    let mut written = Vec::new();
    for (file, t) in initial_tasks(plan) {
        let path = paths.new_task_file(file);
        store::write_json(&path, &t)?;
        for (id, legacy) in LEGACY_FILES {
            let old = paths.new_task_file(legacy);
            if id == t.id && old.is_file() {
                fs_err::remove_file(&old).map_err(|e| crate::error::Error::io(&old, e))?;
            }
        }
        written.push((path, t));
    }
    store::write_atomic(
        &paths.impl_plan(),
        renderer.render("IMPL_PLAN.md.j2", plan)?.as_bytes(),
    )?;
    store::write_atomic(
        &paths.planning_notes(),
        renderer
            .render("test-planning-notes.md.j2", plan)?
            .as_bytes(),
    )?;
    let todo = render_todo_list(renderer, paths, &plan.session.description, &written, None)?;
    store::write_atomic(&paths.todo_list(), todo.as_bytes())?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::task::TaskResult;

    fn bare_task() -> Task {
        task(
            "IMPL-001",
            "Test Understanding & Generation",
            TaskMeta {
                kind: TaskType::TestGen,
                agent: Some("claude".into()),
                iteration: None,
                parent_task: None,
                max_iterations: None,
                test_framework: None,
                project_type: None,
                coverage_target: None,
                analysis_quality: None,
                analysis_tool: None,
                record: Default::default(),
                extra: Extra::new(),
            },
            TaskContext {
                acceptance: vec!["`pytest tests/test_auth.py` passes".into()],
                ..Default::default()
            },
            FlowControl::default(),
        )
    }

    #[test]
    fn task_summary_names_result_files_and_history() {
        let mut t = bare_task();
        let at = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .to_utc();
        t.set_status(TaskStatus::InProgress, "started", at);
        t.set_status(TaskStatus::Completed, "tests written", at);
        t.result = Some(TaskResult {
            summary: "Added 4 tests.\n".into(),
            files_modified: vec!["tests/test_auth.py".into()],
            started_at: Some(at),
            completed_at: Some(at),
            extra: Extra::new(),
        });
        let text = render_task_summary(&Renderer::new(None), &t).unwrap();
        assert_eq!(
            text,
            "# IMPL-001: Test Understanding & Generation\n\n\
- Status: **completed** (2026-01-02T03:04:05Z)\n\
- Type: test-gen · agent: claude\n\n\
## Result\n\nAdded 4 tests.\n\n\
## Files modified\n\n- `tests/test_auth.py`\n\n\
## Acceptance criteria\n\n- `pytest tests/test_auth.py` passes\n\n\
## Status history\n\n\
- 2026-01-02T03:04:05Z: pending → in_progress — started\n\
- 2026-01-02T03:04:05Z: in_progress → completed — tests written\n"
        );
        let empty = render_task_summary(&Renderer::new(None), &bare_task()).unwrap();
        assert!(empty.contains("No summary was recorded."), "{empty}");
    }

    #[test]
    fn todo_list_links_summaries_and_lists_iterations() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(dir.path().join("WFS-t"), "WFS-t");
        std::fs::create_dir_all(paths.summaries_dir()).unwrap();
        std::fs::write(paths.task_summary("IMPL-001"), "done").unwrap();
        let mut done = bare_task();
        done.status = TaskStatus::Completed;
        let mut fix = bare_task();
        fix.id = "IMPL-002".into();
        fix.title = "Test Execution & Fix Cycle".into();
        fix.status = TaskStatus::InProgress;
        let tasks = vec![
            (paths.new_task_file("IMPL-001"), done),
            (paths.new_task_file("IMPL-002"), fix),
        ];
        let state: IterationState = serde_json::from_value(serde_json::json!({
            "session_id": "WFS-t", "current_task": "IMPL-002", "queue": [], "current_iteration": 2,
            "max_iterations": 10, "next_action": "retest", "status": "running",
            "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "iterations": [
                {"iteration": 1, "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:01:00Z",
                 "scope": "full", "pass_rate": 70.0, "total": 10, "passed": 7, "failed": 3,
                 "strategy": "conservative", "result": "improved"},
                {"iteration": 2, "started_at": "2026-01-01T00:02:00Z", "completed_at": null,
                 "scope": "affected", "pass_rate": 90.0, "total": 10, "passed": 9, "failed": 1}
            ]
        }))
        .unwrap();
        let text = render_todo_list(
            &Renderer::new(None),
            &paths,
            "Test the calculator\nmore",
            &tasks,
            Some(&state),
        )
        .unwrap();
        assert_eq!(
            text,
            "# Tasks: Test the calculator\n\n## Task Progress\n\
- [x] **IMPL-001**: Test Understanding & Generation → [✅](./.summaries/IMPL-001-summary.md)\n\
- [ ] **IMPL-002**: Test Execution & Fix Cycle → [📋](./.task/IMPL-002.json) (in_progress)\n\
\x20 - [x] Iteration 1: initial test (pass: 70.0%, conservative)\n\
\x20 - [ ] Iteration 2: fix validation (pass: 90.0%)\n\n\
## Status Legend\n- `- [ ]` pending · `- [x]` completed · `- [-]` skipped (not run)\n"
        );
    }
}
