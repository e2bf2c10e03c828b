//! The one way into a session, for both front ends (`test-cycle-execute`
//! and `wfx run`), so both recover from a killed run the same way. As in
//! jj's `WorkspaceCommandHelper::start_transaction`, opening is the one
//! place that takes the lock and settles what the last holder left:
//!
//! 1. the session lock ([`SessionLock::acquire`] ends what a dead run's
//!    last step left running: `stale-processes`);
//! 2. when that run died (`kill -9`, a crash): its temp files in the
//!    session and beside the archive manifest, and the lock files of its
//!    `refs/wfx/<session>/…` updates;
//! 3. the sealed and candidate checkouts it left outside the project;
//! 4. the session's artifacts checked (exit 2 before anything is written);
//! 5. then, once the front end knows where the code is, git's own lock
//!    files the dead run left there ([`Opened::sweep_git_locks`]:
//!    `stale-git-lock`).
//!
//! After that every write of a step goes through the session transaction
//! ([`super::txn`]), owned by the ports [`Opened::into_ports`] makes.

use std::path::{Path, PathBuf};

use chrono::Utc;

use super::Sinks;
use super::event::Event;
use super::real::RealPorts;
use crate::artifacts::config::ArtifactPolicy;
use crate::artifacts::session::WorkflowSession;
use crate::error::Result;
use crate::git::Checkpoints;
use crate::session::store::{self, SessionLock};
use crate::session::{SessionPaths, Workspace};

/// A session opened for a run: locked, recovered, checked.
pub struct Opened {
    pub lock: SessionLock,
    /// When the run that held the lock last died: its start (RFC 3339).
    died_since: Option<String>,
    /// Files the journal's replay wrote again: documents read before the
    /// session was opened may be older than them.
    pub replayed: usize,
}

/// Open the session at `paths` (see the module docs); the sinks' run log
/// is the session's from here on.
/// Opening is the front ends' shell, before any port exists: its events
/// carry the wall clock.
pub fn open(ws: &Workspace, paths: &SessionPaths, sinks: &mut Sinks) -> Result<Opened> {
    let mut lock = SessionLock::acquire(&paths.lock(), &paths.id)?;
    // The steps a killed run made durable in its journal are finished
    // before anything reads the session.
    let replayed = super::journal::replay_journal(&paths.dir)?.files;
    super::journal::settle_archived(&ws.archives_dir());
    sinks.set_run_log(Some(paths.process_dir().join("run.log")));
    if let Some(pgid) = lock.ended_stale {
        sinks.emit(&Event::StaleProcesses { pgid }, Utc::now());
    }
    let died_since = lock.stale.as_ref().map(|s| s.since.clone());
    if died_since.is_some() {
        recover_files(ws, paths);
    }
    lock.set_child(None)?;
    // What a killed (or interrupted) run left outside the project
    // (DESIGN.md §11.1, §11.4).
    crate::git::sweep_checkout(&ws.root, &paths.id);
    crate::git::sweep_candidates(&ws.root, &paths.id);
    // Nothing is written to a session with a damaged artifact (DESIGN.md §3).
    ws.ensure_session_valid(paths)?;
    Ok(Opened {
        lock,
        died_since,
        replayed,
    })
}

/// A killed run may have been replacing a file: its temps are garbage (and
/// must not be archived with the session), and so are the lock files of
/// the refs it was updating.
fn recover_files(ws: &Workspace, paths: &SessionPaths) {
    super::txn::sweep_temps(&paths.dir);
    crate::git::sweep_ref_locks(&ws.root, &paths.id);
    let Ok(entries) = std::fs::read_dir(ws.archives_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".manifest.json.") && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Opened {
    /// The run before this one died holding the lock.
    pub fn previous_run_died(&self) -> bool {
        self.died_since.is_some()
    }

    /// git's lock files the dead run left in the repository of `root`
    /// (where the session's code is), each told as `stale-git-lock`.
    pub fn sweep_git_locks(&self, root: &Path, sinks: &mut Sinks) {
        let Some(since) = &self.died_since else {
            return;
        };
        for file in crate::git::sweep_dead_run(root, since) {
            sinks.emit(&Event::StaleGitLock { file }, Utc::now());
        }
    }

    /// The session's `.gitignore` by `git.artifacts`, or `finished`: the
    /// footprint a finished session waiting for its archive keeps.
    pub fn apply_artifact_policy(
        &self,
        paths: &SessionPaths,
        policy: ArtifactPolicy,
        finished: Option<String>,
    ) -> Result<()> {
        match finished {
            Some(text) => store::write_atomic(&paths.gitignore(), text.as_bytes()),
            None => store::apply_artifact_policy(paths, policy),
        }
    }

    /// The ports of the run: the lock (and with it the process group of
    /// each child) and the session transaction every step writes through.
    pub fn into_ports<'a>(
        self,
        ws: &'a Workspace,
        root: PathBuf,
        cp: Checkpoints,
        session_dir: PathBuf,
    ) -> RealPorts<'a> {
        RealPorts::new(ws, root, self.lock, cp, session_dir)
    }
}

/// The session's `Wfx-Run` (DESIGN.md §10.2): made and recorded in
/// `workflow-session.json` the first time it is asked for, the same on
/// every resume after.
pub fn run_id(session: &mut WorkflowSession, path: &Path) -> Result<String> {
    if let Some(run) = &session.git.run_id {
        return Ok(run.clone());
    }
    let run = crate::git::new_run_id();
    session.git.run_id = Some(run.clone());
    store::write_json(path, session)?;
    Ok(run)
}
