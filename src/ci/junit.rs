//! `--junit FILE`: a test run's results as JUnit XML, the format GitLab,
//! Jenkins, Buildkite and most CI services read. One `<testsuite>` per
//! test file (one named after the command for tests without a file), each
//! case named by its wfx test id (the form its runner re-runs), failures
//! with their first error line as `message` and the excerpt as text,
//! preceded by `at FILE:LINE` when the line is known.
//!
//! The document validates against the JUnit schema of Jenkins' xunit
//! plugin (`fixtures/junit/junit-10.xsd`), and wfx's own JUnit
//! parser reads it back to the same ids, statuses, files, lines and
//! errors (`<testsuites name="wfx">` names the dialect).

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifacts::TestResults;
use crate::artifacts::test_results::{CaseStatus, Failure};
use crate::error::Result;

use crate::testing::parse::junit::ROOT_NAME;

/// Text as XML character data or an attribute value: the five special
/// characters escaped, characters XML 1.0 forbids dropped, and line
/// breaks kept as character references in attributes.
pub fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' if attribute => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One test case to write.
struct Case<'a> {
    id: &'a str,
    file: Option<&'a str>,
    status: CaseStatus,
    failure: Option<&'a Failure>,
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The results as a JUnit XML document.
pub fn to_xml(results: &TestResults) -> String {
    let by_id: BTreeMap<&str, &Failure> = results
        .failures
        .iter()
        .map(|f| (f.test.as_str(), f))
        .collect();
    let mut cases: Vec<Case> = results
        .cases
        .iter()
        .map(|c| Case {
            id: &c.test,
            file: c
                .file
                .as_deref()
                .or_else(|| by_id.get(c.test.as_str()).and_then(|f| f.file.as_deref())),
            status: c.status,
            failure: by_id.get(c.test.as_str()).copied(),
        })
        .collect();
    // Failures without a case: a build error, a crash, a runner whose
    // cases wfx could not read (static failures).
    for f in &results.failures {
        if !results.cases.iter().any(|c| c.test == f.test) {
            cases.push(Case {
                id: &f.test,
                file: f.file.as_deref(),
                status: CaseStatus::Error,
                failure: Some(f),
            });
        }
    }
    let mut suites: BTreeMap<Option<&str>, Vec<&Case>> = BTreeMap::new();
    for c in &cases {
        suites.entry(c.file).or_default().push(c);
    }
    let count = |cs: &[&Case], s: CaseStatus| cs.iter().filter(|c| c.status == s).count();
    let all: Vec<&Case> = cases.iter().collect();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"{ROOT_NAME}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
        all.len(),
        count(&all, CaseStatus::Failed),
        count(&all, CaseStatus::Error),
        seconds(results.duration_ms)
    ));
    let timestamp = results
        .started_at
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string());
    for (file, cs) in &suites {
        let name = file.unwrap_or(results.command.as_str());
        xml.push_str(&format!(
            "  <testsuite name=\"{}\"{} tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>\n",
            escape(name, true),
            file.map_or(String::new(), |f| format!(" file=\"{}\"", escape(f, true))),
            cs.len(),
            count(cs, CaseStatus::Failed),
            count(cs, CaseStatus::Error),
            count(cs, CaseStatus::Skipped),
            timestamp
                .as_deref()
                .map_or(String::new(), |t| format!(" timestamp=\"{t}\"")),
        ));
        for c in cs {
            let head = format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"0\"",
                escape(c.id, true),
                escape(name, true)
            );
            let element = match c.status {
                CaseStatus::Passed => None,
                CaseStatus::Skipped => Some("skipped"),
                CaseStatus::Failed => Some("failure"),
                CaseStatus::Error => Some("error"),
            };
            match (element, c.failure) {
                (None, _) => xml.push_str(&format!("{head}/>\n")),
                (Some("skipped"), _) => {
                    xml.push_str(&format!("{head}>\n      <skipped/>\n    </testcase>\n"))
                }
                (Some(tag), f) => {
                    let error = f.map_or("", |f| f.error.as_str());
                    let mut body = String::new();
                    if let Some(f) = f {
                        if let (Some(file), Some(line)) = (&f.file, f.line) {
                            body.push_str(&format!("at {file}:{line}\n"));
                        }
                        body.push_str(&f.message);
                    }
                    xml.push_str(&format!(
                        "{head}>\n      <{tag} message=\"{}\" type=\"{tag}\">{}</{tag}>\n    </testcase>\n",
                        escape(error, true),
                        escape(&body, false)
                    ));
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Write the results to `path` (replaced; never written through a link).
pub fn write(path: &Path, results: &TestResults) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    }
    crate::session::store::write_atomic(path, to_xml(results).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_xml_well_formed() {
        assert_eq!(escape("a<b>&\"c'", true), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(escape("a\nb\u{1b}[31m", true), "a&#10;b[31m");
        assert_eq!(escape("a\nb\"", false), "a\nb\"");
    }
}
