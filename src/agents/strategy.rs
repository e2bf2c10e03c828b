//! Judging an analysis: extract the fix strategy from what the agent said,
//! and decide (purely) whether to fall back to the next tool in the chain
//! (DESIGN.md §6.3). An exit status of 0 proves nothing.

use serde::Serialize;
use serde_json::Value;

use crate::artifacts::fix_history::{CallOutcome, FixHistory};
use crate::artifacts::{self, FixStrategy};
use crate::error::Problem;

use super::invoke::{CallRecord, ErrorKind, classify_error};

/// A strategy below this confidence is not trusted.
pub const MIN_CONFIDENCE: f64 = 0.4;
/// An analysis shorter than this many words is likely incomplete.
pub const MIN_WORDS: usize = 100;
/// The same root cause this many iterations in a row means a stuck analysis.
pub const SAME_ROOT_CAUSE_RUN: usize = 2;

const LABEL: &str = "fix strategy";

/// Fenced code blocks of `text` as (info string, body), in order.
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let fence = if t.starts_with("```") {
            "```"
        } else if t.starts_with("~~~") {
            "~~~"
        } else {
            continue;
        };
        let info = t
            .trim_start_matches(fence.chars().next().unwrap_or('`'))
            .trim()
            .to_string();
        let mut body = String::new();
        let mut closed = false;
        for inner in lines.by_ref() {
            if inner.trim_start().starts_with(fence)
                && inner
                    .trim()
                    .trim_start_matches(fence.chars().next().unwrap_or('`'))
                    .is_empty()
            {
                closed = true;
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        if closed {
            out.push((info, body));
        }
    }
    out
}

/// The JSON text that carries the strategy: the last fenced `json` block,
/// else the whole text when it is JSON, else the last fenced block of any
/// kind that parses as a JSON object.
fn strategy_json(text: &str) -> Option<String> {
    let blocks = fenced_blocks(text);
    if let Some((_, body)) = blocks.iter().rev().find(|(info, _)| {
        info.split_whitespace()
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("json"))
    }) {
        return Some(body.clone());
    }
    let trimmed = text.trim();
    if serde_json::from_str::<Value>(trimmed).is_ok_and(|v| v.is_object()) {
        return Some(trimmed.to_string());
    }
    blocks
        .iter()
        .rev()
        .find(|(_, body)| serde_json::from_str::<Value>(body).is_ok_and(|v| v.is_object()))
        .map(|(_, body)| body.clone())
}

/// Extract and validate a fix strategy from an agent's answer. A wrapper
/// object `{"fix_strategy": {...}}` is accepted too.
pub fn extract(text: &str) -> Result<FixStrategy, Vec<Problem>> {
    let Some(json) = strategy_json(text) else {
        return Err(vec![Problem::whole(
            LABEL,
            "no fenced ```json block and the answer is not JSON",
        )]);
    };
    let mut value: Value =
        serde_json::from_str(&json).map_err(|e| vec![Problem::bad_json(LABEL, &e)])?;
    if let Some(inner) = value.get("fix_strategy").filter(|v| v.is_object()) {
        value = inner.clone();
    }
    let text = value.to_string();
    artifacts::parse_artifact::<FixStrategy>(LABEL, &text)
}

/// Why an analysis was passed over.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "code", content = "detail", rename_all = "snake_case")]
pub enum Reason {
    /// The CLI is not installed.
    Unavailable(String),
    Timeout(String),
    RateLimit(String),
    ServerError(String),
    ConnectionError(String),
    /// Non-zero exit or an error envelope.
    AgentError(String),
    /// No strategy could be extracted, or it failed the schema.
    NoValidStrategy(String),
    /// The strategy lacks modification points or affected tests.
    MissingFields(Vec<String>),
    LowConfidence(f64),
    TooShort(usize),
    SameRootCause(String),
    /// The session's cost cap was reached before this tool could run.
    CostCap(String),
}

impl Reason {
    /// The call's `outcome` in fix-history.json.
    pub fn outcome(&self) -> CallOutcome {
        match self {
            Reason::Unavailable(_) => CallOutcome::Unavailable,
            Reason::Timeout(_) => CallOutcome::Timeout,
            Reason::RateLimit(_) => CallOutcome::RateLimit,
            Reason::ServerError(_) => CallOutcome::ServerError,
            Reason::ConnectionError(_) => CallOutcome::ConnectionError,
            Reason::AgentError(_) => CallOutcome::AgentError,
            Reason::NoValidStrategy(_) => CallOutcome::NoValidStrategy,
            Reason::MissingFields(_) => CallOutcome::MissingFields,
            Reason::LowConfidence(_) => CallOutcome::LowConfidence,
            Reason::TooShort(_) => CallOutcome::TooShort,
            Reason::SameRootCause(_) => CallOutcome::SameRootCause,
            Reason::CostCap(_) => CallOutcome::CostCap,
        }
    }

    /// Stable short name, recorded as the call's outcome.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::Unavailable(_) => "unavailable",
            Reason::Timeout(_) => "timeout",
            Reason::RateLimit(_) => "rate_limit",
            Reason::ServerError(_) => "server_error",
            Reason::ConnectionError(_) => "connection_error",
            Reason::AgentError(_) => "agent_error",
            Reason::NoValidStrategy(_) => "no_valid_strategy",
            Reason::MissingFields(_) => "missing_fields",
            Reason::LowConfidence(_) => "low_confidence",
            Reason::TooShort(_) => "too_short",
            Reason::SameRootCause(_) => "same_root_cause",
            Reason::CostCap(_) => "cost_cap",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Unavailable(m) => write!(f, "not available: {m}"),
            Reason::Timeout(m) => write!(f, "timed out: {m}"),
            Reason::RateLimit(m) => write!(f, "rate limited: {m}"),
            Reason::ServerError(m) => write!(f, "server error: {m}"),
            Reason::ConnectionError(m) => write!(f, "connection error: {m}"),
            Reason::AgentError(m) => write!(f, "the call failed: {m}"),
            Reason::NoValidStrategy(m) => write!(f, "no valid fix strategy: {m}"),
            Reason::MissingFields(fields) => {
                write!(f, "the strategy has no {}", fields.join(" and no "))
            }
            Reason::LowConfidence(c) => {
                write!(f, "confidence {c} is below {MIN_CONFIDENCE}")
            }
            Reason::TooShort(n) => write!(f, "the analysis has {n} words (under {MIN_WORDS})"),
            Reason::SameRootCause(m) => write!(
                f,
                "same root cause as the last {SAME_ROOT_CAUSE_RUN} iterations: {m}"
            ),
            Reason::CostCap(m) => write!(f, "{m}"),
        }
    }
}

/// Words in an analysis: whitespace-separated tokens holding a letter or digit.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

fn short(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut out: String = line.chars().take(160).collect();
    if line.chars().count() > 160 {
        out.push('…');
    }
    out
}

/// A normalised key for a strategy's root causes, to notice an analysis
/// that keeps naming the same cause. Empty when there are none.
pub fn root_cause_key(s: &FixStrategy) -> String {
    let mut parts: Vec<String> = s
        .root_causes
        .iter()
        .map(|rc| {
            format!(
                "{}|{}",
                rc.file.as_deref().unwrap_or(""),
                super::builtin::normalize_message(&rc.cause).to_lowercase()
            )
        })
        .collect();
    parts.sort();
    parts.dedup();
    parts.join("\n")
}

/// Why an answer without a valid strategy is passed over: the required
/// fields it lacks, else its first schema problem.
fn invalid_strategy(call: &CallRecord, problems: &[Problem]) -> Reason {
    let missing: Vec<String> = ["modification_points", "test_execution", "affected_tests"]
        .into_iter()
        .filter(|f| {
            problems.iter().any(|p| {
                p.message
                    .contains(&format!("\"{f}\" is a required property"))
            })
        })
        .map(str::to_string)
        .collect();
    if !missing.is_empty() {
        return Reason::MissingFields(missing);
    }
    let first = problems
        .first()
        .map(|p| {
            if p.pointer.is_empty() {
                p.message.clone()
            } else {
                format!("{}: {}", p.pointer, p.message)
            }
        })
        .unwrap_or_default();
    let extra = if call.structured || call.result_text.trim().is_empty() {
        String::new()
    } else {
        " (no structured envelope either)".to_string()
    };
    Reason::NoValidStrategy(format!("{}{extra}", short(&first)))
}

/// Whether to pass over this tool's analysis, and why (DESIGN.md §6.3).
/// `previous` holds the strategies of earlier iterations, oldest first.
/// Pure: the same inputs always give the same answer.
pub fn fallback_reason(
    call: &CallRecord,
    strategy: &Result<FixStrategy, Vec<Problem>>,
    previous: &[FixStrategy],
) -> Option<Reason> {
    let msg = || {
        call.error_message
            .clone()
            .map(|m| short(&m))
            .unwrap_or_default()
    };
    match call.error_kind {
        Some(ErrorKind::Unavailable) => return Some(Reason::Unavailable(msg())),
        Some(ErrorKind::Timeout) => return Some(Reason::Timeout(msg())),
        _ => {}
    }
    // Transport errors: from the failed call, or from an answer that has
    // no valid strategy (a CLI may print "429 Too Many Requests" and exit 0).
    let transport = match call.error_kind {
        Some(k @ (ErrorKind::RateLimit | ErrorKind::Server | ErrorKind::Connection)) => Some(k),
        _ if strategy.is_err() => classify_error(&call.result_text),
        _ => None,
    };
    let detail = || {
        let m = msg();
        if m.is_empty() {
            short(&call.result_text)
        } else {
            m
        }
    };
    match transport {
        Some(ErrorKind::RateLimit) => return Some(Reason::RateLimit(detail())),
        Some(ErrorKind::Server) => return Some(Reason::ServerError(detail())),
        Some(ErrorKind::Connection) => return Some(Reason::ConnectionError(detail())),
        _ => {}
    }
    if call.is_error || call.exit_code != Some(0) {
        let code = match call.exit_code {
            Some(c) => format!("exit {c}"),
            None => "killed by a signal".into(),
        };
        let m = msg();
        return Some(Reason::AgentError(if call.is_error && !m.is_empty() {
            format!("{code}, error envelope: {m}")
        } else if call.is_error {
            format!("{code}, error envelope")
        } else {
            format!("{code}: {m}")
        }));
    }
    let s = match strategy {
        Ok(s) => s,
        Err(problems) => return Some(invalid_strategy(call, problems)),
    };
    let mut missing = Vec::new();
    if s.modification_points.is_empty() {
        missing.push("modification_points".to_string());
    }
    if s.test_execution.affected_tests.is_empty() {
        missing.push("affected_tests".to_string());
    }
    if !missing.is_empty() {
        return Some(Reason::MissingFields(missing));
    }
    if s.confidence_score < MIN_CONFIDENCE {
        return Some(Reason::LowConfidence(s.confidence_score));
    }
    let words = word_count(&call.result_text);
    if words < MIN_WORDS {
        return Some(Reason::TooShort(words));
    }
    if previous.len() >= SAME_ROOT_CAUSE_RUN {
        let key = root_cause_key(s);
        let recent = &previous[previous.len() - SAME_ROOT_CAUSE_RUN..];
        if !key.is_empty() && recent.iter().all(|p| root_cause_key(p) == key) {
            let first = s
                .root_causes
                .first()
                .map(|r| short(&r.cause))
                .unwrap_or_default();
            return Some(Reason::SameRootCause(first));
        }
    }
    None
}

/// Whether to pass over a review that needs no fix strategy (phase 3's
/// plan review): the same rules as an analysis for a failed or unreachable
/// call and for its length ([`MIN_WORDS`]), so both chains judge alike.
pub fn review_reason(call: &CallRecord) -> Option<Reason> {
    if call.failed() {
        return fallback_reason(call, &Err(Vec::new()), &[]);
    }
    // No strategy is asked of a review (and its text may well discuss
    // rate limits): only its length is judged.
    let words = word_count(&call.result_text);
    (words < MIN_WORDS).then_some(Reason::TooShort(words))
}

/// Total cost of the session's agent calls in US dollars.
pub fn total_cost(history: &FixHistory) -> f64 {
    history.agent_calls.iter().filter_map(|c| c.cost_usd).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::config::Role;
    use crate::artifacts::fix_history::AgentCall;

    const GOOD: &str = r#"{
  "approach": "Handle b == 0 in divide",
  "root_causes": [{"test": "tests/test_ops.py::test_divide_by_zero_returns_none", "error": "ZeroDivisionError", "cause": "divide does not check for zero", "file": "calc/ops.py", "line": 10}],
  "modification_points": [{"file": "calc/ops.py", "function": "divide", "lines": "8-10"}],
  "test_execution": {"mode": "affected_only", "affected_tests": ["tests/test_ops.py"]},
  "confidence_score": 0.8,
  "expected_outcome": "test passes"
}"#;

    fn prose(words: usize) -> String {
        vec!["word"; words].join(" ")
    }

    fn answer(json: &str) -> String {
        format!("{}\n\n```json\n{json}\n```\n", prose(120))
    }

    fn call(text: &str) -> CallRecord {
        CallRecord {
            exit_code: Some(0),
            duration_ms: 5,
            result_text: text.into(),
            structured: true,
            prompt_file: "p".into(),
            output_file: "o".into(),
            ..CallRecord::new("gemini", Role::Analysis, chrono::DateTime::UNIX_EPOCH)
        }
    }

    #[test]
    fn extract_takes_the_last_json_block() {
        let text = format!("```json\n{{\"x\": 1}}\n```\nthen\n```json\n{GOOD}\n```\n");
        let s = extract(&text).unwrap();
        assert_eq!(
            s.modification_points[0].to_string(),
            "calc/ops.py:divide:8-10"
        );
        assert_eq!(extract(GOOD).unwrap().confidence_score, 0.8);
        let wrapped = format!("```\n{{\"fix_strategy\": {GOOD}}}\n```");
        assert_eq!(
            extract(&wrapped).unwrap().approach,
            "Handle b == 0 in divide"
        );
        let err = extract("just words").unwrap_err();
        assert_eq!(
            err[0].message,
            "no fenced ```json block and the answer is not JSON"
        );
        let err = extract("```json\n{\"approach\": 1}\n```").unwrap_err();
        assert!(
            err.iter()
                .any(|p| p.message.contains("\"root_causes\" is a required property")),
            "{err:?}"
        );
    }

    #[test]
    fn fallback_table() {
        let good = answer(GOOD);
        let low = answer(&GOOD.replace("0.8", "0.3"));
        let no_points = answer(&GOOD.replace(
            r#"[{"file": "calc/ops.py", "function": "divide", "lines": "8-10"}]"#,
            "[]",
        ));
        let no_tests = answer(&GOOD.replace(r#"["tests/test_ops.py"]"#, "[]"));
        let missing_key = answer(&GOOD.replace(
            r#""modification_points": [{"file": "calc/ops.py", "function": "divide", "lines": "8-10"}],"#,
            "",
        ));
        let short_text = format!("Short.\n```json\n{GOOD}\n```");
        let mut timed_out = call("");
        timed_out.timed_out = true;
        timed_out.error_kind = Some(ErrorKind::Timeout);
        timed_out.error_message = Some("no answer within 1 s".into());
        let mut missing_cli = call("");
        missing_cli.error_kind = Some(ErrorKind::Unavailable);
        missing_cli.error_message = Some("`qwen` was not found on PATH".into());
        let mut enveloped_error = call(&good);
        enveloped_error.is_error = true;
        enveloped_error.error_message = Some("boom".into());
        let mut exit_1 = call("oops");
        exit_1.exit_code = Some(1);
        exit_1.error_kind = Some(ErrorKind::Failed);
        exit_1.error_message = Some("exit 1 (oops)".into());
        let mut rate = call("");
        rate.exit_code = Some(1);
        rate.is_error = true;
        rate.error_kind = Some(ErrorKind::RateLimit);
        rate.error_message = Some("429 Too Many Requests".into());
        let text_rate = call("Error: Rate limit exceeded, try again later");
        let mut unstructured = call("garbage here");
        unstructured.structured = false;

        let cases: Vec<(&str, CallRecord, &str)> = vec![
            ("good", call(&good), "-"),
            ("timeout", timed_out, "timed out: no answer within 1 s"),
            (
                "unavailable",
                missing_cli,
                "not available: `qwen` was not found on PATH",
            ),
            (
                "is_error",
                enveloped_error,
                "the call failed: exit 0, error envelope: boom",
            ),
            ("exit 1", exit_1, "the call failed: exit 1: exit 1 (oops)"),
            ("rate", rate, "rate limited: 429 Too Many Requests"),
            (
                "text rate",
                text_rate,
                "rate limited: Error: Rate limit exceeded, try again later",
            ),
            (
                "garbage",
                unstructured,
                "no valid fix strategy: no fenced ```json block and the answer is not JSON (no structured envelope either)",
            ),
            ("low", call(&low), "confidence 0.3 is below 0.4"),
            (
                "no points",
                call(&no_points),
                "the strategy has no modification_points",
            ),
            (
                "no tests",
                call(&no_tests),
                "the strategy has no affected_tests",
            ),
            (
                "missing key",
                call(&missing_key),
                "the strategy has no modification_points",
            ),
            (
                "short",
                call(&short_text),
                "the analysis has 41 words (under 100)",
            ),
        ];
        for (name, c, want) in cases {
            let s = extract(&c.result_text);
            let got = fallback_reason(&c, &s, &[]).map_or("-".to_string(), |r| r.to_string());
            assert_eq!(got, want, "case {name}");
        }
    }

    #[test]
    fn a_valid_strategy_mentioning_429_is_kept() {
        let text = answer(&GOOD.replace(
            "divide does not check for zero",
            "the client retries HTTP 429 forever",
        ));
        let c = call(&text);
        assert_eq!(fallback_reason(&c, &extract(&text), &[]), None);
    }

    #[test]
    fn same_root_cause_three_times_falls_back() {
        let s = extract(GOOD).unwrap();
        let mut other = s.clone();
        other.root_causes[0].cause = "something else entirely".into();
        let c = call(&answer(GOOD));
        let mut renumbered = s.clone();
        renumbered.root_causes[0].line = Some(11);
        renumbered.root_causes[0].cause = "Divide does not check  for zero".into();
        assert_eq!(
            fallback_reason(&c, &Ok(s.clone()), std::slice::from_ref(&s)),
            None
        );
        assert_eq!(
            fallback_reason(&c, &Ok(s.clone()), &[s.clone(), other.clone()]),
            None
        );
        assert_eq!(
            fallback_reason(&c, &Ok(s.clone()), &[other, s.clone(), renumbered]).map(|r| r.code()),
            Some("same_root_cause")
        );
    }

    #[test]
    fn total_cost_sums_the_recorded_calls() {
        let mut h = FixHistory::default();
        let c = call("x").to_artifact(Some(1), None, CallOutcome::Accepted);
        h.agent_calls.push(AgentCall {
            cost_usd: Some(0.75),
            ..c.clone()
        });
        h.agent_calls.push(AgentCall {
            cost_usd: None,
            ..c
        });
        assert_eq!(total_cost(&h), 0.75);
    }

    #[test]
    fn a_review_needs_words_and_a_working_call() {
        let mut c = call(&prose(99));
        assert_eq!(review_reason(&c).map(|r| r.code()), Some("too_short"));
        c.result_text = prose(100);
        assert_eq!(review_reason(&c), None);
        c.result_text = format!("{} 429 Too Many Requests", prose(100));
        c.exit_code = Some(1);
        assert_eq!(review_reason(&c).map(|r| r.code()), Some("rate_limit"));
    }
}
