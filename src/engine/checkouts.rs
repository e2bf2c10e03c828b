//! The real ports' batch of candidates (DESIGN.md §11.4): each candidate
//! on a thread of its own, in a checkout of its own outside the project
//! ([`crate::git::candidate_dir`], made like the sealed one), with its own
//! git handles and processes. The calling thread keeps the session lock's
//! record of every running process group (a resume after `kill -9` ends
//! them all), checks the cost cap before each candidate starts and tells
//! the driver of each start and end. Every checkout is removed when its
//! candidate ends, whatever happened, and their directory after the
//! batch; what a killed run left is swept by the next.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::candidates::{
    self, CandidateBatch, CandidateDone, CandidateEnd, CandidateNote, CandidateRan, CandidateWorld,
};
use super::ports::Ports;
use super::ports::{ShellRun, TestRun};
use super::real::{RealPorts, inspect_with, open_checkout, run_tests_with, shell_with};
use super::step::{Inspection, ProcessEnd, Sealed, Snapshot};
use crate::agents::{CallRecord, Invocation};
use crate::artifacts::Timestamp;
use crate::artifacts::test_results::TestResults;
use crate::error::{Error, Result};
use crate::git::Checkpoints;

/// What a candidate's thread tells the calling thread.
enum Msg {
    /// A child started in this process group / ended.
    Spawned(i32),
    Exited(i32),
    /// Candidate (position in the batch) finished.
    Done(usize, Box<Result<CandidateRan>>),
}

/// Everything a candidate's thread needs, shared.
struct Shared<'b> {
    batch: &'b CandidateBatch,
    /// The project's root (session directories, checkout names).
    project: PathBuf,
    /// Where the code is (the project, or the session's worktree).
    root: PathBuf,
    session: String,
    /// The commit every checkout holds.
    base: String,
    max_new_file_mib: u64,
    versions_of: Option<fn(&str) -> bool>,
    clock: Clock,
}

/// The candidates' clock: the ports' time when the batch started, moved on
/// by a monotonic clock (a candidate's times never go back).
#[derive(Clone, Copy)]
struct Clock {
    at: Timestamp,
    since: std::time::Instant,
}

impl Clock {
    fn now(&self) -> Timestamp {
        self.at + chrono::Duration::from_std(self.since.elapsed()).unwrap_or_default()
    }
}

impl RealPorts<'_> {
    /// See [`super::ports::Ports::run_candidates`].
    pub fn candidates(
        &mut self,
        batch: &CandidateBatch,
        versions_of: Option<fn(&str) -> bool>,
        notify: &mut dyn FnMut(CandidateNote<'_>),
    ) -> Result<Vec<CandidateDone>> {
        let session = self.session_id();
        let Some(tree) = batch.snapshot.tree.as_deref() else {
            return Err(Error::Internal("candidates need a snapshot".into()));
        };
        let message = format!("wfx: candidates of {session} iteration {}", batch.iteration);
        let Some(base) = self.cp.candidate_base(tree, &message)? else {
            return Err(Error::Internal("candidates need a repository".into()));
        };
        let shared = Shared {
            batch,
            project: self.ws.root.clone(),
            root: self.root.clone(),
            session,
            base,
            max_new_file_mib: self.cp.max_new_file_mib(),
            versions_of,
            clock: Clock {
                at: self.now(),
                since: std::time::Instant::now(),
            },
        };
        let n = batch.candidates.len();
        let mut results: Vec<Option<CandidateDone>> = vec![None; n];
        let mut first_error: Option<Error> = None;
        let lock = &mut self.lock;
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<Msg>();
            let (mut next, mut running, mut cost) = (0usize, 0usize, 0.0f64);
            loop {
                while running < batch.max_parallel && next < n && !crate::process::interrupted() {
                    let i = next;
                    next += 1;
                    let c = &batch.candidates[i];
                    if let Some(reason) = candidates::may_start(batch, cost) {
                        let done = CandidateDone {
                            index: c.index,
                            end: CandidateEnd::NotStarted(reason),
                        };
                        notify(CandidateNote::Finished(c, &done));
                        results[i] = Some(done);
                        continue;
                    }
                    notify(CandidateNote::Started(c));
                    let tx = tx.clone();
                    let shared = &shared;
                    scope.spawn(move || {
                        let out = run_in_checkout(shared, i, &tx);
                        let _ = tx.send(Msg::Done(i, Box::new(out)));
                    });
                    running += 1;
                }
                if running == 0 {
                    break;
                }
                let Ok(msg) = rx.recv() else { break };
                match msg {
                    Msg::Spawned(pgid) => {
                        let _ = lock.add_child(pgid);
                    }
                    Msg::Exited(pgid) => {
                        let _ = lock.drop_child(pgid);
                    }
                    Msg::Done(i, out) => {
                        running -= 1;
                        let c = &batch.candidates[i];
                        let end = match *out {
                            Ok(ran) => CandidateEnd::Ran(Box::new(ran)),
                            Err(Error::Interrupted(why)) => CandidateEnd::Broken(why),
                            Err(e) => {
                                let text = e.to_string();
                                first_error.get_or_insert(e);
                                CandidateEnd::Broken(text)
                            }
                        };
                        let done = CandidateDone {
                            index: c.index,
                            end,
                        };
                        cost += candidates::cost_of(&done);
                        notify(CandidateNote::Finished(c, &done));
                        results[i] = Some(done);
                    }
                }
            }
        });
        // Their directory, empty now (or holding a checkout that could
        // not be removed, tried again here): none left means none to
        // sweep at the next open.
        crate::git::sweep_candidates(&shared.project, &shared.session);
        let _ = self.lock.set_child(None);
        if crate::process::interrupted() {
            return Err(Error::Interrupted(format!(
                "{} candidates were fixing iteration {}",
                n, batch.iteration
            )));
        }
        let done: Vec<CandidateDone> = results.into_iter().flatten().collect();
        // Every candidate failed for the environment's reasons (a full
        // disk, git refusing): that is the environment's error, not a
        // failed attempt.
        if let Some(e) = first_error
            && done
                .iter()
                .all(|d| matches!(d.end, CandidateEnd::Broken(_) | CandidateEnd::NotStarted(_)))
        {
            return Err(e);
        }
        Ok(done)
    }
}

/// One candidate on its thread: its checkout made, the candidate run in
/// it ([`candidates::run_one`]), the checkout removed.
fn run_in_checkout(s: &Shared<'_>, i: usize, tx: &mpsc::Sender<Msg>) -> Result<CandidateRan> {
    let started = s.clock.now();
    let c = &s.batch.candidates[i];
    std::fs::create_dir_all(&c.dir).map_err(|e| Error::io(&c.dir, e))?;
    let main = Checkpoints::open(&s.root)?.with_session(&s.session);
    let dir = crate::git::candidate_dir(&s.project, &s.session, c.index);
    let sealed = open_checkout(&main, &s.root, &s.base, &dir, &s.batch.environment);
    let out = sealed.and_then(|sealed| {
        for rel in &s.batch.share {
            let (from, to) = (s.project.join(rel), sealed.root.join(rel));
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            if from.is_file() {
                std::fs::copy(&from, &to).map_err(|e| Error::io(&to, e))?;
            }
        }
        let cp = Checkpoints::open(&sealed.root)?.with_max_new_file_mib(s.max_new_file_mib);
        cp.objects_in_memory()?;
        let mut world = Checkout {
            cp,
            main,
            base: Snapshot {
                tree: s.batch.snapshot.tree.clone(),
                head: Some(s.base.clone()),
            },
            sealed,
            index: c.index,
            tx: tx.clone(),
            clock: s.clock,
            now: None,
        };
        let ws = crate::session::Workspace::new(s.project.clone());
        candidates::run_one(&mut world, c, &s.batch.tests, s.versions_of, &|p: &Path| {
            ws.rel(p)
        })
    });
    crate::git::remove_checkout(&dir).map_err(|e| Error::io(&dir, e))?;
    // The candidate's time includes its checkout: wfx's own cost of it.
    out.map(|mut ran| {
        ran.duration_ms = crate::duration::ms_between(started, s.clock.now());
        ran
    })
}

/// A candidate's checkout (see [`CandidateWorld`]).
struct Checkout {
    /// The checkout's own repository.
    cp: Checkpoints,
    /// The project's, where the candidate's tree is kept.
    main: Checkpoints,
    base: Snapshot,
    sealed: Sealed,
    index: u32,
    tx: mpsc::Sender<Msg>,
    clock: Clock,
    /// The work tree's tree as the link check (or the inspection) read
    /// it, for the inspection and the tree kept that follow at once.
    now: Option<String>,
}

impl Checkout {
    /// Run a child, its process group told to the calling thread (which
    /// records it in the session lock) while it runs.
    fn child<T>(&self, f: impl FnOnce(&mut dyn FnMut(i32)) -> T) -> T {
        let mut groups = Vec::new();
        let out = f(&mut |pgid| {
            groups.push(pgid);
            let _ = self.tx.send(Msg::Spawned(pgid));
        });
        for pgid in groups {
            let _ = self.tx.send(Msg::Exited(pgid));
        }
        out
    }

    fn base_tree(&self) -> &str {
        self.base.tree.as_deref().unwrap_or_default()
    }
}

impl CandidateWorld for Checkout {
    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn invoke_agent(&mut self, inv: &Invocation) -> Result<CallRecord> {
        self.child(|on_spawn| crate::agents::invoke(inv, on_spawn))
    }

    fn shell(&mut self, run: &ShellRun<'_>) -> Result<ProcessEnd> {
        self.child(|on_spawn| shell_with(run, on_spawn))
    }

    fn root(&self) -> PathBuf {
        self.sealed.root.clone()
    }

    fn env(&self) -> Vec<(String, String)> {
        self.sealed.env.clone()
    }

    fn undo_planted_links(&mut self) -> Result<Vec<String>> {
        // The work tree is read once for the link check, the diff and the
        // tree kept (nothing runs between them): again only when a link
        // was put back.
        let now = self.cp.snapshot()?;
        let links = self.cp.planted_links_at(self.base_tree(), now.as_deref())?;
        if links.is_empty() {
            self.now = now;
        } else {
            self.cp.restore_paths(self.base_tree(), &links)?;
        }
        Ok(links)
    }

    fn inspect(&mut self, versions_of: Option<fn(&str) -> bool>) -> Result<Inspection> {
        if self.now.is_none() {
            self.now = self.cp.snapshot()?;
        }
        inspect_with(&self.cp, &self.base, self.now.as_deref(), versions_of)
    }

    fn run_tests(&mut self, run: &TestRun<'_>) -> Result<TestResults> {
        // No run times: the checkout's cache goes with it.
        self.child(|on_spawn| run_tests_with(run, None, false, on_spawn))
    }

    fn tree(&mut self) -> Result<Option<String>> {
        let now = match self.now.take() {
            Some(t) => Some(t),
            None => self.cp.snapshot()?,
        };
        let Some(tree) = now else {
            return Ok(None);
        };
        self.main.import_candidate(&self.cp, &tree, self.index)?;
        Ok(Some(tree))
    }
}
