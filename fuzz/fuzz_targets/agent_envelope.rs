#![no_main]
//! What an agent CLI printed, read as each preset's envelope (the first
//! byte picks claude, gemini, qwen, codex, opencode or a custom command),
//! then judged the way an analysis call is: error classification, strategy
//! extraction, the fallback decision and the fix-history record.

use libfuzzer_sys::fuzz_target;
use wfx::agents::config::Role;
use wfx::agents::invoke::{CallRecord, classify_error};
use wfx::agents::{presets, strategy};
use wfx::artifacts::FixHistory;
use wfx::artifacts::config::Preset;
use wfx::artifacts::fix_history::CallOutcome;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let preset = Preset::ALL
        .get(first as usize % (Preset::ALL.len() + 1))
        .copied();
    let raw = wfx_fuzz::text(rest);
    let env = presets::parse(preset, &raw);
    if let Some(cost) = env.cost_usd {
        assert!(cost.is_finite(), "cost {cost}");
    }
    let error_kind = if env.is_error {
        env.error_message
            .as_deref()
            .and_then(classify_error)
            .or_else(|| classify_error(&env.result_text))
    } else {
        None
    };
    let call = CallRecord {
        agent: "fuzz".into(),
        role: Role::Analysis,
        started_at: chrono_epoch(),
        exit_code: Some(0),
        timed_out: false,
        interrupted: false,
        duration_ms: 1,
        cost_usd: env.cost_usd,
        turns: env.turns,
        input_tokens: env.input_tokens,
        output_tokens: env.output_tokens,
        result_text: env.result_text.clone(),
        is_error: env.is_error,
        error_kind,
        error_message: env.error_message.clone(),
        structured: env.structured,
        prompt_file: "p.md".into(),
        output_file: "o.txt".into(),
        agent_commits: Vec::new(),
        tamper: None,
    };
    let parsed = strategy::extract(&env.result_text);
    // Recorded as the analysis step records it: accepted, or why not.
    let outcome = strategy::fallback_reason(&call, &parsed, &[])
        .map_or(CallOutcome::Accepted, |reason| reason.outcome());
    if let Ok(s) = &parsed {
        let _ = strategy::fallback_reason(&call, &parsed, &[s.clone(), s.clone()]);
    }
    let history = FixHistory {
        session_id: "WFS-fuzz".into(),
        agent_calls: vec![call.to_artifact(Some(1), None, outcome)],
        ..FixHistory::default()
    };
    wfx_fuzz::assert_reloads(&history);
    let _ = strategy::total_cost(&history);
});

fn chrono_epoch() -> wfx::artifacts::Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("a valid timestamp")
}
