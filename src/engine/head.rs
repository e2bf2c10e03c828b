//! The HEAD check after every agent call (DESIGN.md §10.2), in every role
//! and both machines: commits the agent made on top of the pre-call `HEAD`
//! are recorded (`agent_commits`) and, where the machine makes its own
//! checkpoint commits, folded into the attempt; a `HEAD` that no longer
//! descends from the pre-call one (reset, checkout, rebase) is restored
//! with the work tree and the session's files, and the call counts as
//! failed (`tamper: head_moved`).

use super::ports::Ports;
use super::step::Snapshot;
use crate::agents::CallRecord;
use crate::artifacts::fix_history::Tamper;
use crate::error::Result;
use crate::git::HeadGuard;

/// Where `HEAD` went during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Where it was.
    Same,
    /// Ahead of where it was: these commits, oldest first.
    Ahead(Vec<String>),
    /// Somewhere that does not descend from where it was.
    Moved,
}

/// The pure decision: `pre` and `post` are `HEAD` before and after,
/// `since` the commits from `pre` to `post` when `post` descends from it.
pub fn verdict(pre: Option<&str>, post: Option<&str>, since: Option<&[String]>) -> Verdict {
    if pre == post {
        return Verdict::Same;
    }
    match (post, since) {
        (Some(_), Some(commits)) if !commits.is_empty() => Verdict::Ahead(commits.to_vec()),
        _ => Verdict::Moved,
    }
}

/// The message a call that moved `HEAD` fails with.
pub const MOVED: &str = "the agent moved HEAD (reset, checkout or rebase): branch, work tree and session files were restored to before the call";

/// Before a call: `HEAD`, its branch and the session's files. `recorded`:
/// the snapshot the step took before an earlier try of this call.
///
/// When the run before died during that try (`kill -9` while the agent
/// ran), the agent may have committed before it died: commits on top of
/// the recorded `HEAD` are then this call's too, so `fold` folds them
/// into the attempt as if the run had not been interrupted. After a
/// clean stop (a pause) they are the person's and are left alone.
pub fn before_call(
    ports: &mut dyn Ports,
    recorded: Option<&Snapshot>,
    fold: bool,
) -> Result<HeadGuard> {
    let mut guard = ports.head_guard()?;
    let Some(pre) = recorded.and_then(|s| s.head.as_deref()) else {
        return Ok(guard);
    };
    if !fold || !ports.previous_run_died() || guard.head.as_deref() == Some(pre) {
        return Ok(guard);
    }
    let since = match guard.head.as_deref() {
        Some(now) => ports.commits_since(Some(pre), now)?,
        None => None,
    };
    if since.is_some_and(|c| !c.is_empty()) {
        guard.head = Some(pre.to_string());
    }
    Ok(guard)
}

/// After a call: record, fold or restore (see the module docs); a call
/// that left `HEAD` on another branch is a move whatever its commits.
/// `fold`:
/// the machine commits the attempt itself (the cycle), so the agent's
/// commits are undone into the work tree; otherwise (a workflow step that
/// commits) they stay and are only recorded. `snapshot`: the project's
/// files before the call, when the step took one.
pub fn after_call(
    ports: &mut dyn Ports,
    guard: &HeadGuard,
    snapshot: Option<&Snapshot>,
    fold: bool,
    call: &mut CallRecord,
) -> Result<()> {
    let post = ports.head_now()?;
    // Another branch checked out (`git switch -c`, even at the same
    // commit): wfx's commits would land on it, so it is a move too.
    let switched = ports.branch_now()? != guard.branch;
    if post == guard.head && !switched {
        return Ok(());
    }
    let since = match &post {
        Some(p) if !switched => ports.commits_since(guard.head.as_deref(), p)?,
        _ => None,
    };
    let verdict = if switched {
        Verdict::Moved
    } else {
        verdict(guard.head.as_deref(), post.as_deref(), since.as_deref())
    };
    match verdict {
        Verdict::Same => {}
        Verdict::Ahead(commits) => {
            if fold {
                ports.fold_head(guard.head.as_deref())?;
            }
            call.agent_commits = commits;
        }
        Verdict::Moved => {
            let tree = snapshot.and_then(|s| s.tree.as_deref());
            ports.restore_head(guard, tree)?;
            call.tamper = Some(Tamper::HeadMoved);
            call.is_error = true;
            call.error_message = Some(MOVED.to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn verdicts() {
        let ab = ids(&["a", "b"]);
        let none: Vec<String> = Vec::new();
        type Row<'a> = (
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a [String]>,
            Verdict,
        );
        let table: &[Row] = &[
            // Nothing happened.
            (Some("p"), Some("p"), None, Verdict::Same),
            (None, None, None, Verdict::Same),
            // `git commit` on top (twice).
            (Some("p"), Some("b"), Some(&ab), Verdict::Ahead(ab.clone())),
            // The first commit of an unborn branch.
            (None, Some("b"), Some(&ab), Verdict::Ahead(ab.clone())),
            // `git reset --hard HEAD~1`, a checkout elsewhere, a rebase.
            (Some("p"), Some("q"), None, Verdict::Moved),
            // The branch deleted (HEAD unborn now).
            (Some("p"), None, None, Verdict::Moved),
            // Descends but with no commit in between cannot happen; moved.
            (Some("p"), Some("q"), Some(&none), Verdict::Moved),
        ];
        for (pre, post, since, want) in table {
            assert_eq!(
                verdict(*pre, *post, *since),
                *want,
                "{pre:?} → {post:?} ({since:?})"
            );
        }
    }
}
