//! New files made ahead of need, off the step's path (issue #30).
//!
//! Each attempt of a session makes about ten new documents (its results,
//! analysis, task, prompt, summaries). On ext4 without a journal, making a
//! file right after many were removed nearby costs up to ~200 µs instead
//! of ~20 µs: the allocator skips every inode freed in the last minute or
//! so and scans whole groups for one that was not. A thread of the
//! session's transaction makes empty files in the spares directory ahead
//! of need, while the step goes on or waits for its tests or its agent; a
//! new document is written into one of them and renamed into its place,
//! so the inode is no longer made on the step's path.
//!
//! The files are the session's spares: a link or a hard link an agent puts
//! in the place of one is never written through (the transaction's
//! `write_spare` removes it and makes the file anew), and the spares
//! directory is removed when the transaction ends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How many are kept ready: about one attempt's new documents.
const READY: usize = 8;

/// The names' start: a document's spare never starts with `%n` (its `%`
/// are written `%25`, see `txn::spare_path`), nor does the archive's
/// scratch spare.
const PREFIX: &str = "%new.";

/// Empty files made ahead of need in one directory.
pub struct FreshFiles {
    dir: PathBuf,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FreshFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FreshFiles")
            .field("dir", &self.dir)
            .finish()
    }
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    ready: Vec<PathBuf>,
    /// Top the files up to [`READY`].
    wanted: bool,
    stop: bool,
    /// The thread could not make a file (a full or odd filesystem): the
    /// documents are made on the step's path, as without these files.
    failed: bool,
    made: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl FreshFiles {
    pub fn new(dir: impl Into<PathBuf>) -> FreshFiles {
        FreshFiles {
            dir: dir.into(),
            shared: Arc::default(),
            thread: None,
        }
    }

    /// Have the files topped up, in the background (the thread starts on
    /// the first call).
    pub fn refill(&mut self) {
        if self.thread.is_none() {
            if self.shared.lock().failed {
                return;
            }
            if crate::fsx::real_dir(&self.dir).is_err() {
                self.shared.lock().failed = true;
                return;
            }
            let (dir, shared) = (self.dir.clone(), Arc::clone(&self.shared));
            let spawned = std::thread::Builder::new()
                .name("wfx-fresh-files".into())
                .spawn(move || make_ahead(&dir, &shared));
            match spawned {
                Ok(handle) => self.thread = Some(handle),
                Err(_) => {
                    self.shared.lock().failed = true;
                    return;
                }
            }
        }
        let mut state = self.shared.lock();
        if state.ready.len() < READY && !state.failed {
            state.wanted = true;
            self.shared.wake.notify_one();
        }
    }

    /// An empty file made ahead, when one is ready.
    pub fn take(&self) -> Option<PathBuf> {
        self.shared.lock().ready.pop()
    }

    /// Wait until `n` files are ready or the thread gave up (tests).
    #[cfg(test)]
    pub fn wait_ready(&self, n: usize) -> usize {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let state = self.shared.lock();
            if state.ready.len() >= n || state.failed || std::time::Instant::now() > deadline {
                return state.ready.len();
            }
            drop(state);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

impl Drop for FreshFiles {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: make files while fewer than [`READY`] are ready and more
/// are wanted.
fn make_ahead(dir: &Path, shared: &Shared) {
    use std::os::unix::fs::OpenOptionsExt;
    loop {
        let n = {
            let mut state = shared.lock();
            let more = |s: &State| s.wanted && s.ready.len() < READY;
            while !state.stop && !more(&state) {
                state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if state.stop {
                return;
            }
            state.made += 1;
            state.made
        };
        let path = dir.join(format!("{PREFIX}{n}"));
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path);
        let mut state = shared.lock();
        match made {
            Ok(_) => {
                state.ready.push(path);
                if state.ready.len() >= READY {
                    state.wanted = false;
                }
            }
            // Someone else's file of that name: the next name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => {
                state.failed = true;
                state.wanted = false;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_made_ahead_up_to_the_ready_count_and_taken_one_by_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("spares");
        let mut fresh = FreshFiles::new(&dir);
        assert_eq!(fresh.take(), None, "nothing before the first refill");
        fresh.refill();
        assert_eq!(fresh.wait_ready(READY), READY);
        let taken = fresh.take().unwrap();
        assert!(taken.starts_with(&dir));
        assert_eq!(std::fs::metadata(&taken).unwrap().len(), 0);
        std::fs::remove_file(&taken).unwrap();
        fresh.refill();
        assert_eq!(fresh.wait_ready(READY), READY);
        drop(fresh);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            READY,
            "no more than asked"
        );
    }

    #[test]
    fn a_file_of_a_taken_name_is_passed_over_and_a_directory_that_cannot_be_made_stops_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("spares");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(format!("{PREFIX}1")), "theirs").unwrap();
        let mut fresh = FreshFiles::new(&dir);
        fresh.refill();
        assert_eq!(fresh.wait_ready(READY), READY);
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("{PREFIX}1"))).unwrap(),
            "theirs"
        );
        let mut taken = Vec::new();
        while let Some(p) = fresh.take() {
            taken.push(p);
        }
        assert!(!taken.contains(&dir.join(format!("{PREFIX}1"))));

        // A file where the directory should be: nothing is made, nothing fails.
        let blocked = tmp.path().join("file");
        std::fs::write(&blocked, "x").unwrap();
        let mut fresh = FreshFiles::new(blocked.join("spares"));
        fresh.refill();
        assert_eq!(fresh.wait_ready(1), 0);
        assert_eq!(fresh.take(), None);
    }
}
