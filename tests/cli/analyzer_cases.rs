//! The built-in analyzer on the shapes that fooled it on real suites
//! (issue 19), each recorded from a real run of a small project that
//! mirrors it (`fixtures/outputs/analyzer/`, sources in
//! `fixtures/outputs/sources/`, re-recorded by `record-analyzer.sh`). The
//! failures come from wfx's own parsers, the project is a git checkout of
//! the sources (so `.gitignore` applies): no runner is needed here.
//!
//! For every case the top modification point must be the function the bug
//! was injected into (see `fixtures/outputs/README.md`, "Analyzer cases"),
//! and environment failures must be classified `environment` with no
//! point at all.

use crate::common;

use common::{Env, copy_dir, failures_of, recorded, results_with};
use wfx::agents::builtin::{self, BuiltinAnalysis, How};
use wfx::artifacts::fix_history::FixHistory;
use wfx::artifacts::task::FailureKind;
use wfx::artifacts::test_results::Failure;
use wfx::render::Renderer;
use wfx::testing::parse::{ParsedRun, gotest, junit, libtest, nextest, tap};

/// A git checkout of `fixtures/outputs/sources/<name>`.
fn checkout(name: &str) -> Env {
    let env = Env::new();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/outputs/sources")
        .join(name);
    copy_dir(&src, &env.root);
    env.git_init_commit();
    env
}

struct Case {
    env: Env,
    failures: Vec<Failure>,
    log: String,
}

impl Case {
    fn new(name: &str, run: ParsedRun, log: String) -> Case {
        Case {
            env: checkout(name),
            failures: failures_of(&run),
            log,
        }
    }

    fn pytest(name: &str) -> Case {
        let run = junit::parse(&recorded(&format!("analyzer/{name}.junit.xml"))).unwrap();
        Case::new(name, run, recorded(&format!("analyzer/{name}.console.txt")))
    }

    /// vitest as wfx runs it: results from its JUnit report, the console
    /// as the log.
    fn vitest(name: &str) -> Case {
        let run = junit::parse(&recorded(&format!("analyzer/{name}.junit.xml"))).unwrap();
        Case::new(name, run, recorded(&format!("analyzer/{name}.console.txt")))
    }

    /// node --test as wfx runs it: results from TAP, spec on stdout.
    fn node(name: &str) -> Case {
        let run = tap::parse(&recorded(&format!("analyzer/{name}.tap.txt")));
        Case::new(name, run, recorded(&format!("analyzer/{name}.spec.txt")))
    }

    fn analyze(&self) -> BuiltinAnalysis {
        self.analyze_with(&FixHistory::default())
    }

    fn analyze_with(&self, history: &FixHistory) -> BuiltinAnalysis {
        let results = results_with(self.failures.clone(), "recorded");
        let a = builtin::analyze(&results, &self.log, &self.env.root, history);
        // Always a valid strategy, and a report that renders.
        let text = serde_json::to_string(&a.strategy).unwrap();
        wfx::artifacts::parse_artifact::<wfx::artifacts::FixStrategy>("s", &text).unwrap();
        let md = builtin::markdown(&Renderer::new(None), 1, &a).unwrap();
        assert!(md.contains("(quality: degraded)"));
        a
    }
}

fn top(a: &BuiltinAnalysis) -> String {
    a.points_text().first().cloned().unwrap_or_default()
}

#[test]
fn go_method_on_a_pointer_receiver_not_the_same_named_one() {
    let log = recorded("analyzer/go-guid.json");
    let case = Case::new(
        "go-guid",
        gotest::parse(&log, Some("example.com/guid")),
        log.clone(),
    );
    let a = case.analyze();
    // `(&uuid).Scan(…)` with `var uuid UUID`: sql.go's (*UUID).Scan, not
    // null.go's (*NullUUID).Scan, which sorts first.
    assert_eq!(top(&a), "sql.go:Scan:7-32");
    assert_eq!(a.points_text().len(), 1, "{:?}", a.points_text());
    assert_eq!(a.causes[0].how, Some(How::Typed));
    assert_eq!(a.strategy.failure_kind, Some(FailureKind::Code));
}

#[test]
fn js_method_on_a_class_instance_and_two_bugs_under_one_first_line() {
    let case = Case::node("node-luxon");
    // The parser keeps what differed, and the assertion's line (:6), not
    // the test's declaration (:5).
    let f = &case.failures;
    assert_eq!(
        f.iter()
            .map(|f| (f.test.as_str(), f.line, f.error.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "test/duration.test.js › Duration#toISOTime formats hours, minutes and seconds",
                Some(6),
                "Expected values to be strictly equal: '11:05:05.000' !== '11:05:07.000'"
            ),
            (
                "test/duration.test.js › Duration#toISOTime without milliseconds",
                Some(11),
                "Expected values to be strictly equal: '00:01:01' !== '00:01:30'"
            ),
            (
                "test/strings.test.js › capitalize",
                Some(6),
                "Expected values to be strictly equal: 'Hllo' !== 'Hello'"
            ),
        ]
    );
    let a = case.analyze();
    // `Duration.fromObject(…).toISOTime()`: the class's method, not the
    // module helper `toISOTime` in datetime.js.
    assert_eq!(
        a.points_text(),
        [
            "src/duration.js:toISOTime:30-40",
            "src/strings.js:capitalize:1-4"
        ]
    );
    // One signature, two places: two root causes, the larger first.
    assert_eq!(a.groups.len(), 1);
    assert_eq!(
        a.causes
            .iter()
            .map(|g| (g.tests.len(), g.points[0].as_str()))
            .collect::<Vec<_>>(),
        vec![
            (2, "src/duration.js:toISOTime:30-40"),
            (1, "src/strings.js:capitalize:1-4")
        ]
    );
    // The analysis names the same line as `wfx test`.
    assert_eq!(a.strategy.root_causes[1].line, Some(6));
}

#[test]
fn python_operator_on_a_class() {
    let case = Case::pytest("py-reldelta");
    let a = case.analyze();
    // `relativedelta(days=2) + td == …`: `__add__`, then `__eq__`.
    assert_eq!(top(&a), "datekit/relativedelta.py:__add__:30-41");
    assert_eq!(a.causes[0].how, Some(How::Typed));
}

#[test]
fn test_helper_is_context_never_the_place_to_fix() {
    let case = Case::pytest("py-dicttools");
    let a = case.analyze();
    assert_eq!(a.points_text(), ["dicttools/dicttoolz.py:merge_with:23-38"]);
    assert!(a.points_text().iter().all(|p| !p.starts_with("tests/")));
}

#[test]
fn git_ignored_build_output_maps_back_to_source() {
    let case = Case::node("node-uuid-dist");
    // The checkout has the built files (pretest made them) but git ignores
    // them.
    assert!(case.env.root.join("dist-node/parse.js").is_file());
    let a = case.analyze();
    assert_eq!(a.points_text(), ["src/parse.js:parse:3-26"]);
    // Both signatures (the crash and the missing exception) point there.
    assert_eq!(a.causes.len(), 2);
    assert!(
        a.causes
            .iter()
            .all(|g| g.points == ["src/parse.js:parse:3-26"])
    );
    assert!(
        a.causes[0]
            .context
            .iter()
            .any(|c| c.contains("dist-node/parse.js")),
        "{:?}",
        a.causes[0].context
    );
}

#[test]
fn every_group_of_158_failures_is_considered() {
    let case = Case::pytest("py-timekit");
    assert_eq!(case.failures.len(), 158);
    let a = case.analyze();
    assert_eq!(
        a.points_text(),
        [
            "timekit/parser.py:parse_date:12-21",
            "timekit/tz.py:offset_for:11-13",
            "timekit/easter.py:easter:5-17",
            "timekit/relativedelta.py:__sub__:15-18",
        ]
    );
    // Five signatures (one easter year crashes instead of comparing
    // unequal), four places; the group of 2 is the separate bug.
    assert_eq!(
        a.causes.iter().map(|g| g.tests.len()).collect::<Vec<_>>(),
        [102, 30, 23, 2, 1]
    );
    assert_eq!(
        a.causes[3].points,
        ["timekit/relativedelta.py:__sub__:15-18"]
    );
    // Nothing dropped from the tests to re-run.
    let affected = &a.strategy.test_execution.affected_tests;
    assert!(affected.len() >= 158);
    assert!(affected.contains(&"tests/test_tz.py::test_named_offset_lowercase[UTC]".to_string()));
}

#[test]
fn novelty_ranks_a_place_already_tried_lower() {
    let case = Case::pytest("py-timekit");
    let history: FixHistory = serde_json::from_value(serde_json::json!({
        "session_id": "WFS-t",
        "entries": [{
            "iteration": 1, "fix_task": "IMPL-fix-1", "agent": "manual",
            "started_at": "2026-01-01T00:00:00Z", "files_changed": ["timekit/parser.py"],
            "outcome": "no_change"
        }]
    }))
    .unwrap();
    let a = case.analyze_with(&history);
    // 102 failures counted as 51 after a failed attempt there: still
    // first; the tz group (30) is not moved above it, but the group is
    // marked and the confidence lowered.
    assert!(a.causes[0].seen_before);
    assert_eq!(top(&a), "timekit/parser.py:parse_date:12-21");
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("timekit/parser.py was already changed"))
    );
    let fresh = case.analyze();
    assert!(a.strategy.confidence_score < fresh.strategy.confidence_score);
}

#[test]
fn rust_panic_in_a_track_caller_helper() {
    let log = recorded("analyzer/rust-semverish.txt");
    let case = Case::new("rust-semverish", libtest::parse(&log), log.clone());
    let a = case.analyze();
    // test_caret → assert_match_all (helper, the line whose message was
    // printed) → VersionReq::matches (wrapper) → eval::matches_req
    // (wrapper) → matches_comparator → matches_caret (named like the test).
    assert_eq!(top(&a), "src/eval.rs:matches_caret:47-63");
    let ctx = &a.causes[0].context;
    assert!(
        ctx[0].starts_with("test helper assert_match_all"),
        "{ctx:?}"
    );
    assert_eq!(a.causes[0].how, Some(How::NameAffinity));
    assert!(a.causes[0].confidence <= 0.5);
}

fn environment(case: &Case, reason: &str, fix: &str) {
    let a = case.analyze();
    assert_eq!(a.strategy.failure_kind, Some(FailureKind::Environment));
    assert!(a.points_text().is_empty(), "{:?}", a.points_text());
    assert!(
        a.causes.iter().all(|g| g.kind == FailureKind::Environment),
        "{:?}",
        a.causes
    );
    let fixes = a.classification.environment_fixes();
    assert!(
        fixes.iter().any(|f| f.contains(reason) && f.contains(fix)),
        "{fixes:?}"
    );
    assert!(!a.classification.for_fix_agent());
    assert!(a.strategy.approach.contains("environment must be fixed"));
    // The pure function the loop calls says the same.
    let results = results_with(case.failures.clone(), "recorded");
    let c = builtin::classify_project(&results, &case.env.root);
    assert_eq!(c.kind, Some(FailureKind::Environment));
    assert_eq!(c.environment_fixes(), fixes);
}

#[test]
fn missing_dependency_is_the_environment() {
    environment(
        &Case::pytest("py-netkit"),
        "Python module `httpx` is not installed",
        "install the project's declared dependencies",
    );
}

/// humanize 4.17.0 freshly cloned: `src/humanize/_version.py` is
/// git-ignored (hatch-vcs writes it when the package is built), so every
/// module fails to import. Not a bug to send to a fix agent.
#[test]
fn a_missing_generated_module_is_the_environment() {
    let case = Case::pytest("py-humanize");
    environment(
        &case,
        "`src/humanize/_version.py` is missing and git-ignored, so a build or install step generates it (`ModuleNotFoundError: No module named 'humanize._version'`)",
        "pip install -e .",
    );
    // Generated once (the build step ran), the same module is no longer
    // missing; deleted without being ignored, it is lost code.
    case.env.write(".gitignore", "__pycache__/\n");
    let results = results_with(case.failures.clone(), "recorded");
    let c = builtin::classify_project(&results, &case.env.root);
    assert_ne!(c.kind, Some(FailureKind::Environment), "{c:?}");
}

#[test]
fn missing_time_zone_data_is_the_environment() {
    environment(
        &Case::pytest("py-meetings"),
        "time zone data is missing",
        "tzdata",
    );
}

#[test]
fn port_in_use_is_the_environment() {
    environment(
        &Case::node("node-port"),
        "a port the tests listen on is already in use",
        "stop the process holding the port",
    );
}

#[test]
fn the_analysis_markdown_shows_kind_confidence_and_evidence() {
    let case = Case::node("node-luxon");
    let a = case.analyze();
    let md = builtin::markdown(&Renderer::new(None), 1, &a).unwrap();
    for want in [
        "## Root Causes by Group",
        "code",
        "'Hllo' !== 'Hello'",
        "the receiver's type names it",
        "src/duration.js:toISOTime:30-40",
    ] {
        assert!(md.contains(want), "missing {want:?} in\n{md}");
    }
    let env_md =
        builtin::markdown(&Renderer::new(None), 1, &Case::node("node-port").analyze()).unwrap();
    assert!(env_md.contains("## Fix the Environment First"), "{env_md}");
}

/// A failure as a parser reports it, for the hand-made projects below.
fn failure_at(test: &str, file: &str, line: u32, error: &str, message: &str) -> Failure {
    Failure {
        test: test.into(),
        file: Some(file.into()),
        line: Some(line),
        error: error.into(),
        message: message.into(),
        criticality: wfx::artifacts::test_results::Criticality::Medium,
        test_type: wfx::artifacts::test_results::Layer::Unit,
        flaky: false,
        extra: Default::default(),
    }
}

/// When the text cannot tell which of several definitions a call reaches,
/// the analyzer says so, proposes each, and lowers its confidence instead
/// of picking one (a hand-made project: the shape, not a runner, matters).
#[test]
fn unsure_when_several_definitions_could_be_meant() {
    let env = Env::new();
    env.write(
        "shapes/circle.py",
        "class Circle:\n    def area(self):\n        return 3\n",
    );
    env.write(
        "shapes/square.py",
        "class Square:\n    def area(self):\n        return 4\n",
    );
    env.write(
        "shapes/factory.py",
        "from shapes.circle import Circle\nfrom shapes.square import Square\n\n\ndef make(kind):\n    return {'c': Circle, 's': Square}[kind]()\n",
    );
    env.write(
        "tests/test_shapes.py",
        "from shapes.factory import make\n\n\ndef test_area():\n    shape = make('c')\n    assert shape.area() == 3.14\n",
    );
    env.git_init_commit();
    let failure = failure_at(
        "tests/test_shapes.py::test_area",
        "tests/test_shapes.py",
        6,
        "assert 3 == 3.14",
        "",
    );
    let a = builtin::analyze(
        &results_with(vec![failure], "x"),
        "",
        &env.root,
        &FixHistory::default(),
    );
    assert_eq!(
        a.points_text(),
        ["shapes/circle.py:area:2-3", "shapes/square.py:area:2-3"]
    );
    assert_eq!(a.causes[0].how, Some(How::Ambiguous));
    assert_eq!(a.strategy.confidence_score, 0.25);
    assert!(
        a.strategy.root_causes[0]
            .cause
            .contains("unsure which definition")
    );
    assert!(a.notes.iter().any(|n| n.starts_with("unsure where")));
}

/// A Rust `use` path decides between same-named functions of two modules
/// (by name alone the analyzer would be unsure).
#[test]
fn rust_use_paths_pick_the_module() {
    let env = Env::new();
    env.write(
        "Cargo.toml",
        "[package]\nname = \"two-parsers\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("src/lib.rs", "pub mod json;\npub mod toml;\n");
    env.write(
        "src/json.rs",
        "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n",
    );
    env.write(
        "src/toml.rs",
        "pub fn parse(s: &str) -> usize {\n    s.len() + 1\n}\n",
    );
    env.write(
        "tests/parse.rs",
        "use two_parsers::toml::parse;\n\n#[test]\nfn parses_toml() {\n    assert_eq!(parse(\"a = 1\"), 5);\n}\n",
    );
    env.git_init_commit();
    let failure = failure_at(
        "parse::parses_toml",
        "tests/parse.rs",
        5,
        "assertion `left == right` failed: left 6, right 5",
        "thread 'parses_toml' panicked at tests/parse.rs:5:5:",
    );
    let a = builtin::analyze(
        &results_with(vec![failure], "x"),
        "",
        &env.root,
        &FixHistory::default(),
    );
    assert_eq!(a.points_text(), ["src/toml.rs:parse:1-3"]);
    assert_eq!(a.causes[0].how, Some(How::Imported));
}

// --- issue 32: the misses on real projects, each as a small project of the same shape ---

/// The points of an analysis without their line spans (`file:function`).
fn places(a: &BuiltinAnalysis) -> Vec<String> {
    a.points_text()
        .iter()
        .map(|p| {
            p.rsplit_once(':')
                .map_or(p.as_str(), |(place, _)| place)
                .to_string()
        })
        .collect()
}

/// A `#[should_panic]` test that returned: libtest names the test's own
/// line (`note: test did not panic as expected at src/lib.rs:32:8`), and
/// what the test calls is the place (cargo test and nextest alike; the
/// first release said "no location of this failure was found").
#[test]
fn a_should_panic_test_that_did_not_panic_points_at_what_it_calls() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/projects/rust-should-panic");
    for (log, run) in [
        (
            recorded("nextest-should-panic.txt"),
            nextest::parse(&recorded("nextest-should-panic.txt")),
        ),
        (
            recorded("cargo-test-should-panic.txt"),
            libtest::parse(&recorded("cargo-test-should-panic.txt")),
        ),
    ] {
        let env = Env::new();
        copy_dir(&src, &env.root);
        env.git_init_commit();
        let failures = failures_of(&run);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].error, "test did not panic as expected");
        let a = builtin::analyze(
            &results_with(failures, "recorded"),
            &log,
            &env.root,
            &FixHistory::default(),
        );
        assert_eq!(
            a.points_text(),
            ["src/lib.rs:check:14-19"],
            "{:?}",
            a.causes
        );
    }
}

/// smallvec's `dedup` is one line behind a `where` clause: a wrapper, so
/// `dedup_by` is the place. arrayvec's `write` panics on
/// `debug_assert!(_result.is_ok())`: the value comes from
/// `try_extend_from_slice`, one call down.
#[test]
fn rust_wrappers_with_where_clauses_and_assertions_on_a_callees_value() {
    let log = recorded("analyzer/rust-vecs.txt");
    let case = Case::new("rust-vecs", libtest::parse(&log), log.clone());
    let a = case.analyze();
    assert_eq!(
        places(&a),
        ["src/lib.rs:dedup_by", "src/lib.rs:try_extend_from_slice"],
        "{:?}",
        a.causes
    );
    let by_point = |p: &str| {
        a.causes
            .iter()
            .find(|g| g.points[0].starts_with(p))
            .unwrap()
    };
    let dedup = by_point("src/lib.rs:dedup_by");
    assert!(
        dedup
            .context
            .iter()
            .any(|c| c.starts_with("wrapper List.dedup")),
        "{:?}",
        dedup.context
    );
    let write = by_point("src/lib.rs:try_extend_from_slice");
    assert_eq!(write.how, Some(How::Crash));
    assert!(
        write.context[0].starts_with("raised in Buffer.write (src/lib.rs:94)"),
        "{:?}",
        write.context
    );
}

/// click's shapes: `type.convert(…)` with `type` from the
/// `@pytest.mark.parametrize` rows is `FloatRange`'s `convert`, found
/// through its bases in order (`_NumberRangeBase` before the
/// `_NumberParamTypeBase` of `FloatParamType`), whose class headers span
/// lines; help output missing `Options:` is traced from the literal
/// `"Options"` through `section` to `write_heading`, not to one of two
/// `invoke`s.
#[test]
fn python_overrides_parametrized_receivers_and_help_text() {
    let case = Case::pytest("py-clicky");
    let a = case.analyze();
    assert_eq!(
        places(&a),
        [
            "clicky/formatting.py:write_heading",
            "clicky/types.py:convert"
        ],
        "{:?}",
        a.causes
    );
    // Both help failures (`in`, and `==` on the lines): two signatures.
    let help: Vec<_> = a
        .causes
        .iter()
        .filter(|g| g.points[0].starts_with("clicky/formatting.py:write_heading"))
        .collect();
    assert_eq!(help.len(), 2, "{:?}", a.causes);
    assert_eq!(a.causes[0].how, Some(How::Text));
    assert!(
        a.causes[0]
            .context
            .iter()
            .any(|c| c.starts_with("passed on by HelpFormatter.section")),
        "{:?}",
        a.causes[0].context
    );
    // `_NumberRangeBase.convert`, not `ParamType`'s or `_NumberParamTypeBase`'s.
    assert_eq!(a.points_text()[1], "clicky/types.py:convert:49-55");
    let range = a
        .causes
        .iter()
        .find(|g| g.points[0].starts_with("clicky/types.py"))
        .unwrap();
    assert_eq!(range.how, Some(How::Typed));
}

/// luxon's shapes: a JSDoc `{@link Duration#toISOTime}` (whose `#` once
/// cut the line as a comment) and a template literal over lines before the
/// methods hid the class's methods; `DateTime.local(…).isInLeapYear` is a
/// getter that calls the helper where the bug is.
#[test]
fn js_methods_after_jsdoc_links_and_getters_that_call_helpers() {
    let case = Case::node("node-leapyear");
    let a = case.analyze();
    assert_eq!(
        places(&a),
        ["src/impl/util.js:isLeapYear", "src/duration.js:toISOTime"],
        "{:?}",
        a.causes
    );
    assert!(
        !a.points_text()
            .iter()
            .any(|p| p.starts_with("src/datetime.js:toISOTime"))
    );
    // isInLeapYear (a getter wrapping the helper) and daysInYear (a getter
    // wrapping a helper wrapping it): two signatures, one place.
    let leap: Vec<_> = a
        .causes
        .iter()
        .filter(|g| g.points[0].starts_with("src/impl/util.js:isLeapYear"))
        .collect();
    assert_eq!(leap.len(), 2, "{:?}", a.causes);
    assert!(
        leap.iter().any(|g| g
            .context
            .iter()
            .any(|c| c.starts_with("wrapper DateTime.daysInYear"))),
        "{leap:?}"
    );
}

/// The TypeScript shapes of magic-string and of an inherited method: a
/// bundled copy of the classes in `benchmark/` is never the place, and
/// `square.describe()` (defined on `Shape`) reaches `Square`'s `area`.
#[test]
fn ts_inherited_method_reaches_the_override_never_a_benchmark_copy() {
    let case = Case::vitest("vitest-shapes");
    assert_eq!(case.failures.len(), 2);
    let a = case.analyze();
    assert_eq!(
        a.points_text(),
        ["src/shapes.ts:area:19-21"],
        "{:?}",
        a.causes
    );
    assert!(
        a.causes[0].context[0].starts_with("wrapper Shape.describe"),
        "{:?}",
        a.causes[0].context
    );
}

/// vitest reads a file filter as a substring of the path: the command wfx
/// composes for a subset is the one recorded, and it ran the two tests;
/// the regex-escaped filter of the first release found no test file.
#[test]
fn a_vitest_subset_runs_the_selected_tests() {
    use wfx::testing::{Detected, Framework, select};
    let ids: Vec<String> = [
        "test/shapes.test.ts › Square › describes itself with its area",
        "test/shapes.test.ts › Square › describes a unit square",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let command =
        select::filter_command(&Detected::new(Framework::Vitest, "npm test"), &ids).unwrap();
    assert_eq!(
        command,
        "npm test -- test/shapes.test.ts -t '^(?:Square(?: | > )describes itself with its area|Square(?: | > )describes a unit square)$'"
    );
    let strip = |s: String| {
        regex::Regex::new(r"\x1b\[[0-9;]*m")
            .unwrap()
            .replace_all(&s, "")
            .into_owned()
    };
    let ran = strip(recorded("analyzer/vitest-shapes.subset.txt"));
    assert!(ran.contains("vitest run test/shapes.test.ts -t"), "{ran}");
    assert!(ran.contains("Tests  2 failed | 2 skipped (4)"), "{ran}");
    let escaped = strip(recorded("analyzer/vitest-shapes.subset-escaped.txt"));
    assert!(escaped.contains("No test files found"), "{escaped}");
    assert!(
        escaped.contains("filter: test/shapes/.test/.ts"),
        "{escaped}"
    );
}
