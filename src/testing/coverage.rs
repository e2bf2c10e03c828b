//! Readers for coverage reports other tools already wrote: lcov
//! (`lcov.info`), Cobertura XML (`coverage.xml`) and istanbul's
//! `coverage-summary.json`. wfx never guesses coverage: when no report
//! exists, coverage is "unknown" (DESIGN.md §5.7).
//!
//! Parsing is pure (text in, [`Report`] out); paths inside a report are
//! mapped to project-relative ones by a caller-supplied resolver, and files
//! the resolver rejects (dependencies, paths outside the project) are
//! dropped, so no absolute path reaches an artifact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::artifacts::task_record::{Coverage, CoverageSource};

named_enum! {
    plain
    /// Which report format a file is.
    ///
    /// The name stored in `line_coverage.format`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Format {
        Lcov = "lcov",
        Cobertura = "cobertura",
        JsonSummary = "json-summary",
    }
}

/// Counters of one file (or of the whole report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub lines_total: u32,
    pub lines_covered: u32,
    pub branches_total: u32,
    pub branches_covered: u32,
    pub functions_total: u32,
    pub functions_covered: u32,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.lines_total += o.lines_total;
        self.lines_covered += o.lines_covered;
        self.branches_total += o.branches_total;
        self.branches_covered += o.branches_covered;
        self.functions_total += o.functions_total;
        self.functions_covered += o.functions_covered;
    }

    /// Line coverage in percent with one decimal; `None` without lines.
    pub fn line_percent(&self) -> Option<f64> {
        percent(self.lines_covered, self.lines_total)
    }
    pub fn branch_percent(&self) -> Option<f64> {
        percent(self.branches_covered, self.branches_total)
    }
    pub fn function_percent(&self) -> Option<f64> {
        percent(self.functions_covered, self.functions_total)
    }
}

/// `covered / total × 100`, one decimal; `None` when there is nothing to count.
pub fn percent(covered: u32, total: u32) -> Option<f64> {
    (total > 0).then(|| (f64::from(covered) * 1000.0 / f64::from(total)).round() / 10.0)
}

/// One file of a report, with its project-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCoverage {
    pub path: String,
    pub counts: Counts,
}

/// A parsed report: files sorted by path, totals summed over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub format: Format,
    pub files: Vec<FileCoverage>,
    pub totals: Counts,
}

impl Report {
    fn from_map(format: Format, map: BTreeMap<String, Counts>) -> Report {
        let mut totals = Counts::default();
        let files = map
            .into_iter()
            .map(|(path, counts)| {
                totals.add(&counts);
                FileCoverage { path, counts }
            })
            .collect();
        Report {
            format,
            files,
            totals,
        }
    }
}

/// Report files looked for on disk, in order: the first one that exists
/// wins. Coverage output is usually git-ignored, so these are checked on
/// disk rather than in the file list.
pub const CANDIDATES: &[(&str, Format)] = &[
    ("coverage/lcov.info", Format::Lcov),
    ("lcov.info", Format::Lcov),
    ("target/lcov.info", Format::Lcov),
    ("target/coverage/lcov.info", Format::Lcov),
    ("coverage/coverage-summary.json", Format::JsonSummary),
    ("coverage-summary.json", Format::JsonSummary),
    ("coverage.xml", Format::Cobertura),
    ("cobertura.xml", Format::Cobertura),
    ("coverage/cobertura-coverage.xml", Format::Cobertura),
    ("coverage/cobertura.xml", Format::Cobertura),
    ("target/cobertura.xml", Format::Cobertura),
    ("target/tarpaulin/cobertura.xml", Format::Cobertura),
];

/// The format a file name suggests (`*.info` is lcov, `*.xml` Cobertura,
/// `*.json` istanbul json-summary).
pub fn format_of(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".info") || name == "lcov" {
        Some(Format::Lcov)
    } else if name.ends_with(".xml") {
        Some(Format::Cobertura)
    } else if name.ends_with(".json") {
        Some(Format::JsonSummary)
    } else {
        None
    }
}

/// The first existing report under `root` (see [`CANDIDATES`]), or
/// `configured` first when the project names one.
pub fn find_report(root: &Path, configured: Option<&str>) -> Option<(PathBuf, Format)> {
    if let Some(rel) = configured {
        let path = root.join(rel);
        if path.is_file()
            && let Some(f) = format_of(&path)
        {
            return Some((path, f));
        }
    }
    CANDIDATES.iter().find_map(|(rel, f)| {
        let path = root.join(rel);
        path.is_file().then_some((path, *f))
    })
}

/// Parse a report of the given format. `resolve` maps a path as the report
/// spells it to a project-relative path, or `None` to drop the file.
pub fn parse(
    format: Format,
    text: &str,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Result<Report, String> {
    match format {
        Format::Lcov => parse_lcov(text, resolve),
        Format::Cobertura => parse_cobertura(text, resolve),
        Format::JsonSummary => parse_json_summary(text, resolve),
    }
}

/// lcov tracefile: `SF:` starts a file, `DA:line,hits` counts lines,
/// `BRDA:` branches, `FNDA:` functions, `end_of_record` ends it. `LF/LH`
/// summary lines are ignored: counts come from the records themselves.
pub fn parse_lcov(text: &str, resolve: &dyn Fn(&str) -> Option<String>) -> Result<Report, String> {
    let mut map: BTreeMap<String, Counts> = BTreeMap::new();
    let mut current: Option<(String, Counts)> = None;
    let mut saw_record = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(sf) = line.strip_prefix("SF:") {
            if let Some((path, counts)) = current.take() {
                merge(&mut map, path, counts);
            }
            saw_record = true;
            current = resolve(sf.trim()).map(|p| (p, Counts::default()));
            continue;
        }
        if line == "end_of_record" {
            if let Some((path, counts)) = current.take() {
                merge(&mut map, path, counts);
            }
            continue;
        }
        let Some((_, counts)) = current.as_mut() else {
            continue;
        };
        let bad = || format!("line {}: malformed `{}`", i + 1, truncate(line, 60));
        if let Some(rest) = line.strip_prefix("DA:") {
            let hits = rest.split(',').nth(1).ok_or_else(bad)?;
            counts.lines_total += 1;
            if hits.trim().parse::<f64>().map_err(|_| bad())? > 0.0 {
                counts.lines_covered += 1;
            }
        } else if let Some(rest) = line.strip_prefix("BRDA:") {
            let taken = rest.split(',').nth(3).ok_or_else(bad)?.trim();
            counts.branches_total += 1;
            if taken != "-" && taken.parse::<f64>().map_err(|_| bad())? > 0.0 {
                counts.branches_covered += 1;
            }
        } else if let Some(rest) = line.strip_prefix("FNDA:") {
            let hits = rest.split(',').next().ok_or_else(bad)?;
            counts.functions_total += 1;
            if hits.trim().parse::<f64>().map_err(|_| bad())? > 0.0 {
                counts.functions_covered += 1;
            }
        }
    }
    if let Some((path, counts)) = current.take() {
        merge(&mut map, path, counts);
    }
    if !saw_record {
        return Err("no `SF:` record: not an lcov tracefile".into());
    }
    Ok(Report::from_map(Format::Lcov, map))
}

fn merge(map: &mut BTreeMap<String, Counts>, path: String, counts: Counts) {
    map.entry(path).or_default().add(&counts);
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// Cobertura XML: `<source>` roots, `<class filename=…>` per file with
/// `<line number hits branch condition-coverage>` children; `<method>`
/// elements count as functions (covered when any of their lines has hits).
pub fn parse_cobertura(
    text: &str,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Result<Report, String> {
    if !text.contains("<coverage") {
        return Err("no <coverage> element: not a Cobertura report".into());
    }
    let source_re = Regex::new(r"<source>\s*([^<]*?)\s*</source>").expect("valid regex");
    let sources: Vec<String> = source_re
        .captures_iter(text)
        .map(|c| xml_unescape(&c[1]))
        .collect();
    let tag_re = Regex::new(r"<(/?)(class|method|line)\b([^>]*)>").expect("valid regex");
    let attr_re = Regex::new(r#"([A-Za-z_-]+)\s*=\s*"([^"]*)""#).expect("valid regex");
    let cond_re = Regex::new(r"\((\d+)\s*/\s*(\d+)\)").expect("valid regex");

    let mut map: BTreeMap<String, Counts> = BTreeMap::new();
    // The class being read: its resolved path and counts; `None` inside a
    // class that resolves to nothing (its lines are skipped).
    let mut class: Option<Option<(String, Counts)>> = None;
    let mut method_hit: Option<bool> = None;
    for cap in tag_re.captures_iter(text) {
        let closing = &cap[1] == "/";
        let name = &cap[2];
        let attrs_text = &cap[3];
        let self_closing = attrs_text.trim_end().ends_with('/');
        let attr = |key: &str| {
            attr_re
                .captures_iter(attrs_text)
                .find(|a| &a[1] == key)
                .map(|a| xml_unescape(&a[2]))
        };
        match (name, closing) {
            ("class", false) => {
                let filename = attr("filename").unwrap_or_default();
                // An absolute file name stands alone; a relative one is
                // tried as given, then under each <source> root.
                let resolved = if filename.starts_with('/') {
                    resolve(&filename)
                } else {
                    resolve(&filename).or_else(|| {
                        sources.iter().find_map(|src| {
                            resolve(&format!("{}/{}", src.trim_end_matches('/'), filename))
                        })
                    })
                };
                class = Some(resolved.map(|p| (p, Counts::default())));
                if self_closing {
                    finish_class(&mut map, &mut class);
                }
            }
            ("class", true) => finish_class(&mut map, &mut class),
            ("method", false) => {
                method_hit = Some(false);
                if self_closing {
                    finish_method(&mut class, &mut method_hit);
                }
            }
            ("method", true) => finish_method(&mut class, &mut method_hit),
            ("line", false) => {
                let hits: f64 = attr("hits")
                    .and_then(|h| h.trim().parse().ok())
                    .unwrap_or(0.0);
                if let Some(hit) = method_hit.as_mut() {
                    // Lines inside <method> repeat the class's lines: they
                    // only decide whether the method ran.
                    *hit |= hits > 0.0;
                    continue;
                }
                let Some(Some((_, counts))) = class.as_mut() else {
                    continue;
                };
                counts.lines_total += 1;
                if hits > 0.0 {
                    counts.lines_covered += 1;
                }
                if attr("branch").as_deref() == Some("true")
                    && let Some(cc) = attr("condition-coverage")
                    && let Some(c) = cond_re.captures(&cc)
                {
                    counts.branches_covered += c[1].parse::<u32>().unwrap_or(0);
                    counts.branches_total += c[2].parse::<u32>().unwrap_or(0);
                }
            }
            _ => {}
        }
    }
    Ok(Report::from_map(Format::Cobertura, map))
}

fn finish_class(map: &mut BTreeMap<String, Counts>, class: &mut Option<Option<(String, Counts)>>) {
    if let Some(Some((path, counts))) = class.take() {
        merge(map, path, counts);
    }
}

fn finish_method(class: &mut Option<Option<(String, Counts)>>, hit: &mut Option<bool>) {
    if let (Some(h), Some(Some((_, counts)))) = (hit.take(), class.as_mut()) {
        counts.functions_total += 1;
        if h {
            counts.functions_covered += 1;
        }
    }
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// istanbul `coverage-summary.json`: `{"total": {...}, "<file>": {"lines":
/// {"total", "covered"}, "branches": …, "functions": …}}`.
pub fn parse_json_summary(
    text: &str,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Result<Report, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let obj = value
        .as_object()
        .filter(|o| o.contains_key("total"))
        .ok_or("no \"total\" key: not an istanbul json-summary report")?;
    let metric = |v: &serde_json::Value, key: &str| -> (u32, u32) {
        let m = &v[key];
        let n = |k: &str| m[k].as_u64().unwrap_or(0).min(u64::from(u32::MAX)) as u32;
        (n("total"), n("covered"))
    };
    let mut map = BTreeMap::new();
    for (key, v) in obj {
        if key == "total" {
            continue;
        }
        let Some(path) = resolve(key) else { continue };
        let (lines_total, lines_covered) = metric(v, "lines");
        let (branches_total, branches_covered) = metric(v, "branches");
        let (functions_total, functions_covered) = metric(v, "functions");
        merge(
            &mut map,
            path,
            Counts {
                lines_total,
                lines_covered,
                branches_total,
                branches_covered,
                functions_total,
                functions_covered,
            },
        );
    }
    Ok(Report::from_map(Format::JsonSummary, map))
}

/// A resolver for [`parse`]: paths under `root` (absolute or relative)
/// become relative with `/` separators when `exists` says the file is part
/// of the project; everything else is dropped.
pub fn project_resolver<'a>(
    root: &'a Path,
    exists: &'a dyn Fn(&str) -> bool,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |raw: &str| {
        let raw = raw.trim();
        if raw.is_empty() {
            return None;
        }
        let p = Path::new(raw);
        let rel = if p.is_absolute() {
            p.strip_prefix(root).ok()?.to_path_buf()
        } else {
            p.to_path_buf()
        };
        let mut parts: Vec<String> = Vec::new();
        for c in rel.components() {
            match c {
                std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    parts.pop()?;
                }
                _ => return None,
            }
        }
        let rel = parts.join("/");
        (!rel.is_empty() && exists(&rel)).then_some(rel)
    }
}

/// Read the first coverage report under `root` (DESIGN.md §5.7); `source`
/// says how it came to be (`Command` after running the coverage command,
/// `Report` for one found on disk).
pub fn read(root: &Path, source: CoverageSource) -> Coverage {
    let Some((path, format)) = find_report(root, None) else {
        return Coverage::unknown(if source == CoverageSource::Command {
            "the coverage command wrote no report wfx can read (lcov, Cobertura or json-summary)"
        } else {
            "no coverage report found and no test.coverage_command configured"
        });
    };
    let rel = crate::session::Workspace::new(root).rel(&path);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Coverage::unknown(format!("cannot read {rel}: {e}")),
    };
    let exists = |p: &str| root.join(p).is_file();
    let resolve = project_resolver(root, &exists);
    match parse(format, &text, &resolve) {
        Ok(report) => Coverage {
            source,
            report: Some(rel),
            line: report.totals.line_percent(),
            branch: report.totals.branch_percent(),
            function: report.totals.function_percent(),
            note: None,
        },
        Err(e) => Coverage::unknown(format!("{rel}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep_relative(raw: &str) -> Option<String> {
        let p = raw.strip_prefix("/proj/").unwrap_or(raw);
        (!p.starts_with('/')).then(|| p.to_string())
    }

    #[test]
    fn lcov_counts_lines_branches_functions_and_drops_outside_files() {
        let text = "TN:\nSF:/proj/src/lib.rs\nFN:3,add\nFN:9,sub\nFNDA:4,add\nFNDA:0,sub\n\
DA:3,4\nDA:4,4\nDA:9,0\nDA:10,0\nBRDA:4,0,0,1\nBRDA:4,0,1,-\nLF:4\nLH:2\nend_of_record\n\
SF:/home/u/.cargo/registry/dep.rs\nDA:1,1\nend_of_record\nSF:src/stats.rs\nDA:1,1\nend_of_record\n";
        let r = parse_lcov(text, &keep_relative).unwrap();
        assert_eq!(r.format, Format::Lcov);
        let paths: Vec<_> = r.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/lib.rs", "src/stats.rs"]);
        let lib = &r.files[0].counts;
        assert_eq!((lib.lines_total, lib.lines_covered), (4, 2));
        assert_eq!((lib.branches_total, lib.branches_covered), (2, 1));
        assert_eq!((lib.functions_total, lib.functions_covered), (2, 1));
        assert_eq!(lib.line_percent(), Some(50.0));
        assert_eq!((r.totals.lines_total, r.totals.lines_covered), (5, 3));
        assert_eq!(r.totals.line_percent(), Some(60.0));
    }

    #[test]
    fn lcov_rejects_other_text_and_reports_malformed_lines() {
        assert!(parse_lcov("hello", &keep_relative).is_err());
        let err = parse_lcov("SF:a.rs\nDA:1\n", &keep_relative).unwrap_err();
        assert_eq!(err, "line 2: malformed `DA:1`");
    }

    #[test]
    fn cobertura_uses_sources_lines_conditions_and_methods() {
        let text = r#"<?xml version="1.0" ?>
<coverage line-rate="0.5" branch-rate="0.5" version="7.4">
  <sources><source>/proj</source></sources>
  <packages><package name="calc"><classes>
    <class name="ops.py" filename="calc/ops.py" line-rate="0.5">
      <methods>
        <method name="add" signature="()"><lines><line number="4" hits="1"/></lines></method>
        <method name="divide" signature="()"><lines><line number="9" hits="0"/></lines></method>
      </methods>
      <lines>
        <line number="4" hits="1"/>
        <line number="5" hits="3" branch="true" condition-coverage="50% (1/2)"/>
        <line number="9" hits="0"/>
        <line number="10" hits="0"/>
      </lines>
    </class>
    <class name="x" filename="/elsewhere/x.py"><lines><line number="1" hits="1"/></lines></class>
  </classes></package></packages>
</coverage>"#;
        let r = parse_cobertura(text, &|p: &str| {
            p.strip_prefix("/proj/").map(str::to_string)
        })
        .unwrap();
        assert_eq!(r.files.len(), 1);
        let f = &r.files[0];
        assert_eq!(f.path, "calc/ops.py");
        assert_eq!((f.counts.lines_total, f.counts.lines_covered), (4, 2));
        assert_eq!((f.counts.branches_total, f.counts.branches_covered), (2, 1));
        assert_eq!(
            (f.counts.functions_total, f.counts.functions_covered),
            (2, 1)
        );
        assert!(parse_cobertura("<html/>", &keep_relative).is_err());
    }

    #[test]
    fn json_summary_reads_files_and_skips_total() {
        let text = r#"{"total": {"lines": {"total": 99, "covered": 1, "pct": 1}},
 "/proj/src/math.js": {"lines": {"total": 10, "covered": 9, "skipped": 0, "pct": 90},
   "functions": {"total": 4, "covered": 3, "pct": 75},
   "branches": {"total": 2, "covered": 2, "pct": 100},
   "statements": {"total": 10, "covered": 9, "pct": 90}}}"#;
        let r = parse_json_summary(text, &keep_relative).unwrap();
        assert_eq!(r.files.len(), 1);
        assert_eq!(r.files[0].path, "src/math.js");
        assert_eq!(r.totals.line_percent(), Some(90.0));
        assert_eq!(r.totals.function_percent(), Some(75.0));
        assert_eq!(r.totals.branch_percent(), Some(100.0));
        assert!(parse_json_summary("[]", &keep_relative).is_err());
    }

    #[test]
    fn resolver_keeps_project_files_only() {
        let root = Path::new("/proj");
        let exists = |p: &str| p == "src/lib.rs";
        let r = project_resolver(root, &exists);
        assert_eq!(r("/proj/src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(r("./src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(r("src/../src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(r("/other/src/lib.rs"), None);
        assert_eq!(r("../lib.rs"), None);
        assert_eq!(r("src/main.rs"), None);
    }

    #[test]
    fn percent_rounds_to_one_decimal() {
        assert_eq!(percent(1, 3), Some(33.3));
        assert_eq!(percent(2, 3), Some(66.7));
        assert_eq!(percent(0, 0), None);
    }

    #[test]
    fn coverage_from_an_lcov_report() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("coverage")).unwrap();
        std::fs::write(dir.path().join("a.py"), "x\n").unwrap();
        std::fs::write(
            dir.path().join("coverage/lcov.info"),
            "SF:a.py\nDA:1,1\nDA:2,0\nDA:3,1\nDA:4,1\nend_of_record\n",
        )
        .unwrap();
        let c = read(dir.path(), CoverageSource::Report);
        assert_eq!(c.report.as_deref(), Some("coverage/lcov.info"));
        assert_eq!(c.line, Some(75.0));
        assert_eq!(
            read(tempfile::tempdir().unwrap().path(), CoverageSource::Report).source,
            CoverageSource::Unknown
        );
    }
}
