//! Progress of phase 5: one line per event a person cares about on
//! stderr, or one JSON Lines event per line on stdout with `--json`.
//! Spinners only appear on a terminal (the printer decides).

use std::time::Duration;

use serde_json::{Value, json};

use crate::ui::{Printer, Style};

/// Prints the loop's events for people or machines.
pub struct Reporter<'a> {
    pub ui: &'a Printer,
}

impl<'a> Reporter<'a> {
    /// One event: `line` for people (stderr), `{"event": name, ...fields}`
    /// for `--json` (stdout).
    pub fn event(&self, name: &str, line: impl AsRef<str>, fields: Value) {
        if self.ui.is_json() {
            self.ui.event(name, fields);
        } else if !line.as_ref().is_empty() {
            self.ui.status(line);
        }
    }

    /// A warning (stderr in both modes; also an event with `--json`).
    pub fn warn(&self, text: impl AsRef<str>) {
        if self.ui.is_json() {
            self.ui
                .event("warning", json!({ "message": text.as_ref() }));
        } else {
            self.ui.warn(text);
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.ui.paint(Style::Bold, text)
    }

    pub fn green(&self, text: &str) -> String {
        self.ui.paint(Style::Green, text)
    }

    pub fn red(&self, text: &str) -> String {
        self.ui.paint(Style::Red, text)
    }

    /// A spinner for a long child process (terminal only), cleared on drop.
    pub fn spinner(&self, message: impl Into<String>) -> crate::ui::Spinner {
        self.ui.spinner(message)
    }
}

/// `41 s`, `1.2 s`, `350 ms`, `2 min 5 s`: durations as people read them.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 10_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 120_000 {
        format!("{} s", (ms as f64 / 1000.0).round() as u64)
    } else {
        let s = (ms / 1000) as u64;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// `$0.12` for a reported cost.
pub fn cost_text(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!(" ${c:.2}"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_costs() {
        assert_eq!(duration_text(Duration::from_millis(350)), "350 ms");
        assert_eq!(duration_text(Duration::from_millis(1234)), "1.2 s");
        assert_eq!(duration_text(Duration::from_millis(41_200)), "41 s");
        assert_eq!(duration_text(Duration::from_secs(125)), "2 min 5 s");
        assert_eq!(cost_text(Some(0.123)), " $0.12");
        assert_eq!(cost_text(None), "");
    }
}
