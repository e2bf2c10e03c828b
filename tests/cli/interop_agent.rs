//! wfx inside the agent. `wfx install claude` writes Claude Code slash
//! commands without ever overwriting a person's file silently. `wfx mcp`
//! is driven by a real MCP client: the official Rust SDK's client
//! (`rmcp`), which starts `wfx mcp` as a child process and speaks the
//! protocol over its stdio, the way Claude Code and other MCP hosts do.
//! Initialize, list the tools, call each on the py-calc fixture project:
//! before any session, after `wfx test`, and on a session paused in manual
//! fix mode with a real analysis.

use crate::common;

use common::Env;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn project() -> Env {
    let env = Env::new();
    env.copy_fixture_project("py-calc");
    env.git_init_commit();
    env
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `wfx mcp` in the project, hermetic, with python on PATH.
async fn connect(env: &Env) -> RunningService<RoleClient, ()> {
    let mut std_cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("wfx"));
    env.apply(&mut std_cmd);
    env.apply_toolchains(&mut std_cmd);
    std_cmd.arg("mcp");
    let transport = TokioChildProcess::new(tokio::process::Command::from(std_cmd)).unwrap();
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_string());
    if let Value::Object(m) = args {
        params = params.with_arguments(m);
    }
    client.call_tool(params).await.expect("tools/call")
}

/// The structured result of a successful call, checked against its text.
fn ok(r: &CallToolResult) -> Value {
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let v = r.structured_content.clone().expect("structured content");
    let text = r.content[0].as_text().expect("text content").text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    v
}

fn error_text(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true), "{r:?}");
    r.content[0].as_text().unwrap().text.clone()
}

#[test]
fn an_mcp_client_initializes_lists_and_calls_every_tool() {
    let env = project();
    runtime().block_on(async {
        let client = connect(&env).await;
        let info = client.peer_info().expect("server info");
        assert_eq!(
            info.server_info.as_ref().map(|s| s.name.as_str()),
            Some("wfx")
        );
        assert!(info.capabilities.tools.is_some());

        let tools = client.list_tools(None).await.unwrap().tools;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, wfx::mcp::TOOLS);

        // No session, no run yet: the agent is told what to do.
        let r = call(&client, "latest_failures", json!({})).await;
        assert!(error_text(&r).contains("call run_tests first"));
        let r = call(&client, "session_status", json!({})).await;
        assert!(error_text(&r).contains("wfx test-fix-gen"));
        let r = call(&client, "next_action", json!({"session": "../etc"})).await;
        assert!(error_text(&r).contains("invalid session id"));

        // run_tests: the parsed results of the real pytest run.
        let v = ok(&call(&client, "run_tests", json!({})).await);
        assert_eq!(v["exit_code"], 1);
        let results = &v["results"];
        assert_eq!(
            (&results["framework"], &results["total"], &results["failed"]),
            (&json!("pytest"), &json!(12), &json!(2))
        );
        assert_eq!(results["pass_rate"], 81.8);
        let failing: Vec<&str> = results["failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["test"].as_str().unwrap())
            .collect();
        assert_eq!(failing.len(), 2);
        let v = ok(&call(&client, "run_tests", json!({"only_failed": true})).await);
        let command = v["results"]["command"].as_str().unwrap();
        assert_eq!(v["results"]["scope"], "affected");
        for id in &failing {
            assert!(command.contains(id), "{command} re-runs {id}");
        }
        let r = call(&client, "run_tests", json!({"args": "-x"})).await;
        assert!(error_text(&r).contains("`args` must be an array of strings"));

        // Without a session, the failures of that run.
        let v = ok(&call(&client, "latest_failures", json!({})).await);
        assert_eq!(v["session_id"], Value::Null);
        assert_eq!(v["failures"].as_array().unwrap().len(), 2);
        client.cancel().await.unwrap();
    });

    // A session paused for a manual fix, with the built-in analysis.
    env.wfx_live()
        .args([
            "test-fix-gen",
            "Test the calculator",
            "--fix-agent",
            "manual",
            "-y",
        ])
        .assert()
        .code(3);
    let id = "WFS-test-the-calculator";
    runtime().block_on(async {
        let client = connect(&env).await;
        let status = ok(&call(&client, "session_status", json!({})).await);
        assert_eq!(status["session_id"], id);
        assert_eq!(status["status"], "awaiting_fix");
        assert_eq!(status["pass_rates"], json!([81.8]));

        let next = ok(&call(&client, "next_action", json!({"session": id})).await);
        assert_eq!(
            next["next_command"],
            format!("wfx test-cycle-execute --resume-session={id}")
        );
        assert_eq!(next["outcome"]["kind"], "awaiting_fix");
        assert_eq!(next["next_command"], status["next_command"]);

        let f = ok(&call(&client, "latest_failures", json!({})).await);
        assert_eq!(f["session_id"], id);
        assert_eq!(f["failures"].as_array().unwrap().len(), 2);
        assert_eq!(f["analysis"]["iteration"], 1);
        assert_eq!(
            f["analysis"]["file"],
            format!(".workflow/active/{id}/.process/iteration-1-analysis.md")
        );
        let text = f["analysis"]["text"].as_str().unwrap();
        assert_eq!(text, env.read(f["analysis"]["file"].as_str().unwrap()));
        assert!(text.contains("calc/ops.py"), "{text}");
        client.cancel().await.unwrap();
    });
}

#[test]
fn install_claude_writes_the_commands_and_keeps_a_person_s_edits() {
    let env = Env::new();
    let install = |args: &[&str]| -> Value {
        let out = env
            .wfx()
            .args(["--json", "install", "claude"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let actions = |v: &Value| -> Vec<(String, String)> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["command"].as_str().unwrap().to_string(),
                    f["action"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let first = install(&[]);
    assert_eq!(
        actions(&first),
        [
            ("/wfx:test-fix-gen".to_string(), "created".to_string()),
            ("/wfx:test-cycle-execute".to_string(), "created".to_string()),
            ("/wfx:status".to_string(), "created".to_string()),
        ]
    );
    let status = ".claude/commands/wfx/status.md";
    let text = env.read(status);
    // Claude Code's command format: frontmatter, then the prompt.
    assert!(text.starts_with("---\ndescription: "));
    assert!(text.contains("\nallowed-tools: Bash(wfx:*), Read\n---\n"));
    assert!(text.contains("$ARGUMENTS") && text.contains("`wfx --json status <arguments>`"));
    assert!(
        env.read(".claude/commands/wfx/test-fix-gen.md")
            .contains("`wfx --json test-fix-gen <arguments>`")
    );

    // Again: nothing to do.
    assert!(actions(&install(&[])).iter().all(|(_, a)| a == "unchanged"));
    // A person's edit is kept, and named.
    let mine = text.replace("Summarise it", "Summarise it in French");
    env.write(status, &mine);
    let again = install(&[]);
    assert_eq!(actions(&again)[2].1, "kept");
    assert_eq!(env.read(status), mine);
    env.wfx()
        .args(["install", "claude"])
        .assert()
        .success()
        .stdout(predicates::str::contains("kept (you edited it"));
    // --force replaces it, keeping a copy.
    let forced = install(&["--force"]);
    assert_eq!(actions(&forced)[2].1, "replaced");
    assert_eq!(
        forced["files"][2]["backup"],
        ".claude/commands/wfx/status.md.bak"
    );
    assert_eq!(env.read(".claude/commands/wfx/status.md.bak"), mine);
    assert_eq!(env.read(status), text);
}
