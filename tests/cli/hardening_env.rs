//! Hardening (issue #10): a hostile environment. `.workflow` on a
//! read-only file system, a full disk before and during a cycle, the
//! session directory deleted under a running wfx, and two wfx processes
//! racing for one session. Each case asserts the exit code, that the
//! message names the path or the holder, and what happened to the files.
//!
//! The file-system cases use real mounts (a read-only bind mount, a small
//! tmpfs) inside a private mount namespace (`unshare --mount`, with
//! `--map-root-user` when not root), so nothing leaks out of the test.
//! Where namespaces are not permitted they print why and skip.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{Env, changed_files, digest_tree, fake_agent};
use serde_json::json;

const S: &str = "WFS-test-harden-the-calculator";
const A: &str = ".workflow/active/WFS-test-harden-the-calculator";
const TAP: &str = "printf 'TAP version 13\\nok 1 - adds\\nnot ok 2 - subtracts\\n1..2\\n'; exit 1";

/// A project with a test session paused for a manual fix after its first
/// run (the test command prints TAP with one failing test).
fn base(test_command: &str) -> Env {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({
            "test": {"command": test_command},
            "cycle": {"max_iterations": 10, "no_progress_limit": 100}
        }))
        .unwrap(),
    );
    env.write("README.md", "calculator\n");
    env.wfx()
        .args([
            "-q",
            "test-fix-gen",
            "Harden the calculator",
            "--fix-agent",
            "manual",
        ])
        .assert()
        .code(3);
    env
}

fn wfx_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("wfx")
}

/// `unshare` arguments for a private mount namespace, or why there is none.
fn namespace() -> Result<Vec<&'static str>, String> {
    let mut args = vec!["--mount"];
    if unsafe { libc::geteuid() } != 0 {
        args.push("--map-root-user");
    }
    let probe = Command::new("unshare")
        .args(&args)
        .args(["sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null || mount -t tmpfs -o size=64k tmpfs /tmp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(s) if s.success() => Ok(args),
        Ok(s) => Err(format!(
            "mounting a tmpfs in a new mount namespace failed ({s})"
        )),
        Err(e) => Err(format!("unshare: {e}")),
    }
}

/// Run `script` with `sh -eu` inside a private mount namespace, in the
/// project root, with the hermetic environment plus `WFX` (the binary),
/// `WF` (the project's `.workflow`) and `extra`. `None`: no namespaces here.
fn in_namespace(env: &Env, script: &str, extra: &[(&str, &Path)]) -> Option<Output> {
    let ns = match namespace() {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED: {why}; this case needs a private mount namespace");
            return None;
        }
    };
    let mut cmd = Command::new("unshare");
    env.apply(&mut cmd);
    cmd.args(&ns)
        .args(["sh", "-eu", "-c", script])
        .env("WFX", wfx_bin())
        .env("WF", env.root.join(".workflow"));
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Some(cmd.output().unwrap())
}

/// A script helper: `run NAME ARGS…` runs wfx, keeping its exit code,
/// stdout and stderr in `$OUT/NAME.{rc,out,err}`.
const RUN_FN: &str = r#"
run() { name=$1; shift; set +e; "$WFX" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; set -e; }
"#;

struct Recorded {
    dir: PathBuf,
}

impl Recorded {
    fn rc(&self, name: &str) -> i32 {
        std::fs::read_to_string(self.dir.join(format!("{name}.rc")))
            .unwrap_or_else(|e| panic!("{name}.rc: {e}"))
            .trim()
            .parse()
            .unwrap()
    }
    fn text(&self, name: &str) -> String {
        let out = std::fs::read_to_string(self.dir.join(format!("{name}.out"))).unwrap();
        let err = std::fs::read_to_string(self.dir.join(format!("{name}.err"))).unwrap();
        format!("{out}{err}")
    }
}

fn out_dir(env: &Env) -> Recorded {
    let dir = env.tmp.path().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    Recorded { dir }
}

/// `.workflow` mounted read-only: every command that only reads works;
/// every command that must write exits 2 naming the path and the reason;
/// no file changes.
#[test]
fn read_only_workflow_directory() {
    let env = base(TAP);
    let before = digest_tree(&env.root);
    let rec = out_dir(&env);
    let html = env.tmp.path().join("report.html");
    let script = format!(
        "{RUN_FN}
mount --bind \"$WF\" \"$WF\"
mount -o remount,bind,ro \"$WF\"
touch \"$WF/probe\" 2>/dev/null && exit 90
run status status {S}
run validate validate
run list session list --all
run show session show {S}
run report report {S} --html \"$HTML\"
run cycle test-cycle-execute --resume-session {S}
run resume session resume {S}
run complete session complete {S}
run gen test-fix-gen 'Another session'
run test test
run init init --force
"
    );
    let Some(out) = in_namespace(&env, &script, &[("OUT", &rec.dir), ("HTML", &html)]) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    for (name, want) in [
        ("status", 0),
        ("validate", 0),
        ("list", 0),
        ("show", 0),
        ("report", 0),
    ] {
        assert_eq!(rec.rc(name), want, "{name}: {}", rec.text(name));
    }
    let lock = format!("{}/{A}/.lock", env.root.display());
    for (name, names) in [
        ("cycle", lock.clone()),
        ("resume", lock.clone()),
        ("complete", lock.clone()),
        ("gen", format!("{}/.workflow/active", env.root.display())),
        ("test", format!("{}/.workflow/.cache", env.root.display())),
        ("init", format!("{}/.workflow/wfx.json", env.root.display())),
    ] {
        let text = rec.text(name);
        assert_eq!(rec.rc(name), 2, "{name}: {text}");
        assert!(
            text.lines().any(|l| l.starts_with("error: ")
                && l.contains(&names)
                && l.contains("Read-only file system")),
            "{name}: no error naming {names}:\n{text}"
        );
    }
    assert!(html.is_file(), "the report was written outside .workflow");
    assert_eq!(
        changed_files(&before, &digest_tree(&env.root)),
        Vec::<String>::new()
    );
}

/// Copy `.workflow` aside so a script can mount a small tmpfs in its place
/// and copy it back in.
fn set_aside_workflow(env: &Env) -> PathBuf {
    let src = env.tmp.path().join("workflow-src");
    std::fs::rename(env.root.join(".workflow"), &src).unwrap();
    std::fs::create_dir(env.root.join(".workflow")).unwrap();
    src
}

/// A full disk before the command: the commands that must write exit 2
/// naming the file and "No space left on device"; every file that was
/// there is byte for byte the same, and no temp file is left behind.
#[test]
fn full_disk_before_a_command() {
    let env = base(TAP);
    let src = set_aside_workflow(&env);
    let before = digest_tree(&src);
    let rec = out_dir(&env);
    let after_dir = env.tmp.path().join("after");
    let script = format!(
        "{RUN_FN}
mount -t tmpfs -o size=1m tmpfs \"$WF\"
cp -a \"$SRC/.\" \"$WF/\"
dd if=/dev/zero of=\"$WF/filler\" bs=4k 2>/dev/null || true
run resume session resume {S}
run cycle test-cycle-execute --resume-session {S}
run gen test-fix-gen 'Another session'
run status status {S}
rm -f \"$WF/filler\"
cp -a \"$WF/.\" \"$AFTER/\"
"
    );
    let Some(out) = in_namespace(
        &env,
        &script,
        &[("OUT", &rec.dir), ("SRC", &src), ("AFTER", &after_dir)],
    ) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    for name in ["resume", "cycle", "gen"] {
        let text = rec.text(name);
        assert_eq!(rec.rc(name), 2, "{name}: {text}");
        assert!(
            text.lines().any(|l| l.starts_with("error: ")
                && l.contains(&format!("{}/.workflow/", env.root.display()))
                && l.contains("No space left on device")),
            "{name}: no error naming a path and the full disk:\n{text}"
        );
    }
    assert_eq!(rec.rc("status"), 0, "reading needs no space");
    let after = digest_tree(&after_dir);
    // The lock is rewritten in place by whoever takes it (not an artifact).
    let changed: Vec<String> = changed_files(&before, &after)
        .into_iter()
        .filter(|f| f != &format!("active/{S}/.lock"))
        .collect();
    assert_eq!(changed, Vec::<String>::new());
}

/// The disk fills up while the cycle runs (the test command fills it):
/// the cycle exits 2 naming the file it could not write; every artifact
/// is still valid (atomic writes), nothing half-written is left; once
/// space is freed the same command resumes and finishes the iteration.
#[test]
fn full_disk_during_a_cycle() {
    let marker = tempfile::tempdir().unwrap();
    let mark = marker.path().join("filled");
    let fill = format!(
        "if [ ! -e '{}' ]; then touch '{}'; dd if=/dev/zero of=.workflow/filler bs=64k 2>/dev/null || true; fi; {TAP}",
        mark.display(),
        mark.display()
    );
    let env = base(TAP);
    // The same session, now with a test command that fills the disk once.
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({
            "test": {"command": fill},
            "cycle": {"max_iterations": 3}
        }))
        .unwrap(),
    );
    let src = set_aside_workflow(&env);
    let state_before =
        std::fs::read(src.join(format!("active/{S}/.process/iteration-state.json"))).unwrap();
    let rec = out_dir(&env);
    let after_dir = env.tmp.path().join("after");
    let script = format!(
        "{RUN_FN}
mount -t tmpfs -o size=2m tmpfs \"$WF\"
cp -a \"$SRC/.\" \"$WF/\"
run cycle test-cycle-execute --resume-session {S}
test -e \"$WF/filler\"
rm -f \"$WF/filler\"
find \"$WF\" -name '*.tmp' >\"$OUT/tmp-files\"
run validate validate {S}
run again test-cycle-execute --resume-session {S}
cp -a \"$WF/.\" \"$AFTER/\"
"
    );
    let Some(out) = in_namespace(
        &env,
        &script,
        &[("OUT", &rec.dir), ("SRC", &src), ("AFTER", &after_dir)],
    ) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = rec.text("cycle");
    assert_eq!(rec.rc("cycle"), 2, "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("error: ")
            && l.contains(&format!("{}/{A}/", env.root.display()))
            && l.contains("No space left on device")),
        "no error naming the file and the full disk:\n{text}"
    );
    assert_eq!(
        std::fs::read_to_string(rec.dir.join("tmp-files")).unwrap(),
        "",
        "no temp file left behind"
    );
    assert_eq!(rec.rc("validate"), 0, "{}", rec.text("validate"));
    // Resumed with space: the retest of iteration 2 runs and the loop
    // pauses for the next manual fix.
    let again = rec.text("again");
    assert_eq!(rec.rc("again"), 3, "{again}");
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(after_dir.join(format!("active/{S}/.process/iteration-state.json")))
            .unwrap(),
    )
    .unwrap();
    assert_ne!(state_before, serde_json::to_vec_pretty(&state).unwrap());
    let runs: Vec<u64> = state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["iteration"].as_u64().unwrap())
        .collect();
    assert_eq!(runs, [1, 2], "no run lost, none counted twice");
}

/// The disk holding `.git/objects` is full when the cycle writes its first
/// snapshot: exit 2 with libgit2's cause (issue #15 case 11; it was exit 4,
/// "internal error"); once space is freed the same command goes on.
#[test]
fn full_disk_during_a_git_write() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({"test": {"command": TAP}})).unwrap(),
    );
    env.write("README.md", "calculator\n");
    env.git_init_commit();
    env.wfx()
        .args([
            "-q",
            "test-fix-gen",
            "Harden the calculator",
            "--fix-agent",
            "manual",
            "--plan-only",
        ])
        .assert()
        .success();
    let rec = out_dir(&env);
    let objects = env.tmp.path().join("objects");
    let script = format!(
        "{RUN_FN}
cp -a .git/objects/. \"$OBJ/\"
mount -t tmpfs -o size=1m tmpfs .git/objects
cp -a \"$OBJ/.\" .git/objects/
dd if=/dev/zero of=.git/objects/filler bs=4k 2>/dev/null || true
run cycle test-cycle-execute --resume-session {S}
rm -f .git/objects/filler
run again test-cycle-execute --resume-session {S}
"
    );
    std::fs::create_dir_all(&objects).unwrap();
    let Some(out) = in_namespace(&env, &script, &[("OUT", &rec.dir), ("OBJ", &objects)]) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    let text = rec.text("cycle");
    assert_eq!(rec.rc("cycle"), 2, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("error: ") && l.contains("No space left on device")),
        "the cause is lost:\n{text}"
    );
    assert_eq!(rec.rc("again"), 3, "{}", rec.text("again"));
}

/// The session directory is removed while wfx waits for the fix agent:
/// wfx stops with exit 2 naming the directory, and does not recreate any
/// of it.
#[test]
fn session_directory_deleted_while_running() {
    let env = Env::new();
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&json!({
            "test": {"command": TAP},
            "agents": {"fix": "rm", "definitions": {"rm": {"command": [fake_agent("rm-session").display().to_string()]}}},
            "cycle": {"max_iterations": 3}
        }))
        .unwrap(),
    );
    env.write("README.md", "calculator\n");
    let out = env
        .wfx()
        .args(["test-fix-gen", "Harden the calculator"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "error: session directory {}/{A} was removed while wfx was running; stopped without recreating it",
            env.root.display()
        )),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    assert!(
        !env.root.join(A).exists(),
        "nothing of the session was recreated"
    );
    assert_eq!(
        std::fs::read_dir(env.root.join(".workflow/active"))
            .unwrap()
            .count(),
        0
    );
    env.wfx().args(["status", S]).assert().code(2);
}

/// The same for `wfx run`: a step deletes the run's session directory.
#[test]
fn run_session_directory_deleted_while_running() {
    let env = Env::new();
    env.write(
        "wf.yml",
        "name: gone\ncommands:\n  - shell: \"rm -rf .workflow/active/WFS-run-gone\"\n  - shell: \"echo after\"\n",
    );
    let out = env.wfx().args(["run", "wf.yml"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("session directory")
            && text.contains("WFS-run-gone was removed while wfx was running"),
        "{text}"
    );
    assert!(!env.root.join(".workflow/active/WFS-run-gone").exists());
}

/// Two `test-cycle-execute --resume-session` started at the same instant:
/// exactly one runs the session; the other exits 2 naming the winner's
/// pid. Repeated, because the window is small.
#[test]
fn two_processes_race_for_one_session() {
    let env = base(&format!("sleep 1; {TAP}"));
    for round in 0..3 {
        let spawn = || {
            let mut cmd = Command::new(wfx_bin());
            env.apply(&mut cmd);
            cmd.args(["test-cycle-execute", "--resume-session", S])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let (pa, pb) = (a.id(), b.id());
        let (oa, ob) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let (winner, loser, winner_pid) = match (oa.status.code(), ob.status.code()) {
            (Some(2), Some(c)) if c != 2 => (ob, oa, pb),
            (Some(c), Some(2)) if c != 2 => (oa, ob, pa),
            other => panic!(
                "round {round}: exits {other:?}\n{}\n{}",
                String::from_utf8_lossy(&oa.stderr),
                String::from_utf8_lossy(&ob.stderr)
            ),
        };
        // The winner retests and pauses for the next manual fix.
        assert_eq!(winner.status.code(), Some(3), "round {round}");
        let text = String::from_utf8_lossy(&loser.stderr);
        assert!(
            text.contains(&format!(
                "error: session {S} is in use by wfx process {winner_pid} (since "
            )),
            "round {round}: {text}"
        );
        // The loser did not touch the session: one run per round.
        let state = env.json(&format!("{A}/.process/iteration-state.json"));
        assert_eq!(
            state["iterations"].as_array().unwrap().len(),
            2 + round,
            "round {round}"
        );
    }
}

/// `session complete` and `session resume` while a cycle runs: refused
/// (exit 2, the holder named); the running cycle finishes undisturbed.
#[test]
fn archiving_a_running_session_is_refused() {
    let env = base(&format!("sleep 2; {TAP}"));
    let mut cmd = Command::new(wfx_bin());
    env.apply(&mut cmd);
    let cycle = cmd
        .args(["test-cycle-execute", "--resume-session", S])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = env.root.join(A).join(".lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_to_string(&lock).is_ok_and(|t| !t.contains(&cycle.id().to_string())) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cycle never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for args in [["session", "complete", S], ["session", "resume", S]] {
        let out = env.wfx().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains(&format!("is in use by wfx process {}", cycle.id())),
            "{args:?}: {text}"
        );
    }
    let out = cycle.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(env.root.join(A).is_dir(), "still active, not archived");
}
