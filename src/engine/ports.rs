//! [`Ports`]: every effect of a session goes through this interface. The
//! real implementation ([`super::real::RealPorts`]) owns the session lock
//! (and with it the process group of the running child), git and the
//! session transaction; the test double (`super::fake`, tests only)
//! scripts them, so the whole loop runs in-process.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use super::step::{Inspection, ProcessEnd, Snapshot, SquashRequest};
use super::txn::Document;
use crate::agents::{CallRecord, Invocation};
use crate::artifacts::Timestamp;
use crate::artifacts::task_record::{Coverage, CoverageSource, Finding};
use crate::artifacts::test_results::TestResults;
use crate::error::Result;
use crate::git::{HeadGuard, Trailers};
use crate::testing::{Detected, Progress};

/// What the real world offers a session. Errors are the environment's
/// (a full disk, git refusing); `Error::Interrupted` from a method that
/// runs a child means Ctrl-C stopped it — the driver turns that into a
/// pause, never an error.
pub trait Ports {
    /// The clock (fixed in tests).
    fn now(&self) -> Timestamp;

    /// Ctrl-C or SIGTERM was received.
    fn interrupted(&self) -> bool;

    /// Stop (exit 2) when the session directory was removed while wfx
    /// ran: nothing of it is recreated.
    fn check_session(&mut self) -> Result<()>;

    /// Run a test command.
    fn run_tests(
        &mut self,
        run: &TestRun<'_>,
        progress: Option<Box<dyn FnMut(Progress) + Send>>,
    ) -> Result<TestResults>;

    /// One agent call.
    fn invoke_agent(&mut self, inv: &Invocation) -> Result<CallRecord>;

    /// A shell command (`sh -c`) in its own process group.
    fn shell(&mut self, run: &ShellRun<'_>) -> Result<ProcessEnd>;

    /// The work tree and `HEAD` now.
    fn snapshot(&mut self) -> Result<Snapshot>;

    /// What changed since `before`; the content before and after of the
    /// changed paths `versions_of` selects.
    fn inspect(
        &mut self,
        before: &Snapshot,
        versions_of: Option<fn(&str) -> bool>,
    ) -> Result<Inspection>;

    /// Lines of `path` added or changed since the snapshot tree `since`
    /// (`None`: the file did not exist then).
    fn changed_lines(&mut self, since: &str, path: &str) -> Result<Option<BTreeSet<u32>>>;

    /// A checkpoint commit (found instead of made when one with the same
    /// trailers exists).
    fn commit(
        &mut self,
        paths: &[String],
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>>;

    /// Revert `commit`; `Err(Error::Git)` when git refuses.
    fn revert(
        &mut self,
        commit: &str,
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>>;

    /// Fold the session's commits into one (`git.squash`, DESIGN.md
    /// §10.7); a double that makes no commits has nothing to fold.
    fn squash(&mut self, _req: &SquashRequest) -> Result<crate::git::SquashOutcome> {
        Ok(crate::git::SquashOutcome::Nothing)
    }

    /// `--watch`: wait until a project file is saved (`.workflow/`, `.git/`
    /// and git-ignored files aside; a burst of saves is one), Enter is
    /// pressed (when stdin is a terminal) or Ctrl-C. `watching(enter)` is
    /// called once the files are being watched (a save from then on
    /// counts), saying whether Enter counts too. A world with nothing to
    /// watch stops at once, as Ctrl-C would.
    fn wait_for_fix(&mut self, watching: &mut dyn FnMut(bool)) -> Result<Wake> {
        watching(false);
        Ok(Wake::Interrupted)
    }

    /// A clean checkout of the commit `req` describes, outside the project
    /// (DESIGN.md §11.1); `None` where there is nothing to seal (no
    /// repository, no commit yet): the run goes on in place.
    fn seal(&mut self, _req: &super::step::SealRequest) -> Result<Option<super::step::Sealed>> {
        Ok(None)
    }

    /// After a sealed run: the files outside its commit that changed since
    /// `req.since`, and the checkout removed (also when the run failed).
    fn unseal(
        &mut self,
        _sealed: &super::step::Sealed,
        _req: &super::step::SealRequest,
    ) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// The project's test infrastructure (see [`crate::testing::infra`])
    /// and what of the files outside the commit sealed runs may use, as
    /// they are now (DESIGN.md §11.1, §11.2).
    fn survey(&mut self) -> Result<super::step::Survey> {
        Ok(super::step::Survey::default())
    }

    /// Run a batch of candidates (DESIGN.md §11.4), each through
    /// [`super::candidates::run_one`] in a checkout of its own, at most
    /// `max_parallel` at once, the cost cap checked before each starts;
    /// `notify` hears of each start and end. Ctrl-C stops them all
    /// (`Error::Interrupted`, their checkouts removed).
    fn run_candidates(
        &mut self,
        _batch: &super::candidates::CandidateBatch,
        _versions_of: Option<fn(&str) -> bool>,
        _notify: &mut dyn FnMut(super::candidates::CandidateNote<'_>),
    ) -> Result<Vec<super::candidates::CandidateDone>> {
        Err(crate::error::Error::Internal(
            "speculative candidates need a git repository".into(),
        ))
    }

    /// Put the paths that differ between the trees `before` and `tree`
    /// into the work tree as `tree` has them (never through a link); the
    /// paths.
    fn apply_tree(&mut self, _before: &str, _tree: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// The AI-issue scan (`tests: false`) or the test anti-pattern scan.
    fn scan(&mut self, tests: bool, files: &[String]) -> Vec<Finding>;

    /// The first coverage report under the root.
    fn coverage(&mut self, source: CoverageSource) -> Coverage;

    /// The newest file matching `pattern` written since `since`.
    fn find_output(&mut self, pattern: &str, since: SystemTime) -> Option<String>;

    /// At most `max` bytes from the start of a file, as text ("" if missing).
    fn read_head(&mut self, path: &Path, max: usize) -> String;

    /// A test log for an analysis: whole, or its head and tail.
    fn read_log(&mut self, path: &Path) -> String;

    /// Move the session to `archives/` and record it in the manifest
    /// (idempotent). The session's files are then under the new directory.
    fn archive(&mut self, session_id: &str) -> Result<()>;

    /// The session transaction: write `docs` (only those that changed)
    /// and make them durable together, the state document last — one
    /// durable commit per step.
    fn commit_step(&mut self, docs: Vec<Document>) -> Result<()>;

    /// Write back wfx's session files that were changed or removed since
    /// wfx wrote them (checked after every agent call); the files restored.
    fn undo_session_edits(&mut self) -> Result<Vec<std::path::PathBuf>>;

    /// Put the work tree back as it was at `before` (after a read-only
    /// role changed it); the paths undone.
    fn undo_tree_edits(&mut self, before: &Snapshot) -> Result<Vec<String>>;

    /// A file written before an effect that needs it (a command file):
    /// atomic, not synced.
    fn write_view(&mut self, path: &Path, bytes: &[u8]) -> Result<()>;

    // The checks after every agent call (DESIGN.md §10.2, §11.3; see
    // `super::head`, `super::tamper`). The defaults are a world without
    // git and without a config file.

    /// What the project's dependency directories hold of the installed
    /// test runner, before and after an agent call (none without them).
    fn runner_env(&mut self) -> super::runner_env::RunnerEnv {
        super::runner_env::RunnerEnv::default()
    }

    /// The repository's settings, hooks and index, before an agent call.
    fn repo_guard(&mut self) -> Result<crate::git::RepoGuard> {
        Ok(crate::git::RepoGuard::default())
    }

    /// Put back what an agent changed of the repository's settings, hooks
    /// and (`index`) its index since `guard`.
    fn restore_repo(
        &mut self,
        _guard: &crate::git::RepoGuard,
        _index: bool,
    ) -> Result<crate::git::RepoRestored> {
        Ok(crate::git::RepoRestored::default())
    }

    /// Put back, as they were at `before`, the files an agent replaced by
    /// a symlink and remove the new links that point outside the project
    /// (DESIGN.md §11.3); the paths put back.
    fn undo_planted_links(&mut self, _before: &super::step::Snapshot) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Put `.workflow/wfx.json` back as it was when this run loaded it,
    /// when an agent changed, removed or created it; whether it did.
    fn undo_config_edits(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// `HEAD`, its branch and the session's files, before an agent call.
    fn head_guard(&mut self) -> Result<HeadGuard> {
        Ok(HeadGuard::default())
    }

    /// The run before this one died (`kill -9`, a crash) instead of
    /// releasing the session: a step it was in may have half happened.
    fn previous_run_died(&self) -> bool {
        false
    }

    /// `HEAD`'s commit now.
    fn head_now(&mut self) -> Result<Option<String>> {
        Ok(None)
    }

    /// The branch `HEAD` is on now (`refs/heads/…`, as in [`HeadGuard`];
    /// `None`: detached).
    fn branch_now(&mut self) -> Result<Option<String>> {
        Ok(None)
    }

    /// Commits from `pre` (exclusive) to `post`, oldest first; `None` when
    /// `post` does not descend from `pre`.
    fn commits_since(&mut self, _pre: Option<&str>, _post: &str) -> Result<Option<Vec<String>>> {
        Ok(None)
    }

    /// Move `HEAD` back to `pre`, keeping the work tree (fold).
    fn fold_head(&mut self, _pre: Option<&str>) -> Result<()> {
        Ok(())
    }

    /// Branch, work tree and session files back to `guard` (and the
    /// project's files to `snapshot`); the paths restored.
    fn restore_head(&mut self, _guard: &HeadGuard, _snapshot: Option<&str>) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

/// What ended a `--watch` wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// These files (relative paths, sorted) were saved.
    Files(Vec<String>),
    Enter,
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

/// A test run as a port performs it.
pub struct TestRun<'a> {
    pub root: &'a Path,
    pub detected: &'a Detected,
    pub subset: Option<&'a [String]>,
    pub log: &'a Path,
    pub report_dir: &'a Path,
    pub timeout: std::time::Duration,
    pub env: &'a [(String, String)],
    pub previous: Option<&'a TestResults>,
}

/// A shell command as a port runs it.
pub struct ShellRun<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The output is appended here (emptied first when `fresh_log`).
    pub log: &'a Path,
    pub fresh_log: bool,
    pub env: &'a [(String, String)],
    pub timeout: Option<std::time::Duration>,
}
