//! The session's write-ahead journal: one durable sync per step (DESIGN.md
//! §10.1, issue #30).
//!
//! [`super::txn::SessionTxn`] appends everything a step writes to
//! `.process/wfx.journal` as one record and makes it durable with one
//! `fdatasync`; only then are the documents put in their places, without
//! an fsync each. After a crash or a power loss, [`replay_journal`] (called
//! under the session's lock when a run opens the session) writes the
//! records again, in order, and cuts off a torn one (short, or its checksum
//! does not match): the step is done whole or not at all.
//!
//! A run that ends appends an *applied* mark naming the boot it ran in. As
//! long as the machine has not restarted, what the records wrote is in the
//! page cache whether or not it reached the disk, so the records before the
//! mark are not written again (a file written after them, outside the
//! journal, stays as it is). After a restart (another boot id) every record
//! is written again. The journal is emptied at a checkpoint: the files it
//! names and their directories are fsynced together, then it is truncated
//! (before the session is archived, and when it passes [`LIMIT`]).
//!
//! The file may end in zeros after its last record: it grows by whole
//! [`GROWTH`] steps of zeros that later records overwrite. Zeros end the
//! records as a torn record does; any other bytes after the last whole
//! record (a record torn by a kill or a power loss) are cut off when the
//! journal is next opened, so a record is only ever written over zeros.
//!
//! A record: `WFXJ`, its kind (1 a step's writes, 2 the applied mark), three
//! zero bytes, its sequence number and its payload's length (u64 LE each),
//! the payload, and an FNV-1a checksum (u64 LE) of all that. Each record's
//! number is the one before plus one. A write's payload: per file, the
//! path's length (u32 LE), the path relative to the session directory, the
//! content's length (u64 LE), the content. Paths never leave the session
//! directory: a record naming an absolute path or `..` is treated as torn.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::fsx::StatKey;

/// The journal inside a session directory.
pub const JOURNAL: &str = ".process/wfx.journal";

/// A journal longer than this is checkpointed after the step that made it so.
pub const LIMIT: u64 = 8 << 20;

/// The journal grows by zeros in steps of this many bytes, written with
/// the record that needs them: a later record is written over zeros
/// already on the disk, so its `fdatasync` writes data blocks only, not
/// the file's size and block map as an append does (measured on ext4:
/// about a third less per sync for a step's ~12 KiB record).
const GROWTH: u64 = 64 << 10;

const MAGIC: &[u8; 4] = b"WFXJ";
const HEADER: usize = 24;
const WRITE: u8 = 1;
const APPLIED: u8 = 2;

pub fn journal_path(session_dir: &Path) -> PathBuf {
    session_dir.join(JOURNAL)
}

/// One record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A step's files: (path relative to the session, content).
    Write(Vec<(String, Vec<u8>)>),
    /// The records before were applied in the boot named.
    Applied(String),
}

/// The whole records of a journal and where the last one ends.
#[derive(Debug, Default)]
pub struct Decoded {
    pub records: Vec<(u64, Record)>,
    /// Bytes up to the end of the last whole record.
    pub valid_len: u64,
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn encode(kind: u8, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len() + 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[kind, 0, 0, 0]);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = fnv1a(&[&out]);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A write record's payload.
pub fn write_payload<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<u8> {
    let mut out = Vec::new();
    for (path, bytes) in files {
        out.extend_from_slice(&(path.len() as u32).to_le_bytes());
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// A relative path that stays inside the session directory.
fn confined(path: &str) -> bool {
    !path.is_empty()
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

fn parse_write(mut p: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    while !p.is_empty() {
        let n = u32::from_le_bytes(p.get(..4)?.try_into().ok()?) as usize;
        let path = std::str::from_utf8(p.get(4..4 + n)?).ok()?.to_string();
        p = &p[4 + n..];
        let len = usize::try_from(u64::from_le_bytes(p.get(..8)?.try_into().ok()?)).ok()?;
        let bytes = p.get(8..8usize.checked_add(len)?)?.to_vec();
        p = &p[8 + len..];
        if !confined(&path) {
            return None;
        }
        files.push((path, bytes));
    }
    Some(files)
}

/// The whole records of `bytes`, up to the first torn or foreign one.
pub fn decode(bytes: &[u8]) -> Decoded {
    let mut out = Decoded::default();
    let mut at = 0usize;
    while let Some(head) = bytes.get(at..at + HEADER) {
        if &head[..4] != MAGIC || head[5..8] != [0, 0, 0] {
            break;
        }
        let kind = head[4];
        let seq = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
        let Ok(len) = usize::try_from(u64::from_le_bytes(
            head[16..24].try_into().unwrap_or_default(),
        )) else {
            break;
        };
        let Some(end) = (at + HEADER).checked_add(len) else {
            break;
        };
        let (Some(payload), Some(sum)) = (bytes.get(at + HEADER..end), bytes.get(end..end + 8))
        else {
            break;
        };
        if fnv1a(&[&bytes[at..end]]).to_le_bytes() != sum {
            break;
        }
        if out.records.last().is_some_and(|(last, _)| seq != last + 1) {
            break;
        }
        let record = match kind {
            WRITE => parse_write(payload).map(Record::Write),
            APPLIED => std::str::from_utf8(payload)
                .ok()
                .map(|b| Record::Applied(b.to_string())),
            _ => None,
        };
        let Some(record) = record else { break };
        out.records.push((seq, record));
        at = end + 8;
        out.valid_len = at as u64;
    }
    out
}

/// How much of what follows the last whole record is a torn record: up
/// to its last byte that is not a zero of the journal's growth.
fn torn_len(tail: &[u8]) -> u64 {
    tail.iter()
        .rposition(|&b| b != 0)
        .map_or(0, |i| i as u64 + 1)
}

/// This boot of the machine (Linux), `None` where it cannot be told.
/// Read once per process (a run asks when it opens its session and when
/// it marks its journal applied): it cannot change while wfx runs.
pub fn boot_id() -> Option<&'static str> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    })
    .as_deref()
}

/// The records to write again: those after the last mark of `boot`
/// (all of them when there is none, or no boot is known).
fn to_replay<'a>(records: &'a [(u64, Record)], boot: Option<&str>) -> &'a [(u64, Record)] {
    let from = boot
        .and_then(|b| {
            records
                .iter()
                .rposition(|(_, r)| matches!(r, Record::Applied(m) if m == b))
        })
        .map_or(0, |i| i + 1);
    &records[from..]
}

/// The journal file of one session, opened on first use.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Option<File>,
    next_seq: u64,
    /// Bytes of whole records.
    len: u64,
    /// The file's size: `len` and the zeros after it.
    size: u64,
    /// The file as this process last left it: anything else changed it.
    key: Option<StatKey>,
    /// The paths its records name, kept while the file is open.
    names: BTreeSet<String>,
}

impl Journal {
    pub fn new(session_dir: &Path) -> Journal {
        Journal {
            path: journal_path(session_dir),
            file: None,
            next_seq: 1,
            len: 0,
            size: 0,
            key: None,
            names: BTreeSet::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn bytes(&self) -> u64 {
        self.len
    }

    /// The session moved: the journal moved with it. A file still open
    /// that is the one in the new place (the directory was renamed) stays
    /// open, its records known; else (a copy) it is opened there anew.
    pub fn moved_to(&mut self, session_dir: &Path) {
        use std::os::unix::fs::MetadataExt;
        self.path = journal_path(session_dir);
        let same = |f: &File| {
            let (Ok(open), Ok(there)) = (f.metadata(), std::fs::symlink_metadata(&self.path))
            else {
                return false;
            };
            there.is_file() && (open.dev(), open.ino()) == (there.dev(), there.ino())
        };
        if !self.file.as_ref().is_some_and(same) {
            self.file = None;
            self.key = None;
            self.names.clear();
        }
    }

    /// Open the file (not through a link), cut a torn tail and continue
    /// the numbering of the records it holds.
    fn file(&mut self) -> Result<&mut File> {
        if self.file.is_none() {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = self.path.parent().unwrap_or(Path::new("."));
            // A session directory removed while wfx ran is never recreated.
            if !dir.parent().is_some_and(Path::is_dir) {
                return Err(Error::io(
                    &self.path,
                    std::io::Error::from(std::io::ErrorKind::NotFound),
                ));
            }
            crate::fsx::real_dir(dir).map_err(|e| Error::io(dir, e))?;
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&self.path)
                .map_err(|e| Error::io(&self.path, e))?;
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)
                .map_err(|e| Error::io(&self.path, e))?;
            let d = decode(&bytes);
            self.size = bytes.len() as u64;
            if torn_len(&bytes[d.valid_len as usize..]) > 0 {
                f.set_len(d.valid_len)
                    .map_err(|e| Error::io(&self.path, e))?;
                self.size = d.valid_len;
            }
            self.next_seq = d.records.last().map_or(1, |(s, _)| s + 1);
            self.len = d.valid_len;
            self.names = names_of(&d.records).map(str::to_string).collect();
            self.file = Some(f);
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    fn append(&mut self, kind: u8, payload: &[u8], durable: bool) -> Result<()> {
        let path = self.path.clone();
        let at = {
            self.file()?;
            self.len
        };
        let mut record = encode(kind, self.next_seq, payload);
        let end = at + record.len() as u64;
        // Past the zeros: grow by whole steps, zeros written with the record.
        let size = if end > self.size {
            let size = end.div_ceil(GROWTH) * GROWTH;
            record.resize((size - at) as usize, 0);
            size
        } else {
            self.size
        };
        let f = self.file()?;
        f.seek(SeekFrom::Start(at))
            .and_then(|_| f.write_all(&record))
            .map_err(|e| Error::io(&path, e))?;
        if durable {
            f.sync_data().map_err(|e| Error::io(&path, e))?;
        }
        let key = f.metadata().ok().map(|m| StatKey::of(&m));
        self.len = end;
        self.size = size;
        self.next_seq += 1;
        self.key = key;
        Ok(())
    }

    /// Make every record appended so far durable: one `fdatasync` covers
    /// the records of several steps appended unsynced.
    pub fn sync(&mut self) -> Result<()> {
        let path = self.path.clone();
        self.file()?.sync_data().map_err(|e| Error::io(&path, e))
    }

    /// Append a step's files; with `durable`, sync them (the step's one
    /// durable sync).
    pub fn append_write<'a>(
        &mut self,
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        durable: bool,
    ) -> Result<()> {
        let files: Vec<(&str, &[u8])> = files.into_iter().collect();
        self.append(WRITE, &write_payload(files.iter().copied()), durable)?;
        self.names.extend(files.iter().map(|(p, _)| p.to_string()));
        Ok(())
    }

    /// Mark the records so far as applied in this boot (not synced: after
    /// a restart the mark does not count anyway). False when the boot
    /// cannot be told.
    pub fn mark_applied(&mut self) -> Result<bool> {
        if self.len == 0 && self.file.is_none() {
            return Ok(true);
        }
        let Some(boot) = boot_id() else {
            return Ok(false);
        };
        self.append(APPLIED, boot.as_bytes(), false)?;
        Ok(true)
    }

    /// Whether someone other than this process changed the file since it
    /// last wrote it (an agent, during its call). Told by the key's facts
    /// alone: the key, taken right after this process's write, is recent
    /// and does not vouch (see [`StatKey::vouches_for`]), so a rewrite
    /// within one clock grain, same size, mtime set back, is not seen. The
    /// journal keeps no copy of its bytes to read and compare; a forged
    /// journal matters only if wfx is killed before the next checkpoint
    /// empties it.
    pub fn tampered(&self) -> bool {
        match self.key {
            Some(key) => StatKey::at(&self.path) != Some(key),
            None => self.file.is_some() && StatKey::at(&self.path).is_some_and(|k| k.size != 0),
        }
    }

    /// Empty the journal durably (its files are durable: a checkpoint).
    /// A journal that is not a regular file of its own is removed.
    pub fn truncate(&mut self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        let foreign =
            std::fs::symlink_metadata(&self.path).is_ok_and(|m| !m.is_file() || m.nlink() != 1);
        if foreign || self.tampered() {
            let _ = std::fs::remove_file(&self.path);
            self.file = None;
            self.key = None;
            self.len = 0;
            self.size = 0;
            self.names.clear();
            return Ok(());
        }
        if self.file.is_none() && !self.path.exists() {
            return Ok(());
        }
        let path = self.path.clone();
        let f = self.file()?;
        f.set_len(0)
            .and_then(|_| f.sync_data())
            .map_err(|e| Error::io(&path, e))?;
        self.key = f.metadata().ok().map(|m| StatKey::of(&m));
        self.len = 0;
        self.size = 0;
        self.names.clear();
        Ok(())
    }

    /// Replace the journal by one synced record of `files` (the current
    /// content of everything it named): a compaction, made durable with
    /// the journal's directory. Two syncs.
    pub fn replace<'a>(
        &mut self,
        files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<()> {
        self.file()?;
        let record = encode(WRITE, self.next_seq, &write_payload(files));
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut tmp = tempfile::Builder::new()
            .prefix(".wfx.journal.")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| Error::io(&dir, e))?;
        tmp.write_all(&record)
            .and_then(|_| tmp.as_file().sync_data())
            .map_err(|e| Error::io(&self.path, e))?;
        tmp.persist(&self.path)
            .map_err(|e| Error::io(&self.path, e.error))?;
        crate::session::store::sync_dir(&dir);
        self.file = None;
        self.file()?;
        self.key = StatKey::at(&self.path);
        Ok(())
    }

    /// The files the journal names, as paths under `session_dir`: known
    /// while this process has it open and no one else changed it, else
    /// read from the file.
    pub fn named(&self, session_dir: &Path) -> BTreeSet<PathBuf> {
        if self.file.is_some() && !self.tampered() {
            return self.names.iter().map(|p| session_dir.join(p)).collect();
        }
        let bytes = std::fs::read(&self.path).unwrap_or_default();
        named(&decode(&bytes).records, session_dir)
    }
}

/// The paths the write records name, relative to the session directory.
fn names_of(records: &[(u64, Record)]) -> impl Iterator<Item = &str> {
    records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::Write(files) => Some(files),
            Record::Applied(_) => None,
        })
        .flatten()
        .map(|(p, _)| p.as_str())
}

fn named(records: &[(u64, Record)], session_dir: &Path) -> BTreeSet<PathBuf> {
    names_of(records).map(|p| session_dir.join(p)).collect()
}

/// What [`replay_journal`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// Records written again.
    pub records: usize,
    /// Files whose content differed and was written.
    pub files: usize,
    /// Bytes of a torn record cut off.
    pub torn_bytes: u64,
}

/// Finish what a killed run (or one cut by a power loss) made durable in
/// the session's journal: write its records again, cut a torn one (see the
/// module docs). Call under the session's lock, before anything reads the
/// session's files. Idempotent.
pub fn replay_journal(session_dir: &Path) -> Result<Replayed> {
    replay_in_boot(session_dir, boot_id())
}

fn replay_in_boot(session_dir: &Path, boot: Option<&str>) -> Result<Replayed> {
    let path = journal_path(session_dir);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Replayed::default()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    if !meta.is_file() {
        // Not wfx's (a link an agent put there): never read through.
        let _ = std::fs::remove_file(&path);
        return Ok(Replayed::default());
    }
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let d = decode(&bytes);
    let mut done = Replayed {
        torn_bytes: torn_len(&bytes[d.valid_len as usize..]),
        ..Replayed::default()
    };
    // Each file's last version, in the order of those last writes (a
    // step's state after its documents): what applying every record in
    // turn leaves, without writing a file more than once.
    let mut last: std::collections::HashMap<&str, (usize, &[u8])> = Default::default();
    let mut order = 0;
    for (_, record) in to_replay(&d.records, boot) {
        let Record::Write(files) = record else {
            continue;
        };
        done.records += 1;
        for (rel, content) in files {
            last.insert(rel.as_str(), (order, content.as_slice()));
            order += 1;
        }
    }
    let mut last: Vec<(usize, &str, &[u8])> =
        last.into_iter().map(|(p, (o, b))| (o, p, b)).collect();
    last.sort_unstable();
    for (_, rel, content) in last {
        let file = session_dir.join(rel);
        if std::fs::read(&file).is_ok_and(|b| b == content) {
            continue;
        }
        write_in_place(&file, content)?;
        done.files += 1;
    }
    if done.torn_bytes > 0 {
        let mut journal = Journal::new(session_dir);
        journal.file()?; // cuts the torn tail
    }
    Ok(done)
}

/// Empty the journals of archived sessions whose run ended (their last
/// record is an applied mark): replay them (after a restart), fsync the
/// files they name and their directories, truncate them. The archive
/// left them for this later point (see `SessionTxn`'s archive). The
/// number of journals emptied.
pub fn settle_archived(archives: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(archives) else {
        return 0;
    };
    let mut settled = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        let path = journal_path(&dir);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let d = decode(&bytes);
        if !matches!(d.records.last(), Some((_, Record::Applied(_)))) {
            continue; // a run still writing it, or one killed: not ours to settle
        }
        if replay_journal(&dir).is_err() {
            continue;
        }
        let files = named(&d.records, &dir);
        let mut dirs: BTreeSet<PathBuf> = files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        dirs.insert(dir.join(".process"));
        let mut ok = files
            .iter()
            .all(|f| File::open(f).and_then(|f| f.sync_all()).is_ok() || !f.exists());
        for d in &dirs {
            crate::session::store::sync_dir(d);
        }
        let mut journal = Journal::new(&dir);
        ok = ok && journal.truncate().is_ok();
        settled += usize::from(ok);
    }
    settled
}

/// [`replay_journal`] as if in the boot `boot` (tests of a restart).
#[cfg(test)]
pub fn replay_in_boot_for_tests(session_dir: &Path, boot: Option<&str>) -> Replayed {
    replay_in_boot(session_dir, boot).unwrap()
}

/// Replace `path` by `bytes` atomically (temp file and rename; not
/// synced: the journal holds them), through real directories only.
pub fn write_in_place(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::session::store::write_replace_exact(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("WFS-a");
        std::fs::create_dir_all(dir.join(".process")).unwrap();
        (tmp, dir)
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_at_any_byte_is_cut_off() {
        let a = encode(WRITE, 7, &write_payload([("x.json", &b"one"[..])]));
        let b = encode(
            WRITE,
            8,
            &write_payload([("d/y.json", &b"two"[..]), ("s.json", &b""[..])]),
        );
        let whole = [a.clone(), b.clone()].concat();
        let d = decode(&whole);
        assert_eq!(d.valid_len, whole.len() as u64);
        assert_eq!(
            d.records,
            vec![
                (7, Record::Write(vec![("x.json".into(), b"one".to_vec())])),
                (
                    8,
                    Record::Write(vec![
                        ("d/y.json".into(), b"two".to_vec()),
                        ("s.json".into(), Vec::new())
                    ])
                ),
            ]
        );
        for cut in a.len()..whole.len() {
            let d = decode(&whole[..cut]);
            assert_eq!(d.records.len(), 1, "cut at {cut}");
            assert_eq!(d.valid_len, a.len() as u64);
        }
        // A flipped byte anywhere in the second record: torn.
        for i in a.len()..whole.len() {
            let mut bad = whole.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(&bad).records.len(), 1, "byte {i}");
        }
        // A stale record of an older journal behind the new ones: its
        // number does not follow.
        let stale = encode(WRITE, 3, &write_payload([("x.json", &b"old"[..])]));
        assert_eq!(decode(&[whole.clone(), stale].concat()).records.len(), 2);
    }

    #[test]
    fn a_record_naming_a_path_outside_the_session_is_never_replayed() {
        for evil in ["../outside", "/etc/x", "a/../../b", ""] {
            let rec = encode(WRITE, 1, &write_payload([(evil, &b"pwned"[..])]));
            assert!(decode(&rec).records.is_empty(), "{evil}");
        }
        let (tmp, dir) = session();
        let rec = encode(WRITE, 1, &write_payload([("../outside", &b"pwned"[..])]));
        std::fs::write(journal_path(&dir), rec).unwrap();
        replay_journal(&dir).unwrap();
        assert!(!tmp.path().join("outside").exists());
    }

    #[test]
    fn a_crash_between_the_journal_sync_and_the_apply_is_finished_by_replay() {
        let (_tmp, dir) = session();
        let mut j = Journal::new(&dir);
        j.append_write(
            [
                (".task/T.json", &b"task 1"[..]),
                (".process/state.json", &b"state 1"[..]),
            ],
            true,
        )
        .unwrap();
        drop(j); // killed: nothing applied
        let done = replay_in_boot(&dir, Some("boot-1")).unwrap();
        assert_eq!((done.records, done.files), (1, 2));
        assert_eq!(read(&dir.join(".task/T.json")), "task 1");
        assert_eq!(read(&dir.join(".process/state.json")), "state 1");
        // Replay is idempotent: a second one writes nothing.
        let again = replay_in_boot(&dir, Some("boot-1")).unwrap();
        assert_eq!((again.records, again.files), (1, 0));
    }

    #[test]
    fn a_crash_during_the_apply_and_a_torn_next_record_end_at_the_last_whole_step() {
        let (_tmp, dir) = session();
        let mut j = Journal::new(&dir);
        j.append_write([("a.json", &b"a1"[..]), ("state.json", &b"s1"[..])], true)
            .unwrap();
        j.append_write([("a.json", &b"a2"[..]), ("state.json", &b"s2"[..])], true)
            .unwrap();
        // Applied: step 1 whole, step 2 only its first file.
        std::fs::write(dir.join("a.json"), "a2").unwrap();
        std::fs::write(dir.join("state.json"), "s1").unwrap();
        // A third record cut short by the kill (after the last whole
        // record, over the growth's zeros).
        let whole = std::fs::read(journal_path(&dir)).unwrap()[..j.bytes() as usize].to_vec();
        let third = encode(WRITE, 3, &write_payload([("state.json", &b"s3"[..])]));
        std::fs::write(
            journal_path(&dir),
            [whole.clone(), third[..third.len() - 5].to_vec()].concat(),
        )
        .unwrap();
        let done = replay_in_boot(&dir, Some("b")).unwrap();
        assert_eq!(done.torn_bytes, third.len() as u64 - 5);
        assert_eq!(read(&dir.join("a.json")), "a2");
        assert_eq!(read(&dir.join("state.json")), "s2", "step 2 finished");
        assert_eq!(
            std::fs::read(journal_path(&dir)).unwrap(),
            whole,
            "the torn record is cut off"
        );
        // The next run continues the numbering after the cut.
        let mut j = Journal::new(&dir);
        j.append_write([("state.json", &b"s3"[..])], true).unwrap();
        let d = decode(&std::fs::read(journal_path(&dir)).unwrap());
        assert_eq!(d.records.last().unwrap().0, 3);
    }

    #[test]
    fn the_journal_grows_by_zeros_that_later_records_are_written_over() {
        let (_tmp, dir) = session();
        let path = journal_path(&dir);
        let mut j = Journal::new(&dir);
        j.append_write([("a.json", &b"a1"[..])], true).unwrap();
        let first = j.bytes();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), GROWTH);
        j.append_write([("a.json", &b"a2"[..])], true).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            GROWTH,
            "written over the zeros, not appended"
        );
        // Another run opens it: the zeros end the records, nothing is cut,
        // and the numbering goes on right after the last record.
        let mut j = Journal::new(&dir);
        j.append_write([("a.json", &b"a3"[..])], true).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, GROWTH);
        let d = decode(&bytes);
        assert_eq!(
            d.records.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(d.valid_len, j.bytes());
        assert!(j.bytes() > first);
        assert!(bytes[d.valid_len as usize..].iter().all(|&b| b == 0));
        // A record bigger than what is left grows the file by whole steps.
        let big = vec![b'x'; GROWTH as usize + 10];
        j.append_write([("big.log", &big[..])], true).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 * GROWTH);
        assert_eq!(decode(&std::fs::read(&path).unwrap()).records.len(), 4);
        assert_eq!(replay_in_boot(&dir, Some("b")).unwrap().torn_bytes, 0);
        // A checkpoint empties it whole.
        j.truncate().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn a_record_torn_over_the_zeros_is_cut_off_and_the_next_one_follows_the_last_whole() {
        let (_tmp, dir) = session();
        let path = journal_path(&dir);
        let mut j = Journal::new(&dir);
        j.append_write([("s.json", &b"s1"[..])], true).unwrap();
        let whole = j.bytes() as usize;
        drop(j);
        // The kill left the start of record 2 over the zeros.
        let torn = encode(WRITE, 2, &write_payload([("s.json", &b"s2"[..])]));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[whole..whole + torn.len() - 9].copy_from_slice(&torn[..torn.len() - 9]);
        std::fs::write(&path, &bytes).unwrap();
        let done = replay_in_boot(&dir, Some("b")).unwrap();
        assert_eq!(done.records, 1);
        assert_eq!(read(&dir.join("s.json")), "s1");
        assert!(done.torn_bytes > 0 && done.torn_bytes <= torn.len() as u64 - 9);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            whole as u64,
            "cut at the last whole record, zeros and all"
        );
        let mut j = Journal::new(&dir);
        j.append_write([("s.json", &b"s3"[..])], true).unwrap();
        let d = decode(&std::fs::read(&path).unwrap());
        assert_eq!(d.records.last().unwrap().0, 2);
        assert_eq!(d.records.len(), 2);
    }

    #[test]
    fn after_a_clean_end_a_later_write_outside_the_journal_survives_until_a_restart() {
        let (_tmp, dir) = session();
        let mut j = Journal::new(&dir);
        j.append_write([("s.json", &b"journaled"[..])], true)
            .unwrap();
        std::fs::write(dir.join("s.json"), "journaled").unwrap();
        // The run ends: its mark names this boot.
        j.append(APPLIED, b"boot-1", false).unwrap();
        std::fs::write(dir.join("s.json"), "written after, outside").unwrap();
        let done = replay_in_boot(&dir, Some("boot-1")).unwrap();
        assert_eq!(done, Replayed::default());
        assert_eq!(read(&dir.join("s.json")), "written after, outside");
        // After a restart, what only the page cache held may be gone: the
        // journal is written again (as if the run stopped before that write).
        std::fs::write(dir.join("s.json"), "").unwrap();
        let done = replay_in_boot(&dir, Some("boot-2")).unwrap();
        assert_eq!((done.records, done.files), (1, 1));
        assert_eq!(read(&dir.join("s.json")), "journaled");
    }

    #[test]
    fn a_journal_replaced_by_a_link_is_not_followed() {
        let (tmp, dir) = session();
        let target = tmp.path().join("elsewhere");
        std::fs::write(&target, "theirs").unwrap();
        std::os::unix::fs::symlink(&target, journal_path(&dir)).unwrap();
        assert_eq!(replay_journal(&dir).unwrap(), Replayed::default());
        assert!(!journal_path(&dir).exists());
        let mut j = Journal::new(&dir);
        std::os::unix::fs::symlink(&target, journal_path(&dir)).unwrap();
        assert!(j.append_write([("a", &b"b"[..])], true).is_err());
        assert_eq!(read(&target), "theirs");
    }

    #[test]
    fn a_moved_journal_is_written_where_the_session_now_is() {
        let records = |dir: &Path| decode(&std::fs::read(journal_path(dir)).unwrap()).records;
        let (tmp, dir) = session();
        let mut j = Journal::new(&dir);
        j.append_write([("a.json", &b"1"[..])], true).unwrap();
        // Renamed: the open file is the one in the new place, kept.
        let renamed = tmp.path().join("renamed");
        std::fs::rename(&dir, &renamed).unwrap();
        j.moved_to(&renamed);
        assert!(j.file.is_some());
        j.append_write([("b.json", &b"2"[..])], true).unwrap();
        assert_eq!(records(&renamed).len(), 2);
        assert_eq!(
            j.named(&renamed),
            BTreeSet::from([renamed.join("a.json"), renamed.join("b.json")])
        );
        // Copied (another filesystem), the original removed: opened anew
        // in the copy, never written into the removed file.
        let copied = tmp.path().join("copied");
        std::fs::create_dir_all(copied.join(".process")).unwrap();
        std::fs::copy(journal_path(&renamed), journal_path(&copied)).unwrap();
        std::fs::remove_dir_all(&renamed).unwrap();
        j.moved_to(&copied);
        j.append_write([("c.json", &b"3"[..])], true).unwrap();
        let r = records(&copied);
        assert_eq!(r.len(), 3);
        assert_eq!(r[2].0, 3, "numbering continued");
        assert_eq!(j.named(&copied).len(), 3);
    }
}
