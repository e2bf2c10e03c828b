#!/usr/bin/env bash
# Install commitlint with its conventional config from npm (pinned: the
# 20.x line is the last that runs on Node 20) into a cache directory and
# print the directory holding `commitlint`. tests/git_convention.rs uses it
# as a real `commit-msg` hook; scripts/test.sh runs it first.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/wfx/commitlint/<pins>.
set -euo pipefail
pins=(@commitlint/cli@20.5.3 @commitlint/config-conventional@20.5.3)
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/wfx/commitlint/$key
bin=$dir/node_modules/.bin
if [ ! -x "$bin/commitlint" ]; then
  command -v npm >/dev/null 2>&1 || { echo "error: npm is not installed (commitlint needs Node.js)" >&2; exit 1; }
  mkdir -p "$(dirname "$dir")"
  tmp=$(mktemp -d "$(dirname "$dir")/.install.XXXXXX")
  if ! npm install --prefix "$tmp" --no-audit --no-fund --no-update-notifier --loglevel=error "${pins[@]}" >&2; then
    rm -rf "$tmp"
    echo "error: npm install ${pins[*]} failed" >&2
    exit 1
  fi
  rm -rf "$dir"
  mv "$tmp" "$dir"
fi
echo "$bin"
