//! The repository's own settings and index, checked after every agent call
//! (DESIGN.md §11.3): an agent that sets `core.hooksPath` (its hook would
//! then run on every wfx commit), `core.worktree`, a filter or an alias,
//! drops a hook into the hooks directory, adds ignore rules to
//! `info/exclude`, or runs `git rm --cached` / `git update-index
//! --skip-worktree` has changed the repository, not the code. What it
//! changed is put back byte for byte; the caller records it
//! (`tamper: repo_config_edited`, `index_edited`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Checkpoints, ctx};
use crate::error::{Error, Result};

/// The repository's settings and index before an agent call.
#[derive(Debug, Clone, Default)]
pub struct RepoGuard {
    /// Settings files (`config`, `config.worktree`, `info/exclude`,
    /// `info/attributes`) and their bytes (`None`: absent).
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
    /// The hooks directory (as configured then) and its files' bytes and
    /// modes.
    hooks: Option<(PathBuf, Hooks)>,
    /// The index file's bytes and what its entries say.
    index: Option<(PathBuf, Vec<u8>, Vec<IndexKey>)>,
}

/// A hooks directory's files: bytes and mode (`u32::MAX`: a symlink).
type Hooks = BTreeMap<PathBuf, (Vec<u8>, u32)>;

/// What an index entry says, without its stat data (which `git status`
/// refreshes without changing anything).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct IndexKey {
    path: Vec<u8>,
    id: git2::Oid,
    mode: u32,
    /// Stage and the assume-valid bit.
    flags: u16,
    /// Skip-worktree and intent-to-add.
    flags_extended: u16,
}

/// What [`Checkpoints::restore_repo`] put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepoRestored {
    /// A settings file or a hook.
    pub config: bool,
    /// The index's entries.
    pub index: bool,
}

/// Stage bits and assume-valid of `git_index_entry.flags`.
const FLAGS_KEPT: u16 = 0x3000 | 0x8000;
/// Skip-worktree and intent-to-add of `flags_extended`.
const FLAGS_EXTENDED_KEPT: u16 = 0x4000 | 0x2000;

impl Checkpoints {
    /// The repository's settings, hooks and index now (nothing outside a
    /// repository).
    pub fn repo_guard(&self) -> Result<RepoGuard> {
        let Some(r) = &self.repo else {
            return Ok(RepoGuard::default());
        };
        let common = r.git.commondir().to_path_buf();
        let gitdir = r.git.path().to_path_buf();
        let mut files = Vec::new();
        for path in [
            common.join("config"),
            gitdir.join("config.worktree"),
            common.join("info/exclude"),
            common.join("info/attributes"),
        ] {
            let bytes = read_regular(&path)?;
            files.push((path, bytes));
        }
        let hooks_dir = r.hooks_dir();
        let hooks = Some((hooks_dir.clone(), read_hooks(&hooks_dir)?));
        let index_path = gitdir.join("index");
        let index = match read_regular(&index_path)? {
            Some(bytes) => Some((index_path, bytes, r.index_keys()?)),
            None => None,
        };
        Ok(RepoGuard {
            files,
            hooks,
            index,
        })
    }

    /// Put back what changed since `guard` (see the module docs).
    /// `index`: check the index too (not when the agent's own commits were
    /// folded into the attempt: folding set the index to match).
    pub fn restore_repo(&self, guard: &RepoGuard, index: bool) -> Result<RepoRestored> {
        let Some(r) = &self.repo else {
            return Ok(RepoRestored::default());
        };
        let mut done = RepoRestored::default();
        for (path, before) in &guard.files {
            if read_regular(path)? != *before || crate::fsx::is_link(path) {
                put_back(path, before.as_deref())?;
                done.config = true;
            }
        }
        // A hooks path set during the call is undone with `config` above;
        // the directory it named before is checked here.
        if let Some((dir, before)) = &guard.hooks {
            let now = read_hooks(dir)?;
            if now != *before || crate::fsx::is_link(dir) {
                if crate::fsx::is_link(dir) {
                    std::fs::remove_file(dir).map_err(|e| Error::io(dir, e))?;
                }
                for path in now.keys().filter(|p| !before.contains_key(*p)) {
                    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
                }
                for (path, (bytes, mode)) in before {
                    // A person's hook that is a link stays as it is.
                    if *mode != u32::MAX && now.get(path) != Some(&(bytes.clone(), *mode)) {
                        put_back(path, Some(bytes))?;
                        set_mode(path, *mode)?;
                    }
                }
                done.config = true;
            }
        }
        if let Some((path, bytes, keys)) = &guard.index
            && (read_regular(path)?.as_deref() != Some(bytes.as_slice()))
        {
            let now = r.index_keys()?;
            let changed = now != *keys;
            if changed || crate::fsx::is_link(path) {
                put_back(path, Some(bytes))?;
                done.index = index && changed;
            }
        }
        Ok(done)
    }
}

impl super::Repo {
    /// The hooks directory `git commit` would use now.
    pub(super) fn hooks_dir(&self) -> PathBuf {
        match self.git.config().and_then(|c| c.get_path("core.hooksPath")) {
            Ok(p) if p.is_absolute() => p,
            Ok(p) => self.workdir.join(p),
            Err(_) => self.git.commondir().join("hooks"),
        }
    }

    fn index_keys(&self) -> Result<Vec<IndexKey>> {
        let mut index = self.git.index().map_err(ctx("cannot open the index"))?;
        index.read(true).map_err(ctx("cannot read the index"))?;
        let mut keys: Vec<IndexKey> = index
            .iter()
            .map(|e| IndexKey {
                path: e.path,
                id: e.id,
                mode: e.mode,
                flags: e.flags & FLAGS_KEPT,
                flags_extended: e.flags_extended & FLAGS_EXTENDED_KEPT,
            })
            .collect();
        keys.sort();
        Ok(keys)
    }
}

/// The bytes of a regular file (`None`: absent, or not a regular file).
/// Read before and after every agent call, so a file whose stat key
/// vouches that it has not changed since wfx last read it is not read
/// again (see [`crate::fsx::StatKey`]).
fn read_regular(path: &Path) -> Result<Option<Vec<u8>>> {
    Ok(read_regular_with_mode(path)?.map(|(bytes, _)| bytes))
}

/// [`read_regular`], with the file's mode bits (from the same `lstat`).
fn read_regular_with_mode(path: &Path) -> Result<Option<(Vec<u8>, u32)>> {
    use std::os::unix::fs::PermissionsExt;
    let taken = crate::fsx::clock();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => {
            let mode = m.permissions().mode() & 0o7777;
            let key = crate::fsx::StatKey::taken_at(taken, &m);
            let mut cache = READ_CACHE.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((k, bytes)) = cache.get(path.as_os_str())
                && k.vouches_for(&key)
            {
                return Ok(Some((bytes.clone(), mode)));
            }
            // Read after the key was taken: a change after it changes the
            // key, so the bytes are never newer than a key that vouches.
            // A recent key is kept too: the next read takes it again.
            let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            cache.insert(path.as_os_str().to_owned(), (key, bytes.clone()));
            Ok(Some((bytes, mode)))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Bytes of the guarded files as last read, with their stat keys. Keyed
/// by the path's bytes: comparing `Path`s component by component was most
/// of the cost of a lookup.
static READ_CACHE: std::sync::Mutex<BTreeMap<std::ffi::OsString, (crate::fsx::StatKey, Vec<u8>)>> =
    std::sync::Mutex::new(BTreeMap::new());

/// The files of a hooks directory (sample hooks included): bytes and mode.
fn read_hooks(dir: &Path) -> Result<Hooks> {
    let mut out = BTreeMap::new();
    if crate::fsx::is_link(dir) {
        return Ok(out);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // One `lstat` per hook (the read's), not two.
        if let Some(hook) = read_regular_with_mode(&path)? {
            out.insert(path, hook);
        } else if crate::fsx::is_link(&path) {
            // A link is a hook too (to something else): it differs from
            // any file, so it is removed or replaced.
            out.insert(path, (Vec::new(), u32::MAX));
        }
    }
    Ok(out)
}

/// `path` holds `bytes` again (or is removed), through a temp file renamed
/// over it: a link in its place is replaced, never followed.
fn put_back(path: &Path, bytes: Option<&[u8]>) -> Result<()> {
    match bytes {
        Some(bytes) => {
            let dir = path.parent().unwrap_or(Path::new("."));
            crate::fsx::real_dir(dir).map_err(|e| Error::io(dir, e))?;
            let mut tmp = tempfile::Builder::new()
                .prefix(".wfx-restore.")
                .tempfile_in(dir)
                .map_err(|e| Error::io(dir, e))?;
            std::io::Write::write_all(&mut tmp, bytes).map_err(|e| Error::io(path, e))?;
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| Error::io(path, e))?;
            tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
        }
        None => match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        },
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(&root).unwrap();
        git2::Repository::init(&root).unwrap();
        (tmp, root)
    }

    fn cached_key(path: &Path) -> crate::fsx::StatKey {
        READ_CACHE.lock().unwrap().get(path.as_os_str()).unwrap().0
    }

    /// The read cache answers without reading only for a key that
    /// vouches for the file (told here by bytes the file does not hold).
    #[test]
    fn the_read_cache_answers_only_for_a_settled_key() {
        let (_tmp, root) = repo();
        let f = root.join(".git/info/exclude");
        std::fs::write(&f, "real\n").unwrap();
        assert_eq!(read_regular(&f).unwrap().unwrap(), b"real\n");
        let mut key = cached_key(&f);
        assert!(!key.settled());
        let planted = |key| {
            READ_CACHE
                .lock()
                .unwrap()
                .insert(f.clone().into_os_string(), (key, b"cached\n".to_vec()));
        };
        planted(key);
        assert_eq!(
            read_regular(&f).unwrap().unwrap(),
            b"real\n",
            "recent: read"
        );
        key.taken.0 += 3;
        planted(key);
        assert_eq!(read_regular(&f).unwrap().unwrap(), b"cached\n", "settled");
    }

    /// An agent rewrites a hook after the guard read it, same size, mtime
    /// set back, and (as a coarse clock would stamp it) the same ctime:
    /// the key the guard took was recent, so the hook is read and put back.
    #[test]
    fn a_hook_rewritten_with_the_same_key_is_restored() {
        let (_tmp, root) = repo();
        let cp = Checkpoints::open(&root).unwrap();
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
        let guard = cp.repo_guard().unwrap();
        let kept = cached_key(&hook);
        let mtime = std::fs::metadata(&hook).unwrap().modified().unwrap();
        std::fs::write(&hook, "#!/bin/sh\ncurl x\n").unwrap();
        crate::fsx::set_mtime(&hook, mtime);
        let now = crate::fsx::StatKey::at(&hook).unwrap();
        assert_eq!(
            (now.size, now.mtime, now.ino),
            (kept.size, kept.mtime, kept.ino)
        );
        READ_CACHE
            .lock()
            .unwrap()
            .get_mut(hook.as_os_str())
            .unwrap()
            .0
            .ctime = now.ctime;
        let done = cp.restore_repo(&guard, true).unwrap();
        assert!(done.config);
        assert_eq!(
            std::fs::read_to_string(&hook).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );
    }
}
