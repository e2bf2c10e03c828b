//! `wfx demo`: the whole pipeline on a bundled sample project in a temp
//! dir, with a bundled scripted fixer named `demo-fixer` standing in for an
//! AI agent. The fixer is an ordinary agent definition in the demo's
//! `.workflow/wfx.json`: nothing in wfx knows it. Which sample runs is
//! decided before anything is written (see [`toolchain`]); nothing outside
//! the demo directory is touched.

mod toolchain;

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::cli::{Cli, DemoArgs, DemoLang};
use crate::error::{Error, Exit, Result};
use crate::session::store;
use crate::ui::Printer;
use toolchain::Toolchain;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/demo_project.rs"));
}

/// One bundled sample project and its scripted fixer.
struct Sample {
    /// (path, contents) of the project.
    files: &'static [(&'static str, &'static str)],
    /// Directory name inside the demo directory.
    dir: &'static str,
    /// The session's description (and so its id).
    description: &'static str,
    what: &'static str,
    /// Built-in templates copied to `.workflow/demo/` (the fixer first).
    helpers: &'static [&'static str],
}

fn sample(lang: DemoLang) -> Sample {
    match lang {
        DemoLang::Python => Sample {
            files: embedded::DEMO_PYTHON,
            dir: "cart",
            description: "Test the cart pricing",
            what: "a Python package with 2 bugs that fail 3 of its 9 tests",
            helpers: &["demo/python/fixer.py", "demo/python/run_tests.py"],
        },
        DemoLang::Node => Sample {
            files: embedded::DEMO_NODE,
            dir: "calc",
            description: "Test the calculator",
            what: "a Node package with 2 bugs: 2 of its 10 tests fail, 1 is skipped and rates count the other 9",
            helpers: &["demo/node/fixer.js"],
        },
        DemoLang::Rust => Sample {
            files: embedded::DEMO_RUST,
            dir: "calc",
            description: "Test the calculator",
            what: "a Rust crate with 2 bugs: 3 of its 14 tests fail, 1 is ignored and rates count the other 13",
            helpers: &["demo/rust/fixer.sh"],
        },
    }
}

/// The fixer's command line: the sample's own interpreter runs it.
fn fixer_command(t: &Toolchain, fixer: &str) -> Vec<String> {
    let program = match t.lang {
        DemoLang::Python => t.program.clone(),
        DemoLang::Node => "node".to_string(),
        DemoLang::Rust => "sh".to_string(),
    };
    let file = fixer.rsplit('/').next().unwrap_or(fixer);
    vec![program, format!(".workflow/demo/{file}")]
}

/// The demo's `.workflow/wfx.json`.
fn config(t: &Toolchain, fixer: &str) -> serde_json::Value {
    let mut config = serde_json::json!({
        "agents": {
            "fix": "demo-fixer",
            "definitions": {
                "demo-fixer": { "command": fixer_command(t, fixer), "timeout_s": 60 }
            }
        },
        // The sample's suite takes well under a second, nearly all of it
        // the runner's start, so by its timings no retest tier could save
        // time; the demo is there to show the tiers.
        "cycle": { "skip_slow_tiers": false }
    });
    if let Some(command) = &t.test_command {
        config["test"] = serde_json::json!({ "command": command });
        if let Some(junit) = &t.junit {
            config["test"]["junit"] = serde_json::json!(junit);
        }
    }
    config
}

pub fn run(ui: &Printer, args: DemoArgs) -> Result<Exit> {
    // Every refusal comes before the first file is written.
    if let Some(d) = &args.dir
        && d.exists()
        && d.read_dir().map(|mut r| r.next().is_some()).unwrap_or(true)
    {
        return Err(Error::usage(format!(
            "--dir {}: exists and is not empty",
            d.display()
        )));
    }
    let found = toolchain::probe_all();
    let chosen = toolchain::choose(args.lang, &found).map_err(Error::usage)?;
    let sample = sample(chosen.lang);

    let dir = match args.dir {
        Some(d) => d,
        None => tempfile::Builder::new()
            .prefix("wfx-demo-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?
            .keep(),
    };
    let project = dir.join(sample.dir);
    write_project(&project, &sample, &chosen)?;
    init_repo(&project, &sample)?;
    ui.status(format!(
        "wfx demo: {} ({}, tests run with {}) in {}",
        sample.what,
        chosen.version,
        chosen.runner,
        project.display()
    ));
    let others: Vec<&str> = toolchain::ORDER
        .iter()
        .filter(|l| **l != chosen.lang)
        .map(|l| toolchain::name(*l))
        .collect();
    ui.status(format!(
        "          (other samples: wfx demo --lang {})",
        others.join("|")
    ));

    let wfx_args = |rest: &[&str]| -> Vec<String> {
        let mut v = vec![
            "wfx".to_string(),
            "-C".into(),
            project.display().to_string(),
        ];
        if ui.is_json() {
            v.push("--json".into());
        }
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let cli = Cli::try_parse_from(wfx_args(&["test-fix-gen", sample.description, "-y"]))
        .map_err(|e| Error::Internal(e.to_string()))?;
    let exit = super::dispatch(cli, ui)?;

    // `wfx report`'s own default, inside the project.
    let report = project.join(".workflow/report.html");
    let session = last_archived_or_active(&project);
    if let Some(id) = &session
        && let Ok(cli) = Cli::try_parse_from(wfx_args(&["report", id]))
        && let Err(e) = super::dispatch(cli, ui)
    {
        ui.warn(format!("report: {e}"));
    }
    ui.status("");
    ui.status(format!("Demo project: {}", project.display()));
    if let Some(id) = &session {
        ui.status(format!(
            "Session:      {id} (see `wfx -C {} status {id}`)",
            project.display()
        ));
    }
    if report.exists() {
        ui.status(format!("Report:       {}", report.display()));
    }
    ui.status(format!(
        "Commits:      git -C {} log --stat",
        project.display()
    ));
    Ok(exit)
}

fn write_project(project: &Path, sample: &Sample, t: &Toolchain) -> Result<()> {
    for (rel, text) in sample.files {
        store::write_atomic(&project.join(rel), text.as_bytes())?;
    }
    for name in sample.helpers {
        let text = crate::render::builtin(name)
            .ok_or_else(|| Error::Internal(format!("demo file {name} missing")))?;
        let file = name.rsplit('/').next().unwrap_or(name);
        store::write_atomic(&project.join(".workflow/demo").join(file), text.as_bytes())?;
    }
    store::write_json(
        &project.join(".workflow/wfx.json"),
        &config(t, sample.helpers[0]),
    )?;
    Ok(())
}

/// `git init` and one commit of the sample, so the loop can checkpoint.
fn init_repo(project: &Path, sample: &Sample) -> Result<()> {
    let repo = git2::Repository::init(project)?;
    let mut index = repo.index()?;
    for (rel, _) in sample.files {
        index.add_path(Path::new(rel))?;
    }
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("wfx demo", "demo@wfx.invalid"))?;
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        "Sample project with two bugs",
        &tree,
        &[],
    )?;
    // The demo's own files stay out of the user's view of changes.
    store::write_atomic(
        &project.join(".git/info/exclude"),
        b".workflow/demo/\n.workflow/wfx.json\n.workflow/report.html\n",
    )?;
    Ok(())
}

fn last_archived_or_active(project: &Path) -> Option<String> {
    let ws = crate::session::Workspace::new(PathBuf::from(project));
    ws.list(true)
        .ok()?
        .into_iter()
        .map(|s| s.id().to_string())
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolchain(lang: DemoLang, program: &str, test_command: Option<&str>) -> Toolchain {
        Toolchain {
            lang,
            program: program.into(),
            version: String::new(),
            runner: String::new(),
            test_command: test_command.map(str::to_string),
            junit: test_command.map(|_| ".workflow/demo/junit/*.xml".to_string()),
        }
    }

    #[test]
    fn the_fixer_runs_with_the_samples_own_interpreter() {
        for (t, want) in [
            (
                toolchain(DemoLang::Python, "python3", None),
                ["python3", ".workflow/demo/fixer.py"],
            ),
            (
                toolchain(DemoLang::Node, "node", None),
                ["node", ".workflow/demo/fixer.js"],
            ),
            (
                toolchain(DemoLang::Rust, "cargo", None),
                ["sh", ".workflow/demo/fixer.sh"],
            ),
        ] {
            let s = sample(t.lang);
            assert_eq!(fixer_command(&t, s.helpers[0]), want);
            // Every helper is a built-in template.
            for h in s.helpers {
                assert!(crate::render::builtin(h).is_some(), "{h}");
            }
            assert!(!s.files.is_empty());
        }
    }

    #[test]
    fn the_config_names_a_test_command_only_when_detection_would_not_do() {
        let detected = config(
            &toolchain(DemoLang::Python, "python3", None),
            "demo/python/fixer.py",
        );
        assert!(detected.get("test").is_none(), "{detected}");
        assert_eq!(detected["agents"]["fix"], "demo-fixer");
        let own = config(
            &toolchain(
                DemoLang::Python,
                "python",
                Some("python .workflow/demo/run_tests.py"),
            ),
            "demo/python/fixer.py",
        );
        assert_eq!(own["test"]["command"], "python .workflow/demo/run_tests.py");
        assert_eq!(own["test"]["junit"], ".workflow/demo/junit/*.xml");
        assert_eq!(
            own["agents"]["definitions"]["demo-fixer"]["command"],
            serde_json::json!(["python", ".workflow/demo/fixer.py"])
        );
    }
}
