#!/usr/bin/env bash
# Install commitlint with its conventional config from npm (pinned: the
# 20.x line is the last that runs on Node 20) into a cache directory and
# print the directory holding `commitlint`. tests/cli/git_convention.rs
# uses it as a real `commit-msg` hook; scripts/test.sh runs it first.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/wfx/commitlint/<pins>.
set -euo pipefail
dir=$("$(dirname "$0")/../npm_install.sh" commitlint @commitlint/cli@20.5.3 @commitlint/config-conventional@20.5.3)
echo "$dir/node_modules/.bin"
