//! Which commit-message convention a repository follows (docs/git.md):
//! commitlint (any of its configuration files, the `commitlint` key of
//! `package.json`, or a `commit-msg` hook of husky or lefthook that runs
//! it), commitizen (its files, `[tool.commitizen]` in `pyproject.toml`,
//! `config.commitizen` in `package.json`), or a history whose commits
//! mostly follow Conventional Commits. `git.message.convention` decides
//! when it is not `auto`.

use std::path::Path;

use super::message::{Convention, MessageStyle};
use crate::artifacts::config::{ConventionChoice, MessageConfig};
use crate::project::re;

/// commitlint's configuration files (cosmiconfig's names).
pub const COMMITLINT_FILES: &[&str] = &[
    ".commitlintrc",
    ".commitlintrc.json",
    ".commitlintrc.yaml",
    ".commitlintrc.yml",
    ".commitlintrc.js",
    ".commitlintrc.cjs",
    ".commitlintrc.mjs",
    ".commitlintrc.ts",
    ".commitlintrc.cts",
    ".commitlintrc.mts",
    "commitlint.config.js",
    "commitlint.config.cjs",
    "commitlint.config.mjs",
    "commitlint.config.ts",
    "commitlint.config.cts",
    "commitlint.config.mts",
];

/// commitizen's configuration files (Python's commitizen and cz-cli).
pub const COMMITIZEN_FILES: &[&str] = &[
    ".cz.toml", ".cz.json", "cz.json", ".cz.yaml", "cz.yaml", ".cz.yml", "cz.yml", ".czrc",
];

/// Hook files that may run commitlint.
const HOOK_FILES: &[&str] = &[
    ".husky/commit-msg",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
];

/// Recent commits looked at, and how many of them must follow
/// Conventional Commits (at least [`HISTORY_MIN`]).
const HISTORY_LOOK: usize = 20;
const HISTORY_MIN: usize = 5;

/// `type(scope)!: description`.
pub fn is_conventional(subject: &str) -> bool {
    re!(r"^[a-z]+(\([^()\s]*\))?!?: \S").is_match(subject)
}

/// Why the repository at `root` follows Conventional Commits (the file,
/// or the history's share), from its files (read with `read`) and the
/// subjects of its recent commits; `None` when nothing says so.
pub fn detect(read: &dyn Fn(&str) -> Option<String>, subjects: &[String]) -> Option<String> {
    if let Some(f) = COMMITLINT_FILES.iter().find(|f| read(f).is_some()) {
        return Some(format!("commitlint ({f})"));
    }
    let package: Option<serde_json::Value> =
        read("package.json").and_then(|t| serde_json::from_str(&t).ok());
    if package
        .as_ref()
        .is_some_and(|p| p.get("commitlint").is_some())
    {
        return Some("commitlint (package.json)".into());
    }
    if let Some(f) = HOOK_FILES
        .iter()
        .find(|f| read(f).is_some_and(|t| t.contains("commitlint")))
    {
        return Some(format!("commitlint ({f})"));
    }
    if let Some(f) = COMMITIZEN_FILES.iter().find(|f| read(f).is_some()) {
        return Some(format!("commitizen ({f})"));
    }
    if package
        .as_ref()
        .is_some_and(|p| p.pointer("/config/commitizen").is_some())
    {
        return Some("commitizen (package.json)".into());
    }
    if read("pyproject.toml").is_some_and(|t| t.contains("[tool.commitizen]")) {
        return Some("commitizen (pyproject.toml)".into());
    }
    let n = subjects.len();
    let conventional = subjects.iter().filter(|s| is_conventional(s)).count();
    (n >= HISTORY_MIN && conventional * 5 >= n * 4)
        .then(|| format!("history ({conventional} of the last {n} commits)"))
}

/// Subjects of the last commits on HEAD, merges and wfx's own left out.
fn recent_subjects(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::discover(root) else {
        return Vec::new();
    };
    let Ok(mut walk) = repo.revwalk() else {
        return Vec::new();
    };
    if walk.push_head().is_err() {
        return Vec::new();
    }
    walk.filter_map(|id| id.ok())
        .filter_map(|id| repo.find_commit(id).ok())
        .filter(|c| c.parent_count() <= 1)
        .filter(|c| super::parse_trailers(c.message().unwrap_or_default()).is_none())
        .take(HISTORY_LOOK)
        .map(|c| {
            let m = c.message().unwrap_or_default();
            m.lines().next().unwrap_or_default().to_string()
        })
        .collect()
}

/// The message style of a session's commits in the repository at `root`.
pub fn style(root: &Path, config: &MessageConfig) -> MessageStyle {
    let (convention, source) = match config.convention {
        ConventionChoice::Conventional => (
            Convention::Conventional,
            "git.message.convention".to_string(),
        ),
        ConventionChoice::Plain => (Convention::Plain, "git.message.convention".to_string()),
        ConventionChoice::Auto => {
            let read = |rel: &str| {
                let p = root.join(rel);
                p.is_file()
                    .then(|| std::fs::read_to_string(&p).unwrap_or_default())
            };
            match detect(&read, &recent_subjects(root)) {
                Some(why) => (Convention::Conventional, why),
                None => (Convention::Plain, String::new()),
            }
        }
    };
    MessageStyle {
        convention,
        templates: config.templates(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let list: Vec<(String, String)> = list
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        move |name: &str| list.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone())
    }

    #[test]
    fn what_says_conventional_commits() {
        let none: Vec<String> = Vec::new();
        for (given, want) in [
            (
                vec![("commitlint.config.js", "")],
                Some("commitlint (commitlint.config.js)"),
            ),
            (
                vec![(".commitlintrc.yml", "")],
                Some("commitlint (.commitlintrc.yml)"),
            ),
            (
                vec![(
                    "package.json",
                    r#"{"commitlint": {"extends": ["@commitlint/config-conventional"]}}"#,
                )],
                Some("commitlint (package.json)"),
            ),
            (
                vec![(
                    "lefthook.yml",
                    "commit-msg:\n  commands:\n    lint:\n      run: npx commitlint --edit {1}\n",
                )],
                Some("commitlint (lefthook.yml)"),
            ),
            (vec![(".cz.toml", "")], Some("commitizen (.cz.toml)")),
            (
                vec![(
                    "pyproject.toml",
                    "[tool.commitizen]\nname = \"cz_conventional_commits\"\n",
                )],
                Some("commitizen (pyproject.toml)"),
            ),
            (
                vec![(
                    "package.json",
                    r#"{"config": {"commitizen": {"path": "cz-conventional-changelog"}}}"#,
                )],
                Some("commitizen (package.json)"),
            ),
            (vec![("package.json", r#"{"name": "x"}"#)], None),
            (
                vec![("lefthook.yml", "pre-commit:\n  commands: {}\n")],
                None,
            ),
            (
                vec![("pyproject.toml", "[tool.pytest.ini_options]\n")],
                None,
            ),
        ] {
            assert_eq!(detect(&files(&given), &none).as_deref(), want, "{given:?}");
        }
    }

    #[test]
    fn a_conventional_history_counts_when_most_of_it_is() {
        let subjects = |conventional: usize, other: usize| -> Vec<String> {
            let mut v: Vec<String> = (0..conventional)
                .map(|i| format!("feat(api): change {i}"))
                .collect();
            v.extend((0..other).map(|i| format!("Update readme {i}")));
            v
        };
        let read = files(&[]);
        assert_eq!(
            detect(&read, &subjects(16, 4)).as_deref(),
            Some("history (16 of the last 20 commits)")
        );
        assert_eq!(detect(&read, &subjects(15, 5)), None, "75% is not most");
        assert_eq!(
            detect(&read, &subjects(4, 0)),
            None,
            "too few commits to tell"
        );
        for (s, want) in [
            ("fix: x", true),
            ("fix(parser)!: x", true),
            ("chore(deps): bump", true),
            ("Fix: x", false),
            ("fix:x", false),
            ("test-cycle: iteration 1 - conservative strategy", false),
            ("Merge branch 'main'", false),
        ] {
            assert_eq!(is_conventional(s), want, "{s}");
        }
    }
}
