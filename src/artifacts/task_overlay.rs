//! A task file without `id`, `title` and `meta`: what Claude-Code-Workflow's `ccw session
//! task <session> <task> <status>` (and `ccw session … update`) leave
//! when no `.task/<task>.json` exists. CCW derives the path from the task
//! id and shallow-merges `{status, updated_at, status_history}` into
//! whatever is there, so next to a task file of another name (wfx 0.1's
//! `IMPL-001.3-validation.json`) it creates a stub holding only those.
//!
//! wfx reads such a stub as a *status overlay* for the task named by its
//! file stem (DESIGN.md §10.6, docs/interop.md): it never makes the
//! session unreadable, its status applies to that task, and the next wfx
//! command that writes the session folds it into the task's file, which
//! then takes the `<id>.json` name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::task::{StatusChange, Task, TaskStatus};
use super::{Extra, Timestamp};

/// One entry of an overlay's `status_history`. CCW writes `from:
/// "unknown"` when it found no task to read the old status from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OverlayChange {
    #[serde(default)]
    pub from: Option<String>,
    pub to: TaskStatus,
    pub changed_at: Timestamp,
    #[serde(default)]
    pub reason: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskOverlay {
    #[serde(default)]
    pub status: Option<TaskStatus>,
    #[serde(default)]
    pub status_history: Vec<OverlayChange>,
    #[serde(default)]
    pub updated_at: Option<Timestamp>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Whether a `.task/*.json` document is an overlay: an object with none of
/// a task's identity (`id`, `title`, `meta`). A file that keeps its title
/// or meta but lost its id is a damaged task, reported as such.
pub fn is_overlay(doc: &serde_json::Value) -> bool {
    doc.as_object()
        .is_some_and(|o| !["id", "title", "meta"].iter().any(|k| o.contains_key(*k)))
}

/// Top-level fields of a task that an overlay never replaces.
const TASK_FIELDS: [&str; 8] = [
    "id",
    "title",
    "status",
    "status_history",
    "meta",
    "context",
    "flow_control",
    "result",
];

impl TaskOverlay {
    /// When the overlay was written: its `updated_at`, else its last
    /// history entry.
    pub fn written_at(&self) -> Option<Timestamp> {
        self.updated_at
            .or_else(|| self.status_history.iter().map(|h| h.changed_at).max())
    }

    /// Apply the overlay to `task`, unless the task changed status after
    /// the overlay was written (then the overlay is stale and wfx's own
    /// record stands). History entries the task already has are not added
    /// twice, so applying an overlay again changes nothing. Returns
    /// whether it applied.
    pub fn apply(&self, task: &mut Task) -> bool {
        let last_own = task.status_history.iter().map(|h| h.changed_at).max();
        if let (Some(own), Some(ours)) = (last_own, self.written_at())
            && own > ours
        {
            return false;
        }
        let mut current = task.status;
        for change in &self.status_history {
            let known = task
                .status_history
                .iter()
                .any(|h| h.changed_at == change.changed_at && h.to == change.to);
            if !known {
                let from = change
                    .from
                    .as_deref()
                    .and_then(|f| serde_json::from_value(serde_json::json!(f)).ok())
                    .unwrap_or(current);
                task.status_history.push(StatusChange {
                    from,
                    to: change.to,
                    changed_at: change.changed_at,
                    reason: if change.reason.is_empty() {
                        "set by another tool".into()
                    } else {
                        change.reason.clone()
                    },
                });
            }
            current = change.to;
        }
        task.status = self.status.unwrap_or(current);
        if let Some(at) = self.updated_at {
            task.extra
                .insert("updated_at".into(), serde_json::json!(at.to_rfc3339()));
        }
        for (k, v) in &self.extra {
            if !TASK_FIELDS.contains(&k.as_str()) {
                task.extra.insert(k.clone(), v.clone());
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(history: serde_json::Value) -> Task {
        serde_json::from_value(json!({
            "id": "IMPL-001.3", "title": "Validate", "status": "pending",
            "status_history": history, "meta": {"type": "code-validation"}
        }))
        .unwrap()
    }

    /// Exactly what `ccw session task WFS-x IMPL-001.3 completed` writes
    /// when it finds no `.task/IMPL-001.3.json` (ccw/src/commands/session.ts).
    fn ccw_stub() -> TaskOverlay {
        serde_json::from_value(json!({
            "status": "completed",
            "updated_at": "2026-06-18T07:03:37.123Z",
            "status_history": [{"from": "unknown", "to": "completed",
                                "changed_at": "2026-06-18T07:03:37.123Z"}]
        }))
        .unwrap()
    }

    #[test]
    fn a_ccw_stub_sets_the_status_and_names_the_old_one() {
        let mut t = task(json!([]));
        assert!(ccw_stub().apply(&mut t));
        assert_eq!(t.status, TaskStatus::Completed);
        assert_eq!(t.status_history.len(), 1);
        assert_eq!(t.status_history[0].from, TaskStatus::Pending);
        assert_eq!(t.status_history[0].reason, "set by another tool");
        assert_eq!(t.extra["updated_at"], "2026-06-18T07:03:37.123+00:00");
        // Applying it again changes nothing.
        let before = t.clone();
        assert!(ccw_stub().apply(&mut t));
        assert_eq!(t, before);
    }

    #[test]
    fn a_stale_stub_does_not_undo_a_later_change() {
        let mut t = task(json!([{"from": "pending", "to": "in_progress",
                                  "changed_at": "2026-06-19T00:00:00Z", "reason": "wfx"}]));
        t.status = TaskStatus::InProgress;
        assert!(!ccw_stub().apply(&mut t));
        assert_eq!(t.status, TaskStatus::InProgress);
    }

    #[test]
    fn only_a_file_without_id_title_and_meta_is_an_overlay() {
        assert!(is_overlay(&json!({"status": "completed"})));
        assert!(is_overlay(&json!({})));
        assert!(!is_overlay(
            &json!({"title": "t", "status": "pending", "meta": {}})
        ));
        assert!(!is_overlay(&json!({"id": "IMPL-1"})));
        assert!(!is_overlay(&json!([])));
    }

    #[test]
    fn cancelled_is_kept_as_written() {
        let mut t = task(json!([]));
        let stub: TaskOverlay = serde_json::from_value(json!({"status": "cancelled"})).unwrap();
        assert!(stub.apply(&mut t));
        assert_eq!(t.status, TaskStatus::Cancelled);
        assert!(t.status.is_done());
        assert_eq!(serde_json::to_value(&t).unwrap()["status"], "cancelled");
    }
}
