//! Running a subset with the runner's own filter (DESIGN.md §6.1), and the
//! one place that knows how to add arguments to a user's command line
//! (after `--` for `npm test`, before libtest's `--` for cargo, right after
//! `--test` for node). Pure.
//!
//! A package script that names test files (`"test": "node --test
//! test/*.test.js"`) cannot take node's options after `npm test --`: node
//! reads them as more files. For such scripts, and for scripts of several
//! commands, the arguments go into the script's text where the runner reads
//! them, and that text runs directly (`npm exec -c '…'`, which gives it the
//! environment `npm test` would) — see [`compose_for`].

use super::detect::{Detected, Framework, PackageScript, is_package_script};
use super::id;
use super::parse::tap::SEP;
use crate::process::shell_escape;

/// Arguments to add to a test command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// Arguments for the test tool itself (pytest, jest, cargo, go, …).
    pub runner: Vec<String>,
    /// Arguments for the test harness behind cargo's `--` (libtest).
    pub harness: Vec<String>,
}

impl Args {
    pub fn extend(&mut self, other: Args) {
        self.runner.extend(other.runner);
        self.harness.extend(other.harness);
    }
}

/// A subset filter for one framework.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub args: Args,
    /// Set when the filter may run more than the named tests.
    pub note: Option<String>,
}

/// The command that runs just `ids`; `None` when the framework cannot
/// filter (the caller then runs everything and says so).
pub fn filter_command(detected: &Detected, ids: &[String]) -> Option<String> {
    let filter = filter_for(detected, ids)?;
    Some(compose_for(detected, &filter.args))
}

/// What task files show as the command that re-runs selected tests: the
/// command a retest runs, with `{tests}` where the selected tests go.
pub fn template_command(detected: &Detected) -> Option<String> {
    const PLACEHOLDER: &str = "{tests}";
    let command = filter_command(detected, &[PLACEHOLDER.to_string()])?;
    let command = command.replace(&regex::escape(PLACEHOLDER), PLACEHOLDER);
    Some(command.replace(&format!("'{PLACEHOLDER}'"), PLACEHOLDER))
}

/// [`filter_args`] for a detected command: a cargo subset without doctests
/// also skips building and running the doctests (`--tests`), unless the
/// command already selects its targets.
pub fn filter_for(detected: &Detected, ids: &[String]) -> Option<Filter> {
    let mut filter = filter_args(detected.framework, ids)?;
    if detected.framework == Framework::Cargo && !selects_targets(&detected.command) {
        let names: Vec<&str> = ids.iter().map(|i| id::split_libtest(i).1).collect();
        if names.iter().all(|n| is_doctest(n)) {
            filter.args.runner.insert(0, "--doc".into());
        } else if !names.iter().any(|n| is_doctest(n)) {
            filter.args.runner.insert(0, "--tests".into());
        }
    }
    Some(filter)
}

/// A cargo command that picks its own targets (`--lib`, `--test x`, …).
fn selects_targets(command: &str) -> bool {
    const FLAGS: &[&str] = &[
        "--lib",
        "--bin",
        "--bins",
        "--test",
        "--tests",
        "--example",
        "--examples",
        "--bench",
        "--benches",
        "--all-targets",
        "--doc",
    ];
    command
        .split_whitespace()
        .take_while(|w| *w != "--")
        .any(|w| FLAGS.contains(&w.split('=').next().unwrap_or(w)))
}

/// The framework's own filter for `ids` (in the id form of DESIGN.md §3).
pub fn filter_args(framework: Framework, ids: &[String]) -> Option<Filter> {
    if ids.is_empty() {
        return None;
    }
    match framework {
        Framework::Pytest => Some(Filter {
            args: Args {
                runner: ids.to_vec(),
                ..Args::default()
            },
            note: None,
        }),
        Framework::Cargo => Some(cargo_filter(ids)),
        Framework::Nextest => Some(Filter {
            args: Args {
                runner: vec!["-E".into(), nextest_expr(ids)],
                ..Args::default()
            },
            note: None,
        }),
        Framework::Jest | Framework::Vitest => Some(js_filter(framework, ids)),
        Framework::NodeTest => Some(Filter {
            args: Args {
                runner: vec![format!("--test-name-pattern={}", node_pattern(ids))],
                ..Args::default()
            },
            note: None,
        }),
        Framework::Go => Some(go_filter(ids)),
        Framework::Maven => Some(Filter {
            args: Args {
                runner: vec![
                    format!("-Dtest={}", surefire_tests(ids)),
                    "-DfailIfNoTests=false".into(),
                    "-Dsurefire.failIfNoSpecifiedTests=false".into(),
                ],
                ..Args::default()
            },
            note: None,
        }),
        Framework::Make | Framework::Custom => None,
    }
}

/// Is this libtest name (or id) a doctest (`src/lib.rs - divide (line 16)`)?
pub fn is_doctest(id: &str) -> bool {
    id.contains(" - ") && id.ends_with(')') && id.contains("(line ")
}

/// libtest `--exact` names: the ids without their target (`a::check` →
/// `check`; each test binary runs the names it has, so `check` of another
/// target may run too and is merged as what it is). Cargo hands doctest
/// filters to rustdoc split on whitespace, so a doctest name cannot be
/// matched exactly: with doctests in the set, names become substring
/// filters and a doctest is filtered by its item path (`divide`), which may
/// run a few more tests.
fn cargo_filter(ids: &[String]) -> Filter {
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        let name = id::split_libtest(id).1.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let ids = &names;
    if !ids.iter().any(|id| is_doctest(id)) {
        let mut harness = vec!["--exact".to_string()];
        harness.extend(ids.iter().cloned());
        return Filter {
            args: Args {
                harness,
                ..Args::default()
            },
            note: None,
        };
    }
    let mut harness: Vec<String> = Vec::new();
    for id in ids {
        let filter = if is_doctest(id) {
            id.split(" - ")
                .nth(1)
                .and_then(|rest| rest.rsplit_once(" (line "))
                .map(|(item, _)| item.split_whitespace().next().unwrap_or(item).to_string())
                .unwrap_or_else(|| id.clone())
        } else {
            id.clone()
        };
        if !harness.contains(&filter) {
            harness.push(filter);
        }
    }
    Filter {
        args: Args {
            harness,
            ..Args::default()
        },
        note: Some(
            "doctest names cannot be filtered exactly through cargo; tests whose names contain the filters ran too"
                .into(),
        ),
    }
}

/// nextest filterset: `(binary_id(=B) & test(=T)) | …` for ids `B T`.
pub fn nextest_expr(ids: &[String]) -> String {
    ids.iter()
        .map(|id| match id.split_once(' ') {
            Some((binary, test)) => format!("(binary_id(={binary}) & test(={test}))"),
            None => format!("test(={id})"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Whether the first part of a JS id is a file path.
fn looks_like_file(part: &str) -> bool {
    part.contains('/')
        || [".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts"]
            .iter()
            .any(|ext| part.ends_with(ext))
}

/// jest and vitest: the files as path filters and a `-t` name pattern over
/// the full names (titles joined by a space; vitest may use ` > `). jest
/// reads a path filter as a regular expression, vitest as a plain
/// substring of the file's path (it turns `\` into `/`, so an escaped
/// `a\.test\.ts` matches no file at all).
fn js_filter(framework: Framework, ids: &[String]) -> Filter {
    let mut files: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut all_have_files = true;
    for id in ids {
        let parts: Vec<&str> = id.split(SEP).collect();
        let (file, titles): (Option<&str>, &[&str]) = match parts.split_first() {
            Some((first, rest)) if looks_like_file(first) && !rest.is_empty() => {
                (Some(first), rest)
            }
            _ => (None, &parts[..]),
        };
        match file {
            Some(f) if !files.iter().any(|x| x == f) => files.push(f.to_string()),
            Some(_) => {}
            None => all_have_files = false,
        }
        let name = titles
            .iter()
            .map(|t| regex::escape(t))
            .collect::<Vec<_>>()
            .join("(?: | > )");
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut runner = Vec::new();
    if all_have_files {
        runner.extend(files.iter().map(|f| match framework {
            Framework::Vitest => f.clone(),
            _ => regex::escape(f),
        }));
    }
    runner.push("-t".into());
    runner.push(format!("^(?:{})$", names.join("|")));
    Filter {
        args: Args {
            runner,
            ..Args::default()
        },
        note: None,
    }
}

/// `node --test-name-pattern`: each test's own name (Node 20 matches it
/// against the test's name, later versions against the full name; both
/// match this).
fn node_pattern(ids: &[String]) -> String {
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        let leaf = id.rsplit(SEP).next().unwrap_or(id);
        let name = regex::escape(leaf);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    format!("(?:^|\\s)(?:{})$", names.join("|"))
}

/// Top-level test names of go ids `package/TestName[/sub]`.
fn go_filter(ids: &[String]) -> Filter {
    let mut names: Vec<String> = Vec::new();
    let mut subtests = false;
    for id in ids {
        let parts: Vec<&str> = id.split('/').collect();
        // An id without a test function part names a package (a build
        // failure) or a placeholder: its last part stands for the name.
        let i = parts
            .iter()
            .position(|p| {
                ["Test", "Example", "Fuzz", "Benchmark"]
                    .iter()
                    .any(|prefix| p.starts_with(prefix))
            })
            .unwrap_or(parts.len() - 1);
        subtests |= i + 1 < parts.len();
        let name = regex::escape(parts[i]);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Filter {
        args: Args {
            runner: vec!["-run".into(), format!("^(?:{})$", names.join("|"))],
            ..Args::default()
        },
        note: subtests
            .then(|| "go runs whole top-level tests: every subtest of a named test ran".into()),
    }
}

/// Surefire `-Dtest=Class#m1+m2,Other#m3`.
fn surefire_tests(ids: &[String]) -> String {
    let mut classes: Vec<(String, Vec<String>)> = Vec::new();
    for id in ids {
        let (class, method) = match id.split_once('#') {
            Some((c, m)) => (c.to_string(), Some(m.to_string())),
            None => (id.clone(), None),
        };
        let entry = match classes.iter_mut().find(|(c, _)| *c == class) {
            Some(e) => e,
            None => {
                classes.push((class, Vec::new()));
                classes.last_mut().expect("just pushed")
            }
        };
        if let Some(m) = method {
            // Surefire matches the method name without JUnit 5's parameter list.
            let m = m.split('(').next().unwrap_or(&m).to_string();
            if !entry.1.contains(&m) {
                entry.1.push(m);
            }
        }
    }
    classes
        .into_iter()
        .map(|(c, ms)| {
            if ms.is_empty() {
                c
            } else {
                format!("{c}#{}", ms.join("+"))
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Add arguments to a detected command where the runner reads them. For a
/// package script that names test files (node) or runs several commands,
/// the arguments go into the script's own text after the runner, and that
/// text runs directly: `npm exec -c '<script>'` for npm (the environment
/// `npm test` gives a script), the text itself for yarn, pnpm and bun; a
/// `pretest` script runs first, as `npm test` would run it. Otherwise
/// [`compose`].
pub fn compose_for(detected: &Detected, args: &Args) -> String {
    if args.runner.is_empty() && args.harness.is_empty() {
        return compose(&detected.command, detected.framework, args);
    }
    if is_package_script(&detected.command)
        && let Some(script) = &detected.script
        && let Some(direct) = direct_script(script, detected.framework, args)
    {
        return direct;
    }
    compose(&detected.command, detected.framework, args)
}

/// Shell operators that make a script more than one command.
fn is_compound(script: &str) -> bool {
    ["&&", "||", ";", "|", "\n"]
        .iter()
        .any(|op| script.contains(op))
}

/// The script's text with `args` after its runner, run directly; `None`
/// when appending after `npm test --` works (one jest/vitest command) or
/// the runner is not found in the text.
fn direct_script(script: &PackageScript, framework: Framework, args: &Args) -> Option<String> {
    if framework != Framework::NodeTest && !is_compound(&script.test) {
        return None;
    }
    let text = args
        .runner
        .iter()
        .chain(args.harness.iter())
        .map(|a| shell_escape(a))
        .collect::<Vec<_>>()
        .join(" ");
    let inner = insert_after_runner(&script.test, framework, &text)?;
    let manager = script.manager.as_str();
    let run = if manager == "npm" {
        format!("npm exec -c {}", shell_escape(&inner))
    } else {
        inner
    };
    Some(if script.pretest {
        format!("{manager} run pretest && {run}")
    } else {
        run
    })
}

/// Insert `text` after every runner word of a script: node's `--test`,
/// `jest`, `vitest [run]`.
fn insert_after_runner(script: &str, framework: Framework, text: &str) -> Option<String> {
    let words: Vec<(usize, &str)> = word_spans(script);
    let mut at: Vec<usize> = Vec::new();
    for (i, (start, w)) in words.iter().enumerate() {
        let bare = w.rsplit('/').next().unwrap_or(w);
        let end = start + w.len();
        match framework {
            Framework::NodeTest if *w == "--test" => at.push(end),
            Framework::Jest if bare == "jest" => at.push(end),
            Framework::Vitest if bare == "vitest" => {
                // `vitest run;` is one word to a whitespace split.
                let next = words
                    .get(i + 1)
                    .map(|(_, n)| n.trim_end_matches([';', '&', '|']));
                match next {
                    Some("run") => at.push(words[i + 1].0 + 3),
                    _ => at.push(end),
                }
            }
            _ => {}
        }
    }
    if at.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut last = 0;
    for pos in at {
        out.push_str(&script[last..pos]);
        out.push(' ');
        out.push_str(text);
        last = pos;
    }
    out.push_str(&script[last..]);
    Some(out)
}

/// Whitespace-separated words with their byte offsets.
fn word_spans(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(b)) => {
                out.push((b, &s[b..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, &s[b..]));
    }
    out
}

/// Add arguments to a command line, each shell-escaped, where the runner
/// will see them.
pub fn compose(command: &str, framework: Framework, args: &Args) -> String {
    let esc = |v: &[String]| v.iter().map(|a| shell_escape(a)).collect::<Vec<_>>();
    let runner = esc(&args.runner);
    let harness = esc(&args.harness);
    let command = command.trim_end();
    if runner.is_empty() && harness.is_empty() {
        return command.to_string();
    }
    if is_package_script(command) {
        let mut out = command.to_string();
        let all: Vec<String> = runner.into_iter().chain(harness).collect();
        if all.is_empty() {
            return out;
        }
        let npm = command.split_whitespace().next() == Some("npm");
        if npm && !has_word(command, "--") {
            out.push_str(" --");
        }
        out.push(' ');
        out.push_str(&all.join(" "));
        return out;
    }
    match framework {
        Framework::Cargo | Framework::Nextest => {
            let (pre, post) = match split_word(command, "--") {
                Some((pre, post)) => (pre.trim_end().to_string(), Some(post.trim().to_string())),
                None => (command.to_string(), None),
            };
            let mut out = pre;
            for a in &runner {
                out.push(' ');
                out.push_str(a);
            }
            if post.is_some() || !harness.is_empty() {
                out.push_str(" --");
                if let Some(post) = post.filter(|p| !p.is_empty()) {
                    out.push(' ');
                    out.push_str(&post);
                }
                for a in &harness {
                    out.push(' ');
                    out.push_str(a);
                }
            }
            out
        }
        Framework::NodeTest => match insert_after_word(command, "--test", &runner.join(" ")) {
            Some(out) => out,
            None => format!("{command} {}", runner.join(" ")),
        },
        _ => {
            let mut out = command.to_string();
            for a in runner.iter().chain(harness.iter()) {
                out.push(' ');
                out.push_str(a);
            }
            out
        }
    }
}

fn has_word(command: &str, word: &str) -> bool {
    command.split_whitespace().any(|w| w == word)
}

/// Split at the first whitespace-separated `word`.
fn split_word<'a>(command: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let mut offset = 0;
    for w in command.split_whitespace() {
        let at = command[offset..].find(w)? + offset;
        if w == word {
            return Some((&command[..at], &command[at + w.len()..]));
        }
        offset = at + w.len();
    }
    None
}

fn insert_after_word(command: &str, word: &str, text: &str) -> Option<String> {
    let (pre, post) = split_word(command, word)?;
    Some(format!("{pre}{word} {text}{post}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(framework: Framework, command: &str) -> Detected {
        Detected::new(framework, command)
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Task files show the retest command: the template with `{tests}`
    /// is the command a retest composes, for every framework that filters.
    #[test]
    fn templates_are_the_retest_commands() {
        let cases = [
            (
                Framework::Pytest,
                "python -m pytest",
                "python -m pytest {tests}",
            ),
            (
                Framework::Cargo,
                "cargo test",
                "cargo test --tests -- --exact {tests}",
            ),
            (
                Framework::Nextest,
                "cargo nextest run --no-fail-fast",
                "cargo nextest run --no-fail-fast -E 'test(={tests})'",
            ),
            (Framework::Jest, "npx jest", "npx jest -t '^(?:{tests})$'"),
            (
                Framework::NodeTest,
                "node --test",
                "node --test '--test-name-pattern=(?:^|\\s)(?:{tests})$'",
            ),
            (
                Framework::Go,
                "go test ./...",
                "go test ./... -run '^(?:{tests})$'",
            ),
            (Framework::Make, "make test", ""),
        ];
        for (framework, command, want) in cases {
            let got = template_command(&detected(framework, command)).unwrap_or_default();
            assert_eq!(got, want, "{framework}");
        }
    }

    #[test]
    fn filters_per_framework() {
        for (framework, command, test_ids, want) in [
            (
                Framework::Pytest,
                "python -m pytest",
                vec![
                    "tests/test_auth.py::test_validate_token",
                    "tests/test_ops.py::test_parse_number[  7 -7]",
                ],
                "python -m pytest tests/test_auth.py::test_validate_token 'tests/test_ops.py::test_parse_number[  7 -7]'",
            ),
            (
                Framework::Cargo,
                "cargo test --no-fail-fast",
                vec![
                    "rust_calc::stats::tests::mean_of_three",
                    "rust_calc::tests::divide_negative",
                ],
                "cargo test --no-fail-fast --tests -- --exact stats::tests::mean_of_three tests::divide_negative",
            ),
            (
                // The same name in two targets: one filter name, both run.
                Framework::Cargo,
                "cargo test --no-fail-fast",
                vec!["a::check", "b::check"],
                "cargo test --no-fail-fast --tests -- --exact check",
            ),
            (
                Framework::Cargo,
                "cargo test --no-fail-fast",
                vec![
                    "rust_calc::tests::divide_negative",
                    "rust_calc::src/lib.rs - divide (line 16)",
                ],
                "cargo test --no-fail-fast -- tests::divide_negative divide",
            ),
            (
                Framework::Cargo,
                "cargo test --no-fail-fast",
                vec!["rust_calc::src/lib.rs - divide (line 16)"],
                "cargo test --no-fail-fast --doc -- divide",
            ),
            (
                // The command picks its targets: wfx adds none.
                Framework::Cargo,
                "cargo test --lib -- --test-threads=1",
                vec!["x::a::b"],
                "cargo test --lib -- --test-threads=1 --exact a::b",
            ),
            (
                Framework::Nextest,
                "cargo nextest run --no-fail-fast",
                vec![
                    "rust-calc stats::tests::mean_of_three",
                    "rust-calc::integration divide_positive",
                ],
                "cargo nextest run --no-fail-fast -E '(binary_id(=rust-calc) & test(=stats::tests::mean_of_three)) | (binary_id(=rust-calc::integration) & test(=divide_positive))'",
            ),
            (
                Framework::Jest,
                "npm test",
                vec![
                    "test/math.test.js › math › finds the max",
                    "test/strings.test.js › strings › slugifies a title",
                ],
                "npm test -- 'test/math\\.test\\.js' 'test/strings\\.test\\.js' -t '^(?:math(?: | > )finds the max|strings(?: | > )slugifies a title)$'",
            ),
            (
                Framework::Vitest,
                "npx vitest run",
                vec!["test/math.test.js › math › finds the max"],
                "npx vitest run test/math.test.js -t '^(?:math(?: | > )finds the max)$'",
            ),
            (
                Framework::NodeTest,
                "npm test",
                vec!["test/math.test.js › math › finds the max", "reverse"],
                "npm test -- '--test-name-pattern=(?:^|\\s)(?:finds the max|reverse)$'",
            ),
            (
                Framework::NodeTest,
                "node --test test/",
                vec!["a (b)"],
                "node --test '--test-name-pattern=(?:^|\\s)(?:a \\(b\\))$' test/",
            ),
            (
                Framework::Go,
                "go test -json ./...",
                vec![
                    "example.com/gocalc/calc/TestMax/largest_last",
                    "example.com/gocalc/calc/TestAdd",
                    "example.com/gocalc/calc/TestMax",
                ],
                "go test -json ./... -run '^(?:TestMax|TestAdd)$'",
            ),
            (
                Framework::Maven,
                "mvn test",
                vec![
                    "calc.CalcTest#findsTheMax",
                    "calc.CalcTest#dividesByZeroToZero",
                    "calc.OtherTest#x(int)[1]",
                ],
                "mvn test '-Dtest=calc.CalcTest#findsTheMax+dividesByZeroToZero,calc.OtherTest#x' -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false",
            ),
        ] {
            let got = filter_command(&detected(framework, command), &ids(&test_ids));
            assert_eq!(got.as_deref(), Some(want), "{framework}");
        }
    }

    #[test]
    fn runners_without_a_filter_say_so() {
        assert_eq!(
            filter_command(&detected(Framework::Make, "make test"), &ids(&["a"])),
            None
        );
        assert_eq!(
            filter_command(&detected(Framework::Custom, "./t.sh"), &ids(&["a"])),
            None
        );
        assert_eq!(
            filter_command(&detected(Framework::Pytest, "pytest"), &[]),
            None
        );
    }

    #[test]
    fn inexact_filters_carry_a_note() {
        assert!(
            filter_args(Framework::Cargo, &ids(&["src/lib.rs - divide (line 16)"]))
                .unwrap()
                .note
                .is_some()
        );
        assert!(
            filter_args(Framework::Go, &ids(&["m/p/TestA/sub"]))
                .unwrap()
                .note
                .is_some()
        );
        assert!(
            filter_args(Framework::Go, &ids(&["m/p/TestA"]))
                .unwrap()
                .note
                .is_none()
        );
    }

    fn scripted(framework: Framework, command: &str, test: &str, pretest: bool) -> Detected {
        let mut d = detected(framework, command);
        d.script = Some(PackageScript {
            manager: command.split_whitespace().next().unwrap().into(),
            test: test.into(),
            pretest,
        });
        d
    }

    #[test]
    fn filters_go_inside_package_scripts_where_the_runner_reads_them() {
        let node_ids = ids(&["test/add.test.js › adds two numbers"]);
        for (d, test_ids, want) in [
            (
                // node would take anything after the files for a file.
                scripted(
                    Framework::NodeTest,
                    "npm test",
                    "node --test test/*.test.js",
                    false,
                ),
                &node_ids,
                r#"npm exec -c 'node --test '\''--test-name-pattern=(?:^|\s)(?:adds two numbers)$'\'' test/*.test.js'"#,
            ),
            (
                scripted(
                    Framework::NodeTest,
                    "npm test",
                    "tsc -p . && node --test dist/",
                    true,
                ),
                &node_ids,
                r#"npm run pretest && npm exec -c 'tsc -p . && node --test '\''--test-name-pattern=(?:^|\s)(?:adds two numbers)$'\'' dist/'"#,
            ),
            (
                scripted(Framework::NodeTest, "yarn test", "node --test test/", false),
                &node_ids,
                r#"node --test '--test-name-pattern=(?:^|\s)(?:adds two numbers)$' test/"#,
            ),
            (
                // One jest command: npm passes arguments after `--` to it.
                scripted(Framework::Jest, "npm test", "jest --ci", false),
                &ids(&["test/a.test.js › a › b"]),
                r#"npm test -- 'test/a\.test\.js' -t '^(?:a(?: | > )b)$'"#,
            ),
            (
                // Several commands: `--` would reach the last one (eslint).
                scripted(Framework::Jest, "npm test", "jest --ci && eslint .", false),
                &ids(&["test/a.test.js › a › b"]),
                r#"npm exec -c 'jest '\''test/a\.test\.js'\'' -t '\''^(?:a(?: | > )b)$'\'' --ci && eslint .'"#,
            ),
            (
                scripted(
                    Framework::Vitest,
                    "pnpm test",
                    "vitest run; echo done",
                    false,
                ),
                &ids(&["test/a.test.js › b"]),
                r#"vitest run test/a.test.js -t '^(?:b)$'; echo done"#,
            ),
        ] {
            assert_eq!(
                filter_command(&d, test_ids).as_deref(),
                Some(want),
                "{:?}",
                d.script
            );
        }
    }

    #[test]
    fn composed_script_commands_survive_two_shells() {
        // `npm exec -c ARG`: sh unquotes ARG into the script text, which npm
        // runs with sh again; the pattern must reach node as one argument.
        let d = scripted(
            Framework::NodeTest,
            "npm test",
            "node --test test/*.test.js",
            false,
        );
        let cmd = filter_command(&d, &ids(&["t › it's (1) $HOME"])).unwrap();
        let arg = cmd.strip_prefix("npm exec -c ").unwrap();
        let sh = |script: &str| {
            let out = std::process::Command::new("sh")
                .args(["-c", script])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let script = sh(&format!("printf %s {arg}"));
        let words = sh(&format!(
            "set -- {}; printf '%s\\n' \"$@\"",
            script
                .replace("node --test", "")
                .replace("test/*.test.js", "")
        ));
        assert_eq!(
            words,
            "--test-name-pattern=(?:^|\\s)(?:it's \\(1\\) \\$HOME)$\n"
        );
    }

    #[test]
    fn compose_places_arguments() {
        let args = |r: &[&str], h: &[&str]| Args {
            runner: r.iter().map(|s| s.to_string()).collect(),
            harness: h.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            compose(
                "npm test -- --coverage",
                Framework::Jest,
                &args(&["--json"], &[])
            ),
            "npm test -- --coverage --json"
        );
        assert_eq!(
            compose("yarn test", Framework::Jest, &args(&["--json"], &[])),
            "yarn test --json"
        );
        assert_eq!(
            compose(
                "cargo test --workspace",
                Framework::Cargo,
                &args(&["--lib"], &["--exact", "a"])
            ),
            "cargo test --workspace --lib -- --exact a"
        );
        assert_eq!(
            compose(
                "cargo test -- --nocapture",
                Framework::Cargo,
                &args(&["--lib"], &[])
            ),
            "cargo test --lib -- --nocapture"
        );
        assert_eq!(
            compose(
                "python -m pytest",
                Framework::Pytest,
                &args(&["--junitxml=/tmp/a b.xml"], &[])
            ),
            "python -m pytest '--junitxml=/tmp/a b.xml'"
        );
        assert_eq!(
            compose("make test", Framework::Make, &Args::default()),
            "make test"
        );
    }
}
