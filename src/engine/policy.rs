//! The one policy of both machines for stopping (DESIGN.md §10.1): which
//! agent failures pause the session instead of counting as an attempt,
//! and the agent cost cap checked before every call.

use super::step::PauseReason;
use crate::agents::{CallRecord, ErrorKind, Role};

/// Whether a finished agent call pauses the session (exit 3, resumable)
/// rather than being judged: Ctrl-C stopped it, or the agent could not be
/// reached (not installed, rate limited, a server or connection error) —
/// nothing the fix could have done, and worth another try later. An
/// analysis call is an exception: the chain falls back to the next tool
/// and finally the built-in analyzer, so only Ctrl-C pauses it.
pub fn pause_for(call: &CallRecord, role: Role, doing: &str) -> Option<PauseReason> {
    if call.interrupted {
        return Some(PauseReason::Interrupted {
            during: format!("{} was {doing}", call.agent),
        });
    }
    if role == Role::Analysis {
        return None;
    }
    match call.error_kind {
        Some(
            kind @ (ErrorKind::Unavailable
            | ErrorKind::RateLimit
            | ErrorKind::Server
            | ErrorKind::Connection),
        ) => Some(PauseReason::AgentUnavailable {
            agent: call.agent.clone(),
            error: kind.as_str().to_string(),
            message: call.error_message.clone().unwrap_or_default(),
        }),
        _ => None,
    }
}

/// The reason no further agent call may be made, when `spent` (US
/// dollars, from the session's own records) has reached `cap`.
pub fn cost_cap(spent: f64, cap: Option<f64>) -> Option<String> {
    let cap = cap?;
    if cap == 0.0 {
        return Some(
            "agents.max_cost_usd is 0: no agent call is made (set a cap above 0 in .workflow/wfx.json to allow paid calls)".into(),
        );
    }
    (spent >= cap).then(|| {
        let (spent, cap) = crate::money::usd_pair(spent, cap);
        format!(
            "agent cost cap reached: {spent} spent of agents.max_cost_usd {cap}; no further agent calls are made (raise the cap in .workflow/wfx.json to continue)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(kind: Option<ErrorKind>, interrupted: bool) -> CallRecord {
        CallRecord {
            exit_code: Some(1),
            interrupted,
            error_kind: kind,
            error_message: Some("429 Too Many Requests".into()),
            ..CallRecord::new("claude", Role::Fix, chrono::Utc::now())
        }
    }

    #[test]
    fn the_pause_policy_table() {
        use ErrorKind::*;
        for (kind, interrupted, role, pauses) in [
            (None, true, Role::Fix, true),
            (None, true, Role::Analysis, true),
            (Some(Unavailable), false, Role::Fix, true),
            (Some(RateLimit), false, Role::Fix, true),
            (Some(Server), false, Role::TestGen, true),
            (Some(Connection), false, Role::Fix, true),
            (Some(Timeout), false, Role::Fix, false),
            (Some(Failed), false, Role::Fix, false),
            (None, false, Role::Fix, false),
            // The analysis chain falls back instead.
            (Some(RateLimit), false, Role::Analysis, false),
            (Some(Unavailable), false, Role::Analysis, false),
        ] {
            let got = pause_for(&call(kind, interrupted), role, "fixing");
            assert_eq!(
                got.is_some(),
                pauses,
                "{kind:?} {interrupted} {role:?}: {got:?}"
            );
        }
        assert_eq!(
            pause_for(&call(Some(RateLimit), false), Role::Fix, "fixing")
                .unwrap()
                .text(),
            "claude is unavailable (rate_limit: 429 Too Many Requests)"
        );
    }

    #[test]
    fn the_cost_cap() {
        assert_eq!(cost_cap(5.0, None), None);
        assert_eq!(cost_cap(0.03, Some(0.04)), None);
        assert!(
            cost_cap(0.05, Some(0.04))
                .unwrap()
                .starts_with("agent cost cap reached: $0.05 spent of agents.max_cost_usd $0.04")
        );
        assert!(
            cost_cap(0.04, Some(0.04)).is_some(),
            "reached, not exceeded"
        );
        // The case: rounding to cents made 0.0078 of 0.005 read
        // "$0.01 spent of $0.01".
        assert!(
            cost_cap(0.0078, Some(0.005)).unwrap().starts_with(
                "agent cost cap reached: $0.0078 spent of agents.max_cost_usd $0.005;"
            )
        );
        // 0: no call at all, not even a free first one.
        assert!(
            cost_cap(0.0, Some(0.0))
                .unwrap()
                .contains("no agent call is made")
        );
    }
}
