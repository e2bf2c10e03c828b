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

/// Whether a run that took `ms` says nothing new about an estimate of
/// `known` ms: within a fifth of it, or of a quarter second. The estimate
/// is shown rounded ("eta ~12 s"), so rewriting the file for that is pure
/// cost: each rewrite is a new file renamed over the old, and on ext4 a
/// new inode costs more the more were freed lately (issue #30).
fn close_enough(known: u64, ms: u64) -> bool {
    known.abs_diff(ms) <= (known / 5).max(250)
}

/// Remember that `key` took `took` (best effort). A time close to the
/// one remembered leaves the file as it is.
pub fn record(root: &Path, key: &str, took: Duration) {
    let file = path(root);
    let mut times: Times = std::fs::read(&file)
        .ok()
        .and_then(|t| serde_json::from_slice(&t).ok())
        .unwrap_or_default();
    let ms = took.as_millis().min(u64::MAX as u128) as u64;
    if times
        .runs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .is_some_and(|(_, known)| close_enough(*known, ms))
    {
        return;
    }
    times.runs.retain(|(k, _)| k != key);
    times.runs.push((key.to_string(), ms));
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
        record(root, &full, Duration::from_millis(17_000));
        assert_eq!(last(root, &full), Some(Duration::from_millis(17_000)));
        let written = std::fs::metadata(path(root)).unwrap().modified().unwrap();
        record(root, &full, Duration::from_millis(18_000));
        assert_eq!(
            last(root, &full),
            Some(Duration::from_millis(17_000)),
            "a time close to the one remembered is not written"
        );
        assert_eq!(
            std::fs::metadata(path(root)).unwrap().modified().unwrap(),
            written
        );
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

    #[test]
    fn only_a_time_that_changes_the_estimate_is_written() {
        for (known, ms, close) in [
            (0, 0, true),
            (0, 250, true),
            (0, 251, false),
            (20_000, 24_000, true),
            (20_000, 16_000, true),
            (20_000, 24_001, false),
            (20_000, 15_999, false),
            (1_000, 1_250, true),
            (1_000, 1_251, false),
        ] {
            assert_eq!(close_enough(known, ms), close, "{known} {ms}");
        }
    }
}
