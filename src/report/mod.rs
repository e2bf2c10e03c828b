//! A session's story for people: the view model behind `wfx status` and
//! `wfx report --html`, the pass-rate chart, and the generated
//! configuration reference.
//!
//! Reading the files is the only effect here ([`load`]); everything after
//! it ([`view::build`], [`chart::pass_rate_chart`], [`html::render`]) is a
//! pure function of what was read, so a report of a completed, blocked,
//! partial or in-progress session comes out of the same code path.

pub mod chart;
pub mod config_doc;
pub mod html;
pub mod view;

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts::{
    Config, FixHistory, IterationFailures, IterationState, Task, TestResults, WorkflowSession,
};
use crate::error::{Error, Problem, Result};
use crate::session::{SessionRef, Workspace, store};

pub use html::{LinkBase, write_report};
pub use view::{NextStep, SessionView, build, next_step, sparkline};

/// Everything on disk about one session, read once. The session file and
/// the task files are required; the other artifacts are optional: a
/// missing file is `None`, and an unreadable one is `None` plus an entry
/// in `problems`, so a report of a half-written or hand-damaged session
/// still shows what can be shown.
#[derive(Debug, Clone)]
pub struct SessionData {
    pub sref: SessionRef,
    pub session: WorkflowSession,
    /// Tasks with their file paths relative to the project root.
    pub tasks: Vec<(String, Task)>,
    pub state: Option<IterationState>,
    pub results: Option<TestResults>,
    pub history: Option<FixHistory>,
    /// `.process/iteration-<N>-failures.json`, by N.
    pub iteration_failures: BTreeMap<u32, IterationFailures>,
    /// The project config, or the defaults when it is missing or invalid.
    pub config: Config,
    /// Files of the session directory, relative to the project root, sorted
    /// (the lock, temp files and raw JUnit reports left out).
    pub files: Vec<String>,
    /// The session directory relative to the project root.
    pub dir: String,
    pub problems: Vec<Problem>,
}

/// Keep going past an invalid artifact: its problems are collected, the
/// artifact is treated as absent. I/O errors other than "missing" still
/// stop the command.
fn tolerant<T>(r: Result<Option<T>>, problems: &mut Vec<Problem>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(v),
        Err(Error::Invalid(p)) => {
            problems.extend(p);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Read a session's artifacts (see [`SessionData`] for what is required).
pub fn load(ws: &Workspace, sref: &SessionRef) -> Result<SessionData> {
    let session = ws.load_session(sref)?;
    let mut problems = Vec::new();
    let paths = &sref.paths;

    // Tasks are the backbone of every view; an unreadable task file or two
    // files with one id (DESIGN.md §2) stop the command like elsewhere.
    let tasks = ws
        .load_tasks(paths)?
        .into_iter()
        .map(|(p, t)| (ws.rel(&p), t))
        .collect();
    let state = tolerant(ws.load_iteration_state(sref), &mut problems)?;
    let p = paths.test_results();
    let results = tolerant(
        store::read_json_opt::<TestResults>(&p, &ws.rel(&p)),
        &mut problems,
    )?;
    let p = paths.fix_history();
    let history = tolerant(
        store::read_json_opt::<FixHistory>(&p, &ws.rel(&p)),
        &mut problems,
    )?;

    let mut iteration_failures = BTreeMap::new();
    for n in failure_file_numbers(&paths.process_dir()) {
        let p = paths.iteration_file(n, "failures.json");
        let shown = ws.rel(&p);
        if let Some(f) = tolerant(
            store::read_json_opt::<IterationFailures>(&p, &shown),
            &mut problems,
        )? {
            iteration_failures.insert(n, f);
        }
    }

    let config = match ws.load_config() {
        Ok(c) => c,
        Err(Error::Invalid(p)) => {
            problems.extend(p);
            Config::default()
        }
        Err(e) => return Err(e),
    };

    // Sorted as strings: the view looks files up by binary search.
    let mut files: Vec<String> = session_files(&paths.dir)
        .into_iter()
        .map(|p| ws.rel(&p))
        .collect();
    files.sort();

    Ok(SessionData {
        sref: sref.clone(),
        session,
        tasks,
        state,
        results,
        history,
        iteration_failures,
        config,
        files,
        dir: ws.rel(&paths.dir),
        problems,
    })
}

/// N of every `iteration-<N>-failures.json` in `.process/`, ascending.
fn failure_file_numbers(process_dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(process_dir) else {
        return Vec::new();
    };
    let mut out: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            name.strip_prefix("iteration-")?
                .strip_suffix("-failures.json")?
                .parse()
                .ok()
        })
        .collect();
    out.sort_unstable();
    out
}

/// Every file of a session directory worth showing a reader.
fn session_files(dir: &Path) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .max_depth(4)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != "junit")
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            name != ".lock" && !name.ends_with(".tmp")
        })
        .map(|e| e.into_path())
        .collect()
}
