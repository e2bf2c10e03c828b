//! Serde types of every artifact wfx reads or writes (DESIGN.md §3).
//!
//! Every struct keeps the fields it does not know in a flattened `extra` map,
//! so hand edits and other tools' fields survive a read-modify-write.
//! `schemas/*.schema.json` are generated from these types.

pub mod config;
pub mod context;
pub mod fix_history;
pub mod iteration_state;
pub mod manifest;
pub mod run_state;
pub mod session;
pub mod task;
pub mod test_results;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use config::Config;
pub use context::ContextPackage;
pub use fix_history::{FixAttempt, FixHistory};
pub use iteration_state::{IterationFailures, IterationRecord, IterationState};
pub use manifest::{ArchiveEntry, ArchiveManifest};
pub use run_state::RunState;
pub use session::WorkflowSession;
pub use task::{FixStrategy, Task};
pub use test_results::TestResults;

use crate::error::Problem;

/// Fields a file carries that this version of wfx does not know.
pub type Extra = serde_json::Map<String, Value>;

/// UTC timestamps, serialised as RFC 3339.
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// A JSON artifact with a schema under `schemas/<SCHEMA>.schema.json`.
pub trait Artifact: Serialize + DeserializeOwned + schemars::JsonSchema {
    /// Base name of the schema file (without `.schema.json`).
    const SCHEMA: &'static str;
}

macro_rules! artifact {
    ($ty:ty, $name:literal) => {
        impl Artifact for $ty {
            const SCHEMA: &'static str = $name;
        }
    };
}

artifact!(WorkflowSession, "workflow-session");
artifact!(Task, "task");
artifact!(FixStrategy, "fix-strategy");
artifact!(IterationState, "iteration-state");
artifact!(IterationFailures, "iteration-failures");
artifact!(TestResults, "test-results");
artifact!(FixHistory, "fix-history");
artifact!(ContextPackage, "context-package");
artifact!(ArchiveManifest, "manifest");
artifact!(Config, "config");
artifact!(RunState, "run-state");

fn schema_of<T: Artifact>() -> (&'static str, Value) {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    (
        T::SCHEMA,
        serde_json::to_value(schema).expect("schemas serialise"),
    )
}

/// Every schema wfx generates, by name: the source of `schemas/`.
pub fn all_schemas() -> Vec<(&'static str, Value)> {
    vec![
        schema_of::<WorkflowSession>(),
        schema_of::<Task>(),
        schema_of::<FixStrategy>(),
        schema_of::<IterationState>(),
        schema_of::<IterationFailures>(),
        schema_of::<TestResults>(),
        schema_of::<FixHistory>(),
        schema_of::<ContextPackage>(),
        schema_of::<ArchiveManifest>(),
        schema_of::<Config>(),
        schema_of::<RunState>(),
    ]
}

/// The schema name for a file, judged by its name and place in a session.
pub fn schema_for_path(path: &std::path::Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    Some(match name {
        "workflow-session.json" => WorkflowSession::SCHEMA,
        "iteration-state.json" => IterationState::SCHEMA,
        "test-results.json" => TestResults::SCHEMA,
        "fix-history.json" => FixHistory::SCHEMA,
        "context-package.json" | "test-context-package.json" => ContextPackage::SCHEMA,
        "manifest.json" => ArchiveManifest::SCHEMA,
        "wfx.json" => Config::SCHEMA,
        "fix-strategy.json" => FixStrategy::SCHEMA,
        "run-state.json" => RunState::SCHEMA,
        n if parent == Some(".task") && n.ends_with(".json") => Task::SCHEMA,
        n if n.starts_with("iteration-") && n.ends_with("-failures.json") => {
            IterationFailures::SCHEMA
        }
        n if n.starts_with("iteration-") && n.ends_with("-results.json") => TestResults::SCHEMA,
        _ => return None,
    })
}

type Validators = HashMap<&'static str, &'static jsonschema::Validator>;

fn validator(name: &str) -> Option<&'static jsonschema::Validator> {
    static CACHE: OnceLock<Mutex<Validators>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = cache.get(name) {
        return Some(v);
    }
    let (key, schema) = all_schemas().into_iter().find(|(n, _)| *n == name)?;
    let compiled = jsonschema::validator_for(&schema).expect("generated schemas compile");
    let leaked: &'static jsonschema::Validator = Box::leak(Box::new(compiled));
    cache.insert(key, leaked);
    Some(leaked)
}

/// Validate a JSON value against the named schema. `file` is only used to
/// label the problems.
pub fn validate_value(schema: &str, file: &str, value: &Value) -> Vec<Problem> {
    let Some(validator) = validator(schema) else {
        return vec![Problem {
            file: file.to_string(),
            pointer: String::new(),
            message: format!("no schema named {schema}"),
        }];
    };
    validator
        .iter_errors(value)
        .map(|e| Problem {
            file: file.to_string(),
            pointer: e.instance_path().to_string(),
            message: e.to_string(),
        })
        .collect()
}

/// Parse and validate an artifact from text: JSON syntax errors, schema
/// problems and type errors are all reported as [`Problem`]s.
pub fn parse_artifact<T: Artifact>(file: &str, text: &str) -> Result<T, Vec<Problem>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        vec![Problem {
            file: file.to_string(),
            pointer: String::new(),
            message: format!(
                "invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        }]
    })?;
    let problems = validate_value(T::SCHEMA, file, &value);
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value(value).map_err(|e| {
        vec![Problem {
            file: file.to_string(),
            pointer: String::new(),
            message: e.to_string(),
        }]
    })
}
