//! Checks made before anything runs: every `${…}` a step uses must exist at
//! that point of the workflow, and a workflow with `claude:` commands needs
//! a configured claude. Pure apart from the `PATH` lookup the caller passes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::agents::config::{AgentKind, ResolvedAgent, Role};
use crate::agents::vars;
use crate::artifacts::config::{AgentsConfig, CommandSpec};

use super::model::{Action, Exec, Issue, Workflow};

/// Variables defined by wfx itself in every step.
pub const SESSION_VARS: &[&str] = &["session.id", "session.dir"];
/// Variables defined inside `on_failure:` (seed 000 names).
pub const TEST_VARS: &[&str] = &[
    "test.output",
    "test.output_file",
    "test.exit_code",
    "test.attempt",
];

/// Inside `on_failure:` with `candidates:` > 1: which copy of the debug
/// command this is (1-based).
pub const CANDIDATE_VAR: &str = "candidate";

/// The variables a step with an `id` defines for later steps.
pub fn step_output_names(id: &str, outputs: &[String]) -> Vec<String> {
    let mut names = vec![format!("{id}.output"), format!("{id}.exit_code")];
    names.extend(outputs.iter().map(|o| format!("{id}.{o}")));
    names
}

fn list(names: &BTreeSet<String>) -> String {
    names
        .iter()
        .map(|n| format!("${{{n}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every variable reference that nothing defines at its place, with the
/// step and the variable named. `given` are the `--var` names.
pub fn variables(wf: &Workflow, given: &BTreeSet<String>) -> Vec<Issue> {
    let mut known: BTreeSet<String> = wf.env.keys().cloned().collect();
    known.extend(given.iter().cloned());
    known.extend(SESSION_VARS.iter().map(|s| s.to_string()));
    let mut issues = Vec::new();
    for (i, step) in wf.steps.iter().enumerate() {
        let mut here = known.clone();
        // A step's own env: values become variables of that step too.
        here.extend(step.env.keys().cloned());
        let mut templates: Vec<(String, &super::model::Text, BTreeSet<String>)> = Vec::new();
        match &step.action {
            Action::Run(exec) => {
                templates.push((exec.kind().to_string(), exec.text(), here.clone()))
            }
            Action::Test(t) => {
                templates.push(("test.command".into(), &t.command, here.clone()));
                if let Some(f) = &t.on_failure {
                    let mut inner = here.clone();
                    inner.extend(TEST_VARS.iter().map(|s| s.to_string()));
                    if f.candidates > 1 {
                        inner.insert(CANDIDATE_VAR.to_string());
                    }
                    let field = match &f.debug {
                        Exec::Claude(_) => "on_failure.claude",
                        Exec::Shell(_) => "on_failure.shell",
                    };
                    templates.push((field.into(), f.debug.text(), inner));
                }
            }
        }
        for (field, text, scope) in templates {
            for name in vars::referenced(&text.text) {
                if scope.contains(&name) {
                    continue;
                }
                let mut hint = String::new();
                if let Some((id, _)) = name.split_once('.')
                    && let Some(later) = wf.steps[i..].iter().find(|s| s.id.as_deref() == Some(id))
                {
                    hint = if later.index == step.index {
                        " (a step cannot use its own output)".to_string()
                    } else {
                        format!(
                            " (step {} \"{id}\" has not run yet at this point)",
                            later.index
                        )
                    };
                } else if name.starts_with("test.") && field.starts_with("test.command") {
                    hint = " (the ${test.…} variables exist only in `on_failure:`)".into();
                } else if !name.contains('.') {
                    hint = format!(
                        " (define it with `env: {{{name}: …}}` in the workflow or `--var {name}=…`)"
                    );
                }
                let pointer = format!(
                    "{}/{}",
                    step.pointer,
                    if field == "test.command" {
                        "test/command".to_string()
                    } else {
                        field
                            .replace('.', "/")
                            .replace("on_failure", "test/on_failure")
                    }
                );
                issues.push(Issue {
                    pos: Some(text.pos),
                    pointer,
                    message: format!(
                        "{}: unknown variable ${{{name}}} in {field}{hint}; known here: {}",
                        step.label(),
                        list(&scope)
                    ),
                });
            }
        }
        if let Some(id) = &step.id {
            let outs: Vec<String> = step.outputs.iter().map(|o| o.name.clone()).collect();
            known.extend(step_output_names(id, &outs));
        }
    }
    issues
}

/// Where the claude agent of `claude:` commands comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeSetup {
    pub agent: ResolvedAgent,
    /// `agents.definitions.claude`, or the role that names `claude`.
    pub source: String,
    /// The program that will run (`None` for a `sh -c` command string).
    pub program: Option<String>,
    /// Where the program was found on `PATH`.
    pub found: Option<PathBuf>,
}

/// The rule for "claude is configured" (docs/workflows.md): the project's
/// config names `claude`, either as a key of `agents.definitions` (which
/// wins) or as the agent of a role (`analysis`, `fix`, `test_gen`), which
/// selects the claude preset. Agents never run unless the config names them
/// (DESIGN.md §6.3); finding `claude` on `PATH` alone is not enough.
pub fn claude_source(cfg: &AgentsConfig) -> Option<String> {
    if cfg.definitions.contains_key("claude") {
        return Some("agents.definitions.claude".into());
    }
    if let Some(i) = cfg.analysis.iter().position(|n| n == "claude") {
        return Some(format!("agents.analysis[{i}]"));
    }
    if cfg
        .fix
        .as_ref()
        .is_some_and(|f| f.names().contains(&"claude"))
    {
        return Some("agents.fix".into());
    }
    if cfg.test_gen.as_deref() == Some("claude") {
        return Some("agents.test_gen".into());
    }
    None
}

/// The program an agent runs, when it can be known before running.
pub fn agent_program(agent: &ResolvedAgent) -> Option<String> {
    match &agent.kind {
        AgentKind::Preset(p) => Some(agent.program.clone().unwrap_or_else(|| {
            crate::agents::presets::argv(*p, Role::Fix, None, &[])
                .into_iter()
                .next()
                .unwrap_or_default()
        })),
        AgentKind::Command(CommandSpec::Argv(argv)) => argv.first().cloned(),
        AgentKind::Command(CommandSpec::Shell(_)) => None,
    }
}

/// Resolve claude per [`claude_source`] and look its program up. `Ok(None)`
/// when claude is not configured; `Err` when it is but cannot be resolved.
pub fn claude_setup(
    cfg: &AgentsConfig,
    path_var: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> crate::error::Result<Option<ClaudeSetup>> {
    let Some(source) = claude_source(cfg) else {
        return Ok(None);
    };
    let agent = crate::agents::config::resolve(cfg, "claude")?;
    let program = agent_program(&agent);
    let found = program
        .as_deref()
        .and_then(|p| crate::process::which(p, path_var, cwd));
    Ok(Some(ClaudeSetup {
        agent,
        source,
        program,
        found,
    }))
}

/// The steps that need claude, as labels (for the "not configured" error).
pub fn claude_steps(wf: &Workflow) -> Vec<String> {
    wf.steps
        .iter()
        .filter(|s| s.uses_claude())
        .map(|s| s.label())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::model::parse;

    fn check(text: &str, given: &[&str]) -> Vec<String> {
        let wf = parse(text).unwrap();
        let given = given.iter().map(|s| s.to_string()).collect();
        variables(&wf, &given)
            .into_iter()
            .map(|i| format!("{} {}", i.pointer, i.located_message()))
            .collect()
    }

    #[test]
    fn defined_variables_pass() {
        let wf = r#"
env: {spec: s.md}
commands:
  - shell: "echo ${spec} ${session.id}"
    id: build
  - claude: "/c"
    id: cov
    outputs: {spec: {file_pattern: "*.md"}}
  - claude: "/impl ${cov.spec} ${build.output} ${build.exit_code}"
  - test:
      command: "make test ${MODE}"
      on_failure:
        claude: "/debug --spec ${spec} --output ${test.output} --attempt ${test.attempt} --exit-code ${test.exit_code} ${test.output_file}"
"#;
        assert_eq!(check(wf, &["MODE"]), Vec::<String>::new());
    }

    #[test]
    fn unknown_variables_name_step_and_variable() {
        let wf = r#"
commands:
  - shell: "echo ${later.output}"
  - shell: "true"
    id: later
  - test:
      command: "make ${test.output}"
      on_failure:
        shell: "fix ${test.ouput} ${spec}"
"#;
        assert_eq!(
            check(wf, &[]),
            vec![
                "/commands/0/shell line 3, column 12: step 1 (shell): unknown variable ${later.output} in shell (step 2 \"later\" has not run yet at this point); known here: ${session.dir}, ${session.id}",
                "/commands/2/test/command line 7, column 16: step 3 (test): unknown variable ${test.output} in test.command (the ${test.…} variables exist only in `on_failure:`); known here: ${later.exit_code}, ${later.output}, ${session.dir}, ${session.id}",
                "/commands/2/test/on_failure/shell line 9, column 16: step 3 (test): unknown variable ${test.ouput} in on_failure.shell; known here: ${later.exit_code}, ${later.output}, ${session.dir}, ${session.id}, ${test.attempt}, ${test.exit_code}, ${test.output}, ${test.output_file}",
                "/commands/2/test/on_failure/shell line 9, column 16: step 3 (test): unknown variable ${spec} in on_failure.shell (define it with `env: {spec: …}` in the workflow or `--var spec=…`); known here: ${later.exit_code}, ${later.output}, ${session.dir}, ${session.id}, ${test.attempt}, ${test.exit_code}, ${test.output}, ${test.output_file}",
            ]
        );
    }

    #[test]
    fn claude_is_configured_only_by_the_config() {
        let mut cfg = AgentsConfig::default();
        assert_eq!(claude_source(&cfg), None);
        cfg.detected = vec!["claude".into()];
        assert_eq!(claude_source(&cfg), None, "detected CLIs are never run");
        cfg.analysis = vec!["gemini".into(), "claude".into()];
        assert_eq!(claude_source(&cfg).as_deref(), Some("agents.analysis[1]"));
        cfg.analysis.clear();
        cfg.test_gen = Some("claude".into());
        assert_eq!(claude_source(&cfg).as_deref(), Some("agents.test_gen"));
        cfg.fix = Some("claude".into());
        assert_eq!(claude_source(&cfg).as_deref(), Some("agents.fix"));
        cfg.fix = Some(crate::artifacts::config::AgentNames::Many(vec![
            "codex".into(),
            "claude".into(),
        ]));
        assert_eq!(claude_source(&cfg).as_deref(), Some("agents.fix"));
        cfg.definitions.insert(
            "claude".into(),
            serde_json::from_value(
                serde_json::json!({"command": ["./my-claude", "${prompt_file}"]}),
            )
            .unwrap(),
        );
        assert_eq!(
            claude_source(&cfg).as_deref(),
            Some("agents.definitions.claude")
        );
        let setup = claude_setup(
            &cfg,
            Some(std::ffi::OsStr::new("/nonexistent")),
            Path::new("/"),
        )
        .unwrap()
        .unwrap();
        assert_eq!(setup.program.as_deref(), Some("./my-claude"));
        assert_eq!(setup.found, None);
    }
}
