//! The sealed checkout (DESIGN.md §11.1): the run that accepts a fix, and
//! the run that completes a session, execute on the tree wfx commits — in
//! a clean checkout of its own, not in the work tree the agent touched.
//!
//! - The sealed tree is `HEAD`'s tree with the fix's paths as they are on
//!   disk (exactly what the checkpoint commit will hold), plus the user's
//!   own work in progress (`--allow-dirty`) as it is on disk, which the
//!   in-place runs see too. It becomes a commit object no branch points
//!   to, kept from `git gc` by `refs/wfx/<session>/sealed`.
//! - The checkout is a repository of its own in the system's temp
//!   directory — outside the project, so no runner that searches parent
//!   directories (pytest's rootdir, cargo's workspace and `.cargo/config`)
//!   finds the project's files — whose objects are this repository's (an
//!   `alternates` file). Nothing is registered in the project's
//!   repository: a `kill -9` at any instant leaves no worktree behind in
//!   `git worktree list`, only a temp directory the next run removes.
//! - The dependency directories that existed, git-ignored, when the
//!   session started (`node_modules`, `.venv`, …) are reached through
//!   symlinks, not copied; cargo builds into the project's `target/`
//!   (`CARGO_TARGET_DIR`), so dependencies are not rebuilt.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Status, StatusOptions};

use super::{Checkpoints, Repo, ctx, paths};
use crate::error::{Error, Result};

/// Ignored directories (and files) that hold a project's installed
/// dependencies, reached from the sealed checkout where they existed at
/// the start. Build output (`target/`, `build/`, `_build/`) is not among
/// them: it holds the work tree's own compiled code.
pub const DEPENDENCY_NAMES: &[&str] = &[
    "node_modules",
    ".venv",
    "venv",
    "env",
    "__pypackages__",
    ".tox",
    ".nox",
    "bower_components",
    ".yarn",
    "vendor",
    "deps",
    "elm-stuff",
    ".pnp.cjs",
    ".pnp.loader.mjs",
];

/// Ignored files copied (not linked) into the checkout: the user's own
/// resolution of dependencies, which a runner may rewrite.
pub const DEPENDENCY_COPIES: &[&str] = &["Cargo.lock"];

/// Files of the sealed environment: at most this many, of at most
/// this size; scratch files (bytecode, logs, coverage data) are not part
/// of it.
const MAX_START_FILES: usize = 500;
/// An ignored directory with more files than this is not copied from.
const MAX_DIR_FILES: usize = 100;
const MAX_START_FILE_BYTES: u64 = 1 << 20;
const NOT_ENVIRONMENT: &[&str] = &[".pyc", ".pyo", ".log", ".DS_Store", ".swp", ".tmp"];

/// Directories tools write on their own (test caches, bytecode, build
/// output): what changes there is not a fix's doing.
const TOOL_CACHES: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".cache",
    ".nyc_output",
    "coverage",
    "target",
    ".gradle",
    ".eslintcache",
];

/// Whether `path` (project-relative) is wfx's own: its sessions, cache and
/// locks under `.workflow/`.
fn is_wfx_own(path: &str) -> bool {
    WFX_OWN
        .iter()
        .any(|d| path == *d || path.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
}

/// wfx's own directories under `.workflow/` (project-relative).
const WFX_OWN: [&str; 4] = [
    ".workflow/active",
    ".workflow/archives",
    ".workflow/.cache",
    ".workflow/.locks",
];

/// Where the sealed checkout of `session` of the project at `root` lives:
/// in the system's temp directory, named so that the next run finds and
/// removes one a killed run left.
pub fn checkout_dir(root: &Path, session: &str) -> PathBuf {
    std::env::temp_dir().join(format!("wfx-sealed-{}", temp_tag(root, session)))
}

/// `<session>-<hash of root>`: what names the checkouts of a session of
/// the project at `root` in the system's temp directory.
pub(super) fn temp_tag(root: &Path, session: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    format!("{session}-{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// Remove the sealed checkout a run of `session` left (killed, or
/// interrupted); whether there was one.
pub fn sweep_checkout(root: &Path, session: &str) -> bool {
    let dir = checkout_dir(root, session);
    std::fs::symlink_metadata(&dir).is_ok() && remove_checkout(&dir).is_ok()
}

/// Remove a checkout: its dependency links are removed as links, never
/// followed into the project's directories.
pub fn remove_checkout(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(dir),
        Ok(_) => std::fs::remove_dir_all(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The repository of a checkout in `dir`, its `HEAD` detached at `id`,
/// whose objects are `main`'s (an `alternates` file), written by hand:
/// `git init` would copy the system's hook samples, probe the file system
/// with files it then removes, rewrite its config once per setting and log
/// the move of `HEAD` — a few dozen file operations per candidate that
/// nothing here reads. The file system settings are the project's own
/// (`core.filemode`, `core.symlinks`, `core.ignorecase`,
/// `core.precomposeunicode`, as git probed them for the project), so
/// the checkout's status reads its files the way the project's does.
fn init_checkout_repo(main: &Repository, dir: &Path, id: Oid) -> Result<Repository> {
    let git_dir = dir.join(".git");
    let info = git_dir.join("objects/info");
    for d in [&info, &git_dir.join("refs")] {
        std::fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }
    let objects = main.commondir().join("objects");
    let alternates = info.join("alternates");
    std::fs::write(&alternates, format!("{}\n", objects.display()))
        .map_err(|e| Error::io(&alternates, e))?;
    // A shallow history stays readable in the checkout.
    let shallow = main.commondir().join("shallow");
    if shallow.is_file() {
        let _ = std::fs::copy(&shallow, git_dir.join("shallow"));
    }
    let mut config = String::from(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = false\n",
    );
    if let Ok(c) = main.config() {
        for key in ["filemode", "symlinks", "ignorecase", "precomposeunicode"] {
            if let Ok(v) = c.get_bool(&format!("core.{key}")) {
                config.push_str(&format!("\t{key} = {v}\n"));
            }
        }
    }
    let path = git_dir.join("config");
    std::fs::write(&path, config).map_err(|e| Error::io(&path, e))?;
    let head = git_dir.join("HEAD");
    std::fs::write(&head, format!("{id}\n")).map_err(|e| Error::io(&head, e))?;
    Repository::open(dir).map_err(ctx("cannot open the sealed checkout"))
}

/// The id of `commit`.
fn commit_id(commit: &str) -> Result<Oid> {
    Oid::from_str(commit).map_err(|_| Error::Internal(format!("{commit}: not an id")))
}

/// The sealed checkout a run keeps between its sealed runs (removed when
/// dropped: at the end of the run, or when it cannot be reused), with
/// what each of its entries was when wfx finished making it.
pub struct KeptCheckout {
    dir: PathBuf,
    deps: Vec<String>,
    entries: std::collections::BTreeMap<PathBuf, Stamp>,
    /// Its repository, open: reused only while nothing in its `.git` has
    /// changed since wfx left it (else the checkout is made anew), so it
    /// is the repository a new open would find; each open read git's
    /// config files again (issue #30).
    repo: Repository,
}

impl std::fmt::Debug for KeptCheckout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptCheckout")
            .field("dir", &self.dir)
            .field("deps", &self.deps)
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

impl KeptCheckout {
    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for KeptCheckout {
    fn drop(&mut self) {
        let _ = remove_checkout(&self.dir);
    }
}

/// What identifies an entry of a checkout as the one wfx wrote (see
/// [`crate::fsx::StatKey`]; a directory by its inode and mode alone, its
/// times change with its entries, which are stamped on their own), and
/// for an entry changed too recently for its key, its content.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    key: crate::fsx::StatKey,
    nlink: u64,
    /// The blob id of a file's bytes or a link's target.
    content: Option<Oid>,
}

fn stamp(path: &Path, meta: &std::fs::Metadata, with_content: bool) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let key = crate::fsx::StatKey::of(meta);
    if meta.is_dir() {
        let key = crate::fsx::StatKey {
            size: 0,
            mtime: (0, 0),
            ctime: (0, 0),
            ..key
        };
        return Some(Stamp {
            key,
            nlink: 0,
            content: None,
        });
    }
    let content = if !with_content {
        None
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        Some(
            Oid::hash_object(
                git2::ObjectType::Blob,
                target.as_os_str().as_encoded_bytes(),
            )
            .ok()?,
        )
    } else {
        Some(Oid::hash_file(git2::ObjectType::Blob, path).ok()?)
    };
    Some(Stamp {
        key,
        nlink: meta.nlink(),
        content,
    })
}

/// The entries of the checkout in `dir` (links not followed), stamped.
fn record(dir: &Path) -> Result<std::collections::BTreeMap<PathBuf, Stamp>> {
    let unreadable = |e: &dyn std::fmt::Display| {
        Error::Internal(format!("cannot read the sealed checkout: {e}"))
    };
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).follow_root_links(false) {
        let entry = entry.map_err(|e| unreadable(&e))?;
        let meta = entry.metadata().map_err(|e| unreadable(&e))?;
        let recent = crate::fsx::StatKey::recent(&meta);
        let s = stamp(entry.path(), &meta, recent)
            .ok_or_else(|| unreadable(&entry.path().display()))?;
        out.insert(entry.path().to_path_buf(), s);
    }
    Ok(out)
}

/// Make the kept checkout hold only what wfx wrote there: entries a run
/// (or anyone) added or changed are removed, links as links; how many.
/// `None` when it cannot be trusted: its top or anything in its `.git` is
/// not as wfx left it.
fn clean_kept(kept: &KeptCheckout) -> Result<Option<usize>> {
    let same = |path: &Path, meta: &std::fs::Metadata| {
        kept.entries.get(path).is_some_and(|was| {
            stamp(path, meta, was.content.is_some()).is_some_and(|now| now == *was)
        })
    };
    let git_dir = kept.dir.join(".git");
    let (mut seen_git, mut removed) = (0, 0);
    let mut walk = walkdir::WalkDir::new(&kept.dir)
        .follow_root_links(false)
        .into_iter();
    while let Some(entry) = walk.next() {
        let Ok(entry) = entry else { return Ok(None) };
        let Ok(meta) = entry.metadata() else {
            return Ok(None);
        };
        let path = entry.path();
        let is_git = path == kept.dir || path.starts_with(&git_dir);
        if same(path, &meta) {
            seen_git += usize::from(is_git);
            continue;
        }
        if is_git {
            return Ok(None);
        }
        removed += 1;
        if meta.is_dir() {
            walk.skip_current_dir();
            std::fs::remove_dir_all(path).map_err(|e| Error::io(path, e))?;
        } else {
            std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
        }
    }
    // Nothing of its `.git` went missing.
    let recorded_git = kept
        .entries
        .keys()
        .filter(|p| *p == &kept.dir || p.starts_with(&git_dir))
        .count();
    Ok((seen_git == recorded_git).then_some(removed))
}

/// A sealed checkout ready to run in.
#[derive(Debug, Clone)]
pub struct SealedCheckout {
    /// The commit checked out.
    pub commit: String,
    /// The checkout's top directory (removed after the run).
    pub dir: PathBuf,
    /// The project root inside it (the checkout's top, or the project's
    /// subdirectory of the repository).
    pub root: PathBuf,
}

impl Checkpoints {
    /// The commit the checkpoint of `paths` would make on top of `HEAD`
    /// (plus the user's work in progress as on disk), as a commit object no
    /// branch points to; `None` outside a repository or before the first
    /// commit.
    pub fn seal(&self, paths: &[String], message: &str) -> Result<Option<String>> {
        let Some(r) = &self.repo else { return Ok(None) };
        let Some(head) = r.head_commit()? else {
            return Ok(None);
        };
        let base = head.tree().map_err(ctx("cannot read HEAD's tree"))?;
        let mut scopes = Vec::new();
        for p in paths {
            scopes.push(r.scope_of(p)?);
        }
        scopes.extend(r.wip()?.into_keys());
        let workflow = r.workflow_scope();
        scopes.retain(|s| !paths::under(s, &workflow));
        let tree = if scopes.is_empty() {
            base.id()
        } else {
            let state = r.worktree_state(&scopes, &[])?;
            r.build_tree(Some(&base), &scopes, &state)?.0
        };
        // The same files on the same HEAD as the last sealed run (a fix
        // that changed nothing): its commit is this one but for the message
        // and the time, so it is reused — a new one costs a loose object
        // (a new inode, often a new directory) per sealed run (issue #30).
        let name = r.session_ref("sealed");
        if let Some(last) = name
            .as_deref()
            .and_then(|n| r.git.refname_to_id(n).ok())
            .and_then(|id| r.git.find_commit(id).ok())
            && last.tree_id() == tree
            && last.parent_ids().eq([head.id()])
        {
            return Ok(Some(last.id().to_string()));
        }
        let tree = r
            .git
            .find_tree(tree)
            .map_err(ctx("cannot read the sealed tree"))?;
        let (author, committer) = r.signatures()?;
        let id = r
            .git
            .commit(None, &author, &committer, message, &tree, &[&head])
            .map_err(ctx("cannot create the sealed commit"))?;
        if let Some(name) = name {
            r.keep_ref(&name, id, "wfx: sealed run")?;
        }
        Ok(Some(id.to_string()))
    }

    /// Check `commit` out into `dir` (made anew) as a repository whose
    /// objects are this one's; the dependency directories `deps`
    /// (project-relative) are linked in. Nothing is registered here.
    pub fn checkout_sealed(
        &self,
        commit: &str,
        dir: &Path,
        deps: &[String],
    ) -> Result<SealedCheckout> {
        self.checkout_sealed_repo(commit, dir, deps)
            .map(|(co, _)| co)
    }

    /// [`Self::checkout_sealed`], with the checkout's repository open.
    fn checkout_sealed_repo(
        &self,
        commit: &str,
        dir: &Path,
        deps: &[String],
    ) -> Result<(SealedCheckout, Repository)> {
        let r = self.sealed_repo()?;
        remove_checkout(dir).map_err(|e| Error::io(dir, e))?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let id = commit_id(commit)?;
        let repo = init_checkout_repo(&r.git, dir, id)?;
        let mut co = git2::build::CheckoutBuilder::new();
        co.force();
        repo.checkout_head(Some(&mut co))
            .map_err(ctx(format!("cannot check out {commit}")))?;
        // The links are not the checkout's files: no diff of it shows them
        // (a pattern without a slash at its end also matches a link).
        let exclude = repo.path().join("info/exclude");
        let lines: String = deps
            .iter()
            .map(|d| {
                format!(
                    "/{}\n",
                    paths::bytes_to_path(&paths::to_repo(&r.prefix, d)).display()
                )
            })
            .collect();
        if !deps.is_empty() {
            if let Some(parent) = exclude.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            std::fs::write(&exclude, lines).map_err(|e| Error::io(&exclude, e))?;
        }
        Ok((self.link_dependencies(commit, dir, deps)?, repo))
    }

    /// A sealed checkout of `commit` in `dir` as [`Self::checkout_sealed`]
    /// makes it, reusing the one `kept` from this run's previous sealed
    /// run when nothing in it changed since wfx made it but what a run
    /// leaves (new files, changed files: removed first, never followed)
    /// — then only the files that differ between the two commits are
    /// written. Anything else (a change inside its `.git`, its top
    /// replaced, other dependency links) makes a new one. `kept` then
    /// holds what the checkout is now.
    pub fn checkout_sealed_reusing(
        &self,
        commit: &str,
        dir: &Path,
        deps: &[String],
        kept: &mut Option<KeptCheckout>,
    ) -> Result<SealedCheckout> {
        if let Some(mut k) = kept.take()
            && k.dir == dir
            && k.deps == deps
            && let Ok(Some(co)) = self.update_kept(&k, commit, deps)
        {
            k.entries = record(dir)?;
            *kept = Some(k);
            return Ok(co);
        }
        let (co, repo) = self.checkout_sealed_repo(commit, dir, deps)?;
        // Unrecorded, it is not reused: removed after its run.
        if let Ok(entries) = record(dir) {
            *kept = Some(KeptCheckout {
                dir: dir.to_path_buf(),
                deps: deps.to_vec(),
                entries,
                repo,
            });
        }
        Ok(co)
    }

    /// Move the kept checkout to `commit`: `None` when it cannot be
    /// trusted (a new one is made instead).
    fn update_kept(
        &self,
        kept: &KeptCheckout,
        commit: &str,
        deps: &[String],
    ) -> Result<Option<SealedCheckout>> {
        let r = self.sealed_repo()?;
        let Some(removed) = clean_kept(kept)? else {
            return Ok(None);
        };
        let repo = &kept.repo;
        let target = repo
            .find_commit(commit_id(commit)?)
            .map_err(ctx(format!("cannot read {commit}")))?;
        let before = repo
            .head()
            .and_then(|h| h.peel_to_tree())
            .map_err(ctx("cannot read the sealed checkout's HEAD"))?;
        // From `HEAD` (the previous commit, as the index holds it) to
        // `commit`: files removed above are written again. The same tree
        // with nothing removed is there already.
        let changed = removed > 0 || before.id() != target.tree_id();
        if changed {
            let mut co = git2::build::CheckoutBuilder::new();
            co.force().recreate_missing(true);
            repo.checkout_tree(target.as_object(), Some(&mut co))
                .map_err(ctx(format!("cannot check out {commit}")))?;
        }
        let head = repo.path().join("HEAD");
        crate::fsx::overwrite(&head, format!("{commit}\n").as_bytes())
            .map_err(|e| Error::io(&head, e))?;
        // What is there now is exactly the commit (the links aside, which
        // the checkout's exclude file names).
        if changed {
            let mut opts = StatusOptions::new();
            opts.include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(false)
                .exclude_submodules(true);
            let dirty = repo
                .statuses(Some(&mut opts))
                .map_err(ctx("cannot read the status of the sealed checkout"))?;
            if !dirty.is_empty() {
                return Ok(None);
            }
        }
        // A copied dependency file is copied again, and a link to a
        // directory the project no longer has goes, as in a new checkout.
        let (root, project) = (r.project_in(&kept.dir), r.abs_project(""));
        for rel in deps {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let to = root.join(rel);
            if (DEPENDENCY_COPIES.contains(&name) || !project.join(rel).exists())
                && std::fs::symlink_metadata(&to).is_ok()
            {
                remove_checkout(&to).map_err(|e| Error::io(&to, e))?;
            }
        }
        self.link_dependencies(commit, &kept.dir, deps).map(Some)
    }

    /// The repository a sealed checkout is made from.
    fn sealed_repo(&self) -> Result<&Repo> {
        self.repo
            .as_ref()
            .ok_or_else(|| Error::Internal("a sealed checkout needs a repository".into()))
    }

    /// Link the dependency directories `deps` into the checkout of
    /// `commit` in `dir` (those not there yet).
    fn link_dependencies(
        &self,
        commit: &str,
        dir: &Path,
        deps: &[String],
    ) -> Result<SealedCheckout> {
        let r = self.sealed_repo()?;
        let (root, project) = (r.project_in(dir), r.abs_project(""));
        for rel in deps {
            let from = project.join(rel);
            let to = root.join(rel);
            if std::fs::symlink_metadata(&to).is_ok() || !from.exists() {
                continue;
            }
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let done = if DEPENDENCY_COPIES.contains(&name) {
                std::fs::copy(&from, &to).map(drop)
            } else {
                std::os::unix::fs::symlink(&from, &to)
            };
            done.map_err(|e| Error::io(&to, e))?;
        }
        Ok(SealedCheckout {
            commit: commit.to_string(),
            dir: dir.to_path_buf(),
            root,
        })
    }

    /// The dependency directories (and files) of the project now:
    /// git-ignored entries named in [`DEPENDENCY_NAMES`] or
    /// [`DEPENDENCY_COPIES`], project-relative, sorted.
    pub fn dependency_dirs(&self) -> Result<Vec<String>> {
        let Some(r) = &self.repo else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (path, _) in r.ignored_entries()? {
            let trimmed = path.trim_end_matches('/');
            let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
            let is_dep = DEPENDENCY_NAMES.contains(&name) || DEPENDENCY_COPIES.contains(&name);
            // `env` only when it is a virtualenv.
            let venv_ok = name != "env" || r.abs_project(trimmed).join("pyvenv.cfg").is_file();
            if is_dep && venv_ok {
                out.push(trimmed.to_string());
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// What of the files outside the commit sealed runs may use, as it is
    /// now (taken when the session starts): the dependency directories,
    /// and small git-ignored or untracked files with their blob ids (not
    /// the sessions of `.workflow/`, nor tools' caches).
    pub fn sealed_environment(
        &self,
    ) -> Result<crate::artifacts::iteration_state::SealedEnvironment> {
        use crate::artifacts::iteration_state::{SealedEnvironment, StartFile};
        let Some(r) = &self.repo else {
            return Ok(SealedEnvironment::default());
        };
        let mut candidates: Vec<String> = Vec::new();
        for (entry, _) in r.ignored_entries()? {
            let Some(dir) = entry.strip_suffix('/') else {
                candidates.push(entry);
                continue;
            };
            // A small ignored directory's files (a helper the test command
            // runs); a big one is build output or data, and dependency
            // directories are linked, not copied.
            let name = dir.rsplit('/').next().unwrap_or(dir);
            if DEPENDENCY_NAMES.contains(&name) || TOOL_CACHES.contains(&name) {
                continue;
            }
            let base = r.abs_project("");
            let files: Vec<String> = walkdir::WalkDir::new(r.abs_project(dir))
                .max_depth(6)
                .into_iter()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_file())
                .take(MAX_DIR_FILES + 1)
                .filter_map(|e| {
                    e.path()
                        .strip_prefix(&base)
                        .ok()
                        .map(|p| p.to_string_lossy().replace('\\', "/"))
                })
                .collect();
            if files.len() <= MAX_DIR_FILES {
                candidates.extend(files);
            }
        }
        candidates.extend(r.status_entries(Status::WT_NEW, false, true)?);
        candidates.sort();
        candidates.dedup();
        let mut start_files = Vec::new();
        for path in candidates {
            if start_files.len() >= MAX_START_FILES {
                break;
            }
            let name = path.rsplit('/').next().unwrap_or(&path);
            if is_wfx_own(&path)
                || NOT_ENVIRONMENT.iter().any(|suffix| name.ends_with(suffix))
                || DEPENDENCY_COPIES.contains(&name)
                || path.split('/').any(|part| TOOL_CACHES.contains(&part))
            {
                continue;
            }
            let abs = r.abs_project(&path);
            let Ok(meta) = std::fs::symlink_metadata(&abs) else {
                continue;
            };
            if !meta.is_file() || meta.len() > MAX_START_FILE_BYTES {
                continue;
            }
            if let Ok(id) = Oid::hash_file(git2::ObjectType::Blob, &abs) {
                start_files.push(StartFile {
                    path,
                    blob: id.to_string(),
                    changed_at: Some(super::changed_at(&meta).into()),
                });
            }
        }
        Ok(SealedEnvironment {
            dependency_dirs: self.dependency_dirs()?,
            start_files,
        })
    }

    /// Files that changed `during` the fix and are not in `commit`'s tree:
    /// the git-ignored and untracked ones a run in the work tree saw and
    /// the sealed run did not. Dependency directories (`deps`) and tools'
    /// caches are not looked into. `(path, why)`, project-relative, sorted;
    /// at most 20.
    pub fn outside_commit(
        &self,
        commit: &str,
        during: std::ops::Range<std::time::SystemTime>,
        deps: &[String],
    ) -> Result<Vec<(String, &'static str)>> {
        let Some(r) = &self.repo else {
            return Ok(Vec::new());
        };
        let tree = r
            .git
            .find_commit(Oid::from_str(commit).map_err(|_| Error::Internal(commit.into()))?)
            .and_then(|c| c.tree())
            .map_err(ctx(format!("cannot read {commit}")))?;
        let mut out = Vec::new();
        let (ignored, untracked) = r.ignored_and_untracked()?;
        let walk_from = (ignored.into_iter().map(|p| (p, "git-ignored")))
            .chain(untracked.into_iter().map(|p| (p, "untracked")));
        for (entry, why) in walk_from {
            let rel = entry.trim_end_matches('/');
            if deps
                .iter()
                .any(|d| rel == d || rel.starts_with(&format!("{d}/")))
                || rel.split('/').any(|part| TOOL_CACHES.contains(&part))
            {
                continue;
            }
            let abs = r.abs_project(rel);
            for file in walkdir::WalkDir::new(&abs)
                .max_depth(8)
                .into_iter()
                .filter_map(|e| e.ok())
                .filter(|e| !e.file_type().is_dir())
                .take(10_000)
            {
                let Ok(meta) = file.path().symlink_metadata() else {
                    continue;
                };
                if !during.contains(&super::changed_at(&meta)) {
                    continue;
                }
                let Ok(sub) = file.path().strip_prefix(r.abs_project("")) else {
                    continue;
                };
                let shown = sub.to_string_lossy().replace('\\', "/");
                if is_wfx_own(&shown) {
                    continue;
                }
                let in_tree = super::tree_entry(Some(&tree), &r.scope_of(&shown)?)?.is_some();
                if !in_tree {
                    out.push((shown, why));
                }
                if out.len() >= 20 {
                    out.sort();
                    return Ok(out);
                }
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

impl Repo {
    /// A path of the project (project-relative) on disk.
    fn abs_project(&self, rel: &str) -> PathBuf {
        let base = self.project_in(&self.workdir);
        if rel.is_empty() { base } else { base.join(rel) }
    }

    /// The project's directory in a checkout of the repository at `top`.
    fn project_in(&self, top: &Path) -> PathBuf {
        top.join(paths::bytes_to_path(&self.project_scope()))
    }

    /// The git-ignored entries of the project (an ignored directory as
    /// one entry, not walked), project-relative, with why they count.
    fn ignored_entries(&self) -> Result<Vec<(String, &'static str)>> {
        self.status_entries(Status::IGNORED, true, false)
            .map(|v| v.into_iter().map(|p| (p, "git-ignored")).collect())
    }

    /// The paths a status of the project walks: the project's entries on
    /// disk, with `.workflow/`'s own directories (the sessions) left out
    /// — their entries are dropped anyway, and walking them on every
    /// sealed run made each run's cost grow with the session (issue #30).
    /// `None`: the whole project (its directory cannot be listed).
    fn walk_outside_own(&self) -> Option<Vec<Vec<u8>>> {
        let none = super::State::new();
        let workflow = self.workflow_scope();
        let mut specs = self.walk_specs(
            &[self.project_scope()],
            std::slice::from_ref(&workflow),
            &none,
        )?;
        let own: Vec<Vec<u8>> = WFX_OWN
            .iter()
            .map(|d| paths::to_repo(&self.prefix, d))
            .collect();
        let workflow_dir = self.abs(&workflow);
        if workflow_dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            specs.extend(self.walk_specs(&[workflow], &own, &none)?);
        } else if workflow_dir.symlink_metadata().is_ok() {
            specs.push(workflow);
        }
        Some(specs)
    }

    /// Entries of the project's status with `want` (ignored ones, or
    /// untracked ones), `.workflow/`'s sessions aside; `recurse`: list the
    /// files of an untracked directory instead of the directory.
    fn status_entries(&self, want: Status, ignored: bool, recurse: bool) -> Result<Vec<String>> {
        let specs = self.walk_outside_own();
        let mut found = self.statuses_of(&[want], ignored, recurse, specs.as_deref())?;
        Ok(found.pop().unwrap_or_default())
    }

    /// [`Self::ignored_entries`] and the untracked, not ignored, entries
    /// of the project, of one status where one answers both: with the paths walked named, both
    /// list an untracked directory's files, and showing ignored entries
    /// too changes none of the untracked ones. Each status walks the
    /// project's files and reads git's config (issue #30).
    fn ignored_and_untracked(&self) -> Result<(Vec<String>, Vec<String>)> {
        let specs = self.walk_outside_own();
        let (ignored, untracked) = if specs.is_some() {
            let wants = [Status::IGNORED, Status::WT_NEW];
            let mut found = self.statuses_of(&wants, true, false, specs.as_deref())?;
            let untracked = found.pop().unwrap_or_default();
            (found.pop().unwrap_or_default(), untracked)
        } else {
            let ignored = self.statuses_of(&[Status::IGNORED], true, false, None)?;
            let untracked = self.statuses_of(&[Status::WT_NEW], false, false, None)?;
            (ignored.concat(), untracked.concat())
        };
        Ok((ignored, untracked))
    }

    /// For each of `wants`, the entries of one status of the project with
    /// it (see [`Self::status_entries`]); `specs`: the paths walked, from
    /// [`Self::walk_outside_own`].
    fn statuses_of(
        &self,
        wants: &[Status],
        ignored: bool,
        recurse: bool,
        specs: Option<&[Vec<u8>]>,
    ) -> Result<Vec<Vec<String>>> {
        let mut opts = StatusOptions::new();
        // Ignored entries inside an untracked directory (`.workflow/` before
        // wfx's first commit) are found only by looking into it.
        opts.include_untracked(true)
            .include_ignored(ignored)
            .recurse_untracked_dirs(recurse || ignored)
            .recurse_ignored_dirs(false)
            .exclude_submodules(true);
        match specs {
            // Nothing on disk but wfx's own.
            Some([]) => return Ok(vec![Vec::new(); wants.len()]),
            Some(specs) => {
                for s in specs {
                    opts.pathspec(paths::bytes_to_path(s));
                }
                // Files, not their untracked directory: a directory above
                // the paths walked (`.workflow/`) would match none of them.
                opts.disable_pathspec_match(true)
                    .recurse_untracked_dirs(true);
            }
            None => {
                let scope = self.prefix.clone();
                if !scope.is_empty() {
                    opts.pathspec(paths::bytes_to_path(&scope));
                }
            }
        }
        let statuses = self
            .git
            .statuses(Some(&mut opts))
            .map_err(ctx("cannot read the status of the work tree"))?;
        let mut found = Vec::with_capacity(wants.len());
        for &want in wants {
            let mut out: Vec<String> = statuses
                .iter()
                .filter(|e| e.status().intersects(want))
                .map(|e| self.show(e.path_bytes()))
                .filter(|p| !is_wfx_own(p.trim_end_matches('/')))
                .collect();
            if want.contains(Status::IGNORED)
                && let Some(specs) = specs
            {
                out.extend(self.inside_ignored_workflow(specs));
            }
            found.push(out);
        }
        Ok(found)
    }

    /// The paths walked under `.workflow/` when it is git-ignored as a
    /// whole: ignored entries (a directory with its `/`), which a status
    /// of paths below an ignored directory does not show.
    fn inside_ignored_workflow(&self, specs: &[Vec<u8>]) -> Vec<String> {
        let workflow = self.workflow_scope();
        let mut dir = workflow.clone();
        dir.push(b'/');
        if !self
            .git
            .is_path_ignored(paths::bytes_to_path(&dir))
            .unwrap_or(false)
        {
            return Vec::new();
        }
        specs
            .iter()
            .filter(|s| s.starts_with(&dir))
            .map(|s| {
                let mut shown = self.show(s);
                if self.abs(s).symlink_metadata().is_ok_and(|m| m.is_dir()) {
                    shown.push('/');
                }
                shown
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Commit the project's files as they are; the commit's id.
    fn commit_all(repo: &Repository) -> String {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &parents)
            .unwrap()
            .to_string()
    }

    fn ino(path: &Path) -> u64 {
        std::fs::symlink_metadata(path).unwrap().ino()
    }

    /// When `path`'s inode last changed: a file written anew shows it.
    fn changed(path: &Path) -> (i64, i64) {
        let m = std::fs::metadata(path).unwrap();
        (m.ctime(), m.ctime_nsec())
    }

    /// Everything in the checkout but its `.git`, project-relative.
    fn listing(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(dir)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                e.unwrap()
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .filter(|p| p != ".git" && !p.starts_with(".git/"))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn files_outside_the_commit_are_found_everywhere_but_in_wfxs_own_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(root.join(".workflow/active/WFS-a/.process")).unwrap();
        std::fs::create_dir_all(root.join(".workflow/notes")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join(".workflow/active/WFS-a/.gitignore"), "*\n").unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let repo = Repository::init(&root).unwrap();
        let commit = commit_all(&repo);
        let cp = Checkpoints::open(&root).unwrap();
        let since = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        for f in [
            "build/gen.py",
            "helper.py",
            ".workflow/notes/n.md",
            ".workflow/active/WFS-a/.process/iteration-1-results.json",
            ".workflow/active/WFS-a/state.json",
        ] {
            std::fs::write(root.join(f), "new\n").unwrap();
        }
        let until = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
        // `.workflow/` untracked, then ignored as a whole: its other files
        // are found all the same.
        for (ignore, why) in [
            ("build/\n", "untracked"),
            ("build/\n.workflow/\n", "git-ignored"),
        ] {
            std::fs::write(root.join(".gitignore"), ignore).unwrap();
            let found = cp.outside_commit(&commit, since..until, &[]).unwrap();
            assert_eq!(
                found,
                [
                    (".workflow/notes/n.md".to_string(), why),
                    ("build/gen.py".to_string(), "git-ignored"),
                    ("helper.py".to_string(), "untracked"),
                ]
            );
        }
    }

    #[test]
    fn a_sealed_run_of_the_same_files_on_the_same_head_reuses_the_last_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let repo = Repository::init(&root).unwrap();
        commit_all(&repo);
        let cp = Checkpoints::open(&root).unwrap().with_session("WFS-a");
        let paths = vec!["a.py".to_string()];
        let first = cp.seal(&paths, "iteration 1").unwrap().unwrap();
        let again = cp.seal(&paths, "iteration 2").unwrap().unwrap();
        assert_eq!(again, first, "nothing changed: the same commit");
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        let changed = cp.seal(&paths, "iteration 3").unwrap().unwrap();
        assert_ne!(changed, first);
        let tree = repo
            .find_commit(Oid::from_str(&changed).unwrap())
            .unwrap()
            .tree()
            .unwrap();
        let blob = tree.get_path(Path::new("a.py")).unwrap().id();
        assert_eq!(repo.find_blob(blob).unwrap().content(), b"x = 2\n");
        // A new HEAD: a new commit on it, even for the same files.
        commit_all(&repo);
        let on_new_head = cp.seal(&paths, "iteration 4").unwrap().unwrap();
        assert_ne!(on_new_head, changed);
        let parent = repo
            .find_commit(Oid::from_str(&on_new_head).unwrap())
            .unwrap();
        assert_eq!(
            parent.parent_id(0).unwrap(),
            repo.head().unwrap().target().unwrap()
        );
    }

    #[test]
    fn a_kept_checkout_holds_exactly_the_next_commit_whatever_was_done_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
        std::fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
        std::fs::write(root.join("keep.txt"), "same\n").unwrap();
        std::fs::write(root.join("gone.txt"), "old\n").unwrap();
        std::fs::write(root.join("pkg/m.py"), "x = 1\n").unwrap();
        let repo = Repository::init(&root).unwrap();
        let c1 = commit_all(&repo);
        let cp = Checkpoints::open(&root).unwrap();
        let dir = tmp.path().join("co");
        let deps = vec!["node_modules".to_string()];
        let mut kept = None;
        cp.checkout_sealed_reusing(&c1, &dir, &deps, &mut kept)
            .unwrap();
        assert!(kept.is_some());
        let keep_ino = ino(&dir.join("keep.txt"));

        // What a run and an agent could leave: new files, a tracked file
        // changed with its size and times kept, a file swapped for a link
        // to a file outside.
        let victim = tmp.path().join("victim.txt");
        std::fs::write(&victim, "victim\n").unwrap();
        std::fs::write(dir.join("junk.py"), "planted").unwrap();
        std::fs::create_dir_all(dir.join("pkg/__pycache__")).unwrap();
        std::fs::write(dir.join("pkg/__pycache__/m.pyc"), "stale").unwrap();
        let gone = dir.join("gone.txt");
        let times = std::fs::metadata(&gone).unwrap();
        std::fs::write(&gone, "new\n").unwrap();
        crate::fsx::set_mtime(&gone, times.modified().unwrap());
        std::fs::remove_file(dir.join("pkg/m.py")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("pkg/m.py")).unwrap();

        std::fs::write(root.join("pkg/m.py"), "x = 2\n").unwrap();
        std::fs::write(root.join("new.txt"), "new file\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        let c2 = commit_all(&repo);
        // A new checkout would write its `.git/config` again: later.
        let config_changed = || changed(&dir.join(".git/config"));
        let config_was = config_changed();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let co = cp
            .checkout_sealed_reusing(&c2, &dir, &deps, &mut kept)
            .unwrap();
        assert_eq!(co.commit, c2);
        assert_eq!(ino(&dir.join("keep.txt")), keep_ino, "not reused");
        assert_eq!(config_changed(), config_was, "not reused");
        assert_eq!(
            listing(&dir),
            [
                ".gitignore",
                "keep.txt",
                "new.txt",
                "node_modules",
                "pkg",
                "pkg/m.py"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("pkg/m.py")).unwrap(),
            "x = 2\n"
        );
        assert!(
            std::fs::symlink_metadata(dir.join("pkg/m.py"))
                .unwrap()
                .is_file()
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim\n");
        assert!(
            std::fs::symlink_metadata(dir.join("node_modules"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(".git/HEAD"))
                .unwrap()
                .trim(),
            c2
        );

        // A tracked file changed within the clock's tick, size kept: known
        // by its bytes.
        std::fs::write(dir.join("keep.txt"), "SAME\n").unwrap();
        cp.checkout_sealed_reusing(&c2, &dir, &deps, &mut kept)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
            "same\n"
        );

        // Anything changed in its `.git` (attributes that would rewrite
        // what is checked out): a new checkout.
        std::fs::write(dir.join(".git/info/attributes"), "* text eol=crlf\n").unwrap();
        let keep_ino = ino(&dir.join("keep.txt"));
        // Held open, the old file's inode number cannot be handed to the
        // new checkout's file (a freed one may be, on any file system).
        let _held = std::fs::File::open(dir.join("keep.txt")).unwrap();
        cp.checkout_sealed_reusing(&c2, &dir, &deps, &mut kept)
            .unwrap();
        assert!(!dir.join(".git/info/attributes").exists());
        assert_ne!(
            ino(&dir.join("keep.txt")),
            keep_ino,
            "reused a changed .git"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
            "same\n"
        );

        // Other dependency links: a new checkout.
        cp.checkout_sealed_reusing(&c2, &dir, &[], &mut kept)
            .unwrap();
        assert!(!dir.join("node_modules").exists());

        drop(kept);
        assert!(!dir.exists(), "the kept checkout is removed with it");
        assert!(root.join("node_modules/dep").is_dir());
    }

    #[test]
    fn a_kept_checkout_whose_git_config_a_run_changed_is_made_anew_where_it_belongs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        let repo = Repository::init(&root).unwrap();
        let c1 = commit_all(&repo);
        let cp = Checkpoints::open(&root).unwrap();
        let dir = tmp.path().join("co");
        let mut kept = None;
        cp.checkout_sealed_reusing(&c1, &dir, &[], &mut kept)
            .unwrap();
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        let c2 = commit_all(&repo);

        // A test run points the checkout's work tree elsewhere and turns
        // line endings over: the repository wfx holds open must not be
        // used as if nothing changed, nor the changed one followed.
        let victim = tmp.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        let config = dir.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\tworktree = {}\n\tautocrlf = true\n",
            victim.display()
        ));
        std::fs::write(&config, text).unwrap();
        let co = cp
            .checkout_sealed_reusing(&c2, &dir, &[], &mut kept)
            .unwrap();
        assert_eq!(co.commit, c2);
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "two\n");
        let config = std::fs::read_to_string(&config).unwrap();
        assert!(!config.contains("worktree"), "{config}");

        // Reused next time, from what wfx wrote.
        std::fs::write(root.join("a.txt"), "three\n").unwrap();
        let c3 = commit_all(&repo);
        let config_changed = || changed(&dir.join(".git/config"));
        let config_was = config_changed();
        std::thread::sleep(std::time::Duration::from_millis(50));
        cp.checkout_sealed_reusing(&c3, &dir, &[], &mut kept)
            .unwrap();
        assert_eq!(config_changed(), config_was, "not reused");
        assert_eq!(
            std::fs::read_to_string(dir.join("a.txt")).unwrap(),
            "three\n"
        );
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    }
}
