//! The test plan as data: one pure function from the session, the context
//! package and the config to everything phases 3 and 4 write (analysis,
//! tasks, plan, todo list, notes). Templates only lay it out, so every
//! fact in those files comes from here and is tested here.

use std::path::Path;

use serde::Serialize;

use super::context::{self, Target, files};
use crate::artifacts::config::Config;
use crate::artifacts::context::ContextPackage;
use crate::artifacts::session::{InputMode, WorkflowSession};
use crate::artifacts::test_results::TestResults;
use crate::session::SessionPaths;
use crate::session::Workspace;
use crate::testing::{self, Detected, Framework};

/// The phase-5 flags `test-fix-gen` records (typed in the session file).
pub use crate::artifacts::options::CycleOptions;

/// One file the plan targets, with what to do about it.
#[derive(Debug, Clone, Serialize)]
pub struct TargetPlan {
    pub file: String,
    pub priority: String,
    pub focus: bool,
    /// `gap` (no tests: create `test_file`) or `extend` (add to `tests`).
    pub status: &'static str,
    pub tests: Vec<String>,
    /// Where new tests go.
    pub test_file: String,
    pub symbols: Vec<String>,
    /// `L1`, `L2`, `L3`.
    pub layers: Vec<&'static str>,
    /// One sentence per layer.
    pub requirements: Vec<String>,
    /// Runs this file's tests.
    pub check_command: Option<String>,
    pub line_coverage: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub id: String,
    pub label: String,
    pub command: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoverageView {
    pub report: Option<String>,
    pub format: Option<String>,
    pub line: Option<f64>,
    pub branch: Option<f64>,
    pub function: Option<f64>,
    pub target_line: f64,
    pub target_branch: f64,
    pub target_function: f64,
    pub file_percent: f64,
    /// Files of the report below the line target, lowest first (at most 15).
    pub below_target: Vec<(String, f64)>,
    /// How coverage is measured in IMPL-001.5.
    pub measure: String,
    /// IMPL-001.5 measures coverage (a coverage command, or a report): the
    /// targets apply. Without, coverage is unknown and gates nothing, so
    /// the summary does not list targets nobody checks.
    pub measured: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Artifacts {
    pub session_dir: String,
    pub workflow_session: String,
    pub impl_plan: String,
    pub todo_list: String,
    pub planning_notes: String,
    pub analysis: String,
    pub context_package: String,
    pub task_dir: String,
    pub summaries_dir: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskFiles {
    pub test_gen: String,
    pub validation: String,
    pub review: String,
    pub fix: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AgentsView {
    pub test_gen: Option<String>,
    /// Name, or `manual`.
    pub fix: String,
    pub analysis: Vec<String>,
    pub fix_source: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceView {
    pub id: String,
    pub description: String,
    pub completed_tasks: Vec<String>,
    pub changed_files: Vec<String>,
    pub summaries: Vec<(String, String, Vec<String>)>,
}

/// The last `wfx test` of the project (`.workflow/.cache/test-results.json`):
/// the failing tests a reader of the plan wants to see first.
#[derive(Debug, Clone, Serialize)]
pub struct LastTestRun {
    /// `2026-01-01 10:00 UTC`; empty when the run did not record it.
    pub when: String,
    pub command: String,
    pub total: u32,
    pub passed: u32,
    /// Failed plus errors.
    pub failing: u32,
    /// The first [`LAST_RUN_FAILURES`] failures.
    pub failures: Vec<KnownFailure>,
    /// Failures not listed.
    pub more: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct KnownFailure {
    pub test: String,
    /// `file:line`, `file`, or empty.
    pub location: String,
    /// First line of the error, at most [`ERROR_CHARS`] characters.
    pub error: String,
}

/// Failures of the last test run listed in the plan.
pub const LAST_RUN_FAILURES: usize = 10;
/// Longest error line shown per failure.
pub const ERROR_CHARS: usize = 120;

/// The plan's view of a test run.
pub fn last_test_run(r: &TestResults) -> LastTestRun {
    let failures: Vec<KnownFailure> = r
        .failures
        .iter()
        .take(LAST_RUN_FAILURES)
        .map(|f| KnownFailure {
            test: f.test.clone(),
            location: f.location(),
            error: {
                let first = f.error.lines().next().unwrap_or("").trim();
                if first.chars().count() > ERROR_CHARS {
                    let cut: String = first.chars().take(ERROR_CHARS - 1).collect();
                    format!("{cut}…")
                } else {
                    first.to_string()
                }
            },
        })
        .collect();
    LastTestRun {
        when: r
            .started_at
            .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
            .unwrap_or_default(),
        command: r.command.clone(),
        total: r.total,
        passed: r.passed,
        failing: r.failed + r.errors,
        more: r.failures.len().saturating_sub(failures.len()),
        failures,
    }
}

/// [`last_test_run`] of the project's cached `wfx test` result; `None`
/// when there is none or it cannot be read (it is only a hint).
fn read_last_test_run(ws: &Workspace) -> Option<LastTestRun> {
    let path = ws.cache_dir().join("test-results.json");
    crate::session::store::read_json_opt::<TestResults>(&path, &ws.rel(&path))
        .ok()
        .flatten()
        .map(|r| last_test_run(&r))
}

/// Everything phases 3–4 write, as data: typed parts, each flattened so
/// the templates see one flat set of names (`.workflow/templates/`
/// overrides keep working).
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    #[serde(flatten)]
    pub session: PlanSession,
    pub artifacts: Artifacts,
    pub task_files: TaskFiles,
    #[serde(flatten)]
    pub runner: RunnerView,
    #[serde(flatten)]
    pub project: ProjectView,
    #[serde(flatten)]
    pub inventory: TestInventory,
    pub coverage: CoverageView,
    #[serde(flatten)]
    pub layers: LayerPlan,
    #[serde(flatten)]
    pub limits: Limits,
    pub agents: AgentsView,
    #[serde(flatten)]
    pub next: NextRun,
    pub source: Option<SourceView>,
    /// The last `wfx test` of the project, when there is one.
    pub last_test_run: Option<LastTestRun>,
}

/// The session the plan is for.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSession {
    pub session_id: String,
    pub mode: &'static str,
    pub description: String,
    pub requirements_text: String,
    pub input: String,
    pub created_at: String,
}

/// The test framework and the commands that run it.
#[derive(Debug, Clone, Serialize)]
pub struct RunnerView {
    pub framework: String,
    pub framework_detected: bool,
    pub framework_signals: Vec<String>,
    pub command: Option<String>,
    pub test_pattern: String,
    pub test_directory: String,
    pub conventions: Vec<String>,
    pub run_specific: Option<String>,
    pub run_coverage: Option<String>,
}

/// What the project is and where the description points.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectView {
    pub project_type: String,
    pub confidence: f64,
    pub type_signals: Vec<String>,
    pub languages: Vec<(String, u32)>,
    pub frameworks: Vec<String>,
    pub files_scanned: u32,
    pub file_listing: String,
    pub keywords: Vec<String>,
    pub focus_paths: Vec<String>,
    pub focus_areas: Vec<String>,
    pub complexity: String,
}

/// The tests that exist and the sources without any.
#[derive(Debug, Clone, Serialize)]
pub struct TestInventory {
    pub source_files: u32,
    pub tested_source_files: u32,
    pub test_files: u32,
    pub inline_test_modules: u32,
    pub unmapped_code_files: u32,
    pub existing_tests: Vec<(String, String, Vec<String>)>,
    pub existing_tests_total: usize,
    pub gaps: Vec<(String, String, String, String)>,
    pub gaps_total: usize,
    pub gaps_high: usize,
    pub gaps_medium: usize,
    pub gaps_low: usize,
}

/// The tests to write, layer by layer.
#[derive(Debug, Clone, Serialize)]
pub struct LayerPlan {
    pub targets: Vec<TargetPlan>,
    pub test_files_to_write: Vec<String>,
    pub l0: Vec<Step>,
    /// Targets with an L2 layer.
    pub l2_files: Vec<String>,
    pub l2_notes: Vec<String>,
    pub l3_notes: Vec<String>,
}

/// The gates and the limits of phase 5.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    pub gate_critical: u32,
    pub gate_errors: u32,
    pub gate_warnings: u32,
    pub gate_retries: u32,
    pub max_iterations: u32,
    pub max_iterations_source: &'static str,
    pub pass_threshold: f64,
    pub regression_threshold_pp: f64,
    pub stuck_after: u32,
    pub no_progress_limit: u32,
    pub progressive: bool,
    pub commit: bool,
    pub test_edits_remove_or_skip: String,
    pub test_edits_modify: String,
    pub test_edits_weaken: String,
    pub test_edits_infrastructure: String,
}

/// How phase 5 is started.
#[derive(Debug, Clone, Serialize)]
pub struct NextRun {
    /// `@name` of the fix agent, or `manual fixes`.
    pub fix_agent_label: String,
    pub cycle_options: CycleOptions,
    pub cycle_flags: String,
    pub next_command: String,
}

/// Shown instead of a list's remainder.
pub const TABLE_ROWS: usize = 30;

/// The command that runs one test file (or inline module) with the
/// project's framework; `None` when the framework cannot narrow a run.
pub fn file_test_command(
    framework: &str,
    command: &str,
    test_file: &str,
    inline: bool,
) -> Option<String> {
    let python = command
        .split_whitespace()
        .next()
        .filter(|w| w.contains("python"))
        .unwrap_or("python");
    match framework {
        "cargo" | "nextest" => {
            let filter = if inline {
                rust_module_path(test_file)
                    .map_or_else(|| "tests::".to_string(), |m| format!("{m}::tests::"))
            } else if let Some(rest) = test_file.rsplit_once("tests/").map(|(_, r)| r) {
                let name = rest.strip_suffix(".rs").unwrap_or(rest);
                let name = name.strip_suffix("/main").unwrap_or(name);
                return Some(if framework == "nextest" {
                    format!("cargo nextest run --no-fail-fast --test {name}")
                } else {
                    format!("cargo test --no-fail-fast --test {name}")
                });
            } else {
                return None;
            };
            Some(if framework == "nextest" {
                format!("cargo nextest run --no-fail-fast --lib {filter}")
            } else {
                format!("cargo test --no-fail-fast --lib {filter}")
            })
        }
        "pytest" => Some(format!("{python} -m pytest {test_file}")),
        "jest" => Some(format!("npx jest {test_file}")),
        "vitest" => Some(format!("npx vitest run {test_file}")),
        "node-test" => Some(format!("node --test {test_file}")),
        "go" => {
            let dir = files::parent_dir(test_file);
            Some(if dir.is_empty() {
                "go test .".to_string()
            } else {
                format!("go test ./{dir}/")
            })
        }
        "maven" => {
            let class = files::stem(test_file);
            Some(format!("mvn test -Dtest={class}"))
        }
        _ => None,
    }
}

/// `src/a/b.rs` → `a::b`, `src/lib.rs` → `` (crate root); `None` outside `src/`.
pub fn rust_module_path(path: &str) -> Option<String> {
    let (_, rel) = path.rsplit_once("src/")?;
    let rel = rel.strip_suffix(".rs")?;
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    if matches!(rel, "lib" | "main") {
        return None;
    }
    Some(rel.replace('/', "::"))
}

/// The command a retest of selected tests runs, with `{tests}` where the
/// tests go; `None` when the framework cannot narrow a run. The detected
/// command (with its package.json script) when it is the planned one.
pub fn run_specific(
    root: &Path,
    config: &Config,
    framework: &str,
    command: &str,
) -> Option<String> {
    let detected = testing::detect(root, &config.test)
        .filter(|d| d.command == command && d.framework.as_str() == framework)
        .unwrap_or_else(|| {
            Detected::new(
                Framework::from_name(framework).unwrap_or(Framework::Custom),
                command,
            )
        });
    testing::select::template_command(&detected)
}

/// The compile / type / lint steps of L0 for this project (REFERENCE.md
/// "Test layers"), with the commands that check them.
pub fn l0_steps(
    pkg: &ContextPackage,
    framework: &str,
    command: &str,
    planned: &[String],
) -> Vec<Step> {
    let has = |name: &str| {
        pkg.assets
            .config
            .iter()
            .any(|a| files::file_name(&a.path) == name)
    };
    let has_prefix = |p: &str| {
        pkg.assets
            .config
            .iter()
            .any(|a| files::file_name(&a.path).starts_with(p))
    };
    let python = command
        .split_whitespace()
        .next()
        .filter(|w| w.contains("python"))
        .unwrap_or("python");
    let step = l0_step;
    let mut out = Vec::new();
    match framework {
        "cargo" | "nextest" => {
            out.push(step(
                "L0.1",
                "Compilation: the crate and every test target build".into(),
                Some("cargo build --tests".into()),
            ));
            out.push(step(
                "L0.2",
                "Import validity: every `use` of a new test names a dependency in Cargo.toml or a module of the crate".into(),
                None,
            ));
            out.push(step(
                "L0.4",
                "Lint: clippy passes on all targets".into(),
                Some("cargo clippy --all-targets".into()),
            ));
        }
        "pytest" => pytest_l0(pkg, python, &has, &mut out),
        "jest" | "vitest" | "node-test" => js_l0(planned, &has, &has_prefix, &mut out),
        "go" => {
            out.push(step(
                "L0.1",
                "Compilation and vet: packages and tests build, go vet is clean".into(),
                Some("go vet ./...".into()),
            ));
        }
        "maven" => {
            out.push(step(
                "L0.1",
                "Compilation: main and test sources compile".into(),
                Some("mvn -q test-compile".into()),
            ));
        }
        _ => {
            out.push(step(
                "L0.1",
                "Compilation: no compile step is known for this project; the AI-issue scan stands alone".into(),
                None,
            ));
        }
    }
    out.push(step(
        "L0.5",
        "AI issues: the 24 checks of the AI-issue scan (hallucinated imports, placeholders, mock leakage, type abuse, naming, control flow, resource leaks, security) on files IMPL-001 changes".into(),
        None,
    ));
    out
}

fn l0_step(id: &str, label: String, command: Option<String>) -> Step {
    Step {
        id: id.into(),
        label,
        command,
    }
}

/// L0 for pytest: byte-compile the source and test directories, collect, lint.
fn pytest_l0(pkg: &ContextPackage, python: &str, has: &dyn Fn(&str) -> bool, out: &mut Vec<Step>) {
    let step = l0_step;
    let mut dirs: Vec<String> = pkg
        .assets
        .source_code
        .iter()
        .map(|a| {
            a.path
                .split_once('/')
                .map_or(".".to_string(), |(d, _)| d.to_string())
        })
        .collect();
    dirs.extend(
        pkg.test_coverage
            .existing_tests
            .iter()
            .filter_map(|t| t.test_file.split_once('/').map(|(d, _)| d.to_string())),
    );
    dirs.sort();
    dirs.dedup();
    if dirs.is_empty() {
        dirs.push(".".into());
    }
    out.push(step(
        "L0.1",
        "Compilation: every module and test file byte-compiles".into(),
        Some(format!("{python} -m compileall -q {}", dirs.join(" "))),
    ));
    out.push(step(
        "L0.2",
        "Import validity: every import of a new test resolves to the project or a declared dependency".into(),
        Some(format!("{python} -m pytest --collect-only -q")),
    ));
    if has("ruff.toml") || has(".ruff.toml") {
        out.push(step(
            "L0.4",
            "Lint: ruff passes".into(),
            Some("ruff check .".into()),
        ));
    } else if has(".flake8") {
        out.push(step(
            "L0.4",
            "Lint: flake8 passes".into(),
            Some("flake8".into()),
        ));
    }
}

/// L0 for JavaScript and TypeScript: type-check or parse, imports, lint.
fn js_l0(
    planned: &[String],
    has: &dyn Fn(&str) -> bool,
    has_prefix: &dyn Fn(&str) -> bool,
    out: &mut Vec<Step>,
) {
    let step = l0_step;
    if has("tsconfig.json") {
        out.push(step(
            "L0.1",
            "Compilation: TypeScript type-checks".into(),
            Some("npx tsc --noEmit".into()),
        ));
        out.push(step(
            "L0.3",
            "Type safety: no `any`, `as unknown as` or `@ts-ignore` in new tests".into(),
            None,
        ));
    } else {
        let js: Vec<&String> = planned
            .iter()
            .filter(|f| {
                matches!(
                    f.rsplit_once('.').map(|(_, e)| e),
                    Some("js" | "mjs" | "cjs")
                )
            })
            .take(10)
            .collect();
        let cmd = (!js.is_empty()).then(|| {
            js.iter()
                .map(|f| format!("node --check {f}"))
                .collect::<Vec<_>>()
                .join(" && ")
        });
        out.push(step(
            "L0.1",
            "Compilation: every new or changed .js file parses".into(),
            cmd,
        ));
    }
    out.push(step(
        "L0.2",
        "Import validity: every require/import resolves to a project file or a package in package.json".into(),
        None,
    ));
    if has_prefix(".eslintrc") || has_prefix("eslint.config.") {
        out.push(step(
            "L0.4",
            "Lint: eslint passes".into(),
            Some("npx eslint .".into()),
        ));
    }
}

fn is_entry(path: &str) -> bool {
    matches!(
        files::file_name(path),
        "lib.rs"
            | "main.rs"
            | "__init__.py"
            | "__main__.py"
            | "main.py"
            | "app.py"
            | "cli.py"
            | "main.go"
    ) || files::stem(path) == "index"
        || files::stem(path) == "cli"
        || files::stem(path) == "app"
        || files::stem(path) == "server"
}

fn is_api_path(path: &str) -> bool {
    path.split('/').rev().skip(1).any(|d| {
        matches!(
            d,
            "routes" | "controllers" | "handlers" | "endpoints" | "api"
        )
    })
}

fn symbol_list(symbols: &[String]) -> String {
    if symbols.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = symbols.iter().take(6).map(|s| format!("`{s}`")).collect();
    let more = if symbols.len() > 6 { ", …" } else { "" };
    format!(" ({}{more})", shown.join(", "))
}

fn target_plan(
    t: &Target,
    project_type: &str,
    framework: &str,
    command: &str,
    has_integration: bool,
) -> TargetPlan {
    let gap = t.tests.is_empty();
    let test_file = match (&t.suggested_test_file, t.tests.first()) {
        (Some(s), _) => s.clone(),
        (None, Some(first)) => {
            // Extend the unit-level test file first.
            t.tests
                .iter()
                .find(|f| files::layer_of_test(f, files::file_class(f).family) == "unit")
                .unwrap_or(first)
                .clone()
        }
        (None, None) => t.file.clone(),
    };
    let syms = symbol_list(&t.symbols);
    let where_ = if gap {
        if test_file == t.file {
            format!("a new `#[cfg(test)] mod tests` in `{test_file}`")
        } else {
            format!("`{test_file}` (new file)")
        }
    } else {
        format!("`{test_file}`")
    };
    let mut layers = vec!["L1"];
    let mut reqs = vec![format!(
        "L1 unit — `{}`{syms}: happy path, negative path (invalid input, errors), edge cases (empty, zero, boundaries); in {where_}",
        t.file
    )];
    let api_like = matches!(project_type, "api-service" | "full-stack") && is_api_path(&t.file);
    if is_entry(&t.file) || api_like || (has_integration && !gap) {
        layers.push("L2");
        let what = if api_like {
            "request/response contracts and failure modes (timeout, unavailable, invalid payload)"
        } else if is_entry(&t.file) {
            "the public API as a caller uses it, wiring the modules it exposes together"
        } else {
            "interaction with the modules that call it"
        };
        reqs.push(format!("L2 integration — `{}`: {what}", t.file));
    }
    if matches!(project_type, "web-ui" | "full-stack" | "cli") && is_entry(&t.file) {
        layers.push("L3");
        let what = if project_type == "cli" {
            "run the built command with real arguments and check its output and exit code"
        } else {
            "the critical user path through this entry point"
        };
        reqs.push(format!("L3 e2e (optional) — `{}`: {what}", t.file));
    }
    let inline = test_file == t.file;
    TargetPlan {
        file: t.file.clone(),
        priority: t.priority.clone(),
        focus: t.focus,
        status: if gap { "gap" } else { "extend" },
        tests: t.tests.clone(),
        check_command: file_test_command(framework, command, &test_file, inline),
        test_file,
        symbols: t.symbols.clone(),
        layers,
        requirements: reqs,
        line_coverage: t.line_coverage,
    }
}

/// Build the plan.
pub fn build(
    ws: &Workspace,
    paths: &SessionPaths,
    session: &WorkflowSession,
    pkg: &ContextPackage,
    config: &Config,
    options: &CycleOptions,
    requirements_text: &str,
) -> Plan {
    let runner = RunnerView::new(pkg, config, &ws.root);
    let layers = LayerPlan::new(pkg, &runner);
    let agents = AgentsView::new(config, options);
    Plan {
        session: PlanSession::new(session, requirements_text),
        artifacts: Artifacts::new(ws, paths, session.mode),
        task_files: TaskFiles::new(ws, paths),
        project: ProjectView::new(pkg),
        inventory: TestInventory::new(pkg),
        coverage: CoverageView::new(pkg, config),
        limits: Limits::new(config, options),
        next: NextRun::new(session, options, &agents),
        agents,
        layers,
        runner,
        source: pkg.source_context.as_ref().map(SourceView::new),
        last_test_run: read_last_test_run(ws),
    }
}

impl PlanSession {
    fn new(session: &WorkflowSession, requirements_text: &str) -> Self {
        PlanSession {
            session_id: session.session_id.clone(),
            mode: match session.mode {
                InputMode::Prompt => "prompt",
                InputMode::Session => "session",
            },
            description: session.description.clone(),
            requirements_text: requirements_text.to_string(),
            input: session.input.clone(),
            created_at: session
                .created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

impl RunnerView {
    fn new(pkg: &ContextPackage, config: &Config, root: &Path) -> Self {
        let tf = &pkg.test_framework;
        let framework_detected = !tf.framework.is_empty();
        let framework = if framework_detected {
            tf.framework.clone()
        } else {
            "unknown".to_string()
        };
        let command = (!tf.command.is_empty()).then(|| tf.command.clone());
        RunnerView {
            run_specific: run_specific(
                root,
                config,
                &framework,
                command.as_deref().unwrap_or_default(),
            ),
            framework,
            framework_detected,
            framework_signals: tf.signals.clone(),
            command,
            test_pattern: tf.test_pattern.clone(),
            test_directory: tf.test_directory.clone(),
            conventions: tf.conventions.clone(),
            run_coverage: config.test.coverage_command.clone(),
        }
    }
}

impl ProjectView {
    fn new(pkg: &ContextPackage) -> Self {
        ProjectView {
            project_type: pkg.project.project_type.kind.clone(),
            confidence: pkg.project.project_type.confidence,
            type_signals: pkg.project.project_type.signals.clone(),
            languages: pkg
                .project
                .languages
                .iter()
                .map(|l| (l.language.clone(), l.files))
                .collect(),
            frameworks: pkg.project.frameworks.clone(),
            files_scanned: pkg.project.files_scanned,
            file_listing: pkg.project.file_listing.clone().unwrap_or_default(),
            keywords: pkg.metadata.keywords.clone(),
            focus_paths: pkg.focus_paths.clone(),
            focus_areas: pkg.focus_areas.clone(),
            complexity: pkg.metadata.complexity.clone(),
        }
    }
}

impl TestInventory {
    fn new(pkg: &ContextPackage) -> Self {
        let stats = &pkg.test_coverage.coverage_stats;
        let existing = &pkg.test_coverage.existing_tests;
        let missing = &pkg.test_coverage.missing_tests;
        let count = |p: &str| missing.iter().filter(|m| m.priority == p).count();
        TestInventory {
            source_files: stats.source_files,
            tested_source_files: stats.source_files_with_tests,
            test_files: stats.test_files,
            inline_test_modules: stats.inline_test_modules,
            unmapped_code_files: stats.unmapped_code_files,
            existing_tests: existing
                .iter()
                .take(TABLE_ROWS)
                .map(|t| {
                    let layer = t.layer.clone().unwrap_or_else(|| "unit".into());
                    let layer = if t.inline {
                        format!("{layer} (inline)")
                    } else {
                        layer
                    };
                    (t.test_file.clone(), layer, t.implementation_files.clone())
                })
                .collect(),
            existing_tests_total: existing.len(),
            gaps: missing
                .iter()
                .take(TABLE_ROWS)
                .map(|m| {
                    (
                        m.implementation_file.clone(),
                        m.priority.clone(),
                        m.suggested_test_file.clone(),
                        m.reason.clone(),
                    )
                })
                .collect(),
            gaps_total: missing.len(),
            gaps_high: count("high"),
            gaps_medium: count("medium"),
            gaps_low: count("low"),
        }
    }
}

impl CoverageView {
    fn new(pkg: &ContextPackage, config: &Config) -> Self {
        let gates = &config.gates;
        let lc = pkg.test_coverage.line_coverage.as_ref();
        let mut below: Vec<(String, f64)> = lc
            .map(|l| {
                l.files
                    .iter()
                    .filter(|f| f.percent < gates.coverage.line)
                    .map(|f| (f.path.clone(), f.percent))
                    .collect()
            })
            .unwrap_or_default();
        below.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        below.truncate(15);
        let run_coverage = &config.test.coverage_command;
        let measure = match (run_coverage, lc) {
            (Some(c), _) => format!("run the configured coverage command `{c}` and read its report"),
            (None, Some(l)) => format!(
                "read the existing {} report `{}` (refresh it after IMPL-001; no coverage command is configured)",
                l.format, l.report
            ),
            (None, None) => "unknown: no coverage report found and no `test.coverage_command` configured — coverage is reported as unknown and does not gate".to_string(),
        };
        CoverageView {
            report: lc.map(|l| l.report.clone()),
            format: lc.map(|l| l.format.clone()),
            line: lc.map(|l| l.percent),
            branch: lc.and_then(|l| l.branch_percent),
            function: lc.and_then(|l| l.function_percent),
            target_line: gates.coverage.line,
            target_branch: gates.coverage.branch,
            target_function: gates.coverage.function,
            file_percent: pkg.test_coverage.coverage_stats.file_coverage_percent,
            below_target: below,
            measure,
            measured: run_coverage.is_some() || lc.is_some(),
        }
    }
}

impl Artifacts {
    fn new(ws: &Workspace, paths: &SessionPaths, mode: InputMode) -> Self {
        let rel = |p: &std::path::Path| ws.rel(p);
        Artifacts {
            session_dir: rel(&paths.dir),
            workflow_session: rel(&paths.session_json()),
            impl_plan: rel(&paths.impl_plan()),
            todo_list: rel(&paths.todo_list()),
            planning_notes: rel(&paths.planning_notes()),
            analysis: rel(&paths.analysis_results()),
            context_package: rel(&if mode == InputMode::Session {
                paths.test_context_package()
            } else {
                paths.context_package()
            }),
            task_dir: rel(&paths.task_dir()),
            summaries_dir: rel(&paths.summaries_dir()),
        }
    }
}

impl TaskFiles {
    fn new(ws: &Workspace, paths: &SessionPaths) -> Self {
        let file = |name: &str| ws.rel(&paths.new_task_file(name));
        TaskFiles {
            test_gen: file(super::tasks::FILE_TEST_GEN),
            validation: file(super::tasks::FILE_VALIDATION),
            review: file(super::tasks::FILE_REVIEW),
            fix: file(super::tasks::FILE_FIX),
        }
    }
}

impl AgentsView {
    fn new(config: &Config, options: &CycleOptions) -> Self {
        let (fix, fix_source) = match (&options.fix_agent, &config.agents.fix) {
            (Some(a), _) => (a.clone(), "--fix-agent"),
            (None, Some(a)) => (a.names().join(", "), ".workflow/wfx.json agents.fix"),
            (None, None) => ("manual".to_string(), "no fix agent configured"),
        };
        AgentsView {
            test_gen: config.agents.test_gen.clone().filter(|a| a != "manual"),
            fix,
            analysis: config.agents.analysis.clone(),
            fix_source,
        }
    }
}

impl Limits {
    fn new(config: &Config, options: &CycleOptions) -> Self {
        let gate = &config.gates.code_validation;
        let cycle = &config.cycle;
        let (max_iterations, max_iterations_source) = match options.max_iterations {
            Some(n) => (n, "--max-iterations"),
            None if cycle.max_iterations != 10 => (
                cycle.max_iterations,
                ".workflow/wfx.json cycle.max_iterations",
            ),
            None => (cycle.max_iterations, "default"),
        };
        let policy = |p: &dyn std::fmt::Debug| format!("{p:?}").to_lowercase();
        Limits {
            gate_critical: gate.critical,
            gate_errors: gate.error,
            gate_warnings: gate.warning,
            gate_retries: gate.max_retries,
            max_iterations,
            max_iterations_source,
            pass_threshold: cycle.pass_threshold,
            regression_threshold_pp: cycle.regression_threshold_pp,
            stuck_after: cycle.stuck_after,
            no_progress_limit: cycle.no_progress_limit,
            progressive: cycle.progressive,
            commit: cycle.commit && !options.no_commit,
            test_edits_remove_or_skip: policy(&cycle.test_edits.remove_or_skip),
            test_edits_modify: policy(&cycle.test_edits.modify),
            test_edits_weaken: policy(&cycle.test_edits.weaken),
            test_edits_infrastructure: policy(&cycle.test_edits.infrastructure),
        }
    }
}

impl NextRun {
    fn new(session: &WorkflowSession, options: &CycleOptions, agents: &AgentsView) -> Self {
        let flags = options.as_flags();
        let next_command = if flags.is_empty() {
            format!(
                "wfx test-cycle-execute --resume-session={}",
                session.session_id
            )
        } else {
            format!(
                "wfx test-cycle-execute --resume-session={} {flags}",
                session.session_id
            )
        };
        NextRun {
            fix_agent_label: if agents.fix == "manual" {
                "manual fixes".to_string()
            } else {
                format!("@{}", agents.fix)
            },
            cycle_options: options.clone(),
            cycle_flags: flags,
            next_command,
        }
    }
}

impl SourceView {
    fn new(s: &crate::artifacts::context::SourceContext) -> Self {
        SourceView {
            id: s.source_session_id.clone(),
            description: s.description.clone(),
            completed_tasks: s.completed_tasks.clone(),
            changed_files: s.changed_files.clone(),
            summaries: s
                .implementation_summaries
                .iter()
                .map(|i| {
                    (
                        i.task_id.clone(),
                        i.summary_path.clone(),
                        i.changed_files.clone(),
                    )
                })
                .collect(),
        }
    }
}

impl LayerPlan {
    fn new(pkg: &ContextPackage, runner: &RunnerView) -> Self {
        let cmd = runner.command.clone().unwrap_or_default();
        let ptype = &pkg.project.project_type.kind;
        let has_integration = pkg
            .test_coverage
            .existing_tests
            .iter()
            .any(|t| t.layer.as_deref() == Some("integration"));
        let targets: Vec<TargetPlan> = context::select_targets(pkg)
            .iter()
            .map(|t| target_plan(t, ptype, &runner.framework, &cmd, has_integration))
            .collect();
        let mut test_files_to_write: Vec<String> =
            targets.iter().map(|t| t.test_file.clone()).collect();
        test_files_to_write.sort();
        test_files_to_write.dedup();
        LayerPlan {
            l0: l0_steps(pkg, &runner.framework, &cmd, &test_files_to_write),
            l2_files: targets
                .iter()
                .filter(|t| t.layers.contains(&"L2"))
                .map(|t| t.file.clone())
                .collect(),
            l2_notes: l2_notes(pkg, &targets, has_integration),
            l3_notes: l3_notes(ptype),
            test_files_to_write,
            targets,
        }
    }
}

/// What L2 integration tests cover for this kind of project.
fn l2_notes(pkg: &ContextPackage, targets: &[TargetPlan], has_integration: bool) -> Vec<String> {
    let ptype = pkg.project.project_type.kind.as_str();
    let mut notes = Vec::new();
    match ptype {
        "api-service" | "full-stack" => {
            notes.push("API contracts: status codes, payload shapes and error bodies of every handler the targets touch".to_string());
            notes.push("Failure modes: timeouts, unavailable dependencies and rate limits, with mocks at the process boundary only".to_string());
        }
        "cli" => notes.push(
            "Argument parsing wired to the commands it dispatches, exit codes included".to_string(),
        ),
        _ => {}
    }
    // A library's public API is its package entry file, which targets may
    // leave out (a re-exporting `__init__.py` or `index.js` already runs
    // in every test): plan the cross-module use through it.
    if ptype == "library" && !targets.iter().any(|t| is_entry(&t.file)) {
        let mut entries: Vec<&str> = pkg
            .assets
            .source_code
            .iter()
            .map(|a| a.path.as_str())
            .filter(|p| {
                matches!(files::file_name(p), "lib.rs" | "__init__.py") || files::stem(p) == "index"
            })
            .collect();
        let depth = entries
            .iter()
            .map(|p| p.matches('/').count())
            .min()
            .unwrap_or(0);
        entries.retain(|p| p.matches('/').count() == depth);
        entries.sort();
        entries.truncate(3);
        if !entries.is_empty() {
            notes.push(format!(
                "Public API through {}: import it as a user of the library does and use the modules it exposes together",
                entries.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if has_integration {
        let n = pkg
            .test_coverage
            .existing_tests
            .iter()
            .filter(|t| t.layer.as_deref() == Some("integration"))
            .count();
        notes.push(format!(
            "Follow the {n} existing integration test file(s) for setup and style"
        ));
    }
    notes
}

/// What L3 end-to-end tests cover for this kind of project.
fn l3_notes(ptype: &str) -> Vec<String> {
    vec![match ptype {
        "web-ui" | "full-stack" => "Critical user journeys through the UI entry points (optional; only if an e2e runner is set up)".to_string(),
        "cli" => "Run the built binary end to end on a temporary directory and check output and exit code".to_string(),
        _ => format!("Not planned: a {ptype} has no user journey beyond its public API"),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_file_commands() {
        assert_eq!(
            file_test_command("pytest", "python3 -m pytest", "tests/test_auth.py", false)
                .as_deref(),
            Some("python3 -m pytest tests/test_auth.py")
        );
        assert_eq!(
            file_test_command("cargo", "cargo test", "src/stats.rs", true).as_deref(),
            Some("cargo test --no-fail-fast --lib stats::tests::")
        );
        assert_eq!(
            file_test_command("cargo", "cargo test", "src/lib.rs", true).as_deref(),
            Some("cargo test --no-fail-fast --lib tests::")
        );
        assert_eq!(
            file_test_command(
                "nextest",
                "cargo nextest run",
                "tests/integration.rs",
                false
            )
            .as_deref(),
            Some("cargo nextest run --no-fail-fast --test integration")
        );
        assert_eq!(
            file_test_command("node-test", "npm test", "test/math.test.js", false).as_deref(),
            Some("node --test test/math.test.js")
        );
        assert_eq!(
            file_test_command("go", "go test", "calc/calc_test.go", false).as_deref(),
            Some("go test ./calc/")
        );
        assert_eq!(
            file_test_command(
                "maven",
                "mvn test",
                "src/test/java/calc/CalcTest.java",
                false
            )
            .as_deref(),
            Some("mvn test -Dtest=CalcTest")
        );
        assert_eq!(
            file_test_command("make", "make test", "t/x.sh", false),
            None
        );
    }

    #[test]
    fn rust_module_paths() {
        assert_eq!(rust_module_path("src/a/b.rs").as_deref(), Some("a::b"));
        assert_eq!(rust_module_path("src/a/mod.rs").as_deref(), Some("a"));
        assert_eq!(rust_module_path("src/lib.rs"), None);
        assert_eq!(
            rust_module_path("crates/x/src/io.rs").as_deref(),
            Some("io")
        );
    }

    #[test]
    fn the_last_test_run_lists_failures_with_where_and_why() {
        let failure = |test: &str, file: Option<&str>, line: Option<u32>, error: &str| {
            serde_json::json!({
                "test": test, "file": file, "line": line, "error": error,
                "criticality": "high", "test_type": "unit",
            })
        };
        let mut failures: Vec<serde_json::Value> = vec![
            failure(
                "t::a",
                Some("src/a.py"),
                Some(3),
                "AssertionError: 1 != 2\nmore",
            ),
            failure("t::b", Some("src/b.py"), None, &"x".repeat(300)),
            failure("t::c", None, None, ""),
        ];
        for i in 0..10 {
            failures.push(failure(&format!("t::more{i}"), None, None, "E"));
        }
        let results: TestResults = serde_json::from_value(serde_json::json!({
            "command": "python -m pytest", "scope": "full", "parser": "junit",
            "total": 20, "passed": 6, "failed": 12, "skipped": 1, "errors": 1,
            "pass_rate": 30.0, "failures": failures,
            "started_at": "2026-01-01T10:04:59Z",
        }))
        .unwrap();
        let run = last_test_run(&results);
        assert_eq!(run.when, "2026-01-01 10:04 UTC");
        assert_eq!((run.total, run.passed, run.failing), (20, 6, 13));
        assert_eq!(run.failures.len(), LAST_RUN_FAILURES);
        assert_eq!(run.more, 3);
        assert_eq!(run.failures[0].location, "src/a.py:3");
        assert_eq!(run.failures[0].error, "AssertionError: 1 != 2");
        assert_eq!(run.failures[1].location, "src/b.py");
        assert_eq!(run.failures[1].error.chars().count(), ERROR_CHARS);
        assert!(run.failures[1].error.ends_with('…'));
        assert_eq!(run.failures[2].location, "");
    }

    #[test]
    fn cycle_options_merge_and_flags() {
        let mut a = CycleOptions {
            no_commit: true,
            max_iterations: Some(5),
            ..Default::default()
        };
        a.merge(&CycleOptions {
            fix_agent: Some("manual".into()),
            max_iterations: Some(7),
            ..Default::default()
        });
        assert_eq!(
            a.as_flags(),
            "--no-commit --fix-agent manual --max-iterations 7"
        );
        assert_eq!(CycleOptions::default().as_flags(), "");
    }
}
