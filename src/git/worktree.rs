//! `--worktree`: run a session in its own git worktree on branch
//! `wfx/<session-id>`, so the user's work tree is never touched and several
//! sessions can run side by side (DESIGN.md §5.5).

use std::path::{Path, PathBuf};

use git2::{
    BranchType, ErrorCode, Repository, StatusOptions, WorktreeAddOptions, WorktreePruneOptions,
};

use super::{Checkpoints, ctx};
use crate::error::{Error, Result};

/// The branch a session's worktree works on.
pub fn branch_name(session_id: &str) -> String {
    format!("wfx/{session_id}")
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    canon(a) == canon(b)
}

impl Checkpoints {
    /// Create a worktree at `dir` on a new branch `wfx/<session_id>` made
    /// from `HEAD`, and return the branch name. Calling it again for the
    /// same session and directory (a resumed run) returns the branch without
    /// doing anything; an existing branch of that name (kept by an earlier
    /// [`worktree_remove`](Self::worktree_remove)) is reused. `None` outside
    /// a repository.
    pub fn worktree_add(&self, session_id: &str, dir: &Path) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        crate::session::id::validate_user_id(session_id)?;
        let branch = branch_name(session_id);
        let git = &r.git;
        match git.find_worktree(session_id) {
            Ok(existing) => {
                if existing.validate().is_ok() {
                    if same_dir(existing.path(), dir) {
                        return Ok(Some(branch));
                    }
                    return Err(Error::Git(format!(
                        "a worktree for {session_id} already exists at {}",
                        existing.path().display()
                    )));
                }
                // Its directory is gone: forget it and start again.
                existing
                    .prune(Some(&mut WorktreePruneOptions::new()))
                    .map_err(ctx(format!("cannot prune the stale worktree {session_id}")))?;
            }
            Err(e) if e.code() == ErrorCode::NotFound => {}
            Err(e) => return Err(ctx(format!("cannot look up worktree {session_id}"))(e)),
        }
        let Some(head) = r.head_commit()? else {
            return Err(Error::Git(
                "cannot create a worktree: the repository has no commits yet; commit something first"
                    .to_string(),
            ));
        };
        let reference = match git.find_branch(&branch, BranchType::Local) {
            Ok(b) => b.into_reference(),
            Err(e) if e.code() == ErrorCode::NotFound => git
                .branch(&branch, &head, false)
                .map_err(ctx(format!("cannot create branch {branch}")))?
                .into_reference(),
            Err(e) => return Err(ctx(format!("cannot look up branch {branch}"))(e)),
        };
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(&reference));
        git.worktree(session_id, dir, Some(&opts))
            .map_err(ctx(format!(
                "cannot create the worktree at {}",
                dir.display()
            )))?;
        Ok(Some(branch))
    }

    /// Remove the worktree at `dir` (its directory and git's record of it),
    /// keeping its branch and commits. Refused when the worktree has
    /// uncommitted changes or untracked, non-ignored files, unless `force`.
    /// Returns false when there is no such worktree (already removed).
    pub fn worktree_remove(&self, dir: &Path, force: bool) -> Result<bool> {
        let Some(r) = &self.repo else {
            return Ok(false);
        };
        let git = &r.git;
        let names = git.worktrees().map_err(ctx("cannot list worktrees"))?;
        let mut found = None;
        for name in names.iter().flatten().flatten() {
            let wt = git
                .find_worktree(name)
                .map_err(ctx(format!("cannot look up worktree {name}")))?;
            if same_dir(wt.path(), dir) {
                found = Some(wt);
                break;
            }
        }
        let Some(wt) = found else { return Ok(false) };
        let path: PathBuf = wt.path().to_path_buf();
        if !force && path.exists() {
            let repo = Repository::open_from_worktree(&wt).map_err(ctx(format!(
                "cannot open the worktree at {}",
                path.display()
            )))?;
            let mut opts = StatusOptions::new();
            opts.include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(false)
                .exclude_submodules(true);
            let statuses = repo
                .statuses(Some(&mut opts))
                .map_err(ctx(format!("cannot read the status of {}", path.display())))?;
            let dirty: Vec<String> = statuses
                .iter()
                .map(|s| String::from_utf8_lossy(s.path_bytes()).into_owned())
                .collect();
            if !dirty.is_empty() {
                return Err(Error::Git(format!(
                    "the worktree at {} has uncommitted changes ({}); commit them or remove it with force",
                    path.display(),
                    super::paths::show_list(&dirty)
                )));
            }
        }
        wt.prune(Some(
            WorktreePruneOptions::new()
                .valid(true)
                .locked(false)
                .working_tree(true),
        ))
        .map_err(ctx(format!(
            "cannot remove the worktree at {}",
            path.display()
        )))?;
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn branch_name_is_namespaced() {
        assert_eq!(super::branch_name("WFS-test-x"), "wfx/WFS-test-x");
    }
}
