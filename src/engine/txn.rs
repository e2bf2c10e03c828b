//! The session transaction: one durable commit per step (DESIGN.md §10.1).
//!
//! A step hands over every document it wrote — artifacts, views and, last,
//! its state file — and [`SessionTxn::commit`] makes them durable together
//! with one sync: they are appended to the session's write-ahead journal
//! as one record, the journal is synced ([`super::journal`]), and only then
//! is each changed document put in place without an fsync of its own: its
//! new version goes to a temp file beside it (or its spare) and is renamed
//! over the old one, so a `kill -9` leaves the old content or the new,
//! never a mix, and the state is put in place last. After a crash or a
//! power loss, [`super::journal::replay_journal`] writes the journal's
//! whole records again and cuts a torn one: a step is done whole or not at
//! all. The journal is emptied at a checkpoint (the files it names and
//! their directories fsynced together): before the session is archived,
//! and when it grows past [`super::journal::LIMIT`].
//!
//! A step whose effect no other process has seen (an analysis, a
//! snapshot, a decision) is [`SessionTxn::defer`]red: its record goes to
//! the journal unsynced and its documents wait in memory; the next effect
//! another process can see (a child, a git commit, a repair, the archive,
//! the end) first [`SessionTxn::place_deferred`]s them: one sync for all,
//! then the documents in place. A kill loses nothing (replay); a power
//! loss loses only steps the resumed run does again (issue #30).
//!
//! A document that already exists is not replaced by a new file but
//! *exchanged* with its spare (`renameat2(RENAME_EXCHANGE)`): the new
//! version is written into the spare — the file that held the version
//! before last — and the two swap names in one atomic step, so no inode
//! is created or freed. On ext4 every freed inode is skipped by the
//! allocator for a minute or more, and a session that replaced ~8 files
//! per step spent half its time looking for a free inode (issue #14).
//! Spares live in `.workflow/.cache/spares/<session>/` (git-ignored). When
//! the transaction ends they are not removed (one inode freed per document
//! the session rewrote — five for a `wfx run` loop, ~16 for a short cycle —
//! each slowing the next minute's new files) but left to the project's next
//! session as `.workflow/.cache/spares/.pool/` ([`SPARE_POOL`]), which that
//! session takes with one rename; where exchange is not supported the
//! transaction falls back to a temp file and a rename.
//!
//! The transaction remembers the bytes of everything it wrote:
//! unchanged documents are not written again, and after every agent call
//! [`SessionTxn::restore_edits`] writes back a file the agent changed or
//! removed (DESIGN.md §10.2, [`super::tamper`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::journal::{self, Journal};
use crate::error::{Error, Result};

/// How a document must be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Derived from other documents (Markdown, copies): atomic; it needs
    /// no sync of its own (journaled with the step, or unsynced outside one).
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

/// The writes of one session (see the module docs).
#[derive(Debug)]
pub struct SessionTxn {
    /// The session directory: never recreated once it is gone.
    dir: PathBuf,
    /// What was written, to skip unchanged documents and to undo an
    /// agent's edits ([`SessionTxn::restore_edits`]).
    written: SessionCopies,
    /// The session's write-ahead journal: a step's one durable sync.
    journal: Journal,
    /// Spares directories that exchanges changed since the last
    /// checkpoint (fsynced with the journal's files).
    spare_dirs: BTreeSet<PathBuf>,
    /// Files an archive rewrote, not yet in the journal.
    rewritten: Vec<(PathBuf, Vec<u8>)>,
    /// Which of its two spares the state is written into next: never the
    /// one the last state went to, whose exchange may not be durable yet.
    state_spare: bool,
    /// Where the spares of replaced documents live (see the module docs);
    /// `None`: every write goes through a new temp file.
    spares: Option<PathBuf>,
    /// Documents of deferred steps ([`SessionTxn::defer`]): in the journal,
    /// not synced, not yet in place; one per path, the latest.
    deferred: Vec<Document>,
    /// Whether a deferred record holds a document that must be durable
    /// before it is put in place.
    unsynced: bool,
    /// Durable syncs made (journal syncs, and each fsync of a
    /// checkpoint), for the benchmark's per-step figure.
    pub syncs: u64,
}

/// A document's new content, written and waiting to take its place.
struct Staged {
    doc: Document,
    file: Staging,
}

enum Staging {
    /// A new temp file beside the document, renamed over it.
    Temp(tempfile::NamedTempFile),
    /// The document's spare, exchanged with it.
    Spare { path: PathBuf, file: File },
}

impl SessionTxn {
    pub fn new(dir: impl Into<PathBuf>) -> SessionTxn {
        let dir = dir.into();
        SessionTxn {
            journal: Journal::new(&dir),
            dir,
            written: SessionCopies::default(),
            spare_dirs: BTreeSet::new(),
            rewritten: Vec::new(),
            state_spare: false,
            spares: None,
            deferred: Vec::new(),
            unsynced: false,
            syncs: 0,
        }
    }

    /// Keep the spares of replaced documents in `dir` (created on first
    /// use, removed when the transaction ends). `dir` must be on the
    /// session's filesystem and belong to this session alone.
    ///
    /// Spares on another filesystem than the session (a session directory
    /// kept on another disk) could not be exchanged with the documents:
    /// then there are none, and every write is a temp file beside its
    /// document (DESIGN.md §11.3).
    pub fn with_spares(mut self, dir: impl Into<PathBuf>) -> SessionTxn {
        use std::os::unix::fs::MetadataExt;
        let dir = dir.into();
        // A killed run's spares: stale, and reused only for this session.
        let _ = std::fs::remove_dir_all(&dir);
        let same_fs = crate::fsx::real_dir(parent(&dir)).is_ok()
            && match (
                std::fs::metadata(parent(&dir)),
                std::fs::metadata(&self.dir),
            ) {
                (Ok(a), Ok(b)) => a.dev() == b.dev(),
                _ => false,
            };
        if same_fs {
            // Only here: a pool taken for spares that cannot be used
            // would be left behind.
            take_spare_pool(&dir);
            self.spares = Some(dir);
        }
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session moved (archived): its files are now under `dir`.
    pub fn moved_to(&mut self, dir: impl Into<PathBuf>) {
        let dir = dir.into();
        if dir == self.dir {
            return;
        }
        let old = std::mem::replace(&mut self.dir, dir.clone());
        self.written.moved(&old, &dir);
        for doc in &mut self.deferred {
            if let Ok(rel) = doc.path.strip_prefix(&old) {
                doc.path = dir.join(rel);
            }
        }
        self.journal.moved_to(&dir);
    }

    /// What this transaction wrote, with each file's key right after
    /// (see [`SessionCopies::known`]).
    pub fn known_copies(
        &self,
    ) -> impl Iterator<Item = (&Path, crate::fsx::StatKey, &std::sync::Arc<[u8]>)> + '_ {
        self.written.known()
    }

    /// What this transaction last wrote to `path`.
    pub fn written_copy(&self, path: &Path) -> Option<&[u8]> {
        self.written.copy(path)
    }

    /// Write back the files of this transaction that were changed or
    /// removed behind its back (by an agent during its call); the files
    /// restored. Exit 2 when the whole session directory is gone.
    ///
    /// A spare that an agent replaced with a link (or a hard link) is
    /// removed too, and counts as edited: the spares are the session's.
    pub fn restore_edits(&mut self) -> Result<Vec<PathBuf>> {
        self.check_present()?;
        self.place_deferred()?;
        let mut edited = self.written.restore_on_disk()?;
        if let Some(spares) = &self.spares {
            edited.extend(remove_foreign_spares(spares));
        }
        if self.journal.tampered() {
            // Its records can no longer be trusted: the files they wrote
            // (restored above) are made durable and the journal emptied.
            edited.push(self.journal.path().to_path_buf());
            self.checkpoint()?;
        }
        Ok(edited)
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
        match self.written.copy(&doc.path) {
            // Read only when the file's key does not vouch for it.
            Some(w) if *w == *doc.bytes => self.written.untouched(&doc.path),
            Some(_) => false,
            None => std::fs::read(&doc.path).is_ok_and(|b| b == doc.bytes),
        }
    }

    /// Write a step's documents and make them durable together (see the
    /// module docs). Documents equal to what is on disk are skipped.
    pub fn commit(&mut self, docs: Vec<Document>) -> Result<()> {
        self.defer(docs)?;
        self.place_deferred()
    }

    /// Append a step's documents to the journal as one record, unsynced,
    /// and keep them out of place until [`place_deferred`](Self::place_deferred): the
    /// commit of a step that nobody outside wfx has seen the effect of
    /// yet. A `kill -9` before the settle loses nothing (the next run
    /// replays the record); a power loss loses at most the deferred steps,
    /// whose effects (reading, analysing, snapshotting) the resumed run
    /// does again. Never is a document in place before its record is
    /// durable. Documents equal to the latest version (deferred, or on
    /// disk) are skipped.
    pub fn defer(&mut self, docs: Vec<Document>) -> Result<()> {
        self.check_present()?;
        let mut changed = Vec::new();
        for mut doc in docs {
            // Secrets never reach an artifact (DESIGN.md §10.2).
            doc.bytes = crate::redact::redact_vec(doc.bytes);
            match self.deferred.iter().position(|d| d.path == doc.path) {
                Some(i) if self.deferred[i].bytes == doc.bytes => continue,
                Some(i) => {
                    // A later version replaces it, whatever is on disk:
                    // its record must hold what replay is to leave.
                    self.deferred.remove(i);
                }
                None if self.unchanged(&doc) => {
                    self.written.record(&doc.path, &doc.bytes);
                    continue;
                }
                None => {}
            }
            changed.push(doc);
        }
        if changed.is_empty() {
            return Ok(());
        }
        self.journal_write(&changed, false)?;
        self.unsynced |= changed.iter().any(|d| d.durability != Durability::View);
        self.deferred.extend(changed);
        if self.journal.bytes() > journal::LIMIT {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Make the deferred records durable with one sync (when one of them
    /// must be) and put their documents in place, the state last: before
    /// anything outside wfx can see the session or what the steps did.
    pub fn place_deferred(&mut self) -> Result<()> {
        if self.deferred.is_empty() {
            return Ok(());
        }
        if self.unsynced {
            self.journal.sync()?;
            self.syncs += 1;
            self.unsynced = false;
        }
        let mut docs = std::mem::take(&mut self.deferred);
        // The state goes in place last: a reader never sees a state that
        // refers to a document not yet there.
        docs.sort_by_key(|d| d.durability == Durability::State);
        for doc in docs {
            if self.unchanged(&doc) {
                // Back to what is on disk (a later step undid a change).
                self.written.record(&doc.path, &doc.bytes);
                continue;
            }
            let state = doc.durability == Durability::State;
            let staged = self.stage(doc)?;
            if self.persist(staged)?.is_some() && state {
                // The state alternates between two spares (see `stage`).
                self.state_spare = !self.state_spare;
            }
        }
        Ok(())
    }

    /// Append `docs` to the journal as one record; `durable`: synced.
    fn journal_write(&mut self, docs: &[Document], durable: bool) -> Result<()> {
        let rel: Vec<(String, &[u8])> = docs
            .iter()
            .map(|d| {
                let rel = d
                    .path
                    .strip_prefix(&self.dir)
                    .ok()
                    .and_then(Path::to_str)
                    .map(str::to_string);
                rel.map(|r| (r, d.bytes.as_slice())).ok_or_else(|| {
                    Error::Internal(format!(
                        "{} is not a file of the session {}",
                        d.path.display(),
                        self.dir.display()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        self.journal
            .append_write(rel.iter().map(|(p, b)| (p.as_str(), *b)), durable)?;
        if durable {
            self.syncs += 1;
        }
        Ok(())
    }

    /// A file written outside a step's commit (a command file before it
    /// runs): atomic, journaled but not synced.
    pub fn write_view(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.check_present()?;
        self.place_deferred()?;
        let doc = Document::new(
            path,
            crate::redact::redact(bytes).into_owned(),
            Durability::View,
        );
        if self.unchanged(&doc) {
            return Ok(());
        }
        self.journal_write(std::slice::from_ref(&doc), false)?;
        let staged = self.stage(doc)?;
        self.persist(staged).map(|_| ())
    }

    /// Make everything the journal holds durable in place (before the
    /// session moves): a checkpoint.
    pub fn flush(&mut self) {
        let _ = self.checkpoint();
    }

    /// Append to the journal one synced record of the current content of
    /// every file it names and of the files `also`, with the content
    /// given: what the session is, whoever last wrote each file. Appended,
    /// not a new journal renamed over the old: no inode made or freed and
    /// no directory sync; replay applies each file's last version, which
    /// this record holds. A journal that cannot be appended to (not a
    /// file of its own) is replaced (two syncs).
    fn compact(&mut self, also: &[(PathBuf, Vec<u8>)]) -> Result<()> {
        self.place_deferred()?;
        let given: std::collections::HashMap<&Path, &[u8]> = also
            .iter()
            .map(|(p, b)| (p.as_path(), b.as_slice()))
            .collect();
        let mut files = self.journal.named(&self.dir);
        files.extend(also.iter().map(|(p, _)| p.clone()));
        let written = &self.written;
        let contents: Vec<(String, std::borrow::Cow<[u8]>)> = files
            .iter()
            .filter_map(|f| {
                let rel = f.strip_prefix(&self.dir).ok()?.to_str()?.to_string();
                let bytes = match given.get(f.as_path()) {
                    Some(b) => std::borrow::Cow::Borrowed(*b),
                    None => match written.copy_if_untouched(f) {
                        Some(b) => std::borrow::Cow::Borrowed(b),
                        None => std::borrow::Cow::Owned(std::fs::read(f).ok()?),
                    },
                };
                Some((rel, bytes))
            })
            .collect();
        let files = || contents.iter().map(|(p, b)| (p.as_str(), b.as_ref()));
        if self.journal.append_write(files(), true).is_ok() {
            self.syncs += 1;
            return Ok(());
        }
        self.journal.replace(files())?;
        self.syncs += 2;
        Ok(())
    }

    /// fsync the files the journal names, their directories and the
    /// spares' together, then empty the journal.
    fn checkpoint(&mut self) -> Result<()> {
        self.place_deferred()?;
        let files = self.journal.named(&self.dir);
        if files.is_empty() && self.journal.bytes() == 0 {
            return Ok(());
        }
        let mut dirs: BTreeSet<PathBuf> = std::mem::take(&mut self.spare_dirs);
        dirs.extend(files.iter().map(|f| parent(f).to_path_buf()));
        dirs.insert(parent(self.journal.path()).to_path_buf());
        let opened: Vec<(File, &Path, bool)> = files
            .iter()
            .map(|f| (f, true))
            .chain(dirs.iter().map(|d| (d, false)))
            .filter_map(|(p, must)| File::open(p).ok().map(|f| (f, p.as_path(), must)))
            .collect();
        self.syncs += opened.len() as u64 + 1;
        crate::session::store::sync_together(opened.iter().map(|(f, p, must)| ((f, *p), *must)))?;
        self.journal.truncate()
    }

    fn temp_with(&self, path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
        self.temp_for(path, bytes, false)
    }

    /// [`temp_with`](Self::temp_with); `absent`: the caller has just found
    /// no file at `path`, so its mode is not looked up again. (A file
    /// found is looked up after the directories on the way are checked:
    /// one seen through a link an agent put there is not the document.)
    fn temp_for(&self, path: &Path, bytes: &[u8], absent: bool) -> Result<tempfile::NamedTempFile> {
        let dir = parent(path);
        if !self.dir.is_dir() {
            self.check_present()?;
        }
        // Real directories on the way: a link an agent put in the place of
        // one is replaced, never written through (DESIGN.md §11.3).
        crate::fsx::real_dir(dir).map_err(|e| Error::io(dir, e))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| Error::io(dir, e))?;
        tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
        // Temp files are created 0600; artifacts are for people and git
        // (the mode of a link's target is not the file's).
        let existing = (!absent)
            .then(|| std::fs::symlink_metadata(path).ok())
            .flatten()
            .filter(|m| m.is_file());
        let mode = existing.map_or_else(
            || std::os::unix::fs::PermissionsExt::from_mode(0o644),
            |m| m.permissions(),
        );
        tmp.as_file()
            .set_permissions(mode)
            .map_err(|e| Error::io(path, e))?;
        Ok(tmp)
    }

    /// Write `doc`'s content where it waits to replace the document: its
    /// spare when the document exists and spares are kept, else a new
    /// temp file. The state has two spares and alternates: until a
    /// checkpoint its exchange is not durable, so after a power loss the
    /// inode it gave away may still be the state on disk (until replay).
    fn stage(&mut self, doc: Document) -> Result<Staged> {
        let spare = self.spares.as_ref().and_then(|dir| {
            let path = spare_path(dir, &self.dir, &doc.path)?;
            if doc.durability != Durability::State {
                return Some(path);
            }
            let mut name = path.into_os_string();
            name.push(if self.state_spare { ".b" } else { ".a" });
            Some(PathBuf::from(name))
        });
        let existing = std::fs::symlink_metadata(&doc.path)
            .ok()
            .filter(|m| m.is_file());
        if let (Some(path), Some(meta)) = (spare, &existing) {
            if let Some(file) = write_spare(&path, &doc.bytes, meta.permissions()) {
                return Ok(Staged {
                    doc,
                    file: Staging::Spare { path, file },
                });
            }
            // A spare that cannot be written (a full or odd filesystem):
            // the temp file will say why, if it fails too.
            self.spares = None;
        }
        let tmp = self.temp_for(&doc.path, &doc.bytes, existing.is_none())?;
        Ok(Staged {
            doc,
            file: Staging::Temp(tmp),
        })
    }

    /// Put `staged` in place of its document. Returns the spares
    /// directory when the old version went there.
    fn persist(&mut self, staged: Staged) -> Result<Option<PathBuf>> {
        let Staged { doc, file } = staged;
        let mut spares = None;
        match file {
            Staging::Temp(tmp) => {
                tmp.persist(&doc.path)
                    .map_err(|e| Error::io(&doc.path, e.error))?;
            }
            Staging::Spare { path, file } => {
                drop(file);
                match exchange(&path, &doc.path) {
                    Ok(()) => {
                        self.spare_dirs.insert(parent(&path).to_path_buf());
                        spares = Some(parent(&path).to_path_buf());
                    }
                    Err(e) if exchange_unsupported(&e) => {
                        // Not on this filesystem, or not across two: a
                        // temp file beside the document, renamed over it.
                        self.spares = None;
                        let _ = std::fs::remove_file(&path);
                        self.temp_with(&doc.path, &doc.bytes)?
                            .persist(&doc.path)
                            .map_err(|e| Error::io(&doc.path, e.error))?;
                    }
                    Err(e) => return Err(Error::io(&doc.path, e)),
                }
            }
        }
        self.written.record(&doc.path, &doc.bytes);
        Ok(spares)
    }
}

/// The archive of this transaction's session (DESIGN.md §10.6): the
/// whole session, the rewrites included, is first compacted into one
/// durable journal record in its new place; only then are the rewritten
/// files put in place, unsynced. Their files are made durable in place
/// later, by [`journal::settle_archived`] when wfx next opens a session in
/// the workspace (or replayed from the journal if the machine restarted).
///
/// The rewrites create no inode and free none (issue #30): each new
/// version is written into one scratch spare, which is then exchanged with
/// the file and so holds the file's old version, the scratch of the next
/// rewrite. A kill leaves each file old or new, never a mix.
impl crate::session::archive::ArchiveWrites for SessionTxn {
    /// A step of its own: journaled with one sync, exchanged with the
    /// file's spare.
    fn save(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        if !path.starts_with(&self.dir) {
            return crate::session::store::write_atomic(path, bytes);
        }
        self.commit(vec![Document::new(path, bytes, Durability::Durable)])
    }

    /// Only a file whose key (inode, size, times) is the one it had
    /// right after this process wrote it: any other write changes its
    /// change time, which no process can set back.
    fn wrote(&self, path: &Path) -> bool {
        self.written.untouched(path)
    }

    fn moved_to(&mut self, dir: &Path) {
        SessionTxn::moved_to(self, dir);
    }

    fn known(&self, path: &Path) -> Option<&[u8]> {
        self.written.copy_if_untouched(path)
    }

    /// The session's file joins the rewrites' record: one journal sync
    /// for the whole archive instead of one before the move and one after.
    fn updates_after_move(&self) -> bool {
        true
    }

    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.rewritten.push((path.to_path_buf(), bytes.to_vec()));
        Ok(())
    }

    fn settle(&mut self, dir: &Path) -> Result<()> {
        self.moved_to(dir);
        let rewritten = std::mem::take(&mut self.rewritten);
        self.compact(&rewritten)?;
        for (path, bytes) in &rewritten {
            self.put_rewrite(path, bytes)?;
            self.written.record(path, bytes);
        }
        Ok(())
    }
}

/// The archive's scratch spare: `%` alone never starts the name of a
/// document's spare (see [`spare_path`]).
const SCRATCH: &str = "%archive";

impl SessionTxn {
    /// Put an archive's rewrite of `path` in place through the scratch
    /// spare (see the archive above); a temp file and a rename where
    /// spares are not kept or cannot be exchanged.
    fn put_rewrite(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        let existing = std::fs::symlink_metadata(path).ok().filter(|m| m.is_file());
        if let (Some(spares), Some(meta)) = (self.spares.clone(), existing) {
            let scratch = spares.join(SCRATCH);
            if let Some(file) = write_spare(&scratch, bytes, meta.permissions()) {
                drop(file);
                match exchange(&scratch, path) {
                    Ok(()) => {
                        self.spare_dirs.insert(spares);
                        return Ok(());
                    }
                    Err(e) if exchange_unsupported(&e) => {
                        self.spares = None;
                        let _ = std::fs::remove_file(&scratch);
                    }
                    Err(e) => return Err(Error::io(path, e)),
                }
            }
        }
        journal::write_in_place(path, bytes)
    }
}

/// The spare of `path` (a file of the session `session`) in `spares`:
/// one flat directory, the path inside the session with `/` as `%2F`.
fn spare_path(spares: &Path, session: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(session).ok()?;
    let name = rel.to_str()?.replace('%', "%25").replace('/', "%2F");
    Some(spares.join(name))
}

/// Write `bytes` into the spare at `path` (reusing its inode when it
/// exists) with `mode`; `None` when that fails. The old content is
/// overwritten and the rest cut off, not truncated first: truncating to
/// zero frees the file's blocks only to allocate them again, and ext4
/// flushes a file truncated to zero when it is closed.
///
/// A spare that is not a regular file of its own (a symlink or a hard link
/// an agent put there) is removed first and made anew: it is never
/// written through (DESIGN.md §11.3).
fn write_spare(path: &Path, bytes: &[u8], mode: std::fs::Permissions) -> Option<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file() || m.nlink() != 1) {
        std::fs::remove_file(path).ok()?;
    }
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
    };
    let mut file = match open() {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::fsx::real_dir(parent(path)).ok()?;
            open().ok()?
        }
        Err(_) => return None,
    };
    file.write_all(bytes).ok()?;
    file.set_len(bytes.len() as u64).ok()?;
    if file.metadata().ok()?.permissions() != mode {
        file.set_permissions(mode).ok()?;
    }
    Some(file)
}

/// Remove what is not a spare of wfx's own from the spares directory:
/// links, hard links, directories (DESIGN.md §11.3). The paths removed.
fn remove_foreign_spares(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_file() && meta.nlink() == 1 {
            continue;
        }
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        if gone.is_ok() {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// Swap the names `a` and `b` atomically.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: two NUL-terminated paths that outlive the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// The filesystem (or the kernel) cannot exchange names, or not these two.
fn exchange_unsupported(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EXDEV | libc::EOPNOTSUPP)
        )
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
        // The records are applied: a replay in this boot leaves them (and
        // anything written after them) alone. Where the boot cannot be
        // told, they are made durable in place instead. Deferred records
        // that cannot be put in place stay unapplied: the next run
        // replays them.
        if self.place_deferred().is_ok() && !self.journal.mark_applied().unwrap_or(false) {
            self.flush();
        }
        if let Some(spares) = &self.spares {
            leave_spare_pool(spares);
        }
    }
}

/// The spares a finished session left for the next one, beside the
/// sessions' spare directories (a session id never starts with a dot).
pub const SPARE_POOL: &str = ".pool";

/// Make the pool, when there is one, the spares of the session whose
/// spares live in `dir` (absent: see [`SessionTxn::with_spares`]): one
/// rename, no new inode. The pool is the project's, so an agent may have
/// put anything there: what is not a real directory is left alone (and
/// never followed), and what is not a spare of wfx's own inside it is
/// removed before use; the spares are checked again at every write
/// ([`write_spare`]). Two sessions starting at once: one rename wins.
fn take_spare_pool(dir: &Path) {
    let pool = parent(dir).join(SPARE_POOL);
    if !std::fs::symlink_metadata(&pool).is_ok_and(|m| m.is_dir())
        || std::fs::rename(&pool, dir).is_err()
    {
        return;
    }
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        remove_foreign_spares(dir);
    } else {
        // Swapped for a link between the check and the rename.
        let _ = std::fs::remove_file(dir);
    }
}

/// Leave the spares in `dir` to the project's next session (see
/// [`take_spare_pool`]); removed when there is a pool already (another
/// session's) or the rename fails.
fn leave_spare_pool(dir: &Path) {
    let pool = parent(dir).join(SPARE_POOL);
    let free = std::fs::symlink_metadata(&pool).is_err();
    if !free || std::fs::rename(dir, &pool).is_err() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
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
        // One record in the journal, one sync for the whole step.
        assert_eq!(txn.syncs, 1);
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 1");
        assert_eq!(
            std::fs::read_to_string(dir.join("TODO.md")).unwrap(),
            "todo"
        );
        let before = txn.syncs;
        txn.commit(docs(1)).unwrap();
        assert_eq!(txn.syncs, before, "nothing changed: nothing written");
        txn.commit(docs(2)).unwrap();
        assert_eq!(txn.syncs, before + 1, "one durable sync per step");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 2");
        assert_eq!(
            names(&dir.join(".process")),
            ["state.json", "wfx.journal"],
            "no temp left"
        );
        assert_eq!(txn.written_copy(&state), Some(&b"state 2"[..]));
        // Someone changed a file behind wfx's back: it is written again.
        std::fs::write(dir.join("TODO.md"), "edited").unwrap();
        txn.commit(docs(2)).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("TODO.md")).unwrap(),
            "todo"
        );
    }

    fn inode(path: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
    }

    #[test]
    fn a_spare_written_over_keeps_no_tail_of_its_longer_old_content() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        let task = dir.join("task.json");
        for text in [
            "a long first version",
            "a much longer second version",
            "short",
            "s",
        ] {
            txn.commit(vec![Document::new(&task, text, Durability::Durable)])
                .unwrap();
            assert_eq!(std::fs::read_to_string(&task).unwrap(), text);
        }
    }

    #[test]
    fn a_replaced_document_takes_its_spares_inode_and_frees_none() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        let spares = tmp.path().join("spares/WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let mut txn = SessionTxn::new(&dir).with_spares(&spares);
        let task = dir.join(".task/T.json");
        let todo = dir.join("TODO.md");
        let state = dir.join("state.json");
        let step = |txn: &mut SessionTxn, n: u32| {
            txn.commit(vec![
                Document::new(&task, format!("task {n}"), Durability::Durable),
                Document::new(&todo, format!("todo {n}"), Durability::View),
                Document::new(&state, format!("state {n}"), Durability::State),
            ])
            .unwrap();
        };
        step(&mut txn, 1);
        let (task1, todo1, state1) = (inode(&task), inode(&todo), inode(&state));
        step(&mut txn, 2);
        assert_ne!(inode(&task), task1, "the new version is a different file");
        let todo2 = inode(&todo);
        // The version before last went to the spare and is written again.
        step(&mut txn, 3);
        assert_eq!(inode(&task), task1);
        assert_eq!(inode(&todo), todo1);
        assert_eq!(std::fs::read_to_string(&task).unwrap(), "task 3");
        assert_eq!(std::fs::read_to_string(&todo).unwrap(), "todo 3");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 3");
        assert_eq!(
            names(&spares),
            [".task%2FT.json", "TODO.md", "state.json.a", "state.json.b"]
        );
        assert_eq!(
            names(&dir),
            [".process", ".task", "TODO.md", "state.json"],
            "no temp left"
        );
        // The state alternates between two spares: the inode it gave away
        // comes back a step later.
        assert_ne!(inode(&state), state1);
        step(&mut txn, 4);
        assert_eq!(inode(&state), state1);
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "state 4");
        // A view written outside a step goes the same way.
        assert_eq!(inode(&todo), todo2);
        txn.write_view(&todo, b"todo 5").unwrap();
        assert_eq!(inode(&todo), todo1);
        assert_eq!(std::fs::read_to_string(&todo).unwrap(), "todo 5");
        drop(txn);
        assert!(!spares.exists(), "spares go when the transaction ends");
        assert_eq!(
            names(&tmp.path().join("spares").join(SPARE_POOL)),
            [".task%2FT.json", "TODO.md", "state.json.a", "state.json.b"],
            "to the next session"
        );
        assert_eq!(std::fs::read_to_string(&task).unwrap(), "task 4");
    }

    #[test]
    fn the_next_session_takes_the_spares_a_finished_one_left() {
        let tmp = tempfile::tempdir().unwrap();
        let pool = tmp.path().join("spares").join(SPARE_POOL);
        let (dir, mut txn) = session_with_spares(tmp.path());
        for n in 1..=3 {
            txn.commit(step(&dir, n)).unwrap();
        }
        drop(txn);
        let spares = ["a.json", "b.md", "s.json.a", "s.json.b"];
        assert_eq!(names(&pool), spares);
        let left: Vec<u64> = spares.iter().map(|n| inode(&pool.join(n))).collect();
        // Another session with documents of the same names: the pool is
        // its spares (one rename), and its replaced documents take their
        // inodes instead of new ones.
        let start = |id: &str| {
            let dir = tmp.path().join(id);
            std::fs::create_dir_all(&dir).unwrap();
            let txn = SessionTxn::new(&dir).with_spares(tmp.path().join("spares").join(id));
            (dir, txn)
        };
        let (b, mut txn_b) = start("WFS-b");
        assert!(!pool.exists(), "taken");
        assert_eq!(names(&tmp.path().join("spares/WFS-b")), spares);
        txn_b.commit(step(&b, 1)).unwrap();
        txn_b.commit(step(&b, 2)).unwrap();
        for f in ["a.json", "b.md", "s.json"] {
            assert!(left.contains(&inode(&b.join(f))), "{f}: a spare's inode");
            assert_eq!(text(&b.join(f)), format!("{}2", &f[..1]));
        }
        // One pool: a session that ends while another has left its spares
        // removes its own.
        let (_c, txn_c) = start("WFS-c");
        assert!(!tmp.path().join("spares/WFS-c").exists(), "no pool to take");
        drop(txn_b);
        assert_eq!(names(&pool), spares);
        let kept: Vec<u64> = spares.iter().map(|n| inode(&pool.join(n))).collect();
        drop(txn_c);
        assert!(!tmp.path().join("spares/WFS-c").exists());
        let after: Vec<u64> = spares.iter().map(|n| inode(&pool.join(n))).collect();
        assert_eq!(after, kept, "the pool there stays as it was");
        assert_eq!(names(&tmp.path().join("spares")), [SPARE_POOL]);
    }

    #[test]
    fn a_pool_on_another_filesystem_than_the_session_is_left_alone() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let Ok(other) = tempfile::tempdir_in("/dev/shm") else {
            return; // no second filesystem here
        };
        let dev = |p: &Path| std::fs::metadata(p).unwrap().dev();
        if dev(tmp.path()) == dev(other.path()) {
            return;
        }
        let pool = other.path().join("spares").join(SPARE_POOL);
        std::fs::create_dir_all(&pool).unwrap();
        std::fs::write(pool.join("a.json"), "old").unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let spares = other.path().join("spares/WFS-a");
        let mut txn = SessionTxn::new(&dir).with_spares(&spares);
        txn.commit(step(&dir, 1)).unwrap();
        txn.commit(step(&dir, 2)).unwrap();
        drop(txn);
        assert_eq!(text(&dir.join("a.json")), "a2");
        assert_eq!(names(&pool), ["a.json"], "not taken");
        assert!(!spares.exists(), "nothing left behind");
    }

    #[test]
    fn a_pool_an_agent_replaced_or_linked_out_is_never_written_through() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("a.json"), "yours").unwrap();
        let pool = tmp.path().join("spares").join(SPARE_POOL);
        std::fs::create_dir_all(pool.parent().unwrap()).unwrap();
        // The pool a link to a directory outside: not taken, not followed.
        symlink(&outside, &pool).unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        for n in 1..=3 {
            txn.commit(step(&dir, n)).unwrap();
        }
        drop(txn);
        assert_eq!(names(&outside), ["a.json"]);
        assert_eq!(text(&outside.join("a.json")), "yours");
        assert!(std::fs::symlink_metadata(&pool).unwrap().is_symlink());
        assert!(
            !tmp.path().join("spares/WFS-a").exists(),
            "removed: no pool to leave"
        );
        // A real pool holding a hard link to a file outside in a spare's
        // place: removed when the pool is taken, the file never written.
        std::fs::remove_file(&pool).unwrap();
        std::fs::create_dir(&pool).unwrap();
        std::fs::hard_link(outside.join("a.json"), pool.join("a.json")).unwrap();
        symlink(outside.join("a.json"), pool.join("b.md")).unwrap();
        let b = tmp.path().join("WFS-b");
        std::fs::create_dir_all(&b).unwrap();
        let mut txn = SessionTxn::new(&b).with_spares(tmp.path().join("spares/WFS-b"));
        assert_eq!(
            names(&tmp.path().join("spares/WFS-b")),
            Vec::<String>::new()
        );
        for n in 1..=3 {
            txn.commit(step(&b, n)).unwrap();
        }
        drop(txn);
        assert_eq!(text(&outside.join("a.json")), "yours");
        assert_eq!(text(&b.join("a.json")), "a3");
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

    fn journal_records(dir: &Path) -> Vec<(u64, journal::Record)> {
        journal::decode(&std::fs::read(journal::journal_path(dir)).unwrap_or_default()).records
    }

    #[test]
    fn a_run_killed_after_its_commit_replays_to_the_same_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        for n in 1..=3 {
            txn.commit(step(&dir, n)).unwrap();
        }
        assert_eq!(txn.syncs, 3, "one durable sync per step");
        std::mem::forget(txn); // kill -9: no applied mark
        let done = journal::replay_journal(&dir).unwrap();
        assert_eq!((done.records, done.files), (3, 0), "already in place");
        assert_eq!(std::fs::read_to_string(dir.join("s.json")).unwrap(), "s3");
        // The file a step put in place is lost (a power loss): replay
        // writes the last whole step's version again.
        std::fs::write(dir.join("a.json"), "").unwrap();
        std::fs::remove_file(dir.join("s.json")).unwrap();
        let done = journal::replay_journal(&dir).unwrap();
        assert_eq!(done.files, 2);
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "a3");
        assert_eq!(std::fs::read_to_string(dir.join("s.json")).unwrap(), "s3");
        assert_eq!(std::fs::read_to_string(dir.join("b.md")).unwrap(), "b3");
    }

    /// A session `WFS-a` under `tmp`, its transaction keeping spares.
    fn session_with_spares(tmp: &Path) -> (PathBuf, SessionTxn) {
        let dir = tmp.join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let txn = SessionTxn::new(&dir).with_spares(tmp.join("spares/WFS-a"));
        (dir, txn)
    }

    /// Step `n`'s three documents: an artifact, a view and the state.
    fn step(dir: &Path, n: u32) -> Vec<Document> {
        vec![
            Document::new(dir.join("a.json"), format!("a{n}"), Durability::Durable),
            Document::new(dir.join("b.md"), format!("b{n}"), Durability::View),
            Document::new(dir.join("s.json"), format!("s{n}"), Durability::State),
        ]
    }

    fn text(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    #[test]
    fn deferred_steps_wait_out_of_place_and_take_one_sync_together() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        txn.commit(step(&dir, 1)).unwrap();
        assert_eq!(txn.syncs, 1);
        txn.defer(step(&dir, 2)).unwrap();
        txn.defer(step(&dir, 3)).unwrap();
        // In the journal, not synced, not in place: a reader still sees
        // the last settled step whole.
        assert_eq!(txn.syncs, 1);
        assert_eq!(
            (text(&dir.join("a.json")), text(&dir.join("s.json"))),
            ("a1".into(), "s1".into())
        );
        let records = journal::decode(&std::fs::read(txn.journal.path()).unwrap()).records;
        assert_eq!(records.len(), 3, "one record per step");
        txn.place_deferred().unwrap();
        assert_eq!(txn.syncs, 2, "one sync for both deferred steps");
        for (f, want) in [("a.json", "a3"), ("b.md", "b3"), ("s.json", "s3")] {
            assert_eq!(text(&dir.join(f)), want, "{f}");
        }
        txn.place_deferred().unwrap();
        assert_eq!(txn.syncs, 2, "nothing deferred: no sync");
        // Only views deferred: put in place without a sync, as a commit of
        // views alone is.
        txn.defer(vec![Document::new(
            dir.join("b.md"),
            "b4",
            Durability::View,
        )])
        .unwrap();
        txn.place_deferred().unwrap();
        assert_eq!((txn.syncs, text(&dir.join("b.md"))), (2, "b4".into()));
    }

    #[test]
    fn a_run_killed_with_deferred_steps_replays_them_into_place() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        txn.commit(step(&dir, 1)).unwrap();
        txn.defer(step(&dir, 2)).unwrap();
        // Back to what is on disk: the record must still say so, or replay
        // would leave the deferred version.
        txn.defer(vec![Document::new(
            dir.join("a.json"),
            "a1",
            Durability::Durable,
        )])
        .unwrap();
        std::mem::forget(txn); // kill -9 before the deferred steps were placed
        assert_eq!(text(&dir.join("s.json")), "s1");
        journal::replay_journal(&dir).unwrap();
        for (f, want) in [("a.json", "a1"), ("b.md", "b2"), ("s.json", "s2")] {
            assert_eq!(text(&dir.join(f)), want, "{f}");
        }
    }

    #[test]
    fn deferred_steps_are_placed_before_an_undo_a_view_or_the_end() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, mut txn) = session_with_spares(tmp.path());
        txn.defer(step(&dir, 1)).unwrap();
        // An undo compares the disk with what wfx wrote: what it wrote
        // must be there first, or it would count as an agent's removal.
        assert_eq!(txn.restore_edits().unwrap(), Vec::<PathBuf>::new());
        assert_eq!(text(&dir.join("s.json")), "s1");
        txn.defer(step(&dir, 2)).unwrap();
        txn.write_view(&dir.join("cmd.sh"), b"echo").unwrap();
        assert_eq!(text(&dir.join("s.json")), "s2", "placed before the view");
        txn.defer(step(&dir, 3)).unwrap();
        drop(txn);
        assert_eq!(text(&dir.join("s.json")), "s3", "placed at the end");
        let done = journal::replay_journal(&dir).unwrap();
        assert_eq!(done.files, 0, "applied: nothing to replay");
    }

    #[test]
    fn a_journal_an_agent_rewrites_is_emptied_and_never_replayed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let mut txn = SessionTxn::new(&dir);
        let state = dir.join(".process/state.json");
        txn.commit(vec![Document::new(&state, "running", Durability::State)])
            .unwrap();
        // The agent, during its call: a record marking the session done.
        let mut forged = journal::Journal::new(&dir);
        forged
            .append_write([(".process/state.json", &b"completed"[..])], false)
            .unwrap();
        let edited = txn.restore_edits().unwrap();
        assert!(edited.contains(&journal::journal_path(&dir)), "{edited:?}");
        assert!(journal_records(&dir).is_empty());
        drop(txn);
        let done = journal::replay_in_boot_for_tests(&dir, Some("another boot"));
        assert_eq!(done.files, 0);
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "running");
    }

    #[test]
    fn an_archive_compacts_the_session_into_one_record_settled_later() {
        use crate::session::archive::ArchiveWrites;
        let tmp = tempfile::tempdir().unwrap();
        let (active, archives) = (tmp.path().join("active"), tmp.path().join("archives"));
        let a = active.join("WFS-a");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&archives).unwrap();
        let mut txn = SessionTxn::new(&a);
        txn.commit(vec![
            Document::new(a.join("t.json"), "active/WFS-a", Durability::Durable),
            Document::new(a.join(".process/s.json"), "s", Durability::State),
        ])
        .unwrap();
        // Written outside the transaction, durable on its own.
        std::fs::write(a.join("session.json"), "archived_at").unwrap();
        let b = archives.join("WFS-a");
        std::fs::rename(&a, &b).unwrap();
        let before = txn.syncs;
        txn.write(&b.join("t.json"), b"archives/WFS-a").unwrap();
        txn.settle(&b).unwrap();
        assert_eq!(txn.syncs, before + 1, "one record appended and synced");
        let records = journal_records(&b);
        assert_eq!(records.len(), 2, "the step's and the archive's");
        let journal::Record::Write(files) = &records[1].1 else {
            panic!("{records:?}")
        };
        let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, [".process/s.json", "t.json"]);
        assert_eq!(files[1].1, b"archives/WFS-a");
        // A power loss: the archived session's rewrite is replayed.
        std::fs::write(b.join("t.json"), "").unwrap();
        assert_eq!(journal::replay_in_boot_for_tests(&b, None).files, 1);
        assert_eq!(
            std::fs::read_to_string(b.join("t.json")).unwrap(),
            "archives/WFS-a"
        );
        assert_eq!(
            journal::settle_archived(&archives),
            0,
            "its run has not ended"
        );
        drop(txn); // the applied mark
        assert_eq!(journal::settle_archived(&archives), 1);
        assert!(
            journal_records(&b).is_empty(),
            "emptied once durable in place"
        );
        assert_eq!(
            std::fs::read_to_string(b.join("t.json")).unwrap(),
            "archives/WFS-a"
        );
    }

    #[test]
    fn an_archive_rewrites_through_one_scratch_spare_after_the_journal_holds_them() {
        use crate::session::archive::ArchiveWrites;
        let tmp = tempfile::tempdir().unwrap();
        let (active, archives) = (tmp.path().join("active"), tmp.path().join("archives"));
        let a = active.join("WFS-a");
        let spares = tmp.path().join("spares/WFS-a");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&archives).unwrap();
        let mut txn = SessionTxn::new(&a).with_spares(&spares);
        let docs = ["1/t.json", "2/t.json", "r.md"];
        txn.commit(
            docs.iter()
                .map(|d| Document::new(a.join(d), "active/WFS-a", Durability::Durable))
                .collect(),
        )
        .unwrap();
        let b = archives.join("WFS-a");
        std::fs::rename(&a, &b).unwrap();
        let old: Vec<u64> = docs.iter().map(|d| inode(&b.join(d))).collect();
        for d in docs {
            txn.write(&b.join(d), b"archives/WFS-a").unwrap();
            assert_eq!(
                std::fs::read_to_string(b.join(d)).unwrap(),
                "active/WFS-a",
                "nothing is put in place before the journal holds it"
            );
        }
        txn.settle(&b).unwrap();
        let records = journal_records(&b);
        let journal::Record::Write(files) = &records.last().unwrap().1 else {
            panic!("{records:?}")
        };
        assert_eq!(files.len(), 3);
        assert!(
            files.iter().all(|(_, c)| c == b"archives/WFS-a"),
            "{files:?}"
        );
        for d in docs {
            assert_eq!(
                std::fs::read_to_string(b.join(d)).unwrap(),
                "archives/WFS-a"
            );
        }
        // Each rewrite took the inode the one before gave away: one
        // scratch file made, none freed.
        assert_eq!(inode(&b.join(docs[1])), old[0]);
        assert_eq!(inode(&b.join(docs[2])), old[1]);
        assert_eq!(inode(&spares.join(SCRATCH)), old[2]);
        assert_eq!(
            std::fs::read_to_string(spares.join(SCRATCH)).unwrap(),
            "active/WFS-a"
        );
        assert_eq!(names(&b.join("1")), ["t.json"], "no temp left");
        drop(txn);
        assert!(!spares.exists());
    }

    #[test]
    fn only_a_file_as_this_process_wrote_it_is_vouched_for() {
        use crate::session::archive::ArchiveWrites;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(&dir).unwrap();
        let mut txn = SessionTxn::new(&dir);
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        txn.commit(vec![
            Document::new(&a, "{}", Durability::Durable),
            Document::new(&b, "{}", Durability::State),
        ])
        .unwrap();
        // Keys taken right after the write vouch for nothing yet: read.
        assert!(txn.wrote(&a) && txn.wrote(&b));
        assert!(!txn.wrote(&dir.join("c.json")), "never written");
        // Rewritten by someone else, same size.
        std::fs::write(&a, "[]").unwrap();
        assert!(!txn.wrote(&a));
        // The same bytes again: what this process wrote, valid as written.
        std::fs::write(&a, "{}").unwrap();
        assert!(txn.wrote(&a));
        std::fs::remove_file(&b).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(!txn.wrote(&b), "a link in its place");
    }

    #[test]
    fn moving_the_session_keeps_the_copies() {
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
        assert_eq!(txn.written_copy(&b.join("s.json")), Some(&b"s"[..]));
        txn.check_present().unwrap();
    }
}
