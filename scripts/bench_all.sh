#!/bin/sh
# Run every benchmark of wfx and print docs/PERFORMANCE.md: the machine and
# one table (figure, median, baseline, ratio, target, met?). Reuses the
# single benchmarks: bench_cycle.py (overhead, own time per engine action
# of both front ends, progressive testing),
# bench-stream.sh (streaming 1 GiB), bench_gen.py (context gather),
# bench_parse.py (parsing 200 MB of cargo test output),
# bench_load.py (200 sessions × 50 iterations),
# bench_retest.py (retest tiers on more-itertools from PyPI, about an hour),
# bench_prodigy.py (the seed-000 loop against prodigy, quiet and under an
# fsync load; PRODIGY=<binary>), bench_test5k.py (`wfx test --json` on
# 5,000 pytest results), bench_sealed.py (the sealed verdict's cost: pytest, node --test, a
# crate), bench_candidates.py parallel and own (a step of 3 speculative
# candidates; wfx's own time per candidate), and
# own time per action alternated with a previous release (BASE_WFX=<binary>).
#
#   [PRODIGY=…/prodigy] [BASE_WFX=…/wfx-173e5460] \
#   scripts/bench_all.sh [--write] [--quick] [--release] [--note "TEXT"]
#
# --write   also replace docs/PERFORMANCE.md with the output
# --release also measure the orchestration overhead and the engine's own
#           time per action with a release build (what `cargo install`
#           makes; the build takes minutes on 2 cores)
# --quick   fewer runs and smaller inputs (a smoke test of the script; the
#           figures are not comparable)
# --note    a sentence for the machine section (e.g. "shared with another build")
#
# Debug build (the dev profile), like every build on the shared machines,
# except the rows of --release (the per-action target is for the release
# build; without --release those rows are measured on the debug build).
# Takes about 70 minutes on 2 cores (an hour of it the real pytest suite of
# bench_retest.py). Needs python3 with pytest (progressive testing), PyPI
# the first time (bench_retest.py caches the suite) and a filled cargo
# registry cache (context gather).
set -eu
cd "$(dirname "$0")/.."

write=0 quick=0 release=0 note=""
while [ $# -gt 0 ]; do
  case "$1" in
    --write) write=1 ;;
    --quick) quick=1 ;;
    --release) release=1 ;;
    --note) shift; note="$1" ;;
    *) echo "usage: scripts/bench_all.sh [--write] [--quick] [--release] [--note TEXT]" >&2; exit 2 ;;
  esac
  shift
done

runs=5 files=20000 bytes=1073741824 sessions=200 iterations=50 mb=200
if [ "$quick" = 1 ]; then
  runs=2 files=2000 bytes=67108864 sessions=20 iterations=10 mb=20
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/wfx-bench-all.XXXXXX")
trap 'rm -rf "$out"' EXIT
log() { echo "bench_all: $*" >&2; }
# Before a figure of wfx's own time on the work dir's disk: a pause in which
# nothing is deleted. On an ext4 without a journal a new file's inode skips
# every inode freed in the last minute or so (longer while the inode table
# is not yet written back), so what the benchmark before deleted would be
# counted as wfx's time. WFX_BENCH_SETTLE=0 skips the pause.
settle() {
  log "settling ${WFX_BENCH_SETTLE:-90} s: nothing deleted on the disk before the next own-time figure"
  sleep "${WFX_BENCH_SETTLE:-90}"
}

cargo build --quiet
wfx=target/debug/wfx
date -u +"%Y-%m-%d %H:%M UTC" >"$out/date"
cut -d' ' -f1-3 /proc/loadavg >"$out/loadavg"
printf '%s\n' "$note" >"$out/note"

log "orchestration overhead (work dir's disk)"
python3 scripts/bench_cycle.py overhead --wfx "$wfx" --runs "$runs" --json >"$out/overhead.json"
if [ -d /dev/shm ]; then
  log "orchestration overhead (tmpfs)"
  TMPDIR=/dev/shm python3 scripts/bench_cycle.py overhead --wfx "$wfx" --runs "$runs" --json >"$out/overhead-tmpfs.json"
fi
if [ "$release" = 1 ]; then
  cargo build --quiet --release
  log "orchestration overhead, release build (work dir's disk)"
  python3 scripts/bench_cycle.py overhead --wfx target/release/wfx --runs "$runs" --json >"$out/overhead-release.json"
  actions_wfx=target/release/wfx
else
  actions_wfx=$wfx
fi
for fe in cycle run; do
  log "own time per engine action: $fe ($actions_wfx, work dir's disk)"
  settle
  python3 scripts/bench_cycle.py actions --front-end "$fe" --wfx "$actions_wfx" --runs "$runs" --json >"$out/actions-$fe.json"
done

log "streaming $bytes bytes"
WFX_BENCH_BYTES=$bytes WFX_BENCH_RUNS=$runs scripts/bench-stream.sh >"$out/stream.txt" 2>"$out/stream.err" \
  || { cat "$out/stream.err" >&2; exit 1; }

log "context gather ($files files, walk and git index)"
python3 scripts/bench_gen.py --wfx "$wfx" --files "$files" --runs "$runs" --json >"$out/gen.json"
python3 scripts/bench_gen.py --wfx "$wfx" --files "$files" --runs "$runs" --git --json >"$out/gen-git.json"

log "parsing a large test output"
python3 scripts/bench_parse.py --wfx "$wfx" --mb "$mb" --runs "$runs" --json >"$out/parse.json"

log "progressive testing"
python3 scripts/bench_cycle.py progressive --wfx "$wfx" --runs "$runs" --json >"$out/progressive.json"

log "retest tiers on a real pytest suite (more-itertools from PyPI, cached)"
retest_args=""
[ "$quick" = 1 ] && retest_args="--skip-session"
python3 scripts/bench_retest.py --wfx "$wfx" --runs "$runs" $retest_args --json >"$out/retest.json"

log "load: $sessions sessions × $iterations iterations"
python3 scripts/bench_load.py --wfx "$wfx" --sessions "$sessions" --iterations "$iterations" \
  --runs "$runs" --json >"$out/load.jsonl"

# Issue #30 and #27 (release build when --release; the figures are for it).
if [ -n "${PRODIGY:-}" ] && [ -x "${PRODIGY}" ]; then
  log "the seed-000 loop against prodigy ($PRODIGY), quiet and with an fsync load"
  python3 scripts/bench_prodigy.py --wfx "$actions_wfx" --prodigy "$PRODIGY" --runs 7 --fsync-load --json >"$out/prodigy.json"
else
  log "prodigy: skipped (set PRODIGY to a release build of iepathos/prodigy 480b22a4)"
  echo '{"skipped": "PRODIGY not set to a prodigy binary (iepathos/prodigy 480b22a4, cargo build --release)"}' >"$out/prodigy.json"
fi
command -v strace >/dev/null || log "strace not found: no durable-sync counts (apt-get install strace)"
if [ -n "${BASE_WFX:-}" ] && [ -x "${BASE_WFX}" ]; then
  for fe in cycle run; do
    log "own time per action against $BASE_WFX, alternated: $fe (work dir's disk, then tmpfs)"
    settle
    python3 scripts/bench_cycle.py actions --front-end "$fe" --wfx "$actions_wfx" --base "$BASE_WFX" \
      --runs 7 --json >"$out/actions-base-$fe.json"
    [ -d /dev/shm ] && TMPDIR=/dev/shm python3 scripts/bench_cycle.py actions --front-end "$fe" \
      --wfx "$actions_wfx" --base "$BASE_WFX" --runs 7 --json >"$out/actions-base-$fe-tmpfs.json"
  done
else
  log "own time per action against a previous release: skipped (set BASE_WFX to its release binary, e.g. 173e5460)"
fi
log "wfx test --json on 5,000 pytest results"
python3 scripts/bench_test5k.py --wfx "$actions_wfx" ${BASE_WFX:+--base "$BASE_WFX"} --runs 15 --json >"$out/test5k.json"
log "the sealed verdict: wfx test --sealed against wfx test"
python3 scripts/bench_sealed.py --wfx "$actions_wfx" --runs 5 --only small,larger,big,node,rust \
  --json >"$out/sealed.json"
log "speculative candidates: one step of 3 candidates sleeping 2 s against the slowest"
python3 scripts/bench_candidates.py parallel --wfx "$actions_wfx" --runs "$runs" --sleep 2 --json >"$out/candidates.json"
log "speculative candidates: wfx's own time per candidate beyond the single attempt, N=3 against N=1 alternated (agents sleeping 2 s)"
settle
python3 scripts/bench_candidates.py own --wfx "$actions_wfx" --runs "$runs" --sleep 2 --json >"$out/candidates-own.json"

cut -d' ' -f1-3 /proc/loadavg >>"$out/loadavg"
python3 scripts/bench_table.py "$out" >"$out/PERFORMANCE.md"
cat "$out/PERFORMANCE.md"
if [ "$write" = 1 ]; then
  cp "$out/PERFORMANCE.md" docs/PERFORMANCE.md
  log "wrote docs/PERFORMANCE.md"
fi
