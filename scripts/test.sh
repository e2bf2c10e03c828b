#!/usr/bin/env bash
# Run wfx's whole test suite on a fresh machine: installs what the tests
# need (pytest for the Python sample project), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import pytest' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check pytest
fi

# The HTML report is checked in a real headless browser (Debian's chromium).
export WFX_BROWSER_CHECK=1
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi

if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-fail-fast "$@"
  # nextest does not run doctests
  cargo test --doc --quiet
else
  cargo test --no-fail-fast "$@"
fi
