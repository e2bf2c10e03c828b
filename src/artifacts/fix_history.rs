//! `.process/fix-history.json`: every fix attempt, whatever became of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::iteration_state::Strategy;
use super::{Extra, Timestamp};

named_enum! {
    /// What an agent is asked to do. Analysis must not edit files; fix and
    /// test generation may.
    #[derive(
        Debug,
        Clone,
        Copy,
        PartialEq,
        Eq,
        Hash,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
    )]
    pub enum Role {
        Analysis = "analysis",
        Fix = "fix",
        TestGen = "test_gen",
    }
}

impl Role {
    /// Whether the agent may change files in this role.
    pub fn may_edit(self) -> bool {
        !matches!(self, Role::Analysis)
    }
}

named_enum! {
    /// Why a call failed, as far as the output tells.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum ErrorKind {
        /// The program is not installed (not found on PATH).
        Unavailable = "unavailable",
        Timeout = "timeout",
        RateLimit = "rate_limit",
        /// HTTP 5xx or "overloaded".
        Server = "server_error",
        Connection = "connection_error",
        /// Any other failure (non-zero exit, error envelope).
        Failed = "failed",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestEditKind {
    /// A test function disappeared.
    RemovedTest,
    /// A skip/ignore/only marker was added.
    SkipAdded,
    /// The total number of tests dropped.
    CountDropped,
    /// A test file was changed in another way.
    Modified,
    /// An assertion, expected value or expected exception of a test that
    /// was failing was changed or removed (DESIGN.md §11.2).
    Weakened,
    /// The test infrastructure (pytest configuration and plugins,
    /// `conftest.py`, jest/vitest/mocha configuration and the files it
    /// loads, test scripts, Cargo's test keys) was changed.
    Infrastructure,
}

/// A change to the tests that a fix made (DESIGN.md §5.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestEdit {
    pub kind: TestEditKind,
    pub file: String,
    #[serde(default)]
    pub detail: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diffstat {
    pub files: u32,
    pub insertions: u32,
    pub deletions: u32,
}

/// The start of a fix's unified diff (`git diff` format without `index`
/// lines): at most 150 lines and 12 KiB, each line at most 400 characters,
/// secrets redacted, binary files named (`Binary files a/x and b/x
/// differ`) and never shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffExcerpt {
    /// The diff's first lines, each ending in a newline.
    #[serde(default)]
    pub text: String,
    /// Lines of the whole diff left out after `text`.
    #[serde(default)]
    pub omitted_lines: u32,
}

impl DiffExcerpt {
    // The bounds the type's documentation (and the schema) states.
    pub const MAX_LINES: usize = 150;
    pub const MAX_BYTES: usize = 12 * 1024;
    pub const MAX_LINE_CHARS: usize = 400;

    /// Nothing was recorded (no change, or an attempt from before wfx
    /// recorded diffs).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.omitted_lines == 0
    }

    /// `… 12 more lines`: the one wording of every view for lines left out
    /// (`shown` of the excerpt's lines shown).
    pub fn more(&self, shown: usize) -> Option<String> {
        more_lines(self.text.lines().count().saturating_sub(shown) + self.omitted_lines as usize)
    }
}

/// `… 12 more lines` for `left` lines of a diff not shown; `None` for 0.
pub fn more_lines(left: usize) -> Option<String> {
    (left > 0).then(|| format!("… {left} more line{}", if left == 1 { "" } else { "s" }))
}

/// What a line of a [`DiffExcerpt`] is, for colouring it (the report's
/// CSS classes are these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffLineKind {
    /// `diff --git`, `new file mode`, `---`, `+++`, `Binary files …`.
    File,
    /// `@@ -1,3 +1,4 @@`.
    Hunk,
    Added,
    Removed,
    Context,
}

impl DiffExcerpt {
    /// A fenced `diff` block for Markdown, its last line `… N more
    /// lines` when cut; `None` when empty. The fence is longer than any
    /// run of backticks in the diff, so the diff cannot close it.
    pub fn fenced(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let fence = crate::markdown::fence_for([self.text.as_str()]);
        let more = self.more(usize::MAX).map(|m| m + "\n").unwrap_or_default();
        Some(format!("{fence}diff\n{}{more}{fence}", self.text))
    }

    /// The lines with what each is. A file's header runs from its `diff
    /// --git` line to its first hunk, so a removed line reading `-- x`
    /// (shown `--- x`) is still a removed line.
    pub fn lines(&self) -> impl Iterator<Item = (DiffLineKind, &str)> {
        let mut header = false;
        self.text.lines().map(move |line| {
            if line.starts_with("diff --git ") {
                header = true;
            } else if line.starts_with("@@") {
                header = false;
                return (DiffLineKind::Hunk, line);
            }
            let kind = if header {
                DiffLineKind::File
            } else if line.starts_with('+') {
                DiffLineKind::Added
            } else if line.starts_with('-') {
                DiffLineKind::Removed
            } else {
                DiffLineKind::Context
            };
            (kind, line)
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixAttempt {
    pub iteration: u32,
    pub fix_task: String,
    /// Agent name, or `manual`.
    pub agent: String,
    #[serde(default)]
    pub strategy: Option<Strategy>,
    pub started_at: Timestamp,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    #[serde(default)]
    pub files_changed: Vec<String>,
    #[serde(default)]
    pub diffstat: Diffstat,
    /// What the fix changed as a unified diff, bounded and redacted; taken
    /// with `diffstat`, so a rolled-back fix keeps it too.
    #[serde(default, skip_serializing_if = "DiffExcerpt::is_empty")]
    pub diff: DiffExcerpt,
    #[serde(default)]
    pub test_edits: Vec<TestEdit>,
    #[serde(default)]
    pub pass_rate_before: Option<f64>,
    #[serde(default)]
    pub pass_rate_after: Option<f64>,
    /// What the run after the fix made of it.
    #[serde(default)]
    pub outcome: FixOutcome,
    #[serde(default)]
    pub commit: Option<String>,
    /// The commit that reverted this fix, when it was rolled back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_commit: Option<String>,
    /// Commits the agent made itself during the call, folded into this
    /// attempt's checkpoint (DESIGN.md §10.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_commits: Vec<String>,
    /// What the agent did that wfx undid; the attempt counts as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<Tamper>,
    /// Files the fix wrote that wfx left out of every commit (they stay
    /// on disk), and why (DESIGN.md §10.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_committed: Vec<NotCommitted>,
    /// A person's fix: paths changed outside the fix task's focus, left
    /// uncommitted and untouched by a rollback (docs/cycle.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_uncommitted: Vec<String>,
    /// Files outside the commit (git-ignored, or left uncommitted) that
    /// changed during the fix, when the sealed run failed tests: the fix
    /// passed only in the work tree, thanks to them (DESIGN.md §11.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_commit: Vec<String>,
    /// Speculative attempts (`fix.candidates` > 1, DESIGN.md §11.4): every
    /// candidate of this step, side by side; the attempt's own fields are
    /// the chosen one's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateAttempt>,
    /// Which of `candidates` this attempt applied (1-based); none when no
    /// candidate was better than the run before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One candidate of a speculative step, as measured in its own checkout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CandidateAttempt {
    /// 1-based, in the order the candidates were assigned.
    pub candidate: u32,
    /// Agent name (or `shell` for a workflow's debug command).
    pub agent: String,
    #[serde(default)]
    pub strategy: Option<Strategy>,
    pub verdict: CandidateVerdict,
    /// The verdict as people read it.
    #[serde(default)]
    pub reason: String,
    /// Its whole time: checkout made, call, checks, test runs, checkout
    /// removed. What is neither `agent_ms` nor `tests_ms` is wfx's own.
    #[serde(default)]
    pub duration_ms: u64,
    /// Of which the agent's call (or the debug command).
    #[serde(default)]
    pub agent_ms: u64,
    /// Of which its test runs in its checkout.
    #[serde(default)]
    pub tests_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    #[serde(default)]
    pub files_changed: Vec<String>,
    #[serde(default)]
    pub diffstat: Diffstat,
    #[serde(default, skip_serializing_if = "DiffExcerpt::is_empty")]
    pub diff: DiffExcerpt,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_edits: Vec<TestEdit>,
    /// Its test runs, tier by tier, in its checkout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CandidateTier>,
    /// The pass rate of its runs merged over the run before the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate_after: Option<f64>,
    /// Tests failing before the step that pass with it.
    #[serde(default)]
    pub fixed: u32,
    /// Tests passing before the step that fail with it (flaky ones aside).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    /// What the candidate did that wfx undid in its checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<Tamper>,
}

/// One test run of a candidate in its checkout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CandidateTier {
    pub tier: super::iteration_state::Tier,
    /// What the run itself ran (passed and failed), before merging.
    pub total: u32,
    pub passed: u32,
    pub pass_rate: f64,
    /// Why it could not judge anything (then the full suite ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated: Option<String>,
    /// Its log, project-relative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

named_enum! {
    /// What the choice made of a candidate (DESIGN.md §11.4: no regression,
    /// most failing tests fixed, then the smallest diff, then the earliest).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum CandidateVerdict {
        /// Chosen: applied, verified on the whole suite, committed.
        Chosen = "chosen",
        /// Better than the run before, but another candidate was better.
        Outranked = "outranked",
        /// Made no failing test pass.
        NoChange = "no_change",
        /// Broke a test that passed before.
        Regression = "regression",
        /// Edited the tests in a way the policy rejects.
        Rejected = "rejected",
        /// The call failed.
        Error = "error",
        /// The call ran out of time.
        Timeout = "timeout",
        /// The agent could not be reached (not installed, rate limited, a
        /// server or connection error).
        Unavailable = "unavailable",
        /// Not started: the cost cap was reached before its turn.
        NotStarted = "not_started",
        /// Its tests could not run (a build or collection error), or its
        /// checkout could not be made.
        Untested = "untested",
    }
}

/// A file a fix wrote that is in no commit and no snapshot; it stays on
/// disk for the person to commit, ignore or remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotCommitted {
    /// Project-relative.
    pub path: String,
    pub reason: NotCommittedReason,
    /// Its size when the fix was inspected.
    pub bytes: u64,
    /// `git.max_new_file_mib` then.
    pub limit_mib: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotCommittedReason {
    /// A new file larger than `git.max_new_file_mib`.
    TooBig,
}

impl std::fmt::Display for NotCommitted {
    /// `data/big.bin (120.0 MiB > git.max_new_file_mib 50)`: the one
    /// wording of the terminal, the summaries and the report.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason {
            NotCommittedReason::TooBig => write!(
                f,
                "{} ({:.1} MiB > git.max_new_file_mib {})",
                self.path,
                self.bytes as f64 / (1u64 << 20) as f64,
                self.limit_mib
            ),
        }
    }
}

/// Something an agent did during its call that the loop does not accept
/// (DESIGN.md §10.2). When one call did several, the first in this order
/// is recorded: a moved HEAD undoes the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tamper {
    /// HEAD is no longer a descendant of the pre-call HEAD (reset,
    /// checkout, rebase): branch and tree restored to the pre-call state.
    HeadMoved,
    /// A file of wfx's own session was changed or removed: restored from
    /// wfx's copy.
    SessionEdited,
    /// A read-only role (analysis) changed the work tree: undone from the
    /// pre-call snapshot.
    TreeEdited,
    /// `.workflow/wfx.json` was changed, removed or created: put back as
    /// the run loaded it.
    ConfigEdited,
    /// The repository's settings (`.git/config`: hooks path, worktree,
    /// filters, aliases; `info/exclude`) or a hook were changed: put back.
    RepoConfigEdited,
    /// The index was changed (`git rm --cached`, `update-index
    /// --skip-worktree`, staging): put back.
    IndexEdited,
    /// A file was replaced by a symbolic link: put back as the file it was.
    LinkPlanted,
}

named_enum! {
    /// What became of a fix attempt (`outcome` in fix-history.json).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum FixOutcome {
        /// Made, not yet judged by a test run.
        #[default]
        Pending = "pending",
        Success = "success",
        PartialSuccess = "partial_success",
        Improved = "improved",
        NoChange = "no_change",
        Regression = "regression",
        /// Undone by a rollback (a regression or tests removed).
        RolledBack = "rolled_back",
        /// Undone because it edited the tests in a way the policy rejects.
        Rejected = "rejected",
        /// The run after it could not run the tests.
        Error = "error",
    }
}

impl FixOutcome {
    /// Counts as done (its task is `completed`) rather than `failed`.
    pub fn succeeded(self) -> bool {
        matches!(
            self,
            FixOutcome::Success | FixOutcome::PartialSuccess | FixOutcome::Improved
        )
    }
}

named_enum! {
    /// What became of an agent call (`outcome` of an `agent_calls` entry): for
    /// fix and test generation how the call ended, for analysis `accepted` or
    /// why the analysis was passed over (the fallback reason).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    pub enum CallOutcome {
        Accepted = "accepted",
        Completed = "completed",
        Failed = "failed",
        Timeout = "timeout",
        Unavailable = "unavailable",
        RateLimit = "rate_limit",
        ServerError = "server_error",
        ConnectionError = "connection_error",
        AgentError = "agent_error",
        NoValidStrategy = "no_valid_strategy",
        MissingFields = "missing_fields",
        LowConfidence = "low_confidence",
        TooShort = "too_short",
        SameRootCause = "same_root_cause",
        CostCap = "cost_cap",
    }
}

/// One agent call of any role (analysis, fix, test generation), kept so
/// the session's cost is known and every fallback can be traced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub role: Role,
    pub agent: String,
    pub started_at: Timestamp,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    /// The agent's envelope reported an error.
    #[serde(default)]
    pub is_error: bool,
    /// Why the call failed, as far as its output tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// Tokens the agent's envelope reported (where the CLI reports them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    pub outcome: CallOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    /// What the agent did during this call that wfx undid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tamper: Option<Tamper>,
    /// The speculative candidate this call was (1-based, DESIGN.md §11.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FixHistory {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub entries: Vec<FixAttempt>,
    /// Every agent call of the session, fix calls included: the session's
    /// cost (`agents.max_cost_usd`) is the sum of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_calls: Vec<AgentCall>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_are_classified_by_where_they_are() {
        let e = DiffExcerpt {
            text: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n keep\n--- a removed line\n+++ an added line\n\\ No newline at end of file\n"
                .into(),
            omitted_lines: 0,
        };
        use DiffLineKind::*;
        let kinds: Vec<DiffLineKind> = e.lines().map(|(k, _)| k).collect();
        assert_eq!(
            kinds,
            [File, File, File, Hunk, Context, Removed, Added, Context]
        );
    }

    #[test]
    fn the_markdown_fence_outlasts_the_backticks_in_the_diff() {
        let e = DiffExcerpt {
            text: "+```rust\n".into(),
            omitted_lines: 2,
        };
        assert_eq!(
            e.fenced().unwrap(),
            "````diff\n+```rust\n… 2 more lines\n````"
        );
        assert_eq!(DiffExcerpt::default().fenced(), None);
    }

    #[test]
    fn an_attempt_recorded_before_diffs_loads_with_an_empty_one() {
        let old = serde_json::json!({
            "iteration": 1,
            "fix_task": "IMPL-fix-1",
            "agent": "manual",
            "started_at": "2026-01-01T00:00:00Z",
            "diffstat": {"files": 1, "insertions": 2, "deletions": 0},
        });
        let a: FixAttempt = serde_json::from_value(old).unwrap();
        assert!(a.diff.is_empty());
        // And an empty one is not written.
        assert!(serde_json::to_value(&a).unwrap().get("diff").is_none());
    }
}
