//! Start a child through `std` where `clone` is not there (not Linux):
//! its own process group, the given stdin/stdout/stderr, the working
//! directory and exactly the environment given. No parent-death signal
//! exists there; what outlives wfx is ended by the next run's sweep.

use std::ffi::{OsStr, OsString};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Start `program` with `args` in `cwd` with exactly the environment
/// `env`, its stdin/stdout/stderr the descriptors `stdio`, in a process
/// group of its own. Returns its pid; the caller reaps it.
pub(super) fn spawn(
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    env: &[(OsString, OsString)],
    stdio: [RawFd; 3],
) -> std::io::Result<libc::pid_t> {
    let copy = |fd: RawFd| -> std::io::Result<Stdio> {
        // SAFETY: `fcntl` on a descriptor number; a bad one gives EBADF.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `copy` is a new descriptor that nothing else owns.
        Ok(Stdio::from(unsafe { OwnedFd::from_raw_fd(copy) }))
    };
    let child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .stdin(copy(stdio[0])?)
        .stdout(copy(stdio[1])?)
        .stderr(copy(stdio[2])?)
        .spawn()?;
    // Reaped by pid (`waitpid`), like a child started by `clone`.
    Ok(child.id() as libc::pid_t)
}
