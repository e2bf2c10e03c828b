//! Running a test command through the process layer and turning what it
//! wrote into `test-results.json`. wfx adds the flags that make pytest,
//! jest, vitest, node and go write a structured report into `report_dir`
//! (never changing what is tested); it then reads the structured report
//! first, the output text second, and falls back to the exit code.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime};

use regex::Regex;

use super::detect::{Detected, Framework};
use super::live::{FirstResult, ProgressHook, Watch};
use super::parse::{self, ParsedRun, TextFormat};
use super::results::{self, RunFacts};
use super::retest::RelatedSetup;
use super::select::{self, Args};
use super::timings;
use crate::artifacts::config::TestConfig;
use crate::artifacts::test_results::{Scope, TestResults};
use crate::error::{Error, Result};
use crate::process::{self, Spec};

/// One test run.
pub struct RunRequest<'a> {
    pub root: PathBuf,
    pub detected: Detected,
    /// Run only these test ids (framework filter); `None` → the whole suite.
    pub subset: Option<Vec<String>>,
    /// Arguments the user added (`wfx test -- ARGS`).
    pub extra_args: Vec<String>,
    /// Where the structured report goes; wfx owns it and empties it first
    /// (a session's `.process/junit/`, or `.workflow/.cache/junit/`).
    pub report_dir: PathBuf,
    /// Full output log (replaced).
    pub log: PathBuf,
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL on timeout.
    pub grace: Duration,
    /// Receives the child's process group id (the cycle records it in the
    /// session lock).
    pub on_spawn: Option<&'a mut dyn FnMut(i32)>,
    pub progress: Option<ProgressHook>,
    /// The previous result, for criticality ("passed before, fails now").
    pub previous: Option<&'a TestResults>,
    /// Extra environment for the test process (a `wfx run` step's `env:`);
    /// a `NODE_OPTIONS` here is kept and node's reporter flags are added.
    pub env: Vec<(String, String)>,
    /// The project whose cache keeps the run's time for the next estimate;
    /// `None` → `root`. A run in a sealed checkout keeps it in the
    /// project's, not in the checkout (removed after the run).
    pub times_root: Option<PathBuf>,
    /// Read and remember the run's time in the project's cache at `root`
    /// (the progress line's estimate). Off for a run in a checkout that is
    /// removed after it: the file would be written for nobody, and its
    /// directory and temp files are new inodes each time.
    pub remember_time: bool,
}

impl<'a> RunRequest<'a> {
    pub fn new(
        root: impl Into<PathBuf>,
        detected: Detected,
        report_dir: impl Into<PathBuf>,
        log: impl Into<PathBuf>,
    ) -> Self {
        RunRequest {
            root: root.into(),
            detected,
            subset: None,
            extra_args: Vec::new(),
            report_dir: report_dir.into(),
            log: log.into(),
            timeout: None,
            grace: Duration::from_secs(5),
            on_spawn: None,
            progress: None,
            previous: None,
            env: Vec::new(),
            times_root: None,
            remember_time: true,
        }
    }
}

/// Where the structured report of a run is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// A JUnit XML file wfx asked for.
    Junit(PathBuf),
    /// jest's JSON file.
    JestJson(PathBuf),
    /// node's TAP file.
    Tap(PathBuf),
    /// A glob (relative to the root) of JUnit files the command writes.
    JunitGlob(String),
    /// Only the output text.
    Text,
}

/// The command line to execute, what to show and store, and where results
/// will be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Executed with `sh -c` in the root.
    pub exec: String,
    /// `exec` with the root's absolute path removed (stored in results).
    pub shown: String,
    pub env: Vec<(String, String)>,
    pub report: Report,
    pub scope: Scope,
    pub notes: Vec<String>,
    /// Files wfx writes into the report directory before the run (node's
    /// reporter module).
    pub files: Vec<(PathBuf, &'static str)>,
    /// The output also holds `cargo test --doc` after nextest's.
    pub doctests: bool,
}

impl Plan {
    /// Whether the run writes into the report directory (a report wfx
    /// asked for, or a file wfx puts there first).
    pub fn uses_report_dir(&self) -> bool {
        !self.files.is_empty()
            || matches!(
                self.report,
                Report::Junit(_) | Report::JestJson(_) | Report::Tap(_)
            )
    }
}

/// wfx's reporter for `node --test`: node's TAP with every test's location
/// (`src/testing/node-reporter.mjs`).
pub const NODE_REPORTER: &str = include_str!("node-reporter.mjs");

/// Quote a value for `NODE_OPTIONS`, which node splits on spaces and reads
/// double quotes (with backslash escapes) in, but not single quotes.
pub fn node_options_quote(value: &str) -> String {
    if !value.is_empty() && !value.contains([' ', '"', '\\', '\'', '\t', '\n']) {
        return value.to_string();
    }
    format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Where the run's machine-readable report goes, and the arguments,
/// environment and helper files that make the runner write it.
fn report_for(
    detected: &Detected,
    root: &Path,
    report_dir: &Path,
    node_options: Option<&str>,
    args: &mut Args,
    env: &mut Vec<(String, String)>,
    files: &mut Vec<(PathBuf, &'static str)>,
) -> Report {
    let path = |name: &str| report_dir.join(name);
    match detected.framework {
        Framework::Pytest => {
            let p = path("pytest.xml");
            args.runner.push(format!("--junitxml={}", p.display()));
            args.runner
                .extend(["-o".to_string(), "junit_family=xunit1".to_string()]);
            Report::Junit(p)
        }
        Framework::Jest => {
            let p = path("jest.json");
            args.runner.extend([
                "--json".to_string(),
                format!("--outputFile={}", p.display()),
                "--testLocationInResults".to_string(),
            ]);
            Report::JestJson(p)
        }
        Framework::Vitest => {
            let p = path("vitest.xml");
            args.runner.extend([
                "--reporter=default".to_string(),
                "--reporter=junit".to_string(),
                format!("--outputFile.junit={}", p.display()),
            ]);
            Report::Junit(p)
        }
        Framework::NodeTest => {
            // Through NODE_OPTIONS: options after a test file on node's
            // command line would be taken for file names. wfx's reporter is
            // node's TAP plus every test's file (ids must not change when a
            // test starts failing).
            let p = path("node.tap");
            let reporter = path("wfx-node-reporter.mjs");
            files.push((reporter.clone(), NODE_REPORTER));
            let mut opts = node_options.map(str::to_string).unwrap_or_default();
            if !opts.is_empty() {
                opts.push(' ');
            }
            let quote = |p: &Path| node_options_quote(&p.display().to_string());
            opts.push_str(&format!(
                "--test-reporter={} --test-reporter-destination={} --test-reporter=spec --test-reporter-destination=stdout",
                quote(&reporter),
                quote(&p),
            ));
            env.push(("NODE_OPTIONS".to_string(), opts));
            Report::Tap(p)
        }
        Framework::Go => {
            if !detected.command.split_whitespace().any(|w| w == "-json") {
                args.runner.push("-json".into());
            }
            Report::Text
        }
        _ => match &detected.junit {
            Some(glob) => Report::JunitGlob(glob.clone()),
            None => nextest_junit(detected, root)
                .map(Report::JunitGlob)
                .unwrap_or(Report::Text),
        },
    }
}

/// Decide the exact command line for a run (pure; `node_options` is the
/// current `NODE_OPTIONS`, which node's reporter flags are added to).
pub fn plan(
    detected: &Detected,
    root: &Path,
    subset: Option<&[String]>,
    extra: &[String],
    report_dir: &Path,
    node_options: Option<&str>,
) -> Plan {
    let framework = detected.framework;
    let mut args = Args::default();
    let mut env = Vec::new();
    let mut notes = detected.notes.clone();
    let mut files = Vec::new();
    let report = report_for(
        detected,
        root,
        report_dir,
        node_options,
        &mut args,
        &mut env,
        &mut files,
    );
    let mut scope = Scope::Full;
    // nextest's doctest companion (`cargo test --doc`): its own filter.
    let mut doc_args: Option<Args> = detected.doctests.as_ref().map(|_| Args::default());
    let mut main_runs = true;
    if let Some(ids) = subset {
        let (doc_ids, main_ids): (Vec<String>, Vec<String>) = match &doc_args {
            Some(_) => ids.iter().cloned().partition(|i| select::is_doctest(i)),
            None => (Vec::new(), ids.to_vec()),
        };
        let main_filter = (!main_ids.is_empty())
            .then(|| select::filter_for(detected, &main_ids))
            .flatten();
        match main_filter {
            Some(filter) => {
                args.extend(filter.args);
                notes.extend(filter.note);
                scope = Scope::Affected;
            }
            None if main_ids.is_empty() && !doc_ids.is_empty() => {
                main_runs = false;
                scope = Scope::Affected;
            }
            None => notes.push(format!(
                "{} cannot run a subset of tests; the whole suite ran",
                framework.as_str()
            )),
        }
        if scope == Scope::Affected && doc_args.is_some() {
            doc_args = (!doc_ids.is_empty()).then(|| {
                let f =
                    select::filter_args(Framework::Cargo, &doc_ids).expect("doctest ids filter");
                notes.extend(f.note);
                f.args
            });
        }
    }
    // Extra arguments as the user typed them; for cargo a `--` among them
    // separates cargo's arguments from libtest's.
    match extra.iter().position(|a| a == "--") {
        Some(i) if matches!(framework, Framework::Cargo | Framework::Nextest) => {
            args.runner.extend(extra[..i].iter().cloned());
            args.harness.extend(extra[i + 1..].iter().cloned());
        }
        _ => args.runner.extend(extra.iter().cloned()),
    }
    let main = select::compose_for(detected, &args);
    let (exec, doctests) = match (&detected.doctests, doc_args) {
        (Some(doc), Some(doc_args)) => {
            let doc = select::compose(doc, Framework::Cargo, &doc_args);
            if main_runs {
                // Both always run; the exit code is the first failure's.
                (format!("{main}; s=$?; {doc} && exit $s"), true)
            } else {
                (doc, true)
            }
        }
        _ => (main, false),
    };
    let shown = relative_command(&exec, root);
    Plan {
        exec,
        shown,
        env,
        report,
        scope,
        notes,
        files,
        doctests,
    }
}

/// nextest writes JUnit only when the project's `.config/nextest.toml`
/// asks for it (`[profile.default.junit]`); read it then.
fn nextest_junit(detected: &Detected, root: &Path) -> Option<String> {
    if detected.framework != Framework::Nextest {
        return None;
    }
    let text = std::fs::read_to_string(root.join(".config/nextest.toml")).ok()?;
    let section = text.find("[profile.default.junit]")?;
    let rest = &text[section..];
    let path_line = rest
        .lines()
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .find(|l| l.trim_start().starts_with("path"))?;
    let file = path_line.split('=').nth(1)?.trim().trim_matches('"');
    Some(format!("target/nextest/default/{file}"))
}

/// The command with `<root>/` removed so no absolute path is stored.
fn relative_command(exec: &str, root: &Path) -> String {
    let root = root.display().to_string();
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return exec.to_string();
    }
    exec.replace(&format!("{root}/"), "")
}

/// An empty report directory with the plan's helper files, and no log of
/// an earlier run.
fn prepare_files(req: &RunRequest<'_>, plan: &Plan) -> Result<()> {
    prepare_dir(&req.report_dir, plan.uses_report_dir())?;
    for (path, text) in &plan.files {
        crate::fsx::write(path, text.as_bytes()).map_err(|e| Error::io(path, e))?;
    }
    if let Some(dir) = req.log.parent() {
        crate::session::store::create_dirs(dir)?;
    }
    match std::fs::remove_file(&req.log) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&req.log, e)),
    }
    Ok(())
}

/// What the run reported: its report file, else its output in the
/// runner's text format (or a sniffed one), plus nextest's doctests.
fn parse_output(
    req: &RunRequest<'_>,
    plan: &Plan,
    outcome: &process::Outcome,
    started_wall: SystemTime,
    notes: &mut Vec<String>,
) -> Result<ParsedRun> {
    let mut parsed = read_report(&plan.report, &req.root, started_wall, notes);
    if parsed.is_none() {
        let format = match req.detected.framework {
            Framework::Cargo => Some(TextFormat::Libtest),
            Framework::Nextest => Some(TextFormat::Nextest),
            Framework::Go => Some(TextFormat::GoJson),
            Framework::NodeTest => Some(TextFormat::Tap),
            _ => None,
        }
        .filter(|_| outcome.total_bytes > 0)
        .or_else(|| parse::sniff(&outcome.text()));
        if let Some(format) = format {
            let module = go_module(&req.root);
            let run = parse_log(&req.log, format.parser(module.as_deref()))
                .map_err(|e| Error::io(&req.log, e))?;
            if !run.is_empty() {
                parsed = Some(run);
            }
        }
    }
    // nextest's JUnit report has no doctests: read them from the output.
    if plan.doctests
        && let Some(run) = parsed.as_mut().filter(|r| r.parser == "junit")
    {
        let doc = parse_log(&req.log, Box::new(parse::libtest::Parser::doctests_only()))
            .map_err(|e| Error::io(&req.log, e))?;
        run.cases.extend(doc.cases);
        run.static_errors.extend(doc.static_errors);
    }
    Ok(parsed.unwrap_or_default())
}

/// Run the tests and build the results. Errors: the command cannot be
/// started or is not found (exit 127/126 with nothing parsed) → usage
/// error; Ctrl-C → `Error::Interrupted` after the child group was ended.
pub fn run_tests(mut req: RunRequest<'_>) -> Result<TestResults> {
    let node_options = req
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "NODE_OPTIONS")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("NODE_OPTIONS").ok());
    let plan = plan(
        &req.detected,
        &req.root,
        req.subset.as_deref(),
        &req.extra_args,
        &req.report_dir,
        node_options.as_deref(),
    );
    prepare_files(&req, &plan)?;

    let mut spec = Spec::shell(&plan.exec, &req.root)
        .log(&req.log)
        .grace(req.grace);
    if let Some(t) = req.timeout {
        spec = spec.timeout(t);
    }
    for (k, v) in &req.env {
        spec = spec.env(k.clone(), v.clone());
    }
    for (k, v) in &plan.env {
        spec = spec.env(k.clone(), v.clone());
    }
    // Python trusts a `.pyc` whose source kept its size and modification
    // second: a fix made within the second after a run that compiled the
    // file (`== 6` → `== 8`) would be judged by the old code. wfx's runs
    // leave no bytecode behind for that.
    spec = spec.env("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string());
    let timing = timings::key(
        &req.detected.command,
        req.subset.as_deref(),
        &req.extra_args,
    );
    // The progress line is counted off the streaming thread, from the log
    // (see `live`); when the first result came is noted as it streams.
    let (first_result, on_output) = FirstResult::hook(Some(req.detected.framework), Instant::now());
    spec = spec.on_output(on_output);
    let watch = req.progress.take().map(|hook| {
        let estimate = req
            .remember_time
            .then(|| timings::last(req.times_root.as_ref().unwrap_or(&req.root), &timing))
            .flatten();
        Watch::start(
            req.log.clone(),
            Some(req.detected.framework),
            estimate,
            hook,
        )
    });
    let started_wall = SystemTime::now();
    let started_at = chrono::Utc::now();
    let mut noop = |_: i32| {};
    let on_spawn: &mut dyn FnMut(i32) = match req.on_spawn.take() {
        Some(f) => f,
        None => &mut noop,
    };
    let outcome = process::run(spec, on_spawn);
    drop(watch);
    let first_result = first_result.get();
    let outcome = outcome?;
    if req.remember_time
        && outcome.exit_code.is_some()
        && !outcome.timed_out
        && !outcome.interrupted
    {
        timings::record(
            req.times_root.as_ref().unwrap_or(&req.root),
            &timing,
            outcome.duration,
        );
    }
    if outcome.interrupted {
        return Err(Error::Interrupted(format!(
            "`{}` was stopped; its output is in {}",
            plan.shown,
            rel(&req.root, &req.log)
        )));
    }

    let mut notes = plan.notes.clone();
    let mut parsed = parse_output(&req, &plan, &outcome, started_wall, &mut notes)?;
    parsed.relativize(&req.root.display().to_string());
    resolve_files(&req.root, &req.detected, &mut parsed);

    if matches!(outcome.exit_code, Some(126 | 127)) && parsed.is_empty() {
        return Err(Error::Usage(format!(
            "cannot run `{}` (exit {}): {}",
            plan.shown,
            outcome.exit_code.unwrap_or_default(),
            outcome.tail_text(2000).trim()
        )));
    }

    let tail = outcome.tail_text(8 * 1024);
    let facts = RunFacts {
        command: plan.shown.clone(),
        framework: req.detected.framework,
        scope: plan.scope,
        exit_code: outcome.exit_code,
        timed_out_after: outcome
            .timed_out
            .then(|| req.timeout.map(|t| t.as_secs()).unwrap_or_default()),
        signal: outcome.signal,
        duration_ms: outcome.duration.as_millis() as u64,
        setup_ms: first_result.map(|d| (d.min(outcome.duration)).as_millis() as u64),
        output_tail: &tail,
        output_log: Some(rel(&req.root, &req.log)),
        truncated: outcome.truncated(),
        started_at: Some(started_at),
        previous: req.previous,
        notes,
    };
    let mut results = results::build(parsed, facts);
    strip_root(&mut results, &req.root);
    Ok(results)
}

/// Keep ids and messages free of the absolute root (the exit-code
/// fallback carries raw output).
fn strip_root(results: &mut TestResults, root: &Path) {
    let root = root.display().to_string();
    for f in &mut results.failures {
        if f.message.contains(&root) {
            f.message = f
                .message
                .replace(&format!("{root}/"), "")
                .replace(&root, ".");
        }
        if f.error.contains(&root) {
            f.error = f.error.replace(&format!("{root}/"), "").replace(&root, ".");
        }
    }
}

/// What the runner's related-tests query needs to know about the project
/// (see [`super::retest::related_query`]): `test.related_command`, whether
/// pytest-testmon is in use (`.testmondata`), the Cargo packages.
pub fn related_setup(root: &Path, config: &TestConfig) -> RelatedSetup {
    let mut packages = Vec::new();
    let manifests = walkdir::WalkDir::new(root)
        .max_depth(4)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name.starts_with('.') || name == "target" || name == "node_modules")
        })
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && e.file_name() == "Cargo.toml");
    for m in manifests {
        let Ok(text) = std::fs::read_to_string(m.path()) else {
            continue;
        };
        if let Some(name) = crate::project::rust_crate_name(&text) {
            let dir = m.path().parent().map(|d| rel(root, d)).unwrap_or_default();
            let dir = if dir == "." { String::new() } else { dir };
            packages.push((dir, name));
        }
    }
    RelatedSetup {
        configured: config.related_command.clone(),
        packages,
        testmon: root.join(".testmondata").is_file(),
    }
}

fn rel(root: &Path, path: &Path) -> String {
    crate::session::Workspace::new(root).rel(path)
}

/// Empty (or create) a directory wfx owns.
/// Empty the report directory, so no report of an earlier run is read, and
/// create it only when the run writes there: a run of a command whose
/// output is the report (TAP, cargo, go) makes no directory each time.
fn prepare_dir(dir: &Path, needed: bool) -> Result<()> {
    // A real directory that stays is emptied, not removed and made again:
    // on a file system that skips recently freed inodes, every new one
    // costs (each retest tier reuses the same directory). Anything else
    // there (a link, a file) is removed, never followed.
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if needed && is_dir {
        return empty_dir(dir).map_err(|e| Error::io(dir, e));
    }
    let gone = if is_dir {
        std::fs::remove_dir_all(dir)
    } else {
        std::fs::remove_file(dir)
    };
    match gone {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dir, e)),
    }
    if needed {
        crate::session::store::create_dirs(dir)?;
    }
    Ok(())
}

/// Remove everything in `dir` (links as links), keeping `dir`.
fn empty_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Read the structured report, if it exists and parses. Problems become
/// notes and the text parser gets its turn.
fn read_report(
    report: &Report,
    root: &Path,
    since: SystemTime,
    notes: &mut Vec<String>,
) -> Option<ParsedRun> {
    let read = |p: &Path| -> Option<String> {
        let bytes = std::fs::read(p).ok()?;
        Some(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        )
    };
    let shown = |p: &Path| rel(root, p);
    match report {
        Report::Text => None,
        Report::Junit(p) => {
            let text = read(p)?;
            match parse::junit::parse(&text) {
                Ok(run) => Some(run),
                Err(e) => {
                    notes.push(format!("{}: {e}; read the output text instead", shown(p)));
                    None
                }
            }
        }
        Report::JestJson(p) => {
            let text = read(p)?;
            match parse::jest::parse(&text) {
                Ok(run) => Some(run),
                Err(e) => {
                    notes.push(format!("{}: {e}; read the output text instead", shown(p)));
                    None
                }
            }
        }
        Report::Tap(p) => {
            let file = std::fs::File::open(p).ok()?;
            let run = parse_reader(file, TextFormat::Tap.parser(None)).ok()?;
            (!run.is_empty()).then_some(run)
        }
        Report::JunitGlob(glob) => {
            let files = find_fresh(root, glob, since);
            if files.is_empty() {
                return None;
            }
            let mut texts = Vec::new();
            for f in &files {
                texts.extend(read(f));
            }
            match parse::junit::parse_all(texts.iter().map(String::as_str)) {
                Ok(run) => Some(run),
                Err(e) => {
                    notes.push(format!("{glob}: {e}; read the output text instead"));
                    None
                }
            }
        }
    }
}

/// Stream a log through a line parser (lossy UTF-8, lines capped at 64 KiB
/// so one endless line cannot exhaust memory).
pub fn parse_log(log: &Path, parser: Box<dyn parse::LineParser>) -> std::io::Result<ParsedRun> {
    let file = match std::fs::File::open(log) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(parser.finish()),
        Err(e) => return Err(e),
    };
    parse_reader(file, parser)
}

fn parse_reader(
    reader: impl Read,
    mut parser: Box<dyn parse::LineParser>,
) -> std::io::Result<ParsedRun> {
    const MAX_LINE: usize = 64 * 1024;
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line: Vec<u8> = Vec::new();
    let mut overflow = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let (chunk, consumed, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        if chunk.len() > room {
            overflow = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(consumed);
        if done {
            parser.line(&String::from_utf8_lossy(&line));
            line.clear();
            overflow = false;
        }
    }
    if !line.is_empty() || overflow {
        parser.line(&String::from_utf8_lossy(&line));
    }
    Ok(parser.finish())
}

/// The module path of `go.mod`, to map packages to directories.
fn go_module(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("go.mod")).ok()?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string())
}

/// Files the output names without a directory (`CalcTest.java`,
/// `calc_test.go`) are looked up in the project; JavaScript tests that
/// carry no file (top-level tests in node's TAP, node/jest JUnit) get the
/// one test file that defines their name, and it joins their id.
fn resolve_files(root: &Path, detected: &Detected, run: &mut ParsedRun) {
    let needs_bare = run
        .cases
        .iter()
        .chain(run.static_errors.iter())
        .filter_map(|c| c.file.as_deref())
        .any(|f| !f.contains('/') && !root.join(f).exists());
    let js = matches!(
        detected.framework,
        Framework::NodeTest | Framework::Jest | Framework::Vitest
    );
    let needs_js = js
        && run
            .cases
            .iter()
            .any(|c| !c.id.contains(parse::tap::SEP) || c.file.is_none());
    if !needs_bare && !needs_js {
        return;
    }
    let files = project_files(root);
    if needs_bare {
        for case in run.cases.iter_mut().chain(run.static_errors.iter_mut()) {
            let Some(name) = case.file.clone() else {
                continue;
            };
            if name.contains('/') || root.join(&name).exists() {
                continue;
            }
            let matches: Vec<&String> = files
                .iter()
                .filter(|p| p.rsplit('/').next() == Some(name.as_str()))
                .collect();
            if let [only] = matches.as_slice() {
                case.file = Some((*only).clone());
            }
        }
    }
    if needs_js {
        let test_files: Vec<(String, String)> = files
            .iter()
            .filter(|p| is_js_test_file(p))
            .take(2000)
            .filter_map(|p| {
                let meta = std::fs::metadata(root.join(p)).ok()?;
                if meta.len() > 1024 * 1024 {
                    return None;
                }
                Some((p.clone(), std::fs::read_to_string(root.join(p)).ok()?))
            })
            .collect();
        for case in &mut run.cases {
            let first = case.id.split(parse::tap::SEP).next().unwrap_or("");
            if first.contains('/') && case.id.contains(parse::tap::SEP) {
                continue;
            }
            let leaf = case
                .id
                .rsplit(parse::tap::SEP)
                .next()
                .unwrap_or(&case.id)
                .to_string();
            let quoted = [
                format!("'{leaf}'"),
                format!("\"{leaf}\""),
                format!("`{leaf}`"),
            ];
            let owners: Vec<&String> = test_files
                .iter()
                .filter(|(_, text)| quoted.iter().any(|q| text.contains(q.as_str())))
                .map(|(p, _)| p)
                .collect();
            if let [only] = owners.as_slice() {
                case.id = format!("{only}{}{}", parse::tap::SEP, case.id);
                if case.file.is_none() {
                    case.file = Some((*only).clone());
                }
            }
        }
    }
}

fn is_js_test_file(p: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\.(test|spec)\.[cm]?[jt]sx?$|(^|/)(test|tests|__tests__)/.*\.[cm]?[jt]sx?$)")
            .unwrap()
    });
    RE.is_match(p)
}

/// Relative paths of the project's files, skipping build output,
/// dependencies and VCS data (bounded).
fn project_files(root: &Path) -> Vec<String> {
    const SKIP: &[&str] = &[
        ".git",
        "node_modules",
        "target",
        ".workflow",
        ".venv",
        "venv",
        "__pycache__",
        "dist",
        "build",
    ];
    walkdir::WalkDir::new(root)
        .max_depth(12)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0 || !SKIP.contains(&e.file_name().to_string_lossy().as_ref())
        })
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .take(20_000)
        .map(|e| rel(root, e.path()))
        .collect()
}

/// Files matching a glob (relative to the root; `**`, `*`, `?`) written
/// since the run started.
fn find_fresh(root: &Path, glob: &str, since: SystemTime) -> Vec<PathBuf> {
    let glob = glob.trim_start_matches("./");
    // Walk only below the glob's literal directory prefix.
    let literal: Vec<&str> = glob
        .split('/')
        .take_while(|s| !s.contains(['*', '?', '[']))
        .collect();
    let (base, _) = if literal.len() == glob.split('/').count() {
        (literal[..literal.len().saturating_sub(1)].join("/"), ())
    } else {
        (literal.join("/"), ())
    };
    let start = root.join(&base);
    // A little slack for file systems with coarse timestamps.
    let since = since.checked_sub(Duration::from_secs(2)).unwrap_or(since);
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(&start)
        .max_depth(16)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || !(name == ".git" || name == "node_modules")
        })
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| glob_match(glob, &rel(root, e.path())))
        .filter(|e| {
            e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .is_some_and(|t| t >= since)
        })
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// Match a `/`-separated path against a glob with `**` (any number of
/// directories), `*` and `?` (within one segment).
pub fn glob_match(glob: &str, path: &str) -> bool {
    fn segs(p: &str) -> Vec<&str> {
        p.split('/').filter(|s| !s.is_empty()).collect()
    }
    fn seg_match(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => seg_match(&p[1..], s) || (!s.is_empty() && seg_match(p, &s[1..])),
            (Some(b'?'), Some(_)) => seg_match(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => seg_match(&p[1..], &s[1..]),
            _ => false,
        }
    }
    fn go(g: &[&str], p: &[&str]) -> bool {
        match g.first() {
            None => p.is_empty(),
            Some(&"**") => go(&g[1..], p) || (!p.is_empty() && go(g, &p[1..])),
            Some(s) => {
                !p.is_empty() && seg_match(s.as_bytes(), p[0].as_bytes()) && go(&g[1..], &p[1..])
            }
        }
    }
    go(&segs(glob), &segs(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(framework: Framework, command: &str) -> Detected {
        Detected::new(framework, command)
    }

    /// The whole-suite plan of `command` in `/p/proj`, reports under its
    /// `.workflow/.cache/junit`.
    fn planned(framework: Framework, command: &str, extra: &[String], node: Option<&str>) -> Plan {
        let root = Path::new("/p/proj");
        let dir = root.join(".workflow/.cache/junit");
        plan(&detected(framework, command), root, None, extra, &dir, node)
    }

    #[test]
    fn the_report_dir_is_emptied_in_place_and_a_link_there_is_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("junit");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("pytest.xml"), "old").unwrap();
        std::fs::write(dir.join("sub/x.xml"), "old").unwrap();
        use std::os::unix::fs::MetadataExt;
        let inode = std::fs::metadata(&dir).unwrap().ino();
        prepare_dir(&dir, true).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert_eq!(std::fs::metadata(&dir).unwrap().ino(), inode);
        // A link planted where the report goes: replaced by a directory,
        // what it pointed to untouched.
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep.txt"), "mine").unwrap();
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        prepare_dir(&dir, true).unwrap();
        assert!(std::fs::symlink_metadata(&dir).unwrap().is_dir());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("keep.txt")).unwrap(),
            "mine"
        );
        prepare_dir(&dir, false).unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn plans_add_report_flags_without_absolute_paths_in_shown() {
        let root = Path::new("/p/proj");
        let dir = root.join(".workflow/.cache/junit");
        let p = planned(Framework::Pytest, "python -m pytest", &[], None);
        assert_eq!(
            p.exec,
            "python -m pytest --junitxml=/p/proj/.workflow/.cache/junit/pytest.xml -o junit_family=xunit1"
        );
        assert_eq!(
            p.shown,
            "python -m pytest --junitxml=.workflow/.cache/junit/pytest.xml -o junit_family=xunit1"
        );
        assert_eq!(p.report, Report::Junit(dir.join("pytest.xml")));
        assert_eq!(p.scope, Scope::Full);

        let p = planned(Framework::Jest, "npm test", &["--ci".into()], None);
        assert_eq!(
            p.shown,
            "npm test -- --json --outputFile=.workflow/.cache/junit/jest.json --testLocationInResults --ci"
        );
        let p = planned(Framework::Vitest, "npx vitest run", &[], None);
        assert_eq!(
            p.shown,
            "npx vitest run --reporter=default --reporter=junit --outputFile.junit=.workflow/.cache/junit/vitest.xml"
        );
        let p = planned(
            Framework::NodeTest,
            "npm test",
            &[],
            Some("--max-old-space-size=100"),
        );
        assert_eq!(p.shown, "npm test");
        assert_eq!(
            p.env,
            vec![(
                "NODE_OPTIONS".to_string(),
                "--max-old-space-size=100 --test-reporter=/p/proj/.workflow/.cache/junit/wfx-node-reporter.mjs --test-reporter-destination=/p/proj/.workflow/.cache/junit/node.tap --test-reporter=spec --test-reporter-destination=stdout".to_string()
            )]
        );
        let p = planned(Framework::Go, "go test ./...", &[], None);
        assert_eq!(p.exec, "go test ./... -json");
        let p = planned(Framework::Go, "go test -json ./...", &[], None);
        assert_eq!(p.exec, "go test -json ./...");
        let p = planned(
            Framework::Cargo,
            "cargo test --no-fail-fast",
            &["--lib".into(), "--".into(), "--nocapture".into()],
            None,
        );
        assert_eq!(p.exec, "cargo test --no-fail-fast --lib -- --nocapture");
        assert_eq!(p.report, Report::Text);
        let mut d = detected(Framework::Maven, "mvn test");
        d.junit = Some("**/target/surefire-reports/TEST-*.xml".into());
        let p = plan(&d, root, None, &[], &dir, None);
        assert_eq!(
            p.report,
            Report::JunitGlob("**/target/surefire-reports/TEST-*.xml".into())
        );
    }

    #[test]
    fn subset_plans_filter_or_say_they_cannot() {
        let root = Path::new("/p");
        let dir = root.join("r");
        let ids = vec!["a::b".to_string()];
        let p = plan(
            &detected(Framework::Cargo, "cargo test"),
            root,
            Some(&ids),
            &[],
            &dir,
            None,
        );
        assert_eq!(p.exec, "cargo test --tests -- --exact b");
        assert_eq!(p.scope, Scope::Affected);
        assert!(p.notes.is_empty());
        let p = plan(
            &detected(Framework::Make, "make test"),
            root,
            Some(&ids),
            &[],
            &dir,
            None,
        );
        assert_eq!(p.exec, "make test");
        assert_eq!(p.scope, Scope::Full);
        assert_eq!(
            p.notes,
            vec!["make cannot run a subset of tests; the whole suite ran"]
        );
    }

    #[test]
    fn nextest_plans_run_the_doctests_too() {
        let root = Path::new("/p");
        let dir = root.join("r");
        let mut d = detected(Framework::Nextest, "cargo nextest run --no-fail-fast");
        d.doctests = Some(crate::testing::detect::NEXTEST_DOCTESTS.into());
        let p = plan(&d, root, None, &[], &dir, None);
        assert_eq!(
            p.exec,
            "cargo nextest run --no-fail-fast; s=$?; cargo test --doc --no-fail-fast && exit $s"
        );
        assert!(p.doctests);
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (subset, want) in [
            (
                ids(&["k tests::a", "k::src/lib.rs - add (line 3)"]),
                "cargo nextest run --no-fail-fast -E '(binary_id(=k) & test(=tests::a))'; s=$?; cargo test --doc --no-fail-fast -- add && exit $s",
            ),
            (
                ids(&["k tests::a"]),
                "cargo nextest run --no-fail-fast -E '(binary_id(=k) & test(=tests::a))'",
            ),
            (
                ids(&["k::src/lib.rs - add (line 3)"]),
                "cargo test --doc --no-fail-fast -- add",
            ),
        ] {
            let p = plan(&d, root, Some(&subset), &[], &dir, None);
            assert_eq!(p.exec, want, "{subset:?}");
            assert_eq!(p.scope, Scope::Affected);
        }
        // The doctest filter is a substring: the note says so.
        let p = plan(
            &d,
            root,
            Some(&ids(&["k::src/lib.rs - add (line 3)"])),
            &[],
            &dir,
            None,
        );
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    }

    #[test]
    fn only_runs_that_write_a_report_need_the_report_directory() {
        for (framework, command, needed) in [
            (Framework::Pytest, "python -m pytest", true),
            (Framework::Jest, "npx jest", true),
            (Framework::Vitest, "npx vitest run", true),
            (Framework::NodeTest, "node --test", true),
            (Framework::Go, "go test ./...", false),
            (Framework::Cargo, "cargo test", false),
            (Framework::Custom, "./run-tests.sh", false),
        ] {
            let p = planned(framework, command, &[], None);
            assert_eq!(p.uses_report_dir(), needed, "{command}");
        }
    }

    #[test]
    fn node_options_quoting_is_what_node_reads() {
        assert_eq!(node_options_quote("/p/r.mjs"), "/p/r.mjs");
        assert_eq!(node_options_quote("/a b/r.mjs"), "\"/a b/r.mjs\"");
        assert_eq!(node_options_quote(r#"/a"b\c"#), r#""/a\"b\\c""#);
    }

    #[test]
    fn globs() {
        for (glob, path, want) in [
            (
                "**/target/surefire-reports/TEST-*.xml",
                "target/surefire-reports/TEST-a.B.xml",
                true,
            ),
            (
                "**/target/surefire-reports/TEST-*.xml",
                "mod/target/surefire-reports/TEST-a.xml",
                true,
            ),
            (
                "**/target/surefire-reports/TEST-*.xml",
                "target/surefire-reports/a.xml",
                false,
            ),
            ("out/*.xml", "out/a.xml", true),
            ("out/*.xml", "out/sub/a.xml", false),
            ("out/**/*.xml", "out/sub/a.xml", true),
            ("report?.xml", "report1.xml", true),
        ] {
            assert_eq!(glob_match(glob, path), want, "{glob} {path}");
        }
    }

    #[test]
    fn streaming_parse_caps_long_lines() {
        let mut text = String::from("running 1 test\n");
        text.push_str(&"x".repeat(200_000));
        text.push_str("\ntest a ... ok\n");
        let run = parse_reader(text.as_bytes(), TextFormat::Libtest.parser(None)).unwrap();
        assert_eq!(run.cases.len(), 1);
    }
}
