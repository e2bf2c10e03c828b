//! Running one agent call: build the command, feed the prompt on stdin and
//! close it, save the prompt and the raw output, and read the result per
//! preset. Every child goes through [`crate::process::run`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::artifacts::Timestamp;
use crate::artifacts::config::{CommandSpec, Preset};
use crate::artifacts::fix_history::{AgentCall, CallOutcome};
use crate::error::{Error, Result};
use crate::process::{self, Spec};
use crate::session::SessionPaths;
use crate::session::store;

use super::config::{AgentKind, ResolvedAgent, Role};
use super::presets;
use super::vars::{self, Mode, Vars};

/// At most this much of the raw output is read back for parsing.
const MAX_PARSE_BYTES: u64 = 16 * 1024 * 1024;

/// Where a call's prompt and raw output are saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFiles {
    /// Exactly what the agent was sent.
    pub prompt: PathBuf,
    /// Exactly what the agent printed (stdout and stderr, interleaved).
    pub output: PathBuf,
}

impl CallFiles {
    /// Analysis of iteration `n`: the first tool of the chain writes
    /// `iteration-N-cli-output.txt`; a fallback tool writes
    /// `iteration-N-<tool>-cli-output.txt`. All share `iteration-N-prompt.md`.
    pub fn analysis(paths: &SessionPaths, n: u32, position: usize, tool: &str) -> CallFiles {
        let output = if position == 0 {
            paths.iteration_file(n, "cli-output.txt")
        } else {
            paths.iteration_file(n, &format!("{}-cli-output.txt", file_token(tool)))
        };
        CallFiles {
            prompt: paths.iteration_file(n, "prompt.md"),
            output,
        }
    }

    /// The fix of iteration `n`: `iteration-N-fix-prompt.md` and
    /// `iteration-N-fix-cli-output.txt`.
    pub fn fix(paths: &SessionPaths, n: u32) -> CallFiles {
        CallFiles {
            prompt: paths.iteration_file(n, "fix-prompt.md"),
            output: paths.iteration_file(n, "fix-cli-output.txt"),
        }
    }

    /// A task run outside the loop (e.g. IMPL-001 test generation):
    /// `.process/<TASK>-prompt.md` and `.process/<TASK>-cli-output.txt`.
    pub fn task(paths: &SessionPaths, task_id: &str) -> CallFiles {
        let t = file_token(task_id);
        CallFiles {
            prompt: paths.process_dir().join(format!("{t}-prompt.md")),
            output: paths.process_dir().join(format!("{t}-cli-output.txt")),
        }
    }
}

/// A name made safe for a file name.
fn file_token(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub use crate::artifacts::fix_history::ErrorKind;

/// Recognise rate limits, server errors and connection errors in text.
pub fn classify_error(text: &str) -> Option<ErrorKind> {
    static RATE: OnceLock<Regex> = OnceLock::new();
    static SERVER: OnceLock<Regex> = OnceLock::new();
    static CONN: OnceLock<Regex> = OnceLock::new();
    let rate = RATE.get_or_init(|| {
        Regex::new(r"(?i)rate[ _-]?limit|too many requests|(status|code|http|error)\W{0,3}[^\n]{0,20}\b429\b|\b429\b\W{0,3}(too many|rate|error)|quota (exceeded|exhausted)|resource[ _]exhausted|usage limit")
            .expect("valid regex")
    });
    let server = SERVER.get_or_init(|| {
        Regex::new(r"(?i)\b5\d\d\b[^\n]{0,40}(error|internal|bad gateway|unavailable|timeout|overloaded)|(internal server error|bad gateway|service unavailable|gateway time-?out|overloaded_error|\boverloaded\b|experiencing high demand|temporary errors)|(status|code|http)[ :=]*5\d\d\b")
            .expect("valid regex")
    });
    let conn = CONN.get_or_init(|| {
        Regex::new(r"(?i)ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|connection (refused|reset|error|closed)|network (error|is unreachable)|fetch failed|socket hang up|could not resolve host|stream disconnected")
            .expect("valid regex")
    });
    if rate.is_match(text) {
        Some(ErrorKind::RateLimit)
    } else if server.is_match(text) {
        Some(ErrorKind::Server)
    } else if conn.is_match(text) {
        Some(ErrorKind::Connection)
    } else {
        None
    }
}

/// One agent call, ready to run.
pub struct Invocation<'a> {
    pub agent: &'a ResolvedAgent,
    pub role: Role,
    pub prompt: &'a str,
    pub vars: &'a Vars,
    pub files: &'a CallFiles,
    /// The project root: the child's working directory, and the base of
    /// every relative path handed to the agent.
    pub cwd: &'a Path,
    /// Extra environment for the child. A `PATH` here is also where the
    /// program is looked up (as `std::process::Command` does).
    pub env: &'a [(String, String)],
}

/// What happened in one call. Persisted (without the result text) as an
/// [`AgentCall`] in fix-history.json.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRecord {
    pub agent: String,
    pub role: Role,
    pub started_at: Timestamp,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Stopped by Ctrl-C; the caller should save state and exit 3.
    pub interrupted: bool,
    pub duration_ms: u64,
    pub cost_usd: Option<f64>,
    pub turns: Option<u32>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The agent's answer (envelope result, or the whole text output).
    pub result_text: String,
    /// The envelope reported an error (whatever the exit code).
    pub is_error: bool,
    pub error_kind: Option<ErrorKind>,
    pub error_message: Option<String>,
    /// The output had the preset's structured envelope.
    pub structured: bool,
    /// Relative to the project root.
    pub prompt_file: String,
    pub output_file: String,
    /// Commits the agent made on top of the pre-call `HEAD` (set by the
    /// driver's HEAD check, DESIGN.md §10.2).
    pub agent_commits: Vec<String>,
    /// What the agent did during the call that the engine undid
    /// (DESIGN.md §10.2).
    pub tamper: Option<crate::artifacts::fix_history::Tamper>,
}

impl CallRecord {
    /// Failed in any way: not started, timed out, non-zero exit, error envelope.
    pub fn failed(&self) -> bool {
        self.error_kind.is_some() || self.is_error || self.exit_code != Some(0)
    }

    /// A call as fix-history.json keeps it (its answer and error message
    /// are not kept): a speculative candidate's call, read back when its
    /// changes are applied.
    pub fn from_artifact(a: &AgentCall) -> CallRecord {
        CallRecord {
            exit_code: a.exit_code,
            timed_out: a.timed_out,
            duration_ms: a.duration_ms,
            cost_usd: a.cost_usd,
            turns: a.turns,
            input_tokens: a.input_tokens,
            output_tokens: a.output_tokens,
            is_error: a.is_error,
            error_kind: a.error_kind,
            prompt_file: a.prompt_file.clone().unwrap_or_default(),
            output_file: a.output_file.clone().unwrap_or_default(),
            tamper: a.tamper,
            ..CallRecord::new(&a.agent, a.role, a.started_at)
        }
    }

    /// A call of `agent` in `role` that has not ended yet: no exit, no
    /// answer, nothing measured.
    pub fn new(agent: &str, role: Role, started_at: Timestamp) -> CallRecord {
        CallRecord {
            agent: agent.to_string(),
            role,
            started_at,
            exit_code: None,
            timed_out: false,
            interrupted: false,
            duration_ms: 0,
            cost_usd: None,
            turns: None,
            input_tokens: None,
            output_tokens: None,
            result_text: String::new(),
            is_error: false,
            error_kind: None,
            error_message: None,
            structured: false,
            prompt_file: String::new(),
            output_file: String::new(),
            agent_commits: Vec::new(),
            tamper: None,
        }
    }

    /// The record kept in fix-history.json.
    pub fn to_artifact(
        &self,
        iteration: Option<u32>,
        task: Option<&str>,
        outcome: CallOutcome,
    ) -> AgentCall {
        AgentCall {
            iteration,
            task: task.map(str::to_string),
            role: self.role,
            agent: self.agent.clone(),
            started_at: self.started_at,
            duration_ms: self.duration_ms,
            exit_code: self.exit_code,
            timed_out: self.timed_out,
            is_error: self.is_error,
            error_kind: self.error_kind,
            cost_usd: self.cost_usd,
            turns: self.turns,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            outcome,
            prompt_file: Some(self.prompt_file.clone()),
            output_file: Some(self.output_file.clone()),
            tamper: self.tamper,
            candidate: None,
            extra: Default::default(),
        }
    }
}

/// Build the argv and whether the command is a shell string.
fn command_line(inv: &Invocation, vars: &Vars) -> Result<Vec<String>> {
    let agent = inv.agent;
    let bad_var = |e: vars::UnknownVariable| {
        Error::usage(format!("agent {}: {e} in its command", agent.name))
    };
    match &agent.kind {
        AgentKind::Preset(p) => {
            let mut argv = presets::argv(*p, inv.role, agent.model.as_deref(), &agent.args);
            if let Some(program) = &agent.program {
                argv[0] = program.clone();
            }
            Ok(argv)
        }
        AgentKind::Command(CommandSpec::Argv(argv)) => argv
            .iter()
            .map(|a| vars::interpolate(a, vars, Mode::Argv).map_err(bad_var))
            .collect(),
        AgentKind::Command(CommandSpec::Shell(s)) => {
            let script = vars::interpolate(s, vars, Mode::Shell).map_err(bad_var)?;
            Ok(vec![
                crate::process::shell_program().into(),
                "-c".into(),
                script,
            ])
        }
    }
}

/// The agent's process: the prompt on stdin, its timeout and log, the
/// variables and the role's environment.
fn call_spec(inv: &Invocation, argv: Vec<String>, vars: &Vars) -> Spec {
    let agent = inv.agent;
    let mut spec = Spec::new(argv, inv.cwd)
        .stdin(inv.prompt.as_bytes().to_vec())
        .timeout(agent.timeout)
        .log(&inv.files.output)
        .log_limit(process::AGENT_LOG);
    spec.head_bytes = 4 * 1024;
    spec.tail_bytes = 4 * 1024;
    for (k, v) in vars.env() {
        spec = spec.env(k, v);
    }
    spec = spec
        .env("WFX_AGENT", agent.name.clone())
        .env("WFX_ROLE", inv.role.as_str());
    for (k, v) in inv.env {
        spec = spec.env(k.clone(), v.clone());
    }
    // Last, so nothing overrides what keeps a read-only role read-only.
    if let AgentKind::Preset(p) = &agent.kind {
        for (k, v) in presets::env(*p, inv.role) {
            spec = spec.env(k, v);
        }
    }
    spec
}

/// Run one agent call (see the module docs). `on_spawn` receives the
/// child's process group (the session lock records it).
pub fn invoke(inv: &Invocation, on_spawn: &mut dyn FnMut(i32)) -> Result<CallRecord> {
    let agent = inv.agent;
    let cwd = crate::session::Workspace::new(inv.cwd);
    let (prompt_rel, output_rel) = (cwd.rel(&inv.files.prompt), cwd.rel(&inv.files.output));
    // A record of what was sent: written again with the call if a crash
    // loses it, so not synced (the step's commit makes the call durable).
    store::write_replace(&inv.files.prompt, inv.prompt.as_bytes())?;
    // process::run appends; a re-run of the same call starts afresh.
    match std::fs::remove_file(&inv.files.output) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(&inv.files.output, e)),
    }

    let mut vars = inv.vars.clone();
    vars.set("prompt_file", prompt_rel.clone());
    let argv = command_line(inv, &vars)?;
    let started_at = chrono::Utc::now();
    let mut record = CallRecord {
        prompt_file: prompt_rel,
        output_file: output_rel,
        ..CallRecord::new(&agent.name, inv.role, started_at)
    };

    let path_var: Option<OsString> = inv
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    if crate::process::which(&argv[0], path_var.as_deref(), inv.cwd).is_none() {
        let msg = format!("`{}` was not found on PATH", argv[0]);
        store::write_atomic(&inv.files.output, format!("wfx: {msg}\n").as_bytes())?;
        record.error_kind = Some(ErrorKind::Unavailable);
        record.error_message = Some(msg);
        return Ok(record);
    }

    let spec = call_spec(inv, argv, &vars);
    let outcome = match process::run(spec, on_spawn) {
        Ok(o) => o,
        // Found but not runnable (permissions, bad interpreter): the agent
        // is unavailable, which the analysis chain can fall back from.
        Err(Error::Usage(msg)) => {
            store::write_atomic(&inv.files.output, format!("wfx: {msg}\n").as_bytes())?;
            record.error_kind = Some(ErrorKind::Unavailable);
            record.error_message = Some(msg);
            return Ok(record);
        }
        Err(e) => return Err(e),
    };
    record.exit_code = outcome.exit_code;
    record.timed_out = outcome.timed_out;
    record.interrupted = outcome.interrupted;
    record.duration_ms = outcome.duration.as_millis() as u64;

    let raw = read_output(&inv.files.output)?;
    let preset = match &agent.kind {
        AgentKind::Preset(p) => Some(*p),
        AgentKind::Command(_) => None,
    };
    let env = presets::parse(preset, &raw);
    record.result_text = env.result_text;
    record.is_error = env.is_error;
    record.cost_usd = env.cost_usd;
    record.turns = env.turns;
    record.input_tokens = env.input_tokens;
    record.output_tokens = env.output_tokens;
    record.structured = env.structured;
    record.error_message = env.error_message;
    if outcome.timed_out {
        let (kind, message) = timed_out(preset, &raw, agent.timeout.as_secs());
        record.error_kind = Some(kind);
        record.error_message = Some(message);
    } else if record.is_error || record.exit_code != Some(0) {
        let text = record.error_message.clone().unwrap_or_default();
        record.error_kind = Some(
            classify_error(&text)
                .or_else(|| classify_error(&raw))
                .unwrap_or(ErrorKind::Failed),
        );
        if record.error_message.is_none() {
            record.error_message = Some(format!("{} ({})", outcome.describe(), last_line(&raw)));
        }
    }
    record.error_message = record.error_message.as_deref().map(clean_reason);
    Ok(record)
}

/// The kind and reason of a call that ran into wfx's timeout after
/// `timeout_s` seconds. A CLI that retries a rate limit or a server error
/// by itself may keep doing so past the timeout: what it last reported
/// names the cause. A connection error while waiting (a CLI's own request
/// timing out on a server that never answers) is still no answer.
pub fn timed_out(preset: Option<Preset>, raw: &str, timeout_s: u64) -> (ErrorKind, String) {
    let waited = format!("no answer within {timeout_s} s");
    match timeout_cause(preset, raw) {
        Some((kind @ (ErrorKind::RateLimit | ErrorKind::Server), note)) => {
            (kind, format!("{waited}; {note}"))
        }
        Some((_, note)) => (ErrorKind::Timeout, format!("{waited}; {note}")),
        None => (ErrorKind::Timeout, waited),
    }
}

/// Why a call that ran into wfx's timeout did not answer, when its output
/// says: a rate limit, a server or a connection error the CLI was still
/// retrying (see [`presets::retry_evidence`]). `None`: a plain timeout.
pub fn timeout_cause(preset: Option<Preset>, raw: &str) -> Option<(ErrorKind, String)> {
    match presets::retry_evidence(preset, raw) {
        presets::RetryEvidence::Reported(note) => {
            classify_error(&note).map(|k| (k, one_line(&note)))
        }
        presets::RetryEvidence::Nothing => None,
        presets::RetryEvidence::PlainText => still_retrying(raw),
    }
}

/// How many of the output's last lines are read for a timed-out call's
/// cause: the CLI's retry notices, not the whole conversation.
const TAIL_LINES: usize = 40;

/// The last line among the output's last [`TAIL_LINES`] that shows a rate
/// limit or server error (else a connection error), with its kind. Lines of
/// a stack trace or JSON fragment shorter than 25 characters (`status:
/// 429`) are used only when no longer line names the error.
fn still_retrying(raw: &str) -> Option<(ErrorKind, String)> {
    let clean = presets::strip_ansi(raw);
    let tail: Vec<&str> = clean
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(TAIL_LINES)
        .collect();
    let classified = |min_len: usize, kinds: &[ErrorKind]| {
        tail.iter().find_map(|l| {
            let l = l.trim();
            (l.chars().count() >= min_len)
                .then(|| classify_error(l))
                .flatten()
                .filter(|k| kinds.contains(k))
                .map(|k| (k, format!("it last printed: {}", one_line(l))))
        })
    };
    // A rate limit or server error beats a connection error printed by
    // another of the CLI's requests.
    let api = [ErrorKind::RateLimit, ErrorKind::Server];
    classified(25, &api)
        .or_else(|| classified(0, &api))
        .or_else(|| classified(0, &[ErrorKind::Connection]))
}

/// A failure reason as stored and shown: escape sequences removed, other
/// control characters (except newlines and tabs) replaced.
pub fn clean_reason(s: &str) -> String {
    presets::strip_ansi(s)
        .chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// The last non-empty line of an agent's output, for the one-line reason
/// shown on the terminal and kept in fix-history.json (see [`one_line`]).
fn last_line(raw: &str) -> String {
    let clean = presets::strip_ansi(raw);
    let line = clean
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output");
    one_line(line)
}

/// At most 200 characters of one line, escape sequences removed and other
/// control characters (NUL, bell, a lone ESC) replaced, so an agent
/// printing binary garbage cannot drive the user's terminal.
fn one_line(line: &str) -> String {
    presets::strip_ansi(line)
        .trim()
        .chars()
        .take(200)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// The raw output as text (lossy UTF-8), at most the last 16 MiB.
fn read_output(path: &Path) -> Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > MAX_PARSE_BYTES {
        f.seek(SeekFrom::Start(len - MAX_PARSE_BYTES))
            .map_err(|e| Error::io(path, e))?;
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_line_carries_no_control_characters() {
        let raw = "ok\n\u{1b}[2J\u{1b}]0;pwned\u{7}\u{0}tail \u{fffd}\u{1b}\n\n";
        assert_eq!(last_line(raw), "\u{fffd}tail \u{fffd}\u{fffd}");
        assert_eq!(last_line(""), "no output");
        assert_eq!(last_line(&"x".repeat(500)).chars().count(), 200);
        // The debris measured with a real CLI (issue #17).
        assert_eq!(
            last_line("\u{1b}[91m\u{1b}[1mError: \u{1b}[0mRate limit exceeded\n"),
            "Error: Rate limit exceeded"
        );
        assert_eq!(
            clean_reason("\u{1b}[31mboom\u{1b}[0m\nnext\u{7}"),
            "boom\nnext\u{fffd}"
        );
    }

    #[test]
    fn a_timeout_while_retrying_names_the_error() {
        let gemini = "Attempt 4 failed with status 429. Retrying with backoff... _ApiError: {\"error\":{\"code\":429}}\n  status: 429\n}\n";
        let (kind, note) = still_retrying(gemini).unwrap();
        assert_eq!(kind, ErrorKind::RateLimit);
        assert!(
            note.starts_with("it last printed: Attempt 4 failed with status 429"),
            "{note}"
        );
        let qwen = "Retrying in 60s (attempt 1/10): [API Error: 500 Internal Server Error]\n";
        assert_eq!(still_retrying(qwen).unwrap().0, ErrorKind::Server);
        let codex = "{\"type\":\"error\",\"message\":\"Reconnecting... 2/5 (We\u{2019}re currently experiencing high demand, which may cause temporary errors.)\"}\n";
        assert_eq!(still_retrying(codex).unwrap().0, ErrorKind::Server);
        assert_eq!(still_retrying("thinking about the code\n"), None);
        // Gemini's own request timing out on a server that never answers.
        let hung = "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request\n";
        assert_eq!(still_retrying(hung).unwrap().0, ErrorKind::Connection);
        let (kind, why) = timed_out(Some(Preset::Gemini), hung, 30);
        assert_eq!(kind, ErrorKind::Timeout);
        assert!(
            why.starts_with("no answer within 30 s; it last printed: Attempt 1 failed"),
            "{why}"
        );
        let (kind, why) = timed_out(Some(Preset::Gemini), gemini, 30);
        assert_eq!(kind, ErrorKind::RateLimit, "{why}");
        assert_eq!(
            timed_out(None, "", 5),
            (ErrorKind::Timeout, "no answer within 5 s".into())
        );
        let both = format!("Attempt 2 failed with status 429. Retrying\n{hung}");
        assert_eq!(still_retrying(&both).unwrap().0, ErrorKind::RateLimit);
        // Only the tail counts: an old error long before the end does not.
        let old = format!(
            "HTTP 500 Internal Server Error\n{}",
            "working\n".repeat(TAIL_LINES)
        );
        assert_eq!(still_retrying(&old), None);
    }

    #[test]
    fn classify_table() {
        for (text, want) in [
            ("Error: 429 Too Many Requests", Some(ErrorKind::RateLimit)),
            ("rate_limit_error: slow down", Some(ErrorKind::RateLimit)),
            (
                "Quota exceeded for quota metric",
                Some(ErrorKind::RateLimit),
            ),
            ("RESOURCE_EXHAUSTED", Some(ErrorKind::RateLimit)),
            (
                "API Error: 529 {\"type\":\"overloaded_error\"}",
                Some(ErrorKind::Server),
            ),
            ("HTTP 503 Service Unavailable", Some(ErrorKind::Server)),
            (
                "unexpected status 500 Internal Server Error",
                Some(ErrorKind::Server),
            ),
            (
                "connect ECONNREFUSED 127.0.0.1:443",
                Some(ErrorKind::Connection),
            ),
            ("TypeError: fetch failed", Some(ErrorKind::Connection)),
            (
                "stream disconnected before completion",
                Some(ErrorKind::Connection),
            ),
            ("assertion failed: 500 == 501", None),
            ("line 429 of the file", None),
            (
                "exceeded retry limit, last status: 429",
                Some(ErrorKind::RateLimit),
            ),
            ("all good", None),
            (
                "We\u{2019}re currently experiencing high demand, which may cause temporary errors.",
                Some(ErrorKind::Server),
            ),
            (
                "stream error: temporary errors, please retry",
                Some(ErrorKind::Server),
            ),
        ] {
            assert_eq!(classify_error(text), want, "{text}");
        }
    }

    #[test]
    fn call_file_names() {
        let p = SessionPaths::new(PathBuf::from("/p/.workflow/active/WFS-x"), "WFS-x");
        let a = CallFiles::analysis(&p, 3, 0, "gemini");
        assert!(a.prompt.ends_with(".process/iteration-3-prompt.md"));
        assert!(a.output.ends_with(".process/iteration-3-cli-output.txt"));
        let b = CallFiles::analysis(&p, 3, 1, "my/tool");
        assert!(
            b.output
                .ends_with(".process/iteration-3-my_tool-cli-output.txt")
        );
        assert!(
            CallFiles::fix(&p, 2)
                .output
                .ends_with("iteration-2-fix-cli-output.txt")
        );
        assert!(
            CallFiles::task(&p, "IMPL-001")
                .prompt
                .ends_with(".process/IMPL-001-prompt.md")
        );
    }

    /// Timed-out calls of the real CLIs (fixtures/outputs/agents/): what
    /// they printed last decides the reason.
    #[test]
    fn recorded_timeouts_while_retrying() {
        macro_rules! rec {
            ($name:literal) => {
                include_str!(concat!("../../fixtures/outputs/agents/", $name))
            };
        }
        for (preset, raw, want) in [
            (
                Preset::Claude,
                rec!("claude-429.txt"),
                Some(ErrorKind::RateLimit),
            ),
            (
                Preset::Claude,
                rec!("claude-500.txt"),
                Some(ErrorKind::Server),
            ),
            (
                Preset::Gemini,
                rec!("gemini-429.txt"),
                Some(ErrorKind::RateLimit),
            ),
            (
                Preset::Gemini,
                rec!("gemini-500.txt"),
                Some(ErrorKind::Server),
            ),
            (
                Preset::Qwen,
                rec!("qwen-429.txt"),
                Some(ErrorKind::RateLimit),
            ),
            // Qwen retries a 500 without a word: a plain timeout.
            (Preset::Qwen, rec!("qwen-500.txt"), None),
            (
                Preset::Codex,
                rec!("codex-500.txt"),
                Some(ErrorKind::Server),
            ),
            // A finished analysis holds no retry.
            (Preset::Claude, rec!("claude-analysis.txt"), None),
            (Preset::Opencode, rec!("opencode-analysis.txt"), None),
        ] {
            let got = timeout_cause(Some(preset), raw);
            assert_eq!(got.as_ref().map(|g| g.0), want, "{got:?}");
            if let Some((_, note)) = got {
                assert!(
                    !note.contains('\u{1b}') && note.chars().count() < 240,
                    "{note}"
                );
            }
        }
    }
}
