//! The pass-rate chart as inline SVG: one point per test run, coloured by
//! the strategy of the fix that led to it (the first run has none: its own
//! "first run" colour), a dashed threshold line, a cross on
//! rolled-back runs and a triangle on runs with flaky failures. Plain SVG
//! with `<title>` tooltips: readable with no script, no font download and
//! no network.

use std::fmt::Write;

use super::view::{RunView, pct};
use crate::artifacts::test_results::Counts;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 684.0;
const TOP: f64 = 18.0;
const BOTTOM: f64 = 222.0;

/// Colours of the points, by strategy (`None`: the first run, before any fix).
pub fn strategy_colour(strategy: Option<&str>) -> &'static str {
    match strategy {
        Some("conservative") => "#2563eb",
        Some("aggressive") => "#ea580c",
        Some("surgical") => "#9333ea",
        _ => "#6b7280",
    }
}

const ROLLBACK: &str = "#dc2626";
const FLAKY: &str = "#ca8a04";
const THRESHOLD: &str = "#16a34a";

/// Escape text for an HTML/SVG text node or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn y_of(rate: f64) -> f64 {
    BOTTOM - rate.clamp(0.0, 100.0) / 100.0 * (BOTTOM - TOP)
}

/// x of run `i` of `n`: evenly spread, centred when there is one.
fn x_of(i: usize, n: usize) -> f64 {
    const PAD: f64 = 24.0;
    if n <= 1 {
        return (LEFT + RIGHT) / 2.0;
    }
    LEFT + PAD + i as f64 * (RIGHT - LEFT - 2.0 * PAD) / (n - 1) as f64
}

/// What differs between the test cycle's chart and the chart of a `wfx
/// run` test step: the words, the `<title>` id (unique in a page with
/// several charts) and whether the cycle's marks are explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChartOptions<'a> {
    /// Id of the chart's `<title>` element.
    pub id: &'a str,
    pub title: &'a str,
    /// Label under the x axis.
    pub x_axis: &'a str,
    /// The word naming a point in its tooltip (`run 2: …`).
    pub point: &'a str,
    /// The test cycle's chart: tooltips name the scope and the strategy,
    /// and the legend explains strategies, subsets, rollbacks and flaky
    /// marks. Off for a `wfx run` step, whose points have none of these.
    pub cycle: bool,
}

impl ChartOptions<'static> {
    /// The test cycle's chart (one per report).
    pub const CYCLE: ChartOptions<'static> = ChartOptions {
        id: "chart-title",
        title: "Pass rate per test run",
        x_axis: "test run",
        point: "run",
        cycle: true,
    };
}

/// The chart of `runs` with the pass threshold line at `threshold` percent.
pub fn pass_rate_chart(runs: &[RunView], threshold: f64) -> String {
    pass_rate_chart_with(runs, threshold, &ChartOptions::CYCLE)
}

/// [`pass_rate_chart`] with other words (see [`ChartOptions`]).
pub fn pass_rate_chart_with(runs: &[RunView], threshold: f64, o: &ChartOptions) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-labelledby="{id}"><title id="{id}">{title}</title>"#,
        id = escape(o.id),
        title = escape(o.title)
    );
    let _ = write!(
        s,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
    );
    grid(&mut s, threshold);

    let n = runs.len();
    if n == 0 {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="14" text-anchor="middle" fill="#6b7280">No test runs yet</text>"##,
            (LEFT + RIGHT) / 2.0,
            (TOP + BOTTOM) / 2.0
        );
    } else {
        let points: Vec<String> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{:.1},{:.1}", x_of(i, n), y_of(r.pass_rate)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#94a3b8" stroke-width="2"/>"##,
            points.join(" ")
        );
        // Label every run when they fit, else about 20 labels.
        let every = n.div_ceil(20).max(1);
        for (i, r) in runs.iter().enumerate() {
            let (x, y) = (x_of(i, n), y_of(r.pass_rate));
            let colour = strategy_colour(r.strategy_before.as_deref());
            let tip = run_tip(r, i, o);
            let _ = write!(
                s,
                r#"<g class="run" data-iteration="{}" data-run="{}"><title>{}</title>"#,
                r.iteration,
                r.run,
                escape(&tip)
            );
            // Subset runs are drawn hollow: merged, not a full run.
            let fill = if r.merged { "#ffffff" } else { colour };
            let _ = write!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="6" fill="{fill}" stroke="{colour}" stroke-width="2.5"/>"#
            );
            if r.rolled_back {
                let _ = write!(
                    s,
                    r#"<path class="rollback" d="M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}" stroke="{ROLLBACK}" stroke-width="3"/>"#,
                    x - 8.0,
                    y - 8.0,
                    x + 8.0,
                    y + 8.0,
                    x - 8.0,
                    y + 8.0,
                    x + 8.0,
                    y - 8.0
                );
            }
            s.push_str("</g>");
            if !r.flaky_tests.is_empty() {
                let ty = (y - 13.0).max(TOP - 8.0);
                let _ = write!(
                    s,
                    r#"<g class="flaky"><title>{}</title><path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{FLAKY}"/></g>"#,
                    escape(&format!("flaky: {}", r.flaky_tests.join(", "))),
                    ty - 6.0,
                    x - 6.0,
                    ty + 4.0,
                    x + 6.0,
                    ty + 4.0
                );
            }
            if i % every == 0 || i + 1 == n {
                let _ = write!(
                    s,
                    r##"<text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#4b5563">{}</text>"##,
                    BOTTOM + 16.0,
                    r.run
                );
            }
        }
    }
    let _ = write!(
        s,
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#4b5563">{}</text>"##,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 32.0,
        escape(o.x_axis)
    );
    legend(&mut s, o.cycle);
    s.push_str("</svg>");
    s
}

/// A point's tooltip: the run, its counts and the fix before it.
fn run_tip(r: &RunView, i: usize, o: &ChartOptions) -> String {
    let mut tip = if o.cycle && r.merged {
        format!(
            "{} {} (iteration {}): {} {}; the suite {} (merged over the last full run)",
            o.point,
            r.run,
            r.iteration,
            r.scope_shown,
            Counts::of(r.ran_passed, r.ran_failed, r.ran_total),
            r.pass_rate_text,
        )
    } else if o.cycle {
        format!(
            "{} {} (iteration {}): {} ({}, {} suite)",
            o.point,
            r.run,
            r.iteration,
            r.pass_rate_text,
            Counts::of(r.passed, r.failed, r.total),
            r.scope_shown
        )
    } else if r.total > 0 {
        format!(
            "{} {}: {} ({})",
            o.point,
            r.iteration,
            r.pass_rate_text,
            Counts::of(r.passed, r.failed, r.total)
        )
    } else {
        format!("{} {}: {}", o.point, r.iteration, r.pass_rate_text)
    };
    if let Some(st) = &r.strategy_before {
        let article = if st.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let _ = write!(tip, ", after {article} {st} fix");
    } else if o.cycle && i == 0 {
        tip.push_str(", first run");
    }
    if let Some(res) = &r.result {
        let _ = write!(tip, ", {}", res.replace('_', " "));
    }
    tip
}

/// The axis, the percent lines and the pass threshold.
fn grid(s: &mut String, threshold: f64) {
    for tick in [0, 25, 50, 75, 100] {
        let y = y_of(tick as f64);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}" stroke="#e5e7eb" stroke-width="1"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#4b5563">{tick}%</text>"##,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{BOTTOM}" stroke="#9ca3af" stroke-width="1"/>"##
    );
    let ty = y_of(threshold);
    let _ = write!(
        s,
        r##"<g class="threshold"><title>pass threshold {t}</title><line x1="{LEFT}" y1="{ty:.1}" x2="{RIGHT}" y2="{ty:.1}" stroke="{THRESHOLD}" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{:.1}" y="{:.1}" font-size="11" fill="{THRESHOLD}">threshold</text><text x="{:.1}" y="{:.1}" font-size="11" fill="{THRESHOLD}">{t}</text></g>"##,
        RIGHT + 6.0,
        ty - 2.0,
        RIGHT + 6.0,
        ty + 11.0,
        t = escape(&pct(threshold))
    );
}

fn legend(s: &mut String, cycle: bool) {
    let y = HEIGHT - 18.0;
    let mut x = LEFT;
    let mut item = |s: &mut String, mark: String, label: &str| {
        s.push_str(&mark.replace("{X}", &format!("{x:.1}")));
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#374151">{label}</text>"##,
            x + 12.0,
            y + 4.0
        );
        x += 24.0 + label.len() as f64 * 6.2;
    };
    s.push_str(r#"<g class="legend">"#);
    let cycle_points: &[(&str, Option<&str>)] = &[
        ("first run", None),
        ("conservative", Some("conservative")),
        ("aggressive", Some("aggressive")),
        ("surgical", Some("surgical")),
    ];
    let points: &[(&str, Option<&str>)] = if cycle {
        cycle_points
    } else {
        &[("test run", None)]
    };
    for &(label, strategy) in points {
        let c = strategy_colour(strategy);
        item(
            s,
            format!(r#"<circle cx="{{X}}" cy="{y:.1}" r="5" fill="{c}"/>"#),
            label,
        );
    }
    if cycle {
        item(
            s,
            format!(
                r##"<circle cx="{{X}}" cy="{y:.1}" r="5" fill="#ffffff" stroke="#6b7280" stroke-width="2"/>"##
            ),
            "affected subset",
        );
        item(
            s,
            format!(
                r#"<path d="M-5,{:.1} l10,10 M-5,{:.1} l10,-10" transform="translate({{X}},0)" stroke="{ROLLBACK}" stroke-width="2.5"/>"#,
                y - 5.0,
                y + 5.0
            ),
            "rolled back",
        );
        item(
            s,
            format!(
                r#"<path d="M0,{:.1} l-6,10 h12 Z" transform="translate({{X}},0)" fill="{FLAKY}"/>"#,
                y - 6.0
            ),
            "flaky",
        );
    }
    item(
        s,
        format!(
            r#"<path d="M-8,{y:.1} h16" transform="translate({{X}},0)" stroke="{THRESHOLD}" stroke-width="1.5" stroke-dasharray="4 3"/>"#
        ),
        "threshold",
    );
    s.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run reached by a fix of strategy `before` (`None`: the first run).
    fn run(iteration: u32, rate: f64, before: Option<&str>) -> RunView {
        RunView {
            run: iteration,
            iteration,
            scope: "full".into(),
            scope_shown: "full".into(),
            ran_passed: (rate / 10.0) as u32,
            ran_failed: 10 - (rate / 10.0) as u32,
            ran_total: 10,
            merged: false,
            pass_rate: rate,
            pass_rate_text: pct(rate),
            total: 10,
            passed: (rate / 10.0) as u32,
            failed: 10 - (rate / 10.0) as u32,
            failed_tests: vec![],
            new_failures: vec![],
            strategy: None,
            strategy_before: before.map(str::to_string),
            result: None,
            analysis_tool: None,
            analysis: None,
            fix_task: None,
            fix_commit: None,
            rollback_commit: None,
            rolled_back: false,
            flaky_tests: vec![],
            started_at: chrono::Utc::now(),
            duration: String::new(),
        }
    }

    #[test]
    fn geometry() {
        assert_eq!(y_of(100.0), TOP);
        assert_eq!(y_of(0.0), BOTTOM);
        assert_eq!(y_of(150.0), TOP);
        assert_eq!(x_of(0, 1), (LEFT + RIGHT) / 2.0);
        assert_eq!(x_of(0, 3), LEFT + 24.0);
        assert_eq!(x_of(2, 3), RIGHT - 24.0);
    }

    #[test]
    fn one_point_per_run_with_marks() {
        let mut runs = vec![
            run(0, 60.0, None),
            run(1, 80.0, Some("conservative")),
            run(2, 40.0, Some("aggressive")),
            run(3, 90.0, Some("surgical")),
        ];
        runs[2].rolled_back = true;
        runs[3].flaky_tests = vec!["<script>alert(1)</script>".into()];
        let svg = pass_rate_chart(&runs, 95.0);
        assert_eq!(svg.matches(r#"<g class="run""#).count(), 4);
        assert_eq!(svg.matches(r#"class="rollback""#).count(), 1);
        assert_eq!(svg.matches(r#"<g class="flaky">"#).count(), 1);
        assert!(svg.contains("<title>pass threshold 95.0%</title>"));
        assert!(svg.contains(">95.0%</text>"));
        assert!(svg.contains(&format!(r#"y1="{:.1}""#, y_of(95.0))));
        for c in ["#6b7280", "#2563eb", "#ea580c", "#9333ea"] {
            assert!(svg.contains(&format!(r#"fill="{c}" stroke="{c}""#)), "{c}");
        }
        assert!(svg.contains("flaky: &lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!svg.contains("<script>"));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"));
    }

    #[test]
    fn the_first_run_has_the_first_run_colour_and_later_runs_their_fix() {
        let runs = vec![
            run(1, 60.0, None),
            run(2, 80.0, Some("conservative")),
            run(3, 90.0, Some("aggressive")),
        ];
        let svg = pass_rate_chart(&runs, 95.0);
        let first_run = strategy_colour(None);
        let points: Vec<&str> = svg.split(r#"<g class="run""#).skip(1).collect();
        assert_eq!(points.len(), 3);
        assert!(points[0].contains(&format!(r#"fill="{first_run}" stroke="{first_run}""#)));
        assert!(points[0].contains("first run</title>"));
        assert!(points[1].contains(r##"fill="#2563eb" stroke="#2563eb""##));
        assert!(points[1].contains("after a conservative fix</title>"));
        assert!(points[2].contains(r##"fill="#ea580c" stroke="#ea580c""##));
        assert!(points[2].contains("after an aggressive fix</title>"));
        // The legend names that colour "first run".
        assert!(svg.contains(&format!(
            r##"r="5" fill="{first_run}"/><text x="64.0" y="286.0" font-size="11" fill="#374151">first run</text>"##
        )));
    }

    #[test]
    fn run_step_charts_use_their_own_words() {
        let mut runs = vec![run(0, 70.0, None), run(1, 100.0, None)];
        runs[0].result = Some("failed".into());
        runs[1].total = 0;
        runs[1].pass_rate_text = "exit 0 (output not parsed)".into();
        runs[1].result = Some("passed".into());
        let o = ChartOptions {
            id: "chart-step-2",
            title: "Pass rate per test run of step 2 (test)",
            x_axis: "test run",
            point: "run",
            cycle: false,
        };
        let svg = pass_rate_chart_with(&runs, 100.0, &o);
        assert!(svg.contains(
            r#"aria-labelledby="chart-step-2"><title id="chart-step-2">Pass rate per test run of step 2 (test)</title>"#
        ));
        assert!(svg.contains("<title>run 0: 70.0% (7/10 passed), failed</title>"));
        assert!(svg.contains("<title>run 1: exit 0 (output not parsed), passed</title>"));
        assert!(!svg.contains("scope"));
        for cycle_only in ["conservative", "affected subset", "rolled back", "flaky"] {
            assert!(!svg.contains(cycle_only), "{cycle_only}");
        }
        assert!(svg.contains(">test run</text>"));
        assert!(svg.contains(">threshold</text>"));
        // The cycle's chart is the default and keeps its words.
        let cycle = pass_rate_chart(&runs, 95.0);
        assert_eq!(
            cycle,
            pass_rate_chart_with(&runs, 95.0, &ChartOptions::CYCLE)
        );
        assert!(
            cycle.contains(
                "run 0 (iteration 0): 70.0% (7/10 passed, full suite), first run, failed"
            )
        );
        assert!(cycle.contains(">test run</text>"));
    }

    #[test]
    fn empty_chart_says_so() {
        let svg = pass_rate_chart(&[], 95.0);
        assert!(svg.contains("No test runs yet"));
        assert!(!svg.contains("<polyline"));
    }
}
