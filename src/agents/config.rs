//! Which agent runs in which role: resolving names from `agents` in
//! `.workflow/wfx.json` to presets or custom commands, and the semantic
//! checks the schema cannot express (every role names something that
//! exists, custom commands only use known variables, …).

use std::time::Duration;

use crate::artifacts::config::{
    AgentDefinition, AgentNames, AgentsConfig, CommandSpec, Config, Preset,
};
use crate::error::{Error, Problem, Result};

use super::vars;

/// Name that means "a person applies the fix" (`--fix-agent manual`).
pub const MANUAL: &str = "manual";

/// Who made a fix, in the one phrase every view uses (the live line,
/// `wfx status`, the summaries, the report, commit messages): `fix by
/// hand` for a person, `fix by claude` for an agent.
pub fn fix_by(agent: &str) -> String {
    if agent == MANUAL {
        "fix by hand".to_string()
    } else {
        format!("fix by {agent}")
    }
}

pub use crate::artifacts::fix_history::Role;

/// How an agent is run.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentKind {
    Preset(Preset),
    Command(CommandSpec),
}

/// An agent name resolved against the config: everything needed to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedAgent {
    /// The name used in the config (a definition name or a preset name).
    pub name: String,
    pub kind: AgentKind,
    pub timeout: Duration,
    pub model: Option<String>,
    /// Extra arguments appended to a preset's argument list.
    pub args: Vec<String>,
    /// Replaces the preset's program name (argv[0]).
    pub program: Option<String>,
}

/// Resolve one agent name: a definition in `agents.definitions`, else a
/// preset of that name with default settings.
pub fn resolve(cfg: &AgentsConfig, name: &str) -> Result<ResolvedAgent> {
    let default_timeout = Duration::from_secs(cfg.default_timeout_s);
    if let Some(def) = cfg.definitions.get(name) {
        let kind = match (&def.preset, &def.command) {
            (_, Some(cmd)) => AgentKind::Command(cmd.clone()),
            (Some(p), None) => AgentKind::Preset(*p),
            (None, None) => match Preset::from_name(name) {
                Some(p) => AgentKind::Preset(p),
                None => {
                    return Err(Error::usage(format!(
                        "agent {name}: its definition has neither `preset` nor `command`"
                    )));
                }
            },
        };
        return Ok(ResolvedAgent {
            name: name.to_string(),
            kind,
            timeout: def.timeout_s.map_or(default_timeout, Duration::from_secs),
            model: def.model.clone(),
            args: def.args.clone(),
            program: def.program.clone(),
        });
    }
    match Preset::from_name(name) {
        Some(p) => Ok(ResolvedAgent {
            name: name.to_string(),
            kind: AgentKind::Preset(p),
            timeout: default_timeout,
            model: None,
            args: Vec::new(),
            program: None,
        }),
        None => Err(Error::usage(format!(
            "agent {name} is neither a preset ({}) nor defined in agents.definitions",
            preset_list()
        ))),
    }
}

/// The analysis fallback chain, in order.
pub fn analysis_chain(cfg: &AgentsConfig) -> Result<Vec<ResolvedAgent>> {
    cfg.analysis.iter().map(|n| resolve(cfg, n)).collect()
}

/// The agent for `fix` or `test_gen`; `None` when the role is unset or
/// `manual` (wfx pauses for a person instead). `override_name` is the
/// `--fix-agent` flag, which wins over the config.
pub fn role_agent(
    cfg: &AgentsConfig,
    role: Role,
    override_name: Option<&str>,
) -> Result<Option<ResolvedAgent>> {
    let configured = match role {
        Role::Fix => cfg.fix.as_ref().and_then(AgentNames::first),
        Role::TestGen => cfg.test_gen.as_deref(),
        Role::Analysis => {
            return Err(Error::Internal(
                "analysis has a chain; use analysis_chain".into(),
            ));
        }
    };
    match override_name.or(configured) {
        None => Ok(None),
        Some(MANUAL) => Ok(None),
        Some(name) => resolve(cfg, name).map(Some),
    }
}

/// The fix agents speculative candidates take turns with (`agents.fix`
/// as a list, DESIGN.md §11.4): `--fix-agent` alone when given; empty
/// when fixes are manual.
pub fn fix_agents(cfg: &AgentsConfig, override_name: Option<&str>) -> Result<Vec<ResolvedAgent>> {
    let names: Vec<&str> = match (override_name, &cfg.fix) {
        (Some(name), _) => vec![name],
        (None, Some(list)) => list.names(),
        (None, None) => Vec::new(),
    };
    names
        .into_iter()
        .filter(|n| *n != MANUAL)
        .map(|n| resolve(cfg, n))
        .collect()
}

fn preset_list() -> String {
    Preset::ALL
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn problem(file: &str, pointer: String, message: impl Into<String>) -> Problem {
    Problem {
        file: file.to_string(),
        pointer,
        message: message.into(),
    }
}

/// JSON pointer escaping (RFC 6901) of one reference token.
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Checks beyond the schema, reported like schema problems (`file` names
/// the config in messages). An empty list means the config can be used.
pub fn check(cfg: &Config, file: &str) -> Vec<Problem> {
    let mut out = Vec::new();
    let agents = &cfg.agents;
    let known =
        |name: &str| agents.definitions.contains_key(name) || Preset::from_name(name).is_some();
    check_agent_list(
        file,
        "/agents/analysis",
        &agents.analysis,
        "`manual` is not an analysis agent; leave the list empty to use only the built-in analyzer",
        &known,
        &mut out,
    );
    match &agents.fix {
        Some(AgentNames::One(name)) if name != MANUAL && !known(name) => {
            out.push(problem(file, "/agents/fix".into(), unknown_agent(name)));
        }
        Some(AgentNames::Many(names)) => {
            if names.is_empty() {
                out.push(problem(
                    file,
                    "/agents/fix".into(),
                    "the list of fix agents is empty; name one or more agents, or remove the key for manual fixes",
                ));
            }
            check_agent_list(
                file,
                "/agents/fix",
                names,
                "`manual` cannot be one of several fix agents; use `\"fix\": \"manual\"` alone",
                &known,
                &mut out,
            );
        }
        _ => {}
    }
    if let Some(name) = &agents.test_gen {
        if name == MANUAL {
            out.push(problem(
                file,
                "/agents/test_gen".into(),
                "test_gen cannot be `manual`; remove it (or set null) to skip test generation",
            ));
        } else if !known(name) {
            out.push(problem(
                file,
                "/agents/test_gen".into(),
                unknown_agent(name),
            ));
        }
    }
    for (name, def) in &agents.definitions {
        check_definition(name, def, file, &mut out);
    }
    // 0 is allowed: no agent call is made at all (docs/configuration.md).
    if let Some(cap) = agents.max_cost_usd
        && !(cap >= 0.0 && cap.is_finite())
    {
        out.push(problem(
            file,
            "/agents/max_cost_usd".into(),
            format!("must be an amount in US dollars (0 or more), got {cap}"),
        ));
    }
    check_message_templates(cfg, file, &mut out);
    out
}

/// A list of agent names: each known, none `manual`, none twice.
fn check_agent_list(
    file: &str,
    key: &str,
    names: &[String],
    manual: &str,
    known: &dyn Fn(&str) -> bool,
    out: &mut Vec<Problem>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, name) in names.iter().enumerate() {
        let pointer = format!("{key}/{i}");
        if name == MANUAL {
            out.push(problem(file, pointer, manual));
        } else if !known(name) {
            out.push(problem(file, pointer, unknown_agent(name)));
        } else if !seen.insert(name.as_str()) {
            out.push(problem(
                file,
                pointer,
                format!("agent {name} is listed twice"),
            ));
        }
    }
}

/// Commit message templates name only variables their message has.
fn check_message_templates(cfg: &Config, file: &str, out: &mut Vec<Problem>) {
    for (key, template) in cfg.git.message.templates() {
        let known = crate::git::template_variables(&key);
        let pointer = format!("/git/message/{key}");
        if template.trim().is_empty() {
            out.push(problem(file, pointer.clone(), "the template is empty"));
        }
        for name in crate::agents::vars::referenced(&template) {
            if !known.contains(&name.as_str()) {
                out.push(problem(
                    file,
                    pointer.clone(),
                    format!(
                        "unknown variable ${{{name}}}; known: {}",
                        known
                            .iter()
                            .map(|k| format!("${{{k}}}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
    }
}

fn unknown_agent(name: &str) -> String {
    format!(
        "unknown agent {name:?}: not a preset ({}) and not in /agents/definitions",
        preset_list()
    )
}

fn check_definition(name: &str, def: &AgentDefinition, file: &str, out: &mut Vec<Problem>) {
    let base = format!("/agents/definitions/{}", token(name));
    if name == MANUAL {
        out.push(problem(
            file,
            base.clone(),
            "`manual` is reserved; choose another name",
        ));
    }
    match (&def.preset, &def.command) {
        (Some(_), Some(_)) => out.push(problem(
            file,
            base.clone(),
            "give either `preset` or `command`, not both",
        )),
        (None, None) if Preset::from_name(name).is_none() => out.push(problem(
            file,
            base.clone(),
            format!("needs `preset` ({}) or `command`", preset_list()),
        )),
        _ => {}
    }
    if let Some(cmd) = &def.command {
        let pointer = format!("{base}/command");
        let templates: Vec<(String, &str)> = match cmd {
            CommandSpec::Argv(argv) => {
                if argv.is_empty() || argv[0].trim().is_empty() {
                    out.push(problem(file, pointer.clone(), "the command is empty"));
                }
                argv.iter()
                    .enumerate()
                    .map(|(i, a)| (format!("{pointer}/{i}"), a.as_str()))
                    .collect()
            }
            CommandSpec::Shell(s) => {
                if s.trim().is_empty() {
                    out.push(problem(file, pointer.clone(), "the command is empty"));
                }
                vec![(pointer.clone(), s.as_str())]
            }
        };
        for (ptr, template) in templates {
            for var in vars::referenced(template) {
                if !vars::STANDARD_NAMES.contains(&var.as_str()) {
                    out.push(problem(
                        file,
                        ptr.clone(),
                        format!(
                            "unknown variable ${{{var}}}; known: {}",
                            vars::STANDARD_NAMES
                                .iter()
                                .map(|n| format!("${{{n}}}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
        }
        if !def.args.is_empty() {
            out.push(problem(
                file,
                format!("{base}/args"),
                "`args` only apply to presets; put the arguments in `command`",
            ));
        }
        if def.model.is_some() {
            out.push(problem(
                file,
                format!("{base}/model"),
                "`model` only applies to presets; pass the model in `command`",
            ));
        }
        if def.program.is_some() {
            out.push(problem(
                file,
                format!("{base}/program"),
                "`program` only applies to presets; a command names its own program",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: serde_json::Value) -> Config {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn valid_config_has_no_problems() {
        let c = cfg(serde_json::json!({
            "agents": {
                "analysis": ["gemini", "qwen", "codex"],
                "fix": "claude",
                "test_gen": "my-fixer",
                "definitions": {
                    "claude": { "preset": "claude", "timeout_s": 1200, "model": null },
                    "my-fixer": { "command": ["./fix.sh", "${test.output_file}", "${test.attempt}"] }
                },
                "max_cost_usd": 10
            }
        }));
        assert_eq!(check(&c, "wfx.json"), vec![]);
        let chain = analysis_chain(&c.agents).unwrap();
        assert_eq!(
            chain.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            ["gemini", "qwen", "codex"]
        );
        assert_eq!(chain[0].timeout, Duration::from_secs(1200));
        let fix = role_agent(&c.agents, Role::Fix, None).unwrap().unwrap();
        assert_eq!(fix.kind, AgentKind::Preset(Preset::Claude));
        assert!(
            role_agent(&c.agents, Role::Fix, Some("manual"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_pointer() {
        let c = cfg(serde_json::json!({
            "agents": {
                "analysis": ["gemni", "qwen", "qwen", "manual"],
                "fix": "nobody",
                "test_gen": "manual",
                "definitions": {
                    "both": { "preset": "claude", "command": "x" },
                    "neither": { "timeout_s": 5 },
                    "a/b": { "command": ["run", "${test.ouput}"], "args": ["-v"], "model": "m", "program": "p" },
                    "empty": { "command": "  " }
                },
                "max_cost_usd": -1
            }
        }));
        let got: Vec<String> = check(&c, "wfx.json")
            .iter()
            .map(|p| format!("{} {}", p.pointer, p.message.split(':').next().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                "/agents/analysis/0 unknown agent \"gemni\"",
                "/agents/analysis/2 agent qwen is listed twice",
                "/agents/analysis/3 `manual` is not an analysis agent; leave the list empty to use only the built-in analyzer",
                "/agents/fix unknown agent \"nobody\"",
                "/agents/test_gen test_gen cannot be `manual`; remove it (or set null) to skip test generation",
                "/agents/definitions/a~1b/command/1 unknown variable ${test.ouput}; known",
                "/agents/definitions/a~1b/args `args` only apply to presets; put the arguments in `command`",
                "/agents/definitions/a~1b/model `model` only applies to presets; pass the model in `command`",
                "/agents/definitions/a~1b/program `program` only applies to presets; a command names its own program",
                "/agents/definitions/both give either `preset` or `command`, not both",
                "/agents/definitions/empty/command the command is empty",
                "/agents/definitions/neither needs `preset` (claude, gemini, qwen, codex, opencode) or `command`",
                "/agents/max_cost_usd must be an amount in US dollars (0 or more), got -1",
            ]
        );
    }

    #[test]
    fn unknown_name_does_not_resolve() {
        let err = resolve(&AgentsConfig::default(), "gpt").unwrap_err();
        assert!(
            err.to_string().contains("agent gpt is neither a preset"),
            "{err}"
        );
    }
}
