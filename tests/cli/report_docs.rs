//! Generated documentation must match what the code generates:
//! `docs/config-reference.md` from `schemas/config.schema.json`, the check
//! tables of `docs/scans.md` from the scan rules.
//! Regenerate with:
//!     WFX_UPDATE_DOCS=1 cargo test --test cli report_docs::

use std::path::Path;

use wfx::report::{config_doc, scan_doc};

fn schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/config.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn config_reference_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/config-reference.md");
    let want = config_doc::markdown(&schema());
    if std::env::var_os("WFX_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/config-reference.md is stale; regenerate with: {}",
        config_doc::REGENERATE
    );
}

#[test]
fn scan_tables_are_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scans.md");
    let have = std::fs::read_to_string(&path).unwrap();
    let want = scan_doc::update(&have).expect("docs/scans.md keeps its <!-- rules:… --> markers");
    if std::env::var_os("WFX_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        have == want,
        "docs/scans.md is stale; regenerate with: {}",
        scan_doc::REGENERATE
    );
}

/// Every rule of the tables also has its paragraph: what it detects.
#[test]
fn every_scan_rule_is_described() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scans.md");
    let page = std::fs::read_to_string(path).unwrap();
    let missing: Vec<&str> = wfx::scan::rules::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !page.contains(&format!("- **`{id}`**")))
        .collect();
    assert!(
        missing.is_empty(),
        "scan rules without a paragraph in docs/scans.md: {missing:?}"
    );
}

/// A field without a description would leave a hole in the reference:
/// document it with a doc comment on the config type.
#[test]
fn every_config_field_is_described() {
    let missing: Vec<String> = config_doc::sections(&schema())
        .into_iter()
        .flat_map(|s| s.fields)
        .filter(|f| f.description.is_empty())
        .map(|f| f.path)
        .collect();
    assert!(
        missing.is_empty(),
        "config fields without a description: {missing:?}"
    );
}

/// Every field of DESIGN.md §7's example appears in the reference.
#[test]
fn reference_covers_the_design_example() {
    let md = config_doc::markdown(&schema());
    for field in [
        "test.command",
        "test.timeout_s",
        "test.junit",
        "test.related_command",
        "test.coverage_command",
        "agents.analysis",
        "agents.fix",
        "agents.test_gen",
        "agents.definitions",
        "agents.definitions.<name>.preset",
        "agents.definitions.<name>.command",
        "agents.definitions.<name>.timeout_s",
        "agents.definitions.<name>.model",
        "agents.max_cost_usd",
        "cycle.max_iterations",
        "cycle.pass_threshold",
        "cycle.regression_threshold_pp",
        "cycle.stuck_after",
        "cycle.no_progress_limit",
        "cycle.progressive",
        "cycle.commit",
        "cycle.test_edits.remove_or_skip",
        "cycle.test_edits.modify",
        "gates.coverage.line",
        "gates.coverage.branch",
        "gates.coverage.function",
        "gates.code_validation.critical",
        "gates.code_validation.error",
        "gates.code_validation.warning",
        "gates.code_validation.max_retries",
    ] {
        assert!(md.contains(&format!("| `{field}` |")), "{field} missing");
    }
    assert!(md.contains("| `cycle.pass_threshold` | number | `95` | 0–100 |"));
    assert!(md.contains("| `cycle.test_edits.remove_or_skip` | `\"reject\"` \\| `\"flag\"` \\| `\"allow\"` | `\"reject\"` |"));
}

/// User docs stand alone: the README and `docs/` never send a reader to a
/// file outside the repository (the design contract, its reference notes
/// or seeds, numbered sections of them); what a user needs from those is
/// written in the docs themselves.
#[test]
fn user_docs_cite_no_file_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let outside = regex::Regex::new(r"DESIGN|REFERENCE\.md|\.\./shared|\bseeds?\b \d|§").unwrap();
    let mut found = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(m) = outside.find(line) {
                found.push(format!(
                    "{}:{}: `{}` in {line}",
                    page.strip_prefix(root).unwrap().display(),
                    n + 1,
                    m.as_str()
                ));
            }
        }
    }
    assert!(pages.len() > 15, "{pages:?}");
    assert!(found.is_empty(), "{}", found.join("\n"));
}
