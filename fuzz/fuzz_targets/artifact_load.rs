#![no_main]
//! Loading any artifact from disk: JSON syntax, schema validation, then the
//! typed value (the first byte picks which artifact type). What loads must
//! load again after wfx writes it back.

use libfuzzer_sys::fuzz_target;
use wfx::artifacts::{
    ArchiveManifest, Artifact, Config, ContextPackage, FixHistory, FixStrategy, IterationFailures,
    IterationState, RunState, Task, TestResults, WorkflowSession, parse_artifact,
};

fn load<T: Artifact>(text: &str) {
    if let Ok(value) = parse_artifact::<T>("fuzz.json", text) {
        wfx_fuzz::assert_reloads(&value);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let text = wfx_fuzz::text(rest);
    match first % 11 {
        0 => load::<WorkflowSession>(&text),
        1 => load::<Task>(&text),
        2 => load::<FixStrategy>(&text),
        3 => load::<IterationState>(&text),
        4 => load::<IterationFailures>(&text),
        5 => load::<TestResults>(&text),
        6 => load::<FixHistory>(&text),
        7 => load::<ContextPackage>(&text),
        8 => load::<ArchiveManifest>(&text),
        9 => load::<Config>(&text),
        _ => load::<RunState>(&text),
    }
});
