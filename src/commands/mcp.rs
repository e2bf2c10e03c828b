//! `wfx mcp`: serve wfx's tools over MCP on stdin/stdout ([`crate::mcp`]).
//! stdout belongs to the protocol: nothing else is printed there.

use super::Ctx;
use crate::cli::McpArgs;
use crate::error::{Exit, Result};

pub fn run(ctx: &Ctx, _args: McpArgs) -> Result<Exit> {
    crate::mcp::serve_stdio(ctx.ws.root.clone())?;
    Ok(Exit::Success)
}
