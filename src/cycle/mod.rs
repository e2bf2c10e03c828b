//! Phase 5: the test → analyse → fix → retest state machine (DESIGN.md §5).
//! `decide` holds every decision as a pure function; the dispatcher performs
//! the effects.

pub mod decide;
