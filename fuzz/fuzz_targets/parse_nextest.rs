#![no_main]
//! nextest text output, parsed whole and streamed line by line as the runner
//! reads a log (`\r` kept at line ends).

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::nextest;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    wfx_fuzz::check_parsed(nextest::parse(&text), &text);
    let streamed = wfx_fuzz::stream(Box::new(nextest::Parser::default()), &text);
    wfx_fuzz::check_parsed(streamed, "");
});
