//! Hand-made sessions that went through the fix cycle: the JSON a real
//! cycle writes, in the states a report and `wfx status` must show
//! (completed, blocked, partial success, awaiting a manual fix, planning,
//! archived). Every file passes the artifact schemas.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::Env;

/// A test name a report must show as text, never as markup.
pub const EVIL_TEST: &str = "tests/test_ops.py::test_<script>alert(1)</script>";

fn t(minute: u32) -> String {
    format!("2026-01-01T10:{minute:02}:00Z")
}

fn write(path: PathBuf, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// One test run of `iteration-state.json`.
pub struct Run {
    pub iteration: u32,
    pub scope: &'static str,
    pub pass_rate: f64,
    pub total: u32,
    pub passed: u32,
    pub strategy: Option<&'static str>,
    pub result: Option<&'static str>,
    pub failed_tests: Vec<&'static str>,
    pub fix_task: Option<String>,
    pub fix_commit: Option<&'static str>,
    pub rollback_commit: Option<&'static str>,
    pub flaky_tests: Vec<&'static str>,
}

pub fn run(iteration: u32, passed: u32, total: u32) -> Run {
    Run {
        iteration,
        scope: "full",
        pass_rate: (passed as f64 * 1000.0 / total as f64).round() / 10.0,
        total,
        passed,
        strategy: None,
        result: None,
        failed_tests: Vec::new(),
        fix_task: (iteration > 0).then(|| format!("IMPL-fix-{iteration}")),
        fix_commit: None,
        rollback_commit: None,
        flaky_tests: Vec::new(),
    }
}

impl Run {
    fn json(&self, id: &str) -> Value {
        let mut v = json!({
            "iteration": self.iteration,
            "started_at": t(10 + self.iteration * 5),
            "completed_at": t(11 + self.iteration * 5),
            "scope": self.scope,
            "pass_rate": self.pass_rate,
            "total": self.total,
            "passed": self.passed,
            "failed": self.total - self.passed,
            "failed_tests": self.failed_tests,
            "new_failures": [],
            "strategy": self.strategy,
            "analysis_file": self.fix_task.as_ref().map(|_| format!(".workflow/active/{id}/.process/iteration-{}-analysis.md", self.iteration)),
            "analysis_tool": self.fix_task.as_ref().map(|_| "builtin"),
            "fix_task": self.fix_task,
            "fix_commit": self.fix_commit,
            "rollback_commit": self.rollback_commit,
            "result": self.result,
        });
        if !self.flaky_tests.is_empty() {
            v["flaky_tests"] = json!(self.flaky_tests);
        }
        v
    }
}

pub fn failure(test: &str, file: &str, line: u32, criticality: &str, flaky: bool) -> Value {
    json!({
        "test": test,
        "file": file,
        "line": line,
        "error": format!("AssertionError: {test} failed"),
        "message": format!("E   assert 1 == 2\nE    +  where 1 = f()\n{file}:{line}: AssertionError"),
        "criticality": criticality,
        "test_type": "unit",
        "flaky": flaky,
    })
}

/// One fix attempt of `fix-history.json`.
pub fn fix(iteration: u32, strategy: &str, before: f64, after: f64, outcome: &str) -> Value {
    json!({
        "iteration": iteration,
        "fix_task": format!("IMPL-fix-{iteration}"),
        "agent": "claude",
        "strategy": strategy,
        "started_at": t(12 + iteration * 5),
        "duration_ms": 65_000 + iteration as u64 * 1000,
        "exit_code": 0,
        "timed_out": false,
        "cost_usd": 0.42,
        "turns": 7,
        "files_changed": ["calc/ops.py"],
        "diffstat": {"files": 1, "insertions": 12, "deletions": 3},
        "test_edits": [],
        "pass_rate_before": before,
        "pass_rate_after": after,
        "outcome": outcome,
        "commit": format!("{iteration}abcdef0123456789abcdef0123456789abcdef"),
    })
}

pub fn agent_call(
    iteration: u32,
    role: &str,
    agent: &str,
    cost: Option<f64>,
    outcome: &str,
) -> Value {
    let mut v = json!({
        "iteration": iteration,
        "role": role,
        "agent": agent,
        "started_at": t(12 + iteration * 5),
        "duration_ms": 30_000,
        "exit_code": 0,
        "timed_out": false,
        "is_error": false,
        "outcome": outcome,
    });
    if let Some(c) = cost {
        v["cost_usd"] = json!(c);
    }
    v
}

/// What a story is made of.
pub struct Story {
    pub id: &'static str,
    pub status: &'static str,
    pub next_action: &'static str,
    pub loop_status: &'static str,
    pub runs: Vec<Run>,
    pub fixes: Vec<Value>,
    pub calls: Vec<Value>,
    pub latest_failures: Vec<Value>,
    pub iteration_failures: Vec<(u32, f64, Vec<Value>)>,
    pub stuck_tests: Vec<&'static str>,
    pub blocked_reason: Option<&'static str>,
    pub max_iterations: u32,
    /// Fix tasks `IMPL-fix-N` with their status.
    pub fix_tasks: Vec<(u32, &'static str)>,
    pub current_task: Option<&'static str>,
    pub failure_report: bool,
}

impl Story {
    pub fn new(id: &'static str, status: &'static str) -> Story {
        Story {
            id,
            status,
            next_action: "analyze_failures",
            loop_status: "running",
            runs: Vec::new(),
            fixes: Vec::new(),
            calls: Vec::new(),
            latest_failures: Vec::new(),
            iteration_failures: Vec::new(),
            stuck_tests: Vec::new(),
            blocked_reason: None,
            max_iterations: 10,
            fix_tasks: Vec::new(),
            current_task: None,
            failure_report: false,
        }
    }

    /// Write the session under `.workflow/active/<id>`; returns its directory.
    pub fn write(&self, env: &Env) -> PathBuf {
        let dir = env.root.join(".workflow/active").join(self.id);
        let finished = matches!(self.status, "completed" | "partial_success" | "blocked");
        let phases: Vec<Value> = [
            "session_start",
            "context_gather",
            "analysis",
            "task_generation",
            "test_cycle",
        ]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let done = i < 4 || finished;
            json!({
                "phase": i + 1,
                "name": name,
                "status": if done { "completed" } else { "in_progress" },
                "started_at": t(i as u32),
                "completed_at": if done { Some(t(i as u32 + 1)) } else { None },
            })
        })
        .collect();
        write(
            dir.join("workflow-session.json"),
            &json!({
                "session_id": self.id,
                "type": "test",
                "workflow_type": "test_session",
                "status": self.status,
                "description": "Tests for the calculator's divide & power",
                "mode": "prompt",
                "input": "Tests for the calculator's divide & power",
                "source_session_id": null,
                "created_at": t(0),
                "updated_at": t(50),
                "completed_at": if finished { Some(t(55)) } else { None },
                "git": {"base_commit": "0123456789abcdef0123456789abcdef01234567", "branch": "main"},
                "phases": phases,
                "wfx_version": "0.1.0",
            }),
        );
        let task = |id: String, kind: &str, status: &str, agent: Option<&str>, start: u32| {
            let mut history = vec![
                json!({"from": "pending", "to": "in_progress", "changed_at": t(start), "reason": "started"}),
            ];
            if !matches!(status, "pending" | "in_progress") {
                history.push(json!({"from": "in_progress", "to": status, "changed_at": t(start + 2), "reason": "done"}));
            }
            if status == "pending" {
                history.clear();
            }
            write(
                dir.join(".task").join(format!("{id}.json")),
                &json!({
                    "id": id,
                    "title": format!("Task {id}"),
                    "status": status,
                    "status_history": history,
                    "meta": {"type": kind, "agent": agent},
                }),
            );
        };
        task("IMPL-001".into(), "test-gen", "skipped", None, 5);
        task("IMPL-001.3".into(), "code-validation", "completed", None, 6);
        task(
            "IMPL-001.5".into(),
            "test-quality-review",
            "completed",
            None,
            7,
        );
        let main_status = match self.status {
            "completed" | "partial_success" => "completed",
            "blocked" => "blocked",
            _ => "in_progress",
        };
        task("IMPL-002".into(), "test-fix", main_status, None, 8);
        for (n, status) in &self.fix_tasks {
            task(
                format!("IMPL-fix-{n}"),
                "test-fix-iteration",
                status,
                Some("claude"),
                12 + n * 5,
            );
        }

        let process = dir.join(".process");
        {
            let rates: Vec<f64> = self.runs.iter().map(|r| r.pass_rate).collect();
            write(
                process.join("iteration-state.json"),
                &json!({
                    "session_id": self.id,
                    "current_task": self.current_task.unwrap_or("IMPL-002"),
                    "queue": [],
                    "current_iteration": self.fixes.len().max(self.fix_tasks.len()),
                    "max_iterations": self.max_iterations,
                    "selected_strategy": null,
                    "next_action": self.next_action,
                    "status": self.loop_status,
                    "started_at": t(9),
                    "updated_at": t(50),
                    "best_pass_rate": rates.iter().copied().reduce(f64::max),
                    "stuck_tests": self.stuck_tests,
                    "blocked_reason": self.blocked_reason,
                    "iterations": self.runs.iter().map(|r| r.json(self.id)).collect::<Vec<_>>(),
                }),
            );
        }
        if let Some(last) = self.runs.last() {
            write(
                process.join("test-results.json"),
                &json!({
                    "command": "python -m pytest",
                    "exit_code": if last.passed == last.total { 0 } else { 1 },
                    "duration_ms": 1234,
                    "scope": last.scope,
                    "framework": "pytest",
                    "parser": "junit",
                    "total": last.total,
                    "passed": last.passed,
                    "failed": last.total - last.passed,
                    "skipped": 0,
                    "errors": 0,
                    "pass_rate": last.pass_rate,
                    "failures": self.latest_failures,
                    "output_log": format!(".workflow/active/{}/.process/test-output.log", self.id),
                    "truncated": false,
                }),
            );
            std::fs::write(process.join("test-output.log"), "collected 10 items\n").unwrap();
        }
        if !self.fixes.is_empty() || !self.calls.is_empty() {
            write(
                process.join("fix-history.json"),
                &json!({"session_id": self.id, "entries": self.fixes, "agent_calls": self.calls}),
            );
        }
        for (n, rate, failures) in &self.iteration_failures {
            write(
                process.join(format!("iteration-{n}-failures.json")),
                &json!({"iteration": n, "pass_rate": rate, "failures": failures}),
            );
            std::fs::write(process.join(format!("iteration-{n}-prompt.md")), "# Fix\n").unwrap();
            std::fs::write(
                process.join(format!("iteration-{n}-analysis.md")),
                "# Analysis\n",
            )
            .unwrap();
        }
        for f in &self.fixes {
            let n = f["iteration"].as_u64().unwrap();
            std::fs::write(
                process.join(format!("iteration-{n}-cli-output.txt")),
                "{}\n",
            )
            .unwrap();
            // What the fix agent was sent and printed, as the cycle names them.
            std::fs::write(
                process.join(format!("iteration-{n}-fix-prompt.md")),
                "# Fix task\n",
            )
            .unwrap();
            std::fs::write(
                process.join(format!("iteration-{n}-fix-cli-output.txt")),
                "fixed\n",
            )
            .unwrap();
        }
        if self.failure_report {
            std::fs::write(process.join("failure-report.md"), "# Blocked\n").unwrap();
        }
        std::fs::write(dir.join("IMPL_PLAN.md"), "# Plan\n").unwrap();
        std::fs::write(dir.join("TODO_LIST.md"), "- [x] IMPL-001\n").unwrap();
        dir
    }
}

/// Five runs: first run, an improvement, a regression rolled back, a
/// surgical subset run with a flaky failure, and a full pass.
pub fn completed(id: &'static str) -> Story {
    let mut s = Story::new(id, "completed");
    s.next_action = "none";
    s.loop_status = "completed";
    let mut r0 = run(0, 6, 10);
    r0.failed_tests = vec![
        "tests/test_ops.py::test_divide",
        EVIL_TEST,
        "tests/test_ops.py::test_power",
    ];
    let mut r1 = run(1, 8, 10);
    r1.strategy = Some("conservative");
    r1.result = Some("improved");
    r1.fix_commit = Some("1abcdef0123456789abcdef0123456789abcdef");
    r1.failed_tests = vec![EVIL_TEST, "tests/test_ops.py::test_power"];
    let mut r2 = run(2, 5, 10);
    r2.strategy = Some("conservative");
    r2.result = Some("rolled_back");
    r2.fix_commit = Some("2abcdef0123456789abcdef0123456789abcdef");
    r2.rollback_commit = Some("9876543210fedcba9876543210fedcba98765432");
    let mut r3 = run(3, 9, 10);
    r3.scope = "affected";
    r3.strategy = Some("surgical");
    r3.result = Some("improved");
    r3.fix_commit = Some("3abcdef0123456789abcdef0123456789abcdef");
    r3.flaky_tests = vec!["tests/test_ops.py::test_power"];
    let mut r4 = run(4, 10, 10);
    r4.strategy = Some("aggressive");
    r4.result = Some("success");
    r4.fix_commit = Some("4abcdef0123456789abcdef0123456789abcdef");
    s.runs = vec![r0, r1, r2, r3, r4];
    let mut f2 = fix(2, "conservative", 80.0, 50.0, "rolled_back");
    f2["test_edits"] = json!([{"kind": "skip_added", "file": "tests/test_ops.py", "detail": "@pytest.mark.skip added"}]);
    let mut f3 = fix(3, "surgical", 80.0, 90.0, "improved");
    f3["test_edits"] =
        json!([{"kind": "modified", "file": "tests/test_ops.py", "detail": "assertion changed"}]);
    s.fixes = vec![
        fix(1, "conservative", 60.0, 80.0, "improved"),
        f2,
        f3,
        fix(4, "aggressive", 90.0, 100.0, "success"),
    ];
    s.calls = vec![
        agent_call(1, "analysis", "gemini", None, "accepted"),
        agent_call(1, "fix", "claude", Some(0.42), "accepted"),
        agent_call(2, "fix", "claude", Some(0.42), "accepted"),
        agent_call(3, "fix", "claude", Some(0.42), "accepted"),
        agent_call(4, "fix", "claude", Some(0.42), "accepted"),
    ];
    s.iteration_failures = vec![
        (
            1,
            60.0,
            vec![
                failure(
                    "tests/test_ops.py::test_divide",
                    "calc/ops.py",
                    10,
                    "medium",
                    false,
                ),
                failure(EVIL_TEST, "tests/test_ops.py", 42, "high", false),
            ],
        ),
        (
            3,
            80.0,
            vec![failure(
                "tests/test_ops.py::test_power",
                "calc/ops.py",
                20,
                "low",
                true,
            )],
        ),
    ];
    s.fix_tasks = vec![
        (1, "completed"),
        (2, "failed"),
        (3, "completed"),
        (4, "completed"),
    ];
    s
}

/// Three fix attempts that never got past 60 %.
pub fn blocked(id: &'static str) -> Story {
    let mut s = Story::new(id, "blocked");
    s.next_action = "none";
    s.loop_status = "blocked";
    s.max_iterations = 3;
    s.blocked_reason = Some("reached the limit of 3 fix attempts");
    s.stuck_tests = vec!["tests/test_ops.py::test_power"];
    s.failure_report = true;
    let stuck = vec![
        "tests/test_ops.py::test_power",
        "tests/test_ops.py::test_divide",
    ];
    let mut runs = vec![run(0, 5, 10), run(1, 5, 10), run(2, 6, 10), run(3, 6, 10)];
    for (i, r) in runs.iter_mut().enumerate() {
        r.failed_tests = stuck.clone();
        if i > 0 {
            r.strategy = Some(if i == 3 { "aggressive" } else { "conservative" });
            r.result = Some(if i == 2 { "improved" } else { "no_change" });
            r.fix_commit = Some("5abcdef0123456789abcdef0123456789abcdef");
        }
    }
    s.runs = runs;
    s.fixes = vec![
        fix(1, "conservative", 50.0, 50.0, "no_change"),
        fix(2, "conservative", 50.0, 60.0, "improved"),
        fix(3, "aggressive", 60.0, 60.0, "no_change"),
    ];
    s.calls = vec![
        agent_call(1, "fix", "claude", Some(1.5), "accepted"),
        agent_call(2, "fix", "claude", Some(1.25), "accepted"),
        agent_call(3, "fix", "claude", None, "timeout"),
    ];
    s.latest_failures = vec![
        failure(
            "tests/test_ops.py::test_power",
            "calc/ops.py",
            20,
            "medium",
            false,
        ),
        failure(
            "tests/test_ops.py::test_divide",
            "calc/ops.py",
            10,
            "medium",
            false,
        ),
    ];
    s.fix_tasks = vec![(1, "completed"), (2, "completed"), (3, "completed")];
    s
}

/// 96 % with one low, flaky failure left: partial success.
pub fn partial(id: &'static str) -> Story {
    let mut s = Story::new(id, "partial_success");
    s.next_action = "none";
    s.loop_status = "partial_success";
    let mut r0 = run(0, 45, 50);
    r0.failed_tests = vec!["a", "b", "c", "d", "e"];
    let mut r1 = run(1, 48, 50);
    r1.strategy = Some("conservative");
    r1.result = Some("partial_success");
    r1.failed_tests = vec!["tests/test_net.py::test_timeout"];
    s.runs = vec![r0, r1];
    s.fixes = vec![fix(1, "conservative", 90.0, 96.0, "improved")];
    s.calls = vec![agent_call(1, "fix", "claude", Some(0.1), "accepted")];
    s.latest_failures = vec![failure(
        "tests/test_net.py::test_timeout",
        "tests/test_net.py",
        7,
        "low",
        true,
    )];
    s.fix_tasks = vec![(1, "completed")];
    s
}

/// First run failed, no fix agent: waiting for a person's fix.
pub fn awaiting_fix(id: &'static str) -> Story {
    let mut s = Story::new(id, "awaiting_fix");
    s.next_action = "execute_fix_task";
    s.loop_status = "awaiting_fix";
    s.current_task = Some("IMPL-fix-1");
    let mut r0 = run(0, 7, 10);
    r0.failed_tests = vec!["tests/test_ops.py::test_divide"];
    s.runs = vec![r0];
    s.latest_failures = vec![failure(
        "tests/test_ops.py::test_divide",
        "calc/ops.py",
        10,
        "medium",
        false,
    )];
    s.iteration_failures = vec![(1, 70.0, s.latest_failures.clone())];
    s.fix_tasks = vec![(1, "pending")];
    s
}

/// Move a written story to `archives/` as `wfx session complete` would.
pub fn archive(env: &Env, id: &str) -> PathBuf {
    let from = env.root.join(".workflow/active").join(id);
    let to = env.root.join(".workflow/archives").join(id);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::rename(from, &to).unwrap();
    to
}
