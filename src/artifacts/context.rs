//! `.process/context-package.json` (prompt mode) and
//! `test-context-package.json` (session mode): what phase 2 learnt about
//! the project, deterministically, without an agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Extra;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextMetadata {
    pub session_id: String,
    #[serde(default)]
    pub task_description: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    /// `low`, `medium` or `high`.
    #[serde(default)]
    pub complexity: String,
    #[serde(default)]
    pub tech_stack: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LanguageCount {
    pub language: String,
    pub files: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectType {
    /// `web-ui`, `api-service`, `cli`, `library`, `full-stack`, …
    pub kind: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// What made wfx think so.
    #[serde(default)]
    pub signals: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectInfo {
    #[serde(default)]
    pub languages: Vec<LanguageCount>,
    #[serde(default)]
    pub project_type: ProjectType,
    #[serde(default)]
    pub frameworks: Vec<String>,
    #[serde(default)]
    pub files_scanned: u32,
    /// Where the file list came from: `git-index` or `walk`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_listing: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestFrameworkInfo {
    #[serde(default)]
    pub framework: String,
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub test_pattern: String,
    #[serde(default)]
    pub test_directory: String,
    #[serde(default)]
    pub conventions: Vec<String>,
    /// What the detection saw (config, manifest, files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Asset {
    pub path: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub relevance: f64,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// Public definitions of a source file the plan targets (what its
    /// tests should call); empty for other files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Assets {
    #[serde(default)]
    pub source_code: Vec<Asset>,
    #[serde(default)]
    pub tests: Vec<Asset>,
    #[serde(default)]
    pub config: Vec<Asset>,
    #[serde(default)]
    pub documentation: Vec<Asset>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExistingTest {
    pub test_file: String,
    /// Source files this test file covers (by naming and imports).
    #[serde(default)]
    pub implementation_files: Vec<String>,
    /// `unit`, `integration` or `e2e` (by path, REFERENCE.md "Test layers").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<String>,
    /// Tests inside the source file itself (Rust `#[cfg(test)]`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inline: bool,
    /// How the implementation files were found: `naming`, `imports`, `inline`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissingTest {
    pub implementation_file: String,
    pub suggested_test_file: String,
    pub priority: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageStats {
    pub source_files: u32,
    pub source_files_with_tests: u32,
    pub test_files: u32,
    /// Share of source files with at least one test file, in percent.
    pub file_coverage_percent: f64,
    /// Source files with inline tests (Rust `#[cfg(test)]` modules).
    #[serde(default)]
    pub inline_test_modules: u32,
    /// Code files in languages wfx does not map tests for (not assessed).
    #[serde(default)]
    pub unmapped_code_files: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileLineCoverage {
    pub path: String,
    pub lines_total: u32,
    pub lines_covered: u32,
    pub percent: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LineCoverage {
    /// Relative path of the report that was read.
    pub report: String,
    /// `lcov`, `cobertura` or `json-summary`.
    pub format: String,
    pub percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_percent: Option<f64>,
    #[serde(default)]
    pub files: Vec<FileLineCoverage>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestCoverage {
    #[serde(default)]
    pub existing_tests: Vec<ExistingTest>,
    #[serde(default)]
    pub missing_tests: Vec<MissingTest>,
    #[serde(default)]
    pub coverage_stats: CoverageStats,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_coverage: Option<LineCoverage>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImplementationSummary {
    pub task_id: String,
    pub summary_path: String,
    #[serde(default)]
    pub changed_files: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SourceContext {
    pub source_session_id: String,
    /// The source session's own description, when it has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Ids of the source session's completed tasks.
    #[serde(default)]
    pub completed_tasks: Vec<String>,
    /// Every project file the source session changed (union over tasks
    /// and summaries), sorted.
    #[serde(default)]
    pub changed_files: Vec<String>,
    #[serde(default)]
    pub implementation_summaries: Vec<ImplementationSummary>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextPackage {
    pub metadata: ContextMetadata,
    #[serde(default)]
    pub project: ProjectInfo,
    #[serde(default)]
    pub test_framework: TestFrameworkInfo,
    #[serde(default)]
    pub assets: Assets,
    #[serde(default)]
    pub test_coverage: TestCoverage,
    #[serde(default)]
    pub focus_paths: Vec<String>,
    #[serde(default)]
    pub focus_areas: Vec<String>,
    /// Session mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_context: Option<SourceContext>,
    #[serde(flatten)]
    pub extra: Extra,
}
