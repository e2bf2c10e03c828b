//! Where every file of `.workflow/` lives (DESIGN.md §2). No other module
//! builds these paths by hand.

use std::path::{Path, PathBuf};

/// The directories of `.workflow/` that hold sessions: a person may keep
/// them elsewhere through a symlink.
const LAYOUT_DIRS: [&str; 4] = [
    ".workflow",
    ".workflow/active",
    ".workflow/archives",
    ".workflow/.cache",
];

/// The project and its `.workflow/` directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    /// Every write wfx makes below `root` from now on goes through real
    /// directories only (see [`crate::fsx`]); links among `.workflow`'s
    /// own directories that are there now are the person's setup.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        crate::fsx::trust_links_under(&root, &LAYOUT_DIRS);
        Workspace { root }
    }

    pub fn workflow_dir(&self) -> PathBuf {
        self.root.join(".workflow")
    }
    /// Held by the session running in the project's own work tree (one
    /// at a time; others use `--worktree`).
    pub fn work_tree_lock(&self) -> PathBuf {
        self.workflow_dir().join(".locks").join("worktree.lock")
    }
    pub fn active_dir(&self) -> PathBuf {
        self.workflow_dir().join("active")
    }
    pub fn archives_dir(&self) -> PathBuf {
        self.workflow_dir().join("archives")
    }
    pub fn manifest_path(&self) -> PathBuf {
        self.archives_dir().join("manifest.json")
    }
    pub fn config_path(&self) -> PathBuf {
        self.workflow_dir().join("wfx.json")
    }
    pub fn templates_dir(&self) -> PathBuf {
        self.workflow_dir().join("templates")
    }
    /// Scratch space that is never part of a session (`wfx test` results).
    pub fn cache_dir(&self) -> PathBuf {
        self.workflow_dir().join(".cache")
    }
    pub fn active(&self, id: &str) -> SessionPaths {
        SessionPaths::new(self.active_dir().join(id), id)
    }
    pub fn archived(&self, id: &str) -> SessionPaths {
        SessionPaths::new(self.archives_dir().join(id), id)
    }

    /// `path` relative to the project root with `/` separators, for storing
    /// in artifacts; paths outside the root are returned as given.
    pub fn rel(&self, path: &Path) -> String {
        rel_to(&self.root, path)
    }
}

/// `path` relative to `root` with `/` separators; a path outside `root`
/// as given (see [`Workspace::rel`]).
pub fn rel_to(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Paths of one session directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    pub id: String,
    pub dir: PathBuf,
}

impl SessionPaths {
    pub fn new(dir: PathBuf, id: &str) -> Self {
        SessionPaths {
            id: id.to_string(),
            dir,
        }
    }

    pub fn session_json(&self) -> PathBuf {
        self.dir.join("workflow-session.json")
    }
    pub fn impl_plan(&self) -> PathBuf {
        self.dir.join("IMPL_PLAN.md")
    }
    pub fn todo_list(&self) -> PathBuf {
        self.dir.join("TODO_LIST.md")
    }
    pub fn planning_notes(&self) -> PathBuf {
        self.dir.join("test-planning-notes.md")
    }
    pub fn gitignore(&self) -> PathBuf {
        self.dir.join(".gitignore")
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join(".lock")
    }
    pub fn task_dir(&self) -> PathBuf {
        self.dir.join(".task")
    }
    /// Only for creating a task file; existing tasks are found by scanning.
    pub fn new_task_file(&self, id: &str) -> PathBuf {
        self.task_dir().join(format!("{id}.json"))
    }
    pub fn process_dir(&self) -> PathBuf {
        self.dir.join(".process")
    }
    /// A `wfx run` session's copy of its workflow: written first, so it
    /// says whose a run's directory is before its session file does.
    pub fn workflow_copy(&self) -> PathBuf {
        self.dir.join("workflow.yml")
    }
    pub fn summaries_dir(&self) -> PathBuf {
        self.dir.join(".summaries")
    }
    pub fn task_summary(&self, task_id: &str) -> PathBuf {
        self.summaries_dir().join(format!("{task_id}-summary.md"))
    }
    pub fn iteration_summaries_dir(&self) -> PathBuf {
        self.summaries_dir().join("iteration-summaries")
    }
    pub fn iteration_summary(&self, n: u32) -> PathBuf {
        self.iteration_summaries_dir()
            .join(format!("iteration-{n}.md"))
    }
    pub fn context_package(&self) -> PathBuf {
        self.process_dir().join("context-package.json")
    }
    pub fn test_context_package(&self) -> PathBuf {
        self.process_dir().join("test-context-package.json")
    }
    pub fn analysis_results(&self) -> PathBuf {
        self.process_dir().join("TEST_ANALYSIS_RESULTS.md")
    }
    pub fn analysis_agent_output(&self) -> PathBuf {
        self.process_dir().join("analysis-agent-output.md")
    }
    pub fn iteration_state(&self) -> PathBuf {
        self.process_dir().join("iteration-state.json")
    }
    pub fn test_results(&self) -> PathBuf {
        self.process_dir().join("test-results.json")
    }
    pub fn fix_history(&self) -> PathBuf {
        self.process_dir().join("fix-history.json")
    }
    pub fn failure_report(&self) -> PathBuf {
        self.process_dir().join("failure-report.md")
    }
    /// `.process/iteration-<n>-<suffix>`, e.g. `(3, "analysis.md")`.
    pub fn iteration_file(&self, n: u32, suffix: &str) -> PathBuf {
        self.process_dir().join(format!("iteration-{n}-{suffix}"))
    }
    /// JUnit and other structured reports written by test runs.
    pub fn junit_dir(&self) -> PathBuf {
        self.process_dir().join("junit")
    }
}

/// The session's own `.gitignore`: logs and raw agent output stay out of
/// commits (DESIGN.md §2, §5.5).
pub const SESSION_GITIGNORE: &str = "\
# Written by wfx: logs and raw outputs are kept on disk, never committed.
*.log
*-cli-output.txt
analysis-agent-output.md
.lock
junit/
*.tmp
";

/// The session's `.gitignore` under a `git.artifacts` policy (DESIGN.md
/// §10.7): [`SESSION_GITIGNORE`], then what the policy keeps out. The
/// policy works through git's own ignore rules, so every commit wfx makes
/// (checkpoint, rollback, final) and a person's `git add -A` alike leave
/// those files out. A file already tracked stays tracked.
pub fn session_gitignore(policy: crate::artifacts::config::ArtifactPolicy) -> String {
    use crate::artifacts::config::ArtifactPolicy;
    let mut text = SESSION_GITIGNORE.to_string();
    match policy {
        ArtifactPolicy::All => {}
        ArtifactPolicy::Summary => text.push_str(
            "# git.artifacts = summary: only state, plan, tasks, summaries, fix history,
# failure report (a `wfx run` session: its state and workflow). Every run's
# results, prompts and analyses stay here, uncommitted.
/*
!/.gitignore
!/workflow-session.json
!/IMPL_PLAN.md
!/TODO_LIST.md
!/.task/
!/.task/**
!/.summaries/
!/.summaries/**
!/.process/
/.process/*
!/.process/iteration-state.json
!/.process/fix-history.json
!/.process/failure-report.md
!/.process/run-state.json
!/workflow.yml
*.log
",
        ),
        ArtifactPolicy::None => {
            text.push_str("# git.artifacts = none: no session file is committed.\n*\n")
        }
    }
    text
}

/// The `.gitignore` of a finished session that none of wfx's commits
/// touched (no fix, no rollback, no generated tests) under `git.artifacts
/// = summary`: every file stays on disk and out of history, and the
/// final commit holds only the session's entry in `archives/manifest.json`.
pub fn record_only_gitignore() -> String {
    format!(
        "{SESSION_GITIGNORE}# git.artifacts = summary, and the session committed no fix: only its entry in
# archives/manifest.json is committed; its files stay here.
*
"
    )
}
