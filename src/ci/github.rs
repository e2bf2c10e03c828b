//! What GitHub Actions reads from a step, as pure functions: workflow
//! commands (`::error file=…,line=…::message`), step outputs
//! (`$GITHUB_OUTPUT`) and the job summary (`$GITHUB_STEP_SUMMARY`,
//! Markdown). [`super::publish`] writes them.

use crate::artifacts::TestResults;
use crate::report::{SessionData, SessionView};

/// Annotations of one kind beyond this many are not written: GitHub shows
/// at most 10 of a kind per step and 50 per job anyway.
pub const MAX_ANNOTATIONS: usize = 50;

/// The Markdown summary is kept under this many bytes (GitHub accepts at
/// most 1 MiB per step); diffs are the first thing left out.
pub const MAX_SUMMARY: usize = 512 * 1024;

named_enum! {
    plain
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Level {
        Error = "error",
        Warning = "warning",
        Notice = "notice",
    }
}

/// One annotation on a file (or the run, without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub level: Level,
    /// Relative to the repository root (GitHub's working directory).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub title: String,
    pub message: String,
}

/// A workflow command's message: `%`, CR and LF escaped as the runner
/// expects (actions/toolkit `escapeData`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`, which end it.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

impl Annotation {
    /// `::error file=tests/test_x.py,line=12,title=…::message`.
    pub fn command(&self) -> String {
        let mut props = Vec::new();
        if let Some(f) = &self.file {
            props.push(format!("file={}", escape_property(f)));
            if let Some(l) = self.line {
                props.push(format!("line={l}"));
            }
        }
        if !self.title.is_empty() {
            props.push(format!("title={}", escape_property(&self.title)));
        }
        let props = if props.is_empty() {
            String::new()
        } else {
            format!(" {}", props.join(","))
        };
        format!(
            "::{}{props}::{}",
            self.level.as_str(),
            escape_data(&self.message)
        )
    }
}

/// `prefix/path`: a project path as the repository sees it (`prefix` is
/// the project's directory inside the repository, empty at its root).
fn in_repo(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_string()
    } else {
        format!("{}/{path}", prefix.trim_end_matches('/'))
    }
}

/// An error annotation per failing test of `results` (at most
/// [`MAX_ANNOTATIONS`]), on its file and line when known.
pub fn failure_annotations(results: &TestResults, prefix: &str) -> Vec<Annotation> {
    results
        .failures
        .iter()
        .take(MAX_ANNOTATIONS)
        .map(|f| {
            let message = match (f.error.trim(), f.message.trim()) {
                ("", "") => "failed (no message)".to_string(),
                (e, "") => e.to_string(),
                ("", m) => m.to_string(),
                (e, m) if m.contains(e) => m.to_string(),
                (e, m) => format!("{e}\n{m}"),
            };
            Annotation {
                level: Level::Error,
                file: f.file.as_deref().map(|p| in_repo(prefix, p)),
                line: f.line,
                title: format!("{} failed", f.test),
                message,
            }
        })
        .collect()
}

/// A warning per test edit of every fix attempt: rejected ones (the
/// attempt was undone) and flagged ones (kept, to be reviewed).
pub fn test_edit_annotations(data: &SessionData, prefix: &str) -> Vec<Annotation> {
    let entries = data.history.as_ref().map_or(&[][..], |h| &h.entries[..]);
    entries
        .iter()
        .flat_map(|e| {
            let rejected = e.outcome == crate::artifacts::fix_history::FixOutcome::Rejected;
            e.test_edits.iter().map(move |t| {
                let kind = serde_json::to_value(t.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
                    .replace('_', " ");
                Annotation {
                    level: Level::Warning,
                    file: (!t.file.is_empty()).then(|| in_repo(prefix, &t.file)),
                    line: None,
                    title: format!(
                        "wfx: test edit {} (iteration {}, {})",
                        if rejected { "rejected" } else { "flagged" },
                        e.iteration,
                        e.agent
                    ),
                    message: if t.detail.is_empty() {
                        kind
                    } else {
                        format!("{kind}: {}", t.detail)
                    },
                }
            })
        })
        .take(MAX_ANNOTATIONS)
        .collect()
}

/// The session's ending as one annotation on the run: an error when it is
/// blocked, a warning when it waits (paused, awaiting a fix), a notice when
/// it completed.
pub fn outcome_annotation(view: &SessionView) -> Annotation {
    let level = match view.outcome.kind.as_str() {
        "completed" | "partial_success" => Level::Notice,
        "blocked" | "abandoned" => Level::Error,
        _ => Level::Warning,
    };
    let mut message = view.outcome.reason.clone();
    if let Some(cmd) = &view.next.command {
        message.push_str(&format!("\nContinue with: {cmd}"));
    }
    Annotation {
        level,
        file: None,
        line: None,
        title: format!("wfx: {} ({})", view.outcome.title, view.session_id),
        message,
    }
}

/// One output for `$GITHUB_OUTPUT`, in the multi-line form
/// (`name<<DELIMITER`, the value, `DELIMITER`), with a delimiter that
/// cannot occur in the value, so a newline in a value never starts
/// another output.
pub fn output(name: &str, value: &str, delimiter_seed: &str) -> String {
    let mut delimiter = format!("ghadelimiter_{delimiter_seed}");
    while value.contains(&delimiter) {
        delimiter.push('_');
    }
    format!("{name}<<{delimiter}\n{value}\n{delimiter}\n")
}

/// The step outputs of a session: `session`, `status`, `pass_rate`,
/// `final_commit`, `exit_code` (empty when not known).
pub fn outputs(
    view: &SessionView,
    exit_code: i32,
    final_commit: Option<&str>,
) -> Vec<(&'static str, String)> {
    vec![
        ("session", view.session_id.clone()),
        ("status", view.status.clone()),
        (
            "pass_rate",
            view.latest_pass_rate
                .map(|p| format!("{p:.1}"))
                .unwrap_or_default(),
        ),
        ("final_commit", final_commit.unwrap_or_default().to_string()),
        ("exit_code", exit_code.to_string()),
    ]
}

/// A Markdown table cell: pipes escaped, lines joined.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn emoji(kind: &str) -> &'static str {
    match kind {
        "completed" => "✅",
        "partial_success" => "☑️",
        "blocked" | "abandoned" => "❌",
        _ => "⏸️",
    }
}

/// The job summary of a session: the outcome, the figures, a table of the
/// test runs, and each fix attempt with its diff in a collapsed
/// `<details>` block.
pub fn summary(data: &SessionData, view: &SessionView, final_commit: Option<&str>) -> String {
    let mut md = String::new();
    md.push_str(&format!(
        "## {} wfx · {}: {}\n\n",
        emoji(&view.outcome.kind),
        view.outcome.title,
        cell(&view.session_id)
    ));
    md.push_str(&format!("{}\n\n", view.outcome.reason));

    facts_table(&mut md, view, final_commit);
    runs_table(&mut md, view);
    fix_attempts(&mut md, data, view);
    if let Some(r) = &data.results
        && !r.failures.is_empty()
    {
        md.push_str(&format!(
            "### Failing in the last run ({})\n\n",
            r.failures.len()
        ));
        md.push_str(&failure_table(r));
        md.push('\n');
    }
    md
}

/// Outcome figures as a two-column table.
fn facts_table(md: &mut String, view: &SessionView, final_commit: Option<&str>) {
    let first = view.runs.first().map(|r| r.pass_rate_text.clone());
    let last = view.runs.last().map(|r| r.pass_rate_text.clone());
    let pass = match (first, last) {
        (Some(a), Some(b)) if view.runs.len() > 1 => format!("{a} → {b}"),
        (Some(a), _) => a,
        _ => "–".into(),
    };
    md.push_str("| | |\n|---|---|\n");
    md.push_str(&format!("| Session | `{}` |\n", cell(&view.session_id)));
    md.push_str(&format!("| Status | {} |\n", cell(&view.status)));
    md.push_str(&format!("| Pass rate | {pass} |\n"));
    md.push_str(&format!(
        "| Fix attempts | {}{} |\n",
        view.fixes.len(),
        view.max_iterations
            .map_or(String::new(), |m| format!(" (at most {m})"))
    ));
    if view.cost.calls > 0 {
        md.push_str(&format!("| Agent cost | {} |\n", cell(&view.cost.text)));
    }
    if let Some(c) = final_commit {
        md.push_str(&format!(
            "| Final commit | `{}` |\n",
            crate::report::view::short_commit(c)
        ));
    }
    if let Some(cmd) = &view.next.command {
        md.push_str(&format!("| Next | `{}` |\n", cell(cmd)));
    }
    md.push('\n');
}

/// One row per test run.
fn runs_table(md: &mut String, view: &SessionView) {
    if !view.runs.is_empty() {
        md.push_str("### Test runs\n\n");
        md.push_str(
            "| Run | Iteration | Scope | Pass rate | Passed | Failed | Fix before | Result |\n",
        );
        md.push_str("|---:|---:|---|---:|---:|---:|---|---|\n");
        for (i, r) in view.runs.iter().enumerate() {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {}/{} | {} | {} | {}{} |\n",
                i + 1,
                r.iteration,
                r.scope,
                r.pass_rate_text,
                r.passed,
                r.total,
                r.failed,
                r.strategy_before.as_deref().unwrap_or("–"),
                r.result.as_deref().unwrap_or("–"),
                if r.rolled_back { " (rolled back)" } else { "" },
            ));
        }
        md.push('\n');
    }
}

/// Each fix attempt in a collapsed block, diffs while the size budget lasts.
fn fix_attempts(md: &mut String, data: &SessionData, view: &SessionView) {
    let entries = data.history.as_ref().map_or(&[][..], |h| &h.entries[..]);
    if !view.fixes.is_empty() {
        md.push_str("### Fix attempts\n\n");
        let mut budget = MAX_SUMMARY.saturating_sub(md.len() + 4096);
        for (f, entry) in view.fixes.iter().zip(entries) {
            let who = match &f.strategy {
                Some(s) => format!("{} · {s}", f.agent),
                None => f.agent.clone(),
            };
            let commit = f
                .commit
                .as_deref()
                .map_or(String::new(), |c| format!(" · `{c}`"));
            md.push_str(&format!(
                "<details><summary>Iteration {} · {who} · {} → {} · {}{commit}</summary>\n\n",
                f.iteration, f.pass_before, f.pass_after, f.outcome
            ));
            md.push_str(&format!(
                "{} file(s) changed, +{} −{}{}\n\n",
                f.diff_files,
                f.insertions,
                f.deletions,
                if f.cost_usd.is_some() {
                    format!(" · cost {}", f.cost)
                } else {
                    String::new()
                }
            ));
            for t in &f.test_edits {
                md.push_str(&format!(
                    "- test edit: {} `{}` {}\n",
                    t.kind.replace('_', " "),
                    t.file,
                    t.detail
                ));
            }
            if !f.test_edits.is_empty() {
                md.push('\n');
            }
            match entry.diff.fenced() {
                Some(block) if block.len() < budget => {
                    budget -= block.len();
                    md.push_str(&block);
                    md.push_str("\n\n");
                }
                Some(_) => md.push_str(
                    "(diff left out to keep the summary small; `wfx status` shows it)\n\n",
                ),
                None => md.push_str("(no diff recorded)\n\n"),
            }
            md.push_str("</details>\n\n");
        }
    }
}

/// The failing tests as a Markdown table (at most [`MAX_ANNOTATIONS`]
/// rows, then how many more).
fn failure_table(r: &TestResults) -> String {
    let mut md = String::from("| Test | Where | Error |\n|---|---|---|\n");
    for f in r.failures.iter().take(MAX_ANNOTATIONS) {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            cell(&f.test),
            cell(&f.location()),
            cell(&f.error)
        ));
    }
    if r.failures.len() > MAX_ANNOTATIONS {
        md.push_str(&format!(
            "\n… and {} more\n",
            r.failures.len() - MAX_ANNOTATIONS
        ));
    }
    md
}

/// The job summary of one `wfx test` run: the counts and the failures.
pub fn test_summary(results: &TestResults) -> String {
    let ok = results.failures.is_empty() && results.exit_code == Some(0);
    let mut md = format!(
        "## {} wfx test: {}\n\n`{}`: {} tests, {} passed, {} failed, {} skipped, {} errors; pass rate {:.1}%\n\n",
        if ok { "✅" } else { "❌" },
        if ok { "passed" } else { "failed" },
        cell(&results.command),
        results.total,
        results.passed,
        results.failed,
        results.skipped,
        results.errors,
        results.pass_rate
    );
    if !results.failures.is_empty() {
        md.push_str(&failure_table(results));
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_escape_what_would_end_them() {
        let a = Annotation {
            level: Level::Error,
            file: Some("tests/a,b:c.py".into()),
            line: Some(12),
            title: "t::x failed".into(),
            message: "50% off\nassert 1 == 2\r".into(),
        };
        assert_eq!(
            a.command(),
            "::error file=tests/a%2Cb%3Ac.py,line=12,title=t%3A%3Ax failed::50%25 off%0Aassert 1 == 2%0D"
        );
        let bare = Annotation {
            level: Level::Notice,
            file: None,
            line: Some(3),
            title: String::new(),
            message: "done".into(),
        };
        assert_eq!(bare.command(), "::notice::done", "a line needs a file");
    }

    #[test]
    fn outputs_survive_newlines_and_the_delimiter_itself() {
        assert_eq!(
            output("status", "completed", "x"),
            "status<<ghadelimiter_x\ncompleted\nghadelimiter_x\n"
        );
        let hostile = "a\nghadelimiter_x\nsession=evil";
        let out = output("session", hostile, "x");
        let (head, rest) = out.split_once('\n').unwrap();
        let delim = head.strip_prefix("session<<").unwrap();
        assert_ne!(delim, "ghadelimiter_x");
        assert_eq!(rest, format!("{hostile}\n{delim}\n"));
    }

    #[test]
    fn paths_are_the_repositorys() {
        assert_eq!(in_repo("", "tests/t.py"), "tests/t.py");
        assert_eq!(in_repo("api/", "tests/t.py"), "api/tests/t.py");
    }
}
