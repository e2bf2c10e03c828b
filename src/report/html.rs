//! `wfx report --html`: one self-contained HTML file rendered from
//! `templates/report.html.j2` (overridable from `.workflow/templates/`).
//! The template is HTML-escaped automatically, so test names and error
//! messages, which are untrusted, always appear as text.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::{chart, run, view};
use crate::error::{Error, Result};
use crate::render::Renderer;
use crate::session::{SessionRef, Workspace, store};

/// The template's name under `templates/`.
pub const TEMPLATE: &str = "report.html.j2";

/// Where the report's links start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkBase {
    /// The report lies inside the project: artifacts are linked by a
    /// relative path from `report_dir`, which stays valid when the project
    /// (report included) is moved or committed.
    Relative { root: PathBuf, report_dir: PathBuf },
    /// The report lies outside the project: a relative link would spell
    /// out where the project lives on this machine, so paths are shown as
    /// text, relative to the project root.
    None,
}

impl LinkBase {
    /// `root` and `report_file` must be absolute and free of symlinks
    /// (canonical), as [`write_report`] makes them.
    pub fn for_report(root: &Path, report_file: &Path) -> LinkBase {
        match report_file.parent() {
            Some(dir) if dir.starts_with(root) => LinkBase::Relative {
                root: root.to_path_buf(),
                report_dir: dir.to_path_buf(),
            },
            _ => LinkBase::None,
        }
    }

    /// The link to `rel` (a path relative to the project root).
    pub fn href(&self, rel: &str) -> Option<String> {
        match self {
            LinkBase::Relative { root, report_dir } => {
                let target = root.join(rel);
                let path = relative(report_dir, &target)?;
                Some(encode_href(&path))
            }
            LinkBase::None => None,
        }
    }
}

/// The relative path from directory `from` to `to` (both absolute and
/// normalised); None when they share no root or contain `..`.
pub fn relative(from: &Path, to: &Path) -> Option<String> {
    let plain = |p: &Path| {
        p.components()
            .map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                Component::RootDir => Some(String::new()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
    };
    let (from, to) = (plain(from)?, plain(to)?);
    if from.first() != Some(&String::new()) || to.first() != Some(&String::new()) {
        return None;
    }
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(to[common..].iter().map(String::as_str));
    Some(parts.join("/"))
}

/// Percent-encode what a relative URL path cannot carry as is
/// (`%`, `#`, `?`, spaces, non-ASCII…); `/` stays a separator.
pub fn encode_href(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[derive(Serialize)]
struct Context<'a> {
    s: &'a view::SessionView,
    chart_svg: String,
    /// A `wfx run` session: the chart of each test step that ran its tests
    /// more than once, by step index.
    step_charts: BTreeMap<String, String>,
    links: bool,
    generated_at: String,
    wfx_version: &'static str,
    colours: Vec<(&'static str, &'static str)>,
}

/// Render the report of `view` with `renderer` (which knows the project's
/// template overrides). Pure apart from reading an override template.
pub fn render(
    renderer: &Renderer,
    view: &view::SessionView,
    links: bool,
    generated_at: &str,
) -> Result<String> {
    let ctx = Context {
        s: view,
        chart_svg: chart::pass_rate_chart(&view.runs, view.pass_threshold),
        step_charts: view
            .run
            .as_ref()
            .map(|r| {
                r.steps
                    .iter()
                    .filter(|st| st.chart)
                    .map(step_chart)
                    .collect()
            })
            .unwrap_or_default(),
        links,
        generated_at: generated_at.to_string(),
        wfx_version: crate::VERSION,
        colours: ["conservative", "aggressive", "surgical"]
            .into_iter()
            .map(|s| (s, chart::strategy_colour(Some(s))))
            .collect(),
    };
    renderer.render(TEMPLATE, &ctx)
}

/// The chart of one `wfx run` test step, keyed by its index.
fn step_chart(st: &run::StepView) -> (String, String) {
    let id = format!("chart-step-{}", st.index);
    let title = format!("Pass rate per test run of {}", st.label);
    let svg = chart::pass_rate_chart_with(
        &run::chart_runs(st),
        run::RUN_CHART_THRESHOLD,
        &chart::ChartOptions {
            id: &id,
            title: &title,
            x_axis: "test run (0: initial run, N: after debug attempt N)",
            point: "run",
            cycle: false,
        },
    );
    (st.index.to_string(), svg)
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub session_id: String,
    pub report: PathBuf,
    pub bytes: usize,
    pub links: bool,
    pub outcome: view::Outcome,
    pub problems: Vec<String>,
}

/// Read the session, render its report and write it to `out` atomically
/// (parent directories are created).
pub fn write_report(ws: &Workspace, sref: &SessionRef, out: &Path) -> Result<Written> {
    let data = super::load(ws, sref)?;
    let out = absolute_file(out)?;
    let root = ws.root.canonicalize().map_err(|e| Error::io(&ws.root, e))?;
    let base = LinkBase::for_report(&root, &out);
    let view = view::build(&data, &|rel| base.href(rel));
    let renderer = Renderer::new(Some(&ws.templates_dir()));
    let now = view::timestamp(&chrono::Utc::now());
    let html = render(&renderer, &view, base != LinkBase::None, &now)?;
    store::write_atomic(&out, html.as_bytes())?;
    Ok(Written {
        session_id: view.session_id.clone(),
        report: out,
        bytes: html.len(),
        links: base != LinkBase::None,
        outcome: view.outcome.clone(),
        problems: view.problems.clone(),
    })
}

/// `out` made absolute and canonical up to its parent directory, which is
/// created when missing.
fn absolute_file(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .filter(|n| *n != "..")
        .ok_or_else(|| Error::usage(format!("--html {}: not a file name", out.display())))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs_err::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    let parent = parent.canonicalize().map_err(|e| Error::io(&parent, e))?;
    let path = parent.join(name);
    if path.is_dir() {
        return Err(Error::usage(format!(
            "--html {}: is a directory",
            out.display()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        for (from, to, want) in [
            ("/p", "/p/.workflow/a/x.json", Some(".workflow/a/x.json")),
            (
                "/p/reports",
                "/p/.workflow/a/x.json",
                Some("../.workflow/a/x.json"),
            ),
            ("/p/.workflow/a", "/p/.workflow/a/x.json", Some("x.json")),
            ("/p/a/b/c", "/p/x", Some("../../../x")),
            ("relative", "/p/x", None),
            ("/p/../q", "/p/x", None),
        ] {
            assert_eq!(
                relative(Path::new(from), Path::new(to)).as_deref(),
                want,
                "{from} → {to}"
            );
        }
    }

    #[test]
    fn links_only_inside_the_project() {
        let inside = LinkBase::for_report(Path::new("/p"), Path::new("/p/out/r.html"));
        assert_eq!(
            inside.href(".workflow/active/WFS-a b/#1.md").as_deref(),
            Some("../.workflow/active/WFS-a%20b/%231.md")
        );
        let at_root = LinkBase::for_report(Path::new("/p"), Path::new("/p/r.html"));
        assert_eq!(at_root.href("x/y.json").as_deref(), Some("x/y.json"));
        let outside = LinkBase::for_report(Path::new("/p"), Path::new("/tmp/r.html"));
        assert_eq!(outside, LinkBase::None);
        assert_eq!(outside.href("x/y.json"), None);
        let sibling = LinkBase::for_report(Path::new("/p"), Path::new("/pq/r.html"));
        assert_eq!(sibling, LinkBase::None);
    }

    #[test]
    fn hrefs_are_encoded() {
        assert_eq!(encode_href("a b/c?d#e%f/é"), "a%20b/c%3Fd%23e%25f/%C3%A9");
        assert_eq!(
            encode_href("../.process/x-1_2.json"),
            "../.process/x-1_2.json"
        );
    }
}
