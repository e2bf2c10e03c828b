use super::*;
use crate::artifacts::iteration_state::IterationRecord;
use crate::artifacts::test_results::Scope;
use crate::testing::parse::{ParsedCase, ParsedRun, Status};
use crate::testing::results::{RunFacts, build};

fn facts(scope: Scope, exit: Option<i32>) -> RunFacts<'static> {
    RunFacts {
        command: "cargo test".into(),
        framework: Framework::Cargo,
        scope,
        exit_code: exit,
        timed_out_after: None,
        signal: None,
        duration_ms: 1,
        setup_ms: None,
        output_tail: "error: could not compile `x`\n",
        output_log: None,
        truncated: false,
        started_at: None,
        previous: None,
        notes: Vec::new(),
    }
}

fn case(id: &str, status: Status, file: Option<&str>) -> ParsedCase {
    ParsedCase {
        id: id.into(),
        status,
        file: file.map(str::to_string),
        error: if status == Status::Failed {
            "assertion failed".into()
        } else {
            String::new()
        },
        ..ParsedCase::default()
    }
}

fn results(scope: Scope, cases: Vec<ParsedCase>) -> TestResults {
    let failing = cases
        .iter()
        .any(|c| matches!(c.status, Status::Failed | Status::Error));
    let run = ParsedRun {
        parser: "libtest",
        cases,
        ..ParsedRun::default()
    };
    build(run, facts(scope, Some(if failing { 101 } else { 0 })))
}

/// A suite of `n` passing tests `t/test_k.py::tK` plus the failing ids.
fn suite(n: usize, failing: &[&str]) -> TestResults {
    let mut cases: Vec<ParsedCase> = (0..n)
        .map(|k| {
            let file = format!("t/test_{}.py", k % 5);
            case(&format!("{file}::t{k}"), Status::Passed, Some(&file))
        })
        .collect();
    for f in failing {
        let file = f.split("::").next().unwrap();
        cases.push(case(f, Status::Failed, Some(file)));
    }
    results(Scope::Full, cases)
}

fn input<'a>(baseline: &'a TestResults) -> RetestInput<'a> {
    RetestInput {
        baseline,
        progressive: true,
        can_filter: true,
        touched_tests: false,
        // The fix changed a source file no test is known to import.
        changed_files: Box::leak(Box::new(ids(&["src/app.py"]))),
        import_map: &[],
        strategy: &[],
        related: &[],
        costs: SessionCosts::default(),
    }
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn reasons_to_run_everything() {
    let b = suite(10, &["t/test_0.py::bad"]);
    let empty = results(Scope::Full, vec![]);
    let mut with_static = b.clone();
    with_static.failures[0].test_type = Layer::Static;
    for (input, want) in [
        (
            RetestInput {
                progressive: false,
                ..input(&b)
            },
            FullReason::ProgressiveOff,
        ),
        (
            RetestInput {
                can_filter: false,
                ..input(&b)
            },
            FullReason::CannotFilter,
        ),
        (
            RetestInput {
                touched_tests: true,
                ..input(&b)
            },
            FullReason::TestsChanged,
        ),
        (input(&empty), FullReason::NoCases),
        (input(&with_static), FullReason::StaticErrors),
    ] {
        let p = plan(&input);
        assert_eq!(p.full, Some(want.clone()));
        assert_eq!(next(&p, None), NextRun::Full(want));
    }
}

#[test]
fn tier_one_is_the_failing_tests_and_tier_two_the_affected_rest() {
    let b = suite(20, &["t/test_0.py::bad", "t/test_1.py::worse"]);
    let changed = ids(&["src/calc.py"]);
    let import_map = vec![
        ("t/test_1.py".to_string(), ids(&["src/calc.py"])),
        ("t/test_2.py".to_string(), ids(&["src/other.py"])),
    ];
    let strategy = ids(&["t/test_3.py::t3", "nope::unknown"]);
    let related = ids(&["t/test_4.py"]);
    let p = plan(&RetestInput {
        changed_files: &changed,
        import_map: &import_map,
        strategy: &strategy,
        related: &related,
        ..input(&b)
    });
    assert_eq!(p.suite, 22);
    assert_eq!(
        p.failed,
        Selection::Run(ids(&["t/test_0.py::bad", "t/test_1.py::worse"]))
    );
    // test_1's file by imports (minus `worse`, already in tier 1), the
    // strategy's id, test_4's file from the related query; the unknown id
    // is dropped.
    assert_eq!(
        p.affected,
        Selection::Run(ids(&[
            "t/test_1.py::t1",
            "t/test_1.py::t6",
            "t/test_1.py::t11",
            "t/test_1.py::t16",
            "t/test_3.py::t3",
            "t/test_4.py::t4",
            "t/test_4.py::t9",
            "t/test_4.py::t14",
            "t/test_4.py::t19",
        ]))
    );
}

#[test]
fn a_tier_of_80_percent_or_more_runs_the_full_suite() {
    // 10 tests run in the suite (one skipped does not count).
    let mut cases: Vec<ParsedCase> = (0..10)
        .map(|k| case(&format!("t/a.py::t{k}"), Status::Passed, Some("t/a.py")))
        .collect();
    cases.push(case("t/a.py::skipped", Status::Skipped, Some("t/a.py")));
    for (failing, want_full) in [(7, false), (8, true), (10, true)] {
        let mut cs = cases.clone();
        for c in cs.iter_mut().take(failing) {
            c.status = Status::Failed;
        }
        let b = results(Scope::Full, cs);
        let p = plan(&input(&b));
        assert_eq!(p.suite, 10);
        match (next(&p, None), want_full) {
            (NextRun::Full(FullReason::TooLarge { tier, count, suite }), true) => {
                assert_eq!((tier, count, suite), (Tier::Failed, failing, 10));
            }
            (NextRun::Tier { tier, ids }, false) => {
                assert_eq!((tier, ids.len()), (Tier::Failed, failing));
            }
            (other, _) => panic!("{failing} failing: {other:?}"),
        }
    }
    // Tier 2 too: 1 failing, 8 affected of 10 → straight to validation
    // after tier 1.
    let mut cs = cases.clone();
    cs[0].status = Status::Failed;
    let b = results(Scope::Full, cs);
    let strategy: Vec<String> = (1..9).map(|k| format!("t/a.py::t{k}")).collect();
    let p = plan(&RetestInput {
        strategy: &strategy,
        ..input(&b)
    });
    assert!(matches!(
        p.affected,
        Selection::Full(FullReason::TooLarge {
            tier: Tier::Affected,
            count: 8,
            suite: 10
        })
    ));
    assert_eq!(
        next(&p, Some((Tier::Failed, Outcome::Passed))),
        NextRun::Full(FullReason::Validation)
    );
    // A fix that changed no file: the failing tests again and no more,
    // unless they now pass (then only a full run completes).
    let p = plan(&RetestInput {
        changed_files: &[],
        ..input(&b)
    });
    assert!(p.nothing_changed);
    assert_eq!(
        next(&p, Some((Tier::Failed, Outcome::Failing))),
        NextRun::Done
    );
    assert_eq!(
        next(&p, Some((Tier::Failed, Outcome::Passed))),
        NextRun::Full(FullReason::Validation)
    );
}

/// A run record as the cycle writes it, with its timings.
fn record(scope: Scope, tier: Option<Tier>, ms: u64, setup: Option<u64>) -> IterationRecord {
    let mut r: IterationRecord = serde_json::from_value(serde_json::json!({
        "iteration": 1, "run": 1, "started_at": "2026-01-01T00:00:00Z", "scope": "full",
        "pass_rate": 90.0, "total": 10, "passed": 9, "failed": 1
    }))
    .unwrap();
    r.scope = scope;
    r.tier = tier;
    r.duration_ms = Some(ms);
    r.setup_ms = setup;
    r
}

#[test]
fn the_sessions_timings_decide_whether_a_tier_can_save_time() {
    use Scope::{Affected, Full};
    // (records, tier size of a 100-test suite, tier runs?)
    let full = |ms, setup| record(Full, None, ms, setup);
    let tier1 = |ms, setup| record(Affected, Some(Tier::Failed), ms, setup);
    let rows: Vec<(Vec<IterationRecord>, usize, bool)> = vec![
        // No timings (older records, fake runs): tiers as always.
        (vec![], 5, true),
        (vec![record(Full, None, 20_000, None)], 5, true),
        // pytest: 1 s of startup in a 20 s run.
        (vec![full(20_000, Some(1_000))], 5, true),
        // `npm test` with a `pretest` build of 17 s in a 20 s run
        // (uuid): 5 tests would take 17.15 s ≥ 16 s.
        (vec![full(20_000, Some(17_000))], 5, false),
        // …and a tier of 70 tests would anyway.
        (vec![full(20_000, Some(1_000))], 85, true),
        // A cargo rebuild seen in tier 1 after a quick baseline: tier 2
        // would pay it again.
        (
            vec![full(2_000, Some(300)), tier1(9_000, Some(8_500))],
            5,
            false,
        ),
        // A later full run resets what the fixed cost is.
        (
            vec![
                full(2_000, Some(300)),
                tier1(9_000, Some(8_500)),
                full(2_000, Some(300)),
            ],
            5,
            true,
        ),
    ];
    let b = suite(100, &["t/test_0.py::bad"]);
    for (i, (records, count, runs)) in rows.iter().enumerate() {
        let costs = SessionCosts::of(records, true);
        let ids: Vec<String> = (1..=*count)
            .map(|k| format!("t/test_{k}.py::t{k}"))
            .collect();
        let p = plan(&RetestInput {
            strategy: &ids,
            costs,
            ..input(&b)
        });
        match (&p.affected, runs) {
            (Selection::Run(_), true) => {}
            (Selection::Full(FullReason::TooSlow { tier, .. }), false) => {
                assert_eq!(*tier, Tier::Affected);
                assert!(matches!(
                    p.failed,
                    Selection::Full(FullReason::TooSlow { .. })
                ));
            }
            (other, _) if *count >= 80 => {
                assert!(
                    matches!(other, Selection::Full(FullReason::TooLarge { .. })),
                    "row {i}"
                );
            }
            (other, _) => panic!("row {i}: {other:?} ({costs:?})"),
        }
        // With `cycle.skip_slow_tiers` off the timings decide nothing.
        let off = SessionCosts::of(records, false);
        assert_eq!(off.predict(*count, 100), None, "row {i}");
    }
    let slow = SessionCosts::of(&[full(20_000, Some(17_000))], true);
    assert_eq!(slow.predict(5, 100), Some((17_150, 20_000)));
    let reason = FullReason::TooSlow {
        tier: Tier::Failed,
        predicted_ms: 17_150,
        full_ms: 20_000,
    };
    assert!(
        reason
            .to_string()
            .starts_with("the failed tier would take about 17 s of the full suite's 20 s"),
        "{reason}"
    );
}

#[test]
fn after_a_subset_that_ran_nothing_the_session_runs_the_full_suite() {
    let b = suite(10, &["t/test_0.py::bad"]);
    let mut nothing = record(Scope::Affected, Some(Tier::Failed), 3_000, None);
    nothing.escalated = Some(Escalation::NothingRan.to_string());
    nothing.total = 0;
    nothing.passed = 0;
    // The command's own failure is all an unfiltered run parsed.
    let mut exit_only = nothing.clone();
    exit_only.escalated = Some("could not run the tests: No test files found".into());
    exit_only.total = 1;
    exit_only.failed = 1;
    for r in [nothing, exit_only] {
        let costs = SessionCosts::of(std::slice::from_ref(&r), true);
        assert!(costs.subset_ran_nothing);
        let p = plan(&RetestInput { costs, ..input(&b) });
        assert_eq!(p.full, Some(FullReason::SubsetRanNothing));
        assert_eq!(next(&p, None), NextRun::Full(FullReason::SubsetRanNothing));
    }
    // A subset that ran tests but missed one selected test is not that.
    let mut missed = record(Scope::Affected, Some(Tier::Failed), 3_000, None);
    missed.escalated = Some("did not report 1 selected test(s): x".into());
    missed.total = 18;
    missed.passed = 17;
    assert!(!SessionCosts::of(&[missed], true).subset_ran_nothing);
}

#[test]
fn a_duplicated_name_runs_the_full_suite() {
    // The runner reported `x::check` twice: kept as `x::check#2`.
    let b = results(
        Scope::Full,
        vec![
            case("x::check", Status::Failed, None),
            case("x::check", Status::Passed, None),
            case("x::other", Status::Passed, None),
            case("x::more", Status::Passed, None),
            case("x::most", Status::Passed, None),
        ],
    );
    assert_eq!(b.cases[1].test, "x::check#2");
    let p = plan(&input(&b));
    assert_eq!(
        next(&p, None),
        NextRun::Full(FullReason::Duplicated {
            tier: Tier::Failed,
            test: "x::check".into()
        })
    );
    // A caller that ran such a subset anyway gets no merged result.
    let sel = ids(&["x::check"]);
    assert_eq!(duplicated_in(&b, &sel), Some(&sel[0]));
    let sub = subset(vec![
        case("x::check", Status::Passed, None),
        case("x::check", Status::Failed, None),
    ]);
    assert_eq!(
        merge_tier(&b, &sel, &sub),
        TierResult::Escalate(Escalation::Duplicated("x::check".into()))
    );
}

#[test]
fn what_comes_after_each_tier() {
    let b = suite(20, &["t/test_0.py::bad"]);
    let strategy = ids(&["t/test_2.py::t2"]);
    let p = plan(&RetestInput {
        strategy: &strategy,
        ..input(&b)
    });
    let t1 = NextRun::Tier {
        tier: Tier::Failed,
        ids: ids(&["t/test_0.py::bad"]),
    };
    let t2 = NextRun::Tier {
        tier: Tier::Affected,
        ids: ids(&["t/test_2.py::t2"]),
    };
    let esc = Escalation::NothingRan;
    for (last, want) in [
        (None, t1),
        // A fix that leaves a test failing may have broken others too:
        // tier 2 still runs, so the next fix is not blamed for it.
        (Some((Tier::Failed, Outcome::Failing)), t2.clone()),
        (Some((Tier::Failed, Outcome::Passed)), t2.clone()),
        (
            Some((Tier::Failed, Outcome::Escalated(esc.clone()))),
            NextRun::Full(FullReason::Escalated(esc.clone())),
        ),
        (Some((Tier::Affected, Outcome::Failing)), NextRun::Done),
        (
            Some((Tier::Affected, Outcome::Passed)),
            NextRun::Full(FullReason::Validation),
        ),
        (
            Some((Tier::Affected, Outcome::Escalated(esc.clone()))),
            NextRun::Full(FullReason::Escalated(esc)),
        ),
        (Some((Tier::Full, Outcome::Passed)), NextRun::Done),
        (Some((Tier::Full, Outcome::Failing)), NextRun::Done),
    ] {
        assert_eq!(next(&p, last.clone()), want, "after {last:?}");
    }
    // No test failed before the fix (e.g. the baseline was merged): tier 2
    // first; nothing at all → the full suite.
    let clean = suite(20, &[]);
    let p = plan(&RetestInput {
        strategy: &strategy,
        ..input(&clean)
    });
    assert_eq!(next(&p, None), t2);
    assert_eq!(
        next(&plan(&input(&clean)), None),
        NextRun::Full(FullReason::NothingSelected)
    );
    // Tier 1 passed and nothing else is affected: validate; tier 1 failed:
    // the full suite judges the fix.
    let p = plan(&input(&b));
    assert_eq!(
        next(&p, Some((Tier::Failed, Outcome::Failing))),
        NextRun::Full(FullReason::Unverified)
    );
    assert_eq!(
        next(&p, Some((Tier::Failed, Outcome::Passed))),
        NextRun::Full(FullReason::Validation)
    );
}

#[test]
fn a_test_importing_a_package_is_affected_by_its_modules() {
    // more-itertools: both test files import the package, whose
    // `__init__.py` re-exports `more.py` and `recipes.py`.
    let map = vec![
        (
            "tests/test_more.py".to_string(),
            ids(&["more_itertools/__init__.py"]),
        ),
        (
            "tests/test_recipes.py".to_string(),
            ids(&["more_itertools/__init__.py"]),
        ),
        ("tests/test_other.py".to_string(), ids(&["other/util.py"])),
        ("test/a.test.js".to_string(), ids(&["src/index.js"])),
        ("tests/it.rs".to_string(), ids(&["src/lib.rs"])),
    ];
    assert_eq!(
        affected_test_files(&ids(&["more_itertools/more.py"]), &map),
        ids(&["tests/test_more.py", "tests/test_recipes.py"])
    );
    assert_eq!(
        affected_test_files(&ids(&["src/util/x.js"]), &map),
        ids(&["test/a.test.js", "tests/it.rs"])
    );
    assert_eq!(
        affected_test_files(&ids(&["other/util.py", "tests/test_more.py"]), &map),
        ids(&["tests/test_more.py", "tests/test_other.py"])
    );
    assert!(affected_test_files(&ids(&["docs/x.md"]), &map).is_empty());
}

#[test]
fn rust_sources_name_the_unit_tests_of_their_modules() {
    let b = results(
        Scope::Full,
        vec![
            case(
                "rust_calc::stats::tests::mean",
                Status::Passed,
                Some("src/lib.rs"),
            ),
            case("rust_calc::tests::add", Status::Passed, Some("src/lib.rs")),
            case(
                "rust_calc::parse::num::tests::x",
                Status::Passed,
                Some("src/lib.rs"),
            ),
            case(
                "integration::adds",
                Status::Passed,
                Some("tests/integration.rs"),
            ),
            case(
                "rust_calc::src/lib.rs - add (line 3)",
                Status::Passed,
                Some("src/lib.rs"),
            ),
        ],
    );
    assert_eq!(
        resolve(&b, &ids(&["src/stats.rs"])),
        ids(&["rust_calc::stats::tests::mean"])
    );
    assert_eq!(
        resolve(&b, &ids(&["src/parse/num.rs", "tests/integration.rs"])),
        ids(&["rust_calc::parse::num::tests::x", "integration::adds"])
    );
    assert_eq!(resolve(&b, &ids(&["src/unknown.rs"])), Vec::<String>::new());
}

#[test]
fn javascript_ids_resolve_by_their_file() {
    let b = results(
        Scope::Full,
        vec![
            case("test/a.test.js › adds", Status::Passed, None),
            case("dist/test/a.test.js › adds", Status::Passed, None),
        ],
    );
    assert_eq!(
        resolve(&b, &ids(&["test/a.test.js"])),
        ids(&["test/a.test.js › adds"])
    );
    assert_eq!(
        resolve(&b, &ids(&["dist"])),
        ids(&["dist/test/a.test.js › adds"])
    );
}

fn subset(cases: Vec<ParsedCase>) -> TestResults {
    results(Scope::Affected, cases)
}

#[test]
fn merging_keys_on_unique_ids() {
    // `check` in tests/a.rs and tests/b.rs: a::check failed, b::check passed.
    let base = results(
        Scope::Full,
        vec![
            case(
                "same_name::tests::check",
                Status::Passed,
                Some("src/lib.rs"),
            ),
            case("a::check", Status::Failed, Some("tests/a.rs")),
            case("b::check", Status::Passed, Some("tests/b.rs")),
        ],
    );
    assert_eq!(base.pass_rate, 66.6);
    // The filter `--exact check` runs every `check`: all pass now.
    let sub = subset(vec![
        case("same_name::tests::check", Status::Passed, None),
        case("a::check", Status::Passed, None),
        case("b::check", Status::Passed, None),
    ]);
    match merge_tier(&base, &ids(&["a::check"]), &sub) {
        TierResult::Merged { results, passed } => {
            assert!(passed);
            assert_eq!((results.total, results.passed, results.failed), (3, 3, 0));
            assert_eq!(results.pass_rate, 100.0);
            assert_eq!(results.scope, Scope::Affected);
        }
        other => panic!("{other:?}"),
    }
    // Only a::check still fails: one failure, nothing else touched.
    let sub = subset(vec![case("a::check", Status::Failed, None)]);
    match merge_tier(&base, &ids(&["a::check"]), &sub) {
        TierResult::Merged { results, passed } => {
            assert!(!passed);
            assert_eq!(results::failing_ids(&results), ids(&["a::check"]));
            assert_eq!(results.total, 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn subset_runs_that_judge_nothing_escalate() {
    let base = suite(4, &["t/test_0.py::bad"]);
    let sel = ids(&["t/test_0.py::bad"]);
    // node took the filter for a file: no output it could parse, exit 7.
    let exit_code = build(ParsedRun::default(), facts(Scope::Affected, Some(7)));
    assert_eq!(exit_code.parser, "exit-code");
    assert!(matches!(
        merge_tier(&base, &sel, &exit_code),
        TierResult::Escalate(Escalation::ExecutionError(_))
    ));
    // The filter matched nothing: exit 0, no tests.
    let nothing = build(ParsedRun::new("tap"), facts(Scope::Affected, Some(0)));
    assert!(matches!(
        merge_tier(&base, &sel, &nothing),
        TierResult::Escalate(Escalation::ExecutionError(e)) if e == "no tests found"
    ));
    // A build error the fix introduced.
    let mut broken = ParsedRun::new("libtest");
    broken.static_errors.push(ParsedCase {
        id: "src/lib.rs".into(),
        status: Status::Error,
        error: "error[E0308]: mismatched types".into(),
        layer: Some(Layer::Static),
        ..ParsedCase::default()
    });
    let broken = build(broken, facts(Scope::Affected, Some(101)));
    assert_eq!(
        merge_tier(&base, &sel, &broken),
        TierResult::Escalate(Escalation::ExecutionError(
            "error[E0308]: mismatched types".into()
        ))
    );
    // Only skipped tests came back.
    let skipped = subset(vec![case("t/test_0.py::bad", Status::Skipped, None)]);
    assert!(matches!(
        merge_tier(&base, &sel, &skipped),
        TierResult::Escalate(_)
    ));
    // The selected test is not in the output.
    let other = subset(vec![case("t/test_1.py::t1", Status::Passed, None)]);
    assert_eq!(
        merge_tier(&base, &sel, &other),
        TierResult::Escalate(Escalation::Missing(sel.clone()))
    );
    // An old results file naming one test twice.
    let mut dup = base.clone();
    dup.cases.push(dup.cases[0].clone());
    let ok = subset(vec![case("t/test_0.py::bad", Status::Passed, None)]);
    assert!(matches!(
        merge_tier(&dup, &sel, &ok),
        TierResult::Escalate(Escalation::DuplicateIds(_))
    ));
    assert!(matches!(
        merge_tier(&base, &sel, &ok),
        TierResult::Merged { passed: true, .. }
    ));
}

fn detected(framework: Framework, command: &str) -> Detected {
    Detected::new(framework, command)
}

#[test]
fn related_queries_per_runner() {
    let changed = ids(&["src/a b.js", "src/c.js"]);
    let q = |d: &Detected, setup: &RelatedSetup| related_query(d, &changed, setup);
    let none = RelatedSetup::default();
    assert_eq!(
        q(&detected(Framework::Jest, "npx jest"), &none),
        Some(RelatedQuery {
            command: "npx jest --listTests --findRelatedTests 'src/a b.js' src/c.js".into(),
            format: RelatedFormat::Paths
        })
    );
    assert_eq!(
        q(&detected(Framework::Vitest, "npx vitest run"), &none),
        None
    );
    assert_eq!(
        q(&detected(Framework::Pytest, "python -m pytest"), &none),
        None
    );
    let testmon = RelatedSetup {
        testmon: true,
        ..RelatedSetup::default()
    };
    assert_eq!(
        q(&detected(Framework::Pytest, "python -m pytest"), &testmon)
            .unwrap()
            .command,
        "python -m pytest --testmon --collect-only -q"
    );
    let one_crate = RelatedSetup {
        packages: vec![(String::new(), "calc".into())],
        ..RelatedSetup::default()
    };
    let nextest = detected(Framework::Nextest, "cargo nextest run");
    assert_eq!(
        q(&nextest, &one_crate),
        None,
        "rdeps of the only crate = all"
    );
    let workspace = RelatedSetup {
        packages: vec![
            (String::new(), "root".into()),
            ("crates/core".into(), "core".into()),
            ("crates/cli".into(), "my_cli".into()),
        ],
        ..RelatedSetup::default()
    };
    assert_eq!(
        related_query(&nextest, &ids(&["crates/core/src/lib.rs"]), &workspace)
            .unwrap()
            .command,
        "cargo nextest list --message-format oneline -E 'rdeps(/^core$/)'"
    );
    let configured = RelatedSetup {
        configured: Some("./related.sh {files}".into()),
        ..RelatedSetup::default()
    };
    assert_eq!(
        q(&detected(Framework::Custom, "./t.sh"), &configured)
            .unwrap()
            .command,
        "./related.sh 'src/a b.js' src/c.js"
    );
    assert_eq!(
        related_query(
            &nextest,
            &ids(&["crates/cli/src/main.rs", "crates/core/x.rs"]),
            &workspace
        )
        .unwrap()
        .command,
        "cargo nextest list --message-format oneline -E 'rdeps(/^my[-_]cli$/) | rdeps(/^core$/)'"
    );
    assert_eq!(related_query(&nextest, &[], &workspace), None);
}

#[test]
fn related_outputs() {
    let jest = "\n> calc@1.0.0 test\n> jest --listTests --findRelatedTests src/math.js\n\n/p/root/test/math.test.js\n/p/root/test/more.test.js\n";
    assert_eq!(
        parse_related(RelatedFormat::Paths, jest, "/p/root"),
        ids(&["test/math.test.js", "test/more.test.js"])
    );
    let nextest = "    Finished `test` profile [unoptimized] target(s) in 0.1s\ncore tests::a\ncore::it b\ncli x::y\n";
    assert_eq!(
        parse_related(RelatedFormat::NextestList, nextest, "/p"),
        ids(&["core tests::a", "core::it b", "cli x::y"])
    );
    let pytest = "tests/test_a.py::test_x\ntests/test_a.py::T::test_y[1]\n\n2/10 tests collected (8 deselected) in 0.01s\n";
    assert_eq!(
        parse_related(RelatedFormat::PytestIds, pytest, "/p"),
        ids(&["tests/test_a.py::test_x", "tests/test_a.py::T::test_y[1]"])
    );
}
