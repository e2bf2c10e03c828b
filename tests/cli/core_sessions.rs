//! Session commands on hand-made sessions, run as a user would.

use crate::common;

use common::{Env, make_session};
use predicates::prelude::*;

#[test]
fn list_shows_active_and_with_all_archived_sessions() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "active",
        &[("IMPL-001", "completed"), ("IMPL-002", "pending")],
    );
    make_session(&env, "WFS-test-beta", "blocked", &[]);
    env.wfx()
        .args(["session", "complete", "WFS-test-beta"])
        .assert()
        .success();

    let out = env
        .wfx()
        .args(["session", "list", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "WFS-test-alpha");
    assert_eq!(rows[0]["status"], "active");
    assert_eq!(rows[0]["type"], "test");
    assert_eq!(rows[0]["progress"]["tasks_completed"], 1);
    assert_eq!(rows[0]["progress"]["tasks_total"], 2);
    assert_eq!(rows[0]["location"], "active");
    assert_eq!(rows[0]["path"], ".workflow/active/WFS-test-alpha");

    let out = env
        .wfx()
        .args(["session", "list", "--all", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let ids: Vec<_> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["location"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        vec![
            ("WFS-test-alpha".into(), "active".into()),
            ("WFS-test-beta".into(), "archived".into())
        ]
    );

    env.wfx()
        .args(["session", "list", "--all"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("WFS-test-alpha")
                .and(predicate::str::contains("1/2"))
                .and(predicate::str::contains("archived")),
        );
}

#[test]
fn show_prints_tasks_and_unknown_id_is_exit_2() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "active",
        &[("IMPL-001", "completed")],
    );
    env.wfx()
        .args(["session", "show", "WFS-test-alpha"])
        .assert()
        .success()
        .stdout(predicate::str::contains("IMPL-001").and(predicate::str::contains("completed")));
    env.wfx()
        .args(["session", "show", "WFS-nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("WFS-nope"));
}

#[test]
fn hostile_ids_are_rejected_before_any_path_is_built() {
    let env = Env::new();
    for id in ["WFS-../../etc", "/etc/passwd", "", "WFS-a/b", "WFS-"] {
        env.wfx()
            .args(["session", "show", id])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("invalid session id"));
        env.wfx().args(["session", "complete", id]).assert().code(2);
    }
    assert!(
        !env.root.join(".workflow").exists(),
        "nothing may be created for a rejected id"
    );
}

#[test]
fn complete_archives_and_writes_one_manifest_entry() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "active",
        &[("IMPL-001", "completed"), ("IMPL-002", "completed")],
    );
    env.wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .assert()
        .success();
    assert!(!env.root.join(".workflow/active/WFS-test-alpha").exists());
    assert!(
        env.root
            .join(".workflow/archives/WFS-test-alpha/workflow-session.json")
            .is_file()
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&env.read(".workflow/archives/manifest.json")).unwrap();
    // CCW's shape: an array of {session_id, …} (DESIGN.md §10.6).
    let entries = manifest.as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["session_id"], "WFS-test-alpha");
    assert_eq!(entries[0]["type"], "test");
    assert!(entries[0]["lessons"].is_object());
    assert_eq!(
        entries[0]["archive_path"],
        ".workflow/archives/WFS-test-alpha"
    );
    assert_eq!(entries[0]["metrics"]["tasks_total"], 2);
    assert_eq!(entries[0]["metrics"]["tasks_completed"], 2);
    // Completing again finds it archived and adds nothing.
    env.wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .assert()
        .success();
    let manifest: serde_json::Value =
        serde_json::from_str(&env.read(".workflow/archives/manifest.json")).unwrap();
    assert_eq!(manifest.as_array().unwrap().len(), 1);
}

#[test]
fn interrupted_archive_is_finished_by_the_next_call() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "completed",
        &[("IMPL-001", "completed")],
    );
    // Simulate a crash after the move and before the manifest write.
    std::fs::create_dir_all(env.root.join(".workflow/archives")).unwrap();
    std::fs::rename(
        env.root.join(".workflow/active/WFS-test-alpha"),
        env.root.join(".workflow/archives/WFS-test-alpha"),
    )
    .unwrap();
    assert!(!env.root.join(".workflow/archives/manifest.json").exists());
    env.wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .assert()
        .success();
    env.wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .assert()
        .success();
    let manifest: serde_json::Value =
        serde_json::from_str(&env.read(".workflow/archives/manifest.json")).unwrap();
    let ids: Vec<_> = manifest
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].clone())
        .collect();
    assert_eq!(ids, vec![serde_json::json!("WFS-test-alpha")]);
}

#[test]
fn complete_without_id_and_several_sessions_lists_them_and_exits_2() {
    let env = Env::new();
    make_session(&env, "WFS-test-alpha", "active", &[]);
    make_session(&env, "WFS-test-beta", "active", &[]);
    env.wfx()
        .args(["session", "complete"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("WFS-test-alpha")
                .and(predicate::str::contains("WFS-test-beta")),
        );
    assert!(env.root.join(".workflow/active/WFS-test-alpha").is_dir());
    assert!(env.root.join(".workflow/active/WFS-test-beta").is_dir());
}

/// Set a hand-made session's `updated_at`.
fn touch(env: &Env, dir: &str, updated_at: &str) {
    let rel = format!("{dir}/workflow-session.json");
    let mut v: serde_json::Value = serde_json::from_str(&env.read(&rel)).unwrap();
    v["updated_at"] = serde_json::json!(updated_at);
    env.write(&rel, &serde_json::to_string_pretty(&v).unwrap());
}

fn picked(env: &Env, args: &[&str]) -> String {
    let out = env.wfx().arg("--json").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["session_id"]
        .as_str()
        .or_else(|| v["session"]["session_id"].as_str())
        .unwrap()
        .to_string()
}

#[test]
fn views_without_an_id_take_the_one_active_session_else_the_latest() {
    let env = Env::new();
    // Nothing at all: the message says what to do, with a real command.
    env.wfx()
        .args(["status"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "wfx test-fix-gen \"<description>\"",
        ));
    make_session(&env, "WFS-test-old", "completed", &[]);
    make_session(&env, "WFS-test-alpha", "active", &[]);
    make_session(&env, "WFS-test-beta", "paused", &[]);
    touch(
        &env,
        ".workflow/active/WFS-test-old",
        "2026-03-01T00:00:00Z",
    );
    touch(
        &env,
        ".workflow/active/WFS-test-alpha",
        "2026-02-01T00:00:00Z",
    );
    touch(
        &env,
        ".workflow/active/WFS-test-beta",
        "2026-01-15T00:00:00Z",
    );
    env.wfx()
        .args(["session", "complete", "WFS-test-old"])
        .assert()
        .success();
    touch(
        &env,
        ".workflow/archives/WFS-test-old",
        "2026-03-01T00:00:00Z",
    );
    // Several active: the most recently updated of all, archived included.
    for args in [&["status"][..], &["session", "show"]] {
        assert_eq!(picked(&env, args), "WFS-test-old", "{args:?}");
    }
    touch(
        &env,
        ".workflow/active/WFS-test-beta",
        "2026-04-01T00:00:00Z",
    );
    assert_eq!(picked(&env, &["status"]), "WFS-test-beta");
    let out = env.root.join("r.html");
    let r = picked(&env, &["report", "--html", out.to_str().unwrap()]);
    assert_eq!(r, "WFS-test-beta");
    // One active session: that one, however old.
    env.wfx()
        .args(["session", "complete", "WFS-test-beta"])
        .assert()
        .success();
    touch(
        &env,
        ".workflow/archives/WFS-test-beta",
        "2026-05-01T00:00:00Z",
    );
    assert_eq!(picked(&env, &["status"]), "WFS-test-alpha");
    assert_eq!(picked(&env, &["session", "show"]), "WFS-test-alpha");
    // None active any more (the state after a completed run, where status
    // used to exit 2): the latest, here the one archived just now.
    env.wfx()
        .args(["session", "complete", "WFS-test-alpha"])
        .assert()
        .success();
    assert_eq!(picked(&env, &["status"]), "WFS-test-alpha");
}

#[test]
fn resume_reactivates_paused_sessions_only() {
    let env = Env::new();
    make_session(&env, "WFS-test-alpha", "awaiting_fix", &[]);
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .success();
    let s: serde_json::Value =
        serde_json::from_str(&env.read(".workflow/active/WFS-test-alpha/workflow-session.json"))
            .unwrap();
    assert_eq!(s["status"], "active");
    assert!(s["resumed_at"].is_string());
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is active"));
}

#[test]
fn corrupted_json_is_exit_2_with_pointer_and_left_byte_identical() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "paused", &[("IMPL-001", "pending")]);
    let session_file = dir.join("workflow-session.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&session_file).unwrap()).unwrap();
    v["status"] = serde_json::json!("sleeping");
    v["my_note"] = serde_json::json!("keep me");
    let bytes = serde_json::to_vec_pretty(&v).unwrap();
    std::fs::write(&session_file, &bytes).unwrap();

    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            ".workflow/active/WFS-test-alpha/workflow-session.json: /status:",
        ));
    assert_eq!(std::fs::read(&session_file).unwrap(), bytes);

    env.wfx()
        .args(["validate", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("workflow-session.json: /status:"))
        // Every allowed value, not "or 10 other candidates" (issue #20).
        .stdout(predicate::str::contains(
            "/status: \"sleeping\" is not one of \"planning\", \"active\", \"paused\", \"awaiting_fix\", \"completed\", \"partial_success\", \"blocked\", \"abandoned\", \"initialized\", \"in_progress\", \"implementing\", \"reviewing\" or \"archived\"\n",
        ));

    // Truncated JSON in a task file.
    let task_file = dir.join(".task/IMPL-001.json");
    std::fs::write(&task_file, b"{\"id\": \"IMPL-001\", \"tit").unwrap();
    env.wfx()
        .args(["validate", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            ".task/IMPL-001.json: /: invalid JSON at line 1",
        ));
    assert_eq!(
        std::fs::read(&task_file).unwrap(),
        b"{\"id\": \"IMPL-001\", \"tit"
    );
}

#[test]
fn unknown_fields_survive_a_wfx_rewrite() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "paused", &[]);
    let session_file = dir.join("workflow-session.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&session_file).unwrap()).unwrap();
    v["reviewer"] = serde_json::json!({"name": "ana", "approved": true});
    v["git"]["remote"] = serde_json::json!("origin");
    std::fs::write(&session_file, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .success();
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&session_file).unwrap()).unwrap();
    assert_eq!(after["status"], "active");
    assert_eq!(
        after["reviewer"],
        serde_json::json!({"name": "ana", "approved": true})
    );
    assert_eq!(after["git"]["remote"], "origin");
}

#[test]
fn validate_reports_duplicate_task_ids_naming_both_files() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "active", &[("IMPL-001", "pending")]);
    std::fs::copy(
        dir.join(".task/IMPL-001.json"),
        dir.join(".task/IMPL-001-copy.json"),
    )
    .unwrap();
    env.wfx()
        .args(["validate", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stdout(
            predicate::str::contains("duplicate task id IMPL-001")
                .and(predicate::str::contains("IMPL-001.json")),
        );
    env.wfx()
        .args(["status", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("IMPL-001-copy.json")
                .and(predicate::str::contains("IMPL-001.json")),
        );
}

#[test]
fn validate_accepts_a_valid_session_and_a_single_file() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "active", &[("IMPL-001", "pending")]);
    env.wfx()
        .args(["validate", "WFS-test-alpha"])
        .assert()
        .success()
        .stdout("");
    env.wfx()
        .arg("validate")
        .arg(dir.join(".task/IMPL-001.json"))
        .assert()
        .success();
    env.wfx().args(["validate"]).assert().success();
    env.wfx()
        .args(["validate", "nonexistent.json"])
        .assert()
        .code(2);
}

#[test]
fn a_second_process_on_a_locked_session_exits_2_naming_the_holder() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "paused", &[]);
    let lock =
        wfx::session::store::SessionLock::acquire(&dir.join(".lock"), "WFS-test-alpha").unwrap();
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "wfx process {}",
            std::process::id()
        )));
    drop(lock);
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .success();
}

#[test]
fn status_shows_phases_tasks_and_next_command() {
    let env = Env::new();
    make_session(
        &env,
        "WFS-test-alpha",
        "active",
        &[("IMPL-001", "completed"), ("IMPL-002", "in_progress")],
    );
    env.wfx().args(["status"]).assert().success().stdout(
        predicate::str::contains("session_start")
            .and(predicate::str::contains("IMPL-002"))
            .and(predicate::str::contains(
                "wfx test-cycle-execute --resume-session=WFS-test-alpha",
            )),
    );
    let out = env
        .wfx()
        .args(["status", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["session_id"], "WFS-test-alpha");
    assert_eq!(v["tasks"].as_array().unwrap().len(), 2);
}

#[test]
fn project_root_flag_and_git_discovery() {
    let env = Env::new();
    env.git(&["init", "-q"]);
    make_session(&env, "WFS-test-alpha", "active", &[]);
    let sub = env.root.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    env.wfx()
        .current_dir(&sub)
        .args(["session", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("WFS-test-alpha"));
    env.wfx()
        .current_dir(env.tmp.path())
        .args(["-C", env.root.to_str().unwrap(), "session", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("WFS-test-alpha"));
    env.wfx()
        .args(["-C", "/nonexistent/dir", "session", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--project-root"));
}

#[test]
fn json_errors_stay_json_and_completions_work() {
    let env = Env::new();
    let out = env
        .wfx()
        .args(["--json", "session", "show", "WFS-nope"])
        .assert()
        .code(2)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["error"]["exit_code"], 2);
    env.wfx()
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("_wfx"));
    env.wfx()
        .args(["completions", "nosuchshell"])
        .assert()
        .code(2);
    env.wfx().args(["--no-such-flag"]).assert().code(2);
}

#[test]
fn a_lock_left_by_a_killed_process_is_taken_over() {
    let env = Env::new();
    let dir = make_session(&env, "WFS-test-alpha", "paused", &[]);
    let lock_path = dir.join(".lock");
    std::fs::write(
        &lock_path,
        r#"{"pid":999999,"since":"2026-01-01T00:00:00Z","child_pgid":null}"#,
    )
    .unwrap();
    // flock(1) takes the same kind of lock wfx uses; then its whole process
    // group is killed with SIGKILL, as a crashed wfx run would be.
    use std::os::unix::process::CommandExt;
    let mut holder = std::process::Command::new("flock")
        .arg(&lock_path)
        .args(["sleep", "60"])
        .process_group(0)
        .spawn()
        .expect("flock(1) is installed");
    std::thread::sleep(std::time::Duration::from_millis(300));
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .code(2);
    let pgid = holder.id().to_string();
    std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    holder.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    env.wfx()
        .args(["session", "resume", "WFS-test-alpha"])
        .assert()
        .success();
}
