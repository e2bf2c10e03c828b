//! Validation of a whole session directory: what `wfx validate ID` prints,
//! and the check every command that changes a session runs first, so a
//! session with a damaged artifact is refused (exit 2, every problem
//! listed) before anything in it is written, moved or overwritten.

use std::path::{Path, PathBuf};

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
        let mut problems: Vec<Problem> = artifact_files(&paths.dir)
            .iter()
            .filter(|f| !known(f))
            .flat_map(|f| self.validate_file(f))
            .collect();
        if let Err(Error::Invalid(p)) = self.load_tasks(paths) {
            problems.extend(
                p.into_iter()
                    .filter(|p| p.message.starts_with("duplicate task id")),
            );
        }
        problems
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
        let problems = self.session_problems_but(paths, known);
        if problems.is_empty() {
            self.settle_task_overlays(paths)
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

    #[test]
    fn an_empty_session_directory_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        let paths = ws.active("WFS-a");
        std::fs::create_dir_all(&paths.dir).unwrap();
        assert!(ws.ensure_session_valid(&paths).is_ok());
    }
}
