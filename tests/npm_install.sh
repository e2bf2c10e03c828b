#!/usr/bin/env bash
# Install pinned npm packages into a cache directory shared by every test
# and run (once per set of pins) and print that directory (it holds
# node_modules/):
#   tests/npm_install.sh NAME PIN...
# Used by tests/commitlint/install.sh and tests/mcp_sdk/install.sh; the
# tests run them (a second run only looks) and scripts/test.sh runs them
# first. Fails loudly (exit 1, the reason on stderr) when npm is missing or
# the registry cannot be reached; WFX_SKIP_NPM_TOOLS=1 skips the tests that
# need these packages instead.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/wfx/NAME/<hash of the pins>.
set -euo pipefail
name=$1
shift
pins=("$@")
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/wfx/$name
dir=$cache/$key
# The last pin's package is there once the install finished (the install
# is moved into place whole).
last=${pins[-1]%@*}
complete() { [ -f "$dir/node_modules/$last/package.json" ]; }
fail() {
  echo "error: $name: $*" >&2
  echo "       (set WFX_SKIP_NPM_TOOLS=1 to skip the tests that need it)" >&2
  exit 1
}
if ! complete; then
  command -v npm >/dev/null 2>&1 || fail "npm is not installed (Node.js 20 or newer is needed)"
  mkdir -p "$cache"
  # Tests run side by side: one installs, the others wait for it.
  exec 9>"$cache/.lock"
  flock 9
  if ! complete; then
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    if ! npm install --prefix "$tmp" --no-audit --no-fund --no-update-notifier --loglevel=error "${pins[@]}" >&2; then
      rm -rf "$tmp"
      fail "npm install ${pins[*]} failed"
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  flock -u 9
fi
echo "$dir"
