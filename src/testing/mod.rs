//! The test runner layer (DESIGN.md §6.1): detect a project's test command,
//! run it (whole or a subset) through the process layer, parse what the
//! runner wrote, and build `test-results.json`.

pub mod detect;

pub use detect::{Detected, Framework, detect};
pub mod parse;
pub mod results;
