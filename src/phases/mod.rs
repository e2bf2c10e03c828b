//! Phases 1–4 of `wfx test-fix-gen` (DESIGN.md §4).

pub mod context;
