#![no_main]
//! `${name}` interpolation for custom agent commands and workflow steps.
//! Input: the first byte picks the mode, then NUL-separated fields: the
//! template, then name/value pairs.

use libfuzzer_sys::fuzz_target;
use wfx::agents::vars::{self, Mode, Vars};
use wfx::process::shell_escape;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mode = if first & 1 == 0 {
        Mode::Argv
    } else {
        Mode::Shell
    };
    let text = wfx_fuzz::text(rest);
    let mut fields = text.split('\0');
    let template = fields.next().unwrap_or("");
    let mut v = Vars::new();
    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
        v.set(name, value);
    }
    let _ = v.env();
    let names = vars::referenced(template);
    match vars::interpolate(template, &v, mode) {
        Ok(out) => {
            assert!(names.iter().all(|n| v.get(n).is_some()));
            if !template.contains('$') {
                assert_eq!(out, template);
            }
            if let [name] = names.as_slice()
                && template == format!("${{{name}}}")
            {
                let value = v.get(name).unwrap_or_default();
                match mode {
                    Mode::Argv => assert_eq!(out, value),
                    Mode::Shell => assert_eq!(out, shell_escape(value)),
                }
            }
        }
        Err(e) => {
            let missing = names.iter().find(|n| v.get(n).is_none());
            assert_eq!(Some(&e.name), missing, "the first unknown name is reported");
        }
    }
    for (name, _) in v.iter() {
        let env = vars::env_name(name);
        assert!(env.starts_with("WFX_"));
        assert!(
            env.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        );
    }
});
