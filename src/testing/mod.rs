//! The test runner layer (DESIGN.md §6.1): detect a project's test command,
//! run it (whole or a subset) through the process layer, parse what the
//! runner wrote, and build `test-results.json`.
//!
//! - [`detect`]: which command and framework a project uses.
//! - [`program`]: the program a test command needs on `PATH`, one check
//!   for every command that runs tests.
//! - [`parse`]: one pure parser per output format.
//! - [`id`]: test identity — unique, stable ids (DESIGN.md §10.4).
//! - [`results`]: parsed cases → `TestResults` (zero-tests rules, layers,
//!   criticality), [`merge`] of a subset over the last full run, flakiness.
//! - [`retest`]: the retest tiers (failed → affected → full), merging a
//!   tier with escalation to the full suite, related-tests queries.
//! - [`select`]: the runner's own subset filter, placed where the runner
//!   reads it (package scripts included).
//! - [`live`]: live counts and elapsed time for the progress line.
//! - [`timings`]: the last run's time, for the progress line's estimate.
//! - [`coverage`]: readers of coverage reports other tools wrote (lcov,
//!   Cobertura, istanbul's summary).
//! - [`run`]: the effectful part: run, read the report, build the results.

pub mod coverage;
pub mod detect;
pub mod id;
pub mod infra;
pub mod live;
pub mod parse;
pub mod program;
pub mod results;
pub mod retest;
pub mod run;
pub mod select;
pub mod timings;

pub use detect::{Detected, Framework, detect};
pub use live::{Progress, ProgressHook};
pub use results::{mark_flaky, merge};
pub use retest::{NextRun, Outcome, RetestInput, Tier, TierResult, merge_tier};
pub use run::{RunRequest, run_tests};
pub use select::filter_command;
