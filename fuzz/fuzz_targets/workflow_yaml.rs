#![no_main]
//! A `.workflow/*.yml` workflow: the YAML reader and the workflow model
//! with its checks. Every problem must come back as an issue, never a panic.

use libfuzzer_sys::fuzz_target;
use wfx::workflow::model;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    match model::parse(&text) {
        Ok(wf) => {
            for step in &wf.steps {
                let _ = (step.kind(), step.label(), step.uses_claude());
            }
        }
        Err(issues) => {
            assert!(!issues.is_empty(), "an error without issues");
            for issue in &issues {
                let _ = issue.located_message();
            }
        }
    }
});
