//! `git.squash` (DESIGN.md §10.7): at completion the session's own commits
//! become one.
//!
//! Which commits are the session's is read from history, never assumed:
//! from `HEAD` back along first parents, the commits whose trailers name
//! this session *and* this run (`Wfx-Run`) are folded, up to the first
//! commit that is not. If a commit of this run lies further back, someone
//! else committed in between (the user, a hook, another tool): squashing
//! would rewrite their commit, so wfx refuses, says why, and leaves the
//! history as it is. A merge commit on the way is refused the same way.
//!
//! The squashed commit has `HEAD`'s tree, so the work tree and the index
//! do not change; only the branch (or a detached `HEAD`) moves. It carries
//! the final commit's trailers, so a completion repeated after a crash
//! finds it and folds nothing twice. No hook runs: like `git rebase`'s
//! squash, nothing new is committed, only regrouped.

use git2::{Commit, Oid};

use super::{
    Checkpoints, Repo, TRAILER_SEARCH_DEPTH, Trailers, build_message, ctx, parse_trailers,
};
use crate::error::Result;

/// What [`Checkpoints::squash_session`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SquashOutcome {
    /// `folded` commits became `commit`.
    Squashed { commit: String, folded: usize },
    /// Left alone, and why (a commit of someone else in between, a merge).
    Refused(String),
    /// Nothing to fold (one commit or none; not a repository).
    Nothing,
}

impl Checkpoints {
    /// Fold this session's commits on top of `HEAD` into one with
    /// `message` and `trailers` (see the module docs). The run id of the
    /// handle ([`Checkpoints::with_run`]) decides which commits are ours;
    /// without one nothing is squashed.
    pub fn squash_session(&self, message: &str, trailers: &Trailers) -> Result<SquashOutcome> {
        let Some(r) = &self.repo else {
            return Ok(SquashOutcome::Nothing);
        };
        r.squash_session(message, trailers)
    }

    /// Fold every commit on top of `base` (the commit `HEAD` was at when
    /// the session started) into one: `wfx run`, whose steps make the
    /// commits, with no trailers to tell them by. Refused when `HEAD` does
    /// not descend from `base` along first parents or a merge is on the way.
    pub fn squash_since(
        &self,
        base: &str,
        message: &str,
        trailers: &Trailers,
    ) -> Result<SquashOutcome> {
        let Some(r) = &self.repo else {
            return Ok(SquashOutcome::Nothing);
        };
        r.squash_since(base, message, trailers)
    }
}

impl Repo {
    fn ours(&self, commit: &Commit<'_>, session: &str) -> bool {
        let message = String::from_utf8_lossy(commit.message_raw_bytes());
        parse_trailers(&message).is_some_and(|t| {
            t.session == session && self.run.is_some() && t.run.as_deref() == self.run.as_deref()
        })
    }

    fn squash_session(&self, message: &str, trailers: &Trailers) -> Result<SquashOutcome> {
        if self.run.is_none() {
            return Ok(SquashOutcome::Refused(
                "the session has no Wfx-Run id, so its commits cannot be told apart".into(),
            ));
        }
        let session = trailers.session.as_str();
        let Some(head) = self.head_commit()? else {
            return Ok(SquashOutcome::Nothing);
        };
        let mut folded: Vec<Oid> = Vec::new();
        let mut base: Option<Commit<'_>> = None;
        let mut cursor = Some(head.clone());
        while let Some(c) = cursor.take() {
            if !self.ours(&c, session) {
                base = Some(c);
                break;
            }
            if c.parent_count() > 1 {
                return Ok(SquashOutcome::Refused(format!(
                    "{} is a merge commit",
                    super::short_id(c.id())
                )));
            }
            folded.push(c.id());
            cursor = c.parent(0).ok();
        }
        // A commit of this run further back: someone committed in between.
        if let Some(stop) = &base {
            let mut walk = self.git.revwalk().map_err(ctx("cannot walk history"))?;
            walk.push(stop.id()).map_err(ctx("cannot walk history"))?;
            walk.simplify_first_parent()
                .map_err(ctx("cannot walk history"))?;
            for id in walk.take(TRAILER_SEARCH_DEPTH) {
                let id = id.map_err(ctx("cannot walk history"))?;
                let c = self
                    .git
                    .find_commit(id)
                    .map_err(ctx(format!("cannot read commit {id}")))?;
                if self.ours(&c, session) {
                    return Ok(SquashOutcome::Refused(format!(
                        "commit {} ({}) is not wfx's and lies between this session's commits; squashing would rewrite it",
                        super::short_id(stop.id()),
                        String::from_utf8_lossy(stop.summary_bytes().unwrap_or_default())
                    )));
                }
            }
        }
        self.fold(head, base, folded.len(), message, trailers)
    }

    fn squash_since(
        &self,
        base: &str,
        message: &str,
        trailers: &Trailers,
    ) -> Result<SquashOutcome> {
        let Some(head) = self.head_commit()? else {
            return Ok(SquashOutcome::Nothing);
        };
        let base = Oid::from_str(base).map_err(ctx(format!("{base} is not a commit id")))?;
        let mut folded = 0;
        let mut cursor = Some(head.clone());
        while let Some(c) = cursor.take() {
            if c.id() == base {
                return self.fold(head, Some(c), folded, message, trailers);
            }
            if c.parent_count() > 1 {
                return Ok(SquashOutcome::Refused(format!(
                    "{} is a merge commit",
                    super::short_id(c.id())
                )));
            }
            folded += 1;
            if folded > TRAILER_SEARCH_DEPTH {
                break;
            }
            cursor = c.parent(0).ok();
        }
        Ok(SquashOutcome::Refused(format!(
            "HEAD does not descend from {}, where the session started",
            super::short_id(base)
        )))
    }

    /// One commit with `head`'s tree on top of `base` in place of the
    /// `folded` commits between them (nothing when fewer than two).
    fn fold(
        &self,
        head: Commit<'_>,
        base: Option<Commit<'_>>,
        folded: usize,
        message: &str,
        trailers: &Trailers,
    ) -> Result<SquashOutcome> {
        if folded < 2 {
            return Ok(SquashOutcome::Nothing);
        }
        let full = build_message(message, &self.stamp(trailers))?;
        let tree = head.tree().map_err(ctx("cannot read HEAD's tree"))?;
        let (author, committer) = self.signatures()?;
        let parents: Vec<&Commit<'_>> = base.iter().collect();
        let id = self
            .git
            .commit(None, &author, &committer, &full, &tree, &parents)
            .map_err(ctx("cannot create the squashed commit"))?;
        let head_ref = self.git.head().map_err(ctx("cannot read HEAD"))?;
        if head_ref.is_branch() {
            let name = head_ref.name().unwrap_or("HEAD").to_string();
            self.git
                .reference_matching(
                    &name,
                    id,
                    true,
                    head.id(),
                    "wfx: squash the session's commits",
                )
                .map_err(ctx(format!("cannot move {name}")))?;
        } else {
            self.git
                .set_head_detached(id)
                .map_err(ctx("cannot move HEAD"))?;
        }
        Ok(SquashOutcome::Squashed {
            commit: id.to_string(),
            folded,
        })
    }
}
