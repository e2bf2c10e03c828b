//! The prompts sent to agents, rendered from `templates/prompts/*.md.j2`
//! (overridable from `.workflow/templates/prompts/`) in strict mode: every
//! variable below is always defined, possibly as null.

use serde::Serialize;

use crate::artifacts::fix_history::FixHistory;
use crate::artifacts::iteration_state::Strategy;
use crate::artifacts::task::Task;
use crate::artifacts::test_results::{Failure, TestResults};
use crate::error::{Error, Result};
use crate::markdown::fence_for;
use crate::render::Renderer;

use super::builtin::BuiltinAnalysis;

pub const ANALYSIS: &str = "prompts/analysis.md.j2";
pub const FIX: &str = "prompts/fix.md.j2";
pub const TEST_GEN: &str = "prompts/test_gen.md.j2";

/// Failures shown in a prompt, at most.
const MAX_FAILURES: usize = 20;
/// Characters of one failure's message shown in a prompt, at most.
const MAX_MESSAGE: usize = 1500;
/// Bytes of output shown from its start and from its end.
const OUTPUT_HEAD: usize = 3 * 1024;
const OUTPUT_TAIL: usize = 6 * 1024;
/// Previous fix attempts shown, at most (the most recent).
const MAX_ATTEMPTS: usize = 5;
/// Characters of TEST_ANALYSIS_RESULTS.md in the test-gen prompt, at most.
const MAX_ANALYSIS_TEXT: usize = 40 * 1024;

/// What a strategy asks of the agent (REFERENCE.md, Strategies).
#[derive(Debug, Clone, Serialize)]
pub struct StrategyText {
    pub name: &'static str,
    pub when: &'static str,
    pub asks: &'static str,
}

pub fn strategy_text(s: Strategy) -> StrategyText {
    match s {
        Strategy::Conservative => StrategyText {
            name: "conservative",
            when: "early iterations, or when failures differ",
            asks: "Propose ONE targeted fix for the most important root cause. Keep the change small; the full suite will validate it.",
        },
        Strategy::Aggressive => StrategyText {
            name: "aggressive",
            when: "pass rate above 80% and the failures look alike",
            asks: "The failures share a pattern: propose one change that fixes the related failures together, in one batch.",
        },
        Strategy::Surgical => StrategyText {
            name: "surgical",
            when: "the previous fix caused a regression and was rolled back",
            asks: "Propose the smallest possible change. The last fix broke other tests and was reverted: fix the failures without touching what that fix broke.",
        },
    }
}

/// Cut text to at most `max` characters, marking the cut.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push_str("\n[… cut …]");
    out
}

/// Head and tail of the output, split on line boundaries when possible.
#[derive(Debug, Clone, Serialize)]
pub struct OutputExcerpt {
    pub head: String,
    /// Empty when the head holds everything.
    pub tail: String,
    pub omitted_bytes: usize,
    pub log_path: String,
}

pub fn output_excerpt(text: &str, log_path: &str) -> OutputExcerpt {
    if text.len() <= OUTPUT_HEAD + OUTPUT_TAIL {
        return OutputExcerpt {
            head: text.to_string(),
            tail: String::new(),
            omitted_bytes: 0,
            log_path: log_path.to_string(),
        };
    }
    let mut h = OUTPUT_HEAD;
    while !text.is_char_boundary(h) {
        h -= 1;
    }
    let h = text[..h].rfind('\n').map_or(h, |i| i + 1);
    let mut t = text.len() - OUTPUT_TAIL;
    while !text.is_char_boundary(t) {
        t += 1;
    }
    let t = text[t..].find('\n').map_or(t, |i| t + i + 1);
    OutputExcerpt {
        head: text[..h].to_string(),
        tail: text[t..].to_string(),
        omitted_bytes: t - h,
        log_path: log_path.to_string(),
    }
}

#[derive(Serialize)]
struct FailureView {
    test: String,
    file: Option<String>,
    line: Option<u32>,
    error: String,
    message: String,
    criticality: String,
    layer: String,
}

fn failure_views(failures: &[Failure]) -> Vec<FailureView> {
    failures
        .iter()
        .take(MAX_FAILURES)
        .map(|f| FailureView {
            test: f.test.clone(),
            file: f.file.clone(),
            line: f.line,
            error: f.error.lines().next().unwrap_or("").to_string(),
            message: cut(f.message.trim_end(), MAX_MESSAGE),
            criticality: json_str(&f.criticality),
            layer: json_str(&f.test_type),
        })
        .collect()
}

fn json_str<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[derive(Serialize)]
struct AttemptView {
    iteration: u32,
    agent: String,
    strategy: Option<String>,
    files_changed: Vec<String>,
    outcome: String,
    pass_rate_before: Option<f64>,
    pass_rate_after: Option<f64>,
}

/// Inputs of the analysis prompt.
pub struct AnalysisPrompt<'a> {
    pub session_id: &'a str,
    pub iteration: u32,
    pub max_iterations: u32,
    pub strategy: Strategy,
    pub results: &'a TestResults,
    pub log_text: &'a str,
    /// The full log, relative to the project root.
    pub log_path: &'a str,
    pub stuck_tests: &'a [String],
    pub history: &'a FixHistory,
    /// What the built-in analyzer found, offered as hints.
    pub hints: Option<&'a BuiltinAnalysis>,
}

#[derive(Serialize)]
struct HintView {
    test: String,
    location: Option<String>,
    points: Vec<String>,
}

pub fn analysis(renderer: &Renderer, p: &AnalysisPrompt) -> Result<String> {
    let r = p.results;
    let attempts: Vec<AttemptView> = p
        .history
        .entries
        .iter()
        .rev()
        .take(MAX_ATTEMPTS)
        .rev()
        .map(|e| AttemptView {
            iteration: e.iteration,
            agent: e.agent.clone(),
            strategy: e.strategy.map(|s| s.as_str().to_string()),
            files_changed: e.files_changed.clone(),
            outcome: e.outcome.to_string(),
            pass_rate_before: e.pass_rate_before,
            pass_rate_after: e.pass_rate_after,
        })
        .collect();
    let hints: Vec<HintView> = p
        .hints
        .map(|b| {
            b.findings
                .iter()
                .take(MAX_FAILURES)
                .map(|f| HintView {
                    test: f.test.clone(),
                    location: f.location.as_ref().map(|l| match &l.function {
                        Some(func) => format!("{}:{} (in {})", l.file, l.line, func.name),
                        None => format!("{}:{}", l.file, l.line),
                    }),
                    points: f.called.iter().map(ToString::to_string).collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    let failures = failure_views(&r.failures);
    let output = output_excerpt(p.log_text, p.log_path);
    let fence = fence_for(
        failures
            .iter()
            .map(|f| f.message.as_str())
            .chain([output.head.as_str(), output.tail.as_str()]),
    );
    let ctx = serde_json::json!({
        "fence": fence,
        "session_id": p.session_id,
        "iteration": p.iteration,
        "max_iterations": p.max_iterations,
        "strategy": strategy_text(p.strategy),
        "results": {
            "command": r.command,
            "framework": r.framework,
            "total": r.total,
            "passed": r.passed,
            "failed": r.failed,
            "errors": r.errors,
            "skipped": r.skipped,
            "pass_rate": r.pass_rate,
            "exit_code": r.exit_code,
        },
        "failures": failures,
        "omitted_failures": r.failures.len().saturating_sub(MAX_FAILURES),
        "output": output,
        "stuck_tests": p.stuck_tests,
        "attempts": attempts,
        "hints": hints,
    });
    renderer.render(ANALYSIS, &ctx)
}

/// Inputs of the fix prompt: the IMPL-fix-N task itself.
pub struct FixPrompt<'a> {
    pub session_id: &'a str,
    pub task: &'a Task,
    /// The task file, relative to the project root.
    pub task_path: &'a str,
    pub strategy: Strategy,
    pub test_command: Option<&'a str>,
    pub failures: &'a [Failure],
    /// The test-edit rules the session enforces.
    pub test_edits: &'a crate::artifacts::config::TestEditsPolicy,
}

/// The test-edit rules as the fix prompt states them: only those the
/// configuration enforces (DESIGN.md §11.2), each saying what wfx does.
pub fn test_edit_rules(policy: &crate::artifacts::config::TestEditsPolicy) -> Vec<String> {
    use crate::artifacts::config::EditPolicy;
    let mut rules = Vec::new();
    let mut rule = |p: EditPolicy, what: &str| match p {
        EditPolicy::Reject => rules.push(format!(
            "{what}: wfx rejects the fix and puts the files back before any test runs."
        )),
        EditPolicy::Flag => rules.push(format!(
            "{what}: wfx records it and shows it to the people who review the fix."
        )),
        EditPolicy::Allow => {}
    };
    rule(
        policy.remove_or_skip,
        "Deleting, skipping or disabling a test (a skip/ignore/only marker, a test no longer run, fewer tests)",
    );
    rule(
        policy.weaken,
        "Changing or removing an assertion, an expected value or an expected exception of a failing test",
    );
    rule(
        policy.infrastructure,
        "Changing the test set-up (conftest.py, pytest, jest, vitest or mocha configuration and the plugins or setup files it loads, the test scripts of package.json, Cargo's test settings), or making the code under test import the test runner (pytest, unittest, jest, vitest, mocha, node:test) or reassign the members of `assert`",
    );
    rule(policy.modify, "Any other change to a test file");
    rules
}

pub fn fix(renderer: &Renderer, p: &FixPrompt) -> Result<String> {
    let task_json =
        serde_json::to_string_pretty(p.task).map_err(|e| Error::Internal(e.to_string()))?;
    let fs = p.task.context.fix_strategy.as_ref();
    let failures = failure_views(p.failures);
    let fence = fence_for(
        failures
            .iter()
            .map(|f| f.message.as_str())
            .chain([task_json.as_str()]),
    );
    let ctx = serde_json::json!({
        "fence": fence,
        "session_id": p.session_id,
        "task": p.task,
        "task_path": p.task_path,
        "task_json": task_json,
        "strategy": strategy_text(p.strategy),
        "fix_strategy": fs,
        "points": fs.map(|s| s.modification_points.iter().map(ToString::to_string).collect::<Vec<_>>()).unwrap_or_default(),
        "test_command": p.test_command,
        "failures": failures,
        "omitted_failures": p.failures.len().saturating_sub(MAX_FAILURES),
        "test_rules": test_edit_rules(p.test_edits),
    });
    renderer.render(FIX, &ctx)
}

/// Inputs of the test-generation prompt (IMPL-001).
pub struct TestGenPrompt<'a> {
    pub session_id: &'a str,
    pub task: &'a Task,
    pub task_path: &'a str,
    /// TEST_ANALYSIS_RESULTS.md.
    pub analysis_text: &'a str,
    pub analysis_path: &'a str,
    pub test_framework: Option<&'a str>,
    pub test_command: Option<&'a str>,
}

pub fn test_gen(renderer: &Renderer, p: &TestGenPrompt) -> Result<String> {
    let ctx = serde_json::json!({
        "session_id": p.session_id,
        "task": p.task,
        "task_path": p.task_path,
        "analysis_text": cut(p.analysis_text, MAX_ANALYSIS_TEXT),
        "analysis_path": p.analysis_path,
        "test_framework": p.test_framework,
        "test_command": p.test_command,
    });
    renderer.render(TEST_GEN, &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        serde_json::from_value(serde_json::json!({
            "id": "IMPL-fix-2",
            "title": "Fix iteration 2 failures",
            "status": "pending",
            "meta": {"type": "test-fix-iteration", "iteration": 2, "parent_task": "IMPL-002"},
            "context": {
                "requirements": ["Fix the failing tests"],
                "acceptance": ["All tests pass"],
                "fix_strategy": {
                    "approach": "Return None for b == 0",
                    "root_causes": [{"test": "t::a", "error": "ZeroDivisionError", "cause": "no zero check", "file": "calc/ops.py", "line": 10}],
                    "modification_points": [{"file": "calc/ops.py", "function": "divide", "lines": "8-10"}],
                    "test_execution": {"mode": "affected_only", "affected_tests": ["t::a"]},
                    "confidence_score": 0.7
                }
            }
        }))
        .unwrap()
    }

    fn failure(message: &str) -> Failure {
        serde_json::from_value(serde_json::json!({
            "test": "t::a", "error": "ZeroDivisionError: division by zero", "message": message,
            "criticality": "high", "test_type": "unit"
        }))
        .unwrap()
    }

    #[test]
    fn fix_prompt_carries_the_task_itself() {
        let t = task();
        let failures = [failure("boom ``` fence inside")];
        let text = fix(
            &Renderer::new(None),
            &FixPrompt {
                session_id: "WFS-x",
                task: &t,
                task_path: ".workflow/active/WFS-x/.task/IMPL-fix-2.json",
                strategy: Strategy::Surgical,
                test_command: Some("python -m pytest"),
                failures: &failures,
                test_edits: &Default::default(),
            },
        )
        .unwrap();
        for needle in [
            "# Fix task IMPL-fix-2: Fix iteration 2 failures",
            "## Strategy: surgical",
            "Return None for b == 0",
            "- `calc/ops.py:divide:8-10`",
            "- `t::a`: no zero check (`calc/ops.py:10`)",
            "- Fix the failing tests",
            "- All tests pass",
            "The test command is `python -m pytest`",
            "````text\nboom ``` fence inside\n````",
            "This is `.workflow/active/WFS-x/.task/IMPL-fix-2.json` as wfx wrote it:",
            "\"id\": \"IMPL-fix-2\"",
            "Never disable lint rules",
            "the test runner or its plugins in the\n  project's dependency directories",
        ] {
            assert!(
                text.contains(needle),
                "fix prompt lacks {needle:?}:\n{text}"
            );
        }
    }

    #[test]
    fn test_gen_prompt_renders() {
        let mut t = task();
        t.context.fix_strategy = None;
        t.context.focus_paths = vec!["calc/".into()];
        let text = test_gen(
            &Renderer::new(None),
            &TestGenPrompt {
                session_id: "WFS-x",
                task: &t,
                task_path: ".task/IMPL-001.json",
                analysis_text: "## Test Requirements by File\n- calc/ops.py (L1)",
                analysis_path: ".workflow/active/WFS-x/.process/TEST_ANALYSIS_RESULTS.md",
                test_framework: Some("pytest"),
                test_command: None,
            },
        )
        .unwrap();
        for needle in [
            "- Framework: pytest",
            "- `calc/`",
            "- calc/ops.py (L1)",
            "tautologies",
        ] {
            assert!(
                text.contains(needle),
                "test-gen prompt lacks {needle:?}:\n{text}"
            );
        }
        assert!(!text.contains("Test command"));
    }

    #[test]
    fn a_project_override_replaces_the_prompt() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
        std::fs::write(
            dir.path().join("prompts/analysis.md.j2"),
            "custom {{ iteration }} {{ strategy.name }} {{ failures | length }}",
        )
        .unwrap();
        let results: TestResults = serde_json::from_value(serde_json::json!({
            "command": "pytest", "scope": "full", "parser": "junit", "total": 1, "passed": 0,
            "failed": 1, "skipped": 0, "errors": 0, "pass_rate": 0.0,
            "failures": [serde_json::to_value(failure("m")).unwrap()]
        }))
        .unwrap();
        let p = AnalysisPrompt {
            session_id: "WFS-x",
            iteration: 3,
            max_iterations: 10,
            strategy: Strategy::Aggressive,
            results: &results,
            log_text: "log",
            log_path: "x.log",
            stuck_tests: &[],
            history: &FixHistory::default(),
            hints: None,
        };
        assert_eq!(
            analysis(&Renderer::new(Some(dir.path())), &p).unwrap(),
            "custom 3 aggressive 1"
        );
        std::fs::write(dir.path().join("prompts/analysis.md.j2"), "{{ nope }}").unwrap();
        let err = analysis(&Renderer::new(Some(dir.path())), &p).unwrap_err();
        assert!(err.to_string().contains("prompts/analysis.md.j2"), "{err}");
    }

    #[test]
    fn excerpt_keeps_head_and_tail_on_line_boundaries() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let e = output_excerpt(&text, "x.log");
        assert!(e.head.starts_with("line 0\n") && e.head.ends_with('\n'));
        assert!(e.tail.ends_with("line 1999\n"));
        assert!(e.tail.starts_with("line "));
        assert_eq!(e.head.len() + e.omitted_bytes + e.tail.len(), text.len());
        let small = output_excerpt("short\n", "x.log");
        assert_eq!(
            (
                small.head.as_str(),
                small.tail.as_str(),
                small.omitted_bytes
            ),
            ("short\n", "", 0)
        );
    }
}
