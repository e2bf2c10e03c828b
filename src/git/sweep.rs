//! What a wfx run killed in the middle of a git operation leaves in the
//! repository, removed by the resume that finds its session lock stale
//! (DESIGN.md §5.1): lock files, and libgit2's temp object files. Only
//! files that are the dead run's by their name and age are touched, never
//! one a person's git may be using.

use std::path::Path;
use std::time::{Duration, SystemTime};

use git2::Repository;

/// Remove the lock files a killed wfx left beside its own refs
/// (`refs/wfx/<session>/<name>.lock`, made by every ref update): the next
/// update of that ref would fail on them. Only wfx's refs of `session` are
/// touched, never `index.lock` or a ref a person's git may be updating.
/// Call only while holding the session lock of a run that died. Returns
/// how many were removed.
pub fn sweep_ref_locks(root: &Path, session: &str) -> usize {
    let Ok(repo) = Repository::discover(root) else {
        return 0;
    };
    let dir = repo.commondir().join("refs/wfx").join(session);
    let mut removed = 0;
    for entry in walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_type().is_file()
            && entry.file_name().to_string_lossy().ends_with(".lock")
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The prefix of the temp file libgit2 writes a loose object to before
/// renaming it into place (`objects/tmp_object_git2_XXXXXX`); a kill in
/// between leaves it.
const TEMP_OBJECT: &str = "tmp_object_git2_";

/// Remove what a wfx run that started at `since` (RFC 3339, the dead
/// holder's lock) and was killed in the middle of a commit left: git's
/// lock files (`index.lock`, `HEAD.lock`, the branch's ref lock) and
/// libgit2's temp object files, each only when it was written after that
/// run started (so it is that run's, not another git process's). Call only
/// while holding the session lock of a run that died. Returns the removed
/// files, relative to the work tree.
pub fn sweep_dead_run(root: &Path, since: &str) -> Vec<String> {
    let Ok(started) = chrono::DateTime::parse_from_rfc3339(since) else {
        return Vec::new();
    };
    let started: SystemTime = started.to_utc().into();
    let Ok(repo) = Repository::discover(root) else {
        return Vec::new();
    };
    let gitdir = repo.path().to_path_buf();
    let mut candidates = vec![gitdir.join("index.lock"), gitdir.join("HEAD.lock")];
    if let Ok(head) = repo.find_reference("HEAD")
        && let Ok(Some(target)) = head.symbolic_target()
    {
        candidates.push(repo.commondir().join(format!("{target}.lock")));
    }
    let objects = repo.commondir().join("objects");
    if let Ok(entries) = std::fs::read_dir(&objects) {
        candidates.extend(
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(TEMP_OBJECT))
                .map(|e| e.path()),
        );
    }
    let mut removed = Vec::new();
    for path in candidates {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let written = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        // `since` has whole seconds: allow the second it was written in.
        if meta.is_file()
            && written + Duration::from_secs(1) >= started
            && std::fs::remove_file(&path).is_ok()
        {
            removed.push(
                path.strip_prefix(repo.workdir().unwrap_or(&gitdir))
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_runs_ref_locks_are_swept_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init(tmp.path()).unwrap();
        let refs = repo.path().join("refs/wfx/WFS-a/snapshots");
        std::fs::create_dir_all(&refs).unwrap();
        std::fs::write(refs.join("3.lock"), "").unwrap();
        std::fs::write(repo.path().join("refs/wfx/WFS-a/latest.lock"), "").unwrap();
        std::fs::create_dir_all(repo.path().join("refs/wfx/WFS-b")).unwrap();
        std::fs::write(repo.path().join("refs/wfx/WFS-b/latest.lock"), "").unwrap();
        std::fs::write(repo.path().join("index.lock"), "").unwrap();
        assert_eq!(sweep_ref_locks(tmp.path(), "WFS-a"), 2);
        assert!(!refs.join("3.lock").exists());
        assert!(
            repo.path().join("refs/wfx/WFS-b/latest.lock").exists(),
            "another session's"
        );
        assert!(repo.path().join("index.lock").exists(), "git's own");
        assert_eq!(sweep_ref_locks(&tmp.path().join("nowhere"), "WFS-a"), 0);
    }

    #[test]
    fn the_dead_runs_temp_objects_and_locks_go_older_and_other_files_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init(tmp.path()).unwrap();
        let objects = repo.path().join("objects");
        let at = |name: &str, age: Duration| {
            let path = objects.join(name);
            std::fs::write(&path, "x").unwrap();
            crate::fsx::set_mtime(&path, SystemTime::now() - age);
            path
        };
        let hour = Duration::from_secs(3600);
        let since = chrono::Utc::now() - chrono::Duration::minutes(5);
        let since = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let mine = at("tmp_object_git2_a1B2c3", Duration::ZERO);
        let older = at("tmp_object_git2_zZ9y8x", hour);
        let gits = at("tmp_obj_Qw3rTy", Duration::ZERO);
        std::fs::write(repo.path().join("index.lock"), "").unwrap();
        let mut removed = sweep_dead_run(tmp.path(), &since);
        removed.sort();
        assert_eq!(
            removed,
            [".git/index.lock", ".git/objects/tmp_object_git2_a1B2c3"]
        );
        assert!(!mine.exists());
        assert!(older.exists(), "written before the dead run started");
        assert!(gits.exists(), "not libgit2's name");
        assert!(sweep_dead_run(tmp.path(), "not a time").is_empty());
    }
}
