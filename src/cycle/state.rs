//! The typed state of the test-fix machine: what phase 5 persists (the
//! iteration state, fix history, tasks, the session record, each run's
//! results) and what a run keeps in memory (why it stopped, the documents
//! a step changed). Counts — attempts, runs, pass rates, cost — come only
//! from here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::artifacts::Timestamp;
use crate::artifacts::fix_history::FixHistory;
use crate::artifacts::iteration_state::{IterationRecord, IterationState};
use crate::artifacts::session::WorkflowSession;
use crate::artifacts::task::{Task, TaskResult, TaskStatus};
use crate::artifacts::test_results::TestResults;
use crate::engine::PauseReason;
use crate::engine::txn::Durability;
use crate::session::Location;

/// The state of one phase-5 session.
#[derive(Debug, Clone)]
pub struct CycleState {
    /// `iteration-state.json`: the state machine, the step's commit point.
    pub iter: IterationState,
    /// `fix-history.json`.
    pub history: FixHistory,
    /// `.task/*.json` (file, task), in task order.
    pub tasks: Vec<(PathBuf, Task)>,
    /// `workflow-session.json`.
    pub session: WorkflowSession,
    pub location: Location,
    /// Parsed results by run number (the runs a decision still needs).
    pub results: BTreeMap<u32, Arc<TestResults>>,
    /// Why this run stopped, once it did (not persisted: a new run starts
    /// without one).
    pub stop: Option<Stop>,
    /// IMPL-001.3's soft-fail fix is due before the next validation.
    pub validation_fix_due: bool,
    /// A resumed run looks at the files outside the commit again: what a
    /// person did between runs (an install step that generates a module)
    /// joins the sealed runs' environment (not persisted).
    pub survey_due: bool,
    /// The time of the observation being folded in.
    pub now: Timestamp,
    /// Documents changed since the last commit.
    pub outbox: Vec<Doc>,
    /// The views rendered so far, to render each again only when what it
    /// shows changed (not persisted).
    pub views: super::docs::Views,
}

/// Why a run of the machine ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    Paused(PauseReason),
    /// Blocked; `just_now` is false for a session that was blocked before
    /// this run and was not reopened.
    Blocked {
        just_now: bool,
    },
    /// Completed and archived, with the final commit.
    Finished {
        commit: Option<String>,
    },
}

/// A document a step changed, rendered when the step commits.
#[derive(Debug, Clone, PartialEq)]
pub enum Doc {
    State,
    History,
    Session,
    Task(String),
    TaskSummary(String),
    /// A run's results (and `test-results.json`, the latest).
    Results(u32),
    /// The summary of an iteration (by iteration number).
    IterationSummary(u32),
    Todo,
    FailureReport(String),
    /// Bytes made by an effect (an analysis), written as they are.
    Raw(PathBuf, Vec<u8>, Durability),
}

impl CycleState {
    /// Mark a document changed (once).
    pub fn touch(&mut self, doc: Doc) {
        if !self.outbox.contains(&doc) {
            self.outbox.push(doc);
        }
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|(_, t)| t.id == id).map(|(_, t)| t)
    }

    /// Replace (or add) a task; the file is written with the step.
    pub fn put_task(&mut self, task: Task, new_file: impl FnOnce(&str) -> PathBuf) {
        let id = task.id.clone();
        match self.tasks.iter_mut().find(|(_, t)| t.id == id) {
            Some(slot) => slot.1 = task,
            None => {
                let path = new_file(&id);
                self.tasks.push((path, task));
                self.tasks
                    .sort_by_key(|(_, t)| crate::session::task_order(&t.id));
            }
        }
        self.touch(Doc::Task(id));
        self.touch(Doc::Todo);
    }

    /// Change a task's status (appending to `status_history`).
    pub fn set_task_status(&mut self, id: &str, to: TaskStatus, reason: &str) {
        let now = self.now;
        let Some((_, task)) = self.tasks.iter_mut().find(|(_, t)| t.id == id) else {
            return;
        };
        if task.status == to {
            return;
        }
        task.set_status(to, reason, now);
        let result = task.result.get_or_insert_with(TaskResult::default);
        if to == TaskStatus::InProgress {
            result.started_at.get_or_insert(now);
        }
        if matches!(
            to,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Skipped | TaskStatus::Blocked
        ) {
            result.completed_at = Some(now);
        }
        let id = id.to_string();
        self.touch(Doc::Task(id));
        self.touch(Doc::Todo);
    }

    /// Change a task's result (and meta) with `f`.
    pub fn update_task(&mut self, id: &str, f: impl FnOnce(&mut Task)) {
        if let Some((_, task)) = self.tasks.iter_mut().find(|(_, t)| t.id == id) {
            f(task);
            let id = id.to_string();
            self.touch(Doc::Task(id));
            self.touch(Doc::Todo);
        }
    }

    pub fn record(&self, run: u32) -> Option<&IterationRecord> {
        self.iter.run(run)
    }

    /// The latest run of iteration `n`.
    pub fn last_of_iteration(&self, n: u32) -> Option<&IterationRecord> {
        self.iter.iterations.iter().rev().find(|r| r.iteration == n)
    }

    pub fn last_of_iteration_mut(&mut self, n: u32) -> Option<&mut IterationRecord> {
        self.iter
            .iterations
            .iter_mut()
            .rev()
            .find(|r| r.iteration == n)
    }

    /// The run the analysis of fix `k` was written on (its `fix_task`).
    pub fn record_of_fix_mut(&mut self, k: u32) -> Option<&mut IterationRecord> {
        let task = super::fix_task_id(k);
        if self
            .iter
            .iterations
            .iter()
            .any(|r| r.fix_task.as_deref() == Some(&task))
        {
            return self
                .iter
                .iterations
                .iter_mut()
                .rev()
                .find(|r| r.fix_task.as_deref() == Some(&task));
        }
        self.last_of_iteration_mut(k)
    }

    pub fn record_of_fix(&self, k: u32) -> Option<&IterationRecord> {
        let task = super::fix_task_id(k);
        self.iter
            .iterations
            .iter()
            .rev()
            .find(|r| r.fix_task.as_deref() == Some(&task))
            .or_else(|| self.last_of_iteration(k))
    }

    /// The run the code as it is now was measured by.
    pub fn baseline(&self) -> Option<&IterationRecord> {
        match self.iter.baseline_run {
            Some(r) => self.record(r),
            None => self.iter.iterations.last(),
        }
    }

    /// Fix attempts made (fix-history entries).
    pub fn attempts(&self) -> u32 {
        self.history.entries.len() as u32
    }

    /// Agent cost recorded in the session.
    pub fn spent_usd(&self) -> f64 {
        crate::agents::total_cost(&self.history)
    }
}
