#!/usr/bin/env bash
# Install the agent CLIs of versions.txt from npm into a cache directory and
# print the directory holding their executables (claude, gemini, qwen,
# codex, opencode). Installs once per set of pins; a second run only checks.
#
# Cache: $WFX_REAL_AGENTS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/wfx/real-agents.
# Fails loudly (exit 1, the reason on stderr) when npm is missing, the
# registry cannot be reached, or an installed CLI reports another version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pins < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/versions.txt")
key=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -c1-12)
cache=${WFX_REAL_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wfx/real-agents}
dir=$cache/$key
bin=$dir/node_modules/.bin
clis=(claude gemini qwen codex opencode)

fail() {
  echo "error: real agent CLIs: $*" >&2
  echo "       (the contract suite needs them; set WFX_SKIP_REAL_AGENTS=1 to skip it locally)" >&2
  exit 1
}

complete() {
  for c in "${clis[@]}"; do [ -x "$bin/$c" ] || return 1; done
}

if ! complete; then
  command -v npm >/dev/null 2>&1 || fail "npm is not installed (Node.js 20 or newer is needed)"
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if ! complete; then
    tmp=$(mktemp -d "$cache/.install.XXXXXX")
    echo "installing ${pins[*]} into $dir" >&2
    if ! npm install --prefix "$tmp" --no-audit --no-fund --no-update-notifier --loglevel=error "${pins[@]}" >&2; then
      rm -rf "$tmp"
      fail "npm install ${pins[*]} failed"
    fi
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  flock -u 9
fi

# Each CLI must run and report its pinned version (in a throwaway HOME:
# some write their config on first start).
probe_home=$(mktemp -d)
trap 'rm -rf "$probe_home"' EXIT
for pin in "${pins[@]}"; do
  version=${pin##*@}
  case $pin in
    @anthropic-ai/claude-code@*) c=claude ;;
    @google/gemini-cli@*) c=gemini ;;
    @qwen-code/qwen-code@*) c=qwen ;;
    @openai/codex@*) c=codex ;;
    opencode-ai@*) c=opencode ;;
    *) fail "no CLI known for $pin in versions.txt" ;;
  esac
  got=$(HOME=$probe_home CODEX_HOME=$probe_home/.codex "$bin/$c" --version 2>/dev/null </dev/null || true)
  case $got in
    *"$version"*) ;;
    *) fail "$c --version printed '${got}', expected $version (delete $dir to reinstall)" ;;
  esac
done
echo "$bin"
