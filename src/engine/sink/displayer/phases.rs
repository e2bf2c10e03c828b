//! The lines of phases 1–4 of `wfx test-fix-gen`.

use crate::engine::phase_event::{PhaseEvent, PhasesResumed};

/// `Phase 1/5 session start: WFS-x (prompt mode)`, `Phase 2/5 context
/// gather`.
pub(super) fn started(p: &PhaseEvent) -> String {
    match p.mode {
        Some(mode) => format!(
            "Phase {}/5 {}: {} ({} mode)",
            p.phase,
            p.title,
            p.session_id,
            mode.as_str()
        ),
        None => format!("Phase {}/5 {}", p.phase, p.title),
    }
}

/// `Continuing WFS-x at phase 3/4 (analysis)`.
pub(super) fn resumed(r: &PhasesResumed) -> String {
    match r.phase {
        Some(n) => format!(
            "Continuing {} at phase {n}/4 ({})",
            r.session_id,
            r.title.as_deref().unwrap_or_default()
        ),
        None => format!("{}: phases 1–4 are already complete", r.session_id),
    }
}
