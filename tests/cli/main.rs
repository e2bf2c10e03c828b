//! wfx's integration tests, run as a user would: the `wfx` binary in a
//! hermetic temp project (`common::Env`), one module per area. One test
//! binary links the crate once instead of once per file; run one area with
//! `cargo nextest run --test cli -E 'test(/^help::/)'` or
//! `cargo test --test cli help::`.
//!
//! The contract suite with the real agent CLIs is its own binary
//! (tests/real_agents/). `no_forgotten_test_files` below fails when a file
//! under tests/ is in neither.

mod common;

mod agents_builtin;
mod agents_chain;
mod agents_doctor;
mod agents_init;
mod agents_invoke;
mod agents_phase3;
mod analyzer_cases;
mod candidates;
mod ci_docs;
mod ci_mode;
mod core_sessions;
mod cycle_crash;
mod cycle_environment;
mod cycle_git;
mod cycle_loop;
mod cycle_migration;
mod cycle_resume;
mod cycle_tasks;
mod cycle_watch;
mod demo;
mod fix_diff;
mod gen_agent;
mod gen_events;
mod gen_lead;
mod gen_modes;
mod gen_snapshots;
mod git_checkpoints;
mod git_convention;
mod git_policy;
mod hardening_artifacts;
mod hardening_env;
mod hardening_inputs;
mod harness_regressions;
mod help;
mod interop_agent;
mod interop_ccw;
mod mcp_jsonrpc;
mod mcp_sdk;
mod preflight;
mod progress_pty;
mod report_browser;
mod report_docs;
mod report_runs;
mod report_sessions;
mod retest_repros;
mod runner_cli;
mod runner_identity;
mod runner_live;
mod scan_ai_issues;
mod scan_antipatterns;
mod scan_bench;
mod schemas;
mod sealed_verdict;
mod session_abandon;
mod state_consistency;
mod status_view;
mod trust_files;
mod trust_git;
mod trust_links;
mod trust_processes;
mod trust_secrets;
mod trust_tests_guard;
mod ux_states;
mod workflow_candidates;
mod workflow_cli;
mod workflow_live;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// With `autotests = false`, cargo builds only the `[[test]]` targets of
/// Cargo.toml: a file under tests/ that no `mod` reaches from one of them
/// would never compile nor run, silently. (jj's
/// `test_no_forgotten_test_files` is the model.)
#[test]
fn no_forgotten_test_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let roots: Vec<PathBuf> = test_target_paths(&manifest)
        .iter()
        .map(|p| root.join(p))
        .collect();
    assert!(
        roots.contains(&root.join(file!().trim_start_matches("./"))),
        "Cargo.toml's [[test]] targets {roots:?} do not name this file"
    );

    let mut compiled = BTreeSet::new();
    let mut todo = roots;
    while let Some(file) = todo.pop() {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        todo.extend(mod_files(&file, &text));
        compiled.insert(file);
    }

    let mut on_disk = BTreeSet::new();
    rust_files(&root.join("tests"), &mut on_disk);
    let rel = |p: &PathBuf| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let missing: Vec<_> = compiled.difference(&on_disk).map(rel).collect();
    assert!(missing.is_empty(), "declared but not found: {missing:?}");
    let forgotten: Vec<_> = on_disk.difference(&compiled).map(rel).collect();
    assert!(
        forgotten.is_empty(),
        "no test binary compiles {forgotten:?}: declare each with `mod` in \
         tests/cli/main.rs (or the module that owns it)"
    );
}

/// The `path` of every `[[test]]` table of Cargo.toml.
fn test_target_paths(manifest: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if let Some(value) = line.strip_prefix("path")
            && in_test
        {
            let value = value.trim_start().trim_start_matches('=').trim();
            paths.push(value.trim_matches('"').to_string());
        }
    }
    paths
}

/// The files that `mod name;` declarations in `file` load, as rustc finds
/// them: beside a `main.rs`/`mod.rs`, else in a directory named after the
/// file; `name.rs` or `name/mod.rs`; a `#[path = "…"]` line above wins.
fn mod_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let here = file.parent().unwrap();
    let stem = file.file_stem().unwrap();
    let dir = if stem == "main" || stem == "mod" {
        here.to_path_buf()
    } else {
        here.join(stem)
    };
    let mut files = Vec::new();
    let mut path_attr = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path") {
            path_attr = Some(rest.trim_start().trim_start_matches('=').trim());
            continue;
        }
        let decl = line.strip_prefix("pub ").unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
            let found = match path_attr {
                Some(p) => here.join(p.trim_end_matches(']').trim_matches('"')),
                None => {
                    let flat = dir.join(format!("{name}.rs"));
                    if flat.exists() {
                        flat
                    } else {
                        dir.join(name).join("mod.rs")
                    }
                }
            };
            files.push(normalize(&found));
        }
        if !line.starts_with("#[") && !line.starts_with("//") {
            path_attr = None;
        }
    }
    files
}

/// `a/b/../c` as `a/c`, so a `#[path]` into a sibling directory names the
/// same file as the walk of the directory does.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
}
