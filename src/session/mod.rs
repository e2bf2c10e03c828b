//! Sessions on disk: ids, paths, atomic store, lock, discovery, tasks and
//! archiving.

pub mod archive;
pub mod check;
pub mod foreign;
pub mod id;
pub mod layout;
pub mod store;
pub mod tasks;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use foreign::Owner;
pub use layout::{SessionPaths, Workspace};

use crate::artifacts::{Config, IterationState, Timestamp, WorkflowSession};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Active,
    Archived,
}

/// What a command without an id does when several active sessions fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Several {
    /// List them and ask for an id.
    Ask,
    /// List them and mention `-y`.
    AskOrYes,
    /// Take the most recently updated.
    Latest,
}

impl Several {
    /// `-y`: the most recently updated; else list them and mention `-y`.
    pub fn latest_if(yes: bool) -> Several {
        if yes {
            Several::Latest
        } else {
            Several::AskOrYes
        }
    }
}

/// `kind` of a `wfx run` session's `workflow-session.json`.
pub const RUN_KIND: &str = "run";

/// An active session a command without an id could mean, with its
/// session file (`None`: unreadable).
pub type Candidate = (SessionRef, Option<WorkflowSession>);

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
    /// Find a session by a user-given id, active first, then archived. Any
    /// existing `WFS-…` directory name is found, also one another tool made
    /// ([`id::validate_existing_id`]).
    pub fn find(&self, id: &str) -> Result<SessionRef> {
        id::validate_existing_id(id)?;
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

    /// A session wfx made, by a user-given id: a foreign session is
    /// refused with what to do instead.
    pub fn find_own(&self, id: &str) -> Result<SessionRef> {
        let sref = self.find(id)?;
        if self.owner(&sref) == Owner::Foreign {
            return Err(Error::usage(format!(
                "{id} was not made by wfx (its workflow-session.json has no wfx_version); \
                 wfx only reads it: `wfx session show {id}` shows it, \
                 `wfx test-fix-gen {id}` plans tests for what it implemented"
            )));
        }
        Ok(sref)
    }

    /// wfx's own sessions among `list(include_archived)`, and how many
    /// foreign ones were passed over.
    pub fn list_own(&self, include_archived: bool) -> Result<(Vec<SessionRef>, usize)> {
        let mut own = Vec::new();
        let mut foreign = 0;
        for s in self.list(include_archived)? {
            match self.owner(&s) {
                Owner::Wfx => own.push(s),
                Owner::Foreign => foreign += 1,
            }
        }
        Ok((own, foreign))
    }

    fn foreign_note(foreign: usize, dir: &str) -> String {
        match foreign {
            0 => String::new(),
            1 => format!(" (1 session in {dir} was made by another tool; wfx never picks it)"),
            n => format!(" ({n} sessions in {dir} were made by other tools; wfx never picks them)"),
        }
    }

    /// `updated_at` of a session, for picking the latest (unreadable: None,
    /// the oldest).
    pub fn updated_at(&self, s: &SessionRef) -> Option<Timestamp> {
        let file = s.paths.session_json();
        store::read_json_fast::<WorkflowSession>(&file, &self.rel(&file))
            .ok()
            .map(|w| w.updated_at)
    }

    /// The session a command without an explicit id means: the single
    /// active wfx session of `kind` (e.g. `test`); with several, list them
    /// and fail with exit 2, unless `pick_latest` (`-y`) chooses the most
    /// recently updated. Sessions other tools made are never picked
    /// (DESIGN.md §10.6). A given id must name a wfx session.
    pub fn resolve(
        &self,
        given: Option<&str>,
        kind: Option<&str>,
        pick_latest: bool,
    ) -> Result<SessionRef> {
        self.resolve_active(given, kind, Several::latest_if(pick_latest))
    }

    /// [`Self::resolve`], saying what to do with several active sessions.
    pub fn resolve_active(
        &self,
        given: Option<&str>,
        kind: Option<&str>,
        several: Several,
    ) -> Result<SessionRef> {
        if let Some(id) = given {
            return self.find_own(id);
        }
        let (candidates, foreign) = self.active_of_kind(kind)?;
        self.pick_active(candidates, foreign, several)
    }

    /// The one of `candidates` ([`Self::active_of_kind`]) a command without
    /// an id means, as [`Self::resolve_active`] says.
    pub fn pick_active(
        &self,
        mut candidates: Vec<Candidate>,
        foreign: usize,
        several: Several,
    ) -> Result<SessionRef> {
        let active = self.rel(&self.active_dir());
        match candidates.len() {
            0 => Err(Error::usage(format!(
                "no active session in {active}{}; create one with `wfx test-fix-gen \"<description>\"`",
                Self::foreign_note(foreign, &active)
            ))),
            1 => Ok(candidates.remove(0).0),
            _ if several == Several::Latest => {
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
                let how = match several {
                    Several::AskOrYes => "name one (or pass -y for the most recently updated)",
                    _ => "name one",
                };
                Err(Error::usage(format!(
                    "several active sessions; {how}:\n{}",
                    lines.join("\n")
                )))
            }
        }
    }

    /// The active wfx sessions a command without an id could mean: those
    /// of `kind` (any kind: `None`) and those whose session file cannot be
    /// read; and how many foreign sessions were passed over.
    pub fn active_of_kind(&self, kind: Option<&str>) -> Result<(Vec<Candidate>, usize)> {
        let (own, foreign) = self.list_own(false)?;
        let mut candidates = Vec::new();
        for s in own {
            match self.load_session(&s) {
                Ok(ws) if kind.is_none_or(|k| ws.kind == k) => candidates.push((s, Some(ws))),
                Ok(_) => {}
                // A `wfx run` killed before its session file was in place
                // (its resume finishes it): not another kind's to take.
                Err(_)
                    if kind.is_some_and(|k| k != RUN_KIND) && s.paths.workflow_copy().is_file() => {
                }
                Err(_) => candidates.push((s, None)),
            }
        }
        Ok((candidates, foreign))
    }

    /// The session `wfx status`, `wfx report` and `wfx session show` mean
    /// without an id (DESIGN.md §10.7): the one active wfx session, else
    /// the most recently updated wfx session, archived ones included.
    pub fn pick_for_view(&self, given: Option<&str>) -> Result<SessionRef> {
        if let Some(id) = given {
            return self.find_own(id);
        }
        let (active, _) = self.list_own(false)?;
        if let [one] = active.as_slice() {
            return Ok(one.clone());
        }
        let (all, foreign) = self.list_own(true)?;
        all.into_iter()
            .max_by_key(|s| (self.updated_at(s), s.location == Location::Active))
            .ok_or_else(|| {
                let dir = self.rel(&self.workflow_dir());
                Error::usage(format!(
                    "no wfx session in {dir}{}; create one with `wfx test-fix-gen \"<description>\"`",
                    Self::foreign_note(foreign, &dir)
                ))
            })
    }

    /// `.workflow/wfx.json`, or the defaults when there is none. An invalid
    /// config is an error listing every problem with its JSON pointer:
    /// schema problems first, then (for a schema-valid file) the semantic
    /// checks of `agents::config::check`.
    pub fn load_config(&self) -> Result<Config> {
        let path = self.config_path();
        let shown = self.rel(&path);
        let cfg: Config = if path.exists() {
            store::read_json_typed(&path, &shown, Config::within_schema)?
        } else {
            Config::default()
        };
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
