#![no_main]
//! `go test -json` events (and the plain-text build failures old Go mixes
//! in). The first byte picks whether a module path from go.mod is known.

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::gotest;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let module = (first & 1 == 1).then_some("example.com/calc");
    let text = wfx_fuzz::text(rest);
    wfx_fuzz::check_parsed(gotest::parse(&text, module), &text);
    let streamed = wfx_fuzz::stream(Box::new(gotest::Parser::new(module)), &text);
    wfx_fuzz::check_parsed(streamed, "");
});
