//! `wfx install claude`: Claude Code slash commands in the project's
//! `.claude/commands/wfx/`, so a person inside Claude Code types
//! `/wfx:test-fix-gen …`, `/wfx:test-cycle-execute …` or `/wfx:status …`
//! the way Claude-Code-Workflow's users type `/workflow:…` (a command in
//! `.claude/commands/<dir>/<name>.md` is invoked as `/<dir>:<name>`;
//! checked with Claude Code 2.1.330, see docs/interop.md). Each command
//! runs the wfx binary with `--json` and has Claude read its events.
//!
//! A file is only ever replaced when it is exactly what an earlier `wfx
//! install` wrote (its last line records a digest of the rest); a file a
//! person wrote or edited is kept, and `--force` replaces it only after
//! copying it to `<name>.md.bak`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Ctx;
use crate::cli::{InstallArgs, InstallTarget};
use crate::error::{Error, Exit, Result};
use crate::session::store;

/// One slash command: file stem and its body (before the marker line).
struct SlashCommand {
    name: &'static str,
    body: String,
}

const MARKER_PREFIX: &str = "<!-- written by `wfx install claude`; digest ";

/// What to tell Claude about `--json` output, shared by the commands.
const READING: &str = "\
wfx prints JSON on stdout and nothing else there; human messages and errors \
go to stderr. Exit codes: 0 completed (full or partial success), 1 blocked \
or failed (limit reached), 2 usage error or invalid input/artifact, 3 paused \
and resumable (awaiting a manual fix, interrupted, or an agent unavailable), \
4 internal error. With `--json` an error is one line `{\"error\": {\"kind\", \
\"message\", \"exit_code\", \"problems\"}}`.";

fn commands() -> Vec<SlashCommand> {
    vec![
        SlashCommand {
            name: "test-fix-gen",
            body: format!(
                "---
description: Plan tests with wfx (phases 1–4), then run its test → analyse → fix → retest cycle
argument-hint: \"<WFS-id | file.md | description> [--plan-only] [--max-iterations N] [--fix-agent NAME|manual] [-y] [--allow-dirty] [--no-commit] [--worktree]\"
allowed-tools: Bash(wfx:*), Read
---
Run wfx's test-fix workflow for this project with exactly these arguments: $ARGUMENTS

1. Run `wfx --json test-fix-gen <arguments>` with the Bash tool from the project root. Pass the arguments as given, but quote a free-text description as a single argument (`wfx --json test-fix-gen \"Test the auth API\" --plan-only`). The command can run for a long time; give the Bash tool its longest timeout.
2. stdout is JSON Lines, one event per line (`{{\"event\": \"…\", …}}`); the last line is the outcome (`{{\"event\": \"done\", \"session_id\", \"status\", \"exit_code\", …}}`) or an `error`. {READING}
3. Report to the user: the session id, the outcome and pass rate, the tasks, and the exact next command wfx named. If the run paused (exit 3) for a manual fix, read the fix task file wfx names and help the user apply it; then `/wfx:test-cycle-execute --resume-session=<id>` continues.
4. Do not edit anything under `.workflow/` yourself: wfx owns those files and checks them.
"
            ),
        },
        SlashCommand {
            name: "test-cycle-execute",
            body: format!(
                "---
description: Run or resume wfx's test → analyse → fix → retest cycle (phase 5)
argument-hint: \"[--resume-session=WFS-id] [--max-iterations N] [--fix-agent NAME|manual] [-y] [--allow-dirty] [--no-commit] [--worktree]\"
allowed-tools: Bash(wfx:*), Read
---
Run wfx's fix cycle for this project with exactly these arguments: $ARGUMENTS

1. Run `wfx --json test-cycle-execute <arguments>` with the Bash tool from the project root. The command can run for a long time; give the Bash tool its longest timeout. If the tool times out, wfx stops cleanly at its next step: run `wfx --json status` to see where it stands.
2. stdout is JSON Lines (`{{\"event\": \"…\", …}}`): a `run` event per test run with its pass rate, then `done` with the outcome. {READING}
3. Report to the user: each test run's pass rate, what each fix attempt changed, the outcome, and the exact next command wfx named. If the run paused for a manual fix (exit 3), read the fix task file wfx names and help the user apply it, then run this command again.
4. Do not edit anything under `.workflow/` yourself.
"
            ),
        },
        SlashCommand {
            name: "status",
            body: format!(
                "---
description: Where a wfx session stands, its test runs, and the exact command to continue
argument-hint: \"[WFS-id]\"
allowed-tools: Bash(wfx:*), Read
---
Show where wfx's session stands. Arguments: $ARGUMENTS

1. Run `wfx --json status <arguments>` with the Bash tool from the project root. Without an id wfx takes the one active session, else the most recently updated one.
2. stdout is one JSON document: `session_id`, `status`, `outcome`, `phases`, `tasks`, `pass_rates`, `latest_pass_rate`, `stuck_tests`, `next_action`, `next_command`, `next_step`. {READING}
3. Summarise it for the user in a few lines: the outcome and why, the pass rate per test run, stuck tests, and `next_command` exactly as wfx gives it (with `next_step` as the reason). Do not run the next command unless the user asks.
"
            ),
        },
    ]
}

/// FNV-1a, 64 bits: enough to tell whether a person changed a file.
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The whole file: the body and a last line with the body's digest.
fn file_text(body: &str) -> String {
    format!("{body}{MARKER_PREFIX}{} -->\n", digest(body))
}

/// Whether `text` is a file an earlier `wfx install` wrote and nobody
/// changed since (its body still has the digest its last line records).
fn unedited_by_person(text: &str) -> bool {
    let Some(start) = text.rfind(MARKER_PREFIX) else {
        return false;
    };
    let body = &text[..start];
    let rest = &text[start + MARKER_PREFIX.len()..];
    rest.strip_suffix(" -->\n") == Some(digest(body).as_str())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new file.
    Created,
    /// An earlier wfx version's file, replaced.
    Updated,
    /// Already what this version writes.
    Unchanged,
    /// A person's file, left as it is.
    Kept,
    /// A person's file, copied to `.bak` and replaced (`--force`).
    Replaced,
}

/// What to do with one file: a pure decision on what is on disk.
pub fn decide(existing: Option<&str>, wanted: &str, force: bool) -> Action {
    match existing {
        None => Action::Created,
        Some(t) if t == wanted => Action::Unchanged,
        Some(t) if unedited_by_person(t) => Action::Updated,
        Some(_) if force => Action::Replaced,
        Some(_) => Action::Kept,
    }
}

#[derive(Debug, Serialize)]
struct Written {
    command: String,
    path: String,
    action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    backup: Option<String>,
}

fn install_one(
    dir: &Path,
    cmd: &SlashCommand,
    force: bool,
) -> Result<(PathBuf, Action, Option<PathBuf>)> {
    let path = dir.join(format!("{}.md", cmd.name));
    let wanted = file_text(&cmd.body);
    let existing = match std::fs::read(&path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&path, e)),
    };
    let action = decide(existing.as_deref(), &wanted, force);
    let mut backup = None;
    match action {
        Action::Unchanged | Action::Kept => {}
        Action::Replaced => {
            let bak = dir.join(format!("{}.md.bak", cmd.name));
            fs_err::copy(&path, &bak).map_err(|e| Error::io(&bak, e))?;
            backup = Some(bak);
            store::write_atomic(&path, wanted.as_bytes())?;
        }
        Action::Created | Action::Updated => store::write_atomic(&path, wanted.as_bytes())?,
    }
    Ok((path, action, backup))
}

pub fn run(ctx: &Ctx, args: InstallArgs) -> Result<Exit> {
    match args.target {
        InstallTarget::Claude => {}
    }
    let dir = ctx.ws.root.join(".claude").join("commands").join("wfx");
    fs_err::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut written = Vec::new();
    for cmd in commands() {
        let (path, action, backup) = install_one(&dir, &cmd, args.force)?;
        written.push(Written {
            command: format!("/wfx:{}", cmd.name),
            path: ctx.ws.rel(&path),
            action,
            backup: backup.map(|b| ctx.ws.rel(&b)),
        });
    }
    let on_path = crate::testing::program::on_path("wfx");
    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "target": "claude",
            "files": written,
            "wfx_on_path": on_path,
        }));
    } else {
        for w in &written {
            let what = match w.action {
                Action::Created => "wrote",
                Action::Updated => "updated",
                Action::Unchanged => "up to date",
                Action::Kept => {
                    "kept (you edited it; `wfx install claude --force` replaces it and keeps a .bak)"
                }
                Action::Replaced => "replaced (your version is in the .bak beside it)",
            };
            ctx.ui.out(format!("{:<24} {}  {what}", w.command, w.path));
        }
        ctx.ui
            .out("In Claude Code: /wfx:test-fix-gen \"<what to test>\", /wfx:status");
    }
    if !on_path {
        ctx.ui.warn(
            "`wfx` is not on PATH: the slash commands run `wfx`, so put the binary on the PATH Claude Code sees",
        );
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions() {
        let wanted = file_text("body\n");
        let older = file_text("older body\n");
        let edited = older.replace("older", "my own");
        for (existing, force, want) in [
            (None, false, Action::Created),
            (Some(wanted.as_str()), false, Action::Unchanged),
            (Some(older.as_str()), false, Action::Updated),
            (Some(edited.as_str()), false, Action::Kept),
            (Some(edited.as_str()), true, Action::Replaced),
            (Some("a person's own command\n"), false, Action::Kept),
            (Some("a person's own command\n"), true, Action::Replaced),
        ] {
            assert_eq!(
                decide(existing, &wanted, force),
                want,
                "{existing:?} {force}"
            );
        }
    }

    #[test]
    fn every_command_takes_its_arguments_and_runs_wfx_with_json() {
        for c in commands() {
            assert!(c.body.starts_with("---\ndescription: "), "{}", c.name);
            assert!(c.body.contains("\nargument-hint: "), "{}", c.name);
            assert!(
                c.body.contains("\nallowed-tools: Bash(wfx:*)"),
                "{}",
                c.name
            );
            assert!(c.body.contains("$ARGUMENTS"), "{}", c.name);
            assert!(
                c.body
                    .contains(&format!("`wfx --json {} <arguments>`", c.name)),
                "{}",
                c.name
            );
            assert!(unedited_by_person(&file_text(&c.body)));
        }
    }
}
