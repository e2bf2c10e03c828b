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
        result_text: env.result_text.clone(),
        is_error: env.is_error,
        error_kind,
        error_message: env.error_message.clone(),
        structured: env.structured,
        prompt_file: "p.md".into(),
        output_file: "o.txt".into(),
    };
    let parsed = strategy::extract(&env.result_text);
    let _ = strategy::fallback_reason(&call, &parsed, &[]);
    if let Ok(s) = &parsed {
        let _ = strategy::fallback_reason(&call, &parsed, &[s.clone(), s.clone()]);
    }
    let history = FixHistory {
        session_id: "WFS-fuzz".into(),
        agent_calls: vec![call.to_artifact(Some(1), None, "analysed")],
        ..FixHistory::default()
    };
    wfx_fuzz::assert_reloads(&history);
    let _ = strategy::total_cost(&history);
});

fn chrono_epoch() -> wfx::artifacts::Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("a valid timestamp")
}
