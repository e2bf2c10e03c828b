//! Reading the project's source for the built-in analyzer: which files
//! are the project's (git decides: tracked and untracked files that are
//! not ignored; a walk outside git), which are tests, what each file
//! defines (cached), and which tests import a file. Heuristics by design:
//! every answer is a hint for a person or a fix agent, never a verdict.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Component, Path};
use std::rc::Rc;
use std::sync::OnceLock;

use regex::Regex;

use super::defs::{self, Def};

pub use crate::scan::findings::is_test_path;

/// Files bigger than this are not read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many files are indexed.
const MAX_FILES: usize = 20_000;
/// Source text kept in memory across lookups, at most; beyond it files are
/// read again when needed.
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Source language, from the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    Python,
    Rust,
    Js,
    Go,
    Java,
    Other,
}

impl Lang {
    pub fn of(path: &str) -> Lang {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Lang::Js,
            "go" => Lang::Go,
            "java" | "kt" => Lang::Java,
            _ => Lang::Other,
        }
    }
}

/// Markers of paths outside the project: standard libraries, installed
/// packages and runtimes.
pub fn is_foreign_path(path: &str) -> bool {
    const MARKERS: &[&str] = &[
        "site-packages",
        "dist-packages",
        "node_modules",
        "/lib/python",
        "lib/python3",
        "lib/python2",
        "/rustc/",
        ".cargo/registry",
        ".cargo/git",
        ".rustup/",
        "/usr/lib/",
        "/usr/local/lib/",
        "/usr/local/go/",
        "/usr/share/",
        "go/pkg/mod/",
        ".m2/repository",
        "<frozen",
        "<string>",
        "<anonymous>",
    ];
    path.starts_with("node:")
        || path.starts_with("internal/")
        || MARKERS.iter().any(|m| path.contains(m))
}

/// name → (file, index into that file's definitions).
type NameIndex = BTreeMap<String, Vec<(String, usize)>>;

/// The project's files, relative to the root, found once per analysis.
pub struct Project {
    pub root: std::path::PathBuf,
    /// Tracked and untracked-but-not-ignored files (git), or a walk's.
    files: Vec<String>,
    /// The listing came from git: a file on disk that is not listed is
    /// ignored (build output, dependencies).
    from_git: bool,
    cache: RefCell<BTreeMap<String, Option<Rc<Vec<String>>>>>,
    cached_bytes: std::cell::Cell<usize>,
    defs: RefCell<BTreeMap<String, Rc<Vec<Def>>>>,
    /// name → (file, index into that file's defs), non-test source only;
    /// built on first use per language.
    by_name: RefCell<BTreeMap<Lang, Rc<NameIndex>>>,
    /// Answers of [`Project::is_ignored`] (each asks the file system).
    ignored: RefCell<BTreeMap<String, bool>>,
}

/// Untracked files git does not ignore, relative to the work tree.
fn untracked_files(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Vec::new();
    };
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    // The root's entries but `.workflow/`: the session's files are not the
    // project's, and walking them on every analysis was most of its time.
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut walked = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name != ".workflow" && name != ".git" {
            opts.pathspec(name);
            walked = true;
        }
    }
    if !walked {
        return Vec::new();
    }
    opts.disable_pathspec_match(true);
    let Ok(statuses) = repo.statuses(Some(&mut opts)) else {
        return Vec::new();
    };
    statuses
        .iter()
        .filter(|e| e.status().contains(git2::Status::WT_NEW))
        .filter_map(|e| e.path().ok().map(str::to_string))
        .filter(|p| !p.starts_with(".workflow/"))
        .collect()
}

impl Project {
    pub fn scan(root: &Path) -> Project {
        use crate::phases::context::files::{Listing, list_files};
        let (mut files, from_git) = match list_files(root) {
            Ok((files, Listing::GitIndex)) => (files, true),
            Ok((files, Listing::Walk)) => (files, false),
            Err(_) => (Vec::new(), false),
        };
        if from_git {
            files.extend(untracked_files(root));
        }
        // Deleted-but-tracked files are not the project's any more.
        files.retain(|f| !from_git || root.join(f).is_file());
        files.sort();
        files.dedup();
        files.truncate(MAX_FILES);
        Project {
            root: root.to_path_buf(),
            files,
            from_git,
            cache: Default::default(),
            cached_bytes: Default::default(),
            defs: Default::default(),
            by_name: Default::default(),
            ignored: Default::default(),
        }
    }

    pub fn files(&self) -> &[String] {
        &self.files
    }

    pub fn contains(&self, rel: &str) -> bool {
        self.files.binary_search_by(|f| f.as_str().cmp(rel)).is_ok()
    }

    /// A file on disk that git ignores (build output such as a `dist/`
    /// regenerated by a `pretest` script): never a place to fix.
    pub fn is_ignored(&self, rel: &str) -> bool {
        if !self.from_git || self.contains(rel) {
            return false;
        }
        if let Some(&hit) = self.ignored.borrow().get(rel) {
            return hit;
        }
        let on_disk = self.root.join(rel).is_file();
        self.ignored.borrow_mut().insert(rel.to_string(), on_disk);
        on_disk
    }

    /// Project source a fix may change: listed, not test code.
    pub fn is_source(&self, rel: &str) -> bool {
        self.contains(rel) && !is_test_path(rel)
    }

    /// The file's lines (cached); `None` when unreadable or too big.
    pub fn lines(&self, rel: &str) -> Option<Rc<Vec<String>>> {
        if let Some(hit) = self.cache.borrow().get(rel) {
            return hit.clone();
        }
        let path = self.root.join(rel);
        let read = path
            .metadata()
            .ok()
            .filter(|m| m.is_file() && m.len() <= MAX_FILE_BYTES)
            .and_then(|_| std::fs::read(&path).ok())
            .map(|b| {
                Rc::new(
                    String::from_utf8_lossy(&b)
                        .lines()
                        .map(str::to_string)
                        .collect::<Vec<_>>(),
                )
            });
        let size = read
            .as_ref()
            .map_or(0, |l| l.iter().map(|s| s.len() + 1).sum::<usize>());
        if self.cached_bytes.get() + size <= CACHE_BYTES {
            self.cached_bytes.set(self.cached_bytes.get() + size);
            self.cache
                .borrow_mut()
                .insert(rel.to_string(), read.clone());
        }
        read
    }

    /// What `rel` defines (cached).
    pub fn defs(&self, rel: &str) -> Rc<Vec<Def>> {
        if let Some(hit) = self.defs.borrow().get(rel) {
            return hit.clone();
        }
        let found = Rc::new(
            self.lines(rel)
                .map(|l| defs::definitions(&l, Lang::of(rel)))
                .unwrap_or_default(),
        );
        self.defs
            .borrow_mut()
            .insert(rel.to_string(), found.clone());
        found
    }

    /// Every definition named `name` in the project's non-test source of
    /// `lang`, as (file, definition).
    pub fn named(&self, name: &str, lang: Lang) -> Vec<(String, Def)> {
        let index = self.name_index(lang);
        index
            .get(name)
            .map(|hits| {
                hits.iter()
                    .map(|(file, i)| (file.clone(), self.defs(file)[*i].clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn name_index(&self, lang: Lang) -> Rc<NameIndex> {
        if let Some(hit) = self.by_name.borrow().get(&lang) {
            return hit.clone();
        }
        let mut index = NameIndex::new();
        if lang != Lang::Other {
            for file in self
                .files
                .iter()
                .filter(|f| Lang::of(f) == lang && !is_test_path(f))
            {
                for (i, d) in self.defs(file).iter().enumerate() {
                    if !d.is_test {
                        index
                            .entry(d.name.clone())
                            .or_default()
                            .push((file.clone(), i));
                    }
                }
            }
        }
        let index = Rc::new(index);
        self.by_name.borrow_mut().insert(lang, index.clone());
        index
    }

    /// Map a path as printed by a tool to a file under the root (listed,
    /// or on disk and ignored). `hint` is a directory-ish suffix that
    /// disambiguates bare names (a Go package path, a Java package
    /// directory).
    pub fn resolve(&self, printed: &str, hint: Option<&str>) -> Option<String> {
        let mut p = printed.trim().trim_start_matches("file://").to_string();
        if is_foreign_path(&p) {
            return None;
        }
        let root_str = self.root.to_string_lossy();
        if let Some(rest) = p.strip_prefix(root_str.as_ref()) {
            p = rest.trim_start_matches('/').to_string();
        }
        while let Some(rest) = p.strip_prefix("./") {
            p = rest.to_string();
        }
        if p.is_empty() {
            return None;
        }
        let candidate = Path::new(&p);
        if candidate
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return None;
        }
        let known = |rel: &str| self.contains(rel) || self.is_ignored(rel);
        if !candidate.is_absolute() && known(&p) {
            return Some(p);
        }
        if candidate.is_absolute() {
            // Printed on another machine or from another checkout: the
            // longest suffix that names a project file.
            let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
            for i in 0..parts.len() {
                let suffix = parts[i..].join("/");
                if parts.len() - i >= 2 && known(&suffix) {
                    return Some(suffix);
                }
            }
            return None;
        }
        // A bare or partial name (Go prints `calc_test.go`, Java `Calc.java`).
        let tail = format!("/{p}");
        let mut hits: Vec<&String> = self.files.iter().filter(|f| f.ends_with(&tail)).collect();
        if hits.len() > 1
            && let Some(h) = hint
        {
            let preferred: Vec<&String> = hits
                .iter()
                .copied()
                .filter(|f| {
                    let dir = f.rsplit_once('/').map_or("", |(d, _)| d);
                    !dir.is_empty()
                        && (h.ends_with(dir)
                            || dir.ends_with(h)
                            || h.ends_with(&format!("/{}", dir.rsplit('/').next().unwrap_or(dir))))
                })
                .collect();
            if !preferred.is_empty() {
                hits = preferred;
            }
        }
        hits.first().map(|s| s.to_string())
    }
}

/// A function's name and line span (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FnSpan {
    pub name: String,
    /// The class, `impl` type or receiver type it belongs to.
    pub owner: Option<String>,
    pub start: u32,
    pub end: u32,
    /// A test function (by attribute, annotation or name).
    pub is_test: bool,
}

impl FnSpan {
    /// `start-end`, or just `start` for a one-line function.
    pub fn lines(&self) -> String {
        if self.end > self.start {
            format!("{}-{}", self.start, self.end)
        } else {
            self.start.to_string()
        }
    }
}

impl From<&Def> for FnSpan {
    fn from(d: &Def) -> FnSpan {
        FnSpan {
            name: d.name.clone(),
            owner: d.owner.clone(),
            start: d.start,
            end: d.end,
            is_test: d.is_test,
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// Import specifiers written in a file (module paths, require() strings).
pub fn imports(lines: &[String], lang: Lang) -> Vec<String> {
    static PY_FROM: OnceLock<Regex> = OnceLock::new();
    static PY_IMPORT: OnceLock<Regex> = OnceLock::new();
    static JS: OnceLock<Regex> = OnceLock::new();
    static RUST: OnceLock<Regex> = OnceLock::new();
    static JAVA: OnceLock<Regex> = OnceLock::new();
    let mut out = Vec::new();
    for l in lines {
        match lang {
            Lang::Python => {
                if let Some(c) = re(&PY_FROM, r"^\s*from\s+([\w.]+)\s+import\s+(.+)").captures(l) {
                    out.push(c[1].to_string());
                    for name in c[2].split(',') {
                        let n = name.trim().trim_matches(|ch| ch == '(' || ch == ')');
                        let n = n.split_whitespace().next().unwrap_or("");
                        if !n.is_empty() {
                            out.push(format!("{}.{n}", &c[1]));
                        }
                    }
                } else if let Some(c) = re(&PY_IMPORT, r"^\s*import\s+([\w.]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Js => {
                for c in re(
                    &JS,
                    r#"(?:require\s*\(\s*|import\s*\(\s*|from\s+|import\s+)['"]([^'"]+)['"]"#,
                )
                .captures_iter(l)
                {
                    out.push(c[1].to_string());
                }
            }
            Lang::Rust => {
                if let Some(c) = re(&RUST, r"^\s*(?:pub\s+)?use\s+([\w:]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Java => {
                if let Some(c) = re(&JAVA, r"^\s*import\s+(?:static\s+)?([\w.]+)").captures(l) {
                    out.push(c[1].to_string());
                }
            }
            Lang::Go | Lang::Other => {}
        }
    }
    out
}

/// Whether the test file `test` (with its lines) uses the source file `src`.
pub fn test_uses(test: &str, test_lines: &[String], src: &str) -> bool {
    let lang = Lang::of(test);
    if lang != Lang::of(src) {
        return false;
    }
    let stem_path = src.rsplit_once('.').map_or(src, |(s, _)| s);
    let file_stem = stem_path.rsplit('/').next().unwrap_or(stem_path);
    match lang {
        Lang::Python => {
            let module = stem_path.trim_end_matches("/__init__").replace('/', ".");
            let module = module.strip_prefix("src.").unwrap_or(&module).to_string();
            imports(test_lines, lang)
                .iter()
                .any(|m| *m == module || m.starts_with(&format!("{module}.")))
        }
        Lang::Js => {
            let dir = test.rsplit_once('/').map_or("", |(d, _)| d);
            imports(test_lines, lang).iter().any(|spec| {
                if !spec.starts_with('.') {
                    return false;
                }
                let joined = normalize(&format!("{dir}/{spec}"));
                let joined_stem = joined
                    .rsplit_once('.')
                    .filter(|(_, e)| !e.contains('/'))
                    .map_or(joined.as_str(), |(s, _)| s);
                joined == src || joined_stem == stem_path || format!("{joined}/index") == stem_path
            })
        }
        Lang::Rust => {
            // Integration tests use the crate; in-file tests use `super`.
            test.starts_with("tests/") && src.starts_with("src/")
        }
        Lang::Go => test.rsplit_once('/').map(|(d, _)| d) == src.rsplit_once('/').map(|(d, _)| d),
        Lang::Java => test_lines.iter().any(|l| {
            l.split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == file_stem)
        }),
        Lang::Other => false,
    }
}

/// Resolve `.` and `..` in a relative path.
pub(super) fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_scan_lists_new_files_but_not_the_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let write = |rel: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x = 1\n").unwrap();
        };
        write("src/app.py");
        let repo = git2::Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("src/app.py")).unwrap();
        index.write().unwrap();
        write("src/new.py");
        write("lib/extra.py");
        write(".workflow/active/WFS-x/notes.py");
        let project = Project::scan(root);
        assert_eq!(
            project.files(),
            ["lib/extra.py", "src/app.py", "src/new.py"]
        );
    }

    #[test]
    fn calls_and_imports() {
        let py = lines("from calc.ops import add, divide\nimport calc.auth\n");
        assert!(test_uses("tests/test_ops.py", &py, "calc/ops.py"));
        assert!(test_uses("tests/test_ops.py", &py, "calc/auth.py"));
        assert!(!test_uses("tests/test_ops.py", &py, "calc/other.py"));
        let js = lines(
            "const { max } = require('../src/math.js');\nimport { x } from '../src/strings';\n",
        );
        assert!(test_uses("test/math.test.js", &js, "src/math.js"));
        assert!(test_uses("test/math.test.js", &js, "src/strings.js"));
        assert!(!test_uses("test/math.test.js", &js, "src/other.js"));
    }

    #[test]
    fn foreign_paths() {
        for p in [
            "lib/python3.11/importlib/__init__.py",
            "/usr/lib/python3/dist-packages/x.py",
            "node:internal/test_runner/test",
            "/home/u/.cargo/registry/src/x.rs",
            "/rustc/abc/library/core/src/panicking.rs",
            "node_modules/jest/index.js",
        ] {
            assert!(is_foreign_path(p), "{p}");
        }
        assert!(!is_foreign_path("src/lib.rs"));
    }
}
