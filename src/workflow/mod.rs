//! `wfx run`: YAML workflows of `shell:`, `claude:` and `test:` steps with
//! `on_failure:` debug loops (DESIGN.md §8, seed 000). The second front end
//! of the one engine ([`crate::engine`]): a pure machine over the run
//! state; the driver, ports, events, pause policy and cost cap are the
//! ones `test-cycle-execute` uses.
//!
//! - [`yaml`]: the document as a tree with line/column on every node.
//! - [`model`]: the workflow and its parser (every problem, located).
//! - [`check`]: checks before anything runs (variables, claude).
//! - [`decide`]: pure loop decisions and outcomes.
//! - [`machine`]: the machine: `next` and `observe` over the run state.
//! - [`session`]: finding, creating and resuming run sessions.
//!
//! docs/workflows.md is the user's guide.

pub mod check;
pub mod decide;
pub mod machine;
pub mod model;
pub mod paths;
#[cfg(test)]
mod scenarios;
pub mod session;
pub mod yaml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::artifacts::Config;
use crate::error::{Error, Problem, Result};
use crate::session::Workspace;
use crate::ui::Printer;

pub use model::{Action, Exec, OnFailure, Step, TestSpec, Workflow};
pub use session::{RunOutcome, position};

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The workflow file as given (relative to the current directory, or
    /// to the project root).
    pub file: PathBuf,
    pub resume: bool,
    pub dry_run: bool,
    /// `--var NAME=VALUE`, in order.
    pub vars: Vec<(String, String)>,
}

/// What `--dry-run` found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DryRun {
    pub workflow: String,
    pub file: String,
    pub session_id: String,
    /// What a real run would do with the session.
    pub session_note: String,
    /// How `claude:` commands would run, or why they cannot.
    pub claude: String,
    pub variables: BTreeMap<String, String>,
    pub steps: Vec<String>,
    pub warnings: Vec<String>,
    /// Set when a real run would stop before anything runs (exit 2).
    pub problem: Option<String>,
}

/// The result of `wfx run`.
#[derive(Debug, Clone)]
// Returned once per command: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    Ran(RunOutcome),
    DryRun(DryRun),
}

/// A parsed and checked workflow, ready to run.
struct Loaded {
    wf: Workflow,
    text: String,
    name: String,
    /// Relative to the project root when inside it.
    file: String,
    /// As the user typed it (for messages).
    file_arg: String,
    /// Problems of the file's structure, reported with the other checks'.
    issues: Vec<model::Issue>,
}

fn load(ws: &Workspace, given: &Path) -> Result<Loaded> {
    let file_arg = given.display().to_string();
    let path = if given.is_absolute() || given.exists() {
        given.to_path_buf()
    } else {
        ws.root.join(given)
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::usage(format!("workflow file {file_arg} not found")));
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let message = format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to());
        Error::Invalid(vec![Problem::whole(file_arg.clone(), message)])
    })?;
    let (wf, issues) = model::parse_partial(&text).map_err(|issues| invalid(&file_arg, issues))?;
    let canonical = path.canonicalize().unwrap_or(path.clone());
    // Stored in artifacts: relative to the project root, never absolute
    // (a file outside the project is recorded by its name).
    let file = if canonical.starts_with(&ws.root) {
        ws.rel(&canonical)
    } else if given.is_absolute() {
        canonical
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| file_arg.clone())
    } else {
        file_arg.clone()
    };
    let stem = canonical
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workflow".into());
    let name = wf.name.clone().unwrap_or(stem);
    Ok(Loaded {
        wf,
        text,
        name,
        file,
        file_arg,
        issues,
    })
}

fn invalid(file: &str, issues: Vec<model::Issue>) -> Error {
    Error::Invalid(
        issues
            .into_iter()
            .map(|i| Problem {
                file: file.to_string(),
                pointer: i.pointer.clone(),
                message: i.located_message(),
            })
            .collect(),
    )
}

/// Check, then run (or only plan) a workflow. Errors: invalid workflow,
/// unknown variable, claude needed but not configured, an unfinished run
/// without `--resume` → exit 2. Ctrl-C or an unavailable agent pause the
/// run (an ending with exit 3, the state saved), as in the test cycle.
pub fn run(ws: &Workspace, ui: &Printer, opts: &RunOptions) -> Result<Outcome> {
    let loaded = load(ws, &opts.file)?;
    let config: Config = ws.load_config()?;
    let wf = &loaded.wf;
    for (name, _) in &opts.vars {
        if !model::is_env_name(name) {
            return Err(Error::usage(format!(
                "--var {name}=…: \"{name}\" is not a valid name (letters, digits and '_', not starting with a digit)"
            )));
        }
    }
    let cli_vars: BTreeMap<String, String> = opts.vars.iter().cloned().collect();

    let base_id = session::base_session_id(&loaded.name);
    // A run killed while it was being archived is finished first: its
    // archive is the rest of its job (and what `--resume` then reports).
    let cut = match opts.dry_run {
        true => Vec::new(),
        false => session::finish_cut_archives(ws, ui, &base_id)?,
    };
    for id in &cut {
        ui.warn(format!(
            "{id}: the archive a killed run cut short is finished ({})",
            ws.rel(&ws.archived(id).dir)
        ));
    }
    let runs = session::run_sessions(ws, &base_id)?;
    let unfinished = session::unfinished_run(runs);

    let mut known: BTreeSet<String> = cli_vars.keys().cloned().collect();
    if opts.resume
        && let Some((_, Some(state))) = &unfinished
    {
        known.extend(state.vars.keys().cloned());
    }
    // Every problem of the file at once: its structure and its variables.
    let mut issues = loaded.issues.clone();
    issues.extend(check::variables(wf, &known));
    if !issues.is_empty() {
        issues.sort_by_key(|i| i.pos.map(|p| (p.line, p.column)));
        return Err(invalid(&loaded.file_arg, issues));
    }

    // claude: configured by the config (see check::claude_source).
    let path_var = std::env::var_os("PATH");
    let setup = check::claude_setup(&config.agents, path_var.as_deref(), &ws.root)?;
    let (claude_line, mut problem) = claude_line(ws, setup.as_ref(), &check::claude_steps(wf));
    let git = crate::git::Checkpoints::open(&ws.root)?;
    let environment = environment_problem(ws, wf, &git);
    problem = problem.or(environment);
    for note in &wf.ignored {
        ui.warn(note);
    }

    if opts.dry_run {
        let found = Found {
            loaded: &loaded,
            unfinished: &unfinished,
            base_id: &base_id,
            cli_vars: &cli_vars,
        };
        return Ok(Outcome::DryRun(dry_run(
            ws,
            &found,
            opts.resume,
            problem,
            claude_line,
        )));
    }
    if let Some(p) = problem {
        return Err(Error::Usage(p));
    }

    crate::process::install_interrupt_handler();
    let engine_setup = session::Setup {
        ws,
        ui,
        wf,
        text: &loaded.text,
        name: &loaded.name,
        file: &loaded.file,
        file_arg: &loaded.file_arg,
        config: &config,
        claude: setup.as_ref().map(|s| &s.agent),
        vars: &cli_vars,
        git: std::cell::Cell::new(Some(git)),
    };
    let report = match (unfinished, opts.resume) {
        (Some((sref, state)), true) => session::resume(&engine_setup, sref, state)?,
        (None, true) => match cut.last() {
            Some(id) => session::finished_outcome(&engine_setup, id)?,
            None => return Err(Error::Usage(nothing_to_resume(ws, &loaded))),
        },
        (Some((sref, _)), false) => {
            return Err(Error::Usage(unfinished_message(sref.id(), &loaded)));
        }
        (None, false) => session::start(&engine_setup, &base_id)?,
    };
    Ok(Outcome::Ran(report))
}

/// How `claude:` commands would run (the `--dry-run` line), and the
/// problem that stops a run when they cannot.
fn claude_line(
    ws: &Workspace,
    setup: Option<&check::ClaudeSetup>,
    claude_steps: &[String],
) -> (String, Option<String>) {
    let s_of = |n: usize| if n == 1 { "s" } else { "" };
    let Some(s) = setup else {
        if claude_steps.is_empty() {
            return (
                "not needed (no claude: commands); not configured".into(),
                None,
            );
        }
        let problem = format!(
            "{} need{} claude, but none is configured: name it in {} as `agents.definitions.claude` (e.g. {{\"agents\": {{\"definitions\": {{\"claude\": {{\"preset\": \"claude\"}}}}}}}}) or as the agent of a role (`agents.fix`, `agents.test_gen`, `agents.analysis`)",
            claude_steps.join(", "),
            s_of(claude_steps.len()),
            ws.rel(&ws.config_path())
        );
        return ("NOT configured".into(), Some(problem));
    };
    let needed = !claude_steps.is_empty();
    let mut problem = None;
    let how = match (&s.program, &s.found) {
        (Some(p), Some(found)) => format!("`{p}` found at {}", found.display()),
        (Some(p), None) => {
            if needed {
                problem = Some(format!(
                    "{} need{} claude: it is configured ({}) but `{p}` was not found on PATH",
                    claude_steps.join(", "),
                    s_of(claude_steps.len()),
                    s.source
                ));
            }
            format!("`{p}` NOT found on PATH")
        }
        (None, _) => "a shell command".to_string(),
    };
    let line = format!(
        "configured by {} ({}); {how}{}",
        s.source,
        match &s.agent.kind {
            crate::agents::AgentKind::Preset(p) => format!("preset {}", p.as_str()),
            crate::agents::AgentKind::Command(_) => "custom command".to_string(),
        },
        if needed { "" } else { "; not needed" }
    );
    (line, problem)
}

/// What stops a run before anything runs besides claude: steps that
/// commit outside a repository, a test command whose program is not on
/// PATH (the same check as the cycle and `wfx test` make; a command whose
/// program depends on a variable is left to the shell).
fn environment_problem(
    ws: &Workspace,
    wf: &Workflow,
    git: &crate::git::Checkpoints,
) -> Option<String> {
    let commit_steps: Vec<String> = wf
        .steps
        .iter()
        .filter(|s| {
            s.commit_required
                || matches!(&s.action, Action::Test(t) if t.on_failure.as_ref().is_some_and(|f| f.commit_required))
        })
        .map(|s| s.label())
        .collect();
    if !commit_steps.is_empty() && !git.is_repo() {
        return Some(format!(
            "{} use{} commit_required, which needs a git repository; {} is not inside one",
            commit_steps.join(", "),
            if commit_steps.len() == 1 { "s" } else { "" },
            ws.root.display()
        ));
    }
    wf.steps.iter().find_map(|s| match &s.action {
        Action::Test(t) => crate::testing::program::check_on_path(&t.command.text)
            .err()
            .map(|e| format!("{}: {e}", s.label())),
        Action::Run(_) => None,
    })
}

/// What `run` found before a dry run reports it.
struct Found<'a> {
    loaded: &'a Loaded,
    unfinished: &'a Option<(
        crate::session::SessionRef,
        Option<crate::artifacts::RunState>,
    )>,
    base_id: &'a str,
    cli_vars: &'a BTreeMap<String, String>,
}

/// `--dry-run`: what a real run would do, and why it would stop.
fn dry_run(
    ws: &Workspace,
    found: &Found,
    resume: bool,
    mut problem: Option<String>,
    claude: String,
) -> DryRun {
    let loaded = found.loaded;
    let wf = &loaded.wf;
    let (session_id, session_note) = match (found.unfinished, resume) {
        (Some((s, st)), true) => (
            s.id().to_string(),
            format!(
                "would resume at {}",
                st.as_ref()
                    .map(|st| session::position(st, Some(wf)))
                    .unwrap_or_else(|| "step 1".into())
            ),
        ),
        (None, true) => {
            problem.get_or_insert_with(|| nothing_to_resume(ws, loaded));
            (found.base_id.to_string(), "nothing to resume".into())
        }
        (Some((s, _)), false) => {
            problem.get_or_insert_with(|| unfinished_message(s.id(), loaded));
            (
                s.id().to_string(),
                "an unfinished run exists; pass --resume".into(),
            )
        }
        (None, false) => (
            crate::session::id::unique_id(found.base_id, |id| ws.id_taken(id)),
            "new session".into(),
        ),
    };
    let mut variables: BTreeMap<String, String> = wf.env.clone();
    variables.extend(found.cli_vars.clone());
    DryRun {
        workflow: loaded.name.clone(),
        file: loaded.file.clone(),
        session_id,
        session_note,
        claude,
        variables,
        steps: wf.steps.iter().map(describe_step).collect(),
        warnings: wf.ignored.clone(),
        problem,
    }
}

fn nothing_to_resume(ws: &Workspace, loaded: &Loaded) -> String {
    format!(
        "--resume: no unfinished run of {} in {}; run it without --resume to start one",
        loaded.file_arg,
        ws.rel(&ws.active_dir())
    )
}

fn unfinished_message(id: &str, loaded: &Loaded) -> String {
    format!(
        "an unfinished run of this workflow exists ({id}); continue it with `wfx run {} --resume`, or archive it with `wfx session complete {id}` and run again to start afresh",
        loaded.file_arg
    )
}

/// One line per step for `--dry-run`, with every default spelled out.
pub fn describe_step(step: &Step) -> String {
    let mut line = format!("{}: ", step.label());
    match &step.action {
        Action::Run(exec) => line.push_str(&exec.text().text),
        Action::Test(t) => {
            line.push_str(&t.command.text);
            match t.timeout {
                Some(s) => line.push_str(&format!(" · timeout {s} s")),
                None => line.push_str(" · timeout test.timeout_s"),
            }
            match &t.on_failure {
                None => line.push_str(" · no on_failure (a failure is reported, the workflow continues)"),
                Some(f) => line.push_str(&format!(
                    " · on failure: {} \"{}\" · max_attempts {} · stop_on_success {} · fail_workflow {}{}",
                    f.debug.kind(),
                    f.debug.text().text,
                    f.max_attempts,
                    f.stop_on_success,
                    f.fail_workflow,
                    if f.commit_required { " · commit_required" } else { "" }
                )),
            }
        }
    }
    if let Some(id) = &step.id {
        line.push_str(&format!(" · id {id}"));
    }
    if step.commit_required {
        line.push_str(" · commit_required");
    }
    if let Some(t) = step.timeout {
        line.push_str(&format!(" · timeout {t} s"));
    }
    for o in &step.outputs {
        line.push_str(&format!(
            " · output {} = newest \"{}\"",
            o.name, o.file_pattern
        ));
    }
    line
}
