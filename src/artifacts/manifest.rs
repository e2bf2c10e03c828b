//! `archives/manifest.json`: one entry per archived session.
//!
//! The file is shared with Claude-Code-Workflow (CCW), whose
//! `/workflow:session:complete` reads it as a JSON **array** and appends
//! `{session_id, description, archived_at, archive_path, metrics, tags,
//! lessons}` (DESIGN.md §10.6). wfx writes that array, adds its own fields
//! to its own entries (`type`, `status`, `metrics.final_pass_rate`, …),
//! and reads its first release's `{"sessions": [...]}` object too, turning
//! it into the array on its next write. Entries other tools wrote are kept
//! exactly as they are: wfx only ever appends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Extra;

/// One archived session. Everything but `session_id` is optional, and
/// values are read as other tools write them (an agent fills CCW's
/// entries), so a hand-made entry never blocks wfx from archiving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArchiveEntry {
    pub session_id: String,
    #[serde(default)]
    pub description: String,
    /// RFC 3339 in wfx's entries; another tool's text is kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// Relative to the project root (`.workflow/archives/<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_path: Option<String>,
    /// CCW: `duration_hours`, `tasks_completed`, `summaries_generated`,
    /// `review_metrics`; wfx adds `tasks_total`, `iterations`,
    /// `final_pass_rate`.
    #[serde(default)]
    pub metrics: Extra,
    #[serde(default)]
    pub tags: Vec<Value>,
    /// CCW: `{successes, challenges, watch_patterns}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lessons: Option<Value>,
    /// wfx: `test` or `run`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// wfx: the session's final status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ArchiveEntry {
    /// `metrics.final_pass_rate`, when a number.
    pub fn final_pass_rate(&self) -> Option<f64> {
        self.metrics.get("final_pass_rate").and_then(Value::as_f64)
    }
}

/// The manifest as it is written: a JSON array of entries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ArchiveManifest(pub Vec<ArchiveEntry>);

impl ArchiveManifest {
    pub fn find(&self, session_id: &str) -> Option<&ArchiveEntry> {
        self.0.iter().find(|e| e.session_id == session_id)
    }
}

/// What [`normalize`] made of a manifest document.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The array form, to validate and to write.
    pub value: Value,
    /// Top-level fields of an old `{sessions: [...]}` object other than
    /// `sessions`, which an array has no place for.
    pub dropped: Extra,
    /// The document was the old object shape.
    pub legacy: bool,
}

/// The array form of a manifest document: an array is returned as it is;
/// wfx 0.1's `{"sessions": [...]}` becomes the array of its entries, each
/// with `id` renamed to `session_id`. Anything else is returned unchanged
/// (and fails validation with a precise pointer).
pub fn normalize(doc: Value) -> Normalized {
    let Value::Object(mut map) = doc else {
        return Normalized {
            value: doc,
            dropped: Extra::new(),
            legacy: false,
        };
    };
    match map.remove("sessions") {
        Some(Value::Array(entries)) => {
            let entries = entries
                .into_iter()
                .map(|e| match e {
                    Value::Object(mut o) if !o.contains_key("session_id") => {
                        if let Some(id) = o.remove("id") {
                            o.insert("session_id".into(), id);
                        }
                        Value::Object(o)
                    }
                    other => other,
                })
                .collect();
            Normalized {
                value: Value::Array(entries),
                dropped: map,
                legacy: true,
            }
        }
        other => {
            if let Some(v) = other {
                map.insert("sessions".into(), v);
            }
            Normalized {
                value: Value::Object(map),
                dropped: Extra::new(),
                legacy: false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_array_is_kept_as_written() {
        let doc = json!([{"session_id": "WFS-a", "metrics": {"tasks_completed": "5"}}]);
        let n = normalize(doc.clone());
        assert_eq!(n.value, doc);
        assert!(!n.legacy);
        let m: ArchiveManifest = serde_json::from_value(n.value).unwrap();
        assert_eq!(m.find("WFS-a").unwrap().metrics["tasks_completed"], "5");
    }

    #[test]
    fn the_old_object_becomes_the_array() {
        let doc = json!({"sessions": [{"id": "WFS-a", "archive_path": ".workflow/archives/WFS-a",
                                       "metrics": {"final_pass_rate": 100.0}}],
                         "note": "kept aside"});
        let n = normalize(doc);
        assert!(n.legacy);
        assert_eq!(
            n.dropped,
            json!({"note": "kept aside"}).as_object().unwrap().clone()
        );
        let m: ArchiveManifest = serde_json::from_value(n.value).unwrap();
        assert_eq!(m.0.len(), 1);
        assert_eq!(m.0[0].session_id, "WFS-a");
        assert_eq!(m.0[0].final_pass_rate(), Some(100.0));
        assert!(!m.0[0].extra.contains_key("id"));
    }

    #[test]
    fn other_shapes_are_left_for_validation_to_reject() {
        for doc in [json!({"sessions": 1}), json!("x"), json!({"archives": []})] {
            let n = normalize(doc.clone());
            assert_eq!(n.value, doc);
            assert!(!n.legacy);
        }
    }
}
