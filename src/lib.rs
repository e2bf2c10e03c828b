//! wfx: the test-fix workflow as a deterministic, resumable state machine on
//! disk. The binary is a thin shell over [`run`].

/// A unit enum whose variants are written as `Variant = "name"`: the name
/// is what `as_str` returns, `from_name` reads and `Display` prints and,
/// for an enum that derives serde, its serde name (and so its JSON schema
/// value), written once so they cannot differ; `ALL` lists the variants. `named_enum! { plain … }` is the same for
/// an enum without serde.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }
        named_enum!(@names $name $($variant = $text,)*);
    };
    (
        plain
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)*
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* $variant,)*
        }
        named_enum!(@names $name $($variant = $text,)*);
    };
    (@names $name:ident $($variant:ident = $text:literal,)*) => {
        #[allow(dead_code)]
        impl $name {
            /// Every variant, in the order written.
            pub const ALL: [$name; [$($text),*].len()] = [$($name::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The variant named `name`.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub mod agents;
pub mod artifacts;
pub mod ci;
pub mod cli;
pub mod commands;
pub mod cycle;
pub mod duration;
pub mod engine;
pub mod error;
pub mod fsx;
pub mod git;
pub mod markdown;
pub mod mcp;
pub mod money;
pub mod phases;
pub mod process;
pub mod project;
pub mod redact;
pub mod render;
pub mod report;
pub mod scan;
pub mod session;
pub mod testing;
pub mod ui;
pub mod workflow;

use clap::Parser;

pub use error::{Error, Exit, Result};

/// Version recorded in artifacts.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Parse the command line, run the command and return the process exit code.
pub fn run() -> i32 {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                Exit::Usage.code()
            } else {
                Exit::Success.code()
            };
            let _ = e.print();
            return code;
        }
    };
    let ui = ui::Printer::from_args(&cli.global);
    match commands::dispatch(cli, &ui) {
        Ok(exit) => exit.code(),
        Err(e) => {
            let exit = e.exit();
            if ui.is_json() {
                // Pauses and blocks are outcomes (a final `done` event),
                // never errors; Ctrl-C of a one-shot command is the one
                // error that exits 3.
                let kind = match exit {
                    Exit::Usage => "usage",
                    Exit::Paused => "interrupted",
                    _ => "internal",
                };
                let problems = match &e {
                    Error::Invalid(p) => serde_json::to_value(p).unwrap_or_default(),
                    _ => serde_json::Value::Array(vec![]),
                };
                ui.json(&serde_json::json!({
                    "error": { "kind": kind, "message": e.to_string(), "exit_code": exit.code(), "problems": problems }
                }));
            }
            ui.error(e.to_string());
            exit.code()
        }
    }
}
