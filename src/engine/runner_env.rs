//! The installed test runner, as the project's dependency directories
//! hold it. The sealed run reaches those directories as they are
//! (DESIGN.md §11.1), so a pytest plugin an agent installs into `.venv`
//! (a `pytest11` entry point, a `.pth` file, `sitecustomize.py`) or an
//! edit of `node_modules/jest-circus` decides the verdict, and wfx cannot
//! put such a change back. What it can do is notice it: the places a
//! runner or its plugins load from are read before and after every agent
//! call and every test run (the code under test runs too, and may write
//! there), and a change pauses the session for a person (`runner_edited`).
//!
//! Read, by bytes (links by target): in each Python virtualenv among the
//! dependency directories, the `.pth` files and `sitecustomize.py` /
//! `usercustomize.py` of `site-packages` (run at every start), every
//! `entry_points.txt` that declares `pytest11` plugins (pytest loads them
//! by itself), every file of `pytest`, `_pytest` and `pluggy`, and the
//! venv's `python*` and `pytest*` in `bin/`; in `node_modules`, every file
//! of the runners (`jest`, `jest-*`, `@jest/*`, `vitest`, `@vitest/*`,
//! `mocha`, `jasmine`, `ava`, `tap`, `uvu`) and their commands in `.bin`.
//! A library installed beside them is no change (the runner loads it only
//! when its configuration says so, and that is the test guard's), nor are
//! bytecode caches (running the tests writes them); bytes, not times, are
//! compared, so reinstalling the same versions is no change either.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{ObjectType, Oid};

use crate::error::{Error, Result};

/// What one entry is: a directory (by name only), a file's content, a
/// link's target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Oid),
    Link(std::path::PathBuf),
}

/// The runner's places under a project root, by project-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerEnv {
    entries: BTreeMap<String, Entry>,
}

/// Python packages that are the runner.
const PY_RUNNER: &[&str] = &["pytest", "_pytest", "pluggy", "py.py"];

/// Files of `site-packages` the interpreter runs at every start.
const PY_STARTUP: &[&str] = &["sitecustomize.py", "usercustomize.py"];

/// Files in a runner package walked at most (a bound on the cost of a
/// strange installation, not a limit any real runner reaches).
const MAX_FILES: usize = 20_000;

impl RunnerEnv {
    /// Read what the dependency directories under `root` hold of the
    /// runner (nothing when there are none).
    pub fn take(root: &Path) -> RunnerEnv {
        let mut env = RunnerEnv::default();
        for name in crate::git::DEPENDENCY_NAMES {
            let dir = root.join(name);
            if dir.join("pyvenv.cfg").is_file() {
                env.venv(root, &dir);
            } else if *name == "node_modules" && dir.is_dir() {
                env.node_modules(root, &dir);
            }
        }
        env
    }

    /// Nothing changed since `before`, else [`Error::RunnerEdited`] (which
    /// pauses a session) naming `agent` and the paths.
    pub fn unchanged_since(&self, before: &RunnerEnv, agent: &str) -> Result<()> {
        let changed = self.changed_since(before);
        if changed.is_empty() {
            return Ok(());
        }
        Err(Error::RunnerEdited {
            agent: agent.to_string(),
            changed,
        })
    }

    /// The paths whose entry was added, removed or changed since
    /// `before`, sorted.
    pub fn changed_since(&self, before: &RunnerEnv) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries
            .iter()
            .filter(|(p, e)| before.entries.get(*p) != Some(*e))
            .map(|(p, _)| p.clone())
            .collect();
        out.extend(
            before
                .entries
                .keys()
                .filter(|p| !self.entries.contains_key(*p))
                .cloned(),
        );
        out.sort();
        out
    }

    fn venv(&mut self, root: &Path, dir: &Path) {
        let runs_tests = |name: &str| {
            name.starts_with("python") || name.starts_with("pytest") || name.starts_with("py.test")
        };
        self.listing(root, &dir.join("bin"), runs_tests);
        self.listing(root, &dir.join("Scripts"), runs_tests);
        for lib in ["lib", "lib64"] {
            // `lib64` is often a link to `lib`: read once.
            let lib = dir.join(lib);
            if std::fs::symlink_metadata(&lib).is_ok_and(|m| m.is_dir()) {
                for python in read_dir(&lib) {
                    self.site_packages(root, &python.join("site-packages"));
                }
            }
        }
        self.site_packages(root, &dir.join("Lib").join("site-packages"));
    }

    fn site_packages(&mut self, root: &Path, dir: &Path) {
        for path in read_dir(dir) {
            let name = file_name(&path);
            if PY_RUNNER.contains(&name.as_str()) {
                self.tree(root, &path);
            } else if name.ends_with(".pth") || PY_STARTUP.contains(&name.as_str()) {
                self.add(root, &path);
            } else if name.ends_with(".dist-info") || name.ends_with(".egg-info") {
                // A package's plugins for pytest, which loads them itself.
                let entry_points = path.join("entry_points.txt");
                if std::fs::read_to_string(&entry_points).is_ok_and(|t| t.contains("pytest11")) {
                    self.add(root, &entry_points);
                }
            }
        }
    }

    fn node_modules(&mut self, root: &Path, dir: &Path) {
        for path in read_dir(dir) {
            let name = file_name(&path);
            if name == ".bin" {
                self.listing(root, &path, |command| {
                    is_node_runner(command.split('.').next().unwrap_or(command))
                });
            } else if matches!(name.as_str(), "@jest" | "@vitest") || is_node_runner(&name) {
                self.tree(root, &path);
            }
        }
    }

    /// The entries of `dir` that `wanted` names, not below.
    fn listing(&mut self, root: &Path, dir: &Path, wanted: impl Fn(&str) -> bool) {
        for path in read_dir(dir) {
            if wanted(&file_name(&path)) {
                self.add(root, &path);
            }
        }
    }

    /// Every file below `dir` (links not followed), bytecode left out.
    fn tree(&mut self, root: &Path, dir: &Path) {
        let walk = walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| e.file_name() != "__pycache__")
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_type().is_dir())
            .filter(|e| e.path().extension().is_none_or(|x| x != "pyc"))
            .take(MAX_FILES);
        for e in walk {
            self.add(root, e.path());
        }
    }

    fn add(&mut self, root: &Path, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let entry = if meta.file_type().is_symlink() {
            Entry::Link(std::fs::read_link(path).unwrap_or_default())
        } else if meta.is_dir() {
            Entry::Dir
        } else {
            let digest = std::fs::read(path)
                .ok()
                .and_then(|bytes| Oid::hash_object(ObjectType::Blob, &bytes).ok());
            match digest {
                Some(oid) => Entry::File(oid),
                None => return,
            }
        };
        self.entries
            .insert(crate::session::layout::rel_to(root, path), entry);
    }
}

/// A package of `node_modules` that is a test runner.
fn is_node_runner(name: &str) -> bool {
    matches!(
        name,
        "jest" | "vitest" | "mocha" | "jasmine" | "jasmine-core" | "ava" | "tap" | "uvu"
    ) || name.starts_with("jest-")
}

/// The entries of `dir`, sorted (none when it cannot be read).
fn read_dir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A virtualenv with pytest, a plugin-less package and `node_modules`
    /// with jest and another package.
    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sp = ".venv/lib/python3.11/site-packages";
        write(root, ".venv/pyvenv.cfg", "home = /usr/bin\n");
        write(root, ".venv/bin/activate", "# activate\n");
        write(root, &format!("{sp}/_pytest/runner.py"), "def run(): ...\n");
        write(root, &format!("{sp}/pytest/__init__.py"), "\n");
        write(root, &format!("{sp}/requests/api.py"), "def get(): ...\n");
        write(
            root,
            &format!("{sp}/requests-2.0.dist-info/METADATA"),
            "Name: requests\n",
        );
        write(root, &format!("{sp}/six.py"), "# six\n");
        write(root, "node_modules/jest-circus/build/run.js", "run()\n");
        write(root, "node_modules/@jest/core/build/cli.js", "cli()\n");
        write(root, "node_modules/left-pad/index.js", "pad()\n");
        dir
    }

    #[test]
    fn what_a_plugin_install_or_a_runner_edit_changes_is_found() {
        let sp = ".venv/lib/python3.11/site-packages";
        /// What is written, and the paths found changed.
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str]);
        let plugin = "def pytest_runtest_makereport(): ...\n";
        let cases: &[Case] = &[
            // A pytest plugin installed: the entry point that loads it.
            (
                "plugin",
                &[
                    ("{sp}/fake_plugin.py", plugin),
                    (
                        "{sp}/fake-1.0.dist-info/entry_points.txt",
                        "[pytest11]\nfake = fake_plugin\n",
                    ),
                ],
                &["{sp}/fake-1.0.dist-info/entry_points.txt"],
            ),
            ("pth", &[("{sp}/zz.pth", "import evil\n")], &["{sp}/zz.pth"]),
            (
                "startup",
                &[("{sp}/sitecustomize.py", "import evil\n")],
                &["{sp}/sitecustomize.py"],
            ),
            (
                "runner edit",
                &[("{sp}/_pytest/runner.py", "def run(): pass\n")],
                &["{sp}/_pytest/runner.py"],
            ),
            (
                "jest edit",
                &[("node_modules/jest-circus/build/run.js", "pass()\n")],
                &["node_modules/jest-circus/build/run.js"],
            ),
            (
                "scoped edit",
                &[("node_modules/@jest/core/build/cli.js", "x\n")],
                &["node_modules/@jest/core/build/cli.js"],
            ),
            (
                "jest command",
                &[("node_modules/.bin/jest", "#!/bin/sh\nexit 0\n")],
                &["node_modules/.bin/jest"],
            ),
            (
                "python",
                &[(".venv/bin/python", "#!/bin/sh\n")],
                &[".venv/bin/python"],
            ),
            // Running the tests, a library changed inside, the same bytes
            // written again: nothing.
            (
                "bytecode",
                &[
                    ("{sp}/_pytest/__pycache__/runner.cpython-311.pyc", "\0"),
                    ("{sp}/__pycache__/six.cpython-311.pyc", "\0"),
                ],
                &[],
            ),
            (
                "not a runner",
                &[
                    ("{sp}/requests/api.py", "def get(): pass\n"),
                    ("{sp}/six.py", "# six, patched\n"),
                    ("node_modules/left-pad/index.js", "x\n"),
                ],
                &[],
            ),
            (
                "same bytes",
                &[("{sp}/_pytest/runner.py", "def run(): ...\n")],
                &[],
            ),
            // A library installed, with its commands and console scripts.
            (
                "library",
                &[
                    ("{sp}/black/__init__.py", "\n"),
                    (
                        "{sp}/black-24.1.dist-info/entry_points.txt",
                        "[console_scripts]\nblack = black:main\n",
                    ),
                    (".venv/bin/black", "#!/usr/bin/env python\n"),
                    ("node_modules/lodash/index.js", "x\n"),
                    ("node_modules/.bin/prettier", "#!/bin/sh\n"),
                ],
                &[],
            ),
        ];
        for (what, writes, want) in cases {
            let dir = project();
            let root = dir.path();
            let before = RunnerEnv::take(root);
            for (rel, text) in *writes {
                write(root, &rel.replace("{sp}", sp), text);
            }
            let got = RunnerEnv::take(root).changed_since(&before);
            let want: Vec<String> = want.iter().map(|p| p.replace("{sp}", sp)).collect();
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_removed_runner_file_and_a_project_without_dependencies() {
        let dir = project();
        let root = dir.path();
        let before = RunnerEnv::take(root);
        std::fs::remove_file(root.join("node_modules/jest-circus/build/run.js")).unwrap();
        assert_eq!(
            RunnerEnv::take(root).changed_since(&before),
            ["node_modules/jest-circus/build/run.js"]
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(RunnerEnv::take(empty.path()), RunnerEnv::default());
    }
}
