//! What a running step blocks on, as file descriptors for one `poll(2)`
//! with the step's deadline: the output pipe, the child's exit and Ctrl-C.
//! Nothing wakes wfx but one of them or the deadline (no fixed sleep, no
//! periodic check).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Write end of the pipe the signal handler writes to (`-1`: none yet).
static INTERRUPT_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Its read end, which stays readable once Ctrl-C came (never drained).
static INTERRUPT_READ: AtomicI32 = AtomicI32::new(-1);

/// Make the pipe that turns Ctrl-C into a readable descriptor; called
/// once, before the handler is installed.
pub(super) fn open_interrupt_pipe() {
    let mut fds = [0; 2];
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    for fd in fds {
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        }
    }
    INTERRUPT_READ.store(fds[0], Ordering::SeqCst);
    INTERRUPT_WRITE.store(fds[1], Ordering::SeqCst);
}

/// From the signal handler (async-signal-safe): wake every step waiting.
pub(super) fn wake_on_interrupt() {
    let fd = INTERRUPT_WRITE.load(Ordering::SeqCst);
    if fd >= 0 {
        unsafe { libc::write(fd, b"!".as_ptr().cast(), 1) };
    }
}

/// The descriptor readable once Ctrl-C came, when the handler is installed.
pub(super) fn interrupt_fd() -> Option<RawFd> {
    let fd = INTERRUPT_READ.load(Ordering::SeqCst);
    (fd >= 0).then_some(fd)
}

/// The child's exit as a readable descriptor: a pidfd (Linux 5.3 and
/// later), else a pipe a waiting thread writes to.
pub(super) enum ExitWatch {
    Pidfd {
        fd: OwnedFd,
        pid: libc::pid_t,
    },
    Thread {
        fd: OwnedFd,
        status: std::sync::mpsc::Receiver<std::io::Result<ExitStatus>>,
    },
}

impl ExitWatch {
    /// Watch the child `pid` (a child of this process, not yet reaped).
    pub fn new(pid: libc::pid_t) -> std::io::Result<ExitWatch> {
        #[cfg(target_os = "linux")]
        {
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            if fd >= 0 {
                let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
                return Ok(ExitWatch::Pidfd { fd, pid });
            }
        }
        ExitWatch::with_thread(pid)
    }

    /// The portable way: a thread waits for the child, then writes to a
    /// pipe.
    pub fn with_thread(pid: libc::pid_t) -> std::io::Result<ExitWatch> {
        let (read, mut write) = std::io::pipe()?;
        let (tx, status) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(wait(pid));
            let _ = std::io::Write::write_all(&mut write, b"x");
        });
        Ok(ExitWatch::Thread {
            fd: read.into(),
            status,
        })
    }

    pub fn fd(&self) -> RawFd {
        match self {
            ExitWatch::Pidfd { fd, .. } | ExitWatch::Thread { fd, .. } => fd.as_raw_fd(),
        }
    }

    /// The exit status, once [`ExitWatch::fd`] is readable.
    pub fn status(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            ExitWatch::Pidfd { pid, .. } => wait(*pid),
            ExitWatch::Thread { status, .. } => status
                .recv()
                .unwrap_or_else(|_| Err(std::io::Error::other("child waiter vanished"))),
        }
    }
}

/// Reap the child `pid`: its exit status.
fn wait(pid: libc::pid_t) -> std::io::Result<ExitStatus> {
    let mut status = 0;
    loop {
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Which of `fds` are ready (readable, closed or in error), waiting at
/// most until `deadline` (`None`: until one is). Interrupted waits are
/// reported as nothing ready.
pub(super) fn ready(fds: &[RawFd], deadline: Option<Instant>) -> Vec<bool> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let timeout = match deadline {
        None => -1,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            // Rounded up: a wait that ends a little early would only
            // poll again.
            left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
        }
    };
    let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, timeout) };
    if n <= 0 {
        return vec![false; fds.len()];
    }
    polled.iter().map(|p| p.revents != 0).collect()
}

/// `now + d`, or `None` when it cannot be represented.
pub(super) fn after(d: Duration) -> Option<Instant> {
    Instant::now().checked_add(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child's pid, reaped by the [`ExitWatch`] under test.
    #[allow(clippy::zombie_processes)]
    fn exits_with(code: i32) -> libc::pid_t {
        let child = std::process::Command::new("sh")
            .args(["-c", &format!("sleep 0.05; exit {code}")])
            .spawn()
            .unwrap();
        child.id() as libc::pid_t
    }

    #[test]
    fn the_exit_wakes_a_wait_without_a_deadline_either_way() {
        for mut watch in [
            ExitWatch::new(exits_with(3)).unwrap(),
            ExitWatch::with_thread(exits_with(4)).unwrap(),
        ] {
            assert_eq!(ready(&[watch.fd()], None), vec![true]);
            let code = watch.status().unwrap().code();
            assert!(matches!(code, Some(3 | 4)), "{code:?}");
        }
    }

    #[test]
    fn a_deadline_ends_a_wait_on_nothing() {
        let (read, _write) = std::io::pipe().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&read);
        assert_eq!(ready(&[fd], after(Duration::from_millis(30))), vec![false]);
    }
}
