//! `wfx run` with `on_failure.candidates: N`: N copies of the debug command
//! at once, each in its own checkout; the one whose re-run of the step's
//! test command is best is applied to the work tree.

use crate::common;

use common::{Env, wfx_out as wfx};
use serde_json::Value;

/// Fails (exit 3) until `fixed` exists; `broken` makes it fail worse.
const CHECK: &str = "#!/bin/sh\nif [ -f broken ]; then echo 'FAIL: broke'; exit 4; fi\nif [ -f fixed ]; then echo ok; exit 0; fi\necho 'FAIL: bug'; exit 3\n";

/// The debug command: what candidate `$1` does. It refuses to run when
/// `${candidate}` and `WFX_CANDIDATE` disagree.
const DEBUG: &str = "#!/bin/sh\n[ \"$1\" = \"$WFX_CANDIDATE\" ] || exit 9\ncase \"$1\" in\n  $FIXER) touch fixed; echo 'a long and careful fix' > notes.txt ;;\n  $SHORT) touch fixed ;;\n  *) touch broken ;;\nesac\n";

fn project(fixer: &str, short: &str, candidates: &str) -> Env {
    let env = Env::new();
    env.write("check.sh", CHECK);
    env.write("debug.sh", DEBUG);
    env.write(
        "wf.yml",
        &format!(
            "name: cand\nenv:\n  FIXER: \"{fixer}\"\n  SHORT: \"{short}\"\ncommands:\n  - test:\n      command: sh check.sh\n      on_failure:\n        shell: sh debug.sh ${{candidate}}\n        max_attempts: 1\n        candidates: {candidates}\n"
        ),
    );
    env.git_init_commit();
    env
}

fn attempt(env: &Env) -> Value {
    env.run_state("WFS-run-cand")["steps"][0]["attempts"][0].clone()
}

fn verdicts(a: &Value) -> Vec<String> {
    a["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_passing_candidate_with_the_smallest_diff_is_applied() {
    // 1 and 4 break, 2 fixes with a bigger diff, 3 fixes with the smallest.
    let env = project("2", "3", "4");
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(env.root.join("fixed").exists());
    assert!(
        !env.root.join("broken").exists(),
        "a losing candidate leaked"
    );
    assert!(
        !env.root.join("notes.txt").exists(),
        "the outranked fix leaked"
    );
    let a = attempt(&env);
    assert_eq!(
        verdicts(&a),
        ["no_change", "outranked", "chosen", "no_change"]
    );
    assert_eq!(a["chosen"]["candidate"], 3);
    assert_eq!(a["outcome"], "passed");
    assert!(out.stderr.contains("chose candidate 3/4"), "{}", out.stderr);
    let trees = env.git(&["worktree", "list"]);
    assert_eq!(trees.lines().count(), 1, "{trees}");
}

#[test]
fn no_candidate_better_is_a_failed_attempt_and_nothing_is_applied() {
    let env = project("7", "8", "2");
    let out = wfx(&env, &["run", "wf.yml"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(!env.root.join("broken").exists());
    let a = attempt(&env);
    assert_eq!(verdicts(&a), ["no_change", "no_change"]);
    assert_eq!(a["outcome"], "failed");
    assert!(a.get("chosen").is_none());
    assert!(a.get("test").is_none_or(Value::is_null), "no re-run: {a}");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("none of the 2 candidates"),
        "{a}"
    );
    assert_eq!(
        env.run_state("WFS-run-cand")["steps"][0]["status"],
        "failed"
    );
}

#[test]
fn candidates_must_be_a_whole_number_from_1() {
    for (value, what) in [("0", "between 1 and 16, got 0"), ("two", "a whole number")] {
        let env = project("1", "1", value);
        let out = wfx(&env, &["run", "wf.yml"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr
                .contains("/commands/0/test/on_failure/candidates")
                && out
                    .stderr
                    .contains(&format!("on_failure.candidates must be {what}")),
            "{}",
            out.stderr
        );
        assert!(!env.root.join(".workflow/active").exists());
    }
}
