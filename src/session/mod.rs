//! Sessions on disk: ids, paths, atomic store, lock, discovery, tasks and
//! archiving.

pub mod check;
pub mod id;
pub mod layout;
pub mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use layout::{SessionPaths, Workspace};

use crate::artifacts::manifest::{ArchiveEntry, ArchiveManifest, ArchiveMetrics};
use crate::artifacts::session::SessionStatus;
use crate::artifacts::{Config, IterationState, Task, WorkflowSession};
use crate::error::{Error, Problem, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Active,
    Archived,
}

/// A session directory that exists.
#[derive(Debug, Clone)]
pub struct SessionRef {
    pub paths: SessionPaths,
    pub location: Location,
}

impl SessionRef {
    pub fn id(&self) -> &str {
        &self.paths.id
    }
}

impl Workspace {
    /// Find a session by a user-given id, active first, then archived.
    pub fn find(&self, id: &str) -> Result<SessionRef> {
        id::validate_user_id(id)?;
        let active = self.active(id);
        if active.dir.is_dir() {
            return Ok(SessionRef {
                paths: active,
                location: Location::Active,
            });
        }
        let archived = self.archived(id);
        if archived.dir.is_dir() {
            return Ok(SessionRef {
                paths: archived,
                location: Location::Archived,
            });
        }
        Err(Error::SessionNotFound {
            id: id.to_string(),
            looked_in: format!(
                "{} and {}",
                self.rel(&self.active_dir()),
                self.rel(&self.archives_dir())
            ),
        })
    }

    /// Whether an id is used in active/ or archives/ (for collision suffixes).
    pub fn id_taken(&self, id: &str) -> bool {
        self.active(id).dir.exists() || self.archived(id).dir.exists()
    }

    /// Session directories, sorted by id: active ones, then (if asked) archived.
    pub fn list(&self, include_archived: bool) -> Result<Vec<SessionRef>> {
        let mut out = Vec::new();
        let mut scan = |dir: PathBuf, location: Location| -> Result<()> {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Error::io(&dir, e)),
            };
            let mut found = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if id::is_session_id(name) && entry.path().is_dir() {
                    found.push(SessionRef {
                        paths: SessionPaths::new(entry.path(), name),
                        location,
                    });
                }
            }
            found.sort_by(|a, b| a.paths.id.cmp(&b.paths.id));
            out.extend(found);
            Ok(())
        };
        scan(self.active_dir(), Location::Active)?;
        if include_archived {
            scan(self.archives_dir(), Location::Archived)?;
        }
        Ok(out)
    }

    /// The session a command without an explicit id means: the single active
    /// session of `kind` (e.g. `test`); with several, list them and fail with
    /// exit 2, unless `pick_latest` chooses the most recently updated.
    pub fn resolve(
        &self,
        given: Option<&str>,
        kind: Option<&str>,
        pick_latest: bool,
    ) -> Result<SessionRef> {
        if let Some(id) = given {
            return self.find(id);
        }
        let mut candidates = Vec::new();
        for s in self.list(false)? {
            match self.load_session(&s) {
                Ok(ws) if kind.is_none_or(|k| ws.kind == k) => candidates.push((s, Some(ws))),
                Ok(_) => {}
                Err(_) => candidates.push((s, None)),
            }
        }
        match candidates.len() {
            0 => Err(Error::usage(format!(
                "no active session in {}; create one with `wfx test-fix-gen \"<description>\"`",
                self.rel(&self.active_dir())
            ))),
            1 => Ok(candidates.remove(0).0),
            _ if pick_latest => {
                candidates.sort_by_key(|(_, ws)| ws.as_ref().map(|w| w.updated_at));
                Ok(candidates.pop().expect("non-empty").0)
            }
            _ => {
                let lines: Vec<String> = candidates
                    .iter()
                    .map(|(s, ws)| match ws {
                        Some(w) => format!("  {}  {}  {}", s.id(), w.status, w.description),
                        None => format!("  {}  (unreadable)", s.id()),
                    })
                    .collect();
                Err(Error::usage(format!(
                    "several active sessions; name one (or pass -y for the most recently updated):\n{}",
                    lines.join("\n")
                )))
            }
        }
    }

    /// `.workflow/wfx.json`, or the defaults when there is none. An invalid
    /// config is an error listing every problem with its JSON pointer:
    /// schema problems first, then (for a schema-valid file) the semantic
    /// checks of `agents::config::check`.
    pub fn load_config(&self) -> Result<Config> {
        let path = self.config_path();
        let shown = self.rel(&path);
        let cfg: Config = store::read_json_opt(&path, &shown)?.unwrap_or_default();
        let problems = crate::agents::config::check(&cfg, &shown);
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        Ok(cfg)
    }

    pub fn load_session(&self, s: &SessionRef) -> Result<WorkflowSession> {
        let path = s.paths.session_json();
        store::read_json(&path, &self.rel(&path))
    }

    pub fn save_session(&self, s: &SessionRef, session: &WorkflowSession) -> Result<()> {
        store::write_json(&s.paths.session_json(), session)
    }

    pub fn load_iteration_state(&self, s: &SessionRef) -> Result<Option<IterationState>> {
        let path = s.paths.iteration_state();
        store::read_json_opt(&path, &self.rel(&path))
    }

    /// Every task of a session, found by scanning `.task/*.json` and indexed
    /// by the `id` inside; two files with one id is an error naming both.
    pub fn load_tasks(&self, paths: &SessionPaths) -> Result<Vec<(PathBuf, Task)>> {
        let dir = paths.task_dir();
        let mut files = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        files.sort();
        let mut by_id: BTreeMap<String, (PathBuf, Task)> = BTreeMap::new();
        let mut problems = Vec::new();
        for file in files {
            let shown = self.rel(&file);
            let task: Task = match store::read_json(&file, &shown) {
                Ok(t) => t,
                Err(Error::Invalid(p)) => {
                    problems.extend(p);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if let Some((other, _)) = by_id.get(&task.id) {
                problems.push(Problem {
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
            by_id.insert(task.id.clone(), (file, task));
        }
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        let mut tasks: Vec<_> = by_id.into_values().collect();
        tasks.sort_by_key(|a| task_order(&a.1.id));
        Ok(tasks)
    }

    /// Move an active session to `archives/` and record it in the manifest.
    /// Idempotent: a call after an interrupted archive finishes the job and
    /// never adds a second manifest entry.
    pub fn archive(&self, id: &str) -> Result<ArchiveEntry> {
        id::validate_user_id(id)?;
        let active = self.active(id);
        let archived = self.archived(id);
        if active.dir.is_dir() {
            if archived.dir.exists() {
                return Err(Error::usage(format!(
                    "cannot archive {id}: {} already exists",
                    self.rel(&archived.dir)
                )));
            }
            let sref = SessionRef {
                paths: active.clone(),
                location: Location::Active,
            };
            // A damaged artifact, or a manifest that cannot take the entry,
            // stops the archive before anything is moved or rewritten.
            self.ensure_session_valid(&active)?;
            let manifest_path = self.manifest_path();
            store::read_json_opt::<ArchiveManifest>(&manifest_path, &self.rel(&manifest_path))?;
            let mut session = self.load_session(&sref)?;
            let now = chrono::Utc::now();
            if !matches!(
                session.status,
                SessionStatus::Completed | SessionStatus::PartialSuccess | SessionStatus::Blocked
            ) {
                session.status = SessionStatus::Completed;
            }
            session.completed_at.get_or_insert(now);
            session.updated_at = now;
            self.save_session(&sref, &session)?;
            fs_err::create_dir_all(self.archives_dir())
                .map_err(|e| Error::io(self.archives_dir(), e))?;
            // The session's steps are durable already (the engine's
            // transaction); the move is made durable before the manifest
            // records it.
            std::fs::rename(&active.dir, &archived.dir).map_err(|e| Error::io(&active.dir, e))?;
            store::sync_dir(&self.archives_dir());
            store::sync_dir(active.dir.parent().unwrap_or(Path::new(".")));
        } else if !archived.dir.is_dir() {
            return Err(self
                .find(id)
                .err()
                .unwrap_or_else(|| Error::usage(format!("session {id} not found"))));
        }
        self.record_archive(id)
    }

    fn record_archive(&self, id: &str) -> Result<ArchiveEntry> {
        let manifest_path = self.manifest_path();
        let shown = self.rel(&manifest_path);
        let mut manifest: ArchiveManifest =
            store::read_json_opt(&manifest_path, &shown)?.unwrap_or_default();
        if let Some(existing) = manifest.sessions.iter().find(|e| e.id == id) {
            return Ok(existing.clone());
        }
        let sref = SessionRef {
            paths: self.archived(id),
            location: Location::Archived,
        };
        let session = self.load_session(&sref)?;
        let tasks = self.load_tasks(&sref.paths).unwrap_or_default();
        let state = self.load_iteration_state(&sref).ok().flatten();
        let entry = ArchiveEntry {
            id: id.to_string(),
            description: session.description.clone(),
            archived_at: chrono::Utc::now(),
            archive_path: self.rel(&sref.paths.dir),
            status: Some(session.status.to_string()),
            metrics: ArchiveMetrics {
                tasks_total: tasks.len() as u32,
                tasks_completed: tasks.iter().filter(|(_, t)| t.status.is_done()).count() as u32,
                iterations: state.as_ref().map_or(0, |s| s.iterations.len() as u32),
                final_pass_rate: state
                    .as_ref()
                    .and_then(|s| s.iterations.last().map(|i| i.pass_rate)),
            },
            extra: Default::default(),
        };
        manifest.sessions.push(entry.clone());
        store::write_json(&manifest_path, &manifest)?;
        Ok(entry)
    }
}

/// Sort key that puts `IMPL-001 < IMPL-001.3 < IMPL-001.5 < IMPL-002 <
/// IMPL-fix-2 < IMPL-fix-10`.
pub fn task_order(id: &str) -> (u8, Vec<u64>, String) {
    let fix = id.contains("-fix-");
    let nums = id
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    (u8::from(fix), nums, id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_sort_naturally() {
        let mut ids = vec![
            "IMPL-fix-10",
            "IMPL-002",
            "IMPL-001.5",
            "IMPL-fix-2",
            "IMPL-001",
            "IMPL-001.3",
        ];
        ids.sort_by_key(|id| task_order(id));
        assert_eq!(
            ids,
            [
                "IMPL-001",
                "IMPL-001.3",
                "IMPL-001.5",
                "IMPL-002",
                "IMPL-fix-2",
                "IMPL-fix-10"
            ]
        );
    }
}
