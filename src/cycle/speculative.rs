//! Speculative attempts in the fix loop (DESIGN.md §11.4): with
//! `fix.candidates` > 1 a fix step asks for a batch of candidates
//! ([`Effect::Candidates`]), each a fix agent with a strategy of its own,
//! run at once in checkouts outside the project. What they measured is
//! judged by the pure [`candidates::choose`]; the chosen one's changes are
//! put into the work tree ([`Effect::Apply`]) and the step goes on as one
//! attempt (retest, sealed full run, one commit with `Wfx-Candidate:`).
//! When no candidate is better than the run before, the step is a failed
//! attempt: nothing was changed in the project, the next strategy follows.

use std::time::Duration;

use super::fix_task_id;
use super::guard;
use super::machine::CycleMachine;
use super::state::{CycleState, Doc};
use crate::agents::{CallFiles, CallRecord, ResolvedAgent, Role};
use crate::artifacts::Extra;
use crate::artifacts::fix_history::{
    CandidateAttempt, CandidateTier, CandidateVerdict, Diffstat, FixAttempt, FixOutcome,
};
use crate::artifacts::iteration_state::{
    Action, ChosenCandidate, CommitPurpose, FixInFlight, PendingCommit, Strategy,
};
use crate::artifacts::task::TaskStatus;
use crate::artifacts::test_results::TestResults;
use crate::engine::candidates::{
    self, CandidateEnd, CandidateTests, Measured, TierPlan, broken_tests, common_record,
    fixed_count,
};
use crate::engine::event::{CandidateChosen, CandidateVerdictEvent};
use crate::engine::step::{
    AgentRequest, ApplyRequest, CandidateRequest, CandidateWorkRequest, CandidatesDone,
    CandidatesRequest, Effect, Snapshot, Step,
};
use crate::engine::{Event, policy};
use crate::testing::retest;

/// The strategies candidates take in turn, from the step's own.
const STRATEGIES: [Strategy; 3] = [
    Strategy::Conservative,
    Strategy::Aggressive,
    Strategy::Surgical,
];

/// Who candidate `i` (0-based) of `n` is: the fix agents in turn, the
/// strategies in turn starting from `first` (the strategy the loop chose).
pub fn assignment(
    agents: &[ResolvedAgent],
    first: Strategy,
    n: u32,
) -> Vec<(ResolvedAgent, Strategy)> {
    let start = STRATEGIES.iter().position(|s| *s == first).unwrap_or(0);
    (0..n as usize)
        .filter_map(|i| {
            let agent = agents.get(i % agents.len().max(1))?.clone();
            Some((agent, STRATEGIES[(start + i) % STRATEGIES.len()]))
        })
        .collect()
}

/// The agents of the step's candidates, in order.
fn assigned(m: &CycleMachine, s: &CycleState) -> Vec<(ResolvedAgent, Strategy)> {
    let agents: Vec<ResolvedAgent> = if m.fix_agents.is_empty() {
        m.fix_agent.iter().cloned().collect()
    } else {
        m.fix_agents.clone()
    };
    let first = s.iter.selected_strategy.unwrap_or(Strategy::Conservative);
    assignment(&agents, first, m.config.fix.candidates)
}

/// The step of a speculative fix, when this fix is one: the batch of
/// candidates, or the chosen one applied. `None`: one attempt in the work
/// tree, as without `fix.candidates` (one candidate, no repository).
pub fn next(
    m: &CycleMachine,
    s: &CycleState,
    fix: &FixInFlight,
    before: &Snapshot,
) -> Option<Step> {
    if m.config.fix.candidates <= 1 || !m.repo || fix.snapshot.is_none() {
        return None;
    }
    if let Some(chosen) = &fix.chosen {
        return Some(Step::Do(Effect::Apply(ApplyRequest {
            before: before.clone(),
            tree: chosen.tree.clone(),
            versions_of: Some(guard::is_inspected),
        })));
    }
    Some(match request(m, s, before) {
        Ok(req) => Step::Do(Effect::Candidates(req)),
        Err(step) => *step,
    })
}

fn request(
    m: &CycleMachine,
    s: &CycleState,
    before: &Snapshot,
) -> Result<CandidatesRequest, Box<Step>> {
    let k = s.iter.current_iteration;
    let paths = m.paths(s);
    let task_id = fix_task_id(k);
    let spec = m.task_path(s, &task_id);
    // A candidate works outside the project: wfx's files it reads are
    // copied into its checkout at their project-relative place.
    let task_rel = m.rel(&spec);
    let analysis_rel = m.rel(&paths.iteration_file(k, "analysis.md"));
    let mut list = Vec::new();
    for (i, (agent, strategy)) in assigned(m, s).into_iter().enumerate() {
        let index = i as u32 + 1;
        let prompt = m.fix_prompt(s, strategy, &task_rel)?;
        let dir = paths.iteration_file(k, &format!("candidate-{index}"));
        list.push(CandidateRequest {
            index,
            agent: agent.name.clone(),
            strategy: Some(strategy),
            work: CandidateWorkRequest::Agent(Box::new(AgentRequest {
                role: Role::Fix,
                prompt,
                files: CallFiles {
                    prompt: dir.join("fix-prompt.md"),
                    output: dir.join("fix-cli-output.txt"),
                },
                cwd: m.root.clone(),
                env: Vec::new(),
                spinner: format!("Iteration {k} · candidate {index} by {}", agent.name),
                doing: format!("fixing iteration {k}"),
                inspect: None,
                versions_of: Some(guard::is_inspected),
                outputs: Vec::new(),
                agent,
            })),
            dir,
        });
    }
    let detected = m.detected.clone().ok_or_else(|| {
        Box::new(Step::Do(Effect::Block(
            "the session has no test command".into(),
        )))
    })?;
    let affected = s
        .task(&task_id)
        .and_then(|t| t.context.fix_strategy.as_ref())
        .map(|fs| fs.test_execution.affected_tests.clone())
        .unwrap_or_default();
    let tiers = TierPlan {
        progressive: m.config.cycle.progressive,
        can_filter: retest::can_filter(detected.framework),
        import_map: m.import_map.clone(),
        strategy: affected,
        costs: retest::SessionCosts::of(&s.iter.iterations, m.config.cycle.skip_slow_tiers),
    };
    Ok(CandidatesRequest {
        iteration: k,
        step: None,
        snapshot: before.clone(),
        candidates: list,
        max_parallel: m.config.fix.max_parallel.unwrap_or(1) as usize,
        tests: CandidateTests {
            detected,
            timeout: Duration::from_secs(m.config.test.timeout_s),
            env: Vec::new(),
            baseline: m.baseline_results(s),
            tiers: Some(tiers),
        },
        environment: s.iter.sealed_environment.clone().unwrap_or_default(),
        versions_of: Some(guard::is_inspected),
        share: vec![task_rel, analysis_rel],
    })
}

/// The chosen candidate's agent call, as recorded when the batch ended.
pub fn chosen_call(s: &CycleState) -> Option<CallRecord> {
    let fix = s.iter.action.fix()?;
    let n = fix.chosen.as_ref()?.candidate;
    s.history
        .agent_calls
        .iter()
        .find(|c| {
            c.role == Role::Fix && c.iteration == Some(fix.iteration) && c.candidate == Some(n)
        })
        .map(CallRecord::from_artifact)
}

/// The batch ended: every candidate's measures and calls recorded, the
/// choice made and told; the chosen one is applied next, or the step is a
/// failed attempt.
pub fn observed(m: &CycleMachine, s: &mut CycleState, done: CandidatesDone, out: &mut Vec<Event>) {
    let k = s.iter.current_iteration;
    let Some(mut fix) = s.iter.action.fix().cloned() else {
        return;
    };
    let task_id = fix_task_id(k);
    let baseline = m
        .baseline_results(s)
        .unwrap_or_else(super::machine::no_results);
    let baseline = baseline.as_ref();
    let who = assigned(m, s);
    let mut rows: Vec<CandidateAttempt> = Vec::new();
    let mut measured: Vec<Measured> = Vec::new();
    let mut trees: Vec<Option<String>> = Vec::new();
    for d in &done.candidates {
        let (agent, strategy) = who
            .get(d.index as usize - 1)
            .map(|(a, st)| (a.name.clone(), Some(*st)))
            .unwrap_or_default();
        let (row, me, tree) = measure(m, s, baseline, d.index, agent, strategy, &d.end);
        if let CandidateEnd::Ran(r) = &d.end
            && let Some(c) = &r.call
        {
            m.record_fix_call(s, c, Some(d.index));
        }
        rows.push(row);
        measured.push(me);
        trees.push(tree);
    }
    let (verdicts, best) = candidates::choose(&measured);
    for (row, v) in rows.iter_mut().zip(&verdicts) {
        row.verdict = *v;
        if *v == CandidateVerdict::Outranked {
            row.reason.push_str("; another candidate is better");
        }
    }
    let chosen = best.and_then(|i| Some((rows[i].clone(), trees[i].clone()?)));
    let failing = baseline.failed + baseline.errors;
    out.push(Event::CandidateChosen(Box::new(CandidateChosen {
        iteration: k,
        step: None,
        of: rows.len() as u32,
        candidate: chosen.as_ref().map(|(r, _)| r.candidate),
        agent: chosen.as_ref().map(|(r, _)| r.agent.clone()),
        strategy: chosen.as_ref().and_then(|(r, _)| r.strategy),
        reason: match &chosen {
            Some((r, _)) => r.reason.clone(),
            None => {
                format!("none fixes one of the {failing} failing test(s) without breaking another")
            }
        },
        verdicts: rows
            .iter()
            .map(|r| CandidateVerdictEvent {
                candidate: r.candidate,
                agent: r.agent.clone(),
                strategy: r.strategy,
                verdict: r.verdict,
            })
            .collect(),
    })));
    let wall = rows.iter().map(|r| r.duration_ms).max().unwrap_or(0);
    let cost: Option<f64> = rows
        .iter()
        .filter_map(|r| r.cost_usd)
        .fold(None, |acc, c| Some(acc.unwrap_or(0.0) + c));
    let agents: Vec<String> = who.iter().map(|(a, _)| a.name.clone()).collect();
    let mut agents_unique = agents.clone();
    agents_unique.dedup();
    let attempt = FixAttempt {
        iteration: k,
        fix_task: task_id.clone(),
        agent: chosen
            .as_ref()
            .map_or_else(|| agents_unique.join(", "), |(r, _)| r.agent.clone()),
        strategy: chosen
            .as_ref()
            .map_or(s.iter.selected_strategy, |(r, _)| r.strategy),
        started_at: fix.started_at,
        duration_ms: wall,
        exit_code: None,
        timed_out: false,
        cost_usd: cost,
        turns: None,
        files_changed: Vec::new(),
        diffstat: Diffstat::default(),
        diff: Default::default(),
        test_edits: Vec::new(),
        pass_rate_before: s.baseline().map(|r| r.pass_rate),
        pass_rate_after: None,
        outcome: if chosen.is_some() {
            FixOutcome::Pending
        } else {
            FixOutcome::NoChange
        },
        commit: None,
        rollback_commit: None,
        agent_commits: Vec::new(),
        tamper: done.tamper,
        not_committed: Vec::new(),
        left_uncommitted: Vec::new(),
        outside_commit: Vec::new(),
        candidates: rows,
        candidate: chosen.as_ref().map(|(r, _)| r.candidate),
        extra: Extra::new(),
    };
    s.history.entries.retain(|e| e.iteration != k);
    s.history.entries.push(attempt);
    s.history.entries.sort_by_key(|e| e.iteration);
    s.touch(Doc::History);
    if let Some(note) = done.tamper_note {
        out.push(Event::warning(format!("Iteration {k}: {note}")));
    }
    match chosen {
        Some((row, tree)) => {
            fix.chosen = Some(ChosenCandidate {
                candidate: row.candidate,
                tree,
            });
            s.iter.action = Action::ExecuteFixTask { fix: Some(fix) };
        }
        None => {
            // A failed attempt: the project was not changed (the
            // candidates worked outside it); the snapshot is put back all
            // the same, so whatever touched it is undone as for a
            // rejected fix.
            let reason = "no candidate is better than the run before".to_string();
            if s.task(&task_id).is_some() {
                s.set_task_status(&task_id, TaskStatus::Failed, &reason);
                s.touch(Doc::TaskSummary(task_id));
            }
            s.iter.action = Action::Rollback {
                rollback: PendingCommit {
                    kind: CommitPurpose::Rollback,
                    iteration: k,
                    message: reason,
                    paths: Vec::new(),
                    run: None,
                    restore: fix.snapshot.clone(),
                },
            };
        }
    }
    s.touch(Doc::State);
}

/// One candidate as recorded, what the choice reads of it, and its tree.
#[allow(clippy::too_many_arguments)]
fn measure(
    m: &CycleMachine,
    s: &CycleState,
    baseline: &TestResults,
    index: u32,
    agent: String,
    strategy: Option<Strategy>,
    end: &CandidateEnd,
) -> (CandidateAttempt, Measured, Option<String>) {
    let (mut row, mut me, r) = match common_record(index, agent, strategy, end) {
        Ok(ran) => ran,
        Err(never_ran) => {
            let (row, me) = *never_ran;
            return (row, me, None);
        }
    };
    if let Some(c) = &r.call {
        me.unavailable = policy::pause_for(c, Role::Fix, "fixing").is_some();
    }
    let (edits, rejected) = m.test_edits(s, &r.inspection);
    row.test_edits = edits;
    me.rejected = rejected.is_some();
    row.tiers = r
        .runs
        .iter()
        .map(|t| CandidateTier {
            tier: t.tier,
            total: t.ran.total,
            passed: t.ran.passed,
            pass_rate: if t.ran.total == 0 {
                0.0
            } else {
                f64::from(t.ran.passed) * 100.0 / f64::from(t.ran.total)
            },
            escalated: t.escalated.clone(),
            log: Some(t.log.clone()),
        })
        .collect();
    if let Some(merged) = &r.merged {
        row.pass_rate_after = Some(merged.pass_rate);
        me.fixed = fixed_count(baseline, merged);
        row.fixed = me.fixed as u32;
        row.broken = broken_tests(baseline, merged);
        me.broken = row.broken.len();
    }
    row.reason = if me.timed_out {
        "timed out".to_string()
    } else if me.error {
        r.call
            .as_ref()
            .and_then(|c| c.error_message.clone())
            .unwrap_or_else(|| format!("the call failed (exit {:?})", row.exit_code))
    } else if let Some(why) = rejected {
        why
    } else if !me.changed {
        "changed nothing".to_string()
    } else if !me.tested {
        "its tests did not run".to_string()
    } else if me.broken > 0 {
        format!("breaks {}", row.broken.join(", "))
    } else if me.fixed == 0 {
        format!(
            "fixes none of the {} failing test(s)",
            baseline.failed + baseline.errors
        )
    } else {
        format!(
            "fixes {} of {} failing test(s), breaks none, {} line(s) changed",
            me.fixed,
            baseline.failed + baseline.errors,
            me.diff_lines
        )
    };
    (row, me, r.tree.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_take_the_agents_and_strategies_in_turn() {
        let cfg: crate::artifacts::config::AgentsConfig =
            serde_json::from_value(serde_json::json!({
                "definitions": {"a": {"command": ["a"]}, "b": {"command": ["b"]}}
            }))
            .unwrap();
        let a = crate::agents::config::resolve(&cfg, "a").unwrap();
        let b = crate::agents::config::resolve(&cfg, "b").unwrap();
        let got: Vec<(String, Strategy)> = assignment(&[a.clone(), b], Strategy::Aggressive, 4)
            .into_iter()
            .map(|(ag, st)| (ag.name, st))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a".to_string(), Strategy::Aggressive),
                ("b".to_string(), Strategy::Surgical),
                ("a".to_string(), Strategy::Conservative),
                ("b".to_string(), Strategy::Aggressive),
            ]
        );
        assert_eq!(assignment(&[a], Strategy::Conservative, 1).len(), 1);
        assert!(assignment(&[], Strategy::Conservative, 3).is_empty());
    }
}
