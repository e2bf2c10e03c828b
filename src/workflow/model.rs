//! The workflow file's model (DESIGN.md §8, seed 000) and its parser: YAML
//! text → [`Workflow`], or every problem found, each with its line, column,
//! a pointer into the document and the step it belongs to. Pure.

use std::collections::BTreeMap;

use super::yaml::{self, Key, Node, Pos, Value};
use crate::artifacts::config::MAX_CANDIDATES;

/// Debug attempts when `max_attempts` is not given (seed 000).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Upper bound on `max_attempts`, to catch typos such as `300`.
pub const MAX_ATTEMPTS_LIMIT: u32 = 100;

/// A string from the file and where it is (for variable errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub text: String,
    pub pos: Pos,
}

/// A command: run by `sh -c`, or sent as a prompt to the claude agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exec {
    Shell(Text),
    Claude(Text),
}

impl Exec {
    pub fn text(&self) -> &Text {
        match self {
            Exec::Shell(t) | Exec::Claude(t) => t,
        }
    }
    pub fn kind(&self) -> &'static str {
        match self {
            Exec::Shell(_) => "shell",
            Exec::Claude(_) => "claude",
        }
    }
}

/// `on_failure:` of a test step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnFailure {
    pub debug: Exec,
    /// Debug attempts; the tests are re-run after each.
    pub max_attempts: u32,
    /// Stop the loop as soon as a re-run passes (default true). When false,
    /// every attempt runs; the step's outcome is that of the last run.
    pub stop_on_success: bool,
    /// Fail the workflow (exit 1) when the tests still fail after the last
    /// attempt (default false: the workflow continues).
    pub fail_workflow: bool,
    /// An attempt whose debug command made no commit and left no change
    /// counts as failed (default false).
    pub commit_required: bool,
    /// Seconds the debug command may run; default: the agent's timeout for
    /// claude, none for shell.
    pub timeout: Option<u64>,
    /// Copies of the debug command run at once per attempt, each in its
    /// own checkout; the best by its tests is applied (default 1: one run
    /// in the work tree).
    pub candidates: u32,
}

/// `test:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSpec {
    pub command: Text,
    /// Seconds; default `test.timeout_s` of the config (1800).
    pub timeout: Option<u64>,
    pub on_failure: Option<OnFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Run(Exec),
    Test(TestSpec),
}

/// `outputs: {<name>: {file_pattern: …}}`: after the step, the newest file
/// matching the pattern that the step wrote becomes `${<id>.<name>}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub name: String,
    pub file_pattern: String,
}

/// One entry of `commands:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// 1-based.
    pub index: usize,
    pub pos: Pos,
    /// Where the step is in the document (`/commands/1`).
    pub pointer: String,
    pub id: Option<String>,
    pub action: Action,
    /// Environment for the step's processes (added to the workflow's).
    pub env: BTreeMap<String, String>,
    /// Shell/claude steps: no commit and no change → the step fails.
    pub commit_required: bool,
    /// Shell/claude steps: seconds.
    pub timeout: Option<u64>,
    pub outputs: Vec<OutputSpec>,
}

impl Step {
    pub fn kind(&self) -> &'static str {
        match &self.action {
            Action::Run(e) => e.kind(),
            Action::Test(_) => "test",
        }
    }

    /// `step 2 (test)` or `step 2 "build" (shell)` for messages.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("step {} \"{id}\" ({})", self.index, self.kind()),
            None => format!("step {} ({})", self.index, self.kind()),
        }
    }

    /// Whether this step or its debug command talks to claude.
    pub fn uses_claude(&self) -> bool {
        match &self.action {
            Action::Run(Exec::Claude(_)) => true,
            Action::Test(t) => matches!(
                t.on_failure.as_ref().map(|f| &f.debug),
                Some(Exec::Claude(_))
            ),
            Action::Run(Exec::Shell(_)) => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    /// `name:`; the session id is made from it (else from the file stem).
    pub name: Option<String>,
    /// `env:`: environment of every step, and `${NAME}` variables.
    pub env: BTreeMap<String, String>,
    pub steps: Vec<Step>,
    /// Keys accepted for compatibility but without effect, for a warning.
    pub ignored: Vec<String>,
}

/// One thing wrong with the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub pos: Option<Pos>,
    /// JSON-pointer-like path into the document: `/commands/1/test/timeout`.
    pub pointer: String,
    pub message: String,
}

impl Issue {
    /// `line 6, column 9: message` (the position first, so it is easy to
    /// find), for a [`crate::error::Problem`] message.
    pub fn located_message(&self) -> String {
        match self.pos {
            Some(p) => format!("{p}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// Parse a workflow. Every problem is reported, not just the first.
pub fn parse(text: &str) -> Result<Workflow, Vec<Issue>> {
    match parse_partial(text)? {
        (wf, issues) if issues.is_empty() => Ok(wf),
        (_, issues) => Err(issues),
    }
}

/// The workflow as far as it could be read, and every problem found: the
/// caller can check the rest (variables) and report everything at once.
/// Only a YAML syntax error stops the reading.
pub fn parse_partial(text: &str) -> Result<(Workflow, Vec<Issue>), Vec<Issue>> {
    let root = yaml::parse(text).map_err(|e| {
        vec![Issue {
            pos: e.pos,
            pointer: String::new(),
            message: format!("invalid YAML: {}", e.message),
        }]
    })?;
    let mut p = Parser::default();
    let wf = p.workflow(&root);
    Ok((wf, p.issues))
}

#[derive(Default)]
struct Parser {
    issues: Vec<Issue>,
}

const TOP_KEYS: &[&str] = &["name", "env", "commands"];
const STEP_KEYS: &[&str] = &[
    "shell",
    "claude",
    "test",
    "id",
    "env",
    "commit_required",
    "timeout",
    "outputs",
    "analysis",
];
const TEST_KEYS: &[&str] = &["command", "timeout", "on_failure"];
const ON_FAILURE_KEYS: &[&str] = &[
    "claude",
    "shell",
    "max_attempts",
    "stop_on_success",
    "fail_workflow",
    "commit_required",
    "timeout",
    "candidates",
];
/// Names an `id` cannot take: they start variables wfx defines.
const RESERVED_IDS: &[&str] = &["test", "session", "env"];

fn join_keys(keys: &[&str]) -> String {
    keys.join(", ")
}

impl Parser {
    fn issue(&mut self, pos: Pos, pointer: &str, message: impl Into<String>) {
        self.issues.push(Issue {
            pos: Some(pos),
            pointer: pointer.to_string(),
            message: message.into(),
        });
    }

    /// The entries of a mapping, or an issue.
    fn map<'n>(&mut self, node: &'n Node, pointer: &str, what: &str) -> Option<&'n [(Key, Node)]> {
        match &node.value {
            Value::Map(entries) => Some(entries),
            other => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} must be a mapping, got {}", other.kind()),
                );
                None
            }
        }
    }

    /// Report keys outside `known`.
    fn unknown_keys(&mut self, entries: &[(Key, Node)], known: &[&str], pointer: &str, what: &str) {
        for (k, _) in entries {
            if !known.contains(&k.name.as_str()) {
                self.issue(
                    k.pos,
                    &format!("{pointer}/{}", k.name),
                    format!(
                        "unknown key \"{}\" in {what}; known keys: {}",
                        k.name,
                        join_keys(known)
                    ),
                );
            }
        }
    }

    fn string(&mut self, node: &Node, pointer: &str, what: &str) -> Option<Text> {
        match &node.value {
            Value::Str(s) if !s.trim().is_empty() => Some(Text {
                text: s.clone(),
                pos: node.pos,
            }),
            Value::Str(_) => {
                self.issue(node.pos, pointer, format!("{what} is empty"));
                None
            }
            other => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} must be a string, got {}", other.kind()),
                );
                None
            }
        }
    }

    fn boolean(&mut self, node: &Node, pointer: &str, what: &str) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            ref other => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} must be true or false, got {}", other.kind()),
                );
                None
            }
        }
    }

    fn count(&mut self, node: &Node, pointer: &str, what: &str, max: u64) -> Option<u64> {
        match node.value {
            Value::Int(n) if n >= 1 && (n as u64) <= max => Some(n as u64),
            Value::Int(n) => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} must be between 1 and {max}, got {n}"),
                );
                None
            }
            ref other => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} must be a whole number, got {}", other.kind()),
                );
                None
            }
        }
    }

    fn env(&mut self, node: &Node, pointer: &str, what: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(entries) = self.map(node, pointer, what) else {
            return out;
        };
        for (k, v) in entries {
            let ptr = format!("{pointer}/{}", k.name);
            if !is_env_name(&k.name) {
                self.issue(
                    k.pos,
                    &ptr,
                    format!(
                        "{what}: \"{}\" is not a valid name (letters, digits and '_', not starting with a digit)",
                        k.name
                    ),
                );
                continue;
            }
            let value = match &v.value {
                Value::Str(s) => s.clone(),
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    self.issue(
                        v.pos,
                        &ptr,
                        format!(
                            "{what}: the value of {} must be a string, got {}",
                            k.name,
                            other.kind()
                        ),
                    );
                    continue;
                }
            };
            out.insert(k.name.clone(), value);
        }
        out
    }

    fn workflow(&mut self, root: &Node) -> Workflow {
        let mut wf = Workflow {
            name: None,
            env: BTreeMap::new(),
            steps: Vec::new(),
            ignored: Vec::new(),
        };
        let (commands, base) = match &root.value {
            // A bare list is the list of commands.
            Value::Seq(_) => (Some(root), String::new()),
            Value::Map(entries) => {
                self.unknown_keys(entries, TOP_KEYS, "", "the workflow");
                let mut commands = None;
                for (k, v) in entries {
                    let ptr = format!("/{}", k.name);
                    match k.name.as_str() {
                        "name" => wf.name = self.string(v, &ptr, "name").map(|t| t.text),
                        "env" => wf.env = self.env(v, &ptr, "env"),
                        "commands" => commands = Some(v),
                        _ => {}
                    }
                }
                if commands.is_none() {
                    self.issue(
                        root.pos,
                        "",
                        "the workflow has no `commands:` list of steps",
                    );
                }
                (commands, "/commands".to_string())
            }
            Value::Null => {
                self.issue(
                    root.pos,
                    "",
                    "the workflow is empty; expected `commands:` with a list of steps",
                );
                (None, String::new())
            }
            other => {
                self.issue(
                    root.pos,
                    "",
                    format!(
                        "the workflow must be a mapping with `commands:`, got {}",
                        other.kind()
                    ),
                );
                (None, String::new())
            }
        };
        let Some(commands) = commands else { return wf };
        let items = match &commands.value {
            Value::Seq(items) if !items.is_empty() => items,
            Value::Seq(_) => {
                self.issue(commands.pos, &base, "`commands:` is empty");
                return wf;
            }
            other => {
                self.issue(
                    commands.pos,
                    &base,
                    format!("`commands:` must be a list of steps, got {}", other.kind()),
                );
                return wf;
            }
        };
        let mut ids: BTreeMap<String, usize> = BTreeMap::new();
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("{base}/{i}");
            if let Some(step) = self.step(item, i + 1, &pointer, &mut wf.ignored) {
                if let Some(id) = &step.id {
                    if let Some(first) = ids.get(id) {
                        self.issue(
                            item.pos,
                            &format!("{pointer}/id"),
                            format!(
                                "step {}: id \"{id}\" is already used by step {first}",
                                i + 1
                            ),
                        );
                    } else {
                        ids.insert(id.clone(), i + 1);
                    }
                }
                wf.steps.push(step);
            }
        }
        wf
    }

    fn step(
        &mut self,
        node: &Node,
        index: usize,
        pointer: &str,
        ignored: &mut Vec<String>,
    ) -> Option<Step> {
        let label = format!("step {index}");
        let entries = self.map(node, pointer, &label)?;
        self.unknown_keys(entries, STEP_KEYS, pointer, &label);
        let actions: Vec<&(Key, Node)> = entries
            .iter()
            .filter(|(k, _)| matches!(k.name.as_str(), "shell" | "claude" | "test"))
            .collect();
        let (action_key, action_node) = match actions.as_slice() {
            [one] => (&one.0, &one.1),
            [] => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{label} needs one of `shell:`, `claude:` or `test:`"),
                );
                return None;
            }
            [_, second, ..] => {
                self.issue(
                    second.0.pos,
                    &format!("{pointer}/{}", second.0.name),
                    format!(
                        "{label} has both `{}:` and `{}:`; a step runs one command (make two steps)",
                        actions[0].0.name, second.0.name
                    ),
                );
                return None;
            }
        };
        let kind = action_key.name.as_str();
        let label = format!("step {index} ({kind})");
        let aptr = format!("{pointer}/{kind}");
        let action = match kind {
            "shell" => Action::Run(Exec::Shell(self.string(
                action_node,
                &aptr,
                &format!("{label}: `shell:`"),
            )?)),
            "claude" => Action::Run(Exec::Claude(self.string(
                action_node,
                &aptr,
                &format!("{label}: `claude:`"),
            )?)),
            _ => Action::Test(self.test(action_node, &aptr, &label)?),
        };
        let mut step = Step {
            index,
            pos: node.pos,
            pointer: pointer.to_string(),
            id: None,
            action,
            env: BTreeMap::new(),
            commit_required: false,
            timeout: None,
            outputs: Vec::new(),
        };
        let is_test = kind == "test";
        for (k, v) in entries {
            let ptr = format!("{pointer}/{}", k.name);
            match k.name.as_str() {
                "id" => {
                    if let Some(t) = self.string(v, &ptr, &format!("{label}: id")) {
                        if !is_id(&t.text) {
                            self.issue(
                                v.pos,
                                &ptr,
                                format!(
                                    "{label}: id \"{}\" must start with a letter or '_' and hold only letters, digits, '_' and '-' (it names the variable ${{{}.output}})",
                                    t.text, t.text
                                ),
                            );
                        } else if RESERVED_IDS.contains(&t.text.as_str()) {
                            self.issue(
                                v.pos,
                                &ptr,
                                format!(
                                    "{label}: id \"{}\" is reserved for wfx's own variables (${{{}.…}}); choose another",
                                    t.text, t.text
                                ),
                            );
                        } else {
                            step.id = Some(t.text);
                        }
                    }
                }
                "env" => step.env = self.env(v, &ptr, &format!("{label}: env")),
                "commit_required" => {
                    if is_test {
                        self.issue(
                            k.pos,
                            &ptr,
                            format!(
                                "{label}: `commit_required` does not apply to a test step; put it in `on_failure:` to require the debug command to change something"
                            ),
                        );
                    } else if let Some(b) =
                        self.boolean(v, &ptr, &format!("{label}: commit_required"))
                    {
                        step.commit_required = b;
                    }
                }
                "timeout" => {
                    if is_test {
                        self.issue(
                            k.pos,
                            &ptr,
                            format!("{label}: the timeout of a test step goes inside `test:`"),
                        );
                    } else {
                        step.timeout = self.count(
                            v,
                            &ptr,
                            &format!("{label}: timeout (seconds)"),
                            u32::MAX as u64,
                        );
                    }
                }
                "outputs" => step.outputs = self.outputs(v, &ptr, &label),
                "analysis" if self.map(v, &ptr, &format!("{label}: analysis")).is_some() => {
                    ignored.push(format!(
                        "{label}: `analysis:` (line {}) is accepted for compatibility and has no effect in wfx",
                        k.pos.line
                    ));
                }
                _ => {}
            }
        }
        if !step.outputs.is_empty() && step.id.is_none() {
            self.issue(
                node.pos,
                &format!("{pointer}/outputs"),
                format!("{label}: `outputs:` needs an `id:` to name them (${{<id>.<output>}})"),
            );
        }
        Some(step)
    }

    fn outputs(&mut self, node: &Node, pointer: &str, label: &str) -> Vec<OutputSpec> {
        let mut out = Vec::new();
        let Some(entries) = self.map(node, pointer, &format!("{label}: outputs")) else {
            return out;
        };
        for (k, v) in entries {
            let ptr = format!("{pointer}/{}", k.name);
            if !is_id(&k.name) || k.name == "output" || k.name == "exit_code" {
                self.issue(
                    k.pos,
                    &ptr,
                    format!(
                        "{label}: output name \"{}\" must be letters, digits, '_' or '-' and not `output` or `exit_code`",
                        k.name
                    ),
                );
                continue;
            }
            let what = format!("{label}: outputs.{}", k.name);
            let Some(fields) = self.map(v, &ptr, &what) else {
                continue;
            };
            self.unknown_keys(fields, &["file_pattern"], &ptr, &what);
            let pattern = fields
                .iter()
                .find(|(fk, _)| fk.name == "file_pattern")
                .and_then(|(_, fv)| {
                    self.string(
                        fv,
                        &format!("{ptr}/file_pattern"),
                        &format!("{what}.file_pattern"),
                    )
                });
            match pattern {
                Some(p) => out.push(OutputSpec {
                    name: k.name.clone(),
                    file_pattern: p.text,
                }),
                None if fields.iter().all(|(fk, _)| fk.name != "file_pattern") => {
                    self.issue(v.pos, &ptr, format!("{what} needs `file_pattern:`"))
                }
                None => {}
            }
        }
        out
    }

    fn test(&mut self, node: &Node, pointer: &str, label: &str) -> Option<TestSpec> {
        // `test: "cargo test"` is short for `test: {command: "cargo test"}`.
        if let Value::Str(_) = node.value {
            let command = self.string(node, pointer, &format!("{label}: `test:`"))?;
            return Some(TestSpec {
                command,
                timeout: None,
                on_failure: None,
            });
        }
        let entries = self.map(node, pointer, &format!("{label}: `test:`"))?;
        self.unknown_keys(entries, TEST_KEYS, pointer, &format!("{label}: `test:`"));
        let mut command = None;
        let mut timeout = None;
        let mut on_failure = None;
        let mut ok = true;
        for (k, v) in entries {
            let ptr = format!("{pointer}/{}", k.name);
            match k.name.as_str() {
                "command" => {
                    command = self.string(v, &ptr, &format!("{label}: test.command"));
                    ok &= command.is_some();
                }
                "timeout" => {
                    timeout = self.count(
                        v,
                        &ptr,
                        &format!("{label}: test.timeout (seconds)"),
                        u32::MAX as u64,
                    );
                    ok &= timeout.is_some();
                }
                "on_failure" => {
                    on_failure = self.on_failure(v, &ptr, label);
                    ok &= on_failure.is_some();
                }
                _ => {}
            }
        }
        if command.is_none() && entries.iter().all(|(k, _)| k.name != "command") {
            self.issue(
                node.pos,
                pointer,
                format!("{label}: `test:` needs `command:`"),
            );
            return None;
        }
        if !ok {
            return None;
        }
        Some(TestSpec {
            command: command?,
            timeout,
            on_failure,
        })
    }

    fn on_failure(&mut self, node: &Node, pointer: &str, label: &str) -> Option<OnFailure> {
        let what = format!("{label}: on_failure");
        let entries = self.map(node, pointer, &what)?;
        self.unknown_keys(entries, ON_FAILURE_KEYS, pointer, &what);
        let commands: Vec<&(Key, Node)> = entries
            .iter()
            .filter(|(k, _)| k.name == "claude" || k.name == "shell")
            .collect();
        let debug = match commands.as_slice() {
            [(k, v)] => {
                let ptr = format!("{pointer}/{}", k.name);
                let text = self.string(v, &ptr, &format!("{what}.{}", k.name))?;
                if k.name == "claude" {
                    Exec::Claude(text)
                } else {
                    Exec::Shell(text)
                }
            }
            [] => {
                self.issue(
                    node.pos,
                    pointer,
                    format!("{what} needs a debug command: `claude:` or `shell:`"),
                );
                return None;
            }
            [_, (k, _), ..] => {
                self.issue(
                    k.pos,
                    &format!("{pointer}/{}", k.name),
                    format!("{what} has both `claude:` and `shell:`; give one debug command"),
                );
                return None;
            }
        };
        let mut f = OnFailure {
            debug,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            stop_on_success: true,
            fail_workflow: false,
            commit_required: false,
            timeout: None,
            candidates: 1,
        };
        let before = self.issues.len();
        for (k, v) in entries {
            let ptr = format!("{pointer}/{}", k.name);
            let field = format!("{what}.{}", k.name);
            match k.name.as_str() {
                "max_attempts" => {
                    if let Some(n) = self.count(v, &ptr, &field, MAX_ATTEMPTS_LIMIT as u64) {
                        f.max_attempts = n as u32;
                    }
                }
                "stop_on_success" => {
                    if let Some(b) = self.boolean(v, &ptr, &field) {
                        f.stop_on_success = b;
                    }
                }
                "fail_workflow" => {
                    if let Some(b) = self.boolean(v, &ptr, &field) {
                        f.fail_workflow = b;
                    }
                }
                "commit_required" => {
                    if let Some(b) = self.boolean(v, &ptr, &field) {
                        f.commit_required = b;
                    }
                }
                "timeout" => {
                    f.timeout = self.count(v, &ptr, &format!("{field} (seconds)"), u32::MAX as u64)
                }
                "candidates" => {
                    if let Some(n) = self.count(v, &ptr, &field, MAX_CANDIDATES as u64) {
                        f.candidates = n as u32;
                    }
                }
                _ => {}
            }
        }
        (self.issues.len() == before).then_some(f)
    }
}

/// Step ids and output names: they become `${<id>.<name>}`.
pub fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Environment variable names.
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(text: &str) -> Vec<String> {
        parse(text)
            .unwrap_err()
            .into_iter()
            .map(|i| format!("{} {}", i.pointer, i.located_message()))
            .collect()
    }

    #[test]
    fn design_example_parses_with_defaults() {
        let wf = parse(
            r#"
commands:
  - shell: "cargo build"
  - claude: "/implement-spec ${spec}"
  - test:
      command: "cargo test"
      timeout: 600
      on_failure:
        claude: "/debug-test-failure --spec ${spec} --output ${test.output}"
        max_attempts: 3        # debug attempts; tests re-run after each
        stop_on_success: true  # default
        fail_workflow: false   # default; true → exit 1 after max attempts
"#,
        )
        .unwrap();
        assert_eq!(wf.steps.len(), 3);
        assert_eq!(wf.steps[0].kind(), "shell");
        assert_eq!(wf.steps[1].kind(), "claude");
        let Action::Test(t) = &wf.steps[2].action else {
            panic!()
        };
        assert_eq!(t.command.text, "cargo test");
        assert_eq!(t.timeout, Some(600));
        let f = t.on_failure.as_ref().unwrap();
        assert_eq!(
            f.debug,
            Exec::Claude(Text {
                text: "/debug-test-failure --spec ${spec} --output ${test.output}".into(),
                pos: Pos {
                    line: 9,
                    column: 17
                }
            })
        );
        assert_eq!(
            (f.max_attempts, f.stop_on_success, f.fail_workflow),
            (3, true, false)
        );

        let wf = parse("commands:\n  - test:\n      command: make test\n      on_failure:\n        shell: ./fix.sh\n").unwrap();
        let Action::Test(t) = &wf.steps[0].action else {
            panic!()
        };
        let f = t.on_failure.as_ref().unwrap();
        assert_eq!(f.debug.kind(), "shell");
        assert_eq!(
            (
                f.max_attempts,
                f.stop_on_success,
                f.fail_workflow,
                f.commit_required
            ),
            (DEFAULT_MAX_ATTEMPTS, true, false, false)
        );
    }

    #[test]
    fn step_options_and_shorthands() {
        let wf = parse(
            r#"
name: My Flow
env: {spec: specs/49.md, RETRIES: 2}
commands:
  - shell: make
    id: build
    env: {CI: "1"}
    timeout: 30
    commit_required: true
  - claude: /mmm-coverage
    id: coverage
    outputs:
      spec:
        file_pattern: "*-coverage-improvements.md"
    analysis:
      max_cache_age: 300
  - test: npm test
"#,
        )
        .unwrap();
        assert_eq!(wf.name.as_deref(), Some("My Flow"));
        assert_eq!(wf.env.get("spec").map(String::as_str), Some("specs/49.md"));
        assert_eq!(wf.env.get("RETRIES").map(String::as_str), Some("2"));
        let s = &wf.steps[0];
        assert_eq!(s.id.as_deref(), Some("build"));
        assert_eq!(s.env.get("CI").map(String::as_str), Some("1"));
        assert_eq!((s.timeout, s.commit_required), (Some(30), true));
        assert_eq!(
            wf.steps[1].outputs,
            vec![OutputSpec {
                name: "spec".into(),
                file_pattern: "*-coverage-improvements.md".into()
            }]
        );
        assert_eq!(wf.ignored.len(), 1, "{:?}", wf.ignored);
        assert!(wf.ignored[0].starts_with("step 2 (claude): `analysis:` (line 15)"));
        let Action::Test(t) = &wf.steps[2].action else {
            panic!()
        };
        assert_eq!(
            (t.command.text.as_str(), &t.on_failure),
            ("npm test", &None)
        );
        // A bare list is the list of commands.
        assert_eq!(parse("- shell: a\n- shell: b\n").unwrap().steps.len(), 2);
    }

    #[test]
    fn unknown_keys_are_named_with_their_step_and_place() {
        assert_eq!(
            issues(
                "commands:\n  - shell: make\n    retries: 2\n  - test:\n      command: x\n      on_falure:\n        shell: y\n"
            ),
            vec![
                "/commands/0/retries line 3, column 5: unknown key \"retries\" in step 1; known keys: shell, claude, test, id, env, commit_required, timeout, outputs, analysis",
                "/commands/1/test/on_falure line 6, column 7: unknown key \"on_falure\" in step 2 (test): `test:`; known keys: command, timeout, on_failure",
            ]
        );
        assert_eq!(
            issues("comands:\n  - shell: x\n"),
            vec![
                "/comands line 1, column 1: unknown key \"comands\" in the workflow; known keys: name, env, commands",
                " line 1, column 1: the workflow has no `commands:` list of steps",
            ]
        );
        assert_eq!(
            issues(
                "commands:\n  - test:\n      command: t\n      on_failure:\n        claude: c\n        max_attempt: 5\n"
            ),
            vec![
                "/commands/0/test/on_failure/max_attempt line 6, column 9: unknown key \"max_attempt\" in step 1 (test): on_failure; known keys: claude, shell, max_attempts, stop_on_success, fail_workflow, commit_required, timeout, candidates",
            ]
        );
    }

    #[test]
    fn wrong_values_are_reported_all_at_once() {
        let got = issues(
            r#"commands:
  - shell: ""
  - claude: 5
  - shell: a
    claude: b
  - {}
  - test:
      timeout: soon
  - test:
      command: t
      on_failure:
        claude: c
        shell: s
  - test:
      command: t
      on_failure:
        shell: s
        max_attempts: 0
        stop_on_success: "yes"
  - shell: x
    id: 9lives
  - shell: x
    id: test
  - shell: a
    id: dup
  - shell: b
    id: dup
  - test: {command: t}
    commit_required: true
"#,
        );
        assert_eq!(
            got,
            vec![
                "/commands/0/shell line 2, column 12: step 1 (shell): `shell:` is empty",
                "/commands/1/claude line 3, column 13: step 2 (claude): `claude:` must be a string, got a number",
                "/commands/2/claude line 5, column 5: step 3 has both `shell:` and `claude:`; a step runs one command (make two steps)",
                "/commands/3 line 6, column 5: step 4 needs one of `shell:`, `claude:` or `test:`",
                "/commands/4/test/timeout line 8, column 16: step 5 (test): test.timeout (seconds) must be a whole number, got a string",
                "/commands/4/test line 8, column 7: step 5 (test): `test:` needs `command:`",
                "/commands/5/test/on_failure/shell line 13, column 9: step 6 (test): on_failure has both `claude:` and `shell:`; give one debug command",
                "/commands/6/test/on_failure/max_attempts line 18, column 23: step 7 (test): on_failure.max_attempts must be between 1 and 100, got 0",
                "/commands/6/test/on_failure/stop_on_success line 19, column 26: step 7 (test): on_failure.stop_on_success must be true or false, got a string",
                "/commands/7/id line 21, column 9: step 8 (shell): id \"9lives\" must start with a letter or '_' and hold only letters, digits, '_' and '-' (it names the variable ${9lives.output})",
                "/commands/8/id line 23, column 9: step 9 (shell): id \"test\" is reserved for wfx's own variables (${test.…}); choose another",
                "/commands/10/id line 26, column 5: step 11: id \"dup\" is already used by step 10",
                "/commands/11/commit_required line 29, column 5: step 12 (test): `commit_required` does not apply to a test step; put it in `on_failure:` to require the debug command to change something",
            ]
        );
    }

    #[test]
    fn yaml_syntax_errors_keep_line_and_column() {
        assert_eq!(
            issues("commands:\n  - shell: [oops\n"),
            vec![" line 2, column 12: invalid YAML: unclosed bracket '['"]
        );
        assert_eq!(
            issues(""),
            vec![
                " line 1, column 1: the workflow is empty; expected `commands:` with a list of steps"
            ]
        );
    }
}
