//! `wfx mcp` driven by a client speaking raw JSON-RPC over the child's
//! stdio (one message a line): error codes, cancellation, the end of
//! stdin at any point, and `run_tests` arguments kept inside the project.

use std::io::{BufRead, BufReader, Write};
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
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{v}").unwrap();
        w.flush().unwrap();
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

    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        );
        let init = self.answer(1);
        assert!(init["result"]["serverInfo"]["name"] == "wfx", "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Close stdin and wait for the exit code.
    fn close(mut self) -> Option<i32> {
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

#[test]
fn closing_stdin_ends_the_server_cleanly_at_any_point() {
    let env = Env::new();
    // Before anything was said.
    assert_eq!(Client::start(&env).close(), Some(0));
    // After initialize.
    let mut c = Client::start(&env);
    c.initialize();
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
    let outside = env.tmp.path().join("evil_test.py");
    std::fs::write(&outside, "def test_x():\n    open('/tmp/pwned', 'w')\n").unwrap();
    let mut c = Client::start(&env);
    c.initialize();
    for (id, arg) in [
        (3, outside.display().to_string()),
        (4, "../evil_test.py".to_string()),
        (5, "--rootdir=..".to_string()),
    ] {
        c.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "run_tests", "arguments": {"args": [arg]}}}));
        let a = c.answer(id);
        assert_eq!(a["result"]["isError"], true, "{a}");
        let text = a["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("points outside the project"), "{text}");
    }
    // Inside the project is fine.
    c.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "run_tests", "arguments": {"args": ["tests/test_ops.py"]}}}));
    let a = c.answer(6);
    assert_ne!(a["result"]["isError"], true, "{a}");
    assert_eq!(c.close(), Some(0));
}

#[test]
fn cancelling_run_tests_ends_the_test_run() {
    let env = Env::new();
    env.write("pyproject.toml", "[tool.pytest.ini_options]\n");
    let marker = env.tmp.path().join("pid");
    env.write(
        "tests/test_slow.py",
        &format!(
            "import os, time\n\ndef test_slow():\n    open({:?}, 'w').write(str(os.getpid()))\n    time.sleep(120)\n",
            marker.display().to_string()
        ),
    );
    let mut c = Client::start(&env);
    c.initialize();
    c.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "run_tests", "arguments": {}}}));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() || std::fs::read_to_string(&marker).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the test never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    c.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "test"}}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while unsafe { libc::kill(pid, 0) } == 0 {
        assert!(
            Instant::now() < deadline,
            "the test run (pid {pid}) is still running after the cancellation"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(c.close(), Some(0));
}
