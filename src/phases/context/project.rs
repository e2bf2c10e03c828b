//! Project type (web UI, API service, CLI, library, full-stack, desktop
//! app) from manifests and file layout, with a confidence and the signals
//! that gave it; and the frameworks named in the manifests.

use std::collections::{BTreeMap, BTreeSet};

use super::files::{FileClass, Kind, file_name, parent_dir};
use crate::artifacts::context::ProjectType;

/// A manifest's path and (bounded) text.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub path: String,
    pub text: String,
}

/// Names wfx reads as manifests.
pub fn is_manifest(path: &str) -> bool {
    let name = file_name(path);
    matches!(
        name,
        "Cargo.toml"
            | "package.json"
            | "pyproject.toml"
            | "setup.cfg"
            | "setup.py"
            | "Pipfile"
            | "go.mod"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

named_enum! {
    plain
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Kind2 {
        WebUi = "web-ui",
        ApiService = "api-service",
        Cli = "cli",
        Library = "library",
        DesktopApp = "desktop-app",
    }
}

/// Dependency names that say what a project is, per ecosystem.
const DEPS: &[(&str, Kind2, &[&str])] = &[
    (
        "npm",
        Kind2::WebUi,
        &[
            "react",
            "react-dom",
            "vue",
            "svelte",
            "@angular/core",
            "preact",
            "solid-js",
            "next",
            "nuxt",
            "@sveltejs/kit",
            "lit",
            "ember-source",
            "@remix-run/react",
            "astro",
            "gatsby",
        ],
    ),
    (
        "npm",
        Kind2::ApiService,
        &[
            "express",
            "fastify",
            "koa",
            "@nestjs/core",
            "@hapi/hapi",
            "hapi",
            "restify",
            "@trpc/server",
            "hono",
            "apollo-server",
            "@apollo/server",
        ],
    ),
    (
        "npm",
        Kind2::Cli,
        &["commander", "yargs", "@oclif/core", "oclif", "meow", "cac"],
    ),
    ("npm", Kind2::DesktopApp, &["electron"]),
    (
        "cargo",
        Kind2::WebUi,
        &["yew", "leptos", "dioxus", "sycamore"],
    ),
    (
        "cargo",
        Kind2::ApiService,
        &[
            "axum",
            "actix-web",
            "rocket",
            "warp",
            "poem",
            "tide",
            "tonic",
        ],
    ),
    (
        "cargo",
        Kind2::Cli,
        &["clap", "structopt", "argh", "pico-args", "lexopt"],
    ),
    (
        "cargo",
        Kind2::DesktopApp,
        &["egui", "eframe", "iced", "tauri", "gtk", "gtk4"],
    ),
    (
        "python",
        Kind2::ApiService,
        &[
            "flask",
            "django",
            "fastapi",
            "starlette",
            "aiohttp",
            "tornado",
            "sanic",
            "falcon",
            "bottle",
            "pyramid",
            "quart",
            "litestar",
        ],
    ),
    ("python", Kind2::WebUi, &["streamlit", "dash", "gradio"]),
    ("python", Kind2::Cli, &["click", "typer", "fire", "docopt"]),
    (
        "python",
        Kind2::DesktopApp,
        &["pyqt5", "pyqt6", "pyside6", "kivy"],
    ),
    (
        "go",
        Kind2::ApiService,
        &[
            "github.com/gin-gonic/gin",
            "github.com/labstack/echo",
            "github.com/go-chi/chi",
            "github.com/gorilla/mux",
            "github.com/gofiber/fiber",
            "google.golang.org/grpc",
        ],
    ),
    (
        "go",
        Kind2::Cli,
        &[
            "github.com/spf13/cobra",
            "github.com/urfave/cli",
            "github.com/alecthomas/kong",
        ],
    ),
    (
        "java",
        Kind2::ApiService,
        &[
            "spring-boot-starter-web",
            "spring-boot-starter-webflux",
            "jakarta.ws.rs",
            "javax.ws.rs",
            "micronaut-http",
            "quarkus-resteasy",
        ],
    ),
    (
        "java",
        Kind2::Cli,
        &["picocli", "commons-cli", "jcommander"],
    ),
];

/// Test frameworks and tools named in manifests, reported as frameworks.
const TEST_DEPS: &[(&str, &[&str])] = &[
    (
        "npm",
        &[
            "jest",
            "vitest",
            "mocha",
            "ava",
            "@playwright/test",
            "cypress",
            "@testing-library/react",
        ],
    ),
    (
        "cargo",
        &[
            "proptest",
            "quickcheck",
            "rstest",
            "insta",
            "criterion",
            "mockall",
        ],
    ),
    (
        "python",
        &[
            "pytest",
            "hypothesis",
            "tox",
            "nox",
            "coverage",
            "pytest-cov",
        ],
    ),
    ("go", &["github.com/stretchr/testify"]),
    (
        "java",
        &["junit", "junit-jupiter", "testng", "mockito-core"],
    ),
];

fn ecosystem(path: &str) -> Option<&'static str> {
    let name = file_name(path);
    Some(match name {
        "package.json" => "npm",
        "Cargo.toml" => "cargo",
        "pyproject.toml" | "setup.cfg" | "setup.py" | "Pipfile" => "python",
        n if n.starts_with("requirements") => "python",
        "go.mod" => "go",
        "pom.xml" | "build.gradle" | "build.gradle.kts" => "java",
        _ => return None,
    })
}

/// Dependency names a manifest declares (lowercased).
pub fn dependencies(m: &Manifest) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match ecosystem(&m.path) {
        Some("npm") => {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&m.text) {
                for key in [
                    "dependencies",
                    "devDependencies",
                    "peerDependencies",
                    "optionalDependencies",
                ] {
                    if let Some(obj) = v[key].as_object() {
                        out.extend(obj.keys().map(|k| k.to_ascii_lowercase()));
                    }
                }
            }
        }
        Some("cargo") => {
            let mut in_deps = false;
            for line in m.text.lines() {
                let t = line.trim();
                if t.starts_with('[') {
                    let header = t.trim_matches(|c| c == '[' || c == ']');
                    in_deps = header.ends_with("dependencies");
                    // [dependencies.serde] style tables.
                    if let Some((table, name)) = header.rsplit_once('.')
                        && table.ends_with("dependencies")
                    {
                        out.insert(name.trim_matches('"').to_ascii_lowercase());
                    }
                    continue;
                }
                if in_deps && let Some((name, _)) = t.split_once('=') {
                    let name = name.trim().trim_matches('"');
                    if !name.is_empty() && !name.starts_with('#') {
                        out.insert(name.to_ascii_lowercase());
                    }
                }
            }
        }
        Some(eco) => {
            // Python, Go and Java manifests: any token that looks like a
            // package name; matched against known names only. Python names
            // have no dots (`tool.pytest.ini_options` names pytest); Go
            // module paths and Java coordinates do.
            let lower = m.text.to_ascii_lowercase();
            let keep_dots = eco != "python";
            for token in lower.split(|c: char| {
                !(c.is_ascii_alphanumeric()
                    || matches!(c, '-' | '_' | '@')
                    || (keep_dots && matches!(c, '.' | '/')))
            }) {
                if !token.is_empty() {
                    out.insert(token.to_string());
                    // Go versions (`/v5`) and Maven coordinates split differently.
                    if let Some((base, v)) = token.rsplit_once('/')
                        && v.starts_with('v')
                        && v[1..].chars().all(|c| c.is_ascii_digit())
                    {
                        out.insert(base.to_string());
                    }
                }
            }
        }
        None => {}
    }
    out
}

/// The package name a manifest declares, if any (used to match
/// description keywords against the project's own name).
pub fn package_name(m: &Manifest) -> Option<String> {
    match file_name(&m.path) {
        "package.json" => serde_json::from_str::<serde_json::Value>(&m.text)
            .ok()?
            .get("name")?
            .as_str()
            .map(str::to_string),
        "Cargo.toml" | "pyproject.toml" => {
            let mut section = "";
            for line in m.text.lines() {
                let t = line.trim();
                if t.starts_with('[') {
                    section = t;
                    continue;
                }
                if matches!(section, "[package]" | "[project]" | "[tool.poetry]")
                    && let Some(rest) = t.strip_prefix("name")
                    && let Some(v) = rest.trim_start().strip_prefix('=')
                {
                    return Some(v.trim().trim_matches('"').trim_matches('\'').to_string());
                }
            }
            None
        }
        "go.mod" => super::mapping::go_module_path(&m.text)
            .map(|p| p.rsplit('/').next().unwrap_or(&p).to_string()),
        "pom.xml" => {
            let start = m.text.find("<artifactId>")? + "<artifactId>".len();
            let end = m.text[start..].find("</artifactId>")?;
            Some(m.text[start..start + end].trim().to_string())
        }
        _ => None,
    }
}

/// Signals listed per project type at most; the rest are counted.
const MAX_SIGNALS: usize = 5;

/// What was found: project type and frameworks.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    pub project_type: ProjectType,
    pub frameworks: Vec<String>,
}

/// Decide the project type from manifests (only those within two
/// directories of the root) and the file layout.
pub fn detect(files: &[String], classes: &[FileClass], manifests: &[Manifest]) -> Detection {
    let mut signals = Signals::new();
    let mut frameworks = BTreeSet::new();
    for m in manifests {
        manifest_signals(m, files, &mut signals, &mut frameworks);
    }
    layout_signals(files, classes, &mut signals);
    Detection {
        project_type: decide(&signals),
        frameworks: frameworks.into_iter().collect(),
    }
}

/// Weighted reasons for each kind of project.
type Signals = BTreeMap<Kind2, Vec<(f64, String)>>;

/// What one manifest says: its framework dependencies and entry points.
fn manifest_signals(
    m: &Manifest,
    files: &[String],
    signals: &mut Signals,
    frameworks: &mut BTreeSet<String>,
) {
    let mut add = |k: Kind2, w: f64, s: String| signals.entry(k).or_default().push((w, s));
    let Some(eco) = ecosystem(&m.path) else {
        return;
    };
    let deps = dependencies(m);
    for (e, kind, names) in DEPS {
        if *e != eco {
            continue;
        }
        for name in names.iter().filter(|n| deps.contains(**n)) {
            let short = name.rsplit('/').next().unwrap_or(name);
            frameworks.insert(short.to_string());
            add(*kind, 0.6, format!("{} depends on {name}", m.path));
        }
    }
    for (e, names) in TEST_DEPS {
        if *e == eco {
            for name in names.iter().filter(|n| deps.contains(**n)) {
                frameworks.insert(name.rsplit('/').next().unwrap_or(name).to_string());
            }
        }
    }
    entry_signals(m, files, &mut add);
}

/// What a manifest's entry points say: a binary, a library, scripts.
fn entry_signals(m: &Manifest, files: &[String], add: &mut dyn FnMut(Kind2, f64, String)) {
    let dir = parent_dir(&m.path);
    let has = |rel: &str| {
        let p = if dir.is_empty() {
            rel.to_string()
        } else {
            format!("{dir}/{rel}")
        };
        files.binary_search(&p).is_ok()
    };
    let has_dir = |rel: &str| {
        let p = if dir.is_empty() {
            format!("{rel}/")
        } else {
            format!("{dir}/{rel}/")
        };
        let i = files.partition_point(|f| f.as_str() < p.as_str());
        files.get(i).is_some_and(|f| f.starts_with(&p))
    };
    match file_name(&m.path) {
        "Cargo.toml" => {
            let bin = m.text.contains("[[bin]]") || has("src/main.rs") || has_dir("src/bin");
            if bin {
                add(
                    Kind2::Cli,
                    0.45,
                    format!(
                        "{} builds a binary (src/main.rs, src/bin/ or [[bin]])",
                        m.path
                    ),
                );
            }
            if has("src/lib.rs") {
                add(
                    Kind2::Library,
                    0.6,
                    format!("{} has a library target (src/lib.rs)", m.path),
                );
            }
        }
        "package.json" => package_json_signals(m, add),
        "pyproject.toml" | "setup.cfg" | "setup.py" => python_signals(m, add),
        "go.mod" => {
            if has("main.go") || has_dir("cmd") {
                add(
                    Kind2::Cli,
                    0.4,
                    format!("{} module has a main package (main.go or cmd/)", m.path),
                );
            } else {
                add(
                    Kind2::Library,
                    0.5,
                    format!("{} module has no main package", m.path),
                );
            }
        }
        "pom.xml" | "build.gradle" | "build.gradle.kts" => {
            add(
                Kind2::Library,
                0.3,
                format!("{} builds a JVM artifact", m.path),
            );
        }
        _ => {}
    }
}

/// A package.json: a `bin`, or `main`/`exports`, or neither.
fn package_json_signals(m: &Manifest, add: &mut dyn FnMut(Kind2, f64, String)) {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&m.text) {
        if v.get("bin").is_some() {
            add(Kind2::Cli, 0.6, format!("{} declares \"bin\"", m.path));
        }
        if v.get("main").is_some() || v.get("exports").is_some() {
            add(
                Kind2::Library,
                0.4,
                format!("{} declares \"main\"/\"exports\"", m.path),
            );
        }
        if v.get("bin").is_none() && v.get("main").is_none() && v.get("exports").is_none() {
            add(
                Kind2::Library,
                0.3,
                format!("{} has no entry point, server or UI dependency", m.path),
            );
        }
    }
}

/// A Python package: console scripts, or a distributable package.
fn python_signals(m: &Manifest, add: &mut dyn FnMut(Kind2, f64, String)) {
    let t = &m.text;
    if t.contains("[project.scripts]")
        || t.contains("[tool.poetry.scripts]")
        || t.contains("console_scripts")
    {
        add(
            Kind2::Cli,
            0.6,
            format!("{} declares console scripts", m.path),
        );
    } else if t.contains("[project]")
        || t.contains("[tool.poetry]")
        || t.contains("setup(")
        || t.contains("[metadata]")
    {
        add(
            Kind2::Library,
            0.5,
            format!(
                "{} declares a distributable package without console scripts",
                m.path
            ),
        );
    }
}

/// What the file layout says: UI components, API directories, entry points.
fn layout_signals(files: &[String], classes: &[FileClass], signals: &mut Signals) {
    let mut add = |k: Kind2, w: f64, s: String| signals.entry(k).or_default().push((w, s));
    let count = |pred: &dyn Fn(&str) -> bool| {
        files
            .iter()
            .zip(classes)
            .filter(|(f, c)| c.kind == Kind::Source && pred(f))
            .count()
    };
    let ui_files = count(&|f| {
        let ext = f.rsplit_once('.').map_or("", |(_, e)| e);
        matches!(ext, "jsx" | "tsx" | "vue" | "svelte")
    });
    if ui_files > 0 {
        add(
            Kind2::WebUi,
            0.35,
            format!("{ui_files} component file(s) (.jsx/.tsx/.vue/.svelte)"),
        );
    }
    if files
        .iter()
        .any(|f| f == "index.html" || f == "public/index.html" || f == "src/index.html")
    {
        add(Kind2::WebUi, 0.25, "an index.html page".into());
    }
    let api_dirs = count(&|f| {
        f.split('/').rev().skip(1).any(|d| {
            matches!(
                d,
                "routes" | "controllers" | "handlers" | "endpoints" | "api"
            )
        })
    });
    if api_dirs > 0 {
        add(
            Kind2::ApiService,
            0.3,
            format!(
                "{api_dirs} source file(s) under routes/, controllers/, handlers/, endpoints/ or api/"
            ),
        );
    }
    if files.iter().any(|f| {
        let n = file_name(f);
        n.starts_with("openapi.") || n.starts_with("swagger.")
    }) {
        add(
            Kind2::ApiService,
            0.35,
            "an OpenAPI/Swagger document".into(),
        );
    }
    if files.iter().any(|f| file_name(f) == "__main__.py") {
        add(Kind2::Cli, 0.35, "a __main__.py entry point".into());
    }
}

/// The most likely kind; full-stack when both UI and API are likely.
fn decide(signals: &Signals) -> ProjectType {
    // Independent evidence combines like probabilities (noisy-or), capped:
    // layout and manifests never make wfx certain.
    let score =
        |v: &[(f64, String)]| (1.0 - v.iter().fold(1.0, |acc, (w, _)| acc * (1.0 - w))).min(0.95);
    // Many manifests (monorepos, vendored trees) repeat the same signal:
    // name the first few and count the rest.
    let shown = |v: &[(f64, String)]| -> Vec<String> {
        let mut out: Vec<String> = v.iter().take(MAX_SIGNALS).map(|s| s.1.clone()).collect();
        if v.len() > MAX_SIGNALS {
            out.push(format!(
                "… and {} more signal(s) of the same kind",
                v.len() - MAX_SIGNALS
            ));
        }
        out
    };
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    let mut scored: Vec<(Kind2, f64)> = signals.iter().map(|(k, v)| (*k, score(v))).collect();
    // Highest score first; on a tie the more specific kind (enum order) wins.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));

    let ui = scored
        .iter()
        .find(|(k, _)| *k == Kind2::WebUi)
        .map_or(0.0, |s| s.1);
    let api = scored
        .iter()
        .find(|(k, _)| *k == Kind2::ApiService)
        .map_or(0.0, |s| s.1);
    if ui >= 0.5 && api >= 0.5 {
        let mut sig = shown(&signals[&Kind2::WebUi]);
        sig.extend(shown(&signals[&Kind2::ApiService]));
        ProjectType {
            kind: "full-stack".into(),
            confidence: round2(ui.min(api)),
            signals: sig,
        }
    } else if let Some((kind, s)) = scored.first() {
        ProjectType {
            kind: kind.as_str().into(),
            confidence: round2(*s),
            signals: shown(&signals[kind]),
        }
    } else {
        ProjectType {
            kind: "unknown".into(),
            confidence: 0.0,
            signals: vec!["no manifest, framework dependency or entry point was recognised".into()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::files::file_class;
    use super::*;

    fn run(files: &[&str], manifests: &[(&str, &str)]) -> Detection {
        let mut files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        files.sort();
        let classes: Vec<FileClass> = files.iter().map(|f| file_class(f)).collect();
        let ms: Vec<Manifest> = manifests
            .iter()
            .map(|(p, t)| Manifest {
                path: p.to_string(),
                text: t.to_string(),
            })
            .collect();
        detect(&files, &classes, &ms)
    }

    #[test]
    fn rust_library_crate() {
        let d = run(
            &["Cargo.toml", "src/lib.rs", "src/stats.rs"],
            &[("Cargo.toml", "[package]\nname = \"x\"\n\n[dependencies]\n")],
        );
        assert_eq!(d.project_type.kind, "library");
        assert_eq!(d.project_type.confidence, 0.6);
        assert_eq!(
            d.project_type.signals,
            ["Cargo.toml has a library target (src/lib.rs)"]
        );
        assert!(d.frameworks.is_empty());
    }

    #[test]
    fn rust_cli_with_clap() {
        let d = run(
            &["Cargo.toml", "src/main.rs", "src/lib.rs"],
            &[(
                "Cargo.toml",
                "[package]\nname = \"x\"\n[dependencies]\nclap = { version = \"4\" }\n[dev-dependencies.insta]\nversion = \"1\"\n",
            )],
        );
        assert_eq!(d.project_type.kind, "cli");
        assert_eq!(d.project_type.confidence, 0.78);
        assert_eq!(d.frameworks, ["clap", "insta"]);
    }

    #[test]
    fn full_stack_node_app() {
        let d = run(
            &["package.json", "src/App.tsx", "src/routes/users.ts"],
            &[(
                "package.json",
                r#"{"dependencies": {"react": "18", "express": "4"}, "devDependencies": {"vitest": "1"}}"#,
            )],
        );
        assert_eq!(d.project_type.kind, "full-stack");
        assert_eq!(d.frameworks, ["express", "react", "vitest"]);
        assert!(d.project_type.confidence >= 0.7, "{:?}", d.project_type);
    }

    #[test]
    fn python_api_and_library() {
        let d = run(
            &["pyproject.toml", "app/main.py"],
            &[(
                "pyproject.toml",
                "[project]\nname='svc'\ndependencies = [\"fastapi>=0.100\", \"uvicorn\"]\n",
            )],
        );
        assert_eq!(d.project_type.kind, "api-service");
        assert_eq!(d.frameworks, ["fastapi"]);
        let d = run(
            &["pyproject.toml", "calc/ops.py"],
            &[(
                "pyproject.toml",
                "[project]\nname = \"py-calc\"\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
            )],
        );
        assert_eq!(d.project_type.kind, "library");
        assert_eq!(d.frameworks, ["pytest"]);
    }

    #[test]
    fn nothing_recognised_is_unknown() {
        let d = run(&["a.c"], &[]);
        assert_eq!(d.project_type.kind, "unknown");
        assert_eq!(d.project_type.confidence, 0.0);
    }

    #[test]
    fn package_names() {
        let m = |p: &str, t: &str| Manifest {
            path: p.into(),
            text: t.into(),
        };
        assert_eq!(
            package_name(&m("Cargo.toml", "[package]\nname = \"rust-calc\"\n")).as_deref(),
            Some("rust-calc")
        );
        assert_eq!(
            package_name(&m("package.json", r#"{"name": "node-calc"}"#)).as_deref(),
            Some("node-calc")
        );
        assert_eq!(
            package_name(&m("go.mod", "module example.com/go-calc\n")).as_deref(),
            Some("go-calc")
        );
        assert_eq!(
            package_name(&m(
                "pom.xml",
                "<project><artifactId> calc </artifactId></project>"
            ))
            .as_deref(),
            Some("calc")
        );
    }
}
