//! The transitions of `next_action` the test-fix machine makes, as a
//! table: docs/architecture.md's state diagram is generated from it (a
//! test fails when they differ), and the machine's scenario tests check
//! that every transition the machine makes is in it.

use crate::artifacts::iteration_state::NextAction;

use NextAction::*;

/// `(from, to, when)`. Staying on the same action (a paused step, the
/// next initial task, the fix's snapshot) is listed where it happens.
pub const TRANSITIONS: &[(NextAction, NextAction, &str)] = &[
    (
        ExecuteTask,
        ExecuteTask,
        "next initial task, or a soft-fail fix of IMPL-001.3",
    ),
    (
        ExecuteTask,
        RunTests,
        "initial tasks done (generated tests committed)",
    ),
    (
        ExecuteTask,
        None,
        "blocked: the code-validation gate failed",
    ),
    (RunTests, AnalyzeFailures, "tests fail"),
    (RunTests, Complete, "full or partial success"),
    (RunTests, None, "blocked: a limit"),
    (
        AnalyzeFailures,
        ExecuteFixTask,
        "analysis and fix task written",
    ),
    (AnalyzeFailures, None, "blocked: the cost cap"),
    (
        AnalyzeFailures,
        RunTests,
        "paused: the first run failed because of the environment",
    ),
    (
        AnalyzeFailures,
        FinalValidation,
        "paused: a later run failed because of the environment",
    ),
    (ExecuteFixTask, ExecuteFixTask, "snapshot taken"),
    (ExecuteFixTask, Retest, "fix made and inspected"),
    (
        ExecuteFixTask,
        Rollback,
        "rejected from its diff, or a timed-out call: undone, never committed",
    ),
    (ExecuteFixTask, None, "blocked: the cost cap"),
    (Retest, FinalValidation, "every re-run test passes"),
    (Retest, Complete, "success on the full suite"),
    (Retest, AnalyzeFailures, "tests still fail"),
    (
        Retest,
        Rollback,
        "regression, tests gone, or a failed call or unjudged fix that helped nothing",
    ),
    (Retest, None, "blocked: a limit, no progress, the cost cap"),
    (FinalValidation, Complete, "success on the full suite"),
    (FinalValidation, AnalyzeFailures, "tests still fail"),
    (
        FinalValidation,
        Rollback,
        "regression, tests gone, or a failed call that helped nothing",
    ),
    (
        FinalValidation,
        None,
        "blocked: a limit, no progress, the cost cap",
    ),
    (
        Rollback,
        AnalyzeFailures,
        "reverted (next strategy surgical) or undone",
    ),
    (
        Rollback,
        None,
        "blocked: a limit, or git refused the revert",
    ),
    (Complete, None, "completed: archived with the final commit"),
];

/// Whether the table has `from → to`.
pub fn allowed(from: NextAction, to: NextAction) -> bool {
    TRANSITIONS.iter().any(|(f, t, _)| *f == from && *t == to)
}

/// The Mermaid state diagram of [`TRANSITIONS`] (what docs/architecture.md shows).
pub fn mermaid() -> String {
    let mut out =
        String::from("stateDiagram-v2\n    [*] --> execute_task\n    [*] --> run_tests\n");
    for (from, to, when) in TRANSITIONS {
        out.push_str(&format!("    {from} --> {to}: {when}\n"));
    }
    out.push_str("    none --> [*]\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/architecture.md carries the diagram generated from the table.
    /// Regenerate the block with `WFX_UPDATE_DOCS=1 cargo test transitions`.
    #[test]
    fn the_architecture_diagram_is_the_transition_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (start, end) = ("```mermaid\n", "```\n");
        let from = text.find(start).expect("a mermaid block") + start.len();
        let to = from + text[from..].find(end).expect("the block ends");
        let want = mermaid();
        if std::env::var_os("WFX_UPDATE_DOCS").is_some() {
            let updated = format!("{}{want}{}", &text[..from], &text[to..]);
            std::fs::write(&path, updated).unwrap();
            return;
        }
        assert_eq!(
            &text[from..to],
            want,
            "docs/architecture.md's diagram differs from cycle::transitions::TRANSITIONS; regenerate with WFX_UPDATE_DOCS=1 cargo test transitions"
        );
    }

    #[test]
    fn every_action_is_reachable_and_can_end() {
        for a in NextAction::ALL {
            if a != ExecuteTask && a != RunTests {
                assert!(
                    TRANSITIONS.iter().any(|(_, t, _)| *t == a),
                    "{a} is never entered"
                );
            }
            if a != None {
                assert!(
                    TRANSITIONS.iter().any(|(f, _, _)| *f == a),
                    "{a} is never left"
                );
            }
        }
    }
}
