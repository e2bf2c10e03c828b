//! The test-fix loop in-process: the real machine and driver over the fake
//! ports ([`crate::engine::fake`]), scenario by scenario. Every transition
//! the machine makes is checked against [`super::transitions`], and the
//! whole human output of typical runs is snapshot-tested.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::decide::Limits;
use super::machine::CycleMachine;
use super::state::CycleState;
use super::transitions;
use crate::agents::{ErrorKind, Role};
use crate::artifacts::Config;
use crate::artifacts::iteration_state::{IterationState, NextAction};
use crate::artifacts::session::{InputMode, PhaseStatus, SessionStatus, WorkflowSession};
use crate::artifacts::task::Task;
use crate::engine::fake::{AgentAct, FakePorts, FakeTest};
use crate::engine::ports::Wake;
use crate::engine::sink::{Capture, Captured};
use crate::engine::{
    DriverConfig, Ending, Event, Machine, Observation, Ports, Sinks, Step, driver::run,
};
use crate::error::Exit;
use crate::render::Renderer;
use crate::session::{Location, Workspace};
use crate::testing::{Detected, Framework};
use crate::ui::Printer;

const ID: &str = "WFS-test-the-fake";
/// `calc/ops.py` with two bugs (add, div), with both fixed, with add fixed,
/// and with both fixed but sub, mul and pow broken (a regression the
/// failing tests' retest cannot see; the full-suite validation does).
const BUGGY: &str = "add: a - b\nsub: a - b\nmul: a * b\npow: a ** b\ndiv: a / b\n";
const FIXED: &str = "add: a + b\nsub: a - b\nmul: a * b\npow: a ** b\ndiv: b == 0 or a / b\n";
const HALF: &str = "add: a + b\nsub: a - b\nmul: a * b\npow: a ** b\ndiv: a / b\n";
const BROKEN: &str = "add: a + b\nsub: a + b\nmul: a + b\npow: a + b\ndiv: b == 0 or a / b\n";

/// Ten tests: two fail on the bugs of `calc/ops.py`, three more test the
/// rest of it, five check `calc/other.py`.
fn suite() -> Vec<FakeTest> {
    let mut s = vec![
        FakeTest::new("tests/test_ops.py::test_add", "calc/ops.py", "add: a + b"),
        FakeTest::new("tests/test_ops.py::test_sub", "calc/ops.py", "sub: a - b"),
        FakeTest::new("tests/test_ops.py::test_mul", "calc/ops.py", "mul: a * b"),
        FakeTest::new("tests/test_ops.py::test_pow", "calc/ops.py", "pow: a ** b"),
        FakeTest::new("tests/test_ops.py::test_div", "calc/ops.py", "b == 0"),
    ];
    for i in 0..5 {
        s.push(FakeTest::new(
            &format!("tests/test_other.py::test_{i}"),
            "calc/other.py",
            "ok = True",
        ));
    }
    s
}

fn ports() -> FakePorts {
    FakePorts::new(
        &[("calc/ops.py", BUGGY), ("calc/other.py", "ok = True\n")],
        suite(),
    )
}

/// The machine, with `fixer` as the fix agent (or manual mode).
struct Harness {
    _tmp: tempfile::TempDir,
    machine: CycleMachine,
}

fn harness(fixer: bool, limits: Limits, cap: Option<f64>) -> Harness {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let mut config: Config = serde_json::from_value(serde_json::json!({
        "agents": {"definitions": {"fixer": {"command": ["fixer"]}}}
    }))
    .unwrap();
    config.agents.max_cost_usd = cap;
    let fix_agent = fixer.then(|| crate::agents::config::resolve(&config.agents, "fixer").unwrap());
    let machine = CycleMachine {
        ws: Workspace::new(root.clone()),
        id: ID.into(),
        root,
        worktree: false,
        config,
        limits,
        fix_agent,
        fix_agents: Vec::new(),
        test_gen_agent: None,
        chain: Vec::new(),
        detected: Some(Detected {
            framework: Framework::Pytest,
            command: "python -m pytest".into(),
            signals: Vec::new(),
            test_pattern: "tests/test_*.py".into(),
            test_directory: "tests".into(),
            ..Detected::new(Framework::Pytest, "python -m pytest")
        }),
        renderer: Arc::new(Renderer::new(None)),
        messages: Default::default(),
        analysis_text: String::new(),
        repo: true,
        watch: false,
        import_map: Vec::new(),
        related: Default::default(),
    };
    Harness { _tmp: tmp, machine }
}

fn task(id: &str, kind: &str, status: &str) -> Task {
    serde_json::from_value(serde_json::json!({
        "id": id, "title": format!("Task {id}"), "status": status, "meta": {"type": kind}
    }))
    .unwrap()
}

/// A planned session whose initial tasks are done: the loop starts.
fn fresh(m: &CycleMachine, now: crate::artifacts::Timestamp) -> CycleState {
    let paths = m.ws.active(ID);
    let tasks: Vec<(PathBuf, Task)> = [
        ("IMPL-001", "test-gen", "skipped"),
        ("IMPL-001.3", "code-validation", "skipped"),
        ("IMPL-001.5", "test-quality-review", "completed"),
        ("IMPL-002", "test-fix", "pending"),
    ]
    .into_iter()
    .map(|(id, kind, status)| (paths.new_task_file(id), task(id, kind, status)))
    .collect();
    let mut session = WorkflowSession::new_test(
        ID.into(),
        "Test the fake".into(),
        InputMode::Prompt,
        "Test the fake".into(),
        now,
    );
    for n in 1..=4 {
        if let Some(p) = session.phase_mut(n) {
            p.status = PhaseStatus::Completed;
        }
    }
    CycleState {
        iter: super::initial_state(ID, &tasks, m.limits.max_iterations, now),
        history: Default::default(),
        tasks,
        session,
        location: Location::Active,
        results: Default::default(),
        stop: None,
        validation_fix_due: false,
        survey_due: false,
        now,
        outbox: Vec::new(),
        views: Default::default(),
    }
}

/// What a new process reads back: the documents the ports hold.
fn reload(m: &CycleMachine, p: &FakePorts, location: Location) -> CycleState {
    let paths = match location {
        Location::Active => m.ws.active(ID),
        Location::Archived => m.ws.archived(ID),
    };
    let read = |path: PathBuf| p.files.get(&path).cloned().expect("written");
    let iter: IterationState = serde_json::from_slice(&read(paths.iteration_state())).unwrap();
    let history = p
        .files
        .get(&paths.fix_history())
        .map(|b| serde_json::from_slice(b).unwrap())
        .unwrap_or_default();
    let session: WorkflowSession = serde_json::from_slice(&read(paths.session_json())).unwrap();
    let mut state = fresh(m, p.now());
    for (path, task) in state.tasks.iter_mut() {
        if let Some(bytes) = p.files.get(path) {
            *task = serde_json::from_slice(bytes).unwrap();
        }
    }
    for (path, bytes) in &p.files {
        if path.parent() == Some(&paths.task_dir()) && !state.tasks.iter().any(|(q, _)| q == path) {
            state
                .tasks
                .push((path.clone(), serde_json::from_slice(bytes).unwrap()));
        }
    }
    state
        .tasks
        .sort_by_key(|(_, t)| crate::session::task_order(&t.id));
    // The baseline, and the last retest tier's merged results (what
    // `cycle::load_results` reads).
    let merged = match &iter.action {
        crate::artifacts::iteration_state::Action::Retest { fix } => fix.retest.merged_run,
        _ => None,
    };
    for run in iter.baseline_run.into_iter().chain(merged) {
        let Some(rec) = iter.run(run) else { continue };
        let (file, _) = super::docs::run_files(&paths, rec);
        if let Some(bytes) = p.files.get(&file) {
            state
                .results
                .insert(rec.run, Arc::new(serde_json::from_slice(bytes).unwrap()));
        }
    }
    state.iter = iter;
    state.history = history;
    state.session = session;
    state.location = location;
    state
}

/// The machine, recording every change of `next_action`.
struct Recording<'a> {
    inner: &'a CycleMachine,
    seen: std::cell::RefCell<Vec<(NextAction, NextAction)>>,
    /// TODO_LIST.md of every step that asked for it.
    todo_lists: std::cell::RefCell<Vec<String>>,
}

impl Machine for Recording<'_> {
    type State = CycleState;
    fn next(&self, s: &CycleState) -> Step {
        self.inner.next(s)
    }
    fn observe(&self, s: &mut CycleState, obs: Observation) -> Vec<Event> {
        let from = s.iter.next_action();
        let out = self.inner.observe(s, obs);
        let to = s.iter.next_action();
        if from != to {
            self.seen.borrow_mut().push((from, to));
        }
        out
    }
    /// Also checks that every step asking for TODO_LIST.md gets the bytes
    /// a full render of its state gives (the list is rendered again only
    /// when what it shows changed: never stale, never missing).
    fn documents(&self, s: &mut CycleState) -> crate::error::Result<Vec<crate::engine::Document>> {
        let full = s.outbox.contains(&super::state::Doc::Todo).then(|| {
            let paths = self.inner.paths(s);
            crate::phases::tasks::render_todo_list(
                &self.inner.renderer,
                &paths,
                &s.session.description,
                &s.tasks,
                Some(&s.iter),
            )
            .unwrap()
        });
        let docs = self.inner.documents(s)?;
        let path = self.inner.paths(s).todo_list();
        let todo = docs.iter().find(|d| d.path == path);
        assert_eq!(
            todo.map(|d| String::from_utf8_lossy(&d.bytes)),
            full.as_deref().map(Into::into),
            "TODO_LIST.md of this step"
        );
        if let Some(text) = full {
            self.todo_lists.borrow_mut().push(text);
        }
        Ok(docs)
    }
    fn spent_usd(&self, s: &CycleState) -> f64 {
        self.inner.spent_usd(s)
    }
    fn session_dir(&self, s: &CycleState) -> PathBuf {
        self.inner.session_dir(s)
    }
}

/// Run the loop to its end; every transition must be in the table.
fn drive(
    m: &CycleMachine,
    s: &mut CycleState,
    p: &mut FakePorts,
    resumed: bool,
) -> (Ending, Captured) {
    drive_watching(m, s, p, resumed, false)
}

/// [`drive`], with `--watch` as given.
fn drive_watching(
    m: &CycleMachine,
    s: &mut CycleState,
    p: &mut FakePorts,
    resumed: bool,
    watch: bool,
) -> (Ending, Captured) {
    let ui = Printer::plain();
    let capture = Capture::default();
    let mut sinks = Sinks::capture(&ui, &capture);
    let rec = Recording {
        inner: m,
        seen: Default::default(),
        todo_lists: Default::default(),
    };
    let ending = run(
        &rec,
        s,
        p,
        &mut sinks,
        &DriverConfig {
            max_cost_usd: m.config.agents.max_cost_usd,
            resumed,
            fold_agent_commits: true,
            watch,
        },
    )
    .unwrap();
    for (from, to) in rec.seen.into_inner() {
        assert!(
            transitions::allowed(from, to),
            "{from} → {to} is not in cycle::transitions::TRANSITIONS"
        );
    }
    (ending, capture.take())
}

/// `(iteration, scope, pass rate)` of every run.
fn runs(s: &CycleState) -> Vec<(u32, String, f64)> {
    s.iter
        .iterations
        .iter()
        .map(|r| {
            (
                r.iteration,
                serde_json::to_value(r.scope)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
                r.pass_rate,
            )
        })
        .collect()
}

fn run_of(i: u32, scope: &str, p: f64) -> (u32, String, f64) {
    (i, scope.into(), p)
}

/// `(iteration, tier, escalated)` of every run.
fn tiers(s: &CycleState) -> Vec<(u32, Option<&'static str>, bool)> {
    s.iter
        .iterations
        .iter()
        .map(|r| {
            (
                r.iteration,
                r.tier.map(|t| t.as_str()),
                r.escalated.is_some(),
            )
        })
        .collect()
}

/// Every run has its own results file and log, and each was written.
fn own_files(s: &CycleState, p: &FakePorts) {
    let mut seen = std::collections::BTreeSet::new();
    for r in &s.iter.iterations {
        let files = [
            r.results_file.clone().unwrap(),
            r.output_log.clone().unwrap(),
        ];
        for f in files {
            assert!(seen.insert(f.clone()), "{f} is shared by two runs");
        }
        let results = s
            .iter
            .iterations
            .iter()
            .position(|x| x.run == r.run)
            .unwrap();
        let path = h_root(s, p).join(r.results_file.as_deref().unwrap());
        assert!(
            p.files.contains_key(&path),
            "run {results}: {path:?} not written"
        );
    }
}

/// The project root the session's relative paths start from.
fn h_root(_: &CycleState, p: &FakePorts) -> PathBuf {
    let any = p
        .files
        .keys()
        .find(|k| k.ends_with("iteration-state.json"))
        .expect("a state");
    // <root>/.workflow/active/<id>/.process/iteration-state.json
    any.ancestors().nth(5).unwrap().to_path_buf()
}

/// The harness with the import map of the fake project.
fn harness_with_imports() -> Harness {
    let mut h = harness(true, Limits::default(), None);
    h.machine.import_map = vec![
        ("tests/test_ops.py".into(), vec!["calc/ops.py".into()]),
        ("tests/test_other.py".into(), vec!["calc/other.py".into()]),
    ];
    h
}

#[test]
fn a_retest_runs_the_failed_then_the_affected_tests_then_the_full_suite() {
    let h = harness_with_imports();
    let mut p = ports();
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    // After the fix (the first agent call): the three tiers.
    let fix = p
        .journal
        .iter()
        .position(|l| l.starts_with("agent "))
        .unwrap();
    let tests: Vec<&String> = p.journal[fix..]
        .iter()
        .filter(|l| l.starts_with("tests "))
        .collect();
    assert_eq!(
        tests,
        [
            r#"tests ["tests/test_ops.py::test_add", "tests/test_ops.py::test_div"] → 0 failing"#,
            r#"tests ["tests/test_ops.py::test_sub", "tests/test_ops.py::test_mul", "tests/test_ops.py::test_pow"] → 0 failing"#,
            "tests all → 0 failing",
        ]
    );
    assert_eq!(
        tiers(&s),
        [
            (1, None, false),
            (2, Some("failed"), false),
            (2, Some("affected"), false),
            (2, Some("full"), false),
        ]
    );
    assert_eq!(
        runs(&s),
        [
            run_of(1, "full", 80.0),
            run_of(2, "affected", 100.0),
            run_of(2, "affected", 100.0),
            run_of(2, "full", 100.0)
        ]
    );
    own_files(&s, &p);
    let text = transcript(&out, &ending);
    assert!(text.contains("tier 1: the 2 failed test(s)"), "{text}");
    assert!(text.contains("tier 2: 3 affected test(s)"), "{text}");
}

/// A fix that breaks what the failing tests do not test: tier 2 sees it,
/// and the next attempt starts without a full run.
#[test]
fn the_affected_tier_catches_a_regression_before_the_full_suite() {
    let h = harness_with_imports();
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        AgentAct::writes(&[("calc/ops.py", if n == 1 { BROKEN } else { FIXED })])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(
        tiers(&s)[..3],
        [
            (1, None, false),
            (2, Some("failed"), false),
            (2, Some("affected"), false)
        ]
    );
    assert_eq!(runs(&s)[2], run_of(2, "affected", 70.0));
    assert_eq!(
        p.subjects()[2],
        "test-cycle: iteration 1 - conservative strategy (pass: 80.0% → 70.0%)"
    );
    // Between the first fix and the second: the two subset tiers (and the
    // flaky re-run of the new failures), no full run.
    let agents: Vec<usize> = (0..p.journal.len())
        .filter(|&i| p.journal[i].starts_with("agent "))
        .collect();
    let between: Vec<&String> = p.journal[agents[0]..agents[1]]
        .iter()
        .filter(|l| l.starts_with("tests "))
        .collect();
    assert_eq!(between.len(), 3, "{between:?}");
    assert!(
        between.iter().all(|l| !l.starts_with("tests all")),
        "{between:?}"
    );
}

#[test]
fn a_subset_run_that_cannot_run_escalates_to_the_full_suite() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    // The first subset run is the flaky re-run of run 1's failures; the
    // second is tier 1 of the retest.
    p.unrunnable_subsets = 2;
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(
        tiers(&s),
        [
            (1, None, false),
            (2, Some("failed"), true),
            (2, Some("full"), false)
        ]
    );
    let escalated = &s.iter.iterations[1];
    assert_eq!(escalated.result, None, "never a regression");
    assert!(
        escalated.escalated.as_deref().unwrap().contains("code 7"),
        "{:?}",
        escalated.escalated
    );
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 1 fix attempt(s))",
            "test-cycle: iteration 1 - conservative strategy (pass: 80.0% → 100.0%)",
        ]
    );
    assert_eq!(s.history.entries.len(), 1);
    assert_eq!(s.history.entries[0].outcome.as_str(), "success");
    own_files(&s, &p);
    let text = transcript(&out, &ending);
    assert!(
        text.contains("running the full suite instead (not a regression)"),
        "{text}"
    );
}

/// Two tests the runner reports under one name (`x`, `x#2`): no filter can
/// run just one of them, so the retest is the full suite.
#[test]
fn a_failing_test_sharing_its_name_is_retested_on_the_full_suite() {
    let h = harness(true, Limits::default(), None);
    let mut suite = suite();
    suite.push(FakeTest::new(
        "tests/test_ops.py::test_add",
        "calc/ops.py",
        "add: a + b",
    ));
    let mut p = FakePorts::new(
        &[("calc/ops.py", BUGGY), ("calc/other.py", "ok = True\n")],
        suite,
    );
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(
        s.iter.iterations[0].failed_tests,
        [
            "tests/test_ops.py::test_add",
            "tests/test_ops.py::test_div",
            "tests/test_ops.py::test_add#2"
        ]
    );
    assert_eq!(tiers(&s), [(1, None, false), (2, Some("full"), false)]);
    // After the fix (the first agent call), the one retest is the suite.
    let fix = p
        .journal
        .iter()
        .position(|l| l.starts_with("agent "))
        .unwrap();
    let retests: Vec<&String> = p.journal[fix..]
        .iter()
        .filter(|l| l.starts_with("tests "))
        .collect();
    assert_eq!(retests, ["tests all → 0 failing"], "{:?}", p.journal);
    let text = transcript(&out, &ending);
    assert!(text.contains("shares its name with another test"), "{text}");
}

/// Killed after any step commit of a tiered retest, the resumed session
/// ends as the uninterrupted one (tier 2 merges over tier 1's results).
#[test]
fn a_crash_between_tiers_resumes_to_the_same_end() {
    let h = harness_with_imports();
    let script = |_: Role, _: u32, _: &crate::engine::fake::Work| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    };
    let mut reference = ports();
    fixer(&mut reference, script);
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want = (runs(&s), tiers(&s), reference.subjects());
    for k in 1..reference.step_commits {
        let mut p = ports();
        fixer(&mut p, script);
        let mut s = fresh(&h.machine, p.now());
        let ui = Printer::plain();
        let mut sinks = Sinks::capture(&ui, &Capture::default());
        let mut crash = CrashAfter {
            inner: &mut p,
            commits_left: k,
        };
        let _ = run(
            &h.machine,
            &mut s,
            &mut crash,
            &mut sinks,
            &DriverConfig::default(),
        );
        let mut s = reload(&h.machine, &p, Location::Active);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success, "crash after commit {k}");
        assert_eq!(
            (runs(&s), tiers(&s), p.subjects()),
            want,
            "crash after commit {k}"
        );
    }
}

/// The output a person reads: progress on stderr, the result on stdout.
fn transcript(c: &Captured, e: &Ending) -> String {
    format!(
        "--- stderr\n{}\n--- stdout\n{}\n--- exit {}\n",
        c.human.join("\n"),
        e.lines.join("\n"),
        e.exit.code()
    )
}

fn fixer(
    p: &mut FakePorts,
    script: impl FnMut(Role, u32, &crate::engine::fake::Work) -> AgentAct + 'static,
) {
    p.agent = Box::new(script);
}

#[test]
fn a_fix_that_works_is_committed_validated_on_the_full_suite_and_archived() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(
        runs(&s),
        [
            run_of(1, "full", 80.0),
            run_of(2, "affected", 100.0),
            run_of(2, "full", 100.0)
        ]
    );
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 1 fix attempt(s))",
            "test-cycle: iteration 1 - conservative strategy (pass: 80.0% → 100.0%)",
        ]
    );
    assert_eq!(s.history.entries[0].outcome.as_str(), "success");
    assert_eq!(s.session.status, SessionStatus::Completed);
    // One durable commit per step, and no more.
    assert!(
        p.step_commits <= p.steps.get() + 1,
        "{} commits for {} steps",
        p.step_commits,
        p.steps.get()
    );
    insta::assert_snapshot!("cycle_fix_all", transcript(&out, &ending));
}

use crate::artifacts::test_results::Scope;

/// DESIGN.md §11.1: the full run that accepts the fix runs sealed, on the
/// commit of the fix's paths; the tiers before it run in place.
#[test]
fn the_validation_that_accepts_a_fix_is_sealed_and_the_tiers_are_not() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    let sealed: Vec<(Scope, bool)> = s
        .iter
        .iterations
        .iter()
        .map(|r| (r.scope, r.sealed))
        .collect();
    assert_eq!(
        sealed,
        [
            (Scope::Full, false),
            (Scope::Affected, false),
            (Scope::Full, true)
        ]
    );
    let seal = p
        .journal
        .iter()
        .position(|l| l.starts_with("seal "))
        .unwrap();
    assert_eq!(p.journal[seal], r#"seal ["calc/ops.py"]"#);
    assert!(
        p.journal[seal + 1].starts_with("tests all"),
        "{:?}",
        p.journal
    );
    assert!(
        p.journal[seal + 2].starts_with("unseal "),
        "{:?}",
        p.journal
    );
    assert!(s.iter.iterations[2].commit.is_some());
}

/// DESIGN.md §11.2: a fix rejected from its diff (a new conftest.py, test
/// infrastructure) is put back right after the call: no test run, no
/// commit and no revert of it; the next attempt starts from the tree as it
/// was.
#[test]
fn a_fix_rejected_from_its_diff_is_undone_before_any_retest_or_commit() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        if n == 1 {
            AgentAct::writes(&[
                ("calc/ops.py", FIXED),
                (
                    "conftest.py",
                    "def pytest_collection_modifyitems(items):\n    items.clear()\n",
                ),
            ])
        } else {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        }
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    // Agent call 1, then the undo, then the next analysis's agent call: no
    // test run in between.
    let undone = p
        .journal
        .iter()
        .position(|l| l.starts_with("undone "))
        .expect("undone");
    assert_eq!(p.journal[undone], "undone calc/ops.py, conftest.py");
    assert!(
        !p.journal[..undone]
            .iter()
            .rev()
            .take_while(|l| !l.starts_with("agent"))
            .any(|l| l.starts_with("tests")),
        "{:?}",
        p.journal
    );
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - conservative strategy (pass: 80.0% → 100.0%)",
        ]
    );
    assert_eq!(s.history.entries[0].outcome.as_str(), "rejected");
    assert_eq!(s.history.entries[0].commit, None);
    let kinds: Vec<String> = s.history.entries[0]
        .test_edits
        .iter()
        .map(|e| format!("{:?} {}", e.kind, e.file))
        .collect();
    assert_eq!(
        kinds,
        ["SkipAdded conftest.py", "Infrastructure conftest.py"]
    );
    assert!(
        out.human
            .iter()
            .any(|l| l.starts_with("Undone iteration 1")),
        "{:?}",
        out.human
    );
}

#[test]
fn a_regression_is_rolled_back_and_the_next_attempt_is_surgical() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        if n == 1 {
            AgentAct::writes(&[("calc/ops.py", BROKEN), ("calc/other.py", "ok = False\n")])
        } else {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        }
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(
        ending.exit,
        Exit::Success,
        "{:?} {:?}",
        ending.lines,
        p.journal
    );
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - surgical strategy (pass: 80.0% → 100.0%)",
            "test-cycle: rollback iteration 1 - regression detected (pass: 20.0% < 80.0%)",
            "test-cycle: iteration 1 - conservative strategy (pass: 80.0% → 20.0%)",
        ],
        "{:?}",
        p.journal
    );
    assert!(
        p.journal.iter().any(|l| l == "revert c0010000000000"),
        "{:?}",
        p.journal
    );
    let strategies: Vec<_> = s
        .history
        .entries
        .iter()
        .map(|e| e.strategy.unwrap().as_str())
        .collect();
    assert_eq!(strategies, ["conservative", "surgical"]);
    assert_eq!(s.history.entries[0].outcome.as_str(), "rolled_back");
    assert_eq!(
        s.history.entries[0].rollback_commit.as_deref(),
        Some("c0020000000000")
    );
    insta::assert_snapshot!("cycle_regression_rollback", transcript(&out, &ending));
}

#[test]
fn stuck_tests_switch_the_strategy_and_no_progress_blocks() {
    let limits = Limits {
        max_iterations: 6,
        stuck_after: 3,
        no_progress_limit: 5,
        ..Limits::default()
    };
    let h = harness(true, limits, None);
    let mut p = ports();
    // Changes something every time, never the bug.
    fixer(&mut p, |_, n, _| {
        AgentAct::writes(&[("notes.txt", &format!("try {n}"))])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Failed);
    let strategies: Vec<_> = s
        .history
        .entries
        .iter()
        .map(|e| e.strategy.unwrap().as_str())
        .collect();
    assert_eq!(
        strategies,
        ["conservative", "conservative", "aggressive", "conservative"],
        "stuck from run 3 on: the strategy alternates instead of repeating"
    );
    assert!(!s.iter.stuck_tests.is_empty());
    assert_eq!(
        s.iter.blocked_reason.as_deref(),
        Some("no progress: the same tests failed in 5 runs in a row")
    );
    assert!(
        out.human
            .iter()
            .any(|l| l.contains("stuck: 2 failed in 3 runs in a row"))
    );
}

#[test]
fn the_limit_of_attempts_blocks_with_a_report() {
    let limits = Limits {
        max_iterations: 2,
        ..Limits::default()
    };
    let h = harness(true, limits, None);
    let mut p = ports();
    fixer(&mut p, |_, _, _| AgentAct::writes(&[]));
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Failed);
    assert_eq!(
        s.iter.blocked_reason.as_deref(),
        Some("reached the limit of 2 fix attempts")
    );
    let report = h.machine.ws.active(ID).failure_report();
    assert!(
        p.files.contains_key(&report),
        "the failure report is written"
    );
    insta::assert_snapshot!("cycle_blocked", transcript(&out, &ending));
}

#[test]
fn the_cost_cap_blocks_before_the_next_agent_call() {
    let h = harness(true, Limits::default(), Some(0.08));
    let mut p = ports();
    fixer(&mut p, |_, _, _| AgentAct {
        cost_usd: Some(0.05),
        ..AgentAct::writes(&[])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Failed);
    let reason = s.iter.blocked_reason.clone().unwrap();
    assert!(
        reason.starts_with("agent cost cap reached: $0.10 spent of agents.max_cost_usd $0.08"),
        "{reason}"
    );
    assert_eq!(
        p.journal.iter().filter(|l| l.starts_with("agent ")).count(),
        2,
        "no call after the cap: {:?}",
        p.journal
    );
}

/// A run after the first whose failures are all the environment's (a
/// module that is not installed) pauses for a person, as the first run's
/// would: no fix agent is asked to change code for it. The resume runs the
/// whole suite again and goes on.
#[test]
fn environment_failures_of_a_later_run_pause_instead_of_reaching_the_agent() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    p.work.insert("calc/env.txt".into(), String::new());
    p.suite.push(FakeTest {
        error: Some("ModuleNotFoundError: No module named 'yaml'".into()),
        ..FakeTest::new(
            "tests/test_env.py::test_yaml",
            "calc/env.txt",
            "yaml installed",
        )
    });
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Paused, "{:#?}", out.human);
    // One fix (the code's), none for the environment.
    assert_eq!(s.history.entries.len(), 1, "{:#?}", out.human);
    let said = ending.lines.join("\n");
    assert!(
        said.contains("the tests fail because of the environment, not the code: Python module `yaml` is not installed"),
        "{said}"
    );
    // The person installs it; the resume runs the suite and completes.
    p.work
        .insert("calc/env.txt".into(), "yaml installed".into());
    let mut s = reload(&h.machine, &p, Location::Active);
    let (ending, out) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Success, "{:#?}", out.human);
    assert_eq!(s.history.entries.len(), 1);
    let last = s.iter.iterations.last().unwrap();
    assert_eq!(
        (last.scope, last.pass_rate),
        (crate::artifacts::test_results::Scope::Full, 100.0)
    );
}

#[test]
fn a_flaky_failure_is_rerun_and_marked() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    p.suite.push(FakeTest {
        flaky: true,
        ..FakeTest::new(
            "tests/test_other.py::test_flappy",
            "calc/other.py",
            "ok = True",
        )
    });
    fixer(&mut p, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(
        s.iter.iterations[0].flaky_tests,
        ["tests/test_other.py::test_flappy"]
    );
    assert!(
        out.human
            .iter()
            .any(|l| l == "Iteration 1 · 1 flaky (failed, then passed on a re-run): tests/test_other.py::test_flappy")
    );
    assert!(
        p.journal.iter().any(|l| l.starts_with("tests [")),
        "a re-run of the new failures"
    );
}

#[test]
fn an_unreachable_or_interrupted_agent_pauses_without_counting_an_attempt() {
    for (act, reason_kind) in [
        (
            AgentAct {
                error: Some(ErrorKind::RateLimit),
                exit_code: 1,
                ..AgentAct::default()
            },
            "agent_unavailable",
        ),
        (
            AgentAct {
                interrupted: true,
                exit_code: 130,
                ..AgentAct::default()
            },
            "interrupted",
        ),
    ] {
        let h = harness(true, Limits::default(), None);
        let mut p = ports();
        let act2 = act.clone();
        fixer(&mut p, move |_, _, _| act2.clone());
        let mut s = fresh(&h.machine, p.now());
        let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "{reason_kind}");
        assert_eq!(s.attempts(), 0, "{reason_kind}: no attempt counted");
        assert_eq!(s.iter.next_action(), NextAction::ExecuteFixTask);
        assert_eq!(s.session.status, SessionStatus::Paused);
        let paused = out.json.iter().find(|e| e["event"] == "paused").unwrap();
        assert_eq!(paused["reason"]["kind"], reason_kind);
        let done = out.json.last().unwrap();
        assert_eq!(done["event"], "done");
        assert_eq!(
            (done["status"].as_str(), done["exit_code"].as_i64()),
            (Some("paused"), Some(3))
        );
    }
}

#[test]
fn manual_mode_waits_for_a_person_and_takes_their_edit_as_the_fix() {
    let h = harness(false, Limits::default(), None);
    let mut p = ports();
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Paused);
    assert_eq!(s.session.status, SessionStatus::AwaitingFix);
    insta::assert_snapshot!("cycle_manual_pause", transcript(&out, &ending));
    // Resumed without a change: still waiting, no attempt spent.
    let mut s = reload(&h.machine, &p, Location::Active);
    let (ending, out) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Paused);
    assert!(
        ending.lines[0].starts_with("No file has changed since the fix task was written"),
        "{:?}",
        out.human
    );
    assert_eq!(s.attempts(), 0);
    // The person fixes the code.
    p.work.insert("calc/ops.py".into(), FIXED.into());
    let mut s = reload(&h.machine, &p, Location::Active);
    let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Success);
    assert_eq!(s.history.entries[0].agent, "manual");
}

/// `--watch`: one run waits for the person in-process: Enter with nothing
/// changed spends no attempt and waits again, a save is the fix, and the
/// loop goes on to completion with a single `done`.
#[test]
fn watching_takes_a_saved_fix_without_ending_the_run() {
    let mut h = harness(false, Limits::default(), None);
    h.machine.watch = true;
    let mut p = ports();
    p.wakes.push_back((Wake::Enter, Vec::new()));
    p.wakes.push_back((
        Wake::Files(vec!["calc/ops.py".into()]),
        vec![("calc/ops.py".into(), FIXED.into())],
    ));
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive_watching(&h.machine, &mut s, &mut p, false, true);
    assert_eq!(ending.exit, Exit::Success, "{:#?}", out.human);
    assert_eq!(s.history.entries.len(), 1);
    assert_eq!(s.history.entries[0].agent, "manual");
    let said = out.human.join("\n");
    for line in [
        "Change the code (not the tests) and save: wfx retests then.",
        "Watching the project's files: saving one retests, so does Enter; Ctrl-C pauses",
        "Enter pressed: retesting",
        "No file has changed since the fix task was written; nothing was retested.",
        "Saved calc/ops.py: retesting",
    ] {
        assert!(said.contains(line), "{line:?} not in:\n{said}");
    }
    assert!(!said.contains("continue with:"), "{said}");
    let names: Vec<&str> = out
        .json
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert_eq!(names.iter().filter(|n| **n == "watching").count(), 2);
    assert_eq!(names.iter().filter(|n| **n == "done").count(), 1);
    assert_eq!(names.last(), Some(&"done"));
}

/// `--watch`, Ctrl-C while waiting: the pause of any Ctrl-C (exit 3,
/// `interrupted`, the command to continue); the session still awaits the
/// fix, and a resume after the edit takes it.
#[test]
fn ctrl_c_while_watching_is_a_ctrl_c_pause() {
    let mut h = harness(false, Limits::default(), None);
    h.machine.watch = true;
    let mut p = ports();
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive_watching(&h.machine, &mut s, &mut p, false, true);
    assert_eq!(ending.exit, Exit::Paused);
    assert!(!ending.waits_for_fix);
    assert_eq!(s.session.status, SessionStatus::AwaitingFix);
    assert_eq!(
        ending.lines,
        [
            "interrupted while waiting for your fix",
            "Paused. Continue with: wfx test-cycle-execute --resume-session=WFS-test-the-fake"
        ]
    );
    let paused: Vec<&serde_json::Value> =
        out.json.iter().filter(|e| e["event"] == "paused").collect();
    assert_eq!(paused.len(), 2);
    assert_eq!(paused[1]["reason"]["kind"], "interrupted");
    h.machine.watch = false;
    p.work.insert("calc/ops.py".into(), FIXED.into());
    let mut s = reload(&h.machine, &p, Location::Active);
    let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Success);
}

/// Ctrl-C before any effect of the run: whatever step it lands on, the
/// session pauses (exit 3) and a resume ends exactly as an uninterrupted
/// run (same commits, same runs).
#[test]
fn pause_and_resume_at_every_step_end_as_an_uninterrupted_run() {
    let script = |_: Role, n: u32, _: &crate::engine::fake::Work| {
        if n == 1 {
            AgentAct::writes(&[("calc/ops.py", HALF)])
        } else {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        }
    };
    let h = harness(true, Limits::default(), None);
    let mut reference = ports();
    fixer(&mut reference, script);
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want = (runs(&s), reference.subjects());
    let todo = final_todo_list(&h.machine, &reference);
    let steps = reference.steps.get();
    assert!(steps >= 10, "{steps} steps: {:?}", reference.journal);
    for k in 0..steps {
        let h = harness(true, Limits::default(), None);
        let mut p = ports();
        fixer(&mut p, script);
        p.interrupt_after = Some(k);
        let mut s = fresh(&h.machine, p.now());
        let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "interrupted after {k} steps");
        // Once completed, only the archive is left: the session stays completed.
        let done = s.iter.status == crate::artifacts::iteration_state::LoopStatus::Completed;
        assert_eq!(
            s.session.status,
            if done {
                SessionStatus::Completed
            } else {
                SessionStatus::Paused
            },
            "interrupted after {k} steps"
        );
        p.interrupt_after = None;
        let mut s = reload(&h.machine, &p, Location::Active);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success, "after {k}: {:?}", p.journal);
        assert_eq!(
            (runs(&s), p.subjects()),
            want,
            "interrupted after {k} steps"
        );
        assert_eq!(
            final_todo_list(&h.machine, &p),
            todo,
            "interrupted after {k} steps"
        );
    }
    // Ctrl-C during a test run: the same.
    for n in 1..=3 {
        let h = harness(true, Limits::default(), None);
        let mut p = ports();
        fixer(&mut p, script);
        p.interrupt_in_run = Some(n);
        let mut s = fresh(&h.machine, p.now());
        let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "Ctrl-C in test run {n}");
        let paused = out.json.iter().find(|e| e["event"] == "paused").unwrap();
        assert_eq!(paused["reason"]["kind"], "interrupted");
        p.interrupt_in_run = None;
        let mut s = reload(&h.machine, &p, Location::Active);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success);
        assert_eq!((runs(&s), p.subjects()), want, "Ctrl-C in test run {n}");
    }
}

/// The resume after a `kill -9` at every step commit: the state as
/// last committed, the world as the killed run left it.
#[test]
fn a_crash_after_any_step_commit_resumes_to_the_same_end() {
    let h = harness(true, Limits::default(), None);
    let mut reference = ports();
    fixer(&mut reference, |_, _, _| {
        AgentAct::writes(&[("calc/ops.py", FIXED)])
    });
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want = (runs(&s), reference.subjects());
    let todo = final_todo_list(&h.machine, &reference);
    let commits = reference.step_commits;
    for k in 1..commits {
        let (s, ending, p) = crash_and_resume(&h.machine, k, |_, _, _| {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        });
        assert_eq!(
            ending.exit,
            Exit::Success,
            "crash after commit {k}: {:?}",
            p.journal
        );
        assert_eq!((runs(&s), p.subjects()), want, "crash after commit {k}");
        assert_eq!(
            final_todo_list(&h.machine, &p),
            todo,
            "crash after commit {k}"
        );
    }
}

/// TODO_LIST.md where the session ended (archived once completed).
fn final_todo_list(m: &CycleMachine, p: &FakePorts) -> String {
    [m.ws.archived(ID), m.ws.active(ID)]
        .iter()
        .find_map(|paths| p.files.get(&paths.todo_list()))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .expect("TODO_LIST.md written")
}

/// Every step that touches TODO_LIST.md gets exactly the bytes a full
/// render of its state gives ([`Recording`] checks it at every step of
/// every scenario); in a run with a regression, its rollback and a fix,
/// most of those steps change what the list shows and some do not
/// (those the view's memo answers without rendering again).
#[test]
fn the_todo_list_of_every_step_is_a_full_render_of_its_state() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        if n == 1 {
            AgentAct::writes(&[("calc/ops.py", BROKEN)])
        } else {
            AgentAct::writes(&[("calc/ops.py", FIXED)])
        }
    });
    let mut s = fresh(&h.machine, p.now());
    let rec = Recording {
        inner: &h.machine,
        seen: Default::default(),
        todo_lists: Default::default(),
    };
    let ui = Printer::plain();
    let mut sinks = Sinks::capture(&ui, &Capture::default());
    let ending = run(&rec, &mut s, &mut p, &mut sinks, &DriverConfig::default()).unwrap();
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    let lists = rec.todo_lists.into_inner();
    assert!(
        lists.windows(2).any(|w| w[0] == w[1]),
        "a step that changes nothing shown: {lists:#?}"
    );
    assert!(
        lists.windows(2).filter(|w| w[0] != w[1]).count() >= 5,
        "{lists:#?}"
    );
    assert_eq!(final_todo_list(&h.machine, &p), *lists.last().unwrap());
}

/// Run until the k-th step commit, then "crash": drop the in-memory
/// state (what is on disk is the k-th commit) and resume to the end.
fn crash_and_resume(
    m: &CycleMachine,
    k: usize,
    script: impl FnMut(Role, u32, &crate::engine::fake::Work) -> AgentAct + 'static,
) -> (CycleState, Ending, FakePorts) {
    let mut p = ports();
    fixer(&mut p, script);
    let mut s = fresh(m, p.now());
    let ui = Printer::plain();
    let mut sinks = Sinks::capture(&ui, &Capture::default());
    let mut crash = CrashAfter {
        inner: &mut p,
        commits_left: k,
    };
    let _ = run(m, &mut s, &mut crash, &mut sinks, &DriverConfig::default());
    let mut s = reload(m, &p, Location::Active);
    let (ending, _) = drive(m, &mut s, &mut p, true);
    (s, ending, p)
}

/// Ports that fail (like a killed process) once `commits_left` step
/// commits are made.
struct CrashAfter<'a> {
    inner: &'a mut FakePorts,
    commits_left: usize,
}

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&mut self, $($arg: $ty),*) -> $ret { self.inner.$name($($arg),*) })*
    };
}

impl crate::engine::Ports for CrashAfter<'_> {
    fn now(&self) -> crate::artifacts::Timestamp {
        self.inner.now()
    }
    fn interrupted(&self) -> bool {
        false
    }
    fn commit_step(&mut self, docs: Vec<crate::engine::Document>) -> crate::error::Result<()> {
        if self.commits_left == 0 {
            return Err(crate::error::Error::Internal("killed".into()));
        }
        self.commits_left -= 1;
        self.inner.commit_step(docs)
    }
    delegate! {
        check_session() -> crate::error::Result<()>;
        run_tests(run: &crate::engine::ports::TestRun<'_>, progress: Option<Box<dyn FnMut(crate::testing::Progress) + Send>>) -> crate::error::Result<crate::artifacts::TestResults>;
        invoke_agent(inv: &crate::agents::Invocation) -> crate::error::Result<crate::agents::CallRecord>;
        shell(run: &crate::engine::ports::ShellRun<'_>) -> crate::error::Result<crate::engine::step::ProcessEnd>;
        snapshot() -> crate::error::Result<crate::engine::step::Snapshot>;
        inspect(before: &crate::engine::step::Snapshot, versions_of: Option<fn(&str) -> bool>) -> crate::error::Result<crate::engine::step::Inspection>;
        changed_lines(since: &str, path: &str) -> crate::error::Result<Option<std::collections::BTreeSet<u32>>>;
        commit(paths: &[String], session_dir: Option<&str>, message: &str, trailers: &crate::git::Trailers) -> crate::error::Result<Option<String>>;
        revert(commit: &str, session_dir: Option<&str>, message: &str, trailers: &crate::git::Trailers) -> crate::error::Result<Option<String>>;
        scan(tests: bool, files: &[String]) -> Vec<crate::artifacts::task_record::Finding>;
        coverage(source: crate::artifacts::task_record::CoverageSource) -> crate::artifacts::task_record::Coverage;
        find_output(pattern: &str, since: std::time::SystemTime) -> Option<String>;
        read_head(path: &Path, max: usize) -> String;
        read_log(path: &Path) -> String;
        archive(session_id: &str) -> crate::error::Result<()>;
        write_view(path: &Path, bytes: &[u8]) -> crate::error::Result<()>;
        undo_session_edits() -> crate::error::Result<Vec<std::path::PathBuf>>;
        undo_tree_edits(before: &crate::engine::step::Snapshot) -> crate::error::Result<Vec<String>>;
        apply_tree(before: &str, tree: &str) -> crate::error::Result<Vec<String>>;
        head_guard() -> crate::error::Result<crate::git::HeadGuard>;
        head_now() -> crate::error::Result<Option<String>>;
        commits_since(pre: Option<&str>, post: &str) -> crate::error::Result<Option<Vec<String>>>;
        branch_now() -> crate::error::Result<Option<String>>;
        fold_head(pre: Option<&str>) -> crate::error::Result<()>;
        restore_head(guard: &crate::git::HeadGuard, snapshot: Option<&str>) -> crate::error::Result<Vec<String>>;
    }
    fn previous_run_died(&self) -> bool {
        self.inner.previous_run_died()
    }
    fn run_candidates(
        &mut self,
        batch: &crate::engine::candidates::CandidateBatch,
        versions_of: Option<fn(&str) -> bool>,
        notify: &mut dyn FnMut(crate::engine::candidates::CandidateNote<'_>),
    ) -> crate::error::Result<Vec<crate::engine::candidates::CandidateDone>> {
        self.inner.run_candidates(batch, versions_of, notify)
    }
}

/// A cycle paused by Ctrl-C (before its fix) or by a rate-limited fix
/// agent, for the comparison with `wfx run` (see the workflow's scenarios).
pub(crate) fn pause_cycle(rate_limited: bool, limits: Limits) -> (Ending, Captured) {
    let h = harness(true, limits, None);
    let mut p = ports();
    if rate_limited {
        fixer(&mut p, |_, _, _| AgentAct {
            error: Some(ErrorKind::RateLimit),
            exit_code: 1,
            ..AgentAct::default()
        });
    } else {
        p.interrupt_after = Some(3);
    }
    let mut s = fresh(&h.machine, p.now());
    drive(&h.machine, &mut s, &mut p, false)
}

/// Issue #15 case 3: a fix agent that forges fix-history entries, marks
/// the session completed and deletes the session file on every call. Each
/// file is written back from wfx's copy after the call, the attempts are
/// counted from wfx's own records, and `max_iterations` still bounds the
/// run.
#[test]
fn an_agent_that_edits_wfx_files_is_undone_and_the_limit_still_holds() {
    let limits = Limits {
        max_iterations: 2,
        ..Limits::default()
    };
    let h = harness(true, limits, None);
    let paths = h.machine.ws.active(ID);
    let mut p = ports();
    let forged: Vec<serde_json::Value> = (1..=20)
        .map(|i| {
            serde_json::json!({"iteration": i, "fix_task": "IMPL-fix-x", "agent": "forger",
            "started_at": "2026-01-01T00:00:00Z", "outcome": "success"})
        })
        .collect();
    let history = serde_json::json!({"session_id": ID, "entries": forged}).to_string();
    let (state_file, history_file, session_file) = (
        paths.iteration_state(),
        paths.fix_history(),
        paths.session_json(),
    );
    fixer(&mut p, move |_, _, _| AgentAct {
        session_writes: vec![
            (history_file.clone(), Some(history.clone())),
            (
                state_file.clone(),
                Some(r#"{"status": "completed", "next_action": "complete"}"#.into()),
            ),
            (session_file.clone(), None),
        ],
        ..AgentAct::writes(&[])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Failed);
    assert_eq!(
        s.iter.blocked_reason.as_deref(),
        Some("reached the limit of 2 fix attempts")
    );
    let again = reload(&h.machine, &p, Location::Active);
    assert_eq!(again.history.entries.len(), 2, "only wfx's own attempts");
    for e in &again.history.entries {
        assert_eq!(
            e.tamper,
            Some(crate::artifacts::fix_history::Tamper::SessionEdited)
        );
    }
    assert_eq!(again.iter.blocked_reason, s.iter.blocked_reason);
    assert_eq!(again.session.session_id, ID);
    assert!(
        p.journal.iter().any(|l| l.starts_with("restored ")),
        "{:?}",
        p.journal
    );
}

/// Issue #15 case 4: an analysis agent that edits the code (a `sed -i`
/// during a read-only call). The edit is undone before the fix, the call
/// is recorded as `tree_edited` and counts as failed (the built-in
/// analyzer answers), so a fix agent that changes nothing cannot pass off
/// the analysis's edit as its own success.
#[test]
fn an_analysis_that_edits_the_tree_is_undone_and_counts_as_failed() {
    let limits = Limits {
        max_iterations: 1,
        ..Limits::default()
    };
    let mut h = harness(true, limits, None);
    h.machine.chain =
        vec![crate::agents::config::resolve(&h.machine.config.agents, "fixer").unwrap()];
    let mut p = ports();
    fixer(&mut p, |role, _, _| match role {
        Role::Analysis => AgentAct::writes(&[("calc/ops.py", FIXED)]),
        _ => AgentAct::writes(&[]),
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(
        ending.exit,
        Exit::Failed,
        "not completed by the analysis's edit"
    );
    assert_eq!(
        p.work["calc/ops.py"], BUGGY,
        "the analysis's edit is undone"
    );
    let analysis: Vec<_> = s
        .history
        .agent_calls
        .iter()
        .filter(|c| c.role == Role::Analysis)
        .collect();
    assert!(!analysis.is_empty());
    for c in analysis {
        assert_eq!(
            c.tamper,
            Some(crate::artifacts::fix_history::Tamper::TreeEdited)
        );
        assert_ne!(
            c.outcome,
            crate::artifacts::fix_history::CallOutcome::Accepted
        );
    }
}

/// `(iteration, sealed)` of every full-suite run.
fn full_runs(s: &CycleState) -> Vec<(u32, bool)> {
    s.iter
        .iterations
        .iter()
        .filter(|r| r.scope == Scope::Full)
        .map(|r| (r.iteration, r.sealed))
        .collect()
}

/// DESIGN.md §10.4, on a suite where tier 2 would be the whole suite (no
/// import map: every test may depend on the fix): a partial fix, then a
/// wrong edit that makes no failing test pass, then the correct fix. Only
/// the first run and the sealed run that completes run the whole suite;
/// the wrong edit is put back uncommitted instead of costing a full run to
/// look for its damage. No commit gets both an in-place and a sealed full
/// run.
#[test]
fn a_fix_that_helps_nothing_costs_no_full_run_and_only_the_sealed_run_completes() {
    const WRONG: &str = "add: a + b\nsub: a - b\nmul: a * b\npow: a ** b\ndiv: a // b\n";
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        AgentAct::writes(&[("calc/ops.py", [HALF, WRONG, FIXED][(n as usize - 1).min(2)])])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(full_runs(&s), [(1, false), (4, true)], "{:?}", runs(&s));
    assert_eq!(
        p.journal
            .iter()
            .filter(|l| l.starts_with("tests all"))
            .count(),
        2,
        "{:?}",
        p.journal
    );
    let outcomes: Vec<&str> = s
        .history
        .entries
        .iter()
        .map(|e| e.outcome.as_str())
        .collect();
    assert_eq!(outcomes, ["improved", "no_change", "success"]);
    // The wrong edit never entered history.
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 3 fix attempt(s))",
            "test-cycle: iteration 3 - aggressive strategy (pass: 90.0% → 100.0%)",
            "test-cycle: iteration 1 - conservative strategy (pass: 80.0% → 90.0%)",
        ],
        "{:?}",
        p.journal
    );
}

/// Without progressive retest every fix gets one full run, and the one
/// that accepts is sealed: no commit is run in full twice (in place, then
/// sealed).
#[test]
fn without_progressive_retest_each_fix_gets_one_full_run_and_the_accepting_one_is_sealed() {
    let mut h = harness(true, Limits::default(), None);
    h.machine.config.cycle.progressive = false;
    let mut p = ports();
    fixer(&mut p, |_, n, _| {
        AgentAct::writes(&[("calc/ops.py", if n == 1 { HALF } else { FIXED })])
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(
        full_runs(&s),
        [(1, false), (2, true), (3, true)],
        "{:?}",
        runs(&s)
    );
    assert!(s.iter.iterations.iter().all(|r| r.scope == Scope::Full));
}

// ----- speculative attempts (fix.candidates) ---------------------------------

/// The machine with `n` candidates per fix step.
fn candidates_harness(n: u32, cap: Option<f64>) -> Harness {
    let mut h = harness(true, Limits::default(), cap);
    h.machine.config.fix.candidates = n;
    h.machine.config.fix.max_parallel = Some(n);
    h
}

/// Candidates 1, 2, 3 of every step: half a fix, both bugs fixed but three
/// passing tests broken, the whole fix.
fn three_kinds(_: Role, n: u32, _: &crate::engine::fake::Work) -> AgentAct {
    match n % 3 {
        1 => AgentAct::writes(&[("calc/ops.py", HALF)]),
        2 => AgentAct::writes(&[("calc/ops.py", BROKEN)]),
        _ => AgentAct::writes(&[("calc/ops.py", FIXED)]),
    }
}

fn verdicts(s: &CycleState, iteration: u32) -> Vec<&'static str> {
    s.history
        .entries
        .iter()
        .find(|e| e.iteration == iteration)
        .map(|e| e.candidates.iter().map(|c| c.verdict.as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn three_candidates_one_step_the_best_committed_once() {
    let h = candidates_harness(3, None);
    let mut p = ports();
    fixer(&mut p, three_kinds);
    let mut s = fresh(&h.machine, p.now());
    let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 1 fix attempt(s))",
            "test-cycle: iteration 1 - surgical strategy (pass: 80.0% → 100.0%)",
        ]
    );
    assert_eq!(s.history.entries.len(), 1, "one step, one attempt");
    assert_eq!(s.history.entries[0].candidate, Some(3));
    assert_eq!(verdicts(&s, 1), ["outranked", "regression", "chosen"]);
    // The project's files were never a candidate's until the choice.
    let applied = p
        .journal
        .iter()
        .position(|l| l.starts_with("apply "))
        .unwrap();
    assert!(
        p.journal[..applied]
            .iter()
            .all(|l| !l.starts_with("commit")),
        "{:?}",
        p.journal
    );
    let chosen: Vec<_> = out
        .json
        .iter()
        .filter(|e| e["event"] == "candidate-chosen")
        .collect();
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0]["candidate"], 3);
    assert_eq!(
        out.json
            .iter()
            .filter(|e| e["event"] == "candidate-finished")
            .count(),
        3
    );
}

/// Issue #29: a candidate's times are the ports' clock's, like every other
/// time of a run. The fake clock moves 2 s per agent call and 1 s per test
/// run and nothing else, so each candidate's agent, tests (its tiers, and
/// the re-run of the tests it broke) and whole time are exactly those.
#[test]
fn candidate_times_come_from_the_ports_clock() {
    let h = candidates_harness(3, None);
    let mut p = ports();
    fixer(&mut p, three_kinds);
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    let rows = &s.history.entries[0].candidates;
    assert_eq!(rows.len(), 3);
    for c in rows {
        assert_eq!(c.agent_ms, 2_000, "{c:?}");
        assert!(!c.tiers.is_empty(), "{c:?}");
        let runs = c.tiers.len() + usize::from(!c.broken.is_empty());
        assert_eq!(c.tests_ms, 1_000 * runs as u64, "{c:?}");
        assert_eq!(c.duration_ms, c.agent_ms + c.tests_ms, "{c:?}");
    }
}

#[test]
fn candidates_that_all_regress_are_a_failed_attempt_and_the_loop_goes_on() {
    let h = candidates_harness(2, None);
    let mut p = ports();
    // Step 1: both break; step 2: the first fixes everything.
    fixer(&mut p, |_, n, _| match n {
        1 | 2 => AgentAct::writes(&[("calc/ops.py", BROKEN)]),
        3 => AgentAct::writes(&[("calc/ops.py", FIXED)]),
        _ => AgentAct::writes(&[("calc/ops.py", HALF)]),
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!(verdicts(&s, 1), ["regression", "regression"]);
    assert_eq!(s.history.entries[0].outcome.as_str(), "no_change");
    assert_eq!(s.history.entries[0].candidate, None);
    assert_eq!(verdicts(&s, 2), ["chosen", "outranked"]);
    // No commit for the failed step, none reverted.
    assert_eq!(
        p.subjects(),
        [
            "test-cycle: session WFS-test-the-fake completed (pass: 100.0%, 2 fix attempt(s))",
            "test-cycle: iteration 2 - conservative strategy (pass: 80.0% → 100.0%)",
        ]
    );
}

#[test]
fn the_cost_cap_counts_every_candidate_and_one_not_started_is_recorded() {
    let h = candidates_harness(3, Some(1.0));
    let mut p = ports();
    fixer(&mut p, |role, n, w| AgentAct {
        cost_usd: Some(0.6),
        ..three_kinds(role, n, w)
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    // Candidate 3 (the whole fix) never started: $1.20 spent of $1.00.
    assert_eq!(verdicts(&s, 1), ["chosen", "regression", "not_started"]);
    assert_eq!(
        p.journal.iter().filter(|l| l.starts_with("agent ")).count(),
        2,
        "{:?}",
        p.journal
    );
    assert!((s.spent_usd() - 1.2).abs() < 1e-9);
    // The next step is refused by the cap.
    assert_eq!(ending.exit, Exit::Failed);
    assert!(
        s.iter
            .blocked_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("agent cost cap reached")),
        "{:?}",
        s.iter.blocked_reason
    );
}

#[test]
fn pause_or_crash_at_every_step_of_a_speculative_run_ends_as_an_uninterrupted_one() {
    let h = candidates_harness(3, None);
    let mut reference = ports();
    fixer(&mut reference, three_kinds);
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want = (runs(&s), reference.subjects(), verdicts(&s, 1));
    for k in 0..reference.steps.get() {
        let mut p = ports();
        fixer(&mut p, three_kinds);
        p.interrupt_after = Some(k);
        let mut s = fresh(&h.machine, p.now());
        let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "interrupted after {k} steps");
        p.interrupt_after = None;
        let mut s = reload(&h.machine, &p, Location::Active);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success, "after {k}: {:?}", p.journal);
        assert_eq!(
            (runs(&s), p.subjects(), verdicts(&s, 1)),
            want,
            "interrupted after {k} steps"
        );
    }
    // Ctrl-C during a candidate's test run (runs 2..): the batch is
    // stopped, the step paused; the resume runs the candidates again.
    for n in 2..=4 {
        let mut p = ports();
        fixer(&mut p, three_kinds);
        p.interrupt_in_run = Some(n);
        let mut s = fresh(&h.machine, p.now());
        let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Paused, "Ctrl-C in test run {n}");
        let paused = out.json.iter().find(|e| e["event"] == "paused").unwrap();
        assert_eq!(paused["reason"]["kind"], "interrupted");
        assert!(s.history.entries.is_empty(), "no attempt counted");
        p.interrupt_in_run = None;
        let mut s = reload(&h.machine, &p, Location::Active);
        let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
        assert_eq!(ending.exit, Exit::Success);
        // The scripted agent answers by its call count, which the stopped
        // batch moved on: the candidates' order differs, not the end.
        assert_eq!(runs(&s), want.0, "Ctrl-C in test run {n}");
        assert_eq!(p.subjects().len(), 2, "one fix commit: {:?}", p.subjects());
        assert_eq!(
            verdicts(&s, 1).iter().filter(|v| **v == "chosen").count(),
            1
        );
    }
    // kill -9 after every step commit.
    for k in 1..reference.step_commits {
        let (s, ending, p) = crash_and_resume(&h.machine, k, three_kinds);
        assert_eq!(
            ending.exit,
            Exit::Success,
            "crash after commit {k}: {:?}",
            p.journal
        );
        assert_eq!(
            (runs(&s), p.subjects(), verdicts(&s, 1)),
            want,
            "crash after commit {k}"
        );
    }
}

// DESIGN.md §10.2, HEAD after every agent call, in-process: the fake
// ports keep a commit graph with a HEAD and branches, so an agent that
// commits, resets, checks out another branch or is killed after its
// commit runs through the same checks as against real git.

use crate::artifacts::fix_history::{FixOutcome, Tamper};
use crate::engine::fake::{GitAct, MAIN};

/// An agent act that writes `files` and then does `git` things.
fn with_git(files: &[(&str, &str)], git: Vec<GitAct>) -> AgentAct {
    AgentAct {
        git,
        ..AgentAct::writes(files)
    }
}

/// What a HEAD scenario checks after the run: the branch is the one the
/// run started on, at `HEAD`; no agent commit is on it.
fn on_main_without(p: &FakePorts, agent_commits: &[String]) {
    assert_eq!(p.branch.as_deref(), Some(MAIN), "{:?}", p.journal);
    assert_eq!(p.branches.get(MAIN).map(String::as_str), p.head_commit());
    let log = p.log();
    for c in agent_commits {
        assert!(!log.contains(c), "agent commit {c} on the branch: {log:?}");
    }
}

/// Case 1 of issue #15: the agent commits its own (breaking) change. Its
/// commit is folded into wfx's checkpoint, so the rollback reverts the
/// breakage; the second attempt's commit is folded too.
#[test]
fn agent_commits_are_folded_into_the_attempt_and_rolled_back_with_it() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    let base = p.head_commit().unwrap().to_string();
    fixer(&mut p, |_, n, _| match n {
        1 => with_git(
            &[("calc/ops.py", BROKEN), ("calc/other.py", "ok = False\n")],
            vec![GitAct::Commit("x".into())],
        ),
        _ => with_git(&[("calc/ops.py", FIXED)], vec![GitAct::Commit("y".into())]),
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    let first = &s.history.entries[0];
    assert_eq!(first.outcome, FixOutcome::RolledBack, "{first:?}");
    assert_eq!(first.agent_commits.len(), 1, "{first:?}");
    let fix = first.commit.clone().expect("a checkpoint");
    let rollback = first.rollback_commit.clone().expect("a rollback");
    // The checkpoint sits on the pre-call HEAD and holds the agent's change.
    assert_eq!(p.log().last(), Some(&base));
    assert_eq!(p.tree_of(&fix).unwrap()["calc/ops.py"], BROKEN);
    assert_eq!(p.tree_of(&rollback).unwrap()["calc/ops.py"], BUGGY);
    let second = &s.history.entries[1];
    assert_eq!(second.agent_commits.len(), 1, "{second:?}");
    assert!(p.subjects().iter().all(|s| s != "x" && s != "y"));
    let all: Vec<String> = s
        .history
        .entries
        .iter()
        .flat_map(|e| e.agent_commits.clone())
        .collect();
    on_main_without(&p, &all);
    assert_eq!(p.work["calc/ops.py"], FIXED);
}

/// Case 2: `git reset --hard HEAD~1` in the agent's second call, which
/// drops wfx's checkpoint of the first. Branch and work tree come back,
/// the attempt fails with `tamper: head_moved`, the run completes.
#[test]
fn a_reset_by_the_agent_is_undone_and_the_attempt_fails() {
    let h = harness(true, Limits::default(), None);
    let mut p = ports();
    fixer(&mut p, |_, n, work| match n {
        1 => AgentAct::writes(&[("calc/ops.py", HALF)]),
        2 => {
            let edited = format!("{}# reset by the agent\n", work["calc/ops.py"]);
            AgentAct {
                git: vec![GitAct::ResetHard(1)],
                writes_after_git: vec![("calc/ops.py".into(), edited)],
                ..AgentAct::writes(&[])
            }
        }
        _ => AgentAct::writes(&[("calc/ops.py", FIXED)]),
    });
    let mut s = fresh(&h.machine, p.now());
    let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    let first = &s.history.entries[0];
    let second = &s.history.entries[1];
    assert_eq!(first.tamper, None, "{first:?}");
    assert_eq!(second.tamper, Some(Tamper::HeadMoved), "{second:?}");
    assert_ne!(second.outcome, FixOutcome::Success);
    // Iteration 1's checkpoint is still on the branch.
    let fix1 = first.commit.clone().expect("iteration 1 committed");
    assert!(p.log().contains(&fix1), "{:?}", p.journal);
    // The edit made after the reset is undone with it, never committed.
    assert!(p.journal.iter().any(|l| l.starts_with("restore HEAD")));
    for c in p.log() {
        let files = p.tree_of(&c).unwrap();
        assert!(!files.values().any(|f| f.contains("reset by the agent")));
    }
    assert_eq!(p.work["calc/ops.py"], FIXED);
    on_main_without(&p, &[]);
    assert!(
        s.history
            .agent_calls
            .iter()
            .any(|c| c.iteration == Some(2) && c.tamper == Some(Tamper::HeadMoved)),
        "{:?}",
        s.history.agent_calls
    );
}

/// A checkout of an older commit on a new branch, `git switch -c` at the
/// same commit, or that and a commit there: the branch the run is on
/// comes back, at its commit, the attempt fails (`head_moved`), and no
/// wfx commit lands on another branch.
#[test]
fn an_agent_that_switches_branches_is_put_back_on_the_run_branch() {
    for (name, acts) in [
        (
            "checkout of an older commit",
            vec![GitAct::Switch("elsewhere".into(), 1)],
        ),
        (
            "a new branch at the same commit",
            vec![GitAct::Switch("elsewhere".into(), 0)],
        ),
        (
            "a new branch with a commit",
            vec![
                GitAct::Switch("elsewhere".into(), 0),
                GitAct::Commit("z".into()),
            ],
        ),
    ] {
        let h = harness(true, Limits::default(), None);
        let mut p = ports();
        fixer(&mut p, move |_, n, _| match n {
            1 => AgentAct::writes(&[("calc/ops.py", HALF)]),
            2 => with_git(&[("calc/ops.py", FIXED)], acts.clone()),
            _ => AgentAct::writes(&[("calc/ops.py", FIXED)]),
        });
        let mut s = fresh(&h.machine, p.now());
        let (ending, _) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Success, "{name}: {:?}", p.journal);
        on_main_without(&p, &[]);
        assert_eq!(
            s.history.entries[1].tamper,
            Some(Tamper::HeadMoved),
            "{name}"
        );
        // Every checkpoint is on the run's branch; none made after the
        // switch is on the agent's.
        let elsewhere = p.branches.get("refs/heads/elsewhere").cloned();
        for (i, e) in s.history.entries.iter().enumerate() {
            if let Some(c) = &e.commit {
                assert!(
                    p.log().contains(c),
                    "{name}: {c} is not on the run's branch"
                );
                if i > 0 {
                    assert_ne!(Some(c), elsewhere.as_ref(), "{name}");
                }
            }
        }
    }
}

/// `kill -9` while a fix agent that commits its own fix runs, then a
/// resume (the lock says the run died): the commit the agent made before
/// it died is folded into the attempt as in an uninterrupted run — the
/// same commits, pass rates and one attempt with one agent commit.
#[test]
fn a_crash_during_an_agent_that_commits_resumes_as_uninterrupted() {
    let h = harness(true, Limits::default(), None);
    let script = |killed: bool| {
        move |_: Role, n: u32, work: &crate::engine::fake::Work| {
            // A re-run after the kill finds the fix already committed.
            let git = if work["calc/ops.py"] == FIXED {
                Vec::new()
            } else {
                vec![GitAct::Commit("agent: fix".into())]
            };
            AgentAct {
                killed: killed && n == 1,
                ..with_git(&[("calc/ops.py", FIXED)], git)
            }
        }
    };
    let mut reference = ports();
    fixer(&mut reference, script(false));
    let mut s = fresh(&h.machine, reference.now());
    drive(&h.machine, &mut s, &mut reference, false);
    let want = (runs(&s), reference.subjects());
    assert_eq!(s.history.entries.len(), 1);
    assert_eq!(s.history.entries[0].agent_commits.len(), 1);

    let mut p = ports();
    fixer(&mut p, script(true));
    let mut s = fresh(&h.machine, p.now());
    let ui = Printer::plain();
    let died = run(
        &h.machine,
        &mut s,
        &mut p,
        &mut Sinks::capture(&ui, &Capture::default()),
        &DriverConfig {
            fold_agent_commits: true,
            ..DriverConfig::default()
        },
    );
    assert!(died.is_err(), "the run was killed");
    p.previous_run_died = true;
    let mut s = reload(&h.machine, &p, Location::Active);
    let (ending, _) = drive(&h.machine, &mut s, &mut p, true);
    assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
    assert_eq!((runs(&s), p.subjects()), want, "{:?}", p.journal);
    assert_eq!(s.history.entries.len(), 1);
    assert_eq!(
        s.history.entries[0].agent_commits.len(),
        1,
        "{:?}",
        p.journal
    );
    on_main_without(&p, &s.history.entries[0].agent_commits);
}

/// Every time a value a string of `json` holds (RFC 3339), recursively.
fn times_in(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s)
            if s.len() >= 20 && chrono::DateTime::parse_from_rfc3339(s).is_ok() =>
        {
            out.push(s.clone())
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| times_in(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| times_in(x, out)),
        _ => {}
    }
}

/// Issue #29: time goes through `Ports`. Every time the documents and
/// events of a run hold is the fake clock's (2026-01-01, a few seconds
/// in), never the wall clock's: a run with a rollback, and one with
/// speculative candidates.
#[test]
fn every_time_recorded_comes_from_the_ports_clock() {
    type Script = fn(Role, u32, &crate::engine::fake::Work) -> AgentAct;
    let runs: [(Harness, Script); 2] = [
        (harness(true, Limits::default(), None), |_, n, _| {
            if n == 1 {
                AgentAct::writes(&[("calc/ops.py", BROKEN), ("calc/other.py", "ok = False\n")])
            } else {
                AgentAct::writes(&[("calc/ops.py", FIXED)])
            }
        }),
        (candidates_harness(3, None), three_kinds),
    ];
    for (h, script) in runs {
        let mut p = ports();
        fixer(&mut p, script);
        let mut s = fresh(&h.machine, p.now());
        let (ending, out) = drive(&h.machine, &mut s, &mut p, false);
        assert_eq!(ending.exit, Exit::Success, "{:?}", p.journal);
        let mut times = Vec::new();
        for bytes in p.files.values() {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
                times_in(&v, &mut times);
            }
        }
        out.json.iter().for_each(|e| times_in(e, &mut times));
        assert!(times.len() > 10, "{times:?}");
        for t in &times {
            assert!(
                t.starts_with("2026-01-01T00:0"),
                "{t} is not the fake clock's"
            );
        }
    }
}
