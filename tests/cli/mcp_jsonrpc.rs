//! `wfx mcp` driven by a client speaking raw JSON-RPC over the child's
//! stdio (one message a line): error codes (a line that is not JSON,
//! params that do not fit, an unknown tool), cancellation, the end of
//! stdin at any point (also halfway through a line or a test run), and
//! `run_tests` arguments kept inside the project.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use crate::common::Env;
use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Client {
    fn start(env: &Env) -> Client {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("wfx"));
        env.apply(&mut cmd);
        env.apply_toolchains(&mut cmd);
        let mut child = cmd
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, v: &Value) {
        self.send_raw(&format!("{v}\n"));
    }

    /// Bytes as they are, a broken line included.
    fn send_raw(&mut self, text: &str) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(text.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// The next message wfx writes, whatever its id.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer");
        serde_json::from_str(&line).unwrap()
    }

    /// The answer to request `id`.
    fn answer(&self, id: i64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Ok(line) = self.lines.recv_timeout(deadline - Instant::now()) {
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
        panic!("no answer to request {id}");
    }

    fn send_initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        );
    }

    fn initialize(&mut self) {
        self.send_initialize();
        let init = self.answer(1);
        assert!(init["result"]["serverInfo"]["name"] == "wfx", "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Close stdin and wait for the exit code.
    fn close(&mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(Instant::now() < deadline, "wfx mcp did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A project whose one test starts a grandchild (`sleep`, so the whole
/// process group of the test run is at stake), writes both pids to the
/// returned file and sleeps two minutes.
fn slow_project(env: &Env) -> PathBuf {
    env.write("pyproject.toml", "[tool.pytest.ini_options]\n");
    let marker = env.tmp.path().join("pid");
    env.write(
        "tests/test_slow.py",
        &format!(
            "import os, subprocess, time\n\ndef test_slow():\n    child = subprocess.Popen(['sleep', '120'])\n    open({:?}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n    time.sleep(120)\n",
            marker.display().to_string()
        ),
    );
    marker
}

/// Start `run_tests` as request `id` and wait until the test runs: the
/// pids of the test and of its grandchild.
fn start_slow_run(c: &mut Client, marker: &Path, id: i64) -> [i32; 2] {
    c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "run_tests", "arguments": {}}}));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(marker).unwrap_or_default();
        let pids: Vec<i32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if let [test, grandchild] = pids[..] {
            return [test, grandchild];
        }
        assert!(Instant::now() < deadline, "the test never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every process of the test run ends (reaped or not: a zombie whose
/// parent is gone counts as ended once init reaps it).
fn assert_ends(pids: [i32; 2], after: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    for pid in pids {
        while unsafe { libc::kill(pid, 0) } == 0 {
            assert!(
                Instant::now() < deadline,
                "a process of the test run (pid {pid}) is still running after {after}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn closing_stdin_ends_the_server_cleanly_at_any_point() {
    let env = Env::new();
    // Before anything was said.
    assert_eq!(Client::start(&env).close(), Some(0));
    // Halfway through the first line.
    let mut c = Client::start(&env);
    c.send_raw(r#"{"jsonrpc": "2.0", "id": 1, "meth"#);
    assert_eq!(c.close(), Some(0));
    // Right after sending initialize, before reading its answer.
    let mut c = Client::start(&env);
    c.send_initialize();
    assert_eq!(c.close(), Some(0));
    // After initialize.
    let mut c = Client::start(&env);
    c.initialize();
    assert_eq!(c.close(), Some(0));
    // Halfway through a request after initialize.
    let mut c = Client::start(&env);
    c.initialize();
    c.send_raw(r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/li"#);
    assert_eq!(c.close(), Some(0));
}

#[test]
fn closing_stdin_during_run_tests_ends_the_test_run_and_exits_0() {
    let env = Env::new();
    let marker = slow_project(&env);
    let mut c = Client::start(&env);
    c.initialize();
    let pids = start_slow_run(&mut c, &marker, 2);
    assert_eq!(c.close(), Some(0));
    assert_ends(pids, "stdin closed");
    // The run was ended when stdin closed (the call's answer says so), not
    // after the two minutes of the test nor after rmcp's wait for answers
    // in flight (which ends with no answer).
    let a = c.answer(2);
    assert_eq!(a["result"]["isError"], true, "{a}");
    let text = a["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("cancelled: the test run was ended"), "{text}");
}

#[test]
fn a_line_that_is_not_json_is_a_parse_error_with_id_null_and_the_server_goes_on() {
    let env = Env::new();
    let mut c = Client::start(&env);
    // Before initialize too.
    c.send_raw("{not json\n");
    let a = c.next();
    assert_eq!(a["error"]["code"], -32700, "{a}");
    assert!(
        a.as_object().unwrap().contains_key("id") && a["id"].is_null(),
        "{a}"
    );
    c.initialize();
    for broken in [
        "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/list\"\n",
        "\u{1}\u{2}\n",
        "tools/list\n",
    ] {
        c.send_raw(broken);
        let a = c.next();
        assert_eq!(a["error"]["code"], -32700, "{broken:?}: {a}");
        assert!(a["id"].is_null(), "{a}");
        assert_eq!(a["jsonrpc"], "2.0");
    }
    // Still serving.
    c.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let a = c.answer(3);
    assert_eq!(a["result"]["tools"].as_array().unwrap().len(), 4, "{a}");
    assert_eq!(c.close(), Some(0));
}

#[test]
fn tools_call_params_that_do_not_fit_are_invalid_params() {
    let env = Env::new();
    let mut c = Client::start(&env);
    c.initialize();
    for (id, params) in [
        (2, json!({"name": 5})),
        (3, json!("run_tests")),
        (4, json!({"arguments": {}})),
        (5, json!({"name": "session_status", "arguments": ["WFS-x"]})),
        (
            6,
            json!({"name": "run_tests", "arguments": "--only-failed"}),
        ),
    ] {
        c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        let a = c.answer(id);
        assert_eq!(a["error"]["code"], -32602, "{params}: {a}");
        let message = a["error"]["message"].as_str().unwrap();
        assert!(message.contains("tools/call"), "{message}");
    }
    // Without params at all.
    c.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"}));
    assert_eq!(c.answer(7)["error"]["code"], -32602);
    // A method wfx does not serve stays "method not found".
    c.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/run"}));
    assert_eq!(c.answer(8)["error"]["code"], -32601);
    assert_eq!(c.close(), Some(0));
}

#[test]
fn an_unknown_tool_is_invalid_params() {
    let env = Env::new();
    let mut c = Client::start(&env);
    c.initialize();
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {}}}));
    let a = c.answer(2);
    assert_eq!(a["error"]["code"], -32602, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool"),
        "{a}"
    );
    assert_eq!(c.close(), Some(0));
}

#[test]
fn run_tests_refuses_paths_outside_the_project() {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    let elsewhere = env.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let pwned = env.tmp.path().join("pwned");
    let evil = format!(
        "def test_x():\n    open({:?}, 'w').write('ran')\n",
        pwned.display().to_string()
    );
    std::fs::write(elsewhere.join("evil_test.py"), &evil).unwrap();
    std::fs::write(
        elsewhere.join("args"),
        elsewhere.join("evil_test.py").display().to_string(),
    )
    .unwrap();
    // A link inside the project that points out of it.
    std::os::unix::fs::symlink(&elsewhere, env.root.join("tests/vendored")).unwrap();
    let mut c = Client::start(&env);
    c.initialize();
    let refused = [
        elsewhere.join("evil_test.py").display().to_string(),
        "../elsewhere/evil_test.py".to_string(),
        "tests/../../elsewhere/evil_test.py".to_string(),
        "--rootdir=..".to_string(),
        "tests/vendored/evil_test.py".to_string(),
        "tests/vendored".to_string(),
        format!("@{}", elsewhere.join("args").display()),
    ];
    for (id, arg) in (3..).zip(refused) {
        c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_tests", "arguments": {"args": ["-q", arg]}}}));
        let a = c.answer(id);
        assert_eq!(a["result"]["isError"], true, "{arg}: {a}");
        let text = a["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("points outside the project"), "{text}");
        assert!(
            text.contains(&format!("{arg:?}")),
            "names the argument: {text}"
        );
    }
    assert!(!pwned.exists(), "a test file outside the project ran");
    // Inside the project is fine, as a relative or an absolute path.
    for (id, arg) in [
        (20, "tests/test_ops.py".to_string()),
        (21, env.root.join("tests").display().to_string()),
    ] {
        c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_tests", "arguments": {"args": [arg]}}}));
        let a = c.answer(id);
        assert_eq!(a["result"]["isError"], false, "{a}");
        assert!(
            a["result"]["structuredContent"]["results"]["total"].as_u64() > Some(0),
            "{a}"
        );
    }
    assert_eq!(c.close(), Some(0));
}

#[test]
fn cancelling_run_tests_ends_the_test_run() {
    let env = Env::new();
    let marker = slow_project(&env);
    let mut c = Client::start(&env);
    c.initialize();
    let pids = start_slow_run(&mut c, &marker, 7);
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "test"}}),
    );
    assert_ends(pids, "the cancellation");
    // The server goes on: the next request is answered, and the
    // cancelled call is not (the spec: a receiver of a cancellation
    // should not answer the request).
    c.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}));
    let a = c.next();
    assert_eq!(a["id"], 8, "only the next request is answered: {a}");
    assert_eq!(a["result"]["tools"].as_array().unwrap().len(), 4, "{a}");
    assert_eq!(c.close(), Some(0));
}
