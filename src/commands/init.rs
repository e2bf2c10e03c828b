//! `wfx init`: write `.workflow/wfx.json` with the detected test command and
//! the agent CLIs found on PATH. Agents are only listed under `detected`;
//! no role is assigned, so nothing runs until the user chooses.

use std::path::{Path, PathBuf};

use super::Ctx;
use crate::artifacts::Config;
use crate::artifacts::config::{Preset, TestConfig};
use crate::cli::InitArgs;
use crate::error::{Error, Exit, Result};
use crate::process::which;
use crate::session::store;
use crate::testing;

/// The test command the project's files suggest (DESIGN.md §6.1), with the
/// files that decided it.
fn detect_test_command(root: &Path) -> Option<(String, String, Vec<String>)> {
    testing::detect(root, &TestConfig::default())
        .map(|d| (d.command, d.framework.as_str().to_string(), d.signals))
}

/// Presets whose CLI is on `path_var`, in preset order.
pub fn detect_agents(path_var: Option<&std::ffi::OsStr>, cwd: &Path) -> Vec<String> {
    Preset::ALL
        .iter()
        .filter(|p| which(p.as_str(), path_var, cwd).is_some())
        .map(|p| p.as_str().to_string())
        .collect()
}

/// `wfx.json.bak`, or `wfx.json.bak.2`, `.3`, … when earlier backups exist.
fn backup_path(config: &Path) -> PathBuf {
    let name = config
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "wfx.json".into());
    let first = config.with_file_name(format!("{name}.bak"));
    if !first.exists() {
        return first;
    }
    (2u32..)
        .map(|n| config.with_file_name(format!("{name}.bak.{n}")))
        .find(|p| !p.exists())
        .expect("some backup name is free")
}

pub fn run(ctx: &Ctx, args: InitArgs) -> Result<Exit> {
    let path = ctx.ws.config_path();
    let shown = ctx.ws.rel(&path);
    let mut backup = None;
    if path.exists() {
        if !args.force {
            return Err(Error::usage(format!(
                "{shown} already exists; edit it, or run `wfx init --force` to replace it (the old file is kept as a backup)"
            )));
        }
        let to = backup_path(&path);
        std::fs::copy(&path, &to).map_err(|e| Error::io(&to, e))?;
        backup = Some(ctx.ws.rel(&to));
    }

    let detected = detect_test_command(&ctx.ws.root);
    let agents = detect_agents(std::env::var_os("PATH").as_deref(), &ctx.ws.root);
    let mut config = Config::default();
    config.test.command = detected.as_ref().map(|(c, _, _)| c.clone());
    config.agents.detected = agents.clone();
    store::write_json(&path, &config)?;

    if ctx.ui.is_json() {
        ctx.ui.json(&serde_json::json!({
            "config": shown,
            "test_command": detected.as_ref().map(|(c, _, _)| c),
            "framework": detected.as_ref().map(|(_, f, _)| f),
            "signals": detected.as_ref().map(|(_, _, s)| s.clone()).unwrap_or_default(),
            "detected_agents": agents,
            "backup": backup,
        }));
        return Ok(Exit::Success);
    }
    ctx.ui.out(format!("Wrote {shown}"));
    if let Some(b) = &backup {
        ctx.ui.out(format!("Previous config kept as {b}"));
    }
    if untracked_in_repo(&path) {
        ctx.ui.out(format!(
            "It is your file: wfx never commits it. To share it with your team: git add {shown}"
        ));
    }
    match &detected {
        Some((command, framework, signals)) => ctx.ui.out(format!(
            "Test command: {command}  ({framework}, from {})",
            signals.join(", ")
        )),
        None => ctx.ui.out(format!(
            "Test command: none detected (looked for {}); set test.command in {shown}",
            testing::detect::MARKERS.join(", ")
        )),
    }
    if agents.is_empty() {
        ctx.ui.out(format!(
            "Agent CLIs on PATH: none ({}). Without agents wfx analyses failures itself and pauses for you to apply fixes.",
            Preset::ALL.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        ));
    } else {
        let analysis = agents
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let fix = agents
            .iter()
            .find(|a| a.as_str() == "claude")
            .unwrap_or(&agents[0]);
        ctx.ui.out(format!(
            "Agent CLIs on PATH: {} (listed under agents.detected; none is enabled)",
            agents.join(", ")
        ));
        ctx.ui.out(format!(
            "To let them work, assign roles in {shown}, for example:\n  \"agents\": {{ \"analysis\": [{analysis}], \"fix\": {fix:?} }}"
        ));
    }
    Ok(Exit::Success)
}

/// `path` lies in a git work tree and is not in its index: a file the
/// person decides to commit or not.
fn untracked_in_repo(path: &std::path::Path) -> bool {
    let Ok(repo) = git2::Repository::discover(path.parent().unwrap_or(path)) else {
        return false;
    };
    let (Some(workdir), Ok(index)) = (repo.workdir(), repo.index()) else {
        return false;
    };
    let Ok(full) = path.canonicalize() else {
        return false;
    };
    let Ok(workdir) = workdir.canonicalize() else {
        return false;
    };
    full.strip_prefix(&workdir)
        .is_ok_and(|rel| index.get_path(rel, 0).is_none())
}
