//! Validation of a whole session directory: what `wfx validate ID` prints,
//! and the check every command that changes a session runs first, so a
//! session with a damaged artifact is refused (exit 2, every problem
//! listed) before anything in it is written, moved or overwritten.

use std::path::{Path, PathBuf};

use super::tasks::Scan;
use super::{SessionPaths, Workspace, store};
use crate::artifacts::{self, Artifact};
use crate::error::{Error, Problem, Result};

/// Every file under `dir` that has a schema, sorted.
pub fn artifact_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && artifacts::schema_for_path(e.path()).is_some())
        .map(walkdir::DirEntry::into_path)
        .collect();
    files.sort();
    files
}

impl Workspace {
    /// The problems of one artifact file (empty when it is valid or has no
    /// schema): unreadable, too large, not UTF-8, not JSON, or not matching
    /// its schema; for `wfx.json` also the semantic checks of the config.
    pub fn validate_file(&self, file: &Path) -> Vec<Problem> {
        let shown = self.rel(file);
        let Some(schema) = artifacts::schema_for_path(file) else {
            return vec![];
        };
        let text = match store::read_text(file, &shown) {
            Ok(t) => t,
            Err(Error::Invalid(p)) => return p,
            Err(e) => return vec![Problem::whole(shown, e.to_string())],
        };
        match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => vec![Problem::bad_json(shown, &e)],
            Ok(v) => {
                let (schema, v) = if schema == artifacts::ArchiveManifest::SCHEMA {
                    (schema, artifacts::manifest::normalize(v).value)
                } else {
                    (artifacts::schema_for_value(schema, &v), v)
                };
                let mut problems = artifacts::validate_value(schema, &shown, &v);
                if problems.is_empty()
                    && schema == artifacts::Config::SCHEMA
                    && let Ok(cfg) = serde_json::from_value::<artifacts::Config>(v)
                {
                    problems.extend(crate::agents::config::check(&cfg, &shown));
                }
                problems
            }
        }
    }

    /// Every problem of a session directory: each artifact against its
    /// schema, and two task files with one id.
    pub fn session_problems(&self, paths: &SessionPaths) -> Vec<Problem> {
        self.session_problems_but(paths, &|_| false)
    }

    /// [`session_problems`](Self::session_problems), except the files
    /// `known` vouches for: they hold what this process wrote from typed
    /// values, valid by construction, so their schemas need not be
    /// compiled to check them again (issue #30).
    pub fn session_problems_but(
        &self,
        paths: &SessionPaths,
        known: &dyn Fn(&Path) -> bool,
    ) -> Vec<Problem> {
        self.problems_and_tasks(paths, known).0
    }

    /// The session's problems, and the scan of `.task/` that found two
    /// task files with one id, for settling overlays without reading
    /// every task again.
    fn problems_and_tasks(
        &self,
        paths: &SessionPaths,
        known: &dyn Fn(&Path) -> bool,
    ) -> (Vec<Problem>, Result<Scan>) {
        let mut problems: Vec<Problem> = artifact_files(&paths.dir)
            .iter()
            .filter(|f| !known(f))
            .flat_map(|f| self.validate_file(f))
            .collect();
        let scan = self.scan_tasks(paths);
        if let Ok(scan) = &scan {
            problems.extend(
                (scan.problems.iter())
                    .filter(|p| p.message.starts_with("duplicate task id"))
                    .cloned(),
            );
        }
        (problems, scan)
    }

    /// Refuse to change a session with an invalid artifact: exit 2 with
    /// every problem (`file: /pointer: message`), before any write. A valid
    /// session then has any status overlay another tool left folded into
    /// its task ([`Workspace::settle_task_overlays`]), so the command's
    /// writers find one file per task. Callers hold the session's lock.
    pub fn ensure_session_valid(&self, paths: &SessionPaths) -> Result<()> {
        self.ensure_session_valid_but(paths, &|_| false)
    }

    /// [`ensure_session_valid`](Self::ensure_session_valid), the files
    /// `known` vouches for not checked again (see
    /// [`session_problems_but`](Self::session_problems_but)).
    pub fn ensure_session_valid_but(
        &self,
        paths: &SessionPaths,
        known: &dyn Fn(&Path) -> bool,
    ) -> Result<()> {
        let (problems, scan) = self.problems_and_tasks(paths, known);
        if problems.is_empty() {
            self.settle_scanned(paths, scan?)
        } else {
            Err(Error::Invalid(problems))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_artifact_is_reported_with_its_pointer() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        std::fs::create_dir_all(paths.process_dir()).unwrap();
        std::fs::create_dir_all(paths.task_dir()).unwrap();
        std::fs::write(paths.fix_history(), r#"{"entries": 7}"#).unwrap();
        std::fs::write(paths.process_dir().join("notes.json"), "not json").unwrap();
        let problems = ws.session_problems(&paths);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems[0].file,
            ".workflow/active/WFS-a/.process/fix-history.json"
        );
        assert_eq!(problems[0].pointer, "/entries");
        assert!(matches!(
            ws.ensure_session_valid(&paths),
            Err(Error::Invalid(p)) if p.len() == 1
        ));
    }

    const TASK: &str = r#"{"id": "IMPL-001", "title": "t", "status": "pending",
        "meta": {"type": "test-gen"}}"#;
    const STUB: &str = r#"{"status": "completed", "updated_at": "2026-06-18T07:03:37.123Z"}"#;

    /// The one scan of `.task/` both finds two files with one id and
    /// settles the overlays: settling follows only a clean check.
    #[test]
    fn overlays_settle_only_after_a_clean_check() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        std::fs::create_dir_all(paths.task_dir()).unwrap();
        let old_name = paths.task_dir().join("IMPL-001-gen.json");
        let twin = paths.task_dir().join("IMPL-001-twin.json");
        let stub = paths.task_dir().join("IMPL-001.json");
        std::fs::write(&old_name, TASK).unwrap();
        std::fs::write(&twin, TASK).unwrap();
        std::fs::write(&stub, STUB).unwrap();
        let problems = match ws.ensure_session_valid(&paths) {
            Err(Error::Invalid(p)) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0]
                .message
                .starts_with("duplicate task id IMPL-001")
        );
        assert_eq!(std::fs::read_to_string(&stub).unwrap(), STUB);

        std::fs::remove_file(&twin).unwrap();
        ws.ensure_session_valid(&paths).unwrap();
        assert!(!old_name.exists());
        let tasks = ws.load_tasks(&paths).unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].0, stub);
        assert_eq!(
            tasks[0].1.status,
            crate::artifacts::task::TaskStatus::Completed
        );
    }

    #[test]
    fn an_empty_session_directory_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        std::fs::create_dir_all(&paths.dir).unwrap();
        assert!(ws.ensure_session_valid(&paths).is_ok());
    }
}
