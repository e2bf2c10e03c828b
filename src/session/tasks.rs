//! A session's tasks: found by scanning `.task/*.json` and indexed by the
//! `id` inside (DESIGN.md §2). New task files are named `<id>.json`, the
//! path Claude-Code-Workflow derives from an id; wfx 0.1's names
//! (`IMPL-001.3-validation.json`, `IMPL-001.5-review.json`) still load.
//! A file without `id`, `title` and `meta` is another tool's status overlay
//! ([`TaskOverlay`]), applied to the task its file stem names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{SessionPaths, Workspace, store};
use crate::artifacts::{self, Task, TaskOverlay};
use crate::error::{Error, Problem, Result};

/// What `.task/` holds, before overlays are applied.
#[derive(Debug, Default)]
pub(super) struct Scan {
    tasks: BTreeMap<String, (PathBuf, Task)>,
    /// (file, task id = file stem, overlay).
    overlays: Vec<(PathBuf, String, TaskOverlay)>,
    pub(super) problems: Vec<Problem>,
}

/// An overlay that names no task of the session: wfx ignores it and
/// `wfx validate` says so.
#[derive(Debug, Clone, PartialEq)]
pub struct OrphanOverlay {
    pub file: String,
    pub task_id: String,
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect::<Vec<_>>(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(dir, e)),
    };
    files.sort();
    Ok(files)
}

impl Workspace {
    pub(super) fn scan_tasks(&self, paths: &SessionPaths) -> Result<Scan> {
        let mut scan = Scan::default();
        for file in json_files(&paths.task_dir())? {
            let shown = self.rel(&file);
            let text = match store::read_text(&file, &shown) {
                Ok(t) => t,
                Err(Error::Invalid(p)) => {
                    scan.problems.extend(p);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let value = match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(v) => v,
                Err(e) => {
                    scan.problems.push(Problem::bad_json(shown, &e));
                    continue;
                }
            };
            if artifacts::task_overlay::is_overlay(&value) {
                match artifacts::parse_value::<TaskOverlay>(&shown, value) {
                    Ok(o) => {
                        let stem = file
                            .file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        scan.overlays.push((file, stem, o));
                    }
                    Err(p) => scan.problems.extend(p),
                }
                continue;
            }
            let task: Task = match artifacts::parse_value(&shown, value) {
                Ok(t) => t,
                Err(p) => {
                    scan.problems.extend(p);
                    continue;
                }
            };
            if let Some((other, _)) = scan.tasks.get(&task.id) {
                scan.problems.push(Problem {
                    file: shown.clone(),
                    pointer: "/id".into(),
                    message: format!(
                        "duplicate task id {} (also in {})",
                        task.id,
                        self.rel(other)
                    ),
                });
                continue;
            }
            scan.tasks.insert(task.id.clone(), (file, task));
        }
        Ok(scan)
    }

    /// Every task of a session, in [`super::task_order`], with the file it
    /// was read from. A status overlay another tool left is applied to its
    /// task (see [`TaskOverlay::apply`]). Two files with one id is an
    /// error naming both.
    pub fn load_tasks(&self, paths: &SessionPaths) -> Result<Vec<(PathBuf, Task)>> {
        let mut scan = self.scan_tasks(paths)?;
        if !scan.problems.is_empty() {
            return Err(Error::Invalid(scan.problems));
        }
        for (_, id, overlay) in &scan.overlays {
            if let Some((_, task)) = scan.tasks.get_mut(id) {
                overlay.apply(task);
            }
        }
        let mut tasks: Vec<_> = scan.tasks.into_values().collect();
        tasks.sort_by_key(|a| super::task_order(&a.1.id));
        Ok(tasks)
    }

    /// Overlays whose file stem is no task's id.
    pub fn orphan_overlays(&self, paths: &SessionPaths) -> Vec<OrphanOverlay> {
        let Ok(scan) = self.scan_tasks(paths) else {
            return Vec::new();
        };
        scan.overlays
            .iter()
            .filter(|(_, id, _)| !scan.tasks.contains_key(id))
            .map(|(file, id, _)| OrphanOverlay {
                file: self.rel(file),
                task_id: id.clone(),
            })
            .collect()
    }

    /// Fold each status overlay into its task's file, which takes the
    /// overlay's `<id>.json` name: first the task file gets the overlay
    /// applied (atomically; reading it with the overlay still there gives
    /// the same task, as applying is idempotent), then it is renamed over
    /// the overlay (atomic). A crash at any point leaves a session that
    /// reads the same. Called under the session's lock, before a command
    /// writes the session, so its writers see one file per task.
    pub fn settle_task_overlays(&self, paths: &SessionPaths) -> Result<()> {
        self.settle_scanned(paths, self.scan_tasks(paths)?)
    }

    /// [`settle_task_overlays`](Self::settle_task_overlays) with `.task/`
    /// as `scan` (just made under the lock) found it.
    pub(super) fn settle_scanned(&self, paths: &SessionPaths, mut scan: Scan) -> Result<()> {
        if !scan.problems.is_empty() {
            return Err(Error::Invalid(scan.problems));
        }
        let mut moved = false;
        for (overlay_file, id, overlay) in &scan.overlays {
            let Some((task_file, task)) = scan.tasks.get_mut(id) else {
                continue;
            };
            overlay.apply(task);
            store::write_json(task_file, task)?;
            std::fs::rename(&*task_file, overlay_file).map_err(|e| Error::io(&*task_file, e))?;
            moved = true;
        }
        if moved {
            store::sync_dir(&paths.task_dir());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::task::TaskStatus;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const LEGACY: &str = r#"{"id": "IMPL-001.3", "title": "Validate", "status": "pending",
        "meta": {"type": "code-validation"}}"#;
    const STUB: &str = r#"{"status": "completed", "updated_at": "2026-06-18T07:03:37.123Z",
        "status_history": [{"from": "unknown", "to": "completed", "changed_at": "2026-06-18T07:03:37.123Z"}]}"#;

    #[test]
    fn a_stub_next_to_an_old_name_applies_and_settles() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        let legacy = paths.task_dir().join("IMPL-001.3-validation.json");
        write(&legacy, LEGACY);
        write(&paths.task_dir().join("IMPL-001.3.json"), STUB);
        let tasks = ws.load_tasks(&paths).unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].0, legacy);
        assert_eq!(tasks[0].1.status, TaskStatus::Completed);
        assert!(ws.session_problems(&paths).is_empty());

        ws.settle_task_overlays(&paths).unwrap();
        assert!(!legacy.exists());
        let after = ws.load_tasks(&paths).unwrap();
        assert_eq!(after[0].0, paths.task_dir().join("IMPL-001.3.json"));
        assert_eq!(after[0].1, tasks[0].1);
        // Nothing left to settle.
        ws.settle_task_overlays(&paths).unwrap();
        assert_eq!(ws.load_tasks(&paths).unwrap(), after);
    }

    #[test]
    fn a_crash_between_the_two_settle_steps_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        let legacy = paths.task_dir().join("IMPL-001.3-validation.json");
        write(&legacy, LEGACY);
        write(&paths.task_dir().join("IMPL-001.3.json"), STUB);
        let want = ws.load_tasks(&paths).unwrap();
        // Step one done, step two not: the old file holds the applied task.
        store::write_json(&legacy, &want[0].1).unwrap();
        assert_eq!(ws.load_tasks(&paths).unwrap(), want);
    }

    #[test]
    fn a_stub_for_no_task_is_an_orphan_not_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        write(&paths.task_dir().join("IMPL-001.3.json"), LEGACY);
        write(&paths.task_dir().join("IMPL-009.json"), STUB);
        assert_eq!(ws.load_tasks(&paths).unwrap().len(), 1);
        assert!(ws.session_problems(&paths).is_empty());
        assert_eq!(
            ws.orphan_overlays(&paths),
            vec![OrphanOverlay {
                file: ".workflow/active/WFS-a/.task/IMPL-009.json".into(),
                task_id: "IMPL-009".into()
            }]
        );
        ws.settle_task_overlays(&paths).unwrap();
        assert!(paths.task_dir().join("IMPL-009.json").exists());
    }

    #[test]
    fn two_full_files_with_one_id_stay_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        write(&paths.task_dir().join("IMPL-001.3-validation.json"), LEGACY);
        write(&paths.task_dir().join("IMPL-001.3.json"), LEGACY);
        match ws.load_tasks(&paths) {
            Err(Error::Invalid(p)) => {
                assert_eq!(p.len(), 1);
                assert!(
                    p[0].message.starts_with("duplicate task id IMPL-001.3"),
                    "{p:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
