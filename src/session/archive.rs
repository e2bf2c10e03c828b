//! Archiving: `active/<id>` → `archives/<id>`, its paths rewritten to the
//! new place, and an entry appended to `archives/manifest.json` in the
//! array shape Claude-Code-Workflow reads (DESIGN.md §10.6).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Location, Owner, SessionRef, Workspace, id, store};
use crate::artifacts::manifest::{self, ArchiveEntry, ArchiveManifest};
use crate::artifacts::session::SessionStatus;
use crate::artifacts::{self, Artifact, Extra};
use crate::error::{Error, Problem, Result};

/// `archives/manifest.json` as read: its entries as written (another
/// tool's entries are written back exactly as they were).
#[derive(Debug, Default)]
pub struct ManifestFile {
    pub entries: Vec<Value>,
    /// The file had wfx 0.1's `{sessions: [...]}` shape.
    pub legacy: bool,
    /// Top-level fields of that old shape an array cannot hold.
    pub dropped: Extra,
    /// The bytes read, to keep a copy of an old file whose fields the
    /// array drops.
    raw: Vec<u8>,
}

impl ManifestFile {
    pub fn find(&self, session_id: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|e| e.get("session_id").and_then(Value::as_str) == Some(session_id))
    }
}

/// Replace `.workflow/active/<id>` by `.workflow/archives/<id>` wherever
/// it stands for the session directory: followed by `/` or by anything
/// that cannot continue an id (so `WFS-a` never touches `WFS-a-2`).
pub fn rewrite_session_paths(text: &str, id: &str) -> Option<String> {
    let from = format!(".workflow/active/{id}");
    let to = format!(".workflow/archives/{id}");
    let continues = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(i) = rest.find(&from) {
        let after = &rest[i + from.len()..];
        let whole = match after.chars().next() {
            None => true,
            Some('.') => !after[1..].starts_with(|c: char| continues(c)),
            Some(c) => !continues(c),
        };
        out.push_str(&rest[..i]);
        out.push_str(if whole { &to } else { &from });
        changed |= whole;
        rest = after;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Marks a copy of a session directory that is whole: what is left of
/// the move is to remove the original (see [`move_dir`]).
const COPIED: &str = ".wfx-copied";

/// Move a session directory to `to` (in `archives/`), durably: a rename
/// when both are on one filesystem; else (a session directory kept on
/// another disk, `.workflow/active` a link to it) a copy into a hidden
/// directory beside `to`, made durable and marked whole, renamed to `to`,
/// and only then the original removed. A run killed on the way leaves the
/// original, or a whole copy that the next archive finishes
/// ([`finish_copy`]).
fn move_dir(from: &Path, to: &Path) -> Result<()> {
    let parent = |p: &Path| p.parent().unwrap_or(Path::new(".")).to_path_buf();
    match std::fs::rename(from, to) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            let name = to.file_name().unwrap_or_default().to_string_lossy();
            let copy = parent(to).join(format!(".{name}.copying"));
            if copy.exists() {
                // An earlier copy a kill cut short.
                fs_err::remove_dir_all(&copy).map_err(|e| Error::io(&copy, e))?;
            }
            copy_tree(from, &copy).map_err(|e| Error::io(from, e))?;
            store::write_atomic(&copy.join(COPIED), b"")?;
            std::fs::rename(&copy, to).map_err(|e| Error::io(&copy, e))?;
            store::sync_dir(&parent(to));
            finish_copy(from, to)?;
            return Ok(());
        }
        Err(e) => return Err(Error::io(from, e)),
    }
    store::sync_dirs(&[&parent(to), &parent(from)]);
    Ok(())
}

/// When `to` is a whole copy of `from` (marked by [`move_dir`]): remove
/// `from`, then the mark. Whether it was one.
fn finish_copy(from: &Path, to: &Path) -> Result<bool> {
    let mark = to.join(COPIED);
    if !mark.is_file() {
        return Ok(false);
    }
    if from.exists() {
        fs_err::remove_dir_all(from).map_err(|e| Error::io(from, e))?;
        store::sync_dir(from.parent().unwrap_or(Path::new(".")));
    }
    fs_err::remove_file(&mark).map_err(|e| Error::io(&mark, e))?;
    Ok(true)
}

/// Copy the tree `from` to the new directory `to`: files with their bytes
/// and mode, made durable; links as links (never followed).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry.path().strip_prefix(from).unwrap_or(Path::new(""));
        let target = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
            std::fs::File::open(&target)?.sync_all()?;
        }
    }
    for entry in walkdir::WalkDir::new(to).contents_first(true) {
        let entry = entry.map_err(std::io::Error::other)?;
        if entry.file_type().is_dir() {
            store::sync_dir(entry.path());
        }
    }
    Ok(())
}

/// How an archive rewrites the archived session's files: what
/// [`ArchiveWrites::write`] wrote is durable once
/// [`ArchiveWrites::settle`] returns (before the manifest records it).
pub trait ArchiveWrites {
    /// The session's own file, updated before the move: durable once this
    /// returns.
    fn save(&mut self, path: &Path, bytes: &[u8]) -> Result<()>;
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<()>;
    /// The session, now in `dir`, is durable with everything written.
    fn settle(&mut self, dir: &Path) -> Result<()>;
    /// Whether `path` holds, untouched, what this process wrote: valid by
    /// construction, not checked against its schema again.
    fn wrote(&self, _path: &Path) -> bool {
        false
    }
    /// The session now lives in `dir` (it was moved there).
    fn moved_to(&mut self, _dir: &Path) {}
    /// What `path` holds, when this process wrote it and it is untouched
    /// since: known without reading it.
    fn known(&self, _path: &Path) -> Option<&[u8]> {
        None
    }
    /// Whether the session's own file is updated after the move, with the
    /// rewrites (one durable record for both), instead of saved before it.
    /// A run killed between the move and that record leaves the session
    /// archived without `archived_at`: the archive that finishes it
    /// ([`Workspace::archive_with`] again) makes the same update.
    fn updates_after_move(&self) -> bool {
        false
    }
}

/// Each file made durable as it is written.
struct DurableWrites;

impl ArchiveWrites for DurableWrites {
    fn save(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        store::write_atomic(path, bytes)
    }

    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        store::write_atomic(path, bytes)
    }

    fn settle(&mut self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// Files whose text may name session paths: JSON artifacts and Markdown.
/// Raw logs and agent output stay byte for byte what the process printed.
fn rewritable(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "json" || x == "md")
}

/// What the archive records in the session's file: a session archived
/// before it finished keeps its status (`paused`, `awaiting_fix`, …) and
/// gets no completion time, unless every task is done; `wfx session
/// abandon` names its own status (`status`).
fn mark_archived(
    session: &mut crate::artifacts::session::WorkflowSession,
    tasks: &[(PathBuf, crate::artifacts::Task)],
    status: Option<SessionStatus>,
    now: chrono::DateTime<chrono::Utc>,
) {
    let finished = |s: SessionStatus| {
        matches!(
            s.meaning(),
            SessionStatus::Completed
                | SessionStatus::PartialSuccess
                | SessionStatus::Blocked
                | SessionStatus::Abandoned
        )
    };
    if let Some(status) = status {
        session.status = status;
    } else if !finished(session.status)
        && !tasks.is_empty()
        && tasks.iter().all(|(_, t)| t.status.is_done())
    {
        session.status = SessionStatus::Completed;
    }
    if finished(session.status) {
        session.completed_at.get_or_insert(now);
    }
    session.archived_at = Some(now);
    session.updated_at = now;
}

impl Workspace {
    /// `archives/manifest.json` (missing: empty). An array, or the old
    /// object shape, that matches the schema; anything else is an error
    /// naming each problem, and the file is left as it is.
    pub fn read_manifest(&self) -> Result<ManifestFile> {
        let path = self.manifest_path();
        if !path.exists() {
            return Ok(ManifestFile::default());
        }
        let shown = self.rel(&path);
        let text = store::read_text(&path, &shown)?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| Error::Invalid(vec![Problem::bad_json(shown.clone(), &e)]))?;
        let n = manifest::normalize(value);
        let problems = artifacts::validate_value(ArchiveManifest::SCHEMA, &shown, &n.value);
        if !problems.is_empty() {
            return Err(Error::Invalid(problems));
        }
        let Value::Array(entries) = n.value else {
            return Err(Error::Internal("a valid manifest is an array".into()));
        };
        Ok(ManifestFile {
            entries,
            legacy: n.legacy,
            dropped: n.dropped,
            raw: text.into_bytes(),
        })
    }

    /// wfx sessions whose archive a kill cut short: moved to `archives/`
    /// (a real directory, never a link an agent planted there) but not in
    /// the manifest yet, so their files may still point into `active/`.
    /// Those `of` picks (the manifest is read only when there are any),
    /// the most recently updated last. Finishing one is the rest of its
    /// job: `Workspace::archive` for a run, the cycle's archive step
    /// (with its final commit) for a test session.
    pub fn cut_archives(&self, of: impl Fn(&SessionRef) -> bool) -> Result<Vec<SessionRef>> {
        let (own, _) = self.list_own(true)?;
        let mut cut: Vec<SessionRef> = own
            .into_iter()
            .filter(|s| s.location == Location::Archived && of(s))
            .filter(|s| std::fs::symlink_metadata(&s.paths.dir).is_ok_and(|m| m.is_dir()))
            .collect();
        if cut.is_empty() {
            return Ok(cut);
        }
        let manifest = self.read_manifest()?;
        cut.retain(|s| manifest.find(s.id()).is_none());
        cut.sort_by_cached_key(|s| self.updated_at(s));
        Ok(cut)
    }

    /// Write the manifest as an array, its sync overlapping `work`, and
    /// only if `work` succeeds. Converting the old object shape keeps
    /// every entry; if it also had other top-level fields, the old file is
    /// first copied to `manifest.v0.json` beside it.
    fn write_manifest_beside(
        &self,
        m: &ManifestFile,
        work: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        if m.legacy && !m.dropped.is_empty() {
            let backup = self.archives_dir().join("manifest.v0.json");
            if !backup.exists() {
                store::write_atomic(&backup, &m.raw)?;
            }
        }
        let bytes = store::json_bytes(&Value::Array(m.entries.clone()))?;
        store::write_atomic_beside(&self.manifest_path(), &bytes, work)
    }

    /// Move an active session to `archives/` and record it in the manifest.
    /// Idempotent: a call after an interrupted archive finishes the job and
    /// never adds a second manifest entry. A session archived by another
    /// tool (moved without a manifest entry) gets its entry.
    pub fn archive(&self, id: &str) -> Result<ArchiveEntry> {
        self.archive_as(id, None, &mut DurableWrites)
    }

    /// [`archive`](Self::archive), the archived session's files rewritten
    /// through `writes` (the engine's session transaction: one journal
    /// sync instead of an fsync per file).
    pub fn archive_with(&self, id: &str, writes: &mut dyn ArchiveWrites) -> Result<ArchiveEntry> {
        self.archive_as(id, None, writes)
    }

    /// [`archive`](Self::archive), the session marked `abandoned` first:
    /// a person gave it up (`wfx session abandon`). Its commits, refs and
    /// files are kept as they are.
    pub fn abandon(&self, id: &str) -> Result<ArchiveEntry> {
        self.archive_as(id, Some(SessionStatus::Abandoned), &mut DurableWrites)
    }

    fn archive_as(
        &self,
        id: &str,
        status: Option<SessionStatus>,
        writes: &mut dyn ArchiveWrites,
    ) -> Result<ArchiveEntry> {
        id::validate_existing_id(id)?;
        let active = self.active(id);
        let archived = self.archived(id);
        if active.dir.is_dir() && finish_copy(&active.dir, &archived.dir)? {
            // A copy to another filesystem that a kill interrupted after
            // it was whole: only the original was left to remove.
        } else if active.dir.is_dir() {
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
            if self.owner(&sref) == Owner::Foreign {
                return Err(Error::usage(format!(
                    "{id} was not made by wfx; archive it with the tool that made it"
                )));
            }
            // A damaged artifact, or a manifest that cannot take the entry,
            // stops the archive before anything is moved or rewritten.
            self.ensure_session_valid_but(&active, &|f| writes.wrote(f))?;
            self.read_manifest()?;
            if status.is_some() || !writes.updates_after_move() {
                let mut session = self.load_session_via(&sref, &*writes)?;
                let tasks = self.load_tasks(&active).unwrap_or_default();
                mark_archived(&mut session, &tasks, status, chrono::Utc::now());
                writes.save(&sref.paths.session_json(), &store::json_bytes(&session)?)?;
            }
            fs_err::create_dir_all(self.archives_dir())
                .map_err(|e| Error::io(self.archives_dir(), e))?;
            // The session's steps are durable already (the engine's
            // transaction); the move is made durable before the manifest
            // records it.
            move_dir(&active.dir, &archived.dir)?;
        } else if !archived.dir.is_dir() {
            return Err(self
                .find(id)
                .err()
                .unwrap_or_else(|| Error::usage(format!("session {id} not found"))));
        }
        self.record_archive(id, writes)
    }

    /// Paths inside the archived session's JSON and Markdown that point
    /// into `.workflow/active/<id>/` now point into `archives/`.
    /// `updated`: the session's file, updated after the move (see
    /// [`ArchiveWrites::updates_after_move`]), written with the rewrites.
    fn rewrite_archived_paths(
        &self,
        id: &str,
        writes: &mut dyn ArchiveWrites,
        updated: Option<(PathBuf, Vec<u8>)>,
    ) -> Result<()> {
        let dir = self.archived(id).dir;
        let files: Vec<_> = walkdir::WalkDir::new(&dir)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file() && rewritable(e.path()))
            .map(walkdir::DirEntry::into_path)
            .collect();
        let mut updated = updated;
        for file in files {
            let text = match updated.take_if(|(p, _)| *p == file) {
                Some((_, bytes)) => {
                    let text =
                        String::from_utf8(bytes).map_err(|e| Error::Internal(e.to_string()))?;
                    let new = rewrite_session_paths(&text, id).unwrap_or(text);
                    writes.write(&file, new.as_bytes())?;
                    continue;
                }
                None => match writes.known(&file).map(|b| String::from_utf8(b.to_vec())) {
                    Some(Ok(text)) => text,
                    _ => match store::read_text(&file, &self.rel(&file)) {
                        Ok(text) => text,
                        Err(_) => continue,
                    },
                },
            };
            if let Some(new) = rewrite_session_paths(&text, id) {
                writes.write(&file, new.as_bytes())?;
            }
        }
        if let Some((file, bytes)) = updated {
            // Not found by the walk (a link): written all the same.
            writes.write(&file, &bytes)?;
        }
        writes.settle(&dir)
    }

    /// The session's file; read without compiling its schema when
    /// `writes` vouches for it (see [`ArchiveWrites::wrote`]).
    fn load_session_via(
        &self,
        sref: &SessionRef,
        writes: &dyn ArchiveWrites,
    ) -> Result<crate::artifacts::session::WorkflowSession> {
        let path = sref.paths.session_json();
        if let Some(v) = writes
            .known(&path)
            .and_then(|b| serde_json::from_slice(b).ok())
        {
            Ok(v)
        } else if writes.wrote(&path) {
            store::read_json_fast(&path, &self.rel(&path))
        } else {
            self.load_session(sref)
        }
    }

    fn record_archive(&self, id: &str, writes: &mut dyn ArchiveWrites) -> Result<ArchiveEntry> {
        let mut manifest = self.read_manifest()?;
        if let Some(existing) = manifest.find(id) {
            return serde_json::from_value(existing.clone())
                .map_err(|e| Error::Internal(e.to_string()));
        }
        let sref = SessionRef {
            paths: self.archived(id),
            location: Location::Archived,
        };
        writes.moved_to(&sref.paths.dir);
        let now = chrono::Utc::now();
        // The entry is made from the session as it will be (counts and
        // statuses, which the rewrites of paths do not change), so that
        // the manifest's sync overlaps the rewrites'; it is put in place
        // after them, as before.
        let mut session = self.load_session_via(&sref, &*writes)?;
        let tasks = self.load_tasks(&sref.paths).unwrap_or_default();
        let newly = session.archived_at.is_none();
        if newly {
            if writes.updates_after_move() {
                mark_archived(&mut session, &tasks, None, now);
            } else {
                session.archived_at = Some(now);
            }
        }
        let state = self.load_iteration_state(&sref).ok().flatten();
        let summaries = std::fs::read_dir(sref.paths.summaries_dir())
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                    .count()
            })
            .unwrap_or(0);
        let end = session.completed_at.unwrap_or(now);
        let hours = (end - session.created_at).num_seconds().max(0) as f64 / 3600.0;
        let mut metrics = Extra::new();
        metrics.insert(
            "duration_hours".into(),
            json!((hours * 100.0).round() / 100.0),
        );
        metrics.insert(
            "tasks_completed".into(),
            json!(tasks.iter().filter(|(_, t)| t.status.is_done()).count()),
        );
        metrics.insert("summaries_generated".into(), json!(summaries));
        metrics.insert("tasks_total".into(), json!(tasks.len()));
        metrics.insert(
            "iterations".into(),
            json!(state.as_ref().map_or(0, |s| s.iterations.len())),
        );
        metrics.insert(
            "final_pass_rate".into(),
            json!(
                state
                    .as_ref()
                    .and_then(|s| s.iterations.last().map(|i| i.pass_rate))
            ),
        );
        let entry = ArchiveEntry {
            session_id: id.to_string(),
            description: session.description.clone(),
            archived_at: Some(
                session
                    .archived_at
                    .unwrap_or(now)
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ),
            archive_path: Some(self.rel(&sref.paths.dir)),
            metrics,
            tags: vec![json!("wfx"), json!(session.kind.clone())],
            lessons: Some(json!({"successes": [], "challenges": [], "watch_patterns": []})),
            kind: Some(session.kind.clone()),
            status: Some(session.status.to_string()),
            extra: Extra::new(),
        };
        manifest
            .entries
            .push(serde_json::to_value(&entry).map_err(|e| Error::Internal(e.to_string()))?);
        self.write_manifest_beside(&manifest, || {
            if writes.updates_after_move() {
                // The session's file is updated here, in the record of the
                // rewrites; already done when a finished archive is repeated.
                let updated = match newly {
                    true => Some((sref.paths.session_json(), store::json_bytes(&session)?)),
                    false => None,
                };
                return self.rewrite_archived_paths(id, writes, updated);
            }
            self.rewrite_archived_paths(id, writes, None)?;
            if newly {
                // Read again: the rewrites changed its paths.
                let mut rewritten = self.load_session_via(&sref, &*writes)?;
                rewritten.archived_at = Some(now);
                self.save_session(&sref, &rewritten)?;
            }
            Ok(())
        })?;
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_session_is_whole_and_a_marked_copy_is_finished() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("active/WFS-a");
        std::fs::create_dir_all(from.join(".process")).unwrap();
        std::fs::write(from.join("workflow-session.json"), "{}").unwrap();
        std::fs::write(from.join(".process/run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            from.join(".process/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", from.join("link")).unwrap();
        let to = tmp.path().join("archives/WFS-a");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        copy_tree(&from, &to).unwrap();
        assert_eq!(
            std::fs::read(to.join("workflow-session.json")).unwrap(),
            b"{}"
        );
        let mode = std::fs::metadata(to.join(".process/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            std::fs::read_link(to.join("link")).unwrap(),
            Path::new("/nonexistent/target")
        );
        // Not marked whole: nothing to finish, the original stays.
        assert!(!finish_copy(&from, &to).unwrap());
        assert!(from.is_dir());
        // Marked (a kill after the copy's rename): the original goes.
        std::fs::write(to.join(COPIED), "").unwrap();
        assert!(finish_copy(&from, &to).unwrap());
        assert!(!from.exists());
        assert!(!to.join(COPIED).exists());
        assert!(to.join("workflow-session.json").is_file());
    }

    #[test]
    fn session_paths_are_rewritten_whole() {
        let id = "WFS-a";
        for (text, want) in [
            (
                r#"{"prompt_file": ".workflow/active/WFS-a/.process/iteration-1-prompt.md"}"#,
                Some(
                    r#"{"prompt_file": ".workflow/archives/WFS-a/.process/iteration-1-prompt.md"}"#,
                ),
            ),
            (
                "see .workflow/active/WFS-a.",
                Some("see .workflow/archives/WFS-a."),
            ),
            (
                "dir `.workflow/active/WFS-a`",
                Some("dir `.workflow/archives/WFS-a`"),
            ),
            (".workflow/active/WFS-a", Some(".workflow/archives/WFS-a")),
            (".workflow/active/WFS-a-2/x .workflow/active/WFS-ab", None),
            (".workflow/active/WFS-a.b/x", None),
            ("nothing here", None),
            (
                "- `.workflow/active/WFS-a-2/x` and `.workflow/active/WFS-a/y`",
                Some("- `.workflow/active/WFS-a-2/x` and `.workflow/archives/WFS-a/y`"),
            ),
        ] {
            assert_eq!(rewrite_session_paths(text, id).as_deref(), want, "{text}");
        }
    }
}

#[cfg(test)]
mod kill_tests {
    //! The run's archive (through the session transaction) updates the
    //! session's file after the move, in the one journal record of the
    //! rewrites: no sync before the move. A kill between the move and that
    //! record, or a power loss after it, must end as an uninterrupted
    //! archive.
    use super::*;
    use crate::engine::journal;
    use crate::engine::txn::SessionTxn;
    use serde_json::Value;

    const ID: &str = "WFS-a";

    /// A wfx session, `active`, whose one task is done (so the archive
    /// marks it `completed`), with a note naming its own path.
    fn project() -> (tempfile::TempDir, Workspace) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::new(tmp.path());
        let dir = ws.active(ID).dir;
        std::fs::create_dir_all(dir.join(".process")).unwrap();
        std::fs::create_dir_all(dir.join(".task")).unwrap();
        let session = json!({
            "session_id": ID, "type": "run", "workflow_type": "yaml_workflow",
            "status": "active", "description": "d", "project": "p",
            "mode": "prompt", "input": "w.yml", "source_session_id": null,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "phases": [], "wfx_version": "0.1.0"
        });
        std::fs::write(
            dir.join("workflow-session.json"),
            serde_json::to_vec_pretty(&session).unwrap(),
        )
        .unwrap();
        std::fs::write(
            dir.join(".task/IMPL-001.json"),
            r#"{"id": "IMPL-001", "title": "t", "status": "completed", "meta": {"type": "test-fix"}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join(".process/notes.md"),
            format!("see .workflow/active/{ID}/.process/x.md\n"),
        )
        .unwrap();
        (tmp, ws)
    }

    fn txn(ws: &Workspace, dir: &Path) -> SessionTxn {
        SessionTxn::new(dir).with_spares(ws.cache_dir().join("spares").join(ID))
    }

    fn session(ws: &Workspace) -> Value {
        let p = ws.archived(ID).session_json();
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    }

    /// What an archive leaves, times aside.
    fn outcome(ws: &Workspace) -> (Value, String, Value) {
        let mut s = session(ws);
        for k in ["updated_at", "completed_at", "archived_at"] {
            assert!(s[k].is_string(), "{k} set: {s}");
            s[k] = Value::Null;
        }
        let notes = std::fs::read_to_string(ws.archived(ID).dir.join(".process/notes.md")).unwrap();
        let mut m: Value =
            serde_json::from_slice(&std::fs::read(ws.manifest_path()).unwrap()).unwrap();
        m[0]["archived_at"] = Value::Null;
        m[0]["metrics"]["duration_hours"] = Value::Null;
        (s, notes, m)
    }

    #[test]
    fn a_kill_between_the_move_and_the_record_ends_as_an_uninterrupted_archive() {
        let (_a, whole) = project();
        let mut t = txn(&whole, &whole.active(ID).dir);
        whole.archive_with(ID, &mut t).unwrap();
        let want = outcome(&whole);
        assert_eq!(want.0["status"], "completed");
        assert!(want.1.contains(".workflow/archives/WFS-a/.process/x.md"));

        // Killed right after the move: nothing was written before it.
        let (_b, killed) = project();
        std::fs::create_dir_all(killed.archives_dir()).unwrap();
        std::fs::rename(killed.active(ID).dir, killed.archived(ID).dir).unwrap();
        assert!(session(&killed)["archived_at"].is_null());
        // The resumed run archives again, from the archived place.
        let mut t = txn(&killed, &killed.archived(ID).dir);
        killed.archive_with(ID, &mut t).unwrap();
        assert_eq!(outcome(&killed), want);
        // Once more: nothing changes, no second entry.
        let before = std::fs::read(killed.archived(ID).session_json()).unwrap();
        killed.archive_with(ID, &mut t).unwrap();
        assert_eq!(
            std::fs::read(killed.archived(ID).session_json()).unwrap(),
            before
        );
        assert_eq!(outcome(&killed), want);
    }

    #[test]
    fn the_session_update_is_in_the_archives_one_durable_record() {
        let (_a, ws) = project();
        let old = std::fs::read(ws.active(ID).session_json()).unwrap();
        let mut t = txn(&ws, &ws.active(ID).dir);
        ws.archive_with(ID, &mut t).unwrap();
        let new = std::fs::read(ws.archived(ID).session_json()).unwrap();
        assert_ne!(old, new);
        // A power loss that kept the journal's record but not the file's
        // exchange: replayed after the restart.
        std::fs::write(ws.archived(ID).session_json(), &old).unwrap();
        journal::replay_in_boot_for_tests(&ws.archived(ID).dir, Some("another boot"));
        assert_eq!(std::fs::read(ws.archived(ID).session_json()).unwrap(), new);
    }
}
