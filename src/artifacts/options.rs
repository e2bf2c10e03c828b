//! `cycle_options` of `workflow-session.json`: the phase-5 flags recorded
//! when a session is planned, so `test-cycle-execute` later runs it as it
//! was asked to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Flags of DESIGN.md §1 that `test-fix-gen` records for phase 5, kept in
/// `workflow-session.json` under `cycle_options` (a typed field: a later
/// `test-cycle-execute` merges its own flags over them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CycleOptions {
    #[serde(default)]
    pub allow_dirty: bool,
    #[serde(default)]
    pub no_commit: bool,
    #[serde(default)]
    pub worktree: bool,
    /// `--fix-agent NAME|manual`, when given.
    #[serde(default)]
    pub fix_agent: Option<String>,
    /// `--max-iterations N`, when given.
    #[serde(default)]
    pub max_iterations: Option<u32>,
    #[serde(default)]
    pub yes: bool,
    /// `--candidates N`, when given: fix attempts per step, at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u32>,
}

impl CycleOptions {
    /// Flags given now override what an earlier run recorded; flags not
    /// given keep their recorded value.
    pub fn merge(&mut self, newer: &CycleOptions) {
        self.allow_dirty |= newer.allow_dirty;
        self.no_commit |= newer.no_commit;
        self.worktree |= newer.worktree;
        self.yes |= newer.yes;
        if newer.fix_agent.is_some() {
            self.fix_agent.clone_from(&newer.fix_agent);
        }
        if newer.max_iterations.is_some() {
            self.max_iterations = newer.max_iterations;
        }
        if newer.candidates.is_some() {
            self.candidates = newer.candidates;
        }
    }

    /// The flags as a command line would spell them.
    pub fn as_flags(&self) -> String {
        let mut out = Vec::new();
        if self.allow_dirty {
            out.push("--allow-dirty".to_string());
        }
        if self.no_commit {
            out.push("--no-commit".to_string());
        }
        if self.worktree {
            out.push("--worktree".to_string());
        }
        if let Some(a) = &self.fix_agent {
            out.push(format!("--fix-agent {a}"));
        }
        if let Some(n) = self.max_iterations {
            out.push(format!("--max-iterations {n}"));
        }
        if let Some(n) = self.candidates {
            out.push(format!("--candidates {n}"));
        }
        if self.yes {
            out.push("-y".to_string());
        }
        out.join(" ")
    }
}
