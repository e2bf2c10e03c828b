//! `.workflow/wfx.json` (DESIGN.md §7). Every field has a default, so an
//! empty `{}` is a valid config. Unknown keys are rejected: a typo in a
//! limit must not silently fall back to the default.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where this file's schema lives, for editors.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    pub test: TestConfig,
    pub agents: AgentsConfig,
    pub cycle: CycleConfig,
    pub gates: GatesConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TestConfig {
    /// Test command; detected when absent (DESIGN.md §6.1).
    pub command: Option<String>,
    #[schemars(range(min = 1))]
    pub timeout_s: u64,
    /// Glob of JUnit XML files the command writes.
    pub junit: Option<String>,
    /// Command run with `{files}` replaced by changed files during retests.
    pub related_command: Option<String>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    Claude,
    Gemini,
    Qwen,
    Codex,
    Opencode,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Claude,
        Preset::Gemini,
        Preset::Qwen,
        Preset::Codex,
        Preset::Opencode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Claude => "claude",
            Preset::Gemini => "gemini",
            Preset::Qwen => "qwen",
            Preset::Codex => "codex",
            Preset::Opencode => "opencode",
        }
    }

    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentDefinition {
    pub preset: Option<Preset>,
    pub command: Option<CommandSpec>,
    /// Executable to run instead of the preset's own name (a name looked
    /// up on PATH, or a path relative to the project root), e.g. a wrapper
    /// script or a second installation. Presets only.
    pub program: Option<String>,
    #[schemars(range(min = 1))]
    pub timeout_s: Option<u64>,
    pub model: Option<String>,
    /// Extra arguments appended to a preset's argument list.
    pub args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentsConfig {
    /// Fallback chain of analysis agents, tried in order.
    pub analysis: Vec<String>,
    /// Fix agent; `manual` or absent → the user applies fixes.
    pub fix: Option<String>,
    pub test_gen: Option<String>,
    pub definitions: BTreeMap<String, AgentDefinition>,
    /// Session cost cap in US dollars: once the recorded cost of agent
    /// calls reaches it, no further agent call is made.
    #[schemars(range(min = 0.0))]
    pub max_cost_usd: Option<f64>,
    /// Agent CLIs `wfx init` found on PATH; informational, never run.
    pub detected: Vec<String>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditPolicy {
    /// Roll the attempt back and count it as failed.
    Reject,
    /// Record it in fix history, summary and report.
    Flag,
    Allow,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TestEditsPolicy {
    pub remove_or_skip: EditPolicy,
    pub modify: EditPolicy,
}

impl Default for TestEditsPolicy {
    fn default() -> Self {
        TestEditsPolicy {
            remove_or_skip: EditPolicy::Reject,
            modify: EditPolicy::Flag,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CycleConfig {
    #[schemars(range(min = 1, max = 1000))]
    pub max_iterations: u32,
    #[schemars(range(min = 0.0, max = 100.0))]
    pub pass_threshold: f64,
    #[schemars(range(min = 0.0, max = 100.0))]
    pub regression_threshold_pp: f64,
    #[schemars(range(min = 1))]
    pub stuck_after: u32,
    #[schemars(range(min = 1))]
    pub no_progress_limit: u32,
    pub progressive: bool,
    pub commit: bool,
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
            commit: true,
            test_edits: TestEditsPolicy::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CoverageGate {
    pub line: f64,
    pub branch: f64,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CodeValidationGate {
    pub critical: u32,
    pub error: u32,
    pub warning: u32,
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GatesConfig {
    pub coverage: CoverageGate,
    pub code_validation: CodeValidationGate,
}
