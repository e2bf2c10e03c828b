//! Live progress of a test run (DESIGN.md §10.7): counts read from the
//! runner's streamed output and the elapsed time, for the progress line on
//! a terminal.
//!
//! The progress counting never runs on the thread that streams the output
//! into the log: a [`Watch`] thread at the lowest CPU priority reads the log
//! behind the writer, counts with a [`Counter`] and reports at most every
//! 100 ms. When output arrives faster than it can count (gigabytes a
//! second), its counts lag behind instead of slowing the run; the run's
//! results never come from here (they are parsed from the report and the
//! log). Only [`FirstResult`] counts on the streaming thread, and only
//! until the first result: its time must not depend on a core being free.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use memchr::memmem;

use super::detect::Framework;
use crate::duration;

/// Passed, failed and skipped tests seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
}

impl Counts {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Skipped => self.skipped += 1,
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Counts::default()
    }
}

/// What the progress line shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub counts: Counts,
    pub elapsed: Duration,
    /// How long the last run of the same command took, if known.
    pub estimate: Option<Duration>,
}

impl Progress {
    /// `12 passed, 1 failed, 0 skipped · 4.2 s, eta ~19 s`: the part of
    /// the progress line after the command.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        if !self.counts.is_empty() {
            let c = self.counts;
            s.push_str(&format!(
                "{} passed, {} failed, {} skipped · ",
                c.passed, c.failed, c.skipped
            ));
        }
        s.push_str(&duration::text(self.elapsed));
        match self.estimate {
            Some(e) if e > self.elapsed => {
                s.push_str(&format!(", eta ~{}", duration::text(e - self.elapsed)));
            }
            Some(e) => s.push_str(&format!(" (last run {})", duration::text(e))),
            None => {}
        }
        s
    }
}

/// Called on the watcher thread when what the line shows has changed.
pub type ProgressHook = Box<dyn FnMut(Progress) + Send>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    Skipped,
}

/// Longest unfinished line kept between two reads; longer lines are
/// never result lines worth counting.
const MAX_LINE: usize = 4096;

/// Counts result lines of every runner wfx knows, from output fed in
/// pieces cut anywhere: libtest `... ok`, nextest `PASS [`, TAP `ok N`, go
/// `"Action":"pass"`, node/jest/vitest `✔ ✓ ✖`, pytest `-v` `PASSED` and
/// pytest's progress marks (`tests/test_x.py ..F.s`), which are counted as
/// they arrive, before their line ends.
#[derive(Debug, Clone)]
pub struct Counter {
    pytest: bool,
    counts: Counts,
    /// The unfinished last line (at most [`MAX_LINE`] bytes).
    pending: Vec<u8>,
    /// Part of a line was dropped: it is not counted.
    overlong: bool,
    /// pytest marks of the unfinished line already counted.
    marks_counted: usize,
    /// pytest printed its result sections (`=== FAILURES ===`): bare mark
    /// lines no longer are progress.
    pytest_summary: bool,
    /// A result of a whole file was printed (vitest's `✓ a.test.ts (5
    /// tests)`, jest's `PASS a.test.js`): tests have run, though none was
    /// counted one by one.
    file_done: bool,
}

impl Counter {
    /// `framework`: the runner, when known; bare pytest mark lines (`-q`,
    /// or the continuation of a long file's marks) count only for pytest.
    pub fn new(framework: Option<Framework>) -> Counter {
        Counter {
            pytest: framework == Some(Framework::Pytest),
            counts: Counts::default(),
            pending: Vec::new(),
            overlong: false,
            marks_counted: 0,
            pytest_summary: false,
            file_done: false,
        }
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Whether any test result was seen, counted or for a whole file.
    pub fn ran_tests(&self) -> bool {
        self.file_done || !self.counts.is_empty()
    }

    /// Feed the next piece of output.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            let (line, rest) = (&bytes[..i], &bytes[i + 1..]);
            if self.pending.is_empty() && !self.overlong {
                self.line(line);
            } else {
                self.keep(line);
                let pending = std::mem::take(&mut self.pending);
                if !self.overlong {
                    self.line(&pending);
                }
                self.pending = pending;
                self.pending.clear();
            }
            self.overlong = false;
            self.marks_counted = 0;
            bytes = rest;
        }
        if !bytes.is_empty() {
            self.keep(bytes);
            if !self.overlong {
                let pending = std::mem::take(&mut self.pending);
                self.count_marks(&pending, false);
                self.pending = pending;
            }
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.pending.len() + bytes.len() > MAX_LINE {
            self.overlong = true;
        } else {
            self.pending.extend_from_slice(bytes);
        }
    }

    /// One finished line.
    fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // vitest colours its lines even into a file.
        let plain;
        let line = if memchr::memchr(0x1b, line).is_some() {
            plain = super::parse::strip_ansi(&String::from_utf8_lossy(line)).into_owned();
            plain.as_bytes()
        } else {
            line
        };
        if self.count_marks(line, true) {
            return;
        }
        if self.pytest && line.starts_with(b"==") {
            self.pytest_summary = memmem::find(line, b"test session starts").is_none();
        }
        match classify(line) {
            Some(outcome) => self.counts.add(outcome),
            None => self.file_done |= is_file_result(line),
        }
    }

    /// Count the pytest marks of `line` not counted yet; false when it is
    /// not a pytest progress line.
    fn count_marks(&mut self, line: &[u8], complete: bool) -> bool {
        if self.pytest_summary {
            return false;
        }
        let Some(marks) = pytest_marks(line, complete, self.pytest) else {
            return false;
        };
        for &m in marks.get(self.marks_counted..).unwrap_or_default() {
            self.counts.add(mark_outcome(m));
        }
        self.marks_counted = self.marks_counted.max(marks.len());
        true
    }
}

fn is_mark(b: u8) -> bool {
    matches!(b, b'.' | b'F' | b'E' | b's' | b'x' | b'X')
}

fn mark_outcome(m: u8) -> Outcome {
    match m {
        b'.' | b'X' => Outcome::Passed,
        b'F' | b'E' => Outcome::Failed,
        _ => Outcome::Skipped,
    }
}

/// The marks of a pytest progress line, `tests/test_x.py ..F.s [ 41%]`
/// (or, with `bare`, `..F.s [ 41%]`: `-q`, and a long file's marks
/// wrapped onto the next line). An unfinished line may stop anywhere.
fn pytest_marks(line: &[u8], complete: bool, bare: bool) -> Option<&[u8]> {
    let start = if bare && line.first().copied().is_some_and(is_mark) {
        0
    } else {
        let space = memchr::memchr(b' ', line)?;
        let path = &line[..space];
        if !path.ends_with(b".py") || path.contains(&b':') {
            return None;
        }
        space + 1
    };
    let body = &line[start..];
    let n = body.iter().take_while(|&&b| is_mark(b)).count();
    if n == 0 {
        return None;
    }
    let rest = trim_start(&body[n..]);
    let ok = match rest.first() {
        None => true,
        Some(b'[') if complete => rest.ends_with(b"]"),
        Some(b'[') => !rest[1..].contains(&b']') || rest.ends_with(b"]"),
        Some(_) => false,
    };
    // Nothing after the marks: still being written, or pytest's classic
    // output style (no percentage).
    ok.then_some(&body[..n])
}

/// Sort one finished line (`\r` removed) of any runner but pytest's marks.
fn classify(line: &[u8]) -> Option<Outcome> {
    if line.starts_with(b"test ") {
        let e = trim_end(line);
        return if e.ends_with(b" ... ok") {
            Some(Outcome::Passed)
        } else if e.ends_with(b" ... FAILED") {
            Some(Outcome::Failed)
        } else if memmem::find(e, b" ... ignored").is_some() {
            Some(Outcome::Skipped)
        } else {
            None
        };
    }
    let t = trim_start(line);
    let first = *t.first()?;
    if first.is_ascii_uppercase() {
        // nextest: `PASS [   0.004s] crate tests::a`
        for (word, outcome) in [
            (&b"PASS"[..], Outcome::Passed),
            (b"FAIL", Outcome::Failed),
            (b"SKIP", Outcome::Skipped),
        ] {
            if let Some(rest) = t.strip_prefix(word)
                && trim_start(rest).starts_with(b"[")
                && rest.starts_with(b" ")
            {
                return Some(outcome);
            }
        }
        if let Some(rest) = t.strip_prefix(b"SIG") {
            let n = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
            let after = &rest[n..];
            if n > 0 && after.starts_with(b" ") && trim_start(after).starts_with(b"[") {
                return Some(Outcome::Failed);
            }
        }
    }
    // TAP: `ok 3 - name`, `not ok 4 - name`, `ok 5 - name # SKIP`
    if let Some(rest) = t.strip_prefix(b"not ok ") {
        return rest
            .first()
            .is_some_and(u8::is_ascii_digit)
            .then_some(Outcome::Failed);
    }
    if let Some(rest) = t.strip_prefix(b"ok ") {
        if !rest.first().is_some_and(u8::is_ascii_digit) {
            return None;
        }
        return Some(match memmem::find(rest, b"#") {
            Some(i) if trim_start(&rest[i + 1..]).starts_with(b"SKIP") => Outcome::Skipped,
            _ => Outcome::Passed,
        });
    }
    // go test -json: a test's (not a package's) final event.
    if first == b'{' {
        let i = memmem::find(t, b"\"Action\":\"")?;
        let action = &t[i + 10..];
        memmem::find(action, b"\"Test\":")?;
        return match action.first() {
            Some(b'p') if action.starts_with(b"pass\"") => Some(Outcome::Passed),
            Some(b'f') if action.starts_with(b"fail\"") => Some(Outcome::Failed),
            Some(b's') if action.starts_with(b"skip\"") => Some(Outcome::Skipped),
            _ => None,
        };
    }
    // node's spec reporter, jest, vitest
    if !first.is_ascii() {
        for (sign, outcome) in [
            ("✔ ", Outcome::Passed),
            ("✓ ", Outcome::Passed),
            ("✖ ", Outcome::Failed),
            ("× ", Outcome::Failed),
            ("✕ ", Outcome::Failed),
            ("﹣ ", Outcome::Skipped),
            ("↓ ", Outcome::Skipped),
            ("○ ", Outcome::Skipped),
        ] {
            if t.starts_with(sign.as_bytes()) {
                return (!is_file_summary(t)).then_some(outcome);
            }
        }
        return None;
    }
    pytest_verbose(t)
}

/// A whole file's result: vitest's `✓ a.test.ts (5 tests) 12ms` /
/// `❯ a.test.ts (4 tests | 2 failed)`, jest's `PASS a.test.js`.
fn is_file_result(line: &[u8]) -> bool {
    let t = trim_start(line);
    ((t.starts_with("✓ ".as_bytes()) || t.starts_with("❯ ".as_bytes())) && is_file_summary(t))
        || ((t.starts_with(b"PASS ") || t.starts_with(b"FAIL "))
            && !trim_start(&t[5..]).starts_with(b"["))
}

/// vitest's line for a whole file, `✓ test/a.test.js (5 tests) 12ms` or
/// `(5 tests | 1 skipped)`:
/// the file's tests are not one test.
fn is_file_summary(t: &[u8]) -> bool {
    memmem::find_iter(t, b" (").any(|i| {
        let rest = &t[i + 2..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let rest = &rest[digits..];
        let rest = rest
            .strip_prefix(b" tests")
            .or_else(|| rest.strip_prefix(b" test"));
        digits > 0 && rest.is_some_and(|r| r.starts_with(b")") || r.starts_with(b" |"))
    })
}

/// pytest `-v`: `tests/test_a.py::test_x PASSED [ 50%]`, and with xdist
/// `[gw0] [ 50%] PASSED tests/test_a.py::test_x`. The short summary's
/// `FAILED tests/test_a.py::test_x - msg` repeats a result: not counted.
fn pytest_verbose(t: &[u8]) -> Option<Outcome> {
    let id = memmem::find(t, b".py::")?;
    const WORDS: [(&[u8], Outcome); 6] = [
        (b"PASSED", Outcome::Passed),
        (b"FAILED", Outcome::Failed),
        (b"ERROR", Outcome::Failed),
        (b"SKIPPED", Outcome::Skipped),
        (b"XFAIL", Outcome::Skipped),
        (b"XPASS", Outcome::Passed),
    ];
    let word_at = |s: &[u8]| {
        WORDS
            .iter()
            .find(|(w, _)| {
                s.starts_with(w) && s.get(w.len()).is_none_or(|b| b.is_ascii_whitespace())
            })
            .map(|(_, o)| *o)
    };
    if t.starts_with(b"[gw") {
        let before = trim_end(&t[..id]);
        let word_start = before.iter().rposition(|&b| b == b' ')?;
        let head = trim_end(&before[..word_start]);
        let word = head.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1);
        return word_at(&head[word..]);
    }
    if word_at(t).is_some() {
        return None;
    }
    let after = &t[id..];
    let space = memchr::memchr(b' ', after)?;
    word_at(trim_start(&after[space..]))
}

fn trim_end(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &b[..end]
}

fn trim_start(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[start..]
}

/// How often the watcher reads the log and the line is redrawn.
pub const TICK: Duration = Duration::from_millis(100);

/// The most output fed to a [`FirstResult`] before it gives up: past it
/// the run's fixed cost is left unknown rather than count more on the
/// thread that streams the output.
const FIRST_RESULT_SCAN: u64 = 64 * 1024 * 1024;

/// When a run's first test result arrived: the run's fixed cost (a build,
/// a `pretest` script, the runner's start), which decides whether a retest
/// tier is worth running. Noted on the thread that streams the output, as
/// each piece arrives: a watcher thread at the lowest priority could see
/// it only after the run on a busy machine, and the tier would be run.
/// It counts only until the first result, then does nothing.
#[derive(Clone)]
pub struct FirstResult {
    at: Arc<std::sync::OnceLock<Duration>>,
}

impl FirstResult {
    /// The handle and the hook to give the run ([`crate::process::Spec::on_output`]);
    /// times count from `started`.
    pub fn hook(
        framework: Option<Framework>,
        started: Instant,
    ) -> (FirstResult, crate::process::OutputHook) {
        let at = Arc::new(std::sync::OnceLock::new());
        let noted = at.clone();
        let mut counter = Some(Counter::new(framework));
        let mut fed = 0u64;
        let hook = Box::new(move |chunk: &[u8]| {
            let Some(c) = counter.as_mut() else { return };
            c.feed(chunk);
            fed += chunk.len() as u64;
            if c.ran_tests() {
                let _ = noted.set(started.elapsed());
                counter = None;
            } else if fed >= FIRST_RESULT_SCAN {
                counter = None;
            }
        });
        (FirstResult { at }, hook)
    }

    /// How long after the start the first test result arrived; `None`
    /// when none did.
    pub fn get(&self) -> Option<Duration> {
        self.at.get().copied()
    }
}

/// A thread that follows a run's log and reports [`Progress`] until it is
/// dropped: only when a progress line is drawn.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The watcher's thread id once it runs (0 before): its priority is
    /// raised back before it is waited for.
    tid: Arc<std::sync::atomic::AtomicI64>,
}

impl Watch {
    /// Follow `log` (it may not exist yet) from its start.
    pub fn start(
        log: PathBuf,
        framework: Option<Framework>,
        estimate: Option<Duration>,
        mut hook: ProgressHook,
    ) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let tid = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let own_tid = tid.clone();
        // Times count from the run's start, not from when the thread at
        // nice 19 first gets a core (hundreds of ms later on a busy machine).
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("wfx-progress".into())
            .spawn(move || {
                own_tid.store(lowest_priority(), Ordering::Release);
                let mut counter = Counter::new(framework);
                let mut file: Option<File> = None;
                let mut buf = vec![0u8; 64 * 1024];
                let mut shown: Option<(Counts, String)> = None;
                while !stopped.load(Ordering::Relaxed) {
                    if file.is_none() {
                        file = File::open(&log).ok();
                    }
                    let tick = Instant::now();
                    while let Some(f) = file.as_mut() {
                        match f.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => counter.feed(&buf[..n]),
                        }
                        if stopped.load(Ordering::Relaxed) {
                            return;
                        }
                        if tick.elapsed() >= TICK {
                            break;
                        }
                    }
                    let p = Progress {
                        counts: counter.counts(),
                        elapsed: started.elapsed(),
                        estimate,
                    };
                    let now = (p.counts, duration::text(p.elapsed));
                    if shown.as_ref() != Some(&now) {
                        hook(p);
                        shown = Some(now);
                    }
                    std::thread::park_timeout(TICK.saturating_sub(tick.elapsed()));
                }
            })
            .ok();
        Watch { stop, thread, tid }
    }
}

impl Drop for Watch {
    /// Stops the watcher: its priority back first (a thread at nice 19 on
    /// a busy machine may wait hundreds of milliseconds for a core), then
    /// waited for, so nothing is drawn after the run.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            normal_priority(self.tid.load(Ordering::Acquire));
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// The watcher is an observer: on Linux it runs at nice 19, so a runner
/// that keeps every core busy is not slowed by it. Returns its thread id
/// (0 elsewhere).
fn lowest_priority() -> i64 {
    #[cfg(target_os = "linux")]
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
        tid
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// Thread `tid` back at the process's own priority.
fn normal_priority(tid: i64) {
    #[cfg(target_os = "linux")]
    if tid > 0 {
        unsafe {
            let own = libc::getpriority(libc::PRIO_PROCESS, 0);
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, own);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = tid;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::parse::fixture;

    fn counts(fw: Option<Framework>, text: &str) -> (u32, u32, u32) {
        let mut c = Counter::new(fw);
        c.feed(text.as_bytes());
        let k = c.counts();
        (k.passed, k.failed, k.skipped)
    }

    #[test]
    fn a_whole_files_result_shows_that_tests_ran() {
        for (text, ran) in [
            (" ✓ test/shapes.test.ts (4 tests) 3ms\n", true),
            (
                " \x1b[32m✓\x1b[39m test/shapes.test.ts \x1b[2m(\x1b[22m\x1b[2m4 tests\x1b[22m\x1b[2m)\x1b[22m\x1b[32m 4\x1b[2mms\x1b[22m\x1b[39m\n",
                true,
            ),
            (" ❯ test/shapes.test.ts (4 tests | 2 failed) 13ms\n", true),
            ("PASS src/math.test.js\n", true),
            ("> pkg@1.0.0 pretest\n> tsc -p .\n", false),
            ("        PASS [   0.004s] k tests::a\n", true),
            ("   Compiling vecs v0.1.0\n", false),
        ] {
            let mut c = Counter::new(None);
            c.feed(text.as_bytes());
            assert_eq!(c.ran_tests(), ran, "{text}");
        }
    }

    #[test]
    fn result_lines_of_every_runner() {
        let py = Some(Framework::Pytest);
        for (fw, text, want) in [
            (
                None,
                "test a ... ok\ntest b ... FAILED\ntest c ... ignored, slow\n",
                (1, 1, 1),
            ),
            (None, "test result: ok. 3 passed\n", (0, 0, 0)),
            (
                None,
                "        PASS [   0.004s] k tests::a\n   SIGSEGV [ 0.1s] k b\n",
                (1, 1, 0),
            ),
            (None, "PASSED [ 1s]\nSIGNAL\n", (0, 0, 0)),
            (
                None,
                "ok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP slow\nok done\n",
                (1, 1, 1),
            ),
            (
                None,
                "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"T\"}\n{\"Action\":\"pass\",\"Package\":\"p\"}\n",
                (1, 0, 0),
            ),
            (None, "  ✔ adds (1ms)\n  ✖ fails\n  ﹣ skipped\n", (1, 1, 1)),
            (
                None,
                " ✓ test/a.test.js (5 tests) 12ms\n ✓ adds (2 tests of it) 1ms\n",
                (1, 0, 0),
            ),
            (
                None,
                "tests/a.py::t PASSED [ 50%]\ntests/a.py::u XFAIL\n",
                (1, 0, 1),
            ),
            (None, "FAILED tests/a.py::t - assert 1 ERROR\n", (0, 0, 0)),
            (None, "[gw0] [ 50%] PASSED tests/a.py::t \n", (1, 0, 0)),
            (
                None,
                "tests/test_a.py ..F.s                [ 41%]\r\n",
                (3, 1, 1),
            ),
            (None, "tests/test_a.py:4: AssertionError\n", (0, 0, 0)),
            (None, "setup.py is here\n", (0, 0, 0)),
            // Bare mark lines (`-q`, wrapped lines) count for pytest only,
            // and not in pytest's result sections.
            (None, "..F.  [100%]\n", (0, 0, 0)),
            (py, "..F.  [100%]\n", (3, 1, 0)),
            (py, "..\n== FAILURES ==\n...\n", (2, 0, 0)),
            (
                py,
                "== FAILURES ==\n==== test session starts ====\nt.py ..\n",
                (2, 0, 0),
            ),
        ] {
            assert_eq!(counts(fw, text), want, "{text:?}");
        }
    }

    #[test]
    fn pytest_marks_count_before_their_line_ends() {
        let mut c = Counter::new(Some(Framework::Pytest));
        c.feed(b"collected 4 items\n\ntests/test_a.py ");
        assert!(c.counts().is_empty());
        c.feed(b".");
        assert_eq!(c.counts().passed, 1);
        c.feed(b".F");
        assert_eq!((c.counts().passed, c.counts().failed), (2, 1));
        c.feed(b"s      [ 4");
        c.feed(b"0%]\ntests/test_b.py .");
        assert_eq!(
            c.counts(),
            Counts {
                passed: 3,
                failed: 1,
                skipped: 1
            }
        );
        c.feed(b"\n");
        assert_eq!(c.counts().passed, 3, "a finished line is not counted twice");
    }

    #[test]
    fn an_overlong_line_is_not_counted() {
        let mut c = Counter::new(None);
        c.feed(b"test a ... ");
        c.feed(&vec![b'x'; MAX_LINE]);
        c.feed(b" ... ok\ntest b ... ok\n");
        assert_eq!(c.counts().passed, 1);
    }

    #[test]
    fn live_counts_from_real_outputs() {
        let count = |file: &str, fw: Option<Framework>| {
            let text = fixture(file);
            let whole = counts(fw, &text);
            // The same, however the output is cut.
            for size in [1, 7, 4096] {
                let mut c = Counter::new(fw);
                for chunk in text.as_bytes().chunks(size) {
                    c.feed(chunk);
                }
                c.feed(b"\n");
                let k = c.counts();
                assert_eq!(
                    (k.passed, k.failed, k.skipped),
                    whole,
                    "{file} in chunks of {size}"
                );
            }
            whole
        };
        assert_eq!(count("cargo-test.txt", Some(Framework::Cargo)), (10, 3, 1));
        assert_eq!(
            count("nextest.txt", Some(Framework::Nextest)),
            (9, 4, 0),
            "the summary repeats FAIL lines"
        );
        assert_eq!(
            count("pytest-console.txt", Some(Framework::Pytest)),
            (9, 2, 1)
        );
        assert_eq!(count("go-test.json", Some(Framework::Go)), (3, 2, 1));
        assert_eq!(
            count("vitest-console.txt", Some(Framework::Vitest)),
            (4, 2, 1)
        );
        assert_eq!(
            count("node-tap.txt", Some(Framework::NodeTest)),
            (8, 4, 1),
            "suites count too"
        );
    }

    #[test]
    fn the_line_shows_counts_elapsed_and_the_estimate() {
        let p = |c: (u32, u32, u32), elapsed_ms: u64, estimate_ms: Option<u64>| Progress {
            counts: Counts {
                passed: c.0,
                failed: c.1,
                skipped: c.2,
            },
            elapsed: Duration::from_millis(elapsed_ms),
            estimate: estimate_ms.map(Duration::from_millis),
        };
        for (progress, want) in [
            (p((0, 0, 0), 300, None), "300 ms"),
            (
                p((3, 1, 0), 4_200, None),
                "3 passed, 1 failed, 0 skipped · 4.2 s",
            ),
            (
                p((3, 1, 0), 4_200, Some(23_000)),
                "3 passed, 1 failed, 0 skipped · 4.2 s, eta ~19 s",
            ),
            (p((0, 0, 0), 31_000, Some(23_000)), "31 s (last run 23 s)"),
        ] {
            assert_eq!(progress.summary(), want);
        }
    }

    #[test]
    fn the_watch_follows_a_log_written_after_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("out.log");
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = seen.clone();
        let watch = Watch::start(
            log.clone(),
            Some(Framework::Pytest),
            None,
            Box::new(move |p| s.lock().unwrap().push(p)),
        );
        std::fs::write(&log, "tests/test_a.py ..F").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let last = seen.lock().unwrap().last().copied();
            if last.is_some_and(|p| p.counts.failed == 1) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(watch);
        let last = seen.lock().unwrap().last().copied().unwrap();
        assert_eq!((last.counts.passed, last.counts.failed), (2, 1));
    }

    #[test]
    fn the_first_result_is_noted_when_its_piece_arrives_and_only_then() {
        let started = Instant::now() - Duration::from_secs(5);
        let (first, mut hook) = FirstResult::hook(Some(Framework::Cargo), started);
        hook(b"   Compiling x v0.1.0\n");
        hook(b"     Running unittests src/lib.rs\ntest a ");
        assert_eq!(first.get(), None, "no result yet: {:?}", first.get());
        hook(b"... ok\n");
        let at = first.get().expect("the first result is seen");
        assert!(at >= Duration::from_secs(5), "{at:?}");
        hook(b"test b ... ok\n");
        assert_eq!(first.get(), Some(at), "the first one is kept");
    }

    #[test]
    fn a_run_that_prints_no_result_within_the_scan_leaves_the_cost_unknown() {
        let (first, mut hook) = FirstResult::hook(Some(Framework::Cargo), Instant::now());
        let noise = vec![b'x'; 1024 * 1024];
        for _ in 0..(FIRST_RESULT_SCAN / noise.len() as u64) {
            hook(&noise);
        }
        hook(b"\ntest a ... ok\n");
        assert_eq!(first.get(), None);
    }
}
