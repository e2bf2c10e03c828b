//! Serde types of every artifact wfx reads or writes (DESIGN.md §3).
//!
//! Every struct keeps the fields it does not know in a flattened `extra` map,
//! so hand edits and other tools' fields survive a read-modify-write.
//! `schemas/*.schema.json` are generated from these types.

pub mod config;
pub mod context;
pub mod findings;
pub mod fix_history;
pub mod iteration_state;
pub mod manifest;
pub mod options;
pub mod run_state;
pub mod session;
pub mod task;
pub mod task_overlay;
pub mod task_record;
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
pub use task_overlay::TaskOverlay;
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

    /// Whether every number lies within the bounds its `schemars(range)`
    /// gives: the one rule of the schema a typed value does not carry
    /// (see [`written_by_type`]). Types with such bounds say so here.
    fn within_bounds(&self) -> bool {
        true
    }
}

macro_rules! artifact {
    ($ty:ty, $name:literal) => {
        impl Artifact for $ty {
            const SCHEMA: &'static str = $name;
        }
    };
}

artifact!(WorkflowSession, "workflow-session");

impl Artifact for Task {
    const SCHEMA: &'static str = "task";

    fn within_bounds(&self) -> bool {
        (self.context.fix_strategy.as_ref()).is_none_or(|s| in_unit(s.confidence_score))
    }
}

/// `schemars(range(min = 0.0, max = 1.0))`.
fn in_unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

artifact!(TaskOverlay, "task-overlay");
artifact!(FixStrategy, "fix-strategy");
artifact!(IterationState, "iteration-state");
artifact!(IterationFailures, "iteration-failures");
artifact!(TestResults, "test-results");
artifact!(FixHistory, "fix-history");

impl Artifact for ContextPackage {
    const SCHEMA: &'static str = "context-package";

    fn within_bounds(&self) -> bool {
        let a = &self.assets;
        in_unit(self.project.project_type.confidence)
            && [&a.source_code, &a.tests, &a.config, &a.documentation]
                .iter()
                .all(|list| list.iter().all(|asset| in_unit(asset.relevance)))
    }
}
artifact!(ArchiveManifest, "manifest");
artifact!(Config, "config");
artifact!(RunState, "run-state");

fn schema_of<T: Artifact>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(schema).expect("schemas serialise")
}

/// Every artifact's schema name and generator: a validator generates only
/// the schema it needs (generating all twelve cost `wfx test` a seventh of
/// its own time, for the config's check alone).
/// Generates one schema.
type MakeSchema = fn() -> Value;

const SCHEMAS: [(&str, MakeSchema); 12] = [
    (WorkflowSession::SCHEMA, schema_of::<WorkflowSession>),
    (Task::SCHEMA, schema_of::<Task>),
    (TaskOverlay::SCHEMA, schema_of::<TaskOverlay>),
    (FixStrategy::SCHEMA, schema_of::<FixStrategy>),
    (IterationState::SCHEMA, schema_of::<IterationState>),
    (IterationFailures::SCHEMA, schema_of::<IterationFailures>),
    (TestResults::SCHEMA, schema_of::<TestResults>),
    (FixHistory::SCHEMA, schema_of::<FixHistory>),
    (ContextPackage::SCHEMA, schema_of::<ContextPackage>),
    (ArchiveManifest::SCHEMA, schema_of::<ArchiveManifest>),
    (Config::SCHEMA, schema_of::<Config>),
    (RunState::SCHEMA, schema_of::<RunState>),
];

/// The schema of every artifact, by name: with the event schema
/// (`engine::event::schema`), the source of `schemas/`.
pub fn all_schemas() -> Vec<(&'static str, Value)> {
    SCHEMAS.iter().map(|(name, make)| (*name, make())).collect()
}

/// The schema name for a file, judged by its name and place in a session.
/// (A `.task/*.json` without `id`, `title` and `meta` is a [`TaskOverlay`]; see
/// [`schema_for_value`].)
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
    let (key, make) = SCHEMAS.iter().find(|(n, _)| *n == name)?;
    let mut schema = make();
    sharpen_optionals(&mut schema);
    let compiled = jsonschema::validator_for(&schema).expect("generated schemas compile");
    let leaked: &'static jsonschema::Validator = Box::leak(Box::new(compiled));
    cache.insert(key, leaked);
    Some(leaked)
}

/// schemars spells `Option<T>` as `anyOf: [T, {"type": "null"}]`; a bad
/// value inside `T` then fails the `anyOf` as a whole, and the message is
/// the entire object followed by "is not valid under any of the schemas".
/// For validation only, rewrite it as `if: {"type": "null"}, else: T`,
/// which accepts exactly the same documents but reports `T`'s own errors
/// with their exact JSON pointer (`/context/fix_strategy/confidence_score:
/// "high" is not of type "number"`). The committed schemas stay as
/// generated.
fn sharpen_optionals(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let optional = match map.get("anyOf") {
                Some(Value::Array(branches)) if branches.len() == 2 => {
                    let is_null = |b: &Value| *b == serde_json::json!({"type": "null"});
                    match (is_null(&branches[0]), is_null(&branches[1])) {
                        (false, true) => Some(branches[0].clone()),
                        (true, false) => Some(branches[1].clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(inner) = optional {
                map.remove("anyOf");
                map.insert("if".into(), serde_json::json!({"type": "null"}));
                map.insert("else".into(), inner);
            }
            // Documented enum variants come as `oneOf` of `const`s, whose
            // failure says only "not valid under any of the schemas";
            // `enum` of the same values lists them.
            let consts: Option<Vec<Value>> = match map.get("oneOf") {
                Some(Value::Array(branches)) if !branches.is_empty() => {
                    branches.iter().map(|b| b.get("const").cloned()).collect()
                }
                _ => None,
            };
            if let Some(values) = consts {
                map.remove("oneOf");
                map.insert("enum".into(), Value::Array(values));
            }
            map.values_mut().for_each(sharpen_optionals);
        }
        Value::Array(items) => items.iter_mut().for_each(sharpen_optionals),
        _ => {}
    }
}

/// Longest schema message kept: some messages quote the whole offending
/// value, which may be megabytes.
const MAX_PROBLEM_MESSAGE: usize = 300;

fn short_message(mut message: String) -> String {
    if message.len() > MAX_PROBLEM_MESSAGE {
        let mut cut = MAX_PROBLEM_MESSAGE;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push('…');
    }
    message
}

/// The schema a document is checked against, given the one its path
/// names: a task file without `id`, `title` and `meta` is another tool's
/// status overlay,
/// and a manifest is checked in its array form.
pub fn schema_for_value(by_path: &'static str, value: &Value) -> &'static str {
    if by_path == Task::SCHEMA && task_overlay::is_overlay(value) {
        TaskOverlay::SCHEMA
    } else {
        by_path
    }
}

/// Whether a document is one its type writes ([`round_trips`]).
type RoundTrips = fn(&Value) -> bool;

/// Schemas whose documents skip the schema run when they are exactly what
/// their typed value writes back ([`written_by_type`]): the ones every
/// `wfx run` step and session opening reads, so that compiling a schema
/// (and, the first time, jsonschema's own draft 2020-12 meta-schema,
/// which it checks each schema against and no option turns off) is paid
/// only for a document another hand wrote (issue #30).
const TYPED: [(&str, RoundTrips); 3] = [
    (WorkflowSession::SCHEMA, round_trips::<WorkflowSession>),
    (Task::SCHEMA, round_trips::<Task>),
    (ContextPackage::SCHEMA, round_trips::<ContextPackage>),
];

fn round_trips<T: Artifact>(value: &Value) -> bool {
    written_by_type::<T>(value).is_some()
}

/// `value`'s typed parse, when `value` is exactly what it serialises back
/// to, with every number within its schema's bounds: then the schema, which
/// is generated from the same types, accepts it (the tests check this on
/// every mutation of real documents), and its run can be skipped. A hand
/// edit, an older writer's spelling or another tool's file seldom round
/// trips, and gets the full check with its exact messages.
fn written_by_type<T: Artifact>(value: &Value) -> Option<T> {
    let typed = T::deserialize(value).ok()?;
    let back = serde_json::to_value(&typed).ok()?;
    (typed.within_bounds() && back == *value).then_some(typed)
}

/// Validate a JSON value against the named schema. `file` is only used to
/// label the problems.
pub fn validate_value(schema: &str, file: &str, value: &Value) -> Vec<Problem> {
    if TYPED
        .iter()
        .any(|(name, round_trips)| *name == schema && round_trips(value))
    {
        return Vec::new();
    }
    schema_problems(schema, file, value)
}

/// The problems the compiled schema finds in `value`.
fn schema_problems(schema: &str, file: &str, value: &Value) -> Vec<Problem> {
    let Some(validator) = validator(schema) else {
        return vec![Problem::whole(file, format!("no schema named {schema}"))];
    };
    validator
        .iter_errors(value)
        .map(|e| Problem {
            file: file.to_string(),
            pointer: e.instance_path().to_string(),
            message: short_message(problem_message(&e)),
        })
        .collect()
}

/// The validator's message, except that a value outside an enum lists
/// every allowed value (the validator names two and "or N other
/// candidates", which leaves the reader guessing).
fn problem_message(e: &jsonschema::ValidationError<'_>) -> String {
    match e.kind() {
        jsonschema::error::ValidationErrorKind::Enum { options } => {
            let options: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(Value::to_string).collect())
                .unwrap_or_default();
            match options.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!(
                    "{} is not one of {} or {last}",
                    e.instance(),
                    rest.join(", ")
                ),
                _ => e.to_string(),
            }
        }
        _ => e.to_string(),
    }
}

/// Parse and validate an artifact from text: JSON syntax errors, schema
/// problems and type errors are all reported as [`Problem`]s.
pub fn parse_artifact<T: Artifact>(file: &str, text: &str) -> Result<T, Vec<Problem>> {
    let value: Value = serde_json::from_str(text).map_err(|e| vec![Problem::bad_json(file, &e)])?;
    parse_value(file, value)
}

/// [`parse_artifact`] of a document already parsed as JSON.
pub fn parse_value<T: Artifact>(file: &str, value: Value) -> Result<T, Vec<Problem>> {
    if TYPED.iter().any(|(name, _)| *name == T::SCHEMA)
        && let Some(typed) = written_by_type::<T>(&value)
    {
        return Ok(typed);
    }
    let problems = schema_problems(T::SCHEMA, file, &value);
    if !problems.is_empty() {
        return Err(problems);
    }
    serde_json::from_value(value).map_err(|e| vec![Problem::whole(file, e.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// Calls `visit` with every subschema of a Config-like schema and its
    /// key path from the root (`$ref`s followed, `anyOf`/`oneOf` branches
    /// at their parent's path, a map's values under `*`).
    fn walk_schema(root: &Value, visit: &mut dyn FnMut(&[String], &Value)) {
        fn walk(
            root: &Value,
            s: &Value,
            path: &mut Vec<String>,
            visit: &mut dyn FnMut(&[String], &Value),
        ) {
            if let Some(r) = s.get("$ref").and_then(Value::as_str) {
                let name = r.trim_start_matches("#/$defs/");
                return walk(root, &root["$defs"][name], path, visit);
            }
            visit(path, s);
            for branch in ["anyOf", "oneOf"] {
                for b in s
                    .get(branch)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    walk(root, b, path, visit);
                }
            }
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    path.push(k.clone());
                    walk(root, v, path, visit);
                    path.pop();
                }
            }
            if let Some(v) = s.get("additionalProperties").filter(|v| v.is_object()) {
                path.push("*".into());
                walk(root, v, path, visit);
                path.pop();
            }
        }
        walk(root, root, &mut Vec::new(), visit);
    }

    /// Every numeric bound of a schema: (key path, the bound, whether it is
    /// a maximum, whether the value is an integer).
    fn bounds(root: &Value) -> Vec<(Vec<String>, f64, bool, bool)> {
        let mut out = Vec::new();
        walk_schema(root, &mut |path, s| {
            let integer = s.get("type") == Some(&json!("integer"))
                || s.get("type") == Some(&json!(["integer", "null"]));
            for (key, is_max) in [("minimum", false), ("maximum", true)] {
                if let Some(b) = s.get(key).and_then(Value::as_f64) {
                    out.push((path.to_vec(), b, is_max, integer));
                }
            }
        });
        out
    }

    /// The key paths where a schema allows objects and arrays.
    fn shapes(root: &Value) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
        let mut out: (Vec<Vec<String>>, Vec<Vec<String>>) = (Vec::new(), Vec::new());
        walk_schema(root, &mut |path, s| {
            let types: Vec<&str> = match s.get("type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for (t, list) in [("object", &mut out.0), ("array", &mut out.1)] {
                if types.contains(&t) && !list.iter().any(|p| p == path) {
                    list.push(path.to_vec());
                }
            }
        });
        out
    }

    /// Objects and arrays only where the schema has them: the typed parse
    /// would take `[]` for a struct and `{"reject": null}` for an enum.
    #[test]
    fn config_shapes_are_the_schemas() {
        let schema = schema_of::<Config>();
        let (objects, arrays) = shapes(&schema);
        let owned = |paths: &[&[&str]]| -> Vec<Vec<String>> {
            let mut v: Vec<Vec<String>> = paths
                .iter()
                .map(|p| p.iter().map(|k| k.to_string()).collect())
                .collect();
            v.sort();
            v
        };
        let sorted = |mut v: Vec<Vec<String>>| {
            v.sort();
            v
        };
        assert_eq!(sorted(objects.clone()), owned(config::OBJECT_PATHS));
        assert_eq!(sorted(arrays), owned(config::ARRAY_PATHS));
        let accepts = |doc: &Value| {
            let by_schema = validate_value(Config::SCHEMA, "wfx.json", doc).is_empty();
            let typed = Config::deserialize(doc).is_ok_and(|c| Config::within_schema(doc, &c));
            assert_eq!(typed, by_schema, "typed parse and shapes on {doc}");
            by_schema
        };
        let nest = |path: &[String], leaf: Value| {
            path.iter().rev().fold(leaf, |doc, key| json!({ key: doc }))
        };
        for path in objects.iter().filter(|p| !p.iter().any(|k| k == "*")) {
            assert!(accepts(&nest(path, json!({}))), "{path:?}");
            assert!(!accepts(&nest(path, json!([]))), "{path:?}");
        }
        for doc in [
            json!({"cycle": {"test_edits": {"modify": {"reject": null}}}}),
            json!({"cycle": {"test_edits": {"modify": "reject"}}}),
            json!({"git": {"artifacts": {"all": null}}}),
            json!({"agents": {"definitions": {"a": {"preset": {"claude": null}}}}}),
            json!({"agents": {"definitions": {"a": []}}}),
            json!({"agents": {"definitions": {"a": {"command": ["x", ["y"]]}}}}),
            json!({"agents": {"definitions": {"a": {"command": "x", "args": ["--y"]}}}}),
            json!({"agents": {"fix": ["claude", "codex"], "analysis": []}}),
            json!({"agents": {"fix": {"claude": null}}}),
            json!({"test": {"command": ["pytest"]}}),
        ] {
            accepts(&doc);
        }
    }

    /// The keywords a schema uses anywhere (property names excluded).
    fn keywords(s: &Value, out: &mut std::collections::BTreeSet<String>) {
        let Some(map) = s.as_object() else { return };
        for (k, v) in map {
            out.insert(k.clone());
            match k.as_str() {
                "properties" | "$defs" => v
                    .as_object()
                    .into_iter()
                    .flatten()
                    .for_each(|(_, x)| keywords(x, out)),
                "anyOf" | "oneOf" | "allOf" => v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .for_each(|x| keywords(x, out)),
                "items" | "additionalProperties" => keywords(v, out),
                _ => {}
            }
        }
    }

    /// `Config::within_schema_ranges` after a typed parse accepts exactly
    /// what the compiled schema accepts (`Workspace::load_config` relies
    /// on it): every bound of the schema, just inside and just outside,
    /// and no keyword the typed parse and that check do not cover.
    #[test]
    fn schema_ranges_are_all_checked() {
        let schema = schema_of::<Config>();
        let mut used = std::collections::BTreeSet::new();
        keywords(&schema, &mut used);
        let covered = [
            "$defs",
            "$ref",
            "$schema",
            "additionalProperties",
            "anyOf",
            "const",
            "default",
            "description",
            "enum",
            "format",
            "items",
            "maximum",
            "minimum",
            "oneOf",
            "properties",
            "required",
            "title",
            "type",
        ];
        let uncovered: Vec<&String> = used
            .iter()
            .filter(|k| !covered.contains(&k.as_str()))
            .collect();
        assert!(
            uncovered.is_empty(),
            "keywords not covered by the typed parse: {uncovered:?}"
        );

        let bounds = bounds(&schema);
        assert!(bounds.len() >= 14, "{bounds:?}");
        for (path, bound, is_max, integer) in bounds {
            let step = if integer { 1.0 } else { 0.5 };
            let outside = if is_max { bound + step } else { bound - step };
            for (value, inside) in [(bound, true), (outside, false)] {
                let mut doc = if integer {
                    json!(value as i64)
                } else {
                    json!(value)
                };
                for key in path.iter().rev() {
                    doc = json!({ key: doc });
                }
                let by_schema = validate_value(Config::SCHEMA, "wfx.json", &doc).is_empty();
                let typed = serde_json::from_value::<Config>(doc.clone())
                    .is_ok_and(|c| c.within_schema_ranges());
                assert_eq!(by_schema, inside, "schema on {doc}");
                assert_eq!(typed, by_schema, "typed parse and ranges on {doc}");
            }
        }
    }

    fn task_with(fix_strategy: Value) -> Value {
        json!({"id": "IMPL-fix-1", "title": "t", "status": "pending",
               "meta": {"type": "test-fix-iteration"},
               "context": {"fix_strategy": fix_strategy}})
    }

    #[test]
    fn a_bad_field_inside_an_optional_object_is_named_exactly() {
        let strategy = json!({"approach": "a", "root_causes": [], "modification_points": [],
                              "test_execution": {"mode": "full_suite"}, "confidence_score": "high"});
        let problems = validate_value("task", "t.json", &task_with(strategy));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems[0].pointer,
            "/context/fix_strategy/confidence_score"
        );
        assert_eq!(problems[0].message, r#""high" is not of type "number""#);
    }

    #[test]
    fn optional_objects_still_accept_null_and_valid_values() {
        assert_eq!(
            validate_value("task", "t.json", &task_with(Value::Null)),
            vec![]
        );
        let strategy = json!({"approach": "a", "root_causes": [], "modification_points": [],
                              "test_execution": {"mode": "full_suite"}, "confidence_score": 0.5});
        assert_eq!(
            validate_value("task", "t.json", &task_with(strategy)),
            vec![]
        );
        let missing = json!({"approach": "a", "root_causes": [], "test_execution": {"mode": "full_suite"},
                             "confidence_score": 0.5});
        let problems = validate_value("task", "t.json", &task_with(missing));
        assert_eq!(problems[0].pointer, "/context/fix_strategy");
        assert_eq!(
            problems[0].message,
            r#""modification_points" is a required property"#
        );
    }

    #[test]
    fn a_value_outside_a_documented_enum_lists_the_choices() {
        let doc = json!({"cycle": {"test_edits": {"remove_or_skip": "allow-all"}}});
        let problems = validate_value("config", "wfx.json", &doc);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/cycle/test_edits/remove_or_skip");
        assert!(
            problems[0]
                .message
                .starts_with(r#""allow-all" is not one of "reject""#),
            "{}",
            problems[0].message
        );
        let ok = json!({"cycle": {"test_edits": {"remove_or_skip": "flag"}}});
        assert_eq!(validate_value("config", "wfx.json", &ok), vec![]);
    }

    /// Every real document of a [`TYPED`] schema under `fixtures/`, as
    /// wfx writes it back (its typed parse serialised).
    fn written_documents() -> Vec<(&'static str, Value)> {
        fn canonical<T: Artifact>(v: &Value) -> Option<Value> {
            T::deserialize(v)
                .ok()
                .map(|t| serde_json::to_value(t).unwrap())
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut out = Vec::new();
        for e in walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
        {
            let Some(by_path) = schema_for_path(e.path()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let schema = schema_for_value(by_path, &v);
            let written = match schema {
                "workflow-session" => canonical::<WorkflowSession>(&v),
                "task" => canonical::<Task>(&v),
                "context-package" => canonical::<ContextPackage>(&v),
                _ => None,
            };
            out.extend(written.map(|w| (schema, w)));
        }
        out
    }

    /// Every document one edit away from `doc`: each value replaced by
    /// another shape or an out-of-range number, each key removed, an
    /// unknown key added.
    fn mutations(doc: &Value) -> Vec<Value> {
        fn at(doc: &Value, path: &[String], edit: &dyn Fn(&mut Value)) -> Value {
            let mut out = doc.clone();
            let mut node = &mut out;
            for key in path {
                node = match node {
                    Value::Object(m) => m.get_mut(key).unwrap(),
                    Value::Array(a) => &mut a[key.parse::<usize>().unwrap()],
                    _ => unreachable!(),
                };
            }
            edit(node);
            out
        }
        fn paths(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            out.push(path.clone());
            let children: Vec<(String, &Value)> = match v {
                Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
                Value::Array(a) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v))
                    .collect(),
                _ => Vec::new(),
            };
            for (k, child) in children {
                path.push(k);
                paths(child, path, out);
                path.pop();
            }
        }
        let mut all = Vec::new();
        paths(doc, &mut Vec::new(), &mut all);
        let replacements = [
            json!(null),
            json!([]),
            json!({}),
            json!(""),
            json!("x"),
            json!(true),
            json!(-1),
            json!(-0.5),
            json!(0),
            json!(1.5),
            json!(2),
            json!(256),
            json!(4294967296u64),
            json!(["x"]),
            json!({"x": 1}),
            json!("2026-13-40"),
        ];
        let mut out = Vec::new();
        for path in &all {
            for r in &replacements {
                out.push(at(doc, path, &|n| *n = r.clone()));
            }
            out.push(at(doc, path, &|n| {
                if let Value::Object(m) = n {
                    m.insert("unknown_key".into(), json!([1]));
                }
            }));
            if let Some((last, parent)) = path.split_last() {
                out.push(at(doc, parent, &|n| match n {
                    Value::Object(m) => {
                        m.remove(last);
                    }
                    Value::Array(a) => {
                        a.remove(last.parse::<usize>().unwrap());
                    }
                    _ => {}
                }));
            }
        }
        out
    }

    /// Skipping the schema run for a document that round-trips through
    /// its type is sound only if the schema accepts every such document:
    /// checked on every real fixture and every edit of one.
    #[test]
    fn documents_skipping_the_schema_are_all_schema_valid() {
        let docs = written_documents();
        for schema in ["workflow-session", "task", "context-package"] {
            assert!(
                docs.iter().any(|(s, _)| *s == schema),
                "no fixture of {schema}"
            );
        }
        let (mut skipped, mut checked) = (0, 0);
        for (schema, doc) in &docs {
            let (_, round_trips) = TYPED.iter().find(|(n, _)| n == schema).unwrap();
            assert!(round_trips(doc), "{schema}: {doc}");
            for m in mutations(doc) {
                if round_trips(&m) {
                    skipped += 1;
                    let problems = schema_problems(schema, "f.json", &m);
                    assert!(problems.is_empty(), "{schema}: {problems:?} in {m}");
                } else {
                    checked += 1;
                }
            }
        }
        // Both ways are taken, many times each.
        assert!(skipped > 1000 && checked > 1000, "{skipped} {checked}");
    }

    /// Every numeric bound a [`TYPED`] schema has beyond its integer
    /// types' own (`minimum: 0` of an unsigned, 255 of a `u8`) is one
    /// `within_bounds` checks; the mutations above check it does.
    #[test]
    fn typed_schemas_bounds_are_the_ones_checked() {
        fn collect(v: &Value, at: &str, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => {
                    let format = m.get("format").and_then(Value::as_str).unwrap_or("");
                    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
                        if let Some(b) = m.get(key) {
                            let own =
                                (key == "minimum" && *b == json!(0) && format.starts_with("uint"))
                                    || (key == "maximum" && *b == json!(255) && format == "uint8");
                            if !own {
                                out.push(format!("{at}/{key}"));
                            }
                        }
                    }
                    for (k, x) in m {
                        collect(x, &format!("{at}/{k}"), out);
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| collect(x, at, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        for (name, _) in TYPED {
            let (_, make) = SCHEMAS.iter().find(|(n, _)| *n == name).unwrap();
            collect(&make(), name, &mut found);
        }
        found.sort();
        assert_eq!(
            found,
            [
                "context-package/$defs/Asset/properties/relevance/maximum",
                "context-package/$defs/Asset/properties/relevance/minimum",
                "context-package/$defs/ProjectType/properties/confidence/maximum",
                "context-package/$defs/ProjectType/properties/confidence/minimum",
                "task/$defs/FixStrategy/properties/confidence_score/maximum",
                "task/$defs/FixStrategy/properties/confidence_score/minimum",
            ]
        );
    }

    /// A [`TYPED`] schema uses no keyword beyond what a round trip
    /// through its type holds (and the bounds above): a `pattern` or
    /// `minLength` from a new `schemars` attribute must be checked too
    /// before its documents may skip the schema run.
    #[test]
    fn typed_schemas_use_only_keywords_a_round_trip_holds() {
        let held = [
            "$defs",
            "$ref",
            "$schema",
            "additionalProperties",
            "anyOf",
            "const",
            "default",
            "description",
            "enum",
            "format",
            "items",
            "maximum",
            "minimum",
            "oneOf",
            "properties",
            "required",
            "title",
            "type",
        ];
        for (name, _) in TYPED {
            let (_, make) = SCHEMAS.iter().find(|(n, _)| *n == name).unwrap();
            let mut used = std::collections::BTreeSet::new();
            keywords(&make(), &mut used);
            let other: Vec<&String> = used
                .iter()
                .filter(|k| !held.contains(&k.as_str()))
                .collect();
            assert!(other.is_empty(), "{name}: {other:?}");
        }
    }

    #[test]
    fn a_bad_document_of_a_typed_schema_keeps_its_messages() {
        let strategy = json!({"approach": "a", "root_causes": [], "modification_points": [],
                              "test_execution": {"mode": "full_suite"}, "confidence_score": 1.5});
        let problems = validate_value("task", "t.json", &task_with(strategy));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems[0].pointer,
            "/context/fix_strategy/confidence_score"
        );
        assert_eq!(
            problems[0].message,
            "1.5 is greater than the maximum of 1.0"
        );
    }

    #[test]
    fn messages_quoting_a_huge_value_are_cut() {
        let long = "x".repeat(10_000);
        let doc = json!({"id": "IMPL-001", "title": {"text": long}, "status": "pending",
                         "meta": {"type": "test-gen"}});
        let problems = validate_value("task", "t.json", &doc);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/title");
        assert_eq!(problems[0].message.chars().count(), 301);
        assert!(
            problems[0].message.ends_with("x…"),
            "{}",
            problems[0].message
        );
    }
}
