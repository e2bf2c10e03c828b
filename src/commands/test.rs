//! `wfx test [--json] [--only-failed] [-- ARGS]`: run the project's tests
//! once and print the parsed result. No session: the results, the log and
//! the structured report live in `.workflow/.cache/`, which `--only-failed`
//! reads to re-run the last failures.

use std::time::Duration;

use super::Ctx;
use crate::artifacts::test_results::{Scope, TestResults};
use crate::cli::TestArgs;
use crate::error::{Error, Exit, Result};
use crate::session::store;
use crate::testing::results::failing_ids;
use crate::testing::{self, RunRequest};
use crate::ui::Style;

/// `--sealed`: `HEAD` in a clean checkout outside the project, with the
/// dependency directories and the small untracked or ignored files there
/// now (as a session's start would record them).
fn open_sealed(ctx: &Ctx) -> Result<crate::engine::step::Sealed> {
    let cp = crate::git::Checkpoints::open(&ctx.ws.root)?;
    let refuse = || {
        Error::usage(
            "--sealed: the project is not in a git repository with a commit; there is nothing to check out",
        )
    };
    if !cp.is_repo() {
        return Err(refuse());
    }
    // A checkout an interrupted `wfx test --sealed` left.
    crate::git::sweep_checkout(&ctx.ws.root, "wfx-test");
    let now = chrono::Utc::now();
    let req = crate::engine::step::SealRequest {
        paths: Vec::new(),
        since: now,
        until: now,
        message: "wfx test --sealed".into(),
        environment: cp.sealed_environment()?,
    };
    crate::engine::real::open_sealed(&cp, &ctx.ws.root, &ctx.ws.root, "wfx-test", &req, None)?
        .ok_or_else(refuse)
}

/// The last `wfx test` results, if any: a typed parse, with the schema's
/// validation only when that fails (for its message). Only read, never
/// written back; validating 5,000 cases first cost more than the rest of
/// the command (issue #30).
fn read_previous(path: &std::path::Path, shown: &str) -> Result<Option<TestResults>> {
    if !path.exists() {
        return Ok(None);
    }
    store::read_json_fast(path, shown).map(Some)
}

pub fn run(ctx: &Ctx, args: TestArgs) -> Result<Exit> {
    let config = ctx.ws.load_config()?;
    let detected = testing::detect(&ctx.ws.root, &config.test).ok_or_else(|| {
        Error::usage(testing::detect::not_detected(
            &ctx.ws.rel(&ctx.ws.root),
            &ctx.ws.rel(&ctx.ws.config_path()),
        ))
    })?;
    testing::program::check_on_path(&detected.command)
        .map_err(|e| crate::cycle::not_on_path(&ctx.ws, &e))?;

    let cache = store::ensure_cache_dir(&ctx.ws)?;
    let results_path = cache.join("test-results.json");
    let shown_results = ctx.ws.rel(&results_path);

    let previous: Option<TestResults>;
    let mut subset = None;
    if args.only_failed {
        let prev = read_previous(&results_path, &shown_results)?.ok_or_else(|| {
            Error::usage(format!(
                "--only-failed: no previous `wfx test` run ({shown_results} not found); run `wfx test` first"
            ))
        })?;
        let ids = failing_ids(&prev);
        if ids.is_empty() && prev.failures.is_empty() {
            ctx.ui
                .status("the previous run had no failures; nothing to re-run");
            print(ctx, &prev);
            return Ok(finish(ctx, &prev, args.junit.as_deref()));
        }
        if ids.is_empty() {
            ctx.ui
                .status("the previous run failed before any test ran; running the whole suite");
        } else {
            subset = Some(ids);
        }
        previous = Some(prev);
    } else {
        previous = read_previous(&results_path, &shown_results).unwrap_or(None);
    }

    crate::process::install_interrupt_handler();
    let sealed = if args.sealed {
        Some(open_sealed(ctx)?)
    } else {
        None
    };
    let shown_command = match &subset {
        Some(ids) => format!("{} ({} failing tests)", detected.command, ids.len()),
        None => detected.command.clone(),
    };
    ctx.ui.status(format!(
        "{} `{shown_command}` ({})",
        ctx.ui.paint(Style::Bold, "running"),
        detected.framework
    ));
    if let Some(s) = &sealed {
        ctx.ui.status(format!(
            "sealed: on {} in a clean checkout (uncommitted changes take no part)",
            &s.commit[..s.commit.len().min(10)]
        ));
    }
    let (spinner, progress) = ctx.ui.test_spinner(&shown_command);
    let mut req = RunRequest::new(
        sealed.as_ref().map_or(&ctx.ws.root, |s| &s.root),
        detected,
        cache.join("junit"),
        cache.join("test-output.log"),
    );
    req.subset = subset;
    req.extra_args = args.extra.clone();
    req.timeout = Some(Duration::from_secs(config.test.timeout_s));
    req.previous = previous.as_ref();
    req.progress = progress;
    req.times_root = Some(ctx.ws.root.clone());
    if let Some(s) = &sealed {
        req.env = s.env.clone();
    }
    let outcome = testing::run_tests(req);
    drop(spinner);
    if let Some(s) = &sealed {
        crate::git::remove_checkout(&s.dir).map_err(|e| Error::io(&s.dir, e))?;
    }
    // The log is the project's, whatever directory the tests ran in.
    let outcome = outcome.map(|mut r| {
        r.output_log = Some(ctx.ws.rel(&cache.join("test-output.log")));
        r
    });
    let mut results = outcome?;
    if results.scope == Scope::Affected
        && let Some(prev) = &previous
    {
        results = testing::merge(prev, &results);
    }
    // A cache, not a session artifact: replaced atomically, not made
    // durable (a crash loses at most the last run's failures for
    // `--only-failed`, which then says there is no previous run).
    let bytes = store::json_bytes(&results)?;
    store::write_replace(&results_path, &bytes)?;
    if ctx.ui.is_json() {
        // The same pretty JSON `ui.json` would print, serialised once.
        ctx.ui.json_text(&bytes);
    } else {
        print(ctx, &results);
    }
    Ok(finish(ctx, &results, args.junit.as_deref()))
}

/// `--junit`, and on CI what GitHub reads (docs/ci.md); the exit code.
fn finish(ctx: &Ctx, results: &TestResults, junit: Option<&std::path::Path>) -> Exit {
    let exit = exit_for(results);
    crate::ci::publish::after_test(&ctx.ws, results, exit.code(), junit, ctx.ui);
    exit
}

/// 0 when everything passed and the command exited 0, else 1.
fn exit_for(results: &TestResults) -> Exit {
    if results.failures.is_empty() && results.exit_code == Some(0) {
        Exit::Success
    } else {
        Exit::Failed
    }
}

fn print(ctx: &Ctx, r: &TestResults) {
    if ctx.ui.is_json() {
        ctx.ui.json(r);
        return;
    }
    if crate::testing::results::found_no_tests(r) {
        ctx.ui.out(format!(
            "{}: `{}` ran no test. {}",
            ctx.ui.paint(Style::Red, "no tests found"),
            r.command,
            crate::testing::results::NO_TESTS_HINT
        ));
        if let Some(log) = &r.output_log {
            ctx.ui.out(format!("output: {log}"));
        }
        return;
    }
    let ok = r.failures.is_empty() && r.exit_code == Some(0);
    let verdict = if ok {
        ctx.ui.paint(Style::Green, "passed")
    } else {
        ctx.ui.paint(Style::Red, "failed")
    };
    let scope = match r.scope {
        Scope::Full => String::new(),
        Scope::Affected => " (failures re-run, merged over the previous run)".into(),
    };
    ctx.ui.out(format!(
        "{verdict}: {} tests, {} passed, {} failed, {} skipped, {} errors; pass rate {:.1}%{scope}",
        r.total, r.passed, r.failed, r.skipped, r.errors, r.pass_rate
    ));
    if !r.failures.is_empty() {
        ctx.ui.out("");
        for f in &r.failures {
            let place = match (&f.file, f.line) {
                (Some(file), Some(line)) => format!("{file}:{line}"),
                (Some(file), None) => file.clone(),
                _ => "-".into(),
            };
            let error = if f.error.is_empty() {
                "(no message)"
            } else {
                f.error.as_str()
            };
            let flaky = if f.flaky { " [flaky]" } else { "" };
            ctx.ui.out(format!("{place}  {}  {error}{flaky}", f.test));
        }
        // What no code change fixes, said before anyone edits code.
        let classification = crate::agents::builtin::classify_project(r, &ctx.ws.root);
        for fix in classification.environment_fixes() {
            ctx.ui.out(format!(
                "{}: {fix}",
                ctx.ui.paint(Style::Yellow, "environment, not the code")
            ));
        }
    }
    for note in &r.notes {
        ctx.ui.out(format!("note: {note}"));
    }
    if r.parser == "exit-code" {
        ctx.ui.out(format!(
            "note: no test results could be read from the output (parser: exit-code); exit code {}",
            r.exit_code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "none".into())
        ));
    }
    if let Some(log) = &r.output_log {
        ctx.ui.out(format!("output: {log}"));
    }
}
