//! The five agent CLI presets: their non-interactive argument lists per role
//! and how to read what they print. docs/agents.md explains every flag.
//!
//! Every preset gets its prompt on stdin, which is closed after the prompt
//! (`claude -p` and `codex exec` hang on an open stdin). Gemini and Qwen
//! need `-p` to run headless; what `-p` carries is appended to stdin, so it
//! holds only a fixed pointer to the prompt above it.

use serde_json::Value;

use crate::artifacts::config::Preset;

use super::config::Role;

/// Appended by `-p` after the prompt that Gemini and Qwen read from stdin.
pub const STDIN_POINTER: &str = "Follow the instructions given above on standard input.";

/// The full argv for a preset in a role (program first).
pub fn argv(preset: Preset, role: Role, model: Option<&str>, extra: &[String]) -> Vec<String> {
    let edit = role.may_edit();
    let mut v: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| v.extend(items.iter().map(|s| s.to_string()));
    match preset {
        Preset::Claude => {
            push(&[
                "claude",
                "-p",
                "--output-format",
                "json",
                "--permission-mode",
            ]);
            push(&[if edit { "acceptEdits" } else { "plan" }]);
        }
        Preset::Gemini => {
            push(&["gemini", "--output-format", "json", "--approval-mode"]);
            push(&[if edit { "yolo" } else { "default" }]);
        }
        Preset::Qwen => {
            push(&["qwen", "--output-format", "json", "--approval-mode"]);
            push(&[if edit { "yolo" } else { "plan" }]);
        }
        Preset::Codex => {
            push(&[
                "codex",
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--sandbox",
            ]);
            push(&[if edit { "workspace-write" } else { "read-only" }]);
        }
        Preset::Opencode => {
            push(&["opencode", "run", "--agent"]);
            push(&[if edit { "build" } else { "plan" }]);
        }
    }
    if let Some(m) = model {
        push(&["--model", m]);
    }
    v.extend(extra.iter().cloned());
    match preset {
        Preset::Gemini | Preset::Qwen => {
            v.push("-p".into());
            v.push(STDIN_POINTER.into());
        }
        Preset::Codex => v.push("-".into()),
        Preset::Claude | Preset::Opencode => {}
    }
    v
}

/// What a call printed, read per preset.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope {
    /// The agent's answer (for text output: everything it printed).
    pub result_text: String,
    /// The envelope says the call failed (whatever the exit code).
    pub is_error: bool,
    pub error_message: Option<String>,
    pub cost_usd: Option<f64>,
    pub turns: Option<u32>,
    /// A structured envelope of the expected shape was found. When false
    /// the raw output stands in for the result.
    pub structured: bool,
}

/// Read a preset's output. `None` preset = a custom command (plain text).
pub fn parse(preset: Option<Preset>, raw: &str) -> Envelope {
    match preset {
        Some(Preset::Claude) => parse_claude(raw),
        Some(Preset::Gemini) => parse_gemini(raw),
        Some(Preset::Qwen) => parse_qwen(raw),
        Some(Preset::Codex) => parse_codex(raw),
        Some(Preset::Opencode) | None => text(raw),
    }
}

fn text(raw: &str) -> Envelope {
    Envelope {
        result_text: strip_ansi(raw),
        ..Envelope::default()
    }
}

/// Remove ANSI colour and cursor sequences.
pub fn strip_ansi(s: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07").expect("valid regex")
    });
    re.replace_all(s, "").into_owned()
}

/// Every JSON value that starts at the beginning of a line (stderr noise
/// such as "Loaded cached credentials." may surround the envelope).
fn json_values(raw: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in raw.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            let start = offset + (line.len() - trimmed.len());
            let mut stream = serde_json::Deserializer::from_str(&raw[start..]).into_iter::<Value>();
            if let Some(Ok(v)) = stream.next() {
                out.push(v);
            }
        }
        offset += line.len();
    }
    out
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn error_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) => m
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

fn as_u32(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// Claude Code `--output-format json`: one object with `type: "result"`,
/// `result`, `is_error`, `subtype`, `total_cost_usd`, `num_turns`.
fn parse_claude(raw: &str) -> Envelope {
    let Some(v) = json_values(raw).into_iter().rev().find(|v| {
        v.is_object()
            && (v.get("type").and_then(Value::as_str) == Some("result")
                || v.get("is_error").is_some())
    }) else {
        return text(raw);
    };
    result_message(&v)
}

/// A Claude-style `result` message (Claude and Qwen share the shape).
fn result_message(v: &Value) -> Envelope {
    let subtype = str_field(v, "subtype").unwrap_or_default();
    let is_error =
        v.get("is_error").and_then(Value::as_bool).unwrap_or(false) || subtype.starts_with("error");
    let result_text = str_field(v, "result").unwrap_or_default();
    let error_message = is_error.then(|| {
        if !result_text.is_empty() {
            result_text.clone()
        } else if let Some(e) = v.get("error") {
            error_text(e)
        } else {
            format!(
                "agent reported {}",
                if subtype.is_empty() {
                    "an error"
                } else {
                    &subtype
                }
            )
        }
    });
    Envelope {
        result_text,
        is_error,
        error_message,
        cost_usd: v
            .get("total_cost_usd")
            .or_else(|| v.get("cost_usd"))
            .and_then(Value::as_f64),
        turns: as_u32(v.get("num_turns")),
        structured: true,
    }
}

/// Gemini CLI `--output-format json`: `{response, stats, error?}`.
fn parse_gemini(raw: &str) -> Envelope {
    let Some(v) = json_values(raw)
        .into_iter()
        .rev()
        .find(|v| v.is_object() && (v.get("response").is_some() || v.get("error").is_some()))
    else {
        return text(raw);
    };
    let error = v.get("error").filter(|e| !e.is_null());
    Envelope {
        result_text: str_field(&v, "response").unwrap_or_default(),
        is_error: error.is_some(),
        error_message: error.map(error_text),
        cost_usd: None,
        turns: None,
        structured: true,
    }
}

/// Qwen Code `--output-format json`: an array of messages ending in a
/// `result` message shaped like Claude's.
fn parse_qwen(raw: &str) -> Envelope {
    let Some(Value::Array(items)) = json_values(raw).into_iter().rev().find(Value::is_array) else {
        return text(raw);
    };
    if let Some(result) = items
        .iter()
        .rev()
        .find(|m| m.get("type").and_then(Value::as_str) == Some("result"))
    {
        return result_message(result);
    }
    // No result message: the call did not finish. Keep the assistant text.
    let said: Vec<String> = items
        .iter()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("assistant"))
        .flat_map(|m| {
            m.pointer("/message/content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| str_field(&c, "text"))
        .collect();
    Envelope {
        result_text: said.join("\n"),
        is_error: true,
        error_message: Some("the JSON output has no result message".into()),
        structured: true,
        ..Envelope::default()
    }
}

/// Codex `exec --json`: JSON Lines events. The answer is the last
/// completed `agent_message` item; `turn.failed` (or an `error` event with
/// no completed turn) is a failed call.
fn parse_codex(raw: &str) -> Envelope {
    let mut env = Envelope::default();
    let mut completed_turns = 0u32;
    let mut errors = Vec::new();
    let mut failed = false;
    for line in raw.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            continue;
        };
        env.structured = true;
        match kind {
            "item.completed" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                let item_type = item
                    .get("type")
                    .or_else(|| item.get("item_type"))
                    .and_then(Value::as_str);
                if matches!(item_type, Some("agent_message" | "assistant_message"))
                    && let Some(t) = str_field(&item, "text")
                {
                    env.result_text = t;
                }
            }
            "turn.completed" => completed_turns += 1,
            "turn.failed" => {
                failed = true;
                errors.push(
                    v.get("error")
                        .map(error_text)
                        .unwrap_or_else(|| "turn failed".into()),
                );
            }
            "error" => errors.push(
                str_field(&v, "message")
                    .or_else(|| v.get("error").map(error_text))
                    .unwrap_or_else(|| "error".into()),
            ),
            _ => {}
        }
    }
    if !env.structured {
        return text(raw);
    }
    env.is_error = failed || (completed_turns == 0 && !errors.is_empty());
    if env.is_error {
        env.error_message = Some(errors.join("; "));
    }
    env.turns = (completed_turns > 0).then_some(completed_turns);
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_per_role() {
        let s = |v: Vec<String>| v.join(" ");
        assert_eq!(
            s(argv(Preset::Claude, Role::Analysis, None, &[])),
            "claude -p --output-format json --permission-mode plan"
        );
        assert_eq!(
            s(argv(
                Preset::Claude,
                Role::Fix,
                Some("opus"),
                &["--max-turns".into(), "30".into()]
            )),
            "claude -p --output-format json --permission-mode acceptEdits --model opus --max-turns 30"
        );
        assert_eq!(
            s(argv(Preset::Gemini, Role::Analysis, None, &[])),
            format!("gemini --output-format json --approval-mode default -p {STDIN_POINTER}")
        );
        assert_eq!(
            s(argv(Preset::Qwen, Role::TestGen, None, &[])),
            format!("qwen --output-format json --approval-mode yolo -p {STDIN_POINTER}")
        );
        assert_eq!(
            s(argv(Preset::Codex, Role::Analysis, Some("gpt-5"), &[])),
            "codex exec --json --skip-git-repo-check --sandbox read-only --model gpt-5 -"
        );
        assert_eq!(
            s(argv(Preset::Codex, Role::Fix, None, &[])),
            "codex exec --json --skip-git-repo-check --sandbox workspace-write -"
        );
        assert_eq!(
            s(argv(Preset::Opencode, Role::Analysis, None, &[])),
            "opencode run --agent plan"
        );
        assert_eq!(
            s(argv(Preset::Opencode, Role::Fix, None, &[])),
            "opencode run --agent build"
        );
    }

    #[test]
    fn claude_envelope() {
        let raw = r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"num_turns":4,"result":"done","session_id":"s","total_cost_usd":0.0123}"#;
        let e = parse(Some(Preset::Claude), raw);
        assert_eq!(e.result_text, "done");
        assert!(!e.is_error);
        assert_eq!(e.cost_usd, Some(0.0123));
        assert_eq!(e.turns, Some(4));
        let raw = "warning: x\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"API Error: 529 overloaded\",\"num_turns\":1,\"total_cost_usd\":0}\n";
        let e = parse(Some(Preset::Claude), raw);
        assert!(e.is_error);
        assert_eq!(
            e.error_message.as_deref(),
            Some("API Error: 529 overloaded")
        );
        let e = parse(
            Some(Preset::Claude),
            r#"{"type":"result","subtype":"error_max_turns","num_turns":30}"#,
        );
        assert!(e.is_error);
        assert_eq!(
            e.error_message.as_deref(),
            Some("agent reported error_max_turns")
        );
    }

    #[test]
    fn gemini_envelope_with_noise() {
        let raw = "Loaded cached credentials.\n{\n  \"response\": \"ok\",\n  \"stats\": {\"models\": {}}\n}\n";
        let e = parse(Some(Preset::Gemini), raw);
        assert_eq!(
            (e.result_text.as_str(), e.is_error, e.structured),
            ("ok", false, true)
        );
        let raw =
            r#"{"error": {"type": "ApiError", "message": "429 Too Many Requests", "code": 429}}"#;
        let e = parse(Some(Preset::Gemini), raw);
        assert!(e.is_error);
        assert_eq!(e.error_message.as_deref(), Some("429 Too Many Requests"));
    }

    #[test]
    fn qwen_array() {
        let raw = r#"[{"type":"system","subtype":"session_start"},{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}},{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"final"}]"#;
        let e = parse(Some(Preset::Qwen), raw);
        assert_eq!((e.result_text.as_str(), e.turns), ("final", Some(2)));
        let e = parse(
            Some(Preset::Qwen),
            r#"[{"type":"assistant","message":{"content":[{"type":"text","text":"partial"}]}}]"#,
        );
        assert!(e.is_error);
        assert_eq!(e.result_text, "partial");
    }

    #[test]
    fn codex_events() {
        let raw = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i0\",\"type\":\"reasoning\",\"text\":\"hmm\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i1\",\"type\":\"agent_message\",\"text\":\"answer\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"cached_input_tokens\":0,\"output_tokens\":2}}\n",
        );
        let e = parse(Some(Preset::Codex), raw);
        assert_eq!(
            (e.result_text.as_str(), e.is_error, e.turns),
            ("answer", false, Some(1))
        );
        let raw = "{\"type\":\"turn.started\"}\n{\"type\":\"error\",\"message\":\"stream disconnected\"}\n{\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded retry limit, last status: 429\"}}\n";
        let e = parse(Some(Preset::Codex), raw);
        assert!(e.is_error);
        assert_eq!(
            e.error_message.as_deref(),
            Some("stream disconnected; exceeded retry limit, last status: 429")
        );
    }

    #[test]
    fn text_and_missing_envelopes() {
        let e = parse(Some(Preset::Opencode), "\x1b[1mAnswer\x1b[0m\n");
        assert_eq!((e.result_text.as_str(), e.structured), ("Answer\n", false));
        let e = parse(Some(Preset::Claude), "not json at all");
        assert_eq!(
            (e.result_text.as_str(), e.structured, e.is_error),
            ("not json at all", false, false)
        );
    }
}
