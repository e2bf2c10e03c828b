//! `${name}` variables for custom agent commands, prompt templates and the
//! YAML workflow runner (DESIGN.md §6.3, §8), and the same values as `WFX_*`
//! environment variables.
//!
//! Interpolation never runs anything: in [`Mode::Argv`] a value becomes
//! (part of) one argument; in [`Mode::Shell`] every value is shell-escaped,
//! so test output holding `$(touch pwned)` stays a literal word.

use std::collections::BTreeMap;

use crate::process::shell_escape;

/// Values up to this size are passed inline as `${test.output}`; larger
/// outputs are passed as the log's path instead (DESIGN.md §6.3).
pub const INLINE_OUTPUT_MAX: usize = 10 * 1024;

/// How interpolated values are inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Values are inserted verbatim into one argv element (no shell runs).
    Argv,
    /// Values are shell-escaped, for a string run by `sh -c`.
    Shell,
}

/// A `${name}` that no variable answers. Unknown names are errors so a typo
/// in a command never silently becomes an empty string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariable {
    pub name: String,
}

impl std::fmt::Display for UnknownVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown variable ${{{}}}", self.name)
    }
}

impl std::error::Error for UnknownVariable {}

/// The variables of one call, by name (`test.output`, `session.id`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    values: BTreeMap<String, String>,
}

/// The names wfx itself defines for agent calls (DESIGN.md §6.3).
pub const STANDARD_NAMES: &[&str] = &[
    "test.output",
    "test.output_file",
    "test.exit_code",
    "test.attempt",
    "spec",
    "session.id",
    "session.dir",
    "prompt_file",
];

impl Vars {
    pub fn new() -> Vars {
        Vars::default()
    }

    /// Set (or replace) one variable.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Vars {
        self.values.insert(name.into(), value.into());
        self
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// `${test.output}` (inline when at most [`INLINE_OUTPUT_MAX`] bytes,
    /// else the log path) and `${test.output_file}`. `log_path` should be
    /// relative to the project root: artifacts never hold absolute paths.
    pub fn set_test_output(&mut self, output: &str, log_path: &str) -> &mut Vars {
        let inline = if output.len() <= INLINE_OUTPUT_MAX {
            output.to_string()
        } else {
            log_path.to_string()
        };
        self.set("test.output", inline);
        self.set("test.output_file", log_path)
    }

    /// Names and values, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The same values as environment variables: `test.output_file` →
    /// `WFX_TEST_OUTPUT_FILE`, `session.id` → `WFX_SESSION_ID`. NUL bytes,
    /// which no environment can hold, are dropped.
    pub fn env(&self) -> Vec<(String, String)> {
        self.values
            .iter()
            .map(|(k, v)| (env_name(k), v.replace('\0', "")))
            .collect()
    }
}

/// `WFX_` + the name upper-cased with every non-alphanumeric character as `_`.
pub fn env_name(name: &str) -> String {
    let mut out = String::from("WFX_");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push('_');
        }
    }
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// One piece of a template: literal text or a variable reference.
enum Piece<'a> {
    Text(&'a str),
    Var(&'a str),
}

/// Split a template into text and `${name}` references. `$${` is a literal
/// `${`; a `$` not followed by `{name}` is left as it is (so `$HOME` in a
/// shell command still reaches the shell).
fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let bytes = template.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && template[i + 1..].starts_with("${") {
            out.push(Piece::Text(&template[start..i]));
            out.push(Piece::Text("${"));
            i += 3;
            start = i;
            continue;
        }
        if bytes[i] == b'$' && template[i + 1..].starts_with('{') {
            let rest = &template[i + 2..];
            if let Some(end) = rest.find('}') {
                let name = &rest[..end];
                if !name.is_empty() && name.chars().all(is_name_char) {
                    out.push(Piece::Text(&template[start..i]));
                    out.push(Piece::Var(name));
                    i += 2 + end + 1;
                    start = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push(Piece::Text(&template[start..]));
    out
}

/// The variable names a template refers to, in order of appearance.
pub fn referenced(template: &str) -> Vec<String> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(n) => Some(n.to_string()),
            Piece::Text(_) => None,
        })
        .collect()
}

/// Replace every `${name}` in `template` with its value; in [`Mode::Shell`]
/// each value is shell-escaped so it is always one literal word.
pub fn interpolate(template: &str, vars: &Vars, mode: Mode) -> Result<String, UnknownVariable> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Var(name) => {
                let value = vars.get(name).ok_or_else(|| UnknownVariable {
                    name: name.to_string(),
                })?;
                match mode {
                    Mode::Argv => out.push_str(value),
                    Mode::Shell => out.push_str(&shell_escape(value)),
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        let mut v = Vars::new();
        v.set("test.attempt", "2")
            .set("spec", ".workflow/active/WFS-x/.task/IMPL-fix-2.json")
            .set("test.output", "it's $(touch pwned) `id`\n\"q\"");
        v
    }

    #[test]
    fn interpolation_table() {
        let v = vars();
        for (template, mode, want) in [
            ("plain", Mode::Argv, "plain"),
            ("n=${test.attempt}", Mode::Argv, "n=2"),
            ("${test.attempt}${test.attempt}", Mode::Argv, "22"),
            ("$${test.attempt}", Mode::Argv, "${test.attempt}"),
            ("$HOME ${", Mode::Argv, "$HOME ${"),
            ("${}", Mode::Argv, "${}"),
            (
                "a ${spec}",
                Mode::Shell,
                "a .workflow/active/WFS-x/.task/IMPL-fix-2.json",
            ),
            (
                "echo ${test.output}",
                Mode::Shell,
                "echo 'it'\\''s $(touch pwned) `id`\n\"q\"'",
            ),
        ] {
            assert_eq!(interpolate(template, &v, mode).unwrap(), want, "{template}");
        }
    }

    #[test]
    fn unknown_variable_is_named() {
        let err = interpolate("x ${test.ouput} y", &vars(), Mode::Argv).unwrap_err();
        assert_eq!(err.name, "test.ouput");
        assert_eq!(err.to_string(), "unknown variable ${test.ouput}");
    }

    #[test]
    fn large_output_is_passed_by_path() {
        let mut v = Vars::new();
        v.set_test_output(&"x".repeat(INLINE_OUTPUT_MAX), "log.txt");
        assert_eq!(v.get("test.output").unwrap().len(), INLINE_OUTPUT_MAX);
        v.set_test_output(&"x".repeat(INLINE_OUTPUT_MAX + 1), "log.txt");
        assert_eq!(v.get("test.output"), Some("log.txt"));
        assert_eq!(v.get("test.output_file"), Some("log.txt"));
    }

    #[test]
    fn env_names() {
        let mut v = Vars::new();
        v.set("test.output_file", "a")
            .set("session.id", "WFS-x")
            .set("build-1.output", "z\0z");
        assert_eq!(
            v.env(),
            vec![
                ("WFX_BUILD_1_OUTPUT".to_string(), "zz".to_string()),
                ("WFX_SESSION_ID".to_string(), "WFS-x".to_string()),
                ("WFX_TEST_OUTPUT_FILE".to_string(), "a".to_string()),
            ]
        );
    }

    #[test]
    fn referenced_names() {
        assert_eq!(
            referenced("./fix.sh ${test.output_file} $${x} ${test.attempt}"),
            vec!["test.output_file", "test.attempt"]
        );
    }
}
