//! `--allow-dirty` (DESIGN.md §10.2): the user's work in progress is
//! never committed, and a rollback gives it back byte for byte.
//!
//! At the start the tracked paths with uncommitted changes and their bytes
//! are recorded as a tree under `refs/wfx/<session>/wip`. A checkpoint
//! then commits, for such a path, `HEAD`'s version plus the fix's own
//! change: a three-way merge of *recorded → disk now* onto `HEAD`'s
//! version. Where that does not merge cleanly the path stays uncommitted
//! (and is named). A rollback of such a path undoes the fix's committed
//! change in the file on disk the same way (merge of *fix → parent* onto
//! the disk's bytes), so the work in progress stays.

use git2::{MergeFileInput, Oid, Tree};

use super::{Checkpoints, Entry, Repo, State, ctx, tree_entry};
use crate::error::Result;

/// The paths of a checkpoint that hold work in progress.
#[derive(Debug, Default)]
pub(super) struct Held {
    /// The entries to commit instead of the disk's (HEAD's version plus
    /// the fix's change; HEAD's version when the fix left the path alone).
    pub commit: std::collections::BTreeMap<Vec<u8>, Option<Entry>>,
    /// Paths left out of the commit: the fix's change did not apply to
    /// HEAD's version.
    pub left_out: Vec<Vec<u8>>,
}

impl Checkpoints {
    /// Record `paths` (project-relative, tracked and modified or staged)
    /// with their bytes now, before the first fix.
    pub fn record_wip(&self, paths: &[String]) -> Result<()> {
        let Some(r) = &self.repo else { return Ok(()) };
        let Some(name) = r.session_ref("wip") else {
            return Ok(());
        };
        let mut scopes = Vec::new();
        for p in paths {
            scopes.push(r.scope_of(p)?);
        }
        let state = if scopes.is_empty() {
            State::new()
        } else {
            r.worktree_state(&scopes, &[])?
        };
        let (tree, _) = r.build_tree(None, &[], &state)?;
        r.git
            .reference(&name, tree, true, "wfx: work in progress at the start")
            .map_err(ctx(format!("cannot write {name}")))?;
        Ok(())
    }
}

impl Repo {
    /// `refs/wfx/<session>/<leaf>`, when the handle knows its session.
    pub(super) fn session_ref(&self, leaf: &str) -> Option<String> {
        let session = self.session.as_deref()?;
        Some(format!("refs/wfx/{session}/{leaf}"))
    }

    /// Keep a snapshot reachable (`git gc` during a pause must not prune
    /// it) and remember it as the latest.
    pub(super) fn keep_snapshot(&self, tree: Oid) -> Result<()> {
        let Some(name) = self.session_ref(&format!("snapshots/{tree}")) else {
            return Ok(());
        };
        self.keep_ref(&name, tree, "wfx: snapshot")?;
        let latest = self.session_ref("latest").unwrap_or_default();
        self.keep_ref(&latest, tree, "wfx: snapshot")
    }

    /// Point the ref `name` at `id`, unless it does already: libgit2
    /// writes (and removes) a lock file even then, a new inode each time.
    pub(super) fn keep_ref(&self, name: &str, id: Oid, why: &str) -> Result<()> {
        if self.git.refname_to_id(name).is_ok_and(|was| was == id) {
            return Ok(());
        }
        self.git
            .reference(name, id, true, why)
            .map_err(ctx(format!("cannot write {name}")))?;
        Ok(())
    }

    /// After a checkpoint commit: a fix remembers its snapshot (for the
    /// work in progress of a rollback); the final commit removes every
    /// ref of the session.
    pub(super) fn after_checkpoint(&self, trailers: &super::Trailers) -> Result<()> {
        let Some(prefix) = self.session_ref("") else {
            return Ok(());
        };
        match trailers.kind {
            super::CommitKind::Fix => {
                if let Ok(latest) = self.git.find_reference(&format!("{prefix}latest"))
                    && let Some(id) = latest.target()
                {
                    let name = format!("{prefix}before-fix-{}", trailers.iteration);
                    self.git
                        .reference(&name, id, true, "wfx: snapshot before the fix")
                        .map_err(ctx(format!("cannot write {name}")))?;
                }
            }
            super::CommitKind::Final => self.drop_refs(&prefix)?,
            super::CommitKind::Rollback => {}
        }
        Ok(())
    }

    /// Remove every ref under `prefix` (`refs/wfx/<session>/`).
    pub(super) fn drop_refs(&self, prefix: &str) -> Result<()> {
        let names: Vec<String> = self
            .git
            .references_glob(&format!("{prefix}*"))
            .map_err(ctx("cannot list refs"))?
            .names()
            .filter_map(|n| n.ok().map(str::to_string))
            .collect();
        for name in names {
            if let Ok(mut r) = self.git.find_reference(&name) {
                r.delete().map_err(ctx(format!("cannot delete {name}")))?;
            }
        }
        Ok(())
    }

    /// The work tree before fix `iteration` (empty when not recorded).
    pub(super) fn before_fix(&self, iteration: u32) -> Result<State> {
        self.recorded(&format!("before-fix-{iteration}"))
    }

    /// The recorded work in progress (empty without one).
    pub(super) fn wip(&self) -> Result<State> {
        self.recorded("wip")
    }

    /// The tree the session ref `what` records (empty without one).
    fn recorded(&self, what: &str) -> Result<State> {
        let Some(name) = self.session_ref(what) else {
            return Ok(State::new());
        };
        let Ok(r) = self.git.find_reference(&name) else {
            return Ok(State::new());
        };
        let tree = r
            .peel_to_tree()
            .map_err(ctx(format!("cannot read {name}")))?;
        super::head::tree_state(&tree)
    }

    /// What a checkpoint commits instead of the disk's bytes for the
    /// work-in-progress paths among `state` (see the module docs).
    pub(super) fn hold_wip(
        &self,
        scopes: &[Vec<u8>],
        state: &State,
        head: Option<&Tree<'_>>,
    ) -> Result<Held> {
        let mut held = Held::default();
        for (path, base) in self.wip()? {
            if !scopes.iter().any(|s| super::paths::under(&path, s)) {
                continue;
            }
            let at_head = tree_entry(head, &path)?;
            let disk = state.get(&path).copied();
            let entry = match disk {
                // The fix left it alone: HEAD's version stays.
                Some(d) if d == base => Some(at_head),
                Some(d) => self
                    .merge3(&path, base, at_head, d)?
                    .map(|id| Some(Entry { id, mode: d.mode })),
                // Deleted by the fix: that would delete the user's work too.
                None => None,
            };
            match entry {
                Some(e) => {
                    held.commit.insert(path, e);
                }
                None => {
                    held.commit.insert(path.clone(), at_head);
                    held.left_out.push(path);
                }
            }
        }
        Ok(held)
    }

    /// The three-way merge of `base → ours` and `base → theirs` (that is,
    /// `ours` with the change `base → theirs` applied), as a new blob;
    /// `None` when it does not merge cleanly. A missing `ours` reads as
    /// empty.
    pub(super) fn merge3(
        &self,
        path: &[u8],
        base: Entry,
        ours: Option<Entry>,
        theirs: Entry,
    ) -> Result<Option<Oid>> {
        let read = |e: Entry| -> Result<Vec<u8>> {
            Ok(self
                .git
                .find_blob(e.id)
                .map_err(ctx(format!("cannot read {}", self.show(path))))?
                .content()
                .to_vec())
        };
        let (b, o, t) = (read(base)?, ours.map(read).transpose()?, read(theirs)?);
        let o = o.unwrap_or_default();
        let mut ib = MergeFileInput::new();
        ib.content(&b);
        let mut io = MergeFileInput::new();
        io.content(&o);
        let mut it = MergeFileInput::new();
        it.content(&t);
        let result = git2::merge_file(&ib, &io, &it, None)
            .map_err(ctx(format!("cannot merge {}", self.show(path))))?;
        if !result.is_automergeable() {
            return Ok(None);
        }
        Ok(Some(self.git.blob(result.content()).map_err(ctx(
            format!("cannot store {}", self.show(path)),
        ))?))
    }
}
