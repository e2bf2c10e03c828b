//! The capture sink (tests): what the human and JSON Lines sinks would
//! print, kept in memory. Clones share one capture, so a test keeps a
//! handle while the run owns the sink.

use std::cell::RefCell;
use std::rc::Rc;

use super::{NotesOnce, Sink};
use crate::artifacts::Timestamp;
use crate::engine::event::{Event, EventLine};

/// What a test's sinks captured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captured {
    /// Progress lines as printed on stderr (warnings with `warning: `),
    /// and the lines said on stdout.
    pub human: Vec<String>,
    /// The JSON Lines, one value each.
    pub json: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Default)]
pub struct Capture {
    kept: Rc<RefCell<Captured>>,
    notes: Rc<RefCell<NotesOnce>>,
}

impl Capture {
    /// Everything captured so far (the capture starts over).
    pub fn take(&self) -> Captured {
        self.kept.take()
    }
}

impl Sink for Capture {
    fn event(&mut self, event: &Event, _at: Timestamp) {
        let plain = self.notes.borrow_mut().plain_line(event);
        let mut kept = self.kept.borrow_mut();
        if let Some(text) = &plain {
            kept.human.push(if event.is_warning() {
                format!("warning: {text}")
            } else {
                text.clone()
            });
        }
        if let Ok(v) = serde_json::to_value(EventLine::new(event, plain)) {
            kept.json.push(v);
        }
    }

    fn say(&mut self, lines: &[String]) {
        self.kept.borrow_mut().human.extend(lines.iter().cloned());
    }
}
