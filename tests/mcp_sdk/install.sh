#!/usr/bin/env bash
# Install the official MCP TypeScript SDK from npm (pinned) into a cache
# directory and print it. tests/cli/mcp_sdk.rs drives `wfx mcp` with it
# (tests/mcp_sdk/client.mjs); scripts/test.sh runs this first.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/wfx/mcp-sdk/<pins>.
set -euo pipefail
exec "$(dirname "$0")/../npm_install.sh" mcp-sdk @modelcontextprotocol/sdk@1.32.2
