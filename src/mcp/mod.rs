//! `wfx mcp`: wfx's read-and-test tools for an agent, as a Model Context
//! Protocol server over stdio (the official Rust SDK, `rmcp`).
//!
//! Four tools, each answering with one JSON document (as structured
//! content and as text):
//! - `run_tests`: run the project's tests once, like `wfx test --json`
//!   (the wfx binary is run as a child, so its output never mixes with the
//!   protocol on stdout), and return the parsed results;
//! - `session_status`: `wfx status --json` of a session;
//! - `next_action`: where the session stands and the exact command to
//!   continue;
//! - `latest_failures`: the failing tests of the latest run and the latest
//!   analysis (`.process/iteration-<N>-analysis.md`).
//!
//! Without a `session` argument the tools take the session `wfx status`
//! takes (the one active wfx session, else the most recently updated).
//! Nothing here writes a session: changing one stays with the CLI.
//!
//! Lines from the client pass [`lines`] first, which answers what rmcp
//! would drop or misname (not JSON: -32700; a `tools/call` whose params do
//! not fit: -32602).

pub mod lines;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::session::Workspace;

/// The names of the tools, in the order `tools/list` gives them.
pub const TOOLS: [&str; 4] = [
    "run_tests",
    "session_status",
    "next_action",
    "latest_failures",
];

/// Bytes of an analysis file returned at most.
const MAX_ANALYSIS: usize = 64 * 1024;

#[derive(Clone)]
pub struct WfxServer {
    root: PathBuf,
    /// The wfx binary run for `run_tests`.
    exe: PathBuf,
    /// The tool calls running now.
    running: Running,
}

fn schema(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => unreachable!("tool schemas are objects"),
    }
}

fn session_arg() -> Value {
    json!({
        "type": "string",
        "description": "Session id (WFS-…). Default: the one active wfx session, else the most recently updated one."
    })
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "run_tests",
            "Run the project's tests once (the command wfx detects or .workflow/wfx.json names) and return the parsed results: counts, pass_rate, and each failure with its test id, file, line and error. Needs no session.",
            schema(json!({
                "type": "object",
                "properties": {
                    "only_failed": {"type": "boolean", "description": "Re-run only the failures of the previous run_tests / `wfx test`."},
                    "args": {"type": "array", "items": {"type": "string"}, "description": "Extra arguments for the test command."}
                }
            })),
        ),
        Tool::new(
            "session_status",
            "A wfx session's status, as `wfx status --json` prints it: phases, tasks, each test run's pass rate and strategy, stuck tests, cost, outcome and the next command.",
            schema(json!({"type": "object", "properties": {"session": session_arg()}})),
        ),
        Tool::new(
            "next_action",
            "What a wfx session does next and the exact command that continues it (with why), plus its outcome so far.",
            schema(json!({"type": "object", "properties": {"session": session_arg()}})),
        ),
        Tool::new(
            "latest_failures",
            "The failing tests of a wfx session's latest test run (test id, file, line, error, message) and the latest failure analysis. Without any session: the failures of the last run_tests / `wfx test`.",
            schema(json!({"type": "object", "properties": {"session": session_arg()}})),
        ),
    ]
}

/// A tool's failure the agent should read (not a protocol error).
fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn arg_str<'a>(
    args: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(format!("`{key}` must be a string, got {other}")),
    }
}

impl WfxServer {
    pub fn new(root: PathBuf, exe: PathBuf) -> Self {
        WfxServer {
            root,
            exe,
            running: Running::default(),
        }
    }

    fn ws(&self) -> Workspace {
        Workspace::new(self.root.clone())
    }

    /// Run one tool; blocking (file reads, a child process).
    pub fn call(&self, name: &str, args: &serde_json::Map<String, Value>) -> CallToolResult {
        self.call_with(name, args, &Cancel::default())
    }

    /// [`WfxServer::call`], ended early when `cancel` is cancelled.
    pub fn call_with(
        &self,
        name: &str,
        args: &serde_json::Map<String, Value>,
        cancel: &Cancel,
    ) -> CallToolResult {
        let result = match name {
            "run_tests" => self.run_tests(args, cancel),
            "session_status" => arg_str(args, "session").and_then(|s| {
                crate::commands::status_document(&self.ws(), s).map_err(|e| e.to_string())
            }),
            "next_action" => arg_str(args, "session").and_then(|s| self.next_action(s)),
            "latest_failures" => arg_str(args, "session").and_then(|s| self.latest_failures(s)),
            other => Err(format!(
                "no tool named `{other}` (tools: {})",
                TOOLS.join(", ")
            )),
        };
        match result {
            Ok(v) => CallToolResult::structured(v),
            Err(message) => tool_error(message),
        }
    }

    fn run_tests(
        &self,
        args: &serde_json::Map<String, Value>,
        cancel: &Cancel,
    ) -> Result<Value, String> {
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.arg("-C")
            .arg(&self.root)
            .args(["--json", "--no-progress", "test"])
            .stdin(std::process::Stdio::null());
        // Its own process group, so a cancellation ends the test run with it.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        if args.get("only_failed").and_then(Value::as_bool) == Some(true) {
            cmd.arg("--only-failed");
        }
        match args.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(extra)) => {
                let extra: Vec<&str> = extra
                    .iter()
                    .map(|v| v.as_str().ok_or("`args` must be an array of strings"))
                    .collect::<Result<_, _>>()?;
                for a in &extra {
                    confined(&self.root, a)?;
                }
                if !extra.is_empty() {
                    cmd.arg("--").args(extra);
                }
            }
            Some(_) => return Err("`args` must be an array of strings".into()),
        }
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // `wfx test` runs the project's tests: until they have ended.
        let _child = crate::fsx::ChildRuns::start();
        let child = cmd
            .spawn()
            .map_err(|e| format!("could not run {}: {e}", self.exe.display()))?;
        cancel.set_pgid(child.id() as i32);
        let out = child
            .wait_with_output()
            .map_err(|e| format!("could not run {}: {e}", self.exe.display()))?;
        if cancel.is_cancelled() {
            return Err("cancelled: the test run was ended".into());
        }
        let doc: Value = serde_json::from_slice(&out.stdout).map_err(|_| {
            format!(
                "`wfx test` printed no JSON (exit {}): {}",
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
        if let Some(err) = doc.get("error") {
            return Err(err["message"]
                .as_str()
                .unwrap_or("wfx test failed")
                .to_string());
        }
        Ok(json!({
            "exit_code": out.status.code(),
            "results": doc,
        }))
    }

    fn next_action(&self, session: Option<&str>) -> Result<Value, String> {
        let doc =
            crate::commands::status_document(&self.ws(), session).map_err(|e| e.to_string())?;
        Ok(json!({
            "session_id": doc["session_id"],
            "status": doc["status"],
            "location": doc["location"],
            "outcome": doc["outcome"],
            "next_action": doc["next_action"],
            "next_command": doc["next_command"],
            "next_step": doc["next_step"],
        }))
    }

    fn latest_failures(&self, session: Option<&str>) -> Result<Value, String> {
        let ws = self.ws();
        let picked = match ws.pick_for_view(session) {
            Ok(s) => Some(s),
            // No session at all: the last `wfx test` run, if any.
            Err(_) if session.is_none() => None,
            Err(e) => return Err(e.to_string()),
        };
        let Some(sref) = picked else {
            let path = ws.cache_dir().join("test-results.json");
            let results: crate::artifacts::TestResults =
                crate::session::store::read_json_opt(&path, &ws.rel(&path))
                    .map_err(|e| e.to_string())?
                    .ok_or("no wfx session and no `wfx test` run yet: call run_tests first")?;
            return Ok(json!({
                "session_id": null,
                "results_file": ws.rel(&path),
                "pass_rate": results.pass_rate,
                "failures": results.failures,
                "analysis": null,
            }));
        };
        let data = crate::report::load(&ws, &sref).map_err(|e| e.to_string())?;
        let analysis = latest_analysis(&sref.paths.process_dir())
            .map(|(n, path, text)| json!({"iteration": n, "file": ws.rel(&path), "text": text}));
        Ok(json!({
            "session_id": sref.id(),
            "results_file": ws.rel(&sref.paths.test_results()),
            "pass_rate": data.results.as_ref().map(|r| r.pass_rate),
            "failures": data.results.as_ref().map(|r| &r.failures),
            "analysis": analysis,
        }))
    }
}

/// A cancellation of one tool call: ends the process group of the test run
/// it started (SIGTERM: `wfx test` ends its runner's group and exits).
#[derive(Clone, Default)]
pub struct Cancel(Arc<std::sync::Mutex<(bool, Option<i32>)>>);

impl Cancel {
    fn set_pgid(&self, pgid: i32) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.1 = Some(pgid);
        if g.0 {
            crate::process::signal_group(pgid, libc::SIGTERM);
        }
    }

    pub fn cancel(&self) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0 = true;
        if let Some(pgid) = g.1 {
            crate::process::signal_group(pgid, libc::SIGTERM);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

/// The tool calls running now, so that a client who leaves (stdin ends)
/// leaves no test run behind.
#[derive(Clone, Default)]
pub struct Running(Arc<std::sync::Mutex<Vec<Cancel>>>);

impl Running {
    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<Cancel>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start(&self) -> Cancel {
        let cancel = Cancel::default();
        self.calls().push(cancel.clone());
        cancel
    }

    fn end(&self, cancel: &Cancel) {
        self.calls().retain(|c| !Arc::ptr_eq(&c.0, &cancel.0));
    }

    /// Cancel every call running now.
    pub fn cancel_all(&self) {
        for c in self.calls().iter() {
            c.cancel();
        }
    }
}

/// `run_tests` arguments stay inside the project: an argument naming a
/// path (absolute, or climbing out with `..`, also after `--opt=` or as
/// pytest's `@argsfile`) outside the project root is refused, so an agent
/// cannot point the test runner at files elsewhere on the machine. Symlinks
/// are followed as far as the path exists, so a link inside the project
/// that points out of it is outside too.
pub fn confined(root: &Path, arg: &str) -> Result<(), String> {
    let value = match arg.split_once('=') {
        Some((flag, v)) if flag.starts_with('-') => v,
        _ => arg,
    };
    let value = value.strip_prefix('@').unwrap_or(value);
    if !inside(root, &root.join(value)) {
        return Err(format!(
            "`args`: {arg:?} points outside the project ({}); run_tests only runs the project's own tests",
            root.display()
        ));
    }
    Ok(())
}

/// Whether `path` (absolute) stays under `root` (canonical): `..` is
/// applied lexically, then the longest existing prefix is resolved with
/// its symlinks and the rest appended.
fn inside(root: &Path, path: &Path) -> bool {
    use std::path::Component;
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                // Climbing through a symlink is resolved below; lexically
                // `..` above the filesystem root stays there.
                let resolved = lexical.canonicalize().unwrap_or(lexical.clone());
                lexical = resolved.parent().map(Path::to_path_buf).unwrap_or(resolved);
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    let resolved = loop {
        match existing.canonicalize() {
            Ok(p) => break p,
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    existing = parent;
                }
                _ => break existing.to_path_buf(),
            },
        }
    };
    let full = rest.iter().rev().fold(resolved, |p, n| p.join(n));
    full.starts_with(root)
}

/// The analysis of the highest iteration that has one, bounded.
fn latest_analysis(process_dir: &Path) -> Option<(u32, PathBuf, String)> {
    let latest = std::fs::read_dir(process_dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name
                .strip_prefix("iteration-")?
                .strip_suffix("-analysis.md")?
                .parse::<u32>()
                .ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)?;
    let bytes = std::fs::read(&latest.1).ok()?;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_ANALYSIS)]).into_owned();
    if bytes.len() > MAX_ANALYSIS {
        text.push_str("\n… (cut; read the file for the rest)");
    }
    Some((latest.0, latest.1, text))
}

impl ServerHandler for WfxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wfx", crate::VERSION))
            .with_instructions(
                "wfx runs a project's test-fix workflow. run_tests runs the tests once; \
                 session_status, next_action and latest_failures read a wfx session. \
                 To change a session, run the command next_action names.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        // An unknown tool is invalid params (JSON-RPC -32602), as the MCP
        // specification says, not a tool's failure.
        if !TOOLS.contains(&name.as_str()) {
            return Err(ErrorData::invalid_params(
                format!("no tool named `{name}` (tools: {})", TOOLS.join(", ")),
                None,
            ));
        }
        let server = self.clone();
        let args = request.arguments.unwrap_or_default();
        // `notifications/cancelled` cancels the request's token: the test
        // run (its whole process group) is ended, not left running.
        let cancel = self.running.start();
        let flag = cancel.clone();
        let ct = context.ct.clone();
        let watcher = tokio::spawn(async move {
            ct.cancelled().await;
            flag.cancel();
        });
        let running = cancel.clone();
        let result = tokio::task::spawn_blocking(move || server.call_with(&name, &args, &running))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None));
        watcher.abort();
        self.running.end(&cancel);
        let result = result?;
        Ok(result.into())
    }
}

/// Serve on stdin/stdout until the client closes the connection. When
/// stdin ends (at any point: before `initialize`, during a `run_tests`)
/// the running calls are cancelled and wfx exits 0.
pub fn serve_stdio(root: PathBuf) -> crate::Result<()> {
    let exe = std::env::current_exe().map_err(|e| crate::Error::io("wfx", e))?;
    let server = WfxServer::new(root, exe);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Internal(format!("tokio runtime: {e}")))?;
    rt.block_on(async move {
        use rmcp::ServiceExt;
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let (out, lines) = tokio::sync::mpsc::channel(64);
        let writer = tokio::spawn(lines::write_lines(stdout, lines));
        let running = server.running.clone();
        let transport = lines::LineTransport::new(stdin, out, move || running.cancel_all());
        let served = match server.serve(transport).await {
            Ok(service) => service
                .waiting()
                .await
                .map(drop)
                .map_err(|e| crate::Error::Internal(format!("MCP server: {e}"))),
            // The client left before (or while) initializing: a clean end.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(crate::Error::Internal(format!("MCP initialize: {e}"))),
        };
        // The transport is gone with the service: the writer drains what
        // is left and ends.
        let _ = writer.await;
        served
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_listed_with_an_object_schema() {
        let names: Vec<String> = tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, TOOLS);
        for t in tools() {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
        }
    }

    #[test]
    fn bad_arguments_are_tool_errors_naming_the_argument() {
        let dir = tempfile::tempdir().unwrap();
        let s = WfxServer::new(dir.path().to_path_buf(), PathBuf::from("/nonexistent/wfx"));
        let args = json!({"session": 7}).as_object().cloned().unwrap();
        let r = s.call("session_status", &args);
        assert_eq!(r.is_error, Some(true));
        assert!(format!("{:?}", r.content).contains("`session` must be a string"));
        let r = s.call("nope", &serde_json::Map::new());
        assert_eq!(r.is_error, Some(true));
        let r = s.call("latest_failures", &serde_json::Map::new());
        assert_eq!(r.is_error, Some(true));
        assert!(format!("{:?}", r.content).contains("call run_tests first"));
    }

    #[test]
    fn run_tests_args_are_confined_to_the_project() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(root.join("tests/sub")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::fs::write(base.join("elsewhere/evil_test.py"), "").unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("tests/out")).unwrap();
        std::os::unix::fs::symlink(root.join("tests/sub"), root.join("tests/in")).unwrap();
        let outside_abs = base.join("elsewhere/evil_test.py").display().to_string();
        let inside_abs = root.join("tests/sub").display().to_string();
        for (arg, ok) in [
            ("tests/test_ops.py", true),
            ("tests/test_ops.py::test_add", true),
            ("-x", true),
            ("-k", true),
            ("add and not sub", true),
            ("tests/sub/../test_new.py", true),
            ("tests/in/test_new.py", true),
            (inside_abs.as_str(), true),
            ("--rootdir=tests", true),
            ("..", false),
            ("../elsewhere/evil_test.py", false),
            ("tests/../../elsewhere", false),
            ("--rootdir=..", false),
            ("--confcutdir=/", false),
            (outside_abs.as_str(), false),
            ("/etc/passwd", false),
            ("/no/such/dir/test_x.py", false),
            ("tests/out/evil_test.py", false),
            ("tests/out/not_there_yet.py", false),
            ("tests/out", false),
            ("tests/in/../../../elsewhere", false),
            ("tests/out/../project/tests", true),
            ("@/etc/args", false),
            ("@../args", false),
            ("@tests/args", true),
        ] {
            assert_eq!(confined(&root, arg).is_ok(), ok, "{arg}");
        }
        let message = confined(&root, "../x").unwrap_err();
        assert!(
            message.contains("`args`: \"../x\" points outside the project"),
            "{message}"
        );
    }
}
