//! The view model of a session: every number and label `wfx status` and
//! the HTML report show, computed once from [`SessionData`] by pure
//! functions. Values are kept raw (for `--json`) next to their display text
//! (for people), so the template stays free of arithmetic.

use serde::Serialize;

use super::SessionData;
use crate::artifacts::Timestamp;
use crate::artifacts::fix_history::{AgentCall, FixAttempt};
use crate::artifacts::iteration_state::{
    IterationRecord, IterationResult, IterationState, NextAction, RanCounts, Tier,
    retry_max_iterations,
};
use crate::artifacts::session::{PhaseStatus, SessionStatus};
use crate::artifacts::task::{Task, TaskStatus, TaskType};
use crate::artifacts::test_results::{Failure, Scope};
use crate::session::Location;

/// At most this many failures are listed per group; the rest are counted.
pub const MAX_FAILURES_PER_GROUP: usize = 200;

/// At most this many failure rows in a whole report.
pub const MAX_FAILURE_ROWS: usize = 2000;

#[derive(Debug, Clone, Serialize)]
pub struct SessionView {
    pub session_id: String,
    pub description: String,
    pub status: String,
    pub location: Location,
    pub mode: String,
    pub input: String,
    pub source_session_id: Option<String>,
    pub created: String,
    pub updated: String,
    pub completed: Option<String>,
    /// Wall time from creation to completion (or last update).
    pub elapsed: String,
    pub git_base_commit: Option<String>,
    pub git_branch: Option<String>,
    /// wfx's commits skipped the repository's git hooks (`git.hooks: false`).
    pub git_hooks_skipped: bool,
    pub wfx_version: String,
    pub dir: String,
    pub outcome: Outcome,
    /// Why a session that has runs is not done yet, in one line: the rule
    /// its last results miss and the tests that block it; `None` once it
    /// completed (or before any run).
    pub not_done: Option<String>,
    pub phases: Vec<PhaseView>,
    pub tasks: Vec<TaskView>,
    pub runs: Vec<RunView>,
    pub pass_rates: Vec<f64>,
    pub sparkline: String,
    pub latest_pass_rate: Option<f64>,
    pub best_pass_rate: Option<f64>,
    pub pass_threshold: f64,
    pub current_iteration: Option<u32>,
    pub max_iterations: Option<u32>,
    pub stuck_tests: Vec<String>,
    pub fixes: Vec<FixView>,
    pub agent_calls: Vec<CallView>,
    pub cost: CostView,
    pub failure_groups: Vec<FailureGroup>,
    pub artifacts: Vec<ArtifactView>,
    pub failure_report: Option<Link>,
    pub next: NextStep,
    /// What a `wfx run` session did, step by step; `None` for a test-fix
    /// session (whose cycle fields above are then all there is).
    pub run: Option<super::run::RunSection>,
    /// Artifacts that could not be read, as `file: /pointer: message`.
    pub problems: Vec<String>,
}

/// How the session ended (or where it stands) and why, in one line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// `completed`, `partial_success`, `blocked`, `awaiting_fix`, `paused`,
    /// `in_progress` or `planning`.
    pub kind: String,
    pub title: String,
    pub reason: String,
}

/// A path relative to the project root, and its link from the report when
/// the report can link to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub path: String,
    pub href: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseView {
    pub phase: u8,
    pub name: String,
    pub status: String,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    pub duration_ms: Option<u64>,
    pub duration: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    pub id: String,
    pub title: String,
    pub status: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub agent: Option<String>,
    pub file: Link,
    pub started_at: Option<Timestamp>,
    pub completed_at: Option<Timestamp>,
    /// `started_at` for people.
    pub started: String,
    pub duration_ms: Option<u64>,
    pub duration: String,
    pub summary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// The run's number in the session, unique (an iteration may hold
    /// several runs: its retest tiers, then the full validation).
    pub run: u32,
    pub iteration: u32,
    pub scope: String,
    /// The scope as people read it: `full`, or which tests a retest ran
    /// (`failed tests`, `affected tests`).
    pub scope_shown: String,
    /// The tests this run itself ran (a retest's few, not the suite its
    /// results were merged into): passed, failed (errors included), total.
    pub ran_passed: u32,
    pub ran_failed: u32,
    pub ran_total: u32,
    /// `pass_rate` is the suite's, this subset run merged over the last
    /// full run.
    pub merged: bool,
    pub pass_rate: f64,
    pub pass_rate_text: String,
    pub total: u32,
    pub passed: u32,
    pub failed: u32,
    pub failed_tests: Vec<String>,
    pub new_failures: Vec<String>,
    /// Strategy of the fix written from this run's analysis (the fix
    /// *after* this run), as `iterations[].strategy` records it.
    pub strategy: Option<String>,
    /// Strategy of the fix that led to this run: the previous run's
    /// `strategy`; `None` for the first run. The chart colours by this.
    pub strategy_before: Option<String>,
    pub result: Option<String>,
    pub analysis_tool: Option<String>,
    pub analysis: Option<Link>,
    pub fix_task: Option<String>,
    pub fix_commit: Option<String>,
    pub rollback_commit: Option<String>,
    pub rolled_back: bool,
    pub flaky_tests: Vec<String>,
    pub started_at: Timestamp,
    pub duration: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixView {
    pub iteration: u32,
    pub fix_task: String,
    pub agent: String,
    /// Who made it, as every view says it: `fix by hand`, `fix by claude`.
    pub by: String,
    pub strategy: Option<String>,
    pub started: String,
    pub duration_ms: u64,
    pub duration: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cost_usd: Option<f64>,
    pub cost: String,
    pub turns: Option<u32>,
    pub files_changed: Vec<String>,
    pub insertions: u32,
    pub deletions: u32,
    pub diff_files: u32,
    /// Widths (0–100) of the insertion and deletion bars, scaled to the
    /// largest change of the session.
    pub bar_add: u32,
    pub bar_del: u32,
    pub test_edits: Vec<TestEditView>,
    pub pass_before: String,
    pub pass_after: String,
    pub outcome: String,
    pub commit: Option<String>,
    pub prompt: Option<Link>,
    pub output: Option<Link>,
    /// Files the fix wrote that no commit has, with why
    /// (`data/big.bin (120.0 MiB > git.max_new_file_mib 50)`).
    pub not_committed: Vec<String>,
    /// Files outside the commit the fix depended on: its sealed run failed
    /// (`calc/_fix.py (git-ignored)`).
    pub outside_commit: Vec<String>,
    /// The start of what the fix changed (`diff` in fix-history.json);
    /// empty when none was recorded.
    pub diff: Vec<DiffLineView>,
    /// Lines of the diff the excerpt left out.
    pub diff_omitted: usize,
    /// `… N more lines` when the excerpt was cut.
    pub diff_more: Option<String>,
    /// Speculative attempts: every candidate of the step, side by side.
    pub candidates: Vec<CandidateView>,
}

/// One candidate of a speculative fix step.
#[derive(Debug, Clone, Serialize)]
pub struct CandidateView {
    pub candidate: u32,
    pub agent: String,
    pub strategy: Option<String>,
    pub verdict: String,
    pub chosen: bool,
    pub reason: String,
    pub duration: String,
    pub cost: String,
    pub insertions: u32,
    pub deletions: u32,
    pub files_changed: Vec<String>,
    /// `failed 2/2 · affected 5/5 · full 11/11`.
    pub tiers: String,
    pub fixed: u32,
    pub broken: Vec<String>,
    pub prompt: Option<Link>,
    pub output: Option<Link>,
}

/// One line of a fix's diff and what it is (`file`, `hunk`, `added`,
/// `removed`, `context`: its class in the report, its colour on a
/// terminal).
#[derive(Debug, Clone, Serialize)]
pub struct DiffLineView {
    pub kind: crate::artifacts::fix_history::DiffLineKind,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestEditView {
    pub kind: String,
    pub file: String,
    pub detail: String,
    /// The session's policy rejects edits of this kind.
    pub serious: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallView {
    pub iteration: Option<u32>,
    pub task: Option<String>,
    pub role: String,
    pub agent: String,
    pub duration: String,
    pub cost: String,
    pub turns: Option<u32>,
    pub outcome: String,
    pub error: Option<String>,
    pub prompt: Option<Link>,
    pub output: Option<Link>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostView {
    /// Sum of the agent calls' reported cost; None when no call reported one.
    pub total_usd: Option<f64>,
    /// `$1.25`, or `–`.
    pub total: String,
    pub cap_usd: Option<f64>,
    /// `$10.00`, or empty without a cap.
    pub cap: String,
    pub calls: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureGroup {
    pub title: String,
    pub iteration: Option<u32>,
    pub source: Link,
    pub failures: Vec<FailureView>,
    pub omitted: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct FailureView {
    pub test: String,
    /// `file:line`, `file`, or empty.
    pub location: String,
    pub criticality: String,
    pub layer: String,
    pub flaky: bool,
    pub error: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArtifactView {
    /// Path inside the session directory.
    pub name: String,
    pub link: Link,
    pub description: &'static str,
}

/// What to do next: the dispatcher's next action, the exact command, and a
/// sentence for people when the command alone is not enough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextStep {
    pub action: Option<String>,
    pub command: Option<String>,
    pub hint: Option<String>,
}

/// Build the view. `link` turns a path relative to the project root into a
/// link from wherever the output will live (None: show it as text); it is
/// only asked about files that exist in the session.
pub fn build(data: &SessionData, link: &dyn Fn(&str) -> Option<String>) -> SessionView {
    let links = Links { data, link };
    let href = |path: &str| links.href(path);
    let s = &data.session;
    let state = data.state.as_ref();
    let records: &[IterationRecord] = state.map_or(&[], |st| st.iterations.as_slice());
    let pass_threshold = data.config.cycle.pass_threshold;
    let runs = run_views(data, records, &links);
    let pass_rates: Vec<f64> = records.iter().map(|r| r.pass_rate).collect();
    let history = data.history.as_ref();
    let entries: &[FixAttempt] = history.map_or(&[], |h| h.entries.as_slice());
    let calls: &[AgentCall] = history.map_or(&[], |h| h.agent_calls.as_slice());
    let run = data
        .run
        .as_ref()
        .map(|r| super::run::build(r, data.sref.location, &data.dir, &href));
    let next = next_of(data, run.as_ref());
    let outcome = match &run {
        Some(r) => super::run::outcome(r),
        None => outcome(data),
    };
    // The report of a block the session has since got past (resumed,
    // completed) is history: among the artifacts, not beside the outcome.
    let not_done = match outcome.kind.as_str() {
        "completed" | "partial_success" | "planning" => None,
        _ if run.is_some() => None,
        _ => data
            .results
            .as_ref()
            .and_then(|r| crate::cycle::decide::unmet(r, pass_threshold)),
    };
    let failure_report = (outcome.kind == "blocked")
        .then(|| links.existing(format!("{}/.process/failure-report.md", data.dir)))
        .flatten();

    SessionView {
        session_id: s.session_id.clone(),
        description: s.description.clone(),
        status: s.status.to_string(),
        location: data.sref.location,
        mode: name_of(&s.mode),
        input: s.input.clone(),
        source_session_id: s.source_session_id.clone(),
        created: timestamp(&s.created_at),
        updated: timestamp(&s.updated_at),
        completed: s.completed_at.as_ref().map(timestamp),
        elapsed: span(Some(s.created_at), s.completed_at.or(Some(s.updated_at))),
        git_base_commit: s.git.base_commit.as_deref().map(short_commit),
        git_branch: s.git.branch.clone(),
        git_hooks_skipped: s.git.hooks_skipped,
        wfx_version: s.wfx_version.clone(),
        dir: data.dir.clone(),
        outcome,
        not_done,
        phases: phase_views(s),
        tasks: task_views(data, &links),
        sparkline: sparkline(&pass_rates),
        latest_pass_rate: pass_rates.last().copied(),
        best_pass_rate: state
            .and_then(|st| st.best_pass_rate)
            .or_else(|| pass_rates.iter().copied().reduce(f64::max)),
        pass_rates,
        runs,
        pass_threshold,
        current_iteration: state.map(|st| st.current_iteration),
        max_iterations: state.map(|st| st.max_iterations),
        stuck_tests: state.map(|st| st.stuck_tests.clone()).unwrap_or_default(),
        fixes: fix_views(data, entries, &links),
        agent_calls: call_views(calls, &links),
        cost: cost_view(calls, data.config.agents.max_cost_usd),
        failure_groups: failure_groups(data, &links),
        artifacts: artifact_views(data, &links),
        failure_report,
        next,
        run,
        problems: data.problems.iter().map(ToString::to_string).collect(),
    }
}

/// Links to the session's files: only a file that exists gets an href.
struct Links<'a> {
    data: &'a SessionData,
    link: &'a dyn Fn(&str) -> Option<String>,
}

impl Links<'_> {
    fn href(&self, path: &str) -> Link {
        let exists = self
            .data
            .files
            .binary_search_by(|f| f.as_str().cmp(path))
            .is_ok();
        Link {
            path: path.to_string(),
            href: if exists { (self.link)(path) } else { None },
        }
    }

    fn existing(&self, path: String) -> Option<Link> {
        self.data
            .files
            .binary_search(&path)
            .is_ok()
            .then(|| self.href(&path))
    }

    /// A file of iteration `n` under `.process/`.
    fn process(&self, n: u32, suffix: &str) -> String {
        format!("{}/.process/iteration-{n}-{suffix}", self.data.dir)
    }
}

fn run_views(data: &SessionData, records: &[IterationRecord], links: &Links) -> Vec<RunView> {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let last = i + 1 == records.len();
            let ran = r.ran.unwrap_or(RanCounts {
                total: r.total,
                passed: r.passed,
                failed: r.failed,
            });
            RunView {
                run: if r.run > 0 { r.run } else { i as u32 + 1 },
                iteration: r.iteration,
                scope: name_of(&r.scope),
                scope_shown: scope_shown(r),
                ran_passed: ran.passed,
                ran_failed: ran.failed,
                ran_total: ran.total,
                merged: r.scope == Scope::Affected,
                pass_rate: r.pass_rate,
                pass_rate_text: pct(r.pass_rate),
                total: r.total,
                passed: r.passed,
                failed: r.failed,
                failed_tests: r.failed_tests.clone(),
                new_failures: r.new_failures.clone(),
                strategy: r.strategy.map(|s| s.to_string()),
                // The fix before a run was chosen by the last run of an
                // earlier iteration: the runs of one iteration (an affected
                // retest, then the full validation) follow the same fix.
                strategy_before: records[..i]
                    .iter()
                    .rev()
                    .find(|p| p.iteration < r.iteration)
                    .and_then(|p| p.strategy)
                    .map(|s| s.to_string()),
                result: r.result.map(|x| name_of(&x)),
                analysis_tool: r.analysis_tool.clone(),
                analysis: r.analysis_file.as_deref().map(|p| links.href(p)),
                fix_task: r.fix_task.clone(),
                fix_commit: r.fix_commit.as_deref().map(short_commit),
                rollback_commit: r.rollback_commit.as_deref().map(short_commit),
                rolled_back: is_rolled_back(r),
                flaky_tests: flaky_tests(data, r, last),
                started_at: r.started_at,
                duration: span(Some(r.started_at), r.completed_at),
            }
        })
        .collect()
}

fn fix_views(data: &SessionData, entries: &[FixAttempt], links: &Links) -> Vec<FixView> {
    let max_change = entries
        .iter()
        .map(|e| e.diffstat.insertions.max(e.diffstat.deletions))
        .max()
        .unwrap_or(0);
    entries
        .iter()
        .map(|e| FixView {
            iteration: e.iteration,
            fix_task: e.fix_task.clone(),
            agent: e.agent.clone(),
            by: crate::agents::config::fix_by(&e.agent),
            strategy: e.strategy.map(|s| s.to_string()),
            started: timestamp(&e.started_at),
            duration_ms: e.duration_ms,
            duration: duration(e.duration_ms),
            exit_code: e.exit_code,
            timed_out: e.timed_out,
            cost_usd: e.cost_usd,
            cost: money(e.cost_usd),
            turns: e.turns,
            files_changed: e.files_changed.clone(),
            insertions: e.diffstat.insertions,
            deletions: e.diffstat.deletions,
            diff_files: e.diffstat.files,
            bar_add: bar(e.diffstat.insertions, max_change),
            bar_del: bar(e.diffstat.deletions, max_change),
            test_edits: e
                .test_edits
                .iter()
                .map(|t| TestEditView {
                    kind: name_of(&t.kind),
                    file: t.file.clone(),
                    detail: t.detail.clone(),
                    serious: crate::cycle::guard::policy_of(t.kind, &data.config.cycle.test_edits)
                        == crate::artifacts::config::EditPolicy::Reject,
                })
                .collect(),
            pass_before: e.pass_rate_before.map(pct).unwrap_or_else(|| "–".into()),
            pass_after: e.pass_rate_after.map(pct).unwrap_or_else(|| "–".into()),
            outcome: e.outcome.to_string(),
            commit: e.commit.as_deref().map(short_commit),
            prompt: links.existing(match e.candidate {
                Some(c) => links.process(e.iteration, &format!("candidate-{c}/fix-prompt.md")),
                None => links.process(e.iteration, "fix-prompt.md"),
            }),
            output: links.existing(match e.candidate {
                Some(c) => links.process(e.iteration, &format!("candidate-{c}/fix-cli-output.txt")),
                None => links.process(e.iteration, "fix-cli-output.txt"),
            }),
            not_committed: e.not_committed.iter().map(ToString::to_string).collect(),
            outside_commit: e.outside_commit.clone(),
            diff: e
                .diff
                .lines()
                .map(|(kind, text)| DiffLineView {
                    kind,
                    text: text.to_string(),
                })
                .collect(),
            diff_omitted: e.diff.omitted_lines as usize,
            diff_more: e.diff.more(usize::MAX),
            candidates: e
                .candidates
                .iter()
                .map(|c| CandidateView {
                    candidate: c.candidate,
                    agent: c.agent.clone(),
                    strategy: c.strategy.map(|s| s.to_string()),
                    verdict: c.verdict.to_string(),
                    chosen: e.candidate == Some(c.candidate),
                    reason: c.reason.clone(),
                    duration: duration(c.duration_ms),
                    cost: money(c.cost_usd),
                    insertions: c.diffstat.insertions,
                    deletions: c.diffstat.deletions,
                    files_changed: c.files_changed.clone(),
                    tiers: c
                        .tiers
                        .iter()
                        .map(|t| format!("{} {}/{}", t.tier.as_str(), t.passed, t.total))
                        .collect::<Vec<_>>()
                        .join(" · "),
                    fixed: c.fixed,
                    broken: c.broken.clone(),
                    prompt: links.existing(links.process(
                        e.iteration,
                        &format!("candidate-{}/fix-prompt.md", c.candidate),
                    )),
                    output: links.existing(links.process(
                        e.iteration,
                        &format!("candidate-{}/fix-cli-output.txt", c.candidate),
                    )),
                })
                .collect(),
        })
        .collect()
}

fn call_views(calls: &[AgentCall], links: &Links) -> Vec<CallView> {
    calls
        .iter()
        .map(|c| CallView {
            iteration: c.iteration,
            task: c.task.clone(),
            role: c.role.as_str().to_string(),
            agent: c.agent.clone(),
            duration: duration(c.duration_ms),
            cost: money(c.cost_usd),
            turns: c.turns,
            outcome: c.outcome.to_string(),
            error: call_error(c),
            prompt: c.prompt_file.as_deref().map(|p| links.href(p)),
            output: c.output_file.as_deref().map(|p| links.href(p)),
        })
        .collect()
}

fn task_views(data: &SessionData, links: &Links) -> Vec<TaskView> {
    let s = &data.session;
    data.tasks
        .iter()
        .map(|(file, t)| {
            let (started, completed) = task_times(t);
            let ms = elapsed_ms(started, completed);
            TaskView {
                id: t.id.clone(),
                title: t.title.clone(),
                status: t.status.to_string(),
                kind: name_of(&t.meta.kind),
                agent: t.meta.agent.clone(),
                file: links.href(file),
                started_at: started,
                completed_at: completed,
                started: started.as_ref().map(timestamp).unwrap_or_default(),
                duration_ms: ms,
                duration: match (ms, started, t.status) {
                    (Some(ms), _, _) => duration(ms),
                    (None, Some(_), TaskStatus::InProgress) => in_progress_label(s.status).into(),
                    _ => String::new(),
                },
                summary: t
                    .result
                    .as_ref()
                    .map(|r| r.summary.clone())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

fn phase_views(s: &crate::artifacts::WorkflowSession) -> Vec<PhaseView> {
    s.phases
        .iter()
        .map(|p| {
            let ms = elapsed_ms(p.started_at, p.completed_at);
            PhaseView {
                phase: p.phase,
                name: p.name.clone(),
                status: name_of(&p.status),
                started_at: p.started_at,
                completed_at: p.completed_at,
                duration_ms: ms,
                duration: ms.map(duration).unwrap_or_default(),
            }
        })
        .collect()
}

fn failure_groups(data: &SessionData, links: &Links) -> Vec<FailureGroup> {
    let mut sources: Vec<(String, Option<u32>, Link, &[Failure])> = data
        .iteration_failures
        .iter()
        .map(|(n, f)| {
            (
                format!(
                    "Iteration {n}: failures the fix was asked to address ({})",
                    pct(f.pass_rate)
                ),
                Some(*n),
                links.href(&links.process(*n, "failures.json")),
                f.failures.as_slice(),
            )
        })
        .collect();
    if let Some(r) = &data.results
        && !r.failures.is_empty()
    {
        sources.push((
            format!(
                "Latest test run ({} suite, {}): {} failing",
                name_of(&r.scope),
                pct(r.pass_rate),
                r.failed + r.errors
            ),
            None,
            links.href(&format!("{}/.process/test-results.json", data.dir)),
            &r.failures,
        ));
    }
    let limits = row_limits(&sources.iter().map(|s| s.3.len()).collect::<Vec<_>>());
    sources
        .into_iter()
        .zip(limits)
        .map(|((title, n, source, all), limit)| failure_group(title, n, source, all, limit))
        .collect()
}

fn artifact_views(data: &SessionData, links: &Links) -> Vec<ArtifactView> {
    let mut artifacts: Vec<ArtifactView> = data
        .files
        .iter()
        .map(|path| {
            let name = path
                .strip_prefix(&data.dir)
                .map(|p| p.trim_start_matches('/'))
                .unwrap_or(path)
                .to_string();
            ArtifactView {
                description: describe_artifact(&name),
                name,
                link: links.href(path),
            }
        })
        .collect();
    // The session's own files first, then each subdirectory.
    artifacts.sort_by(|a, b| {
        (a.name.matches('/').count(), &a.name).cmp(&(b.name.matches('/').count(), &b.name))
    });
    artifacts
}

/// The next step: the run's own, or the dispatcher's for the session.
fn next_of(data: &SessionData, run: Option<&super::run::RunSection>) -> NextStep {
    let s = &data.session;
    let state = data.state.as_ref();
    match run {
        Some(r) => super::run::next_step(&s.session_id, data.sref.location, r),
        None => {
            let fix_task_file = awaiting_fix_task(data).map(|(_, file)| file.to_string());
            // A session stays `planning` until phase 5 starts (CCW reads
            // it so); once phases 1–4 are done its next step is the cycle.
            let planned = (1u8..=4).all(|n| {
                s.phase(n)
                    .is_some_and(|p| p.status == PhaseStatus::Completed)
            });
            let status = match s.status.meaning() {
                SessionStatus::Planning if planned => SessionStatus::Active,
                other => other,
            };
            next_step(
                &s.session_id,
                data.sref.location,
                status,
                state,
                fix_task_file.as_deref(),
            )
        }
    }
}

/// The serde name of an enum value (`in_progress`, `test-fix`, …).
fn name_of<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A run's scope as people read it: a retest names the tests it ran.
fn scope_shown(r: &IterationRecord) -> String {
    match (r.scope, r.tier) {
        (Scope::Affected, Some(Tier::Failed)) => "failed tests".into(),
        (Scope::Affected, Some(Tier::Affected)) => "affected tests".into(),
        (scope, _) => name_of(&scope),
    }
}

fn is_rolled_back(r: &IterationRecord) -> bool {
    r.result == Some(IterationResult::RolledBack) || r.rollback_commit.is_some()
}

/// Tests judged flaky in a run: the record's own `flaky_tests`, the flaky
/// entries of the failures file of the same iteration and pass rate, and
/// for the last run the flaky failures of the latest `test-results.json`.
fn flaky_tests(data: &SessionData, r: &IterationRecord, last: bool) -> Vec<String> {
    let mut out: Vec<String> = r.flaky_tests.clone();
    let mut add = |failures: &[Failure]| {
        for f in failures.iter().filter(|f| f.flaky) {
            if !out.contains(&f.test) {
                out.push(f.test.clone());
            }
        }
    };
    if let Some(f) = data.iteration_failures.get(&r.iteration)
        && f.pass_rate == r.pass_rate
    {
        add(&f.failures);
    }
    if last && let Some(res) = &data.results {
        add(&res.failures);
    }
    out
}

/// How many failures each group lists: at most [`MAX_FAILURES_PER_GROUP`]
/// each and [`MAX_FAILURE_ROWS`] in all, newest groups first, so a long
/// session's report stays a page a browser opens quickly. The rest are
/// counted and linked.
pub fn row_limits(group_sizes: &[usize]) -> Vec<usize> {
    let mut left = MAX_FAILURE_ROWS;
    let mut out: Vec<usize> = group_sizes
        .iter()
        .rev()
        .map(|&n| {
            let take = n.min(MAX_FAILURES_PER_GROUP).min(left);
            left -= take;
            take
        })
        .collect();
    out.reverse();
    out
}

fn failure_group(
    title: String,
    iteration: Option<u32>,
    source: Link,
    all: &[Failure],
    limit: usize,
) -> FailureGroup {
    let failures = all
        .iter()
        .take(limit)
        .map(|f| FailureView {
            test: f.test.clone(),
            location: f.location(),
            criticality: name_of(&f.criticality),
            layer: name_of(&f.test_type),
            flaky: f.flaky,
            error: f.error.clone(),
            message: f.message.clone(),
        })
        .collect();
    FailureGroup {
        title,
        iteration,
        source,
        failures,
        omitted: all.len().saturating_sub(limit),
    }
}

fn call_error(c: &AgentCall) -> Option<String> {
    if c.timed_out {
        return Some("timed out".into());
    }
    if let Some(kind) = &c.error_kind {
        return Some(kind.as_str().to_string());
    }
    match c.exit_code {
        Some(code) if code != 0 => Some(format!("exit {code}")),
        _ if c.is_error => Some("agent reported an error".into()),
        _ => None,
    }
}

/// The session's agent cost: the sum of every call's reported cost
/// (`agents::total_cost`), unknown when no call reported one.
pub fn cost_view(calls: &[AgentCall], cap: Option<f64>) -> CostView {
    let reported = calls.iter().any(|c| c.cost_usd.is_some());
    let total = reported.then(|| {
        crate::agents::total_cost(&crate::artifacts::FixHistory {
            agent_calls: calls.to_vec(),
            ..Default::default()
        })
    });
    // The total and the cap side by side: the digits that tell them apart.
    let (total_text, cap_text) = match (total, cap) {
        (Some(t), Some(c)) => {
            let (t, c) = crate::money::usd_pair(t, c);
            (Some(t), Some(c))
        }
        (t, c) => (t.map(crate::money::usd), c.map(crate::money::usd)),
    };
    let mut text = match &total_text {
        Some(t) => t.clone(),
        None if calls.is_empty() => "no agent calls".into(),
        None => "not reported".into(),
    };
    if !calls.is_empty() {
        let n = calls.len();
        text.push_str(&format!(
            " ({n} agent call{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(cap) = &cap_text {
        text.push_str(&format!(" of a {cap} cap"));
    }
    CostView {
        total_usd: total,
        total: money(total),
        cap_usd: cap,
        cap: cap.map(|c| money(Some(c))).unwrap_or_default(),
        calls: calls.len(),
        text,
    }
}

/// When a task started and finished: `result.started_at/completed_at`
/// first, else the status history (first move to `in_progress`, last move
/// into the task's final status).
pub fn task_times(t: &Task) -> (Option<Timestamp>, Option<Timestamp>) {
    let result = t.result.as_ref();
    let started = result.and_then(|r| r.started_at).or_else(|| {
        t.status_history
            .iter()
            .find(|c| c.to == TaskStatus::InProgress)
            .map(|c| c.changed_at)
    });
    let finished = !matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress);
    let completed = result.and_then(|r| r.completed_at).or_else(|| {
        finished
            .then(|| {
                t.status_history
                    .iter()
                    .rev()
                    .find(|c| c.to == t.status)
                    .map(|c| c.changed_at)
            })
            .flatten()
    });
    (started, completed)
}

/// What an unfinished task is doing, by its session's status: nothing runs
/// while the session waits for a person or is paused.
fn in_progress_label(session: SessionStatus) -> &'static str {
    match session {
        SessionStatus::AwaitingFix => "awaiting fix",
        SessionStatus::Paused => "paused",
        SessionStatus::Blocked => "stopped",
        _ => "running",
    }
}

fn elapsed_ms(start: Option<Timestamp>, end: Option<Timestamp>) -> Option<u64> {
    let ms = (end? - start?).num_milliseconds();
    u64::try_from(ms).ok()
}

fn span(start: Option<Timestamp>, end: Option<Timestamp>) -> String {
    elapsed_ms(start, end).map(duration).unwrap_or_default()
}

/// The fix task a manual fix is awaited for: the state's current task when
/// it is a fix iteration, else the newest unfinished fix task.
fn awaiting_fix_task(data: &SessionData) -> Option<(&Task, &str)> {
    let is_fix = |t: &Task| t.meta.kind == TaskType::TestFixIteration;
    let current = data.state.as_ref().and_then(|s| s.current_task.as_deref());
    data.tasks
        .iter()
        .find(|(_, t)| is_fix(t) && Some(t.id.as_str()) == current)
        .or_else(|| {
            data.tasks.iter().rev().find(|(_, t)| {
                is_fix(t) && matches!(t.status, TaskStatus::Pending | TaskStatus::InProgress)
            })
        })
        .map(|(file, t)| (t, file.as_str()))
}

/// Where the session stands and why.
pub fn outcome(data: &SessionData) -> Outcome {
    let state = data.state.as_ref();
    let last = state.and_then(|s| s.iterations.last());
    let threshold = data.config.cycle.pass_threshold;
    let (kind, title, reason) = match data.session.status.meaning() {
        // `meaning()` maps other tools' values onto these.
        SessionStatus::Completed | SessionStatus::Archived => {
            ("completed", "Completed", completed_reason(last))
        }
        SessionStatus::PartialSuccess => (
            "partial_success",
            "Partial success",
            partial_reason(last, threshold),
        ),
        SessionStatus::Abandoned => (
            "abandoned",
            "Abandoned",
            "given up with `wfx session abandon`; its commits and files are kept".into(),
        ),
        SessionStatus::Blocked => (
            "blocked",
            "Blocked",
            state
                .and_then(|s| s.blocked_reason.clone())
                .unwrap_or_else(|| "blocked (no reason recorded)".into()),
        ),
        SessionStatus::AwaitingFix => (
            "awaiting_fix",
            "Awaiting a fix by hand",
            match awaiting_fix_task(data) {
                Some((t, file)) => format!(
                    "no fix agent is configured: apply the fix described in {file} ({}) by hand",
                    t.id
                ),
                None => "no fix agent is configured: apply the fix by hand".into(),
            },
        ),
        SessionStatus::Paused => (
            "paused",
            "Paused",
            match state {
                Some(s) => match &s.paused_reason {
                    Some(why) => format!("{}; resumable", why.trim_end_matches('.')),
                    None => format!(
                        "stopped before `{}` (interrupted, or an agent was unavailable); resumable",
                        s.next_action().as_str()
                    ),
                },
                None => "stopped (interrupted); resumable".into(),
            },
        ),
        SessionStatus::Planning | SessionStatus::Initialized => {
            ("planning", "Planning", planning_reason(data))
        }
        SessionStatus::Active
        | SessionStatus::InProgress
        | SessionStatus::Implementing
        | SessionStatus::Reviewing => (
            "in_progress",
            "In progress",
            in_progress_reason(state, last),
        ),
    };
    // Archived before it finished (`wfx session complete` on a paused
    // session): what it was doing stays in the reason, never a call to act.
    if data.sref.location == Location::Archived && !finished_status(data.session.status) {
        return Outcome {
            kind: "archived".into(),
            title: "Archived unfinished".into(),
            reason: format!(
                "archived while {} ({})",
                data.session.status,
                reason.trim_end_matches('.')
            ),
        };
    }
    Outcome {
        kind: kind.into(),
        title: title.into(),
        reason,
    }
}

/// Why a completed session is done.
fn completed_reason(last: Option<&IterationRecord>) -> String {
    match last {
        Some(r) if r.pass_rate >= 100.0 => format!(
            "all {} tests pass on the {} suite (run {}){}",
            r.passed,
            if r.scope == crate::artifacts::test_results::Scope::Full {
                "full"
            } else {
                "affected"
            },
            r.iteration,
            match r.total.saturating_sub(r.passed + r.failed) {
                0 => String::new(),
                n => format!("; {n} skipped"),
            }
        ),
        Some(r) => format!("completed at {} ({})", pct(r.pass_rate), r.counts()),
        None => "completed without a recorded test run".into(),
    }
}

/// Why a session ended as a partial success.
fn partial_reason(last: Option<&IterationRecord>, threshold: f64) -> String {
    match last {
        Some(r) => format!(
            "{} of the tests pass (threshold {}) and the {} remaining failure{} {} low criticality",
            pct(r.pass_rate),
            pct(threshold),
            r.failed,
            if r.failed == 1 { "" } else { "s" },
            if r.failed == 1 { "is" } else { "are all" }
        ),
        None => format!("pass rate at or above the {} threshold", pct(threshold)),
    }
}

/// Which planning phase a session is still in.
fn planning_reason(data: &SessionData) -> String {
    match (1u8..=4).find(|n| {
        data.session
            .phase(*n)
            .is_none_or(|p| !matches!(p.status, PhaseStatus::Completed | PhaseStatus::Skipped))
    }) {
        Some(n) => format!(
            "phase {n} ({}) is not finished",
            crate::artifacts::session::PHASES[usize::from(n) - 1]
        ),
        None => "planning finished; the test cycle has not started".into(),
    }
}

/// How far a running cycle has got.
fn in_progress_reason(state: Option<&IterationState>, last: Option<&IterationRecord>) -> String {
    match (state, last) {
        (Some(s), Some(r)) => format!(
            "{} test run{} so far, latest {}; next action `{}`",
            s.iterations.len(),
            if s.iterations.len() == 1 { "" } else { "s" },
            pct(r.pass_rate),
            s.next_action().as_str()
        ),
        (Some(s), None) => format!("next action `{}`", s.next_action().as_str()),
        _ => "the test cycle has not started".into(),
    }
}

/// Whether a session with this status has finished, one way or another.
fn finished_status(status: SessionStatus) -> bool {
    matches!(
        status.meaning(),
        SessionStatus::Completed | SessionStatus::PartialSuccess | SessionStatus::Blocked
    )
}

/// The exact command that moves the session forward, and what to do
/// before running it. Archived sessions are read-only: no command.
pub fn next_step(
    id: &str,
    location: Location,
    status: SessionStatus,
    state: Option<&IterationState>,
    fix_task_file: Option<&str>,
) -> NextStep {
    let action = state.map(|s| s.next_action().as_str().to_string());
    let resume = format!("wfx test-cycle-execute --resume-session={id}");
    let step = |command: String, hint: Option<String>| NextStep {
        action: action.clone(),
        command: Some(command),
        hint,
    };
    if location == Location::Archived {
        let hint = if finished_status(status) {
            "archived: the session is finished and kept read-only"
        } else {
            "archived before it finished: kept read-only; start a new session to go on"
        };
        return NextStep {
            action,
            command: None,
            hint: Some(hint.into()),
        };
    }
    let next = state.map(|s| s.next_action());
    match status.meaning() {
        SessionStatus::Completed | SessionStatus::PartialSuccess => step(
            format!("wfx session complete {id}"),
            Some("archive the finished session".into()),
        ),
        SessionStatus::Blocked => {
            let cost_cap = state
                .and_then(|s| s.blocked_reason.as_deref())
                .is_some_and(|r| r.contains("max_cost_usd"));
            if cost_cap {
                step(
                    format!("wfx session resume {id} && {resume}"),
                    Some("raise agents.max_cost_usd in .workflow/wfx.json, then".into()),
                )
            } else {
                let retry = state.map_or(0, |s| {
                    let mut fixes: Vec<&str> = s
                        .iterations
                        .iter()
                        .filter_map(|r| r.fix_task.as_deref())
                        .collect();
                    fixes.dedup();
                    retry_max_iterations(s.max_iterations, fixes.len() as u32)
                });
                step(
                    format!("wfx session resume {id} && {resume} --max-iterations={retry}"),
                    Some("read .process/failure-report.md; to allow more fix attempts run".into()),
                )
            }
        }
        SessionStatus::AwaitingFix => step(
            resume,
            Some(match fix_task_file {
                Some(f) => format!("edit the files as {f} describes, then"),
                None => "edit the files to fix the failing tests, then".into(),
            }),
        ),
        SessionStatus::Paused => step(resume, Some("continue where it stopped".into())),
        SessionStatus::Planning if state.is_none() => step(
            format!("wfx test-fix-gen {id}"),
            Some("finish planning (phases 1–4)".into()),
        ),
        _ if next == Some(NextAction::None) => step(
            format!("wfx session complete {id}"),
            Some("nothing left to run; archive the session".into()),
        ),
        _ if next == Some(NextAction::Complete) => {
            step(resume, Some("finish: final commit and archive".into()))
        }
        _ => step(resume, None),
    }
}

/// Pass rates as Unicode blocks. █ is always 100 % (a full block means
/// every test passes); ▁ is 10 points below the lowest rate rounded down
/// to a multiple of 10, so a change of a few points is visible without
/// making 99 % look like a failure.
pub fn sparkline(rates: &[f64]) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let Some(min) = rates.iter().copied().reduce(f64::min) else {
        return String::new();
    };
    let low = ((min.clamp(0.0, 100.0) / 10.0).floor() * 10.0 - 10.0).max(0.0);
    rates
        .iter()
        .map(|r| {
            let i = ((r.clamp(low, 100.0) - low) / (100.0 - low) * 7.0).round() as usize;
            BLOCKS[i.min(7)]
        })
        .collect()
}

/// `42.5%`.
pub fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// `$0.42`, or `–` when not reported.
pub fn money(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), crate::money::usd)
}

/// Short form of a commit id (10 hex digits).
pub fn short_commit(c: &str) -> String {
    c.chars().take(10).collect()
}

/// `2026-01-01 12:00:00 UTC`.
pub fn timestamp(t: &Timestamp) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// Durations in reports: the crate's one formatter.
pub use crate::engine::duration::millis as duration;

/// Width in percent of a diffstat bar.
fn bar(n: u32, max: u32) -> u32 {
    if max == 0 {
        return 0;
    }
    ((n as u64 * 100).div_ceil(max as u64)) as u32
}

/// What a file of a session directory is for (`name` relative to the
/// session directory). The same list is documented in docs/artifacts.md.
pub fn describe_artifact(name: &str) -> &'static str {
    let file = name.rsplit('/').next().unwrap_or(name);
    let iteration_suffix = file
        .strip_prefix("iteration-")
        .and_then(|rest| rest.split_once('-'))
        .filter(|(n, _)| n.parse::<u32>().is_ok())
        .map(|(_, suffix)| suffix);
    if name.starts_with(".process/step-") {
        return describe_run_file(file);
    }
    if name.starts_with(".summaries/iteration-summaries/") {
        return "What one fix iteration did and how the retest went";
    }
    if name.starts_with(".summaries/") {
        return "Summary of a finished task";
    }
    if name.starts_with(".task/") {
        return if file.starts_with("IMPL-fix-") {
            "Fix task of one iteration: failures, fix strategy, result"
        } else {
            "Task definition, status and status history"
        };
    }
    if name.starts_with(".process/junit/") {
        return "Structured report the test runner wrote (JUnit XML, TAP or JSON)";
    }
    match (file, iteration_suffix) {
        (_, Some("failures.json")) => "The failures a fix was asked to address",
        (_, Some("analysis.md")) => "Failure analysis and fix strategy of one iteration",
        (_, Some("prompt.md")) => "Exactly what the analysis agent was sent",
        (_, Some("cli-output.txt")) => "Exactly what the analysis agent printed",
        (_, Some("fix-prompt.md")) => "Exactly what the fix agent was sent",
        (_, Some("fix-cli-output.txt")) => "Exactly what the fix agent printed",
        (_, Some("results.json")) => "This test run, parsed",
        (_, Some("test-output.log")) => "Full output of this test run",
        (_, Some("rerun-output.log")) => "Re-run of this run's new failures, to tell flaky tests",
        (_, Some(s)) if s.ends_with("-cli-output.txt") => {
            "Exactly what a fallback analysis agent printed"
        }
        ("workflow-session.json", _) => "Session identity, status and phase progress",
        ("IMPL_PLAN.md", _) => "The test plan: tasks, layers, thresholds",
        ("TODO_LIST.md", _) => "Checklist of tasks and iterations",
        ("test-planning-notes.md", _) => "Inputs and decisions of planning (phases 1–4)",
        (".gitignore", _) => "Keeps logs and raw agent output out of commits",
        ("context-package.json", _) => "Project context gathered in phase 2",
        ("test-context-package.json", _) => {
            "Project context gathered in phase 2, with the source session"
        }
        ("TEST_ANALYSIS_RESULTS.md", _) => "Phase 3 analysis: project type, coverage, test plan",
        ("analysis-agent-output.md", _) => "Raw output of the phase 3 analysis agent",
        ("iteration-state.json", _) => "The state machine: next action, runs, stuck tests",
        ("test-results.json", _) => "Latest parsed test run",
        ("test-output.log", _) => "Full output of the latest test run",
        ("fix-history.json", _) => "Every fix attempt and agent call, with cost",
        ("failure-report.md", _) => "Written when the session was blocked: why, and how to resume",
        ("workflow.yml", _) => "The workflow as it was run (wfx run)",
        ("run-state.json", _) => "The run's state: current step, attempt and phase, every record",
        ("run.log", _) => "Progress lines of the run, timestamped",
        ("analysis-agent-prompt.md", _) => "Exactly what the phase 3 analysis agent was sent",
        ("requirements.md", _) => "The description the session was planned from",
        (f, _) if f.ends_with("-prompt.md") => "Exactly what the agent running this task was sent",
        (f, _) if f.ends_with("-cli-output.txt") => {
            "Exactly what the agent running this task printed"
        }
        (f, _) if f.ends_with("-l0.log") => {
            "Output of the static checks (compile, lint) of code validation"
        }
        (f, _) if f.ends_with("-coverage.log") => {
            "Output of the coverage command of the test-quality review"
        }
        _ => "Not a file wfx writes: kept as found",
    }
}

/// What a file of a `wfx run` step directory (`.process/step-NN/…`) is for.
fn describe_run_file(file: &str) -> &'static str {
    match file {
        "command.txt" => "The step's shell command as run",
        "output.log" => "Output of the step's shell command",
        "claude-prompt.md" => "Exactly what claude was sent",
        "claude-cli-output.txt" => "Exactly what claude printed",
        "claude-result.md" => "claude's result text (the step's output)",
        "test-output.log" => "Full output of this test run",
        "test-results.json" => "This test run, parsed",
        "debug-command.txt" => "The on_failure shell command of this attempt, as run",
        "debug-output.log" => "Output of the on_failure shell command",
        "debug-prompt.md" => "Exactly what claude was sent in this attempt",
        "debug-cli-output.txt" => "Exactly what claude printed in this attempt",
        "attempt.json" => "The attempt's record: debug command, re-run, outcome",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_tops_out_at_100() {
        assert_eq!(sparkline(&[]), "");
        assert_eq!(sparkline(&[0.0, 50.0, 100.0]), "▁▅█");
        assert_eq!(sparkline(&[-3.0, 14.3, 90.0, 95.0, 120.0]), "▁▂▇██");
        // Lowest 50 → scale 40..100.
        assert_eq!(sparkline(&[50.0, 50.0, 60.0, 60.0]), "▂▂▃▃");
        assert_eq!(sparkline(&[60.0, 80.0, 50.0, 90.0, 100.0]), "▃▆▂▇█");
        assert_eq!(sparkline(&[99.0, 99.5]), "██");
        assert_eq!(sparkline(&[100.0]), "█");
    }

    #[test]
    fn durations() {
        for (ms, want) in [
            (0, "0 ms"),
            (850, "850 ms"),
            (12_340, "12 s"),
            (245_000, "4 min 5 s"),
            (7_380_000, "2 h 3 min"),
        ] {
            assert_eq!(duration(ms), want);
        }
    }

    #[test]
    fn failure_rows_are_capped_newest_first() {
        assert_eq!(row_limits(&[]), Vec::<usize>::new());
        assert_eq!(row_limits(&[3, 0, 250]), [3, 0, 200]);
        let many = vec![500; 12];
        let got = row_limits(&many);
        assert_eq!(got.iter().sum::<usize>(), MAX_FAILURE_ROWS);
        assert_eq!(&got[..2], [0, 0]);
        assert_eq!(&got[2..], [200; 10]);
        let mut sizes = vec![100, 150];
        sizes.extend([200; 9]);
        let mut want = vec![50, 150];
        want.extend([200; 9]);
        assert_eq!(row_limits(&sizes), want);
    }

    #[test]
    fn bars_scale_to_the_largest_change() {
        assert_eq!(bar(0, 0), 0);
        assert_eq!(bar(5, 10), 50);
        assert_eq!(bar(1, 3), 34);
        assert_eq!(bar(10, 10), 100);
    }

    #[test]
    fn artifacts_are_described() {
        for (name, want) in [
            (
                ".process/iteration-3-prompt.md",
                "Exactly what the analysis agent was sent",
            ),
            (
                ".process/iteration-12-failures.json",
                "The failures a fix was asked to address",
            ),
            (
                ".task/IMPL-fix-2.json",
                "Fix task of one iteration: failures, fix strategy, result",
            ),
            (
                ".task/IMPL-001.json",
                "Task definition, status and status history",
            ),
            (
                ".summaries/iteration-summaries/iteration-1.md",
                "What one fix iteration did and how the retest went",
            ),
            (
                ".process/iteration-state.json",
                "The state machine: next action, runs, stuck tests",
            ),
            ("notes-by-hand.txt", "Not a file wfx writes: kept as found"),
            (
                ".process/iteration-1-fix-prompt.md",
                "Exactly what the fix agent was sent",
            ),
            (
                ".process/iteration-1-fix-cli-output.txt",
                "Exactly what the fix agent printed",
            ),
            (".process/iteration-2-results.json", "This test run, parsed"),
            (
                ".process/iteration-2-test-output.log",
                "Full output of this test run",
            ),
            (
                ".process/iteration-1-rerun-output.log",
                "Re-run of this run's new failures, to tell flaky tests",
            ),
            (
                ".process/iteration-3-gemini-cli-output.txt",
                "Exactly what a fallback analysis agent printed",
            ),
            (
                ".process/IMPL-001-prompt.md",
                "Exactly what the agent running this task was sent",
            ),
            (
                ".process/IMPL-001.3-l0.log",
                "Output of the static checks (compile, lint) of code validation",
            ),
            (
                ".process/junit/pytest.xml",
                "Structured report the test runner wrote (JUnit XML, TAP or JSON)",
            ),
            (
                ".process/step-02/attempt-1/test-output.log",
                "Full output of this test run",
            ),
            (
                ".process/step-02/attempt-1/debug-command.txt",
                "The on_failure shell command of this attempt, as run",
            ),
            (
                ".process/run-state.json",
                "The run's state: current step, attempt and phase, every record",
            ),
        ] {
            assert_eq!(describe_artifact(name), want, "{name}");
        }
    }

    fn state(next: NextAction, current: u32, max: u32, reason: Option<&str>) -> IterationState {
        let t = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .to_utc();
        IterationState {
            session_id: "WFS-x".into(),
            current_task: None,
            queue: vec![],
            current_iteration: current,
            max_iterations: max,
            selected_strategy: None,
            action: serde_json::from_value::<IterationState>(serde_json::json!({
                "session_id": "WFS-x", "max_iterations": max, "next_action": next,
                "status": "running", "started_at": t, "updated_at": t,
                "pending_rollback": {"kind": "rollback", "iteration": 1, "message": "m"}
            }))
            .unwrap()
            .action,
            status: crate::artifacts::iteration_state::LoopStatus::Running,
            started_at: t,
            updated_at: t,
            best_pass_rate: None,
            stuck_tests: vec![],
            blocked_reason: reason.map(str::to_string),
            paused_reason: None,
            iterations: vec![],
            baseline_run: None,
            pending_commit: None,
            tasks_snapshot: None,
            tests_commit: None,
            test_infrastructure: None,
            sealed_environment: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn next_step_per_state() {
        use Location as L;
        use SessionStatus as S;
        let resume = "wfx test-cycle-execute --resume-session=WFS-x";
        let analyze = state(NextAction::AnalyzeFailures, 2, 10, None);
        let limit = state(
            NextAction::None,
            3,
            3,
            Some("reached the limit of 3 fix attempts"),
        );
        let cost = state(
            NextAction::None,
            1,
            10,
            Some("agent cost cap reached: $5.00 spent of agents.max_cost_usd $5.00"),
        );
        let complete = state(NextAction::Complete, 2, 10, None);
        // (location, status, state, fix task file, command, hint)
        type Case<'a> = (
            Location,
            SessionStatus,
            Option<&'a IterationState>,
            Option<&'a str>,
            Option<String>,
            Option<&'a str>,
        );
        let cases: Vec<Case> = vec![
            (
                L::Archived,
                S::Completed,
                None,
                None,
                None,
                Some("archived: the session is finished and kept read-only"),
            ),
            (
                L::Active,
                S::Completed,
                None,
                None,
                Some("wfx session complete WFS-x".into()),
                Some("archive the finished session"),
            ),
            (
                L::Active,
                S::PartialSuccess,
                Some(&complete),
                None,
                Some("wfx session complete WFS-x".into()),
                Some("archive the finished session"),
            ),
            (
                L::Active,
                S::Blocked,
                Some(&limit),
                None,
                Some(format!(
                    "wfx session resume WFS-x && {resume} --max-iterations=5"
                )),
                Some("read .process/failure-report.md; to allow more fix attempts run"),
            ),
            (
                L::Active,
                S::Blocked,
                Some(&cost),
                None,
                Some(format!("wfx session resume WFS-x && {resume}")),
                Some("raise agents.max_cost_usd in .workflow/wfx.json, then"),
            ),
            (
                L::Active,
                S::AwaitingFix,
                Some(&analyze),
                Some(".workflow/active/WFS-x/.task/IMPL-fix-2.json"),
                Some(resume.into()),
                Some(
                    "edit the files as .workflow/active/WFS-x/.task/IMPL-fix-2.json describes, then",
                ),
            ),
            (
                L::Active,
                S::AwaitingFix,
                None,
                None,
                Some(resume.into()),
                Some("edit the files to fix the failing tests, then"),
            ),
            (
                L::Active,
                S::Paused,
                Some(&analyze),
                None,
                Some(resume.into()),
                Some("continue where it stopped"),
            ),
            (
                L::Active,
                S::Planning,
                None,
                None,
                Some("wfx test-fix-gen WFS-x".into()),
                Some("finish planning (phases 1–4)"),
            ),
            (
                L::Active,
                S::Active,
                Some(&analyze),
                None,
                Some(resume.into()),
                None,
            ),
            (L::Active, S::Active, None, None, Some(resume.into()), None),
            (
                L::Active,
                S::Active,
                Some(&complete),
                None,
                Some(resume.into()),
                Some("finish: final commit and archive"),
            ),
        ];
        for (loc, status, st, fix, command, hint) in cases {
            let got = next_step("WFS-x", loc, status, st, fix);
            assert_eq!(got.command, command, "{loc:?} {status:?}");
            assert_eq!(got.hint.as_deref(), hint, "{loc:?} {status:?}");
            assert_eq!(got.action, st.map(|s| s.next_action().as_str().to_string()));
        }
    }

    #[test]
    fn cost_sums_reported_calls() {
        let call = |cost: Option<f64>| AgentCall {
            iteration: Some(1),
            task: None,
            role: crate::agents::Role::Fix,
            agent: "claude".into(),
            started_at: chrono::Utc::now(),
            duration_ms: 1,
            exit_code: Some(0),
            timed_out: false,
            is_error: false,
            error_kind: None,
            cost_usd: cost,
            turns: None,
            input_tokens: None,
            output_tokens: None,
            outcome: crate::artifacts::fix_history::CallOutcome::Accepted,
            prompt_file: None,
            output_file: None,
            tamper: None,
            candidate: None,
            extra: Default::default(),
        };
        let none = cost_view(&[], None);
        assert_eq!(
            (none.total_usd, none.text.as_str()),
            (None, "no agent calls")
        );
        let unknown = cost_view(&[call(None)], None);
        assert_eq!(unknown.text, "not reported (1 agent call)");
        let some = cost_view(&[call(Some(0.25)), call(None), call(Some(1.0))], Some(5.0));
        assert_eq!(some.total_usd, Some(1.25));
        assert_eq!(some.text, "$1.25 (3 agent calls) of a $5.00 cap");
    }
}
