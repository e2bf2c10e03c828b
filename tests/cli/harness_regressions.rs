//! Issue #27 case 8, regressions and gaps of the harness around test
//! runs and agent calls: a crashed first run, shell builtins in a test
//! command, memory with huge outputs, a session directory on another
//! filesystem, and libgit2's temp objects after a kill. End to end on a
//! fresh copy of `fixtures/projects/py-calc` (docs/hardening.md,
//! docs/runner.md).

use crate::common::{self, Env, fake_agent, fixer_config, out_text};
use serde_json::json;

const ARCHIVED: &str = ".workflow/archives/WFS-test-the-calculator";

/// A config whose test command is `command` and whose fix agent is the
/// fixture `fixer`.
fn config_with_test(command: &str, fixer: &str) -> serde_json::Value {
    let mut config = fixer_config(fixer);
    config["test"] = json!({ "command": command });
    config
}

/// A first run that crashes (exit 139, nothing parsed) is recorded as one
/// static failure named after the command. It is no test: the correct fix
/// after it is not "test edits rejected" because that name is missing from
/// the next run, and the session completes.
#[test]
fn a_crashed_first_run_is_no_test_that_a_fix_can_remove() {
    let env = Env::new();
    let command = format!("{} python3 -m pytest", fake_agent("crash-once").display());
    env.cycle_project("py-calc", &config_with_test(&command, "fix-all"));
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("Completed"), "{text}");
    assert!(!text.contains("rejected"), "{text}");
    assert!(env.state_dir().join("crashed-once").exists(), "no crash");
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    let entry = &history["entries"][0];
    assert_ne!(entry["outcome"], "rejected", "{entry:#}");
    assert!(
        entry["test_edits"]
            .as_array()
            .is_none_or(|edits| edits.is_empty()),
        "{entry:#}"
    );
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let first = &state["iterations"][0];
    assert_eq!(first["pass_rate"], 0.0, "{state:#}");
    let committed = env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(committed.contains("None if b == 0"), "{committed}");
}

/// Test commands that start with shell builtins or assignments, each
/// with the program it needs at the end.
const BUILTIN_COMMANDS: &[&str] = &[
    "trap '' TERM; python3 -m pytest",
    "ulimit -n 1024; python3 -m pytest",
    "umask 022; python3 -m pytest",
    "FOO=1 python3 -m pytest",
    "cd tests && cd .. && python3 -m pytest",
];

/// A test step of a `wfx run` workflow.
fn workflow_with_test(env: &Env, command: &str) {
    env.write(
        "wf.yml",
        &format!(
            "commands:\n  - test:\n      command: {}\n",
            serde_json::to_string(command).unwrap()
        ),
    );
}

/// A test command that uses a shell builtin before its program is run by
/// the cycle, `wfx test` and `wfx run` alike (the builtin is not looked
/// for on PATH); one whose program is missing is refused by all of them
/// with the same words, before anything runs.
#[test]
fn a_test_command_with_shell_builtins_runs_everywhere_or_is_refused_everywhere() {
    for command in BUILTIN_COMMANDS {
        let env = Env::new();
        env.cycle_project("py-calc", &config_with_test(command, "fix-all"));
        let out = env.wfx_live().arg("test").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{command}: {text}");
        assert!(text.contains("2 failed"), "{command}: {text}");
        workflow_with_test(&env, command);
        let out = env.wfx_live().args(["run", "wf.yml"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{command}: {text}");
        assert!(
            text.contains("step 1 (test): FAILED: tests never passed"),
            "{command}: {text}"
        );
    }
    // The whole loop with all of them in one command line.
    let env = Env::new();
    let command =
        "trap '' TERM; ulimit -n 1024; umask 022; cd tests && cd .. && FOO=1 python3 -m pytest";
    env.cycle_project("py-calc", &config_with_test(command, "fix-all"));
    env.plan_calculator();
    let run = env.cycle(&[]).success();
    let text = out_text(&run);
    assert!(text.contains("Completed"), "{text}");

    let missing = "trap '' TERM; umask 022; wfx-no-such-runner -q";
    let words =
        format!("the test command `{missing}` needs `wfx-no-such-runner`, which is not on PATH");
    let env = Env::new();
    env.cycle_project("py-calc", &config_with_test(missing, "fix-all"));
    let planned = env
        .wfx_live()
        .args(["test-fix-gen", "Test the calculator"])
        .assert()
        .code(2);
    assert!(
        out_text(&planned).contains(&words),
        "{}",
        out_text(&planned)
    );
    assert!(!env.root.join(".workflow/active").exists());
    let test = env.wfx_live().arg("test").assert().code(2);
    assert!(out_text(&test).contains(&words), "{}", out_text(&test));
    workflow_with_test(&env, missing);
    let run = env.wfx_live().args(["run", "wf.yml"]).assert().code(2);
    assert!(out_text(&run).contains(&words), "{}", out_text(&run));
    assert!(!env.root.join(".workflow/active").exists());
}

/// What memory wfx may use, whatever a child prints.
const PEAK_RSS_LIMIT_KIB: u64 = 200 * 1024;

/// Run `wfx test-cycle-execute` in `env` to its end and check that it
/// completed with a peak resident set size under the limit, as the kernel
/// reports it to the parent (`wait4`'s `ru_maxrss`: the largest of wfx and
/// the children it waited for; never timed).
fn cycle_completes_in_bounded_memory(env: &Env, vars: &[(&str, &str)]) {
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    cmd.env("FIXER_STATE", env.state_dir())
        .envs(vars.iter().copied())
        .arg("test-cycle-execute");
    let out_path = env.tmp.path().join("wfx-output.txt");
    let out = std::fs::File::create(&out_path).unwrap();
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out);
    // Reaped by `wait4` below, which also reports the usage.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let text = std::fs::read_to_string(&out_path).unwrap();
    let peak = usage.ru_maxrss as u64;
    eprintln!("wfx peak RSS: {} MiB", peak / 1024);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("completed"), "{text}");
    assert!(
        peak < PEAK_RSS_LIMIT_KIB,
        "wfx peaked at {} MiB",
        peak / 1024
    );
}

/// An agent that prints 1 GiB (twice: one fix per call): wfx streams it to
/// a capped log and reads back only its tail; its peak memory stays under
/// 200 MB and the log keeps its head and tail around an omission marker.
#[test]
fn an_agent_printing_a_gibibyte_neither_fills_memory_nor_the_disk() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("flood"));
    env.plan_calculator();
    cycle_completes_in_bounded_memory(&env, &[("FLOOD_MIB", "1024")]);
    let log = env
        .root
        .join(ARCHIVED)
        .join(".process/iteration-1-fix-cli-output.txt");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len <= 65 << 20, "the log holds {len} bytes");
    let mut tail = Vec::new();
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(&log).unwrap();
    f.seek(SeekFrom::Start(16 << 20)).unwrap();
    f.take(200).read_to_end(&mut tail).unwrap();
    let marker = String::from_utf8_lossy(&tail);
    assert!(
        marker.starts_with("\n[… wfx omitted "),
        "no omission marker after the head: {marker:?}"
    );
    // What the agent said last is kept.
    let end = std::fs::read(&log).unwrap();
    let end = String::from_utf8_lossy(&end[end.len() - 200..]).into_owned();
    assert!(end.contains("fixed calc/"), "{end}");
}

/// A test run whose output is one line of 100 MB: read bounded per line
/// everywhere (the parsers, the live progress, the guard of the session's
/// files before each agent call); wfx's peak memory stays under 200 MB.
#[test]
fn a_test_output_of_one_hundred_megabyte_line_is_read_bounded() {
    let env = Env::new();
    let command = format!("{} python3 -m pytest", fake_agent("big-line").display());
    env.cycle_project("py-calc", &config_with_test(&command, "fix-all"));
    env.plan_calculator();
    cycle_completes_in_bounded_memory(&env, &[("BIG_LINE_MIB", "100")]);
}

/// A directory on another filesystem than the temp dir the projects are
/// made in: `/dev/shm` (tmpfs). Fails loudly where there is none.
fn dir_on_another_filesystem(env: &Env) -> tempfile::TempDir {
    use std::os::unix::fs::MetadataExt;
    let other = tempfile::tempdir_in("/dev/shm")
        .expect("this test needs /dev/shm (a second filesystem) to put a session directory on");
    let dev = |p: &std::path::Path| std::fs::metadata(p).unwrap().dev();
    assert_ne!(
        dev(other.path()),
        dev(&env.root),
        "/dev/shm is on the same filesystem as the temp dir: this test needs a second filesystem"
    );
    other
}

/// The names directly under `dir`.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `.workflow/active` is a link to a directory on another filesystem (a
/// person keeps sessions on another disk): no spare is exchanged across
/// the filesystems and the session is archived by a copy, so the whole
/// loop completes (it stopped with "Invalid cross-device link", exit 4),
/// writing nothing outside the project and that directory.
#[test]
fn a_session_directory_on_another_filesystem_completes() {
    let env = Env::new();
    let other = dir_on_another_filesystem(&env);
    env.cycle_project("py-calc", &fixer_config("fix-all"));
    let active = other.path().join("active");
    std::fs::create_dir(&active).unwrap();
    std::os::unix::fs::symlink(&active, env.root.join(".workflow/active")).unwrap();
    let state = env.state_dir();
    let home_before = common::tree(&env.home);
    let tmp_before = names(env.tmp.path());
    env.plan_calculator();
    let run = env.cycle(&[]).code(0);
    let text = out_text(&run);
    assert!(text.contains("completed"), "{text}");
    let archived = env.root.join(ARCHIVED);
    assert!(archived.join("workflow-session.json").is_file(), "{text}");
    assert!(
        !archived.join(".wfx-copied").exists(),
        "the copy's mark was left"
    );
    // The link is the person's and stays; the session left it.
    assert!(
        std::fs::symlink_metadata(env.root.join(".workflow/active"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(names(&active), Vec::<String>::new());
    assert_eq!(names(other.path()), vec!["active"]);
    // Nothing beside the project, its home or the fixer's state changed.
    assert_eq!(names(env.tmp.path()), tmp_before);
    assert_eq!(common::tree(&env.home), home_before);
    assert!(state.is_dir());
    let committed = env.git(&["show", "HEAD:calc/ops.py"]);
    assert!(committed.contains("None if b == 0"), "{committed}");
}

/// A `kill -9` of wfx in the middle of a commit can leave libgit2's temp
/// object file (`.git/objects/tmp_object_git2_*`). The resume of that run
/// (its session lock tells it died, and when it started) removes the temp
/// objects written since then, and nothing else: an older one, and git's
/// own temp files, stay.
#[test]
fn a_resume_after_a_kill_removes_the_dead_runs_temp_objects_only() {
    let env = Env::new();
    env.cycle_project("py-calc", &fixer_config("kill-parent-on-call-N"));
    env.plan_calculator();
    let killed = env
        .wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .env("KILL_ON_CALL", "1")
        .arg("test-cycle-execute")
        .output()
        .unwrap();
    assert_eq!(killed.status.code(), None, "wfx was not killed");
    let objects = env.root.join(".git/objects");
    let plant = |name: &str, age: std::time::Duration| {
        let path = objects.join(name);
        std::fs::write(&path, "partial object").unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() - age).unwrap();
        path
    };
    let dead_runs = plant("tmp_object_git2_k1LLed", std::time::Duration::ZERO);
    let older = plant(
        "tmp_object_git2_0ld3rx",
        std::time::Duration::from_secs(24 * 3600),
    );
    let gits = plant("tmp_obj_pers0n", std::time::Duration::ZERO);
    let resumed = env
        .cycle(&["--resume-session", "WFS-test-the-calculator"])
        .success();
    let text = out_text(&resumed);
    assert!(text.contains("completed"), "{text}");
    assert!(!dead_runs.exists(), "the dead run's temp object stayed");
    assert!(
        text.contains("Removed .git/objects/tmp_object_git2_k1LLed, left by the interrupted run"),
        "{text}"
    );
    assert!(older.exists(), "a temp object older than the dead run");
    assert!(gits.exists(), "git's own temp file");
}
