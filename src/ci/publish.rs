//! The effects of CI mode, after a command is done: `--junit FILE`, and on
//! GitHub Actions the annotations (on stderr, which the runner reads like
//! stdout; stdout stays the command's own, JSON with `--json`), the job
//! summary and the step outputs. A file that cannot be written is a
//! warning: the session's own exit code stands.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::github::{self, Annotation};
use super::{CiEnv, junit};
use crate::artifacts::TestResults;
use crate::engine::Done;
use crate::session::Workspace;
use crate::ui::Printer;

/// The project's directory inside its git repository (`""` at the top):
/// GitHub resolves an annotation's file from the repository root.
fn repo_prefix(root: &Path) -> String {
    let Ok(repo) = git2::Repository::discover(root) else {
        return String::new();
    };
    let Some(top) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return String::new();
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    root.strip_prefix(&top)
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default()
}

fn annotate(annotations: &[Annotation]) {
    let mut err = std::io::stderr().lock();
    for a in annotations {
        let _ = writeln!(err, "{}", a.command());
    }
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

fn append_or_warn(ui: &Printer, what: &str, path: &Option<PathBuf>, text: &str) {
    if let Some(p) = path
        && let Err(e) = append(p, text)
    {
        ui.warn(format!("could not write the {what} ({}): {e}", p.display()));
    }
}

fn outputs_text(outputs: &[(&str, String)]) -> String {
    let seed = crate::git::new_run_id();
    outputs
        .iter()
        .map(|(name, value)| github::output(name, value, &seed))
        .collect()
}

fn write_junit(ui: &Printer, path: &Path, results: Option<&TestResults>) {
    match results {
        Some(r) => {
            if let Err(e) = junit::write(path, r) {
                ui.warn(format!("--junit: could not write {}: {e}", path.display()));
            }
        }
        None => ui.warn(format!(
            "--junit: no test run yet, so {} was not written",
            path.display()
        )),
    }
}

/// After `test-fix-gen` / `test-cycle-execute`: the last run as JUnit when
/// asked, and on GitHub Actions what GitHub reads, all from the session's
/// files.
pub fn after_session(ws: &Workspace, done: &Done, junit: Option<&Path>, ui: &Printer) {
    let env = CiEnv::from_env();
    if junit.is_none() && env.github.is_none() {
        return;
    }
    let data = ws
        .pick_for_view(Some(&done.session_id))
        .and_then(|sref| crate::report::load(ws, &sref));
    let data = match data {
        Ok(d) => d,
        Err(e) => {
            ui.warn(format!(
                "could not read session {} for the CI report: {e}",
                done.session_id
            ));
            return;
        }
    };
    if let Some(path) = junit {
        write_junit(ui, path, data.results.as_ref());
    }
    let Some(gh) = env.github else { return };
    let view = crate::report::build(&data, &|_| None);
    let final_commit = done.final_commit.clone().or_else(|| {
        data.state.as_ref().and_then(|s| {
            s.iterations
                .iter()
                .rev()
                .find_map(|r| r.rollback_commit.clone().or(r.fix_commit.clone()))
        })
    });
    let prefix = repo_prefix(&ws.root);
    let mut annotations = vec![github::outcome_annotation(&view)];
    if let Some(r) = &data.results {
        annotations.extend(github::failure_annotations(r, &prefix));
    }
    annotations.extend(github::test_edit_annotations(&data, &prefix));
    annotate(&annotations);
    append_or_warn(
        ui,
        "job summary",
        &gh.summary,
        &github::summary(&data, &view, final_commit.as_deref()),
    );
    append_or_warn(
        ui,
        "step outputs",
        &gh.output,
        &outputs_text(&github::outputs(
            &view,
            done.exit_code,
            final_commit.as_deref(),
        )),
    );
}

/// After `wfx test`: its results as JUnit when asked, and on GitHub
/// Actions an annotation per failing test, a summary and the outputs
/// `status` (`passed`/`failed`), `pass_rate` and `exit_code`.
pub fn after_test(
    ws: &Workspace,
    results: &TestResults,
    exit_code: i32,
    junit: Option<&Path>,
    ui: &Printer,
) {
    if let Some(path) = junit {
        write_junit(ui, path, Some(results));
    }
    let Some(gh) = CiEnv::from_env().github else {
        return;
    };
    annotate(&github::failure_annotations(
        results,
        &repo_prefix(&ws.root),
    ));
    append_or_warn(
        ui,
        "job summary",
        &gh.summary,
        &github::test_summary(results),
    );
    let status = if exit_code == 0 { "passed" } else { "failed" };
    append_or_warn(
        ui,
        "step outputs",
        &gh.output,
        &outputs_text(&[
            ("status", status.to_string()),
            ("pass_rate", format!("{:.1}", results.pass_rate)),
            ("exit_code", exit_code.to_string()),
        ]),
    );
}
