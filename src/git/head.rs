//! After an agent call (DESIGN.md §10.2): where `HEAD` went, and the two
//! repairs. Commits the agent made on top of the pre-call `HEAD` are
//! *folded*: the branch goes back to the pre-call commit and the work tree
//! keeps their changes, so the attempt's checkpoint (and its rollback)
//! covers them. A `HEAD` that is no longer a descendant (reset, checkout,
//! rebase) is *restored*: branch, work tree and the session's artifacts go
//! back to what they were before the call.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Tree, TreeWalkMode, TreeWalkResult};

use super::paths::{self, under};
use super::{Checkpoints, Entry, Repo, State, ctx, is_not_found, tree_entry};
use crate::error::{Error, Result};
use crate::fsx::StatKey;

/// What `HEAD` was before an agent call, and the session's own files then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeadGuard {
    /// `HEAD`'s commit (`None`: unborn, or not a repository).
    pub head: Option<String>,
    /// The branch `HEAD` pointed at (`refs/heads/…`; `None`: detached).
    pub branch: Option<String>,
    /// A copy of the session directory's files, so a `git reset --hard`
    /// or `git clean` that changes or deletes them can be undone. Kept in
    /// memory, not as git objects: writing them to `.git/objects` before
    /// every agent call created about 20 files per call (issue #14).
    pub session_files: Vec<SessionFile>,
}

/// One file of the session directory before an agent call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Its path in the repository.
    path: Vec<u8>,
    content: Content,
    mode: u32,
}

/// What is kept of a session file before an agent call.
#[derive(Debug, Clone)]
enum Content {
    /// A small file (a session document): its bytes, shared with the
    /// copy kept for the next guard (not copied again per call).
    Bytes(std::sync::Arc<[u8]>),
    /// A big file (a log; up to hundreds of MiB): an open handle instead
    /// of its bytes, which keeps the content when a `git reset`, `git
    /// checkout` or `git clean` deletes or replaces the file (git unlinks
    /// and writes anew), with the file's key then. Memory stays bounded
    /// whatever an agent printed before; an agent that truncates a log in
    /// place changes what the handle reads too, which is not undone.
    Held {
        file: std::sync::Arc<std::fs::File>,
        key: crate::fsx::StatKey,
    },
}

impl PartialEq for Content {
    fn eq(&self, other: &Content) -> bool {
        match (self, other) {
            (Content::Bytes(a), Content::Bytes(b)) => a == b,
            (Content::Held { key: a, .. }, Content::Held { key: b, .. }) => a == b,
            _ => false,
        }
    }
}

impl Eq for Content {}

impl Checkpoints {
    /// Record `HEAD`, its branch and the files under `session_dir` (an
    /// absolute path; left out when it is not inside this work tree).
    pub fn head_guard(&self, session_dir: Option<&Path>) -> Result<HeadGuard> {
        self.head_guard_knowing(session_dir, std::iter::empty())
    }

    /// [`head_guard`](Self::head_guard), told what wfx itself wrote to
    /// session files (path, the file's key right after, the bytes): a file
    /// whose key is still that one is taken from there, not read.
    pub fn head_guard_knowing<'k>(
        &self,
        session_dir: Option<&Path>,
        known: impl IntoIterator<Item = (&'k Path, StatKey, &'k std::sync::Arc<[u8]>)>,
    ) -> Result<HeadGuard> {
        let Some(r) = &self.repo else {
            return Ok(HeadGuard::default());
        };
        let (head, branch) = r.head_and_branch()?;
        {
            let mut copies = r.session_copies.borrow_mut();
            for (path, key, bytes) in known {
                // Of two keys of the same file, the settled one vouches.
                if copies
                    .get(path.as_os_str())
                    .is_none_or(|(k, _)| *k != key || (!k.settled() && key.settled()))
                {
                    copies.insert(path.as_os_str().to_owned(), (key, bytes.clone()));
                }
            }
        }
        let session_files = match session_dir.and_then(|d| r.scope_of_abs(d).map(|s| (d, s))) {
            Some((dir, scope)) => r.copy_files(dir, &scope)?,
            None => Vec::new(),
        };
        Ok(HeadGuard {
            head,
            branch,
            session_files,
        })
    }

    /// The branch `HEAD` points at now (`refs/heads/…`; `None`: detached
    /// or not a repository), as [`head_guard`](Self::head_guard) records
    /// it, without resolving `HEAD` to its commit.
    pub fn head_branch(&self) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        r.head_branch()
    }

    /// The commits reachable from `post` and not from `pre`, oldest first,
    /// when `post` descends from `pre` (`pre = None`: every commit of
    /// `post`). `None` when it does not: history was rewritten.
    pub fn commits_since(&self, pre: Option<&str>, post: &str) -> Result<Option<Vec<String>>> {
        let Some(r) = &self.repo else { return Ok(None) };
        let post = oid(post)?;
        let mut walk = r.git.revwalk().map_err(ctx("cannot walk history"))?;
        walk.push(post).map_err(ctx("cannot walk history"))?;
        if let Some(pre) = pre {
            let pre = oid(pre)?;
            let descends = r
                .git
                .graph_descendant_of(post, pre)
                .map_err(ctx("cannot walk history"))?;
            if !descends {
                return Ok(None);
            }
            walk.hide(pre).map_err(ctx("cannot walk history"))?;
        }
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
            .map_err(ctx("cannot walk history"))?;
        let mut out = Vec::new();
        for id in walk {
            out.push(id.map_err(ctx("cannot walk history"))?.to_string());
        }
        Ok(Some(out))
    }

    /// Fold the agent's commits: point `HEAD` (its branch, or `HEAD` itself
    /// when detached) back at `pre`, keeping the work tree as it is. The
    /// index entries of the paths those commits changed go back to `pre`'s,
    /// so the changes show as the fix's own, uncommitted.
    pub fn fold_to(&self, pre: Option<&str>) -> Result<()> {
        let Some(r) = &self.repo else { return Ok(()) };
        let post_tree = r.head_tree()?;
        let pre_tree = r.tree_of(pre)?;
        let changed = r.diff_paths(pre_tree.as_ref(), post_tree.as_ref())?;
        r.point_head(pre, None)?;
        r.sync_to(&changed, pre_tree.as_ref())
    }

    /// Undo a reset, checkout or rebase: `HEAD` back on `guard`'s branch at
    /// its commit, the project's files back to `snapshot` (the tree taken
    /// before the call; without one, the paths the move changed back to
    /// the pre-call commit's), and the session's files back to the guard's
    /// copy. Returns the paths written or removed.
    pub fn restore_to(&self, guard: &HeadGuard, snapshot: Option<&str>) -> Result<Vec<String>> {
        let Some(r) = &self.repo else {
            return Ok(Vec::new());
        };
        let post_tree = r.head_tree()?;
        let pre_tree = r.tree_of(guard.head.as_deref())?;
        let moved = r.diff_paths(pre_tree.as_ref(), post_tree.as_ref())?;
        r.point_head(guard.head.as_deref(), guard.branch.as_deref())?;

        let workflow = r.workflow_scope();
        let project = r.project_scope();
        let mut done = BTreeSet::new();
        // The project's files.
        let current = r.worktree_state(
            std::slice::from_ref(&project),
            std::slice::from_ref(&workflow),
        )?;
        match snapshot {
            Some(s) => {
                let wanted = tree_state(&r.snapshot_tree(s)?)?;
                let paths: BTreeSet<&Vec<u8>> = wanted.keys().chain(current.keys()).collect();
                for path in paths {
                    r.put(path, current.get(path), wanted.get(path), &mut done)?;
                }
            }
            None => {
                for path in moved.iter().filter(|p| !under(p, &workflow)) {
                    let wanted = tree_entry(pre_tree.as_ref(), path)?;
                    let after = tree_entry(post_tree.as_ref(), path)?;
                    let now = current.get(path);
                    // Only what the move itself wrote; anything else on
                    // disk is somebody's work.
                    if now.is_none() || now == after.as_ref() {
                        r.put(path, now, wanted.as_ref(), &mut done)?;
                    }
                }
            }
        }
        // The session's own files, as they were before the call.
        for file in &guard.session_files {
            r.put_copy(file, &mut done)?;
        }
        r.sync_to(&moved, pre_tree.as_ref())?;
        Ok(done.iter().map(|p| r.show(p)).collect())
    }
}

fn oid(id: &str) -> Result<Oid> {
    Oid::from_str(id.trim()).map_err(|_| Error::Git(format!("{id:?} is not a commit id")))
}

/// Every blob of a tree, by full path.
pub(super) fn tree_state(tree: &Tree<'_>) -> Result<State> {
    let mut out = State::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(ObjectType::Tree) {
            let mut path = dir.as_bytes().to_vec();
            path.extend_from_slice(entry.name_bytes());
            out.insert(
                path,
                Entry {
                    id: entry.id(),
                    mode: entry.filemode() as u32,
                },
            );
        }
        TreeWalkResult::Ok
    })
    .map_err(ctx("cannot read the snapshot"))?;
    Ok(out)
}

impl Repo {
    pub(super) fn head_branch(&self) -> Result<Option<String>> {
        match self.git.find_reference("HEAD") {
            Ok(head) => Ok(head
                .symbolic_target_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(ctx("cannot read HEAD")(e)),
        }
    }

    /// `HEAD`'s commit (hex) and the branch it points at, as
    /// [`Repo::head_commit`] and [`Repo::head_branch`] give them, from one
    /// read of `HEAD`.
    fn head_and_branch(&self) -> Result<(Option<String>, Option<String>)> {
        let head = match self.git.find_reference("HEAD") {
            Ok(head) => head,
            Err(e) if is_not_found(&e) => return Ok((None, None)),
            Err(e) => return Err(ctx("cannot read HEAD")(e)),
        };
        let branch = head
            .symbolic_target_bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let commit = match head.resolve() {
            Ok(target) => Some(
                target
                    .peel_to_commit()
                    .map_err(ctx("cannot read HEAD's commit"))?
                    .id()
                    .to_string(),
            ),
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(ctx("cannot read HEAD")(e)),
        };
        Ok((commit, branch))
    }

    pub(super) fn head_tree(&self) -> Result<Option<Tree<'_>>> {
        match self.head_commit()? {
            Some(c) => Ok(Some(c.tree().map_err(ctx("cannot read HEAD's tree"))?)),
            None => Ok(None),
        }
    }

    fn tree_of(&self, commit: Option<&str>) -> Result<Option<Tree<'_>>> {
        let Some(id) = commit else { return Ok(None) };
        let c = self.git.find_commit(oid(id)?).map_err(|_| {
            Error::Git(format!(
                "commit {id} (HEAD before the agent's call) is not in this repository; \
                 look for it with `git reflog` and reset the branch to it by hand"
            ))
        })?;
        Ok(Some(c.tree().map_err(ctx(format!("cannot read {id}")))?))
    }

    /// The regular files under `dir` (whose scope in the repository is
    /// `scope`), with content and mode; wfx's temp files left out.
    /// Every file of the session directory `dir`, with its bytes. A file
    /// whose size, times and inode are what they were at the last copy is
    /// taken from that copy: the guard runs before every agent call, and
    /// reading every session file each time grew with the session.
    fn copy_files(&self, dir: &Path, scope: &[u8]) -> Result<Vec<SessionFile>> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let mut out = Vec::new();
        let dir_bytes = dir.as_os_str().as_bytes();
        let mut files = Vec::new();
        files_sorted(dir, &mut files)?;
        for file in files {
            // Joined onto `dir`: the rest of its bytes, without
            // `Path::strip_prefix`'s component parsing (the guard runs before
            // every agent call, over every session file).
            let Some(rel) = file
                .as_os_str()
                .as_bytes()
                .strip_prefix(dir_bytes)
                .map(|rest| rest.strip_prefix(b"/").unwrap_or(rest))
            else {
                continue;
            };
            let name = rel.rsplit(|b| *b == b'/').next().unwrap_or_default();
            if name.starts_with(b".") && name.ends_with(b".tmp") {
                continue;
            }
            let taken = crate::fsx::clock();
            let meta = match std::fs::symlink_metadata(&file) {
                Ok(m) => m,
                // Gone since the walk saw it: nothing to keep.
                Err(_) => continue,
            };
            let key = crate::fsx::StatKey::taken_at(taken, &meta);
            let cached = self
                .session_copies
                .borrow()
                .get(file.as_path().as_os_str())
                .filter(|(k, _)| k.vouches_for(&key))
                .map(|(_, b)| b.clone());
            let content = match cached {
                Some(b) => Content::Bytes(b),
                // Big files are never read: a handle keeps them.
                None if meta.len() > CACHED_COPY_MAX as u64 => {
                    let taken = crate::fsx::clock();
                    match std::fs::File::open(file.as_path()) {
                        Ok(file) => Content::Held {
                            key: file
                                .metadata()
                                .map(|m| crate::fsx::StatKey::taken_at(taken, &m))
                                .unwrap_or(key),
                            file: std::sync::Arc::new(file),
                        },
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(Error::io(file.as_path(), e)),
                    }
                }
                None => match std::fs::read(file.as_path()) {
                    Ok(b) => {
                        let b: std::sync::Arc<[u8]> = b.into();
                        self.session_copies
                            .borrow_mut()
                            .insert(file.as_path().as_os_str().to_owned(), (key, b.clone()));
                        Content::Bytes(b)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(Error::io(file.as_path(), e)),
                },
            };
            let exec = meta.permissions().mode() & 0o111 != 0;
            let mut path = scope.to_vec();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(rel);
            out.push(SessionFile {
                path,
                content,
                mode: if exec { 0o100755 } else { 0o100644 },
            });
        }
        Ok(out)
    }

    /// Write `file` back when the work tree's copy differs or is gone.
    fn put_copy(&self, file: &SessionFile, done: &mut BTreeSet<Vec<u8>>) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let abs = self.abs(&file.path);
        match &file.content {
            Content::Bytes(bytes) => {
                // A file of another size differs without being read.
                let same_len = std::fs::symlink_metadata(&abs)
                    .is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64);
                if same_len && std::fs::read(&abs).is_ok_and(|b| *b == **bytes) {
                    return Ok(());
                }
                crate::fsx::write(&abs, bytes).map_err(|e| Error::io(&abs, e))?;
            }
            Content::Held { file: held, key } => {
                if crate::fsx::StatKey::at(&abs).is_some_and(|now| key.vouches_for(&now)) {
                    return Ok(());
                }
                let copy = || -> std::io::Result<()> {
                    use std::io::{Read, Seek};
                    let mut from: &std::fs::File = held;
                    from.rewind()?;
                    let mut to = crate::fsx::create(&abs, 0o644)?;
                    std::io::copy(&mut from.take(key.size), &mut to)?;
                    Ok(())
                };
                copy().map_err(|e| Error::io(&abs, e))?;
            }
        }
        let perm =
            std::fs::Permissions::from_mode(if file.mode == 0o100755 { 0o755 } else { 0o644 });
        std::fs::set_permissions(&abs, perm).map_err(|e| Error::io(&abs, e))?;
        done.insert(file.path.clone());
        Ok(())
    }

    /// A path inside the work tree as a scope (`None` when outside).
    fn scope_of_abs(&self, dir: &Path) -> Option<Vec<u8>> {
        let canonical = dir.canonicalize().ok()?;
        let p = paths::prefix_of(&self.workdir, &canonical)?;
        Some(p.strip_suffix(b"/").unwrap_or(&p).to_vec())
    }

    /// Point `branch` (or, without one, whatever `HEAD` is now: its branch,
    /// or `HEAD` itself when detached) at `commit`, and `HEAD` at `branch`.
    /// `commit = None` (an unborn branch before the call) removes the
    /// branch again.
    fn point_head(&self, commit: Option<&str>, branch: Option<&str>) -> Result<()> {
        let name = match branch {
            Some(b) => Some(b.to_string()),
            None => self.head_branch()?,
        };
        let why = "wfx: HEAD back to before the agent's call";
        match (&name, commit) {
            (Some(b), Some(c)) => {
                self.git
                    .reference(b, oid(c)?, true, why)
                    .map_err(ctx(format!("cannot move {b}")))?;
                self.git
                    .set_head(b)
                    .map_err(ctx(format!("cannot check out {b}")))?;
            }
            (Some(b), None) => {
                if let Ok(mut r) = self.git.find_reference(b) {
                    r.delete().map_err(ctx(format!("cannot reset {b}")))?;
                }
                self.git
                    .set_head(b)
                    .map_err(ctx(format!("cannot check out {b}")))?;
            }
            (None, Some(c)) => self
                .git
                .set_head_detached(oid(c)?)
                .map_err(ctx("cannot move HEAD"))?,
            (None, None) => {}
        }
        Ok(())
    }

    /// The index entries of `paths` as in `tree` (absent when `tree` is
    /// `None` or lacks them).
    fn sync_to(&self, paths: &BTreeSet<Vec<u8>>, tree: Option<&Tree<'_>>) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let empty;
        let tree = match tree {
            Some(t) => t,
            None => {
                let id = self
                    .new_index()?
                    .write_tree_to(&self.git)
                    .map_err(ctx("cannot write the empty tree"))?;
                empty = self
                    .git
                    .find_tree(id)
                    .map_err(ctx("cannot read the empty tree"))?;
                &empty
            }
        };
        self.sync_index(paths, tree, &State::new())
    }

    /// Make the file at `path` hold `wanted` (remove it when `None`).
    fn put(
        &self,
        path: &[u8],
        now: Option<&Entry>,
        wanted: Option<&Entry>,
        done: &mut BTreeSet<Vec<u8>>,
    ) -> Result<()> {
        if now == wanted {
            return Ok(());
        }
        match wanted {
            Some(e) => self.write_file(path, *e)?,
            None => self.remove_file(path)?,
        }
        done.insert(path.to_vec());
        Ok(())
    }
}

/// The regular files under `dir` (links, which the walk does not follow,
/// and other kinds left out), depth first, each directory's entries in the
/// byte order of their names: what `walkdir` with `sort_by_file_name` gave,
/// for a fifth of its instructions (its sort parsed both paths' last
/// components at every comparison).
fn files_sorted(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let io = |e| Error::io(dir, e);
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        entries.push((entry.file_name(), entry.file_type().map_err(io)?));
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        let path = dir.join(name);
        if kind.is_dir() {
            files_sorted(&path, out)?;
        } else if kind.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Session files up to this size are kept between guards.
const CACHED_COPY_MAX: usize = 256 * 1024;

/// The head guard's copies of session files (absolute path → key, bytes).
pub(super) type CopyCache = crate::fsx::PathMap<(crate::fsx::StatKey, std::sync::Arc<[u8]>)>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard's own walk lists what `walkdir` sorted by name listed
    /// (files only, depth first, byte order: `B` before `a`, `a.b` before
    /// `a/`'s files, links not followed).
    #[test]
    fn files_sorted_walks_as_walkdir_sorted_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("S");
        for rel in [
            "a/z.json",
            "a/b/c.log",
            "a.b",
            "B",
            "b/.x.json.1a2b.tmp",
            "_",
            "a/b/a",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, rel).unwrap();
        }
        std::fs::create_dir_all(root.join("empty/deeper")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("B"), root.join("link-file")).unwrap();
        let walked: Vec<PathBuf> = walkdir::WalkDir::new(&root)
            .sort_by_file_name()
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .collect();
        let mut ours = Vec::new();
        files_sorted(&root, &mut ours).unwrap();
        assert_eq!(ours, walked);
        assert_eq!(ours.len(), 7);
        assert!(files_sorted(&tmp.path().join("gone"), &mut ours).is_err());
    }
}
