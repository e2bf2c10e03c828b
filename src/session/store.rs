//! Atomic, validated file I/O and the per-session lock.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::artifacts::{self, Artifact};
use crate::error::{Error, Problem, Result};

/// Create `dir` and its parents. A session's own files go through the
/// engine's session transaction, which refuses to recreate a session
/// directory that was removed while wfx ran.
/// Below the project, every directory on the way is a real one (a link
/// an agent put there is replaced, never followed: DESIGN.md §11.3).
pub fn create_dirs(dir: &Path) -> Result<()> {
    crate::fsx::real_dir(dir)
        .map(drop)
        .map_err(|e| Error::io(dir, e))
}

/// `.workflow/.cache/` (scratch space: `wfx test` results, run times),
/// created with a `.gitignore` so nothing in it is ever committed. The
/// `.gitignore` is not synced: one that a power loss left empty or short
/// is written again the next time (a sealed run's checkout calls this once
/// per test run, and an fsync each was 2 of the cycle's syncs per attempt).
pub fn ensure_cache_dir(ws: &crate::session::layout::Workspace) -> Result<PathBuf> {
    const IGNORE: &[u8] = b"# wfx test scratch space; never committed\n*\n";
    let cache = ws.cache_dir();
    create_dirs(&cache)?;
    ignore_all(&cache, IGNORE)?;
    Ok(cache)
}

/// Give `dir` a `.gitignore` that ignores everything (`text`, which holds
/// a `*` line), not synced: kept as it is while it still ignores
/// everything (a person may add to it); missing, empty or cut short (a
/// power loss) it is written again, the next time wfx looks.
fn ignore_all(dir: &Path, text: &[u8]) -> Result<()> {
    let ignore = dir.join(".gitignore");
    let ignores_all = |b: &[u8]| b.split(|&c| c == b'\n').any(|l| l == b"*");
    match std::fs::read(&ignore) {
        Ok(b) if ignores_all(&b) => Ok(()),
        Ok(_) => write_replace(&ignore, text),
        Err(_) => write_new(&ignore, text),
    }
}

/// Make the entries of `dir` durable. Best effort, like every directory
/// fsync here: some filesystems refuse fsync on a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// fsync `files` at once, one thread each beyond the first: a journaling
/// filesystem folds concurrent fsyncs into one journal commit, so a step
/// waits for about one flush instead of one per file. Each file says
/// whether its fsync must succeed: a directory that cannot be synced is
/// not an error (as in [`sync_dir`]; some filesystems refuse it).
/// The first error wins.
pub fn sync_together<'a>(files: impl Iterator<Item = ((&'a File, &'a Path), bool)>) -> Result<()> {
    let files: Vec<((&File, &Path), bool)> = files.collect();
    let sync = |((f, p), must): ((&File, &Path), bool)| match f.sync_all() {
        Err(e) if must => Err(Error::io(p, e)),
        _ => Ok(()),
    };
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

/// Make the entries of each of `dirs` durable, the syncs at once (one
/// latency of the disk, not one per directory); best effort, like
/// [`sync_dir`].
pub fn sync_dirs(dirs: &[&Path]) {
    let opened: Vec<(File, &Path)> = dirs
        .iter()
        .filter_map(|d| File::open(d).ok().map(|f| (f, *d)))
        .collect();
    let _ = sync_together(opened.iter().map(|(f, p)| ((f, *p), false)));
}

/// [`write_atomic`], the temp file synced while `work` runs on this
/// thread: put in place once both are done, and only if `work` succeeded
/// (else the temp file is removed and `path` left as it was).
pub fn write_atomic_beside<T>(
    path: &Path,
    bytes: &[u8],
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let tmp = temp_with(path, bytes)?;
    let (out, synced) = std::thread::scope(|s| {
        let file = tmp.as_file();
        let synced = s.spawn(move || file.sync_all());
        let out = work();
        (out, synced.join())
    });
    let out = out?;
    match synced {
        Ok(r) => r.map_err(|e| Error::io(path, e))?,
        Err(_) => return Err(Error::Internal(format!("syncing {}", path.display()))),
    }
    let dir = persist(tmp, path)?;
    sync_dir(dir);
    Ok(out)
}

/// Write `bytes` to `path` atomically: a temp file in the same directory,
/// fsync, rename over the target, fsync the directory (DESIGN.md §3). A
/// crash leaves either the old file or the new one, never a mix. (The
/// steps of a session write through the engine's session transaction,
/// which makes a whole step durable at once.)
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_with(path, bytes)?;
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    let dir = persist(tmp, path)?;
    sync_dir(dir);
    Ok(())
}

/// Replace `path` atomically (temp file + rename) without fsync: for
/// records that a crash may lose because the step that needs them is
/// redone (an agent's prompt file, written again with the call).
pub fn write_replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_with(path, bytes)?;
    persist(tmp, path)?;
    Ok(())
}

/// [`write_replace`] of a file that is usually not there yet (a new
/// session's first files): then it is made in place (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`, 0644 as a replacement gets) — no temp file, no rename,
/// half the system calls; there already (or a link there), it is replaced
/// as [`write_replace`] does. Not atomic: for files whose readers write
/// them again when they are short or empty.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let bytes = crate::redact::redact(bytes);
    if let Some(dir) = path.parent() {
        create_dirs(dir)?;
    }
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path);
    match made {
        Ok(mut file) => {
            file.write_all(&bytes).map_err(|e| Error::io(path, e))?;
            // The mode a replacement gets, whatever the umask.
            file.set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| Error::io(path, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            write_replace_exact(path, &bytes)
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

/// [`write_replace`] of bytes already redacted (the session journal's
/// records, replayed): written exactly as given.
pub fn write_replace_exact(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_exact(path, bytes)?;
    persist(tmp, path)?;
    Ok(())
}

/// A temp file beside `path` holding `bytes` (secrets redacted), with the
/// mode `path` has (else 0644), not yet synced or renamed.
fn temp_with(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    // Secrets never reach an artifact (DESIGN.md §10.2).
    temp_exact(path, &crate::redact::redact(bytes))
}

fn temp_exact(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dirs(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
    // Temp files are created 0600; artifacts are for people and git, so
    // keep the mode of the file being replaced, else the usual 0644 (the
    // mode of a link's target is not the file's).
    let mode = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map_or_else(
            || std::os::unix::fs::PermissionsExt::from_mode(0o644),
            |m| m.permissions(),
        );
    tmp.as_file()
        .set_permissions(mode)
        .map_err(|e| Error::io(path, e))?;
    Ok(tmp)
}

/// Rename the temp file over `path`; returns the directory.
fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> Result<&Path> {
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(path.parent().unwrap_or(Path::new(".")))
}

/// Pretty JSON with a trailing newline: how every JSON artifact is written.
pub fn json_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| Error::Internal(e.to_string()))?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// Pretty JSON with a trailing newline, written atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_atomic(path, &json_bytes(value)?)
}

/// The largest JSON artifact wfx reads (256 MiB). Artifacts are read whole
/// and parsed into memory; a file beyond this is damaged or not an
/// artifact (a session of thousands of iterations stays far below it), so
/// it is refused with a message instead of exhausting memory.
pub const MAX_ARTIFACT_BYTES: u64 = 256 * 1024 * 1024;

/// The problem reported for a file larger than [`MAX_ARTIFACT_BYTES`], or
/// `None` when it is within the limit.
pub fn size_problem(len: u64, shown: &str) -> Option<Problem> {
    (len > MAX_ARTIFACT_BYTES).then(|| Problem {
        file: shown.to_string(),
        pointer: String::new(),
        message: format!(
            "file is {:.1} MiB; wfx reads JSON artifacts of at most {} MiB (is it damaged?)",
            len as f64 / (1024.0 * 1024.0),
            MAX_ARTIFACT_BYTES / (1024 * 1024)
        ),
    })
}

/// Read a file as UTF-8 text; non-UTF-8 content and files larger than
/// [`MAX_ARTIFACT_BYTES`] are invalid-input problems.
pub fn read_text(path: &Path, shown: &str) -> Result<String> {
    let file = fs_err::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if let Some(p) = size_problem(len, shown) {
        return Err(Error::Invalid(vec![p]));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    use std::io::Read;
    file.into_parts()
        .0
        .take(MAX_ARTIFACT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if let Some(p) = size_problem(bytes.len() as u64, shown) {
        return Err(Error::Invalid(vec![p]));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Invalid(vec![Problem {
            file: shown.to_string(),
            pointer: String::new(),
            message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        }])
    })
}

/// Read and validate an artifact. `shown` is the name used in messages
/// (normally the path relative to the project root).
pub fn read_json<T: Artifact>(path: &Path, shown: &str) -> Result<T> {
    let text = read_text(path, shown)?;
    artifacts::parse_artifact::<T>(shown, &text).map_err(Error::Invalid)
}

/// Read an artifact for display only (listings): a plain typed parse, with
/// the full schema validation run only when that parse fails, so the error
/// still names the JSON pointer. Never use this before a write.
pub fn read_json_fast<T: Artifact>(path: &Path, shown: &str) -> Result<T> {
    let text = read_text(path, shown)?;
    match serde_json::from_str(&text) {
        Ok(v) => Ok(v),
        Err(_) => artifacts::parse_artifact::<T>(shown, &text).map_err(Error::Invalid),
    }
}

/// Read an artifact by a typed parse, with the schema compiled and run
/// only when that parse fails or `within_schema` says the document breaks
/// a rule the types do not carry: what the schema accepts and what this
/// accepts are the same when `within_schema` checks every such rule, and
/// every error is the schema's own message. Compiling a schema costs more
/// than most commands' own work (issue #30).
pub fn read_json_typed<T: Artifact>(
    path: &Path,
    shown: &str,
    within_schema: impl FnOnce(&serde_json::Value, &T) -> bool,
) -> Result<T> {
    let text = read_text(path, shown)?;
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
        && let Ok(typed) = T::deserialize(&value)
        && within_schema(&value, &typed)
    {
        return Ok(typed);
    }
    artifacts::parse_artifact::<T>(shown, &text).map_err(Error::Invalid)
}

/// Like [`read_json`], but a missing file is `Ok(None)`.
pub fn read_json_opt<T: Artifact>(path: &Path, shown: &str) -> Result<Option<T>> {
    if !path.exists() {
        return Ok(None);
    }
    read_json(path, shown).map(Some)
}

/// Read, change and write back an artifact. Reading validates first, so a
/// file that fails validation is never overwritten.
pub fn update_json<T: Artifact>(
    path: &Path,
    shown: &str,
    change: impl FnOnce(&mut T),
) -> Result<T> {
    let mut value: T = read_json(path, shown)?;
    change(&mut value);
    write_json(path, &value)?;
    Ok(value)
}

/// What the lock file says about its holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LockInfo {
    pub pid: u32,
    pub since: String,
    /// Start time of the holder (clock ticks after boot): with `pid` it
    /// names the markers of its children (`WFX_STEP`), so a resume after
    /// `kill -9` finds what escaped their group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// Process group of the child the holder was running, if any: a resume
    /// after `kill -9` ends it first.
    #[serde(default)]
    pub child_pgid: Option<i32>,
    /// Start time of that group's leader: the group is ended only while
    /// its leader is this very process (never after pid reuse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_start: Option<u64>,
    /// Process groups of the other children running at the same time
    /// (speculative candidates, DESIGN.md §11.4), with their leaders'
    /// start times: a resume after `kill -9` ends them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_children: Vec<(i32, Option<u64>)>,
}

impl LockInfo {
    /// What a holder that died left to end.
    pub fn dead_run(&self) -> crate::process::DeadRun {
        crate::process::DeadRun {
            pid: self.pid,
            start: self.start,
            child_pgid: self.child_pgid,
            child_start: self.child_start,
        }
    }

    /// The same for each of its other children's groups.
    pub fn more_dead_runs(&self) -> Vec<crate::process::DeadRun> {
        self.more_children
            .iter()
            .map(|&(pgid, start)| crate::process::DeadRun {
                child_pgid: Some(pgid),
                child_start: start,
                ..self.dead_run()
            })
            .collect()
    }
}

/// Open a lock file for reading and writing, never through a symbolic
/// link: a `.lock` that points elsewhere (`ln -sf ~/important .lock`) is
/// refused, so the file it names is never truncated or written.
fn open_lock_file(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refused = || {
        Error::usage(format!(
            "{} is not a regular file (a symbolic link?); wfx does not follow it. Remove it and run again",
            path.display()
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refused()
            } else {
                Error::io(path, fs_err_like(path, e))
            }
        })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(refused());
    }
    Ok(file)
}

/// An `io::Error` whose text names the file as `fs_err` would
/// ("failed to open file `…`: …"), keeping its kind for the exit code.
fn fs_err_like(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(
        e.kind(),
        format!("failed to open file `{}`: {e}", path.display()),
    )
}

/// Exclusive ownership of a session by this process, held with an OS file
/// lock that dies with the process: a lock left by a dead process is free.
#[derive(Debug)]
pub struct SessionLock {
    file: File,
    path: PathBuf,
    info: LockInfo,
    /// How many bytes this holder's record takes in the file (`None`:
    /// not written yet).
    info_len: Option<usize>,
    /// What the previous holder left behind, if it did not release cleanly.
    pub stale: Option<LockInfo>,
    /// The previous holder died and processes of its last step were still
    /// there: they were ended (the group recorded, `pgid`).
    pub ended_stale: Option<i32>,
    /// The work tree this session runs in, held while the session is
    /// ([`SessionLock::claim_work_tree`]).
    work_tree: Option<File>,
}

impl SessionLock {
    /// Take the lock at `path` for `session`. A holder that died is
    /// cleaned up after here, the one place: what its last step left
    /// running is ended (see [`crate::process::end_dead_run`]).
    pub fn acquire(path: &Path, session: &str) -> Result<SessionLock> {
        let file = open_lock_file(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = holder_info(path);
                return Err(Error::Locked {
                    session: session.to_string(),
                    pid: holder.pid,
                    since: if holder.since.is_empty() {
                        "unknown".into()
                    } else {
                        holder.since
                    },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
        let stale = read_lock_info(&file);
        let (pid, start) = crate::process::own_identity();
        let info = LockInfo {
            pid,
            since: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            start,
            child_pgid: None,
            child_start: None,
            more_children: Vec::new(),
        };
        let ended_stale = stale.as_ref().and_then(|dead| {
            let grace = std::time::Duration::from_secs(2);
            let mut ended = crate::process::end_dead_run(&dead.dead_run(), grace);
            for more in dead.more_dead_runs() {
                ended |= crate::process::end_dead_run(&more, grace);
            }
            ended.then(|| dead.child_pgid.unwrap_or(0))
        });
        let mut lock = SessionLock {
            file,
            path: path.to_path_buf(),
            info,
            info_len: None,
            stale,
            ended_stale,
            work_tree: None,
        };
        lock.write_info()?;
        Ok(lock)
    }

    /// Rewrite the record in place. No fsync: the record only matters to
    /// the next wfx after this process died (a crash or `kill -9`), and
    /// the page cache survives that; after an OS crash or power loss the
    /// processes it names are gone anyway. (It was an fdatasync per child
    /// started, ~15 % of the cycle's syncs.) After the first write the
    /// file is not truncated again: a shorter record is padded with spaces
    /// (JSON allows them), one `pwrite` per child.
    fn write_info(&mut self) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let mut text = serde_json::to_string(&self.info).expect("lock info serialises");
        match self.info_len {
            Some(len) if len >= text.len() => {
                let pad = len - text.len();
                text.extend(std::iter::repeat_n(' ', pad));
            }
            Some(_) => {}
            None => self.file.set_len(0).map_err(|e| Error::io(&self.path, e))?,
        }
        self.file
            .write_all_at(text.as_bytes(), 0)
            .map_err(|e| Error::io(&self.path, e))?;
        self.info_len = Some(text.len());
        Ok(())
    }

    /// Record (or clear) the process group of the child now running, with
    /// the start time of its leader.
    pub fn set_child(&mut self, pgid: Option<i32>) -> Result<()> {
        let start = pgid.and_then(crate::process::start_time);
        let same = self.info.child_pgid == pgid
            && self.info.child_start == start
            && self.info.more_children.is_empty();
        if same && self.info_len.is_some() {
            // The record says so already (a clear after a clear).
            return Ok(());
        }
        self.info.child_pgid = pgid;
        self.info.child_start = start;
        self.info.more_children.clear();
        self.write_info()
    }

    /// One more child running at the same time as the others (speculative
    /// candidates): recorded until [`SessionLock::drop_child`].
    pub fn add_child(&mut self, pgid: i32) -> Result<()> {
        let start = crate::process::start_time(pgid);
        if self.info.child_pgid.is_none() {
            self.info.child_pgid = Some(pgid);
            self.info.child_start = start;
        } else {
            self.info.more_children.push((pgid, start));
        }
        self.write_info()
    }

    /// A child recorded with [`SessionLock::add_child`] ended.
    pub fn drop_child(&mut self, pgid: i32) -> Result<()> {
        if self.info.child_pgid == Some(pgid) {
            match self.info.more_children.pop() {
                Some((next, start)) => {
                    self.info.child_pgid = Some(next);
                    self.info.child_start = start;
                }
                None => {
                    self.info.child_pgid = None;
                    self.info.child_start = None;
                }
            }
        } else {
            self.info.more_children.retain(|(p, _)| *p != pgid);
        }
        self.write_info()
    }

    /// Run a child through `f`, which passes the callback on to
    /// [`crate::process::run`]: the lock records the child's process group
    /// while it runs (a resume after `kill -9` ends it) and clears it after.
    /// The one place that keeps this record.
    pub fn with_child<T>(&mut self, f: impl FnOnce(&mut dyn FnMut(i32)) -> T) -> Result<T> {
        self.with_child_then(&mut || {}, f)
    }

    /// [`with_child`](Self::with_child), `spawned` called once the child
    /// runs and its group is recorded (work that may overlap the child).
    pub fn with_child_then<T>(
        &mut self,
        spawned: &mut dyn FnMut(),
        f: impl FnOnce(&mut dyn FnMut(i32)) -> T,
    ) -> Result<T> {
        let out = {
            let mut on_spawn = |pgid: i32| {
                let _ = self.set_child(Some(pgid));
                spawned();
            };
            f(&mut on_spawn)
        };
        self.set_child(None)?;
        Ok(out)
    }
}

/// Who holds a work tree: `.workflow/.locks/worktree.lock`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct TreeHolder {
    pid: u32,
    session: String,
    since: String,
}

impl SessionLock {
    /// One session per work tree at a time (DESIGN.md §10.2): two sessions
    /// fixing the same files would commit each other's changes and claim
    /// each other's results. `lock_path` is the work tree's lock file;
    /// `tree` names the tree in the message. Held until this session lock
    /// is dropped; a holder that died holds nothing.
    pub fn claim_work_tree(&mut self, lock_path: &Path, tree: &Path) -> Result<()> {
        let session = self
            .path
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(dir) = lock_path.parent() {
            create_dirs(dir)?;
            // A lock is never something to commit.
            ignore_all(dir, b"*\n")?;
        }
        let mut file = open_lock_file(lock_path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
                let holder = loop {
                    let h: Option<TreeHolder> = read_record(&file);
                    if h.is_some() || std::time::Instant::now() >= deadline {
                        break h.unwrap_or_default();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                };
                let who = if holder.session.is_empty() {
                    "another session".to_string()
                } else {
                    format!("session {}", holder.session)
                };
                return Err(Error::usage(format!(
                    "the work tree {} is in use by {who} (wfx process {}, since {}); one session per work tree at a time: wait for it to finish, or run {session} in a work tree of its own with --worktree",
                    tree.display(),
                    holder.pid,
                    if holder.since.is_empty() {
                        "unknown"
                    } else {
                        &holder.since
                    },
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(lock_path, e)),
        }
        let record = TreeHolder {
            pid: self.info.pid,
            session,
            since: self.info.since.clone(),
        };
        let text = serde_json::to_string(&record).expect("holder serialises");
        file.set_len(0).map_err(|e| Error::io(lock_path, e))?;
        file.write_all(text.as_bytes())
            .map_err(|e| Error::io(lock_path, e))?;
        self.work_tree = Some(file);
        Ok(())
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        // An empty lock file means "released cleanly"; the OS lock goes with the fd.
        let _ = self.file.set_len(0);
        if let Some(tree) = &self.work_tree {
            let _ = tree.set_len(0);
        }
    }
}

/// The holder of a lock someone else holds. A holder that has just taken
/// the lock may not have written its record yet (the lock comes first);
/// wait a moment for it so the message can name its pid.
fn holder_info(path: &Path) -> LockInfo {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let info = open_lock_file(path)
            .ok()
            .and_then(|f| read_lock_info(&f))
            .unwrap_or_default();
        if info.pid != 0 || std::time::Instant::now() >= deadline {
            return info;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The record in an open lock file (read through the descriptor, so never
/// through a link); `None` when empty (released cleanly) or unreadable.
fn read_lock_info(file: &File) -> Option<LockInfo> {
    read_record(file)
}

fn read_record<T: serde::de::DeserializeOwned>(mut file: &File) -> Option<T> {
    use std::io::{Read, Seek, SeekFrom};
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(64 * 1024).read_to_string(&mut text).ok()?;
    serde_json::from_str(text.trim()).ok()
}

/// Write the session's `.gitignore` for `git.artifacts` (DESIGN.md §10.7)
/// when it says something else, so every commit of this run (wfx's, or a
/// `wfx run` step's `git add -A`) follows the policy in force now. Not
/// synced: every start and resume of a session compares it first, so one
/// a power loss left empty or short is written again before anything is
/// committed (two fsyncs fewer per session start, issue #30).
pub fn apply_artifact_policy(
    paths: &crate::session::SessionPaths,
    policy: crate::artifacts::config::ArtifactPolicy,
) -> Result<()> {
    let want = crate::session::layout::session_gitignore(policy);
    match std::fs::read_to_string(paths.gitignore()) {
        Ok(have) if have == want => Ok(()),
        Ok(_) => write_replace(&paths.gitignore(), want.as_bytes()),
        Err(_) => write_new(&paths.gitignore(), want.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::FixHistory;

    #[test]
    fn a_write_beside_work_lands_only_when_the_work_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        write_atomic(&path, b"old").unwrap();
        let failed = write_atomic_beside(&path, b"new", || -> Result<()> {
            // The temp file is there while the work runs, the target not yet replaced.
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
            Err(Error::usage("the work failed"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        let names = || -> Vec<String> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(), ["manifest.json"]);
        assert_eq!(write_atomic_beside(&path, b"new", || Ok(7)).unwrap(), 7);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(names(), ["manifest.json"]);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }

    #[test]
    fn a_new_file_is_made_in_place_and_a_link_there_is_replaced_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workflow.yml");
        write_new(&path, b"one").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        // There already: replaced.
        write_new(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        // A link to a file of the user's, and a dangling one: each is
        // replaced by a file of its own; nothing is written through them.
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, "keep").unwrap();
        let nowhere = dir.path().join("nowhere");
        for target in [&theirs, &nowhere] {
            let link = dir.path().join(".gitignore");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            write_new(&link, b"*\n").unwrap();
            assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
            assert_eq!(std::fs::read(&link).unwrap(), b"*\n");
        }
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "keep");
        assert!(!nowhere.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn stale_temp_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fix-history.json");
        std::fs::write(
            dir.path().join(".fix-history.json.abc123.tmp"),
            b"{\"entries\": [garbage",
        )
        .unwrap();
        write_json(&path, &FixHistory::default()).unwrap();
        let back: FixHistory = read_json(&path, "fix-history.json").unwrap();
        assert_eq!(back, FixHistory::default());
    }

    #[test]
    fn absurdly_large_artifact_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("iteration-state.json");
        // Sparse: 300 MiB on paper, nothing on disk.
        std::fs::File::create(&path)
            .unwrap()
            .set_len(300 * 1024 * 1024)
            .unwrap();
        let err = read_json::<FixHistory>(&path, "iteration-state.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "iteration-state.json: /: file is 300.0 MiB; wfx reads JSON artifacts of at most 256 MiB (is it damaged?)"
        );
        assert_eq!(err.exit(), crate::Exit::Usage);
    }

    #[test]
    fn invalid_file_is_not_overwritten_by_update() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fix-history.json");
        let bad = b"{\"entries\": 7}\n";
        std::fs::write(&path, bad).unwrap();
        let err =
            update_json::<FixHistory>(&path, "fix-history.json", |h| h.session_id = "x".into())
                .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("fix-history.json: /entries: "), "{msg}");
        assert_eq!(std::fs::read(&path).unwrap(), bad);
    }

    #[test]
    fn unknown_fields_survive_update() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fix-history.json");
        std::fs::write(
            &path,
            r#"{"session_id":"WFS-a","entries":[],"reviewer":{"name":"ana","ok":true}}"#,
        )
        .unwrap();
        update_json::<FixHistory>(&path, "fix-history.json", |h| h.session_id = "WFS-b".into())
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["session_id"], "WFS-b");
        assert_eq!(v["reviewer"]["name"], "ana");
        assert_eq!(v["reviewer"]["ok"], true);
    }

    #[test]
    fn a_holder_that_has_not_written_its_record_yet_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        // A holder between taking the lock and writing its record.
        let holder = File::create(&path).unwrap();
        holder.try_lock().unwrap();
        let p = path.clone();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::fs::write(&p, r#"{"pid":4242,"since":"2026-01-01T00:00:00Z"}"#).unwrap();
        });
        match SessionLock::acquire(&path, "WFS-a") {
            Err(Error::Locked { pid, since, .. }) => {
                assert_eq!(pid, 4242);
                assert_eq!(since, "2026-01-01T00:00:00Z");
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        writer.join().unwrap();
    }

    #[test]
    fn a_lock_that_is_a_symlink_is_refused_and_its_target_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("important");
        std::fs::write(&target, b"precious bytes\n").unwrap();
        let path = dir.path().join(".lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let err = SessionLock::acquire(&path, "WFS-a").unwrap_err();
        assert_eq!(err.exit(), crate::Exit::Usage);
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("symbolic link"), "{msg}");
        assert_eq!(std::fs::read(&target).unwrap(), b"precious bytes\n");
        // A dangling link is not created through either.
        let dangling = dir.path().join("gone");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&dangling, &path).unwrap();
        assert!(SessionLock::acquire(&path, "WFS-a").is_err());
        assert!(!dangling.exists());
    }

    #[test]
    fn lock_record_names_holder_start_and_child_leader_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let mut lock = SessionLock::acquire(&path, "WFS-a").unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        lock.set_child(Some(child.id() as i32)).unwrap();
        let info: LockInfo =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(info.pid, std::process::id());
        if cfg!(target_os = "linux") {
            assert!(info.start.is_some());
            assert_eq!(
                info.child_start,
                crate::process::start_time(child.id() as i32)
            );
            assert!(info.child_start.is_some());
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Records written before these fields existed still read.
        let old: LockInfo =
            serde_json::from_str(r#"{"pid":7,"since":"x","child_pgid":9}"#).unwrap();
        assert_eq!(
            (old.start, old.child_pgid, old.child_start),
            (None, Some(9), None)
        );
    }

    #[test]
    fn second_lock_is_refused_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let first = SessionLock::acquire(&path, "WFS-a").unwrap();
        match SessionLock::acquire(&path, "WFS-a") {
            Err(Error::Locked { pid, .. }) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(first);
        let again = SessionLock::acquire(&path, "WFS-a").unwrap();
        assert_eq!(again.stale, None, "a clean release leaves no stale info");
    }
}
