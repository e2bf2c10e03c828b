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
pub mod run;
pub mod scan_doc;
pub mod view;

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts::{
    Config, FixHistory, IterationFailures, IterationState, RunState, Task, TestResults,
    WorkflowSession,
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
    /// A `wfx run` session's own files; `None` for a test-fix session.
    pub run: Option<RunData>,
    pub problems: Vec<Problem>,
}

/// What a `wfx run` session (DESIGN.md §8) keeps beyond
/// `workflow-session.json`: the run state, the workflow as run, and the
/// files its records point to. Only files inside the session directory
/// are read, so a hand-edited path in the state cannot make a report show
/// another file.
#[derive(Debug, Clone, Default)]
pub struct RunData {
    /// `.process/run-state.json`; `None` when missing or unreadable (then
    /// `problems` says why).
    pub state: Option<RunState>,
    /// `workflow.yml` as run, parsed: the commands of steps that have not
    /// run yet and each test step's `on_failure`. `None` when missing or
    /// when it no longer parses.
    pub workflow: Option<crate::workflow::Workflow>,
    /// The `test-results.json` of every recorded test run, by the path the
    /// record gives.
    pub results: BTreeMap<String, TestResults>,
    /// The start (at most [`COMMAND_HEAD`] bytes, lossy UTF-8) of every
    /// recorded command or prompt file, by the path the record gives.
    pub commands: BTreeMap<String, String>,
}

/// How much of a command or prompt file is read for a report.
pub const COMMAND_HEAD: usize = 4096;

/// A larger `workflow.yml` copy is not parsed (a hand-made one; `wfx run`
/// reads its workflows whole too, but a viewer should stay cheap).
pub const MAX_WORKFLOW_BYTES: u64 = 4 << 20;

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

    let run = if session.kind == crate::workflow::session::SESSION_KIND {
        Some(load_run(ws, sref, &files, &mut problems)?)
    } else {
        None
    };

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
        run,
        problems,
    })
}

/// Read a run session's files (see [`RunData`]); `files` is the sorted
/// list of the session's files.
fn load_run(
    ws: &Workspace,
    sref: &SessionRef,
    files: &[String],
    problems: &mut Vec<Problem>,
) -> Result<RunData> {
    let paths = crate::workflow::paths::RunPaths::new(sref.paths.clone());
    let p = paths.run_state();
    let state = tolerant(store::read_json_opt::<RunState>(&p, &ws.rel(&p)), problems)?;

    let p = paths.workflow_copy();
    let size = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
    let workflow = if size > MAX_WORKFLOW_BYTES {
        problems.push(Problem::whole(
            ws.rel(&p),
            format!(
                "file is {size} bytes; a report reads workflows of at most {MAX_WORKFLOW_BYTES}"
            ),
        ));
        None
    } else {
        match std::fs::read(&p) {
            Ok(bytes) => match crate::workflow::model::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(wf) => Some(wf),
                Err(issues) => {
                    problems.extend(issues.into_iter().take(1).map(|i| Problem {
                        file: ws.rel(&p),
                        pointer: i.pointer.clone(),
                        message: i.located_message(),
                    }));
                    None
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(&p, e)),
        }
    };

    let in_session = |rel: &str| files.binary_search_by(|f| f.as_str().cmp(rel)).is_ok();
    let mut data = RunData {
        state: None,
        workflow,
        ..RunData::default()
    };
    let Some(st) = state else {
        return Ok(data);
    };
    for step in &st.steps {
        let runs = step
            .initial
            .iter()
            .chain(step.attempts.iter().filter_map(|a| a.test.as_ref()));
        for run in runs {
            let rel = run.results_file.as_str();
            if !in_session(rel) || data.results.contains_key(rel) {
                continue;
            }
            let p = ws.root.join(rel);
            if let Some(r) = tolerant(store::read_json_opt::<TestResults>(&p, rel), problems)? {
                data.results.insert(rel.to_string(), r);
            }
        }
        let commands = step.command_file.iter().chain(
            step.attempts
                .iter()
                .filter_map(|a| a.debug.as_ref().map(|d| &d.command_file)),
        );
        for rel in commands {
            if in_session(rel) && !data.commands.contains_key(rel.as_str()) {
                let p = ws.root.join(rel);
                data.commands
                    .insert(rel.clone(), read_head(&p, COMMAND_HEAD)?);
            }
        }
    }
    data.state = Some(st);
    Ok(data)
}

/// At most `max` bytes of a file, as text (lossy UTF-8; a character cut
/// at the end is dropped). A file that vanished reads as empty.
fn read_head(path: &Path, max: usize) -> Result<String> {
    use std::io::Read;
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut buf = Vec::new();
    f.take(max as u64)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    // A multi-byte character cut by the limit becomes one U+FFFD at the end.
    Ok(if buf.len() == max {
        text.trim_end_matches('\u{FFFD}').to_string()
    } else {
        text
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
