//! What one handle reuses between two questions (a diff of the same two
//! trees, `HEAD` read once for its commit and branch, the index just read
//! for the work tree's status) must never hide what a child process did in
//! between: each test changes the thing reused, with `git` as an agent
//! would, and checks that wfx still sees it.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{Repository, Status, StatusOptions};

use super::{Checkpoints, Identity};

/// `git` in `root`, with no user or system configuration.
fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository on `main` with `a.txt`, `b.txt`, `c.txt` and `d.sh`
/// committed.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    for (name, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("c.txt", "c\n"),
        ("d.sh", "echo d\n"),
    ] {
        std::fs::write(root.join(name), text).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "start"]);
    (tmp, root)
}

fn open(root: &Path) -> Checkpoints {
    Checkpoints::open(root).unwrap().with_identity(Identity {
        name: "wfx".into(),
        email: "wfx@example.invalid".into(),
        time: Some(1_767_225_600),
    })
}

/// The flags of a status entry the work tree's state is made of.
fn workdir_part(status: Status) -> Status {
    status
        & (Status::WT_NEW
            | Status::WT_MODIFIED
            | Status::WT_DELETED
            | Status::WT_TYPECHANGE
            | Status::WT_RENAMED
            | Status::WT_UNREADABLE
            | Status::IGNORED
            | Status::CONFLICTED)
}

/// git's own status (as wfx asked for it before it diffed the index
/// against the work tree itself), reduced to the work tree's side.
fn git_status(root: &Path, specs: &[&str]) -> Vec<(Vec<u8>, Status)> {
    let repo = Repository::open(root).unwrap();
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_unmodified(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    for s in specs {
        opts.pathspec(s);
    }
    if !specs.is_empty() {
        opts.disable_pathspec_match(true);
    }
    let mut out: Vec<(Vec<u8>, Status)> = repo
        .statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|e| (e.path_bytes().to_vec(), workdir_part(e.status())))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    out.sort();
    out
}

fn wfx_status(cp: &Checkpoints, specs: &[&str]) -> Vec<(Vec<u8>, Status)> {
    let r = cp.repo.as_ref().unwrap();
    let index = r.index().unwrap();
    let specs = (!specs.is_empty()).then(|| specs.iter().map(|s| s.as_bytes().to_vec()).collect());
    let mut out: Vec<(Vec<u8>, Status)> = r
        .workdir_statuses(&index, specs)
        .unwrap()
        .into_iter()
        .map(|(p, s)| (p, workdir_part(s)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    out.sort();
    out
}

#[test]
fn the_work_trees_status_is_gits_for_every_kind_of_change() {
    let (_tmp, root) = project();
    // A conflict: both sides changed a.txt.
    git(&root, &["switch", "-q", "-c", "other"]);
    std::fs::write(root.join("a.txt"), "theirs\n").unwrap();
    git(&root, &["commit", "-q", "-am", "theirs"]);
    git(&root, &["switch", "-q", "main"]);
    std::fs::write(root.join("a.txt"), "ours\n").unwrap();
    git(&root, &["commit", "-q", "-am", "ours"]);
    let merge = Command::new("git")
        .current_dir(&root)
        .args(["merge", "-q", "other"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge conflicts");

    std::fs::remove_file(root.join("b.txt")).unwrap();
    std::fs::remove_file(root.join("c.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("c.txt")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("d.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(root.join("z.log"), "ignored\n").unwrap();
    std::fs::create_dir_all(root.join("dir/x")).unwrap();
    std::fs::write(root.join("dir/x/y.txt"), "new\n").unwrap();
    std::fs::write(root.join("staged.txt"), "staged\n").unwrap();
    git(&root, &["add", "staged.txt"]);
    // An untracked repository inside, and submodules: one gone from the
    // disk, one an empty directory.
    std::fs::create_dir_all(root.join("nested")).unwrap();
    git(&root.join("nested"), &["init", "-q"]);
    std::fs::write(root.join("nested/n.txt"), "n\n").unwrap();
    let head = git(&root, &["rev-parse", "HEAD"]);
    for sub in ["sub", "sub2"] {
        git(
            &root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{},{sub}", head.trim()),
            ],
        );
    }
    std::fs::create_dir_all(root.join("sub2")).unwrap();

    let cp = open(&root);
    let theirs = git_status(&root, &[]);
    for kind in [
        Status::CONFLICTED,
        Status::WT_DELETED,
        Status::WT_TYPECHANGE,
        Status::WT_MODIFIED,
        Status::WT_NEW,
    ] {
        assert!(
            theirs.iter().any(|(_, s)| s.contains(kind)),
            "the case covers {kind:?}: {theirs:?}"
        );
    }
    assert!(theirs.iter().any(|(p, _)| p == b"nested/"), "{theirs:?}");
    assert_eq!(wfx_status(&cp, &[]), theirs);
    let specs = ["a.txt", "c.txt", "dir", "sub", "nested"];
    assert_eq!(wfx_status(&cp, &specs), git_status(&root, &specs));
}

#[test]
fn an_index_rewritten_with_the_same_size_and_mtime_is_read_again() {
    let (_tmp, root) = project();
    // a.txt older than the index: git trusts its stat data, not its bytes.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    crate::fsx::set_mtime(&root.join("a.txt"), hour_ago);
    git(&root, &["add", "a.txt"]);
    // An agent points a.txt's entry at other content, keeping its stat
    // data (the file on disk looks unchanged), then at yet another, with
    // the index's size and mtime as they were.
    let index_path = root.join(".git/index");
    let point_a_at = |text: &str| {
        let blob = Repository::open(&root)
            .unwrap()
            .blob(text.as_bytes())
            .unwrap();
        let mut index = git2::Index::open(&index_path).unwrap();
        let mut entry = index.get_path(Path::new("a.txt"), 0).unwrap();
        entry.id = blob;
        index.add(&entry).unwrap();
        index.write().unwrap();
        blob
    };
    let tree_a = |tree: &str| {
        let repo = Repository::open(&root).unwrap();
        let tree = repo.find_tree(git2::Oid::from_str(tree).unwrap()).unwrap();
        tree.get_path(Path::new("a.txt")).unwrap().id()
    };
    let cp = open(&root);
    let one = point_a_at("one\n");
    let first = cp.current_tree().unwrap().unwrap();
    assert_eq!(tree_a(&first), one, "the index's id of an unchanged file");
    let meta = std::fs::metadata(&index_path).unwrap();
    let two = point_a_at("two\n");
    crate::fsx::set_mtime(&index_path, meta.modified().unwrap());
    let now = std::fs::metadata(&index_path).unwrap();
    assert_eq!(
        (now.len(), now.modified().unwrap()),
        (meta.len(), meta.modified().unwrap())
    );
    let second = cp.current_tree().unwrap().unwrap();
    assert_eq!(tree_a(&second), two, "the index is read again");
}

#[test]
fn a_file_changed_between_two_status_calls_is_seen() {
    let (_tmp, root) = project();
    let cp = open(&root);
    let first = cp.current_tree().unwrap().unwrap();
    assert_eq!(cp.current_tree().unwrap().unwrap(), first);
    std::fs::write(root.join("b.txt"), "B\n").unwrap();
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    let second = cp.current_tree().unwrap().unwrap();
    assert_ne!(second, first);
    let changed: Vec<String> = cp
        .changed_since(&first)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(changed, ["b.txt", "new.txt"]);
}

#[test]
fn the_diff_kept_for_the_inspection_serves_only_the_same_two_trees_once() {
    let (_tmp, root) = project();
    let cp = open(&root);
    let before = cp.snapshot().unwrap().unwrap();
    std::fs::write(root.join("a.txt"), "fixed\n").unwrap();
    let now = cp.current_tree().unwrap().unwrap();
    assert!(cp.planted_links_at(&before, Some(&now)).unwrap().is_empty());
    let kept = cp.diff_between(&before, Some(&now)).unwrap();
    let r = cp.repo.as_ref().unwrap();
    assert!(r.last_diff.borrow().is_none(), "served once");
    assert_eq!(kept, cp.diff_between(&before, Some(&now)).unwrap());
    assert_eq!(kept.stat.insertions, 1);

    // The agent's next edit: another tree, another diff.
    assert!(cp.planted_links_at(&before, Some(&now)).unwrap().is_empty());
    std::fs::write(root.join("b.txt"), "also\n").unwrap();
    let later = cp.current_tree().unwrap().unwrap();
    let paths: Vec<String> = cp
        .diff_between(&before, Some(&later))
        .unwrap()
        .changes
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(paths, ["a.txt", "b.txt"]);

    // A tree against itself: nothing, as libgit2 would say.
    assert_eq!(
        cp.diff_between(&before, Some(&before)).unwrap(),
        super::SnapshotDiff::default()
    );
    assert!(
        cp.planted_links_at(&before, Some(&before))
            .unwrap()
            .is_empty()
    );

    // Another snapshot against the same tree.
    let fixed = cp.snapshot().unwrap().unwrap();
    assert!(
        cp.planted_links_at(&before, Some(&later))
            .unwrap()
            .is_empty()
    );
    assert!(
        cp.diff_between(&fixed, Some(&later))
            .unwrap()
            .changes
            .is_empty()
    );
    // Taken by that diff, whatever it was of.
    assert!(r.last_diff.borrow().is_none());
}

#[test]
fn head_and_branch_follow_every_move_of_head() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    let cp = open(&root);
    let seen = |cp: &Checkpoints| {
        let g = cp.head_guard(None).unwrap();
        let r = cp.repo.as_ref().unwrap();
        let oracle = (
            r.head_commit().unwrap().map(|c| c.id().to_string()),
            r.head_branch().unwrap(),
        );
        assert_eq!((g.head.clone(), g.branch.clone()), oracle);
        (g.head, g.branch)
    };
    let main = Some("refs/heads/main".to_string());
    assert_eq!(seen(&cp), (None, main.clone()), "unborn");

    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "one"]);
    let one = git(&root, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(seen(&cp), (Some(one.clone()), main.clone()), "a commit");

    git(&root, &["commit", "-q", "--allow-empty", "-m", "two"]);
    let two = git(&root, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(seen(&cp), (Some(two.clone()), main.clone()), "another");

    git(&root, &["switch", "-q", "-c", "elsewhere", &one]);
    assert_eq!(
        seen(&cp),
        (Some(one.clone()), Some("refs/heads/elsewhere".into())),
        "switched"
    );

    git(&root, &["switch", "-q", "--detach", &two]);
    assert_eq!(seen(&cp), (Some(two), None), "detached");

    git(&root, &["symbolic-ref", "HEAD", "refs/heads/nowhere"]);
    assert_eq!(
        seen(&cp),
        (None, Some("refs/heads/nowhere".into())),
        "a branch not made yet"
    );
}

#[test]
fn commit_paths_follow_the_index_and_head_as_they_are_now() {
    use super::{Change, ChangeKind};
    let (_tmp, root) = project();
    let cp = open(&root);
    let modified = |p: &str| Change {
        path: p.into(),
        kind: ChangeKind::Modified,
        old_path: None,
    };
    let all = [modified("a.txt"), modified("mine.txt"), modified("new.txt")];
    std::fs::write(root.join("mine.txt"), "user's\n").unwrap();
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    assert_eq!(cp.commit_paths(&all).unwrap(), ["a.txt"]);
    // Staged since: tracked by the index alone.
    git(&root, &["add", "new.txt"]);
    assert_eq!(cp.commit_paths(&all).unwrap(), ["a.txt", "new.txt"]);
    // Out of the index, still in HEAD's tree.
    git(&root, &["rm", "-q", "--cached", "a.txt"]);
    assert_eq!(cp.commit_paths(&all).unwrap(), ["a.txt", "new.txt"]);
    git(&root, &["add", "a.txt"]);
    // Committed by somebody, then dropped from the index: HEAD moved.
    git(&root, &["add", "mine.txt"]);
    git(&root, &["commit", "-q", "-m", "mine"]);
    git(&root, &["rm", "-q", "--cached", "mine.txt"]);
    assert_eq!(
        cp.commit_paths(&all).unwrap(),
        ["a.txt", "mine.txt", "new.txt"]
    );
}
