//! What `/proc` says about other processes (Linux): the fields of
//! `/proc/<pid>/stat` wfx needs and the step marker in
//! `/proc/<pid>/environ`. Off Linux every lookup finds nothing.

use std::path::Path;
use std::time::{Duration, Instant};

use super::STEP_VAR;

/// The fields of `/proc/<pid>/stat` wfx uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// Start time in clock ticks after boot (field 22): with the pid it
    /// names one process for the whole uptime, which the pid alone does not.
    pub start: u64,
}

impl Stat {
    /// Running or able to run; a zombie holds nothing open.
    pub fn is_live(&self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }
}

/// Parse `pid (comm) state ppid pgrp session tty tpgid flags minflt
/// cminflt majflt cmajflt utime stime cutime cstime priority nice
/// num_threads itrealvalue starttime …`. `comm` may hold spaces and
/// parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // fields[0] is field 3 (state); starttime is field 22.
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// The value of `WFX_STEP` in a NUL-separated environment block.
pub fn token_in_environ(environ: &[u8]) -> Option<&[u8]> {
    let key = STEP_VAR.as_bytes();
    environ.split(|b| *b == 0).find_map(|entry| {
        entry
            .strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(b"="))
    })
}

/// One process seen in `/proc`.
pub struct Proc {
    pub pid: i32,
    pub stat: Stat,
}

/// Every process whose `stat` could be read.
pub fn all() -> impl Iterator<Item = Proc> {
    let entries = if cfg!(target_os = "linux") {
        std::fs::read_dir("/proc").ok()
    } else {
        None
    };
    entries.into_iter().flatten().flatten().filter_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = parse_stat(&read_proc(&e.path().join("stat"))?)?;
        Some(Proc { pid, stat })
    })
}

/// Processes that may have started since `first` was created, for the
/// sweep after a step whose leader is `first`. Linux hands out pids in a
/// cycle, so everything created after `first` has a pid in the cyclic range
/// from `first` to the last pid handed out, and only those `stat`s are read:
/// the sweep runs after every child, and reading every process's `stat`
/// was most of its time. The range is trusted when the pids handed out
/// since cannot have gone round the cycle: for a step that lasted under
/// 100 ms (pids cannot go round `pid_max`, at least 32,768, in that
/// time), or when the forks counted since `baseline` (read before the
/// leader was started) say so ([`cannot_wrap`]); otherwise, or without
/// `ns_last_pid`, every process.
pub fn started_since(first: i32, elapsed: Duration, baseline: Option<PidBaseline>) -> Vec<Proc> {
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    let last = read_number("/proc/sys/kernel/ns_last_pid");
    let pid_max = read_number("/proc/sys/kernel/pid_max");
    // Forks read after `last`: every pid up to it is counted.
    let short = elapsed < Duration::from_millis(100);
    let counted =
        |max: i32| baseline.is_some_and(|b| forks().is_some_and(|now| cannot_wrap(b, now, max)));
    let range = match (last, pid_max) {
        (Some(last), Some(max)) if max >= 32_768 && (short || counted(max)) => Some((last, max)),
        _ => None,
    };
    // A short range is read pid by pid, without listing `/proc` (the
    // listing was most of the sweep's time on a machine with many
    // processes); a free pid is skipped. A range much longer than the
    // tasks alive is mostly free pids, each a failed open: then the
    // listing, filtered by the range, costs less. A thread's id is
    // readable there too, though not listed: its `stat` and environment are its
    // process's (same parent, group and marker), and a signal sent to it
    // goes to its process, which started in the range as well (it carries
    // the step's marker or was adopted during the step), so the sweep's
    // decisions are the listing's.
    if let Some((last, max)) = range {
        let span = if first <= last {
            i64::from(last) - i64::from(first) + 1
        } else {
            i64::from(max) - i64::from(first) + i64::from(last) + 1
        };
        let few = tasks_alive()
            .is_none_or(|n| span.saturating_mul(4) <= i64::try_from(n).unwrap_or(i64::MAX));
        if (1..=MAX_SPAN).contains(&span) && few {
            let pids = (0..span).map(|i| {
                let p = i64::from(first) + i;
                if p >= i64::from(max) {
                    p - i64::from(max)
                } else {
                    p
                }
            });
            return pids
                .filter_map(|p| i32::try_from(p).ok())
                .filter_map(|pid| {
                    Some(Proc {
                        pid,
                        stat: stat(pid)?,
                    })
                })
                .collect();
        }
    }
    let entries: Vec<i32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    // Read after the listing: a process in the listing got its pid before.
    let last = read_number("/proc/sys/kernel/ns_last_pid").filter(|_| range.is_some());
    entries
        .into_iter()
        .filter(|&pid| last.is_none_or(|last| in_cyclic_range(pid, first, last)))
        .filter_map(|pid| {
            Some(Proc {
                pid,
                stat: stat(pid)?,
            })
        })
        .collect()
}

/// What the machine had handed out when a step began (read before its
/// leader is started): tasks created since boot (`processes` in
/// `/proc/stat`, threads included) and tasks alive (`sysinfo(2)`'s
/// `procs`, threads included). Both count the whole machine, so at least
/// this pid namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidBaseline {
    pub forks: u64,
    pub tasks: u64,
}

/// The baseline now (`None` off Linux or when the kernel says nothing).
pub fn pid_baseline() -> Option<PidBaseline> {
    Some(PidBaseline {
        forks: forks()?,
        tasks: tasks_alive()?,
    })
}

/// Tasks alive on the machine, threads included (`sysinfo(2)`'s `procs`).
fn tasks_alive() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        (unsafe { libc::sysinfo(&mut info) } == 0).then_some(u64::from(info.procs))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Tasks created since boot.
fn forks() -> Option<u64> {
    let text = read_proc(Path::new("/proc/stat"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("processes "))?
        .trim()
        .parse()
        .ok()
}

/// Whether the pids handed out since `b` (`forks_now` forks counted since
/// boot) cannot have gone round the cycle of `pid_max` pids back to the
/// step's leader. The kernel's cursor moves one pid per task created, plus
/// one per pid it skips as taken; a taken pid is a live task's own, its
/// group's or its session's (at most three per task alive at the start:
/// those created since are counted as forks), and the cycle starts at
/// 300 at the lowest. A margin on top: near the bound, every process is
/// read as before.
pub fn cannot_wrap(b: PidBaseline, forks_now: u64, pid_max: i32) -> bool {
    const MARGIN: u64 = 1024;
    let moved = forks_now
        .saturating_sub(b.forks)
        .saturating_add(b.tasks.saturating_mul(3))
        .saturating_add(MARGIN);
    forks_now >= b.forks && moved < u64::try_from(pid_max).unwrap_or(0).saturating_sub(300)
}

/// The longest pid range [`started_since`] reads pid by pid.
const MAX_SPAN: i64 = 2048;

/// Whether `pid` lies in the cyclic range of pids from `first` to `last`.
fn in_cyclic_range(pid: i32, first: i32, last: i32) -> bool {
    if first <= last {
        (first..=last).contains(&pid)
    } else {
        pid >= first || pid <= last
    }
}

fn read_number(path: &str) -> Option<i32> {
    read_proc(Path::new(path))?.trim().parse().ok()
}

/// A file of `/proc` read whole. Its size says 0, so `read_to_string`
/// asks the size, then reads from 32 bytes up, doubling (six reads for a
/// process's `stat`, seven for `/proc/stat`); a page-sized buffer takes
/// it in one read and one more for the end. A few of these per step.
fn read_proc(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 4096];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    buf.truncate(len);
    String::from_utf8(buf).ok()
}

pub fn stat(pid: i32) -> Option<Stat> {
    if !cfg!(target_os = "linux") || pid <= 0 {
        return None;
    }
    parse_stat(&read_proc(Path::new(&format!("/proc/{pid}/stat")))?)
}

/// Start time of a live process (not of a zombie: its pid is about to be
/// free for reuse).
pub fn start_time(pid: i32) -> Option<u64> {
    stat(pid).filter(Stat::is_live).map(|s| s.start)
}

/// The step marker of `pid`, if its environment can be read (own user)
/// and holds one.
pub fn step_token(pid: i32) -> Option<Vec<u8>> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    token_in_environ(&environ).map(<[u8]>::to_vec)
}

/// Live processes other than wfx whose step marker satisfies `wanted`.
pub fn marked(wanted: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    all()
        .filter(|p| p.pid != me && p.stat.is_live())
        .filter(|p| step_token(p.pid).is_some_and(|t| wanted(&t)))
        .map(|p| p.pid)
        .collect()
}

pub fn signal_all(pids: &[i32], sig: i32) {
    for &pid in pids {
        unsafe { libc::kill(pid, sig) };
    }
}

pub fn any_live(pids: &[i32]) -> bool {
    pids.iter()
        .any(|&pid| stat(pid).is_some_and(|s| s.is_live()))
}

/// SIGTERM, up to `grace` for them to go, SIGKILL.
pub fn end_all(pids: &[i32], grace: Duration) {
    if pids.is_empty() {
        return;
    }
    signal_all(pids, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while any_live(pids) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_all(pids, libc::SIGKILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_paren() {
        let line = "4242 (we ird) (name) S 17 4242 4242 0 -1 4194560 107 0 0 0 0 0 0 0 20 0 1 0 8812345 2265088 190 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'S',
                ppid: 17,
                pgrp: 4242,
                start: 8812345
            })
        );
        let zombie = "9 (sh) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0";
        assert!(!parse_stat(zombie).unwrap().is_live());
        assert_eq!(parse_stat("9 (sh) S 1 9"), None, "truncated");
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_stat_is_read_and_stable() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let me = std::process::id() as i32;
        let a = start_time(me).expect("own start time");
        assert_eq!(start_time(me), Some(a));
        assert_eq!(stat(me).unwrap().pgrp, unsafe { libc::getpgrp() });
    }

    #[test]
    fn the_cyclic_pid_range_wraps_at_pid_max() {
        let table = [
            // (pid, first, last, in range)
            (100, 100, 200, true),
            (150, 100, 200, true),
            (200, 100, 200, true),
            (99, 100, 200, false),
            (201, 100, 200, false),
            // pids went round pid_max after the leader (first > last)
            (4_000_000, 3_999_990, 12, true),
            (5, 3_999_990, 12, true),
            (12, 3_999_990, 12, true),
            (13, 3_999_990, 12, false),
            (3_999_989, 3_999_990, 12, false),
        ];
        for (pid, first, last, want) in table {
            assert_eq!(
                in_cyclic_range(pid, first, last),
                want,
                "{pid} in {first}..={last}"
            );
        }
    }

    #[test]
    fn a_short_step_reads_only_processes_newer_than_its_leader() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let mut leader = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = leader.id() as i32;
        let short = started_since(pid, Duration::from_millis(1), None);
        let long = started_since(pid, Duration::from_secs(1), None);
        leader.kill().unwrap();
        leader.wait().unwrap();
        let me = std::process::id() as i32;
        assert!(short.iter().any(|p| p.pid == pid), "the leader is seen");
        assert!(long.iter().any(|p| p.pid == pid), "the leader is seen");
        if std::fs::metadata("/proc/sys/kernel/ns_last_pid").is_ok() {
            assert!(
                !short.iter().any(|p| p.pid == me),
                "older than the leader: not read"
            );
        }
        assert!(
            long.iter().any(|p| p.pid == me),
            "a long step reads every process"
        );
    }

    #[test]
    fn a_long_step_reads_only_newer_processes_when_the_forks_since_say_so() {
        if !cfg!(target_os = "linux") || std::fs::metadata("/proc/sys/kernel/ns_last_pid").is_err()
        {
            return;
        }
        let baseline = pid_baseline().expect("/proc/stat and /proc/loadavg");
        let mut leader = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = leader.id() as i32;
        let counted = started_since(pid, Duration::from_secs(5), Some(baseline));
        // A baseline that cannot bound the cycle: every process.
        let unbounded = PidBaseline {
            forks: baseline.forks,
            tasks: u64::MAX / 4,
        };
        let listed = started_since(pid, Duration::from_secs(5), Some(unbounded));
        leader.kill().unwrap();
        leader.wait().unwrap();
        let me = std::process::id() as i32;
        assert!(counted.iter().any(|p| p.pid == pid), "the leader is seen");
        assert!(
            !counted.iter().any(|p| p.pid == me),
            "older than the leader: not read"
        );
        assert!(listed.iter().any(|p| p.pid == me), "every process read");
    }

    #[test]
    fn the_pid_cycle_cannot_wrap_while_few_pids_were_handed_out() {
        let b = PidBaseline {
            forks: 1_000,
            tasks: 300,
        };
        let table = [
            // (forks now, pid_max, cannot wrap)
            (1_000, 32_768, true),
            (1_500, 32_768, true),
            // 31,000 forks since: they may have gone round 32,768 pids.
            (32_000, 32_768, false),
            // The bound counts the pids taken at the start three times.
            (1_000 + 32_768 - 300 - 900 - 1024 - 1, 32_768, true),
            (1_000 + 32_768 - 300 - 900 - 1024, 32_768, false),
            // A large pid_max leaves room for many forks.
            (1_000_000, 4_194_304, true),
            // The counter went back (another boot's baseline): no.
            (999, 32_768, false),
        ];
        for (now, max, want) in table {
            assert_eq!(cannot_wrap(b, now, max), want, "{now} forks, pid_max {max}");
        }
        let crowded = PidBaseline {
            forks: 0,
            tasks: 12_000,
        };
        assert!(!cannot_wrap(crowded, 0, 32_768), "36,000 pids taken");
    }

    #[test]
    fn step_marker_is_found_in_an_environment_block() {
        let env = b"PATH=/bin\0WFX_STEPX=no\0WFX_STEP=12.345.6\0HOME=/h\0";
        assert_eq!(token_in_environ(env), Some(&b"12.345.6"[..]));
        assert_eq!(token_in_environ(b"PATH=/bin\0XWFX_STEP=1\0"), None);
        assert_eq!(token_in_environ(b""), None);
    }
}
