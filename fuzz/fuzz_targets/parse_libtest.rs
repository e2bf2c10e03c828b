#![no_main]
//! libtest text output, parsed whole and streamed line by line as the runner
//! reads a log (`\r` kept at line ends).

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::libtest;

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    wfx_fuzz::check_parsed(libtest::parse(&text), &text);
    let streamed = wfx_fuzz::stream(Box::new(libtest::Parser::default()), &text);
    wfx_fuzz::check_parsed(streamed, "");
});
