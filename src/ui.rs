//! The printer: human, JSON or quiet output, colour, and spinners that
//! appear only on a terminal.
//!
//! Rules: a command's result goes to stdout (as text, or as one JSON
//! document / JSON Lines with `--json`); progress and warnings go to stderr.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use serde::Serialize;

use crate::cli::{ColorChoice, GlobalArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Human,
    Json,
}

#[derive(Debug, Clone)]
pub struct Printer {
    pub mode: Mode,
    pub quiet: bool,
    pub verbose: bool,
    pub color: bool,
    pub progress: bool,
    /// Ring the terminal bell when wfx starts waiting for a person.
    pub bell: bool,
}

/// ANSI styles used for emphasis in human output.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    Bold,
    Green,
    Red,
    Yellow,
    Dim,
}

impl Printer {
    pub fn from_args(args: &GlobalArgs) -> Self {
        let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color_env && std::io::stdout().is_terminal(),
        };
        Printer {
            mode: if args.json { Mode::Json } else { Mode::Human },
            quiet: args.quiet,
            verbose: args.verbose,
            color,
            progress: !args.no_progress
                && !args.json
                && !args.quiet
                && std::io::stderr().is_terminal(),
            // On CI nobody is there to hear it (docs/ci.md).
            bell: !args.json
                && !args.quiet
                && !crate::ci::on_ci()
                && std::io::stderr().is_terminal()
                && bell_wanted(
                    std::env::var("TERM").ok().as_deref(),
                    std::env::var("WFX_BELL").ok().as_deref(),
                ),
        }
    }

    /// The terminal bell (BEL on stderr), when [`Printer::bell`] allows it.
    pub fn bell(&self) {
        if self.bell {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\x07");
            let _ = err.flush();
        }
    }

    /// A printer for tests and library callers: human text, no colour.
    pub fn plain() -> Self {
        Printer {
            mode: Mode::Human,
            quiet: false,
            verbose: false,
            color: false,
            progress: false,
            bell: false,
        }
    }

    pub fn is_json(&self) -> bool {
        self.mode == Mode::Json
    }

    /// The command's human result (stdout); silent in JSON mode.
    pub fn out(&self, text: impl AsRef<str>) {
        if self.mode == Mode::Human {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", text.as_ref());
        }
    }

    /// A progress line for people (stderr); silent with -q or --json.
    pub fn status(&self, text: impl AsRef<str>) {
        if !self.quiet && self.mode == Mode::Human {
            eprintln!("{}", text.as_ref());
        }
    }

    /// Detail shown with -v.
    pub fn detail(&self, text: impl AsRef<str>) {
        if self.verbose && self.mode == Mode::Human {
            eprintln!("{}", self.paint(Style::Dim, text.as_ref()));
        }
    }

    pub fn warn(&self, text: impl AsRef<str>) {
        eprintln!(
            "{} {}",
            self.paint(Style::Yellow, "warning:"),
            text.as_ref()
        );
    }

    pub fn error(&self, text: impl AsRef<str>) {
        eprintln!("{} {}", self.paint(Style::Red, "error:"), text.as_ref());
    }

    /// One JSON document on stdout (JSON mode only), buffered: stdout
    /// flushes at every newline, one `write` per line of pretty JSON
    /// (30,000 for 5,000 test results).
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) {
        if self.mode == Mode::Json {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let _ = serde_json::to_writer_pretty(&mut out, value);
            let _ = writeln!(out);
            let _ = out.flush();
        }
    }

    /// JSON already serialised (with its trailing newline), as [`Self::json`]
    /// prints it (JSON mode only).
    pub fn json_text(&self, text: &[u8]) {
        if self.mode == Mode::Json {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text);
            let _ = out.flush();
        }
    }

    /// One JSON Lines event whose fields (including `event`) are given
    /// (JSON mode only): the JSON Lines sink's output.
    pub fn event_fields(&self, fields: serde_json::Map<String, serde_json::Value>) {
        if self.mode != Mode::Json {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, &fields);
        let _ = writeln!(out);
        let _ = out.flush();
    }

    pub fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match style {
            Style::Bold => "1",
            Style::Green => "32",
            Style::Red => "31",
            Style::Yellow => "33",
            Style::Dim => "2",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// A spinner on stderr when it is a terminal and progress is allowed.
    pub fn spinner(&self, message: impl Into<String>) -> Spinner {
        if !self.progress {
            return Spinner(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(120));
        bar.set_message(message.into());
        Spinner(Some(bar))
    }

    /// A spinner for a test run and the hook that keeps its line current:
    /// `{message} — 12 passed, 1 failed, 0 skipped · 4.2 s, eta ~19 s`
    /// (DESIGN.md §10.7). No hook when no spinner is shown.
    pub fn test_spinner(
        &self,
        message: impl Into<String>,
    ) -> (Spinner, Option<crate::testing::ProgressHook>) {
        let message = message.into();
        let spinner = self.spinner(message.clone());
        let hook = spinner.handle().map(|bar| {
            Box::new(move |p: crate::testing::Progress| {
                bar.set_message(format!("{message} — {}", p.summary()));
            }) as crate::testing::ProgressHook
        });
        (spinner, hook)
    }
}

/// Whether a person's environment wants the bell: not on a dumb terminal
/// (`TERM=dumb`: Emacs shells, CI logs), not with `WFX_BELL=0`. `NO_COLOR`
/// is about colour and leaves the bell alone. A bell is a person's
/// preference, not a project's: an environment variable, not a key in
/// the committed `.workflow/wfx.json`.
pub fn bell_wanted(term: Option<&str>, wfx_bell: Option<&str>) -> bool {
    term != Some("dumb") && !matches!(wfx_bell, Some("0" | "false" | "no" | "off"))
}

/// A spinner that may not exist (not a terminal); cleared when dropped.
pub struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    /// A handle to update the spinner from another thread (e.g. live test
    /// counts from the output reader); `None` when no spinner is shown.
    pub fn handle(&self) -> Option<indicatif::ProgressBar> {
        self.0.clone()
    }

    pub fn set_message(&self, message: impl Into<String>) {
        if let Some(bar) = &self.0 {
            bar.set_message(message.into());
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// Render rows as a left-aligned text table with a header.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let fmt_row = |cells: Vec<&str>| {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        line.trim_end().to_string()
    };
    let mut out = vec![fmt_row(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| fmt_row(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bell_is_a_persons_choice() {
        for (term, var, want) in [
            (Some("xterm-256color"), None, true),
            (None, None, true),
            (Some("dumb"), None, false),
            (Some("xterm"), Some("0"), false),
            (Some("xterm"), Some("off"), false),
            (Some("xterm"), Some("1"), true),
        ] {
            assert_eq!(bell_wanted(term, var), want, "{term:?} {var:?}");
        }
    }
}
