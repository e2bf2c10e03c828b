//! Retest tiers on a real suite (issue #16): what a retest costs against a
//! full run, through wfx's own runner (`testing::run_tests`) and tier API
//! (`testing::retest`). Driven by `scripts/bench_retest.py`, which downloads
//! the suite; run alone:
//!
//! ```text
//! cargo bench --bench retest --profile dev -- SUITE_DIR RUNS BUG_A BUG_B
//! ```
//!
//! `BUG_X` is `file|correct text|buggy text`. Per run, in a fresh copy of
//! the suite with both bugs injected:
//!
//! 1. the full suite (the baseline before any fix);
//! 2. (a) a fix of bug A only: the tiers until the retest is done — tier 1
//!    must still fail, on bug B, and settle the partial fix
//!    (`retest::settles_partial_fix`);
//! 3. (b) from the baseline again, the correct fix of both bugs: every tier
//!    before the final validation, then the validation (must pass).
//!
//! Prints one JSON object per run and, last, the medians. Costs are the
//! test commands' own durations (`duration_ms`).

use std::path::{Path, PathBuf};

use serde_json::json;
use wfx::artifacts::config::TestConfig;
use wfx::artifacts::test_results::TestResults;
use wfx::phases::context::{GatherInput, gather};
use wfx::testing::retest::{self, NextRun, Outcome, RetestInput, Tier, TierResult};
use wfx::testing::{Detected, RunRequest, detect, run_tests};

struct Bug {
    file: String,
    good: String,
    bad: String,
}

fn parse_bug(spec: &str) -> Bug {
    let mut parts = spec.splitn(3, '|');
    let (Some(file), Some(good), Some(bad)) = (parts.next(), parts.next(), parts.next()) else {
        panic!("a bug is `file|correct text|buggy text`: {spec}");
    };
    Bug {
        file: file.into(),
        good: good.into(),
        bad: bad.into(),
    }
}

fn replace(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).expect("suite file");
    assert!(text.contains(from), "{file}: `{from}` not found");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

fn copy_dir(src: &Path, dst: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(dst)
        .status()
        .expect("cp");
    assert!(status.success());
}

struct Runner {
    root: PathBuf,
    detected: Detected,
    count: u32,
}

impl Runner {
    fn run(&mut self, subset: Option<Vec<String>>) -> TestResults {
        self.count += 1;
        let dir = self.root.join(".workflow/.cache/bench");
        let mut req = RunRequest::new(
            &self.root,
            self.detected.clone(),
            dir.join("junit"),
            dir.join(format!("run-{}.log", self.count)),
        );
        req.subset = subset;
        run_tests(req).expect("tests run")
    }

    /// The tiers for one fix, until the retest is done or only the final
    /// validation is left. Returns the tiers run with their costs (ms), what
    /// runs next, the affected tier, and the results merged so far.
    fn tiers(
        &mut self,
        baseline: &TestResults,
        changed: &[String],
        import_map: &[(String, Vec<String>)],
    ) -> (Vec<(Tier, usize, u64)>, NextRun, String, TestResults) {
        let plan = retest::plan(&RetestInput {
            baseline,
            progressive: true,
            can_filter: retest::can_filter(self.detected.framework),
            touched_tests: false,
            changed_files: changed,
            import_map,
            strategy: &[],
            related: &[],
            costs: Default::default(),
        });
        let affected = match &plan.affected {
            retest::Selection::Run(ids) => format!("{} test(s)", ids.len()),
            retest::Selection::Empty => "none".to_string(),
            retest::Selection::Full(why) => why.to_string(),
        };
        let mut merged = baseline.clone();
        let mut last = None;
        let mut ran = Vec::new();
        loop {
            match retest::next(&plan, last.take()) {
                NextRun::Tier { tier, ids } => {
                    let sub = self.run(Some(ids.clone()));
                    ran.push((tier, ids.len(), sub.duration_ms));
                    last = Some(match retest::merge_tier(&merged, &ids, &sub) {
                        TierResult::Merged { results, passed } => {
                            merged = *results;
                            (tier, Outcome::of(passed))
                        }
                        TierResult::Escalate(why) => (tier, Outcome::Escalated(why)),
                    });
                }
                other => return (ran, other, affected, merged),
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let [suite, runs, bug_a, bug_b] = args.as_slice() else {
        eprintln!("usage: retest SUITE_DIR RUNS 'file|good|bad' 'file|good|bad'");
        std::process::exit(2);
    };
    let suite = PathBuf::from(suite);
    let runs: usize = runs.parse().expect("RUNS");
    let (a, b) = (parse_bug(bug_a), parse_bug(bug_b));
    let (mut fulls, mut costs_a, mut costs_b) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=runs {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("suite");
        std::fs::create_dir_all(&root).expect("mkdir");
        copy_dir(&suite, &root);
        let root = root.canonicalize().expect("root");
        for bug in [&a, &b] {
            replace(&root, &bug.file, &bug.good, &bug.bad);
        }
        let detected = detect(&root, &TestConfig::default()).expect("a test command");
        let import_map: Vec<(String, Vec<String>)> = gather(&GatherInput {
            root: &root,
            session_id: "WFS-bench",
            description: "bench",
            framework: None,
            source: None,
        })
        .expect("context")
        .package
        .test_coverage
        .existing_tests
        .into_iter()
        .map(|t| (t.test_file, t.implementation_files))
        .collect();
        let mut runner = Runner {
            root: root.clone(),
            detected,
            count: 0,
        };
        let baseline = runner.run(None);
        assert!(baseline.failed > 0, "the bugs fail tests");

        // (a) a fix that leaves bug B failing.
        replace(&root, &a.file, &a.bad, &a.good);
        let (tiers_a, after_a, _, merged_a) =
            runner.tiers(&baseline, std::slice::from_ref(&a.file), &import_map);
        // Tier 1 caught bug B; the fix made A's tests pass, so it is settled
        // there (a partial fix: no full run), as the cycle does.
        let improved = merged_a.pass_rate > baseline.pass_rate;
        assert!(
            after_a == NextRun::Done || retest::settles_partial_fix(&after_a, improved),
            "a tier caught the remaining bug: {after_a:?}"
        );
        let cost_a: u64 = tiers_a.iter().map(|t| t.2).sum();

        // (b) the correct fix of both bugs, from the baseline.
        replace(&root, &b.file, &b.bad, &b.good);
        let changed = vec![a.file.clone(), b.file.clone()];
        let (tiers_b, after_b, affected_b, _) = runner.tiers(&baseline, &changed, &import_map);
        let cost_b: u64 = tiers_b.iter().map(|t| t.2).sum();
        let validation = match after_b {
            NextRun::Full(_) => runner.run(None),
            other => panic!("the correct fix ends in {other:?}"),
        };
        assert_eq!(
            validation.failed + validation.errors,
            0,
            "the fix is correct"
        );

        let full = baseline.duration_ms as f64;
        let show = |t: &[(Tier, usize, u64)]| {
            t.iter()
                .map(|(tier, n, ms)| json!({"tier": tier.as_str(), "tests": n, "ms": ms}))
                .collect::<Vec<_>>()
        };
        println!(
            "{}",
            json!({
                "run": run,
                "suite_tests": baseline.total,
                "failing": baseline.failed,
                "full_ms": baseline.duration_ms,
                "a_tiers": show(&tiers_a),
                "a_ms": cost_a,
                "a_ratio": cost_a as f64 / full,
                "b_tiers": show(&tiers_b),
                "b_ms": cost_b,
                "b_ratio": cost_b as f64 / full,
                "b_next": format!("{after_b:?}"),
                "b_affected_tier": affected_b,
                "validation_ms": validation.duration_ms,
            })
        );
        fulls.push(full);
        costs_a.push(cost_a as f64);
        costs_b.push(cost_b as f64);
    }
    let ratios = |c: &[f64]| median(c.iter().zip(&fulls).map(|(c, f)| c / f).collect::<Vec<_>>());
    println!(
        "{}",
        json!({
            "median": true,
            "runs": runs,
            "full_ms": median(fulls.clone()),
            "a_ms": median(costs_a.clone()),
            "a_ratio": ratios(&costs_a),
            "b_ms": median(costs_b.clone()),
            "b_ratio": ratios(&costs_b),
        })
    );
}
