//! Git checkpoints (DESIGN.md §5.5, issue #5) against real repositories in
//! hermetic temp dirs. Every effect is checked with the `git` command line,
//! never with git2 itself.

use crate::common;

use std::path::Path;

use common::{Env, git_in, hermetic_libgit2};
use wfx::git::{
    Change, ChangeKind, Checkpoints, CommitKind, CommitOutcome, Identity, Trailers, change_paths,
};
use wfx::session::layout::SESSION_GITIGNORE;

const SID: &str = "WFS-test-auth";
const SESSION: &str = ".workflow/active/WFS-test-auth";
/// 2026-01-01T00:00:00Z
const WHEN: i64 = 1_767_225_600;

const LIB_V1: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
const LIB_FIXED: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

fn open_at(root: &Path) -> Checkpoints {
    hermetic_libgit2();
    Checkpoints::open(root).unwrap().with_identity(Identity {
        name: "Wfx Test".into(),
        email: "wfx@example.invalid".into(),
        time: Some(WHEN),
    })
}

fn open(env: &Env) -> Checkpoints {
    open_at(&env.root)
}

fn fix(n: u32) -> Trailers {
    Trailers::new(SID, n, CommitKind::Fix)
}

fn rollback(n: u32) -> Trailers {
    Trailers::new(SID, n, CommitKind::Rollback)
}

fn fix_message(n: u32) -> String {
    format!("test-cycle: iteration {n} - conservative strategy (pass: 50.0% → 100.0%)")
}

const ROLLBACK_MESSAGE: &str =
    "test-cycle: rollback iteration 1 - regression detected (pass: 40.0% < 80.0%)";

fn change(path: &str, kind: ChangeKind) -> Change {
    Change {
        path: path.into(),
        kind,
        old_path: None,
    }
}

/// `git show --name-status` of one commit: `X\tpath` lines, unquoted.
fn name_status(env: &Env, rev: &str) -> Vec<String> {
    env.git(&[
        "-c",
        "core.quotepath=off",
        "show",
        "--no-renames",
        "--name-status",
        "--format=",
        rev,
    ])
    .lines()
    .filter(|l| !l.is_empty())
    .map(str::to_string)
    .collect()
}

/// `git status --porcelain` entries (`XY path`), unquoted, sorted.
fn status(env: &Env) -> Vec<String> {
    let out = env.git(&["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
    let mut lines: Vec<String> = out
        .split('\0')
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn commit_count(env: &Env) -> usize {
    env.git(&["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

fn rev(env: &Env, what: &str) -> String {
    env.git(&["rev-parse", what]).trim().to_string()
}

fn body(env: &Env, rev: &str) -> String {
    env.git(&["log", "-1", "--format=%B", rev])
}

/// A small project with one commit: a buggy library, a second source
/// file, user notes and a file the user will stage, plus a `.gitignore`.
fn project() -> Env {
    let env = Env::new();
    env.write("src/lib.rs", LIB_V1);
    env.write("src/other.rs", "pub fn other() -> &'static str {\n    \"a longer line so that renames are recognised\"\n}\n");
    env.write("notes.txt", "user notes\n");
    env.write("staged.txt", "v1\n");
    env.write(".gitignore", "target/\n*.tmp\n");
    env.git_init_commit();
    env
}

/// A session directory as phase 1 creates it, with its own `.gitignore`,
/// tracked artifacts and files that must never be committed.
fn write_session(env: &Env, iteration: u32) {
    env.write(&format!("{SESSION}/.gitignore"), SESSION_GITIGNORE);
    env.write(
        &format!("{SESSION}/workflow-session.json"),
        "{\"session_id\": \"WFS-test-auth\"}\n",
    );
    env.write(
        &format!("{SESSION}/.process/iteration-state.json"),
        &format!("{{\"current_iteration\": {iteration}}}\n"),
    );
    env.write(
        &format!("{SESSION}/.task/IMPL-fix-{iteration}.json"),
        "{\"id\": \"IMPL-fix\"}\n",
    );
    // Ignored by the session's .gitignore: never committed.
    env.write(&format!("{SESSION}/.process/test-output.log"), "log\n");
    env.write(
        &format!("{SESSION}/.process/iteration-{iteration}-cli-output.txt"),
        "agent said things\n",
    );
    env.write(
        &format!("{SESSION}/.process/analysis-agent-output.md"),
        "raw\n",
    );
    env.write(
        &format!("{SESSION}/.process/junit/report.xml"),
        "<testsuites/>\n",
    );
    env.write(&format!("{SESSION}/.lock"), "123\n");
    env.write(&format!("{SESSION}/.process/state.json.tmp"), "partial\n");
}

/// Session files a checkpoint commits (the non-ignored ones), as listed by
/// `git show --name-status` when added.
fn session_added(iteration: u32) -> Vec<String> {
    vec![
        format!("A\t{SESSION}/.gitignore"),
        format!("A\t{SESSION}/.process/iteration-state.json"),
        format!("A\t{SESSION}/.task/IMPL-fix-{iteration}.json"),
        format!("A\t{SESSION}/workflow-session.json"),
    ]
}

/// The user's own work in progress: an unstaged edit, a staged edit and an
/// untracked file. None of it may ever be committed or changed by wfx.
fn user_work(env: &Env) {
    env.write("notes.txt", "user notes\nhalf-written thought\n");
    env.write("staged.txt", "v2 staged by the user\n");
    env.git(&["add", "staged.txt"]);
    env.write("user-scratch.txt", "scratch\n");
}

/// `status()` of [`user_work`], in its byte order.
fn user_status() -> Vec<String> {
    vec![
        " M notes.txt".into(),
        "?? user-scratch.txt".into(),
        "M  staged.txt".into(),
    ]
}

fn assert_user_work_intact(env: &Env, cached_diff: &str, unstaged_diff: &str) {
    assert_eq!(env.read("notes.txt"), "user notes\nhalf-written thought\n");
    assert_eq!(env.read("staged.txt"), "v2 staged by the user\n");
    assert_eq!(env.read("user-scratch.txt"), "scratch\n");
    assert_eq!(
        env.git(&["diff", "--cached", "--", "staged.txt"]),
        cached_diff
    );
    assert_eq!(env.git(&["diff", "--", "notes.txt"]), unstaged_diff);
}

#[test]
fn dirty_paths_name_tracked_changes_outside_workflow_only() {
    let env = Env::new();
    env.write("src/lib.rs", LIB_V1);
    env.write("notes.txt", "notes\n");
    env.write("staged.txt", "v1\n");
    env.write(".workflow/active/WFS-old/workflow-session.json", "{}\n");
    env.git_init_commit();
    let cp = open(&env);
    assert!(cp.is_repo());
    assert!(cp.is_clean().unwrap());

    // Neither untracked files nor changes under .workflow/ count.
    env.write("untracked.txt", "new\n");
    env.write(
        ".workflow/active/WFS-old/workflow-session.json",
        "{\"x\": 1}\n",
    );
    env.write(".workflow/active/WFS-new/workflow-session.json", "{}\n");
    assert_eq!(cp.dirty_paths().unwrap(), Vec::<String>::new());
    assert!(cp.is_clean().unwrap());

    env.write("src/lib.rs", LIB_FIXED);
    env.write("staged.txt", "v2\n");
    env.git(&["add", "staged.txt"]);
    std::fs::remove_file(env.root.join("notes.txt")).unwrap();
    assert_eq!(
        cp.dirty_paths().unwrap(),
        vec!["notes.txt", "src/lib.rs", "staged.txt"]
    );
    assert!(!cp.is_clean().unwrap());
}

/// The excerpt of a fix's diff: a deleted file shows its removed lines, a
/// binary file is named and not shown, a long diff is cut with the rest
/// counted, and the stat counts the whole diff.
#[test]
fn the_diff_excerpt_is_bounded_and_names_binary_files() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    std::fs::remove_file(env.root.join("notes.txt")).unwrap();
    std::fs::write(
        env.root.join("logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\x01",
    )
    .unwrap();
    let long: String = (0..400).map(|i| format!("line {i}\n")).collect();
    env.write("zz-long.txt", &long);
    let diff = cp.diff_since(&snap).unwrap();
    let text = &diff.excerpt.text;
    assert!(
        text.starts_with(
            "diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n\
             diff --git a/notes.txt b/notes.txt\ndeleted file mode 100644\n--- a/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-user notes\n\
             diff --git a/zz-long.txt b/zz-long.txt\nnew file mode 100644\n--- /dev/null\n+++ b/zz-long.txt\n@@ -0,0 +1,400 @@\n+line 0\n"
        ),
        "{text}"
    );
    assert!(!text.contains("PNG"), "{text}");
    let shown = text.lines().count();
    assert_eq!(shown, wfx::artifacts::fix_history::DiffExcerpt::MAX_LINES);
    // 3 + 6 + 5 lines of headers and notes.txt, 400 added lines.
    assert_eq!(shown + diff.excerpt.omitted_lines as usize, 3 + 6 + 5 + 400);
    assert_eq!(
        (diff.stat.files, diff.stat.insertions, diff.stat.deletions),
        (3, 400, 1)
    );
}

/// Rewrite `rel` with `text` (same length as before) and give it back the
/// modification time it had: only its content and change time differ.
fn rewrite_keeping_mtime(env: &Env, rel: &str, text: &str) {
    let path = env.root.join(rel);
    let before = std::fs::metadata(&path).unwrap();
    assert_eq!(before.len(), text.len() as u64, "{rel}: same size");
    std::fs::write(&path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(before.modified().unwrap())
        .unwrap();
}

/// One handle takes every snapshot of a session, and the same content is
/// the same tree, not written again; but every edit an agent (or a test
/// run) can make between two snapshots is still seen: a same-size rewrite
/// that keeps the modification time, of a tracked and of an untracked
/// file, a file swapped for a link, and the tree object deleted from
/// `.git/objects` is written again. An ignored file changes nothing.
#[test]
fn snapshots_of_one_handle_see_every_edit_even_with_same_size_and_mtime() {
    let env = project();
    env.write("untracked.txt", "draft 1\n");
    let cp = open(&env);
    let first = cp.snapshot().unwrap().unwrap();
    assert_eq!(cp.snapshot().unwrap().unwrap(), first, "same content");

    rewrite_keeping_mtime(&env, "src/lib.rs", LIB_FIXED);
    rewrite_keeping_mtime(&env, "untracked.txt", "draft 2\n");
    let edited = cp.snapshot().unwrap().unwrap();
    assert_ne!(edited, first);
    assert_eq!(
        change_paths(&cp.changed_since(&first).unwrap()),
        ["src/lib.rs", "untracked.txt"]
    );

    // A file swapped for a link to a file with the same bytes.
    std::fs::write(env.root.join("copy.txt"), "user notes\n").unwrap();
    std::fs::remove_file(env.root.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink("copy.txt", env.root.join("notes.txt")).unwrap();
    let linked = cp.snapshot().unwrap().unwrap();
    assert_ne!(linked, edited);
    assert!(change_paths(&cp.changed_since(&edited).unwrap()).contains(&"notes.txt".to_string()));

    // Ignored: the same tree.
    env.write("scratch.tmp", "anything\n");
    assert_eq!(cp.snapshot().unwrap().unwrap(), linked);

    // The tree object removed behind wfx's back is written again.
    let object = env
        .root
        .join(".git/objects")
        .join(&linked[..2])
        .join(&linked[2..]);
    std::fs::remove_file(&object).unwrap();
    assert_eq!(cp.snapshot().unwrap().unwrap(), linked);
    assert_eq!(env.git(&["cat-file", "-t", &linked]).trim(), "tree");
    assert!(cp.changed_since(&linked).unwrap().is_empty());
}

#[test]
fn changed_since_lists_every_kind_and_never_ignored_files() {
    let env = project();
    env.write("pre-existing-untracked.txt", "was here before\n");
    env.write("edited-untracked.txt", "v1\n");
    let before_status = status(&env);
    let before_refs = env.git(&["for-each-ref"]);
    let cp = open(&env);
    let snap = cp
        .snapshot()
        .unwrap()
        .expect("a repository gives a snapshot");
    assert_eq!(snap.len(), 40, "a hex tree id: {snap}");
    assert_eq!(
        env.git(&["cat-file", "-t", &snap]).trim(),
        "tree",
        "the snapshot is a tree object"
    );
    // Taking a snapshot touches neither the index nor any ref.
    assert_eq!(status(&env), before_status);
    assert_eq!(env.git(&["for-each-ref"]), before_refs);
    assert_eq!(env.git(&["stash", "list"]), "");

    // What a fix does.
    env.write("src/lib.rs", LIB_FIXED);
    env.write("src/new.rs", "pub fn new() {}\n");
    std::fs::remove_file(env.root.join("notes.txt")).unwrap();
    std::fs::rename(env.root.join("src/other.rs"), env.root.join("src/moved.rs")).unwrap();
    env.write("edited-untracked.txt", "v2\n");
    // Ignored (project .gitignore) and wfx's own directory: never listed.
    env.write("target/debug/out.bin", "binary\n");
    env.write("scratch.tmp", "tmp\n");
    env.write(".workflow/active/WFS-x/workflow-session.json", "{}\n");

    // A fresh handle, as after a crash: the snapshot id is all it needs.
    let resumed = open(&env);
    let changes = resumed.changed_since(&snap).unwrap();
    assert_eq!(
        changes,
        vec![
            change("edited-untracked.txt", ChangeKind::Modified),
            change("notes.txt", ChangeKind::Deleted),
            change("src/lib.rs", ChangeKind::Modified),
            Change {
                path: "src/moved.rs".into(),
                kind: ChangeKind::Renamed,
                old_path: Some("src/other.rs".into()),
            },
            change("src/new.rs", ChangeKind::Added),
        ]
    );
    assert_eq!(
        change_paths(&changes),
        vec![
            "edited-untracked.txt",
            "notes.txt",
            "src/lib.rs",
            "src/moved.rs",
            "src/new.rs",
            "src/other.rs"
        ]
    );
    // Still nothing staged or committed by looking.
    assert_eq!(commit_count(&env), 1);
    assert_eq!(env.git(&["diff", "--cached", "--name-only"]), "");

    // One diff gives the same paths, the stat and the excerpt.
    let diff = cp.diff_since(&snap).unwrap();
    assert_eq!(diff.changes, changes);
    let stat = diff.stat;
    assert_eq!((stat.files, stat.insertions, stat.deletions), (5, 3, 3));
    let text = &diff.excerpt.text;
    assert!(text.contains("-    a - b\n+    a + b\n"), "{text}");
    assert!(!text.contains("\nindex "), "{text}");
    assert!(
        !text.contains(".workflow") && !text.contains("scratch.tmp"),
        "{text}"
    );
    let lib = cp.file_versions(&snap, "src/lib.rs").unwrap();
    assert_eq!(lib.before.as_deref(), Some(LIB_V1.as_bytes()));
    assert_eq!(lib.after.as_deref(), Some(LIB_FIXED.as_bytes()));
    let notes = cp.file_versions(&snap, "notes.txt").unwrap();
    assert_eq!(notes.before.as_deref(), Some(&b"user notes\n"[..]));
    assert_eq!(notes.after, None);
    let ignored = cp.file_versions(&snap, "scratch.tmp").unwrap();
    assert_eq!((ignored.before, ignored.after), (None, None));

    let err = cp.changed_since("not-a-tree").unwrap_err().to_string();
    assert!(err.contains("not a snapshot id"), "{err}");
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let err = cp.changed_since(missing).unwrap_err().to_string();
    assert!(err.contains(missing), "{err}");
}

#[test]
fn checkpoint_commits_exactly_the_fix_and_session_artifacts_and_leaves_user_work() {
    let env = project();
    user_work(&env);
    let cached_diff = env.git(&["diff", "--cached", "--", "staged.txt"]);
    let unstaged_diff = env.git(&["diff", "--", "notes.txt"]);
    let cp = open(&env);
    assert_eq!(cp.branch().unwrap().as_deref(), Some("main"));
    let snap = cp.snapshot().unwrap().unwrap();

    env.write("src/lib.rs", LIB_FIXED);
    env.write("src/helper.rs", "pub fn helper() {}\n");
    env.write("scratch.tmp", "ignored build output\n");
    write_session(&env, 1);

    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(
        changes,
        vec![
            change("src/helper.rs", ChangeKind::Added),
            change("src/lib.rs", ChangeKind::Modified),
        ]
    );
    let outcome = cp
        .commit_checkpoint(
            &cp.commit_paths(&changes).unwrap(),
            Some(SESSION),
            &fix_message(1),
            &fix(1),
        )
        .unwrap();
    let CommitOutcome::Created(id) = &outcome else {
        panic!("expected a new commit, got {outcome:?}");
    };
    assert_eq!(*id, rev(&env, "HEAD"));
    assert_eq!(cp.head().unwrap().as_deref(), Some(id.as_str()));
    assert_eq!(rev(&env, "main"), *id, "the branch moved");
    assert_eq!(commit_count(&env), 2);

    let mut want = session_added(1);
    want.extend(["A\tsrc/helper.rs".to_string(), "M\tsrc/lib.rs".to_string()]);
    assert_eq!(name_status(&env, "HEAD"), want);
    assert_eq!(
        body(&env, "HEAD"),
        format!(
            "{}\n\nWfx-Session: WFS-test-auth\nWfx-Iteration: 1\nWfx-Kind: fix\n\n",
            fix_message(1)
        )
    );
    assert_eq!(
        env.git(&["log", "-1", "--format=%an <%ae> %at|%cn <%ce> %ct"])
            .trim(),
        "Wfx Test <wfx@example.invalid> 1767225600|Wfx Test <wfx@example.invalid> 1767225600"
    );
    assert_eq!(
        env.git_bytes(&["show", "HEAD:src/lib.rs"]),
        LIB_FIXED.as_bytes()
    );

    // The user's work: still uncommitted, staged stays staged, unstaged
    // stays unstaged, bytes unchanged; nothing of wfx's left to commit.
    assert_eq!(status(&env), user_status());
    assert_user_work_intact(&env, &cached_diff, &unstaged_diff);
    assert_eq!(
        env.git(&["ls-files", "--", ".workflow"]),
        format!(
            "{SESSION}/.gitignore\n{SESSION}/.process/iteration-state.json\n{SESSION}/.task/IMPL-fix-1.json\n{SESSION}/workflow-session.json\n"
        ),
        "logs, agent output, junit, lock and temp files are never committed"
    );
    assert_eq!(
        cp.find_commit(&fix(1)).unwrap().as_deref(),
        Some(id.as_str())
    );
    assert_eq!(cp.find_commit(&rollback(1)).unwrap(), None);
    assert_eq!(cp.find_commit(&fix(2)).unwrap(), None);
}

#[test]
fn committing_one_iteration_twice_gives_one_commit() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", LIB_FIXED);
    write_session(&env, 1);
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let first = cp
        .commit_checkpoint(&paths, Some(SESSION), &fix_message(1), &fix(1))
        .unwrap();
    let id = first.id().unwrap().to_string();

    // Resumed after a crash: the same step runs again.
    let again = open(&env)
        .commit_checkpoint(&paths, Some(SESSION), &fix_message(1), &fix(1))
        .unwrap();
    assert_eq!(again, CommitOutcome::Existing(id.clone()));
    assert_eq!(commit_count(&env), 2);
    assert_eq!(
        env.git(&["log", "--format=%B", "--grep=Wfx-Iteration: 1"])
            .matches("Wfx-Kind: fix")
            .count(),
        1
    );

    // A crash between the commit and the index update leaves the index at
    // the parent's version; the repeated step repairs exactly that.
    env.git(&["reset", "-q", "HEAD~1", "--", "src/lib.rs"]);
    assert_eq!(status(&env), vec!["MM src/lib.rs"]);
    let repaired = cp
        .commit_checkpoint(&paths, Some(SESSION), &fix_message(1), &fix(1))
        .unwrap();
    assert_eq!(repaired, CommitOutcome::Existing(id.clone()));
    assert_eq!(status(&env), Vec::<String>::new());
    assert_eq!(commit_count(&env), 2);

    // The next iteration is a different checkpoint.
    let snap2 = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", "// iteration 2\n");
    let paths2 = change_paths(&cp.changed_since(&snap2).unwrap());
    let second = cp
        .commit_checkpoint(&paths2, Some(SESSION), &fix_message(2), &fix(2))
        .unwrap();
    assert!(matches!(second, CommitOutcome::Created(_)), "{second:?}");
    assert_eq!(commit_count(&env), 3);
    // Iteration 1 is still found behind it.
    assert_eq!(
        cp.commit_checkpoint(&paths, Some(SESSION), &fix_message(1), &fix(1))
            .unwrap(),
        CommitOutcome::Existing(id)
    );
    assert_eq!(commit_count(&env), 3);
}

#[test]
fn nothing_to_commit_makes_no_commit() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    assert_eq!(cp.changed_since(&snap).unwrap(), Vec::<Change>::new());
    let none: [&str; 0] = [];
    assert_eq!(
        cp.commit_checkpoint(&none, None, &fix_message(1), &fix(1))
            .unwrap(),
        CommitOutcome::Unchanged
    );
    // Named but unchanged paths, and an ignored file: still nothing.
    env.write("scratch.tmp", "ignored\n");
    assert_eq!(
        cp.commit_checkpoint(
            &["src/lib.rs", "scratch.tmp"],
            None,
            &fix_message(1),
            &fix(1)
        )
        .unwrap(),
        CommitOutcome::Unchanged
    );
    assert_eq!(commit_count(&env), 1);
    assert_eq!(status(&env), Vec::<String>::new());
}

#[test]
fn ignored_files_are_never_committed_even_when_named() {
    let env = project();
    let cp = open(&env);
    env.write("src/lib.rs", LIB_FIXED);
    env.write("scratch.tmp", "ignored\n");
    env.write("target/out.bin", "ignored\n");
    write_session(&env, 1);
    let named = [
        "src/lib.rs",
        "scratch.tmp",
        "target/out.bin",
        &format!("{SESSION}/.process/test-output.log"),
        &format!("{SESSION}/.process/iteration-1-cli-output.txt"),
    ];
    let outcome = cp
        .commit_checkpoint(&named, Some(SESSION), &fix_message(1), &fix(1))
        .unwrap();
    assert!(matches!(outcome, CommitOutcome::Created(_)), "{outcome:?}");
    let mut want = session_added(1);
    want.push("M\tsrc/lib.rs".into());
    assert_eq!(name_status(&env, "HEAD"), want);
    assert_eq!(status(&env), Vec::<String>::new());
    assert!(env.root.join("scratch.tmp").exists());
    assert!(
        env.root
            .join(SESSION)
            .join(".process/test-output.log")
            .exists()
    );
}

#[test]
fn unborn_head_gets_its_first_commit() {
    let env = Env::new();
    env.git(&["init", "-q", "-b", "main"]);
    env.write("a.txt", "a1\n");
    env.write("user-other.txt", "the user's\n");
    let cp = open(&env);
    assert_eq!(cp.head().unwrap(), None);
    assert_eq!(cp.branch().unwrap(), None);
    assert!(cp.is_clean().unwrap());
    let snap = cp.snapshot().unwrap().unwrap();

    env.write("a.txt", "a2\n");
    env.write("b.txt", "b\n");
    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(
        changes,
        vec![
            change("a.txt", ChangeKind::Modified),
            change("b.txt", ChangeKind::Added)
        ]
    );
    let outcome = cp
        .commit_checkpoint(&change_paths(&changes), None, &fix_message(1), &fix(1))
        .unwrap();
    let id = outcome.id().expect("committed").to_string();
    assert_eq!(commit_count(&env), 1);
    assert_eq!(rev(&env, "main"), id);
    assert_eq!(name_status(&env, "HEAD"), vec!["A\ta.txt", "A\tb.txt"]);
    assert_eq!(status(&env), vec!["?? user-other.txt"]);
    assert_eq!(cp.head().unwrap(), Some(id));
    assert_eq!(cp.branch().unwrap().as_deref(), Some("main"));
}

#[test]
fn detached_head_commits_on_head_and_leaves_branches_alone() {
    let env = project();
    let main_before = rev(&env, "main");
    env.git(&["checkout", "-q", "--detach"]);
    let cp = open(&env);
    assert_eq!(cp.branch().unwrap(), None);
    assert_eq!(cp.head().unwrap(), Some(main_before.clone()));
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", LIB_FIXED);
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let id = cp
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    assert_eq!(rev(&env, "HEAD"), id);
    assert_eq!(rev(&env, "HEAD~1"), main_before);
    assert_eq!(rev(&env, "main"), main_before, "no branch moved");
    let (attached, _, _) = env.git_try(&["symbolic-ref", "-q", "HEAD"]);
    assert!(!attached, "HEAD is still detached");
    assert_eq!(name_status(&env, "HEAD"), vec!["M\tsrc/lib.rs"]);

    // A revert works detached too.
    let rid = cp
        .revert(&id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    assert_eq!(rev(&env, "HEAD"), rid);
    assert_eq!(env.read("src/lib.rs"), LIB_V1);
    assert_eq!(rev(&env, "main"), main_before);
}

fn binary(seed: u8) -> Vec<u8> {
    (0..2048u32)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .chain([0, 0xff, 0, b'\r', b'\n', 0x80])
        .collect()
}

#[test]
fn spaces_non_ascii_binary_and_deleted_files_round_trip_through_commit_and_revert() {
    let env = Env::new();
    env.write("dir with space/naïve file.txt", "old\n");
    env.write_bytes("data.bin", &binary(0));
    env.write("obsolete.txt", "to be deleted by the fix\n");
    env.write("keep.txt", "keep\n");
    env.git_init_commit();
    let base_tree = rev(&env, "HEAD^{tree}");
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();

    env.write("dir with space/naïve file.txt", "new\n");
    env.write_bytes("data.bin", &binary(7));
    std::fs::remove_file(env.root.join("obsolete.txt")).unwrap();
    env.write("ünïcode new.txt", "créé\n");

    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(
        changes,
        vec![
            change("data.bin", ChangeKind::Modified),
            change("dir with space/naïve file.txt", ChangeKind::Modified),
            change("obsolete.txt", ChangeKind::Deleted),
            change("ünïcode new.txt", ChangeKind::Added),
        ]
    );
    let versions = cp.file_versions(&snap, "data.bin").unwrap();
    assert_eq!(versions.before, Some(binary(0)));
    assert_eq!(versions.after, Some(binary(7)));

    let id = cp
        .commit_checkpoint(&change_paths(&changes), None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    assert_eq!(
        name_status(&env, &id),
        vec![
            "M\tdata.bin",
            "M\tdir with space/naïve file.txt",
            "D\tobsolete.txt",
            "A\tünïcode new.txt",
        ]
    );
    assert_eq!(env.git_bytes(&["show", "HEAD:data.bin"]), binary(7));
    assert_eq!(
        env.git_bytes(&["show", "HEAD:dir with space/naïve file.txt"]),
        b"new\n"
    );
    let (exists, _, _) = env.git_try(&["cat-file", "-e", "HEAD:obsolete.txt"]);
    assert!(!exists, "the deletion is committed");
    assert_eq!(status(&env), Vec::<String>::new());

    let rid = cp
        .revert(&id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    assert_eq!(
        name_status(&env, &rid),
        vec![
            "M\tdata.bin",
            "M\tdir with space/naïve file.txt",
            "A\tobsolete.txt",
            "D\tünïcode new.txt",
        ]
    );
    // Byte for byte, on disk and in the commit.
    assert_eq!(env.read_bytes("data.bin"), binary(0));
    assert_eq!(env.read("dir with space/naïve file.txt"), "old\n");
    assert_eq!(env.read("obsolete.txt"), "to be deleted by the fix\n");
    assert!(!env.root.join("ünïcode new.txt").exists());
    assert_eq!(rev(&env, "HEAD^{tree}"), base_tree);
    assert_eq!(status(&env), Vec::<String>::new());
}

#[test]
fn revert_restores_the_fix_keeps_user_work_and_session_state_and_is_idempotent() {
    let env = project();
    user_work(&env);
    let cached_diff = env.git(&["diff", "--cached", "--", "staged.txt"]);
    let unstaged_diff = env.git(&["diff", "--", "notes.txt"]);
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", "// the fix broke everything\n");
    env.write("src/helper.rs", "pub fn helper() {}\n");
    write_session(&env, 1);
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let fix_id = cp
        .commit_checkpoint(&paths, Some(SESSION), &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();

    // The retest found a regression; the state machine moved on.
    let state_now = "{\"current_iteration\": 1, \"next_action\": \"rollback\"}\n";
    env.write(
        &format!("{SESSION}/.process/iteration-state.json"),
        state_now,
    );
    env.write(
        &format!("{SESSION}/.process/test-output.log"),
        "regressed\n",
    );

    let outcome = cp
        .revert(&fix_id, Some(SESSION), ROLLBACK_MESSAGE, &rollback(1))
        .unwrap();
    let CommitOutcome::Created(rid) = outcome else {
        panic!("expected a revert commit, got {outcome:?}");
    };
    assert_eq!(rev(&env, "HEAD"), rid);
    assert_eq!(rev(&env, "HEAD~1"), fix_id);
    assert_eq!(
        body(&env, "HEAD"),
        format!(
            "{ROLLBACK_MESSAGE}\n\nThis reverts commit {fix_id}.\n\nWfx-Session: WFS-test-auth\nWfx-Iteration: 1\nWfx-Kind: rollback\n\n"
        )
    );
    assert_eq!(
        name_status(&env, "HEAD"),
        vec![
            format!("M\t{SESSION}/.process/iteration-state.json"),
            "D\tsrc/helper.rs".to_string(),
            "M\tsrc/lib.rs".to_string(),
        ]
    );
    // The fix is undone byte for byte, on disk and in HEAD.
    assert_eq!(env.read_bytes("src/lib.rs"), LIB_V1.as_bytes());
    assert_eq!(
        env.git_bytes(&["show", "HEAD:src/lib.rs"]),
        LIB_V1.as_bytes()
    );
    assert!(!env.root.join("src/helper.rs").exists());
    // The session's state is not rolled back with the fix.
    assert_eq!(
        env.read(&format!("{SESSION}/.process/iteration-state.json")),
        state_now
    );
    // The user's work is exactly as before.
    assert_eq!(status(&env), user_status());
    assert_user_work_intact(&env, &cached_diff, &unstaged_diff);

    // Repeated after a crash: the same commit, no second one.
    let again = open(&env)
        .revert(&fix_id, Some(SESSION), ROLLBACK_MESSAGE, &rollback(1))
        .unwrap();
    assert_eq!(again, CommitOutcome::Existing(rid));
    assert_eq!(commit_count(&env), 3);
    assert_eq!(status(&env), user_status());
}

#[test]
fn revert_accepts_files_already_restored_by_an_interrupted_attempt() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", "// broken\n");
    env.write("src/helper.rs", "pub fn helper() {}\n");
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let fix_id = cp
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    // Killed after writing the files back, before the commit.
    env.write("src/lib.rs", LIB_V1);
    std::fs::remove_file(env.root.join("src/helper.rs")).unwrap();
    let outcome = cp
        .revert(&fix_id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap();
    assert!(matches!(outcome, CommitOutcome::Created(_)), "{outcome:?}");
    assert_eq!(
        name_status(&env, "HEAD"),
        vec!["D\tsrc/helper.rs", "M\tsrc/lib.rs"]
    );
    assert_eq!(status(&env), Vec::<String>::new());
}

#[test]
fn revert_is_refused_when_a_later_commit_changed_the_same_path() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", LIB_FIXED);
    env.write("src/helper.rs", "pub fn helper() {}\n");
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let fix_id = cp
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    // Someone builds on the fix.
    env.write("src/lib.rs", "// later work on top of the fix\n");
    env.git(&["commit", "-q", "-am", "later work"]);
    let head_before = rev(&env, "HEAD");

    let err = cp
        .revert(&fix_id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("later commits changed src/lib.rs"), "{err}");
    assert!(
        !err.contains("helper"),
        "only the conflicting path is named: {err}"
    );
    assert!(err.contains(&fix_id[..12]), "names the commit: {err}");
    assert_eq!(rev(&env, "HEAD"), head_before, "no commit was made");
    assert_eq!(env.read("src/lib.rs"), "// later work on top of the fix\n");
    assert!(env.root.join("src/helper.rs").exists());
    assert_eq!(status(&env), Vec::<String>::new());
}

#[test]
fn revert_goes_through_when_later_commits_touched_other_paths() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", LIB_FIXED);
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let fix_id = cp
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    env.write("notes.txt", "committed later\n");
    env.git(&["commit", "-q", "-am", "unrelated later work"]);
    let outcome = cp
        .revert(&fix_id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap();
    assert!(matches!(outcome, CommitOutcome::Created(_)), "{outcome:?}");
    assert_eq!(name_status(&env, "HEAD"), vec!["M\tsrc/lib.rs"]);
    assert_eq!(env.read("src/lib.rs"), LIB_V1);
    assert_eq!(env.read("notes.txt"), "committed later\n");
}

#[test]
fn revert_is_refused_over_uncommitted_changes_to_the_same_path() {
    let env = project();
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/lib.rs", LIB_FIXED);
    env.write("src/helper.rs", "pub fn helper() {}\n");
    let paths = change_paths(&cp.changed_since(&snap).unwrap());
    let fix_id = cp
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    env.write("src/helper.rs", "pub fn helper() { /* user edit */ }\n");
    let head_before = rev(&env, "HEAD");

    let err = cp
        .revert(&fix_id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("uncommitted changes to src/helper.rs;"),
        "{err}"
    );
    assert_eq!(rev(&env, "HEAD"), head_before);
    assert_eq!(
        env.read("src/helper.rs"),
        "pub fn helper() { /* user edit */ }\n"
    );
    assert_eq!(
        env.read("src/lib.rs"),
        LIB_FIXED,
        "nothing was half-restored"
    );

    // Staged changes count too.
    env.write("src/helper.rs", "pub fn helper() {}\n");
    env.write("src/lib.rs", "// staged\n");
    env.git(&["add", "src/lib.rs"]);
    env.write("src/lib.rs", LIB_FIXED);
    let err = cp
        .revert(&fix_id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("uncommitted changes to src/lib.rs;"), "{err}");
    assert_eq!(rev(&env, "HEAD"), head_before);
}

#[test]
fn bad_input_gives_clear_errors() {
    let env = project();
    let cp = open(&env);
    let err = cp
        .commit_checkpoint(&["../outside.txt"], None, &fix_message(1), &fix(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("../outside.txt"), "{err}");
    let err = cp
        .commit_checkpoint(&[".git/config"], None, &fix_message(1), &fix(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains(".git"), "{err}");
    let err = cp
        .revert("deadbeef", None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("deadbeef") && err.contains("no such commit"),
        "{err}"
    );
    let err = cp
        .commit_checkpoint(&["src/lib.rs"], None, "  ", &fix(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty message"), "{err}");
    assert_eq!(commit_count(&env), 1);
}

#[cfg(unix)]
#[test]
fn symlinks_and_executable_bits_are_committed_and_restored() {
    use std::os::unix::fs::PermissionsExt;
    let env = project();
    env.write("run.sh", "#!/bin/sh\necho hi\n");
    env.git(&["add", "run.sh"]);
    env.git(&["commit", "-q", "-m", "script"]);
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    std::fs::set_permissions(
        env.root.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("src/lib.rs", env.root.join("lib-link")).unwrap();
    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(
        changes,
        vec![
            change("lib-link", ChangeKind::Added),
            change("run.sh", ChangeKind::Modified)
        ]
    );
    let id = cp
        .commit_checkpoint(&change_paths(&changes), None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    let tree = env.git(&["ls-tree", "HEAD", "lib-link", "run.sh"]);
    assert!(tree.contains("120000 blob"), "{tree}");
    assert!(tree.contains("100755 blob"), "{tree}");
    assert_eq!(status(&env), Vec::<String>::new());

    cp.revert(&id, None, ROLLBACK_MESSAGE, &rollback(1))
        .unwrap();
    assert!(std::fs::symlink_metadata(env.root.join("lib-link")).is_err());
    let mode = std::fs::metadata(env.root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "executable bit removed again: {mode:o}");
    assert_eq!(status(&env), Vec::<String>::new());
}

/// The walk leaves `.workflow/` out by naming the project's other entries:
/// a tracked directory deleted whole, a new one, and a project holding
/// nothing but `.workflow/` any more are still seen.
#[test]
fn snapshots_see_whole_directories_come_and_go_beside_the_session() {
    let env = project();
    write_session(&env, 1);
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    std::fs::remove_dir_all(env.root.join("src")).unwrap();
    env.write("lib/new.rs", "pub fn new() {}\n");
    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(
        change_paths(&changes),
        vec!["lib/new.rs", "src/lib.rs", "src/other.rs"]
    );
    for name in ["lib", "notes.txt", "staged.txt", ".gitignore"] {
        let path = env.root.join(name);
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }
    let empty = cp.snapshot().unwrap().unwrap();
    assert_eq!(env.git(&["ls-tree", "-r", "--name-only", &empty]), "");
    assert_eq!(
        change_paths(&cp.changed_since(&snap).unwrap()),
        vec![
            ".gitignore",
            "notes.txt",
            "src/lib.rs",
            "src/other.rs",
            "staged.txt"
        ]
    );
}

/// The guard taken before each agent call reuses its copy of a session
/// file only while the file is unchanged: a rewrite of the same size in
/// the same second is copied anew, and a restore writes that version.
#[test]
fn the_head_guard_restores_each_session_files_latest_version() {
    let env = project();
    write_session(&env, 1);
    let cp = open(&env);
    let dir = env.root.join(SESSION);
    let rel = format!("{SESSION}/notes.md");
    env.write(&rel, "version 1\n");
    let first = cp.head_guard(Some(&dir)).unwrap();
    env.write(&rel, "version 2\n");
    let second = cp.head_guard(Some(&dir)).unwrap();
    assert_ne!(first.session_files, second.session_files);
    std::fs::remove_file(dir.join("notes.md")).unwrap();
    cp.restore_to(&second, None).unwrap();
    assert_eq!(env.read(&rel), "version 2\n");
}

/// What wfx wrote itself is copied from its own record, not read, but
/// only while the file's key vouches for it: a key taken right after the
/// write is recent (a rewrite in the same clock tick, same size, mtime set
/// back, would keep it), so the file is read; a file rewritten since is
/// read, and a restore writes what was on disk before the call, not wfx's
/// older record.
#[test]
fn the_head_guard_takes_wfxs_own_copy_only_while_the_file_is_as_written() {
    use std::sync::Arc;
    use wfx::fsx::StatKey;
    let env = project();
    write_session(&env, 1);
    let cp = open(&env);
    let dir = env.root.join(SESSION);
    let rel = format!("{SESSION}/notes.md");
    let path = dir.join("notes.md");
    env.write(&rel, "version 1\n");
    // The record differs from the disk on purpose, to show which was used.
    let record: Arc<[u8]> = Arc::from(&b"VERSION 1\n"[..]);
    let recent = StatKey::at(&path).unwrap();
    let guard = cp
        .head_guard_knowing(Some(&dir), [(path.as_path(), recent, &record)])
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    cp.restore_to(&guard, None).unwrap();
    assert_eq!(env.read(&rel), "version 1\n", "a recent key: read");

    // The same key as if taken 3 s later: settled, the record is copied.
    let mut settled = StatKey::at(&path).unwrap();
    settled.taken.0 += 3;
    let guard = cp
        .head_guard_knowing(Some(&dir), [(path.as_path(), settled, &record)])
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    cp.restore_to(&guard, None).unwrap();
    assert_eq!(env.read(&rel), "VERSION 1\n");

    // Rewritten after wfx's record: the guard reads it.
    let key = StatKey::at(&path).unwrap();
    env.write(&rel, "version 2\n");
    let guard = cp
        .head_guard_knowing(Some(&dir), [(path.as_path(), key, &record)])
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    cp.restore_to(&guard, None).unwrap();
    assert_eq!(env.read(&rel), "version 2\n");
}

/// A big session file (an agent's log) is kept as an open handle, not
/// read: a `git clean` or `git checkout` that deletes or replaces it is
/// still undone with its bytes.
#[test]
fn the_head_guard_restores_a_big_log_it_never_read() {
    let env = project();
    write_session(&env, 1);
    let cp = open(&env);
    let dir = env.root.join(SESSION);
    let log: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    env.write_bytes(
        &format!("{SESSION}/.process/iteration-1-fix-cli-output.txt"),
        &log,
    );
    let guard = cp.head_guard(Some(&dir)).unwrap();
    let path = dir.join(".process/iteration-1-fix-cli-output.txt");
    // Replaced by another file (as git writes: unlink, create).
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "the agent's version\n").unwrap();
    cp.restore_to(&guard, None).unwrap();
    assert!(
        std::fs::read(&path).unwrap() == log,
        "the log was not put back"
    );
    // Deleted.
    std::fs::remove_file(&path).unwrap();
    cp.restore_to(&guard, None).unwrap();
    assert!(
        std::fs::read(&path).unwrap() == log,
        "the log was not put back"
    );
}

#[test]
fn project_root_in_a_subdirectory_sees_only_its_own_files() {
    let env = Env::new();
    env.write("other/x.txt", "outside the project\n");
    env.write("proj/src/a.rs", "fn a() {}\n");
    env.git_init_commit();
    let proj = env.root.join("proj");
    let cp = open_at(&proj);
    env.write("other/x.txt", "changed outside\n");
    assert_eq!(cp.dirty_paths().unwrap(), Vec::<String>::new());
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("proj/src/a.rs", "fn a() { fixed() }\n");
    env.write("other/y.txt", "new outside\n");
    env.write(
        "proj/.workflow/active/WFS-sub/workflow-session.json",
        "{}\n",
    );
    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(changes, vec![change("src/a.rs", ChangeKind::Modified)]);
    assert_eq!(cp.dirty_paths().unwrap(), vec!["src/a.rs"]);
    cp.commit_checkpoint(
        &change_paths(&changes),
        Some(".workflow/active/WFS-sub"),
        &fix_message(1),
        &fix(1),
    )
    .unwrap();
    assert_eq!(
        name_status(&env, "HEAD"),
        vec![
            "A\tproj/.workflow/active/WFS-sub/workflow-session.json",
            "M\tproj/src/a.rs"
        ]
    );
    assert_eq!(status(&env), vec![" M other/x.txt", "?? other/y.txt"]);
}

#[test]
fn worktree_add_and_remove_on_a_session_branch() {
    let env = project();
    let main_before = rev(&env, "main");
    let cp = open(&env);
    let dir = env.tmp.path().join("worktrees").join(SID);

    let branch = cp.worktree_add(SID, &dir).unwrap();
    assert_eq!(branch.as_deref(), Some("wfx/WFS-test-auth"));
    let list = env.git(&["worktree", "list", "--porcelain"]);
    let canonical = dir.canonicalize().unwrap();
    assert!(
        list.contains(&format!("worktree {}\n", canonical.display())),
        "{list}"
    );
    assert!(
        list.contains("branch refs/heads/wfx/WFS-test-auth\n"),
        "{list}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        LIB_V1
    );
    assert_eq!(git_in(&env, &dir, &["status", "--porcelain"]), "");
    // Resuming: same session, same directory → nothing new.
    assert_eq!(cp.worktree_add(SID, &dir).unwrap(), branch);

    // The session commits inside the worktree, on its branch only.
    let inside = open_at(&dir);
    assert_eq!(
        inside.branch().unwrap().as_deref(),
        Some("wfx/WFS-test-auth")
    );
    let snap = inside.snapshot().unwrap().unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB_FIXED).unwrap();
    let paths = change_paths(&inside.changed_since(&snap).unwrap());
    let id = inside
        .commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap()
        .id()
        .unwrap()
        .to_string();
    assert_eq!(rev(&env, "wfx/WFS-test-auth"), id);
    assert_eq!(rev(&env, "main"), main_before);
    assert_eq!(
        env.read("src/lib.rs"),
        LIB_V1,
        "the user's tree is untouched"
    );
    assert_eq!(status(&env), Vec::<String>::new());

    // Leftovers block removal unless forced.
    std::fs::write(dir.join("leftover.txt"), "x\n").unwrap();
    let err = cp.worktree_remove(&dir, false).unwrap_err().to_string();
    assert!(err.contains("leftover.txt"), "{err}");
    assert!(dir.exists());
    assert!(cp.worktree_remove(&dir, true).unwrap());
    assert!(!dir.exists());
    let list = env.git(&["worktree", "list", "--porcelain"]);
    assert!(!list.contains(SID), "{list}");
    assert_eq!(
        env.git(&[
            "branch",
            "--list",
            "wfx/WFS-test-auth",
            "--format=%(objectname)"
        ])
        .trim(),
        id,
        "the branch and its commits are kept"
    );
    assert!(!cp.worktree_remove(&dir, false).unwrap(), "already gone");

    // Added again later: the kept branch is reused, with its commit.
    assert_eq!(cp.worktree_add(SID, &dir).unwrap(), branch);
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        LIB_FIXED
    );
    assert!(cp.worktree_remove(&dir, false).unwrap());

    let err = cp
        .worktree_add("not/a session", &dir)
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid session id"), "{err}");
}

#[test]
fn worktree_needs_a_commit() {
    let env = Env::new();
    env.git(&["init", "-q", "-b", "main"]);
    let cp = open(&env);
    let err = cp
        .worktree_add(SID, &env.tmp.path().join("wt"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no commits yet"), "{err}");
}

#[test]
fn outside_a_repository_every_call_is_a_no_op() {
    let env = Env::new();
    env.write("src/lib.rs", LIB_V1);
    let cp = open(&env);
    assert!(!cp.is_repo());
    assert_eq!(cp.workdir(), None);
    assert_eq!(cp.head().unwrap(), None);
    assert_eq!(cp.branch().unwrap(), None);
    assert_eq!(cp.dirty_paths().unwrap(), Vec::<String>::new());
    assert!(cp.is_clean().unwrap());
    assert_eq!(cp.snapshot().unwrap(), None);
    assert_eq!(cp.changed_since("anything").unwrap(), Vec::<Change>::new());
    assert_eq!(cp.diff_since("anything").unwrap(), Default::default());
    assert_eq!(
        cp.file_versions("anything", "src/lib.rs").unwrap(),
        Default::default()
    );
    assert_eq!(cp.find_commit(&fix(1)).unwrap(), None);
    assert_eq!(
        cp.commit_checkpoint(&["src/lib.rs"], Some(SESSION), &fix_message(1), &fix(1))
            .unwrap(),
        CommitOutcome::NotARepo
    );
    assert_eq!(
        cp.revert("HEAD", None, ROLLBACK_MESSAGE, &rollback(1))
            .unwrap(),
        CommitOutcome::NotARepo
    );
    assert_eq!(
        cp.worktree_add(SID, &env.tmp.path().join("wt")).unwrap(),
        None
    );
    assert!(
        !cp.worktree_remove(&env.tmp.path().join("wt"), true)
            .unwrap()
    );
    assert!(!env.root.join(".git").exists(), "no repository was created");
    assert_eq!(env.read("src/lib.rs"), LIB_V1);

    // --no-commit uses the same inert handle inside a repository.
    let repo = project();
    hermetic_libgit2();
    let off = Checkpoints::disabled();
    assert!(!off.is_repo());
    assert_eq!(
        off.commit_checkpoint(&["src/lib.rs"], None, &fix_message(1), &fix(1))
            .unwrap(),
        CommitOutcome::NotARepo
    );
    assert_eq!(commit_count(&repo), 1);
}

#[test]
fn a_fix_editing_the_users_untracked_file_does_not_commit_it() {
    let env = project();
    env.write("src/draft.rs", "// the user's uncommitted work\n");
    let cp = open(&env);
    let snap = cp.snapshot().unwrap().unwrap();
    env.write("src/draft.rs", "// edited by the fix\n");
    env.write("src/lib.rs", LIB_FIXED);
    env.write("src/created.rs", "// created by the fix\n");
    std::fs::rename(
        env.root.join("src/other.rs"),
        env.root.join("src/renamed.rs"),
    )
    .unwrap();
    let changes = cp.changed_since(&snap).unwrap();
    assert_eq!(changes.len(), 4, "{changes:?}");
    let paths = cp.commit_paths(&changes).unwrap();
    assert_eq!(
        paths,
        vec![
            "src/created.rs",
            "src/lib.rs",
            "src/other.rs",
            "src/renamed.rs"
        ]
    );
    cp.commit_checkpoint(&paths, None, &fix_message(1), &fix(1))
        .unwrap();
    assert_eq!(
        name_status(&env, "HEAD"),
        vec![
            "A\tsrc/created.rs",
            "M\tsrc/lib.rs",
            "D\tsrc/other.rs",
            "A\tsrc/renamed.rs"
        ]
    );
    assert_eq!(status(&env), vec!["?? src/draft.rs"]);
    assert_eq!(env.read("src/draft.rs"), "// edited by the fix\n");
}

#[test]
fn final_commit_records_the_archive_move() {
    let env = project();
    let cp = open(&env);
    write_session(&env, 1);
    env.write("src/lib.rs", LIB_FIXED);
    let first = cp
        .commit_checkpoint(&["src/lib.rs"], Some(SESSION), &fix_message(1), &fix(1))
        .unwrap();
    assert!(matches!(first, CommitOutcome::Created(_)), "{first:?}");
    // Completion: the session directory moves to archives/ and the manifest
    // is appended; the old directory is gone from disk.
    let archived = ".workflow/archives/WFS-test-auth";
    std::fs::create_dir_all(env.root.join(".workflow/archives")).unwrap();
    std::fs::rename(env.root.join(SESSION), env.root.join(archived)).unwrap();
    env.write(".workflow/archives/manifest.json", "{\"archives\": []}\n");
    env.write(
        &format!("{archived}/.summaries/IMPL-002-summary.md"),
        "done\n",
    );
    let outcome = cp
        .commit_checkpoint(
            &[SESSION, ".workflow/archives/manifest.json"],
            Some(archived),
            "test-cycle: session WFS-test-auth completed",
            &Trailers::new(SID, 1, CommitKind::Final),
        )
        .unwrap();
    assert!(matches!(outcome, CommitOutcome::Created(_)), "{outcome:?}");
    assert_eq!(
        name_status(&env, "HEAD"),
        vec![
            format!("D\t{SESSION}/.gitignore"),
            format!("D\t{SESSION}/.process/iteration-state.json"),
            format!("D\t{SESSION}/.task/IMPL-fix-1.json"),
            format!("D\t{SESSION}/workflow-session.json"),
            format!("A\t{archived}/.gitignore"),
            format!("A\t{archived}/.process/iteration-state.json"),
            format!("A\t{archived}/.summaries/IMPL-002-summary.md"),
            format!("A\t{archived}/.task/IMPL-fix-1.json"),
            format!("A\t{archived}/workflow-session.json"),
            "A\t.workflow/archives/manifest.json".to_string(),
        ]
    );
    assert!(body(&env, "HEAD").ends_with("Wfx-Iteration: 1\nWfx-Kind: final\n\n"));
    assert_eq!(status(&env), Vec::<String>::new());
}

/// A sealed or candidate checkout is a repository git itself reads: `HEAD`
/// detached at the commit, a clean status, the objects reached through
/// the project's, and the project's file system settings; written by hand,
/// so none of `git init`'s hook samples, probes or reflog.
#[test]
fn a_checkout_is_a_clean_repository_with_the_projects_file_system_settings() {
    let env = project();
    env.git(&["config", "core.ignorecase", "true"]);
    env.git(&["config", "core.symlinks", "false"]);
    let cp = open(&env);
    let head = rev(&env, "HEAD");
    let dir = env.root.with_extension("checkout");
    let co = cp.checkout_sealed(&head, &dir, &[]).unwrap();
    assert_eq!(co.root, dir);
    assert_eq!(git_in(&env, &dir, &["rev-parse", "HEAD"]).trim(), head);
    // Detached: no branch.
    assert_eq!(
        git_in(&env, &dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "HEAD"
    );
    assert_eq!(git_in(&env, &dir, &["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        LIB_V1
    );
    assert_eq!(
        git_in(&env, &dir, &["config", "--local", "core.ignorecase"]).trim(),
        "true"
    );
    assert_eq!(
        git_in(&env, &dir, &["config", "--local", "core.symlinks"]).trim(),
        "false"
    );
    assert_eq!(
        git_in(&env, &dir, &["config", "--local", "core.bare"]).trim(),
        "false"
    );
    for absent in ["hooks", "logs", "description"] {
        assert!(!dir.join(".git").join(absent).exists(), "{absent}");
    }
    // Its objects are the project's: none of its own after the checkout.
    let own = std::fs::read_dir(dir.join(".git/objects"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "info" && e.file_name() != "pack")
        .count();
    assert_eq!(own, 0);
    wfx::git::remove_checkout(&dir).unwrap();
    assert!(!dir.exists());
}
