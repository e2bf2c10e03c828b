//! Phase 1, session start (DESIGN.md §4): detect the input mode, check a
//! source session, pick a unique id, create the session directory and
//! `workflow-session.json`. Also decides when an input means "continue
//! this test session" instead of "start a new one".

use std::io::Read;
use std::path::{Path, PathBuf};

use super::context::SourceSession;
use crate::artifacts::Timestamp;
use crate::artifacts::session::{GitInfo, InputMode, PhaseStatus, WorkflowSession};
use crate::error::{Error, Problem, Result};
use crate::session::layout::SESSION_GITIGNORE;
use crate::session::store::{self, SessionLock};
use crate::session::{Location, Owner, SessionPaths, SessionRef, Workspace, id, task_order};

/// What the INPUT argument is, judged by its text alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `WFS-…`: a session id.
    SessionId(String),
    /// A path ending in `.md`: a requirements file.
    File(String),
    /// Anything else: the description itself.
    Prompt(String),
}

/// Classify the INPUT argument (DESIGN.md §1).
pub fn classify_input(raw: &str) -> InputKind {
    let t = raw.trim();
    if t.starts_with("WFS-") {
        InputKind::SessionId(t.to_string())
    } else if t.to_ascii_lowercase().ends_with(".md") && !t.contains('\n') {
        InputKind::File(t.to_string())
    } else {
        InputKind::Prompt(t.to_string())
    }
}

/// A session to create.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub base_id: String,
    pub mode: InputMode,
    /// One line, for lists and titles.
    pub description: String,
    /// What the user typed, made relative for files inside the project.
    pub input: String,
    /// The whole request: the description, or a requirements file's text.
    pub requirements_text: String,
    pub source: Option<SourceSession>,
}

/// What `test-fix-gen INPUT` asks for.
#[derive(Debug)]
pub enum Start {
    New(NewSession),
    /// INPUT names an existing active test session: continue its phases.
    Resume(SessionRef),
}

/// The first non-empty line without Markdown heading marks, at most 200
/// characters: the title of a requirements file.
pub fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(200).collect()
}

fn read_limited(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(max).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Decide what INPUT means. `cwd` resolves relative `.md` paths (the
/// project root is tried second).
pub fn resolve(ws: &Workspace, raw: &str, cwd: &Path) -> Result<Start> {
    match classify_input(raw) {
        InputKind::SessionId(sid) => {
            // Any existing session directory, also one another tool named
            // (`WFS------`, `WFS--auth--fix`): DESIGN.md §10.6.
            id::validate_existing_id(&sid)?;
            let sref = ws.find(&sid)?;
            if is_test_session(ws, &sref)? {
                if sref.location == Location::Archived {
                    return Err(Error::usage(format!(
                        "{sid} is an archived test session; there is nothing left to plan (see `wfx session show {sid}`)"
                    )));
                }
                return Ok(Start::Resume(sref));
            }
            let source = read_source_session(ws, &sref)?;
            let mut description = format!("Tests for {sid}");
            if !source.description.is_empty() {
                description.push_str(": ");
                description.push_str(&title_of(&source.description));
            }
            let mut requirements_text = description.clone();
            for (task_id, _, text) in &source.summaries {
                requirements_text.push_str(&format!("\n\n{task_id}: {}", title_of(text)));
            }
            Ok(Start::New(NewSession {
                base_id: id::source_session_id(&sid),
                mode: InputMode::Session,
                description,
                input: sid,
                requirements_text,
                source: Some(source),
            }))
        }
        InputKind::File(path) => {
            let given = PathBuf::from(&path);
            let candidates = if given.is_absolute() {
                vec![given.clone()]
            } else {
                vec![cwd.join(&given), ws.root.join(&given)]
            };
            let Some(found) = candidates.into_iter().find(|p| p.is_file()) else {
                return Err(Error::usage(format!("requirements file {path} not found")));
            };
            let bytes = read_limited(&found, 1024 * 1024).map_err(|e| Error::io(&found, e))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::Invalid(vec![Problem::whole(path.clone(), "not valid UTF-8")])
            })?;
            let text = text.trim().to_string();
            if text.is_empty() {
                return Err(Error::usage(format!("requirements file {path} is empty")));
            }
            let title = title_of(&text);
            // Inside the project: a relative path; outside: only the file
            // name, so no absolute path reaches an artifact.
            let canonical = found.canonicalize().unwrap_or(found.clone());
            let input = if canonical.starts_with(&ws.root) {
                ws.rel(&canonical)
            } else {
                found
                    .file_name()
                    .map_or(path.clone(), |n| n.to_string_lossy().into_owned())
            };
            Ok(Start::New(NewSession {
                base_id: id::prompt_session_id(&title),
                mode: InputMode::Prompt,
                description: title,
                input,
                requirements_text: text,
                source: None,
            }))
        }
        InputKind::Prompt(text) => {
            if text.is_empty() {
                return Err(Error::usage(
                    "empty description: give a WFS- session id, a .md file or a description of what to test",
                ));
            }
            Ok(Start::New(NewSession {
                base_id: id::prompt_session_id(&title_of(&text)),
                mode: InputMode::Prompt,
                description: title_of(&text),
                input: text.clone(),
                requirements_text: text,
                source: None,
            }))
        }
    }
}

/// Whether a session is a wfx test session (resume it) or a source
/// session (plan tests for it). A session another tool made is always a
/// source, also when it calls itself a test session (CCW's own
/// `/workflow:test-fix-gen` sessions have `type: "test"`). A wfx session
/// whose `workflow-session.json` cannot be read is an invalid artifact
/// (exit 2): guessing would start a new session "for" a damaged one.
fn is_test_session(ws: &Workspace, sref: &SessionRef) -> Result<bool> {
    if ws.owner(sref) == Owner::Foreign {
        return Ok(false);
    }
    let path = sref.paths.session_json();
    let shown = ws.rel(&path);
    let text = store::read_text(&path, &shown)?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Invalid(vec![Problem::bad_json(shown, &e)]))?;
    Ok(v["type"] == "test" || v["workflow_type"] == "test_session")
}

/// Read a finished implementation session leniently (it may come from
/// another tool): completed tasks from `.task/*.json`, summaries from
/// `.summaries/*-summary.md`. Neither → exit 2 naming what is missing.
pub fn read_source_session(ws: &Workspace, sref: &SessionRef) -> Result<SourceSession> {
    let paths = &sref.paths;
    let mut description = String::new();
    if let Ok(bytes) = std::fs::read(paths.session_json())
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
    {
        // CCW's session start writes `project` (and no `description`).
        for key in ["description", "project", "title", "task_description"] {
            if let Some(s) = v[key].as_str().filter(|s| !s.trim().is_empty()) {
                description = s.trim().to_string();
                break;
            }
        }
    }
    let mut completed = Vec::new();
    let mut titles = Vec::new();
    if let Ok(entries) = std::fs::read_dir(paths.task_dir()) {
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let Ok(bytes) = read_limited(&f, 4 * 1024 * 1024) else {
                continue;
            };
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                continue;
            };
            let (Some(tid), Some("completed")) = (v["id"].as_str(), v["status"].as_str()) else {
                continue;
            };
            // Nested and flat tasks both record `result.files_modified`;
            // CCW's flat task schema also lists the files it plans to
            // touch as `files[].path`. Paths are kept as written (Windows
            // or absolute ones too) and mapped to project files in phase 2.
            let mut modified: Vec<String> = v["result"]["files_modified"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .chain(
                    v["files"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f["path"].as_str().map(str::to_string)),
                )
                .collect();
            modified.sort();
            modified.dedup();
            if let Some(t) = v["title"].as_str() {
                titles.push(t.to_string());
            }
            completed.push((tid.to_string(), modified));
        }
    }
    completed.sort_by_key(|(tid, _)| task_order(tid));
    let mut summaries = Vec::new();
    if let Ok(entries) = std::fs::read_dir(paths.summaries_dir()) {
        for e in entries.flatten() {
            let p = e.path();
            let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(tid) = name.strip_suffix("-summary.md") else {
                continue;
            };
            if !p.is_file() {
                continue;
            }
            let text = read_limited(&p, 256 * 1024)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            summaries.push((tid.to_string(), ws.rel(&p), text));
        }
    }
    summaries.sort_by_key(|(tid, _, _)| task_order(tid));
    if completed.is_empty() && summaries.is_empty() {
        return Err(Error::usage(format!(
            "source session {} has no completed tasks (no {}/*.json with \"status\": \"completed\") and no summaries (no {}/*-summary.md); finish the implementation first",
            sref.id(),
            ws.rel(&paths.task_dir()),
            ws.rel(&paths.summaries_dir())
        )));
    }
    if description.is_empty() {
        description = titles.join("; ");
    }
    Ok(SourceSession {
        id: sref.id().to_string(),
        description,
        completed_tasks: completed,
        summaries,
    })
}

/// HEAD and branch of the repository at `root`, if it is one.
pub fn git_info(root: &Path) -> GitInfo {
    let mut info = GitInfo::default();
    if let Ok(repo) = git2::Repository::discover(root)
        && let Ok(head) = repo.head()
    {
        info.base_commit = head.peel_to_commit().ok().map(|c| c.id().to_string());
        if head.is_branch() {
            info.branch = head.shorthand().ok().map(str::to_string);
        }
    }
    info
}

/// Create the session directory under a unique id (`-2`, `-3`, … on
/// collision, across active/ and archives/), lock it, and write
/// `.gitignore` and `workflow-session.json` with phase 1 in progress.
pub fn create(
    ws: &Workspace,
    new: &NewSession,
    cycle_options: crate::artifacts::options::CycleOptions,
    now: Timestamp,
) -> Result<(SessionPaths, SessionLock, WorkflowSession)> {
    let active = ws.active_dir();
    fs_err::create_dir_all(&active).map_err(|e| Error::io(&active, e))?;
    let mut base_taken: Vec<String> = Vec::new();
    let paths = loop {
        let sid = id::unique_id(&new.base_id, |c| {
            ws.id_taken(c) || base_taken.iter().any(|t| t == c)
        });
        let paths = ws.active(&sid);
        // create_dir (not _all): two runs racing for one id cannot both win.
        match std::fs::create_dir(&paths.dir) {
            Ok(()) => break paths,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => base_taken.push(sid),
            Err(e) => return Err(Error::io(&paths.dir, e)),
        }
    };
    // A session that could not be set up (a full disk, a read-only file)
    // is removed again rather than left half made: the directory is ours,
    // created just above.
    match start_session(ws, new, &paths, cycle_options, now) {
        Ok((lock, session)) => Ok((paths, lock, session)),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&paths.dir);
            Err(e)
        }
    }
}

fn start_session(
    ws: &Workspace,
    new: &NewSession,
    paths: &SessionPaths,
    cycle_options: crate::artifacts::options::CycleOptions,
    now: Timestamp,
) -> Result<(SessionLock, WorkflowSession)> {
    let lock = SessionLock::acquire(&paths.lock(), &paths.id)?;
    store::write_atomic(&paths.gitignore(), SESSION_GITIGNORE.as_bytes())?;
    let mut session = WorkflowSession::new_test(
        paths.id.clone(),
        new.description.clone(),
        new.mode,
        new.input.clone(),
        now,
    );
    session.source_session_id = new.source.as_ref().map(|s| s.id.clone());
    session.git = git_info(&ws.root);
    session.cycle_options = Some(cycle_options);
    if let Some(p) = session.phase_mut(1) {
        p.status = PhaseStatus::InProgress;
        p.started_at = Some(now);
    }
    store::write_json(&paths.session_json(), &session)?;
    Ok((lock, session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_kinds() {
        assert_eq!(
            classify_input("WFS-user-auth"),
            InputKind::SessionId("WFS-user-auth".into())
        );
        assert_eq!(
            classify_input(" docs/req.MD "),
            InputKind::File("docs/req.MD".into())
        );
        assert_eq!(
            classify_input("Test the calculator"),
            InputKind::Prompt("Test the calculator".into())
        );
        assert_eq!(
            classify_input("wfs-lower"),
            InputKind::Prompt("wfs-lower".into())
        );
        assert_eq!(
            classify_input("fix README.md\nand more"),
            InputKind::Prompt("fix README.md\nand more".into())
        );
    }

    #[test]
    fn titles() {
        assert_eq!(title_of("\n\n# Auth tests\n\nMore text"), "Auth tests");
        assert_eq!(title_of("plain line\nsecond"), "plain line");
        assert_eq!(title_of(""), "");
    }
}
