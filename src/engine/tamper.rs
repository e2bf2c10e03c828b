//! The checks after every agent call that undo what an agent may not do
//! (DESIGN.md §10.2), in every role and both machines:
//!
//! - **wfx's own files.** The session transaction keeps a copy of every
//!   artifact it wrote ([`SessionCopies`]). After a call, each one that no
//!   longer holds what wfx wrote (an agent forged fix-history entries,
//!   wiped them, wrote `status: completed`) is written back from that copy
//!   and the call is recorded with `tamper: session_edited`. Only changes
//!   made *during* a call are undone: the copies are what this process
//!   wrote, so a person's edits between runs are what a resume starts from.
//! - **Read-only roles.** An analysis call must leave the work tree as it
//!   found it: any change is undone from the snapshot taken before the
//!   call, the call is recorded with `tamper: tree_edited` and counts as
//!   failed (the next agent of the chain answers).
//!
//! When one call did several things, the first of `head_moved`,
//! `session_edited`, `tree_edited` is recorded.

use std::path::{Path, PathBuf};

use super::ports::Ports;
use super::step::Snapshot;
use crate::agents::{CallRecord, Role};
use crate::artifacts::fix_history::Tamper;
use crate::error::{Error, Result};
use crate::fsx::StatKey;

/// What wfx last wrote to each of its session files: the bytes, so a file an agent changed or removed can be written back.
#[derive(Debug, Default)]
pub struct SessionCopies {
    kept: crate::fsx::PathMap<Kept>,
}

#[derive(Debug)]
struct Kept {
    /// Compared byte for byte (exact, and cheaper than a digest of both).
    /// Shared with the head guard's copy (see [`SessionCopies::known`]).
    bytes: std::sync::Arc<[u8]>,
    /// The file's key right after wfx wrote it, or taken again before a
    /// read found it still holding that: while the key vouches for the
    /// file (see [`StatKey::vouches_for`]), the file holds what wfx wrote
    /// and need not be read to know. A key taken right after a write is
    /// recent and vouches for nothing: the first check after it reads.
    key: std::cell::Cell<Option<StatKey>>,
}

impl Kept {
    /// Whether the file at `path` holds what wfx wrote: its kept key
    /// vouches for it, or it is read (`read`) and equal, and then keeps the
    /// key taken before that read (a recent key is replaced by a later one,
    /// which vouches once the file has settled).
    fn holds(&self, path: &Path, read: impl Fn(&Path) -> Option<Vec<u8>>) -> bool {
        let now = StatKey::at(path);
        if self
            .key
            .get()
            .zip(now)
            .is_some_and(|(kept, now)| kept.vouches_for(&now))
        {
            return true;
        }
        // A link in the file's place is an edit, whatever it points to
        // (DESIGN.md §11.3).
        let link = now.is_some_and(|k| k.mode & 0o170000 == 0o120000);
        let same = !link && read(path).is_some_and(|b| *b == *self.bytes);
        if same {
            self.key.set(now);
        }
        same
    }
}

impl SessionCopies {
    /// `path` now holds `bytes`, written (or found equal) by wfx.
    pub fn record(&mut self, path: &Path, bytes: &[u8]) {
        let key = StatKey::at(path);
        match self.kept.get_mut(path.as_os_str()) {
            Some(k) if *k.bytes == *bytes => k.key.set(key),
            Some(k) => {
                k.bytes = bytes.into();
                k.key.set(key);
            }
            None => {
                self.kept.insert(
                    path.as_os_str().to_owned(),
                    Kept {
                        bytes: bytes.into(),
                        key: key.into(),
                    },
                );
            }
        }
    }

    /// Whether `path` holds what wfx last wrote: told by its key when the
    /// key vouches for it, else by reading it (see `Kept::holds`).
    pub fn untouched(&self, path: &Path) -> bool {
        self.kept
            .get(path.as_os_str())
            .is_some_and(|k| k.holds(path, |p| std::fs::read(p).ok()))
    }

    /// What `path` holds when it is untouched since wfx wrote it: wfx's
    /// copy, known without reading it while the file's key vouches.
    pub fn copy_if_untouched(&self, path: &Path) -> Option<&[u8]> {
        self.untouched(path).then(|| self.copy(path)).flatten()
    }

    /// Each file with its key (taken after wfx wrote it, or again later) and what wfx wrote:
    /// while the key vouches for the file, that is its content (the head
    /// guard copies it from here instead of reading it).
    pub fn known(&self) -> impl Iterator<Item = (&Path, StatKey, &std::sync::Arc<[u8]>)> + '_ {
        self.kept
            .iter()
            .filter_map(|(p, k)| Some((Path::new(p), k.key.get()?, &k.bytes)))
    }

    /// The files moved from `old` to `new` (the session was archived).
    pub fn moved(&mut self, old: &Path, new: &Path) {
        self.kept = std::mem::take(&mut self.kept)
            .into_iter()
            .map(|(p, k)| match Path::new(&p).strip_prefix(old) {
                Ok(rest) => (new.join(rest).into_os_string(), k),
                Err(_) => (p, k),
            })
            .collect();
    }

    /// The files that no longer hold what wfx wrote (changed or removed),
    /// sorted; `read` gives a file's bytes now (`None`: missing), asked
    /// only for a file whose key does not vouch for it.
    pub fn edited(&self, read: impl Fn(&Path) -> Option<Vec<u8>>) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .kept
            .iter()
            .filter(|(p, k)| !k.holds(Path::new(p), &read))
            .map(|(p, _)| PathBuf::from(p))
            .collect();
        out.sort();
        out
    }

    /// Every kept key as if taken `secs` later: a test does not wait for
    /// its files to settle.
    #[cfg(test)]
    pub(crate) fn age_keys(&mut self, secs: i64) {
        for key in self
            .kept
            .values_mut()
            .filter_map(|k| k.key.get_mut().as_mut())
        {
            key.taken.0 += secs;
        }
    }

    /// wfx's copy of `path`.
    pub fn copy(&self, path: &Path) -> Option<&[u8]> {
        self.kept.get(path.as_os_str()).map(|k| &k.bytes[..])
    }

    /// Write back every file on disk that no longer holds what wfx wrote;
    /// the files restored, sorted.
    pub fn restore_on_disk(&self) -> Result<Vec<PathBuf>> {
        let edited = self.edited(|p| std::fs::read(p).ok());
        for path in &edited {
            let bytes = self.copy(path).unwrap_or_default();
            if let Some(dir) = path.parent() {
                crate::fsx::real_dir(dir).map_err(|e| Error::io(dir, e))?;
            }
            // The agent may have left a directory or a link in its place.
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                fs_err::remove_dir_all(path).map_err(|e| Error::io(path, e))?;
            }
            crate::session::store::write_replace(path, bytes)?;
        }
        Ok(edited)
    }
}

/// `.workflow/wfx.json` as this run loaded it (DESIGN.md §11.2): wfx's
/// own file while a session runs. An agent that edits, removes or creates
/// it (to allow skipped tests, or add `--deselect` to the test command)
/// has its edit undone; a person's edits between runs are what the next
/// run loads.
#[derive(Debug, Clone, Default)]
pub struct ConfigCopy {
    path: PathBuf,
    /// `None`: there was no config file.
    bytes: Option<Vec<u8>>,
}

impl ConfigCopy {
    /// The config file at `path` now.
    pub fn take(path: &Path) -> ConfigCopy {
        let bytes = std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .and_then(|_| std::fs::read(path).ok());
        ConfigCopy {
            path: path.to_path_buf(),
            bytes,
        }
    }

    /// Put the file back when it changed; whether it had.
    pub fn restore(&self) -> Result<bool> {
        if self.path.as_os_str().is_empty() {
            return Ok(false);
        }
        let now = ConfigCopy::take(&self.path);
        if now.bytes == self.bytes && !crate::fsx::is_link(&self.path) {
            return Ok(false);
        }
        match &self.bytes {
            Some(bytes) => crate::session::store::write_atomic(&self.path, bytes)?,
            None => {
                if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_dir()) {
                    fs_err::remove_dir_all(&self.path).map_err(|e| Error::io(&self.path, e))?;
                } else {
                    fs_err::remove_file(&self.path).map_err(|e| Error::io(&self.path, e))?;
                }
            }
        }
        Ok(true)
    }
}

/// Roles that must not change the work tree.
pub fn is_read_only(role: Role) -> bool {
    role == Role::Analysis
}

/// The checks after one agent call (see the module docs): undo and record
/// on `call`. `read_only_before` is the snapshot taken before a call of a
/// read-only role.
pub fn after_call(
    ports: &mut dyn Ports,
    call: &mut CallRecord,
    repo: &crate::git::RepoGuard,
    read_only_before: Option<&Snapshot>,
    write_before: Option<&Snapshot>,
) -> Result<()> {
    // The index is the agent's to leave as folding its commits set it.
    let restored = ports.restore_repo(repo, call.agent_commits.is_empty())?;
    if !ports.undo_session_edits()?.is_empty() {
        call.tamper.get_or_insert(Tamper::SessionEdited);
    }
    if ports.undo_config_edits()? {
        call.tamper.get_or_insert(Tamper::ConfigEdited);
    }
    if restored.config {
        call.tamper.get_or_insert(Tamper::RepoConfigEdited);
    }
    if restored.index {
        call.tamper.get_or_insert(Tamper::IndexEdited);
    }
    if let Some(before) = write_before
        && !ports.undo_planted_links(before)?.is_empty()
    {
        call.tamper.get_or_insert(Tamper::LinkPlanted);
    }
    if let Some(before) = read_only_before {
        let undone = ports.undo_tree_edits(before)?;
        if !undone.is_empty() {
            call.tamper.get_or_insert(Tamper::TreeEdited);
            call.is_error = true;
            call.error_message = Some(format!(
                "a read-only {} call changed the work tree ({}); undone",
                call.role,
                shown(&undone)
            ));
        }
    }
    Ok(())
}

/// At most three paths, and how many more.
pub(crate) fn shown(paths: &[String]) -> String {
    let mut text = paths.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 3 {
        text.push_str(&format!(" and {} more", paths.len() - 3));
    }
    text
}

/// Put the work tree under `root` back as it was in the snapshot tree
/// `tree` of `cp`: every path changed since gets the snapshot's content
/// and mode, or is removed when it did not exist then; a link put in a
/// file's place is replaced, never written through (DESIGN.md §11.3).
/// The paths undone, sorted.
pub fn undo_tree(cp: &crate::git::Checkpoints, tree: &str) -> Result<Vec<String>> {
    let changed = crate::git::change_paths(&cp.changed_since(tree)?);
    cp.restore_paths(tree, &changed)?;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is taken as untouched only while a settled key vouches for
    /// it; a key taken right after wfx's write is recent: the file is
    /// read, and the key taken before that read is kept.
    #[test]
    fn a_file_is_known_without_reading_only_once_its_key_settled() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a.json");
        std::fs::write(&a, "status: active").unwrap();
        let mut copies = SessionCopies::default();
        copies.record(&a, b"status: active");
        // A key taken right after a write: the file is read.
        let reads = std::cell::Cell::new(0);
        let read = |p: &Path| {
            reads.set(reads.get() + 1);
            std::fs::read(p).ok()
        };
        assert!(copies.edited(read).is_empty());
        assert_eq!(reads.get(), 1);
        copies.age_keys(3);
        assert!(copies.untouched(&a));
        assert!(
            copies
                .edited(|_| panic!("an untouched file is not read"))
                .is_empty()
        );
        // Taken back to its true time: a write now may share the kept
        // ctime on a kernel with coarse stamps (see the test below).
        copies.age_keys(-3);
        std::fs::write(&a, "status: forged").unwrap();
        assert!(!copies.untouched(&a));
        assert_eq!(copies.edited(|p| std::fs::read(p).ok()), vec![a.clone()]);
        // The same bytes written again: touched, but not edited.
        std::fs::write(&a, "status: active").unwrap();
        assert!(copies.edited(|p| std::fs::read(p).ok()).is_empty());
    }

    /// An agent rewrites a file right after wfx wrote it, same size, its
    /// mtime set back; on a kernel or file system with coarse stamps its
    /// ctime is then the one wfx's key has (made so here by hand, as this
    /// kernel's stamps are fine): a recent key is not trusted, so the
    /// edit is found and undone.
    #[test]
    fn a_same_size_rewrite_with_the_mtime_set_back_is_found_and_restored() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a.json");
        std::fs::write(&a, "status: active").unwrap();
        let mut copies = SessionCopies::default();
        copies.record(&a, b"status: active");
        let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, "status: forged").unwrap();
        crate::fsx::set_mtime(&a, mtime);
        let now = StatKey::at(&a).unwrap();
        let kept = copies
            .kept
            .get_mut(a.as_os_str())
            .unwrap()
            .key
            .get_mut()
            .as_mut()
            .unwrap();
        assert_eq!(
            (now.size, now.mtime, now.ino),
            (kept.size, kept.mtime, kept.ino)
        );
        kept.ctime = now.ctime;
        assert!(!copies.untouched(&a));
        assert_eq!(copies.restore_on_disk().unwrap(), vec![a.clone()]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "status: active");
    }

    #[test]
    fn copies_find_and_restore_what_an_agent_changed_or_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            tmp.path().join("a.json"),
            tmp.path().join(".process/b.json"),
            tmp.path().join("c.md"),
        );
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        let mut copies = SessionCopies::default();
        for (p, text) in [(&a, "a1"), (&b, "b1"), (&c, "c1")] {
            std::fs::write(p, text).unwrap();
            copies.record(p, text.as_bytes());
        }
        std::fs::write(&a, "a2").unwrap();
        copies.record(&a, b"a2");
        assert!(
            copies.restore_on_disk().unwrap().is_empty(),
            "all as written"
        );
        // The agent forges one, removes one (and its directory), leaves one.
        std::fs::write(&a, "forged").unwrap();
        std::fs::remove_dir_all(b.parent().unwrap()).unwrap();
        let mut want = vec![a.clone(), b.clone()];
        want.sort();
        assert_eq!(copies.restore_on_disk().unwrap(), want);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a2");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b1");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "c1");
        // A directory put in a file's place.
        std::fs::remove_file(&c).unwrap();
        std::fs::create_dir(&c).unwrap();
        assert_eq!(copies.restore_on_disk().unwrap(), vec![c.clone()]);
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "c1");
    }
}
