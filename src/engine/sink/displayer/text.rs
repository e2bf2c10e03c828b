//! Small pieces of the lines people read, shared with the reports.

/// `(+12.0)`, `(-3.5)`, `(±0.0)`: the change against the previous run:
/// `change` (computed from the counts) when known, else the difference of
/// the two rates.
pub fn delta_text(prev: Option<f64>, cur: f64, change: Option<f64>) -> String {
    match prev {
        None => String::new(),
        Some(p) => {
            let d = (change.unwrap_or(cur - p) * 10.0).round() / 10.0;
            if d > 0.0 {
                format!(" (+{d:.1})")
            } else if d < 0.0 {
                format!(" ({d:.1})")
            } else {
                " (±0.0)".to_string()
            }
        }
    }
}

/// ` $0.12` for a reported cost.
pub fn cost_text(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!(" {}", crate::money::usd(c)),
        None => String::new(),
    }
}

/// `exit 1`, `timed out`, `killed`.
pub fn exit_text(exit_code: Option<i32>, timed_out: bool) -> String {
    if timed_out {
        "timed out".into()
    } else {
        match exit_code {
            Some(c) => format!("exit {c}"),
            None => "killed".into(),
        }
    }
}

/// `, conservative` after an agent's name, or nothing.
pub(super) fn strategy_suffix(s: Option<crate::artifacts::iteration_state::Strategy>) -> String {
    s.map_or(String::new(), |s| format!(", {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_and_costs() {
        assert_eq!(delta_text(None, 50.0, None), "");
        assert_eq!(delta_text(Some(70.0), 82.0, None), " (+12.0)");
        assert_eq!(delta_text(Some(82.0), 78.5, None), " (-3.5)");
        assert_eq!(delta_text(Some(80.0), 80.0, None), " (±0.0)");
        // 7/9 (77.7%, rounded down) → 9/9: the counts say +22.2.
        let change = 100.0 - 7.0 * 100.0 / 9.0;
        assert_eq!(delta_text(Some(77.7), 100.0, Some(change)), " (+22.2)");
        assert_eq!(cost_text(Some(0.123)), " $0.12");
        assert_eq!(cost_text(Some(0.0078)), " $0.0078");
        assert_eq!(cost_text(None), "");
    }
}
