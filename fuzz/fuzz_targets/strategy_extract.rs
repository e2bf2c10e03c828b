#![no_main]
//! An agent's answer: the fix strategy in a fenced ```json block, bare
//! JSON, or a `{"fix_strategy": …}` wrapper. A strategy that validates must
//! keep validating after wfx writes it to fix-strategy.json.

use libfuzzer_sys::fuzz_target;
use wfx::agents::strategy;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    let _ = strategy::word_count(&text);
    if let Ok(s) = strategy::extract(&text) {
        assert!((0.0..=1.0).contains(&s.confidence_score));
        let _ = strategy::root_cause_key(&s);
        wfx_fuzz::assert_reloads(&s);
    }
});
