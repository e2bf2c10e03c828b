//! One error type for the library, and the one place that maps errors to the
//! exit codes of DESIGN.md §1.

use std::path::PathBuf;

/// Process exit codes (DESIGN.md §1). Commands that finish without an error
/// still choose one of these (a blocked loop is not an error, it is exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Completed: full or partial success.
    Success = 0,
    /// Blocked or failed: a limit was reached or tests fail.
    Failed = 1,
    /// Usage error or invalid input/artifact.
    Usage = 2,
    /// Paused and resumable.
    Paused = 3,
    /// Internal error.
    Internal = 4,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// One schema or parse problem inside an artifact, printed as
/// `file: /json/pointer: message` so editors and people can jump to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    pub file: String,
    pub pointer: String,
    pub message: String,
}

impl Problem {
    /// A problem with the file as a whole (no pointer inside it).
    pub fn whole(file: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            file: file.into(),
            pointer: String::new(),
            message: message.into(),
        }
    }

    /// Text that is not JSON, with where the parser gave up.
    pub fn bad_json(file: impl Into<String>, e: &serde_json::Error) -> Self {
        let message = format!(
            "invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        );
        Problem::whole(file, message)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{}: {}: {}", self.file, pointer, self.message)
    }
}

fn join_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `path: error`, or just the error when it already names the path (the
/// errors of `fs_err` say "failed to open file `path`: …").
fn io_message(path: &std::path::Path, source: &std::io::Error) -> String {
    let text = source.to_string();
    let shown = path.display().to_string();
    if text.contains(&format!("`{shown}`")) {
        text
    } else {
        format!("{shown}: {text}")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something malformed (bad argument, bad id, …).
    #[error("{0}")]
    Usage(String),

    /// One or more artifacts or config files do not match their schema.
    #[error("{}", join_problems(.0))]
    Invalid(Vec<Problem>),

    #[error("session {id} not found (looked in {looked_in})")]
    SessionNotFound { id: String, looked_in: String },

    /// Another live wfx process owns the session.
    #[error(
        "session {session} is in use by wfx process {pid} (since {since}); wait for it or stop it"
    )]
    Locked {
        session: String,
        pid: u32,
        since: String,
    },

    #[error("{}", io_message(path, source))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("git: {0}")]
    Git(String),

    /// Ctrl-C (or SIGTERM) stopped a child; the text says what was running.
    /// Inside a session the engine turns this into a pause (an outcome,
    /// with the state saved); a one-shot command such as `wfx test` ends
    /// with it (exit 3).
    #[error("interrupted: {0}")]
    Interrupted(String),

    /// An agent changed the installed test runner or its plugins in the
    /// project's dependency directories (see `engine::runner_env`), which
    /// wfx cannot put back; inside a session the engine turns this into a
    /// pause for a person.
    #[error("{agent} changed the installed test runner or its plugins: {}", changed.join(", "))]
    RunnerEdited { agent: String, changed: Vec<String> },

    /// A git hook refused one of wfx's commits; inside a session the
    /// engine turns this into a pause (DESIGN.md §10.2).
    #[error("the git {hook} hook ({path}) failed: {output}")]
    Hook {
        hook: String,
        /// The hook's file, relative to the work tree when inside it.
        path: String,
        output: String,
    },

    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Usage(_)
            | Error::Invalid(_)
            | Error::SessionNotFound { .. }
            | Error::Locked { .. } => Exit::Usage,
            Error::Interrupted(_) | Error::Hook { .. } | Error::RunnerEdited { .. } => Exit::Paused,
            // The environment refused (no permission, read-only or full
            // file system, quota, a file that is not there): the user has
            // to fix something before running again, which is exit 2; it
            // is not a bug in wfx (docs/hardening.md). Writes are atomic,
            // so the files are as they were before the failed write.
            Error::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::NotFound
                | std::io::ErrorKind::ReadOnlyFilesystem
                | std::io::ErrorKind::StorageFull
                | std::io::ErrorKind::QuotaExceeded
                | std::io::ErrorKind::FileTooLarge
                | std::io::ErrorKind::InvalidData => Exit::Usage,
                _ => Exit::Internal,
            },
            // libgit2 reports the OS's refusal as text (`could not write
            // '…': No space left on device`): the same refusal, exit 2.
            Error::Git(message) if environment_refusal(message) => Exit::Usage,
            Error::Git(_) | Error::Internal(_) => Exit::Internal,
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }
}

/// Whether an error text (libgit2 appends `strerror`) says the machine
/// refused: full disk, quota, read-only file system, no permission.
fn environment_refusal(message: &str) -> bool {
    const REFUSALS: [&str; 5] = [
        "No space left on device",
        "Disk quota exceeded",
        "Read-only file system",
        "Permission denied",
        "File too large",
    ];
    REFUSALS.iter().any(|r| message.contains(r))
}

impl From<git2::Error> for Error {
    fn from(e: git2::Error) -> Self {
        Error::Git(e.message().to_string())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_refusals_are_exit_2_other_io_errors_exit_4() {
        use std::io::ErrorKind as K;
        for (kind, exit) in [
            (K::PermissionDenied, Exit::Usage),
            (K::NotFound, Exit::Usage),
            (K::ReadOnlyFilesystem, Exit::Usage),
            (K::StorageFull, Exit::Usage),
            (K::QuotaExceeded, Exit::Usage),
            (K::FileTooLarge, Exit::Usage),
            (K::InvalidData, Exit::Usage),
            (K::Interrupted, Exit::Internal),
            (K::Other, Exit::Internal),
        ] {
            let e = Error::io("/p/.workflow/x.json", std::io::Error::from(kind));
            assert_eq!(e.exit(), exit, "{kind:?}");
        }
        let full = Error::io(
            "/p/.workflow/x.json",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert_eq!(full.exit(), Exit::Usage);
        assert!(
            full.to_string()
                .starts_with("/p/.workflow/x.json: No space left on device")
        );
    }

    #[test]
    fn git_errors_for_a_refusing_machine_are_exit_2_with_their_cause() {
        for (message, exit) in [
            (
                "failed to write to file '/p/.git/objects/ab/tmp_object_git2_x': No space left on device",
                Exit::Usage,
            ),
            (
                "could not write '/p/.git/index.lock': Disk quota exceeded",
                Exit::Usage,
            ),
            (
                "failed to make directory '/p/.git/objects/ab': Read-only file system",
                Exit::Usage,
            ),
            (
                "failed to open '/p/.git/HEAD': Permission denied",
                Exit::Usage,
            ),
            ("object not found - no match for id (abc)", Exit::Internal),
            ("reference 'refs/heads/x' not found", Exit::Internal),
        ] {
            let e = Error::from(git2::Error::new(
                git2::ErrorCode::GenericError,
                git2::ErrorClass::Os,
                message,
            ));
            assert_eq!(e.exit(), exit, "{message}");
            assert_eq!(
                e.to_string(),
                format!("git: {message}"),
                "the cause is kept"
            );
        }
    }

    #[test]
    fn fs_err_errors_name_the_path_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/x.json");
        let e = Error::io(&path, fs_err::File::open(&path).unwrap_err());
        assert_eq!(
            e.to_string(),
            format!(
                "failed to open file `{}`: No such file or directory (os error 2)",
                path.display()
            )
        );
        assert_eq!(e.exit(), Exit::Usage);
    }
}
