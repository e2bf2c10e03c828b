//! Whose session a `WFS-…` directory is. Claude-Code-Workflow (CCW) and
//! its successors make sessions in the same `.workflow/active/` and
//! `archives/` (DESIGN.md §10.6). wfx lists those *foreign* sessions,
//! reads them as sources in session mode, and otherwise leaves them
//! alone: it never picks one implicitly, never validates one against its
//! own schemas unasked, never writes into one.

use serde::Serialize;
use serde_json::Value;

use super::layout::SESSION_GITIGNORE;
use super::{SessionRef, Workspace, store};
use crate::artifacts::Timestamp;

/// Who made a session directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    Wfx,
    Foreign,
}

/// The first line of the `.gitignore` wfx writes into every session before
/// anything else: it marks a wfx session whose `workflow-session.json` is
/// missing or damaged.
fn gitignore_marker() -> &'static str {
    SESSION_GITIGNORE.lines().next().unwrap_or_default()
}

/// Owner by `workflow-session.json`'s content: wfx always writes
/// `wfx_version`; no other tool does. `None`: no readable JSON object.
pub fn owner_of(doc: &Value) -> Option<Owner> {
    let obj = doc.as_object()?;
    Some(if obj.contains_key("wfx_version") {
        Owner::Wfx
    } else {
        Owner::Foreign
    })
}

/// What a person needs to recognise a foreign session, read leniently
/// from whichever names its tool uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ForeignSummary {
    /// `type`, else `workflow_type`, else `?`.
    pub kind: String,
    pub status: String,
    /// `description`, else `project`, else `title`.
    pub description: String,
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
}

fn text(doc: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .filter_map(|k| doc.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map(str::to_string)
}

fn time(doc: &Value, keys: &[&str]) -> Option<Timestamp> {
    keys.iter()
        .filter_map(|k| doc.get(*k).and_then(Value::as_str))
        .find_map(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// The summary of a foreign `workflow-session.json` (CCW writes
/// `{session_id, project, status, type, created_at}`; older sessions
/// `workflow_type` without `type`; some none at all).
pub fn summarize(doc: Option<&Value>) -> ForeignSummary {
    let empty = Value::Null;
    let doc = doc.unwrap_or(&empty);
    ForeignSummary {
        kind: text(doc, &["type", "workflow_type"]).unwrap_or_else(|| "?".into()),
        status: text(doc, &["status"]).unwrap_or_else(|| "-".into()),
        description: text(doc, &["description", "project", "title"]).unwrap_or_default(),
        created_at: time(doc, &["created_at", "initialized_at", "timestamp"]),
        updated_at: time(doc, &["updated_at", "created_at"]),
    }
}

impl Workspace {
    /// `workflow-session.json` as JSON, when it exists and parses.
    pub(crate) fn session_doc(&self, s: &SessionRef) -> Option<Value> {
        let path = s.paths.session_json();
        let text = store::read_text(&path, &self.rel(&path)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Who made the session: its `workflow-session.json` says; a session
    /// without a readable one is wfx's when it has wfx's `.gitignore`
    /// (a damaged wfx session, which `wfx validate` must report), else
    /// foreign.
    pub fn owner(&self, s: &SessionRef) -> Owner {
        if let Some(owner) = self.session_doc(s).as_ref().and_then(owner_of) {
            return owner;
        }
        let marked = std::fs::read_to_string(s.paths.gitignore())
            .is_ok_and(|t| t.lines().next() == Some(gitignore_marker()));
        if marked { Owner::Wfx } else { Owner::Foreign }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owner_table() {
        for (doc, want) in [
            (
                json!({"session_id": "WFS-a", "wfx_version": "0.1.0", "type": "test"}),
                Some(Owner::Wfx),
            ),
            // CCW's /workflow:session:start, also for its own test sessions.
            (
                json!({"session_id": "WFS-a", "project": "x", "status": "planning", "type": "test"}),
                Some(Owner::Foreign),
            ),
            (
                json!({"workflow_type": "implementation"}),
                Some(Owner::Foreign),
            ),
            (json!({}), Some(Owner::Foreign)),
            (json!([1]), None),
            (json!("x"), None),
        ] {
            assert_eq!(owner_of(&doc), want, "{doc}");
        }
    }

    #[test]
    fn foreign_summaries_read_every_tool_s_names() {
        let s = summarize(Some(
            &json!({"session_id": "WFS-a", "project": "implement OAuth2 auth",
            "status": "planning", "type": "workflow", "created_at": "2024-12-04T08:00:00Z"}),
        ));
        assert_eq!(s.kind, "workflow");
        assert_eq!(s.status, "planning");
        assert_eq!(s.description, "implement OAuth2 auth");
        assert_eq!(s.created_at, s.updated_at);
        assert!(s.created_at.is_some());
        let s = summarize(Some(
            &json!({"workflow_type": "implementation", "description": "d",
            "created_at": "not a time"}),
        ));
        assert_eq!(
            (s.kind.as_str(), s.status.as_str()),
            ("implementation", "-")
        );
        assert_eq!(s.created_at, None);
        assert_eq!(summarize(None).kind, "?");
    }
}
