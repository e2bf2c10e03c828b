//! The one driver (DESIGN.md §10.1): it asks a machine for its next step,
//! performs the effect through [`Ports`], hands the observation back, makes
//! the step durable (one session-transaction commit) and only then tells
//! the sinks what happened. Pauses, blocks and completion are endings the
//! machine reaches, never errors; errors are the environment's (exit 2) or
//! bugs (exit 4).

use std::path::PathBuf;
use std::time::SystemTime;

use super::candidates::{
    self, Candidate, CandidateBatch, CandidateDone, CandidateEnd, CandidateNote, CandidateWork,
};
use super::event::{CandidateEvent, CandidateFinished, CandidateTierEvent, Event, WakeCause};
use super::policy;
use super::ports::{Ports, ShellRun, TestRun, Wake};
use super::sink::Sinks;
use super::step::{
    AgentCallDone, AgentRequest, AnalysisRequest, ArchiveRequest, Before, CandidateWorkRequest,
    CandidatesDone, CandidatesRequest, Effect, Ending, Observation, Observed, PauseReason,
    ProcessEnd, ReviewRequest, Reviewed, ShellDone, ShellRequest, Snapshot, Step, TestRequest,
    TestsRun, Text, ValidateRequest, Validated,
};
use super::txn::Document;
use crate::agents::vars::INLINE_OUTPUT_MAX;
use crate::agents::{self, AnalysisCtx, CallRecord, Invocation, Invoked, Role, Vars};
use crate::artifacts::task_record::CoverageSource;
use crate::artifacts::test_results::Layer;
use crate::error::{Error, Result};

/// A pure state machine over typed state (DESIGN.md §10.1).
pub trait Machine {
    type State;

    /// What to do next, from the state alone.
    fn next(&self, state: &Self::State) -> Step;

    /// Fold what happened into the state; the events to tell.
    fn observe(&self, state: &mut Self::State, obs: Observation) -> Vec<Event>;

    /// The documents the observations since the last call changed, the
    /// state document last: what the step's commit writes.
    fn documents(&self, state: &mut Self::State) -> Result<Vec<Document>>;

    /// Agent cost recorded so far in the session (US dollars), from the
    /// machine's own records: what the cost cap is checked against.
    fn spent_usd(&self, state: &Self::State) -> f64;

    /// The session directory now (it moves when archived).
    fn session_dir(&self, state: &Self::State) -> PathBuf;
}

/// What the driver needs besides the machine.
#[derive(Debug, Clone, Default)]
pub struct DriverConfig {
    /// `agents.max_cost_usd`.
    pub max_cost_usd: Option<f64>,
    /// The state was loaded from disk (a resume).
    pub resumed: bool,
    /// Commits an agent makes on top of `HEAD` are folded into the
    /// machine's own checkpoint (the cycle commits each attempt itself);
    /// otherwise they stay and are recorded (DESIGN.md §10.2).
    pub fold_agent_commits: bool,
    /// `--watch`: an ending that waits for a person's fix is not the end:
    /// the driver waits through [`Ports::wait_for_fix`] and goes on as a
    /// resume would (DESIGN.md §10.7).
    pub watch: bool,
}

/// Run `machine` from `state` until it ends. The final `done` event is
/// sent here, for both front ends.
pub fn run<M: Machine>(
    machine: &M,
    state: &mut M::State,
    ports: &mut dyn Ports,
    sinks: &mut Sinks,
    config: &DriverConfig,
) -> Result<Ending> {
    let mut d = Driver {
        ports,
        sinks,
        cap: config.max_cost_usd,
        fold: config.fold_agent_commits,
        steps: 0,
    };
    d.apply(
        machine,
        state,
        Observed::Start {
            resumed: config.resumed,
        },
    )?;
    loop {
        let step = machine.next(state);
        let effect = match step {
            Step::End(ending) if config.watch && ending.waits_for_fix => {
                d.watch(machine, state, &ending)?;
                continue;
            }
            Step::End(ending) => {
                let at = d.ports.now();
                d.sinks.note(&format!("{} steps", d.steps), at);
                d.sinks
                    .emit(&Event::Done(Box::new(ending.done.clone())), at);
                return Ok(ending);
            }
            Step::Do(effect) => effect,
        };
        if d.ports.interrupted() {
            let during = String::new();
            d.apply(
                machine,
                state,
                Observed::Paused(PauseReason::Interrupted { during }),
            )?;
            continue;
        }
        d.ports.check_session()?;
        let seen = match d.perform(machine, state, effect) {
            Ok(seen) => seen,
            Err(Error::Interrupted(during)) => {
                Observed::Paused(PauseReason::Interrupted { during })
            }
            Err(Error::Hook { hook, path, output }) => {
                Observed::Paused(PauseReason::HookFailed { hook, path, output })
            }
            Err(Error::RunnerEdited { agent, changed }) => {
                Observed::Paused(PauseReason::RunnerEdited { agent, changed })
            }
            Err(e) => return Err(e),
        };
        d.apply(machine, state, seen)?;
        d.steps += 1;
    }
}

struct Driver<'p, 's, 'u> {
    ports: &'p mut dyn Ports,
    sinks: &'s mut Sinks<'u>,
    cap: Option<f64>,
    fold: bool,
    steps: u64,
}

impl Driver<'_, '_, '_> {
    /// `--watch`: the person reads what to fix, wfx waits for a save (or
    /// Enter), then goes on as a resume would; Ctrl-C pauses as it does
    /// anywhere else. The waiting state is durable already (the pause was
    /// committed), so a watcher killed while waiting loses nothing.
    fn watch<M: Machine>(&mut self, m: &M, state: &mut M::State, ending: &Ending) -> Result<()> {
        self.sinks.say(&ending.lines);
        let at = self.ports.now();
        let sinks = &mut *self.sinks;
        // Told once a save counts: a person who saves on reading it is seen.
        let woke = self
            .ports
            .wait_for_fix(&mut |enter| sinks.emit(&Event::Watching { enter }, at))?;
        let (by, files) = match woke {
            Wake::Interrupted => {
                let during = "waiting for your fix".to_string();
                return self.apply(
                    m,
                    state,
                    Observed::Paused(PauseReason::Interrupted { during }),
                );
            }
            Wake::Enter => (WakeCause::Enter, Vec::new()),
            Wake::Files(mut files) => {
                files.truncate(8);
                (WakeCause::Files, files)
            }
        };
        self.sinks
            .emit(&Event::Woken { by, files }, self.ports.now());
        self.apply(m, state, Observed::Start { resumed: true })
    }

    /// Observe, commit the step, then tell the sinks.
    fn apply<M: Machine>(&mut self, m: &M, state: &mut M::State, what: Observed) -> Result<()> {
        let at = self.ports.now();
        let events = m.observe(state, Observation { at, what });
        let docs = m.documents(state)?;
        self.ports.commit_step(docs)?;
        self.sinks
            .set_run_log(Some(m.session_dir(state).join(".process").join("run.log")));
        for e in &events {
            self.sinks.emit(e, at);
        }
        Ok(())
    }

    fn perform<M: Machine>(&mut self, m: &M, state: &M::State, effect: Effect) -> Result<Observed> {
        Ok(match effect {
            Effect::RunTests(req) => self.run_tests(req)?,
            Effect::Agent(req) => self.agent(m.spent_usd(state), req)?,
            Effect::Analyze(req) => self.analyze(m.spent_usd(state), req)?,
            Effect::Snapshot => Observed::Snapshot(self.ports.snapshot()?),
            Effect::Inspect(before, versions_of) => {
                Observed::Inspected(self.ports.inspect(&before, versions_of)?)
            }
            Effect::Commit(c) => Observed::Committed(self.ports.commit(
                &c.paths,
                c.session_dir.as_deref(),
                &c.message,
                &c.trailers,
            )?),
            Effect::Revert(r) => {
                match self.ports.revert(
                    &r.commit,
                    r.session_dir.as_deref(),
                    &r.message,
                    &r.trailers,
                ) {
                    Ok(id) => Observed::Reverted(Ok(id)),
                    Err(Error::Git(msg)) => Observed::Reverted(Err(msg)),
                    Err(e) => return Err(e),
                }
            }
            Effect::Restore(before) => Observed::Restored(self.ports.undo_tree_edits(&before)?),
            Effect::Survey => Observed::Surveyed(self.ports.survey()?),
            Effect::Shell(req) => self.shell(req)?,
            Effect::Validate(req) => self.validate(req)?,
            Effect::Review(req) => self.review(req)?,
            Effect::Archive(req) => self.archive(req)?,
            Effect::Pause(reason) => Observed::Paused(reason),
            Effect::Block(reason) => Observed::Blocked(reason),
            Effect::Update => Observed::Updated,
            Effect::Candidates(req) => self.candidates(m.spent_usd(state), req)?,
            Effect::Apply(req) => {
                self.ports
                    .apply_tree(req.before.tree.as_deref().unwrap_or_default(), &req.tree)?;
                Observed::Applied(self.ports.inspect(&req.before, req.versions_of)?)
            }
        })
    }

    /// Speculative attempts (DESIGN.md §11.4): the candidates' texts
    /// resolved, the cost cap before the first, the batch through
    /// [`Ports::run_candidates`] (each candidate with the checks of
    /// [`candidates::run_one`] in its own checkout), told live as
    /// `candidate-started` and `candidate-finished`. The project itself is
    /// read-only meanwhile: whatever a candidate did to it (its work tree,
    /// `HEAD`, wfx's files, the repository's settings) is undone after the
    /// batch, as after an analysis call.
    fn candidates(&mut self, spent: f64, req: CandidatesRequest) -> Result<Observed> {
        let mut list = Vec::new();
        for c in &req.candidates {
            let work = match &c.work {
                CandidateWorkRequest::Agent(a) => {
                    let (prompt, vars) = self.resolve(&a.prompt)?;
                    CandidateWork::Agent {
                        agent: a.agent.clone(),
                        role: a.role,
                        prompt,
                        vars,
                        files: a.files.clone(),
                        env: a.env.clone(),
                    }
                }
                CandidateWorkRequest::Shell(s) => {
                    let (command, _) = self.resolve(&s.command)?;
                    CandidateWork::Shell {
                        command,
                        log: s.log.clone(),
                        env: s.env.clone(),
                        timeout: s.timeout,
                    }
                }
            };
            list.push(Candidate {
                index: c.index,
                agent: c.agent.clone(),
                strategy: c.strategy,
                work,
                dir: c.dir.clone(),
            });
        }
        let batch = CandidateBatch {
            iteration: req.iteration,
            step: req.step,
            snapshot: req.snapshot.clone(),
            candidates: list,
            max_parallel: req.max_parallel.max(1),
            tests: req.tests.clone(),
            environment: req.environment.clone(),
            cap: self.cap,
            spent,
            share: req.share.clone(),
        };
        if let Some(reason) = candidates::may_start(&batch, 0.0) {
            return Ok(Observed::Blocked(reason));
        }
        let before = self.ports.snapshot()?;
        let guard = super::head::before_call(self.ports, None, self.fold)?;
        let repo = self.ports.repo_guard()?;
        let runner = self.ports.runner_env();
        let of = batch.candidates.len() as u32;
        let baseline = batch.tests.baseline.clone();
        let sinks = &mut *self.sinks;
        let at = self.ports.now();
        let ran = self
            .ports
            .run_candidates(&batch, req.versions_of, &mut |note| {
                let event = match note {
                    CandidateNote::Started(c) => {
                        Event::CandidateStarted(candidate_event(&batch, c, of))
                    }
                    CandidateNote::Finished(c, done) => Event::CandidateFinished(Box::new(
                        finished_event(candidate_event(&batch, c, of), done, baseline.as_deref()),
                    )),
                };
                sinks.emit(&event, at);
            });
        // The project's own checks, also after Ctrl-C.
        let mut call = batch_record(self.ports.now());
        super::head::after_call(self.ports, &guard, Some(&before), self.fold, &mut call)?;
        super::tamper::after_call(self.ports, &mut call, &repo, Some(&before), None)?;
        self.ports
            .runner_env()
            .unchanged_since(&runner, "a candidate")?;
        let done = ran?;
        let calls: Vec<&CallRecord> = done
            .iter()
            .filter_map(|d| match &d.end {
                CandidateEnd::Ran(r) => r.call.as_ref(),
                _ => None,
            })
            .collect();
        if let Some(c) = calls.iter().find(|c| c.interrupted) {
            return Ok(Observed::Paused(PauseReason::Interrupted {
                during: format!("{} was fixing iteration {}", c.agent, req.iteration),
            }));
        }
        // Every candidate that ran could not reach its agent: a pause, as
        // for one attempt; one that could is judged with the others.
        let unavailable: Vec<PauseReason> = calls
            .iter()
            .filter_map(|c| policy::pause_for(c, Role::Fix, "fixing"))
            .collect();
        if !calls.is_empty() && unavailable.len() == calls.len() {
            return Ok(Observed::Paused(unavailable[0].clone()));
        }
        Ok(Observed::Candidates(Box::new(CandidatesDone {
            candidates: done,
            tamper: call.tamper,
            tamper_note: call.error_message,
        })))
    }

    /// Variables resolved (`${test.output}` read from its log) and the
    /// text interpolated when it is a template.
    fn resolve(&mut self, t: &Text) -> Result<(String, Vars)> {
        let mut vars = t.vars.clone();
        if let Some((log, shown)) = &t.test_output {
            let head = self.ports.read_head(log, INLINE_OUTPUT_MAX + 1);
            vars.set_test_output(&head, shown);
        }
        let text = match t.mode {
            None => t.text.clone(),
            Some(mode) => agents::interpolate(&t.text, &vars, mode)
                .map_err(|e| Error::usage(format!("{}: {e}", t.label)))?,
        };
        Ok((text, vars))
    }

    /// A test run; a sealed one (DESIGN.md §11.1) in a clean checkout of
    /// the commit, which is removed afterwards whatever happened.
    fn run_tests(&mut self, req: TestRequest) -> Result<Observed> {
        // The code under test runs too: what it installs into the runner
        // would decide every later run (see `runner_env`).
        let runner = self.ports.runner_env();
        let sealed = match &req.seal {
            Some(seal) => self.ports.seal(seal)?,
            None => None,
        };
        let observed = self.run_tests_in(&req, sealed.as_ref());
        let (Some(sealed), Some(seal)) = (sealed, &req.seal) else {
            self.ports
                .runner_env()
                .unchanged_since(&runner, "the test run")?;
            return observed;
        };
        let outside = self.ports.unseal(&sealed, seal);
        self.ports
            .runner_env()
            .unchanged_since(&runner, "the test run")?;
        let mut observed = observed?;
        if let Observed::Tests(run) = &mut observed {
            run.sealed = Some(super::step::SealedRun {
                commit: sealed.commit,
                outside_commit: outside?,
            });
        }
        Ok(observed)
    }

    fn run_tests_in(
        &mut self,
        req: &TestRequest,
        sealed: Option<&super::step::Sealed>,
    ) -> Result<Observed> {
        let (spinner, progress) = self.sinks.printer().test_spinner(req.spinner.clone());
        let env: Vec<(String, String)> = req
            .env
            .iter()
            .chain(sealed.iter().flat_map(|s| s.env.iter()))
            .cloned()
            .collect();
        let run = TestRun {
            root: sealed.map_or(&req.root, |s| &s.root),
            detected: &req.detected,
            subset: req.subset.as_deref(),
            log: &req.log,
            report_dir: &req.report_dir,
            timeout: req.timeout,
            env: &env,
            previous: req.previous.as_deref(),
        };
        let mut results = self.ports.run_tests(&run, progress)?;
        drop(spinner);
        results.output_log = Some(req.log_shown.clone());
        // The flaky re-run (DESIGN.md §5.3), the same for every machine:
        // failures that are new are run once more; those that pass are
        // flaky. Skipped where the runner cannot run a subset (it would be
        // a second full run).
        let mut flaky = Vec::new();
        if let Some(check) = &req.flaky {
            let ids: Vec<String> = results
                .failures
                .iter()
                .filter(|f| f.test_type != Layer::Static && !f.flaky)
                .filter(|f| !check.known_failing.contains(&f.test))
                .map(|f| f.test.clone())
                .collect();
            if !ids.is_empty()
                && crate::testing::select::filter_args(req.detected.framework, &ids).is_some()
            {
                let (spinner, progress) = self
                    .sinks
                    .printer()
                    .test_spinner(format!("{} · re-running the new failures", req.spinner));
                let rerun = self.ports.run_tests(
                    &TestRun {
                        subset: Some(&ids),
                        log: &check.log,
                        previous: None,
                        ..run
                    },
                    progress,
                )?;
                drop(spinner);
                flaky = crate::testing::mark_flaky(&mut results, &rerun);
            }
        }
        let output_head = self.ports.read_head(&req.log, INLINE_OUTPUT_MAX + 1);
        Ok(Observed::Tests(Box::new(TestsRun {
            results,
            flaky,
            output_head,
            sealed: None,
        })))
    }

    /// Every agent call of a step goes through here: the cost cap, the
    /// call, then the checks after it (see [`call_agent`]); a call that
    /// could not reach its agent pauses the session.
    fn agent(&mut self, spent: f64, req: AgentRequest) -> Result<Observed> {
        let before = match &req.inspect {
            Some(Before::Now) => Some(self.ports.snapshot()?),
            Some(Before::Recorded(s)) => Some(s.clone()),
            None => None,
        };
        let (prompt, vars) = self.resolve(&req.prompt)?;
        let started = SystemTime::from(self.ports.now());
        let spinner = self.sinks.printer().spinner(req.spinner.clone());
        let invoked = call_agent(
            self.ports,
            self.cap,
            self.fold,
            spent,
            &Invocation {
                agent: &req.agent,
                role: req.role,
                prompt: &prompt,
                vars: &vars,
                files: &req.files,
                cwd: &req.cwd,
                env: &req.env,
            },
            before.as_ref(),
        )?;
        drop(spinner);
        let call = match invoked {
            Invoked::Ran(call) => call,
            Invoked::CostCapped(reason) => return Ok(Observed::Blocked(reason)),
        };
        if let Some(reason) = policy::pause_for(&call, req.role, &req.doing) {
            return Ok(Observed::Paused(reason));
        }
        let inspection = match &before {
            Some(b) => Some(self.ports.inspect(b, req.versions_of)?),
            None => None,
        };
        let outputs = req
            .outputs
            .iter()
            .map(|(name, pattern)| (name.clone(), self.ports.find_output(pattern, started)))
            .collect();
        Ok(Observed::Agent(Box::new(AgentCallDone {
            call: *call,
            inspection,
            outputs,
        })))
    }

    /// The analysis chain: each of its calls goes through [`call_agent`].
    fn analyze(&mut self, spent: f64, req: AnalysisRequest) -> Result<Observed> {
        let log_text = self.ports.read_log(&req.log);
        let spinner = self.sinks.printer().spinner(req.spinner.clone());
        let ctx = AnalysisCtx {
            root: &req.root,
            paths: &req.paths,
            iteration: req.iteration,
            max_iterations: req.max_iterations,
            strategy: req.strategy,
            results: &req.results,
            log_text: &log_text,
            log_path: &req.log_shown,
            stuck_tests: &req.stuck_tests,
            history: &req.history,
            previous_strategies: &req.previous_strategies,
            vars: &req.vars,
            renderer: &req.renderer,
            env: &[],
        };
        let ports = &mut *self.ports;
        let cap = self.cap;
        let fold = self.fold;
        let mut spent_here = 0.0;
        let outcome = agents::analyze(&req.chain, &ctx, &mut |inv| {
            // A read-only role: call_agent undoes any change to the tree.
            let invoked = call_agent(ports, cap, fold, spent + spent_here, inv, None)?;
            if let Invoked::Ran(call) = &invoked {
                spent_here += call.cost_usd.unwrap_or(0.0);
            }
            Ok(invoked)
        })?;
        drop(spinner);
        Ok(Observed::Analyzed(Box::new(outcome)))
    }

    fn shell(&mut self, req: ShellRequest) -> Result<Observed> {
        let (command, _) = self.resolve(&req.command)?;
        if let Some(file) = &req.command_file {
            self.ports.write_view(file, command.as_bytes())?;
        }
        let before = match &req.inspect {
            Some(Before::Now) => Some(self.ports.snapshot()?),
            Some(Before::Recorded(s)) => Some(s.clone()),
            None => None,
        };
        let started = SystemTime::from(self.ports.now());
        let spinner = self.sinks.printer().spinner(req.spinner.clone());
        let end = self.ports.shell(&ShellRun {
            command: &command,
            cwd: &req.cwd,
            log: &req.log,
            fresh_log: true,
            env: &req.env,
            timeout: req.timeout,
        })?;
        drop(spinner);
        let output_head = self.ports.read_head(&req.log, INLINE_OUTPUT_MAX + 1);
        let inspection = match &before {
            Some(b) => Some(self.ports.inspect(b, None)?),
            None => None,
        };
        let outputs = req
            .outputs
            .iter()
            .map(|(name, pattern)| (name.clone(), self.ports.find_output(pattern, started)))
            .collect();
        Ok(Observed::Shell(Box::new(ShellDone {
            command,
            end,
            output_head,
            inspection,
            outputs,
        })))
    }

    fn validate(&mut self, req: ValidateRequest) -> Result<Observed> {
        let checked: Vec<String> = req
            .files
            .iter()
            .filter(|f| req.root.join(f).is_file())
            .cloned()
            .collect();
        if checked.is_empty() {
            return Ok(Observed::Validated(Box::new(Validated {
                checked,
                commands: Vec::new(),
                scanned: Vec::new(),
                changed_lines: Default::default(),
            })));
        }
        let mut commands = Vec::new();
        for (i, (step, command)) in req.commands.iter().enumerate() {
            let end = self.ports.shell(&ShellRun {
                command,
                cwd: &req.root,
                log: &req.log,
                fresh_log: i == 0,
                env: &[],
                timeout: Some(req.timeout),
            })?;
            commands.push((step.clone(), command.clone(), end));
        }
        let scanned = self.ports.scan(false, &checked);
        let mut changed_lines = std::collections::BTreeMap::new();
        if let Some(since) = &req.since {
            let mut files: Vec<&str> = scanned.iter().map(|f| f.file.as_str()).collect();
            files.sort_unstable();
            files.dedup();
            for file in files {
                changed_lines.insert(file.to_string(), self.ports.changed_lines(since, file)?);
            }
        }
        Ok(Observed::Validated(Box::new(Validated {
            checked,
            commands,
            scanned,
            changed_lines,
        })))
    }

    fn review(&mut self, req: ReviewRequest) -> Result<Observed> {
        let (command, coverage) = match &req.coverage_command {
            Some(cmd) => {
                let spinner = self.sinks.printer().spinner(req.spinner.clone());
                let end = self.ports.shell(&ShellRun {
                    command: cmd,
                    cwd: &req.root,
                    log: &req.log,
                    fresh_log: true,
                    env: &[],
                    timeout: Some(req.timeout),
                })?;
                drop(spinner);
                (Some(end), self.ports.coverage(CoverageSource::Command))
            }
            None => (None, self.ports.coverage(CoverageSource::Report)),
        };
        let scanned: Vec<String> = req
            .test_files
            .iter()
            .filter(|f| req.root.join(f).is_file())
            .cloned()
            .collect();
        let findings = self.ports.scan(true, &scanned);
        Ok(Observed::Reviewed(Box::new(Reviewed {
            scanned,
            command,
            coverage,
            findings,
        })))
    }

    fn archive(&mut self, req: ArchiveRequest) -> Result<Observed> {
        self.ports.archive(&req.session_id)?;
        let commit = match &req.commit {
            Some(c) => {
                self.ports
                    .commit(&c.paths, c.session_dir.as_deref(), &c.message, &c.trailers)?
            }
            None => None,
        };
        let commit = match &req.squash {
            Some(sq) => match self.ports.squash(sq)? {
                crate::git::SquashOutcome::Squashed { commit, folded } => {
                    self.sinks.emit(
                        &Event::warning(format!(
                            "git.squash: {folded} commits of this session folded into {}",
                            &commit[..commit.len().min(12)]
                        )),
                        self.ports.now(),
                    );
                    Some(commit)
                }
                crate::git::SquashOutcome::Refused(why) => {
                    self.sinks.emit(
                        &Event::warning(format!(
                            "git.squash: the session's commits are left as they are: {why}"
                        )),
                        self.ports.now(),
                    );
                    commit
                }
                crate::git::SquashOutcome::Nothing => commit,
            },
            None => commit,
        };
        Ok(Observed::Archived { commit })
    }
}

/// The one path of every agent call, in every role and both machines:
/// the cost cap before it, the call, and the checks after it. Issue #15's
/// checks (HEAD moved, a read-only role that edited the tree, wfx's own
/// files changed) go here, against `before`.
pub fn call_agent(
    ports: &mut dyn Ports,
    cap: Option<f64>,
    fold: bool,
    spent: f64,
    inv: &Invocation,
    before: Option<&Snapshot>,
) -> Result<Invoked> {
    if let Some(reason) = policy::cost_cap(spent, cap) {
        return Ok(Invoked::CostCapped(reason));
    }
    let read_only_before = if super::tamper::is_read_only(inv.role) {
        Some(ports.snapshot()?)
    } else {
        None
    };
    let guard = super::head::before_call(ports, before, fold)?;
    let repo = ports.repo_guard()?;
    let runner = ports.runner_env();
    let mut call: CallRecord = ports.invoke_agent(inv)?;
    // HEAD first (a reset puts back branch, tree and session files), then
    // the repository's settings and index, wfx's own files and config,
    // then the tree of a read-only role.
    super::head::after_call(ports, &guard, before, fold, &mut call)?;
    let write_before = before.filter(|_| read_only_before.is_none());
    super::tamper::after_call(
        ports,
        &mut call,
        &repo,
        read_only_before.as_ref(),
        write_before,
    )?;
    ports.runner_env().unchanged_since(&runner, &call.agent)?;
    Ok(Invoked::Ran(Box::new(call)))
}

/// The record the checks after a batch of candidates annotate: what the
/// candidates did to the project itself, none of them in particular.
fn batch_record(at: crate::artifacts::Timestamp) -> CallRecord {
    CallRecord {
        exit_code: Some(0),
        ..CallRecord::new("candidates", Role::Fix, at)
    }
}

/// Which candidate of the batch, for its events.
fn candidate_event(batch: &CandidateBatch, c: &Candidate, of: u32) -> CandidateEvent {
    CandidateEvent {
        iteration: batch.iteration,
        step: batch.step,
        candidate: c.index,
        of,
        agent: c.agent.clone(),
        strategy: c.strategy,
    }
}

/// `candidate-finished`: what the candidate's call and runs measured.
fn finished_event(
    who: CandidateEvent,
    done: &CandidateDone,
    baseline: Option<&crate::artifacts::test_results::TestResults>,
) -> CandidateFinished {
    let mut e = CandidateFinished {
        who,
        duration_ms: 0,
        exit_code: None,
        timed_out: false,
        cost_usd: None,
        files_changed: Vec::new(),
        diff_lines: 0,
        tiers: Vec::new(),
        fixed: None,
        error: None,
        not_started: None,
    };
    match &done.end {
        CandidateEnd::NotStarted(why) => e.not_started = Some(why.clone()),
        CandidateEnd::Broken(why) => e.error = Some(why.clone()),
        CandidateEnd::Ran(r) => {
            e.duration_ms = r.duration_ms;
            e.files_changed = r.inspection.files_changed();
            e.diff_lines =
                (r.inspection.diffstat.insertions + r.inspection.diffstat.deletions) as u32;
            if let Some(c) = &r.call {
                e.exit_code = c.exit_code;
                e.timed_out = c.timed_out;
                e.cost_usd = c.cost_usd;
                e.error = c
                    .failed()
                    .then(|| c.error_message.clone().unwrap_or_else(|| "error".into()));
            }
            if let Some(s) = &r.shell {
                e.exit_code = s.exit_code;
                e.timed_out = s.timed_out;
            }
            e.tiers = r
                .runs
                .iter()
                .map(|t| CandidateTierEvent {
                    tier: t.tier,
                    total: t.ran.total,
                    passed: t.ran.passed,
                })
                .collect();
            e.fixed = match (&r.merged, baseline) {
                (Some(m), Some(b)) => Some(candidates::fixed_count(b, m) as u32),
                _ => None,
            };
        }
    }
    e
}

/// The parts of a child's end the machines use.
pub fn process_end(o: &crate::process::Outcome) -> ProcessEnd {
    ProcessEnd {
        exit_code: o.exit_code,
        timed_out: o.timed_out,
        duration_ms: o.duration.as_millis() as u64,
        describe: o.describe(),
        last_line: o
            .tail_text(2000)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string(),
    }
}
