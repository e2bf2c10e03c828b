use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};
use crate::error::{Exit, Result};

pub fn run(args: &CompletionsArgs) -> Result<Exit> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "wfx", &mut std::io::stdout());
    Ok(Exit::Success)
}
