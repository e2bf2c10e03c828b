#![no_main]
//! JUnit XML (pytest, jest-junit, vitest, nextest, Surefire, node): one
//! document, or several separated by NUL bytes as `parse_all` reads them.

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::junit;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    if let Ok(run) = junit::parse(&text) {
        wfx_fuzz::check_parsed(run, &text);
    }
    if text.contains('\0')
        && let Ok(run) = junit::parse_all(text.split('\0'))
    {
        wfx_fuzz::check_parsed(run, "");
    }
});
