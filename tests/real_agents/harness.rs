//! The contract suite's plumbing: the installed CLIs, the mock model server,
//! a private HOME with each CLI's offline configuration (DESIGN §10.5), and
//! `wfx` run against them.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wfx::artifacts::config::Preset;

use crate::common::{Env, copy_dir};

/// This directory: tests/real_agents.
pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_agents")
}

/// How the mock server tells the CLIs' requests apart: the API key each
/// sends is `mock-<mode>` (see mock_model.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Ok,
    RateLimit,
    ServerError,
    Hang,
    NoStrategy,
    Edit,
    /// A fix that fixes the failing test and breaks a passing one.
    Break,
}

impl Mode {
    pub fn key(self) -> &'static str {
        match self {
            Mode::Ok => "mock-ok",
            Mode::RateLimit => "mock-429",
            Mode::ServerError => "mock-500",
            Mode::Hang => "mock-hang",
            Mode::NoStrategy => "mock-nostrategy",
            Mode::Edit => "mock-edit",
            Mode::Break => "mock-break",
        }
    }

    /// The suffix of the agent name used for this mode (`claude-429`).
    pub fn suffix(self) -> &'static str {
        &self.key()[5..]
    }
}

/// The environment variable each CLI reads its API key from.
pub fn key_var(preset: Preset) -> &'static str {
    match preset {
        Preset::Claude => "ANTHROPIC_API_KEY",
        Preset::Gemini => "GEMINI_API_KEY",
        Preset::Qwen => "OPENAI_API_KEY",
        Preset::Codex | Preset::Opencode => "MOCK_API_KEY",
    }
}

/// The pinned versions of versions.txt, per preset.
pub fn pinned_versions() -> Vec<(Preset, String)> {
    let text = std::fs::read_to_string(here().join("versions.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|pin| {
            let (package, version) = pin.rsplit_once('@').unwrap();
            let preset = Preset::ALL
                .into_iter()
                .find(|p| wfx::agents::presets::info(*p).package == package)
                .unwrap_or_else(|| panic!("versions.txt: no preset installs {package}"));
            (preset, version.to_string())
        })
        .collect()
}

/// The directory of the installed CLIs, or `None` when the suite is
/// skipped (`WFX_SKIP_REAL_AGENTS=1`). `WFX_REAL_AGENTS_BIN` names it
/// (scripts/test.sh sets it); otherwise install.sh runs once (it installs
/// into a cache on first use). A failed install fails the test loudly.
pub fn bin_dir() -> Option<PathBuf> {
    if std::env::var("WFX_SKIP_REAL_AGENTS").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: WFX_SKIP_REAL_AGENTS=1 (the real agent CLIs are not run)");
        return None;
    }
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let bin = BIN.get_or_init(|| {
        if let Some(dir) = std::env::var_os("WFX_REAL_AGENTS_BIN") {
            return Ok(PathBuf::from(dir));
        }
        let out = Command::new(here().join("install.sh"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("install.sh could not run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tests/real_agents/install.sh failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    });
    match bin {
        Ok(dir) => Some(dir.clone()),
        Err(e) => panic!("{e}\nset WFX_SKIP_REAL_AGENTS=1 to skip the contract suite"),
    }
}

/// The mock model server, stopped when dropped.
pub struct Mock {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Mock {
    pub fn start(project: &Path, dir: &Path) -> Mock {
        let port_file = dir.join("mock.port");
        let log = dir.join("mock-requests.jsonl");
        let mut cmd = Command::new("python3");
        // To debug a CLI's conversation: every request body, appended here.
        if let Some(dump) = std::env::var_os("WFX_MOCK_DUMP") {
            cmd.arg(here().join("mock_model.py"))
                .arg("--dump")
                .arg(dump);
        } else {
            cmd.arg(here().join("mock_model.py"));
        }
        let child = cmd
            .arg("--project")
            .arg(project)
            .arg("--script")
            .arg(here().join("script.json"))
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("mock.stderr")).unwrap())
            .spawn()
            .expect("python3 runs the mock model server");
        let start = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                break port;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the mock model server did not start: {}",
                std::fs::read_to_string(dir.join("mock.stderr")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Mock { child, port, log }
    }

    /// Every request the server answered, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A one-bug pytest project in a git repository, a private HOME configured
/// for every CLI, and the mock server they talk to.
pub struct Setup {
    pub env: Env,
    pub mock: Mock,
    pub bin: PathBuf,
}

impl Setup {
    pub fn new(bin: &Path) -> Setup {
        let env = Env::new();
        copy_dir(&here().join("project"), &env.root);
        env.git_init_commit();
        let mock = Mock::start(&env.root, env.tmp.path());
        let s = Setup {
            env,
            mock,
            bin: bin.to_path_buf(),
        };
        s.write_homes();
        s
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.mock.port)
    }

    fn home_file(&self, rel: &str, text: &str) {
        let path = self.env.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Each CLI's offline configuration in the private HOME.
    fn write_homes(&self) {
        self.home_file(
            ".gemini/settings.json",
            &json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
            })
            .to_string(),
        );
        // A model slug codex knows: with an unknown one it offers no
        // apply_patch tool.
        self.home_file(
            ".codex/config.toml",
            &format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n",
                self.base_url()
            ),
        );
        self.home_file(
            ".config/opencode/opencode.json",
            &serde_json::to_string_pretty(&json!({
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": false,
                "share": "disabled",
                "snapshot": false,
                "model": "mock/mock-model",
                "small_model": "mock/mock-model",
                "provider": {"mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Mock",
                    "options": {"baseURL": format!("{}/v1", self.base_url()), "apiKey": "{env:MOCK_API_KEY}"},
                    "models": {"mock-model": {"name": "Mock", "tool_call": true, "cost": {"input": 3, "output": 15}}}
                }}
            }))
            .unwrap(),
        );
    }

    /// `<tmp>/modes/<cli>-<mode>`: the real CLI with the API key of `mode`
    /// (for `agents.definitions.<name>.program`). Only the key differs.
    pub fn wrapper(&self, preset: Preset, mode: Mode) -> PathBuf {
        let dir = self.env.tmp.path().join("modes");
        std::fs::create_dir_all(&dir).unwrap();
        let program = wfx::agents::presets::info(preset).program;
        let path = dir.join(format!("{program}-{}", mode.suffix()));
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\n{var}={key}; export {var}\nexec '{real}' \"$@\"\n",
                var = key_var(preset),
                key = mode.key(),
                real = self.bin.join(program).display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    pub fn write_config(&self, config: &Value) {
        self.env.write(
            ".workflow/wfx.json",
            &serde_json::to_string_pretty(config).unwrap(),
        );
        self.env.git(&["add", "-A"]);
        self.env.git(&["commit", "-q", "-m", "wfx config"]);
    }

    /// What every CLI needs to reach the mock server with the `ok` key, no
    /// update checks, no telemetry (DESIGN §10.5), and the CLIs first on PATH.
    fn cli_env(&self) -> Vec<(String, String)> {
        let url = self.base_url();
        let ok = Mode::Ok.key();
        [
            ("PATH", self.env.path_with(&self.bin)),
            ("ANTHROPIC_BASE_URL", url.clone()),
            ("ANTHROPIC_API_KEY", ok.into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("GEMINI_API_KEY", ok.into()),
            ("GOOGLE_GEMINI_BASE_URL", url.clone()),
            ("OPENAI_BASE_URL", format!("{url}/v1")),
            ("OPENAI_API_KEY", ok.into()),
            ("OPENAI_MODEL", "mock-model".into()),
            (
                "CODEX_HOME",
                self.env.home.join(".codex").display().to_string(),
            ),
            ("MOCK_API_KEY", ok.into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// `wfx` in the project, hermetic, with [`Setup::cli_env`].
    pub fn wfx(&self) -> assert_cmd::Command {
        let mut cmd = self.env.wfx_live();
        cmd.envs(self.cli_env());
        cmd
    }

    /// `wfx test-fix-gen "Fix the failing division test" -y`, then `extra`.
    pub fn fix_session(&self, extra: &[&str], timeout: Duration) -> std::process::Output {
        self.wfx()
            .args(["test-fix-gen", "Fix the failing division test", "-y"])
            .args(extra)
            .timeout(timeout)
            .output()
            .unwrap()
    }

    /// Run the CLI once as wfx runs an analysis (a trivial question) and
    /// return how long it took: the failure modes' timeouts scale with it,
    /// so a slow machine does not turn a rate limit into a plain timeout
    /// before the CLI printed anything. Also warms the CLI's HOME.
    pub fn warm_up(&self, preset: Preset) -> Duration {
        let argv = wfx::agents::presets::argv(preset, wfx::agents::Role::Analysis, None, &[]);
        let mut cmd = Command::new(self.bin.join(&argv[0]));
        self.env.apply(&mut cmd);
        self.env.apply_toolchains(&mut cmd);
        cmd.args(&argv[1..])
            .envs(self.cli_env())
            .envs(wfx::agents::presets::env(
                preset,
                wfx::agents::Role::Analysis,
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(b"Say hello.\n");
        }
        let status = child.wait().unwrap();
        let took = started.elapsed();
        assert!(
            status.success(),
            "{}: the warm-up call failed ({status})",
            preset.as_str()
        );
        took
    }

    /// The one session directory (active or archived).
    pub fn session_dir(&self) -> PathBuf {
        for parent in [".workflow/archives", ".workflow/active"] {
            let dir = self.env.root.join(parent);
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for e in entries.flatten() {
                    if e.file_name().to_string_lossy().starts_with("WFS-") && e.path().is_dir() {
                        return e.path();
                    }
                }
            }
        }
        panic!("no session directory");
    }

    pub fn process_file(&self, name: &str) -> String {
        let path = self.session_dir().join(".process").join(name);
        let mut s = String::new();
        std::fs::File::open(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .read_to_string(&mut s)
            .unwrap();
        s
    }

    /// Copy a call's raw output into `$WFX_RECORD_AGENT_OUTPUTS/<name>` with
    /// machine paths and the port replaced (fixtures/outputs/agents/).
    pub fn record(&self, process_file: &str, name: &str) {
        let Some(dir) = std::env::var_os("WFX_RECORD_AGENT_OUTPUTS") else {
            return;
        };
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let install = self
            .bin
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.bin);
        let text = self
            .process_file(process_file)
            .replace(&self.env.root.display().to_string(), "<project>")
            .replace(&self.env.home.display().to_string(), "<home>")
            .replace(&self.env.tmp.path().display().to_string(), "<tmp>")
            .replace(&install.display().to_string(), "<cli-install>")
            .replace(&format!("127.0.0.1:{}", self.mock.port), "127.0.0.1:<port>")
            // Sockets and error reports the CLIs keep in the system's temp dir.
            .replace("/tmp/", "<tmp>/");
        std::fs::write(dir.join(name), text).unwrap();
    }
}
