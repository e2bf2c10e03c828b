//! Child processes (DESIGN.md §6.2), shared by test runs, agents, gates and
//! `wfx run`: each child gets its own process group, a closed (or fully fed
//! then closed) stdin, output streamed to a log (whole, or kept to a cap:
//! see [`LogLimit`]) with only a bounded head and tail kept in memory, a
//! timeout that ends the whole group, and on Linux a parent-death signal.
//! Ctrl-C ends the group and is reported, never lost.
//!
//! While a child runs, wfx blocks in one `poll(2)` on the output pipe, the
//! child's exit (a pidfd) and Ctrl-C (a pipe the signal handler writes
//! to), with the step's next deadline as its timeout: it wakes for one of
//! them and for nothing else.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

mod log;
mod procs;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(not(target_os = "linux"))]
#[path = "process/spawn_std.rs"]
mod spawn;
mod wake;
use log::LogWriter;
pub use log::{AGENT_LOG, LogLimit};
pub use procs::start_time;

/// Bytes of output kept from the start of a run.
pub const DEFAULT_HEAD: usize = 16 * 1024;
/// Bytes of output kept from the end of a run.
pub const DEFAULT_TAIL: usize = 64 * 1024;

/// Called with each chunk of output as it arrives (on the thread that
/// called [`run`]; keep it short: the output waits meanwhile).
pub type OutputHook = Box<dyn FnMut(&[u8]) + Send>;

/// What to run and how.
pub struct Spec {
    /// Program and arguments; never run through a shell unless the caller
    /// asks for `sh -c` itself.
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    /// Variables added to (or overriding) the inherited environment.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment instead of wfx's own (then only
    /// `env` is set): a probe that must not find the person's credentials.
    pub clear_env: bool,
    /// Fed to stdin, which is then closed; `None` → stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Combined stdout+stderr is appended here as it arrives.
    pub log: Option<PathBuf>,
    /// Keep the log to this size (its head and tail); `None`: whole.
    pub log_limit: Option<LogLimit>,
    pub head_bytes: usize,
    pub tail_bytes: usize,
    pub on_output: Option<OutputHook>,
}

impl Spec {
    pub fn new<I, S>(argv: I, cwd: impl Into<PathBuf>) -> Spec
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Spec {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: cwd.into(),
            env: Vec::new(),
            clear_env: false,
            stdin: None,
            timeout: None,
            grace: Duration::from_secs(5),
            log: None,
            log_limit: None,
            head_bytes: DEFAULT_HEAD,
            tail_bytes: DEFAULT_TAIL,
            on_output: None,
        }
    }

    /// `sh -c <script>`: only for commands a user wrote as one string.
    pub fn shell(script: &str, cwd: impl Into<PathBuf>) -> Spec {
        Spec::new([shell_program(), "-c", script], cwd)
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Spec {
        self.env.push((key.into(), value.into()));
        self
    }
    pub fn clear_env(mut self) -> Spec {
        self.clear_env = true;
        self
    }
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Spec {
        self.stdin = Some(bytes.into());
        self
    }
    pub fn timeout(mut self, t: Duration) -> Spec {
        self.timeout = Some(t);
        self
    }
    pub fn grace(mut self, t: Duration) -> Spec {
        self.grace = t;
        self
    }
    pub fn log(mut self, path: impl Into<PathBuf>) -> Spec {
        self.log = Some(path.into());
        self
    }
    /// Keep the log to `limit` (see [`LogLimit`]).
    pub fn log_limit(mut self, limit: LogLimit) -> Spec {
        self.log_limit = Some(limit);
        self
    }
    pub fn on_output(mut self, hook: OutputHook) -> Spec {
        self.on_output = Some(hook);
        self
    }

    fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a child ended and what it printed (bounded).
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Stopped because wfx received Ctrl-C / SIGTERM.
    pub interrupted: bool,
    pub duration: Duration,
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes the child printed in all.
    pub total_bytes: u64,
    /// Process group the child ran in.
    pub pgid: i32,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.interrupted
    }

    /// True when head and tail do not hold the whole output.
    pub fn truncated(&self) -> bool {
        self.total_bytes > (self.head.len() + self.tail.len()) as u64
    }

    /// The output kept in memory as text (lossy UTF-8), with a marker where
    /// the middle was dropped.
    pub fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        if !self.truncated() {
            let mut s = head.into_owned();
            s.push_str(&String::from_utf8_lossy(&self.tail));
            return s;
        }
        let omitted = self.total_bytes - (self.head.len() + self.tail.len()) as u64;
        format!(
            "{head}\n[… {omitted} bytes omitted; see the full log …]\n{}",
            String::from_utf8_lossy(&self.tail)
        )
    }

    /// At most the last `max` bytes of output as text.
    pub fn tail_text(&self, max: usize) -> String {
        let all = if self.truncated() {
            self.tail.clone()
        } else {
            [self.head.as_slice(), self.tail.as_slice()].concat()
        };
        let start = all.len().saturating_sub(max);
        String::from_utf8_lossy(&all[start..]).into_owned()
    }

    /// `exit 1`, `killed by signal 9`, `timed out`, `interrupted`.
    pub fn describe(&self) -> String {
        if self.interrupted {
            "interrupted".into()
        } else if self.timed_out {
            "timed out".into()
        } else if let Some(code) = self.exit_code {
            format!("exit {code}")
        } else {
            format!("killed by signal {}", self.signal.unwrap_or(0))
        }
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CURRENT_PGID: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(_sig: libc::c_int) {
    wake::wake_on_interrupt();
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // Second Ctrl-C: end the child group and leave now. Only
        // async-signal-safe calls here.
        let pgid = CURRENT_PGID.load(Ordering::SeqCst);
        if pgid > 0 {
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
        unsafe { libc::_exit(3) };
    }
}

/// Route SIGINT and SIGTERM to a flag that running children and the loop
/// check, so that Ctrl-C ends the child group, saves state and exits 3.
pub fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe {
        wake::open_interrupt_pipe();
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    });
}

/// Whether Ctrl-C (or SIGTERM) has been received.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Send `sig` to a process group; false when no such group exists.
pub fn signal_group(pgid: i32, sig: i32) -> bool {
    pgid > 0 && unsafe { libc::killpg(pgid, sig) } == 0
}

/// Whether any process of the group is still alive. Zombies do not count:
/// where PID 1 does not reap orphans they linger but hold nothing open.
pub fn group_alive(pgid: i32) -> bool {
    if !signal_group(pgid, 0) {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        procs::all().any(|p| p.stat.pgrp == pgid && p.stat.is_live())
    }
    #[cfg(not(target_os = "linux"))]
    true
}

/// SIGTERM to `pgid`, wait until it is gone or `grace` passed, SIGKILL.
fn end_group(pgid: i32, grace: Duration) {
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(pgid, libc::SIGKILL);
}

/// Env variable every child of a step carries, and its descendants inherit:
/// `<wfx pid>.<wfx start time>.<n>`. It finds a step's processes that left
/// its group (`setsid`, double fork) while wfx runs, and a dead run's
/// leftovers on resume (the lock records wfx's pid and start time).
pub const STEP_VAR: &str = "WFX_STEP";

/// This wfx process as other processes see it: pid and start time (clock
/// ticks after boot, `/proc/<pid>/stat` field 22; `None` off Linux).
pub fn own_identity() -> (u32, Option<u64>) {
    static START: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let pid = std::process::id();
    (pid, *START.get_or_init(|| procs::start_time(pid as i32)))
}

/// A marker no other step of any process shares.
fn next_step_token() -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let (pid, start) = own_identity();
    let n = SEQ.fetch_add(1, Ordering::SeqCst);
    format!("{}{n}", step_prefix(pid, start.unwrap_or(0)))
}

/// The `WFX_STEP` prefix of every step of the wfx process `pid` started at
/// `start`.
pub fn step_prefix(pid: u32, start: u64) -> String {
    format!("{pid}.{start}.")
}

/// What a run that died (`kill -9`) left in its session lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadRun {
    /// The dead wfx process and its start time.
    pub pid: u32,
    pub start: Option<u64>,
    /// The process group of the child it was running, and the start time
    /// of that group's leader.
    pub child_pgid: Option<i32>,
    pub child_start: Option<u64>,
}

/// End what a run that died left behind: its child's process group, when
/// the group's leader is the very process recorded (same start time; a pid
/// reused since is never signalled), and every process still carrying one
/// of its step markers (those escaped the group). Returns whether anything
/// was ended. Off Linux nothing is checked and nothing is ended.
pub fn end_dead_run(run: &DeadRun, grace: Duration) -> bool {
    let mut ended = false;
    if let (Some(pgid), Some(start)) = (run.child_pgid, run.child_start)
        && pgid > 0
        && procs::start_time(pgid) == Some(start)
        && group_alive(pgid)
    {
        end_group(pgid, grace);
        ended = true;
    }
    if let Some(start) = run.start {
        let prefix = step_prefix(run.pid, start);
        let left = procs::marked(|token| token.starts_with(prefix.as_bytes()));
        ended |= !left.is_empty();
        procs::end_all(&left, grace);
    }
    ended
}

/// Make wfx the "child subreaper" of its descendants (Linux): a process of
/// a step whose parent exits is re-parented to wfx, not to init, so it
/// stays findable (and reapable) until the step ends it.
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
        });
    }
}

/// Leaders of the children being run now (several only in unit tests that
/// run in threads): the sweep never reaps one of these, whose exit status
/// belongs to its own waiter.
static LEADERS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// After a step's leader has exited: end every process of the step that
/// is still there — its group, the processes carrying its marker anywhere
/// (escaped with `setsid`, double fork, `start_new_session`), and orphans
/// re-parented to wfx that cleared their environment — then reap the
/// orphans wfx adopted.
fn end_step(
    pgid: i32,
    token: &str,
    step_start: Option<u64>,
    elapsed: Duration,
    baseline: Option<procs::PidBaseline>,
    grace: Duration,
) {
    // One look at `/proc` serves the marker search, the orphans and the
    // reaping: the sweep runs after every child. Everything it looks for
    // started after the leader, so only processes newer than it are read.
    let seen: Vec<procs::Proc> = procs::started_since(pgid, elapsed, baseline);
    let me = std::process::id() as i32;
    // A process that started before the step cannot carry its marker: only
    // the newer ones' environments are read.
    let mut left: Vec<i32> = seen
        .iter()
        .filter(|p| p.pid != me && p.stat.is_live())
        .filter(|p| step_start.is_none_or(|s| p.stat.start >= s))
        .filter(|p| procs::step_token(p.pid).is_some_and(|t| t == token.as_bytes()))
        .map(|p| p.pid)
        .collect();
    #[cfg(target_os = "linux")]
    {
        let leaders = LEADERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for p in &seen {
            let adopted_unmarked = p.stat.ppid == me
                && p.stat.is_live()
                && !leaders.contains(&p.pid)
                && step_start.is_some_and(|s| p.stat.start >= s)
                && procs::step_token(p.pid).is_none();
            if adopted_unmarked && !left.contains(&p.pid) {
                left.push(p.pid);
            }
        }
    }
    let group_left =
        signal_group(pgid, 0) && seen.iter().any(|p| p.stat.pgrp == pgid && p.stat.is_live());
    if group_left || !left.is_empty() {
        signal_group(pgid, libc::SIGTERM);
        procs::signal_all(&left, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while (group_alive(pgid) || procs::any_live(&left)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_group(pgid, libc::SIGKILL);
        procs::signal_all(&left, libc::SIGKILL);
        // What was just ended is reaped from a fresh look.
        reap_adopted(procs::all());
    } else {
        reap_adopted(seen.into_iter());
    }
}

/// Collect the exit status of orphans wfx adopted as subreaper (zombies
/// whose parent is wfx, among `seen`), never that of a leader someone
/// waits for.
fn reap_adopted(seen: impl Iterator<Item = procs::Proc>) {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id() as i32;
        let leaders = LEADERS.lock().unwrap_or_else(|e| e.into_inner());
        for p in seen {
            if p.stat.ppid == me && !p.stat.is_live() && !leaders.contains(&p.pid) {
                unsafe { libc::waitpid(p.pid, std::ptr::null_mut(), libc::WNOHANG) };
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = seen;
}

/// Bounded capture: the first `head_cap` bytes and the last `tail_cap`.
struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    fn new(head_cap: usize, tail_cap: usize) -> Capture {
        Capture {
            head: Vec::new(),
            tail: Vec::new(),
            head_cap,
            tail_cap,
            total: 0,
        }
    }

    fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.is_empty() || self.tail_cap == 0 {
            return;
        }
        if chunk.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&chunk[chunk.len() - self.tail_cap..]);
            return;
        }
        self.tail.extend_from_slice(chunk);
        // Compact only when the buffer has doubled, so the cost stays linear.
        if self.tail.len() >= 2 * self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
        }
    }

    fn finish(mut self) -> (Vec<u8>, Vec<u8>, u64) {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
        }
        (self.head, self.tail, self.total)
    }
}

/// Where the output goes as it arrives: the log (capped or whole), the
/// bounded capture, the caller's hook. A log that cannot be written is
/// reported at the end; the output is still read, so the child never
/// blocks on a full pipe.
struct Sink {
    log: Option<LogWriter>,
    capture: Capture,
    hook: Option<OutputHook>,
    error: Option<std::io::Error>,
}

impl Sink {
    fn push(&mut self, chunk: &[u8]) {
        if let Some(log) = self.log.as_mut()
            && let Err(e) = log.write(chunk)
        {
            self.error = Some(e);
            self.log = None;
        }
        self.capture.push(chunk);
        if let Some(h) = self.hook.as_mut() {
            h(chunk);
        }
    }

    fn finish(mut self) -> (Capture, Option<std::io::Error>) {
        if let Some(log) = self.log.take()
            && let Err(e) = log.finish()
        {
            self.error.get_or_insert(e);
        }
        (self.capture, self.error)
    }
}

/// The read end of the output pipe, non-blocking: read while it has data.
struct Output {
    pipe: Option<std::io::PipeReader>,
    buf: Vec<u8>,
}

impl Output {
    fn new(pipe: std::io::PipeReader) -> Output {
        use std::os::fd::AsRawFd;
        unsafe {
            let fd = pipe.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Output {
            pipe: Some(pipe),
            buf: vec![0u8; 64 * 1024],
        }
    }

    fn fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.pipe.as_ref().map(|p| p.as_raw_fd())
    }

    /// Read what is there into `sink`; at end of file (or a read error)
    /// the pipe is closed.
    fn drain(&mut self, sink: &mut Sink) {
        while let Some(pipe) = self.pipe.as_mut() {
            match pipe.read(&mut self.buf) {
                Ok(0) => self.pipe = None,
                Ok(n) => sink.push(&self.buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    sink.error.get_or_insert(e);
                    self.pipe = None;
                }
            }
        }
    }
}

/// Run a child to completion (or timeout / interrupt) as described in the
/// module docs. `on_spawn` receives the child's process group id (the
/// session lock records it so a resume can end a group a crash left).
pub fn run(mut spec: Spec, on_spawn: &mut dyn FnMut(i32)) -> Result<Outcome> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(Error::usage("empty command"));
    };
    let shown = spec.display();
    become_subreaper();
    let token = next_step_token();
    let mut env: std::collections::BTreeMap<OsString, OsString> = if spec.clear_env {
        Default::default()
    } else {
        std::env::vars_os().collect()
    };
    env.extend(spec.env.iter().map(|(k, v)| (k.into(), v.into())));
    env.insert(STEP_VAR.into(), token.clone().into());
    let env: Vec<(OsString, OsString)> = env.into_iter().collect();
    let (reader, writer) = std::io::pipe().map_err(|e| Error::io(&spec.cwd, e))?;
    // stdin: a pipe fed then closed, else /dev/null.
    let (stdin_read, stdin_write): (std::os::fd::OwnedFd, _) = match spec.stdin {
        Some(_) => {
            let (r, w) = std::io::pipe().map_err(|e| Error::io(&spec.cwd, e))?;
            (r.into(), Some(w))
        }
        None => (
            std::fs::File::open("/dev/null")
                .map_err(|e| Error::io(Path::new("/dev/null"), e))?
                .into(),
            None,
        ),
    };

    let log = match &spec.log {
        // Appended to only when it is a file of its own: a link an agent
        // left in its place is replaced, never written through.
        Some(path) => Some(
            crate::fsx::read_write(path)
                .and_then(|f| LogWriter::new(f, spec.log_limit))
                .map_err(|e| Error::io(path, e))?,
        ),
        None => None,
    };

    let started = Instant::now();
    // Before the leader: what bounds the pids its step can have taken.
    let baseline = procs::pid_baseline();
    // Until this returns, after the step's processes have all ended.
    let _child = crate::fsx::ChildRuns::start();
    let spawned = {
        use std::os::fd::AsRawFd;
        let mut leaders = LEADERS.lock().unwrap_or_else(|e| e.into_inner());
        let stdio = [
            stdin_read.as_raw_fd(),
            writer.as_raw_fd(),
            writer.as_raw_fd(),
        ];
        let spawned = spawn::spawn(program, args, &spec.cwd, &env, stdio);
        if let Ok(pid) = &spawned {
            leaders.push(*pid);
        }
        spawned
    };
    // Our copies of the pipes' child ends close here.
    drop((writer, stdin_read));
    let pgid = match spawned {
        Ok(pid) => pid,
        Err(e) => return Err(Error::Usage(format!("cannot run `{shown}`: {e}"))),
    };
    let leader_start = procs::start_time(pgid);
    CURRENT_PGID.store(pgid, Ordering::SeqCst);
    on_spawn(pgid);

    if let Some(input) = spec.stdin.take()
        && let Some(stdin) = stdin_write
    {
        feed(stdin, input);
    }
    let mut sink = Sink {
        log,
        capture: Capture::new(spec.head_bytes, spec.tail_bytes),
        hook: spec.on_output.take(),
        error: None,
    };
    let mut output = Output::new(reader);
    let mut exit = wake::ExitWatch::new(pgid).map_err(|e| Error::io(&spec.cwd, e))?;

    // One wait for whatever comes first: output, the exit, Ctrl-C, the
    // timeout, the end of the grace after SIGTERM.
    let mut timed_out = false;
    let mut was_interrupted = false;
    let mut term_sent_at: Option<Instant> = None;
    let mut killed = false;
    let timeout_at = spec.timeout.and_then(|t| started.checked_add(t));
    let status = loop {
        if term_sent_at.is_none() && interrupted() {
            was_interrupted = true;
            signal_group(pgid, libc::SIGTERM);
            term_sent_at = Some(Instant::now());
        }
        let deadline = match term_sent_at {
            Some(t) if !killed => t.checked_add(spec.grace),
            Some(_) => None,
            None => timeout_at,
        };
        // Once Ctrl-C is handled its descriptor stays readable: left out.
        let interrupt = wake::interrupt_fd().filter(|_| term_sent_at.is_none());
        let fds: Vec<std::os::fd::RawFd> = [Some(exit.fd()), output.fd(), interrupt]
            .into_iter()
            .flatten()
            .collect();
        let ready = wake::ready(&fds, deadline);
        output.drain(&mut sink);
        if ready[0] {
            break exit.status().map_err(|e| Error::io(&spec.cwd, e))?;
        }
        let now = Instant::now();
        match term_sent_at {
            None if timeout_at.is_some_and(|t| now >= t) => {
                timed_out = true;
                signal_group(pgid, libc::SIGTERM);
                term_sent_at = Some(now);
            }
            Some(t) if !killed && t.checked_add(spec.grace).is_none_or(|k| now >= k) => {
                signal_group(pgid, libc::SIGKILL);
                killed = true;
            }
            _ => {}
        }
    };

    LEADERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&p| p != pgid);
    // The leader is gone; whatever the step started and is still there is
    // an orphan: its group, and what escaped the group. The grace after
    // SIGTERM, then SIGKILL, so the pipe closes.
    let grace = spec.grace.min(Duration::from_secs(2));
    end_step(
        pgid,
        &token,
        leader_start,
        started.elapsed(),
        baseline,
        grace,
    );
    CURRENT_PGID.store(0, Ordering::SeqCst);
    // The output is read until its end of file, but never longer than the
    // grace: a process wfx could not end (another user's, one that cleared
    // its marker and left before wfx adopted it) must not hang the step.
    let read_until = wake::after(grace);
    while let Some(fd) = output.fd() {
        if read_until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        wake::ready(&[fd], read_until);
        output.drain(&mut sink);
    }
    let (capture, log_error) = sink.finish();
    if let Some(e) = log_error {
        return Err(Error::io(
            spec.log.as_deref().unwrap_or(Path::new("<output>")),
            e,
        ));
    }
    let (head, tail, total_bytes) = capture.finish();
    Ok(Outcome {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        interrupted: was_interrupted,
        duration: started.elapsed(),
        head,
        tail,
        total_bytes,
        pgid,
    })
}

/// Write `input` to a child's stdin and close it (agents never wait on an
/// open pipe): what the empty pipe takes at once (a prompt, mostly) is
/// written here, the rest by a thread, so a child that reads late never
/// holds up wfx.
fn feed(stdin: std::io::PipeWriter, input: Vec<u8>) {
    use std::os::fd::AsRawFd;
    let fd = stdin.as_raw_fd();
    // SAFETY: `fcntl` on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let mut written = 0;
    // SAFETY: as above.
    if flags >= 0 && unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == 0 {
        let mut pipe = &stdin;
        while written < input.len() {
            match pipe.write(&input[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Full (`WouldBlock`): the thread writes the rest. Another
                // error (the child is gone): nothing more can be written.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => return,
            }
        }
        // SAFETY: as above.
        unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
    }
    if written < input.len() {
        std::thread::spawn(move || {
            let mut stdin = stdin;
            let _ = stdin.write_all(&input[written..]);
        });
    }
}

/// The shell that runs a command written as one string: `/bin/sh`, which
/// POSIX systems have whatever PATH says (a PATH holding only a project's
/// toolchain still runs its tests), else `sh` from PATH.
pub fn shell_program() -> &'static str {
    static SH: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    SH.get_or_init(|| {
        if Path::new("/bin/sh").is_file() {
            "/bin/sh"
        } else {
            "sh"
        }
    })
}

/// Quote a value for `sh -c` so it is always one literal word.
pub fn shell_escape(value: &str) -> String {
    if !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return value.to_string();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Find `program` the way a shell would: as a path when it holds a `/`
/// (relative to `cwd`), else in each directory of `path_var`.
pub fn which(program: &str, path_var: Option<&std::ffi::OsStr>, cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = cwd.join(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn which_finds_executables_only() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().as_os_str();
        assert_eq!(
            which("tool", Some(path), std::path::Path::new("/")),
            Some(exe.clone())
        );
        assert_eq!(which("plain", Some(path), std::path::Path::new("/")), None);
        assert_eq!(
            which("./tool", None, dir.path()),
            Some(dir.path().join("./tool"))
        );
    }

    fn run_sh(script: &str) -> Outcome {
        run(Spec::shell(script, "."), &mut |_| {}).unwrap()
    }

    #[test]
    fn captures_exit_code_and_output() {
        let o = run_sh("echo out; echo err >&2; exit 7");
        assert_eq!(o.exit_code, Some(7));
        assert_eq!(o.text(), "out\nerr\n");
        assert!(!o.success());
    }

    #[test]
    fn stdin_is_closed_not_left_open() {
        let o = run(
            Spec::new(["cat"], ".").timeout(Duration::from_secs(10)),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(o.exit_code, Some(0));
        assert!(!o.timed_out);
        let o = run(Spec::new(["cat"], ".").stdin("prompt text"), &mut |_| {}).unwrap();
        assert_eq!(o.text(), "prompt text");
    }

    /// A prompt bigger than the pipe holds, to a child that reads it only
    /// after a while: the part the pipe does not take at once follows, all
    /// of it, then the end of input.
    #[test]
    fn a_prompt_bigger_than_the_pipe_arrives_whole_and_closed() {
        let prompt: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        // `cksum` prints the checksum and the byte count.
        let cksum = |script: &str| {
            run(
                Spec::new([shell_program(), "-c", script], ".")
                    .stdin(prompt.clone())
                    .timeout(Duration::from_secs(20)),
                &mut |_| {},
            )
            .unwrap()
            .text()
        };
        let late = cksum("sleep 0.2; cksum");
        assert!(late.contains(" 300000"), "{late}");
        assert_eq!(late, cksum("cksum"));
        // A child that never reads: wfx is not held up, the child ends.
        let o = run(
            Spec::new(["true"], ".").stdin(vec![b'x'; 300_000]),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(o.exit_code, Some(0));
    }

    #[test]
    fn capture_keeps_head_and_tail_only() {
        let mut c = Capture::new(4, 6);
        for chunk in [&b"0123"[..], b"456789", b"abcdefghij", b"XYZ"] {
            c.push(chunk);
        }
        let (head, tail, total) = c.finish();
        assert_eq!(head, b"0123");
        assert_eq!(tail, b"hijXYZ");
        assert_eq!(total, 23);
    }

    #[test]
    fn non_utf8_output_is_lossy_not_fatal() {
        let o = run_sh("printf 'ok \\377\\376 done'");
        assert_eq!(o.text(), "ok \u{fffd}\u{fffd} done");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild.pid");
        let script = format!("sleep 1000 & echo $! > {}; wait", pidfile.display());
        let o = run(
            Spec::shell(&script, ".")
                .timeout(Duration::from_millis(300))
                .grace(Duration::from_millis(200)),
            &mut |_| {},
        )
        .unwrap();
        assert!(o.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is gone (or a zombie about to be reaped by init).
        let alive = unsafe { libc::kill(pid, 0) } == 0
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| !s.contains(") Z "))
                .unwrap_or(false);
        assert!(!alive, "grandchild {pid} survived the timeout");
        assert!(!group_alive(o.pgid));
    }

    #[test]
    fn leftover_background_process_is_ended_after_exit() {
        let o = run_sh("sleep 1000 & echo started");
        assert_eq!(o.exit_code, Some(0));
        assert!(!group_alive(o.pgid));
    }

    /// Whether `pid` is a live process (zombies are not).
    fn live(pid: i32) -> bool {
        procs::stat(pid).is_some_and(|s| s.is_live())
    }

    fn pid_in(file: &Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Run `setsid sleep 300 <redirect> & …; <then> echo ran` as a step;
    /// the daemon must be gone after it.
    fn setsid_daemon_is_ended(redirect: &str, then: &str) {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("daemon.pid");
        let script = format!(
            "setsid sleep 300 {redirect} & echo $! > {}; {then} echo ran",
            pidfile.display()
        );
        let o = run(
            Spec::shell(&script, ".").timeout(Duration::from_secs(60)),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(o.exit_code, Some(0));
        assert_eq!(o.text(), "ran\n");
        let pid = pid_in(&pidfile);
        assert!(!live(pid), "setsid daemon {pid} survived the step");
    }

    #[test]
    fn escaped_daemon_holding_the_pipe_neither_hangs_nor_survives() {
        // `setsid` leaves the group and keeps stdout: the pipe stays open.
        setsid_daemon_is_ended("", "");
    }

    /// Over 100 ms the sweep reads only the pids handed out since the
    /// leader when the forks counted since say they cannot have gone
    /// round: a daemon that escaped early in a longer step is still found.
    #[test]
    fn a_daemon_escaped_early_in_a_longer_step_does_not_survive() {
        setsid_daemon_is_ended(">/dev/null 2>&1", "sleep 0.3;");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn double_forked_orphan_without_marker_is_adopted_and_ended() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("orphan.pid");
        // Clears its environment (no marker), leaves the group, and its
        // parent exits at once: only the subreaper still sees it.
        let script = format!(
            "env -i setsid sh -c 'sleep 300 >/dev/null 2>&1 & echo $! > {}' ; sleep 0.2",
            pidfile.display()
        );
        let o = run(Spec::shell(&script, "."), &mut |_| {}).unwrap();
        assert_eq!(o.exit_code, Some(0));
        let pid = pid_in(&pidfile);
        assert!(!live(pid), "orphan {pid} survived the step");
        assert!(procs::stat(pid).is_none(), "orphan {pid} was not reaped");
    }

    #[test]
    fn dead_run_is_ended_only_when_the_recorded_start_time_matches() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("victim.pid");
        // An unrelated process group standing in for a reused pid.
        let mut victim = std::process::Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = victim.id() as i32;
        let start = procs::start_time(pgid).expect("start time");
        let reused = DeadRun {
            pid: 1,
            start: Some(1),
            child_pgid: Some(pgid),
            child_start: Some(start + 1),
        };
        assert!(!end_dead_run(&reused, Duration::from_millis(100)));
        assert!(
            live(pgid),
            "a group whose leader started later was signalled"
        );
        let same = DeadRun {
            child_start: Some(start),
            ..reused
        };
        assert!(end_dead_run(&same, Duration::from_millis(500)));
        let status = victim.wait().unwrap();
        assert!(status.signal().is_some());
        drop(pidfile);
    }

    #[test]
    fn missing_program_is_a_usage_error() {
        let err = run(Spec::new(["wfx-no-such-program-xyz"], "."), &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("wfx-no-such-program-xyz"), "{err}");
    }

    #[test]
    fn shell_escape_is_literal() {
        for v in [
            "plain",
            "",
            "a b",
            "$(touch pwned)",
            "`id`",
            "it's",
            "line\nbreak",
            "\"q\"",
        ] {
            let script = format!("printf %s {}", shell_escape(v));
            assert_eq!(run_sh(&script).text(), v, "value {v:?}");
        }
    }
}
