//! The line layer between stdio and rmcp. MCP over stdio is one JSON-RPC
//! message a line; rmcp drops a line that is not JSON without an answer
//! and answers a request whose params do not fit (a `tools/call` with
//! `"name": 5`) as an unknown method (-32601). JSON-RPC 2.0 asks for a
//! parse error (-32700, `id` null) and invalid params (-32602), so wfx
//! reads the lines itself: [`screen`] decides what becomes of each one,
//! [`LineTransport`] hands rmcp only what it can serve, and one writer
//! task ([`write_lines`]) puts rmcp's messages and wfx's own answers on
//! stdout a whole line at a time.

use std::borrow::Cow;
use std::io;

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams,
    JsonRpcMessage, PaginatedRequestParams,
};
use rmcp::service::{RoleServer, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// JSON-RPC 2.0: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: JSON, but not a request, notification or response.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC 2.0: a known method whose params do not fit it.
pub const INVALID_PARAMS: i64 = -32602;

/// A longer line is refused without being kept (rmcp's own limit).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The requests wfx serves. A request for one of them whose params rmcp
/// cannot read is invalid params; other methods rmcp answers itself.
const SERVED: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// What becomes of one line the client sent.
#[derive(Debug)]
pub enum Screened {
    /// Nothing to say: a blank line, or a notification that does not fit
    /// (JSON-RPC never answers a notification).
    Skip,
    /// A message for rmcp.
    Pass(Box<ClientJsonRpcMessage>),
    /// wfx's own error answer; rmcp never sees the line.
    Answer(Value),
}

/// A JSON-RPC 2.0 error response.
pub fn error_response(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// The request id to answer with: a string or an integer, else null
/// (JSON-RPC 2.0: null when the id could not be read).
fn answer_id(msg: &serde_json::Map<String, Value>) -> Value {
    match msg.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(id @ Value::Number(n)) if n.is_i64() || n.is_u64() => id.clone(),
        _ => Value::Null,
    }
}

/// Why `params` do not fit `method` (one of [`SERVED`]), in serde's words.
fn params_problem(method: &str, params: Option<&Value>) -> String {
    let Some(params) = params.cloned() else {
        return format!("Invalid params for {method}: no params");
    };
    let problem = match method {
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "tools/list" => serde_json::from_value::<Option<PaginatedRequestParams>>(params).err(),
        _ => None,
    };
    match problem {
        Some(e) => format!("Invalid params for {method}: {e}"),
        None => format!("Invalid params for {method}"),
    }
}

/// Decide what becomes of one line (without its `\n`).
pub fn screen(line: &[u8]) -> Screened {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Screened::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Screened::Answer(error_response(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: {e}"),
            ));
        }
    };
    let Value::Object(msg) = &value else {
        return Screened::Answer(error_response(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (MCP has no batches)",
        ));
    };
    let id = answer_id(msg);
    let is_notification = msg.contains_key("method") && !msg.contains_key("id");
    // A well-formed request for a method wfx serves, whatever its params.
    let served = (msg.get("jsonrpc") == Some(&json!("2.0")) && !id.is_null())
        .then(|| msg.get("method").and_then(Value::as_str))
        .flatten()
        .filter(|m| SERVED.contains(m));
    let invalid_params = |method: &str| {
        Screened::Answer(error_response(
            id.clone(),
            INVALID_PARAMS,
            params_problem(method, msg.get("params")),
        ))
    };
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(JsonRpcMessage::Request(r)) => match (&r.request, served) {
            // rmcp took it for a method of its own: the params did not fit.
            (ClientRequest::CustomRequest(_), Some(method)) => invalid_params(method),
            _ => Screened::Pass(Box::new(JsonRpcMessage::Request(r))),
        },
        Ok(m) => Screened::Pass(Box::new(m)),
        Err(_) if is_notification => Screened::Skip,
        Err(e) => match served {
            Some(method) => invalid_params(method),
            None => Screened::Answer(error_response(
                id.clone(),
                INVALID_REQUEST,
                format!("Invalid Request: {e}"),
            )),
        },
    }
}

/// One line written to stdout.
fn encode(v: &impl serde::Serialize) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(v)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Write each line the channel gives, flushed, until the channel closes or
/// stdout fails (then the senders see it closed).
pub async fn write_lines<W: AsyncWrite + Unpin>(mut out: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
            break;
        }
    }
}

enum Read {
    Line,
    Oversized,
    End,
}

/// rmcp's transport over a line reader and the writer task's channel.
/// Every await in [`Transport::receive`] is cancel-safe (rmcp polls it in a
/// `select!`): a partial line stays in `line`, an answer in `answer`.
pub struct LineTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
    /// wfx's own answer, waiting for room in the channel.
    answer: Option<Vec<u8>>,
    out: mpsc::Sender<Vec<u8>>,
    /// Run once when the client is gone (the end of stdin, or of stdout).
    on_end: Option<Box<dyn FnOnce() + Send>>,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    pub fn new(
        input: R,
        out: mpsc::Sender<Vec<u8>>,
        on_end: impl FnOnce() + Send + 'static,
    ) -> Self {
        LineTransport {
            reader: BufReader::new(input),
            line: Vec::new(),
            discarding: false,
            answer: None,
            out,
            on_end: Some(Box::new(on_end)),
        }
    }

    /// Read up to the next `\n` into `line`, never keeping more than
    /// [`MAX_LINE`] bytes. At the end of input a last line without `\n`
    /// still counts.
    async fn read_line(&mut self) -> Read {
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Read::End,
            };
            if chunk.is_empty() {
                if !self.line.is_empty() {
                    return Read::Line;
                }
                return Read::End;
            }
            let (take, whole) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !self.discarding {
                if self.line.len() + take > MAX_LINE {
                    self.discarding = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(&chunk[..take]);
                }
            }
            self.reader.consume(take);
            if whole {
                return if std::mem::take(&mut self.discarding) {
                    Read::Oversized
                } else {
                    Read::Line
                };
            }
        }
    }

    fn end(&mut self) -> Option<ClientJsonRpcMessage> {
        if let Some(f) = self.on_end.take() {
            f();
        }
        None
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "wfx stdio lines".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        let line = encode(&item);
        async move {
            let line = line.map_err(io::Error::other)?;
            out.send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.answer.is_some() {
                let Ok(permit) = self.out.reserve().await else {
                    return self.end();
                };
                permit.send(self.answer.take().unwrap_or_default());
            }
            let screened = match self.read_line().await {
                Read::End => return self.end(),
                Read::Oversized => Screened::Answer(error_response(
                    Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "Invalid Request: a message longer than {} MiB",
                        MAX_LINE >> 20
                    ),
                )),
                Read::Line => {
                    let line = std::mem::take(&mut self.line);
                    let text = line.strip_suffix(b"\n").unwrap_or(&line);
                    screen(text.strip_suffix(b"\r").unwrap_or(text))
                }
            };
            match screened {
                Screened::Skip => {}
                Screened::Pass(m) => return Some(*m),
                Screened::Answer(v) => self.answer = encode(&v).ok(),
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match screen(line.as_bytes()) {
            Screened::Answer(v) => v,
            other => panic!("{line}: no answer but {other:?}"),
        }
    }

    fn passes(line: &str) -> bool {
        matches!(screen(line.as_bytes()), Screened::Pass(_))
    }

    #[test]
    fn each_line_is_answered_as_json_rpc_says() {
        // (line, code, id of the answer)
        let cases: &[(&str, i64, Value)] = &[
            ("{bad json", PARSE_ERROR, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call""#,
                PARSE_ERROR,
                Value::Null,
            ),
            ("\u{fffd}\u{0}", PARSE_ERROR, Value::Null),
            ("[1,2]", INVALID_REQUEST, Value::Null),
            ("7", INVALID_REQUEST, Value::Null),
            (r#"{"id":9}"#, INVALID_REQUEST, json!(9)),
            (
                r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#,
                INVALID_REQUEST,
                json!("a"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#,
                INVALID_PARAMS,
                json!(2),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}"#,
                INVALID_PARAMS,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#,
                INVALID_PARAMS,
                json!(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"run_tests","arguments":[1]}}"#,
                INVALID_PARAMS,
                json!("five"),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":5}"#,
                INVALID_PARAMS,
                json!(6),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}"#,
                INVALID_PARAMS,
                json!(7),
            ),
        ];
        for (line, code, id) in cases {
            let a = answer(line);
            assert_eq!(a["jsonrpc"], "2.0", "{line}: {a}");
            assert_eq!(a["error"]["code"], *code, "{line}: {a}");
            assert_eq!(&a["id"], id, "{line}: {a}");
            assert!(a.as_object().unwrap().contains_key("id"), "{line}: {a}");
        }
        let a = answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#);
        let message = a["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("tools/call") && message.contains("integer `5`"),
            "{message}"
        );
    }

    #[test]
    fn what_rmcp_serves_goes_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_tests"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"resources/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}",
        ] {
            assert!(passes(line), "{line}");
        }
    }

    #[test]
    fn blank_lines_and_unfit_notifications_get_no_answer() {
        for line in [
            "",
            "  \t",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
            r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        ] {
            assert!(matches!(screen(line.as_bytes()), Screened::Skip), "{line}");
        }
    }

    /// The transport over an in-memory pipe: the messages rmcp gets, and
    /// the lines wfx answered itself.
    async fn run(input: Vec<u8>) -> (Vec<ClientJsonRpcMessage>, Vec<Value>, bool) {
        let (tx, mut rx) = mpsc::channel(64);
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ended.clone();
        let mut t = LineTransport::new(std::io::Cursor::new(input), tx, move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst)
        });
        let mut got = Vec::new();
        while let Some(m) = t.receive().await {
            got.push(m);
        }
        drop(t);
        let mut answers = Vec::new();
        while let Some(line) = rx.recv().await {
            assert_eq!(line.last(), Some(&b'\n'));
            answers.push(serde_json::from_slice(&line).unwrap());
        }
        (
            got,
            answers,
            ended.load(std::sync::atomic::Ordering::SeqCst),
        )
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_transport_answers_bad_lines_and_passes_the_rest_in_order() {
        let input = b"{bad\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}";
        let (got, answers, ended) = block_on(run(input.to_vec()));
        let ids: Vec<String> = got
            .iter()
            .map(|m| match m {
                JsonRpcMessage::Request(r) => r.id.to_string(),
                _ => panic!("{m:?}"),
            })
            .collect();
        // The last line has no `\n`: it still counts.
        assert_eq!(ids, ["1", "3"]);
        let codes: Vec<(Value, Value)> = answers
            .iter()
            .map(|a| (a["id"].clone(), a["error"]["code"].clone()))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, json!(PARSE_ERROR)),
                (json!(2), json!(INVALID_PARAMS))
            ]
        );
        assert!(ended, "the end of input is told");
    }

    #[test]
    fn an_oversized_line_is_refused_without_being_kept_and_reading_goes_on() {
        let mut input = vec![b' '; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        let (got, answers, _) = block_on(run(input));
        assert_eq!(got.len(), 1);
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0]["error"]["code"], INVALID_REQUEST);
        assert!(answers[0]["id"].is_null());
    }
}
