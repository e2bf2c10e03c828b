//! `--help` as people read it: the whole text of `wfx --help` and of every
//! subcommand's `--help` is snapshot-tested (insta), and the rules the
//! snapshots could hide are checked over the whole command tree: every
//! argument says what it is, global flags sit under their own heading,
//! commands without a project do not offer `-C`, and a session is named
//! the same way everywhere.
//!
//! A new subcommand needs its snapshot: `cargo insta test --test cli -- help::`,
//! then read and accept it.

use crate::common;

use clap::CommandFactory;
use common::Env;
use wfx::cli::{Cli, GLOBAL_HEADING};

/// Every command path below `wfx` (`["session", "list"]`, …), skipping
/// clap's own `help` subcommand.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_string());
            out.push(path.clone());
            walk(sub, &path, out);
        }
    }
    let mut out = vec![Vec::new()];
    let mut cmd = Cli::command();
    cmd.build();
    walk(&cmd, &[], &mut out);
    out
}

/// `wfx PATH --help` as a user sees it on a 100-column terminal.
fn help(env: &Env, path: &[String]) -> String {
    let out = env
        .wfx()
        .args(path)
        .arg("--help")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(out.status.success(), "wfx {path:?} --help failed");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_help_text_is_snapshot_tested() {
    let env = Env::new();
    for path in command_paths() {
        let name = if path.is_empty() {
            "wfx".to_string()
        } else {
            format!("wfx-{}", path.join("-"))
        };
        insta::assert_snapshot!(name, help(&env, &path));
    }
}

/// Every argument a person can type says what it is for: no blank line in
/// a help table (`session list --all` and `session show <ID>` had none).
#[test]
fn every_argument_has_help() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            let text = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if !arg.is_hide_set() && !builtin && text.trim().is_empty() {
                missing.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            if about.trim().is_empty() {
                missing.push(format!("{path} {} (about)", sub.get_name()));
            }
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut missing = Vec::new();
    walk(&cmd, "wfx", &mut missing);
    assert!(missing.is_empty(), "arguments without help: {missing:?}");
}

/// Global flags appear once, under their own heading, never among a
/// command's own options; `demo` and `completions` (no project) do not
/// offer `-C`; the main commands show examples.
#[test]
fn global_flags_have_their_own_heading() {
    let env = Env::new();
    for path in command_paths() {
        let text = help(&env, &path);
        let name = format!("wfx {}", path.join(" "));
        let global = text
            .find(&format!("\n{GLOBAL_HEADING}:\n"))
            .unwrap_or_else(|| panic!("{name}: no {GLOBAL_HEADING} heading:\n{text}"));
        let own = &text[..global];
        for flag in ["--json", "--quiet", "--verbose", "--no-progress", "--color"] {
            assert!(
                !own.contains(flag),
                "{name}: {flag} among the command's own flags"
            );
            let defined = text
                .lines()
                .map(str::trim_start)
                .filter(|l| l.starts_with(flag) || l.get(4..).is_some_and(|r| r.starts_with(flag)))
                .count();
            assert_eq!(defined, 1, "{name}: {flag} listed {defined} times");
        }
        let offers_c = text.contains("-C, --project-root <DIR>");
        let without_project = matches!(
            path.first().map(String::as_str),
            Some("demo" | "completions")
        );
        assert_eq!(offers_c, !without_project, "{name}:\n{text}");
        if path.len() <= 1 && path.first().is_none_or(|c| c != "session") {
            assert!(text.contains("\nExamples:\n"), "{name}: no examples");
        }
    }
}

/// A session is named by a positional ID in every command that takes one,
/// except `test-cycle-execute`, whose examples (like every command wfx
/// suggests, and DESIGN's interface) use `--resume-session=ID`; its
/// positional ID keeps working, and both at once is a usage error.
#[test]
fn a_session_is_named_the_same_way_everywhere() {
    let env = Env::new();
    for path in command_paths() {
        let text = help(&env, &path);
        let usage = text.lines().find(|l| l.starts_with("Usage:")).unwrap();
        assert!(
            !usage.contains("[SESSION]") && !usage.contains("<SESSION>"),
            "{usage}"
        );
        for example in text.split("test-cycle-execute ").skip(1) {
            assert!(
                !example.starts_with("WFS-"),
                "wfx {path:?} --help names a session positionally: test-cycle-execute {}",
                example.lines().next().unwrap_or_default()
            );
        }
    }
    for cmd in [
        &["test-cycle-execute", "WFS-nope"][..],
        &["test-cycle-execute", "--resume-session=WFS-nope"],
        &["status", "WFS-nope"],
        &["session", "show", "WFS-nope"],
    ] {
        let out = env.wfx().args(cmd).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {stderr}");
        assert!(stderr.contains("WFS-nope"), "{cmd:?}: {stderr}");
    }
    let both = env
        .wfx()
        .args(["test-cycle-execute", "WFS-a", "--resume-session=WFS-b"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
}
