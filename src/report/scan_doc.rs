//! The check tables of `docs/scans.md`, generated from the scan rules
//! ([`RULES`]): id, category, severity, scope and languages come from there
//! and nowhere else. The prose around the tables (what each check detects,
//! its blind spots) stays hand-written; [`update`] rewrites only the text
//! between the `<!-- rules:… -->` markers.

use crate::project::Lang;
use crate::scan::rules::{RULES, Rule, Scan};

/// The command that regenerates the tables.
pub const REGENERATE: &str = "WFX_UPDATE_DOCS=1 cargo test --test cli report_docs::";

/// `page` with the table of each scan regenerated between its markers
/// (`<!-- rules:ai_issues -->` … `<!-- /rules -->`); `None` when a marker
/// is missing.
pub fn update(page: &str) -> Option<String> {
    let mut out = page.to_string();
    for (scan, key) in [
        (Scan::AiIssues, "ai_issues"),
        (Scan::AntiPatterns, "antipatterns"),
    ] {
        let open = format!("<!-- rules:{key} -->\n");
        let start = out.find(&open)? + open.len();
        let end = start + out[start..].find("<!-- /rules -->")?;
        out.replace_range(start..end, &table(scan));
    }
    Some(out)
}

/// The markdown table of one scan's rules, in table order, the category
/// written once per group.
pub fn table(scan: Scan) -> String {
    let rules: Vec<&Rule> = RULES.iter().filter(|r| r.scan == scan).collect();
    let mut md = format!(
        "<!-- {} checks, generated from wfx::scan::rules::RULES; regenerate with: {REGENERATE} -->\n\n",
        rules.len()
    );
    md.push_str(
        "| category | check id | severity | scope | languages |\n| --- | --- | --- | --- | --- |\n",
    );
    let mut last = "";
    for r in rules {
        let category = if r.category == last {
            String::new()
        } else {
            format!("`{}`", r.category)
        };
        last = r.category;
        let (id, severity, scope) = (r.id, r.severity.as_str(), r.scope.as_str());
        md.push_str(&format!(
            "| {category} | `{id}` | {severity} | {scope} | {} |\n",
            langs(r.langs)
        ));
    }
    if scan == Scan::AntiPatterns {
        md.push_str("| `isolation` | *order dependence* | — | — | **not checked** |\n");
    }
    md.push('\n');
    md
}

/// `all`, or the languages as the page names them (`Py, JS/TS, Go`).
fn langs(langs: &[Lang]) -> String {
    const ORDER: [(Lang, &str); 6] = [
        (Lang::Python, "Py"),
        (Lang::Js, "JS"),
        (Lang::Ts, "TS"),
        (Lang::Rust, "Rust"),
        (Lang::Go, "Go"),
        (Lang::Java, "Java"),
    ];
    if ORDER.iter().all(|(l, _)| langs.contains(l)) {
        return "all".to_string();
    }
    let names: Vec<&str> = ORDER
        .iter()
        .filter(|(l, _)| langs.contains(l))
        .map(|(_, n)| *n)
        .collect();
    names.join(", ").replace("JS, TS", "JS/TS")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_read_as_on_the_page() {
        assert_eq!(langs(&[Lang::Ts]), "TS");
        assert_eq!(
            langs(&[Lang::Python, Lang::Js, Lang::Ts, Lang::Go]),
            "Py, JS/TS, Go"
        );
        assert_eq!(
            langs(&[
                Lang::Java,
                Lang::Go,
                Lang::Rust,
                Lang::Ts,
                Lang::Js,
                Lang::Python
            ]),
            "all"
        );
    }

    #[test]
    fn update_needs_both_markers() {
        assert_eq!(update("no markers"), None);
        let page = "a\n<!-- rules:ai_issues -->\nSTALE ROW\n<!-- /rules -->\nb\n<!-- rules:antipatterns -->\n<!-- /rules -->\n";
        let new = update(page).unwrap();
        assert!(
            new.contains("| `placeholder_code` | `placeholder_comment` | error | non-test | all |"),
            "{new}"
        );
        assert!(
            new.contains("|  | `setup_only` | error | tests | all |"),
            "{new}"
        );
        assert!(!new.contains("STALE ROW"));
        assert_eq!(
            update(&new).as_deref(),
            Some(new.as_str()),
            "regenerating is stable"
        );
    }
}
