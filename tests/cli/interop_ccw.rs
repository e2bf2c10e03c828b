//! wfx next to Claude-Code-Workflow (CCW) in one `.workflow/` (DESIGN.md
//! §10.6, docs/interop.md), both directions:
//! - wfx reads the sessions of `fixtures/ccw/` (written as CCW's templates
//!   and writers write them): lists them as foreign, never picks them,
//!   validates around them, plans tests for them in session mode, and
//!   archives next to CCW's array manifest;
//! - CCW's writers (`ccw session task`, `status`, `archive`; their effect
//!   reproduced here from `ccw/src/commands/session.ts` and
//!   `ccw/src/tools/session-manager.ts` at 07491b04, since CCW is not on
//!   the npm registry) leave wfx sessions readable, and wfx's sessions keep
//!   the shapes CCW reads (file name = task id, `project`, the manifest
//!   array, status values CCW labels).

use crate::common;

use std::path::Path;

use common::{Env, copy_dir, empty_path, tree};
use predicates::prelude::*;
use serde_json::{Value, json};

const CCW: &str = "fixtures/ccw/workflow";

fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CCW)
}

/// py-calc with CCW's sessions (and a Maestro-Flow tree) in `.workflow/`.
fn ccw_project() -> Env {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    copy_dir(&fixture_dir(), &env.root.join(".workflow"));
    env.git_init_commit();
    env
}

fn read_json(env: &Env, rel: &str) -> Value {
    serde_json::from_str(&env.read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `wfx --json ARGS`, expecting exit 0.
fn wfx_json(env: &Env, args: &[&str]) -> Value {
    let out = env
        .wfx()
        .env("PATH", empty_path(env))
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "wfx {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn wfx(env: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    env.wfx().env("PATH", empty_path(env)).args(args).assert()
}

fn rows_by_id(list: &Value) -> std::collections::BTreeMap<String, Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

/// CCW's `writeJsonFile`: `JSON.stringify(data, null, 2)`.
fn ccw_write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// `ccw session <id> task <task> <status>` (session.ts `taskAction`): read
/// `.task/<task>.json` (missing: `{}` and old status "unknown"), then the
/// session manager's `update`, a shallow merge of `{status, updated_at,
/// status_history: [...old, {from, to, changed_at}]}` into that path.
fn ccw_session_task(session_dir: &Path, task: &str, status: &str, now: &str) {
    let path = session_dir.join(".task").join(format!("{task}.json"));
    let current: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    let old = current["status"].as_str().unwrap_or("unknown").to_string();
    let mut history = current["status_history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    history.push(json!({"from": old, "to": status, "changed_at": now}));
    let mut merged = current.as_object().cloned().unwrap_or_default();
    merged.insert("status".into(), json!(status));
    merged.insert("updated_at".into(), json!(now));
    merged.insert("status_history".into(), Value::Array(history));
    ccw_write(&path, &Value::Object(merged));
}

/// `ccw session <id> status <status>` (session.ts `statusAction`): shallow
/// merge of `{status, updated_at}` into `workflow-session.json`.
fn ccw_session_status(session_dir: &Path, status: &str, now: &str) {
    let path = session_dir.join("workflow-session.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["status"] = json!(status);
    v["updated_at"] = json!(now);
    ccw_write(&path, &v);
}

/// `ccw session <id> archive` (session-manager.ts `executeArchive`, with
/// its default `update_status: true`): `status: "completed"` and
/// `archived_at` in `workflow-session.json`, every task not completed set
/// to completed with `completed_at`, then the directory renamed into
/// `archives/`. It writes no manifest entry.
fn ccw_session_archive(env: &Env, id: &str, now: &str) {
    let dir = env.root.join(".workflow/active").join(id);
    let path = dir.join("workflow-session.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["status"] = json!("completed");
    v["archived_at"] = json!(now);
    ccw_write(&path, &v);
    for entry in std::fs::read_dir(dir.join(".task")).unwrap() {
        let p = entry.unwrap().path();
        let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        if t["status"].is_string() && t["status"] != "completed" {
            t["status"] = json!("completed");
            t["completed_at"] = json!(now);
            ccw_write(&p, &t);
        }
    }
    std::fs::create_dir_all(env.root.join(".workflow/archives")).unwrap();
    std::fs::rename(&dir, env.root.join(".workflow/archives").join(id)).unwrap();
}

/// The session statuses CCW's dashboard labels (frontend `SessionCard.tsx`
/// `statusLabelKeys`) plus `active`, which its API maps to `in_progress`.
const CCW_LABELLED: [&str; 6] = [
    "planning",
    "in_progress",
    "completed",
    "archived",
    "paused",
    "active",
];

#[test]
fn ccw_sessions_are_listed_as_foreign_and_never_picked_or_changed() {
    let env = ccw_project();
    let before = tree(&env.root.join(".workflow"));

    let rows = rows_by_id(&wfx_json(&env, &["session", "list", "--all"]));
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        [
            "WFS------",
            "WFS--auth--fix",
            "WFS-harden-auth-checks",
            "WFS-test-validation-for-wfs-harden-auth-checks--harden",
            "WFS-user-login",
        ],
        "Maestro-Flow's .workflow/sessions/ is not wfx's and not CCW's session tree"
    );
    for (id, row) in &rows {
        assert_eq!(row["foreign"], true, "{id}");
    }
    let r = &rows["WFS-harden-auth-checks"];
    assert_eq!(
        (&r["type"], &r["status"], &r["description"]),
        (
            &json!("workflow"),
            &json!("implementing"),
            &json!("harden auth checks")
        )
    );
    // completed + cancelled are done; active is not.
    assert_eq!(
        r["progress"],
        json!({"tasks_completed": 2, "tasks_total": 3})
    );
    let r = &rows["WFS------"];
    assert_eq!(
        (&r["status"], &r["description"]),
        (&json!("-"), &json!("修复登录页"))
    );
    assert_eq!(rows["WFS--auth--fix"]["type"], "implementation");
    assert_eq!(rows["WFS-user-login"]["location"], "archived");

    wfx(&env, &["session", "list", "--all"])
        .success()
        .stdout(predicate::str::contains("workflow (foreign)"))
        .stderr(predicate::str::contains("5 foreign sessions"));

    // validate checks wfx's files only, and says what it skipped.
    wfx(&env, &["validate"])
        .success()
        .stderr(predicate::str::contains("skipped 5 foreign sessions"));
    let v = wfx_json(&env, &["validate"]);
    assert_eq!(v["foreign_sessions_skipped"], 5);
    assert_eq!(v["problems"], json!([]));
    assert_eq!(v["files"], 1, "CCW's manifest is checked and valid");
    wfx(&env, &["validate", "WFS-harden-auth-checks"])
        .code(2)
        .stderr(predicate::str::contains("was not made by wfx"));

    // Nothing implicit ever lands on a foreign session.
    wfx(&env, &["status"]).code(2).stderr(predicate::str::contains(
        "no wfx session in .workflow (5 sessions in .workflow were made by other tools; wfx never picks them)",
    ));
    wfx(&env, &["report", "--html", "r.html"]).code(2);
    wfx(&env, &["session", "show"]).code(2);
    wfx(&env, &["test-cycle-execute", "-y"])
        .code(2)
        .stderr(predicate::str::contains(
            "no active session in .workflow/active (4 sessions",
        ));
    wfx(&env, &["session", "complete"]).code(2);
    // Named explicitly: shown leniently, refused where wfx would write.
    wfx(&env, &["session", "show", "WFS------"])
        .success()
        .stdout(predicate::str::contains("foreign").and(predicate::str::contains("修复登录页")));
    wfx(&env, &["status", "WFS-harden-auth-checks"])
        .code(2)
        .stderr(predicate::str::contains(
            "wfx test-fix-gen WFS-harden-auth-checks",
        ));
    wfx(&env, &["session", "complete", "WFS-harden-auth-checks"])
        .code(2)
        .stderr(predicate::str::contains("not made by wfx"));
    wfx(
        &env,
        &[
            "test-cycle-execute",
            "--resume-session=WFS-test-validation-for-wfs-harden-auth-checks--harden",
        ],
    )
    .code(2)
    .stderr(predicate::str::contains("was not made by wfx"));
    // CCW's own test session is a source, not a wfx session to resume: it
    // has nothing implemented, so there is nothing to plan tests for.
    wfx(
        &env,
        &[
            "test-fix-gen",
            "WFS-test-validation-for-wfs-harden-auth-checks--harden",
            "--plan-only",
        ],
    )
    .code(2)
    .stderr(predicate::str::contains("has no completed tasks"));

    assert_eq!(
        tree(&env.root.join(".workflow")),
        before,
        "a foreign file changed"
    );
}

#[test]
fn session_mode_reads_ccw_sources_as_ccw_writes_them() {
    let env = ccw_project();
    // Flat tasks, Windows and absolute paths with a line number.
    wfx(
        &env,
        &["test-fix-gen", "WFS-harden-auth-checks", "--plan-only"],
    )
    .success();
    let dir = ".workflow/active/WFS-test-harden-auth-checks";
    let s = read_json(&env, &format!("{dir}/workflow-session.json"));
    assert_eq!(s["source_session_id"], "WFS-harden-auth-checks");
    assert_eq!(
        s["description"],
        "Tests for WFS-harden-auth-checks: harden auth checks"
    );
    assert_eq!(s["project"], s["description"]);
    assert_eq!(s["status"], "planning");
    let pkg = read_json(&env, &format!("{dir}/.process/test-context-package.json"));
    let sc = &pkg["source_context"];
    assert_eq!(sc["completed_tasks"], json!(["IMPL-001"]));
    assert_eq!(
        sc["changed_files"],
        json!(["calc/auth.py", "tests/test_auth.py"])
    );
    assert_eq!(
        sc["implementation_summaries"][0]["changed_files"],
        json!(["calc/auth.py", "tests/test_auth.py"])
    );
    // CCW finds the package where it looks.
    assert_eq!(
        read_json(&env, &format!("{dir}/.process/context-package.json")),
        pkg
    );

    // An id from a non-ASCII description; nested tasks with a subtask.
    wfx(&env, &["test-fix-gen", "WFS------", "--plan-only"]).success();
    let s = read_json(&env, ".workflow/active/WFS-test/workflow-session.json");
    assert_eq!(s["source_session_id"], "WFS------");
    assert_eq!(s["description"], "Tests for WFS------: 修复登录页");
    let pkg = read_json(
        &env,
        ".workflow/active/WFS-test/.process/test-context-package.json",
    );
    assert_eq!(
        pkg["source_context"]["completed_tasks"],
        json!(["IMPL-001", "IMPL-001.1"])
    );
    assert_eq!(
        pkg["source_context"]["changed_files"],
        json!(["calc/ops.py"])
    );

    // workflow_type without type, summaries only, an absolute POSIX path.
    wfx(&env, &["test-fix-gen", "WFS--auth--fix", "--plan-only"]).success();
    let pkg = read_json(
        &env,
        ".workflow/active/WFS-test-auth-fix/.process/test-context-package.json",
    );
    assert_eq!(
        pkg["source_context"]["changed_files"],
        json!(["calc/auth.py"])
    );

    // wfx's three sessions next to CCW's five.
    let rows = rows_by_id(&wfx_json(&env, &["session", "list", "--all"]));
    let own: Vec<&String> = rows
        .iter()
        .filter(|(_, r)| r["foreign"] == false)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(
        own,
        [
            "WFS-test",
            "WFS-test-auth-fix",
            "WFS-test-harden-auth-checks"
        ]
    );
    wfx(&env, &["validate"])
        .success()
        .stderr(predicate::str::contains("skipped 5 foreign sessions"));
    // Several active wfx sessions: the cycle asks, naming only wfx's.
    wfx(&env, &["test-cycle-execute"]).code(2).stderr(
        predicate::str::contains("several active sessions; name one (or pass -y")
            .and(predicate::str::contains("WFS-test-auth-fix"))
            .and(predicate::str::contains("  WFS-harden-auth-checks").not()),
    );
    // status without an id: the most recently updated wfx session.
    let st = wfx_json(&env, &["status"]);
    assert_eq!(st["session_id"], "WFS-test-auth-fix");
    assert_eq!(
        st["next_command"],
        "wfx test-cycle-execute --resume-session=WFS-test-auth-fix"
    );
}

#[test]
fn wfx_archives_next_to_ccw_s_manifest_and_keeps_its_shapes() {
    let env = ccw_project();
    let ccw_entry = read_json(&env, ".workflow/archives/manifest.json")[0].clone();
    wfx(
        &env,
        &["test-fix-gen", "Test the calculator", "--plan-only"],
    )
    .success();
    let id = "WFS-test-the-calculator";
    let active = format!(".workflow/active/{id}");

    // What CCW reads of a wfx session: file name = task id (its session
    // manager derives `.task/{task_id}.json`), `project`, a status it
    // labels, `type: "test"`.
    let mut names = Vec::new();
    for entry in std::fs::read_dir(env.root.join(&active).join(".task")).unwrap() {
        let p = entry.unwrap().path();
        let t = read_json(
            &env,
            &format!(
                "{active}/.task/{}",
                p.file_name().unwrap().to_string_lossy()
            ),
        );
        assert_eq!(
            p.file_stem().unwrap().to_string_lossy(),
            t["id"].as_str().unwrap()
        );
        names.push(p.file_name().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "IMPL-001.3.json",
            "IMPL-001.5.json",
            "IMPL-001.json",
            "IMPL-002.json"
        ]
    );
    let s = read_json(&env, &format!("{active}/workflow-session.json"));
    assert_eq!(s["project"], "Test the calculator");
    assert_eq!(s["type"], "test");
    assert!(
        CCW_LABELLED.contains(&s["status"].as_str().unwrap()),
        "{}",
        s["status"]
    );
    let mentions_active = |dir: &str| {
        tree(&env.root.join(dir))
            .values()
            .any(|b| String::from_utf8_lossy(b).contains(&format!(".workflow/active/{id}")))
    };
    assert!(mentions_active(&active), "the plan names its own files");

    // Status without an id: the one active wfx session, not CCW's.
    assert_eq!(wfx_json(&env, &["status"])["session_id"], id);

    wfx(&env, &["session", "complete", id]).success();
    let archived = format!(".workflow/archives/{id}");
    let manifest = read_json(&env, ".workflow/archives/manifest.json");
    let entries = manifest.as_array().expect("CCW's array shape");
    assert_eq!(entries.len(), 2);
    assert_eq!(
        entries[0], ccw_entry,
        "CCW's entry is written back as it was"
    );
    let e = &entries[1];
    assert_eq!(e["session_id"], id);
    assert_eq!(e["description"], "Test the calculator");
    assert_eq!(e["archive_path"], archived);
    assert_eq!(e["type"], "test");
    // Archived before phase 5 ran: it stays what it was (issue #20 item 12).
    assert_eq!(e["status"], "planning");
    assert_eq!(e["metrics"]["tasks_total"], 4);
    assert!(e["metrics"]["duration_hours"].is_number());
    assert!(e["metrics"]["final_pass_rate"].is_null());
    assert!(e["lessons"]["successes"].is_array());
    assert!(e["archived_at"].as_str().unwrap().ends_with('Z'));
    let s = read_json(&env, &format!("{archived}/workflow-session.json"));
    assert_eq!(s["status"], "planning");
    assert!(s["archived_at"].is_string());
    assert!(
        !mentions_active(&archived),
        "a path still points into active/"
    );
    assert!(
        env.read(&format!("{archived}/TODO_LIST.md"))
            .contains("./.task/IMPL-001.3.json")
    );

    // After completion, status and report without an id take the latest
    // session, archived ones included.
    assert_eq!(wfx_json(&env, &["status"])["session_id"], id);
    wfx(&env, &["session", "show"])
        .success()
        .stdout(predicate::str::contains(id));
    wfx(&env, &["report", "--html", "report.html"]).success();
    wfx(&env, &["validate"]).success();
}

#[test]
fn the_old_manifest_object_becomes_the_array_without_losing_anything() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let old = json!({
        "sessions": [{"id": "WFS-test-old", "description": "Old", "archived_at": "2026-01-01T00:00:00Z",
                      "archive_path": ".workflow/archives/WFS-test-old", "status": "completed",
                      "metrics": {"tasks_total": 4, "tasks_completed": 4, "iterations": 2, "final_pass_rate": 100.0}}],
        "note": "kept by hand"
    });
    let text = serde_json::to_string_pretty(&old).unwrap();
    env.write(".workflow/archives/manifest.json", &text);
    env.git_init_commit();
    wfx(&env, &["validate"]).success();
    wfx(
        &env,
        &["test-fix-gen", "Test the calculator", "--plan-only"],
    )
    .success();
    wfx(&env, &["session", "complete", "WFS-test-the-calculator"]).success();
    let m = read_json(&env, ".workflow/archives/manifest.json");
    let ids: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["WFS-test-old", "WFS-test-the-calculator"]);
    assert_eq!(m[0]["metrics"]["final_pass_rate"], 100.0);
    assert_eq!(env.read(".workflow/archives/manifest.v0.json"), text);
}

#[test]
fn ccw_writers_leave_wfx_sessions_readable() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    wfx(
        &env,
        &["test-fix-gen", "Test the calculator", "--plan-only"],
    )
    .success();
    wfx(
        &env,
        &["test-fix-gen", "Test the auth module", "--plan-only"],
    )
    .success();
    let a = env.root.join(".workflow/active/WFS-test-the-calculator");
    let b = env.root.join(".workflow/active/WFS-test-the-auth-module");

    // On wfx's own file names CCW's writers merge into the task itself.
    ccw_session_task(&a, "IMPL-001.3", "cancelled", "2030-01-01T00:00:00.000Z");
    ccw_session_task(&a, "IMPL-001", "active", "2030-01-01T00:00:01.000Z");
    ccw_session_status(&a, "implementing", "2030-01-01T00:00:02.000Z");
    wfx(&env, &["validate", "WFS-test-the-calculator"]).success();
    let st = wfx_json(&env, &["status", "WFS-test-the-calculator"]);
    assert_eq!(st["status"], "implementing");
    let status_of = |st: &Value, id: &str| {
        st["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status_of(&st, "IMPL-001.3"), "cancelled");
    assert_eq!(status_of(&st, "IMPL-001"), "active");
    let rows = rows_by_id(&wfx_json(&env, &["session", "list"]));
    assert_eq!(rows["WFS-test-the-calculator"]["status"], "implementing");
    assert_eq!(
        rows["WFS-test-the-calculator"]["progress"]["tasks_completed"],
        1
    );

    // A session wfx 0.1 made: the gate tasks under their old names. CCW's
    // task writer then leaves a stub beside the old file.
    std::fs::rename(
        b.join(".task/IMPL-001.3.json"),
        b.join(".task/IMPL-001.3-validation.json"),
    )
    .unwrap();
    std::fs::rename(
        b.join(".task/IMPL-001.5.json"),
        b.join(".task/IMPL-001.5-review.json"),
    )
    .unwrap();
    ccw_session_task(&b, "IMPL-001.3", "completed", "2030-01-01T00:00:03.000Z");
    let stub = read_json(
        &env,
        ".workflow/active/WFS-test-the-auth-module/.task/IMPL-001.3.json",
    );
    assert!(stub.get("id").is_none() && stub["status_history"][0]["from"] == "unknown");
    wfx(&env, &["validate", "WFS-test-the-auth-module"]).success();
    let st = wfx_json(&env, &["status", "WFS-test-the-auth-module"]);
    assert_eq!(status_of(&st, "IMPL-001.3"), "completed");
    assert_eq!(st["tasks"].as_array().unwrap().len(), 4);
    // The next wfx write folds the stub in: one file, named by the id.
    wfx(&env, &["session", "complete", "WFS-test-the-auth-module"]).success();
    let archived = ".workflow/archives/WFS-test-the-auth-module/.task";
    assert!(
        !env.root
            .join(archived)
            .join("IMPL-001.3-validation.json")
            .exists()
    );
    let t = read_json(&env, &format!("{archived}/IMPL-001.3.json"));
    assert_eq!(
        (&t["id"], &t["status"]),
        (&json!("IMPL-001.3"), &json!("completed"))
    );
    assert_eq!(t["status_history"][0]["from"], "pending");
    assert!(
        env.root
            .join(archived)
            .join("IMPL-001.5-review.json")
            .exists()
    );

    // `ccw session archive` on a wfx session: moved, statuses set, no
    // manifest entry. wfx reads it and adds the entry when asked.
    ccw_session_archive(&env, "WFS-test-the-calculator", "2030-01-02T00:00:00.000Z");
    wfx(&env, &["validate"]).success();
    let rows = rows_by_id(&wfx_json(&env, &["session", "list", "--all"]));
    let r = &rows["WFS-test-the-calculator"];
    assert_eq!(
        (&r["location"], &r["status"], &r["foreign"]),
        (&json!("archived"), &json!("completed"), &json!(false))
    );
    assert_eq!(r["progress"]["tasks_completed"], 4);
    wfx(&env, &["session", "complete", "WFS-test-the-calculator"]).success();
    let m = read_json(&env, ".workflow/archives/manifest.json");
    let ids: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["WFS-test-the-auth-module", "WFS-test-the-calculator"]);
    let s = read_json(
        &env,
        ".workflow/archives/WFS-test-the-calculator/workflow-session.json",
    );
    assert_eq!(
        s["archived_at"], "2030-01-02T00:00:00.000Z",
        "CCW's archived_at is kept"
    );
}

/// Files CCW's real `ccw session` code wrote on a wfx session
/// (fixtures/ccw/recorded/, see its README) read back and settle.
#[test]
fn files_the_real_ccw_wrote_on_a_wfx_session_read_back() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    wfx(
        &env,
        &["test-fix-gen", "Test the calculator", "--plan-only"],
    )
    .success();
    let s = env.root.join(".workflow/active/WFS-test-the-calculator");
    let rec = fixture_dir().join("../recorded");
    let copy = |from: &str, to: &Path| std::fs::copy(rec.join(from), to).map(|_| ()).unwrap();
    copy(
        "workflow-session-implementing.json",
        &s.join("workflow-session.json"),
    );
    copy(
        "task-cancelled-IMPL-001.3.json",
        &s.join(".task/IMPL-001.3.json"),
    );
    std::fs::rename(
        s.join(".task/IMPL-001.5.json"),
        s.join(".task/IMPL-001.5-review.json"),
    )
    .unwrap();
    copy(
        "task-stub-IMPL-001.5.json",
        &s.join(".task/IMPL-001.5.json"),
    );

    wfx(&env, &["validate"]).success();
    let st = wfx_json(&env, &["status"]);
    assert_eq!(st["status"], "implementing");
    let task = |id: &str| {
        st["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(task("IMPL-001.3"), "cancelled");
    assert_eq!(task("IMPL-001.5"), "completed");
    assert_eq!(st["tasks"].as_array().unwrap().len(), 4);

    wfx(&env, &["session", "complete"]).success();
    let dir = ".workflow/archives/WFS-test-the-calculator/.task";
    let t = read_json(&env, &format!("{dir}/IMPL-001.5.json"));
    assert_eq!(
        (&t["id"], &t["status"]),
        (&json!("IMPL-001.5"), &json!("completed"))
    );
    assert!(!env.root.join(dir).join("IMPL-001.5-review.json").exists());
    let t = read_json(&env, &format!("{dir}/IMPL-001.3.json"));
    assert_eq!(t["status"], "cancelled", "CCW's value is kept");
}
