//! How long the last run of each test command took, for the estimate on
//! the progress line ("eta ~12 s"). Kept in `.workflow/.cache/run-times.json`:
//! scratch data shared by `wfx test`, every session and `wfx run`, so the
//! first run of a new session has the previous session's time. Never part
//! of a session, never committed; a missing or unreadable file only means
//! no estimate, and a failure to write it is not an error.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::session::layout::Workspace;
use crate::session::store;

/// Runs remembered (the most recent ones).
const KEEP: usize = 64;

const FILE: &str = "run-times.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Times {
    /// Oldest first: `[key, milliseconds]`.
    runs: Vec<(String, u64)>,
}

/// Which runs are "the same": the command, the arguments added to it and
/// the subset of tests (a retest of two tests is not the whole suite).
pub fn key(command: &str, subset: Option<&[String]>, extra: &[String]) -> String {
    let mut key = command.to_string();
    for a in extra {
        key.push(' ');
        key.push_str(a);
    }
    if let Some(ids) = subset {
        let mut ids = ids.to_vec();
        ids.sort();
        let mut h = DefaultHasher::new();
        ids.hash(&mut h);
        key.push_str(&format!(" [{} tests {:016x}]", ids.len(), h.finish()));
    }
    key
}

fn path(root: &Path) -> PathBuf {
    Workspace::new(root).cache_dir().join(FILE)
}

/// The last recorded time of `key` in the project at `root`.
pub fn last(root: &Path, key: &str) -> Option<Duration> {
    let text = std::fs::read(path(root)).ok()?;
    let times: Times = serde_json::from_slice(&text).ok()?;
    times
        .runs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, ms)| Duration::from_millis(*ms))
}

/// Remember that `key` took `took` (best effort).
pub fn record(root: &Path, key: &str, took: Duration) {
    let file = path(root);
    let mut times: Times = std::fs::read(&file)
        .ok()
        .and_then(|t| serde_json::from_slice(&t).ok())
        .unwrap_or_default();
    times.runs.retain(|(k, _)| k != key);
    times.runs.push((
        key.to_string(),
        took.as_millis().min(u64::MAX as u128) as u64,
    ));
    let excess = times.runs.len().saturating_sub(KEEP);
    times.runs.drain(..excess);
    let Ok(bytes) = serde_json::to_vec_pretty(&times) else {
        return;
    };
    // No fsync, no temp file: a crash or a concurrent run that tears it
    // loses an estimate and nothing else, and a run does not make (and
    // remove) an inode for it.
    if store::ensure_cache_dir(&Workspace::new(root)).is_ok() {
        let _ = crate::fsx::overwrite(&file, &crate::redact::redact(&bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_time_of_the_same_run_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let full = key("pytest", None, &[]);
        let ids = ["b".to_string(), "a".to_string()];
        let subset = key("pytest", Some(&ids), &[]);
        assert_ne!(full, subset);
        assert_eq!(
            subset,
            key("pytest", Some(&["a".to_string(), "b".to_string()]), &[]),
            "the order of the ids does not matter"
        );
        assert_ne!(full, key("pytest", None, &["-k".into(), "x".into()]));
        assert_eq!(last(root, &full), None);
        record(root, &full, Duration::from_millis(23_000));
        record(root, &subset, Duration::from_millis(900));
        record(root, &full, Duration::from_millis(21_000));
        assert_eq!(last(root, &full), Some(Duration::from_millis(21_000)));
        assert_eq!(last(root, &subset), Some(Duration::from_millis(900)));
        let ignore = std::fs::read_to_string(root.join(".workflow/.cache/.gitignore")).unwrap();
        assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
        for i in 0..KEEP {
            record(root, &format!("cmd {i}"), Duration::from_millis(1));
        }
        assert_eq!(last(root, &full), None, "only the recent runs are kept");
        std::fs::write(path(root), "not json").unwrap();
        assert_eq!(last(root, "cmd 1"), None);
        record(root, "cmd 1", Duration::from_millis(5));
        assert_eq!(last(root, "cmd 1"), Some(Duration::from_millis(5)));
    }
}
