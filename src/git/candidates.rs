//! The git side of speculative attempts (DESIGN.md §11.4). Each candidate
//! works in a checkout of its own, made like the sealed one
//! ([`super::sealed`]): a repository of its own in the system's temp
//! directory, outside the project, whose objects are this repository's
//! (`alternates`), holding a commit of the fix's snapshot. Nothing is
//! registered in the project's repository, so a `kill -9` at any instant
//! leaves no worktree in `git worktree list`; the directories are named
//! after the session and removed by the next run.
//!
//! A candidate's result is its work tree as a tree object, copied into
//! this repository (only the objects it lacks) and kept by
//! `refs/wfx/<session>/candidates/<n>` until the session completes; the
//! chosen one is put into the work tree path by path, never through a
//! link.

use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};

use super::{Checkpoints, change_paths, ctx};
use crate::error::{Error, Result};

/// The directory the candidate checkouts of `session` of the project at
/// `root` are made in (in the system's temp directory). It is there from
/// the first checkout of a batch until the batch has removed its last, so
/// what a killed run left is found with one look, not by reading the
/// whole temp directory on every open.
pub fn candidates_dir(root: &Path, session: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "wfx-candidates-{}",
        super::sealed::temp_tag(root, session)
    ))
}

/// Where candidate `index` of `session` works: in [`candidates_dir`],
/// named after the session and the project.
pub fn candidate_dir(root: &Path, session: &str, index: u32) -> PathBuf {
    let tag = super::sealed::temp_tag(root, session);
    candidates_dir(root, session).join(format!("wfx-candidate-{tag}-{index}"))
}

/// Remove the candidate checkouts a run of `session` left (killed, or
/// interrupted), with their directory; how many there were.
pub fn sweep_candidates(root: &Path, session: &str) -> usize {
    let dir = candidates_dir(root, session);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let n = entries.count();
    if super::remove_checkout(&dir).is_ok() {
        n
    } else {
        0
    }
}

impl Checkpoints {
    /// The commit every candidate checkout holds: the snapshot `tree` on
    /// top of `HEAD`, kept by `refs/wfx/<session>/candidates/base`; `None`
    /// outside a repository.
    pub fn candidate_base(&self, tree: &str, message: &str) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        let tree = r.snapshot_tree(tree)?;
        let head = r.head_commit()?;
        let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
        let (author, committer) = r.signatures()?;
        let id = r
            .git
            .commit(None, &author, &committer, message, &tree, &parents)
            .map_err(ctx("cannot create the candidates' commit"))?;
        if let Some(name) = r.session_ref("candidates/base") {
            r.git
                .reference(&name, id, true, "wfx: candidates")
                .map_err(ctx(format!("cannot write {name}")))?;
        }
        Ok(Some(id.to_string()))
    }

    /// Copy `tree` and the objects under it that this repository lacks
    /// from the repository of `from` (a candidate's checkout), and keep it
    /// as candidate `index` of the session.
    pub fn import_candidate(&self, from: &Checkpoints, tree: &str, index: u32) -> Result<()> {
        let (Some(to), Some(src)) = (&self.repo, &from.repo) else {
            return Ok(());
        };
        let id = Oid::from_str(tree).map_err(|_| Error::Internal(format!("{tree}: not an id")))?;
        copy_missing(&src.git, &to.git, id)?;
        if let Some(name) = to.session_ref(&format!("candidates/{index}")) {
            to.git
                .reference(&name, id, true, "wfx: candidate")
                .map_err(ctx(format!("cannot write {name}")))?;
        }
        Ok(())
    }

    /// Put the paths that differ between the trees `before` and `tree`
    /// into the work tree as `tree` has them (see
    /// [`Checkpoints::restore_paths`]: never through a link); the paths.
    pub fn apply_tree(&self, before: &str, tree: &str) -> Result<Vec<String>> {
        let Some(r) = &self.repo else {
            return Ok(Vec::new());
        };
        let old = r.snapshot_tree(before)?;
        let new = r.snapshot_tree(tree)?;
        let diff = r
            .git
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .map_err(ctx("cannot compare the candidate with its snapshot"))?;
        let paths = change_paths(&r.changes_of(&diff));
        self.restore_paths(tree, &paths)?;
        Ok(paths)
    }

    /// Keep the objects this handle writes (the trees and blobs a
    /// candidate's work tree is read into) in memory rather than as loose
    /// files under its checkout's `.git/objects`, where each costs a file
    /// and often a directory: the kept tree's are copied into the project
    /// ([`Checkpoints::import_candidate`]) and the rest go with the
    /// checkout.
    pub fn objects_in_memory(&self) -> Result<()> {
        let Some(r) = &self.repo else { return Ok(()) };
        let odb = r
            .git
            .odb()
            .map_err(ctx("cannot open the object database"))?;
        odb.add_new_mempack_backend(1000)
            .map_err(ctx("cannot keep the candidate's objects in memory"))?;
        Ok(())
    }

    /// `git.max_new_file_mib` of this handle.
    pub fn max_new_file_mib(&self) -> u64 {
        self.repo
            .as_ref()
            .map_or(crate::artifacts::config::DEFAULT_MAX_NEW_FILE_MIB, |r| {
                r.max_new_file >> 20
            })
    }
}

/// Copy the object `id` (a tree and what is under it, or a blob) from
/// `from` into `to` where `to` lacks it. A tree `to` has holds nothing it
/// lacks, so only what a candidate changed is copied.
fn copy_missing(from: &Repository, to: &Repository, id: Oid) -> Result<()> {
    let to_odb = to.odb().map_err(ctx("cannot open the object database"))?;
    if to_odb.exists(id) {
        return Ok(());
    }
    let from_odb = from
        .odb()
        .map_err(ctx("cannot open the candidate's object database"))?;
    let object = from_odb
        .read(id)
        .map_err(ctx(format!("cannot read the candidate's object {id}")))?;
    if object.kind() == ObjectType::Tree {
        let tree = from
            .find_tree(id)
            .map_err(ctx(format!("cannot read the candidate's tree {id}")))?;
        for entry in tree.iter() {
            if matches!(entry.kind(), Some(ObjectType::Tree | ObjectType::Blob)) {
                copy_missing(from, to, entry.id())?;
            }
        }
    }
    to_odb
        .write(object.kind(), object.data())
        .map_err(ctx(format!("cannot copy the candidate's object {id}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_dirs_are_named_after_the_session_and_swept() {
        let root = Path::new("/some/project");
        let a = candidate_dir(root, "WFS-sweep-test-x", 1);
        let b = candidate_dir(root, "WFS-sweep-test-x", 2);
        let other = candidate_dir(root, "WFS-sweep-test-xy", 1);
        assert!(a.starts_with(std::env::temp_dir()));
        assert_ne!(a, b);
        for d in [&a, &b, &other] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        assert_eq!(sweep_candidates(root, "WFS-sweep-test-x"), 2);
        assert!(!a.exists() && !b.exists());
        assert!(
            !candidates_dir(root, "WFS-sweep-test-x").exists(),
            "their directory goes with them"
        );
        assert!(other.exists(), "another session's checkout stays");
        assert_eq!(sweep_candidates(root, "WFS-sweep-test-xy"), 1);
        assert_eq!(sweep_candidates(root, "WFS-sweep-test-xy"), 0);
    }
}
