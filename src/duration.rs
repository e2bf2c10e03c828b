//! The one duration formatter of wfx: progress lines, summaries, reports
//! and agent messages all print elapsed time the same way.

use std::time::Duration;

/// `350 ms`, `1.2 s`, `41 s`, `2 min 5 s`, `1 h 3 min`: as people read
/// durations (tenths of a second only where they matter).
pub fn text(d: Duration) -> String {
    millis(d.as_millis().min(u64::MAX as u128) as u64)
}

/// [`text`] for a count of milliseconds, as artifacts record them.
pub fn millis(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 10_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else if ms < 120_000 {
        format!("{} s", (ms + 500) / 1000)
    } else if ms < 7_200_000 {
        let s = (ms + 500) / 1000;
        match s % 60 {
            0 => format!("{} min", s / 60),
            rest => format!("{} min {rest} s", s / 60),
        }
    } else {
        let m = (ms + 30_000) / 60_000;
        match m % 60 {
            0 => format!("{} h", m / 60),
            rest => format!("{} h {rest} min", m / 60),
        }
    }
}

/// Milliseconds from `start` to `end` by a clock of timestamps (the
/// ports' clock); 0 when the clock went back.
pub fn ms_between(start: crate::artifacts::Timestamp, end: crate::artifacts::Timestamp) -> u64 {
    u64::try_from((end - start).num_milliseconds()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_people_read_them() {
        for (ms, want) in [
            (0, "0 ms"),
            (350, "350 ms"),
            (999, "999 ms"),
            (1_000, "1.0 s"),
            (1_234, "1.2 s"),
            (9_949, "9.9 s"),
            (10_000, "10 s"),
            (41_200, "41 s"),
            (119_499, "119 s"),
            (120_000, "2 min"),
            (125_000, "2 min 5 s"),
            (3_599_000, "59 min 59 s"),
            (7_200_000, "2 h"),
            (7_410_000, "2 h 4 min"),
        ] {
            assert_eq!(millis(ms), want, "{ms} ms");
        }
        assert_eq!(text(Duration::from_millis(1_234)), "1.2 s");
    }
}
