//! Where events go (DESIGN.md §10.1): every [`Sink`] gets every event.
//! The human sink prints lines for people on stderr, the JSON Lines sink
//! prints `--json` events on stdout, the run log appends timestamped lines
//! to the session's `.process/run.log`, and the capture sink keeps what
//! the first two would print, for tests. [`Sinks`] sends each event to
//! its sinks in turn. Lines are rendered by the [`displayer`], apart from
//! the data types (nextest's reporter split: displayer, structured,
//! aggregator).

mod capture;
pub mod displayer;
mod human;
mod json;
mod run_log;

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::PathBuf;

pub use capture::{Capture, Captured};
pub use human::Human;
pub use json::JsonLines;
pub use run_log::RunLog;

use super::event::Event;
use crate::artifacts::Timestamp;
use crate::ui::Printer;

/// One place events go.
pub trait Sink {
    /// One event, as it happened at `at`.
    fn event(&mut self, event: &Event, at: Timestamp);

    /// Lines of a command's result for people (stdout), told before the
    /// run ends; only sinks for people keep them.
    fn say(&mut self, _lines: &[String]) {}

    /// A line of bookkeeping for the run log only.
    fn note(&mut self, _text: &str, _at: Timestamp) {}
}

/// Every sink of a run: the one for the printer's mode (people or JSON
/// Lines; or a capture) and the session's run log once it is known.
pub struct Sinks<'a> {
    ui: &'a Printer,
    to: Vec<Box<dyn Sink + 'a>>,
    run_log: RunLog,
}

impl<'a> Sinks<'a> {
    /// Lines for people, or JSON Lines with `--json`.
    pub fn new(ui: &'a Printer) -> Sinks<'a> {
        let to: Box<dyn Sink + 'a> = if ui.is_json() {
            Box::new(JsonLines::new(ui))
        } else {
            Box::new(Human::new(ui))
        };
        Sinks::to(ui, vec![to])
    }

    /// These sinks (none: only the run log, once set).
    pub fn to(ui: &'a Printer, to: Vec<Box<dyn Sink + 'a>>) -> Sinks<'a> {
        Sinks {
            ui,
            to,
            run_log: RunLog::default(),
        }
    }

    /// Sinks that keep everything in `capture` (tests).
    pub fn capture(ui: &'a Printer, capture: &Capture) -> Sinks<'a> {
        Sinks::to(ui, vec![Box::new(capture.clone())])
    }

    /// The printer, for spinners while an effect runs.
    pub fn printer(&self) -> &Printer {
        self.ui
    }

    /// Append every event to this file too (`None`: no run log).
    pub fn set_run_log(&mut self, path: Option<PathBuf>) {
        self.run_log = RunLog::new(path);
    }

    /// Lines of a command's result for people (stdout; nothing with
    /// `--json`, whose events said it), told before the run ends.
    pub fn say(&mut self, lines: &[String]) {
        self.to.iter_mut().for_each(|s| s.say(lines));
    }

    /// A line for the run log only (bookkeeping people may look up).
    pub fn note(&mut self, text: &str, at: Timestamp) {
        self.run_log.note(text, at);
    }

    /// Send one event to every sink.
    pub fn emit(&mut self, event: &Event, at: Timestamp) {
        for sink in &mut self.to {
            sink.event(event, at);
        }
        self.run_log.event(event, at);
    }
}

/// Notes of runs already shown to people: a note that holds for every
/// subset run (doctests cannot be filtered exactly) is said once. Every
/// sink keeps its own; they all see the same events.
#[derive(Debug, Default)]
pub struct NotesOnce(HashSet<String>);

impl NotesOnce {
    /// The event as people read it: a run without the notes said before.
    pub fn shown<'e>(&mut self, event: &'e Event) -> Cow<'e, Event> {
        match event {
            Event::Run(r) if !r.notes.is_empty() => {
                let mut r = r.clone();
                r.notes.retain(|n| self.0.insert(n.clone()));
                Cow::Owned(Event::Run(r))
            }
            _ => Cow::Borrowed(event),
        }
    }

    /// The uncoloured line of the event as people read it.
    pub fn plain_line(&mut self, event: &Event) -> Option<String> {
        displayer::line(&self.shown(event), &displayer::plain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::test_results::Scope;
    use crate::engine::event::RunEvent;

    /// A note that holds for every subset run is said to people once; the
    /// JSON events keep it on every run.
    #[test]
    fn a_run_note_is_said_once() {
        let ui = crate::ui::Printer::plain();
        let capture = Capture::default();
        let mut sinks = Sinks::capture(&ui, &capture);
        let note = "doctest names cannot be filtered exactly through cargo".to_string();
        for run in [2, 3, 4] {
            let event = Event::Run(RunEvent {
                iteration: 2,
                run,
                scope: Scope::Affected,
                pass_rate: 84.6,
                previous_pass_rate: None,
                change: None,
                total: 13,
                passed: 11,
                failed: 2,
                skipped: 0,
                new_failures: Vec::new(),
                result: None,
                duration_ms: 500,
                command: "cargo test".into(),
                label: "tier 1".into(),
                notes: if run == 4 {
                    vec!["another note".into(), note.clone()]
                } else {
                    vec![note.clone()]
                },
                sealed_commit: None,
            });
            sinks.emit(&event, chrono::Utc::now());
        }
        let said = capture.take();
        assert_eq!(
            said.human,
            [
                format!("Iteration 2 · 84.6% · 2 failing · tier 1 500 ms · note: {note}"),
                "Iteration 2 · 84.6% · 2 failing · tier 1 500 ms".to_string(),
                "Iteration 2 · 84.6% · 2 failing · tier 1 500 ms · note: another note".to_string(),
            ]
        );
        for json in &said.json {
            assert!(
                json["notes"]
                    .as_array()
                    .unwrap()
                    .contains(&note.clone().into()),
                "{json}"
            );
        }
    }
}
