//! `.workflow/wfx.json` (DESIGN.md §7). Every field has a default, so an
//! empty `{}` is a valid config. Unknown keys are rejected: a typo in a
//! limit must not silently fall back to the default.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The project configuration: every field has a default, unknown fields
/// are rejected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where this file's schema lives, for editors.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// How the project's tests run.
    pub test: TestConfig,
    /// Which agents run for which role, and their limits.
    pub agents: AgentsConfig,
    /// Limits and policies of the test → fix → retest loop.
    pub cycle: CycleConfig,
    /// Speculative fix attempts: several candidates of one step at once.
    #[serde(skip_serializing_if = "FixConfig::is_default")]
    pub fix: FixConfig,
    /// Thresholds of the code-validation and test-quality gates.
    pub gates: GatesConfig,
    /// What wfx's commits may hold.
    pub git: GitConfig,
}

/// Where the schema has objects (structs, and the `definitions` map and
/// its values), as key paths; `*` is any key.
pub const OBJECT_PATHS: &[&[&str]] = &[
    &[],
    &["test"],
    &["agents"],
    &["agents", "definitions"],
    &["agents", "definitions", "*"],
    &["cycle"],
    &["cycle", "test_edits"],
    &["fix"],
    &["gates"],
    &["gates", "coverage"],
    &["gates", "code_validation"],
    &["git"],
    &["git", "message"],
];

/// Where the schema has arrays (of strings).
pub const ARRAY_PATHS: &[&[&str]] = &[
    &["agents", "analysis"],
    &["agents", "fix"],
    &["agents", "detected"],
    &["agents", "definitions", "*", "command"],
    &["agents", "definitions", "*", "args"],
];

impl Config {
    /// Whether `value`, which parsed as `config`, is valid under the
    /// schema: a typed parse checks types, enums and unknown keys, but
    /// takes an array for a struct (`[]` as `{}`) and an object for an
    /// enum's value (`{"reject": null}`), and knows no bounds.
    pub fn within_schema(value: &serde_json::Value, config: &Config) -> bool {
        fn at(paths: &[&[&str]], path: &[&str]) -> bool {
            paths.iter().any(|p| {
                p.len() == path.len() && p.iter().zip(path).all(|(p, k)| *p == "*" || p == k)
            })
        }
        fn shaped<'a>(v: &'a serde_json::Value, path: &mut Vec<&'a str>) -> bool {
            use serde_json::Value;
            match v {
                Value::Object(map) => {
                    at(OBJECT_PATHS, path)
                        && map.iter().all(|(k, v)| {
                            path.push(k);
                            let ok = shaped(v, path);
                            path.pop();
                            ok
                        })
                }
                Value::Array(items) => {
                    at(ARRAY_PATHS, path) && items.iter().all(|i| !i.is_array() && !i.is_object())
                }
                _ => true,
            }
        }
        shaped(value, &mut Vec::new()) && config.within_schema_ranges()
    }

    /// Whether every number lies within the bounds its `schemars(range)`
    /// gives (`minimum`, `maximum` in the schema): the one thing the
    /// schema checks that a typed parse (types, enums, unknown keys) does
    /// not, so a typed parse and this accept exactly what the schema
    /// accepts, without compiling it (`store::read_json_typed`). The test
    /// `schema_ranges_are_all_checked` fails when a bound is added here
    /// and not below.
    pub fn within_schema_ranges(&self) -> bool {
        let a = &self.agents;
        let c = &self.cycle;
        let percent = |v: f64| (0.0..=100.0).contains(&v);
        self.git.max_new_file_mib >= 1
            && self.test.timeout_s >= 1
            && a.default_timeout_s >= 1
            && a.max_cost_usd.is_none_or(|v| v >= 0.0)
            && a.definitions
                .values()
                .all(|d| d.timeout_s.is_none_or(|t| t >= 1))
            && (1..=MAX_CANDIDATES).contains(&self.fix.candidates)
            && self.fix.max_parallel.is_none_or(|n| (1..=64).contains(&n))
            && (1..=1000).contains(&c.max_iterations)
            && percent(c.pass_threshold)
            && percent(c.regression_threshold_pp)
            && c.stuck_after >= 1
            && c.no_progress_limit >= 1
    }
}

/// What wfx's commits may hold, and how they are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GitConfig {
    /// A new, untracked file larger than this (MiB) is never committed
    /// nor copied into `.git` by a snapshot; one a fix wrote is named in
    /// fix history (`not_committed`), the summaries and the report.
    #[schemars(range(min = 1))]
    pub max_new_file_mib: u64,
    /// Run the repository's `pre-commit`, `commit-msg` and `post-commit`
    /// hooks around wfx's commits, as `git commit` would. `false` skips
    /// them, and the report and the final summary say so.
    pub hooks: bool,
    /// Which of the session's own files wfx's commits hold: `summary`
    /// (state, plan, task files, summaries, fix history, failure report;
    /// per-run results, logs, prompts and analyses stay on disk,
    /// git-ignored), `all` (the session directory, minus logs) or `none`.
    pub artifacts: ArtifactPolicy,
    /// At completion, fold this session's own commits into one whose
    /// message lists the iterations; refused (and said so) when commits of
    /// anyone else lie between them.
    pub squash: bool,
    /// How wfx writes its commit messages (docs/git.md): the convention,
    /// and templates that override the subject of each kind of commit.
    pub message: MessageConfig,
}

/// `git.message`: the convention of wfx's commit subjects and templates
/// that override them. The `Wfx-*` trailers are always added.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MessageConfig {
    /// `auto`: Conventional Commits when the repository uses commitlint,
    /// commitizen or a Conventional Commits history, else wfx's plain
    /// `test-cycle: …` subjects; `conventional` or `plain` to choose.
    pub convention: ConventionChoice,
    /// Subject of the commit of generated tests. Variables: `${type}`,
    /// `${scope}`, `${summary}`, `${session.id}`, `${iteration}`, `${files}`.
    pub tests: Option<String>,
    /// Subject of a fix attempt's commit. Variables: those of `tests` and
    /// `${strategy}`, `${pass.before}`, `${pass.after}`.
    pub fix: Option<String>,
    /// Subject of a rollback (a revert). Variables: `${type}`, `${scope}`,
    /// `${summary}`, `${session.id}`, `${iteration}`, `${reason}`.
    pub rollback: Option<String>,
    /// Subject of the final commit (and of the squashed one). Variables:
    /// `${type}`, `${scope}`, `${summary}`, `${session.id}`,
    /// `${iteration}`, `${outcome}`, `${pass}`, `${attempts}`.
    #[serde(rename = "final")]
    pub final_: Option<String>,
}

impl MessageConfig {
    /// `(key, template)` of every template given.
    pub fn templates(&self) -> Vec<(String, String)> {
        [
            ("tests", &self.tests),
            ("fix", &self.fix),
            ("rollback", &self.rollback),
            ("final", &self.final_),
        ]
        .into_iter()
        .filter_map(|(k, t)| t.clone().map(|t| (k.to_string(), t)))
        .collect()
    }
}

/// `git.message.convention`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConventionChoice {
    /// Detected from the repository.
    #[default]
    Auto,
    /// Conventional Commits.
    Conventional,
    /// wfx's own `test-cycle: …` subjects.
    Plain,
}

/// `git.artifacts`: which session files are committed. The default keeps
/// a session's history small and diff-friendly: what a reviewer reads,
/// not every run's raw output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactPolicy {
    /// The session directory, minus logs and raw agent output (every
    /// run's results, prompts and analyses included).
    All,
    /// `workflow-session.json`, `.process/iteration-state.json`,
    /// `IMPL_PLAN.md`, `TODO_LIST.md`, `.task/`, `.summaries/`,
    /// `.process/fix-history.json`, `.process/failure-report.md`; a
    /// session that committed no fix commits only its entry in
    /// `archives/manifest.json`.
    #[default]
    Summary,
    /// No session file (nor the archive manifest).
    None,
}

/// `git.max_new_file_mib` by default: new files above it are left alone.
pub const DEFAULT_MAX_NEW_FILE_MIB: u64 = 10;

impl Default for GitConfig {
    fn default() -> Self {
        GitConfig {
            max_new_file_mib: DEFAULT_MAX_NEW_FILE_MIB,
            hooks: true,
            artifacts: ArtifactPolicy::Summary,
            squash: false,
            message: MessageConfig::default(),
        }
    }
}

/// How the project's tests run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TestConfig {
    /// Test command; detected when absent (`Cargo.toml`, `pyproject.toml`,
    /// `package.json`, `go.mod`, `pom.xml`, a `Makefile` `test` target…).
    pub command: Option<String>,
    /// Timeout of one test run, in seconds.
    #[schemars(range(min = 1))]
    pub timeout_s: u64,
    /// Glob of JUnit XML files the command writes.
    pub junit: Option<String>,
    /// Command that lists the tests related to changed files (`{files}` is
    /// replaced by them) during retests; it prints test ids or test files,
    /// one per line.
    pub related_command: Option<String>,
    /// Command that writes a coverage report (lcov, cobertura or
    /// json-summary) for the test-quality gate.
    pub coverage_command: Option<String>,
}

impl Default for TestConfig {
    fn default() -> Self {
        TestConfig {
            command: None,
            timeout_s: 1800,
            junit: None,
            related_command: None,
            coverage_command: None,
        }
    }
}

/// A custom command: an argv array (no shell) or a string run by `sh -c`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum Preset {
        Claude = "claude",
        Gemini = "gemini",
        Qwen = "qwen",
        Codex = "codex",
        Opencode = "opencode",
    }
}

/// A named agent: a preset CLI, or a custom command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentDefinition {
    /// A supported CLI whose argument list wfx builds per role.
    pub preset: Option<Preset>,
    /// A custom command instead of a preset, with `${…}` variables.
    pub command: Option<CommandSpec>,
    /// Executable to run instead of the preset's own name (a name looked
    /// up on PATH, or a path relative to the project root), e.g. a wrapper
    /// script or a second installation. Presets only.
    pub program: Option<String>,
    /// Timeout of one call in seconds; default `agents.default_timeout_s`.
    #[schemars(range(min = 1))]
    pub timeout_s: Option<u64>,
    /// Model name passed as `--model` (presets only).
    pub model: Option<String>,
    /// Extra arguments appended to a preset's argument list.
    pub args: Vec<String>,
}

/// Which agents run for which role. Nothing runs unless a role names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentsConfig {
    /// Fallback chain of analysis agents, tried in order.
    pub analysis: Vec<String>,
    /// Fix agent; `manual` or absent → the user applies fixes. A list
    /// (`["claude", "codex"]`) names the agents speculative candidates
    /// take turns with (`fix.candidates`); one attempt at a time uses the
    /// first.
    pub fix: Option<AgentNames>,
    /// Test generation agent for IMPL-001; absent → the task is skipped.
    pub test_gen: Option<String>,
    /// Named agents the roles refer to; a preset name needs no definition.
    pub definitions: BTreeMap<String, AgentDefinition>,
    /// Session cost cap in US dollars: once the recorded cost of agent
    /// calls reaches it, no further agent call is made.
    #[schemars(range(min = 0.0))]
    pub max_cost_usd: Option<f64>,
    /// Agent CLIs `wfx init` found on PATH; informational, never run.
    pub detected: Vec<String>,
    /// Timeout of an agent call, in seconds, when its definition sets none.
    #[schemars(range(min = 1))]
    pub default_timeout_s: u64,
}

impl Default for AgentsConfig {
    fn default() -> Self {
        AgentsConfig {
            analysis: Vec::new(),
            fix: None,
            test_gen: None,
            definitions: BTreeMap::new(),
            max_cost_usd: None,
            detected: Vec::new(),
            default_timeout_s: 1200,
        }
    }
}

/// One agent's name, or a list of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AgentNames {
    One(String),
    Many(Vec<String>),
}

impl AgentNames {
    /// The names, in order.
    pub fn names(&self) -> Vec<&str> {
        match self {
            AgentNames::One(n) => vec![n.as_str()],
            AgentNames::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }

    /// The first name (the agent of a single attempt).
    pub fn first(&self) -> Option<&str> {
        self.names().first().copied()
    }
}

impl From<&str> for AgentNames {
    fn from(name: &str) -> Self {
        AgentNames::One(name.to_string())
    }
}

/// `fix`: speculative attempts (docs/candidates.md). Each step of the fix
/// loop runs `candidates` fix attempts at once, each in a checkout of its
/// own outside the project, and keeps the one the tests prefer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FixConfig {
    /// Fix attempts per step, run at once (1: one attempt in the work
    /// tree, as without this setting). `--candidates N` overrides it.
    #[schemars(range(min = 1, max = 16))]
    pub candidates: u32,
    /// At most this many candidates run at the same time; default: the
    /// number of CPU cores.
    #[schemars(range(min = 1, max = 64))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_parallel: Option<u32>,
}

impl FixConfig {
    fn is_default(&self) -> bool {
        *self == FixConfig::default()
    }
}

impl Default for FixConfig {
    fn default() -> Self {
        FixConfig {
            candidates: 1,
            max_parallel: None,
        }
    }
}

/// The most candidates of one step (`fix.candidates`, `--candidates`,
/// a workflow's `on_failure.candidates`): each is a checkout and a test run.
pub const MAX_CANDIDATES: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditPolicy {
    /// Roll the attempt back and count it as failed.
    Reject,
    /// Record it in fix history, summary and report.
    Flag,
    /// Accept it silently.
    Allow,
}

/// What happens when a fix edits the tests: `reject` rolls the attempt
/// back and counts it as failed, `flag` records it in fix history, the
/// summaries and the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TestEditsPolicy {
    /// A removed test, an added skip/ignore/only marker, or fewer tests.
    pub remove_or_skip: EditPolicy,
    /// Any other change to a test file.
    pub modify: EditPolicy,
    /// An assertion, expected value or expected exception of a failing
    /// test changed or removed.
    pub weaken: EditPolicy,
    /// A change to the test infrastructure other than test bodies: pytest
    /// configuration and plugins, `conftest.py`, jest/vitest/mocha
    /// configuration and the files it loads, the test scripts of
    /// `package.json`, Cargo's test keys, and code under test that newly
    /// imports the test runner (`pytest`, `unittest`, `jest`, `vitest`,
    /// `mocha`, `node:test`, …) or writes over `assert`.
    pub infrastructure: EditPolicy,
}

impl Default for TestEditsPolicy {
    fn default() -> Self {
        TestEditsPolicy {
            remove_or_skip: EditPolicy::Reject,
            modify: EditPolicy::Flag,
            weaken: EditPolicy::Reject,
            infrastructure: EditPolicy::Reject,
        }
    }
}

/// Limits and policies of the test → fix → retest loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CycleConfig {
    /// Fix attempts before the session is blocked. Precedence:
    /// `--max-iterations` > `IMPL-002.meta.max_iterations` > this.
    #[schemars(range(min = 1, max = 1000))]
    pub max_iterations: u32,
    /// Pass rate (%) at which a run whose failures are all low
    /// criticality is a partial success.
    #[schemars(range(min = 0.0, max = 100.0))]
    pub pass_threshold: f64,
    /// A pass-rate drop of more than this many percentage points is a
    /// regression, and the fix is rolled back.
    #[schemars(range(min = 0.0, max = 100.0))]
    pub regression_threshold_pp: f64,
    /// Runs in a row a test must fail to count as stuck.
    #[schemars(range(min = 1))]
    pub stuck_after: u32,
    /// Runs in a row with the same failures before the session is
    /// blocked early for lack of progress.
    #[schemars(range(min = 1))]
    pub no_progress_limit: u32,
    /// Retest only the failing and affected tests between full runs.
    pub progressive: bool,
    /// Run the full suite instead of a retest tier that, by this
    /// session's own timings, would take 80 % of a full run or more
    /// (a build or a `pretest` script every run pays dominates it).
    pub skip_slow_tiers: bool,
    /// Commit each fix attempt (`--no-commit` turns it off).
    pub commit: bool,
    /// Run the full suite that accepts a fix, or completes the session, on
    /// the committed tree in a clean checkout outside the project (git
    /// repositories only): files outside the commit take no part, but for
    /// the dependency directories and small ignored files that were there
    /// when the session started.
    pub sealed: bool,
    /// What happens when a fix edits the tests.
    pub test_edits: TestEditsPolicy,
}

impl Default for CycleConfig {
    fn default() -> Self {
        CycleConfig {
            max_iterations: 10,
            pass_threshold: 95.0,
            regression_threshold_pp: 10.0,
            stuck_after: 3,
            no_progress_limit: 4,
            progressive: true,
            skip_slow_tiers: true,
            commit: true,
            sealed: true,
            test_edits: TestEditsPolicy::default(),
        }
    }
}

/// Coverage targets (%) of the test-quality gate (IMPL-001.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CoverageGate {
    /// Line coverage target (%).
    pub line: f64,
    /// Branch coverage target (%).
    pub branch: f64,
    /// Function coverage target (%).
    pub function: f64,
}

impl Default for CoverageGate {
    fn default() -> Self {
        CoverageGate {
            line: 80.0,
            branch: 70.0,
            function: 80.0,
        }
    }
}

/// Limits of the code-validation gate (IMPL-001.3): the most findings of
/// each severity that still pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CodeValidationGate {
    /// Most critical findings allowed.
    pub critical: u32,
    /// Most error findings allowed.
    pub error: u32,
    /// Most warning findings allowed.
    pub warning: u32,
    /// Fix rounds for a soft failure before the gate fails hard.
    pub max_retries: u32,
}

impl Default for CodeValidationGate {
    fn default() -> Self {
        CodeValidationGate {
            critical: 0,
            error: 3,
            warning: 10,
            max_retries: 2,
        }
    }
}

/// Thresholds of the code-validation and test-quality gates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GatesConfig {
    /// Coverage targets of the test-quality gate.
    pub coverage: CoverageGate,
    /// Limits of the code-validation gate.
    pub code_validation: CodeValidationGate,
}
