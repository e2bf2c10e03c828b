//! wfx where teams run it unattended (docs/ci.md): CI mode, GitHub
//! Actions' annotations, job summary and step outputs, and JUnit XML for
//! any CI.
//!
//! Everything here reads what a session left on disk (or a test run's
//! results) after the engine is done; nothing hooks into the driver. On CI
//! (`CI=true`) wfx never waits for a person: the printer rings no bell,
//! `--watch` is ignored, and a manual fix pauses with exit 3 as it does
//! everywhere. `docs/ci.md` is the user's description.

pub mod github;
pub mod junit;
pub mod publish;

use std::path::PathBuf;

/// What the environment says about where wfx runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiEnv {
    /// `CI=true` (GitHub Actions, GitLab CI, Buildkite, CircleCI, … set it):
    /// nobody is there to fix, save a file or hear a bell.
    pub ci: bool,
    /// `GITHUB_ACTIONS=true`: annotations, job summary and outputs.
    pub github: Option<GitHubFiles>,
}

/// The files GitHub Actions reads after a step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitHubFiles {
    /// `$GITHUB_STEP_SUMMARY`: Markdown shown on the run's page.
    pub summary: Option<PathBuf>,
    /// `$GITHUB_OUTPUT`: `name=value` lines, the step's outputs.
    pub output: Option<PathBuf>,
}

/// A true-ish value as CI services write it (`true`, `1`, `yes`).
fn truthy(v: Option<String>) -> bool {
    v.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

impl CiEnv {
    /// Read from `get` (the process environment in [`CiEnv::from_env`]).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> CiEnv {
        let github = truthy(get("GITHUB_ACTIONS")).then(|| {
            let path = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
            GitHubFiles {
                summary: path("GITHUB_STEP_SUMMARY"),
                output: path("GITHUB_OUTPUT"),
            }
        });
        CiEnv {
            // GitHub Actions sets CI too; count it as CI without it all the same.
            ci: truthy(get("CI")) || github.is_some(),
            github,
        }
    }

    pub fn from_env() -> CiEnv {
        CiEnv::from_vars(|name| std::env::var(name).ok())
    }
}

/// Whether wfx runs on CI (see [`CiEnv::ci`]).
pub fn on_ci() -> bool {
    CiEnv::from_env().ci
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> CiEnv {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CiEnv::from_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn ci_and_github_from_the_environment() {
        assert_eq!(env(&[]), CiEnv::default());
        assert!(env(&[("CI", "true")]).ci);
        assert!(env(&[("CI", "1")]).ci);
        assert!(!env(&[("CI", "false")]).ci);
        assert!(!env(&[("CI", "")]).ci);
        assert_eq!(env(&[("CI", "true")]).github, None);
        let gh = env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", "/tmp/s.md"),
            ("GITHUB_OUTPUT", ""),
        ]);
        assert!(gh.ci, "GitHub Actions is CI");
        assert_eq!(
            gh.github,
            Some(GitHubFiles {
                summary: Some("/tmp/s.md".into()),
                output: None,
            })
        );
    }
}
