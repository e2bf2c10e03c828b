//! Streaming benchmark (issue #3): a child prints 1 GiB of synthetic test
//! output; `process::run` streams it into a log file. Reports median
//! throughput and peak RSS of the wfx side over 5 runs, against
//! `cat > /dev/null` of the same stream.
//!
//! Run: `scripts/bench-stream.sh` (or `cargo bench --bench stream --profile dev`).
//! `WFX_BENCH_BYTES` changes the size, `WFX_BENCH_RUNS` the number of runs.
//!
//! Each measured run is a fresh process (this binary with `--driver`) so
//! its peak RSS (`VmHWM`) belongs to that run alone.
//!
//! "live counts" is what a terminal gets (DESIGN.md §10.7): the progress
//! watcher follows the log; "counted at end" is the share of the stream's
//! tests it had counted when the run ended (it never slows the stream, so
//! at gigabytes a second it lags).

use std::process::Command;
use std::time::Instant;

use std::sync::{Arc, Mutex};
use wfx::process::{self, Spec};

use wfx::testing::live::{Progress, Watch};

/// Every line of the stream is a passing test (the hardest case for the
/// live counter: one result per 49 bytes).
const LINE: &str = "test tests::module::a_case_that_passes ... ok\n";

fn generator(bytes: u64) -> String {
    format!("yes '{}' | head -c {bytes}", LINE.trim_end())
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// One measured run inside its own process: prints `bytes seconds kib
/// counted` (tests the live counter had counted when the run ended).
fn driver(bytes: u64, log: &str, with_counts: bool) {
    let spec = Spec::shell(&generator(bytes), ".").log(log);
    let last = Arc::new(Mutex::new(Progress::default()));
    let seen = last.clone();
    // What `wfx test` does on a terminal: the watcher follows the log.
    let watch = with_counts.then(|| {
        Watch::start(
            log.into(),
            None,
            None,
            Box::new(move |p| *seen.lock().expect("no panic") = p),
        )
    });
    let start = Instant::now();
    let outcome = process::run(spec, &mut |_| {}).expect("child runs");
    let secs = start.elapsed().as_secs_f64();
    drop(watch);
    let counted = last.lock().expect("no panic").counts.passed;
    assert_eq!(outcome.total_bytes, bytes, "all output arrived");
    let logged = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
    assert_eq!(logged, bytes, "all output reached the log");
    println!("{bytes} {secs} {} {counted}", peak_rss_kib());
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--driver") {
        let bytes = args[i + 1].parse().expect("bytes");
        driver(
            bytes,
            &args[i + 2],
            args.get(i + 3).is_some_and(|a| a == "counts"),
        );
        return;
    }
    let bytes: u64 = std::env::var("WFX_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 30);
    let runs: usize = std::env::var("WFX_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("test-output.log");
    let exe = std::env::current_exe().expect("own path");

    let mut cat_secs = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{} | cat > /dev/null", generator(bytes)))
            .status()
            .expect("sh runs");
        assert!(status.success());
        cat_secs.push(start.elapsed().as_secs_f64());
    }

    // The modes take turns, in alternating order, so that a change of
    // load on the machine weighs on both alike.
    let modes = [
        ("process::run → log", "plain"),
        ("process::run → log + live counts", "counts"),
    ];
    let mut samples = vec![(Vec::new(), Vec::new(), Vec::new()); modes.len()];
    for round in 0..runs {
        let mut order: Vec<_> = modes.iter().zip(samples.iter_mut()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for ((_, mode), (secs, rss, counted)) in order {
            let _ = std::fs::remove_file(&log);
            let out = Command::new(&exe)
                .args([
                    "--driver",
                    &bytes.to_string(),
                    log.to_str().expect("utf-8 path"),
                    mode,
                ])
                .output()
                .expect("driver runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let fields: Vec<f64> = text
                .split_whitespace()
                .map(|f| f.parse().expect("number"))
                .collect();
            secs.push(fields[1]);
            rss.push(fields[2] / 1024.0);
            counted.push(fields[3]);
        }
    }
    let _ = std::fs::remove_file(&log);
    let rows: Vec<_> = modes
        .iter()
        .zip(samples.iter_mut())
        .map(|((name, mode), (secs, rss, counted))| {
            let counted = (*mode == "counts").then(|| median(counted));
            (*name, median(secs), median(rss), counted)
        })
        .collect();

    let mb = bytes as f64 / 1e6;
    let cat = median(&mut cat_secs);
    println!("{bytes} bytes, {runs} runs, medians (MB = 10^6 bytes)");
    let lines = bytes / LINE.len() as u64;
    println!(
        "{:<34} {:>10} {:>14} {:>12} {:>16}",
        "", "MB/s", "peak RSS MiB", "vs cat", "counted at end"
    );
    println!(
        "{:<34} {:>10.0} {:>14} {:>12} {:>16}",
        "sh: generator | cat > /dev/null",
        mb / cat,
        "-",
        "1.00",
        "-"
    );
    let cost = 1.0 - rows[0].1 / rows[1].1;
    for (name, secs, rss, counted) in rows {
        let counted = counted.map_or_else(
            || "-".to_string(),
            |c| format!("{:.0} %", 100.0 * c / lines as f64),
        );
        println!(
            "{:<34} {:>10.0} {:>14.1} {:>12.2} {:>16}",
            name,
            mb / secs,
            rss,
            cat / secs,
            counted
        );
    }
    println!(
        "live counts cost {:.1} % of the plain throughput",
        100.0 * cost
    );
}
