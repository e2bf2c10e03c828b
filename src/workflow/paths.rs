//! Where a `wfx run` session keeps its files, in one place:
//!
//! ```text
//! .workflow/active/WFS-run-<name>/
//! ├── workflow-session.json        type "run", workflow_type "yaml_workflow"
//! ├── workflow.yml                 the workflow as it was run
//! └── .process/
//!     ├── run-state.json           step, attempt, phase, every record
//!     ├── run.log                  the progress lines, timestamped
//!     ├── step-01/                 a shell or claude step
//!     │   ├── command.txt | claude-prompt.md
//!     │   └── output.log  | claude-cli-output.txt, claude-result.md
//!     └── step-02/                 a test step
//!         ├── initial/             test-output.log, test-results.json
//!         └── attempt-1/           debug-command.txt | debug-prompt.md,
//!                                  debug-output.log | debug-cli-output.txt,
//!                                  test-output.log, test-results.json,
//!                                  attempt.json
//! ```

use std::path::PathBuf;

use crate::session::SessionPaths;

/// The paths of one run session.
#[derive(Debug, Clone)]
pub struct RunPaths {
    pub session: SessionPaths,
}

impl RunPaths {
    pub fn new(session: SessionPaths) -> RunPaths {
        RunPaths { session }
    }
    pub fn run_state(&self) -> PathBuf {
        self.session.process_dir().join("run-state.json")
    }
    pub fn workflow_copy(&self) -> PathBuf {
        self.session.workflow_copy()
    }
    pub fn run_log(&self) -> PathBuf {
        self.session.process_dir().join("run.log")
    }
    pub fn step_dir(&self, index: usize) -> PathBuf {
        self.session.process_dir().join(format!("step-{index:02}"))
    }
    pub fn initial_dir(&self, index: usize) -> PathBuf {
        self.step_dir(index).join("initial")
    }
    pub fn attempt_dir(&self, index: usize, attempt: u32) -> PathBuf {
        self.step_dir(index).join(format!("attempt-{attempt}"))
    }
}
