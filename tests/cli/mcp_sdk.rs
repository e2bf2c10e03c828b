//! `wfx mcp` driven by the official MCP TypeScript SDK
//! (`@modelcontextprotocol/sdk` from npm, pinned; tests/mcp_sdk/install.sh):
//! tests/mcp_sdk/client.mjs connects as a host would, calls each tool,
//! sends what the SDK lets a client send wrong (an unknown tool, params
//! that do not fit, a line that is not JSON), aborts a `run_tests` (the
//! SDK sends `notifications/cancelled`) and closes at three points. This
//! file judges what it recorded.

use std::process::Command;

use crate::common::{Env, npm_tool};
use serde_json::Value;

#[test]
fn the_official_typescript_sdk_client_gets_what_the_spec_says() {
    let Some(sdk) = npm_tool("mcp_sdk") else {
        return;
    };
    let env = Env::new();
    env.write("pyproject.toml", "[tool.pytest.ini_options]\n");
    let flag = env.tmp.path().join("slow");
    let pid_file = env.tmp.path().join("pid");
    env.write(
        "tests/test_calc.py",
        &format!(
            "import os, time\n\ndef test_add():\n    assert 1 + 1 == 3\n\n\
             def test_slow():\n    if os.path.exists({flag:?}):\n        \
             open({pid:?}, 'w').write(str(os.getpid()))\n        time.sleep(120)\n",
            flag = flag.display().to_string(),
            pid = pid_file.display().to_string(),
        ),
    );
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_sdk/client.mjs");
    let mut cmd = Command::new("node");
    env.apply(&mut cmd);
    env.apply_toolchains(&mut cmd);
    let out = cmd
        .arg(client)
        .arg(&sdk)
        .arg(assert_cmd::cargo::cargo_bin("wfx"))
        .arg(&env.root)
        .arg(&flag)
        .arg(&pid_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client.mjs failed: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["sdk_version"], "1.32.2");
    assert_eq!(r["server"]["name"], "wfx");
    assert_eq!(r["tools"], serde_json::json!(wfx::mcp::TOOLS), "{r}");

    // Each tool, before and after a test run.
    let calls = &r["calls"];
    let before = &calls["latest_failures"]["value"];
    assert_eq!(before["isError"], true, "{before}");
    assert!(
        before["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("call run_tests first")
    );
    let run = &calls["run_tests"]["value"];
    assert_eq!(run["isError"], false, "{run}");
    let results = &run["structuredContent"]["results"];
    assert_eq!(
        (results["total"].as_u64(), results["failed"].as_u64()),
        (Some(2), Some(1)),
        "{run}"
    );
    for tool in ["session_status", "next_action"] {
        let v = &calls[tool]["value"];
        assert_eq!(v["isError"], true, "{tool}: {v}");
        assert!(
            v["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("no wfx session"),
            "{v}"
        );
    }
    let after = &calls["latest_failures_after_run"]["value"]["structuredContent"];
    assert_eq!(
        after["failures"][0]["test"], "tests/test_calc.py::test_add",
        "{after}"
    );

    // Errors as the SDK surfaces them: McpError with the JSON-RPC code.
    assert_eq!(r["unknown_tool"]["code"], -32602, "{}", r["unknown_tool"]);
    assert!(
        r["unknown_tool"]["error"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
    let bad = r["bad_params"].as_array().unwrap();
    assert_eq!(bad.len(), 3);
    for b in bad {
        assert_eq!(b["code"], -32602, "{b}");
    }

    // A line that is not JSON: -32700 with id null, as JSON-RPC 2.0 says.
    // The SDK reports that answer to `onerror` (its schema wants a string
    // or number id) and the connection goes on serving.
    let m = &r["malformed_json"];
    let raw: Value = serde_json::from_str(m["raw_answer"].as_str().unwrap()).unwrap();
    assert_eq!(raw["error"]["code"], -32700, "{raw}");
    assert!(raw["id"].is_null(), "{raw}");
    assert_eq!(m["tools_after"], 4, "{m}");

    // An aborted run_tests: the SDK rejects the call itself and sends
    // notifications/cancelled; wfx ends the test run and goes on.
    let c = &r["cancel"];
    assert_eq!(c["test_run_ended"], true, "{c}");
    assert_eq!(c["call"]["ok"], false, "{c}");
    assert_eq!(c["tools_after"], 4, "{c}");

    // Closing at any point: exit 0, and no test run left behind.
    for point in ["close_before_initialize", "close_after_initialize"] {
        assert_eq!(
            r[point],
            serde_json::json!({"code": 0, "signal": null}),
            "{point}"
        );
    }
    let d = &r["close_during_run_tests"];
    assert_eq!(
        d["exit"],
        serde_json::json!({"code": 0, "signal": null}),
        "{d}"
    );
    assert_eq!(d["test_run_ended"], true, "{d}");
}
