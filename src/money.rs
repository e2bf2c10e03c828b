//! The one formatter of US dollar amounts (agent costs and the cost cap):
//! enough digits to be true. Cents for amounts that have them; small
//! amounts keep two significant digits (`$0.0078`, not `$0.01`); and two
//! amounts compared in one sentence get the digits that tell them apart
//! (`$0.0078 spent of $0.005`).

/// Decimals (at least 2, at most 8) that show two significant digits.
fn decimals(v: f64) -> usize {
    let v = v.abs();
    if v == 0.0 || v >= 0.1 {
        return 2;
    }
    let mut d = 2;
    while d < 8 && v * 10f64.powi(d as i32) < 10.0 {
        d += 1;
    }
    d
}

/// `v` with `d` decimals, zeros beyond the cents dropped.
fn fixed(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    match s.split_once('.') {
        Some((int, frac)) if frac.len() > 2 => {
            let frac = frac.trim_end_matches('0');
            format!("{int}.{frac:0<2}")
        }
        _ => s,
    }
}

/// `$1.25`, `$0.0078`, `$0.00`.
pub fn usd(v: f64) -> String {
    format!("${}", fixed(v, decimals(v)))
}

/// Two amounts shown together, with the digits that keep them as
/// different as they are (up to 8 decimals).
pub fn usd_pair(a: f64, b: f64) -> (String, String) {
    let mut d = decimals(a).max(decimals(b));
    while d < 8 && (a != b) && fixed(a, d) == fixed(b, d) {
        d += 1;
    }
    (
        format!("${}", fixed(a, d.max(decimals(a)))),
        format!("${}", fixed(b, d.max(decimals(b)))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_keep_the_digits_that_make_them_true() {
        for (v, want) in [
            (0.0, "$0.00"),
            (1.25, "$1.25"),
            (10.0, "$10.00"),
            (0.123, "$0.12"),
            (0.05, "$0.05"),
            (0.0078, "$0.0078"),
            (0.005, "$0.005"),
            (0.00012345, "$0.00012"),
        ] {
            assert_eq!(usd(v), want, "{v}");
        }
    }

    #[test]
    fn two_amounts_are_told_apart() {
        assert_eq!(
            usd_pair(0.0078, 0.005),
            ("$0.0078".to_string(), "$0.005".to_string())
        );
        assert_eq!(
            usd_pair(0.0101, 0.01),
            ("$0.0101".to_string(), "$0.01".to_string())
        );
        assert_eq!(
            usd_pair(5.0, 5.0),
            ("$5.00".to_string(), "$5.00".to_string())
        );
        assert_eq!(
            usd_pair(5.004, 5.0),
            ("$5.004".to_string(), "$5.00".to_string())
        );
    }
}
