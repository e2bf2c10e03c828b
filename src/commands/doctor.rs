//! `wfx doctor`: can the configured agents run the way wfx calls them?
//!
//! For every agent a role of `.workflow/wfx.json` names (and every preset
//! CLI found on PATH that none does): whether its program is on PATH, its
//! version (`--version`), and whether each flag wfx passes — and each value
//! the CLI lists its choices for — appears in its `--help` (the help of the
//! mode wfx runs: `codex exec --help`, `opencode run --help`); then the
//! whole command line of each role, run the harmless way its CLI's parser
//! allows (a dry run: `--help` appended for clap, else no prompt and no
//! credentials), and whether the CLI refused it. Each problem comes with
//! the fix. Exit 0 when every configured agent can run, 1 when
//! one cannot, 2 for an invalid config.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::Ctx;
use crate::agents::config::{self, AgentKind, MANUAL, ResolvedAgent, Role};
use crate::agents::presets::{self, Arg, Parser};
use crate::artifacts::config::{AgentsConfig, CommandSpec, Preset};
use crate::error::{Exit, Result};
use crate::process::which;
use crate::process::{self, Spec};

/// How long `--version` or `--help` may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// One flag (and maybe its value) checked against the CLI's help.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlagCheck {
    pub flag: String,
    /// Checked only when the help lists the accepted values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub accepted: bool,
    /// From the user's `args` in the config, not from the preset.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_config: bool,
}

/// One role's whole command line, run the harmless way its CLI allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DryRun {
    pub role: Role,
    /// As run, program first (`--help` appended for clap CLIs).
    pub argv: Vec<String>,
    /// The CLI refused the command line: its own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// Something that stops an agent from running as wfx calls it, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub message: String,
    pub fix: String,
}

/// What `wfx doctor` found about one agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentReport {
    pub name: String,
    /// The preset name, or `command` for a custom command.
    pub kind: String,
    /// Roles the config gives it; empty when it is only found on PATH or
    /// only defined.
    pub roles: Vec<Role>,
    /// Named by the config (a role or a definition).
    pub configured: bool,
    pub program: String,
    /// Where the program was found; `None` when it is not on PATH.
    pub path: Option<PathBuf>,
    pub version: Option<String>,
    /// The version the contract suite verified the preset with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_version: Option<&'static str>,
    pub flags: Vec<FlagCheck>,
    /// The dry run of each role's command line.
    pub dry_runs: Vec<DryRun>,
    pub problems: Vec<Problem>,
    /// The Node.js version the CLI declares (`engines.node` of its
    /// `package.json`), when it declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_required: Option<String>,
    /// What may go wrong although nothing stops the agent from starting
    /// (a Node.js older than the CLI declares).
    pub warnings: Vec<String>,
}

impl AgentReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The first `N.N.N` (with an optional pre-release) in a `--version` output.
pub fn parse_version(text: &str) -> Option<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\b").expect("valid regex")
    });
    re.captures(text).map(|c| c[1].to_string())
}

/// Whether `word` appears in `help` as a whole option or word (`--verbose`
/// but not `--verbose-x`; `plan` but not `planning`).
fn mentions(help: &str, word: &str) -> bool {
    let bytes = help.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    help.match_indices(word).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + word.len()).copied();
        before.is_none_or(|b| !is_word(b)) && after.is_none_or(|b| !is_word(b))
    })
}

/// Check each flag (and listed value) of a preset's arguments against its
/// help text. Arguments that are not flags (subcommands, positionals,
/// free values such as a model name) are not checked.
pub fn check_flags(help: &str, args: &[Arg]) -> Vec<FlagCheck> {
    let mut out: Vec<FlagCheck> = Vec::new();
    let mut push = |c: FlagCheck| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for a in args {
        match a {
            Arg::Flag(f) => push(FlagCheck {
                flag: f.to_string(),
                value: None,
                accepted: mentions(help, f),
                from_config: false,
            }),
            Arg::Value {
                flag,
                value,
                listed,
            } => push(FlagCheck {
                flag: flag.to_string(),
                value: listed.then(|| value.clone()),
                accepted: mentions(help, flag) && (!listed || mentions(help, value)),
                from_config: false,
            }),
            Arg::Extra(e) if e.starts_with('-') && e.len() > 1 => {
                let flag = e.split('=').next().unwrap_or(e);
                push(FlagCheck {
                    flag: flag.to_string(),
                    value: None,
                    accepted: mentions(help, flag),
                    from_config: true,
                })
            }
            Arg::Command(_) | Arg::Positional(_) | Arg::Extra(_) => {}
        }
    }
    out
}

/// The problems of a preset agent, from what was found; pure.
pub fn preset_problems(
    name: &str,
    preset: Preset,
    found: bool,
    program: &str,
    version: Option<&str>,
    flags: &[FlagCheck],
) -> Vec<Problem> {
    let info = presets::info(preset);
    let install = format!(
        "npm install -g {}@{} (the version wfx was verified with)",
        info.package, info.verified
    );
    if !found {
        return vec![Problem {
            message: format!("`{program}` is not on PATH"),
            fix: format!(
                "install it: {install}; or set agents.definitions.{name}.program to its path"
            ),
        }];
    }
    let shown_version = version.unwrap_or("of unknown version");
    let help_cmd = std::iter::once(program)
        .chain(info.help.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    flags
        .iter()
        .filter(|f| !f.accepted)
        .map(|f| {
            let what = match &f.value {
                Some(v) => format!("`{} {v}`", f.flag),
                None => format!("`{}`", f.flag),
            };
            let fix = if f.from_config {
                format!("remove {} from agents.definitions.{name}.args", f.flag)
            } else {
                format!("upgrade: {install}")
            };
            Problem {
                message: format!(
                    "{program} {shown_version} does not accept {what} (not in `{help_cmd}`)"
                ),
                fix,
            }
        })
        .collect()
}

/// Flags the user's `args` pass that the preset passes already
/// (`--sandbox` next to codex's own `--sandbox workspace-write`): the CLI
/// refuses the second one or takes one of them silently.
pub fn clashing_flags(name: &str, args: &[Arg]) -> Vec<Problem> {
    let preset_flag = |f: &str| {
        args.iter().find_map(|a| match a {
            Arg::Flag(p) if *p == f => Some(p.to_string()),
            Arg::Value { flag, value, .. } if *flag == f => Some(format!("{flag} {value}")),
            _ => None,
        })
    };
    let mut out: Vec<Problem> = Vec::new();
    for a in args {
        let Arg::Extra(e) = a else { continue };
        let flag = e.split('=').next().unwrap_or(e);
        if !flag.starts_with('-') || flag.len() < 2 {
            continue;
        }
        if let Some(given) = preset_flag(flag) {
            let p = Problem {
                message: format!(
                    "agents.definitions.{name}.args passes `{flag}`, which the preset already passes (`{given}`)"
                ),
                fix: format!(
                    "remove {flag} from agents.definitions.{name}.args (the preset sets it for each role)"
                ),
            };
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The dry run's command line: the role's argv with `--help` appended
/// where the parser checks everything before acting on it (clap); the
/// others run it as it is (see [`dry_run`]).
pub fn dry_run_argv(parser: Parser, mut argv: Vec<String>) -> Vec<String> {
    if parser == Parser::Clap {
        argv.push("--help".into());
    }
    argv
}

/// Whether a dry run's output is the parser refusing the command line, and
/// its reason; pure (the shapes are recorded in
/// fixtures/outputs/agents/dry-run/). Anything else (the missing prompt,
/// the missing sign-in, the help) means the flags were taken.
pub fn refusal(parser: Parser, exit_code: Option<i32>, text: &str) -> Option<String> {
    let first_error = || {
        text.lines()
            .map(str::trim)
            .find(|l| l.starts_with("error: "))
            .map(str::to_string)
    };
    match parser {
        Parser::Clap if exit_code == Some(2) => {
            Some(first_error().unwrap_or_else(|| "exit 2 (a usage error)".into()))
        }
        Parser::Commander if exit_code.is_some_and(|c| c != 0) => first_error(),
        Parser::Yargs { usage } if exit_code.is_some_and(|c| c != 0) => {
            let lines: Vec<&str> = text.lines().collect();
            let at = lines.iter().position(|l| l.starts_with(usage))?;
            // The reason is the block of lines right above the usage.
            let reason: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            Some(if reason.is_empty() {
                "it printed its usage without a reason".into()
            } else {
                reason.join(" ")
            })
        }
        _ => None,
    }
}

/// The problem of a refused dry run, and where to look.
pub fn refusal_problem(
    name: &str,
    preset: Preset,
    program: &str,
    from_config: bool,
    run: &DryRun,
) -> Option<Problem> {
    let reason = run.refused.as_ref()?;
    let info = presets::info(preset);
    let fix = if from_config {
        format!(
            "fix agents.definitions.{name}.args (or .model): the CLI refuses them; see `{}`",
            std::iter::once(program)
                .chain(info.help.iter().copied())
                .collect::<Vec<_>>()
                .join(" ")
        )
    } else {
        format!(
            "upgrade: npm install -g {}@{} (the version wfx was verified with)",
            info.package, info.verified
        )
    };
    Some(Problem {
        message: format!(
            "{program} refuses the command line of the {} role: {reason}",
            run.role.as_str()
        ),
        fix,
    })
}

/// Whether Node.js `version` (`v20.20.2`) satisfies `range` as npm
/// writes `engines.node` (`>=22`, `>=20.0.0 <23`, `^20.19 || >=22.12`);
/// `None` when the range has a form this does not read.
pub fn node_satisfies(version: &str, range: &str) -> Option<bool> {
    let parse = |v: &str| -> Option<(u64, u64, u64)> {
        let v = v.trim().trim_start_matches('v');
        let mut it = v.split('.').map(|p| p.trim().parse::<u64>());
        let major = it.next()?.ok()?;
        let minor = it.next().unwrap_or(Ok(0)).ok()?;
        let patch = it.next().unwrap_or(Ok(0)).ok()?;
        Some((major, minor, patch))
    };
    let have = parse(version)?;
    let mut any = false;
    for alt in range.split("||") {
        let mut all = true;
        let words: Vec<&str> = alt.split_whitespace().collect();
        if words.is_empty() {
            return None;
        }
        for w in words {
            let (op, v) = [">=", "<=", ">", "<", "^", "~", "="]
                .iter()
                .find_map(|op| w.strip_prefix(op).map(|v| (*op, v)))
                .unwrap_or(("=", w));
            let want = parse(v)?;
            let ok = match op {
                ">=" => have >= want,
                ">" => have > want,
                "<=" => have <= want,
                "<" => have < want,
                "^" => have.0 == want.0 && have >= want,
                "~" => have.0 == want.0 && have.1 == want.1 && have >= want,
                _ => have.0 == want.0 && (v.matches('.').count() < 1 || have.1 == want.1),
            };
            all &= ok;
        }
        any |= all;
    }
    Some(any)
}

/// `engines.node` of the npm package that holds `exe` (found by walking
/// up from the program's real path to the `package.json` named `package`).
fn declared_node(exe: &Path, package: &str) -> Option<String> {
    let real = exe.canonicalize().ok()?;
    for dir in real.ancestors().skip(1) {
        let file = dir.join("package.json");
        if let Ok(text) = std::fs::read_to_string(&file)
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            && v["name"] == package
        {
            return v["engines"]["node"].as_str().map(str::to_string);
        }
    }
    None
}

/// Run `program args…` briefly; its output (stdout and stderr) when it
/// could be started.
fn probe(program: &Path, args: &[&str], cwd: &Path) -> Option<String> {
    let mut argv = vec![program.to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let mut spec = Spec::new(argv, cwd)
        .stdin(Vec::new())
        .timeout(PROBE_TIMEOUT)
        .env("NO_COLOR", "1");
    spec.head_bytes = 1024 * 1024;
    spec.tail_bytes = 0;
    let outcome = process::run(spec, &mut |_| {}).ok()?;
    Some(presets::strip_ansi(&outcome.text()))
}

/// The variables the agent CLIs take their model API's address from
/// (Claude Code, Gemini CLI, Qwen Code, Codex and OpenCode's OpenAI
/// providers).
const DRY_RUN_BASE_URLS: [&str; 3] = [
    "ANTHROPIC_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "OPENAI_BASE_URL",
];

/// The discard port on loopback: nothing listens, a connection is refused.
const CLOSED_PORT_URL: &str = "http://127.0.0.1:9";

/// Run one role's whole command line the harmless way (see
/// [`presets::Parser`]): in an empty scratch directory that is also HOME,
/// with an empty environment but PATH and the preset's own variables (so
/// no credentials of the person's are found) and nothing on stdin (so no
/// prompt). Only a CLI's parser gets to work: it refuses the command line
/// or stops at the missing prompt or sign-in.
fn dry_run(exe: &Path, agent: &ResolvedAgent, preset: Preset, role: Role) -> DryRun {
    let info = presets::info(preset);
    let mut argv = presets::argv(preset, role, agent.model.as_deref(), &agent.args);
    argv[0] = exe.to_string_lossy().into_owned();
    let argv = dry_run_argv(info.parser, argv);
    let refused = tempfile::tempdir().ok().and_then(|scratch| {
        let mut spec = Spec::new(argv.clone(), scratch.path())
            .clear_env()
            .stdin(Vec::new())
            .timeout(PROBE_TIMEOUT)
            .env("HOME", scratch.path().to_string_lossy())
            .env("NO_COLOR", "1");
        if let Some(path) = std::env::var_os("PATH") {
            spec = spec.env("PATH", path.to_string_lossy());
        }
        for (k, v) in presets::env(preset, role) {
            spec = spec.env(k, v);
        }
        // A second fence, for a `program` that is a wrapper bringing its
        // own key: the CLIs' API base URLs point at a closed port.
        for k in DRY_RUN_BASE_URLS {
            spec = spec.env(k, CLOSED_PORT_URL);
        }
        spec.head_bytes = 64 * 1024;
        spec.tail_bytes = 0;
        let outcome = process::run(spec, &mut |_| {}).ok()?;
        refusal(
            info.parser,
            outcome.exit_code,
            &presets::strip_ansi(&outcome.text()),
        )
    });
    DryRun {
        role,
        argv: std::iter::once(agent.program.clone().unwrap_or(info.program.into()))
            .chain(argv.into_iter().skip(1))
            .collect(),
        refused,
    }
}

/// Every agent to check: the configured ones (roles first, then unused
/// definitions), then presets on PATH that the config does not name.
fn targets(
    cfg: &AgentsConfig,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> Result<Vec<(ResolvedAgent, Vec<Role>, bool)>> {
    let mut out: Vec<(ResolvedAgent, Vec<Role>, bool)> = Vec::new();
    let mut add = |name: &str, role: Option<Role>| -> Result<()> {
        if let Some(entry) = out.iter_mut().find(|(a, _, _)| a.name == name) {
            if let Some(r) = role
                && !entry.1.contains(&r)
            {
                entry.1.push(r);
            }
            return Ok(());
        }
        out.push((
            config::resolve(cfg, name)?,
            role.into_iter().collect(),
            true,
        ));
        Ok(())
    };
    for name in &cfg.analysis {
        add(name, Some(Role::Analysis))?;
    }
    let fix: Vec<&str> = cfg.fix.as_ref().map(|f| f.names()).unwrap_or_default();
    let test_gen: Vec<&str> = cfg.test_gen.as_deref().into_iter().collect();
    for (role, names) in [(Role::Fix, fix), (Role::TestGen, test_gen)] {
        for n in names.into_iter().filter(|n| *n != MANUAL) {
            add(n, Some(role))?;
        }
    }
    for name in cfg.definitions.keys() {
        add(name, None)?;
    }
    for p in Preset::ALL {
        let program = presets::info(p).program;
        let named = out.iter().any(|(a, _, _)| {
            a.kind == AgentKind::Preset(p) && a.program.as_deref().unwrap_or(program) == program
        });
        if !named && which(program, path_var, cwd).is_some() {
            out.push((
                config::resolve(&AgentsConfig::default(), p.as_str())?,
                Vec::new(),
                false,
            ));
        }
    }
    Ok(out)
}

/// Check one agent (runs `--version` and `--help` of a preset's CLI).
fn check(
    agent: &ResolvedAgent,
    roles: &[Role],
    configured: bool,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> AgentReport {
    match &agent.kind {
        AgentKind::Preset(p) => check_preset(agent, *p, roles, configured, path_var, cwd),
        AgentKind::Command(spec) => check_command(agent, spec, roles, configured, path_var, cwd),
    }
}

/// A preset: its CLI found, its version and flags read from `--help`, and
/// (when configured) a dry run of each command line wfx will run.
fn check_preset(
    agent: &ResolvedAgent,
    p: Preset,
    roles: &[Role],
    configured: bool,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> AgentReport {
    let info = presets::info(p);
    let program = agent
        .program
        .clone()
        .unwrap_or_else(|| info.program.to_string());
    let path = which(&program, path_var, cwd);
    let checked_roles: Vec<Role> = if roles.is_empty() {
        vec![Role::Analysis, Role::Fix]
    } else {
        roles.to_vec()
    };
    let args: Vec<Arg> = checked_roles
        .iter()
        .flat_map(|r| presets::args(p, *r, agent.model.as_deref(), &agent.args))
        .collect();
    let mut version = None;
    let mut flags = Vec::new();
    let mut dry_runs: Vec<DryRun> = Vec::new();
    if let Some(exe) = &path {
        version = probe(exe, &["--version"], cwd)
            .as_deref()
            .and_then(parse_version);
        let help = probe(exe, info.help, cwd).unwrap_or_default();
        flags = check_flags(&help, &args);
        // Each start of a CLI costs a second or two: only the
        // command lines wfx will run.
        if configured {
            dry_runs = checked_roles
                .iter()
                .map(|r| dry_run(exe, agent, p, *r))
                .collect();
        }
    }
    let node_required = path.as_deref().and_then(|e| declared_node(e, info.package));
    let warnings = node_required.as_deref().map_or_else(Vec::new, |range| {
        node_warnings(info.package, range, path_var, cwd)
    });
    let mut problems = preset_problems(
        &agent.name,
        p,
        path.is_some(),
        &program,
        version.as_deref(),
        &flags,
    );
    problems.extend(clashing_flags(&agent.name, &args));
    let from_config = !agent.args.is_empty() || agent.model.is_some();
    problems.extend(
        dry_runs
            .iter()
            .filter_map(|r| refusal_problem(&agent.name, p, &program, from_config, r)),
    );
    AgentReport {
        name: agent.name.clone(),
        kind: p.as_str().to_string(),
        roles: roles.to_vec(),
        configured,
        program,
        path,
        version,
        verified_version: Some(info.verified),
        flags,
        dry_runs,
        problems,
        node_required,
        warnings,
    }
}

/// A node too old (or missing) for what the CLI's package.json declares.
fn node_warnings(
    package: &str,
    range: &str,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let node = which("node", path_var, cwd)
        .and_then(|n| probe(&n, &["--version"], cwd))
        .map(|v| v.trim().to_string());
    match node.as_deref().map(|v| (v, node_satisfies(v, range))) {
        Some((v, Some(false))) => warnings.push(format!(
            "{} declares Node.js {range} (engines.node of its package.json); node on PATH is {v}: it may fail at start or in the middle of a call. Fix: install Node.js {range}",
            package
        )),
        None => warnings.push(format!(
            "{} declares Node.js {range} (engines.node of its package.json) and no node is on PATH",
            package
        )),
        _ => {}
    }
    warnings
}

/// A command agent: only whether its program is found.
fn check_command(
    agent: &ResolvedAgent,
    spec: &CommandSpec,
    roles: &[Role],
    configured: bool,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> AgentReport {
    let program = match spec {
        CommandSpec::Argv(argv) => argv.first().cloned().unwrap_or_default(),
        CommandSpec::Shell(_) => crate::process::shell_program().to_string(),
    };
    // A program given as a variable is only known at call time.
    let path = if program.contains("${") {
        Some(PathBuf::from(&program))
    } else {
        which(&program, path_var, cwd)
    };
    let problems = if path.is_none() {
        vec![Problem {
            message: format!("`{program}` is not on PATH"),
            fix: format!(
                "install it, or fix agents.definitions.{}.command",
                agent.name
            ),
        }]
    } else {
        Vec::new()
    };
    AgentReport {
        name: agent.name.clone(),
        kind: "command".into(),
        roles: roles.to_vec(),
        configured,
        program,
        path,
        version: None,
        verified_version: None,
        flags: Vec::new(),
        dry_runs: Vec::new(),
        problems,
        node_required: None,
        warnings: Vec::new(),
    }
}

/// Check every agent (see the module docs).
pub fn diagnose(
    cfg: &AgentsConfig,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> Result<Vec<AgentReport>> {
    let targets = targets(cfg, path_var, cwd)?;
    // The CLIs take seconds to start; probe them side by side.
    Ok(std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .iter()
            .map(|(agent, roles, configured)| {
                scope.spawn(move || check(agent, roles, *configured, path_var, cwd))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a doctor probe does not panic"))
            .collect()
    }))
}

fn roles_text(r: &AgentReport) -> String {
    if r.roles.is_empty() {
        if r.configured {
            "defined, no role".into()
        } else {
            "not configured (found on PATH)".into()
        }
    } else {
        r.roles
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn flag_text(f: &FlagCheck) -> String {
    match &f.value {
        Some(v) => format!("{} {v}", f.flag),
        None => f.flag.clone(),
    }
}

/// The human report, one block per agent.
pub fn render(reports: &[AgentReport], config_shown: &str) -> String {
    let mut out = String::new();
    if reports.is_empty() {
        out.push_str(&format!(
            "No agent is configured in {config_shown} and none of {} is on PATH: wfx analyses failures itself and pauses for you to apply fixes.\n",
            Preset::ALL.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        ));
        return out;
    }
    for r in reports {
        out.push_str(&format!("{} ({}) · {}\n", r.name, r.kind, roles_text(r)));
        match &r.path {
            Some(p) => out.push_str(&format!("  program: {} ({})\n", r.program, p.display())),
            None => out.push_str(&format!("  program: {} (not on PATH)\n", r.program)),
        }
        if r.path.is_some() && r.kind != "command" {
            let version = r.version.as_deref().unwrap_or("unknown");
            let verified = match r.verified_version {
                Some(v) if Some(v) == r.version.as_deref() => " (the verified version)".to_string(),
                Some(v) => format!(" (wfx was verified with {v})"),
                None => String::new(),
            };
            out.push_str(&format!("  version: {version}{verified}\n"));
            let accepted: Vec<String> = r
                .flags
                .iter()
                .filter(|f| f.accepted)
                .map(flag_text)
                .collect();
            out.push_str(&format!(
                "  flags:   {} of {} accepted{}\n",
                accepted.len(),
                r.flags.len(),
                if accepted.is_empty() {
                    String::new()
                } else {
                    format!(": {}", accepted.join(", "))
                }
            ));
        }
        if !r.dry_runs.is_empty() {
            let runs: Vec<String> = r
                .dry_runs
                .iter()
                .map(|d| {
                    let verdict = if d.refused.is_some() {
                        "refused"
                    } else {
                        "taken"
                    };
                    format!("{} {verdict}", d.role.as_str())
                })
                .collect();
            out.push_str(&format!("  dry run: {}\n", runs.join(", ")));
        }
        for p in &r.problems {
            out.push_str(&format!("  problem: {}\n    fix: {}\n", p.message, p.fix));
        }
        for w in &r.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
    }
    let broken: Vec<&str> = reports
        .iter()
        .filter(|r| r.configured && !r.ok())
        .map(|r| r.name.as_str())
        .collect();
    let configured = reports.iter().filter(|r| r.configured).count();
    if configured == 0 {
        out.push_str(&format!(
            "No agent is configured in {config_shown}; assign roles (agents.analysis, agents.fix) to use the CLIs above.\n"
        ));
    } else if broken.is_empty() {
        out.push_str(&format!(
            "{configured} configured agent(s): every one can run as wfx calls it.\n"
        ));
    } else {
        out.push_str(&format!(
            "{} of {configured} configured agent(s) cannot run as wfx calls them: {}.\n",
            broken.len(),
            broken.join(", ")
        ));
    }
    out
}

pub fn run(ctx: &Ctx) -> Result<Exit> {
    let cfg = ctx.ws.load_config()?;
    let path_var = std::env::var_os("PATH");
    let reports = diagnose(&cfg.agents, path_var.as_deref(), &ctx.ws.root)?;
    let ok = reports.iter().all(|r| !r.configured || r.ok());
    if ctx.ui.is_json() {
        ctx.ui
            .json(&serde_json::json!({ "ok": ok, "agents": reports }));
    } else {
        let shown = ctx.ws.rel(&ctx.ws.config_path());
        ctx.ui.out(render(&reports, &shown).trim_end());
    }
    Ok(if ok { Exit::Success } else { Exit::Failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_real_version_lines() {
        for (text, want) in [
            ("2.1.330 (Claude Code)\n", Some("2.1.330")),
            ("codex-cli 0.169.0\n", Some("0.169.0")),
            (
                "0.61.0-nightly.20260909.ged2ac40df\n",
                Some("0.61.0-nightly.20260909.ged2ac40df"),
            ),
            ("warning: x\n1.18.33\n", Some("1.18.33")),
            ("no version here", None),
        ] {
            assert_eq!(parse_version(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn whole_words_only() {
        let help = "  --verbose-mode  x\n  --output-format <f> (choices: \"text\", \"stream-json\")\n  planning\n";
        assert!(!mentions(help, "--verbose"));
        assert!(mentions(help, "--output-format"));
        assert!(mentions(help, "stream-json"));
        assert!(!mentions(help, "json"), "json only inside stream-json");
        assert!(!mentions(help, "plan"));
        assert!(mentions("-p, --print", "-p"));
        assert!(!mentions("--prompt", "-p"));
    }

    #[test]
    fn flags_values_and_config_args() {
        let help = "--output-format [choices: \"text\", \"json\"]\n--approval-mode [choices: \"default\", \"yolo\"]\n-p, --prompt\n";
        let args = presets::args(
            Preset::Gemini,
            Role::Fix,
            Some("m"),
            &["--sandbox".into(), "x".into()],
        );
        let got: Vec<(String, Option<String>, bool, bool)> = check_flags(help, &args)
            .into_iter()
            .map(|f| (f.flag, f.value, f.accepted, f.from_config))
            .collect();
        assert_eq!(
            got,
            [
                ("--output-format".into(), Some("json".into()), true, false),
                ("--approval-mode".into(), Some("yolo".into()), true, false),
                ("--skip-trust".into(), None, false, false),
                ("--model".into(), None, false, false),
                ("--sandbox".into(), None, false, true),
                ("-p".into(), None, true, false),
            ]
        );
    }

    #[test]
    fn a_flag_the_preset_passes_already_is_a_problem() {
        let args = presets::args(
            Preset::Codex,
            Role::Fix,
            None,
            &[
                "--sandbox".into(),
                "nonsense".into(),
                "--color=never".into(),
            ],
        );
        let p = clashing_flags("cx", &args);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].message.starts_with("agents.definitions.cx.args passes `--sandbox`, which the preset already passes (`--sandbox workspace-write`)"),
            "{}",
            p[0].message
        );
        assert_eq!(
            clashing_flags(
                "g",
                &presets::args(Preset::Gemini, Role::Fix, None, &["--debug".into()])
            ),
            []
        );
    }

    #[test]
    fn node_ranges_as_npm_writes_them() {
        for (v, range, want) in [
            ("v20.20.2", ">=22", Some(false)),
            ("v22.12.0", ">=22", Some(true)),
            ("v20.20.2", ">=18.0.0", Some(true)),
            ("v20.20.2", ">=20.0.0 <21", Some(true)),
            ("v21.1.0", "^20.19 || >=22.12", Some(false)),
            ("v20.19.1", "^20.19 || >=22.12", Some(true)),
            ("v20.20.2", "lts/*", None),
        ] {
            assert_eq!(node_satisfies(v, range), want, "{v} {range}");
        }
    }

    #[test]
    fn problems_name_the_fix() {
        let missing = preset_problems("claude", Preset::Claude, false, "claude", None, &[]);
        assert_eq!(missing[0].message, "`claude` is not on PATH");
        assert!(
            missing[0]
                .fix
                .contains("npm install -g @anthropic-ai/claude-code@2.1.330"),
            "{}",
            missing[0].fix
        );
        let flags = [
            FlagCheck {
                flag: "--skip-trust".into(),
                value: None,
                accepted: false,
                from_config: false,
            },
            FlagCheck {
                flag: "--sandbox".into(),
                value: None,
                accepted: false,
                from_config: true,
            },
            FlagCheck {
                flag: "-p".into(),
                value: None,
                accepted: true,
                from_config: false,
            },
        ];
        let p = preset_problems(
            "gem",
            Preset::Gemini,
            true,
            "gemini",
            Some("0.20.0"),
            &flags,
        );
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0].message,
            "gemini 0.20.0 does not accept `--skip-trust` (not in `gemini --help`)"
        );
        assert_eq!(
            p[0].fix,
            "upgrade: npm install -g @google/gemini-cli@0.61.0 (the version wfx was verified with)"
        );
        assert_eq!(
            p[1].fix,
            "remove --sandbox from agents.definitions.gem.args"
        );
    }

    /// Every dry run recorded from the real CLIs
    /// (fixtures/outputs/agents/dry-run/<cli>-<version>-<case>.exit<N>.txt):
    /// the preset's own command line is taken by the verified versions and
    /// refused by Gemini CLI 0.20.0 (no `--skip-trust` yet); a bad value
    /// and an unknown flag are refused, with the CLI's own reason (OpenCode
    /// prints its usage without one).
    #[test]
    fn refusals_as_the_real_clis_print_them() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/outputs/agents/dry-run");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".txt") else {
                continue;
            };
            let (stem, exit) = stem.rsplit_once(".exit").unwrap();
            let cli = stem.split('-').next().unwrap();
            let case = ["preset", "bad-value", "unknown-flag"]
                .into_iter()
                .find(|c| stem.ends_with(c))
                .unwrap();
            let preset = Preset::ALL
                .into_iter()
                .find(|p| presets::info(*p).program == cli)
                .unwrap();
            let text = presets::strip_ansi(&std::fs::read_to_string(&path).unwrap());
            let got = refusal(presets::info(preset).parser, exit.parse().ok(), &text);
            match (case, &got) {
                ("preset", Some(r)) if stem == "gemini-0.20.0-preset" => {
                    assert_eq!(r, "Unknown arguments: skip-trust, skipTrust")
                }
                ("preset", None) => {}
                ("unknown-flag", Some(r)) if cli == "opencode" => {
                    assert_eq!(r, "it printed its usage without a reason", "{name}")
                }
                // yargs reads `--no-such-flag` as `--such-flag` negated.
                ("unknown-flag", Some(r)) => assert!(r.contains("such-flag"), "{name}: {r}"),
                ("bad-value", Some(r)) if cli == "opencode" => {
                    assert_eq!(r, "it printed its usage without a reason", "{name}")
                }
                ("bad-value", Some(r)) => assert!(
                    r.contains("bogus")
                        || r.contains("'--sandbox <SANDBOX_MODE>' cannot be used multiple times"),
                    "{name}: {r}"
                ),
                _ => panic!("{name}: {got:?}"),
            }
            seen += 1;
        }
        assert_eq!(seen, 16, "five CLIs, three cases each, and the old gemini");
    }

    #[test]
    fn refusal_shapes() {
        let yargs = Parser::Yargs {
            usage: "Usage: gemini ",
        };
        for (parser, exit, text, want) in [
            (Parser::Clap, Some(0), "Usage: codex exec", None),
            (Parser::Clap, Some(1), "error: no prompt", None),
            (
                Parser::Clap,
                Some(2),
                "warn\nerror: unexpected argument '--x' found\n",
                Some("error: unexpected argument '--x' found"),
            ),
            (
                Parser::Commander,
                Some(1),
                "Error: Input must be provided",
                None,
            ),
            (Parser::Commander, Some(0), "error: looks like one", None),
            (
                Parser::Commander,
                Some(1),
                "error: unknown option '--x'",
                Some("error: unknown option '--x'"),
            ),
            (yargs, Some(41), "{\"error\": 1}", None),
            (
                yargs,
                Some(1),
                "noise\n\nUnknown arguments: x\nUsage: gemini [options]\n",
                Some("Unknown arguments: x"),
            ),
            (
                yargs,
                Some(0),
                "Unknown arguments: x\nUsage: gemini [options]\n",
                None,
            ),
            (
                yargs,
                Some(1),
                "Usage: gemini [options]\n",
                Some("it printed its usage without a reason"),
            ),
            (
                yargs,
                None,
                "Unknown arguments: x\nUsage: gemini [options]\n",
                None,
            ),
        ] {
            assert_eq!(
                refusal(parser, exit, text).as_deref(),
                want,
                "{parser:?} {exit:?} {text}"
            );
        }
        assert_eq!(
            dry_run_argv(Parser::Clap, vec!["codex".into()]),
            ["codex", "--help"]
        );
        assert_eq!(
            dry_run_argv(Parser::Commander, vec!["claude".into()]),
            ["claude"]
        );
    }
}
