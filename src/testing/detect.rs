//! Which test command a project uses (DESIGN.md §6.1). The config's
//! `test.command` wins; otherwise marker files decide, in the order Cargo,
//! Python, Node, Go, Maven, Gradle, Makefile. Pure apart from reading a few
//! small files under the root and looking programs up on `PATH`.

use std::path::Path;

use crate::artifacts::config::TestConfig;

named_enum! {
    plain
    /// The test runner a command drives; decides which flags wfx adds, which
    /// parser reads the results and how a subset is filtered. Its name is
    /// what `test-results.json` and task `meta.test_framework` record.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Framework {
        Cargo = "cargo",
        Nextest = "nextest",
        Pytest = "pytest",
        Jest = "jest",
        Vitest = "vitest",
        NodeTest = "node-test",
        Go = "go",
        Maven = "maven",
        Make = "make",
        Custom = "custom",
    }
}

/// A detected test command and what decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub framework: Framework,
    /// Shell command line as the user would type it (run with `sh -c` in
    /// the project root).
    pub command: String,
    /// Files (relative to the root) that decided it; `.workflow/wfx.json`
    /// when the config named the command.
    pub signals: Vec<String>,
    /// Where the tests live, as a glob (e.g. `tests/test_*.py`).
    pub test_pattern: String,
    /// Main test directory, relative (`.` when tests sit next to the code).
    pub test_directory: String,
    /// Glob (relative to the root) of JUnit XML files the command writes by
    /// itself: `test.junit` from the config, or the runner's default report
    /// directory (Maven Surefire, Gradle).
    pub junit: Option<String>,
    /// The package.json scripts behind `npm test` & co., so a filter can be
    /// put where the runner reads it (DESIGN.md §10.4).
    pub script: Option<PackageScript>,
    /// The doctest command run next to nextest, which does not run
    /// doctests (`cargo test --doc --no-fail-fast`; see docs/runner.md).
    pub doctests: Option<String>,
    /// What a user should know about what this command runs (e.g. that
    /// doctests do not run); copied into every run's notes.
    pub notes: Vec<String>,
}

impl Detected {
    /// A command of a known framework with nothing else known about the
    /// project (no script, no report glob, no layout).
    pub fn new(framework: Framework, command: impl Into<String>) -> Detected {
        Detected {
            framework,
            command: command.into(),
            signals: Vec::new(),
            test_pattern: String::new(),
            test_directory: String::new(),
            junit: None,
            script: None,
            doctests: None,
            notes: Vec::new(),
        }
    }
}

/// The `test` script a package-manager command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageScript {
    /// `npm`, `yarn`, `pnpm` or `bun`.
    pub manager: String,
    /// The script's text, as package.json has it.
    pub test: String,
    /// package.json has a `pretest` script (npm runs it before `test`).
    pub pretest: bool,
}

/// The doctest command detection adds next to nextest.
pub const NEXTEST_DOCTESTS: &str = "cargo test --doc --no-fail-fast";

/// The note when nextest runs without doctests although the crate has a
/// library (and so may have doctests).
pub const NEXTEST_NO_DOCTESTS: &str = "nextest does not run doctests; they are not part of these results (leave test.command unset to have wfx run `cargo test --doc` after nextest, or add it to the command)";

/// Why there is no test command, and what to do: the one message of
/// `wfx test` and of `test-fix-gen`'s check before planning. `dir` is the
/// project root relative to the workspace (empty: `.`), `config` the
/// config file's path.
pub fn not_detected(dir: &str, config: &str) -> String {
    let dir = if dir.is_empty() { "." } else { dir };
    format!(
        "no test command detected in {dir}: looked for {}. Set one in {config}, e.g. {{\"test\": {{\"command\": \"make check\"}}}}",
        MARKERS.join(", ")
    )
}

/// Marker files detection looks at, in order; named in the "no test command"
/// message so the user knows what was looked for.
pub const MARKERS: &[&str] = &[
    "Cargo.toml",
    "pyproject.toml",
    "pytest.ini",
    "setup.cfg",
    "tox.ini",
    "conftest.py",
    "package.json",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Makefile",
];

/// Detect the project's test command. `None` when nothing was found.
pub fn detect(root: &Path, config: &TestConfig) -> Option<Detected> {
    detect_with(root, config, &super::program::on_path)
}

/// [`detect`] with the `PATH` lookup injected (tests decide whether
/// `cargo-nextest` or `python` "exist").
pub fn detect_with(
    root: &Path,
    config: &TestConfig,
    has_program: &dyn Fn(&str) -> bool,
) -> Option<Detected> {
    let mut found = if let Some(command) = config.command.as_deref().map(str::trim) {
        if command.is_empty() {
            None
        } else {
            Some(from_command(root, command))
        }
    } else {
        from_markers(root, has_program)
    }?;
    if let Some(glob) = config.junit.as_deref().filter(|g| !g.trim().is_empty()) {
        found.junit = Some(glob.trim().to_string());
    }
    Some(found)
}

/// A configured command: the framework is judged from its text (and, for
/// `npm test` and friends, from the package.json script it runs).
fn from_command(root: &Path, command: &str) -> Detected {
    let mut framework = classify_command(command);
    if framework == Framework::Custom && is_package_script(command) {
        framework = read_package_json(root)
            .and_then(|p| test_script(&p))
            .map(|s| classify_command(&s))
            .unwrap_or(Framework::Custom);
    }
    let (test_pattern, test_directory) = layout_for(root, framework);
    let script = is_package_script(command)
        .then(|| package_script(root, command))
        .flatten();
    let mut notes = Vec::new();
    let doc_step = command.contains("--doc");
    if framework == Framework::Nextest && !doc_step && has_rust_library(root) {
        notes.push(NEXTEST_NO_DOCTESTS.to_string());
    }
    Detected {
        framework,
        command: command.to_string(),
        signals: vec![".workflow/wfx.json".into()],
        test_pattern,
        test_directory,
        junit: default_junit(framework, command),
        script,
        doctests: None,
        notes,
    }
}

/// The package.json scripts a package-manager command runs.
fn package_script(root: &Path, command: &str) -> Option<PackageScript> {
    let pkg = read_package_json(root)?;
    let test = test_script(&pkg)?;
    let manager = command.split_whitespace().next()?.to_string();
    Some(PackageScript {
        manager,
        test,
        pretest: pkg
            .get("scripts")
            .and_then(|s| s.get("pretest"))
            .and_then(|s| s.as_str())
            .is_some_and(|s| !s.trim().is_empty()),
    })
}

/// A package with a library target (and so, possibly, doctests): a
/// `src/lib.rs` or a `[lib]` section. A virtual workspace manifest is not
/// one.
pub fn has_rust_library(root: &Path) -> bool {
    let manifest = read_small(&root.join("Cargo.toml")).unwrap_or_default();
    let has_package = manifest.lines().any(|l| l.trim() == "[package]");
    has_package
        && (root.join("src/lib.rs").is_file() || manifest.lines().any(|l| l.trim() == "[lib]"))
}

/// The project's virtualenv Python, else the one on PATH.
fn python_program(root: &Path, has_program: &dyn Fn(&str) -> bool) -> String {
    [".venv/bin/python", "venv/bin/python"]
        .into_iter()
        .find(|p| root.join(p).is_file())
        .map(str::to_string)
        .unwrap_or_else(|| {
            if has_program("python") || !has_program("python3") {
                "python".into()
            } else {
                "python3".into()
            }
        })
}

/// A package's test script, else a test runner among its dependencies.
fn npm_runner(root: &Path, pkg: &serde_json::Value) -> Option<(Framework, String)> {
    if let Some(script) = test_script(pkg) {
        let command = match package_manager(root) {
            "npm" => "npm test".to_string(),
            other => format!("{other} test"),
        };
        return Some((classify_command(&script), command));
    }
    // No usable test script: a test runner among the dependencies.
    match ["vitest", "jest"]
        .into_iter()
        .find(|dep| has_dependency(pkg, dep))
    {
        Some("vitest") => Some((Framework::Vitest, "npx vitest run".into())),
        Some(_) => Some((Framework::Jest, "npx jest".into())),
        None => None,
    }
}

fn from_markers(root: &Path, has_program: &dyn Fn(&str) -> bool) -> Option<Detected> {
    let exists = |name: &str| root.join(name).is_file();
    let detected = |framework: Framework, command: String, signals: Vec<String>| {
        let (test_pattern, test_directory) = layout_for(root, framework);
        let junit = default_junit(framework, &command);
        let script = is_package_script(&command)
            .then(|| package_script(root, &command))
            .flatten();
        Some(Detected {
            framework,
            command,
            signals,
            test_pattern,
            test_directory,
            junit,
            script,
            doctests: None,
            notes: Vec::new(),
        })
    };

    if exists("Cargo.toml") {
        let (framework, command) = if has_program("cargo-nextest") {
            (Framework::Nextest, "cargo nextest run --no-fail-fast")
        } else {
            (Framework::Cargo, "cargo test --no-fail-fast")
        };
        let mut found = detected(framework, command.into(), vec!["Cargo.toml".into()])?;
        // nextest does not run doctests; users who ran `cargo test` before
        // expect them, so wfx runs them after nextest (docs/runner.md).
        if framework == Framework::Nextest && has_rust_library(root) {
            found.doctests = Some(NEXTEST_DOCTESTS.to_string());
        }
        return Some(found);
    }

    let py_signals: Vec<String> = [
        "pyproject.toml",
        "pytest.ini",
        "setup.cfg",
        "tox.ini",
        "conftest.py",
    ]
    .iter()
    .filter(|n| exists(n))
    .map(|n| n.to_string())
    .collect();
    if !py_signals.is_empty() {
        let python = python_program(root, has_program);
        return detected(Framework::Pytest, format!("{python} -m pytest"), py_signals);
    }

    if exists("package.json")
        && let Some(pkg) = read_package_json(root)
        && let Some((framework, command)) = npm_runner(root, &pkg)
    {
        return detected(framework, command, vec!["package.json".into()]);
    }

    if exists("go.mod") {
        return detected(
            Framework::Go,
            "go test -json ./...".into(),
            vec!["go.mod".into()],
        );
    }

    if exists("pom.xml") {
        let mvn = if exists("mvnw") { "./mvnw" } else { "mvn" };
        return detected(
            Framework::Maven,
            format!("{mvn} test"),
            vec!["pom.xml".into()],
        );
    }

    for gradle in ["build.gradle", "build.gradle.kts"] {
        if exists(gradle) {
            let cmd = if exists("gradlew") {
                "./gradlew test"
            } else {
                "gradle test"
            };
            return detected(Framework::Custom, cmd.into(), vec![gradle.into()]);
        }
    }

    if exists("Makefile") && makefile_has_test_target(&read_small(&root.join("Makefile"))?) {
        return detected(Framework::Make, "make test".into(), vec!["Makefile".into()]);
    }
    None
}

/// Judge the framework from a command line's text.
pub fn classify_command(command: &str) -> Framework {
    let words: Vec<&str> = command.split_whitespace().collect();
    let has = |w: &str| {
        words
            .iter()
            .any(|x| *x == w || x.ends_with(&format!("/{w}")))
    };
    let seq = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    if has("cargo-nextest") || seq("cargo", "nextest") {
        Framework::Nextest
    } else if seq("cargo", "test") {
        Framework::Cargo
    } else if has("pytest") || has("py.test") {
        Framework::Pytest
    } else if has("vitest") {
        Framework::Vitest
    } else if has("jest") {
        Framework::Jest
    } else if words
        .iter()
        .position(|w| *w == "node" || w.ends_with("/node"))
        .is_some_and(|i| {
            words[i + 1..]
                .iter()
                .take_while(|w| w.starts_with('-'))
                .any(|w| *w == "--test")
        })
    {
        Framework::NodeTest
    } else if seq("go", "test") {
        Framework::Go
    } else if has("mvn") || has("mvnw") {
        Framework::Maven
    } else if words
        .first()
        .is_some_and(|w| *w == "make" || w.ends_with("/make"))
    {
        Framework::Make
    } else {
        Framework::Custom
    }
}

/// `npm test`, `npm run test`, `yarn test`, `pnpm test`, `bun run test`:
/// commands that run the package.json `test` script.
pub fn is_package_script(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["npm" | "yarn" | "pnpm" | "bun", "test", ..]
            | ["npm" | "yarn" | "pnpm" | "bun", "run", "test", ..]
            | ["npm" | "yarn" | "pnpm" | "bun", "run-script", "test", ..]
            | ["npm", "t", ..]
    )
}

fn package_manager(root: &Path) -> &'static str {
    if root.join("pnpm-lock.yaml").is_file() {
        "pnpm"
    } else if root.join("yarn.lock").is_file() {
        "yarn"
    } else if root.join("bun.lockb").is_file() || root.join("bun.lock").is_file() {
        "bun run"
    } else {
        "npm"
    }
}

fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > 4 * 1024 * 1024 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn read_package_json(root: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&read_small(&root.join("package.json"))?).ok()
}

/// The `test` script, unless it is npm's placeholder that only fails.
fn test_script(pkg: &serde_json::Value) -> Option<String> {
    let script = pkg.get("scripts")?.get("test")?.as_str()?.trim();
    if script.is_empty() || script.contains("no test specified") {
        return None;
    }
    Some(script.to_string())
}

fn has_dependency(pkg: &serde_json::Value, name: &str) -> bool {
    ["dependencies", "devDependencies"]
        .iter()
        .any(|k| pkg.get(k).and_then(|d| d.get(name)).is_some())
}

fn makefile_has_test_target(text: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("test")
            .is_some_and(|rest| rest.starts_with(':') && !rest.starts_with(":="))
    })
}

/// JUnit reports the runner writes on its own (Surefire, Gradle).
fn default_junit(framework: Framework, command: &str) -> Option<String> {
    match framework {
        Framework::Maven => Some("**/target/surefire-reports/TEST-*.xml".into()),
        Framework::Custom if command.contains("gradle") => {
            Some("**/build/test-results/**/TEST-*.xml".into())
        }
        _ => None,
    }
}

/// Test glob and directory for a framework, judged by what exists.
fn layout_for(root: &Path, framework: Framework) -> (String, String) {
    let dir = |names: &[&str]| {
        names
            .iter()
            .find(|n| root.join(n).is_dir())
            .map(|n| n.to_string())
    };
    match framework {
        Framework::Cargo | Framework::Nextest => ("tests/*.rs".into(), "tests".into()),
        Framework::Pytest => {
            let d = dir(&["tests", "test"]).unwrap_or_else(|| ".".into());
            let pattern = if d == "." {
                "test_*.py".into()
            } else {
                format!("{d}/test_*.py")
            };
            (pattern, d)
        }
        Framework::Jest | Framework::Vitest | Framework::NodeTest => {
            let d = dir(&["test", "tests", "__tests__"]).unwrap_or_else(|| ".".into());
            let pattern = if d == "." {
                "**/*.test.js".into()
            } else {
                format!("{d}/**/*.test.js")
            };
            (pattern, d)
        }
        Framework::Go => ("**/*_test.go".into(), ".".into()),
        Framework::Maven => ("src/test/java/**/*Test.java".into(), "src/test/java".into()),
        Framework::Make | Framework::Custom => {
            let d = dir(&["tests", "test", "spec"]).unwrap_or_else(|| ".".into());
            (
                if d == "." {
                    "*".into()
                } else {
                    format!("{d}/*")
                },
                d,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn det(files: &[(&str, &str)], programs: &[&str]) -> Option<Detected> {
        let dir = project(files);
        detect_with(dir.path(), &TestConfig::default(), &|p| {
            programs.contains(&p)
        })
    }

    /// Files, programs on PATH, then the expected framework, command, signals.
    type Row = (
        Vec<(&'static str, &'static str)>,
        Vec<&'static str>,
        Framework,
        &'static str,
        Vec<&'static str>,
    );

    #[test]
    fn markers_decide_framework_and_command() {
        let table: Vec<Row> = vec![
            (
                vec![("Cargo.toml", "")],
                vec![],
                Framework::Cargo,
                "cargo test --no-fail-fast",
                vec!["Cargo.toml"],
            ),
            (
                vec![("Cargo.toml", "")],
                vec!["cargo-nextest"],
                Framework::Nextest,
                "cargo nextest run --no-fail-fast",
                vec!["Cargo.toml"],
            ),
            (
                vec![("pyproject.toml", ""), ("conftest.py", "")],
                vec!["python"],
                Framework::Pytest,
                "python -m pytest",
                vec!["pyproject.toml", "conftest.py"],
            ),
            (
                vec![("tox.ini", "")],
                vec!["python3"],
                Framework::Pytest,
                "python3 -m pytest",
                vec!["tox.ini"],
            ),
            (
                vec![("setup.cfg", ""), (".venv/bin/python", "")],
                vec!["python"],
                Framework::Pytest,
                ".venv/bin/python -m pytest",
                vec!["setup.cfg"],
            ),
            (
                vec![("package.json", r#"{"scripts":{"test":"node --test"}}"#)],
                vec![],
                Framework::NodeTest,
                "npm test",
                vec!["package.json"],
            ),
            (
                vec![
                    ("package.json", r#"{"scripts":{"test":"jest --ci"}}"#),
                    ("yarn.lock", ""),
                ],
                vec![],
                Framework::Jest,
                "yarn test",
                vec!["package.json"],
            ),
            (
                vec![
                    ("package.json", r#"{"scripts":{"test":"vitest"}}"#),
                    ("pnpm-lock.yaml", ""),
                ],
                vec![],
                Framework::Vitest,
                "pnpm test",
                vec!["package.json"],
            ),
            (
                vec![("package.json", r#"{"scripts":{"test":"mocha"}}"#)],
                vec![],
                Framework::Custom,
                "npm test",
                vec!["package.json"],
            ),
            (
                vec![(
                    "package.json",
                    r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"},"devDependencies":{"vitest":"3"}}"#,
                )],
                vec![],
                Framework::Vitest,
                "npx vitest run",
                vec!["package.json"],
            ),
            (
                vec![("go.mod", "module x\n")],
                vec![],
                Framework::Go,
                "go test -json ./...",
                vec!["go.mod"],
            ),
            (
                vec![("pom.xml", "")],
                vec![],
                Framework::Maven,
                "mvn test",
                vec!["pom.xml"],
            ),
            (
                vec![("pom.xml", ""), ("mvnw", "")],
                vec![],
                Framework::Maven,
                "./mvnw test",
                vec!["pom.xml"],
            ),
            (
                vec![("build.gradle", "")],
                vec![],
                Framework::Custom,
                "gradle test",
                vec!["build.gradle"],
            ),
            (
                vec![("Makefile", "all:\n\ttrue\ntest: all\n\t./run-tests\n")],
                vec![],
                Framework::Make,
                "make test",
                vec!["Makefile"],
            ),
        ];
        for (files, programs, framework, command, signals) in table {
            let d = det(&files, &programs).unwrap_or_else(|| panic!("nothing for {files:?}"));
            assert_eq!(d.framework, framework, "{files:?}");
            assert_eq!(d.command, command, "{files:?}");
            assert_eq!(d.signals, signals, "{files:?}");
        }
    }

    #[test]
    fn nothing_detected_without_markers() {
        assert_eq!(det(&[("README.md", "")], &[]), None);
        assert_eq!(det(&[("Makefile", "build:\n\tcc x.c\n")], &[]), None);
        assert_eq!(
            det(&[("package.json", r#"{"scripts":{"build":"tsc"}}"#)], &[]),
            None
        );
    }

    #[test]
    fn cargo_wins_over_other_markers() {
        let d = det(
            &[
                ("Cargo.toml", ""),
                ("package.json", "{}"),
                ("pyproject.toml", ""),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(d.framework, Framework::Cargo);
    }

    #[test]
    fn config_command_wins_and_is_classified() {
        let dir = project(&[
            ("Cargo.toml", ""),
            ("package.json", r#"{"scripts":{"test":"jest"}}"#),
        ]);
        for (command, want) in [
            ("pytest -x tests", Framework::Pytest),
            ("cargo nextest run", Framework::Nextest),
            ("cargo test --workspace", Framework::Cargo),
            ("npx vitest run", Framework::Vitest),
            ("npm test", Framework::Jest),
            (
                "node --experimental-vm-modules --test test/",
                Framework::NodeTest,
            ),
            ("go test ./...", Framework::Go),
            ("mvn -q test", Framework::Maven),
            ("make check", Framework::Make),
            ("./run-tests.sh", Framework::Custom),
        ] {
            let config = TestConfig {
                command: Some(command.into()),
                junit: Some("out/*.xml".into()),
                ..TestConfig::default()
            };
            let d = detect_with(dir.path(), &config, &|_| true).unwrap();
            assert_eq!(d.framework, want, "{command}");
            assert_eq!(d.command, command);
            assert_eq!(d.signals, vec![".workflow/wfx.json"]);
            assert_eq!(d.junit.as_deref(), Some("out/*.xml"));
        }
    }

    #[test]
    fn layout_follows_existing_directories() {
        let d = det(
            &[("pyproject.toml", ""), ("tests/test_a.py", "")],
            &["python"],
        )
        .unwrap();
        assert_eq!(
            (d.test_pattern.as_str(), d.test_directory.as_str()),
            ("tests/test_*.py", "tests")
        );
        let d = det(
            &[
                ("package.json", r#"{"scripts":{"test":"node --test"}}"#),
                ("test/a.test.js", ""),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            (d.test_pattern.as_str(), d.test_directory.as_str()),
            ("test/**/*.test.js", "test")
        );
        let d = det(&[("pom.xml", "")], &[]).unwrap();
        assert_eq!(
            d.junit.as_deref(),
            Some("**/target/surefire-reports/TEST-*.xml")
        );
    }

    #[test]
    fn nextest_runs_doctests_of_a_library_or_says_it_does_not() {
        let lib = [
            ("Cargo.toml", "[package]\nname = \"k\"\n"),
            ("src/lib.rs", ""),
        ];
        let d = det(&lib, &["cargo-nextest"]).unwrap();
        assert_eq!(d.framework, Framework::Nextest);
        assert_eq!(d.doctests.as_deref(), Some(NEXTEST_DOCTESTS));
        assert!(d.notes.is_empty());
        // A binary crate has no doctests; plain cargo test runs them itself.
        let bin = [
            ("Cargo.toml", "[package]\nname = \"k\"\n"),
            ("src/main.rs", ""),
        ];
        assert_eq!(det(&bin, &["cargo-nextest"]).unwrap().doctests, None);
        assert_eq!(det(&lib, &[]).unwrap().doctests, None);
        let ws = [("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n")];
        assert_eq!(det(&ws, &["cargo-nextest"]).unwrap().doctests, None);
        // A configured nextest command is the user's: it runs as written,
        // and every run says that doctests are not part of it.
        let dir = project(&lib);
        for (command, note) in [
            ("cargo nextest run", true),
            ("cargo nextest run && cargo test --doc", false),
        ] {
            let config = TestConfig {
                command: Some(command.into()),
                ..TestConfig::default()
            };
            let d = detect_with(dir.path(), &config, &|_| true).unwrap();
            assert_eq!(d.doctests, None);
            assert_eq!(
                d.notes.contains(&NEXTEST_NO_DOCTESTS.to_string()),
                note,
                "{command}"
            );
        }
    }

    #[test]
    fn package_scripts_are_kept_for_filters() {
        let d = det(
            &[(
                "package.json",
                r#"{"scripts":{"test":"node --test test/*.test.js","pretest":"tsc"}}"#,
            )],
            &[],
        )
        .unwrap();
        assert_eq!(
            d.script,
            Some(PackageScript {
                manager: "npm".into(),
                test: "node --test test/*.test.js".into(),
                pretest: true,
            })
        );
        let d = det(
            &[
                ("package.json", r#"{"scripts":{"test":"jest"}}"#),
                ("yarn.lock", ""),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(d.script.unwrap().manager, "yarn");
        let d = det(&[("go.mod", "module x\n")], &[]).unwrap();
        assert_eq!(d.script, None);
    }

    #[test]
    fn framework_names_round_trip() {
        for f in Framework::ALL {
            assert_eq!(Framework::from_name(f.as_str()), Some(f));
        }
        assert_eq!(Framework::NodeTest.as_str(), "node-test");
    }
}
