//! The one engine under both front ends (DESIGN.md §10.1).
//!
//! `wfx test-cycle-execute` (the `cycle` module) and `wfx run` (the
//! `workflow` module) are two pure *machines* over typed state; the
//! engine names neither:
//! [`Machine::next`] says what to do, [`Machine::observe`] folds in what
//! happened. Only the [`driver`] performs effects, all through [`Ports`]
//! (tests, agents, git, scans, shell, the session transaction), commits
//! each step durably ([`txn`]) and sends one [`Event`] stream to three
//! sinks (people, JSON Lines, the session's run log). Pause, block and
//! completion are [`Ending`]s with their exit code, never errors; the pause
//! policy and the cost cap are in [`policy`], the same for both machines.
//!
//! - [`step`]: `Step`, `Effect`, `Observation` and the requests.
//! - [`ports`]: the `Ports` trait; [`real`]: the real one.
//! - [`event`]: `Event`, data only ([`phase_event`]: the planning's);
//!   [`sink`]: the `Sink` trait, its human, JSON Lines, run-log and
//!   capture sinks, and the displayer that renders the lines people read;
//!   the one duration formatter is `crate::duration`.
//! - [`watch`]: `--watch`, waiting in-process for a person's fix.

pub mod candidates;
mod checkouts;
pub mod driver;
// Kept for the callers that still name it here; the formatter is below
// every layer that prints a duration.
pub use crate::duration;
pub mod event;
pub mod head;
pub mod journal;
pub mod open;
pub mod phase_event;
pub mod policy;
pub mod ports;
pub mod real;
pub mod runner_env;
pub mod sink;
pub mod step;
pub mod tamper;
pub mod txn;
pub mod watch;

#[cfg(test)]
pub mod fake;

pub use driver::{DriverConfig, Machine, call_agent, run};
pub use event::{Done, Event, FrontEnd};
pub use ports::Ports;
pub use sink::{Sink, Sinks};
pub use step::{Effect, Ending, Observation, Observed, PauseReason, Step};
pub use txn::{Document, Durability, SessionTxn};
