//! Where each run's files are, and rendering the documents a step changed
//! (the `Doc`s of the state's outbox) for the session transaction: the
//! JSON artifacts the machine reads back are durable, the Markdown views
//! (TODO list, summaries, the failure report) and the `test-results.json`
//! copy are replaced atomically without fsync.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::machine::CycleMachine;
use super::report;
use super::state::{CycleState, Doc};
use crate::artifacts::FixHistory;
use crate::artifacts::config::ArtifactPolicy;
use crate::artifacts::iteration_state::{IterationRecord, IterationState, LoopStatus};
use crate::engine::txn::{Document, Durability};
use crate::error::Result;
use crate::phases::tasks::{TODO_TEMPLATE, TodoView, render_task_summary, todo_view};
use crate::render::Renderer;
use crate::session::SessionPaths;

/// File stem of a run's results and log: `iteration-N` for the first run
/// of iteration N, `iteration-N-runK` for its K-th (an affected retest,
/// then the full validation: each run has its own files).
pub fn run_stem(iteration: u32, ordinal: usize) -> String {
    if ordinal <= 1 {
        format!("iteration-{iteration}")
    } else {
        format!("iteration-{iteration}-run{ordinal}")
    }
}

/// `(results file, log)` of a recorded run in the session as it is now
/// (records name them relative to the project root when they were
/// written; the session may have moved since, so the names count).
pub fn run_files(paths: &SessionPaths, rec: &IterationRecord) -> (PathBuf, PathBuf) {
    let in_process = |recorded: &Option<String>, default: String| {
        let name = recorded
            .as_deref()
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(default);
        paths.process_dir().join(name)
    };
    let stem = format!("iteration-{}", rec.iteration);
    (
        in_process(&rec.results_file, format!("{stem}-results.json")),
        in_process(&rec.output_log, format!("{stem}-test-output.log")),
    )
}

/// `(results file, log)` for the next run of iteration `n`.
pub fn new_run_files(paths: &SessionPaths, state: &CycleState, n: u32) -> (PathBuf, PathBuf) {
    let ordinal = state
        .iter
        .iterations
        .iter()
        .filter(|r| r.iteration == n)
        .count()
        + 1;
    let stem = run_stem(n, ordinal);
    (
        paths.process_dir().join(format!("{stem}-results.json")),
        paths.process_dir().join(format!("{stem}-test-output.log")),
    )
}

/// A view's last text and the context it was rendered from. Rendering is
/// a function of the template's text and the context alone, so a step
/// whose context equals the last one gets the same bytes without asking
/// the template engine again (issue #30: a quarter of the cycle's steps
/// touch the TODO list without changing what it shows). The document is
/// still handed to the transaction every time it is asked for: what is
/// on disk, and what is put back when someone else edits it, stays as it
/// was.
#[derive(Debug, Clone)]
pub struct Memo<C> {
    last: Option<(C, String)>,
}

impl<C> Default for Memo<C> {
    fn default() -> Self {
        Memo { last: None }
    }
}

impl<C: PartialEq + Serialize> Memo<C> {
    /// The text of `template` for `ctx`. Only the built-in template is
    /// remembered: a project's override is rendered every time, as it
    /// may be edited while wfx runs.
    pub fn render(&mut self, renderer: &Renderer, template: &str, ctx: C) -> Result<String> {
        let source = renderer.source(template)?;
        let builtin = source.1.is_none();
        if let Some((last, text)) = &self.last
            && builtin
            && *last == ctx
        {
            return Ok(text.clone());
        }
        let text = renderer.render_source(template, source, &ctx)?;
        self.last = builtin.then(|| (ctx, text.clone()));
        Ok(text)
    }
}

/// The views this run rendered (kept in memory only: a new run, resumed
/// or not, renders each view it is asked for at least once).
#[derive(Debug, Clone, Default)]
pub struct Views {
    todo: Memo<TodoView>,
}

/// The summary of iteration `n`, once it has a run.
fn iteration_summary(
    m: &CycleMachine,
    s: &CycleState,
    paths: &SessionPaths,
    n: u32,
) -> Result<Option<Document>> {
    let Some(rec) = s.last_of_iteration(n) else {
        return Ok(None);
    };
    let prev = s.iter.iterations.iter().rev().find(|r| r.iteration < n);
    let attempt = s.history.entries.iter().find(|e| e.iteration == n);
    let text =
        report::iteration_summary(&m.renderer, rec, prev, attempt, s.session.git.hooks_skipped)?;
    Ok(Some(Document::new(
        paths.iteration_summary(n),
        text,
        Durability::View,
    )))
}

/// Render the documents of the outbox (the state last) and empty it.
pub fn documents(m: &CycleMachine, s: &mut CycleState) -> Result<Vec<Document>> {
    let outbox = std::mem::take(&mut s.outbox);
    if outbox.is_empty() {
        return Ok(Vec::new());
    }
    let paths = m.paths(s);
    let mut docs = Vec::new();
    let mut state = false;
    for doc in outbox {
        match doc {
            Doc::State => state = true,
            Doc::History => docs.push(Document::json(
                paths.fix_history(),
                &s.history,
                Durability::Durable,
            )?),
            Doc::Session => {
                s.session.updated_at = s.now;
                docs.push(Document::json(
                    paths.session_json(),
                    &s.session,
                    Durability::Durable,
                )?);
            }
            Doc::Task(id) => {
                if let Some((path, task)) = s.tasks.iter().find(|(_, t)| t.id == id) {
                    let path = in_session(&paths, path);
                    docs.push(Document::json(path, task, Durability::Durable)?);
                }
            }
            Doc::TaskSummary(id) => {
                if let Some(task) = s.task(&id) {
                    let text = render_task_summary(&m.renderer, task)?;
                    docs.push(Document::new(
                        paths.task_summary(&id),
                        text,
                        Durability::View,
                    ));
                }
            }
            Doc::Results(run) => {
                if let (Some(rec), Some(results)) = (s.record(run), s.results.get(&run)) {
                    let (file, _) = run_files(&paths, rec);
                    // One serialisation for the run's file and its copy.
                    let run = Document::json(file, results.as_ref(), Durability::Durable)?;
                    let copy =
                        Document::new(paths.test_results(), run.bytes.clone(), Durability::View);
                    docs.extend([run, copy]);
                }
            }
            Doc::IterationSummary(n) => docs.extend(iteration_summary(m, s, &paths, n)?),
            Doc::Todo => {
                let view = todo_view(&paths, &s.session.description, &s.tasks, Some(&s.iter));
                let text = s.views.todo.render(&m.renderer, TODO_TEMPLATE, view)?;
                docs.push(Document::new(paths.todo_list(), text, Durability::View));
            }
            Doc::FailureReport(reason) => {
                let text = report::failure_report(m, s, &reason)?;
                docs.push(Document::new(
                    paths.failure_report(),
                    text,
                    Durability::View,
                ));
            }
            Doc::Raw(path, bytes, durability) => {
                docs.push(Document::new(in_session(&paths, &path), bytes, durability));
            }
        }
    }
    if state {
        // The session's `.gitignore` is wfx's file like the others: kept
        // with every state (and so guarded like them), an agent that
        // empties it cannot get the raw logs, with their unredacted
        // output, into a commit.
        let ignore = finished_gitignore(m.config.git.artifacts, &s.iter, &s.history)
            .unwrap_or_else(|| crate::session::layout::session_gitignore(m.config.git.artifacts));
        docs.push(Document::new(paths.gitignore(), ignore, Durability::View));
        s.iter.updated_at = s.now;
        docs.push(Document::json(
            paths.iteration_state(),
            &s.iter,
            Durability::State,
        )?);
    }
    Ok(docs)
}

/// The session's `.gitignore` once it has finished without any commit of
/// its own, under `git.artifacts = summary`: a session that fixed nothing
/// leaves one small record in history (its manifest entry), not its plan
/// and task files. `None` while it runs, after it committed anything, and
/// under the other policies.
pub fn finished_gitignore(
    policy: ArtifactPolicy,
    iter: &IterationState,
    history: &FixHistory,
) -> Option<String> {
    let finished = matches!(
        iter.status,
        LoopStatus::Completed | LoopStatus::PartialSuccess
    );
    let committed = iter.tests_commit.is_some()
        || iter.pending_commit.is_some()
        || iter
            .iterations
            .iter()
            .any(|r| r.fix_commit.is_some() || r.rollback_commit.is_some())
        || history.entries.iter().any(|e| e.commit.is_some());
    (policy == ArtifactPolicy::Summary && finished && !committed)
        .then(crate::session::layout::record_only_gitignore)
}

/// A path recorded under the session's directory, rebased onto where the
/// session is now (it moves to `archives/` at the end).
fn in_session(paths: &SessionPaths, path: &Path) -> PathBuf {
    let id = &paths.id;
    let mut rest = PathBuf::new();
    let mut found = false;
    for c in path.components() {
        if found {
            rest.push(c);
        } else if c.as_os_str() == id.as_str() {
            found = true;
        }
    }
    if found {
        paths.dir.join(rest)
    } else {
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::task::{Task, TaskStatus};
    use crate::phases::tasks::render_todo_list;

    /// A session with two tasks, the first done.
    fn two_tasks(paths: &SessionPaths) -> Vec<(PathBuf, Task)> {
        ["IMPL-001", "IMPL-002"]
            .into_iter()
            .map(|id| {
                let task: Task = serde_json::from_value(serde_json::json!({
                    "id": id, "title": format!("Task {id}"), "status": "pending",
                    "meta": {"type": "test-fix"}
                }))
                .unwrap();
                (paths.new_task_file(id), task)
            })
            .collect()
    }

    /// The TODO list through the memo, checked against a full render.
    fn todo(
        memo: &mut Memo<TodoView>,
        r: &Renderer,
        paths: &SessionPaths,
        tasks: &[(PathBuf, Task)],
    ) -> String {
        let text = memo
            .render(r, TODO_TEMPLATE, todo_view(paths, "Fix", tasks, None))
            .unwrap();
        assert_eq!(
            text,
            render_todo_list(r, paths, "Fix", tasks, None).unwrap()
        );
        text
    }

    /// What the list shows changes with a task's status and with its
    /// summary appearing on disk (a fact outside the state): each change
    /// is rendered; an unchanged view is the remembered text.
    #[test]
    fn the_todo_list_is_rendered_again_when_what_it_shows_changed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(dir.path().join("WFS-t"), "WFS-t");
        let r = Renderer::new(Some(&dir.path().join("templates")));
        let mut memo = Memo::default();
        let mut tasks = two_tasks(&paths);
        let first = todo(&mut memo, &r, &paths, &tasks);
        // Remembered: the same view gives the remembered text.
        let (_, text) = memo.last.as_mut().unwrap();
        *text = "remembered".into();
        let again = memo
            .render(&r, TODO_TEMPLATE, todo_view(&paths, "Fix", &tasks, None))
            .unwrap();
        assert_eq!(again, "remembered");
        memo = Memo::default();
        assert_eq!(todo(&mut memo, &r, &paths, &tasks), first);

        tasks[0].1.status = TaskStatus::Completed;
        let done = todo(&mut memo, &r, &paths, &tasks);
        assert!(done.contains("- [x] **IMPL-001**"), "{done}");
        assert!(done.contains("./.task/IMPL-001.json"), "{done}");
        std::fs::create_dir_all(paths.summaries_dir()).unwrap();
        std::fs::write(paths.task_summary("IMPL-001"), "done").unwrap();
        let linked = todo(&mut memo, &r, &paths, &tasks);
        assert!(
            linked.contains("./.summaries/IMPL-001-summary.md"),
            "{linked}"
        );
        tasks[1].1.status = TaskStatus::InProgress;
        let running = todo(&mut memo, &r, &paths, &tasks);
        assert!(running.contains("(in_progress)"), "{running}");
        assert_eq!(todo(&mut memo, &r, &paths, &tasks), running);
    }

    /// A project's override of the template is read at every render (it
    /// may change while wfx runs); back to the built-in once removed.
    #[test]
    fn an_override_of_the_todo_template_is_never_served_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(dir.path().join("WFS-t"), "WFS-t");
        let templates = dir.path().join("templates");
        std::fs::create_dir_all(&templates).unwrap();
        let r = Renderer::new(Some(&templates));
        let mut memo = Memo::default();
        let tasks = two_tasks(&paths);
        let builtin = todo(&mut memo, &r, &paths, &tasks);
        let over = templates.join(TODO_TEMPLATE);
        std::fs::write(&over, "A {{ description }}").unwrap();
        assert_eq!(todo(&mut memo, &r, &paths, &tasks), "A Fix");
        std::fs::write(&over, "B {{ description }}").unwrap();
        assert_eq!(todo(&mut memo, &r, &paths, &tasks), "B Fix");
        std::fs::remove_file(&over).unwrap();
        assert_eq!(todo(&mut memo, &r, &paths, &tasks), builtin);
    }

    #[test]
    fn each_run_has_its_own_files() {
        assert_eq!(run_stem(2, 1), "iteration-2");
        assert_eq!(run_stem(2, 2), "iteration-2-run2");
        let paths = SessionPaths::new(PathBuf::from("/p/.workflow/archives/WFS-a"), "WFS-a");
        let rec: IterationRecord = serde_json::from_value(serde_json::json!({
            "iteration": 2, "run": 3, "started_at": "2026-01-01T00:00:00Z", "scope": "full",
            "pass_rate": 100.0, "total": 1, "passed": 1, "failed": 0,
            "results_file": ".workflow/active/WFS-a/.process/iteration-2-run2-results.json"
        }))
        .unwrap();
        let (results, log) = run_files(&paths, &rec);
        assert_eq!(
            results,
            PathBuf::from("/p/.workflow/archives/WFS-a/.process/iteration-2-run2-results.json")
        );
        assert_eq!(
            log,
            PathBuf::from("/p/.workflow/archives/WFS-a/.process/iteration-2-test-output.log"),
            "a record without a log name keeps 0.1's name"
        );
        assert_eq!(
            in_session(&paths, Path::new("/p/.workflow/active/WFS-a/.task/T.json")),
            PathBuf::from("/p/.workflow/archives/WFS-a/.task/T.json")
        );
    }

    #[test]
    fn a_finished_session_that_committed_nothing_keeps_all_its_files_out() {
        let rec: IterationRecord = serde_json::from_value(serde_json::json!({
            "iteration": 1, "run": 1, "started_at": "2026-01-01T00:00:00Z", "scope": "full",
            "pass_rate": 100.0, "total": 1, "passed": 1, "failed": 0
        }))
        .unwrap();
        let done = |status: LoopStatus| {
            let mut st = crate::cycle::initial_state("WFS-a", &[], 10, rec.started_at);
            st.status = status;
            st.iterations.push(rec.clone());
            st
        };
        let none = FixHistory::default();
        let record_only = Some(crate::session::layout::record_only_gitignore());
        for status in [LoopStatus::Completed, LoopStatus::PartialSuccess] {
            assert_eq!(
                finished_gitignore(ArtifactPolicy::Summary, &done(status), &none),
                record_only
            );
        }
        // Still running, or blocked: the policy's own ignore file.
        for status in [LoopStatus::Running, LoopStatus::Blocked] {
            assert_eq!(
                finished_gitignore(ArtifactPolicy::Summary, &done(status), &none),
                None
            );
        }
        // Another policy, chosen on purpose, stands.
        for policy in [ArtifactPolicy::All, ArtifactPolicy::None] {
            assert_eq!(
                finished_gitignore(policy, &done(LoopStatus::Completed), &none),
                None
            );
        }
        // Any commit of the session: its tracked files stay tracked.
        let mut fixed = done(LoopStatus::Completed);
        fixed.iterations[0].fix_commit = Some("abc".into());
        let mut tests = done(LoopStatus::Completed);
        tests.tests_commit = Some("abc".into());
        for st in [fixed, tests] {
            assert_eq!(
                finished_gitignore(ArtifactPolicy::Summary, &st, &none),
                None
            );
        }
    }
}
