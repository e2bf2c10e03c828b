//! Child processes (DESIGN.md §6.2), shared by test runs, agents, gates and
//! `wfx run`: each child gets its own process group, a closed (or fully fed
//! then closed) stdin, output streamed to a log with only a bounded head and
//! tail kept in memory, a timeout that ends the whole group, and on Linux a
//! parent-death signal. Ctrl-C ends the group and is reported, never lost.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Bytes of output kept from the start of a run.
pub const DEFAULT_HEAD: usize = 16 * 1024;
/// Bytes of output kept from the end of a run.
pub const DEFAULT_TAIL: usize = 64 * 1024;

/// Called with each chunk of output as it arrives (on a reader thread).
pub type OutputHook = Box<dyn FnMut(&[u8]) + Send>;

/// What to run and how.
pub struct Spec {
    /// Program and arguments; never run through a shell unless the caller
    /// asks for `sh -c` itself.
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    /// Variables added to (or overriding) the inherited environment.
    pub env: Vec<(String, String)>,
    /// Fed to stdin, which is then closed; `None` → stdin is `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Combined stdout+stderr is appended here as it arrives.
    pub log: Option<PathBuf>,
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
            stdin: None,
            timeout: None,
            grace: Duration::from_secs(5),
            log: None,
            head_bytes: DEFAULT_HEAD,
            tail_bytes: DEFAULT_TAIL,
            on_output: None,
        }
    }

    /// `sh -c <script>`: only for commands a user wrote as one string.
    pub fn shell(script: &str, cwd: impl Into<PathBuf>) -> Spec {
        Spec::new(["sh", "-c", script], cwd)
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Spec {
        self.env.push((key.into(), value.into()));
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
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return true;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid pgrp …"; comm may hold spaces and parens.
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let mut fields = after.split_whitespace();
            let state = fields.next();
            let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
            if group == Some(pgid) && state != Some("Z") && state != Some("X") {
                return true;
            }
        }
        false
    }
    #[cfg(not(target_os = "linux"))]
    true
}

/// End a process group left behind by a run that died (`kill -9`): SIGTERM,
/// a grace period, then SIGKILL. Returns whether anything was there.
pub fn end_stale_group(pgid: i32, grace: Duration) -> bool {
    if !group_alive(pgid) {
        return false;
    }
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal_group(pgid, libc::SIGKILL);
    true
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

fn spawn_reader(
    mut pipe: std::io::PipeReader,
    mut log: Option<std::fs::File>,
    mut capture: Capture,
    mut hook: Option<OutputHook>,
) -> std::thread::JoinHandle<std::io::Result<Capture>> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let chunk = &buf[..n];
            if let Some(f) = log.as_mut() {
                f.write_all(chunk)?;
            }
            capture.push(chunk);
            if let Some(h) = hook.as_mut() {
                h(chunk);
            }
        }
        if let Some(f) = log.as_mut() {
            f.flush()?;
        }
        Ok(capture)
    })
}

/// Run a child to completion (or timeout / interrupt) as described in the
/// module docs. `on_spawn` receives the child's process group id (the
/// session lock records it so a resume can end a group a crash left).
pub fn run(mut spec: Spec, on_spawn: &mut dyn FnMut(i32)) -> Result<Outcome> {
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(Error::usage("empty command"));
    };
    let shown = spec.display();
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(&spec.cwd).process_group(0);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    #[cfg(target_os = "linux")]
    unsafe {
        cmd.pre_exec(|| {
            // The child dies with wfx even on `kill -9`.
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
    let (reader, writer) = std::io::pipe().map_err(|e| Error::io(&spec.cwd, e))?;
    let writer2 = writer.try_clone().map_err(|e| Error::io(&spec.cwd, e))?;
    cmd.stdout(writer).stderr(writer2);
    cmd.stdin(if spec.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });

    let log = match &spec.log {
        Some(path) => {
            if let Some(dir) = path.parent() {
                crate::session::store::create_dirs(dir)?;
            }
            Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| Error::io(path, e))?,
            )
        }
        None => None,
    };

    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            drop(cmd);
            return Err(Error::Usage(format!("cannot run `{shown}`: {e}")));
        }
    };
    drop(cmd); // closes our copies of the pipe's write ends
    let pgid = child.id() as i32;
    CURRENT_PGID.store(pgid, Ordering::SeqCst);
    on_spawn(pgid);

    let reader_thread = spawn_reader(
        reader,
        log,
        Capture::new(spec.head_bytes, spec.tail_bytes),
        spec.on_output.take(),
    );
    if let Some(input) = spec.stdin.take()
        && let Some(mut stdin) = child.stdin.take()
    {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
            // dropping `stdin` closes it: agents never wait on an open pipe
        });
    }

    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });

    let mut timed_out = false;
    let mut was_interrupted = false;
    let mut term_sent_at: Option<Instant> = None;
    let status = loop {
        let now = Instant::now();
        let wait = match (term_sent_at, spec.timeout) {
            (Some(t), _) => (t + spec.grace).saturating_duration_since(now),
            (None, Some(limit)) => (started + limit).saturating_duration_since(now),
            (None, None) => Duration::from_millis(100),
        }
        .min(Duration::from_millis(100));
        match rx.recv_timeout(wait) {
            Ok(status) => break status.map_err(|e| Error::io(&spec.cwd, e))?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::Internal("child waiter vanished".into()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        match term_sent_at {
            None => {
                let over = spec.timeout.is_some_and(|l| now >= started + l);
                if over || interrupted() {
                    timed_out = over && !interrupted();
                    was_interrupted = interrupted();
                    signal_group(pgid, libc::SIGTERM);
                    term_sent_at = Some(now);
                }
            }
            Some(t) if now >= t + spec.grace => {
                signal_group(pgid, libc::SIGKILL);
            }
            Some(_) => {}
        }
    };

    // The leader is gone; anything left in its group is an orphan. Give it
    // the grace period after SIGTERM, then SIGKILL, so the pipe closes.
    if group_alive(pgid) {
        signal_group(pgid, libc::SIGTERM);
        let deadline = Instant::now() + spec.grace.min(Duration::from_secs(2));
        while group_alive(pgid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_group(pgid, libc::SIGKILL);
    }
    CURRENT_PGID.store(0, Ordering::SeqCst);
    let capture = reader_thread
        .join()
        .map_err(|_| Error::Internal("output reader panicked".into()))?
        .map_err(|e| Error::io(spec.log.as_deref().unwrap_or(Path::new("<output>")), e))?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
