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
    if let Some(files) = git2::Repository::open(root)
        .ok()
        .and_then(|repo| git_index_files(&repo, root))
    {
        return Ok((files, Listing::GitIndex));
    }
    Ok((walk_files(root)?, Listing::Walk))
}

/// [`list_files`], and from git the untracked files it does not ignore
/// too: one open of the repository for both (each open reads git's
/// config files; issue #30).
pub fn list_files_and_untracked(root: &Path) -> Result<(Vec<String>, Listing)> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Ok((walk_files(root)?, Listing::Walk));
    };
    let Some(mut files) = git_index_files(&repo, root) else {
        return Ok((walk_files(root)?, Listing::Walk));
    };
    files.extend(untracked_files(&repo, root));
    Ok((files, Listing::GitIndex))
}

fn git_index_files(repo: &git2::Repository, root: &Path) -> Option<Vec<String>> {
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
fn untracked_files(repo: &git2::Repository, root: &Path) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_lists_tracked_and_untracked_files_but_not_ignored_or_wfxs_own() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let repo = git2::Repository::init(root).unwrap();
        std::fs::create_dir_all(root.join(".workflow/active")).unwrap();
        std::fs::create_dir_all(root.join("src/new")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.py")).unwrap();
        index.add_path(Path::new(".gitignore")).unwrap();
        index.write().unwrap();
        std::fs::write(root.join("src/new/b.py"), "y = 1\n").unwrap();
        std::fs::write(root.join("run.log"), "log\n").unwrap();
        std::fs::write(root.join(".workflow/active/s.json"), "{}").unwrap();

        let (mut files, listing) = list_files_and_untracked(root).unwrap();
        files.sort();
        assert_eq!(listing, Listing::GitIndex);
        assert_eq!(files, [".gitignore", "a.py", "src/new/b.py"]);
        let (files, listing) = list_files(root).unwrap();
        assert_eq!(listing, Listing::GitIndex);
        assert_eq!(files, [".gitignore", "a.py"]);
    }

    #[test]
    fn outside_git_both_walk_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("p");
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("node_modules/x/i.js"), "").unwrap();
        std::fs::write(root.join("a.py"), "").unwrap();
        for found in [list_files(&root), list_files_and_untracked(&root)] {
            let (files, listing) = found.unwrap();
            assert_eq!(listing, Listing::Walk);
            assert_eq!(files, ["a.py"]);
        }
    }
}
