//! The human sink: one line per event on stderr, coloured on a terminal;
//! warnings as `warning: …`; the bell when a run starts waiting for a
//! person.

use super::displayer;
use super::{NotesOnce, Sink};
use crate::artifacts::Timestamp;
use crate::engine::event::Event;
use crate::ui::Printer;

pub struct Human<'a> {
    ui: &'a Printer,
    notes: NotesOnce,
}

impl<'a> Human<'a> {
    pub fn new(ui: &'a Printer) -> Human<'a> {
        Human {
            ui,
            notes: NotesOnce::default(),
        }
    }
}

impl Sink for Human<'_> {
    fn event(&mut self, event: &Event, _at: Timestamp) {
        let shown = self.notes.shown(event);
        if event.is_warning() {
            if let Some(text) = displayer::line(&shown, &displayer::plain) {
                self.ui.warn(text);
            }
        } else if let Some(text) = displayer::line(&shown, &|s, t| self.ui.paint(s, t)) {
            self.ui.status(text);
        }
        if let Event::Paused { reason, .. } = event
            && reason.needs_person()
        {
            self.ui.bell();
        }
    }

    fn say(&mut self, lines: &[String]) {
        for line in lines {
            self.ui.out(line);
        }
    }
}
