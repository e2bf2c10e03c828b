//! Start a child the way `posix_spawn` does — `clone(CLONE_VM |
//! CLONE_VFORK)`: the child borrows wfx's memory until it `exec`s, so
//! nothing is copied — and still with the parent-death signal (DESIGN.md
//! §6.2), which `posix_spawn` cannot set and which made `std` fall back
//! to a `fork` that copied wfx's page tables for every child and faulted
//! its pages back in afterwards (issue #30: about half a millisecond a
//! child).
//!
//! Between `clone` and `exec` the child runs on its own stack and makes
//! only system calls (no allocation, no lock): every string it needs is
//! built before. What `std::process::Command` does for a child, this does
//! too: its own process group, stdin/stdout/stderr from the given
//! descriptors, the working directory, the signal mask emptied and
//! `SIGPIPE` back to its default.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

/// What the child needs, all of it built before the `clone`.
struct Plan {
    program: CString,
    argv: Vec<*const libc::c_char>,
    /// `/bin/sh program args…`: a file without a `#!` line is run by the
    /// shell, as `execvp` (and so `std`) did.
    sh_argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    cwd: CString,
    /// Descriptors for the child's 0, 1 and 2.
    stdio: [RawFd; 3],
    parent: libc::pid_t,
    /// The `errno` of a failed `chdir` or `exec` (the child writes it).
    error: AtomicI32,
}

/// Start `program` with `args` in `cwd` with exactly the environment
/// `env`, its stdin/stdout/stderr the descriptors `stdio`, in a process
/// group of its own that dies with wfx. Returns its pid.
pub(super) fn spawn(
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    env: &[(OsString, OsString)],
    stdio: [RawFd; 3],
) -> std::io::Result<libc::pid_t> {
    let cstr = |s: &OsStr| {
        CString::new(s.as_bytes()).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "nul byte in a command")
        })
    };
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let exe = resolve(program, path, cwd)?;
    let argv: Vec<CString> = std::iter::once(program)
        .chain(args.iter().map(OsString::as_os_str))
        .map(cstr)
        .collect::<std::io::Result<_>>()?;
    let envs: Vec<CString> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            cstr(&kv)
        })
        .collect::<std::io::Result<_>>()?;
    // Every fallible conversion before the descriptors are copied: an
    // early return after would leak them.
    let program_c = cstr(exe.as_os_str())?;
    let cwd_c = cstr(cwd.as_os_str())?;
    // Descriptors the child moves to 0..=2 must not be 0..=2 already
    // (one `dup2` would overwrite another's source): copies above 2.
    let mut high = Vec::new();
    for fd in stdio {
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            let e = std::io::Error::last_os_error();
            close_all(&high);
            return Err(e);
        }
        high.push(copy);
    }
    let plan = Plan {
        sh_argv: nul_ended(
            [SH, program_c.as_c_str()]
                .into_iter()
                .chain(argv.iter().skip(1).map(CString::as_c_str)),
        ),
        program: program_c,
        argv: nul_ended(argv.iter().map(CString::as_c_str)),
        envp: nul_ended(envs.iter().map(CString::as_c_str)),
        cwd: cwd_c,
        stdio: [high[0], high[1], high[2]],
        parent: unsafe { libc::getpid() },
        error: AtomicI32::new(0),
    };
    let mut stack = vec![0u8; STACK];
    // The stack grows down from its (16-byte aligned) top.
    let top = ((stack.as_mut_ptr() as usize + STACK) & !15) as *mut libc::c_void;
    // No signal handler of wfx's may run in the child while it shares
    // wfx's memory: all blocked until the child has reset them.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `child` only makes system calls on its own stack and reads
    // `plan`, which outlives it (CLONE_VFORK: this thread waits until the
    // child has exec'd or exited).
    let pid = unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&plan as *const Plan).cast_mut().cast(),
        );
        let e = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        close_all(&high);
        if pid < 0 {
            return Err(e);
        }
        pid
    };
    drop(stack);
    match plan.error.load(Ordering::SeqCst) {
        0 => Ok(pid),
        errno => {
            let mut status = 0;
            unsafe { libc::waitpid(pid, &mut status, 0) };
            Err(std::io::Error::from_raw_os_error(errno))
        }
    }
}

/// The pointers of `strings` and the null pointer that ends them, as
/// `execve` takes its arguments and environment.
fn nul_ended<'a>(strings: impl Iterator<Item = &'a CStr>) -> Vec<*const libc::c_char> {
    strings
        .map(CStr::as_ptr)
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The shell that runs a file the kernel cannot execute itself.
const SH: &CStr = c"/bin/sh";

/// The child's stack: system calls only (glibc's `posix_spawn` uses 32 KiB
/// plus the arguments; these are on the heap).
const STACK: usize = 64 * 1024;

fn close_all(fds: &[RawFd]) {
    for &fd in fds {
        unsafe { libc::close(fd) };
    }
}

/// The file to `exec`: `program` itself when it holds a `/`, else the
/// first executable of that name on `path` (as `execvp` finds it).
fn resolve(
    program: &OsStr,
    path: Option<&OsStr>,
    cwd: &Path,
) -> std::io::Result<std::path::PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Ok(program.into());
    }
    let default = OsStr::new("/bin:/usr/bin");
    let name = program.to_str().unwrap_or_default();
    super::which(name, Some(path.unwrap_or(default)), cwd)
        .filter(|_| !name.is_empty())
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT))
}

/// The child, between `clone` and `exec`: system calls only.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Plan`, alive while the parent waits.
    let plan = unsafe { &*(arg as *const Plan) };
    unsafe {
        // Handlers wfx installed would run on wfx's memory: default them
        // (exec would, too) before any signal can come; SIGPIPE, which
        // Rust ignores, back to its default as `std` does.
        let mut action: libc::sigaction = std::mem::zeroed();
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            if libc::sigaction(sig, std::ptr::null(), &mut action) != 0 {
                continue;
            }
            let handler = action.sa_sigaction;
            let handled = handler != libc::SIG_IGN && handler != libc::SIG_DFL;
            if handled || (sig == libc::SIGPIPE && handler == libc::SIG_IGN) {
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
        // The child dies with wfx even on `kill -9`; if wfx is already
        // gone, so is the child.
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != plan.parent {
            libc::_exit(127);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::setpgid(0, 0);
        for (to, &from) in plan.stdio.iter().enumerate() {
            if libc::dup2(from, to as RawFd) < 0 {
                return fail(plan);
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) != 0 {
            return fail(plan);
        }
        libc::execve(
            plan.program.as_ptr(),
            plan.argv.as_ptr(),
            plan.envp.as_ptr(),
        );
        if *libc::__errno_location() == libc::ENOEXEC {
            libc::execve(SH.as_ptr(), plan.sh_argv.as_ptr(), plan.envp.as_ptr());
        }
        fail(plan)
    }
}

/// Report `errno` to the parent and exit.
unsafe fn fail(plan: &Plan) -> libc::c_int {
    let errno = std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    plan.error.store(errno.max(1), Ordering::SeqCst);
    unsafe { libc::_exit(127) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;

    fn env() -> Vec<(OsString, OsString)> {
        std::env::vars_os().collect()
    }

    /// Run `sh -c script` in `cwd` with `env`: its pid, output and exit code.
    fn sh(script: &str, cwd: &Path, env: &[(OsString, OsString)]) -> (libc::pid_t, String, i32) {
        let (mut read, write) = std::io::pipe().unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let args = ["-c".into(), script.into()];
        let stdio = [null.as_raw_fd(), write.as_raw_fd(), write.as_raw_fd()];
        let pid = spawn(OsStr::new("sh"), &args, cwd, env, stdio).unwrap();
        drop(write);
        let mut out = String::new();
        read.read_to_string(&mut out).unwrap();
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        (pid, out, libc::WEXITSTATUS(status))
    }

    #[test]
    fn a_child_gets_its_stdio_cwd_env_and_group() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = env();
        env.push(("WFX_SPAWN_TEST".into(), "yes".into()));
        let script =
            "echo \"$WFX_SPAWN_TEST $(pwd) $(ps -o pgid= $$ | tr -d ' ') $$\"; echo err >&2";
        let (pid, out, code) = sh(script, dir.path(), &env);
        assert_eq!(code, 0);
        let cwd = dir.path().canonicalize().unwrap();
        assert_eq!(
            out,
            format!("yes {} {pid} {pid}\nerr\n", cwd.display()),
            "its own group, its cwd, its env"
        );
    }

    #[test]
    fn a_missing_program_or_directory_is_an_error_not_a_child() {
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let null = devnull.as_raw_fd();
        for (program, cwd) in [("wfx-no-such-program", "."), ("/bin/sh", "/no/such/dir")] {
            let e = spawn(OsStr::new(program), &[], Path::new(cwd), &env(), [null; 3]).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{program} in {cwd}");
        }
    }

    #[test]
    fn a_script_without_a_shebang_line_is_run_by_the_shell_as_execvp_did() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo \"plain $1 $2\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (mut read, write) = std::io::pipe().unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let stdio = [null.as_raw_fd(), write.as_raw_fd(), write.as_raw_fd()];
        let args = ["a".into(), "b c".into()];
        let pid = spawn(script.as_os_str(), &args, dir.path(), &env(), stdio).unwrap();
        drop(write);
        let mut out = String::new();
        read.read_to_string(&mut out).unwrap();
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert_eq!(
            (out.as_str(), libc::WEXITSTATUS(status)),
            ("plain a b c\n", 0)
        );
    }

    #[test]
    fn the_child_starts_with_no_signal_blocked_and_sigpipe_not_ignored() {
        let script = "grep -E '^(SigBlk|SigIgn)' /proc/self/status";
        let (_, out, code) = sh(script, Path::new("."), &env());
        assert_eq!(code, 0);
        assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
        // SIGPIPE (bit 13) is not ignored, as Rust ignores it in wfx.
        let ign = out.lines().find(|l| l.starts_with("SigIgn")).unwrap();
        let mask = u64::from_str_radix(ign.split_whitespace().nth(1).unwrap(), 16).unwrap();
        assert_eq!(mask & (1 << (libc::SIGPIPE - 1)), 0, "{out}");
    }
}
