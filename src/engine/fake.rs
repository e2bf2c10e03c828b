//! The test double of [`Ports`] (tests only): a project of a few files in
//! memory, a test suite judged from those files, scripted agents and shell
//! commands, a git history of snapshots and commits, and the session's
//! documents kept as bytes. The whole loop of either machine runs
//! in-process against it; [`FakePorts::journal`] says what was done.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::ports::{Ports, ShellRun, TestRun, Wake};
use super::step::{Inspection, ProcessEnd, Snapshot};
use super::txn::{Document, Durability};
use crate::agents::{CallRecord, ErrorKind, Invocation, Role};
use crate::artifacts::Timestamp;
use crate::artifacts::task_record::{Coverage, CoverageSource, Finding};
use crate::artifacts::test_results::{Scope, TestResults};
use crate::error::{Error, Result};
use crate::git::{Change, ChangeKind, DiffStat, FileVersions, HeadGuard, Trailers};
use crate::testing::Progress;
use crate::testing::parse::{ParsedCase, ParsedRun, Status};

/// The project's files: path → content.
pub type Work = BTreeMap<String, String>;

/// One test of the fake suite: it passes when `file` contains `needle`.
#[derive(Debug, Clone)]
pub struct FakeTest {
    pub id: String,
    pub file: String,
    pub needle: String,
    /// Fails on its first run in a process, then passes (a flaky test).
    pub flaky: bool,
    /// The error it fails with, instead of an assertion on its needle (a
    /// missing module: the environment, not the code).
    pub error: Option<String>,
}

impl FakeTest {
    pub fn new(id: &str, file: &str, needle: &str) -> FakeTest {
        FakeTest {
            id: id.into(),
            file: file.into(),
            needle: needle.into(),
            flaky: false,
            error: None,
        }
    }
}

/// What a scripted agent does in one call.
#[derive(Debug, Clone, Default)]
pub struct AgentAct {
    /// Files to write (path, content).
    pub writes: Vec<(String, String)>,
    /// What it answers.
    pub text: String,
    pub exit_code: i32,
    pub cost_usd: Option<f64>,
    pub error: Option<ErrorKind>,
    /// Ctrl-C arrived during the call.
    pub interrupted: bool,
    /// Session documents it overwrites (`Some`) or removes (`None`).
    pub session_writes: Vec<(PathBuf, Option<String>)>,
    /// What it does to the repository, after its writes.
    pub git: Vec<GitAct>,
    /// Files it writes after that (an edit after a reset).
    pub writes_after_git: Vec<(String, String)>,
    /// wfx is killed (`kill -9`) while the call runs, after the agent did
    /// all of the above: the call returns an error, as a dead process
    /// reports nothing.
    pub killed: bool,
}

/// What a scripted agent does with git (DESIGN.md §10.2's cases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitAct {
    /// `git commit -am <message>`: the whole work tree, on top of `HEAD`.
    Commit(String),
    /// `git reset --hard HEAD~n`.
    ResetHard(usize),
    /// `git checkout -b <name> HEAD~n`: a new branch at `HEAD`'s n-th
    /// ancestor, checked out with its files (`n = 0`: `git switch -c`).
    Switch(String, usize),
}

impl AgentAct {
    pub fn writes(files: &[(&str, &str)]) -> AgentAct {
        AgentAct {
            writes: files
                .iter()
                .map(|(p, c)| (p.to_string(), c.to_string()))
                .collect(),
            text: "done".into(),
            ..AgentAct::default()
        }
    }
}

/// A scripted agent: the `n`-th call (1-based) of a role.
pub type AgentScript = Box<dyn FnMut(Role, u32, &Work) -> AgentAct>;
/// A scripted shell: `(command, work) → (exit code, output, writes)`.
pub type ShellScript = Box<dyn FnMut(&str, &Work) -> (i32, String, Vec<(String, String)>)>;

#[derive(Debug, Clone)]
struct FakeCommit {
    id: String,
    parent: Option<String>,
    message: String,
    /// wfx's trailers (`None`: a commit somebody else made).
    trailers: Option<Trailers>,
    /// The work tree (paths committed) before and after.
    before: Work,
    after: Work,
}

/// The fake world.
pub struct FakePorts {
    /// The clock: starts at 2026-01-01 and moves one second per reading.
    pub clock: Timestamp,
    pub work: Work,
    pub suite: Vec<FakeTest>,
    pub agent: AgentScript,
    pub shell: ShellScript,
    /// The session's documents as written.
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    /// What was done, one line per effect (`tests …`, `agent fix #1`, `commit …`).
    pub journal: Vec<String>,
    /// Ctrl-C arrives before the driver's step number `n` (0-based: after
    /// `n` steps were performed).
    pub interrupt_after: Option<usize>,
    /// Ctrl-C arrives during the `n`-th test run (1-based).
    pub interrupt_in_run: Option<usize>,
    /// The next this many subset runs cannot run at all: no test output,
    /// exit 7 (a filter the runner took for a file name).
    pub unrunnable_subsets: usize,
    /// Steps the driver asked about (one `interrupted()` call each).
    pub steps: std::cell::Cell<usize>,
    /// Effects that reached the world (tests, agents, shell, git).
    pub effects: usize,
    test_runs: usize,
    /// Durable commits of steps (documents written).
    pub step_commits: usize,
    trees: BTreeMap<String, Work>,
    commits: Vec<FakeCommit>,
    calls: BTreeMap<&'static str, u32>,
    runs_of: BTreeMap<String, u32>,
    /// What wfx wrote, as the real transaction keeps it.
    kept: super::tamper::SessionCopies,
    /// `--watch`: what each wait ends with, and the files the person saved
    /// first; with none left, a wait ends with Ctrl-C.
    pub wakes: std::collections::VecDeque<(Wake, Vec<(String, String)>)>,
    /// `HEAD`'s commit; the commits form a graph through their parents.
    head: Option<String>,
    /// The branch `HEAD` is on (`refs/heads/…`; `None`: detached).
    pub branch: Option<String>,
    /// Every branch and its commit.
    pub branches: BTreeMap<String, String>,
    /// The run before this one was killed instead of releasing the
    /// session (what the real ports read from a stale lock).
    pub previous_run_died: bool,
}

/// The branch a fake project starts on.
pub const MAIN: &str = "refs/heads/main";

impl FakePorts {
    /// A project of these files, committed (as `initial`), and its suite.
    pub fn new(work: &[(&str, &str)], suite: Vec<FakeTest>) -> FakePorts {
        let work: Work = work
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        let initial = FakeCommit {
            id: "c0000000000000".into(),
            parent: None,
            message: "initial".into(),
            trailers: None,
            before: Work::new(),
            after: work.clone(),
        };
        let initial_id = initial.id.clone();
        FakePorts {
            clock: chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
                .expect("a time")
                .to_utc(),
            work,
            suite,
            agent: Box::new(|_, _, _| AgentAct::writes(&[])),
            shell: Box::new(|_, _| (0, String::new(), Vec::new())),
            files: BTreeMap::new(),
            journal: Vec::new(),
            interrupt_after: None,
            interrupt_in_run: None,
            unrunnable_subsets: 0,
            steps: std::cell::Cell::new(0),
            effects: 0,
            test_runs: 0,
            step_commits: 0,
            trees: BTreeMap::new(),
            commits: vec![initial],
            calls: BTreeMap::new(),
            runs_of: BTreeMap::new(),
            kept: Default::default(),
            wakes: Default::default(),
            head: Some(initial_id.clone()),
            branch: Some(MAIN.into()),
            branches: BTreeMap::from([(MAIN.to_string(), initial_id)]),
            previous_run_died: false,
        }
    }

    /// Subjects of the commits on `HEAD` after `initial`, newest first
    /// (as `git log --format=%s`).
    pub fn subjects(&self) -> Vec<String> {
        self.log()
            .iter()
            .filter_map(|id| self.commit_of(id))
            .filter(|c| c.parent.is_some())
            .map(|c| c.message.lines().next().unwrap_or_default().to_string())
            .collect()
    }

    /// The commits `HEAD` reaches, newest first (`git rev-list HEAD`).
    pub fn log(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = self.head.clone();
        while let Some(id) = at {
            at = self.commit_of(&id).and_then(|c| c.parent.clone());
            out.push(id);
        }
        out
    }

    /// `HEAD`'s commit.
    pub fn head_commit(&self) -> Option<&str> {
        self.head.as_deref()
    }

    /// A commit's files.
    pub fn tree_of(&self, id: &str) -> Option<&Work> {
        self.commit_of(id).map(|c| &c.after)
    }

    fn commit_of(&self, id: &str) -> Option<&FakeCommit> {
        self.commits.iter().find(|c| c.id == id)
    }

    /// The files of `commit` (none for an unborn branch).
    fn files_at(&self, commit: Option<&str>) -> Work {
        commit
            .and_then(|id| self.tree_of(id))
            .cloned()
            .unwrap_or_default()
    }

    /// `HEAD` (and the branch it is on) to `commit`.
    fn move_head(&mut self, commit: Option<String>) {
        if let Some(b) = &self.branch {
            match &commit {
                Some(c) => self.branches.insert(b.clone(), c.clone()),
                None => self.branches.remove(b),
            };
        }
        self.head = commit;
    }

    /// A commit on top of `HEAD`, which moves to it.
    fn new_commit(
        &mut self,
        message: &str,
        trailers: Option<Trailers>,
        before: Work,
        after: Work,
    ) -> String {
        let id = format!("c{:03}0000000000", self.commits.len());
        self.commits.push(FakeCommit {
            id: id.clone(),
            parent: self.head.clone(),
            message: message.to_string(),
            trailers,
            before,
            after,
        });
        self.move_head(Some(id.clone()));
        id
    }

    /// The work tree from the files of one commit to another's, as a
    /// checkout does it (files neither tracks are left alone).
    fn check_out(&mut self, from: &Work, to: &Work) {
        for p in from.keys().filter(|p| !to.contains_key(*p)) {
            self.work.remove(p);
        }
        self.work
            .extend(to.iter().map(|(p, c)| (p.clone(), c.clone())));
    }

    /// wfx's commit with these trailers on `HEAD`'s history (made before
    /// a crash: found, not made again).
    fn found(&self, trailers: &Trailers) -> Option<String> {
        self.log()
            .into_iter()
            .find(|id| self.commit_of(id).and_then(|c| c.trailers.as_ref()) == Some(trailers))
    }

    /// `HEAD`'s n-th first-parent ancestor.
    fn ancestor(&self, n: usize) -> Option<String> {
        self.log().get(n).cloned()
    }

    /// What a scripted agent does with git.
    fn agent_git(&mut self, act: &GitAct) {
        let here = self.files_at(self.head.as_deref());
        match act {
            GitAct::Commit(message) => {
                let after = self.work.clone();
                self.new_commit(message, None, here, after);
            }
            GitAct::ResetHard(n) => {
                let to = self.ancestor(*n);
                let files = self.files_at(to.as_deref());
                self.move_head(to);
                self.check_out(&here, &files);
            }
            GitAct::Switch(name, n) => {
                let to = self.ancestor(*n);
                let files = self.files_at(to.as_deref());
                let branch = format!("refs/heads/{name}");
                if let Some(c) = &to {
                    self.branches.insert(branch.clone(), c.clone());
                }
                self.branch = Some(branch);
                self.head = to;
                self.check_out(&here, &files);
            }
        }
        self.journal.push(format!("agent git {act:?}"));
    }

    /// A session document as written, parsed.
    pub fn json(&self, path: &Path) -> serde_json::Value {
        serde_json::from_slice(self.files.get(path).expect("written")).expect("json")
    }

    fn tick(&mut self) {
        self.effects += 1;
    }

    fn tree_id(work: &Work) -> String {
        let text: String = work.iter().map(|(p, c)| format!("{p}\0{c}\0")).collect();
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.as_bytes().hash(&mut h);
        format!("t{:016x}", h.finish())
    }

    fn head(&self) -> Option<String> {
        self.head.clone()
    }
}

impl Ports for FakePorts {
    fn now(&self) -> Timestamp {
        self.clock
    }

    fn wait_for_fix(&mut self, watching: &mut dyn FnMut(bool)) -> Result<Wake> {
        watching(true);
        let Some((wake, writes)) = self.wakes.pop_front() else {
            self.journal.push("wait · Ctrl-C".into());
            return Ok(Wake::Interrupted);
        };
        self.journal.push(format!("wait · {wake:?}"));
        self.work.extend(writes);
        Ok(wake)
    }

    fn interrupted(&self) -> bool {
        let step = self.steps.get();
        self.steps.set(step + 1);
        self.interrupt_after.is_some_and(|n| step >= n)
    }

    fn check_session(&mut self) -> Result<()> {
        Ok(())
    }

    fn run_tests(
        &mut self,
        run: &TestRun<'_>,
        _progress: Option<Box<dyn FnMut(Progress) + Send>>,
    ) -> Result<TestResults> {
        self.tick();
        self.test_runs += 1;
        self.clock += chrono::Duration::seconds(1);
        let unrunnable = run.subset.is_some() && self.unrunnable_subsets > 0;
        if unrunnable {
            self.unrunnable_subsets -= 1;
        }
        let mut parsed = ParsedRun::new(if unrunnable { "" } else { "junit" });
        for t in self.suite.iter().filter(|_| !unrunnable) {
            if let Some(subset) = run.subset
                && !subset.contains(&t.id)
            {
                continue;
            }
            let n = self.runs_of.entry(t.id.clone()).or_insert(0);
            *n += 1;
            let pass = self
                .work
                .get(&t.file)
                .is_some_and(|c| c.contains(&t.needle))
                && !(t.flaky && *n == 1);
            parsed.cases.push(ParsedCase {
                id: t.id.clone(),
                status: if pass { Status::Passed } else { Status::Failed },
                // pytest-style ids: the test's own file before `::`.
                file: Some(t.id.split("::").next().unwrap_or(&t.file).to_string()),
                line: if pass { None } else { Some(1) },
                error: match (&t.error, pass) {
                    (_, true) => String::new(),
                    (Some(e), false) => e.clone(),
                    (None, false) => format!("AssertionError: {} lacks {:?}", t.file, t.needle),
                },
                message: String::new(),
                ..ParsedCase::default()
            });
        }
        let failing = parsed.cases.iter().any(|c| c.status != Status::Passed);
        let scope = if run.subset.is_some() {
            Scope::Affected
        } else {
            Scope::Full
        };
        self.journal.push(format!(
            "tests {} → {} failing",
            match run.subset {
                Some(s) => format!("{s:?}"),
                None => "all".into(),
            },
            parsed
                .cases
                .iter()
                .filter(|c| c.status != Status::Passed)
                .count()
        ));
        if self.interrupt_in_run == Some(self.test_runs) {
            return Err(Error::Interrupted(format!(
                "`{}` was stopped",
                run.detected.command
            )));
        }
        Ok(crate::testing::results::build(
            parsed,
            crate::testing::results::RunFacts {
                command: run.detected.command.clone(),
                framework: run.detected.framework,
                scope,
                exit_code: Some(if unrunnable { 7 } else { i32::from(failing) }),
                timed_out_after: None,
                signal: None,
                duration_ms: 1_000,
                setup_ms: None,
                output_tail: "",
                output_log: None,
                truncated: false,
                started_at: Some(self.clock),
                previous: run.previous,
                notes: Vec::new(),
            },
        ))
    }

    fn invoke_agent(&mut self, inv: &Invocation) -> Result<CallRecord> {
        self.tick();
        let n = {
            let c = self.calls.entry(inv.role.as_str()).or_insert(0);
            *c += 1;
            *c
        };
        let act = (self.agent)(inv.role, n, &self.work);
        for (p, c) in &act.writes {
            self.work.insert(p.clone(), c.clone());
        }
        for (p, c) in &act.session_writes {
            match c {
                Some(c) => self.files.insert(p.clone(), c.clone().into_bytes()),
                None => self.files.remove(p),
            };
        }
        for g in &act.git {
            self.agent_git(g);
        }
        self.work.extend(act.writes_after_git.iter().cloned());
        if act.killed {
            self.journal.push("killed".into());
            return Err(Error::Internal("killed during the agent's call".into()));
        }
        self.journal.push(format!(
            "agent {} {} #{n}{}",
            inv.agent.name,
            inv.role,
            if act.writes.is_empty() {
                String::new()
            } else {
                format!(
                    " writes {}",
                    act.writes
                        .iter()
                        .map(|(p, _)| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ));
        self.clock += chrono::Duration::seconds(2);
        Ok(CallRecord {
            exit_code: Some(act.exit_code),
            interrupted: act.interrupted,
            duration_ms: 2_000,
            cost_usd: act.cost_usd,
            result_text: act.text,
            error_kind: act.error,
            error_message: act.error.map(|k| format!("{} (fake)", k.as_str())),
            prompt_file: inv.files.prompt.display().to_string(),
            output_file: inv.files.output.display().to_string(),
            ..CallRecord::new(&inv.agent.name, inv.role, self.clock)
        })
    }

    fn shell(&mut self, run: &ShellRun<'_>) -> Result<ProcessEnd> {
        self.tick();
        let (code, output, writes) = (self.shell)(run.command, &self.work);
        for (p, c) in writes {
            self.work.insert(p, c);
        }
        self.journal
            .push(format!("shell `{}` → exit {code}", run.command));
        self.files
            .insert(run.log.to_path_buf(), output.into_bytes());
        Ok(ProcessEnd {
            exit_code: Some(code),
            timed_out: false,
            duration_ms: 500,
            describe: format!("exit {code}"),
            last_line: String::new(),
        })
    }

    fn snapshot(&mut self) -> Result<Snapshot> {
        let id = Self::tree_id(&self.work);
        self.trees.insert(id.clone(), self.work.clone());
        Ok(Snapshot {
            tree: Some(id),
            head: self.head(),
        })
    }

    fn inspect(
        &mut self,
        before: &Snapshot,
        versions_of: Option<fn(&str) -> bool>,
    ) -> Result<Inspection> {
        let old = before
            .tree
            .as_ref()
            .and_then(|t| self.trees.get(t))
            .cloned()
            .unwrap_or_default();
        let mut changes = Vec::new();
        let paths: BTreeSet<&String> = old.keys().chain(self.work.keys()).collect();
        let mut versions = Vec::new();
        for p in paths {
            let (a, b) = (old.get(p), self.work.get(p));
            if a == b {
                continue;
            }
            changes.push(Change {
                path: p.clone(),
                kind: match (a, b) {
                    (None, _) => ChangeKind::Added,
                    (_, None) => ChangeKind::Deleted,
                    _ => ChangeKind::Modified,
                },
                old_path: None,
            });
            if versions_of.is_some_and(|f| f(p)) {
                versions.push((
                    p.clone(),
                    FileVersions {
                        before: a.map(|s| s.clone().into_bytes()),
                        after: b.map(|s| s.clone().into_bytes()),
                    },
                ));
            }
        }
        let commit_paths = crate::git::change_paths(&changes);
        Ok(Inspection {
            before: before.clone(),
            head_after: self.head(),
            diffstat: DiffStat {
                files: changes.len(),
                insertions: changes.len(),
                deletions: changes.len(),
            },
            changes,
            commit_paths,
            diff: Default::default(),
            versions,
            too_big: Vec::new(),
        })
    }

    fn changed_lines(&mut self, _since: &str, _path: &str) -> Result<Option<BTreeSet<u32>>> {
        Ok(None)
    }

    fn commit(
        &mut self,
        paths: &[String],
        _session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>> {
        self.tick();
        if let Some(id) = self.found(trailers) {
            return Ok(Some(id));
        }
        let parent = self.files_at(self.head.as_deref());
        let mut after = parent.clone();
        for p in paths {
            match self.work.get(p) {
                Some(c) => {
                    after.insert(p.clone(), c.clone());
                }
                None => {
                    after.remove(p);
                }
            }
        }
        self.journal.push(format!(
            "commit {}",
            message.lines().next().unwrap_or_default()
        ));
        Ok(Some(self.new_commit(
            message,
            Some(trailers.clone()),
            parent,
            after,
        )))
    }

    fn revert(
        &mut self,
        commit: &str,
        _session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<Option<String>> {
        self.tick();
        if let Some(id) = self.found(trailers) {
            return Ok(Some(id));
        }
        let Some(target) = self.commit_of(commit).cloned() else {
            return Err(Error::Git(format!("no commit {commit}")));
        };
        let mut after = self.files_at(self.head.as_deref());
        for (p, c) in &target.after {
            if target.before.get(p) != Some(c) {
                match target.before.get(p) {
                    Some(old) => {
                        after.insert(p.clone(), old.clone());
                        self.work.insert(p.clone(), old.clone());
                    }
                    None => {
                        after.remove(p);
                        self.work.remove(p);
                    }
                }
            }
        }
        self.journal.push(format!("revert {commit}"));
        Ok(Some(self.new_commit(
            message,
            Some(trailers.clone()),
            target.after,
            after,
        )))
    }

    fn scan(&mut self, _tests: bool, _files: &[String]) -> Vec<Finding> {
        Vec::new()
    }

    fn coverage(&mut self, _source: CoverageSource) -> Coverage {
        Coverage::unknown("no coverage report (fake)")
    }

    fn find_output(&mut self, pattern: &str, _since: SystemTime) -> Option<String> {
        self.work
            .keys()
            .find(|p| crate::testing::run::glob_match(pattern, p))
            .cloned()
    }

    fn read_head(&mut self, path: &Path, max: usize) -> String {
        let text = String::from_utf8_lossy(self.files.get(path).map_or(&[][..], |b| b.as_slice()))
            .into_owned();
        text.chars().take(max).collect()
    }

    fn read_log(&mut self, path: &Path) -> String {
        self.read_head(path, usize::MAX)
    }

    fn archive(&mut self, session_id: &str) -> Result<()> {
        self.tick();
        self.journal.push(format!("archive {session_id}"));
        Ok(())
    }

    fn commit_step(&mut self, docs: Vec<Document>) -> Result<()> {
        if docs.iter().any(|d| d.durability != Durability::View) {
            self.step_commits += 1;
        }
        for d in docs {
            self.kept.record(&d.path, &d.bytes);
            self.files.insert(d.path, d.bytes);
        }
        Ok(())
    }

    fn write_view(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.kept.record(path, bytes);
        self.files.insert(path.to_path_buf(), bytes.to_vec());
        Ok(())
    }

    fn undo_session_edits(&mut self) -> Result<Vec<PathBuf>> {
        let edited = self.kept.edited(|p| self.files.get(p).cloned());
        for p in &edited {
            let bytes = self.kept.copy(p).unwrap_or_default().to_vec();
            self.files.insert(p.clone(), bytes);
            self.journal.push(format!("restored {}", p.display()));
        }
        Ok(edited)
    }

    fn head_guard(&mut self) -> Result<HeadGuard> {
        Ok(HeadGuard {
            head: self.head.clone(),
            branch: self.branch.clone(),
            session_files: Vec::new(),
        })
    }

    fn previous_run_died(&self) -> bool {
        self.previous_run_died
    }

    fn head_now(&mut self) -> Result<Option<String>> {
        Ok(self.head.clone())
    }

    fn branch_now(&mut self) -> Result<Option<String>> {
        Ok(self.branch.clone())
    }

    fn commits_since(&mut self, pre: Option<&str>, post: &str) -> Result<Option<Vec<String>>> {
        let mut out = Vec::new();
        let mut at = Some(post.to_string());
        while let Some(id) = at {
            if Some(id.as_str()) == pre {
                break;
            }
            at = self.commit_of(&id).and_then(|c| c.parent.clone());
            out.push(id);
            if at.is_none() && pre.is_some() {
                return Ok(None);
            }
        }
        out.reverse();
        Ok(Some(out))
    }

    fn fold_head(&mut self, pre: Option<&str>) -> Result<()> {
        self.journal.push(format!("fold HEAD to {pre:?}"));
        self.move_head(pre.map(str::to_string));
        Ok(())
    }

    fn restore_head(&mut self, guard: &HeadGuard, snapshot: Option<&str>) -> Result<Vec<String>> {
        let moved = self.files_at(self.head.as_deref());
        let pre = self.files_at(guard.head.as_deref());
        self.branch = guard.branch.clone();
        self.move_head(guard.head.clone());
        let before = self.work.clone();
        match snapshot.and_then(|t| self.trees.get(t)).cloned() {
            Some(tree) => self.work = tree,
            // Only what the move itself wrote; anything else is somebody's.
            None => {
                let paths: BTreeSet<String> = pre.keys().chain(moved.keys()).cloned().collect();
                for p in paths {
                    if pre.get(&p) != moved.get(&p) && before.get(&p) == moved.get(&p) {
                        match pre.get(&p) {
                            Some(c) => self.work.insert(p, c.clone()),
                            None => self.work.remove(&p),
                        };
                    }
                }
            }
        }
        let paths: BTreeSet<&String> = before.keys().chain(self.work.keys()).collect();
        let restored: Vec<String> = paths
            .into_iter()
            .filter(|p| before.get(*p) != self.work.get(*p))
            .cloned()
            .collect();
        self.journal.push(format!(
            "restore HEAD to {:?} on {:?}",
            guard.head, guard.branch
        ));
        Ok(restored)
    }

    fn seal(
        &mut self,
        req: &crate::engine::step::SealRequest,
    ) -> Result<Option<crate::engine::step::Sealed>> {
        self.journal.push(format!("seal {:?}", req.paths));
        Ok(Some(crate::engine::step::Sealed {
            commit: format!("s{:013}", self.journal.len()),
            dir: PathBuf::from("/sealed"),
            root: PathBuf::from("/sealed"),
            env: Vec::new(),
        }))
    }

    fn unseal(
        &mut self,
        sealed: &crate::engine::step::Sealed,
        _req: &crate::engine::step::SealRequest,
    ) -> Result<Vec<String>> {
        self.journal.push(format!("unseal {}", sealed.commit));
        Ok(Vec::new())
    }

    fn undo_tree_edits(&mut self, before: &Snapshot) -> Result<Vec<String>> {
        let Some(old) = before
            .tree
            .as_ref()
            .and_then(|t| self.trees.get(t))
            .cloned()
        else {
            return Ok(Vec::new());
        };
        let paths: BTreeSet<String> = old.keys().chain(self.work.keys()).cloned().collect();
        let changed: Vec<String> = paths
            .into_iter()
            .filter(|p| old.get(p) != self.work.get(p))
            .collect();
        if !changed.is_empty() {
            self.journal.push(format!("undone {}", changed.join(", ")));
            self.work = old;
        }
        Ok(changed)
    }

    /// The candidates one after the other, each on a copy of the
    /// snapshot's files (its "checkout"): the scripted agent and suite see
    /// that copy, the project's files are left as they were.
    fn run_candidates(
        &mut self,
        batch: &super::candidates::CandidateBatch,
        versions_of: Option<fn(&str) -> bool>,
        notify: &mut dyn FnMut(super::candidates::CandidateNote<'_>),
    ) -> Result<Vec<super::candidates::CandidateDone>> {
        use super::candidates::{self, CandidateDone, CandidateEnd, CandidateNote};
        let base = batch
            .snapshot
            .tree
            .as_ref()
            .and_then(|t| self.trees.get(t))
            .cloned()
            .ok_or_else(|| Error::Internal("candidates need a snapshot".into()))?;
        let mut out = Vec::new();
        let mut cost = 0.0;
        for c in &batch.candidates {
            if let Some(reason) = candidates::may_start(batch, cost) {
                let done = CandidateDone {
                    index: c.index,
                    end: CandidateEnd::NotStarted(reason),
                };
                notify(CandidateNote::Finished(c, &done));
                out.push(done);
                continue;
            }
            notify(CandidateNote::Started(c));
            self.journal
                .push(format!("candidate {} {}", c.index, c.agent));
            let project = std::mem::replace(&mut self.work, base.clone());
            let ran = candidates::run_one(
                &mut FakeCheckout {
                    ports: self,
                    base: batch.snapshot.clone(),
                },
                c,
                &batch.tests,
                versions_of,
                &|p: &Path| p.display().to_string(),
            );
            self.work = project;
            let end = match ran {
                Ok(r) => CandidateEnd::Ran(Box::new(r)),
                Err(e @ Error::Interrupted(_)) => return Err(e),
                Err(e) => CandidateEnd::Broken(e.to_string()),
            };
            let done = CandidateDone {
                index: c.index,
                end,
            };
            cost += candidates::cost_of(&done);
            notify(CandidateNote::Finished(c, &done));
            out.push(done);
        }
        Ok(out)
    }

    fn apply_tree(&mut self, before: &str, tree: &str) -> Result<Vec<String>> {
        self.tick();
        let (Some(old), Some(new)) = (self.trees.get(before), self.trees.get(tree)) else {
            return Err(Error::Internal(format!("no tree {tree}")));
        };
        let (old, new) = (old.clone(), new.clone());
        let paths: Vec<String> = old
            .keys()
            .chain(new.keys())
            .filter(|p| old.get(*p) != new.get(*p))
            .cloned()
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        for p in &paths {
            match new.get(p) {
                Some(c) => self.work.insert(p.clone(), c.clone()),
                None => self.work.remove(p),
            };
        }
        self.journal.push(format!("apply {}", paths.join(", ")));
        Ok(paths)
    }
}

/// A candidate's checkout in the fake world: the ports, their files
/// swapped for the candidate's copy (see `run_candidates`).
struct FakeCheckout<'a> {
    ports: &'a mut FakePorts,
    base: Snapshot,
}

impl super::candidates::CandidateWorld for FakeCheckout<'_> {
    fn now(&self) -> Timestamp {
        self.ports.now()
    }

    fn invoke_agent(&mut self, inv: &Invocation) -> Result<CallRecord> {
        self.ports.invoke_agent(inv)
    }

    fn shell(&mut self, run: &ShellRun<'_>) -> Result<ProcessEnd> {
        self.ports.shell(run)
    }

    fn root(&self) -> PathBuf {
        PathBuf::from("/candidate")
    }

    fn env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn undo_planted_links(&mut self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn inspect(&mut self, versions_of: Option<fn(&str) -> bool>) -> Result<Inspection> {
        self.ports.inspect(&self.base, versions_of)
    }

    fn run_tests(&mut self, run: &TestRun<'_>) -> Result<TestResults> {
        self.ports.run_tests(run, None)
    }

    fn tree(&mut self) -> Result<Option<String>> {
        let id = FakePorts::tree_id(&self.ports.work);
        self.ports.trees.insert(id.clone(), self.ports.work.clone());
        Ok(Some(id))
    }
}
