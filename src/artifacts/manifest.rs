//! `archives/manifest.json`: one entry per archived session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extra, Timestamp};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArchiveMetrics {
    pub tasks_total: u32,
    pub tasks_completed: u32,
    pub iterations: u32,
    #[serde(default)]
    pub final_pass_rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArchiveEntry {
    pub id: String,
    #[serde(default)]
    pub description: String,
    pub archived_at: Timestamp,
    /// Relative to the project root.
    pub archive_path: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub metrics: ArchiveMetrics,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArchiveManifest {
    #[serde(default)]
    pub sessions: Vec<ArchiveEntry>,
    #[serde(flatten)]
    pub extra: Extra,
}
