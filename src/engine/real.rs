//! The real [`Ports`]: children through [`crate::process`] with their
//! process group recorded in the session lock, tests through
//! [`crate::testing`], agents through [`crate::agents::invoke`], git
//! through [`Checkpoints`], scans through [`crate::scan`], and the session's
//! files through its [`SessionTxn`].

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::driver::process_end;
use super::ports::{Ports, ShellRun, TestRun};
use super::step::{Inspection, ProcessEnd, Snapshot, SquashRequest};
use super::txn::{Document, SessionTxn};
use crate::agents::{CallRecord, Invocation};
use crate::artifacts::Timestamp;
use crate::artifacts::task_record::{Coverage, CoverageSource, Finding};
use crate::artifacts::test_results::TestResults;
use crate::error::{Error, Result};
use crate::git::{Checkpoints, HeadGuard, Trailers};
use crate::process::{self, Spec};
use crate::session::Workspace;
use crate::session::store::SessionLock;
use crate::testing::{self, Progress, RunRequest};

/// Bytes of a test log handed to an analysis, at most (head + tail).
const LOG_HEAD: u64 = 256 * 1024;
const LOG_TAIL: u64 = 4 * 1024 * 1024;

/// The real ports of one session.
pub struct RealPorts<'a> {
    pub ws: &'a Workspace,
    /// Where the code is: the project root, or the session's worktree.
    pub root: PathBuf,
    /// Declared before the lock, so dropped first: the deferred steps are
    /// put in place and the journal marked applied while the session is
    /// still this run's.
    pub txn: SessionTxn,
    pub lock: SessionLock,
    pub cp: Checkpoints,
    /// `.workflow/wfx.json` as this run loaded it (DESIGN.md §11.2).
    pub config: super::tamper::ConfigCopy,
    /// The sealed checkout between this run's sealed runs (removed when
    /// the run ends): the next one writes only what changed.
    pub kept: Option<crate::git::KeptCheckout>,
    /// The work tree's tree the check for planted links took after the
    /// last agent call (with the snapshot it compared against), when it
    /// put nothing back: the inspection right after reads it instead of
    /// reading the work tree again. Valid only for the next call of these
    /// ports, and only if that is [`Ports::inspect`] of the same snapshot:
    /// every other method forgets it first.
    after_call_tree: Option<(String, String)>,
}

impl<'a> RealPorts<'a> {
    pub fn new(
        ws: &'a Workspace,
        root: PathBuf,
        lock: SessionLock,
        cp: Checkpoints,
        session_dir: PathBuf,
    ) -> Self {
        // Spares of replaced documents (engine::txn): git-ignored scratch
        // space of this session alone, which holds its lock.
        let spares = crate::session::store::ensure_cache_dir(ws)
            .ok()
            .zip(session_dir.file_name())
            .map(|(cache, id)| cache.join("spares").join(id));
        let mut txn = SessionTxn::new(session_dir);
        if let Some(dir) = spares {
            txn = txn.with_spares(dir);
        }
        RealPorts {
            config: super::tamper::ConfigCopy::take(&ws.config_path()),
            ws,
            root,
            lock,
            cp,
            txn,
            kept: None,
            after_call_tree: None,
        }
    }
}

impl RealPorts<'_> {
    /// Before an effect another process can see (a child, a commit, a
    /// repair, a guard, the archive): the deferred steps durable and in
    /// place (see [`SessionTxn::defer`]), the kept work tree forgotten.
    fn before_effect(&mut self) -> Result<()> {
        self.after_call_tree = None;
        self.txn.place_deferred()
    }

    /// The session's id (its directory's name).
    pub fn session_id(&self) -> String {
        self.txn
            .dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Ports for RealPorts<'_> {
    fn now(&self) -> Timestamp {
        chrono::Utc::now()
    }

    fn interrupted(&self) -> bool {
        process::interrupted()
    }

    fn check_session(&mut self) -> Result<()> {
        self.after_call_tree = None;
        self.txn.check_present()
    }

    fn run_tests(
        &mut self,
        run: &TestRun<'_>,
        progress: Option<Box<dyn FnMut(Progress) + Send>>,
    ) -> Result<TestResults> {
        // The steps so far are made durable and put in place once the test
        // child runs, not before it starts: their sync overlaps the run
        // instead of delaying it. Nothing a test run does depends on them,
        // and a run that a crash cuts short (or whose record a power loss
        // takes) is run again on resume.
        self.after_call_tree = None;
        let project = self.root.clone();
        let txn = &mut self.txn;
        let mut placed = Ok(());
        let results = self.lock.with_child_then(
            &mut || {
                if placed.is_ok() {
                    placed = txn.place_deferred();
                }
            },
            |on_spawn| {
                let mut req = test_request(run, progress, on_spawn);
                req.times_root = Some(project);
                testing::run_tests(req)
            },
        )?;
        placed?;
        results
    }

    fn invoke_agent(&mut self, inv: &Invocation) -> Result<CallRecord> {
        self.before_effect()?;
        self.lock
            .with_child(|on_spawn| crate::agents::invoke(inv, on_spawn))?
    }

    fn shell(&mut self, run: &ShellRun<'_>) -> Result<ProcessEnd> {
        self.before_effect()?;
        self.lock.with_child(|on_spawn| shell_with(run, on_spawn))?
    }

    fn previous_run_died(&self) -> bool {
        self.lock.stale.is_some()
    }

    fn snapshot(&mut self) -> Result<Snapshot> {
        self.after_call_tree = None;
        Ok(Snapshot {
            tree: self.cp.snapshot()?,
            head: self.cp.head()?,
        })
    }

    fn inspect(
        &mut self,
        before: &Snapshot,
        versions_of: Option<fn(&str) -> bool>,
    ) -> Result<Inspection> {
        let now = self
            .after_call_tree
            .take()
            .filter(|(was, _)| before.tree.as_ref() == Some(was))
            .map(|(_, now)| now);
        inspect_with(&self.cp, before, now.as_deref(), versions_of)
    }

    fn changed_lines(&mut self, since: &str, path: &str) -> Result<Option<BTreeSet<u32>>> {
        self.after_call_tree = None;
        Ok(self.cp.file_versions(since, path)?.changed_lines())
    }

    fn commit(
        &mut self,
        paths: &[String],
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>> {
        self.before_effect()?;
        let outcome = self
            .cp
            .commit_checkpoint(paths, session_dir, message, trailers)?;
        Ok(outcome.id().map(str::to_string))
    }

    fn revert(
        &mut self,
        commit: &str,
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>> {
        self.before_effect()?;
        let outcome = self.cp.revert(commit, session_dir, message, trailers)?;
        Ok(outcome.id().map(str::to_string))
    }

    fn squash(&mut self, req: &SquashRequest) -> Result<crate::git::SquashOutcome> {
        self.before_effect()?;
        match &req.since {
            Some(base) => self.cp.squash_since(base, &req.message, &req.trailers),
            None => self.cp.squash_session(&req.message, &req.trailers),
        }
    }

    fn wait_for_fix(&mut self, watching: &mut dyn FnMut(bool)) -> Result<super::ports::Wake> {
        self.before_effect()?;
        super::watch::wait(&self.root, watching, &process::interrupted)
    }

    fn survey(&mut self) -> Result<super::step::Survey> {
        self.after_call_tree = None;
        let (files, _) = crate::project::list_files(&self.root)?;
        let files: std::collections::BTreeSet<String> = files.into_iter().collect();
        let root = self.root.clone();
        let found = crate::testing::infra::survey(&files, |rel| {
            let path = root.join(rel);
            // Configuration files are small; a huge one is not read.
            let meta = std::fs::symlink_metadata(&path).ok()?;
            (meta.is_file() && meta.len() <= 4 << 20)
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
        });
        Ok(super::step::Survey {
            infrastructure: found.into_iter().collect(),
            environment: self.cp.sealed_environment()?,
        })
    }

    /// Does not wait for the steps so far to be durable: what it makes
    /// (objects, wfx's own `sealed` ref, a checkout outside the project)
    /// is made again the same by a redone step, and the test run that
    /// follows syncs them while it runs.
    fn seal(&mut self, req: &super::step::SealRequest) -> Result<Option<super::step::Sealed>> {
        self.after_call_tree = None;
        let session = self.session_id();
        open_sealed(
            &self.cp,
            &self.ws.root,
            &self.root,
            &session,
            req,
            Some(&mut self.kept),
        )
    }

    fn run_candidates(
        &mut self,
        batch: &super::candidates::CandidateBatch,
        versions_of: Option<fn(&str) -> bool>,
        notify: &mut dyn FnMut(super::candidates::CandidateNote<'_>),
    ) -> Result<Vec<super::candidates::CandidateDone>> {
        self.before_effect()?;
        self.candidates(batch, versions_of, notify)
    }

    fn apply_tree(&mut self, before: &str, tree: &str) -> Result<Vec<String>> {
        self.before_effect()?;
        self.cp.apply_tree(before, tree)
    }

    fn unseal(
        &mut self,
        sealed: &super::step::Sealed,
        req: &super::step::SealRequest,
    ) -> Result<Vec<String>> {
        self.before_effect()?;
        let outside = self.cp.outside_commit(
            &sealed.commit,
            req.since.into()..req.until.into(),
            &req.environment.dependency_dirs,
        );
        // Kept for the next sealed run, which checks it first.
        if self.kept.as_ref().is_none_or(|k| k.dir() != sealed.dir) {
            crate::git::remove_checkout(&sealed.dir).map_err(|e| Error::io(&sealed.dir, e))?;
        }
        Ok(outside?
            .into_iter()
            .map(|(path, why)| format!("{path} ({why})"))
            .collect())
    }

    fn scan(&mut self, tests: bool, files: &[String]) -> Vec<Finding> {
        self.after_call_tree = None;
        if tests {
            crate::scan::antipatterns::scan_test_files(&self.root, files)
        } else {
            crate::scan::ai_issues::scan_files(&self.root, files)
        }
    }

    fn coverage(&mut self, source: CoverageSource) -> Coverage {
        self.after_call_tree = None;
        crate::testing::coverage::read(&self.root, source)
    }

    fn find_output(&mut self, pattern: &str, since: SystemTime) -> Option<String> {
        self.after_call_tree = None;
        find_output_file(&self.root, pattern, since)
    }

    fn read_head(&mut self, path: &Path, max: usize) -> String {
        self.after_call_tree = None;
        read_head(path, max)
    }

    fn read_log(&mut self, path: &Path) -> String {
        self.after_call_tree = None;
        let Ok(mut f) = std::fs::File::open(path) else {
            return String::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut bytes = Vec::new();
        if len <= LOG_HEAD + LOG_TAIL {
            let _ = f.read_to_end(&mut bytes);
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let mut head = vec![0u8; LOG_HEAD as usize];
        let _ = f.read_exact(&mut head);
        let _ = f.seek(SeekFrom::Start(len - LOG_TAIL));
        let _ = f.read_to_end(&mut bytes);
        format!(
            "{}\n[… {} bytes omitted; see {} …]\n{}",
            String::from_utf8_lossy(&head),
            len - LOG_HEAD - LOG_TAIL,
            self.ws.rel(path),
            String::from_utf8_lossy(&bytes)
        )
    }

    fn archive(&mut self, session_id: &str) -> Result<()> {
        self.before_effect()?;
        // The journal moves with the session; the archive's rewrites are
        // compacted into it in the new place (engine::txn).
        self.ws.archive_with(session_id, &mut self.txn)?;
        self.txn.moved_to(self.ws.archived(session_id).dir);
        Ok(())
    }

    /// Deferred (see [`SessionTxn::defer`]): put in place, with one sync
    /// for all the steps since the last, before the next effect that
    /// another process can see (a child, a commit, a repair of the work
    /// tree, the archive); reads of the project and of logs do not wait.
    fn commit_step(&mut self, docs: Vec<Document>) -> Result<()> {
        self.after_call_tree = None;
        self.txn.defer(docs)
    }

    fn write_view(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.after_call_tree = None;
        self.txn.write_view(path, bytes)
    }

    fn head_guard(&mut self) -> Result<HeadGuard> {
        self.before_effect()?;
        self.cp
            .head_guard_knowing(Some(self.txn.dir()), self.txn.known_copies())
    }

    fn head_now(&mut self) -> Result<Option<String>> {
        self.after_call_tree = None;
        self.cp.head()
    }

    fn branch_now(&mut self) -> Result<Option<String>> {
        self.after_call_tree = None;
        self.cp.head_branch()
    }

    fn commits_since(&mut self, pre: Option<&str>, post: &str) -> Result<Option<Vec<String>>> {
        self.after_call_tree = None;
        self.cp.commits_since(pre, post)
    }

    fn fold_head(&mut self, pre: Option<&str>) -> Result<()> {
        self.before_effect()?;
        self.cp.fold_to(pre)
    }

    fn restore_head(&mut self, guard: &HeadGuard, snapshot: Option<&str>) -> Result<Vec<String>> {
        self.before_effect()?;
        self.cp.restore_to(guard, snapshot)
    }

    fn runner_env(&mut self) -> super::runner_env::RunnerEnv {
        super::runner_env::RunnerEnv::take(&self.root)
    }

    fn repo_guard(&mut self) -> Result<crate::git::RepoGuard> {
        self.before_effect()?;
        self.cp.repo_guard()
    }

    fn restore_repo(
        &mut self,
        guard: &crate::git::RepoGuard,
        index: bool,
    ) -> Result<crate::git::RepoRestored> {
        self.before_effect()?;
        self.cp.restore_repo(guard, index)
    }

    fn undo_planted_links(&mut self, before: &Snapshot) -> Result<Vec<String>> {
        self.before_effect()?;
        let Some(tree) = &before.tree else {
            return Ok(Vec::new());
        };
        let Some(now) = self.cp.current_tree()? else {
            return Ok(Vec::new());
        };
        let links = self.cp.planted_links_at(tree, Some(&now))?;
        if links.is_empty() {
            // Nothing put back: the work tree is still `now`.
            self.after_call_tree = Some((tree.clone(), now));
        } else {
            self.cp.restore_paths(tree, &links)?;
        }
        Ok(links)
    }

    fn undo_config_edits(&mut self) -> Result<bool> {
        self.before_effect()?;
        self.config.restore()
    }

    fn undo_session_edits(&mut self) -> Result<Vec<PathBuf>> {
        self.after_call_tree = None;
        self.txn.restore_edits()
    }

    fn undo_tree_edits(&mut self, before: &Snapshot) -> Result<Vec<String>> {
        self.before_effect()?;
        let Some(tree) = &before.tree else {
            return Ok(Vec::new());
        };
        super::tamper::undo_tree(&self.cp, tree)
    }
}

/// What changed in the work tree of `cp` since `before` (`now`: the work
/// tree's tree, when the caller has just taken it).
pub fn inspect_with(
    cp: &Checkpoints,
    before: &Snapshot,
    now: Option<&str>,
    versions_of: Option<fn(&str) -> bool>,
) -> Result<Inspection> {
    let head_after = cp.head()?;
    let Some(tree) = &before.tree else {
        return Ok(Inspection {
            before: before.clone(),
            head_after,
            ..Inspection::default()
        });
    };
    // One diff for the paths, the stat and the excerpt: the work tree is
    // read once per inspection (#14).
    let crate::git::SnapshotDiff {
        changes,
        stat: diffstat,
        excerpt: diff,
    } = cp.diff_between(tree, now)?;
    let commit_paths = cp.commit_paths(&changes)?;
    let mut versions = Vec::new();
    if let Some(select) = versions_of {
        for path in crate::git::change_paths(&changes) {
            if select(&path) {
                let v = cp.file_versions(tree, &path)?;
                versions.push((path, v));
            }
        }
    }
    Ok(Inspection {
        before: before.clone(),
        head_after,
        changes,
        commit_paths,
        diffstat,
        diff,
        versions,
        too_big: cp.oversized(),
    })
}

/// A test run, its process group told to `on_spawn`.
pub(super) fn run_tests_with(
    run: &TestRun<'_>,
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
    remember_time: bool,
    on_spawn: &mut dyn FnMut(i32),
) -> Result<TestResults> {
    let mut req = test_request(run, progress, on_spawn);
    req.remember_time = remember_time;
    testing::run_tests(req)
}

/// The request of `run`, its process group told to `on_spawn`.
fn test_request<'a>(
    run: &TestRun<'a>,
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
    on_spawn: &'a mut dyn FnMut(i32),
) -> RunRequest<'a> {
    let mut req = RunRequest::new(run.root, run.detected.clone(), run.report_dir, run.log);
    req.subset = run.subset.map(<[String]>::to_vec);
    req.timeout = Some(run.timeout);
    req.env = run.env.to_vec();
    req.previous = run.previous;
    req.on_spawn = Some(on_spawn);
    req.progress = progress;
    req
}

/// A shell command in its own process group, told to `on_spawn`.
pub(super) fn shell_with(run: &ShellRun<'_>, on_spawn: &mut dyn FnMut(i32)) -> Result<ProcessEnd> {
    if run.fresh_log {
        match std::fs::remove_file(run.log) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(run.log, e)),
        }
    }
    let mut spec = Spec::shell(run.command, run.cwd)
        .log(run.log)
        .log_limit(process::AGENT_LOG);
    for (k, v) in run.env {
        spec = spec.env(k.clone(), v.clone());
    }
    if let Some(t) = run.timeout {
        spec = spec.timeout(t);
    }
    let outcome = process::run(spec, on_spawn)?;
    if outcome.interrupted {
        return Err(Error::Interrupted(format!(
            "running `{}`",
            short(run.command)
        )));
    }
    Ok(process_end(&outcome))
}

/// A sealed checkout for `req` (DESIGN.md §11.1): the commit of its paths
/// on top of `HEAD`, checked out outside the project as the checkout of
/// `name` (a session id), with the dependency directories linked, the
/// small files outside the commit that still hold what they held at the
/// start copied in, and the run's environment. `None` without a commit.
/// With `kept`, the checkout kept from the previous sealed run is reused
/// when it is still as wfx left it, and this one is kept.
pub fn open_sealed(
    cp: &Checkpoints,
    project: &Path,
    root: &Path,
    name: &str,
    req: &super::step::SealRequest,
    kept: Option<&mut Option<crate::git::KeptCheckout>>,
) -> Result<Option<super::step::Sealed>> {
    let Some(commit) = cp.seal(&req.paths, &req.message)? else {
        return Ok(None);
    };
    let dir = crate::git::checkout_dir(project, name);
    let deps = &req.environment.dependency_dirs;
    let co = match kept {
        Some(kept) => cp.checkout_sealed_reusing(&commit, &dir, deps, kept)?,
        None => cp.checkout_sealed(&commit, &dir, deps)?,
    };
    Ok(Some(finish_checkout(root, co, &req.environment)?))
}

/// A clean checkout of `commit` in `dir` (made anew, outside the project)
/// with the dependency directories of `environment` linked, the small
/// files outside the commit that still hold what they held at the start
/// copied in, and the environment its runs get.
pub fn open_checkout(
    cp: &Checkpoints,
    root: &Path,
    commit: &str,
    dir: &Path,
    environment: &crate::artifacts::iteration_state::SealedEnvironment,
) -> Result<super::step::Sealed> {
    let co = cp.checkout_sealed(commit, dir, &environment.dependency_dirs)?;
    finish_checkout(root, co, environment)
}

/// The checkout `co` of the project at `root` with the small files outside
/// the commit that still hold what they held at the start copied in, and
/// the environment its runs get.
fn finish_checkout(
    root: &Path,
    co: crate::git::SealedCheckout,
    environment: &crate::artifacts::iteration_state::SealedEnvironment,
) -> Result<super::step::Sealed> {
    // Small files outside the commit there at the start take part while
    // they still hold what they held then (a generated `_version.py`, an
    // untracked helper the test command runs).
    for f in &environment.start_files {
        let from = root.join(&f.path);
        if !std::fs::symlink_metadata(&from).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let same = git2::Oid::hash_file(git2::ObjectType::Blob, &from)
            .is_ok_and(|id| id.to_string() == f.blob);
        let to = co.root.join(&f.path);
        if same && std::fs::symlink_metadata(&to).is_err() {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            std::fs::copy(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
    }
    let env = sealed_env(&SealedEnvInput {
        project: root,
        checkout: &co.root,
        cargo: root.join("Cargo.toml").is_file(),
        src_dir: co.root.join("src").is_dir(),
        cargo_target_dir: std::env::var_os("CARGO_TARGET_DIR").is_some(),
        python_path: std::env::var("PYTHONPATH").ok(),
    });
    Ok(super::step::Sealed {
        commit: co.commit,
        dir: co.dir,
        root: co.root,
        env,
    })
}

/// What a sealed run's environment needs to know.
pub struct SealedEnvInput<'a> {
    pub project: &'a Path,
    pub checkout: &'a Path,
    /// The project is a cargo package (`Cargo.toml` at its root).
    pub cargo: bool,
    /// The checkout has a `src/` directory.
    pub src_dir: bool,
    /// `CARGO_TARGET_DIR` is set already (the user's choice stands).
    pub cargo_target_dir: bool,
    pub python_path: Option<String>,
}

/// The variables a sealed run gets (DESIGN.md §11.1): cargo builds into
/// the project's `target/`, so dependencies are not built again (only the
/// crate's own code: its path differs); Python imports the checkout's code
/// first, also where the project is installed in editable mode (which
/// points at the work tree).
pub fn sealed_env(i: &SealedEnvInput) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if i.cargo && !i.cargo_target_dir {
        env.push((
            "CARGO_TARGET_DIR".to_string(),
            i.project.join("target").display().to_string(),
        ));
    }
    let mut python_path = vec![i.checkout.display().to_string()];
    if i.src_dir {
        python_path.push(i.checkout.join("src").display().to_string());
    }
    python_path.extend(i.python_path.clone().filter(|p| !p.is_empty()));
    env.push(("PYTHONPATH".to_string(), python_path.join(":")));
    env
}

/// The first line of a command, cut to 80 characters, for messages.
pub fn short(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(80).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

/// At most `max` bytes from the start of `path` as text ("" when missing).
pub fn read_head(path: &Path, max: usize) -> String {
    let Ok(f) = std::fs::File::open(path) else {
        return String::new();
    };
    let mut buf = Vec::new();
    let _ = f.take(max as u64).read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The newest file matching `pattern` that was written since `since`
/// (relative path). A pattern without `/` matches file names anywhere in
/// the project; with `/` it matches the relative path (`**`, `*`, `?`).
/// `.git`, `.workflow`, `node_modules` and `target` are not searched.
pub fn find_output_file(root: &Path, pattern: &str, since: SystemTime) -> Option<String> {
    let since = since.checked_sub(Duration::from_secs(2)).unwrap_or(since);
    let by_name = !pattern.contains('/');
    let mut best: Option<(SystemTime, String)> = None;
    let walker = walkdir::WalkDir::new(root)
        .max_depth(32)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !matches!(
                    e.file_name().to_str(),
                    Some(".git" | ".workflow" | "node_modules" | "target")
                )
        });
    for entry in walker.filter_map(|e| e.ok()) {
        if !entry.file_type().is_file() {
            continue;
        }
        entry.path().strip_prefix(root).ok()?;
        let rel = crate::session::layout::rel_to(root, entry.path());
        let subject = if by_name {
            entry.file_name().to_string_lossy().into_owned()
        } else {
            rel.clone()
        };
        if !testing::run::glob_match(pattern, &subject) {
            continue;
        }
        let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        if modified < since {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(t, p)| modified > *t || (modified == *t && rel > *p))
        {
            best = Some((modified, rel));
        }
    }
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_by_name_or_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::create_dir_all(root.join("specs/temp")).unwrap();
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        std::fs::write(root.join("specs/temp/01-coverage-improvements.md"), "x").unwrap();
        std::fs::write(root.join("node_modules/9-coverage-improvements.md"), "x").unwrap();
        let since = SystemTime::now() - Duration::from_secs(60);
        assert_eq!(
            find_output_file(root, "*-coverage-improvements.md", since).as_deref(),
            Some("specs/temp/01-coverage-improvements.md")
        );
        assert_eq!(
            find_output_file(root, "specs/**/*.md", since).as_deref(),
            Some("specs/temp/01-coverage-improvements.md")
        );
        assert_eq!(
            find_output_file(root, "*.md", SystemTime::now() + Duration::from_secs(60)),
            None
        );
        assert_eq!(find_output_file(root, "*.txt", old), None);
    }

    #[test]
    fn a_sealed_run_builds_into_the_projects_target_and_imports_the_checkout() {
        let (project, checkout) = (Path::new("/p"), Path::new("/tmp/wfx-sealed-x"));
        let env = |cargo, src_dir, cargo_target_dir, python_path: Option<&str>| {
            sealed_env(&SealedEnvInput {
                project,
                checkout,
                cargo,
                src_dir,
                cargo_target_dir,
                python_path: python_path.map(String::from),
            })
        };
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            env(true, true, false, None),
            [
                pair("CARGO_TARGET_DIR", "/p/target"),
                pair("PYTHONPATH", "/tmp/wfx-sealed-x:/tmp/wfx-sealed-x/src"),
            ]
        );
        // The user's CARGO_TARGET_DIR stands; their PYTHONPATH comes after.
        assert_eq!(
            env(true, false, true, Some("/opt/lib")),
            [pair("PYTHONPATH", "/tmp/wfx-sealed-x:/opt/lib")]
        );
        assert_eq!(
            env(false, false, false, Some("")),
            [pair("PYTHONPATH", "/tmp/wfx-sealed-x")]
        );
    }

    #[test]
    fn heads_and_short_commands() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.log");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_head(&p, 4), "0123");
        assert_eq!(read_head(&dir.path().join("none"), 4), "");
        assert_eq!(short("make\nmore"), "make…");
        assert_eq!(short("make"), "make");
    }
}
