//! Writes that never go through a link (DESIGN.md §11.3).
//!
//! An agent runs with the user's rights in the project: it can replace a
//! file wfx will write next, or a directory on the way to it, with a
//! symlink (or a hard link) to something outside the project. Every write,
//! restore and rename wfx makes inside the project, the session and its
//! cache goes through here, so it lands on a regular file or directory of
//! its own:
//!
//! - every directory on the way below the project root must be a real
//!   directory: a symlink there is removed and a directory made in its
//!   place ([`real_dir`]), except the links that were already there when
//!   wfx started (a person's own setup, e.g. `.workflow` kept on another
//!   disk: [`trust_links_under`]);
//! - the file itself is never opened to be overwritten: a new inode is
//!   made (unlink, then `O_CREAT | O_EXCL | O_NOFOLLOW`) or a temp file is
//!   renamed over it, which replaces a link instead of following it.
//!
//! Agents' processes have all ended when wfx writes (their process group
//! and every escaped descendant are ended with the step), so checking and
//! then writing cannot race with them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Links that were there when wfx started, as `(link, target)`: a
/// person's setup, which wfx goes through instead of replacing.
static TRUSTED_LINKS: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

/// Roots below which every directory on the way is checked.
static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Check every write below `root` (the project) and trust the links that
/// are there now among `names` (relative paths, e.g. `.workflow`,
/// `.workflow/active`): they are the person's. Called when wfx starts
/// with a project.
pub fn trust_links_under(root: &Path, names: &[&str]) {
    let mut roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    if roots.iter().any(|r| r == root) {
        // Only what was there the first time: a link an agent makes
        // later in the run is not a person's setup.
        return;
    }
    roots.push(root.to_path_buf());
    drop(roots);
    let mut trusted = TRUSTED_LINKS.lock().unwrap_or_else(|e| e.into_inner());
    for name in names {
        let link = root.join(name);
        if let Ok(target) = std::fs::read_link(&link)
            && !trusted.iter().any(|(l, _)| *l == link)
        {
            trusted.push((link, target));
        }
    }
}

fn is_trusted_link(path: &Path) -> bool {
    let trusted = TRUSTED_LINKS.lock().unwrap_or_else(|e| e.into_inner());
    trusted
        .iter()
        .any(|(link, target)| link == path && std::fs::read_link(path).is_ok_and(|t| t == *target))
}

/// The checked root `path` lies under (the longest), if any.
fn root_of(path: &Path) -> Option<PathBuf> {
    let roots = ROOTS.lock().unwrap_or_else(|e| e.into_inner());
    roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .cloned()
}

/// Children started and ended by this process (agents, test runs, hooks):
/// while none runs and none has run since a directory was checked, no one
/// but wfx can have swapped a directory on its way for a link (see the
/// module docs), so [`real_dir`] need not walk it again.
static CHILDREN_STARTED: AtomicU64 = AtomicU64::new(0);
static CHILDREN_ENDED: AtomicU64 = AtomicU64::new(0);

/// Directories [`real_dir`] checked below a root, with the count of
/// children started when the check began: valid while that count has not
/// moved and no child runs.
static CHECKED: Mutex<Vec<(PathBuf, u64)>> = Mutex::new(Vec::new());

/// A child process (which may be an agent, or run one) runs from this
/// value's making until its drop, after the child and everything it left
/// have ended: directories checked before or meanwhile are checked again.
pub struct ChildRuns(());

impl ChildRuns {
    pub fn start() -> ChildRuns {
        CHILDREN_STARTED.fetch_add(1, Ordering::SeqCst);
        ChildRuns(())
    }
}

impl Drop for ChildRuns {
    fn drop(&mut self) {
        CHILDREN_ENDED.fetch_add(1, Ordering::SeqCst);
    }
}

/// The count of children started, when no child runs now.
fn quiet_epoch() -> Option<u64> {
    let started = CHILDREN_STARTED.load(Ordering::SeqCst);
    (CHILDREN_ENDED.load(Ordering::SeqCst) == started).then_some(started)
}

/// How much of `dir` [`real_dir`] need not walk again: all of it (`dir`
/// or a directory below it was walked), the part that was walked, or
/// nothing, when a child has run since or runs now. What is skipped must
/// still be a directory (not a link): wfx itself makes no links, and its
/// own removals (an archived session) show as a missing directory.
fn checked_lately(dir: &Path) -> Option<PathBuf> {
    let epoch = quiet_epoch()?;
    let checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    let walked = checked
        .iter()
        .filter(|(_, e)| *e == epoch)
        .map(|(d, _)| d.as_path())
        .filter(|d| below(d, dir) || below(dir, d))
        .max_by_key(|d| d.as_os_str().len().min(dir.as_os_str().len()))?;
    let walked = if below(walked, dir) { dir } else { walked }.to_path_buf();
    drop(checked);
    std::fs::symlink_metadata(&walked)
        .is_ok_and(|m| m.is_dir())
        .then_some(walked)
}

/// Whether `path` is `dir` or below it, spelled alike (wfx builds both
/// the same way; a path spelled otherwise is only walked again). Bytes,
/// not components: this runs for every write.
fn below(path: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (path, dir) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// Remember that `dir` was walked, from a walk begun at `epoch`.
fn remember_checked(dir: &Path, epoch: Option<u64>) {
    let Some(epoch) = epoch.filter(|&e| quiet_epoch() == Some(e)) else {
        return;
    };
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    checked.retain(|(_, e)| *e == epoch);
    if !checked
        .iter()
        .any(|(d, _)| d.as_os_str() == dir.as_os_str())
    {
        checked.push((dir.to_path_buf(), epoch));
    }
}

/// Make `dir` and its parents exist as real directories: below a checked
/// root, a symlink (or a file) on the way is removed and a directory made
/// in its place. Returns the links that were replaced (an agent's edit,
/// for the caller to record).
pub fn real_dir(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut replaced = Vec::new();
    let Some(root) = root_of(dir) else {
        std::fs::create_dir_all(dir)?;
        return Ok(replaced);
    };
    let epoch = quiet_epoch();
    let mut at = match checked_lately(dir).filter(|w| below(w, &root)) {
        Some(walked) if walked.as_os_str() == dir.as_os_str() => return Ok(replaced),
        Some(walked) => walked,
        None => root,
    };
    let rel = dir.strip_prefix(&at).unwrap_or(Path::new(""));
    for part in rel.components() {
        match part {
            Component::Normal(name) => at.push(name),
            // Paths are built by wfx; `..` would leave the root.
            _ => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{}: not a plain path below the project", dir.display()),
                ));
            }
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() && is_trusted_link(&at) => {
                if !at.is_dir() {
                    std::fs::create_dir_all(&at)?;
                }
            }
            Ok(meta) => {
                if meta.file_type().is_symlink() {
                    replaced.push(at.clone());
                }
                std::fs::remove_file(&at)?;
                std::fs::create_dir(&at)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(&at)?,
            Err(e) => return Err(e),
        }
    }
    remember_checked(dir, epoch);
    Ok(replaced)
}

/// The parent of `path` as a real directory (see [`real_dir`]).
pub fn real_parent(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => real_dir(dir),
        _ => Ok(Vec::new()),
    }
}

/// A new, empty regular file at `path` with `mode`, whatever was there
/// before (a file, a symlink, a hard link to something else) unlinked
/// first: what was there is never written through.
pub fn create(path: &Path, mode: u32) -> std::io::Result<File> {
    real_parent(path)?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{} is a directory", path.display()),
            ));
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // Readable too, for a log kept to a size cap (see [`read_write`]).
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// `path` opened to append: only when it is a regular file of its own
/// (one link, not a symlink); otherwise a new file replaces it.
pub fn append(path: &Path) -> std::io::Result<File> {
    reopen(path, OpenOptions::new().append(true))
}

/// `path` opened to read and write anywhere (a log kept to a size cap),
/// under the conditions of [`append`].
pub fn read_write(path: &Path) -> std::io::Result<File> {
    reopen(path, OpenOptions::new().read(true).write(true))
}

/// `path` opened with `options` when it is a regular file of its own,
/// else a new file (opened with the same access) in its place.
fn reopen(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    use std::os::unix::fs::MetadataExt;
    real_parent(path)?;
    options.custom_flags(libc::O_NOFOLLOW);
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_file()
        && meta.nlink() == 1
    {
        let file = options.open(path)?;
        // Still the file that was checked.
        if file.metadata()?.ino() == meta.ino() {
            return Ok(file);
        }
    }
    create(path, 0o644)
}

/// Write `bytes` as a new file at `path` (see [`create`]).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = create(path, 0o644)?;
    file.write_all(bytes)
}

/// Replace the bytes of `path`, keeping its inode when it is a regular
/// file of its own (see [`read_write`]): on ext4 a new inode costs far
/// more than a rewrite after recent deletions. Not atomic: for scratch
/// data a torn write only makes unreadable.
pub fn overwrite(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = read_write(path)?;
    file.set_len(0)?;
    file.write_all(bytes)
}

/// What tells a file is as wfx last saw it without reading it: device,
/// inode, size, mode, mtime and ctime, and when the key was taken. The one
/// key of every "known without reading" cache (the repository guard's
/// reads, the session copies, the head guard's copies, the sealed checkout).
///
/// **The rule** ([`StatKey::vouches_for`]): a key proves the file unchanged
/// only when it was *settled* when taken, i.e. `ctime + grain < taken`.
///
/// Why that is enough: no process can set a ctime; every write, truncate,
/// `utimensat`, `chmod`, link count change or rename sets the inode's ctime
/// to the kernel's clock then, and a new inode in the file's place changes
/// `(dev, ino)`. That clock is not the fine one wfx reads for `taken`: it
/// lags it by up to one scheduler tick (the kernel's "coarse" clock, ≤ 10
/// ms at HZ=100, the slowest Linux offers; kernels with multigrain
/// timestamps stamp finer), and the file system then truncates the stamp to
/// its own granularity `G` (1 ns on ext4, xfs, btrfs, tmpfs; 10 ms for
/// exFAT; 1 s for ext4 with 128-byte inodes or HFS+; 2 s for FAT). So a
/// change made at or after `taken` gets `ctime' > taken − tick − G`. With
/// `grain ≥ tick + G` and `ctime + grain < taken`, `ctime' > ctime`: any
/// change after the key was taken changes the key. `taken` is read before
/// the `stat` (see [`StatKey::at`], [`StatKey::taken_at`]), so "after the
/// key" includes the moment between the two.
///
/// `grain` is [`FINE_GRAIN_NS`] (50 ms: a 10 ms tick plus exFAT's 10 ms,
/// with room for a stat made a little after the clock read, as
/// [`StatKey::of`] does) when the ctime has nanoseconds, and
/// [`COARSE_GRAIN_NS`] (2 s + 50 ms) when they are 0, which is how a file
/// system with 1-s or 2-s stamps shows (a fine stamp is a round second once
/// in 10⁹, then merely read again).
///
/// A key taken while the file was *recent* (`ctime + grain ≥ taken`: just
/// written, by wfx itself too) proves nothing: a rewrite within the same
/// grain, same size, mtime set back with `utimensat`, gives the same key.
/// The caller reads the file, and a key taken again later (before that
/// read) is the one kept. What the rule assumes: the clock is not set back
/// (root only), and on a network file system the server's clock, which
/// stamps the ctime, is within `grain` of this machine's.
///
/// Equality compares the file's facts, not `taken`: two keys of an
/// unchanged file taken at different times are equal; whether an equal key
/// *proves* the file unchanged is [`StatKey::vouches_for`].
#[derive(Debug, Clone, Copy)]
pub struct StatKey {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mode: u32,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
    /// The clock (seconds, nanoseconds since the epoch) when the key was
    /// taken, read before the `stat`.
    pub taken: (i64, i64),
}

/// A map from paths wfx built (all joined onto one root, so two names of
/// one file have the same bytes) keyed by the path's bytes: `Path`'s own
/// `Hash` parses components and cost ~2k instructions a lookup, most of the
/// session copies' and the head guard's lookups (issue #30).
pub type PathMap<V> = std::collections::HashMap<std::ffi::OsString, V>;

/// How far behind the fine clock a nanosecond ctime may be (see [`StatKey`]).
pub const FINE_GRAIN_NS: i128 = 50_000_000;
/// The same for a ctime without nanoseconds (1-s or 2-s stamps).
pub const COARSE_GRAIN_NS: i128 = 2_000_000_000 + FINE_GRAIN_NS;

/// The wall clock now, as (seconds, nanoseconds) since the epoch: what a
/// ctime is stamped from.
pub fn clock() -> (i64, i64) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, i64::from(d.subsec_nanos()))
}

fn nanos((secs, ns): (i64, i64)) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(ns)
}

impl PartialEq for StatKey {
    fn eq(&self, other: &StatKey) -> bool {
        (
            self.dev, self.ino, self.size, self.mode, self.mtime, self.ctime,
        ) == (
            other.dev,
            other.ino,
            other.size,
            other.mode,
            other.mtime,
            other.ctime,
        )
    }
}

impl Eq for StatKey {}

impl StatKey {
    /// The key of `m`, from a `stat` made after the clock read `taken`.
    pub fn taken_at(taken: (i64, i64), m: &std::fs::Metadata) -> StatKey {
        use std::os::unix::fs::MetadataExt;
        StatKey {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            taken,
        }
    }

    /// The key of `m`, a `stat` just made (the clock is read now, after
    /// it: the grain's spare covers the moment between).
    pub fn of(m: &std::fs::Metadata) -> StatKey {
        Self::taken_at(clock(), m)
    }

    /// The key of the file at `path` now (not following a last symlink).
    pub fn at(path: &Path) -> Option<StatKey> {
        let taken = clock();
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| Self::taken_at(taken, &m))
    }

    /// How far the ctime may lag the clock (see [`StatKey`]).
    fn grain_ns(&self) -> i128 {
        if self.ctime.1 == 0 {
            COARSE_GRAIN_NS
        } else {
            FINE_GRAIN_NS
        }
    }

    /// Whether any change after this key was taken changes it: the file's
    /// last change was more than a grain before (see [`StatKey`]).
    pub fn settled(&self) -> bool {
        nanos(self.ctime) + self.grain_ns() < nanos(self.taken)
    }

    /// Whether `now`, a key of the same path taken later, proves the file
    /// unchanged since this key was taken: the one rule.
    pub fn vouches_for(&self, now: &StatKey) -> bool {
        self.settled() && self == now
    }

    /// Whether `m`, a `stat` just made, changed too recently for its key
    /// to show a later change (see [`StatKey::settled`]).
    pub fn recent(m: &std::fs::Metadata) -> bool {
        !Self::of(m).settled()
    }
}

/// Whether `path` itself is a symlink.
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Set `path`'s mtime to `to`, as an agent does to hide a same-size
/// rewrite (and as tests make files look old): the one place tests do it.
#[cfg(test)]
pub(crate) fn set_mtime(path: &Path, to: std::time::SystemTime) {
    File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(to))
        .unwrap_or_else(|e| panic!("set the mtime of {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("proj");
        std::fs::create_dir(&root).unwrap();
        trust_links_under(&root, &[]);
        (tmp, root)
    }

    const MS: i64 = 1_000_000;

    /// A key of a file last changed at `ctime`, taken at `taken`.
    fn key(ctime: (i64, i64), taken: (i64, i64)) -> StatKey {
        StatKey {
            dev: 1,
            ino: 7,
            size: 14,
            mode: 0o100644,
            mtime: ctime,
            ctime,
            taken,
        }
    }

    #[test]
    fn a_key_vouches_only_when_the_file_was_settled_as_it_was_taken() {
        let fine = (1_000, 123_456_789);
        let coarse = (1_000, 0);
        // (ctime, taken, settled)
        let table = [
            // Fine stamps: 50 ms.
            (fine, (1_000, 123_456_789), false),
            (fine, (1_000, 123_456_789 + 10 * MS), false),
            (fine, (1_000, 123_456_789 + 50 * MS), false),
            (fine, (1_000, 123_456_789 + 50 * MS + 1), true),
            (fine, (1_002, 0), true),
            // Coarse stamps (no nanoseconds: 1-s or 2-s file systems).
            (coarse, (1_000, 500 * MS), false),
            (coarse, (1_001, 999 * MS), false),
            (coarse, (1_002, 50 * MS), false),
            (coarse, (1_002, 50 * MS + 1), true),
            // A clock behind the ctime (set back, another machine's).
            (fine, (999, 0), false),
        ];
        for (ctime, taken, settled) in table {
            let k = key(ctime, taken);
            assert_eq!(k.settled(), settled, "ctime {ctime:?} taken {taken:?}");
            // An equal key taken later vouches exactly when it was settled.
            let later = key(ctime, (taken.0 + 100, 0));
            assert_eq!(k.vouches_for(&later), settled, "{ctime:?} {taken:?}");
        }
    }

    #[test]
    fn a_settled_key_does_not_vouch_for_a_changed_file() {
        let kept = key((1_000, 123_456_789), (1_010, 0));
        assert!(kept.vouches_for(&key((1_000, 123_456_789), (1_020, 0))));
        let changed = [
            // Same size, mtime set back: the ctime is the write's.
            StatKey {
                ctime: (1_015, 4),
                ..kept
            },
            // Another inode put in its place (same size, times copied).
            StatKey { ino: 8, ..kept },
            StatKey { dev: 2, ..kept },
            // chmod +x.
            StatKey {
                mode: 0o100755,
                ..kept
            },
            StatKey { size: 15, ..kept },
            StatKey {
                mtime: (1_015, 0),
                ..kept
            },
        ];
        for now in changed {
            assert!(!kept.vouches_for(&now), "{now:?}");
        }
    }

    /// The reasoning of [`StatKey`], checked on a model of the kernel: a
    /// change at or after the key was taken is stamped from a clock up to
    /// one tick behind, truncated to the file system's granularity; a key
    /// that was settled never has that stamp.
    #[test]
    fn no_change_after_a_settled_key_keeps_its_ctime() {
        const S: i128 = 1_000_000_000;
        let stamp = |t: i128, lag: i128, gran: i128| {
            let c = (t - lag).div_euclid(gran) * gran;
            ((c.div_euclid(S)) as i64, (c.rem_euclid(S)) as i64)
        };
        let mut settled_seen = 0;
        for gran in [1, 1_000, 10 * MS as i128, S, 2 * S] {
            for lag in [0, 4 * MS as i128, 10 * MS as i128] {
                for written in [0, 3 * MS as i128, 999 * MS as i128, S + 7] {
                    let t0 = 5_000 * S + 123_456_789 + written;
                    let ctime = stamp(t0, lag, gran);
                    for after in [0, MS as i128, 30 * MS as i128, 60 * MS as i128, S, 3 * S] {
                        let taken = t0 + after;
                        let k = key(ctime, ((taken / S) as i64, (taken % S) as i64));
                        if !k.settled() {
                            continue;
                        }
                        settled_seen += 1;
                        for change in [0, 1, MS as i128, 10 * MS as i128, S] {
                            let c = stamp(taken + change, lag, gran);
                            assert_ne!(c, ctime, "gran {gran} lag {lag} after {after}");
                        }
                    }
                }
            }
        }
        assert!(settled_seen > 0);
    }

    #[test]
    fn a_file_just_written_has_a_recent_key() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a");
        std::fs::write(&f, "x").unwrap();
        let k = StatKey::at(&f).unwrap();
        assert!(!k.settled());
        assert!(!k.vouches_for(&StatKey::at(&f).unwrap()));
        assert!(StatKey::recent(&std::fs::symlink_metadata(&f).unwrap()));
    }

    #[test]
    fn a_link_on_the_way_is_replaced_and_the_outside_untouched() {
        let (tmp, root) = project();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("state.json"), "the user's").unwrap();
        std::fs::create_dir_all(root.join(".workflow/active")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".workflow/active/WFS-a")).unwrap();
        let file = root.join(".workflow/active/WFS-a/state.json");
        let replaced = real_parent(&file).unwrap();
        assert_eq!(replaced, vec![root.join(".workflow/active/WFS-a")]);
        write(&file, b"wfx's").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.join("state.json")).unwrap(),
            "the user's"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "wfx's");
    }

    #[test]
    fn a_file_that_is_a_link_or_a_hard_link_is_replaced_not_written_through() {
        let (tmp, root) = project();
        let victim = tmp.path().join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let log = root.join("run.log");
        std::os::unix::fs::symlink(&victim, &log).unwrap();
        write(&log, b"log").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(!is_link(&log));
        // A hard link (same filesystem).
        std::fs::remove_file(&log).unwrap();
        std::fs::hard_link(&victim, &log).unwrap();
        let mut f = append(&log).unwrap();
        f.write_all(b"more").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "more");
        // A file of its own is appended to.
        let mut f = append(&log).unwrap();
        f.write_all(b"+").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "more+");
    }

    /// A hostile agent: between two writes of wfx into the same session
    /// directory it moves a directory on the way (the leaf, or one of its
    /// parents) outside, with all below it, and leaves a link to it in its
    /// place. Remembered walks must not hide it.
    #[test]
    fn a_directory_swapped_for_a_link_by_a_child_is_replaced_though_walked_before() {
        let (tmp, root) = project();
        let step = root.join(".workflow/active/WFS-a/.process/step-01");
        let attempt = step.join("attempt-1");
        let swap = |dir: &Path, n: usize| {
            let _agent = ChildRuns::start();
            let outside = tmp.path().join(format!("outside-{n}"));
            std::fs::rename(dir, &outside).unwrap();
            std::os::unix::fs::symlink(&outside, dir).unwrap();
            outside
        };
        let swapped = [
            root.join(".workflow/active/WFS-a"),
            step.clone(),
            attempt.clone(),
        ];
        for (n, swapped) in swapped.iter().enumerate() {
            assert!(real_dir(&attempt).unwrap().is_empty());
            assert!(real_dir(&attempt).unwrap().is_empty());
            let outside = swap(swapped, 2 * n);
            assert_eq!(real_dir(&attempt).unwrap(), vec![swapped.clone()]);
            assert!(!is_link(swapped) && attempt.is_dir());
            // A walk of a directory above is no excuse either.
            assert!(real_dir(&step.join("attempt-2")).unwrap().is_empty());
            let outside2 = swap(swapped, 2 * n + 1);
            write(&attempt.join("x.json"), b"{}").unwrap();
            assert!(!is_link(swapped));
            for o in [outside, outside2] {
                let written = walkdir::WalkDir::new(&o)
                    .into_iter()
                    .filter(|e| e.as_ref().unwrap().file_type().is_file())
                    .count();
                assert_eq!(written, 0, "{}", o.display());
            }
            std::fs::remove_file(attempt.join("x.json")).unwrap();
        }
    }

    #[test]
    fn below_is_a_whole_name_prefix() {
        let p = |s: &str| PathBuf::from(s);
        assert!(below(&p("/r/a"), &p("/r/a")));
        assert!(below(&p("/r/a/b"), &p("/r/a")));
        assert!(!below(&p("/r/ab"), &p("/r/a")));
        assert!(!below(&p("/r"), &p("/r/a")));
    }

    /// A child that is still running can change anything at any time:
    /// nothing walked meanwhile is taken as walked.
    #[test]
    fn nothing_is_remembered_while_a_child_runs() {
        let (tmp, root) = project();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let up = root.join(".workflow/active/WFS-b");
        let dir = up.join(".process");
        std::fs::create_dir_all(outside.join(".process")).unwrap();
        let agent = ChildRuns::start();
        assert!(real_dir(&dir).unwrap().is_empty());
        assert!(real_dir(&dir).unwrap().is_empty());
        std::fs::remove_dir_all(&up).unwrap();
        std::os::unix::fs::symlink(&outside, &up).unwrap();
        assert_eq!(real_dir(&dir).unwrap(), vec![up.clone()]);
        // Walked while it ran; it swaps again before it ends.
        std::fs::remove_dir_all(&up).unwrap();
        std::os::unix::fs::symlink(&outside, &up).unwrap();
        drop(agent);
        assert_eq!(real_dir(&dir).unwrap(), vec![up.clone()]);
    }

    /// wfx's own removals (an archived session, a cleared step) are seen:
    /// the directory is made again, as without the memory of walks.
    #[test]
    fn a_walked_directory_wfx_removed_is_made_again() {
        let (_tmp, root) = project();
        let dir = root.join(".workflow/active/WFS-c/.process/step-01");
        real_dir(&dir).unwrap();
        std::fs::remove_dir_all(root.join(".workflow/active/WFS-c")).unwrap();
        real_dir(&dir).unwrap();
        assert!(dir.is_dir());
        std::fs::remove_dir_all(root.join(".workflow/active/WFS-c/.process")).unwrap();
        real_dir(&dir.join("attempt-1")).unwrap();
        assert!(dir.join("attempt-1").is_dir());
        // A file wfx left where the directory was is replaced, as before.
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::write(&dir, "x").unwrap();
        real_dir(&dir).unwrap();
        assert!(dir.is_dir());
    }

    #[test]
    fn links_there_at_start_are_the_persons_and_are_gone_through() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("proj2");
        let elsewhere = tmp.path().join("disk/workflow");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".workflow")).unwrap();
        trust_links_under(&root, &[".workflow"]);
        let file = root.join(".workflow/active/WFS-a/x.json");
        assert!(real_parent(&file).unwrap().is_empty());
        write(&file, b"{}").unwrap();
        assert!(elsewhere.join("active/WFS-a/x.json").is_file());
        assert!(is_link(&root.join(".workflow")));
        // Pointed elsewhere later (by an agent): no longer trusted.
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::remove_file(root.join(".workflow")).unwrap();
        std::os::unix::fs::symlink(&other, root.join(".workflow")).unwrap();
        assert_eq!(real_parent(&file).unwrap(), vec![root.join(".workflow")]);
        assert!(!is_link(&root.join(".workflow")));
        assert_eq!(std::fs::read_dir(&other).unwrap().count(), 0);
    }
}
