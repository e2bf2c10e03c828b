//! Git checkpoints (DESIGN.md §5.5): every fix attempt becomes its own
//! commit, a regression becomes a revert of exactly that commit, and the
//! user's own work is never swept into a commit.
//!
//! Everything goes through [`Checkpoints`], opened from the project root.
//! Outside a git repository it is inert: every method is a no-op that
//! returns an empty answer, so the caller checks [`Checkpoints::is_repo`]
//! once, says so, and runs without commits.
//!
//! Three rules keep the user's work safe:
//! - A snapshot is a git *tree object* written to the object database, never
//!   a commit, a ref or a change to the user's index; its id is a plain
//!   string that `iteration-state.json` can keep across a crash.
//! - A commit is built from `HEAD`'s tree plus exactly the named paths as they
//!   are on disk (and the session's non-ignored artifacts); afterwards only
//!   those paths' index entries are updated, so whatever else the user had
//!   staged stays staged and whatever was unstaged stays unstaged.
//! - Commits carry `Wfx-Session`, `Wfx-Iteration` and `Wfx-Kind` trailers;
//!   before committing, wfx looks for a commit with the same trailers, so a
//!   step repeated after `kill -9` never commits twice.
//!
//! Paths in and out are relative to the project root and `/`-separated,
//! like every path stored in an artifact (DESIGN.md §2). When the project
//! root is a subdirectory of the work tree, only that subdirectory is looked
//! at. `.workflow/` is never part of a snapshot or of the changed paths.

mod candidates;
pub mod convention;
mod excerpt;
mod guard;
mod head;
mod hooks;
mod message;
mod paths;
#[cfg(test)]
mod reuse_tests;
mod sealed;
mod squash;
mod sweep;
mod wip;
mod worktree;

pub use candidates::{candidate_dir, candidates_dir, sweep_candidates};
pub use excerpt::ExcerptBuilder;
pub use guard::{RepoGuard, RepoRestored};
pub use head::HeadGuard;
pub use message::{
    CommitKind, Convention, MessageStyle, Subject, Trailers, build_message, new_run_id,
    parse_trailers, template_variables,
};
pub use sealed::{
    DEPENDENCY_NAMES, KeptCheckout, SealedCheckout, checkout_dir, remove_checkout, sweep_checkout,
};
pub use squash::SquashOutcome;
pub use sweep::{sweep_dead_run, sweep_ref_locks};
pub use worktree::branch_name;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use git2::{
    Commit, Delta, DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, Index, IndexEntry,
    IndexTime, Oid, Repository, Signature, Status, StatusOptions, Time, Tree,
};

use crate::error::{Error, Result};
use paths::{bytes_to_path, from_repo, normalize_rel, show_list, to_repo, under};

/// How many commits back from `HEAD` the idempotence check looks for an
/// existing checkpoint. A session makes a few dozen commits at most; the
/// bound keeps the check cheap on long histories.
const TRAILER_SEARCH_DEPTH: usize = 500;

/// The directory wfx owns; excluded from snapshots and changed paths.
const WORKFLOW_DIR: &str = ".workflow";

const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;
const MODE_GITLINK: u32 = 0o160000;

/// How a path changed between a snapshot and the work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    /// Content, file mode or type (file ↔ symlink) changed.
    Modified,
    Deleted,
    /// Moved, possibly with edits; `old_path` says from where.
    Renamed,
}

/// One changed path, relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
    /// The path before a rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
}

impl Change {
    /// Every path a commit of this change must include: both sides of a
    /// rename, otherwise the path itself.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.old_path.as_deref())
    }
}

/// All paths of `changes` (both sides of renames), sorted and unique.
/// [`Checkpoints::commit_paths`] is the same minus the user's untracked
/// files, and is what a checkpoint should commit.
pub fn change_paths(changes: &[Change]) -> Vec<String> {
    let set: BTreeSet<&str> = changes.iter().flat_map(Change::paths).collect();
    set.into_iter().map(str::to_string).collect()
}

/// What a commit request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// A new commit (full hex id).
    Created(String),
    /// A commit with the same trailers already existed (a repeated step
    /// after a crash); nothing new was committed.
    Existing(String),
    /// The resulting tree equals `HEAD`'s: no commit was made.
    Unchanged,
    /// Not a git repository: nothing was done.
    NotARepo,
}

impl CommitOutcome {
    /// The commit id for `Created` and `Existing`.
    pub fn id(&self) -> Option<&str> {
        match self {
            CommitOutcome::Created(id) | CommitOutcome::Existing(id) => Some(id),
            CommitOutcome::Unchanged | CommitOutcome::NotARepo => None,
        }
    }
}

/// Size of a diff, for `fix-history.json`'s `diffstat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiffStat {
    pub files: usize,
    pub insertions: usize,
    pub deletions: usize,
}

/// What changed since a snapshot, from one diff of the work tree: the
/// paths, their size and the start of the patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotDiff {
    /// Sorted by path, as [`Checkpoints::changed_since`] gives them.
    pub changes: Vec<Change>,
    pub stat: DiffStat,
    /// Bounded and redacted with the process's secrets.
    pub excerpt: crate::artifacts::fix_history::DiffExcerpt,
}

/// One file's content in a snapshot and in the work tree now; `None` where
/// it does not exist (or is ignored, or a submodule).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileVersions {
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

impl FileVersions {
    /// The lines of `after` a change can have introduced a finding on
    /// ([`changed_lines`]); `None` for a file that did not exist before.
    pub fn changed_lines(&self) -> Option<BTreeSet<u32>> {
        self.before.as_ref().map(|before| {
            changed_lines(
                &String::from_utf8_lossy(before),
                &String::from_utf8_lossy(self.after.as_deref().unwrap_or_default()),
            )
        })
    }
}

/// 1-based numbers of the lines of `after` that are not in `before` (a
/// line moved elsewhere counts as unchanged): where a change can have
/// introduced a finding.
pub fn changed_lines(before: &str, after: &str) -> BTreeSet<u32> {
    let mut old: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for l in before.lines() {
        *old.entry(l).or_insert(0) += 1;
    }
    let mut out = BTreeSet::new();
    for (i, l) in after.lines().enumerate() {
        match old.get_mut(l) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                out.insert(i as u32 + 1);
            }
        }
    }
    out
}

/// A new, untracked file that snapshots and commits leave out because it
/// is larger than `git.max_new_file_mib` (DESIGN.md §10.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooBig {
    /// Project-relative.
    pub path: String,
    pub bytes: u64,
    /// When its inode last changed (ctime, which no tool sets back): a
    /// file written during a fix changed after the fix started.
    pub changed: std::time::SystemTime,
}

/// A file's ctime (its mtime off Unix).
fn changed_at(meta: &std::fs::Metadata) -> std::time::SystemTime {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let secs = u64::try_from(meta.ctime()).unwrap_or(0);
        let nanos = meta.ctime_nsec().clamp(0, 999_999_999) as u32;
        std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos)
    }
    #[cfg(not(unix))]
    meta.modified().unwrap_or(std::time::UNIX_EPOCH)
}

/// Author and committer to use instead of git's own rules. Normal runs do
/// not set one: then `GIT_AUTHOR_*`/`GIT_COMMITTER_*` and `user.name` /
/// `user.email` apply as for `git commit`, and `wfx <wfx@localhost>` when
/// neither is configured (a run must not fail for want of an identity).
/// Tests set one to get fixed authors and dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub email: String,
    /// Seconds since the Unix epoch (UTC); `None` = now.
    pub time: Option<i64>,
}

/// The git side of a session; see the module docs.
pub struct Checkpoints {
    repo: Option<Repo>,
}

impl fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repo {
            Some(r) => f
                .debug_struct("Checkpoints")
                .field("workdir", &r.workdir)
                .field("prefix", &String::from_utf8_lossy(&r.prefix))
                .finish(),
            None => f.write_str("Checkpoints(not a repository)"),
        }
    }
}

pub(crate) struct Repo {
    git: Repository,
    /// Canonical work tree directory.
    workdir: PathBuf,
    /// The project root inside the work tree: `""` or `dir/sub/`.
    prefix: Vec<u8>,
    identity: Option<Identity>,
    /// `Wfx-Run` of the session's commits (DESIGN.md §10.2).
    run: Option<String>,
    /// The session whose refs (`refs/wfx/<session>/…`) this handle keeps.
    session: Option<String>,
    /// Work-in-progress paths the last checkpoint left uncommitted.
    left_out: std::cell::RefCell<Vec<String>>,
    /// Untracked files above this size (bytes) are neither snapshotted
    /// nor committed (`git.max_new_file_mib`).
    max_new_file: u64,
    /// Such files seen (git paths); [`Checkpoints::oversized`] keeps
    /// those still there and still too big.
    oversized: std::cell::RefCell<BTreeSet<Vec<u8>>>,
    /// The head guard's last copy of each session file, with what its
    /// metadata was: a file unchanged since is not read again.
    session_copies: std::cell::RefCell<head::CopyCache>,
    /// Run the repository's commit hooks (`git.hooks`).
    hooks: bool,
    /// The work tree's content as last written as a tree, and that tree:
    /// the same content again is the same tree, not written again.
    last_tree: std::cell::RefCell<Option<(State, Oid)>>,
    /// The diff [`Checkpoints::planted_links_at`] made of a snapshot and a
    /// tree its caller had just taken, for the inspection right after,
    /// which diffs the same two trees. The next
    /// [`diff_since`](Repo::diff_since), whichever trees it diffs, takes
    /// it out: it serves once, and only a caller that says it has just
    /// taken the work tree's tree.
    last_diff: std::cell::RefCell<Option<KeptDiff>>,
}

/// A diff of two trees, by their ids (a tree never changes: the same two
/// ids, the same diff).
struct KeptDiff {
    old: Oid,
    new: Oid,
    diff: SnapshotDiff,
}

/// A tree entry: blob/gitlink id and file mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    id: Oid,
    mode: u32,
}

/// Git path (bytes, work-tree relative) → entry.
type State = BTreeMap<Vec<u8>, Entry>;

/// Wrap a git2 error with what wfx was doing, naming the path or commit.
/// The environment's refusals (a full disk, a quota, a read-only file
/// system) keep their cause, so they end with exit 2 like any other write
/// (DESIGN.md §10.3), not as a git failure.
fn ctx(what: impl fmt::Display) -> impl FnOnce(git2::Error) -> Error {
    move |e| match os_cause(&e) {
        Some(code) => Error::io(
            format!(".git ({what})"),
            std::io::Error::from_raw_os_error(code),
        ),
        None => Error::Git(format!("{what}: {}", e.message())),
    }
}

/// The OS error behind a git2 error that libgit2 reports only as text.
fn os_cause(e: &git2::Error) -> Option<i32> {
    if e.class() != git2::ErrorClass::Os {
        return None;
    }
    let m = e.message();
    [
        ("No space left on device", 28),
        ("Disk quota exceeded", 122),
        ("Read-only file system", 30),
    ]
    .into_iter()
    .find(|(text, _)| m.contains(text))
    .map(|(_, code)| code)
}

fn is_not_found(e: &git2::Error) -> bool {
    matches!(e.code(), ErrorCode::NotFound | ErrorCode::UnbornBranch)
}

/// The repository [`project_workdir`] found, by its work tree (canonical):
/// the first [`Checkpoints::open`] of that directory takes it instead of
/// opening it again (each open resolves the path and reads git's config
/// files). Only a plain layout, `<work tree>/.git/`, where a discovery
/// from the work tree finds that same directory first.
static FOUND: std::sync::Mutex<Option<(PathBuf, Repository)>> = std::sync::Mutex::new(None);

/// The work tree (canonical) of the repository that contains `start`, if
/// any: the project root when none is given.
pub fn project_workdir(start: &Path) -> Result<Option<PathBuf>> {
    let Ok(repo) = Repository::discover(start) else {
        return Ok(None);
    };
    let Some(workdir) = repo.workdir() else {
        return Ok(None);
    };
    let workdir = workdir
        .canonicalize()
        .map_err(|e| Error::io(workdir.to_path_buf(), e))?;
    if repo.path().canonicalize().ok() == Some(workdir.join(".git")) {
        *FOUND.lock().unwrap_or_else(|e| e.into_inner()) = Some((workdir.clone(), repo));
    }
    Ok(Some(workdir))
}

/// The repository [`project_workdir`] found for `canonical`, once.
fn take_found(canonical: &Path) -> Option<Repository> {
    let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    match found.take() {
        Some((dir, repo)) if dir == canonical => Some(repo),
        _ => None,
    }
}

impl Checkpoints {
    /// Open the repository that contains `root` (the project root). Not
    /// being inside a work tree (no repository, or a bare one) is not an
    /// error: the handle is inert and [`is_repo`](Self::is_repo) is false.
    pub fn open(root: impl AsRef<Path>) -> Result<Checkpoints> {
        let root = root.as_ref();
        let canonical = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let found = take_found(&canonical).map(Ok);
        let git = match found.unwrap_or_else(|| Repository::discover(&canonical)) {
            Ok(git) => git,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(Checkpoints::disabled()),
            Err(e) => {
                return Err(Error::Git(format!(
                    "cannot open the git repository containing {}: {}",
                    root.display(),
                    e.message()
                )));
            }
        };
        let Some(workdir) = git.workdir() else {
            return Ok(Checkpoints::disabled());
        };
        let workdir = workdir
            .canonicalize()
            .map_err(|e| Error::io(workdir.to_path_buf(), e))?;
        let Some(prefix) = paths::prefix_of(&workdir, &canonical) else {
            return Ok(Checkpoints::disabled());
        };
        Ok(Checkpoints {
            repo: Some(Repo {
                git,
                workdir,
                prefix,
                identity: None,
                run: None,
                session: None,
                left_out: Default::default(),
                max_new_file: crate::artifacts::config::DEFAULT_MAX_NEW_FILE_MIB << 20,
                oversized: Default::default(),
                session_copies: Default::default(),
                hooks: true,
                last_tree: Default::default(),
                last_diff: Default::default(),
            }),
        })
    }

    /// An inert handle, for `--no-commit` and for projects outside git.
    pub fn disabled() -> Checkpoints {
        Checkpoints { repo: None }
    }

    /// Use a fixed author/committer for the commits this handle makes.
    pub fn with_identity(mut self, identity: Identity) -> Checkpoints {
        if let Some(repo) = &mut self.repo {
            repo.identity = Some(identity);
        }
        self
    }

    /// Stamp every commit with `Wfx-Run: run` and recognise only commits
    /// that carry it as this session's own.
    pub fn with_run(mut self, run: &str) -> Checkpoints {
        if let Some(repo) = &mut self.repo {
            repo.run = Some(run.to_string());
        }
        self
    }

    /// Leave untracked files above `mib` MiB alone (`git.max_new_file_mib`).
    pub fn with_max_new_file_mib(mut self, mib: u64) -> Checkpoints {
        if let Some(repo) = &mut self.repo {
            repo.max_new_file = mib.saturating_mul(1 << 20);
        }
        self
    }

    /// Run (`true`, the default) or skip the repository's `pre-commit`,
    /// `commit-msg` and `post-commit` hooks (`git.hooks`).
    pub fn with_hooks(mut self, hooks: bool) -> Checkpoints {
        if let Some(repo) = &mut self.repo {
            repo.hooks = hooks;
        }
        self
    }

    /// Untracked files seen so far that were too big to snapshot or
    /// commit, as they are now: those removed or shrunk since are left out.
    pub fn oversized(&self) -> Vec<TooBig> {
        let Some(r) = &self.repo else {
            return Vec::new();
        };
        let seen = r.oversized.borrow();
        seen.iter()
            .filter_map(|path| {
                let meta = std::fs::symlink_metadata(r.abs(path)).ok()?;
                (meta.is_file() && meta.len() > r.max_new_file).then(|| TooBig {
                    path: r.show(path),
                    bytes: meta.len(),
                    changed: changed_at(&meta),
                })
            })
            .collect()
    }

    /// Keep this session's snapshots and recorded work in progress under
    /// `refs/wfx/<session>/…` (removed by its final commit).
    pub fn with_session(mut self, session: &str) -> Checkpoints {
        if let Some(repo) = &mut self.repo {
            repo.session = Some(session.to_string());
        }
        self
    }

    /// False outside a git work tree; then every other method is a no-op.
    pub fn is_repo(&self) -> bool {
        self.repo.is_some()
    }

    /// `f` of the repository; outside one, the empty answer.
    fn in_repo<T: Default>(&self, f: impl FnOnce(&Repo) -> Result<T>) -> Result<T> {
        self.repo.as_ref().map_or_else(|| Ok(T::default()), f)
    }

    /// The work tree's top-level directory.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.as_ref().map(|r| r.workdir.as_path())
    }

    /// `HEAD`'s commit id (hex); `None` before the first commit, for
    /// `workflow-session.json`'s `git.base_commit`.
    pub fn head(&self) -> Result<Option<String>> {
        self.in_repo(|r| Ok(r.head_commit()?.map(|c| c.id().to_string())))
    }

    /// The current branch's short name; `None` when `HEAD` is detached or
    /// unborn, for `workflow-session.json`'s `git.branch`.
    pub fn branch(&self) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        match r.git.head() {
            Ok(head) if head.is_branch() => Ok(Some(
                String::from_utf8_lossy(head.shorthand_bytes()).into_owned(),
            )),
            Ok(_) => Ok(None),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(ctx("cannot read HEAD")(e)),
        }
    }

    /// Whether `HEAD`'s tree holds the project-relative `path` (a file or
    /// a directory); `false` outside a repository or before the first
    /// commit.
    pub fn head_holds(&self, path: &str) -> Result<bool> {
        self.in_repo(|r| {
            let Some(head) = r.head_commit()? else {
                return Ok(false);
            };
            let tree = head.tree().map_err(ctx("cannot read HEAD's tree"))?;
            let path = bytes_to_path(&r.scope_of(path)?);
            Ok(tree.get_path(&path).is_ok())
        })
    }

    /// Tracked files modified or staged (or in conflict) outside
    /// `.workflow/`, sorted. Phase 5 refuses to start when this is not empty
    /// (unless `--allow-dirty`) and names them. Untracked files do not count.
    pub fn dirty_paths(&self) -> Result<Vec<String>> {
        self.in_repo(Repo::dirty_paths)
    }

    /// True when [`dirty_paths`](Self::dirty_paths) is empty.
    pub fn is_clean(&self) -> Result<bool> {
        Ok(self.dirty_paths()?.is_empty())
    }

    /// Record the work tree as it is now (tracked files and untracked files
    /// that are not ignored, with content and mode; `.workflow/` left out)
    /// as a tree object, and return its id. Neither the index nor any ref
    /// changes. `None` outside a repository.
    pub fn snapshot(&self) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        let tree = r.current_tree()?;
        r.keep_snapshot(tree)?;
        Ok(Some(tree.to_string()))
    }

    /// The work tree's tree now, as [`snapshot`](Self::snapshot) takes it
    /// but kept by no ref: for a comparison made right away. `None`
    /// outside a repository.
    pub fn current_tree(&self) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        Ok(Some(r.current_tree()?.to_string()))
    }

    /// Paths that differ between `snapshot` and the work tree now, sorted
    /// by path; renames are detected. Ignored files and `.workflow/` never
    /// appear.
    pub fn changed_since(&self, snapshot: &str) -> Result<Vec<Change>> {
        self.in_repo(|r| r.changed_since(snapshot))
    }

    /// The changed paths, the diffstat and a bounded, redacted excerpt of
    /// the unified diff between `snapshot` and now, all from one diff (the
    /// work tree is read once); empty outside a repository.
    pub fn diff_since(&self, snapshot: &str) -> Result<SnapshotDiff> {
        self.diff_between(snapshot, None)
    }

    /// [`diff_since`](Self::diff_since) against `now`, a tree of the work
    /// tree the caller has just taken ([`snapshot`](Self::snapshot)) and
    /// nothing has changed since: the work tree is not read again.
    pub fn diff_between(&self, snapshot: &str, now: Option<&str>) -> Result<SnapshotDiff> {
        self.in_repo(|r| r.diff_since(snapshot, now))
    }

    /// The content of `path` in `snapshot` and in the work tree now (`None`
    /// where it does not exist, or is ignored now), so the test-edit guard
    /// (DESIGN.md §5.6) can compare test files.
    pub fn file_versions(&self, snapshot: &str, path: &str) -> Result<FileVersions> {
        self.in_repo(|r| r.file_versions(snapshot, path))
    }

    /// Put `paths` (project-relative) back as they are in `snapshot`: each
    /// gets the snapshot's content and mode (a file, an executable, a
    /// symlink the snapshot had), or is removed when the snapshot has no
    /// such path. Whatever is on disk in its place — a symlink an agent
    /// made, a directory on the way that is now a link — is replaced,
    /// never written through (DESIGN.md §11.3). The index is untouched.
    pub fn restore_paths(&self, snapshot: &str, paths: &[String]) -> Result<()> {
        let Some(r) = &self.repo else { return Ok(()) };
        let tree = r.snapshot_tree(snapshot)?;
        for path in paths {
            let path = r.scope_of(path)?;
            match tree_entry(Some(&tree), &path)? {
                Some(entry) => {
                    if std::fs::symlink_metadata(r.abs(&path)).is_ok_and(|m| m.is_dir()) {
                        let abs = r.abs(&path);
                        std::fs::remove_dir_all(&abs).map_err(|e| Error::io(&abs, e))?;
                    }
                    r.write_file(&path, entry)?
                }
                None => r.remove_file(&path)?,
            }
        }
        Ok(())
    }

    /// Links an agent planted since `snapshot` (DESIGN.md §11.3): a file
    /// of the snapshot that is now a symlink, or a new symlink that points
    /// outside the project (absolute, or up past the project root). Such a
    /// link would make the tests read what is not in the commit, and a
    /// commit of it points at the user's machine. Project-relative, sorted.
    /// `now`: the work tree's tree, when the caller has just taken it (see
    /// [`diff_between`](Self::diff_between)).
    pub fn planted_links_at(&self, snapshot: &str, now: Option<&str>) -> Result<Vec<String>> {
        let Some(r) = &self.repo else {
            return Ok(Vec::new());
        };
        let tree = r.snapshot_tree(snapshot)?;
        let new = r.tree_now(now)?;
        let changes = if now.is_some() {
            // The inspection right after diffs the same two trees.
            let diff = r.print_diff(&tree, new)?;
            let changes = diff.changes.clone();
            *r.last_diff.borrow_mut() = Some(KeptDiff {
                old: tree.id(),
                new,
                diff,
            });
            changes
        } else {
            r.changes_between(&tree, new)?
        };
        let mut out = Vec::new();
        for change in changes {
            let abs = r.abs(&r.scope_of(&change.path)?);
            let Ok(target) = std::fs::read_link(&abs) else {
                continue;
            };
            let was = tree_entry(Some(&tree), &r.scope_of(&change.path)?)?;
            let replaced_a_file = was.is_some_and(|e| e.mode != MODE_LINK);
            if replaced_a_file || !paths::stays_inside(&change.path, &target) {
                out.push(change.path);
            }
        }
        Ok(out)
    }

    /// The paths of `changes` a checkpoint commits: all of them (both sides
    /// of renames) except edits to files that git did not track before the
    /// fix. Those are the user's own untracked work, which is never swept
    /// into a commit (DESIGN.md §5.5); files a fix *creates* are committed.
    pub fn commit_paths(&self, changes: &[Change]) -> Result<Vec<String>> {
        self.in_repo(|r| r.commit_paths(changes))
    }

    /// Work-in-progress paths (`--allow-dirty`) the last checkpoint left
    /// uncommitted because the fix's change did not apply to `HEAD`'s
    /// version.
    pub fn left_out(&self) -> Vec<String> {
        self.repo
            .as_ref()
            .map(|r| r.left_out.borrow().clone())
            .unwrap_or_default()
    }

    /// The commit among `HEAD`'s last 500 ancestors whose trailers equal
    /// `trailers`, if any.
    pub fn find_commit(&self, trailers: &Trailers) -> Result<Option<String>> {
        self.in_repo(|r| Ok(r.find_by_trailers(trailers)?.map(|id| id.to_string())))
    }

    /// Commit exactly `paths` (project-relative files or directories, as they
    /// are on disk now; missing ones are deleted) plus every non-ignored
    /// file under `session_dir`, on top of `HEAD` (also unborn or detached),
    /// with `message` and the trailers. Other changes in the tree stay
    /// uncommitted, and staged ones stay staged. Ignored files are never
    /// committed, even when named. A commit with the same trailers among
    /// `HEAD`'s ancestors is returned instead of committing twice.
    pub fn commit_checkpoint<S: AsRef<str>>(
        &self,
        paths: &[S],
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<CommitOutcome> {
        let Some(r) = &self.repo else {
            return Ok(CommitOutcome::NotARepo);
        };
        r.commit_checkpoint(paths, session_dir, message, trailers)
    }

    /// Undo `commit` with a new commit on `HEAD`: every path it changed
    /// (outside `.workflow/`) gets back the content it had in the commit's
    /// parent, in the commit and on disk, and its index entry follows; the
    /// session's artifacts are committed as they are now. Refused, naming
    /// the paths, when a later commit changed one of them or the work tree
    /// or index has uncommitted changes to one of them. Idempotent by
    /// trailers like [`commit_checkpoint`](Self::commit_checkpoint).
    pub fn revert(
        &self,
        commit: &str,
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<CommitOutcome> {
        let Some(r) = &self.repo else {
            return Ok(CommitOutcome::NotARepo);
        };
        r.revert(commit, session_dir, message, trailers)
    }
}

impl Repo {
    fn head_commit(&self) -> Result<Option<Commit<'_>>> {
        match self.git.head() {
            Ok(head) => Ok(Some(
                head.peel_to_commit()
                    .map_err(ctx("cannot read HEAD's commit"))?,
            )),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(ctx("cannot read HEAD")(e)),
        }
    }

    fn abs(&self, path: &[u8]) -> PathBuf {
        self.workdir.join(bytes_to_path(path))
    }

    fn show(&self, path: &[u8]) -> String {
        from_repo(&self.prefix, path)
    }

    /// The project root as a scope (`""` = the whole work tree).
    fn project_scope(&self) -> Vec<u8> {
        self.prefix.strip_suffix(b"/").unwrap_or(&[]).to_vec()
    }

    fn workflow_scope(&self) -> Vec<u8> {
        to_repo(&self.prefix, WORKFLOW_DIR)
    }

    /// A caller's project-relative path as a git path.
    fn scope_of(&self, rel: &str) -> Result<Vec<u8>> {
        Ok(to_repo(&self.prefix, &normalize_rel(rel)?))
    }

    fn index(&self) -> Result<Index> {
        let mut index = self.git.index().map_err(ctx("cannot open the index"))?;
        index.read(false).map_err(ctx("cannot read the index"))?;
        Ok(index)
    }

    fn new_index(&self) -> Result<Index> {
        Index::new_ext(self.git.object_format()).map_err(ctx("cannot create an in-memory index"))
    }

    fn dirty_paths(&self) -> Result<Vec<String>> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(false)
            .include_ignored(false)
            .exclude_submodules(true)
            .renames_head_to_index(false)
            .renames_index_to_workdir(false);
        let scope = self.project_scope();
        if !scope.is_empty() {
            opts.pathspec(scope.clone()).disable_pathspec_match(true);
        }
        let statuses = self
            .git
            .statuses(Some(&mut opts))
            .map_err(ctx("cannot read the status of the work tree"))?;
        let dirty = Status::INDEX_NEW
            | Status::INDEX_MODIFIED
            | Status::INDEX_DELETED
            | Status::INDEX_RENAMED
            | Status::INDEX_TYPECHANGE
            | Status::WT_MODIFIED
            | Status::WT_DELETED
            | Status::WT_TYPECHANGE
            | Status::WT_RENAMED
            | Status::CONFLICTED;
        let workflow = self.workflow_scope();
        let mut out = BTreeSet::new();
        for entry in statuses.iter() {
            let path = entry.path_bytes();
            if entry.status().intersects(dirty) && under(path, &scope) && !under(path, &workflow) {
                out.insert(self.show(path));
            }
        }
        Ok(out.into_iter().collect())
    }

    /// The work tree's content under `scopes` (minus `exclude`): tracked
    /// files and untracked, non-ignored files, each with the blob id of its
    /// current content (after git's clean filters) and its mode. Files git
    /// knows to be unchanged keep their index id; only changed or new files
    /// are hashed, and their blobs are written to the object database.
    /// The paths git's status should walk for `scopes` (`None`: the whole
    /// work tree). A scope with an excluded directory right inside it
    /// (`.workflow/` in the project) is replaced by its other entries, on
    /// disk or tracked (`tracked`, the index entries in scope), so the
    /// session's files are not walked and stat'ed on every snapshot.
    fn walk_specs(
        &self,
        scopes: &[Vec<u8>],
        exclude: &[Vec<u8>],
        tracked: &State,
    ) -> Option<Vec<Vec<u8>>> {
        use std::os::unix::ffi::OsStrExt;
        let join = |scope: &[u8], name: &[u8]| -> Vec<u8> {
            if scope.is_empty() {
                name.to_vec()
            } else {
                [scope, b"/", name].concat()
            }
        };
        let mut specs = BTreeSet::new();
        for scope in scopes {
            let skipped: Vec<&[u8]> = exclude
                .iter()
                .filter_map(|e| {
                    let rest = if scope.is_empty() {
                        e.as_slice()
                    } else {
                        e.strip_prefix(scope.as_slice())?.strip_prefix(b"/")?
                    };
                    (!rest.is_empty() && !rest.contains(&b'/')).then_some(rest)
                })
                .collect();
            if skipped.is_empty() {
                if scope.is_empty() {
                    return None;
                }
                specs.insert(scope.clone());
                continue;
            }
            let Ok(entries) = std::fs::read_dir(self.abs(scope)) else {
                return None;
            };
            for entry in entries {
                let entry = entry.ok()?;
                let name = entry.file_name();
                let name = name.as_bytes();
                if name != b".git" && !skipped.contains(&name) {
                    specs.insert(join(scope, name));
                }
            }
            // Sorted: one look per top-level name, not per tracked file.
            let mut previous: &[u8] = b"";
            for path in tracked.keys() {
                let rest = if scope.is_empty() {
                    path.as_slice()
                } else {
                    match path
                        .strip_prefix(scope.as_slice())
                        .and_then(|r| r.strip_prefix(b"/"))
                    {
                        Some(r) => r,
                        None => continue,
                    }
                };
                let first = rest.split(|b| *b == b'/').next().unwrap_or(rest);
                if first != previous && !skipped.contains(&first) {
                    specs.insert(join(scope, first));
                }
                previous = first;
            }
        }
        Some(specs.into_iter().collect())
    }

    fn worktree_state(&self, scopes: &[Vec<u8>], exclude: &[Vec<u8>]) -> Result<State> {
        let in_scope =
            |p: &[u8]| scopes.iter().any(|s| under(p, s)) && !exclude.iter().any(|s| under(p, s));
        let index = self.index()?;
        let mut state = State::new();
        for e in index.iter() {
            let stage = (e.flags & 0x3000) >> 12;
            if stage == 0 && in_scope(&e.path) {
                state.insert(
                    e.path.clone(),
                    Entry {
                        id: e.id,
                        mode: e.mode,
                    },
                );
            }
        }
        let specs = self.walk_specs(scopes, exclude, &state);
        if specs.as_ref().is_some_and(Vec::is_empty) {
            return Ok(state); // nothing on disk or tracked in scope
        }
        let statuses = self.workdir_statuses(&index, specs)?;
        // Read only when a file's mode is wanted: each read of the live
        // config stats git's three config files.
        let mut trust_exec = None;
        let on_disk = Status::WT_NEW
            | Status::WT_MODIFIED
            | Status::WT_TYPECHANGE
            | Status::WT_RENAMED
            | Status::CONFLICTED;
        for (path, status) in &statuses {
            let (path, status) = (path.as_slice(), *status);
            // An untracked nested repository shows up as `dir/`; it is not
            // a file wfx can record.
            if path.ends_with(b"/") || !in_scope(path) {
                continue;
            }
            if status.contains(Status::WT_DELETED) {
                state.remove(path);
                continue;
            }
            if !status.intersects(on_disk) {
                continue;
            }
            let abs = self.abs(path);
            let meta = match std::fs::symlink_metadata(&abs) {
                Ok(meta) => meta,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    state.remove(path);
                    continue;
                }
                Err(e) => return Err(Error::io(abs, e)),
            };
            if meta.is_dir() {
                // Replaced by a directory: its files are listed on their own.
                state.remove(path);
                continue;
            }
            if status.contains(Status::WT_NEW) && meta.len() > self.max_new_file {
                // Too big to copy into .git or commit (git.max_new_file_mib).
                self.oversized.borrow_mut().insert(path.to_vec());
                continue;
            }
            let id = self.hash_file(&abs, &meta, path)?;
            let previous = state.get(path).map(|e| e.mode);
            let trust_exec = *trust_exec.get_or_insert_with(|| {
                self.git
                    .config()
                    .and_then(|c| c.get_bool("core.filemode"))
                    .unwrap_or(true)
            });
            let mode = mode_of(&meta, trust_exec, previous);
            state.insert(path.to_vec(), Entry { id, mode });
        }
        Ok(state)
    }

    /// `git status`'s answer for the work tree (its `WT_*` and `CONFLICTED`
    /// flags, untracked files listed one by one, submodules left out) under
    /// `specs` (`None`: everywhere), from the one diff it is made of: the
    /// `index` just read against the work tree. `git_status_list_new`
    /// would also resolve `HEAD`, read its tree, diff it against the
    /// index (a second config snapshot) and read the index once more, for
    /// `INDEX_*` flags [`worktree_state`](Self::worktree_state) never looks at.
    fn workdir_statuses(
        &self,
        index: &Index,
        specs: Option<Vec<Vec<u8>>>,
    ) -> Result<Vec<(Vec<u8>, Status)>> {
        let mut opts = DiffOptions::new();
        opts.include_typechange(true)
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .ignore_submodules(true);
        if let Some(specs) = specs {
            for s in specs {
                opts.pathspec(s);
            }
            opts.disable_pathspec_match(true);
        }
        let diff = self
            .git
            .diff_index_to_workdir(Some(index), Some(&mut opts))
            .map_err(ctx("cannot read the status of the work tree"))?;
        Ok(diff
            .deltas()
            .filter_map(|d| {
                let status = workdir_status(&d)?;
                // As git's status names an entry: by its old side.
                let path = d.old_file().path_bytes().or(d.new_file().path_bytes())?;
                Some((path.to_vec(), status))
            })
            .collect())
    }

    /// Store a work-tree file as a blob. Regular files go through git's
    /// clean filters (line endings, `.gitattributes`). A symlink is stored
    /// as its target, like git does; `blob_path` would follow it.
    fn hash_file(&self, abs: &Path, meta: &std::fs::Metadata, path: &[u8]) -> Result<Oid> {
        let context = || format!("cannot read {}", self.show(path));
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(abs).map_err(|e| Error::io(abs, e))?;
            return self
                .git
                .blob(&paths::path_to_bytes(&target))
                .map_err(ctx(context()));
        }
        self.git.blob_path(abs).map_err(ctx(context()))
    }

    /// Write a tree: `base` with everything under `scopes` replaced by
    /// `with`. Returns its id and how many entries it holds.
    fn build_tree(
        &self,
        base: Option<&Tree<'_>>,
        scopes: &[Vec<u8>],
        with: &State,
    ) -> Result<(Oid, usize)> {
        let mut idx = self.new_index()?;
        if let Some(base) = base {
            idx.read_tree(base)
                .map_err(ctx("cannot load HEAD's tree"))?;
        }
        if !scopes.is_empty() {
            let doomed: Vec<Vec<u8>> = idx
                .iter()
                .filter(|e| scopes.iter().any(|s| under(&e.path, s)))
                .map(|e| e.path)
                .collect();
            for path in doomed {
                idx.remove(&bytes_to_path(&path), 0)
                    .map_err(ctx(format!("cannot stage {}", self.show(&path))))?;
            }
        }
        for (path, entry) in with {
            idx.add(&bare_entry(path, *entry))
                .map_err(ctx(format!("cannot stage {}", self.show(path))))?;
        }
        let len = idx.len();
        let id = idx
            .write_tree_to(&self.git)
            .map_err(ctx("cannot write the tree"))?;
        Ok((id, len))
    }

    /// The tree of the work tree now. Its content is read every time (git's
    /// status, every file in scope); only writing the tree is skipped when
    /// the content is the one last written and that tree is still in the
    /// object database (an agent may have deleted it).
    fn current_tree(&self) -> Result<Oid> {
        let state = self.worktree_state(&[self.project_scope()], &[self.workflow_scope()])?;
        if let Some((last, id)) = &*self.last_tree.borrow()
            && *last == state
            && self.git.odb().is_ok_and(|odb| odb.exists(*id))
        {
            return Ok(*id);
        }
        let id = self.build_tree(None, &[], &state)?.0;
        *self.last_tree.borrow_mut() = Some((state, id));
        Ok(id)
    }

    fn snapshot_tree(&self, snapshot: &str) -> Result<Tree<'_>> {
        let id = Oid::from_str(snapshot.trim()).map_err(|_| {
            Error::Git(format!("{snapshot:?} is not a snapshot id (a hex tree id)"))
        })?;
        // A missing object is the repository's state, not a wfx bug: exit 2
        // with what to do (DESIGN.md §10.3).
        self.git.find_tree(id).map_err(|_| {
            let kept = match &self.session {
                Some(session) => format!("refs/wfx/{session}/snapshots/{snapshot}"),
                None => format!("refs/wfx/<session>/snapshots/{snapshot}"),
            };
            let archive = self
                .session
                .as_deref()
                .map_or("wfx session complete".to_string(), |s| {
                    format!("wfx session complete {s}")
                });
            Error::Usage(format!(
                "snapshot {snapshot} (the work tree before the fix, kept by {kept}) is missing from this repository: \
                 its ref was deleted and git gc removed it, or it was taken in another clone. \
                 wfx cannot tell what the interrupted fix changed, so it stopped and changed none of your files. \
                 To go on, bring the object back (copy it from a clone that has it into .git/objects) and resume; \
                 or give the session up with `{archive}`, commit or discard your changes yourself, and start a new one"
            ))
        })
    }

    /// The work tree's tree: `now` when the caller has just taken it,
    /// otherwise taken now.
    fn tree_now(&self, now: Option<&str>) -> Result<Oid> {
        match now {
            Some(t) => Oid::from_str(t).map_err(|_| Error::Internal(format!("{t}: not an id"))),
            None => self.current_tree(),
        }
    }

    /// The changes from the tree `old` to the tree `new`, sorted by path.
    fn changes_between(&self, old: &Tree<'_>, new: Oid) -> Result<Vec<Change>> {
        if old.id() == new {
            return Ok(Vec::new()); // a tree against itself
        }
        Ok(self.changes_of(&self.tree_diff(old, new)?))
    }

    /// Diff of the tree `old` against the tree `new_id`, renames detected.
    fn tree_diff(&self, old: &Tree<'_>, new_id: Oid) -> Result<git2::Diff<'_>> {
        let new = self
            .git
            .find_tree(new_id)
            .map_err(ctx("cannot read the work tree's tree"))?;
        let mut opts = DiffOptions::new();
        opts.include_typechange(true);
        let mut diff = self
            .git
            .diff_tree_to_tree(Some(old), Some(&new), Some(&mut opts))
            .map_err(ctx("cannot diff against the snapshot"))?;
        // Nothing changed, nothing renamed: libgit2 would still read the
        // configuration (`diff.renameLimit`, three files stat'ed) first.
        if diff.deltas().len() == 0 {
            return Ok(diff);
        }
        let mut find = DiffFindOptions::new();
        find.renames(true);
        diff.find_similar(Some(&mut find))
            .map_err(ctx("cannot detect renames"))?;
        Ok(diff)
    }

    fn changed_since(&self, snapshot: &str) -> Result<Vec<Change>> {
        let old = self.snapshot_tree(snapshot)?;
        self.changes_between(&old, self.current_tree()?)
    }

    /// The changes of a diff, sorted by path.
    fn changes_of(&self, diff: &git2::Diff<'_>) -> Vec<Change> {
        let mut out = Vec::new();
        for delta in diff.deltas() {
            let new = delta.new_file().path_bytes().unwrap_or_default();
            let old = delta.old_file().path_bytes().unwrap_or_default();
            let (path, kind, old_path) = match delta.status() {
                Delta::Added | Delta::Copied | Delta::Untracked => (new, ChangeKind::Added, None),
                Delta::Deleted => (old, ChangeKind::Deleted, None),
                Delta::Modified | Delta::Typechange => (new, ChangeKind::Modified, None),
                Delta::Renamed => (new, ChangeKind::Renamed, Some(self.show(old))),
                _ => continue,
            };
            out.push(Change {
                path: self.show(path),
                kind,
                old_path,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// One diff, printed once: its changes, its stat (counted from the
    /// printed lines, as `git diff --stat` counts) and its excerpt. With
    /// `now`, the diff [`Checkpoints::planted_links_at`] kept of the same
    /// two trees is taken instead of diffing them again.
    fn diff_since(&self, snapshot: &str, now: Option<&str>) -> Result<SnapshotDiff> {
        let old = self.snapshot_tree(snapshot)?;
        let new = self.tree_now(now)?;
        let kept = self.last_diff.borrow_mut().take();
        if now.is_some()
            && let Some(k) = kept
            && (k.old, k.new) == (old.id(), new)
        {
            return Ok(k.diff);
        }
        self.print_diff(&old, new)
    }

    /// [`diff_since`](Self::diff_since) of two trees, always made (a tree
    /// against itself: nothing, without asking libgit2, which would read
    /// the configuration for it).
    fn print_diff(&self, old: &Tree<'_>, new: Oid) -> Result<SnapshotDiff> {
        if old.id() == new {
            return Ok(SnapshotDiff::default());
        }
        let diff = self.tree_diff(old, new)?;
        let secrets = crate::redact::process_secrets();
        let mut excerpt = ExcerptBuilder::new(secrets);
        let mut stat = DiffStat {
            files: diff.deltas().len(),
            ..DiffStat::default()
        };
        diff.print(DiffFormat::Patch, |_, _, line| {
            let content = line.content();
            match line.origin() {
                c @ ('+' | '-' | ' ') => {
                    match c {
                        '+' => stat.insertions += 1,
                        '-' => stat.deletions += 1,
                        _ => {}
                    }
                    excerpt.push_with_origin(c as u8, content);
                }
                // The file header without its `index` line (blob ids tell
                // a reader nothing).
                'F' => {
                    for l in content.split_inclusive(|&b| b == b'\n') {
                        if !l.starts_with(b"index ") {
                            excerpt.push(l);
                        }
                    }
                }
                _ => excerpt.push(content),
            }
            true
        })
        .map_err(ctx("cannot format the diff"))?;
        Ok(SnapshotDiff {
            changes: self.changes_of(&diff),
            stat,
            excerpt: excerpt.finish(),
        })
    }

    fn file_versions(&self, snapshot: &str, path: &str) -> Result<FileVersions> {
        let tree = self.snapshot_tree(snapshot)?;
        let path = self.scope_of(path)?;
        let old = tree_entry(Some(&tree), &path)?;
        let new = self
            .worktree_state(std::slice::from_ref(&path), &[])?
            .get(&path)
            .copied();
        Ok(FileVersions {
            before: self.blob_bytes(old)?,
            after: self.blob_bytes(new)?,
        })
    }

    fn blob_bytes(&self, entry: Option<Entry>) -> Result<Option<Vec<u8>>> {
        match entry {
            Some(e) if e.mode != MODE_GITLINK => {
                let blob = self
                    .git
                    .find_blob(e.id)
                    .map_err(ctx(format!("cannot read blob {}", e.id)))?;
                Ok(Some(blob.content().to_vec()))
            }
            _ => Ok(None),
        }
    }

    fn commit_paths(&self, changes: &[Change]) -> Result<Vec<String>> {
        // Read only for an edit, and HEAD only for an edit the index does
        // not know: most inspections have none.
        let mut index = None;
        let mut head_tree = None;
        let mut out = BTreeSet::new();
        for change in changes {
            if change.kind == ChangeKind::Modified {
                let path = self.scope_of(&change.path)?;
                let index = match &mut index {
                    Some(index) => index,
                    None => index.insert(self.index()?),
                };
                let tracked = index_entry(index, &path).is_some() || {
                    let tree = match &mut head_tree {
                        Some(tree) => tree,
                        None => head_tree.insert(self.head_tree()?),
                    };
                    tree_entry(tree.as_ref(), &path)?.is_some()
                };
                if !tracked {
                    continue;
                }
            }
            out.extend(change.paths().map(str::to_string));
        }
        Ok(out.into_iter().collect())
    }

    /// The trailers as this handle writes them (with its `Wfx-Run`).
    fn stamp(&self, trailers: &Trailers) -> Trailers {
        match (&trailers.run, &self.run) {
            (None, Some(run)) => trailers.clone().with_run(Some(run)),
            _ => trailers.clone(),
        }
    }

    fn find_by_trailers(&self, trailers: &Trailers) -> Result<Option<Oid>> {
        self.find_by_trailers_from(self.head_commit()?.as_ref(), trailers)
    }

    /// [`find_by_trailers`](Self::find_by_trailers) from `head`, the
    /// caller's `HEAD` (read once for both).
    fn find_by_trailers_from(
        &self,
        head: Option<&Commit<'_>>,
        trailers: &Trailers,
    ) -> Result<Option<Oid>> {
        let trailers = &self.stamp(trailers);
        let Some(head) = head else {
            return Ok(None);
        };
        let mut walk = self.git.revwalk().map_err(ctx("cannot walk history"))?;
        walk.push(head.id()).map_err(ctx("cannot walk history"))?;
        for id in walk.take(TRAILER_SEARCH_DEPTH) {
            let id = id.map_err(ctx("cannot walk history"))?;
            let commit = self
                .git
                .find_commit(id)
                .map_err(ctx(format!("cannot read commit {id}")))?;
            let message = String::from_utf8_lossy(commit.message_raw_bytes());
            if parse_trailers(&message).as_ref() == Some(trailers) {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    fn signatures(&self) -> Result<(Signature<'static>, Signature<'static>)> {
        if let Some(who) = &self.identity {
            let when = who.time.unwrap_or_else(|| chrono::Utc::now().timestamp());
            let sig = Signature::new(&who.name, &who.email, &Time::new(when, 0))
                .map_err(ctx("invalid identity"))?;
            return Ok((sig.clone(), sig));
        }
        let fallback = || Signature::now("wfx", "wfx@localhost");
        let author = match self.git.author_from_env() {
            Ok(sig) => sig,
            Err(e) if e.code() == ErrorCode::NotFound => fallback().map_err(ctx("identity"))?,
            Err(e) => return Err(ctx("cannot determine the commit author")(e)),
        };
        let committer = match self.git.committer_from_env() {
            Ok(sig) => sig,
            Err(e) if e.code() == ErrorCode::NotFound => fallback().map_err(ctx("identity"))?,
            Err(e) => return Err(ctx("cannot determine the committer")(e)),
        };
        Ok((author, committer))
    }

    /// Create the commit on `HEAD` (moving the branch, or `HEAD` itself when
    /// detached or unborn).
    fn make_commit(&self, tree: Oid, parent: Option<&Commit<'_>>, message: &str) -> Result<Oid> {
        let tree = self
            .git
            .find_tree(tree)
            .map_err(ctx("cannot read the new tree"))?;
        let message = self.hooks_before(&tree, message)?;
        let (author, committer) = self.signatures()?;
        let parents: Vec<&Commit<'_>> = parent.into_iter().collect();
        let id = self
            .git
            .commit(Some("HEAD"), &author, &committer, &message, &tree, &parents)
            .map_err(ctx("cannot create the commit"))?;
        self.hooks_after();
        Ok(id)
    }

    /// Make the user's index agree with `tree` for exactly `paths`; every
    /// other entry is left as it was. `disk` holds entries known to equal
    /// the file on disk, which then get its stat data so `git status` need
    /// not re-hash them.
    fn sync_index(&self, paths: &BTreeSet<Vec<u8>>, tree: &Tree<'_>, disk: &State) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        self.sync_index_in(self.index()?, paths, tree, disk)
    }

    /// [`sync_index`](Self::sync_index) in `index`, the user's index as
    /// the caller has just read it (nothing ran since).
    fn sync_index_in(
        &self,
        mut index: Index,
        paths: &BTreeSet<Vec<u8>>,
        tree: &Tree<'_>,
        disk: &State,
    ) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        for path in paths {
            let fs_path = bytes_to_path(path);
            match tree_entry(Some(tree), path)? {
                Some(entry) => {
                    let mut raw = bare_entry(path, entry);
                    if disk.get(path) == Some(&entry) {
                        fill_stat(&mut raw, &self.abs(path));
                    }
                    index.add(&raw).map_err(ctx(format!(
                        "cannot update the index for {}",
                        self.show(path)
                    )))?;
                }
                None => {
                    index.remove_path(&fs_path).map_err(ctx(format!(
                        "cannot update the index for {}",
                        self.show(path)
                    )))?;
                }
            }
        }
        index.write().map_err(ctx("cannot write the index"))
    }

    /// Finish an existing checkpoint found by its trailers: when it is
    /// `HEAD` and a crash came between the commit and the index update, the
    /// index still holds the parent's entries for its paths; move exactly
    /// those (and no entry the user changed since) to the commit's.
    fn finish_existing(&self, id: Oid) -> Result<()> {
        let Some(head) = self.head_commit()? else {
            return Ok(());
        };
        if head.id() != id {
            return Ok(());
        }
        let tree = head.tree().map_err(ctx("cannot read HEAD's tree"))?;
        let parent_tree = match head.parent(0) {
            Ok(p) => Some(p.tree().map_err(ctx("cannot read the parent's tree"))?),
            Err(_) => None,
        };
        let changed = self.diff_paths(parent_tree.as_ref(), Some(&tree))?;
        let index = self.index()?;
        let mut stale = BTreeSet::new();
        for path in changed {
            let current = index_entry(&index, &path);
            let before = tree_entry(parent_tree.as_ref(), &path)?;
            let after = tree_entry(Some(&tree), &path)?;
            if current == before && current != after {
                stale.insert(path);
            }
        }
        drop(index);
        self.sync_index(&stale, &tree, &State::new())
    }

    /// Paths whose entries differ between two trees (no rename detection:
    /// both sides of a move are listed).
    fn diff_paths(
        &self,
        old: Option<&Tree<'_>>,
        new: Option<&Tree<'_>>,
    ) -> Result<BTreeSet<Vec<u8>>> {
        let diff = self
            .git
            .diff_tree_to_tree(old, new, None)
            .map_err(ctx("cannot diff trees"))?;
        let mut out = BTreeSet::new();
        for delta in diff.deltas() {
            for path in [delta.old_file().path_bytes(), delta.new_file().path_bytes()]
                .into_iter()
                .flatten()
            {
                out.insert(path.to_vec());
            }
        }
        Ok(out)
    }

    fn commit_checkpoint<S: AsRef<str>>(
        &self,
        paths: &[S],
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<CommitOutcome> {
        let full_message = build_message(message, &self.stamp(trailers))?;
        let mut scopes = Vec::new();
        for p in paths {
            scopes.push(self.scope_of(p.as_ref())?);
        }
        if let Some(dir) = session_dir {
            scopes.push(self.scope_of(dir)?);
        }
        let head = self.head_commit()?;
        if let Some(id) = self.find_by_trailers_from(head.as_ref(), trailers)? {
            self.finish_existing(id)?;
            return Ok(CommitOutcome::Existing(id.to_string()));
        }
        let base = match &head {
            Some(c) => Some(c.tree().map_err(ctx("cannot read HEAD's tree"))?),
            None => None,
        };
        if scopes.is_empty() {
            return Ok(CommitOutcome::Unchanged);
        }
        let state = self.worktree_state(&scopes, &[])?;
        let held = self.hold_wip(&scopes, &state, base.as_ref())?;
        let mut with = state.clone();
        for (path, entry) in &held.commit {
            match entry {
                Some(e) => with.insert(path.clone(), *e),
                None => with.remove(path),
            };
        }
        *self.left_out.borrow_mut() = held.left_out.iter().map(|p| self.show(p)).collect();
        let (tree_id, len) = self.build_tree(base.as_ref(), &scopes, &with)?;
        let unchanged = match &base {
            Some(base) => base.id() == tree_id,
            None => len == 0,
        };
        if unchanged {
            if trailers.kind == CommitKind::Final {
                // Nothing of the session to commit (`git.artifacts: none`):
                // its refs go all the same.
                self.after_checkpoint(trailers)?;
            }
            return Ok(CommitOutcome::Unchanged);
        }
        let commit = self.make_commit(tree_id, head.as_ref(), &full_message)?;
        self.after_checkpoint(trailers)?;
        let tree = self
            .git
            .find_tree(tree_id)
            .map_err(ctx("cannot read the new tree"))?;
        let mut touched = self.diff_paths(base.as_ref(), Some(&tree))?;
        touched.extend(state.keys().cloned());
        // Read once after the hooks ran, for these paths and their update.
        let index = self.index()?;
        touched.extend(
            index
                .iter()
                .filter(|e| scopes.iter().any(|s| under(&e.path, s)))
                .map(|e| e.path),
        );
        self.sync_index_in(index, &touched, &tree, &state)?;
        Ok(CommitOutcome::Created(commit.to_string()))
    }

    fn revert(
        &self,
        commit: &str,
        session_dir: Option<&str>,
        message: &str,
        trailers: &Trailers,
    ) -> Result<CommitOutcome> {
        let target = self
            .git
            .revparse_single(commit)
            .and_then(|o| o.peel_to_commit())
            .map_err(|_| Error::Git(format!("cannot roll back {commit}: no such commit")))?;
        let short = short_id(target.id());
        let body = format!(
            "{}\n\nThis reverts commit {}.",
            message.trim_end(),
            target.id()
        );
        let full_message = build_message(&body, &self.stamp(trailers))?;
        let session_scope = session_dir.map(|d| self.scope_of(d)).transpose()?;
        let head = self.head_commit()?;
        if let Some(id) = self.find_by_trailers_from(head.as_ref(), trailers)? {
            self.finish_existing(id)?;
            return Ok(CommitOutcome::Existing(id.to_string()));
        }
        if target.parent_count() > 1 {
            return Err(Error::Git(format!(
                "cannot roll back {short}: it is a merge commit, not a wfx checkpoint"
            )));
        }
        let Some(head) = head else {
            return Err(Error::Git(format!(
                "cannot roll back {short}: the repository has no commits on HEAD"
            )));
        };
        let on_head = head.id() == target.id()
            || self
                .git
                .graph_descendant_of(head.id(), target.id())
                .map_err(ctx("cannot walk history"))?;
        if !on_head {
            return Err(Error::Git(format!(
                "cannot roll back {short}: it is not part of the current HEAD's history"
            )));
        }
        let target_tree = target
            .tree()
            .map_err(ctx(format!("cannot read commit {short}")))?;
        let parent_tree = match target.parent(0) {
            Ok(p) => Some(
                p.tree()
                    .map_err(ctx(format!("cannot read the parent of {short}")))?,
            ),
            Err(_) => None,
        };
        let head_tree = head.tree().map_err(ctx("cannot read HEAD's tree"))?;
        let workflow = self.workflow_scope();
        let restore: Vec<Vec<u8>> = self
            .diff_paths(parent_tree.as_ref(), Some(&target_tree))?
            .into_iter()
            .filter(|p| !under(p, &workflow))
            .collect();
        if restore.is_empty() {
            return Ok(CommitOutcome::Unchanged);
        }

        // A later commit changed one of these paths: reverting would throw
        // its work away.
        let mut wanted = State::new();
        let mut before = BTreeMap::new();
        let mut conflicts = Vec::new();
        for path in &restore {
            let at_head = tree_entry(Some(&head_tree), path)?;
            if at_head != tree_entry(Some(&target_tree), path)? {
                conflicts.push(self.show(path));
            }
            if let Some(e) = tree_entry(parent_tree.as_ref(), path)? {
                wanted.insert(path.clone(), e);
            }
            before.insert(path.clone(), at_head);
        }
        if !conflicts.is_empty() {
            return Err(Error::Git(format!(
                "cannot roll back {short}: later commits changed {}; resolve by hand (e.g. git revert {short})",
                show_list(&conflicts)
            )));
        }

        // Uncommitted changes to these paths would be overwritten. A path
        // already holding the restored content is fine (a crash between
        // writing the files and committing).
        let state = self.worktree_state(&restore, &[])?;
        let index = self.index()?;
        let wip = self.wip()?;
        let mut dirty = Vec::new();
        // Work in progress (`--allow-dirty`): the fix's change is taken out
        // of the file on disk, the rest of it stays.
        let mut keep_wip = State::new();
        let before_fix = self.before_fix(trailers.iteration)?;
        let mut wip_left = State::new();
        for (path, _) in wip.iter().filter(|(p, _)| !restore.contains(p)) {
            // Left out of the fix commit: its bytes before the fix.
            if let Some(e) = before_fix.get(path) {
                wip_left.insert(path.clone(), *e);
            }
        }
        for path in &restore {
            let at_head = before.get(path).copied().flatten();
            let target_entry = wanted.get(path).copied();
            let on_disk = state.get(path).copied();
            let staged_ok = index_entry(&index, path) == at_head && !in_conflict(&index, path);
            let mut disk_ok = on_disk == at_head || on_disk == target_entry;
            if !disk_ok
                && wip.contains_key(path)
                && let (Some(fix), Some(disk), Some(parent)) = (at_head, on_disk, target_entry)
            {
                if let Some(e) = before_fix.get(path) {
                    keep_wip.insert(path.clone(), *e);
                    disk_ok = true;
                } else if let Some(id) = self.merge3(path, fix, Some(disk), parent)? {
                    keep_wip.insert(
                        path.clone(),
                        Entry {
                            id,
                            mode: disk.mode,
                        },
                    );
                    disk_ok = true;
                }
            }
            let in_the_way = on_disk.is_none() && std::fs::symlink_metadata(self.abs(path)).is_ok();
            if !staged_ok || !disk_ok || in_the_way {
                dirty.push(self.show(path));
            }
        }
        drop(index);
        if !dirty.is_empty() {
            return Err(Error::Git(format!(
                "cannot roll back {short}: uncommitted changes to {}; commit or stash them first",
                show_list(&dirty)
            )));
        }

        let mut scopes = restore.clone();
        let mut with = wanted.clone();
        let session_state = match &session_scope {
            Some(scope) => {
                let s = self.worktree_state(std::slice::from_ref(scope), &[])?;
                scopes.push(scope.clone());
                with.extend(s.clone());
                s
            }
            None => State::new(),
        };
        let (tree_id, _) = self.build_tree(Some(&head_tree), &scopes, &with)?;
        if tree_id == head_tree.id() {
            return Ok(CommitOutcome::Unchanged);
        }

        // Files first, then the commit: a crash in between leaves files the
        // next attempt accepts as already restored.
        for path in &restore {
            if !wanted.contains_key(path) && state.contains_key(path) {
                self.remove_file(path)?;
            }
        }
        if !wip_left.is_empty() {
            let now = self.worktree_state(&wip_left.keys().cloned().collect::<Vec<_>>(), &[])?;
            for (path, entry) in &wip_left {
                if now.get(path) != Some(entry) {
                    self.write_file(path, *entry)?;
                }
            }
        }
        for (path, entry) in &wanted {
            let entry = keep_wip.get(path).unwrap_or(entry);
            if state.get(path) != Some(entry) {
                self.write_file(path, *entry)?;
            }
        }

        let id = self.make_commit(tree_id, Some(&head), &full_message)?;
        let tree = self
            .git
            .find_tree(tree_id)
            .map_err(ctx("cannot read the new tree"))?;
        let mut touched: BTreeSet<Vec<u8>> = restore.iter().cloned().collect();
        let mut disk = wanted;
        disk.retain(|p, _| !keep_wip.contains_key(p));
        if let Some(scope) = &session_scope {
            touched.extend(
                self.diff_paths(Some(&head_tree), Some(&tree))?
                    .into_iter()
                    .filter(|p| under(p, scope)),
            );
            touched.extend(session_state.keys().cloned());
            disk.extend(session_state);
        }
        self.sync_index(&touched, &tree, &disk)?;
        Ok(CommitOutcome::Created(id.to_string()))
    }

    /// Delete a file the reverted commit had added, and the directories it
    /// leaves empty.
    fn remove_file(&self, path: &[u8]) -> Result<()> {
        let abs = self.abs(path);
        // A link on the way is not followed to remove something beyond it.
        if let Some(parent) = abs.parent() {
            crate::fsx::real_dir(parent).map_err(|e| Error::io(parent, e))?;
        }
        match std::fs::remove_file(&abs) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(abs, e)),
        }
        let mut dir = abs.parent();
        while let Some(d) = dir {
            if d == self.workdir || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }

    /// Write a blob to its path in the work tree, byte for byte, with its
    /// mode. Whatever was there is replaced, never written through (a
    /// symlink stays a symlink only if the blob says so).
    fn write_file(&self, path: &[u8], entry: Entry) -> Result<()> {
        if entry.mode == MODE_GITLINK {
            // A submodule's checkout is its own repository's business.
            return Ok(());
        }
        let abs = self.abs(path);
        let blob = self.git.find_blob(entry.id).map_err(ctx(format!(
            "cannot read the old content of {}",
            self.show(path)
        )))?;
        if let Some(parent) = abs.parent() {
            // Real directories on the way, never a link (DESIGN.md §11.3).
            crate::fsx::real_dir(parent).map_err(|e| Error::io(parent, e))?;
        }
        match std::fs::symlink_metadata(&abs) {
            Ok(meta) if meta.is_dir() => {
                return Err(Error::Git(format!(
                    "cannot restore {}: a directory is in the way",
                    self.show(path)
                )));
            }
            Ok(_) => std::fs::remove_file(&abs).map_err(|e| Error::io(&abs, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(abs, e)),
        }
        if entry.mode == MODE_LINK {
            #[cfg(unix)]
            {
                std::os::unix::fs::symlink(bytes_to_path(blob.content()), &abs)
                    .map_err(|e| Error::io(&abs, e))?;
                return Ok(());
            }
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if entry.mode == MODE_EXEC {
                0o777
            } else {
                0o666
            });
        }
        let mut file = options.open(&abs).map_err(|e| Error::io(&abs, e))?;
        std::io::Write::write_all(&mut file, blob.content()).map_err(|e| Error::io(&abs, e))?;
        Ok(())
    }
}

/// An index entry with no stat data (git re-checks such files by content).
fn bare_entry(path: &[u8], entry: Entry) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: entry.mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: entry.id,
        flags: 0,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

/// Copy a file's stat data into its index entry (truncated to the index
/// format's 32 bits, as git does).
fn fill_stat(raw: &mut IndexEntry, abs: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(abs) else {
        return;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        raw.ctime = IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
        raw.mtime = IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
        raw.dev = meta.dev() as u32;
        raw.ino = meta.ino() as u32;
        raw.uid = meta.uid();
        raw.gid = meta.gid();
    }
    raw.file_size = meta.len() as u32;
}

fn mode_of(meta: &std::fs::Metadata, trust_exec: bool, previous: Option<u32>) -> u32 {
    if meta.file_type().is_symlink() {
        return MODE_LINK;
    }
    #[cfg(unix)]
    if trust_exec {
        use std::os::unix::fs::PermissionsExt;
        return if meta.permissions().mode() & 0o100 != 0 {
            MODE_EXEC
        } else {
            MODE_FILE
        };
    }
    let _ = trust_exec;
    match previous {
        Some(MODE_EXEC) => MODE_EXEC,
        _ => MODE_FILE,
    }
}

/// The status git gives an index-to-work-tree delta (libgit2's
/// `workdir_delta2status`), or `None` for a submodule on both sides, which
/// a status that excludes submodules leaves out (`status_is_included`).
fn workdir_status(delta: &git2::DiffDelta<'_>) -> Option<Status> {
    let gitlink = |f: git2::DiffFile<'_>| f.mode() == git2::FileMode::Commit;
    let kind = delta.status();
    let old_counts = kind != Delta::Added && !gitlink(delta.old_file());
    let new_counts = kind != Delta::Deleted && !gitlink(delta.new_file());
    if !old_counts && !new_counts {
        return None;
    }
    Some(match kind {
        Delta::Added | Delta::Copied | Delta::Untracked => Status::WT_NEW,
        Delta::Unreadable => Status::WT_UNREADABLE,
        Delta::Deleted => Status::WT_DELETED,
        Delta::Modified => Status::WT_MODIFIED,
        Delta::Ignored => Status::IGNORED,
        // Rename detection is off: a move is a deletion and a new file.
        Delta::Renamed => Status::WT_RENAMED,
        Delta::Typechange => Status::WT_TYPECHANGE,
        Delta::Conflicted => Status::CONFLICTED,
        Delta::Unmodified => Status::CURRENT,
    })
}

fn tree_entry(tree: Option<&Tree<'_>>, path: &[u8]) -> Result<Option<Entry>> {
    let Some(tree) = tree else { return Ok(None) };
    match tree.get_path(&bytes_to_path(path)) {
        Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => Ok(None),
        Ok(e) => Ok(Some(Entry {
            id: e.id(),
            mode: e.filemode() as u32,
        })),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(ctx(format!(
            "cannot read {}",
            String::from_utf8_lossy(path)
        ))(e)),
    }
}

fn index_entry(index: &Index, path: &[u8]) -> Option<Entry> {
    index.get_path(&bytes_to_path(path), 0).map(|e| Entry {
        id: e.id,
        mode: e.mode,
    })
}

fn in_conflict(index: &Index, path: &[u8]) -> bool {
    let p = bytes_to_path(path);
    (1..=3).any(|stage| index.get_path(&p, stage).is_some())
}

/// A commit id as people read it (events, status, reports): its first
/// 10 hex digits.
pub fn short_commit(c: &str) -> &str {
    c.char_indices().nth(10).map_or(c, |(i, _)| &c[..i])
}

fn short_id(id: Oid) -> String {
    id.to_string().chars().take(12).collect()
}

#[cfg(test)]
mod ctx_tests {
    use super::*;
    use git2::{ErrorClass, ErrorCode};

    #[test]
    fn full_disk_and_quota_are_the_environment_not_git() {
        let table = [
            (
                ErrorClass::Os,
                "failed to write: No space left on device",
                2,
            ),
            (
                ErrorClass::Os,
                "failed to make directory: Disk quota exceeded",
                2,
            ),
            (ErrorClass::Os, "could not open: Read-only file system", 2),
            (ErrorClass::Os, "failed to resolve path: Too many links", 4),
            // Whatever class libgit2 gives it, a full disk is the
            // machine's refusal (DESIGN.md §10.3).
            (ErrorClass::Odb, "No space left on device", 2),
            (ErrorClass::Reference, "reference is locked", 4),
        ];
        for (class, msg, exit) in table {
            let e =
                ctx("cannot write the tree")(git2::Error::new(ErrorCode::GenericError, class, msg));
            assert_eq!(e.exit() as i32, exit, "{msg}: {e}");
        }
    }
}

#[cfg(test)]
mod changed_lines_tests {
    use super::*;

    #[test]
    fn changed_lines_are_the_new_ones() {
        let before = "a\nb\nc\n";
        let after = "a\nB\nc\nd\nb\n";
        assert_eq!(
            changed_lines(before, after).into_iter().collect::<Vec<_>>(),
            vec![2, 4]
        );
        assert!(changed_lines(before, before).is_empty());
        let v = FileVersions {
            before: None,
            after: Some(b"x".to_vec()),
        };
        assert_eq!(v.changed_lines(), None, "a new file has no old lines");
    }

    #[test]
    fn short_commits_are_ten_digits() {
        assert_eq!(short_commit("0123456789abcdef"), "0123456789");
        assert_eq!(short_commit("abc"), "abc");
    }
}
