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
    [
        ".workflow/active",
        ".workflow/archives",
        ".workflow/.cache",
        ".workflow/.locks",
    ]
    .iter()
    .any(|d| path == *d || path.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
}

/// Where the sealed checkout of `session` of the project at `root` lives:
/// in the system's temp directory, named so that the next run finds and
/// removes one a killed run left.
pub fn checkout_dir(root: &Path, session: &str) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    std::env::temp_dir().join(format!(
        "wfx-sealed-{session}-{:012x}",
        h.finish() & 0xffff_ffff_ffff
    ))
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
        let tree = r
            .git
            .find_tree(tree)
            .map_err(ctx("cannot read the sealed tree"))?;
        let (author, committer) = r.signatures()?;
        let id = r
            .git
            .commit(None, &author, &committer, message, &tree, &[&head])
            .map_err(ctx("cannot create the sealed commit"))?;
        if let Some(name) = r.session_ref("sealed") {
            r.git
                .reference(&name, id, true, "wfx: sealed run")
                .map_err(ctx(format!("cannot write {name}")))?;
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
        let Some(r) = &self.repo else {
            return Err(Error::Internal(
                "a sealed checkout needs a repository".into(),
            ));
        };
        remove_checkout(dir).map_err(|e| Error::io(dir, e))?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let id =
            Oid::from_str(commit).map_err(|_| Error::Internal(format!("{commit}: not an id")))?;
        // The repository is made by hand, with only what opening it and
        // checking out need: `HEAD` (detached at `commit`), `refs/`, a
        // minimal `config` and `objects/info/alternates` to this
        // repository's objects. `git init` would also make hook samples,
        // `description`, `refs/heads`, `refs/tags`, `objects/pack`, and
        // `set_head` a lock file and a reflog: every new inode is a cost
        // of each sealed run.
        let gitdir = dir.join(".git");
        let info = gitdir.join("objects/info");
        std::fs::create_dir_all(&info).map_err(|e| Error::io(&info, e))?;
        let refs = gitdir.join("refs");
        std::fs::create_dir(&refs).map_err(|e| Error::io(&refs, e))?;
        let objects = r.git.commondir().join("objects");
        let mut files = vec![
            (info.join("alternates"), format!("{}\n", objects.display())),
            (gitdir.join("HEAD"), format!("{id}\n")),
            (
                gitdir.join("config"),
                "[core]\n\trepositoryformatversion = 0\n\tbare = false\n".to_string(),
            ),
        ];
        // A shallow history stays readable in the checkout.
        let shallow = r.git.commondir().join("shallow");
        if shallow.is_file()
            && let Ok(text) = std::fs::read_to_string(&shallow)
        {
            files.push((gitdir.join("shallow"), text));
        }
        for (path, text) in files {
            std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        }
        let repo = Repository::open(&gitdir).map_err(ctx("cannot open the sealed checkout"))?;
        let mut co = git2::build::CheckoutBuilder::new();
        co.force();
        repo.checkout_head(Some(&mut co))
            .map_err(ctx(format!("cannot check out {commit}")))?;
        let root = dir.join(paths::bytes_to_path(
            r.prefix.strip_suffix(b"/").unwrap_or(&[]),
        ));
        let project = r.workdir.join(paths::bytes_to_path(
            r.prefix.strip_suffix(b"/").unwrap_or(&[]),
        ));
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
        if let Some(parent) = exclude.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&exclude, lines).map_err(|e| Error::io(&exclude, e))?;
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
        let mut walk_from: Vec<(String, &'static str)> = r.ignored_entries()?;
        walk_from.extend(r.untracked_entries()?.into_iter().map(|p| (p, "untracked")));
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
        let prefix = paths::bytes_to_path(self.prefix.strip_suffix(b"/").unwrap_or(&[]));
        let base = self.workdir.join(prefix);
        if rel.is_empty() { base } else { base.join(rel) }
    }

    /// The git-ignored entries of the project (an ignored directory as
    /// one entry, not walked), project-relative, with why they count.
    fn ignored_entries(&self) -> Result<Vec<(String, &'static str)>> {
        self.status_entries(Status::IGNORED, true, false)
            .map(|v| v.into_iter().map(|p| (p, "git-ignored")).collect())
    }

    /// Untracked, not ignored, entries of the project.
    fn untracked_entries(&self) -> Result<Vec<String>> {
        self.status_entries(Status::WT_NEW, false, false)
    }

    /// Entries of the project's status with `want` (ignored ones, or
    /// untracked ones), `.workflow/`'s sessions aside; `recurse`: list the
    /// files of an untracked directory instead of the directory.
    fn status_entries(&self, want: Status, ignored: bool, recurse: bool) -> Result<Vec<String>> {
        let mut opts = StatusOptions::new();
        // Ignored entries inside an untracked directory (`.workflow/` before
        // wfx's first commit) are found only by looking into it.
        opts.include_untracked(true)
            .include_ignored(ignored)
            .recurse_untracked_dirs(recurse || ignored)
            .recurse_ignored_dirs(false)
            .exclude_submodules(true);
        let scope = self.prefix.clone();
        if !scope.is_empty() {
            opts.pathspec(paths::bytes_to_path(&scope));
        }
        let statuses = self
            .git
            .statuses(Some(&mut opts))
            .map_err(ctx("cannot read the status of the work tree"))?;
        Ok(statuses
            .iter()
            .filter(|e| e.status().intersects(want))
            .map(|e| self.show(e.path_bytes()))
            .filter(|p| !is_wfx_own(p.trim_end_matches('/')))
            .collect())
    }
}
