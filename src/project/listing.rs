//! Listing a project's files: the git index (tracked files) when the root
//! is in a git work tree, else a directory walk that skips VCS data, build
//! output, dependencies and caches; and, for whoever must see new files
//! too, the untracked files git does not ignore.

use std::path::Path;

use crate::error::{Error, Result};

named_enum! {
    plain
    /// Where the file list came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Listing {
        /// The git index (tracked files).
        GitIndex = "git-index",
        /// A directory walk (not a git repository).
        Walk = "walk",
    }
}

/// Directories a walk never enters: VCS data, build output, dependencies,
/// caches and wfx's own state.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".workflow",
    "target",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".idea",
    ".vscode",
    ".next",
    ".nuxt",
];

/// Project files, relative with `/` separators, sorted: the git index when
/// `root` is inside a git work tree, else a walk that skips [`SKIP_DIRS`]
/// and virtualenvs (directories holding `pyvenv.cfg`). `.workflow/` is
/// left out either way.
pub fn list_files(root: &Path) -> Result<(Vec<String>, Listing)> {
    if let Some(files) = git_index_files(root) {
        return Ok((files, Listing::GitIndex));
    }
    Ok((walk_files(root)?, Listing::Walk))
}

fn git_index_files(root: &Path) -> Option<Vec<String>> {
    let repo = git2::Repository::open(root).ok()?;
    let workdir = repo.workdir()?.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    // The index is relative to the repository's work tree; keep only files
    // under `root` (which may be a subdirectory of it).
    let prefix = root
        .strip_prefix(&workdir)
        .ok()?
        .to_string_lossy()
        .replace('\\', "/");
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    };
    let index = repo.index().ok()?;
    let mut files: Vec<String> = index
        .iter()
        // Gitlinks (submodules) are directories, not files.
        .filter(|e| e.mode != 0o160000)
        .filter_map(|e| {
            let path = String::from_utf8_lossy(&e.path).into_owned();
            let rel = path.strip_prefix(&prefix)?.to_string();
            (!rel.starts_with(".workflow/")).then_some(rel)
        })
        .collect();
    files.sort();
    files.dedup();
    Some(files)
}

fn walk_files(root: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 || !e.file_type().is_dir() {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            !SKIP_DIRS.contains(&name.as_ref()) && !e.path().join("pyvenv.cfg").is_file()
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            // Unreadable directories are skipped, not fatal: planning works
            // with what it can see.
            Err(e) if e.io_error().is_some() && e.path().is_some_and(|p| p != root) => continue,
            Err(e) => {
                return Err(Error::io(root, std::io::Error::other(e.to_string())));
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        files.push(rel.join("/"));
    }
    files.sort();
    Ok(files)
}

/// Untracked files git does not ignore, relative to the work tree.
pub fn untracked_files(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Vec::new();
    };
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    // The root's entries but `.workflow/`: the session's files are not the
    // project's, and walking them on every analysis was most of its time.
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut walked = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name != ".workflow" && name != ".git" {
            opts.pathspec(name);
            walked = true;
        }
    }
    if !walked {
        return Vec::new();
    }
    opts.disable_pathspec_match(true);
    let Ok(statuses) = repo.statuses(Some(&mut opts)) else {
        return Vec::new();
    };
    statuses
        .iter()
        .filter(|e| e.status().contains(git2::Status::WT_NEW))
        .filter_map(|e| e.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(".workflow/"))
        .collect()
}
