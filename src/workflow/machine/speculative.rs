//! `on_failure.candidates: N` (docs/candidates.md): one debug attempt runs
//! N copies of the debug command at once, each in its own checkout made
//! from the attempt's snapshot ([`Effect::Candidates`], as for the cycle),
//! with `${candidate}` / `WFX_CANDIDATE` telling them apart; each re-runs
//! the step's test command in its checkout. The best is put into the work
//! tree ([`Effect::Apply`]) and the attempt goes on to its re-run; none
//! better than the run before: a failed attempt.

use std::path::PathBuf;
use std::time::Duration;

use super::RunMachine;
use super::{RunDoc, RunSession};
use crate::agents::vars::Mode;
use crate::agents::{CallFiles, Role, Vars};
use crate::artifacts::fix_history::{CandidateAttempt, CandidateVerdict, Diffstat};
use crate::artifacts::iteration_state::ChosenCandidate;
use crate::artifacts::run_state::{AttemptOutcome, TestRunRecord};
use crate::engine::candidates::{CandidateEnd, CandidateTests, Measured, choose};
use crate::engine::event::{CandidateChosen, CandidateVerdictEvent, Event};
use crate::engine::step::{
    AgentRequest, ApplyRequest, CandidateRequest, CandidateWorkRequest, CandidatesDone,
    CandidatesRequest, Effect, ShellRequest, Snapshot, Step as EngineStep, Text,
};
use crate::workflow::model::{Exec, OnFailure, Step};

/// What the debug command of a speculative attempt reads (besides
/// `${candidate}`): built by the single-attempt path too.
pub(super) struct DebugInput {
    pub vars: Vars,
    pub test_output: Option<(PathBuf, String)>,
    /// The log of the run before, project-relative: copied into each
    /// checkout so that `${test.output}` as a path resolves there.
    pub log: String,
}

impl RunMachine {
    /// The next effect of attempt `k` when it runs candidates: the chosen
    /// one applied, or the batch.
    pub(super) fn next_candidates(
        &self,
        s: &RunSession,
        step: &Step,
        f: &OnFailure,
        k: u32,
        before: Snapshot,
        input: DebugInput,
    ) -> EngineStep {
        let index = step.index;
        let attempt = &s.state.steps[index - 1].attempts[k as usize - 1];
        if let Some(chosen) = &attempt.chosen {
            return EngineStep::Do(Effect::Apply(ApplyRequest {
                before,
                tree: chosen.tree.clone(),
                versions_of: None,
            }));
        }
        if !self.repo {
            return EngineStep::Do(Effect::Block(format!(
                "{}: on_failure.candidates needs a git repository (each candidate runs in a checkout of its own)",
                step.label()
            )));
        }
        let t = match &step.action {
            crate::workflow::model::Action::Test(t) => t,
            _ => return EngineStep::Do(Effect::Update),
        };
        let detected = match self.detect(s, step, t) {
            Ok((d, _)) => d,
            Err(why) => return EngineStep::Do(Effect::Block(why)),
        };
        let dir = self.paths.attempt_dir(index, k);
        let label = step.label();
        let mut list = Vec::new();
        for n in 1..=f.candidates {
            let cdir = dir.join(format!("candidate-{n}"));
            let mut vars = input.vars.clone();
            vars.set(crate::workflow::check::CANDIDATE_VAR, n.to_string());
            let text = |mode| Text {
                text: f.debug.text().text.clone(),
                vars: vars.clone(),
                mode: Some(mode),
                test_output: input.test_output.clone(),
                label: label.clone(),
            };
            let (agent, work) = match &f.debug {
                Exec::Shell(_) => (
                    "shell".to_string(),
                    CandidateWorkRequest::Shell(Box::new(ShellRequest {
                        command: text(Mode::Shell),
                        cwd: self.ws.root.clone(),
                        log: cdir.join("debug-output.log"),
                        command_file: None,
                        env: self.env_for(s, step, Some(&vars)),
                        timeout: f.timeout.map(Duration::from_secs),
                        spinner: format!("test step {index} · attempt {k} · candidate {n}"),
                        inspect: None,
                        outputs: Vec::new(),
                    })),
                ),
                Exec::Claude(_) => {
                    let Some(agent) = self.claude(f.timeout) else {
                        return EngineStep::Do(Effect::Block(
                            "a claude command ran although no claude is configured".into(),
                        ));
                    };
                    let mut env = self.env_for(s, step, None);
                    env.push(("WFX_CANDIDATE".into(), n.to_string()));
                    (
                        agent.name.clone(),
                        CandidateWorkRequest::Agent(Box::new(AgentRequest {
                            role: Role::Fix,
                            prompt: text(Mode::Argv),
                            files: CallFiles {
                                prompt: cdir.join("debug-prompt.md"),
                                output: cdir.join("debug-cli-output.txt"),
                            },
                            cwd: self.ws.root.clone(),
                            env,
                            spinner: format!(
                                "test step {index} · attempt {k} · candidate {n} by {}",
                                agent.name
                            ),
                            doing: format!("debugging step {index}, attempt {k}"),
                            inspect: None,
                            versions_of: None,
                            outputs: Vec::new(),
                            agent,
                        })),
                    )
                }
            };
            list.push(CandidateRequest {
                index: n,
                agent,
                strategy: None,
                work,
                dir: cdir,
            });
        }
        let vars = self.vars_for(s, step);
        EngineStep::Do(Effect::Candidates(CandidatesRequest {
            iteration: k,
            step: Some(index),
            snapshot: before,
            candidates: list,
            max_parallel: self.config.fix.max_parallel.map_or_else(
                || std::thread::available_parallelism().map_or(1, |n| n.get()),
                |n| n as usize,
            ),
            tests: CandidateTests {
                detected,
                timeout: Duration::from_secs(t.timeout.unwrap_or(self.config.test.timeout_s)),
                env: self.env_for(s, step, Some(&vars)),
                baseline: None,
                tiers: None,
            },
            environment: Default::default(),
            versions_of: None,
            share: vec![input.log],
        }))
    }

    /// The batch ended: every candidate recorded with its verdict; the
    /// chosen one is applied next, or the attempt failed.
    pub(super) fn candidates_observed(
        &self,
        s: &mut RunSession,
        step: &Step,
        f: &OnFailure,
        done: CandidatesDone,
        out: &mut Vec<Event>,
    ) {
        let index = step.index;
        let k = s.state.steps[index - 1].attempt;
        let Some(before) = super::decide::last_run(&s.state.steps[index - 1]).cloned() else {
            return;
        };
        let agent = self.debugger(f);
        let mut rows = Vec::new();
        let mut measured = Vec::new();
        let mut trees = Vec::new();
        for c in &done.candidates {
            let (row, m, tree) = measure(&before, c.index, agent, &c.end);
            rows.push(row);
            measured.push(m);
            trees.push(tree);
        }
        let (verdicts, best) = choose(&measured);
        for (row, v) in rows.iter_mut().zip(&verdicts) {
            row.verdict = *v;
            if *v == CandidateVerdict::Outranked {
                row.reason.push_str("; another candidate is better");
            }
        }
        let cost: f64 = rows.iter().filter_map(|r| r.cost_usd).sum();
        s.state.cost_usd += cost;
        let chosen = best.and_then(|i| Some((rows[i].clone(), trees[i].clone()?)));
        let reason = match &chosen {
            Some((r, _)) => r.reason.clone(),
            None => format!(
                "none of the {} candidates does better than the run before",
                rows.len()
            ),
        };
        out.push(Event::CandidateChosen(Box::new(CandidateChosen {
            iteration: k,
            step: Some(index),
            of: rows.len() as u32,
            candidate: chosen.as_ref().map(|(r, _)| r.candidate),
            agent: chosen.as_ref().map(|(r, _)| r.agent.clone()),
            strategy: None,
            reason: reason.clone(),
            verdicts: rows
                .iter()
                .map(|r| CandidateVerdictEvent {
                    candidate: r.candidate,
                    agent: r.agent.clone(),
                    strategy: None,
                    verdict: r.verdict,
                })
                .collect(),
        })));
        let wall = rows.iter().map(|r| r.duration_ms).max().unwrap_or(0);
        let a = &mut s.rec(index).attempts[k as usize - 1];
        a.candidates = rows;
        match chosen {
            Some((row, tree)) => {
                a.chosen = Some(ChosenCandidate {
                    candidate: row.candidate,
                    tree,
                });
                if let Some(d) = &mut a.debug {
                    d.exit_code = row.exit_code;
                    d.duration_ms = wall;
                    d.cost_usd = (cost > 0.0).then_some(cost);
                }
            }
            None => {
                if let Some(d) = &mut a.debug {
                    d.duration_ms = wall;
                    d.cost_usd = (cost > 0.0).then_some(cost);
                    d.finished = true;
                }
                a.outcome = Some(AttemptOutcome::Failed);
                a.reason = Some(format!(
                    "{reason}: counted as failed without re-running the tests"
                ));
                out.push(self.attempt_event(index, k, f, &before, wall, Some(reason)));
                s.touch(RunDoc::Attempt(index, k));
                self.apply(s, index, super::decide::after_test_run(Some(f), k, false));
            }
        }
        s.touch(RunDoc::State);
    }
}

/// One candidate as recorded, what the choice reads of it (against the
/// step's run before the attempt), and its tree. Without per-test results
/// the exit code decides: a passing run fixes every failing test.
fn measure(
    before: &TestRunRecord,
    index: u32,
    agent: &str,
    end: &CandidateEnd,
) -> (CandidateAttempt, Measured, Option<String>) {
    let mut row = CandidateAttempt {
        candidate: index,
        agent: agent.to_string(),
        strategy: None,
        verdict: CandidateVerdict::Untested,
        reason: String::new(),
        duration_ms: 0,
        exit_code: None,
        timed_out: false,
        cost_usd: None,
        turns: None,
        files_changed: Vec::new(),
        diffstat: Diffstat::default(),
        diff: Default::default(),
        test_edits: Vec::new(),
        tiers: Vec::new(),
        pass_rate_after: None,
        fixed: 0,
        broken: Vec::new(),
        tamper: None,
    };
    let mut me = Measured::default();
    let r = match end {
        CandidateEnd::NotStarted(why) => {
            me.not_started = true;
            row.reason = format!("not started: {why}");
            return (row, me, None);
        }
        CandidateEnd::Broken(why) => {
            me.changed = true;
            row.reason = format!("could not run: {why}");
            return (row, me, None);
        }
        CandidateEnd::Ran(r) => r,
    };
    row.duration_ms = r.duration_ms;
    row.files_changed = r.inspection.files_changed();
    row.diffstat = Diffstat {
        files: r.inspection.diffstat.files as u32,
        insertions: r.inspection.diffstat.insertions as u32,
        deletions: r.inspection.diffstat.deletions as u32,
    };
    row.diff = r.inspection.diff.clone();
    if let Some(c) = &r.call {
        row.exit_code = c.exit_code;
        row.timed_out = c.timed_out;
        row.cost_usd = c.cost_usd;
        row.turns = c.turns;
        row.tamper = c.tamper;
        me.timed_out = c.timed_out;
        me.error = c.failed();
    }
    if let Some(e) = &r.shell {
        row.exit_code = e.exit_code;
        row.timed_out = e.timed_out;
        me.timed_out = e.timed_out;
        me.error = !e.success();
    }
    if !r.links_undone.is_empty() {
        row.tamper = Some(crate::artifacts::fix_history::Tamper::LinkPlanted);
    }
    me.changed = !r.inspection.changes.is_empty();
    me.tested = r.merged.is_some();
    me.diff_lines = (r.inspection.diffstat.insertions + r.inspection.diffstat.deletions) as usize;
    if let Some(after) = &r.merged {
        let passed = after.exit_code == Some(0);
        let failing = if passed && after.total == 0 {
            0
        } else {
            (after.failed + after.errors) as usize
        };
        row.pass_rate_after = Some(after.pass_rate);
        me.fixed = if passed {
            before.failing.max(1) as usize
        } else {
            (before.failing as usize).saturating_sub(failing)
        };
        // Counts, not ids: more failing than before is a regression.
        me.broken = failing.saturating_sub(before.failing as usize);
        row.fixed = me.fixed as u32;
    }
    row.reason = if me.timed_out {
        "timed out".to_string()
    } else if me.error {
        format!("the debug command failed (exit {:?})", row.exit_code)
    } else if !me.changed {
        "changed nothing".to_string()
    } else if !me.tested {
        "its tests did not run".to_string()
    } else if me.broken > 0 {
        format!("{} more failing test(s) than before", me.broken)
    } else if me.fixed == 0 {
        format!("its tests fail as before ({} failing)", before.failing)
    } else {
        format!(
            "its tests {}, {} line(s) changed",
            if r.merged.as_ref().is_some_and(|m| m.exit_code == Some(0)) {
                "pass".to_string()
            } else {
                format!("fail {} fewer", me.fixed)
            },
            me.diff_lines
        )
    };
    (row, me, r.tree.clone())
}
