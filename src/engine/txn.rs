//! The session transaction: one durable commit per step (DESIGN.md §10.1).
//!
//! A step hands over every document it wrote — artifacts, views and, last,
//! its state file — and [`SessionTxn::commit`] makes them durable together:
//! each changed document goes to a temp file beside it and is renamed over
//! the old one (a `kill -9` leaves the old content or the new, never a
//! mix); the durable ones are fsynced first, then their directories, and
//! only then is the state renamed into place, so a durable state never
//! refers to a file that is not. The state's own directory entry is made
//! durable with the next commit (or when the transaction ends): after a
//! power loss the last step may be redone, as after a crash during it.
//! Views (Markdown, copies) are replaced atomically without fsync.
//!
//! The transaction remembers everything it wrote (digest and bytes):
//! unchanged documents are not written again, and after every agent call
//! [`SessionTxn::restore_edits`] writes back a file the agent changed or
//! removed (DESIGN.md §10.2, [`super::tamper`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// How a document must be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Derived from other documents (Markdown, copies): atomic, no fsync.
    View,
    /// An artifact the state refers to: durable before the state.
    Durable,
    /// The state file: the step's commit point, written last.
    State,
}

/// One file a step wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub durability: Durability,
}

impl Document {
    pub fn new(
        path: impl Into<PathBuf>,
        bytes: impl Into<Vec<u8>>,
        durability: Durability,
    ) -> Self {
        Document {
            path: path.into(),
            bytes: bytes.into(),
            durability,
        }
    }

    /// Pretty JSON with a trailing newline, as every JSON artifact.
    pub fn json<T: serde::Serialize>(
        path: impl Into<PathBuf>,
        value: &T,
        durability: Durability,
    ) -> Result<Self> {
        Ok(Document::new(
            path,
            crate::session::store::json_bytes(value)?,
            durability,
        ))
    }
}

use super::tamper::SessionCopies;
pub use super::tamper::digest;

/// The writes of one session (see the module docs).
#[derive(Debug)]
pub struct SessionTxn {
    /// The session directory: never recreated once it is gone.
    dir: PathBuf,
    /// What was written, to skip unchanged documents and to undo an
    /// agent's edits ([`SessionTxn::restore_edits`]).
    written: SessionCopies,
    /// A directory whose entries (the last state's rename) still need an fsync.
    owed_dir: Option<PathBuf>,
    /// fsync calls made, for the benchmark's per-step figure.
    pub syncs: u64,
}

impl SessionTxn {
    pub fn new(dir: impl Into<PathBuf>) -> SessionTxn {
        SessionTxn {
            dir: dir.into(),
            written: SessionCopies::default(),
            owed_dir: None,
            syncs: 0,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session moved (archived): its files are now under `dir`.
    pub fn moved_to(&mut self, dir: impl Into<PathBuf>) {
        let dir = dir.into();
        let old = std::mem::replace(&mut self.dir, dir.clone());
        self.written.moved(&old, &dir);
        self.owed_dir = None;
    }

    /// The digest of what this transaction last wrote to `path`.
    pub fn written_digest(&self, path: &Path) -> Option<u64> {
        self.written.digest(path)
    }

    /// Write back the files of this transaction that were changed or
    /// removed behind its back (by an agent during its call); the files
    /// restored. Exit 2 when the whole session directory is gone.
    pub fn restore_edits(&mut self) -> Result<Vec<PathBuf>> {
        self.check_present()?;
        self.written.restore_on_disk()
    }

    /// Err when the session directory is gone (removed while wfx ran).
    pub fn check_present(&self) -> Result<()> {
        if self.dir.is_dir() {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "session directory {} was removed while wfx was running; stopped without recreating it",
            self.dir.display()
        )))
    }

    fn unchanged(&self, doc: &Document) -> bool {
        let d = digest(&doc.bytes);
        match self.written.digest(&doc.path) {
            Some(w) if w == d => std::fs::read(&doc.path).is_ok_and(|b| digest(&b) == d),
            Some(_) => false,
            None => std::fs::read(&doc.path).is_ok_and(|b| b == doc.bytes),
        }
    }

    fn sync(&mut self, file: &File, path: &Path) -> Result<()> {
        self.syncs += 1;
        file.sync_all().map_err(|e| Error::io(path, e))
    }

    fn sync_dir(&mut self, dir: &Path) {
        self.syncs += 1;
        crate::session::store::sync_dir(dir);
    }

    /// Write a step's documents and make them durable together (see the
    /// module docs). Documents equal to what is on disk are skipped.
    pub fn commit(&mut self, docs: Vec<Document>) -> Result<()> {
        self.check_present()?;
        let mut state: Option<(Document, tempfile::NamedTempFile)> = None;
        let mut durable = Vec::new();
        for mut doc in docs {
            // Secrets never reach an artifact (DESIGN.md §10.2).
            doc.bytes = crate::redact::redact_vec(doc.bytes);
            if self.unchanged(&doc) {
                self.written.record(&doc.path, &doc.bytes);
                continue;
            }
            let tmp = self.temp_with(&doc.path, &doc.bytes)?;
            match doc.durability {
                Durability::View => {
                    self.persist(tmp, &doc)?;
                }
                Durability::Durable => {
                    start_writeback(tmp.as_file());
                    durable.push((doc, tmp));
                }
                Durability::State => {
                    start_writeback(tmp.as_file());
                    state = Some((doc, tmp));
                }
            }
        }
        if durable.is_empty() && state.is_none() {
            return Ok(());
        }
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        self.syncs += durable.len() as u64;
        sync_together(
            durable
                .iter()
                .map(|(doc, tmp)| (tmp.as_file(), doc.path.as_path())),
        )?;
        for (doc, tmp) in durable {
            dirs.insert(parent(&doc.path).to_path_buf());
            self.persist(tmp, &doc)?;
        }
        if let Some(owed) = self.owed_dir.take() {
            dirs.insert(owed);
        }
        self.syncs += dirs.len() as u64;
        let opened: Vec<(File, &Path)> = dirs
            .iter()
            .filter_map(|d| File::open(d).ok().map(|f| (f, d.as_path())))
            .collect();
        // A directory that cannot be synced is not an error (as in
        // `store::sync_dir`): some filesystems refuse fsync on directories.
        let _ = sync_together(opened.iter().map(|(f, d)| (f, *d)));
        if let Some((doc, tmp)) = state {
            self.sync(tmp.as_file(), &doc.path)?;
            let dir = parent(&doc.path).to_path_buf();
            self.persist(tmp, &doc)?;
            self.owed_dir = Some(dir);
        }
        Ok(())
    }

    /// A file written outside a step's commit (a command file before it
    /// runs): atomic, not synced.
    pub fn write_view(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.check_present()?;
        let doc = Document::new(
            path,
            crate::redact::redact(bytes).into_owned(),
            Durability::View,
        );
        if self.unchanged(&doc) {
            return Ok(());
        }
        let tmp = self.temp_with(path, &doc.bytes)?;
        self.persist(tmp, &doc)
    }

    /// Pay the owed directory fsync (before the session moves, at the end).
    pub fn flush(&mut self) {
        if let Some(dir) = self.owed_dir.take() {
            self.sync_dir(&dir);
        }
    }

    fn temp_with(&self, path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
        let dir = parent(path);
        if !dir.is_dir() {
            if !self.dir.is_dir() {
                self.check_present()?;
            }
            fs_err::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| Error::io(dir, e))?;
        tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
        // Temp files are created 0600; artifacts are for people and git.
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644));
        tmp.as_file()
            .set_permissions(mode)
            .map_err(|e| Error::io(path, e))?;
        Ok(tmp)
    }

    fn persist(&mut self, tmp: tempfile::NamedTempFile, doc: &Document) -> Result<()> {
        tmp.persist(&doc.path)
            .map_err(|e| Error::io(&doc.path, e.error))?;
        self.written.record(&doc.path, &doc.bytes);
        Ok(())
    }
}

/// Remove the temp files a killed wfx left in `dir` (and below): names
/// `.<file>.<random>.tmp`, as [`SessionTxn`] and the store make them. Only
/// call while holding the session lock of a run that died (nothing else
/// of wfx writes there then). Returns how many were removed.
pub fn sweep_temps(dir: &Path) -> usize {
    let mut removed = 0;
    for entry in walkdir::WalkDir::new(dir)
        .max_depth(4)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file()
            && name.starts_with('.')
            && name.ends_with(".tmp")
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

impl Drop for SessionTxn {
    fn drop(&mut self) {
        self.flush();
    }
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// fsync `files` at once, one thread each beyond the first: a journaling
/// filesystem folds concurrent fsyncs into one journal commit, so a step
/// waits for about one flush instead of one per file. The first error wins.
fn sync_together<'a>(files: impl Iterator<Item = (&'a File, &'a Path)>) -> Result<()> {
    let files: Vec<(&File, &Path)> = files.collect();
    let sync = |(f, p): (&File, &Path)| f.sync_all().map_err(|e| Error::io(p, e));
    match files.split_first() {
        None => Ok(()),
        Some((first, [])) => sync(*first),
        Some((first, rest)) => std::thread::scope(|scope| {
            let others: Vec<_> = rest
                .iter()
                .map(|&file| scope.spawn(move || sync(file)))
                .collect();
            let mut result = sync(*first);
            for handle in others {
                let r = handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::Internal("fsync thread panicked".into())));
                if result.is_ok() {
                    result = r;
                }
            }
            result
        }),
    }
}

/// Ask the kernel to start writing `file` out now, without waiting, so the
/// fsyncs of a commit mostly wait for writes already under way.
fn start_writeback(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain syscall on a file descriptor this function borrows.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_step_commits_its_documents_once_and_skips_what_did_not_change() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let mut txn = SessionTxn::new(&dir);
        let state = dir.join(".process/state.json");
        let docs = |n: u32| {
            vec![
                Document::new(
                    dir.join(".task/T.json"),
                    format!("task {n}"),
                    Durability::Durable,
                ),
                Document::new(dir.join("TODO.md"), "todo", Durability::View),
                Document::new(&state, format!("state {n}"), Durability::State),
            ]
        };
        txn.commit(docs(1)).unwrap();
        // task + .task dir + state (its directory is owed to the next commit)
        assert_eq!(txn.syncs, 3);
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 1");
        assert_eq!(
            std::fs::read_to_string(dir.join("TODO.md")).unwrap(),
            "todo"
        );
        let before = txn.syncs;
        txn.commit(docs(1)).unwrap();
        assert_eq!(txn.syncs, before, "nothing changed: nothing written");
        txn.commit(docs(2)).unwrap();
        assert_eq!(
            txn.syncs,
            before + 4,
            "task, the dirs of .task and the owed state dir, state"
        );
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 2");
        assert_eq!(names(&dir.join(".process")), ["state.json"], "no temp left");
        assert!(txn.written_digest(&state) == Some(digest(b"state 2")));
        // Someone changed a file behind wfx's back: it is written again.
        std::fs::write(dir.join("TODO.md"), "edited").unwrap();
        txn.commit(docs(2)).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("TODO.md")).unwrap(),
            "todo"
        );
    }

    #[test]
    fn a_removed_session_directory_is_never_recreated() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let mut txn = SessionTxn::new(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let err = txn
            .commit(vec![Document::new(
                dir.join("x.json"),
                "x",
                Durability::State,
            )])
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("was removed while wfx was running"),
            "{err}"
        );
        assert_eq!(err.exit(), crate::Exit::Usage);
        assert!(!dir.exists());
        assert!(txn.write_view(&dir.join("y"), b"y").is_err());
        assert!(!dir.exists());
    }

    #[test]
    fn temp_files_of_a_killed_run_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join(".process")).unwrap();
        std::fs::write(dir.join(".process/.state.json.aB3xYz.tmp"), "half").unwrap();
        std::fs::write(dir.join(".manifest.json.q1w2e3.tmp"), "half").unwrap();
        std::fs::write(dir.join(".process/state.json"), "whole").unwrap();
        std::fs::write(dir.join("notes.tmp"), "a user's file").unwrap();
        assert_eq!(sweep_temps(dir), 2);
        assert!(dir.join(".process/state.json").is_file());
        assert!(
            dir.join("notes.tmp").is_file(),
            "not one of wfx's temp names"
        );
    }

    #[test]
    fn moving_the_session_keeps_the_digests() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("active/S"), tmp.path().join("archives/S"));
        std::fs::create_dir_all(&a).unwrap();
        let mut txn = SessionTxn::new(&a);
        txn.commit(vec![Document::new(
            a.join("s.json"),
            "s",
            Durability::State,
        )])
        .unwrap();
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        std::fs::rename(&a, &b).unwrap();
        txn.moved_to(&b);
        assert_eq!(txn.written_digest(&b.join("s.json")), Some(digest(b"s")));
        txn.check_present().unwrap();
    }
}
