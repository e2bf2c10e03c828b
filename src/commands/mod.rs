//! One module per subcommand: parse → call the library → print.

mod completions;
mod demo;
pub mod doctor;
mod init;
mod install;
mod mcp;
mod report;
mod run;
mod session;
mod status;

pub use status::document as status_document;
mod test;
mod test_cycle_execute;
mod test_fix_gen;
mod validate;

use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command};
use crate::error::{Error, Exit, Result};
use crate::session::Workspace;
use crate::ui::Printer;

/// What every command gets: the project and the printer.
pub struct Ctx<'a> {
    pub ws: Workspace,
    pub ui: &'a Printer,
}

pub fn dispatch(cli: Cli, ui: &Printer) -> Result<Exit> {
    // Commands without a project: -C means nothing to them.
    match &cli.command {
        Command::Completions(args) => {
            refuse_project_root(
                &cli,
                "completions",
                "completions do not depend on a project",
            )?;
            return completions::run(args);
        }
        Command::Demo(_) => {
            refuse_project_root(
                &cli,
                "demo",
                "the demo makes its own project; use --dir DIR",
            )?;
            let Command::Demo(args) = cli.command else {
                unreachable!("matched above")
            };
            return demo::run(ui, args);
        }
        _ => {}
    }
    let root = project_root(cli.global.project_root.as_deref())?;
    let ctx = Ctx {
        ws: Workspace::new(root),
        ui,
    };
    match cli.command {
        Command::Session(cmd) => session::run(&ctx, cmd),
        Command::Report(args) => report::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Validate(args) => validate::run(&ctx, args),
        Command::TestFixGen(args) => test_fix_gen::run(&ctx, args),
        Command::TestCycleExecute(args) => test_cycle_execute::run(&ctx, args),
        Command::Init(args) => init::run(&ctx, args),
        Command::Doctor => doctor::run(&ctx),
        Command::Test(args) => test::run(&ctx, args),
        Command::Run(args) => run::run(&ctx, args),
        Command::Install(args) => install::run(&ctx, args),
        Command::Mcp(args) => mcp::run(&ctx, args),
        Command::Completions(_) | Command::Demo(_) => unreachable!("handled above"),
    }
}

/// `-C` given to a command that has no project: a usage error saying why.
fn refuse_project_root(cli: &Cli, command: &str, why: &str) -> Result<()> {
    match &cli.global.project_root {
        Some(dir) => Err(Error::usage(format!(
            "-C/--project-root {}: `wfx {command}` takes no project root ({why})",
            dir.display()
        ))),
        None => Ok(()),
    }
}

/// `-C DIR` if given; else the git top-level of the current directory; else
/// the current directory.
pub fn project_root(given: Option<&Path>) -> Result<PathBuf> {
    let start = match given {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(Error::usage(format!(
                    "--project-root {}: not a directory",
                    dir.display()
                )));
            }
            return dir.canonicalize().map_err(|e| Error::io(dir, e));
        }
        None => std::env::current_dir().map_err(|e| Error::io(".", e))?,
    };
    Ok(crate::git::project_workdir(&start)?.unwrap_or(start))
}
