//! The run-log sink: the session's `.process/run.log`, one timestamped
//! line per event, plus bookkeeping notes.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{NotesOnce, Sink};
use crate::artifacts::Timestamp;
use crate::engine::event::Event;

#[derive(Debug, Default)]
pub struct RunLog {
    /// `None`: no run log (yet).
    path: Option<PathBuf>,
    notes: NotesOnce,
}

impl RunLog {
    pub fn new(path: Option<PathBuf>) -> RunLog {
        RunLog {
            path,
            notes: NotesOnce::default(),
        }
    }

    fn append(&self, text: &str, at: Timestamp) {
        // The run log is a convenience for people: never worth failing a
        // step for (a full disk shows up at the next state commit).
        let Some(path) = &self.path else { return };
        // Not once the session moved away (archived): its directory is not
        // made again for a log line.
        if !path.parent().is_some_and(Path::is_dir) {
            return;
        }
        if let Ok(mut f) = crate::fsx::append(path) {
            let _ = writeln!(
                f,
                "{} {text}",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
        }
    }
}

/// The run log's line of an event, if any: the line people read, and a
/// short line for the pause and the end, which have none.
fn log_line(plain: Option<String>, event: &Event) -> Option<String> {
    Some(match (plain, event) {
        (Some(t), Event::Warning { .. }) => format!("warning: {t}"),
        (Some(t), _) => t,
        (None, Event::Paused { message, .. }) => {
            format!("paused: {}", message.lines().next().unwrap_or_default())
        }
        (None, Event::Done(d)) => format!(
            "done: {} (exit {})",
            d.status.map_or("-", |s| s.as_str()),
            d.exit_code
        ),
        (None, _) => return None,
    })
}

impl Sink for RunLog {
    fn event(&mut self, event: &Event, at: Timestamp) {
        let plain = self.notes.plain_line(event);
        if self.path.is_none() {
            return;
        }
        if let Some(text) = log_line(plain, event) {
            self.append(&text, at);
        }
    }

    fn note(&mut self, text: &str, at: Timestamp) {
        self.append(text, at);
    }
}
