//! The JSON Lines sink (`--json`): one object per event on stdout, its
//! name in `event`, plus `message`, the line people read.

use super::{NotesOnce, Sink};
use crate::artifacts::Timestamp;
use crate::engine::event::{Event, EventLine};
use crate::ui::Printer;

pub struct JsonLines<'a> {
    ui: &'a Printer,
    notes: NotesOnce,
}

impl<'a> JsonLines<'a> {
    pub fn new(ui: &'a Printer) -> JsonLines<'a> {
        JsonLines {
            ui,
            notes: NotesOnce::default(),
        }
    }
}

impl Sink for JsonLines<'_> {
    fn event(&mut self, event: &Event, _at: Timestamp) {
        let line = EventLine::new(event, self.notes.plain_line(event));
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&line) {
            self.ui.event_fields(fields);
        }
    }
}
