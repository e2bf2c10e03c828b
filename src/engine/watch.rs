//! `--watch` (DESIGN.md §10.7): waiting in-process for a person's fix.
//!
//! The project's files are polled (size and modification time), which
//! needs no platform watcher and sees every editor's way of saving: a
//! write in place, or a temp file renamed over the original. A change is
//! acted on once the tree has been still for [`SETTLE`], so an editor's
//! save sequence (backup, write, rename) is one retest. `.workflow/`,
//! `.git/` and git-ignored files are not watched: wfx's own files, the
//! test runners' caches and build output change without a person.
//!
//! Enter on a terminal retests at once: one thread reads stdin lines for
//! the whole process (a second reader would swallow every other line).

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::ports::Wake;
use crate::error::Result;
use crate::session::Workspace;

/// How long the tree must stay still after a change before it counts.
pub const SETTLE: Duration = Duration::from_millis(500);
/// How often the tree is looked at (less often when looking takes long).
const POLL: Duration = Duration::from_millis(150);
/// Directories never watched, whatever `.gitignore` says.
const NEVER: [&str; 2] = [".git", ".workflow"];

/// Size and modification time of every watched file, by relative path.
type Stamps = BTreeMap<String, (u64, Option<SystemTime>)>;

/// Wait under `root` until a file is saved, Enter is pressed (when stdin
/// is a terminal) or `interrupted()` says Ctrl-C came; `watching(enter)`
/// once the files are being watched.
pub fn wait(
    root: &Path,
    watching: &mut dyn FnMut(bool),
    interrupted: &dyn Fn() -> bool,
) -> Result<Wake> {
    let mut tree = Tree::new(root);
    let enter = std::io::stdin().is_terminal();
    let lines = enter.then(stdin_lines);
    if let Some(rx) = lines {
        // Keys pressed while the tests ran are not a request for this wait.
        while rx.lock().is_ok_and(|rx| rx.try_recv().is_ok()) {}
    }
    let (base, _) = tree.stamps();
    watching(enter);
    let mut last = base.clone();
    let mut moved_at: Option<Instant> = None;
    let mut pause = POLL;
    loop {
        if interrupted() {
            return Ok(Wake::Interrupted);
        }
        if let Some(rx) = lines
            && rx.lock().is_ok_and(|rx| rx.try_recv().is_ok())
        {
            return Ok(Wake::Enter);
        }
        std::thread::sleep(pause);
        let (now, took) = tree.stamps();
        // A big tree is looked at less often: at most a third of the time.
        pause = POLL.max(took * 2);
        if now != last {
            last = now;
            moved_at = Some(Instant::now());
        } else if moved_at.is_some_and(|t| t.elapsed() >= SETTLE) {
            moved_at = None;
            let changed = changed(&base, &last);
            if !changed.is_empty() {
                return Ok(Wake::Files(changed));
            }
        }
    }
}

/// The paths whose stamp differs (added, removed or changed), sorted.
fn changed(before: &Stamps, after: &Stamps) -> Vec<String> {
    let mut out: Vec<String> = after
        .iter()
        .filter(|(p, s)| before.get(*p) != Some(s))
        .map(|(p, _)| p.clone())
        .chain(before.keys().filter(|p| !after.contains_key(*p)).cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The watched tree: the project, its git ignore rules, and what they
/// said about each path so far (asked once per path, not once per look).
struct Tree<'a> {
    root: &'a Path,
    /// The repository the project is in (the project may be a directory
    /// of it), and the project's place in its work tree (`""` or `dir/`).
    repo: Option<(git2::Repository, String)>,
    ignored: HashMap<String, bool>,
}

impl<'a> Tree<'a> {
    fn new(root: &'a Path) -> Tree<'a> {
        let repo = git2::Repository::discover(root).ok().and_then(|repo| {
            let workdir = repo.workdir()?.canonicalize().ok()?;
            let inside = root.canonicalize().ok()?;
            let prefix = Workspace::new(&workdir).rel(&inside);
            let prefix = if prefix.is_empty() {
                prefix
            } else {
                format!("{prefix}/")
            };
            Some((repo, prefix))
        });
        Tree {
            root,
            repo,
            ignored: HashMap::new(),
        }
    }

    fn is_ignored(&mut self, rel: String, dir: bool) -> bool {
        let Some((repo, prefix)) = &self.repo else {
            return false;
        };
        *self.ignored.entry(rel).or_insert_with_key(|rel| {
            let asked = format!("{prefix}{rel}{}", if dir { "/" } else { "" });
            repo.is_path_ignored(asked).unwrap_or(false)
        })
    }

    /// Every watched file's stamp, and how long looking took.
    fn stamps(&mut self) -> (Stamps, Duration) {
        let started = Instant::now();
        let root = self.root;
        let ws = Workspace::new(root);
        let mut out = Stamps::new();
        let mut walker = walkdir::WalkDir::new(root).follow_links(false).into_iter();
        while let Some(entry) = walker.next() {
            let Ok(entry) = entry else { continue };
            if entry.depth() == 0 {
                continue;
            }
            let dir = entry.file_type().is_dir();
            let never =
                entry.depth() == 1 && NEVER.contains(&entry.file_name().to_string_lossy().as_ref());
            if never || self.is_ignored(ws.rel(entry.path()), dir) {
                if dir {
                    walker.skip_current_dir();
                }
                continue;
            }
            if dir {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            out.insert(ws.rel(entry.path()), (meta.len(), meta.modified().ok()));
        }
        (out, started.elapsed())
    }
}

/// The process's one stdin reader: a line per Enter.
fn stdin_lines() -> &'static Mutex<Receiver<()>> {
    static LINES: OnceLock<Mutex<Receiver<()>>> = OnceLock::new();
    LINES.get_or_init(|| {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            while stdin.lock().read_line(&mut line).is_ok_and(|n| n > 0) {
                line.clear();
                if tx.send(()).is_err() {
                    break;
                }
            }
        });
        Mutex::new(rx)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_saves_is_one_wake_naming_the_file_and_ignored_files_none() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git2::Repository::init(root).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n*.pyc\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".workflow/active")).unwrap();
        std::fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
        let dir = root.to_path_buf();
        let mut writer = None;
        let started = Instant::now();
        let woke = wait(
            root,
            &mut |_| {
                let dir = dir.clone();
                writer = Some(std::thread::spawn(move || {
                    // wfx's own files, ignored output: no wake.
                    std::fs::write(dir.join(".workflow/active/state.json"), "{}").unwrap();
                    std::fs::create_dir_all(dir.join("build")).unwrap();
                    std::fs::write(dir.join("build/out.o"), "o").unwrap();
                    std::fs::write(dir.join("src/a.pyc"), "c").unwrap();
                    std::thread::sleep(Duration::from_millis(900));
                    // An editor's save: a temp file, then renamed over the file.
                    std::fs::write(dir.join("src/.a.py.swp"), "x = 2\n").unwrap();
                    std::thread::sleep(Duration::from_millis(100));
                    std::fs::rename(dir.join("src/.a.py.swp"), dir.join("src/a.py")).unwrap();
                }));
            },
            &|| false,
        )
        .unwrap();
        writer.unwrap().join().unwrap();
        assert_eq!(woke, Wake::Files(vec!["src/a.py".into()]));
        assert!(
            started.elapsed() >= Duration::from_millis(1000) + SETTLE,
            "acted before the saves settled"
        );
    }

    /// A project that is a directory of its repository: the repository's
    /// ignore rules still apply to it.
    #[test]
    fn a_project_inside_a_repository_follows_the_repositorys_ignore_rules() {
        let tmp = tempfile::tempdir().unwrap();
        git2::Repository::init(tmp.path()).unwrap();
        std::fs::write(tmp.path().join(".gitignore"), "node_modules/\n*.log\n").unwrap();
        let root = tmp.path().join("web");
        std::fs::create_dir_all(root.join("node_modules/pkg")).unwrap();
        std::fs::write(root.join("node_modules/pkg/index.js"), "1").unwrap();
        std::fs::write(root.join("server.log"), "a").unwrap();
        std::fs::write(root.join("app.js"), "1").unwrap();
        let mut tree = Tree::new(&root);
        let (stamps, _) = tree.stamps();
        assert_eq!(stamps.keys().collect::<Vec<_>>(), ["app.js"]);
    }

    #[test]
    fn ctrl_c_ends_the_wait() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            wait(tmp.path(), &mut |_| {}, &|| true).unwrap(),
            Wake::Interrupted
        );
    }
}
