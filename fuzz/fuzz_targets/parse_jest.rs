#![no_main]
//! jest's `--json` report.

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::jest;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    if let Ok(run) = jest::parse(&text) {
        wfx_fuzz::check_parsed(run, &text);
    }
});
