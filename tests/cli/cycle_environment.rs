//! A first run whose failures all come from the environment (a declared
//! dependency that is not installed) pauses for a person instead of asking
//! the fix agent to change code (issue #19); the resume, once the
//! environment is fixed, runs the suite again and completes.

use crate::common;

use common::{Env, fixer_config};
use predicates::prelude::*;

const ID: &str = "WFS-test-the-shop";
const ACTIVE: &str = ".workflow/active/WFS-test-the-shop";
const ARCHIVED: &str = ".workflow/archives/WFS-test-the-shop";

/// A Python project whose `price` imports a declared dependency that is not
/// installed: one test fails with `ModuleNotFoundError`, one passes.
fn shop(env: &Env) {
    env.write(
        "shop.py",
        "def price(n):\n    import wfx_env_dep\n    return wfx_env_dep.UNIT * n\n\n\ndef total(xs):\n    return sum(xs)\n",
    );
    env.write(
        "tests/test_shop.py",
        "from shop import price, total\n\n\ndef test_price():\n    assert price(2) == 6\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
    );
    env.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\ndependencies = [\"wfx-env-dep\"]\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    // A fix agent that would "fix" the code by editing it: it must not run.
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&fixer_config("fix-all")).unwrap(),
    );
    env.git_init_commit();
}

#[test]
fn an_environment_failure_pauses_without_a_fix_and_the_resume_completes() {
    let env = Env::new();
    shop(&env);
    env.wfx_live()
        .env("FIXER_STATE", env.state_dir())
        .args(["test-fix-gen", "Test the shop"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "the tests fail because of the environment, not the code: Python module `wfx_env_dep` is not installed",
        ))
        .stdout(predicate::str::contains(format!(
            "Continue with: wfx test-cycle-execute --resume-session={ID}"
        )));
    let state = env.json(&format!("{ACTIVE}/.process/iteration-state.json"));
    assert_eq!(state["status"], "paused");
    assert_eq!(state["next_action"], "run_tests");
    let history = env.json(&format!("{ACTIVE}/.process/fix-history.json"));
    assert_eq!(history["entries"], serde_json::json!([]), "{history}");
    assert_eq!(env.read("shop.py").matches("wfx_env_dep").count(), 2);
    assert!(
        env.read(&format!("{ACTIVE}/.process/iteration-1-analysis.md"))
            .contains("wfx_env_dep")
    );

    // The person installs the dependency (here: on PYTHONPATH) and resumes.
    let site = env.tmp.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("wfx_env_dep.py"), "UNIT = 3\n").unwrap();
    env.wfx_live()
        .env("PYTHONPATH", &site)
        .args(["test-cycle-execute", "--resume-session", ID])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "Session {ID} completed: 100.0% on the full suite after 0 fix attempt(s)"
        )));
    let state = env.json(&format!("{ARCHIVED}/.process/iteration-state.json"));
    let runs = state["iterations"].as_array().unwrap();
    let rates: Vec<f64> = runs
        .iter()
        .map(|r| r["pass_rate"].as_f64().unwrap())
        .collect();
    // The run after the resume, then its sealed confirmation on the commit.
    assert_eq!(rates, [50.0, 100.0, 100.0]);
    assert_eq!(runs[2]["sealed"], true);
    // Each run keeps its own results file.
    assert_ne!(runs[0]["results_file"], runs[1]["results_file"]);
    let history = env.json(&format!("{ARCHIVED}/.process/fix-history.json"));
    assert_eq!(history["entries"], serde_json::json!([]), "{history}");
    assert_eq!(env.read("shop.py").matches("wfx_env_dep").count(), 2);
}

#[test]
fn environment_failures_next_to_code_failures_are_not_given_to_the_fix_agent() {
    let env = Env::new();
    shop(&env);
    // A code bug next to the environment failure.
    env.write(
        "shop.py",
        "def price(n):\n    import wfx_env_dep\n    return wfx_env_dep.UNIT * n\n\n\ndef total(xs):\n    return sum(xs) + 1\n",
    );
    env.git(&["commit", "-qam", "a bug"]);
    env.wfx_live()
        .args(["test-fix-gen", "Test the shop", "--fix-agent", "manual"])
        .assert()
        .code(3);
    let task = env.json(&format!("{ACTIVE}/.task/IMPL-fix-1.json"));
    let requirements: Vec<String> = task["context"]["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    let all = requirements.join("\n");
    assert!(
        all.contains("Make the failing tests pass: `tests/test_shop.py::test_total`"),
        "{all}"
    );
    assert!(
        all.contains("Leave alone the 1 test(s) that fail because of the environment")
            && all.contains("`tests/test_shop.py::test_price`"),
        "{all}"
    );
    assert!(
        !all.contains("Make the failing tests pass: `tests/test_shop.py::test_price`"),
        "{all}"
    );
}

/// A fresh clone whose generated module (`_version.py`, git-ignored) was
/// never built: every test module fails to import. The session pauses with
/// the line that says so, no fix agent is called, and no fix task labels
/// it a code bug.
#[test]
fn a_missing_generated_module_pauses_with_the_import_error() {
    let env = Env::new();
    common::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/outputs/sources/py-humanize"),
        &env.root,
    );
    env.write(
        ".workflow/wfx.json",
        &serde_json::to_string_pretty(&fixer_config("fix-all")).unwrap(),
    );
    env.git_init_commit();
    let id = "WFS-test-ordinal";
    env.wfx_live()
        .env("PYTHONPATH", "src")
        .env("FIXER_STATE", env.state_dir())
        .args(["test-fix-gen", "Test ordinal", "-y"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "the tests fail because of the environment, not the code: `src/humanize/_version.py` is missing and git-ignored, so a build or install step generates it (`ModuleNotFoundError: No module named 'humanize._version'`)",
        ));
    let active = format!(".workflow/active/{id}");
    let history = env.json(&format!("{active}/.process/fix-history.json"));
    assert_eq!(history["entries"], serde_json::json!([]), "{history}");
    let analysis = env.read(&format!("{active}/.process/iteration-1-analysis.md"));
    assert!(!analysis.contains("Kind: code"), "{analysis}");
    assert!(analysis.contains("Kind: environment"), "{analysis}");
    // No fix task for a failure no fix can mend; the run's row says no
    // test ran, with no rate beside it.
    assert!(
        !env.root
            .join(format!("{active}/.task/IMPL-fix-1.json"))
            .exists()
    );
    let status = String::from_utf8(env.wfx().arg("status").output().unwrap().stdout).unwrap();
    assert!(
        status.contains("\n1    1          full   no test ran  -     -         error   -    -\n"),
        "{status}"
    );
    assert!(
        status.contains("\nNot done: the last run ran no test: ModuleNotFoundError: No module named 'humanize._version'\n"),
        "{status}"
    );
    // Once built, the resume runs the suite again and completes.
    env.write("src/humanize/_version.py", "__version__ = \"4.17.0\"\n");
    env.wfx_live()
        .env("PYTHONPATH", "src")
        .args(["test-cycle-execute", "--resume-session", id])
        .assert()
        .success();
}
