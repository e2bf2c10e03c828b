//! Shared helpers for integration tests: a hermetic environment (own HOME,
//! no global or system git config, fixed author and dates) and small
//! builders for hand-made sessions.

pub mod pty;
pub mod stories;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temp project directory with its own HOME.
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        // npm, on its first run in a HOME without this, asks the registry
        // whether a newer npm exists: a network round trip and about 0.3 s
        // of CPU in every test that runs a node project, none of it wfx's.
        std::fs::write(home.join(".npmrc"), "update-notifier=false\n").unwrap();
        let root = root.canonicalize().unwrap();
        Env { tmp, root, home }
    }

    /// Apply the hermetic environment to any command.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test Author")
            .env("GIT_COMMITTER_EMAIL", "author@example.invalid")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("NO_COLOR", "1")
            .env("LANG", "C.UTF-8")
            .current_dir(&self.root);
    }

    /// `wfx` in the project root, hermetic.
    pub fn wfx(&self) -> assert_cmd::Command {
        let mut std_cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
        self.apply(&mut std_cmd);
        assert_cmd::Command::from_std(std_cmd)
    }

    /// Let a hermetic command find the real toolchains (rustup, cargo,
    /// pyenv) although HOME points elsewhere; only the tool homes are
    /// passed, nothing else of the environment.
    pub fn apply_toolchains(&self, cmd: &mut Command) {
        let real_home = std::env::var_os("HOME").map(PathBuf::from);
        for (var, dir) in [
            ("RUSTUP_HOME", ".rustup"),
            ("CARGO_HOME", ".cargo"),
            ("PYENV_ROOT", ".pyenv"),
        ] {
            let value = std::env::var_os(var).map(PathBuf::from).or_else(|| {
                real_home
                    .as_ref()
                    .map(|h| h.join(dir))
                    .filter(|p| p.exists())
            });
            if let Some(v) = value {
                cmd.env(var, v);
            }
        }
    }

    /// `wfx` in the project root, hermetic, with the real toolchains
    /// reachable (live runner tests).
    pub fn wfx_live(&self) -> assert_cmd::Command {
        let mut std_cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
        self.apply(&mut std_cmd);
        self.apply_toolchains(&mut std_cmd);
        assert_cmd::Command::from_std(std_cmd)
    }

    /// Run git in the project root (hermetic); panics on failure; returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        git_in(self, &self.root, args)
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// Copy a sample project from `fixtures/projects/<name>` into the root.
    pub fn copy_fixture_project(&self, name: &str) {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/projects")
            .join(name);
        copy_dir(&src, &self.root);
    }

    /// `git init` with one commit of everything in the root.
    pub fn git_init_commit(&self) {
        self.git(&["init", "-q", "-b", "main"]);
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", "initial"]);
    }
}

pub fn git_in(env: &Env, dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    env.apply(&mut cmd);
    cmd.current_dir(dir).args(args);
    let out = cmd.output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn copy_dir(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(src).unwrap();
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A hand-made session directory under `.workflow/active/<id>`.
pub fn make_session(env: &Env, id: &str, status: &str, tasks: &[(&str, &str)]) -> PathBuf {
    let dir = env.root.join(".workflow/active").join(id);
    std::fs::create_dir_all(dir.join(".task")).unwrap();
    std::fs::create_dir_all(dir.join(".process")).unwrap();
    let session = serde_json::json!({
        "session_id": id,
        "type": "test",
        "workflow_type": "test_session",
        "status": status,
        "description": format!("Tests for {id}"),
        "mode": "prompt",
        "input": format!("Tests for {id}"),
        "source_session_id": null,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "completed_at": null,
        "git": {"base_commit": null, "branch": null},
        "phases": [
            {"phase": 1, "name": "session_start", "status": "completed", "started_at": null, "completed_at": null}
        ],
        "wfx_version": "0.1.0"
    });
    std::fs::write(
        dir.join("workflow-session.json"),
        serde_json::to_string_pretty(&session).unwrap(),
    )
    .unwrap();
    for (task_id, task_status) in tasks {
        let task = serde_json::json!({
            "id": task_id,
            "title": format!("Task {task_id}"),
            "status": task_status,
            "meta": {"type": "test-gen"},
        });
        std::fs::write(
            dir.join(".task").join(format!("{task_id}.json")),
            serde_json::to_string_pretty(&task).unwrap(),
        )
        .unwrap();
    }
    dir
}

/// An empty directory to use as `PATH`, so tool detection (nextest,
/// python vs python3) does not depend on the machine running the tests.
pub fn empty_path(env: &Env) -> PathBuf {
    let dir = env.tmp.path().join("empty-bin");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && s.ends_with('Z')
        && s[..4].bytes().all(|c| c.is_ascii_digit())
}

/// Replace what legitimately differs between runs (timestamps, the wfx
/// version, the git commit) so snapshots compare everything else.
pub fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                match (k.as_str(), &val) {
                    ("wfx_version", serde_json::Value::String(_)) => *val = "[version]".into(),
                    ("base_commit", serde_json::Value::String(_)) => *val = "[commit]".into(),
                    _ => redact_json(val),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::String(s) if is_timestamp(s) => *v = "[timestamp]".into(),
        _ => {}
    }
}

/// [`redact_json`] for Markdown: RFC 3339 UTC timestamps become `[timestamp]`.
pub fn redact_text(text: &str) -> String {
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap();
    re.replace_all(text, "[timestamp]").into_owned()
}

/// Every file under `dir` (relative path → bytes), for comparing trees.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read(entry.path()).unwrap());
        }
    }
    out
}

/// Make libgit2 in this test process ignore the machine's system, global and
/// XDG git config (the in-process equivalent of `GIT_CONFIG_GLOBAL=/dev/null`
/// and `GIT_CONFIG_NOSYSTEM=1`), so library calls behave the same on every
/// machine. Call before opening any repository with git2.
pub fn hermetic_libgit2() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let empty = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-git-config");
        std::fs::create_dir_all(&empty).unwrap();
        for level in [
            git2::ConfigLevel::System,
            git2::ConfigLevel::XDG,
            git2::ConfigLevel::Global,
            git2::ConfigLevel::ProgramData,
        ] {
            // SAFETY: runs once, before any test in this process opens a
            // repository (every caller goes through this Once first).
            unsafe { git2::opts::set_search_path(level, empty.as_path()) }.unwrap();
        }
    });
}

impl Env {
    /// Run git in the project root and return raw stdout (for binary content).
    pub fn git_bytes(&self, args: &[&str]) -> Vec<u8> {
        let mut cmd = Command::new("git");
        self.apply(&mut cmd);
        cmd.args(args);
        let out = cmd.output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Run git in the project root; returns (success, stdout, stderr)
    /// without asserting, for commands expected to fail.
    pub fn git_try(&self, args: &[&str]) -> (bool, String, String) {
        let mut cmd = Command::new("git");
        self.apply(&mut cmd);
        cmd.args(args);
        let out = cmd.output().expect("git runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub fn write_bytes(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn read_bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.root.join(rel)).unwrap()
    }
}

/// What `tests/<tool>/install.sh` prints (it installs pinned npm packages
/// into a shared cache once; tests/npm_install.sh), or `None` when
/// `WFX_SKIP_NPM_TOOLS=1` skips the tests that need them. A failed install
/// fails the test loudly.
pub fn npm_tool(tool: &str) -> Option<PathBuf> {
    if std::env::var("WFX_SKIP_NPM_TOOLS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: WFX_SKIP_NPM_TOOLS=1 (tests/{tool} is not installed from npm)");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/{tool}/install.sh"));
    let out = Command::new("bash")
        .arg(&script)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tests/{tool}/install.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `fixtures/agents/<name>`: a fake agent CLI script.
pub fn fake_agent(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(name)
}

impl Env {
    /// A directory of symlinks `(link name, fake script)` to put first on
    /// `PATH`, e.g. `[("claude", "low-confidence")]`. Returns the directory.
    pub fn fake_agents(&self, links: &[(&str, &str)]) -> PathBuf {
        let bin = self.tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (link, script) in links {
            let path = bin.join(link);
            let _ = std::fs::remove_file(&path);
            std::os::unix::fs::symlink(fake_agent(script), &path).unwrap();
        }
        bin
    }

    /// `PATH` with `dir` first, then the inherited one.
    pub fn path_with(&self, dir: &Path) -> String {
        let mut parts = vec![dir.to_path_buf()];
        if let Some(p) = std::env::var_os("PATH") {
            parts.extend(std::env::split_paths(&p));
        }
        std::env::join_paths(parts)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

/// The names of the failing tests of a `wfx test --json` document.
pub fn failing_tests(doc: &serde_json::Value) -> std::collections::BTreeSet<String> {
    doc["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["test"].as_str().unwrap().to_string())
        .collect()
}

/// The exit code and the JSON document a `--json` command printed on
/// stdout; panics with both streams when stdout is not JSON.
pub fn json_output(out: &std::process::Output) -> (i32, serde_json::Value) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {stdout:?} stderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

/// `fixtures/outputs/<name>` as text (lossy UTF-8).
pub fn recorded(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/outputs")
        .join(name);
    String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()
}

/// The failures of a parsed run as the runner reports them in
/// `test-results.json` (`testing::results::build`).
pub fn failures_of(
    run: &wfx::testing::parse::ParsedRun,
) -> Vec<wfx::artifacts::test_results::Failure> {
    use wfx::testing::results::{RunFacts, build};
    build(
        run.clone(),
        RunFacts {
            command: "make test".into(),
            framework: wfx::testing::Framework::Custom,
            scope: wfx::artifacts::test_results::Scope::Full,
            exit_code: Some(1),
            timed_out_after: None,
            signal: None,
            duration_ms: 10,
            setup_ms: None,
            output_tail: "",
            output_log: None,
            truncated: false,
            started_at: None,
            previous: None,
            notes: Vec::new(),
        },
    )
    .failures
}

/// A `test-results.json` value holding `failures` (counts made up to match).
pub fn results_with(
    failures: Vec<wfx::artifacts::test_results::Failure>,
    parser: &str,
) -> wfx::artifacts::TestResults {
    use wfx::artifacts::test_results::{LayerDistribution, Scope};
    let failed = failures.len() as u32;
    wfx::artifacts::TestResults {
        command: "make test".into(),
        exit_code: Some(1),
        duration_ms: 10,
        setup_ms: None,
        scope: Scope::Full,
        framework: String::new(),
        parser: parser.into(),
        total: failed + 8,
        passed: 8,
        failed,
        skipped: 0,
        errors: 0,
        pass_rate: wfx::artifacts::test_results::pass_rate(8, failed, 0),
        layer_distribution: LayerDistribution::default(),
        failures,
        output_log: Some(".workflow/active/WFS-t/.process/test-output.log".into()),
        truncated: false,
        started_at: None,
        cases: Vec::new(),
        notes: Vec::new(),
        extra: Default::default(),
    }
}

/// `fixtures/agents/<name>` as a custom fix agent definition in a config.
/// `(iteration, scope, pass rate)` of every run in an `iteration-state.json`:
/// an iteration's retest tiers and its full-suite validation are records
/// of their own (DESIGN.md §10.4).
pub fn runs(state: &serde_json::Value) -> Vec<(u64, String, f64)> {
    state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["iteration"].as_u64().unwrap(),
                r["scope"].as_str().unwrap().to_string(),
                r["pass_rate"].as_f64().unwrap(),
            )
        })
        .collect()
}

pub fn fixer_config(fixer: &str) -> serde_json::Value {
    serde_json::json!({
        "agents": {
            "fix": "fixer",
            "definitions": {"fixer": {"command": [fake_agent(fixer).display().to_string()]}}
        }
    })
}

impl Env {
    /// A sample project for phase-5 tests: copied, `.workflow/wfx.json`
    /// written from `config`, committed in a fresh repository.
    /// The fixture projects' suites are all runner start-up, so by their
    /// timings no retest tier could save time: the retest tiers are what
    /// these tests exercise, so `cycle.skip_slow_tiers` is off unless the
    /// config sets it.
    pub fn cycle_project(&self, name: &str, config: &serde_json::Value) {
        self.copy_fixture_project(name);
        let mut config = config.clone();
        if config.get("cycle").is_none() {
            config["cycle"] = serde_json::json!({});
        }
        if config["cycle"].get("skip_slow_tiers").is_none() {
            config["cycle"]["skip_slow_tiers"] = serde_json::json!(false);
        }
        self.write(
            ".workflow/wfx.json",
            &serde_json::to_string_pretty(&config).unwrap(),
        );
        self.git_init_commit();
    }

    /// A run session's `run-state.json`: in `archives/` once the run
    /// finished (DESIGN.md §10.7), else in `active/`.
    pub fn run_state(&self, id: &str) -> serde_json::Value {
        let rel = |place: &str| format!(".workflow/{place}/{id}/.process/run-state.json");
        let rel = if self.root.join(rel("archives")).is_file() {
            rel("archives")
        } else {
            rel("active")
        };
        self.json(&rel)
    }

    /// A JSON file of the project, parsed.
    pub fn json(&self, rel: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Commit subjects of HEAD, newest first.
    pub fn subjects(&self) -> Vec<String> {
        self.git(&["log", "--format=%s"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// A directory outside the project for fixers' call counters and markers.
    pub fn state_dir(&self) -> PathBuf {
        let dir = self.tmp.path().join("fixer-state");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

/// What a tree snapshot keeps of one file: the bytes of files up to 8 MiB;
/// for bigger ones (sparse "huge" fixtures) size, inode and mtime, which
/// change with any write or atomic replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileDigest {
    Bytes(Vec<u8>),
    Meta { len: u64, ino: u64, mtime_ns: i128 },
}

/// Every file under `dir` (relative path → digest), for proving that a
/// command left files alone without reading huge files twice.
pub fn digest_tree(dir: &Path) -> std::collections::BTreeMap<String, FileDigest> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let meta = entry.metadata().unwrap();
        let digest = if meta.len() <= 8 << 20 {
            FileDigest::Bytes(std::fs::read(entry.path()).unwrap())
        } else {
            FileDigest::Meta {
                len: meta.len(),
                ino: meta.ino(),
                mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            }
        };
        out.insert(rel, digest);
    }
    out
}

/// Paths added, removed or changed between two snapshots, sorted.
pub fn changed_files(
    before: &std::collections::BTreeMap<String, FileDigest>,
    after: &std::collections::BTreeMap<String, FileDigest>,
) -> Vec<String> {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}

/// What a finished wfx process left: its exit code and its output as text.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// What a finished command printed, stdout then stderr, as text.
pub fn out_text(a: &assert_cmd::assert::Assert) -> String {
    let o = a.get_output();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run wfx in `env` with `args` to the end.
pub fn wfx_out(env: &Env, args: &[&str]) -> Out {
    let out = env.wfx().args(args).output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The text of the `<section id="…">` element of an HTML report.
pub fn html_section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!(r#"<section id="{id}""#))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = html[start..].find("</section>").unwrap() + start;
    &html[start..end]
}

impl Env {
    /// Fix both bugs of the `node-calc` sample (`max`, `slugify`) in the
    /// work tree, as a person would by hand.
    pub fn fix_node_calc(&self) {
        let math = self
            .read("src/math.js")
            .replace("if (values[i] < best)", "if (values[i] > best)");
        self.write("src/math.js", &math);
        let strings = self
            .read("src/strings.js")
            .replace(".replace(' ', '-')", ".replace(/\\s+/g, '-')");
        self.write("src/strings.js", &strings);
    }

    /// Phases 1–4 of the cycle tests' session, "Test the calculator".
    pub fn plan_calculator(&self) {
        self.wfx_live()
            .args(["test-fix-gen", "Test the calculator", "--plan-only"])
            .assert()
            .success();
    }

    /// `wfx test-cycle-execute ARGS` with the fixers' state kept in
    /// [`Env::state_dir`].
    pub fn cycle(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        self.wfx_live()
            .env("FIXER_STATE", self.state_dir())
            .arg("test-cycle-execute")
            .args(args)
            .assert()
    }
}

/// A file of a sample project under `fixtures/projects/`, as committed.
pub fn fixture_text(project: &str, rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/projects")
            .join(project)
            .join(rel),
    )
    .unwrap()
}
