//! Issue #15, the git side (DESIGN.md §10.2): hostile fixture agents on a
//! fresh copy of `fixtures/projects/py-calc`, run from the command line as a
//! user would, each test asserting the outcome the rule gives.

use crate::common;

use common::{Env, fixer_config};
use serde_json::Value;

const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";
const ACTIVE: &str = ".workflow/active/WFS-test-the-calculator";

fn py_calc(env: &Env, fixer: &str) {
    env.cycle_project("py-calc", &fixer_config(fixer));
    env.plan_calculator();
}

/// [`py_calc`] where every fix is judged on the full suite, so a fix that
/// breaks passing tests is committed, found to regress and rolled back.
fn py_calc_full_retests(env: &Env, fixer: &str) {
    let mut c = fixer_config(fixer);
    c["cycle"] = serde_json::json!({"progressive": false});
    env.cycle_project("py-calc", &c);
    env.plan_calculator();
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/projects/py-calc")
            .join(rel),
    )
    .unwrap()
}

fn history(env: &Env, dir: &str) -> Value {
    env.json(&format!("{dir}/.process/fix-history.json"))
}

fn entry(history: &Value, iteration: u64) -> Value {
    history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["iteration"] == iteration)
        .cloned()
        .unwrap_or_else(|| panic!("no attempt {iteration} in {history}"))
}

/// Case 1: the agent commits its own (breaking) change. Its commit is
/// folded into wfx's checkpoint, so the rollback reverts the breakage.
#[test]
fn agent_commits_are_folded_and_rolled_back_with_the_attempt() {
    let env = Env::new();
    py_calc_full_retests(&env, "commit-break");
    let base = env.git(&["rev-parse", "HEAD"]);
    env.cycle(&[]).success();
    let h = history(&env, ARCHIVED);
    let first = entry(&h, 1);
    assert_eq!(first["outcome"], "rolled_back", "{first}");
    let rollback = first["rollback_commit"]
        .as_str()
        .expect("a rollback commit");
    let fix = first["commit"].as_str().expect("a fix commit");
    let agent_commits = first["agent_commits"].as_array().expect("agent_commits");
    assert_eq!(agent_commits.len(), 1, "{first}");
    // The agent's commit is not on the branch; wfx's checkpoint holds its
    // changes and the rollback restores the pre-fix bytes.
    let on_branch = env.git(&["rev-list", "HEAD"]);
    assert!(!on_branch.contains(agent_commits[0].as_str().unwrap()));
    assert!(
        env.subjects().iter().all(|s| s != "x"),
        "{:?}",
        env.subjects()
    );
    assert_eq!(env.git(&["rev-parse", &format!("{fix}~1")]), base);
    for file in ["calc/ops.py", "calc/auth.py"] {
        assert_eq!(
            env.git_bytes(&["show", &format!("{rollback}:{file}")]),
            fixture(file),
            "{file} after the rollback"
        );
        assert_ne!(
            env.git_bytes(&["show", &format!("{fix}:{file}")]),
            fixture(file),
            "{file} in the folded checkpoint"
        );
    }
    // Iteration 2's own commit is folded too; the session completes.
    assert_eq!(entry(&h, 2)["agent_commits"].as_array().unwrap().len(), 1);
    assert!(env.read("calc/ops.py").contains("None if b == 0"));
    assert_eq!(env.git(&["status", "--porcelain"]), "");
}

/// Case 2: `git reset --hard HEAD~1` in the agent's second call. The branch,
/// the work tree and the session's files come back; the attempt is a
/// failure with `tamper: head_moved`, and the run goes on to complete.
#[test]
fn a_reset_by_the_agent_is_undone_and_the_attempt_fails() {
    let env = Env::new();
    py_calc(&env, "reset-head");
    env.cycle(&[]).success();
    let h = history(&env, ARCHIVED);
    let first = entry(&h, 1);
    let second = entry(&h, 2);
    assert_eq!(second["tamper"], "head_moved", "{second}");
    assert!(first.get("tamper").is_none(), "{first}");
    // Iteration 1's checkpoint is still on the branch.
    let fix1 = first["commit"].as_str().expect("iteration 1 committed");
    let on_branch = env.git(&["rev-list", "HEAD"]);
    assert!(on_branch.contains(fix1), "{on_branch}");
    // The agent's edit after its reset was undone.
    assert!(!env.read("calc/ops.py").contains("reset by the agent"));
    assert!(env.read("calc/auth.py").contains("len(body) == 8"));
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let calls = h["agent_calls"].as_array().unwrap();
    assert!(
        calls
            .iter()
            .any(|c| c["iteration"] == 2 && c["tamper"] == "head_moved"),
        "{calls:?}"
    );
    let _ = ACTIVE;
}

/// Case 6: a new session that reuses an old session's id (its archive
/// removed) never takes the old session's commits for its own: each
/// session's commits carry their own `Wfx-Run`.
#[test]
fn a_reused_session_id_makes_its_own_commits() {
    let env = Env::new();
    py_calc(&env, "fix-all");
    let base = env.git(&["rev-parse", "HEAD"]);
    env.cycle(&[]).success();
    let first_run = env.json(&format!("{ARCHIVED}/workflow-session.json"))["git"]["run_id"]
        .as_str()
        .expect("run_id recorded")
        .to_string();
    // The archive is gone (or never cloned); the bug comes back.
    std::fs::remove_dir_all(env.root.join(".workflow/archives")).unwrap();
    env.git(&["checkout", base.trim(), "--", "calc"]);
    env.git(&["commit", "-qm", "bring the bug back"]);
    env.plan_calculator();
    env.cycle(&[]).success();
    let second_run = env.json(&format!("{ARCHIVED}/workflow-session.json"))["git"]["run_id"]
        .as_str()
        .expect("run_id recorded")
        .to_string();
    assert_ne!(first_run, second_run);
    // Two fix commits for iteration 1, one per run, each with its trailer.
    let log = env.git(&["log", "--format=%(trailers:key=Wfx-Run,valueonly)%x00%s"]);
    let fixes: Vec<&str> = log
        .split('\n')
        .filter(|l| l.contains("test-cycle: iteration 1"))
        .collect();
    assert_eq!(fixes.len(), 2, "{log}");
    assert!(
        log.contains(&first_run) && log.contains(&second_run),
        "{log}"
    );
    // The second fix is committed, not left in the tree.
    assert!(env.read("calc/ops.py").contains("None if b == 0"));
    assert_eq!(env.git(&["status", "--porcelain", "--", "calc"]), "");
    let h = history(&env, ARCHIVED);
    let fix = entry(&h, 1)["commit"].as_str().unwrap().to_string();
    let msg = env.git(&["log", "-1", "--format=%B", &fix]);
    assert!(msg.contains(&format!("Wfx-Run: {second_run}")), "{msg}");
}

/// Case 7: `--allow-dirty` with work in progress in a file the fix also
/// edits, and a fix that regresses. The WIP line is never committed; the
/// rollback gives it back with the pre-fix bytes; the next fix is
/// committed without it.
#[test]
fn allow_dirty_never_commits_work_in_progress_and_rollback_keeps_it() {
    let env = Env::new();
    py_calc_full_retests(&env, "break-more");
    let wip = [fixture("calc/ops.py"), b"# WIP\n".to_vec()].concat();
    env.write_bytes("calc/ops.py", &wip);
    env.cycle(&["--allow-dirty"]).success();
    // On disk: the final fix plus the WIP line; staged and committed: never.
    let on_disk = env.read("calc/ops.py");
    assert!(on_disk.ends_with("# WIP\n"), "{on_disk}");
    assert!(on_disk.contains("None if b == 0"), "{on_disk}");
    let commits = env.git(&["rev-list", "HEAD"]);
    for c in commits.lines() {
        let (ok, text, _) = env.git_try(&["show", &format!("{c}:calc/ops.py")]);
        assert!(ok);
        assert!(!text.contains("# WIP"), "WIP committed in {c}");
    }
    assert_eq!(
        env.git(&["status", "--porcelain", "--", "calc"]),
        " M calc/ops.py\n"
    );
    // HEAD holds the fix without the WIP line.
    let head = env.git(&["show", "HEAD:calc/ops.py"]);
    assert_eq!(format!("{head}# WIP\n"), on_disk);
    // The regression was rolled back with a commit.
    let h = history(&env, ARCHIVED);
    let first = entry(&h, 1);
    assert_eq!(first["outcome"], "rolled_back", "{first}");
    assert!(first["rollback_commit"].is_string(), "{first}");
}

/// Case 11 (git): the snapshot a paused fix needs survives
/// `git gc --prune=now`, and the session's refs are gone once it completes.
#[test]
fn snapshots_survive_gc_during_a_pause_and_refs_go_at_completion() {
    let env = Env::new();
    env.cycle_project("py-calc", &serde_json::json!({"agents": {"fix": "manual"}}));
    env.plan_calculator();
    env.cycle(&[]).code(3);
    assert!(!env.git(&["for-each-ref", "refs/wfx/"]).is_empty());
    env.git(&["gc", "-q", "--prune=now"]);
    // The person fixes by hand and resumes.
    let ops = env
        .read("calc/ops.py")
        .replace("    return a / b", "    return None if b == 0 else a / b");
    env.write("calc/ops.py", &ops);
    let auth = env
        .read("calc/auth.py")
        .replace("len(body) == 6", "len(body) == 8");
    env.write("calc/auth.py", &auth);
    env.cycle(&[]).success();
    assert_eq!(env.git(&["for-each-ref", "refs/wfx/"]), "");
    assert_eq!(env.git(&["status", "--porcelain", "--", "calc"]), "");
}

/// Case 13: a new file above `git.max_new_file_mib` (default 10) is
/// neither committed nor copied into `.git` by a snapshot; it stays on
/// disk and is named in fix history, the iteration's line, the final
/// summary, the iteration summary and the report. A big untracked file
/// that was there before the fix is the person's: left alone, not named.
#[test]
fn a_huge_new_file_is_not_committed_nor_copied_into_git_and_is_named() {
    let env = Env::new();
    py_calc(&env, "big-file");
    std::fs::create_dir_all(env.root.join("data")).unwrap();
    std::fs::File::create(env.root.join("data/dataset.bin"))
        .unwrap()
        .set_len(11 << 20)
        .unwrap();
    let out = env.cycle(&[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let named = "data/huge.bin (12.0 MiB > git.max_new_file_mib 10)";
    assert_eq!(
        std::fs::metadata(env.root.join("data/huge.bin"))
            .unwrap()
            .len(),
        12 << 20
    );
    let committed = env.git(&["log", "--name-only", "--format="]);
    assert!(!committed.contains("data/"), "{committed}");
    assert!(committed.contains("calc/ops.py"), "{committed}");
    let objects = env.git(&[
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectsize)",
    ]);
    let biggest = objects.lines().filter_map(|l| l.parse::<u64>().ok()).max();
    assert!(biggest.unwrap() < 1 << 20, "an object of {biggest:?} bytes");
    assert_eq!(env.git(&["status", "--porcelain", "--", "calc"]), "");
    // Fix history names it, with its size and the limit.
    let h = history(&env, ARCHIVED);
    let first = entry(&h, 1);
    assert_eq!(
        first["not_committed"],
        serde_json::json!([{
            "path": "data/huge.bin",
            "reason": "too_big",
            "bytes": 12 << 20,
            "limit_mib": 10
        }]),
        "{first}"
    );
    assert!(!h.to_string().contains("dataset.bin"), "{h}");
    // The iteration's line (stderr) and the final summary (stdout).
    assert!(
        stderr.contains(&format!("Iteration 1 · not committed: {named}")),
        "{stderr}"
    );
    assert!(
        stdout.contains(&format!("Not committed (left on disk): {named}")),
        "{stdout}"
    );
    assert!(!format!("{stdout}{stderr}").contains("dataset.bin"));
    // The iteration summary (Markdown) and the report (HTML).
    let summary = env.read(&format!(
        "{ARCHIVED}/.summaries/iteration-summaries/iteration-1.md"
    ));
    assert!(
        summary.contains(&format!("- Not committed (left on disk): `{named}`")),
        "{summary}"
    );
    env.wfx()
        .args(["report", "--html", "report.html"])
        .assert()
        .success();
    let html = env.read("report.html");
    let fixes = common::html_section(&html, "fixes")
        .replace("&#x2f;", "/")
        .replace("&gt;", ">");
    assert!(
        fixes.contains(&format!("not committed: {named}")),
        "{fixes}"
    );
    assert!(!html.contains("dataset.bin"));
}

/// Case 11: file names that are not UTF-8 are committed, and a deleted
/// tracked one is committed as deleted: the tree is clean afterwards.
#[test]
fn non_utf8_names_are_committed_and_deleted() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("non-utf8-names"));
    let data = env.root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let old = data.join(std::ffi::OsStr::from_bytes(b"\xe9t\xe9.txt"));
    std::fs::write(&old, "old\n").unwrap();
    env.git(&["add", "data"]);
    env.git(&["commit", "-qm", "data"]);
    env.plan_calculator();
    env.cycle(&[]).success();
    assert!(!old.exists());
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let tree = env.git_bytes(&[
        "-c",
        "core.quotePath=false",
        "ls-tree",
        "-r",
        "--name-only",
        "HEAD",
        "data",
    ]);
    assert_eq!(tree, b"data/n\xe9w.txt\n".to_vec());
}

/// Case 9: a failing `commit-msg` hook pauses the session (exit 3) with its
/// output; once the hook accepts, the resume commits through it; with
/// `git.hooks: false` hooks are skipped.
#[test]
fn git_hooks_run_and_a_failing_hook_pauses() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    py_calc(&env, "fix-all");
    let hook = env.root.join(".git/hooks/commit-msg");
    std::fs::write(
        &hook,
        "#!/bin/sh\nif [ -e \"$(dirname \"$0\")/allow\" ]; then echo 'Hooked: yes' >> \"$1\"; exit 0; fi\necho 'subject must start with feat:' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = env.cycle(&[]).code(3);
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned()
        + &String::from_utf8_lossy(&out.get_output().stderr);
    assert!(text.contains("subject must start with feat:"), "{text}");
    assert!(text.contains("commit-msg"), "{text}");
    assert_eq!(
        env.subjects().len(),
        1,
        "nothing committed: {:?}",
        env.subjects()
    );
    std::fs::write(env.root.join(".git/hooks/allow"), "").unwrap();
    env.cycle(&["--resume-session", "WFS-test-the-calculator"])
        .success();
    let msg = env.git(&["log", "-1", "--format=%B", "HEAD~1"]);
    assert!(
        msg.contains("Hooked: yes") && msg.contains("Wfx-Run:"),
        "{msg}"
    );
}

/// `git.hooks: false`: a `pre-commit` that would refuse every commit is
/// not run, and the final summary, the iteration summary and the report
/// say that hooks were skipped (and say nothing of it by default).
#[test]
fn git_hooks_false_skips_them_and_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let mut config = fixer_config("fix-all");
    config["git"] = serde_json::json!({"hooks": false});
    env.cycle_project("py-calc", &config);
    env.plan_calculator();
    let hook = env.root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = env.cycle(&[]).success();
    assert!(env.subjects().len() >= 3, "{:?}", env.subjects());
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        stdout.contains(
            "Git hooks were skipped for wfx's commits (git.hooks: false in .workflow/wfx.json)"
        ),
        "{stdout}"
    );
    assert_eq!(
        env.json(&format!("{ARCHIVED}/workflow-session.json"))["git"]["hooks_skipped"],
        true
    );
    let summary = env.read(&format!(
        "{ARCHIVED}/.summaries/iteration-summaries/iteration-1.md"
    ));
    assert!(
        summary.contains("(git hooks skipped: `git.hooks: false`)"),
        "{summary}"
    );
    env.wfx()
        .args(["report", "--html", "report.html"])
        .assert()
        .success();
    let html = env.read("report.html");
    let outcome = common::html_section(&html, "outcome");
    assert!(
        outcome.contains("Git hooks were skipped for wfx's commits"),
        "{outcome}"
    );
}

/// By default (hooks run) nothing is said about hooks.
#[test]
fn hooks_that_run_are_not_reported_as_skipped() {
    let env = Env::new();
    py_calc(&env, "fix-all");
    let out = env.cycle(&[]).success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!stdout.contains("hooks"), "{stdout}");
    let session = env.json(&format!("{ARCHIVED}/workflow-session.json"));
    assert!(session["git"].get("hooks_skipped").is_none(), "{session}");
    env.wfx()
        .args(["report", "--html", "report.html"])
        .assert()
        .success();
    assert!(!env.read("report.html").contains("hooks were skipped"));
}

// Crashes (`kill -9`) in the middle of git work of issue #15: a slow hook,
// an agent that commits. The resume must end as an uninterrupted run.

/// `wfx test-cycle-execute ARGS` as a child process, so a test can kill it.
fn spawn_cycle(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> std::process::Child {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.env("FIXER_STATE", env.state_dir())
        .arg("test-cycle-execute")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.spawn().expect("wfx starts")
}

/// Resume until the session completes (exit 0); at most twice.
fn resume_to_the_end(env: &Env, vars: &[(&str, &str)]) {
    for _ in 0..2 {
        let out = spawn_cycle(env, &["--resume-session", "WFS-test-the-calculator"], vars)
            .wait_with_output()
            .unwrap();
        match out.status.code() {
            Some(0) => return,
            Some(3) => continue,
            code => panic!(
                "resume exited {code:?}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    panic!("the session did not complete after two resumes");
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "waited for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn gone(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while wfx::process::group_alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !wfx::process::group_alive(pid)
}

/// `kill -9` while the repository's `pre-commit` hook runs (it sleeps in a
/// child process on its first run): the resume ends what the hook left,
/// runs the hook again and makes each commit once; the fix is committed.
#[test]
fn kill_9_during_a_pre_commit_hook_then_resume_commits_once_and_leaves_no_process() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    py_calc(&env, "fix-all");
    let marks = env.state_dir();
    let hook = env.root.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho run >> {m}/hook-runs\nif [ ! -e {m}/hook-slept ]; then\n  touch {m}/hook-slept\n  sleep 300 &\n  echo $! > {m}/sleep-pid\n  echo $$ > {m}/hook-pid\n  wait\nfi\nexit 0\n",
            m = marks.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut wfx = spawn_cycle(&env, &[], &[]);
    let hook_pid = marks.join("hook-pid");
    // `echo $$ > file` creates the file before it writes the line.
    wait_for("the hook to start", || {
        std::fs::read_to_string(&hook_pid).is_ok_and(|s| s.ends_with('\n'))
    });
    unsafe { libc::kill(wfx.id() as i32, libc::SIGKILL) };
    let _ = wfx.wait();
    let read_pid = |name: &str| -> i32 {
        std::fs::read_to_string(marks.join(name))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (hook_group, sleeper) = (read_pid("hook-pid"), read_pid("sleep-pid"));
    // Nothing was committed while the hook ran.
    assert_eq!(env.subjects(), ["initial"]);

    resume_to_the_end(&env, &[]);
    // The hook's group (and its sleeping child, which left no group) is gone.
    assert!(
        gone(hook_group),
        "the hook's process group {hook_group} survived"
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{sleeper}")).exists()
            || std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the hook's child {sleeper} survived"
    );
    // One commit per step, the fix among them, the tree clean.
    let subjects = env.subjects();
    let fixes = subjects
        .iter()
        .filter(|s| s.starts_with("test-cycle: iteration 1"))
        .count();
    assert_eq!(fixes, 1, "{subjects:?}");
    assert!(subjects[0].contains("completed"), "{subjects:?}");
    assert_eq!(subjects.len(), 3, "{subjects:?}");
    assert!(env.read("calc/ops.py").contains("None if b == 0"));
    assert_eq!(
        env.git_bytes(&["show", "HEAD:calc/ops.py"]),
        env.read_bytes("calc/ops.py")
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    // The hook ran for the killed commit and again for each made one.
    let runs = std::fs::read_to_string(marks.join("hook-runs")).unwrap();
    assert_eq!(runs.lines().count(), 3, "{runs}");
}

/// One run of the committing agent, killed on its first call at `kill_at`
/// (`None`: never), resumed to the end: what it left.
struct AgentCrash {
    subjects: Vec<String>,
    agent_commits: usize,
    pass_rates: Vec<f64>,
    on_branch_from_agent: usize,
}

fn committing_agent_run(kill_at: Option<&str>) -> AgentCrash {
    let env = Env::new();
    py_calc(&env, "commit-then-die");
    let vars: Vec<(&str, &str)> = kill_at.map(|w| ("KILL_AT", w)).into_iter().collect();
    let out = spawn_cycle(&env, &[], &vars).wait_with_output().unwrap();
    match kill_at {
        None => assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Some(_) => {
            assert_eq!(out.status.code(), None, "wfx was not killed");
            resume_to_the_end(&env, &vars);
        }
    }
    let h = history(&env, ARCHIVED);
    assert_eq!(h["entries"].as_array().unwrap().len(), 1, "{h}");
    let first = entry(&h, 1);
    let fix = first["commit"].as_str().expect("a fix commit").to_string();
    // The fix commit holds the fix; nothing is left in the tree.
    assert!(
        env.git(&["show", &format!("{fix}:calc/ops.py")])
            .contains("None if b == 0")
    );
    assert_eq!(env.git(&["status", "--porcelain"]), "");
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    AgentCrash {
        subjects: env.subjects(),
        agent_commits: first["agent_commits"].as_array().map_or(0, Vec::len),
        pass_rates: state["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["pass_rate"].as_f64().unwrap())
            .collect(),
        on_branch_from_agent: env
            .subjects()
            .iter()
            .filter(|s| s.as_str() == "agent: fix")
            .count(),
    }
}

/// `kill -9` while a fix agent that runs `git commit` itself is running,
/// before and after its commit: the resume ends as the uninterrupted run
/// does — the agent's commit folded into the attempt's checkpoint (none
/// of the agent's commits on the branch), one fix attempt, the same
/// commits and pass rates.
#[test]
fn kill_9_during_an_agent_that_commits_then_resume_ends_as_uninterrupted() {
    let reference = committing_agent_run(None);
    assert_eq!(reference.agent_commits, 1);
    assert_eq!(
        reference.on_branch_from_agent, 0,
        "{:?}",
        reference.subjects
    );
    for when in ["before", "after"] {
        let run = committing_agent_run(Some(when));
        assert_eq!(run.subjects, reference.subjects, "killed {when} the commit");
        assert_eq!(
            run.pass_rates, reference.pass_rates,
            "killed {when} the commit"
        );
        assert_eq!(
            run.on_branch_from_agent, 0,
            "killed {when}: {:?}",
            run.subjects
        );
        assert_eq!(run.agent_commits, 1, "killed {when} the commit");
    }
}

/// A snapshot wfx needs on resume is gone (its ref deleted by hand, the
/// object pruned): exit 2 with a message naming the snapshot, its ref and
/// what to do; the person's work in the tree is left exactly as it was.
#[test]
fn a_missing_snapshot_on_resume_is_exit_2_naming_it_and_loses_nothing() {
    let env = Env::new();
    env.cycle_project("py-calc", &serde_json::json!({"agents": {"fix": "manual"}}));
    env.plan_calculator();
    env.cycle(&[]).code(3);
    let refs = env.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/wfx/",
    ]);
    let snapshot = refs
        .lines()
        .find(|l| l.contains("/snapshots/"))
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_else(|| panic!("no snapshot ref: {refs}"))
        .to_string();
    for line in refs.lines() {
        env.git(&["update-ref", "-d", line.split(' ').next().unwrap()]);
    }
    env.git(&["reflog", "expire", "--expire=now", "--all"]);
    env.git(&["gc", "-q", "--prune=now"]);
    let (exists, _, _) = env.git_try(&["cat-file", "-e", &snapshot]);
    assert!(!exists, "the snapshot {snapshot} is still there");
    // The person's fix by hand, uncommitted.
    let ops = env
        .read("calc/ops.py")
        .replace("    return a / b", "    return None if b == 0 else a / b");
    env.write("calc/ops.py", &ops);
    // The project's own files (git's and wfx's directories aside).
    let project = |env: &Env| {
        let mut files = common::digest_tree(&env.root);
        files.retain(|p, _| !p.starts_with(".git/") && !p.starts_with(".workflow/"));
        files
    };
    let before = project(&env);
    let state = |env: &Env| {
        let mut v = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
        v.as_object_mut().unwrap().remove("updated_at");
        v
    };
    let state_before = state(&env);
    let out = env
        .cycle(&["--resume-session", "WFS-test-the-calculator"])
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    for what in [
        format!("snapshot {snapshot}"),
        format!("refs/wfx/WFS-test-the-calculator/snapshots/{snapshot}"),
        "changed none of your files".to_string(),
        "wfx session complete WFS-test-the-calculator".to_string(),
    ] {
        assert!(stderr.contains(&what), "no {what:?} in: {stderr}");
    }
    assert!(project(&env) == before, "the project's files changed");
    // The state still waits for the same fix (only its clock moved).
    assert_eq!(state(&env), state_before);
}
