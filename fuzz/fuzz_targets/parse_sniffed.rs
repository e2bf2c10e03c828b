#![no_main]
//! Any text output: the format sniffing the runner does, the streaming
//! parser it picks, and the shared helpers every parser uses (ANSI
//! stripping, `file:line` locations, Rust panics, rustc diagnostics,
//! bounded excerpts).

use libfuzzer_sys::fuzz_target;
use wfx::testing::parse::{self, CompileErrors, MESSAGE_MAX, MESSAGE_MAX_LINES};

fuzz_target!(|data: &[u8]| {
    let text = wfx_fuzz::text(data);
    if let Some(format) = parse::sniff(&text) {
        let run = wfx_fuzz::stream(format.parser(Some("example.com/calc")), &text);
        wfx_fuzz::check_parsed(run, &text);
    }
    let _ = parse::strip_ansi(&text);
    for loc in parse::locations(&text) {
        assert!(!loc.file.is_empty());
    }
    let _ = parse::best_location(&text, Some("src/lib.rs"));
    let _ = parse::rust_panic(&text);
    let mut diags = CompileErrors::default();
    for line in text.lines() {
        diags.line(line);
    }
    let _ = diags.finish();
    let e = parse::excerpt(&text);
    assert!(e.len() <= MESSAGE_MAX + "\n[…]".len(), "{} bytes", e.len());
    assert!(e.lines().count() <= MESSAGE_MAX_LINES + 1);
});
